"""Source locations of traced code, as ``jax.extend.source_info_util``."""
from pyjax._src.extend import register_exclusion as register_exclusion
