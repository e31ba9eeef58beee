"""``jnp.float32`` and friends, dtype queries (``result_type``, ``finfo``, ...) and constants.

The scalar types follow JAX's ``_ScalarMeta``: ``jnp.float32`` is a class with a ``dtype``
attribute, so anything that takes a dtype takes it (``np.dtype(jnp.float32) == float32``), and
calling it makes a strongly typed 0-d (or n-d) array: ``jnp.float32(3)`` is
``Array(3., dtype=float32)``. Pyjax does not define scalar objects; scalars are 0-d arrays.
"""
from __future__ import annotations

import builtins

import numpy as np

from pyjax._src.core import dtypes as _dt
from pyjax._src.core.axes import canonicalize_axes


class _ScalarMeta(type):
    """Metaclass of the ``jnp`` scalar types: callable (makes an array), hashable and equal to
    the NumPy scalar type of the same dtype, usable wherever a dtype is accepted."""

    def __hash__(cls):
        return hash(cls.dtype.type)

    def __eq__(cls, other):
        return cls is other or cls.dtype.type == other

    def __ne__(cls, other):
        return not type(cls).__eq__(cls, other)  # cls.__eq__ would be the instances' method

    def __call__(cls, x):
        from pyjax._src.numpy import creation
        return creation.asarray(x, dtype=cls.dtype)

    def __instancecheck__(cls, instance):
        return isinstance(instance, cls.dtype.type)

    def __repr__(cls):
        return f"<class 'pyjax.numpy.{cls.__name__}'>"


def _make_scalar_type(name, np_dtype):
    np_dtype = np.dtype(np_dtype)
    t = _ScalarMeta(name, (object,), {
        "dtype": np_dtype,
        "__doc__": f"A pyjax scalar type for dtype {np_dtype.name}: ``{name}(x)`` converts "
                   f"``x`` to a strongly typed array of dtype {np_dtype.name} "
                   "(canonicalized for the x64 setting)."})
    t.__module__ = "pyjax.numpy"
    return t


bool_ = _make_scalar_type("bool_", _dt.bool_)
int8 = _make_scalar_type("int8", _dt.int8)
int16 = _make_scalar_type("int16", _dt.int16)
int32 = _make_scalar_type("int32", _dt.int32)
int64 = _make_scalar_type("int64", _dt.int64)
uint8 = _make_scalar_type("uint8", _dt.uint8)
uint16 = _make_scalar_type("uint16", _dt.uint16)
uint32 = _make_scalar_type("uint32", _dt.uint32)
uint64 = _make_scalar_type("uint64", _dt.uint64)
float16 = _make_scalar_type("float16", _dt.float16)
float32 = _make_scalar_type("float32", _dt.float32)
float64 = _make_scalar_type("float64", _dt.float64)
complex64 = _make_scalar_type("complex64", _dt.complex64)
complex128 = _make_scalar_type("complex128", _dt.complex128)



def __getattr__(name):
    """The ml_dtypes scalar types (``bfloat16``, ``float8_*``, ``int4``, ...), made on first
    use: making them imports ml_dtypes (runtime/ml_dtypes_loader.py says why that waits)."""
    if name in _dt.ML_DTYPE_NAMES:
        # setdefault: two threads asking at once still get one class
        return globals().setdefault(name, _make_scalar_type(name, getattr(_dt, name)))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


ML_SCALAR_TYPE_NAMES = _dt.ML_DTYPE_NAMES   # not in __all__: a star import would make them


# NumPy's 64-bit default names (canonicalized to 32 bits when x64 is off, as in JAX).
int_ = int64
uint = uint64
float_ = float64
complex_ = complex128
single, double, half = float32, float64, float16
csingle, cdouble = complex64, complex128
globals()["bool"] = bool_  # ``jnp.bool`` (array API name): this shadows the builtin in this
# module, so the code below says ``builtins.bool``

# NumPy's abstract scalar types, for issubdtype.
generic = np.generic
number = np.number
inexact = np.inexact
floating = np.floating
complexfloating = np.complexfloating
integer = np.integer
signedinteger = np.signedinteger
unsignedinteger = np.unsignedinteger
flexible = np.flexible
character = np.character
object_ = np.object_

