"""``jax.nn.scaled_matmul``, ``scaled_dot_general`` and ``get_scaled_dot_general_config``:
block-scaled (microscaling) products, computed on CPU by dequantizing in float32.

``scaled_matmul(a, b, a_scales, b_scales)`` is JAX's documented formula: each scale multiplies
its block of K // K_a consecutive elements of the contracting (last) dimension, then
einsum('BMK,BNK->BMN') accumulated in float32.

``scaled_dot_general`` quantizes both operands along their contracting dimension in blocks of
``block_size`` and multiplies the dequantized values, as JAX 0.10.2's ``quantize`` and
``scaled_dot_impl`` do (JAX has no CPU lowering of the product itself; its numbers were
observed with that product replaced by the documented formula): mxfp8: scale = amax / 448
(in the operand's dtype) rounded *up* to a power of two (e8m0fnu), elements x / scale
rounded to nearest-even in float8_e4m3fn; nvfp4: x / global_scale, scale = amax / 6 clipped
to 448 and rounded to *nearest* in float8_e4m3fn, elements clipped to +-6 and rounded to
nearest-even in float4_e2m1fn, the float32 product times both global scales. All of this runs
in float32 on the grids of those formats (the CPU plugin has no e8m0fnu/e2m1fn element
types). The gradient is JAX's custom VJP (see ``_block_scaled_product``).
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from pyjax import lax
from pyjax import numpy as jnp
from pyjax._src.numpy.eager_compiled import compiled_when_eager
from pyjax._src.transformations.custom_derivatives import custom_vjp

__all__ = ["BlockScaleConfig", "scaled_matmul", "scaled_dot_general",
           "get_scaled_dot_general_config"]

# format -> (mantissa bits, smallest normal exponent, largest finite value)
_FORMATS = {"float8_e4m3fn": (3, -6, 448.0), "float8_e5m2": (2, -14, 57344.0),
            "float4_e2m1fn": (1, 0, 6.0), "float8_e8m0fnu": (0, -127, 2.0 ** 127)}


def _format_of(dtype):
    name = np.dtype(dtype).name
    if name not in _FORMATS:
        raise ValueError(f"scaled_dot_general: unsupported block-scale dtype {name}; expected "
                         f"one of {sorted(_FORMATS)}")
    return _FORMATS[name]


@dataclasses.dataclass
class BlockScaleConfig:
    """One operand's block-scale quantization (as JAX's ``BlockScaleConfig``)."""
    mode: str
    block_size: int
    data_type: Any
    scale_type: Any
    global_scale: Any = None
    infer_only: bool = False


def get_scaled_dot_general_config(mode, global_scale=None):
    """The configuration of ``mode``: 'mxfp8' (float8_e4m3fn data, float8_e8m0fnu scales,
    blocks of 32) or 'nvfp4' (float4_e2m1fn data, float8_e4m3fn scales, blocks of 16, and a
    float32 ``global_scale``, 1 by default)."""
    if mode == "mxfp8":
        if global_scale is not None:
            raise ValueError("get_scaled_dot_general_config: 'mxfp8' takes no global_scale")
        return BlockScaleConfig("mxfp8", 32, jnp.float8_e4m3fn, jnp.float8_e8m0fnu)
    if mode == "nvfp4":
        if global_scale is None:
            global_scale = jnp.ones((1,), jnp.float32)
        return BlockScaleConfig("nvfp4", 16, jnp.float4_e2m1fn, jnp.float8_e4m3fn,
                                jnp.asarray(global_scale, jnp.float32))
    raise ValueError(f"get_scaled_dot_general_config: unknown mode {mode!r}; expected "
                     "'mxfp8' or 'nvfp4'")


def _as_float32(x):
    """Host arrays of formats the CPU plugin cannot hold become float32 first (exactly)."""
    if isinstance(x, np.ndarray) and x.dtype.name in ("float8_e8m0fnu", "float4_e2m1fn"):
        return np.asarray(x, np.float32)
    return jnp.asarray(x).astype(jnp.float32)


def scaled_matmul(lhs, rhs, lhs_scales, rhs_scales, preferred_element_type=np.float32):
    """Block-scaled matmul: (a * repeat(a_scales)) @ (b * repeat(b_scales))^T per batch.
    Shapes (B, M, K), (B, N, K), (B, M, K_a), (B, N, K_b) with K divisible by K_a and K_b;
    the result is (B, M, N) in ``preferred_element_type`` (accumulated in float32)."""
    args = [_as_float32(v) for v in (lhs, rhs, lhs_scales, rhs_scales)]
    shapes = [tuple(np.shape(v)) for v in args]
    if any(len(s) != 3 for s in shapes):
        raise ValueError(f"scaled_matmul: all operands must be 3-D (B, M|N, K), got shapes "
                         f"{shapes}")
    (b1, m, k), (b2, n, k2), (b3, m3, ka), (b4, n4, kb) = shapes
    if k != k2 or b1 != b2:
        raise ValueError(f"scaled_matmul: lhs (B, M, K) and rhs (B, N, K) must agree in B and "
                         f"K, got {shapes[0]} and {shapes[1]}")
    for name, (bs, rows, kk), want in (("lhs_scales", shapes[2], m), ("rhs_scales", shapes[3], n)):
        if bs != b1 or rows != want or kk == 0 or k % kk:
            raise ValueError(f"scaled_matmul: {name} must have shape (B, {want}, K_s) with "
                             f"{k} % K_s == 0, got {(bs, rows, kk)}")
    return _scaled_matmul(*args, np.dtype(preferred_element_type))


@compiled_when_eager("out_dtype")
def _scaled_matmul(a, b, sa, sb, out_dtype):
    k = a.shape[-1]
    a = a * jnp.repeat(sa, k // sa.shape[-1], axis=-1)
    b = b * jnp.repeat(sb, k // sb.shape[-1], axis=-1)
    out = lax.dot_general(a, b, (((2,), (2,)), ((0,), (0,))),
                          preferred_element_type=jnp.float32)
    return out.astype(out_dtype)


def _pow2(e):
    """2.0 ** e in float32, exactly, for integer-valued int32 e in [-126, 127] (this plugin's
    exp2 is not exact at integers)."""
    return lax.bitcast_convert_type(lax.shift_left(e + 127, jnp.int32(23)), jnp.float32)


def _exponent(av):
    """floor(log2(av)) of a float32 av > 0 from its bits (-127 for 0 and subnormals)."""
    bits = lax.bitcast_convert_type(av, jnp.int32)
    return lax.shift_right_logical(bits, jnp.int32(23)) - 127


def _round_to_format(v, fmt):
    """float32 v on the grid of the format, rounded to nearest-even (as a conversion to it),
    saturating at its largest value; exact (powers of two from the exponent bits)."""
    mant, emin, vmax = fmt
    av = jnp.abs(v)
    quantum = _pow2(jnp.maximum(_exponent(av), emin) - mant)
    q = jnp.minimum(jnp.round(av / quantum) * quantum, vmax)
    return jnp.where(v < 0, -q, q)


def _e8m0_rounding_up(v):
    """JAX's ``cast_to_e8m0_with_rounding_up`` of float32 v >= 0, as the float32 scale: the
    exponent bits, plus one where the mantissa is not zero (not above 2**127, and not for
    subnormals up to 2**-127). A scale of 2**-127 (subnormal, flushed on this CPU) is 0."""
    bits = lax.bitcast_convert_type(v, jnp.int32)
    exp = lax.shift_right_logical(bits, jnp.int32(23))
    mant = bits & 0x7FFFFF
    up = (mant > 0) & (exp != 0xFE) & ~((exp == 0) & (mant <= 0x400000))
    exp = jnp.where(up, exp + 1, exp)
    return jnp.where(exp > 0, _pow2(jnp.maximum(exp, 1) - 127), 0.0)


def _quantize(x, config):
    """x (..., K) block-quantized along its last axis as JAX's ``quantize`` does: the float32
    values q * scale the scaled product sees, without the nvfp4 global scale (the product is
    multiplied by it afterwards)."""
    k = x.shape[-1]
    bs = config.block_size
    if k % bs:
        raise ValueError(f"scaled_dot_general: the contracting dimension ({k}) must be a "
                         f"multiple of the block size {bs} ({config.mode})")
    data_fmt, scale_fmt = _format_of(config.data_type), _format_of(config.scale_type)
    xb = jnp.reshape(x, x.shape[:-1] + (k // bs, bs))
    # Divisions as XLA compiles JAX's program: multiplications by reciprocals, and for
    # nvfp4 x * ((1 / scale) * (1 / gs)) for the elements (JAX 0.10.2's CPU HLO; the
    # tie-breaking of the rounded elements depends on it)
    xb32 = xb.astype(jnp.float32)
    recip_gs = None
    if config.global_scale is not None:  # nvfp4: x / gs, scale = amax / 6 to nearest e4m3fn
        recip_gs = 1.0 / jnp.reshape(jnp.asarray(config.global_scale, jnp.float32), ())
        amax = jnp.max(jnp.abs(xb32 * recip_gs), axis=-1, keepdims=True)
        scale = _round_to_format(jnp.clip(amax * np.float32(1 / data_fmt[2]), 0.0,
                                          scale_fmt[2]), scale_fmt)
    else:  # mxfp8: amax / 448 (in x's dtype) rounded up to a power of two
        amax = jnp.max(jnp.abs(xb), axis=-1, keepdims=True)
        ratio = (amax.astype(jnp.float32) * np.float32(1 / data_fmt[2])).astype(x.dtype)
        scale = _e8m0_rounding_up(ratio.astype(jnp.float32))
    # (JAX divides by a zero scale here, giving inf/NaN; such blocks are zeros here)
    recip = 1.0 / jnp.where(scale > 0, scale, 1.0)
    if recip_gs is not None:
        recip = recip * recip_gs
    q = _round_to_format(jnp.clip(xb32 * recip, -data_fmt[2], data_fmt[2]), data_fmt)
    return jnp.reshape(jnp.where(scale > 0, q * scale, 0.0), x.shape)


def _global_scale(config):
    gs = config.global_scale
    return None if gs is None else jnp.reshape(jnp.asarray(gs, jnp.float32), ())


def _canonical(x, contract, batch):
    """x with its batch dims first, free dims next (flattened), contracting dims last."""
    free = [d for d in range(x.ndim) if d not in contract and d not in batch]
    xt = jnp.transpose(x, list(batch) + free + list(contract))
    bshape = [x.shape[d] for d in batch]
    fshape = [x.shape[d] for d in free]
    kshape = [x.shape[d] for d in contract]
    return (jnp.reshape(xt, (int(np.prod(bshape)), int(np.prod(fshape)),
                             int(np.prod(kshape)))), bshape, fshape)


def scaled_dot_general(lhs, rhs, dimension_numbers, preferred_element_type=np.float32,
                       configs=None, implementation=None):
    """``lax.dot_general`` of block-quantized operands (``configs[0]`` for lhs, ``configs[1]``
    for rhs); plain ``lax.dot_general`` when ``configs`` is None. ``implementation`` is
    deprecated and ignored, as in JAX."""
    if implementation not in (None, "cudnn"):
        raise ValueError(f"scaled_dot_general: implementation must be None or 'cudnn', got "
                         f"{implementation!r}")
    lhs, rhs = jnp.asarray(lhs), jnp.asarray(rhs)
    if configs is None:
        return lax.dot_general(lhs, rhs, dimension_numbers,
                               preferred_element_type=preferred_element_type)
    configs = list(configs)
    if len(configs) < 2 or not all(isinstance(c, BlockScaleConfig) for c in configs):
        raise ValueError("scaled_dot_general: configs must be a list of BlockScaleConfig "
                         "(lhs, rhs and gradient), e.g. [get_scaled_dot_general_config("
                         "'mxfp8')] * 3")
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = (tuple(int(d) % a.ndim for d in ds) for ds, a in
                      ((lc, lhs), (rc, rhs), (lb, lhs), (rb, rhs)))
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise ValueError(f"scaled_dot_general: dimension_numbers {dimension_numbers} pair "
                         "contracting and batch dimensions of different counts")
    out_dtype = np.dtype(preferred_element_type)
    if out_dtype not in (np.dtype(np.float32), np.dtype(jnp.bfloat16), np.dtype(np.float16)):
        raise TypeError("scaled_dot_general: preferred_element_type must be float32, bfloat16 "
                        f"or float16 with configs, got {out_dtype}")
    return _scaled_dot_general(lhs, rhs, (lc, rc, lb, rb), out_dtype, configs[0],
                               configs[1], configs[2] if len(configs) > 2 else None)


def _scaled_dot_general(lhs, rhs, dims, out_dtype, cfg_a, cfg_b, cfg_g):
    lc, rc, lb, rb = dims
    a, bshape, mshape = _canonical(lhs, lc, lb)
    b, _, nshape = _canonical(rhs, rc, rb)
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[2]:
        raise ValueError(f"scaled_dot_general: lhs {lhs.shape} and rhs {rhs.shape} disagree in "
                         "their batch or contracting sizes")
    out = _block_scaled_product(a, b, out_dtype, (cfg_a, cfg_b, cfg_g))
    return jnp.reshape(out, tuple(bshape) + tuple(mshape) + tuple(nshape))


def _scaled_product(x, y, cfg_x, cfg_y, out_dtype):
    """(B, M, K) x (B, N, K) -> (B, M, N), both quantized along K, accumulated in float32;
    with nvfp4 (global scales), in float32 times the global scales, then ``out_dtype``."""
    gx, gy = _global_scale(cfg_x), _global_scale(cfg_y)
    ones = [jnp.ones(v.shape[:-1] + (1,), jnp.float32) for v in (x, y)]
    if gx is None and gy is None:
        return _scaled_matmul(_quantize(x, cfg_x), _quantize(y, cfg_y), *ones, out_dtype)
    out = _scaled_matmul(_quantize(x, cfg_x), _quantize(y, cfg_y), *ones, np.dtype(np.float32))
    for g in (gx, gy):
        out = out if g is None else out * g
    return out.astype(out_dtype)


def _block_scaled_product(a, b, out_dtype, cfgs):
    """The product with JAX's custom VJP: the cotangent and the other operand re-quantized
    along the free dimension being contracted (``configs[2]`` for the cotangent), the result in
    ``preferred_element_type``; with nvfp4 gradients, plain products of the unquantized values
    and a straight-through estimator that zeroes the gradient of elements beyond
    global_scale * 6 * 448."""
    cfg_a, cfg_b, cfg_g = cfgs

    @custom_vjp
    def product(a, b):
        return _scaled_product(a, b, cfg_a, cfg_b, out_dtype)

    def fwd(a, b):
        return product(a, b), (a, b)

    def bwd(res, g):
        if cfg_g is None:
            raise ValueError("scaled_dot_general: differentiating needs configs[2], the "
                             "gradient's BlockScaleConfig; got 2 configs")
        a, b = res
        bt, at = jnp.swapaxes(b, 1, 2), jnp.swapaxes(a, 1, 2)  # (B, K, N), (B, K, M)
        if cfg_g.mode != "nvfp4":
            ga = _scaled_product(g, bt, cfg_g, cfg_b, out_dtype)  # (B, M, K)
            gb = _scaled_product(jnp.swapaxes(g, 1, 2), at, cfg_g, cfg_a, out_dtype)
            return ga, gb
        mm = lambda x, y: lax.dot_general(  # noqa: E731
            x, y, (((2,), (2,)), ((0,), (0,))), preferred_element_type=out_dtype)
        ga, gb = mm(g, bt), mm(jnp.swapaxes(g, 1, 2), at)
        limit = float(_format_of(cfg_a.data_type)[2] * _format_of(cfg_a.scale_type)[2])
        for name, v, cfg in (("a", a, cfg_a), ("b", b, cfg_b)):
            bound = limit * (1.0 if cfg.global_scale is None else _global_scale(cfg))
            keep = jnp.abs(v) <= bound
            if name == "a":
                ga = jnp.where(keep, ga, jnp.zeros_like(ga))
            else:
                gb = jnp.where(keep, gb, jnp.zeros_like(gb))
        return ga, gb

    product.defvjp(fwd, bwd)
    return product(a, b)
