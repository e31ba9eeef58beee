"""Sharding in types, second pass: the rules of primitives that used to refuse split operands
(split/stack/unstack/tile, user reduce, approx_top_k, rng_bit_generator, structured linear
algebra, random_gamma), typed ``scan`` slices, spatially split convolutions and windows, and
the gather gradient's sharding. The golden type strings and error texts were observed on JAX
0.10.2 (8 CPU devices, mesh (4, 2) ('X', 'Y') Explicit) by hand; values are checked against
the same program on unsplit arrays."""
import re

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax.sharding import PartitionSpec as P, set_mesh
from pyjax._src.core.sharded_array import ShardedShapedArray
from pyjax._src.core.sharding_rules import ShardingTypeError

X = np.arange(32, dtype=np.float32).reshape(8, 4) / 10


@pytest.fixture(scope="module")
def mesh():
    m = pyjax.make_mesh((4, 2), ("X", "Y"))
    with set_mesh(m):
        yield m


def put(a, *spec):
    return pyjax.device_put(np.asarray(a), P(*spec))


def types(f, *args):
    """``f``'s result types as JAX's ``typeof`` prints them."""
    return [str(a) if type(a) is ShardedShapedArray else
            f"{a.dtype.name}[{','.join(map(str, a.shape))}]"
            for a in pyjax.make_jaxpr(f)(*args).out_avals]


def check_values(f, *args, rtol=1e-5):
    """``jit(f)`` on the split arguments equals ``jit(f)`` on unsplit copies; the results are
    laid out as their types say."""
    got = pyjax.jit(f)(*args)
    want = pyjax.jit(f)(*[jnp.asarray(np.asarray(a)) for a in args])
    for g, w in zip(pyjax.tree_util.tree_leaves(got), pyjax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=1e-5)
    return got


def test_split_stack_unstack_tile(mesh):
    x = put(X, "X", "Y")
    x3 = put(np.arange(64, dtype=np.float32).reshape(8, 4, 2), "X", "Y")
    # JAX 0.10.2: split0 -> [float32[4@X,4@Y]] * 2, split1 -> [float32[8@X,2@Y]] * 2
    assert types(lambda a: lax.split(a, [4, 4], axis=0), x) == ["float32[4@X,4@Y]"] * 2
    assert types(lambda a: lax.split(a, [2, 2], axis=1), x) == ["float32[8@X,2@Y]"] * 2
    with pytest.raises(ShardingTypeError, match=r"split on sharded dims where out dim \(1\) is "
                       r"not divisible by mesh axes \(2\) with spec \(Y\) is not implemented"):
        pyjax.make_jaxpr(lambda a: lax.split(a, [1, 3], axis=1))(x)
    # JAX: jnp.stack -> float32[2,8@X,4@Y], axis=1 -> float32[8@X,2,4@Y]
    assert types(lambda a: jnp.stack([a, a]), x) == ["float32[2,8@X,4@Y]"]
    assert types(lambda a: jnp.stack([a, a], axis=1), x) == ["float32[8@X,2,4@Y]"]
    assert types(lambda a: jnp.unstack(a, axis=2), x3) == ["float32[8@X,4@Y]"] * 2
    assert types(lambda a: jnp.unstack(a, axis=1), put(X, "X")) == ["float32[8@X]"] * 4
    assert types(lambda a: jnp.tile(a, (1, 1, 2)), x3) == ["float32[8@X,4@Y,4]"]
    check_values(lambda a: (lax.split(a, [2, 2], axis=1), jnp.stack([a, 2 * a], axis=1),
                            jnp.unstack(a, axis=2), jnp.tile(a, (1, 1, 2))), x3)


