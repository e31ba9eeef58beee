"""jax.scipy.sparse.linalg cg / bicgstab / gmres: solutions against NumPy's direct solve (and
SciPy's solvers), derivatives of the exact solution against finite differences, vmap against
a loop, pytrees, preconditioners and bad input."""
import numpy as np
import pytest
import scipy.sparse.linalg as ssl

import pyjax
import pyjax.numpy as jnp
import pyjax.scipy.sparse.linalg as jsl
from pyjax.test_util import check_grads

RNG = np.random.default_rng(3)
N = 6
_G = RNG.normal(size=(N, N))
SPD = _G @ _G.T + N * np.eye(N)
NONSYM = RNG.normal(size=(N, N)) + 4 * np.eye(N)
B = RNG.normal(size=N)
SOLVERS = {"cg": (jsl.cg, SPD), "bicgstab": (jsl.bicgstab, NONSYM),
           "gmres": (jsl.gmres, NONSYM)}


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_solution_jit_vmap_and_derivatives(name, x64):
    solver, a = SOLVERS[name]
    want = np.linalg.solve(a, B)
    x, info = solver(a, B, tol=1e-12)
    assert info is None
    np.testing.assert_allclose(x, want, rtol=1e-9, atol=1e-12)
    # SciPy's solver agrees (its own tolerance keyword is rtol)
    np.testing.assert_allclose(x, getattr(ssl, name)(a, B, rtol=1e-12)[0], atol=1e-8)
    f = pyjax.jit(lambda a, b: solver(lambda v: a @ v, b, tol=1e-12)[0])
    np.testing.assert_allclose(f(a, B), want, rtol=1e-9, atol=1e-12)
    bs = RNG.normal(size=(3, N))
    np.testing.assert_allclose(pyjax.vmap(f, (None, 0))(a, bs), np.linalg.solve(a, bs.T).T,
                               rtol=1e-8, atol=1e-11)
    check_grads(f, (a, B), order=1, modes=["fwd", "rev"], atol=1e-5, rtol=1e-5)


def test_options_x0_preconditioner_maxiter_pytree(x64):
    m = np.diag(1 / np.diag(SPD))
    want = np.linalg.solve(SPD, B)
    for solver in (jsl.cg, jsl.bicgstab, jsl.gmres):
        x = pyjax.jit(lambda b, x0: solver(lambda v: SPD @ v, b, x0=x0,
                                              M=lambda v: m @ v, tol=1e-12)[0])(B, want + 0.1)
        np.testing.assert_allclose(x, want, rtol=1e-9, atol=1e-12)
    # one CG step from zero is the steepest-descent step b (b.b)/(b.A b)
    x, _ = jsl.cg(SPD, B, maxiter=1)
    np.testing.assert_allclose(x, B * (B @ B) / (B @ SPD @ B), rtol=1e-12)
    # a pytree right-hand side: a block-diagonal system
    tree_b = {"p": B[:2], "q": B[2:]}
    mv = lambda t: {"p": SPD[:2, :2] @ t["p"], "q": SPD[2:, 2:] @ t["q"]}  # noqa: E731
    x, _ = jsl.cg(mv, tree_b, tol=1e-12)
    np.testing.assert_allclose(x["p"], np.linalg.solve(SPD[:2, :2], B[:2]), rtol=1e-9)
    np.testing.assert_allclose(x["q"], np.linalg.solve(SPD[2:, 2:], B[2:]), rtol=1e-9)
    x, _ = jsl.gmres(mv, tree_b, tol=1e-12, restart=3)
    np.testing.assert_allclose(x["q"], np.linalg.solve(SPD[2:, 2:], B[2:]), rtol=1e-9)


def test_float32_and_complex():
    x, _ = jsl.cg(SPD.astype(np.float32), B.astype(np.float32))
    assert x.dtype == jnp.float32
    np.testing.assert_allclose(x, np.linalg.solve(SPD, B), rtol=1e-4, atol=1e-5)
    hpd = SPD + 1j * (np.triu(_G, 1) - np.triu(_G, 1).T)
    bc = (B + 1j * B[::-1]).astype(np.complex64)
    x, _ = jsl.cg(hpd.astype(np.complex64), bc)
    np.testing.assert_allclose(x, np.linalg.solve(hpd, bc), rtol=1e-4, atol=1e-5)
    x, _ = jsl.gmres(hpd.astype(np.complex64), bc)
    np.testing.assert_allclose(x, np.linalg.solve(hpd, bc), rtol=1e-4, atol=1e-5)


def test_bad_input():
    with pytest.raises(ValueError, match="square"):
        jsl.cg(np.ones((2, 3)), np.ones(2))
    with pytest.raises(ValueError, match="matching shapes"):
        jsl.cg(SPD, B, x0=np.ones(3))
    with pytest.raises(ValueError, match="solve_method"):
        jsl.gmres(NONSYM, B, solve_method="fast")
    with pytest.raises(TypeError, match="array or a function"):
        jsl.bicgstab("A", B)
