"""FFT benchmarks (run by hand): a jitted ``fft`` of complex64[2**20] and ``rfft2`` of
f32[1024, 1024], and the ``welch`` and ``fftconvolve`` built on them, side by side with
numpy.fft and scipy.fft (and JAX when installed). Times are medians in milliseconds, results
on the host (``block_until_ready``).

    python benchmarks/bench_fft.py
"""
import numpy as np
from timing import ms, print_table

RNG = np.random.default_rng(0)
X1 = (RNG.normal(size=2 ** 20) + 1j * RNG.normal(size=2 ** 20)).astype(np.complex64)
X2 = RNG.normal(size=(1024, 1024)).astype(np.float32)
SIG = RNG.normal(size=(8, 65536)).astype(np.float32)
KER = RNG.normal(size=(8, 513)).astype(np.float32)
ROWS = ["fft complex64[2**20]", "rfft2 f32[1024,1024]", "welch f32[8,65536] nperseg=1024",
        "fftconvolve f32[8,65536] * f32[8,513] (axes=-1)"]


def _jax_like(jax, jnp, signal):
    fft = jax.jit(jnp.fft.fft)
    rfft2 = jax.jit(jnp.fft.rfft2)
    welch = jax.jit(lambda x: signal.welch(x, nperseg=1024)[1])
    conv = jax.jit(lambda a, b: signal.fftconvolve(a, b, axes=-1))
    x1, x2, sig, ker = (jax.device_put(v) for v in (X1, X2, SIG, KER))
    return {ROWS[0]: ms(lambda: fft(x1).block_until_ready()),
            ROWS[1]: ms(lambda: rfft2(x2).block_until_ready()),
            ROWS[2]: ms(lambda: welch(sig).block_until_ready()),
            ROWS[3]: ms(lambda: conv(sig, ker).block_until_ready())}


def bench_pyjax():
    import pyjax
    import pyjax.numpy as jnp
    import pyjax.scipy.signal as signal
    return _jax_like(pyjax, jnp, signal)


def bench_jax():
    try:
        import jax
        import jax.numpy as jnp
        import jax.scipy.signal as signal
    except ImportError:
        return None
    return _jax_like(jax, jnp, signal)


def bench_numpy():
    import scipy.signal
    return {ROWS[0]: ms(lambda: np.fft.fft(X1)), ROWS[1]: ms(lambda: np.fft.rfft2(X2)),
            ROWS[2]: ms(lambda: scipy.signal.welch(SIG, nperseg=1024)),
            ROWS[3]: ms(lambda: scipy.signal.fftconvolve(SIG, KER, axes=-1))}


def bench_scipy():
    import scipy.fft
    return {ROWS[0]: ms(lambda: scipy.fft.fft(X1)), ROWS[1]: ms(lambda: scipy.fft.rfft2(X2)),
            ROWS[0] + " 2 workers": ms(lambda: scipy.fft.fft(X1, workers=2))}


if __name__ == "__main__":
    results = {"pyjax": bench_pyjax(), "numpy": bench_numpy(), "scipy.fft": bench_scipy()}
    jx = bench_jax()
    if jx is not None:
        results["jax"] = jx
    print_table(results, rows=ROWS + [ROWS[0] + " 2 workers"], label="median ms", width=52)
