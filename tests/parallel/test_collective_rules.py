"""JVP, transpose and batching rules of reduce_scatter (psum_scatter) and all_to_all: under
the vmap that binds their axis (against NumPy's definition and finite differences) and under
a vmap of another axis inside pmap (against a Python loop)."""
import numpy as np
import pytest

import pyjax
from pyjax import lax

RNG = np.random.default_rng(1)
N = 4

FNS = {
    "reduce_scatter": lambda v: lax.psum_scatter(v, "i"),
    "reduce_scatter_tiled": lambda v: lax.psum_scatter(v, "i", scatter_dimension=1,
                                                       tiled=True),
    "all_to_all": lambda v: lax.all_to_all(v, "i", 0, 1),
    "all_to_all_tiled": lambda v: lax.all_to_all(v, "i", 1, 0, tiled=True),
}


@pytest.mark.parametrize("name", sorted(FNS))
def test_jvp_and_transpose_under_vmap(x64, name):
    g = pyjax.vmap(FNS[name], axis_name="i")
    x = RNG.normal(size=(N, N, 2 * N))
    t = RNG.normal(size=x.shape)
    y, ty = pyjax.jvp(g, (x,), (t,))
    np.testing.assert_allclose(np.asarray(ty), np.asarray(g(t)), rtol=1e-12)  # linear
    eps = 1e-6
    fd = (np.asarray(g(x + eps * t)) - np.asarray(g(x - eps * t))) / (2 * eps)
    np.testing.assert_allclose(np.asarray(ty), fd, rtol=1e-6, atol=1e-8)
    ct = RNG.normal(size=np.shape(y))
    (tx,) = pyjax.linear_transpose(g, x)(ct)
    np.testing.assert_allclose(np.sum(np.asarray(tx) * x), np.sum(ct * np.asarray(g(x))),
                               rtol=1e-10)


def test_batching_own_axis_matches_definition():
    x = RNG.normal(size=(N, N, 3)).astype(np.float32)
    got = pyjax.vmap(FNS["reduce_scatter"], axis_name="i")(x)
    np.testing.assert_allclose(np.asarray(got), x.sum(0), rtol=1e-5)
    got = pyjax.vmap(lambda v: lax.all_to_all(v, "i", 0, 0), axis_name="i")(x)
    np.testing.assert_array_equal(np.asarray(got), x.transpose(1, 0, 2))
    # an operand that does not vary along the axis
    got = pyjax.vmap(lambda v, w: lax.psum_scatter(w, "i"), in_axes=(0, None),
                     axis_name="i")(x, x[0])
    np.testing.assert_allclose(np.asarray(got), N * x[0], rtol=1e-6)


@pytest.mark.parametrize("name", sorted(FNS))
def test_batching_other_axis_inside_pmap(name):
    # vmap over "b" inside pmap over "i": each b is an independent collective over "i"
    x = RNG.normal(size=(N, 3, N, 2 * N)).astype(np.float32)
    got = pyjax.pmap(pyjax.vmap(FNS[name], axis_name="b"), axis_name="i",
                     devices=pyjax.devices()[:N])(x)
    one = pyjax.pmap(FNS[name], axis_name="i", devices=pyjax.devices()[:N])
    want = np.stack([np.asarray(one(x[:, b])) for b in range(3)], axis=1)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)


TESTED_PRIMITIVES = {"reduce_scatter", "all_to_all"}  # lowered under pmap (test_pmap.py)
JVP_TESTED = {"reduce_scatter", "all_to_all"}
TRANSPOSE_TESTED = {"reduce_scatter", "all_to_all"}
BATCH_TESTED = {"reduce_scatter", "all_to_all"}
