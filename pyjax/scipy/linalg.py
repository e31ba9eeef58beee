"""``pyjax.scipy.linalg``: linear algebra, as ``jax.scipy.linalg``."""
# Special-matrix constructors
from pyjax._src.scipy.special_matrices import (  # noqa: F401
    block_diag as block_diag, circulant as circulant, companion as companion,
    convolution_matrix as convolution_matrix, dft as dft, fiedler as fiedler,
    fiedler_companion as fiedler_companion, hadamard as hadamard, hankel as hankel,
    helmert as helmert, hilbert as hilbert, invhilbert as invhilbert, invpascal as invpascal,
    leslie as leslie, pascal as pascal, toeplitz as toeplitz)
# Decompositions and solvers come from pyjax._src.scipy.linalg, added here by their own change.
