"""Host kernels of ``lax.linalg.hessenberg``, ``tridiagonal`` and ``schur``.

They run through the FFI (``base.host_call``), one matrix per call (the callers loop over the
batch). When SciPy is installed they call its LAPACK (``gehrd``, ``sytrd``/``hetrd``, ``gees``,
the routines JAX's CPU backend calls: schur 128² about 1,000x faster than the Python loops).
SciPy is not a runtime dependency: without it the same results come from the NumPy
implementations below (float64/complex128 internally, rounded once at the end; tested against
LAPACK directly). Results use LAPACK's storage conventions:

* A Householder reflector is ``H = I - tau v v^H`` with ``v[0] = 1`` (``larfg``): it maps
  ``[alpha, x]`` to ``[beta, 0]``, ``beta = -sign(Re alpha) |[alpha, x]|`` real.
* ``hessenberg`` (``gehrd``): ``Q = H_0 ... H_{n-2}``, reflector ``i`` acting on rows
  ``i+1:``, its ``v[1:]`` stored below the subdiagonal of column ``i``.
* ``tridiagonal`` (``sytrd``/``hetrd``): the same for Hermitian input, lower; with
  ``lower=False`` reflectors ``Q = H_{n-2} ... H_0`` run from the last column, ``v`` stored above
  the superdiagonal.
* ``schur`` (``gees`` without sorting): Hessenberg reduction, then Francis double-shift QR
  sweeps (real input) or single-shift QR with Givens rotations (complex input); the 2 x 2
  blocks of a real Schur form are standardized as LAPACK's (``[[a, b], [c, a]]``, ``b c < 0``).
  No convergence after ``30 n`` sweeps gives NaNs, as LAPACK's ``info > 0``.
"""
from __future__ import annotations

import numpy as np

from pyjax._src.lax.scipy_lapack import lapack as _scipy_lapack  # None without SciPy


def _wide(a):
    return a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)


def householder(x):
    """``(v, tau, beta)`` with ``(I - tau v v^H) x = beta e_0`` and ``v[0] = 1`` (LAPACK's
    ``larfg``: ``tau = 0`` when ``x[1:]`` is zero and ``x[0]`` real)."""
    alpha = x[0]
    rest = np.linalg.norm(x[1:])
    v = np.zeros_like(x)
    v[0] = 1
    if rest == 0 and np.imag(alpha) == 0:
        return v, x.dtype.type(0), alpha
    beta = -np.copysign(np.hypot(np.abs(alpha), rest), np.real(alpha))
    tau = (beta - alpha) / beta
    v[1:] = x[1:] / (alpha - beta)
    return v, tau, beta


def _reflect_left(a, v, tau):
    """``a <- (I - tau v v^H)^H a`` (LAPACK applies H^H from the left)."""
    a -= np.conj(tau) * np.outer(v, np.conj(v) @ a)


def _reflect_right(a, v, tau):
    """``a <- a (I - tau v v^H)``."""
    a -= tau * np.outer(a @ v, np.conj(v))


def hessenberg(a):
    """LAPACK ``gehrd``: ``(packed, taus)``."""
    _lapack = _scipy_lapack()
    if _lapack is not None and a.shape[0] > 0 and a.dtype.char in "fdFD":
        packed, taus, info = _lapack.get_lapack_funcs("gehrd", (a,))(a)
        return packed, taus[:max(a.shape[0] - 1, 0)]
    return hessenberg_numpy(a)


def hessenberg_numpy(a):
    h = _wide(a).copy()
    n = h.shape[0]
    taus = np.zeros(max(n - 1, 0), h.dtype)
    for i in range(n - 1):  # the last reflector makes a complex h[n-1, n-2] real (zlarfg)
        v, tau, beta = householder(h[i + 1:, i].copy())
        taus[i] = tau
        _reflect_right(h[:, i + 1:], v, tau)
        _reflect_left(h[i + 1:, i + 1:], v, tau)
        h[i + 1, i] = beta
        h[i + 2:, i] = v[1:]
    return h.astype(a.dtype), taus.astype(a.dtype)


def tridiagonal(a, lower):
    """LAPACK ``sytrd``/``hetrd``: ``(packed, d, e, taus)``; only the ``lower`` (or upper)
    triangle of ``a`` is read."""
    _lapack = _scipy_lapack()
    if _lapack is not None and a.shape[0] > 0 and a.dtype.char in "fdFD":
        name = "hetrd" if np.iscomplexobj(a) else "sytrd"
        packed, d, e, taus, info = _lapack.get_lapack_funcs(name, (a,))(a, lower=lower)
        return packed, d, e, taus
    return tridiagonal_numpy(a, lower)


