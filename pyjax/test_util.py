"""Testing helpers for pyjax programs (as ``jax.test_util``): gradient checks against finite
differences, and public views of pyjax's caches for tests: how many values each holds and how
many programs were compiled."""
import contextlib

from pyjax._src.dispatch import cache as _cache
from pyjax._src.dispatch import compiler as _compiler
from pyjax._src.test_util import (  # noqa: F401
    check_grads as check_grads, check_jvp as check_jvp, check_vjp as check_vjp)


def cache_sizes() -> dict:
    """``{cache name: number of values}`` for every cache of compiled programs, traces and
    eager records (names: "eager primitives", "jit", "jit traces", "eager jnp", "eager jnp
    keywords", "eager grad", "eager backward", "host scalars")."""
    return _cache.sizes()


@contextlib.contextmanager
def count_compiles():
    """``with count_compiles() as n: ...``; ``n()`` is the number of programs pyjax made so far
    inside the block (compiled by XLA, or loaded from the persistent compilation cache)."""
    start = _compiler.compile_count[0]
    yield lambda: _compiler.compile_count[0] - start


@contextlib.contextmanager
def count_xla_compiles():
    """``with count_xla_compiles() as n: ...``; ``n()`` is the number of programs XLA compiled
    inside the block (programs found in the persistent compilation cache are not)."""
    from pyjax._src.runtime import client
    start = client.xla_compile_count[0]
    yield lambda: client.xla_compile_count[0] - start


def persistent_cache_stats() -> dict:
    """Counts of the persistent compilation cache in this process: ``hits``, ``misses``,
    ``stores``, ``evictions`` and ``corrupt`` (entries skipped and replaced)."""
    from pyjax._src.runtime import disk_cache
    return dict(disk_cache.stats)
