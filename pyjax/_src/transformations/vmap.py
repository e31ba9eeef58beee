"""``vmap``: vectorize a function written for one example over a mapped axis of its arguments."""
from __future__ import annotations

import functools
import inspect
import operator

import numpy as np

from pyjax._src.core import dtypes, pytree, refs
from pyjax._src.core import pytree_data
from pyjax._src.core.config import config
from pyjax._src.core import trace as trace_mod
from pyjax._src.core.traceback_util import api_boundary
from pyjax._src.core.refs import Ref
from pyjax._src.core.rules import not_mapped
from pyjax._src.core.trace import aval_of
from pyjax._src.interpreters import batching
from pyjax._src.lax import parallel

__all__ = ["vmap"]

_is_none = lambda x: x is None  # noqa: E731


def _check_axes_spec(spec, what):
    for leaf in pytree.tree_leaves(spec, is_leaf=_is_none):
        if leaf is not None and (not isinstance(leaf, (int, np.integer))
                                 or isinstance(leaf, bool)):
            raise TypeError(f"vmap {what} must be an int, None, or (nested) container with "
                             f"those types as leaves, but got {spec!r}.")


def _broadcast_prefix(spec, tree, what, tree_desc):
    """One axis (int or None) per leaf of ``tree`` from the prefix ``spec``."""
    spec_leaves, spec_def = pytree.tree_flatten(spec, is_leaf=_is_none)
    try:
        subtrees = spec_def.flatten_up_to(tree)
    except ValueError as e:
        raise ValueError(
            f"vmap {what} specification must be a tree prefix of the corresponding value, got "
            f"specification {spec!r} for value tree {pytree.tree_structure(tree)} "
            f"({tree_desc}).\n({e})") from None
    out = []
    for ax, sub in zip(spec_leaves, subtrees):
        out += [ax] * len(pytree.tree_leaves(sub))
    return out


