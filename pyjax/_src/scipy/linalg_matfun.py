"""``jax.scipy.linalg`` Schur-based names and matrix functions: ``schur``, ``hessenberg``,
``rsf2csf``, ``sqrtm``, ``funm``, ``expm``, ``expm_frechet``.

``sqrtm`` and ``funm`` use the complex Schur form (CPU only, as JAX's) and a recurrence on the
triangular factor (the Björck–Hammarling square root, Parlett's), one superdiagonal per
``fori_loop`` iteration (a column-by-column version with one triangular solve per column
measured 784 ms at 128², XLA's triangular solve being a loop): ``sqrtm`` forms only that
superdiagonal of its sum (O(n^2) a step), ``funm`` a masked matrix product.
Both return complex arrays, as JAX's. ``expm`` is Padé scaling and
squaring (Higham 2005): the degree is picked from the 1-norm by ``lax.switch`` (only the chosen
approximant runs, and only it is differentiated), then up to ``max_squarings`` squarings.
"""
from __future__ import annotations

import numpy as np

import pyjax.numpy as jnp
from pyjax._src.control_flow.cond import cond, switch
from pyjax._src.control_flow.loops import fori_loop
from pyjax._src.core import dtypes
from pyjax._src.lax import linalg as lax_linalg
from pyjax._src.lax import shape_ops as lax_shape
from pyjax._src.lax import linalg_structured as structured
from pyjax._src.numpy.eager_compiled import compiled_when_eager
from pyjax._src.transformations.vmap import vmap

__all__ = ["schur", "hessenberg", "rsf2csf", "sqrtm", "funm", "expm", "expm_frechet",
           "eigh_tridiagonal", "polar", "solve_sylvester", "qr_multiply"]


def _square(name, a, batch=False, exact_as="float"):
    """``a`` as an array of square matrices; integer or bool ``a`` is cast to the default
    float, or (``exact_as`` a name) refused with JAX's TypeError naming that function."""
    a = jnp.asarray(a)
    if a.ndim < 2 or (not batch and a.ndim != 2) or a.shape[-1] != a.shape[-2]:
        want = "(..., N, N)" if batch else "(N, N)"
        raise ValueError(f"{name}: expected a square matrix of shape {want}, got shape "
                         f"{a.shape}")
    if not dtypes.is_inexact(a.dtype):
        if exact_as != "float":
            raise TypeError(f"{exact_as} does not accept dtype {a.dtype.name} at position 0. "
                            "Accepted dtypes at position 0 are subtypes of floating, "
                            "complexfloating.")
        a = a.astype(dtypes.canonicalize_dtype(np.float64))
    return a


def _complex(a):
    return a if dtypes.is_complex(a.dtype) else a.astype(dtypes.to_complex_dtype(a.dtype))


@compiled_when_eager("output")
def schur(a, output: str = "real"):
    """Schur decomposition ``a = z t z^H`` of each matrix of ``a`` (leading batch dimensions,
    as JAX's): ``(t, z)``; ``output='complex'`` gives the upper triangular complex form of a
    real ``a``."""
    if output not in ("real", "complex"):
        raise ValueError(f"schur: output must be 'real' or 'complex', got {output!r}")
    a = _square("schur", a, batch=True, exact_as="schur")
    if output == "complex":
        a = _complex(a)
    return structured.schur(a)


@compiled_when_eager("calc_q", "overwrite_a", "check_finite")
def hessenberg(a, *, calc_q: bool = False, overwrite_a: bool = False,
               check_finite: bool = True):
    """Upper Hessenberg form ``h = q^H a q`` of each matrix of ``a`` (leading batch
    dimensions, as JAX's): ``h``, or ``(h, q)`` with ``calc_q``."""
    a = _square("hessenberg", a, batch=True, exact_as="hessenberg")
    packed, taus = structured.hessenberg(a)
    h = jnp.triu(packed, -1)
    if not calc_q:
        return h
    n = a.shape[-1]
    q = jnp.broadcast_to(jnp.eye(n, dtype=a.dtype), a.shape)
    if n > 1:
        # reflector i acts on rows i+1: (unit first entry on the diagonal of packed[1:, :-1])
        refl = jnp.tril(packed[..., 1:, :-1])
        q = q.at[..., 1:, 1:].set(lax_linalg.householder_product(refl, taus))
    return h, q


