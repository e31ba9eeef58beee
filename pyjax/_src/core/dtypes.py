"""Dtypes, x64 canonicalization and JAX's type promotion lattice (with weak types).

Facts this module implements (see JAX's "Type promotion semantics" page):

* Promotion of two types is their join on the lattice::

      b1 -> i*;  i* -> u8, i8 (and the 2/4-bit ints);  u8 -> u16, i16;  u16 -> u32, i32;
      u32 -> u64, i64;  u64 -> f*;  i8 -> i16 -> i32 -> i64 -> f*;
      f* -> c*, f16, bf16 (and the float8/float4 types);  f16 -> f32;  bf16 -> f32;
      f32 -> f64, c64;  f64 -> c128;  c* -> c64 -> c128

  where ``i*``, ``f*``, ``c*`` stand for Python scalars / weakly-typed values. The
  2/4-bit ints and float8 types have no successors, so they only promote with weak
  values of their kind (anything else is a :class:`TypePromotionError`).
* A result is weakly typed only when the join is a weak node, or when every input is
  weak (then the join of their strong dtypes is taken and marked weak). A weak
  result gets the default dtype of its kind (int32/float32/complex64, or the 64-bit
  ones with x64 on).
* With ``jax_enable_x64`` off, 64-bit types canonicalize to their 32-bit versions.

The ml_dtypes types (bfloat16, float8_*, ...) are imported on first use (a module
``__getattr__``, a dtype string, or anyone importing ml_dtypes: ``runtime/ml_dtypes_loader``);
the tables of dtypes are then rebuilt with them (``_build_tables``).

Hot paths (``result_type`` with two inputs, ``canonicalize_dtype``) are dict lookups;
every cache that depends on x64 or the promotion mode is cleared when those flags change.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from pyjax._src.core import dtype_tables
from pyjax._src.core.config import config
from pyjax._src.runtime import ml_dtypes_loader

__all__ = [
    "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128", "float0",
    # (the ml_dtypes types, ML_DTYPE_NAMES, are attributes too, made on first use)
    "TypePromotionError", "x64_enabled", "canonicalize_dtype", "check_user_dtype",
    "check_user_dtype_supported", "python_scalar_dtype", "dtype_of", "is_weakly_typed",
    "is_python_scalar", "promote_types", "result_type", "issubdtype", "isdtype", "finfo",
    "iinfo", "is_floating", "is_integer", "is_signed", "is_unsigned", "is_complex", "is_bool",
    "is_inexact", "is_numeric", "short_name", "to_complex_dtype", "to_real_dtype",
    "to_inexact_dtype", "to_numeric_dtype", "default_int_dtype", "default_uint_dtype",
    "default_float_dtype", "default_complex_dtype", "scalar_type_of", "coerce_to_array",
]


class TypePromotionError(ValueError):
    """Raised when input dtypes have no implicit promotion path."""


# ---------------------------------------------------------------------------------------
# dtype objects
# ---------------------------------------------------------------------------------------

bool_ = np.dtype(np.bool_)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
uint8 = np.dtype(np.uint8)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
uint64 = np.dtype(np.uint64)
float16 = np.dtype(np.float16)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
complex64 = np.dtype(np.complex64)
complex128 = np.dtype(np.complex128)

# The ml_dtypes types (bfloat16, float8_*, ...): module attributes once ml_dtypes is loaded
# (see ``__getattr__``).
ML_DTYPE_NAMES = dtype_tables.ML_DTYPE_NAMES

# JAX's dtype of tangents of integer/bool values: a zero-size void type.
float0 = np.dtype([("float0", np.void, 0)])


def __getattr__(name: str) -> np.dtype:
    if name in ML_DTYPE_NAMES:
        ml_dtypes_loader.load()   # its callback, _add_ml_dtypes, sets the module attributes
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _build_tables(ext: dict[str, np.dtype]) -> None:
    """(Re)builds every table that lists dtypes (``dtype_tables.build``), with the ml_dtypes
    types in ``ext`` (empty until ml_dtypes is loaded), and clears the caches of lattice
    nodes and results. The tables are module globals used below: ``_DTYPES``,
    ``_DT_INDEX``, ``_N`` and the weak nodes ``_I_WEAK``/``_F_WEAK``/``_C_WEAK``,
    ``_NODE_DTYPE``/``_NODE_NAME``, the kind sets (``_FLOATING_SET``, ``_INTEGER_SET``, ...),
    ``_KIND_DEFAULT``, ``_UPPER``, ``_VALUE_TYPE_ENTRY``/``_PYTYPE_ARG_ENTRY``,
    ``_ISDTYPE_KINDS`` and ``_SUB_BYTE_BITS``."""
    globals().update(dtype_tables.build(globals(), ext))
    _join_cache.clear()
    _clear_caches()


def _add_ml_dtypes(ml_dtypes) -> None:
    ext = {n: np.dtype(getattr(ml_dtypes, n)) for n in ML_DTYPE_NAMES}
    globals().update(ext)
    _build_tables(ext)


# ---------------------------------------------------------------------------------------
# x64 and canonicalization
# ---------------------------------------------------------------------------------------

_X64_TO_32 = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}

# Any hashable dtype-like -> canonical np.dtype. Objects comparing equal to an np.dtype
# (strings, scalar types) denote that dtype, so mixing them in one dict is safe.
_canon_cache: dict[Any, np.dtype] = {}


def x64_enabled() -> bool:
    """True when 64-bit types are enabled (``jax_enable_x64``)."""
    return config.jax_enable_x64


def _canonicalize_np(dt: np.dtype) -> np.dtype:
    if config.jax_enable_x64:
        return dt
    return _X64_TO_32.get(dt, dt)


def canonicalize_dtype(dtype: Any) -> np.dtype:
    """Returns the np.dtype pyjax uses for ``dtype`` under the current x64 setting.

    Accepts anything ``np.dtype`` accepts (strings such as ``'bfloat16'`` included) and
    the Python types ``bool``, ``int``, ``float``, ``complex``. With x64 off, int64,
    uint64, float64 and complex128 become int32, uint32, float32 and complex64.
    """
    try:
        return _canon_cache[dtype]
    except KeyError:
        pass
    except TypeError:  # unhashable dtype-like (e.g. a structured-dtype list, an array)
        return _canonicalize_np(_to_np_dtype(dtype))
    dt = _to_np_dtype(dtype)
    if dt.byteorder not in "=|" and dt.isnative is False:
        dt = dt.newbyteorder("=")
    out = _canonicalize_np(dt)
    # Only cache true dtype-likes: caching arbitrary objects would keep them alive.
    if isinstance(dtype, (np.dtype, str, type)) and len(_canon_cache) < 4096:
        _canon_cache[dtype] = out
    return out


def _to_np_dtype(dtype: Any) -> np.dtype:
    if isinstance(dtype, np.dtype):
        return dtype
    dt = getattr(dtype, "dtype", None)
    if isinstance(dt, np.dtype) and not isinstance(dtype, type):
        return dt
    try:
        return np_dtype(dtype)
    except (TypeError, ValueError) as e:
        raise TypeError(f"Cannot interpret {dtype!r} as a data type") from e


def np_dtype(dtype: Any) -> np.dtype:
    """``np.dtype(dtype)`` that also knows the ml_dtypes names ('bfloat16', ...) before
    ml_dtypes is imported (it imports it then)."""
    try:
        return np.dtype(dtype)
    except TypeError:
        if not (isinstance(dtype, str) and ml_dtypes_loader.loaded() is None):
            raise
    ml_dtypes_loader.load()
    return np.dtype(dtype)


def default_int_dtype() -> np.dtype:
    """int64 with x64 on, else int32."""
    return int64 if config.jax_enable_x64 else int32


def default_uint_dtype() -> np.dtype:
    """uint64 with x64 on, else uint32."""
    return uint64 if config.jax_enable_x64 else uint32


def default_float_dtype() -> np.dtype:
    """float64 with x64 on, else float32."""
    return float64 if config.jax_enable_x64 else float32


def default_complex_dtype() -> np.dtype:
    """complex128 with x64 on, else complex64."""
    return complex128 if config.jax_enable_x64 else complex64


def _default_for_kind(dt: np.dtype) -> np.dtype:
    """Default (canonical) dtype of ``dt``'s kind; other dtypes (bool, float0) are their own."""
    default = _KIND_DEFAULT.get(dt)
    return dt if default is None else default()


