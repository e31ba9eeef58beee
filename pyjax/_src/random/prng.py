"""Threefry-2x32 and PRNG key arrays.

The counter-based Threefry-2x32 block cipher (Salmon et al., "Parallel random numbers: as easy
as 1, 2, 3", SC 2011; 20 rounds, rotations 13 15 26 6 / 17 29 16 24, key-schedule parity
constant 0x1BD11BDA) is written with pyjax's own ``uint32`` lax ops, so it runs eagerly, under
``jit`` and under every transformation that knows those ops.

Keys follow JAX's default ``jax_threefry_partitionable=True`` mode (``False`` gives JAX's
original stream, ``_threefry_halves``): for an output of shape ``S``
the cipher encrypts the 64-bit row-major index of every element, split into ``(hi, lo)``
words, so

* ``split(key, S)[i] == threefry(key, (0, i))`` (both output words form the new key),
* ``bits(key, S)[i] == w0 ^ w1`` where ``(w0, w1) = threefry(key, (0, i))``,
* ``fold_in(key, d) == threefry(key, (0, d))``.

Every helper here takes raw key data ``uint32[*batch, 2]`` and maps over the batch dimensions,
the way JAX's key primitives iterate ``vmap`` over key arrays.

A typed key array (``random.key``) is ``PRNGKeyArray``: a pytree leaf to users, as in JAX, and
a pytree data node over its ``uint32[..., 2]`` key data to the transformations
(``pytree.register_data_node``), so ``jit``, ``vmap`` and loop carries move it like any array,
while arithmetic on it is refused.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from pyjax._src.core import axes as axes_mod
from pyjax._src.core import dtypes
from pyjax._src.core import pytree
from pyjax._src.core import trace as trace_mod
from pyjax._src.core.config import config
from pyjax._src.dispatch import cache as cache_mod
from pyjax._src.core.abstract import (ExtendedShapeDtypeStruct, HasShape, ShapeDtypeStruct,
                                       ShapedArray)
from pyjax._src.core.array import Array, ArrayImpl
from pyjax._src.core.trace import Tracer
from pyjax._src.transformations.jit import jit
from pyjax._src.lax import elementwise as lax
from pyjax._src.lax import shape_ops
from pyjax._src.lax.barrier import optimization_barrier
from pyjax._src.lax.base import aval_of

UINT_DTYPES = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32),
               64: np.dtype(np.uint64)}
_U32 = np.dtype(np.uint32)
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = np.uint32(0x1BD11BDA)

KEY_DESCRIPTION = ("a PRNG key is a typed key array made by random.key(seed) (dtype key<fry>), or "
                   "a legacy raw key made by random.PRNGKey(seed): a uint32 array whose last "
                   "dimension has size 2 (4 for the rbg implementations)")


# ---------------------------------------------------------------------------------------
# Threefry-2x32 on uint32 arrays
# ---------------------------------------------------------------------------------------

def _rotate_left(x, r):
    return lax.bitwise_or(lax.shift_left(x, np.uint32(r)),
                          lax.shift_right_logical(x, np.uint32(32 - r)))


def threefry2x32(k1, k2, x0, x1):
    """Encrypt the counter words ``(x0, x1)`` under the key ``(k1, k2)``: 20 rounds.

    All four operands are ``uint32`` arrays of one shape; returns the two cipher words.
    """
    ks = (k1, k2, lax.bitwise_xor(lax.bitwise_xor(k1, k2), _PARITY))
    x0 = lax.add(x0, ks[0])
    x1 = lax.add(x1, ks[1])
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x0 = lax.add(x0, x1)
            x1 = lax.bitwise_xor(x0, _rotate_left(x1, r))
        # key injection after every fourth round
        x0 = lax.add(x0, ks[(i + 1) % 3])
        x1 = lax.add(lax.add(x1, ks[(i + 2) % 3]), np.uint32(i + 1))
    return x0, x1


def _full_u32(value, shape):
    return shape_ops.full(shape, np.uint32(value), _U32)


def iota_2x32(shape, batch_ndim=0, hi_word=0):
    """The 64-bit row-major index of every element of ``shape[batch_ndim:]``, as two
    ``uint32`` words ``(hi, lo)`` broadcast over ``shape`` (plus ``hi_word * 2**32``)."""
    counted = shape[batch_ndim:]
    size = math.prod(counted)
    if size > 2 ** 32:
        raise NotImplementedError(
            f"pyjax.random draws at most 2**32 values per key in one call, got shape {counted}")
    lo = None
    stride = 1
    for d in range(len(shape) - 1, batch_ndim - 1, -1):
        term = shape_ops.broadcasted_iota(_U32, shape, d)
        if stride != 1:
            term = lax.mul(term, np.uint32(stride))
        lo = term if lo is None else lax.add(lo, term)
        stride *= shape[d]
    if lo is None:
        lo = _full_u32(0, shape)
    return _full_u32(hi_word, shape), lo


def _key_words(kd, shape):
    """The two words of key data ``uint32[*batch, 2]``, broadcast to ``shape`` (which starts
    with the batch shape)."""
    batch = tuple(aval_of(kd).shape[:-1])
    words = []
    for w in range(2):
        k = shape_ops.squeeze(shape_ops.slice_in_dim(kd, w, w + 1, axis=len(batch)),
                              (len(batch),))
        if tuple(shape) != batch:
            k = shape_ops.broadcast_in_dim(k, tuple(shape), tuple(range(len(batch))))
        words.append(k)
    return words


def _stack_last(a, b):
    nd = aval_of(a).ndim
    return shape_ops.concatenate([shape_ops.expand_dims(a, (nd,)),
                                  shape_ops.expand_dims(b, (nd,))], nd)


def _hash_counts(kd, shape, hi_word=0):
    """Threefry of the row-major counters of ``shape`` under each key of ``kd``:
    two ``uint32[*batch, *shape]`` arrays. ``hi_word`` > 0 selects a counter range that no
    draw of fewer than 2**32 values per key reaches (an independent stream)."""
    batch = tuple(aval_of(kd).shape[:-1])
    full = batch + tuple(shape)
    k1, k2 = _key_words(kd, full)
    hi, lo = iota_2x32(full, len(batch), hi_word)
    return threefry2x32(k1, k2, hi, lo)


def materialize(x):
    """``x`` unchanged, but computed once: behind an optimization barrier XLA keeps ``x`` in
    memory instead of inlining the computation that made it into every consumer. Without
    this, a split key feeding a large draw recomputes the split's cipher for every element
    drawn (slower to run and much slower to compile)."""
    return optimization_barrier(x)


def _threefry_halves(kd, n):
    """JAX's original (``jax_threefry_partitionable=False``) stream: the counts ``0..n-1``
    (padded to even length) split into halves that form the two counter words, the cipher
    words concatenated back: ``uint32[*batch, n]``."""
    batch = tuple(aval_of(kd).shape[:-1])
    half = (n + 1) // 2
    full = batch + (half,)
    k1, k2 = _key_words(kd, full)
    x0 = shape_ops.broadcasted_iota(_U32, full, len(batch))
    x1 = lax.add(x0, np.uint32(half))
    if n % 2:  # the padding count is 0, as JAX pads
        x1 = lax.select(lax.lt(x1, np.uint32(n)), x1, _full_u32(0, full))
    y0, y1 = threefry2x32(k1, k2, x0, x1)
    out = shape_ops.concatenate([y0, y1], len(batch))
    return shape_ops.slice_in_dim(out, 0, n, axis=len(batch)) if n % 2 else out


def partitionable():
    return config.jax_threefry_partitionable


def _is_rbg(kd):
    return aval_of(kd).shape[-1] == 4   # rbg / unsafe_rbg key data (random/rbg.py)


def split_data(kd, shape, unsafe=False):
    """``uint32[*batch, 2]`` keys -> ``uint32[*batch, *shape, 2]`` new keys (``[..., 4]``: rbg
    keys, split as ``unsafe_rbg`` when ``unsafe``)."""
    if _is_rbg(kd):
        from pyjax._src.random import rbg
        return rbg.split_data(kd, tuple(shape), unsafe)
    batch = tuple(aval_of(kd).shape[:-1])
    if math.prod(shape) == 0:
        return _full_u32(0, batch + tuple(shape) + (2,))
    if not partitionable():
        words = _threefry_halves(kd, 2 * math.prod(shape))
        return materialize(shape_ops.reshape(words, batch + tuple(shape) + (2,)))
    b1, b2 = _hash_counts(kd, shape)
    return materialize(_stack_last(b1, b2))


def _random_bits_original(kd, bit_width, shape):
    """JAX's non-partitionable bits: ``ceil(bit_width * size / 32)`` words of the original
    stream; 64-bit values take their high words from the first half and their low words
    from the second, 8- and 16-bit values are the words' pieces, low bits first."""
    batch = tuple(aval_of(kd).shape[:-1])
    nb = len(batch)
    dtype = UINT_DTYPES[bit_width]
    size = math.prod(shape)
    max_count = -(-bit_width * size // 32)
    if max_count >= np.iinfo(np.uint32).max:
        raise NotImplementedError("pyjax.random draws fewer than 2**32 words per key in one "
                                  "call with jax_threefry_partitionable=False")
    bits = _threefry_halves(kd, max_count)
    if bit_width == 64:
        hi = lax.convert_element_type(shape_ops.slice_in_dim(bits, 0, size, axis=nb), dtype)
        lo = lax.convert_element_type(shape_ops.slice_in_dim(bits, size, 2 * size, axis=nb),
                                      dtype)
        bits = lax.bitwise_or(lax.shift_left(hi, dtype.type(32)), lo)
    elif bit_width in (8, 16):
        per = 32 // bit_width
        wide = batch + (max_count, per)
        words = shape_ops.broadcast_in_dim(bits, wide, tuple(range(nb + 1)))
        shifts = lax.mul(shape_ops.broadcasted_iota(_U32, wide, nb + 1), np.uint32(bit_width))
        pieces = lax.bitwise_and(lax.shift_right_logical(words, shifts),
                                 np.uint32(np.iinfo(dtype).max))
        pieces = shape_ops.reshape(pieces, batch + (max_count * per,))
        bits = lax.convert_element_type(shape_ops.slice_in_dim(pieces, 0, size, axis=nb),
                                        dtype)
    return shape_ops.reshape(bits, batch + tuple(shape))


def random_bits_data(kd, bit_width, shape):
    """``uint<bit_width>[*batch, *shape]`` uniformly random bits under each key of ``kd``."""
    if _is_rbg(kd):
        from pyjax._src.random import rbg
        return rbg.random_bits_data(kd, bit_width, tuple(shape))
    dtype = UINT_DTYPES[bit_width]
    full = tuple(aval_of(kd).shape[:-1]) + tuple(shape)
    if math.prod(full) == 0:
        return shape_ops.full(full, dtype.type(0), dtype)
    if not partitionable():
        return _random_bits_original(kd, bit_width, shape)
    b1, b2 = _hash_counts(kd, shape)
    if bit_width == 64:
        hi = lax.convert_element_type(b1, dtype)
        lo = lax.convert_element_type(b2, dtype)
        return lax.bitwise_or(lax.shift_left(hi, dtype.type(32)), lo)
    bits = lax.bitwise_xor(b1, b2)
    if bit_width != 32:
        bits = lax.convert_element_type(bits, dtype)
    return bits


def fold_in_data(kd, data, unsafe=False):
    """Fold the ``uint32`` message ``data`` (shape = the key batch shape, or scalar) into
    each key: ``threefry(key, (0, data))`` (rbg keys: see random/rbg.py)."""
    if _is_rbg(kd):
        from pyjax._src.random import rbg
        return rbg.fold_in_data(kd, data, unsafe)
    batch = tuple(aval_of(kd).shape[:-1])
    k1, k2 = _key_words(kd, batch)
    if tuple(aval_of(data).shape) != batch:
        data = shape_ops.broadcast_in_dim(data, batch, ())
    y0, y1 = threefry2x32(k1, k2, _full_u32(0, batch), data)
    return materialize(_stack_last(y0, y1))


def seed_data(seed):
    """Key data ``uint32[*seed.shape, 2]`` for an integer seed array: the high and low 32-bit
    words of the seed (the high word is 0 for seeds of 32 bits or fewer)."""
    av = aval_of(seed)
    if av.dtype.itemsize == 8:
        hi = lax.convert_element_type(
            lax.shift_right_logical(seed, av.dtype.type(32)), _U32)
    else:
        hi = _full_u32(0, av.shape)
    lo = lax.convert_element_type(seed, _U32)
    return _stack_last(hi, lo)


# jitted entry points: eager calls compile once per signature
_split_jit = jit(split_data, static_argnums=(1, 2))
_fold_in_jit = jit(fold_in_data, static_argnums=(2,))
_bits_jit = jit(random_bits_data, static_argnums=(1, 2))
_seed_jit = jit(seed_data)


# ---------------------------------------------------------------------------------------
# Key arrays
# ---------------------------------------------------------------------------------------

class KeyTy:
    """The dtype of typed key arrays of one PRNG implementation: ``key<fry>`` (threefry2x32,
    ``uint32[..., 2]`` key data), ``key<rbg>`` and ``key<urbg>`` (rbg, unsafe_rbg:
    ``uint32[..., 4]``)."""

    __slots__ = ("impl_name", "tag", "name", "key_shape", "itemsize")
    kind = "V"
    type = dtypes.prng_key  # so that issubdtype(key.dtype, dtypes.prng_key) holds, as in JAX

    def __init__(self, impl_name, tag, width):
        self.impl_name, self.tag, self.name = impl_name, tag, f"key<{tag}>"
        self.key_shape, self.itemsize = (width,), 4 * width

    @property
    def width(self):
        return self.key_shape[0]

    def __repr__(self):
        return self.name

    __str__ = __repr__

    def __eq__(self, other):
        return type(other) is KeyTy and other.impl_name == self.impl_name

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(("KeyTy", self.tag))


KEY_DTYPES = {"threefry2x32": KeyTy("threefry2x32", "fry", 2), "rbg": KeyTy("rbg", "rbg", 4),
              "unsafe_rbg": KeyTy("unsafe_rbg", "urbg", 4)}
KEY_DTYPE = KEY_DTYPES["threefry2x32"]


class KeyShapedArray(ShapedArray):
    """The abstract value of a key array, what `jax.typeof(keys)` gives: shape and dtype
    `key<fry>`, `key<rbg>`, ... (JAX's `ShapedArray((), key<fry>)`). Only `typeof` makes it:
    traced key arrays carry their `uint32[..., 2|4]` key data, whose avals are ordinary
    ShapedArrays."""

    __slots__ = ()

    def __init__(self, shape, dtype=KEY_DTYPE):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.weak_type = False
        self._hash = hash((self.shape, str(dtype)))

    def __eq__(self, other):
        return (type(other) is KeyShapedArray and self.shape == other.shape
                and self.dtype == other.dtype)

    __hash__ = ShapedArray.__hash__

    def update(self, shape=None, dtype=None, weak_type=None):
        if dtype not in (None, self.dtype) or weak_type:
            raise TypeError(f"the abstract value of a key array keeps dtype {self.dtype}")
        return KeyShapedArray(self.shape if shape is None else shape, self.dtype)

    def str_short(self, short_dtypes=True):
        return f"{self.dtype}[{','.join(map(str, self.shape))}]"

    __str__ = str_short


def default_key_dtype():
    """The key dtype of ``jax_default_prng_impl`` (what raw keys and ``key(seed)`` use)."""
    return KEY_DTYPES[config.jax_default_prng_impl]


def _arithmetic_error(*args):
    dt = next((a.dtype for a in args if isinstance(a, PRNGKeyArray)), KEY_DTYPE)
    raise TypeError(
        f"key arrays (dtype {dt}) hold PRNG keys, not numbers: they cannot be used in "
        "arithmetic or converted to numeric arrays. Use random.key_data(keys) for the raw "
        "uint32 key data.")


def _base_shape(base):
    return tuple(base.shape)


class PRNGKeyArray(Array, HasShape):
    """An array of PRNG keys (dtype ``key<fry>``, ``key<rbg>`` or ``key<urbg>``) over
    ``uint32[*shape, 2]`` (threefry) or ``uint32[*shape, 4]`` (rbg) key data.

    Behaves like an array whose elements are keys: it has ``shape``, ``ndim``, ``size`` and
    ``dtype``, and can be indexed, reshaped and transposed, but refuses arithmetic.
    """

    __slots__ = ("_base_array", "_dtype")
    __array_priority__ = 100
    __hash__ = None
    _pyjax_key_array = True  # jnp functions that take key arrays test this (numpy/key_arrays.py)

    def __init__(self, key_data, dtype=None):
        dtype = default_key_dtype() if dtype is None else dtype
        check_key_data("wrap_key_data", key_data, dtype)
        if isinstance(key_data, np.ndarray):
            from pyjax._src.dispatch import eager as dispatch
            key_data = dispatch.to_array(np.asarray(key_data, _U32))
        self._base_array = key_data
        self._dtype = dtype

    @classmethod
    def _wrap(cls, base, dtype=KEY_DTYPE):
        obj = object.__new__(cls)
        obj._base_array = base
        obj._dtype = dtype
        return obj

    def _rewrap(self, base):
        return PRNGKeyArray._wrap(base, self._dtype)

    # -- metadata --
    @property
    def shape(self):
        return _base_shape(self._base_array)[:-1]

    @property
    def dtype(self):
        return self._dtype

    @property
    def itemsize(self):
        return self._dtype.itemsize

    @property
    def nbytes(self):
        return self.size * self._dtype.itemsize

    @property
    def device(self):
        return self._base_array.device

    def devices(self):
        return self._base_array.devices()

    @property
    def sharding(self):
        return self._base_array.sharding

    @property
    def committed(self):
        return self._base_array.committed

    def block_until_ready(self):
        self._base_array.block_until_ready()
        return self

    def is_deleted(self):
        return self._base_array.is_deleted()

    def delete(self):
        self._base_array.delete()

    def copy(self):
        return self._rewrap(self._base_array)

    __copy__ = copy

    def __deepcopy__(self, memo):
        return self._rewrap(self._base_array)

    # -- printing --
    def __repr__(self):
        base = self._base_array
        if isinstance(base, Tracer):
            return f"Traced<{self._dtype.name}[{','.join(map(str, self.shape))}]> overlaying {base!r}"
        if not isinstance(base, (ArrayImpl, np.ndarray)):  # e.g. eval_shape's output
            return f"ShapeDtypeStruct(shape={self.shape}, dtype={self._dtype.name})"
        return f"Array({self.shape}, dtype={self._dtype.name}) overlaying:\n{np.asarray(base)}"

    __str__ = __repr__

    # -- no numeric use --
    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            f"a key array (dtype {self._dtype}) cannot be converted to a NumPy array. Use "
            "random.key_data(keys) for the raw uint32 key data.")

    def __bool__(self):
        raise TypeError(f"the truth value of a key array (dtype {self._dtype}) is undefined")

    __int__ = __float__ = __complex__ = __index__ = _arithmetic_error

    # -- sequence protocol --
    def __len__(self):
        return self._leading_dim("len() of unsized object (a scalar key array)")

    def __iter__(self):
        return (self[i] for i in range(self._leading_dim("iteration over a 0-d key array")))

    def _leading_dim(self, scalar_error):
        if not self.shape:
            raise TypeError(scalar_error)
        return self.shape[0]

    def _data_index(self, idx):
        """The index of the key data that ``idx`` (an index of the keys) selects: every key
        dimension spelled out, the key data's own dimension taken whole."""
        if not isinstance(idx, tuple):
            idx = (idx,)
        if any(i is Ellipsis for i in idx):
            k = [j for j, i in enumerate(idx) if i is Ellipsis][0]
            used = sum(1 for i in idx if i is not None and i is not Ellipsis)
            idx = idx[:k] + (slice(None),) * (self.ndim - used) + idx[k + 1:]
        # a boolean mask covers as many dimensions as it has
        used = sum(np.ndim(i) if getattr(i, "dtype", None) == np.bool_ else 1
                   for i in idx if i is not None)
        if used > self.ndim:
            raise IndexError(f"too many indices for a key array: array is {self.ndim}-"
                             f"dimensional, but {used} were indexed")
        return idx + (slice(None),) * (self.ndim - used + len(self._dtype.key_shape))

    def __getitem__(self, idx):
        return self._rewrap(self._base_array[self._data_index(idx)])

    @property
    def at(self):
        """``keys.at[idx].get()`` / ``.set(keys)``, as JAX allows on key arrays."""
        return _KeyIndexUpdateHelper(self)

    # -- shape manipulation --
    def reshape(self, *shape, order="C"):
        if order != "C":
            raise NotImplementedError(f"key array reshape with order={order!r}: only 'C'")
        if len(shape) == 1:
            shape = shape[0]
        try:
            shape = axes_mod.reshape_shape(self.shape, shape)
        except TypeError as e:  # a size mismatch is a ValueError for key arrays
            if not str(e).startswith("cannot reshape"):
                raise
            raise ValueError(f"cannot reshape a key array of shape {self.shape} (size "
                             f"{self.size}) into shape {shape}") from None
        return self._rewrap(shape_ops.reshape(self._base_array, shape + self._dtype.key_shape))

    def ravel(self, order="C"):
        return self.reshape(self.size, order=order)

    flatten = ravel

    def _axis(self, axis):
        return axes_mod.canonicalize_axis(axis, self.ndim, fun="key array")

    def squeeze(self, axis=None):
        if axis is None:
            axes = tuple(i for i, d in enumerate(self.shape) if d == 1)
        else:
            axes = tuple(self._axis(a) for a in (axis if isinstance(axis, (tuple, list))
                                                  else (axis,)))
        return self._rewrap(shape_ops.squeeze(self._base_array, axes))

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        if not axes or axes == (None,):
            axes = tuple(range(self.ndim))[::-1]
        perm = tuple(self._axis(a) for a in axes) + (self.ndim,)
        return self._rewrap(shape_ops.transpose(self._base_array, perm))

    @property
    def T(self):  # noqa: N802 - NumPy's name
        return self.transpose()

    def swapaxes(self, axis1, axis2):
        perm = list(range(self.ndim))
        a, b = self._axis(axis1), self._axis(axis2)
        perm[a], perm[b] = perm[b], perm[a]
        return self.transpose(perm)

    def take(self, indices, axis=None, mode=None, fill_value=None):
        from pyjax._src.numpy import key_arrays
        return key_arrays.take(self, indices, axis, mode, fill_value)

    # -- comparisons: keys are equal when their key data are (lax/key_ops.compare) --
    def __eq__(self, other):
        return _keys_compare("equal", self, other)

    def __ne__(self, other):
        return _keys_compare("not_equal", self, other)

    __lt__ = __le__ = __gt__ = __ge__ = _arithmetic_error


