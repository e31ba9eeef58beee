"""JAX 0.10.2 public names filled in late (the rest of the reference list): behaviour against
NumPy, finite differences and Python loops. The config flags among them are tested in
tests/core/test_config.py, jax.ffi in tests/test_ffi.py, the split/stack/tile primitives in
tests/lax/test_split_stack_tile.py."""
import threading
import time

import numpy as np
import pytest

import pyjax
import pyjax.experimental
import pyjax.numpy as jnp
from pyjax.test_util import check_grads, count_compiles


@pytest.fixture
def x64():
    prev = pyjax.config.jax_enable_x64
    pyjax.config.update("jax_enable_x64", True)
    yield
    pyjax.config.update("jax_enable_x64", prev)


def test_ds_dynamic_slices_read_and_update():
    x = np.arange(20).reshape(2, 10)
    get = pyjax.jit(lambda x, i: (x[:, pyjax.ds(i, 3)], x[1, pyjax.ds(i, 2, 3)],
                                  x[..., pyjax.ds(i, 4)]))
    a, b, c = get(x, 2)
    np.testing.assert_array_equal(a, x[:, 2:5])
    np.testing.assert_array_equal(b, x[1, 2:6:3])
    np.testing.assert_array_equal(c, x[:, 2:6])
    # a start past the end moves back, as lax.dynamic_slice: the slice keeps its size
    np.testing.assert_array_equal(get(x, 9)[0], x[:, 7:10])
    put = pyjax.jit(lambda x, i: x.at[:, pyjax.ds(i, 2, 2)].add(100))
    want = x.copy()
    want[:, 3:6:2] += 100
    np.testing.assert_array_equal(put(x, 3), want)
    assert pyjax.ds(None) == slice(None)
    assert pyjax.ds(4) == pyjax.ds(0, 4) and pyjax.ds(2, 3, 2) != pyjax.ds(2, 3)
    np.testing.assert_array_equal(jnp.asarray(x[0])[pyjax.ds(4)], x[0, :4])
    # vmap over the start, against a loop
    starts = np.array([0, 3, 8])
    got = pyjax.vmap(lambda i: jnp.asarray(x[0])[pyjax.ds(i, 2)])(starts)
    np.testing.assert_array_equal(got, [x[0, min(i, 8):min(i, 8) + 2] for i in starts])
    with pytest.raises(ValueError, match="size must be >= 0"):
        pyjax.ds(0, -1)


def test_fwd_and_bwd_reuses_one_compiled_backward(x64):
    def f(x, w):
        return jnp.sin(x @ w), jnp.sum(w)

    x, w = np.linspace(-1, 1, 6).reshape(2, 3), np.linspace(0, 1, 6).reshape(3, 2)
    fwd, bwd = pyjax.fwd_and_bwd(f, argnums=(0, 1), has_aux=True)
    ct = np.ones((2, 2))
    y, res, aux = fwd(x, w)
    np.testing.assert_allclose(y, np.sin(x @ w))
    assert float(aux) == w.sum()
    gx, gw = bwd(res, ct)
    np.testing.assert_allclose(gx, (np.cos(x @ w) * ct) @ w.T, rtol=1e-12)
    np.testing.assert_allclose(gw, x.T @ (np.cos(x @ w) * ct), rtol=1e-12)
    with count_compiles() as n:
        for k in range(3):
            y, res, _ = fwd(x + k, w)
            bwd(res, ct)
    assert n() == 0  # both compiled once, above
    fwd1, bwd1 = pyjax.fwd_and_bwd(lambda x, w: jnp.sum(jnp.sin(x @ w)), argnums=1,
                                   jitted=False)
    _, res = fwd1(x, w)
    np.testing.assert_allclose(bwd1(res, 1.0), x.T @ np.cos(x @ w), rtol=1e-12)
    check_grads(lambda w: bwd1(fwd1(x, w)[1], 1.0), (w,), order=1, modes=["rev"])
    with pytest.raises(ValueError, match="argnums must be distinct"):
        pyjax.fwd_and_bwd(f, argnums=(0, 0))


def test_make_user_context_retraces_on_change():
    ctx = pyjax.make_user_context(default_value=2.0)
    traces = []

    @pyjax.jit
    def f(x):
        traces.append(ctx.value)
        return x * ctx.value

    assert float(f(1.0)) == 2.0
    with ctx(5.0):
        assert ctx.value == 5.0 and float(f(1.0)) == 5.0
        assert float(f(1.0)) == 5.0  # a hit under the same value
    assert ctx.value == 2.0 and float(f(1.0)) == 2.0
    assert traces == [2.0, 5.0, 2.0]


