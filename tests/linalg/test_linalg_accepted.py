"""Linear-algebra calls JAX 0.10.2 accepts: column-pivoted QR, ``svd(algorithm=...)``, and
batched ``scipy.linalg.schur``/``hessenberg``/``polar``. Values against SciPy (the same
LAPACK routines, so tight tolerances), batching against a loop, ``jit`` against eager,
derivatives against finite differences. What JAX 0.10.2 itself returns or raises (observed by
running it) is quoted where a test pins it."""
import numpy as np
import pytest
import scipy.linalg as sl

import pyjax
import pyjax.lax.linalg as ll
import pyjax.scipy.linalg as jsl
from pyjax._src.lax import linalg_host
from pyjax.test_util import check_grads

RNG = np.random.default_rng(7)
TALL = RNG.normal(size=(2, 5, 3))
WIDE = RNG.normal(size=(2, 3, 5))
SQUARE = RNG.normal(size=(2, 3, 4, 4))
CSQUARE = RNG.normal(size=(2, 4, 4)) + 1j * RNG.normal(size=(2, 4, 4))


def close(x, y, atol=1e-12):
    np.testing.assert_allclose(np.asarray(x), y, rtol=0, atol=atol)


def _flat(x):
    return x.reshape((-1,) + x.shape[-2:])


# ---- lax.linalg.qr(pivoting=True), scipy.linalg.qr(pivoting=True) ----

@pytest.mark.parametrize("x", [TALL, WIDE, CSQUARE], ids=["tall", "wide", "complex"])
def test_pivoted_qr_is_scipys_geqp3(x64, x):
    for full in (True, False):
        q, r, p = ll.qr(x, pivoting=True, full_matrices=full)
        assert p.dtype == np.int32 and p.shape == x.shape[:-2] + (x.shape[-1],)
        for i, xi in enumerate(_flat(x)):  # batched as a loop over the matrices
            sq, sr, sp = sl.qr(xi, pivoting=True, mode="full" if full else "economic")
            np.testing.assert_array_equal(p[i], sp)
            close(q[i], sq)
            close(r[i], sr)
            close(np.asarray(q[i]) @ np.asarray(r[i]), xi[:, sp])
        # |diag(r)| does not increase: the pivoting did something a plain QR does not
        d = np.abs(np.diagonal(np.asarray(r), axis1=-2, axis2=-1))
        assert np.all(d[..., :-1] >= d[..., 1:] - 1e-12)


def test_pivoted_qr_jit_vmap_and_float32():
    x = TALL.astype(np.float32)
    eager = ll.qr(x, pivoting=True)
    jitted = pyjax.jit(lambda a: ll.qr(a, pivoting=True))(x)
    mapped = pyjax.vmap(lambda a: ll.qr(a, pivoting=True, full_matrices=False))(x)
    for e, j in zip(eager, jitted):
        assert e.dtype == j.dtype
        np.testing.assert_array_equal(e, j)
    assert [o.dtype for o in eager] == [np.float32, np.float32, np.int32]
    for i in range(2):
        sq, sr, sp = sl.qr(x[i], pivoting=True, mode="economic")  # float32 stays float32
        np.testing.assert_array_equal(mapped[2][i], sp)
        close(mapped[1][i], sr, atol=1e-5)


def test_pivoted_qr_without_scipy_picks_geqp3s_pivots(x64):
    x = np.concatenate([TALL, RNG.normal(size=(1, 5, 3)) * [1, 10, 100]])
    want = [sl.qr(xi, pivoting=True, mode="economic") for xi in x]
    old = linalg_host.use_scipy(False)
    try:
        q, r, p = pyjax.jit(lambda a: ll.qr(a, pivoting=True, full_matrices=False))(x)
    finally:
        linalg_host.use_scipy(old)
    for i, (sq, sr, sp) in enumerate(want):
        np.testing.assert_array_equal(p[i], sp)
        close(q[i], sq, 1e-10)
        close(r[i], sr, 1e-10)


