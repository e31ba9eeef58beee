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


def _e8m0_round_up(v):
    """JAX's cast_to_e8m0_with_rounding_up of float32 v >= 0, as a float32 power of two."""
    bits = v.astype(np.float32).view(np.uint32)
    exp, mant = bits >> 23, bits & 0x7FFFFF
    up = (mant > 0) & (exp != 0xFE) & ~((exp == 0) & (mant <= 0x400000))
    return np.ldexp(np.float32(1), (exp + up).astype(np.int32) - 127).astype(np.float32)


def _dequantized(x, mode, gs=None):
    """JAX 0.10.2's quantize in NumPy (blocks along the last axis; divisions as the reciprocal
    multiplications XLA compiles them to), dequantized without the global scale: the float32
    values the product sees."""
    bs, data = (32, ml_dtypes.float8_e4m3fn) if mode == "mxfp8" else (16, ml_dtypes.float4_e2m1fn)
    top = np.float32(448.0 if mode == "mxfp8" else 6.0)
    xb = x.reshape(x.shape[:-1] + (-1, bs))
    one = np.float32(1)
    if mode == "mxfp8":
        ratio = (np.abs(xb).max(-1, keepdims=True).astype(np.float32) * (one / top))
        scale = _e8m0_round_up(ratio.astype(x.dtype).astype(np.float32))
        recip = one / scale
    else:
        rgs = one / np.float32(gs)
        amax = np.abs(xb.astype(np.float32) * rgs).max(-1, keepdims=True)
        scale = np.clip(amax * (one / top), 0, 448).astype(ml_dtypes.float8_e4m3fn)
        scale = scale.astype(np.float32)
        # (a zero scale: JAX divides by it, NaN/inf; pyjax's blocks are zeros)
        recip = (one / np.where(scale > 0, scale, one)) * rgs
    q = np.clip(xb.astype(np.float32) * recip, -top, top).astype(data).astype(np.float32)
    return np.where(scale > 0, q * scale, 0.0).reshape(x.shape)


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
    ql = _dequantized(lhs, mode, gs)
    qr = _dequantized(np.moveaxis(rhs, 0, -1), mode, gs)  # (3, 5, 64)
    want = np.einsum("bmk,bnk->bmn", ql, qr) * (1.0 if gs is None else gs * gs)
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
    with pytest.raises(TypeError, match="preferred_element_type"):  # (as JAX: f32/bf16/f16)
        nn.scaled_dot_general(y, y, (((1,), (1,)), ((), ())), configs=[cfg] * 3,
                              preferred_element_type=np.int32)
    # the gradient of lhs contracts the free dimension of rhs (2): blocks of 32 (JAX: an
    # AssertionError in its quantize)
    with pytest.raises(ValueError, match="multiple of the block size"):
        pyjax.grad(lambda v: nn.scaled_dot_general(v, y, (((1,), (1,)), ((), ())),
                                                   configs=[cfg] * 3).sum())(y)
    with pytest.raises(TypeError, match="custom_vjp"):  # forward mode: as JAX
        pyjax.jvp(lambda v: nn.scaled_dot_general(v, y, (((1,), (1,)), ((), ())),
                                                  configs=[cfg] * 3), (y,), (y,))


@pytest.mark.parametrize("mode,dtype", [("mxfp8", np.float32), ("nvfp4", jnp.bfloat16)])
def test_scaled_dot_general_gradient_is_jaxs_custom_vjp(mode, dtype):
    # JAX 0.10.2's VJP (scaled_dot_bwd): d lhs = g @ rhs^T with g and rhs quantized along the
    # free dimension of rhs by configs[2] and configs[1] (mxfp8), in preferred_element_type;
    # nvfp4: unquantized products, zeroed where |x| > global_scale * 6 * 448. (Observed: JAX
    # on CPU with its scaled_matmul replaced by the documented formula gives these bit for
    # bit, e.g. grad of lhs of a (32, 64) x (64, 64) mxfp8 float32 product.)
    gs = None if mode == "mxfp8" else 0.25
    cfg = nn.get_scaled_dot_general_config(mode, None if gs is None else
                                           jnp.asarray(np.array([gs], np.float32)))
    lhs = (RNG.standard_normal((2, 32, 64)) * np.exp(RNG.uniform(-3, 3, (2, 32, 1))))
    rhs = RNG.standard_normal((64, 2, 32))  # (K, B, N): contracting dim first
    if mode == "nvfp4":
        lhs[0, 0, :3] = [704.0, -676.0, 672.0]  # beyond / at 0.25 * 6 * 448 = 672
    lhs, rhs = (np.asarray(jnp.asarray(v.astype(np.float32)).astype(dtype)) for v in (lhs, rhs))
    cot = np.asarray(jnp.asarray(RNG.standard_normal((2, 32, 32)).astype(np.float32))
                     .astype(dtype))
    dn = (((2,), (0,)), ((0,), (1,)))
    out, vjp = pyjax.vjp(lambda a, b: nn.scaled_dot_general(
        a, b, dn, preferred_element_type=dtype, configs=[cfg] * 3), lhs, rhs)
    ga, gb = (np.asarray(v.astype(np.float32)) for v in vjp(jnp.asarray(cot)))
    assert out.dtype == dtype and ga.shape == lhs.shape and gb.shape == rhs.shape
    l32, r32 = lhs.astype(np.float32), np.moveaxis(rhs.astype(np.float32), 0, 1)  # (B, K, N)
    g32 = cot.astype(np.float32)
    if mode == "mxfp8":
        want_a = np.einsum("bmn,bkn->bmk", _dequantized(cot, mode),
                           _dequantized(np.moveaxis(rhs, 1, 0), mode))
        want_b = np.einsum("bnm,bkm->bkn", _dequantized(cot.swapaxes(1, 2), mode),
                           _dequantized(lhs.swapaxes(1, 2), mode))
    else:
        want_a = np.einsum("bmn,bkn->bmk", g32, r32)
        want_b = np.einsum("bnm,bmk->bkn", g32.swapaxes(1, 2), l32)
        want_a = np.where(np.abs(l32) <= 672.0, want_a, 0.0)
        assert (want_a[0, 0, :3] == [0, 0, want_a[0, 0, 2]]).all() and want_a[0, 0, 2] != 0
    want_b = np.moveaxis(want_b, 0, 1)  # (K, B, N)
    want_a, want_b = (np.asarray(jnp.asarray(w.astype(np.float32)).astype(dtype)
                                 .astype(np.float32)) for w in (want_a, want_b))
    tol = 1e-6 if dtype == np.float32 else 1e-2  # (summation order; bf16 rounding of it)
    np.testing.assert_allclose(ga, want_a, rtol=tol, atol=tol * np.abs(want_a).max())
    np.testing.assert_allclose(gb, want_b, rtol=tol, atol=tol * np.abs(want_b).max())
    if mode == "mxfp8":  # it did quantize the cotangent and the other operand
        exact = np.einsum("bmn,bkn->bmk", g32, r32)
        assert np.abs(ga - exact).max() > 1e-3 * np.abs(exact).max()