_X64_MESSAGE = (
    "Explicitly requested dtype {} {}is not available, and will be truncated to dtype {}. "
    "To enable more dtypes, set the jax_enable_x64 configuration option or the "
    "JAX_ENABLE_X64 (or PYJAX_ENABLE_X64) shell environment variable. "
    "See https://github.com/jax-ml/jax#current-gotchas for more.")


def check_user_dtype(dtype: Any, fun_name: str | None = None, *,
                     stacklevel: int = 3) -> np.dtype | None:
    """Validates a user-requested ``dtype=`` and returns its canonical np.dtype.

    ``None`` is returned unchanged (the caller picks a default). Python types
    (``int``, ``float``, ...) canonicalize silently; an explicit 64-bit dtype with x64
    off emits JAX's "will be truncated" ``UserWarning``. Non-numeric dtypes raise
    ``TypeError``.
    """
    if dtype is None:
        return None
    if dtype is int or dtype is float or dtype is complex or dtype is bool:
        return canonicalize_dtype(dtype)
    if isinstance(dtype, np.dtype):
        dt = dtype
    else:
        try:
            dt = np_dtype(dtype)
        except (TypeError, ValueError):
            where = f" in {fun_name}" if fun_name else ""
            raise TypeError(f"Cannot interpret {dtype!r} as a data type{where}") from None
    if dt not in _SUPPORTED_SET:
        ndt = dt.newbyteorder("=") if dt.byteorder not in "=|" else dt
        if ndt not in _SUPPORTED_SET:
            where = f" in {fun_name}" if fun_name else ""
            raise TypeError(f"JAX only supports number and bool dtypes, got dtype {dtype}{where}")
        dt = ndt
    canon = _canonicalize_np(dt)
    if canon is not dt and canon != dt:
        where = f"requested in {fun_name} " if fun_name else ""
        warnings.warn(_X64_MESSAGE.format(dtype, where, canon.name), UserWarning,
                      stacklevel=stacklevel)
    return canon


