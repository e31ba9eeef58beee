"""NumPy indexing on pyjax arrays against NumPy: ``x[idx]`` for basic, advanced and boolean
indices (eager, under jit, with traced indices), out-of-bounds clamping, ``.at[]`` updates,
``take`` / ``take_along_axis``, and the error paths."""
import warnings

import ml_dtypes
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax.errors import NonConcreteBooleanIndexError

F32, I32, U8, BOOL, BF16 = np.float32, np.int32, np.uint8, np.bool_, ml_dtypes.bfloat16


def _data(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if np.issubdtype(dt, np.integer):
        return rng.integers(0, 100, shape).astype(dt)
    return rng.uniform(-5, 5, shape).astype(dt)


def _eq(got, want):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)


XN = _data(F32, (3, 4, 5))
MASK = XN[..., 0] > 0

INDICES = [
    -1, (1, -2, 3), slice(None), slice(None, None, -1), (slice(3, 0, -2), 1),
    (slice(-2, None), Ellipsis, 1), (), None, (0, None, slice(1, 3), None), (slice(5, 1),),
    (slice(10, 20),), [2, 0, 2], np.array([[0, 1], [2, 2]]), ([0, 1], slice(None), [1, 2]),
    (slice(None), [0, 1], [1, 2]), (0, slice(None), [0, 1]), (slice(None), 0, [0, 1]),
    ([[0], [1]], slice(None, None, 2), [0, 1, 2]), (slice(None, None, -2), [1, 0]),
    ([0, 1], None, [0, 1]), (np.array([-1, -3]), -1), (None, [1], Ellipsis, None),
    np.array([True, False, True]), (MASK, 1), (slice(None), XN[0, :, 0] > 0),
    True, False, (Ellipsis, [0, 1], True), (False, [0]), np.array(1), np.array([], np.int32),
]


@pytest.mark.parametrize("i", range(len(INDICES)))
def test_getitem_matches_numpy(i):
    idx = INDICES[i]
    _eq(jnp.asarray(XN)[idx], XN[idx])


@pytest.mark.parametrize("dtype", [I32, U8, BOOL, BF16])
def test_getitem_dtypes(dtype):
    xn = _data(dtype, (4, 3))
    x = jnp.asarray(xn)
    for idx in [(slice(None, None, -1), 0), [3, 0], ([1, 2], [0, 2])]:
        _eq(x[idx], xn[idx])


def test_getitem_zero_d_and_empty():
    x0n = np.array(3.5, F32)
    x0 = jnp.asarray(x0n)
    for idx in [(), Ellipsis, None, True, False, (None, Ellipsis)]:
        _eq(x0[idx], x0n[idx])
    en = np.zeros((0, 3), F32)
    e = jnp.asarray(en)
    for idx in [slice(None), slice(1, None), [], (slice(None), [0, 2]), np.zeros(0, bool),
                (Ellipsis, 1), (slice(None), None, 2)]:
        _eq(e[idx], en[idx])
    with pytest.raises(IndexError):
        e[0]


def test_getitem_jit_static_and_traced_indices():
    x = jnp.asarray(XN)
    f = pyjax.jit(lambda a: a[1:, ::-2, [0, 3]])
    _eq(f(x), XN[1:, ::-2, [0, 3]])
    g = pyjax.jit(lambda a, i: a[i])
    for i in [np.int32(2), np.int32(-1), np.array([2, 0, -1], I32), np.array([[1], [0]], I32)]:
        _eq(g(x, i), XN[i])
    h = pyjax.jit(lambda a, i, j: a[i, :, j])  # separated advanced indices go first
    i, j = np.array([0, 2], I32), np.array([[4], [1]], I32)
    _eq(h(x, i, j), XN[i, :, j])
    k = pyjax.jit(lambda a, i: a[:, i, 1:3])
    _eq(k(x, np.int32(-2)), XN[:, -2, 1:3])
    # a concrete (non-traced) pyjax array as the index
    _eq(x[jnp.asarray(np.array([1, 1, 0], I32))], XN[[1, 1, 0]])
    _eq(x[jnp.asarray(XN[:, 0, 0] > 0)], XN[XN[:, 0, 0] > 0])


