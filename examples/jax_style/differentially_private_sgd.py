"""Differentially private SGD in the style of JAX's examples/differentially_private_sgd.py:
per-example gradients with vmap(grad), each clipped to an L2 norm of at most l2_norm_clip, summed,
Gaussian noise of scale l2_norm_clip * noise_multiplier added, then averaged; a stax classifier
trained with optimizers.sgd on two Gaussian blobs.

    python -m pyjax examples/jax_style/differentially_private_sgd.py
"""
import itertools

import numpy as np
import numpy.random as npr

import jax.numpy as jnp
from jax import grad, jit, random, vmap
from jax import tree_util
from jax.example_libraries import optimizers, stax
from jax.example_libraries.stax import Dense, LogSoftmax, Tanh

MEANS = np.array([[-1.5, 0.0], [1.5, 0.0]])


def blobs(n, seed):
    rng = npr.RandomState(seed)
    labels = rng.randint(0, 2, n)
    x = MEANS[labels] + rng.randn(n, 2)
    return x.astype(np.float32), np.eye(2, dtype=np.float32)[labels]


init_random_params, predict = stax.serial(Dense(8), Tanh, Dense(2), LogSoftmax)


def loss(params, batch):
    inputs, targets = batch
    logits = predict(params, inputs)
    return -jnp.mean(jnp.sum(logits * targets, axis=-1))


def accuracy(params, batch):
    inputs, targets = batch
    return jnp.mean(jnp.argmax(predict(params, inputs), axis=1) == jnp.argmax(targets, axis=1))


def clipped_grad(params, l2_norm_clip, single_example_batch):
    """The gradient of one example, scaled down to an L2 norm of at most l2_norm_clip."""
    grads = grad(loss)(params, single_example_batch)
    nonempty_grads, tree_def = tree_util.tree_flatten(grads)
    total_grad_norm = jnp.linalg.norm(jnp.array([jnp.linalg.norm(g.ravel()) for g in nonempty_grads]))
    divisor = jnp.maximum(total_grad_norm / l2_norm_clip, 1.)
    normalized_nonempty_grads = [g / divisor for g in nonempty_grads]
    return tree_util.tree_unflatten(tree_def, normalized_nonempty_grads)


def private_grad(params, batch, rng, l2_norm_clip, noise_multiplier, batch_size):
    """Return differentially private gradients for params, evaluated on batch."""
    clipped_grads = vmap(clipped_grad, (None, None, 0))(params, l2_norm_clip, batch)
    clipped_grads_flat, grads_treedef = tree_util.tree_flatten(clipped_grads)
    aggregated_clipped_grads = [g.sum(0) for g in clipped_grads_flat]
    rngs = random.split(rng, len(aggregated_clipped_grads))
    noised_aggregated_clipped_grads = [
        g + l2_norm_clip * noise_multiplier * random.normal(r, g.shape)
        for r, g in zip(rngs, aggregated_clipped_grads)]
    normalized_noised_aggregated_clipped_grads = [
        g / batch_size for g in noised_aggregated_clipped_grads]
    return tree_util.tree_unflatten(grads_treedef, normalized_noised_aggregated_clipped_grads)


def per_example_norms(grads_tree):
    leaves = tree_util.tree_leaves(grads_tree)
    return jnp.sqrt(sum(jnp.sum(g.reshape(g.shape[0], -1) ** 2, axis=1) for g in leaves))


if __name__ == "__main__":
    l2_norm_clip, noise_multiplier, batch_size = 0.5, 0.5, 32
    step_size, num_epochs = 0.5, 8
    train, test = blobs(512, 0), blobs(512, 1)
    num_batches = len(train[0]) // batch_size
    key = random.PRNGKey(0)
    _, init_params = init_random_params(key, (-1, 2))
    opt_init, opt_update, get_params = optimizers.sgd(step_size)

    @jit
    def private_update(rng, i, opt_state, batch):
        params = get_params(opt_state)
        rng = random.fold_in(rng, i)
        return opt_update(i, private_grad(params, batch, rng, l2_norm_clip, noise_multiplier,
                                          batch_size), opt_state)

    # the clipping, seen on one batch at the initial parameters
    batch0 = (train[0][:batch_size], train[1][:batch_size])
    raw = vmap(grad(loss), (None, 0))(init_params, (batch0[0][:, None], batch0[1][:, None]))
    clipped = vmap(clipped_grad, (None, None, 0))(init_params, l2_norm_clip,
                                                   (batch0[0][:, None], batch0[1][:, None]))
    print(f"max_raw_norm {float(jnp.max(per_example_norms(raw))):.6f}")
    print(f"max_clipped_norm {float(jnp.max(per_example_norms(clipped))):.6f}")

    opt_state = opt_init(init_params)
    itercount = itertools.count()
    rng_stream = npr.RandomState(0)
    for epoch in range(num_epochs):
        perm = rng_stream.permutation(len(train[0]))
        for b in range(num_batches):
            idx = perm[b * batch_size:(b + 1) * batch_size]
            # one example per row, each its own batch of size 1, as vmap over clipped_grad wants
            batch = (train[0][idx][:, None], train[1][idx][:, None])
            opt_state = private_update(key, next(itercount), opt_state, batch)
    params = get_params(opt_state)
    print(f"final_loss {float(loss(params, train)):.6f}")
    print(f"test_accuracy {float(accuracy(params, test)):.4f}")
