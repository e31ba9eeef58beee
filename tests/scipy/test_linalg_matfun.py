"""jax.scipy.linalg schur, hessenberg, rsf2csf, sqrtm, funm, expm, expm_frechet against SciPy;
expm's derivatives against finite differences, batches against a loop."""
import numpy as np
import pytest
import scipy.linalg as sl

import pyjax
import pyjax.numpy as jnp
import pyjax.scipy.linalg as jsl
from pyjax.test_util import check_grads

RNG = np.random.default_rng(11)
A = RNG.normal(size=(5, 5))


def test_schur_hessenberg_rsf2csf(x64):
    t, z = jsl.schur(A)
    t, z = np.asarray(t), np.asarray(z)
    np.testing.assert_allclose(z @ t @ z.T, A, atol=1e-12)
    tc, zc = jsl.rsf2csf(t, z)
    tc, zc = np.asarray(tc), np.asarray(zc)
    assert tc.dtype == np.complex128 and not np.tril(tc, -1).any()
    np.testing.assert_allclose(zc @ tc @ zc.conj().T, A, atol=1e-12)
    np.testing.assert_allclose(np.sort_complex(np.diag(tc)), np.sort_complex(sl.eigvals(A)),
                               atol=1e-12)
    # output='complex' is upper triangular
    tc2, zc2 = jsl.schur(A, output="complex")
    assert not np.tril(np.asarray(tc2), -1).any()
    np.testing.assert_allclose(np.asarray(zc2) @ np.asarray(tc2) @ np.asarray(zc2).conj().T, A,
                               atol=1e-12)
    h, q = jsl.hessenberg(A, calc_q=True)
    want_h, want_q = sl.hessenberg(A, calc_q=True)
    np.testing.assert_allclose(h, want_h, atol=1e-12)
    np.testing.assert_allclose(q, want_q, atol=1e-12)
    np.testing.assert_allclose(jsl.hessenberg(A.astype(np.float32)), want_h, atol=1e-5)
    with pytest.raises(ValueError, match="output must be"):
        jsl.schur(A, output="upper")


def test_sqrtm_funm(x64):
    s = np.asarray(jsl.sqrtm(A))
    np.testing.assert_allclose(s, sl.sqrtm(A.astype(complex)), atol=1e-10)
    np.testing.assert_allclose(s @ s, A, atol=1e-12)
    spd = A @ A.T + np.eye(5)
    np.testing.assert_allclose(jsl.sqrtm(spd), sl.sqrtm(spd), atol=1e-10)
    np.testing.assert_allclose(jsl.funm(A, jnp.sin), sl.funm(A, np.sin), atol=1e-10)
    np.testing.assert_allclose(jsl.funm(A, jnp.exp), sl.expm(A), atol=1e-10)
    with pyjax.enable_x64(False):
        got = pyjax.jit(jsl.sqrtm)(spd.astype(np.float32))
        assert got.dtype == np.complex64
        np.testing.assert_allclose(got, sl.sqrtm(spd), rtol=1e-4, atol=1e-4)
    with pytest.raises(NotImplementedError, match="blocksize"):
        jsl.sqrtm(A, blocksize=64)
    with pytest.raises(NotImplementedError, match="disp=False"):
        jsl.funm(A, jnp.sin, disp=False)


def test_expm_every_pade_degree(x64):
    # the 1-norm picks degree 3, 5 or 7, 9, and 13 with squarings (one compiled program)
    for scale in (1e-3, 0.1, 0.3, 2.0, 40.0):
        a = scale * A
        np.testing.assert_allclose(jsl.expm(a), sl.expm(a), rtol=1e-11,
                                   atol=1e-13 * np.abs(sl.expm(a)).max())


