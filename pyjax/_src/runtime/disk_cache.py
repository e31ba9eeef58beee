"""The persistent compilation cache: serialized executables on disk, shared by processes.

``Client.compile`` asks ``load(key)`` before it compiles and ``store(key, data, seconds)``
after. The key (``key_of``) hashes everything that changes the compiled program: the
StableHLO text, the CompileOptionsProto bytes (device assignment and XLA option overrides
included), the plugin file and its PJRT version, ``XLA_FLAGS`` and this file's format.

An entry is one file: a header naming the format, the payload's SHA-256 and the payload.
Writes go to a temporary file in the same directory and are renamed into place (atomic on
POSIX), so concurrent processes never see half an entry. A read whose header or checksum
is wrong (truncated, corrupted, another format) is skipped with a warning and the entry
removed: the plugin is only ever given bytes this module wrote, since deserializing garbage
could kill the process. Hits refresh the file's mtime; ``store`` evicts the least recently
used entries when the directory grows past ``max_size`` bytes.

Settings come from ``pyjax.config`` (``jax_compilation_cache_dir`` and friends; core/config.py
pushes them here with ``configure``): the runtime reads no flags itself.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
import threading
import warnings

_FORMAT = b"pyjax-executable-v1\n"
_SUFFIX = ".pjrtexe"
# Other kinds of entries, with their own suffixes and counts (``stats["<kind>_hits"]``...):
# "text", module texts found by the lowering key of a Jaxpr (dispatch/jaxpr_key.py: a warm
# process reads the text instead of lowering, then looks the executable up under
# ``key_of(text)``); "warm_up", the client's warm-up program (runtime/tiered.py).
_SUFFIXES = {"": _SUFFIX, "text": ".mlirtext", "warm_up": ".warmup"}
_TEXT_SUFFIX = _SUFFIXES["text"]


class _Settings:
    __slots__ = ("directory", "min_compile_seconds", "min_entry_bytes", "max_size")

    def __init__(self):
        self.directory = None  # None: the cache is off
        self.min_compile_seconds = 0.0
        self.min_entry_bytes = 0
        self.max_size = -1  # bytes; -1: unbounded


settings = _Settings()
stats = {"hits": 0, "misses": 0, "stores": 0, "evictions": 0, "corrupt": 0,
         **{f"{kind}_{n}": 0 for kind in ("text", "warm_up")
            for n in ("hits", "misses", "stores", "corrupt")}}
_stores_since_sweep = [0]
_SWEEP_EVERY = 16  # stores between size checks (a check lists the directory)
_lock = threading.Lock()


def configure(directory=None, *, min_compile_seconds=None, min_entry_bytes=None,
              max_size=None):
    """Sets where entries live (None turns the cache off) and the storing thresholds."""
    settings.directory = None if directory in (None, "") else os.path.expanduser(directory)
    if min_compile_seconds is not None:
        settings.min_compile_seconds = float(min_compile_seconds)
    if min_entry_bytes is not None:
        settings.min_entry_bytes = int(min_entry_bytes)
    if max_size is not None:
        settings.max_size = int(max_size)
    _stores_since_sweep[0] = _SWEEP_EVERY  # check the size at the next store


def enabled():
    return settings.directory is not None


def key_of(api, code: bytes, options: bytes, extra=b"") -> str:
    """The entry name of a program: a SHA-256 over all that decides the compiled bytes."""
    h = hashlib.sha256()
    for part in (_FORMAT, _plugin_identity(api), os.environ.get("XLA_FLAGS", "").encode(),
                 extra, code, options):
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()


def _plugin_identity(api):
    ident = getattr(api, "_disk_cache_identity", None)
    if ident is None:
        path = getattr(api, "path", "") or ""
        try:
            st = os.stat(path)
            file_id = f"{st.st_size}:{st.st_mtime_ns}"
        except OSError:
            file_id = "?"
        ident = f"{path}|{file_id}|{getattr(api, 'version', '')}|{_host_cpu()}".encode()
        try:
            api._disk_cache_identity = ident
        except AttributeError:
            pass
    return ident


def _host_cpu():
    """The CPU's model and instruction-set flags: XLA compiles for the host's CPU, so an entry
    written on another machine sharing the cache directory (with, say, AVX-512 where this one
    has none) would die of SIGILL here instead of missing."""
    import platform
    try:
        with open("/proc/cpuinfo") as f:
            info = f.read(1 << 16)
        fields = {k.strip(): v for k, v in (line.split(":", 1) for line in
                                             info.split("\n\n", 1)[0].splitlines()
                                             if ":" in line)}
        return "|".join(fields.get(k, "").strip() for k in ("model name", "flags"))
    except (OSError, ValueError):
        return f"{platform.machine()}|{platform.processor()}"


def _path(key, kind=""):
    return os.path.join(settings.directory, key[:2], key + _SUFFIXES[kind])


def load(key, kind=""):
    """The payload stored under ``key``, or None (a miss, or an entry that failed its check)."""
    if settings.directory is None:
        return None
    path = _path(key, kind)
    stat = kind and kind + "_"
    try:
        with open(path, "rb") as f:
            blob = f.read()
    except OSError:
        stats[stat + "misses"] += 1
        return None
    payload = _check(blob)
    if payload is None:
        discard(key, "its header or checksum is wrong (truncated, corrupted or written by "
                     "another format)", kind)
        return None
    try:
        os.utime(path)  # recently used: evicted last
    except OSError:
        pass
    stats[stat + "hits"] += 1
    return payload


def load_text(key):
    """The module text stored under the lowering key ``key`` (dispatch/jaxpr_key.py), or None."""
    payload = load(key, "text")
    return None if payload is None else payload.decode()


def store_text(key, text: str):
    """Stores the module text lowered from the program of lowering key ``key``."""
    return store(key, text.encode(), float("inf"), "text")


def discard(key, why, kind=""):
    """Removes the entry ``key`` that could not be used, with a warning saying why."""
    stats[(kind and kind + "_") + "corrupt"] += 1
    path = _path(key, kind)
    warnings.warn(f"pyjax: skipping the compilation cache entry {path}: {why}; it is "
                  f"recompiled and replaced", RuntimeWarning, stacklevel=3)
    _remove(path)


def _check(blob):
    head = len(_FORMAT) + 32
    if len(blob) < head or not blob.startswith(_FORMAT):
        return None
    digest, payload = blob[len(_FORMAT):head], blob[head:]
    if hashlib.sha256(payload).digest() != digest or not payload:
        return None
    return payload


def store(key, payload: bytes, compile_seconds: float, kind=""):
    """Writes an entry (atomically) when it passes the thresholds; never raises for I/O."""
    d = settings.directory
    if d is None or compile_seconds < settings.min_compile_seconds \
            or (kind != "text" and len(payload) < settings.min_entry_bytes):
        return False
    path = _path(key, kind)
    blob = _FORMAT + hashlib.sha256(payload).digest() + payload
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(blob)
            os.replace(tmp, path)
        except BaseException:
            _remove(tmp)
            raise
    except OSError as e:
        warnings.warn(f"pyjax: could not write the compilation cache entry {path}: {e}",
                      RuntimeWarning, stacklevel=3)
        return False
    stats[(kind and kind + "_") + "stores"] += 1
    if kind:  # the size bound counts executables (texts go with them in ``evict``)
        return True
    with _lock:
        _stores_since_sweep[0] += 1
        sweep = _stores_since_sweep[0] >= _SWEEP_EVERY
        if sweep:
            _stores_since_sweep[0] = 0
    if sweep and settings.max_size >= 0:
        evict(settings.max_size)
    return True


def entries(suffix=_SUFFIX):
    """[(path, size, mtime)] of every executable (``suffix=_TEXT_SUFFIX``: module text)
    entry, least recently used first."""
    out = []
    d = settings.directory
    if d is None or not os.path.isdir(d):
        return out
    for sub in os.scandir(d):
        if not sub.is_dir():
            continue
        for e in os.scandir(sub.path):
            if e.name.endswith(suffix):
                try:
                    st = e.stat()
                except OSError:
                    continue
                out.append((e.path, st.st_size, st.st_mtime_ns))
    out.sort(key=lambda t: t[2])
    return out


def evict(max_size):
    """Removes least recently used entries until the directory holds at most ``max_size``."""
    found = entries()
    total = sum(size for _, size, _ in found)
    oldest_kept, evicted = None, False
    for path, size, mtime in found:
        if total <= max_size:
            oldest_kept = mtime
            break
        if _remove(path):
            stats["evictions"] += 1
        evicted = True
        total -= size
    # Module texts (small) go with the executables: those last used before every kept
    # executable was.
    for path, _, mtime in entries(_TEXT_SUFFIX) if evicted else ():
        if oldest_kept is not None and mtime >= oldest_kept:
            break
        _remove(path)


def clear():
    """Removes every entry of the current directory (``pyjax.clear_caches`` does not)."""
    for path, _, _ in [e for suffix in _SUFFIXES.values() for e in entries(suffix)]:
        _remove(path)


def _remove(path):
    try:
        os.remove(path)
        return True
    except OSError:
        return False
