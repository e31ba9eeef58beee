"""``jax_transfer_guard``: log or refuse transfers between host and device, as JAX's.

Implicit transfers are the ones a program makes without asking: a NumPy array or a Python
scalar becoming a device array (passed to a jitted function or an operation, ``x + 1.0``,
``jnp.asarray(np_array)``), a device array read on the host (``print``, ``np.asarray``,
``float``, ``.item()``), an uncommitted array copied to another device to join a call.
Explicit ones are ``device_put`` and ``device_get``. Levels: ``allow``; ``log`` /
``disallow`` (implicit transfers logged / refused); ``log_explicit`` / ``disallow_explicit``
(all transfers). A refused transfer raises ``XlaRuntimeError`` ("Disallowed host-to-device
transfer: ...", JAX's words) before anything moves.

The checks are in the transfer paths only; while any guard is set the eager operators'
fast paths (whose scalar operands are cached on the device) step aside, so every transfer
is seen (dispatch/debug_values.py installs that)."""
from __future__ import annotations

import contextlib
import logging

from pyjax._src.core.config import config

DIRECTIONS = ("host_to_device", "device_to_host", "device_to_device")
_levels = dict.fromkeys(DIRECTIONS, "allow")
active = [False]  # whether any direction is guarded (read on the transfer paths)
_explicit = [0]  # > 0 inside device_put / device_get
_log = logging.getLogger("pyjax")


def _refresh(_=None):
    default = config.jax_transfer_guard or "allow"
    for d in DIRECTIONS:
        _levels[d] = getattr(config, f"jax_transfer_guard_{d}") or default
    active[0] = any(v != "allow" for v in _levels.values())


for _name in ("jax_transfer_guard",) + tuple(f"jax_transfer_guard_{d}" for d in DIRECTIONS):
    config.on_change(_name, _refresh)
_refresh()


@contextlib.contextmanager
def explicit():
    """Transfers inside are explicit (``device_put``, ``device_get``)."""
    _explicit[0] += 1
    try:
        yield
    finally:
        _explicit[0] -= 1


def check_upload(aval, device) -> None:
    """The host-to-device guard for a value of ``aval`` going to ``device`` (None: the
    default device)."""
    def describe():
        from pyjax._src.core.array import default_device
        from pyjax._src.core.sharding import SingleDeviceSharding
        return f"aval={aval!r}, dst_sharding={SingleDeviceSharding(device or default_device())!r}"
    check("host_to_device", describe)


def check(direction: str, describe) -> None:
    """Apply the guard of ``direction`` to one transfer; ``describe()`` gives its details
    ("aval=..., dst_sharding=..."), built only when logged or refused."""
    level = _levels[direction]
    if level == "allow":
        return
    if _explicit[0] and level in ("log", "disallow"):
        return
    what = direction.replace("_", "-")
    if level.startswith("log"):
        _log.warning("%s transfer: %s", what, describe())
        return
    from pyjax._src.runtime import XlaRuntimeError
    raise XlaRuntimeError(f"Disallowed {what} transfer: {describe()}", code=3)
