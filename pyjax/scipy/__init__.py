"""``pyjax.scipy``: SciPy's API on pyjax arrays, as ``jax.scipy``."""
from pyjax.scipy import special as special  # noqa: F401
from pyjax.scipy import stats as stats  # noqa: F401
