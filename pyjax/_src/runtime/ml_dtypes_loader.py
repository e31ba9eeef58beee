"""ml_dtypes (bfloat16, float8_*, float4/6, int1/2/4, uint1/2/4), imported on first use.

Why: importing ml_dtypes 0.7.0 costs 0.7-0.8 s of CPU (0.6.0: about 0.01 s), about two thirds
of ``import pyjax`` before this module existed. 0.7.0's extension registers about 38,000
ufunc promoters at import, and NumPy's ``PyUFunc_AddPromoter`` checks each new one against
every loop and promoter the ufunc already has (a linear scan of tuple comparisons), so the
import is quadratic in the promoters per ufunc (measured: docs/performance_import.md).
Programs that never touch an extended type should not pay for it.

How: pyjax's tables of dtypes (``core/dtypes.py``, the PJRT type map of ``buffer.py``) start
with NumPy's types only. When ml_dtypes is imported, by pyjax (first ``jnp.bfloat16``, a
``'bfloat16'`` string, ...) or by anyone else (the user, another library), the callbacks
registered with :func:`on_load` extend those tables. A finder on ``sys.meta_path`` notices
an import by anyone else, so a bfloat16 array can never reach pyjax before its tables know
bfloat16.
"""
from __future__ import annotations

import importlib.abc
import sys
import threading
from types import ModuleType
from typing import Callable

_lock = threading.RLock()
_module: ModuleType | None = None     # ml_dtypes, once every callback has run for it
_callbacks: list[Callable[[ModuleType], None]] = []


def loaded() -> ModuleType | None:
    """ml_dtypes if it has been imported (and pyjax's tables extended), else None."""
    return _module


def load() -> ModuleType:
    """Imports ml_dtypes (once) and returns it, pyjax's tables extended."""
    if _module is not None:
        return _module
    with _lock:
        try:
            import ml_dtypes  # noqa: F401  (the finder below runs the callbacks)
        except ImportError as e:
            raise ImportError(
                "pyjax needs the ml_dtypes package (>=0.6.0) for bfloat16, float8, float4 "
                "and the 1/2/4-bit integer types: pip install 'ml_dtypes>=0.6.0'") from e
        if _module is None:  # imported before the finder was installed (or it was bypassed)
            _registered(sys.modules["ml_dtypes"])
        return _module


def on_load(callback: Callable[[ModuleType], None]) -> None:
    """Calls ``callback(ml_dtypes)`` once ml_dtypes is imported (now, if it already is)."""
    with _lock:
        _callbacks.append(callback)
        if _module is not None:
            callback(_module)
            return
        module = sys.modules.get("ml_dtypes")
        if module is not None and hasattr(module, "bfloat16"):  # imported before pyjax
            _registered(module)


def _registered(module: ModuleType) -> None:
    global _module
    with _lock:
        if _module is not None:
            return
        for cb in _callbacks:
            cb(module)
        _module = module


class _ImportWatcher(importlib.abc.MetaPathFinder):
    """Finds ml_dtypes with the other finders and runs the callbacks right after its module
    has executed, whoever imports it."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "ml_dtypes":
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        exec_module = loader.exec_module

        def exec_then_register(module):
            exec_module(module)
            _uninstall()
            _registered(module)

        # An attribute of this one loader object (a fresh one per spec): nothing else changes.
        loader.exec_module = exec_then_register
        return spec


_watcher = _ImportWatcher()


def _uninstall() -> None:
    try:
        sys.meta_path.remove(_watcher)
    except ValueError:
        pass


def _install() -> None:
    if "ml_dtypes" in sys.modules:
        return  # already imported: on_load registers it
    sys.meta_path.insert(0, _watcher)


_install()

