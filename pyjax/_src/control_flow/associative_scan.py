"""``lax.associative_scan``: an inclusive scan by a parallel-prefix recursion.

The scan is built from ``lax`` slicing, concatenate, pad and reshape only: it needs no loop
primitive, so ``jit``, ``grad`` and ``vmap`` go through it by transforming those ops. The
recursion is the work-efficient parallel prefix (Blelloch-style) that JAX documents:

1. combine adjacent pairs ``(x0, x1), (x2, x3), ...`` into a sequence of half the length,
2. scan that half recursively, which gives the results at the odd positions,
3. combine each odd result with the following even element to get the even positions
   (position 0 is the first element itself), and
4. interleave the even and odd results.

It does ``O(n)`` work in about ``2 log2(n)`` sequential calls of ``fn``, each applied to
whole slices at once.
"""
from __future__ import annotations

import numpy as np

from pyjax._src.core import pytree
from pyjax._src.core.axes import canonicalize_axis
from pyjax._src.core.array import Array
from pyjax._src.core.trace import Tracer
from pyjax._src.dispatch import eager as dispatch
from pyjax._src.lax import shape_ops

__all__ = ["associative_scan"]


def _as_array(x):
    """A leaf of ``elems`` as a pyjax array or tracer (host values become device arrays)."""
    if isinstance(x, (Array, Tracer)):
        return x
    if hasattr(x, "__jax_array__"):
        return _as_array(x.__jax_array__())
    # A host value is concrete, so a device array of it is right eagerly and, under a trace,
    # is a constant of the program being built.
    return dispatch.to_array(np.asarray(x))


def _interleave(evens, odds, axis):
    """``[e0, o0, e1, o1, ...]`` along ``axis``; ``len(evens)`` is ``len(odds)`` or one more.

    Stacks the two along a new axis right after ``axis`` and merges the pair of axes with a
    reshape, which moves values without arithmetic (so ``-0.0``, NaN payloads and booleans
    come through unchanged)."""
    n_even, n_odd = evens.shape[axis], odds.shape[axis]
    if n_odd < n_even:  # give the odd part a dummy last element, sliced off below
        config = [(0, 0, 0)] * odds.ndim
        config[axis] = (0, 1, 0)
        odds = shape_ops.pad(odds, np.zeros((), odds.dtype)[()], config)
    pair = shape_ops.concatenate(
        [shape_ops.expand_dims(evens, (axis + 1,)), shape_ops.expand_dims(odds, (axis + 1,))],
        axis + 1)
    shape = list(evens.shape)
    shape[axis] = 2 * n_even
    merged = shape_ops.reshape(pair, tuple(shape))
    return shape_ops.slice_in_dim(merged, 0, n_even + n_odd, axis=axis)


