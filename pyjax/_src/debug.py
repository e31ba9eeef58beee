"""``jax.debug``: printing and callbacks with the runtime values of traced code."""
from __future__ import annotations

import string
import sys

from pyjax._src.callback import debug_callback

callback = debug_callback


def _format_and_print(fmt, *args, **kwargs):
    sys.stdout.write(fmt.format(*args, **kwargs) + "\n")


def debug_print(fmt: str, *args, ordered: bool = False, **kwargs) -> None:
    """Prints ``fmt.format(*args, **kwargs)`` with the runtime values, each time the code
    runs (every call of a jitted function, every loop step, every ``vmap`` element)."""
    if not isinstance(fmt, str):
        raise TypeError(f"jax.debug.print: fmt must be a str, got {type(fmt).__name__}")
    try:  # a malformed format string is the caller's error, now rather than at run time
        list(string.Formatter().parse(fmt))
    except ValueError as e:
        raise ValueError(f"jax.debug.print: invalid format string {fmt!r}: {e}") from None
    debug_callback(lambda *a, **k: _format_and_print(fmt, *a, **k), *args, ordered=ordered,
                   _numpy=True, **kwargs)
