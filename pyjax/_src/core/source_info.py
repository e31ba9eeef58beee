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
_infos: dict = {}  # (code object, line) -> SourceInfo, shared by the equations of one line


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


def _info(f):
    code = f.f_code
    key = (code, f.f_lineno)
    info = _infos.get(key)
    if info is None:
        if len(_infos) > 100_000:  # bounded: code objects of exec'd code come and go
            _infos.clear()
        info = _infos[key] = SourceInfo(code.co_filename, key[1], code.co_name)
    return info


_last_depth = [0]  # frames between the caller and the user's frame, the last time


def current(skip: int = 1):
    """The innermost frame outside pyjax, above the caller, as a ``SourceInfo``; None when
    every frame is pyjax's (a program built by pyjax itself).

    ``sys._getframe(n)`` steps over frames without making a frame object for each (walking
    ``f_back`` makes one per frame), and consecutive equations mostly come through the same
    path, so the depth found last time is tried first: two lookups instead of a walk."""
    if override[0] is not None:
        return override[0]
    getframe, inside = sys._getframe, _inside
    d = _last_depth[0]
    try:
        f = getframe(skip + d)
        if not (inside.get(f.f_code) or is_internal(f.f_code)):
            if d == 0:
                return _info(f)
            g = getframe(skip + d - 1).f_code
            if inside.get(g) or is_internal(g):
                return _info(f)
    except ValueError:  # the stack is shallower now
        pass
    f = getframe(skip)
    d = 0
    while f is not None:
        code = f.f_code
        internal = inside.get(code)
        if internal is None:
            internal = is_internal(code)
        if not internal:
            _last_depth[0] = d
            return _info(f)
        f = f.f_back
        d += 1
    return None
