"""Tests for pytrees: pyjax._src.core.pytree and its public faces pyjax.tree_util / pyjax.tree."""

import collections
import dataclasses
import functools
import pickle

import numpy as np
import pytest

from pyjax import tree as jtree
from pyjax import tree_util as tu
from pyjax._src.core import pytree as pt

# ---------------------------------------------------------------------------------------------
# Types used by the tests (module level so that treedefs holding them pickle)
# ---------------------------------------------------------------------------------------------

Point = collections.namedtuple("Point", ["x", "y"])
Other = collections.namedtuple("Other", ["x", "y"])


class Box:
    """Registered with register_pytree_node; aux is the label."""

    def __init__(self, label, a, b):
        self.label, self.a, self.b = label, a, b

    def __eq__(self, other):
        return (type(other) is Box and self.label == other.label
                and _eq(self.a, other.a) and _eq(self.b, other.b))


tu.register_pytree_node(Box, lambda bx: ((bx.a, bx.b), bx.label),
                        lambda label, ch: Box(label, *ch))


@tu.register_pytree_node_class
class Pair:
    def __init__(self, first, second, tag="t"):
        self.first, self.second, self.tag = first, second, tag

    def tree_flatten(self):
        return (self.first, self.second), self.tag

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children, tag=aux)


class Keyed:
    def __init__(self, u, v):
        self.u, self.v = u, v


tu.register_pytree_with_keys(
    Keyed,
    lambda k: (((tu.GetAttrKey("u"), k.u), (tu.GetAttrKey("v"), k.v)), None),
    lambda aux, ch: Keyed(*ch))


@tu.register_pytree_with_keys_class
class KeyedClass:
    def __init__(self, items):
        self.items = dict(items)

    def tree_flatten_with_keys(self):
        names = sorted(self.items)
        return [(tu.DictKey(n), self.items[n]) for n in names], tuple(names)

    @classmethod
    def tree_unflatten(cls, names, children):
        return cls(zip(names, children))


@tu.register_dataclass
@dataclasses.dataclass
class Params:
    w: object
    b: object
    name: str = dataclasses.field(default="p", metadata=dict(static=True))


@dataclasses.dataclass
class Explicit:
    data: object
    scale: float


tu.register_dataclass(Explicit, data_fields=["data"], meta_fields=["scale"])


@dataclasses.dataclass
class WithStaticHelper:
    v: object
    mode: str = jtree.static(default="add")


tu.register_dataclass(WithStaticHelper)


@tu.register_static
class StaticStr(str):
    pass


class Recorder:
    """Records the type of the children its unflatten function receives."""
    seen = []

    def __init__(self, *items):
        self.items = items


tu.register_pytree_node(Recorder, lambda r: (list(r.items), None),
                        lambda aux, ch: (Recorder.seen.append(type(ch)), Recorder(*ch))[1])


class Plain:
    """Never registered: a leaf."""


class LeafThenNode:
    """Seen as a leaf first, registered later (checks the kind cache is updated)."""

    def __init__(self, v):
        self.v = v


class ArrayLike:
    def __init__(self, v):
        self.v = np.asarray(v)

    def __jax_array__(self):
        return self.v


