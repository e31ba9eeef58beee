"""Where user code is: the innermost frame outside pyjax, recorded on every staged equation
(``Eqn.source_info``), carried into the StableHLO module as ``loc("file":line:col)`` and named
by debug_nans, checkify and filtered tracebacks.

Recording costs a short frame walk per equation: whether a code object is pyjax's own is
decided once per code object and cached, so the walk is a dict lookup per frame."""
from __future__ import annotations

import os
import sys

# the pyjax package directory (with a trailing separator): frames inside it are not the user's
PYJAX_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_PREFIX = PYJAX_DIR + os.sep

# set while a Jaxpr is evaluated (core/jaxpr.eval_jaxpr): the equations a transformation
# stages for an equation take that equation's location
override = [None]

_inside: dict = {}  # code object -> whether it is pyjax's own


_extra_prefixes: list = []  # libraries that hide their frames too (register_exclusion)


def is_internal(code) -> bool:
    inside = _inside.get(code)
    if inside is None:
        fn = code.co_filename
        inside = _inside[code] = (fn.startswith(_PREFIX) or fn == PYJAX_DIR
                                  or any(fn.startswith(p) for p in _extra_prefixes))
    return inside


def add_internal_path(path: str) -> None:
    _extra_prefixes.append(str(path))
    _inside.clear()


class SourceInfo:
    """One user frame: file, line and function name."""

    __slots__ = ("file", "line", "function")

    def __init__(self, file, line, function):
        self.file, self.line, self.function = file, line, function

    def __str__(self):
        return f"{self.file}:{self.line} ({self.function})"

    def __repr__(self):
        return f"SourceInfo({self})"

    def __eq__(self, other):
        return (type(other) is SourceInfo and self.file == other.file
                and self.line == other.line and self.function == other.function)

    def __hash__(self):
        return hash((self.file, self.line, self.function))


def current(skip: int = 1):
    """The innermost frame outside pyjax, above the caller, as a ``SourceInfo``; None when
    every frame is pyjax's (a program built by pyjax itself)."""
    if override[0] is not None:
        return override[0]
    f = sys._getframe(skip)
    while f is not None:
        code = f.f_code
        if not is_internal(code):
            return SourceInfo(code.co_filename, f.f_lineno, code.co_name)
        f = f.f_back
    return None