def test_getitem_jaxprs_stay_small():
    x = jnp.asarray(XN)
    text = str(pyjax.make_jaxpr(lambda a: a[1, ::2])(x))
    assert "gather" not in text and "slice" in text and "squeeze" in text
    text = str(pyjax.make_jaxpr(lambda a, i: a[i])(x, np.int32(1)))
    assert "gather" not in text and "dynamic_slice" in text
    text = str(pyjax.make_jaxpr(lambda a, i: a[i])(x, np.array([1], I32)))
    assert "gather" in text and "PROMISE_IN_BOUNDS" in text
    assert pyjax.make_jaxpr(lambda a: a[...])(x).jaxpr.eqns == []


def test_getitem_out_of_bounds_clamps():
    x = jnp.asarray(XN)
    _eq(x[10], XN[-1])
    _eq(x[-10], XN[0])
    _eq(x[:, 7, -9], XN[:, -1, 0])
    _eq(x[np.array([10, -10, 1])], XN[[2, 0, 1]])
    f = pyjax.jit(lambda a, i: a[i])
    _eq(f(x, np.int32(5)), XN[2])
    _eq(f(x, np.array([5, -5], I32)), XN[[2, 0]])
    _eq(x.at[np.array([1, 9])].get(mode="fill", fill_value=-1.0),
        np.concatenate([XN[1:2], np.full((1, 4, 5), -1.0, F32)]))
    got = np.asarray(x.at[9].get(mode="fill"))
    assert got.shape == (4, 5) and np.isnan(got).all()
    _eq(x.at[1, 9].get(mode="clip"), XN[1, -1])


def test_getitem_errors():
    x = jnp.asarray(XN[0, 0])  # 1-d
    with pytest.raises(IndexError, match="Too many indices: 1-dimensional array indexed with 2 "
                                         "regular indices"):
        x[0, 1]
    with pytest.raises(TypeError, match="integer or boolean"):
        x[1.0]
    with pytest.raises(TypeError, match="integer or boolean"):
        x[np.array([0.5])]
    with pytest.raises(TypeError, match="integer or boolean"):
        x[jnp.asarray(np.array([1.0], F32))]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., ...]
    with pytest.raises(IndexError, match="boolean index did not match"):
        x[np.array([True, False])]
    with pytest.raises(IndexError, match="could not be broadcast"):
        jnp.asarray(XN)[[0, 1], [0, 1, 2]]
    with pytest.raises(TypeError, match="non-tuple sequence"):
        x[[0, slice(None)]]
    with pytest.raises(ValueError, match="step cannot be zero"):
        x[::0]
    with pytest.raises(NonConcreteBooleanIndexError, match="where"):
        pyjax.jit(lambda a, m: a[m])(x, np.ones(5, bool))
    with pytest.raises(IndexError, match="static start/stop/step"):
        pyjax.jit(lambda a, i: a[i:])(x, np.int32(1))


# ---- .at[] ----

AT_INDICES = [1, -1, (0, 2), slice(1, None), (slice(None, None, -2), 1), (Ellipsis, 3),
              [0, 2], ([0, 1], [3, 3]), ([0, 1], slice(None), [1, 2]), (slice(None), 0, [0, 4]),
              MASK, (None, 1, slice(None, 2)), ()]


@pytest.mark.parametrize("i", range(len(AT_INDICES)))
def test_at_set_add_match_numpy(i):
    idx = AT_INDICES[i]
    x = jnp.asarray(XN)
    shape = XN[idx].shape
    y = _data(F32, shape, 7)
    want = XN.copy()
    want[idx] = y
    _eq(x.at[idx].set(y), want)
    want = XN.copy()
    want[idx] += y
    np.testing.assert_allclose(np.asarray(x.at[idx].add(y)), want, rtol=1e-6)
    if i % 4 == 0:
        want = XN.copy()
        want[idx] = 2.5  # a scalar broadcasts to the indexed shape
        _eq(x.at[idx].set(2.5), want)


DUP = (np.array([0, 2, 0, 0]), slice(None), np.array([1, 4, 1, 2]))


