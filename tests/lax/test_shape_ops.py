"""Shape primitives and their lax wrappers, eagerly and under jit, against NumPy."""
import ml_dtypes
import numpy as np
import pytest

import pyjax
from pyjax import lax
from pyjax._src.core.primitive import registry

TESTED_PRIMITIVES = {
    "broadcast_in_dim", "reshape", "squeeze", "transpose", "rev", "slice", "dynamic_slice",
    "dynamic_update_slice", "concatenate", "pad", "iota",
}

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = [np.dtype(d) for d in (np.bool_, np.int8, np.int32, np.uint8, np.float16, np.float32,
                                np.complex64)] + [BF16]
NUMERIC = [d for d in DTYPES if d != np.bool_]
# The dtypes every primitive's main case runs over (compiles cost ~50 ms each); edge cases
# rotate through all of DTYPES.
SWEEP = [np.dtype(d) for d in (np.bool_, np.int8, np.float32, np.complex64)] + [BF16]


def rand(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.asarray(rng.random(shape) > 0.5)
    if dtype.kind == "u":
        return np.asarray(rng.integers(0, 20, shape), dtype)
    if dtype.kind == "i":
        return np.asarray(rng.integers(-10, 10, shape), dtype)
    if dtype.kind == "c":
        return np.asarray(rng.standard_normal(shape) + 1j * rng.standard_normal(shape), dtype)
    return np.asarray(rng.standard_normal(shape), dtype)


def assert_same(got, want):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype == BF16:
        got, want = got.astype(np.float32), want.astype(np.float32)
    np.testing.assert_array_equal(got, want)


def check(fn, want, *args):
    """``fn(*args)`` eagerly and under jit equals ``want``; abstract eval agrees with both."""
    eager = fn(*args)
    assert isinstance(eager, pyjax.Array)
    assert_same(eager, want)
    jitted = pyjax.jit(fn)(*args)
    assert_same(jitted, want)
    spec = pyjax.eval_shape(fn, *args)
    assert spec.shape == eager.shape == jitted.shape
    assert spec.dtype == eager.dtype == jitted.dtype
    assert spec.weak_type == eager.weak_type


def np_broadcast_in_dim(x, shape, dims):
    expanded = [1] * len(shape)
    for i, d in enumerate(dims):
        expanded[d] = x.shape[i]
    return np.broadcast_to(x.reshape(expanded), shape)


def np_dynamic_starts(shape, starts, sizes):
    out = []
    for s, d, n in zip(starts, shape, sizes):
        s = s + d if s < 0 else s
        out.append(min(max(s, 0), d - n))
    return out


def np_pad(x, value, config):
    """Reference for lax.pad: interior padding, then edge padding (negative = crop)."""
    for ax, (lo, hi, interior) in enumerate(config):
        n = x.shape[ax]
        if n and interior:
            shape = list(x.shape)
            shape[ax] = n + (n - 1) * interior
            y = np.full(shape, value, x.dtype)
            idx = [slice(None)] * x.ndim
            idx[ax] = slice(None, None, interior + 1)
            y[tuple(idx)] = x
            x = y
        widths = [(0, 0)] * x.ndim
        widths[ax] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, widths, constant_values=np.asarray(value, x.dtype))
        idx = [slice(None)] * x.ndim
        idx[ax] = slice(-min(lo, 0), x.shape[ax] + min(hi, 0))
        x = x[tuple(idx)]
    return x


def np_dynamic_slice(x, starts, sizes):
    s = np_dynamic_starts(x.shape, starts, sizes)
    return x[tuple(slice(a, a + n) for a, n in zip(s, sizes))]


def np_dynamic_update_slice(x, u, starts):
    s = np_dynamic_starts(x.shape, starts, u.shape)
    out = x.copy()
    out[tuple(slice(a, a + n) for a, n in zip(s, u.shape))] = u
    return out


def _slice_case(shape, start, limit, strides):
    st = strides or (1,) * len(shape)
    return ((shape,), lambda x: lax.slice(x, start, limit, strides),
            lambda x: x[tuple(slice(a, b, c) for a, b, c in zip(start, limit, st))])


