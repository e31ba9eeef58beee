"""Data-parallel training of a softmax classifier over every device, in the style of JAX's
examples/spmd_mlp.py: the batch is split over a one-axis mesh with jax.sharding, each device
computes the gradient of its block inside jax.shard_map, and lax.pmean averages them, so every
device applies the full-batch gradient. Run with several (virtual) devices, e.g.
PYJAX_CPU_DEVICES=8.

    PYJAX_CPU_DEVICES=8 python -m pyjax examples/jax_style/spmd_classifier.py
"""
from functools import partial

import numpy as np
import numpy.random as npr

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

CENTERS = np.array([[2.0, 0.0, 0.0], [-1.0, 2.0, 0.0], [-1.0, -2.0, 1.0]])


def blobs(n, seed):
    rng = npr.RandomState(seed)
    labels = rng.randint(0, 3, n)
    return (CENTERS[labels] + rng.randn(n, 3)).astype(np.float32), labels.astype(np.int32)


def loss(params, x, labels):
    w, b = params
    logits = x @ w + b
    logp = logits - jax.nn.logsumexp(logits, axis=1, keepdims=True)
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))


if __name__ == "__main__":
    n_dev = jax.device_count()
    mesh = jax.make_mesh((n_dev,), ("batch",))
    x, labels = blobs(64 * n_dev, 0)
    x = jax.device_put(x, NamedSharding(mesh, P("batch")))
    labels = jax.device_put(labels, NamedSharding(mesh, P("batch")))
    params = (jnp.zeros((3, 3)), jnp.zeros(3))
    step_size, num_steps = 0.5, 20

    @jax.jit
    @partial(jax.shard_map, mesh=mesh, in_specs=(P(), P("batch"), P("batch")),
             out_specs=(P(), P()))
    def update(params, x_block, labels_block):
        block_loss, block_grads = jax.value_and_grad(loss)(params, x_block, labels_block)
        grads = jax.lax.pmean(block_grads, "batch")  # equal blocks: the full-batch gradient
        new_params = jax.tree_util.tree_map(lambda p, g: p - step_size * g, params, grads)
        return new_params, jax.lax.pmean(block_loss, "batch")

    print(f"devices {n_dev}")
    print(f"data_shards {len(x.addressable_shards)}")
    losses = []
    for _ in range(num_steps):
        params, step_loss = update(params, x, labels)
        losses.append(float(step_loss))
    print("losses", " ".join(f"{v:.6f}" for v in losses))
    w, b = params
    predictions = jnp.argmax(x @ w + b, axis=1)
    print(f"train_accuracy {float(jnp.mean(predictions == labels)):.4f}")
