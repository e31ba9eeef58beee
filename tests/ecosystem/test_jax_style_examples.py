"""Programs written in the style of JAX's `examples/` (examples/jax_style/), run unmodified with
`import jax` resolved to pyjax (what `python -m pyjax script.py` does), on small synthetic data.
Their printed results are checked against expectations computed here with NumPy/scikit-learn:
Bayes-optimal accuracies, closed-form solutions, the known optimum of a variational fit. They
need no library beyond pyjax, so they always run."""
import contextlib
import io
import os
import runpy
import sys

import numpy as np
import pytest

import pyjax

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples", "jax_style")


def run_example(name):
    """Run examples/jax_style/<name>.py as `__main__` (as `python -m pyjax` does) and return
    its printed `key value...` lines as {key: [floats]} plus the script's globals."""
    pyjax.install_as_jax()
    path = os.path.join(EXAMPLES, name + ".py")
    out, argv = io.StringIO(), sys.argv
    sys.argv = [path]
    try:
        with contextlib.redirect_stdout(out):
            script = runpy.run_path(path, run_name="__main__")
    finally:
        sys.argv = argv
    printed = {}
    for line in out.getvalue().splitlines():
        key, *values = line.split()
        printed[key] = [float(v) for v in values]
    return printed, script


def nearest_center_accuracy(x, onehot_or_labels, centers):
    """The Bayes-optimal accuracy for equal-prior isotropic Gaussians of equal variance."""
    labels = np.asarray(onehot_or_labels)
    labels = labels.argmax(1) if labels.ndim == 2 else labels
    d = ((x[:, None, :] - centers[None]) ** 2).sum(-1)
    return np.mean(d.argmin(1) == labels)


def test_mlp_classifier_fromscratch():
    out, script = run_example("mlp_classifier_fromscratch")
    x, y = script["blobs"](256, 1)  # the script's test set
    bayes = nearest_center_accuracy(x, y, script["CENTERS"])
    assert out["test_accuracy"][0] >= bayes - 0.02
    assert abs(out["initial_loss"][0] - np.log(3)) < 0.25  # small weights: nearly uniform
    assert out["final_loss"][0] < 0.1


def test_stax_optimizers_classifier():
    from sklearn.linear_model import LogisticRegression
    out, script = run_example("stax_classifier")
    (xtr, ytr), (xte, yte) = script["rings"](512, 0), script["rings"](256, 1)
    linear = LogisticRegression().fit(xtr, ytr.argmax(1)).score(xte, yte.argmax(1))
    assert linear < 0.8  # rings: no linear model separates them, the MLP must
    assert out["test_accuracy"][0] >= 0.98
    assert out["final_loss"][0] < 0.1 < out["initial_loss"][0]


def test_advi_recovers_the_gaussian_target():
    out, _ = run_example("advi")
    # the target is N(mean, diag(std^2)) times e^3: the optimum q is the target, -ELBO = -3
    np.testing.assert_allclose(out["mean"], [1.0, -2.0], atol=0.1)
    np.testing.assert_allclose(out["std"], [0.5, 1.5], rtol=0.1)
    assert abs(out["final_neg_elbo"][0] + 3.0) < 0.05
    assert out["initial_neg_elbo"][0] > 0.0


def _mixture_entropy(protos, flip):
    """Entropy (nats) of the VAE data: a uniform mixture of prototypes, each pixel flipped."""
    n = protos.shape[1]
    images = ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1).astype(np.float64)
    mism = (images[:, None, :] != protos[None]).sum(-1)  # (2^n, k)
    p = np.mean(flip ** mism * (1 - flip) ** (n - mism), axis=1)
    return -np.sum(p * np.log(p))


def test_vae_learns_the_mixture():
    out, script = run_example("vae")
    images = script["binary_images"](512, 0)
    q = images.mean(0).clip(1e-6, 1 - 1e-6)
    independent_pixels = -np.sum(q * np.log(q) + (1 - q) * np.log(1 - q))  # best factorised model
    entropy = _mixture_entropy(script["prototypes"](), script["FLIP"])
    final = out["final_neg_elbo"][0]
    assert final < independent_pixels - 2.0  # it found the clusters
    assert final > entropy - 0.5  # -ELBO bounds the model's NLL, which cannot beat the entropy
    assert out["initial_neg_elbo"][0] > independent_pixels


