"""Host kernels of ``lax.linalg`` on the CPU: LAPACK through SciPy or NumPy, called from the
compiled program over the FFI (``base.host_call``).

Each kernel takes and returns NumPy arrays with leading batch dimensions, as the primitive
does. SciPy is optional at run time: when it imports, the kernels call its LAPACK/BLAS
wrappers matrix by matrix (single precision stays single, the routines are the ones JAX's CPU
backend calls: ``getrf``, ``trsm``, ``syevd``/``heevd``, ``gesdd``, ``geqrf``+``orgqr``,
``geev``); without it they use ``numpy.linalg`` (batched, but single precision computed in
double) and, for LU and triangular solves, which NumPy does not expose, the blocked NumPy
code below. docs/linalg.md records the measurements.

float16/bfloat16 are computed in float32. A matrix with a non-finite entry never reaches an
iterative LAPACK routine (eigh, svd, eig): its results are NaN, as JAX's, and no LAPACK loop
can stall on it.
"""
from __future__ import annotations

import numpy as np

from pyjax._src.lax.scipy_lapack import scipy_linalg

# SciPy's linalg, blas and lapack modules, bound on the first kernel call (SciPy is optional:
# the test extra installs it; the kernels fall back to NumPy without it)
_sla = _blas = _lapack = None
_use_scipy = None  # None: not decided yet (SciPy not imported); then True or False


def _scipy_on():
    global _use_scipy, _sla, _blas, _lapack
    if _use_scipy is None:
        mods = scipy_linalg()
        if mods is not None:
            _sla, _blas, _lapack = mods
        _use_scipy = mods is not None
    return _use_scipy


def use_scipy(flag: bool) -> bool:
    """Choose SciPy's LAPACK (when installed) or the NumPy fallbacks; returns the previous
    choice (the tests run both)."""
    global _use_scipy
    old = _scipy_on()
    _use_scipy = bool(flag) and scipy_linalg() is not None
    return old


# SciPy's wrappers cost tens of microseconds per call: batches of matrices smaller than this
# go to NumPy's batched routines instead (measured: 100 x 8x8 eigh 11.7 ms one by one, 3.8 ms
# in one NumPy call).
SCIPY_MIN = 32


def _one_by_one(n):
    return _scipy_on() and n >= SCIPY_MIN


_compute_dtypes: dict = {}  # (a per-call cost in every kernel: dtype names are slow to build)


def _compute_dtype(dt):
    out = _compute_dtypes.get(dt)
    if out is None:
        d = np.dtype(dt)
        out = _compute_dtypes[dt] = (np.dtype(np.float32) if d.kind == "f" and d.itemsize < 4
                                     or d.kind == "V" or d.name == "bfloat16" else d)
    return out


def _flat(a):
    """``a`` as a ``(batch, m, n)`` array of its LAPACK dtype."""
    return np.ascontiguousarray(a.reshape((-1,) + a.shape[-2:]), _compute_dtype(a.dtype))


def _nan(dtype):
    """NaN of ``dtype``: ``nan+nanj`` for complex results (a failed matrix is all NaN)."""
    return complex(np.nan, np.nan) if np.dtype(dtype).kind == "c" else np.nan


def _finite(flat):
    return np.isfinite(flat).all(axis=(-2, -1))


# ---- Cholesky ----

