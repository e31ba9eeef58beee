"""Names libraries use: ravel_pytree, tree_util.Partial, custom_gradient, closure_convert,
block_until_ready on pytrees; checked against NumPy and finite differences."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax.flatten_util import ravel_pytree
from pyjax.test_util import check_grads
from pyjax.tree_util import Partial


@pytest.fixture
def x64():
    prev = pyjax.config.jax_enable_x64
    pyjax.config.update("jax_enable_x64", True)
    yield
    pyjax.config.update("jax_enable_x64", prev)


def test_ravel_pytree_round_trip_and_dtypes():
    tree = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": (np.int32(7), np.ones(2, np.float16))}
    flat, unravel = ravel_pytree(tree)
    assert flat.shape == (9,) and flat.dtype == np.float32  # promoted to the common dtype
    np.testing.assert_array_equal(flat, np.concatenate([np.arange(6), [7], np.ones(2)]))
    back = unravel(flat)
    assert back["b"][0].dtype == np.int32 and back["b"][1].dtype == np.float16
    np.testing.assert_array_equal(back["a"], tree["a"])
    assert unravel == ravel_pytree(tree)[1]  # equal unravel functions: usable as static args
    with pytest.raises(ValueError, match=r"shape \(9,\)"):
        unravel(flat[:5])
    with pytest.raises(TypeError, match="dtype"):
        unravel(flat.astype(np.int32))
    empty, unravel_empty = ravel_pytree({})
    assert empty.shape == (0,) and unravel_empty(empty) == {}


def test_ravel_pytree_under_jit_and_grad():
    tree = {"w": jnp.ones((2, 2)), "b": jnp.arange(2.0)}
    flat, unravel = ravel_pytree(tree)
    f = lambda v: jnp.sum(unravel(v)["w"] ** 2) + jnp.sum(unravel(v)["b"] ** 3)
    g = pyjax.jit(pyjax.grad(f))(flat)
    np.testing.assert_allclose(g, np.concatenate([3 * np.arange(2.0) ** 2, 2 * np.ones(4)]))


def test_partial_is_a_pytree_through_jit():
    p = Partial(lambda a, x: a * x, jnp.array(3.0))
    assert pyjax.tree_util.tree_leaves(p)[0] == 3.0
    out = pyjax.jit(lambda p, x: p(x))(p, 2.0)
    assert float(out) == 6.0
    doubled = pyjax.tree_util.tree_map(lambda a: 2 * a, p)
    assert float(doubled(1.0)) == 6.0


def test_custom_gradient(x64):
    @pyjax.custom_gradient
    def f(x):
        return jnp.sin(x), lambda g: g * 3.0 * jnp.cos(x)  # deliberately 3x the true gradient

    xs = jnp.array([0.1, 0.7, 2.0])
    np.testing.assert_allclose(f(xs), np.sin([0.1, 0.7, 2.0]))
    np.testing.assert_allclose(pyjax.vmap(pyjax.grad(f))(xs), 3 * np.cos([0.1, 0.7, 2.0]))
    np.testing.assert_allclose(pyjax.jit(pyjax.grad(f))(0.7), 3 * np.cos(0.7))

    @pyjax.custom_gradient
    def mul(x, y):  # the true gradient, checked by finite differences
        return x * y, lambda ct: (ct * y, ct * x)
    check_grads(mul, (1.5, -0.5), order=1, modes=["rev"])


def test_closure_convert_hoists_traced_values(x64):
    def outer(w):
        conv, consts = pyjax.closure_convert(lambda x: jnp.sin(w * x), 1.0)
        assert len(consts) == (1 if isinstance(w, pyjax.core.Tracer) else 0)
        return conv(0.5, *consts)

    np.testing.assert_allclose(outer(2.0), np.sin(1.0))
    check_grads(outer, (2.0,), order=1, modes=["rev"])


def test_block_until_ready_pytree():
    tree = {"a": jnp.ones(3) * 2, "b": [jnp.arange(2), 5, None]}
    assert pyjax.block_until_ready(tree) is tree


# `name` (checkpoint_name) and `custom_vmap_call`: lowering (jit), JVP and batching tested below
TESTED_PRIMITIVES = JVP_TESTED = BATCH_TESTED = {"name", "custom_vmap_call"}


def test_checkpoint_name_and_name_policies(x64):
    from pyjax.ad_checkpoint import checkpoint_name
    policies = pyjax.checkpoint_policies

    def f(x):
        a = checkpoint_name(jnp.sin(x), "a")
        return jnp.sum(jnp.sin(a) * a)

    x = jnp.array([0.3, -1.2, 2.0])
    want = np.cos(np.sin(x)) * np.cos(x) * np.sin(x) + np.sin(np.sin(x)) * np.cos(x)
    sins = {}
    for label, pol in [("none", None), ("only_a", policies.save_only_these_names("a")),
                       ("all_but_a", policies.save_any_names_but_these("a")),
                       ("both", policies.save_from_both_policies(
                           policies.nothing_saveable, policies.save_only_these_names("a"))),
                       # on the CPU an offloaded residual is a saved one (host memory)
                       ("offload_a", policies.save_and_offload_only_these_names(
                           names_which_can_be_saved=[], names_which_can_be_offloaded=["a"],
                           offload_src="device", offload_dst="pinned_host"))]:
        g = pyjax.grad(pyjax.checkpoint(f, policy=pol))
        np.testing.assert_allclose(g(x), want, rtol=1e-12)
        sins[label] = str(pyjax.make_jaxpr(g)(x)).count("sin")
    # saving "a" spares recomputing sin(x) in the backward pass
    assert sins["only_a"] == sins["both"] == sins["none"] - 1 == sins["all_but_a"] - 1
    assert sins["offload_a"] == sins["only_a"]
    check_grads(lambda x: jnp.sum(checkpoint_name(x ** 3, "c")), (x,), order=2)
    np.testing.assert_allclose(pyjax.vmap(lambda v: checkpoint_name(v * 2, "b"))(x), 2 * x)
    np.testing.assert_allclose(pyjax.jit(lambda v: checkpoint_name(v, "c"))(x), x)
    with pytest.raises(TypeError, match="name must be a string"):
        checkpoint_name(x, 3)
    with pytest.raises(ValueError, match="offload_dst must be one of"):
        policies.save_and_offload_only_these_names(
            names_which_can_be_saved=["a"], names_which_can_be_offloaded=[],
            offload_src="device", offload_dst="disk")
    w = jnp.ones((3, 3))
    dots = lambda pol: str(pyjax.make_jaxpr(pyjax.grad(pyjax.checkpoint(  # noqa: E731
        lambda w: jnp.sum(jnp.tanh(jnp.tanh(w @ w) @ w)), policy=pol)))(w))
    assert (dots(policies.offload_dot_with_no_batch_dims("device", "pinned_host"))
            == dots(policies.dots_with_no_batch_dims_saveable)
            != dots(policies.nothing_saveable))


def test_vjp_and_linearize_functions_are_pytrees():
    f = lambda x: jnp.sin(x) * x
    x = jnp.arange(3.0)
    want = np.cos(np.arange(3.0)) * np.arange(3.0) + np.sin(np.arange(3.0))
    _, pullback = pyjax.vjp(f, x)
    assert pyjax.tree_util.tree_leaves(pullback)  # the residuals are its leaves
    np.testing.assert_allclose(pullback(jnp.ones(3))[0], want, rtol=1e-6)
    from_jit = pyjax.jit(lambda x: pyjax.vjp(f, x)[1])(x)
    np.testing.assert_allclose(from_jit(jnp.ones(3))[0], want, rtol=1e-6)
    mapped = pyjax.tree_util.tree_map(lambda r: r, pullback)
    np.testing.assert_allclose(mapped(jnp.ones(3))[0], want, rtol=1e-6)
    lin = pyjax.jit(lambda x: pyjax.linearize(f, x)[1])(x)
    np.testing.assert_allclose(lin(jnp.ones(3)), want, rtol=1e-6)


def test_exception_types_as_jax():
    with pytest.raises(TypeError):
        jnp.dot(jnp.ones(3), jnp.ones(4))
    with pytest.raises(TypeError):
        pyjax.lax.add(1, 1.0)


def test_custom_vmap_uses_its_rule_and_sequential_vmap(x64):
    from pyjax.custom_batching import custom_vmap, sequential_vmap
    calls = []

    @custom_vmap
    def f(x, y):
        return jnp.sin(x) + y

    @f.def_vmap
    def rule(axis_size, in_batched, x, y):
        calls.append((axis_size, in_batched))
        return jnp.sin(x) + y + 100.0, True  # marked, so the test sees the rule was used

    x = jnp.arange(3.0)
    np.testing.assert_allclose(f(x[1], 1.0), np.sin(1.0) + 1)
    np.testing.assert_allclose(pyjax.vmap(f, (0, None))(x, 1.0), np.sin(np.arange(3.0)) + 101)
    assert calls == [(3, [True, False])]  # JAX 0.10.2 passes in_batched as a list
    np.testing.assert_allclose(pyjax.vmap(pyjax.jit(f), (None, 0))(1.0, x), np.sin(1.0) + x + 100)
    assert calls[-1] == (3, [False, True])
    np.testing.assert_allclose(pyjax.jit(f)(0.5, 2.0), np.sin(0.5) + 2)
    check_grads(f, (0.3, 2.0), order=1, modes=["fwd", "rev"])

    @custom_vmap
    def no_rule(x):
        return x
    with pytest.raises(AttributeError, match="No batching rule"):
        pyjax.vmap(no_rule)(x)

    g = sequential_vmap(lambda a, b: jnp.sum(a ** 2) * b)
    a = np.arange(12.0).reshape(4, 3)
    np.testing.assert_allclose(pyjax.vmap(g, (0, None))(a, 2.0), 2 * (a ** 2).sum(1))
    assert "scan" in str(pyjax.make_jaxpr(pyjax.vmap(g, (0, None)))(a, 2.0))


def test_pswapaxes_swaps_the_mapped_axis():
    from pyjax._src.lax import parallel
    if not hasattr(parallel, "all_to_all"):
        pytest.skip("lax.all_to_all is not on this branch yet")
    x = np.arange(24.0).reshape(2, 3, 4)[:, :2, :]  # mapped axis of size 2, axis 0 of size 2
    got = pyjax.vmap(lambda r: pyjax.lax.pswapaxes(r, "i", 0), axis_name="i")(x)
    np.testing.assert_array_equal(got, np.swapaxes(x, 0, 1))


def test_custom_vjp_symbolic_zeros(x64):
    from pyjax.custom_derivatives import CustomVJPPrimal, SymbolicZero
    seen = []

    @pyjax.custom_vjp
    def f(x, n):
        return jnp.sin(x) * n

    def fwd(x, n):
        assert isinstance(x, CustomVJPPrimal) and isinstance(n, CustomVJPPrimal)
        seen.append((bool(x.perturbed), bool(n.perturbed)))
        return f(x.value, n.value), (x.value, n.value)

    def bwd(res, ct):
        x, n = res
        return ct * jnp.cos(x) * n, SymbolicZero(pyjax.core.get_aval(n))

    f.defvjp(fwd, bwd, symbolic_zeros=True)
    np.testing.assert_allclose(pyjax.grad(f)(1.0, 2), 2 * np.cos(1.0))
    assert seen == [(True, False)]  # an integer input is never perturbed
    np.testing.assert_allclose(pyjax.jit(pyjax.grad(f))(0.5, 3), 3 * np.cos(0.5))
    g = pyjax.grad(lambda x, y: f(x, y), argnums=(0, 1))(1.0, 2.0)
    np.testing.assert_allclose(g, [2 * np.cos(1.0), 0.0])  # the SymbolicZero became a zero


def test_named_scope_as_decorator():
    @pyjax.named_scope("outer_block")
    def f(x):
        return jnp.sin(x) * 2

    np.testing.assert_allclose(f(1.0), 2 * np.sin(1.0))
    text = pyjax.jit(f).lower(1.0).as_text()
    assert "outer_block" in text


def test_jit_of_the_same_function_shares_one_cache():
    traces = []
    offset = [1.0]

    def f(x):
        traces.append(1)
        return x + offset[0]

    assert float(pyjax.jit(f)(1.0)) == 2.0
    offset[0] = 5.0  # JAX uses the cached trace: the change is not seen
    assert float(pyjax.jit(f)(1.0)) == 2.0
    assert len(traces) == 1
    assert float(pyjax.jit(f, donate_argnums=())(jnp.ones(2))[0]) == 6.0  # new signature
    assert len(traces) == 2
    g = lambda x: f(x)  # another function: its own cache  # noqa: E731
    assert float(pyjax.jit(g)(1.0)) == 6.0 and len(traces) == 3


def test_pytree_with_unhashable_aux_data_through_jit():
    class Node:
        def __init__(self, a, meta):
            self.a, self.meta = a, meta

    pyjax.tree_util.register_pytree_node(
        Node, lambda n: ((n.a,), n.meta), lambda meta, c: Node(c[0], meta))
    traces = []

    def f(n):
        traces.append(1)
        return Node(n.a * n.meta["k"], n.meta)

    jf = pyjax.jit(f)
    np.testing.assert_allclose(jf(Node(jnp.ones(2), {"k": 3})).a, [3, 3])
    np.testing.assert_allclose(jf(Node(jnp.ones(2), {"k": 3})).a, [3, 3])
    assert len(traces) == 1  # equal dicts: the same signature
    out = jf(Node(jnp.ones(2), {"k": 4}))
    assert len(traces) == 2 and out.meta == {"k": 4}
    np.testing.assert_allclose(out.a, [4, 4])
    t1 = pyjax.tree_util.tree_structure(Node(1.0, {"k": [1]}))
    assert t1 == pyjax.tree_util.tree_structure(Node(2.0, {"k": [1]})) and hash(t1) == hash(
        pyjax.tree_util.tree_structure(Node(2.0, {"k": [1]})))


def test_scalar_type_inequality_with_a_numpy_dtype():
    # optax's tests compare `dtype != jnp.float16` with dtype a NumPy dtype
    assert (np.dtype("float32") != jnp.float16) is True
    assert (np.dtype("float16") != jnp.float16) is False
    assert (jnp.float32 != jnp.float16) is True and (jnp.float16 != np.float16) is False


def test_typeof_key_array_and_refs():
    from pyjax import random
    keys = random.split(random.key(0), 3)
    t = pyjax.typeof(keys)
    assert t.shape == (3,) and str(t.dtype) == "key<fry>" and str(t) == "key<fry>[3]"
    assert pyjax.typeof(keys[0]).shape == () and t == pyjax.typeof(keys)
    assert pyjax.typeof(jnp.ones(2)).dtype == np.float32  # ordinary arrays unchanged
    # mutable array refs (tests/state/test_refs.py): an array is not a Ref; a ref's type
    assert not isinstance(jnp.ones(2), pyjax.Ref)
    r = pyjax.new_ref(jnp.ones(2))
    assert isinstance(r, pyjax.Ref) and str(pyjax.typeof(r)) == "Ref{float32[2]}"


def test_trace_to_jaxpr_nounits_runs_the_known_part():
    from pyjax.api_util import flatten_fun_nokwargs
    from pyjax.extend import linear_util as lu
    from pyjax.interpreters import partial_eval as pe
    from pyjax.tree_util import tree_flatten, tree_unflatten

    calls = []

    def f(known, unknown):
        calls.append(1)
        k2 = jnp.sin(known)  # reads only a known value: computed now
        return {"k": k2, "u": k2 * unknown + 1.0}

    x, y = np.float32(0.5), np.ones(3, np.float32)
    _, in_tree = tree_flatten((x, y))
    f_flat, out_tree = flatten_fun_nokwargs(lu.wrap_init(f), in_tree)
    in_pvals = [pe.PartialVal.known(x), pe.PartialVal.unknown(pyjax.core.ShapedArray((3,), np.float32))]
    jaxpr, out_pvals, consts = pe.trace_to_jaxpr_nounits(f_flat, in_pvals)
    assert len(calls) == 1
    (pv_k, c_k), (pv_u, c_u) = out_pvals  # leaves in key order: k, u
    assert pv_k is None and np.allclose(c_k, np.sin(0.5))
    assert pv_u.shape == (3,) and c_u is None
    assert sorted(tree_unflatten(out_tree(), [0, 1])) == ["k", "u"]
    # the staged part takes consts then the unknown inputs
    y2 = np.arange(3, dtype=np.float32)
    out = pyjax.core.eval_jaxpr(jaxpr, consts, y2)
    np.testing.assert_allclose(out[0], np.sin(0.5) * y2 + 1.0, rtol=1e-6)


def test_unsharded_aval_sharding():
    aval = pyjax.typeof(jnp.ones((2, 3)))
    s = aval.sharding
    assert tuple(s.spec) == (None, None) and s.mesh.empty
    rebuilt = pyjax.core.ShapedArray((3,), np.float32, sharding=s.update(spec=pyjax.P(None)))
    assert rebuilt == pyjax.core.ShapedArray((3,), np.float32)


def test_out_sharding_of_an_unsharded_value_is_accepted():
    # flax passes `out_sharding=jax.typeof(x).sharding`; for an array on no mesh that asks for
    # nothing, and the result is the one without it. A real layout is honoured.
    from pyjax import lax, random
    x = jnp.ones((1, 4, 4, 1))
    k = jnp.ones((3, 3, 1, 2))
    dn = ("NHWC", "HWIO", "NHWC")
    s = pyjax.typeof(x).sharding
    np.testing.assert_array_equal(
        lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=dn, out_sharding=s),
        lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=dn))
    key = random.key(0)
    np.testing.assert_array_equal(random.bernoulli(key, 0.5, (8,), out_sharding=s),
                                  random.bernoulli(key, 0.5, (8,)))
    mesh = pyjax.make_mesh((1,), ("d",), devices=pyjax.devices()[:1])
    # a real layout: the same values, laid out (tests/parallel/test_sharding_in_types.py)
    laid = random.bernoulli(key, 0.5, (8,), out_sharding=pyjax.NamedSharding(mesh, pyjax.P("d")))
    assert laid.sharding.spec == pyjax.P("d")
    np.testing.assert_array_equal(laid, random.bernoulli(key, 0.5, (8,)))
    laid = lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=dn,
                                    out_sharding=pyjax.NamedSharding(mesh, pyjax.P()))
    assert laid.sharding.mesh == mesh
    np.testing.assert_array_equal(laid, lax.conv_general_dilated(x, k, (1, 1), "SAME",
                                                                 dimension_numbers=dn))


def test_ensure_compile_time_eval_stages_traced_operands():
    # JAX 0.10.2 (observed): inside the block, jnp.sin(3.0) is a concrete array under jit,
    # while `x * 2` on a traced x is staged (a DynamicJaxprTracer), not an escaped-tracer error;
    # under grad and vmap likewise. equinox's error_if relies on it.
    kinds = []

    def f(x):
        with pyjax.ensure_compile_time_eval():
            y = jnp.sin(3.0)
            z = x * y
            kinds.append((isinstance(y, pyjax.core.Tracer), isinstance(z, pyjax.core.Tracer)))
            positive = bool(y > 0)  # concrete: usable in Python control flow
        return z if positive else -z

    np.testing.assert_allclose(pyjax.jit(f)(2.0), 2 * np.sin(3.0), rtol=1e-6)
    np.testing.assert_allclose(pyjax.grad(f)(2.0), np.sin(3.0), rtol=1e-6)
    np.testing.assert_allclose(pyjax.vmap(f)(jnp.arange(3.0)), np.arange(3) * np.sin(3.0),
                               rtol=1e-6)
    assert kinds == [(False, True)] * 3
    # after the block, constants are staged again
    g = pyjax.jit(lambda x: (kinds.append(isinstance(jnp.sin(3.0), pyjax.core.Tracer)), x)[1])
    g(1.0)
    assert kinds[-1] is True


def test_custom_vjp_primal_is_a_pytree_leaf():
    # JAX's CustomVJPPrimal is a dataclass, a leaf: equinox's symbolic-zeros fwd rules
    # tree_map over the argument and read `.perturbed` / `.value` of each leaf
    from pyjax.custom_derivatives import CustomVJPPrimal

    @pyjax.custom_vjp
    def f(p):
        return p["a"] * p["b"]

    def fwd(p):
        perturbed = pyjax.tree_util.tree_map(lambda x: x.perturbed, p)
        vals = pyjax.tree_util.tree_map(lambda x: x.value, p)
        assert perturbed == {"a": True, "b": True}
        return f(vals), vals

    f.defvjp(fwd, lambda v, ct: ({"a": ct * v["b"], "b": ct * v["a"]},), symbolic_zeros=True)
    leaf = CustomVJPPrimal(jnp.ones(2), True)
    assert pyjax.tree_util.tree_leaves([leaf]) == [leaf]
    g = pyjax.grad(f)({"a": 2.0, "b": 5.0})
    assert (float(g["a"]), float(g["b"])) == (5.0, 2.0)


def test_shaped_array_to_tangent_aval():
    from pyjax.core import ShapedArray
    f = ShapedArray((2, 3), np.float32, weak_type=True)
    assert f.to_tangent_aval() == f
    t = ShapedArray((4,), np.int32).to_tangent_aval()
    assert t.shape == (4,) and t.dtype == pyjax.dtypes.float0
    assert pyjax.typeof(pyjax.random.key(0)).to_tangent_aval().dtype == pyjax.dtypes.float0


def test_single_device_array_shards_memories_and_format():
    # JAX: a single-device array's addressable_shards is one Shard with the full index
    x = jnp.arange(6.0).reshape(2, 3)
    (sh,) = x.addressable_shards
    assert sh.device == x.device and sh.replica_id == 0
    assert sh.index == (slice(None), slice(None))
    np.testing.assert_array_equal(sh.data, np.arange(6.0).reshape(2, 3))
    dev = pyjax.devices()[0]
    assert [m.kind for m in dev.addressable_memories()] == ["device"]
    assert dev.default_memory() == dev.memory("device")
    with pytest.raises(NotImplementedError, match="pinned_host"):
        dev.memory("pinned_host")
    assert dev.client.runtime_type != "pathways"
    from pyjax.experimental.layout import Format, Layout
    s = pyjax.sharding.SingleDeviceSharding(pyjax.devices()[1])
    y = pyjax.device_put(x, Format(None, s))
    assert y.sharding == s and s._addressable_device_assignment == [pyjax.devices()[1]]
    with pytest.raises(NotImplementedError, match="default layout"):
        pyjax.device_put(x, Format(Layout((1, 0)), s))


def test_monitoring_listeners():
    from pyjax import monitoring
    got = []
    ev, dur = (lambda e, **kw: got.append((e, kw))), (lambda e, d, **kw: got.append((e, d)))
    monitoring.register_event_listener(ev)
    monitoring.register_event_duration_secs_listener(dur)
    monitoring.record_event("/a", tag=1)
    monitoring.record_event_duration_secs("/b", 0.5)
    monitoring.unregister_event_listener(ev)
    monitoring.record_event("/c")
    monitoring.unregister_event_duration_listener(dur)
    assert got == [("/a", {"tag": 1}), ("/b", 0.5)]
    with pytest.raises(AssertionError):
        monitoring.unregister_event_listener(ev)


def test_multihost_utils_and_mesh_utils_in_one_process():
    from pyjax.experimental import mesh_utils, multihost_utils
    tree = {"a": jnp.arange(3), "b": 2.0}
    out = multihost_utils.broadcast_one_to_all(tree)
    assert isinstance(out["a"], np.ndarray) and out["a"].tolist() == [0, 1, 2]
    assert multihost_utils.broadcast_one_to_all(tree, is_source=False)["a"].tolist() == [0] * 3
    assert multihost_utils.process_allgather(jnp.ones((2, 3))).shape == (1, 2, 3)
    assert multihost_utils.process_allgather(jnp.ones((2, 3)), tiled=True).shape == (2, 3)
    multihost_utils.sync_global_devices("barrier")
    with pytest.raises(RuntimeError, match="Preemption sync manager"):
        multihost_utils.reached_preemption_sync_point(0)
    devs = mesh_utils.create_device_mesh((2, 4))
    assert devs.shape == (2, 4) and list(devs.flat) == pyjax.devices()[:8]
    with pytest.raises(ValueError, match="must equal the product"):
        mesh_utils.create_device_mesh((3, 3))
    mesh = pyjax.sharding.Mesh(devs, ("x", "y"))
    g = multihost_utils.host_local_array_to_global_array(
        jnp.arange(8.0), mesh, pyjax.sharding.PartitionSpec("x"))
    assert g.sharding.spec == pyjax.sharding.PartitionSpec("x")
    np.testing.assert_array_equal(g, np.arange(8.0))
    from pyjax.experimental import colocated_python
    with pytest.raises(NotImplementedError, match="Pathways"):
        colocated_python.colocated_cpu_devices(pyjax.devices())


def test_einsum_dot_general_override():
    # JAX's jnp.einsum takes a private `_dot_general=` (flax's attention passes it) and calls
    # it as `f(lhs, rhs, dimension_numbers, precision, preferred_element_type=...)`
    calls = []

    def dot(lhs, rhs, dims, precision=None, preferred_element_type=None):
        calls.append(dims)
        return pyjax.lax.dot_general(lhs, rhs, dims, precision,
                                     preferred_element_type=preferred_element_type)

    rng = np.random.RandomState(0)
    q, k = rng.randn(2, 3, 4, 5).astype(np.float32), rng.randn(2, 6, 4, 5).astype(np.float32)
    got = jnp.einsum("...qhd,...khd->...hqk", q, k, _dot_general=dot)
    np.testing.assert_allclose(got, np.einsum("bqhd,bkhd->bhqk", q, k), rtol=1e-5, atol=1e-5)
    assert len(calls) == 1


def test_dtypes_bfloat16_is_the_scalar_type():
    # JAX: jax.dtypes.bfloat16 is ml_dtypes.bfloat16, a type (equinox: isinstance(x, it))
    import ml_dtypes
    assert pyjax.dtypes.bfloat16 is ml_dtypes.bfloat16
    assert isinstance(np.ones(1, ml_dtypes.bfloat16)[0], pyjax.dtypes.bfloat16)
    assert not isinstance(0.5, pyjax.dtypes.bfloat16)
    assert jnp.ones(2, pyjax.dtypes.bfloat16).dtype == np.dtype(ml_dtypes.bfloat16)


def test_sharding_over_the_abstract_mesh_is_concretized():
    # flax.core.spmd builds NamedSharding(get_abstract_mesh(), spec) and asks the mesh's
    # are_all_axes_explicit / are_all_axes_auto (JAX's AbstractMesh properties)
    from pyjax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P
    mesh = Mesh(np.array(pyjax.devices()[:4]).reshape(2, 2), ("a", "b"),
                axis_types=(AxisType.Auto,) * 2)
    am = mesh.abstract_mesh
    assert am.are_all_axes_auto and not am.are_all_axes_explicit and not am.are_all_axes_manual
    assert am.auto_axes == ("a", "b") and am.manual_axes == () and am._axis_size("b") == 2
    x = jnp.arange(8.0).reshape(4, 2)
    with pyjax.sharding.set_mesh(mesh):
        for f in (lambda v: pyjax.lax.with_sharding_constraint(v, NamedSharding(am, P("a"))),
                  pyjax.jit(lambda v: pyjax.lax.with_sharding_constraint(
                      v * 1, NamedSharding(am, P("a"))))):
            y = f(x)
            assert y.sharding == NamedSharding(mesh, P("a"))
            np.testing.assert_array_equal(y, np.arange(8.0).reshape(4, 2))
    other = Mesh(np.array(pyjax.devices()[:2]), ("a",)).abstract_mesh
    with pyjax.sharding.set_mesh(mesh):
        with pytest.raises(ValueError, match="not equal to the size of the mesh 2"):
            pyjax.lax.with_sharding_constraint(x, NamedSharding(other, P("a")))


def test_objects_with_jax_array_in_traced_arithmetic():
    # flax.nnx Variables define __jax_array__; `x + variable` under jit/grad uses the traced
    # value (it staged the object itself, which then escaped as a constant)
    class Box:
        def __init__(self, v):
            self.v = v

        def __jax_array__(self):
            return self.v

    pyjax.tree_util.register_pytree_node(Box, lambda b: ((b.v,), None), lambda _, c: Box(c[0]))
    f = pyjax.jit(lambda b, x: x + b)
    np.testing.assert_allclose(f(Box(jnp.full(3, 2.0)), jnp.ones(3)), [3.0] * 3)
    np.testing.assert_allclose(f(Box(jnp.full(3, 5.0)), jnp.ones(3)), [6.0] * 3)
    g = pyjax.grad(lambda b: jnp.sum(jnp.arange(3.0) * b))(Box(jnp.ones(3)))
    np.testing.assert_allclose(g.v, [0.0, 1.0, 2.0])
    np.testing.assert_allclose(jnp.maximum(Box(jnp.array([1.0, -1.0])), 0.0), [1.0, 0.0])
