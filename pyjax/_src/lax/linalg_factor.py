"""The factorizations of ``lax.linalg`` other than Cholesky: LU, QR, eigh and SVD.

Helpers and the design notes are in ``linalg.py``; docs/linalg.md records the measurements.
"""
from __future__ import annotations

import enum

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.rules import NOT_DIFFERENTIABLE, Zero
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import reductions as red
from pyjax._src.lax import shape_ops
from pyjax._src.lax.ad_util import zero_tangent
from pyjax._src.lax.base import aval_of
from pyjax._src.lax import linalg as L
from pyjax._src.lax import linalg_host

_I32 = np.dtype(np.int32)


def _bcast(x, shape, dims):
    return shape_ops.broadcast_in_dim(x, shape, dims)


def _scalar_to(i, shape):
    return _bcast(i, shape, ())


def _col_at(a, i):
    """``a[..., :, i]`` for a traced scalar ``i``."""
    shape = L._shape(a)
    nd = len(shape)
    starts = [np.int32(0)] * (nd - 1) + [i]
    c = shape_ops.dynamic_slice(a, starts, shape[:-1] + (1,))
    return shape_ops.reshape(c, shape[:-1])


def _select_sum(mask, x, axis):
    """``sum(where(mask, x, 0), axis)``: picks one entry along ``axis`` per one-hot mask."""
    return red.reduce_sum(ew.select(mask, x, L._full_like(x, 0)), (axis,))


# ---- lu ----

def _lu_abstract_eval(a):
    L._check_matrix("lu", a)
    *batch, m, n = a.shape
    k = min(m, n)
    return [ShapedArray(a.shape, a.dtype), ShapedArray(tuple(batch) + (k,), _I32),
            ShapedArray(tuple(batch) + (m,), _I32)]


def _lu_step(i, a, piv, perm):
    shape = L._shape(a)
    nd = len(shape)
    vec = shape[:-1]                                   # (..., m)
    rows = shape_ops.broadcasted_iota(_I32, vec, nd - 2)
    iv = _scalar_to(i, vec)
    col = _col_at(a, i)
    mag = ew.select(ew.ge(rows, iv), ew.abs(col), L._full_like(ew.abs(col), -1))
    p = red.argmax(mag, nd - 2, _I32)                  # (...)
    pv = _bcast(p, vec, tuple(range(nd - 2)))
    e_i, e_p = ew.eq(rows, iv), ew.eq(rows, pv)
    to_mat = tuple(range(nd - 1))
    to_row = tuple(range(nd - 2)) + (nd - 1,)
    row_i = _select_sum(_bcast(e_i, shape, to_mat), a, nd - 2)   # (..., n)
    row_p = _select_sum(_bcast(e_p, shape, to_mat), a, nd - 2)
    # swap rows i and p: row i += (row_p - row_i), row p -= (row_p - row_i)
    sel = ew.sub(ew.convert_element_type(e_i, L._dtype(a)),
                 ew.convert_element_type(e_p, L._dtype(a)))
    a = ew.add(a, ew.mul(_bcast(sel, shape, to_mat), _bcast(ew.sub(row_p, row_i), shape,
                                                             to_row)))
    perm_i = _select_sum(e_i, perm, nd - 2)
    perm_p = _select_sum(e_p, perm, nd - 2)
    perm = ew.select(e_i, _bcast(perm_p, vec, tuple(range(nd - 2))),
                     ew.select(e_p, _bcast(perm_i, vec, tuple(range(nd - 2))), perm))
    kvec = L._shape(piv)
    piv = ew.select(ew.eq(shape_ops.broadcasted_iota(_I32, kvec, nd - 2), _scalar_to(i, kvec)),
                    _bcast(p, kvec, tuple(range(nd - 2))), piv)
    # eliminate below the pivot (a zero pivot means a zero column: nothing to do, as LAPACK)
    col = _col_at(a, i)
    d = _select_sum(e_i, col, nd - 2)
    dv = _bcast(d, vec, tuple(range(nd - 2)))
    zero = ew.eq(dv, L._full_like(dv, 0))
    below = ew.gt(rows, iv)
    lcol = ew.select(ew.bitwise_and(below, ew.bitwise_not(zero)),
                     ew.div(col, ew.select(zero, L._full_like(dv, 1), dv)), L._full_like(col, 0))
    mrows, mcols = L._index_grid(shape)
    im = _scalar_to(i, shape)
    u = ew.select(ew.gt(shape_ops.broadcasted_iota(_I32, shape[:-2] + shape[-1:], nd - 2),
                        _scalar_to(i, shape[:-2] + shape[-1:])), row_p, L._full_like(row_p, 0))
    a = ew.sub(a, ew.mul(_bcast(lcol, shape, to_mat), _bcast(u, shape, to_row)))
    a = ew.select(ew.bitwise_and(ew.eq(mcols, im), ew.gt(mrows, im)),
                  _bcast(lcol, shape, to_mat), a)
    return a, piv, perm


# Panels of this many columns are factored by the column loop; the rest of the matrix is
# updated per panel with a triangular solve and a matrix product (right-looking blocked LU, as
# LAPACK's getrf): the loop's O(n) iterations then touch O(m * LU_BLOCK) elements each.
LU_BLOCK = 64


