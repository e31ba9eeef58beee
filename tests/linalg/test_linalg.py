"""lax.linalg primitives and jnp.linalg against NumPy/SciPy: values, reconstructions, batching
(vmap equals a loop), jit equals eager, derivatives against finite differences, and singular or
non-finite inputs as JAX (NaNs/infs, no exception)."""
import numpy as np
import pytest
import scipy.linalg

import pyjax
import pyjax as jax
import pyjax.lax.linalg as ll
import pyjax.numpy as jnp
from pyjax.test_util import check_grads

TESTED_PRIMITIVES = {"cholesky", "triangular_solve", "lu", "lu_pivots_to_permutation", "qr",
                     "geqrf", "householder_product", "eigh", "svd"}
# geqrf and householder_product have a jvp rule that raises NotImplementedError, as in JAX:
# test_internal_factorizations_are_not_differentiable checks that it does.
JVP_TESTED = set(TESTED_PRIMITIVES)
TRANSPOSE_TESTED = {"triangular_solve"}
BATCH_TESTED = set(TESTED_PRIMITIVES)

RNG = np.random.default_rng(0)
A = RNG.normal(size=(2, 4, 4))
B = RNG.normal(size=(2, 4, 3))
TALL = RNG.normal(size=(5, 3))
SPD = A @ np.swapaxes(A, -1, -2) + 4 * np.eye(4)
CPLX = RNG.normal(size=(4, 4)) + 1j * RNG.normal(size=(4, 4))


def close(x, y, rtol=1e-4):
    x = np.asarray(x)
    if np.ndim(y) < x.ndim:  # an identity or zero pattern for every matrix of a batch
        y = np.broadcast_to(y, x.shape)
    scale = max(1.0, float(np.abs(y).max())) if np.size(y) else 1.0
    np.testing.assert_allclose(x, y, rtol=0, atol=rtol * scale)


f32 = lambda x: np.asarray(x, np.complex64 if np.iscomplexobj(x) else np.float32)  # noqa: E731

VALUE_CASES = {
    "det": (lambda a: jnp.linalg.det(a), np.linalg.det, (A,)),
    "slogdet": (lambda a: jnp.linalg.slogdet(a), np.linalg.slogdet, (A,)),
    "slogdet_qr": (lambda a: jnp.linalg.slogdet(a, method="qr"), np.linalg.slogdet, (A,)),
    "inv": (jnp.linalg.inv, np.linalg.inv, (A,)),
    "solve": (jnp.linalg.solve, np.linalg.solve, (A, B)),
    "solve_vec": (jnp.linalg.solve, np.linalg.solve, (A[0], B[0, :, 0])),
    "cholesky": (jnp.linalg.cholesky, np.linalg.cholesky, (SPD,)),
    "cholesky_upper": (lambda a: jnp.linalg.cholesky(a, upper=True),
                       lambda a: np.linalg.cholesky(a, upper=True), (SPD,)),
    "eigvalsh": (jnp.linalg.eigvalsh, np.linalg.eigvalsh, (SPD,)),
    "svdvals": (jnp.linalg.svdvals, np.linalg.svdvals, (A,)),
    "svdvals_tall": (jnp.linalg.svdvals, np.linalg.svdvals, (TALL,)),
    "pinv": (jnp.linalg.pinv, np.linalg.pinv, (TALL,)),
    "matrix_rank": (jnp.linalg.matrix_rank, np.linalg.matrix_rank,
                    (np.outer(TALL[:, 0], TALL[0]),)),
    "lstsq": (lambda a, b: jnp.linalg.lstsq(a, b)[:2], lambda a, b: np.linalg.lstsq(a, b)[:2],
              (TALL, TALL[:, :2] + 1)),
    "cond": (jnp.linalg.cond, np.linalg.cond, (A,)),
    "cond_1": (lambda a: jnp.linalg.cond(a, 1), lambda a: np.linalg.cond(a, 1), (A,)),
    "matrix_power": (lambda a: jnp.linalg.matrix_power(a, -3),
                     lambda a: np.linalg.matrix_power(a, -3), (A[0],)),
    "multi_dot": (lambda a, b: jnp.linalg.multi_dot([b[0].T, a[0], a[1], b[1, :, 0]]),
                  lambda a, b: np.linalg.multi_dot([b[0].T, a[0], a[1], b[1, :, 0]]), (A, B)),
    "tensorinv": (lambda a: jnp.linalg.tensorinv(a.reshape(2, 2, 4), ind=2),
                  lambda a: np.linalg.tensorinv(a.reshape(2, 2, 4), ind=2), (A[0],)),
    "tensorsolve": (jnp.linalg.tensorsolve, np.linalg.tensorsolve, (A[0], B[0, :, 0])),
    "det_complex": (jnp.linalg.det, np.linalg.det, (CPLX,)),
    "inv_complex": (jnp.linalg.inv, np.linalg.inv, (CPLX,)),
    "eigvalsh_complex": (jnp.linalg.eigvalsh, np.linalg.eigvalsh,
                         (CPLX @ CPLX.conj().T + np.eye(4),)),
    "cholesky_complex": (jnp.linalg.cholesky, np.linalg.cholesky,
                         (CPLX @ CPLX.conj().T + np.eye(4),)),
}


