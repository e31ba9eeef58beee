"""``jax.profiler``: host-side traces of what pyjax does, written as a Chrome/Perfetto trace.

While a trace is recorded (``trace(log_dir)`` or ``start_trace``/``stop_trace``), pyjax
records spans for tracing, lowering, compiling, jitted calls, eager operations, transfers and
the user's annotations (``TraceAnnotation``, ``annotate_function``,
``StepTraceAnnotation``). ``stop_trace`` writes them to
``<log_dir>/plugins/profile/<run>/perfetto_trace.json.gz``: Chrome's trace-event JSON, which
the Perfetto UI (ui.perfetto.dev) and ``chrome://tracing`` open. Device-side timelines
(XLA's own profiler) are not recorded: the CPU plugin exposes no profiler extension.
"""
from __future__ import annotations

import contextlib
import functools
import gzip
import json
import os
import socket
import threading
import time

from pyjax._src.core import profiling

_state = {"log_dir": None, "perfetto_link": False}
_lock = threading.Lock()


def _refresh_hooks():
    from pyjax._src.dispatch import debug_values
    from pyjax._src.transformations import jit
    debug_values.refresh()
    jit.refresh_modes()


class ProfileOptions:
    """Options of a profile (``start_trace(..., profiler_options=)``), with JAX's fields and
    defaults. pyjax records host spans only: ``host_tracer_level`` 1 to 3 record them (pyjax
    has one level of detail) and 0 records none; other fields must keep their defaults (they
    configure XLA's profiler, which the CPU plugin does not expose)."""

    _DEFAULTS = {"host_tracer_level": 2, "python_tracer_level": 1, "enable_hlo_proto": True,
                 "include_dataset_ops": True, "duration_ms": 0, "start_timestamp_ns": 0,
                 "repository_path": "", "session_id": "", "raise_error_on_start_failure": False}

    def __init__(self):
        for k, v in self._DEFAULTS.items():
            setattr(self, k, v)
        self.advanced_configuration = {}

    def __repr__(self):
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._DEFAULTS)
        return f"ProfileOptions({fields})"

    def _check(self):
        """The host tracer level, after refusing the options pyjax cannot honour."""
        changed = sorted(k for k, v in self._DEFAULTS.items()
                         if k != "host_tracer_level" and getattr(self, k) != v)
        if self.advanced_configuration:
            changed.append("advanced_configuration")
        if changed:
            raise NotImplementedError(f"ProfileOptions {changed}: pyjax records host spans "
                                      "only (no Python tracer or XLA profiler options)")
        level = self.host_tracer_level
        if not isinstance(level, int) or not 0 <= level <= 3:
            raise ValueError(f"ProfileOptions.host_tracer_level must be 0 to 3, got {level!r}")
        return level


def start_trace(log_dir, create_perfetto_link: bool = False,
                create_perfetto_trace: bool = False, profiler_options=None):
    """Starts recording; ``stop_trace`` writes the trace under ``log_dir``."""
    record = True
    if profiler_options is not None:
        if not isinstance(profiler_options, ProfileOptions):
            raise TypeError(f"profiler_options must be a jax.profiler.ProfileOptions, got "
                            f"{type(profiler_options).__name__}")
        record = profiler_options._check() > 0
    with _lock:
        if profiling.active[0]:
            raise RuntimeError("Profile has already been started. Only one profile may be "
                               "run at a time.")
        _state["log_dir"] = os.fspath(log_dir)
        _state["perfetto_link"] = bool(create_perfetto_link)
        _state["record"] = record
        profiling.events.clear()
        profiling.active[0] = True
    _refresh_hooks()


def stop_trace():
    """Stops recording and writes the trace; returns the path of the file written."""
    with _lock:
        if not profiling.active[0]:
            raise RuntimeError("No profile started")
        profiling.active[0] = False
        # host_tracer_level=0 (ProfileOptions): the trace file has no host spans
        events = list(profiling.events) if _state.get("record", True) else []
        profiling.events.clear()
        log_dir = _state["log_dir"]
    _refresh_hooks()
    run = time.strftime("%Y_%m_%d_%H_%M_%S")
    out_dir = os.path.join(log_dir, "plugins", "profile", run)
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "perfetto_trace.json.gz")
    with gzip.open(path, "wt") as f:
        json.dump(_chrome_trace(events), f)
    if _state["perfetto_link"]:
        print(f"Open {path} in https://ui.perfetto.dev (Open trace file).")
    return path


def _chrome_trace(events):
    host = socket.gethostname()
    threads = sorted({e[4] for e in events})
    out = [{"ph": "M", "name": "process_name", "pid": profiling.PID,
            "args": {"name": f"pyjax host ({host})"}}]
    out += [{"ph": "M", "name": "thread_name", "pid": profiling.PID, "tid": t,
             "args": {"name": f"thread {i}"}} for i, t in enumerate(threads)]
    out += [{"ph": "X", "name": name, "cat": cat, "ts": ts, "dur": dur,
             "pid": profiling.PID, "tid": tid, "args": {k: str(v) for k, v in args.items()}}
            for name, cat, ts, dur, tid, args in events]
    return {"traceEvents": out, "displayTimeUnit": "ms"}


@contextlib.contextmanager
def trace(log_dir, create_perfetto_link: bool = False, create_perfetto_trace: bool = False,
          profiler_options=None):
    """``with jax.profiler.trace("/tmp/trace"):`` records the block (see ``start_trace``)."""
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


class TraceAnnotation:
    """A named span of the user's code in the trace (``with TraceAnnotation("step"):``);
    keyword arguments are shown with it."""

    def __init__(self, name: str, **kwargs):
        self.name, self.kwargs = name, kwargs
        self._span = None

    def __enter__(self):
        self._span = profiling.span(self.name, "user", **self.kwargs)
        self._span.__enter__()
        return self

    def __exit__(self, *exc):
        self._span.__exit__(*exc)


class StepTraceAnnotation(TraceAnnotation):
    """A training-step span: ``StepTraceAnnotation("train", step_num=i)``."""

    def __init__(self, name: str, **kwargs):
        super().__init__(name, **kwargs)


def annotate_function(func, name=None, **decorator_kwargs):
    """``func`` recorded as a span named ``name`` (default: its qualified name) each call."""
    label = name or getattr(func, "__qualname__", getattr(func, "__name__", "function"))

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with TraceAnnotation(label, **decorator_kwargs):
            return func(*args, **kwargs)
    return wrapper


def start_server(port: int):
    raise NotImplementedError("pyjax has no profiler server (TensorBoard's live capture); "
                              "use jax.profiler.trace(log_dir) to write a trace file")


def stop_server():
    raise NotImplementedError("pyjax has no profiler server")