def _lu_lower(ctx, a):
    *batch, m, n = a.aval.shape
    k = min(m, n)
    if L._on_host(ctx, k):
        # LAPACK's column-major layout by XLA's transposes (faster than NumPy's strided copy)
        lu_aval, piv_aval, perm_aval = ctx.avals_out
        t_aval = lu_aval.update(shape=tuple(batch) + (n, m))
        lu_t, piv, perm = L._host_kernel(ctx, "lu_transposed", [ctx.lower_fun(L._T, [a])],
                                         out_avals=[t_aval, piv_aval, perm_aval])
        lu_val = ctx.lower_fun(L._T, [lu_t])
        L._note_transpose_of(ctx, lu_val, lu_t)
        return [lu_val, piv, perm]
    if k > LU_BLOCK:
        return ctx.lower_fun(_lu_blocked, [a], multiple_results=True)
    if k == 0:  # an empty matrix: nothing to factor (the loop body could not even be traced)
        return [a] + ctx.lower_fun(lambda: [
            shape_ops.full(tuple(batch) + (0,), np.int32(0), _I32),
            shape_ops.broadcasted_iota(_I32, tuple(batch) + (m,), len(batch))], [],
            multiple_results=True)
    piv0 = ctx.lower_fun(lambda: shape_ops.full(tuple(batch) + (k,), np.int32(0), _I32), [])
    perm0 = ctx.lower_fun(lambda: shape_ops.broadcasted_iota(_I32, tuple(batch) + (m,),
                                                             len(batch)), [])
    return _fori_lower(ctx, k, _lu_step, [a, piv0, perm0])


def _rows(x, r0, r1):
    shape = L._shape(x)
    z = (0,) * (len(shape) - 2)
    return shape_ops.slice(x, z + (r0, 0), shape[:-2] + (r1, shape[-1]))


def _block(x, r0, r1, c0, c1):
    z = (0,) * (len(L._shape(x)) - 2)
    return shape_ops.slice(x, z + (r0, c0), L._shape(x)[:-2] + (r1, c1))


def _put(x, block, r0, c0):
    nb = len(L._shape(x)) - 2
    return shape_ops.dynamic_update_slice(x, block, [np.int32(0)] * nb + [np.int32(r0),
                                                                         np.int32(c0)])


def _lu_blocked(a):
    from pyjax._src.lax.sorting import _take_along
    shape = L._shape(a)
    nb = len(shape) - 2
    *batch, m, n = shape
    batch = tuple(batch)
    k = min(m, n)
    perm = shape_ops.broadcasted_iota(_I32, batch + (m,), nb)
    pivots = []
    for j0 in range(0, k, LU_BLOCK):
        j1 = min(j0 + LU_BLOCK, k)
        plu, ppiv, pperm = lu_p.bind(_block(a, j0, m, j0, j1))
        # the panel's row swaps apply to whole rows j0: of the matrix and of the permutation
        rows = _rows(a, j0, m)
        idx = shape_ops.broadcast_in_dim(pperm, L._shape(rows), tuple(range(nb + 1)))
        rows = _put(_take_along(rows, idx, nb), plu, 0, j0)
        a = _put(a, rows, j0, 0)
        tail = shape_ops.slice(perm, (0,) * nb + (j0,), batch + (m,))
        perm = shape_ops.dynamic_update_slice(perm, _take_along(tail, pperm, nb),
                                              [np.int32(0)] * nb + [np.int32(j0)])
        pivots.append(ew.add(ppiv, shape_ops.full(L._shape(ppiv), np.int32(j0), _I32)))
        if j1 < n:
            u12 = L.triangular_solve(_block(a, j0, j1, j0, j1), _block(a, j0, j1, j1, n),
                                     left_side=True, lower=True, unit_diagonal=True)
            a = _put(a, u12, j0, j1)
            if j1 < m:
                a22 = ew.sub(_block(a, j1, m, j1, n), L._mm(_block(a, j1, m, j0, j1), u12))
                a = _put(a, a22, j1, j1)
    return [a, shape_ops.concatenate(pivots, nb), perm]


def _permutation_matrix(perm, dtype):
    """``P`` with ``P @ x == x[perm]``: ``P[..., i, j] = perm[..., i] == j``."""
    shape = L._shape(perm) + (L._shape(perm)[-1],)
    nd = len(shape)
    cols = shape_ops.broadcasted_iota(_I32, shape, nd - 1)
    return ew.convert_element_type(ew.eq(_bcast(perm, shape, tuple(range(nd - 1))), cols),
                                   dtype)


def _pad_to(x, rows, cols):
    shape = L._shape(x)
    cfg = [(0, 0, 0)] * (len(shape) - 2) + [(0, rows - shape[-2], 0), (0, cols - shape[-1], 0)]
    return shape_ops.pad(x, np.array(0, L._dtype(x)), cfg)


def _lu_jvp(primals, tangents):
    a, = primals
    da, = tangents
    lu_, piv, perm = lu_p.bind(a)
    if type(da) is Zero:
        return [lu_, piv, perm], [zero_tangent(aval_of(lu_)), zero_tangent(aval_of(piv)),
                                  zero_tangent(aval_of(perm))]
    *_, m, n = L._shape(a)
    k = min(m, n)
    x = L._mm(_permutation_matrix(perm, L._dtype(a)), da)
    lsq = _pad_to(shape_ops.slice(lu_, (0,) * (len(L._shape(a)) - 1) + (0,),
                                  L._shape(a)[:-1] + (k,)), m, m)
    l_full = ew.add(L.tril(lsq, -1), L._eye_like(lsq))
    usq = _pad_to(shape_ops.slice(lu_, (0,) * len(L._shape(a)), L._shape(a)[:-2] + (k, n)),
                  n, n)
    u_full = L.triu(usq)
    if m < n:  # make the padded U invertible: ones on the diagonal below row m
        rows, cols = L._index_grid(L._shape(usq))
        extra = ew.bitwise_and(ew.eq(rows, cols), ew.ge(rows, L._full_like(rows, m)))
        u_full = ew.select(extra, L._full_like(usq, 1), u_full)
    la = L.triangular_solve(l_full, x, left_side=True, lower=True, unit_diagonal=True)
    lau = L.triangular_solve(u_full, la, left_side=False, lower=False)
    dlu = ew.add(L._mm(l_full, L.tril(lau, -1)), L._mm(L.triu(lau), u_full))
    return [lu_, piv, perm], [dlu, zero_tangent(aval_of(piv)), zero_tangent(aval_of(perm))]


