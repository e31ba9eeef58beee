"""lax.cond / lax.switch: results eagerly and under jit (oracle: Python if/else and NumPy),
pytrees and closures, the Jaxpr and the lowered StableHLO, derivatives (oracle: finite
differences, ``check_grads``), vmap with unbatched and batched predicates (oracle: a Python
loop), errors."""
import math

import numpy as np
import pytest

import pyjax
import pyjax.lax as lax
import pyjax.numpy as jnp
from pyjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, check_jaxpr
from pyjax.test_util import check_grads


def eqn_names(jaxpr, deep=False):
    j = jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr
    out = []
    for e in j.eqns:
        out.append(e.primitive.name)
        if deep:
            for p in e.params.values():
                subs = p if isinstance(p, tuple) else (p,)
                for s in subs:
                    if isinstance(s, (Jaxpr, ClosedJaxpr)):
                        out += eqn_names(s, deep)
    return out


def check_deep(jaxpr):
    """check_jaxpr on ``jaxpr`` and on every branch of its conds (recursively)."""
    j = jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr
    check_jaxpr(j)
    for e in j.eqns:
        for p in e.params.values():
            for s in (p if isinstance(p, tuple) else (p,)):
                if isinstance(s, (Jaxpr, ClosedJaxpr)):
                    check_deep(s)


def f(p, x):
    return lax.cond(p, lambda x: jnp.sin(x) * x, lambda x: jnp.cos(x) + x * x, x)


def f_np(p, x):
    return math.sin(x) * x if p else math.cos(x) + x * x


BRANCHES = [lambda x: x + 1.0, lambda x: x * x, lambda x: jnp.sin(x)]
BRANCHES_NP = [lambda x: x + 1.0, lambda x: x * x, math.sin]


def g(i, x):
    return lax.switch(i, BRANCHES, x)


def check_f32(f, args, order=1, modes=("fwd", "rev"), rtol=1e-4):
    """f's derivatives against central differences of f in float32: the step of 1e-3 keeps
    rounding error (~1e-7 / 1e-3) and truncation error (~1e-3^2) under ``rtol``."""
    check_grads(f, args, order=order, modes=modes, rtol=rtol, atol=1e-5, eps=1e-3)


# ---- values ----

@pytest.mark.parametrize("p", [True, False])
def test_cond_eager_and_jit(p):
    assert float(f(p, 0.7)) == pytest.approx(f_np(p, 0.7), rel=1e-6)
    assert float(pyjax.jit(f)(p, 0.7)) == pytest.approx(f_np(p, 0.7), rel=1e-6)
    # the predicate may be an array, a traced value or a number (compared with 0)
    assert float(f(jnp.array(p), 0.7)) == pytest.approx(f_np(p, 0.7), rel=1e-6)
    assert float(f(int(p) * 3, 0.7)) == pytest.approx(f_np(p, 0.7), rel=1e-6)
    assert float(pyjax.jit(f)(float(p) * 0.5, 0.7)) == pytest.approx(f_np(p, 0.7), rel=1e-6)


def test_switch_eager_and_jit_clamps_the_index():
    for i, expect in [(-1, 0), (0, 0), (1, 1), (2, 2), (5, 2)]:
        want = BRANCHES_NP[expect](0.7)
        assert float(g(i, 0.7)) == pytest.approx(want, rel=1e-6)
        assert float(pyjax.jit(g)(i, 0.7)) == pytest.approx(want, rel=1e-6)
        assert float(g(jnp.array(i), 0.7)) == pytest.approx(want, rel=1e-6)


def test_pytrees_in_and_out_and_several_operands():
    def h(p, d, y):
        return lax.cond(p, lambda d, y: {"s": d["a"] + d["b"], "t": (y * 2, d["a"])},
                        lambda d, y: {"s": d["a"] - d["b"], "t": (y, d["b"])}, d, y)
    d = {"a": np.arange(3, dtype=np.float32), "b": np.ones(3, np.float32)}
    y = np.int32(4)
    for p in (True, False):
        for fn in (h, pyjax.jit(h)):
            out = fn(p, d, y)
            np.testing.assert_allclose(out["s"], d["a"] + d["b"] if p else d["a"] - d["b"])
            assert int(out["t"][0]) == (8 if p else 4)
            assert out["t"][0].dtype == np.int32
            np.testing.assert_allclose(out["t"][1], d["a"] if p else d["b"])
    # the `operand=` keyword
    assert float(lax.cond(True, lambda x: x + 1, lambda x: x, operand=1.0)) == 2.0
    assert float(lax.switch(1, BRANCHES, operand=3.0)) == 9.0


