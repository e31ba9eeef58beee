"""Mutable array references (`jax.new_ref`) in pyjax against real JAX (run by hand; the JAX
side runs in a subprocess with benchmarks/.jaxvenv (``sh benchmarks/setup_jax_side.sh``) or $JAX_PYTHON, skipped when absent).

    python benchmarks/bench_refs.py [--rounds 5]

Per-call times in microseconds of: eager indexed and whole-ref updates, a jitted function
that updates a closed-over ref, one that updates a ref argument, the same update written
functionally (the baseline: what the ref versions are discharged to), and a 1000-step
``lax.scan`` accumulating into a ref against the same scan with the value in its carry. The
two sides alternate in rounds; the table gives each side's min and median over the rounds.
"""
import sys

from timing import IS_JAX_WORKER, interleaved_rounds, per_call_us, print_table, worker_print

N = 1000


def measure(jax, jnp):
    out = {}
    r = jax.new_ref(jnp.zeros(N))

    def eager_indexed():
        r[1] += 1.0
    out["eager r[1] += 1 (us)"] = per_call_us(eager_indexed, n=300, repeat=3)

    def eager_whole():
        r[...] = r[...] * 0.5
    out["eager r[...] = r[...] * 0.5 (us)"] = per_call_us(eager_whole, n=300, repeat=3)

    acc = jax.new_ref(jnp.zeros(N))
    x = jnp.ones(N)

    @jax.jit
    def closed(x):
        acc[...] += x
    out["jit, closed-over ref += x (us)"] = per_call_us(lambda: closed(x), n=500, repeat=3)

    @jax.jit
    def arg(q, x):
        q[...] += x
    q = jax.new_ref(jnp.zeros(N))
    out["jit, ref argument += x (us)"] = per_call_us(lambda: arg(q, x), n=500, repeat=3)

    functional = jax.jit(lambda v, x: v + x)
    box = [jnp.zeros(N)]

    def fun_call():
        box[0] = functional(box[0], x)
    out["jit, functional v = v + x (us)"] = per_call_us(fun_call, n=500, repeat=3)

    s = jax.new_ref(jnp.zeros(8))

    @jax.jit
    def scan_ref(xs):
        def body(c, t):
            s[...] += t
            return c, None
        jax.lax.scan(body, 0.0, xs)

    @jax.jit
    def scan_carry(v, xs):
        return jax.lax.scan(lambda c, t: (c + t, None), v, xs)[0]
    xs = jnp.ones((1000, 8))
    out["jit scan 1000 steps into a ref (us)"] = per_call_us(
        lambda: (scan_ref(xs), s[...].block_until_ready()), n=50, repeat=3)
    v = jnp.zeros(8)
    out["jit scan 1000 steps, carry (us)"] = per_call_us(
        lambda: scan_carry(v, xs).block_until_ready(), n=50, repeat=3)
    return out


def main():
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 5
    if IS_JAX_WORKER:
        import jax
        import jax.numpy as jnp
        worker_print(measure(jax, jnp))
        return
    import pyjax
    import pyjax.numpy as pjnp
    results = interleaved_rounds(lambda: measure(pyjax, pjnp), __file__, rounds)
    print_table(results, label=f"per call, {rounds} rounds", width=40, cell=14, digits=1)


if __name__ == "__main__":
    main()