def test_effects_barrier_after_an_io_callback():
    seen = []

    def slow(v):
        time.sleep(0.05)
        seen.append(int(v))

    f = pyjax.jit(lambda x: pyjax.experimental.io_callback(slow, None, x))
    f(np.int32(7))
    pyjax.effects_barrier()
    assert seen == [7]
    done = []
    t = threading.Thread(target=lambda: (f(np.int32(8)), pyjax.effects_barrier(),
                                         done.append(list(seen))))
    t.start()
    t.join()
    assert done == [[7, 8]]


TESTED_PRIMITIVES = {"dce_sink", "linear_call", "approx_top_k", "random_gamma"}
JVP_TESTED = {"dce_sink", "linear_call", "approx_top_k", "random_gamma"}
TRANSPOSE_TESTED = {"linear_call"}
BATCH_TESTED = {"dce_sink", "linear_call", "approx_top_k", "random_gamma"}


def test_linear_call_uses_the_given_transpose(x64):
    from pyjax.custom_derivatives import linear_call

    def f(r, x):
        return {"a": x[0] / r, "b": x[1] * r}

    def t_true(r, ct):
        return (ct["a"] / r, ct["b"] * r)

    def t_twice(r, ct):  # deliberately 2x the true transpose: shows which one runs
        return (2 * ct["a"] / r, 2 * ct["b"] * r)

    def g(x, y, r, t):
        out = linear_call(f, t, r, (x, y))
        return jnp.sum(out["a"] ** 2) + jnp.sum(out["b"])

    x, y, r = np.array([1.0, 2.0]), np.array([3.0, -1.0]), 4.0
    want = (x / r) ** 2 @ np.ones(2) + (y * r).sum()
    np.testing.assert_allclose(g(x, y, r, t_true), want)
    np.testing.assert_allclose(pyjax.jit(g, static_argnums=3)(x, y, r, t_true), want)
    check_grads(lambda x, y: g(x, y, r, t_true), (x, y), order=2, modes=["fwd", "rev"])
    gx, gy = pyjax.grad(g, argnums=(0, 1))(x, y, r, t_twice)
    np.testing.assert_allclose(gx, 2 * (2 * x / r / r))
    np.testing.assert_allclose(gy, 2 * r * np.ones(2))
    # forward mode uses fun itself
    _, tan = pyjax.jvp(lambda x: g(x, y, r, t_twice), (x,), (np.ones(2),))
    np.testing.assert_allclose(tan, (2 * x / r / r).sum())
    # vmap against a loop, and the transpose under vmap
    xs = np.arange(6.0).reshape(3, 2)
    got = pyjax.vmap(lambda x: g(x, y, r, t_true))(xs)
    np.testing.assert_allclose(got, [g(v, y, r, t_true) for v in xs])
    grads = pyjax.vmap(pyjax.grad(lambda x: g(x, y, r, t_twice)))(xs)
    np.testing.assert_allclose(grads, 4 * xs / r / r)
    with pytest.raises(TypeError, match="fun_transpose must return cotangents shaped like"):
        linear_call(f, lambda r, ct: ct["a"], r, (x, y))


def test_custom_vjp_helpers(x64):
    from pyjax.custom_derivatives import (CustomVJPPrimal, custom_vjp_primal_tree_values,
                                          zero_from_primal)
    tree = {"a": CustomVJPPrimal(np.ones(2), True), "b": [CustomVJPPrimal(3, False), 5]}
    out = custom_vjp_primal_tree_values(tree)
    assert out["b"] == [3, 5] and out["a"].shape == (2,)
    zs = zero_from_primal({"x": jnp.ones((2, 3)), "i": jnp.arange(3)})
    np.testing.assert_array_equal(zs["x"], np.zeros((2, 3)))
    assert zs["i"].dtype == pyjax.dtypes.float0 and zs["i"].shape == (3,)
    sz = zero_from_primal(jnp.ones(4, jnp.float32), symbolic_zeros=True)
    assert type(sz).__name__ == "SymbolicZero" and sz.shape == (4,) and sz.dtype == np.float32

    @pyjax.custom_vjp
    def f(x):
        return jnp.sin(x)

    def fwd(x):
        x = custom_vjp_primal_tree_values(x)
        return jnp.sin(x), jnp.cos(x)

    f.defvjp(fwd, lambda c, g: (c * g,), symbolic_zeros=True)
    np.testing.assert_allclose(pyjax.grad(f)(0.3), np.cos(0.3))


