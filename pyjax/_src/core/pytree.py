"""Pytrees: nested containers of leaves, flattened to (leaves, PyTreeDef) and rebuilt.

Behaviour follows JAX's documented ``jax.tree_util``:

* node types are ``tuple``, ``list``, ``dict`` (children in sorted-key order), ``None``
  (a node with no children), namedtuples (a tuple subclass with ``_fields``),
  ``collections.OrderedDict`` (insertion order), ``collections.defaultdict`` (sorted keys,
  keeps ``default_factory``) and whatever is registered; class hierarchy is otherwise
  ignored, so everything else (arrays, scalars, dict subclasses, ...) is a leaf;
* a ``PyTreeDef`` is immutable, hashable, comparable and picklable;
* typed PRNG key arrays are leaves, as in JAX (``user_tree_*``, what ``jax.tree_util``
  exports); the transformations flatten with ``tree_*``, where a key array is a node over
  its key data (see "Two views of one registry").

Internally a tree structure is a nested tuple: a leaf is ``None`` and any other node is
``(kind, type, aux_data, children)``. Plain tuples hash and compare in C, which keeps the
``jit`` cache key cheap. Flattening looks the node kind up in a type -> kind dict (with a
per-type cache for leaf types and namedtuples), never an ``isinstance`` chain, and handles
leaf children inline to save a Python call per leaf: ``jit`` flattens its arguments on
every call.

Layer 1: imports only the standard library.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import operator
from typing import Any, Callable, Hashable, Iterable, Sequence

__all__ = [
    "PyTreeDef",
    "tree_flatten", "tree_unflatten", "tree_leaves", "tree_structure", "tree_map",
    "tree_flatten_with_path",
    "treedef_is_leaf", "treedef_is_strict_leaf", "treedef_children", "treedef_tuple",
    "all_leaves", "build_tree", "flatten_one_level", "flatten_one_level_with_keys",
    "is_tree_node",
    "register_pytree_node", "register_pytree_with_keys", "register_pytree_node_class",
    "register_pytree_with_keys_class", "register_dataclass", "register_static", "static_field",
    "SequenceKey", "DictKey", "GetAttrKey", "FlattenedIndexKey", "KeyEntry", "KeyPath", "keystr",
    "Partial",
    "user_tree_flatten", "user_tree_leaves", "user_tree_structure", "user_tree_map",
    "user_tree_all", "user_tree_reduce", "user_tree_reduce_associative", "user_tree_transpose",
    "user_tree_broadcast", "user_tree_flatten_with_path", "user_tree_leaves_with_path",
    "user_tree_map_with_path", "register_data_node",
]

# ---------------------------------------------------------------------------------------------
# Node kinds and the registry
# ---------------------------------------------------------------------------------------------

# Small ints so that node tuples compare quickly; the hot loops use the literals.
_LEAF = 0
_TUPLE = 1
_LIST = 2
_DICT = 3
_NONE = 4
_NAMEDTUPLE = 5
_CUSTOM = 6

_NoneType = type(None)
_BUILTIN_KINDS = {tuple: _TUPLE, list: _LIST, dict: _DICT, _NoneType: _NONE}


class _NodeHandler:
    """How one registered type is flattened and rebuilt (slots: flatten reads it per node)."""
    __slots__ = ("type", "flatten", "unflatten", "flatten_with_keys")

    def __init__(self, nodetype, flatten, unflatten, flatten_with_keys):
        self.type, self.flatten, self.unflatten = nodetype, flatten, unflatten
        self.flatten_with_keys = flatten_with_keys  # None: keys are flat indices


# Registered (custom) node types, by exact type.
_registry: dict[type, _NodeHandler] = {}
# Data nodes (register_data_node): leaves to users, nodes over their data arrays to the
# transformations; the trailing shape their data adds, by type.
_data_registry: dict[type, _NodeHandler] = {}
_data_trailing: dict[type, Callable] = {}
_data_types: set[type] = set()
# type -> kind for every type seen so far. Builtins and registered types are always present;
# leaf types and namedtuple classes are added on first sight (see _classify).
_kinds: dict[type, int] = dict(_BUILTIN_KINDS)
# The leaf types among them, for the all-leaves fast path of flattening.
_leaf_types: set[type] = set()
_KIND_CACHE_LIMIT = 8192


def _classify(t: type) -> int:
    """Kind of a type not yet in ``_kinds``; caches the answer."""
    if issubclass(t, tuple) and hasattr(t, "_fields"):
        kind = _NAMEDTUPLE
    else:
        kind = _LEAF
    if len(_kinds) > _KIND_CACHE_LIMIT:
        # Many short-lived types seen (e.g. classes made in a loop): forget the cached ones
        # rather than keep them alive forever.
        _kinds.clear()
        _kinds.update(_BUILTIN_KINDS)
        _kinds.update((rt, _CUSTOM) for rt in _registry)
        _leaf_types.clear()
    _kinds[t] = kind
    if kind == _LEAF:
        _leaf_types.add(t)
    return kind


def _kind_of(t: type) -> int:
    kind = _kinds.get(t)
    return _classify(t) if kind is None else kind


def _register(nodetype, flatten, unflatten, flatten_with_keys):
    if not isinstance(nodetype, type):
        raise TypeError(f"pytree node types must be classes, got {nodetype!r}.")
    if nodetype in _registry or nodetype in _BUILTIN_KINDS:
        raise ValueError(f"Duplicate custom PyTreeDef type registration for {nodetype}.")
    _registry[nodetype] = _NodeHandler(nodetype, flatten, unflatten, flatten_with_keys)
    _kinds[nodetype] = _CUSTOM
    _leaf_types.discard(nodetype)


def register_pytree_node(nodetype: type, flatten_func: Callable, unflatten_func: Callable,
                         flatten_with_keys_func: Callable | None = None) -> None:
    """Extends the set of types that are considered internal nodes in pytrees.

    Parameters
    ----------
    nodetype : type
        The Python type to register (exact type; subclasses are not covered).
    flatten_func : callable
        ``flatten_func(x) -> (children, aux_data)``: an iterable of children to flatten
        recursively and hashable auxiliary data kept in the treedef.
    unflatten_func : callable
        ``unflatten_func(aux_data, children) -> x``.
    flatten_with_keys_func : callable, optional
        ``flatten_with_keys_func(x) -> (((key, child), ...), aux_data)`` used by the
        ``*_with_path`` functions; without it children get ``FlattenedIndexKey`` keys.

    Raises
    ------
    ValueError
        If ``nodetype`` is already a pytree node type.
    """
    _register(nodetype, flatten_func, unflatten_func, flatten_with_keys_func)


def register_pytree_with_keys(nodetype: type, flatten_with_keys: Callable,
                              unflatten_func: Callable,
                              flatten_func: Callable | None = None) -> None:
    """Registers a pytree node type whose flatten function also returns each child's key.

    ``flatten_with_keys(x)`` returns ``(iterable of (key, child), aux_data)``. ``flatten_func``
    is an optional faster variant without keys; it must return the same children and aux data.
    """
    if flatten_func is None:
        def flatten_func(x, _fwk=flatten_with_keys):
            key_children, aux = _fwk(x)
            return [c for _, c in key_children], aux
    _register(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_node_class(cls: type) -> type:
    """Registers ``cls`` using its ``tree_flatten`` method and ``tree_unflatten`` classmethod.

    Returns ``cls`` unchanged, so this works as a class decorator.
    """
    register_pytree_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls: type) -> type:
    """Registers ``cls`` using ``tree_flatten_with_keys`` (and ``tree_flatten`` if defined)
    and the ``tree_unflatten`` classmethod. Returns ``cls`` (usable as a decorator)."""
    flatten = (operator.methodcaller("tree_flatten") if hasattr(cls, "tree_flatten") else None)
    register_pytree_with_keys(cls, operator.methodcaller("tree_flatten_with_keys"),
                              cls.tree_unflatten, flatten)
    return cls


def register_dataclass(nodetype: type | None = None, data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None,
                       drop_fields: Sequence[str] = ()):
    """Registers a dataclass-like type as a pytree node.

    ``data_fields`` are the children (pytrees); ``meta_fields`` are static and kept in the
    treedef (they must be hashable). When both are omitted, ``nodetype`` must be a dataclass:
    fields whose metadata has ``static=True`` are meta fields, fields with ``init=False`` are
    dropped and the rest are data fields. Instances are rebuilt as
    ``nodetype(**fields)``. Returns ``nodetype``, so it works as a decorator (also as
    ``@register_dataclass(data_fields=..., meta_fields=...)``).
    """
    if nodetype is None:
        return functools.partial(register_dataclass, data_fields=data_fields,
                                 meta_fields=meta_fields, drop_fields=drop_fields)
    if (data_fields is None) != (meta_fields is None):
        raise TypeError("register_dataclass: data_fields and meta_fields must both be given, "
                        "or both be None to infer them from dataclasses.fields().")
    if data_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(f"register_dataclass: {nodetype} is not a dataclass; pass "
                            "data_fields and meta_fields explicitly.")
        data, meta = [], []
        for f in dataclasses.fields(nodetype):
            if not f.init or f.name in drop_fields:
                continue
            (meta if f.metadata.get("static", False) else data).append(f.name)
    else:
        data, meta = list(data_fields), list(meta_fields)
        if dataclasses.is_dataclass(nodetype):
            init = {f.name for f in dataclasses.fields(nodetype) if f.init}
            given = set(data) | set(meta) | set(drop_fields)
            if init != given:
                raise ValueError(
                    f"register_dataclass: data_fields {data} + meta_fields {meta} + "
                    f"drop_fields {list(drop_fields)} must be exactly the init fields of "
                    f"{nodetype.__name__}: {sorted(init)}.")
    data_names, meta_names = tuple(data), tuple(meta)
    keys = tuple(GetAttrKey(n) for n in data_names)

    def flatten(x):
        return ([getattr(x, n) for n in data_names],
                tuple([getattr(x, n) for n in meta_names]))

    def flatten_with_keys(x):
        return ([(k, getattr(x, n)) for k, n in zip(keys, data_names)],
                tuple([getattr(x, n) for n in meta_names]))

    def unflatten(aux, children):
        kwargs = dict(zip(meta_names, aux))
        kwargs.update(zip(data_names, children))
        return nodetype(**kwargs)

    _register(nodetype, flatten, unflatten, flatten_with_keys)
    return nodetype


def static_field(**kwargs):
    """``dataclasses.field`` with ``metadata['static'] = True`` (JAX's ``jax.tree.static``)."""
    metadata = dict(kwargs.pop("metadata", None) or {})
    metadata["static"] = True
    return dataclasses.field(metadata=metadata, **kwargs)


def _static_flatten(x):
    return (), x


def _static_unflatten(aux, children):
    return aux


def register_static(cls: type) -> type:
    """Registers ``cls`` as a pytree with no leaves: instances live in the treedef, so they
    must be hashable. Returns ``cls`` (usable as a decorator)."""
    register_pytree_with_keys(cls, _static_flatten, _static_unflatten, _static_flatten)
    return cls


def is_tree_node(typ: type) -> bool:
    """True if instances of ``typ`` are pytree nodes (not leaves)."""
    return _kind_of(typ) != _LEAF


# ---------------------------------------------------------------------------------------------
# Key path entries
# ---------------------------------------------------------------------------------------------

class _KeyEntry:
    """A key path entry of one field (named by ``__match_args__``): equal, hashed, printed by
    ``repr`` and pickled by its type and that field."""
    __slots__ = ()

    def _field(self):
        return getattr(self, self.__match_args__[0])

    def __repr__(self):
        return f"{type(self).__name__}({self.__match_args__[0]}={self._field()!r})"

    def __eq__(self, other):
        return type(other) is type(self) and self._field() == other._field()

    def __hash__(self):
        return hash((type(self), self._field()))

    def __reduce__(self):
        return type(self), (self._field(),)


class SequenceKey(_KeyEntry):
    """Key path entry for the ``idx``-th child of a tuple or list: prints as ``[idx]``."""
    __slots__ = __match_args__ = ("idx",)

    def __init__(self, idx: int):
        self.idx = idx

    def __str__(self):
        return f"[{self.idx!r}]"


class DictKey(_KeyEntry):
    """Key path entry for a mapping's child: prints as ``[key]`` with ``repr(key)``."""
    __slots__ = __match_args__ = ("key",)

    def __init__(self, key: Hashable):
        self.key = key

    def __str__(self):
        return f"[{self.key!r}]"


class GetAttrKey(_KeyEntry):
    """Key path entry for an attribute (namedtuple field, dataclass field): prints as ``.name``."""
    __slots__ = __match_args__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __str__(self):
        return f".{self.name}"


class FlattenedIndexKey(_KeyEntry):
    """Key path entry for a child of a custom node registered without keys."""
    __slots__ = __match_args__ = ("key",)

    def __init__(self, key: int):
        self.key = key

    def __str__(self):
        return f"[<flat index {self.key}>]"


KeyEntry = Any  # SequenceKey | DictKey | GetAttrKey | FlattenedIndexKey | any user key
KeyPath = tuple


def _simple_entry_str(k) -> str:
    t = type(k)
    if t is SequenceKey:
        return str(k.idx)
    if t is DictKey:
        return str(k.key)
    if t is GetAttrKey:
        return str(k.name)
    if t is FlattenedIndexKey:
        return str(k.key)
    return str(k)


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """Pretty-prints a key path, e.g. ``(SequenceKey(0), DictKey('a'), GetAttrKey('x'))``
    gives ``"[0]['a'].x"``; with ``simple=True`` and ``separator='/'`` gives ``"0/a/x"``."""
    to_str = _simple_entry_str if simple else str
    return separator.join([to_str(k) for k in keys])


# ---------------------------------------------------------------------------------------------
# PyTreeDef
# ---------------------------------------------------------------------------------------------

def _unflatten(node, it, _islice=itertools.islice):
    """Rebuilds the value of a (non-leaf) node, taking leaves from iterator ``it``."""
    kind, t, aux, ch = node
    if len(ch) > 6 and not any(ch):  # many leaf children: slice them off in C
        children = list(_islice(it, len(ch)))
    else:
        children = []
        for c in ch:
            children.append(next(it) if c is None else _unflatten(c, it))
    if kind == 1:  # tuple
        return tuple(children)
    if kind == 2:  # list
        return children
    if kind == 3:  # dict
        return dict(zip(aux, children))
    if kind == 4:  # None
        return None
    if kind == 5:  # namedtuple
        return t(*children)
    handler = _registry.get(t) or _data_registry.get(t)
    if handler is None:
        raise ValueError(f"pytree node type {t} is no longer registered.")
    return handler.unflatten(aux, tuple(children))  # JAX passes the children as a tuple


def _count_leaves(node) -> int:
    if node is None:
        return 1
    return sum([_count_leaves(c) for c in node[3]])


def _count_nodes(node) -> int:
    if node is None:
        return 1
    return 1 + sum([_count_nodes(c) for c in node[3]])


def _node_str(node) -> str:
    if node is None:
        return "*"
    kind, t, aux, ch = node
    parts = [_node_str(c) for c in ch]
    if kind == _TUPLE:
        return "(" + ", ".join(parts) + (",)" if len(parts) == 1 else ")")
    if kind == _LIST:
        return "[" + ", ".join(parts) + "]"
    if kind == _DICT:
        return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(aux, parts)) + "}"
    if kind == _NONE:
        return "None"
    if kind == _NAMEDTUPLE:
        return f"CustomNode(namedtuple[{t.__name__}], [{', '.join(parts)}])"
    return f"CustomNode({t.__name__}[{aux}], [{', '.join(parts)}])"


