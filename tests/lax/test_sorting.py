"""sort (one or several operands), sort_key_val and top_k eagerly and under jit, against NumPy."""
import ml_dtypes
import numpy as np
import pytest

import pyjax
import pyjax.lax as lax

TESTED_PRIMITIVES = {"sort", "top_k"}

BF16 = np.dtype(ml_dtypes.bfloat16)
RNG = np.random.default_rng(2)
NEG_NAN = np.frombuffer(np.uint32(0xFFC00000).tobytes(), np.float32)[0]  # x86's default NaN


def make(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return RNG.random(shape) < 0.5
    if np.issubdtype(dtype, np.unsignedinteger):
        return RNG.integers(0, 250, shape).astype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        return (RNG.integers(-2, 2, shape) + 1j * RNG.integers(-2, 2, shape)).astype(dtype)
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(-100, 100, shape).astype(dtype)
    return (RNG.integers(-5, 5, shape) / 2).astype(dtype)  # ties on purpose


def _as_list(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _assert_matches(outs, expected, weak=False):
    outs = _as_list(outs)
    assert len(outs) == len(expected)
    for out, exp in zip(outs, expected):
        assert out.shape == exp.shape and out.dtype == exp.dtype, (out.aval, exp.dtype)
        assert out.weak_type == weak
        got = np.asarray(out)
        if exp.dtype.kind in "fcV" or exp.dtype == BF16:
            got, exp = got.view(np.uint8), exp.view(np.uint8)  # bit-exact, NaN/-0.0 included
        np.testing.assert_array_equal(got, exp)


def check_cases(cases, n_eager=1, weak=False):
    """``cases`` are ``(fn, args, expected_list)``: eval_shape of each, the first ``n_eager``
    eagerly and all in one ``jit`` agree bit-for-bit with the expected arrays."""
    cases = [(f, tuple(a), [np.asarray(e) for e in exp]) for f, a, exp in cases]
    for f, args, expected in cases:
        structs = _as_list(pyjax.eval_shape(f, *args))
        assert [(s.shape, s.dtype, s.weak_type) for s in structs] == [
            (e.shape, e.dtype, weak) for e in expected]
    for f, args, expected in cases[:n_eager]:
        _assert_matches(f(*args), expected, weak)

    def together(*flat):
        outs, i = [], 0
        for f, args, _ in cases:
            outs.append(f(*flat[i:i + len(args)]))
            i += len(args)
        return outs
    flat = [a for _, args, _ in cases for a in args]
    for out, (_, _, expected) in zip(pyjax.jit(together)(*flat), cases):
        _assert_matches(out, expected, weak)


def np_sort(x, axis):
    if x.dtype == BF16:
        idx = np.argsort(x.astype(np.float32), axis=axis, kind="stable")
    else:
        idx = np.argsort(x, axis=axis, kind="stable")
    return np.take_along_axis(x, idx, axis)


# ---- sort ----

@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int8, np.uint8, np.bool_, BF16,
                                   np.complex64], ids=lambda d: np.dtype(d).name)
def test_sort_one_operand(dtype):
    cases = []
    for shape, dim in [((3, 5), 1), ((9,), -1), ((3, 5), 0), ((0,), 0), ((2, 0), 1)]:
        x = make(shape, dtype)
        cases.append((lambda a, d=dim: lax.sort(a, dimension=d), (x,),
                      [np_sort(x, dim % len(shape))]))
    check_cases(cases, n_eager=1)


def test_sort_float_total_order():
    # NaNs of both signs go last (and keep their input order: stable), -0.0 and 0.0 tie.
    x = np.array([3.0, np.nan, 0.0, -0.0, -np.inf, NEG_NAN, np.inf, 1.0, -0.0, 0.0],
                 np.float32)
    order = [4, 2, 3, 8, 9, 7, 0, 6, 1, 5]
    y = np.array([[np.nan, 1.0, -1.0], [2.0, NEG_NAN, 2.0]], np.float32)
    c = np.array([1 + 1j, complex(np.nan, 0), 1 - 1j, -2 + 5j], np.complex64)
    y_sorted = np.array([[2.0, 1.0, -1.0], [np.nan, NEG_NAN, 2.0]], np.float32)
    check_cases([(lambda a: lax.sort(a), (x,), [x[order]]),
                 (lambda a: lax.sort(a, dimension=0), (y,), [y_sorted]),
                 (lambda a: lax.sort(a), (c,), [c[[3, 2, 0, 1]]])], n_eager=1)
    assert np.signbit(np.asarray(lax.sort(x))[1:5]).tolist() == [False, True, True, False]


