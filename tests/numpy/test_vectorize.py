"""vectorize, apply_along_axis, apply_over_axes, ufunc and frompyfunc against NumPy and
Python loops."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp

X = np.arange(1, 7).reshape(2, 3)
NP_U = np.frompyfunc(lambda x, y: x * y + 1, 2, 1)
U = jnp.frompyfunc(lambda x, y: x * y + 1, 2, 1)


def _eq(got, want):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want, dtype=np.asarray(got).dtype))


def test_vectorize_broadcasts_and_excludes():
    calls = []

    def f(x, y):
        calls.append(1)
        return x * 2 + y
    v = jnp.vectorize(f)
    _eq(v(np.arange(3), np.ones((2, 1))), np.vectorize(f)(np.arange(3), np.ones((2, 1))))
    calls.clear()
    v(np.arange(3), np.ones((2, 1)))
    assert len(calls) == 1  # traced once under vmap, not called per element
    p = jnp.vectorize(lambda a, p: a ** p, excluded={1})
    _eq(p(np.arange(4.0), 2), np.arange(4.0) ** 2)
    kw = jnp.vectorize(lambda a, *, scale: a * scale, excluded={"scale"})
    _eq(kw(np.arange(3.0), scale=3.0), np.arange(3.0) * 3)
    _eq(jnp.vectorize(lambda x: x + 1)(5), 6)


def test_vectorize_signature():
    g = jnp.vectorize(jnp.dot, signature="(n),(n)->()")
    a, b = np.random.default_rng(0).random((4, 3)), np.arange(3.0)
    _eq(g(a, b), a @ b)
    two = jnp.vectorize(lambda x: (x.sum(), x * 2), signature="(n)->(),(n)")
    s, d = two(a)
    _eq(s, a.sum(1))
    _eq(d, a * 2)
    with pytest.raises(ValueError, match="inconsistent size"):
        g(a, np.arange(4.0))
    with pytest.raises(ValueError, match="not a valid gufunc signature"):
        jnp.vectorize(jnp.dot, signature="(n)(n)->()")
    with pytest.raises(ValueError, match="core dimensions"):
        jnp.vectorize(lambda x: x, signature="(n)->()")(a)
    _eq(pyjax.jit(g)(a, b), a @ b)


def test_apply_along_and_over_axes():
    x = np.arange(24).reshape(2, 3, 4)
    for axis in (0, 1, -1):
        _eq(jnp.apply_along_axis(lambda v: v[::-1] * 2, axis, x),
            np.apply_along_axis(lambda v: v[::-1] * 2, axis, x))
        _eq(jnp.apply_along_axis(jnp.sum, axis, x), np.apply_along_axis(np.sum, axis, x))
    got = jnp.apply_along_axis(lambda v: jnp.outer(v, v), 1, x)
    assert got.shape == np.apply_along_axis(lambda v: np.outer(v, v), 1, x).shape
    _eq(got, np.apply_along_axis(lambda v: np.outer(v, v), 1, x))
    _eq(jnp.apply_along_axis(lambda v, k: v * k, 0, x, 3), x * 3)
    _eq(jnp.apply_over_axes(jnp.sum, x, [0, 2]), np.apply_over_axes(np.sum, x, [0, 2]))
    _eq(jnp.apply_over_axes(jnp.sum, x, 1), np.apply_over_axes(np.sum, x, 1))


def test_frompyfunc_methods():
    _eq(U(X, 2), NP_U(X, 2).astype(int))
    for axis in (0, 1):
        _eq(U.reduce(X, axis=axis), NP_U.reduce(X, axis=axis).astype(int))
        _eq(U.accumulate(X, axis=axis), NP_U.accumulate(X, axis=axis).astype(int))
    _eq(U.reduce(X, axis=None), NP_U.reduce(X.ravel()))
    w = np.array([True, False, True])
    _eq(U.reduce(X, axis=1, where=w, initial=5),
        NP_U.reduce(X, axis=1, where=w, initial=5).astype(int))
    _eq(U.outer(np.arange(3), np.arange(2)), NP_U.outer(np.arange(3), np.arange(2)).astype(int))
    _eq(U.reduceat(np.arange(8), [0, 4, 1, 5]), NP_U.reduceat(np.arange(8), [0, 4, 1, 5]).astype(int))
    got = U.at(np.arange(5), np.array([0, 0, 3]), 2, inplace=False)
    want = np.arange(5).astype(object)
    NP_U.at(want, [0, 0, 3], 2)
    _eq(got, want.astype(int))
    _eq(pyjax.jit(lambda x: U.reduce(x, axis=1))(X), NP_U.reduce(X, axis=1).astype(int))
    with pytest.raises(NotImplementedError, match="inplace=False"):
        U.at(np.arange(5), 0, 1)
    with pytest.raises(ValueError, match="identity"):
        U.reduce(np.zeros((0,), int))
    assert jnp.frompyfunc(abs, 1, 1, identity=0).identity == 0
    assert isinstance(U, jnp.ufunc) and U.nin == 2 and U.nout == 1


def test_builtin_binary_ufuncs_are_ufunc_objects():
    x = np.arange(1, 7).reshape(2, 3)
    for name in ["add", "multiply", "maximum", "minimum", "subtract", "bitwise_xor",
                 "logical_or"]:
        u, nu = getattr(jnp, name), getattr(np, name)
        assert isinstance(u, jnp.ufunc) and u.__name__ == name and (u.nin, u.nout) == (2, 1)
        _eq(u(x, 2), nu(x, 2))
        _eq(u.reduce(x, axis=1), nu.reduce(x, axis=1))
        _eq(u.accumulate(x, axis=1), nu.accumulate(x, axis=1))
        _eq(u.outer(np.arange(3), np.arange(2)), nu.outer(np.arange(3), np.arange(2)))
        _eq(u.reduceat(np.arange(8), [0, 4, 1, 5]), nu.reduceat(np.arange(8), [0, 4, 1, 5]))
    for name in ["add", "multiply", "maximum", "minimum", "subtract"]:
        want = np.arange(5.0)
        getattr(np, name).at(want, [0, 0, 3], 2.0)
        _eq(getattr(jnp, name).at(np.arange(5.0), np.array([0, 0, 3]), 2.0, inplace=False),
            want)
    _eq(pyjax.jit(lambda a: jnp.add.reduce(a, axis=None))(x), x.sum())
    assert jnp.add.identity == 0 and jnp.multiply.identity == 1
    with pytest.raises(NotImplementedError, match="out argument"):
        jnp.add(x, 1, out=np.zeros(3))
