"""Reductions over the float8, float16 and bfloat16 types, against NumPy in float32.

float8_e4m3fn and the ``fnuz`` float8 types have no infinities (their -inf is NaN), so the
max/min identities must be the lowest/highest finite values, as in JAX; a -inf start value
turns ``max``/``min``/``nanmax``/``cummax`` into NaN and ``argmax``/``argmin`` into 0.
The data are chosen so that every partial sum and product is exact in every type: the results
do not depend on the accumulation order or on an upcast.
"""
import ml_dtypes
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax

FLOAT8 = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
          "float8_e4m3b11fnuz", "float8_e4m3", "float8_e3m4"]
DTYPES = [np.dtype(getattr(ml_dtypes, n)) for n in FLOAT8] + [np.dtype(np.float16),
                                                               np.dtype(ml_dtypes.bfloat16)]
NO_INF = {"float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3b11fnuz"}

# the first row is all negative (its max is below 0, where a 0 or NaN start value shows)
X = np.array([[-1.5, -0.5, -1.0, -0.5],
              [0.5, -1.0, 1.5, -0.5],
              [-1.0, 1.0, -0.5, 0.5]], np.float32)

ids = [d.name for d in DTYPES]


def _check(got, want, dt):
    got = np.asarray(got)
    assert got.dtype == dt, (got.dtype, dt)
    np.testing.assert_array_equal(got.astype(np.float32), want.astype(dt).astype(np.float32))


def test_the_no_inf_types_are_the_ones_without_infinities():
    for dt in DTYPES:
        assert (dt.name in NO_INF) == np.isnan(np.float32(np.array(-np.inf, dt)))


@pytest.mark.parametrize("dt", DTYPES, ids=ids)
@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "nanmax", "nanmin"])
def test_reductions(dt, axis, name):
    x32 = X[0] if axis is None and name in ("sum", "prod") else X  # keep sums exact
    got = getattr(jnp, name)(jnp.asarray(x32.astype(dt)), axis=axis)
    _check(got, np.asarray(getattr(np, name)(x32, axis=axis)), dt)


@pytest.mark.parametrize("dt", DTYPES, ids=ids)
@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_argmin(dt, axis, name):
    got = np.asarray(getattr(jnp, name)(jnp.asarray(X.astype(dt)), axis=axis))
    np.testing.assert_array_equal(got, getattr(np, name)(X, axis=axis))
    if name == "argmax" and axis == 1:
        assert got[0] == 1  # the first of the tied maxima -0.5, not 0


@pytest.mark.parametrize("dt", DTYPES, ids=ids)
@pytest.mark.parametrize("axis", [0, 1])
def test_cumulative(dt, axis):
    x = jnp.asarray(X.astype(dt))
    _check(jnp.cumsum(x, axis=axis), np.cumsum(X, axis=axis), dt)
    _check(jnp.cumprod(x, axis=axis), np.cumprod(X, axis=axis), dt)
    _check(lax.cummax(x, axis), np.maximum.accumulate(X, axis=axis), dt)
    _check(lax.cummin(x, axis), np.minimum.accumulate(X, axis=axis), dt)
    _check(lax.cummax(x, axis, reverse=True),
           np.flip(np.maximum.accumulate(np.flip(X, axis), axis=axis), axis), dt)


@pytest.mark.parametrize("dt", DTYPES, ids=ids)
def test_extreme_finite_values(dt):
    """Arrays made only of the lowest (or highest) finite value: the identity must not win."""
    lo, hi = ml_dtypes.finfo(dt).min, ml_dtypes.finfo(dt).max
    for v, fns in ((lo, ("max", "nanmax", "argmax")), (hi, ("min", "nanmin", "argmin"))):
        x = jnp.asarray(np.full((2, 3), v, dt))
        for name in fns:
            got = np.asarray(getattr(jnp, name)(x, axis=1))
            if name.startswith("arg"):
                np.testing.assert_array_equal(got, [0, 0])
            else:
                _check(got, np.full(2, v, np.float32), dt)
        cum = lax.cummax(x, 1) if v == lo else lax.cummin(x, 1)
        _check(cum, np.full((2, 3), v, np.float32), dt)


@pytest.mark.parametrize("dt", DTYPES, ids=ids)
def test_nan_handling(dt):
    x32 = X.copy()
    x32[1, 2] = np.nan
    x32[2, :] = np.nan
    x = jnp.asarray(x32.astype(dt))
    with np.errstate(invalid="ignore"), pytest.warns(RuntimeWarning):
        want_max, want_min = np.nanmax(x32, axis=1), np.nanmin(x32, axis=1)
    _check(jnp.nanmax(x, axis=1), want_max, dt)
    _check(jnp.nanmin(x, axis=1), want_min, dt)
    _check(jnp.max(x, axis=1), np.max(x32, axis=1), dt)
    np.testing.assert_array_equal(np.asarray(jnp.argmax(x, axis=1)), np.argmax(x32, axis=1))
    np.testing.assert_array_equal(np.asarray(jnp.nanargmin(x[:2], axis=1)),
                                  np.nanargmin(x32[:2], axis=1))


@pytest.mark.parametrize("dt", DTYPES, ids=ids)
def test_masked_and_jitted(dt):
    x = jnp.asarray(X.astype(dt))
    where = X < 0
    _check(jnp.max(x, axis=1, where=where, initial=float(ml_dtypes.finfo(dt).min)),
           np.max(X, axis=1, where=where, initial=float(ml_dtypes.finfo(dt).min)), dt)
    f = pyjax.jit(lambda a: (lax.reduce_max(a, (1,)), lax.argmin(a, 1, np.int32)))
    m, i = f(x)
    _check(m, X.max(axis=1), dt)
    np.testing.assert_array_equal(np.asarray(i), X.argmin(axis=1))


@pytest.mark.parametrize("name", ["float8_e8m0fnu", "float4_e2m1fn"])
def test_types_the_runtime_lacks_raise_a_clear_error(name):
    with pytest.raises(TypeError, match=name):
        jnp.max(jnp.asarray(np.ones(3, getattr(ml_dtypes, name))))
