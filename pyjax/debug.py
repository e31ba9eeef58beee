"""``jax.debug``: ``print`` and ``callback`` with runtime values inside traced code."""
from pyjax._src.debug import callback as callback, debug_print as print  # noqa: A001
from pyjax._src.debug import breakpoint as breakpoint  # noqa: A001
from pyjax._src.debug import debug_log as log
from pyjax._src.sharding.visualize import (  # noqa: E402
    visualize_array_sharding as visualize_array_sharding,
    visualize_sharding as visualize_sharding)
from pyjax._src.sharding.explicit import inspect_array_sharding as inspect_array_sharding  # noqa
