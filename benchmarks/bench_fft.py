"""FFT benchmarks (run by hand): a jitted ``fft`` of complex64[2**20] and ``rfft2`` of
f32[1024, 1024], and the ``welch`` and ``fftconvolve`` built on them, side by side with
numpy.fft and scipy.fft, and JAX in a subprocess (benchmarks/.jaxvenv (``sh benchmarks/setup_jax_side.sh``) or $JAX_PYTHON;
skipped when absent). Times are the minimum of 20 calls in milliseconds (``block_until_ready``);
the two sides alternate in rounds (``--rounds``, default 3) and the best round is kept.

    python benchmarks/bench_fft.py [--rounds 3]
"""
import sys

import numpy as np
from timing import IS_JAX_WORKER, best_ms, jax_side, ms, print_table, worker_print

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
    return {ROWS[0]: best_ms(lambda: fft(x1).block_until_ready(), 20),
            ROWS[1]: best_ms(lambda: rfft2(x2).block_until_ready(), 20),
            ROWS[2]: best_ms(lambda: welch(sig).block_until_ready(), 20),
            ROWS[3]: best_ms(lambda: conv(sig, ker).block_until_ready(), 20)}


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
    return {ROWS[0]: best_ms(lambda: np.fft.fft(X1), 20),
            ROWS[1]: best_ms(lambda: np.fft.rfft2(X2), 20),
            ROWS[2]: ms(lambda: scipy.signal.welch(SIG, nperseg=1024)),
            ROWS[3]: ms(lambda: scipy.signal.fftconvolve(SIG, KER, axes=-1))}


def bench_scipy():
    import scipy.fft
    return {ROWS[0]: ms(lambda: scipy.fft.fft(X1)), ROWS[1]: ms(lambda: scipy.fft.rfft2(X2)),
            ROWS[0] + " 2 workers": ms(lambda: scipy.fft.fft(X1, workers=2))}


def _best(rounds):
    return {k: min(r[k] for r in rounds) for k in rounds[0]}


if __name__ == "__main__":
    if IS_JAX_WORKER:
        worker_print(bench_jax())
        sys.exit()
    n_rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3
    ours, theirs = [], []
    for _ in range(n_rounds):  # interleaved: both sides see the same machine load
        ours.append(bench_pyjax())
        got = jax_side(__file__)
        if got is not None:
            theirs.append(got)
    results = {"pyjax": _best(ours), "numpy": bench_numpy(), "scipy.fft": bench_scipy()}
    if theirs:
        results["jax"] = _best(theirs)
        results["pyjax/jax"] = {k: results["pyjax"][k] / results["jax"][k] for k in ROWS}
    print_table(results, rows=ROWS + [ROWS[0] + " 2 workers"], label="min ms", width=52)
