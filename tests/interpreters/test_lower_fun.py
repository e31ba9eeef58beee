"""``lower_fun``: a lowering rule written as a Python function of other primitives, traced by
the lowering driver on the operands' avals and inlined into the module being built.

The primitives here are declared by the test (their abstract_eval lives in this module, so the
registry completeness tests leave them out). Oracles: NumPy."""
import re

import numpy as np
import pytest

import pyjax
from pyjax import lax
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.rules import NOT_DIFFERENTIABLE, lower_fun
from pyjax._src.lax import batch_util as bu
from pyjax._src.lax import elementwise as ew

F32 = np.float32
RNG = np.random.default_rng(3)


def _same(x, **params):
    return x


# softplus(x) = log1p(exp(-|x|)) + max(x, 0): several ops, written with lax
def _softplus(x):
    return lax.add(lax.log1p(lax.exp(lax.neg(lax.abs(x)))), lax.max(x, lax.full_like(x, 0)))


softplus_p = Primitive("test_lf_softplus", abstract_eval=_same, lower=lower_fun(_softplus),
                       jvp=NOT_DIFFERENTIABLE, batch=bu.elementwise_rule())


# A loop unrolled at lowering time from a param: x * scale ** n by repeated multiplication.
def _scaled(x, *, n, scale):
    for _ in range(n):
        x = lax.mul(x, np.asarray(scale, x.dtype))
    return x


scaled_p = Primitive("test_lf_scaled", abstract_eval=_same, lower=lower_fun(_scaled),
                     jvp=NOT_DIFFERENTIABLE, batch=bu.elementwise_rule())


# Nested: its lowering binds softplus_p, whose lowering is itself a lower_fun.
def _twice_softplus(x):
    return lax.mul(softplus_p.bind(softplus_p.bind(x)), np.asarray(2, x.dtype))


nested_p = Primitive("test_lf_nested", abstract_eval=_same, lower=lower_fun(_twice_softplus),
                     jvp=NOT_DIFFERENTIABLE, batch=bu.elementwise_rule())


# Multiple results: (running sum, running max) of a vector, as two results.
def _sum_and_max_abstract_eval(x):
    return [x, x]


def _sum_and_max(x):
    return [lax.cumsum(x, 0), lax.cummax(x, 0)]


sum_max_p = Primitive("test_lf_sum_max", abstract_eval=_sum_and_max_abstract_eval,
                      lower=lower_fun(_sum_and_max, multiple_results=True),
                      multiple_results=True, jvp=NOT_DIFFERENTIABLE,
                      batch=lambda args, dims: (sum_max_p.bind(*args), [dims[0]] * 2))

# Constants captured: the function closes over a NumPy table (becomes a module constant).
TABLE = np.array([10.0, 20.0, 30.0], F32)


def _add_table(x):
    return lax.add(x, TABLE)


table_p = Primitive("test_lf_table", abstract_eval=_same, lower=lower_fun(_add_table),
                    jvp=NOT_DIFFERENTIABLE, batch=bu.elementwise_rule())


def _wrong_shape(x):
    return lax.reduce_sum(x, (0,))


wrong_p = Primitive("test_lf_wrong", abstract_eval=_same, lower=lower_fun(_wrong_shape),
                    jvp=NOT_DIFFERENTIABLE, batch=bu.elementwise_rule())


def np_softplus(x):
    return np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_composite_matches_numpy(jit):
    x = RNG.normal(size=(2, 3)).astype(F32) * 3
    f = (lambda v: softplus_p.bind(v))
    got = (pyjax.jit(f) if jit else f)(x)
    np.testing.assert_allclose(np.asarray(got), np_softplus(x), rtol=1e-6)


def test_inlined_into_the_module_text():
    x = np.ones((4,), F32)
    text = pyjax.jit(lambda v: softplus_p.bind(v)).lower(x).as_text()
    # the function's ops appear inline in @main, no call and no trace of the primitive's name
    for op in ("stablehlo.abs", "stablehlo.negate", "stablehlo.exponential",
               "stablehlo.log_plus_one", "stablehlo.maximum", "stablehlo.add"):
        assert op in text, op
    assert "func.call" not in text and "test_lf_softplus" not in text
    assert text.count("func.func") == 1


