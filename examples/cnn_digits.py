"""Training a small convolutional network on scikit-learn's 8x8 digits (shipped with
scikit-learn, no download): two convolutions (``lax.conv_general_dilated``, NHWC/HWIO) with
ReLU and 2x2 max pooling (``lax.reduce_window``), a dense layer, He/Glorot initialisation by
hand with ``pyjax.random``, and SGD with momentum on ``jit(value_and_grad(loss))``.

    python examples/cnn_digits.py [--quick]
"""
import argparse
import time

import numpy as np

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax, random

DIMENSION_NUMBERS = ("NHWC", "HWIO", "NHWC")


def relu(x):
    return jnp.maximum(x, 0.0)


def log_softmax(logits):
    shifted = logits - lax.stop_gradient(jnp.max(logits, axis=-1, keepdims=True))
    return shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=-1, keepdims=True))


def he_normal(key, shape, fan_in):
    return random.normal(key, shape) * np.sqrt(2.0 / fan_in)


def glorot_uniform(key, shape, fan_in, fan_out):
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    return random.uniform(key, shape, minval=-limit, maxval=limit)


def init_params(key, channels=(16, 32), n_classes=10):
    """Convolution kernels (HWIO, He-normal: they feed ReLUs) and a Glorot-uniform dense
    layer; zero biases."""
    k1, k2, k3 = random.split(key, 3)
    c1, c2 = channels
    return {
        "conv1": {"w": he_normal(k1, (3, 3, 1, c1), 9), "b": jnp.zeros(c1)},
        "conv2": {"w": he_normal(k2, (3, 3, c1, c2), 9 * c1), "b": jnp.zeros(c2)},
        "dense": {"w": glorot_uniform(k3, (2 * 2 * c2, n_classes), 4 * c2, n_classes),
                  "b": jnp.zeros(n_classes)},
    }


def conv(x, layer):
    y = lax.conv_general_dilated(x, layer["w"], (1, 1), "SAME",
                                 dimension_numbers=DIMENSION_NUMBERS)
    return y + layer["b"]


def max_pool(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def predict(params, images):
    """Logits for a batch of 8x8 images (N, 8, 8, 1)."""
    h = max_pool(relu(conv(images, params["conv1"])))   # (N, 4, 4, c1)
    h = max_pool(relu(conv(h, params["conv2"])))        # (N, 2, 2, c2)
    h = h.reshape(h.shape[0], -1)
    return h @ params["dense"]["w"] + params["dense"]["b"]


def loss(params, images, labels):
    """Mean cross-entropy; ``labels`` are one-hot rows."""
    return -jnp.mean(jnp.sum(labels * log_softmax(predict(params, images)), axis=-1))


def momentum_update(params, velocity, grads, lr, momentum):
    velocity = jax.tree.map(lambda v, g: momentum * v - lr * g, velocity, grads)
    params = jax.tree.map(lambda p, v: p + v, params, velocity)
    return params, velocity


def accuracy(params, images, y):
    return float(jnp.mean(jnp.argmax(jax.jit(predict)(params, images), axis=-1) == y))


def load_data(seed=0):
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[..., None]  # (N, 8, 8, 1), values 0..1
    return train_test_split(x, digits.target.astype(np.int32), test_size=0.25,
                            stratify=digits.target, random_state=seed)


def main(quick=False):
    epochs = 4 if quick else 20
    batch, lr, momentum = 32, 0.05, 0.9
    x_train, x_test, y_train, y_test = load_data()
    one_hot = np.eye(10, dtype=np.float32)[y_train]

    key, init_key = random.split(random.key(0))
    params = init_params(init_key)
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
    parser.add_argument("--quick", action="store_true", help="fewer epochs")
    main(quick=parser.parse_args().quick)
