"""jnp functions that run eagerly as one compiled call (numpy/eager_compiled.py): the same
results as the function run primitive by primitive, one compile per signature, and the plain
function under transformations and for operands jit would treat differently."""
import numpy as np
import pytest

import pyjax
from pyjax import test_util
import pyjax.numpy as jnp
from pyjax._src.numpy import reductions, products, ufuncs


def same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


M = np.arange(12.0, dtype=np.float32).reshape(3, 4) - 5.5
CASES = [
    (reductions.sum, (M,), {}), (reductions.sum, (M, 0), {}),
    (reductions.sum, (M,), dict(axis=(0, 1), keepdims=True)),
    (reductions.sum, (M.astype(np.int8),), dict(axis=1)),
    (reductions.sum, (M,), dict(where=M > 0, initial=2.0)),
    (reductions.prod, (M,), dict(axis=-1, dtype=jnp.float32)),
    (reductions.max, (M,), dict(axis=0, initial=1.0, where=M < 3)),
    (reductions.min, (M,), {}), (reductions.all, (M > -6,), dict(axis=1)),
    (reductions.any, (M > 5,), {}), (reductions.mean, (M,), dict(axis=1)),
    (reductions.mean, (M.astype(np.int32),), {}), (reductions.var, (M,), dict(ddof=1)),
    (reductions.std, (M,), dict(axis=0, keepdims=True)), (reductions.argmax, (M,), dict(axis=1)),
    (reductions.argmin, (M,), {}), (products.matmul, (M, M.T), {}),
    (products.dot, (M, M[0]), {}), (products.dot, (M, 2.0), {}),
    (ufuncs.where, (M > 0, M, 0.0), {}), (ufuncs.where, (M > 0, 1, -1), {}),
    (ufuncs.maximum, (M, 0.0), {}), (ufuncs.minimum, (M, M.T[:3, :1]), {}),
    (ufuncs.add, (M, M.astype(np.int32)), {}), (ufuncs.add, (M[0], M), {}),
    (ufuncs.add, (M > 0, M < 2), {}), (ufuncs.multiply, (M.astype(np.int8), 3), {}),
    (ufuncs.subtract, (2, M.astype(np.uint8)), {}), (ufuncs.divide, (M.astype(np.int32), 4), {}),
    (ufuncs.floor_divide, (M.astype(np.int32), -3), {}), (ufuncs.remainder, (M, 2.5), {}),
    (ufuncs.fmod, (M.astype(np.int32), 0), {}), (ufuncs.absolute, (M.astype(np.uint8),), {}),
    (ufuncs.absolute, (M + 1j * M,), {}), (ufuncs.sign, (M,), {}), (ufuncs.square, (M > 0,), {}),
    (ufuncs.reciprocal, (M,), {}), (ufuncs.hypot, (M, 3.0), {}), (ufuncs.logaddexp, (M, -M), {}),
    (ufuncs.heaviside, (M, 0.5), {}), (ufuncs.copysign, (M, -1.0), {}),
    (ufuncs.fmax, (M, np.float32(np.nan)), {}), (ufuncs.greater, (M + 1j, M.T[:3, :1] + 0j), {}),
    (ufuncs.equal, (M, 0.5), {}), (ufuncs.logical_xor, (M, M > 1), {}),
    (ufuncs.bitwise_and, (M.astype(np.int32), 6), {}), (ufuncs.left_shift, (M.astype(np.int32) % 4, 2), {}),
    (ufuncs.right_shift, (M.astype(np.uint8), 1), {}), (ufuncs.bitwise_not, (M > 0,), {}),
    (ufuncs.clip, (M, -1, 2.5), {}), (ufuncs.clip, (M,), dict(max=0)),
]


