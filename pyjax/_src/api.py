"""Device queries and host/device movement: ``pyjax.devices``, ``device_put``, ..."""
from __future__ import annotations

import numpy as np

from pyjax._src import runtime
from pyjax._src.core import profiling, pytree
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
    with profiling.span("device_put", "transfer"):
        return _device_put(x, device, src=src, donate=donate, may_alias=may_alias)


def _device_put(x, device=None, *, src=None, donate=False, may_alias=None):
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


def process_indices(backend=None):
    """The indices of every process (``[0]``: pyjax runs in one process)."""
    return list(range(process_count(backend)))


# JAX's deprecated names for the process queries
host_id = process_index
host_count = process_count
host_ids = process_indices


def default_device(device):
    """``with jax.default_device(d):`` places uncommitted values on ``d`` in the block (the
    ``jax_default_device`` flag)."""
    from pyjax._src.core.config import flag_context
    return flag_context("jax_default_device")(device)


def live_arrays(platform=None):
    """Every Array alive in this process whose buffer is not deleted (found by the garbage
    collector's walk of live objects: meant for debugging, not for hot loops)."""
    import gc
    if platform is not None and platform != default_backend():
        return []
    return [o for o in gc.get_objects() if type(o) is ArrayImpl and not o.is_deleted()]


def copy_to_host_async(x):
    """Starts copying ``x`` to the host. On the CPU the host reads device memory in place, so
    there is nothing to start; the later read waits only for the computation."""
    return None


def print_environment_info(return_string: bool = False):
    """Versions of pyjax, Python, NumPy and the PJRT plugin, and the devices."""
    import platform
    import sys
    import pyjax
    c = _client()
    lines = [f"pyjax:    {pyjax.__version__}",
             f"numpy:    {np.__version__}",
             f"python:   {sys.version.splitlines()[0]}",
             f"platform: {platform.platform()}",
             f"backend:  {c.platform} {c.platform_version} (PJRT C API "
             f"{c.api_version[0]}.{c.api_version[1]})",
             f"plugin:   {c._api.path}",
             f"devices:  {len(c.devices)} ({', '.join(str(d) for d in c.devices[:4])}"
             f"{', ...' if len(c.devices) > 4 else ''})"]
    text = "\n".join(lines)
    if return_string:
        return text
    print(text)


def named_scope(name: str):
    """``with jax.named_scope("block"):`` prefixes the names of the operations traced in the
    block: the lowered program's op locations and XLA's ``op_name`` metadata carry
    ``block/<primitive>`` (nested scopes join with "/")."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    return _NamedScope(name)


class _NamedScope:
    __slots__ = ("name", "old")

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        st = trace_mod._state
        self.old = st.name_stack
        st.name_stack = f"{self.old}/{self.name}" if self.old else self.name

    def __exit__(self, *exc):
        trace_mod._state.name_stack = self.old

    def __call__(self, fun):
        """As a decorator (JAX's named_scope is a context manager, so it is one too): each
        call of `fun` runs in a fresh scope of this name."""
        import functools
        name = self.name

        @functools.wraps(fun)
        def scoped(*args, **kwargs):
            with _NamedScope(name):
                return fun(*args, **kwargs)
        return scoped


def named_call(fun, *, name=None):
    """``fun`` run inside ``named_scope(name or fun.__name__)``."""
    import functools
    if not callable(fun):
        raise TypeError(f"named_call expects a callable, got {fun!r}")
    scope = name if name is not None else getattr(fun, "__name__", "named_call")

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        with named_scope(scope):
            return fun(*args, **kwargs)
    return wrapped
