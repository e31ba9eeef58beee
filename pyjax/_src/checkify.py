"""`jax.experimental.checkify`, the part that does not need functionalization: the error
categories and their sets, and `check` on concrete values (it raises at once, as JAX's does
outside `checkify`). `checkify` itself, which turns checks under `jit`/`grad`/`vmap` into a
returned `Error` value, is not implemented: it and `check` on traced values raise
NotImplementedError naming themselves."""
from pyjax._src.core.trace import Tracer
from pyjax._src.runtime import XlaRuntimeError as JaxRuntimeError


class JaxException(Exception):
    """Base of checkify's error categories."""


class FailedCheckError(JaxException):
    """A user `check` failed."""


class NaNError(JaxException):
    pass


class OOBError(JaxException):
    pass


class DivisionByZeroError(JaxException):
    pass


ErrorCategory = type[JaxException]
user_checks = frozenset({FailedCheckError})
nan_checks = frozenset({NaNError})
index_checks = frozenset({OOBError})
div_checks = frozenset({DivisionByZeroError})
float_checks = nan_checks | div_checks
automatic_checks = float_checks | index_checks
all_checks = automatic_checks | user_checks


def _is_traced(tree):
    from pyjax._src.core.pytree import tree_leaves
    return any(isinstance(x, Tracer) for x in tree_leaves(tree))


def check(pred, msg, *fmt_args, **fmt_kwargs):
    """Raise JaxRuntimeError(msg formatted with the arguments) if the concrete `pred` is false."""
    if not isinstance(msg, str):
        raise TypeError(f"checkify.check: msg must be a string, got {type(msg).__name__}")
    if _is_traced((pred, fmt_args, fmt_kwargs)):
        raise NotImplementedError(
            "checkify.check on traced values (inside jit, grad or vmap) needs "
            "checkify.checkify, which pyjax does not implement yet")
    import numpy as np
    if not np.all(np.asarray(pred)):
        fmt_args = [np.asarray(a) for a in fmt_args]
        fmt_kwargs = {k: np.asarray(v) for k, v in fmt_kwargs.items()}
        raise JaxRuntimeError(msg.format(*fmt_args, **fmt_kwargs))


def checkify(f, errors=user_checks):
    raise NotImplementedError("checkify.checkify is not implemented in pyjax yet")


def check_error(error):
    raise NotImplementedError("checkify.check_error is not implemented in pyjax yet "
                              "(it consumes the Error that checkify.checkify returns)")


class Error:
    """The error value `checkify.checkify` returns (not implemented in pyjax yet)."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("checkify.Error is not implemented in pyjax yet")