def test_debug_log(caplog):
    import logging
    with caplog.at_level(logging.INFO, logger="pyjax.debug"):
        pyjax.jit(lambda x: pyjax.debug.log("x={x} twice={}", 2 * x, x=x))(np.float32(1.5))
        pyjax.vmap(lambda v: pyjax.debug.log("v={}", v))(np.arange(2))
    msgs = [r.getMessage() for r in caplog.records if r.name == "pyjax.debug"]
    assert msgs == ["x=1.5 twice=3.0", "v=0", "v=1"]
    with pytest.raises(ValueError, match="invalid format string"):
        pyjax.debug.log("{", 1)


def test_dce_sink_keeps_an_unused_computation():
    def f(x):
        y = jnp.sin(x)
        pyjax.lax.dce_sink(y)
        return x + 1

    jaxpr = pyjax.make_jaxpr(f)(np.ones(3, np.float32))
    assert [e.primitive.name for e in jaxpr.eqns] == ["sin", "dce_sink", "add"]
    np.testing.assert_array_equal(pyjax.jit(f)(np.ones(3, np.float32)), 2 * np.ones(3))
    np.testing.assert_array_equal(pyjax.vmap(f)(np.ones((2, 3))), 2 * np.ones((2, 3)))
    assert float(pyjax.grad(lambda x: f(x)[0])(np.ones(3, np.float32))[0]) == 1.0
    # Jaxpr dead-code elimination keeps sin for the sink (and drops it without one)
    from pyjax._src.interpreters.partial_eval import dce_jaxpr
    kept = dce_jaxpr(jaxpr.jaxpr)
    assert [e.primitive.name for e in kept.eqns] == ["sin", "dce_sink", "add"]
    plain = pyjax.make_jaxpr(lambda x: (jnp.sin(x), x + 1)[1])(np.ones(3, np.float32))
    assert [e.primitive.name for e in dce_jaxpr(plain.jaxpr).eqns] == ["add"]


def test_stage_and_shape_as_value():
    from pyjax import lax
    c = np.arange(3.0, dtype=np.float32)
    jaxpr = pyjax.make_jaxpr(lambda x: lax.stage(c) + x)(np.ones(3, np.float32))
    assert len(jaxpr.jaxpr.constvars) == 1 and [e.primitive.name for e in jaxpr.eqns] == ["add"]
    out = lax.stage(c)
    assert isinstance(out, pyjax.Array)
    np.testing.assert_array_equal(out, c)
    np.testing.assert_array_equal(pyjax.jit(lambda x: lax.stage(c) * x)(2.0), 2 * c)
    v = lax.shape_as_value((2, 3))
    assert v.dtype == np.int32 and v.tolist() == [2, 3]
    with pytest.raises(TypeError, match="lax.stage: expected an array"):
        lax.stage("x")


def test_pbroadcast_and_refused_point_to_point_collectives():
    from pyjax import lax
    x = np.arange(16.0).reshape(8, 2)
    got = pyjax.pmap(lambda v: lax.pbroadcast(v, "i", 3), axis_name="i")(x)
    np.testing.assert_array_equal(got, np.broadcast_to(x[3], (8, 2)))
    got = pyjax.vmap(lambda v: lax.pbroadcast({"v": v}, "j", 1), axis_name="j")(x[:3])
    np.testing.assert_array_equal(got["v"], np.broadcast_to(x[1], (3, 2)))
    # the gradient of the broadcast value: everything flows to the source
    g = pyjax.vmap(pyjax.grad(lambda v: lax.pbroadcast(v, "j", 1)), axis_name="j")(x[:3, 0])
    np.testing.assert_array_equal(g, [0.0, 3.0, 0.0])
    with pytest.raises(ValueError, match="source 5 is out of range"):
        pyjax.vmap(lambda v: lax.pbroadcast(v, "j", 5), axis_name="j")(x[:3])
    for call in (lambda: lax.psend(x, "i", [(0, 1)]),
                 lambda: lax.precv(None, x, "i", [(0, 1)]),
                 lambda: lax.ragged_all_to_all(x, x, x, x, x, x, axis_name="i")):
        with pytest.raises(NotImplementedError, match="pyjax"):
            call()


