"""Reductions (reduce_*, argmax/argmin, cumulative ops) eagerly and under jit, against NumPy."""
import ml_dtypes
import numpy as np
import pytest

import pyjax
import pyjax.lax as lax

TESTED_PRIMITIVES = {"reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and",
                     "reduce_or", "reduce_xor", "argmax", "argmin", "cumsum", "cumprod",
                     "cummax", "cummin", "cumlogsumexp", "reduce"}
# the generic reduce (a user computation): vmap and forward mode, below
BATCH_TESTED = {"reduce"}
JVP_TESTED = {"reduce"}

BF16 = np.dtype(ml_dtypes.bfloat16)
RNG = np.random.default_rng(0)


def make(shape, dtype, lo=-3, hi=4):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return RNG.random(shape) < 0.5
    if np.issubdtype(dtype, np.unsignedinteger):
        return RNG.integers(0, hi + 3, shape).astype(dtype)
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(lo, hi, shape).astype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        return (RNG.integers(lo, hi, shape) + 1j * RNG.integers(lo, hi, shape)).astype(dtype)
    return RNG.integers(lo, hi, shape).astype(dtype)  # integer-valued: exact sums in bf16


def tol(dtype):
    return dict(rtol=2e-2, atol=1e-2) if np.dtype(dtype) == BF16 else dict(rtol=1e-5, atol=1e-5)


def _assert_matches(out, expected, out_dtype, weak, tols):
    assert out.shape == expected.shape, (out.shape, expected.shape)
    assert out.dtype == out_dtype, (out.dtype, out_dtype)
    assert out.weak_type == weak
    got = np.asarray(out)
    if out_dtype == BF16:
        got, expected = got.astype(np.float32), expected.astype(np.float32)
    np.testing.assert_allclose(got, expected, **(tols or tol(out_dtype)))


def check_cases(cases, n_eager=1, weak=False, **tols):
    """``cases`` are ``(fn, args, expected, out_dtype)``. Each case's eval_shape, the first
    ``n_eager`` cases eagerly, and all cases together under one ``jit`` (one compile) must
    agree with the NumPy ``expected`` in shape, dtype and value."""
    cases = [(f, tuple(a), np.asarray(e), np.dtype(d)) for f, a, e, d in cases]
    for f, args, expected, dt in cases:
        struct = pyjax.eval_shape(f, *args)
        assert struct.shape == expected.shape and struct.dtype == dt
        assert struct.weak_type == weak
    for f, args, expected, dt in cases[:n_eager]:
        _assert_matches(f(*args), expected, dt, weak, tols)

    def together(*flat):
        outs, i = [], 0
        for f, args, _, _ in cases:
            outs.append(f(*flat[i:i + len(args)]))
            i += len(args)
        return outs
    flat = [a for _, args, _, _ in cases for a in args]
    for out, (_, _, expected, dt) in zip(pyjax.jit(together)(*flat), cases):
        _assert_matches(out, expected, dt, weak, tols)


def check(fn, args, expected, out_dtype, weak=False, **tols):
    """One case, eagerly and under jit."""
    check_cases([(fn, args, expected, out_dtype)], weak=weak, **tols)


# ---- monoid reductions ----

def _np_reduce(name, x, axes):
    dt = x.dtype
    axes = tuple(axes)
    if dt == BF16:
        return _np_reduce(name, x.astype(np.float32), axes).astype(BF16)
    if name == "reduce_sum":
        return np.sum(x, axis=axes, dtype=dt)
    if name == "reduce_prod":
        return np.prod(x, axis=axes, dtype=dt)
    if name in ("reduce_max", "reduce_min"):
        if dt == np.bool_:
            return (np.any if name == "reduce_max" else np.all)(x, axis=axes)
        if np.issubdtype(dt, np.floating):
            init = -np.inf if name == "reduce_max" else np.inf
        else:
            info = np.iinfo(dt)
            init = info.min if name == "reduce_max" else info.max
        f = np.max if name == "reduce_max" else np.min
        return f(x, axis=axes, initial=init)
    if dt == np.bool_:
        uf = {"reduce_and": np.logical_and, "reduce_or": np.logical_or,
              "reduce_xor": np.logical_xor}[name]
    else:
        uf = {"reduce_and": np.bitwise_and, "reduce_or": np.bitwise_or,
              "reduce_xor": np.bitwise_xor}[name]
    return uf.reduce(x, axis=axes, dtype=dt)


