"""`jax.new_ref`, `jax.freeze`, `jax.empty_ref`, `jax.free_ref` and `jax.ref.get/set/swap/
addupdate`: reads and writes of a `Ref` as array operations on its current value (NumPy
indexing, ``.at[idx].set``/``.add``). The checks are JAX's: a written value must have exactly
the indexed shape and the ref's dtype (no broadcasting, no promotion), and a static integer
index must be in range (plain arrays clamp; a ref raises)."""
from __future__ import annotations

import operator
import sys

import numpy as np

from pyjax._src.core import errors
from pyjax._src.core import refs as core_refs
from pyjax._src.core import trace as trace_mod
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.refs import Ref
from pyjax._src.core.trace import Tracer
from pyjax._src.lax.elementwise import convert_element_type
from pyjax._src.lax.shape_ops import full
from pyjax._src.numpy import creation
from pyjax._src.random import prng

__all__ = ["new_ref", "freeze", "empty_ref", "free_ref", "get", "set", "swap", "addupdate"]


def _check_ref(ref, fn):
    if type(ref) is not Ref:
        raise TypeError(f"{fn} expects a mutable array reference (jax.Ref) made by "
                        f"jax.new_ref, got {type(ref).__name__}")


def _is_key_array(x):
    return isinstance(x, prng.PRNGKeyArray)


def _aval(x):
    if isinstance(x, prng.PRNGKeyArray):
        return prng.KeyShapedArray(x.shape, x.dtype)
    return trace_mod.aval_of(x)


def _as_value(x, fn, position=0):
    """``x`` as an Array or tracer (lists and other non-array values are refused, as JAX)."""
    if isinstance(x, (ArrayImpl, Tracer)) or _is_key_array(x):  # nnx keeps RNG keys in refs
        return x
    if type(x) is Ref:
        raise TypeError(f"{fn} got a mutable array reference where an array value was "
                        "expected; read it first: ref[...]")
    if not trace_mod.is_valid_jaxtype(x):
        raise TypeError(f"Error interpreting argument to {fn} as a JAX value. The problematic "
                        f"value is of type {type(x)} and was passed to {fn} at position "
                        f"{position}.")
    return creation.asarray(x)


# ---- creating and finishing refs ----

def new_ref(init_val, *, memory_space=None, kind=None):
    """A mutable array reference holding ``init_val`` (`jax.new_ref`)."""
    if memory_space is not None:
        raise NotImplementedError(f"jax.new_ref(memory_space={memory_space!r}): memory spaces "
                                  "are not supported by pyjax")
    if kind is not None:
        raise NotImplementedError(f"jax.new_ref(kind={kind!r}): ref kinds are not supported "
                                  "by pyjax")
    value = _as_value(init_val, "new_ref")
    return Ref(value, _aval(value))


def freeze(ref):
    """The final value of ``ref`` (`jax.freeze`). Under a transformation the ref is
    invalidated (later reads and writes raise ValueError); eagerly, as in JAX, it stays usable."""
    if type(ref) is not Ref:
        return ref
    value = ref._read()
    ref._owned = False  # handed out
    if not trace_mod.is_eager():
        ref._frozen = True
    return value


def empty_ref(ty, *, memory_space=None):
    """A ref of type ``ty`` (an aval or ShapeDtypeStruct) with unspecified contents
    (`jax.empty_ref`; zeros here). Only under a transformation, as in JAX."""
    if memory_space is not None:
        raise NotImplementedError(f"jax.empty_ref(memory_space={memory_space!r}): memory "
                                  "spaces are not supported by pyjax")
    try:
        shape, dtype = tuple(ty.shape), np.dtype(ty.dtype)
    except (AttributeError, TypeError):
        raise TypeError(f"empty_ref expects an abstract value with shape and dtype (e.g. "
                        f"jax.typeof(x)), got {ty!r}") from None
    if trace_mod.is_eager():
        raise NotImplementedError("Evaluation rule for 'empty_ref' not implemented")
    value = full(shape, 0, dtype)
    if getattr(ty, "weak_type", False):
        value = convert_element_type(value, dtype, True)
    return Ref(value, trace_mod.aval_of(value))


def free_ref(ref):
    """Release ``ref`` (`jax.free_ref`): under a transformation it is invalidated; eagerly a
    no-op, as in JAX. Returns ``()``."""
    _check_ref(ref, "free_ref")
    ref._read()
    if not trace_mod.is_eager():
        ref._frozen = True
    return ()


# ---- indexing ----