def _dus_case(shape, ushape, starts):
    return ((shape, ushape) + ((),) * len(starts),
            lambda x, u, *i: lax.dynamic_update_slice(x, u, i),
            lambda x, u, *_: np_dynamic_update_slice(x, u, starts), starts)


def _pad_case(shape, config):
    return ((shape, ()), lambda x, v: lax.pad(x, v, config), lambda x, v: np_pad(x, v, config))


# name -> list of cases (arg shapes, pyjax fn, NumPy fn[, int args]); the first case runs over
# SWEEP, the others (0-d, size 0, edge cases) over one dtype each, rotating through DTYPES.
CASES = {
    "broadcast_in_dim": [
        ((shp,), (lambda o, d: lambda x: lax.broadcast_in_dim(x, o, d))(out, dims),
         (lambda o, d: lambda x: np_broadcast_in_dim(x, o, d))(out, dims))
        for shp, out, dims in [((1, 3), (4, 2, 3), (0, 2)), ((), (2, 0), ()), ((3,), (2, 3), (1,)),
                               ((), (), ())]],
    "reshape": [
        ((shp,), (lambda n, d: lambda x: lax.reshape(x, n, d))(new, dims),
         (lambda n, d: lambda x: (x if d is None else np.transpose(x, d)).reshape(n))(new, dims))
        for shp, new, dims in [((2, 3, 4), (4, 6), (2, 0, 1)), ((2, 3), (3, 2), None),
                               ((), (1, 1), None), ((0, 3), (3, 0), None)]],
    "squeeze": [
        ((shp,), (lambda d: lambda x: lax.squeeze(x, d))(dims),
         (lambda d: lambda x: np.squeeze(x, d))(dims))
        for shp, dims in [((1, 3, 1), (0, -1)), ((1,), (0,)), ((1, 0), (0,))]],
    "transpose": [
        ((shp,), (lambda p: lambda x: lax.transpose(x, p))(perm),
         (lambda p: lambda x: np.transpose(x, p))(perm))
        for shp, perm in [((2, 3, 4), (2, 0, 1)), ((0, 2), (1, 0))]],
    "rev": [
        ((shp,), (lambda d: lambda x: lax.rev(x, d))(dims),
         (lambda d: lambda x: np.flip(x, d) if d else x)(dims))
        for shp, dims in [((2, 3), (0, 1)), ((4,), (0,)), ((0, 3), (1,)), ((), ())]],
    "slice": [_slice_case(*c) for c in [
        ((5, 6), (1, 0), (4, 6), (2, 3)), ((5, 6), (1, 2), (5, 5), None), ((3,), (1,), (1,), None),
        ((0, 4), (0, 1), (0, 3), (1, 1)), ((), (), (), None)]],
    "dynamic_slice": [
        ((shp,) + ((),) * len(st), (lambda z: lambda x, *i: lax.dynamic_slice(x, i, z))(sizes),
         (lambda s, z: lambda x, *_: np_dynamic_slice(x, s, z))(st, sizes), st)
        for shp, st, sizes in [((5, 6), (1, 4), (2, 3)), ((5, 6), (-2, 0), (2, 6)),
                               ((5, 6), (7, -9), (1, 1)), ((4,), (2,), (0,)), ((), (), ())]],
    "dynamic_update_slice": [_dus_case(*c) for c in [
        ((5, 6), (2, 3), (1, 4)), ((5, 6), (2, 6), (-1, 0)), ((4,), (0,), (3,)), ((), (), ()),
        ((0, 2), (0, 2), (1, 1))]],
    "concatenate": [
        (shapes, (lambda d: lambda *xs: lax.concatenate(xs, d))(dim),
         (lambda d: lambda *xs: np.concatenate(xs, d))(dim))
        for shapes, dim in [(((2, 3), (1, 3), (0, 3)), 0), (((2, 1), (2, 2)), 1),
                            (((0,), (0,)), 0)]],
    "pad": [_pad_case(*c) for c in [
        ((2, 3), ((1, 2, 1), (-1, 0, 2))), ((), ()), ((0, 2), ((1, 1, 3), (0, 0, 0))),
        ((4,), ((-2, -1, 0),))]],
}