_MONOID_DTYPES = {
    "reduce_sum": [np.float32, np.int32, np.int8, np.uint8, BF16, np.complex64],
    "reduce_prod": [np.float32, np.int32, np.int8, np.uint8, BF16, np.complex64],
    "reduce_max": [np.float32, np.int32, np.int8, np.uint8, np.bool_, BF16],
    "reduce_min": [np.float32, np.int32, np.int8, np.uint8, np.bool_, BF16],
    "reduce_and": [np.int32, np.int8, np.uint8, np.bool_],
    "reduce_or": [np.int32, np.int8, np.uint8, np.bool_],
    "reduce_xor": [np.int32, np.int8, np.uint8, np.bool_],
}
_SHAPES_AXES = [((3, 4, 5), (0, 2)), ((0, 3), (0,)), ((), ()), ((2, 3), (1, 0))]


@pytest.mark.parametrize("name", list(_MONOID_DTYPES))
def test_monoid_reduction(name):
    fn = getattr(lax, name)
    lo, hi = (0, 3) if name == "reduce_prod" else (-3, 4)
    eager, cases = [], []
    for j, dtype in enumerate(map(np.dtype, _MONOID_DTYPES[name])):
        for k, (shape, axes) in enumerate(_SHAPES_AXES if j == 0 else _SHAPES_AXES[:2]):
            x = make(shape, dtype, lo, hi)
            case = (lambda a, axes=axes: fn(a, axes), (x,), _np_reduce(name, x, axes), dtype)
            (eager if k == 0 and len(eager) < 2 else cases).append(case)
    check_cases(eager + cases, n_eager=len(eager))


def test_reductions_of_empty_arrays_give_identities():
    e, ei = np.zeros((0,), np.float32), np.zeros((0,), np.int8)
    eu, eb = np.zeros((0,), np.uint8), np.zeros((0,), bool)
    check_cases([(lambda a: lax.reduce_sum(a, (0,)), (e,), 0.0, np.float32),
                 (lambda a: lax.reduce_max(a, (0,)), (e,), -np.inf, np.float32),
                 (lambda a: lax.reduce_prod(a, (0,)), (e,), 1.0, np.float32),
                 (lambda a: lax.reduce_min(a, (0,)), (e,), np.inf, np.float32),
                 (lambda a: lax.reduce_max(a, (0,)), (ei,), -128, np.int8),
                 (lambda a: lax.reduce_min(a, (0,)), (ei,), 127, np.int8),
                 (lambda a: lax.reduce_and(a, (0,)), (eu,), 255, np.uint8),
                 (lambda a: lax.reduce_and(a, (0,)), (eb,), True, np.bool_),
                 (lambda a: lax.reduce_or(a, (0,)), (eb,), False, np.bool_)], n_eager=2)


def test_max_min_propagate_nan():
    # NaNs propagate from every position, also in a long row that takes the vectorized path
    # (a bare maximum body propagates them only with fast min/max off: compile_options.py).
    x = RNG.random((4, 1000)).astype(np.float32)
    for row, pos in enumerate((0, 500, 999)):
        x[row, pos] = np.nan
    y = RNG.random((16, 40)).astype(np.float32)
    y[3, 7] = np.nan
    cases = [(lambda a: lax.reduce_max(a, (1,)), (x,), np.max(x, 1), np.float32),
             (lambda a: lax.reduce_min(a, (1,)), (x,), np.min(x, 1), np.float32),
             (lambda a: lax.reduce_max(a, (0, 1)), (y,), np.max(y), np.float32),
             (lambda a: lax.reduce_min(a, (1,)), (y,), np.min(y, 1), np.float32)]
    check_cases(cases, n_eager=4)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16],
                         ids=["f32", "f16", "bf16"])
