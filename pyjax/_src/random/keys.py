"""The key functions of ``pyjax.random``: making, splitting, folding and unwrapping keys."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.trace import Tracer
from pyjax._src.transformations.jit import jit
from pyjax._src.lax import elementwise as lax
from pyjax._src.lax import shape_ops
from pyjax._src.lax.base import aval_of
from pyjax._src.random import prng
from pyjax._src.random.distributions import canonical_shape
from pyjax._src.random.prng import PRNGKeyArray, check_key, check_key_data

_IMPL_ALIASES = {"threefry2x32": "threefry2x32", "threefry": "threefry2x32", "rbg": "rbg",
                 "unsafe_rbg": "unsafe_rbg"}


def _key_dtype(name, impl, dtype=None):
    """The key dtype named by ``impl`` or ``dtype`` (an implementation name, a key dtype, or
    None: ``jax_default_prng_impl``)."""
    spec = impl if impl is not None else dtype
    if spec is None:
        return prng.default_key_dtype()
    if isinstance(spec, prng.KeyTy):
        return spec
    impl_name = _IMPL_ALIASES.get(getattr(spec, "impl_name", spec)) \
        if isinstance(getattr(spec, "impl_name", spec), str) else None
    if impl_name is None:
        raise ValueError(f"{name}: unrecognized PRNG implementation {spec!r}; pyjax implements "
                         '"threefry2x32", "rbg" and "unsafe_rbg".')
    return prng.KEY_DTYPES[impl_name]


def _seed_data(name, seed, dtype):
    kd = prng.key_data_from_seed(name, seed)
    if dtype.width == 4:
        from pyjax._src.random import rbg
        kd = rbg.seed_data(kd)
    return kd


def key(seed, *, impl=None, dtype=None):
    """A typed PRNG key (a scalar key array) from an integer seed.

    Parameters
    ----------
    seed : a Python int (as JAX reads it: an int64, whose high 32 bits are kept only with
        x64 enabled) or a scalar integer array.
    impl : optional, ``"threefry2x32"``, ``"rbg"`` or ``"unsafe_rbg"`` (default:
        ``jax_default_prng_impl``); dtypes ``key<fry>``, ``key<rbg>``, ``key<urbg>``.
    dtype : optional, a key dtype (``key_dtype("rbg")``) or its implementation's name.
    """
    kdt = _key_dtype("key", impl, dtype)
    return PRNGKeyArray._wrap(_seed_data("key", seed, kdt), kdt)


def PRNGKey(seed, *, impl=None):  # noqa: N802 - JAX's name
    """A legacy raw PRNG key from an integer seed (see ``key``): ``uint32[2]`` key data for
    threefry, ``uint32[4]`` for rbg / unsafe_rbg."""
    return _seed_data("PRNGKey", seed, _key_dtype("PRNGKey", impl))


def key_data(keys):
    """The ``uint32[..., 2]`` key data underlying a key array (legacy raw keys pass through)."""
    kd, _ = check_key("key_data", keys, allow_batched=True)
    return kd


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    """A typed key array over ``uint32[..., 2]`` key data (the inverse of ``key_data``);
    ``impl``/``dtype`` as in ``key``."""
    kdt = _key_dtype("wrap_key_data", impl, dtype)
    if isinstance(key_bits_array, PRNGKeyArray):
        raise TypeError("wrap_key_data: expected uint32 key data, got a key array that is "
                        "already typed")
    return PRNGKeyArray(key_bits_array, kdt)


def key_dtype(impl_spec=None):
    """The dtype of key arrays of the PRNG implementation ``impl_spec`` (default: the
    ``jax_default_prng_impl``): ``key<fry>``, ``key<rbg>`` or ``key<urbg>``."""
    return _key_dtype("key_dtype", impl_spec)


def key_impl(keys):
    """The name of the PRNG implementation of ``keys``: ``"threefry2x32"``, ``"rbg"`` or
    ``"unsafe_rbg"`` (raw keys: ``jax_default_prng_impl``)."""
    _, typed = check_key("key_impl", keys, allow_batched=True)
    return prng.key_dtype_of(typed).impl_name


def split(key, num=2):
    """Split a key into ``num`` new keys (an int, or a shape tuple) along new leading axes.

    Typed keys give typed key arrays; legacy raw keys give raw ``uint32[..., 2]`` data.
    """
    kd, typed = check_key("split", key)
    shape = tuple(num) if isinstance(num, Sequence) else (num,)
    shape = canonical_shape("split", shape, "num")
    unsafe = prng.key_dtype_of(typed).impl_name == "unsafe_rbg"
    return prng.wrap(prng._split_jit(kd, shape, unsafe), typed)


def _fold_in_message(data):
    if isinstance(data, (bool, np.bool_)):
        data = int(data)
    if isinstance(data, int):  # as jnp.uint32(data): out-of-range ints raise, never wrap
        if not 0 <= data < 2**32:
            raise OverflowError(f"fold_in: Python int {data} out of bounds for uint32: `data` "
                                "must be in [0, 2**32)")
        return np.uint32(data)
    if not hasattr(data, "dtype"):
        raise TypeError(f"fold_in: `data` must be an integer, got {type(data).__name__}")
    if not (dtypes.issubdtype(data.dtype, np.integer) or dtypes.is_bool(np.dtype(data.dtype))):
        raise TypeError(f"fold_in: `data` must be an integer, got dtype "
                        f"{np.dtype(data.dtype).name}")
    if isinstance(data, (np.ndarray, np.generic)):
        return np.asarray(data).astype(np.uint32)[()]
    return lax.convert_element_type(data, np.uint32)


def fold_in(key, data):
    """A new key that is a deterministic function of ``key`` and the 32-bit integer ``data``:
    ``threefry(key, (0, data))``."""
    kd, typed = check_key("fold_in", key)
    if np.ndim(data):
        raise TypeError("fold_in accepts a scalar, but was given an array of shape "
                        f"{tuple(np.shape(data))} != (). Use jax.vmap for batching.")
    msg = _fold_in_message(data)
    if isinstance(msg, Tracer) and aval_of(msg).ndim:
        raise TypeError("fold_in accepts a scalar message")
    unsafe = prng.key_dtype_of(typed).impl_name == "unsafe_rbg"
    return prng.wrap(prng._fold_in_jit(kd, msg, unsafe), typed)


def _threefry_2x32_impl(keypair, count):
    shape = tuple(aval_of(count).shape)
    n = int(np.prod(shape))
    flat = shape_ops.reshape(count, (n,))
    if n % 2:
        flat = shape_ops.concatenate([flat, np.zeros((1,), np.uint32)], 0)
    half = (n + 1) // 2
    k1 = shape_ops.broadcast_in_dim(shape_ops.index_in_dim(keypair, 0, 0, False), (half,), ())
    k2 = shape_ops.broadcast_in_dim(shape_ops.index_in_dim(keypair, 1, 0, False), (half,), ())
    y0, y1 = prng.threefry2x32(k1, k2, shape_ops.slice_in_dim(flat, 0, half),
                               shape_ops.slice_in_dim(flat, half, 2 * half))
    out = shape_ops.concatenate([y0, y1], 0)
    return shape_ops.reshape(shape_ops.slice_in_dim(out, 0, n), shape)


_threefry_2x32_jit = jit(_threefry_2x32_impl)


def threefry_2x32(keypair, count):
    """Apply the Threefry-2x32 hash to ``count`` (a ``uint32`` array) under the key
    ``keypair`` (``uint32[2]``): the flattened counts (padded to even length) are split into
    halves that form the two counter words; the result has ``count``'s shape."""
    kd = keypair._base_array if isinstance(keypair, PRNGKeyArray) else keypair
    if isinstance(keypair, (tuple, list)):
        kd = np.array([int(k) for k in keypair], np.uint32)
    for name, x in (("keypair", kd), ("count", count)):
        if getattr(x, "dtype", None) != np.uint32:
            raise TypeError(f"threefry_2x32 requires uint32 arguments, got {name} of dtype "
                            f"{getattr(getattr(x, 'dtype', None), 'name', type(x).__name__)}")
    if tuple(np.shape(kd)) != (2,):
        raise TypeError(f"threefry_2x32: keypair must have shape (2,), got {np.shape(kd)}")
    if int(np.prod(np.shape(count))) == 0:
        return count
    return _threefry_2x32_jit(kd, count)


def clone(key):
    """Clone a key for reuse (the identity outside key-reuse checking)."""
    if not isinstance(key, PRNGKeyArray):
        check_key_data("clone", key)
    return key


__all__ = ["key", "PRNGKey", "key_data", "wrap_key_data", "key_dtype", "key_impl", "split", "fold_in",
           "clone", "threefry_2x32"]
