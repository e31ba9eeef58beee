"""``pyjax.numpy.fft`` against ``numpy.fft``: every function, every norm, odd and even lengths,
cropping and zero-padding, several axes; float32 and float64 (x64); round trips; derivatives
against finite differences; ``vmap`` against a loop; ``jit`` against eager."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax.test_util import check_grads

RNG = np.random.default_rng(1)
NORMS = (None, "backward", "ortho", "forward")
ONE_D = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
N_D = ("fftn", "ifftn", "rfftn", "irfftn", "fft2", "ifft2", "rfft2", "irfft2")
REAL_INPUT = ("rfft", "ihfft", "rfftn", "rfft2")


def _input(name, shape, dtype=np.float32):
    x = RNG.normal(size=shape)
    if name not in REAL_INPUT:
        x = x + 1j * RNG.normal(size=shape)
    return x.astype(np.result_type(dtype, np.complex64) if np.iscomplexobj(x) else dtype)


def _close(got, want, dtype):
    tol = 1e-4 if dtype == np.float32 else 1e-11
    scale = max(1.0, float(np.max(np.abs(want))) if want.size else 1.0)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale)


def _norms(i):
    """Every norm for the first case, one each (in turn) for the others: a norm is a
    scaling, so it needs checking on each function, not on each shape."""
    return NORMS if i == 0 else (NORMS[i % len(NORMS)],)


# (shape, n, axis): even and odd lengths, cropping (n smaller) and zero-padding (n larger)
CASES_1D = [((3, 8), None, -1), ((7, 2), None, 0), ((3, 8), 5, 1), ((4, 6, 2), 11, -2)]


@pytest.mark.parametrize("name", ONE_D)
def test_one_axis_every_norm(name):
    for i, (shape, n, axis) in enumerate(CASES_1D):
        x = _input(name, shape)
        for norm in _norms(i):
            got = np.asarray(getattr(jnp.fft, name)(x, n=n, axis=axis, norm=norm))
            want = getattr(np.fft, name)(x, n=n, axis=axis, norm=norm)
            real_out = name in ("irfft", "hfft")
            assert got.dtype == (np.float32 if real_out else np.complex64), (name, got.dtype)
            _close(got, want, np.float32)


# (shape, s, axes): all axes, an axis order that decides which axis the real transforms halve,
# s with cropping and padding, s without axes (the last len(s) axes)
CASES_ND = [((3, 4, 5), None, None), ((4, 3, 6), None, (-1, 0)), ((4, 3, 6), (3, 9), (0, 2)),
            ((2, 5, 4), (4, 3), None)]
CASES_2D = [((3, 4, 6), None, (-2, -1)), ((4, 3, 5), (5, 2), (2, 0))]


@pytest.mark.parametrize("name", N_D)
def test_several_axes_every_norm(name):
    for i, (shape, s, axes) in enumerate(CASES_2D if name.endswith("2") else CASES_ND):
        x = _input(name, shape)
        kw = {} if axes is None else {"axes": axes}
        # NumPy 2 wants the axes spelled out with s: the last len(s) ones, as pyjax's default
        np_axes = axes if axes is not None or s is None else tuple(range(-len(s), 0))
        for norm in _norms(i):
            got = np.asarray(getattr(jnp.fft, name)(x, s=s, norm=norm, **kw))
            _close(got, getattr(np.fft, name)(x, s=s, axes=np_axes, norm=norm), np.float32)


@pytest.mark.parametrize("name", ONE_D + ("fftn", "irfftn"))
def test_float64(name, x64):
    x = _input(name, (4, 7), np.float64)
    for norm in ("backward", "ortho", "forward"):
        got = np.asarray(getattr(jnp.fft, name)(x, norm=norm))
        assert got.dtype in (np.float64, np.complex128)
        _close(got, getattr(np.fft, name)(x, norm=norm), np.float64)


def test_integer_and_bool_inputs_promote():
    x = np.arange(6, dtype=np.int32)
    assert jnp.fft.fft(x).dtype == np.complex64
    assert jnp.fft.rfft(x % 2 == 0).dtype == np.complex64
    assert jnp.fft.irfft(x).dtype == np.float32
    _close(np.asarray(jnp.fft.fft(x)), np.fft.fft(x), np.float32)
    _close(np.asarray(jnp.fft.rfft(x % 2 == 0)), np.fft.rfft(x % 2 == 0), np.float32)


def test_integer_input_promotes_to_double_with_x64(x64):
    # JAX 0.10.2 with x64 (observed): int64 input gives complex128, int32 complex64
    x = np.arange(6, dtype=np.int64)
    assert jnp.fft.fft(x).dtype == np.complex128
    assert jnp.fft.rfft(x).dtype == np.complex128
    assert jnp.fft.rfft(x.astype(np.int32)).dtype == np.complex64
    assert jnp.fft.fft(x.astype(np.float32)).dtype == np.complex64


@pytest.mark.parametrize("n", [6, 7])
def test_round_trips(n):
    x = RNG.normal(size=(3, n)).astype(np.float32)
    c = _input("fft", (3, n))
    _close(np.asarray(jnp.fft.ifft(jnp.fft.fft(c))), c, np.float32)
    _close(np.asarray(jnp.fft.irfft(jnp.fft.rfft(x), n)), x, np.float32)
    _close(np.asarray(jnp.fft.irfftn(jnp.fft.rfftn(x), x.shape)), x, np.float32)
    _close(np.asarray(jnp.fft.hfft(jnp.fft.ihfft(x), n)), x, np.float32)


GRAD_CASES = [("fft", {"n": 5}), ("ifft", {"norm": "ortho"}), ("rfft", {"n": 7}),
              ("irfft", {"n": 6}), ("irfft", {"n": 5, "norm": "forward"}), ("hfft", {}),
              ("ihfft", {"norm": "ortho"}), ("fftn", {"s": (2, 5)}), ("ifft2", {}),
              ("rfftn", {"axes": (1, 0)}), ("irfftn", {"s": (3, 5)}), ("rfft2", {}),
              ("irfft2", {"norm": "forward"}), ("fft2", {"norm": "forward"})]


@pytest.mark.parametrize("name,kw", GRAD_CASES, ids=[f"{n}-{k}" for n, k in GRAD_CASES])
def test_grads(name, kw, x64):
    x = _input(name, (3, 4), np.float64)
    check_grads(lambda v: getattr(jnp.fft, name)(v, **kw), (x,), order=1,
                modes=("fwd", "rev"))


def test_grad_of_real_loss_through_rfft_round_trip(x64):
    # d/dx sum(irfft(rfft(x) * h)) is the correlation with irfft(h): a closed-form oracle
    x = RNG.normal(size=8)
    h = RNG.normal(size=5) + 1j * RNG.normal(size=5)
    loss = lambda v: jnp.sum(jnp.fft.irfft(jnp.fft.rfft(v) * h, 8) ** 2)  # noqa: E731
    g = np.asarray(pyjax.grad(loss)(x))
    eps, fd = 1e-6, np.zeros(8)
    for i in range(8):
        e = np.eye(8)[i] * eps
        fd[i] = (float(loss(x + e)) - float(loss(x - e))) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def test_vmap_equals_loop_and_jit_equals_eager():
    x = RNG.normal(size=(3, 4, 6)).astype(np.float32)
    f = lambda v: jnp.fft.rfft2(v, s=(3, 5), axes=(1, 0), norm="ortho")  # noqa: E731
    got = np.asarray(pyjax.vmap(f, in_axes=2)(x))
    want = np.stack([np.asarray(f(x[:, :, i])) for i in range(6)])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    g = lambda v: jnp.fft.ifftshift(jnp.fft.irfft(jnp.fft.fftshift(v, 0), 7, axis=0))  # noqa
    np.testing.assert_allclose(np.asarray(pyjax.jit(g)(x)), np.asarray(g(x)), rtol=1e-6,
                               atol=1e-6)


@pytest.mark.parametrize("n,d", [(8, 1.0), (7, 0.25), (1, 2.0)])
def test_frequencies(n, d):
    for name in ("fftfreq", "rfftfreq"):
        got = getattr(jnp.fft, name)(n, d)
        assert got.dtype == np.float32
        np.testing.assert_allclose(np.asarray(got), getattr(np.fft, name)(n, d), rtol=1e-6)


def test_frequencies_dtype_and_device(x64):
    assert jnp.fft.fftfreq(4).dtype == np.float64
    got = jnp.fft.rfftfreq(5, 0.5, dtype=np.float32, device=pyjax.devices()[1])
    assert got.dtype == np.float32 and got.devices() == {pyjax.devices()[1]}
    np.testing.assert_allclose(np.asarray(got), np.fft.rfftfreq(5, 0.5), rtol=1e-6)
    with pytest.raises(ValueError, match="only takes an int"):
        jnp.fft.fftfreq([4])


@pytest.mark.parametrize("axes", [None, 0, (1,), (-1, 0)])
def test_shifts(axes):
    x = np.arange(35).reshape(5, 7)
    np.testing.assert_array_equal(jnp.fft.fftshift(x, axes), np.fft.fftshift(x, axes))
    np.testing.assert_array_equal(jnp.fft.ifftshift(x, axes), np.fft.ifftshift(x, axes))


@pytest.mark.parametrize("call,err,match", [
    (lambda: jnp.fft.fft(np.ones(4), norm="bad"), ValueError, "Invalid norm value bad"),
    (lambda: jnp.fft.fft(np.ones(4), n=0), ValueError, r"Invalid number of FFT data points"),
    # irfft(np.ones(1)) gives an empty array as JAX 0.10.2 (tests/fft/test_edge_sweep.py)
    (lambda: jnp.fft.fft(np.ones((2, 2)), axis=(0, 1)), ValueError, "does not support multiple"),
    (lambda: jnp.fft.fftn(np.ones((2, 2)), axes=(0, 0)), ValueError, "repeated axis"),
    (lambda: jnp.fft.fftn(np.ones((2, 2)), s=(2,), axes=(0, 1)), ValueError,
     "Shape and axes have different lengths"),
    (lambda: jnp.fft.fftn(np.ones((2,) * 4)), ValueError, "only supports 1D, 2D, and 3D"),
    (lambda: jnp.fft.rfft(np.ones(4, np.complex64)), ValueError, "only real valued"),
    (lambda: jnp.fft.fft(np.ones(4), axis=1), ValueError, "out of bounds"),
    (lambda: jnp.fft.fft([1.0, 2.0]), TypeError, "requires ndarray or scalar"),
])
def test_errors(call, err, match):
    with pytest.raises(err, match=match):
        call()
