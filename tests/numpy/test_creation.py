"""Array creation (``pyjax.numpy`` creation functions and scalar types) against NumPy."""
import warnings

import ml_dtypes
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax._src.core.trace import Tracer

bf16 = np.dtype(ml_dtypes.bfloat16)


def check(x, expected, dtype=None, weak=None, rtol=1e-6, atol=0):
    assert isinstance(x, pyjax.Array)
    expected = np.asarray(expected)
    assert x.shape == expected.shape, (x.shape, expected.shape)
    if dtype is not None:
        assert x.dtype == np.dtype(dtype), (x.dtype, dtype)
    if weak is not None:
        assert x.weak_type == weak
    np.testing.assert_allclose(np.asarray(x).astype(np.float64) if x.dtype == bf16
                               else np.asarray(x), expected, rtol=rtol, atol=atol)


# ---- scalar types and dtype API ----

@pytest.mark.parametrize("name", ["bool_", "int8", "int16", "int32", "uint8", "uint16", "uint32",
                                  "float16", "bfloat16", "float32", "complex64"])
def test_scalar_type_call(name):
    t = getattr(jnp, name)
    x = t(3)
    assert x.shape == () and not x.weak_type
    assert x.dtype == np.dtype(t.dtype)
    assert np.dtype(t) == t.dtype
    assert jnp.zeros(2, t).dtype == t.dtype
    assert np.asarray(x).item() == (True if name == "bool_" else 3)


def test_scalar_types_as_dtypes():
    assert jnp.float32.dtype == np.float32
    assert jnp.dtype(jnp.bfloat16) == bf16
    assert jnp.dtype("float64") == np.float64  # jnp.dtype is np.dtype
    assert jnp.float32 == np.float32 and hash(jnp.float32) == hash(np.float32)
    assert jnp.result_type(jnp.int8, jnp.float16) == np.float16
    assert jnp.issubdtype(jnp.bfloat16, jnp.floating)
    assert jnp.issubdtype(jnp.uint8, jnp.unsignedinteger)
    assert not jnp.issubdtype(jnp.int8, jnp.floating)
    assert jnp.float32(np.arange(3)).dtype == np.float32
    assert isinstance(np.float32(1), jnp.float32)


def test_scalar_type_x64_warning():
    with pytest.warns(UserWarning, match="float64"):
        x = jnp.float64(1)
    assert x.dtype == np.float32


def test_scalar_type_x64_enabled(x64):
    assert jnp.float64(1).dtype == np.float64
    assert jnp.int_(1).dtype == np.int64
    assert jnp.array(1.5).dtype == np.float64
    assert jnp.arange(3).dtype == np.int64


def test_dtype_queries():
    assert jnp.promote_types(jnp.int8, jnp.uint8) == np.int16
    assert jnp.promote_types("bfloat16", "float16") == np.float32
    assert jnp.result_type(jnp.ones(2, jnp.int8), 1) == np.int8
    assert jnp.result_type(jnp.ones(2, jnp.int8), 1.0) == np.float32
    assert jnp.finfo(jnp.bfloat16).bits == 16
    assert jnp.finfo(jnp.float32).eps == np.finfo(np.float32).eps
    assert jnp.iinfo(jnp.int8).max == 127
    assert jnp.iinfo(jnp.ones(2, jnp.uint8)).max == 255
    assert jnp.isdtype(jnp.float32, "real floating")
    assert jnp.isdtype(jnp.int8, ("integral", "bool"))
    assert not jnp.isdtype(jnp.int8, "real floating")
    assert jnp.can_cast(jnp.int8, jnp.int32) and not jnp.can_cast(jnp.float32, jnp.int32)
    assert jnp.iscomplexobj(jnp.ones(2, jnp.complex64)) and jnp.iscomplexobj(1j)
    assert not jnp.iscomplexobj(jnp.ones(2)) and jnp.isrealobj(jnp.ones(2))


