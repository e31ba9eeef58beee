"""The structured ``lax.linalg`` primitives: ``tridiagonal_solve``, ``tridiagonal``,
``hessenberg``, ``schur`` and ``cholesky_update``.

Every one takes leading batch dimensions (its batching rule moves the mapped axis to the front,
``linalg._set_batch``). docs/linalg_structured.md records what each is computed with:

* ``tridiagonal_solve``: Gaussian elimination with partial pivoting (LAPACK ``gtsv``'s
  algorithm: a row swap brings a second superdiagonal) in two ``stablehlo.while`` loops, a
  forward sweep and a back substitution, vectorized over the batch and the right-hand sides.
  Linear in ``b`` (transpose: the solve with the transposed matrix), JVP in all operands.
* ``hessenberg``, ``tridiagonal``, ``schur``: NumPy host kernels through the FFI
  (``structured_kernels.py``), CPU only as JAX's; not differentiable, as JAX.
* ``cholesky_update``: Givens rotations in a ``stablehlo.while`` over the columns.
"""
from __future__ import annotations

import functools

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.rules import Zero, is_undefined_primal
from pyjax._src.lax import base
from pyjax._src.lax import blas_threads
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import linalg as L
from pyjax._src.lax import reductions as red
from pyjax._src.lax import shape_ops
from pyjax._src.lax import structured_kernels as kernels
from pyjax._src.lax.ad_util import instantiate, zero_tangent
from pyjax._src.lax.base import aval_of

__all__ = ["tridiagonal_solve", "tridiagonal", "hessenberg", "schur", "cholesky_update",
           "tridiagonal_solve_p", "tridiagonal_p", "hessenberg_p", "schur_p",
           "cholesky_update_p"]

_I32 = np.dtype(np.int32)


def _no_jvp(name):
    def jvp(primals, tangents, **params):
        raise NotImplementedError(f"differentiation of lax.linalg.{name} is not implemented "
                                  f"(JAX does not define it either)")
    return jvp


# ---- rows of arrays whose leading axis is the row index ----

def _row(x, i):
    shape = L._shape(x)
    r = shape_ops.dynamic_slice(x, [i] + [np.int32(0)] * (len(shape) - 1), (1,) + shape[1:])
    return shape_ops.reshape(r, shape[1:])


def _set_row(x, i, v):
    shape = L._shape(x)
    return shape_ops.dynamic_update_slice(x, shape_ops.reshape(v, (1,) + shape[1:]),
                                          [i] + [np.int32(0)] * (len(shape) - 1))


def _sel(p, a, b):
    return ew.select(shape_ops.broadcast_in_dim(p, L._shape(a), tuple(range(len(L._shape(a))))),
                     a, b)


# ---- tridiagonal_solve ----

def _ts_abstract_eval(dl, d, du, b):
    for name, x in (("dl", dl), ("d", d), ("du", du)):
        if x.ndim < 1 or x.shape != d.shape or x.dtype != b.dtype:
            raise ValueError(f"tridiagonal_solve: dl, d and du must have equal shapes "
                             f"(..., m) and b's dtype {b.dtype.name}, got {name} "
                             f"{x.dtype.name}{list(x.shape)} (d: {list(d.shape)})")
    if b.ndim != d.ndim + 1 or b.shape[:-1] != d.shape:
        raise ValueError(f"tridiagonal_solve: b must have shape (..., m, n) with (..., m) = "
                         f"{d.shape}, got {b.shape}")
    if not dtypes.is_inexact(b.dtype):
        raise TypeError(f"tridiagonal_solve: operands must be floating or complex, got "
                        f"{b.dtype.name}")
    return ShapedArray(b.shape, b.dtype)


def _to_rows(dl, d, du, b):
    """Rows first: diagonals ``(m, ...)``, ``b`` ``(m, ..., n)``; ``du[m-1]`` (outside the
    matrix) zeroed."""
    nb = len(L._shape(d)) - 1
    perm = (nb,) + tuple(range(nb))
    dl_r, d_r, du_r = (shape_ops.transpose(x, perm) for x in (dl, d, du))
    m = L._shape(d)[-1]
    du_r = _set_row(du_r, np.int32(m - 1), L._full_like(_row(du_r, np.int32(0)), 0))
    return dl_r, d_r, du_r, shape_ops.transpose(b, perm + (nb + 1,))