def test_scaled_dot_against_bfloat16_numpy():
    import ml_dtypes
    from pyjax import lax

    def bf(x):
        return np.asarray(x, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)

    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(2, 4, 64)).astype(np.float32), rng.normal(size=(2, 64, 3))
    b = b.astype(np.float32)
    sa = np.abs(rng.normal(size=(2, 4, 2))).astype(np.float32)
    sb = np.abs(rng.normal(size=(2, 2, 3))).astype(np.float32)
    # JAX's CPU computation: bf16 operands and scales, bf16 products, f32 accumulation
    want = np.matmul(bf(bf(a) * np.repeat(bf(sa), 32, 2)), bf(bf(b) * np.repeat(bf(sb), 32, 1)))
    out = lax.scaled_dot(a, b, lhs_scale=sa, rhs_scale=sb)
    assert out.dtype == ml_dtypes.bfloat16 and out.shape == (2, 4, 3)
    np.testing.assert_array_equal(np.asarray(out, np.float32), bf(want))
    f32 = pyjax.jit(lambda a, b: lax.scaled_dot(a[0], b[0], lhs_scale=sa[0], rhs_scale=sb[0],
                                                preferred_element_type=np.float32))(a, b)
    np.testing.assert_allclose(f32, want[0], rtol=1e-6, atol=1e-5)
    np.testing.assert_allclose(lax.scaled_dot(a[0], b[0], preferred_element_type=np.float32),
                               bf(a[0]) @ bf(b[0]), rtol=1e-6, atol=1e-5)
    with pytest.raises(TypeError, match="must be a multiple of lhs_scale's"):
        lax.scaled_dot(a[0], b[0], lhs_scale=np.ones((4, 3), np.float32))
    with pytest.raises(TypeError, match="non-contracting dimension 0 of lhs_scale"):
        lax.scaled_dot(a[0], b[0], lhs_scale=np.ones((2, 2), np.float32))


def test_approx_top_k_primitive(x64):
    from pyjax import lax
    rng = np.random.default_rng(1)
    x = rng.permutation(24).reshape(4, 6).astype(np.float64)
    vals, idx = pyjax.jit(lambda x: lax.approx_max_k(x, 3))(x)
    want_idx = np.argsort(-x, axis=1, kind="stable")[:, :3]
    np.testing.assert_array_equal(idx, want_idx)
    np.testing.assert_array_equal(vals, np.take_along_axis(x, want_idx, 1))
    vals, idx = lax.approx_min_k(x, 2, reduction_dimension=0)
    np.testing.assert_array_equal(idx, np.argsort(x, axis=0, kind="stable")[:2])
    jaxpr = pyjax.make_jaxpr(lambda x: lax.approx_max_k(x, 3))(x)
    assert jaxpr.eqns[0].primitive is lax.approx_top_k_p
    check_grads(lambda x: lax.approx_max_k(x, 3)[0], (x,), order=2, modes=["fwd", "rev"])
    for axis in (0, 1):  # vmap against a loop
        got = pyjax.vmap(lambda r: lax.approx_min_k(r, 2)[1], in_axes=axis)(x)
        want = [np.argsort(np.take(x, i, axis), kind="stable")[:2]
                for i in range(x.shape[axis])]
        np.testing.assert_array_equal(got, want)


def test_random_gamma_p(x64):
    import scipy.special
    import scipy.stats
    from pyjax import random
    keys = random.split(random.key(3), 2)
    kd = random.key_data(keys)
    a = np.array([[0.3, 1.0, 4.5], [2.0, 0.8, 10.0]])
    draws = [random.random_gamma_p.bind(kd[i], a[i], log_space=False) for i in range(2)]
    # random.gamma binds this primitive (test_random_exact checks its numbers against JAX's)
    assert "random_gamma[log_space=False]" in str(pyjax.make_jaxpr(
        lambda a: random.gamma(keys[0], a))(a[0]))
    # vmap over keys and alphas against the loop
    got = pyjax.vmap(lambda k, a: random.random_gamma_p.bind(k, a, log_space=False))(kd, a)
    np.testing.assert_array_equal(got, np.stack(draws))
    # JVP: implicit reparameterisation, dx/da = -(dF(x; a)/da) / f(x; a), against SciPy
    x, dx = pyjax.jvp(lambda a: random.random_gamma_p.bind(kd[1], a, log_space=False),
                      (a[1],), (np.ones(3),))
    x = np.asarray(x)
    h = 1e-6
    dcdf = (scipy.special.gammainc(a[1] + h, x) - scipy.special.gammainc(a[1] - h, x)) / (2 * h)
    np.testing.assert_allclose(dx, -dcdf / scipy.stats.gamma.pdf(x, a[1]), rtol=1e-5)
    with pytest.raises(TypeError, match="key_data"):  # the primitive takes raw key data
        random.random_gamma_p.bind(keys[0], a[0], log_space=False)
    with pytest.raises(TypeError, match="raw key data of one key"):
        random.random_gamma_p.bind(kd, a, log_space=False)


