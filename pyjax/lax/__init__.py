"""``pyjax.lax``: the primitives under JAX's names, and the functions built directly on them."""
from pyjax._src.lax.elementwise import *  # noqa: F401,F403
from pyjax._src.lax.shape_ops import *  # noqa: F401,F403
from pyjax._src.lax.slicing import *  # noqa: F401,F403
from pyjax._src.lax.reductions import *  # noqa: F401,F403
from pyjax._src.lax.dot import *  # noqa: F401,F403
from pyjax._src.lax.sorting import *  # noqa: F401,F403
from pyjax._src.lax.stop_gradient import *  # noqa: F401,F403
from pyjax._src.lax.parallel import *  # noqa: F401,F403
