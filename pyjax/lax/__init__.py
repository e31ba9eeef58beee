"""``pyjax.lax``: the primitives under JAX's names, and the functions built directly on them."""
from pyjax._src.lax.elementwise import *  # noqa: F401,F403
from pyjax._src.lax.shape_ops import *  # noqa: F401,F403
from pyjax._src.lax.slicing import *  # noqa: F401,F403
from pyjax._src.lax.reductions import *  # noqa: F401,F403
from pyjax._src.lax.dot import *  # noqa: F401,F403
from pyjax._src.lax.convolution import *  # noqa: F401,F403
from pyjax._src.lax.windowed_reductions import *  # noqa: F401,F403
from pyjax._src.lax.user_reductions import *  # noqa: F401,F403
from pyjax._src.lax.sorting import *  # noqa: F401,F403
from pyjax._src.lax.stop_gradient import *  # noqa: F401,F403
from pyjax._src.lax.parallel import *  # noqa: F401,F403
from pyjax._src.lax.sharding_constraint import *  # noqa: F401,F403
from pyjax._src.lax.fft import *  # noqa: F401,F403
from pyjax._src.control_flow.associative_scan import associative_scan  # noqa: F401
from pyjax._src.control_flow.scan import scan  # noqa: F401
from pyjax._src.control_flow.loops import fori_loop, map  # noqa: F401,A004
from pyjax._src.control_flow.while_loop import while_loop  # noqa: F401
from pyjax._src.control_flow.cond import cond, switch  # noqa: F401
from pyjax._src.control_flow.custom_solve import (  # noqa: F401
    custom_linear_solve, custom_root, linear_solve_p)
from pyjax._src.lax.pswapaxes import pswapaxes  # noqa: F401
from pyjax._src.lax.special import *  # noqa: F401,F403
from pyjax._src.lax.leftovers import *  # noqa: F401,F403
from pyjax._src.lax.ragged_dot import *  # noqa: F401,F403
from pyjax._src.lax.composite_ops import *  # noqa: F401,F403,E402
from pyjax._src.lax.barrier import *  # noqa: F401,F403,E402
from pyjax._src.lax.rng import *  # noqa: F401,F403,E402
from pyjax._src.lax.dot_algorithms import *  # noqa: F401,F403,E402
from pyjax._src.lax.split_stack_tile import *  # noqa: F401,F403,E402
from pyjax._src.lax.trace_ops import *  # noqa: F401,F403,E402
from pyjax._src.lax.point_to_point import *  # noqa: F401,F403,E402
from pyjax._src.lax.scaled_dot import *  # noqa: F401,F403,E402
from pyjax._src.interpreters.staging import stage  # noqa: F401,E402
from pyjax._src.lax.jax_names import primitives_under_jax_names as _jax_named  # noqa: E402

globals().update({k: v for k, v in _jax_named().items() if k not in globals()})
del _jax_named
from pyjax.lax import linalg  # noqa: F401,E402
