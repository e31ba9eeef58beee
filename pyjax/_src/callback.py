"""Host callbacks: ``pure_callback``, ``io_callback`` and ``debug.callback`` (JAX's names).

Each is a primitive whose operands are the flat array arguments and whose ``callback`` param
is a ``_Callback``: the user's function with the argument and result trees. Eagerly the
function is called directly; in a compiled program the lowering registers it with the FFI
handler of ``runtime/ffi.py`` and emits a ``custom_call`` to that handler, with
``has_side_effect`` so XLA neither drops nor merges it. ``io_callback`` and the debug callback
are ``effectful`` primitives: dead-code elimination keeps them (core/jaxpr.eqn_has_effects).

Derivatives and batching follow JAX: ``pure_callback`` and ``io_callback`` have no JVP (wrap
them in ``custom_jvp``); the debug callback sees only primal values. Under ``vmap``,
``pure_callback`` follows its ``vmap_method``, unordered ``io_callback`` runs sequentially
(ordered ones refuse), and the debug callback runs once per batch element.
"""
from __future__ import annotations

import numpy as np

from pyjax._src.core import dtypes, pytree
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.rules import not_mapped
from pyjax._src.core.trace import aval_of
from pyjax._src.lax import base, batch_util, shape_ops

VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                "legacy_vectorized")


class _Callback:
    """The user's function over flat NumPy arguments. Hashed by identity (a param)."""

    __slots__ = ("fn", "in_tree", "out_tree", "kind", "as_arrays")

    def __init__(self, fn, in_tree, out_tree, kind, as_arrays=False):
        self.fn, self.in_tree, self.out_tree, self.kind = fn, in_tree, out_tree, kind
        self.as_arrays = as_arrays  # the debug callback gets pyjax Arrays, as in JAX

    def __call__(self, result_avals, *flat):
        if self.as_arrays:
            from pyjax._src.dispatch.eager import to_array
            flat = [to_array(np.asarray(x)) for x in flat]
        args, kwargs = pytree.tree_unflatten(self.in_tree, list(flat))
        out = self.fn(*args, **kwargs)
        if self.out_tree is None:  # the debug callback: results ignored
            return []
        leaves, tree = pytree.tree_flatten(out)
        if tree != self.out_tree:
            raise TypeError(f"{self.kind} callback {_name(self.fn)} returned a value of "
                            f"structure {tree}, but result_shape_dtypes has {self.out_tree}")
        results = []
        for i, (x, aval) in enumerate(zip(leaves, result_avals)):
            x = np.asarray(x)
            if x.shape != aval.shape:
                raise RuntimeError(f"Incorrect output shape for return value #{i}: "
                                   f"Expected: {aval.shape}, Actual: {x.shape}")
            if x.dtype != aval.dtype:
                raise RuntimeError(f"Incorrect output dtype for return value #{i}: "
                                   f"Expected: {aval.dtype}, Actual: {x.dtype}")
            results.append(x)
        return results

    def __repr__(self):
        return _name(self.fn)


def _name(fn):
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


# ---- the primitives ------------------------------------------------------------------------

def _abstract_eval(*avals, callback, result_avals, **_):
    return list(result_avals)


def _impl(*args, callback, result_avals, **_):
    from pyjax._src.dispatch.eager import to_array
    outs = callback(result_avals, *[np.asarray(a) for a in args])
    return [to_array(o) for o in outs]


def _lower(ctx, *operands, callback, result_avals, **_):
    return base.host_call(ctx, lambda *xs: callback(result_avals, *xs), operands,
                          list(result_avals),
                          key=(callback.fn, callback.in_tree, callback.out_tree, callback.kind,
                               callback.as_arrays, result_avals))


def _no_jvp(message):
    def jvp(primals, tangents, **params):
        raise ValueError(message)
    return jvp


def _moved(x, d, size):
    """``x`` with its batch axis ``d`` first (broadcast to ``size`` when unbatched)."""
    return batch_util.bdim_to(x, d, 0, size)


def _element(x, i):
    """``x[i]`` along the leading axis."""
    shape = aval_of(x).shape
    row = shape_ops.slice(x, (i,) + (0,) * (len(shape) - 1), (i + 1,) + shape[1:])
    return shape_ops.reshape(row, shape[1:])


