"""The one cache type (dispatch/cache.py) and the public views of the caches."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax._src.dispatch.cache import Cache
from pyjax.test_util import cache_sizes, count_compiles


def test_least_recently_used_values_go_first():
    c = Cache("jit", max_size=3)
    for k in "abc":
        c.put(k, k.upper())
    assert c.get("a") == "A"           # a is now the most recently used
    c.put("d", "D")                    # b goes
    assert "b" not in c and list(c.entries) == ["c", "a", "d"]
    assert c.get("b", 7) == 7 and len(c) == 3


def test_the_fast_level_is_emptied_when_a_value_is_dropped():
    c = Cache("jit", max_size=2)
    c.put("a", 1)
    c.remember(("id", 1), 1)
    c.put("b", 2)
    assert c.fast == {("id", 1): 1}    # nothing dropped yet
    c.put("c", 3)                      # "a" dropped: the index may point at it
    assert c.fast == {}
    for i in range(5):                 # the index has the same bound
        c.remember(i, i)
        assert len(c.fast) <= 2


def test_lookup_makes_once_and_unhashable_keys_are_not_stored():
    c = Cache("jit", max_size=4)
    made = []
    assert c.lookup("k", lambda: made.append(1) or "v") == "v"
    assert c.lookup("k", lambda: made.append(1) or "w") == "v"
    assert made == [1]
    assert c.lookup(["unhashable"], lambda: "x") == "x"
    assert len(c) == 1


def test_unknown_cache_name_is_refused():
    with pytest.raises(KeyError):
        Cache("no such cache")


def test_clear_caches_empties_every_cache_and_programs_compile_again():
    f = pyjax.jit(lambda x: x * 3.0 + 1.0)
    x = jnp.arange(4.0)
    f(x)
    x + 2.0
    jnp.sum(x, axis=0)
    pyjax.grad(lambda x: jnp.sum(jnp.sin(x)))(x)
    sizes = cache_sizes()
    for name in ("eager primitives", "jit", "jit traces", "eager jnp", "eager grad"):
        assert sizes[name] > 0, (name, sizes)
    pyjax.clear_caches()
    assert set(cache_sizes().values()) == {0}
    assert f._cache_size() == 0
    with count_compiles() as n:
        np.testing.assert_allclose(f(x), np.arange(4.0) * 3 + 1)
    assert n() == 1
    with count_compiles() as n:
        f(x)
    assert n() == 0


def test_a_jitted_function_and_its_eager_call_equation_share_one_executable():
    g = pyjax.jit(lambda x: jnp.tanh(x) * 2.0)
    x = jnp.linspace(0.0, 1.0, 5)
    y = jnp.ones(5)
    # g(x) under grad with respect to y only: its jit equation runs eagerly (compiled)
    grad = pyjax.grad(lambda y: jnp.sum(g(x) * y))(y)
    np.testing.assert_allclose(grad, np.tanh(np.linspace(0, 1, 5)) * 2, rtol=1e-6)
    with count_compiles() as n:
        np.testing.assert_allclose(g(x), grad, rtol=1e-6)
    assert n() == 0  # the same Jaxpr: its executable is not compiled a second time