def test_float_max_min_tree_and_bare_body_propagate_nan(dtype):
    # Float max/min fold reduced axes in halves with elementwise max/min (odd lengths overlap
    # by one), then reduce with a bare body (NaN-propagating through the compile option pyjax
    # sets): rows 33 -> 17 -> 9 -> 5 (a reduce XLA would rewrite into a reduce-window),
    # columns 64 -> 8, two separate axes (33 and 17 of 33x4x17), long trailing axes folded
    # per row of a divisor (70000 = 20 x 3500; 140000 = 35 x 4000), and a prime length 65537
    # (no divisor: bare reduce only).
    rng = np.random.default_rng(3)
    f = pyjax.jit(lambda a, b, c, d: [
        lax.reduce_max(a * a, (1,)), lax.reduce_min(a, (0,)), lax.reduce_min(b, (1, 2)),
        lax.reduce_max(b, (2,)), lax.reduce_max(c, (0,)), lax.reduce_min(c, (0,)),
        lax.reduce_max(d, (0, 2))])
    a = rng.normal(size=(64, 33)).astype(dtype)
    b = rng.normal(size=(3, 2, 70000)).astype(dtype)
    c = rng.normal(size=(65537,)).astype(dtype)
    d = rng.normal(size=(33, 4, 17)).astype(dtype)
    for nan_at in (None, 0, -1):
        if nan_at is not None:  # NaNs of both signs, in some rows only
            a[5, nan_at], a[40, nan_at] = np.nan, -np.nan
            b[1, 0, nan_at], c[nan_at], d[nan_at, 2, nan_at] = -np.nan, np.nan, np.nan
        want = [(a * a).max(1), a.min(0), b.min((1, 2)), b.max(2), c.max(), c.min(),
                d.max((0, 2))]
        for got, w in zip(f(a, b, c, d), want):
            got, w = np.asarray(got, np.float32), np.asarray(w, np.float32)
            assert np.array_equal(np.isnan(got), np.isnan(w))
            np.testing.assert_array_equal(got[~np.isnan(got)], w[~np.isnan(w)])


def test_reductions_keep_weak_type():
    assert lax.reduce_sum(2.0, ()).weak_type
    out = pyjax.jit(lambda a: lax.reduce_max(a, (0,)))(pyjax.device_put(np.ones(3, np.float32)))
    assert not out.weak_type
    s = pyjax.eval_shape(lambda a: lax.reduce_prod(a, ()), 3)
    assert s.weak_type and s.dtype == np.dtype(pyjax.dtypes.canonicalize_dtype(int))


def test_negative_axes_and_jaxpr_params():
    x = make((2, 3, 4), np.float32)
    np.testing.assert_allclose(np.asarray(lax.reduce_sum(x, (-1,))), x.sum(-1), rtol=1e-6)
    text = str(pyjax.make_jaxpr(lambda a: lax.reduce_sum(a, (-1, 0)))(x))
    assert "reduce_sum[axes=(2, 0)]" in text


@pytest.mark.parametrize("name,dtype,axes,msg", [
    ("reduce_sum", np.float32, (2,), "out-of-bounds"),
    ("reduce_sum", np.float32, (0, 0), "duplicate"),
    ("reduce_max", np.float32, (-3,), "out-of-bounds"),
])
def test_reduction_axis_errors(name, dtype, axes, msg):
    with pytest.raises(ValueError, match=msg):
        getattr(lax, name)(np.ones((2, 3), dtype), axes)
    with pytest.raises(ValueError, match=msg):
        pyjax.jit(lambda a: getattr(lax, name)(a, axes))(np.ones((2, 3), dtype))


@pytest.mark.parametrize("name,dtype", [("reduce_sum", np.bool_), ("reduce_prod", np.bool_),
                                        ("reduce_and", np.float32), ("reduce_xor", np.float32),
                                        ("reduce_or", np.float32)])
def test_reduction_dtype_errors(name, dtype):
    with pytest.raises(TypeError, match=f"{name} does not accept dtype"):
        getattr(lax, name)(np.ones((2,), dtype), (0,))


# ---- lax.reduce ----

def test_reduce_recognises_monoids():
    x = make((3, 4), np.float32)
    xi = make((3, 4), np.int32)
    cases = [(x, 0.0, lax.add, "reduce_sum", x.sum(0)),
             (x, 1.0, lax.mul, "reduce_prod", x.prod(0)),
             (x, -np.inf, lax.max, "reduce_max", x.max(0)),
             (x, np.inf, lax.min, "reduce_min", x.min(0)),
             (xi, np.int32(-1), lax.bitwise_and, "reduce_and", np.bitwise_and.reduce(xi, 0)),
             (xi, 0, lax.bitwise_or, "reduce_or", np.bitwise_or.reduce(xi, 0)),
             (xi, np.iinfo(np.int32).min, lax.max, "reduce_max", xi.max(0))]
    for operand, init, comp, prim, expected in cases:
        np.testing.assert_allclose(np.asarray(lax.reduce(operand, init, comp, (0,))), expected,
                                   rtol=1e-6)
        text = str(pyjax.make_jaxpr(lambda a: lax.reduce(a, init, comp, (0,)))(operand))
        assert f"{prim}[axes=(0,)]" in text
    out = lax.reduce((x,), (0.0,), lax.add, (1,))
    assert isinstance(out, tuple) and len(out) == 1
    np.testing.assert_allclose(np.asarray(out[0]), x.sum(1), rtol=1e-6)


