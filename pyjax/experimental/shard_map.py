"""``jax.experimental.shard_map``."""
from pyjax._src.parallel.shard_map import shard_map as shard_map

__all__ = ["shard_map"]
