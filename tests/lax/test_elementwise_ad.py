"""JVP and VJP rules of every elementwise primitive against central finite differences
(``check_grads``, float64), VJP against JVP (``<vjp(ct), t> == <ct, jvp(t)>``), and the
transposes of the linear ones against the dot-product identity ``<T(ct), t> == <ct, L(t)>``,
with the pairing ``Re(sum(a * b))``."""
import numpy as np
import pytest

import pyjax
import pyjax.lax as lax
from pyjax._src.core.rules import NOT_DIFFERENTIABLE
from pyjax._src.lax import elementwise as ew
from pyjax.test_util import check_grads

RNG = np.random.default_rng(7)
N = 4


def uniform(lo, hi, dtype=np.float64, shape=(N,)):
    x = RNG.uniform(lo, hi, size=shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.uniform(lo, hi, size=shape)
    return np.asarray(x, dtype)


def pair(a, b):
    return float(np.real(np.sum(np.asarray(a) * np.asarray(b))))


def check_jvp_fd(f, args, rtol=1e-6, atol=1e-8, eps=1e-6):
    """f's JVP and VJP at args against central differences (``check_grads``), and VJP vs the
    exact JVP along random directions."""
    # check_grads multiplies the tolerances by the output's size; undo that to keep them
    # per element.
    size = max(np.size(f(*args)), 1)
    check_grads(f, tuple(args), order=1, rtol=rtol / size, atol=atol / size, eps=eps)
    # <vjp(ct), t> == <ct, jvp(t)> to rounding: tighter than finite differences can check.
    tangents = [uniform(-1, 1, np.asarray(a).dtype, np.shape(a)) for a in args]
    out, t_out = pyjax.jvp(f, tuple(args), tuple(tangents))
    np.testing.assert_allclose(np.asarray(out), np.asarray(f(*args)), rtol=1e-12)
    _, vjp_fun = pyjax.vjp(f, *args)
    ct = uniform(-1, 1, np.asarray(out).dtype, np.shape(out))
    cts = vjp_fun(ct)
    lhs = sum(pair(c, t) for c, t in zip(cts, tangents))
    np.testing.assert_allclose(lhs, pair(ct, t_out), rtol=1e-9, atol=1e-10)


def check_transpose(f, x_example, ct_example):
    """linear_transpose(f) against <T(ct), x> == <ct, f(x)>."""
    x = uniform(-1, 1, np.asarray(x_example).dtype)
    ct = uniform(-1, 1, np.asarray(ct_example).dtype)
    (tx,) = pyjax.linear_transpose(f, x)(ct)
    np.testing.assert_allclose(pair(tx, x), pair(ct, f(x)), rtol=1e-10, atol=1e-12)


UNARY_DOMAINS = {
    "exp": (-2, 2), "exp2": (-2, 2), "log": (0.2, 3), "log1p": (-0.5, 3), "expm1": (-2, 2),
    "tanh": (-2, 2), "logistic": (-3, 3), "sin": (-3, 3), "cos": (-3, 3), "tan": (-1.2, 1.2),
    "asin": (-0.9, 0.9), "acos": (-0.9, 0.9), "atan": (-3, 3), "sinh": (-2, 2),
    "cosh": (-2, 2), "asinh": (-3, 3), "acosh": (1.2, 4), "atanh": (-0.9, 0.9),
    "sqrt": (0.2, 4), "rsqrt": (0.2, 4), "cbrt": (0.2, 4), "square": (-3, 3), "erf": (-2, 2),
    "erfc": (-2, 2), "erf_inv": (-0.9, 0.9), "lgamma": (0.3, 5), "digamma": (0.3, 5),
    "abs": (0.2, 3), "neg": (-3, 3),
}


@pytest.mark.parametrize("name", sorted(UNARY_DOMAINS))
def test_unary_jvp_vs_finite_differences(x64, name):
    fn = getattr(lax, name)
    check_jvp_fd(fn, [uniform(*UNARY_DOMAINS[name])])


@pytest.mark.parametrize("name", ["lgamma", "digamma", "cbrt", "abs"])
def test_unary_jvp_negative_arguments(x64, name):
    x = np.array([-0.6, -1.3, -2.4, -3.7])  # away from the poles of lgamma/digamma
    check_jvp_fd(getattr(lax, name), [x], rtol=1e-5)


@pytest.mark.parametrize("name", ["exp", "log", "sin", "cos", "tanh", "sqrt", "square", "neg",
                                  "tan", "atan", "sinh", "expm1", "log1p"])
def test_unary_jvp_complex_holomorphic(x64, name):
    check_jvp_fd(getattr(lax, name), [uniform(0.3, 1.2, np.complex128)])


@pytest.mark.parametrize("name", ["abs", "real", "imag", "conj"])
def test_complex_nonholomorphic(x64, name):
    check_jvp_fd(getattr(lax, name), [uniform(0.3, 1.2, np.complex128)])


BINARY = {
    "add": ((-2, 2), (-2, 2)), "sub": ((-2, 2), (-2, 2)), "mul": ((-2, 2), (-2, 2)),
    "div": ((-2, 2), (0.5, 2)), "rem": ((2.1, 2.9), (0.9, 1.0)), "atan2": ((-2, 2), (0.5, 2)),
    "pow": ((0.5, 2), (-1.5, 1.5)), "max": ((-2, 2), (-2, 2)), "min": ((-2, 2), (-2, 2)),
    "complex": ((-2, 2), (-2, 2)),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_jvp_vs_finite_differences(x64, name):
    dx, dy = BINARY[name]
    check_jvp_fd(getattr(lax, name), [uniform(*dx), uniform(*dy)])


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "atan2", "pow", "max"])
def test_binary_jvp_with_a_scalar_operand(x64, name):
    # rank-0 operands broadcast implicitly: their tangents broadcast, cotangents are summed
    x = np.float64(1.3)
    check_jvp_fd(getattr(lax, name), [x, uniform(0.5, 2)])
    check_jvp_fd(getattr(lax, name), [uniform(0.5, 2), x])