def test_reduce_with_a_user_computation():
    x = make((3, 4), np.float32)
    # not recognised as a monoid (a lambda, or lax.add with another init): the generic reduce
    f = lambda a, b: lax.max(a, b)
    np.testing.assert_array_equal(np.asarray(lax.reduce(x, -np.inf, f, (1,))), x.max(1))
    assert "reduce[" in str(pyjax.make_jaxpr(lambda a: lax.reduce(a, -np.inf, f, (1,)))(x))
    # variadic: argmax along axis 0 as a (value, index) reduction, under jit and vmap
    idx = np.broadcast_to(np.arange(3, dtype=np.int32)[:, None], x.shape)

    def pick(a, b):
        take_a = lax.ge(a[0], b[0])
        return lax.select(take_a, a[0], b[0]), lax.select(take_a, a[1], b[1])
    run = pyjax.jit(lambda v, i: lax.reduce((v, i), (-np.inf, np.int32(0)), pick, (0,)))
    vals, where = run(x, idx)
    np.testing.assert_array_equal(np.asarray(vals), x.max(0))
    np.testing.assert_array_equal(np.asarray(where), x.argmax(0))
    batched = pyjax.vmap(lambda v: lax.reduce(v, -np.inf, f, (0,)))(x)
    np.testing.assert_array_equal(np.asarray(batched), x.max(1))
    # forward mode (the JVP of the computation as the body), not reverse mode (as JAX)
    t = make((3, 4), np.float32)
    xd = np.random.default_rng(3).permutation(12).reshape(3, 4).astype(np.float32)  # no ties
    _, tangent = pyjax.jvp(lambda v: lax.reduce(v, -np.inf, f, (1,)), (xd,), (t,))
    np.testing.assert_array_equal(np.asarray(tangent), t[np.arange(3), xd.argmax(1)])
    with pytest.raises(NotImplementedError, match="Transpose rule"):
        pyjax.grad(lambda v: lax.reduce(v, -np.inf, f, (0, 1)))(x)
    with pytest.raises(ValueError, match="init values"):
        lax.reduce((x, x), (0.0,), lax.add, (0,))
    with pytest.raises(TypeError, match="float32 scalars"):
        lax.reduce(x, 0.0, lambda a, b: lax.convert_element_type(a, np.int32), (0,))


# ---- argmax / argmin ----

def test_argmax_argmin():
    cases = []
    for dtype in (np.float32, np.int32, np.int8, np.uint8, np.bool_, BF16):
        x = make((4, 5), dtype, -2, 2)  # small range: many ties, first occurrence must win
        ref = x.astype(np.float32) if np.dtype(dtype) == BF16 else x
        axes = (1, 0, -1) if dtype == np.float32 else (1,)
        cases += [(lambda a, n=name, ax=axis: getattr(lax, n)(a, ax, np.int32), (x,),
                   np_fn(ref, axis=axis), np.int32)
                  for name, np_fn in (("argmax", np.argmax), ("argmin", np.argmin))
                  for axis in axes]
    check_cases(cases, n_eager=2)


def test_argmax_nan_and_index_dtypes():
    x = np.array([[1, np.nan, 3, np.nan], [-np.inf, -np.inf, -np.inf, -np.inf],
                  [2, 5, 5, 0], [np.nan, 0, 9, 9]], np.float32)
    check_cases([(lambda a, n=name, i=idt: getattr(lax, n)(a, 1, i), (x,), np_fn(x, axis=1),
                  idt)
                 for name, np_fn in (("argmax", np.argmax), ("argmin", np.argmin))
                 for idt in (np.int32, np.uint8, np.int8)], n_eager=2)
    big = RNG.random(3000).astype(np.float32)
    big[[1234, 2000]] = np.nan
    assert int(lax.argmax(big, 0, np.int32)) == 1234
    assert int(pyjax.jit(lambda a: lax.argmin(a, 0, np.int32))(big)) == 1234
    big[[1234, 2000]] = 0.5
    assert int(lax.argmax(big, 0, np.int32)) == int(np.argmax(big))


def test_argmax_jaxpr_and_errors():
    x = np.ones((2, 3), np.float32)
    text = str(pyjax.make_jaxpr(lambda a: lax.argmax(a, -1, np.int32))(x))
    assert "argmax[axes=(1,) index_dtype=int32]" in text
    with pytest.raises(ValueError, match="non-empty reduced dimension"):
        lax.argmax(np.ones((2, 0), np.float32), 1, np.int32)
    with pytest.raises(ValueError, match="invalid axis"):
        lax.argmin(x, 2, np.int32)
    with pytest.raises(TypeError, match="index_dtype must be an integer"):
        lax.argmax(x, 0, np.float32)
    with pytest.raises(TypeError, match="does not accept dtype complex64"):
        lax.argmax(np.ones(3, np.complex64), 0, np.int32)


