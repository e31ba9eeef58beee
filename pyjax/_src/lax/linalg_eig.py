"""``lax.linalg.eig``: the eigendecomposition of a general (non-symmetric) square matrix.

As in JAX it exists on the CPU only: LAPACK's ``geev`` as a host kernel
(``linalg_host.eig``). Results are complex whatever the input: eigenvalues ``w``, left
eigenvectors ``vl`` (``vl[:, j]^H a == w[j] vl[:, j]^H``) and right eigenvectors ``vr``
(``a vr[:, j] == w[j] vr[:, j]``), each of unit 2-norm with its largest component real.

Derivatives as JAX defines them by default: the eigenvalues' (``dw = diag(vr^-1 da vr)``) when
no eigenvector is returned; eigenvector derivatives raise.
"""
from __future__ import annotations

import numpy as np

from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.rules import Zero
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import linalg as L
from pyjax._src.lax import linalg_host
from pyjax._src.lax.ad_util import zero_tangent
from pyjax._src.lax.base import aval_of


def _complex_dtype(dt):
    return np.dtype(linalg_host._complex_dtype(dt))


def _eig_abstract_eval(a, *, compute_left_eigenvectors, compute_right_eigenvectors):
    L._check_matrix("eig", a, square=True)
    cdt = _complex_dtype(a.dtype)
    outs = [ShapedArray(a.shape[:-1], cdt)]
    outs += [ShapedArray(a.shape, cdt)] * (int(compute_left_eigenvectors)
                                           + int(compute_right_eigenvectors))
    return outs


def _eig_lower(ctx, a, **params):
    if ctx.platform != "cpu":
        raise NotImplementedError(f"lax.linalg.eig is only implemented on CPU (as JAX), not "
                                  f"on {ctx.platform!r}")
    return L._host_kernel(ctx, "eig", [a], **params)


def _eig_jvp(primals, tangents, *, compute_left_eigenvectors, compute_right_eigenvectors):
    if compute_left_eigenvectors or compute_right_eigenvectors:
        raise NotImplementedError(
            "The derivatives of eigenvectors are not implemented, only eigenvalues "
            "(lax.linalg.eig with compute_left_eigenvectors=False and "
            "compute_right_eigenvectors=False, or jnp.linalg.eigvals).")
    a, = primals
    da, = tangents
    w, vr = eig_p.bind(a, compute_left_eigenvectors=False, compute_right_eigenvectors=True)
    if type(da) is Zero:
        return [w], [zero_tangent(aval_of(w))]
    cdt = L._dtype(vr)
    # a vr = vr diag(w)  =>  dw = diag(vr^-1 da vr)
    dav = L._mm(ew.convert_element_type(da, cdt), vr)
    return [w], [L._diag(_solve(vr, dav))]


def _solve(a, b):
    """``a^-1 b`` through the LU factorization."""
    from pyjax._src.lax.linalg_factor import _permutation_matrix, lu_p  # (import cycle)
    lu_, _, perm = lu_p.bind(a)
    pb = L._mm(_permutation_matrix(perm, L._dtype(a)), b)
    y = L.triangular_solve(lu_, pb, left_side=True, lower=True, unit_diagonal=True)
    return L.triangular_solve(lu_, y, left_side=True, lower=False)


eig_p = Primitive("eig", abstract_eval=_eig_abstract_eval, lower=_eig_lower, jvp=_eig_jvp,
                  multiple_results=True)
L._set_batch(eig_p)


def eig(x, *, compute_left_eigenvectors: bool = True, compute_right_eigenvectors: bool = True,
        enable_eigvec_derivs: bool = False, implementation=None, use_magma=None):
    """Eigendecomposition of the general square ``x``: ``[w, vl, vr]`` (eigenvalues, left and
    right eigenvectors, complex; ``vl``/``vr`` only when asked for). A matrix with a
    non-finite entry, or on which LAPACK fails, gives NaNs for that matrix."""
    if enable_eigvec_derivs:
        raise NotImplementedError("lax.linalg.eig: enable_eigvec_derivs=True (eigenvector "
                                  "derivatives) is not implemented in pyjax")
    if implementation is not None and str(getattr(implementation, "name", implementation)
                                          ).upper() != "LAPACK":
        raise NotImplementedError(f"lax.linalg.eig: implementation={implementation!r} is not "
                                  f"supported (CPU only: LAPACK)")
    if use_magma:  # JAX's error on the CPU; pyjax's eig is LAPACK's on every platform
        raise ValueError("Only the lapack implementation is supported on CPU.")
    return list(eig_p.bind(x, compute_left_eigenvectors=bool(compute_left_eigenvectors),
                           compute_right_eigenvectors=bool(compute_right_eigenvectors)))
