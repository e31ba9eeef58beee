"""``pyjax.lax.linalg``: matrix factorizations as primitives (JAX's ``jax.lax.linalg``)."""
from pyjax._src.lax.linalg import (  # noqa: F401
    cholesky, cholesky_p, eig, eig_p, eigh, eigh_p, geqrf, geqrf_p, householder_product,
    householder_product_p, lu, lu_p, lu_pivots_to_permutation, lu_pivots_to_permutation_p, ormqr,
    qr, qr_p, svd, svd_p, symmetrize, triangular_solve, triangular_solve_p, SvdAlgorithm)
from pyjax._src.lax.linalg_structured import (  # noqa: F401
    cholesky_update, cholesky_update_p, hessenberg, hessenberg_p, schur, schur_p, tridiagonal,
    tridiagonal_p, tridiagonal_solve, tridiagonal_solve_p)