class _KeyIndexUpdateHelper:
    __slots__ = ("keys",)

    def __init__(self, keys):
        self.keys = keys

    def __getitem__(self, idx):
        return _KeyIndexUpdateRef(self.keys, idx)


class _KeyIndexUpdateRef:
    """``keys.at[idx]``: ``get`` and ``set`` move key data; the arithmetic updates refuse."""

    __slots__ = ("keys", "index")

    def __init__(self, keys, index):
        self.keys, self.index = keys, index

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
            fill_value=None):
        if fill_value is not None:  # JAX 0.10.2 fails here too (an unhashable key)
            raise TypeError(f"keys.at[...].get: fill_value is not supported for key arrays "
                            f"(dtype {self.keys.dtype}), got {fill_value!r}")
        data = self.keys._base_array.at[self.keys._data_index(self.index)].get(
            indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode)
        return self.keys._rewrap(data)

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        keys = self.keys
        if not isinstance(values, PRNGKeyArray) or values.dtype != keys.dtype:
            got = values.dtype if hasattr(values, "dtype") else type(values).__name__
            raise TypeError(f"keys.at[...].set: a key array of dtype {keys.dtype} takes key "
                            f"values of the same dtype, got {got}")
        data = keys._base_array.at[keys._data_index(self.index)].set(
            values._base_array, indices_are_sorted=indices_are_sorted,
            unique_indices=unique_indices, mode=mode)
        return keys._rewrap(data)

    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``func`` (key -> key) on each selected key. JAX 0.10.2 accepts only the identity
        here (any other ``func`` fails to lower there); pyjax applies ``func`` to every
        selected key, refusing an array index it cannot prove free of repeats (where
        JAX's numeric ``apply`` would apply ``func`` once per occurrence)."""
        if not callable(func):
            raise TypeError(f"keys.at[...].apply: func must be callable, got {func!r}")
        self._check_no_repeats(unique_indices)
        selected = self.get(indices_are_sorted=indices_are_sorted, unique_indices=True,
                            mode=mode)
        from pyjax._src.transformations.vmap import vmap
        flat = selected.reshape(-1)
        new = vmap(func)(flat)
        if not isinstance(new, PRNGKeyArray) or new.dtype != selected.dtype \
                or new.shape != flat.shape:
            got = getattr(new, "dtype", type(new).__name__)
            raise TypeError(f"keys.at[...].apply: func must map a key of dtype "
                            f"{selected.dtype} to one key of the same dtype, got {got}")
        return self.set(new.reshape(selected.shape), indices_are_sorted=indices_are_sorted,
                        unique_indices=True, mode=mode)

    def _check_no_repeats(self, unique_indices):
        idx = self.index if isinstance(self.index, tuple) else (self.index,)
        dims = [i for i in idx if i is not None]
        sizes = ((None,) * len(dims) if any(i is Ellipsis for i in dims) else self.keys.shape)
        for i, size in zip(dims, sizes):
            if i is Ellipsis or isinstance(i, (int, np.integer, slice)):
                continue
            if getattr(i, "dtype", None) == np.bool_ or unique_indices:
                continue
            try:
                values = np.asarray(i)
            except Exception:   # noqa: BLE001 - a traced index
                raise NotImplementedError(
                    "keys.at[...].apply with a traced array index needs unique_indices=True "
                    "(repeated indices would apply func once per occurrence)") from None
            if size is not None:
                values = np.where(values < 0, values + size, values)
            if values.ndim and np.unique(values.ravel()).size != values.size:
                raise NotImplementedError(
                    f"keys.at[...].apply with repeated indices {values.tolist()}: func would "
                    "be applied once per occurrence")

    def _no_arithmetic(self, *args, **kwargs):
        # JAX 0.10.2: TypeError "Cannot interpret 'key<fry>' as a data type"
        raise TypeError(f"key arrays (dtype {self.keys.dtype}) support only .at[...].get(), "
                        ".set(keys) and .apply(func): they hold PRNG keys, not numbers")

    add = subtract = multiply = mul = divide = power = min = max = _no_arithmetic


def _keys_compare(name, a, b):
    if not isinstance(b, PRNGKeyArray) or b.dtype != a.dtype:
        other = b.dtype if isinstance(b, PRNGKeyArray) else dtypes.result_type(b)
        raise TypeError(f"{name} does not accept dtypes {a.dtype}, {other}.")
    from pyjax._src.numpy import ufuncs
    return getattr(ufuncs, name)(a, b)


for _op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "divmod", "pow", "matmul",
            "and", "or", "xor", "lshift", "rshift"):
    setattr(PRNGKeyArray, f"__{_op}__", _arithmetic_error)
    setattr(PRNGKeyArray, f"__r{_op}__", _arithmetic_error)