def _safe_ne(a, b) -> bool:
    try:
        return bool(a != b)
    except Exception:  # e.g. aux data holding arrays: compare by identity
        return a is not b


def _flatten_up_to(node, x, out):
    if node is None:
        out.append(x)
        return
    kind, t, aux, ch = node
    if kind == _TUPLE or kind == _LIST:
        name = "tuple" if kind == _TUPLE else "list"
        if type(x) is not t:
            raise ValueError(f"Expected {name}, got {x!r}.")
        if len(x) != len(ch):
            raise ValueError(f"{name.capitalize()} arity mismatch: {len(x)} != {len(ch)}; "
                             f"{name}: {x!r}.")
        children = x
    elif kind == _DICT:
        if type(x) is not dict:
            raise ValueError(f"Expected dict, got {x!r}.")
        keys = _sorted_keys(x)
        if len(keys) != len(aux) or _safe_ne(tuple(keys), aux):
            raise ValueError(f"Dict key mismatch; expected keys: {list(aux)!r}; dict: {x!r}.")
        children = [x[k] for k in keys]
    elif kind == _NONE:
        if x is not None:
            raise ValueError(f"Expected None, got {x!r}.")
        return
    elif kind == _NAMEDTUPLE:
        if _kind_of(type(x)) != _NAMEDTUPLE:
            raise ValueError(f"Expected named tuple, got {x!r}.")
        if len(x) != len(ch):
            raise ValueError(f"Named tuple arity mismatch: {len(x)} != {len(ch)}; "
                             f"tuple: {x!r}.")
        if type(x) is not t:
            raise ValueError(f"Named tuple type mismatch: expected type: {t.__name__!r}, "
                             f"tuple: {x!r}.")
        children = x
    else:
        if type(x) is not t:
            raise ValueError(f"Custom node type mismatch; expected type: {t}; value: {x!r}.")
        children, aux2 = (_registry.get(t) or _data_registry[t]).flatten(x)
        children = list(children)
        if _safe_ne(aux, aux2):
            raise ValueError(f"Mismatch custom node data: {aux!r} != {aux2!r}; value: {x!r}.")
        if len(children) != len(ch):
            raise ValueError(f"Custom node arity mismatch: {len(children)} != {len(ch)}; "
                             f"value: {x!r}.")
    for c, xc in zip(ch, children):
        if c is None:
            out.append(xc)
        else:
            _flatten_up_to(c, xc, out)


