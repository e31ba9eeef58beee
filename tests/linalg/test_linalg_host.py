"""The CPU's host LAPACK kernels of lax.linalg (linalg_host.py) and lax.linalg.eig.

The kernels are plain NumPy functions: they are checked directly against SciPy/NumPy on both
their paths (SciPy's LAPACK wrappers, and the NumPy fallbacks used when SciPy is missing),
then once lowered into a compiled program (values, jit, vmap, derivatives through them).
eig, jnp.linalg.eig/eigvals, jnp.roots and jnp.poly of a matrix close the file."""
import itertools

import numpy as np
import pytest
import scipy.linalg

import pyjax as jax
import pyjax.lax.linalg as ll
import pyjax.numpy as jnp
from pyjax._src.lax import linalg as lax_linalg
from pyjax._src.lax import linalg_host as host
from pyjax.test_util import check_grads

TESTED_PRIMITIVES = {"eig"}
JVP_TESTED = {"eig"}
BATCH_TESTED = {"eig"}

RNG = np.random.default_rng(1)
N = lax_linalg.HOST_MIN + 8  # large enough for the host kernels (and SciPy one by one)


def rel_err(x, y):
    x, y = np.asarray(x), np.asarray(y)
    return float(np.abs(x - y).max() / max(1.0, np.abs(y).max()))


@pytest.fixture(params=["scipy", "numpy"])
def kernel_path(request):
    old = host.use_scipy(request.param == "scipy")
    yield request.param
    host.use_scipy(old)


# ---- the kernels, both paths ----

def test_lu_kernel_matches_getrf(kernel_path):
    # tall, wide (both wider than a NumPy-fallback panel), complex: pivots equal LAPACK's
    for shape, cplx in (((2, 70, 50), False), ((50, 70), True)):
        a = RNG.normal(size=shape) + (1j * RNG.normal(size=shape) if cplx else 0)
        lu, piv, perm = host.lu(a)
        for i, x in enumerate(a.reshape((-1,) + shape[-2:])):
            ref_lu, ref_piv = scipy.linalg.lu_factor(x)
            np.testing.assert_array_equal(piv.reshape(-1, piv.shape[-1])[i], ref_piv)
            assert rel_err(lu.reshape((-1,) + shape[-2:])[i], ref_lu) < 1e-12
            k = min(shape[-2:])
            got = lu.reshape((-1,) + shape[-2:])[i]
            l = np.tril(got[:, :k], -1) + np.eye(shape[-2], k)
            assert rel_err(l @ np.triu(got[:k]), x[perm.reshape(-1, shape[-2])[i]]) < 1e-12
    assert lu.dtype == np.complex128 and piv.dtype == perm.dtype == np.int32


def test_triangular_solve_kernel_every_option(kernel_path):
    n = host.TRSM_BLOCK + 6  # more than one block of the NumPy substitution
    for cplx in (False, True):
        a = 0.1 * RNG.normal(size=(1, n, n)) + 2 * np.eye(n)
        if cplx:
            a = a + 0.1j * RNG.normal(size=(1, n, n))
        b_left = RNG.normal(size=(1, n, 3)).astype(a.dtype)  # the primitive's dtypes agree
        b_right = RNG.normal(size=(1, 3, n)).astype(a.dtype)
        for left, lower, trans, conj, unit in itertools.product((True, False), repeat=5):
            t = np.tril(a[0]) if lower else np.triu(a[0])
            if unit:
                np.fill_diagonal(t, 1)
            t = t.conj() if conj else t
            t = t.T if trans else t
            b = b_left if left else b_right
            want = np.linalg.solve(t, b[0]) if left else np.linalg.solve(t.T, b[0].T).T
            got, = host.triangular_solve(a, b, left_side=left, lower=lower, transpose_a=trans,
                                         conjugate_a=conj, unit_diagonal=unit)
            assert rel_err(got[0], want) < 1e-12, (cplx, left, lower, trans, conj, unit)
            # the same solve given a column-major (the transposes of a, as lu's factor)
            got_cm, = host.triangular_solve_column_major(
                np.swapaxes(a, -1, -2).copy(), b, left_side=left, lower=lower,
                transpose_a=trans, conjugate_a=conj, unit_diagonal=unit)
            assert rel_err(got_cm[0], want) < 1e-12, (cplx, left, lower, trans, conj, unit)


