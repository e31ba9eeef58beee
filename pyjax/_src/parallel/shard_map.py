"""``shard_map``: a function written for one device's block, mapped over a mesh.

The body sees each device's block of the inputs (split as ``in_specs`` says) and may use
collectives over the mesh's axis names; its per-block results are put together as
``out_specs`` says. The meaning is that of nested ``vmap``s, one per manual mesh axis, over
the blocks: that is how pyjax computes it under every transformation (``jit``, ``grad``,
``vmap``), so it composes like any function; inside an SPMD ``jit`` XLA partitions the
result. An eager call with inputs on the mesh runs the same program over the mesh
(``jit`` with ``in_shardings``/``out_shardings`` from the specs).
"""
from __future__ import annotations

import contextlib
import math

from pyjax._src.core import pytree
from pyjax._src.core import trace as trace_mod
from pyjax._src.core.abstract import ShapeDtypeStruct
from pyjax._src.lax import parallel
from pyjax._src.core.sharding import (AbstractMesh, Mesh, PartitionSpec,
                                      current_mesh)
from pyjax._src.core.trace import aval_of
from pyjax._src.lax import shape_ops
from pyjax._src.transformations import vmap as vmap_mod
from pyjax._src.transformations.jit import eval_shape

__all__ = ["shard_map"]


def _is_spec(s):
    return s is None or isinstance(s, PartitionSpec)


def _spec_leaves(specs, tree, what):
    """One PartitionSpec per leaf of ``tree`` from the prefix ``specs``."""
    if _is_spec(specs):
        return [specs] * len(pytree.tree_leaves(tree))
    leaves, treedef = pytree.tree_flatten(specs, is_leaf=_is_spec)
    try:
        subtrees = treedef.flatten_up_to(tree)
    except ValueError as e:
        raise ValueError(f"shard_map {what} must be a tree prefix of the corresponding "
                         f"value, got {what}={specs!r} for a value of structure "
                         f"{pytree.tree_structure(tree)}: {e}") from None
    out = []
    for s, sub in zip(leaves, subtrees):
        out += [s] * len(pytree.tree_leaves(sub))
    return out


def shard_map(f=None, /, *, out_specs, in_specs=None, mesh=None, axis_names=frozenset(),
              check_vma=True, check_rep=None, auto=None):
    """Map ``f``, written for one device's blocks, over ``mesh`` (default: the current
    mesh): inputs are split as ``in_specs`` says, results joined as ``out_specs`` says."""
    if f is None:
        return lambda g: shard_map(g, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
                                   axis_names=axis_names, check_vma=check_vma,
                                   check_rep=check_rep, auto=auto)
    if not callable(f):
        raise TypeError(f"shard_map requires a callable, got {f!r}")
    if auto is not None:
        raise NotImplementedError("shard_map(auto=...) is not supported by pyjax; use "
                                  "axis_names= for the manual axes")
    return _ShardMapped(f, mesh, in_specs, out_specs, frozenset(axis_names),
                        bool(check_vma if check_rep is None else check_rep))


class _ShardMapped:
    def __init__(self, f, mesh, in_specs, out_specs, axis_names, check_vma=True):
        self.f, self.mesh, self.in_specs, self.out_specs = f, mesh, in_specs, out_specs
        self.axis_names = axis_names
        self.check_vma = check_vma  # (JAX refuses some collectives' axis_index_groups then)
        self.__name__ = getattr(f, "__name__", "shard_map_fun")
        self.__wrapped__ = f

    def _mesh(self):
        mesh = self.mesh if self.mesh is not None else current_mesh()
        if mesh is None:
            raise ValueError("shard_map needs a mesh: pass mesh=, or set one with "
                             "pyjax.sharding.set_mesh")
        if not isinstance(mesh, (Mesh, AbstractMesh)):
            raise TypeError(f"shard_map mesh= expects a Mesh, got {mesh!r}")
        return mesh

    def _arguments(self, args):
        """(mesh, manual axis names, leaves, in_tree, one in_spec per leaf)."""
        mesh = self._mesh()
        manual = [n for n in mesh.axis_names if not self.axis_names or n in self.axis_names]
        for n in self.axis_names:
            if n not in mesh.axis_names:
                raise ValueError(f"shard_map axis_names {sorted(self.axis_names)} contains "
                                 f"{n!r}, which is not an axis of the mesh {mesh!r}")
        in_specs = self.in_specs
        if in_specs is None:
            raise NotImplementedError("shard_map with in_specs=None (inferred from the "
                                      "arguments) is not supported by pyjax")
        if isinstance(in_specs, list):
            in_specs = tuple(in_specs)
        if (isinstance(in_specs, tuple) and not isinstance(in_specs, PartitionSpec)
                and len(in_specs) != len(args)):
            _bad_in_specs(in_specs, args)
        leaves, in_tree = pytree.tree_flatten(args)
        specs = _spec_leaves(in_specs, args, "in_specs")
        return mesh, manual, leaves, in_tree, specs

    def __call__(self, *args):
        mesh = self._mesh()
        if (isinstance(mesh, Mesh) and not (self.axis_names and
                                           set(self.axis_names) != set(mesh.axis_names))
                and trace_mod.is_eager()):
            from pyjax._src.parallel import shard_map_spmd
            return shard_map_spmd.call(self, args)
        return self._emulate(*args)

    def _emulate(self, *args):
        mesh, manual, leaves, in_tree, specs = self._arguments(args)
        sizes = dict(zip(mesh.axis_names, mesh.axis_sizes))
        prepared, present = [], []
        for i, (x, spec) in enumerate(zip(leaves, specs)):
            x, axes = _split_blocks(x, spec, manual, sizes, f"argument {i}")
            prepared.append(x)
            present.append(axes)
        out_store = []

        def body(*blocks):
            out = self.f(*pytree.tree_unflatten(in_tree, list(blocks)))
            out_leaves, out_tree = pytree.tree_flatten(out)
            out_store.append((out, out_tree))
            return out_leaves

        # The output structure (which out_specs must prefix) from an abstract run on blocks.
        block_avals = [_block_aval(x, axes) for x, axes in zip(prepared, present)]
        with contextlib.ExitStack() as stack:
            for n in manual:
                stack.enter_context(parallel.bind_axis(n, sizes[n], self.check_vma))
            eval_shape(body, *block_avals)
        out_value, out_tree = out_store[-1]
        out_specs = _spec_leaves(self.out_specs, out_value, "out_specs")
        for spec in out_specs:
            for n in _spec_names(spec):
                if n not in sizes:
                    raise ValueError(f"shard_map out_specs {spec} names the axis {n!r}, which "
                                     f"is not in the mesh (axes {tuple(sizes)})")
        fn = body
        # nested vmaps, the outermost over the first manual axis
        for name in reversed(manual):
            in_axes = tuple(0 if name in axes else None for axes in present)
            out_axes = [0 if _names_axis(s, name) else None for s in out_specs]
            fn = vmap_mod.vmap(fn, in_axes=in_axes, out_axes=out_axes, axis_name=name,
                               axis_size=sizes[name])
        try:
            outs = fn(*prepared)
        except ValueError as e:
            if "out_axes is None" not in str(e):
                raise
            raise ValueError(
                f"shard_map applied to the function {self.__name__!r} was given out_specs "
                f"{self.out_specs} which require replication which can't be statically "
                f"inferred given the mesh: the mesh has axes {dict(sizes)}, and a result "
                f"whose out_spec leaves out a mesh axis must not vary along it (reduce it "
                f"with a collective such as psum, or name the axis in out_specs). ({e})") \
                from None
        results = [_join_blocks(y, spec, manual, sizes) for y, spec in zip(outs, out_specs)]
        return pytree.tree_unflatten(out_tree, results)


