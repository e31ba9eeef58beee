"""Every jnp (and lax) function's axis and shape arguments follow one set of rules: NumPy
integers are accepted, floats and bools raise TypeError, out-of-range axes raise ValueError
(NumPy's AxisError), repeated axes raise ValueError; each message names the bad value.
Oracles are NumPy's results for the accepted values."""
import re

import numpy as np
import pytest

import pyjax
import pyjax.lax as lax
import pyjax.numpy as jnp

X = np.arange(6, dtype=np.float32).reshape(2, 3) + 1
IDX = np.array([[0, 2, 1], [1, 0, 0]])

# name -> (pyjax call, NumPy call), both taking the axis argument; arrays of rank 2 (3 for the
# functions whose axis counts in the result)
SINGLE = {
    "sum": (lambda ax: jnp.sum(X, axis=ax), lambda ax: np.sum(X, axis=ax)),
    "mean": (lambda ax: jnp.mean(X, axis=ax), lambda ax: np.mean(X, axis=ax)),
    "prod": (lambda ax: jnp.prod(X, axis=ax), lambda ax: np.prod(X, axis=ax)),
    "max": (lambda ax: jnp.max(X, axis=ax), lambda ax: np.max(X, axis=ax)),
    "min": (lambda ax: jnp.min(X, axis=ax), lambda ax: np.min(X, axis=ax)),
    "any": (lambda ax: jnp.any(X > 3, axis=ax), lambda ax: np.any(X > 3, axis=ax)),
    "all": (lambda ax: jnp.all(X > 3, axis=ax), lambda ax: np.all(X > 3, axis=ax)),
    "std": (lambda ax: jnp.std(X, axis=ax), lambda ax: np.std(X, axis=ax)),
    "var": (lambda ax: jnp.var(X, axis=ax), lambda ax: np.var(X, axis=ax)),
    "nansum": (lambda ax: jnp.nansum(X, axis=ax), lambda ax: np.nansum(X, axis=ax)),
    "median": (lambda ax: jnp.median(X, axis=ax), lambda ax: np.median(X, axis=ax)),
    "ptp": (lambda ax: jnp.ptp(X, axis=ax), lambda ax: np.ptp(X, axis=ax)),
    "count_nonzero": (lambda ax: jnp.count_nonzero(X > 3, axis=ax),
                      lambda ax: np.count_nonzero(X > 3, axis=ax)),
    "argmax": (lambda ax: jnp.argmax(X, axis=ax), lambda ax: np.argmax(X, axis=ax)),
    "argmin": (lambda ax: jnp.argmin(X, axis=ax), lambda ax: np.argmin(X, axis=ax)),
    "nanargmax": (lambda ax: jnp.nanargmax(X, axis=ax), lambda ax: np.nanargmax(X, axis=ax)),
    "cumsum": (lambda ax: jnp.cumsum(X, axis=ax), lambda ax: np.cumsum(X, axis=ax)),
    "cumprod": (lambda ax: jnp.cumprod(X, axis=ax), lambda ax: np.cumprod(X, axis=ax)),
    "nancumsum": (lambda ax: jnp.nancumsum(X, axis=ax), lambda ax: np.nancumsum(X, axis=ax)),
    "cumulative_sum": (lambda ax: jnp.cumulative_sum(X, axis=ax),
                       lambda ax: np.cumulative_sum(X, axis=ax)),
    "sort": (lambda ax: jnp.sort(X, axis=ax), lambda ax: np.sort(X, axis=ax)),
    "argsort": (lambda ax: jnp.argsort(X, axis=ax), lambda ax: np.argsort(X, axis=ax)),
    "flip": (lambda ax: jnp.flip(X, axis=ax), lambda ax: np.flip(X, axis=ax)),
    "roll": (lambda ax: jnp.roll(X, 1, axis=ax), lambda ax: np.roll(X, 1, axis=ax)),
    "take": (lambda ax: jnp.take(X, np.array([1, 0]), axis=ax),
             lambda ax: np.take(X, np.array([1, 0]), axis=ax)),
    "take_along_axis": (lambda ax: jnp.take_along_axis(X, IDX[:1, :1] + 1, axis=ax),
                        lambda ax: np.take_along_axis(X, IDX[:1, :1] + 1, axis=ax)),
    "concatenate": (lambda ax: jnp.concatenate([X, X], axis=ax),
                    lambda ax: np.concatenate([X, X], axis=ax)),
    "stack": (lambda ax: jnp.stack([X, X], axis=ax), lambda ax: np.stack([X, X], axis=ax)),
    "expand_dims": (lambda ax: jnp.expand_dims(X, ax), lambda ax: np.expand_dims(X, ax)),
    "squeeze": (lambda ax: jnp.squeeze(X[:1, :1], ax), lambda ax: np.squeeze(X[:1, :1], ax)),
    "split": (lambda ax: jnp.split(X[:, :2], 2, axis=ax),
              lambda ax: np.split(X[:, :2], 2, axis=ax)),
    "array_split": (lambda ax: jnp.array_split(X, 2, axis=ax),
                    lambda ax: np.array_split(X, 2, axis=ax)),
    "unstack": (lambda ax: jnp.unstack(X, axis=ax), lambda ax: list(np.moveaxis(X, ax, 0))),
    "repeat": (lambda ax: jnp.repeat(X, 2, axis=ax), lambda ax: np.repeat(X, 2, axis=ax)),
    "moveaxis": (lambda ax: jnp.moveaxis(X, ax, 0), lambda ax: np.moveaxis(X, ax, 0)),
    "swapaxes": (lambda ax: jnp.swapaxes(X, ax, 0), lambda ax: np.swapaxes(X, ax, 0)),
    "diagonal": (lambda ax: jnp.diagonal(X, 0, ax, 1 - int(ax) % 2),
                 lambda ax: np.diagonal(X, 0, ax, 1 - int(ax) % 2)),
    "vecdot": (lambda ax: jnp.vecdot(X, X, axis=ax), lambda ax: np.vecdot(X, X, axis=ax)),
    "cross": (lambda ax: jnp.cross(X, X[::-1], axis=ax) if int(ax) % 2 else
              jnp.cross(X.T, X.T[::-1], axis=ax),
              lambda ax: np.cross(X, X[::-1], axis=ax) if int(ax) % 2 else
              np.cross(X.T, X.T[::-1], axis=ax)),
    "size": (lambda ax: jnp.size(X, ax), lambda ax: np.size(X, ax)),
    "linspace": (lambda ax: jnp.linspace(X[0], X[1], 4, axis=ax),
                 lambda ax: np.linspace(X[0], X[1], 4, axis=ax)),
    "unique": (lambda ax: jnp.unique(X, axis=ax), lambda ax: np.unique(X, axis=ax)),
    "method sum": (lambda ax: jnp.asarray(X).sum(axis=ax), lambda ax: X.sum(axis=ax)),
    "method argmax": (lambda ax: jnp.asarray(X).argmax(axis=ax), lambda ax: X.argmax(axis=ax)),
    "method cumsum": (lambda ax: jnp.asarray(X).cumsum(axis=ax), lambda ax: X.cumsum(axis=ax)),
    "method take": (lambda ax: jnp.asarray(X).take(np.array([0]), axis=ax),
                    lambda ax: X.take(np.array([0]), axis=ax)),
    "jit sum": (lambda ax: pyjax.jit(lambda x: jnp.sum(x, axis=ax))(X),
                lambda ax: np.sum(X, axis=ax)),
    "vmap sum": (lambda ax: pyjax.vmap(lambda x: jnp.sum(x[None], axis=ax))(X),
                 lambda ax: np.sum(X[:, None], axis=ax % 2 + 1)),
}

