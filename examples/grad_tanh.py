"""grad: derivatives of tanh to the third order, mapped over a grid with vmap, against their
closed forms.

    python examples/grad_tanh.py [--quick]

With t = tanh(x):  tanh' = 1 - t^2,  tanh'' = -2 t (1 - t^2),  tanh''' = -2 (1 - t^2)(1 - 3 t^2).
"""
import argparse

import numpy as np

import pyjax as jax
import pyjax.numpy as jnp


def closed_forms(x):
    """The first three derivatives of tanh at ``x``, in NumPy."""
    t = np.tanh(x)
    return (1 - t ** 2, -2 * t * (1 - t ** 2), -2 * (1 - t ** 2) * (1 - 3 * t ** 2))


def main(quick=False):
    n = 41 if quick else 1001
    grid = jnp.linspace(-3.0, 3.0, n)

    dtanh = jax.grad(jnp.tanh)
    d2tanh = jax.grad(dtanh)
    d3tanh = jax.grad(d2tanh)
    print("grad(tanh)(1.0) =", dtanh(1.0), "  1 - tanh(1.0)**2 =", 1 - np.tanh(1.0) ** 2)

    # grad works on scalar functions; vmap maps each derivative over the whole grid at once.
    derivatives = [np.asarray(jax.jit(jax.vmap(d))(grid)) for d in (dtanh, d2tanh, d3tanh)]
    x = np.asarray(grid)
    expected = closed_forms(x.astype(np.float64))
    errors = [float(np.max(np.abs(d - e))) for d, e in zip(derivatives, expected)]
    for order, err in enumerate(errors, 1):
        print(f"order {order}: max |autodiff - closed form| over {n} points = {err:.2e}")
    return {"x": x, "derivatives": derivatives, "max_errors": errors,
            "grad_at_1": float(dtanh(1.0))}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a coarse grid")
    main(quick=parser.parse_args().quick)
