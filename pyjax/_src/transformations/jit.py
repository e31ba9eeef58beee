"""``jit``: stage a function to a Jaxpr, lower it once per signature, and dispatch cached calls.

Inside another transformation a jitted function is bound as the ``jit`` primitive, so it shows up
as one call in the outer Jaxpr (and lowers to a private function with a ``func.call``).
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import operator
import sys
import warnings
import weakref

import numpy as np

from pyjax._src import runtime
from pyjax._src.core import config as config_mod
from pyjax._src.core import profiling, pytree, refs, traceback_util
from pyjax._src.core import trace as trace_mod
from pyjax._src.core.abstract import ShapeDtypeStruct, ShapedArray
from pyjax._src.core.array import ArrayImpl, array_from_buffer
from pyjax._src.core.jaxpr import ClosedJaxpr, Eqn, Var, eval_jaxpr
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.sharded_array import ShardedArray
from pyjax._src.core.sharding import (NamedSharding, PmapSharding, Sharding,
                                     SingleDeviceSharding, current_mesh)
from pyjax._src.core.trace import Tracer
from pyjax._src.interpreters import batching, staging
from pyjax._src.dispatch import cache as cache_mod
from pyjax._src.dispatch import compiler, debug_values, devices
from pyjax._src.dispatch import eager as dispatch
from pyjax._src.dispatch.cache import Cache
from pyjax._src.interpreters import ad
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.lax import parallel
from pyjax._src.transformations import jit_refs, spmd
from pyjax._src.transformations.stages import (Traced, _forget_host_copies, _leaf_aval,
                                               _shape_dtype_tree)
from pyjax._src.runtime.compile_options import option_overrides

config = config_mod.config
_LEAF = pytree.tree_structure(0)


# ---- the jit (closed call) primitive ----

def _jit_abstract_eval(*avals, jaxpr, name):
    return list(jaxpr.out_avals)


def _jit_lower(ctx, *args, jaxpr, name):
    return ctx.call_function(jaxpr, args, name)


# traced Jaxpr -> (the same as a const-free call Jaxpr, its consts): the jit equation binds
# the call Jaxpr, and a jitted function compiles it, so both share one executable
_call_jaxprs: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
cache_mod.on_clear(_call_jaxprs.clear)


def _call_jaxpr(closed):
    if not closed.jaxpr.constvars:
        # already const-free: nothing to cache. (Storing it would make the weak key's value
        # hold the key itself, so neither it nor its executable in compiler._calls would
        # ever be freed: ~0.1 MB leaked per jitted function.)
        return closed, []
    hit = _call_jaxprs.get(closed)
    if hit is None:
        hit = _call_jaxprs[closed] = staging.convert_constvars_jaxpr(closed)
    return hit


def _jit_impl(*args, jaxpr, name):
    exe = compiler.compiled_call(jaxpr, name)
    arrays = [dispatch.to_array(x) for x in args]
    device, committed = devices.call_device(arrays)
    bufs = exe.execute([a._buf for a in arrays], device)
    return [ArrayImpl(av, b, committed) for av, b in zip(jaxpr.out_avals, bufs)]


def _jit_batch(args, dims, *, jaxpr, name, axis_data):
    # Batch the body into a new Jaxpr, so that vmap(jit(f)) stays one call; on operands typed
    # over Explicit mesh axes, traced on their types (the batch dimension's sharding kept).
    batched, consts, out_dims = batching.batch_jaxpr(
        jaxpr, dims, axis_data, typed_avals=batching.typed_avals_of(args))
    return jit_p.bind(*consts, *args, jaxpr=batched, name=name), out_dims


def _jit_jvp(primals, tangents, *, jaxpr, name):
    # The JVP of the body as one new Jaxpr, so that jvp(jit(f)) stays one call.
    nonzero = [type(t) is not ad.Zero for t in tangents]
    jvp_closed, consts, out_nz = ad.jvp_jaxpr(jaxpr, nonzero)
    outs = jit_p.bind(*consts, *primals, *[t for t, nz in zip(tangents, nonzero) if nz],
                      jaxpr=jvp_closed, name=name)
    n = len(jaxpr.out_avals)
    it = iter(outs[n:])
    return outs[:n], [next(it) if nz else ad.Zero(ad.tangent_aval(a))
                      for a, nz in zip(jaxpr.out_avals, out_nz)]


def _jit_transpose(cts, *args, jaxpr, name):
    linear = [ad.is_undefined_primal(a) for a in args]
    ct_nz = [type(c) is not ad.Zero for c in cts]
    t_closed, consts, in_nz = ad.transpose_jaxpr(jaxpr, linear, ct_nz)
    outs = iter(jit_p.bind(*consts, *[a for a, lin in zip(args, linear) if not lin],
                           *[c for c, nz in zip(cts, ct_nz) if nz], jaxpr=t_closed,
                           name=f"transpose({name})"))
    nz = iter(in_nz)
    return [None if not lin else (next(outs) if next(nz) else ad.Zero(a.aval))
            for a, lin in zip(args, linear)]


def _jit_partial_eval(trace, args, params):
    # Known part (primal outputs and residuals) runs now as one call; the unknown (tangent)
    # part is staged as one call.
    split = pe.partial_eval_jaxpr(params["jaxpr"], [trace.is_unknown(x) for x in args])
    return pe.run_partial_eval(trace, jit_p, args, params, split,
                               lambda closed: dict(params, jaxpr=closed))


def _jit_partial_eval_jaxpr(eqn, in_unknowns):
    # The same split on an equation (a jit inside a jitted function being differentiated).
    split = pe.partial_eval_jaxpr(eqn.params["jaxpr"], in_unknowns)
    res = [Var(a) for a in split.known.out_avals[len(split.known.out_avals) - split.num_res:]]
    known_ins = [v for v, u in zip(eqn.invars, in_unknowns) if not u]
    known = Eqn(jit_p, known_ins,
                [v for v, u in zip(eqn.outvars, split.out_unknowns) if not u] + res,
                dict(eqn.params, jaxpr=split.known))
    staged = None
    if any(split.out_unknowns):
        staged = Eqn(jit_p, [eqn.invars[i] for i in split.fwd_res] + res
                     + [v for v, u in zip(eqn.invars, in_unknowns) if u],
                     [v for v, u in zip(eqn.outvars, split.out_unknowns) if u],
                     dict(eqn.params, jaxpr=split.staged))
    return known, staged, list(split.out_unknowns)


from pyjax._src.core.sharding_rules import FROM_BODY  # noqa: E402
jit_p = Primitive("jit", abstract_eval=_jit_abstract_eval, lower=_jit_lower,
                  sharding_rule=FROM_BODY,
                  multiple_results=True, impl=_jit_impl, batch=_jit_batch,
                  jvp=_jit_jvp, transpose=_jit_transpose, partial_eval=_jit_partial_eval,
                  partial_eval_jaxpr=_jit_partial_eval_jaxpr,
                  axis_aware=parallel.params_use_axis)  # its body may use a named axis


# ---- argument handling ----

def _normalize_argnums(fun, static_argnums, static_argnames, donate_argnums, donate_argnames):
    def as_tuple(x, what, kind):
        if x is None:
            return ()
        t = (x,) if isinstance(x, (str, int, np.integer)) else None
        if t is None:
            try:
                t = tuple(x)
            except TypeError:
                t = (x,)
        out = []
        for v in t:
            if kind is int and isinstance(v, (int, np.integer)):  # operator.index, as JAX
                out.append(operator.index(v))
            elif kind is str and isinstance(v, str):
                out.append(v)
            else:
                raise TypeError(f"jit: {what} must be {'ints' if kind is int else 'strs'} or a "
                                f"sequence of them, got {v!r} of type {type(v).__name__}")
        return tuple(out)

    static_argnums = as_tuple(static_argnums, "static_argnums", int)
    static_argnames = as_tuple(static_argnames, "static_argnames", str)
    donate_argnums = as_tuple(donate_argnums, "donate_argnums", int)
    donate_argnames = as_tuple(donate_argnames, "donate_argnames", str)
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        sig = None
    params = []
    if sig is not None:
        _validate_argnums(sig, static_argnums, "static_argnums")
        _validate_argnums(sig, donate_argnums, "donate_argnums")
        _validate_argnames(sig, static_argnames, "static_argnames")
        _validate_argnames(sig, donate_argnames, "donate_argnames")
        params = [p for p in sig.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        names = [p.name for p in params]
        nparams = len(names)
        # each argnum gets its name and each name its argnum, as in JAX
        static_argnames = tuple(dict.fromkeys(
            static_argnames + tuple(names[i] for i in static_argnums if -nparams <= i < nparams)))
        static_argnums = tuple(dict.fromkeys(
            static_argnums + tuple(names.index(n) for n in static_argnames if n in names)))
        donate_argnames = tuple(dict.fromkeys(
            donate_argnames + tuple(names[i] for i in donate_argnums if -nparams <= i < nparams)))
        donate_argnums = tuple(dict.fromkeys(
            donate_argnums + tuple(names.index(n) for n in donate_argnames if n in names)))
    return sig, static_argnums, static_argnames, donate_argnums, donate_argnames


def _validate_argnums(sig, argnums, what):
    """As JAX: argnums must name positional parameters (anything goes with ``*args``)."""
    n_pos = 0
    for p in sig.parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            n_pos += 1
        elif p.kind is p.VAR_POSITIONAL:
            return
    bad = [i for i in argnums if not -n_pos <= i < n_pos]
    if bad:
        raise ValueError(f"Jitted function has {what}={argnums}, but only accepts {n_pos} "
                         f"positional arguments: {bad} out of range [{-n_pos}, {n_pos}).")


def _validate_argnames(sig, argnames, what):
    """As JAX: argnames must name parameters that can be passed by keyword."""
    ps = sig.parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in ps):
        return
    by_kw = {p.name for p in ps if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    pos_only = {p.name for p in ps if p.kind is p.POSITIONAL_ONLY}
    invalid = [n for n in argnames if n not in by_kw]
    if invalid:
        if all(n in pos_only for n in invalid):
            raise ValueError(f"Jitted function has invalid argnames {set(invalid)} in {what}. "
                             "These are positional-only.")
        raise ValueError(f"Jitted function has invalid argnames {set(invalid)} in {what}. "
                         f"Function does not take these args (it takes {sorted(by_kw)}).")


def _arg_names(sig, nargs, kw_names):
    names = []
    if sig is not None:
        pos = [p.name for p in sig.parameters.values()
               if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        var = [p.name for p in sig.parameters.values() if p.kind == p.VAR_POSITIONAL]
        for i in range(nargs):
            names.append(pos[i] if i < len(pos) else (f"{var[0]}[{i - len(pos)}]" if var
                                                       else f"args[{i}]"))
    else:
        names = [f"args[{i}]" for i in range(nargs)]
    return names + list(kw_names)


class _Entry:
    """A compiled signature of a jitted function, with what a call needs at hand."""
    __slots__ = ("exe", "const_bufs", "out_tree", "out_avals", "closed", "n_out", "run",
                 "leaf_aval", "const_device", "run_one", "flat_tuple")

    def __init__(self, exe, const_bufs, out_tree, out_avals, closed):
        self.exe = exe
        self.const_bufs = tuple(const_bufs)
        self.out_tree = out_tree
        self.out_avals = out_avals
        self.closed = closed
        self.n_out = len(out_avals)
        self.run = exe.execute_unchecked
        # the one device all constants are on (None: no constants, or several devices)
        devs = {b.device for b in self.const_bufs}
        self.const_device = devs.pop() if len(devs) == 1 else None
        # the aval of the only output when the function returns one array, else None
        self.leaf_aval = out_avals[0] if self.n_out == 1 and out_tree == _LEAF else None
        # outputs that are a plain tuple of arrays are built without tree_unflatten
        self.flat_tuple = (self.leaf_aval is None and
                           out_tree == pytree.tree_structure(tuple(range(self.n_out))))
        # run(buf, device) -> buf, for one array in and one out and no constants (the hot path)
        self.run_one = (exe.single_result_runner() if self.leaf_aval is not None
                        and not self.const_bufs and exe.in_types is not None
                        and len(exe.in_types) == 1 else None)


_STATIC_CALL = object()  # first element of the first-level keys made by _call_key
_LEAF_TYPES = (ArrayImpl, bool, int, float, complex)


def _call_key(args, kwargs):
    """A hashable key of a call: arrays by the id of their aval, other values by type and
    value; None when an argument is unhashable (a pytree container, a NumPy array)."""
    key = [_STATIC_CALL]
    key += [id(a.aval) if type(a) is ArrayImpl else (type(a), a) for a in args]
    if kwargs:
        key.append(tuple([(k, id(v.aval) if type(v) is ArrayImpl else (type(v), v))
                          for k, v in kwargs.items()]))
    key = tuple(key)
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _as_array(x):
    return x if type(x) is ArrayImpl else dispatch.to_array(x)
_new_array = ArrayImpl.__new__  # creating without ArrayImpl.__init__ saves a Python call
_state = trace_mod._state
_log = logging.getLogger("pyjax")


def _on_trace_config_change(_):
    # Flags that change what a function traces to: cached traces no longer hold.
    cache_mod.clear_all()


for _flag in ("jax_numpy_rank_promotion", "jax_numpy_dtype_promotion",
              "jax_default_matmul_precision", "jax_enable_checks", "jax_allow_f16_reductions",
              "jax_softmax_custom_jvp", "jax_remove_size_one_mesh_axis_from_type"):
    config.on_change(_flag, _on_trace_config_change)

# True while a flag changes how a jitted call runs (Jitted._call_in_mode): one read on the
# hot path for the three.
_modes = [False]


def _on_mode_change(_=None):
    _modes[0] = bool(config.jax_disable_jit or config.jax_debug_nans or config.jax_debug_infs
                     or profiling.active[0])


refresh_modes = _on_mode_change  # the profiler calls it when it starts and stops


for _flag in ("jax_disable_jit", "jax_debug_nans", "jax_debug_infs"):
    config.on_change(_flag, _on_mode_change)
_on_mode_change(None)


def _refuse_tracing(name, fun):
    """``jax_no_tracing``: a trace (a cache miss) is an error, as in JAX."""
    code = getattr(fun, "__code__", None)
    where = f" at {code.co_filename}:{code.co_firstlineno}" if code else ""
    raise RuntimeError(f"re-tracing function {name}{where} for `jit`, but 'no_tracing' is set")


def _explain_miss(jitted, key, names):
    """Logs why ``key`` (tree, statics, avals, x64, mesh) missed the trace cache of ``jitted``."""
    fun = jitted.fun
    code = getattr(fun, "__code__", None)
    where = f" defined at {code.co_filename}:{code.co_firstlineno}" if code else ""
    seen = list(jitted._trace_cache.entries)
    if not seen:
        why = ["never seen a call before (the first trace)"]
    else:
        def mismatches(old):
            out = []
            if old[3] != key[3]:
                out.append(f"jax_enable_x64 was {old[3]}, now {key[3]}")
            if old[4:] != key[4:]:
                out.append(f"the current mesh was {old[4]!r}, now {key[4]!r}")
            if old[0] != key[0]:
                out.append(f"the pytree structure of the arguments was {old[0]}, now {key[0]}")
            elif old[2] != key[2]:
                for name, a, b in zip(names, old[2], key[2]):
                    if a != b:
                        what = ("weak type" if (a.shape, a.dtype) == (b.shape, b.dtype)
                                else "type")
                        out.append(f"{what} of argument {name!r}: seen "
                                   f"{a.str_short()}{'' if not a.weak_type else ' (weak)'}, "
                                   f"now {b.str_short()}{'' if not b.weak_type else ' (weak)'}")
            if old[1] != key[1]:
                out.append(f"static arguments were {old[1]!r}, now {key[1]!r}")
            return out
        closest = min((mismatches(k) for k in seen), key=len)
        why = [f"closest seen signature has {len(closest)} mismatch(es):"] + \
              [f"  * {m}" for m in closest]
    _log.warning("TRACING CACHE MISS for %s%s because: %s", jitted.__name__, where,
                 "\n".join(why))


# function -> {(cache name, options): (compiled cache, trace cache)}; weak in the function
_caches_by_fun = weakref.WeakKeyDictionary()


def _shared_caches(fun, cache_name, options):
    """The compiled-signature and trace caches of `jit(fun, **options)`: the same objects for
    every `jit` of one function with equal options (a new pair when `fun` cannot be weakly
    referenced or an option is unhashable)."""
    def fresh():
        return Cache(cache_name), Cache("jit traces")  # traces: signature -> (ClosedJaxpr, tree)
    try:
        key = (cache_name, options)
        hash(key)
        per_fun = _caches_by_fun.get(fun)
        if per_fun is None:
            per_fun = _caches_by_fun[fun] = {}
    except TypeError:
        return fresh()
    pair = per_fun.get(key)
    if pair is None:
        pair = per_fun[key] = fresh()
    return pair


class Jitted:
    """The callable that ``jit`` returns."""

    _ref_companion = False  # True for the function jit_refs makes: it threads no refs itself

    def __init__(self, fun, static_argnums=(), static_argnames=(), donate_argnums=(),
                 donate_argnames=(), device=None, inline=False, keep_unused=False,
                 in_shardings=None, out_shardings=None, backend=None, abstracted_axes=None,
                 compiler_options=None, _cache_name="jit"):
        if not callable(fun):
            raise TypeError(f"Expected a callable value, got {fun!r}")
        self.fun = fun
        (self._sig, self.static_argnums, self.static_argnames, self.donate_argnums,
         self.donate_argnames) = _normalize_argnums(
            fun, static_argnums, static_argnames, donate_argnums, donate_argnames)
        if abstracted_axes is not None:
            raise NotImplementedError(
                f"jit(abstracted_axes={abstracted_axes!r}): shape polymorphism is not "
                "supported by pyjax")
        self._pinned = None  # the device of SingleDeviceSharding in/out shardings
        self._spmd = False  # NamedSharding/PartitionSpec in/out shardings: an SPMD program
        self._spmd_cache = {}  # (signature, in and out shardings) -> spmd._Program
        device = _check_placement(device, backend, in_shardings, out_shardings, self)
        self.device = device
        self.inline = bool(inline)
        # Unused arguments are never pruned, so keep_unused=True holds either way.
        self.keep_unused = bool(keep_unused)
        self.in_shardings = in_shardings
        self.out_shardings = out_shardings
        self.compiler_options = compiler_options
        self._option_overrides = (None if compiler_options is None
                                  else option_overrides(compiler_options))
        # The positional hot path: static names are then keyword-only parameters (a name of a
        # positional one is in static_argnums too), so a call without keywords leaves them at
        # their defaults, and its key (the arguments' avals) cannot meet a keyword call's.
        # With static positions, calls that stop before the first of them qualify too (their
        # static values are the defaults; any call reaching one takes the keyed path).
        # _hot_upto: the most positional arguments a hot-path call may have (-1: none).
        if self.donate_argnums or self.donate_argnames or (self.static_argnames
                                                            and self._sig is None):
            self._hot_upto = -1
        else:
            self._hot_upto = min(self.static_argnums, default=sys.maxsize)
        # Compiled signatures: signature -> _Entry. Its first level ("fast") holds three kinds
        # of keys: ids of the avals of all-Array positional args -> (entry, x64, avals);
        # (treedef of args, x64, *avals) -> entry; _call_key(args, kwargs) -> hit.
        # jit(f) made twice with the same options shares these caches, as in JAX
        self._cache, self._trace_cache = _shared_caches(
            fun, _cache_name, (self.static_argnums, self.static_argnames, self.donate_argnums,
                               self.donate_argnames, device, self.inline, in_shardings,
                               out_shardings, backend, compiler_options))
        self._fast = self._cache.fast
        self.__name__ = getattr(fun, "__name__", "fun")
        self.__qualname__ = getattr(fun, "__qualname__", self.__name__)
        self.__doc__ = getattr(fun, "__doc__", None)
        self.__wrapped__ = fun
        self.__module__ = getattr(fun, "__module__", None)

    def __repr__(self):
        return f"<Jitted {self.__qualname__}>"

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    # -- splitting arguments into static and dynamic parts --
    def _split(self, args, kwargs):
        n = len(args)
        statics = []
        dyn_args = args
        if self.static_argnums:
            if any(i < -n for i in self.static_argnums):  # a function with *args
                raise ValueError(
                    f"Jitted function has static_argnums={self.static_argnums}, but was called "
                    f"with only {n} positional arguments: "
                    f"{[i for i in self.static_argnums if i < -n]} out of range.")
            idx = {i % n if -n <= i < n else i for i in self.static_argnums}
            statics = [(i, args[i]) for i in sorted(idx) if i < n]
            dyn_args = tuple(a for i, a in enumerate(args) if i not in idx)
        dyn_kwargs = kwargs
        if kwargs and self.static_argnames:
            statics += [(k, kwargs[k]) for k in sorted(kwargs) if k in self.static_argnames]
            dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        statics = tuple(statics)
        try:
            hash(statics)
        except TypeError:
            bad = [s for s in statics if not _hashable(s[1])]
            raise ValueError(
                f"Non-hashable static arguments are not supported. An error occurred while "
                f"trying to hash an object of type {type(bad[0][1])}, {bad[0][1]!r}. The "
                "error was:\nTypeError: unhashable type") from None
        return statics, dyn_args, dyn_kwargs

    def _donated_leaves(self, dyn_args, dyn_kwargs, n_args):
        if not (self.donate_argnums or self.donate_argnames):
            return ()
        flags = []
        static_idx = {i % n_args for i in self.static_argnums if -n_args <= i < n_args}
        orig = [i for i in range(n_args) if i not in static_idx]
        for pos, a in zip(orig, dyn_args):
            d = pos in {i % n_args for i in self.donate_argnums if -n_args <= i < n_args}
            flags += [d] * len(pytree.tree_leaves(a))
        for k in sorted(dyn_kwargs):
            flags += [k in self.donate_argnames] * len(pytree.tree_leaves(dyn_kwargs[k]))
        return tuple(flags)

    def _make_flat_fun(self, statics, n_dyn, kw_keys, in_tree, out_store):
        fun = self.fun

        def flat_fun(*leaves):
            dyn_args, dyn_kwargs = pytree.tree_unflatten(in_tree, leaves)
            args = list(dyn_args)
            kwargs = dict(dyn_kwargs)
            for k, v in statics:
                if isinstance(k, int):
                    args.insert(k, v)
                else:
                    kwargs[k] = v
            out = fun(*args, **kwargs)
            out_leaves, out_tree = pytree.tree_flatten(out)
            out_store.append(out_tree)
            return out_leaves
        return flat_fun

    def _trace(self, args, kwargs, in_avals=None):
        """Trace to a ClosedJaxpr; returns (key, closed, out_tree, leaves, donated)."""
        statics, dyn_args, dyn_kwargs = self._split(args, kwargs)
        leaves, in_tree = pytree.tree_flatten((dyn_args, dyn_kwargs))
        if in_avals is None:
            in_avals = tuple([_leaf_aval(x) for x in leaves])
            if self._spmd and self.in_shardings is not None:
                in_avals = spmd.typed_by_in_shardings(self, in_avals, leaves, in_tree)
        # the current mesh too: a PartitionSpec in the body resolves against it (as JAX's key)
        key = (in_tree, statics, in_avals, config.jax_enable_x64, current_mesh())
        hit = self._trace_cache.get(key)
        if hit is not None and type(hit[0]) is not ClosedJaxpr:  # it used outer mutable refs
            hit[0].depth = refs.depth() + 1
            raise hit[0]
        if hit is None:
            if config.jax_no_tracing:
                _refuse_tracing(self.__name__, self.fun)
            if config.jax_explain_cache_misses:
                _explain_miss(self, key, self._dyn_arg_names(args, kwargs, dyn_args,
                                                             dyn_kwargs))
            out_store = []
            flat_fun = self._make_flat_fun(statics, len(dyn_args), sorted(dyn_kwargs), in_tree,
                                           out_store)
            dyn_names = self._dyn_arg_names(args, kwargs, dyn_args, dyn_kwargs)
            dbg = staging.DebugInfo(self.__name__, dyn_names, "jit")
            with profiling.span(f"trace {self.__name__}", "trace"):
                try:
                    closed = staging.trace_to_jaxpr(flat_fun, in_avals, dbg)
                except refs.RefsTouched as e:
                    if e.depth == refs.depth() + 1:  # remembered: later calls skip the trace
                        self._trace_cache.put(key, (e.with_traceback(None), None))
                    raise
            hit = self._trace_cache.put(key, (closed, out_store[0]))
        donated = self._donated_leaves(dyn_args, dyn_kwargs, len(args))
        return key, hit[0], hit[1], leaves, donated

    def _dyn_arg_names(self, args, kwargs, dyn_args, dyn_kwargs):
        names = _arg_names(self._sig, len(args), [])
        static_idx = {i % len(args) for i in self.static_argnums if -len(args) <= i < len(args)}
        out = []
        for i, a in enumerate(args):
            if i in static_idx:
                continue
            out += [names[i]] * len(pytree.tree_leaves(a))
        for k in sorted(dyn_kwargs):
            out += [k] * len(pytree.tree_leaves(dyn_kwargs[k]))
        return out

    @property
    def max_entries(self):
        """How many signatures stay compiled (and traced); the least recently used go."""
        return self._cache.max_size

    @max_entries.setter
    def max_entries(self, n):
        self._cache.max_size = self._trace_cache.max_size = n

    def _cache_size(self):
        """The number of compiled signatures (as JAX's ``_cache_size``)."""
        return len(self._cache)

    def _compile(self, key, closed, out_tree, donated, overrides=None):
        """Compile and cache an entry; with ``overrides`` (XLA options of an AOT
        ``compile(compiler_options=)``), an uncached one."""
        if donated:
            _warn_unusable_donations(closed.jaxpr, donated)
        call, consts = _call_jaxpr(closed)  # one executable with the jit equation's calls
        if donated:
            donated = (False,) * len(consts) + tuple(donated)
        if overrides is not None:
            exe = compiler.compile_jaxpr(call.jaxpr, self.__name__, donated_invars=donated,
                                         option_overrides=overrides)
        else:
            exe = compiler.compiled_call(call, self.__name__, donated, self._option_overrides)
        consts = [dispatch.to_array(c) for c in consts]
        entry = _Entry(exe, [c._buf for c in consts], out_tree, tuple(call.out_avals), closed)
        if overrides is not None:
            return entry
        return self._cache.put(key, entry)

    def __call__(self, *args, **kwargs):
        try:
            if _modes[0]:  # disable_jit, debug_nans or debug_infs
                return self._call_in_mode(args, kwargs)
            t = _state.trace
            if t is not None and t is not dispatch.eval_trace:
                return self._call_traced(args, kwargs)
            if not kwargs and len(args) <= self._hot_upto:
                # The hot path. Positional Arrays only: the key is the ids of their avals (a hit
                # keeps the avals alive, so the ids stay theirs; eager and jitted results share
                # their executable's aval objects, so loops hit).
                if len(args) == 1:
                    x = args[0]
                    if type(x) is ArrayImpl:
                        hit = self._fast.get(id(x.aval))
                        if hit is not None and hit[1] is config.jax_enable_x64:
                            entry = hit[0]
                            b = x._buf
                            committed = x._committed
                            device = b.device
                            if self.device is not None and (not committed or
                                                            device is not self.device):
                                return self._run(entry, args)  # jit(device=...): placement
                            run_one = entry.run_one
                            if run_one is not None:
                                r = _new_array(ArrayImpl)
                                r._buf = run_one(b, device)
                                r.aval = entry.leaf_aval
                                r._committed = committed
                                r._npy = None
                                return r
                            consts = entry.const_bufs
                            if not consts:
                                outs = entry.run((b,), device)
                            elif entry.const_device is device:
                                outs = entry.run((*consts, b), device)
                            else:  # constants to move first
                                return self._run(entry, args)
                            return self._wrap_outputs(entry, outs, committed)
                else:
                    ids = []
                    for x in args:
                        if type(x) is not ArrayImpl:
                            if all(type(a) in _LEAF_TYPES for a in args):  # Python scalars too
                                return self._call_by_args(args, kwargs)
                            break
                        ids.append(id(x.aval))
                    else:
                        hit = self._fast.get(tuple(ids))
                        if hit is not None and hit[1] is config.jax_enable_x64:
                            return self._run(hit[0], args)
                # one flatten, one pass over the leaves, one dict lookup
                leaves, in_tree = pytree.tree_flatten_for_key(args)
                arrays, avals = [], []
                for x in leaves:
                    if type(x) is not ArrayImpl:
                        if isinstance(x, Tracer):
                            return self._call_traced(args, kwargs)
                        if type(x) is refs.Ref:
                            raise refs.RefArgument()
                        x = dispatch.to_array(x)
                    arrays.append(x)
                    avals.append(x.aval)
                if self._spmd or _any_sharded(arrays):  # one program for the mesh
                    return self._call_spmd(args, kwargs)
                x64 = config.jax_enable_x64
                try:
                    entry = self._fast.get((in_tree, x64, *avals))
                except TypeError:  # unhashable aux data in the tree: PyTreeDef hashes around it
                    in_tree = pytree.PyTreeDef(in_tree)
                    entry = self._fast.get((in_tree, x64, *avals))
                if entry is None:
                    key, closed, out_tree, _, donated = self._trace(args, kwargs)
                    if spmd.constrains_layout(closed):  # with_sharding_constraint: the mesh's
                        return self._call_spmd(args, kwargs)
                    entry = self._cache.get(key) or self._compile(key, closed, out_tree, donated)
                    self._cache.remember((in_tree, x64, *avals), entry)
                if len(leaves) == len(args) and all(type(x) is ArrayImpl for x in args):
                    avals = tuple(avals)
                    ids = tuple([id(a) for a in avals])
                    self._cache.remember(ids[0] if len(ids) == 1 else ids, (entry, x64, avals))
                return self._run(entry, arrays)
            return self._call_by_args(args, kwargs)
        except refs.RefsTouched as e:  # mutable refs used inside: trace again threading them
            if e.depth != refs.depth() + 1 or self._ref_companion:
                traceback_util.filter_exception(e, sys._getframe())
                raise
            pending = e
            e.__traceback__ = None  # a cached marker must not keep this call's frames alive
        except Exception as e:  # an API boundary: the user's frames only (zero cost until raised)
            traceback_util.filter_exception(e, sys._getframe())
            raise
        return jit_refs.call(self, args, kwargs, pending)

    def _call_in_mode(self, args, kwargs):
        if config.jax_disable_jit:
            return self.fun(*args, **kwargs)
        t = _state.trace
        if t is not None and t is not dispatch.eval_trace:
            return self._call_traced(args, kwargs)
        with profiling.span(f"jit({self.__name__})", "execute"):
            out = self._call_by_args(args, kwargs)
        if not (config.jax_debug_nans or config.jax_debug_infs):
            return out
        what = debug_values.bad_value(pytree.tree_leaves(out))
        if what is None:
            return out
        # Run it again op by op: the operation that makes the value raises, at its line.
        with disable_jit():
            self.fun(*args, **kwargs)
        raise FloatingPointError(
            f"invalid value ({what}) encountered in jit({self.__name__}). Because "
            "jax_debug_nans and/or jax_debug_infs is set, the function was run again op by "
            "op (as without jit) to find the operation, but that run produced no invalid "
            "value: the compiled program's arithmetic differs from the op-by-op one.")

    def _call_by_args(self, args, kwargs):
        """Static arguments, keywords or Python scalars: a first-level cache keyed by the
        arguments themselves (arrays by the ids of their avals, anything else by type and
        value), for calls whose dynamic arguments are all arrays or Python scalars."""
        fkey = None if self.donate_argnums or self.donate_argnames else _call_key(args, kwargs)
        if fkey is not None:
            hit = self._fast.get(fkey)
            if hit is not None and hit[1] is config.jax_enable_x64:
                return self._run(hit[0], [_as_array(args[i]) for i in hit[2]] +
                                 [_as_array(kwargs[k]) for k in hit[3]])
        key, closed, out_tree, leaves, donated = self._trace(args, kwargs)
        if self._spmd or _any_sharded(leaves) or spmd.constrains_layout(closed):
            return spmd.call(self, key, closed, out_tree, leaves, donated)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._compile(key, closed, out_tree, donated)
        if fkey is not None:
            self._remember_static_call(fkey, entry, args, kwargs)
        out = self._run(entry, [x if type(x) is ArrayImpl else dispatch.to_array(x)
                                for x in leaves])
        if donated:
            _forget_host_copies(leaves, donated)
        return out

    def _call_spmd(self, args, kwargs):
        key, closed, out_tree, leaves, donated = self._trace(args, kwargs)
        return spmd.call(self, key, closed, out_tree, leaves, donated)

    def _split_dyn_for_shardings(self, in_shardings, leaves, key):
        """One in_sharding per flat leaf: ``in_shardings`` is a prefix of the positional
        (dynamic) arguments; keyword arguments get None."""
        dyn_args, dyn_kwargs = pytree.tree_unflatten(key[0], list(leaves))
        if isinstance(in_shardings, list):
            in_shardings = tuple(in_shardings)
        per = spmd._broadcast(in_shardings, tuple(dyn_args), "in_shardings")
        return per + [None] * len(pytree.tree_leaves(dyn_kwargs))

    def _remember_static_call(self, fkey, entry, args, kwargs):
        n = len(args)
        static = {i % n for i in self.static_argnums if -n <= i < n}
        # a dynamic None is an empty pytree (its type and value are in fkey): no leaf to pass
        positions = tuple(i for i in range(n) if i not in static and args[i] is not None)
        names = tuple(sorted(k for k in kwargs
                             if k not in self.static_argnames and kwargs[k] is not None))
        dyn = [args[i] for i in positions] + [kwargs[k] for k in names]
        if not all(type(a) in _LEAF_TYPES for a in dyn):
            return  # pytrees: the general path flattens them
        avals = [a.aval for a in dyn if type(a) is ArrayImpl]  # keeps the ids in fkey theirs
        self._cache.remember(fkey, (entry, config.jax_enable_x64, positions, names, avals))

    def _run(self, entry, arrays):  # noqa: C901
        device, committed = devices.call_device(arrays, self.device)
        bufs = list(entry.const_bufs)
        bufs += [a._buf for a in arrays]
        if self._pinned is not None:  # SingleDeviceSharding in/out shardings
            if committed and device is not self._pinned:
                raise ValueError(
                    "Received incompatible devices for jitted computation. Got an argument "
                    f"of {self.__name__} committed to {device} and an explicit sharding on "
                    f"{self._pinned}")
            device = self._pinned
            committed = True
        outs = entry.run(devices.on_device(bufs, device), device)
        return self._wrap_outputs(entry, outs, committed)

    @staticmethod
    def _wrap_outputs(entry, outs, committed):
        aval = entry.leaf_aval
        if aval is not None:
            return array_from_buffer(aval, outs[0], committed)
        arrays = [array_from_buffer(av, b, committed) for av, b in zip(entry.out_avals, outs)]
        if entry.flat_tuple:
            return tuple(arrays)
        return pytree.tree_unflatten(entry.out_tree, arrays)

    def _call_traced(self, args, kwargs):
        key, closed, out_tree, leaves, _ = self._trace(args, kwargs)
        # One const-free Jaxpr per traced one, so that rules caching on it (batching, eager
        # calls) hit when the function closes over arrays.
        call_jaxpr, consts = _call_jaxpr(closed)
        if self.inline:  # the body's equations go into the outer Jaxpr, not one call
            outs = eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *consts, *leaves)
        else:
            outs = jit_p.bind(*consts, *leaves, jaxpr=call_jaxpr, name=self.__name__)
        return pytree.tree_unflatten(out_tree, outs)

    # -- ahead-of-time API --
    @traceback_util.api_boundary
    def trace(self, *args, **kwargs):
        key, closed, out_tree, leaves, donated = self._trace(
            args, kwargs, _avals_of(args, kwargs, self))
        return Traced(self, key, closed, out_tree, donated, leaves)

    @traceback_util.api_boundary
    def lower(self, *args, **kwargs):
        return self.trace(*args, **kwargs).lower()

    def eval_shape(self, *args, **kwargs):
        return self.trace(*args, **kwargs).out_info

    def clear_cache(self):
        self._cache.clear()
        self._trace_cache.clear()


