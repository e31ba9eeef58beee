"""Regressions from the linear-algebra edge sweep (docs/linalg_edges.md): each case was a
silently wrong number (or a crash on valid input) before; oracles are NumPy and SciPy, or the
JAX 0.10.2 value quoted where JAX deliberately differs from them."""
import numpy as np
import pytest
import scipy.linalg as sl

import pyjax
import pyjax.numpy as jnp
import pyjax.scipy.linalg as jsl


def close(x, y, tol=1e-10):
    x, y = np.asarray(x), np.asarray(y)
    assert x.shape == y.shape, (x.shape, y.shape)
    np.testing.assert_allclose(x, y, rtol=tol, atol=tol)


def both(f, *args):
    """f eagerly and under jit."""
    return f(*args), pyjax.jit(f)(*args)


def test_lstsq_zero_matrix_has_rank_zero(x64):
    # the cutoff is strict (s > rcond * s[0]) as in NumPy's gelsd: was x = NaN and rank 3
    for a in (np.zeros((3, 3)), np.zeros((3, 2))):
        for x, resid, rank, s in both(lambda a: jnp.linalg.lstsq(a, jnp.ones(3)), a):
            want = np.linalg.lstsq(a, np.ones(3), rcond=None)
            close(x, want[0])
            assert int(rank) == want[2] == 0
            close(s, want[3])


def test_sqrtm_and_funm_of_matrices_with_repeated_eigenvalues(x64):
    z = np.zeros((3, 3))
    for got in both(jsl.sqrtm, z):      # was NaN (0 / 0 in the Björck–Hammarling recurrence)
        close(got, sl.sqrtm(z))
    for got in both(lambda a: jsl.funm(a, jnp.exp), z):  # was NaN; SciPy and JAX: identity
        close(got, sl.funm(z, np.exp))
    d = np.diag([2.0, 2.0, 5.0]) + np.triu(np.ones((3, 3)), 2)  # a repeated eigenvalue, no 0/0
    close(jsl.funm(d, jnp.exp), sl.funm(d, np.exp), 1e-8)
    # a missing square root stays NaN (JAX 0.10.2 gives NaN for [[0, 1], [0, 0]])
    assert np.isnan(np.asarray(jsl.sqrtm(np.array([[0.0, 1.0], [0.0, 0.0]])))).all()


def test_expm_of_empty_matrices():
    for shape in ((0, 0), (0, 2, 2), (2, 0, 0)):   # was a TypeError from a reshape
        for got in both(jsl.expm, np.zeros(shape, np.float32)):
            assert got.shape == shape and got.dtype == np.float32


def test_scipy_eigh_symmetrizes_its_input_as_jax():
    # JAX 0.10.2: jax.scipy.linalg.eigh([[1, 2], [0, 1]]) is [0, 2] for lower=True and False
    a = np.array([[1.0, 2.0], [0.0, 1.0]], np.float32)
    for lower in (True, False):
        close(jsl.eigh(a, lower=lower, eigvals_only=True), [0.0, 2.0], 1e-6)
