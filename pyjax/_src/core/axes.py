"""Axis and shape arguments: the one place where ``axis``, ``axes``, ``shape``, ``newshape`` and
``dimensions`` arguments of ``pyjax.numpy`` and ``pyjax.lax`` are checked (layer 1).

The rules are NumPy's and JAX's: an axis is anything ``operator.index`` accepts (Python and
NumPy integers, integer 0-d arrays) except booleans; floats raise ``TypeError``; an axis outside
``[-ndim, ndim)`` raises ``AxisError`` (a ``ValueError`` and an ``IndexError``); repeated axes
raise ``ValueError``. Traced values raise their own concretization error. Every message names
the function (``fun``), the argument (``name``) and the value that was passed.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from pyjax._src.core.trace import Tracer

try:
    AxisError = np.exceptions.AxisError
except AttributeError:  # NumPy < 1.25
    AxisError = np.AxisError

__all__ = ["AxisError", "NegativeDimensionError", "index", "canonicalize_axis",
           "canonicalize_axes", "canonicalize_shape", "reshape_shape"]


class NegativeDimensionError(ValueError, TypeError):
    """A negative dimension: a ValueError as in NumPy and a TypeError as in JAX's lax."""


def _prefix(fun):
    return f"{fun}: " if fun else ""


def index(value, name="axis", fun=None) -> int:
    """``value`` as a Python int by ``operator.index``, as JAX does (so a bool is 0 or 1,
    where NumPy 2 refuses it)."""
    if type(value) is int:
        return value
    if isinstance(value, Tracer):
        return operator.index(value)  # the tracer raises its concretization error
    try:
        return operator.index(value)
    except TypeError as e:
        raise TypeError(f"{_prefix(fun)}{name} must be an integer, got {value!r}: {e}") from None


def _out_of_bounds(axis, ndim, name, fun):
    where = "" if name == "axis" else f" (argument `{name}`)"
    return AxisError(f"{_prefix(fun)}axis {axis} is out of bounds for array of dimension "
                     f"{ndim}{where}")


def canonicalize_axis(axis, ndim, name="axis", fun=None, *, strict=True) -> int:
    """``axis`` of an array of rank ``ndim`` as an int in ``[0, ndim)``.

    ``strict=False`` (lax wrappers): only the type is checked and negative axes in range are
    wrapped; others are returned as they are for the primitive's own check to report, as in
    JAX's lax."""
    a = index(axis, name, fun)
    if not -ndim <= a < ndim:
        if not strict:
            return a
        raise _out_of_bounds(a, ndim, name, fun)
    return a + ndim if a < 0 else a


def canonicalize_axes(axes, ndim, name="axis", fun=None, *, allow_none=True,
                      strict=True, unique=None) -> tuple:
    """``axes`` (None: all of them when ``allow_none``; an int; a tuple or list of ints) as a
    tuple of distinct ints in ``[0, ndim)``, in the order given. ``strict``: as for
    ``canonicalize_axis``; ``unique`` (default ``strict``): whether repeated axes raise here
    rather than in the primitive."""
    if axes is None:
        if not allow_none:
            raise TypeError(f"{_prefix(fun)}{name} must be an integer or a sequence of "
                            "integers, got None")
        return tuple(range(ndim))
    if isinstance(axes, (tuple, list)):
        out = tuple(canonicalize_axis(a, ndim, name, fun, strict=strict) for a in axes)
    else:
        out = (canonicalize_axis(axes, ndim, name, fun, strict=strict),)
    if (strict if unique is None else unique) and len(set(out)) != len(out):
        raise ValueError(f"{_prefix(fun)}repeated axis in `{name}` argument: {axes!r} "
                         f"(duplicate value in '{name}')")
    return out


def _shape_error(shape, name, fun, detail=""):
    return TypeError(f"{_prefix(fun)}shapes must be 1D sequences of concrete values of integer "
                     f"type, got `{name}` {shape!r}{detail}")


def canonicalize_shape(shape, name="shape", fun=None, *, scalar_ok=True,
                       allow_negative=False) -> tuple:
    """A shape argument as a tuple of Python ints.

    ``scalar_ok``: an int stands for a 1-D shape (NumPy's functions); lax wants sequences.
    ``allow_negative``: keep negative entries for the caller to judge (``-1`` in reshape, or
    lax params that their primitive's own check reports); else they raise
    ``NegativeDimensionError``."""
    if isinstance(shape, (tuple, list)):
        dims = shape
    elif isinstance(shape, (str, bytes, bool, np.bool_)) or not hasattr(shape, "__iter__") \
            and not hasattr(shape, "__index__"):
        raise _shape_error(shape, name, fun)
    elif np.ndim(shape) == 0:
        if not scalar_ok:
            raise _shape_error(shape, name, fun)
        dims = (shape,)
    elif np.ndim(shape) == 1:
        dims = tuple(shape)
    else:
        raise _shape_error(shape, name, fun, f" of rank {np.ndim(shape)}")
    out = []
    for d in dims:
        if type(d) is not int:
            if isinstance(d, Tracer):
                d = operator.index(d)  # the tracer raises its concretization error
            try:
                if isinstance(d, (bool, np.bool_)):
                    raise TypeError(f"'{type(d).__name__}' is not an integer dimension")
                d = operator.index(d)
            except TypeError as e:
                raise _shape_error(shape if isinstance(shape, (tuple, list)) else dims,
                                   name, fun, f": {e}") from None
        if d < 0 and not allow_negative:
            raise NegativeDimensionError(f"{_prefix(fun)}negative dimensions are not allowed, "
                                         f"got `{name}` {tuple(dims)!r}")
        out.append(d)
    return tuple(out)


def reshape_shape(old_shape, newshape, name="shape", fun="reshape") -> tuple:
    """NumPy's ``reshape`` target: ``newshape`` (an int or a sequence, at most one ``-1``)
    resolved against an array of shape ``old_shape``."""
    new = canonicalize_shape(newshape, name, fun, allow_negative=True)
    size = math.prod(old_shape)
    unknown = [i for i, d in enumerate(new) if d == -1]
    if len(unknown) > 1:
        raise ValueError(f"{_prefix(fun)}can only specify one unknown dimension, got `{name}` "
                         f"{new}")
    if any(d < -1 for d in new):
        raise ValueError(f"{_prefix(fun)}invalid (negative) dimension in `{name}` {new}")
    if unknown:
        known = math.prod(d for d in new if d != -1)
        if known == 0 or size % known:
            raise TypeError(f"cannot reshape array of shape {tuple(old_shape)} (size {size}) "
                            f"into shape {new}")
        new = tuple(size // known if d == -1 else d for d in new)
    if math.prod(new) != size:
        raise TypeError(f"cannot reshape array of shape {tuple(old_shape)} (size {size}) into "
                        f"shape {new} (size {math.prod(new)})")
    return new
