"""Checks on values, as ``jax.experimental.checkify`` (``check`` on concrete values; the
``checkify`` transformation is not implemented yet and raises NotImplementedError)."""
from pyjax._src.checkify import (  # noqa: F401
    DivisionByZeroError, Error, ErrorCategory, FailedCheckError, JaxException, NaNError,
    OOBError, all_checks, automatic_checks, check, check_error, checkify, div_checks,
    float_checks, index_checks, nan_checks, user_checks)
