"""Programs that some XLA CPU plugin builds compile wrongly, run on the plugin pyjax loads.

lammps-jax-pjrt-cpu 0.11.2 (the XLA of jaxlib 0.11.2, selectable with PYJAX_PLUGIN_PATH) gets
two successive in-place permutations of one array wrong (a gather read after a
dynamic_update_slice written in place); xla-cpu-pjrt and JAX 0.10.2 get them right. pyjax's
blocked LU builds its row permutation this way (docs/performance.md)."""
import numpy as np

import pyjax
from pyjax import lax
import pyjax.numpy as jnp


def test_two_in_place_permutations_of_one_array():
    n, j0 = 70, 64
    perm0 = np.random.default_rng(0).permutation(n).astype(np.int32)
    head = np.concatenate([np.arange(j0)[::-1], np.arange(j0, n)]).astype(np.int32)
    tail = np.array([2, 0, 1, 5, 4, 3], np.int32)

    def f(perm, head, tail):
        perm = lax.dynamic_update_slice(perm, perm.at[head].get(mode="promise_in_bounds"), (0,))
        rest = lax.slice(perm, (j0,), (n,))
        return lax.dynamic_update_slice(perm, rest.at[tail].get(mode="promise_in_bounds"),
                                        (j0,))

    want = perm0[head]
    want[j0:] = want[j0:][tail]
    np.testing.assert_array_equal(np.asarray(pyjax.jit(f)(perm0, head, tail)), want)
    np.testing.assert_array_equal(np.asarray(f(jnp.asarray(perm0), head, tail)), want)