def _is_static_int(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _normalize(idx):
    if idx is None:
        return ()
    return idx if isinstance(idx, tuple) else (idx,)


def _stand_in(x):
    """A NumPy stand-in of one index element, to find the indexed shape without the data."""
    if x is None or x is Ellipsis or _is_static_int(x):
        return x
    if isinstance(x, slice):
        for b in (x.start, x.stop, x.step):
            if b is not None and not _is_static_int(b):
                raise IndexError(f"a slice of a mutable array reference needs static int "
                                 f"bounds, got {x}")
        return x
    if isinstance(x, (bool, np.bool_)):
        raise IndexError("boolean scalar indices of a mutable array reference are not "
                         "supported")
    a = x.aval if isinstance(x, (ArrayImpl, Tracer)) else trace_mod.get_aval(np.asarray(x))
    if a.dtype == np.bool_:
        raise errors.NonConcreteBooleanIndexError(a.str_short())
    if a.dtype.kind not in "iu":
        shown = a.str_short() if isinstance(x, (ArrayImpl, Tracer)) else f"{x!r}"
        raise IndexError(f"indices of a mutable array reference must be integers, slices, "
                         f"None or ..., got {shown} of dtype {a.dtype.name}")
    return np.zeros(a.shape, np.intp)


def _indexed_shape(shape, idx):
    """The shape of ``value[idx]``; static ints out of range raise JAX's ValueError."""
    stand = [_stand_in(x) for x in idx]
    consuming = sum(1 for x in stand if x is not None and x is not Ellipsis)
    dim = 0
    for x in stand:
        if x is Ellipsis:
            dim += max(len(shape) - consuming, 0)
        elif x is None:
            continue
        else:
            if _is_static_int(x) and dim < len(shape):
                i, n = operator.index(x), shape[dim]
                if not -n <= i < n:
                    raise ValueError(f"Out of bound indexer: idx={i}, dim={n}.")
            dim += 1
    try:
        return np.broadcast_to(np.empty((), np.bool_), shape)[tuple(stand)].shape
    except IndexError as e:
        raise IndexError(f"{e} (indexing a mutable array reference of shape {shape})") from None


def _full(idx, shape):
    return idx == () or idx == (Ellipsis,) or (idx == (slice(None),) and len(shape) == 1)


def get(ref, idx=None):
    """``ref[idx]`` (`jax.ref.get`): the indexed elements, as an array."""
    _check_ref(ref, "get")
    idx = _normalize(idx)
    value = ref._read()
    if _full(idx, ref.shape):
        ref._owned = False  # handed out: a jitted update must not donate it
        return value
    _indexed_shape(ref.shape, idx)
    return value[idx]


def _checked_update(ref, idx, x, op):
    """``x`` as an array of the indexed shape and the ref's dtype, or JAX's ValueError."""
    inner = core_refs.inner_aval_of(ref)
    if type(x) is Ref:
        raise TypeError(f"cannot store a mutable array reference in one ({ref.aval}); "
                        "store its value: ref2[...]")
    xa = _aval(x) if isinstance(x, (ArrayImpl, Tracer)) or _is_key_array(x) else None
    if xa is None:
        x = _as_value(x, op, 2)
        xa = _aval(x)
    expected = inner.shape if _full(idx, inner.shape) else _indexed_shape(inner.shape, idx)
    if xa.dtype != inner.dtype:
        raise ValueError(f"Invalid dtype for `{op}`. Ref dtype: {inner.dtype.name}. "
                         f"Value dtype: {xa.dtype.name}.")
    if tuple(xa.shape) != tuple(expected):
        raise ValueError(f"Invalid shape for `{op}`. Ref shape: {inner.shape}. Expected "
                         f"shape: {tuple(expected)}. Value shape: {tuple(xa.shape)}.")
    return x


def _store(ref, new, fresh):
    """Store a whole new value. Its dtype is the ref's; its weak type is what was written
    (JAX's: a ref made from ``0.`` holds a strongly typed value after ``ref[...] = x``).
    ``fresh``: computed here, so no one else holds it."""
    ref._write(new, owned=fresh)


def with_weak_type(value, weak):
    """``value`` with its weak type set to ``weak`` (core/refs.threaded)."""
    return convert_element_type(value, trace_mod.aval_of(value).dtype, weak)


def _read_for_write(ref, op):
    ref._enter()
    ref._check_live(op)  # a frozen ref names the write in its error
    return ref._value


def swap(ref, idx, value, _function_name="swap"):
    """Write ``value`` at ``ref[idx]`` and return what was there (`jax.ref.swap`)."""
    _check_ref(ref, _function_name)
    idx = _normalize(idx)
    old = _read_for_write(ref, "swap")
    value = _checked_update(ref, idx, value, "swap")
    if _full(idx, ref.shape):
        ref._owned = False
        _store(ref, value, False)
        return old
    _store(ref, old.at[idx].set(value), True)
    return old[idx]


def set(ref, idx, value):  # noqa: A001 - JAX's name
    """``ref[idx] = value`` (`jax.ref.set`)."""
    _check_ref(ref, "set")
    idx = _normalize(idx)
    old = _read_for_write(ref, "swap")
    value = _checked_update(ref, idx, value, "swap")
    if _full(idx, ref.shape):
        _store(ref, value, False)
    else:
        _store(ref, old.at[idx].set(value), True)


def addupdate(ref, idx, x):
    """``ref[idx] += x`` in place (`jax.ref.addupdate`)."""
    _check_ref(ref, "addupdate")
    idx = _normalize(idx)
    old = _read_for_write(ref, "addupdate")
    x = _checked_update(ref, idx, x, "addupdate")
    _store(ref, old + x if _full(idx, ref.shape) else old.at[idx].add(x), True)


core_refs.set_ops(sys.modules[__name__])