def test_isscalar_ndim_shape_size():
    assert jnp.isscalar(1.0) and jnp.isscalar(np.float32(1)) and jnp.isscalar(jnp.array(1))
    assert jnp.isscalar(np.array(2.0))
    assert not jnp.isscalar(jnp.ones(2)) and not jnp.isscalar([1]) and not jnp.isscalar("a")
    x = jnp.ones((2, 3))
    assert jnp.ndim(x) == 2 and jnp.shape(x) == (2, 3) and jnp.size(x) == 6
    assert jnp.size(x, 1) == 3 and jnp.ndim([[1, 2]]) == 2 and jnp.shape(3.0) == ()


def test_constants():
    assert jnp.pi == np.pi and jnp.e == np.e and jnp.inf == np.inf and np.isnan(jnp.nan)
    assert jnp.euler_gamma == np.euler_gamma and jnp.newaxis is None


# ---- array / asarray ----

def test_array_python_scalars_weak():
    check(jnp.array(1.0), 1.0, np.float32, weak=True)
    check(jnp.array(3), 3, np.int32, weak=True)
    check(jnp.array(True), True, np.bool_, weak=False)
    check(jnp.array(1 + 2j), 1 + 2j, np.complex64, weak=True)
    check(jnp.array(1.0, dtype=jnp.bfloat16), 1.0, bf16, weak=False)
    check(jnp.asarray(2.5), 2.5, np.float32, weak=True)


def test_array_lists():
    check(jnp.array([1, 2, 3]), [1, 2, 3], np.int32, weak=False)
    check(jnp.array([1, 2.5]), [1, 2.5], np.float32, weak=False)
    check(jnp.array([[1, 2], [3, 4]], dtype=jnp.uint8), [[1, 2], [3, 4]], np.uint8)
    check(jnp.array([np.int8(1), 2]), [1, 2], np.int8)
    check(jnp.array([True, 2]), [1, 2], np.int32)
    check(jnp.array((1j, 2)), [1j, 2], np.complex64)
    check(jnp.array([]), np.zeros(0), np.float32)
    check(jnp.array([jnp.ones(2, jnp.bfloat16), [1.0, 2.0]]), [[1, 1], [1, 2]], bf16)
    check(jnp.array([jnp.array(1, jnp.int8), jnp.array(2, jnp.int8)]), [1, 2], np.int8)


def test_array_numpy_inputs():
    check(jnp.array(np.arange(4.0)), np.arange(4.0), np.float32)  # canonicalized silently
    check(jnp.array(np.arange(4)), np.arange(4), np.int32)
    check(jnp.array(np.float16(1.5)), 1.5, np.float16, weak=False)
    check(jnp.array(np.ones((2, 0))), np.ones((2, 0)), np.float32)
    check(jnp.asarray(np.arange(3), dtype=jnp.float16), [0, 1, 2], np.float16)


def test_array_from_array_and_copy():
    x = jnp.arange(4)
    y = jnp.array(x)
    check(y, np.arange(4), np.int32)
    assert jnp.asarray(x) is x
    z = jnp.array(x, dtype=jnp.float32)
    check(z, np.arange(4), np.float32)
    c = jnp.copy(x)
    x.delete()
    check(c, np.arange(4), np.int32)


def test_array_dtype_float64_warns():
    with pytest.warns(UserWarning, match="Explicitly requested dtype"):
        x = jnp.array([1.0], dtype=np.float64)
    assert x.dtype == np.float32
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jnp.array(np.ones(2))  # implicit float64 input: no warning


def test_array_ndmin():
    check(jnp.array(1.0, ndmin=2), [[1.0]], np.float32)
    check(jnp.array([1, 2], ndmin=3), [[[1, 2]]], np.int32)
    assert jnp.array([[1]], ndmin=1).shape == (1, 1)


def test_array_invalid_inputs():
    with pytest.raises(TypeError):
        jnp.array("abc")
    with pytest.raises(TypeError):
        jnp.array([None, 1])
    with pytest.raises(TypeError):
        jnp.array(object())
    with pytest.raises(TypeError):
        jnp.array(np.array(["a", "b"]))
    with pytest.raises(ValueError):
        jnp.array([[1, 2], [3]])
    with pytest.raises(OverflowError):
        jnp.array([2 ** 40])
    with pytest.raises(OverflowError):
        jnp.array(2 ** 40)