def cholesky(a):
    """LAPACK's lower Cholesky factor (``potrf``) of every matrix of ``a``; a failed
    factorization (not positive definite, non-finite input) gives NaNs in that matrix's lower
    triangle, as JAX."""
    flat = _flat(a)
    if flat.shape[0] == 1 and _one_by_one(flat.shape[-1]):
        # one matrix (the common case): potrf's result as it is, unless it failed
        x = flat[0]
        c, info = _lapack.get_lapack_funcs("potrf", (x,))(x.T, lower=0, clean=1)
        if info == 0 and np.isfinite(c).all():
            return [c.T.reshape(a.shape).astype(a.dtype, copy=False)]
    out = np.full(flat.shape, _nan(flat.dtype), flat.dtype)
    if _one_by_one(flat.shape[-1]):
        for i, x in enumerate(flat):
            # column-major view of a^T (no copy): its upper triangle holds a's lower one,
            # transposed; the factor u of that matrix (u^H u) gives ours as l = u^T
            c, info = _lapack.get_lapack_funcs("potrf", (x,))(x.T, lower=0, clean=1)
            if info == 0:
                out[i] = c.T
    else:
        try:
            out[...] = np.linalg.cholesky(flat)
        except np.linalg.LinAlgError:
            for i, m in enumerate(flat):
                try:
                    out[i] = np.linalg.cholesky(m)
                except np.linalg.LinAlgError:
                    pass
    out[~_finite(out)] = _nan(out.dtype)
    out = np.tril(out)  # a failed factor is NaN below the diagonal, 0 above (as JAX)
    return [out.reshape(a.shape).astype(a.dtype, copy=False)]


# ---- LU with partial pivoting ----

LU_PANEL = 32  # columns per panel of the NumPy fallback (its inner loop is one column)


def lu(a):
    """``(lu, pivots, permutation)`` of every matrix of ``a``: LAPACK's ``getrf`` (zero-based
    pivots) and the permutation its row swaps make of ``range(m)``."""
    lu_t, piv, perm = lu_transposed(np.swapaxes(a, -1, -2))
    return [np.swapaxes(lu_t, -1, -2), piv, perm]


def lu_transposed(a_t):
    """``lu`` of the matrices whose transposes are ``a_t``, the factors transposed too. LAPACK
    is column-major: a row-major ``a^T`` is ``a`` in column-major order, so ``getrf`` reads
    and writes it without the strided copies (0.9 ms of a 3 ms 512² factorization) that the
    lowering leaves to XLA's transposes instead."""
    flat = _flat(a_t)
    n, m = flat.shape[-2:]
    k = min(m, n)
    batch = a_t.shape[:-2]
    if flat.shape[0] == 1 and _scipy_on():  # one matrix: getrf's results as they are
        lu_f, p, _ = _lapack.get_lapack_funcs("getrf", (flat[0],))(flat[0].T)
        perm = _pivots_to_permutation(p[None], m)
        return [lu_f.T.reshape(a_t.shape).astype(a_t.dtype, copy=False),
                p.reshape(batch + (k,)), perm.reshape(batch + (m,))]
    out = np.empty_like(flat)
    piv = np.empty((flat.shape[0], k), np.int32)
    for i, x in enumerate(flat):
        if _scipy_on():
            lu_f, p, _ = _lapack.get_lapack_funcs("getrf", (x,))(x.T)
            out[i], piv[i] = lu_f.T, p
        else:
            lu_c, piv[i] = _lu_numpy(x.T)
            out[i] = lu_c.T
    perm = _pivots_to_permutation(piv, m)
    return [out.reshape(a_t.shape).astype(a_t.dtype, copy=False), piv.reshape(batch + (k,)),
            perm.reshape(batch + (m,))]


def _pivots_to_permutation(piv, m):
    """The permutation of ``range(m)`` that LAPACK's row swaps ``piv`` make (per matrix)."""
    b, k = piv.shape
    if b == 1 and k and _scipy_on():  # LAPACK's own laswp on 0..m-1 (exact in float64)
        rows = _lapack.dlaswp(np.arange(m, dtype=np.float64)[:, None], piv[0])
        return rows.reshape(1, m).astype(np.int32)
    perm = np.tile(np.arange(m, dtype=np.int32), (b, 1))
    if b <= k:  # few matrices: swap in Python lists (a vectorised swap costs ~10 us)
        for row, pv in zip(perm, piv.tolist()):
            p = row.tolist()
            for j, q in enumerate(pv):
                p[j], p[q] = p[q], p[j]
            row[:] = p
        return perm
    rows = np.arange(b)
    for j in range(k):  # many small matrices: one swap of all of them per pivot
        pj = piv[:, j]
        perm[rows, j], perm[rows, pj] = perm[rows, pj], perm[rows, j].copy()
    return perm


