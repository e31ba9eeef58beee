"""Behaviours where pyjax differed from JAX (issue 16, item 5), each pinned by a test."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax


def test_take_clip_clamps_negative_indices_to_zero():
    v = jnp.arange(5.0)
    idx = np.array([-1, 10, 2, -7])
    want = np.take(np.arange(5.0), idx, mode="clip")  # [0, 4, 2, 0]
    np.testing.assert_array_equal(jnp.take(v, jnp.array(idx), mode="clip"), want)
    np.testing.assert_array_equal(pyjax.jit(lambda i: jnp.take(v, i, mode="clip"))(idx), want)
    # the default fill mode still counts negative indices from the end
    np.testing.assert_array_equal(jnp.take(v, jnp.array([-1])), [4.0])


def test_promote_types_is_canonicalized():
    assert jnp.promote_types(jnp.int16, jnp.uint32) == np.int32
    assert jnp.promote_types(np.uint64, np.int8) == np.float32


def test_promote_types_with_x64(x64):
    assert jnp.promote_types(jnp.int16, jnp.uint32) == np.int64


def test_fori_loop_with_float_bounds_runs_as_while_loop():
    seen = jnp.zeros(3)
    out = lax.fori_loop(0.0, 3.0, lambda i, c: c + i, 0.0)
    assert float(out) == 3.0
    out = pyjax.jit(lambda hi: lax.fori_loop(0.5, hi, lambda i, c: c * 2 + i, 1.0))(3.0)
    assert float(out) == ((1 * 2 + 0.5) * 2 + 1.5) * 2 + 2.5
    with pytest.raises(TypeError, match="lower bound"):
        lax.fori_loop(jnp.zeros(2), 3, lambda i, c: c, seen)


def test_grad_through_scalar_index_mul():
    f = lambda s: jnp.sum(jnp.ones(4).at[2].mul(s) ** 2)  # noqa: E731
    assert float(pyjax.grad(f)(3.0)) == 6.0
    # an index array may repeat: still refused without unique_indices
    g = lambda s: jnp.sum(jnp.ones(4).at[jnp.array([1, 2])].mul(s))  # noqa: E731
    with pytest.raises(NotImplementedError, match="unique_indices"):
        pyjax.grad(g)(3.0)


def test_compiled_runs_arguments_that_differ_only_in_weak_type():
    compiled = pyjax.jit(lambda a: a * 2 + 1).lower(jnp.ones((2, 2))).compile()
    np.testing.assert_array_equal(compiled(jnp.full((2, 2), 3.0)), np.full((2, 2), 7.0))
    with pytest.raises(TypeError, match=r"argument 0: compiled for f32\[2,2\], called with "
                                        r"i32\[3\]"):
        compiled(jnp.ones(3, jnp.int32))
    with pytest.raises(TypeError, match="argument structure"):
        compiled(jnp.ones((2, 2)), jnp.ones((2, 2)))


def test_dtype_predicates_return_python_values():
    assert jnp.can_cast(jnp.int32, jnp.float32) is False
    assert jnp.can_cast(jnp.int8, jnp.int16) is True
    assert jnp.can_cast(jnp.ones(2), jnp.float64) is True
    assert jnp.issubdtype(jnp.int32, jnp.integer) is True
    assert jnp.isdtype(jnp.int32, "integral") is True
    assert jnp.isdtype(jnp.float32, ("bool", "complex floating")) is False
    assert isinstance(jnp.result_type(1, 2.0), np.dtype)
    assert jnp.result_type(1, 2.0) == np.float32


def test_integers_become_float32_with_x64_unless_64_bit(x64):
    # JAX 0.10.2 with x64 on (observed): bools and integers of up to 32 bits become float32
    # where a function makes values inexact, int64/uint64 float64; a Python scalar spacing
    # or q does not widen the data (trapezoid, quantile), but gradient's spacing does.
    import pyjax
    i32, i64 = np.arange(4, dtype=np.int32), np.arange(4, dtype=np.int64)
    for f in (jnp.sin, jnp.mean, jnp.sqrt, jnp.trapezoid, jnp.gradient, jnp.cbrt,
              lambda v: jnp.quantile(v, np.float64(0.5)), lambda v: jnp.trapezoid(v, dx=0.5),
              lambda v: jnp.fft.rfft(v).real, jnp.linalg.norm,
              lambda v: pyjax.vmap(lambda e: pyjax.lax.pmean(e, "i"), axis_name="i")(v)):
        assert f(i32).dtype == np.float32, f
        assert f(np.ones(4, np.uint8)).dtype == np.float32, f
        assert f(i64).dtype == np.float64, f
    assert jnp.sin(np.ones(3, bool)).dtype == np.float32
    assert jnp.gradient(i32, 0.5).dtype == np.float64
    j32 = jnp.asarray(i32)
    assert (j32 / j32).dtype == np.float32 and (j32 / 2).dtype == np.float32
    assert jnp.sin(3).dtype == np.float64  # a Python int is weak: the default float
