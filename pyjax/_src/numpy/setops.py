"""Set operations on flattened arrays: ``isin``, ``union1d``, ``intersect1d``,
``setdiff1d``, ``setxor1d``.

The results of all but ``isin`` have data-dependent lengths: eagerly they are exact; under
``jit`` a static ``size=`` is required (the first ``size`` sorted results, padded with
``fill_value``, default the smallest result), as in JAX. Every one sorts the concatenated
values and keeps a mask of wanted positions, so one code path serves both cases.
"""
from __future__ import annotations

import numpy as np

from pyjax._src.core import errors
from pyjax._src.core import dtypes
from pyjax._src.core.trace import Tracer
from pyjax._src.numpy import util
from pyjax._src.numpy.creation import asarray, zeros
from pyjax._src.numpy.eager_compiled import compiled_when_eager
from pyjax._src.numpy.reductions import (any as _any, sort, argsort, nonzero, min as _min,
                                         argmax)
from pyjax._src.numpy.searching import searchsorted
from pyjax._src.numpy.shape import concatenate, ravel, expand_dims
from pyjax._src.numpy.ufuncs import (equal, not_equal, isnan, logical_and, logical_or,
                                     logical_not, logical_xor, where, clip)

__all__ = ["isin", "union1d", "intersect1d", "setdiff1d", "setxor1d"]

_ISIN_METHODS = ("auto", "compare_all", "binary_search", "sort")


@compiled_when_eager("assume_unique", "invert", "method")
def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    """Whether each element of ``element`` is in ``test_elements`` (flattened), shaped like
    ``element``. ``method``: "compare_all" (every pair: memory element.size *
    test_elements.size), "binary_search"/"sort" (sort the test elements and search), or
    "auto" (compare_all for small or complex inputs). ``assume_unique`` changes nothing."""
    util.check_arraylike("isin", element, test_elements)
    if method not in _ISIN_METHODS:
        raise ValueError(f"isin: method must be one of {_ISIN_METHODS}, got {method!r}")
    elt, tests = (asarray(v) for v in util.promote_dtypes(asarray(element),
                                                          asarray(test_elements)))
    tests = ravel(tests)
    complex_ = dtypes.issubdtype(elt.dtype, np.complexfloating)
    if method == "auto":
        method = ("compare_all" if complex_ or elt.size * tests.shape[0] <= 1 << 16
                  else "binary_search")
    if tests.shape[0] == 0:
        found = zeros(elt.shape, bool)
    elif method == "compare_all" or complex_:
        found = _any(equal(expand_dims(elt, -1), tests), axis=-1)
    else:
        s = sort(tests)
        i = clip(searchsorted(s, elt), 0, s.shape[0] - 1)
        found = equal(s[i], elt)
    return logical_not(found) if invert else found


# ---------------------------------------------------------------------------------------
# sorted values + a mask of the wanted ones -> the first `size` of them
# ---------------------------------------------------------------------------------------

def _flat(fun, *arrays):
    util.check_arraylike(fun, *arrays)
    return tuple(ravel(asarray(a)) for a in util.promote_dtypes(*(asarray(a) for a in arrays)))


def _first_occurrences(s):
    """Mask of the first of each run of equal values in sorted ``s`` (NaNs count as
    equal, as in ``unique``)."""
    if s.shape[0] == 0:
        return zeros((0,), bool)
    new = not_equal(s[1:], s[:-1])
    if dtypes.issubdtype(s.dtype, np.inexact):
        new = logical_and(new, logical_not(logical_and(isnan(s[1:]), isnan(s[:-1]))))
    return concatenate([asarray([True]), new])


def _check_size(size, fun, operand):
    if size is None:
        if isinstance(operand, Tracer) and operand.to_concrete_value() is None:
            raise errors.ConcretizationTypeError(
                operand.aval.str_short(),
                f"The size argument of jnp.{fun} must be statically specified to use "
                f"jnp.{fun} within JAX transformations.\n")
        return None
    try:
        size = int(size) if not isinstance(size, bool) and int(size) == size else None
    except (TypeError, ValueError):
        size = None
    if size is None or size < 0:
        raise TypeError(f"jnp.{fun}: size must be a static non-negative integer or None")
    return size


