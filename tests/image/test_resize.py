"""pyjax.image against a NumPy implementation of the documented kernels (a loop over output
samples), known properties (identity, constants, ramps, exact pixel hits), gradients in
float64, vmap against a loop and jit against eager."""
import numpy as np
import pytest

import pyjax as jax
from pyjax import image
from pyjax.test_util import check_grads


def triangle(x):
    return max(0., 1. - abs(x))


def keys_cubic(x, a=-0.5):
    x = abs(x)
    if x < 1:
        return (a + 2) * x ** 3 - (a + 3) * x ** 2 + 1
    if x < 2:
        return a * x ** 3 - 5 * a * x ** 2 + 8 * a * x - 4 * a
    return 0.


def lanczos(r):
    def k(x):
        x = abs(x)
        if x > r:
            return 0.
        return float(np.sinc(x) * np.sinc(x / r))
    return k


KERNELS = {"linear": triangle, "cubic": keys_cubic, "lanczos3": lanczos(3),
           "lanczos5": lanczos(5)}


def resample_axis(x, axis, n, kernel, scale, translation, antialias):
    """Output sample j reads input position (j + 0.5 - translation) / scale - 0.5 with the
    kernel stretched by 1/scale when downsampling with antialias; weights sum to 1."""
    x = np.moveaxis(np.asarray(x, np.float64), axis, -1)
    m = x.shape[-1]
    width = max(1. / scale, 1.) if antialias else 1.
    out = np.zeros(x.shape[:-1] + (n,))
    for j in range(n):
        p = (j + 0.5 - translation) / scale - 0.5
        if not -0.5 <= p <= m - 0.5:
            continue
        w = np.array([kernel((p - i) / width) for i in range(m)])
        if abs(w.sum()) > 1000 * np.finfo(np.float32).eps:
            out[..., j] = x @ (w / w.sum())
    return np.moveaxis(out, -1, axis)


def reference_resize(x, shape, method, antialias=True):
    for d, n in enumerate(shape):
        if x.shape[d] != n:
            x = resample_axis(x, d, n, KERNELS[method], n / x.shape[d], 0., antialias)
    return x


@pytest.fixture(scope="module")
def img():
    return np.random.default_rng(0).uniform(size=(5, 6, 2)).astype(np.float32)


@pytest.mark.parametrize("method", ["linear", "cubic", "lanczos3", "lanczos5"])
def test_resize_matches_kernel_definition(img, method):
    for shape in [(9, 4, 2), (2, 11, 2), (5, 3, 2)]:
        for antialias in (True, False):
            got = image.resize(img, shape, method, antialias=antialias)
            assert got.shape == shape and got.dtype == np.float32
            np.testing.assert_allclose(np.asarray(got),
                                       reference_resize(img, shape, method, antialias),
                                       rtol=2e-5, atol=2e-6, err_msg=f"{shape} {antialias}")


def test_method_aliases_and_enum(img):
    base = np.asarray(image.resize(img, (7, 7, 2), "linear"))
    for alias in ("bilinear", "trilinear", "triangle", image.ResizeMethod.LINEAR):
        np.testing.assert_array_equal(np.asarray(image.resize(img, (7, 7, 2), alias)), base)
    np.testing.assert_array_equal(np.asarray(image.resize(img, (7, 7, 2), "bicubic")),
                                  np.asarray(image.resize(img, (7, 7, 2), "cubic")))
    assert image.ResizeMethod.from_string("tricubic") is image.ResizeMethod.CUBIC


def test_nearest(img):
    for shape in [(9, 4, 2), (3, 13, 1)]:
        want = img
        for d, n in enumerate(shape):
            m = want.shape[d]
            idx = np.floor((np.arange(n) + 0.5) * m / n).astype(int)
            want = np.take(want, idx, axis=d)
        np.testing.assert_array_equal(np.asarray(image.resize(img, shape, "nearest")), want)
    ints = (img * 100).astype(np.uint8)
    got = image.resize(ints, (10, 12, 2), "nearest")
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(np.asarray(got), ints.repeat(2, 0).repeat(2, 1))


