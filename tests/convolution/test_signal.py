"""jnp.convolve / jnp.correlate against NumPy and pyjax.scipy.signal's direct convolutions
against SciPy, over modes, operand orders and dtypes; gradients by finite differences."""
import numpy as np
import pytest
import scipy.signal as osp_signal

import pyjax
import pyjax.numpy as jnp
import pyjax.scipy.signal as jsp_signal
from pyjax.test_util import check_grads

RNG = np.random.default_rng(0)
MODES = ["full", "same", "valid"]


def make(shape, dtype):
    if np.issubdtype(dtype, np.complexfloating):
        return (RNG.normal(size=shape) + 1j * RNG.normal(size=shape)).astype(dtype)
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(-5, 6, shape).astype(dtype)
    return RNG.normal(size=shape).astype(dtype)


@pytest.mark.parametrize("op", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("lens", [(7, 3), (4, 6), (5, 5)])
def test_jnp_matches_numpy(op, mode, lens):
    a, v = make(lens[0], np.float32), make(lens[1], np.float32)
    got = getattr(jnp, op)(a, v, mode=mode)
    want = getattr(np, op)(a, v, mode=mode)
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_jnp_dtypes_defaults_and_options():
    ai, vi = make(6, np.int32), make(3, np.int32)
    # integers give floats, as JAX (NumPy keeps ints); preferred_element_type keeps them exact
    out = jnp.convolve(ai, vi)
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), np.convolve(ai, vi))
    out = jnp.correlate(ai, vi, preferred_element_type=np.int32)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out), np.correlate(ai, vi))  # default 'valid'
    ac, vc = make(5, np.complex64), make(3, np.complex64)
    for mode in MODES:  # v is conjugated by correlate, as NumPy
        np.testing.assert_allclose(np.asarray(jnp.correlate(ac, vc, mode)),
                                   np.correlate(ac, vc, mode), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np.asarray(jnp.correlate(vc, ac, mode)),
                                   np.correlate(vc, ac, mode), rtol=1e-5, atol=1e-5)
    a, v = make(6, np.float32), make(3, np.float32)
    hi = jnp.convolve(a, v, precision="highest")
    np.testing.assert_allclose(np.asarray(hi), np.convolve(a, v), rtol=1e-5, atol=1e-5)
    jitted = pyjax.jit(lambda x, y: jnp.convolve(x, y, "same"))(a, v)
    np.testing.assert_array_equal(np.asarray(jitted), np.asarray(jnp.convolve(a, v, "same")))


@pytest.mark.parametrize("call,exc,match", [
    (lambda: jnp.convolve(np.ones((2, 2)), np.ones(2)), ValueError, "1-dimensional"),
    (lambda: jnp.correlate(np.ones(3), np.ones(0)), ValueError, "cannot be empty"),
    (lambda: jnp.convolve(np.ones(3), np.ones(2), mode="wide"), ValueError, "mode"),
    (lambda: jnp.convolve([1.0, 2.0], np.ones(2)), TypeError, "convolve"),
])
def test_jnp_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_jnp_gradients(x64):
    a, v = RNG.normal(size=6), RNG.normal(size=4)
    check_grads(lambda x, y: jnp.convolve(x, y, "same"), (a, v), order=1)
    check_grads(lambda x, y: jnp.correlate(x, y, "full"), (v, a), order=1, modes=("rev",))


# ---- scipy.signal ----

@pytest.mark.parametrize("op", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shapes", [((9,), (4,)), ((3, 5), (6, 7)), ((5, 4, 3), (2, 3, 3))],
                         ids=["1d", "2d-swapped", "3d"])
def test_signal_nd_matches_scipy(op, mode, shapes):
    a, b = make(shapes[0], np.float32), make(shapes[1], np.float32)
    got = getattr(jsp_signal, op)(a, b, mode=mode)
    want = getattr(osp_signal, op)(a.astype(np.float64), b.astype(np.float64), mode=mode,
                                   method="direct")
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("op", ["convolve2d", "correlate2d"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shapes", [((6, 5), (3, 2)), ((2, 3), (4, 5)), ((3, 4), (3, 4))],
                         ids=["larger-first", "larger-second", "same-shape"])
def test_signal_2d_matches_scipy(op, mode, shapes):
    a, b = make(shapes[0], np.complex64), make(shapes[1], np.complex64)
    got = getattr(jsp_signal, op)(a, b, mode=mode)
    want = getattr(osp_signal, op)(a.astype(np.complex128), b.astype(np.complex128),
                                   mode=mode)
    assert got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)


def test_signal_complex_correlate_ints_and_method():
    a, b = make((5, 3), np.complex64), make((2, 2), np.complex64)
    for mode in MODES:
        np.testing.assert_allclose(np.asarray(jsp_signal.correlate(a, b, mode)),
                                   osp_signal.correlate(a, b, mode, method="direct"),
                                   rtol=1e-4, atol=1e-4)
    ai, bi = make((6,), np.int32), make((3,), np.int32)
    out = jsp_signal.convolve(ai, bi, method="direct")
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), np.convolve(ai, bi))
    np.testing.assert_array_equal(np.asarray(jsp_signal.convolve(ai, bi, method="auto")),
                                  np.asarray(out))


def test_signal_fft_method_agrees_with_direct():
    a, b = make((6, 5), np.float32), make((3, 2), np.float32)
    for op in ("convolve", "correlate"):
        for mode in MODES:
            direct = getattr(jsp_signal, op)(a, b, mode, method="direct")
            fft = getattr(jsp_signal, op)(a, b, mode, method="fft")
            np.testing.assert_allclose(np.asarray(fft), np.asarray(direct), rtol=1e-4,
                                       atol=1e-4)


def test_signal_gradients(x64):
    a, b = RNG.normal(size=(4, 5)), RNG.normal(size=(2, 3))
    check_grads(lambda x, y: jsp_signal.convolve2d(x, y, "same"), (a, b), order=1)
    check_grads(lambda x, y: jsp_signal.correlate(x, y, "valid"), (a, b), order=1,
                modes=("rev",))


@pytest.mark.parametrize("call,exc,match", [
    (lambda a, b: jsp_signal.convolve2d(a, b, boundary="wrap"), NotImplementedError,
     "boundary='fill'"),
    (lambda a, b: jsp_signal.correlate2d(a, b, fillvalue=1), NotImplementedError,
     "fillvalue=0"),
    (lambda a, b: jsp_signal.convolve2d(a[0], b), ValueError, "2-dimensional"),
    (lambda a, b: jsp_signal.convolve(a, b, method="spectral"), ValueError, "method"),
    (lambda a, b: jsp_signal.convolve(a, b[0]), ValueError, "same number of dimensions"),
    (lambda a, b: jsp_signal.convolve(a, b.T), ValueError, "smaller than the other"),
    (lambda a, b: jsp_signal.correlate(a, b, mode="wide"), ValueError, "mode"),
    (lambda a, b: jsp_signal.convolve(a, b[:0]), ValueError, "zero-size"),
])
def test_signal_errors(call, exc, match):
    a, b = np.ones((4, 2), np.float32), np.ones((3, 1), np.float32)
    with pytest.raises(exc, match=match):
        call(a, b)
