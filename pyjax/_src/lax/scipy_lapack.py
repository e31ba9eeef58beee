"""SciPy's LAPACK/BLAS wrappers for the CPU host kernels, imported on first use.

SciPy is optional at run time (the test extra installs it): the kernels in ``linalg_host.py``
and ``structured_kernels.py`` call it when it imports and fall back to NumPy otherwise.
Importing it lazily keeps ``import pyjax`` light (tests/architecture/test_import_weight.py).
"""
from __future__ import annotations

_modules: list = []  # [(scipy.linalg, blas, lapack)] or [None] once tried


def scipy_linalg():
    """``(scipy.linalg, scipy.linalg.blas, scipy.linalg.lapack)``, or None without SciPy."""
    if not _modules:
        try:
            import scipy.linalg as sla
            from scipy.linalg import blas, lapack
            _modules.append((sla, blas, lapack))
        except ImportError:  # pragma: no cover - the NumPy kernels have their own tests
            _modules.append(None)
    return _modules[0]


def lapack():
    """``scipy.linalg.lapack``, or None without SciPy."""
    mods = scipy_linalg()
    return None if mods is None else mods[2]