class _DtypeMeta(type):
    """``isinstance(d, jnp.dtype)`` / ``issubclass`` answer as for NumPy's dtype class."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, np.dtype)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, np.dtype)


class dtype(metaclass=_DtypeMeta):  # noqa: N801 - NumPy's name
    """``jnp.dtype(x)``: NumPy's ``np.dtype(x)`` (JAX's ``jnp.dtype`` is NumPy's class), that
    also knows ml_dtypes' names (``jnp.dtype('bfloat16')``): JAX imports ml_dtypes at import
    and so registers them with NumPy; pyjax imports it on first use (ml_dtypes_loader)."""

    def __new__(cls, obj, align=False, copy=False):
        if isinstance(obj, str) and obj in _dt.ML_DTYPE_NAMES:
            return np.dtype(getattr(_dt, obj))  # loads ml_dtypes
        return np.dtype(obj, align, copy)

pi = np.pi
e = np.e
inf = np.inf
nan = np.nan
euler_gamma = np.euler_gamma
newaxis = None

TypePromotionError = _dt.TypePromotionError


def _as_dtype_like(x):
    """Scalar types and arrays to np.dtype; other dtype-likes unchanged."""
    if isinstance(x, _ScalarMeta):
        return x.dtype
    if not isinstance(x, (type, str, np.dtype)):
        d = getattr(x, "dtype", None)
        if isinstance(d, np.dtype):
            return d
    return x


def result_type(*args):
    """The dtype of a computation combining ``args`` (arrays, scalars or dtypes) under JAX's
    promotion rules, canonicalized for the x64 setting. Python scalars are weakly typed.
    Key arrays and key dtypes promote only with their own key dtype."""
    keys = [a for a in args if getattr(getattr(a, "dtype", a), "type", None) is _dt.prng_key]
    if keys:
        kdt = getattr(keys[0], "dtype", keys[0])
        for a in args:
            if getattr(a, "dtype", a) != kdt:  # JAX's errors, by what was passed
                if not any(hasattr(k, "dtype") for k in keys):
                    raise TypeError(f"Cannot determine dtype of {kdt}")
                raise ValueError(f"dtype={kdt} is not a valid dtype for JAX type promotion.")
        return kdt
    return _dt.result_type(*args)


def promote_types(a, b):
    """The dtype two dtypes promote to (JAX's lattice; Python ``int``/``float``/``complex``
    are weak). Canonicalized for the x64 setting as JAX's: ``promote_types('uint32',
    'int32')`` is int64 with 64-bit types on and int32 with them off."""
    return _dt.canonicalize_dtype(_dt.promote_types(_as_dtype_like(a), _as_dtype_like(b)))


def finfo(dtype):
    """Machine limits of a floating-point dtype (``bfloat16`` and the float8 types included)."""
    return _dt.finfo(_as_dtype_like(dtype))


def iinfo(int_type):
    """Machine limits of an integer dtype."""
    return _dt.iinfo(_as_dtype_like(int_type))


def issubdtype(arg1, arg2):
    """Like ``np.issubdtype``; knows that bfloat16 and float8 types are floating."""
    return _dt.issubdtype(_as_dtype_like(arg1), _as_dtype_like(arg2))


def isdtype(dtype, kind):
    """Array API ``isdtype``: ``kind`` is a dtype, a kind name ('bool', 'signed integer',
    'unsigned integer', 'integral', 'real floating', 'complex floating', 'numeric') or a
    tuple of those."""
    if isinstance(kind, tuple):
        kind = tuple(_as_dtype_like(k) for k in kind)
    else:
        kind = _as_dtype_like(kind)
    return _dt.isdtype(_as_dtype_like(dtype), kind)


def can_cast(from_, to, casting="safe"):
    """Whether a cast from ``from_`` (a dtype or an array) to ``to`` is allowed under the
    ``casting`` rule (NumPy's rules, on dtypes)."""
    src = _as_dtype_like(from_)
    if isinstance(from_, (builtins.bool, int, float, complex)) and not isinstance(from_, type):
        raise TypeError("can_cast does not support Python scalars; pass a dtype or an array")
    return builtins.bool(np.can_cast(np.dtype(src), np.dtype(_as_dtype_like(to)), casting))


def _dtype_of_value(x):
    if x is None:
        return None
    d = getattr(x, "dtype", None)
    if isinstance(d, np.dtype) or getattr(d, "type", None) is _dt.prng_key:  # key<fry> too
        return d
    if isinstance(x, (builtins.bool, int, float, complex)):
        return _dt.dtype_of(x)
    return np.asarray(x).dtype


def iscomplexobj(x):
    """True when ``x`` has a complex dtype (whatever its values)."""
    d = _dtype_of_value(x)
    return d is not None and _dt.issubdtype(d, np.complexfloating)


def isrealobj(x):
    """True when ``x`` does not have a complex dtype."""
    return not iscomplexobj(x)


def isscalar(element):
    """True for scalars and for zero-dimensional arrays (JAX's convention, unlike NumPy's).

    Python/NumPy numeric scalars, 0-d NumPy arrays and 0-d pyjax arrays are scalars; strings,
    lists and other objects are not.
    """
    if isinstance(element, (builtins.bool, int, float, complex, np.generic)):
        return not isinstance(element, (np.str_, np.bytes_, np.void))
    if hasattr(element, "__jax_array__"):
        element = element.__jax_array__()
    d = getattr(element, "dtype", None)
    shp = getattr(element, "shape", None)
    if isinstance(d, np.dtype) and shp is not None and not isinstance(element, type):
        return len(shp) == 0 and (d.kind in "biufc" or _dt.is_numeric(d))
    return False


def ndim(a):
    """Number of dimensions of ``a`` (arrays, tracers, NumPy values, nested lists)."""
    n = getattr(a, "ndim", None)
    if isinstance(n, int) and not isinstance(a, type):
        return n
    return np.ndim(a)


def shape(a):
    """Shape of ``a`` as a tuple."""
    s = getattr(a, "shape", None)
    if isinstance(s, tuple) and not isinstance(a, type):
        return s
    return np.shape(a)


def size(a, axis=None):
    """Number of elements of ``a``, or along ``axis`` (an int or a tuple of ints)."""
    s = shape(a)
    if axis is None:
        n = 1
        for d in s:
            n *= d
        return n
    n = 1
    for ax in canonicalize_axes(axis, len(s), fun="size"):
        n *= s[ax]
    return n


__all__ = [
    "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
    "int_", "uint", "float_", "complex_", "single", "double", "half", "csingle", "cdouble",
    "bool", "generic", "number", "inexact", "floating", "complexfloating", "integer",
    "signedinteger", "unsignedinteger", "flexible", "character", "object_", "dtype",
    "pi", "e", "inf", "nan", "euler_gamma", "newaxis", "TypePromotionError",
    "result_type", "promote_types", "finfo", "iinfo", "issubdtype", "isdtype", "can_cast",
    "iscomplexobj", "isrealobj", "isscalar", "ndim", "shape", "size", "ComplexWarning",
    "iterable",
]

ComplexWarning = np.exceptions.ComplexWarning  # NumPy's class, as in JAX
iterable = np.iterable
