"""``split_p``, ``stack_p``, ``unstack_p``, ``tile_p`` and ``mulhi_p``: the primitives JAX
0.10.2 has for ``lax.split``/``stack``/``unstack``/``tile``/``mulhi``. Values against NumPy
(eager and jit), derivatives against finite differences, transposes against the dot-product
identity, batching against a Python loop."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax.test_util import check_grads

TESTED_PRIMITIVES = {"split", "stack", "unstack", "tile", "mulhi"}
JVP_TESTED = {"split", "stack", "unstack", "tile"}
TRANSPOSE_TESTED = {"split", "stack", "unstack", "tile"}
BATCH_TESTED = {"split", "stack", "unstack", "tile", "mulhi"}

X = np.arange(12.0).reshape(3, 4) - 5.5

# name, function of one (3, 4) array returning a list of arrays, NumPy's answer
CASES = [
    ("split", lambda x: lax.split(x, (1, 0, 3), axis=1),
     lambda x: np.split(x, [1, 1], axis=1)),
    ("stack", lambda x: [lax.stack([x, 2 * x, x[::-1]], axis=1)],
     lambda x: [np.stack([x, 2 * x, x[::-1]], axis=1)]),
    ("unstack", lambda x: lax.unstack(x, axis=1), lambda x: list(np.moveaxis(x, 1, 0))),
    ("tile", lambda x: [lax.tile(x, (2, 3))], lambda x: [np.tile(x, (2, 3))]),
]


@pytest.fixture
def x64():
    prev = pyjax.config.jax_enable_x64
    pyjax.config.update("jax_enable_x64", True)
    yield
    pyjax.config.update("jax_enable_x64", prev)


@pytest.mark.parametrize("name,f,want", CASES, ids=[c[0] for c in CASES])
def test_values_jaxpr_and_batching(name, f, want):
    x = X.astype(np.float32)
    for got_list in (f(x), pyjax.jit(f)(x)):
        assert len(got_list) == len(want(x))
        for got, w in zip(got_list, want(x)):
            np.testing.assert_array_equal(got, w)
    jaxpr = pyjax.make_jaxpr(f)(x)
    assert jaxpr.eqns[-1].primitive is getattr(lax, name + "_p")  # JAX's primitive, one eqn
    xs = np.stack([x, x + 100])  # vmap against a Python loop, batch axis 0 and 1
    for axis in (0, 1):
        got = pyjax.vmap(f, in_axes=axis)(np.moveaxis(xs, 0, axis))
        for i in range(2):
            for g, w in zip(got, want(xs[i])):
                np.testing.assert_array_equal(np.asarray(g)[i], w)


@pytest.mark.parametrize("name,f,want", CASES, ids=[c[0] for c in CASES])
def test_derivatives_and_transpose(name, f, want, x64):
    check_grads(lambda x: [o * o for o in f(x)], (X,), order=2, modes=["fwd", "rev"])
    # the transpose rule through linear_transpose: <ct, f(x)> == <f^T(ct), x>
    rng = np.random.default_rng(0)
    x = rng.normal(size=X.shape)
    outs = want(x)
    cts = [rng.normal(size=o.shape) for o in outs]
    (back,) = pyjax.linear_transpose(f, X)(cts)
    lhs = sum(np.vdot(c, o) for c, o in zip(cts, outs))
    np.testing.assert_allclose(np.vdot(np.asarray(back), x), lhs, rtol=1e-12)


def test_split_transpose_of_zero_pieces_and_stack_of_unbatched():
    # only the middle piece is used: the others' cotangents are symbolic zeros
    g = pyjax.grad(lambda x: jnp.sum(lax.split(x, (1, 2, 1))[1] ** 2))(jnp.arange(4.0))
    np.testing.assert_array_equal(g, [0.0, 2.0, 4.0, 0.0])
    # a batched operand stacked with an unbatched one
    a, b = np.arange(6.0).reshape(2, 3), np.array([7.0, 8.0, 9.0])
    got = pyjax.vmap(lambda r: lax.stack([r, b]), in_axes=0)(a)
    np.testing.assert_array_equal(got, np.stack([np.stack([r, b]) for r in a]))


def test_mulhi_primitive_in_jit_and_vmap():
    x = np.array([2**31 - 1, -5, 123456789, -(2**31)], np.int32)
    y = np.array([7, 3, -987654321, -1], np.int32)
    want = ((x.astype(np.int64) * y.astype(np.int64)) >> 32).astype(np.int32)
    np.testing.assert_array_equal(lax.mulhi(x, y), want)
    np.testing.assert_array_equal(pyjax.jit(lax.mulhi)(x, y), want)
    np.testing.assert_array_equal(pyjax.vmap(lax.mulhi, (0, None))(x, np.int32(-3)),
                                  [(int(v) * -3) >> 32 for v in x])
    assert pyjax.make_jaxpr(lax.mulhi)(x, y).eqns[0].primitive is lax.mulhi_p


def test_bad_arguments_name_what_was_passed():
    with pytest.raises(ValueError, match=r"sum of sizes \(1, 1\) must equal"):
        lax.split(jnp.ones(3), (1, 1))
    with pytest.raises(ValueError, match="sum to the size of axis 0"):
        lax.split_p.bind(jnp.ones(3), sizes=(1, 1), axis=0)
    with pytest.raises(ValueError, match="one shape"):
        lax.stack([jnp.ones(2), jnp.ones(3)])
    with pytest.raises(ValueError, match="reps must be 1 nonnegative ints"):
        lax.tile_p.bind(jnp.ones(3), reps=(1, 2))
    with pytest.raises(TypeError, match="same dtype"):
        lax.mulhi_p.bind(jnp.ones(3, jnp.int32), jnp.ones(3, jnp.uint32))