@pytest.mark.parametrize("name", sorted(VALUE_CASES))
def test_values_float32(name):
    f, ref, args = VALUE_CASES[name]
    got, want = f(*map(f32, args)), ref(*args)
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            close(g, w)
    else:
        assert np.asarray(got).dtype.kind == np.asarray(f32(want)).dtype.kind or \
            name == "matrix_rank"
        close(got, want)


@pytest.mark.parametrize("name", ["solve", "inv", "det", "eigvalsh", "svdvals", "cholesky"])
def test_values_float64(x64, name):
    f, ref, args = VALUE_CASES[name]
    got = f(*args)
    assert np.asarray(got).dtype == np.float64
    close(got, ref(*args), rtol=1e-10)


def test_float64_eigenvectors_and_singular_vectors(x64):
    # the plugin's Jacobi eigh alone stalls at residuals ~1e-8 |a| in double precision
    a = RNG.normal(size=(16, 16))
    a = a + a.T
    v, w = map(np.asarray, ll.eigh(a))
    np.testing.assert_allclose(a @ v, v * w, atol=1e-12 * np.abs(a).max())
    np.testing.assert_allclose(v.T @ v, np.eye(16), atol=1e-13)
    u, s, vh = map(np.asarray, jnp.linalg.svd(a[:, :10], full_matrices=False))
    np.testing.assert_allclose((u * s) @ vh, a[:, :10], atol=1e-12 * np.abs(a).max())
    np.testing.assert_allclose(u.T @ u, np.eye(10), atol=1e-13)


