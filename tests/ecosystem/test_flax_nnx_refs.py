"""flax.nnx with mutable array references (`nnx.var_defaults(ref=True)`: every Variable holds a
`jax.Ref`, docs/refs.md): the forward pass eagerly and under `jax.jit`/`nnx.jit` equals NumPy's,
a module that counts its calls updates its Ref-backed state through jitted calls, and
`nnx.grad` of such a model raises JAX's own error (JAX 0.10.2 cannot differentiate with
respect to refs either)."""
import numpy as np
import pytest

from tests.ecosystem.conftest import import_library


@pytest.fixture(scope="module")
def nnx():
    return import_library("flax.nnx")


def test_ref_backed_variables(nnx):
    import jax
    import jax.numpy as jnp

    with nnx.var_defaults(ref=True):
        model = nnx.Linear(3, 2, rngs=nnx.Rngs(0))
    assert isinstance(model.kernel.get_raw_value(), jax.Ref)
    x = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(4, 3)
    want = x @ np.asarray(model.kernel[...]) + np.asarray(model.bias[...])
    np.testing.assert_allclose(model(jnp.asarray(x)), want, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(lambda m, x: m(x))(model, x), want, rtol=1e-6)

    class Count(nnx.Variable):
        pass

    class Counter(nnx.Module):
        def __init__(self):
            self.n = Count(jnp.zeros(()))
            self.seen = Count(jnp.zeros(3))

        def __call__(self, v):
            self.n[...] += 1
            self.seen[...] += v

    with nnx.var_defaults(ref=True):
        c = Counter()

    @jax.jit
    def step(c, v):
        c(v)

    step(c, jnp.ones(3))
    step(c, jnp.arange(3.0))
    nnx.jit(lambda c: c(jnp.full(3, 2.0)))(c)
    assert float(c.n[...]) == 3.0
    np.testing.assert_allclose(c.seen[...], [3.0, 4.0, 5.0])

    with pytest.raises(ValueError, match="Expected cotangent type Ref"):
        nnx.grad(lambda m: jnp.mean(m(x) ** 2))(model)
