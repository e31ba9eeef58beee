"""A classifier built with jax.example_libraries.stax and trained with
jax.example_libraries.optimizers (momentum), in the style of JAX's examples/mnist_classifier.py,
on a two-class "two moons"-like dataset that a linear model cannot separate.

    python -m pyjax examples/jax_style/stax_classifier.py
"""
import itertools

import numpy as np
import numpy.random as npr

import jax.numpy as jnp
from jax import jit, grad, random
from jax.example_libraries import optimizers
from jax.example_libraries import stax
from jax.example_libraries.stax import Dense, Relu, LogSoftmax


def rings(n, seed):
    """Class 0 inside radius 1, class 1 on a ring of radius 2.5 (radial noise 0.2)."""
    rng = npr.RandomState(seed)
    labels = rng.randint(0, 2, n)
    radius = np.where(labels == 0, rng.uniform(0, 1.0, n), 2.5 + 0.2 * rng.randn(n))
    angle = rng.uniform(0, 2 * np.pi, n)
    x = np.stack([radius * np.cos(angle), radius * np.sin(angle)], 1)
    return x.astype(np.float32), np.eye(2, dtype=np.float32)[labels]


def loss(params, batch):
    inputs, targets = batch
    preds = predict(params, inputs)
    return -jnp.mean(jnp.sum(preds * targets, axis=1))


def accuracy(params, batch):
    inputs, targets = batch
    predicted_class = jnp.argmax(predict(params, inputs), axis=1)
    return jnp.mean(predicted_class == jnp.argmax(targets, axis=1))


init_random_params, predict = stax.serial(
    Dense(32), Relu,
    Dense(32), Relu,
    Dense(2), LogSoftmax)

if __name__ == "__main__":
    rng = random.PRNGKey(0)
    step_size, num_epochs, batch_size, momentum_mass = 0.05, 12, 32, 0.9
    train, test = rings(512, 0), rings(256, 1)
    num_batches = len(train[0]) // batch_size

    def data_stream():
        rng = npr.RandomState(0)
        while True:
            perm = rng.permutation(len(train[0]))
            for i in range(num_batches):
                idx = perm[i * batch_size:(i + 1) * batch_size]
                yield train[0][idx], train[1][idx]

    opt_init, opt_update, get_params = optimizers.momentum(step_size, mass=momentum_mass)

    @jit
    def update(i, opt_state, batch):
        params = get_params(opt_state)
        return opt_update(i, grad(loss)(params, batch), opt_state)

    _, init_params = init_random_params(rng, (-1, 2))
    opt_state = opt_init(init_params)
    itercount = itertools.count()
    print(f"initial_loss {float(loss(init_params, train)):.6f}")
    batches = data_stream()
    for epoch in range(num_epochs):
        for _ in range(num_batches):
            opt_state = update(next(itercount), opt_state, next(batches))
    params = get_params(opt_state)
    print(f"final_loss {float(loss(params, train)):.6f}")
    print(f"train_accuracy {float(accuracy(params, train)):.4f}")
    print(f"test_accuracy {float(accuracy(params, test)):.4f}")