def _any_sharded(xs):
    # an array laid out by a PmapSharding runs as one array, as the eager operations take it
    for x in xs:
        if type(x) is ShardedArray and not isinstance(x._sharding, PmapSharding):
            return True
    return False


def _warn_unusable_donations(jaxpr, donated):
    # JAX's warning for donated inputs that no output of their type can reuse (the same
    # matching as lowering.lower_module's aliasing): those inputs stay alive.
    free = [(a.shape, a.dtype) for a in jaxpr.out_avals]
    unusable = []
    for flag, v in zip(donated, jaxpr.invars):
        if flag:
            t = (v.aval.shape, v.aval.dtype)
            if t in free:
                free.remove(t)
            else:
                unusable.append(v.aval)
    if unusable:
        warnings.warn("Some donated buffers were not usable: " + ", ".join(
            f"ShapedArray({a.dtype.name}[{','.join(map(str, a.shape))}])" for a in unusable)
            + ".\nSee an explanation at "
            "https://docs.jax.dev/en/latest/faq.html#buffer-donation.", stacklevel=4)


def _check_placement(device, backend, in_shardings, out_shardings, jitted):
    """Validates jit's device, backend and shardings; returns the device to run on (None:
    the arguments decide). SingleDeviceSharding shardings all on one device pin the call
    there (committed arguments elsewhere are an error, outputs are committed)."""
    if device is not None and backend is not None:
        raise ValueError("can't specify both a device and a backend for jit, got "
                         f"device={device!r} and backend={backend!r}")
    runtime.check_backend(backend)  # JAX's RuntimeError for a missing backend
    if device is not None and not isinstance(device, runtime.Device):
        raise TypeError(f"jit(device=...) expects a Device (from pyjax.devices()), got "
                        f"{device!r}")
    shardings = {}
    for option, value in (("in_shardings", in_shardings), ("out_shardings", out_shardings)):
        for s in pytree.tree_leaves(value, is_leaf=spmd._is_leaf):
            if s is None:
                continue
            if isinstance(s, SingleDeviceSharding):
                shardings.setdefault(s.device_set.pop(), option)
            elif isinstance(s, (NamedSharding, spmd.PartitionSpec)):
                jitted._spmd = True
            elif isinstance(s, Sharding):
                raise NotImplementedError(
                    f"jit({option}=...) with {type(s).__name__}: pyjax supports None and "
                    "SingleDeviceSharding so far")
            else:
                raise TypeError(
                    f"jit({option}=...) expects None, a Sharding or a pytree of them, got "
                    f"{s!r} of type {type(s).__name__}")
    if jitted._spmd:
        if shardings or device is not None or backend is not None:
            raise NotImplementedError("jit with NamedSharding/PartitionSpec shardings together "
                                      "with SingleDeviceSharding, device or backend")
        return None
    if not shardings:
        return device
    if device is not None or backend is not None:
        raise ValueError("If backend or device is specified on jit, then in_shardings and "
                         "out_shardings should not be specified.")
    if len(shardings) > 1:
        raise NotImplementedError(
            "jit in_shardings/out_shardings on several devices "
            f"({sorted(d.id for d in shardings)}): pyjax runs a jitted function on one "
            "device so far")
    jitted._pinned = device = next(iter(shardings))
    return device


