"""``jax_traceback_filtering``: exceptions that leave a pyjax API (``jit``, ``grad``, ``vmap``,
``make_jaxpr``, control flow, ``checkify``, ...) show the user's frames, not pyjax's.

Modes, as JAX's: ``off`` (full tracebacks); ``remove_frames`` (pyjax's frames removed, with a
note saying how to see them); ``quiet_remove_frames`` (removed, no note); ``tracebackhide``
(frames kept, marked ``__tracebackhide__`` for IPython and pytest to hide); ``auto``
(``tracebackhide`` under IPython, else ``remove_frames``).

Only exceptions that passed through user code below the boundary (raised while tracing or
running a user function) are filtered, and only by the outermost API boundary: an inner one
sees a boundary frame among its callers and lets the exception pass. Nothing is done until an exception is raised, so the
boundaries cost nothing on the hot paths (``Jitted.__call__`` catches in place, without a
wrapper)."""
from __future__ import annotations

import functools
import sys
import types

from pyjax._src.core import source_info
from pyjax._src.core.config import config

NOTE = ("--------------------\n"
        "For simplicity, JAX has removed its internal frames from the traceback of the "
        "following exception. Set JAX_TRACEBACK_FILTERING=off to include these.")

_boundary_codes: set = set()  # code objects of the boundaries' frames
_FILTERED = "_pyjax_traceback_filtered"


def _mode():
    mode = config.jax_traceback_filtering
    if mode == "auto":
        ipython = sys.modules.get("IPython")
        under_ipython = ipython is not None and getattr(ipython, "get_ipython",
                                                        lambda: None)() is not None
        return "tracebackhide" if under_ipython else "remove_frames"
    return mode


def _inside_another_boundary(frame) -> bool:
    f = frame.f_back
    while f is not None:
        if f.f_code in _boundary_codes:
            return True
        f = f.f_back
    return False


def _ran_user_code(tb) -> bool:
    """Whether the exception passed through a user frame below the boundary (it was raised
    while tracing or running a user function); errors of pyjax's own checks, or of a run,
    keep their traceback as it is."""
    while tb is not None:
        if not source_info.is_internal(tb.tb_frame.f_code):
            return True
        tb = tb.tb_next
    return False


def _user_traceback(tb):
    """``tb`` without the entries of pyjax's own frames."""
    kept = []
    while tb is not None:
        if not source_info.is_internal(tb.tb_frame.f_code):
            kept.append(tb)
        tb = tb.tb_next
    out = None
    for t in reversed(kept):
        out = types.TracebackType(out, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return out


def filter_exception(e: BaseException, frame) -> None:
    """Filter ``e``'s traceback in place when ``frame`` (a boundary's) is the outermost
    boundary; the caller then re-raises with a bare ``raise``."""
    if not isinstance(e, Exception) or getattr(e, _FILTERED, False):
        return
    mode = _mode()
    if mode == "off" or _inside_another_boundary(frame) or not _ran_user_code(e.__traceback__):
        return
    try:
        setattr(e, _FILTERED, True)
    except AttributeError:  # an exception type that takes no attributes: leave it be
        return
    if mode == "tracebackhide":
        tb = e.__traceback__
        while tb is not None:
            if source_info.is_internal(tb.tb_frame.f_code):
                tb.tb_frame.f_locals["__tracebackhide__"] = True
            tb = tb.tb_next
        return
    e.__traceback__ = _user_traceback(e.__traceback__)
    if mode == "remove_frames":
        e.add_note(NOTE)


def api_boundary(fun):
    """``fun`` as a public entry point whose exceptions show only the user's frames."""
    @functools.wraps(fun)
    def boundary(*args, **kwargs):
        try:
            return fun(*args, **kwargs)
        except Exception as e:
            filter_exception(e, sys._getframe())
            raise
    return boundary


def register_boundary(code) -> None:
    """Mark a function's frames as a boundary (for boundaries that catch in place)."""
    _boundary_codes.add(code)


register_boundary(api_boundary(lambda: None).__code__)
