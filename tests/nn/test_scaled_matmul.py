"""jax.nn.scaled_matmul / scaled_dot_general / get_scaled_dot_general_config against a NumPy
reimplementation of the documented formulas (block scales on the contracting dimension; the
mxfp8/nvfp4 quantization recipe of docs/special.md, on ml_dtypes' formats)."""
import ml_dtypes
import numpy as np
import pytest

import pyjax
import pyjax.nn as nn
import pyjax.numpy as jnp

RNG = np.random.default_rng(0)


def test_scaled_matmul_documented_example_and_formula():
    a = np.array([1, 2, 3], np.float32).reshape(1, 1, 3)
    b = np.array([4, 5, 6], np.float32).reshape(1, 1, 3)
    s = np.array([0.5], np.float32).reshape(1, 1, 1)
    out = nn.scaled_matmul(a, b, s, s)
    assert out.dtype == np.float32 and out.shape == (1, 1, 1)
    np.testing.assert_array_equal(np.asarray(out), [[[8.0]]])
    # B=2, M=3, N=4, K=8; lhs blocks of 4, rhs blocks of 2; e4m3 data, e8m0 scales (host)
    lhs = RNG.standard_normal((2, 3, 8)).astype(ml_dtypes.float8_e4m3fn)
    rhs = RNG.standard_normal((2, 4, 8)).astype(ml_dtypes.float8_e4m3fn)
    ls = np.exp2(RNG.integers(-3, 4, (2, 3, 2))).astype(ml_dtypes.float8_e8m0fnu)
    rs = np.exp2(RNG.integers(-3, 4, (2, 4, 4))).astype(ml_dtypes.float8_e8m0fnu)
    want = np.einsum("bmk,bnk->bmn",
                     lhs.astype(np.float32) * np.repeat(ls.astype(np.float32), 4, axis=-1),
                     rhs.astype(np.float32) * np.repeat(rs.astype(np.float32), 2, axis=-1))
    got = nn.scaled_matmul(jnp.asarray(lhs), jnp.asarray(rhs), ls, rs,
                           preferred_element_type=jnp.bfloat16)
    assert got.dtype == jnp.bfloat16
    np.testing.assert_allclose(np.asarray(got.astype(jnp.float32)), want, rtol=1e-2)
    got32 = pyjax.jit(nn.scaled_matmul)(jnp.asarray(lhs), jnp.asarray(rhs),
                                        jnp.asarray(ls.astype(np.float32)),
                                        jnp.asarray(rs.astype(np.float32)))
    np.testing.assert_allclose(np.asarray(got32), want, rtol=1e-6)


def test_scaled_matmul_shape_errors():
    x = np.ones((1, 2, 8), np.float32)
    with pytest.raises(ValueError, match="3-D"):
        nn.scaled_matmul(x[0], x[0], x[0], x[0])
    with pytest.raises(ValueError, match="lhs_scales"):
        nn.scaled_matmul(x, x, np.ones((1, 2, 3), np.float32), np.ones((1, 2, 1), np.float32))


def _round(v, mant, emin, vmax, up=False):
    av = np.abs(v)
    e = np.maximum(np.floor(np.log2(np.where(av > 0, av, 1.0))), emin)
    q = np.exp2(e - mant)
    r = np.minimum((np.ceil(av / q) if up else np.round(av / q)) * q, vmax)
    return np.where(v < 0, -r, r)


def _dequantized(x, mode, gs):
    """The documented recipe, in NumPy: scale = amax / max(data), rounded up into the scale
    type; data rounded to nearest-even; the values the product sees."""
    bs, data, scale_fmt = (32, (3, -6, 448.0), (0, -127, 2.0 ** 127)) if mode == "mxfp8" else \
        (16, (1, 0, 6.0), (3, -6, 448.0))
    xb = x.reshape(x.shape[:-1] + (-1, bs)).astype(np.float64)
    amax = np.abs(xb).max(-1, keepdims=True)
    scale = np.where(amax > 0, _round(amax / data[2] / gs, *scale_fmt, up=True), 1.0)
    q = _round(np.clip(xb / (scale * gs), -data[2], data[2]), *data)
    return (q * scale * gs).reshape(x.shape)


@pytest.mark.parametrize("mode,gs", [("mxfp8", None), ("nvfp4", 0.5)])
def test_scaled_dot_general_against_numpy(mode, gs):
    lhs = (RNG.standard_normal((3, 2, 64)) * np.exp(RNG.uniform(-4, 4, (3, 2, 64))))
    lhs = lhs.astype(np.float32)
    lhs[0, 0, :32] = 0.0  # an all-zero block
    rhs = RNG.standard_normal((64, 3, 5)).astype(np.float32)  # contracting dim first
    cfg = nn.get_scaled_dot_general_config(mode, None if gs is None else
                                           jnp.asarray(np.array([gs], np.float32)))
    assert cfg.mode == mode and cfg.block_size == (32 if mode == "mxfp8" else 16)
    dn = (((2,), (0,)), ((0,), (1,)))
    got = np.asarray(nn.scaled_dot_general(lhs, rhs, dn, configs=[cfg] * 3))
    assert got.shape == (3, 2, 5)
    g = 1.0 if gs is None else gs
    ql = _dequantized(lhs, mode, g)
    qr = _dequantized(np.moveaxis(rhs, 0, -1), mode, g)  # (3, 5, 64)
    want = np.einsum("bmk,bnk->bmn", ql, qr)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
    exact = np.einsum("bmk,kbn->bmn", lhs.astype(np.float64), rhs)
    assert np.abs(got - exact).max() > 1e-4 * np.abs(exact).max()  # it did quantize
    # configs=None: plain dot_general
    plain = nn.scaled_dot_general(lhs, rhs, dn)
    np.testing.assert_allclose(np.asarray(plain), exact, rtol=1e-4, atol=1e-4)


def test_scaled_dot_general_errors():
    cfg = nn.get_scaled_dot_general_config("mxfp8")
    x = np.ones((2, 48), np.float32)
    with pytest.raises(ValueError, match="multiple of the block size"):
        nn.scaled_dot_general(x, x, (((1,), (1,)), ((), ())), configs=[cfg] * 3)
    with pytest.raises(ValueError, match="unknown mode"):
        nn.get_scaled_dot_general_config("fp8")
    y = np.ones((2, 64), np.float32)
    with pytest.raises(NotImplementedError, match="differentiation"):
        pyjax.grad(lambda v: nn.scaled_dot_general(v, y, (((1,), (1,)), ((), ())),
                                                   configs=[cfg] * 3).sum())(y)