def _avals_of(args, kwargs, jitted):
    statics, dyn_args, dyn_kwargs = jitted._split(args, kwargs)
    leaves, _ = pytree.tree_flatten((dyn_args, dyn_kwargs))
    return tuple(_spec_aval(x) for x in leaves)


def _spec_aval(x):
    if isinstance(x, ShapeDtypeStruct):
        aval = ShapedArray(x.shape, x.dtype, x.weak_type)
        s = x.sharding
        if isinstance(s, NamedSharding) and s.mesh.explicit_axes:  # sharding in types
            from pyjax._src.core.sharding_rules import spec_of_sharding, with_spec
            aval = with_spec(aval, s.mesh, spec_of_sharding(s, aval.ndim))
        return aval
    if isinstance(x, ShapedArray):
        return x
    return _leaf_aval(x)


def _hashable(x):
    try:
        hash(x)
        return True
    except TypeError:
        return False


_NO_FUN = object()  # jit(static_argnums=...) without a function: a decorator


def jit(fun=_NO_FUN, *, static_argnums=None, static_argnames=None, donate_argnums=None,
        donate_argnames=None, device=None, inline=False, keep_unused=False, in_shardings=None,
        out_shardings=None, backend=None, abstracted_axes=None, compiler_options=None):
    """Compile ``fun`` with XLA: trace it once per signature (pytree structure, shapes,
    dtypes, weak types and static argument values) and run the cached executable after that.

    Can be used as ``jit(f)``, ``@jit`` or ``@partial(jit, static_argnums=...)``.
    """
    kw = dict(static_argnums=static_argnums, static_argnames=static_argnames,
              donate_argnums=donate_argnums, donate_argnames=donate_argnames, device=device,
              inline=inline, keep_unused=keep_unused, in_shardings=in_shardings,
              out_shardings=out_shardings, backend=backend, abstracted_axes=abstracted_axes,
              compiler_options=compiler_options)
    if fun is _NO_FUN:
        return lambda f: functools.wraps(f, assigned=(), updated=())(Jitted(f, **kw))
    return functools.wraps(fun, assigned=(), updated=())(Jitted(fun, **kw))