def _arg_names(fun, args):
    try:
        sig = inspect.signature(fun)
        pos = [p.name for p in sig.parameters.values()
               if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        var = [p.name for p in sig.parameters.values() if p.kind == p.VAR_POSITIONAL]
    except (TypeError, ValueError):
        pos, var = [], []
    names = []
    for i in range(len(args)):
        if i < len(pos):
            names.append(pos[i])
        elif var:
            names.append(f"{var[0]}[{i - len(pos)}]")
        else:
            names.append(f"args[{i}]")
    return names


def _leaf_descriptions(fun, args, kwargs):
    names = _arg_names(fun, args)
    out = []
    for name, a in zip(names, args):
        for path, _ in pytree.tree_flatten_with_path(a)[0]:
            out.append(name + pytree.keystr(path))
    for path, _ in pytree.tree_flatten_with_path(kwargs)[0]:
        out.append(pytree.keystr(path, simple=True))
    return out


def _type_str(x):
    dt = getattr(x, "dtype", None)
    if dt is not None and dtypes.issubdtype(dt, dtypes.prng_key):  # a key array
        return f"{dt}[{','.join(map(str, x.shape))}]"
    return aval_of(x).str_short()


def _check_spmd_axis_name(names):
    for n in names if isinstance(names, (tuple, list)) else (names,):
        if not isinstance(n, str):
            raise TypeError(f"vmap spmd_axis_name must be a mesh axis name (str) or a tuple "
                            f"of them, got {names!r}")


def _refuse_explicit_axes(spmd_axis_name, leaves):
    """Under sharding in types JAX puts the spmd axis in the batched values' types; pyjax
    does not, so it refuses rather than give other types."""
    from pyjax._src.core.sharded_array import ShardedShapedArray
    from pyjax._src.core.sharding import get_abstract_mesh
    explicit = bool(get_abstract_mesh().explicit_axes) or any(
        isinstance(aval_of(x), ShardedShapedArray) and aval_of(x).sharding.mesh.explicit_axes
        for x in leaves)
    if explicit:
        raise NotImplementedError(
            f"vmap(spmd_axis_name={spmd_axis_name!r}) over a mesh with Explicit axes "
            "(sharding in types) is not supported by pyjax; use Auto axes")


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    """Vectorize ``fun`` over a mapped axis of its arguments.

    ``fun`` is written for one example; ``vmap(fun)`` takes arguments with an extra axis and
    returns results with one, without a Python loop: every primitive is applied to the whole
    batch (matrix-vector work becomes matrix-matrix work).

    Args:
      fun: the function to vectorize (pytrees of arrays in and out).
      in_axes: which axis of each argument is mapped: an int (negative counts from the end),
        ``None`` (the argument is not mapped and is passed whole to every example), or a pytree
        prefix of the positional arguments' tuple with those as leaves. Keyword arguments are
        always mapped over axis 0.
      out_axes: where the mapped axis goes in each output: an int, ``None`` (the output must
        not depend on the mapped axis), or a pytree prefix of the output.
      axis_name: a name for the mapped axis, for collectives such as ``lax.psum``.
      axis_size: the size of the mapped axis; needed when no argument is mapped.
      spmd_axis_name: a mesh axis name (or a tuple of them) over which the mapped axis is
        split wherever ``fun`` constrains a layout (``with_sharding_constraint``,
        ``device_put`` to a NamedSharding), as JAX's. Values are unchanged. Explicit-axes
        (sharding-in-types) meshes are not supported with it (NotImplementedError).

    Returns:
      The batched version of ``fun``.
    """
    if not callable(fun):
        raise TypeError(f"vmap requires a callable as its first argument, got {fun!r}")
    if spmd_axis_name is not None:
        _check_spmd_axis_name(spmd_axis_name)
    if isinstance(in_axes, list):  # JAX treats a top-level list as a tuple
        in_axes = tuple(in_axes)
    _check_axes_spec(in_axes, "in_axes")
    _check_axes_spec(out_axes, "out_axes")
    if axis_size is not None:
        try:  # operator.index: axis_size=1.5 is refused, not truncated
            axis_size = operator.index(axis_size)
        except TypeError:
            raise TypeError(f"vmap axis_size must be an int, got {axis_size!r}") from None
        if axis_size < 0:
            raise ValueError(f"vmap axis_size must be non-negative, got {axis_size}")

    @functools.wraps(fun)
    def vmap_f(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(
                "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                f"positional arguments passed to the function, but got len(in_axes)="
                f"{len(in_axes)}, len(args)={len(args)} (in_axes={in_axes!r}).")
        leaves, in_tree = pytree.tree_flatten((args, kwargs))
        axes = _broadcast_prefix(in_axes, args, "in_axes",
                                 f"the positional arguments of {_fun_name(fun)}")
        axes += [0] * (len(leaves) - len(axes))
        # axes of a key array count its own dims, not its key data's trailing ones
        trailing = pytree_data.data_trailing_shapes(in_tree)
        descs = None
        sizes = []
        canon = []
        for i, (x, ax) in enumerate(zip(leaves, axes)):
            if ax is None:
                canon.append(not_mapped)
                continue
            shape = tuple(aval_of(x).shape)
            nd = len(shape) - (len(trailing[i]) if trailing else 0)
            if not -nd <= ax < nd:
                shape = shape[:nd]
                descs = descs or _leaf_descriptions(fun, args, kwargs)
                raise ValueError(
                    f"vmap was requested to map its argument along axis {ax}, which implies "
                    f"that its rank should be at least {ax + 1 if ax >= 0 else -ax}, but is "
                    f"only {nd} (its shape is {shape}): argument {descs[i]}.")
            ax %= nd
            canon.append(ax)
            sizes.append((i, ax, shape[ax]))
        size = _mapped_size(fun, args, kwargs, leaves, sizes, axis_size)
        if spmd_axis_name is not None:
            _refuse_explicit_axes(spmd_axis_name, leaves)
        axis_data = batching.AxisData(axis_name, size, spmd_axis_name)
        trace = batching.BatchTrace(trace_mod._state.trace, axis_data)
        batched_refs = []  # (caller's ref, the per-example ref standing in for it, axis)
        in_tracers = [_wrap_leaf(trace, x, d, batched_refs) for x, d in zip(leaves, canon)]
        a, kw = pytree.tree_unflatten(in_tree, in_tracers)
        try:
            with trace_mod.set_current_trace(trace):
                if axis_name is not None:
                    with parallel.bind_axis(axis_name, size):
                        out = fun(*a, **kw)
                else:
                    out = fun(*a, **kw)
        finally:
            trace.finish()
        _store_batched_refs(trace, batched_refs, size)
        out_leaves, out_tree = pytree.tree_flatten(out)
        oaxes = _broadcast_prefix(out_axes, out, "out_axes", f"the output of {_fun_name(fun)}")
        out_trailing = pytree_data.data_trailing_shapes(out_tree)
        results = []
        for j, (o, oax) in enumerate(zip(out_leaves, oaxes)):
            val, d = trace.unwrap(o)
            if oax is None:
                if d is not not_mapped:
                    path = pytree.keystr(pytree.tree_flatten_with_path(out)[0][j][0])
                    raise ValueError(
                        f"vmap has mapped output but out_axes is None: output{path or ''} of "
                        f"{_fun_name(fun)} depends on the mapped axis"
                        f"{'' if axis_name is None else f' {axis_name!r}'}, so it cannot be "
                        "returned unmapped. Use an int out_axes for it, or make it "
                        "independent of the mapped inputs.")
                results.append(val)
                continue
            nd = len(aval_of(val).shape) + (d is not_mapped)
            if out_trailing:
                nd -= len(out_trailing[j])
            if not -nd <= oax < nd:
                raise ValueError(
                    f"vmap out_axes {oax} is out of bounds for an output of rank {nd - 1} "
                    f"(batched rank {nd}) of {_fun_name(fun)}.")
            oax %= nd
            if d is not_mapped:
                results.append(batching.broadcast_batched(val, size, oax))
            else:
                results.append(batching.move_axis(val, d, oax))
        if config.jax_check_tracer_leaks:
            del in_tracers, a, kw, out, out_leaves, o, val
            trace_mod.check_no_leaks(trace)
        return pytree.tree_unflatten(out_tree, results)

    vmap_f.__wrapped__ = fun
    return api_boundary(vmap_f)


def _wrap_leaf(trace, x, d, batched_refs):
    """An argument leaf as the function sees it. A mapped mutable array reference becomes a
    ref of one example's slice (its writes are stored back batched); an unmapped one is passed
    as it is (writing a batched value into it raises, as in JAX)."""
    if type(x) is not Ref:
        return trace.wrap(x, d)
    if d is not_mapped:
        return x
    whole = refs.inner_aval_of(x)
    one = whole.update(shape=whole.shape[:d] + whole.shape[d + 1:])
    inner = Ref(trace.wrap(x._read(), d), one)
    inner._trace = trace
    batched_refs.append((x, inner, d, inner._value))
    return inner


def _store_batched_refs(trace, batched_refs, size):
    for outer, inner, d, start in batched_refs:
        if inner._value is start:
            continue  # only read
        val, vd = trace.unwrap(inner._value)
        outer._write(batching.broadcast_batched(val, size, d) if vd is not_mapped
                     else batching.move_axis(val, vd, d))


def _fun_name(fun):
    return getattr(fun, "__name__", repr(fun))


def _mapped_size(fun, args, kwargs, leaves, sizes, axis_size):
    if not sizes:
        if axis_size is not None:
            return axis_size
        if not leaves:
            raise ValueError(
                f"vmap wrapped function must be passed at least one argument containing an "
                f"array, got empty *args={args} and **kwargs={kwargs}; or give axis_size.")
        raise ValueError("vmap must have at least one non-None value in in_axes (or be given "
                         "axis_size)")
    distinct = {s for _, _, s in sizes}
    if len(distinct) == 1 and (axis_size is None or axis_size in distinct):
        return sizes[0][2]
    descs = _leaf_descriptions(fun, args, kwargs)
    # a key array has one data leaf: the user view's leaves line up with ``leaves``
    leaves = pytree.user_tree_leaves((args, kwargs))
    lines = [f"  * axis {ax} of argument {descs[i]} of type {_type_str(leaves[i])} has size "
             f"{s}" for i, ax, s in sizes]
    head = "vmap got inconsistent sizes for array axes to be mapped:"
    if axis_size is not None:
        head = f"vmap got axis_size={axis_size} but the mapped axes have other sizes:"
    raise ValueError(head + "\n" + ";\n".join(lines))