def test_sort_multiple_operands():
    k1 = np.array([2, 1, 2, 1, 0, 2, 1], np.int32)
    k2 = np.array([0.5, 0.5, -1.0, 0.5, 3.0, 0.5, -2.0], np.float32)
    v = np.arange(7, dtype=np.float32) * 10
    b = make((7,), np.bool_)
    by1 = np.argsort(k1, kind="stable")           # ties keep input order
    by12 = np.lexsort((k2, k1))                    # lexsort is stable too
    m = make((4, 6), np.int8)
    mv = make((4, 6), np.float32)
    midx = np.argsort(m, axis=0, kind="stable")
    check_cases([
        (lambda a, c, d: lax.sort((a, c, d)), (k1, k2, v), [k1[by1], k2[by1], v[by1]]),
        (lambda a, c, d: lax.sort([a, c, d], num_keys=2), (k1, k2, v),
         [k1[by12], k2[by12], v[by12]]),
        (lambda a, c: lax.sort_key_val(a, c), (k1, b), [k1[by1], b[by1]]),
        (lambda a, c: lax.sort_key_val(a, c, dimension=0), (m, mv),
         [np.take_along_axis(m, midx, 0), np.take_along_axis(mv, midx, 0)]),
    ], n_eager=2)
    out = lax.sort((k1,))
    assert isinstance(out, tuple) and len(out) == 1
    assert isinstance(lax.sort_key_val(k1, v), tuple)


def _with_specials(x):
    """``x`` (a float array) with NaNs of both signs, signed zeros and infinities written
    into it, at ~a quarter of its places."""
    flat = x.reshape(-1).copy()
    specials = np.array([np.nan, NEG_NAN, 0.0, -0.0, np.inf, -np.inf], np.float32).astype(x.dtype)
    at = RNG.choice(flat.size, flat.size // 4, replace=False)
    flat[at] = specials[RNG.integers(0, len(specials), at.size)]
    return flat.reshape(x.shape)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16, np.int16, np.uint16, np.int32,
                                   np.uint32],
                         ids=lambda d: np.dtype(d).name)
def test_packed_cpu_sort_matches_numpy(dtype):
    # On the CPU a sort by one narrow key runs as one int64 sort of (order key, index) pairs
    # and a gather (lax/sorting.py): the values (NaN payloads, -0.0) and the stable order of
    # ties must be the comparator's, which NumPy's stable sort gives
    x = make((3, 700), dtype)
    if x.dtype.kind == "f" or x.dtype == BF16:
        x = _with_specials(x)
    if x.dtype == np.uint32:  # both halves of the unsigned range (the top bit flips order)
        x[:, ::3] += np.uint32(2 ** 31)
        x[:, 1::7] = np.uint32(2 ** 32 - 1)
    idx1 = np.argsort(x.astype(np.float32) if x.dtype == BF16 else x, axis=1, kind="stable")
    idx0 = np.argsort(x.astype(np.float32) if x.dtype == BF16 else x, axis=0, kind="stable")
    payload = RNG.normal(size=x.shape).astype(np.float32)
    iota = np.broadcast_to(np.arange(700, dtype=np.int32), x.shape).copy()
    check_cases([
        (lambda a: lax.sort(a, dimension=1), (x,), [np.take_along_axis(x, idx1, 1)]),
        (lambda a: lax.sort(a, dimension=0), (x,), [np.take_along_axis(x, idx0, 0)]),
        (lambda a, i: lax.sort((a, i), dimension=1, num_keys=1)[1], (x, iota), [idx1.astype(np.int32)]),
        (lambda a, p: lax.sort_key_val(a, p, dimension=0), (x, payload),
         [np.take_along_axis(x, idx0, 0), np.take_along_axis(payload, idx0, 0)]),
    ], n_eager=1)
    text = pyjax.jit(lambda a, i: lax.sort((a, i), dimension=1)).lower(x, iota).as_text()
    assert "-> tensor<3x700xi64>" in text  # the packed path: one int64 operand
    single = pyjax.jit(lambda a: lax.sort(a, dimension=1)).lower(x).as_text()
    is_float = x.dtype.kind == "f" or x.dtype == BF16
    assert ("xi64>" in single) == is_float  # one integer key: XLA's own fast sort


def test_sort_compares_subnormals_as_zero():
    # XLA:CPU compares floats with denormals as zero (as JAX 0.10.2 on the CPU: its sort of
    # these returns them in input order); the packed sort keeps that, ties in input order
    s = np.finfo(np.float32).smallest_subnormal
    x = np.array([s, 0.0, -s, 0.0, 2 * s, -0.0, 1e-40], np.float32)
    for f in (lax.sort, pyjax.jit(lax.sort)):
        np.testing.assert_array_equal(np.asarray(f(x)).view(np.uint32), x.view(np.uint32))


def test_packed_sort_under_vmap_and_grad():
    x = _with_specials(make((4, 50), np.float32))
    x[np.isnan(x)] = 1.5  # finite values for the gradient
    w = RNG.normal(size=50).astype(np.float32)
    rows = pyjax.vmap(lambda r: lax.sort(r))(x)
    np.testing.assert_array_equal(np.asarray(rows).view(np.uint32),
                                  np_sort(x, 1).view(np.uint32))
    g = pyjax.grad(lambda r: (lax.sort(r) * w).sum())(x[0])
    want = np.zeros(50, np.float32)
    want[np.argsort(x[0], kind="stable")] = w
    np.testing.assert_array_equal(np.asarray(g), want)


