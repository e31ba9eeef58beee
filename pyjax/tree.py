"""The ``jax.tree`` namespace: short names for the pytree utilities in ``tree_util``."""

from pyjax._src.core.pytree import (
    static_field as static,
    user_tree_all as all,
    user_tree_broadcast as broadcast,
    user_tree_flatten as flatten,
    user_tree_flatten_with_path as flatten_with_path,
    user_tree_leaves as leaves,
    user_tree_leaves_with_path as leaves_with_path,
    user_tree_map as map,
    user_tree_map_with_path as map_with_path,
    user_tree_reduce as reduce,
    user_tree_reduce_associative as reduce_associative,
    user_tree_structure as structure,
    user_tree_transpose as transpose,
    tree_unflatten as unflatten,
)

__all__ = ["all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path",
           "map", "map_with_path", "reduce", "reduce_associative", "static", "structure",
           "transpose", "unflatten"]