PRIM_CASES = []
_k = 0
for _name, _cases in CASES.items():
    for _i, _case in enumerate(_cases):
        for _dt in (SWEEP if _i == 0 else [DTYPES[_k % len(DTYPES)]]):
            PRIM_CASES.append(pytest.param(_case, _dt, id=f"{_name}-{_i}-{_dt.name}"))
        _k += _i > 0


@pytest.mark.parametrize("case,dtype", PRIM_CASES)
def test_primitive(case, dtype):
    shapes, fn, np_fn = case[:3]
    ints = case[3] if len(case) > 3 else ()
    arrays = [rand(s, dtype, seed=i) for i, s in enumerate(shapes[:len(shapes) - len(ints)])]
    args = arrays + [np.int32(i) for i in ints]
    check(fn, np_fn(*args), *args)


IOTA_CASES = [((5,), 0, d) for d in SWEEP if d != np.bool_] + [
    ((2, 3), 1, np.dtype(np.uint8)), ((3, 2), 0, np.dtype(np.float16)),
    ((0,), 0, np.dtype(np.int32))]


@pytest.mark.parametrize("shape,dim,dtype", IOTA_CASES,
                         ids=[f"{s}-{d}-{t.name}" for s, d, t in IOTA_CASES])
def test_iota(shape, dim, dtype):
    want = np.broadcast_to(
        np.arange(shape[dim]).astype(dtype).reshape([-1 if i == dim else 1
                                                     for i in range(len(shape))]), shape)
    check(lambda: lax.broadcasted_iota(dtype, shape, dim), want)


def test_iota_functions():
    assert_same(lax.iota(np.int32, 4), np.arange(4, dtype=np.int32))
    assert_same(lax.iota(np.int64, 3), np.arange(3, dtype=np.int32))  # x64 off: canonical
    spec = pyjax.eval_shape(lambda: lax.iota("float32", 2))
    assert spec.shape == (2,) and spec.dtype == np.float32 and not spec.weak_type


def test_iota_x64(x64):
    assert_same(lax.iota(np.int64, 3), np.arange(3, dtype=np.int64))
    assert_same(lax.full((2,), 1.5, np.float64), np.full(2, 1.5))


# ---- the lax wrappers ----

def _wrapper_results(x, u):
    return [
        lax.broadcast(x[0] if isinstance(x, np.ndarray) else lax.index_in_dim(x, 0, 0, False),
                      (2,)),
        lax.broadcast_to_rank(x[0, 0] if isinstance(x, np.ndarray) else
                              lax.index_in_dim(lax.index_in_dim(x, 0, 0, False), 0, 0, False), 3),
        lax.expand_dims(x, (0, -1)), lax.expand_dims(x, (1,)),
        lax.slice_in_dim(x, 1, None, 2, axis=-1), lax.slice_in_dim(x, -3, -1, axis=1),
        lax.index_in_dim(x, -1, 1), lax.index_in_dim(x, 2, -1, keepdims=False),
        lax.collapse(x, 1), lax.collapse(x, 0, 2), lax.collapse(x, -2),
        lax.dynamic_slice_in_dim(x, 3, 2, axis=1), lax.dynamic_slice_in_dim(x, -2, 2, axis=2),
        lax.dynamic_index_in_dim(x, 1, 1, keepdims=False), lax.dynamic_index_in_dim(x, -1, 0),
        lax.dynamic_update_slice_in_dim(x, u, 2, axis=1),
        lax.dynamic_update_index_in_dim(x, lax.squeeze(u, (1,)), 2, 1),
        lax.dynamic_update_index_in_dim(x, u, -2, 1),
        lax.zeros_like_array(x),
    ]


