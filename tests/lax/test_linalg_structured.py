"""lax.linalg tridiagonal_solve, hessenberg, tridiagonal, schur and cholesky_update against
SciPy (solve_banded, LAPACK's gehrd/sytrd/hetrd, schur), reconstructions, finite differences
for tridiagonal_solve's derivatives, vmap against a loop, jit against eager."""
import numpy as np
import pytest
import scipy.linalg as sl
from scipy.linalg import lapack

import pyjax
from pyjax.lax import linalg as ll
from pyjax.test_util import check_grads

_ALL = {"tridiagonal_solve", "hessenberg", "tridiagonal", "schur", "cholesky_update"}
TESTED_PRIMITIVES = BATCH_TESTED = JVP_TESTED = _ALL  # JVP: the four without one raise
TRANSPOSE_TESTED = {"tridiagonal_solve"}

RNG = np.random.default_rng(7)


def _tridiag(m, batch=(), dtype=np.float64):
    dl, d, du = (RNG.normal(size=batch + (m,)).astype(dtype) for _ in range(3))
    dl[..., 0] = 0
    du[..., -1] = 0
    return dl, d, du


def _dense(dl, d, du):
    """The tridiagonal matrices (..., m, m) of the diagonals (..., m)."""
    m = d.shape[-1]
    a = np.zeros(d.shape + (m,), np.result_type(dl, d, du))
    i = np.arange(m)
    a[..., i, i] = d
    a[..., i[1:], i[:-1]] = dl[..., 1:]
    a[..., i[:-1], i[1:]] = du[..., :-1]
    return a


def _banded(dl, d, du):
    return np.stack([np.r_[0, du[:-1]], d, np.r_[dl[1:], 0]])


# ---- tridiagonal_solve ----

def test_tridiagonal_solve_matches_solve_banded():
    dl, d, du = _tridiag(9)
    d[[0, 3, 4]] = 0  # zero diagonal entries: only a pivoting elimination solves these
    b = RNG.normal(size=(9, 3))
    want = sl.solve_banded((1, 1), _banded(dl, d, du), b)
    for dt, tol in ((np.float32, 2e-4), (np.float64, 1e-12)):
        with pyjax.enable_x64(dt == np.float64):
            args = [x.astype(dt) for x in (dl, d, du, b)]
            got = ll.tridiagonal_solve(*args)
            assert got.dtype == dt
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    # 1 x 1 systems and complex values
    np.testing.assert_allclose(ll.tridiagonal_solve(*[np.ones(1, np.float32)] * 3,
                                                    np.full((1, 2), 3, np.float32)), [[3, 3]])
    dlc, dc, duc = (x + 1j * y for x, y in zip(_tridiag(5), _tridiag(5)))
    bc = RNG.normal(size=(5, 1)) + 1j
    np.testing.assert_allclose(ll.tridiagonal_solve(*(x.astype(np.complex64) for x in
                                                       (dlc, dc, duc, bc))),
                               np.linalg.solve(_dense(dlc, dc, duc), bc), rtol=1e-4, atol=1e-4)


def test_tridiagonal_solve_batch_vmap_jit():
    dl, d, du = _tridiag(6, (2, 3), np.float32)
    b = RNG.normal(size=(2, 3, 6, 2)).astype(np.float32)
    want = np.linalg.solve(_dense(dl, d, du), b)
    np.testing.assert_allclose(ll.tridiagonal_solve(dl, d, du, b), want, rtol=1e-4, atol=1e-4)
    f = pyjax.jit(pyjax.vmap(ll.tridiagonal_solve, (0, 0, 0, 0)))
    np.testing.assert_allclose(f(dl[0], d[0], du[0], b[0]), want[0], rtol=1e-4, atol=1e-4)
    g = pyjax.vmap(ll.tridiagonal_solve, (None, None, None, 1), 1)
    loop = np.stack([np.linalg.solve(_dense(dl[0, 0], d[0, 0], du[0, 0]), b[0, i])
                     for i in range(3)], 0)
    np.testing.assert_allclose(g(dl[0, 0], d[0, 0], du[0, 0], b[0].transpose(1, 0, 2)),
                               loop.transpose(1, 0, 2), rtol=1e-4, atol=1e-4)