for _op in ("neg", "pos", "abs", "invert"):
    setattr(PRNGKeyArray, f"__{_op}__", _arithmetic_error)


def _keys_flatten(k):
    return (k._base_array,), k._dtype


def _keys_unflatten(dtype, children):
    return PRNGKeyArray._wrap(children[0], dtype)


# A leaf to users (jax.tree_util, as in JAX); a node over its key data to the
# transformations, which so move key arrays like any array (core/pytree.py, "two views").
pytree.register_data_node(PRNGKeyArray, _keys_flatten, _keys_unflatten,
                          lambda dtype: dtype.key_shape)


def _key_spec_flatten(spec):
    return (ShapeDtypeStruct(spec.shape + spec.dtype.key_shape, _U32),), spec.dtype


# ShapeDtypeStruct(shape, key<fry>) (eval_shape, jit(...).trace): a spec of the key data to
# the transformations, a key array again inside the traced function
pytree.register_data_node(ExtendedShapeDtypeStruct, _key_spec_flatten, _keys_unflatten,
                          lambda dtype: dtype.key_shape)
# Any primitive handed a key array refuses it with a message that says what to do.
trace_mod.aval_handlers[PRNGKeyArray] = _arithmetic_error


def where_keys(condition, x, y):
    """``jnp.where(condition, x, y)`` of key arrays (as JAX allows): the key data selected,
    ``condition`` and both key arrays broadcast together (``condition`` already boolean)."""
    if not (isinstance(x, PRNGKeyArray) and isinstance(y, PRNGKeyArray)) or x.dtype != y.dtype:
        key_dtype = x.dtype if isinstance(x, PRNGKeyArray) else y.dtype
        raise ValueError(f"dtype={key_dtype} is not a valid dtype for JAX type promotion.")
    cond_shape = tuple(aval_of(condition).shape)
    shape = tuple(np.broadcast_shapes(cond_shape, x.shape, y.shape))
    full = shape + x.dtype.key_shape

    def widen(v, nd, trailing):  # ``v``'s nd own dims right-aligned in ``shape``
        dims = tuple(range(len(shape) - nd, len(shape) + trailing))
        return shape_ops.broadcast_in_dim(v, full, dims[:nd + trailing] if trailing else
                                          dims[:nd])

    c = widen(condition, len(cond_shape), 0)
    return PRNGKeyArray._wrap(lax.select(c, widen(x._base_array, x.ndim, 1),
                                         widen(y._base_array, y.ndim, 1)), x.dtype)


