"""``pyjax.nn.initializers``: parameter initializers, as ``jax.nn.initializers``."""
from pyjax._src.nn.initializers import (  # noqa: F401
    Initializer as Initializer, zeros as zeros, ones as ones, constant as constant,
    uniform as uniform, normal as normal, truncated_normal as truncated_normal,
    variance_scaling as variance_scaling, glorot_uniform as glorot_uniform,
    glorot_normal as glorot_normal, xavier_uniform as xavier_uniform,
    xavier_normal as xavier_normal, lecun_uniform as lecun_uniform,
    lecun_normal as lecun_normal, he_uniform as he_uniform, he_normal as he_normal,
    kaiming_uniform as kaiming_uniform, kaiming_normal as kaiming_normal,
    orthogonal as orthogonal, delta_orthogonal as delta_orthogonal)
