"""``jax.scipy.special``'s ``wofz``, ``fresnel``, ``owens_t``, ``bessel_jn`` and ``sph_harm_y``.

- ``wofz``: Weideman's rational approximation (SIAM J. Numer. Anal. 31, 1994) with N = 40
  coefficients (computed on the host by an FFT at import) in the upper half plane for
  |z| < 6 (complex64: 4), the asymptotic series (40 / 16 terms: its smallest term is
  about exp(-|z|^2)) beyond; w(z) = 2 exp(-z^2) - w(-z)
  below the real axis, and exp(-x^2) + 2i/sqrt(pi) dawsn(x) on it.
- ``fresnel``: the power series for |x| < 1 (all terms below 1.3: no cancellation); beyond,
  C + iS = (1 + i)/2 (1 - exp(i pi x^2 / 2) w(sqrt(pi)/2 (1 + i) x)) with x^2 mod 4 formed
  exactly (Dekker's product), so the phase stays right for large x.
- ``owens_t``: T(h, a) = exp(-h^2/2)/(2 pi) int_0^u exp(-h^2 x^2/2)/(1 + x^2) dx for |a| <= 1,
  u = min(|a|, c/|h|) (the rest of the integral is below exp(-c^2/2)), by 48-point
  Gauss-Legendre; |a| > 1 through T(h, a) = Q(h)/2 + Q(ah)/2 - Q(h) Q(ah) - T(ah, 1/a).
- ``bessel_jn``: the power series for |z| < 1; beyond, Miller's backward recurrence from order
  n_iter + v, normalised by J_0 + 2 sum J_2k = 1 (JAX's ``n_iter`` decides the accuracy: the
  start order must exceed |z| comfortably; 50 is good to |z| ~ 25).
- ``sph_harm_y``: the orthonormalised associated Legendre function by its stable three-term
  recurrence in the degree (Condon-Shortley phase as SciPy), unrolled up to ``n_max``.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.numpy.eager_compiled import compiled_when_eager
from pyjax._src.numpy.util import promote_args_inexact
from pyjax._src.transformations.custom_derivatives import custom_jvp
import pyjax.numpy as jnp

__all__ = ["wofz", "fresnel", "owens_t", "bessel_jn", "sph_harm_y"]

_SQRT_PI = math.sqrt(math.pi)


# ---- the Faddeeva function ----

def _weideman_coefficients(n):
    """a_1 .. a_n of w(z) = 2 p(Z) / (L - iz)^2 + 1/(sqrt(pi) (L - iz)), Z = (L + iz)/(L - iz),
    p(Z) = sum_k a_(k+1) Z^k: the Fourier coefficients of exp(-t^2)(L^2 + t^2) under
    t = L tan(theta / 2)."""
    m = 2 * n
    length = math.sqrt(n / math.sqrt(2.0))
    k = np.arange(-m + 1, m)
    t = length * np.tan(k * np.pi / (2 * m))
    f = np.concatenate([[0.0], np.exp(-t * t) * (length ** 2 + t * t)])
    a = np.real(np.fft.fft(np.fft.fftshift(f))) / (2 * m)
    return a[1:n + 1], length  # a_1 (constant term) first


_W_COEFFS, _W_L = _weideman_coefficients(40)


def _wofz_upper(z):
    """w(z) for Im z >= 0 (Weideman)."""
    d = _W_L - 1j * z
    big_z = (_W_L + 1j * z) / d
    p = jnp.zeros_like(z)
    for c in _W_COEFFS[::-1]:
        p = p * big_z + float(c)
    return 2.0 * p / (d * d) + (1.0 / _SQRT_PI) / d


def _wofz_asymptotic(z, terms):
    """w(z) ~ i/(sqrt(pi) z) sum_k (2k-1)!! / (2 z^2)^k for large |z|, Im z >= 0 (the
    exponentially small exp(-z^2) part is below float precision there)."""
    inv = 1.0 / z
    q = 0.5 * inv * inv
    term, total = jnp.ones_like(z), jnp.ones_like(z)
    for k in range(1, terms + 1):
        term = term * (2 * k - 1) * q
        total = total + term
    return (1j / _SQRT_PI) * inv * total


@compiled_when_eager()
def wofz(z):
    """The Faddeeva function w(z) = exp(-z^2) erfc(-iz) (complex result)."""
    z = jnp.asarray(z)
    if not dtypes.is_complex(z.dtype):
        z, = promote_args_inexact("wofz", z)
        z = jnp.asarray(z).astype(dtypes.to_complex_dtype(jnp.asarray(z).dtype))
    x, y = jnp.real(z), jnp.imag(z)
    lower = y < 0
    zu = jnp.where(lower, -z, z)  # in the closed upper half plane
    f64 = z.dtype == np.complex128
    big = jnp.abs(zu) >= (6.0 if f64 else 4.0)
    zs = jnp.where(big, 1.0 + 0j, zu).astype(z.dtype)
    zb = jnp.where(big, zu, 10.0 + 0j).astype(z.dtype)
    wu = jnp.where(big, _wofz_asymptotic(zb, 40 if f64 else 16), _wofz_upper(zs))
    # the real axis: exactly exp(-x^2) + 2i/sqrt(pi) D(x)
    from pyjax._src.scipy.special import dawsn
    on_axis = (jnp.exp(-x * x) + 0j) + (2j / _SQRT_PI) * dawsn(x)
    wu = jnp.where(y == 0, on_axis.astype(z.dtype), wu)
    below = 2.0 * jnp.exp(-z * z) - wu
    out = jnp.where(lower, below, wu)
    return jnp.where(jnp.isnan(x) | jnp.isnan(y), jnp.nan + 0j, out).astype(z.dtype)


# ---- Fresnel integrals ----

def _exact_square_mod4(x):
    """x^2 mod 4 (as hi + lo, hi in [-2, 2]) with x^2 = p + e formed exactly (Dekker)."""
    split = 134217729.0 if x.dtype == np.float64 else 4097.0
    c = split * x
    xh = c - (c - x)
    xl = x - xh
    p = x * x
    e = ((xh * xh - p) + 2.0 * xh * xl) + xl * xl
    hi = p - 4.0 * jnp.round(p * 0.25)
    return hi, e


@custom_jvp
def fresnel(x):
    """The Fresnel integrals (S(x), C(x)): int_0^x sin(pi t^2/2) dt and int_0^x cos(...) dt."""
    return _fresnel(x)


@fresnel.defjvp
def _fresnel_jvp(primals, tangents):
    x, = primals
    t, = tangents
    s, c = fresnel(x)
    arg = 0.5 * np.pi * x * x
    return (s, c), (t * jnp.sin(arg), t * jnp.cos(arg))


@compiled_when_eager()
def _fresnel(x):
    x, = promote_args_inexact("fresnel", x)
    x = jnp.asarray(x)
    if dtypes.is_complex(x.dtype):
        raise NotImplementedError("fresnel: complex arguments are not supported (as JAX)")
    ax = jnp.abs(x)
    small = ax < 1.0
    # series: S = sum (-1)^k (pi/2)^(2k+1) x^(4k+3) / ((2k+1)! (4k+3)),
    #         C = sum (-1)^k (pi/2)^(2k) x^(4k+1) / ((2k)! (4k+1))
    xs = jnp.where(small, ax, 0.5)
    u = 0.5 * np.pi * xs * xs
    term = xs  # (pi/2)^j x^(2j+1) / j!
    s_ser, c_ser = jnp.zeros_like(xs), jnp.zeros_like(xs)
    for j in range(0, 26):
        if j:
            term = term * u / j
        sign = -1.0 if (j // 2) % 2 else 1.0
        if j % 2:
            s_ser = s_ser + sign * term / (2 * j + 1)
        else:
            c_ser = c_ser + sign * term / (2 * j + 1)
    # large: through the Faddeeva function
    xl = jnp.where(small | (ax == jnp.inf), 2.0, ax)
    hi, lo = _exact_square_mod4(xl)
    phase = 0.5 * np.pi * (hi + lo)
    cz = dtypes.to_complex_dtype(x.dtype)
    arg = ((0.5 * _SQRT_PI) * xl * (1.0 + 1j)).astype(cz)
    rot = (jnp.cos(phase) + 1j * jnp.sin(phase)).astype(cz)
    val = (0.5 + 0.5j) * (1.0 - rot * wofz(arg))
    s_big, c_big = jnp.imag(val), jnp.real(val)
    s = jnp.where(small, s_ser, jnp.where(ax == jnp.inf, 0.5, s_big))
    c = jnp.where(small, c_ser, jnp.where(ax == jnp.inf, 0.5, c_big))
    neg = x < 0
    s = jnp.where(neg, -s, s).astype(x.dtype)
    c = jnp.where(neg, -c, c).astype(x.dtype)
    nan = jnp.isnan(x)
    return jnp.where(nan, jnp.nan, s), jnp.where(nan, jnp.nan, c)


# ---- Owen's T function ----
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(48)


def _owens_t_small_a(h, a):
    """T(h, a) for h >= 0, 0 <= a <= 1 (Gauss-Legendre on [0, u])."""
    cut = 10.0 if h.dtype == np.float64 else 6.0
    u = jnp.minimum(a, cut / jnp.where(h > 0, h, 1.0))
    u = jnp.where(h > 0, u, a)
    total = jnp.zeros_like(h)
    for node, weight in zip(_GL_NODES, _GL_WEIGHTS):
        xk = 0.5 * u * (float(node) + 1.0)
        total = total + float(weight) * jnp.exp(-0.5 * h * h * xk * xk) / (1.0 + xk * xk)
    return jnp.exp(-0.5 * h * h) * total * (0.5 * u) / (2 * np.pi)


@custom_jvp
def owens_t(h, a):
    """Owen's T function T(h, a) = 1/(2 pi) int_0^a exp(-h^2 (1 + x^2)/2) / (1 + x^2) dx."""
    return _owens_t(h, a)