def test_params_reach_the_function():
    x = RNG.normal(size=(5,)).astype(F32)
    got = pyjax.jit(lambda v: scaled_p.bind(v, n=3, scale=2.0))(x)
    np.testing.assert_allclose(np.asarray(got), x * 8, rtol=1e-6)
    text = pyjax.jit(lambda v: scaled_p.bind(v, n=3, scale=2.0)).lower(x).as_text()
    assert text.count("stablehlo.multiply") == 3
    # another param value is another trace of the function, not a stale cached one
    np.testing.assert_allclose(np.asarray(scaled_p.bind(x, n=2, scale=3.0)), x * 9, rtol=1e-6)


def test_nested_lower_fun():
    x = RNG.normal(size=(3,)).astype(F32)
    want = 2 * np_softplus(np_softplus(x))
    np.testing.assert_allclose(np.asarray(nested_p.bind(x)), want, rtol=1e-6)
    text = pyjax.jit(lambda v: nested_p.bind(v)).lower(x).as_text()
    assert text.count("stablehlo.log_plus_one") == 2


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_multiple_results(jit):
    x = RNG.normal(size=(6,)).astype(F32)
    f = (lambda v: sum_max_p.bind(v))
    s, m = (pyjax.jit(f) if jit else f)(x)
    np.testing.assert_allclose(np.asarray(s), np.cumsum(x), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(m), np.maximum.accumulate(x))


def test_captured_constants():
    x = np.array([1.0, 2.0, 3.0], F32)
    np.testing.assert_array_equal(np.asarray(table_p.bind(x)), x + TABLE)
    text = pyjax.jit(lambda v: table_p.bind(v)).lower(x).as_text()
    # the table is a constant of the module (dense hex of its bytes)
    assert re.search(r'stablehlo.constant.*dense<"0x' + TABLE.tobytes().hex().upper(), text), text


def test_under_vmap_and_inside_other_primitives_bodies():
    x = RNG.normal(size=(4, 3)).astype(F32)
    got = pyjax.vmap(lambda v: softplus_p.bind(v))(x)
    np.testing.assert_allclose(np.asarray(got), np_softplus(x), rtol=1e-6)
    # inside a scan body: lowered into the loop's region
    def step(c, v):
        return c, softplus_p.bind(v)
    _, ys = lax.scan(step, np.float32(0), x)
    np.testing.assert_allclose(np.asarray(ys), np_softplus(x), rtol=1e-6)


def test_result_disagreeing_with_abstract_eval_is_an_error():
    with pytest.raises(TypeError, match="lower_fun.*abstract_eval says f32\\[3\\]"):
        pyjax.jit(lambda v: wrong_p.bind(v))(np.ones(3, F32))


def test_closing_over_a_traced_value_is_an_error():
    def f(x):
        # scatter_apply's update function is a lower_fun: it is traced at lowering time
        return lax.scatter_apply(np.zeros(3, F32), np.array([[0]], np.int32),
                                 lambda v: v + x, lax.ScatterDimensionNumbers((), (0,), (0,)),
                                 update_shape=(1,))
    # the tracer of the finished jit trace is caught where the lowering trace reads it
    with pytest.raises(pyjax.errors.UnexpectedTracerError):
        pyjax.jit(f)(np.float32(1))


def test_lax_composites_written_with_lower_fun():
    # integer_pow (square-and-multiply) and exp2 are lower_fun rules in lax
    assert ew.integer_pow_p.lower.fn is not None and ew.exp2_p.lower.fn is not None
    x = RNG.uniform(0.5, 2, size=(5,)).astype(F32)
    for y in (0, 1, 2, 7, -3):
        np.testing.assert_allclose(np.asarray(lax.integer_pow(x, y)),
                                   x.astype(np.float64) ** y, rtol=2e-6)
    text = pyjax.jit(lambda v: lax.integer_pow(v, 7)).lower(x).as_text()
    assert text.count("stablehlo.multiply") == 4  # x^2, x^4, x*x^2, *x^4
    assert ShapedArray((5,), F32) == ew.integer_pow_p.abstract_eval(ShapedArray((5,), F32), y=7)
