"""axis_index_groups of psum/pmean/pmax/pmin/all_gather/psum_scatter/all_to_all against their NumPy
definitions: under pmap (replica groups in the lowering), under vmap with an axis name and
under jit(pmap) (the batched forms), derivatives against finite differences, and JAX's
errors (groups that do not partition the axis, groups of unequal sizes, psum/pmean inside a
shard_map that checks varying axes)."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax.sharding import PartitionSpec as P
from pyjax.test_util import check_grads

N = 8
GROUPS = [[5, 0, 3, 6], [1, 2, 7, 4]]     # unordered, interleaved: positions matter
PAIRS = [[1, 0], [2, 7], [3, 5], [6, 4]]
RNG = np.random.default_rng(0)
X = RNG.normal(size=(N, 4, 3)).astype(np.float32)


def group_of(groups):
    return {i: g for g in groups for i in g}


def np_reduce(x, groups, op):
    g = group_of(groups)
    return np.stack([op(x[g[i]], axis=0) for i in range(len(x))])


def np_gather(x, groups, axis, tiled):
    g = group_of(groups)
    join = np.concatenate if tiled else np.stack
    return np.stack([join([x[j] for j in g[i]], axis=axis) for i in range(len(x))])


def np_scatter(x, groups, dim, tiled):
    g = group_of(groups)
    k = len(groups[0])
    out = []
    for i in range(len(x)):
        total = x[g[i]].sum(0)
        blocks = np.split(total, k, axis=dim)
        p = g[i].index(i)
        out.append(blocks[p] if tiled else np.squeeze(blocks[p], dim))
    return np.stack(out)


def np_all_to_all(x, groups, split, concat, tiled):
    g = group_of(groups)
    k = len(groups[0])
    out = []
    for i in range(len(x)):
        p = g[i].index(i)
        if tiled:
            out.append(np.concatenate([np.split(x[q], k, axis=split)[p] for q in g[i]],
                                      axis=concat))
        else:
            out.append(np.stack([np.take(x[q], p, axis=split) for q in g[i]], axis=concat))
    return np.stack(out)


CASES = {   # name: (per-example function, NumPy definition over the stacked examples)
    "psum": (lambda v: lax.psum(v, "i", axis_index_groups=GROUPS),
             lambda x: np_reduce(x, GROUPS, np.sum)),
    "pmean": (lambda v: lax.pmean(v, "i", axis_index_groups=PAIRS),
              lambda x: np_reduce(x, PAIRS, np.mean)),
    "pmax": (lambda v: lax.pmax(v, "i", axis_index_groups=GROUPS),
             lambda x: np_reduce(x, GROUPS, np.max)),
    "pmin": (lambda v: lax.pmin(v, "i", axis_index_groups=PAIRS),
             lambda x: np_reduce(x, PAIRS, np.min)),
    "all_gather": (lambda v: lax.all_gather(v, "i", axis_index_groups=GROUPS, axis=1),
                   lambda x: np_gather(x, GROUPS, 1, False)),
    "all_gather_tiled": (lambda v: lax.all_gather(v, "i", axis_index_groups=PAIRS, axis=1,
                                                  tiled=True),
                         lambda x: np_gather(x, PAIRS, 1, True)),
    "psum_scatter": (lambda v: lax.psum_scatter(v, "i", axis_index_groups=GROUPS),
                     lambda x: np_scatter(x, GROUPS, 0, False)),
    "psum_scatter_tiled": (lambda v: lax.psum_scatter(v, "i", scatter_dimension=1, tiled=True,
                                                      axis_index_groups=PAIRS),
                           lambda x: np_scatter(x, PAIRS, 1, True)),
    "all_to_all": (lambda v: lax.all_to_all(v, "i", 0, 1, axis_index_groups=GROUPS),
                   lambda x: np_all_to_all(x, GROUPS, 0, 1, False)),
    "all_to_all_tiled": (lambda v: lax.all_to_all(v, "i", 0, 1, axis_index_groups=PAIRS,
                                                  tiled=True),
                         lambda x: np_all_to_all(x, PAIRS, 0, 1, True)),
}
_X_FOR = {"psum_scatter_tiled": RNG.normal(size=(N, 4, 6)).astype(np.float32)}


@pytest.mark.parametrize("name", sorted(CASES))
def test_groups_match_numpy_under_pmap_vmap_and_jit(name):
    f, ref = CASES[name]
    x = _X_FOR.get(name, X)
    want = ref(x)
    pm = pyjax.pmap(f, axis_name="i")
    np.testing.assert_allclose(np.asarray(pm(x)), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(pyjax.vmap(f, axis_name="i")(x)), want,
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(pyjax.jit(pm)(x)), want, rtol=1e-5, atol=1e-6)


def test_unbatched_operands_and_pmean_of_ints():
    # A value that does not vary along the axis: psum multiplies by the group size.
    out = pyjax.vmap(lambda v: lax.psum(2.0, "i", axis_index_groups=PAIRS) + 0 * v,
                     axis_name="i")(jnp.zeros(N))
    np.testing.assert_array_equal(np.asarray(out), [4.0] * N)
    out = pyjax.pmap(lambda v: lax.pmean(v, "i", axis_index_groups=PAIRS),
                     axis_name="i")(jnp.arange(N))
    np.testing.assert_allclose(np.asarray(out), np_reduce(np.arange(N) * 1.0,
                                                           PAIRS, np.mean))
    assert out.dtype == np.float32
    # psum of booleans counts them (as JAX), in groups too.
    b = np.array([1, 1, 0, 1, 0, 0, 1, 1], bool)
    out = pyjax.pmap(lambda v: lax.psum(v, "i", axis_index_groups=GROUPS), axis_name="i")(b)
    np.testing.assert_array_equal(np.asarray(out), np_reduce(b.astype(np.int32), GROUPS,
                                                             np.sum))
    assert out.dtype == np.int32


@pytest.fixture
def x64_on():
    pyjax.config.update("jax_enable_x64", True)
    yield


@pytest.mark.parametrize("name", ["psum", "pmax", "all_gather_tiled", "psum_scatter",
                                  "all_to_all_tiled"])
def test_gradients_against_finite_differences(x64_on, name):
    f, _ = CASES[name]
    w = RNG.normal(size=(N,) + np.shape(CASES[name][1](X))[1:])

    def loss_vmap(x):
        return jnp.sum(pyjax.vmap(f, axis_name="i")(x) * w)
    x = RNG.normal(size=X.shape)
    check_grads(loss_vmap, (x,), order=1, modes=["rev"])
    # pmap at the top level: the transposes lower to grouped XLA collectives.
    g_pmap = pyjax.pmap(pyjax.grad(lambda v, wi: jnp.sum(f(v) * wi)), axis_name="i")(x, w)
    np.testing.assert_allclose(np.asarray(g_pmap), np.asarray(pyjax.grad(loss_vmap)(x)),
                               rtol=1e-10)


def test_bad_groups_raise_as_jax():
    f = pyjax.pmap(lambda v: lax.psum(v, "i", axis_index_groups=[[0, 1], [1, 2]]), "i")
    with pytest.raises(ValueError, match="must cover all indices exactly once"):
        f(jnp.arange(4.0))
    with pytest.raises(ValueError, match="must cover all indices exactly once"):
        pyjax.vmap(lambda v: lax.all_gather(v, "i", axis_index_groups=[[0, 1]]),
                   axis_name="i")(jnp.arange(4.0))
    with pytest.raises(ValueError, match=r"must all be the same size.*sizes \[3, 1\]"):
        pyjax.pmap(lambda v: lax.pmean(v, "i", axis_index_groups=[[0, 1, 2], [3]]),
                   "i")(jnp.arange(4.0))
    with pytest.raises(TypeError, match="sequence of sequences of ints"):
        pyjax.vmap(lambda v: lax.psum_scatter(v, "i", axis_index_groups=[[0.5, 1]]),
                   axis_name="i")(jnp.ones((2, 2)))
    with pytest.raises(NotImplementedError, match="several axis names"):
        pyjax.vmap(pyjax.vmap(lambda v: lax.psum(v, ("i", "j"), axis_index_groups=[[0, 1],
                                                                                    [2, 3]]),
                              axis_name="j"), axis_name="i")(jnp.ones((2, 2)))


def test_shard_map_refuses_psum_groups_when_checking_vma():
    mesh = pyjax.make_mesh((N,), ("i",))
    x = jnp.arange(float(N))

    def sm(f, check_vma):
        return pyjax.shard_map(f, mesh=mesh, in_specs=P("i"), out_specs=P("i"),
                               check_vma=check_vma)
    for fn in (lax.psum, lax.pmean):
        with pytest.raises(NotImplementedError, match="check_vma"):
            sm(lambda v: fn(v, "i", axis_index_groups=PAIRS), True)(x)
    out = sm(lambda v: lax.psum(v, "i", axis_index_groups=PAIRS), False)(x)
    np.testing.assert_array_equal(np.asarray(out), np_reduce(np.arange(N),
                                                             PAIRS, np.sum))
    out = sm(lambda v: lax.pmax(v, "i", axis_index_groups=GROUPS), True)(x)   # as JAX: allowed
    np.testing.assert_array_equal(np.asarray(out), np_reduce(np.arange(N), GROUPS, np.max))