def test_smap_is_shard_map_over_one_axis():
    from pyjax.sharding import set_mesh
    mesh = pyjax.make_mesh((4, 2), ("x", "y"))
    x = np.arange(32.0).reshape(8, 4)
    with set_mesh(mesh):
        f = pyjax.smap(lambda b: b * 2 + pyjax.lax.axis_index("x"), in_axes=0, out_axes=0,
                       axis_name="x")
        np.testing.assert_array_equal(f(x), 2 * x + np.repeat(np.arange(4), 2)[:, None])
        g = pyjax.smap(lambda b, w: jnp.sum(b, 0) + w, in_axes=(1, None), out_axes=0,
                       axis_name="x")
        np.testing.assert_array_equal(g(x, np.ones(1)), x.sum(0) + 1)
        h = pyjax.jit(pyjax.smap(lambda b: pyjax.lax.psum(b, "x"), in_axes=0, out_axes=None,
                                 axis_name="x"))
        np.testing.assert_array_equal(h(x[:4]), x[:4].sum(0, keepdims=True))
        with pytest.raises(NotImplementedError, match="in_axes must be given"):
            pyjax.smap(lambda b: b, out_axes=0, axis_name="x")


# The names of JAX 0.10.2's public-names list this file's tests and the others named in the
# module doc give behaviour to: each must stay reachable where JAX has it.
FILLED = {
    "pyjax": """allow_f16_reductions array_garbage_collection_guard auto_pcast debug_key_reuse ds
        effects_barrier enable_custom_prng fwd_and_bwd jax2tf_associative_scan_reductions
        legacy_prng_key make_user_context no_execution no_tracing smap softmax_custom_jvp
        thread_guard""",
    "pyjax.lax": """approx_top_k_p dce_sink dce_sink_p mulhi_p pbroadcast precv psend
        ragged_all_to_all scaled_dot shape_as_value split_p stack_p stage tile_p unstack_p""",
    "pyjax.random": "random_gamma_p",
    "pyjax.debug": "log",
    "pyjax.profiler": "ProfileOptions",
    "pyjax.ffi": """build_ffi_lowering_function ffi_call ffi_lowering include_dir pycapsule
        register_ffi_target register_ffi_target_as_batch_partitionable register_ffi_type
        register_ffi_type_id""",
    "pyjax.custom_derivatives": "custom_vjp_primal_tree_values linear_call zero_from_primal",
}


@pytest.mark.parametrize("module", sorted(FILLED))
def test_filled_names_are_reachable(module):
    import importlib
    mod = importlib.import_module(module)
    missing = [n for n in FILLED[module].split() if not hasattr(mod, n)]
    assert not missing, f"{module} lacks {missing}"


def test_refused_ffi_names_say_what_is_missing():
    for call, what in [(lambda: pyjax.ffi.include_dir(), "no XLA FFI headers"),
                       (lambda: pyjax.ffi.register_ffi_type_id("t", None), "FFI types"),
                       (lambda: pyjax.ffi.register_ffi_type("t", None), "FFI types"),
                       (lambda: pyjax.ffi.register_ffi_target_as_batch_partitionable("t"),
                        "custom partitioner")]:
        with pytest.raises(NotImplementedError, match=what):
            call()
    for flag in ("debug_key_reuse", "enable_custom_prng", "jax2tf_associative_scan_reductions"):
        with pytest.raises(NotImplementedError, match=f"{flag}=True is not implemented"):
            with getattr(pyjax, flag)(True):
                pass
    with pytest.raises(NotImplementedError, match="jax_auto_pcast=False"):
        with pyjax.auto_pcast(False):
            pass
