"""Float sums over trailing axes fold in halves before a short reduce (lax/reductions.py,
``_float_sum``). Checked here: values against ``math.fsum`` on adversarial inputs, no less
accurate than the sequential reduce they replace (the generic ``lax.reduce`` with a lambda body
still lowers to that reduce), odd lengths, half floats accumulated in float32, NaN/inf, the
unchanged lowering of integer and column sums, rules (grad, vmap), and the low compile tier."""
import math

import ml_dtypes
import numpy as np
import pytest

import pyjax
import pyjax.lax as lax
from pyjax._src.dispatch import compiler
from pyjax._src.runtime import tiered


def _row_fsum(x):
    x = np.asarray(x, np.float64)
    return np.array([math.fsum(r) for r in x.reshape(-1, x.shape[-1])]).reshape(x.shape[:-1])


folded = pyjax.jit(lambda x: lax.reduce_sum(x, (x.ndim - 1,)))
# ``lax.reduce`` with a body that is not ``lax.add`` is the generic reduce: the old lowering
sequential = pyjax.jit(lambda x: lax.reduce(x, np.zeros((), x.dtype), lambda a, b: a + b,
                                            (x.ndim - 1,)))


def _adversarial(rng, n):
    """Rows of length ``n``: huge and tiny values mixed, cancelling pairs, and a constant that
    is not a power of two (sequential float32 sums drift on it)."""
    big = rng.choice([1e8, -1e8, 1.0, 1e-3], size=n).astype(np.float32)
    cancel = rng.normal(size=n).astype(np.float32) * np.float32(1e4)
    cancel[n // 2:] = -cancel[:n // 2][: n - n // 2]
    cancel += rng.normal(size=n).astype(np.float32)
    tenth = np.full(n, 0.1, np.float32)
    ramp = np.float32(1e7) + np.arange(n, dtype=np.float32)
    return np.stack([big, cancel, tenth, ramp])


@pytest.mark.parametrize("n", [4096, 1_000_000])
def test_folded_sum_is_no_less_accurate_than_sequential(n):
    x = _adversarial(np.random.default_rng(0), n)
    exact = _row_fsum(x)
    new_err = np.abs(np.asarray(folded(x), np.float64) - exact)
    old_err = np.abs(np.asarray(sequential(x), np.float64) - exact)
    # no less accurate than the old reduce, or within one float32 ulp of the exact sum where
    # the old one is too (there which one lands closer is down to rounding luck: the plugin's
    # reduce is not strictly sequential, it keeps one partial sum per vector lane, 16 with the
    # 512-bit vectors pyjax asks for on AMD CPUs; on the row of +-1e8 mixed with small values
    # both errors are then of one size, 2.5e5 and 2.6e5, hence the 5 %)
    ulp = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    assert np.all(new_err <= np.maximum(1.05 * old_err, ulp)), (new_err, old_err, ulp)
    # pairwise: a few ulps of the absolute sum, where the sequential sum drifts
    scale = np.abs(x.astype(np.float64)).sum(-1)
    assert np.all(new_err <= 4 * math.log2(n) * np.finfo(np.float32).eps * scale)
    assert old_err[2] > 2 * new_err[2]  # 0.1 repeated: the old reduce drifts further


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16], ids=["f16", "bf16"])
def test_half_floats(dtype):
    # lax.reduce_sum keeps the plugin's plain reduce (JAX's lax: 17 bfloat16 0.1s give 1.71875);
    # jnp.sum sums in float32 (folded) and rounds once, as JAX's jnp.sum does
    x = np.ones((2, 3000), dtype)  # a float16 (bfloat16) running sum would stop at 2048 (256)
    x[1] = np.asarray(0.1, dtype)
    assert "stablehlo.slice" not in folded.lower(x).as_text()
    np.testing.assert_array_equal(folded(x), sequential(x))
    text = pyjax.jit(lambda a: a.sum(-1)).lower(x).as_text()
    assert "stablehlo.slice" in text and "xf32>" in text
    want = np.asarray(x, np.float64).sum(-1).astype(dtype)  # one rounding at the end
    out = pyjax.jit(lambda a: a.sum(-1))(x)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(out, np.float32), want.astype(np.float32))