def test_wrappers_against_numpy():
    x = rand((3, 4, 5), np.float32)
    u = np.zeros((3, 1, 5), np.float32)
    updated = x.copy()
    updated[:, 2:3] = 0
    want = [np.broadcast_to(x[0], (2, 4, 5)), x[0, 0].reshape(1, 1, 5), x[None, ..., None],
            x[:, None], x[:, :, 1::2], x[:, -3:-1], x[:, -1:], x[:, :, 2], x.reshape(3, 20),
            x.reshape(12, 5), x.reshape(3, 20), x[:, 2:4], x[:, :, 3:5], x[:, 1], x[-1:],
            updated, updated, updated, np.zeros_like(x)]
    for got, w in zip(pyjax.jit(_wrapper_results)(x, u), want, strict=True):
        assert_same(got, w)
    # a few eagerly too
    assert_same(lax.dynamic_slice_in_dim(x, 3, 2, axis=1), x[:, 2:4])  # start clamped
    assert_same(lax.collapse(x, 1), x.reshape(3, 20))
    assert_same(lax.broadcast_to_rank(np.ones(3, np.float32), 3), np.ones((1, 1, 3), np.float32))


def test_wrappers_with_traced_index():
    x = rand((3, 4), np.int32)

    def f(x, i):
        a = lax.dynamic_index_in_dim(x, i, 1, keepdims=False)
        return a, lax.dynamic_update_index_in_dim(lax.zeros_like_array(x), a, i, 1)
    jf = pyjax.jit(f)
    for i in (1, -1, 9, -9):
        a, b = jf(x, np.int32(i))
        j = min(max(i + 4 if i < 0 else i, 0), 3)
        assert_same(a, x[:, j])
        want = np.zeros_like(x)
        want[:, j] = x[:, j]
        assert_same(b, want)


def test_full_and_weak_types():
    a = lax.full((2, 3), 1.5)
    assert a.dtype == np.float32 and a.weak_type
    assert_same(a, np.full((2, 3), 1.5, np.float32))
    b = lax.full((2,), 7, np.int8)
    assert b.dtype == np.int8 and not b.weak_type
    assert_same(b, np.full(2, 7, np.int8))
    c = lax.full((), 2)
    assert isinstance(c, pyjax.Array) and c.shape == () and c.weak_type and c.dtype == np.int32
    # full_like: weak iff dtype is None and x is weak
    assert lax.full_like(a, 0).weak_type and lax.full_like(a, 0).dtype == np.float32

    def f():
        return [lax.full((2,), True), lax.full((2,), np.float32(1)),
                lax.full((2,), 1 + 2j, np.float32), lax.full((2,), 2.7, np.int32),
                lax.full([0, 2], 3.0, BF16), lax.full_like(np.ones((2, 2), np.float32), 3),
                lax.full_like(np.ones(2, np.float32), 2, dtype=np.int8, shape=(3,)),
                lax.full_like(pyjax.ShapeDtypeStruct((2,), np.uint8), 5),
                lax.zeros_like_array(np.ones((2, 3), np.complex64)),
                lax.full_like(lax.full((2,), 1), 2.5)]
    want = [np.full(2, True), np.ones(2, np.float32), np.ones(2, np.float32),
            np.full(2, 2, np.int32), np.zeros((0, 2), BF16), np.full((2, 2), 3, np.float32),
            np.full(3, 2, np.int8), np.full(2, 5, np.uint8), np.zeros((2, 3), np.complex64),
            np.full(2, 2, np.int32)]
    weak = [False] * 9 + [True]   # an int-typed weak x keeps its weak type under a float fill
    for got, w in zip(pyjax.jit(f)(), want, strict=True):
        assert_same(got, w)
    assert [s.weak_type for s in pyjax.eval_shape(f)] == weak
    assert pyjax.eval_shape(lambda: lax.zeros_like_array(1.0)).weak_type
    # a broadcast of a scalar, as in JAX
    jaxpr = pyjax.make_jaxpr(lambda: lax.full((2,), 1.0))()
    assert "broadcast_in_dim[broadcast_dimensions=() shape=(2,) sharding=None] 1.0" in str(jaxpr)
    assert jaxpr.out_avals[0].weak_type


