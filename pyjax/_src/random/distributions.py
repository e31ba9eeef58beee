"""Samplers that return exactly JAX's values for the same key (JAX's default Threefry mode).

Each public sampler checks its arguments on the host, then calls one jitted core (static shape
and dtype), so an eager call compiles once per signature and a call under ``jit`` inlines. The
cores take raw key data ``uint32[*batch, 2]``; with a batch of keys they return one draw per key
(what the loop-style samplers in ``samplers.py`` build on).
"""
from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

from pyjax._src.core import axes as axes_mod
from pyjax._src.core import dtypes
from pyjax._src.core.trace import Tracer, shape_of  # noqa: F401 (shape_of: for the samplers)
from pyjax._src.transformations.jit import jit
from pyjax._src.lax import elementwise as lax
from pyjax._src.lax import shape_ops
from pyjax._src.lax import sorting as lax_sort
from pyjax._src.lax.base import aval_of
from pyjax._src.lax.special import xla_erf_inv
from pyjax._src.numpy import creation as jcr
from pyjax._src.numpy import indexing as jix
from pyjax._src.numpy import linalg as jla
from pyjax._src.numpy import products as jpr
from pyjax._src.numpy import reductions as jred
from pyjax._src.numpy import shape as jshape
from pyjax._src.numpy import ufuncs as jnp
from pyjax._src.random.prng import UINT_DTYPES, check_key, random_bits_data, split_data

# ---------------------------------------------------------------------------------------
# argument checking
# ---------------------------------------------------------------------------------------


def canonical_shape(name, shape, what="shape"):
    """``shape`` as a tuple of non-negative ints; errors name the function and parameter."""
    return axes_mod.canonicalize_shape(shape, what, name, scalar_ok=False)


def optional_shape(name, shape):
    return None if shape is None else canonical_shape(name, shape)


def broadcast_shapes(*shapes):
    return jshape.broadcast_shapes(*shapes)


def check_shape(name, shape, *param_shapes, names=()):
    """The parameters' shapes must broadcast to ``shape`` exactly."""
    try:
        out = broadcast_shapes(shape, *param_shapes)
    except ValueError:
        out = None
    if out != tuple(shape):
        desc = ", ".join(f"{n}: {tuple(s)}" for n, s in zip(names, param_shapes)) or \
            ", ".join(str(tuple(s)) for s in param_shapes)
        raise ValueError(f"{name} parameter shapes must be broadcast-compatible with the "
                         f"`shape` argument, and the result of broadcasting them must equal "
                         f"it, but got parameter shapes ({desc}) for shape {tuple(shape)}.")


def float_dtype(name, dtype, allow_complex=False):
    try:
        dt = np.dtype(dtype) if not isinstance(dtype, np.dtype) else dtype
    except TypeError:
        raise TypeError(f"dtype argument to `{name}` must be a dtype, got {dtype!r}") from None
    ok = dtypes.issubdtype(dt, np.floating) or (allow_complex and
                                                 dtypes.issubdtype(dt, np.complexfloating))
    if not ok:
        kind = "a float or complex" if allow_complex else "a float"
        raise ValueError(f"dtype argument to `{name}` must be {kind} dtype, got "
                         f"{getattr(dt, 'name', dt)}")
    return dtypes.canonicalize_dtype(dt)


def int_dtype(name, dtype, unsigned=False):
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype argument to `{name}` must be a dtype, got {dtype!r}") from None
    want = np.unsignedinteger if unsigned else np.integer
    if not dtypes.issubdtype(dt, want):
        kind = "an unsigned int" if unsigned else "an int"
        raise ValueError(f"dtype argument to `{name}` must be {kind} dtype, got {dt.name}")
    return dtypes.canonicalize_dtype(dt)


def dtype_of(x):
    if hasattr(x, "dtype") and not isinstance(x, type):
        return np.dtype(x.dtype)
    return aval_of(x).dtype


def check_arraylike(name, *args):
    for a in args:
        if isinstance(a, (list, tuple)) or not (
                hasattr(a, "shape") or isinstance(a, (int, float, complex, bool, np.generic))):
            raise TypeError(f"{name} requires ndarray or scalar arguments, got "
                            f"{type(a).__name__}")


def sampler_args(name, key, shape, dtype, params, names, check_dtype=float_dtype):
    """``(key data, shape, dtype)`` for a sampler of the parameters ``params`` (called
    ``names``): without a ``shape``, the parameters' broadcast shape; a given one they must
    broadcast to exactly."""
    kd, _ = check_key(name, key)
    dtype = check_dtype(name, dtype)
    shape = optional_shape(name, shape)
    check_arraylike(name, *params)
    param_shapes = [shape_of(p) for p in params]
    if shape is None:
        return kd, broadcast_shapes(*param_shapes), dtype
    check_shape(name, shape, *param_shapes, names=names)
    return kd, shape, dtype