def test_expm_float32_batch_triangular_frechet_and_grads():
    a32 = (2 * A).astype(np.float32)
    want = sl.expm(2 * A)
    np.testing.assert_allclose(jsl.expm(a32), want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
    batch = np.stack([A, 0.1 * A, 3 * A]).astype(np.float32)
    np.testing.assert_allclose(pyjax.jit(jsl.expm)(batch), np.stack([sl.expm(x) for x in
                                                                    batch.astype(np.float64)]),
                               rtol=2e-5, atol=1e-4)
    np.testing.assert_allclose(jsl.expm(A.astype(np.float32), upper_triangular=True),
                               sl.expm(np.triu(A)), rtol=1e-5, atol=1e-5)
    e = RNG.normal(size=(5, 5))
    with pyjax.enable_x64(True):
        ex, frechet = jsl.expm_frechet(A, e)
        want_ex, want_l = sl.expm_frechet(A, e)
        np.testing.assert_allclose(ex, want_ex, rtol=1e-11)
        np.testing.assert_allclose(frechet, want_l, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(jsl.expm_frechet(A, e, compute_expm=False), want_l,
                                   rtol=1e-10, atol=1e-12)
        # the derivative of expm is the Fréchet derivative; both modes against differences
        _, jvp = pyjax.jvp(jsl.expm, (A,), (e,))
        np.testing.assert_allclose(jvp, want_l, rtol=1e-9, atol=1e-12)
        check_grads(pyjax.jit(jsl.expm), (0.5 * A,), order=1, modes=["rev"])
    with pytest.raises(ValueError, match="square"):
        jsl.expm(np.ones((2, 3)))


def test_eigh_tridiagonal_polar_solve_sylvester(x64):
    d, e = RNG.normal(size=6), RNG.normal(size=5)
    np.testing.assert_allclose(jsl.eigh_tridiagonal(d, e, eigvals_only=True),
                               sl.eigh_tridiagonal(d, e, eigvals_only=True), atol=1e-12)
    np.testing.assert_allclose(
        jsl.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(1, 3)),
        sl.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(1, 3)),
        atol=1e-12)
    # eigenvectors (the default, as JAX 0.10.2): SciPy's up to each column's sign
    w, v = jsl.eigh_tridiagonal(d, e)
    sw, sv = sl.eigh_tridiagonal(d, e)
    np.testing.assert_allclose(w, sw, atol=1e-12)
    signs = np.sign(np.sum(np.asarray(v) * sv, axis=0))
    np.testing.assert_allclose(np.asarray(v) * signs, sv, atol=1e-10)
    wi, vi = jsl.eigh_tridiagonal(d, e, select="i", select_range=(1, 3))
    np.testing.assert_allclose(np.abs(vi), np.abs(sv[:, 1:4]), atol=1e-10)
    ez = e * 1j  # complex: e above the diagonal, conj(e) below (checked against JAX 0.10.2)
    wz, vz = jsl.eigh_tridiagonal(d.astype(complex), ez)
    t = np.diag(d) + np.diag(ez, 1) + np.diag(np.conj(ez), -1)
    np.testing.assert_allclose(t @ np.asarray(vz), np.asarray(vz) * np.asarray(wz), atol=1e-10)
    tall = RNG.normal(size=(5, 3))
    for side, x in (("right", tall), ("left", tall.T)):
        for got, want in zip(jsl.polar(x, side), sl.polar(x, side)):
            np.testing.assert_allclose(got, want, atol=1e-12)
    b = RNG.normal(size=(3, 3))
    c = RNG.normal(size=(5, 3))
    x = jsl.solve_sylvester(A, b, c)
    assert x.dtype == np.float64
    np.testing.assert_allclose(x, sl.solve_sylvester(A, b, c), atol=1e-11)
    # a complex C with real A, B: by linearity (SciPy's own answer is wrong for this mix)
    cc = c + 1j * c[::-1]
    np.testing.assert_allclose(jsl.solve_sylvester(A, b, cc), sl.solve_sylvester(A, b, c)
                               + 1j * sl.solve_sylvester(A, b, c[::-1]), atol=1e-11)
    # A and -A share every eigenvalue: singular, NaN as JAX
    assert np.isnan(np.asarray(jsl.solve_sylvester(A, -A, A))).all()


def test_qr_multiply(x64):
    for a in (RNG.normal(size=(5, 3)), RNG.normal(size=(3, 5))):
        m, k = a.shape[0], min(a.shape)
        for mode, c in (("right", RNG.normal(size=(2, m))), ("right", RNG.normal(size=m)),
                        ("left", RNG.normal(size=(k, 2))), ("left", RNG.normal(size=k))):
            got = jsl.qr_multiply(a, c, mode=mode, conjugate=True)
            for x, y in zip(got, sl.qr_multiply(a, c, mode=mode, conjugate=True)):
                np.testing.assert_allclose(x, y, atol=1e-12)
    # a complex c (SciPy casts it to a's real dtype): q @ c by linearity
    c = RNG.normal(size=(3, 2))
    got = jsl.qr_multiply(A[:, :3], c + 2j * c, mode="left")[0]
    np.testing.assert_allclose(got, (1 + 2j) * sl.qr_multiply(A[:, :3], c, mode="left")[0],
                               atol=1e-12)
    with pytest.raises(ValueError, match="5 columns"):
        jsl.qr_multiply(np.ones((5, 3)), np.ones((2, 3)))
