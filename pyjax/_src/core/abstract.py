"""Abstract values: what tracing knows about an array (shape, dtype, weak type)."""
from __future__ import annotations

import math

import numpy as np

from pyjax._src.core import dtypes


_interned: dict = {}
_INTERNED_MAX = 4096

# XLA computes an array's byte size in int64 and aborts the whole process (a failed
# StatusOr inside its compiler, "overflow in static extent product") on a shape whose size
# overflows it; so such shapes are refused where they are made.
MAX_BYTES = 2**63 - 1


def check_shape(shape, dtype, what="array shape"):
    """Raises for a shape XLA cannot represent: a negative dimension
    (``NegativeDimensionError``, a ValueError and TypeError), or a byte size past int64
    (ValueError naming the shape and its byte size). The rule is NumPy's: the product of the
    nonzero dimensions times the item size must fit in int64. Non-integer dimensions are left
    to the callers' own checks."""
    nbytes = max(np.dtype(dtype).itemsize, 1)
    for d in shape:
        if not isinstance(d, (int, np.integer)):
            return
        d = int(d)
        if d < 0:
            from pyjax._src.core.axes import NegativeDimensionError
            raise NegativeDimensionError(
                f"negative dimensions are not allowed: {what} {tuple(shape)}")
        if d:
            nbytes *= d
    if nbytes > MAX_BYTES:
        raise ValueError(
            f"RESOURCE_EXHAUSTED: {what} {np.dtype(dtype).name}{list(map(int, shape))} needs "
            f"{nbytes} bytes, more than the {MAX_BYTES} (2**63 - 1) bytes an XLA array can "
            "have")


class HasShape:
    """``ndim`` and ``size`` from ``shape``, for the classes that stand for an array."""

    __slots__ = ()

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)


class HoldsAval:
    """Something that stands for a value known only by its abstract value ``aval`` (a Jaxpr
    variable, a symbolic zero, an undefined primal); prints as ``Name(f32[3])``."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self):
        return f"{type(self).__name__}({self.aval.str_short()})"


class ShapedArray(HasShape):
    """The abstract value of an array: its shape, dtype and whether it is weakly typed.

    Immutable and hashable, so it can sit in cache keys.
    """

    __slots__ = ("shape", "dtype", "weak_type", "_hash")

    def __init__(self, shape, dtype, weak_type=False, *, sharding=None):
        self.shape = shape = tuple(shape)
        self.dtype = dtype = np.dtype(dtype)
        self.weak_type = bool(weak_type)
        self._hash = hash((shape, dtype, self.weak_type))
        if sharding is not None:
            _check_unsplit(sharding, shape)
        n = dtype.itemsize  # the common case in one loop; the exact rule in check_shape
        try:
            for d in shape:
                n *= d
        except TypeError:  # a non-numeric dimension: the caller's business
            return
        if not 0 < n <= MAX_BYTES or type(n) is not int:
            check_shape(shape, dtype)

    def __eq__(self, other):
        return (type(other) is ShapedArray and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        return self._hash

    @staticmethod
    def interned(shape, dtype, weak_type=False) -> "ShapedArray":
        """The one shared ShapedArray of these fields: arrays made from host data get the
        same aval object each time, so caches keyed by aval ids (eager ops, jit calls) hit."""
        key = (shape, dtype, weak_type)
        a = _interned.get(key)
        if a is None:
            if len(_interned) >= _INTERNED_MAX:
                _interned.clear()
            a = _interned[key] = ShapedArray(shape, dtype, weak_type)
        return a

    def update(self, shape=None, dtype=None, weak_type=None):
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type)

    @property
    def sharding(self):
        """JAX's sharding of an aval not laid out over a mesh: no dimension split, on the empty
        abstract mesh (`ShardedShapedArray` has the mesh's)."""
        from pyjax._src.core.sharding import AbstractMesh, NamedSharding, PartitionSpec
        return NamedSharding(AbstractMesh((), ()), PartitionSpec(*[None] * len(self.shape)))

    def strip_weak_type(self):
        return self if not self.weak_type else ShapedArray(self.shape, self.dtype, False)

    def to_tangent_aval(self):
        """The aval of this value's tangents (JAX's method, which equinox calls): itself for an
        inexact dtype, float0 of the same shape otherwise (integers, bools, keys)."""
        if dtypes.is_inexact(self.dtype):
            return ShapedArray(self.shape, self.dtype, self.weak_type)
        return ShapedArray(self.shape, dtypes.float0, False)

    def _dims(self):
        return ",".join(map(str, self.shape))

    def str_short(self, short_dtypes=True):
        """The form used in Jaxprs, ``f32[3,4]``; ``float32[3,4]`` with
        ``short_dtypes=False``."""
        name = dtypes.short_name(self.dtype) if short_dtypes else self.dtype.name
        return f"{name}[{self._dims()}]"

    def __str__(self):
        """JAX's ``str(jax.typeof(x))``: ``float32[3]``, ``~float32[]`` when weakly typed."""
        return ("~" if self.weak_type else "") + self.str_short(short_dtypes=False)

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short(short_dtypes=False)}{weak})"


