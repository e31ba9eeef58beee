"""Bigger programs in the style the libraries' own documentation teaches, run under pyjax:
the ones that found a pyjax bug (equinox's error_if and checkpointed while_loop, chex's
set_n_cpu_devices and pmap variant, an orbax-checkpoint TrainState round trip) and a few that
cover much (an nnx transformer scanned over vmap-made layers, a linen LSTM under nn.scan with
BatchNorm and a TrainState, optax's L-BFGS with its zoom line search). Oracles: NumPy/SciPy,
a Python loop over the same layers, analytic derivatives, round-trip equality."""
import numpy as np
import pytest

from tests.ecosystem.conftest import import_library


def test_equinox_error_if_checkpointed_while_loop_and_batchnorm_state():
    eqx = import_library("equinox")
    import jax
    import jax.numpy as jnp

    # error_if applies its own primitive to a traced predicate inside
    # jax.ensure_compile_time_eval() (it escaped the trace before)
    @eqx.filter_jit
    def safe_log(x):
        return jnp.log(eqx.error_if(x, x <= 0, "nonpositive input"))

    np.testing.assert_allclose(safe_log(jnp.array(2.0)), np.log(2.0), rtol=1e-6)
    with pytest.raises(Exception, match="nonpositive input"):
        safe_log(jnp.array(-1.0))

    # the checkpointed while loop is a filter_custom_vjp with symbolic zeros: its fwd rule
    # tree-maps over CustomVJPPrimal leaves (they were pytree nodes) and asks avals for
    # to_tangent_aval() (missing); a**5 by five multiplications, d/da = 5 a**4
    def power5(a, kind):
        return eqx.internal.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * a),
                                       (0, jnp.array(1.0)), max_steps=8, kind=kind)[1]

    for kind in ("checkpointed", "bounded"):
        np.testing.assert_allclose(power5(1.5, kind), 1.5 ** 5, rtol=1e-6)
        np.testing.assert_allclose(jax.grad(power5)(1.5, kind), 5 * 1.5 ** 4, rtol=1e-5)

    # eqx.nn.State / BatchNorm over a named vmap axis ("ema" mode: the first batch's
    # statistics, then momentum 0.99)
    bn, state = eqx.nn.make_with_state(eqx.nn.BatchNorm)(3, axis_name="batch", mode="ema")
    x1, x2 = np.random.RandomState(0).randn(2, 8, 3).astype(np.float32)
    apply = eqx.filter_jit(eqx.filter_vmap(bn, in_axes=(0, None), out_axes=(0, None),
                                           axis_name="batch"))
    out, state = apply(jnp.asarray(x1), state)
    np.testing.assert_allclose(out, (x1 - x1.mean(0)) / np.sqrt(x1.var(0) + 1e-5), rtol=1e-4,
                               atol=1e-5)
    out, state = apply(jnp.asarray(x2), state)
    mean, var = state.get(bn.ema_state_index)
    np.testing.assert_allclose(mean, 0.99 * x1.mean(0) + 0.01 * x2.mean(0), rtol=1e-4)
    np.testing.assert_allclose(var, 0.99 * x1.var(0) + 0.01 * x2.var(0), rtol=1e-4)