def test_split_stack_unstack_tile_errors(mesh):
    from pyjax._src.lax import split_stack_tile as sst
    x = put(X, "X", "Y")
    # JAX 0.10.2's texts, observed with jnp.unstack(x), jnp.tile(x, (2, 2, 1)) on x float32[8@X,4@Y]
    with pytest.raises(ShardingTypeError, match=re.escape(
            "unstack operand cannot be sharded on the unstacking axis 0. Got operand "
            "type=f32[8@X,4@Y]")):
        pyjax.make_jaxpr(jnp.unstack)(x)
    with pytest.raises(ShardingTypeError, match=re.escape(
            "Operand cannot be sharded on dimension 1 when the tiling is non-trivial. Got input "
            "type: float32[1,8@X,4@Y] with reps: (2, 2, 1)")):
        pyjax.make_jaxpr(lambda a: jnp.tile(a, (2, 2, 1)))(x)
    # JAX's jnp.stack of a split and an unsplit value raises concatenate's error; pyjax's
    # jnp.stack concatenates (which accepts it, docs/parallel.md), its stack primitive does not
    with pytest.raises(ShardingTypeError, match="All operands should have the same sharding"):
        pyjax.make_jaxpr(lambda a: sst.stack_p.bind(a, jnp.ones((8, 4)), axis=0))(x)


def test_reductions_and_top_k(mesh):
    x = put(X, "X", "Y")
    # JAX: lax.reduce over 1 -> float32[8@X], over 0 -> float32[4@Y]; a two-operand reduce
    # gives both results float32[8@X]
    assert types(lambda a: lax.reduce(a, 0., lax.add, (1,)), x) == ["float32[8@X]"]
    assert types(lambda a: lax.reduce(a, 0., lax.add, (0,)), x) == ["float32[4@Y]"]
    def pair(a):
        return lax.reduce((a, a), (0., 1.), lambda u, v: (u[0] + v[0], u[1] * v[1]), (1,))
    assert types(pair, x) == ["float32[8@X]"] * 2
    check_values(lambda a: (pair(a), lax.reduce(a, -np.inf, lax.max, (0,))), x)
    # JAX: clamp(0., x, 3.) keeps float32[8@X,4@Y] (scalar bounds join the split operand)
    assert types(lambda a: lax.clamp(0.0, a, 3.0), x) == ["float32[8@X,4@Y]"]
    # JAX: approx_max_k over an unsplit last dim -> [float32[8@X,2], int32[8@X,2]]
    y = put(X, "X")
    assert types(lambda a: lax.approx_max_k(a, 2), y) == ["float32[8@X,2]", "int32[8@X,2]"]
    check_values(lambda a: lax.approx_max_k(a, 2), y)
    with pytest.raises(ShardingTypeError, match=r"reduction dimension -1 in operand "
                       r"float32\[8@X,4@Y\] should be unsharded i\.e\. the spec of that dim "
                       r"should be `None`\."):
        pyjax.make_jaxpr(lambda a: lax.approx_max_k(a, 2))(x)
    with pytest.raises(ShardingTypeError, match=r"The input should be unsharded over the axis "
                       r"along which to compute the top_k values\. Got input "
                       r"type=float32\[8@X,4@Y\] and axis=1"):
        pyjax.make_jaxpr(lambda a: lax.top_k(a, 2))(x)


def test_rng_linalg_and_gamma(mesh):
    # JAX: rng_bit_generator keeps the key's sharding on the new key, the bits replicated
    k = put(np.arange(4, dtype=np.uint32), "X")
    assert types(lambda q: lax.rng_bit_generator(q, (8, 4)), k) == ["uint32[4@X]",
                                                                     "uint32[8,4]"]
    check_values(lambda q: lax.rng_bit_generator(q, (8, 4)), k)
    # JAX: out_sharding=P('X') -> uint32[8@X,4], the same bits as unsplit (it constrains them)
    split_bits = lambda q: lax.rng_bit_generator(q, (8, 4), out_sharding=P("X"))[1]  # noqa
    assert types(split_bits, k) == ["uint32[8@X,4]"]
    got = pyjax.jit(split_bits)(k)
    assert got.sharding.spec == P("X", None)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(
        pyjax.jit(lambda q: lax.rng_bit_generator(q, (8, 4))[1])(jnp.asarray(np.asarray(k)))))
    # JAX: tridiagonal_solve / lu_pivots_to_permutation take split batch dimensions
    d = np.full((8, 4), 4.0, np.float32)
    lo, up = np.ones((8, 4), np.float32), np.ones((8, 4), np.float32)
    lo[:, 0] = up[:, -1] = 0
    solve = lambda a, b, c, r: lax.linalg.tridiagonal_solve(a, b, c, r[..., None])[..., 0]  # noqa
    args = [put(v, "X") for v in (lo, d, up, X)]
    assert types(solve, *args) == ["float32[8@X,4]"]
    check_values(solve, *args)
    with pytest.raises(ShardingTypeError, match=r"Input 0 to tridiagonal_solve must be "
                       r"unsharded on non-batch dimensions, but got P\('X', 'Y'\)\."):
        pyjax.make_jaxpr(solve)(*[put(v, "X", "Y") for v in (lo, d, up, X)])
    piv = put(np.array([[1, 1, 3, 3]] * 8, np.int32), "X")
    perm = lambda p: lax.linalg.lu_pivots_to_permutation(p, 4)  # noqa
    assert types(perm, piv) == ["int32[8@X,4]"]
    check_values(perm, piv)
    # JAX: gamma under one key with split alphas -> replicated float32[8,4]
    gamma = lambda a: pyjax.random.gamma(pyjax.random.key(0), a + 1.0)  # noqa
    x = put(X, "X", "Y")
    assert types(gamma, x) == ["float32[8,4]"]
    check_values(gamma, x, rtol=1e-4)


