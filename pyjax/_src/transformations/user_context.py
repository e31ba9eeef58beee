"""``jax.make_user_context``: a user value that jitted functions depend on, so a change of it
makes them trace, lower and compile again. pyjax empties its caches when a context's value
changes (a new value always retraces; going back to an earlier value retraces too, where JAX
may find the earlier trace)."""
from __future__ import annotations

import contextlib
import threading

from pyjax._src.dispatch import cache as cache_mod

_lock = threading.Lock()


class UserContext:
    """A context made by ``make_user_context``: ``with ctx(value): ...`` sets ``ctx.value`` in
    the block (process-wide in pyjax) and restores it after."""

    def __init__(self, default_value=None):
        self._value = default_value

    @property
    def value(self):
        return self._value

    def _set(self, new):
        with _lock:
            old, self._value = self._value, new
        try:
            changed = not (old is new or old == new)
        except Exception:  # values without a usable ==
            changed = True
        if changed:
            cache_mod.clear_all()  # what was traced under the old value no longer holds

    @contextlib.contextmanager
    def __call__(self, new_value):
        old = self._value
        self._set(new_value)
        try:
            yield
        finally:
            self._set(old)

    def __repr__(self):
        return f"UserContext(value={self._value!r})"


def make_user_context(default_value=None):
    """A ``jax.jit``-cache-sensitive context whose value starts as ``default_value``."""
    return UserContext(default_value)
