"""chex under pyjax: its assertions pass and fail where they should, and chex.dataclass is a
pytree through jit, grad and tree_map."""
import numpy as np
import pytest

from tests.ecosystem.conftest import import_library


@pytest.fixture(scope="module")
def chex():
    return import_library("chex")


def test_asserts(chex):
    import jax.numpy as jnp
    x = jnp.ones((2, 3))
    chex.assert_shape(x, (2, 3))
    chex.assert_rank(x, 2)
    chex.assert_type(x, jnp.float32)
    chex.assert_equal_shape([x, x + 1])
    chex.assert_tree_all_finite({"a": x})
    chex.assert_trees_all_close({"a": x}, {"a": x + 1e-7})
    with pytest.raises(AssertionError, match="assert_shape"):
        chex.assert_shape(x, (3, 2))
    with pytest.raises(AssertionError):
        chex.assert_trees_all_close({"a": x}, {"a": x + 1e-2})
    with pytest.raises(AssertionError):
        chex.assert_tree_all_finite({"a": x / 0.0})
    with pytest.raises(AssertionError):
        chex.assert_type(x, jnp.int32)


def test_assert_max_traces(chex):
    import jax
    import jax.numpy as jnp

    @jax.jit
    @chex.assert_max_traces(n=1)
    def f(a):
        return a + 1

    f(jnp.ones(2))
    f(jnp.ones(2))  # cached: no new trace
    with pytest.raises(AssertionError, match="retrac|trace"):
        f(jnp.ones(3))


def test_dataclass(chex):
    import jax
    import jax.numpy as jnp

    @chex.dataclass
    class Params:
        w: chex.Array
        b: chex.Array

    p = Params(w=jnp.arange(6.0).reshape(2, 3), b=jnp.ones(3))
    q = jax.tree_util.tree_map(lambda a: a * 2, p)
    assert type(q) is Params
    np.testing.assert_allclose(q.w, 2 * np.arange(6.0).reshape(2, 3))
    total = jax.jit(lambda p: p.w.sum() + p.b.sum())(p)
    assert float(total) == 18.0
    g = jax.grad(lambda p: jnp.sum(p.w ** 2) + jnp.sum(p.b))(p)
    assert type(g) is Params
    np.testing.assert_allclose(g.w, 2 * np.arange(6.0).reshape(2, 3))
    np.testing.assert_allclose(g.b, np.ones(3))