def _block_aval(x, axes):
    av = aval_of(x)
    return ShapeDtypeStruct(av.shape[len(axes):], av.dtype, weak_type=av.weak_type)


def _spec_names(spec):
    if spec is None:
        return []
    out = []
    for p in spec:
        if isinstance(p, str):
            out.append(p)
        elif isinstance(p, tuple):
            out += list(p)
    return out


def _bad_in_specs(in_specs, args):
    raise ValueError(f"shard_map in_specs has {len(in_specs)} entries but the function was "
                     f"called with {len(args)} positional arguments (in_specs={in_specs!r})")


def _names_axis(spec, name):
    if spec is None:
        return False
    for p in spec:
        if p == name or (isinstance(p, tuple) and name in p):
            return True
    return False


def _split_blocks(x, spec, manual, sizes, what):
    """``x`` reshaped so that each manual mesh axis its spec names is a leading axis (in mesh
    order), followed by the block; returns (value, names of those axes)."""
    av = aval_of(x)
    if spec is None:
        spec = PartitionSpec()
    norm = spec._normalized(av.ndim)
    shape = list(av.shape)
    for d, names in enumerate(norm):
        for n in names:
            if n not in sizes:
                raise ValueError(f"shard_map in_specs {spec} for {what} names the axis {n!r}, "
                                 f"which is not in the mesh (axes {tuple(sizes)})")
        k = math.prod(sizes[n] for n in names)
        if shape[d] % k:
            raise ValueError(f"shard_map in_specs {spec} for {what} of shape {tuple(shape)}: "
                             f"dimension {d} of size {shape[d]} is not divisible by the "
                             f"size {k} of mesh axes {names}")
    # split each sharded dim d into (sizes of its names..., block)
    new_shape, axis_pos = [], {}
    for d, names in enumerate(norm):
        for n in names:
            axis_pos[n] = len(new_shape)
            new_shape.append(sizes[n])
        new_shape.append(shape[d] // math.prod(sizes[n] for n in names))
    present = [n for n in manual if n in axis_pos]
    if not present:
        return x, present
    x = shape_ops.reshape(x, tuple(new_shape))
    lead = [axis_pos[n] for n in present]
    rest = [i for i in range(len(new_shape)) if i not in lead]
    x = shape_ops.transpose(x, tuple(lead + rest))
    return x, present


def _join_blocks(y, spec, manual, sizes):
    """Inverse of ``_split_blocks`` for a result with leading axes for the manual axes its
    spec names (in mesh order)."""
    if spec is None:
        spec = PartitionSpec()
    present = [n for n in manual if _names_axis(spec, n)]
    if not present:
        return y
    av = aval_of(y)
    block_nd = av.ndim - len(present)
    norm = spec._normalized(block_nd)
    # target layout: for each block dim d, (its names' axes in spec order..., d)
    order = []
    for d, names in enumerate(norm):
        for n in names:
            if n in present:
                order.append(present.index(n))
        order.append(len(present) + d)
    y = shape_ops.transpose(y, tuple(order))
    shape = []
    for d, names in enumerate(norm):
        shape.append(av.shape[len(present) + d] * math.prod(sizes[n] for n in names
                                                          if n in present))
    return shape_ops.reshape(y, tuple(shape))

