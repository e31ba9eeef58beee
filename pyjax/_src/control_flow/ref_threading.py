"""Mutable array references (core/refs.py) used inside the bodies of ``scan``,
``while_loop`` and ``cond``/``switch`` (and so ``fori_loop``).

Each API function is wrapped: it first runs as usual. If tracing a body touched refs made
outside it, the trace fails with `RefsTouched` (before anything ran) and the wrapper runs the
construct again with those refs threaded through as values: an extra part of the carry for the
loops, an extra operand and result for the branches. Afterwards it stores the final values
into the refs. A ref found only while tracing the threaded version is added and the construct
is traced again. Refs passed as ``cond`` operands are closed over instead (as JAX allows);
refs in a loop's carry or ``xs`` are refused, as JAX refuses to return them.
"""
from __future__ import annotations

import functools

from pyjax._src.core import pytree
from pyjax._src.core import refs, traceback_util
from pyjax._src.core.refs import Ref

_MAX_ROUNDS = 16


def _handles(e):
    """Whether ``e`` came from the trace of a body of the construct being run here."""
    return e.depth == refs.depth() + 1 and bool(e.refs)


def _add(found, new):
    return found + [r for r in new if all(r is not f for f in found)]


def _no_refs(tree, fn, what):
    for leaf in pytree.tree_leaves(tree):
        if type(leaf) is Ref:
            raise ValueError(
                f"{fn} got a mutable array reference of type {leaf.aval} in its {what}, but "
                "mutable array references cannot be carried or returned; close over it in "
                "the body instead.")


def _run_threaded(run, e):
    """Run ``run(found)`` (the construct with the refs ``found`` threaded), starting from the
    refs of ``e`` and adding those its traces touch, until it goes through."""
    found = _add([], e.refs)
    for _ in range(_MAX_ROUNDS):
        try:
            return run(found)
        except refs.RefsTouched as e2:
            if not _handles(e2):
                raise
            found = _add(found, e2.refs)
    raise RuntimeError("the mutable array references used by a loop or branch body kept "
                       "changing from one trace to the next")


def _store(found, values, written):
    """Store the final values of the refs some trace of the body wrote."""
    for r, v, w in zip(found, values, written):
        if w:
            r._write(v)


def _note(written, t):
    for i, w in enumerate(t.written()):
        written[i] = written[i] or w


def scan_threading(scan):
    @functools.wraps(scan)
    def wrapped(f, init, xs=None, length=None, reverse=False, unroll=1,
                _split_transpose=False):
        _no_refs(init, "scan", "carry (init)")
        _no_refs(xs, "scan", "xs")
        try:
            return scan(f, init, xs, length, reverse, unroll, _split_transpose)
        except refs.RefsTouched as e:
            if not _handles(e):
                raise
            pending = e

        def run(found):
            written = [False] * len(found)

            def body(carry, x):
                c, vals = carry
                with refs.threaded(found, vals) as t:
                    out = f(c, x)
                    if not (isinstance(out, (tuple, list)) and len(out) == 2):
                        return out  # scan's own error names the malformed output
                    _note(written, t)
                    return (out[0], t.final()), out[1]
            (c, vals), ys = scan(body, (init, [r._read() for r in found]), xs, length,
                                 reverse, unroll, _split_transpose)
            _store(found, vals, written)
            return c, ys
        return _run_threaded(run, pending)
    return traceback_util.api_boundary(wrapped)  # the outermost boundary filters frames


def while_threading(while_loop):
    @functools.wraps(while_loop)
    def wrapped(cond_fun, body_fun, init_val):
        _no_refs(init_val, "while_loop", "init_val")
        try:
            return while_loop(cond_fun, body_fun, init_val)
        except refs.RefsTouched as e:
            if not _handles(e):
                raise
            pending = e

        def run(found):
            written = [False] * len(found)

            def cond2(carry):
                v, vals = carry
                with refs.threaded(found, vals) as t:
                    out = cond_fun(v)
                    if any(a is not b for a, b in zip(t.final(), vals)):
                        raise ValueError("while_loop's cond_fun wrote to a mutable array "
                                         "reference; only body_fun may write to refs")
                    return out

            def body2(carry):
                v, vals = carry
                with refs.threaded(found, vals) as t:
                    out = body_fun(v)
                    _note(written, t)
                    return out, t.final()
            v, vals = while_loop(cond2, body2, (init_val, [r._read() for r in found]))
            _store(found, vals, written)
            return v
        return _run_threaded(run, pending)
    return traceback_util.api_boundary(wrapped)  # the outermost boundary filters frames


def _close_over_refs(funs, operands):
    """Branch functions taking ``operands`` without their Ref leaves (closed over instead)."""
    leaves, tree = pytree.tree_flatten(operands)
    held = {i: x for i, x in enumerate(leaves) if type(x) is Ref}
    if not held:
        return funs, operands
    rest = tuple(x for i, x in enumerate(leaves) if i not in held)

    def wrap(fn):
        @functools.wraps(fn)
        def g(*rest_vals):
            it = iter(rest_vals)
            full = [held[i] if i in held else next(it) for i in range(len(leaves))]
            return fn(*pytree.tree_unflatten(tree, full))
        return g
    return [wrap(fn) for fn in funs], rest


def _threaded_branches(branches, found, written):
    def wrap(fn):
        @functools.wraps(fn)
        def g(vals, *ops):
            with refs.threaded(found, vals) as t:
                out = fn(*ops)
                _note(written, t)
                return out, t.final()
        return g
    return [wrap(fn) for fn in branches]


def cond_threading(cond, no_operand):
    @functools.wraps(cond)
    def wrapped(pred, true_fun, false_fun, *operands, operand=no_operand):
        if operand is not no_operand:
            if operands:
                return cond(pred, true_fun, false_fun, *operands, operand=operand)
            operands = (operand,)
        (true_fun, false_fun), operands = _close_over_refs([true_fun, false_fun], operands)
        try:
            return cond(pred, true_fun, false_fun, *operands)
        except refs.RefsTouched as e:
            if not _handles(e):
                raise
            pending = e

        def run(found):
            written = [False] * len(found)
            t2, f2 = _threaded_branches([true_fun, false_fun], found, written)
            out, vals = cond(pred, t2, f2, [r._read() for r in found], *operands)
            _store(found, vals, written)
            return out
        return _run_threaded(run, pending)
    return traceback_util.api_boundary(wrapped)  # the outermost boundary filters frames


def switch_threading(switch, no_operand):
    @functools.wraps(switch)
    def wrapped(index, branches, *operands, operand=no_operand):
        if operand is not no_operand:
            if operands:
                return switch(index, branches, *operands, operand=operand)
            operands = (operand,)
        try:
            branches = list(branches)
        except TypeError:
            return switch(index, branches, *operands)  # switch's own error
        branches, operands = _close_over_refs(branches, operands)
        try:
            return switch(index, branches, *operands)
        except refs.RefsTouched as e:
            if not _handles(e):
                raise
            pending = e

        def run(found):
            written = [False] * len(found)
            out, vals = switch(index, _threaded_branches(branches, found, written),
                               [r._read() for r in found], *operands)
            _store(found, vals, written)
            return out
        return _run_threaded(run, pending)
    return traceback_util.api_boundary(wrapped)  # the outermost boundary filters frames