# ---- cumulative reductions ----

def _np_cum(name, x, axis, reverse):
    if x.dtype == BF16:
        return _np_cum(name, x.astype(np.float32), axis, reverse).astype(BF16)
    if reverse:
        return np.flip(_np_cum(name, np.flip(x, axis), axis, False), axis)
    dt = x.dtype
    if name == "cumsum":
        return np.cumsum(x, axis, dtype=dt)
    if name == "cumprod":
        return np.cumprod(x, axis, dtype=dt)
    if name == "cummax":
        return np.maximum.accumulate(x, axis)
    if name == "cummin":
        return np.minimum.accumulate(x, axis)
    with np.errstate(invalid="ignore"):
        return np.logaddexp.accumulate(x, axis)


_CUM_DTYPES = {
    "cumsum": [np.float32, np.int32, np.int8, np.uint8, BF16, np.complex64],
    "cumprod": [np.float32, np.int32, np.int8, BF16],
    "cummax": [np.float32, np.int32, np.uint8, BF16],
    "cummin": [np.float32, np.int8, np.uint8],
    "cumlogsumexp": [np.float32, BF16],
}


@pytest.mark.parametrize("name", list(_CUM_DTYPES))
def test_cumulative(name):
    fn = getattr(lax, name)
    lo, hi = (1, 3) if name == "cumprod" else (-3, 4)
    eager, cases = [], []
    configs = [((4, 5), 1, False), ((7,), -1, True), ((4, 5), 0, True), ((0, 3), 0, False),
               ((3, 1), 1, True)]
    for j, dtype in enumerate(map(np.dtype, _CUM_DTYPES[name])):
        for k, (shape, axis, reverse) in enumerate(configs if j == 0 else configs[:2]):
            x = make(shape, dtype, lo, hi)
            case = (lambda a, ax=axis, r=reverse: fn(a, ax, r), (x,),
                    _np_cum(name, x, axis % len(shape), reverse), dtype)
            (eager if k == 0 and len(eager) < 2 else cases).append(case)
    check_cases(eager + cases, n_eager=len(eager))


def test_cumulative_special_values():
    x = np.array([1, np.nan, 3, 0, 5], np.float32)
    y = np.array([-np.inf, -np.inf, 0.0, np.inf, 1.0], np.float32)
    z = np.array([-1000.0, 1000.0, -1000.0], np.float32)  # no overflow in exp
    check_cases([(lambda a, n=name: getattr(lax, n)(a), (x,), _np_cum(name, x, 0, False),
                  np.float32) for name in ("cummax", "cumsum", "cummin", "cumprod")] + [
        (lambda a: lax.cumlogsumexp(a), (y,), _np_cum("cumlogsumexp", y, 0, False), np.float32),
        (lambda a: lax.cumlogsumexp(a, 0, True), (z,), [1000.0, 1000.0, -1000.0], np.float32)],
        n_eager=1)
    # weak types survive; defaults are axis=0, reverse=False
    weak = lambda a: lax.cumsum(lax.convert_element_type(a, np.float32, weak_type=True))
    assert pyjax.eval_shape(weak, np.ones(3, np.float32)).weak_type
    assert pyjax.jit(weak)(np.ones(3, np.float32)).weak_type
    assert not lax.cumsum(np.ones(3, np.float32)).weak_type
    text = str(pyjax.make_jaxpr(lambda a: lax.cummax(a, -1, reverse=True))(np.ones((2, 3))))
    assert "cummax[axis=1 reverse=True]" in text


def test_cumulative_errors():
    with pytest.raises(ValueError, match="out of bounds"):
        lax.cumsum(np.ones((2, 3), np.float32), 2)
    with pytest.raises(ValueError, match="out of bounds"):
        lax.cumsum(np.float32(1.0))
    with pytest.raises(TypeError, match="cumsum does not accept dtype bool"):
        lax.cumsum(np.ones(3, bool))
    with pytest.raises(TypeError, match="cumlogsumexp does not accept dtype int32"):
        lax.cumlogsumexp(np.ones(3, np.int32))
    with pytest.raises(TypeError, match="cummax does not accept dtype complex64"):
        lax.cummax(np.ones(3, np.complex64))