@owens_t.defjvp
def _owens_t_jvp(primals, tangents):
    h, a = primals
    th, ta = tangents
    out = owens_t(h, a)
    h, a = [jnp.asarray(v) for v in promote_args_inexact("owens_t", h, a)]
    from pyjax._src.lax import elementwise as lax
    dh = -jnp.exp(-0.5 * h * h) / math.sqrt(2 * np.pi) * lax.erf(a * h / math.sqrt(2.0)) / 2
    da = jnp.exp(-0.5 * h * h * (1.0 + a * a)) / (2 * np.pi * (1.0 + a * a))
    return out, dh * th + da * ta


@compiled_when_eager()
def _owens_t(h, a):
    h, a = [jnp.asarray(v) for v in promote_args_inexact("owens_t", h, a)]
    from pyjax._src.scipy.special import ndtr
    h, a = jnp.broadcast_arrays(h, a)
    ah_, aa = jnp.abs(h), jnp.abs(a)
    big_a = aa > 1.0
    # |a| <= 1 directly
    direct = _owens_t_small_a(ah_, jnp.where(big_a, 1.0, aa))
    # |a| > 1: T(h, a) = Q(h)/2 + Q(ah)/2 - Q(h) Q(ah) - T(ah, 1/a)
    inv = jnp.where(big_a, 1.0 / jnp.where(big_a, aa, 1.0), 1.0)
    hb = jnp.where(big_a, ah_, 0.0)
    ahb = jnp.where(aa == jnp.inf, jnp.inf, hb * jnp.where(big_a, aa, 1.0))
    ahb = jnp.where(hb == 0, 0.0, ahb)
    qh, qah = ndtr(-hb), ndtr(-ahb)
    inner = _owens_t_small_a(jnp.where(ahb == jnp.inf, 0.0, ahb), inv)
    inner = jnp.where(ahb == jnp.inf, 0.0, inner)
    reflected = 0.5 * qh + 0.5 * qah - qh * qah - inner
    out = jnp.where(big_a, reflected, direct)
    out = jnp.where(ah_ == 0, jnp.arctan(aa) / (2 * np.pi), out)
    out = jnp.where(ah_ == jnp.inf, 0.0, out)
    out = jnp.where(a < 0, -out, out)
    return jnp.where(jnp.isnan(h) | jnp.isnan(a), jnp.nan, out).astype(h.dtype)


