"""Tiered compilation: a program is compiled quickly at a low LLVM optimisation level and runs
at once, while a background thread compiles it at the full level and swaps that build into the
same ``Executable`` (``Executable.install``) when it is ready.

Measured on the MLP ``jit(grad(loss))`` (docs/first_call.md): the low tier compiles about 3x
faster and runs about 1.3x slower. The tiers are not bit-identical: LLVM at level 0 does not
contract ``a * b + c`` into fused multiply-adds, so results may differ in the last bits (a few
float32 ulps; tests/runtime/test_tiered.py checks the tolerance). dispatch/compiler.py decides
which programs are tiered (only those whose full compile is long) and the flag
``pyjax_tiered_compilation`` turns it off.

Rules that keep it safe:

* One worker thread, started on demand and ended when the queue is empty, compiles one
  program at a time (the second core; PJRT compiles and executes concurrently, and ctypes
  releases the GIL during the compile), at a lower priority than the program's own threads.
* The worker holds only a weak reference to the executable between jobs: a program freed
  before its turn is not compiled.
* Only the full build reaches the persistent compilation cache: the low tier is compiled with
  ``Client._compile_loaded`` (never stored); the full one with ``Client._compile_or_load``.
  A full build already on disk is loaded instead of tiering.
* At interpreter exit the queue is dropped and a compile in progress is awaited (atexit, run
  before the client is closed), so no thread is inside the plugin while the process tears it
  down. A forked child starts with an empty queue.
* The first tiered program of a process also starts a one-off warm-up (a small matrix product
  run on another thread while it compiles), which takes the plugin's one-time set-up cost off
  that program's first run.
"""
from __future__ import annotations

import atexit
import collections
import contextlib
import logging
import os
import threading
import weakref

import numpy as np

from . import disk_cache
from .compile_options import DEFAULT_OPTION_OVERRIDES, build_compile_options
from .errors import XlaRuntimeError
from .executable import Executable

# What the low tier changes, over the program's own XLA options: LLVM level 0, fusions emitted
# by the older elemental emitter rather than through MLIR, and one LLVM module (no parallel
# code generation, whose split costs more than it saves at level 0). Measured on the MLP
# jit(grad), quiet machine: 31 ms against 155 ms at the full level and 86 ms at level 0 alone,
# with the same results as level 0 alone (docs/first_call.md).
LOW_TIER_OVERRIDES = {"xla_backend_optimization_level": 0,
                      "xla_cpu_use_fusion_emitters": False,
                      "xla_cpu_parallel_codegen_split_count": 1}

# The worker's nice value, relative to the process (measured in docs/first_call.md).
WORKER_NICENESS = 10
_log = logging.getLogger("pyjax")
_cv = threading.Condition()
_jobs: collections.deque = collections.deque()  # (weakref to Executable, client, code, options)
_state = {"worker": None, "pending": 0, "closing": False, "held": 0}
stats = {"low": 0, "installed": 0, "skipped": 0, "failed": 0, "loaded_full": 0}


def compile_tiered(client, code, in_types, out_types, overrides):
    """A portable single-device Executable of the MLIR ``code`` (bytes): the full build from
    the persistent cache when it is there, else a low-tier build whose full build is queued.
    ``overrides``: the program's XLA option overrides (the full tier's)."""
    device = client._default_device
    full = build_compile_options(1, 1, device_assignment=[device.id],
                                 env_option_overrides=overrides)
    portable = build_compile_options(1, 1, portable=True, env_option_overrides=overrides)
    if disk_cache.enabled():
        owner = client._load_cached(disk_cache.key_of(client._api, code, full))
        if owner is not None:
            stats["loaded_full"] += 1
            return Executable(client, owner, in_types, out_types, portable=True,
                              portable_source=(code, portable))
    warm_up(client)  # on the other core, while this thread compiles (if not yet done)
    low = build_compile_options(1, 1, device_assignment=[device.id],
                                env_option_overrides={**overrides, **LOW_TIER_OVERRIDES})
    try:
        owner = client._compile_loaded(code, low)
    except XlaRuntimeError:  # not at this level: compile it once, at the full level
        return Executable(client, client._compile_or_load(code, full), in_types, out_types,
                          portable=True, portable_source=(code, portable))
    exe = Executable(client, owner, in_types, out_types, portable=True,
                     portable_source=(code, portable))
    stats["low"] += 1
    exe.mark_low_tier()  # before the worker may install the full build
    _submit(exe, client, code, full)  # (not at interpreter exit: it then stays low)
    return exe


# The first matrix product a process runs costs 20-350 ms more than the next ones (measured;
# the plugin's one-time set-up of its matrix-product kernels and threads). A small program
# compiled and run in the background when the client is created (or at the latest while the
# first tiered program compiles) takes that cost off the first call. One product: YNNPACK
# takes it on the YNNPACK build, Eigen (with oneDNN's GEMM, which generates its kernels on
# first use, ~21 ms once per process) on xla-cpu-pjrt. On the YNNPACK build pyjax's lowering
# gives YNNPACK the products Eigen would take (lax/dot.py), so generating oneDNN's kernels
# there as well only took CPU from the first call (warm-cache first call of the MLP
# `jit(grad)` 35 -> 22 ms median without it, docs/first_call.md); a product that still goes to
# Eigen (a batched or float64 one) pays it on its first run. Not counted as a user's compile;
# kept in the persistent cache (when on) under its own counts (``warm_up_*``).
_WARM_UP_MODULE = b"""func.func public @main(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = stablehlo.dot_general %a, %a, contracting_dims = [1] x [0]
      : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}"""
