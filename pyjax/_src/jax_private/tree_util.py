"""`jax._src.tree_util`: `_registry`, the custom pytree node types by type (flax.nnx tests
`type(x) in _registry`). It is pyjax's own registry dict, so later registrations show."""
from pyjax._src.core.pytree import _registry  # noqa: F401
from pyjax._src.core.pytree import flatten_one_level  # noqa: F401,E402  (orbax reads it here)
