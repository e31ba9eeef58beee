"""Operators, properties and methods of pyjax arrays (and of tracers, under ``jit``), against
NumPy."""
import operator

import ml_dtypes
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.trace import Tracer

bf16 = np.dtype(ml_dtypes.bfloat16)
I8, I32, U8, F16, F32, C64 = (np.dtype(d) for d in (np.int8, np.int32, np.uint8, np.float16,
                                                    np.float32, np.complex64))
B = np.dtype(np.bool_)


def check(out, ref, dtype, rtol=1e-6):
    assert isinstance(out, pyjax.Array), type(out)
    assert out.dtype == np.dtype(dtype), (out.dtype, dtype)
    ref = np.asarray(ref)
    assert out.shape == ref.shape, (out.shape, ref.shape)
    got = np.asarray(out)
    if got.dtype == bf16:
        got = got.astype(np.float32)
    if np.dtype(dtype).kind in "biu":
        np.testing.assert_array_equal(got, ref)
    else:
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol)


ARITH = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
         operator.mod, operator.pow]
BITS = [operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift]
CMP = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]


def _ref_dtype(a, b):
    return jnp.result_type(a, b)


@pytest.mark.parametrize("op", ARITH + CMP, ids=lambda o: o.__name__)
@pytest.mark.parametrize("xd,yd", [(I32, I32), (I8, U8), (F32, I32), (F16, F16), (bf16, F32),
                                   (I32, C64), (U8, U8)], ids=str)
def test_binary_operators_vs_numpy(op, xd, yd):
    x = (np.arange(1, 7).reshape(2, 3) % 5 + 1).astype(xd)
    y = (np.arange(3) + 1).astype(yd)
    if op in (operator.floordiv, operator.mod) and C64 in (xd, yd):
        with pytest.raises(TypeError):
            op(jnp.asarray(x), jnp.asarray(y))
        return
    if op in CMP[2:] and C64 in (xd, yd):
        return
    out = op(jnp.asarray(x), jnp.asarray(y))
    rd = B if op in CMP else _ref_dtype(x, y)
    if op is operator.truediv and np.dtype(rd).kind in "iu":
        rd = F32
    xw = x.astype(np.float64) if x.dtype in (bf16, F16) else x
    yw = y.astype(np.float64) if y.dtype in (bf16, F16) else y
    ref = op(xw.astype(np.result_type(xw, yw)), yw.astype(np.result_type(xw, yw)))
    check(out, ref, rd, rtol=1e-2 if bf16 in (xd, yd) or F16 in (xd, yd) else 1e-6)
    # reflected form: numpy array on the left defers to the pyjax array
    rout = op(x, jnp.asarray(y))
    assert isinstance(rout, ArrayImpl)
    check(rout, ref, rd, rtol=1e-2 if bf16 in (xd, yd) or F16 in (xd, yd) else 1e-6)


@pytest.mark.parametrize("op", BITS, ids=lambda o: o.__name__)
@pytest.mark.parametrize("dtype", [B, I8, I32, U8], ids=str)
def test_bitwise_operators(op, dtype):
    x = np.array([0, 1, 5, 7], dtype=dtype)
    y = np.array([1, 1, 2, 3], dtype=dtype)
    if dtype == B and op in (operator.lshift, operator.rshift):
        check(op(jnp.asarray(x), jnp.asarray(y)), op(x.astype(np.int32), y.astype(np.int32)),
              I32)
        return
    check(op(jnp.asarray(x), jnp.asarray(y)), op(x, y), dtype)
    check(op(jnp.asarray(x), y), op(x, y), dtype)


