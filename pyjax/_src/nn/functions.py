"""``jax.nn``'s activation and normalisation functions, written with ``jnp`` and ``lax``.

Each follows JAX's definition, including where JAX is careful about numerics: ``softplus`` is
``logaddexp(x, 0)`` (no overflow at 100), ``log_sigmoid`` is ``-softplus(-x)``, ``logsumexp``
shifts by the (gradient-stopped) maximum, and ``relu``/``relu6``/``softmax`` carry JAX's custom
derivatives (``relu'(0) = 0``; softmax's JVP, with ``jax_softmax_custom_jvp``, is written in
terms of its output). Functions made
of several primitives run as one compiled call when called eagerly (``compiled_when_eager``), as
JAX's are jitted.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from pyjax import lax
from pyjax import numpy as jnp
from pyjax._src.core import axes as axes_mod
from pyjax._src.core import dtypes
from pyjax._src.core.config import config
from pyjax._src.numpy.eager_compiled import compiled_when_eager
from pyjax._src.numpy.util import check_arraylike, promote_args_inexact
from pyjax._src.transformations.custom_derivatives import custom_jvp


def _inexact(name, x):
    check_arraylike(name, x)
    return promote_args_inexact(name, x)[0]


# ---- rectifiers (custom JVPs: the derivative at the kinks is JAX's) ----

@custom_jvp
def _relu(x):
    return jnp.maximum(x, 0)


@_relu.defjvp
def _relu_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _relu(x), lax.select(x > 0, t, lax.full_like(t, 0))


def relu(x):
    """Rectified linear unit ``max(x, 0)``; its derivative at 0 is 0, as JAX's."""
    check_arraylike("relu", x)
    return _relu(jnp.asarray(x))


@custom_jvp
def _relu6(x):
    return jnp.minimum(jnp.maximum(x, 0), 6.)


@_relu6.defjvp
def _relu6_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _relu6(x), lax.select((x > 0) & (x < 6), t, lax.full_like(t, 0))


def relu6(x):
    """``min(max(x, 0), 6)``; derivative 0 at both kinks, as JAX's."""
    check_arraylike("relu6", x)
    return _relu6(jnp.asarray(x))


@compiled_when_eager()
def sigmoid(x):
    """Logistic sigmoid ``1 / (1 + exp(-x))``."""
    return lax.logistic(_inexact("sigmoid", x))


@compiled_when_eager()
def sparse_sigmoid(x):
    """Sparse sigmoid (sparsemax's 1-D case): ``clip((x + 1) / 2, 0, 1)``."""
    x = _inexact("sparse_sigmoid", x)
    return 0.5 * jnp.clip(x + 1.0, 0.0, 2.0)


@compiled_when_eager()
def softplus(x):
    """``log(1 + exp(x))`` as ``logaddexp(x, 0)``: finite for large ``|x|``."""
    return jnp.logaddexp(_inexact("softplus", x), 0)