class disable_jit:
    """Context manager (``with pyjax.disable_jit():``) in which jitted functions run their
    Python directly, op by op (the ``jax_disable_jit`` config), e.g. to print values."""

    def __init__(self, disable: bool = True):
        self._disable = bool(disable)

    def __enter__(self):
        self._old = config.jax_disable_jit
        config.update("jax_disable_jit", self._disable)

    def __exit__(self, *exc):
        config.update("jax_disable_jit", self._old)


traceback_util.register_boundary(Jitted.__call__.__code__)


def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape=False, abstracted_axes=None):
    """``make_jaxpr(f)(*args)`` returns the ClosedJaxpr that ``f`` traces to at ``args``."""
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")
    if abstracted_axes is not None:
        raise NotImplementedError(
            f"make_jaxpr(abstracted_axes={abstracted_axes!r}): shape polymorphism is not "
            "supported by pyjax")
    axis_env = _check_axis_env(axis_env)
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)

    @functools.wraps(fun)
    def make(*args, **kwargs):
        j = Jitted(fun, static_argnums=static_argnums)
        statics, dyn_args, dyn_kwargs = j._split(args, kwargs)
        leaves, in_tree = pytree.tree_flatten((dyn_args, dyn_kwargs))
        in_avals = tuple(_spec_aval(x) for x in leaves)
        out_store = []
        flat_fun = j._make_flat_fun(statics, len(dyn_args), sorted(dyn_kwargs), in_tree,
                                    out_store)
        dbg = staging.DebugInfo(j.__name__, j._dyn_arg_names(args, kwargs, dyn_args, dyn_kwargs),
                                "make_jaxpr")
        if config.jax_no_tracing:
            _refuse_tracing(j.__name__, fun)
        with contextlib.ExitStack() as stack:  # axis_env's names are bound while tracing
            for name, size in axis_env:
                stack.enter_context(parallel.bind_axis(name, size))
            closed = staging.trace_to_jaxpr(flat_fun, in_avals, dbg)
        if return_shape:
            return closed, _shape_dtype_tree(out_store[0], closed.out_avals)
        return closed
    return traceback_util.api_boundary(make)