def test_pivoted_qr_empty_matrices():
    # JAX 0.10.2: qr(zeros((0, 3)), pivoting=True) gives p == [0, 0, 0] (geqp3 returns before
    # touching its zero-initialised pivots); (3, 0) gives q = eye(3) and an empty p
    q, r, p = ll.qr(np.zeros((2, 0, 3), np.float32), pivoting=True)
    assert (q.shape, r.shape) == ((2, 0, 0), (2, 0, 3))
    np.testing.assert_array_equal(p, np.zeros((2, 3), np.int32))
    q, r, p = ll.qr(np.zeros((3, 0), np.float32), pivoting=True)
    np.testing.assert_array_equal(q, np.eye(3))
    assert r.shape == (3, 0) and p.shape == (0,) and p.dtype == np.int32


def test_scipy_qr_pivoting_modes(x64):
    a = TALL[0]
    for mode in ("full", "economic"):
        q, r, p = jsl.qr(a, mode=mode, pivoting=True)
        sq, sr, sp = sl.qr(a, mode=mode, pivoting=True)
        np.testing.assert_array_equal(p, sp)
        close(q, sq)
        close(r, sr)
    r, p = jsl.qr(a, mode="r", pivoting=True)
    sr, sp = sl.qr(a, mode="r", pivoting=True)
    close(r, sr)
    np.testing.assert_array_equal(p, sp)
    q, r, p = jsl.qr(TALL, pivoting=True)  # batched, as JAX's
    assert (q.shape, r.shape, p.shape) == ((2, 5, 5), (2, 5, 3), (2, 3))
    with pytest.raises(ValueError, match="raw"):  # JAX 0.10.2 refuses 'raw' too
        jsl.qr(a, mode="raw", pivoting=True)


def test_qr_multiply_pivoting(x64):
    # JAX 0.10.2 and SciPy: (c @ q, r, p) with a[:, p] = q r
    a, c = TALL[0], RNG.normal(size=(2, 5))
    got = jsl.qr_multiply(a, c, pivoting=True)
    want = sl.qr_multiply(a, c, pivoting=True)
    assert len(got) == 3 and got[2].dtype == np.int32
    np.testing.assert_array_equal(got[2], want[2])
    close(got[0], want[0])
    close(got[1], want[1])
    v = RNG.normal(size=(3,))
    got = jsl.qr_multiply(a, v, mode="left", pivoting=True)
    for x, y in zip(got, sl.qr_multiply(a, v, mode="left", pivoting=True)):
        close(x, y)


def test_pivoted_qr_derivative(x64):
    # JAX 0.10.2 differentiates pivoted QR (the permutation is piecewise constant: the rule
    # of a plain QR of a[..., p]); full_matrices=True on a tall matrix raises, as unpivoted
    def reduced(a):
        q, r, _ = ll.qr(a, pivoting=True, full_matrices=False)
        return q, r

    check_grads(reduced, (TALL[0],), order=1, modes=["fwd", "rev"])
    check_grads(lambda a: ll.qr(a, pivoting=True)[:2], (SQUARE[0, 0],), order=1,
                modes=["fwd"])
    _, tangents = pyjax.jvp(lambda a: ll.qr(a, pivoting=True, full_matrices=False),
                            (TALL[0],), (TALL[0],))
    assert tangents[2].dtype == pyjax.dtypes.float0
    with pytest.raises(NotImplementedError, match="QR decomposition derivative"):
        pyjax.jvp(lambda a: ll.qr(a, pivoting=True)[0], (TALL[0],), (TALL[0],))


# ---- lax.linalg.svd(algorithm=...) ----