def test_odd_lengths_and_several_axes_match_numpy():
    rng = np.random.default_rng(1)
    f = pyjax.jit(lambda a, b, c, d: [lax.reduce_sum(a, (1,)), lax.reduce_sum(b, (1, 2)),
                                      lax.reduce_sum(c, (0,)), lax.reduce_sum(d, (2,)),
                                      lax.reduce_sum(b, (0, 1, 2))])
    a = rng.normal(size=(3, 1001)).astype(np.float32)   # 1001 -> 501 (padded) -> ...
    b = rng.normal(size=(2, 7, 33)).astype(np.float32)  # merged to 231
    c = rng.normal(size=(65537,)).astype(np.float32)    # prime, over the fold limit
    d = rng.normal(size=(4, 3, 9)).astype(np.float64)
    for got, want in zip(f(a, b, c, d), [a.astype(np.float64).sum(1),
                                         b.astype(np.float64).sum((1, 2)),
                                         c.astype(np.float64).sum(0), d.sum(2),
                                         b.astype(np.float64).sum()]):
        np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=1e-5, atol=1e-4)


def test_nan_and_inf_propagate():
    x = np.ones((4, 37), np.float32)
    x[0, 36], x[1, 0], x[2, 5], x[2, 30], x[3, 18] = np.nan, np.inf, np.inf, -np.inf, -np.inf
    out = np.asarray(folded(x))
    assert np.isnan(out[0]) and out[1] == np.inf and np.isnan(out[2]) and out[3] == -np.inf


def test_integer_and_column_sums_keep_the_plain_reduce():
    def text(f, x):
        return pyjax.jit(f).lower(x).as_text()
    assert "stablehlo.slice" in text(lambda a: a.sum(-1), np.ones((4, 64), np.float32))
    assert "stablehlo.slice" not in text(lambda a: a.sum(-1), np.ones((4, 64), np.int32))
    assert "stablehlo.slice" not in text(lambda a: a.sum(0), np.ones((64, 4), np.float32))
    big = np.full((3, 100), 2 ** 24 + 1, np.int64)  # exact
    assert pyjax.jit(lambda a: a.sum(-1))(big).tolist() == [100 * (2 ** 24 + 1)] * 3


def test_grad_and_vmap_of_a_folded_sum():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(5, 3, 40)).astype(np.float32)
    g = pyjax.jit(pyjax.grad(lambda a: (lax.reduce_sum(a, (1,)) ** 2).sum()))(x[0])
    np.testing.assert_allclose(g, 2 * np.repeat(x[0].sum(1, keepdims=True), 40, 1), rtol=1e-5)
    v = pyjax.vmap(lambda a: lax.reduce_sum(a, (1,)))(x)
    np.testing.assert_allclose(v, np.stack([r.sum(1) for r in x]), rtol=1e-5, atol=1e-5)


def test_low_compile_tier_sums_the_same(monkeypatch):
    monkeypatch.setattr(compiler, "TIERED_MIN_OPS", 0)
    old = pyjax.config.read("pyjax_tiered_compilation")
    pyjax.config.update("pyjax_tiered_compilation", True)
    try:
        f = pyjax.jit(lambda a, w: ((a @ w).sum(-1), a.sum()))
        a = _adversarial(np.random.default_rng(3), 4096)
        w = np.eye(4096, 8, dtype=np.float32)
        with tiered.hold():
            low = f(a, w)
            (entry,) = f._cache.entries.values()
            assert entry.exe.tier == "low"
        assert tiered.wait_for_upgrades(timeout=60)
        full = f(a, w)
        assert entry.exe.tier == "full"
    finally:
        pyjax.config.update("pyjax_tiered_compilation", old)
    for lo, hi, want in zip(low, full, [_row_fsum(a[:, :8]), math.fsum(a.ravel())]):
        np.testing.assert_array_equal(lo, hi)  # adds only: no contraction to differ on
        np.testing.assert_allclose(np.asarray(hi, np.float64), want, rtol=1e-6)
