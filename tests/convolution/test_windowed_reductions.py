"""reduce_window (sum/max/min and a user computation) against a direct NumPy loop
(tests/convolution/reference.py); pooling gradients against finite differences; vmap against a
loop; the max-pooling gradient primitives' transposes against the dot-product identity.
"""
import importlib.util
import pathlib

import numpy as np
import pytest

import pyjax
import pyjax.lax as lax
from pyjax.test_util import check_grads

_spec = importlib.util.spec_from_file_location(
    "conv_reference", pathlib.Path(__file__).with_name("reference.py"))
ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ref)

MONOIDS = {"reduce_window_sum", "reduce_window_max", "reduce_window_min"}
GRADIENT_PRIMS = {"select_and_gather_add", "select_and_scatter_add"}
TESTED_PRIMITIVES = MONOIDS | GRADIENT_PRIMS | {"reduce_window"}
JVP_TESTED = MONOIDS | GRADIENT_PRIMS | {"reduce_window"}
TRANSPOSE_TESTED = {"reduce_window_sum"} | GRADIENT_PRIMS
BATCH_TESTED = MONOIDS | GRADIENT_PRIMS | {"reduce_window"}

RNG = np.random.default_rng(0)


def distinct(*shape, dtype=np.float32):
    """Values far enough apart that max/min choices don't flip under finite differences."""
    n = int(np.prod(shape))
    return ((RNG.permutation(n) - n / 2) * 0.37).reshape(shape).astype(dtype)


# (name, shape, window, strides, padding, base_dilation, window_dilation)
CASES = [
    ("pool-2x2", (2, 6, 5, 3), (1, 2, 2, 1), (1, 2, 2, 1), "SAME", None, None),
    ("overlap-valid", (4, 7), (3, 2), (1, 1), "VALID", None, None),
    ("explicit-stride", (5, 6), (2, 3), (2, 1), ((1, 0), (2, 1)), None, None),
    ("base-dilation", (4, 5), (2, 3), (1, 2), ((0, 1), (1, 1)), (2, 1), None),
    ("base-dilation-same", (4, 3), (3, 2), (2, 1), "SAME", (2, 2), None),
    ("window-dilation", (7, 6), (2, 2), (1, 2), "SAME", None, (2, 3)),
    ("1d-negative-pad", (9,), (3,), (2,), ((-1, 2),), None, None),
]
OPS = {"sum": (lax.add, 0.0, np.add), "max": (lax.max, -np.inf, np.maximum),
       "min": (lax.min, np.inf, np.minimum)}


def explicit(shape, window, strides, padding, base_dilation, window_dilation):
    if not isinstance(padding, str):
        return padding
    nd = len(shape)  # JAX's rule: the window is dilated, the operand is not
    wd = [(w - 1) * d + 1 for w, d in zip(window, window_dilation or (1,) * nd)]
    return lax.padtype_to_pads(shape, wd, strides, padding)


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("name,shape,window,strides,padding,bd,wd", CASES,
                         ids=[c[0] for c in CASES])
def test_values_match_direct_loop(name, shape, window, strides, padding, bd, wd, op):
    x = distinct(*shape)
    comp, init, np_op = OPS[op]
    f = pyjax.jit(lambda a: lax.reduce_window(a, init, comp, window, strides, padding, bd, wd))
    got = f(x)
    pads = explicit(shape, window, strides, padding, bd, wd)
    want = ref.reduce_window(x, np_op, np.float32(init), window, strides, pads, bd, wd)
    assert got.shape == want.shape == lax.reduce_window_shape_tuple(shape, window, strides,
                                                                    pads, bd, wd)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_eager_equals_jit_and_monoid_primitives():
    x = distinct(4, 6)
    args = ((2, 3), (2, 1), "SAME")
    for comp, init, prim in [(lax.add, 0.0, "reduce_window_sum"),
                             (lax.max, -np.inf, "reduce_window_max"),
                             (lax.min, np.inf, "reduce_window_min")]:
        eager = lax.reduce_window(x, init, comp, *args)
        jitted = pyjax.jit(lambda a: lax.reduce_window(a, init, comp, *args))(x)
        np.testing.assert_array_equal(np.asarray(eager), np.asarray(jitted))
        text = str(pyjax.make_jaxpr(lambda a: lax.reduce_window(a, init, comp, *args))(x))
        assert prim + "[" in text
    # an init that is not the identity takes the generic primitive: padding holds the init
    got = lax.reduce_window(x, 100.0, lax.max, (2, 2), (1, 1), ((1, 0), (0, 0)))
    assert "reduce_window[" in str(pyjax.make_jaxpr(
        lambda a: lax.reduce_window(a, 100.0, lax.max, (2, 2), (1, 1), ((1, 0), (0, 0))))(x))
    np.testing.assert_array_equal(np.asarray(got), np.full((4, 5), 100.0, np.float32))