check_user_dtype_supported = check_user_dtype  # JAX's name


# ---------------------------------------------------------------------------------------
# values -> dtypes and weak types
# ---------------------------------------------------------------------------------------

_PY_SCALAR_TYPES = (bool, int, float, complex)
_WEAK_PY_TYPES = (int, float, complex)


def is_python_scalar(x: Any) -> bool:
    """True for Python ``bool``, ``int``, ``float``, ``complex`` values (not numpy scalars)."""
    return type(x) in _PY_SCALAR_TYPES


def python_scalar_dtype(x: Any) -> np.dtype:
    """Default canonical dtype of a Python scalar value (or Python scalar type)."""
    t = x if isinstance(x, type) else type(x)
    if t is bool:
        return bool_
    if t is int:
        return default_int_dtype()
    if t is float:
        return default_float_dtype()
    if t is complex:
        return default_complex_dtype()
    raise TypeError(f"python_scalar_dtype expects a Python bool, int, float or complex, got {x!r}")


def is_weakly_typed(x: Any) -> bool:
    """True for Python int/float/complex values and for objects with ``weak_type=True``."""
    t = type(x)
    if t is int or t is float or t is complex:
        return True
    return bool(getattr(x, "weak_type", False))


def scalar_type_of(x: Any) -> type:
    """The Python scalar type (bool/int/float/complex) matching ``x``'s dtype kind."""
    dt = dtype_of(x)
    if dt == bool_:
        return bool
    if dt in _INTEGER_SET:
        return int
    if dt in _FLOATING_SET:
        return float
    if dt in _COMPLEX_SET:
        return complex
    raise TypeError(f"Invalid scalar value {x!r}")


def coerce_to_array(x: Any, dtype: Any = None) -> np.ndarray:
    """np.asarray with JAX's default dtypes for Python scalars."""
    if dtype is None and type(x) in _PY_SCALAR_TYPES:
        dtype = python_scalar_dtype(x)
    return np.asarray(x, dtype)