def _pivot_magnitude(col):
    # LAPACK's i?amax: |re| + |im| for complex (and the first of equal maxima)
    return np.abs(col.real) + np.abs(col.imag) if np.iscomplexobj(col) else np.abs(col)


def _lu_numpy(a):
    """Right-looking blocked LU with partial pivoting (LAPACK's ``getrf``): each panel of
    ``LU_PANEL`` columns is factored column by column, then the rows right of it are solved
    and the trailing matrix updated by one matrix product."""
    a = a.copy()
    m, n = a.shape
    k = min(m, n)
    piv = np.zeros(k, np.int32)
    with np.errstate(all="ignore"):
        for j0 in range(0, k, LU_PANEL):
            j1 = min(j0 + LU_PANEL, k)
            for j in range(j0, j1):
                p = j + int(np.argmax(_pivot_magnitude(a[j:, j])))
                piv[j] = p
                if p != j:
                    a[[j, p], :] = a[[p, j], :]
                if a[j, j] != 0:  # a zero pivot column is left as it is, as LAPACK
                    a[j + 1:, j] /= a[j, j]
                a[j + 1:, j + 1:j1] -= np.outer(a[j + 1:, j], a[j, j + 1:j1])
            if j1 < n:
                a[j0:j1, j1:] = _solve_lower_left(a[j0:j1, j0:j1], a[j0:j1, j1:], unit=True)
                a[j1:, j1:] -= a[j1:, j0:j1] @ a[j0:j1, j1:]
    return a, piv


# ---- triangular solve ----

TRSM_BLOCK = 64  # rows per block of the NumPy fallback's substitution


