"""checkpoint / remat: same derivatives, with the recomputation visible in the Jaxpr according
to the policy; static_argnums; lowering with an optimization barrier."""
import math

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, check_jaxpr
from pyjax.test_util import check_grads

policies = pyjax.checkpoint_policies


def names(jaxpr):
    j = jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr
    return [e.primitive.name for e in j.eqns]


def checkpoint_eqns(jaxpr):
    j = jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr
    out = []
    for e in j.eqns:
        if e.primitive.name == "checkpoint":
            out.append(e)
        for p in e.params.values():
            if isinstance(p, (Jaxpr, ClosedJaxpr)):
                out += checkpoint_eqns(p)
    return out


def f(x):
    return jnp.sin(jnp.sin(x))


def df(x):
    return math.cos(math.sin(x)) * math.cos(x)


def test_values_match_the_plain_function():
    fc = pyjax.checkpoint(f)
    assert float(fc(0.7)) == pytest.approx(math.sin(math.sin(0.7)))
    assert float(pyjax.grad(fc)(0.7)) == pytest.approx(df(0.7), rel=1e-6)
    assert float(pyjax.jit(pyjax.grad(fc))(0.7)) == pytest.approx(df(0.7), rel=1e-6)
    assert float(pyjax.grad(pyjax.jit(fc))(0.7)) == pytest.approx(df(0.7), rel=1e-6)
    assert pyjax.remat is pyjax.checkpoint
    # second order through the checkpoint: the closed form, and both modes against central
    # differences (float32: a step of 1e-3 keeps rounding and truncation errors near 1e-5)
    d2f = -math.sin(math.sin(0.7)) * math.cos(0.7) ** 2 - math.cos(math.sin(0.7)) * math.sin(0.7)
    assert float(pyjax.grad(pyjax.grad(fc))(0.7)) == pytest.approx(d2f, rel=1e-5)
    check_grads(fc, (0.7,), order=2, rtol=1e-4, atol=1e-6, eps=1e-3)


def test_recomputation_is_visible_in_the_jaxpr():
    jaxpr = pyjax.make_jaxpr(pyjax.grad(pyjax.checkpoint(f)))(0.7)
    check_jaxpr(jaxpr.jaxpr)
    (bwd,) = checkpoint_eqns(jaxpr)
    inner = names(bwd.params["jaxpr"])
    # the backward pass recomputes sin(x) and the cosines from the saved input
    assert inner.count("sin") == 1 and inner.count("cos") == 2
    assert bwd.params["differentiated"] is True
    # the forward pass at the top level saved nothing but the input
    assert names(jaxpr).count("cos") == 0
    # without checkpoint, nothing is recomputed
    plain = pyjax.make_jaxpr(pyjax.grad(f))(0.7)
    assert not checkpoint_eqns(plain) and names(plain).count("sin") == 2


def test_everything_saveable_recomputes_nothing():
    fc = pyjax.checkpoint(f, policy=policies.everything_saveable)
    jaxpr = pyjax.make_jaxpr(pyjax.grad(fc))(0.7)
    for e in checkpoint_eqns(jaxpr):
        assert "sin" not in names(e.params["jaxpr"]) and "cos" not in names(e.params["jaxpr"])
    assert float(pyjax.grad(fc)(0.7)) == pytest.approx(df(0.7), rel=1e-6)


def _layer(w, x):
    return jnp.sin(w @ x)


def test_dots_saveable():
    w = np.arange(6.0, dtype=np.float32).reshape(2, 3) / 10
    x = np.ones(3, np.float32)
    loss = lambda pol: lambda w: jnp.sum(pyjax.checkpoint(_layer, policy=pol)(w, x))  # noqa
    for pol, recomputes_dot in [(policies.dots_saveable, False),
                                (policies.nothing_saveable, True),
                                (policies.dots_with_no_batch_dims_saveable, False)]:
        jaxpr = pyjax.make_jaxpr(pyjax.grad(loss(pol)))(w)
        inner = [n for e in checkpoint_eqns(jaxpr) for n in names(e.params["jaxpr"])]
        # one dot_general is the transposed (backward) one; a second is the recomputation
        assert inner.count("dot_general") == 1 + recomputes_dot, pol.__name__
        assert "cos" in inner  # sin's derivative is recomputed either way
        np.testing.assert_allclose(np.asarray(pyjax.grad(loss(pol))(w)),
                                   np.outer(np.cos(w @ x), x), rtol=1e-6)


