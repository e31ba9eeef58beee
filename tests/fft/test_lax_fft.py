"""The ``fft`` primitive: values against numpy.fft, JVP and VJP against finite differences,
transposes against the dot-product identity ``Re(sum(ct * f(x))) == Re(sum(f^T(ct) * x))``
(JAX's pairing for complex values), and ``vmap`` against a loop."""
import numpy as np
import pytest

import pyjax
from pyjax import lax
from pyjax.test_util import check_grads

TESTED_PRIMITIVES = {"fft"}
JVP_TESTED = {"fft"}
TRANSPOSE_TESTED = {"fft"}
BATCH_TESTED = {"fft"}

RNG = np.random.default_rng(0)


def crandn(*shape):
    return RNG.normal(size=shape) + 1j * RNG.normal(size=shape)


def _numpy(typ, x, lengths):
    axes = tuple(range(-len(lengths), 0))
    return {"fft": lambda: np.fft.fftn(x, lengths, axes),
            "ifft": lambda: np.fft.ifftn(x, lengths, axes),
            "rfft": lambda: np.fft.rfftn(x, lengths, axes),
            "irfft": lambda: np.fft.irfftn(x, lengths, axes)}[typ]()


def _operand(typ, batch, lengths, dtype):
    if typ == "rfft":
        return RNG.normal(size=batch + lengths).astype(dtype)
    shape = lengths[:-1] + (lengths[-1] // 2 + 1,) if typ == "irfft" else lengths
    return crandn(*batch + shape).astype(np.result_type(dtype, np.complex64))


# (type, lengths): odd and even last lengths, one to three transformed axes
CASES = [("fft", (6,)), ("ifft", (5,)), ("rfft", (6,)), ("rfft", (5,)), ("irfft", (6,)),
         ("irfft", (5,)), ("fft", (3, 4)), ("ifft", (2, 3, 4)), ("rfft", (3, 4, 5)),
         ("irfft", (3, 4)), ("irfft", (2, 3, 5))]
IDS = [f"{t}-{'x'.join(map(str, n))}" for t, n in CASES]


@pytest.mark.parametrize("typ,lengths", CASES, ids=IDS)
def test_values_f32(typ, lengths):
    x = _operand(typ, (2,), lengths, np.float32)
    y = lax.fft(x, typ, lengths)
    want = _numpy(typ, x, lengths)
    assert y.dtype == (np.float32 if typ == "irfft" else np.complex64)
    assert y.shape == want.shape
    np.testing.assert_allclose(np.asarray(y), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("typ,lengths", CASES, ids=IDS)
def test_grads_and_transpose_f64(typ, lengths, x64):
    x = _operand(typ, (2,), lengths, np.float64)
    f = lambda v: lax.fft(v, typ, lengths)  # noqa: E731
    y = np.asarray(f(x))
    assert y.dtype == (np.float64 if typ == "irfft" else np.complex128)
    np.testing.assert_allclose(y, _numpy(typ, x, lengths), rtol=1e-12, atol=1e-12)
    check_grads(f, (x,), order=2, modes=("fwd", "rev"))
    # the dot-product identity, with a cotangent shaped and typed like the output
    ct = crandn(*y.shape) if np.iscomplexobj(y) else RNG.normal(size=y.shape)
    (ct_x,) = pyjax.linear_transpose(f, x)(ct)
    assert ct_x.shape == x.shape and ct_x.dtype == x.dtype
    lhs = np.sum(ct * y).real
    rhs = np.sum(np.asarray(ct_x) * x).real
    np.testing.assert_allclose(lhs, rhs, rtol=1e-10)


def test_irfft_transpose_weights_hermitian_bins(x64):
    # The DC and Nyquist bins count once, inner bins twice, imaginary parts of DC/Nyquist
    # never: the gradient of sum(irfft(z) * c) with respect to z, entry by entry.
    n = 6
    c = RNG.normal(size=n)
    ct_z = np.asarray(pyjax.grad(lambda z: (lax.fft(z, "irfft", (n,)) * c).sum())(
        crandn(n // 2 + 1)))
    # f(z) = sum_k c_k irfft(z)_k; df = Re(grad * dz) in JAX's convention, so the gradient's
    # real part is df/dRe(z) and minus its imaginary part is df/dIm(z).
    basis = np.eye(n // 2 + 1)
    d_re = np.array([np.fft.irfft(b, n) @ c for b in basis])
    d_im = np.array([np.fft.irfft(1j * b, n) @ c for b in basis])
    np.testing.assert_allclose(ct_z.real, d_re, atol=1e-12)
    np.testing.assert_allclose(-ct_z.imag, d_im, atol=1e-12)


@pytest.mark.parametrize("typ,lengths,in_axis", [
    ("fft", (4,), 0), ("rfft", (3, 5), 1), ("irfft", (4,), 1), ("ifft", (3, 4), 2)])
def test_vmap_equals_loop(typ, lengths, in_axis):
    x = np.moveaxis(np.stack([_operand(typ, (2,), lengths, np.float32) for _ in range(3)]),
                    0, in_axis)
    f = lambda v: lax.fft(v, typ, lengths)  # noqa: E731
    got = np.asarray(pyjax.vmap(f, in_axes=in_axis)(x))
    want = np.stack([np.asarray(f(np.take(x, i, axis=in_axis))) for i in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_jit_equals_eager():
    x = _operand("rfft", (2,), (4, 6), np.float32)
    f = lambda v: lax.fft(lax.fft(v, lax.FftType.RFFT, (4, 6)), lax.FftType.IRFFT, (4, 6))  # noqa
    np.testing.assert_array_equal(np.asarray(pyjax.jit(f)(x)), np.asarray(f(x)))
    np.testing.assert_allclose(np.asarray(f(x)), x, rtol=1e-5, atol=1e-5)


def test_dtype_rules():
    assert lax.fft(np.ones(4, np.int32), "fft", (4,)).dtype == np.complex64
    assert lax.fft(np.ones(4, np.float16), "rfft", (4,)).dtype == np.complex64
    assert lax.fft(np.ones(4, np.float32), "ifft", (4,)).dtype == np.complex64
    assert [t.value for t in lax.FftType] == [0, 1, 2, 3]
    assert lax.fft_p.name == "fft"


@pytest.mark.parametrize("args,err,match", [
    ((np.ones(4, np.complex64), "rfft", (4,)), ValueError, "only real valued"),
    ((np.ones(4, np.complex64), "dft", (4,)), TypeError, "Unknown FFT type"),
    ((np.ones(4, np.complex64), "fft", (5,)), ValueError, r"trailing dimensions \(5,\)"),
    ((np.ones(5, np.complex64), "irfft", (5,)), ValueError, r"trailing dimensions \(3,\)"),
    ((np.ones(4, np.complex64), "fft", (0,)), ValueError, "positive"),
    ((np.ones((2,) * 4, np.complex64), "fft", (2,) * 4), ValueError, "1 to 3"),
    ((np.ones(4, np.complex64), "fft", (2, 2)), ValueError, "rank at least 2"),
])
def test_errors(args, err, match):
    with pytest.raises(err, match=match):
        lax.fft(*args)
