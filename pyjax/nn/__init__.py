"""``pyjax.nn``: neural-network activations, softmax and attention, as ``jax.nn``."""
from pyjax._src.nn.functions import (  # noqa: F401
    relu as relu, relu6 as relu6, sigmoid as sigmoid, sparse_sigmoid as sparse_sigmoid,
    softplus as softplus, sparse_plus as sparse_plus, log_sigmoid as log_sigmoid,
    squareplus as squareplus, soft_sign as soft_sign, silu as silu, swish as swish,
    mish as mish, log1mexp as log1mexp, hard_sigmoid as hard_sigmoid, hard_silu as hard_silu,
    hard_swish as hard_swish, hard_tanh as hard_tanh, elu as elu, celu as celu, selu as selu,
    gelu as gelu, glu as glu, leaky_relu as leaky_relu, tanh as tanh, identity as identity,
    logsumexp as logsumexp, logmeanexp as logmeanexp, log_softmax as log_softmax,
    softmax as softmax, standardize as standardize, one_hot as one_hot)
from pyjax._src.nn.attention import (  # noqa: F401
    dot_product_attention as dot_product_attention, scaled_matmul as scaled_matmul,
    scaled_dot_general as scaled_dot_general,
    get_scaled_dot_general_config as get_scaled_dot_general_config)
from pyjax.nn import initializers as initializers  # noqa: E402,F401