def test_tridiagonal_solve_derivatives_and_transpose(x64):
    dl, d, du = _tridiag(5)
    d += 3
    b = RNG.normal(size=(5, 2))
    check_grads(pyjax.jit(ll.tridiagonal_solve), (dl, d, du, b), order=2,
                modes=["fwd", "rev"])
    ct = RNG.normal(size=(5, 2))
    (tb,) = pyjax.linear_transpose(lambda b: ll.tridiagonal_solve(dl, d, du, b), b)(ct)
    np.testing.assert_allclose(tb, np.linalg.solve(_dense(dl, d, du).T, ct), rtol=1e-12)


# ---- hessenberg, tridiagonal ----

def test_hessenberg_matches_gehrd():
    a = RNG.normal(size=(6, 6))
    for dt, fn, tol in ((np.float32, lapack.sgehrd, 1e-5), (np.complex128, lapack.zgehrd, 1e-12)):
        with pyjax.enable_x64(dt == np.complex128):
            x = (a + 1j * a[::-1] if dt == np.complex128 else a).astype(dt)
            packed, taus = ll.hessenberg(x)
            want, want_taus, _ = fn(x)
            np.testing.assert_allclose(packed, want, atol=tol * 10)
            np.testing.assert_allclose(taus, want_taus[:5], atol=tol * 10)
            # q h q^H == a, q from the reflectors
            h = np.triu(np.asarray(packed), -1)
            q = np.eye(6, dtype=dt)
            q[1:, 1:] = np.asarray(ll.householder_product(
                np.tril(np.asarray(packed)[1:, :-1]), np.asarray(taus)))
            np.testing.assert_allclose(q @ h @ q.conj().T, x, atol=tol * 30)
    # batched and vmapped equal the loop
    xs = RNG.normal(size=(3, 4, 4)).astype(np.float32)
    got = pyjax.vmap(ll.hessenberg)(xs)[0]
    np.testing.assert_allclose(got, np.stack([lapack.sgehrd(x)[0] for x in xs]), atol=1e-5)


@pytest.mark.parametrize("lower", [True, False])
def test_tridiagonal_matches_sytrd_hetrd(lower):
    a = RNG.normal(size=(5, 5))
    sym = (a + a.T).astype(np.float32)
    arr, d, e, taus = ll.tridiagonal(sym, lower=lower)
    w_arr, w_d, w_e, w_taus, _ = lapack.ssytrd(sym, lower=lower)
    for got, want in ((arr, w_arr), (d, w_d), (e, w_e), (taus, w_taus)):
        np.testing.assert_allclose(got, want, atol=2e-5)
    herm = (a + 1j * a.T)
    herm = (herm + herm.conj().T).astype(np.complex64)
    arr, d, e, taus = pyjax.jit(ll.tridiagonal, static_argnames="lower")(herm, lower=lower)
    assert d.dtype == np.float32 and arr.dtype == np.complex64
    w_arr, w_d, w_e, w_taus, _ = lapack.chetrd(herm, lower=lower)
    for got, want in ((arr, w_arr), (d, w_d), (e, w_e), (taus, w_taus)):
        np.testing.assert_allclose(got, want, atol=2e-5)
    # eigenvalues of the tridiagonal matrix are those of a
    t = np.diag(np.asarray(d)) + np.diag(np.asarray(e), 1) + np.diag(np.asarray(e), -1)
    np.testing.assert_allclose(np.linalg.eigvalsh(t), np.linalg.eigvalsh(herm), atol=1e-4)
    xs = np.stack([sym, 2 * sym])
    got = pyjax.vmap(lambda x: ll.tridiagonal(x, lower=lower)[1])(xs)
    np.testing.assert_allclose(got, np.stack([lapack.ssytrd(x, lower=lower)[1] for x in xs]),
                               atol=1e-4)


# ---- schur ----

def _check_real_schur(a, t, z, tol):
    t, z = np.asarray(t), np.asarray(z)
    n = a.shape[-1]
    np.testing.assert_allclose(z @ t @ z.T, a, atol=tol)
    np.testing.assert_allclose(z.T @ z, np.eye(n), atol=tol)
    assert not np.tril(t, -2).any()
    for i in range(n - 1):  # subdiagonal entries only in standardized 2 x 2 blocks
        if t[i + 1, i] != 0:
            assert t[i, i] == pytest.approx(t[i + 1, i + 1], abs=tol)
            assert t[i, i + 1] * t[i + 1, i] < 0
            assert i + 2 >= n or t[i + 2, i + 1] == 0
    np.testing.assert_allclose(np.sort_complex(np.linalg.eigvals(t)),
                               np.sort_complex(sl.eigvals(a)), atol=tol)