def _from_rows(x):
    nd = len(L._shape(x))
    return shape_ops.transpose(x, tuple(range(1, nd - 1)) + (0, nd - 1))


def _expand(v, like):
    """A diagonal row ``(...)`` broadcast against a row of ``b`` ``(..., n)``."""
    return shape_ops.broadcast_in_dim(v, L._shape(like), tuple(range(len(L._shape(v)))))


def _forward_step(i, cur_d, cur_du, cur_b, D, DU, DU2, B, dl_r, d_r, du_r, b_r):
    """Eliminate below row ``i``: the pivot is the larger of row i's diagonal entry (after the
    previous steps) and row i+1's subdiagonal entry; the pivot row goes out to ``D, DU, DU2,
    B`` (its diagonal, first and second superdiagonal, right-hand side), the other row, with
    the elimination applied, is row i+1's new state."""
    nxt = ew.add(i, np.int32(1))
    l, dn, un, bn = _row(dl_r, nxt), _row(d_r, nxt), _row(du_r, nxt), _row(b_r, nxt)
    swap = ew.gt(ew.abs(l), ew.abs(cur_d))
    zero = L._full_like(un, 0)
    p_d, p_du, p_du2 = ew.select(swap, l, cur_d), ew.select(swap, dn, cur_du), \
        ew.select(swap, un, zero)
    o_d, o_du, o_du2 = ew.select(swap, cur_d, l), ew.select(swap, cur_du, dn), \
        ew.select(swap, zero, un)
    swap_b = _expand(swap, cur_b)
    p_b, o_b = ew.select(swap_b, bn, cur_b), ew.select(swap_b, cur_b, bn)
    fact = ew.div(o_d, p_d)
    new_d = ew.sub(o_du, ew.mul(fact, p_du))
    new_du = ew.sub(o_du2, ew.mul(fact, p_du2))
    new_b = ew.sub(o_b, ew.mul(_expand(fact, o_b), p_b))
    return (new_d, new_du, new_b, _set_row(D, i, p_d), _set_row(DU, i, p_du),
            _set_row(DU2, i, p_du2), _set_row(B, i, p_b), dl_r, d_r, du_r, b_r)


def _back_step(j, X, x1, x2, D, DU, DU2, B):
    """Row ``i = m - 2 - j``: ``x_i = (b_i - du_i x_{i+1} - du2_i x_{i+2}) / d_i``."""
    m = L._shape(D)[0]
    i = ew.sub(np.int32(m - 2), j)
    num = ew.sub(ew.sub(_row(B, i), ew.mul(_expand(_row(DU, i), x1), x1)),
                 ew.mul(_expand(_row(DU2, i), x1), x2))
    xi = ew.div(num, _expand(_row(D, i), x1))
    return _set_row(X, i, xi), xi, x1, D, DU, DU2, B


def _ts_lower(ctx, dl, d, du, b):
    m = b.aval.shape[-2]
    if m == 0 or b.aval.shape[-1] == 0:
        return ctx.lower_fun(lambda b: b, [b])
    if m == 1:
        return ctx.lower_fun(lambda d, b: ew.div(b, _expand(d, b)), [d, b])

    def prepare(dl, d, du, b):
        dl_r, d_r, du_r, b_r = _to_rows(dl, d, du, b)
        zero = np.int32(0)
        z = L._full_like(d_r, 0)
        return [_row(d_r, zero), _row(du_r, zero), _row(b_r, zero), z, z, z,
                L._full_like(b_r, 0), dl_r, d_r, du_r, b_r]
    state = ctx.lower_fun(prepare, [dl, d, du, b], multiple_results=True)
    cur_d, _, cur_b, D, DU, DU2, B = L._fori_lower(ctx, m - 1, _forward_step, state)[:7]

    def finish(cur_d, cur_b, D, B):
        last = np.int32(m - 1)
        x_last = ew.div(cur_b, _expand(cur_d, cur_b))
        X = _set_row(L._full_like(B, 0), last, x_last)
        return [_set_row(D, last, cur_d), _set_row(B, last, cur_b), X, x_last,
                L._full_like(x_last, 0)]
    D, B, X, x1, x2 = ctx.lower_fun(finish, [cur_d, cur_b, D, B], multiple_results=True)
    X = L._fori_lower(ctx, m - 1, _back_step, [X, x1, x2, D, DU, DU2, B])[0]
    return ctx.lower_fun(_from_rows, [X])


