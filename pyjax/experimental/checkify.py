"""Runtime checks returned as values, as ``jax.experimental.checkify``: ``checkify`` (works
under ``jit``, ``vmap``, ``grad`` and control flow), ``check``, ``check_error``, the error sets
and ``Error`` (docs/debugging.md)."""
from pyjax._src.checkify import (  # noqa: F401
    BatchedError, DivisionByZeroError, Error, ErrorCategory, FailedCheckError, JaxException,
    JaxRuntimeError, NaNError, OOBError, all_checks, automatic_checks, check, check_error,
    checkify, debug_check, div_checks, float_checks, index_checks, init_error, nan_checks,
    user_checks)