# ---------------------------------------------------------------------------------------
# the promotion lattice
# ---------------------------------------------------------------------------------------

_join_cache: dict[tuple, int] = {}   # (mode, nodes...) -> node; depends on the mode only


def _join(nodes: tuple[int, ...]) -> int:
    mode = config.jax_numpy_dtype_promotion
    key = (mode,) + nodes
    try:
        return _join_cache[key]
    except KeyError:
        pass
    upper = _UPPER[mode]
    common = upper[nodes[0]]
    for n in nodes[1:]:
        common = common & upper[n]
    least = [c for c in common if common <= upper[c]]
    if len(least) != 1:
        names = tuple(_NODE_NAME[n] for n in dict.fromkeys(nodes))
        if least:  # pragma: no cover - the lattices above are well formed
            raise TypePromotionError(f"Internal type promotion error: {names} have no unique "
                                     f"least upper bound")
        if mode == "strict":
            msg = (f"Input dtypes {names} have no available implicit dtype promotion path when "
                   "jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the "
                   "desired output type, or set jax_numpy_dtype_promotion=standard.")
        elif any(_NODE_DTYPE[n] in _INTN for n in nodes):
            msg = (f"Input dtypes {names} have no available implicit dtype promotion path. "
                   "To avoid unintended promotion, 1-, 2- and 4-bit integers do not support "
                   "implicit promotion. If you'd like your inputs to be promoted to another "
                   "type, you can do so explicitly using e.g. x.astype('int32')")
        else:
            msg = (f"Input dtypes {names} have no available implicit dtype promotion path. "
                   "Try explicitly casting inputs to the desired output type.")
        raise TypePromotionError(msg)
    _join_cache[key] = least[0]
    return least[0]


def _weak_node(dt: np.dtype) -> int:
    """Lattice node of a weakly typed value of dtype ``dt``."""
    if dt in _INTEGER_SET:
        return _I_WEAK
    if dt in _FLOATING_SET:
        return _F_WEAK
    if dt in _COMPLEX_SET:
        return _C_WEAK
    return _DT_INDEX[dt]  # bool (weak bool is just bool) and float0


def _is_weak_node(node: int) -> bool:
    return node >= _N


def _node_of_promote_arg(a: Any) -> int:
    # JAX: the Python types int/float/complex are the weak nodes; anything else is a dtype.
    if a is int:
        return _I_WEAK
    if a is float:
        return _F_WEAK
    if a is complex:
        return _C_WEAK
    return _DT_INDEX[_valid_np_dtype(_to_np_dtype(a), a)]


def promote_types(a: Any, b: Any) -> np.dtype:
    """Returns the dtype a binary operation on ``a`` and ``b`` computes in (JAX's lattice).

    Like ``jax.numpy.promote_types``: the Python types ``int``, ``float`` and ``complex``
    are treated as weak (``promote_types('uint8', int) == uint8``); the result is NOT
    canonicalized for the x64 setting (``promote_types('uint32', 'int32') == int64``).
    Use :func:`result_type` to get the dtype a computation will actually have.
    """
    na = _node_of_promote_arg(a)
    nb = _node_of_promote_arg(b)
    if na == nb:
        return _NODE_DTYPE[na]
    return _NODE_DTYPE[_join((na, nb) if na < nb else (nb, na))]


# -- result_type ------------------------------------------------------------------------
# Each argument becomes an "entry": 2 * dtype_index + weak. Results are cached per tuple
# of entries; the cache depends on x64 and the promotion mode and is cleared on change.

_result_cache: dict[Any, tuple[np.dtype, bool]] = {}


def _valid_np_dtype(dt: np.dtype, original: Any) -> np.dtype:
    if dt in _DT_INDEX:
        return dt
    if dt.byteorder not in "=|":
        ndt = dt.newbyteorder("=")
        if ndt in _DT_INDEX:
            return ndt
    raise TypeError(f"Dtype {dt} (from {original!r}) is not a valid JAX array type. "
                    "Only arrays of numeric types are supported by JAX.")