def test_array_of_tracers_under_jit():
    def f(a, b):
        return jnp.array([[a, b], [b, 3.0]])
    out = pyjax.jit(f)(jnp.float32(1.5), jnp.float32(2.0))
    check(out, [[1.5, 2.0], [2.0, 3.0]], np.float32)

    def g(a):
        return jnp.array([a, 2], dtype=jnp.int8)
    check(pyjax.jit(g)(jnp.int32(7)), [7, 2], np.int8)

    def h(a):
        arr = jnp.array([a, a])
        assert isinstance(arr, Tracer)
        return arr
    check(pyjax.jit(h)(jnp.ones(3)), np.ones((2, 3)), np.float32)


def test_array_buffer_protocol():
    check(jnp.array(memoryview(np.arange(3, dtype=np.int16))), [0, 1, 2], np.int16)
    check(jnp.frombuffer(np.arange(3, dtype=np.float32).tobytes(), dtype=jnp.float32),
          [0, 1, 2], np.float32)


# ---- filled arrays ----

@pytest.mark.parametrize("dtype", [None, np.bool_, np.int8, np.uint32, np.float16, bf16,
                                   np.complex64])
def test_zeros_ones_full(dtype):
    exp_dt = np.float32 if dtype is None else dtype
    check(jnp.zeros((2, 3), dtype), np.zeros((2, 3)), exp_dt, weak=False)
    check(jnp.ones(4, dtype), np.ones(4), exp_dt, weak=False)
    check(jnp.empty((1, 2), dtype), np.zeros((1, 2)), exp_dt)
    check(jnp.full((2, 2), 1, dtype), np.ones((2, 2)), np.int32 if dtype is None else dtype)
    check(jnp.zeros((), dtype), 0, exp_dt)
    check(jnp.zeros((0, 3), dtype), np.zeros((0, 3)), exp_dt)


def test_full_weak_types_and_broadcast():
    check(jnp.full(3, 1.5), [1.5] * 3, np.float32, weak=True)
    check(jnp.full(3, np.float16(2)), [2] * 3, np.float16, weak=False)
    check(jnp.full((2, 3), jnp.array([1, 2, 3])), [[1, 2, 3]] * 2, np.int32)
    check(jnp.full((2,), 7, dtype=jnp.uint8), [7, 7], np.uint8)
    with pytest.raises(ValueError):
        jnp.full((2,), jnp.array([1, 2, 3]))


def test_like_functions():
    x = jnp.ones((2, 3), jnp.int8)
    check(jnp.zeros_like(x), np.zeros((2, 3)), np.int8)
    check(jnp.ones_like(x, dtype=jnp.float16), np.ones((2, 3)), np.float16)
    check(jnp.full_like(x, 4), np.full((2, 3), 4), np.int8)
    check(jnp.full_like(x, 4.7), np.full((2, 3), 4), np.int8)
    check(jnp.empty_like(x), np.zeros((2, 3)), np.int8)
    check(jnp.zeros_like(x, shape=(4,)), np.zeros(4), np.int8)
    check(jnp.ones_like(x, shape=5), np.ones(5), np.int8)
    check(jnp.zeros_like(2.0), 0.0, np.float32, weak=True)
    check(jnp.ones_like(np.arange(3.0)), np.ones(3), np.float32, weak=False)
    check(jnp.full_like(jnp.arange(2), jnp.array([5, 6])), [5, 6], np.int32)
    check(jnp.zeros_like(pyjax.ShapeDtypeStruct((2,), np.float16)), [0, 0], np.float16)


def test_invalid_shapes():
    with pytest.raises((ValueError, TypeError)):
        jnp.zeros(-1)
    with pytest.raises(ValueError):
        jnp.ones((2, -3))
    with pytest.raises(TypeError):
        jnp.zeros(-1)
    with pytest.raises(TypeError):
        jnp.zeros((2.0, 3))
    with pytest.raises(TypeError):
        jnp.ones("abc")
    with pytest.raises(TypeError):
        pyjax.jit(lambda n: jnp.zeros(n))(3)


