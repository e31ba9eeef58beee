"""``jax.image``: ``resize`` and ``scale_and_translate``.

Every method but nearest is separable: for each resized axis a weight matrix (input size x
output size) holds the kernel evaluated at the distance between each output sample's position
in input coordinates and each input pixel (stretched by the downscale factor when
``antialias``), normalised per output sample; the image is contracted with each matrix in turn.
Output samples whose centre falls outside the input get weight 0. The kernels are the
triangle (linear), Keys' cubic with a = -0.5, and Lanczos with radius 3 or 5.
"""
from __future__ import annotations

import enum

import numpy as np

from pyjax import lax
from pyjax import numpy as jnp
from pyjax._src.core import axes as axes_mod
from pyjax._src.numpy.eager_compiled import compiled_when_eager
from pyjax._src.numpy.util import check_arraylike


class ResizeMethod(enum.Enum):
    """Image resize methods: ``nearest``, ``linear`` (``bilinear``, ``trilinear``,
    ``triangle``), ``lanczos3``, ``lanczos5``, ``cubic`` (``bicubic``, ``tricubic``)."""
    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4

    @staticmethod
    def from_string(s: str):
        if s == "nearest":
            return ResizeMethod.NEAREST
        if s in ("linear", "bilinear", "trilinear", "triangle"):
            return ResizeMethod.LINEAR
        if s == "lanczos3":
            return ResizeMethod.LANCZOS3
        if s == "lanczos5":
            return ResizeMethod.LANCZOS5
        if s in ("cubic", "bicubic", "tricubic"):
            return ResizeMethod.CUBIC
        raise ValueError(f'Unknown resize method "{s}"')


def _lanczos_kernel(radius, x):
    y = radius * jnp.sin(np.pi * x) * jnp.sin(np.pi * x / radius)
    # sinc(x) sinc(x / r) -> 1 at 0: the quotient is inaccurate below 1e-3
    out = jnp.where(x > 1e-3, jnp.divide(y, jnp.where(x != 0, np.pi ** 2 * x ** 2, 1)), 1)
    return jnp.where(x > radius, 0., out)


def _keys_cubic_kernel(x):
    # Keys (1981), a = -0.5: (a+2)|x|^3 - (a+3)|x|^2 + 1 on [0, 1), a|x|^3 - 5a|x|^2 + 8a|x| - 4a
    # on [1, 2)
    out = ((1.5 * x - 2.5) * x) * x + 1.
    out = jnp.where(x >= 1., ((-0.5 * x + 2.5) * x - 4.) * x + 2., out)
    return jnp.where(x >= 2., 0., out)


def _triangle_kernel(x):
    return jnp.maximum(0, 1 - jnp.abs(x))


_KERNELS = {
    ResizeMethod.LINEAR: _triangle_kernel,
    ResizeMethod.LANCZOS3: lambda x: _lanczos_kernel(3., x),
    ResizeMethod.LANCZOS5: lambda x: _lanczos_kernel(5., x),
    ResizeMethod.CUBIC: _keys_cubic_kernel,
}


def _weight_matrix(input_size, output_size, scale, translation, kernel, antialias):
    """(input_size, output_size) weights: column j resamples output sample j."""
    dtype = jnp.result_type(scale, translation)
    inv_scale = 1. / scale
    # the kernel widens by the downscale factor when antialiasing (never narrows)
    kernel_scale = jnp.maximum(inv_scale, 1.) if antialias else 1.
    sample_f = ((jnp.arange(output_size, dtype=dtype) + 0.5) * inv_scale
                - translation * inv_scale - 0.5)
    x = (jnp.abs(sample_f[None, :] - jnp.arange(input_size, dtype=dtype)[:, None])
         / kernel_scale)
    weights = kernel(x)
    total = jnp.sum(weights, axis=0, keepdims=True)
    weights = jnp.where(jnp.abs(total) > 1000. * float(np.finfo(np.float32).eps),
                        jnp.divide(weights, jnp.where(total != 0, total, 1)), 0)
    inside = (sample_f >= -0.5) & (sample_f <= input_size - 0.5)
    return jnp.where(inside[None, :], weights, 0)


def _scale_and_translate(x, output_shape, spatial_dims, scale, translation, kernel,
                         antialias, precision):
    for i, d in enumerate(spatial_dims):
        m, n = x.shape[d], output_shape[d]
        w = _weight_matrix(m, n, scale[i], translation[i], kernel, antialias).astype(x.dtype)
        x = jnp.moveaxis(jnp.tensordot(x, w, axes=([d], [0]), precision=precision), -1, d)
    return x