@pytest.mark.parametrize("name", ["add", "mul", "div", "sub"])
def test_binary_complex(x64, name):
    check_jvp_fd(getattr(lax, name), [uniform(0.5, 1.5, np.complex128),
                                      uniform(0.5, 1.5, np.complex128)])


def test_max_min_ties_split_the_tangent(x64):
    x = np.array([1.0, 2.0, 3.0])
    _, t = pyjax.jvp(lax.max, (x, x), (np.ones(3), np.zeros(3)))
    np.testing.assert_allclose(np.asarray(t), 0.5)
    _, t = pyjax.jvp(lax.min, (x, np.array([0.0, 5.0, 3.0])), (np.ones(3), np.zeros(3)))
    np.testing.assert_allclose(np.asarray(t), [0.0, 1.0, 0.5])


def test_pow_with_integer_exponent_and_zero_base(x64):
    check_jvp_fd(lambda x: lax.pow(x, np.int64(3)), [uniform(0.5, 2)])
    _, t = pyjax.jvp(lambda y: lax.pow(np.zeros(3), y), (np.array([1.5, 2.0, 3.0]),),
                     (np.ones(3),))
    np.testing.assert_array_equal(np.asarray(t), 0.0)  # log(0) replaced, as in JAX


@pytest.mark.parametrize("y", [0, 1, 2, 3, -2])
def test_integer_pow(x64, y):
    check_jvp_fd(lambda x: lax.integer_pow(x, y), [uniform(0.5, 2)])


def test_select_n_and_clamp(x64):
    which = np.array([True, False, True, False])
    check_jvp_fd(lambda a, b: lax.select_n(which, a, b), [uniform(-1, 1), uniform(-1, 1)])
    w3 = np.array([0, 2, 1, 2], np.int32)
    check_jvp_fd(lambda a, b, c: lax.select_n(w3, a, b, c),
                 [uniform(-1, 1), uniform(-1, 1), uniform(-1, 1)])
    x = np.array([-2.0, -0.5, 0.5, 2.0])
    check_jvp_fd(lambda lo, v, hi: lax.clamp(lo, v, hi), [np.float64(-1.0), x, np.float64(1.0)])
    check_jvp_fd(lambda lo, v, hi: lax.clamp(lo, v, hi),
                 [np.full(4, -1.0), x, np.full(4, 1.0)])


def test_conversions_and_identities(x64):
    check_jvp_fd(lambda x: lax.convert_element_type(x, np.complex128), [uniform(-1, 1)])
    check_jvp_fd(lambda x: lax.reduce_precision(x, 11, 52), [uniform(-1, 1)])
    check_jvp_fd(lambda x: ew.copy_p.bind(x), [uniform(-1, 1)])
    # float -> int: the tangent is a float0 zero
    _, t = pyjax.jvp(lambda x: lax.convert_element_type(x, np.int32), (uniform(-3, 3),),
                     (uniform(-1, 1),))
    assert t.dtype == pyjax.dtypes.float0