def test_closures_and_zero_operand_branches():
    w = jnp.array([1.0, 2.0, 3.0])

    def h(p, x):
        return lax.cond(p, lambda: w * x, lambda: w + x)
    for p in (True, False):
        np.testing.assert_allclose(pyjax.jit(h)(p, 2.0), [2, 4, 6] if p else [3, 4, 5])
        np.testing.assert_allclose(h(p, 2.0), [2, 4, 6] if p else [3, 4, 5])
    # a single branch: switch just calls it
    assert float(lax.switch(7, [lambda x: x * 3], 2.0)) == 6.0


def test_weak_types_are_branch_zeros():
    # JAX 0.10.2 (observed): cond's outputs take branch 0's weak types (cond's false_fun,
    # switch's first branch) whichever branch runs; the dtypes must agree
    out = lax.cond(True, lambda: 1.0, lambda: 2.0)
    assert out.weak_type and float(out) == 1.0
    out = lax.cond(False, lambda: 1.0, lambda: jnp.float32(2.0))
    assert not out.weak_type and float(out) == 2.0
    strong = jnp.float32(1.0)
    out = lax.cond(True, lambda c: c + strong, lambda c: c, 0.5)
    assert out.weak_type and float(out) == 1.5
    out = lax.cond(False, lambda c: c, lambda c: jnp.asarray(2.0), strong)
    assert out.weak_type and float(out) == 2.0
    out = lax.switch(1, [lambda c: c, lambda c: c + strong], 0.5)
    assert out.weak_type and float(out) == 1.5
    out = lax.switch(0, [lambda c: c + strong, lambda c: c], 0.5)
    assert not out.weak_type and float(out) == 1.5


def test_nested_cond():
    def h(p, q, x):
        return lax.cond(p, lambda x: lax.cond(q, jnp.sin, jnp.cos, x), lambda x: -x, x)
    for p in (True, False):
        for q in (True, False):
            want = (math.sin(0.3) if q else math.cos(0.3)) if p else -0.3
            assert float(pyjax.jit(h)(p, q, 0.3)) == pytest.approx(want, rel=1e-6)
            check_f32(lambda x: h(p, q, x), (0.3,), modes=("rev",), rtol=1e-3)


# ---- Jaxpr and lowering ----

def test_make_jaxpr_shows_one_cond_with_its_branches():
    jaxpr = pyjax.make_jaxpr(f)(True, 0.7)
    check_deep(jaxpr)
    assert eqn_names(jaxpr).count("cond") == 1
    (eqn,) = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "cond"]
    assert len(eqn.params["branches"]) == 2
    text = str(jaxpr)
    assert "cond[branches=(" in text and "sin" in text and "cos" in text
    # false_fun is branch 0
    assert "cos" in str(eqn.params["branches"][0]) and "sin" in str(eqn.params["branches"][1])
    sj = pyjax.make_jaxpr(g)(1, 0.7)
    assert "clamp" in eqn_names(sj) and eqn_names(sj).count("cond") == 1
    (eqn,) = [e for e in sj.jaxpr.eqns if e.primitive.name == "cond"]
    assert len(eqn.params["branches"]) == 3


def test_lowering_uses_stablehlo_case():
    text = pyjax.jit(f).lower(True, 0.7).as_text()
    assert "stablehlo.case" in text
    assert text.count("stablehlo.return") == 2
    assert pyjax.jit(g).lower(1, 0.7).as_text().count("stablehlo.return") == 3


# ---- differentiation ----

@pytest.mark.parametrize("p", [True, False])
def test_grad_against_finite_differences(p):
    assert float(f(p, 0.7)) == pytest.approx(f_np(p, 0.7), rel=1e-6)
    # first and second order, forward and reverse mode, eagerly and through jit
    check_f32(lambda x: f(p, x), (0.7,))
    # second order to 1e-3 (float32 differences of derivatives); jit: fewer compilations
    check_f32(pyjax.jit(lambda x: f(p, x)), (0.7,), order=2, rtol=1e-3)
    want = float(pyjax.grad(f, argnums=1)(p, 0.7))
    assert float(pyjax.jit(pyjax.grad(f, argnums=1))(p, 0.7)) == pytest.approx(want, rel=1e-6)
    # grad of grad against the closed form
    s, c = math.sin(0.7), math.cos(0.7)
    assert float(pyjax.grad(pyjax.grad(f, argnums=1), argnums=1)(p, 0.7)) == pytest.approx(
        2 * c - 0.7 * s if p else 2 - c, rel=1e-5)


def test_grad_of_switch():
    for i in range(3):
        assert float(g(i, 0.7)) == pytest.approx(BRANCHES_NP[i](0.7), rel=1e-6)
        check_f32(lambda x: g(i, x), (0.7,), modes=("rev",))
        want = float(pyjax.grad(g, argnums=1)(i, 0.7))
        assert float(pyjax.jit(pyjax.grad(g, argnums=1))(i, 0.7)) == pytest.approx(want,
                                                                                 rel=1e-6)