def _select(values, keep, size, fill_value, fun, indices=None, index_pads=()):
    """The entries of ``values`` where ``keep`` (in order), the first ``size`` of them padded
    with ``fill_value`` (default: the smallest kept value)."""
    size = _check_size(size, fun, keep)
    if size is None:
        (pos,) = nonzero(keep)
        return values[pos] if indices is None else (values[pos],) + tuple(i[pos] for i in indices)
    (pos,) = nonzero(keep, size=size, fill_value=-1)
    valid = pos >= 0
    got = values[clip(pos, 0, max(values.shape[0] - 1, 0))] if values.shape[0] else \
        zeros((size,), values.dtype)
    if fill_value is None:
        if values.shape[0]:
            first = values[argmax(keep)]
            fill = (first if dtypes.issubdtype(values.dtype, np.complexfloating)
                    else _min(where(keep, values, first)))
            fill = where(_any(keep), fill, zeros((), values.dtype))
        else:
            fill = zeros((), values.dtype)
    else:
        fill = asarray(fill_value).astype(values.dtype)
    out = where(valid, got, fill)
    if indices is None:
        return out
    outs = [out]
    for ind, bad in zip(indices, index_pads):  # JAX pads indices with an out-of-bound one
        picked = ind[clip(pos, 0, max(ind.shape[0] - 1, 0))] if ind.shape[0] else \
            zeros((size,), ind.dtype)
        outs.append(where(valid, picked, bad))
    return tuple(outs)


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """The sorted unique values in ``ar1`` or ``ar2``."""
    a1, a2 = _flat("union1d", ar1, ar2)
    s = sort(concatenate([a1, a2]))
    return _select(s, _first_occurrences(s), size, fill_value, "union1d")


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The unique values of ``ar1`` not in ``ar2``: sorted, or in ``ar1``'s order when
    ``assume_unique``."""
    a1, a2 = _flat("setdiff1d", ar1, ar2)
    if assume_unique:
        return _select(a1, isin(a1, a2, invert=True), size, fill_value, "setdiff1d")
    s = sort(a1)
    keep = logical_and(_first_occurrences(s), isin(s, a2, invert=True))
    return _select(s, keep, size, fill_value, "setdiff1d")


def _has(s, a):
    """``isin`` where a NaN is in an array holding a NaN (NumPy's setxor1d counts them)."""
    found = isin(s, a)
    if dtypes.issubdtype(s.dtype, np.inexact) and a.shape[0]:
        found = logical_or(found, logical_and(isnan(s), _any(isnan(a))))
    return found


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted values in exactly one of ``ar1`` and ``ar2``."""
    a1, a2 = _flat("setxor1d", ar1, ar2)
    s = sort(concatenate([a1, a2]))
    keep = logical_and(_first_occurrences(s), logical_xor(_has(s, a1), _has(s, a2)))
    return _select(s, keep, size, fill_value, "setxor1d")


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
    """The sorted values in both ``ar1`` and ``ar2``; with ``return_indices`` also the
    index of each one's first occurrence in the flattened ``ar1`` and ``ar2``."""
    a1, a2 = _flat("intersect1d", ar1, ar2)
    order1 = argsort(a1, stable=True)
    s = a1[order1]
    keep = logical_and(_first_occurrences(s), isin(s, a2))
    if not return_indices:
        return _select(s, keep, size, fill_value, "intersect1d")
    order2 = argsort(a2, stable=True)
    s2 = a2[order2]
    j = clip(searchsorted(s2, s), 0, max(a2.shape[0] - 1, 0))
    ind2 = order2[j] if a2.shape[0] else zeros(s.shape, order1.dtype)
    return _select(s, keep, size, fill_value, "intersect1d", indices=(order1, ind2),
                   index_pads=(a1.shape[0], a2.shape[0]))
