"""Compiling a Jaxpr: lower it to StableHLO text and compile it with the PJRT client. Every
executable pyjax runs is made by ``compile_jaxpr``. ``compiled_call`` keeps it per
const-free ClosedJaxpr, so a Jaxpr that is both a jitted function's and a ``jit`` equation's
run eagerly compiles once. That memo is weakly keyed rather than a bounded ``Cache``: its
executables live exactly as long as the Jaxpr, which the jitted function's caches hold.
Long-compiling programs are compiled in two tiers (``_tiering_pays``, runtime/tiered.py;
docs/first_call.md).
"""
from __future__ import annotations

import logging
import weakref

from pyjax._src import runtime
from pyjax._src.core import profiling
from pyjax._src.core.config import config
from pyjax._src.core.jaxpr import (ClosedJaxpr, Eqn, Jaxpr, Var, cache_for, eqn_has_effects,
                                   has_ordered_effects)
from pyjax._src.dispatch import cache, jaxpr_key
from pyjax._src.interpreters import lowering
from pyjax._src.runtime.compile_options import DEFAULT_OPTION_OVERRIDES

# const-free ClosedJaxpr -> {donated_invars: executable}
_calls: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
cache.on_clear(_calls.clear)


# (StableHLO text, compile settings, argument and result types) -> the live Executable: distinct
# jitted functions that lower to the same program (a lambda re-made on each call of its maker)
# share one executable while one of them is in use; the text names the function, so only
# same-named programs can meet here.
_by_module: "weakref.WeakValueDictionary" = weakref.WeakValueDictionary()
cache.on_clear(_by_module.clear)


_CACHE_FLAGS = ("jax_compilation_cache_dir", "jax_enable_compilation_cache",
                "jax_persistent_cache_min_compile_time_secs",
                "jax_persistent_cache_min_entry_size_bytes", "jax_compilation_cache_max_size")


def _configure_disk_cache(_=None):
    """Hands the persistent compilation cache flags to the runtime, which reads no flags."""
    on = config.jax_enable_compilation_cache
    runtime.disk_cache.configure(
        config.jax_compilation_cache_dir if on else None,
        min_compile_seconds=config.jax_persistent_cache_min_compile_time_secs,
        min_entry_bytes=config.jax_persistent_cache_min_entry_size_bytes,
        max_size=config.jax_compilation_cache_max_size)


_configure_disk_cache()
for _flag in _CACHE_FLAGS:
    config.on_change(_flag, _configure_disk_cache)
del _flag

_log = logging.getLogger("pyjax")
compile_count = [0]  # programs compiled in this process (test_util.count_compiles reads it)