def test_kernel_least_squares_is_ridge_regression():
    out, _ = run_example("kernel_lsq")
    rng = np.random.RandomState(0)  # the script's data
    n, d, lam = 40, 3, 0.5
    truth = rng.randn(d)
    xs = rng.randn(n, d).astype(np.float32).astype(np.float64)
    ys = (xs @ truth + 0.1 * rng.randn(n)).astype(np.float32)
    ridge = np.linalg.solve(xs.T @ xs + lam * np.eye(d), xs.T @ ys)
    np.testing.assert_allclose(out["weights"], ridge, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(out["predict_at_ones"][0], ridge.sum(), rtol=1e-3)
    assert out["normal_equation_residual"][0] < 1e-3


def _gp_numpy(x, y, amp, ls, noise, xtest):
    x, y, xtest = (np.asarray(a, np.float64) for a in (x, y, xtest))
    ym = y.mean()
    yc = y - ym
    k = lambda a, b: amp * np.exp(-0.5 * ((a[:, None, 0] - b[None, :, 0]) / ls) ** 2)
    kxx = k(x, x) + (noise + 1e-6) * np.eye(len(x))
    sign, logdet = np.linalg.slogdet(kxx)
    alpha = np.linalg.solve(kxx, yc)
    lml = -0.5 * yc @ alpha - 0.5 * logdet - len(x) / 2 * np.log(2 * np.pi)
    ks = k(x, xtest)
    mean = ks.T @ alpha + ym
    var = amp - np.sum(ks * np.linalg.solve(kxx, ks), axis=0)
    return lml, mean, var


def test_gaussian_process_regression_matches_numpy():
    out, _ = run_example("gaussian_process")
    rng = np.random.RandomState(0)  # the script's data
    x = np.sort(rng.uniform(-3, 3, 25))[:, None].astype(np.float32)
    y = (np.sin(x[:, 0]) + 0.1 * rng.randn(25)).astype(np.float32)
    xtest = np.linspace(-3, 3, 7)[:, None].astype(np.float32)
    sp = lambda v: np.log1p(np.exp(v))
    init_lml, _, _ = _gp_numpy(x, y, sp(0.0), sp(0.0), sp(-5.0), xtest)
    np.testing.assert_allclose(-out["initial_neg_log_marginal_likelihood"][0], init_lml,
                               rtol=1e-3, atol=1e-3)
    amp, ls, noise = out["amplitude"][0], out["lengthscale"][0], out["noise"][0]
    lml, mean, var = _gp_numpy(x, y, amp, ls, noise, xtest)
    np.testing.assert_allclose(-out["final_neg_log_marginal_likelihood"][0], lml,
                               rtol=1e-3, atol=1e-3)
    assert lml > init_lml + 1.0  # fitting the hyperparameters raised the evidence
    np.testing.assert_allclose(out["posterior_mean"], mean, rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(out["posterior_var"], var, rtol=0.05, atol=5e-4)
    np.testing.assert_allclose(mean, np.sin(xtest[:, 0]), atol=0.25)  # and the curve is sin


def test_differentially_private_sgd():
    out, script = run_example("differentially_private_sgd")
    assert out["max_raw_norm"][0] > 0.5  # some example needed clipping ...
    np.testing.assert_allclose(out["max_clipped_norm"][0], 0.5, rtol=1e-5)  # ... to the clip
    x, y = script["blobs"](512, 1)
    bayes = nearest_center_accuracy(x, y, script["MEANS"])
    assert out["test_accuracy"][0] >= bayes - 0.03  # noise and clipping cost little here


def _softmax_regression_numpy(x, labels, step_size, steps):
    x = x.astype(np.float64)
    w, b, losses = np.zeros((3, 3)), np.zeros(3), []
    onehot = np.eye(3)[labels]
    for _ in range(steps):
        logits = x @ w + b
        logits -= logits.max(1, keepdims=True)
        p = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
        losses.append(-np.mean(np.log((p * onehot).sum(1))))
        g = (p - onehot) / len(x)
        w, b = w - step_size * x.T @ g, b - step_size * g.sum(0)
    acc = np.mean((x @ w + b).argmax(1) == labels)
    return np.array(losses), acc


def test_spmd_classifier_over_eight_devices():
    if pyjax.device_count() < 8:
        pytest.skip("needs 8 devices (PYJAX_CPU_DEVICES=8, set by tests/conftest.py)")
    out, script = run_example("spmd_classifier")
    assert out["devices"] == [8] and out["data_shards"] == [8]
    x, labels = script["blobs"](64 * 8, 0)
    losses, acc = _softmax_regression_numpy(x, labels, 0.5, 20)
    np.testing.assert_allclose(out["losses"], losses, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(out["train_accuracy"][0], acc, atol=1.5 / len(labels))