def _tridiagonal_matmul(dl, d, du, x):
    """``A x`` for the tridiagonal ``A`` (``dl[0]``, ``du[-1]`` ignored)."""
    shape = L._shape(x)
    nb = len(shape) - 2
    m = shape[-2]
    col = lambda v: shape_ops.broadcast_in_dim(v, shape, tuple(range(nb + 1)))  # noqa: E731
    out = ew.mul(col(d), x)
    if m > 1:
        z = (0,) * nb
        lo = shape_ops.slice(x, z + (0, 0), shape[:-2] + (m - 1, shape[-1]))
        hi = shape_ops.slice(x, z + (1, 0), shape)
        cfg = [(0, 0, 0)] * nb
        zero = np.array(0, L._dtype(x))
        below = shape_ops.pad(lo, zero, cfg + [(1, 0, 0), (0, 0, 0)])   # x[i-1]
        above = shape_ops.pad(hi, zero, cfg + [(0, 1, 0), (0, 0, 0)])   # x[i+1]
        out = ew.add(out, ew.add(ew.mul(col(dl), below), ew.mul(col(du), above)))
    return out


def _transposed_diagonals(dl, d, du):
    """The diagonals of ``A^T``: its subdiagonal is ``du`` shifted down, its superdiagonal
    ``dl`` shifted up."""
    shape = L._shape(d)
    nb = len(shape) - 1
    m = shape[-1]
    if m == 1:
        return dl, d, du
    zero = np.array(0, L._dtype(d))
    cfg = [(0, 0, 0)] * nb
    dl_t = shape_ops.pad(shape_ops.slice(du, (0,) * (nb + 1), shape[:-1] + (m - 1,)), zero,
                         cfg + [(1, 0, 0)])
    du_t = shape_ops.pad(shape_ops.slice(dl, (0,) * nb + (1,), shape), zero,
                         cfg + [(0, 1, 0)])
    return dl_t, d, du_t


def _ts_jvp(primals, tangents):
    dl, d, du, b = primals
    x = tridiagonal_solve_p.bind(dl, d, du, b)
    # A x = b  =>  A x' = b' - A' x
    rhs = None if type(tangents[3]) is Zero else tangents[3]
    if any(type(t) is not Zero for t in tangents[:3]):
        da = [instantiate(t) for t in tangents[:3]]
        ax = _tridiagonal_matmul(*da, x)
        rhs = ew.neg(ax) if rhs is None else ew.sub(rhs, ax)
    if rhs is None:
        return x, zero_tangent(aval_of(x))
    return x, tridiagonal_solve_p.bind(dl, d, du, rhs)


def _ts_transpose(ct, dl, d, du, b):
    if any(is_undefined_primal(v) for v in (dl, d, du)) or not is_undefined_primal(b):
        raise NotImplementedError("tridiagonal_solve is linear in b only")
    if type(ct) is Zero:
        return [None, None, None, Zero(b.aval)]
    return [None, None, None, tridiagonal_solve_p.bind(*_transposed_diagonals(dl, d, du), ct)]


tridiagonal_solve_p = Primitive("tridiagonal_solve", abstract_eval=_ts_abstract_eval,
                                lower=_ts_lower, jvp=_ts_jvp, transpose=_ts_transpose,
                                linear=True)
L._set_batch(tridiagonal_solve_p)


def tridiagonal_solve(dl, d, du, b):
    """Solve the tridiagonal system ``A x = b``: ``dl`` (subdiagonal, ``dl[..., 0]`` unused),
    ``d`` (diagonal) and ``du`` (superdiagonal, ``du[..., -1]`` unused) have shape
    ``(..., m)`` and ``b`` ``(..., m, n)``. Gaussian elimination with partial pivoting, as
    LAPACK's ``gtsv``."""
    return tridiagonal_solve_p.bind(dl, d, du, b)