def test_schur_real_and_complex():
    a = RNG.normal(size=(7, 7))
    with pyjax.enable_x64(True):
        t, z = ll.schur(a)
        _check_real_schur(a, t, z, 1e-12)
        ac = a + 1j * RNG.normal(size=(7, 7))
        t, z = pyjax.jit(ll.schur)(ac)
        t, z = np.asarray(t), np.asarray(z)
        np.testing.assert_allclose(z @ t @ z.conj().T, ac, atol=1e-12)
        assert not np.tril(t, -1).any()
        np.testing.assert_allclose(np.sort_complex(np.diag(t)), np.sort_complex(sl.eigvals(ac)),
                                   atol=1e-10)
    # float32, batched; compute_schur_vectors=False; rotations (complex pairs) and symmetric
    xs = np.stack([a[:4, :4], np.array([[0, -1, 0, 0], [1, 0, 0, 0], [0, 0, 2, 1],
                                        [0, 0, 0, 2]]), a[:4, :4] + a[:4, :4].T]).astype(np.float32)
    ts, zs = ll.schur(xs)
    assert ts.dtype == np.float32
    for x, t, z in zip(xs, ts, zs):
        _check_real_schur(x, t, z, 1e-4)
    t_only = ll.schur(xs, compute_schur_vectors=False)
    np.testing.assert_allclose(t_only, ts, atol=1e-6)
    np.testing.assert_allclose(pyjax.vmap(lambda x: ll.schur(x)[0])(xs), ts, atol=1e-6)
    with pytest.raises(NotImplementedError, match="sort_eig_vals"):
        ll.schur(xs, sort_eig_vals=True)


# ---- cholesky_update ----

def test_cholesky_update():
    a = RNG.normal(size=(2, 5, 5))
    spd = a @ a.transpose(0, 2, 1) + np.eye(5)
    r = np.linalg.cholesky(spd).transpose(0, 2, 1)
    w = RNG.normal(size=(2, 5))
    want = np.linalg.cholesky(spd + w[:, :, None] * w[:, None, :]).transpose(0, 2, 1)
    np.testing.assert_allclose(ll.cholesky_update(r.astype(np.float32), w.astype(np.float32)),
                               want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(pyjax.jit(pyjax.vmap(ll.cholesky_update))(
        r.astype(np.float32), w.astype(np.float32)), want, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="w must be"):
        ll.cholesky_update(r[0].astype(np.float32), np.ones(4, np.float32))


def test_not_differentiable():
    a = RNG.normal(size=(3, 3)).astype(np.float32)
    for f in (lambda x: ll.hessenberg(x)[0], lambda x: ll.tridiagonal(x + x.T)[0],
              lambda x: ll.schur(x)[0], lambda x: ll.cholesky_update(x, x[0])):
        with pytest.raises(NotImplementedError, match="differentiation"):
            pyjax.jvp(f, (a,), (a,))


def test_numpy_kernels_without_scipy():
    """The NumPy implementations that serve when SciPy is absent give LAPACK's results
    (float64 and complex128, both triangles)."""
    from pyjax._src.lax import structured_kernels as k
    a = RNG.normal(size=(6, 6))
    for x in (a, a + 1j * a.T):
        packed, taus = k.hessenberg_numpy(x)
        want, want_taus, _ = (lapack.zgehrd if np.iscomplexobj(x) else lapack.dgehrd)(x)
        np.testing.assert_allclose(packed, want, atol=1e-12)
        np.testing.assert_allclose(taus, want_taus[:5], atol=1e-12)
        herm = x + x.conj().T
        for lower in (True, False):
            fn = lapack.zhetrd if np.iscomplexobj(x) else lapack.dsytrd
            for got, want in zip(k.tridiagonal_numpy(herm, lower), fn(herm, lower=lower)):
                np.testing.assert_allclose(got, want, atol=1e-12)
    t, z = k.schur_numpy(a, True)
    _check_real_schur(a, t, z, 1e-12)
    ac = a + 1j * a[::-1]
    t, z = k.schur_numpy(ac, True)
    np.testing.assert_allclose(z @ t @ z.conj().T, ac, atol=1e-12)
    assert not np.tril(t, -1).any()
    assert np.isnan(k.schur_numpy(np.full((3, 3), np.nan), False)[0]).all()
