"""What the control-flow primitives (cond, while, scan) share.

* ``trace_fun``: trace a user function on pytrees of abstract values to a const-free
  ``ClosedJaxpr`` whose leading inputs are the values it closed over (``consts``, passed as
  operands, so tracers of outer transformations flow in like any other operand).
* ``check_carry`` / ``check_branches``: JAX-style TypeErrors when a loop body's carry output or
  a branch's output differs from what it must match, pointing at the differing leaf.
* ``reorder``: a body Jaxpr with its inputs and outputs permuted (cached).

The whole-Jaxpr transformations with the *per-output* forcing that the loop fixpoints need are
``ad.jvp_jaxpr(..., instantiate)``, ``pe.partial_eval_jaxpr(..., instantiate=)`` and
``batching.batch_jaxpr(..., force)`` in ``interpreters/``.
"""
from __future__ import annotations

import weakref

from pyjax._src.core import pytree
from pyjax._src.core import trace as trace_mod
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, cache_for
from pyjax._src.core.trace import Tracer, aval_of
from pyjax._src.interpreters import staging
from pyjax._src.lax import batch_util

_state = trace_mod._state


# ---- tracing user functions ----

_trace_cache: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def trace_fun(fun, in_tree, in_avals, name, transform):
    """Trace ``fun(*tree_unflatten(in_tree, args))`` at ``in_avals``.

    Returns ``(jaxpr, consts, out_tree)``: ``jaxpr`` is a ClosedJaxpr without consts taking
    ``consts`` first, then the flat arguments. Cached per (fun, in_tree, avals) unless the
    function closed over tracers."""
    key = (in_tree, tuple(in_avals), trace_mod.dtypes.x64_enabled())
    try:
        per = _trace_cache.get(fun)
    except TypeError:  # not weak-referenceable
        per = None
    if per is not None:
        hit = per.get(key)
        if hit is not None:
            return hit
    store = []

    def flat_fun(*xs):
        out = fun(*pytree.tree_unflatten(in_tree, xs))
        leaves, out_tree = pytree.tree_flatten(out)
        store.append(out_tree)
        return leaves

    dbg = staging.DebugInfo(getattr(fun, "__name__", "fun"), None, transform)
    closed = staging.trace_to_jaxpr(flat_fun, list(in_avals), dbg)
    for v in closed.jaxpr.outvars:
        if not isinstance(v.aval, ShapedArray):
            raise TypeError(f"{name} returned a value that is not an array: {v.aval}")
    jaxpr, consts = staging.convert_constvars_jaxpr(closed)
    hit = (jaxpr, consts, store[0])
    if not any(isinstance(c, Tracer) for c in consts):
        try:
            if per is None:
                per = _trace_cache[fun] = {}
            per[key] = hit
        except TypeError:
            pass
    return hit


def forward_unchanged_carries(jaxpr, num_consts, init_leaves, carry_avals, outs):
    """``outs`` with each carry the body returns unchanged replaced by the caller's own init
    leaf (as JAX 0.10.2 forwards them: ``fori_loop(0, 3, lambda i, c: c, 5)`` is the Python
    int 5, not an Array). ``jaxpr`` takes ``num_consts`` consts, then the carries."""
    j = jaxpr.jaxpr
    outs = list(outs)
    for i, (x, a) in enumerate(zip(init_leaves, carry_avals)):
        if j.outvars[i] is j.invars[num_consts + i] and aval_of(x) == a:
            outs[i] = x
    return outs


def flatten_avals(tree):
    """``(leaves' avals, treedef)`` of a pytree of values."""
    leaves, treedef = pytree.tree_flatten(tree)
    return leaves, treedef, [aval_of(x) for x in leaves]


# ---- type errors in JAX's words ----

def _leaf_paths(treedef):
    paths = pytree.tree_flatten_with_path(pytree.tree_unflatten(treedef, [0] * treedef.num_leaves))
    return [pytree.keystr(p) for p, _ in paths[0]]


def _type_str(aval):
    s = aval.str_short(short_dtypes=False) if explicit_spec(aval) is not None else \
        f"{aval.dtype.name}[{','.join(str(d) for d in aval.shape)}]"
    return s + (" (weakly typed)" if aval.weak_type else "")


from pyjax._src.core.sharding_rules import explicit_spec  # noqa: E402


def _differences(what_in, what_out, name_in, paths, avals_in, avals_out):
    lines = []
    for p, a, b in zip(paths, avals_in, avals_out):
        if _same_type(a, b):
            continue
        why = ("the shardings do not match" if a.shape == b.shape and a.dtype == b.dtype else
               "the shapes do not match" if a.shape != b.shape and a.dtype == b.dtype else
               "the dtypes do not match" if a.shape == b.shape else
               "the shapes and dtypes do not match")
        where = f" {name_in}{p}" if p or name_in else ""
        lines.append(f"  * the {what_in} component{where} has type {_type_str(a)} but the "
                     f"corresponding {what_out} component has type {_type_str(b)}, so {why}")
    return lines


