"""The foundation issue's examples, as tests, and the tour script end to end."""
import pathlib
import subprocess
import sys

import numpy as np

import pyjax as jax
import pyjax.numpy as jnp

ROOT = pathlib.Path(__file__).resolve().parents[1]


def calculate(x):
    return x * x + x * 2.0


def test_calculate_eager_jit_and_numpy_agree():
    x = jnp.ones((5000, 5000))
    fast_calculate = jax.jit(calculate)
    out = fast_calculate(x)
    assert out.dtype == np.float32 and out.shape == (5000, 5000)
    assert float(out.sum()) == 75000000.0
    np.testing.assert_array_equal(np.asarray(out), np.asarray(calculate(x)))
    np.testing.assert_array_equal(np.asarray(out), calculate(np.ones((5000, 5000), np.float32)))


def test_at_set_returns_a_new_array():
    arr = jnp.arange(5)
    new = arr.at[0].set(5)
    assert new.tolist() == [5, 1, 2, 3, 4]
    assert arr.tolist() == [0, 1, 2, 3, 4]
    assert arr.dtype == np.int32


def test_make_jaxpr_example():
    assert str(jax.make_jaxpr(lambda x: jnp.sin(x) * 2.0)(1.0)) == (
        "{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = mul b 2.0:f32[] in (c,) }")


def test_weak_type_examples():
    assert (jnp.ones(3, jnp.bfloat16) + 1.0).dtype == jnp.bfloat16
    assert (jnp.int8(1) + 1).dtype == np.int8
    assert jnp.array(1.0).dtype == np.float32
    assert jnp.arange(3).dtype == np.int32


def test_tour_runs():
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "tour.py")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "{ lambda ; a:f32[]. let b:f32[] = sin a" in out.stdout
    assert "equal to NumPy: True" in out.stdout
    assert "grad(tanh)(1.0) = 0.4199743" in out.stdout