def batch_by_loop(prim, args, dims, params, unrolled=False):
    """The batching rule "one application per batch element": a ``lax.map`` loop (unrolled
    in Python with ``unrolled``, and for primitives without results). Used by the callbacks'
    sequential vmap methods and by ``jax.export``'s fixed-shape calls."""
    size = batch_util.batch_size(args, dims)
    args = [x if d is not_mapped else _moved(x, d, size) for x, d in zip(args, dims)]
    batched = [d is not not_mapped for d in dims]
    elem_avals = [aval_of(x).update(shape=aval_of(x).shape[1:]) if b else aval_of(x)
                  for x, b in zip(args, batched)]
    has_results = bool(prim.abstract_eval(*elem_avals, **params))
    if unrolled or not has_results:
        per = [prim.bind(*[_element(x, i) if b else x for x, b in zip(args, batched)],
                         **params) for i in range(size)]
        if not has_results:
            return [], []
        outs = [shape_ops.concatenate([shape_ops.expand_dims(p[k], (0,)) for p in per], 0)
                for k in range(len(per[0]))]
        return outs, [0] * len(outs)
    from pyjax._src.control_flow.loops import map as lax_map
    xs = [x for x, b in zip(args, batched) if b]

    def one(elems):
        it = iter(elems)
        return prim.bind(*[next(it) if b else x for x, b in zip(args, batched)], **params)
    outs = lax_map(one, xs)
    return list(outs), [0] * len(outs)


def _pure_batch(args, dims, *, callback, result_avals, vmap_method):
    params = dict(callback=callback, result_avals=result_avals, vmap_method=vmap_method)
    if vmap_method is None:
        raise NotImplementedError(
            "vmap is only supported for pure_callback when vmap_method is set: pass "
            f"vmap_method= one of {VMAP_METHODS[:4]} to pure_callback({_name(callback.fn)})")
    if vmap_method in ("sequential", "sequential_unrolled"):
        return batch_by_loop(pure_callback_p, args, dims, params,
                           vmap_method == "sequential_unrolled")
    size = batch_util.batch_size(args, dims)
    if vmap_method == "broadcast_all":
        args = [_moved(x, d, size) for x, d in zip(args, dims)]
    else:  # expand_dims: unbatched arguments get a leading axis of size 1
        args = [shape_ops.expand_dims(x, (0,)) if d is not_mapped and vmap_method ==
                "expand_dims" else x if d is not_mapped else _moved(x, d, size)
                for x, d in zip(args, dims)]
    batched_avals = tuple(ShapedArray((size,) + a.shape, a.dtype) for a in result_avals)
    outs = pure_callback_p.bind(*args, callback=callback, result_avals=batched_avals,
                                vmap_method=vmap_method)
    return list(outs), [0] * len(outs)


def _io_batch(args, dims, *, callback, result_avals, ordered):
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    return batch_by_loop(io_callback_p, args, dims,
                       dict(callback=callback, result_avals=result_avals, ordered=ordered),
                       False)


def _debug_batch(args, dims, *, callback, result_avals, ordered):
    return batch_by_loop(debug_callback_p, args, dims,
                       dict(callback=callback, result_avals=result_avals, ordered=ordered),
                       True)


def _debug_jvp(primals, tangents, **params):
    return debug_callback_p.bind(*primals, **params), []


# On Explicit mesh axes the callbacks take split operands (the host sees them whole) and give
# replicated results, JAX 0.10.2's types (lax/base.host_call runs them once, on partition 0).
from pyjax._src.core.sharding_rules import FROM_BODY, replicated_results  # noqa: E402
pure_callback_p = Primitive(
    "pure_callback", abstract_eval=_abstract_eval, lower=_lower, multiple_results=True,
    impl=_impl, batch=_pure_batch, sharding_rule=replicated_results,
    jvp=_no_jvp("Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use "
                "callbacks while taking gradients."))