def test_weak_type_propagation():
    w = pyjax.ShapeDtypeStruct((2, 3), np.float32, weak_type=True)
    s = pyjax.ShapeDtypeStruct((2, 3), np.float32)

    def weak(fn, *args):
        return pyjax.eval_shape(fn, *args).weak_type
    for fn in [lambda x: lax.reshape(x, (3, 2)), lambda x: lax.transpose(x, (1, 0)),
               lambda x: lax.broadcast_in_dim(x, (4, 2, 3), (1, 2)),
               lambda x: lax.slice(x, (0, 0), (1, 2)), lambda x: lax.rev(x, (0,)),
               lambda x: lax.squeeze(lax.reshape(x, (1, 6)), (0,)),
               lambda x: lax.dynamic_slice(x, (0, 1), (1, 1)),
               lambda x: lax.concatenate([x, x], 0),
               lambda x: lax.pad(x, 0.0, ((1, 1, 0), (0, 0, 0)))]:
        assert weak(fn, w) and not weak(fn, s)
    assert not weak(lambda x, y: lax.concatenate([x, y], 0), w, s)
    assert not weak(lambda x: lax.pad(x, np.float32(0), ((1, 1, 0), (0, 0, 0))), w)
    assert not weak(lambda: lax.iota(np.float32, 3))
    assert weak(lambda: lax.broadcast(2.0, (3,)))
    assert lax.reshape(lax.full((2, 3), 1.0), (6,)).weak_type   # eagerly too


def test_noop_cases_return_operand():
    x = lax.full((2, 3), 1.0)
    assert lax.reshape(x, (2, 3)) is x
    assert lax.reshape(x, (2, 3), (0, 1)) is x
    assert lax.transpose(x, (0, 1)) is x
    assert lax.broadcast_in_dim(x, (2, 3), (0, 1)) is x
    assert lax.broadcast(x, ()) is x
    assert lax.squeeze(x, ()) is x
    assert lax.expand_dims(x, ()) is x
    assert lax.slice(x, (0, 0), (2, 3)) is x
    assert lax.slice(x, (0, 0), (2, 3), (1, 1)) is x
    assert lax.concatenate([x], 0) is x
    assert lax.broadcast_to_rank(x, 2) is x
    jaxpr = pyjax.make_jaxpr(lambda x: lax.transpose(lax.reshape(x, (2, 3)), (0, 1)))(x)
    assert not jaxpr.eqns
    # host values still become arrays
    r = lax.reshape(np.ones((2, 3), np.float32), (2, 3))
    assert isinstance(r, pyjax.Array) and r.shape == (2, 3)


def test_jaxpr_params():
    x = np.ones((2, 3), np.float32)

    def f(x):
        return (lax.reshape(x, (3, 2)), lax.squeeze(lax.reshape(x, (1, 6)), (0,)),
                lax.rev(x, (1,)), lax.slice(x, (0, 1), (2, 3), (1, 2)),
                lax.concatenate([x, x], 1), lax.pad(x, 0.0, ((0, 1, 0), (1, 0, 0))),
                lax.transpose(x, (1, 0)))
    text = str(pyjax.make_jaxpr(f)(x))
    for piece in ["reshape[dimensions=None new_sizes=(3, 2) sharding=None]",
                  "squeeze[dimensions=(0,)]", "rev[dimensions=(1,)]",
                  "slice[limit_indices=(2, 3) start_indices=(0, 1) strides=(1, 2)]",
                  "concatenate[dimension=1]", "pad[padding_config=((0, 1, 0), (1, 0, 0))]",
                  "transpose[permutation=(1, 0)]"]:
        assert piece in text, (piece, text)
    hlo = pyjax.jit(f).lower(x).as_text()
    for op in ["stablehlo.reshape", "stablehlo.reverse", "stablehlo.slice",
               "stablehlo.concatenate", "stablehlo.pad", "stablehlo.transpose"]:
        assert op in hlo


