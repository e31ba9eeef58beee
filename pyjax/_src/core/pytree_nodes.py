"""Pytree node types registered beyond the built-in containers: ``collections.OrderedDict``,
``collections.defaultdict`` and ``Partial`` (a ``functools.partial`` whose arguments are
children), and ``default_registry``, the registry as an object. ``core/pytree.py`` imports
this module at its end, so these types are nodes whenever pytrees are used."""
from __future__ import annotations

import collections
import functools

from pyjax._src.core.pytree import (DictKey, _sorted_keys, flatten_one_level,
                                    register_pytree_node, user_tree_flatten)


# ---------------------------------------------------------------------------------------------
# Standard library containers registered as custom nodes
# ---------------------------------------------------------------------------------------------

def _odict_flatten(d):
    return list(d.values()), tuple(d.keys())


def _odict_flatten_with_keys(d):
    return [(DictKey(k), v) for k, v in d.items()], tuple(d.keys())


def _odict_unflatten(keys, children):
    return collections.OrderedDict(zip(keys, children))


def _ddict_flatten(d):
    keys = _sorted_keys(d)
    return [d[k] for k in keys], (d.default_factory, tuple(keys))


def _ddict_flatten_with_keys(d):
    keys = _sorted_keys(d)
    return [(DictKey(k), d[k]) for k in keys], (d.default_factory, tuple(keys))


def _ddict_unflatten(aux, children):
    factory, keys = aux
    return collections.defaultdict(factory, zip(keys, children))


register_pytree_node(collections.OrderedDict, _odict_flatten, _odict_unflatten,
                     _odict_flatten_with_keys)
register_pytree_node(collections.defaultdict, _ddict_flatten, _ddict_unflatten,
                     _ddict_flatten_with_keys)


# ---------------------------------------------------------------------------------------------
# Partial
# ---------------------------------------------------------------------------------------------

class _OpaqueCallable:
    """Wraps a ``functools.partial`` so that ``Partial(p, ...)`` does not merge ``p``'s
    arguments into its own: only the outer arguments are pytree children. Compares and hashes
    like the wrapped object, so treedefs stay equal for the same inner callable."""
    __slots__ = ("wrapped", "func", "args", "keywords")

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.func = wrapped.func
        self.args = wrapped.args
        self.keywords = wrapped.keywords

    def __call__(self, *args, **kwargs):
        return self.wrapped(*args, **kwargs)

    def __eq__(self, other):
        if type(other) is _OpaqueCallable:
            return self.wrapped == other.wrapped
        return NotImplemented

    def __hash__(self):
        return hash(self.wrapped)

    def __repr__(self):
        return repr(self.wrapped)


class Partial(functools.partial):
    """A ``functools.partial`` that is a pytree: its positional and keyword arguments are the
    children, the function is static (kept in the treedef). Useful to pass closures with array
    arguments through transformed functions.

    ``Partial(f, x)(y) == f(x, y)``; ``tree_leaves(Partial(f, 1, b=2)) == [1, 2]``.
    """

    def __new__(cls, func, *args, **kw):
        if isinstance(func, functools.partial):
            func = _OpaqueCallable(func)
        return super().__new__(cls, func, *args, **kw)


def _partial_flatten(p):
    return (p.args, p.keywords), p.func


def _partial_unflatten(func, children):
    args, kw = children
    return Partial(func, *args, **kw)


register_pytree_node(Partial, _partial_flatten, _partial_unflatten)


class PyTreeRegistry:
    """The registry of pytree node types, as an object (``tree_util.default_registry``).

    pyjax has one registry: this object's methods are the module's functions over it."""

    def flatten(self, tree, leaf_predicate=None):
        """``(leaves, treedef)`` of ``tree`` (``tree_flatten``)."""
        return user_tree_flatten(tree, is_leaf=leaf_predicate)

    def flatten_one_level(self, tree):
        """``(children, aux_data)`` of the root node, or None for a leaf."""
        try:
            return flatten_one_level(tree)
        except ValueError:
            return None

    def register_node(self, nodetype, to_iterable, from_iterable, to_iterable_with_keys=None):
        """Register ``nodetype`` as a pytree node (``register_pytree_node``)."""
        register_pytree_node(nodetype, to_iterable, from_iterable, to_iterable_with_keys)


default_registry = PyTreeRegistry()