@pytest.mark.parametrize("fn,args,kwargs", CASES)
def test_matches_the_function_run_op_by_op(fn, args, kwargs):
    args = tuple(jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args)
    kwargs = {k: jnp.asarray(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    plain = {ufuncs.where: ufuncs._where3, ufuncs.clip: ufuncs._clip,
             products.matmul: products._matmul, products.dot: products._dot}.get(fn, fn)
    if fn is ufuncs.clip:  # clip's own argument handling, then the compiled _clip
        args = (args[0], kwargs.pop("min", args[1] if len(args) > 1 else None),
                kwargs.pop("max", args[2] if len(args) > 2 else None))
    want = plain.uncompiled(*args, **kwargs)
    got = fn(*args, **kwargs)
    same(got, want)
    assert got.aval.weak_type == want.aval.weak_type


def test_one_compile_per_signature():
    x = jnp.ones((5, 7))
    with test_util.count_compiles() as n:
        jnp.sum(x, axis=1)
        assert n() == 1
        for _ in range(3):
            same(jnp.sum(x, axis=1), np.full(5, 7.0, np.float32))
        assert n() == 1
        jnp.sum(x, axis=0)  # another static value: another compile
        assert n() == 2
        same(jnp.sum(x, axis=np.int64(0)), np.full(7, 5.0, np.float32))
        same(jnp.sum(x, axis=True), np.full(5, 7.0, np.float32))  # operator.index, as JAX
        # keyed by type and value: 1, True and 1.0 are equal keys, but 1.0 is refused
        with pytest.raises(TypeError):
            jnp.sum(x, axis=1.0)
        jnp.sum(x)
        n_plain = n()
        sizes = test_util.cache_sizes()["eager jnp keywords"]
        same(jnp.sum(x, axis=None, keepdims=False), np.float32(35.0))  # the defaults: the
        assert n() == n_plain  # plain call's program, no keyword-bound jit of its own
        assert test_util.cache_sizes()["eager jnp keywords"] == sizes
    w = ufuncs._where3.compiled
    c = jnp.asarray([True, False])
    jnp.where(c, 1.0, 2.0)
    n = w._cache_size()
    for v in (3.0, -4.5, 0.0, -0.0):  # Python scalars are operands, not constants
        got = jnp.where(c, jnp.ones(2), v)
        same(got, np.array([1.0, v], np.float32))
        assert np.signbit(np.asarray(got)[1]) == np.signbit(v)
    assert w._cache_size() <= n + 1


def test_under_transformations_the_function_itself():
    x = jnp.ones((2, 3))
    text = str(pyjax.make_jaxpr(lambda a: jnp.sum(a, axis=0) + jnp.mean(a))(x))
    assert "reduce_sum" in text and "jit" not in text and "pjit" not in text
    g = pyjax.grad(lambda a: jnp.sum(jnp.where(a > 0, a * a, 0.0)))(jnp.array([-1.0, 2.0]))
    same(g, np.array([0.0, 4.0], np.float32))
    v = pyjax.vmap(lambda r: jnp.max(r) - jnp.min(r))(jnp.asarray(M))
    same(v, M.max(1) - M.min(1))


def test_other_operands_take_the_plain_function():
    with pytest.raises(TypeError, match="sum requires ndarray or scalar arguments"):
        jnp.sum([1.0, 2.0, 3.0])  # JAX's own error, not a traced pytree of scalars
    same(jnp.sum(np.ones(3, np.float32)), np.float32(3.0))
    same(jnp.matmul(M, M.T), M @ M.T)
    with pytest.raises(ValueError):
        jnp.sum(jnp.ones(3), axis=4)
    with pytest.raises(TypeError):
        jnp.matmul(jnp.ones(3), "a")


def test_deprecated_clip_arguments_warn_every_call():
    x = jnp.arange(4.0)
    for _ in range(2):
        with pytest.warns(DeprecationWarning, match="deprecated"):
            same(jnp.clip(x, a_min=1.0), np.clip(np.arange(4.0, dtype=np.float32), 1.0, None))


def test_devices_and_committed_results():
    devs = pyjax.devices()
    if len(devs) < 2:
        pytest.skip("needs 2 devices")
    x = pyjax.device_put(jnp.ones((2, 2)), devs[1])
    for r in (jnp.sum(x), x @ x, jnp.where(x > 0, x, 0.0), jnp.maximum(x, 2.0)):
        assert r.devices() == {devs[1]} and r.committed


def test_numpy_operands_are_put_on_the_device():
    a = np.arange(6.0).reshape(2, 3)  # float64: canonicalized to float32 without x64
    same(jnp.sum(a, axis=1), a.sum(1).astype(np.float32))
    same(jnp.asarray(np.ones(3, np.float32)) + a[0].astype(np.float32), 1 + a[0].astype(np.float32))
    same(jnp.maximum(a, 2.0), np.maximum(a, 2.0).astype(np.float32))
    same(jnp.sin(a), np.sin(a).astype(np.float32))
    same(jnp.where(a > 2, a, -1.0), np.where(a > 2, a, -1.0).astype(np.float32))
    x = jnp.ones((2, 3))  # an unhashable configuration value: the function itself runs
    same(jnp.sum(x, axis=np.array(0)), reductions.sum.uncompiled(x, axis=np.array(0)))
    with pytest.raises(TypeError):
        jnp.sum(np.array(["a", "b"]))
    with pytest.raises(TypeError):
        jnp.sin(np.array([object()]))


def test_arrays_from_host_data_share_their_aval():
    # one aval object per (shape, dtype, weak type): caches keyed by aval ids hit
    x, y = jnp.asarray(np.ones(3, np.float32)), jnp.asarray(np.zeros(3, np.float32))
    assert x.aval is y.aval
    assert jnp.asarray(np.ones(3, np.int32)).aval is not x.aval
    assert pyjax.device_put(np.ones(3, np.float32)).aval is x.aval