def test_equinox_stacked_layers_serialisation_and_callbacks(tmp_path):
    eqx = import_library("equinox")
    import jax
    import jax.numpy as jnp

    k = jax.random.split(jax.random.PRNGKey(0), 4)
    layers = eqx.filter_vmap(lambda key: eqx.nn.Linear(8, 8, key=key))(jax.random.split(k[0], 3))
    params, static = eqx.partition(layers, eqx.is_array)
    x = jax.random.normal(k[1], (8,))
    scanned, _ = jax.lax.scan(lambda h, p: (jnp.tanh(eqx.combine(p, static)(h)), None), x, params)
    h = np.asarray(x, np.float64)
    for i in range(3):  # oracle: the stacked weights applied in a NumPy loop
        h = np.tanh(np.asarray(layers.weight[i]) @ h + np.asarray(layers.bias[i]))
    np.testing.assert_allclose(scanned, h, rtol=1e-5, atol=1e-6)

    # a float field (Dropout.p) reached `isinstance(x, jax.dtypes.bfloat16)`, which needs the
    # scalar type, not a dtype
    def model(key):
        return eqx.nn.Sequential([eqx.nn.Linear(8, 4, key=key), eqx.nn.Dropout(0.5)])
    eqx.tree_serialise_leaves(tmp_path / "m.eqx", model(k[2]))
    back = eqx.tree_deserialise_leaves(tmp_path / "m.eqx", model(k[3]))
    np.testing.assert_array_equal(back.layers[0].weight, model(k[2]).layers[0].weight)
    assert back.layers[1].p == 0.5

    got = eqx.filter_jit(lambda v: eqx.filter_pure_callback(
        lambda a: np.sin(np.asarray(a)), v,
        result_shape_dtypes=jax.ShapeDtypeStruct((8,), jnp.float32)))(x)
    np.testing.assert_allclose(got, np.sin(np.asarray(x)), rtol=1e-6)


def test_chex_variants_with_pmap_and_cpu_device_count(monkeypatch):
    chex = import_library("chex")
    import unittest

    import jax
    import jax.numpy as jnp

    # chex reads jax._src.xla_bridge._backends: the CPU backend exists, so asking for another
    # device count is refused, the current one accepted
    monkeypatch.setenv("XLA_FLAGS", f"--xla_force_host_platform_device_count={jax.device_count()}")
    chex.set_n_cpu_devices(jax.device_count())
    with pytest.raises(RuntimeError, match="already available"):
        chex.set_n_cpu_devices(jax.device_count() + 1)

    seen = []

    class Variants(chex.TestCase):
        @chex.variants(with_jit=True, without_jit=True, with_pmap=True)
        def test_affine(self):
            @self.variant
            def f(x, y):
                return x * 2 + y
            got = f(jnp.arange(3.0), 1.0)
            seen.append(self.variant.type)
            np.testing.assert_allclose(np.asarray(got).reshape(-1, 3)[0], [1.0, 3.0, 5.0])

    result = unittest.TextTestRunner(stream=open("/dev/null", "w")).run(  # noqa: SIM115
        unittest.TestLoader().loadTestsFromTestCase(Variants))
    assert result.wasSuccessful() and not result.skipped, result.failures + result.errors
    assert chex.ChexVariantType.WITH_PMAP in seen and len(seen) == 3
    with chex.fake_pmap_and_jit():
        got = jax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i")(jnp.arange(3.0))
    np.testing.assert_allclose(got, [3.0, 3.0, 3.0])


def test_orbax_train_state_checkpoint_round_trip(tmp_path):
    ocp = import_library("orbax.checkpoint")
    nn = import_library("flax.linen")
    import jax
    import jax.numpy as jnp
    import optax
    from flax.training import train_state
    from jax.sharding import NamedSharding, PartitionSpec as P

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            return nn.Dense(2)(nn.relu(nn.Dense(4)(x)))

    model, x = MLP(), jnp.ones((3, 6))
    state = train_state.TrainState.create(
        apply_fn=model.apply, params=model.init(jax.random.PRNGKey(0), x)["params"],
        tx=optax.adamw(1e-2))
    grads = jax.grad(lambda p: jnp.sum(model.apply({"params": p}, x) ** 2))(state.params)

    def same(a, b):
        la, lb = jax.tree.leaves(a), jax.tree.leaves(b)
        return len(la) == len(lb) and all(np.array_equal(u, v) for u, v in zip(la, lb))

    ckpt = ocp.StandardCheckpointer()
    ckpt.save(tmp_path / "single", state)
    ckpt.wait_until_finished()
    restored = ckpt.restore(tmp_path / "single", jax.tree.map(ocp.utils.to_shape_dtype_struct,
                                                              state))
    assert same(restored, state) and int(restored.step) == 0

    mgr = ocp.CheckpointManager(tmp_path / "mgr",
                                options=ocp.CheckpointManagerOptions(max_to_keep=2))
    for step in range(3):
        state = state.apply_gradients(grads=grads)
        mgr.save(step, args=ocp.args.StandardSave(state))
    mgr.wait_until_finished()
    assert list(mgr.all_steps()) == [1, 2] and mgr.latest_step() == 2
    # restore onto shardings over two devices: the (6, 4) kernel split by rows
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:2]), ("d",))

    def target(a):
        spec = P("d") if np.shape(a) == (6, 4) else P()
        return jax.ShapeDtypeStruct(np.shape(a), np.asarray(a).dtype,
                                    sharding=NamedSharding(mesh, spec))
    back = mgr.restore(2, args=ocp.args.StandardRestore(jax.tree.map(target, state)))
    mgr.close()
    assert same(back, state) and int(back.step) == 3
    kernel = back.params["Dense_1"]["kernel"]  # Dense(4): built second (Dense(2) is made first)
    assert kernel.sharding == NamedSharding(mesh, P("d"))
    assert {s.data.shape for s in kernel.addressable_shards} == {(3, 4)}


