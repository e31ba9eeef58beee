"""pyjax.scipy.linalg wrappers against SciPy (values; every option that changes the result)."""
import numpy as np
import pytest
import scipy.linalg as sl

import pyjax.scipy.linalg as jsl

RNG = np.random.default_rng(1)
A = RNG.normal(size=(4, 4)).astype(np.float32)
B = RNG.normal(size=(4, 2)).astype(np.float32)
SPD = A @ A.T + 4 * np.eye(4, dtype=np.float32)
TRI = A + 5 * np.eye(4, dtype=np.float32)


def close(x, y, tol=1e-4):
    np.testing.assert_allclose(np.asarray(x), y, rtol=0, atol=tol * max(1, np.abs(y).max()))


def test_cholesky_family():
    for lower in (True, False):
        close(jsl.cholesky(SPD, lower=lower), sl.cholesky(SPD, lower=lower))
        close(jsl.cho_solve(jsl.cho_factor(SPD, lower=lower), B),
              sl.cho_solve(sl.cho_factor(SPD, lower=lower), B))
        close(jsl.solve(np.triu(SPD) if not lower else np.tril(SPD), B, lower=lower,
                        assume_a="pos"), np.linalg.solve(SPD, B))
    close(jsl.cho_solve(jsl.cho_factor(SPD), B[:, 0]), np.linalg.solve(SPD, B[:, 0]))


@pytest.mark.parametrize("trans", [0, 1, 2, "N", "T", "C"])
def test_solve_triangular(trans):
    for lower in (True, False):
        for unit in (True, False):
            close(jsl.solve_triangular(TRI, B, trans=trans, lower=lower, unit_diagonal=unit),
                  sl.solve_triangular(TRI, B, trans=trans, lower=lower, unit_diagonal=unit))
    close(jsl.solve_triangular(TRI, B[:, 0], trans=trans),
          sl.solve_triangular(TRI, B[:, 0], trans=trans))


def test_lu_family():
    for a in (A, A[:3], A[:, :3]):
        for got, want in zip(jsl.lu(a), sl.lu(a)):
            close(got, want)
        pl, u = jsl.lu(a, permute_l=True)
        close(np.asarray(pl) @ np.asarray(u), a)
    lu, piv = jsl.lu_factor(A)
    lu_s, piv_s = sl.lu_factor(A)
    close(lu, lu_s)
    np.testing.assert_array_equal(np.asarray(piv), piv_s)
    for trans in (0, 1, 2):
        close(jsl.lu_solve((lu, piv), B, trans=trans), sl.lu_solve((lu_s, piv_s), B, trans=trans))
    close(jsl.lu_solve((lu, piv), B[:, 0]), np.linalg.solve(A, B[:, 0]))


def test_qr_solve_det_inv_eigh_svd():
    for mode in ("full", "economic", "r"):
        got, want = jsl.qr(A[:, :3], mode=mode), sl.qr(A[:, :3], mode=mode)
        assert [np.shape(g) for g in got] == [np.shape(w) for w in want]
    q, r = jsl.qr(A[:, :3], mode="economic")
    close(np.asarray(q) @ np.asarray(r), A[:, :3])
    for assume_a in ("gen", "sym", "her"):
        close(jsl.solve(SPD, B, assume_a=assume_a), np.linalg.solve(SPD, B))
    close(jsl.det(A), np.linalg.det(A))
    close(jsl.inv(A), np.linalg.inv(A))
    close(jsl.eigh(SPD, eigvals_only=True), sl.eigh(SPD, eigvals_only=True))
    close(jsl.eigh(SPD, subset_by_index=(1, 2))[0], sl.eigh(SPD, subset_by_index=(1, 2))[0])
    # the input is symmetrized as in JAX 0.10.2 (not SciPy's read of one triangle): JAX gives
    # the eigenvalues of (a + a.T) / 2 for lower=False and lower=True alike
    upper_only = np.triu(SPD) + np.tril(RNG.normal(size=(4, 4)), -1).astype(np.float32)
    for lower in (False, True):
        close(jsl.eigh(upper_only, lower=lower)[0],
              np.linalg.eigvalsh((upper_only + upper_only.T) / 2))
    close(jsl.svd(A, compute_uv=False), sl.svd(A, compute_uv=False))
    u, s, vh = jsl.svd(A[:3])
    close((np.asarray(u) * np.asarray(s)) @ np.asarray(vh)[:3], A[:3])


def test_unsupported_options_raise():
    # (pivoting=True is accepted since JAX 0.10.2 accepts it: tests/linalg/test_linalg_accepted.py)
    with pytest.raises(NotImplementedError, match="lwork"):
        jsl.qr(A, lwork=8)
    with pytest.raises(NotImplementedError, match="generalized"):
        jsl.eigh(SPD, SPD)
    with pytest.raises(ValueError, match="assume_a"):
        jsl.solve(A, B, assume_a="banded")
    with pytest.raises(ValueError, match="trans"):
        jsl.solve_triangular(TRI, B, trans=3)
