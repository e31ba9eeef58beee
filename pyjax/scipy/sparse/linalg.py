"""``pyjax.scipy.sparse.linalg``, as ``jax.scipy.sparse.linalg``."""
from pyjax._src.scipy.sparse_linalg import bicgstab, cg, gmres  # noqa: F401