# ---- host kernels: hessenberg, tridiagonal, schur ----

def _per_matrix(kernel):
    """A host function over a batch of matrices from ``kernel`` (one matrix -> outputs)."""
    def run(a):
        batch = a.shape[:-2]
        flat = a.reshape((-1,) + a.shape[-2:])
        results = [kernel(m) for m in flat]
        return [np.stack([r[k] for r in results]).reshape(batch + results[0][k].shape)
                for k in range(len(results[0]))]
    return run


def _host_lower(name, kernel_for_params):
    def lower(ctx, a, **params):
        if ctx.platform != "cpu":
            raise NotImplementedError(f"lax.linalg.{name} is only implemented on CPU (as JAX's)"
                                      f", not on {ctx.platform}")
        avals = list(ctx.avals_out)
        if int(np.prod(a.aval.shape[:-2], dtype=np.int64)) == 0:
            return ctx.lower_fun(lambda: [shape_ops.full(v.shape, np.array(0, v.dtype), v.dtype)
                                          for v in avals], [], multiple_results=True)
        run = blas_threads.pinned(_per_matrix(kernel_for_params(**params)))
        return base.host_call(ctx, lambda a: [np.asarray(r) for r in run(a)], [a], avals,
                              side_effect=False, key=("pyjax.lax.linalg." + name,
                                                      tuple(sorted(params.items()))))
    return lower


def _hessenberg_abstract_eval(a):
    L._check_matrix("hessenberg", a, square=True)
    n = a.shape[-1]
    return [ShapedArray(a.shape, a.dtype), ShapedArray(a.shape[:-2] + (max(n - 1, 0),),
                                                       a.dtype)]


hessenberg_p = Primitive("hessenberg", abstract_eval=_hessenberg_abstract_eval,
                         lower=_host_lower("hessenberg", lambda: kernels.hessenberg),
                         jvp=_no_jvp("hessenberg"), multiple_results=True)
L._set_batch(hessenberg_p)


def hessenberg(a):
    """Reduce the square ``a`` to upper Hessenberg form ``h = q^H a q``: ``(packed, taus)`` as
    LAPACK's ``gehrd`` (``h`` on and above the subdiagonal, the Householder reflectors of ``q``
    below it, with ``taus``; ``lax.linalg.householder_product`` rebuilds ``q``)."""
    return tuple(hessenberg_p.bind(a))


def _tridiagonal_abstract_eval(a, *, lower):
    L._check_matrix("tridiagonal", a, square=True)
    n = a.shape[-1]
    real = dtypes.to_real_dtype(a.dtype)
    b = a.shape[:-2]
    return [ShapedArray(a.shape, a.dtype), ShapedArray(b + (n,), real),
            ShapedArray(b + (max(n - 1, 0),), real), ShapedArray(b + (max(n - 1, 0),), a.dtype)]


tridiagonal_p = Primitive(
    "tridiagonal", abstract_eval=_tridiagonal_abstract_eval,
    lower=_host_lower("tridiagonal",
                      lambda lower: functools.partial(kernels.tridiagonal, lower=lower)),
    jvp=_no_jvp("tridiagonal"), multiple_results=True)
L._set_batch(tridiagonal_p)


def tridiagonal(a, *, lower: bool = True):
    """Reduce the Hermitian ``a`` to real symmetric tridiagonal form ``t = q^H a q``:
    ``(arr, d, e, taus)`` as LAPACK's ``sytrd``/``hetrd`` (``d`` the diagonal, ``e`` the
    off-diagonal of ``t``; ``arr`` holds them and the reflectors of ``q``, below the diagonal
    when ``lower`` else above it). Only the ``lower`` (or upper) triangle of ``a`` is read."""
    return tuple(tridiagonal_p.bind(a, lower=bool(lower)))


def _schur_abstract_eval(a, *, compute_schur_vectors):
    L._check_matrix("schur", a, square=True)
    outs = [ShapedArray(a.shape, a.dtype)]
    if compute_schur_vectors:
        outs.append(ShapedArray(a.shape, a.dtype))
    return outs