def test_nnx_transformer_scanned_over_vmapped_layers():
    nnx = import_library("flax.nnx")
    optax = import_library("optax")
    import jax
    import jax.numpy as jnp

    V, D, T, L = 11, 8, 5, 2

    class Block(nnx.Module):
        def __init__(self, rngs):
            self.ln = nnx.LayerNorm(D, rngs=rngs)
            self.attn = nnx.MultiHeadAttention(num_heads=2, in_features=D, decode=False,
                                               rngs=rngs)
            self.rms = nnx.RMSNorm(D, rngs=rngs)
            self.mlp = nnx.Linear(D, D, rngs=rngs)
            self.drop = nnx.Dropout(0.1, rngs=rngs)

        def __call__(self, x):
            x = x + self.attn(self.ln(x), mask=nnx.make_causal_mask(jnp.ones(x.shape[:2])))
            return x + self.drop(nnx.gelu(self.mlp(self.rms(x))))

    class Model(nnx.Module):
        def __init__(self, rngs):
            self.embed = nnx.Embed(V, D, rngs=rngs)

            @nnx.split_rngs(splits=L)
            @nnx.vmap(in_axes=(0,), out_axes=0)
            def make(rngs):
                return Block(rngs)
            self.blocks = make(rngs)
            self.head = nnx.Linear(D, V, rngs=rngs)

        def __call__(self, tok):
            @nnx.scan(in_axes=(nnx.Carry, 0), out_axes=nnx.Carry)
            @nnx.remat
            def body(x, blk):
                return blk(x)
            return self.head(body(self.embed(tok), self.blocks))

    model = Model(nnx.Rngs(0, dropout=1))
    tok = jnp.array(np.random.RandomState(0).randint(0, V, (2, T)))
    model.eval()
    forward = nnx.jit(lambda m, t: m(t))
    logits = forward(model, tok)

    @nnx.jit
    def layer_by_layer(model, tok):  # oracle: the same layers one by one, in a Python loop
        graphdef, stacked = nnx.split(model.blocks)
        h = model.embed(tok)
        for i in range(L):
            h = nnx.merge(graphdef, jax.tree.map(lambda a, i=i: a[i], stacked))(h)
        return model.head(h)
    np.testing.assert_allclose(logits, layer_by_layer(model, tok), rtol=2e-5, atol=2e-5)
    # causal: changing the last token leaves the earlier positions' logits alone
    other = forward(model, tok.at[:, -1].set((tok[:, -1] + 1) % V))
    np.testing.assert_allclose(other[:, :-1], logits[:, :-1], rtol=1e-5, atol=1e-6)
    assert not np.allclose(other[:, -1], logits[:, -1])

    model.train()
    schedule = optax.warmup_cosine_decay_schedule(0.0, 1e-2, 1, 10)
    opt = nnx.Optimizer(model, optax.chain(optax.clip_by_global_norm(1.0),
                                           optax.adamw(schedule)), wrt=nnx.Param)
    metrics = nnx.MultiMetric(loss=nnx.metrics.Average("loss"))

    @nnx.jit
    def step(model, opt, metrics, tok):
        def loss_fn(model):
            lg = model(tok[:, :-1])
            return optax.softmax_cross_entropy_with_integer_labels(lg, tok[:, 1:]).mean()
        loss, grads = nnx.value_and_grad(loss_fn)(model)
        metrics.update(loss=loss)
        opt.update(model, grads)
        return loss

    def params():
        return [np.asarray(a) for a in jax.tree.leaves(nnx.state(model, nnx.Param))]
    before, losses = params(), []
    for _ in range(2):
        losses.append(float(step(model, opt, metrics, tok)))
        after = params()
        # the first step has learning rate 0 (warmup from 0): the weights move on the second
        assert all(np.array_equal(a, b) for a, b in zip(before, after)) == (len(losses) == 1)
    assert np.all(np.isfinite(losses)) and losses[0] != losses[1]  # new dropout masks
    np.testing.assert_allclose(float(metrics.compute()["loss"]), np.mean(losses), rtol=1e-6)
    assert "Block" in repr(nnx.graphdef(model))


