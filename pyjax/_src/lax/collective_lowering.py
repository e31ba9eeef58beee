"""Lowering of the named-axis collectives to XLA collectives.

A device-mapping transformation binds its axis names for the lowering of its body with
``lowering_axes(names, sizes, manual)``: ``pmap`` binds one axis whose positions are replica
ids (``manual=False``: cross-replica collectives), ``shard_map`` binds the mesh's axes, whose
positions are partition ids (``manual=True``: collectives carry a channel handle and
``use_global_device_ids``). A device's position in the bound axes is its flat (row-major)
index, so the replica groups of a collective over some names are the positions that agree on
every other name.
"""
from __future__ import annotations

import threading

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.lax.collective_groups import apply_to_replica_groups


class _Bound(threading.local):
    def __init__(self):
        self.frames = []  # (names, sizes, manual), innermost last


_bound = _Bound()
_channel = [0]


class lowering_axes:
    """While lowering a body: ``names`` (of ``sizes``) are the device axes."""

    def __init__(self, names, sizes, manual):
        self.frame = (tuple(names), tuple(int(s) for s in sizes), bool(manual))

    def __enter__(self):
        _bound.frames.append(self.frame)

    def __exit__(self, *exc):
        _bound.frames.pop()
        return False


def _frame_for(primitive, names):
    for frame in reversed(_bound.frames):
        if all(n in frame[0] for n in names):
            return frame
    raise NotImplementedError(
        f"The collective {primitive} over axis {names if len(names) > 1 else names[0]!r} "
        "was lowered outside a pmap/shard_map that binds that axis name (inside jit "
        "alone, or under vmap only, a named axis has no devices)")


def groups(frame, names):
    """The replica groups (lists of flat positions) of a collective over ``names``."""
    all_names, sizes, _ = frame
    ids = np.arange(int(np.prod(sizes))).reshape(sizes)
    over = [all_names.index(n) for n in names]
    rest = [i for i in range(len(all_names)) if i not in over]
    ids = np.transpose(ids, rest + over).reshape(-1, int(np.prod([sizes[i] for i in over])))
    return ids.tolist()


def _groups_attr(gs):
    rows = ", ".join("[" + ", ".join(str(i) for i in g) + "]" for g in gs)
    return f"dense<[{rows}]> : tensor<{len(gs)}x{len(gs[0])}xi64>"


def _attrs(frame, gs):
    attrs = {"replica_groups": _groups_attr(gs)}
    if frame[2]:
        _channel[0] += 1
        attrs["channel_handle"] = f"#stablehlo.channel_handle<handle = {_channel[0]}, type = 1>"
        attrs["use_global_device_ids"] = "unit"
    return attrs


def _scalar(dt):
    return ShapedArray((), dt)


def all_reduce(ctx, operands, names, op_name, prim_name, index_groups=None):
    """psum / pmax / pmin: one all_reduce per operand (within ``index_groups`` of positions
    along ``names``, when given)."""
    frame = _frame_for(prim_name, names)
    gs = apply_to_replica_groups(groups(frame, names), index_groups)
    outs = []
    for x, out_aval in zip(operands, ctx.avals_out):
        dt = x.aval.dtype
        name = op_name
        if dtypes.is_bool(dt):
            name = {"stablehlo.add": "stablehlo.or", "stablehlo.maximum": "stablehlo.or",
                    "stablehlo.minimum": "stablehlo.and"}[op_name]
        region = ctx.region([_scalar(dt), _scalar(dt)])
        a, b = region.args
        region.ret([region.op(name, [a, b], _scalar(dt))])
        outs.append(ctx.op("stablehlo.all_reduce", [x], out_aval, attrs=_attrs(frame, gs),
                           regions=[region]))
    return outs


def all_gather(ctx, x, name, dim, tiled, prim_name="all_gather", index_groups=None):
    frame = _frame_for(prim_name, (name,))
    gs = apply_to_replica_groups(groups(frame, (name,)), index_groups)
    out = ctx.avals_out[0]
    if not tiled:  # gather along a new unit dimension
        shape = list(x.aval.shape)
        shape.insert(dim, 1)
        x = ctx.op("stablehlo.reshape", [x], x.aval.update(shape=tuple(shape)))
    attrs = {"all_gather_dim": f"{dim} : i64", **_attrs(frame, gs)}
    return ctx.op("stablehlo.all_gather", [x], out, attrs=attrs)