schur_p = Primitive(
    "schur", abstract_eval=_schur_abstract_eval,
    lower=_host_lower("schur", lambda compute_schur_vectors: functools.partial(
        kernels.schur, compute_schur_vectors=compute_schur_vectors)),
    jvp=_no_jvp("schur"), multiple_results=True)
L._set_batch(schur_p)


def schur(x, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable=None):
    """Schur decomposition ``x = q u q^H``: ``(u, q)`` (``u`` alone without
    ``compute_schur_vectors``). Real input gives the real Schur form (quasi upper triangular,
    standardized 2 x 2 blocks for complex pairs), complex input the upper triangular one.
    CPU only, as JAX's."""
    if sort_eig_vals or select_callable is not None:
        raise NotImplementedError("lax.linalg.schur: sort_eig_vals and select_callable are not "
                                  "implemented (JAX ignores them)")
    outs = schur_p.bind(x, compute_schur_vectors=bool(compute_schur_vectors))
    return tuple(outs) if compute_schur_vectors else outs[0]


# ---- cholesky_update ----

def _cu_abstract_eval(r, w):
    L._check_matrix("cholesky_update", r, square=True)
    if dtypes.is_complex(r.dtype):
        raise NotImplementedError("lax.linalg.cholesky_update: complex matrices are not "
                                  "implemented")
    if w.shape != r.shape[:-1] or w.dtype != r.dtype:
        raise ValueError(f"cholesky_update: w must be {r.dtype.name}{list(r.shape[:-1])} for r "
                         f"{r.dtype.name}{list(r.shape)}, got {w.dtype.name}{list(w.shape)}")
    return ShapedArray(r.shape, r.dtype)


def _cu_step(k, r, w):
    """Rotate row ``k`` of ``r`` against ``w`` (a Givens rotation zeroing ``w[k]``):
    ``r_k^T r_k + w w^T`` is kept while ``w`` loses its entry ``k``."""
    shape = L._shape(r)
    nb = len(shape) - 2
    n = shape[-1]
    zeros = [np.int32(0)] * nb
    row = shape_ops.reshape(shape_ops.dynamic_slice(r, zeros + [k, np.int32(0)],
                                                    shape[:-2] + (1, n)), shape[:-1])
    cols = shape_ops.broadcasted_iota(_I32, shape[:-1], nb)
    kv = shape_ops.broadcast_in_dim(k, shape[:-1], ())
    at_k = ew.eq(cols, kv)
    pick = lambda v: red.reduce_sum(ew.select(at_k, v, L._full_like(v, 0)), (nb,))  # noqa: E731
    rkk, wk = pick(row), pick(w)
    rr = ew.sqrt(ew.add(ew.mul(rkk, rkk), ew.mul(wk, wk)))
    c, s = ew.div(rr, rkk), ew.div(wk, rkk)
    bc = lambda v: shape_ops.broadcast_in_dim(v, shape[:-1], tuple(range(nb)))  # noqa: E731
    after = ew.gt(cols, kv)
    new_row = ew.div(ew.add(row, ew.mul(bc(s), w)), bc(c))
    new_row = ew.select(after, new_row, ew.select(at_k, bc(rr), row))
    new_w = ew.select(after, ew.sub(ew.mul(bc(c), w), ew.mul(bc(s), new_row)),
                      L._full_like(w, 0))
    r = shape_ops.dynamic_update_slice(r, shape_ops.reshape(new_row, shape[:-2] + (1, n)),
                                       zeros + [k, np.int32(0)])
    return r, new_w


def _cu_lower(ctx, r, w):
    return L._fori_lower(ctx, r.aval.shape[-1], _cu_step, [r, w])[0]


cholesky_update_p = Primitive("cholesky_update", abstract_eval=_cu_abstract_eval,
                              lower=_cu_lower, jvp=_no_jvp("cholesky_update"))
L._set_batch(cholesky_update_p)


def cholesky_update(r_matrix, w_vector):
    """Given the upper Cholesky factor ``r`` of ``a = r^T r`` and a vector ``w``, the upper
    Cholesky factor of ``a + w w^T`` (Givens rotations, O(n^2)); real matrices."""
    return cholesky_update_p.bind(r_matrix, w_vector)
