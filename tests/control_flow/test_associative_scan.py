"""lax.associative_scan against NumPy accumulations and Python loops: axes, reverse, odd and
even lengths, pytrees, non-commutative fns, jit, grad, vmap and the error cases."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax.test_util import check_grads

RNG = np.random.default_rng(0)
F32 = np.float32


def rand(*shape):
    return RNG.normal(size=shape).astype(F32)


def np_scan(ufunc, x, axis, reverse):
    if reverse:
        return np.flip(ufunc.accumulate(np.flip(x, axis), axis=axis), axis)
    return ufunc.accumulate(x, axis=axis)


def loop_scan(f, xs, reverse=False):
    """The oracle for a single array: a Python loop along axis 0, JAX's argument order."""
    xs = list(xs)
    if reverse:
        xs = xs[::-1]
    out = [xs[0]]
    for x in xs[1:]:
        out.append(f(out[-1], x))
    if reverse:
        out = out[::-1]
    return np.stack(out)


OPS = [("add", lax.add, np.add), ("mul", lax.mul, np.multiply),
       ("max", lax.max, np.maximum)]


# ---- values against NumPy ----

@pytest.mark.parametrize("n", [1, 2, 7, 8, 33])
@pytest.mark.parametrize("name,fn,ufunc", OPS, ids=[o[0] for o in OPS])
def test_lengths_axis0(name, fn, ufunc, n):
    x = RNG.uniform(0.5, 1.5, size=(n, 3)).astype(F32)
    got = lax.associative_scan(fn, x)
    np.testing.assert_allclose(np.asarray(got), ufunc.accumulate(x, axis=0), rtol=1e-5)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1, -1, -2])
@pytest.mark.parametrize("name,fn,ufunc", OPS, ids=[o[0] for o in OPS])
def test_axes_and_reverse(name, fn, ufunc, axis, reverse):
    x = RNG.uniform(0.5, 1.5, size=(5, 7, 2)).astype(F32)
    got = pyjax.jit(lambda x: lax.associative_scan(fn, x, reverse=reverse, axis=axis))(x)
    np.testing.assert_allclose(np.asarray(got), np_scan(ufunc, x, axis, reverse), rtol=1e-5)


@pytest.mark.parametrize("n", [1, 2, 7, 8, 33])
def test_reverse_lengths(n):
    x = np.arange(n, dtype=np.int32)
    got = lax.associative_scan(lax.add, jnp.asarray(x), reverse=True)
    np.testing.assert_array_equal(np.asarray(got), np.cumsum(x[::-1])[::-1])


def test_docstring_examples():
    x = jnp.arange(5)
    np.testing.assert_array_equal(np.asarray(lax.associative_scan(lax.add, x)),
                                  [0, 1, 3, 6, 10])
    np.testing.assert_array_equal(np.asarray(lax.associative_scan(lax.add, x, reverse=True)),
                                  [10, 10, 9, 7, 4])


def test_integer_and_bool_dtypes():
    x = np.array([3, -1, 4, 1, -5, 9, 2], np.int32)
    np.testing.assert_array_equal(np.asarray(lax.associative_scan(lax.max, x)),
                                  np.maximum.accumulate(x))
    b = np.array([False, False, True, False, True, False])
    got = lax.associative_scan(lax.bitwise_or, b)
    np.testing.assert_array_equal(np.asarray(got), np.logical_or.accumulate(b))
    assert got.dtype == np.bool_


def test_preserves_negative_zero():
    # The interleave moves values without arithmetic: a scan of max keeps -0.0 untouched.
    x = np.array([-0.0, -1.0, -2.0, -3.0, -4.0], F32)
    got = np.asarray(lax.associative_scan(lax.max, x))
    assert np.all(np.signbit(got))


# ---- pytrees and non-commutative fns ----

def _affine(x, y):
    (a1, b1), (a2, b2) = x, y
    return a1 * a2, a2 * b1 + b2


@pytest.mark.parametrize("n", [1, 2, 7, 8, 33])
def test_linear_recurrence(n):
    a = RNG.uniform(0.5, 1.0, size=(n, 2)).astype(F32)
    b = rand(n, 2)
    got_a, got_h = lax.associative_scan(_affine, (a, b))
    h, want_h, want_a, p = np.zeros(2, F32), [], [], np.ones(2, F32)
    for t in range(n):
        h = a[t] * h + b[t]
        p = p * a[t]
        want_h.append(h)
        want_a.append(p)
    np.testing.assert_allclose(np.asarray(got_h), np.stack(want_h), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(got_a), np.stack(want_a), rtol=1e-5)