def _resize_nearest(x, output_shape):
    for d, (m, n) in enumerate(zip(x.shape, output_shape)):
        if m == n:
            continue
        # in float32 as JAX: the same rounding gives the same source pixels
        offsets = ((np.arange(n, dtype=np.float32) + np.float32(0.5)) * np.float32(m)
                   / np.float32(n))
        offsets = np.floor(offsets).astype(np.int32)
        x = jnp.take(x, offsets, axis=d)
    return x


def _method(method):
    if isinstance(method, str):
        return ResizeMethod.from_string(method)
    if not isinstance(method, ResizeMethod):
        raise TypeError(f"method must be a ResizeMethod or a string, got {method!r}")
    return method


def _check_image(name, image, shape):
    check_arraylike(name, image)
    image = jnp.asarray(image)
    shape = axes_mod.canonicalize_shape(shape, "shape", name)
    if len(shape) != image.ndim:
        raise ValueError("shape must have length equal to the number of dimensions of x; "
                         f" {shape} vs {image.shape}")
    return image, shape


def _inexact(image):
    if not jnp.issubdtype(image.dtype, jnp.inexact):
        return lax.convert_element_type(image, jnp.result_type(image, jnp.float32))
    return image


@compiled_when_eager("shape", "method", "antialias", "precision")
def resize(image, shape, method, antialias=True, precision=lax.Precision.HIGHEST):
    """Resize ``image`` to ``shape`` (every axis may change) by interpolation with
    ``method``; ``antialias`` widens the kernel when downsampling (no effect upsampling).
    Nearest keeps the dtype; the others return a floating array."""
    image, shape = _check_image("resize", image, shape)
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    image = _inexact(image)
    # every kernel interpolates, so an axis that keeps its size is left as it is
    spatial_dims = tuple(i for i in range(len(shape)) if image.shape[i] != shape[i])
    scale = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in spatial_dims]
    return _scale_and_translate(image, shape, spatial_dims, scale, [0.] * len(spatial_dims),
                                _KERNELS[method], antialias, precision)


def scale_and_translate(image, shape, spatial_dims, scale, translation, method="linear",
                        antialias=True, precision=lax.Precision.HIGHEST):
    """Resample ``image`` to ``shape`` along ``spatial_dims``: output position ``o`` (pixel
    centres at ``o + 0.5``) reads input position ``(o + 0.5 - translation) / scale - 0.5``.
    ``scale`` and ``translation`` (one per spatial dim) may be traced. Methods: linear,
    lanczos3, lanczos5, cubic (not nearest)."""
    image, shape = _check_image("scale_and_translate", image, shape)
    spatial_dims = tuple(axes_mod.canonicalize_axis(d, image.ndim, "spatial_dims",
                                                    "scale_and_translate")
                         for d in spatial_dims)
    if len(spatial_dims) != len(scale):
        raise ValueError("spatial_dims must have the same length as scale; "
                         f"{spatial_dims} vs {scale}")
    if len(spatial_dims) != len(translation):
        raise ValueError("spatial_dims must have the same length as translation; "
                         f"{spatial_dims} vs {translation}")
    for d in range(image.ndim):
        if d not in spatial_dims and shape[d] != image.shape[d]:
            raise ValueError(f"scale_and_translate: axis {d} is not in spatial_dims, so its "
                             f"size must stay {image.shape[d]}, got shape {shape}")
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        raise ValueError("scale_and_translate does not support the nearest method; use "
                         "linear, lanczos3, lanczos5 or cubic")
    # Python numbers become one array, so that an eager call is one compiled call
    scale, translation = _numbers_to_array(scale), _numbers_to_array(translation)
    return _scale_and_translate_checked(image, shape, spatial_dims, scale, translation, method,
                                        antialias, precision)


def _numbers_to_array(values):
    if isinstance(values, (list, tuple)) and all(isinstance(v, (int, float)) for v in values):
        return np.asarray(values, dtype=float)
    return values


@compiled_when_eager("shape", "spatial_dims", "method", "antialias", "precision")
def _scale_and_translate_checked(image, shape, spatial_dims, scale, translation, method,
                                 antialias, precision):
    image = _inexact(image)
    scale, translation = jnp.asarray(scale), jnp.asarray(translation)
    return _scale_and_translate(image, shape, spatial_dims, list(scale), list(translation),
                                _KERNELS[method], antialias, precision)


__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