# functions taking a tuple of axes: must reject repeats (given as (0, -2) on a rank-2 array)
MULTI = {
    "sum": lambda ax: jnp.sum(X, axis=ax),
    "mean": lambda ax: jnp.mean(X, axis=ax),
    "prod": lambda ax: jnp.prod(X, axis=ax),
    "max": lambda ax: jnp.max(X, axis=ax),
    "min": lambda ax: jnp.min(X, axis=ax),
    "any": lambda ax: jnp.any(X, axis=ax),
    "all": lambda ax: jnp.all(X, axis=ax),
    "std": lambda ax: jnp.std(X, axis=ax),
    "var": lambda ax: jnp.var(X, axis=ax),
    "median": lambda ax: jnp.median(X, axis=ax),
    "flip": lambda ax: jnp.flip(X, axis=ax),
    "squeeze": lambda ax: jnp.squeeze(X[:1, :1], axis=ax),
    "expand_dims": lambda ax: jnp.expand_dims(X[0, 0], ax),
    "moveaxis": lambda ax: jnp.moveaxis(X, ax, (0, 1)),
    "transpose": lambda ax: jnp.transpose(X, ax),
    "rot90": lambda ax: jnp.rot90(X, 1, ax),
    "tensordot": lambda ax: jnp.tensordot(X, X, (ax, (0, 1))),
    "size": lambda ax: jnp.size(X, ax),
}