def _fori_lower(ctx, n, body, state):
    return L._fori_lower(ctx, n, body, state)


lu_p = Primitive("lu", abstract_eval=_lu_abstract_eval, lower=_lu_lower, jvp=_lu_jvp,
                 multiple_results=True)
L._set_batch(lu_p)


def lu(x):
    """LU decomposition with partial pivoting: ``(lu, pivots, permutation)`` with
    ``x[..., permutation, :] == l @ u``, ``l`` unit lower triangular (below ``lu``'s diagonal)
    and ``u`` upper triangular (on and above it)."""
    return tuple(lu_p.bind(x))


def _l2p_abstract_eval(pivots, *, permutation_size):
    if pivots.ndim < 1 or pivots.dtype != _I32:
        raise TypeError(f"lu_pivots_to_permutation: pivots must be an int32 array of rank >= 1,"
                        f" got {pivots.dtype.name}{list(pivots.shape)}")
    if permutation_size < pivots.shape[-1]:
        raise ValueError(f"lu_pivots_to_permutation: permutation_size ({permutation_size}) "
                         f"must be >= the number of pivots ({pivots.shape[-1]})")
    return ShapedArray(pivots.shape[:-1] + (permutation_size,), _I32)


def _l2p_lower(ctx, pivots, *, permutation_size):
    batch = pivots.aval.shape[:-1]
    k = pivots.aval.shape[-1]
    nb = len(batch)
    perm0 = ctx.lower_fun(lambda: shape_ops.broadcasted_iota(
        _I32, batch + (permutation_size,), nb), [])

    def step(i, perm, piv):
        vec = L._shape(perm)
        rows = shape_ops.broadcasted_iota(_I32, vec, nb)
        p = _select_sum(ew.eq(shape_ops.broadcasted_iota(_I32, L._shape(piv), nb),
                              _scalar_to(i, L._shape(piv))), piv, nb)
        e_i, e_p = ew.eq(rows, _scalar_to(i, vec)), ew.eq(rows, _bcast(p, vec, tuple(range(nb))))
        perm_i = _bcast(_select_sum(e_i, perm, nb), vec, tuple(range(nb)))
        perm_p = _bcast(_select_sum(e_p, perm, nb), vec, tuple(range(nb)))
        return ew.select(e_i, perm_p, ew.select(e_p, perm_i, perm)), piv
    return _fori_lower(ctx, k, step, [perm0, pivots])[:1]


lu_pivots_to_permutation_p = Primitive(
    "lu_pivots_to_permutation", abstract_eval=_l2p_abstract_eval,
    lower=lambda ctx, pivots, **p: _l2p_lower(ctx, pivots, **p)[0], jvp=NOT_DIFFERENTIABLE)
L._set_batch(lu_pivots_to_permutation_p)


def lu_pivots_to_permutation(pivots, permutation_size: int):
    """The permutation that the row swaps ``pivots`` (LAPACK's, zero-based) apply to
    ``range(permutation_size)``."""
    return lu_pivots_to_permutation_p.bind(pivots, permutation_size=int(permutation_size))


# ---- QR: the plugin's Householder custom calls ----

def _no_jvp(name):
    def jvp(primals, tangents, **params):
        raise NotImplementedError(f"differentiation of lax.linalg.{name} is not implemented "
                                  f"(JAX does not define it either); differentiate qr instead")
    return jvp


def _geqrf_abstract_eval(a):
    L._check_matrix("geqrf", a)
    *batch, m, n = a.shape
    return [ShapedArray(a.shape, a.dtype), ShapedArray(tuple(batch) + (min(m, n),), a.dtype)]


def _geqrf_lower(ctx, a):
    return _custom(ctx, "Qr", [a], list(ctx.avals_out))


def _custom(ctx, target, operands, avals, config=""):
    return L._custom_call(ctx, target, operands, avals, config)


geqrf_p = Primitive("geqrf", abstract_eval=_geqrf_abstract_eval, lower=_geqrf_lower,
                    multiple_results=True, jvp=_no_jvp("geqrf"))
L._set_batch(geqrf_p)


def geqrf(a):
    """Householder QR in LAPACK's packed form: ``(a_packed, taus)``."""
    return tuple(geqrf_p.bind(a))


def _hp_abstract_eval(a, taus):
    L._check_matrix("householder_product", a)
    *batch, m, n = a.shape
    if m < n:
        raise ValueError(f"householder_product: a must have at least as many rows as columns, "
                         f"got shape {a.shape}")
    if taus.shape != tuple(batch) + (taus.shape[-1],) or taus.shape[-1] > n or \
            taus.dtype != a.dtype:
        raise ValueError(f"householder_product: taus must be {a.dtype.name}[..., k] with k <= "
                         f"{n} and a's batch dims, got {taus.dtype.name}{list(taus.shape)}")
    return ShapedArray(a.shape, a.dtype)