def test_integer_and_bool_operands():
    xi = RNG.integers(-50, 50, (5, 4)).astype(np.int32)
    got = lax.reduce_window(xi, np.iinfo(np.int32).min, lax.max, (2, 2), (1, 1), "VALID")
    want = ref.reduce_window(xi, np.maximum, np.iinfo(np.int32).min, (2, 2), (1, 1),
                             ((0, 0), (0, 0)))
    np.testing.assert_array_equal(np.asarray(got), want)
    got = lax.reduce_window(xi, 0, lax.add, (3, 1), (1, 1), ((1, 1), (0, 0)))
    want = ref.reduce_window(xi, np.add, 0, (3, 1), (1, 1), ((1, 1), (0, 0)))
    np.testing.assert_array_equal(np.asarray(got), want)
    b = RNG.random((4, 4)) < 0.3
    got = lax.reduce_window(b, False, lax.max, (2, 2), (2, 2), "VALID")
    np.testing.assert_array_equal(np.asarray(got), b.reshape(2, 2, 2, 2).any(axis=(1, 3)))


def test_user_computation_and_variadic():
    x = distinct(5, 6)
    # a product (no monoid primitive) and a NaN-free "max of absolute values"
    got = lax.reduce_window(x, 1.0, lax.mul, (2, 3), (1, 1), "VALID")
    want = ref.reduce_window(x, np.multiply, np.float32(1), (2, 3), (1, 1), ((0, 0), (0, 0)))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)
    # (value, index) pairs: the argmax inside each window, as a pytree reduction
    idx = np.arange(x.size, dtype=np.int32).reshape(x.shape)

    def pick(a, b):
        take_a = lax.ge(a[0], b[0])
        return lax.select(take_a, a[0], b[0]), lax.select(take_a, a[1], b[1])
    vals, where = pyjax.jit(lambda v, i: lax.reduce_window(
        (v, i), (-np.inf, np.int32(-1)), pick, (2, 2), (2, 2), "VALID"))(x, idx)
    blocks = x[:4].reshape(2, 2, 3, 2).transpose(0, 2, 1, 3).reshape(2, 3, 4)
    np.testing.assert_array_equal(np.asarray(vals), blocks.max(-1))
    np.testing.assert_array_equal(x.reshape(-1)[np.asarray(where)], blocks.max(-1))
    # forward mode only, as JAX (no transpose for a general reduction)
    with pytest.raises(NotImplementedError, match="Transpose rule"):
        pyjax.grad(lambda v: lax.reduce_window(v, 1.0, lax.mul, (2, 2), (1, 1),
                                               "VALID").sum())(x)


def test_user_computation_closing_over_a_tracer_is_refused():
    x = distinct(4, 6)
    f = pyjax.jit(lambda a, s: lax.reduce_window(a, 0.0, lambda p, q: p + s * q, (2, 2),
                                                 (1, 1), "VALID"))
    with pytest.raises(NotImplementedError, match="closes over a traced value"):
        f(x, 2.0)


