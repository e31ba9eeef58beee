"""jax_debug_nans / jax_debug_infs: the operation that makes a NaN (inf) raises
FloatingPointError naming the primitive and the user's line, eagerly and inside jit."""
import inspect

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp


@pytest.fixture
def flag():
    def set_(name, value=True):
        jax.config.update(name, value)
    yield set_
    jax.config.update("jax_debug_nans", False)
    jax.config.update("jax_debug_infs", False)


def _line_of(fn, text):
    src, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(src) if text in line)


def test_jit_nan_names_log_and_this_line(flag):
    flag("jax_debug_nans")

    def f(x):
        return jnp.log(x) * 2
    line = _line_of(f, "jnp.log")
    with pytest.raises(FloatingPointError,
                       match=rf"invalid value \(nan\) encountered in log, at .*"
                             rf"test_debug_nans.py:{line} \(f\)"):
        jax.jit(f)(-1.0)
    assert float(jax.jit(f)(np.e)) == pytest.approx(2.0)  # clean values pass


def test_eager_operations_are_checked(flag):
    flag("jax_debug_nans")
    x = jnp.zeros(3)
    with pytest.raises(FloatingPointError, match=r"\(nan\) encountered in div"):
        x / x
    with pytest.raises(FloatingPointError, match=r"\(nan\) encountered in sqrt"):
        jnp.sqrt(x - 1.0)
    np.testing.assert_array_equal(np.asarray(jnp.ones(2) / 0.0), [np.inf, np.inf])  # infs ok


def test_infs_flag_and_off_again(flag):
    flag("jax_debug_infs")
    with pytest.raises(FloatingPointError, match=r"\(inf\) encountered in div"):
        jnp.ones(2) / 0.0
    with pytest.raises(FloatingPointError, match=r"\(inf\) encountered in exp"):
        jax.jit(lambda v: jnp.exp(v) + 1)(1000.0)
    flag("jax_debug_infs", False)
    assert np.isinf(float(jax.jit(lambda v: jnp.exp(v) + 1)(1000.0)))
    assert np.isnan(float(jax.jit(lambda v: jnp.log(v))(-1.0)))


def test_integer_results_and_traced_code_are_not_checked(flag):
    flag("jax_debug_nans")
    assert int(jnp.int32(7) // 2) == 3
    jaxpr = jax.make_jaxpr(lambda v: jnp.log(v))(-1.0)  # tracing computes nothing
    assert "log" in str(jaxpr)