_warmed: "weakref.WeakSet" = weakref.WeakSet()  # clients warmed up (or being)
_warm_threads: list = []


def warm_up(client):
    """Starts the one-off warm-up of ``client`` on a background thread (once per client; the
    client calls it when it is created, so that it is usually done before the first
    program runs)."""
    with _cv:
        if client in _warmed or _state["closing"]:
            return
        _warmed.add(client)
        t = threading.Thread(target=_run_warm_up, args=(client,), name="pyjax-warm-up",
                             daemon=True)
        _warm_threads.append(t)
        t.start()


def _run_warm_up(client):
    try:
        for out in _warm_up_products(client):
            out.block_until_ready()
    except BaseException as e:  # only a missed speed-up
        _log.debug("pyjax: the matrix-product warm-up failed: %s", e)
    finally:
        with _cv:
            _warm_threads.remove(threading.current_thread())
            _cv.notify_all()


def _warm_up_products(client):
    """Runs the warm-up program on ``client``'s default device; its two result buffers."""
    device = client._default_device
    options = build_compile_options(
        1, 1, device_assignment=[device.id],
        env_option_overrides={**DEFAULT_OPTION_OVERRIDES, **LOW_TIER_OVERRIDES})
    # from the persistent cache when it is on: ~2 ms instead of a ~30 ms compile, so a
    # process whose programs are all on disk has its set-up done before its first run
    exe = Executable(client, client._compile_or_load(_WARM_UP_MODULE, options,
                                                     counted=False, kind="warm_up"),
                     None, None, portable=False)
    a = client.buffer_from_pyval(np.ones((64, 64), np.float32), device)
    return exe.execute_unchecked([a])


def _submit(exe, client, code, options):
    with _cv:
        if _state["closing"]:
            return False
        _jobs.append((weakref.ref(exe), client, code, options))
        _state["pending"] += 1
        if _state["worker"] is None:
            t = threading.Thread(target=_work, name="pyjax-tiered-compile", daemon=True)
            _state["worker"] = t
            t.start()
    return True


def _work():
    _lower_priority()
    while True:
        with _cv:
            _cv.wait_for(lambda: not _state["held"] or _state["closing"])
            if not _jobs or _state["closing"]:
                _state["pending"] -= len(_jobs)
                _jobs.clear()
                _state["worker"] = None
                _cv.notify_all()
                return
            ref, client, code, options = _jobs.popleft()
        try:
            _upgrade(ref, client, code, options)
        except BaseException as e:  # never let the thread die with an exception
            stats["failed"] += 1
            _log.warning("pyjax: the full-level compile of a program failed (%s); it keeps "
                         "running its quickly compiled build", e)
        finally:
            with _cv:
                _state["pending"] -= 1
                _cv.notify_all()


def _lower_priority():
    """Makes this thread yield the CPU to the program's own threads (Linux: a thread's nice
    value is its own), so that the first runs of the low tier are not slowed down by the
    compile that replaces it."""
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid,
                       min(19, os.getpriority(os.PRIO_PROCESS, tid) + WORKER_NICENESS))
    except (AttributeError, OSError):  # not Linux, or not allowed: normal priority
        pass


def _upgrade(ref, client, code, options):
    if ref() is None or client._closed:  # freed before its turn
        stats["skipped"] += 1
        return
    owner = client._compile_or_load(code, options)  # stores the full build on disk
    exe = ref()
    if exe is None or client._closed:
        stats["skipped"] += 1
        return  # the owner frees the build when collected
    exe.install(owner)
    stats["installed"] += 1


def wait_for_upgrades(timeout=None):
    """Blocks until every queued full-level compile has been installed (or skipped) and the
    warm-up has ended; returns False if ``timeout`` seconds passed first. Inside ``hold()``
    nothing can finish: that raises instead of waiting forever."""
    with _cv:
        if _state["held"] and _state["pending"]:
            raise RuntimeError("wait_for_upgrades() inside tiered.hold(): the upgrades it "
                               "waits for cannot start until the hold ends")
        return _cv.wait_for(lambda: _state["pending"] == 0 and not _warm_threads, timeout)


@contextlib.contextmanager
def hold():
    """``with hold(): ...``: no full-level compile starts inside the block (tests use it to
    run a program's low tier deterministically)."""
    with _cv:
        _state["held"] += 1
    try:
        yield
    finally:
        with _cv:
            _state["held"] -= 1
            _cv.notify_all()


def pending():
    """The number of programs waiting for (or in) their full-level compile."""
    return _state["pending"]


def _after_fork_in_child():
    # The worker thread does not exist in a forked child: start from an empty state there.
    global _cv
    _cv = threading.Condition()
    _jobs.clear()
    _state.update(worker=None, pending=0, held=0)
    _warm_threads.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


@atexit.register  # registered after client._shutdown, so it runs before it
def _shutdown():
    with _cv:
        _state["closing"] = True
        worker = _state["worker"]
        threads = [t for t in [worker] + _warm_threads if t is not None]
        _cv.notify_all()
    for t in threads:
        t.join()
