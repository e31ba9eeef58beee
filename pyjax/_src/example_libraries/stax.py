"""`jax.example_libraries.stax`: neural-network layers as `(init_fun, apply_fun)` pairs.

`init_fun(rng, input_shape) -> (output_shape, params)`; `apply_fun(params, inputs, **kwargs)`.
Combinators (`serial`, `parallel`, `FanOut`, ...) build networks from layers. Output shapes
of the convolution and pooling layers are found with `eval_shape` of the layer itself, so they
always agree with what `apply_fun` computes."""
import functools
import math

import numpy as np

from pyjax import lax
from pyjax import numpy as jnp
from pyjax import random
from pyjax._src.nn import functions as nnf
from pyjax._src.nn.initializers import glorot_normal, normal, ones, zeros
from pyjax._src.transformations.jit import eval_shape
from pyjax._src.core.abstract import ShapeDtypeStruct

__all__ = [
    "Dense", "GeneralConv", "Conv", "Conv1DTranspose", "ConvTranspose", "GeneralConvTranspose",
    "BatchNorm", "elementwise", "Tanh", "Relu", "Exp", "LogSoftmax", "Softmax", "Softplus",
    "Sigmoid", "Elu", "LeakyRelu", "Selu", "Gelu", "MaxPool", "SumPool", "AvgPool", "Flatten",
    "Identity", "FanOut", "FanInSum", "FanInConcat", "Dropout", "serial", "parallel",
    "shape_dependent", "glorot", "randn", "relu", "log_softmax", "softmax", "softplus",
    "sigmoid", "elu", "leaky_relu", "selu", "gelu", "standardize", "glorot_normal", "normal",
    "ones", "zeros"]

relu, log_softmax, softmax, softplus = nnf.relu, nnf.log_softmax, nnf.softmax, nnf.softplus
sigmoid, elu, leaky_relu, selu, gelu = nnf.sigmoid, nnf.elu, nnf.leaky_relu, nnf.selu, nnf.gelu
standardize = nnf.standardize
glorot, randn = glorot_normal, normal


def _shape_of(apply_fun, params, input_shape):
    out = eval_shape(lambda x: apply_fun(params, x), ShapeDtypeStruct(tuple(input_shape),
                                                                      np.float32))
    return tuple(out.shape)


def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
    """A fully connected layer: `inputs @ W + b`."""
    def init_fun(rng, input_shape):
        k1, k2 = random.split(rng)
        W = W_init(k1, (input_shape[-1], out_dim))
        b = b_init(k2, (out_dim,))
        return tuple(input_shape[:-1]) + (out_dim,), (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return jnp.dot(inputs, W) + b
    return init_fun, apply_fun


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",
                W_init=None, b_init=normal(1e-6)):
    """A convolution with the layouts `dimension_numbers = (lhs_spec, rhs_spec, out_spec)`."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    unit = (1,) * len(filter_shape)
    strides = tuple(strides) if strides else unit
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return lax.conv_general_dilated(inputs, W, strides, padding, unit, unit,
                                        dimension_numbers=dimension_numbers) + b

    def init_fun(rng, input_shape):
        spatial = iter(filter_shape)
        kernel_shape = tuple(out_chan if c == "O" else input_shape[lhs_spec.index("C")]
                             if c == "I" else next(spatial) for c in rhs_spec)
        bias_shape = tuple(out_chan if c == "C" else 1 for c in out_spec)
        k1, k2 = random.split(rng)
        params = (W_init(k1, kernel_shape), b_init(k2, bias_shape))
        return _shape_of(apply_fun, params, input_shape), params
    return init_fun, apply_fun


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None,
                         padding="VALID", W_init=None, b_init=normal(1e-6)):
    """A transposed convolution (`lax.conv_transpose`) with the given layouts."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    strides = tuple(strides) if strides else (1,) * len(filter_shape)
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return lax.conv_transpose(inputs, W, strides, padding,
                                  dimension_numbers=dimension_numbers) + b

    def init_fun(rng, input_shape):
        spatial = iter(filter_shape)
        kernel_shape = tuple(out_chan if c == "O" else input_shape[lhs_spec.index("C")]
                             if c == "I" else next(spatial) for c in rhs_spec)
        bias_shape = tuple(out_chan if c == "C" else 1 for c in out_spec)
        k1, k2 = random.split(rng)
        params = (W_init(k1, kernel_shape), b_init(k2, bias_shape))
        return _shape_of(apply_fun, params, input_shape), params
    return init_fun, apply_fun


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros,
              gamma_init=ones):
    """Normalize over `axis` with the batch's own statistics, then scale by gamma and shift
    by beta (no running statistics, as JAX's stax)."""
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axes)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return tuple(input_shape), (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        expand = tuple(None if i in axes else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axis=axes, epsilon=epsilon)
        if scale:
            z = z * gamma[expand]
        if center:
            z = z + beta[expand]
        return z
    return init_fun, apply_fun


def elementwise(fun, **fun_kwargs):
    """A parameterless layer applying `fun(inputs, **fun_kwargs)`."""
    return (lambda rng, input_shape: (input_shape, ()),
            lambda params, inputs, **kwargs: fun(inputs, **fun_kwargs))


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _pooling_layer(reducer, init_val, average=False):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        strides = tuple(strides) if strides else (1,) * len(window_shape)
        batch_and_channel = (0, len(window_shape) + 1) if spec is None else (
            spec.index("N"), spec.index("C"))
        dims, steps = tuple(window_shape), strides
        for i in sorted(batch_and_channel):
            dims = dims[:i] + (1,) + dims[i:]
            steps = steps[:i] + (1,) + steps[i:]

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_val, reducer, dims, steps, padding)
            if not average:
                return out
            # divide by the number of (unpadded) elements each window covers
            count = lax.reduce_window(jnp.ones(inputs.shape, inputs.dtype), 0.0, lax.add,
                                      dims, steps, padding)
            return out / count

        def init_fun(rng, input_shape):
            return _shape_of(apply_fun, (), input_shape), ()
        return init_fun, apply_fun
    return PoolingLayer


