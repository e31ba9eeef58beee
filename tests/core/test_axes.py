"""core/axes.py: the one checker of axis and shape arguments (rules and messages)."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax._src.core import axes
from pyjax.errors import ConcretizationTypeError


# ---- index ----

@pytest.mark.parametrize("value", [3, np.int8(3), np.int64(3), np.uint32(3), np.array(3),
                                   np.array(3, np.int16)])
def test_index_accepts_integers(value):
    out = axes.index(value)
    assert out == 3 and type(out) is int


def test_index_accepts_concrete_jax_integer_scalars():
    assert axes.index(jnp.int32(2)) == 2


def test_index_takes_bools_as_operator_index_does():  # as JAX (NumPy 2 refuses them)
    assert axes.index(True) == 1
    with pytest.raises(TypeError, match="numpy.bool"):  # not an index, for operator.index
        axes.index(np.bool_(False))


@pytest.mark.parametrize("value,words", [
    (1.5, ["1.5", "'float' object cannot be interpreted as an integer"]),
    (np.float32(2.0), ["2.0"]),
    ("1", ["'1'"]),
    (None, ["None"]),
    (np.array([1, 2]), ["array([1, 2])"]),
])
def test_index_rejects_non_integers_naming_the_value(value, words):
    with pytest.raises(TypeError) as e:
        axes.index(value, "axis", "sum")
    msg = str(e.value)
    assert msg.startswith("sum: axis must be an integer")
    for w in words:
        assert w in msg


def test_index_of_a_tracer_is_a_concretization_error():
    with pytest.raises(ConcretizationTypeError):
        pyjax.jit(lambda i: axes.index(i))(1)


# ---- canonicalize_axis ----

@pytest.mark.parametrize("axis,ndim,want", [(0, 1, 0), (-1, 1, 0), (2, 3, 2), (-3, 3, 0),
                                            (np.int64(-2), 3, 1), (np.array(1), 2, 1)])
def test_canonicalize_axis(axis, ndim, want):
    got = axes.canonicalize_axis(axis, ndim)
    assert got == want and type(got) is int


@pytest.mark.parametrize("axis,ndim", [(3, 3), (-4, 3), (0, 0), (-1, 0), (7, 2)])
def test_canonicalize_axis_out_of_bounds(axis, ndim):
    with pytest.raises(ValueError) as e:
        axes.canonicalize_axis(axis, ndim, fun="sum")
    # NumPy's AxisError: a ValueError and an IndexError, with NumPy's words
    assert isinstance(e.value, IndexError) and isinstance(e.value, axes.AxisError)
    assert str(e.value) == (f"sum: axis {axis} is out of bounds for array of dimension "
                            f"{ndim}")


def test_canonicalize_axis_names_other_arguments():
    with pytest.raises(ValueError, match=r"swapaxes: axis 4 is out of bounds for array of "
                                         r"dimension 2 \(argument `axis2`\)"):
        axes.canonicalize_axis(4, 2, "axis2", "swapaxes")


def test_canonicalize_axis_not_strict_leaves_ranges_to_the_caller():
    assert axes.canonicalize_axis(-1, 3, strict=False) == 2
    assert axes.canonicalize_axis(5, 3, strict=False) == 5
    assert axes.canonicalize_axis(-7, 3, strict=False) == -7
    with pytest.raises(TypeError, match="1.5"):
        axes.canonicalize_axis(1.5, 3, strict=False)


# ---- canonicalize_axes ----

@pytest.mark.parametrize("given,ndim,want", [
    (None, 3, (0, 1, 2)), (None, 0, ()), (1, 3, (1,)), (-1, 3, (2,)), ((), 2, ()),
    ((0, -1), 3, (0, 2)), ([2, 0], 3, (2, 0)), ((np.int32(1), np.int64(-3)), 3, (1, 0)),
])
def test_canonicalize_axes(given, ndim, want):
    got = axes.canonicalize_axes(given, ndim)
    assert got == want and all(type(a) is int for a in got)


def test_canonicalize_axes_repeated():
    with pytest.raises(ValueError, match=r"sum: repeated axis in `axis` argument: \(0, -3\)"):
        axes.canonicalize_axes((0, -3), 3, fun="sum")
    # unique=False leaves repeats to the caller (lax.squeeze reports them itself)
    assert axes.canonicalize_axes((0, -3), 3, unique=False) == (0, 0)


def test_canonicalize_axes_errors():
    with pytest.raises(TypeError, match="None"):
        axes.canonicalize_axes(None, 2, "source", "moveaxis", allow_none=False)
    with pytest.raises(TypeError, match=r"2\.0"):
        axes.canonicalize_axes((0, 2.0), 3)
    with pytest.raises(ValueError, match="axis 3 is out of bounds"):
        axes.canonicalize_axes((0, 3), 3)


# ---- canonicalize_shape ----

@pytest.mark.parametrize("given,want", [
    (3, (3,)), (np.int64(3), (3,)), (np.array(3), (3,)), ((), ()), ((2, 3), (2, 3)),
    ([np.int32(2), 0], (2, 0)), (np.array([4, 5]), (4, 5)), (jnp.array([1, 2]), (1, 2)),
])
def test_canonicalize_shape(given, want):
    got = axes.canonicalize_shape(given)
    assert got == want and all(type(d) is int for d in got)


@pytest.mark.parametrize("given,shown", [
    (2.5, "2.5"), ((2, 2.5), "(2, 2.5)"), ("ab", "'ab'"), ((2, None), "(2, None)"),
    ((True, 2), "(True, 2)"), (np.ones((2, 2), np.int32), "rank 2"),
])
def test_canonicalize_shape_type_errors(given, shown):
    with pytest.raises(TypeError) as e:
        axes.canonicalize_shape(given, "shape", "zeros")
    msg = str(e.value)
    assert msg.startswith("zeros: shapes must be 1D sequences of concrete values of integer "
                          "type, got `shape`")
    assert shown in msg


def test_canonicalize_shape_negative_dimensions():
    with pytest.raises(ValueError, match=r"zeros: negative dimensions are not allowed, got "
                                         r"`shape` \(2, -1\)") as e:
        axes.canonicalize_shape((2, -1), "shape", "zeros")
    assert isinstance(e.value, TypeError)  # lax-style callers catch TypeError
    assert axes.canonicalize_shape((2, -1), allow_negative=True) == (2, -1)


def test_canonicalize_shape_scalar_ok():
    with pytest.raises(TypeError, match="got `new_sizes` 6"):
        axes.canonicalize_shape(6, "new_sizes", "reshape", scalar_ok=False)


def test_canonicalize_shape_of_a_tracer_is_a_concretization_error():
    with pytest.raises(ConcretizationTypeError):
        pyjax.jit(lambda n: axes.canonicalize_shape((2, n)))(3)


# ---- reshape_shape ----

@pytest.mark.parametrize("old,new,want", [
    ((2, 3), (3, 2), (3, 2)), ((2, 3), -1, (6,)), ((2, 3), (-1, 2), (3, 2)),
    ((2, 3), 6, (6,)), ((0, 3), (-1, 3), (0, 3)), ((), (1, 1), (1, 1)),
    ((4,), (np.int64(2), -1), (2, 2)),
])
def test_reshape_shape(old, new, want):
    assert axes.reshape_shape(old, new) == want
    assert np.zeros(old).reshape(new).shape == want  # NumPy agrees


def test_reshape_shape_errors():
    with pytest.raises(ValueError, match="can only specify one unknown dimension"):
        axes.reshape_shape((2, 3), (-1, -1))
    with pytest.raises(ValueError, match=r"invalid \(negative\) dimension in `shape` \(-2, 3\)"):
        axes.reshape_shape((2, 3), (-2, 3))
    with pytest.raises(TypeError, match=r"cannot reshape array of shape \(2, 3\) \(size 6\) "
                                        r"into shape \(4,\) \(size 4\)"):
        axes.reshape_shape((2, 3), 4)
    with pytest.raises(TypeError, match=r"cannot reshape .* into shape \(-1, 4\)"):
        axes.reshape_shape((2, 3), (-1, 4))
    with pytest.raises(TypeError, match="1.5"):
        axes.reshape_shape((2, 3), (1.5, 4))


# ---- one definition of each value helper ----

def test_aval_of_and_shape_of_are_shared():
    from pyjax._src.control_flow import common
    from pyjax._src.core import trace
    from pyjax._src.interpreters import ad
    from pyjax._src.lax import ad_util, base, batch_util
    from pyjax._src.numpy import util
    assert base.aval_of is common.aval_of is util.aval_of is trace.aval_of
    assert batch_util.shape_of is util.shape_of is trace.shape_of
    assert ad.tangent_aval is ad_util.tangent_aval
    assert ad.instantiate is ad_util.instantiate
    assert trace.shape_of([[1, 2, 3]]) == (1, 3)
    assert trace.shape_of(jnp.zeros((2, 0))) == (2, 0)
    assert trace.aval_of(np.float32(1)).dtype == np.float32


def test_instantiate_zeros_keep_dtype_and_weak_type():
    from pyjax._src.core import dtypes
    from pyjax._src.core.abstract import ShapedArray
    from pyjax._src.core.rules import Zero
    from pyjax._src.lax import ad_util
    z = ad_util.instantiate(Zero(ShapedArray((2, 3), np.dtype(np.float32), True)))
    assert z.shape == (2, 3) and z.dtype == np.float32 and z.aval.weak_type
    np.testing.assert_array_equal(np.asarray(z), np.zeros((2, 3), np.float32))
    f0 = ad_util.instantiate(Zero(ad_util.tangent_aval(ShapedArray((4,), np.dtype(np.int32)))))
    assert f0.shape == (4,) and f0.dtype == dtypes.float0
    x = jnp.ones(3)
    assert ad_util.instantiate(x) is x