def tridiagonal_numpy(a, lower):
    full = _wide(a)
    h = np.tril(full) if lower else np.triu(full)
    strict = np.tril(full, -1) if lower else np.triu(full, 1)
    h = h + np.conj(strict.T)
    h[np.diag_indices_from(h)] = np.real(np.diag(h))
    n = h.shape[0]
    packed = full.copy()
    taus = np.zeros(max(n - 1, 0), h.dtype)
    e = np.zeros(max(n - 1, 0))
    if lower:
        for i in range(n - 1):
            v, tau, beta = householder(h[i + 1:, i].copy())
            taus[i] = tau
            # two-sided update of the trailing block, and of row/column i
            _reflect_left(h[i + 1:, i:], v, tau)
            _reflect_right(h[i:, i + 1:], v, tau)
            e[i] = np.real(beta)
            packed[i + 1, i] = beta
            packed[i + 2:, i] = v[1:]
    else:
        for i in range(n - 2, -1, -1):
            # reflector acting on rows 0..i, built from column i+1 above the diagonal; v[i] = 1
            x = h[:i + 1, i + 1][::-1].copy()
            v, tau, beta = householder(x)
            v = v[::-1]
            taus[i] = tau
            _reflect_left(h[:i + 1, :i + 2], v, tau)
            _reflect_right(h[:i + 2, :i + 1], v, tau)
            e[i] = np.real(beta)
            packed[i, i + 1] = beta
            packed[:i, i + 1] = v[:i]
    d = np.real(np.diag(h)).copy()
    packed[np.diag_indices_from(packed)] = d
    real = np.zeros((), a.dtype).real.dtype
    return packed.astype(a.dtype), d.astype(real), e.astype(real), taus.astype(a.dtype)


def _q_of_hessenberg(packed, taus):
    n = packed.shape[0]
    q = np.eye(n, dtype=packed.dtype)
    for i in range(n - 2, -1, -1):
        v = np.concatenate([[1], packed[i + 2:, i]]).astype(packed.dtype)
        _reflect_left_plain(q[i + 1:, i + 1:], v, taus[i])
    return q


def _reflect_left_plain(a, v, tau):
    """``a <- (I - tau v v^H) a``."""
    a -= tau * np.outer(v, np.conj(v) @ a)


def _rot2(t, z, i, g, n_hi):
    """Apply the 2 x 2 unitary ``g`` (acting on coordinates i, i+1) as ``t <- g^H t g`` over
    the whole matrix and ``z <- z g``."""
    t[i:i + 2, :] = np.conj(g.T) @ t[i:i + 2, :]
    t[:, i:i + 2] = t[:, i:i + 2] @ g
    if z is not None:
        z[:, i:i + 2] = z[:, i:i + 2] @ g


def _standardize_block(t, z, i):
    """Make the 2 x 2 block at ``(i, i)`` of a real Schur form standard: upper triangular for
    real eigenvalues, ``[[a, b], [c, a]]`` with ``b c < 0`` for a complex pair."""
    a, b, c, d = t[i, i], t[i, i + 1], t[i + 1, i], t[i + 1, i + 1]
    p = 0.5 * (a - d)
    disc = p * p + b * c
    if disc >= 0:
        # first basis vector: an eigenvector (lam - d, c), lam chosen to avoid cancellation
        r = np.sqrt(disc)
        x = p + (r if p >= 0 else -r)
        nrm = np.hypot(x, c)
        cs, sn = (x / nrm, c / nrm) if nrm else (1.0, 0.0)
        g = np.array([[cs, -sn], [sn, cs]])
        _rot2(t, z, i, g, None)
        t[i + 1, i] = 0.0
    else:
        # rotate by theta with tan(2 theta) = -(a - d) / (b + c): equal diagonal entries
        theta = 0.5 * np.arctan2(-(a - d), b + c)
        cs, sn = np.cos(theta), np.sin(theta)
        g = np.array([[cs, -sn], [sn, cs]])
        _rot2(t, z, i, g, None)
        m = 0.5 * (t[i, i] + t[i + 1, i + 1])
        t[i, i] = t[i + 1, i + 1] = m


def _negligible(t, k, norm):
    s = abs(t[k - 1, k - 1]) + abs(t[k, k])
    if s == 0:
        s = norm
    return abs(t[k, k - 1]) <= np.finfo(np.float64).eps * s