io_callback_p = Primitive(
    "io_callback", abstract_eval=_abstract_eval, lower=_lower, multiple_results=True,
    impl=_impl, batch=_io_batch, effectful=True, sharding_rule=replicated_results,
    jvp=_no_jvp("IO callbacks do not support JVP."))
debug_callback_p = Primitive(
    "debug_callback", abstract_eval=_abstract_eval, lower=_lower, multiple_results=True,
    impl=_impl, batch=_debug_batch, effectful=True, jvp=_debug_jvp,
    sharding_rule=FROM_BODY)  # no results: its operands are only printed


# ---- the user functions --------------------------------------------------------------------

def _result_avals(result_shape_dtypes, who):
    leaves, tree = pytree.tree_flatten(result_shape_dtypes)
    avals = []
    for x in leaves:
        if not (hasattr(x, "shape") and hasattr(x, "dtype")):
            raise TypeError(f"{who}: result_shape_dtypes must be a pytree of values with "
                            f".shape and .dtype (e.g. jax.ShapeDtypeStruct), got {x!r}")
        avals.append(ShapedArray(tuple(x.shape), dtypes.canonicalize_dtype(x.dtype)))
    return tuple(avals), tree


def _flat_args(args, kwargs):
    leaves, tree = pytree.tree_flatten((args, kwargs))
    return leaves, tree


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None,
                  **kwargs):
    """Calls the pure Python function ``callback`` on the host, from traced or compiled code.

    ``callback`` gets NumPy arrays and returns a pytree matching ``result_shape_dtypes``
    (values with ``.shape`` and ``.dtype``). Being pure, it may be skipped when its results
    are unused, or run more than once. ``vmap_method``: how ``vmap`` batches it
    ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all"); None refuses vmap.
    """
    if not callable(callback):
        raise TypeError(f"pure_callback: callback must be callable, got {callback!r}")
    if vmap_method is not None and vmap_method not in VMAP_METHODS:
        raise ValueError(f"pure_callback: vmap_method must be one of {VMAP_METHODS} or None, "
                         f"got {vmap_method!r}")
    if sharding is not None:
        raise NotImplementedError("pure_callback: sharding= is not supported yet")
    result_avals, out_tree = _result_avals(result_shape_dtypes, "pure_callback")
    flat, in_tree = _flat_args(args, kwargs)
    cb = _Callback(callback, in_tree, out_tree, "pure")
    outs = pure_callback_p.bind(*flat, callback=cb, result_avals=result_avals,
                                vmap_method=vmap_method)
    return pytree.tree_unflatten(out_tree, list(outs))


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False,
                **kwargs):
    """Calls the impure Python function ``callback`` on the host: it always runs, once per
    execution. ``ordered=True`` keeps the calls in program order (and refuses ``vmap``)."""
    if not callable(callback):
        raise TypeError(f"io_callback: callback must be callable, got {callback!r}")
    if sharding is not None:
        raise NotImplementedError("io_callback: sharding= is not supported yet")
    result_avals, out_tree = _result_avals(result_shape_dtypes, "io_callback")
    flat, in_tree = _flat_args(args, kwargs)
    cb = _Callback(callback, in_tree, out_tree, "io")
    outs = io_callback_p.bind(*flat, callback=cb, result_avals=result_avals,
                              ordered=bool(ordered))
    return pytree.tree_unflatten(out_tree, list(outs))


def debug_callback(callback, *args, ordered=False, partitioned=False, _numpy=False, **kwargs):
    """Calls ``callback(*args, **kwargs)`` on the host with the runtime values (pyjax Arrays;
    NumPy arrays for ``debug.print``'s formatting, ``_numpy``) wherever it runs: eagerly, in
    ``jit``, in every loop step and for every ``vmap`` element; under differentiation it sees
    the primal values. Returns None."""
    if not callable(callback):
        raise TypeError(f"debug.callback: callback must be callable, got {callback!r}")
    if partitioned:
        raise NotImplementedError("debug.callback: partitioned=True needs sharded programs")
    flat, in_tree = _flat_args(args, kwargs)
    cb = _Callback(callback, in_tree, None, "debug", as_arrays=not _numpy)
    debug_callback_p.bind(*flat, callback=cb, result_avals=(), ordered=bool(ordered))
    return None
