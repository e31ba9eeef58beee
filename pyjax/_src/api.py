"""Device queries and host/device movement: ``pyjax.devices``, ``device_put``, ..."""
from __future__ import annotations

import numpy as np

from pyjax._src import runtime
from pyjax._src.core import pytree
from pyjax._src.core import trace as trace_mod
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.sharding import Sharding
from pyjax._src.core.trace import Tracer, get_aval
from pyjax._src.dispatch import eager as dispatch


def _client(backend=None):
    return runtime.backend_client(backend)


def devices(backend=None):
    """All devices of the backend (``PYJAX_CPU_DEVICES=N`` gives N CPU devices)."""
    return list(_client(backend).devices)


def local_devices(process_index=None, backend=None, host_id=None):
    """The devices of process ``process_index`` (default: this one, the only one)."""
    if process_index is None:
        process_index = host_id if host_id is not None else 0
    return [d for d in devices(backend) if d.process_index == process_index]


def device_count(backend=None):
    return len(devices(backend))


def local_device_count(backend=None):
    return len(local_devices(backend=backend))


def default_backend():
    return _client().platform


def process_index(backend=None):
    return _client(backend).process_index


def process_count(backend=None):
    _client(backend)
    return 1  # pyjax runs in one process


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """Put every leaf of the pytree ``x`` on ``device`` (a Device or a SingleDeviceSharding),
    committing it there.

    ``donate=True`` (or a pytree of bools like ``x``): the input arrays are deleted after the
    transfer. ``may_alias=False``: the result never shares the input's buffer (None/True: it
    may, when ``x`` is already there). ``src`` is not supported (it is for transfers between
    processes)."""
    if src is not None:
        raise NotImplementedError("device_put(src=...) is not supported by pyjax: it is for "
                                  "transfers between processes")
    if device is not None and not isinstance(device, (runtime.Device, Sharding)):
        raise TypeError(f"device_put expects a Device or a Sharding for device=, got "
                        f"{device!r} of type {type(device).__name__}")
    if may_alias not in (None, True, False):
        raise TypeError(f"may_alias must be None or a bool, got {may_alias!r}")
    if isinstance(donate, bool):
        return pytree.tree_map(lambda leaf: _put_leaf(leaf, device, donate, may_alias), x)
    return pytree.tree_map(lambda leaf, d: _put_leaf(leaf, device, bool(d), may_alias),
                           x, donate)


def _put_leaf(leaf, device, donate, may_alias):
    if isinstance(leaf, Tracer):
        return leaf
    if type(leaf) is ArrayImpl and leaf.is_deleted():
        # at once, as JAX: the transfer would only fail when the result is read
        leaf._buf.block_until_ready()  # raises DeletedBufferError naming the array
    out = dispatch.device_put(leaf, device)
    if type(leaf) is ArrayImpl:
        if (donate or may_alias is False) and out._buf is leaf._buf:
            # a fresh buffer, so that the result outlives the donated input (and never
            # aliases it when may_alias=False)
            out = ArrayImpl(out.aval, leaf._buf.copy_to_device(leaf._buf.device),
                            out._committed)
        if donate:
            leaf.delete()
    return out


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