# ---------------------------------------------------------------------------------------
# small traced helpers
# ---------------------------------------------------------------------------------------

def bcast_to(x, shape):
    """NumPy-style broadcast of ``x`` (array or scalar) to ``shape``."""
    shape = tuple(shape)
    xs = tuple(aval_of(x).shape)
    if xs == shape:
        return x
    nd = len(shape)
    return shape_ops.broadcast_in_dim(x, shape, tuple(range(nd - len(xs), nd)))


def convert(x, dtype):
    return lax.convert_element_type(x, dtype)


def const(dtype, v):
    return np.array(v, dtype)[()]


def key_at(kd, i):
    """The i-th key of split key data ``uint32[*batch, n, 2]``: ``uint32[*batch, 2]``."""
    nd = aval_of(kd).ndim
    return shape_ops.squeeze(shape_ops.slice_in_dim(kd, i, i + 1, axis=nd - 2), (nd - 2,))


def split_keys(kd, num):
    s = split_data(kd, (num,))
    return [key_at(s, i) for i in range(num)]


# ---------------------------------------------------------------------------------------
# uniform and normal (traced cores)
# ---------------------------------------------------------------------------------------

def uniform_bits_width(dtype):
    """How many random bits ``uniform`` draws per value of float ``dtype``."""
    finfo = dtypes.finfo(dtype)
    return finfo.bits if finfo.nmant >= 8 else 8


def uniform_from_bits(bits, dtype, minval=0.0, maxval=1.0):
    """Uniform floats in ``[minval, maxval)`` from random bits (``uniform_bits_width(dtype)``
    wide): the top mantissa bits under the exponent of 1.0, minus 1, then scaled (JAX's
    bit-exact recipe)."""
    full = tuple(aval_of(bits).shape)
    minval = convert(minval, dtype)
    maxval = convert(maxval, dtype)
    finfo = dtypes.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    rng_bits = uniform_bits_width(dtype)
    uint_dtype = UINT_DTYPES[nbits]
    if rng_bits != nbits:
        bits = convert(bits, uint_dtype)
    one_bits = np.array(1.0, dtype).view(uint_dtype)[()]
    float_bits = lax.bitwise_or(lax.shift_right_logical(bits, uint_dtype.type(rng_bits - nmant)),
                                one_bits)
    floats = lax.sub(lax.bitcast_convert_type(float_bits, dtype), const(dtype, 1.0))
    if aval_of(minval).shape not in ((), full):
        minval = bcast_to(minval, full)
    if aval_of(maxval).shape not in ((), full):
        maxval = bcast_to(maxval, full)
    scaled = lax.add(lax.mul(floats, lax.sub(maxval, minval)), minval)
    if aval_of(minval).shape != full:
        minval = bcast_to(minval, full)
    return lax.max(minval, scaled)


def normal_from_bits(bits, dtype):
    """Standard normal floats from random bits: ``sqrt(2) * erfinv(u)``, ``u`` uniform in
    (-1, 1)."""
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype), dtype=dtype)
    u = uniform_from_bits(bits, dtype, lo, np.array(1.0, dtype))
    return lax.mul(const(dtype, np.sqrt(2)), xla_erf_inv(u))  # JAX's bits


def uniform_core(kd, shape, dtype, minval=0.0, maxval=1.0):
    """Uniform floats in ``[minval, maxval)`` under each key of ``kd``."""
    bits = random_bits_data(kd, uniform_bits_width(dtype), shape)
    return uniform_from_bits(bits, dtype, minval, maxval)


def normal_real_core(kd, shape, dtype):
    return normal_from_bits(random_bits_data(kd, uniform_bits_width(dtype), shape), dtype)


def normal_core(kd, shape, dtype):
    if dtypes.issubdtype(dtype, np.complexfloating):
        k_re, k_im = split_keys(kd, 2)
        real = dtypes.to_real_dtype(dtype)
        re = convert(normal_real_core(k_re, shape, real), dtype)
        im = convert(normal_real_core(k_im, shape, real), dtype)
        return jnp.divide(jnp.add(re, jnp.multiply(1j, im)), np.array(np.sqrt(2), dtype))
    return normal_real_core(kd, shape, dtype)