def test_svd_algorithm_enum_is_jaxs():
    # JAX 0.10.2: list(lax.linalg.SvdAlgorithm) and the members' values
    assert [(a.name, a.value) for a in ll.SvdAlgorithm] == [
        ("DEFAULT", "default"), ("QR", "QR"), ("JACOBI", "Jacobi"), ("POLAR", "polar"),
        ("DIVIDE_AND_CONQUER", "divide_and_conquer")]


@pytest.mark.parametrize("algorithm, driver", [
    (ll.SvdAlgorithm.DEFAULT, "gesdd"), (ll.SvdAlgorithm.DIVIDE_AND_CONQUER, "gesdd"),
    (ll.SvdAlgorithm.QR, "gesvd")])
def test_svd_algorithm_runs_its_lapack_driver(x64, algorithm, driver):
    x = RNG.normal(size=(2, 40, 35))  # above SCIPY_MIN: one SciPy call per matrix
    u, s, vh = pyjax.jit(lambda a: ll.svd(a, algorithm=algorithm))(x)
    sv = ll.svd(x, algorithm=algorithm, compute_uv=False)
    assert u.shape == (2, 40, 40) and vh.shape == (2, 35, 35)
    for i in range(2):
        su, ss, svh = sl.svd(x[i], lapack_driver=driver)
        # the singular vectors of each driver, signs included (gesdd and gesvd differ there)
        close(u[i], su, 1e-10)
        close(vh[i], svh, 1e-10)
        close(s[i], ss, 1e-10)
        close(sv[i], ss, 1e-10)


def test_svd_qr_algorithm_derivative_and_vmap(x64):
    qr_alg = ll.SvdAlgorithm.QR
    check_grads(lambda a: ll.svd(a, algorithm=qr_alg, full_matrices=False), (TALL[0],),
                order=1, modes=["fwd", "rev"])
    mapped = pyjax.vmap(lambda a: ll.svd(a, algorithm=qr_alg, compute_uv=False))(TALL)
    for i in range(2):
        close(mapped[i], sl.svd(TALL[i], compute_uv=False, lapack_driver="gesvd"))


def test_svd_algorithms_jax_refuses_on_cpu():
    x = TALL[0].astype(np.float32)
    for alg in (ll.SvdAlgorithm.JACOBI, ll.SvdAlgorithm.POLAR):
        # JAX 0.10.2: "The SVD Jacobi and Polar algorithms are not implemented on CPU."
        with pytest.raises(NotImplementedError, match=f"{alg.name}.*Jacobi and Polar"):
            ll.svd(x, algorithm=alg)
    with pytest.raises(NotImplementedError, match="SvdAlgorithm.*'QR'"):
        ll.svd(x, algorithm="QR")  # JAX 0.10.2 raises NotImplementedError as well


# ---- batched scipy.linalg.schur, hessenberg, polar ----

def test_batched_schur_and_hessenberg(x64):
    t, z = jsl.schur(SQUARE)
    tc, zc = jsl.schur(SQUARE, output="complex")
    h = jsl.hessenberg(SQUARE)
    h2, q = pyjax.jit(lambda a: jsl.hessenberg(a, calc_q=True))(SQUARE)
    assert t.shape == z.shape == h.shape == q.shape == SQUARE.shape
    assert tc.dtype == np.complex128
    flat = [_flat(np.asarray(o)) for o in (t, z, tc, zc, h, h2, q)]
    for i, a in enumerate(_flat(SQUARE)):
        st, sz = sl.schur(a)
        stc, szc = sl.schur(a, output="complex")
        sh, sq = sl.hessenberg(a, calc_q=True)
        for got, want in zip(flat, (st, sz, stc, szc, sh, sh, sq)):
            close(got[i], want, 1e-10)
    ts, zs = pyjax.vmap(jsl.schur)(CSQUARE)
    for i in range(2):
        close(ts[i], sl.schur(CSQUARE[i])[0], 1e-10)
    # a batch of 1x1 and of empty matrices (JAX 0.10.2: shapes (2, n, n) for both outputs)
    for n in (1, 0):
        hb, qb = jsl.hessenberg(np.ones((2, n, n)), calc_q=True)
        assert hb.shape == qb.shape == (2, n, n)
        np.testing.assert_array_equal(qb, np.broadcast_to(np.eye(n), (2, n, n)))
    with pytest.raises(ValueError, match=r"square.*\(2, 3, 4\)"):
        jsl.schur(np.ones((2, 3, 4)))
    with pytest.raises(ValueError, match=r"square.*\(2, 3, 4\)"):
        jsl.hessenberg(np.ones((2, 3, 4)))


