"""The thread count of the OpenBLAS libraries NumPy and SciPy loaded, set through ctypes.

Host kernels (``linalg_host.py``, ``linalg_structured.py``) run inside compiled programs while
XLA's own thread pool is live; OpenBLAS's extra threads then fight that pool for the cores, and
on a loaded machine a 512² solve went from 12 to 209 ms median (docs/performance.md, "OpenBLAS
threads in host LAPACK kernels"). ``pinned(fn)`` runs a kernel with OpenBLAS at one thread and
restores the previous counts after, so user NumPy code outside the kernels keeps its threads
(NumPy code running in another Python thread while a kernel runs gets one thread for that time:
the count is per library, not per thread). The libraries are found in ``/proc/self/maps``
(NumPy's and SciPy's wheels each bundle their own, with prefixed symbols); where none is found
(another BLAS, another OS) the helpers do nothing.
"""
from __future__ import annotations

import ctypes
import functools
import sys
import threading

# (set, get) symbol names: NumPy's 64-bit-int build, SciPy's, a plain OpenBLAS
_SYMBOLS = (("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
            ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
            ("openblas_set_num_threads", "openblas_get_num_threads"))

_libs = []     # [(set, get)] found so far
_scanned = [-1]  # len(sys.modules) at the last scan: a new import may have loaded another
_lock = threading.Lock()
_depth = [0]   # nested single_threaded() blocks (kernels run on one thread at a time)
_saved = []    # the counts to restore when the outermost block ends


def _loaded_paths():
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "openblas" in line.lower()}
    except OSError:
        return []
    return sorted(p for p in paths if p.startswith("/"))


def libraries():
    """``[(set_num_threads, get_num_threads)]`` of every OpenBLAS loaded so far (searched
    again after new imports until NumPy's and SciPy's are both found)."""
    global _libs
    if len(_libs) >= 2 or _scanned[0] == len(sys.modules):
        return _libs
    _scanned[0] = len(sys.modules)
    found = []
    for path in _loaded_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for set_name, get_name in _SYMBOLS:
            if hasattr(lib, set_name) and hasattr(lib, get_name):
                setter, getter = getattr(lib, set_name), getattr(lib, get_name)
                setter.argtypes, setter.restype = [ctypes.c_int], None
                getter.argtypes, getter.restype = [], ctypes.c_int
                found.append((setter, getter))
                break
    _libs = found
    return found


def get_num_threads():
    """The thread counts of the loaded OpenBLAS libraries."""
    return [get() for _, get in libraries()]


def set_num_threads(n):
    """Set every loaded OpenBLAS library to ``n`` threads."""
    for setter, _ in libraries():
        setter(int(n))


def pinned(fn):
    """``fn`` run under ``single_threaded()``."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        _pin()
        try:
            return fn(*args, **kwargs)
        finally:
            _unpin()
    return run


def _pin():
    with _lock:
        if _depth[0] == 0:
            libs = libraries()
            _saved[:] = [get() for _, get in libs]
            for setter, _ in libs:
                setter(1)
        _depth[0] += 1


def _unpin():
    with _lock:
        _depth[0] -= 1
        if _depth[0] == 0:
            for (setter, _), n in zip(libraries(), _saved):
                setter(n)


class _SingleThreaded:
    # a class, not a @contextmanager generator: half the cost per kernel call (3 -> 1.4 us)
    def __enter__(self):
        _pin()

    def __exit__(self, *exc):
        _unpin()


def single_threaded():
    """OpenBLAS at one thread inside the block (``with single_threaded(): ...``), the previous
    counts restored after."""
    return _SingleThreaded()