def test_user_computation_forward_mode(x64):
    x = distinct(4, 5, dtype=np.float64) / 4
    prod = lambda a: lax.reduce_window(a, 1.0, lax.mul, (2, 3), (1, 2), ((0, 1), (1, 0)))
    check_grads(prod, (x,), order=2, modes=("fwd",))
    jac = pyjax.jacfwd(lambda a: prod(a).sum())(x)
    _, t = pyjax.jvp(lambda a: prod(a).sum(), (x,), (np.ones_like(x),))
    np.testing.assert_allclose(np.asarray(jac).sum(), np.asarray(t), rtol=1e-10)
    # (value, index) windows: the value's tangent is the tangent of the chosen element
    idx = np.arange(x.size, dtype=np.int32).reshape(x.shape)

    def pick(a, b):
        take_a = lax.ge(a[0], b[0])
        return lax.select(take_a, a[0], b[0]), lax.select(take_a, a[1], b[1])
    f = lambda v: lax.reduce_window((v, idx), (-np.inf, np.int32(-1)), pick, (2, 2), (1, 1),
                                    "VALID")
    tx = RNG.normal(size=x.shape)
    (vals, where), (tv, ti) = pyjax.jvp(f, (x,), (tx,))
    np.testing.assert_allclose(np.asarray(tv), tx.reshape(-1)[np.asarray(where)])
    assert ti.dtype == pyjax.dtypes.float0


# ---- gradients ----

# every case with max (select_and_gather_add, and its transpose select_and_scatter_add),
# the sum's transpose where strides, padding and dilation change it, min once
GRAD_CASES = [c + ("max",) for c in CASES if c[0] != "window-dilation"] + [
    c + ("sum",) for c in CASES if c[0] in ("overlap-valid", "explicit-stride",
                                            "base-dilation")] + [CASES[2] + ("min",)]


@pytest.mark.parametrize("name,shape,window,strides,padding,bd,wd,op", GRAD_CASES,
                         ids=[f"{c[0]}-{c[-1]}" for c in GRAD_CASES])
def test_gradients_match_finite_differences(x64, name, shape, window, strides, padding, bd,
                                            wd, op):
    x = distinct(*shape, dtype=np.float64)
    comp, init, _ = OPS[op]
    f = pyjax.jit(lambda a: lax.reduce_window(a, init, comp, window, strides, padding, bd, wd))
    check_grads(f, (x,), order=2 if name == "overlap-valid" else 1, modes=("fwd", "rev"),
                eps=1e-3)


def test_max_pool_gradient_goes_to_the_max(x64):
    x = distinct(4, 4, dtype=np.float64)
    g = pyjax.grad(lambda a: lax.reduce_window(a, -np.inf, lax.max, (2, 2), (2, 2),
                                               "VALID").sum())(x)
    blocks = x.reshape(2, 2, 2, 2).transpose(0, 2, 1, 3).reshape(4, 4)
    want = (blocks == blocks.max(-1, keepdims=True)).astype(float)
    want = want.reshape(2, 2, 2, 2).transpose(0, 2, 1, 3).reshape(4, 4)
    np.testing.assert_array_equal(np.asarray(g), want)


def test_tiled_pool_gradient_equals_select_and_scatter():
    # windows that tile the operand take a faster path (argmax + one-hot); with ties and
    # rows no window reaches it must equal XLA's select_and_scatter (first of tied elements)
    from pyjax._src.lax.windowed_reductions import select_and_scatter_add_p
    x = RNG.integers(0, 3, (2, 7, 5, 3)).astype(np.float32)
    ct = RNG.normal(size=(2, 2, 2, 3)).astype(np.float32)
    w = dict(window_dimensions=(1, 3, 2, 1), window_strides=(1, 3, 2, 1), padding=((0, 0),) * 4)
    for comp, init, select in [(lax.max, -np.inf, "ge"), (lax.min, np.inf, "le")]:
        _, vjp = pyjax.vjp(lambda a: lax.reduce_window(a, init, comp, w["window_dimensions"],
                                                       w["window_strides"], "VALID"), x)
        want = select_and_scatter_add_p.bind(ct, x, select=select, **w)
        np.testing.assert_array_equal(np.asarray(vjp(ct)[0]), np.asarray(want))
        assert np.count_nonzero(np.asarray(want)) == ct.size  # one element per window


def test_window_dilation_forward_mode_and_reverse_error(x64):
    x = distinct(7, 6, dtype=np.float64)
    f = lambda a: lax.reduce_window(a, -np.inf, lax.max, (2, 2), (1, 2), "SAME", None, (2, 3))
    check_grads(f, (x,), order=1, modes=("fwd",), eps=1e-3)
    with pytest.raises(NotImplementedError, match="window dilation"):
        pyjax.grad(lambda a: f(a).sum())(x)
    s = lambda a: lax.reduce_window(a, 0.0, lax.add, (2, 2), (1, 2), "SAME", None, (2, 3))
    check_grads(s, (x,), order=1, modes=("fwd", "rev"))