householder_product_p = Primitive(
    "householder_product", abstract_eval=_hp_abstract_eval,
    lower=lambda ctx, a, taus: _custom(ctx, "ProductOfElementaryHouseholderReflectors",
                                       [a, taus], ctx.avals_out[0]),
    jvp=_no_jvp("householder_product"))
L._set_batch(householder_product_p)


def householder_product(a, taus):
    """The product of the elementary reflectors ``I - tau v v^H`` stored in ``a`` (below the
    diagonal, unit leading entry) and ``taus``: the ``m x n`` matrix ``Q`` of a QR."""
    return householder_product_p.bind(a, taus)


def ormqr(a, taus, c, *, left=True, transpose=False):
    """``Q @ c`` (``left``) or ``c @ Q``, with ``Q^H`` for ``transpose``, where ``Q`` is the full
    ``m x m`` orthogonal factor held by ``geqrf``'s reflectors ``a`` (``m x n``) and ``taus``.
    Q is formed by ``householder_product`` over the reflectors padded to ``m x m`` (the
    plugin has no LAPACK ormqr), then multiplied."""
    a_shape, c_shape = tuple(aval_of(a).shape), tuple(aval_of(c).shape)
    if len(a_shape) < 2 or len(c_shape) < 2:
        raise ValueError(f"ormqr: a and c must be matrices (rank >= 2), got shapes {a_shape} "
                         f"and {c_shape}")
    m, n = a_shape[-2:]
    if c_shape[-2 if left else -1] != m:
        side = "rows" if left else "columns"
        raise ValueError(f"ormqr: c must have {m} {side} (a's row count) for left={left}, "
                         f"got c of shape {c_shape} with a of shape {a_shape}")
    if n >= m:
        square = shape_ops.slice_in_dim(a, 0, m, axis=len(a_shape) - 1)
    else:
        zero = np.zeros((), aval_of(a).dtype)
        square = shape_ops.pad(a, zero, [(0, 0, 0)] * (len(a_shape) - 1) + [(0, m - n, 0)])
    q = householder_product(square, taus)
    if transpose:
        q = L._H(q)
    return L._mm(q, c) if left else L._mm(c, q)


def _qr_abstract_eval(a, *, pivoting, full_matrices):
    L._check_matrix("qr", a)
    *batch, m, n = a.shape
    k = m if full_matrices else min(m, n)
    outs = [ShapedArray(tuple(batch) + (m, k), a.dtype),
            ShapedArray(tuple(batch) + (k, n), a.dtype)]
    if pivoting:  # the column permutation, as JAX's (int32, one entry per column)
        outs.append(ShapedArray(tuple(batch) + (n,), _I32))
    return outs


def _qr_impl(a, *, full_matrices):
    shape = L._shape(a)
    nb = len(shape) - 2
    *batch, m, n = shape
    k = min(m, n)
    packed, taus = geqrf_p.bind(a)
    z = (0,) * nb
    if full_matrices and m > n:
        q = householder_product_p.bind(_pad_to(packed, m, m), _pad_taus(taus, m))
        r = L.triu(packed)
    else:
        q = householder_product_p.bind(
            shape_ops.slice(packed, z + (0, 0), tuple(batch) + (m, k)), taus)
        r = L.triu(shape_ops.slice(packed, z + (0, 0), tuple(batch) + (k, n)))
    return [q, r]


def _pad_taus(taus, size):
    shape = L._shape(taus)
    cfg = [(0, 0, 0)] * (len(shape) - 1) + [(0, size - shape[-1], 0)]
    return shape_ops.pad(taus, np.array(0, L._dtype(taus)), cfg)


def _qr_jvp(primals, tangents, *, pivoting, full_matrices):
    a, = primals
    da, = tangents
    outs = qr_p.bind(a, pivoting=pivoting, full_matrices=full_matrices)
    q, r = outs[:2]
    if type(da) is Zero:
        return outs, [zero_tangent(aval_of(o)) for o in outs]
    *_, m, n = L._shape(a)
    if m < n or (full_matrices and m != n):
        raise NotImplementedError("Unimplemented case of QR decomposition derivative")
    if pivoting:
        # a P = q r with P constant (almost everywhere): the rule of an unpivoted QR of a P,
        # whose tangent is da P (da's columns in the order perm)
        perm = outs[2]
        da = L._mm(da, L._T(_permutation_matrix(perm, L._dtype(a))))
    dx_rinv = L.triangular_solve(r, da)  # da @ r^-1
    qt_dx_rinv = L._mm(L._H(q), dx_rinv)
    low = L.tril(qt_dx_rinv, -1)
    do = ew.sub(low, L._H(low))  # skew-Hermitian
    if dtypes.is_complex(L._dtype(a)):
        eye = L._eye_like(qt_dx_rinv)
        do = ew.add(do, ew.mul(eye, ew.sub(qt_dx_rinv, ew.convert_element_type(
            ew.real(qt_dx_rinv), L._dtype(a)))))
    dq = ew.add(L._mm(q, ew.sub(do, qt_dx_rinv)), dx_rinv)
    dr = L._mm(ew.sub(qt_dx_rinv, do), r)
    tangents_out = [dq, dr] + [zero_tangent(aval_of(o)) for o in outs[2:]]
    return outs, tangents_out


def _qr_lower(ctx, a, *, pivoting, full_matrices):
    if pivoting:
        return _qr_pivoted_lower(ctx, a, full_matrices=full_matrices)
    if L._on_host(ctx, min(a.aval.shape[-2:])):
        return L._host_kernel(ctx, "qr", [a], full_matrices=full_matrices)
    return ctx.lower_fun(_qr_impl, [a], {"full_matrices": full_matrices},
                         multiple_results=True)


