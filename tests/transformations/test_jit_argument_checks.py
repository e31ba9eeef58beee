"""jit rejects argument specifications that would otherwise be silently ignored."""
import functools

import numpy as np
import pytest

import pyjax as jax


def f(x):
    return x + 1


def g(*args):
    return args[0] * 2


def h(x, /, y, *, z=1):
    return x + y + z


@pytest.mark.parametrize("kw", [dict(static_argnums=5), dict(static_argnums=-5),
                                dict(static_argnums=(0, 1)), dict(donate_argnums=5),
                                dict(donate_argnums=-2)])
def test_out_of_range_argnums_raise_at_jit(kw):
    (what, val), = kw.items()
    with pytest.raises(ValueError, match=rf"{what}=.*only accepts 1 positional argument"):
        jax.jit(f, **kw)


@pytest.mark.parametrize("what", ["static_argnames", "donate_argnames"])
def test_unknown_argnames_raise_at_jit(what):
    with pytest.raises(ValueError, match=rf"invalid argnames {{'w'}} in {what}"):
        jax.jit(f, **{what: "w"})


def test_positional_only_argname_raises():
    with pytest.raises(ValueError, match="positional-only"):
        jax.jit(h, static_argnames="x")


def test_valid_argnames_and_argnums_still_work():
    j = jax.jit(h, static_argnames=("y", "z"))
    assert float(j(1.0, 2.0, z=3)) == 6.0
    assert float(jax.jit(f, static_argnums=-1)(2)) == 3.0
    assert float(jax.jit(lambda x, **kw: x, static_argnames="anything")(2.0)) == 2.0


def test_varargs_accept_any_argnum_but_negative_beyond_the_call_says_so():
    assert float(jax.jit(g, static_argnums=5)(1.0)) == 2.0
    j = jax.jit(g, static_argnums=-3)
    np.testing.assert_allclose(np.asarray(j(1.0, 2.0, 3.0)), 2.0)
    with pytest.raises(ValueError, match=r"static_argnums=\(-3,\).*called with only 1"):
        j(1.0)


@pytest.mark.parametrize("bad", ["0", 1.0, [0, "1"]])
def test_non_int_argnums_raise_type_error(bad):
    with pytest.raises(TypeError, match="static_argnums must be ints"):
        jax.jit(f, static_argnums=bad)


def test_numpy_int_argnums_accepted():
    j = jax.jit(lambda x, n: x * n, static_argnums=np.int64(1))
    assert float(j(2.0, 3)) == 6.0
    assert j.static_argnums == (1,) and type(j.static_argnums[0]) is int


def test_jit_of_none_raises_type_error():
    with pytest.raises(TypeError, match="Expected a callable value, got None"):
        jax.jit(None)


def test_jit_without_function_is_a_decorator():
    @jax.jit(static_argnums=1)
    def k(x, n):
        return x * n

    assert float(k(2.0, 3)) == 6.0
    assert float(functools.partial(jax.jit, static_argnames="n")(lambda x, n: x * n)(2.0, n=4)) \
        == 8.0