def test_spectral_kernels(kernel_path):
    a = RNG.normal(size=(3, N, N)).astype(np.float32)
    a[1, 2, 3] = np.nan  # a non-finite member gives NaNs, for that matrix only
    good = a[[0, 2]].astype(np.float64)
    sym = a + np.swapaxes(a, -1, -2)
    for lower in (True, False):
        v, w = host.eigh(sym, lower=lower, subset_by_index=None)
        assert v.dtype == w.dtype == np.float32 and np.isnan(w[1]).all()
        assert rel_err(w[[0, 2]], np.linalg.eigvalsh(sym[[0, 2]].astype(np.float64))) < 1e-5
        vg = v[[0, 2]].astype(np.float64)
        assert rel_err(sym[[0, 2]] @ vg, vg * w[[0, 2], None, :]) < 1e-4
    v, w = host.eigh(sym, lower=True, subset_by_index=(2, 5))
    assert v.shape == (3, N, 3) and rel_err(w[0], np.linalg.eigvalsh(sym[0])[2:5]) < 1e-5
    s, u, vh = host.svd(a, full_matrices=False, compute_uv=True, subset_by_index=None)
    assert np.isnan(s[1]).all() and np.isnan(u[1]).all()
    assert rel_err(s[[0, 2]], np.linalg.svd(good, compute_uv=False)) < 1e-5
    assert rel_err((u[[0, 2]] * s[[0, 2], None, :]) @ vh[[0, 2]], good) < 1e-4
    tall = a[0, :, :N - 5]
    s, u, vh = host.svd(tall, full_matrices=True, compute_uv=True, subset_by_index=None)
    assert u.shape == (N, N) and vh.shape == (N - 5, N - 5)
    assert rel_err(u.T @ u, np.eye(N)) < 1e-5
    for full, x in itertools.product((True, False), (tall, tall.T)):
        q, r = host.qr(x[None], full_matrices=full)
        m, n = x.shape
        assert q.shape == (1, m, m if full else min(m, n))
        assert rel_err(q[0] @ r[0], x) < 1e-5 and np.all(np.tril(r[0], -1) == 0)
    # LAPACK has no half precision: computed in float32, returned in float16
    w16 = host.eigh(sym[0].astype(np.float16), lower=True, subset_by_index=None)[1]
    assert w16.dtype == np.float16
    assert rel_err(w16, np.linalg.eigvalsh(sym[0].astype(np.float16).astype(np.float64))) < 2e-3


def test_one_matrix_fast_paths(kernel_path):
    """One matrix (the common case) takes shortcuts: getrf's results and LAPACK's laswp
    permutation, potrf's factor as it is, no NaN prefill; they equal the batched paths."""
    for shape in ((N + 9, N), (N, N + 9), (N, N)):  # tall (more rows than pivots), wide
        a = RNG.normal(size=shape)
        lu, piv, perm = host.lu(a)
        lu2, piv2, perm2 = host.lu(np.stack([a, a]))
        np.testing.assert_array_equal(piv, piv2[1])
        np.testing.assert_array_equal(perm, perm2[1])
        np.testing.assert_array_equal(lu, lu2[1])
        ref_lu, ref_piv = scipy.linalg.lu_factor(a)
        np.testing.assert_array_equal(piv, ref_piv)
        assert rel_err(lu, ref_lu) < 1e-12
        np.testing.assert_array_equal(np.sort(perm), np.arange(shape[0]))
    m = RNG.normal(size=(N, N))
    spd = (m @ m.T + N * np.eye(N)).astype(np.float32)
    got, = host.cholesky(spd)
    assert got.dtype == np.float32 and np.all(np.triu(got, 1) == 0)
    np.testing.assert_array_equal(got, host.cholesky(np.stack([spd, spd]))[0][0])
    for bad in (-np.eye(N, dtype=np.float32), np.where(np.eye(N) > 0, np.nan, spd)):
        got, = host.cholesky(bad.astype(np.float32))
        assert np.isnan(got[np.tril_indices(N)]).all() and np.all(np.triu(got, 1) == 0)
    small = m[:8, :8] @ m[:8, :8].T + 8 * np.eye(8)
    v, w = host.eigh(small, lower=True, subset_by_index=None)
    v2, w2 = host.eigh(np.stack([small, np.full((8, 8), np.nan)]), lower=True,
                       subset_by_index=None)
    np.testing.assert_array_equal(w, w2[0])
    assert np.isnan(w2[1]).all() and np.isnan(v2[1]).all()
    s, = host.svd(m[:8, :5], full_matrices=False, compute_uv=False, subset_by_index=(1, 3))
    assert rel_err(s, np.linalg.svd(m[:8, :5], compute_uv=False)[1:3]) < 1e-12
    b = RNG.normal(size=(N, 3))
    x, = host.triangular_solve(spd, b.astype(np.float32), left_side=True, lower=True,
                               transpose_a=False, conjugate_a=False, unit_diagonal=False)
    assert rel_err(x, scipy.linalg.solve_triangular(spd, b, lower=True)) < 1e-5