def reduce_scatter(ctx, x, name, dim, tiled, index_groups=None):
    frame = _frame_for("psum_scatter", (name,))
    gs = apply_to_replica_groups(groups(frame, (name,)), index_groups)
    out = ctx.avals_out[0]
    dt = x.aval.dtype
    shape = list(x.aval.shape)
    shape[dim] //= len(gs[0])
    region = ctx.region([_scalar(dt), _scalar(dt)])
    a, b = region.args
    region.ret([region.op("stablehlo.or" if dtypes.is_bool(dt) else "stablehlo.add", [a, b],
                          _scalar(dt))])
    attrs = {"scatter_dimension": f"{dim} : i64", **_attrs(frame, gs)}
    res = ctx.op("stablehlo.reduce_scatter", [x], x.aval.update(shape=tuple(shape)),
                 attrs=attrs, regions=[region])
    if not tiled:
        res = ctx.op("stablehlo.reshape", [res], out)
    return res


def all_to_all(ctx, x, name, split_axis, concat_axis, n, index_groups=None):
    frame = _frame_for("all_to_all", (name,))
    gs = apply_to_replica_groups(groups(frame, (name,)), index_groups)
    attrs = {"split_dimension": f"{split_axis} : i64",
             "concat_dimension": f"{concat_axis} : i64",
             "split_count": f"{n} : i64", **_attrs(frame, gs)}
    attrs.pop("use_global_device_ids", None)  # all_to_all has no such attribute
    shape = list(x.aval.shape)
    shape[split_axis] //= n
    shape[concat_axis] *= n
    return ctx.op("stablehlo.all_to_all", [x], x.aval.update(shape=tuple(shape)),
                  attrs=attrs)


def collective_permute(ctx, x, name, perm):
    frame = _frame_for("ppermute", (name,))
    gs = groups(frame, (name,))
    pairs = [(g[s], g[t]) for g in gs for s, t in perm]
    attrs = {"source_target_pairs":
             "dense<[" + ", ".join(f"[{s}, {t}]" for s, t in pairs) +
             f"]> : tensor<{len(pairs)}x2xi64>"}
    if frame[2]:
        _channel[0] += 1
        attrs["channel_handle"] = f"#stablehlo.channel_handle<handle = {_channel[0]}, type = 1>"
    if not pairs:
        return ctx.op("stablehlo.multiply", [x, ctx.constant(np.zeros((), x.aval.dtype),
                                                             x.aval.update(shape=()))],
                      x.aval)
    return ctx.op("stablehlo.collective_permute", [x], ctx.avals_out[0], attrs=attrs)


def axis_index(ctx, name):
    frame = _frame_for("axis_index", (name,))
    names, sizes, manual = frame
    u32 = ShapedArray((), np.dtype(np.uint32))
    pos = ctx.op("stablehlo.partition_id" if manual else "stablehlo.replica_id", [], u32)
    i32 = ShapedArray((), np.dtype(np.int32))
    pos = ctx.op("stablehlo.convert", [pos], i32)
    k = names.index(name)
    stride = int(np.prod(sizes[k + 1:]))
    if stride > 1:
        pos = ctx.op("stablehlo.divide", [pos, ctx.constant(np.int32(stride), i32)], i32)
    if k > 0:
        pos = ctx.op("stablehlo.remainder", [pos, ctx.constant(np.int32(sizes[k]), i32)], i32)
    return pos



class _Spmd(threading.local):
    def __init__(self):
        self.depth = 0


_spmd = _Spmd()


class spmd_lowering:
    """While lowering a program partitioned by XLA over ``mesh`` (its partition ``p`` runs
    on the mesh's ``p``-th device): sharding annotations are meaningful, written in Shardy's
    dialect (``sdy.sharding`` on ``@main``, ``sdy.sharding_constraint``), each naming an
    ``sdy.mesh`` symbol that ``sdy_mesh_decls`` declares at the module's top."""

    def __init__(self, mesh):
        self.mesh = mesh

    def __enter__(self):
        _spmd.depth += 1
        self._saved = (getattr(_spmd, "meshes", None), getattr(_spmd, "program_ids", None),
                       getattr(_spmd, "program_mesh", None))
        _spmd.meshes = {}
        _spmd.program_mesh = self.mesh
        _spmd.program_ids = [d.id for d in self.mesh._flat_devices]
        return self

    def __exit__(self, *exc):
        _spmd.depth -= 1
        _spmd.meshes, _spmd.program_ids, _spmd.program_mesh = self._saved
        return False


def in_spmd_lowering():
    return _spmd.depth > 0


def sdy_sharding(sharding, ndim):
    """``#sdy.sharding<@mesh, [...]>`` of a NamedSharding for a rank-``ndim`` value."""
    return "#sdy.sharding" + sharding._sdy_sharding(ndim, mesh_symbol(sharding.mesh))


def mesh_symbol(mesh):
    """The ``sdy.mesh`` symbol of ``mesh`` in the program being lowered."""
    sym = _spmd.meshes.get(mesh)
    if sym is None:
        sym = _spmd.meshes[mesh] = "mesh" if not _spmd.meshes else f"mesh_{len(_spmd.meshes)}"
    return sym