def _compose(node, inner):
    if node is None:
        return inner
    kind, t, aux, ch = node
    return (kind, t, aux, tuple([_compose(c, inner) for c in ch]))


def _from_iterable(node, xs):
    if node is None:
        return xs
    kind, t, aux, ch = node
    xs = list(xs)
    if len(xs) != len(ch):
        raise ValueError(f"Arity mismatch between trees: expected {len(ch)} children, "
                         f"got {len(xs)}.")
    children = [_from_iterable(c, x) for c, x in zip(ch, xs)]
    return _unflatten((kind, t, aux, tuple([None] * len(ch))), iter(children))


def _hash_structure(node):
    """A hash of a node tree that uses each aux value when hashable, else only its type
    (consistent with ==, which compares aux values)."""
    if node is None:
        return hash(None)
    kind, t, aux, children = node
    try:
        aux_hash = hash(aux)
    except TypeError:
        aux_hash = hash(type(aux))
    return hash((kind, t, aux_hash, tuple(_hash_structure(c) for c in children)))


class PyTreeDef:
    """The structure of a pytree: node types, auxiliary data, and where the leaves go.

    Immutable, hashable (when every node's aux data is), comparable with ``==`` and
    picklable (when the node types are importable).
    """
    __slots__ = ("_root", "_num_leaves", "_hash", "__weakref__")

    def __init__(self, root, num_leaves: int | None = None):
        self._root = root
        self._num_leaves = _count_leaves(root) if num_leaves is None else num_leaves
        self._hash = None

    # -- basic properties --------------------------------------------------------------------
    @property
    def num_leaves(self) -> int:
        """Number of leaves."""
        return self._num_leaves

    @property
    def num_nodes(self) -> int:
        """Number of nodes, leaves and ``None`` included."""
        return _count_nodes(self._root)

    def children(self) -> list[PyTreeDef]:
        """The treedefs of the root's children (empty for a leaf)."""
        if self._root is None:
            return []
        return [PyTreeDef(c) for c in self._root[3]]

    def node_data(self):
        """``None`` for a leaf, else ``(node_type, aux_data)`` of the root node."""
        if self._root is None:
            return None
        kind, t, aux, _ = self._root
        if kind == _DICT:
            return (t, list(aux))
        if kind == _NONE:
            return (_NoneType, None)
        return (t, aux)

    # -- operations --------------------------------------------------------------------------
    def unflatten(self, leaves: Iterable) -> Any:
        """Builds the pytree with this structure from an iterable of leaves."""
        if type(leaves) is not list:
            leaves = list(leaves)
        if len(leaves) != self._num_leaves:
            which = "few" if len(leaves) < self._num_leaves else "many"
            raise ValueError(f"Too {which} leaves for PyTreeDef; expected {self._num_leaves}, "
                             f"got {len(leaves)}. (treedef: {self!r})")
        root = self._root
        if root is None:
            return leaves[0]
        return _unflatten(root, iter(leaves))

    def flatten_up_to(self, tree: Any) -> list:
        """Flattens ``tree`` down to this treedef's leaves: a leaf of the treedef matches any
        subtree of ``tree``, which is returned whole.

        Raises ``ValueError`` describing the first mismatch if ``tree`` does not have this
        structure as a prefix.
        """
        out: list = []
        _flatten_up_to(self._root, tree, out)
        return out

    def compose(self, inner: PyTreeDef) -> PyTreeDef:
        """The treedef obtained by putting ``inner`` at every leaf of this one."""
        return PyTreeDef(_compose(self._root, inner._root),
                         self._num_leaves * inner._num_leaves)

    def from_iterable_tree(self, xs) -> Any:
        """Builds a pytree from nested iterables ``xs`` following this structure."""
        return _from_iterable(self._root, xs)

    # -- dunder ------------------------------------------------------------------------------
    def __eq__(self, other):
        if self is other:
            return True
        if type(other) is not PyTreeDef:
            return NotImplemented
        return self._num_leaves == other._num_leaves and self._root == other._root

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        h = self._hash
        if h is None:
            try:
                h = hash(self._root)
            except TypeError:  # unhashable aux data (a dict, ...): JAX hashes around it too
                h = _hash_structure(self._root)
            self._hash = h
        return h

    def __repr__(self):
        return f"PyTreeDef({_node_str(self._root)})"

    __str__ = __repr__

    def __reduce__(self):
        return PyTreeDef, (self._root, self._num_leaves)


