"""``pyjax.scipy.linalg``: linear algebra, as ``jax.scipy.linalg``."""
# Special-matrix constructors
from pyjax._src.scipy.special_matrices import (  # noqa: F401
    block_diag as block_diag, circulant as circulant, companion as companion,
    convolution_matrix as convolution_matrix, dft as dft, fiedler as fiedler,
    fiedler_companion as fiedler_companion, hadamard as hadamard, hankel as hankel,
    helmert as helmert, hilbert as hilbert, invhilbert as invhilbert, invpascal as invpascal,
    leslie as leslie, pascal as pascal, toeplitz as toeplitz)
# Decompositions and solvers
from pyjax._src.scipy.linalg import (  # noqa: F401
    cho_factor as cho_factor, cho_solve as cho_solve, cholesky as cholesky, det as det,
    eigh as eigh, inv as inv, lu as lu, lu_factor as lu_factor, lu_solve as lu_solve, qr as qr,
    solve as solve, solve_triangular as solve_triangular, svd as svd)
# Schur-based names and matrix functions
from pyjax._src.scipy.linalg_matfun import (  # noqa: F401,E402
    eigh_tridiagonal as eigh_tridiagonal, expm as expm, expm_frechet as expm_frechet,
    funm as funm, hessenberg as hessenberg, polar as polar, qr_multiply as qr_multiply,
    rsf2csf as rsf2csf, schur as schur,
    solve_sylvester as solve_sylvester, sqrtm as sqrtm)
