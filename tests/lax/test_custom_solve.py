"""lax.custom_linear_solve and lax.custom_root: values against NumPy, derivatives against finite
differences (implicit differentiation must agree with differentiating the exact solution), vmap
against a loop, jit against eager, transposition against the dot-product identity."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax.test_util import check_grads

TESTED_PRIMITIVES = JVP_TESTED = TRANSPOSE_TESTED = BATCH_TESTED = {"custom_linear_solve"}

RNG = np.random.default_rng(0)
A = RNG.normal(size=(4, 4)) + 4 * np.eye(4)
B = RNG.normal(size=4)


def solve_with(a, b):
    """custom_linear_solve of ``a x = b``, whose solve counts on a dense solve."""
    return lax.custom_linear_solve(lambda x: a @ x, b,
                                   solve=lambda mv, r: jnp.linalg.solve(a, r),
                                   transpose_solve=lambda vm, r: jnp.linalg.solve(a.T, r))


def test_values_jit_and_derivatives(x64):
    want = np.linalg.solve(A, B)
    np.testing.assert_allclose(solve_with(A, B), want, rtol=1e-12)
    np.testing.assert_allclose(pyjax.jit(solve_with)(A, B), want, rtol=1e-12)
    check_grads(pyjax.jit(solve_with), (A, B), order=2, modes=["fwd", "rev"])


def test_derivative_uses_the_solve_not_its_iterations(x64):
    # a solve that is exact only at the primal point: 10 fixed Jacobi-like steps on a
    # diagonally dominant matrix would give a wrong derivative if differentiated through; the
    # implicit rule differentiates the exact solution x = A^-1 b.
    a = np.diag([4.0, 5.0, 6.0]) + 0.1 * RNG.normal(size=(3, 3))
    b = RNG.normal(size=3)

    def jacobi(mv, r):
        d = jnp.diag(a)
        x = r / d
        for _ in range(60):
            x = x + (r - mv(x)) / d
        return x

    def f(b):
        return lax.custom_linear_solve(lambda x: a @ x, b, jacobi, symmetric=False,
                                       transpose_solve=lambda vm, r: jnp.linalg.solve(a.T, r))
    jac = pyjax.jit(pyjax.jacfwd(f))(b)
    np.testing.assert_allclose(jac, np.linalg.inv(a), rtol=1e-8)
    np.testing.assert_allclose(pyjax.jit(pyjax.jacrev(f))(b), np.linalg.inv(a), rtol=1e-8)


def test_transpose_is_the_transposed_solve(x64):
    f = lambda b: solve_with(A, b)  # noqa: E731
    ct = RNG.normal(size=4)
    (tb,) = pyjax.linear_transpose(f, B)(ct)
    # <f(b), ct> == <b, f^T(ct)>
    np.testing.assert_allclose(np.dot(np.asarray(f(B)), ct), np.dot(B, np.asarray(tb)),
                               rtol=1e-12)
    np.testing.assert_allclose(tb, np.linalg.solve(A.T, ct), rtol=1e-12)


def test_vmap_equals_loop(x64):
    As = RNG.normal(size=(3, 4, 4)) + 4 * np.eye(4)
    Bs = RNG.normal(size=(3, 4))
    got = pyjax.vmap(solve_with)(As, Bs)
    np.testing.assert_allclose(got, np.stack([np.linalg.solve(a, b) for a, b in zip(As, Bs)]),
                               rtol=1e-12)
    got = pyjax.vmap(solve_with, (None, 0))(A, Bs)
    np.testing.assert_allclose(got, np.linalg.solve(A, Bs.T).T, rtol=1e-12)
    g = pyjax.vmap(pyjax.grad(lambda a, b: solve_with(a, b).sum()))(As, Bs)
    want = [-np.outer(np.linalg.solve(a.T, np.ones(4)), np.linalg.solve(a, b))
            for a, b in zip(As, Bs)]
    np.testing.assert_allclose(g, np.stack(want), rtol=1e-10)


def test_pytree_symmetric_and_aux(x64):
    spd = A @ A.T + np.eye(4)

    def mv(x):
        return {"u": spd[:2, :2] @ x["u"] + spd[:2, 2:] @ x["v"],
                "v": spd[2:, :2] @ x["u"] + spd[2:, 2:] @ x["v"]}

    def solve(mv, r):
        x = jnp.linalg.solve(spd, jnp.concatenate([r["u"], r["v"]]))
        return {"u": x[:2], "v": x[2:]}, jnp.float32(7)

    b = {"u": B[:2], "v": B[2:]}
    x, aux = lax.custom_linear_solve(mv, b, solve, symmetric=True, has_aux=True)
    want = np.linalg.solve(spd, B)
    np.testing.assert_allclose(np.concatenate([x["u"], x["v"]]), want, rtol=1e-12)
    assert float(aux) == 7
    g = pyjax.grad(lambda b: lax.custom_linear_solve(mv, b, solve, symmetric=True,
                                                     has_aux=True)[0]["v"].sum())(b)
    np.testing.assert_allclose(np.concatenate([g["u"], g["v"]]),
                               np.linalg.solve(spd, np.r_[0, 0, 1, 1.0]), rtol=1e-10)


def test_errors():
    with pytest.raises(TypeError, match="transpose_solve required"):
        pyjax.grad(lambda b: lax.custom_linear_solve(
            lambda x: A @ x, b, lambda mv, r: jnp.linalg.solve(A, r)).sum())(B)
    with pytest.raises(TypeError, match="matvec\\(\\) output shapes must match b"):
        lax.custom_linear_solve(lambda x: x[:2], B, lambda mv, r: r)
    with pytest.raises(TypeError, match="solve\\(\\) output"):
        lax.custom_linear_solve(lambda x: x, B, lambda mv, r: (r, r))


# ---- custom_root ----

def _newton(f, x0):
    def body(state):
        x, _ = state
        return x - f(x) / pyjax.grad(f)(x), x
    return lax.while_loop(lambda s: jnp.abs(s[0] - s[1]) > 1e-13, body, (x0, x0 + 1.0))[0]


def sqrt_cubed(x):
    return lax.custom_root(lambda y: y ** 2 - x ** 3, 1.0, _newton,
                           lambda g, y: y / g(1.0))


def test_custom_root_scalar(x64):
    xs = np.array([1.0, 4.0, 9.0])
    np.testing.assert_allclose(sqrt_cubed(4.0), 8.0, rtol=1e-12)
    np.testing.assert_allclose(pyjax.jit(pyjax.grad(sqrt_cubed))(4.0), 3.0, rtol=1e-12)
    np.testing.assert_allclose(pyjax.vmap(pyjax.grad(sqrt_cubed))(xs), 1.5 * np.sqrt(xs),
                               rtol=1e-12)
    check_grads(pyjax.jit(sqrt_cubed), (4.0,), order=2, modes=["fwd", "rev"])


def test_custom_root_vector_with_aux(x64):
    # f(y) = a y + y^3 - c elementwise-coupled through a: root depends on a and c
    a = np.array([[3.0, 0.5], [0.2, 4.0]])

    def solve(f, y0):
        def body(i, y):
            return y - jnp.linalg.solve(pyjax.jacfwd(f)(y), f(y))
        return lax.fori_loop(0, 30, body, y0), jnp.int32(30)

    def root(a, c):
        f = lambda y: a @ y + y ** 3 - c  # noqa: E731
        return lax.custom_root(f, jnp.zeros(2), solve,
                               lambda g, r: jnp.linalg.solve(pyjax.jacfwd(g)(r * 0), r),
                               has_aux=True)

    c = np.array([1.0, 2.0])
    y, iters = root(a, c)
    np.testing.assert_allclose(a @ np.asarray(y) + np.asarray(y) ** 3, c, rtol=1e-12)
    assert int(iters) == 30
    check_grads(pyjax.jit(lambda a, c: root(a, c)[0]), (a, c), order=1, modes=["fwd", "rev"])
    # the initial guess gets no derivative
    g = pyjax.grad(lambda y0: lax.custom_root(lambda y: y ** 2 - 4.0, y0, _newton,
                                              lambda g, r: r / g(1.0)))(1.0)
    assert float(g) == 0.0