def test_nnx_optimizer_with_partitioned_optax_state():
    # optax.partition/multi_transform (and muon, built on it) keep a NamedTuple holding a dict;
    # nnx updates it in place only if it knows dict is a pytree node: it asks
    # `type(x) in jax._src.tree_util._registry`, which lacked the built-in containers
    nnx = import_library("flax.nnx")
    optax = import_library("optax")
    import jax
    import jax.numpy as jnp

    assert all(t in jax._src.tree_util._registry for t in (dict, list, tuple, type(None)))
    model = nnx.Linear(3, 2, rngs=nnx.Rngs(0))
    kernel0 = np.asarray(model.kernel[...])
    labels = nnx.State({"kernel": "sgd", "bias": "frozen"})
    tx = optax.multi_transform({"sgd": optax.sgd(0.1), "frozen": optax.set_to_zero()},
                               lambda params: labels)
    opt = nnx.Optimizer(model, tx, wrt=nnx.Param)
    x = np.random.RandomState(0).randn(4, 3).astype(np.float32)

    @nnx.jit
    def step(model, opt):
        grads = nnx.grad(lambda m: jnp.sum(m(x) ** 2))(model)
        opt.update(model, grads)

    step(model, opt)
    out0 = x @ kernel0  # the bias starts at zero and stays frozen
    np.testing.assert_allclose(model.kernel[...], kernel0 - 0.1 * (x.T @ (2 * out0)), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_array_equal(model.bias[...], np.zeros(2))


def test_nnx_sharded_parameters_trained_on_a_mesh():
    # nnx's sharding annotations on an Auto-axes mesh: flax.core.spmd asks the abstract mesh's
    # axis types, constrains values to NamedSharding(abstract mesh, spec), and the model adds
    # Variables to tracers (`x @ self.w1 + self.b1`); losses against the NumPy reference
    nnx = import_library("flax.nnx")
    optax = import_library("optax")
    import jax
    import jax.numpy as jnp
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

    from tests.ecosystem import numpy_reference as ref

    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    init = nnx.initializers.lecun_normal()

    class MLP(nnx.Module):
        def __init__(self, rngs):
            self.w1 = nnx.Param(init(rngs.params(), (3, 8)), out_sharding=(None, "model"))
            self.b1 = nnx.Param(jnp.zeros(8), out_sharding=("model",))
            self.w2 = nnx.Param(init(rngs.params(), (8, 1)), out_sharding=("model", None))
            self.b2 = nnx.Param(jnp.zeros(1))

        def __call__(self, x):
            h = jax.lax.with_sharding_constraint(jnp.tanh(x @ self.w1 + self.b1),
                                                 P("data", "model"))
            return h @ self.w2 + self.b2

    rng = np.random.RandomState(2)
    x = rng.randn(16, 3).astype(np.float32)
    y = np.sin(x.sum(1, keepdims=True)).astype(np.float32)
    with jax.set_mesh(mesh):
        model = MLP(nnx.Rngs(0))
        assert model.w1[...].sharding == NamedSharding(mesh, P(None, "model"))
        p_np = {k: np.asarray(getattr(model, k)[...]) for k in ("w1", "b1", "w2", "b2")}
        opt = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)
        xs = jax.device_put(x, NamedSharding(mesh, P("data", None)))

        @nnx.jit
        def step(model, opt):
            loss, grads = nnx.value_and_grad(lambda m: jnp.mean((m(xs) - y) ** 2))(model)
            opt.update(model, grads)
            return loss

        losses = [float(step(model, opt)) for _ in range(3)]
        assert model.w1[...].sharding.spec == P(None, "model")
    np.testing.assert_allclose(losses, ref.train(ref.adam(1e-2), p_np, x, y, 3), rtol=2e-5,
                               atol=1e-6)


