"""jax.ad_checkpoint.print_saved_residuals: what reverse mode keeps from the forward pass, with
jax.checkpoint policies honoured. The expected lists are those of JAX's gradient-checkpointing
documentation (same shapes, same kinds, same order); locations are this file's lines."""
import inspect

import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax.ad_checkpoint import checkpoint_name, print_saved_residuals


def g(W, x):
    y = jnp.dot(W, x)
    return jnp.sin(y)


def g_named(W, x):
    y = checkpoint_name(jnp.dot(W, x), "y")
    return jnp.sin(y)


def _three(layer):
    def f(W1, W2, W3, x):
        for W in (W1, W2, W3):
            x = layer(W, x)
        return x
    return f


_ARGS = (jnp.ones((5, 4)), jnp.ones((6, 5)), jnp.ones((7, 6)), jnp.ones(4))
_FROM_ARGS = ["f32[5,4] from the argument W1", "f32[6,5] from the argument W2",
              "f32[7,6] from the argument W3", "f32[4] from the argument x"]


def _line(fun, text):
    lines, start = inspect.getsourcelines(fun)
    return start + next(i for i, s in enumerate(lines) if text in s)


def _printed(capsys, f, *args, **kwargs):
    print_saved_residuals(f, *args, **kwargs)
    return capsys.readouterr().out.splitlines()


_POLICIES = pyjax.checkpoint_policies


@pytest.mark.parametrize("case", ["plain", "checkpoint_g", "dots_saveable", "names"])
def test_documented_examples(capsys, case):
    at = f"from {__file__}:{{}} ({{}})"
    sin, dot = at.format(_line(g, "sin"), "g"), at.format(_line(g, "dot"), "g")
    if case == "plain":  # sin and cos of each layer (the last sin is not needed)
        f = _three(g)
        want = [f"f32[5] output of sin {sin}", f"f32[5] output of cos {sin}",
                f"f32[6] output of sin {sin}", f"f32[6] output of cos {sin}",
                f"f32[7] output of cos {sin}"]
    elif case == "checkpoint_g":  # each layer rematerialized: only its input is kept
        f = _three(pyjax.checkpoint(g))
        want = [f"f32[5] output of sin {sin}", f"f32[6] output of sin {sin}"]
    elif case == "dots_saveable":
        f = pyjax.checkpoint(_three(g), policy=_POLICIES.dots_with_no_batch_dims_saveable)
        want = [f"f32[{n}] output of dot_general {dot}" for n in (5, 6, 7)]
    else:
        f = pyjax.checkpoint(_three(g_named), policy=_POLICIES.save_only_these_names("y"))
        named = at.format(_line(g_named, "checkpoint_name"), "g_named")
        want = [f"f32[{n}] named 'y' {named}" for n in (5, 6, 7)]
    assert _printed(capsys, f, *_ARGS) == _FROM_ARGS + want


def test_policies_everything_and_nothing(capsys):
    def f(a):
        return jnp.sin(jnp.sin(a))

    everything = _printed(capsys, pyjax.checkpoint(f, policy=_POLICIES.everything_saveable), 2.0)
    assert [s.split(" from ")[0] for s in everything] == ["f32[] output of cos"] * 2
    nothing = _printed(capsys, pyjax.checkpoint(f, policy=_POLICIES.nothing_saveable), 2.0)
    assert nothing == ["f32[] from the argument a"]


def test_argument_names_constants_and_no_residuals(capsys):
    def h(p, x=1.0):
        return jnp.sin(p["w"] * x)

    out = _printed(capsys, h, {"w": jnp.ones(2), "b": jnp.ones(1)}, x=jnp.ones(2))
    assert out[:2] == ["f32[2] from the argument p['w']", "f32[2] from the argument x"]
    assert out[2].startswith("f32[2] output of cos from") and len(out) == 3
    c = jnp.array([1.0, 2.0, 3.0])
    assert _printed(capsys, lambda a: a * c, 2.0) == ["f32[3] from a constant"]
    assert _printed(capsys, lambda a, b: 2.0 * a + b, 1.0, 2.0) == []  # linear: nothing
    # an integer input has no tangent: nothing of it is needed
    assert _printed(capsys, lambda a: jnp.sin(a), jnp.ones(2, jnp.int32)) == []


def test_bad_function():
    with pytest.raises(TypeError, match="expected a callable"):
        print_saved_residuals(3, 1.0)