def test_properties(img):
    for method in ("linear", "cubic", "lanczos3", "nearest"):
        np.testing.assert_array_equal(np.asarray(image.resize(img, img.shape, method)), img)
        const = np.full((4, 5), 3.25, np.float32)
        np.testing.assert_allclose(np.asarray(image.resize(const, (7, 3), method)), 3.25,
                                   rtol=1e-6)
    # linear and cubic upsampling of a ramp reproduce it away from the borders
    ramp = np.arange(8, dtype=np.float32)
    pos = (np.arange(32) + 0.5) / 4 - 0.5
    inner = (pos > 1) & (pos < 6)
    for method in ("linear", "cubic"):
        got = np.asarray(image.resize(ramp, (32,), method))
        np.testing.assert_allclose(got[inner], pos[inner], rtol=1e-6, atol=1e-5)
    # downscaling by 2 with the antialiased triangle weighs 4 pixels 1:3:3:1
    x = np.arange(8, dtype=np.float32) ** 2
    got = np.asarray(image.resize(x, (4,), "linear"))
    np.testing.assert_allclose(got[1:3], [np.dot([1, 3, 3, 1], x[k:k + 4]) / 8
                                          for k in (1, 3)], rtol=1e-6)
    # without antialias it is the mean of the two nearest pixels
    np.testing.assert_allclose(np.asarray(image.resize(x, (4,), "linear", antialias=False)),
                               (x[0::2] + x[1::2]) / 2, rtol=1e-6)
    # integer input gives float32
    assert image.resize(np.arange(6).reshape(2, 3), (4, 6), "linear").dtype == np.float32


def test_scale_and_translate(img):
    x = img[..., 0]
    for method in ("linear", "lanczos3"):
        got = image.scale_and_translate(x, (7, 4), (0, 1), np.array([1.5, 0.7]),
                                        np.array([-0.5, 0.3]), method)
        want = resample_axis(x, 0, 7, KERNELS[method], 1.5, -0.5, True)
        want = resample_axis(want, 1, 4, KERNELS[method], 0.7, 0.3, True)
        np.testing.assert_allclose(np.asarray(got), want, rtol=2e-5, atol=2e-6)
    # one spatial dim only; an integer translation with scale 1 shifts (zeros come in)
    got = image.scale_and_translate(x, (5, 6), (1,), [1.], [2.], "linear")
    np.testing.assert_allclose(np.asarray(got)[:, 2:], x[:, :4], rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(got)[:, :2], 0)
    # traced scale and translation
    f = jax.jit(lambda s, t: image.scale_and_translate(x, (7, 4), (0, 1), s, t, "cubic"))
    np.testing.assert_allclose(
        np.asarray(f(np.array([1.5, 0.7]), np.array([-0.5, 0.3]))),
        np.asarray(image.scale_and_translate(x, (7, 4), (0, 1), [1.5, 0.7], [-0.5, 0.3],
                                             "cubic")), rtol=1e-6)


def test_grads_vmap_jit(img, x64):
    x = img[:3, :4, 0].astype(np.float64)
    check_grads(jax.jit(lambda x: image.resize(x, (2, 7), "cubic")), (x,), order=1)
    check_grads(jax.jit(lambda s: image.scale_and_translate(x, (4, 4), (0, 1), s, np.zeros(2),
                                                            "linear")),
                (np.array([0.8, 1.3]),), order=1)
    batch = img.transpose(2, 0, 1)
    loop = np.stack([np.asarray(image.resize(b, (7, 3), "lanczos3")) for b in batch])
    np.testing.assert_allclose(
        np.asarray(jax.jit(jax.vmap(lambda b: image.resize(b, (7, 3), "lanczos3")))(batch)),
        loop,
        rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(
        np.asarray(jax.jit(lambda b: image.resize(b, (7, 3), "lanczos3"))(batch[0])), loop[0],
        rtol=1e-6, atol=1e-7)


def test_errors(img):
    with pytest.raises(ValueError, match="Unknown resize method"):
        image.resize(img, (2, 2, 2), "area")
    with pytest.raises(ValueError, match="shape must have length"):
        image.resize(img, (2, 2), "linear")
    with pytest.raises(ValueError, match="same length as scale"):
        image.scale_and_translate(img, img.shape, (0, 1), [1.], [0., 0.], "linear")
    with pytest.raises(ValueError, match="nearest"):
        image.scale_and_translate(img, img.shape, (0,), [1.], [0.], "nearest")
    with pytest.raises(TypeError):
        image.resize(img, (2, 2, 2), 3)