def _check_unsplit(sharding, shape):
    """`ShapedArray(..., sharding=)` takes only a sharding that splits no dimension (what
    `.sharding` of an unsharded aval gives); a split one needs `ShardedShapedArray`."""
    spec = getattr(sharding, "spec", None)
    mesh = getattr(sharding, "mesh", None)
    if spec is None or mesh is None:
        raise TypeError(f"ShapedArray(sharding=...) expects a NamedSharding, got {sharding!r}")
    sizes = dict(zip(mesh.axis_names, mesh.axis_sizes))
    for p in spec:
        for n in () if p is None else ((p,) if isinstance(p, str) else tuple(p)):
            if sizes.get(n, 1) != 1:
                raise NotImplementedError(
                    f"ShapedArray(shape={shape}, sharding={sharding!r}): an aval whose "
                    "dimensions are split over a mesh is not supported here; only unsplit "
                    "shardings are accepted")


def same_type(a: ShapedArray, b: ShapedArray) -> bool:
    """Equal shape and dtype (weak types ignored), the check executables care about."""
    return a.shape == b.shape and a.dtype == b.dtype


class ShapeDtypeStruct(HasShape):
    """A stand-in for an array with only a shape and dtype (``jax.ShapeDtypeStruct``)."""

    __slots__ = ("shape", "dtype", "sharding", "weak_type")

    def __new__(cls, shape, dtype, *, sharding=None, weak_type=False):
        if cls is ShapeDtypeStruct and _is_extended(dtype):
            cls = ExtendedShapeDtypeStruct
        return object.__new__(cls)

    def __init__(self, shape, dtype, *, sharding=None, weak_type=False):
        from pyjax._src.core.axes import canonicalize_shape  # axes -> trace -> abstract
        # operator.index, not int(): a float dimension is refused, not truncated
        self.shape = canonicalize_shape(shape, "shape", "ShapeDtypeStruct",
                                        scalar_ok=False, allow_negative=True)
        if _is_extended(dtype):
            self.dtype = dtype
        else:
            self.dtype = np.dtype(dtype)
            check_shape(self.shape, self.dtype, "ShapeDtypeStruct shape")
        self.sharding = sharding
        self.weak_type = weak_type

    def __eq__(self, other):
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"


def _is_extended(dtype):
    t = getattr(dtype, "type", None)
    return isinstance(t, type) and issubclass(t, dtypes.extended) and not isinstance(
        dtype, np.dtype)


class ExtendedShapeDtypeStruct(ShapeDtypeStruct):
    """What ``ShapeDtypeStruct(shape, key_dtype)`` makes: the spec of a key array (dtype
    ``key<fry>``, ...). The transformations see it as a spec of the key data
    (``random/prng.py`` registers it as a pytree data node)."""

    __slots__ = ()
