"""jnp functions of several primitives that run eagerly as one compiled call: the same values,
dtypes and weak types as op by op (``disable_jit``), as under ``jit`` and as NumPy; no
primitive dispatched on its own; the same errors for bad input; lists of arrays as operands."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax._src.core import primitive as primitive_mod
from pyjax.test_util import count_compiles

rng = np.random.default_rng(0)
X = rng.normal(size=(5, 5)).astype(np.float32)
V = rng.normal(size=(7,)).astype(np.float32)
XN = X.copy()
XN[1, 2], XN[3, 0], XN[4, 4] = np.nan, np.inf, -np.inf
I = np.array([3, 0, 6, 6, 1], np.int32)
B = np.array([-1.0, -0.2, 0.3, 1.0], np.float32)

# (name, pyjax call, NumPy call or None, operands); operands go in as pyjax arrays
CASES = [
    ("searchsorted", lambda a, v: jnp.searchsorted(a, v), np.searchsorted, (np.sort(V), V)),
    ("searchsorted right", lambda a, v: jnp.searchsorted(a, v, side="right"),
     lambda a, v: np.searchsorted(a, v, side="right"), (np.sort(V), np.sort(V)[::2])),
    ("digitize", lambda x, b: jnp.digitize(x, b), np.digitize, (V, B)),
    ("digitize right decreasing", lambda x, b: jnp.digitize(x, b, right=True),
     lambda x, b: np.digitize(x, b, right=True), (V, B[::-1].copy())),
    ("histogram", lambda a: jnp.histogram(a, bins=4), lambda a: np.histogram(a, bins=4), (V,)),
    ("histogram range density", lambda a: jnp.histogram(a, 3, (-1, 1), density=True),
     lambda a: np.histogram(a, 3, (-1, 1), density=True), (V,)),
    ("linspace", lambda: jnp.linspace(0, 1, 6), lambda: np.linspace(0, 1, 6), ()),
    ("linspace arrays", lambda a, b: jnp.linspace(a, b, 4, axis=1, endpoint=False),
     lambda a, b: np.linspace(a, b, 4, axis=1, endpoint=False), (V[:3], V[3:6])),
    ("linspace retstep int", lambda: jnp.linspace(2, 11, 4, retstep=True, dtype=jnp.int32),
     lambda: np.linspace(2, 11, 4, retstep=True, dtype=np.int32), ()),
    ("logspace", lambda: jnp.logspace(0, 2, 5, base=2.0), lambda: np.logspace(0, 2, 5, base=2.0),
     ()),
    ("geomspace", lambda: jnp.geomspace(-1, -1000, 4), lambda: np.geomspace(-1, -1000, 4), ()),
    ("triu", lambda m: jnp.triu(m, 1), lambda m: np.triu(m, 1), (X,)),
    ("tril", lambda m: jnp.tril(m, -2), lambda m: np.tril(m, -2), (X,)),
    ("diag 1-D", lambda v: jnp.diag(v, -1), lambda v: np.diag(v, -1), (V,)),
    ("diag 2-D", lambda m: jnp.diag(m, 2), lambda m: np.diag(m, 2), (X,)),
    ("take", lambda a, i: jnp.take(a, i), np.take, (V, I)),
    ("take axis clip", lambda a, i: jnp.take(a, i, axis=1, mode="clip"),
     lambda a, i: np.take(a, i, axis=1, mode="clip"), (X, I)),
    ("take_along_axis", lambda a: jnp.take_along_axis(a, jnp.argsort(a, axis=0), axis=0),
     lambda a: np.take_along_axis(a, np.argsort(a, axis=0), axis=0), (X,)),
    ("nan_to_num", lambda a: jnp.nan_to_num(a, nan=-1.0, posinf=9.0),
     lambda a: np.nan_to_num(a, nan=-1.0, posinf=9.0), (XN,)),
    ("nan_to_num default", jnp.nan_to_num, None, (XN,)),
    ("isclose", lambda a, b: jnp.isclose(a, b, rtol=0.5, equal_nan=True),
     lambda a, b: np.isclose(a, b, rtol=0.5, equal_nan=True), (XN, XN * 1.2)),
    ("allclose", lambda a, b: jnp.allclose(a, b, atol=0.5), lambda a, b: np.allclose(a, b, atol=0.5),
     (X, X + 0.25)),
    ("sinc", jnp.sinc, np.sinc, (np.append(V, 0.0).astype(np.float32),)),
    ("round", lambda a: jnp.round(a, 2), lambda a: np.round(a, 2), (X * 100,)),
    ("round int", lambda a: jnp.round(a, -1), lambda a: np.round(a, -1), (I * 7,)),
    ("median", jnp.median, np.median, (X,)),
    ("median axis keepdims", lambda a: jnp.median(a, axis=1, keepdims=True),
     lambda a: np.median(a, axis=1, keepdims=True), (X,)),
    ("percentile", lambda a: jnp.percentile(a, 30), lambda a: np.percentile(a, 30), (X,)),
    ("percentile array q", lambda a, q: jnp.percentile(a, q, axis=0),
     lambda a, q: np.percentile(a, q, axis=0), (X, np.array([0.0, 50.0, 100.0], np.float32))),
    ("nanpercentile", lambda a: jnp.nanpercentile(a, 40), lambda a: np.nanpercentile(a, 40),
     (np.where(np.isinf(XN), 0, XN),)),
    ("quantile", lambda a: jnp.quantile(a, 0.3), lambda a: np.quantile(a, 0.3), (V,)),
    ("nanmax", jnp.nanmax, np.nanmax, (np.where(np.isinf(XN), 0, XN),)),
    ("nanmin axis", lambda a: jnp.nanmin(a, axis=0), lambda a: np.nanmin(a, axis=0),
     (np.where(np.isinf(XN), 0, XN),)),
    ("nansum", jnp.nansum, np.nansum, (np.where(np.isinf(XN), 0, XN),)),
    ("nanmean axis", lambda a: jnp.nanmean(a, axis=1), lambda a: np.nanmean(a, axis=1),
     (np.where(np.isinf(XN), 0, XN),)),
    ("nanstd", lambda a: jnp.nanstd(a, ddof=1), lambda a: np.nanstd(a, ddof=1),
     (np.where(np.isinf(XN), 0, XN),)),
    ("ptp", lambda a: jnp.ptp(a, axis=0), lambda a: np.ptp(a, axis=0), (X,)),
    ("average weights", lambda a, w: jnp.average(a, axis=1, weights=w, returned=True),
     lambda a, w: np.average(a, axis=1, weights=w, returned=True), (X, np.abs(V[:5]))),
    ("argsort descending", lambda a: jnp.argsort(a, descending=True),
     lambda a: np.argsort(-a, kind="stable"), (V,)),
    ("count_nonzero", lambda a: jnp.count_nonzero(a, axis=0), lambda a: np.count_nonzero(a, 0),
     (I.reshape(1, 5) - 1,)),
    ("array_equal", jnp.array_equal, np.array_equal, (X, X)),
    ("ediff1d", lambda a, e: jnp.ediff1d(a, to_end=e), lambda a, e: np.ediff1d(a, to_end=e),
     (V, V[:2])),
    ("trace", lambda m: jnp.trace(m, 1), lambda m: np.trace(m, 1), (X,)),
    ("diagonal", lambda m: jnp.diagonal(m, -1), lambda m: np.diagonal(m, -1), (X,)),
    ("cross", jnp.cross, np.cross, (X[:, :3], X[:, 2:])),
    ("outer", jnp.outer, np.outer, (V, V[:3])),
    ("inner", jnp.inner, np.inner, (X, X)),
    ("vdot", jnp.vdot, np.vdot, (X, X)),
    ("kron", jnp.kron, np.kron, (X[:2, :3], X[:3, :2])),
    ("tensordot", lambda a, b: jnp.tensordot(a, b, ((1,), (0,))),
     lambda a, b: np.tensordot(a, b, ((1,), (0,))), (X, X)),
    ("resize", lambda a: jnp.resize(a, (3, 4)), lambda a: np.resize(a, (3, 4)), (V,)),
    ("append", jnp.append, np.append, (X, V)),
    ("append axis", lambda a, b: jnp.append(a, b, axis=0), lambda a, b: np.append(a, b, axis=0),
     (X, X[:2])),
    ("roll", lambda a: jnp.roll(a, 2), lambda a: np.roll(a, 2), (X,)),
    ("roll axes", lambda a: jnp.roll(a, (1, -2), axis=(0, 1)),
     lambda a: np.roll(a, (1, -2), axis=(0, 1)), (X,)),
    ("rot90", lambda a: jnp.rot90(a, 3), lambda a: np.rot90(a, 3), (X,)),
    ("stack", lambda a, b: jnp.stack([a, b], axis=1), lambda a, b: np.stack([a, b], axis=1),
     (X, X * 2)),
    ("vstack", lambda a, b: jnp.vstack((a, b)), lambda a, b: np.vstack((a, b)), (V, V)),
    ("hstack", lambda a, b: jnp.hstack([a, b]), lambda a, b: np.hstack([a, b]), (V, V[:2])),
    ("column_stack", lambda a, b: jnp.column_stack([a, b]),
     lambda a, b: np.column_stack([a, b]), (V, V)),
    ("dstack", lambda a, b: jnp.dstack([a, b]), lambda a, b: np.dstack([a, b]), (X, X)),
    ("concatenate", lambda a, b: jnp.concatenate([a, b], axis=1),
     lambda a, b: np.concatenate([a, b], axis=1), (X, X[:, :2])),
    ("concatenate rows", jnp.concatenate, np.concatenate, (X,)),
    ("frexp", jnp.frexp, np.frexp, (XN,)),
    ("modf", jnp.modf, np.modf, (XN * 3,)),
    ("trunc", jnp.trunc, np.trunc, (X * 3,)),
    ("log2", jnp.log2, np.log2, (np.abs(X) + 0.5,)),
    ("isinf", jnp.isinf, np.isinf, (XN,)),
    ("signbit", jnp.signbit, np.signbit, (np.append(X[0], -0.0).astype(np.float32),)),
    ("logical_not", jnp.logical_not, np.logical_not, (X,)),
    ("divmod", jnp.divmod, np.divmod, (X * 5, np.float32(1.5) + X * 0)),
    ("nanargmax axis", lambda a: jnp.nanargmax(a, axis=1), lambda a: np.nanargmax(a, axis=1),
     (np.where(np.isinf(XN), 0, XN),)),
    ("cumsum flat", jnp.cumsum, np.cumsum, (X,)),
    ("cumprod int", lambda a: jnp.cumprod(a, axis=0), lambda a: np.cumprod(a, axis=0), (I,)),
    ("nancumsum", lambda a: jnp.nancumsum(a, axis=1), lambda a: np.nancumsum(a, axis=1),
     (np.where(np.isinf(XN), 0, XN),)),
    ("select", lambda a, b: jnp.select([a > 0, a < -1], [a, b], 7.0),
     lambda a, b: np.select([a > 0, a < -1], [a, b], 7.0), (X, -X)),
    ("lexsort", lambda a, b: jnp.lexsort((a, b)), lambda a, b: np.lexsort((a, b)),
     (np.round(V), np.round(V[::-1] * 2))),
    ("vander", lambda a: jnp.vander(a, 4, increasing=True),
     lambda a: np.vander(a, 4, increasing=True), (V,)),
    ("i0", jnp.i0, np.i0, (X * 3,)),
    ("spacing", jnp.spacing, np.spacing, (XN,)),
    ("angle deg", lambda a: jnp.angle(a, deg=True), lambda a: np.angle(a, deg=True),
     (X + 1j * X.T,)),
    ("poly", jnp.poly, np.poly, (V[:4],)),
    ("sort_complex", jnp.sort_complex, np.sort_complex, (V,)),
    ("polyint", lambda p: jnp.polyint(p, 2), lambda p: np.polyint(p, 2), (V[:4],)),
    ("nonzero size", lambda a: jnp.nonzero(a, size=4, fill_value=-1),
     lambda a: tuple(np.append(i, [-1] * (4 - len(i))) for i in np.nonzero(a)), (I > 3,)),
    ("argwhere size", lambda a: jnp.argwhere(a, size=6), None, (X > 0.5,)),
    ("unique size", lambda a: jnp.unique(a, size=3, return_counts=True),
     lambda a: tuple(r[:3] for r in np.unique(a, return_counts=True)), (I,)),
]


def _leaves(r):
    return list(r) if isinstance(r, (tuple, list)) else [r]


def _dispatches(fn):
    """(result, number of primitives dispatched one by one) of ``fn()``."""
    seen = []
    orig = primitive_mod._eager_apply

    def counting(p, args, params):
        seen.append(p.name)
        return orig(p, args, params)
    primitive_mod.set_eager_apply(counting)
    try:
        return fn(), seen
    finally:
        primitive_mod.set_eager_apply(orig)


@pytest.mark.parametrize("name,f,ref,ops", CASES, ids=[c[0] for c in CASES])
def test_one_compiled_call_same_as_op_by_op_jit_and_numpy(name, f, ref, ops):
    args = [jnp.asarray(o) for o in ops]
    f(*args)  # compiled and cached
    got, seen = _dispatches(lambda: f(*args))
    assert seen == []
    with pyjax.disable_jit():
        plain = f(*args)
    jitted = pyjax.jit(f)(*args)
    for g, p, j in zip(_leaves(got), _leaves(plain), _leaves(jitted), strict=True):
        assert g.dtype == p.dtype == j.dtype and g.shape == p.shape == j.shape
        assert g.aval.weak_type == p.aval.weak_type == j.aval.weak_type
        # the program of jit's; op by op, XLA's rounding may differ (fused multiply-adds)
        np.testing.assert_array_equal(np.asarray(g), np.asarray(j))
        np.testing.assert_allclose(np.asarray(g), np.asarray(p), rtol=2e-6, atol=1e-6)
    if ref is not None:
        want = ref(*ops)
        for g, w in zip(_leaves(got), _leaves(want)):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-5)


def test_repeated_calls_compile_once():
    x, v = jnp.asarray(X), jnp.asarray(V)
    calls = [lambda: jnp.searchsorted(v, v), lambda: jnp.linspace(0.0, 1.0, 5),
             lambda: jnp.triu(x, 1), lambda: jnp.percentile(x, 50),
             lambda: jnp.stack([x, x]), lambda: jnp.nonzero(v > 0, size=3),
             lambda: jnp.histogram(v, bins=3),
             lambda: jnp.nan_to_num(v, nan=float("nan"))]  # (a new NaN each call: op by op)
    for c in calls:
        c()
    with count_compiles() as n:
        for _ in range(3):
            for c in calls:
                c()
    assert n() == 0


def test_python_scalar_operands_are_not_constants():
    # start/stop and q are operands: new values reuse the compiled call, with their values
    jnp.linspace(0.0, 1.0, 5)
    with count_compiles() as n:
        for lo in (2.0, -3.5):
            np.testing.assert_allclose(np.asarray(jnp.linspace(lo, 1.0, 5)),
                                       np.linspace(lo, 1.0, 5), rtol=1e-6)
    assert n() == 0
    x = jnp.asarray(X)
    for q in (10.0, 90.0):
        np.testing.assert_allclose(np.asarray(jnp.percentile(x, q)), np.percentile(X, q),
                                   rtol=1e-5)


def _raises(exc, call, match=None):
    with pytest.raises(exc, match=match):
        call()


def test_integer_parameters_given_floats_raise_after_integer_calls():
    # 1.0 == 1 as a cache key: the float must still reach the function's own check
    x, v = jnp.asarray(X), jnp.asarray(V)
    for good, bad in [(lambda: jnp.triu(x, 1), lambda: jnp.triu(x, 1.0)),
                      (lambda: jnp.diag(v, 1), lambda: jnp.diag(v, 1.0)),
                      (lambda: jnp.rot90(x, 1), lambda: jnp.rot90(x, 1.0)),
                      (lambda: jnp.roll(x, 1), lambda: jnp.roll(x, 1.0)),
                      (lambda: jnp.round(x, 1), lambda: jnp.round(x, 1.0)),
                      (lambda: jnp.linspace(0, 1, 3), lambda: jnp.linspace(0, 1, 3.0)),
                      (lambda: jnp.diagonal(x, 1), lambda: jnp.diagonal(x, 1.0)),
                      (lambda: jnp.histogram(v, 3), lambda: jnp.histogram(v, 3.0)),
                      (lambda: jnp.nonzero(v, size=2), lambda: jnp.nonzero(v, size=2.0)),
                      (lambda: jnp.resize(v, (2, 2)), lambda: jnp.resize(v, (2, 2.0)))]:
        good()
        _raises(TypeError, bad)
    jnp.polyint(v, 1)
    _raises(ValueError, lambda: jnp.polyint(v, True), "non-negative static integer")


def test_bad_input_errors():
    x, v = jnp.asarray(X), jnp.asarray(V)
    _raises(ValueError, lambda: jnp.searchsorted(x, v), "1-dimensional")
    _raises(ValueError, lambda: jnp.searchsorted(v, v, side="middle"), "side")
    _raises(ValueError, lambda: jnp.digitize(v, x), "bins must be a 1-dimensional")
    _raises(ValueError, lambda: jnp.linspace(0, 1, -2), "negative")
    _raises(ValueError, lambda: jnp.triu(v), "at least 2D")
    _raises(ValueError, lambda: jnp.diag(jnp.ones((2, 2, 2))), "1d or 2d")
    _raises(ValueError, lambda: jnp.percentile(x, 150.0), r"range \[0, 1\]")
    _raises(ValueError, lambda: jnp.quantile(x, jnp.asarray([0.5, -0.1])), r"range \[0, 1\]")
    _raises(TypeError, lambda: jnp.percentile(x, [50]), "requires ndarray")
    _raises(ValueError, lambda: jnp.cross(x, x), "incompatible dimensions")
    _raises(ValueError, lambda: jnp.stack([x, v]), "same shape")
    _raises(TypeError, lambda: jnp.ptp(x > 0), "boolean")
    _raises(ValueError, lambda: jnp.nonzero(v, size=-1))
    _raises(ValueError, lambda: jnp.median(x, overwrite_input=True), "overwrite_input")
    _raises(TypeError, lambda: jnp.sum([x, x]), "sum requires ndarray or scalar arguments")


def test_lists_of_numpy_arrays_and_scalars():
    x = jnp.asarray(X)
    jnp.stack([X, x])
    got, seen = _dispatches(lambda: jnp.stack([X, x]))  # NumPy arrays are put on the device
    assert seen == []
    np.testing.assert_array_equal(np.asarray(got), np.stack([X, X]))
    got = jnp.stack([1.0, 2.0])  # Python scalars: the function makes one array of them
    assert got.dtype == jnp.float32
    np.testing.assert_array_equal(np.asarray(got), [1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(jnp.hstack([x[0], 3.0])),
                                  np.hstack([X[0], 3.0]))


def test_jit_with_none_operands_reuses_the_call():
    # a None among the dynamic arguments has no leaf; the first-level cache keys it by value
    f = pyjax.jit(lambda a, b, c: a * 2 if b is None else a + b + (0 if c is None else c))
    av, bv = np.arange(4, dtype=np.int32), np.arange(4, dtype=np.int32)[::-1] * 10
    a, b = jnp.asarray(av), jnp.asarray(bv)
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(f(a, None, None)), av * 2)
        np.testing.assert_array_equal(np.asarray(f(a, b, None)), av + bv)
        np.testing.assert_array_equal(np.asarray(f(a, None, b)), av * 2)
        np.testing.assert_array_equal(np.asarray(f(a, b, b)), av + 2 * bv)
        np.testing.assert_array_equal(np.asarray(f(a, b, c=b)), av + 2 * bv)
        np.testing.assert_array_equal(np.asarray(f(a, b=None, c=b)), av * 2)
        np.testing.assert_array_equal(np.asarray(f(b, c=None, b=a)), av + bv)
