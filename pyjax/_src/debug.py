"""``jax.debug``: printing and callbacks with the runtime values of traced code."""
from __future__ import annotations

import logging
import string
import sys

from pyjax._src.callback import debug_callback

callback = debug_callback


def _format_and_print(fmt, *args, **kwargs):
    sys.stdout.write(fmt.format(*args, **kwargs) + "\n")


def _check_format(fmt, who):
    if not isinstance(fmt, str):
        raise TypeError(f"{who}: fmt must be a str, got {type(fmt).__name__}")
    try:  # a malformed format string is the caller's error, now rather than at run time
        list(string.Formatter().parse(fmt))
    except ValueError as e:
        raise ValueError(f"{who}: invalid format string {fmt!r}: {e}") from None


def debug_print(fmt: str, *args, ordered: bool = False, **kwargs) -> None:
    """Prints ``fmt.format(*args, **kwargs)`` with the runtime values, each time the code
    runs (every call of a jitted function, every loop step, every ``vmap`` element)."""
    _check_format(fmt, "jax.debug.print")
    debug_callback(lambda *a, **k: _format_and_print(fmt, *a, **k), *args, ordered=ordered,
                   _numpy=True, **kwargs)


_logger = logging.getLogger("pyjax.debug")


def debug_log(fmt: str, *args, ordered: bool = False, partitioned: bool = False,
              skip_format_check: bool = False, **kwargs) -> None:
    """``jax.debug.print`` to Python logging: ``fmt.format(*args, **kwargs)`` with the runtime
    values, logged at INFO on the ``"pyjax.debug"`` logger each time the code runs."""
    if not skip_format_check:
        _check_format(fmt, "jax.debug.log")
    debug_callback(lambda *a, **k: _logger.info(fmt.format(*a, **k)), *args, ordered=ordered,
                   partitioned=partitioned, _numpy=True, **kwargs)


# ---- breakpoint: a small debugger over the runtime values of the traced frames ---------------

def breakpoint(*, backend=None, filter_frames: bool = True, num_frames=None,  # noqa: A001
               ordered: bool = False, token=None, **kwargs):
    """Stops at run time with a debugger prompt (read from ``sys.stdin``) in which the
    local variables of the calling frames hold their runtime values, eagerly and inside
    ``jit``, loops and ``vmap`` (once per element). Commands: ``p expr``, ``pp expr``,
    ``u``/``up``, ``d``/``down``, ``l``/``list``, ``ll``, ``w``/``where``, ``c``/``continue``,
    ``q``/``quit``, ``h``/``help``; any other line is evaluated as an expression."""
    if backend is not None or token is not None or kwargs:
        raise NotImplementedError("jax.debug.breakpoint: backend=, token= and debugger "
                                  "options are not supported")
    frames = _user_frames(filter_frames, num_frames)
    # Traced locals become the callback's arguments (their runtime values); the rest, concrete
    # arrays included, stay as they are.
    leaves, slots = [], []
    for f in frames:
        for name, v in f["locals"].items():
            if _is_traced(v):
                slots.append((id(f), name))
                leaves.append(v)

    def stop(*values):
        filled = [dict(f, locals=dict(f["locals"])) for f in frames]
        by_id = {id(f): g for f, g in zip(frames, filled)}
        for (fid, name), v in zip(slots, values):
            by_id[fid]["locals"][name] = v
        _Debugger(filled).cmdloop()
    debug_callback(stop, *leaves, ordered=ordered)


def _is_traced(v):
    from pyjax._src.core.trace import Tracer
    return isinstance(v, Tracer)


def _user_frames(filter_frames, num_frames):
    from pyjax._src.dispatch.debug_values import PYJAX_DIR as pyjax_dir
    f = sys._getframe(2)
    out = []
    while f is not None and (num_frames is None or len(out) < num_frames):
        if not (filter_frames and f.f_code.co_filename.startswith(pyjax_dir)):
            out.append({"filename": f.f_code.co_filename, "lineno": f.f_lineno,
                        "function": f.f_code.co_name, "locals": dict(f.f_locals),
                        "globals": f.f_globals})
        f = f.f_back
    return out


class _Debugger:
    """The prompt: frames innermost first; commands as in pdb (a subset)."""

    def __init__(self, frames):
        self.frames, self.index = frames, 0

    def cmdloop(self):
        while True:
            sys.stdout.write("(jdb) ")
            sys.stdout.flush()
            line = sys.stdin.readline()
            if not line:  # end of input: continue, as pdb does on EOF
                return
            cmd, _, arg = line.strip().partition(" ")
            if cmd in ("c", "cont", "continue"):
                return
            if cmd in ("q", "quit", "exit"):
                raise SystemExit("jax.debug.breakpoint: quit")
            try:
                self.run(cmd, arg.strip(), line.strip())
            except Exception as e:  # a bad expression is reported, the prompt stays
                print(f"*** {type(e).__name__}: {e}")

    def run(self, cmd, arg, line):
        f = self.frames[self.index]
        if cmd in ("p", "pp"):
            value = eval(arg, dict(f["globals"]), dict(f["locals"]))
            if cmd == "pp":
                import pprint
                pprint.pprint(value)
            else:
                print(repr(value))
        elif cmd in ("u", "up", "d", "down"):
            step = 1 if cmd in ("u", "up") else -1
            if not 0 <= self.index + step < len(self.frames):
                print("*** Oldest frame" if step > 0 else "*** Newest frame")
                return
            self.index += step
            self.where_line()
        elif cmd in ("w", "where", "bt"):
            for i, fr in reversed(list(enumerate(self.frames))):
                mark = "> " if i == self.index else "  "
                print(f"{mark}{fr['filename']}({fr['lineno']}){fr['function']}()")
        elif cmd in ("l", "list", "ll"):
            import linecache
            lo = max(1, f["lineno"] - 5)
            for n in range(lo, f["lineno"] + 6):
                text = linecache.getline(f["filename"], n)
                if text:
                    print(f"{n:4d}{' ->' if n == f['lineno'] else '   '} {text.rstrip()}")
        elif cmd in ("h", "help"):
            print("Commands: p expr, pp expr, u(p), d(own), l(ist), w(here), c(ontinue), "
                  "q(uit); other lines are evaluated as expressions")
        elif line:
            print(repr(eval(line, dict(f["globals"]), dict(f["locals"]))))

    def where_line(self):
        f = self.frames[self.index]
        print(f"> {f['filename']}({f['lineno']}){f['function']}()")