# ---------------------------------------------------------------------------------------------
# Flattening
# ---------------------------------------------------------------------------------------------

class _DictKeySortError(ValueError, TypeError):
    """Dict keys that cannot be ordered (raised as both ValueError and TypeError)."""


def _sorted_keys(d):
    try:
        return sorted(d)
    except TypeError as e:
        raise _DictKeySortError(
            f"Comparator raised exception while sorting pytree dictionary keys: {e}. "
            f"Pytree dict keys must be mutually sortable; got keys {list(d)!r}.") from None


def _flatten(x, leaves, _get=_kinds.get, _leafs=_leaf_types):
    """Appends the leaves of ``x`` to ``leaves`` and returns its structure node.

    Leaf children are handled inline (a dict lookup and two appends, no call). Larger
    containers whose children are all leaves of already-seen types are checked and copied
    in C (``set.issuperset(map(type, ...))`` + ``extend``).
    """
    t = type(x)
    kind = _get(t)
    if kind is None:
        kind = _classify(t)
    if kind == 0:
        leaves.append(x)
        return None
    if kind == 1 or kind == 2:  # tuple, list
        if len(x) > 6 and _leafs.issuperset(map(type, x)):
            leaves.extend(x)
            return (kind, t, None, _nones(len(x)))
        ch = []
        for c in x:
            if _get(type(c)) == 0:
                leaves.append(c)
                ch.append(None)
            else:
                ch.append(_flatten(c, leaves))
        return (kind, t, None, tuple(ch))
    if kind == 3:  # dict
        if not x:
            return _EMPTY_DICT_NODE
        try:
            keys = sorted(x)
        except TypeError:
            keys = _sorted_keys(x)
        if len(keys) > 6:
            vals = list(map(x.__getitem__, keys))
            if _leafs.issuperset(map(type, vals)):
                leaves.extend(vals)
                return (3, dict, tuple(keys), _nones(len(vals)))
        ch = []
        for k in keys:
            c = x[k]
            if _get(type(c)) == 0:
                leaves.append(c)
                ch.append(None)
            else:
                ch.append(_flatten(c, leaves))
        return (3, dict, tuple(keys), tuple(ch))
    if kind == 4:
        return _NONE_NODE
    ch = []
    if kind == 5:
        for c in x:
            ch.append(_flatten(c, leaves))
        return (5, t, None, tuple(ch))
    children, aux = _registry[t].flatten(x)
    for c in children:
        ch.append(_flatten(c, leaves))
    return (6, t, aux, tuple(ch))