def _entry(arg: Any) -> int:
    """2 * dtype_index + weak for one argument of result_type."""
    t = type(arg)
    e = _VALUE_TYPE_ENTRY.get(t)   # Python/numpy scalars, np.dtype instances
    if e is not None:
        return e
    if t is type:
        e = _PYTYPE_ARG_ENTRY.get(arg)  # Python types (int is weak) and numpy scalar types
        if e is not None:
            return e
    else:
        dt = getattr(arg, "dtype", None)   # arrays, tracers, abstract values
        if dt is not None:
            i = _DT_INDEX.get(dt)
            if i is not None:
                if t is np.ndarray:
                    return 2 * i
                return 2 * i + bool(getattr(arg, "weak_type", False))
            if isinstance(dt, np.dtype):
                i = _DT_INDEX[_valid_np_dtype(dt, arg)]
                return 2 * i + (t is not np.ndarray and bool(getattr(arg, "weak_type", False)))
        if arg is None:
            return 2 * _DT_INDEX[float64]   # JAX treats None as float_
    try:
        dt = np_dtype(arg)
    except (TypeError, ValueError):
        raise TypeError(f"Cannot determine dtype of {arg!r}") from None
    return 2 * _DT_INDEX[_valid_np_dtype(dt, arg)]


def _compute_result(entries: tuple[int, ...]) -> tuple[np.dtype, bool]:
    dts = [_DTYPES[e >> 1] for e in entries]
    weaks = [bool(e & 1) for e in entries]
    if len(entries) == 1:
        out, weak = dts[0], weaks[0]
    elif all(d is dts[0] for d in dts) and not all(weaks):
        out, weak = dts[0], False
    elif all(weaks) and config.jax_numpy_dtype_promotion != "strict":
        # Join the strong dtypes, then mark weak (avoids e.g. a weak int16 result).
        nodes = tuple(sorted({e >> 1 for e in entries}))
        out, weak = _NODE_DTYPE[_join(nodes) if len(nodes) > 1 else nodes[0]], True
    else:
        nodes = tuple(sorted({(_weak_node(d) if w else _DT_INDEX[d]) for d, w in zip(dts, weaks)}))
        node = _join(nodes) if len(nodes) > 1 else nodes[0]
        out, weak = _NODE_DTYPE[node], _is_weak_node(node)
    if out is bool_ or out is float0:
        weak = False
    if weak:
        out = _default_for_kind(out)
    else:
        out = _canonicalize_np(out)
    return out, weak


def result_type(*args: Any, return_weak_type_flag: bool = False):
    """The dtype of a computation combining ``args`` under JAX's promotion rules.

    ``args`` may be dtypes, dtype-likes (strings, scalar types), Python scalars (weak),
    the Python types ``int``/``float``/``complex`` (weak), numpy arrays/scalars, or any
    object with ``.dtype`` and optionally ``.weak_type``. The result is canonicalized for
    the x64 setting; with ``return_weak_type_flag=True`` a ``(dtype, weak_type)`` pair is
    returned.
    """
    n = len(args)
    if n == 2:
        key = (_entry(args[0]), _entry(args[1]))
    elif n == 1:
        key = _entry(args[0])
    elif n == 0:
        raise ValueError("at least one array or dtype is required")
    else:
        key = tuple(map(_entry, args))
    try:
        res = _result_cache[key]
    except KeyError:
        res = _compute_result(key if n != 1 else (key,))
        if len(_result_cache) > 8192:
            _result_cache.clear()
        _result_cache[key] = res
    return res if return_weak_type_flag else res[0]


def dtype_of(x: Any) -> np.dtype:
    """The canonical dtype of a value, array, or dtype-like (what ``jnp.dtype`` reports).

    Python scalars get their default dtype (int32/float32/complex64, or 64-bit with x64).
    """
    t = type(x)
    if t is int or t is float or t is complex or t is bool:
        return python_scalar_dtype(t)
    if isinstance(x, np.dtype):
        return canonicalize_dtype(x)
    dt = getattr(x, "dtype", None)
    if isinstance(dt, np.dtype) and t is not type:
        return canonicalize_dtype(dt)
    if x is None:
        raise TypeError("Cannot determine dtype of None")
    return canonicalize_dtype(x)