def test_dict_pytree_along_last_axis():
    x = {"s": rand(3, 6), "m": rand(3, 6)}
    got = lax.associative_scan(lambda p, q: {"s": p["s"] + q["s"],
                                             "m": lax.max(p["m"], q["m"])}, x, axis=-1)
    np.testing.assert_allclose(np.asarray(got["s"]), np.cumsum(x["s"], axis=-1), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_array_equal(np.asarray(got["m"]), np.maximum.accumulate(x["m"], axis=-1))


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("n", [3, 6])
def test_matmul_order(n, reverse):
    # Matrix products are associative but not commutative, so argument order shows.
    mats = RNG.integers(-3, 4, size=(n, 2, 2)).astype(F32)
    got = pyjax.jit(lambda m: lax.associative_scan(jnp.matmul, m, reverse=reverse))(mats)
    want = loop_scan(np.matmul, mats, reverse=reverse)
    np.testing.assert_array_equal(np.asarray(got), want)


def test_reverse_argument_order_as_jax():
    # reverse=True is rev(scan(rev(x))): the later partial result is fn's first argument.
    a, b, c = (RNG.integers(-3, 4, size=(2, 2)).astype(F32) for _ in range(3))
    got = lax.associative_scan(jnp.matmul, np.stack([a, b, c]), reverse=True)
    want = np.stack([(c @ b) @ a, c @ b, c])
    np.testing.assert_array_equal(np.asarray(got), want)


# ---- transformations ----

def test_jit_and_no_loop_primitive():
    x = rand(9, 2)
    f = lambda x: lax.associative_scan(lax.add, x, axis=0)  # noqa: E731
    np.testing.assert_allclose(np.asarray(pyjax.jit(f)(x)), np.cumsum(x, 0), rtol=1e-5,
                               atol=1e-6)
    names = {e.primitive.name for e in pyjax.make_jaxpr(f)(x).jaxpr.eqns}
    assert not names & {"while", "scan", "cond"}, names


@pytest.mark.parametrize("n", [1, 5, 8])
def test_grad_of_cumsum_squared(n):
    x = rand(n)
    f = lambda x: jnp.sum(lax.associative_scan(lax.add, x) ** 2)  # noqa: E731
    g = np.asarray(pyjax.jit(pyjax.grad(f))(x))
    # d/dx_j sum_i (cumsum x)_i^2 = 2 * sum_{i >= j} (cumsum x)_i
    c = np.cumsum(x.astype(np.float64))
    want = 2 * np.cumsum(c[::-1])[::-1]
    np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5)


def test_grad_of_linear_recurrence_against_finite_differences(x64):
    n = 6
    a = RNG.uniform(0.5, 1.0, size=n).astype(np.float64)
    b = RNG.normal(size=n)

    def f(a, b):
        return jnp.sum(lax.associative_scan(_affine, (a, b))[1] ** 2)

    def ref(a, b):
        h, s = 0.0, 0.0
        for t in range(n):
            h = a[t] * h + b[t]
            s += h * h
        return s

    np.testing.assert_allclose(float(f(a, b)), ref(a, b), rtol=1e-12)
    check_grads(f, (a, b), order=1, rtol=1e-6, atol=1e-8, eps=1e-6)  # in float64
    # the jitted float32 gradient against the checked float64 one
    ga, gb = pyjax.jit(pyjax.grad(f, argnums=(0, 1)))(a.astype(F32), b.astype(F32))
    assert ga.dtype == gb.dtype == F32
    for g, want in zip((ga, gb), pyjax.vjp(f, a, b)[1](1.0)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(want), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("reverse", [False, True])
def test_vmap_against_loop(reverse):
    x = rand(4, 7, 2)  # batch of 4, scan along the length-7 axis of each example
    f = lambda x: lax.associative_scan(lax.add, x, reverse=reverse, axis=0)  # noqa: E731
    got = pyjax.jit(pyjax.vmap(f))(x)
    want = np.stack([np_scan(np.add, x[i], 0, reverse) for i in range(4)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


def test_vmap_pytree_in_axes_1():
    a = RNG.uniform(0.5, 1.0, size=(5, 3)).astype(F32)  # scan length 5, batch 3 on axis 1
    b = rand(5, 3)
    got = pyjax.vmap(lambda a, b: lax.associative_scan(_affine, (a, b))[1],
                     in_axes=1, out_axes=1)(a, b)
    want = np.zeros_like(b)
    for i in range(3):
        h = 0.0
        for t in range(5):
            h = a[t, i] * h + b[t, i]
            want[t, i] = h
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


# ---- errors ----

def test_differing_lengths_raise():
    with pytest.raises(ValueError, match=r"\[3, 4\]"):
        lax.associative_scan(lambda x, y: (x[0] + y[0], x[1] + y[1]),
                             (np.zeros(3, F32), np.zeros(4, F32)))
    with pytest.raises(ValueError, match=r"\[2, 5\]"):
        lax.associative_scan(lambda x, y: [x[0] + y[0], x[1] + y[1]],
                             [np.zeros((3, 2), F32), np.zeros((3, 5), F32)], axis=1)


def test_non_callable_fn_raises():
    with pytest.raises(TypeError, match="callable"):
        lax.associative_scan(3, np.zeros(4, F32))


def test_bad_axis_and_empty_elems_raise():
    with pytest.raises(ValueError, match="out of bounds"):
        lax.associative_scan(lax.add, np.zeros((2, 3), F32), axis=2)
    with pytest.raises(ValueError, match="at least one array"):
        lax.associative_scan(lax.add, ())


def test_fn_returning_wrong_structure_raises():
    with pytest.raises(TypeError, match="structure"):
        lax.associative_scan(lambda x, y: x[0] + y[0], (np.zeros(4, F32), np.zeros(4, F32)))
