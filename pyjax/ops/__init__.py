"""``pyjax.ops``: segment reductions, as ``jax.ops``."""
from pyjax._src.ops.segment import (  # noqa: F401
    segment_sum as segment_sum, segment_max as segment_max, segment_min as segment_min,
    segment_prod as segment_prod)
