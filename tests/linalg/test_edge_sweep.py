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


def test_scipy_lu_permutation_is_real_for_complex_input():
    a = np.array([[1, 2j], [3, 4]], np.complex64)
    p, l, u = jsl.lu(a)                  # was complex64
    want = sl.lu(a)
    assert p.dtype == want[0].dtype == np.float32
    close(p, want[0])
    close(np.asarray(p) @ np.asarray(l) @ np.asarray(u), a, 1e-6)


def test_scipy_cholesky_reads_one_triangle():
    # SciPy and JAX 0.10.2 read only the requested triangle (was: the symmetrized matrix)
    a = np.array([[4.0, 1, 2], [1, 5, 1], [2, 1, 6]])
    up = np.triu(a) + np.tril(np.full((3, 3), 7.0), -1)
    close(jsl.cholesky(up), sl.cholesky(up), 1e-6)
    close(jsl.cholesky(up.T, lower=True), sl.cholesky(up.T, lower=True), 1e-6)
    close(jsl.cho_factor(up)[0], sl.cholesky(up), 1e-6)
    close(jsl.solve(up, np.ones(3), assume_a="pos"), sl.solve(up, np.ones(3), assume_a="pos"),
          1e-5)


def test_scipy_solvers_take_batches_of_vectors_and_matrices():
    # JAX 0.10.2 accepts a batch of factors with b of shape (..., n) or (..., n, k); pyjax
    # raised ValueError for cho_solve, lu_solve and solve(assume_a="pos")
    rng = np.random.default_rng(0)
    g = rng.normal(size=(2, 3, 3))
    a = g @ g.transpose(0, 2, 1) + 3 * np.eye(3)
    for b in (rng.normal(size=(2, 3)), rng.normal(size=(2, 3, 2))):
        vec = b.ndim == 2
        loop = lambda f: np.stack([f(a[i], b[i]) for i in range(2)])  # noqa: E731
        want = loop(lambda x, y: np.linalg.solve(x, y))
        close(jsl.cho_solve(jsl.cho_factor(a), b), want, 1e-5)
        close(jsl.solve(a, b, assume_a="pos"), want, 1e-5)
        for trans in (0, 1):
            close(jsl.lu_solve(jsl.lu_factor(a), b, trans=trans),
                  loop(lambda x, y: sl.lu_solve(sl.lu_factor(x), y, trans=trans)), 1e-5)
        assert vec == (jsl.cho_solve(jsl.cho_factor(a), b).ndim == 2)


def test_expm_needing_more_squarings_than_allowed_is_nan(x64):
    # JAX 0.10.2: expm(k * [[1, 2], [3, 4]], max_squarings=m) is NaN for (k, m) = (5, 1),
    # (10, 2), (40, 4) and finite for (1, 0), (5, 2), (10, 3), (40, 5); pyjax returned an
    # unconverged finite matrix (1e26 where SciPy's is 1e28)
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    for k, m, nan in ((1, 0, False), (5, 1, True), (40, 4, True), (40, 5, False)):
        got = np.asarray(jsl.expm(k * a, max_squarings=m))
        assert np.isnan(got).all() == nan, (k, m)
        if not nan and k > 1:
            close(got, sl.expm(k * a), 1e-6)


def test_eigh_unsymmetrized_complex_input_ignores_the_imaginary_diagonal(x64):
    # small complex matrices (the XLA path) used Im(diag), which LAPACK, NumPy and JAX ignore
    rng = np.random.default_rng(0)
    c = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))
    for uplo in ("L", "U"):
        want = np.linalg.eigvalsh(c, UPLO=uplo)
        f = lambda c: jnp.linalg.eigh(c, UPLO=uplo, symmetrize_input=False)[0]  # noqa: E731
        for got in both(f, c):
            close(got, want, 1e-9)
        close(f(c.astype(np.complex64)), want, 1e-5)


def test_matrix_rank_tol_is_absolute():
    # NumPy's tol is an absolute threshold (JAX 0.10.2 alike: rank 4 here); pyjax took it as
    # relative (rank 3). rtol stays relative as NumPy's (JAX 0.10.2 returns 4 for rtol=1e-3:
    # it compares the singular values with rtol itself)
    h = sl.hilbert(8)
    assert int(jnp.linalg.matrix_rank(h, tol=1e-3)) == np.linalg.matrix_rank(h, tol=1e-3) == 4
    assert int(jnp.linalg.matrix_rank(h, rtol=1e-3)) == np.linalg.matrix_rank(h, rtol=1e-3) == 3
    b = np.stack([h, 2 * h])
    np.testing.assert_array_equal(jnp.linalg.matrix_rank(b, tol=np.array([1e-3, 5e-3])), [4, 3])
