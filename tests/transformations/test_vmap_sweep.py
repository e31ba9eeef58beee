"""``vmap`` of composite public functions against a Python loop of unbatched calls.

Primitives are batched one by one by the registry walks; these are the cases where a function
built from many of them (or its unbatched path) gave a different number, dtype or shape than
stacking the per-example results, found by a sweep over the public API (see docs/vmap_sweep.md).
Each case runs ``vmap`` eagerly and under ``jit`` with the batch axis in a non-leading position
where that matters. Where the loop of unbatched calls itself was wrong, the value JAX 0.10.2
gives is quoted ("JAX: ...").
"""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp


def _stack(outs, axis):
    leaves = [pyjax.tree_util.tree_leaves(o) for o in outs]
    return [np.stack([np.asarray(l[k]) for l in leaves], axis=axis) for k in range(len(leaves[0]))]


def check_vmap(f, args, in_axes, out_axes=0, rtol=1e-6):
    """vmap(f) eagerly and under jit equals stacking f over the batch (values, dtypes, shapes)."""
    sizes = {np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None}
    (size,) = sizes
    per = [f(*[a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, in_axes)])
           for i in range(size)]
    want = _stack(per, out_axes)
    vf = pyjax.vmap(f, in_axes=in_axes, out_axes=out_axes)
    for got in (vf(*args), pyjax.jit(vf)(*args)):
        got = pyjax.tree_util.tree_leaves(got)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
            np.testing.assert_allclose(np.asarray(g), w, rtol=rtol, atol=1e-6)


def test_repeat_total_length_pads_with_last_input_element():
    # was: concrete `repeats` padded with the last *output* element, traced (vmapped, jitted)
    # ones with the last input element. JAX: jnp.repeat([1., 2, 3], [2, 1, 0],
    # total_repeat_length=6) == [1, 1, 2, 3, 3, 3], eager and jitted alike.
    x = np.array([1., 2., 3.], np.float32)
    np.testing.assert_array_equal(
        jnp.repeat(x, np.array([2, 1, 0]), total_repeat_length=6), [1, 1, 2, 3, 3, 3])
    np.testing.assert_array_equal(jnp.repeat(x, 2, total_repeat_length=8), [1, 1, 2, 2, 3, 3, 3, 3])
    xs = np.array([[1., 2., 3.], [4., 5., 6.]], np.float32)
    reps = np.array([[2, 1, 0], [0, 3, 1]], np.int32)
    check_vmap(lambda x, r: jnp.repeat(x, r, total_repeat_length=6), (xs, reps), (0, 0))
    check_vmap(lambda x, r: jnp.repeat(x, r, total_repeat_length=6), (xs.T, reps), (1, 0), -1)


def test_custom_linear_solve_with_matrix_batched_off_axis_0():
    # was: the closed-over matrix was moved to axis 0 but its body batched at the original
    # axis: an error for (3, 2, 3)-shaped batches, silently another matrix's solve for square ones
    from pyjax import lax
    rng = np.random.default_rng(0)
    a = (rng.uniform(-1, 1, (3, 3, 3)) + 3 * np.eye(3)[:, None]).astype(np.float32)
    b = rng.uniform(-1, 1, (3, 3)).astype(np.float32)

    def solve(a, b):
        return lax.custom_linear_solve(lambda v: a @ v, b,
                                       lambda matvec, rhs: jnp.linalg.solve(a, rhs))
    check_vmap(solve, (a, b), (1, 0), rtol=1e-5)
    check_vmap(solve, (a, b), (2, 1), -1, rtol=1e-5)
    want = np.stack([np.linalg.solve(a[:, i], b[i]) for i in range(3)])
    np.testing.assert_allclose(pyjax.vmap(solve, in_axes=(1, 0))(a, b), want, rtol=1e-5)


def test_nan_to_num_with_batched_replacements():
    # was: a traced `nan=`/`posinf=`/`neginf=` raised TracerArrayConversionError; JAX 0.10.2
    # accepts it (vmap over nan=[1., 2.] gives [[1, 1, 3.4e38], [2, 1, 3.4e38]])
    x = np.array([[np.nan, 1., np.inf, -np.inf], [2., np.nan, -np.inf, np.inf]], np.float32)
    v = np.array([1.5, -2.], np.float32)
    check_vmap(lambda a, v: jnp.nan_to_num(a, nan=v, posinf=v + 1, neginf=-v), (x, v), (0, 0))
    check_vmap(lambda a, v: jnp.nan_to_num(a, nan=v), (x.T, v), (1, 0), -1)


def test_i0e_of_a_scalar_above_two():
    # was: NaN for float32 scalars (and shape (1,)) in about [2.45, 25] while vectors were right,
    # so vonmises.logpdf under jit(vmap(..., in_axes=(0, None))) gave NaN and the loop did not.
    # The series' constant factors 1/k^2 are now divided, not multiplied, term by term.
    import scipy.special as ss
    from pyjax import lax
    from pyjax.scipy.stats import vonmises
    for v in (2.6, 10.0, 24.9):
        np.testing.assert_allclose(lax.bessel_i0e(np.float32(v)), ss.i0e(v), rtol=1e-6)
        np.testing.assert_allclose(lax.bessel_i0e(np.array([v], np.float32)), [ss.i0e(v)],
                                   rtol=1e-6)
    x = np.array([[0.2, 0.5, 0.7], [0.3, 0.4, 0.8]], np.float32)
    check_vmap(vonmises.logpdf, (x, np.float32(2.6)), (0, None), rtol=1e-5)
