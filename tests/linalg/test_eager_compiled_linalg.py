"""Eager jnp.linalg / jax.scipy.linalg calls run as one cached compiled call each
(``compiled_when_eager``): the same values as NumPy/SciPy eagerly (NumPy or device operands)
and under jit, no recompilation on a second call, and the same errors (list operands take the
uncompiled path and are refused as before)."""
import numpy as np
import pytest
import scipy.linalg as sl

import pyjax
import pyjax.numpy as jnp
import pyjax.scipy.linalg as jsl
from pyjax.test_util import count_compiles

RNG = np.random.default_rng(7)
A = RNG.normal(size=(6, 6)).astype(np.float32)
B = RNG.normal(size=(6, 2)).astype(np.float32)
V = B[:, 0]
SPD = (A @ A.T + 6 * np.eye(6)).astype(np.float32)
TRI = np.tril(A) + 6 * np.eye(6, dtype=np.float32)


def close(got, want, tol=2e-4):
    got = np.asarray(got)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=0, atol=tol * max(1.0, np.abs(want).max()))


def _check(fn, args, want, tol=2e-4):
    """``fn(*args)`` eagerly (twice: the second call compiles nothing) and under jit against
    ``want`` (a tuple compared item by item); list operands (the uncompiled path) give the
    same values or JAX's TypeError for non-arrays."""
    def compare(got):
        if isinstance(want, tuple):
            assert len(got) == len(want)
            for g, w in zip(got, want):
                close(g, w, tol)
        else:
            close(got, want, tol)
    compare(fn(*args))
    dev = [jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    with count_compiles() as n:
        compare(fn(*dev))
    assert n() == 0
    compare(pyjax.jit(fn)(*dev))
    try:
        got = fn(*[a.tolist() if isinstance(a, np.ndarray) else a for a in args])
    except TypeError as e:
        assert "requires ndarray or scalar arguments" in str(e)
    else:
        compare(got)


def test_scipy_wrappers_values():
    for lower in (True, False):
        c = sl.cholesky(SPD, lower=lower)
        _check(lambda a: jsl.cholesky(a, lower=lower), (SPD,), c)
        _check(lambda a: jsl.cho_factor(a, lower=lower)[0], (SPD,), np.tril(c) if lower
               else np.triu(c))
        assert jsl.cho_factor(jnp.asarray(SPD), lower=lower)[1] is lower
        _check(lambda c, b: jsl.cho_solve((c, lower), b), (c, B), np.linalg.solve(SPD, B))
        _check(lambda a, b: jsl.solve(a, b, lower=lower, assume_a="pos"), (SPD, V),
               np.linalg.solve(SPD, V))
    for trans in (0, 1, 2, "T"):
        _check(lambda a, b: jsl.solve_triangular(a, b, trans=trans, lower=True), (TRI, B),
               sl.solve_triangular(TRI, B, trans=trans, lower=True))
    _check(jsl.lu, (A,), tuple(sl.lu(A)))
    _check(lambda a: jsl.lu(a, permute_l=True), (A,), tuple(sl.lu(A, permute_l=True)))
    lu, piv = sl.lu_factor(A)
    _check(jsl.lu_factor, (A,), (lu, piv))
    for trans in (0, 1, 2):
        _check(lambda l, p, b: jsl.lu_solve((l, p), b, trans=trans), (lu, piv.astype(np.int32),
                                                                      B),
               sl.lu_solve((lu, piv), B, trans=trans))
    for mode in ("economic", "r"):
        want = sl.qr(A, mode=mode)
        got = jsl.qr(A, mode=mode)
        assert len(got) == len(want)
        close(np.abs(got[-1]), np.abs(want[-1]))  # r up to the signs of its rows
    _check(lambda a: jsl.eigh(a, eigvals_only=True), (SPD,), sl.eigh(SPD, eigvals_only=True))
    _check(lambda a: jsl.eigh(a, subset_by_index=(1, 3))[0], (SPD,),
           sl.eigh(SPD, subset_by_index=(1, 3))[0])
    _check(lambda a, b: jsl.solve(a, b), (A, B), np.linalg.solve(A, B), tol=1e-3)


def test_scipy_wrappers_errors_unchanged():
    a = jnp.asarray(TRI)
    with pytest.raises(ValueError, match="Invalid 'trans' value"):
        jsl.solve_triangular(a, B, trans=3)
    with pytest.raises(NotImplementedError, match="debug"):
        jsl.solve_triangular(a, B, debug=True)
    with pytest.raises(ValueError, match="incompatible shapes"):
        jsl.solve_triangular(a, jnp.ones((5, 2)))
    with pytest.raises(ValueError, match="incompatible shapes"):
        jsl.cho_solve((a, True), jnp.ones((5,)))
    with pytest.raises(ValueError, match="Invalid 'trans' value"):
        jsl.lu_solve(jsl.lu_factor(a), B, trans="N")
    with pytest.raises(ValueError, match="Unsupported QR decomposition mode"):
        jsl.qr(a, mode="raw")
    with pytest.raises(ValueError, match="assume_a"):
        jsl.solve(a, B, assume_a="banded")
    with pytest.raises(NotImplementedError, match="generalized"):
        jsl.eigh(a, a)
    for f in (jsl.cholesky, jsl.lu, jsl.lu_factor, jsl.eigh):
        with pytest.raises(ValueError, match="at least 2 dimensions"):
            f(jnp.ones(3))


def test_block_diag():
    blocks = (A[:2, :3], np.float32(2.5), B[:, 0], np.ones((1, 1), np.int32))
    want = sl.block_diag(*blocks)
    got = jsl.block_diag(*[jnp.asarray(b) for b in blocks])
    assert got.dtype == np.float32
    close(got, want)
    with count_compiles() as n:
        close(jsl.block_diag(*[jnp.asarray(b) for b in blocks]), want)
    assert n() == 0
    close(pyjax.jit(jsl.block_diag)(*blocks), want)
    close(jsl.block_diag(np.array([[1.0, 2.0]]), 3), sl.block_diag([[1.0, 2.0]], 3))
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        jsl.block_diag([[1.0, 2.0]], 3)
    assert jsl.block_diag().shape == (1, 0)
    with pytest.raises(ValueError, match="less than or equal to 2"):
        jsl.block_diag(jnp.ones((2, 2, 2)))


@pytest.mark.parametrize("ord_axis", [(None, None), (2, None), ("fro", None), ("nuc", None),
                                      (1, None), (-np.inf, None), (None, 1), (3, 0),
                                      (0, -1), (np.inf, (0, 1)), (-2, (1, 0))])
def test_norm_every_ord(ord_axis):
    ord, axis = ord_axis
    for keepdims in (False, True):
        _check(lambda x: jnp.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims), (A,),
               np.linalg.norm(A, ord=ord, axis=axis, keepdims=keepdims))
    if isinstance(axis, tuple):  # a list axis: the uncompiled path
        close(jnp.linalg.norm(A, ord=ord, axis=list(axis)), np.linalg.norm(A, ord=ord,
                                                                             axis=axis))