def _is_arraylike(x):
    return isinstance(x, (ArrayImpl, Tracer, np.ndarray, np.generic))


def check_key_data(name, data, dtype=None):
    """Raise TypeError unless ``data`` looks like raw key data of the key dtype ``dtype``
    (default: ``jax_default_prng_impl``'s): ``uint32[..., 2]`` for threefry, ``[..., 4]``
    for rbg."""
    dtype = default_key_dtype() if dtype is None else dtype
    if not _is_arraylike(data) and not hasattr(data, "shape"):
        raise TypeError(f"{name}: expected a PRNG key, got a value of type "
                        f"{type(data).__name__}; {KEY_DESCRIPTION}.")
    shape, dt = tuple(np.shape(data)), getattr(data, "dtype", None)
    if dt != _U32 or not shape or shape[-1] != dtype.width:
        what = f"{getattr(dt, 'name', dt)}{list(shape)}"
        raise TypeError(f"{name}: expected a PRNG key, got an array of {what}; "
                        f"{KEY_DESCRIPTION} (the {dtype.impl_name} implementation's key data "
                        f"is uint32[..., {dtype.width}]).")


_LEGACY_KEY_MESSAGE = (
    "Legacy uint32 key array passed as key to jax.random function. Please create keys using "
    "jax.random.key(). If use of a raw key array was intended, set "
    'jax_legacy_prng_key="allow".')