def test_operand_kinds():
    # Python scalars, NumPy values and arrays are all accepted; weak values take the dtype
    def f():
        return [lax.broadcast_in_dim(3, (2,), ()), lax.reshape(np.float64(2.0), (1,)),
                lax.concatenate([np.ones(2, np.int8), lax.full((1,), 0, np.int8)], 0),
                lax.pad(np.ones(2, np.int8), 5, ((1, 0, 0),)),
                lax.dynamic_update_slice(np.zeros(3, np.float16), lax.full((1,), 2), (1,))]
    want = [np.full(2, 3, np.int32), np.full(1, 2.0, np.float32), np.array([1, 1, 0], np.int8),
            np.array([5, 1, 1], np.int8), np.array([0, 2, 0], np.float16)]
    for got, w in zip(pyjax.jit(f)(), want, strict=True):
        assert_same(got, w)
    assert_same(lax.pad(np.ones(2, np.int8), 5, ((1, 0, 0),)), want[3])


def test_dynamic_index_dtypes():
    x = rand((5, 6), np.float32)
    want = x[2:4, 1:3]
    starts = [(np.int8(2), 1), (np.uint8(2), np.int32(1)), (np.int16(2), np.int8(1)),
              (2, np.uint32(1)), np.array([2, 1], np.int8), np.array([2, 1]), (-3, -5)]
    outs = pyjax.jit(lambda x: [lax.dynamic_slice(x, s, (2, 2)) for s in starts])(x)
    for got in outs:
        assert_same(got, want)
    assert_same(lax.dynamic_slice(x, (np.int8(2), 1), (2, 2)), want)
    assert_same(lax.dynamic_slice(x, lax.broadcasted_iota(np.int32, (2,), 0), (1, 1)),
                x[0:1, 1:2])
    # traced indices of mixed dtypes, and a traced 1-D index array
    f = pyjax.jit(lambda x, i, j, ij: (lax.dynamic_slice(x, (i, j), (2, 2)),
                                       lax.dynamic_slice(x, ij, (2, 2))))
    for got in f(x, np.int8(-3), np.uint8(1), np.array([2, 1], np.int32)):
        assert_same(got, want)
    # a Python int beyond the range of the other index dtype promotes
    assert_same(pyjax.jit(lambda x: lax.dynamic_slice(x, (np.int8(1), 300), (1, 2)))(x),
                x[1:2, 4:6])
    jaxpr = pyjax.make_jaxpr(lambda x, i: lax.dynamic_slice(x, (i, 0), (2, 2)))(x, np.int8(1))
    assert "dynamic_slice[slice_sizes=(2, 2)]" in str(jaxpr)
    ds = [e for e in jaxpr.eqns if e.primitive.name == "dynamic_slice"][0]
    assert {v.aval.dtype for v in ds.invars[1:]} == {np.dtype(np.int8)}
    # allow_negative_indices=False: no select, XLA clamps the negative start to 0
    g = pyjax.jit(lambda x, i: (lax.dynamic_slice(x, (i, 0), (1, 6), allow_negative_indices=False),
                                lax.dynamic_slice(x, (i, 0), (1, 6))))
    a, b = g(x, np.int32(-1))
    assert_same(a, x[:1])
    assert_same(b, x[4:])
    assert "select_n" not in str(pyjax.make_jaxpr(lambda x, i: lax.dynamic_slice(
        x, (i, 0), (1, 6), allow_negative_indices=False))(x, np.int32(0)))


# ---- errors ----

X = np.ones((2, 3), np.float32)

