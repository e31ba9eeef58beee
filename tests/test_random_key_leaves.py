"""Typed key arrays are pytree leaves (as in JAX 0.10.2) and every transformation still takes
them as arguments, results, carries and closures.

The oracle is the same program on raw key data (``random.key_data`` / ``wrap_key_data``),
which draws the same numbers, and a Python loop for vmap and pmap."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax, random
from pyjax.flatten_util import ravel_pytree
from pyjax.sharding import PartitionSpec as P

float0 = pyjax.dtypes.float0


def _np(x):
    return np.asarray(x)


def _kd(k):
    return _np(random.key_data(k))


K = random.key(7)
KS = random.split(K, 3)          # key<fry>[3]
GRID = random.split(K, (2, 3))   # key<fry>[2, 3]


# ---------------------------------------------------------------------------------------
# what users see as a tree
# ---------------------------------------------------------------------------------------

def test_key_arrays_are_leaves_of_user_trees():
    tu = pyjax.tree_util
    state = {"k": KS, "w": jnp.ones(2)}
    assert tu.tree_leaves(state)[0] is KS and len(pyjax.tree.leaves(state)) == 2
    assert str(tu.tree_structure(state)) == "PyTreeDef({'k': *, 'w': *})"
    (path, leaf), _ = tu.tree_flatten_with_path({"k": K})[0][0], None
    assert tu.keystr(path) == "['k']" and leaf is K
    assert pyjax.tree.map(lambda t: t.dtype, state)["k"] == KS.dtype
    assert tu.all_leaves([K]) and tu.treedef_is_leaf(tu.tree_structure(K))
    assert tu.tree_leaves(tu.Partial(lambda k: k, K)) == [K]
    with pytest.raises(ValueError, match="can't tree-flatten"):
        tu.flatten_one_level(K)
    # tree_map with key leaves rebuilds the same tree around new leaves
    again = tu.tree_map(lambda x: x, state)
    assert again["k"] is KS
    # JAX refuses to ravel keys: they have no numeric dtype
    with pytest.raises(TypeError, match="key<fry>"):
        ravel_pytree({"k": K, "w": jnp.ones(2)})


def test_typeof_inside_and_outside_jit():
    seen = []
    out = pyjax.jit(lambda k: (seen.append(str(pyjax.typeof(k))), k)[1])(KS)
    assert str(pyjax.typeof(KS)) == "key<fry>[3]" and seen == ["key<fry>[3]"]
    assert out.dtype == KS.dtype and np.array_equal(_kd(out), _kd(KS))


def test_eval_shape_and_shape_dtype_struct_with_key_dtype():
    spec = pyjax.ShapeDtypeStruct((3,), K.dtype)
    assert repr(spec) == "ShapeDtypeStruct(shape=(3,), dtype=key<fry>)"
    out = pyjax.eval_shape(lambda k: (random.split(k[0]), random.normal(k[1], (4,))), spec)
    assert out[0] == pyjax.ShapeDtypeStruct((2,), K.dtype)
    assert out[1].shape == (4,) and out[1].dtype == np.float32
    assert pyjax.eval_shape(random.split, K) == pyjax.ShapeDtypeStruct((2,), K.dtype)


# ---------------------------------------------------------------------------------------
# jit
# ---------------------------------------------------------------------------------------

def test_jit_keys_in_trees_static_and_donated_args():
    def step(state, n):
        k, sub = random.split(state["k"])
        return {"k": k, "x": state["x"] + random.normal(sub, (n,))}

    state = {"k": K, "x": jnp.zeros(2)}
    want = step(state, 2)
    got = pyjax.jit(step, static_argnums=1)(state, 2)
    assert got["k"].dtype == K.dtype
    np.testing.assert_array_equal(_kd(got["k"]), _kd(want["k"]))
    np.testing.assert_array_equal(_np(got["x"]), _np(want["x"]))
    donated = pyjax.jit(step, static_argnums=1, donate_argnums=0)(
        {"k": random.key(7), "x": jnp.zeros(2)}, 2)
    np.testing.assert_array_equal(_kd(donated["k"]), _kd(want["k"]))
    # a closed-over key array is a constant of the trace
    closed = pyjax.jit(lambda x: x + random.normal(K, (2,)))(jnp.zeros(2))
    np.testing.assert_array_equal(_np(closed), _np(random.normal(K, (2,))))


def test_jit_signature_holds_the_key_dtype():
    # rbg and unsafe_rbg keys have the same uint32[4] key data: only the dtype tells the
    # implementations apart, so one jitted function must trace once per dtype
    data = random.key_data(random.key(1, impl="rbg"))
    rbg = random.wrap_key_data(data, impl="rbg")
    urbg = random.wrap_key_data(data, impl="unsafe_rbg")
    f = pyjax.jit(lambda k: (random.split(k), random.bits(k, (3,))))
    for key in (rbg, urbg, rbg):
        keys, bits = f(key)
        assert keys.dtype == key.dtype
        np.testing.assert_array_equal(_kd(keys), _kd(random.split(key)))
        np.testing.assert_array_equal(_np(bits), _np(random.bits(key, (3,))))
    assert not np.array_equal(_kd(random.split(rbg)), _kd(random.split(urbg)))
    # raw key data and a typed key are different signatures, with the same numbers
    g = pyjax.jit(lambda k: random.normal(k, (2,)))
    np.testing.assert_array_equal(_np(g(K)), _np(g(random.key_data(K))))


def test_traced_stage_trees_and_export_with_keys():
    traced = pyjax.jit(lambda ks, x: (random.split(ks[0]), x)).trace(KS, 1.0)
    assert str(traced.in_tree) == "PyTreeDef(((*, *), {}))"
    assert str(traced.out_tree) == "PyTreeDef((*, *))"
    (info_k, info_x), _ = traced.args_info
    assert info_k.shape == (3,) and info_k.dtype == K.dtype and not info_k.donated
    assert pyjax.jit(lambda x: x).trace(1.0).args_info[0][0].shape == ()  # nothing donated
    exported = pyjax.export.export(pyjax.jit(lambda k: random.normal(k, (2,))))(K)
    np.testing.assert_array_equal(_np(exported.call(K)), _np(random.normal(K, (2,))))


def test_make_jaxpr_device_put_block_until_ready():
    jaxpr = pyjax.make_jaxpr(lambda k: random.normal(k))(K)
    assert len(jaxpr.jaxpr.invars) == 1
    put = pyjax.device_put({"k": KS})
    assert put["k"].dtype == KS.dtype and np.array_equal(_kd(put["k"]), _kd(KS))
    tree = {"k": KS}
    assert pyjax.block_until_ready(tree) is tree


# ---------------------------------------------------------------------------------------
# vmap: axes count the key array's own dims
# ---------------------------------------------------------------------------------------

def _loop(f, keys):
    return np.stack([_np(f(k)) for k in keys])


def test_vmap_in_axes_count_key_dims_including_negative():
    f = lambda k: random.normal(k, (2,))  # noqa: E731
    want = _loop(f, KS)
    for ax in (0, -1):
        np.testing.assert_array_equal(_np(pyjax.vmap(f, in_axes=ax)(KS)), want)
    # key<fry>[2, 3]: axis 1 (= -1) maps over the 3 columns, each example a key<fry>[2]
    g = lambda ks: random.normal(ks[1], ())  # noqa: E731
    want = np.stack([_np(g(GRID[:, j])) for j in range(3)])
    for ax in (1, -1):
        np.testing.assert_array_equal(_np(pyjax.vmap(g, in_axes=ax)(GRID)), want)
    with pytest.raises(ValueError, match=r"rank should be at least 3.*shape is \(2, 3\)"):
        pyjax.vmap(g, in_axes=2)(GRID)
    with pytest.raises(ValueError, match=r"argument k of type key<fry>\[3\] has size 3"):
        pyjax.vmap(lambda k, x: x)(KS, jnp.ones(2))
    # in a dict, next to an unmapped array
    h = lambda s: s["x"] + random.normal(s["k"], ())  # noqa: E731
    got = pyjax.vmap(h, in_axes=({"k": 0, "x": None},))({"k": KS, "x": jnp.float32(1)})
    np.testing.assert_allclose(_np(got), _loop(lambda k: 1 + random.normal(k, ()), KS))


def test_vmap_out_axes_count_key_dims():
    split2 = lambda k: random.split(k)  # noqa: E731  key<fry>[2] per example
    for oax, perm in ((0, (0, 1)), (1, (1, 0)), (-1, (1, 0))):
        got = pyjax.vmap(split2, out_axes=oax)(KS)
        assert got.dtype == K.dtype and got.shape == ((3, 2) if oax == 0 else (2, 3))
        want = np.stack([_kd(split2(k)) for k in KS]).transpose(perm + (2,))
        np.testing.assert_array_equal(_kd(got), want)
    # an unmapped key output broadcast along the new axis
    got = pyjax.vmap(lambda x: (x, K), out_axes=(0, -1))(jnp.ones(3))[1]
    assert got.shape == (3,) and np.array_equal(_kd(got), np.stack([_kd(K)] * 3))


# ---------------------------------------------------------------------------------------
# autodiff: keys are not differentiable; their tangents are float0 of the key's shape
# ---------------------------------------------------------------------------------------

def loss(k, x):
    return jnp.sum(x * random.normal(k, (2,)))


def test_grad_refuses_keys_and_allow_int_gives_float0():
    x = jnp.array([1.0, 2.0])
    with pytest.raises(TypeError, match="but got key<fry>.*allow_int"):
        pyjax.grad(loss)(K, x)
    gk, gx = pyjax.grad(loss, argnums=(0, 1), allow_int=True)(KS[0], x)
    assert gk.dtype == float0 and gk.shape == ()
    np.testing.assert_array_equal(_np(gx), _np(random.normal(KS[0], (2,))))
    gks = pyjax.grad(lambda ks, x: loss(ks[1], x), allow_int=True)(KS, x)
    assert gks.dtype == float0 and gks.shape == (3,)
    # the key as a non-differentiated argument
    np.testing.assert_array_equal(_np(pyjax.grad(loss, argnums=1)(K, x)),
                                  _np(random.normal(K, (2,))))


def test_jvp_and_vjp_take_and_give_float0_of_key_shape():
    f = lambda k, x: (random.split(k), x * 2.0)  # noqa: E731
    primals, tangents = pyjax.jvp(f, (KS[0], 1.0), (np.zeros((), float0), 1.0))
    assert primals[0].shape == (2,) and np.array_equal(_kd(primals[0]), _kd(random.split(KS[0])))
    assert tangents[0].dtype == float0 and tangents[0].shape == (2,)
    assert float(tangents[1]) == 2.0
    with pytest.raises(TypeError, match="same tree structure"):
        pyjax.jvp(f, (KS[0], 1.0), (1.0,))
    out, vjp_fun = pyjax.vjp(f, KS[0], 1.0)
    ck, cx = vjp_fun((np.zeros((2,), float0), 1.0))
    assert ck.dtype == float0 and ck.shape == () and float(cx) == 2.0
    out, f_jvp = pyjax.linearize(lambda k, x: x * random.normal(k), K, 1.0)
    t = f_jvp(np.zeros((), float0), 1.0)
    np.testing.assert_allclose(_np(t), _np(random.normal(K)))


def test_checkpoint_custom_jvp_custom_vjp_with_key_args():
    x = jnp.array([0.5, -1.0])
    want = _np(pyjax.grad(loss, argnums=1)(K, x))
    np.testing.assert_allclose(_np(pyjax.grad(pyjax.checkpoint(loss), argnums=1)(K, x)), want)

    @pyjax.custom_jvp
    def noisy(k, x):
        return x * random.normal(k, (2,))

    seen = []

    @noisy.defjvp
    def _noisy_jvp(primals, tangents):
        k, x = primals
        seen.append((tangents[0].dtype, tangents[0].shape))  # the key's: float0[]
        return noisy(k, x), tangents[1] * random.normal(k, (2,))

    got = pyjax.grad(lambda x: jnp.sum(noisy(K, x)))(x)
    np.testing.assert_allclose(_np(got), want)
    assert seen == [(float0, ())]

    @pyjax.custom_jvp
    def split_scaled(k, x):  # a key output, whose tangent the rule gives as float0
        return random.split(k), 2.0 * x

    split_scaled.defjvp(lambda p, t: (split_scaled(*p), (np.zeros((2,), float0), 2.0 * t[1])))
    _, (tk, tx) = pyjax.jvp(lambda x: split_scaled(K, x), (1.0,), (1.0,))
    assert tk.dtype == float0 and tk.shape == (2,) and float(tx) == 2.0

    @pyjax.custom_vjp
    def noisy2(k, x):
        return x * random.normal(k, (2,))

    noisy2.defvjp(lambda k, x: (noisy2(k, x), k),
                  lambda k, ct: (None, ct * random.normal(k, (2,))))
    got = pyjax.jit(pyjax.grad(lambda x, k: jnp.sum(noisy2(k, x))))(x, K)
    np.testing.assert_allclose(_np(got), want)

    @pyjax.custom_vjp
    def split2(k, x):
        return random.split(k), 2.0 * x

    cts = []
    split2.defvjp(lambda k, x: (split2(k, x), None),
                  lambda _, ct: (cts.append((ct[0].dtype, ct[0].shape)), (None, 2.0 * ct[1]))[1])
    assert float(pyjax.grad(lambda x: split2(K, x)[1])(1.0)) == 2.0
    assert cts == [(float0, (2,))]  # the cotangent of a key<fry>[2] output


# ---------------------------------------------------------------------------------------
# control flow: keys as carries, xs, operands
# ---------------------------------------------------------------------------------------

def _walk(k, n):
    xs = []
    for _ in range(n):
        k, sub = random.split(k)
        xs.append(_np(random.normal(sub)))
    return k, np.stack(xs)


def test_scan_fori_while_with_key_carries_and_xs():
    def body(k, _):
        k, sub = random.split(k)
        return k, random.normal(sub)

    k_end, want = _walk(K, 4)
    kc, ys = lax.scan(body, K, None, length=4)
    assert kc.dtype == K.dtype and np.array_equal(_kd(kc), _kd(k_end))
    np.testing.assert_array_equal(_np(ys), want)
    # keys as xs, and a key array among the ys
    c, (bits, ks) = lax.scan(lambda c, k: (c + 1, (random.bits(k), k)), 0, KS)
    np.testing.assert_array_equal(_np(bits), np.stack([_np(random.bits(k)) for k in KS]))
    assert ks.dtype == K.dtype and np.array_equal(_kd(ks), _kd(KS))
    kf = lax.fori_loop(0, 4, lambda i, k: random.split(k)[0], K)
    kw = lax.while_loop(lambda s: s[0] < 4, lambda s: (s[0] + 1, random.split(s[1])[0]),
                        (0, K))[1]
    # a traced trip count makes fori_loop a while loop
    kt = pyjax.jit(lambda n, k: lax.fori_loop(0, n, lambda i, k: random.split(k)[0], k))(4, K)
    for k in (kf, kw, kt):
        assert k.dtype == K.dtype and np.array_equal(_kd(k), _kd(k_end))


def test_cond_and_switch_with_key_operands_and_results():
    branches = [lambda k: random.split(k)[0], lambda k: random.split(k)[1], lambda k: k]
    for i in range(3):
        got = lax.switch(i, branches, K)
        assert got.dtype == K.dtype and np.array_equal(_kd(got), _kd(branches[i](K)))
    got = pyjax.jit(lambda p, k: lax.cond(p, branches[0], branches[1], k))(False, K)
    np.testing.assert_array_equal(_kd(got), _kd(branches[1](K)))


# ---------------------------------------------------------------------------------------
# pmap, shard_map
# ---------------------------------------------------------------------------------------

def test_pmap_and_shard_map_over_keys():
    n = 2
    keys = random.split(K, n)
    f = lambda k: random.normal(k, (3,))  # noqa: E731
    np.testing.assert_array_equal(_np(pyjax.pmap(f, devices=pyjax.devices()[:n])(keys)),
                                  _loop(f, keys))
    # axes count the key array's dims: -1 of key<fry>[3, 2] is its axis 1, not the key data's
    devs = pyjax.devices()[:n]
    grid = random.split(K, (3, n))
    g = lambda ks: random.normal(ks[0], (2,))  # noqa: E731
    np.testing.assert_array_equal(_np(pyjax.pmap(g, in_axes=-1, devices=devs)(grid)),
                                  np.stack([_np(g(grid[:, j])) for j in range(n)]))
    split = pyjax.pmap(lambda k: random.split(k), out_axes=-1, devices=devs)(keys)
    assert split.dtype == K.dtype and split.shape == (2, n)
    np.testing.assert_array_equal(_kd(split), np.stack([_kd(random.split(k)) for k in keys], 1))
    mesh = pyjax.make_mesh((n,), ("x",), devices=pyjax.devices()[:n])
    sm = pyjax.shard_map(lambda ks: random.normal(ks[0], (1, 3)), mesh=mesh, in_specs=P("x"),
                         out_specs=P("x"))
    np.testing.assert_array_equal(_np(sm(keys)), _loop(f, keys))


def test_stack_and_concatenate_key_arrays():
    # as in JAX (optax's tree_split_key_like stacks the leaves of a tree of keys)
    s = jnp.stack([KS, KS[::-1]], axis=-1)
    assert s.dtype == K.dtype and s.shape == (3, 2)
    np.testing.assert_array_equal(_kd(s), np.stack([_kd(KS), _kd(KS)[::-1]], axis=1))
    c = pyjax.jit(lambda a, b: jnp.concatenate([a, b]))(KS, KS[:1])
    np.testing.assert_array_equal(_kd(c), np.concatenate([_kd(KS), _kd(KS)[:1]]))
    # JAX 0.10.2: ValueError "dtype=key<fry> is not a valid dtype for JAX type promotion."
    with pytest.raises(ValueError, match="not a valid dtype for JAX type promotion"):
        jnp.stack([KS, jnp.ones(3)])


def test_where_and_astype_of_key_arrays():
    # as in JAX (optax's gradient accumulation selects its inner state, keys included)
    c = jnp.array([True, False, True])
    got = pyjax.jit(jnp.where)(c, GRID, K)  # key<fry>[2, 3] and key<fry>[] broadcast
    want = np.where(_np(c)[None, :, None], _kd(GRID), _kd(K))
    assert got.dtype == K.dtype and got.shape == (2, 3)
    np.testing.assert_array_equal(_kd(got), want)
    np.testing.assert_array_equal(_kd(jnp.where(False, K, KS[1])), _kd(KS[1]))
    with pytest.raises(ValueError, match="key<fry> is not a valid dtype"):
        jnp.where(True, K, 1.0)
    assert jnp.astype(KS, KS.dtype) is KS
    with pytest.raises(ValueError, match="from key<fry> to float32"):
        jnp.astype(K, jnp.float32)


def test_jnp_shape_functions_take_copy_zeros_like_array_equal_on_keys():
    # as in JAX: the key data moves, the trailing key-data dim stays last
    kd = _kd(GRID)  # uint32[2, 3, 2]
    cases = [
        (jnp.reshape(GRID, (3, 2)), kd.reshape(3, 2, 2)),
        (jnp.ravel(GRID), kd.reshape(6, 2)),
        (jnp.transpose(GRID), kd.transpose(1, 0, 2)),
        (jnp.expand_dims(GRID, -1), kd[:, :, None]),
        (jnp.squeeze(GRID[None]), kd),
        (jnp.broadcast_to(KS, (2, 3)), np.broadcast_to(_kd(KS), (2, 3, 2))),
        (jnp.take(GRID, jnp.array([2, 0]), axis=1), kd[:, [2, 0]]),
        (jnp.copy(KS), _kd(KS)),
        (jnp.zeros_like(KS), np.zeros((3, 2), np.uint32)),
    ]
    for got, want in cases:
        assert got.dtype == K.dtype
        np.testing.assert_array_equal(_kd(got), want)
    assert bool(jnp.array_equal(KS, random.split(K, 3))) and not bool(
        jnp.array_equal(KS, KS[::-1]))
    assert not bool(jnp.array_equal(KS, KS[:2]))