_NONES_CACHE = [(None,) * i for i in range(64)]


def _nones(n):
    return _NONES_CACHE[n] if n < 64 else (None,) * n


_NONE_NODE = (_NONE, None, None, ())  # type slot None: NoneType does not pickle everywhere
_EMPTY_DICT_NODE = (_DICT, dict, (), ())


def _flatten_is_leaf(x, leaves, is_leaf):
    if is_leaf(x):
        leaves.append(x)
        return None
    t = type(x)
    kind = _kinds.get(t)
    if kind is None:
        kind = _classify(t)
    if kind == _LEAF:
        leaves.append(x)
        return None
    if kind == _TUPLE or kind == _LIST or kind == _NAMEDTUPLE:
        return (kind, t, None, tuple([_flatten_is_leaf(c, leaves, is_leaf) for c in x]))
    if kind == _DICT:
        keys = _sorted_keys(x)
        return (_DICT, dict, tuple(keys),
                tuple([_flatten_is_leaf(x[k], leaves, is_leaf) for k in keys]))
    if kind == _NONE:
        return _NONE_NODE
    children, aux = _registry[t].flatten(x)
    return (_CUSTOM, t, aux, tuple([_flatten_is_leaf(c, leaves, is_leaf) for c in children]))


def _leaves(x, out, _get=_kinds.get, _leafs=_leaf_types):
    """Like ``_flatten`` but builds no structure (for ``tree_leaves``)."""
    kind = _get(type(x))
    if kind is None:
        kind = _classify(type(x))
    if kind == 0:
        out.append(x)
    elif kind == 1 or kind == 2 or kind == 5:
        if len(x) > 6 and _leafs.issuperset(map(type, x)):
            out.extend(x)
        else:
            for c in x:
                if _get(type(c)) == 0:
                    out.append(c)
                else:
                    _leaves(c, out)
    elif kind == 3:
        if x:
            try:
                keys = sorted(x)
            except TypeError:
                keys = _sorted_keys(x)
            for k in keys:
                c = x[k]
                if _get(type(c)) == 0:
                    out.append(c)
                else:
                    _leaves(c, out)
    elif kind == 6:
        for c in _registry[type(x)].flatten(x)[0]:
            _leaves(c, out)


