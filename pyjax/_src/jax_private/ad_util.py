"""`jax._src.ad_util`: `stop_gradient_p` (lineax registers a transpose rule for it) and the
symbolic zero types."""
from pyjax._src.core.rules import Zero  # noqa: F401
from pyjax._src.lax.stop_gradient import stop_gradient_p  # noqa: F401