def exponential_core(kd, shape, dtype):
    u = uniform_core(kd, shape, dtype)
    # 1 - u moves the domain of log to (0, 1]
    return lax.neg(lax.log1p(lax.neg(u)))


def gumbel_core(kd, shape, dtype, mode="low"):
    info = dtypes.finfo(dtype)
    if mode in ("high", "highest"):
        batch = tuple(aval_of(kd).shape[:-1])
        nb = len(batch)
        u = uniform_core(kd, (2,) + tuple(shape), dtype)
        high = shape_ops.squeeze(shape_ops.slice_in_dim(u, 0, 1, axis=nb), (nb,))
        low = shape_ops.squeeze(shape_ops.slice_in_dim(u, 1, 2, axis=nb), (nb,))
        # 2**-nmant * low fills in the bits below the resolution of `high`
        fine = lax.add(lax.add(high, lax.mul(const(dtype, 2.0 ** -info.nmant), low)),
                       const(dtype, info.tiny))
        x = jnp.where(lax.ge(high, const(dtype, 0.5)), high, fine)
        return jnp.negative(jnp.log(jnp.negative(jnp.log1p(jnp.negative(x)))))
    u = uniform_core(kd, shape, dtype, np.array(info.tiny, dtype), np.array(1.0, dtype))
    return jnp.negative(jnp.log(jnp.negative(jnp.log(u))))


def bernoulli_core(kd, p, shape, mode="low"):
    dtype = dtype_of(p)
    full = tuple(aval_of(kd).shape[:-1]) + tuple(shape)
    if mode == "high":
        u = uniform_core(kd, (2,) + tuple(shape), dtype)
        nb = len(full) - len(shape)
        u1 = shape_ops.squeeze(shape_ops.slice_in_dim(u, 0, 1, axis=nb), (nb,))
        u2 = shape_ops.squeeze(shape_ops.slice_in_dim(u, 1, 2, axis=nb), (nb,))
        u2 = lax.mul(u2, const(dtype, 2.0 ** -dtypes.finfo(dtype).nmant))
        return lax.lt(u2, lax.sub(bcast_to(p, full), u1))
    return lax.lt(uniform_core(kd, shape, dtype), bcast_to(p, full))


# ---------------------------------------------------------------------------------------
# jitted cores
# ---------------------------------------------------------------------------------------

@functools.partial(jit, static_argnums=(1, 2))
def _bits_jit(kd, shape, bit_width):
    return random_bits_data(kd, bit_width, shape)


@functools.partial(jit, static_argnums=(1, 2))
def _uniform_jit(kd, shape, dtype, minval, maxval):
    return uniform_core(kd, shape, dtype, minval, maxval)


@functools.partial(jit, static_argnums=(1, 2))
def _normal_jit(kd, shape, dtype):
    return normal_core(kd, shape, dtype)


# ---------------------------------------------------------------------------------------
# public samplers
# ---------------------------------------------------------------------------------------

def bits(key, shape=(), dtype=None):
    """Sample uniform bits in the form of unsigned integers.

    Parameters
    ----------
    key : a PRNG key.
    shape : tuple of non-negative ints, optional. The result shape. Default ``()``.
    dtype : unsigned integer dtype, optional. Default ``uint64`` with x64 enabled, else
        ``uint32``.
    """
    kd, _ = check_key("bits", key)
    dtype = int_dtype("bits", np.uint64 if dtype is None else dtype, unsigned=True)
    shape = canonical_shape("bits", shape)
    return _bits_jit(kd, shape, dtype.itemsize * 8)


def uniform(key, shape=(), dtype=float, minval=0.0, maxval=1.0):
    """Sample uniform random values in ``[minval, maxval)`` with the given shape and dtype.

    ``minval`` and ``maxval`` must broadcast to ``shape``.
    """
    kd, _ = check_key("uniform", key)
    shape = canonical_shape("uniform", shape)
    dtype = float_dtype("uniform", dtype)
    check_shape("uniform", shape, shape_of(minval), shape_of(maxval),
                names=("minval", "maxval"))
    return _uniform_jit(kd, shape, dtype, minval, maxval)


def normal(key, shape=(), dtype=float):
    """Sample standard normal values (``sqrt(2) * erfinv(u)``, ``u`` uniform in (-1, 1)).

    A complex ``dtype`` gives standard complex normal values (real and imaginary parts each of
    variance 1/2).
    """
    kd, _ = check_key("normal", key)
    shape = canonical_shape("normal", shape)
    dtype = float_dtype("normal", dtype, allow_complex=True)
    return _normal_jit(kd, shape, dtype)


