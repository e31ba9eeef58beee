"""``jax.debug``: ``print`` and ``callback`` with runtime values inside traced code."""
from pyjax._src.debug import callback as callback, debug_print as print  # noqa: A001
from pyjax._src.debug import breakpoint as breakpoint  # noqa: A001