def _same_type(a, b):
    """Equal shapes, dtypes and shardings on Explicit mesh axes (sharding in types)."""
    return (a.shape == b.shape and a.dtype == b.dtype
            and explicit_spec(a) == explicit_spec(b))


def check_carry(fn_name, in_tree, in_avals, out_tree, out_avals, carry_name="carry"):
    """Raise TypeError if a loop body's carry output differs from its carry input."""
    if in_tree == out_tree and all(_same_type(a, b) for a, b in zip(in_avals, out_avals)):
        return
    if in_tree != out_tree:
        raise TypeError(
            f"{fn_name} function carry input and carry output must have the same pytree "
            f"structure, but they differ:\n\n  the input carry has structure {in_tree} but the "
            f"carry output has structure {out_tree}.\n\nRevise the function so that the carry "
            "output has the same pytree structure as the carry input.")
    lines = _differences("input carry", "output carry", carry_name, _leaf_paths(in_tree),
                         in_avals, out_avals)
    if lines:
        raise TypeError(
            f"{fn_name} function carry input and carry output must have equal types (e.g. "
            "shapes and dtypes of arrays), but they differ:\n\n" + "\n".join(lines)
            + "\n\nRevise the function so that all output types match the corresponding "
            "input types.")


def check_branches(kind, trees, avals_list):
    """Raise TypeError if the branches of cond/switch return different types."""
    t0, a0 = trees[0], avals_list[0]
    for i, (t, a) in enumerate(zip(trees[1:], avals_list[1:]), 1):
        other = "false_fun" if kind == "cond" else f"branch {i}"
        first = "true_fun" if kind == "cond" else "branch 0"
        if t != t0:
            raise TypeError(
                f"{kind} branches must have equal output types but they differ:\n\n  {first} "
                f"output has pytree structure {t0} but {other} output has structure {t}.")
        lines = _differences(f"{first} output", f"{other} output", "", _leaf_paths(t0), a0, a)
        if lines:
            raise TypeError(f"{kind} branches must have equal output types but they differ:\n\n"
                            + "\n".join(lines))


def promote_weak_carry(init_avals, out_avals):
    """The carry avals to retrace a body with when a weakly typed initial value came back with
    another dtype, as JAX does (its carry to the result dtype, strongly typed); None when nothing
    changes. A weak carry that came back strong with the same dtype is not retraced: like JAX,
    the loop's result takes the body's output weak types from the one trace."""
    from pyjax._src.core import dtypes
    new, changed = [], False
    for a, b in zip(init_avals, out_avals):
        if a.weak_type and a.shape == b.shape and a.dtype != b.dtype:
            new.append(ShapedArray(a.shape, dtypes.result_type(a.dtype, b.dtype), False))
            changed = True
        else:
            new.append(a)
    return new if changed else None


def cast_to(x, aval):
    """``x`` converted to ``aval``'s dtype and weak type when they differ."""
    a = aval_of(x)
    if a.dtype == aval.dtype and a.weak_type == aval.weak_type:
        return x
    from pyjax._src.lax.elementwise import convert_element_type
    return convert_element_type(x, aval.dtype, aval.weak_type)


# ---- derived body Jaxprs ----

_reorder_cache: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def reorder(closed: ClosedJaxpr, in_order, out_order=None):
    """``closed`` taking its inputs as ``[invars[i] for i in in_order]`` and returning
    ``[outvars[i] for i in out_order]`` (all of them, in order, by default); cached."""
    j = closed.jaxpr
    in_order = tuple(in_order)
    out_order = tuple(range(len(j.outvars))) if out_order is None else tuple(out_order)
    if in_order == tuple(range(len(j.invars))) and out_order == tuple(range(len(j.outvars))):
        return closed
    per = cache_for(_reorder_cache, closed)
    hit = per.get((in_order, out_order))
    if hit is None:
        hit = per[(in_order, out_order)] = ClosedJaxpr(
            Jaxpr([], [j.invars[i] for i in in_order], [j.outvars[i] for i in out_order],
                  j.eqns, j.debug_info), [])
    return hit


def batched_aval(aval, size, dim=0):
    s = aval.shape
    return aval.update(shape=s[:dim] + (size,) + s[dim:])


def move_to(x, d, dst, size):
    """``x`` batched at ``d`` (or ``not_mapped``) as a value batched at ``dst``."""
    return batch_util.bdim_to(x, d, dst, size)