@compiled_when_eager()
def sparse_plus(x):
    """0 for ``x <= -1``, ``x`` for ``x >= 1``, ``(x + 1)**2 / 4`` in between."""
    x = _inexact("sparse_plus", x)
    return jnp.where(x <= -1.0, jnp.zeros_like(x),
                     jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


@compiled_when_eager()
def log_sigmoid(x):
    """``log(sigmoid(x)) = -softplus(-x)``: finite for very negative ``x``."""
    return -softplus(-_inexact("log_sigmoid", x))


@compiled_when_eager()
def squareplus(x, b=4):
    """``(x + sqrt(x**2 + b)) / 2``."""
    x = _inexact("squareplus", x)
    y = x + jnp.sqrt(jnp.square(x) + b)
    return y / 2


@compiled_when_eager()
def soft_sign(x):
    """``x / (|x| + 1)``."""
    x = _inexact("soft_sign", x)
    return x / (jnp.abs(x) + 1)


@compiled_when_eager()
def silu(x):
    """SiLU (swish): ``x * sigmoid(x)``."""
    x = _inexact("silu", x)
    return x * sigmoid(x)


swish = silu


@compiled_when_eager()
def mish(x):
    """``x * tanh(softplus(x))``."""
    x = _inexact("mish", x)
    return x * jnp.tanh(softplus(x))


@compiled_when_eager()
def log1mexp(x):
    """``log(1 - exp(-x))`` for ``x > 0``, switching between ``log(-expm1(-x))`` and
    ``log1p(-exp(-x))`` at ``log 2`` (Maechler, "Accurately computing log(1 - exp(-|a|))")."""
    x = _inexact("log1mexp", x)
    c = jnp.log(2.0)
    return jnp.where(x < c, jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


@compiled_when_eager()
def hard_sigmoid(x):
    """``relu6(x + 3) / 6``."""
    x = _inexact("hard_sigmoid", x)
    return relu6(x + 3.) / 6.


@compiled_when_eager()
def hard_silu(x):
    """``x * hard_sigmoid(x)`` (hard swish)."""
    x = _inexact("hard_silu", x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


@compiled_when_eager()
def hard_tanh(x):
    """``x`` clipped to ``[-1, 1]`` (integers stay integers, as JAX)."""
    check_arraylike("hard_tanh", x)
    x = jnp.asarray(x)
    return jnp.where(x > 1, jnp.ones_like(x), jnp.where(x < -1, -jnp.ones_like(x), x))


@compiled_when_eager()
def elu(x, alpha=1.0):
    """``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` otherwise."""
    x = _inexact("elu", x)
    safe_x = jnp.where(x > 0, jnp.zeros_like(x), x)  # no overflow in the unused branch
    return jnp.where(x > 0, x, alpha * jnp.expm1(safe_x))


@compiled_when_eager()
def celu(x, alpha=1.0):
    """``max(x, 0) + alpha * expm1(min(x, 0) / alpha)``."""
    x = _inexact("celu", x)
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@compiled_when_eager()
def selu(x):
    """Scaled ELU with the self-normalising constants of Klambauer et al. (2017)."""
    x = _inexact("selu", x)
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


@compiled_when_eager("approximate")
def gelu(x, approximate: bool = True):
    """Gaussian error linear unit: ``x * Phi(x)`` exactly (``approximate=False``, via erfc), or
    its tanh approximation ``x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x**3)))``."""
    x = _inexact("gelu", x)
    if approximate:
        sqrt_2_over_pi = np.sqrt(2 / np.pi).astype(x.dtype)
        cdf = 0.5 * (1.0 + jnp.tanh(sqrt_2_over_pi * (x + 0.044715 * (x ** 3))))
        return x * cdf
    sqrt_half = np.sqrt(0.5).astype(x.dtype)
    return x * (lax.erfc(-x * sqrt_half) / 2)


@compiled_when_eager("axis")
def glu(x, axis=-1):
    """Gated linear unit: the first half of ``x`` along ``axis`` times the sigmoid of the
    second half."""
    x = _inexact("glu", x)
    axis = axes_mod.canonicalize_axis(axis, x.ndim, "axis", "glu")
    size = x.shape[axis]
    if size % 2:
        raise ValueError(f"glu: axis {axis} of x must have an even size, got shape {x.shape}")
    x1, x2 = jnp.split(x, 2, axis)
    return x1 * sigmoid(x2)


@compiled_when_eager("negative_slope")
def leaky_relu(x, negative_slope=1e-2):
    """``x`` where ``x >= 0``, ``negative_slope * x`` elsewhere."""
    x = _inexact("leaky_relu", x)
    return jnp.where(x >= 0, x, negative_slope * x)


def tanh(x):
    """Hyperbolic tangent (``jnp.tanh``)."""
    return jnp.tanh(x)


def identity(x):
    """Returns ``x`` as an array, unchanged."""
    check_arraylike("identity", x)
    return jnp.asarray(x)


# ---- log-sum-exp and softmax ----

def _reduction_axes(name, ndim, axis):
    """(sorted reduced axes): None means all."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(axes_mod.canonicalize_axes(axis, ndim, "axis", name)))
    return (axes_mod.canonicalize_axis(axis, ndim, "axis", name),)


@compiled_when_eager("axis", "keepdims", "return_sign")
def logsumexp(a, axis=None, b=None, keepdims: bool = False, return_sign: bool = False,
              where=None):
    """``log(sum(b * exp(a), axis))`` computed stably (shifted by the maximum).

    ``b`` scales each term (the result is NaN where the sum is negative, unless
    ``return_sign``, which returns ``(log|sum|, sign(sum))``); ``where`` selects the terms."""
    if b is not None:
        check_arraylike("logsumexp", a, b)
        a, b = promote_args_inexact("logsumexp", a, b)
        a = jnp.where(b != 0, a, -jnp.inf)
    else:
        a = _inexact("logsumexp", a)
    if isinstance(axis, list):
        axis = tuple(axis)
    dims = _reduction_axes("logsumexp", a.ndim, axis)
    amax = jnp.max(jnp.real(a), axis=dims, keepdims=keepdims, where=where, initial=-jnp.inf)
    # a row of -inf (or +inf) must not give nan from inf - inf: shift by 0 there
    amax = lax.stop_gradient(jnp.where(jnp.isfinite(amax), amax, jnp.zeros_like(amax)))
    amax_dims = amax if keepdims else lax.expand_dims(amax, dims)
    exp_a = jnp.exp(a - amax_dims.astype(a.dtype))
    if b is not None:
        exp_a = exp_a * b
    sumexp = jnp.sum(exp_a, axis=dims, keepdims=keepdims, where=where)
    sign = jnp.sign(sumexp)
    complex_out = jnp.issubdtype(sumexp.dtype, jnp.complexfloating)
    if return_sign or not complex_out:
        sumexp = jnp.abs(sumexp)
    out = jnp.log(sumexp) + amax.astype(sumexp.dtype)
    if return_sign:
        return out, sign
    if b is not None and not complex_out:
        out = jnp.where(sign < 0, jnp.array(np.nan, dtype=out.dtype), out)
    return out


@compiled_when_eager("axis", "keepdims")
def logmeanexp(x, axis=None, where=None, keepdims: bool = False):
    """``log(mean(exp(x), axis))``, computed as ``logsumexp`` minus the log of the count."""
    x = _inexact("logmeanexp", x)
    if isinstance(axis, list):
        axis = tuple(axis)
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    dims = _reduction_axes("logmeanexp", x.ndim, axis)
    if where is None:
        count = math.prod(x.shape[d] for d in dims)
        return lse - jnp.log(jnp.asarray(count, lse.dtype))
    count = jnp.sum(jnp.broadcast_to(where, x.shape), axis=dims, keepdims=keepdims)
    return lse - jnp.log(count.astype(lse.dtype))


def _where_value(where, x, fill):
    return x if where is None else jnp.where(where, x, jnp.asarray(fill, x.dtype))


@compiled_when_eager("axis")
def log_softmax(x, axis=-1, where=None):
    """``x - logsumexp(x, axis, keepdims=True)`` (``-inf`` where ``where`` is False)."""
    x = _inexact("log_softmax", x)
    axis = _softmax_axis("log_softmax", x.ndim, axis)
    x_max = jnp.max(x, axis, where=where, initial=-jnp.inf, keepdims=True)
    x_safe = _where_value(where, x, -np.inf)
    shifted = x_safe - lax.stop_gradient(x_max)
    shifted_logsumexp = jnp.log(jnp.sum(jnp.exp(shifted), axis, where=where, keepdims=True))
    result = shifted - shifted_logsumexp
    if where is not None:
        return jnp.where(where, result, -jnp.inf)
    return result


def _softmax_axis(name, ndim, axis):
    if isinstance(axis, list):
        axis = tuple(axis)
    return _reduction_axes(name, ndim, axis)


def _softmax_core(x, where, axis):
    x_max = jnp.max(x, axis, where=where, initial=-jnp.inf, keepdims=True)
    return _softmax_shifted(x, where, axis, x_max)


def _softmax_differentiated(x, where, axis):
    """softmax differentiated through its code (JAX's rule with jax_softmax_custom_jvp off,
    its default): the shift by the maximum is a constant to the derivative."""
    x_max = jnp.max(x, axis, where=where, initial=-jnp.inf, keepdims=True)
    return _softmax_shifted(x, where, axis, lax.stop_gradient(x_max))


def _softmax_shifted(x, where, axis, x_max):
    x_safe = _where_value(where, x, -np.inf)
    unnormalized = jnp.exp(x_safe - x_max)
    result = unnormalized / jnp.sum(unnormalized, axis, where=where, keepdims=True)
    if where is not None:
        result = jnp.where(where, result, jnp.zeros_like(result))
    return result


# JAX's softmax derivative: y * (t - sum(y * t)), written with the output only, so that the
# derivative of a softmax whose inputs hold -inf (masked logits) is finite.
_softmax = custom_jvp(_softmax_core, nondiff_argnums=(2,))


@_softmax.defjvp
def _softmax_jvp(axis, primals, tangents):
    (x, where), (x_dot, _) = primals, tangents
    y = _softmax(x, where, axis)
    return y, y * (x_dot - jnp.sum(y * x_dot, axis, where=where, keepdims=True))


@compiled_when_eager("axis")
def softmax(x, axis=-1, where=None):
    """``exp(x) / sum(exp(x), axis)`` computed stably; entries where ``where`` is False get
    0 and do not count in the sum. With ``jax_softmax_custom_jvp`` its JVP is JAX's custom
    rule written with the output; without (JAX's default) the code is differentiated."""
    x = _inexact("softmax", x)
    axis = _softmax_axis("softmax", x.ndim, axis)
    impl = _softmax if config.jax_softmax_custom_jvp else _softmax_differentiated
    return impl(x, None if where is None else jnp.asarray(where), axis)


@compiled_when_eager("axis", "epsilon")
def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None):
    """``(x - mean) / sqrt(variance + epsilon)`` with the mean and variance over ``axis``
    unless given (the variance as ``mean(x**2) - mean**2``, as JAX)."""
    x = _inexact("standardize", x)
    axis = _softmax_axis("standardize", x.ndim, axis)
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        variance = jnp.mean(jnp.square(x), axis, keepdims=True, where=where) - jnp.square(mean)
    return (x - jnp.asarray(mean)) * lax.rsqrt(jnp.asarray(variance) + epsilon)


@compiled_when_eager("num_classes", "dtype", "axis")
def one_hot(x, num_classes, *, dtype=None, axis=-1):
    """One-hot encoding of the integers ``x``: a new axis ``axis`` of size ``num_classes``
    holding 1 at position ``x`` (all zeros for an ``x`` outside ``[0, num_classes)``)."""
    check_arraylike("one_hot", x)
    try:
        num_classes = operator.index(num_classes)
    except TypeError:
        raise TypeError("one_hot: num_classes must be a concrete integer (the size of the new "
                        f"axis), got {num_classes!r}") from None
    if num_classes < 0:
        raise ValueError(f"one_hot: num_classes must be non-negative, got {num_classes}")
    dtype = dtypes.canonicalize_dtype(np.float64) if dtype is None else dtype
    x = jnp.asarray(x)
    if isinstance(axis, (tuple, list)):
        raise NotImplementedError("one_hot: a tuple `axis` (a sharded one-hot) is not "
                                  "supported; pass an int")
    out_axis = axes_mod.canonicalize_axis(axis, x.ndim + 1, "axis", "one_hot")
    lhs = lax.expand_dims(x, (out_axis,))
    rhs_shape = [1] * x.ndim
    rhs_shape.insert(out_axis, num_classes)
    rhs = lax.broadcasted_iota(x.dtype, tuple(rhs_shape), out_axis)
    return (lhs == rhs).astype(dtype)


__all__ = ["relu", "relu6", "sigmoid", "sparse_sigmoid", "softplus", "sparse_plus",
           "log_sigmoid", "squareplus", "soft_sign", "silu", "swish", "mish", "log1mexp",
           "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "elu", "celu", "selu",
           "gelu", "glu", "leaky_relu", "tanh", "identity", "logsumexp", "logmeanexp",
           "log_softmax", "softmax", "standardize", "one_hot"]