def test_large_ones_does_not_build_host_array():
    x = jnp.ones((5000, 5000))
    assert x._npy is None  # nothing was uploaded from the host: a device broadcast
    assert x.shape == (5000, 5000) and x.dtype == np.float32
    assert float(x[0, 0] if hasattr(x, "__getitem__") else 1.0) == 1.0


def test_filled_under_jit():
    f = pyjax.jit(lambda a: jnp.zeros((2, 2)) + jnp.ones_like(a) * jnp.full((2, 2), 2.0))
    check(f(jnp.ones((2, 2), jnp.float32)), np.full((2, 2), 2.0), np.float32)


# ---- ranges ----

def test_arange():
    check(jnp.arange(5), np.arange(5), np.int32, weak=False)
    check(jnp.arange(0), np.arange(0), np.int32)
    check(jnp.arange(-3), np.arange(-3), np.int32)
    check(jnp.arange(3.5), np.arange(3.5), np.float32)
    check(jnp.arange(2, 9, 3), np.arange(2, 9, 3), np.int32)
    check(jnp.arange(10, 0, -2), np.arange(10, 0, -2), np.int32)
    check(jnp.arange(0, 1, 0.1), np.arange(0, 1, 0.1), np.float32, rtol=1e-6, atol=1e-6)
    check(jnp.arange(5, dtype=jnp.float16), np.arange(5), np.float16)
    check(jnp.arange(np.int8(4)), np.arange(4), np.int8)
    check(jnp.arange(jnp.array(4)), np.arange(4), np.int32)
    check(jnp.arange(1, 4, dtype=jnp.uint8), [1, 2, 3], np.uint8)


def test_arange_traced_bound_raises():
    with pytest.raises(TypeError, match="concrete"):
        pyjax.jit(lambda n: jnp.arange(n))(3)
    with pytest.raises(TypeError):
        pyjax.jit(lambda n: jnp.arange(0, n))(3)
    out = pyjax.jit(lambda x: jnp.arange(x.shape[0]) + x)(jnp.zeros(3, jnp.int32))
    check(out, [0, 1, 2], np.int32)


@pytest.mark.parametrize("endpoint", [True, False])
@pytest.mark.parametrize("num", [0, 1, 2, 7, 50])
def test_linspace(num, endpoint):
    out = jnp.linspace(-1.5, 4.0, num, endpoint=endpoint)
    check(out, np.linspace(-1.5, 4.0, num, endpoint=endpoint), np.float32, rtol=1e-6,
          atol=1e-6)
    out, step = jnp.linspace(0, 10, num, endpoint=endpoint, retstep=True)
    ref, ref_step = np.linspace(0, 10, num, endpoint=endpoint, retstep=True)
    check(out, ref, np.float32, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(step), ref_step, rtol=1e-6)


def test_linspace_arrays_axis_dtype():
    start, stop = np.array([0.0, 1.0]), np.array([[1.0, 3.0], [2.0, 5.0], [4.0, 4.0]])
    for axis in (0, 1, -1, 2):
        check(jnp.linspace(start, stop, 5, axis=axis), np.linspace(start, stop, 5, axis=axis),
              np.float32, rtol=1e-6, atol=1e-6)
    check(jnp.linspace(0, 10, 11, dtype=jnp.int32), np.linspace(0, 10, 11, dtype=np.int32),
          np.int32)
    check(jnp.linspace(0, 1, 3, dtype=jnp.float16), np.linspace(0, 1, 3), np.float16)
    assert jnp.linspace(jnp.ones(2, jnp.bfloat16), 2, 3).dtype == bf16
    with pytest.raises(ValueError):
        jnp.linspace(0, 1, -1)


def test_linspace_under_jit_with_traced_bounds():
    f = pyjax.jit(lambda a, b: jnp.linspace(a, b, 4))
    check(f(jnp.float32(0), jnp.float32(3)), [0, 1, 2, 3], np.float32, atol=1e-6)


