"""The foundation issue's examples, as tests; the tour script end to end; and the example scripts
in examples/ with their quick settings, against NumPy/SciPy oracles."""
import importlib.util
import pathlib
import runpy
import subprocess
import sys

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp

ROOT = pathlib.Path(__file__).resolve().parents[1]


def calculate(x):
    return x * x + x * 2.0


def test_calculate_eager_jit_and_numpy_agree():
    x = jnp.ones((5000, 5000))
    fast_calculate = jax.jit(calculate)
    out = fast_calculate(x)
    assert out.dtype == np.float32 and out.shape == (5000, 5000)
    assert float(out.sum()) == 75000000.0
    np.testing.assert_array_equal(np.asarray(out), np.asarray(calculate(x)))
    np.testing.assert_array_equal(np.asarray(out), calculate(np.ones((5000, 5000), np.float32)))


def test_at_set_returns_a_new_array():
    arr = jnp.arange(5)
    new = arr.at[0].set(5)
    assert new.tolist() == [5, 1, 2, 3, 4]
    assert arr.tolist() == [0, 1, 2, 3, 4]
    assert arr.dtype == np.int32


def test_make_jaxpr_example():
    assert str(jax.make_jaxpr(lambda x: jnp.sin(x) * 2.0)(1.0)) == (
        "{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = mul b 2.0:f32[] in (c,) }")


def test_weak_type_examples():
    assert (jnp.ones(3, jnp.bfloat16) + 1.0).dtype == jnp.bfloat16
    assert (jnp.int8(1) + 1).dtype == np.int8
    assert jnp.array(1.0).dtype == np.float32
    assert jnp.arange(3).dtype == np.int32


def test_tour_runs():
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "tour.py")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "{ lambda ; a:f32[]. let b:f32[] = sin a" in out.stdout
    assert "equal to NumPy: True" in out.stdout
    assert "grad(tanh)(1.0) = 0.4199743" in out.stdout


# ---- the example scripts (imported by path, run with quick settings) ----

EXAMPLES = ["calculate_jit", "grad_tanh", "vmap_pairwise", "mlp_digits", "cnn_digits"]


