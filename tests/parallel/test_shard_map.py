"""shard_map: per-device blocks, collectives over mesh axes, composition with jit/grad/vmap."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax.experimental.shard_map import shard_map as experimental_shard_map
from pyjax.sharding import NamedSharding, PartitionSpec as P
from pyjax.test_util import check_grads

RNG = np.random.default_rng(3)
MESH = pyjax.make_mesh((8,), ("x",))
MESH2 = pyjax.make_mesh((2, 4), ("a", "b"))
X = RNG.normal(size=(16, 3)).astype(np.float32)

block_sum = pyjax.shard_map(lambda b: lax.psum(b.sum(0), "x"), mesh=MESH, in_specs=P("x"),
                            out_specs=P())


def test_block_sum_with_psum_is_the_full_sum():
    np.testing.assert_allclose(np.asarray(block_sum(X)), X.sum(0), rtol=1e-5)
    xs = pyjax.device_put(X, NamedSharding(MESH, P("x")))
    np.testing.assert_allclose(np.asarray(pyjax.jit(block_sum)(xs)), X.sum(0), rtol=1e-5)
    assert experimental_shard_map is pyjax.shard_map


def test_blocks_and_collectives_match_numpy():
    seen = pyjax.shard_map(lambda b: b.shape[0] + 0 * b, mesh=MESH, in_specs=P("x"),
                           out_specs=P("x"))(X)
    np.testing.assert_array_equal(np.asarray(seen), 2)  # each device sees 2 rows
    ring = [(i, (i + 1) % 8) for i in range(8)]
    shifted = pyjax.shard_map(lambda b: lax.ppermute(b, "x", ring), mesh=MESH,
                              in_specs=P("x"), out_specs=P("x"))(X)
    np.testing.assert_array_equal(np.asarray(shifted), np.roll(X, 2, axis=0))
    y = RNG.normal(size=(4, 8)).astype(np.float32)
    gathered = pyjax.shard_map(lambda b: lax.all_gather(b, "b", axis=1, tiled=True),
                               mesh=MESH2, in_specs=P("a", "b"), out_specs=P("a", None))(y)
    np.testing.assert_array_equal(np.asarray(gathered), y)
    scattered = pyjax.shard_map(lambda b: lax.psum_scatter(b, "b", scatter_dimension=1,
                                                           tiled=True),
                                mesh=MESH2, in_specs=P(None, None), out_specs=P(None, "b"))(y)
    np.testing.assert_allclose(np.asarray(scattered), 4 * y, rtol=1e-6)
    idx = pyjax.shard_map(lambda b: b + 10 * lax.axis_index("a") + lax.axis_index("b"),
                          mesh=MESH2, in_specs=P(("a", "b")), out_specs=P(("a", "b")))(
        np.zeros(8, np.float32))
    np.testing.assert_array_equal(np.asarray(idx), [0, 1, 2, 3, 10, 11, 12, 13])


def test_grad_jit_vmap(x64):
    f = pyjax.shard_map(lambda b: jnp.sin(b) * lax.pmean(b, "x"), mesh=MESH,
                        in_specs=P("x"), out_specs=P("x"))
    x = RNG.normal(size=(8, 2))
    np.testing.assert_allclose(np.asarray(f(x)), np.sin(x) * x.mean(0), rtol=1e-12)
    check_grads(f, (x,), order=1)
    np.testing.assert_allclose(np.asarray(pyjax.jit(f)(x)), np.asarray(f(x)), rtol=1e-12)
    xb = RNG.normal(size=(3, 8, 2))
    np.testing.assert_allclose(np.asarray(pyjax.vmap(f)(xb)),
                               np.stack([np.asarray(f(v)) for v in xb]), rtol=1e-12)


def test_errors():
    with pytest.raises(ValueError, match="not divisible"):
        block_sum(np.ones((12, 3), np.float32))
    with pytest.raises(ValueError, match="'y'"):
        pyjax.shard_map(lambda b: b, mesh=MESH, in_specs=P("y"), out_specs=P())(X)
    with pytest.raises(ValueError, match="in_specs has 2 entries"):
        pyjax.shard_map(lambda b: b, mesh=MESH, in_specs=(P("x"), P()), out_specs=P())(X)
    with pytest.raises(ValueError, match="require replication"):
        pyjax.shard_map(lambda b: b, mesh=MESH, in_specs=P("x"), out_specs=P())(X)
    with pytest.raises(NameError, match="unbound axis name: z"):
        pyjax.shard_map(lambda b: lax.psum(b, "z"), mesh=MESH, in_specs=P("x"),
                        out_specs=P())(X)


def test_eager_call_is_one_manual_spmd_program_equal_to_the_traced_form():
    from pyjax.test_util import count_compiles
    x = RNG.normal(size=(8, 8)).astype(np.float32)
    fns = [
        (lambda b: lax.all_to_all(b, "b", 0, 1, tiled=True), P("a", "b"), P("a", "b")),
        (lambda b: lax.psum(b, "a") * lax.axis_index("b"), P("a", "b"), P(None, "b")),
        (lambda b: lax.psum_scatter(b, "b", tiled=True), P("a"), P(("a", "b"))),
        (lambda b: lax.pmax(lax.ppermute(b, "b", [(0, 3), (3, 0)]), "a"), P("a", "b"),
         P(None, "b")),
    ]
    for body, ins, outs in fns:
        f = pyjax.shard_map(body, mesh=MESH2, in_specs=ins, out_specs=outs)
        with count_compiles() as n:
            got = f(x)
            f(x + 1)
        assert n() == 1
        assert got.sharding == NamedSharding(MESH2, outs)
        traced = pyjax.jit(f)(x)  # the vmap form, under jit
        np.testing.assert_allclose(np.asarray(got), np.asarray(traced), rtol=1e-6)