def test_logspace_geomspace():
    check(jnp.logspace(0, 3, 4), np.logspace(0, 3, 4), np.float32, rtol=1e-5)
    check(jnp.logspace(0, 3, 4, base=2.0), np.logspace(0, 3, 4, base=2.0), np.float32,
          rtol=1e-5)
    check(jnp.logspace(1, 2, 3, endpoint=False), np.logspace(1, 2, 3, endpoint=False),
          np.float32, rtol=1e-5)
    check(jnp.geomspace(1, 1000, 4), np.geomspace(1, 1000, 4), np.float32, rtol=1e-5)
    check(jnp.geomspace(-2, -32, 5), np.geomspace(-2, -32, 5), np.float32, rtol=1e-5)
    check(jnp.geomspace(1, 16, 4, endpoint=False), np.geomspace(1, 16, 4, endpoint=False),
          np.float32, rtol=1e-5)


# ---- matrices ----

@pytest.mark.parametrize("n,m,k", [(3, None, 0), (3, 5, 1), (4, 2, -1), (3, 3, 5), (0, 2, 0),
                                   (2, 3, -3)])
def test_eye_tri(n, m, k):
    check(jnp.eye(n, m, k), np.eye(n, m, k), np.float32)
    check(jnp.eye(n, m, k, dtype=jnp.int8), np.eye(n, m, k), np.int8)
    check(jnp.tri(n, m, k), np.tri(n, m, k), np.float32)
    check(jnp.tri(n, m, k, dtype=bool), np.tri(n, m, k, dtype=bool), np.bool_)


def test_identity():
    check(jnp.identity(3), np.identity(3), np.float32)
    check(jnp.identity(2, dtype=jnp.bool_), np.identity(2, bool), np.bool_)
    with pytest.raises((ValueError, TypeError)):
        jnp.eye(-1)


@pytest.mark.parametrize("k", [-2, -1, 0, 1, 3])
def test_tril_triu(k):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    check(jnp.tril(a, k), np.tril(a, k), np.float32)
    check(jnp.triu(a, k), np.triu(a, k), np.float32)
    b = np.arange(12, dtype=np.int8).reshape(4, 3)
    check(jnp.tril(b, k), np.tril(b, k), np.int8)
    check(jnp.triu(b, k), np.triu(b, k), np.int8)


def test_tril_requires_2d():
    with pytest.raises(ValueError):
        jnp.tril(jnp.ones(3))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
def test_meshgrid(indexing, sparse):
    a, b, c = np.arange(3), np.arange(4.0), np.arange(2, dtype=np.int8)
    for args in [(a,), (a, b), (a, b, c)]:
        outs = jnp.meshgrid(*args, indexing=indexing, sparse=sparse)
        refs = np.meshgrid(*args, indexing=indexing, sparse=sparse)
        assert len(outs) == len(refs)
        for o, r in zip(outs, refs):
            check(o, r, jnp.array(r).dtype)
    with pytest.raises(ValueError):
        jnp.meshgrid(np.ones((2, 2)))


@pytest.mark.parametrize("k", [-2, 0, 1])
def test_diag(k):
    v = np.array([1, 2, 3], np.int32)
    check(jnp.diag(v, k), np.diag(v, k), np.int32)
    check(jnp.diagflat(np.array([[1.0, 2.0]]), k), np.diagflat([[1.0, 2.0]], k), np.float32)
    m = np.arange(12.0).reshape(3, 4)
    check(jnp.diag(m, k), np.diag(m, k), np.float32)


def test_copy_and_astype():
    x = jnp.arange(3)
    check(jnp.copy(x), [0, 1, 2], np.int32)
    check(jnp.astype(x, jnp.float16), [0, 1, 2], np.float16)
    with pytest.warns(np.exceptions.ComplexWarning):
        y = jnp.astype(jnp.array([1 + 2j]), jnp.float32)
    check(y, [1.0], np.float32)
