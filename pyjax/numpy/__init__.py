"""``pyjax.numpy``: the NumPy API on pyjax arrays, with JAX's promotion rules."""
from pyjax._src.numpy.dtypes_api import *  # noqa: F401,F403
from pyjax._src.numpy.creation import *  # noqa: F401,F403
from pyjax._src.numpy.ufuncs import *  # noqa: F401,F403
from pyjax._src.numpy.reductions import *  # noqa: F401,F403
from pyjax._src.numpy.shape import *  # noqa: F401,F403
from pyjax._src.numpy.products import *  # noqa: F401,F403
from pyjax._src.numpy.indexing import *  # noqa: F401,F403
from pyjax._src.numpy import array_methods as _array_methods  # attaches operators to arrays
from pyjax._src.core.array import Array as ndarray  # noqa: F401
from pyjax._src.numpy.searching import *  # noqa: F401,F403
from pyjax._src.numpy.polynomial import *  # noqa: F401,F403
from pyjax._src.numpy.conditional import *  # noqa: F401,F403
from pyjax._src.numpy.number_theory import *  # noqa: F401,F403
from pyjax._src.numpy.convolve import *  # noqa: F401,F403
from pyjax.numpy import fft  # noqa: F401,E402
from pyjax._src.numpy.array_api import *  # noqa: F401,F403,E402
from pyjax._src.numpy.calculus import *  # noqa: F401,F403
from pyjax._src.numpy.setops import *  # noqa: F401,F403
from pyjax._src.numpy.index_tricks import *  # noqa: F401,F403
from pyjax._src.numpy.windows import *  # noqa: F401,F403
from pyjax._src.numpy.statistics import *  # noqa: F401,F403
from pyjax._src.numpy.padding import *  # noqa: F401,F403
from pyjax._src.numpy.vectorize import *  # noqa: F401,F403
from pyjax._src.numpy.editing import *  # noqa: F401,F403
from pyjax._src.numpy.bits import *  # noqa: F401,F403
from pyjax._src.numpy.io import *  # noqa: F401,F403
from pyjax._src.numpy.ufunc_objects import *  # noqa: F401,F403  (after ufuncs: replaces them)
from pyjax.numpy import linalg  # noqa: F401,E402


def __getattr__(name):   # jnp.bfloat16 & co., made (and ml_dtypes imported) on first use
    from pyjax._src.numpy import dtypes_api
    if name in dtypes_api.ML_SCALAR_TYPE_NAMES:
        return globals().setdefault(name, getattr(dtypes_api, name))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    from pyjax._src.numpy import dtypes_api
    return sorted(set(globals()) | set(dtypes_api.ML_SCALAR_TYPE_NAMES))
