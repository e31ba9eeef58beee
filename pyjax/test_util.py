"""Gradient checks against finite differences, as ``jax.test_util``."""
from pyjax._src.test_util import (  # noqa: F401
    check_grads as check_grads, check_jvp as check_jvp, check_vjp as check_vjp)
