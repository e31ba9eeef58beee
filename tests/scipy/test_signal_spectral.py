"""``pyjax.scipy.signal``'s FFT-based functions against ``scipy.signal``; derivatives against
finite differences in float64; ``jit`` and ``vmap``."""
import warnings

import numpy as np
import pytest
import scipy.signal as osp

import pyjax
import pyjax.scipy.signal as jsp
from pyjax._src.scipy.signal_spectral import get_window
from pyjax.test_util import check_grads

RNG = np.random.default_rng(2)


def _close(got, want, tol=2e-5):
    got = np.asarray(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    scale = max(1.0, float(np.max(np.abs(want)))) if np.size(want) else 1.0
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale)


# ---- fftconvolve ----

@pytest.mark.parametrize("s1,s2,axes", [((10,), (4,), None), ((7,), (9,), None),
                                        ((5, 6), (3, 4), None), ((3, 11), (1, 4), (1,)),
                                        ((4, 2, 9), (4, 1, 3), -1)])
def test_fftconvolve_modes(s1, s2, axes):
    a, b = RNG.normal(size=s1).astype(np.float32), RNG.normal(size=s2).astype(np.float32)
    for mode in ("full", "same", "valid"):
        got = jsp.fftconvolve(a, b, mode=mode, axes=axes)
        assert got.dtype == np.float32
        _close(got, osp.fftconvolve(a, b, mode=mode, axes=axes))


def test_fftconvolve_complex_and_integer():
    a = RNG.normal(size=8) + 1j * RNG.normal(size=8)
    _close(jsp.fftconvolve(a.astype(np.complex64), np.arange(3)), osp.fftconvolve(a, np.arange(3)))
    got = jsp.fftconvolve(np.arange(5), np.arange(3))
    assert got.dtype == np.float32
    _close(got, np.convolve(np.arange(5), np.arange(3)))


def test_fftconvolve_errors():
    with pytest.raises(ValueError, match="same dimensionality"):
        jsp.fftconvolve(np.ones(3), np.ones((2, 2)))
    with pytest.raises(ValueError, match="mode must be one of"):
        jsp.fftconvolve(np.ones(3), np.ones(2), mode="circular")
    with pytest.raises(ValueError, match="at least as large"):
        jsp.fftconvolve(np.ones((3, 2)), np.ones((2, 3)), mode="valid")


def test_fftconvolve_grads_and_vmap(x64):
    a, b = RNG.normal(size=(6,)), RNG.normal(size=(3,))
    check_grads(lambda u, v: jsp.fftconvolve(u, v, mode="same"), (a, b), order=1)
    batch = RNG.normal(size=(4, 6))
    got = pyjax.vmap(lambda u: jsp.fftconvolve(u, b, mode="valid"))(batch)
    _close(got, np.stack([np.convolve(u, b, mode="valid") for u in batch]), 1e-10)


# ---- detrend ----

@pytest.mark.parametrize("kw", [{}, {"type": "constant"}, {"bp": [5, 12]}, {"axis": 0},
                                {"bp": 19}])
def test_detrend(kw):
    x = RNG.normal(size=(3, 20)) + np.linspace(0, 5, 20)
    got = jsp.detrend(x.astype(np.float32), **kw)
    assert got.dtype == np.float32
    _close(got, osp.detrend(x, **kw))


def test_detrend_errors_and_grads(x64):
    with pytest.raises(ValueError, match="Trend type"):
        jsp.detrend(np.ones(4), type="quadratic")
    with pytest.raises(NotImplementedError, match="overwrite_data"):
        jsp.detrend(np.ones(4), overwrite_data=True)
    with pytest.raises(ValueError, match="Breakpoints"):
        jsp.detrend(np.ones(4), bp=7)
    check_grads(lambda v: jsp.detrend(v, bp=3), (RNG.normal(size=7),), order=1)


# ---- windows ----

@pytest.mark.parametrize("window", ["hann", "hamming", "blackman", "bartlett", "triang",
                                    "boxcar", ("kaiser", 4.0), ("gaussian", 2.5)])
def test_windows(window):
    for n in (1, 8, 9):
        np.testing.assert_allclose(get_window(window, n), osp.get_window(window, n),
                                   rtol=1e-12, atol=1e-12)


def test_unknown_window_is_refused():
    with pytest.raises(NotImplementedError, match="dpss"):
        jsp.welch(np.ones(64), window=("dpss", 3.0))


# ---- welch, csd ----

WELCH_CASES = [{}, {"nperseg": 64}, {"nperseg": 50, "noverlap": 10, "nfft": 71,
                                     "window": "hamming"},
               {"nperseg": 64, "detrend": "linear", "scaling": "spectrum"},
               {"nperseg": 33, "average": "median", "window": ("kaiser", 4.0)},
               {"nperseg": 32, "detrend": False, "return_onesided": False},
               {"nperseg": 40, "window": np.hanning(40)}]


@pytest.mark.parametrize("kw", WELCH_CASES, ids=lambda kw: ",".join(kw) or "default")
def test_welch(kw):
    x = RNG.normal(size=(2, 300))
    f, p = jsp.welch(x.astype(np.float32), fs=10.0, **kw)
    want_f, want_p = osp.welch(x, fs=10.0, **kw)
    _close(f, want_f)
    _close(p, want_p, 1e-4)
    assert p.dtype == np.float32