@pytest.mark.parametrize("method,ufunc", [
    ("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply), ("mul", np.multiply),
    ("min", np.minimum), ("max", np.maximum)])
def test_at_ops_accumulate_duplicates(method, ufunc):
    x = jnp.asarray(XN)
    y = _data(F32, XN[DUP].shape, 3)
    want = XN.copy()
    ufunc.at(want, DUP, y)
    np.testing.assert_allclose(np.asarray(getattr(x.at[DUP], method)(y)), want, rtol=1e-5)


def test_at_divide_power_apply_get():
    x = jnp.asarray(XN)
    idx = (np.array([1, 1, 2]), 0)
    y = np.array([2.0, 4.0, -0.5], F32)[:, None]
    want = XN.copy()
    np.divide.at(want, idx, y)
    np.testing.assert_allclose(np.asarray(x.at[idx].divide(y)), want, rtol=1e-6)
    xi = jnp.asarray(np.arange(6, dtype=I32))
    got = xi.at[[1, 4]].divide(2)
    assert got.dtype == np.float32  # true division, as in JAX
    np.testing.assert_allclose(np.asarray(got), [0, 0.5, 2, 3, 2, 5])
    want = np.abs(XN).copy()
    want[1, 2] **= 3
    np.testing.assert_allclose(np.asarray(jnp.asarray(np.abs(XN)).at[1, 2].power(3.0)), want,
                               rtol=1e-5)
    want = XN.copy()
    np.negative.at(want, ([0, 0, 2], 1))
    _eq(x.at[[0, 0, 2], 1].apply(jnp.negative), want)
    _eq(x.at[[2, 0], 1:3].get(), XN[[2, 0], 1:3])


def test_at_out_of_bounds_updates_are_dropped():
    xn = np.arange(10, dtype=F32)
    x = jnp.asarray(xn)
    idx = np.array([1, 12, -1, -11, 3])
    y = np.array([10, 20, 30, 40, 50], F32)
    want = xn.copy()
    want[[1, -1, 3]] += y[[0, 2, 4]]  # in-bounds part only (negatives count from the end)
    _eq(x.at[idx].add(y), want)
    want = xn.copy()
    want[[1, -1, 3]] = y[[0, 2, 4]]
    _eq(x.at[idx].set(y), want)
    _eq(x.at[15].set(99.0), xn)
    # mode="clip" clamps instead
    want = xn.copy()
    want[[9, 0]] = [1.0, 2.0]
    _eq(x.at[np.array([12, -20])].set(np.array([1.0, 2.0], F32), mode="clip"), want)
    # a 2-d update whose row index is out of bounds drops the whole row
    m = jnp.asarray(np.zeros((3, 4), F32))
    got = np.asarray(m.at[np.array([0, 5])].add(1.0))
    _eq(got, np.array([[1] * 4, [0] * 4, [0] * 4], F32))


def test_at_set_with_duplicates_takes_one_of_them():
    x = jnp.asarray(np.zeros(4, F32))
    got = np.asarray(x.at[np.array([2, 2, 2])].set(np.array([5.0, 6.0, 7.0], F32)))
    assert got[2] in (5.0, 6.0, 7.0) and (got[[0, 1, 3]] == 0).all()


def test_at_dtype_cast_broadcast_and_weak_type():
    xi = jnp.asarray(np.arange(5, dtype=I32))
    got = xi.at[1].set(7)
    assert got.dtype == np.int32
    with pytest.warns(FutureWarning, match="incompatible types"):
        got = xi.at[2].set(np.float32(3.7))
    _eq(got, np.array([0, 1, 3, 3, 4], I32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        xi.at[0].add(2.0)  # a weak Python float does not warn
    xb = jnp.asarray(np.zeros((2, 3), BOOL))
    _eq(xb.at[:, 1].set(True), np.array([[0, 1, 0]] * 2, BOOL))
    xw = jnp.asarray(np.zeros(3, F32)) + 0  # stays float32, not weak
    assert not xw.at[0].set(1.0).weak_type
    weak = pyjax.lax.add(1.0, 2.0)
    assert weak.weak_type
    w = pyjax.jit(lambda a: a.at[()].set(5))(weak)
    assert w.weak_type and w.dtype == weak.dtype and float(w) == 5.0
    assert pyjax.lax.add(jnp.zeros(3), 1.0)[1:].weak_type is False
    x = jnp.asarray(XN)
    y = np.arange(5, dtype=F32)  # broadcast along the leading dims
    want = XN.copy()
    want[:2] = y
    _eq(x.at[:2].set(y), want)
    want = XN.copy()
    want[0, 0] = y
    _eq(x.at[0, 0].set(y[None, None]), want)  # leading unit dims are dropped, as in NumPy
    with pytest.raises(ValueError, match="broadcast"):
        x.at[0].set(np.ones(3, F32))


def test_at_under_jit_with_traced_indices_and_values():
    x = jnp.asarray(XN)
    f = pyjax.jit(lambda a, i, v: a.at[i, 1].add(v))
    i, v = np.array([2, 0, 2], I32), _data(F32, (3, 5), 9)
    want = XN.copy()
    np.add.at(want, (i, 1), v)
    np.testing.assert_allclose(np.asarray(f(x, i, v)), want, rtol=1e-6)
    g = pyjax.jit(lambda a, k: a.at[k].set(0.0))
    want = XN.copy()
    want[-1] = 0
    _eq(g(x, np.int32(-1)), want)
    text = str(pyjax.make_jaxpr(lambda a, k: a.at[k].multiply(2.0))(x, np.array([1], I32)))
    assert "scatter-mul" in text and "FILL_OR_DROP" in text
    _eq(jnp.asarray(np.zeros((0, 2), F32)).at[[]].set(1.0), np.zeros((0, 2), F32))


# ---- take / take_along_axis ----

def test_take():
    xn = _data(F32, (3, 4))
    x = jnp.asarray(xn)
    _eq(jnp.take(x, np.array([0, 5, -1])), np.take(xn, [0, 5, -1]))
    _eq(jnp.take(x, np.array([[0, 3], [-2, 1]]), axis=1), np.take(xn, [[0, 3], [-2, 1]], axis=1))
    _eq(jnp.take(x, 1, axis=0), np.take(xn, 1, axis=0))
    got = np.asarray(jnp.take(x, np.array([1, 4, -5]), axis=1))
    assert np.isnan(got[:, 1:]).all() and (got[:, 0] == xn[:, 1]).all()  # default mode fill
    _eq(jnp.take(x, np.array([1, 4]), axis=1, mode="clip"), xn[:, [1, 3]])
    _eq(jnp.take(x, np.array([5, -5]), axis=1, mode="wrap"), np.take(xn, [5, -5], axis=1,
                                                                      mode="wrap"))
    xi = jnp.asarray(np.arange(4, dtype=I32))
    _eq(jnp.take(xi, np.array([7])), np.array([np.iinfo(np.int32).min], I32))
    _eq(jnp.take(xi, np.array([7]), fill_value=-3), np.array([-3], I32))
    f = pyjax.jit(lambda a, i: jnp.take(a, i, axis=0, mode="wrap"))
    _eq(f(x, np.array([4, -1], I32)), xn[[1, 2]])
    _eq(jnp.take(jnp.asarray(np.zeros((0, 2), F32)), np.array([], I32), axis=0),
        np.zeros((0, 2), F32))
    with pytest.raises(NotImplementedError):
        jnp.take(x, np.array([0]), mode="raise")
    with pytest.raises(NotImplementedError):
        jnp.take(x, np.array([0]), out=np.zeros(1))
    with pytest.raises(IndexError, match="empty axis"):
        jnp.take(jnp.asarray(np.zeros((0, 2), F32)), np.array([0]), axis=0)
    with pytest.raises(TypeError, match="integer"):
        jnp.take(x, np.array([0.5]))


def test_take_along_axis():
    xn = _data(F32, (3, 4, 5))
    x = jnp.asarray(xn)
    for axis in (0, 1, -1):
        ii = np.argsort(xn, axis=axis)
        _eq(jnp.take_along_axis(x, ii, axis=axis), np.take_along_axis(xn, ii, axis=axis))
    ii = np.array([[[0, 4]]])  # broadcasts against the other dims
    _eq(jnp.take_along_axis(x, ii, axis=2), np.take_along_axis(xn, ii, axis=2))
    ii = np.array([3, 0, -1])
    _eq(jnp.take_along_axis(x, ii, axis=None), np.take_along_axis(xn, ii, axis=None))
    got = np.asarray(jnp.take_along_axis(x, np.array([[[0]], [[9]], [[1]]]), axis=0))
    assert np.isnan(got[1]).all() and (got[0] == xn[0]).all() and (got[2] == xn[1]).all()
    f = pyjax.jit(lambda a, i: jnp.take_along_axis(a, i, axis=1))
    ii = np.argsort(xn, axis=1).astype(I32)
    _eq(f(x, ii), np.take_along_axis(xn, ii, axis=1))
    with pytest.raises(ValueError, match="same number of dimensions"):
        jnp.take_along_axis(x, np.array([0]), axis=0)