def user_tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                      ) -> tuple[list, PyTreeDef]:
    """Flattens a pytree into its list of leaves and its structure.

    Parameters
    ----------
    tree : pytree
    is_leaf : callable, optional
        Called on every subtree before it is looked at; when it returns True the subtree is a
        leaf (e.g. ``is_leaf=lambda x: x is None`` keeps ``None`` as a leaf).

    Returns
    -------
    (leaves, treedef)
        ``treedef.unflatten(leaves)`` rebuilds ``tree``.
    """
    leaves: list = []
    if is_leaf is None:
        root = _flatten(tree, leaves)
    else:
        root = _flatten_is_leaf(tree, leaves, is_leaf)
    return leaves, PyTreeDef(root, len(leaves))


def tree_flatten_for_key(tree: Any) -> tuple[list, Any]:
    """``tree``'s leaves (data view: key arrays give their key data) and a hashable value
    that is equal for trees of equal structure (cheaper than a PyTreeDef as a cache key:
    plain nested tuples hash and compare in C)."""
    leaves: list = []
    root = _flatten(tree, leaves)
    if _data_types and not _data_types.isdisjoint(map(type, leaves)):
        return _expand_data_nodes(root, leaves)
    return leaves, root


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable) -> Any:
    """Rebuilds a pytree from ``treedef`` and an iterable of leaves.

    Raises ``ValueError`` when the number of leaves differs from ``treedef.num_leaves``.
    """
    return treedef.unflatten(leaves)


def user_tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    """The leaves of ``tree`` in flattening order."""
    if is_leaf is None:
        out: list = []
        _leaves(tree, out)
        return out
    return user_tree_flatten(tree, is_leaf)[0]