def compile_jaxpr(jaxpr: Jaxpr, name, *, donated_invars=(), num_replicas=1,
                  num_partitions=1, device_assignment=None, option_overrides=None,
                  **lower_kw):
    """Lower and compile a Jaxpr whose ``@main`` takes constvars then invars.
    ``option_overrides``: XLA options (``runtime.compile_options.option_overrides``)."""
    if config.jax_log_compiles:
        _log.warning("Compiling %s with global shapes and types %s.", name,
                     [a.str_short() for a in [v.aval for v in jaxpr.constvars] +
                      jaxpr.in_avals])
    client = runtime.get_client()
    # lowering rules pick per platform ('cpu': LAPACK custom calls, host callbacks, ...)
    lower_kw.setdefault("platform", client.pjrt_platform_name)
    lower_kw.update(donated_invars=tuple(donated_invars), num_replicas=num_replicas,
                    num_partitions=num_partitions)
    text = lkey = None
    if runtime.disk_cache.enabled():  # a warm persistent cache has the text: no lowering
        lkey = jaxpr_key.lowering_key(jaxpr, name, lower_kw,
                                      (len(client.devices), client.platform,
                                       runtime.cpu_dots_want_row_major()))
        if lkey is not None:
            text = runtime.disk_cache.load_text(lkey)
            if text is not None and _HOST_CALL in text:
                text = None  # never stored (below); an entry from elsewhere is not trusted
    store_text = text is None and lkey is not None
    if text is None:
        with profiling.span(f"lower {name}", "compile"):
            text = lowering.lower_module(jaxpr, name, **lower_kw)
        # Host kernels and callbacks are registered with this process's FFI table while
        # lowering, and the text names them by table id: a process that skipped lowering
        # would call unregistered (or other) functions. Such texts are not kept.
        store_text = store_text and _HOST_CALL not in text
    in_types = [(a.dtype, a.shape) for a in
                [v.aval for v in jaxpr.constvars] + jaxpr.in_avals]
    out_types = [(a.dtype, a.shape) for a in jaxpr.out_avals]
    key = (text, num_replicas, num_partitions,
           None if device_assignment is None else
           tuple(getattr(d, "id", d) for d in device_assignment),
           None if option_overrides is None else tuple(sorted(option_overrides.items())),
           tuple(in_types), tuple(out_types))
    exe = _by_module.get(key)
    if exe is not None:  # an equal program (another jit of the same function) is alive
        return exe
    compile_count[0] += 1
    disk_stats = runtime.disk_cache.stats
    used_disk = disk_stats["stores"] + disk_stats["hits"]
    with profiling.span(f"compile {name}", "compile"):
        if (num_replicas == num_partitions == 1 and device_assignment is None
                and _tiering_pays(client, text, option_overrides, jaxpr)):
            exe = runtime.tiered.compile_tiered(client, text.encode(), in_types, out_types,
                                                DEFAULT_OPTION_OVERRIDES)
        else:
            exe = client.compile(text, in_types, out_types, num_replicas=num_replicas,
                                 num_partitions=num_partitions,
                                 device_assignment=device_assignment,
                                 env_option_overrides=option_overrides)
    # Programs with effects (host callbacks, FFI calls) run synchronously: ordered callbacks
    # end before the next run starts, and every effect has happened when the call returns
    # (what jax.effects_barrier waits for; PJRT gives no completion signal for a program
    # without results).
    if any(eqn_has_effects(e) for e in jaxpr.eqns):
        exe.synchronous = True
    # the text too, unless the cache's thresholds keep small programs out (then only when
    # the executable was stored or loaded: a tiered one is stored later, the text next time)
    if store_text and (runtime.disk_cache.settings.min_compile_seconds <= 0
                       or disk_stats["stores"] + disk_stats["hits"] != used_disk):
        runtime.disk_cache.store_text(lkey, text)
    _by_module[key] = exe
    return exe


_HOST_CALL = runtime.ffi.TARGET.decode()


# Tiered compilation (runtime/tiered.py) pays where LLVM's optimisation dominates the compile:
# programs with matrix products or convolutions and at least this many StableHLO operations
# (measured in docs/first_call.md: an MLP's jit(grad) has ~90 and compiles ~3x faster at the
# low level; elementwise chains gain nothing).
TIERED_MIN_OPS = 40
_TIER_WORTHY = ("stablehlo.dot_general", "stablehlo.convolution")


def _tiering_pays(client, text, option_overrides, jaxpr):
    """Whether to compile ``text`` in two tiers: on, on CPU, with pyjax's default XLA
    options (a user's ``compiler_options`` are compiled as given), no ordered effects, and
    a long compile expected."""
    return (config.pyjax_tiered_compilation and client.platform == "cpu"
            and (option_overrides is None or option_overrides == DEFAULT_OPTION_OVERRIDES)
            and any(op in text for op in _TIER_WORTHY)
            and text.count("stablehlo.") >= TIERED_MIN_OPS
            and not has_ordered_effects(jaxpr))


def compiled_call(closed: ClosedJaxpr, name, donated_invars=(), option_overrides=None):
    """The executable of the const-free ``closed``, compiled once per donation pattern and
    XLA options."""
    per = cache_for(_calls, closed)
    key = (tuple(donated_invars),
           None if option_overrides is None else tuple(sorted(option_overrides.items())))
    exe = per.get(key)
    if exe is None:
        exe = per[key] = compile_jaxpr(closed.jaxpr, name, donated_invars=key[0],
                                       option_overrides=option_overrides)
    return exe


def compile_primitive(primitive, params, avals):
    """``(executable, out_avals)`` of one primitive applied to operands of ``avals``."""
    out = primitive.abstract_eval(*avals, **params)
    out_avals = list(out) if primitive.multiple_results else [out]
    invars = [Var(a) for a in avals]
    outvars = [Var(a) for a in out_avals]
    jaxpr = Jaxpr([], invars, outvars, [Eqn(primitive, invars, outvars, params)])
    return compile_jaxpr(jaxpr, primitive.name), tuple(out_avals)
