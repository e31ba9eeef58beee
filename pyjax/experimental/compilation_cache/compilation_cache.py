"""The persistent compilation cache (``jax.experimental.compilation_cache.compilation_cache``).

pyjax's cache is on by default in ``$XDG_CACHE_HOME/pyjax`` (or ``~/.cache/pyjax``); the
environment variable ``PYJAX_COMPILATION_CACHE=0`` or ``jax_enable_compilation_cache=False``
turns it off. ``pyjax.clear_caches()`` empties the in-memory caches only; ``clear_cache_dir()``
removes the entries on disk.
"""
from pyjax._src.core.config import config as _config
from pyjax._src.runtime import disk_cache as _disk_cache


def set_cache_dir(path) -> None:
    """Stores compiled programs in ``path`` from now on (as ``jax_compilation_cache_dir``)."""
    _config.update("jax_compilation_cache_dir", None if path is None else str(path))


def is_initialized() -> bool:
    """Whether the persistent cache is in use (a directory is set and the cache enabled)."""
    return _disk_cache.enabled()


def reset_cache() -> None:
    """Forgets this process's cache statistics; entries on disk stay (see ``clear_cache_dir``)."""
    for k in _disk_cache.stats:
        _disk_cache.stats[k] = 0


def clear_cache_dir() -> None:
    """Removes every entry from the current cache directory (pyjax only)."""
    _disk_cache.clear()