def user_tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The ``PyTreeDef`` of ``tree``."""
    return user_tree_flatten(tree, is_leaf)[1]


def user_tree_map(f: Callable, tree: Any, *rest: Any,
                  is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Maps ``f`` over the leaves of ``tree`` (and the matching subtrees of ``rest``).

    Every tree in ``rest`` must have ``tree``'s structure as a prefix: where ``tree`` has a
    leaf, the other trees may hold any subtree, which is passed to ``f`` whole. ``is_leaf``
    applies to ``tree`` only. A mismatch raises ``ValueError`` naming it (e.g.
    ``"Tuple arity mismatch: 3 != 2; tuple: (1, 2, 3)."``).
    """
    leaves, treedef = user_tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    all_leaves = [leaves] + [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten([f(*xs) for xs in zip(*all_leaves)])


def user_tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """``all()`` over the leaves of ``tree``."""
    return all(user_tree_leaves(tree, is_leaf))


class _NoInitializer:
    def __repr__(self):
        return "<no initializer>"


_NO_INIT = _NoInitializer()


def user_tree_reduce(function: Callable, tree: Any, initializer: Any = _NO_INIT,
                     is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``functools.reduce`` over the leaves of ``tree``."""
    if initializer is _NO_INIT:
        return functools.reduce(function, user_tree_leaves(tree, is_leaf))
    return functools.reduce(function, user_tree_leaves(tree, is_leaf), initializer)


def user_tree_reduce_associative(operation: Callable, tree: Any, *, identity: Any = _NO_INIT,
                                 is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Reduces the leaves with an associative ``operation`` as a balanced binary tree.

    With no leaves, returns ``identity`` (a ``ValueError`` if none was given).
    """
    items = user_tree_leaves(tree, is_leaf)
    if not items:
        if identity is _NO_INIT:
            raise ValueError("Must specify identity for parallel reduction of empty sequence.")
        return identity
    while len(items) > 1:
        paired = [operation(a, b) for a, b in zip(items[::2], items[1::2])]
        if len(items) % 2:
            paired.append(items[-1])
        items = paired
    return items[0]


def user_tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                        pytree_to_transpose: Any) -> Any:
    """Turns a tree of structure ``outer(inner)`` into one of structure ``inner(outer)``.

    ``inner_treedef=None`` infers it from the first subtree under ``outer_treedef``.
    Raises ``TypeError`` if the tree does not have structure ``outer.compose(inner)``.
    """
    if inner_treedef is None:
        subtrees = outer_treedef.flatten_up_to(pytree_to_transpose)
        if not subtrees:
            raise ValueError("tree_transpose: cannot infer inner_treedef of a tree with no "
                             "subtrees under outer_treedef; pass it explicitly.")
        inner_treedef = user_tree_structure(subtrees[0])
    expected = outer_treedef.compose(inner_treedef)
    try:
        flat = expected.flatten_up_to(pytree_to_transpose)
    except ValueError as e:
        actual = user_tree_structure(pytree_to_transpose)
        raise TypeError(f"Mismatch\n{actual}\n != \n{expected}\n({e})") from None
    n_in = inner_treedef.num_leaves
    rows = [flat[i * n_in:(i + 1) * n_in] for i in range(outer_treedef.num_leaves)]
    return inner_treedef.unflatten([outer_treedef.unflatten(list(col)) for col in zip(*rows)]
                                   if rows else [outer_treedef.unflatten([])] * n_in)


def user_tree_broadcast(prefix_tree: Any, full_tree: Any,
                        is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Broadcasts ``prefix_tree`` to the structure of ``full_tree``: each leaf of the prefix
    is repeated over every leaf of the matching subtree of ``full_tree``.

    ``tree_broadcast([1, 2, 3], [x, [y, z], {'a': w}])`` gives ``[1, [2, 2], {'a': 3}]``.
    """
    prefix_leaves, prefix_def = user_tree_flatten(prefix_tree, is_leaf)
    subtrees = prefix_def.flatten_up_to(full_tree)
    return prefix_def.unflatten(
        [user_tree_map(lambda _, v=v: v, sub, is_leaf=is_leaf)
         for v, sub in zip(prefix_leaves, subtrees)])


# ---------------------------------------------------------------------------------------------
# Key paths
# ---------------------------------------------------------------------------------------------

def _flatten_with_path(x, path, out, is_leaf, takes_path):
    if is_leaf is not None and (is_leaf(path, x) if takes_path else is_leaf(x)):
        out.append((path, x))
        return None
    t = type(x)
    kind = _kind_of(t)
    if kind == _LEAF:
        out.append((path, x))
        return None
    if kind == _TUPLE or kind == _LIST:
        return (kind, t, None, tuple([
            _flatten_with_path(c, path + (SequenceKey(i),), out, is_leaf, takes_path)
            for i, c in enumerate(x)]))
    if kind == _NAMEDTUPLE:
        return (kind, t, None, tuple([
            _flatten_with_path(c, path + (GetAttrKey(name),), out, is_leaf, takes_path)
            for name, c in zip(t._fields, x)]))
    if kind == _DICT:
        keys = _sorted_keys(x)
        return (_DICT, dict, tuple(keys), tuple([
            _flatten_with_path(x[k], path + (DictKey(k),), out, is_leaf, takes_path)
            for k in keys]))
    if kind == _NONE:
        return _NONE_NODE
    handler = _registry[t]
    if handler.flatten_with_keys is not None:
        key_children, aux = handler.flatten_with_keys(x)
        key_children = list(key_children)
    else:
        children, aux = handler.flatten(x)
        key_children = [(FlattenedIndexKey(i), c) for i, c in enumerate(children)]
    return (_CUSTOM, t, aux, tuple([
        _flatten_with_path(c, path + (k,), out, is_leaf, takes_path)
        for k, c in key_children]))


def user_tree_flatten_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                                is_leaf_takes_path: bool = False
                                ) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """Like ``tree_flatten``, but each leaf comes as ``(key_path, leaf)``.

    With ``is_leaf_takes_path=True``, ``is_leaf`` is called as ``is_leaf(path, x)``.
    """
    out: list = []
    root = _flatten_with_path(tree, (), out, is_leaf, is_leaf_takes_path)
    return out, PyTreeDef(root, len(out))


def user_tree_leaves_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                               is_leaf_takes_path: bool = False) -> list[tuple[KeyPath, Any]]:
    """The ``(key_path, leaf)`` pairs of ``tree`` in flattening order."""
    return user_tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def user_tree_map_with_path(f: Callable, tree: Any, *rest: Any,
                            is_leaf: Callable[..., bool] | None = None,
                            is_leaf_takes_path: bool = False) -> Any:
    """Like ``tree_map``, but ``f`` is called as ``f(key_path, leaf, *other_leaves)``."""
    path_leaves, treedef = user_tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    paths = [p for p, _ in path_leaves]
    all_leaves = [[x for _, x in path_leaves]] + [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten([f(p, *xs) for p, *xs in zip(paths, *all_leaves)])


# ---------------------------------------------------------------------------------------------
# Two views of one registry: what users see and what the transformations flatten
# ---------------------------------------------------------------------------------------------
#
# A data node is an array type that users see as one leaf (``jax.tree_util``, ``jax.tree``:
# ``user_tree_*``) but that the transformations see as a node over its data array
# (``tree_*`` below): typed PRNG key arrays, ``key<fry>[3]`` over ``uint32[3, 2]``. So jit,
# vmap, grad, loops and every other transformation move key arrays as their key data and
# rebuild them around results, with no key-specific code. Where JAX's conventions are about
# the key array itself (vmap axes on its own dims, float0 tangents of its shape), the
# transformations use ``core/pytree_data.py``, which turns one view's treedefs and leaves
# into the other's. The user view is the fast path (data nodes are leaf types); the data
# view flattens with it and then expands the data nodes it finds.

def register_data_node(nodetype: type, flatten: Callable, unflatten: Callable,
                       trailing_shape: Callable) -> None:
    """Registers ``nodetype`` as a data node: a leaf in the user view, a node with exactly
    one child (its data array) in the transformations' view. ``flatten(x) -> ((data,),
    aux)``, ``unflatten(aux, (data,)) -> x``, ``trailing_shape(aux)``: the dims the data
    has after ``x``'s own shape."""
    if nodetype in _registry or nodetype in _data_registry:
        raise ValueError(f"Duplicate custom PyTreeDef type registration for {nodetype}.")
    _data_registry[nodetype] = _NodeHandler(nodetype, flatten, unflatten, None)
    _data_trailing[nodetype] = trailing_shape
    _data_types.add(nodetype)


def _expand_data_nodes(root, leaves):
    """The data view of a user-view flattening: every data-node leaf becomes a node over
    its data leaf. Returns ``(leaves, root)``."""
    out: list = []
    it = iter(leaves)

    def walk(node):
        if node is None:
            x = next(it)
            handler = _data_registry.get(type(x))
            if handler is None:
                out.append(x)
                return None
            children, aux = handler.flatten(x)
            out.extend(children)
            return (_CUSTOM, type(x), aux, _nones(len(children)))
        kind, t, aux, ch = node
        return (kind, t, aux, tuple([walk(c) for c in ch]))

    return out, walk(root)


def _has_data_nodes(leaves) -> bool:
    return bool(_data_types) and not _data_types.isdisjoint(map(type, leaves))


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list, PyTreeDef]:
    """``user_tree_flatten`` in the transformations' view: data nodes (key arrays) are
    nodes over their data. ``is_leaf`` sees the tree as users do."""
    leaves, treedef = user_tree_flatten(tree, is_leaf)
    if not _has_data_nodes(leaves):
        return leaves, treedef
    leaves, root = _expand_data_nodes(treedef._root, leaves)
    return leaves, PyTreeDef(root, len(leaves))


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    """The leaves of ``tree`` in the transformations' view (key arrays give their data)."""
    leaves = user_tree_leaves(tree, is_leaf)
    if not _has_data_nodes(leaves):
        return leaves
    out: list = []
    for x in leaves:
        handler = _data_registry.get(type(x))
        if handler is None:
            out.append(x)
        else:
            out.extend(handler.flatten(x)[0])
    return out


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The ``PyTreeDef`` of ``tree`` in the transformations' view."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f: Callable, tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``user_tree_map`` in the transformations' view (``f`` gets key data, not keys)."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    all_leaves = [leaves] + [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten([f(*xs) for xs in zip(*all_leaves)])


