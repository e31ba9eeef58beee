"""Every public name of JAX 0.10.2's jax.nn, jax.nn.initializers, jax.image and jax.ops
(JAX 0.10.2's public-names list) exists in pyjax and is reachable as an attribute of ``pyjax``."""
import pytest

import pyjax

JAX_NAMES = {
    "pyjax.nn": """
        celu dot_product_attention elu gelu get_scaled_dot_general_config glu hard_sigmoid
        hard_silu hard_swish hard_tanh identity leaky_relu log1mexp log_sigmoid
        log_softmax logmeanexp logsumexp mish one_hot relu relu6 scaled_dot_general
        scaled_matmul selu sigmoid silu soft_sign softmax softplus sparse_plus
        sparse_sigmoid squareplus standardize swish tanh""".split(),
    "pyjax.nn.initializers": """
        Initializer constant delta_orthogonal glorot_normal glorot_uniform he_normal
        he_uniform kaiming_normal kaiming_uniform lecun_normal lecun_uniform normal ones
        orthogonal truncated_normal uniform variance_scaling xavier_normal xavier_uniform
        zeros""".split(),
    "pyjax.image": """
        ResizeMethod resize scale_and_translate""".split(),
    "pyjax.ops": """
        segment_max segment_min segment_prod segment_sum""".split(),
}


@pytest.mark.parametrize("module", sorted(JAX_NAMES))
def test_every_public_name_exists(module):
    obj = pyjax
    for part in module.split(".")[1:]:
        obj = getattr(obj, part)
    missing = [n for n in JAX_NAMES[module] if not hasattr(obj, n)]
    assert not missing, f"{module} lacks {missing}"