def test_unstable_sort_sorts_keys():
    x = make((50,), np.float32)
    k, v = lax.sort((x, np.arange(50, dtype=np.int32)), is_stable=False)
    np.testing.assert_array_equal(np.asarray(k), np.sort(x))
    np.testing.assert_array_equal(x[np.asarray(v)], np.sort(x))  # a permutation that sorts


def test_sort_weak_type_and_jaxpr():
    def f(a):
        return lax.sort(lax.convert_element_type(a, np.float32, weak_type=True))
    x = np.array([3.0, 1.0, 2.0], np.float32)
    check_cases([(f, (x,), [np.sort(x)])], weak=True)
    text = str(pyjax.make_jaxpr(lambda a: lax.sort(a, dimension=-1))(np.ones((2, 3))))
    assert "sort[dimension=1 is_stable=True num_keys=1]" in text


def test_sort_errors():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(TypeError, match="equal shapes"):
        lax.sort((x, np.ones((3, 2), np.float32)))
    with pytest.raises(ValueError, match="out of bounds"):
        lax.sort(x, dimension=2)
    with pytest.raises(ValueError, match="out of bounds"):
        lax.sort(np.float32(1.0))
    with pytest.raises(ValueError, match="num_keys=3 must be between 1 and"):
        lax.sort((x, x), num_keys=3)
    with pytest.raises(ValueError, match="must equal 1 for a single operand"):
        lax.sort(x, num_keys=2)
    with pytest.raises(TypeError, match="at least one operand"):
        lax.sort(())
    with pytest.raises(TypeError, match="equal shapes"):
        pyjax.jit(lambda a, b: lax.sort_key_val(a, b))(x, np.ones(3, np.float32))


# ---- top_k ----

def np_top_k(x, k):
    """Largest first, NaN counting as the largest, lower index first among equals."""
    flat = x.reshape(-1, x.shape[-1])
    vals, idxs = [], []
    for row in flat:
        r = row.astype(np.float64) if row.dtype == BF16 else row
        order = sorted(range(len(r)), key=lambda i: (0 if r[i] != r[i] else 1, -float(r[i]), i))
        idxs.append(order[:k])
        vals.append(row[order[:k]])
    shape = x.shape[:-1] + (k,)
    return [np.array(vals, x.dtype).reshape(shape), np.array(idxs, np.int32).reshape(shape)]


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, BF16],
                         ids=lambda d: np.dtype(d).name)
def test_top_k(dtype):
    cases = []
    for shape, k in [((3, 6), 3), ((6,), 6), ((2, 3, 4), 1), ((5,), 0), ((0, 4), 2)]:
        x = make(shape, dtype)
        cases.append((lambda a, k=k: lax.top_k(a, k), (x,), np_top_k(x, k)))
    check_cases(cases, n_eager=1)


def test_top_k_nan_ties_and_jaxpr():
    # XLA's total order, as JAX 0.10.2 (its chlo.top_k): NaN above +inf, -NaN below -inf
    x = np.array([[1.0, np.nan, 5.0, 5.0, NEG_NAN, -np.inf, 5.0]], np.float32)
    for f in (lax.top_k, pyjax.jit(lax.top_k, static_argnums=1)):
        vals, idx = f(x, 5)
        np.testing.assert_array_equal(np.asarray(idx), [[1, 2, 3, 6, 0]])
        assert np.isnan(np.asarray(vals)[0, 0])
        np.testing.assert_array_equal(np.asarray(vals)[0, 1:], [5.0, 5.0, 5.0, 1.0])
        vals, idx = f(x, 7)
        np.testing.assert_array_equal(np.asarray(idx), [[1, 2, 3, 6, 0, 5, 4]])
    # +0.0 above -0.0 (JAX 0.10.2: values [1, 0, 0, -0, -0], indices [4, 0, 2, 1, 3])
    zeros = np.array([0.0, -0.0, 0.0, -0.0, 1.0], np.float32)
    vals, idx = lax.top_k(zeros, 5)
    np.testing.assert_array_equal(np.asarray(idx), [4, 0, 2, 1, 3])
    np.testing.assert_array_equal(np.signbit(np.asarray(vals)), [0, 0, 0, 1, 1])
    text = str(pyjax.make_jaxpr(lambda a: lax.top_k(a, 2))(x))
    assert "top_k[k=2]" in text and "i32[1,2]" in text


def test_top_k_errors():
    with pytest.raises(ValueError, match="no larger than minor dimension"):
        lax.top_k(np.ones((2, 3), np.float32), 4)
    with pytest.raises(ValueError, match="nonnegative"):
        lax.top_k(np.ones((3,), np.float32), -1)
    with pytest.raises(ValueError, match=">= 1 dimension"):
        lax.top_k(np.float32(1.0), 0)
    with pytest.raises(TypeError, match="k must be an int"):
        lax.top_k(np.ones((3,), np.float32), 1.5)