def test_float32_to_float64_round_trip_gradient(x64):
    g = pyjax.grad(lambda x: lax.convert_element_type(x, np.float64) ** 2)(np.float32(1.5))
    assert g.dtype == np.float32 and float(g) == 3.0


@pytest.mark.parametrize("name", sorted(ew._NOT_DIFFERENTIABLE))
def test_not_differentiable_ops_have_zero_tangents(x64, name):
    assert ew.prims[name].jvp is NOT_DIFFERENTIABLE
    if name in ("sign", "floor", "ceil", "round", "is_finite"):
        x = uniform(-3, 3) + 0.05
        _, t = pyjax.jvp(getattr(lax, name), (x,), (np.ones(N),))
        dt = np.asarray(t).dtype
        assert dt == pyjax.dtypes.float0 or not np.asarray(t).any()


def test_digamma_second_derivative_of_lgamma(x64):
    # d2/dx2 lgamma = trigamma: against SciPy, and both orders against central differences
    from scipy.special import polygamma
    x = np.array([0.4, 1.7, 3.2, -0.7])
    d2 = pyjax.grad(pyjax.grad(lambda v: lax.lgamma(v)))
    got = [float(d2(v)) for v in x]
    np.testing.assert_allclose(got, polygamma(1, x), rtol=1e-10)
    # check_grads multiplies the tolerances by the output's size
    check_grads(lax.lgamma, (x,), order=2, rtol=1e-6 / x.size, atol=1e-8 / x.size, eps=1e-5)


# ---- transposes of the linear primitives ----

@pytest.mark.parametrize("case", [
    ("neg", lambda x: lax.neg(x), np.float64, np.float64),
    ("add", lambda x: lax.add(x, x), np.float64, np.float64),
    ("sub", lambda x: lax.sub(x, lax.mul(x, 3.0)), np.float64, np.float64),
    ("mul", lambda x: lax.mul(np.arange(1.0, 5.0), x), np.float64, np.float64),
    ("div", lambda x: lax.div(x, np.arange(1.0, 5.0)), np.float64, np.float64),
    ("real", lax.real, np.complex128, np.float64),
    ("imag", lax.imag, np.complex128, np.float64),
    ("conj", lax.conj, np.complex128, np.complex128),
    ("conj_of_real", lax.conj, np.float64, np.complex128),
    ("complex", lambda x: lax.complex(x, lax.mul(x, 2.0)), np.float64, np.complex128),
    ("convert", lambda x: lax.convert_element_type(x, np.complex128), np.float64,
     np.complex128),
    ("convert_back", lambda x: lax.convert_element_type(x, np.float64), np.complex128,
     np.float64),
    ("reduce_precision", lambda x: lax.reduce_precision(x, 11, 52), np.float64, np.float64),
    ("copy", lambda x: ew.copy_p.bind(x), np.float64, np.float64),
    ("select_n", lambda x: lax.select_n(np.array([True, False, False, True]), x,
                                        lax.mul(x, 5.0)), np.float64, np.float64),
], ids=lambda c: c[0])
def test_linear_transposes_dot_product_identity(x64, case):
    _, f, din, dout = case
    check_transpose(f, np.zeros(N, din), np.zeros(N, dout))


def test_scalar_operand_cotangents_are_summed(x64):
    v = np.arange(1.0, 5.0)
    g = pyjax.grad(lambda s: lax.reduce_sum(lax.mul(s, v), (0,)))(2.0)
    assert float(g) == 10.0
    g = pyjax.grad(lambda s: lax.reduce_sum(lax.add(s, v), (0,)))(2.0)
    assert float(g) == 4.0


# The cases above, by primitive name (read by tests/lax/test_registry.py); a new elementwise
# primitive must join one of them.
JVP_TESTED = set(UNARY_DOMAINS) | set(BINARY) | {
    "real", "imag", "conj", "integer_pow", "select_n", "clamp", "convert_element_type",
    "reduce_precision", "copy"}
TRANSPOSE_TESTED = {"neg", "add", "sub", "real", "imag", "conj", "complex",
                    "convert_element_type", "reduce_precision", "copy"}


def test_every_differentiable_elementwise_primitive_is_checked():
    differentiable = {n for n, p in ew.prims.items() if p.jvp is not NOT_DIFFERENTIABLE}
    assert differentiable - JVP_TESTED == set()
    linear = {n for n, p in ew.prims.items() if p.linear}
    assert linear == TRANSPOSE_TESTED
