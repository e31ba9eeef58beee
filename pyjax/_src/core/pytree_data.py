"""Between the two views of the pytree registry (core/pytree.py, "Two views of one
registry"): a data node (a key array) is one leaf to users and a node over its data array to
the transformations. These helpers let a transformation speak the user's view where JAX's
conventions are about the key array itself: vmap axes counted on its own dims, float0
tangents of its own shape, specs and ArgInfos with its key dtype.

Every data node has exactly one data child, so both views have the same number of leaves.

Layer 1: imports only pytree.
"""
from __future__ import annotations

from typing import Any, Callable

from pyjax._src.core import pytree

__all__ = ["has_data_nodes", "user_treedef", "data_trailing_shapes", "collapse_data_leaves",
           "expand_data_leaves"]


def _walk_data_nodes(node, leaves, out, on_data):
    """Copies ``leaves`` (one per leaf of ``node``) to ``out``, replacing the children of
    each data node by ``on_data(type, aux, children)``'s list."""
    if node is None:
        out.append(next(leaves))
        return
    kind, t, aux, ch = node
    if kind == pytree._CUSTOM and t in pytree._data_registry:
        out.extend(on_data(t, aux, [next(leaves) for _ in ch]))
        return
    for c in ch:
        _walk_data_nodes(c, leaves, out, on_data)


def _user_root(node):
    if node is None:
        return None
    kind, t, aux, ch = node
    if kind == pytree._CUSTOM and t in pytree._data_registry:
        return None
    return (kind, t, aux, tuple([_user_root(c) for c in ch]))


def has_data_nodes(treedef: pytree.PyTreeDef) -> bool:
    """Whether a transformations'-view treedef holds a data node (a key array)."""
    return bool(pytree._data_types) and _root_has_data(treedef._root)


def _root_has_data(node) -> bool:
    if node is None:
        return False
    kind, t, _, ch = node
    if kind == pytree._CUSTOM and t in pytree._data_registry:
        return True
    return any(_root_has_data(c) for c in ch)


def user_treedef(treedef: pytree.PyTreeDef) -> pytree.PyTreeDef:
    """The user view of a transformations'-view treedef: data nodes become leaves."""
    if not has_data_nodes(treedef):
        return treedef
    return pytree.PyTreeDef(_user_root(treedef._root))


def data_trailing_shapes(treedef: pytree.PyTreeDef) -> list | None:
    """Per leaf of a transformations'-view treedef, the trailing shape that leaf's data node
    adds to the user-visible array (``()`` for ordinary leaves); None when there is no data
    node (the common case, so callers skip the work)."""
    if not has_data_nodes(treedef):
        return None
    out: list = []

    def walk(node):
        if node is None:
            out.append(())
            return
        kind, t, aux, ch = node
        if kind == pytree._CUSTOM and t in pytree._data_registry:
            out.extend([pytree._data_trailing[t](aux)] * len(ch))
            return
        for c in ch:
            walk(c)

    walk(treedef._root)
    return out


def collapse_data_leaves(treedef: pytree.PyTreeDef, leaves: list, fn: Callable) -> Any:
    """Builds the user-view tree of ``treedef`` from its data-view ``leaves``, where each
    data node's one leaf becomes ``fn(leaf, trailing_shape, aux)`` (e.g. a float0 tangent
    of key data becomes one of the key array's shape)."""
    out: list = []
    _walk_data_nodes(treedef._root, iter(leaves), out,
                     lambda t, aux, ch: [fn(ch[0], pytree._data_trailing[t](aux), aux)])
    return user_treedef(treedef).unflatten(out)


def expand_data_leaves(treedef: pytree.PyTreeDef, user_tree: Any, fn: Callable
                       ) -> tuple[list, pytree.PyTreeDef] | None:
    """The data-view leaves for a user tree that mirrors ``treedef`` (tangents of primals
    with key arrays: float0 arrays of the keys' shapes): each leaf at a data node becomes
    ``fn(leaf, trailing_shape, aux)``. None when the structures differ."""
    leaves, tree = pytree.user_tree_flatten(user_tree)
    if tree != user_treedef(treedef):
        return None
    out: list = []
    it = iter(leaves)

    def walk(node):
        if node is None:
            out.append(next(it))
            return
        kind, t, aux, ch = node
        if kind == pytree._CUSTOM and t in pytree._data_registry:
            out.append(fn(next(it), pytree._data_trailing[t](aux), aux))
            return
        for c in ch:
            walk(c)

    walk(treedef._root)
    return out, treedef