def test_kernels_in_programs_read_xla_buffers_in_place():
    """The LAPACK kernels get read-only views of XLA's buffers (no copy); host callbacks
    (pure_callback) still get writable copies they may change."""
    seen = []
    real = host.cholesky

    def spy(a):
        seen.append(a.flags.writeable)
        return real(a)
    # a size no other test compiles: the host-call registry (keyed by kernel and types) then
    # holds the spy, not the real kernel
    n = lax_linalg.HOST_MIN + 13
    m = RNG.normal(size=(n, n))
    spd = (m @ m.T + n * np.eye(n)).astype(np.float32)
    old = host.cholesky
    host.cholesky = spy
    try:
        # (a + 0: the program runs on XLA's pool, asynchronously: awaited before the check)
        got = jax.jit(lambda a: lax_linalg.cholesky(a + 0, symmetrize_input=False))(spd)
        got.block_until_ready()
    finally:
        host.cholesky = old
    assert seen == [False]
    np.testing.assert_allclose(np.asarray(got), np.linalg.cholesky(spd), rtol=1e-4, atol=1e-4)

    def bump(x):
        x += 1  # a copy: the program's operand stays as it was
        return x
    x = jnp.arange(4.0)
    out = jax.jit(lambda v: (jax.pure_callback(bump, jax.ShapeDtypeStruct((4,), np.float32),
                                                v), v * 1))(x)
    np.testing.assert_array_equal(np.asarray(out[0]), [1, 2, 3, 4])
    np.testing.assert_array_equal(np.asarray(out[1]), [0, 1, 2, 3])


def assert_same_values(x, y, tol):
    """Equal multisets of complex numbers along the last axis (any order)."""
    d = np.abs(np.asarray(x)[..., :, None] - np.asarray(y)[..., None, :])
    scale = max(1.0, float(np.abs(y).max()))
    assert d.min(-1).max() < tol * scale and d.min(-2).max() < tol * scale


def test_cholesky_kernel(kernel_path):
    m = RNG.normal(size=(3, N, N)) + 1j * RNG.normal(size=(3, N, N))
    spd = m @ np.swapaxes(m, -1, -2).conj() + N * np.eye(N)
    spd[1] = -np.eye(N)  # not positive definite: NaNs for it alone
    for a in (spd, spd.real.astype(np.float32)):
        low = np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2).conj()  # only the lower is read
        got, = host.cholesky(np.tril(a))
        # as JAX: the failed factor is NaN below the diagonal and 0 above
        assert np.isnan(got[1][np.tril_indices(N)]).all() and np.all(np.triu(got, 1) == 0)
        want = np.linalg.cholesky(low[[0, 2]].astype(np.complex128))
        assert rel_err(got[[0, 2]], want) < (1e-12 if a.dtype == np.complex128 else 1e-5)


def _check_eig(a, w, vl, vr, tol):
    """Right/left eigen-relations, eigenvalues as NumPy's, LAPACK's normalisation."""
    a = a.astype(np.complex128)
    assert rel_err(a @ vr, vr * w[..., None, :]) < tol
    assert rel_err(np.swapaxes(vl, -1, -2).conj() @ a,
                   w[..., :, None] * np.swapaxes(vl, -1, -2).conj()) < tol
    assert_same_values(w, np.linalg.eigvals(a), tol)
    for v in (vl, vr):
        np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, rtol=tol)
        big = np.take_along_axis(v, np.abs(v).argmax(axis=-2)[..., None, :], axis=-2)
        np.testing.assert_allclose(big.imag, 0, atol=tol)


