"""Which device a call runs on: ``call_device`` is the one rule (eager primitives, jitted
calls, compiled backward passes and eager grad all use it; a hot path with one operand, or
operands on one device, takes that device, which is what the rule gives)."""
from __future__ import annotations

from pyjax._src.core import transfer_guard
from pyjax._src.core.array import default_device

_DEFAULT_DEVICE = []


def default():
    """The default device (the first of the default backend), looked up once."""
    if not _DEFAULT_DEVICE:
        _DEFAULT_DEVICE.append(default_device())
    return _DEFAULT_DEVICE[0]


def call_device(arrays, requested=None):
    """``(device, committed)`` for a call on ``arrays``: the device of the committed arrays
    (they must agree), else ``requested`` (``jit(device=...)``), else the first array's
    device, else the default device. The result is committed when any input is."""
    device = None
    for a in arrays:
        if a._committed:
            d = a._buf.device
            if device is None:
                device = d
            elif d is not device and d != device:
                raise ValueError(
                    "Received incompatible devices for computation: got argument on "
                    f"{device} and argument on {d}. Move them to one device with "
                    "`pyjax.device_put` first.")
    if device is not None:
        return device, True
    if requested is not None:
        return requested, False
    if arrays:
        return arrays[0]._buf.device, False
    return default(), False


def on_device(bufs, device):
    """``bufs`` with those elsewhere copied to ``device``: uncommitted values (Python scalars,
    constants, arrays made without a device) follow the committed ones."""
    for b in bufs:
        if b.device is not device:
            if transfer_guard.active[0]:
                _guard_d2d(bufs, device)
            return [b if b.device is device else b.copy_to_device(device) for b in bufs]
    return bufs


def _guard_d2d(bufs, device):
    from pyjax._src.core.sharding import SingleDeviceSharding
    for b in bufs:
        if b.device is not device:
            transfer_guard.check("device_to_device", lambda: (
                f"src_sharding={SingleDeviceSharding(b.device)!r}, "
                f"dst_sharding={SingleDeviceSharding(device)!r}"))
