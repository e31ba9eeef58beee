"""``jax.nn.scaled_matmul``, ``scaled_dot_general`` and ``get_scaled_dot_general_config``:
block-scaled (microscaling) products, computed on CPU by dequantizing in float32.

``scaled_matmul(a, b, a_scales, b_scales)`` is JAX's documented formula: each scale multiplies
its block of K // K_a consecutive elements of the contracting (last) dimension, then
einsum('BMK,BNK->BMN') accumulated in float32.

``scaled_dot_general`` quantizes both operands along their contracting dimension in blocks of
``block_size`` and multiplies the dequantized values. The quantization follows the cuDNN
block-scale recipe (JAX 0.10.2 itself has no CPU lowering for it, so its numbers could not be
compared): per block, scale = amax / max(data_type) (divided by the global scale for nvfp4),
rounded *up* into the scale type (a power of two for e8m0fnu; 3 mantissa bits for e4m3fn), so
that every scaled element fits; elements are x / scale rounded to nearest-even in the data
type (float8_e4m3fn for mxfp8, float4_e2m1fn for nvfp4); the product is dequantized with
scale (times global_scale). All of this runs in float32 on the grids of those formats (the CPU
plugin has no e8m0fnu/e2m1fn element types). Differentiating ``scaled_dot_general`` raises:
JAX quantizes the gradients too (``configs[2]``), which is not implemented.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from pyjax import lax
from pyjax import numpy as jnp
from pyjax._src.numpy.eager_compiled import compiled_when_eager
from pyjax._src.transformations.custom_derivatives import custom_jvp

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


def _round_to_format(v, fmt, up=False):
    """v (float32, >= 0 when ``up``) on the grid of the format: nearest-even, or rounded up."""
    mant, emin, vmax = fmt
    av = jnp.abs(v)
    e = jnp.maximum(jnp.floor(jnp.log2(jnp.where(av > 0, av, 1.0))), float(emin))
    quantum = jnp.exp2(e - mant)
    steps = jnp.ceil(av / quantum) if up else jnp.round(av / quantum)
    q = jnp.minimum(steps * quantum, vmax)
    return jnp.where(v < 0, -q, q)


def _quantize(x, config):
    """(dequantized x, ...) along the last axis in blocks: the float32 values the scaled
    product sees."""
    k = x.shape[-1]
    bs = config.block_size
    if k % bs:
        raise ValueError(f"scaled_dot_general: the contracting dimension ({k}) must be a "
                         f"multiple of the block size {bs} ({config.mode})")
    data_fmt, scale_fmt = _format_of(config.data_type), _format_of(config.scale_type)
    xb = jnp.reshape(x.astype(jnp.float32), x.shape[:-1] + (k // bs, bs))
    amax = jnp.max(jnp.abs(xb), axis=-1, keepdims=True)
    gs = 1.0 if config.global_scale is None else \
        jnp.reshape(jnp.asarray(config.global_scale, jnp.float32), ())
    scale = _round_to_format(amax / data_fmt[2] / gs, scale_fmt, up=True)
    scale = jnp.where(amax > 0, scale, 1.0)
    q = _round_to_format(jnp.clip(xb / (scale * gs), -data_fmt[2], data_fmt[2]), data_fmt)
    return jnp.reshape(q * (scale * gs), x.shape)


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
    return _scaled_dot_general(lhs, rhs, (lc, rc, lb, rb), np.dtype(preferred_element_type),
                               configs[0], configs[1])


def _scaled_dot_general(lhs, rhs, dims, out_dtype, cfg_a, cfg_b):
    lc, rc, lb, rb = dims
    a, bshape, mshape = _canonical(lhs, lc, lb)
    b, _, nshape = _canonical(rhs, rc, rb)
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[2]:
        raise ValueError(f"scaled_dot_general: lhs {lhs.shape} and rhs {rhs.shape} disagree in "
                         "their batch or contracting sizes")

    @custom_jvp
    def product(a, b):
        ones = [jnp.ones(v.shape[:-1] + (1,), jnp.float32) for v in (a, b)]
        return _scaled_matmul(_quantize(a, cfg_a), _quantize(b, cfg_b), *ones, out_dtype)

    @product.defjvp
    def _product_jvp(primals, tangents):
        raise NotImplementedError("scaled_dot_general: differentiation is not implemented "
                                  "(JAX quantizes the gradients with configs[2])")

    out = product(a, b)
    return jnp.reshape(out, tuple(bshape) + tuple(mshape) + tuple(nshape))