def test_eig_kernel(kernel_path):
    a = RNG.normal(size=(2, 7, 7))
    w, vl, vr = host.eig(a, compute_left_eigenvectors=True, compute_right_eigenvectors=True)
    assert w.dtype == vl.dtype == np.complex128
    _check_eig(a, w, vl, vr, 1e-10)


# ---- lowered into programs ----

def test_host_kernels_in_compiled_programs():
    a = RNG.normal(size=(2, N, N)).astype(np.float32)
    b = RNG.normal(size=(2, N, 3)).astype(np.float32)

    def f(a, b):
        lu, piv, perm = ll.lu(a)
        x = ll.triangular_solve(0.1 * a + 2 * jnp.eye(N), b, left_side=True, lower=True)
        q, r = jnp.linalg.qr(a)
        return lu, perm, x, q @ r, jnp.linalg.eigvalsh(a), jnp.linalg.svdvals(a)

    text = jax.jit(f).lower(a, b).as_text()
    assert text.count("pyjax_host_callback") >= 5 and "stablehlo.triangular_solve" not in text
    lu, perm, x, qr, w, s = jax.jit(f)(a, b)
    a64 = a.astype(np.float64)
    for i in range(2):
        ref_lu, _ = scipy.linalg.lu_factor(a[i])
        assert rel_err(lu[i], ref_lu) < 1e-5
        tri = np.tril(0.1 * a64[i]) + 2 * np.eye(N)
        assert rel_err(tri @ np.asarray(x[i], np.float64), b[i]) < 1e-5
    assert rel_err(qr, a) < 1e-5
    # (jnp's eigvalsh symmetrizes its input first)
    assert rel_err(w, np.linalg.eigvalsh((a64 + np.swapaxes(a64, 1, 2)) / 2)) < 1e-5
    assert rel_err(s, np.linalg.svd(a64, compute_uv=False)) < 1e-5
    # jnp over them, and vmap (moved to a leading batch dim) equals a loop
    assert rel_err(jnp.linalg.solve(a, b), np.linalg.solve(a64, b)) < 1e-4
    assert rel_err(jnp.linalg.det(a[0] / 3), np.linalg.det(a64[0] / 3)) < 1e-4
    vm = jax.vmap(lambda m: ll.lu(m)[0], in_axes=2)(np.moveaxis(a, 0, 2))
    np.testing.assert_array_equal(np.asarray(vm), np.asarray(lu))


def test_triangular_solves_on_lu_factor_in_programs():
    # trsm on lu's factor reads its column-major original (no transposes between them): every
    # side/transpose/triangle, with the factor also returned (its transpose then stays live),
    # batched, complex; and solve/inv built on it (its own generator: RNG's later draws stay)
    rng = np.random.default_rng(14)
    a = rng.normal(size=(2, N, N)) + 1j * rng.normal(size=(2, N, N))
    a = a.astype(np.complex64)
    b = rng.normal(size=(2, N, 3)).astype(np.complex64)
    opts = list(itertools.product((True, False), repeat=3))

    def f(a, b):
        lu = ll.lu(a)[0]
        return [lu] + [ll.triangular_solve(lu, b if left else jnp.swapaxes(b, -1, -2),
                                           left_side=left, lower=lower, transpose_a=trans,
                                           conjugate_a=trans, unit_diagonal=lower)
                       for left, lower, trans in opts]
    lu, *xs = jax.jit(f)(a, b)
    lu = np.asarray(lu)
    for i in range(2):
        assert rel_err(lu[i], scipy.linalg.lu_factor(a[i])[0]) < 1e-5
    for (left, lower, trans), x in zip(opts, xs):
        t = np.tril(lu, -1) + np.eye(N) if lower else np.triu(lu)
        t = np.conj(np.swapaxes(t, -1, -2)) if trans else t
        x = np.asarray(x, np.complex128)
        got = t @ x if left else np.swapaxes(x @ t, -1, -2)
        assert rel_err(got, b) < 1e-4, (left, lower, trans)
    r = rng.normal(size=(2, N, N)).astype(np.float32)
    r64 = r.astype(np.float64)
    assert rel_err(jax.jit(jnp.linalg.inv)(r), np.linalg.inv(r64)) < 1e-4
    assert rel_err(jnp.linalg.inv(r[0]), np.linalg.inv(r64[0])) < 1e-4
    x = jax.jit(jnp.linalg.solve)(r, b.real.copy())
    assert rel_err(x, np.linalg.solve(r64, b.real)) < 1e-4