def test_scan_slices_and_stacked_ys_are_typed(mesh):
    seen = []

    def body(c, row):
        seen.append(str(pyjax.typeof(row)))
        return c + row.sum(), jnp.sin(row)
    xs = put(np.arange(6 * 8 * 4, dtype=np.float32).reshape(6, 8, 4) / 50, None, "X", "Y")
    # JAX: the body sees float32[8@X,4@Y]; ys are float32[6,8@X,4@Y] (also reversed/unrolled)
    for kw in ({}, {"reverse": True, "unroll": 2}):
        assert types(lambda v: lax.scan(body, 0.0, v, **kw), xs)[1] == "float32[6,8@X,4@Y]"
    assert set(seen) == {"float32[8@X,4@Y]"}
    out = check_values(lambda v: lax.scan(body, 0.0, v, reverse=True), xs)
    assert out[1].sharding.spec == P(None, "X", "Y")
    # a typed carry fed by typed slices, and its gradient
    c0 = put(np.ones(4, np.float32), "X")
    f = lambda c, v: lax.scan(lambda c, r: (c * r, c), c, v)  # noqa
    v = put(np.arange(12, dtype=np.float32).reshape(3, 4) / 7, None, "X")
    assert types(f, c0, v) == ["float32[4@X]", "float32[3,4@X]"]
    check_values(lambda c, v: pyjax.grad(lambda v: f(c, v)[0].sum())(v), c0, v)
    # JAX: "0th dimension of all xs should be replicated. Got P('X', None)"
    with pytest.raises(ValueError, match=r"0th dimension of all xs should be replicated\. Got "
                       r"P\('X', None\)"):
        pyjax.make_jaxpr(lambda v: lax.scan(body, 0.0, v))(put(X, "X"))
    # the carry's type may not change in the body (JAX: a TypeError naming the shardings)
    with pytest.raises(TypeError, match="carry"):
        pyjax.make_jaxpr(f)(jnp.ones(4), v)
    # cond: JAX 0.10.2 types lax.cond(p, a*2, a+1) on float32[8@X,4] as float32[8@X,4]; branches
    # whose types differ raise "cond branches must have equal output types but they differ"
    a = put(X, "X")
    assert types(lambda p, a: lax.cond(p, lambda a: a * 2, lambda a: a + 1, a), True, a) == [
        "float32[8@X,4]"]
    with pytest.raises(TypeError, match="cond branches must have equal output types but they "
                       "differ"):
        pyjax.make_jaxpr(lambda p, a: lax.cond(p, lambda a: a * 2,
                                               lambda a: jnp.zeros((8, 4)), a))(True, a)


def test_gather_gradient_has_the_operand_sharding(mesh):
    emb = put(np.arange(128, dtype=np.float32).reshape(16, 8) / 10, None, "Y")
    ids = put(np.array([1, 3, 5, 7, 0, 2, 4, 6], np.int32))
    # JAX: grad of e[i] with e float32[16,8@Y] and replicated ids -> float32[16,8@Y]
    grad = lambda e, i: pyjax.grad(lambda e: (jnp.sin(e[i]) * 2).sum())(e)  # noqa
    assert types(grad, emb, ids) == ["float32[16,8@Y]"]
    g = check_values(grad, emb, ids)
    assert g.sharding.spec == P(None, "Y")