def associative_scan(fn, elems, reverse=False, axis=0):
    """Perform a scan with an associative binary operation, in parallel.

    Computes the inclusive prefix "sum" under ``fn``: for a single array ``elems`` of length
    ``n`` along ``axis``, the result is
    ``[elems[0], fn(elems[0], elems[1]), fn(fn(elems[0], elems[1]), elems[2]), ...]``.
    The scan is a parallel-prefix recursion written with ``lax`` slicing ops, so it needs
    ``O(log n)`` sequential applications of ``fn``, each on whole slices, and composes with
    ``jit``, ``grad`` and ``vmap``.

    Parameters
    ----------
    fn : callable
        A Python callable implementing an associative binary operation with signature
        ``r = fn(a, b)``. ``a``, ``b`` and ``r`` are pytrees with the structure of ``elems``.
        It must be vectorized: every leaf of ``a`` and ``b`` is a slice of the matching leaf
        of ``elems`` along ``axis`` (with the same shape as the leaf except along ``axis``),
        and ``fn`` must combine them element by element, returning leaves of the same shape.
        Only associativity is required; ``fn`` need not be commutative.
    elems : pytree of arrays
        The sequence to scan. Every leaf must have the same length along ``axis``.
    reverse : bool, optional
        If True, scan from the end towards the start. As in JAX this is exactly
        ``rev(associative_scan(fn, rev(elems)))`` along ``axis``, so the partial result from
        the later elements is ``fn``'s first argument: ``result[i] = fn(result[i + 1],
        elems[i])``, which matters when ``fn`` is not commutative.
    axis : int, optional
        The axis along which to scan (negative values count from the end); default 0.

    Returns
    -------
    pytree of arrays
        The inclusive scan, with the structure, shapes and dtypes of ``fn``'s results on
        ``elems``: entry ``i`` along ``axis`` combines ``elems[0], ..., elems[i]`` (or
        ``elems[i], ..., elems[n-1]`` when ``reverse`` is True).

    Raises
    ------
    TypeError
        If ``fn`` is not callable.
    ValueError
        If ``elems`` has no leaves, or its leaves differ in length along ``axis``.

    Examples
    --------
    >>> lax.associative_scan(lax.add, jnp.arange(5))
    Array([ 0,  1,  3,  6, 10], dtype=int32)
    >>> lax.associative_scan(lax.add, jnp.arange(5), reverse=True)
    Array([10, 10,  9,  7,  4], dtype=int32)

    A first-order linear recurrence ``h[t] = a[t] * h[t-1] + b[t]`` (with ``h[-1] = 0``):

    >>> def combine(x, y):
    ...     (a1, b1), (a2, b2) = x, y
    ...     return a1 * a2, a2 * b1 + b2
    >>> _, h = lax.associative_scan(combine, (a, b))
    """
    if not callable(fn):
        raise TypeError(f"lax.associative_scan: fn argument should be callable, got {fn!r} "
                        f"of type {type(fn).__name__}.")
    leaves, treedef = pytree.tree_flatten(elems)
    if not leaves:
        raise ValueError("lax.associative_scan: elems must contain at least one array, got "
                         f"{elems!r}.")
    leaves = [_as_array(x) for x in leaves]
    ndim = leaves[0].ndim
    axis = canonicalize_axis(axis, ndim, fun="lax.associative_scan")  # of the first leaf
    if any(x.ndim <= axis for x in leaves):
        raise ValueError("lax.associative_scan: every array in elems needs an axis "
                         f"{axis}; saw shapes {[tuple(x.shape) for x in leaves]}.")
    lengths = [int(x.shape[axis]) for x in leaves]
    if any(n != lengths[0] for n in lengths):
        raise ValueError("lax.associative_scan: array inputs must have the same size along "
                         f"axis {axis}; saw lengths {lengths} (shapes "
                         f"{[tuple(x.shape) for x in leaves]}).")
    if reverse:
        leaves = [shape_ops.rev(x, (axis,)) for x in leaves]

    def combine(a_leaves, b_leaves):
        out = fn(pytree.tree_unflatten(treedef, a_leaves),
                 pytree.tree_unflatten(treedef, b_leaves))
        out_leaves, out_tree = pytree.tree_flatten(out)
        if out_tree != treedef:
            raise TypeError("lax.associative_scan: fn must return a pytree with the "
                            f"structure of elems, {treedef}; got {out_tree}.")
        out_leaves = [_as_array(x) for x in out_leaves]
        want = int(a_leaves[0].shape[axis])
        for x in out_leaves:
            if x.ndim <= axis or int(x.shape[axis]) != want:
                raise ValueError("lax.associative_scan: fn must be vectorized and keep the "
                                 f"length of its operands along axis {axis} ({want}); it "
                                 f"returned shapes {[tuple(y.shape) for y in out_leaves]}.")
        return out_leaves

    def scan(xs):
        n = int(xs[0].shape[axis])
        if n < 2:
            return xs
        # Pairs (x0, x1), (x2, x3), ...: scanning them gives the results at odd positions.
        pairs = combine([shape_ops.slice_in_dim(x, 0, n - 1, 2, axis) for x in xs],
                        [shape_ops.slice_in_dim(x, 1, n, 2, axis) for x in xs])
        odds = scan(pairs)
        # Even positions 2, 4, ...: the odd result before each, combined with the element.
        n_rest = (n - 1) // 2  # number of even positions after 0
        if n_rest:
            rest = combine([shape_ops.slice_in_dim(o, 0, n_rest, 1, axis) for o in odds],
                           [shape_ops.slice_in_dim(x, 2, n, 2, axis) for x in xs])
            evens = [shape_ops.concatenate([shape_ops.slice_in_dim(x, 0, 1, 1, axis), r], axis)
                     for x, r in zip(xs, rest)]
        else:
            evens = [shape_ops.slice_in_dim(x, 0, 1, 1, axis) for x in xs]
        return [_interleave(e, o, axis) for e, o in zip(evens, odds)]

    out = scan(leaves)
    if reverse:
        out = [shape_ops.rev(x, (axis,)) for x in out]
    return pytree.tree_unflatten(treedef, out)