def _qr_pivoted_lower(ctx, a, *, full_matrices):
    """Column-pivoted QR: LAPACK's ``geqp3`` on the host, at every size (XLA has no pivoted
    QR; JAX computes it with LAPACK/cuSOLVER only)."""
    if ctx.platform != "cpu":
        raise NotImplementedError(f"lax.linalg.qr: pivoting=True is implemented on the CPU "
                                  f"only (LAPACK's geqp3), not on {ctx.platform!r}")
    if min(a.aval.shape[-2:]) == 0:
        return ctx.lower_fun(_qr_pivoted_empty, [a], {"full_matrices": full_matrices},
                             multiple_results=True)
    return L._host_kernel(ctx, "qr", [a], full_matrices=full_matrices, pivoting=True)


def _qr_pivoted_empty(a, *, full_matrices):
    """An empty matrix: ``q`` the identity's first columns, ``r`` empty, the permutation
    zeros (what JAX 0.10.2 returns: ``geqp3`` leaves its zero-initialised pivots alone)."""
    *batch, m, n = L._shape(a)
    k = m if full_matrices else min(m, n)
    rows, cols = L._index_grid(tuple(batch) + (m, k))
    q = ew.convert_element_type(ew.eq(rows, cols), L._dtype(a))
    r = L._full_like(shape_ops.slice(a, (0,) * (len(batch) + 2), tuple(batch) + (k, n)), 0)
    perm = _bcast(np.array(0, _I32), tuple(batch) + (n,), ())
    return [q, r, perm]


qr_p = Primitive("qr", abstract_eval=_qr_abstract_eval, lower=_qr_lower, jvp=_qr_jvp,
                 multiple_results=True)
L._set_batch(qr_p)


def qr(x, *, pivoting: bool = False, full_matrices: bool = True, use_magma=None):
    """QR decomposition ``x == q @ r``: ``(q, r)`` with ``q`` orthonormal columns and ``r``
    upper triangular; ``full_matrices=False`` gives the reduced ``m x min(m, n)`` ``q``.
    ``pivoting=True`` (CPU: LAPACK's ``geqp3``) returns ``(q, r, p)`` with
    ``x[..., p] == q @ r``, ``p`` an int32 column permutation and ``|diag(r)|`` not
    increasing."""
    # use_magma picks the library of JAX's GPU QR (same factorization); JAX ignores it on the
    # CPU, and pyjax's QR is one algorithm on every platform
    return tuple(qr_p.bind(x, pivoting=bool(pivoting), full_matrices=bool(full_matrices)))


# ---- eigh: the plugin's Jacobi eigensolver ----

def _eigh_abstract_eval(a, *, lower, sort_eigenvalues, subset_by_index):
    L._check_matrix("eigh", a, square=True)
    n = a.shape[-1]
    k = n
    if subset_by_index is not None:
        lo, hi = subset_by_index
        if not 0 <= lo <= hi <= n:
            raise ValueError(f"eigh: subset_by_index must satisfy 0 <= lo <= hi <= n = {n}, "
                             f"got {subset_by_index}")
        k = hi - lo
    return [ShapedArray(a.shape[:-1] + (k,), a.dtype),
            ShapedArray(a.shape[:-2] + (k,), dtypes.to_real_dtype(a.dtype))]


# Jacobi stops when the off-diagonal norm is below tol * the norm: about the unit roundoff.
_EIGH_TOL = {np.dtype(np.float32): "1.0e-7", np.dtype(np.complex64): "1.0e-7",
             np.dtype(np.float64): "1.0e-16", np.dtype(np.complex128): "1.0e-16"}


def _eigh_lower(ctx, a, *, lower, sort_eigenvalues, subset_by_index):
    if L._on_host(ctx, a.aval.shape[-1], L.HOST_MIN_SPECTRAL):  # (LAPACK sorts in any case)
        return L._host_kernel(ctx, "eigh", [a], lower=lower, subset_by_index=subset_by_index)
    dt = a.aval.dtype
    full = [ShapedArray(a.aval.shape, dt), ShapedArray(a.aval.shape[:-1],
                                                       dtypes.to_real_dtype(dt))]
    cfg = f"{int(lower)},{int(sort_eigenvalues)},100,{_EIGH_TOL[dt]}"
    if dtypes.is_complex(dt):
        # LAPACK (and JAX) ignore the imaginary parts of the diagonal; the Jacobi expansion
        # used them (wrong eigenvalues for an unsymmetrized input with a complex diagonal)
        a = ctx.lower_fun(_real_diagonal, [a])
    v, w = _custom(ctx, "Eigh", [a], full, cfg)
    # The Jacobi expansion returns finite garbage for non-finite input; LAPACK gives NaNs.
    v, w = ctx.lower_fun(_nan_unless_finite, [a, v, w], multiple_results=True)
    if np.dtype(dt).itemsize * (1 if dtypes.is_complex(dt) else 2) == 16:  # f64 / c128
        v, w = ctx.lower_fun(_refine_eigh, [a, v, w], {"lower": lower},
                             multiple_results=True)
    if subset_by_index is None or tuple(subset_by_index) == (0, a.aval.shape[-1]):
        return [v, w]
    lo, hi = subset_by_index
    nb = len(a.aval.shape) - 2

    def cut(v, w):
        return [shape_ops.slice(v, (0,) * (nb + 1) + (lo,), L._shape(v)[:-1] + (hi,)),
                shape_ops.slice(w, (0,) * nb + (lo,), L._shape(w)[:-1] + (hi,))]
    return ctx.lower_fun(cut, [v, w], multiple_results=True)