def _convert_and_clip_integer(val, dtype):
    """Convert an integer array to ``dtype``, clipping to the range both dtypes share."""
    src = dtype_of(val)
    si, di = dtypes.iinfo(src), dtypes.iinfo(dtype)
    lo, hi = max(int(si.min), int(di.min)), min(int(si.max), int(di.max))
    if lo > int(si.min) or hi < int(si.max):
        val = lax.clamp(np.array(lo, src)[()], val, np.array(hi, src)[()])
    return convert(val, dtype)


def _as_int_array(x):
    x = jcr.asarray(x)
    if not dtypes.issubdtype(dtype_of(x), np.integer):
        x = x.astype(dtypes.canonicalize_dtype(int))
    return x


@functools.partial(jit, static_argnums=(1, 4))
def _randint_jit(kd, shape, minval, maxval, dtype):
    minval = _as_int_array(minval)
    maxval = _as_int_array(maxval)
    # the dtype's largest value, in maxval's dtype (clipped to its range), as a literal: an
    # array here would be an argument of the program, and XLA would then divide by a span it
    # cannot see (randint(k, shape, 0, 100): remainders by 100 become multiplications)
    mdt = dtype_of(maxval)
    imax = np.array(min(int(dtypes.iinfo(dtype).max), int(dtypes.iinfo(mdt).max)), mdt)
    maxval_out_of_range = jnp.greater(maxval, imax)
    out_dtype = dtype
    if dtypes.iinfo(dtype).bits < 32:
        # JAX 0.10.2 draws 32-bit words for 8- and 16-bit dtypes too: work in 32 bits on
        # bounds clipped to the dtype's range, then narrow (same values as JAX's)
        dtype = np.dtype(np.uint32 if dtypes.issubdtype(dtype, np.unsignedinteger)
                         else np.int32)
    # the bounds, span and multiplier keep the bounds' own (rank-broadcast) shape, as JAX's:
    # for scalar bounds the two remainders of the multiplier are one division, not one per
    # element (XLA does not hoist them; u32 division is not vectorized): randint of 10^6
    # draws in 0..100 11.2 -> 8.8 ms, and 1.0 ms once the bound above is a literal
    small = np.broadcast_shapes(shape_of(minval), shape_of(maxval))
    small = (1,) * (len(shape) - len(small)) + tuple(small)
    minval = bcast_to(convert(_convert_and_clip_integer(minval, out_dtype), dtype), small)
    maxval = bcast_to(convert(_convert_and_clip_integer(maxval, out_dtype), dtype), small)
    maxval_out_of_range = bcast_to(maxval_out_of_range, small)
    nbits = dtypes.iinfo(dtype).bits
    # twice the bits the dtype needs, to shrink the modulo bias of spans not a power of 2
    k1, k2 = split_keys(kd, 2)
    higher_bits = random_bits_data(k1, nbits, shape)
    lower_bits = random_bits_data(k2, nbits, shape)
    udt = UINT_DTYPES[nbits]
    span = convert(lax.sub(maxval, minval), udt)
    one = udt.type(1)
    # maxval <= minval always gives minval
    span = lax.select(lax.le(maxval, minval), shape_ops.full(small, one, udt), span)
    # an out-of-range maxval makes the span one larger (wrapping to 0 means "everything")
    span = lax.select(lax.bitwise_and(maxval_out_of_range, lax.gt(maxval, minval)),
                      lax.add(span, one), span)
    # (hi * 2**nbits + lo) % span, with 2**nbits % span computed without overflow
    multiplier = lax.rem(shape_ops.full(small, udt.type(2 ** (nbits // 2)), udt), span)
    multiplier = bcast_to(lax.rem(lax.mul(multiplier, multiplier), span), shape)
    span = bcast_to(span, shape)
    offset = lax.add(lax.mul(lax.rem(higher_bits, span), multiplier),
                     lax.rem(lower_bits, span))
    offset = lax.rem(offset, span)
    return convert(lax.add(bcast_to(minval, shape), convert(offset, dtype)), out_dtype)


def randint(key, shape, minval, maxval, dtype=int):
    """Sample uniform random integers in ``[minval, maxval)``.

    ``minval``/``maxval`` broadcast to ``shape``; ``maxval <= minval`` gives ``minval``.
    """
    kd, _ = check_key("randint", key)
    dtype = int_dtype("randint", dtype)
    shape = canonical_shape("randint", shape)
    check_arraylike("randint", minval, maxval)
    check_shape("randint", shape, shape_of(minval), shape_of(maxval),
                names=("minval", "maxval"))
    return _randint_jit(kd, shape, minval, maxval, dtype)


@functools.partial(jit, static_argnums=(1,))
def _shuffle_jit(kd, axis, x):
    return shuffle_core(kd, x, axis)


def shuffle_core(kd, x, axis):
    """Sort-based shuffle: sort by fresh random 32-bit keys, repeated enough times that key
    collisions do not bias the permutation (JAX's/TensorFlow's heuristic)."""
    size = math.prod(aval_of(x).shape)
    exponent = 3
    num_rounds = int(np.ceil(exponent * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(num_rounds):
        kd, subkey = split_keys(kd, 2)
        sort_keys = random_bits_data(subkey, 32, tuple(aval_of(x).shape))
        _, x = lax_sort.sort_key_val(sort_keys, x, axis)
    return x


@functools.partial(jit, static_argnums=(1,))
def _permute_rows_jit(kd, axis, x):
    ind = shuffle_core(kd, jcr.arange(aval_of(x).shape[axis]), 0)
    return jix.take(x, ind, axis=axis, unique_indices=True)


def permutation(key, x, axis=0, independent=False):
    """A random permutation of ``range(x)`` (int ``x``) or of ``x`` along ``axis``.

    With ``independent=True`` every slice along ``axis`` is shuffled independently.
    """
    kd, _ = check_key("permutation", key)
    check_arraylike("permutation", x)
    nd = len(shape_of(x))
    axis = axes_mod.canonicalize_axis(axis, nd or 1, fun="permutation")
    if not nd:
        if not dtypes.issubdtype(dtype_of(x), np.integer):
            raise TypeError("permutation: x must be an integer or at least 1-dimensional")
        if isinstance(x, Tracer):
            raise TypeError("permutation: an integer x must be concrete (the length of the "
                            "result), got a traced value")
        return _shuffle_jit(kd, 0, jcr.arange(int(x)))
    if independent or nd == 1:
        return _shuffle_jit(kd, axis, x)
    return _permute_rows_jit(kd, axis, x)


def _searchsorted_left(a, v):
    """Indices where ``v`` would go in the sorted 1-D ``a`` (side='left'): binary search."""
    n = aval_of(a).shape[0]
    shape = tuple(aval_of(v).shape)
    lo = shape_ops.full(shape, np.int32(0), np.int32)
    hi = shape_ops.full(shape, np.int32(n), np.int32)
    for _ in range(max(1, int(n).bit_length())):
        mid = lax.div(lax.add(lo, hi), np.int32(2))
        right = lax.lt(jix.take(a, mid, mode="clip"), v)
        right = lax.bitwise_and(right, lax.lt(lo, hi))
        lo = lax.select(right, lax.add(mid, np.int32(1)), lo)
        hi = lax.select(lax.bitwise_or(right, lax.ge(lo, hi)), hi, mid)
    return lo


@functools.partial(jit, static_argnums=(1, 2, 3))
def _choice_p_jit(kd, shape, replace, mode_high, p):
    mode = "high" if mode_high else "low"
    n = aval_of(p).shape[0]
    if replace:
        p_cuml = jred.cumsum(p)
        last = shape_ops.squeeze(shape_ops.slice_in_dim(p_cuml, n - 1, n), (0,))
        r = jnp.multiply(last, jnp.subtract(1, uniform_core(kd, shape, dtype_of(p_cuml))))
        return _searchsorted_left(p_cuml, r)
    g = jnp.add(gumbel_core(kd, (n,), dtype_of(p), mode), jnp.log(p))
    n_draws = math.prod(shape)
    return lax_sort.top_k(g, n_draws)[1]


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Random sample of ``a`` (or of ``range(a)`` for an int) along ``axis``.

    With ``p`` the entries are drawn with those probabilities; ``replace=False`` draws
    without replacement (Gumbel top-k when ``p`` is given).
    """
    kd, _ = check_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of random.choice must be a sequence, got {shape}")
    shape = canonical_shape("choice", shape)
    check_arraylike("choice", a)
    arr = jcr.asarray(a)
    if arr.ndim == 0:
        if isinstance(a, Tracer):
            raise TypeError("choice: an integer `a` must be concrete, got a traced value")
        n_inputs = int(a)
    else:
        axis = axes_mod.canonicalize_axis(axis, arr.ndim, fun="choice")
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jcr.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population (size "
                         f"{n_inputs}) when 'replace=False'")
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs)
            result = ind if arr.ndim == 0 else jix.take(arr, ind, axis=axis)
        else:
            perm = permutation(key, n_inputs if arr.ndim == 0 else arr, axis)
            result = shape_ops.slice_in_dim(perm, 0, n_draws, axis=axis if arr.ndim else 0)
    else:
        check_arraylike("choice", p)
        p_arr = jcr.asarray(p)
        if not dtypes.issubdtype(p_arr.dtype, np.inexact):
            p_arr = p_arr.astype(dtypes.canonicalize_dtype(float))
        if tuple(p_arr.shape) != (n_inputs,):
            raise ValueError("p must be None or a 1D vector with the same size as "
                             f"a.shape[axis]. p has shape {tuple(p_arr.shape)} and "
                             f"a.shape[axis] is {n_inputs}.")
        ind = _choice_p_jit(kd, shape, bool(replace), mode == "high", p_arr)
        result = ind if arr.ndim == 0 else jix.take(arr, ind, axis=axis)
    out_shape = shape if arr.ndim == 0 else (
        tuple(arr.shape[:axis]) + shape + tuple(arr.shape[axis + 1:]))
    return jshape.reshape(result, out_shape)


@functools.partial(jit, static_argnums=(1, 2))
def _truncated_normal_jit(kd, shape, dtype, lower, upper):
    sqrt2 = const(dtype, np.sqrt(2))
    lower = convert(lower, dtype)
    upper = convert(upper, dtype)
    a = lax.erf(lax.div(lower, sqrt2))
    b = lax.erf(lax.div(upper, sqrt2))
    u = uniform_core(kd, shape, dtype, a, b)
    out = lax.mul(sqrt2, xla_erf_inv(u))  # JAX's bits
    # clamp into the open interval (lower, upper) against rounding
    lo = lax.nextafter(lower, shape_ops.full(aval_of(lower).shape, dtype.type(np.inf), dtype))
    hi = lax.nextafter(upper, shape_ops.full(aval_of(upper).shape, dtype.type(-np.inf), dtype))
    return jnp.minimum(hi, jnp.maximum(lo, out))


def truncated_normal(key, lower, upper, shape=None, dtype=float):
    """Standard normal values truncated to ``(lower, upper)`` (inverse-CDF sampling)."""
    shape = optional_shape("truncated_normal", shape)
    kd, _ = check_key("truncated_normal", key)
    dtype = float_dtype("truncated_normal", dtype)
    if shape is None:
        shape = broadcast_shapes(shape_of(lower), shape_of(upper))
    else:
        check_shape("truncated_normal", shape, shape_of(lower), shape_of(upper),
                    names=("lower", "upper"))
    return _truncated_normal_jit(kd, shape, dtype, lower, upper)


@functools.partial(jit, static_argnums=(1, 2))
def _bernoulli_jit(kd, shape, mode, p):
    return bernoulli_core(kd, p, shape, mode)


def bernoulli(key, p=np.float32(0.5), shape=None, mode="low"):
    """Boolean samples that are True with probability ``p`` (``uniform < p``).

    ``mode="high"`` uses twice the random bits, for correct results at tiny ``p``.
    (``random.bernoulli``'s ``out_sharding=`` is added by random/out_sharding.py.)
    """
    shape = optional_shape("bernoulli", shape)
    kd, _ = check_key("bernoulli", key)
    if mode not in ("high", "low"):
        raise ValueError(f"bernoulli: mode must be 'high' or 'low', got {mode!r}")
    dtype = dtypes.canonicalize_dtype(dtype_of(p))
    if not dtypes.issubdtype(dtype, np.floating):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got "
                        f"{dtype.name}.")
    if shape is None:
        shape = shape_of(p)
    else:
        check_shape("bernoulli", shape, shape_of(p), names=("p",))
    p = convert(p, dtype)
    return _bernoulli_jit(kd, shape, mode, p)


def _make_simple(name, core, doc):
    jitted = jit(lambda kd, shape, dtype: core(kd, shape, dtype), static_argnums=(1, 2))

    def sampler(key, shape=(), dtype=float):
        kd, _ = check_key(name, key)
        dtype = float_dtype(name, dtype)
        shape = canonical_shape(name, shape)
        return jitted(kd, shape, dtype)
    sampler.__name__ = sampler.__qualname__ = name
    sampler.__doc__ = doc
    return sampler


def _laplace_core(kd, shape, dtype):
    u = uniform_core(kd, shape, dtype, np.array(-1.0 + dtypes.finfo(dtype).epsneg, dtype),
                     np.array(1.0, dtype))
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


def _logistic_core(kd, shape, dtype):
    x = uniform_core(kd, shape, dtype, np.array(dtypes.finfo(dtype).tiny, dtype),
                     np.array(1.0, dtype))
    return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


def _cauchy_core(kd, shape, dtype):
    u = uniform_core(kd, shape, dtype, np.array(dtypes.finfo(dtype).eps, dtype),
                     np.array(1.0, dtype))
    return lax.tan(lax.mul(const(dtype, np.pi), lax.sub(u, const(dtype, 0.5))))


exponential = _make_simple("exponential", exponential_core,
                           "Sample standard exponential values: ``-log1p(-u)``.")
laplace = _make_simple("laplace", _laplace_core,
                       "Sample standard Laplace values (density ``exp(-|x|) / 2``).")
logistic = _make_simple("logistic", _logistic_core,
                        "Sample standard logistic values: ``log(u) - log1p(-u)``.")
cauchy = _make_simple("cauchy", _cauchy_core,
                      "Sample standard Cauchy values: ``tan(pi * (u - 1/2))``.")


@functools.partial(jit, static_argnums=(1, 2, 3))
def _gumbel_jit(kd, shape, dtype, mode):
    return gumbel_core(kd, shape, dtype, mode)


def gumbel(key, shape=(), dtype=float, mode=None):
    """Sample standard Gumbel values: ``-log(-log(u))``.

    ``mode="high"`` uses twice the random bits for a wider dynamic range in the tail.
    """
    kd, _ = check_key("gumbel", key)
    dtype = float_dtype("gumbel", dtype)
    shape = canonical_shape("gumbel", shape)
    mode = "low" if mode is None else mode
    if mode not in ("high", "low", "highest"):
        raise ValueError(f"gumbel: mode must be 'high' or 'low', got {mode!r}")
    return _gumbel_jit(kd, shape, dtype, mode)


@functools.partial(jit, static_argnums=(1, 2, 3, 4, 5))
def _categorical_jit(kd, shape, batch_shape, axis, replace, mode, logits):
    shape_prefix = shape[:len(shape) - len(batch_shape)]
    nd = aval_of(logits).ndim
    dtype = dtype_of(logits)
    if replace:
        logits_shape = list(shape[len(shape) - len(batch_shape):])
        logits_shape.insert(axis % nd, aval_of(logits).shape[axis])
        g = gumbel_core(kd, (*shape_prefix, *logits_shape), dtype, mode)
        lg = shape_ops.expand_dims(logits, tuple(range(len(shape_prefix))))
        return jred.argmax(jnp.add(g, lg), axis=axis)
    logits = jnp.add(logits, gumbel_core(kd, tuple(aval_of(logits).shape), dtype, mode))
    k = math.prod(shape_prefix)
    _, indices = lax_sort.top_k(jshape.moveaxis(logits, axis, -1), k)
    dims = (aval_of(indices).ndim - 1, *range(aval_of(indices).ndim - 1))
    return shape_ops.reshape(shape_ops.transpose(indices, dims), shape)


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """Sample category indices from unnormalized log probabilities (the Gumbel-max trick;
    Gumbel top-k without replacement)."""
    kd, _ = check_key("categorical", key)
    check_arraylike("categorical", logits)
    logits = jcr.asarray(logits)
    if not dtypes.issubdtype(logits.dtype, np.floating):
        # JAX 0.10.2 draws its Gumbel noise in the logits' dtype and refuses integers so
        raise ValueError(f"dtype argument to `gumbel` must be a float dtype, got "
                         f"{logits.dtype.name}")
    nd = logits.ndim
    if nd == 0:
        raise ValueError("categorical: logits must have at least one dimension")
    axis = axes_mod.canonicalize_axis(axis, nd, fun="categorical") - nd  # negative, as JAX keeps it
    batch_shape = tuple(np.delete(np.array(logits.shape, dtype=np.int64), axis).tolist())
    if shape is None:
        shape = batch_shape
    else:
        shape = canonical_shape("categorical", shape)
        check_shape("categorical", shape, batch_shape, names=("logits (without axis)",))
    mode = "low" if mode is None else mode
    if not replace:
        k = math.prod(shape[:len(shape) - len(batch_shape)])
        if k > logits.shape[axis]:
            raise ValueError(f"Number of samples without replacement ({k}) cannot exceed "
                             f"number of categories ({logits.shape[axis]}).")
    return _categorical_jit(kd, shape, batch_shape, axis, bool(replace), mode, logits)


@functools.partial(jit, static_argnums=(1, 2))
def _rademacher_jit(kd, shape, dtype):
    return rademacher_core(kd, shape, dtype)


def rademacher_core(kd, shape, dtype):
    # bernoulli(key, 0.5): a Python float p, so uniforms of the default float dtype
    half = np.array(0.5, dtypes.canonicalize_dtype(float))[()]
    b = convert(bernoulli_core(kd, half, shape), dtype)
    return convert(jnp.subtract(jnp.multiply(2, b), 1), dtype)


def rademacher(key, shape=(), dtype=int):
    """Sample -1 or +1 with equal probability."""
    kd, _ = check_key("rademacher", key)
    dtype = dtypes.canonicalize_dtype(dtype)
    shape = canonical_shape("rademacher", shape)
    return _rademacher_jit(kd, shape, dtype)


# ---- matrix-valued samplers (over jnp.linalg) ----

@functools.partial(jit, static_argnums=(1, 2, 3))
def _multivariate_normal_jit(kd, shape, dtype, method, mean, cov):
    n = aval_of(mean).shape[-1]
    if method == "cholesky":
        factor = jla.cholesky(cov)
    elif method == "eigh":
        w, v = jla.eigh(cov)
        factor = jnp.multiply(v, jnp.sqrt(w)[..., None, :])
    else:  # "svd"
        u, s, _ = jla.svd(cov)
        factor = jnp.multiply(u, jnp.sqrt(s)[..., None, :])
    z = normal_core(kd, tuple(shape) + (n,), dtype)
    return jnp.add(mean, jpr.matmul(factor, z[..., :, None])[..., 0])


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """Sample multivariate normal vectors with mean ``mean`` (``(..., n)``) and covariance
    ``cov`` (``(..., n, n)``): ``mean + factor @ z`` with ``factor`` from ``method``
    (``"cholesky"``; ``"eigh"``/``"svd"`` also handle singular covariances)."""
    kd, _ = check_key("multivariate_normal", key)
    check_arraylike("multivariate_normal", mean, cov)
    if method not in ("svd", "eigh", "cholesky"):
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    mean = jcr.asarray(mean)
    cov = jcr.asarray(cov)
    common = dtypes.result_type(mean, cov)
    if not dtypes.issubdtype(common, np.inexact):
        common = dtypes.canonicalize_dtype(float)
    mean, cov = mean.astype(common), cov.astype(common)
    dtype = float_dtype("multivariate_normal", common if dtype is None else dtype)
    if mean.ndim < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{mean.ndim}")
    if cov.ndim < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{cov.ndim}")
    n = mean.shape[-1]
    if tuple(cov.shape[-2:]) != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {tuple(cov.shape)}.")
    if shape is None:
        shape = broadcast_shapes(mean.shape[:-1], cov.shape[:-2])
    else:
        shape = canonical_shape("multivariate_normal", shape)
        check_shape("multivariate_normal", shape, mean.shape[:-1], cov.shape[:-2],
                    names=("mean[..., 0]", "cov[..., 0, 0]"))
    return _multivariate_normal_jit(kd, shape, dtype, method, mean, cov)


@functools.partial(jit, static_argnums=(1, 2, 3, 4))
def _orthogonal_jit(kd, n, m, shape, dtype):
    # a tall Gaussian matrix's QR; the n < m case is the transpose of the m x n one
    z = normal_core(kd, tuple(shape) + (max(n, m), min(n, m)), dtype)
    q, r = jla.qr(z)
    d = jla.diagonal(r)
    q = jnp.multiply(q, jnp.divide(d, jnp.abs(d).astype(dtype))[..., None, :])
    return jshape.swapaxes(q, -1, -2) if n < m else q


def orthogonal(key, n, shape=(), dtype=float, m=None):
    """Sample ``n x n`` matrices uniformly (Haar) from the orthogonal group O(n), or from the
    unitary group U(n) for a complex ``dtype`` (Mezzadri 2007: QR of a Gaussian matrix with
    the signs of ``diag(r)`` folded into ``q``). With ``m``, ``n x m`` matrices with
    orthonormal columns (``n >= m``) or rows (``n < m``)."""
    shape = canonical_shape("orthogonal", shape)
    kd, _ = check_key("orthogonal", key)
    dtype = float_dtype("orthogonal", dtype, allow_complex=True)
    n = canonical_shape("orthogonal", (n,), "n")[0]
    m = n if m is None else canonical_shape("orthogonal", (m,), "m")[0]
    return _orthogonal_jit(kd, n, m, shape, dtype)


__all__ = ["bits", "uniform", "normal", "randint", "permutation", "choice",
           "truncated_normal", "bernoulli", "exponential", "laplace", "logistic", "cauchy",
           "gumbel", "categorical", "rademacher", "multivariate_normal", "orthogonal"]