def triangular_solve(a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    """``op(a) x = b`` (``left_side``) or ``x op(a) = b`` for every matrix pair: BLAS's
    ``trsm`` (a zero on the diagonal gives infs/NaNs, not an exception)."""
    fa, fb = _flat(a), _flat(b)
    out = None if fa.shape[0] == 1 else np.empty_like(fb)  # one matrix: its result as it is
    cplx = np.iscomplexobj(fa)
    trans = (2 if conjugate_a and cplx else 1) if transpose_a else 0
    with np.errstate(all="ignore"):
        for i in range(fa.shape[0]):
            x = fa[i].conj() if conjugate_a and cplx and not transpose_a else fa[i]
            if _scipy_on():
                # BLAS is column-major: hand it the transposes (no copy), solving
                # op(a) x = b as x^T op(a)^T = b^T (side and triangle flip, op stays)
                trsm = _blas.get_blas_funcs("trsm", (x, fb[i]))
                r = trsm(1.0, x.T, fb[i].T, side=1 if left_side else 0,
                         lower=int(not lower), trans_a=trans, diag=int(unit_diagonal)).T
            else:
                r = _trsm_numpy(x, fb[i], left_side, lower, trans, unit_diagonal)
            if out is None:
                out = r[None]
            else:
                out[i] = r
    return [out.reshape(b.shape).astype(b.dtype, copy=False)]


def triangular_solve_column_major(a_t, b, *, left_side, lower, transpose_a, conjugate_a,
                                  unit_diagonal):
    """``triangular_solve`` given ``a`` column-major (``a_t`` holds its transposes, as
    ``lu_transposed`` returns the LU factor): BLAS reads it in place, and ``b`` (row-major)
    through its transposes, so nothing is copied. ``op(a) x = b`` is solved as
    ``x^T op(a)^T = b^T`` (the side flips, the triangle stays, ``op(a)^T`` is ``a`` with the
    complementary transposition); a conjugate with no transposition is ``a^H``."""
    if not _scipy_on():  # the NumPy fallback works on row-major matrices
        return triangular_solve(np.swapaxes(a_t, -1, -2), b, left_side=left_side, lower=lower,
                                transpose_a=transpose_a, conjugate_a=conjugate_a,
                                unit_diagonal=unit_diagonal)
    fa, fb = _flat(a_t), _flat(b)
    out = None if fa.shape[0] == 1 else np.empty_like(fb)  # one matrix: its result as it is
    conj = conjugate_a and np.iscomplexobj(fa)
    # op(a)^T: a^T -> a, a^H -> conj(a) (a conjugated copy), a -> a^T, conj(a) -> a^H
    trans = 0 if transpose_a else (2 if conj else 1)
    with np.errstate(all="ignore"):
        for i in range(fa.shape[0]):
            x = fa[i].T  # a, column-major
            if transpose_a and conj:
                x = x.conj()
            trsm = _blas.get_blas_funcs("trsm", (x, fb[i]))
            r = trsm(1.0, x, fb[i].T, side=1 if left_side else 0, lower=int(lower),
                     trans_a=trans, diag=int(unit_diagonal)).T
            if out is None:
                out = r[None]
            else:
                out[i] = r
    return [out.reshape(b.shape).astype(b.dtype, copy=False)]


def _trsm_numpy(a, b, left_side, lower, trans, unit):
    t = np.tril(a) if lower else np.triu(a)
    if unit:
        np.fill_diagonal(t, 1)
    if trans:
        t = t.T.conj() if trans == 2 else t.T
        lower = not lower
    if not left_side:  # x t = b  <=>  t^T x^T = b^T
        x = _trsm_numpy(t.T, b.T, True, not lower, 0, False)
        return x.T
    if lower:
        return _solve_lower_left(t, b, unit=False)
    return _solve_lower_left(t[::-1, ::-1], b[::-1], unit=False)[::-1]


def _solve_lower_left(t, b, unit):
    """``tril(t) x = b`` by blocked forward substitution (``unit``: ones on the diagonal):
    row by row inside a block of ``TRSM_BLOCK`` rows, one matrix product per block below."""
    n = t.shape[0]
    x = np.array(b, dtype=np.result_type(t, b))
    for r0 in range(0, n, TRSM_BLOCK):
        r1 = min(r0 + TRSM_BLOCK, n)
        for r in range(r0, r1):
            if r > r0:
                x[r] -= t[r, r0:r] @ x[r0:r]
            if not unit:
                x[r] /= t[r, r]
        if r1 < n:
            x[r1:] -= t[r1:, r0:r1] @ x[r0:r1]
    return x


# ---- QR ----

def qr(a, *, full_matrices, pivoting=False):
    """``(q, r)`` of every matrix: ``geqrf`` + ``orgqr``/``ungqr`` (NumPy's ``qr`` calls the
    same routines); with ``pivoting``, ``(q, r, p)`` from ``geqp3`` (``a[:, p] == q r``)."""
    flat = _flat(a)
    b, m, n = flat.shape
    k = m if full_matrices else min(m, n)
    q = np.empty((b, m, k), flat.dtype)
    r = np.empty((b, k, n), flat.dtype)
    perm = np.empty((b, n), np.int32)
    mode = "full" if full_matrices else "economic"
    if pivoting and _scipy_on():
        for i, x in enumerate(flat):
            q[i], r[i], perm[i] = _sla.qr(x, mode=mode, pivoting=True, check_finite=False)
    elif pivoting:
        for i, x in enumerate(flat):
            perm[i] = _column_pivots(x)
        q[...], r[...] = np.linalg.qr(np.take_along_axis(flat, perm[:, None, :], axis=2),
                                      mode="complete" if full_matrices else "reduced")
    elif _one_by_one(min(m, n)):
        for i, x in enumerate(flat):
            q[i], r[i] = _sla.qr(x, mode=mode, check_finite=False)
    elif flat.size:
        q[...], r[...] = np.linalg.qr(flat, mode="complete" if full_matrices else "reduced")
    batch = a.shape[:-2]
    out = [q.reshape(batch + (m, k)).astype(a.dtype, copy=False),
           r.reshape(batch + (k, n)).astype(a.dtype, copy=False)]
    return out + [perm.reshape(batch + (n,))] if pivoting else out


def _column_pivots(x):
    """``geqp3``'s column order without SciPy: at each step the remaining column of largest
    norm orthogonal to the columns chosen so far (the first of equal ones), then the rest in
    their order, as LAPACK leaves them. The Householder QR of ``x[:, p]`` (``geqrf``, the same
    reflections ``geqp3`` applies) then gives its ``q`` and ``r``."""
    m, n = x.shape
    rest = np.array(x, dtype=np.result_type(x, np.float32))
    order = list(range(n))
    for j in range(min(m, n)):
        norms = np.linalg.norm(rest[:, order[j:]], axis=0)
        p = j + int(np.argmax(norms))
        order[j], order[p] = order[p], order[j]
        c = rest[:, order[j]]
        nrm = np.linalg.norm(c)
        if nrm == 0:
            break
        c = c / nrm
        rest -= np.outer(c, c.conj() @ rest)
    return np.array(order, np.int32)


# ---- eigh ----

def eigh(a, *, lower, subset_by_index):
    """``(v, w)``: eigenvectors and ascending eigenvalues of every Hermitian matrix, reading
    its ``lower`` (or upper) triangle (``syevd``/``heevd``)."""
    flat = _flat(a)
    n = flat.shape[-1]
    lo, hi = subset_by_index or (0, n)
    real = np.dtype(flat.dtype.char.lower()) if flat.dtype.kind == "c" else flat.dtype
    ok = _finite(flat)
    if not _one_by_one(n) and flat.size and ok.all():  # (the common case: no NaN fill)
        w, v = np.linalg.eigh(flat, UPLO="L" if lower else "U")
        return _eigh_results(a, v, w, lo, hi)
    v = np.full(flat.shape, _nan(flat.dtype), flat.dtype)
    w = np.full(flat.shape[:-1], np.nan, real)
    if _one_by_one(n):
        for i in np.flatnonzero(ok):
            w[i], v[i] = _sla.eigh(flat[i], lower=lower, driver="evd", check_finite=False)
    elif ok.any():
        w[ok], v[ok] = np.linalg.eigh(flat[ok], UPLO="L" if lower else "U")
    return _eigh_results(a, v, w, lo, hi)


def _eigh_results(a, v, w, lo, hi):
    batch, n = a.shape[:-2], a.shape[-1]
    v = v[..., lo:hi].reshape(batch + (n, hi - lo)).astype(a.dtype, copy=False)
    return [v, w[..., lo:hi].reshape(batch + (hi - lo,)).astype(
        _real_dtype(a.dtype), copy=False)]


def _real_dtype(dt):
    dt = np.dtype(dt)
    return np.dtype(dt.char.lower()) if dt.kind == "c" else dt


# ---- svd ----

def svd(a, *, full_matrices, compute_uv, subset_by_index, driver="gesdd"):
    """``[s]`` or ``[s, u, vh]``, singular values descending (LAPACK's ``driver``: ``gesdd``,
    or ``gesvd`` through SciPy; a matrix on which it does not converge gives NaNs, as JAX)."""
    flat = _flat(a)
    b, m, n = flat.shape
    k = min(m, n)
    lo, hi = subset_by_index or (0, k)
    batched = not (_one_by_one(k) or driver != "gesdd")
    if batched and flat.size and _finite(flat).all():  # the common case: no NaN fill
        try:
            res = np.linalg.svd(flat, full_matrices=full_matrices, compute_uv=compute_uv)
            return _svd_results(a, *(res if compute_uv else (None, res, None)),
                                compute_uv=compute_uv, lo=lo, hi=hi,
                                subset=subset_by_index is not None)
        except np.linalg.LinAlgError:
            pass
    ku, kv = (m, n) if full_matrices else (k, k)
    s = np.full((b, k), np.nan, _real_dtype(flat.dtype))
    u = np.full((b, m, ku), _nan(flat.dtype), flat.dtype)
    vh = np.full((b, kv, n), _nan(flat.dtype), flat.dtype)
    ok = np.flatnonzero(_finite(flat))
    if batched and ok.size:
        try:  # all at once; one by one if one matrix fails
            res = np.linalg.svd(flat[ok], full_matrices=full_matrices, compute_uv=compute_uv)
            if compute_uv:
                u[ok], s[ok], vh[ok] = res
            else:
                s[ok] = res
            ok = ok[:0]
        except np.linalg.LinAlgError:
            pass
    for i in ok:
        try:
            if _scipy_on():
                res = _sla.svd(flat[i], full_matrices=full_matrices, compute_uv=compute_uv,
                               check_finite=False, lapack_driver=driver)
            else:
                res = np.linalg.svd(flat[i], full_matrices=full_matrices, compute_uv=compute_uv)
        except np.linalg.LinAlgError:
            continue
        if compute_uv:
            u[i], s[i], vh[i] = res
        else:
            s[i] = res
    return _svd_results(a, u, s, vh, compute_uv=compute_uv, lo=lo, hi=hi,
                        subset=subset_by_index is not None)


def _svd_results(a, u, s, vh, *, compute_uv, lo, hi, subset):
    batch = a.shape[:-2]
    out = [s[:, lo:hi].reshape(batch + (hi - lo,)).astype(_real_dtype(a.dtype), copy=False)]
    if compute_uv:
        if subset:
            u, vh = u[..., lo:hi], vh[:, lo:hi]
        out += [u.reshape(batch + u.shape[1:]).astype(a.dtype, copy=False),
                vh.reshape(batch + vh.shape[1:]).astype(a.dtype, copy=False)]
    return out


# ---- eig (non-symmetric) ----

def _complex_dtype(dt):
    return np.result_type(_compute_dtype(dt), np.complex64)


def eig(a, *, compute_left_eigenvectors, compute_right_eigenvectors):
    """``[w, vl?, vr?]`` of every square matrix (``geev``): eigenvalues and unit-norm left
    (``vl^H a = w vl^H``) and right (``a vr = vr w``) eigenvectors whose largest component is
    real, as LAPACK normalises them; all complex."""
    flat = _flat(a)
    b, n, _ = flat.shape
    cdt = _complex_dtype(a.dtype)
    w = np.full((b, n), _nan(cdt), cdt)
    vl = np.full((b, n, n), _nan(cdt), cdt)
    vr = np.full((b, n, n), _nan(cdt), cdt)
    for i in np.flatnonzero(_finite(flat)):
        try:
            if _scipy_on():
                w[i], vl[i], vr[i] = _sla.eig(flat[i], left=True, right=True,
                                              check_finite=False)
            else:
                w[i], vr[i] = np.linalg.eig(flat[i])
                if compute_left_eigenvectors:
                    vl[i] = _left_from_right(vr[i])
        except np.linalg.LinAlgError:
            w[i] = vl[i] = vr[i] = _nan(cdt)
    out = [w.reshape(a.shape[:-1])]
    if compute_left_eigenvectors:
        out.append(vl.reshape(a.shape).astype(cdt, copy=False))
    if compute_right_eigenvectors:
        out.append(vr.reshape(a.shape).astype(cdt, copy=False))
    return out


def _left_from_right(vr):
    """Left eigenvectors from the right ones: the rows of ``vr^-1`` are ``u_j^H`` (scaled);
    normalised as LAPACK's ``geev`` (unit 2-norm, largest component real)."""
    with np.errstate(all="ignore"):
        u = np.linalg.inv(vr).conj().T
        u = u / np.linalg.norm(u, axis=0, keepdims=True)
        big = u[np.argmax(np.abs(u), axis=0), np.arange(u.shape[1])]
        return u * (np.abs(big) / big)[None, :] if np.all(big != 0) else u
