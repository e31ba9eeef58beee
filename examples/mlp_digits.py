"""Training an MLP classifier on scikit-learn's 8x8 digits (shipped with scikit-learn, no
download) with jit-compiled gradients and SGD with momentum.

    python examples/mlp_digits.py [--quick]
"""
import argparse
import time

import numpy as np

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import random


def relu(x):
    return jnp.maximum(x, 0.0)


def log_softmax(logits):
    # Shifting by the (constant) row maximum keeps exp from overflowing.
    shifted = logits - jax.lax.stop_gradient(jnp.max(logits, axis=-1, keepdims=True))
    return shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=-1, keepdims=True))


def init_params(key, sizes):
    """He-initialised weights and zero biases for layers of the given widths."""
    params = []
    for k, (n_in, n_out) in zip(random.split(key, len(sizes) - 1), zip(sizes[:-1], sizes[1:])):
        w = random.normal(k, (n_in, n_out)) * np.sqrt(2.0 / n_in)
        params.append({"w": w, "b": jnp.zeros(n_out)})
    return params


def predict(params, x):
    h = x
    for layer in params[:-1]:
        h = relu(h @ layer["w"] + layer["b"])
    return h @ params[-1]["w"] + params[-1]["b"]


def loss(params, x, labels):
    """Mean cross-entropy; ``labels`` are one-hot rows."""
    return -jnp.mean(jnp.sum(labels * log_softmax(predict(params, x)), axis=-1))


def momentum_update(params, velocity, grads, lr, momentum):
    velocity = jax.tree.map(lambda v, g: momentum * v - lr * g, velocity, grads)
    params = jax.tree.map(lambda p, v: p + v, params, velocity)
    return params, velocity


def accuracy(params, x, y):
    return float(jnp.mean(jnp.argmax(predict(params, x), axis=-1) == y))


def load_data(seed=0):
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)  # pixel intensities are 0..16
    return train_test_split(x, digits.target.astype(np.int32), test_size=0.25,
                            stratify=digits.target, random_state=seed)


def main(quick=False):
    epochs, hidden = (8, (64,)) if quick else (40, (128, 64))
    batch, lr, momentum = 64, 0.05, 0.9
    x_train, x_test, y_train, y_test = load_data()
    one_hot = np.eye(10, dtype=np.float32)[y_train]

    key, init_key = random.split(random.key(0))
    params = init_params(init_key, [64, *hidden, 10])
    velocity = jax.tree.map(jnp.zeros_like, params)
    value_and_grad = jax.jit(jax.value_and_grad(loss))
    update = jax.jit(momentum_update)

    start = time.perf_counter()
    n_batches = len(x_train) // batch  # the remainder is dropped: one compiled shape
    for epoch in range(epochs):
        key, shuffle_key = random.split(key)
        order = np.asarray(random.permutation(shuffle_key, len(x_train)))
        total = 0.0
        for b in range(n_batches):
            idx = order[b * batch:(b + 1) * batch]
            value, grads = value_and_grad(params, x_train[idx], one_hot[idx])
            params, velocity = update(params, velocity, grads, lr, momentum)
            total += float(value)
        if epoch % max(1, epochs // 8) == 0 or epoch == epochs - 1:
            print(f"epoch {epoch + 1:3d}: mean training loss {total / n_batches:.4f}")
    train_s = time.perf_counter() - start

    train_acc = accuracy(params, x_train, y_train)
    test_acc = accuracy(params, x_test, y_test)
    print(f"{epochs} epochs of {n_batches} steps in {train_s:.2f} s; "
          f"train accuracy {train_acc:.4f}, test accuracy {test_acc:.4f} "
          f"({len(x_test)} held-out digits)")
    return {"train_accuracy": train_acc, "test_accuracy": test_acc, "train_s": train_s,
            "final_loss": total / n_batches, "epochs": epochs, "params": params,
            "x_test": x_test, "y_test": y_test}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smaller network, fewer epochs")
    main(quick=parser.parse_args().quick)