# ---------------------------------------------------------------------------------------
# predicates (take np.dtype)
# ---------------------------------------------------------------------------------------

def is_floating(dt: np.dtype) -> bool:
    """Real floating point, including float16, bfloat16 and the float8/float4 types."""
    return dt in _FLOATING_SET


def is_integer(dt: np.dtype) -> bool:
    """Signed or unsigned integer (not bool)."""
    return dt in _INTEGER_SET


def is_signed(dt: np.dtype) -> bool:
    """Signed integer."""
    return dt in _SIGNED_SET


def is_unsigned(dt: np.dtype) -> bool:
    """Unsigned integer."""
    return dt in _UNSIGNED_SET


def is_complex(dt: np.dtype) -> bool:
    return dt in _COMPLEX_SET


def is_bool(dt: np.dtype) -> bool:
    return dt == bool_


def is_inexact(dt: np.dtype) -> bool:
    """Floating or complex."""
    return dt in _INEXACT_SET


def is_numeric(dt: np.dtype) -> bool:
    """Integer, floating or complex (not bool, not float0)."""
    return dt in _NUMERIC_SET


# ---------------------------------------------------------------------------------------
# issubdtype / isdtype / finfo / iinfo
# ---------------------------------------------------------------------------------------

_ABSTRACT_TYPES = frozenset((np.generic, np.number, np.integer, np.signedinteger,
                             np.unsignedinteger, np.inexact, np.floating, np.complexfloating,
                             np.flexible, np.character))


def _is_abstract(x: Any) -> bool:
    return isinstance(x, type) and x in _ABSTRACT_TYPES


def issubdtype(a: Any, b: Any) -> bool:
    """Like ``np.issubdtype``, but knows bfloat16/float8 are floating and int4 is integer, and
    extended dtypes (key arrays' ``key<fry>``, whose ``.type`` is ``prng_key``)."""
    ext = a if isinstance(a, type) else getattr(a, "type", None)
    if isinstance(ext, type) and issubclass(ext, extended) and not isinstance(a, np.dtype):
        if isinstance(b, type):
            return issubclass(ext, b)
        return a == b
    if isinstance(b, type) and issubclass(b, extended):
        return False  # a NumPy dtype is never extended
    if _is_abstract(a):
        return _is_abstract(b) and issubclass(a, b)
    dt_a = _to_np_dtype(a)
    if not _is_abstract(b):
        return dt_a == _to_np_dtype(b)
    if dt_a in _CUSTOM_FLOAT_SET:
        return b in (np.floating, np.inexact, np.number, np.generic)
    if dt_a in _INTN_SIGNED:
        return b in (np.signedinteger, np.integer, np.number, np.generic)
    if dt_a in _INTN_UNSIGNED:
        return b in (np.unsignedinteger, np.integer, np.number, np.generic)
    return bool(np.issubdtype(dt_a, b))