def _real_schur(t, z):
    n = t.shape[0]
    norm = np.abs(t).sum() or 1.0
    hi, its, total = n - 1, 0, 0
    while hi >= 0:
        lo = hi
        while lo > 0 and not _negligible(t, lo, norm):
            lo -= 1
        if lo > 0:
            t[lo, lo - 1] = 0.0
        if lo == hi:
            hi, its = hi - 1, 0
            continue
        if lo == hi - 1:
            _standardize_block(t, z, lo)
            hi, its = hi - 2, 0
            continue
        its += 1
        total += 1
        if total > 30 * n:
            return False
        if its % 11 == 10:  # exceptional shift, to break cycles
            w = abs(t[hi, hi - 1]) + abs(t[hi - 1, hi - 2])
            s, tt = 1.5 * w, w * w
        else:
            s = t[hi - 1, hi - 1] + t[hi, hi]
            tt = t[hi - 1, hi - 1] * t[hi, hi] - t[hi - 1, hi] * t[hi, hi - 1]
        # first column of (H - s1 I)(H - s2 I) = H^2 - s H + tt I
        x = t[lo, lo] * t[lo, lo] + t[lo, lo + 1] * t[lo + 1, lo] - s * t[lo, lo] + tt
        y = t[lo + 1, lo] * (t[lo, lo] + t[lo + 1, lo + 1] - s)
        zz = t[lo + 1, lo] * t[lo + 2, lo + 1]
        for k in range(lo, hi - 1):
            v, tau, _ = householder(np.array([x, y, zz]))
            q = max(lo, k - 1)
            _reflect_left_plain(t[k:k + 3, q:], v, tau)
            if k > lo:  # the bulge moved on: what it leaves behind is zero, not roundoff
                t[k + 1:k + 3, k - 1] = 0.0
            r = min(k + 4, hi + 1)
            _reflect_right(t[:r, k:k + 3], v, tau)
            _reflect_right(z[:, k:k + 3], v, tau)
            x = t[k + 1, k]
            y = t[k + 2, k]
            if k < hi - 2:
                zz = t[k + 3, k]
        v, tau, _ = householder(np.array([x, y]))
        _reflect_left_plain(t[hi - 1:hi + 1, hi - 2:], v, tau)
        t[hi, hi - 2] = 0.0
        _reflect_right(t[:hi + 1, hi - 1:hi + 1], v, tau)
        _reflect_right(z[:, hi - 1:hi + 1], v, tau)
    return True


def _givens(x, y):
    """Unitary ``g`` (2 x 2) with ``g^H [x, y] = [r, 0]``."""
    ax = abs(x)
    r = np.hypot(ax, abs(y))
    if r == 0:
        return np.eye(2, dtype=np.complex128)
    if ax == 0:
        c, s = 0.0, np.conj(y) / abs(y)
    else:
        c, s = ax / r, (x / ax) * np.conj(y) / r
    # rows: [c, s], [-conj(s), c] zero y; g is its conjugate transpose
    m = np.array([[c, s], [-np.conj(s), c]])
    return np.conj(m.T)


def _complex_schur(t, z):
    n = t.shape[0]
    norm = np.abs(t).sum() or 1.0
    hi, its, total = n - 1, 0, 0
    while hi > 0:
        lo = hi
        while lo > 0 and not _negligible(t, lo, norm):
            lo -= 1
        if lo > 0:
            t[lo, lo - 1] = 0.0
        if lo == hi:
            hi, its = hi - 1, 0
            continue
        its += 1
        total += 1
        if total > 30 * n:
            return False
        a, b, c, d = t[hi - 1, hi - 1], t[hi - 1, hi], t[hi, hi - 1], t[hi, hi]
        if its % 11 == 10:
            mu = d + abs(c)
        else:  # Wilkinson: the eigenvalue of the trailing 2 x 2 block nearer to d
            p = 0.5 * (a - d)
            r = np.sqrt(p * p + b * c)
            mu1, mu2 = d + p + r, d + p - r
            mu = mu1 if abs(mu1 - d) < abs(mu2 - d) else mu2
        x, y = t[lo, lo] - mu, t[lo + 1, lo]
        for k in range(lo, hi):
            if k > lo:
                x, y = t[k, k - 1], t[k + 1, k - 1]
            g = _givens(x, y)
            _rot2(t, z, k, g, None)
            if k > lo:
                t[k + 1, k - 1] = 0.0
    return True


def schur(a, compute_schur_vectors):
    """LAPACK ``gees`` (no sorting): ``[t]`` or ``[t, z]`` with ``a = z t z^H``; NaNs when
    the QR iteration fails (LAPACK's ``info > 0``)."""
    _lapack = _scipy_lapack()
    if _lapack is not None and a.shape[0] > 0 and a.dtype.char in "fdFD":
        gees = _lapack.get_lapack_funcs("gees", (a,))
        outs = gees(lambda *args: None, a, compute_v=int(compute_schur_vectors), sort_t=0)
        t, z, info = outs[0], outs[-3], outs[-1]
        if info != 0 or not np.isfinite(t).all():
            t = np.full_like(a, np.nan)
            z = np.full_like(a, np.nan)
        return [t, z] if compute_schur_vectors else [t]
    return schur_numpy(a, compute_schur_vectors)


def schur_numpy(a, compute_schur_vectors):
    n = a.shape[0]
    packed, taus = hessenberg_numpy(_wide(a))
    z = _q_of_hessenberg(packed, taus)
    t = np.triu(packed, -1)
    ok = _complex_schur(t, z) if np.iscomplexobj(t) else _real_schur(t, z)
    t = np.triu(t, -1)
    if np.iscomplexobj(t):
        t = np.triu(t)
    if not ok:
        t[...] = np.nan
        z[...] = np.nan
    del n
    outs = [t.astype(a.dtype)]
    if compute_schur_vectors:
        outs.append(z.astype(a.dtype))
    return outs