def load_example(name):
    spec = importlib.util.spec_from_file_location(f"_example_{name}",
                                                  ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_example_calculate_jit():
    res = load_example("calculate_jit").main(quick=True)
    n = res["n"]
    want = calculate(np.ones((n, n), np.float32))
    assert res["agree"]
    np.testing.assert_array_equal(np.asarray(res["jitted"]), want)
    np.testing.assert_array_equal(np.asarray(res["eager"]), want)
    assert res["sum"] == 3.0 * n * n
    assert res["eager_s"] > 0 and res["jit_s"] > 0


def test_example_grad_tanh_matches_closed_forms():
    res = load_example("grad_tanh").main(quick=True)
    x = res["x"].astype(np.float64)
    np.testing.assert_allclose(x, np.linspace(-3, 3, len(x)), atol=1e-6)
    t = np.tanh(x)
    closed = [1 - t ** 2, -2 * t + 2 * t ** 3, -2 + 8 * t ** 2 - 6 * t ** 4]  # expanded forms
    for order, (got, want) in enumerate(zip(res["derivatives"], closed), 1):
        assert got.shape == x.shape and got.dtype == np.float32
        np.testing.assert_allclose(got, want, atol=1e-5, err_msg=f"order {order}")
    assert res["grad_at_1"] == pytest.approx(1 - np.tanh(1.0) ** 2, rel=1e-6)


def test_example_vmap_pairwise_matches_numpy():
    res = load_example("vmap_pairwise").main(quick=True)
    xs, ys = res["xs"], res["ys"]
    assert xs.shape[0] != ys.shape[0]  # so that swapped axes would show
    want = np.array([[np.sum(np.abs(x - y)) for x in xs] for y in ys])
    np.testing.assert_allclose(res["distances"], want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(res["jitted"], want, rtol=1e-6, atol=1e-6)


def test_example_mlp_digits_learns():
    mlp = load_example("mlp_digits")
    res = mlp.main(quick=True)
    assert res["test_accuracy"] > 0.85, res["test_accuracy"]
    assert res["final_loss"] < 0.5
    # the reported accuracy is the trained network's, recomputed in NumPy
    params = [{k: np.asarray(v, np.float64) for k, v in layer.items()} for layer in res["params"]]
    h = res["x_test"].astype(np.float64)
    for layer in params[:-1]:
        h = np.maximum(h @ layer["w"] + layer["b"], 0)
    logits = h @ params[-1]["w"] + params[-1]["b"]
    assert np.mean(np.argmax(logits, -1) == res["y_test"]) == pytest.approx(
        res["test_accuracy"], abs=2.5 / len(res["y_test"]))


def test_example_mlp_pieces(x64):
    from scipy.special import log_softmax
    from pyjax.test_util import check_grads
    mlp = load_example("mlp_digits")
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(5, 10)) * 30  # large enough that a naive log(sum(exp)) overflows
    np.testing.assert_allclose(np.asarray(mlp.log_softmax(logits)), log_softmax(logits, -1),
                               rtol=1e-12, atol=1e-12)
    params = mlp.init_params(jax.random.key(1), [6, 5, 3])
    x = rng.normal(size=(4, 6))
    labels = np.eye(3)[[0, 2, 1, 2]]
    check_grads(jax.jit(lambda p: mlp.loss(p, x, labels)), (params,), order=2)


def _numpy_cnn_logits(params, x):
    """The example's network written again in NumPy (float64): SAME 3x3 convolutions as sums
    of shifted products, 2x2 max pooling as a reshape."""
    p = {k: {n: np.asarray(v, np.float64) for n, v in layer.items()} for k, layer in
         params.items()}

    def conv_same(h, w, b):
        padded = np.pad(h, ((0, 0), (1, 1), (1, 1), (0, 0)))
        out = sum(padded[:, i:i + h.shape[1], j:j + h.shape[2]] @ w[i, j]
                  for i in range(3) for j in range(3))
        return out + b

    def pool(h):
        n, hh, ww, c = h.shape
        return h.reshape(n, hh // 2, 2, ww // 2, 2, c).max(axis=(2, 4))
    h = pool(np.maximum(conv_same(x.astype(np.float64), **p["conv1"]), 0))
    h = pool(np.maximum(conv_same(h, **p["conv2"]), 0))
    return h.reshape(len(h), -1) @ p["dense"]["w"] + p["dense"]["b"]


def test_example_cnn_digits_learns():
    res = load_example("cnn_digits").main(quick=True)
    assert res["test_accuracy"] >= 0.95, res["test_accuracy"]
    assert res["final_loss"] < 0.2
    logits = _numpy_cnn_logits(res["params"], res["x_test"])
    assert np.mean(np.argmax(logits, -1) == res["y_test"]) == pytest.approx(
        res["test_accuracy"], abs=2.5 / len(res["y_test"]))


def test_example_scripts_run_as_scripts(monkeypatch, capsys):
    # as ``python examples/<name>.py --quick``, in this process to save start-up time
    for name in EXAMPLES:
        path = str(ROOT / "examples" / f"{name}.py")
        monkeypatch.setattr(sys, "argv", [path, "--quick"])
        runpy.run_path(path, run_name="__main__")
    out = capsys.readouterr().out
    assert "results agree: True" in out
    assert "order 3: max |autodiff - closed form|" in out
    assert "pairwise L1 distances of 30 x 20 points" in out
    assert "test accuracy 0.9" in out


def test_example_transformer_learns(capsys):
    tr = load_example("transformer")
    res = tr.main(quick=True)
    losses = np.array(res["losses"])
    # starts near log(vocabulary) (uniform guessing) and falls well below it
    assert abs(losses[0] - np.log(res["vocab_size"])) < 0.6, losses[0]
    assert losses[-10:].mean() < losses[:5].mean() - 1.0, losses
    assert "steps in" in capsys.readouterr().out
    # causal: changing the last input character changes no earlier position's logits
    params, heads = res["params"], res["config"]["n_heads"]
    data, _ = tr.load_text()
    tokens = data[None, :32]
    other = tokens.copy()
    other[0, -1] = (other[0, -1] + 1) % res["vocab_size"]
    logits = jax.jit(tr.logits_fn, static_argnums=2)
    a = np.asarray(logits(params, tokens, heads))
    b = np.asarray(logits(params, other, heads))
    np.testing.assert_allclose(a[0, :-1], b[0, :-1], rtol=1e-5, atol=1e-5)
    assert not np.allclose(a[0, -1], b[0, -1])
    # the training step's loss is the cross-entropy of those logits, computed in NumPy
    from scipy.special import log_softmax
    targets = data[1:33]
    state = tr.adam_init(params)
    _, _, loss = tr.make_train_step(heads, 0.0)(params, state, tokens, targets[None])
    want = -np.mean(log_softmax(a[0].astype(np.float64), axis=-1)[np.arange(32), targets])
    assert float(loss) == pytest.approx(want, rel=1e-5)


def test_example_gaussian_process_fits(capsys):
    from scipy import stats as sstats
    gp = load_example("gaussian_process")
    res = gp.main(quick=True)
    assert res["losses"][-1] < res["losses"][0] - 20
    assert 0.05 < res["noise"] < 0.2 and res["rmse"] < 0.15
    assert "fitted noise" in capsys.readouterr().out
    # the objective at the fitted parameters against SciPy's multivariate normal, and the
    # predictive mean against a NumPy solve
    p = {k: float(v) for k, v in res["params"].items()}
    x, y = res["x"].astype(np.float64), res["y"].astype(np.float64)
    def k_np(a, b):
        d = (a[:, None] - b[None, :]) / np.exp(p["log_len"])
        return np.exp(2 * p["log_amp"]) * np.exp(-0.5 * d * d)
    cov = k_np(x, x) + (np.exp(2 * p["log_noise"]) + 1e-5) * np.eye(len(x))
    want = -sstats.multivariate_normal(np.zeros(len(x)), cov).logpdf(y)
    got = float(gp.neg_log_marginal_likelihood(res["params"], res["x"], res["y"]))
    assert got == pytest.approx(want, abs=2e-2 * max(1.0, abs(want)))
    mean = k_np(res["x_test"].astype(np.float64), x) @ np.linalg.solve(cov, y)
    np.testing.assert_allclose(res["mean"], mean, atol=5e-3)