ERRORS = [
    (lambda: lax.reshape(X, (5,)), TypeError,
     r"reshape total size must be unchanged, got new_sizes \(5,\) for shape \(2, 3\)"),
    (lambda: lax.reshape(X, (3, 2), (0, 0)), TypeError, "permutation"),
    (lambda: lax.reshape(X, (-1, 6)), TypeError, "nonnegative"),
    (lambda: lax.reshape(X, 6), TypeError, "shapes must be 1D sequences"),
    (lambda: lax.broadcast_in_dim(X, (2, 3), (0,)), TypeError, "length equal to operand ndim"),
    (lambda: lax.broadcast_in_dim(X, (3,), (0, 1)), TypeError, "equal or higher rank"),
    (lambda: lax.broadcast_in_dim(X, (2, 3), (0, 2)), TypeError, "subset of output dimensions"),
    (lambda: lax.broadcast_in_dim(X, (2, 4), (0, 1)), TypeError, "either be 1"),
    (lambda: lax.broadcast_in_dim(X, (3, 2, 3), (2, 0)), TypeError, "strictly increasing|be 1"),
    (lambda: lax.broadcast_in_dim(X, (3, 2), (1, 0)), TypeError, "strictly increasing"),
    (lambda: lax.broadcast_in_dim(X, (2, -3), (0, 1)), TypeError, "nonnegative"),
    (lambda: lax.squeeze(X, (0,)), ValueError, "size not equal to one"),
    (lambda: lax.squeeze(X, (2,)), ValueError, "out of bounds"),
    (lambda: lax.squeeze(np.ones((1, 1)), (0, -2)), ValueError, "not unique"),
    (lambda: lax.expand_dims(X, (0, 0)), ValueError, "repeated axis"),
    (lambda: lax.expand_dims(X, (3, -1)), ValueError, "repeated axis"),
    (lambda: lax.expand_dims(X, (4,)), ValueError, "out of bounds"),
    (lambda: lax.transpose(X, (0, 0)), TypeError, "isn't a permutation"),
    (lambda: lax.transpose(X, (0,)), TypeError, "isn't a permutation"),
    (lambda: lax.rev(X, (2,)), TypeError, "less than the operand rank"),
    (lambda: lax.rev(X, (0, 0)), TypeError, "unique"),
    (lambda: lax.rev(X, (-1,)), TypeError, "nonnegative"),
    (lambda: lax.slice(X, (0,), (1,)), TypeError, "length equal to the number of dimensions"),
    (lambda: lax.slice(X, (0, 0), (2, 4)), TypeError, "less than or equal to operand shape"),
    (lambda: lax.slice(X, (-1, 0), (2, 3)), TypeError, "greater than or equal to zero"),
    (lambda: lax.slice(X, (2, 0), (1, 3)), TypeError, "greater than or equal to start"),
    (lambda: lax.slice(X, (0, 0), (2, 3), (1,)), TypeError, "strides must have length"),
    (lambda: lax.slice(X, (0, 0), (2, 3), (1, -1)), TypeError, "strides must be positive"),
    (lambda: lax.slice(X, (0, 0), (2, 3), (1, 0)), TypeError, "strides must be positive"),
    (lambda: lax.slice_in_dim(X, 0, 1, axis=2), ValueError, "out of bounds"),
    (lambda: lax.index_in_dim(X, 3, 1 - 1), IndexError, "out of bounds"),
    (lambda: lax.dynamic_slice(X, (0,), (1, 1)), ValueError, "Length of slice indices"),
    (lambda: lax.dynamic_slice(X, (0, 0), (3, 1)), TypeError, "less than or equal"),
    (lambda: lax.dynamic_slice(X, (0, 0), (1,)), TypeError, "slice_sizes must have the same"),
    (lambda: lax.dynamic_slice(X, (0, 0), (1, -1)), TypeError, "greater than or equal to zero"),
    (lambda: lax.dynamic_slice(X, (0.5, 0), (1, 1)), TypeError, "must be integers"),
    (lambda: lax.dynamic_slice(X, (np.zeros(2, np.int32), 0), (1, 1)), TypeError, "scalars"),
    (lambda: lax.dynamic_slice(X, np.zeros((2, 1), np.int32), (1, 1)), ValueError, "1D"),
    (lambda: lax.dynamic_update_slice(X, np.ones((3, 1), np.float32), (0, 0)), TypeError,
     "smaller than operand shape"),
    (lambda: lax.dynamic_update_slice(X, np.ones(3, np.float32), (0, 0)), TypeError,
     "same rank"),
    (lambda: lax.dynamic_update_slice(X, np.ones((1, 1), np.int32), (0, 0)), TypeError,
     "dtypes must match"),
    (lambda: lax.dynamic_update_slice(X, np.ones((1, 1), np.float32), (0,)), ValueError,
     "Length of slice indices"),
    (lambda: lax.concatenate([], 0), ValueError, "non-empty"),
    (lambda: lax.concatenate([X, X.astype(np.int32)], 0), TypeError, "same dtypes"),
    (lambda: lax.concatenate([X, np.ones((2, 2), np.float32)], 0), TypeError,
     "differ in dimensions other than"),
    (lambda: lax.concatenate([X, np.ones(3, np.float32)], 0), TypeError,
     "different numbers of dimensions"),
    (lambda: lax.concatenate([X, X], 2), TypeError, "dimension out of bounds"),
    (lambda: lax.concatenate([X], -1), TypeError, "dimension out of bounds"),
    (lambda: lax.concatenate([np.float32(1), np.float32(2)], 0), TypeError, "out of bounds"),
    (lambda: lax.pad(X, 0.0, ((0, 0, 0),)), ValueError, "length of padding_config"),
    (lambda: lax.pad(X, 0.0, ((0, 0, -1), (0, 0, 0))), ValueError, "nonnegative"),
    (lambda: lax.pad(X, 0.0, ((-3, 0, 0), (0, 0, 0))), ValueError, "not at least 0"),
    (lambda: lax.pad(X, np.int32(0), ((0, 0, 0), (0, 0, 0))), TypeError, "same dtype"),
    (lambda: lax.pad(X, np.zeros(2, np.float32), ((0, 0, 0), (0, 0, 0))), ValueError, "scalar"),
    (lambda: lax.pad(X, 0.0, ((0, 0), (0, 0))), TypeError, "triples"),
    (lambda: lax.broadcasted_iota(np.int32, (2, 3), 2), ValueError, "iota dimension"),
    (lambda: lax.broadcasted_iota(np.bool_, (2,), 0), TypeError, "iota does not accept"),
    (lambda: lax.iota(np.int32, -1), TypeError, "nonnegative"),
    (lambda: lax.full((2,), np.ones(2)), TypeError, "scalar fill_value"),
    (lambda: lax.full_like(X, np.ones(2)), TypeError, "scalar fill_value"),
    (lambda: lax.collapse(X, 1, 0), ValueError, "invalid dimension range"),
    (lambda: lax.dynamic_update_index_in_dim(X, np.ones((), np.float32), 0, 0), TypeError,
     "one less"),
]