def sdy_mesh_decls():
    """The ``sdy.mesh`` declarations of the meshes named so far. A mesh whose devices are
    the program's in another order lists their partition numbers (``device_ids``)."""
    from pyjax._src.core.sharding import sdy_mesh
    pos = {d: i for i, d in enumerate(_spmd.program_ids)}
    out = []
    for mesh, sym in _spmd.meshes.items():
        ids = [d.id for d in mesh._flat_devices]
        if any(i not in pos for i in ids):
            raise ValueError(f"a sharding in this program names the mesh {mesh!r}, whose "
                             "devices are not all the program's")
        out.append(sdy_mesh(mesh, sym, [pos[i] for i in ids]))
    return out


def on_whole_operands(block, operands, out_avals, emit, once=True):
    """In a program partitioned by XLA (outside any manual region): ``emit(block, operands)``
    (a host call, an FFI call) run on the whole operands, its results replicated. With
    ``once`` (side effects) partition 0 alone runs it and sends its results to every
    partition; else every partition runs it (its own copy of the same values).

    JAX gives a host callback a maximal sharding (one call per execution that sees the
    global values, results replicated); the plugin's partitioner refuses a side-effecting op
    that is not manual ("Side-effect ops cannot be replicated") and ignores Shardy's maximal
    meshes, so this writes out what XLA makes of a maximal sharding: a manual region over the
    whole mesh whose operands are gathered (replicated in), a ``stablehlo.if`` on
    ``partition_id() == 0`` around the call, and a gather from which every partition keeps
    partition 0's slot (exact for every dtype, unlike a sum; the CPU plugin has no
    ``collective_broadcast``)."""
    mesh = _spmd.program_mesh
    body = block.region([v.aval for v in operands])
    if once:
        body.ret(_on_partition_zero(body, out_avals, emit, mesh.size), "sdy.return")
    else:
        body.ret(list(emit(body, body.args)), "sdy.return")
    sym = mesh_symbol(mesh)
    replicated = lambda avals: "#sdy.sharding_per_value<[" + ", ".join(  # noqa: E731
        f"<@{sym}, [{', '.join(['{}'] * len(a.shape))}]>" for a in avals) + "]>"
    manual = ", ".join(f'"{a}"' for a in mesh.axis_names)
    return block.op("sdy.manual_computation", list(operands), list(out_avals), regions=[body],
                    attrs={"in_shardings": replicated([v.aval for v in operands]),
                           "out_shardings": replicated(out_avals),
                           "manual_axes": f"#sdy<manual_axes{{{manual}}}>"})


def _on_partition_zero(body, out_avals, emit, n):
    u32, pred = ShapedArray((), np.dtype(np.uint32)), ShapedArray((), np.dtype(np.bool_))
    pid = body.op("stablehlo.partition_id", [], u32)
    first = body.op("stablehlo.compare", [pid, body.constant(np.uint32(0), u32)], pred,
                    attrs={"comparison_direction": "#stablehlo<comparison_direction EQ>"})
    call = body.region([])
    call.ret(list(emit(call, body.args)), "stablehlo.return")
    skip = body.region([])
    skip.ret([skip.op("stablehlo.broadcast_in_dim",
                      [skip.constant(np.zeros((), a.dtype), a.update(shape=()))], a,
                      attrs={"broadcast_dimensions": "array<i64>"}) for a in out_avals],
             "stablehlo.return")
    outs = body.op("stablehlo.if", [first], list(out_avals), regions=[call, skip])
    sent = []
    for x in outs:  # partition 0's value to all: gathered, then its slot (exact for any dtype)
        a = x.aval
        one = a.update(shape=(1,) + a.shape)
        _channel[0] += 1
        every = body.op("stablehlo.all_gather", [body.op("stablehlo.reshape", [x], one)],
                        a.update(shape=(n,) + a.shape), attrs={
                            "all_gather_dim": "0 : i64",
                            "replica_groups": _groups_attr([list(range(n))]),
                            "channel_handle": f"#stablehlo.channel_handle<handle = "
                                              f"{_channel[0]}, type = 1>",
                            "use_global_device_ids": "unit"})
        ones = ", ".join(["1"] * (a.ndim + 1))
        first_slot = body.op("stablehlo.slice", [every], one, attrs={
            "start_indices": f"array<i64: {', '.join(['0'] * (a.ndim + 1))}>",
            "limit_indices": f"array<i64: {', '.join(str(d) for d in (1,) + a.shape)}>",
            "strides": f"array<i64: {ones}>"})
        sent.append(body.op("stablehlo.reshape", [first_slot], a))
    return sent


def partitioned_by_xla():
    """Lowering an SPMD program's ops that XLA partitions (not a manual region's)?"""
    return _spmd.depth > 0 and not any(f[2] for f in _bound.frames)


def lowering_context():
    """This thread's lowering context (bound device axes, SPMD partitioning), which lowering
    rules read besides their equation: part of dispatch/jaxpr_key.py's key."""
    return tuple(_bound.frames), _spmd.depth > 0
