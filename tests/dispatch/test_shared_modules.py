"""Equal programs share one executable (dispatch/compiler.py ``_by_module``): jitted functions
that are distinct objects but lower to the same program (a lambda re-made on every call of
its maker) compile once while one of them is alive; programs that differ in a constant, a
donation, an XLA option or a shape do not share; ``clear_caches`` forgets the sharing."""
import gc

import numpy as np

import pyjax
import pyjax.numpy as jnp
from pyjax.test_util import count_compiles


def _exe(jitted):
    (entry,) = jitted._cache.entries.values()
    return entry.exe


def make(k=2.5, **jit_kw):
    return pyjax.jit(lambda x: jnp.sin(x) * k + 1.0, **jit_kw)


def test_equal_programs_share_an_executable():
    x = np.linspace(0, 1, 6, dtype=np.float32)
    with count_compiles() as n:
        a, b = make(), make()
        np.testing.assert_allclose(a(x), np.sin(x) * 2.5 + 1.0, rtol=1e-6)
        np.testing.assert_array_equal(b(x), a(x))
    assert n() == 1 and _exe(a) is _exe(b)
    with count_compiles() as n:  # each of these changes the program: its own executable
        other_constant = make(3.5)
        other_constant(x)
        donating = make(donate_argnums=0)
        donating(jnp.asarray(x))
        tuned = make(compiler_options={"xla_cpu_enable_fast_min_max": True})
        tuned(x)
        other_shape = make()
        other_shape(x[:3])
    assert n() == 4
    assert len({id(_exe(f)) for f in (a, other_constant, donating, tuned, other_shape)}) == 5
    np.testing.assert_allclose(other_constant(x), np.sin(x) * 3.5 + 1.0, rtol=1e-6)


def test_sharing_ends_with_the_programs_and_clear_caches():
    x = np.ones(4, np.float32)
    a = make(4.5)
    a(x)
    pyjax.clear_caches()
    with count_compiles() as n:
        b = make(4.5)
        b(x)
    assert n() == 1  # cleared: compiled again
    del a, b
    gc.collect()
    with count_compiles() as n:
        make(4.5)(x)
    assert n() == 1  # nothing alive to share