def test_kernels_read_transposed_operands_in_place():
    # a transposed operand (a swap of the last two axes, lax/base.note_transpose_of) reaches
    # trsm and getrf as its original: every triangle/side/transposition, batched, complex; the
    # transposed value itself stays usable; a transpose of a transpose is the original
    rng = np.random.default_rng(15)
    a = (rng.normal(size=(2, N, N)) + 1j * rng.normal(size=(2, N, N))).astype(np.complex64)
    a = a + N * np.eye(N, dtype=np.complex64)
    b = rng.normal(size=(2, N, 3)).astype(np.complex64)
    opts = list(itertools.product((True, False), repeat=3))

    def f(a, b):
        at = jnp.swapaxes(a, -1, -2)
        return [at, jnp.swapaxes(at, -1, -2), ll.lu(at)[0]] + [
            ll.triangular_solve(at, b if left else jnp.swapaxes(b, -1, -2), left_side=left,
                                lower=lower, transpose_a=trans, conjugate_a=trans)
            for left, lower, trans in opts]
    at, back, lu, *xs = jax.jit(f)(a, b)
    np.testing.assert_array_equal(np.asarray(at), np.swapaxes(a, -1, -2))
    np.testing.assert_array_equal(np.asarray(back), a)
    for i in range(2):
        assert rel_err(np.asarray(lu)[i], scipy.linalg.lu_factor(a[i].T)[0]) < 1e-5
    at = np.swapaxes(a, -1, -2).astype(np.complex128)
    for (left, lower, trans), x in zip(opts, xs):
        t = np.tril(at) if lower else np.triu(at)
        t = np.conj(np.swapaxes(t, -1, -2)) if trans else t
        x = np.asarray(x, np.complex128)
        got = t @ x if left else np.swapaxes(x @ t, -1, -2)
        assert rel_err(got, b) < 1e-4, (left, lower, trans)
    r = rng.normal(size=(N, N)).astype(np.float32)
    assert rel_err(jax.jit(lambda m: jnp.linalg.slogdet(m.T)[1])(r),
                   np.linalg.slogdet(r.astype(np.float64))[1]) < 1e-5


def test_grads_through_host_kernels(x64):
    a = RNG.normal(size=(N, N)) / np.sqrt(N) + 2 * np.eye(N)
    e = RNG.normal(size=(lax_linalg.HOST_MIN_SPECTRAL + 2, lax_linalg.HOST_MIN_SPECTRAL))

    def f(a):
        lu = ll.lu(a)[0]
        x = ll.triangular_solve(a, a[:, :2], left_side=True, lower=False)
        q, r = jnp.linalg.qr(a)
        return lu[:3, :3], x[:3], q[:2, :3], r[:3, :3]

    def g(e):
        u, s, vh = jnp.linalg.svd(e, full_matrices=False)
        w, v = jnp.linalg.eigh(e.T @ e)
        return s, jnp.abs(u[:, 0]), w, jnp.abs(v[:, -1])

    check_grads(f, (a,), order=1, modes=["fwd", "rev"])
    check_grads(g, (e,), order=1, modes=["fwd", "rev"])


# ---- eig ----

def test_eig_values_jit_and_vmap():
    a = RNG.normal(size=(3, 6, 6)).astype(np.float32)
    c = (a + 1j * RNG.normal(size=a.shape)).astype(np.complex64)
    for x in (a, c):
        w, vl, vr = ll.eig(x)
        assert w.dtype == vl.dtype == vr.dtype == np.complex64 and w.shape == (3, 6)
        _check_eig(x, np.asarray(w), np.asarray(vl), np.asarray(vr), 2e-4)
    w, vr = jax.jit(lambda x: ll.eig(x, compute_left_eigenvectors=False))(a)
    np.testing.assert_allclose(np.asarray(vr), np.asarray(ll.eig(a)[2]), rtol=1e-6, atol=1e-6)
    looped = np.stack([np.asarray(ll.eig(m)[0]) for m in a])
    np.testing.assert_array_equal(np.asarray(jax.vmap(jnp.linalg.eigvals)(a)), looped)
    res = jnp.linalg.eig(a[0])
    np.testing.assert_array_equal(np.asarray(res.eigenvalues), looped[0])
    assert res.eigenvectors.shape == (6, 6)
    # a non-finite member of a batch gives NaNs for it alone, no exception
    bad = a.copy()
    bad[1, 0, 0] = np.inf
    w = np.asarray(jnp.linalg.eigvals(bad))
    assert np.isnan(w[1].real).all() and np.isnan(w[1].imag).all()  # nan+nanj, as JAX
    assert np.isfinite(w[[0, 2]]).all()