# ---- Bessel functions of the first kind, integer orders 0..v ----

def bessel_jn(z, *, v, n_iter=50):
    """J_0(z) .. J_v(z) for real z: an array of shape (v + 1, *z.shape)."""
    if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
        raise TypeError(f"bessel_jn: the order v must be a Python int, got {v!r}")
    n_iter = operator.index(n_iter)
    if v < 0:
        raise ValueError(f"bessel_jn: the order v must be non-negative, got {v}")
    if n_iter < 1:
        raise ValueError(f"bessel_jn: n_iter must be positive, got {n_iter}")
    z_arr = jnp.asarray(z)
    if not dtypes.issubdtype(z_arr.dtype, np.floating):
        raise ValueError(f"bessel_jn: z must be a float array, got dtype {z_arr.dtype}")
    return _bessel_jn(z_arr, int(v), n_iter)


@compiled_when_eager("v", "n_iter")
def _bessel_jn(z, v, n_iter):
    az = jnp.abs(z)
    small = az < 1.0
    # |z| < 1: the power series J_k = (z/2)^k / k! sum_j (-(z/2)^2)^j k! / (j! (j+k)!)
    half = jnp.where(small, az, 0.5) * 0.5
    q = -half * half
    series = []
    lead = jnp.ones_like(half)  # (z/2)^k / k!
    for k in range(v + 1):
        if k:
            lead = lead * half / k
        term, total = jnp.ones_like(half), jnp.ones_like(half)
        for j in range(1, 11):
            term = term * q / (j * (j + k))
            total = total + term
        series.append(lead * total)
    # |z| >= 1: Miller's backward recurrence J_(k-1) = 2k/z J_k - J_(k+1) from order
    # n_iter + v (even), normalised by J_0 + 2 sum_k J_2k = 1; rescaled every 8 steps (the
    # values grow by at most (2 start)^8 in between)
    zs = jnp.where(small, 1.0, az)
    start = n_iter + v
    start += start % 2
    f_next, f = jnp.zeros_like(zs), jnp.full_like(zs, 1e-20)
    norm = jnp.zeros_like(zs)
    kept = [None] * (v + 1)
    for k in range(start, 0, -1):
        if k <= v:
            kept[k] = f
        if k % 2 == 0:
            norm = norm + 2.0 * f
        f_next, f = f, (2.0 * k) / zs * f - f_next
        if k % 8 == 0:
            scale = 1.0 / jnp.maximum(jnp.abs(f), 1.0)
            f, f_next, norm = f * scale, f_next * scale, norm * scale
            kept = [None if r is None else r * scale for r in kept]
    kept[0] = f
    norm = norm + f
    out = []
    for n in range(v + 1):
        val = jnp.where(small, series[n], kept[n] / norm)
        if n % 2:
            val = jnp.where(z < 0, -val, val)
        out.append(jnp.where(jnp.isnan(z), jnp.nan, val))
    return jnp.stack(out).astype(z.dtype)