def tree_flatten_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                           is_leaf_takes_path: bool = False
                           ) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """``user_tree_flatten_with_path`` in the transformations' view: a key array's data has
    the key array's path (it stands for the key array in error messages)."""
    path_leaves, treedef = user_tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    leaves = [x for _, x in path_leaves]
    if not _has_data_nodes(leaves):
        return path_leaves, treedef
    out = []
    for p, x in path_leaves:
        handler = _data_registry.get(type(x))
        out.extend([(p, x)] if handler is None else [(p, c) for c in handler.flatten(x)[0]])
    return out, PyTreeDef(_expand_data_nodes(treedef._root, leaves)[1], len(out))


# ---------------------------------------------------------------------------------------------
# Treedef helpers
# ---------------------------------------------------------------------------------------------

def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """True if the treedef has a single node (a leaf, or -- as in JAX -- ``None``/an empty
    container root such as ``()``)."""
    return treedef.num_nodes == 1


def treedef_is_strict_leaf(treedef: PyTreeDef) -> bool:
    """True only for the structure of a single leaf."""
    return treedef._root is None


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The treedefs of the root's children."""
    return treedef.children()


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The treedef of a tuple whose children have the given structures."""
    treedefs = list(treedefs)
    return PyTreeDef((_TUPLE, tuple, None, tuple([td._root for td in treedefs])),
                     sum(td._num_leaves for td in treedefs))


def all_leaves(iterable: Iterable, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """True if every element of ``iterable`` is a leaf (``None`` is not)."""
    if is_leaf is None:
        return all(_kind_of(type(x)) == _LEAF for x in iterable)
    return all(is_leaf(x) or _kind_of(type(x)) == _LEAF for x in iterable)


def build_tree(treedef: PyTreeDef, xs: Any) -> Any:
    """Builds a pytree of structure ``treedef`` from nested iterables ``xs``; at each node,
    ``xs`` holds one entry per child."""
    return treedef.from_iterable_tree(xs)


def flatten_one_level(tree: Any) -> tuple[list, Any]:
    """``(children, aux_data)`` of the root node of ``tree``; ``ValueError`` for a leaf."""
    t = type(tree)
    kind = _kind_of(t)
    if kind == _LEAF:
        raise ValueError(f"can't tree-flatten type: {t}")
    if kind == _DICT:
        keys = _sorted_keys(tree)
        return [tree[k] for k in keys], keys
    if kind == _NONE:
        return [], None
    if kind == _CUSTOM:
        children, aux = _registry[t].flatten(tree)
        return list(children), aux
    return list(tree), None


def flatten_one_level_with_keys(tree: Any) -> tuple[list[tuple[KeyEntry, Any]], Any]:
    """``((key, child) pairs, aux_data)`` of the root node of ``tree``."""
    t = type(tree)
    kind = _kind_of(t)
    if kind == _LEAF:
        raise ValueError(f"can't tree-flatten type: {t}")
    if kind == _TUPLE or kind == _LIST:
        return [(SequenceKey(i), c) for i, c in enumerate(tree)], None
    if kind == _NAMEDTUPLE:
        return [(GetAttrKey(n), c) for n, c in zip(t._fields, tree)], None
    if kind == _DICT:
        keys = _sorted_keys(tree)
        return [(DictKey(k), tree[k]) for k in keys], keys
    if kind == _NONE:
        return [], None
    handler = _registry[t]
    if handler.flatten_with_keys is not None:
        kc, aux = handler.flatten_with_keys(tree)
        return list(kc), aux
    children, aux = handler.flatten(tree)
    return [(FlattenedIndexKey(i), c) for i, c in enumerate(children)], aux


# OrderedDict, defaultdict, Partial and the registry object live in pytree_nodes.py, which
# registers them as soon as this module is imported.
from pyjax._src.core.pytree_nodes import (  # noqa: E402,F401  (needs the functions above)
    Partial, PyTreeRegistry, default_registry)