def test_linen_lstm_scan_vmap_batchnorm_train_state():
    nn = import_library("flax.linen")
    optax = import_library("optax")
    import jax
    import jax.numpy as jnp
    from flax import serialization, traverse_util
    from flax.training import train_state

    ScanLSTM = nn.scan(nn.remat(nn.LSTMCell), variable_broadcast="params",
                       split_rngs={"params": False}, in_axes=1, out_axes=1)

    class Net(nn.Module):
        @nn.compact
        def __call__(self, x, train):
            x = nn.Dense(6, use_bias=False)(x)
            x = nn.BatchNorm(use_running_average=not train)(x)
            x = nn.Dropout(0.2, deterministic=not train)(x)
            cell = ScanLSTM(features=4, name="lstm")
            _, ys = cell(cell.initialize_carry(jax.random.PRNGKey(0), x[:, 0].shape), x)
            per_step = nn.vmap(nn.Dense, in_axes=1, out_axes=1, variable_axes={"params": 0},
                               split_rngs={"params": True})(3, name="heads")
            return per_step(ys).sum(-1)

    rng = np.random.RandomState(0)
    x = jnp.asarray(rng.randn(4, 3, 2).astype(np.float32))
    y = jnp.asarray(rng.randn(4, 3).astype(np.float32))
    net = Net()
    variables = jax.jit(net.init, static_argnames="train")({"params": jax.random.PRNGKey(1)},
                                                           x, train=False)
    params = variables["params"]
    assert params["heads"]["kernel"].shape == (3, 4, 3)  # one Dense per time step

    @jax.jit
    def step_by_step(variables, x):  # oracle: the LSTM cell stepped in a Python loop
        params = variables["params"]
        feats = nn.BatchNorm(use_running_average=True).apply(
            {"params": params["BatchNorm_0"],
             "batch_stats": variables["batch_stats"]["BatchNorm_0"]},
            x @ params["Dense_0"]["kernel"])
        cell = nn.LSTMCell(features=4)
        carry = cell.initialize_carry(jax.random.PRNGKey(0), feats[:, 0].shape)
        outs = []
        for t in range(3):
            carry, h = cell.apply({"params": params["lstm"]}, carry, feats[:, t])
            outs.append(h @ params["heads"]["kernel"][t] + params["heads"]["bias"][t])
        return jnp.stack(outs, 1).sum(-1)
    np.testing.assert_allclose(jax.jit(net.apply, static_argnames="train")(variables, x,
                                                                          train=False),
                               step_by_step(variables, x), rtol=1e-5, atol=1e-5)

    class State(train_state.TrainState):
        batch_stats: dict

    labels = traverse_util.path_aware_map(lambda p, _: "adam" if p[0] != "heads" else "sgd",
                                          params)
    tx = optax.MultiSteps(optax.multi_transform(
        {"adam": optax.adam(1e-2), "sgd": optax.sgd(1e-2)}, labels), every_k_schedule=2)
    state = State.create(apply_fn=net.apply, params=params, tx=tx,
                         batch_stats=variables["batch_stats"])

    @jax.jit
    def step(state, key):
        def loss_fn(p):
            pred, upd = state.apply_fn({"params": p, "batch_stats": state.batch_stats}, x,
                                       train=True, rngs={"dropout": key}, mutable=["batch_stats"])
            return jnp.mean((pred - y) ** 2), upd
        (loss, upd), g = jax.value_and_grad(loss_fn, has_aux=True)(state.params)
        return state.apply_gradients(grads=g).replace(batch_stats=upd["batch_stats"]), loss

    kernels = [np.asarray(state.params["lstm"]["hi"]["kernel"])]
    for k in jax.random.split(jax.random.PRNGKey(3), 2):
        state, loss = step(state, k)
        kernels.append(np.asarray(state.params["lstm"]["hi"]["kernel"]))
        assert np.isfinite(float(loss))
    # MultiSteps: the first step only accumulates, the second applies
    np.testing.assert_array_equal(kernels[1], kernels[0])
    assert not np.array_equal(kernels[2], kernels[1])
    assert not np.array_equal(state.batch_stats["BatchNorm_0"]["mean"],
                              variables["batch_stats"]["BatchNorm_0"]["mean"])
    back = serialization.from_bytes(state, serialization.to_bytes(state))
    for a, b in zip(jax.tree.leaves(state), jax.tree.leaves(back)):
        np.testing.assert_array_equal(a, b)


