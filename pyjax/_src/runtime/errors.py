"""Exceptions raised by the runtime layer."""

# absl status codes, as PJRT_Error_Code uses them.
ERROR_CODE_NAMES = {
    0: "OK",
    1: "CANCELLED",
    2: "UNKNOWN",
    3: "INVALID_ARGUMENT",
    4: "DEADLINE_EXCEEDED",
    5: "NOT_FOUND",
    6: "ALREADY_EXISTS",
    7: "PERMISSION_DENIED",
    8: "RESOURCE_EXHAUSTED",
    9: "FAILED_PRECONDITION",
    10: "ABORTED",
    11: "OUT_OF_RANGE",
    12: "UNIMPLEMENTED",
    13: "INTERNAL",
    14: "UNAVAILABLE",
    15: "DATA_LOSS",
    16: "UNAUTHENTICATED",
}


import itertools
import re
import threading

# Exceptions raised inside host callbacks (runtime/ffi.py), by token, until the error message
# that names the token reaches Python; bounded so unread ones do not pile up.
_callback_errors: dict = {}
_callback_tokens = itertools.count(1)
_callback_lock = threading.Lock()
_TOKEN = re.compile(r"\[pyjax host callback error #(\d+)\]")


def stash_callback_error(exc) -> int:
    with _callback_lock:
        token = next(_callback_tokens)
        _callback_errors[token] = exc
        while len(_callback_errors) > 64:
            del _callback_errors[next(iter(_callback_errors))]
    return token


def _callback_cause(message):
    m = _TOKEN.search(message)
    if m is None:
        return None
    with _callback_lock:
        return _callback_errors.get(int(m.group(1)))


class XlaRuntimeError(RuntimeError):
    """An error reported by the XLA plugin (a ``PJRT_Error``), or a misuse of a
    runtime object that would otherwise crash the plugin (e.g. a deleted buffer).

    Attributes
    ----------
    code : int
        The absl status code (``PJRT_Error_Code``); 2 (UNKNOWN) when not known.
    code_name : str
        The code's name, e.g. ``"INVALID_ARGUMENT"``.
    message : str
        The plugin's message, unchanged.
    """

    def __init__(self, message, code=2):
        self.code = int(code)
        self.code_name = ERROR_CODE_NAMES.get(self.code, f"CODE_{self.code}")
        self.message = message
        super().__init__(f"{self.code_name}: {message}")
        cause = _callback_cause(message) if "pyjax host callback" in message else None
        if cause is not None:  # the Python exception a host callback raised
            self.__cause__ = cause


class DeletedBufferError(XlaRuntimeError):
    """A deleted or donated buffer was used. Its message is JAX's for a deleted Array (the
    buffer is the storage of one): ``Array has been deleted with shape=float32[4].``"""

    def __init__(self, type_str):
        message = f"Array has been deleted with shape={type_str}."
        self.code = 3
        self.code_name = "INVALID_ARGUMENT"
        self.message = message
        RuntimeError.__init__(self, message)


class PluginNotFoundError(RuntimeError):
    """No usable PJRT plugin could be found or loaded."""
