"""flax.linen + optax under pyjax (``pyjax.install_as_jax()``) against the same program on real
JAX (run by hand; the JAX side runs in a subprocess with benchmarks/.jaxvenv's Python or
$JAX_PYTHON and is skipped when absent or when optax/flax are not installed there).

    python benchmarks/bench_flax.py [--rounds 3] [--imports 5]

* import time of ``optax`` + ``flax.linen`` (with ``jax`` itself, and for pyjax with
  ``import pyjax; pyjax.install_as_jax()``): fresh processes, best of ``--imports``, the two
  sides alternating; the time inside the process (``perf_counter`` around the imports) and the
  wall time of the whole process (interpreter start included). Bytecode caches are allowed and
  written by one untimed run first, as for an installed package.
* a flax.linen CNN training step (Conv 32 3x3 -> BatchNorm -> relu -> max pool 2 ->
  Conv 64 3x3 -> relu -> max pool 2 -> Dense 128 -> Dropout 0.5 -> Dense 10, batch 32 of
  28x28x1, softmax cross-entropy, optax adam, one ``jax.jit`` step): min ms over rounds of
  min-of-20, and the first call (trace + compile + run) in s.
"""
import os
import subprocess
import sys
import time

import numpy as np
from timing import IS_JAX_WORKER, JAX_PYTHON, best_ms, jax_side, print_table, worker_print

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BATCH, SIDE, CLASSES = 32, 28, 10
_IMPORT = ("import time; t = time.perf_counter(); {pre}import optax, flax.linen; "
           "print(time.perf_counter() - t)")
PYJAX_PRE = "import pyjax; pyjax.install_as_jax(); "


def import_once(python, pre, env):
    t = time.perf_counter()
    out = subprocess.run([python, "-c", _IMPORT.format(pre=pre)], env=env, cwd=ROOT,
                         check=True, capture_output=True, text=True)
    return float(out.stdout.split()[-1]), time.perf_counter() - t


def import_times(n):
    env = dict(os.environ, PYTHONPATH=ROOT)  # the checkout's pyjax
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    jax_env = dict(env, JAX_PLATFORMS="cpu")
    jax_env.pop("PYTHONPATH")
    sides = [("pyjax", sys.executable, PYJAX_PRE, env)]
    if os.path.exists(JAX_PYTHON):
        sides.append(("jax", JAX_PYTHON, "", jax_env))
    runs = {name: [] for name, *_ in sides}
    for name, python, pre, e in list(sides):
        try:
            import_once(python, pre, e)  # writes the bytecode caches
        except subprocess.CalledProcessError as err:
            print(f"({name}: import failed, skipped: {err.stderr.strip().splitlines()[-1]})")
            sides.remove((name, python, pre, e))
            del runs[name]
    for _ in range(n):
        for name, python, pre, e in sides:  # alternating: both see the same machine load
            runs[name].append(import_once(python, pre, e))
    return {name: {"import optax+flax.linen, in process (s)": min(r[0] for r in rs),
                   "import optax+flax.linen, whole process (s)": min(r[1] for r in rs)}
            for name, rs in runs.items()}


def cnn_step_times():
    """Times the flax.linen CNN step with whatever ``jax`` resolves to."""
    import flax.linen as nn
    import jax
    import jax.numpy as jnp
    import optax

    class CNN(nn.Module):
        @nn.compact
        def __call__(self, x, train):
            x = nn.Conv(32, (3, 3))(x)
            x = nn.BatchNorm(use_running_average=not train)(x)
            x = nn.max_pool(nn.relu(x), (2, 2), strides=(2, 2))
            x = nn.max_pool(nn.relu(nn.Conv(64, (3, 3))(x)), (2, 2), strides=(2, 2))
            x = nn.relu(nn.Dense(128)(x.reshape(x.shape[0], -1)))
            x = nn.Dropout(0.5, deterministic=not train)(x)
            return nn.Dense(CLASSES)(x)

    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.normal(size=(BATCH, SIDE, SIDE, 1)).astype(np.float32))
    y = jnp.asarray(rng.integers(0, CLASSES, BATCH).astype(np.int32))
    model, tx = CNN(), optax.adam(1e-3)
    variables = model.init(jax.random.key(0), x, train=False)
    params, stats = variables["params"], variables["batch_stats"]
    opt_state = tx.init(params)

    @jax.jit
    def step(params, stats, opt_state, x, y, key):
        def loss_fn(p):
            logits, upd = model.apply({"params": p, "batch_stats": stats}, x, train=True,
                                      rngs={"dropout": key}, mutable=["batch_stats"])
            loss = optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
            return loss, upd["batch_stats"]
        (loss, stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), stats, opt_state, loss

    key = jax.random.key(1)
    t = time.perf_counter()
    state = jax.block_until_ready(step(params, stats, opt_state, x, y, key))
    first = time.perf_counter() - t
    losses = [float(state[3])]

    def one():
        nonlocal state
        state = jax.block_until_ready(step(*state[:3], x, y, key))
    steady = best_ms(one, repeat=20)
    losses.append(float(state[3]))
    return {"flax.linen CNN step, adam (ms)": steady, "first step call (s)": first,
            "loss first -> after 21 steps": losses}


def main():
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3
    n_imports = int(sys.argv[sys.argv.index("--imports") + 1]) if "--imports" in sys.argv else 5
    if IS_JAX_WORKER:
        worker_print(cnn_step_times())
        return
    import pyjax
    pyjax.install_as_jax()
    ours, theirs = [], []
    for _ in range(rounds):  # interleaved with the JAX subprocess
        ours.append(cnn_step_times())
        got = jax_side(__file__)
        if got is not None:
            theirs.append(got)
    row = "flax.linen CNN step, adam (ms)"
    results = import_times(n_imports)
    results["pyjax"].update({row: min(r[row] for r in ours),
                             "first step call (s)": min(r["first step call (s)"] for r in ours)})
    print("pyjax loss", ours[0]["loss first -> after 21 steps"])
    if theirs:
        results.setdefault("jax", {}).update(
            {row: min(r[row] for r in theirs),
             "first step call (s)": min(r["first step call (s)"] for r in theirs)})
        print("jax loss  ", theirs[0]["loss first -> after 21 steps"])
        if "jax" in results:
            results["pyjax/jax"] = {k: results["pyjax"][k] / results["jax"][k]
                                    for k in results["pyjax"] if k in results["jax"]}
    print_table(results, label="best of N (min)", width=48, digits=3)


if __name__ == "__main__":
    main()