def test_welch_axis_and_csd():
    x = RNG.normal(size=(200, 3)).astype(np.float32)
    _close(jsp.welch(x, nperseg=64, axis=0)[1], osp.welch(x, nperseg=64, axis=0)[1], 1e-4)
    y = RNG.normal(size=(3, 180)).astype(np.float32)  # zero-padded to 200
    f, pxy = jsp.csd(x.T, y, nperseg=64, average="median")
    want_f, want = osp.csd(x.T, y, nperseg=64, average="median")
    assert pxy.dtype == np.complex64
    _close(f, want_f)
    _close(pxy, want, 1e-4)
    y1 = RNG.normal(size=(200,)).astype(np.float32)  # broadcast against the 3 rows
    _close(jsp.csd(x.T, y1, nperseg=64)[1], osp.csd(x.T, y1, nperseg=64)[1], 1e-4)
    z = (RNG.normal(size=128) + 1j * RNG.normal(size=128)).astype(np.complex64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _close(jsp.welch(z, nperseg=32)[1], osp.welch(z, nperseg=32)[1], 1e-4)


def test_welch_short_input_warns_and_bad_args():
    with pytest.warns(UserWarning, match="nperseg = 256 is greater than input length"):
        f, p = jsp.welch(np.arange(50.0))
    _close(p, osp.welch(np.arange(50.0))[1], 1e-4)
    with pytest.raises(ValueError, match="noverlap must be less than nperseg"):
        jsp.welch(np.ones(64), nperseg=16, noverlap=16)
    with pytest.raises(ValueError, match="nfft must be greater"):
        jsp.welch(np.ones(64), nperseg=16, nfft=8)
    with pytest.raises(ValueError, match="average must be"):
        jsp.welch(np.ones(64), average="max")
    with pytest.raises(ValueError, match="Unknown scaling"):
        jsp.welch(np.ones(64), scaling="power")


def test_welch_jit_and_grads(x64):
    x = RNG.normal(size=96)
    f = pyjax.jit(lambda v: jsp.welch(v, nperseg=32)[1])
    _close(f(x), osp.welch(x, nperseg=32)[1], 1e-10)
    check_grads(lambda v: jsp.welch(v, nperseg=32, detrend="linear")[1], (x,), order=1)
    # a traced sampling frequency: the density scales as 1/fs, the frequencies as fs
    total = lambda fs: jsp.welch(x, fs=fs, nperseg=32)[1].sum()  # noqa: E731
    s = float(total(1.0))
    np.testing.assert_allclose(float(pyjax.grad(total)(2.0)), -s / 4.0, rtol=1e-10)
    freqs = pyjax.jit(lambda fs: jsp.welch(x, fs=fs, nperseg=32)[0])(3.0)
    _close(freqs, osp.welch(x, fs=3.0, nperseg=32)[0], 1e-12)


# ---- stft, istft ----

STFT_CASES = [{"nperseg": 64}, {"nperseg": 31, "boundary": "even"},
              {"nperseg": 32, "boundary": None, "padded": False},
              {"nperseg": 32, "boundary": "odd", "noverlap": 20},
              {"nperseg": 40, "boundary": "constant", "nfft": 50, "window": "hamming"},
              {"nperseg": 16, "detrend": "constant", "return_onesided": False}]


@pytest.mark.parametrize("kw", STFT_CASES, ids=lambda kw: ",".join(f"{k}={v}" for k, v in
                                                                   kw.items()))
def test_stft_and_istft(kw):
    x = RNG.normal(size=(2, 150))
    f, t, z = jsp.stft(x.astype(np.float32), fs=4.0, **kw)
    want_f, want_t, want_z = osp.stft(x, fs=4.0, **kw)
    assert z.dtype == np.complex64
    _close(f, want_f)
    _close(t, want_t)
    _close(z, want_z)
    if kw.get("boundary", "zeros") is None:
        return
    inv = {k: v for k, v in kw.items() if k in ("nperseg", "noverlap", "nfft", "window")}
    onesided = kw.get("return_onesided", True)
    t2, x2 = jsp.istft(z, fs=4.0, input_onesided=onesided, **inv)
    want_t2, want_x2 = osp.istft(want_z, fs=4.0, input_onesided=onesided, **inv)
    _close(t2, want_t2)
    _close(x2, want_x2)
    if not kw.get("detrend"):  # the round trip (a detrended stft loses each segment's mean)
        _close(np.asarray(x2)[..., :150].real, x, 1e-4)


def test_istft_axes_and_errors():
    x = RNG.normal(size=(3, 128))
    _, _, z = osp.stft(x, nperseg=32)
    zt = np.moveaxis(z, 0, -1)  # (freq, time, channel)
    t, got = jsp.istft(zt.astype(np.complex64), nperseg=32, time_axis=1, freq_axis=0)
    want_t, want = osp.istft(zt, nperseg=32, time_axis=1, freq_axis=0)
    _close(got, want)
    _close(t, want_t)
    with pytest.raises(ValueError, match="at least 2d"):
        jsp.istft(np.ones(4, np.complex64))
    with pytest.raises(ValueError, match="differing time and frequency"):
        jsp.istft(np.ones((4, 4), np.complex64), time_axis=0, freq_axis=0)


def test_stft_istft_grads(x64):
    x = RNG.normal(size=40)
    check_grads(lambda v: jsp.stft(v, nperseg=16)[2], (x,), order=1)
    z = osp.stft(x, nperseg=16)[2]
    check_grads(lambda v: jsp.istft(v, nperseg=16)[1], (z,), order=1)