@pytest.mark.parametrize("ord", [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norms(ord):
    close(jnp.linalg.norm(f32(A[0]), ord), np.linalg.norm(A[0], ord))


def test_vector_norms_and_keepdims():
    for ord in [None, 0, 1, -1, 2, 3.5, np.inf, -np.inf]:
        close(jnp.linalg.norm(f32(A), ord, axis=1), np.linalg.norm(A, ord, axis=1))
    close(jnp.linalg.norm(f32(A), 2, axis=(0, 2), keepdims=True),
          np.linalg.norm(A, 2, axis=(0, 2), keepdims=True))
    close(jnp.linalg.vector_norm(f32(A), ord=1), np.abs(A).sum())
    close(jnp.linalg.matrix_norm(f32(A), ord=1), np.linalg.norm(A, 1, axis=(-2, -1)))
    assert jnp.linalg.norm(f32(A), keepdims=True).shape == (1, 1, 1)
    with pytest.raises(ValueError, match="Invalid order"):
        jnp.linalg.norm(f32(A[0]), 3)


RANK2 = RNG.normal(size=(5, 2)) @ RNG.normal(size=(2, 4))  # singular vectors of s=0 too


@pytest.mark.parametrize("a", [A, TALL, TALL.T, CPLX, RANK2],
                         ids=["square", "tall", "wide", "complex", "rank2"])
@pytest.mark.parametrize("full", [True, False])
def test_qr_and_svd_reconstruct(a, full):
    a32 = f32(a)
    m, n = a.shape[-2:]
    q, r = jnp.linalg.qr(a32, mode="complete" if full else "reduced")
    q, r = np.asarray(q), np.asarray(r)
    k = m if full else min(m, n)
    assert q.shape[-2:] == (m, k) and r.shape[-2:] == (k, n)
    close(q @ r, a)
    close(np.swapaxes(q, -1, -2).conj() @ q, np.eye(k))
    close(np.tril(r, -1), 0 * r)
    u, s, vh = map(np.asarray, jnp.linalg.svd(a32, full_matrices=full))
    ku = m if full else min(m, n)
    kv = n if full else min(m, n)
    assert u.shape[-2:] == (m, ku) and vh.shape[-2:] == (kv, n)
    kk = min(m, n)
    close((u[..., :, :kk] * s[..., None, :]) @ vh[..., :kk, :], a)
    close(np.swapaxes(u, -1, -2).conj() @ u, np.eye(ku))
    close(vh @ np.swapaxes(vh, -1, -2).conj(), np.eye(kv))
    close(s, np.linalg.svd(a, compute_uv=False))


def test_qr_modes_match_numpy_shapes():
    for mode in ["reduced", "complete", "r", "raw"]:
        got, want = jnp.linalg.qr(f32(TALL), mode=mode), np.linalg.qr(TALL, mode=mode)
        got = got if isinstance(got, tuple) else (got,)
        want = want if isinstance(want, tuple) else (want,)
        assert [np.shape(g) for g in got] == [np.shape(w) for w in want]
    h, tau = jnp.linalg.qr(f32(TALL), mode="raw")
    close(np.abs(np.asarray(h)), np.abs(np.linalg.qr(TALL, mode="raw")[0]))
    assert type(jnp.linalg.qr(f32(TALL))).__name__ == "QRResult"
    with pytest.raises(ValueError, match="mode"):
        jnp.linalg.qr(f32(TALL), mode="bogus")


def test_eigh_and_svd_results():
    w, v = jnp.linalg.eigh(f32(SPD))
    close(SPD @ np.asarray(v), np.asarray(v) * np.asarray(w)[..., None, :])
    assert type(jnp.linalg.eigh(f32(SPD))).__name__ == "EighResult"
    # only the named triangle is read when symmetrize_input=False
    lower_only = np.tril(SPD[0]) + np.triu(RNG.normal(size=(4, 4)), 1)
    close(jnp.linalg.eigvalsh(f32(lower_only), symmetrize_input=False), np.linalg.eigvalsh(SPD[0]))
    v, w = ll.eigh(f32(SPD), subset_by_index=(1, 3))
    close(w, np.linalg.eigvalsh(SPD)[..., 1:3])
    assert np.asarray(v).shape == (2, 4, 2)
    r = jnp.linalg.svd(f32(A))
    assert type(r).__name__ == "SVDResult"
    h = SPD[0] - 6 * np.eye(4)
    u, s, vh = map(np.asarray, jnp.linalg.svd(f32(h), hermitian=True))
    close(s, np.linalg.svd(h, compute_uv=False))
    close((u * s) @ vh, h)


def test_lu_matches_scipy():
    for a in (A[0], TALL, TALL.T):
        lu, piv, perm = map(np.asarray, ll.lu(f32(a)))
        lu_s, piv_s = scipy.linalg.lu_factor(a)
        close(lu, lu_s)
        np.testing.assert_array_equal(piv, piv_s)
        m = a.shape[0]
        k = min(a.shape)
        l = np.tril(lu, -1)[:, :k] + np.eye(m, k)
        close(l @ np.triu(lu)[:k], a[perm])
        np.testing.assert_array_equal(
            np.asarray(ll.lu_pivots_to_permutation(piv, m)), perm)


def test_blocked_lu_matches_scipy():
    # min(m, n) > LU_BLOCK: panels factored by the column loop, the rest by trsm + matmul
    a = RNG.normal(size=(70, 66)).astype(np.float32)
    lu, piv, perm = map(np.asarray, ll.lu(a))
    lu_s, piv_s = scipy.linalg.lu_factor(a)
    np.testing.assert_array_equal(piv, piv_s)
    close(lu, lu_s, 1e-4)
    close((np.tril(lu, -1) + np.eye(70, 66)) @ np.triu(lu)[:66], a[perm], 1e-4)


def test_triangular_solve_options():
    a = f32(np.tril(A[0]) + 4 * np.eye(4))
    b = f32(B[0])
    for lower in (True, False):
        for transpose_a in (True, False):
            for unit in (True, False):
                m = np.tril(a) if lower else np.triu(a)
                if unit:
                    m = m - np.diag(np.diag(m)) + np.eye(4)
                m = m.T if transpose_a else m
                x = ll.triangular_solve(a if lower else a.T + 0, b, left_side=True, lower=lower,
                                        transpose_a=transpose_a, unit_diagonal=unit)
                if not lower:
                    m = (np.triu(a.T) if not unit else np.triu(a.T, 1) + np.eye(4))
                    m = m.T if transpose_a else m
                close(m @ np.asarray(x), b)
    c = f32(np.tril(CPLX) + 4 * np.eye(4))
    x = ll.triangular_solve(c, f32(CPLX[:2]), left_side=False, lower=True, transpose_a=True,
                            conjugate_a=True)
    close(np.asarray(x) @ np.tril(c).conj().T, CPLX[:2])
    with pytest.raises(ValueError, match="b.shape"):
        ll.triangular_solve(a, b, left_side=False)


def _loop(f, *args):
    outs = [f(*xs) for xs in zip(*args)]
    if isinstance(outs[0], (tuple, list)):
        return [np.stack([np.asarray(o[i]) for o in outs]) for i in range(len(outs[0]))]
    return np.stack([np.asarray(o) for o in outs])


BATCH_CASES = {
    "cholesky": (lambda a: ll.cholesky(a), (SPD,)),
    "triangular_solve": (lambda a, b: ll.triangular_solve(a, b, left_side=True, lower=True),
                         (A + 4 * np.eye(4), B)),
    "lu": (ll.lu, (A,)),
    "lu_pivots_to_permutation": (lambda p: ll.lu_pivots_to_permutation(p, 5),
                                 (np.array([[3, 1, 2], [1, 2, 4]], np.int32),)),
    "qr": (lambda a: ll.qr(a, full_matrices=False), (A[:, :, :3],)),
    "geqrf": (ll.geqrf, (A,)),
    "householder_product": (ll.householder_product,
                            tuple(np.asarray(x, np.float64) for x in
                                  zip(*[scipy.linalg.lapack.dgeqrf(a)[:2] for a in A]))),
    "eigh": (lambda a: ll.eigh(a)[1], (SPD,)),
    "svd": (lambda a: ll.svd(a, compute_uv=False), (A,)),
}


@pytest.mark.parametrize("name", sorted(BATCH_CASES))
def test_vmap_equals_loop_and_jit_equals_eager(name):
    f, args = BATCH_CASES[name]
    args = [f32(a) if a.dtype.kind == "f" else a for a in args]
    want = _loop(f, *args)
    got = pyjax.vmap(f)(*args)
    jitted = pyjax.jit(pyjax.vmap(f))(*args)
    for g, j, w in zip(*(x if isinstance(x, (tuple, list)) else [x] for x in (got, jitted, want))):
        close(g, w, 1e-5)
        np.testing.assert_array_equal(np.asarray(j), np.asarray(g))
    # the batched operand itself (leading batch dims) gives the same
    direct = f(*args)
    for d, w in zip(*(x if isinstance(x, (tuple, list)) else [x] for x in (direct, want))):
        close(d, w, 1e-5)


def test_vmap_with_unbatched_operand():
    a = f32(np.tril(A[0]) + 4 * np.eye(4))
    f = lambda b: ll.triangular_solve(a, b, left_side=True, lower=True)  # noqa: E731
    close(pyjax.vmap(f)(f32(B)), _loop(f, f32(B)), 1e-5)
    g = lambda a_: jnp.linalg.solve(a_, f32(B[0]))  # noqa: E731
    close(pyjax.vmap(g)(f32(A)), np.linalg.solve(A, B[0]))
    sol = pyjax.vmap(jnp.linalg.solve)(f32(A[:, :3, :3]), f32(B[:, :3, 0]))
    close(sol, np.linalg.solve(A[:, :3, :3], B[:, :3, 0:1])[..., 0])


def test_singular_and_nonfinite_inputs():
    out = np.asarray(jnp.linalg.inv(np.zeros((3, 3), np.float32)))
    assert not np.isfinite(out).any()
    assert float(jnp.linalg.det(np.ones((3, 3), np.float32))) == 0.0
    sign, logdet = jnp.linalg.slogdet(np.zeros((2, 2), np.float32))
    assert float(sign) == 0.0 and float(logdet) == -np.inf
    # JAX 0.10.2: cholesky([[1, 2], [2, 1]]) is [[nan, 0], [nan, nan]]: NaN below, 0 above
    failed = np.asarray(jnp.linalg.cholesky(np.array([[1., 2.], [2., 1.]], np.float32)))
    assert np.isnan(np.tril(failed)[np.tril_indices(2)]).all() and failed[0, 1] == 0
    # one non-SPD matrix in a batch poisons only itself
    batch = np.stack([np.eye(2), -np.eye(2)]).astype(np.float32)
    ch = np.asarray(jnp.linalg.cholesky(batch))
    assert np.isfinite(ch[0]).all() and np.isnan(ch[1][np.tril_indices(2)]).all()
    nan = np.full((2, 2), np.nan, np.float32)
    w, v = jnp.linalg.eigh(nan)
    assert np.isnan(np.asarray(w)).all() and np.isnan(np.asarray(v)).all()
    assert np.isnan(np.asarray(jnp.linalg.svdvals(nan))).all()
    assert np.isnan(np.asarray(jnp.linalg.solve(nan, np.ones(2, np.float32)))).all()
    assert int(jnp.linalg.matrix_rank(np.zeros((3, 3), np.float32))) == 0
    # empty matrices, as NumPy
    assert float(jnp.linalg.det(np.zeros((0, 0), np.float32))) == 1.0
    assert jnp.linalg.inv(np.zeros((0, 0), np.float32)).shape == (0, 0)
    assert jnp.linalg.det(np.zeros((0, 3, 3), np.float32)).shape == (0,)


def test_bad_input_raises_clear_errors():
    with pytest.raises(ValueError, match="square"):
        jnp.linalg.inv(np.ones((2, 3)))
    with pytest.raises(ValueError, match="at least 2"):
        jnp.linalg.det(np.ones(3))
    with pytest.raises(ValueError, match="b must have shape"):
        jnp.linalg.solve(np.eye(3), np.ones(4))
    with pytest.raises(TypeError, match="floating or complex"):
        ll.cholesky(np.eye(2, dtype=np.int32), symmetrize_input=False)
    with pytest.raises(ValueError, match="square"):
        jnp.linalg.eig(np.ones((2, 3)))
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):
        ll.eig(np.eye(2, dtype=np.float32), enable_eigvec_derivs=True)
    # (pivoting=True is accepted, as JAX 0.10.2: tests/linalg/test_linalg_accepted.py)
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        ll.qr(np.ones(2, dtype=np.float32), pivoting=True)
    with pytest.raises(ValueError, match="subset_by_index"):
        ll.eigh(np.eye(3, dtype=np.float32), subset_by_index=(2, 5))


def test_array_api_aliases():
    x = f32(A)
    close(jnp.linalg.matrix_transpose(x), np.swapaxes(A, -1, -2))
    close(jnp.linalg.diagonal(x, offset=1), np.diagonal(A, 1, -2, -1))
    close(jnp.linalg.trace(x), np.trace(A, axis1=-2, axis2=-1))
    close(jnp.linalg.matmul(x, x), A @ A)
    close(jnp.linalg.outer(x[0, 0], x[0, 1]), np.outer(A[0, 0], A[0, 1]))
    close(jnp.linalg.tensordot(x[0], x[1], axes=1), np.tensordot(A[0], A[1], 1))
    close(jnp.linalg.vecdot(x, x), (A * A).sum(-1))
    close(jnp.linalg.cross(x[..., :3], x[..., 1:]), np.cross(A[..., :3], A[..., 1:]))
    assert pyjax.numpy.linalg is jnp.linalg


# ---- derivatives: forward and reverse mode against finite differences, float64 ----

TRI = np.tril(A[0]) + 4 * np.eye(4)
BOTH, REV = ("fwd", "rev"), ("rev",)  # reverse mode runs the JVP rule and transposes it
GRAD_CASES = {  # (f, args, order, modes): order 2 where it is cheap enough to compile
    "det": (jnp.linalg.det, (A[0],), 1, BOTH),
    "slogdet": (lambda a: jnp.linalg.slogdet(a)[1], (A[0],), 1, REV),
    "inv": (jnp.linalg.inv, (A[0],), 1, BOTH),
    "solve": (jnp.linalg.solve, (A[0], B[0]), 1, REV),
    "cholesky": (jnp.linalg.cholesky, (SPD[0],), 2, BOTH),
    "triangular_solve": (lambda a, b: ll.triangular_solve(a, b, left_side=True, lower=True),
                         (TRI, B[0]), 2, BOTH),
    "triangular_solve_right_unit": (
        lambda a, b: ll.triangular_solve(a, b, transpose_a=True, unit_diagonal=True),
        (TRI.T, B[0].T), 1, BOTH),
    "lu": (lambda a: ll.lu(a)[0], (A[0],), 1, BOTH),
    "qr": (lambda a: jnp.linalg.qr(a), (TALL,), 1, BOTH),
    "eigh": (lambda a: jnp.linalg.eigh(a), (SPD[0],), 2, BOTH),
    "svd": (lambda a: jnp.linalg.svd(a, full_matrices=False), (TALL,), 1, BOTH),
    "svd_wide": (lambda a: jnp.linalg.svd(a, full_matrices=False), (TALL.T,), 1, REV),
    "lstsq": (lambda a, b: jnp.linalg.lstsq(a, b)[0], (TALL, TALL[:, :2]), 1, REV),
    "pinv": (jnp.linalg.pinv, (TALL,), 1, REV),
    "norm_2": (lambda a: jnp.linalg.norm(a, 2), (A[0],), 1, REV),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_grads(x64, name):
    f, args, order, modes = GRAD_CASES[name]
    check_grads(f, args, order, modes=modes)


def test_triangular_solve_transpose_identity(x64):
    # <ct, f(b)> == <f^T(ct), b> for the linear map b -> solve(a, b)
    a = TRI
    f = lambda b: ll.triangular_solve(a, b, left_side=True, lower=True,  # noqa: E731
                                      transpose_a=True)
    b, ct = B[0], B[1]
    _, pullback = pyjax.vjp(f, b)
    lhs = np.sum(ct * np.asarray(f(b)))
    rhs = np.sum(np.asarray(pullback(ct)[0]) * b)
    np.testing.assert_allclose(lhs, rhs, rtol=1e-12)


def test_internal_factorizations_are_not_differentiable():
    with pytest.raises(NotImplementedError, match="geqrf"):
        pyjax.jvp(lambda a: ll.geqrf(a)[0], (f32(A[0]),), (f32(A[1]),))
    h, tau = scipy.linalg.lapack.sgeqrf(f32(A[0]))[:2]
    with pytest.raises(NotImplementedError, match="householder_product"):
        pyjax.jvp(lambda a: ll.householder_product(a, tau), (h,), (h,))
    with pytest.raises(NotImplementedError, match="full matrices"):
        pyjax.jvp(lambda a: ll.svd(a)[0], (f32(A[0]),), (f32(A[1]),))


def test_cholesky_through_host_lapack_on_cpu():
    """From HOST_CHOLESKY_MIN up, the CPU program factors through LAPACK (a host
    kernel): values, a non-SPD member of a batch becoming NaN alone, grads, jit and vmap."""
    from pyjax._src.lax import linalg as lax_linalg
    n = lax_linalg.HOST_CHOLESKY_MIN + 8
    rng = np.random.default_rng(0)
    m = rng.normal(size=(3, n, n)).astype(np.float32)
    a = m @ m.transpose(0, 2, 1) + n * np.eye(n, dtype=np.float32)
    a[1] = -np.eye(n)  # not positive definite
    text = jax.jit(jnp.linalg.cholesky).lower(a).as_text()
    assert "pyjax_host_callback" in text and "stablehlo.cholesky" not in text
    got = np.asarray(jax.jit(jnp.linalg.cholesky)(a))
    for i in (0, 2):
        np.testing.assert_allclose(got[i], np.linalg.cholesky(a[i].astype(np.float64)),
                                   rtol=2e-4, atol=2e-4)
        assert np.all(np.triu(got[i], 1) == 0)
    assert np.isnan(got[1][np.tril_indices(n)]).all() and np.all(np.triu(got[1], 1) == 0)
    looped = np.stack([np.asarray(jnp.linalg.cholesky(a[i])) for i in (0, 2)])
    np.testing.assert_allclose(np.asarray(jax.vmap(jnp.linalg.cholesky)(a[[0, 2]])), looped,
                               rtol=1e-6)
    # LAPACK has no float16/bfloat16: they are factored in float32
    for dt in (jnp.float16, jnp.bfloat16):
        low = np.asarray(jnp.linalg.cholesky(jnp.asarray(a[0]).astype(dt)).astype(np.float32))
        np.testing.assert_allclose(low, np.linalg.cholesky(a[0].astype(np.float64)),
                                   rtol=3e-2, atol=3e-2)
    # derivatives through the host kernel's forward values, against finite differences
    with jax.enable_x64(True):
        spd = a[0].astype(np.float64)[:n, :n]
        check_grads(lambda x: jnp.linalg.cholesky((x + x.T) / 2), (spd,), order=1,
                    modes=["fwd", "rev"])


def test_ormqr_applies_the_full_q_of_geqrf():
    # oracle: LAPACK's own ormqr (scipy.linalg.lapack.sormqr) on the same reflectors, for a tall,
    # a wide and a square matrix, each side and transpose
    rng = np.random.RandomState(3)
    for m, n in ((5, 3), (3, 5), (4, 4)):
        a = rng.randn(m, n).astype(np.float32)
        h, tau = ll.geqrf(jnp.asarray(a))
        h, tau = np.asarray(h), np.asarray(tau)
        left, right = rng.randn(m, 2).astype(np.float32), rng.randn(2, m).astype(np.float32)
        for side, c in (("L", left), ("R", right)):
            for trans in ("N", "T"):
                want = scipy.linalg.lapack.sormqr(side, trans, h[:, :min(m, n)], tau, c,
                                                  lwork=64)[0]
                got = ll.ormqr(h, tau, c, left=side == "L", transpose=trans == "T")
                np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5,
                                           err_msg=f"{m}x{n} {side}{trans}")
    with pytest.raises(ValueError, match="ormqr: c must have 4 rows"):
        ll.ormqr(h, tau, np.ones((3, 2), np.float32))
