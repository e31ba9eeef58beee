"""The array API standard (2024.12) as JAX implements it: the namespace's version and
inspection object, ``x.__array_namespace__()``, ``x.to_device``, and DLPack.

DLPack on CPU goes through a host copy: ``x.__dlpack__()`` exports a NumPy copy of the array's
data and ``from_dlpack`` copies the producer's data into a new device buffer (so
``copy=False`` cannot be honoured and raises)."""
from __future__ import annotations

import importlib

import numpy as np

from pyjax._src.core import dtypes as _dt

__all__ = ["__array_api_version__", "__array_namespace_info__", "from_dlpack"]

__array_api_version__ = "2024.12"
SUPPORTED_API_VERSIONS = ("2023.12", "2024.12")

_KINDS = ("bool", "signed integer", "unsigned integer", "integral", "real floating",
          "complex floating", "numeric")


class ArrayNamespaceInfo:
    """What ``pyjax.numpy.__array_namespace_info__()`` returns (the standard's inspection
    API): capabilities, devices and dtypes, the same on every device."""

    def capabilities(self):
        # boolean-mask indexing and data-dependent shapes need concrete values, as in JAX
        return {"boolean indexing": False, "data-dependent shapes": False,
                "max dimensions": 64}

    def default_device(self):
        # arrays are uncommitted by default: the device is chosen per computation, as in JAX
        return None

    def devices(self):
        from pyjax._src import api
        return list(api.devices())

    def _check_device(self, device):
        if device is not None and device not in self.devices():
            raise ValueError(f"Device {device!r} is not one of this namespace's devices "
                             f"{self.devices()}")

    def default_dtypes(self, *, device=None):
        self._check_device(device)
        return {"real floating": _dt.default_float_dtype(),
                "complex floating": _dt.default_complex_dtype(),
                "integral": _dt.default_int_dtype(),
                "indexing": _dt.default_int_dtype()}

    def dtypes(self, *, device=None, kind=None):
        """The standard's dtypes available now (64-bit ones only with ``jax_enable_x64``),
        filtered by ``kind`` (a kind name, a dtype, or a tuple of them)."""
        self._check_device(device)
        names = ["bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float32",
                 "complex64"]
        if _dt.x64_enabled():
            names += ["int64", "uint64", "float64", "complex128"]
        out = {n: np.dtype(n) for n in names}
        if kind is None:
            return out
        kinds = kind if isinstance(kind, tuple) else (kind,)
        for k in kinds:
            if isinstance(k, str) and k not in _KINDS:
                raise ValueError(f"Unrecognized kind {k!r}; expected one of {_KINDS}")
        return {n: d for n, d in out.items() if _dt.isdtype(d, kinds)}


def __array_namespace_info__():  # noqa: N807 - the standard's name
    return ArrayNamespaceInfo()


def array_namespace(x, *, api_version=None):
    """``x.__array_namespace__()``: ``pyjax.numpy``, for the standard's versions 2023.12 and
    2024.12."""
    if api_version is not None and api_version not in SUPPORTED_API_VERSIONS:
        raise ValueError(f"Unsupported array API version {api_version!r}; pyjax.numpy "
                         f"implements {SUPPORTED_API_VERSIONS}")
    return importlib.import_module("pyjax.numpy")


def to_device(x, device, *, stream=None):
    """``x`` on ``device`` (``device_put``)."""
    if stream is not None:
        raise NotImplementedError("stream argument of array.to_device() is not supported")
    from pyjax._src import api
    return api.device_put(x, device)


def dlpack(x, *, stream=None, max_version=None, dl_device=None, copy=None):
    """``x.__dlpack__()``: a DLPack capsule of a host copy of ``x``."""
    if copy is False:
        raise BufferError("pyjax exports DLPack from a host copy; copy=False cannot be honoured")
    if dl_device is not None and tuple(dl_device) != (1, 0):
        raise BufferError(f"pyjax exports DLPack on the CPU, (1, 0); got dl_device={dl_device}")
    host = np.array(x)  # a private copy the capsule owns
    kw = {} if max_version is None else {"max_version": max_version}
    return host.__dlpack__(stream=stream, **kw)


def dlpack_device(x):
    """``(kDLCPU, 0)``: the data are exported from the host."""
    return (1, 0)


def from_dlpack(x, /, *, device=None, copy=None):
    """A pyjax array with the data of ``x`` (any object with ``__dlpack__``), copied into a
    device buffer (on ``device`` if given)."""
    if copy is False:
        raise ValueError("from_dlpack: pyjax copies the producer's data into a device buffer; "
                         "copy=False cannot be honoured")
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: expected an object with __dlpack__, got "
                        f"{type(x).__name__}")
    host = np.from_dlpack(x)
    from pyjax._src import api
    from pyjax._src.numpy import creation
    out = creation.asarray(np.array(host))  # canonicalized for the x64 setting, as asarray
    return out if device is None else api.device_put(out, device)
