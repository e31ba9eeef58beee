"""``pyjax.scipy``: SciPy's API on pyjax arrays, as ``jax.scipy``."""
from pyjax.scipy import special as special  # noqa: F401
from pyjax.scipy import stats as stats  # noqa: F401
from pyjax.scipy import integrate as integrate  # noqa: F401
from pyjax.scipy import ndimage as ndimage  # noqa: F401
from pyjax.scipy import cluster as cluster  # noqa: F401
from pyjax.scipy import optimize as optimize  # noqa: F401
