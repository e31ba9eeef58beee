"""dot_general, dot, batch_matmul eagerly and under jit, against NumPy."""
import ml_dtypes
import numpy as np
import pytest

import pyjax
import pyjax.lax as lax

TESTED_PRIMITIVES = {"dot_general"}

BF16 = np.dtype(ml_dtypes.bfloat16)
RNG = np.random.default_rng(1)


def make(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return RNG.random(shape) < 0.3
    if np.issubdtype(dtype, np.unsignedinteger):
        return RNG.integers(0, 5, shape).astype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        return (RNG.integers(-3, 4, shape) + 1j * RNG.integers(-3, 4, shape)).astype(dtype)
    return RNG.integers(-4, 5, shape).astype(dtype)


def _assert_matches(out, expected, out_dtype, weak=False):
    assert out.shape == expected.shape, (out.shape, expected.shape)
    assert out.dtype == out_dtype, (out.dtype, out_dtype)
    assert out.weak_type == weak
    got = np.asarray(out)
    if out_dtype == BF16:
        np.testing.assert_allclose(got.astype(np.float32), expected.astype(np.float32),
                                   rtol=2e-2, atol=2e-2)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def check_cases(cases, n_eager=1, weak=False):
    """``cases`` are ``(fn, args, expected, out_dtype)``: eval_shape of each, the first
    ``n_eager`` eagerly and all of them in one ``jit`` must agree with ``expected``."""
    cases = [(f, tuple(a), np.asarray(e), np.dtype(d)) for f, a, e, d in cases]
    for f, args, expected, dt in cases:
        s = pyjax.eval_shape(f, *args)
        assert (s.shape, s.dtype, s.weak_type) == (expected.shape, dt, weak)
    for f, args, expected, dt in cases[:n_eager]:
        _assert_matches(f(*args), expected, dt, weak)

    def together(*flat):
        outs, i = [], 0
        for f, args, _, _ in cases:
            outs.append(f(*flat[i:i + len(args)]))
            i += len(args)
        return outs
    flat = [a for _, args, _, _ in cases for a in args]
    for out, (_, _, expected, dt) in zip(pyjax.jit(together)(*flat), cases):
        _assert_matches(out, expected, dt, weak)


def np_dot_general(lhs, rhs, dims, out_dtype):
    """Reference: move (batch, free, contracting) into place and use matmul in a wide type."""
    (lc, rc), (lb, rb) = dims
    lf = [i for i in range(lhs.ndim) if i not in lc and i not in lb]
    rf = [i for i in range(rhs.ndim) if i not in rc and i not in rb]
    wide = np.complex128 if np.iscomplexobj(lhs) else (
        np.float64 if lhs.dtype.kind == "f" or lhs.dtype == BF16 else np.int64)
    lt = np.transpose(lhs, list(lb) + lf + list(lc)).astype(wide)
    rt = np.transpose(rhs, list(rb) + list(rc) + rf).astype(wide)
    bshape = [lhs.shape[i] for i in lb]
    lfs, rfs = [lhs.shape[i] for i in lf], [rhs.shape[i] for i in rf]
    k = int(np.prod([lhs.shape[i] for i in lc]))
    lm = lt.reshape(bshape + [int(np.prod(lfs)), k])
    rm = rt.reshape(bshape + [k, int(np.prod(rfs))])
    out = np.matmul(lm, rm).reshape(bshape + lfs + rfs)
    if np.dtype(out_dtype) == np.bool_:
        return out != 0
    return out.astype(out_dtype)


_DIM_CASES = [
    ((2, 3), (3, 4), (((1,), (0,)), ((), ()))),              # matmul
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),    # batched matmul
    ((3, 2, 4), (4, 5, 2), (((2,), (0,)), ((1,), (2,)))),    # batch dims not leading
    ((2, 3, 4), (4, 3, 5), (((1, 2), (1, 0)), ((), ()))),    # two contracting dims
    ((3,), (4,), (((), ()), ((), ()))),                      # outer product
    ((), (), (((), ()), ((), ()))),                          # scalars
    ((2, 0), (0, 3), (((1,), (0,)), ((), ()))),              # empty contraction: zeros
    ((0, 3), (3, 4), (((1,), (0,)), ((), ()))),              # empty result
]


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int8, np.uint8, BF16, np.complex64,
                                   np.bool_], ids=lambda d: np.dtype(d).name)