def _eq(a, b):
    """Structural equality where leaves may be NumPy arrays."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return type(a) is type(b) and a.shape == b.shape and np.array_equal(a, b)
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_eq(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):  # key order matters only for OrderedDict (checked elsewhere for dict)
        ordered = type(a) is collections.OrderedDict
        same_keys = list(a) == list(b) if ordered else a.keys() == b.keys()
        return same_keys and all(_eq(a[k], b[k]) for k in a)
    return a == b


# ---------------------------------------------------------------------------------------------
# Flatten / unflatten round trips
# ---------------------------------------------------------------------------------------------

X = np.arange(3.0)
Y = np.ones((2, 2), np.int32)

ROUND_TRIP_CASES = [
    (1, [1]),
    (X, [X]),
    ((), []),
    ([], []),
    ({}, []),
    (None, []),
    ((1,), [1]),
    ((1, 2.0, "s"), [1, 2.0, "s"]),
    ([X, [Y, (3,)]], [X, Y, 3]),
    ({"b": 2, "a": 1, "c": [3, 4]}, [1, 2, 3, 4]),
    ([None, 1, (None, 2)], [1, 2]),
    (Point(1, (2, 3)), [1, 2, 3]),
    (collections.OrderedDict([("z", 1), ("a", 2)]), [1, 2]),
    (((X, Y), {}), [X, Y]),
    ({"p": [{"w": X, "b": Y}] * 2, "s": (X, None)}, [Y, X, Y, X, X]),
    (list(range(20)), list(range(20))),
    (tuple(range(10)), list(range(10))),
    ({f"k{i:02d}": i for i in range(12)}, list(range(12))),
]


@pytest.mark.parametrize("tree,expected_leaves", ROUND_TRIP_CASES)
def test_round_trip(tree, expected_leaves):
    leaves, treedef = tu.tree_flatten(tree)
    assert _eq(leaves, expected_leaves)
    assert treedef.num_leaves == len(expected_leaves)
    rebuilt = tu.tree_unflatten(treedef, leaves)
    assert _eq(rebuilt, tree)
    assert type(rebuilt) is type(tree)
    assert _eq(tu.tree_leaves(tree), expected_leaves)
    assert tu.tree_structure(tree) == treedef


def test_unflatten_accepts_any_iterable_and_new_leaves():
    treedef = tu.tree_structure({"a": (0, 0), "b": [0]})
    out = treedef.unflatten(iter(["x", "y", "z"]))
    assert out == {"a": ("x", "y"), "b": ["z"]}
    assert tu.tree_unflatten(treedef, (i * 10 for i in range(3))) == {"a": (0, 10), "b": [20]}


def test_leaves_are_the_same_objects():
    a, b = np.zeros(2), np.ones(2)
    leaves = tu.tree_leaves({"k": [a, (b,)]})
    assert leaves[0] is a and leaves[1] is b


def test_dict_key_order_sorted_and_rebuilt_sorted():
    tree = {"b": 1, "c": 3, "a": 2}
    leaves, treedef = tu.tree_flatten(tree)
    assert leaves == [2, 1, 3]
    out = treedef.unflatten(leaves)
    assert list(out) == ["a", "b", "c"]
    assert tu.tree_structure({"a": 0, "b": 0, "c": 0}) == treedef
    assert tu.tree_leaves({2: "two", 1: "one", 3: "three"}) == ["one", "two", "three"]


def test_unsortable_dict_keys_raise():
    with pytest.raises(ValueError, match="sort"):
        tu.tree_flatten({1: 1, "a": 2})


def test_none_is_an_empty_node_not_a_leaf():
    assert tu.tree_leaves(None) == []
    assert tu.tree_leaves([None, None, 1]) == [1]
    treedef = tu.tree_structure([None, 1])
    assert repr(treedef) == "PyTreeDef([None, *])"
    assert treedef.num_leaves == 1 and treedef.num_nodes == 3
    assert treedef.unflatten([5]) == [None, 5]
    # with is_leaf, None can be made a leaf
    leaves, td2 = tu.tree_flatten([None, 1], is_leaf=lambda x: x is None)
    assert leaves == [None, 1]
    assert td2 != treedef and repr(td2) == "PyTreeDef([*, *])"


def test_namedtuple():
    p = Point(1, [2, 3])
    leaves, treedef = tu.tree_flatten(p)
    assert leaves == [1, 2, 3]
    out = treedef.unflatten([10, 20, 30])
    assert type(out) is Point and out == Point(10, [20, 30])
    expected = "PyTreeDef(CustomNode(namedtuple[Point], [*, *]))"
    assert repr(tu.tree_structure(Point(1, 2))) == expected
    # a different namedtuple class with the same fields is a different structure
    assert tu.tree_structure(Other(1, 2)) != tu.tree_structure(Point(1, 2))
    assert tu.tree_structure((1, 2)) != tu.tree_structure(Point(1, 2))


def test_ordered_dict_keeps_insertion_order():
    od = collections.OrderedDict([("z", 1), ("a", 2), ("m", 3)])
    leaves, treedef = tu.tree_flatten(od)
    assert leaves == [1, 2, 3]
    out = treedef.unflatten([4, 5, 6])
    assert type(out) is collections.OrderedDict
    assert list(out.items()) == [("z", 4), ("a", 5), ("m", 6)]
    reordered = collections.OrderedDict([("a", 2), ("z", 1), ("m", 3)])
    assert tu.tree_structure(reordered) != treedef


def test_defaultdict_keeps_factory_and_sorts_keys():
    dd = collections.defaultdict(list, {"b": 1, "a": 2})
    leaves, treedef = tu.tree_flatten(dd)
    assert leaves == [2, 1]
    out = treedef.unflatten([7, 8])
    assert type(out) is collections.defaultdict
    assert out.default_factory is list
    assert dict(out) == {"a": 7, "b": 8}
    assert out["missing"] == []
    assert tu.tree_structure(collections.defaultdict(set, {"a": 0, "b": 0})) != treedef


def test_everything_else_is_a_leaf():
    class D(dict):
        pass

    class L(list):
        pass

    arr_like = ArrayLike([1, 2])
    things = [np.zeros(3), np.float32(1), 1j, "str", b"b", Plain(), D(a=1), L([1, 2]),
              arr_like, {1, 2}, frozenset()]
    for thing in things:
        leaves, treedef = tu.tree_flatten(thing)
        assert len(leaves) == 1 and leaves[0] is thing
        assert repr(treedef) == "PyTreeDef(*)"
        assert tu.treedef_is_leaf(treedef)
    assert tu.all_leaves(things)
    assert not tu.all_leaves([1, (2,)])
    assert not tu.all_leaves([1, None])
    assert tu.all_leaves([1, (2,)], is_leaf=lambda x: isinstance(x, tuple))


# ---------------------------------------------------------------------------------------------
# Custom nodes
# ---------------------------------------------------------------------------------------------

def test_register_pytree_node():
    bx = Box("lbl", X, [1, 2])
    leaves, treedef = tu.tree_flatten(bx)
    assert _eq(leaves, [X, 1, 2])
    out = treedef.unflatten([0, 1, 2])
    assert type(out) is Box and out.label == "lbl" and out.a == 0 and out.b == [1, 2]
    assert repr(treedef) == "PyTreeDef(CustomNode(Box[lbl], [*, [*, *]]))"
    assert treedef.node_data() == (Box, "lbl")
    # aux data is part of the structure
    assert tu.tree_structure(Box("other", 0, [1, 2])) != treedef
    assert tu.tree_structure(Box("lbl", 5, [6, 7])) == treedef


def test_custom_unflatten_receives_a_tuple_of_children():
    Recorder.seen.clear()
    out = tu.tree_map(lambda v: v + 1, Recorder(1, 2))
    assert out.items == (2, 3)
    assert Recorder.seen == [tuple]


def test_register_pytree_node_class():
    p = Pair(1, (2, 3), tag="hello")
    leaves, treedef = tu.tree_flatten(p)
    assert leaves == [1, 2, 3]
    out = tu.tree_map(lambda v: v * 2, p)
    assert type(out) is Pair and out.first == 2 and out.second == (4, 6) and out.tag == "hello"
    assert Pair.tree_flatten  # the decorator returned the class itself


def test_register_with_keys_and_paths():
    k = Keyed(1, [2, 3])
    assert tu.tree_leaves(k) == [1, 2, 3]
    paths = [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(k)]
    assert paths == [".u", ".v[0]", ".v[1]"]
    out = tu.tree_map(lambda x: -x, k)
    assert type(out) is Keyed and out.u == -1 and out.v == [-2, -3]

    kc = KeyedClass({"b": 1, "a": 2})
    assert tu.tree_leaves(kc) == [2, 1]
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(kc)] == ["['a']", "['b']"]
    assert tu.tree_map(lambda x: x + 1, kc).items == {"a": 3, "b": 2}


def test_register_dataclass_inferred_static_fields():
    p = Params(w=X, b=2.0, name="layer")
    leaves, treedef = tu.tree_flatten(p)
    assert _eq(leaves, [X, 2.0])
    assert repr(treedef) == "PyTreeDef(CustomNode(Params[('layer',)], [*, *]))"
    out = treedef.unflatten([1, 2])
    assert out == Params(w=1, b=2, name="layer")
    assert tu.tree_structure(Params(1, 2, name="other")) != treedef
    paths = [tu.keystr(pth) for pth, _ in tu.tree_leaves_with_path(p)]
    assert paths == [".w", ".b"]


def test_register_dataclass_explicit_and_static_helper():
    e = Explicit(data=[1, 2], scale=0.5)
    assert tu.tree_leaves(e) == [1, 2]
    assert tu.tree_map(lambda v: v * 3, e) == Explicit(data=[3, 6], scale=0.5)
    w = WithStaticHelper(v=1.0)
    assert tu.tree_leaves(w) == [1.0]
    assert tu.tree_structure(w).node_data() == (WithStaticHelper, ("add",))

    @dataclasses.dataclass
    class Bad:
        a: int
        b: int

    with pytest.raises(ValueError, match="init fields"):
        tu.register_dataclass(Bad, data_fields=["a"], meta_fields=[])
    with pytest.raises(TypeError):
        tu.register_dataclass(Bad, data_fields=["a", "b"])


def test_register_static():
    s = StaticStr("add")
    leaves, treedef = tu.tree_flatten((1, s))
    assert leaves == [1]
    out = treedef.unflatten([2])
    assert out == (2, "add") and type(out[1]) is StaticStr
    assert tu.tree_structure((1, StaticStr("sub"))) != treedef


def test_duplicate_registration_raises():
    with pytest.raises(ValueError, match="Duplicate"):
        tu.register_pytree_node(Box, lambda b: ((), None), lambda a, c: None)
    with pytest.raises(ValueError, match="Duplicate"):
        tu.register_pytree_node(tuple, lambda b: ((), None), lambda a, c: None)
    with pytest.raises(ValueError, match="Duplicate"):
        tu.register_pytree_node(collections.OrderedDict, lambda b: ((), None), lambda a, c: None)


def test_registration_after_being_seen_as_leaf():
    obj = LeafThenNode([1, 2])
    assert tu.tree_leaves([obj]) == [obj]
    assert not tu.is_tree_node(LeafThenNode)
    tu.register_pytree_node(LeafThenNode, lambda o: ((o.v,), None),
                            lambda aux, ch: LeafThenNode(*ch))
    assert tu.is_tree_node(LeafThenNode)
    assert tu.tree_leaves([obj]) == [1, 2]
    assert tu.tree_leaves([obj] * 8) == [1, 2] * 8  # the many-leaves fast path too


def test_is_tree_node():
    assert tu.is_tree_node(tuple) and tu.is_tree_node(dict) and tu.is_tree_node(type(None))
    assert tu.is_tree_node(Point) and tu.is_tree_node(Box)
    assert not tu.is_tree_node(int) and not tu.is_tree_node(np.ndarray)


# ---------------------------------------------------------------------------------------------
# tree_map and mismatch errors
# ---------------------------------------------------------------------------------------------

def test_tree_map_single_and_multiple_trees():
    t1 = {"a": (1, 2), "b": [3]}
    t2 = {"a": (10, 20), "b": [30]}
    t3 = {"b": [300], "a": (100, 200)}
    assert tu.tree_map(lambda x: x + 1, t1) == {"a": (2, 3), "b": [4]}
    assert tu.tree_map(lambda x, y, z: x + y + z, t1, t2, t3) == {"a": (111, 222), "b": [333]}
    assert tu.tree_map(lambda x: x, None) is None
    arrs = tu.tree_map(np.add, [X, Y], [X, Y])
    np.testing.assert_array_equal(arrs[0], 2 * X)
    np.testing.assert_array_equal(arrs[1], 2 * Y)


def test_tree_map_prefix_semantics():
    # where the first tree has a leaf, the others may hold any subtree, passed whole
    out = tu.tree_map(lambda x, sub: (x, sub), [1, 2], [(3, 4), {"k": 5}])
    assert out == [(1, (3, 4)), (2, {"k": 5})]


def test_tree_map_is_leaf():
    tree = [(1, 2), (3, 4), 5]
    out = tu.tree_map(lambda x: ("L", x), tree, is_leaf=lambda x: isinstance(x, tuple))
    assert out == [("L", (1, 2)), ("L", (3, 4)), ("L", 5)]
    # is_leaf applies to the first tree only; the second is matched up to it
    out = tu.tree_map(lambda x, y: (x, y), [(1, 2)], [[7, 8]],
                      is_leaf=lambda x: isinstance(x, tuple))
    assert out == [((1, 2), [7, 8])]
    # is_leaf sees None
    out = tu.tree_map(lambda x: x is None, [None, 1], is_leaf=lambda x: x is None)
    assert out == [True, False]


@pytest.mark.parametrize("tree,other,pattern", [
    ((1, 2), (1, 2, 3), r"Tuple arity mismatch: 3 != 2; tuple: \(1, 2, 3\)"),
    ([1, 2], [1], r"List arity mismatch: 1 != 2; list: \[1\]"),
    ((1, 2), [1, 2], r"Expected tuple, got \[1, 2\]"),
    ([1, 2], (1, 2), r"Expected list, got \(1, 2\)"),
    ({"a": 1, "b": 2}, {"a": 1, "c": 2}, r"Dict key mismatch; expected keys: \['a', 'b'\]; dict:"),
    ({"a": 1}, [1], r"Expected dict, got \[1\]"),
    ([None], [1], r"Expected None, got 1"),
    (Point(1, 2), (1, 2), r"Expected named tuple, got \(1, 2\)"),
    (Point(1, 2), Other(1, 2), r"Named tuple type mismatch"),
    (Box("l", 1, 2), Pair(1, 2), r"Custom node type mismatch; expected type: .*Box"),
    (Box("l", 1, 2), Box("m", 1, 2), r"Mismatch custom node data: 'l' != 'm'"),
    ((1, 2), 5, r"Expected tuple, got 5"),
])
def test_tree_map_mismatch_errors(tree, other, pattern):
    with pytest.raises(ValueError, match=pattern):
        tu.tree_map(lambda x, y: x, tree, other)


def test_flatten_up_to():
    treedef = tu.tree_structure({"a": 0, "b": (0, 0)})
    subtrees = treedef.flatten_up_to({"a": [1, 2], "b": ({"x": 3}, None)})
    assert subtrees == [[1, 2], {"x": 3}, None]


def test_unflatten_wrong_leaf_count():
    treedef = tu.tree_structure((1, [2, 3]))
    with pytest.raises(ValueError, match="Too few leaves for PyTreeDef; expected 3, got 2"):
        treedef.unflatten([1, 2])
    with pytest.raises(ValueError, match="Too many leaves for PyTreeDef; expected 3, got 4"):
        tu.tree_unflatten(treedef, [1, 2, 3, 4])


# ---------------------------------------------------------------------------------------------
# Key paths
# ---------------------------------------------------------------------------------------------

def test_flatten_with_path_and_keystr():
    tree = [{"a": Point(1, 2), "b": None}, (3,), Box("l", 4, 5)]
    path_leaves, treedef = tu.tree_flatten_with_path(tree)
    assert treedef == tu.tree_structure(tree)
    assert [x for _, x in path_leaves] == [1, 2, 3, 4, 5]
    assert [tu.keystr(p) for p, _ in path_leaves] == [
        "[0]['a'].x", "[0]['a'].y", "[1][0]", "[2][<flat index 0>]", "[2][<flat index 1>]"]
    first_path = path_leaves[0][0]
    assert first_path == (tu.SequenceKey(0), tu.DictKey("a"), tu.GetAttrKey("x"))
    assert tu.keystr(first_path, simple=True, separator="/") == "0/a/x"
    assert repr(first_path) == "(SequenceKey(idx=0), DictKey(key='a'), GetAttrKey(name='x'))"
    assert tu.tree_leaves_with_path(tree) == path_leaves


def test_key_entries_are_hashable_and_picklable():
    keys = [tu.SequenceKey(1), tu.DictKey("k"), tu.GetAttrKey("n"), tu.FlattenedIndexKey(2)]
    assert len(set(keys + [tu.SequenceKey(1)])) == 4
    assert tu.SequenceKey(1) != tu.FlattenedIndexKey(1)
    assert pickle.loads(pickle.dumps(keys)) == keys
    assert keys[0].idx == 1 and keys[1].key == "k" and keys[2].name == "n" and keys[3].key == 2


def test_tree_map_with_path():
    tree = {"w": [1, 2], "b": 3}
    out = tu.tree_map_with_path(lambda p, x, y: (tu.keystr(p), x + y), tree, tree)
    assert out == {"b": ("['b']", 6), "w": [("['w'][0]", 2), ("['w'][1]", 4)]}
    # is_leaf taking the path
    pl = tu.tree_leaves_with_path(
        tree, is_leaf=lambda p, x: len(p) == 1 and isinstance(x, list), is_leaf_takes_path=True)
    assert pl == [((tu.DictKey("b"),), 3), ((tu.DictKey("w"),), [1, 2])]


# ---------------------------------------------------------------------------------------------
# PyTreeDef
# ---------------------------------------------------------------------------------------------

def test_treedef_equality_hash_repr():
    t1 = tu.tree_structure((1, {"a": 2, "b": None}))
    t2 = tu.tree_structure((X, {"b": None, "a": Y}))
    t3 = tu.tree_structure((1, {"a": 2, "b": 3}))
    assert t1 == t2 and hash(t1) == hash(t2)
    assert t1 != t3
    assert len({t1, t2, t3}) == 2
    assert repr(t1) == "PyTreeDef((*, {'a': *, 'b': None}))"
    assert str(t1) == repr(t1)
    assert repr(tu.tree_structure((1,))) == "PyTreeDef((*,))"
    assert repr(tu.tree_structure(())) == "PyTreeDef(())"
    assert repr(tu.tree_structure([1, (2, 3), [4, 5]])) == "PyTreeDef([*, (*, *), [*, *]])"
    assert repr(tu.tree_structure(None)) == "PyTreeDef(None)"
    assert t1 != "not a treedef"


def test_treedef_properties():
    treedef = tu.tree_structure([1, (2, 3), {"k": None}])
    assert treedef.num_leaves == 3
    assert treedef.num_nodes == 7  # list, 1, tuple, 2, 3, dict, None
    kids = treedef.children()
    assert kids == tu.treedef_children(treedef)
    assert [repr(k) for k in kids] == [
        "PyTreeDef(*)", "PyTreeDef((*, *))", "PyTreeDef({'k': None})"]
    assert treedef.node_data() == (list, None)
    assert tu.tree_structure({"b": 1, "a": 2}).node_data() == (dict, ["a", "b"])
    assert tu.tree_structure(1).node_data() is None
    assert tu.tree_structure(1).children() == []
    assert tu.tree_structure(None).node_data() == (type(None), None)


def test_treedef_is_leaf_and_tuple():
    assert tu.treedef_is_leaf(tu.tree_structure(1))
    assert not tu.treedef_is_leaf(tu.tree_structure((1,)))
    assert tu.treedef_is_strict_leaf(tu.tree_structure(1))
    assert not tu.treedef_is_strict_leaf(tu.tree_structure(None))
    x_td, y_td = tu.tree_structure([1, 2, 3]), tu.tree_structure({"a": 4, "b": 5})
    xy = tu.treedef_tuple([x_td, y_td])
    assert xy == tu.tree_structure(([1, 2, 3], {"a": 4, "b": 5}))
    assert xy.num_leaves == 5


def test_compose_and_pickle():
    outer = tu.tree_structure([0, 0])
    inner = tu.tree_structure({"a": 0, "b": (0, 0)})
    composed = outer.compose(inner)
    assert composed == tu.tree_structure([{"a": 0, "b": (0, 0)}] * 2)
    assert composed.num_leaves == 6
    for td in [composed, tu.tree_structure((Point(1, 2), Params(1, 2), Box("l", 1, 2), None)),
               tu.tree_structure(collections.OrderedDict(b=1, a=2))]:
        again = pickle.loads(pickle.dumps(td))
        assert again == td and hash(again) == hash(td)


def test_build_tree():
    treedef = tu.tree_structure({"a": (0, 0), "b": 0})
    assert tu.build_tree(treedef, [[1, 2], 3]) == {"a": (1, 2), "b": 3}


# ---------------------------------------------------------------------------------------------
# Reductions, transpose, broadcast
# ---------------------------------------------------------------------------------------------

def test_tree_reduce_all_and_associative():
    tree = {"a": [1, 2], "b": (3, None, 4)}
    assert tu.tree_reduce(lambda a, b: a + b, tree) == 10
    assert tu.tree_reduce(lambda a, b: a + b, tree, 100) == 110
    assert tu.tree_reduce(lambda a, b: a + b, [], 7) == 7
    with pytest.raises(TypeError):
        tu.tree_reduce(lambda a, b: a + b, [])
    assert tu.tree_all([True, (True, {"x": 1})])
    assert not tu.tree_all([True, (0, {"x": 1})])
    assert tu.tree_all([])
    calls = []
    s = tu.tree_reduce_associative(lambda a, b: calls.append(1) or a + b, list(range(7)))
    assert s == 21 and len(calls) == 6
    assert tu.tree_reduce_associative(lambda a, b: a + b, [], identity=0) == 0
    with pytest.raises(ValueError, match="identity"):
        tu.tree_reduce_associative(lambda a, b: a + b, [])


def test_tree_transpose():
    outer = tu.tree_structure([0, 0, 0])
    inner = tu.tree_structure({"a": 0, "b": 0})
    tree = [{"a": 1, "b": 2}, {"a": 3, "b": 4}, {"a": 5, "b": 6}]
    expected = {"a": [1, 3, 5], "b": [2, 4, 6]}
    assert tu.tree_transpose(outer, inner, tree) == expected
    assert tu.tree_transpose(outer, None, tree) == expected
    with pytest.raises(TypeError, match="Mismatch"):
        tu.tree_transpose(outer, tu.tree_structure((0, 0)), tree)


def test_tree_broadcast():
    x, y, z, w = np.zeros(1), np.zeros(2), np.zeros(3), np.zeros(4)
    out = tu.tree_broadcast([1, 2, 3], [x, [y, z], {"a": w}])
    assert out == [1, [2, 2], {"a": 3}]
    with pytest.raises(ValueError):
        tu.tree_broadcast([1, 2], [1, 2, 3])


def test_flatten_one_level():
    assert tu.flatten_one_level({"b": 1, "a": (2,)}) == ([(2,), 1], ["a", "b"])
    assert tu.flatten_one_level(Box("l", 1, [2])) == ([1, [2]], "l")
    with pytest.raises(ValueError):
        tu.flatten_one_level(3)
    kc, aux = tu.flatten_one_level_with_keys(Point(1, 2))
    assert kc == [(tu.GetAttrKey("x"), 1), (tu.GetAttrKey("y"), 2)]


# ---------------------------------------------------------------------------------------------
# Partial
# ---------------------------------------------------------------------------------------------

def _affine(a, x, *, b=0):
    return a * x + b


def test_partial_is_a_pytree():
    p = tu.Partial(_affine, 2.0, b=1.0)
    assert isinstance(p, functools.partial)
    assert p(3.0) == 7.0
    leaves, treedef = tu.tree_flatten(p)
    assert leaves == [2.0, 1.0]
    q = treedef.unflatten([10.0, 5.0])
    assert type(q) is tu.Partial and q.func is _affine and q(1.0) == 15.0
    doubled = tu.tree_map(lambda v: 2 * v, p)
    assert doubled(1.0) == 6.0
    assert tu.tree_structure(tu.Partial(_affine, 0.0, b=0.0)) == treedef
    assert tu.tree_structure(tu.Partial(min, 0.0, b=0.0)) != treedef
    assert tu.tree_leaves(tu.Partial(_affine)) == []


def test_partial_of_partial_keeps_inner_arguments_static():
    inner = functools.partial(_affine, 3.0)
    p = tu.Partial(inner, b=1.0)
    assert p(2.0) == 7.0
    assert tu.tree_leaves(p) == [1.0]  # the inner 3.0 is not a leaf
    q = tu.tree_map(lambda v: v * 10, p)
    assert q(2.0) == 16.0
    assert tu.tree_structure(p) == tu.tree_structure(tu.Partial(inner, b=0.0))


# ---------------------------------------------------------------------------------------------
# The jax.tree namespace
# ---------------------------------------------------------------------------------------------

def test_tree_namespace():
    tree = {"a": [1, 2], "b": 3}
    leaves, treedef = jtree.flatten(tree)
    assert leaves == [1, 2, 3] == jtree.leaves(tree)
    assert jtree.structure(tree) == treedef
    assert jtree.unflatten(treedef, [4, 5, 6]) == {"a": [4, 5], "b": 6}
    assert jtree.map(lambda x: x * 2, tree) == {"a": [2, 4], "b": 6}
    assert jtree.reduce(lambda a, b: a + b, tree) == 6
    assert jtree.all(tree)
    assert jtree.map_with_path(lambda p, x: len(p), tree) == {"a": [2, 2], "b": 1}
    assert [x for _, x in jtree.leaves_with_path(tree)] == [1, 2, 3]
    assert jtree.flatten_with_path(tree)[1] == treedef
    assert jtree.broadcast(0, tree) == {"a": [0, 0], "b": 0}
    outer = jtree.structure([0, 0])
    assert jtree.transpose(outer, None, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
    assert jtree.reduce_associative(lambda a, b: a * b, [2, 3, 4]) == 24
    assert tu.tree_map is pt.user_tree_map and tu.PyTreeDef is pt.PyTreeDef


def test_flatten_for_key_tells_structures_apart():
    Pair = collections.namedtuple("Pair", "a b")
    trees = [(1, 2), [1, 2], Pair(1, 2), {"a": 1, "b": 2}, {"a": 1, "c": 2}, (1, (2,)),
             ((1,), 2), (1, None, 2), collections.OrderedDict([("b", 1), ("a", 2)])]
    keys = [pt.tree_flatten_for_key(t)[1] for t in trees]
    for i, t in enumerate(trees):
        leaves, key = pt.tree_flatten_for_key(t)
        assert leaves == pt.tree_flatten(t)[0]
        hash(key)
        assert key == pt.tree_flatten_for_key(t)[1]  # the same structure: an equal key
        for j in range(len(trees)):
            if j != i:
                assert keys[i] != keys[j], (trees[i], trees[j])


def test_jit_keys_calls_by_structure():
    import pyjax
    import pyjax.numpy as jnp
    f = pyjax.jit(lambda t: pyjax.tree_util.tree_map(lambda v: v * 2, t))
    x = jnp.ones(2)
    assert set(f({"a": x, "b": x})) == {"a", "b"}
    assert set(f({"a": x, "c": x})) == {"a", "c"}
    assert type(f([x, x])) is list and type(f((x, x))) is tuple