def isdtype(dtype: Any, kind: Any) -> bool:
    """Array-API ``isdtype``: ``kind`` is a dtype, a kind name, or a tuple of those."""
    dt = _to_np_dtype(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            try:
                if dt in _ISDTYPE_KINDS[k]:
                    return True
            except KeyError:
                raise ValueError(f"Unrecognized dtype kind {k!r}; expected one of "
                                 f"{sorted(_ISDTYPE_KINDS)}") from None
        elif dt == _to_np_dtype(k):
            return True
    return False


def _info_dtype(dtype: Any) -> Any:
    if dtype is int or dtype is float or dtype is complex or dtype is bool:
        return np.dtype(dtype)
    if isinstance(dtype, (np.dtype, type, str)):
        return dtype
    dt = getattr(dtype, "dtype", None)
    return dt if isinstance(dt, np.dtype) else dtype


def finfo(dtype: Any):
    """Machine limits of a floating/complex dtype (bfloat16 and float8 included).

    Like JAX (``ml_dtypes.finfo``), the dtype is not canonicalized:
    ``finfo(float64)`` describes float64 even with x64 off. Arrays are accepted.
    """
    return _info(dtype, "finfo")


def iinfo(dtype: Any):
    """Machine limits of an integer dtype (int4/uint4 included). Not canonicalized."""
    return _info(dtype, "iinfo")


def _info(dtype: Any, which: str):
    dtype = _info_dtype(dtype)
    ml = ml_dtypes_loader.loaded()
    if ml is None:
        # NumPy's own types need no ml_dtypes (whose finfo/iinfo subclass NumPy's, with the
        # same values): only an ml_dtypes name or type imports it.
        try:
            dt = np.dtype(dtype)
        except TypeError:
            dt = None
        if dt is not None and dt.type.__module__ == "numpy":
            return getattr(np, which)(dtype)
        ml = ml_dtypes_loader.load()
    return getattr(ml, which)(dtype)


# ---------------------------------------------------------------------------------------
# names and conversions
# ---------------------------------------------------------------------------------------

_SHORT_NAMES: dict[np.dtype, str] = {float0: "float0"}


def short_name(dt: np.dtype) -> str:
    """The Jaxpr spelling of a dtype: bool, i8..i64, u8..u64, bf16, f16..f64, c64, c128."""
    try:
        return _SHORT_NAMES[dt]
    except KeyError:
        pass
    dt = np.dtype(dt)
    if dt == float0:
        name = "float0"
    else:
        name = (dt.name.replace("float", "f").replace("uint", "u")
                .replace("int", "i").replace("complex", "c"))
    _SHORT_NAMES[dt] = name
    return name


def to_numeric_dtype(dtype: Any) -> np.dtype:
    """bool -> default int; other dtypes unchanged."""
    dt = _to_np_dtype(dtype)
    return default_int_dtype() if dt == bool_ else dt


def to_inexact_dtype(dtype: Any) -> np.dtype:
    """Floating/complex dtypes unchanged; bool and integers of up to 32 bits -> float32;
    64-bit integers -> the default float dtype (float64 with x64). JAX 0.10.2 maps them so
    (observed: ``jnp.sin(int32 array)`` is float32 with x64 on, ``jnp.sin(int64)`` float64)."""
    dt = _to_np_dtype(dtype)
    if dt in _INEXACT_SET:
        return dt
    if dt.itemsize >= 8:
        return default_float_dtype()
    return float32


def to_complex_dtype(dtype: Any) -> np.dtype:
    """The complex dtype holding ``dtype``'s values: complex128 for float64/complex128,
    else complex64 (integers go through the default float first)."""
    dt = to_inexact_dtype(dtype)
    if dt == float64 or dt == complex128:
        return complex128
    return complex64


def to_real_dtype(dtype: Any) -> np.dtype:
    """complex64 -> float32, complex128 -> float64; other dtypes unchanged."""
    dt = _to_np_dtype(dtype)
    if dt == complex64:
        return float32
    if dt == complex128:
        return float64
    return dt


# ---------------------------------------------------------------------------------------
# cache invalidation
# ---------------------------------------------------------------------------------------

def _clear_caches(_new_value: Any = None) -> None:
    _canon_cache.clear()
    _result_cache.clear()


config.on_change("jax_enable_x64", _clear_caches)
config.on_change("jax_numpy_dtype_promotion", _clear_caches)


# ---------------------------------------------------------------------------------------
# extended dtypes and dtype facts of jax.dtypes
# ---------------------------------------------------------------------------------------

class extended(np.generic):  # noqa: N801 - JAX's name
    """The scalar type of dtypes that are not NumPy's (``issubdtype(d, extended)``)."""


class prng_key(extended):  # noqa: N801 - JAX's name
    """The scalar type of PRNG key arrays' dtypes (``issubdtype(key.dtype, prng_key)``)."""


def itemsize_bits(dtype: Any) -> int:
    """The size of one element of ``dtype`` in bits (4 for int4, 8 for bool)."""
    if dtype is None:
        raise ValueError("itemsize_bits: dtype must not be None")
    if isinstance(getattr(dtype, "type", None), type) and issubclass(dtype.type, extended):
        return int(dtype.itemsize) * 8
    dt = _to_np_dtype(dtype)
    return _SUB_BYTE_BITS.get(dt, dt.itemsize * 8)


_build_tables({})
ml_dtypes_loader.on_load(_add_ml_dtypes)
