"""``jax.scipy.signal``'s FFT-based part: ``fftconvolve``, ``stft``, ``istft``, ``csd``,
``welch``, ``detrend``, with JAX's signatures and SciPy's results.

The spectral functions share one helper (``_spectral``): split the signal into overlapping
segments (one gather), detrend and window each, transform (``rfft`` for real input with one-sided
output, else ``fft``) and scale. Windows are built on the host from their definitions (SciPy's
``get_window`` names, periodic as SciPy makes them for spectral analysis), so pyjax needs no
SciPy at run time; segment counts, the window and its sums are static, the data may be traced.
"""
from __future__ import annotations

import warnings

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.axes import canonicalize_axes, canonicalize_axis, index
from pyjax._src.numpy import creation, fft as jfft, reductions, shape as jshape, util
from pyjax._src.numpy import ufuncs

__all__ = ["fftconvolve", "stft", "istft", "csd", "welch", "detrend"]


# ---- fftconvolve ----

def fftconvolve(in1, in2, mode="full", axes=None):
    """The convolution of ``in1`` and ``in2`` by FFT over ``axes`` (all by default); the other
    axes broadcast. ``mode``: "full", "same" (``in1``'s shape, centred) or "valid" (where the
    smaller input fits entirely in the larger one)."""
    util.check_arraylike("fftconvolve", in1, in2)
    in1, in2 = util.promote_dtypes_inexact(creation.asarray(in1), creation.asarray(in2))
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"mode must be one of ['same', 'full', 'valid'], got {mode!r}")
    if in1.ndim == 0:
        return in1 * in2
    axes = canonicalize_axes(axes, in1.ndim, "axes", "fftconvolve")
    s1, s2 = in1.shape, in2.shape
    for a in range(in1.ndim):
        if a not in axes and s1[a] != s2[a] and 1 not in (s1[a], s2[a]):
            raise ValueError(f"fftconvolve: incompatible shapes for in1 {s1} and in2 {s2} on "
                             f"axis {a}, which is not convolved (sizes must match or be 1)")
    if any(s1[a] == 0 or s2[a] == 0 for a in axes):
        raise ValueError(f"fftconvolve: empty input along a convolved axis: in1 {s1}, in2 {s2}")
    if mode == "valid":
        bigger1 = all(s1[a] >= s2[a] for a in axes)
        if not bigger1 and not all(s2[a] >= s1[a] for a in axes):
            raise ValueError("For 'valid' mode, one must be at least as large as the other in "
                             "every dimension")
        if not bigger1:
            in1, in2, s1, s2 = in2, in1, s2, s1
    full = tuple(s1[a] + s2[a] - 1 for a in axes)
    real = not (dtypes.is_complex(in1.dtype) or dtypes.is_complex(in2.dtype))
    forward, inverse = (jfft.rfftn, jfft.irfftn) if real else (jfft.fftn, jfft.ifftn)
    # a length with small prime factors is faster for XLA's FFT; the result is cropped anyway
    fast = tuple(_fast_length(n) for n in full)
    spectrum = forward(in1, s=fast, axes=axes) * forward(in2, s=fast, axes=axes)
    out = inverse(spectrum, s=fast, axes=axes)
    if mode == "full":
        keep = {a: (0, n) for a, n in zip(axes, full)}
    elif mode == "same":
        keep = {a: ((n - s1[a]) // 2, s1[a]) for a, n in zip(axes, full)}
    else:
        keep = {a: (s2[a] - 1, s1[a] - s2[a] + 1) for a in axes}
    index_expr = tuple(slice(keep[a][0], keep[a][0] + keep[a][1]) if a in keep else slice(None)
                       for a in range(out.ndim))
    return out[index_expr]


def _fast_length(n):
    """The smallest 2^a 3^b 5^c 7^d at least ``n``."""
    best = 1 << max(0, (n - 1).bit_length())
    p7 = 1
    while p7 < best:
        p5 = p7
        while p5 < best:
            p3 = p5
            while p3 < best:
                m = p3
                while m < n:
                    m *= 2
                best = min(best, m)
                p3 *= 3
            p5 *= 5
        p7 *= 7
    return best


# ---- windows ----

def _cosine_sum(coefs):
    def window(m):
        t = 2 * np.pi * np.arange(m) / (m - 1)
        return sum((-1) ** k * c * np.cos(k * t) for k, c in enumerate(coefs))
    return window


def _triang(m):
    k = np.arange(1, (m + 1) // 2 + 1)
    if m % 2 == 0:
        half = (2 * k - 1.0) / m
        return np.concatenate([half, half[::-1]])
    half = 2 * k / (m + 1.0)
    return np.concatenate([half, half[-2::-1]])


_WINDOWS = {  # name -> symmetric window of length m >= 2
    "boxcar": np.ones, "hann": _cosine_sum([0.5, 0.5]), "hamming": _cosine_sum([0.54, 0.46]),
    "blackman": _cosine_sum([0.42, 0.50, 0.08]), "bartlett": np.bartlett, "triang": _triang,
}
_ALIASES = {"box": "boxcar", "ones": "boxcar", "rect": "boxcar", "rectangular": "boxcar",
            "hanning": "hann", "han": "hann", "hamm": "hamming", "ham": "hamming",
            "black": "blackman", "blk": "blackman", "bart": "bartlett", "brt": "bartlett",
            "triangle": "triang", "tri": "triang", "gauss": "gaussian", "gss": "gaussian",
            "ksr": "kaiser"}
_WITH_PARAM = {"kaiser": lambda m, beta: np.kaiser(m, beta),
               "gaussian": lambda m, std: np.exp(-0.5 * ((np.arange(m) - (m - 1) / 2) / std)
                                                 ** 2)}


def get_window(window, n):
    """SciPy's ``get_window(window, n)`` (periodic, for spectral analysis) for the windows
    named in ``_WINDOWS`` and ``_WITH_PARAM``, as a float64 NumPy array."""
    name, params = (window, ()) if isinstance(window, str) else (window[0], tuple(window[1:]))
    name = _ALIASES.get(name, name) if isinstance(name, str) else name
    if name in _WINDOWS and not params:
        make = _WINDOWS[name]
    elif name in _WITH_PARAM and len(params) == 1:
        make = lambda m: _WITH_PARAM[name](m, float(params[0]))  # noqa: E731
    elif name in _WITH_PARAM:
        raise ValueError(f"The '{name}' window needs one parameter, e.g. ('{name}', 8.0); got "
                         f"{window!r}")
    else:
        known = sorted(set(_WINDOWS) | set(_WITH_PARAM))
        raise NotImplementedError(f"window {window!r} is not implemented in pyjax; supported: "
                                  f"{known} (or pass the window as an array)")
    if n == 1:
        return np.ones(1)
    return np.asarray(make(n + 1), np.float64)[:n]  # periodic: one period of a longer window


def _window_and_nperseg(window, nperseg, length, default=256):
    """The window (float64, on the host) and the segment length, as SciPy settles them."""
    if nperseg is not None:
        nperseg = index(nperseg, "nperseg")
        if nperseg < 1:
            raise ValueError("nperseg must be a positive integer")
    if isinstance(window, (str, tuple)):
        if nperseg is None:
            nperseg = default
        if nperseg > length:
            warnings.warn(f"nperseg = {nperseg:d} is greater than input length  = {length:d}, "
                          f"using nperseg = {length:d}", stacklevel=3)
            nperseg = length
        return get_window(window, nperseg), nperseg
    if util.is_arraylike(window) and not isinstance(window, np.ndarray):
        try:
            window = np.asarray(window)  # a concrete Array; a traced window is not supported
        except Exception:
            raise NotImplementedError("a traced window array is not supported: pass a NumPy "
                                      "array or a window name") from None
    win = np.asarray(window)
    if win.ndim != 1:
        raise ValueError("window must be 1-D")
    if length < win.shape[0]:
        raise ValueError("window is longer than input signal")
    if nperseg is None:
        nperseg = win.shape[0]
    elif nperseg != win.shape[0]:
        raise ValueError("value specified for nperseg is different from length of window")
    return win, nperseg


# ---- detrend ----

def _remove_line(seg):
    """``seg`` minus its least-squares line along the last axis."""
    m = seg.shape[-1]
    centered = seg - reductions.mean(seg, axis=-1, keepdims=True)
    if m < 2:
        return centered
    t = (np.arange(m) - (m - 1) / 2).astype(dtypes.to_real_dtype(seg.dtype))
    slope = reductions.sum(centered * t, axis=-1, keepdims=True) / float(np.sum(t * t))
    return centered - slope * t


def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=None):  # noqa: A002
    """``data`` minus its mean ("constant") or its least-squares line ("linear"; fitted
    separately between the breakpoints ``bp``) along ``axis``."""
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    util.check_arraylike("detrend", data)
    (x,) = util.promote_dtypes_inexact(creation.asarray(data))
    if x.ndim == 0:
        raise ValueError("detrend needs an array of at least one dimension, got a scalar")
    axis = canonicalize_axis(axis, x.ndim, "axis", "detrend")
    if type == "constant":
        return x - reductions.mean(x, axis=axis, keepdims=True)
    n = x.shape[axis]
    bps = np.unique(np.concatenate([[0], np.atleast_1d(np.asarray(bp)).ravel(), [n]]))
    if bps[0] < 0 or bps[-1] > n:
        raise ValueError("Breakpoints must be non-negative and less than length of data along "
                         f"given axis, got bp={bp!r} for length {n}.")
    x = jshape.moveaxis(x, axis, -1)
    pieces = [_remove_line(x[..., int(lo):int(hi)]) for lo, hi in zip(bps[:-1], bps[1:])]
    x = pieces[0] if len(pieces) == 1 else jshape.concatenate(pieces, axis=-1)
    return jshape.moveaxis(x, -1, axis)


# ---- the spectral helper ----

def _extend(x, n, boundary):
    """``x`` extended by ``n`` points at both ends of its last axis."""
    if n == 0:
        return x
    length = x.shape[-1]
    if boundary in ("even", "odd") and n > length - 1:
        raise ValueError(f"The extension length n ({n}) is too big. It must not exceed "
                         f"x.shape[axis]-1, which is {length - 1}.")
    if boundary == "zeros":
        zeros = creation.zeros(x.shape[:-1] + (n,), x.dtype)
        return jshape.concatenate([zeros, x, zeros], axis=-1)
    if boundary == "constant":
        left = jshape.broadcast_to(x[..., :1], x.shape[:-1] + (n,))
        right = jshape.broadcast_to(x[..., -1:], x.shape[:-1] + (n,))
        return jshape.concatenate([left, x, right], axis=-1)
    # mirror images without the edge points: x[n], ..., x[1] and x[-2], ..., x[-n-1]
    left = jshape.flip(x[..., 1:n + 1], -1)
    right = jshape.flip(x[..., length - n - 1:length - 1], -1)
    if boundary == "odd":
        left, right = 2 * x[..., :1] - left, 2 * x[..., -1:] - right
    return jshape.concatenate([left, x, right], axis=-1)


_BOUNDARIES = ("even", "odd", "constant", "zeros", None)


def _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend_type, return_onesided,
              scaling, axis, mode, boundary=None, padded=False, default_nperseg=256):
    """``(freqs, times, result)``: ``result`` holds one transformed segment (``mode`` "stft")
    or one cross spectral density (``mode`` "psd", of ``x`` and ``y``; ``y`` None: ``x``
    with itself) per time, with frequencies at ``axis`` and times last."""
    if scaling not in ("density", "spectrum"):
        raise ValueError(f"Unknown scaling: {scaling}")
    if boundary not in _BOUNDARIES:
        raise ValueError(f"Unknown boundary option '{boundary}', must be one of: "
                         f"{list(_BOUNDARIES)}")
    same = y is None
    util.check_arraylike(mode, x, *(() if same else (y,)))
    x = creation.asarray(x)
    if x.ndim == 0 or not same and np.ndim(y) == 0:
        raise ValueError(f"{mode}: the input must have at least one dimension")
    # the frequency axis of the result goes where ``axis`` was, counted from the end
    from_end = canonicalize_axis(axis, x.ndim, "axis", mode) - x.ndim
    if same:
        (x,) = util.promote_dtypes_inexact(x)
        x = y = jshape.moveaxis(x, from_end, -1)
    else:
        x, y = util.promote_dtypes_inexact(x, creation.asarray(y))
        canonicalize_axis(from_end, y.ndim, "axis", mode)
        x, y = jshape.moveaxis(x, from_end, -1), jshape.moveaxis(y, from_end, -1)
        lead = tuple(util.broadcast_shapes(x.shape[:-1], y.shape[:-1]))
        x = jshape.broadcast_to(x, lead + x.shape[-1:])
        y = jshape.broadcast_to(y, lead + y.shape[-1:])
        nx, ny = x.shape[-1], y.shape[-1]
        if nx < ny:  # the shorter one is zero-padded, as SciPy does
            x = jshape.concatenate([x, creation.zeros(lead + (ny - nx,), x.dtype)], axis=-1)
        elif ny < nx:
            y = jshape.concatenate([y, creation.zeros(lead + (nx - ny,), y.dtype)], axis=-1)
    length = x.shape[-1]
    if length == 0:
        raise ValueError(f"{mode}: the input is empty along axis {axis}")
    win, nperseg = _window_and_nperseg(window, nperseg, length, default_nperseg)
    if nfft is None:
        nfft = nperseg
    else:
        nfft = index(nfft, "nfft")
        if nfft < nperseg:
            raise ValueError("nfft must be greater than or equal to nperseg.")
    noverlap = nperseg // 2 if noverlap is None else index(noverlap, "noverlap")
    if not 0 <= noverlap < nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    step = nperseg - noverlap
    if boundary is not None:
        x = _extend(x, nperseg // 2, boundary)
        y = x if same else _extend(y, nperseg // 2, boundary)
    if padded:
        extra = (-(x.shape[-1] - nperseg) % step) % nperseg
        if extra:
            x = jshape.concatenate([x, creation.zeros(x.shape[:-1] + (extra,), x.dtype)], -1)
            y = x if same else jshape.concatenate(
                [y, creation.zeros(y.shape[:-1] + (extra,), y.dtype)], -1)
    complex_data = dtypes.is_complex(x.dtype) or dtypes.is_complex(y.dtype)
    onesided = bool(return_onesided)
    if onesided and complex_data:
        warnings.warn("Input data is complex, switching to return_onesided=False",
                      stacklevel=3)
        onesided = False
    real_dt = dtypes.to_real_dtype(x.dtype)
    win = np.asarray(win)
    if dtypes.is_complex(win.dtype):
        raise NotImplementedError("a complex window is not supported")
    win_dt = win.astype(real_dt)

    def transform(v):
        nseg = (v.shape[-1] - nperseg) // step + 1
        idx = step * np.arange(nseg)[:, None] + np.arange(nperseg)
        seg = v[..., idx]  # (..., segments, nperseg)
        if callable(detrend_type):
            seg = detrend_type(seg)
        elif detrend_type in ("constant", "linear"):
            seg = detrend(seg, axis=-1, type=detrend_type)
        elif detrend_type not in (False, None):
            raise ValueError(f"Unknown detrend type {detrend_type!r}: use 'constant', "
                             "'linear', False or a function")
        seg = seg * win_dt
        return (jfft.rfft if onesided else jfft.fft)(seg, n=nfft, axis=-1), nseg

    xf, nseg = transform(x)
    if mode == "stft":
        result = xf * (1.0 / float(np.sum(win)))  # the square root of "spectrum" scaling
    else:
        if scaling == "density":
            scale = 1.0 / (fs * float(np.sum(win * win)))
        else:
            scale = 1.0 / float(np.sum(win)) ** 2
        yf = xf if same else transform(y)[0]
        result = ufuncs.conjugate(xf) * yf * scale
        if onesided:  # each inner bin stands for itself and its negative frequency
            w = np.full(result.shape[-1], 2.0, real_dt)
            w[0] = 1.0
            if nfft % 2 == 0:
                w[-1] = 1.0
            result = result * w
        if same:
            result = ufuncs.real(result)
    bins = np.arange(nfft // 2 + 1) if onesided else np.fft.fftfreq(nfft, 1.0 / nfft)
    freqs = creation.asarray((bins / nfft).astype(real_dt)) * fs
    starts = np.arange(nperseg / 2, x.shape[-1] - nperseg / 2 + 1, step)
    if boundary is not None:
        starts = starts - nperseg / 2
    times = creation.asarray(starts.astype(real_dt)) / fs
    result = jshape.moveaxis(result, -1, from_end - 1)
    return freqs, times, result


def _check_fs(fs):
    if not util.is_arraylike(fs) or np.ndim(fs) != 0:
        raise TypeError(f"fs must be a scalar sampling frequency, got {fs!r}")
    return fs


def stft(x, fs=1.0, window="hann", nperseg=256, noverlap=None, nfft=None, detrend=False,
         return_onesided=True, boundary="zeros", padded=True, axis=-1):
    """The short-time Fourier transform: ``(f, t, Zxx)``, ``Zxx`` with frequencies at
    ``axis`` and segment times last."""
    freqs, times, result = _spectral(x, None, _check_fs(fs), window, nperseg, noverlap, nfft,
                                     detrend, return_onesided, "spectrum", axis, "stft",
                                     boundary=boundary, padded=padded)
    return freqs, times, result


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
        detrend="constant", return_onesided=True, scaling="density", axis=-1, average="mean"):
    """The cross power spectral density of ``x`` and ``y`` by Welch's method: ``(f, Pxy)``."""
    if average not in ("mean", "median"):
        raise ValueError(f'average must be "median" or "mean", got {average}')
    freqs, _, pxy = _spectral(x, y, _check_fs(fs), window, nperseg, noverlap, nfft, detrend,
                              return_onesided, scaling, axis, "psd")
    if pxy.ndim >= 2 and pxy.shape[-1] > 1:
        if average == "mean":
            pxy = reductions.mean(pxy, axis=-1)
        else:
            bias = _median_bias(pxy.shape[-1])
            if dtypes.is_complex(pxy.dtype):
                pxy = (reductions.median(ufuncs.real(pxy), axis=-1)
                       + 1j * reductions.median(ufuncs.imag(pxy), axis=-1))
            else:
                pxy = reductions.median(pxy, axis=-1)
            pxy = pxy / bias
    elif pxy.ndim >= 2:
        pxy = pxy.reshape(pxy.shape[:-1])
    return freqs, pxy


def _median_bias(n):
    """The bias of the median of ``n`` periodograms relative to their mean (SciPy's
    ``_median_bias``): ``1 - 1/2 + 1/3 - ... `` up to ``n`` terms, odd ``n``."""
    k = np.arange(1, (n - 1) // 2 + 1)
    return float(1 + np.sum(1.0 / (2 * k + 1) - 1.0 / (2 * k)))


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          detrend="constant", return_onesided=True, scaling="density", axis=-1,
          average="mean"):
    """The power spectral density of ``x`` by Welch's method: ``(f, Pxx)``."""
    if average not in ("mean", "median"):
        raise ValueError(f'average must be "median" or "mean", got {average}')
    freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap,
                     nfft=nfft, detrend=detrend, return_onesided=return_onesided,
                     scaling=scaling, axis=axis, average=average)
    return freqs, pxx


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          input_onesided=True, boundary=True, time_axis=-1, freq_axis=-2):
    """The inverse short-time Fourier transform by weighted overlap-add: ``(t, x)``."""
    util.check_arraylike("istft", Zxx)
    z = creation.asarray(Zxx)
    if not dtypes.is_complex(z.dtype):
        z = z.astype(dtypes.to_complex_dtype(z.dtype))
    if z.ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis = canonicalize_axis(freq_axis, z.ndim, "freq_axis", "istft")
    time_axis = canonicalize_axis(time_axis, z.ndim, "time_axis", "istft")
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    nseg = z.shape[time_axis]
    default = 2 * (z.shape[freq_axis] - 1) if input_onesided else z.shape[freq_axis]
    if nperseg is None:
        nperseg = default
    else:
        nperseg = index(nperseg, "nperseg")
        if nperseg < 1:
            raise ValueError("nperseg must be a positive integer")
    if nfft is None:
        nfft = nperseg if input_onesided and nperseg == default + 1 else default
    else:
        nfft = index(nfft, "nfft")
        if nfft < nperseg:
            raise ValueError("nfft must be greater than or equal to nperseg.")
    noverlap = nperseg // 2 if noverlap is None else index(noverlap, "noverlap")
    if not 0 <= noverlap < nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    step = nperseg - noverlap
    others = [a for a in range(z.ndim) if a not in (freq_axis, time_axis)]
    z = jshape.transpose(z, others + [freq_axis, time_axis])
    if isinstance(window, (str, tuple)):
        win = get_window(window, nperseg)
    else:
        win = np.asarray(window)
        if win.ndim != 1:
            raise ValueError("window must be 1-D")
        if win.shape[0] != nperseg:
            raise ValueError(f"window must have length of {nperseg}")
    inverse = jfft.irfft if input_onesided else jfft.ifft
    segs = inverse(z, n=nfft, axis=-2)[..., :nperseg, :]  # (..., nperseg, nseg)
    real_dt = dtypes.to_real_dtype(segs.dtype)
    segs = segs * win.astype(real_dt)[:, None] * float(np.sum(win))
    segs = jshape.swapaxes(segs, -1, -2)  # (..., nseg, nperseg)
    out_len = nperseg + (nseg - 1) * step
    idx = (step * np.arange(nseg)[:, None] + np.arange(nperseg)).ravel()
    x = creation.zeros(segs.shape[:-2] + (out_len,), segs.dtype)
    x = x.at[..., idx].add(segs.reshape(segs.shape[:-2] + (nseg * nperseg,)))
    norm = np.zeros(out_len)
    np.add.at(norm, idx, np.tile(win * win, nseg))
    if boundary:
        cut = nperseg // 2
        x, norm = x[..., cut:out_len - cut], norm[cut:out_len - cut]
    if np.sum(norm > 1e-10) != len(norm):
        warnings.warn("NOLA condition failed, STFT may not be invertible.", stacklevel=2)
    x = x / np.where(norm > 1e-10, norm, 1.0).astype(real_dt)
    if input_onesided:
        x = ufuncs.real(x)
    if x.ndim > 1 and time_axis != z.ndim - 1:
        x = jshape.moveaxis(x, -1, time_axis - 1 if freq_axis < time_axis else time_axis)
    times = creation.asarray(np.arange(x.shape[0]).astype(real_dt)) / fs
    return times, x