def _legacy_key_used():
    """``jax_legacy_prng_key``: 'warn' or 'error' on a raw key, as JAX."""
    if config.jax_legacy_prng_key == "error":
        raise ValueError(_LEGACY_KEY_MESSAGE)
    warnings.warn(_LEGACY_KEY_MESSAGE, stacklevel=4)


def check_key(name, key, allow_batched=False):
    """``(key_data, typed)`` for a key argument: typed key arrays and legacy raw keys are
    accepted, anything else raises TypeError saying what a key is."""
    if isinstance(key, PRNGKeyArray):
        kd, typed = key._base_array, key._dtype
    else:
        check_key_data(name, key)
        kd, typed = key, False
        if config.jax_legacy_prng_key != "allow":
            _legacy_key_used()
        if isinstance(kd, (np.ndarray, np.generic)):
            from pyjax._src.dispatch import eager as dispatch
            kd = dispatch.to_array(np.asarray(kd, _U32))
    if not allow_batched and len(np.shape(kd)) != 1:
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{tuple(np.shape(kd))[:-1]} != (). Use jax.vmap for batching.")
    return kd, typed


def wrap(kd, typed):
    """Typed keys again (``typed``: the key dtype check_key returned) or raw data (False)."""
    return PRNGKeyArray._wrap(kd, typed) if typed else kd


