"""pyjax.numpy as an array API standard (2024.12) namespace.

The function list below is the standard's, section by section; each function is checked to
exist and to agree with NumPy 2 (itself a conforming namespace) on a basic case."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp

F = np.array([[-1.5, 0.25, 2.0], [3.0, -0.0, 0.5]], np.float32)
G = np.array([[0.5, 1.0, -2.0], [1.0, 4.0, 0.75]], np.float32)
P = np.array([[0.1, 0.5, 0.9], [0.2, 0.3, 0.7]], np.float32)  # in the domains of acos, atanh...
Q = np.array([[1.5, 2.0, 3.0], [1.25, 4.0, 9.0]], np.float32)  # >= 1: acosh
I = np.array([[3, -1, 4], [1, -5, 9]], np.int32)
J = np.array([[1, 2, 0], [3, 1, 2]], np.int32)
B = np.array([[True, False, True], [False, False, True]])
V = np.array([1.0, 2.0, 3.0], np.float32)

# (name, args, kwargs): the standard's functions, by section
ELEMENTWISE = [
    ("abs", (F,), {}), ("acos", (P,), {}), ("acosh", (Q,), {}), ("add", (F, G), {}),
    ("asin", (P,), {}), ("asinh", (F,), {}), ("atan", (F,), {}), ("atan2", (F, G), {}),
    ("atanh", (P,), {}), ("bitwise_and", (I, J), {}), ("bitwise_left_shift", (I, J), {}),
    ("bitwise_invert", (I,), {}), ("bitwise_or", (I, J), {}),
    ("bitwise_right_shift", (I, J), {}), ("bitwise_xor", (I, J), {}), ("ceil", (F,), {}),
    ("clip", (F,), {"min": -1.0, "max": 1.0}), ("conj", (F,), {}), ("copysign", (G, F), {}),
    ("cos", (F,), {}), ("cosh", (F,), {}), ("divide", (F, G), {}), ("equal", (F, G), {}),
    ("exp", (F,), {}), ("expm1", (F,), {}), ("floor", (F,), {}),
    ("floor_divide", (I, J + 1), {}), ("greater", (F, G), {}), ("greater_equal", (F, G), {}),
    ("hypot", (F, G), {}), ("imag", (F,), {}), ("isfinite", (F,), {}), ("isinf", (F,), {}),
    ("isnan", (F,), {}), ("less", (F, G), {}), ("less_equal", (F, G), {}),
    ("log", (Q,), {}), ("log1p", (P,), {}), ("log2", (Q,), {}), ("log10", (Q,), {}),
    ("logaddexp", (F, G), {}), ("logical_and", (B, ~B), {}), ("logical_not", (B,), {}),
    ("logical_or", (B, ~B), {}), ("logical_xor", (B, B), {}), ("maximum", (F, G), {}),
    ("minimum", (F, G), {}), ("multiply", (F, G), {}), ("negative", (F,), {}),
    ("nextafter", (F, G), {}), ("not_equal", (F, G), {}), ("positive", (F,), {}),
    ("pow", (Q, G), {}), ("real", (F,), {}), ("reciprocal", (G,), {}),
    ("remainder", (I, J + 1), {}), ("round", (F,), {}), ("sign", (F,), {}),
    ("signbit", (F,), {}), ("sin", (F,), {}), ("sinh", (F,), {}), ("square", (F,), {}),
    ("sqrt", (Q,), {}), ("subtract", (F, G), {}), ("tan", (F,), {}), ("tanh", (F,), {}),
    ("trunc", (F,), {}),
]
OTHERS = [
    # indexing
    ("take", (V, np.array([2, 0])), {"axis": 0}),
    ("take_along_axis", (F, np.array([[2], [0]])), {"axis": 1}),
    # linear algebra
    ("matmul", (F, G.T), {}), ("matrix_transpose", (F,), {}),
    ("tensordot", (F, G), {"axes": 2}), ("vecdot", (F, G), {}),
    # manipulation
    ("broadcast_arrays", (F, V), {}), ("broadcast_to", (V, (2, 3)), {}),
    ("concat", ((F, G),), {"axis": 1}), ("expand_dims", (F,), {"axis": 1}),
    ("flip", (F,), {"axis": 1}), ("moveaxis", (F, 0, 1), {}),
    ("permute_dims", (F, (1, 0)), {}), ("repeat", (V, 2), {}), ("reshape", (F, (3, 2)), {}),
    ("roll", (F, 1), {"axis": 1}), ("squeeze", (F[:1],), {"axis": 0}),
    ("stack", ((F, G),), {"axis": 1}), ("tile", (V, (2,)), {}), ("unstack", (F,), {"axis": 1}),
    # searching
    ("argmax", (F,), {"axis": 1}), ("argmin", (F,), {"axis": 0}),
    ("count_nonzero", (I,), {"axis": 1}), ("nonzero", (I,), {}),
    ("searchsorted", (V, np.array([2.5, 0.0])), {}),
    ("searchsorted", (np.array([3.0, 1.0, 2.0], np.float32), np.array([2.5])),
     {"sorter": np.array([1, 2, 0])}),
    ("where", (B, F, G), {}),
    # sets
    ("unique_values", (J,), {}),
    # sorting
    ("argsort", (F,), {"axis": 1}), ("sort", (F,), {"axis": 0, "descending": True}),
    # statistics
    ("cumulative_prod", (V,), {"include_initial": True}),
    ("cumulative_sum", (F,), {"axis": 1, "include_initial": True}),
    ("max", (F,), {"axis": 0}), ("mean", (F,), {}), ("min", (F,), {"axis": 1}),
    ("prod", (F,), {}), ("std", (F,), {"correction": 1}), ("sum", (F,), {"axis": 1}),
    ("var", (F,), {"axis": 0}),
    # utilities
    ("all", (B,), {"axis": 0}), ("any", (B,), {"axis": 1}),
    # creation
    ("arange", (1, 7, 2), {}), ("asarray", (F,), {}), ("eye", (3,), {"k": 1}),
    ("full", ((2, 2), 3.0), {}), ("full_like", (F, 2.0), {}), ("linspace", (0.0, 1.0, 5), {}),
    ("meshgrid", (V, V[:2]), {"indexing": "ij"}), ("ones", ((2,),), {}),
    ("ones_like", (I,), {}), ("tril", (F,), {}), ("triu", (F,), {"k": 1}),
    ("zeros", ((2, 1),), {}), ("zeros_like", (B,), {}),
    # data types
    ("astype", (F, np.int32), {}),
]


def _same(got, want, name):
    if isinstance(want, tuple):
        assert isinstance(got, tuple), f"{name} returned {type(got).__name__}, not a tuple"
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w, name)
        return
    got = np.asarray(got)
    want = np.asarray(want)
    if want.dtype == np.float64 and got.dtype == np.float32:
        want = want.astype(np.float32)  # NumPy's Python-scalar results are 64-bit
    if want.dtype == np.int64 and got.dtype == np.int32:
        want = want.astype(np.int32)
    assert got.shape == want.shape, name
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("name,args,kwargs", ELEMENTWISE + OTHERS,
                         ids=[c[0] for c in ELEMENTWISE + OTHERS])
def test_function_agrees_with_numpy(name, args, kwargs):
    assert hasattr(jnp, name), f"pyjax.numpy has no {name}"
    if kwargs.get("descending"):  # NumPy's sort has no `descending`
        np_kwargs = {k: v for k, v in kwargs.items() if k != "descending"}
        want = np.flip(getattr(np, name)(*args, **np_kwargs), kwargs["axis"])
    else:
        want = getattr(np, name)(*args, **kwargs)
    if name == "unique_values":  # NumPy 2.3+ leaves them unsorted; JAX (and pyjax) sort
        want = np.sort(want)
    if isinstance(want, list):
        want = tuple(want)
    _same(getattr(jnp, name)(*args, **kwargs), want, name)


def test_empty_like_empty_and_diff():
    assert jnp.empty((2, 3)).shape == (2, 3) and jnp.empty_like(F).dtype == np.float32
    if not hasattr(jnp, "diff"):  # jnp.diff belongs to the missing-jnp-names work
        pytest.skip("jnp.diff not in this branch")
    _same(jnp.diff(F, axis=1), np.diff(F, axis=1), "diff")


def test_namespace_and_inspection():
    assert jnp.__array_api_version__ == "2024.12"
    x = jnp.asarray(F)
    assert x.__array_namespace__() is jnp
    assert x.__array_namespace__(api_version="2023.12") is jnp
    with pytest.raises(ValueError, match="Unsupported array API version"):
        x.__array_namespace__(api_version="2021.12")
    info = jnp.__array_namespace_info__()
    assert info.capabilities()["data-dependent shapes"] is False
    assert info.default_device() is None
    assert info.devices() == pyjax.devices()
    assert info.default_dtypes() == {"real floating": np.float32, "complex floating":
                                     np.complex64, "integral": np.int32, "indexing": np.int32}
    assert set(info.dtypes(kind="unsigned integer")) == {"uint8", "uint16", "uint32"}
    assert set(info.dtypes(kind=("bool", "complex floating"))) == {"bool", "complex64"}
    assert "float64" not in info.dtypes()
    with pytest.raises(ValueError, match="Unrecognized kind"):
        info.dtypes(kind="floaty")


def test_inspection_with_x64(x64):
    info = jnp.__array_namespace_info__()
    assert info.default_dtypes()["real floating"] == np.float64
    assert {"int64", "uint64", "float64", "complex128"} <= set(info.dtypes())


def test_device_to_device_and_dlpack():
    x = jnp.asarray(F)
    assert x.device in pyjax.devices()
    other = pyjax.devices()[1]
    y = x.to_device(other)
    assert y.devices() == {other}
    np.testing.assert_array_equal(y, F)
    with pytest.raises(NotImplementedError, match="stream"):
        x.to_device(other, stream=1)
    # DLPack both ways, through a host copy on CPU
    assert x.__dlpack_device__() == (1, 0)
    np.testing.assert_array_equal(np.from_dlpack(x), F)
    z = jnp.from_dlpack(np.asarray(I))
    assert z.dtype == np.int32
    np.testing.assert_array_equal(z, I)
    np.testing.assert_array_equal(jnp.from_dlpack(x, device=other).devices(), {other})
    with pytest.raises(ValueError, match="copy=False"):
        jnp.from_dlpack(x, copy=False)
    with pytest.raises(TypeError, match="__dlpack__"):
        jnp.from_dlpack([1, 2])


def test_unique_functions_return_named_tuples():
    x = jnp.array([3, 1, 3, 2, 1, 3])
    r = jnp.unique_all(x)
    w = np.unique_all(np.array([3, 1, 3, 2, 1, 3]))
    for field in ("values", "indices", "inverse_indices", "counts"):
        np.testing.assert_array_equal(getattr(r, field), getattr(w, field))
    c = jnp.unique_counts(x)
    np.testing.assert_array_equal(c.counts, [2, 1, 3])
    inv = jnp.unique_inverse(x)
    np.testing.assert_array_equal(inv.values[inv.inverse_indices], x)


def test_astype_copy_and_device_keywords():
    x = jnp.asarray(F)
    y = jnp.astype(x, jnp.int32, copy=True, device=pyjax.devices()[1])
    assert y.dtype == np.int32 and y.devices() == {pyjax.devices()[1]}


def test_empty_boolean_index():
    out = jnp.array([False])[jnp.array([], dtype=bool)]
    assert out.shape == (0,) and out.dtype == np.bool_
    assert jnp.ones((2, 3))[np.array([], dtype=bool)].shape == (0, 3)


def test_result_type_of_scalars():
    assert jnp.result_type(1, 2.0) == np.float32
    assert jnp.result_type(jnp.int8, 1) == np.int8
    assert jnp.result_type(jnp.float16, 1.0, 1) == np.float16