@compiled_when_eager("check_finite")
def rsf2csf(T, Z, check_finite: bool = True):
    """Convert a real Schur form ``(T, Z)`` to the complex one: each standardized 2 x 2 block
    ``[[a, b], [c, a]]`` (a complex pair ``a ± i sqrt(-b c)``) is triangularized by a complex
    Givens rotation applied to ``T`` (rows and columns) and ``Z``."""
    T, Z = jnp.asarray(T), jnp.asarray(Z)
    if T.ndim < 2 or T.shape[-1] != T.shape[-2] or Z.shape[-2:] != T.shape[-2:]:
        raise ValueError(f"rsf2csf: T and Z must be square matrices of equal size, got shapes "
                         f"{T.shape} and {Z.shape}")
    shape = jnp.broadcast_shapes(T.shape[:-2], Z.shape[:-2]) + T.shape[-2:]
    dt = dtypes.to_complex_dtype(jnp.result_type(T.dtype, Z.dtype, np.float32))
    T = jnp.broadcast_to(T, shape).astype(dt)
    Z = jnp.broadcast_to(Z, shape).astype(dt)
    n = shape[-1]
    for m in range(n - 1, 0, -1):
        c = T[..., m, m - 1]
        # eigenvalue of the 2 x 2 block at (m-1, m) closest to T[m, m] (LAPACK's choice)
        a_, b_, d_ = T[..., m - 1, m - 1], T[..., m - 1, m], T[..., m, m]
        p = 0.5 * (a_ - d_)
        r = jnp.sqrt(p * p + b_ * c)
        mu = d_ + p - r
        mu2 = d_ + p + r
        mu = jnp.where(jnp.abs(mu - d_) <= jnp.abs(mu2 - d_), mu, mu2)
        x, y = mu - T[..., m, m], c
        # T <- G T G^H, Z <- Z G^H with G^H's first column the unit eigenvector (mu - d, c)
        # of the block: the block becomes upper triangular
        nrm = jnp.sqrt(jnp.abs(x) ** 2 + jnp.abs(y) ** 2)
        act = jnp.abs(c) > 0
        safe = jnp.where(act, nrm, 1)
        cs = jnp.where(act, x / safe, 1).astype(dt)
        sn = jnp.where(act, y / safe, 0).astype(dt)
        gh = jnp.stack([jnp.stack([cs, -jnp.conj(sn)], -1),
                        jnp.stack([sn, jnp.conj(cs)], -1)], -2)   # (..., 2, 2) unitary
        g = jnp.conj(jnp.swapaxes(gh, -1, -2))
        rows = jnp.matmul(g, T[..., m - 1:m + 1, m - 1:])
        T = T.at[..., m - 1:m + 1, m - 1:].set(rows)
        cols = jnp.matmul(T[..., :m + 1, m - 1:m + 1], gh)
        T = T.at[..., :m + 1, m - 1:m + 1].set(cols)
        Z = Z.at[..., :, m - 1:m + 1].set(jnp.matmul(Z[..., :, m - 1:m + 1], gh))
        T = T.at[..., m, m - 1].set(0)
    return T, Z


# ---- triangular recurrences, one superdiagonal at a time ----

def _superdiagonal(n, d):
    idx = jnp.arange(n)
    return idx[None, :] - idx[:, None] == d


def _triu_sqrt(t):
    """The upper triangular ``r`` with ``r @ r == t`` (principal square roots on the
    diagonal), Björck–Hammarling: ``r_ij = (t_ij - sum_{i<k<j} r_ik r_kj) / (r_ii + r_jj)``.
    Superdiagonal ``d`` needs only the ones before it, and while its entries are still zero
    the sum is ``(r @ r)_ij``, of which only that diagonal is formed: ``sum_k r_ik r_k,i+d``
    is row ``i`` of ``r`` times row ``i`` of ``r^T`` shifted up by ``d`` rows, O(n^2) per
    superdiagonal (a whole matrix product per superdiagonal cost 26 ms at 128²)."""
    n = t.shape[-1]
    diag = jnp.sqrt(jnp.diagonal(t))
    zeros = jnp.zeros((n, n), t.dtype)
    zero_row = jnp.zeros((n,), t.dtype)

    def step(d, r):
        mask = _superdiagonal(n, d)
        # rows i + d of r^T (columns i + d of r), zero past the last row
        cols = lax_shape.dynamic_slice(jnp.concatenate([r.T, zeros]), (d, 0), (n, n))
        s = jnp.sum(r * cols, axis=1)
        t_d = jnp.sum(jnp.where(mask, t, 0), axis=1)
        denom = diag + lax_shape.dynamic_slice(jnp.concatenate([diag, zero_row]), (d,), (n,))
        num = t_d - s
        # 0/0 (a zero eigenvalue twice, nothing to fix) is 0, as SciPy and JAX: sqrtm(0) == 0
        zero = (num == 0) & (denom == 0)
        val = jnp.where(zero, 0, num / jnp.where(zero, 1, denom))
        return jnp.where(mask, val[:, None], r)
    return fori_loop(1, n, step, jnp.diag(diag))


