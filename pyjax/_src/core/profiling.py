"""Host-side spans for ``pyjax.profiler`` (layer 1, so every layer can record).

``span(name, cat)`` is a context manager that records ``(name, cat, start_us, dur_us,
thread id, args)`` while a trace is being recorded and costs one list read otherwise. The
profiler (``_src/profiler.py``) turns the records into a Chrome/Perfetto trace file.
"""
from __future__ import annotations

import contextlib
import os
import threading
import time

active = [False]
events: list = []
_lock = threading.Lock()
_null = contextlib.nullcontext()
PID = os.getpid()


class _Span:
    __slots__ = ("name", "cat", "args", "start")

    def __init__(self, name, cat, args):
        self.name, self.cat, self.args = name, cat, args

    def __enter__(self):
        self.start = time.perf_counter_ns()
        return self

    def __exit__(self, *exc):
        end = time.perf_counter_ns()
        record(self.name, self.cat, self.start, end - self.start, self.args)


def span(name, cat="pyjax", **args):
    """A context manager recording a span while profiling (else a shared no-op)."""
    if not active[0]:
        return _null
    return _Span(name, cat, args)


def record(name, cat, start_ns, dur_ns, args=None):
    if active[0]:
        with _lock:
            events.append((name, cat, start_ns // 1000, max(dur_ns // 1000, 1),
                           threading.get_ident(), args or {}))