def test_gradient_primitives_transpose_identity(x64):
    # <T(ct), t> == <ct, L(t)> for select_and_gather_add (L) and select_and_scatter_add (T)
    from pyjax._src.lax.windowed_reductions import (select_and_gather_add_p,
                                                    select_and_scatter_add_p)
    x, t = distinct(6, 5, dtype=np.float64), RNG.normal(size=(6, 5))
    w = dict(window_dimensions=(3, 2), window_strides=(2, 1), padding=((1, 1), (0, 1)))
    for select in ("ge", "le"):
        gathered = select_and_gather_add_p.bind(t, x, select=select, base_dilation=(1, 1),
                                                window_dilation=(1, 1), **w)
        ct = RNG.normal(size=gathered.shape)
        scattered = select_and_scatter_add_p.bind(ct, x, select=select, **w)
        np.testing.assert_allclose(np.vdot(np.asarray(scattered), t),
                                   np.vdot(ct, np.asarray(gathered)), rtol=1e-12)
        # and the gather picks each window's max/min tangent
        want_idx = ref.reduce_window(
            x, np.maximum if select == "ge" else np.minimum,
            -np.inf if select == "ge" else np.inf, (3, 2), (2, 1), ((1, 1), (0, 1)))
        np.testing.assert_allclose(np.asarray(gathered),
                                   t.reshape(-1)[[np.flatnonzero(x == v)[0]
                                                  for v in want_idx.reshape(-1)]].reshape(
                                       want_idx.shape))
        # the transposes as primitives: their own JVPs are themselves (linear in the first)
        check_grads(lambda c: select_and_scatter_add_p.bind(c, x, select=select, **w), (ct,),
                    order=1, modes=("fwd", "rev"))


# ---- vmap ----

def test_vmap_matches_loop():
    xs = distinct(3, 5, 6)
    f = lambda a: (lax.reduce_window(a, 0.0, lax.add, (2, 3), (2, 1), "SAME")
                   * lax.reduce_window(a, -np.inf, lax.max, (2, 3), (2, 1), "SAME"))
    for axis in (0, 2):
        batched = np.moveaxis(xs, 0, axis)
        got = pyjax.vmap(f, in_axes=axis)(batched)
        want = np.stack([np.asarray(f(xs[b])) for b in range(3)])
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    # gradients under vmap use the batched gather and scatter primitives
    g = pyjax.vmap(pyjax.grad(lambda a: (f(a) ** 2).sum()))(xs)
    want = np.stack([np.asarray(pyjax.grad(lambda a: (f(a) ** 2).sum())(xs[b]))
                     for b in range(3)])
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-5)
    gen = pyjax.vmap(lambda a: lax.reduce_window(a, 1.0, lax.mul, (2, 2), (1, 1), "VALID"),
                     in_axes=1)(xs)
    want = np.stack([np.asarray(lax.reduce_window(xs[:, b], 1.0, lax.mul, (2, 2), (1, 1),
                                                  "VALID")) for b in range(5)])
    np.testing.assert_allclose(np.asarray(gen), want, rtol=1e-6)


# ---- errors ----

@pytest.mark.parametrize("call,exc,match", [
    (lambda x: lax.reduce_window(x, 0.0, lax.add, (2,), (1, 1), "VALID"), TypeError,
     "one entry per operand dimension"),
    (lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 0), (1, 1), "VALID"), TypeError,
     "positive"),
    (lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1), "FULL"), ValueError,
     "padding"),
    (lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1), ((1, 1),)), TypeError,
     "padding"),
    (lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2.5), (1, 1), "VALID"), TypeError,
     "sequence of ints"),
    (lambda x: lax.reduce_window(x, np.zeros(2, np.float32), lambda a, b: a + b, (2, 2),
                                 (1, 1), "VALID"), TypeError, "scalars"),
    (lambda x: lax.reduce_window(x, np.int32(0), lambda a, b: a + b, (2, 2), (1, 1),
                                 "VALID"), TypeError, "dtype"),
])
def test_bad_inputs_raise_clear_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call(distinct(4, 5))
