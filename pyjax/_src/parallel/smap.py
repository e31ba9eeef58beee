"""``jax.smap``: ``shard_map`` over one mesh axis, with ``vmap``-style ``in_axes``/``out_axes``.

``smap(f, in_axes=0, out_axes=0, axis_name="x")(*args)`` is ``shard_map`` on the current mesh
(``jax.sharding.set_mesh``/``use_mesh``) with ``axis_name`` manual: array axis ``in_axes`` of
each argument is split over the mesh axis (``None``: replicated), ``f`` sees the blocks, and
its results are joined along ``out_axes``. JAX infers ``in_axes`` from the arguments' shardings
in Explicit mode only; pyjax has no Explicit mode, so ``in_axes`` must be given."""
from __future__ import annotations

from pyjax._src.core import pytree
from pyjax._src.core.axes import canonicalize_axis
from pyjax._src.core.sharding import PartitionSpec
from pyjax._src.core.trace import aval_of
from pyjax._src.parallel.shard_map import shard_map

__all__ = ["smap"]


class _Infer:
    def __repr__(self):
        return "Infer"


_INFER = _Infer()


def _spec(axis, ndim, axis_name, what):
    if axis is None:
        return PartitionSpec()
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"smap: {what} entries must be ints or None, got {axis!r}")
    axis = canonicalize_axis(axis, ndim, what, "smap")
    return PartitionSpec(*([None] * axis + [axis_name]))


def smap(f=None, /, *, in_axes=_INFER, out_axes, axis_name):
    """``f`` mapped over the mesh axis ``axis_name``, one block of each argument per member
    (see the module doc)."""
    if f is None:
        return lambda g: smap(g, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)
    if not callable(f):
        raise TypeError(f"smap requires a callable, got {f!r}")
    if in_axes is _INFER:
        raise NotImplementedError("smap: in_axes must be given (JAX infers it from the "
                                  "arguments' shardings in Explicit mode, which pyjax lacks)")

    def out_spec(ax):
        if ax is None:
            return PartitionSpec()
        if isinstance(ax, bool) or not isinstance(ax, int) or ax < 0:
            raise NotImplementedError(f"smap: out_axes entries must be None or nonnegative "
                                      f"ints in pyjax, got {ax!r}")
        return PartitionSpec(*([None] * ax + [axis_name]))

    out_specs = pytree.tree_map(out_spec, out_axes, is_leaf=lambda x: x is None)

    def mapped(*args):
        if isinstance(in_axes, (tuple, list)):
            if len(in_axes) != len(args):
                raise ValueError(f"smap: in_axes has {len(in_axes)} entries for "
                                 f"{len(args)} positional arguments")
            per_arg = list(in_axes)
        else:
            per_arg = [in_axes] * len(args)
        in_specs = tuple(
            pytree.tree_map(lambda x, ax=ax: _spec(ax, len(aval_of(x).shape), axis_name,
                                                   "in_axes"), arg)
            for ax, arg in zip(per_arg, args))
        return shard_map(f, in_specs=in_specs, out_specs=out_specs,
                         axis_names=frozenset({axis_name}))(*args)

    mapped.__name__ = f"smap({getattr(f, '__name__', 'f')})"
    mapped.__wrapped__ = f
    return mapped