def _names(msg, value):
    return re.search(r"(?<![\w.\-])" + re.escape(str(value)) + r"(?![\w.])", msg) is not None


@pytest.mark.parametrize("name", list(SINGLE))
def test_numpy_integer_axes_match_numpy(name):
    fn, ref = SINGLE[name]
    for ax in (np.int64(1), np.int32(-2), np.array(1, np.int16)):
        got, want = fn(ax), ref(int(ax))
        if isinstance(want, list):
            assert len(got) == len(want)
            for g, w in zip(got, want):
                np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6)
        else:
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


@pytest.mark.parametrize("bad", [1.5, np.float64(1.0), "1"], ids=["float", "np.float64", "str"])
@pytest.mark.parametrize("name", list(SINGLE))
def test_non_integer_axis_raises_type_error(name, bad):
    fn, _ = SINGLE[name]
    with pytest.raises(TypeError) as e:
        fn(bad)
    assert _names(str(e.value), repr(bad) if isinstance(bad, str) else bad), str(e.value)


@pytest.mark.parametrize("name", list(SINGLE))
def test_bool_axis_is_operator_index(name):
    # as JAX (operator.index): True is axis 1, where NumPy 2 refuses a bool
    fn, _ = SINGLE[name]
    got, want = fn(True), fn(1)
    if isinstance(want, (list, tuple)):  # the split functions
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w))
    else:
        np.testing.assert_allclose(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("bad", [5, -5])
@pytest.mark.parametrize("name", list(SINGLE))
def test_out_of_range_axis_raises_value_error(name, bad):
    fn, _ = SINGLE[name]
    with pytest.raises(ValueError) as e:
        fn(bad)
    msg = str(e.value)
    assert "out of bounds" in msg and _names(msg, bad), msg
    assert isinstance(e.value, IndexError)  # NumPy's AxisError


@pytest.mark.parametrize("name", list(MULTI))
def test_repeated_axes_raise_value_error(name):
    with pytest.raises(ValueError) as e:
        MULTI[name]((0, -2))
    msg = str(e.value)
    assert re.search("repeated|not a permutation|duplicate|different", msg), msg
    assert "(0, -2)" in msg or "[0, -2]" in msg, msg


@pytest.mark.parametrize("name", list(MULTI))
def test_float_in_axes_tuple_raises_type_error(name):
    with pytest.raises(TypeError) as e:
        MULTI[name]((0, 1.5))
    assert _names(str(e.value), 1.5), str(e.value)


def test_axis_errors_name_the_function():
    with pytest.raises(TypeError, match=r"^sum: axis must be an integer, got 1\.5"):
        jnp.sum(X, axis=1.5)
    with pytest.raises(ValueError, match=r"^concatenate: axis 2 is out of bounds for array "
                                         r"of dimension 2$"):
        jnp.concatenate([X, X], axis=2)
    with pytest.raises(ValueError, match=r"^moveaxis: axis 3 .* \(argument `destination`\)"):
        jnp.moveaxis(X, 0, 3)


# ---- shapes ----

SHAPES = {
    "zeros": (lambda s: jnp.zeros(s), lambda s: np.zeros(s)),
    "ones": (lambda s: jnp.ones(s), lambda s: np.ones(s)),
    "empty": (lambda s: jnp.empty(s).shape, lambda s: np.empty(s).shape),
    "full": (lambda s: jnp.full(s, 2.0), lambda s: np.full(s, 2.0)),
    "zeros_like": (lambda s: jnp.zeros_like(X, shape=s), lambda s: np.zeros_like(X, shape=s)),
    "full_like": (lambda s: jnp.full_like(X, 3, shape=s), lambda s: np.full_like(X, 3, shape=s)),
    "broadcast_to": (lambda s: jnp.broadcast_to(X[0, 0], s),
                     lambda s: np.broadcast_to(X[0, 0], s)),
    "reshape": (lambda s: jnp.reshape(jnp.arange(6.0), s), lambda s: np.arange(6.0).reshape(s)),
    "method reshape": (lambda s: jnp.arange(6.0).reshape(s),
                       lambda s: np.arange(6.0).reshape(s)),
    "tile": (lambda s: jnp.tile(X, s), lambda s: np.tile(X, s)),
    "resize": (lambda s: jnp.resize(X, s), lambda s: np.resize(X, s)),
    "jit zeros": (lambda s: pyjax.jit(lambda: jnp.zeros(s))(), lambda s: np.zeros(s)),
}


@pytest.mark.parametrize("name", list(SHAPES))
def test_numpy_integer_shapes_match_numpy(name):
    fn, ref = SHAPES[name]
    for s in ((np.int64(3), 2), np.int32(6), [np.int8(2), 3], np.array([3, 2])):
        np.testing.assert_allclose(np.asarray(fn(s)), ref(s))


@pytest.mark.parametrize("bad,shown", [((2, 2.5), "(2, 2.5)"), (2.5, "2.5"),
                                       ((2, None), "(2, None)")],
                         ids=["float entry", "float", "None entry"])
@pytest.mark.parametrize("name", list(SHAPES))
def test_bad_shape_raises_type_error(name, bad, shown):
    fn, _ = SHAPES[name]
    with pytest.raises(TypeError) as e:
        fn(bad)
    assert shown in str(e.value), str(e.value)


@pytest.mark.parametrize("name", [n for n in SHAPES if "reshape" not in n and n != "tile"])
def test_negative_dimension_raises_value_error(name):
    fn, _ = SHAPES[name]
    with pytest.raises(ValueError) as e:
        fn((2, -3))
    assert "negative" in str(e.value) and "(2, -3)" in str(e.value), str(e.value)


def test_reshape_minus_one_and_errors():
    np.testing.assert_array_equal(np.asarray(jnp.reshape(jnp.arange(6), (np.int64(-1), 2))),
                                  np.arange(6).reshape(-1, 2))
    with pytest.raises(ValueError, match=r"invalid \(negative\) dimension in `newshape` "
                                         r"\(-2, 3\)"):
        jnp.reshape(jnp.arange(6), newshape=(-2, 3))
    with pytest.raises(TypeError, match=r"cannot reshape array of shape \(6,\) \(size 6\) "
                                        r"into shape \(4,\)"):
        jnp.reshape(jnp.arange(6), 4)


# ---- lax: types are checked by the wrappers, ranges by the primitives (JAX's messages) ----

I32 = np.dtype(np.int32)
LAX = {
    "reduce_sum": (lambda a: lax.reduce_sum(X, (a,)), lambda a: X.sum(a)),
    "reduce_max": (lambda a: lax.reduce_max(X, a), lambda a: X.max(a)),
    "argmax": (lambda a: lax.argmax(X, a, I32), lambda a: X.argmax(a)),
    "cumsum": (lambda a: lax.cumsum(X, a), lambda a: X.cumsum(a)),
    "sort": (lambda a: lax.sort(X[:, ::-1], a), lambda a: np.sort(X[:, ::-1], a)),
    "concatenate": (lambda a: lax.concatenate([X, X], a), lambda a: np.concatenate([X, X], a)),
    "squeeze": (lambda a: lax.squeeze(X[:, :1], (a,)), lambda a: np.squeeze(X[:, :1], a)),
    "expand_dims": (lambda a: lax.expand_dims(X, (a,)), lambda a: np.expand_dims(X, a)),
    "rev": (lambda a: lax.rev(X, (a,)), lambda a: np.flip(X, a)),
    "transpose": (lambda a: lax.transpose(X, (a, 0)), lambda a: X.transpose(a, 0)),
    "index_in_dim": (lambda a: lax.index_in_dim(X, 1, a), lambda a: np.take(X, [1], a)),
    "broadcasted_iota": (lambda a: lax.broadcasted_iota(I32, (2, 3), a),
                         lambda a: np.indices((2, 3))[a]),
    "reshape": (lambda a: lax.reshape(X, (a, 6)), lambda a: X.reshape(a, 6)),
    "broadcast_in_dim": (lambda a: lax.broadcast_in_dim(X, (a, 2, 3), (1, 2)),
                         lambda a: np.broadcast_to(X, (a, 2, 3))),
    "full": (lambda a: lax.full((a, 2), 1.0), lambda a: np.ones((a, 2))),
}


@pytest.mark.parametrize("name", list(LAX))
def test_lax_accepts_numpy_integers(name):
    fn, ref = LAX[name]
    np.testing.assert_allclose(np.asarray(fn(np.int64(1))), ref(1))


@pytest.mark.parametrize("name", list(LAX))
def test_lax_rejects_floats(name):
    fn, _ = LAX[name]
    with pytest.raises(TypeError) as e:
        fn(1.5)
    assert _names(str(e.value), 1.5), str(e.value)


@pytest.mark.parametrize("call,exc,match", [
    (lambda: lax.reduce_sum(X, (2,)), ValueError, r"axes \(2,\) contains out-of-bounds"),
    (lambda: lax.reduce_sum(X, (0, -2)), ValueError, r"duplicate value in 'axes'.*\(0, 0\)"),
    (lambda: lax.argmin(X, 2, I32), ValueError, "invalid axis"),
    (lambda: lax.cumsum(X, 5), ValueError, "out of bounds"),
    (lambda: lax.sort(X, -3), ValueError, "axis -3 is out of bounds"),
    (lambda: lax.squeeze(X, (2,)), ValueError, "axis 2 is out of bounds"),
    (lambda: lax.squeeze(np.ones((1, 1)), (0, -2)), ValueError, "not unique"),
    (lambda: lax.expand_dims(X, (1, -3)), ValueError, r"repeated axis .*\(1, -3\)"),
    (lambda: lax.transpose(X, (0, 0)), TypeError, r"isn't a permutation"),
    (lambda: lax.transpose(X, (1, -1)), TypeError, r"isn't a permutation"),
    (lambda: lax.reshape(X, (3, -2)), TypeError, "nonnegative"),
    (lambda: lax.reshape(X, 6), TypeError, "got `new_sizes` 6"),
    (lambda: lax.broadcast_in_dim(X, (2, 3), (0, 1.0)), TypeError, r"\(0, 1\.0\)"),
    (lambda: lax.concatenate([X, X], -1), TypeError, "dimension out of bounds"),
])
def test_lax_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_equal_keys_do_not_reuse_a_compiled_call():
    # 1.0 equals 1 as a static key of the eager compiled call; it must still raise (True is
    # axis 1 as JAX's operator.index makes it, and gives axis 1's result)
    np.testing.assert_allclose(np.asarray(jnp.sum(X, axis=1)), X.sum(1))
    np.testing.assert_allclose(np.asarray(jnp.argmax(X, 1)), X.argmax(1))
    np.testing.assert_allclose(np.asarray(jnp.sum(X, axis=True)), X.sum(1))
    for bad in (1.0, (0, 1.0)):
        with pytest.raises(TypeError):
            jnp.sum(X, axis=bad)
        with pytest.raises(TypeError):
            jnp.max(X, bad)
    with pytest.raises(TypeError):
        jnp.argmax(X, 1.0)