def _real_diagonal(a):
    rows, cols = L._index_grid(L._shape(a))
    return ew.select(ew.eq(rows, cols), ew.convert_element_type(ew.real(a), L._dtype(a)), a)


def _nan_unless_finite(a, *outs):
    nd = len(L._shape(a))
    fin = ew.is_finite(L._real(a))
    if dtypes.is_complex(L._dtype(a)):
        fin = ew.bitwise_and(fin, ew.is_finite(ew.imag(a)))
    ok = red.reduce_and(fin, (nd - 2, nd - 1))
    res = []
    for o in outs:
        okb = _bcast(ok, L._shape(o), tuple(range(nd - 2)))
        res.append(ew.select(okb, o, L._full_like(o, np.nan)))
    return res


def _refine_eigh(a, v, w, *, lower):
    """One first-order refinement of the Jacobi eigenvectors: in double precision the plugin's
    expansion stalls with off-diagonal residues of about 1e-8 * |a| (measured: tol and max_iter
    do not move it), whatever the tolerance. With ``b = v^H a v = diag(d) + e``, eigenvector j
    of ``b`` is ``e_j + sum_i e_ij / (d_j - d_i) e_i`` to first order, then one Newton-Schulz
    step restores orthonormality and Rayleigh quotients give the eigenvalues. Pairs closer
    than 10 |e_ij| (near-degenerate) are left as they are."""
    herm = L.tril(a) if lower else L.triu(a)
    strict = L.tril(a, -1) if lower else L.triu(a, 1)
    herm = ew.add(herm, L._H(strict))
    b = L._mm(L._H(v), L._mm(herm, v))
    eye = L._eye_like(b)
    d = L._real(L._diag(b))
    nd = len(L._shape(b))
    drow = _bcast(d, L._shape(d) + (L._shape(d)[-1],), tuple(range(nd - 2)) + (nd - 1,))
    gap = ew.sub(drow, L._T(drow))                              # d_j - d_i
    e = ew.mul(b, ew.sub(L._full_like(b, 1), eye))
    ok = ew.gt(ew.abs(gap), ew.mul(L._full_like(gap, 10), ew.abs(e)))
    safe = ew.select(ok, gap, L._full_like(gap, 1))
    x = ew.select(ok, ew.div(e, ew.convert_element_type(safe, L._dtype(b))), L._full_like(b, 0))
    v1 = ew.add(v, L._mm(v, x))
    gram = L._mm(L._H(v1), v1)
    v1 = L._mm(v1, ew.mul(ew.sub(ew.mul(L._full_like(eye, 3), eye), gram), L._full_like(eye, 0.5)))
    w1 = L._real(L._diag(L._mm(L._H(v1), L._mm(herm, v1))))
    return [v1, w1]


def _eigh_jvp(primals, tangents, *, lower, sort_eigenvalues, subset_by_index):
    a, = primals
    da, = tangents
    if subset_by_index is not None and tuple(subset_by_index) != (0, L._shape(a)[-1]):
        raise NotImplementedError("Derivatives not defined for partial eigen decomposition.")
    v, w = eigh_p.bind(a, lower=lower, sort_eigenvalues=sort_eigenvalues,
                       subset_by_index=subset_by_index)
    if type(da) is Zero:
        return [v, w], [zero_tangent(aval_of(v)), zero_tangent(aval_of(w))]
    dt = L._dtype(a)
    n = L._shape(a)[-1]
    wc = ew.convert_element_type(w, dt) if dtypes.is_complex(dt) else w
    wrow = _bcast(wc, L._shape(a), tuple(range(len(L._shape(a)) - 2)) + (len(L._shape(a)) - 1,))
    eye = L._eye_like(a)
    # F[i, j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it
    fmat = ew.sub(ew.div(L._full_like(a, 1), ew.add(eye, ew.sub(wrow, L._T(wrow)))), eye)
    vhdav = L._mm(L._H(v), L._mm(da, v))
    dv = L._mm(v, ew.mul(fmat, vhdav))
    dw = L._real(L._diag(vhdav))
    del n
    return [v, w], [dv, dw]


eigh_p = Primitive("eigh", abstract_eval=_eigh_abstract_eval, lower=_eigh_lower,
                   jvp=_eigh_jvp, multiple_results=True)
L._set_batch(eigh_p)


def eigh(x, *, lower: bool = True, symmetrize_input: bool = True, sort_eigenvalues: bool = True,
         subset_by_index=None):
    """Eigendecomposition of the Hermitian ``x``: ``(v, w)`` with ``x @ v == v * w``, the
    eigenvalues ``w`` ascending (``sort_eigenvalues``); only the ``lower`` (or upper) triangle
    is read unless ``symmetrize_input``. ``subset_by_index=(lo, hi)`` keeps eigenpairs
    ``lo..hi-1``."""
    if symmetrize_input:
        x = L.symmetrize(x)
    if subset_by_index is not None:
        subset_by_index = tuple(int(i) for i in subset_by_index)
    v, w = eigh_p.bind(x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues),
                       subset_by_index=subset_by_index)
    return v, w


# ---- svd: eigh of the Jordan-Wielandt matrix ----