def test_spatially_split_convolutions_and_windows(mesh):
    rng = np.random.default_rng(0)
    img = put(rng.normal(size=(2, 3, 8, 8)).astype(np.float32), None, None, "X")
    ker = put(rng.normal(size=(4, 3, 3, 3)).astype(np.float32))
    conv = lambda l, r: lax.conv(l, r, (1, 1), "SAME")  # noqa
    def pool(lhs):
        return lax.reduce_window(lhs, -np.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
    # JAX: conv -> float32[2,4,8@X,8]; max pool -> float32[2,3,4@X,4]; conv's input gradient
    # float32[2,3,8@X,8], its kernel gradient float32[4,3,3,3]; NHWC batch+height split
    assert types(conv, img, ker) == ["float32[2,4,8@X,8]"]
    assert types(pool, img) == ["float32[2,3,4@X,4]"]
    loss = lambda l, r: (pool(jnp.tanh(conv(l, r))) ** 2).sum()  # noqa
    assert types(pyjax.grad(loss, argnums=(0, 1)), img, ker) == ["float32[2,3,8@X,8]",
                                                                  "float32[4,3,3,3]"]
    check_values(lambda l, r: (conv(l, r), pool(l), pyjax.grad(loss, argnums=(0, 1))(l, r)),
                 img, ker, rtol=1e-4)
    nhwc = lambda l, r: lax.conv_general_dilated(l, r, (1, 1), "SAME",  # noqa
                                                 dimension_numbers=("NHWC", "HWIO", "NHWC"))
    l2 = put(rng.normal(size=(8, 8, 8, 3)).astype(np.float32), "X", "Y")
    assert types(nhwc, l2, put(np.ones((3, 3, 3, 4), np.float32))) == ["float32[8@X,8@Y,8,4]"]
    # JAX: "conv_general_dilated on sharded dims where out dim (6) is not divisible by mesh
    # axes (4) with spec (X) is not implemented. Got input type=f32[2,3,12@X,8] ..."
    tall = put(np.ones((2, 3, 12, 8), np.float32), None, None, "X")
    with pytest.raises(ShardingTypeError, match=r"conv_general_dilated on sharded dims where "
                       r"out dim \(6\) is not divisible by mesh axes \(4\) with spec \(X\) is not "
                       r"implemented\. Got input type=f32\[2,3,12@X,8\]"):
        pyjax.make_jaxpr(lambda l, r: lax.conv(l, r, (2, 2), "VALID"))(
            tall, np.ones((4, 3, 1, 1), np.float32))
    with pytest.raises(ShardingTypeError, match=r"reduce_window on sharded dims where out dim "
                       r"\(6\) is not divisible by mesh axes \(4\)"):
        pyjax.make_jaxpr(lambda l: lax.reduce_window(l, 0., lax.add, (1, 1, 2, 1),
                                                     (1, 1, 2, 1), "VALID"))(tall)


def test_dynamic_update_slice_needs_equal_shardings(mesh):
    a, u = put(X, "X"), put(X[:, :2])
    # JAX 0.10.2's text, observed with a float32[8@X,4] operand and a float32[8,2] update
    with pytest.raises(ShardingTypeError, match=re.escape(
            "dynamic_update_slice operand sharding must be equal to update sharding, got "
            "operand sharding float32[8@X,4]({Explicit: ('X', 'Y')}) and update sharding "
            "float32[8,2]({Explicit: ('X', 'Y')}).")):
        pyjax.make_jaxpr(lambda a, u: lax.dynamic_update_slice(a, u, (0, 0)))(a, u)
    # the transpose of dynamic_slice updates zeros typed like its operand
    grad = pyjax.grad(lambda a: jnp.sin(lax.dynamic_slice(a, (0, 1), (8, 2))).sum())
    assert types(grad, a) == ["float32[8@X,4]"]
    check_values(lambda a, u: (lax.dynamic_update_slice(a, u, (0, 1)), grad(a)), a,
                 put(X[:, :2], "X"))
