"""An eager ``shard_map`` call as a manual SPMD program over its mesh.

Each argument enters ``@main`` laid out as its in_spec says (``sdy.sharding``); the body is
an ``sdy.manual_computation`` over every mesh axis (Shardy's form of shard_map: its region
sees the blocks), lowered with the mesh axes bound to partition positions (collectives carry
channel handles and global device ids); its results leave laid out as the out_specs say.
One compile per signature, one Execute per call.

Which values a call accepts and what it returns is decided by the vmap form
(``shard_map._ShardMapped._emulate``), traced abstractly once per signature: its errors
(indivisible dimensions, unknown axes, a result that varies along an axis its out_spec leaves
out) are the ones raised here too.
"""
from __future__ import annotations

import contextlib

import numpy as np

from pyjax._src import runtime
from pyjax._src.core import pytree
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.config import config
from pyjax._src.core.sharding import NamedSharding, PartitionSpec
from pyjax._src.dispatch import compiler
from pyjax._src.dispatch import eager as dispatch
from pyjax._src.interpreters import lowering, staging
from pyjax._src.lax import collective_lowering as cl
from pyjax._src.lax import parallel
from pyjax._src.lowering import mlir
from pyjax._src.transformations import spmd
from pyjax._src.transformations.jit import eval_shape


def call(sm, args):
    mesh, manual, leaves, in_tree, specs = sm._arguments(args)
    arrays = [x if isinstance(x, ArrayImpl) else dispatch.to_array(x) for x in leaves]
    key = (in_tree, tuple(a.aval for a in arrays), config.jax_enable_x64, mesh)
    cache = sm.__dict__.setdefault("_programs", {})
    prog = cache.get(key)
    if prog is None:
        prog = cache[key] = _compile(sm, mesh, args, arrays, in_tree, specs)
    return spmd.run(prog, arrays)


def _compile(sm, mesh, args, arrays, in_tree, specs):
    out_shape = eval_shape(sm._emulate, *args)  # checks, and the global result avals
    out_leaves, out_tree = pytree.tree_flatten(out_shape)
    out_specs = _out_specs(sm, out_shape, len(out_leaves))
    in_sh = [NamedSharding(mesh, s if s is not None else PartitionSpec()) for s in specs]
    out_sh = [NamedSharding(mesh, s if s is not None else PartitionSpec()) for s in out_specs]
    sizes = dict(zip(mesh.axis_names, mesh.axis_sizes))
    block_avals = [ShapedArray(s.shard_shape(a.shape), a.dtype, a.weak_type)
                   for a, s in zip([x.aval for x in arrays], in_sh)]

    def body(*blocks):
        out = sm.f(*pytree.tree_unflatten(in_tree, list(blocks)))
        return pytree.tree_leaves(out)

    with contextlib.ExitStack() as stack:
        for n in mesh.axis_names:
            stack.enter_context(parallel.bind_axis(n, sizes[n], sm.check_vma))
        closed = staging.trace_to_jaxpr(body, block_avals,
                                        staging.DebugInfo(sm.__name__, None, "shard_map"))
    out_avals = [ShapedArray(tuple(o.shape), o.dtype, getattr(o, "weak_type", False))
                 for o in out_leaves]
    text = _module(sm.__name__, closed, mesh, [x.aval for x in arrays], in_sh, out_avals,
                   out_sh)
    compiler.compile_count[0] += 1
    exe = runtime.get_client().compile(
        text, [(a.dtype, s.shard_shape(a.shape)) for a, s in zip([x.aval for x in arrays],
                                                                 in_sh)],
        [(a.dtype, s.shard_shape(a.shape)) for a, s in zip(out_avals, out_sh)],
        num_partitions=mesh.size, use_spmd_partitioning=True, use_shardy_partitioner=True,
        device_assignment=[d.id for d in mesh._flat_devices])
    prog = spmd._Program()
    prog.exe, prog.mesh = exe, mesh
    prog.in_shardings, prog.out_shardings = tuple(in_sh), tuple(out_sh)
    prog.const_shards = []
    prog.out_avals = tuple(out_avals)
    prog.out_tree = out_tree
    return prog


def _out_specs(sm, out_shape, n):
    from pyjax._src.parallel.shard_map import _spec_leaves
    return _spec_leaves(sm.out_specs, out_shape, "out_specs")[:n]


def _module(name, closed, mesh, in_avals, in_sh, out_avals, out_sh):
    module = mlir.Module(mlir.sanitize_name(f"shard_map_{name}"), attrs={
        "mhlo.num_partitions": f"{mesh.size} : i32", "mhlo.num_replicas": "1 : i32"})
    module.unique_name("main")
    with cl.spmd_lowering(mesh):
        shard = lambda s, a: cl.sdy_sharding(s, a.ndim)  # noqa: E731
        arg_attrs = {i: f"sdy.sharding = {shard(s, a)}"
                     for i, (a, s) in enumerate(zip(in_avals, in_sh))}
        res_attrs = {i: f"sdy.sharding = {shard(s, a)}"
                     for i, (a, s) in enumerate(zip(out_avals, out_sh))}
        fn = mlir.Function("main", in_avals, public=True, arg_attrs=arg_attrs,
                           result_attrs=res_attrs)
        b = fn.block
        body = b.region(closed.jaxpr.in_avals)  # the blocks, one device's view
        consts = [body.constant(np.asarray(c), v.aval)
                  for c, v in zip(closed.consts, closed.jaxpr.constvars)]
        with cl.lowering_axes(mesh.axis_names, mesh.axis_sizes, manual=True):
            outs = lowering.lower_jaxpr(body, module, closed.jaxpr, consts, body.args)
        body.ret(outs, "sdy.return")
        per_value = lambda shs, avs: "#sdy.sharding_per_value<[" + ", ".join(  # noqa: E731
            s._sdy_sharding(a.ndim, cl.mesh_symbol(mesh)) for s, a in zip(shs, avs)) + "]>"
        manual = ", ".join(f'"{n}"' for n in mesh.axis_names)
        results = b.op("sdy.manual_computation", fn.args, list(out_avals), regions=[body],
                       attrs={"in_shardings": per_value(in_sh, in_avals),
                              "out_shardings": per_value(out_sh, out_avals),
                              "manual_axes": f"#sdy<manual_axes{{{manual}}}>"})
        fn.finish(results)
        module.functions.insert(0, fn)
        module.top_ops = cl.sdy_mesh_decls()
    return module.text()