# ---- spherical harmonics ----

def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
    """Y_n^m(theta, phi) with theta the polar and phi the azimuthal angle (SciPy's
    ``sph_harm_y`` convention, Condon-Shortley phase included). ``n_max`` (static) bounds n;
    by default it is max(n), which needs a concrete ``n``."""
    if diff_n is not None:
        raise NotImplementedError(
            "The 'diff_n' argument to jax.scipy.special.sph_harm_y is not supported.")
    n_arr, m_arr = jnp.asarray(n), jnp.asarray(m)
    for name, arr in (("n", n_arr), ("m", m_arr)):
        if not dtypes.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"sph_harm_y: {name} must be an integer array, got dtype "
                            f"{arr.dtype}")
    if n_max is None:
        try:
            n_max = int(np.max(np.asarray(n_arr)))
        except Exception as e:  # a tracer
            raise ValueError("sph_harm_y: pass a static n_max when n is traced") from e
    n_max = operator.index(n_max)
    if n_max < 0:
        raise ValueError(f"sph_harm_y: n_max must be non-negative, got {n_max}")
    return _sph_harm_y(n_arr, m_arr, theta, phi, n_max)


@compiled_when_eager("n_max")
def _sph_harm_y(n, m, theta, phi, n_max):
    theta, phi = [jnp.asarray(v) for v in promote_args_inexact("sph_harm_y", theta, phi)]
    n, m, theta, phi = jnp.broadcast_arrays(n, m, theta, phi)
    n = jnp.minimum(n, n_max)  # JAX: degrees above n_max are clipped to it
    am = jnp.abs(m)
    ct, st = jnp.cos(theta), jnp.sin(theta)
    # P_m^m (orthonormalised, Condon-Shortley): (-1)^m sqrt((2m+1)/(4 pi) prod (2k-1)/(2k)) st^m
    pmm = jnp.full_like(theta, 1.0 / math.sqrt(4 * np.pi))
    for k in range(1, n_max + 1):
        step = -math.sqrt((2 * k + 1) / (2 * k)) * st
        pmm = jnp.where(k <= am, pmm * step, pmm)
    # P_(l)^m from P_(l-1)^m and P_(l-2)^m for l = m+1 .. n
    p_prev, p = jnp.zeros_like(pmm), pmm
    for l in range(1, n_max + 1):
        lf = float(l)
        mf = am.astype(theta.dtype)
        active = (l > am) & (l <= n)
        denom = jnp.where(active, lf * lf - mf * mf, 1.0)
        a_l = jnp.sqrt((4 * lf * lf - 1) / denom)
        b_l = jnp.sqrt(jnp.maximum(((lf - 1) ** 2 - mf * mf) / (4 * (lf - 1) ** 2 - 1), 0.0))
        nxt = a_l * (ct * p - b_l * p_prev)
        p_prev, p = jnp.where(active, p, p_prev), jnp.where(active, nxt, p)
    p = jnp.where(am > n, 0.0, p)
    cz = dtypes.to_complex_dtype(theta.dtype)
    mphi = m.astype(theta.dtype) * phi
    y = p * (jnp.cos(mphi) + 1j * jnp.sin(mphi))
    # Y_n^(-m) = (-1)^m conj(Y_n^m): with |m| above, only the sign (-1)^m remains for m < 0
    odd = (am % 2) == 1
    y = jnp.where((m < 0) & odd, -y, y)
    return y.astype(cz)
