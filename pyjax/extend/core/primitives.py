"""The primitives as ``jax.extend.core.primitives``: the ones of JAX's list that pyjax has
(interpreters written against JAX, such as numpyro's provenance tracking, key tables on them).
``call_p`` and ``closed_call_p`` are JAX call primitives pyjax never stages (a jitted call is a
``jit`` equation); they exist so such tables can name them, and binding one raises."""
from pyjax import lax as _lax
from pyjax.lax import linalg as _linalg
from pyjax._src.extend import JaxStylePrimitive as _JaxStylePrimitive
from pyjax._src.random.samplers import random_gamma_p as random_gamma_p  # noqa: F401
from pyjax._src.transformations.ad_checkpoint import name_p as name_p  # noqa: F401
from pyjax._src.transformations.checkpoint import checkpoint_p as remat_p  # noqa: F401
from pyjax._src.transformations.custom_derivatives import (  # noqa: F401
    custom_jvp_call_p as custom_jvp_call_p, custom_lin_p as custom_lin_p,
    custom_vjp_call_p as custom_vjp_call_p)
from pyjax._src.transformations.jit import jit_p as jit_p  # noqa: F401

call_p = _JaxStylePrimitive("call")
closed_call_p = _JaxStylePrimitive("closed_call")

# every lax and lax.linalg primitive of pyjax (the names JAX lists, and a few it keeps elsewhere)
for _source in (_lax, _linalg):
    for _name in dir(_source):
        if _name.endswith("_p") and not _name.startswith("_"):
            globals().setdefault(_name, getattr(_source, _name))
del _source, _name