def _svd_abstract_eval(a, *, full_matrices, compute_uv, subset_by_index, algorithm):
    L._check_matrix("svd", a)
    *batch, m, n = a.shape
    batch = tuple(batch)
    k = min(m, n)
    if subset_by_index is not None:
        lo, hi = subset_by_index
        if not 0 <= lo <= hi <= k:
            raise ValueError(f"svd: subset_by_index must satisfy 0 <= lo <= hi <= min(m, n) = "
                             f"{k}, got {subset_by_index}")
        if full_matrices and (lo, hi) != (0, k):
            raise ValueError("full_matrices and subset_by_index cannot both be set")
        k = hi - lo
    s = ShapedArray(batch + (k,), dtypes.to_real_dtype(a.dtype))
    if not compute_uv:
        return [s]
    ku, kv = (m, n) if full_matrices else (k, k)
    return [s, ShapedArray(batch + (m, ku), a.dtype), ShapedArray(batch + (kv, n), a.dtype)]


def _normalize_cols(x):
    nd = len(L._shape(x))
    norm = ew.sqrt(red.reduce_sum(L._real(ew.mul(x, L._conj(x))), (nd - 2,)))
    safe = ew.select(ew.eq(norm, L._full_like(norm, 0)), L._full_like(norm, 1), norm)
    return L._mul_cols(x, ew.convert_element_type(ew.div(L._full_like(safe, 1), safe),
                                                  L._dtype(x)))


def _svd_impl(a, *, full_matrices, compute_uv, subset_by_index):
    shape = L._shape(a)
    *batch, m, n = shape
    batch = tuple(batch)
    nb = len(batch)
    if m < n:  # svd(a^H) = v s u^H
        outs = _svd_impl(L._H(a), full_matrices=full_matrices, compute_uv=compute_uv,
                         subset_by_index=subset_by_index)
        if not compute_uv:
            return outs
        s, u, vh = outs
        return [s, L._H(vh), L._H(u)]
    z = (0,) * nb
    size = m + n
    # M = [[0, a], [a^H, 0]]
    top = _pad_cols_left(a, size)                     # (m, m+n): [0, a]
    bottom = _pad_cols_right(L._H(a), size)           # (n, m+n): [a^H, 0]
    big = shape_ops.concatenate([top, bottom], nb)
    v, w = eigh_p.bind(big, lower=True, sort_eigenvalues=True, subset_by_index=None)
    # the n largest eigenvalues, descending, are the singular values
    s = shape_ops.rev(shape_ops.slice(w, z + (m,), batch + (size,)), (nb,))
    s = ew.max(s, L._full_like(s, 0))
    lo, hi = (0, n) if subset_by_index is None else subset_by_index
    s = shape_ops.slice(s, z + (lo,), batch + (hi,))
    if not compute_uv:
        return [s]
    x = shape_ops.rev(shape_ops.slice(v, z + (0, m), batch + (size, size)), (nb + 1,))
    x = shape_ops.slice(x, z + (0, lo), batch + (size, hi))
    u = _normalize_cols(shape_ops.slice(x, z + (0, 0), batch + (m, hi - lo)))
    vv = _normalize_cols(shape_ops.slice(x, z + (m, 0), batch + (size, hi - lo)))
    if full_matrices and m > n:
        # the rest of u: eigenvectors [u_perp; 0] of the m - n zero eigenvalues
        rest = shape_ops.slice(v, z + (0, n), batch + (m, m))
        u = shape_ops.concatenate([u, _normalize_cols(rest)], nb + 1)
    return [s, _orthonormalize(u), L._H(_orthonormalize(vv))]


def _orthonormalize(x):
    """``x`` (``m x k``, ``m >= k``, orthonormal columns except those of (near) zero singular
    values, which come last) with those columns replaced by an orthonormal completion: the
    eigenvectors of a multiple zero eigenvalue of the Jordan-Wielandt matrix mix ``[u; 0]`` and
    ``[0; v]``, so their halves are neither unit nor orthogonal. Householder QR keeps the good
    prefix (up to the signs restored from ``diag(r)``) and completes it."""
    shape = L._shape(x)
    nb = len(shape) - 2
    k = shape[-1]
    packed, taus = geqrf_p.bind(x)
    q = householder_product_p.bind(packed, taus)
    d = shape_ops.slice(L._diag(_pad_cols_right(packed, shape[-2])), (0,) * (nb + 1),
                        shape[:-2] + (k,))
    mag = ew.abs(d)
    zero = ew.eq(mag, L._full_like(mag, 0))
    phase = ew.div(d, ew.convert_element_type(ew.select(zero, L._full_like(mag, 1), mag),
                                              L._dtype(d)))
    phase = ew.select(zero, L._full_like(d, 1), phase)
    return L._mul_cols(q, phase)


def _pad_cols_left(x, size):
    shape = L._shape(x)
    cfg = [(0, 0, 0)] * (len(shape) - 1) + [(size - shape[-1], 0, 0)]
    return shape_ops.pad(x, np.array(0, L._dtype(x)), cfg)


def _pad_cols_right(x, size):
    shape = L._shape(x)
    cfg = [(0, 0, 0)] * (len(shape) - 1) + [(0, size - shape[-1], 0)]
    return shape_ops.pad(x, np.array(0, L._dtype(x)), cfg)