def test_linen_self_attention_decode_cache_equals_causal_pass():
    # flax's attention calls jnp.einsum(..., _dot_general=...) (pyjax's einsum lacked it)
    nn = import_library("flax.linen")
    import jax
    import jax.numpy as jnp

    class Causal(nn.Module):
        decode: bool = False

        @nn.compact
        def __call__(self, x):
            mask = None if self.decode else nn.make_causal_mask(jnp.ones(x.shape[:2]))
            return nn.MultiHeadDotProductAttention(
                num_heads=2, qkv_features=8, decode=self.decode, deterministic=True)(x, mask=mask)

    x = jax.random.normal(jax.random.PRNGKey(0), (2, 4, 8))
    params = Causal().init(jax.random.PRNGKey(1), x)["params"]
    full = jax.jit(Causal().apply)({"params": params}, x)
    cache = Causal(decode=True).init(jax.random.PRNGKey(1), x)["cache"]
    decode = jax.jit(lambda v, xt: Causal(decode=True).apply(v, xt, mutable=["cache"]))
    steps = []
    for t in range(4):  # one token at a time through the key/value cache
        y, upd = decode({"params": params, "cache": cache}, x[:, t:t + 1])
        cache = upd["cache"]
        steps.append(y)
    np.testing.assert_allclose(jnp.concatenate(steps, 1), full, rtol=1e-5, atol=1e-6)


def test_optax_lbfgs_with_zoom_linesearch_reaches_scipy_minimum():
    optax = import_library("optax")
    import jax
    import jax.numpy as jnp
    from scipy.optimize import minimize

    rng = np.random.RandomState(0)
    A, b = rng.randn(6, 4), rng.randn(6)

    def f(w):
        return jnp.sum((jnp.asarray(A, jnp.float32) @ w - b) ** 2) + 0.1 * jnp.sum(w ** 4)

    opt = optax.lbfgs()
    value_and_grad = optax.value_and_grad_from_state(f)

    @jax.jit
    def step(w, s):
        v, g = value_and_grad(w, state=s)
        u, s = opt.update(g, s, w, value=v, grad=g, value_fn=f)
        return optax.apply_updates(w, u), s

    w, s = jnp.zeros(4), opt.init(jnp.zeros(4))
    for _ in range(12):
        w, s = step(w, s)
    want = minimize(lambda w: np.sum((A @ w - b) ** 2) + 0.1 * np.sum(w ** 4), np.zeros(4),
                    method="BFGS", options={"gtol": 1e-10})
    np.testing.assert_allclose(float(f(w)), want.fun, rtol=1e-5)
    np.testing.assert_allclose(w, want.x, rtol=2e-3, atol=2e-3)
