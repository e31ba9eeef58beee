"""`jax._src.tree_util`: `_registry`, the pytree node types by type (flax.nnx tests
`type(x) in _registry` to tell pytree nodes from leaves), and `flatten_one_level` (orbax).
JAX's registry holds the built-in containers (tuple, list, dict, None) beside the registered
types; pyjax handles those natively, so `_registry` here is a live view over pyjax's
registries with the built-ins added (later registrations show)."""
from collections.abc import Mapping

from pyjax._src.core import pytree as _pytree
from pyjax._src.core.pytree import flatten_one_level  # noqa: F401

_BUILTIN_NODES = (tuple, list, dict, type(None))


class _RegistryView(Mapping):
    def __getitem__(self, t):
        if t in _BUILTIN_NODES:
            return t
        if t in _pytree._registry:
            return _pytree._registry[t]
        return _pytree._data_registry[t]

    def __contains__(self, t):
        return t in _BUILTIN_NODES or t in _pytree._registry or t in _pytree._data_registry

    def __iter__(self):
        yield from _BUILTIN_NODES
        yield from _pytree._registry
        yield from _pytree._data_registry

    def __len__(self):
        return len(_BUILTIN_NODES) + len(_pytree._registry) + len(_pytree._data_registry)


_registry = _RegistryView()