def _triu_funm(t, func):
    """``f(t)`` for the upper triangular ``t`` with distinct diagonal entries (Parlett): ``f``
    commutes with ``t``, so ``f_ij (t_jj - t_ii) = t_ij (f_jj - f_ii) + sum_{i<k<j} (t_ik f_kj -
    f_ik t_kj)``, which is ``(t f - f t)_ij`` while superdiagonal ``d`` is still zero: two
    matrix products per superdiagonal."""
    n = t.shape[-1]
    td = jnp.diagonal(t)
    fd = jnp.asarray(func(td)).astype(t.dtype)
    gap = td[None, :] - td[:, None]

    def step(d, f):
        mask = _superdiagonal(n, d)
        # a repeated eigenvalue (gap 0) keeps the undivided sum, as SciPy and JAX: funm(0, exp)
        # is the identity, not NaN
        g = jnp.where(mask & (gap != 0), gap, 1)
        return jnp.where(mask, (t @ f - f @ t) / g, f)
    return fori_loop(1, n, step, jnp.diag(fd))


@compiled_when_eager("blocksize")
def sqrtm(A, blocksize: int = 1):
    """Matrix square root by the complex Schur method: a complex array ``x`` with
    ``x @ x == A``, the principal root where ``A`` has no eigenvalues on the negative real
    axis."""
    if blocksize != 1:
        raise NotImplementedError("jax.scipy.linalg.sqrtm only supports blocksize=1")
    a = _square("sqrtm", A)
    t, z = structured.schur(_complex(a))
    r = _triu_sqrt(t)
    return jnp.matmul(jnp.matmul(z, r), jnp.conj(z.T))


@compiled_when_eager("func", "disp")
def funm(A, func, disp: bool = True):
    """``func`` extended to the square matrix ``A`` (Schur form and Parlett's recurrence;
    ``A``'s eigenvalues must be distinct); complex, as JAX's. ``func`` maps an array of
    eigenvalues elementwise."""
    if not disp:
        raise NotImplementedError("jax.scipy.linalg.funm: disp=False (an error estimate) is "
                                  "not implemented")
    if not callable(func):
        raise TypeError(f"funm: func must be callable, got {type(func).__name__}")
    a = _square("funm", A, exact_as="schur")  # JAX's error comes from its schur
    t, z = structured.schur(_complex(a))
    f = _triu_funm(t, func)
    return jnp.matmul(jnp.matmul(z, f), jnp.conj(z.T))


# ---- expm: Padé scaling and squaring ----

# Padé numerator coefficients b_0..b_m of degree m (Higham 2005, Table 2.3)
_PADE = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880.,
        3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
         40840800., 960960., 16380., 182., 1.),
}
# the largest 1-norms for which degree m is accurate to the unit roundoff (Higham 2005)
_THETA = {
    "double": ((3, 1.495585217958292e-2), (5, 2.539398330063230e-1),
               (7, 9.504178996162932e-1), (9, 2.097847961257068e0),
               (13, 5.371920351148152e0)),
    "single": ((3, 4.258730016922831e-1), (5, 1.880152677804762e0),
               (7, 3.925724783138660e0)),
}


