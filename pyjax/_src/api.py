"""Device queries and host/device movement: ``pyjax.devices``, ``device_put``, ..."""
from __future__ import annotations

import numpy as np

from pyjax._src import runtime
from pyjax._src.core import pytree
from pyjax._src.core import trace as trace_mod
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.trace import Tracer, get_aval
from pyjax._src.dispatch import eager as dispatch


def _client(backend=None):
    return runtime.backend_client(backend)


def devices(backend=None):
    """All devices of the backend (``PYJAX_CPU_DEVICES=N`` gives N CPU devices)."""
    return list(_client(backend).devices)


def local_devices(process_index=None, backend=None, host_id=None):
    return devices(backend)


def device_count(backend=None):
    return len(devices(backend))


def local_device_count(backend=None):
    return device_count(backend)


def default_backend():
    return _client().platform


def process_index(backend=None):
    return 0


def process_count(backend=None):
    return 1


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """Put every leaf of the pytree ``x`` on ``device`` (committing it there)."""
    return pytree.tree_map(lambda leaf: _put_leaf(leaf, device), x)


def _put_leaf(leaf, device):
    if isinstance(leaf, Tracer):
        return leaf
    return dispatch.device_put(leaf, device)


def device_get(x):
    """Bring every array leaf of ``x`` to the host as a NumPy array."""
    def get(leaf):
        if isinstance(leaf, ArrayImpl):
            return np.asarray(leaf)
        return leaf
    return pytree.tree_map(get, x)


def block_until_ready(x):
    """Wait until every array in the pytree ``x`` is computed; returns ``x``."""
    for leaf in pytree.tree_leaves(x):
        if isinstance(leaf, ArrayImpl):
            leaf.block_until_ready()
    return x


def typeof(x):
    return get_aval(x)


class ensure_compile_time_eval:
    """Evaluate eagerly inside this block even while tracing (as ``jax.ensure_compile_time_eval``)."""

    def __enter__(self):
        self._ctx = trace_mod.set_current_trace(None)
        self._ctx.__enter__()

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)
