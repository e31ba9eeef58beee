"""``pyjax.scipy.sparse``, as ``jax.scipy.sparse``: the iterative solvers of ``linalg``."""
from pyjax.scipy.sparse import linalg  # noqa: F401