def test_python_scalar_operands_are_weak():
    assert (jnp.ones(3, jnp.bfloat16) + 1.0).dtype == bf16
    assert (1.0 + jnp.ones(3, jnp.bfloat16)).dtype == bf16
    assert (jnp.int8(1) + 1).dtype == I8
    assert (2 * jnp.ones(2, jnp.uint8)).dtype == U8
    assert (jnp.ones(2, jnp.float16) * 2).dtype == F16
    assert (jnp.arange(3) / 2).dtype == F32
    assert (jnp.arange(3, dtype=jnp.int8) + 1.5).dtype == F32
    assert (jnp.ones(2, jnp.float16) + 1j).dtype == C64
    assert jnp.array(1.0).dtype == F32 and jnp.arange(3).dtype == I32
    w = jnp.array(1.0) + 2
    assert w.dtype == F32 and w.weak_type
    check(3 - jnp.arange(3), [3, 2, 1], I32)
    check(2 ** jnp.arange(4), [1, 2, 4, 8], I32)
    check(1 / jnp.array([2.0, 4.0]), [0.5, 0.25], F32)
    check(7 // jnp.array([2, 3]), [3, 2], I32)
    check(7 % jnp.array([2, -3]), [1, -2], I32)
    check(True & jnp.array([True, False]), [True, False], B)
    check(1 << jnp.array([1, 2], jnp.uint8), [2, 4], U8)


def test_numpy_scalar_operands():
    x = jnp.arange(3, dtype=jnp.float32)
    out = np.float32(2) * x
    assert isinstance(out, pyjax.Array)
    check(out, [0, 2, 4], F32)
    check(x + np.float16(1), [1, 2, 3], F32)
    check(jnp.ones(2, jnp.float16) + np.float32(1), [2, 2], F32)  # numpy scalars are strong


def test_unary_operators():
    x = jnp.array([-2, 0, 3], jnp.int8)
    check(-x, [2, 0, -3], I8)
    check(+x, [-2, 0, 3], I8)
    check(abs(x), [2, 0, 3], I8)
    check(~x, [1, -1, -4], I8)
    check(~jnp.array([True, False]), [False, True], B)
    check(abs(jnp.array([3 + 4j])), [5.0], F32)
    r = round(jnp.array([1.5, 2.5, 2.567]))
    check(r, [2, 2, 3], F32)
    check(round(jnp.array([2.567]), 2), [2.57], F32)
    with pytest.raises(TypeError):
        -jnp.array([True])


def test_divmod_and_matmul():
    q, r = divmod(jnp.array([7, -7]), 3)
    check(q, [2, -3], I32)
    check(r, [1, 2], I32)
    q, r = divmod(7, jnp.array([2, -2]))
    check(q, [3, -4], I32)
    check(r, [1, -1], I32)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(12, dtype=np.float32).reshape(3, 4)
    check(jnp.asarray(a) @ jnp.asarray(b), a @ b, F32)
    check(a @ jnp.asarray(b), a @ b, F32)
    check(jnp.asarray(a) @ b, a @ b, F32)


def test_unsupported_operands():
    x = jnp.arange(3)
    for bad in ([1, 2, 3], (1,), {"a": 1}):
        with pytest.raises(TypeError):
            x + bad
        with pytest.raises(TypeError):
            x == bad
    with pytest.raises(TypeError):
        x + "a"
    with pytest.raises(TypeError):
        "a" + x
    with pytest.raises(TypeError):
        x + None
    assert (x == None) is False  # noqa: E711 - NotImplemented falls back to identity
    assert (x != object()) is True
    with pytest.raises(TypeError):
        hash(x)
    with pytest.raises(TypeError):
        {x: 1}
    with pytest.raises(TypeError):
        hash(jnp.array(1.0) == 1.0)


def test_comparison_returns_array():
    x = jnp.arange(4)
    eq = x == 2
    assert isinstance(eq, pyjax.Array) and eq.dtype == B
    check(eq, [False, False, True, False], B)
    check(2 < x, [False, False, False, True], B)
    check(x >= 1.5, [False, False, True, True], B)
    assert bool(jnp.array(3) == 3)


# ---- properties ----

def test_properties():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = jnp.asarray(a)
    check(x.T, a.T, F32)
    check(x.mT, np.swapaxes(a, -1, -2), F32)
    c = jnp.array([1 + 2j, 3 - 4j], jnp.complex64)
    check(c.real, [1, 3], F32)
    check(c.imag, [2, -4], F32)
    check(x.real, a, F32)
    check(x.imag, np.zeros_like(a), F32)
    check(jnp.arange(3).T, [0, 1, 2], I32)
    with pytest.raises(ValueError):
        jnp.arange(3).mT
    assert x.itemsize == 4 and x.nbytes == 96


# ---- methods ----

def test_reshape_transpose_ravel():
    a = np.arange(6)
    x = jnp.asarray(a)
    check(x.reshape(2, 3), a.reshape(2, 3), I32)
    check(x.reshape((3, 2)), a.reshape((3, 2)), I32)
    check(x.reshape([3, -1]), a.reshape(3, -1), I32)
    check(x.reshape(-1), a, I32)
    check(x.reshape(2, 3, order="F"), a.reshape(2, 3, order="F"), I32)
    m = a.reshape(2, 3)
    y = jnp.asarray(m)
    check(y.transpose(), m.T, I32)
    check(y.transpose(1, 0), m.T, I32)
    check(y.transpose((1, 0)), m.T, I32)
    check(y.ravel(), a, I32)
    check(y.flatten(), a, I32)
    check(y.swapaxes(0, 1), m.T, I32)
    check(y.reshape(1, 2, 3).squeeze(), m, I32)
    check(y.reshape(1, 2, 3).squeeze(0), m, I32)
    with pytest.raises((ValueError, TypeError)):
        x.reshape(4, 2)


def test_reductions_methods():
    a = np.arange(1, 13, dtype=np.float32).reshape(3, 4)
    x = jnp.asarray(a)
    check(x.sum(), a.sum(), F32)
    check(x.sum(axis=0), a.sum(axis=0), F32)
    check(x.sum(1, keepdims=True), a.sum(1, keepdims=True), F32)
    check(x.mean(), a.mean(), F32)
    check(x.max(axis=1), a.max(axis=1), F32)
    check(x.min(), a.min(), F32)
    check(x.prod(axis=0), a.prod(axis=0), F32, rtol=1e-5)
    check(x.argmax(), a.argmax(), I32)
    check(x.argmin(axis=0), a.argmin(axis=0), I32)
    check(x.std(), a.std(), F32, rtol=1e-5)
    check(x.var(axis=1, ddof=1), a.var(axis=1, ddof=1), F32, rtol=1e-5)
    check(x.cumsum(), a.cumsum(), F32)
    check(x.cumprod(axis=1), a.cumprod(axis=1), F32, rtol=1e-5)
    check(x.ptp(), np.ptp(a), F32)
    check((x > 5).all(), (a > 5).all(), B)
    check((x > 5).any(axis=0), (a > 5).any(axis=0), B)
    check(x.trace(), a.trace(), F32)
    check(x.diagonal(1), a.diagonal(1), F32)


def test_other_methods():
    a = np.array([3.7, -1.2, 5.5, 0.4], np.float32)
    x = jnp.asarray(a)
    check(x.astype(jnp.int32), a.astype(np.int32), I32)
    check(x.astype(jnp.bfloat16), a.astype(bf16).astype(np.float32), bf16, rtol=1e-2)
    check(x.clip(0, 4), a.clip(0, 4), F32)
    check(x.clip(max=1), a.clip(None, 1), F32)
    check(x.round(), np.round(a), F32)
    check(x.round(1), np.round(a, 1), F32)
    check(x.conj(), a, F32)
    check(x.conjugate(), a, F32)
    check(jnp.array([1 + 1j]).conj(), [1 - 1j], C64)
    check(x.dot(x), a.dot(a), F32, rtol=1e-5)
    check(x.sort(), np.sort(a), F32)
    check(x.argsort(), np.argsort(a), I32)
    check(x.take(np.array([2, 0])), a.take([2, 0]), F32)
    check(x.repeat(2), a.repeat(2), F32)
    (nz,) = jnp.array([0, 3, 0, 4]).nonzero()
    check(nz, [1, 3], I32)
    c = x.copy()
    assert c is not x
    check(c, a, F32)
    check(x[1], a[1], F32)
    check(x[1:3], a[1:3], F32)
    check(x.at[0].set(10.0), np.array([10.0, -1.2, 5.5, 0.4]), F32)
    assert x.item(2) == pytest.approx(5.5) and x.tolist()[0] == pytest.approx(3.7)
    assert jnp.arange(3).__array_namespace__() is jnp


def test_view():
    x = jnp.array([1.0, -2.0], jnp.float32)
    check(x.view(jnp.int32), np.array([1.0, -2.0], np.float32).view(np.int32), I32)
    check(x.view(jnp.uint32), np.array([1.0, -2.0], np.float32).view(np.uint32),
          np.uint32)
    check(x.view(jnp.float32), [1.0, -2.0], F32)
    h = np.arange(4, dtype=np.int16)
    check(jnp.asarray(h).view(jnp.float16), h.view(np.float16), F16)
    check(jnp.asarray(h).view(jnp.int8), h.view(np.int8), I8)
    b = np.arange(8, dtype=np.uint8)
    check(jnp.asarray(b).view(jnp.int16), b.view(np.int16), np.int16)
    check(jnp.array([True, False]).view(jnp.uint8), [1, 0], U8)
    check(jnp.array([1, 0], jnp.uint8).view(jnp.bool_), [True, False], B)
    with pytest.raises(ValueError):
        jnp.array(1.0).view(jnp.int16)


# ---- under jit: the same methods on tracers ----

def test_operators_and_methods_under_jit():
    def f(x, y):
        assert isinstance(x, Tracer)
        return (x + y, y - x, x * 2, 2 / x, x // 2, x % 2, x ** 2, 2 ** x, -x, abs(x), x @ y.T,
                x == y, x < 2, x.sum(axis=0), x.mean(), x.reshape(-1), x.T, x.astype(jnp.int32),
                x.clip(0, 2), x[0], x.at[0, 0].set(9.0), x.real, divmod(x, 2)[1])
    a = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    b = np.array([[0.5, 2.0], [1.0, -1.0]], np.float32)
    outs = pyjax.jit(f)(a, b)
    refs = (a + b, b - a, a * 2, 2 / a, a // 2, a % 2, a ** 2, 2 ** a, -a, abs(a), a @ b.T,
            a == b, a < 2, a.sum(0), a.mean(), a.reshape(-1), a.T, a.astype(np.int32),
            a.clip(0, 2), a[0], np.array([[9.0, 2.0], [3.0, 4.0]]), a, a % 2)
    assert len(outs) == len(refs)
    for o, r in zip(outs, refs):
        assert isinstance(o, ArrayImpl)
        np.testing.assert_allclose(np.asarray(o), r, rtol=1e-6)


def test_tracers_are_unhashable_and_bool_raises():
    def f(x):
        with pytest.raises(TypeError):
            hash(x)
        with pytest.raises(TypeError):
            x + [1]
        with pytest.raises(TypeError):
            bool(x > 0)
        return x * 2
    check(pyjax.jit(f)(jnp.float32(1.0)), 2.0, F32)


def test_weak_types_inside_jit():
    def f(x):
        return x + 1.0, x * 2, x.astype(jnp.float16) + 1
    o1, o2, o3 = pyjax.jit(f)(jnp.ones(2, jnp.bfloat16))
    assert o1.dtype == bf16 and o2.dtype == bf16 and o3.dtype == F16


@pytest.mark.parametrize("x64", [False, True])
def test_scalar_operator_fast_path_matches_jnp(x64):
    # x + 1.0 on an eager array binds the primitive directly; results (values, dtype, weak
    # type) must be those of jnp.add/subtract/multiply
    import operator
    import ml_dtypes
    pyjax.config.update("jax_enable_x64", x64)
    ops = [(operator.add, jnp.add), (operator.sub, jnp.subtract), (operator.mul, jnp.multiply),
           (operator.truediv, jnp.true_divide)]
    for dt in [np.float16, np.float32, np.float64, ml_dtypes.bfloat16, np.int32, np.complex64]:
        for x in (jnp.asarray(np.array([1.5, -2.0, 0.0, np.inf]).astype(dt)), jnp.asarray(2.5)):
            big = x64 and dt != np.int32  # else 2**40 overflows (an error on both paths)
            others = [1.0, 3, -0.0, float("nan"), 16777217, -7, 0] + ([2 ** 40] if big else [])
            for other in others:
                for op, ref in ops:
                    for got, want in ((op(x, other), ref(x, other)), (op(other, x), ref(other, x))):
                        assert got.dtype == want.dtype
                        assert got.aval.weak_type == want.aval.weak_type
                        g, w = np.asarray(got), np.asarray(want)
                        assert ((g == w) | (np.isnan(g) & np.isnan(w))).all(), (g, w)
                        if g.dtype.kind == "f":  # the sign of zero too (-0.0 is not 0.0)
                            assert (np.signbit(g) == np.signbit(w)).all(), (op, other, g, w)


@pytest.mark.parametrize("x64", [False, True])
def test_comparison_operator_fast_path_matches_jnp_and_numpy(x64):
    # x > 0 on an eager array binds lax.gt directly (zeros included: a comparison cannot
    # tell -0.0 from 0.0); results must be jnp.greater's, and NumPy's where the scalar is
    # exact in the array's dtype
    import operator
    import ml_dtypes
    pyjax.config.update("jax_enable_x64", x64)
    ops = [(operator.eq, jnp.equal, np.equal), (operator.ne, jnp.not_equal, np.not_equal),
           (operator.lt, jnp.less, np.less), (operator.le, jnp.less_equal, np.less_equal),
           (operator.gt, jnp.greater, np.greater), (operator.ge, jnp.greater_equal, np.greater_equal)]
    vals = np.array([1.5, -2.0, 0.0, -0.0, np.inf, np.nan, 3.0])
    others = [0, 0.0, -0.0, 1.0, 3, -7, 0.5, float("nan"), float("inf"), 16777217, True]
    dts = ([np.float64, np.int64] if x64 else
           [np.float16, np.float32, ml_dtypes.bfloat16, np.int32, np.uint8, np.complex64, np.bool_])
    for dt in dts:
        with np.errstate(invalid="ignore"):
            host = vals.astype(dt)
        x = jnp.asarray(host)
        for other in others:  # every comparison on float32; on other dtypes < and ==
            for op, ref, npref in (ops if dt == np.float32 else ops[::2][:2]):
                for swap in (False, True):
                    args = (other, x) if swap else (x, other)
                    try:
                        want = ref(*args)
                    except (OverflowError, TypeError) as e:
                        with pytest.raises(type(e)):
                            op(*args)
                        continue
                    got = op(*args)
                    assert got.dtype == np.bool_ and got.shape == want.shape
                    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
                    if type(other) is bool or host.dtype.kind not in "fiu":
                        continue
                    try:
                        with np.errstate(over="ignore", invalid="ignore"):
                            s = host.dtype.type(other)
                    except (ValueError, OverflowError):
                        continue
                    if s == other or (other != other and s != s):  # exact in the dtype
                        a = (s, host) if swap else (host, s)
                        with np.errstate(invalid="ignore"):
                            np.testing.assert_array_equal(np.asarray(got), npref(*a))
    y = jnp.asarray(vals.astype(np.float32))
    for op, ref, npref in ops:  # two arrays of one aval
        np.testing.assert_array_equal(np.asarray(op(y, y * 1.0)), npref(vals, vals).astype(bool))
    assert (x := jnp.asarray([-0.0, 0.0])) is not None and bool((x == 0).all())
    assert not bool((x < -0.0).any()) and bool((x <= -0.0).all())


def test_array_operator_fast_path_matches_jnp():
    # two eager arrays of one dtype and shape bind the primitive directly where jnp would;
    # elsewhere (bool +, int /, broadcasting, mixed dtypes or weak types) the general path runs
    import operator
    ops = [(operator.add, jnp.add), (operator.sub, jnp.subtract), (operator.mul, jnp.multiply),
           (operator.truediv, jnp.true_divide)]
    vals = np.array([[1.5, -2.0], [0.0, 3.0]])
    arrays = [jnp.asarray(vals.astype(dt)) for dt in (np.float32, np.int32, np.complex64)]
    arrays += [jnp.asarray(vals[0].astype(np.float32)), jnp.asarray(vals > 0),
               pyjax.lax.convert_element_type(jnp.asarray(vals, np.float32), np.float32),
               jnp.asarray(vals.astype(np.float32)) * 1.0]  # same aval, a different object
    weak = jnp.asarray(2.0) + 0.5  # a weakly typed f32[]
    arrays.append(weak)
    for x in arrays:
        for y in arrays:
            for op, ref in ops:
                if x.dtype == bool and y.dtype == bool and op is operator.sub:
                    with pytest.raises(TypeError):
                        op(x, y)
                    continue
                got, want = op(x, y), ref(x, y)
                assert got.dtype == want.dtype and got.shape == want.shape
                assert got.aval.weak_type == want.aval.weak_type
                g, w = np.asarray(got), np.asarray(want)
                assert ((g == w) | (np.isnan(g) & np.isnan(w))).all(), (op, x, y, g, w)
    b = jnp.asarray([True, False])
    np.testing.assert_array_equal(b + b, [True, False])  # logical or, as jnp.add
    np.testing.assert_array_equal(jnp.asarray([3, 4]) / jnp.asarray([2, 2]), [1.5, 2.0])


def test_operator_fast_path_keeps_the_sign_of_zero():
    x = jnp.asarray([1.0, -1.0])
    np.testing.assert_array_equal(np.signbit(x * -0.0), [True, False])
    np.testing.assert_array_equal(np.signbit(x * 0.0), [False, True])
    z = -x * 0.0  # [-0.0, 0.0]
    np.testing.assert_array_equal(np.signbit(z + -0.0), np.signbit(np.array([-0.0, 0.0]) - 0.0))
    np.testing.assert_array_equal(np.signbit(z + 0.0), [False, False])


def test_operator_fast_path_under_tracing_and_devices():
    # the same operators on a concrete array inside jit/grad/vmap are staged, not run eagerly
    c = jnp.arange(3.0)
    f = pyjax.jit(lambda a: (c + 1.0) * a + c * c)
    np.testing.assert_allclose(f(jnp.ones(3)), np.arange(3.0) + 1 + np.arange(3.0) ** 2)
    assert "add" in str(pyjax.make_jaxpr(lambda a: c + 1.0 + a)(1.0))
    g = pyjax.grad(lambda a: jnp.sum((a * 2.0 - 1.0) / 4.0 * a))(jnp.ones(3))
    np.testing.assert_allclose(g, (4 * np.ones(3) - 1) / 4)
    np.testing.assert_allclose(pyjax.vmap(lambda a: a * a - a)(c), np.arange(3.0) ** 2 - np.arange(3.0))
    devs = pyjax.devices()
    if len(devs) > 1:  # committed to another device: the result stays there, committed
        d = pyjax.device_put(jnp.ones(2), devs[1])
        for r in (d + 1.0, 2.0 * d, d - d, jnp.sin(d)):
            assert r.devices() == {devs[1]} and r.committed
        with pytest.raises(ValueError, match="incompatible devices"):
            d + pyjax.device_put(jnp.ones(2), devs[0])