def test_other_jnp_linalg_values():
    _check(jnp.linalg.vector_norm, (A,), np.linalg.norm(A.ravel()))
    _check(lambda x: jnp.linalg.vector_norm(x, axis=0, ord=1), (A,),
           np.linalg.norm(A, ord=1, axis=0))
    _check(lambda x: jnp.linalg.matrix_norm(x, ord=1), (A,), np.linalg.norm(A, ord=1))
    for p in (None, 1, -2, "fro"):
        _check(lambda x: jnp.linalg.cond(x, p), (A,), np.linalg.cond(A, p), tol=1e-3)
    hilbert = sl.hilbert(8).astype(np.float32)
    _check(jnp.linalg.matrix_rank, (hilbert,), np.linalg.matrix_rank(hilbert))
    _check(lambda x: jnp.linalg.matrix_rank(x, tol=1e-3), (hilbert,),
           np.linalg.matrix_rank(hilbert, tol=1e-3))
    _check(lambda x: jnp.linalg.matrix_rank(x, hermitian=True), (SPD,), 6)
    _check(lambda x: jnp.linalg.trace(x, offset=1), (A,), np.trace(A, offset=1))
    assert jnp.linalg.trace(A, dtype=jnp.int32).dtype == np.int32
    for n in (-2, 0, 3):
        _check(lambda x: jnp.linalg.matrix_power(x, n), (SPD / 10,),
               np.linalg.matrix_power(SPD.astype(np.float64) / 10, n), tol=1e-3)
    _check(lambda x: jnp.linalg.eigvalsh(x, UPLO="U"), (SPD,), np.linalg.eigvalsh(SPD, "U"))
    _check(lambda x: jnp.linalg.eigh(x)[0], (SPD,), np.linalg.eigh(SPD)[0])
    _check(lambda x: jnp.linalg.svd(x, compute_uv=False), (A,), np.linalg.svd(A,
                                                                              compute_uv=False))
    _check(jnp.linalg.svdvals, (A,), np.linalg.svd(A, compute_uv=False))
    for method in (None, "qr"):
        _check(lambda x: jnp.linalg.slogdet(x, method=method), (A,),
               tuple(np.linalg.slogdet(A)), tol=1e-3)
    _check(jnp.linalg.det, (A,), np.linalg.det(A), tol=1e-3)
    _check(jnp.linalg.inv, (SPD,), np.linalg.inv(SPD))
    _check(jnp.linalg.solve, (SPD, B), np.linalg.solve(SPD, B))
    _check(lambda x: jnp.linalg.qr(x, mode="r"), (A,), np.linalg.qr(A, mode="r"), tol=1e9)
    x, resid, rank, s = np.linalg.lstsq(A[:, :4], V, rcond=None)
    _check(lambda a, b: jnp.linalg.lstsq(a, b), (A[:, :4], V), (x, resid, rank, s), tol=1e-3)
    # numpy_resid needs the rank's value: the (uncompiled) eager path keeps it working
    got = jnp.linalg.lstsq(jnp.asarray(A[:4]), jnp.asarray(V[:4]), numpy_resid=True)
    assert got[1].shape == (0,)