def _pade(a, m):
    """``(p, q)`` of the degree-m Padé approximant of ``exp(a)``: ``exp(a) ~ q^-1 p``."""
    b = _PADE[m]
    n = a.shape[-1]
    eye = jnp.eye(n, dtype=a.dtype)
    a2 = a @ a
    if m < 13:
        powers = [eye, a2]
        while len(powers) <= m // 2:
            powers.append(powers[-1] @ a2)
        u = a @ sum(b[2 * k + 1] * powers[k] for k in range(m // 2 + 1))
        v = sum(b[2 * k] * powers[k] for k in range(m // 2 + 1))
    else:
        a4 = a2 @ a2
        a6 = a4 @ a2
        u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4
                 + b[3] * a2 + b[1] * eye)
        v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
            + b[0] * eye
    return u + v, v - u


def _expm_one(a, max_squarings):
    single = np.dtype(a.dtype) in (np.dtype(np.float32), np.dtype(np.complex64),
                                   np.dtype(np.float16))
    thetas = _THETA["single" if single else "double"]
    norm = jnp.max(jnp.sum(jnp.abs(a), axis=0))
    top_m, top_theta = thetas[-1]
    # the degree: the first whose theta bounds the norm, else the top one after scaling
    index = jnp.sum(jnp.stack([norm > th for _, th in thetas[:-1]]).astype(np.int32))
    s = jnp.where(norm > top_theta, jnp.ceil(jnp.log2(norm / top_theta)), 0)
    s = jnp.clip(s, 0, max_squarings).astype(np.int32)
    scaled = a / (2.0 ** s).astype(a.dtype)

    def branch(m):
        def run(x):
            p, q = _pade(x, m)
            return jnp.linalg.solve(q, p)
        return run
    r = switch(index, [branch(m) for m, _ in thetas], scaled)
    # a branch per step, as JAX's: only the s squarings needed are computed (a select would
    # compute all max_squarings products); static bounds keep it differentiable
    r = fori_loop(0, max_squarings, lambda i, r: cond(i < s, lambda r: r @ r, lambda r: r, r), r)
    # more squarings needed than allowed: NaN, as JAX 0.10.2 (which counts them with a floor:
    # expm(30 * [[1, 2], [3, 4]], max_squarings=1) is NaN there, max_squarings=2 is not)
    too_big = jnp.floor(jnp.log2(norm / top_theta)) > max_squarings
    return jnp.where(too_big, jnp.asarray(np.nan, a.dtype), r)


@compiled_when_eager("upper_triangular", "max_squarings")
def expm(A, *, upper_triangular: bool = False, max_squarings: int = 16):
    """Matrix exponential of ``A`` (``(..., N, N)``) by Padé scaling and squaring (degree 3 to
    13 by the 1-norm, at most ``max_squarings`` squarings). ``upper_triangular``: only the
    upper triangle of ``A`` is read."""
    a = _square("expm", A, batch=True)
    if upper_triangular:
        a = jnp.triu(a)
    max_squarings = int(max_squarings)
    if max_squarings < 0:
        raise ValueError(f"expm: max_squarings must be >= 0, got {max_squarings}")
    batch = a.shape[:-2]
    if a.size == 0:
        return jnp.zeros(a.shape, a.dtype)
    if not batch:  # unbatched, the Padé degree is a real branch (vmap would run all three)
        return _expm_one(a, max_squarings)
    flat = a.reshape((-1,) + a.shape[-2:])
    out = vmap(lambda x: _expm_one(x, max_squarings))(flat)
    return out.reshape(batch + a.shape[-2:])


@compiled_when_eager("method", "compute_expm")
def expm_frechet(A, E, *, method=None, compute_expm: bool = True):
    """The Fréchet derivative of ``expm`` at ``A`` in the direction ``E``:
    ``(expm(A), L)`` (``L`` alone without ``compute_expm``), read off the exponential of the
    block matrix ``[[A, E], [0, A]]`` (whose upper right block is ``L``)."""
    if method not in (None, "SPS", "blockEnlarge"):
        raise ValueError(f"expm_frechet: unknown method {method!r}; expected 'SPS' or "
                         f"'blockEnlarge'")
    a = _square("expm_frechet", A, batch=True)
    e = _square("expm_frechet", E, batch=True)
    if a.shape != e.shape:
        raise ValueError(f"expm_frechet: A and E must have the same shape, got {a.shape} and "
                         f"{e.shape}")
    dt = jnp.result_type(a.dtype, e.dtype)
    a, e = a.astype(dt), e.astype(dt)
    n = a.shape[-1]
    big = jnp.concatenate([jnp.concatenate([a, e], -1),
                           jnp.concatenate([jnp.zeros_like(a), a], -1)], -2)
    ex = expm(big)
    l = ex[..., :n, n:]
    return (ex[..., :n, :n], l) if compute_expm else l


# ---- eigh_tridiagonal, polar, solve_sylvester ----

def eigh_tridiagonal(d, e, *, eigvals_only: bool = False, select: str = "a",
                     select_range=None, tol=None):
    """Eigenvalues (ascending) of the Hermitian tridiagonal matrix with diagonal ``d`` and
    superdiagonal ``e`` (subdiagonal ``conj(e)``), and with ``eigvals_only=False`` (the
    default) its eigenvectors as columns, by the symmetric eigensolver on the dense matrix
    (so any ``tol`` is met). Eigenvectors are unique up to sign (phase): JAX's come from
    another algorithm and may differ by it. ``select='i'`` keeps indices
    ``select_range[0]..select_range[1]`` (inclusive)."""
    if select not in ("a", "i", "v"):
        raise ValueError(f"eigh_tridiagonal: select must be 'a', 'i' or 'v', got {select!r}")
    if select == "v":
        raise NotImplementedError("eigh_tridiagonal: select='v' (a value range) is not "
                                  "implemented")
    d, e = jnp.asarray(d), jnp.asarray(e)
    if d.ndim != 1 or e.ndim != 1 or e.shape[0] != max(d.shape[0] - 1, 0):
        raise ValueError(f"eigh_tridiagonal: d must have shape (n,) and e (n-1,), got "
                         f"{d.shape} and {e.shape}")
    dt = jnp.result_type(d.dtype, e.dtype, np.float32)
    n = d.shape[0]
    t = jnp.diag(d.astype(dt))
    if n > 1:
        t = t + jnp.diag(e.astype(dt), 1) + jnp.diag(jnp.conj(e.astype(dt)), -1)
    if eigvals_only:
        w, v = jnp.linalg.eigvalsh(t), None
    else:
        w, v = jnp.linalg.eigh(t)
    if select == "i":
        lo, hi = (int(i) for i in select_range)
        if not 0 <= lo <= hi < n:
            raise ValueError(f"eigh_tridiagonal: select_range must satisfy 0 <= lo <= hi < "
                             f"{n}, got {select_range}")
        w = w[lo:hi + 1]
        v = None if v is None else v[:, lo:hi + 1]
    return w if eigvals_only else (w, v)


def polar(a, side: str = "right", *, method: str = "qdwh", eps=None, max_iterations=None):
    """Polar decomposition of each matrix of ``a`` (leading batch dimensions, as JAX's):
    ``(u, p)`` with ``a = u p`` (``side='right'``) or ``a = p u`` (``'left'``), ``u`` with
    orthonormal columns (rows) and ``p`` Hermitian positive semidefinite. Computed from the
    SVD for both methods (so ``eps``/``max_iterations``, which bound QDWH's iterations, are
    met exactly); the shapes each method accepts are JAX's: ``'qdwh'`` takes ``m >= n`` with
    ``side='right'`` and ``m < n`` with ``side='left'``, ``'svd'`` every shape."""
    if side not in ("right", "left"):
        raise ValueError(f"The argument `side` must be either 'right' or 'left', got "
                         f"{side!r}.")
    if method not in ("qdwh", "svd"):
        raise ValueError(f"Unknown polar decomposition method {method}.")
    a = jnp.asarray(a)
    if a.ndim < 2:
        raise ValueError(f"polar: the input `a` must be at least a 2-D array, got shape "
                         f"{a.shape}")
    if not dtypes.is_inexact(a.dtype):  # JAX 0.10.2 refuses integers (ValueError)
        raise ValueError(f"polar: data type {a.dtype} not inexact (floating or complex "
                         f"expected)")
    m, n = a.shape[-2:]
    if method == "qdwh" and (m < n if side == "right" else m >= n):
        # JAX 0.10.2's words (its QDWH runs on a tall matrix, or the transpose of a wide one)
        raise NotImplementedError(f"method='qdwh' only supports mxn matrices where m < n where "
                                  f"side='right' and m >= n side='left', got {(m, n)} with "
                                  f"side={side!r}")
    u_, s, vh = jnp.linalg.svd(a, full_matrices=False)
    unitary = u_ @ vh
    s = s.astype(a.dtype)[..., None, :]
    if side == "right":
        p = (jnp.conj(jnp.swapaxes(vh, -1, -2)) * s) @ vh
    else:
        p = (u_ * s) @ jnp.conj(jnp.swapaxes(u_, -1, -2))
    return unitary, p


@compiled_when_eager("method", "tol")
def solve_sylvester(A, B, C, *, method: str = "schur", tol: float = 1e-8):
    """Solve ``A X + X B = C`` by the Bartels–Stewart method on complex Schur forms
    ``A = Q R Q^H``, ``B = U S U^H``: column ``k`` of ``Y = Q^H X U`` solves
    ``(R + s_kk I) y_k = f_k - Y s_{:k, k}``. Real inputs give a real ``X``. Where an
    eigenvalue of ``A`` is within ``tol`` of one of ``-B`` the system is (nearly) singular
    and the result is NaN, as JAX's."""
    if method != "schur":
        raise ValueError(f"solve_sylvester: only method='schur' is supported, got {method!r}")
    a, b = _square("solve_sylvester", A), _square("solve_sylvester", B)
    c = jnp.asarray(C)
    if c.shape != (a.shape[0], b.shape[0]):
        raise ValueError(f"solve_sylvester: C must have shape {(a.shape[0], b.shape[0])} for A "
                         f"{a.shape} and B {b.shape}, got {c.shape}")
    dt = jnp.result_type(a.dtype, b.dtype, c.dtype)
    real = not dtypes.is_complex(dt)
    cdt = dtypes.to_complex_dtype(dt) if real else dt
    r, q = structured.schur(a.astype(cdt))
    s, u = structured.schur(b.astype(cdt))
    f = jnp.conj(q.T) @ c.astype(cdt) @ u
    m, n = a.shape[0], b.shape[0]
    eye = jnp.eye(m, dtype=cdt)
    ra, sb = jnp.diagonal(r), jnp.diagonal(s)
    singular = jnp.any(jnp.abs(ra[:, None] + sb[None, :]) < tol)

    def column(k, y):
        before = jnp.arange(n) < k
        rhs = f[:, k] - y @ jnp.where(before, s[:, k], 0)
        yk = lax_linalg.triangular_solve(r + s[k, k] * eye, rhs[:, None], left_side=True,
                                         lower=False)[:, 0]
        return y.at[:, k].set(yk)
    y = fori_loop(0, n, column, jnp.zeros((m, n), cdt))
    x = q @ y @ jnp.conj(u.T)
    x = jnp.where(singular, jnp.full_like(x, np.nan), x)
    return jnp.real(x).astype(dt) if real else x


def qr_multiply(a, c, mode: str = "right", pivoting: bool = False, conjugate: bool = False,
                overwrite_a: bool = False, overwrite_c: bool = False):
    """``(c @ q, r)`` (``mode='right'``) or ``(q @ c, r)`` (``'left'``) for the reduced QR
    decomposition ``a = q r`` (``q`` is ``M x K``, ``K = min(M, N)``); ``conjugate`` uses
    ``conj(q)``. A 1-D ``c`` is a row (right) or a column (left), as SciPy. ``pivoting``
    factors ``a[:, p] = q r`` (column-pivoted QR) and returns ``p`` third, as SciPy and JAX."""
    if mode not in ("right", "left"):
        raise ValueError(f"qr_multiply: mode must be 'right' or 'left', got {mode!r}")
    a, c = jnp.asarray(a), jnp.asarray(c)
    if a.ndim != 2:
        raise ValueError(f"qr_multiply: a must be a matrix, got shape {a.shape}")
    if not dtypes.is_inexact(a.dtype):
        a = a.astype(dtypes.canonicalize_dtype(np.float64))
    m, n = a.shape
    k = min(m, n)
    need = m if mode == "right" else k
    got = c.shape[-1] if mode == "right" else c.shape[0]
    if c.ndim not in (1, 2) or got != need:
        what = "columns" if mode == "right" else "rows"
        raise ValueError(f"qr_multiply: c must have {need} {what} (1-D or 2-D) for a of shape "
                         f"{a.shape} and mode={mode!r}, got shape {c.shape}")
    q, r, *p = lax_linalg.qr(a, pivoting=bool(pivoting), full_matrices=False)
    if conjugate:
        q = jnp.conj(q)
    dt = jnp.result_type(q.dtype, c.dtype)
    q, c = q.astype(dt), c.astype(dt)
    return (c @ q if mode == "right" else q @ c, r, *p)
