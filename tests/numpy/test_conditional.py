"""select and piecewise against NumPy: first/last true condition wins, defaults, constants and
extra arguments, broadcasting and promotion, eager and under jit, and the error paths."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax._src.test_util import check_array

X = np.linspace(-2, 2, 9).astype(np.float32)


def _eq(got, want, dtype=None):
    check_array(got, want, dtype, rtol=1e-6)


# ---- select ----

def test_select():
    conds = [X < 0, X < 1, X > 1.5]  # overlapping: the first true one wins
    choices = [X, X * 2, X * 10]
    _eq(jnp.select(conds, choices), np.select(conds, choices), np.float32)
    _eq(jnp.select(conds, choices, default=-1), np.select(conds, choices, default=-1))
    f = pyjax.jit(lambda x: jnp.select([x < 0, x > 1], [-x, x ** 2], default=x))
    _eq(f(X), np.select([X < 0, X > 1], [-X, X ** 2], default=X))


def test_select_broadcast_and_promote():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    conds = [x % 2 == 0, np.array([True, False, False])]
    choices = [np.float32(0.5), x]
    got = jnp.select(conds, choices, default=np.int8(7))
    want = np.select(conds, [np.full((2, 3), 0.5), x], default=7)
    _eq(got, want, np.float32)
    # non-boolean conditions compare with zero (JAX)
    _eq(jnp.select([x % 3], [x], default=-1), np.where(x % 3 != 0, x, -1), np.int32)


def test_select_errors():
    with pytest.raises(ValueError, match="length"):
        jnp.select([X < 0], [X, X])
    with pytest.raises(ValueError, match="empty"):
        jnp.select([], [])
    with pytest.raises(TypeError, match="select requires ndarray"):
        jnp.select([[True, False]], [X[:2]])


# ---- piecewise ----

def test_piecewise():
    funcs = [lambda t: -t, lambda t: t * 10, 0.5]  # the last one: where nothing holds
    conds = [X < 0, X >= 1]
    _eq(jnp.piecewise(X, conds, funcs), np.piecewise(X, conds, funcs), np.float32)
    # as many functions as conditions: 0 where nothing holds; overlapping: the last wins
    conds = [X < 1, X < 0]
    funcs = [lambda t: t + 100, lambda t: t - 100]
    _eq(jnp.piecewise(X, conds, funcs), np.piecewise(X, conds, funcs))


def test_piecewise_jit_args_and_dtype():
    f = pyjax.jit(lambda x, s: jnp.piecewise(x, [x < 0, x > 1], [lambda t, s, c: t * s + c,
                                                                  3.0, -1.0], s, c=2.0))
    want = np.piecewise(X, [X < 0, X > 1], [lambda t: t * 4 + 2, 3.0, -1.0])
    _eq(f(X, np.float32(4)), want)
    # the result has x's dtype
    xi = np.arange(-3, 4, dtype=np.int32)
    got = jnp.piecewise(xi, [xi < 0], [lambda t: t / 2, lambda t: t * 1.5])
    _eq(got, np.piecewise(xi, [xi < 0], [lambda t: t / 2, lambda t: t * 1.5]), np.int32)


def test_piecewise_shapes():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    _eq(jnp.piecewise(x, [x < 5, x > 9], [0, lambda t: t * t, 1]),
        np.piecewise(x, [x < 5, x > 9], [0, lambda t: t * t, 1]))
    # a single condition as an array of x's (1-D) shape or a list of bools: NumPy's shorthand
    _eq(jnp.piecewise(X, X > 0, [lambda t: -t, 1]), np.piecewise(X, X > 0, [lambda t: -t, 1]))
    c = [True, False] * 4 + [True]
    _eq(jnp.piecewise(X, c, [lambda t: -t]), np.piecewise(X, c, [lambda t: -t]))
    # an array of conditions stacked along a leading axis
    c = np.stack([x > 8, x < 2])
    _eq(jnp.piecewise(x, c, [1, 2, 3]), np.piecewise(x, c, [1, 2, 3]))
    # scalar x: Python bool conditions select directly
    _eq(jnp.piecewise(np.float32(2), [False, True], [1, lambda t: t * 3]), 6.0)
    _eq(jnp.piecewise(np.float32(2), [False, False], [1, 2]), 0.0)
    _eq(jnp.piecewise(np.zeros((0, 2), np.float32), [np.zeros((0, 2), bool)], [1]),
        np.zeros((0, 2)))


def test_piecewise_grad():
    g = pyjax.grad(lambda x: jnp.piecewise(x, [x < 0], [lambda t: t ** 2, lambda t: 3 * t]))
    assert float(g(np.float32(-2))) == -4.0
    assert float(g(np.float32(1))) == 3.0


def test_piecewise_errors():
    with pytest.raises(ValueError, match="functions are expected"):
        jnp.piecewise(X, [X < 0], [1, 2, 3])
    with pytest.raises(TypeError, match="piecewise requires ndarray"):
        jnp.piecewise([1.0, 2.0], [True, False], [1, 2])
