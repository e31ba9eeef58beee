"""An MLP classifier written from scratch (parameters as a list of (W, b) pairs, softmax
cross-entropy through jax.scipy.special.logsumexp, plain SGD in a jitted update), in the style of
JAX's examples/mnist_classifier_fromscratch.py, on three Gaussian blobs in 2-D.

    python -m pyjax examples/jax_style/mlp_classifier_fromscratch.py
"""
import numpy as np
import numpy.random as npr

import jax
import jax.numpy as jnp
from jax import jit, grad
from jax.scipy.special import logsumexp

CENTERS = np.array([[0.0, 4.0], [-3.5, -2.0], [3.5, -2.0]])


def blobs(n, seed):
    rng = npr.RandomState(seed)
    labels = rng.randint(0, 3, n)
    x = CENTERS[labels] + rng.randn(n, 2)
    return x.astype(np.float32), np.eye(3, dtype=np.float32)[labels]


def init_random_params(scale, layer_sizes, rng=npr.RandomState(0)):
    return [(scale * rng.randn(m, n), scale * rng.randn(n))
            for m, n in zip(layer_sizes[:-1], layer_sizes[1:])]


def predict(params, inputs):
    activations = inputs
    for w, b in params[:-1]:
        activations = jnp.tanh(jnp.dot(activations, w) + b)
    final_w, final_b = params[-1]
    logits = jnp.dot(activations, final_w) + final_b
    return logits - logsumexp(logits, axis=1, keepdims=True)


def loss(params, batch):
    inputs, targets = batch
    return -jnp.mean(jnp.sum(predict(params, inputs) * targets, axis=1))


def accuracy(params, batch):
    inputs, targets = batch
    return jnp.mean(jnp.argmax(targets, axis=1) == jnp.argmax(predict(params, inputs), axis=1))


if __name__ == "__main__":
    layer_sizes = [2, 16, 3]
    step_size, num_epochs, batch_size = 0.1, 10, 32
    train, test = blobs(512, 0), blobs(256, 1)
    num_batches = len(train[0]) // batch_size

    def data_stream():
        rng = npr.RandomState(0)
        while True:
            perm = rng.permutation(len(train[0]))
            for i in range(num_batches):
                idx = perm[i * batch_size:(i + 1) * batch_size]
                yield train[0][idx], train[1][idx]

    @jit
    def update(params, batch):
        grads = grad(loss)(params, batch)
        return [(w - step_size * dw, b - step_size * db)
                for (w, b), (dw, db) in zip(params, grads)]

    params = init_random_params(0.1, layer_sizes)
    print(f"initial_loss {float(loss(params, train)):.6f}")
    batches = data_stream()
    for epoch in range(num_epochs):
        for _ in range(num_batches):
            params = update(params, next(batches))
    print(f"final_loss {float(loss(params, train)):.6f}")
    print(f"train_accuracy {float(accuracy(params, train)):.4f}")
    print(f"test_accuracy {float(accuracy(params, test)):.4f}")