def _svd_jvp(primals, tangents, *, full_matrices, compute_uv, subset_by_index, algorithm):
    a, = primals
    da, = tangents
    *_, m, n = L._shape(a)
    if subset_by_index is not None and tuple(subset_by_index) != (0, min(m, n)):
        raise NotImplementedError("Derivatives not defined for partial SVD.")
    if compute_uv and full_matrices:
        raise NotImplementedError("Singular value decomposition JVP not implemented for full "
                                  "matrices")
    s, u, vh = svd_p.bind(a, full_matrices=False, compute_uv=True, subset_by_index=None,
                          algorithm=algorithm)
    outs = [s, u, vh] if compute_uv else [s]
    if type(da) is Zero:
        return outs, [zero_tangent(aval_of(o)) for o in outs]
    dt = L._dtype(a)
    ut, v = L._H(u), L._H(vh)
    ds_mat = L._mm(ut, L._mm(da, v))
    ds = L._real(L._diag(ds_mat))
    if not compute_uv:
        return outs, [ds]
    k = L._shape(s)[-1]
    kk = L._shape(ds_mat)
    nd = len(kk)
    srow = _bcast(s, kk, tuple(range(nd - 2)) + (nd - 1,))   # s[..., None, :]
    scol = L._T(srow)
    eye = L._eye_like(srow)
    s_diffs = ew.mul(ew.add(srow, scol), ew.sub(srow, scol))
    f = ew.sub(ew.div(L._full_like(s_diffs, 1), ew.add(s_diffs, eye)), eye)
    s_zero = ew.convert_element_type(ew.eq(s, L._full_like(s, 0)), L._dtype(s))
    s_inv = ew.sub(ew.div(L._full_like(s, 1), ew.add(s, s_zero)), s_zero)
    c = lambda x: ew.convert_element_type(x, dt)  # noqa: E731
    dss = ew.mul(c(srow), ds_mat)
    sds = ew.mul(c(scol), ds_mat)
    dudv_diag = ew.mul(ew.mul(L._full_like(ds_mat, 0.5), ew.sub(ds_mat, L._H(ds_mat))),
                       c(L._diag_matrix(s_inv, k)))
    du = L._mm(u, ew.add(ew.mul(c(f), ew.add(dss, L._H(dss))), dudv_diag))
    dv = L._mm(v, ew.mul(c(f), ew.add(sds, L._H(sds))))
    if m > n:
        dav = L._mm(da, v)
        du = ew.add(du, L._mul_cols(ew.sub(dav, L._mm(u, L._mm(ut, dav))), c(s_inv)))
    if n > m:
        dahu = L._mm(L._H(da), u)
        dv = ew.add(dv, L._mul_cols(ew.sub(dahu, L._mm(v, L._mm(vh, dahu))), c(s_inv)))
    return outs, [ds, du, L._H(dv)]


class SvdAlgorithm(enum.Enum):
    """The SVD algorithm of ``lax.linalg.svd`` (JAX's names and values). On the CPU, as JAX's
    CPU backend: ``DEFAULT`` and ``DIVIDE_AND_CONQUER`` run LAPACK's ``gesdd``, ``QR`` its
    ``gesvd``; ``JACOBI`` and ``POLAR`` (TPU/GPU algorithms in JAX) raise."""
    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


# the LAPACK driver of each algorithm on the CPU (None: not available there, as in JAX)
_SVD_DRIVER = {None: "gesdd", SvdAlgorithm.DEFAULT: "gesdd",
               SvdAlgorithm.DIVIDE_AND_CONQUER: "gesdd", SvdAlgorithm.QR: "gesvd",
               SvdAlgorithm.JACOBI: None, SvdAlgorithm.POLAR: None}


def _svd_lower(ctx, a, *, algorithm, **params):
    driver = _svd_driver(ctx, algorithm)
    # every non-empty size: the Jordan-Wielandt path would mix LAPACK's eigh (from
    # HOST_MIN_SPECTRAL) whose eigenvector signs jump under perturbation, and it is slower
    if L._on_host(ctx, min(a.aval.shape[-2:]), 1):
        return L._host_kernel(ctx, "svd", [a], driver=driver, **params)
    return ctx.lower_fun(_svd_impl, [a], params, multiple_results=True)


def _svd_driver(ctx, algorithm):
    if ctx.platform != "cpu":
        if algorithm not in (None, SvdAlgorithm.DEFAULT):
            raise NotImplementedError(f"lax.linalg.svd: algorithm={algorithm} is not "
                                      f"implemented on {ctx.platform!r} (only DEFAULT)")
        return None
    driver = _SVD_DRIVER[algorithm]
    if driver is None:  # JAX 0.10.2's words (it raises for both on the CPU)
        raise NotImplementedError(f"lax.linalg.svd: algorithm={algorithm}: The SVD Jacobi and "
                                  "Polar algorithms are not implemented on CPU.")
    if driver == "gesvd" and not linalg_host._scipy_on():
        raise NotImplementedError(f"lax.linalg.svd: algorithm={algorithm} runs LAPACK's gesvd, "
                                  "which needs SciPy (NumPy only exposes gesdd)")
    return driver


svd_p = Primitive("svd", abstract_eval=_svd_abstract_eval, lower=_svd_lower, jvp=_svd_jvp,
                  multiple_results=True)
L._set_batch(svd_p)


def svd(x, *, full_matrices: bool = True, compute_uv: bool = True, subset_by_index=None,
        algorithm=None):
    """Singular value decomposition: ``(u, s, vh)`` with ``x == u[..., :k] * s @ vh[..., :k, :]``
    and ``s`` descending; only ``s`` when ``compute_uv=False``. ``algorithm``: a
    ``SvdAlgorithm`` (``None`` is ``DEFAULT``)."""
    if algorithm is not None and not isinstance(algorithm, SvdAlgorithm):
        raise NotImplementedError(f"lax.linalg.svd: algorithm must be a "
                                  f"lax.linalg.SvdAlgorithm or None, got {algorithm!r}")
    if subset_by_index is not None:
        subset_by_index = tuple(int(i) for i in subset_by_index)
    outs = svd_p.bind(x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv),
                      subset_by_index=subset_by_index, algorithm=algorithm)
    if not compute_uv:
        return outs[0]
    s, u, vh = outs
    return u, s, vh