def test_jnp_linalg_errors_unchanged():
    a = jnp.asarray(A)
    with pytest.raises(ValueError, match="UPLO"):
        jnp.linalg.eigh(a, UPLO="X")
    with pytest.raises(ValueError, match="Unknown slogdet method"):
        jnp.linalg.slogdet(a, method="cholesky")
    with pytest.raises(TypeError, match="exponent must be an integer"):
        jnp.linalg.matrix_power(a, 1.5)
    with pytest.raises(ValueError, match="Invalid order"):
        jnp.linalg.norm(a, ord="bad")
    with pytest.raises(ValueError, match="Duplicate axes"):
        jnp.linalg.norm(a, axis=(0, 0))
    with pytest.raises(ValueError, match="only one of rtol or tol"):
        jnp.linalg.matrix_rank(a, rtol=0.1, tol=0.1)
    with pytest.raises(ValueError, match="square"):
        jnp.linalg.inv(a[:, :3])
    with pytest.raises(TypeError, match="2-dimensional array given|two-dimensional"):
        jnp.linalg.lstsq(a, jnp.ones((6, 2, 2)))


def test_expm_sqrtm_larger_matrices(x64):
    a = RNG.normal(size=(40, 40))
    for scale in (0.01, 1.0, 8.0):  # no squaring, a few, many
        want = sl.expm(scale * a)
        close(jsl.expm(scale * a), want, tol=1e-10)
        close(jsl.expm(np.stack([scale * a, a])), np.stack([want, sl.expm(a)]), tol=1e-10)
    close(jsl.sqrtm(a), sl.sqrtm(a.astype(complex)), tol=1e-9)
    spd = a @ a.T + np.eye(40)
    s = np.asarray(pyjax.jit(jsl.sqrtm)(spd))
    np.testing.assert_allclose(s @ s, spd, atol=1e-8 * np.abs(spd).max())
    # a zero eigenvalue twice: 0/0 on a superdiagonal gives 0, as SciPy and JAX
    z = np.zeros((4, 4))
    z[0, 1] = 0.0
    close(jsl.sqrtm(z), np.zeros((4, 4)))
    d = np.diag([4.0, 4.0, 9.0, 0.0])
    close(jsl.sqrtm(d), np.diag([2.0, 2.0, 3.0, 0.0]))