def test_dots_with_batch_dims_are_not_saved():
    def batched(a, b):
        return jnp.sin(jnp.einsum("bij,bjk->bik", a, b))
    a = np.ones((2, 3, 4), np.float32) * 0.1
    b = np.ones((2, 4, 5), np.float32) * 0.2
    g = pyjax.grad(lambda a: jnp.sum(pyjax.checkpoint(
        batched, policy=policies.dots_with_no_batch_dims_saveable)(a, b)))
    inner = [n for e in checkpoint_eqns(pyjax.make_jaxpr(g)(a))
             for n in names(e.params["jaxpr"])]
    assert inner.count("dot_general") == 2  # the batched dot is recomputed
    expected = pyjax.grad(lambda a: jnp.sum(batched(a, b)))(a)
    np.testing.assert_allclose(np.asarray(g(a)), np.asarray(expected), rtol=1e-6)


def test_static_argnums():
    def g(x, n):
        for _ in range(n):  # Python control flow on the static argument
            x = jnp.sin(x)
        return x
    gc = pyjax.checkpoint(g, static_argnums=(1,))
    for n in (1, 3):
        expected = pyjax.grad(g)(0.5, n)
        assert float(pyjax.grad(gc)(0.5, n)) == pytest.approx(float(expected), rel=1e-6)
    jaxpr = pyjax.make_jaxpr(pyjax.grad(gc), static_argnums=1)(0.5, 3)
    (bwd,) = checkpoint_eqns(jaxpr)
    assert names(bwd.params["jaxpr"]).count("sin") == 2  # recompute x1, x2 (not x3)


def test_lowering_has_an_optimization_barrier():
    text = pyjax.jit(pyjax.grad(pyjax.checkpoint(f))).lower(0.7).as_text()
    assert "stablehlo.optimization_barrier" in text
    text = pyjax.jit(pyjax.checkpoint(f)).lower(0.7).as_text()
    assert "optimization_barrier" not in text  # not differentiated: nothing to protect


def test_checkpointed_mlp_layers_grad_matches():
    rng = np.random.default_rng(0)
    ws = [rng.normal(size=(5, 5)).astype(np.float32) / 3 for _ in range(3)]
    x = rng.normal(size=(4, 5)).astype(np.float32)

    def net(ws, x, remat):
        layer = lambda w, h: jnp.tanh(h @ w)  # noqa: E731
        if remat:
            layer = pyjax.checkpoint(layer)
        for w in ws:
            x = layer(w, x)
        return jnp.sum(x ** 2)
    g1 = pyjax.grad(net)(ws, x, True)
    g2 = pyjax.grad(net)(ws, x, False)
    for a, b in zip(g1, g2):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


def test_vmap_and_checkpoint():
    xs = np.arange(3.0, dtype=np.float32)
    fc = pyjax.checkpoint(f)
    expected = np.cos(np.sin(xs)) * np.cos(xs)
    np.testing.assert_allclose(np.asarray(pyjax.vmap(pyjax.grad(fc))(xs)), expected, rtol=1e-6)
    g = pyjax.grad(lambda x: jnp.sum(pyjax.vmap(fc)(x)))(xs)
    np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-6)
    jaxpr = pyjax.make_jaxpr(pyjax.grad(lambda x: jnp.sum(pyjax.vmap(fc)(x))))(xs)
    assert checkpoint_eqns(jaxpr)  # the recomputation survives vmap


def test_checkpoint_inside_jit_under_grad_recomputes_in_the_backward_call():
    g = pyjax.checkpoint(lambda x: jnp.sin(jnp.sin(x)) * x)
    f = pyjax.jit(lambda x: g(x) * 2.0)
    x = 0.5
    want = 2 * (math.cos(math.sin(x)) * math.cos(x) * x + math.sin(math.sin(x)))
    assert math.isclose(float(pyjax.grad(f)(x)), want, rel_tol=1e-6)
    jaxpr = pyjax.make_jaxpr(pyjax.grad(f))(x)
    backward = jaxpr.eqns[-1].params["jaxpr"].jaxpr
    remat = [e for e in backward.eqns if e.primitive.name == "checkpoint"]
    assert len(remat) == 1 and remat[0].params["differentiated"]
    assert "sin" in [e.primitive.name for e in remat[0].params["jaxpr"].eqns]  # recomputed


# Read by tests/lax/test_registry.py: lowering and gradients against the unchecked function.
TESTED_PRIMITIVES = {"checkpoint"}
JVP_TESTED = {"checkpoint"}