@pytest.mark.parametrize("fn,exc,match", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors(fn, exc, match):
    with pytest.raises(exc, match=match):
        fn()


def test_errors_under_jit_name_the_problem():
    with pytest.raises(TypeError, match=r"new_sizes \(7,\) for shape \(2, 3\)"):
        pyjax.jit(lambda x: lax.reshape(x, (7,)))(X)
    with pytest.raises(TypeError, match="strides must be positive"):
        pyjax.make_jaxpr(lambda x: lax.slice(x, (0, 0), (2, 3), (-1, 1)))(X)
    # direct binds are validated too (params checked by abstract eval, not just the wrappers)
    from pyjax._src.lax import shape_ops
    with pytest.raises(TypeError, match="must have every element be an integer"):
        shape_ops.transpose_p.bind(X, permutation=[1, "a"])
    with pytest.raises(TypeError, match="same type"):
        shape_ops.dynamic_slice_p.bind(X, np.int8(0), np.int32(0), slice_sizes=(1, 1))


def test_tested_primitives_are_registered():
    for name in TESTED_PRIMITIVES:
        assert name in registry and registry[name].name == name
    from pyjax._src.lax import shape_ops
    for name in shape_ops.__all__:
        assert getattr(lax, name) is getattr(shape_ops, name), name
    assert lax.reshape_p is registry["reshape"]