def _check_axis_env(axis_env):
    """make_jaxpr's ``axis_env``: a sequence of ``(name, size)`` pairs, outermost first."""
    if axis_env is None:
        return ()
    pairs = []
    for entry in axis_env:
        try:
            name, size = entry
        except (TypeError, ValueError):
            raise ValueError("make_jaxpr axis_env must be a sequence of (axis_name, size) "
                            f"pairs, got {entry!r}") from None
        if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < 0:
            raise TypeError(f"make_jaxpr axis_env: the size of axis {name!r} must be a "
                            f"non-negative int, got {size!r}")
        pairs.append((name, int(size)))
    return tuple(pairs)


@traceback_util.api_boundary
def eval_shape(fun, *args, **kwargs):
    """The output shapes and dtypes of ``fun(*args)`` without running it (args may be
    ``ShapeDtypeStruct``s). ``ShapeDtypeStruct``s that ``fun`` returns come back as they
    are, as in JAX (lineax compares structures by ``eval_shape(lambda: structure)``)."""
    Jitted(fun)  # checks that fun is callable
    structs = []

    def is_struct(x):
        return isinstance(x, ShapeDtypeStruct)

    # the users' view of pytrees (key arrays are leaves, as in the result)
    def traced(*a, **k):
        out = fun(*a, **k)
        structs[:] = [pytree.user_tree_map(lambda x: x if is_struct(x) else None, out)]
        return pytree.user_tree_map(lambda x: None if is_struct(x) else x, out)

    functools.update_wrapper(traced, fun, updated=())
    shapes = Jitted(traced).eval_shape(*args, **kwargs)
    if not any(map(is_struct, pytree.user_tree_flatten(structs[0])[0])):
        return shapes
    return pytree.user_tree_map(lambda s, r: r if s is None else s, structs[0], shapes,
                                is_leaf=lambda x: x is None)