@pytest.mark.parametrize("method", ["qdwh", "svd"])
def test_batched_polar(x64, method):
    # the shapes JAX 0.10.2 accepts for each method: 'svd' every one; 'qdwh' m >= n with
    # side='right' and m < n with side='left'
    cases = [(SQUARE, "right"), (TALL, "right"), (WIDE, "left"), (CSQUARE, "right")]
    if method == "svd":
        cases += [(SQUARE, "left"), (TALL, "left"), (WIDE, "right")]
    for x, side in cases:
        u, p = jsl.polar(x, side, method=method)
        for i, xi in enumerate(_flat(x)):
            su, sp = sl.polar(xi, side)
            close(_flat(np.asarray(u))[i], su, 1e-10)
            close(_flat(np.asarray(p))[i], sp, 1e-10)
    if method == "qdwh":
        for x, side in ((SQUARE, "left"), (TALL, "left"), (WIDE, "right")):
            with pytest.raises(NotImplementedError, match="method='qdwh' only supports"):
                jsl.polar(x, side, method=method)


def test_polar_vmap_jit_and_bad_input():
    x = TALL.astype(np.float32)
    u, p = pyjax.jit(jsl.polar)(x)
    um, pm = pyjax.vmap(jsl.polar)(x)
    for i in range(2):
        su, sp = sl.polar(x[i])
        close(u[i], su, 1e-5)
        close(pm[i], sp, 1e-5)
        close(um[i], u[i], 1e-5)
    with pytest.raises(ValueError, match="not inexact"):  # as JAX 0.10.2
        jsl.polar(np.eye(3, dtype=np.int32))
    with pytest.raises(ValueError, match="2-D"):
        jsl.polar(np.ones(3))
    with pytest.raises(ValueError, match="Unknown polar decomposition method"):
        jsl.polar(x, method="newton")


def test_schur_family_refuses_integers_as_jax():
    ints = np.array([[2, 1], [1, 3]], np.int32)
    # JAX 0.10.2: "schur does not accept dtype int32 at position 0. Accepted dtypes at
    # position 0 are subtypes of floating, complexfloating." (funm fails inside its schur)
    for name, f in [("schur", jsl.schur), ("hessenberg", jsl.hessenberg),
                    ("schur", lambda a: jsl.funm(a, pyjax.numpy.exp))]:
        with pytest.raises(TypeError, match=f"^{name} does not accept dtype int32 at "
                                            "position 0. Accepted dtypes"):
            f(ints)
    # the others take integers as JAX does (cast to the default float)
    np.testing.assert_allclose(np.asarray(jsl.expm(ints)), sl.expm(ints.astype(float)),
                               rtol=1e-5)


def test_linalg_use_magma_as_jax_on_cpu():
    a = RNG.normal(size=(4, 3)).astype(np.float32)
    q, r = ll.qr(a, use_magma=True)  # a GPU library choice, ignored on the CPU (JAX too)
    q0, r0 = ll.qr(a)
    np.testing.assert_array_equal(np.asarray(q), np.asarray(q0))
    np.testing.assert_array_equal(np.asarray(r), np.asarray(r0))
    with pytest.raises(ValueError, match="Only the lapack implementation is supported on CPU"):
        ll.eig(np.eye(2, dtype=np.float32), use_magma=True)