MaxPool = _pooling_layer(lax.max, -jnp.inf)
SumPool = _pooling_layer(lax.add, 0.0)
AvgPool = _pooling_layer(lax.add, 0.0, average=True)


def _flatten_init(rng, input_shape):
    return (input_shape[0], math.prod(input_shape[1:])), ()


Flatten = (_flatten_init, lambda params, inputs, **kwargs: jnp.reshape(inputs, (inputs.shape[0], -1)))
Identity = (lambda rng, input_shape: (input_shape, ()), lambda params, inputs, **kwargs: inputs)


def FanOut(num):
    """Send the input to `num` branches (a list of `num` copies)."""
    return (lambda rng, input_shape: ([input_shape] * num, ()),
            lambda params, inputs, **kwargs: [inputs] * num)


FanInSum = (lambda rng, input_shape: (input_shape[0], ()),
            lambda params, inputs, **kwargs: functools.reduce(lambda a, b: a + b, inputs))


def FanInConcat(axis=-1):
    """Concatenate the branches' outputs along `axis`."""
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        size = sum(s[ax] for s in input_shape)
        first = tuple(input_shape[0])
        return first[:ax] + (size,) + first[ax + 1:], ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)
    return init_fun, apply_fun


def Dropout(rate, mode="train"):
    """Dropout where `rate` is the probability of KEEPING a unit (JAX's stax convention): kept
    units are divided by `rate`. Needs `rng=` in training mode."""
    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError(
                "Dropout layer requires apply_fun to be called with a PRNG key argument. That "
                "is, instead of `apply_fun(params, inputs)`, call it like `apply_fun(params, "
                "inputs, rng)` where `rng` is a PRNG key (e.g. from `jax.random.key`).")
        if mode == "train":
            keep = random.bernoulli(rng, rate, inputs.shape)
            return jnp.where(keep, inputs / rate, 0)
        return inputs
    return (lambda rng, input_shape: (input_shape, ())), apply_fun


def serial(*layers):
    """Compose layers in sequence; `rng=` given to `apply_fun` is split among the layers."""
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, p = init(layer_rng, input_shape)
            params.append(p)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, len(layers)) if rng is not None else (None,) * len(layers)
        for fun, p, r in zip(apply_funs, params, rngs):
            inputs = fun(p, inputs, rng=r, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers):
    """Apply the i-th layer to the i-th input (for use with FanOut / FanIn*)."""
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        rngs = random.split(rng, len(layers))
        outs = [init(r, s) for init, r, s in zip(init_funs, rngs, input_shape)]
        return [o[0] for o in outs], [o[1] for o in outs]

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, len(layers)) if rng is not None else (None,) * len(layers)
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, rngs)]
    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer built from the input shape by `make_layer(shape) -> (init_fun, apply_fun)`."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)
    return init_fun, apply_fun
