"""The one cache type for compiled programs (and for what leads to them: traces, records).

A ``Cache`` has two levels:

* ``entries``: full key -> value, least recently used first, bounded by ``max_size``. This is
  where a value lives; a miss here means tracing or compiling.
* ``fast``: an index over ``entries`` for the hot paths, keyed by object identities (``id`` of
  avals, primitives, tags) that hash in C. A value stored here must keep alive every object
  whose ``id`` is in its key, so that the id cannot be reused by another object while the
  entry exists. The index is emptied whenever ``entries`` drops a value (so it never serves
  an evicted program) and when it reaches ``max_size`` entries itself.

Every cache registers itself by name: ``clear_all()`` empties them (``pyjax.clear_caches``)
and ``sizes()`` reports them (``pyjax.test_util.cache_sizes``). Sizes are set in one place,
``DEFAULT_SIZES`` (a small executable holds about 0.25 MB, measured, so 2048 of them stay
under about 0.5 GB).
"""
from __future__ import annotations

import weakref

DEFAULT_SIZES = {
    "eager primitives": 2048,   # one-op executables, by (primitive, params, avals)
    "jit": 1024,                # per jitted function: compiled signatures
    "jit traces": 1024,         # per jitted function: traced Jaxprs by signature
    "eager jnp": 128,           # per jnp function compiled when called eagerly
    "eager jnp keywords": 32,   # per jnp function: its jits with configuration keywords bound
    "eager grad": 512,          # eager grad records and their fused executables
    "eager backward": 512,      # compiled backward passes by linear-Jaxpr structure
    "host scalars": 1024,       # device arrays of Python/NumPy scalars, by value
}

_all: "weakref.WeakSet[Cache]" = weakref.WeakSet()
_clear_hooks: list = []


class Cache:
    """A bounded LRU mapping with an identity-keyed first level (see the module doc)."""

    __slots__ = ("name", "max_size", "entries", "fast", "__weakref__")

    def __init__(self, name, max_size=None):
        self.name = name
        self.max_size = DEFAULT_SIZES[name] if max_size is None else max_size
        self.entries: dict = {}
        self.fast: dict = {}
        _all.add(self)

    def __len__(self):
        return len(self.entries)

    def __contains__(self, key):
        return key in self.entries

    def __repr__(self):
        return f"Cache({self.name!r}, {len(self.entries)}/{self.max_size})"

    def get(self, key, default=None):
        """The value for ``key`` (now the most recently used), else ``default``."""
        entries = self.entries
        value = entries.pop(key, _MISSING)
        if value is _MISSING:
            return default
        entries[key] = value
        return value

    def put(self, key, value):
        """Stores ``value``, dropping the least recently used values over the bound."""
        entries = self.entries
        if key not in entries:
            dropped = False
            while entries and len(entries) >= self.max_size:
                del entries[next(iter(entries))]
                dropped = True
            if dropped:
                self.fast.clear()
        entries[key] = value
        return value

    def lookup(self, key, make):
        """The value for ``key``, made by ``make()`` and stored on a miss. An unhashable key
        makes the value without storing it."""
        try:
            value = self.get(key, _MISSING)
        except TypeError:
            return make()
        if value is _MISSING:
            value = self.put(key, make())
        return value

    def remember(self, fast_key, value):
        """Indexes ``value`` under an identity key for the hot paths (``value`` must keep the
        objects whose ids make ``fast_key`` alive)."""
        fast = self.fast
        if len(fast) >= self.max_size:
            fast.clear()
        fast[fast_key] = value
        return value

    def clear(self):
        self.entries.clear()
        self.fast.clear()


_MISSING = object()


def on_clear(hook):
    """Registers ``hook()`` to run in ``clear_all`` (caches of derived Jaxprs, which are
    weakly keyed and need no bound, are emptied this way)."""
    _clear_hooks.append(hook)
    return hook


def clear_all():
    """Empties every cache: compiled programs, traces, eager records, derived Jaxprs."""
    for cache in list(_all):
        cache.clear()
    for hook in _clear_hooks:
        hook()


def sizes() -> dict:
    """``{name: number of values}`` summed over the live caches of each name."""
    out = {name: 0 for name in DEFAULT_SIZES}
    for cache in list(_all):
        out[cache.name] = out.get(cache.name, 0) + len(cache.entries)
    return out