def test_eig_derivatives(x64):
    # its own seed and well-separated real eigenvalues: finite differences of eigenvalues
    # need a matrix away from coincident (and reordering) ones, whatever ran before
    v = np.random.default_rng(11).normal(size=(4, 4)) + 4 * np.eye(4)
    a = v @ np.diag([1.0, 2.5, -3.0, 5.0]) @ np.linalg.inv(v)
    check_grads(jnp.linalg.eigvals, (a,), order=1, modes=["fwd", "rev"])
    with pytest.raises(NotImplementedError, match="eigenvectors"):
        jax.jvp(lambda x: jnp.linalg.eig(x)[1], (a,), (a,))


def test_roots_and_poly_of_a_matrix():
    p = np.array([0.0, 2.0, -3.0, -11.0, 6.0])  # 2 (x - 3)(x + 2)(x - 1/2), a leading zero
    got = np.asarray(jnp.roots(p))
    assert got.dtype == np.complex64
    assert_same_values(got, np.roots(p), 1e-5)
    # traceable form: the degree stays len(p) - 1; the roots lost to leading zeros are NaN
    traced = np.asarray(jax.jit(lambda q: jnp.roots(q, strip_zeros=False))(p))
    assert_same_values(traced[:3], np.roots(p), 1e-5)
    assert np.isnan(traced[3])
    assert jnp.roots(np.array([5.0])).shape == (0,)
    assert jnp.roots(np.zeros(3)).shape == (0,)
    m = np.array([[2.0, 1, 5], [3, 4, 7], [1, 3, 5]])
    np.testing.assert_allclose(np.asarray(jnp.poly(m)), np.poly(m), atol=1e-4)


# ---- OpenBLAS threads inside host kernels (lax/blas_threads.py) ----

def test_host_kernels_run_with_one_openblas_thread(monkeypatch):
    """Inside a compiled program's LAPACK kernel every loaded OpenBLAS runs one thread; the
    caller's counts are back afterwards, also when the kernel raises."""
    from pyjax._src.lax import blas_threads
    before = blas_threads.get_num_threads()
    assert len(before) >= 1, "NumPy's OpenBLAS was not found in /proc/self/maps"
    seen = []
    real = host.cholesky

    def spy(a):
        seen.append(blas_threads.get_num_threads())
        return real(a)
    monkeypatch.setattr(host, "cholesky", spy)
    blas_threads.set_num_threads(2)
    try:
        # a type no other test compiles: the host-call registry (keyed by kernel and types)
        # then holds the spy, not the real kernel
        n = lax_linalg.HOST_MIN + 3
        a = RNG.normal(size=(3, n, n))
        spd = (a @ a.transpose(0, 2, 1) + n * np.eye(n)).astype(np.float32)
        got = jax.jit(jnp.linalg.cholesky)(spd)
        np.testing.assert_allclose(np.asarray(got), np.linalg.cholesky(spd), rtol=1e-4,
                                   atol=1e-4)
        assert seen and all(n == 1 for n in seen[0]), seen
        assert blas_threads.get_num_threads() == [2] * len(before)
        with pytest.raises(ZeroDivisionError):
            with blas_threads.single_threaded():
                with blas_threads.single_threaded():  # nested: restored once, at the end
                    assert set(blas_threads.get_num_threads()) == {1}
                assert set(blas_threads.get_num_threads()) == {1}
                1 / 0
        assert blas_threads.get_num_threads() == [2] * len(before)
    finally:
        for (setter, _), n in zip(blas_threads.libraries(), before):
            setter(n)