def test_grad_through_closures_and_pytrees():
    def h(p, x):
        return lax.cond(p, lambda: x * 2.0, lambda: x)
    assert float(pyjax.grad(h, argnums=1)(True, 3.0)) == 2.0
    assert float(pyjax.grad(h, argnums=1)(False, 3.0)) == 1.0

    def k(p, d):
        out = lax.cond(p, lambda d: (d["a"] * d["b"], d["a"]),
                       lambda d: (d["a"] + 0.0, jnp.zeros(())), d)
        return out[0] + out[1] * 3.0
    gr = pyjax.grad(k, argnums=1)(True, {"a": 2.0, "b": 5.0})
    assert float(gr["a"]) == 8.0 and float(gr["b"]) == 2.0
    gr = pyjax.grad(k, argnums=1)(False, {"a": 2.0, "b": 5.0})
    assert float(gr["a"]) == 1.0 and float(gr["b"]) == 0.0
    # only one branch depends on a closed-over value; the other has a zero derivative
    w = 1.5
    gw = pyjax.grad(lambda w, p: lax.cond(p, lambda x: x * w, lambda x: x, 2.0))
    assert float(gw(w, True)) == 2.0 and float(gw(w, False)) == 0.0


def test_linearize_stages_the_tangent_cond():
    jaxpr = pyjax.make_jaxpr(pyjax.grad(f, argnums=1))(True, 0.7)
    check_deep(jaxpr)
    # the known cond (primal + residuals) and the transposed one
    assert eqn_names(jaxpr).count("cond") == 2


def test_branches_with_different_residuals():
    def r(p, x, y):
        return lax.cond(p, lambda x, y: jnp.sin(x) * jnp.exp(y) * jnp.ones(3),
                        lambda x, y: jnp.cos(x * y) * jnp.ones(3), x, y)

    def r_np(p, x, y):
        return 3 * (math.sin(x) * math.exp(y) if p else math.cos(x * y))

    loss = lambda p: lambda x, y: jnp.sum(r(p, x, y))  # noqa: E731
    for p in (True, False):
        assert float(loss(p)(0.3, 0.4)) == pytest.approx(r_np(p, 0.3, 0.4), rel=1e-6)
        check_f32(loss(p), (0.3, 0.4), modes=("rev",), rtol=1e-3)
        jaxpr = pyjax.make_jaxpr(pyjax.grad(loss(p), argnums=(0, 1)))(0.3, 0.4)
        check_deep(jaxpr)
        (known, _) = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "cond"]
        # residuals are shared between the branches by type: 4 scalars and 1 vector at most
        assert len(known.outvars) <= 1 + 5
    h = pyjax.hessian(lambda v: jnp.sum(r(True, v[0], v[1])))(jnp.array([0.3, 0.4]))
    s, c, e = math.sin(0.3), math.cos(0.3), math.exp(0.4)
    np.testing.assert_allclose(h, 3 * np.array([[-s * e, c * e], [c * e, s * e]]), rtol=1e-5)


# ---- vmap ----

def test_vmap_with_unbatched_predicate_stays_a_cond():
    xs = np.linspace(-1, 1, 4).astype(np.float32)
    for p in (True, False):
        out = pyjax.vmap(f, in_axes=(None, 0))(p, xs)
        np.testing.assert_allclose(out, [f_np(p, float(x)) for x in xs], rtol=1e-5)
    jaxpr = pyjax.make_jaxpr(pyjax.vmap(f, in_axes=(None, 0)))(True, xs)
    check_deep(jaxpr)
    assert "cond" in eqn_names(jaxpr) and "select_n" not in eqn_names(jaxpr)
    # a branch that ignores the batched operand still gives batched outputs
    h = pyjax.vmap(lambda x: lax.cond(True, lambda x: x * 2.0, lambda x: 1.0, x))
    np.testing.assert_allclose(h(xs), xs * 2)


def test_vmap_with_batched_predicate_selects():
    ps = np.array([True, False, False, True])
    xs = np.linspace(-1, 1, 4).astype(np.float32)
    out = pyjax.vmap(f)(ps, xs)
    np.testing.assert_allclose(out, [f_np(p, float(x)) for p, x in zip(ps, xs)], rtol=1e-5)
    jaxpr = pyjax.make_jaxpr(pyjax.vmap(f))(ps, xs)
    check_deep(jaxpr)
    assert "select_n" in eqn_names(jaxpr) and "cond" not in eqn_names(jaxpr)
    idx = np.array([-1, 0, 1, 2, 5], np.int32)
    xs5 = np.linspace(0.1, 0.9, 5).astype(np.float32)
    out = pyjax.vmap(g)(idx, xs5)
    want = [BRANCHES_NP[min(max(i, 0), 2)](float(x)) for i, x in zip(idx, xs5)]
    np.testing.assert_allclose(out, want, rtol=1e-5)