def key_dtype_of(typed):
    """The key dtype for ``check_key``'s second result: its own, or the default's (raw)."""
    return typed if typed else default_key_dtype()


# ---------------------------------------------------------------------------------------
# Seeds
# ---------------------------------------------------------------------------------------

def _python_int_seed(seed):
    """Key data for a Python int seed, the way JAX reads it: as an int64 (OverflowError
    outside that range), whose high word is kept only when x64 is enabled."""
    if not -(2 ** 63) <= seed < 2 ** 63:
        raise OverflowError(f"Python int {seed} too large to convert to int64: a PRNG seed "
                            "must fit in 64 signed bits")
    hi = (seed >> 32) & 0xFFFFFFFF if dtypes.x64_enabled() else 0
    return np.array([hi, seed & 0xFFFFFFFF], _U32)


def key_data_from_seed(name, seed):
    """Raw key data ``uint32[2]`` for a scalar integer seed (Python int or integer array)."""
    if isinstance(seed, PRNGKeyArray):
        raise TypeError(f"{name} accepts a scalar seed, but was given a PRNG key.")
    if isinstance(seed, (bool, np.bool_)):
        raise TypeError(f"{name}: PRNG key seed must be an integer, got {seed!r}")
    if isinstance(seed, int):
        from pyjax._src.dispatch import eager as dispatch
        return dispatch.to_array(_python_int_seed(int(seed)))
    if not _is_arraylike(seed):
        raise TypeError(f"{name}: PRNG key seed must be an integer, got a value of type "
                        f"{type(seed).__name__}")
    if np.ndim(seed):
        raise TypeError(f"{name} accepts a scalar seed, but was given an array of shape "
                        f"{tuple(np.shape(seed))} != (). Use jax.vmap for batching")
    dt = getattr(seed, "dtype", None)
    if dt is None or not dtypes.issubdtype(dt, np.integer):
        raise TypeError(f"{name}: PRNG key seed must be an integer, got "
                        f"{getattr(dt, 'name', dt)} seed {seed!r}")
    if isinstance(seed, (np.ndarray, np.generic)):
        value = int(seed)
        # the high word exists only for 64-bit seeds (x32 canonicalizes them to 32 bits)
        wide = np.dtype(dt).itemsize == 8 and dtypes.x64_enabled()
        hi = (value >> 32) & 0xFFFFFFFF if wide else 0
        from pyjax._src.dispatch import eager as dispatch
        return dispatch.to_array(np.array([hi, value & 0xFFFFFFFF], _U32))
    return _seed_jit(seed)


__all__ = ["PRNGKeyArray", "KeyTy", "KEY_DTYPE", "threefry2x32", "split_data",
           "random_bits_data", "fold_in_data", "seed_data", "check_key", "check_key_data",
           "key_data_from_seed", "wrap", "UINT_DTYPES"]


# the flag changes what the samplers trace to: cached traces and executables no longer hold
config.on_change("jax_threefry_partitionable", lambda _: cache_mod.clear_all())