def test_dot_general(dtype):
    dtype = np.dtype(dtype)
    cases = []
    for ls, rs, dims in _DIM_CASES:
        x, y = make(ls, dtype), make(rs, dtype)
        cases.append((lambda a, b, d=dims: lax.dot_general(a, b, d), (x, y),
                      np_dot_general(x, y, dims, dtype), dtype))
    check_cases(cases, n_eager=2)


def test_int8_wraps_without_preferred_type():
    x = np.full((1, 4), 100, np.int8)
    out = lax.dot(x, x.T)
    assert out.dtype == np.int8
    assert int(np.asarray(out)[0, 0]) == np.int64(40000).astype(np.int8)


def test_preferred_element_type():
    i8 = np.full((2, 3), 100, np.int8)
    u8 = np.full((2, 3), 200, np.uint8)
    bf = make((2, 3), BF16)
    f = make((2, 3), np.float32)
    mm = (((1,), (1,)), ((), ()))
    cases = []
    for x, pref in [(i8, np.int32), (i8, np.float32), (u8, np.uint32), (bf, np.float32),
                    (f, BF16), (f, np.float32), (make((2, 3), np.int32), np.float32),
                    (make((2, 3), np.complex64), np.complex64)]:
        cases.append((lambda a, p=pref: lax.dot_general(a, a, mm, preferred_element_type=p),
                      (x,), np_dot_general(x, x, mm, pref), pref))
    check_cases(cases, n_eager=3)
    text = str(pyjax.make_jaxpr(
        lambda a: lax.dot_general(a, a, mm, preferred_element_type=np.int32))(i8))
    assert "preferred_element_type=int32" in text and "i32[2,2]" in text


def test_precision_is_accepted():
    x = make((3, 3), np.float32)
    ref = x @ x
    cases = [(lambda a, p=p: lax.dot(a, a, precision=p), (x,), ref, np.float32)
             for p in (None, "highest", lax.Precision.HIGH, (lax.Precision.HIGHEST, "default"),
                       "float32", "bfloat16")]
    check_cases(cases, n_eager=2)
    text = str(pyjax.make_jaxpr(lambda a: lax.dot(a, a, precision="highest"))(x))
    assert "precision=(Precision.HIGHEST, Precision.HIGHEST)" in text
    assert lax.Precision("tensorfloat32") is lax.Precision.HIGH
    with pytest.raises(ValueError, match="Precision"):
        lax.dot(x, x, precision=(1, 2, 3))


def test_dot_rank_rules():
    v, w, m, n = (make((3,), np.float32), make((3,), np.float32), make((2, 3), np.float32),
                  make((3, 4), np.float32))
    cases = [(lax.dot, (v, w), v @ w, np.float32), (lax.dot, (m, v), m @ v, np.float32),
             (lax.dot, (v, n), v @ n, np.float32), (lax.dot, (m, n), m @ n, np.float32)]
    check_cases(cases, n_eager=1)
    for a, b in [(m, m), (v, make((4,), np.float32)), (make((2, 3, 3), np.float32), n),
                 (np.float32(1), v)]:
        with pytest.raises(TypeError, match="Incompatible shapes for dot"):
            lax.dot(a, b)