def test_grad_of_vmap_and_vmap_of_grad():
    ps = np.array([True, False, True])
    xs = np.array([0.3, 0.5, 0.9], np.float32)
    # the derivatives of a sum of f over the examples: each example's derivative
    summed = lambda xs: jnp.sum(pyjax.vmap(f)(ps, xs))  # noqa: E731
    check_f32(summed, (xs,), modes=("rev",), rtol=1e-3)
    want = [float(pyjax.grad(f, argnums=1)(p, x)) for p, x in zip(ps, xs)]
    np.testing.assert_allclose(pyjax.jit(pyjax.grad(summed))(xs), want, rtol=1e-6)
    np.testing.assert_allclose(pyjax.vmap(pyjax.grad(f, argnums=1))(ps, xs), want, rtol=1e-6)
    summed_u = lambda xs: jnp.sum(pyjax.vmap(f, (None, 0))(True, xs))  # noqa: E731
    check_f32(summed_u, (xs,), modes=("rev",), rtol=1e-3)
    np.testing.assert_allclose(pyjax.jit(pyjax.grad(summed_u))(xs),
                               [float(pyjax.grad(f, argnums=1)(True, x)) for x in xs],
                               rtol=1e-6)
    # a batched predicate does not leak NaN derivatives from the branch not taken
    h = pyjax.vmap(lambda p, x: lax.cond(p, jnp.sqrt, lambda x: x, x))
    gr = pyjax.grad(lambda xs: jnp.sum(h(np.array([True, False]), xs)))(
        np.array([4.0, -1.0], np.float32))
    np.testing.assert_allclose(gr, [0.25, 1.0])


# ---- errors ----

def test_branch_output_type_errors():
    with pytest.raises(TypeError, match="dtypes do not match"):
        lax.cond(True, lambda x: x, lambda x: x.astype(np.int32), jnp.ones(3))
    with pytest.raises(TypeError, match=r"shapes do not match"):
        lax.cond(True, lambda x: x, lambda x: x[:2], jnp.ones(3))
    with pytest.raises(TypeError, match=r"\['b'\]"):
        lax.cond(True, lambda: {"a": 1.0, "b": jnp.ones(2)},
                 lambda: {"a": 1.0, "b": jnp.ones(3)})
    with pytest.raises(TypeError, match="pytree structure"):
        lax.cond(True, lambda: (1.0, 2.0), lambda: 1.0)
    with pytest.raises(TypeError, match="branch 2"):
        lax.switch(0, [lambda: 1.0, lambda: 1.0, lambda: jnp.ones(2)])


def test_predicate_and_argument_errors():
    with pytest.raises(TypeError, match=r"Pred must be a scalar, got .* of shape \(2,\)"):
        lax.cond(jnp.array([True, False]), lambda: 1.0, lambda: 2.0)
    with pytest.raises(TypeError, match="Pred must be a scalar"):
        lax.cond([True], lambda: 1.0, lambda: 2.0)
    with pytest.raises(TypeError, match="Pred type must be either boolean or number"):
        lax.cond(jnp.array(1j), lambda: 1.0, lambda: 2.0)
    with pytest.raises(TypeError, match="should be callable"):
        lax.cond(True, 1.0, lambda: 2.0)
    with pytest.raises(ValueError, match="Empty branch sequence"):
        lax.switch(0, [])
    with pytest.raises(TypeError, match="callables"):
        lax.switch(0, [lambda: 1.0, 2.0])
    with pytest.raises(TypeError, match="Index type must be an integer"):
        lax.switch(1.0, BRANCHES, 1.0)
    with pytest.raises(TypeError, match="Branch index must be scalar"):
        lax.switch(np.array([0, 1]), BRANCHES, 1.0)


def test_older_per_branch_operand_form():
    # cond(pred, true_operand, true_fun, false_operand, false_fun): JAX 0.10.2 still accepts
    # it (cond(True, 1., f, 2., g) gave f(1.)); numpyro's NUTS calls it under jit
    def pick(p):
        return lax.cond(p, jnp.float32(1.0), lambda x: x + 1, jnp.float32(2.0), lambda x: x * 10)
    assert float(pick(True)) == 2.0 and float(pick(False)) == 20.0
    assert float(pyjax.jit(pick)(jnp.array(False))) == 20.0


# Read by tests/lax/test_registry.py.
TESTED_PRIMITIVES = {"cond"}
JVP_TESTED = {"cond"}  # test_grad_against_finite_differences