def test_batch_matmul():
    a, b = make((2, 3, 4), np.float32), make((2, 4, 5), np.float32)
    c, d = make((2, 2, 3, 4), np.complex64), make((2, 2, 4, 1), np.complex64)
    check_cases([(lax.batch_matmul, (a, b), a @ b, np.float32),
                 (lax.batch_matmul, (c, d), c @ d, np.complex64)])
    with pytest.raises(ValueError, match="at least 2D"):
        lax.batch_matmul(make((3,), np.float32), b)
    with pytest.raises(ValueError, match="same ndim"):
        lax.batch_matmul(make((4, 5), np.float32), b)


def test_weak_types():
    def weak(x):
        return lax.convert_element_type(x, np.float32, weak_type=True)
    x = make((2, 3), np.float32)
    mm = (((1,), (0,)), ((), ()))
    # both weak: weak result; one weak: strong result in the strong operand's dtype
    check_cases([(lambda a, b: lax.dot_general(weak(a), weak(b), mm), (x, x.T), x @ x.T,
                  np.float32)], weak=True)
    bf = make((3, 2), BF16)
    check_cases([(lambda a, b: lax.dot_general(weak(a), b, mm), (x, bf),
                  np_dot_general(x, bf.astype(np.float32), mm, BF16), BF16)])
    assert not lax.dot(x, x.T).weak_type


_MM = (((1,), (0,)), ((), ()))


@pytest.mark.parametrize("ls,rs,dims,msg", [
    ((2, 3), (4, 5), _MM,
     r"dot_general requires contracting dimensions to have the same shape, got \(3,\) and "
     r"\(4,\)\."),
    ((2, 3, 4), (3, 4, 5), (((2,), (1,)), ((0,), (0,))),
     r"batch dimensions to have the same shape, got \(2,\) and \(3,\)"),
    ((2, 3), (3, 4), (((2,), (0,)), ((), ())), "lhs contracting dimension numbers"),
    ((2, 3), (3, 4), (((1,), (-1,)), ((), ())), "rhs contracting dimension numbers"),
    ((2, 3), (3, 4), (((1, 1), (0, 0)), ((), ())), "no repeated lhs contracting"),
    ((2, 3), (2, 3), (((1,), (1,)), ((0,), ())), "equal numbers of lhs_batch"),
    ((2, 3), (3, 4), (((1,), (0, 1)), ((), ())), "equal numbers of lhs_contracting"),
    ((2, 3), (2, 3), (((0,), (1,)), ((0,), (0,))), "lhs batch dimensions to be disjoint"),
    ((2, 3), (2, 3), (((0, 1),), ((), ())), "dimension_numbers must be"),
])
def test_dot_general_shape_errors(ls, rs, dims, msg):
    x, y = np.ones(ls, np.float32), np.ones(rs, np.float32)
    with pytest.raises(TypeError, match=msg):
        lax.dot_general(x, y, dims)
    with pytest.raises(TypeError, match=msg):
        pyjax.jit(lambda a, b: lax.dot_general(a, b, dims))(x, y)


@pytest.mark.parametrize("dt,pref,msg", [
    (np.float32, np.int32, "incompatible with `preferred_element_type`"),
    (np.int32, np.int8, "must not be narrower"),
    (np.int8, np.uint32, "same signedness"),
    (np.float32, np.complex64, "incompatible with `preferred_element_type`"),
    (np.bool_, np.int32, "bool operands"),
])
def test_preferred_element_type_errors(dt, pref, msg):
    x = np.ones((2, 2), dt)
    with pytest.raises(TypeError, match=msg):
        lax.dot(x, x, preferred_element_type=pref)


def test_dtype_mismatch_errors():
    with pytest.raises(TypeError, match="same dtypes, got float32, int32"):
        lax.dot(np.ones((2, 2), np.float32), np.ones((2, 2), np.int32))
    with pytest.raises(TypeError, match="same dtypes, got bfloat16, float32"):
        lax.dot(np.ones((2, 2), BF16), np.ones((2, 2), np.float32))
    with pytest.raises(TypeError, match="out_sharding must be None, a PartitionSpec"):
        lax.dot_general(np.ones(2), np.ones(2), (((0,), (0,)), ((), ())), out_sharding="x")
