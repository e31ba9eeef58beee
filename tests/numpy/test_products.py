"""pyjax.numpy products (matmul, dot, einsum, ...) eagerly and under jit, against NumPy and
NumPy's einsum."""
import ml_dtypes
import numpy as np
import pytest

import pyjax
from pyjax._src.test_util import rand_small_ints
import pyjax.numpy as jnp
from pyjax._src.core import dtypes

BF16 = np.dtype(ml_dtypes.bfloat16)


def rand(shape, dtype, seed=0):
    return rand_small_ints(shape, dtype, seed, lo=-3, hi=4)


def assert_close(got, want, dtype=None, rtol=1e-5):
    assert isinstance(got, pyjax.Array), type(got)
    want = np.asarray(want)
    dtype = np.dtype(dtype) if dtype is not None else dtypes.canonicalize_dtype(want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == dtype, (got.dtype, dtype)
    g = np.asarray(got)
    if dtype == BF16:
        g, want = g.astype(np.float32), want.astype(np.float32)
    if g.dtype == np.bool_ or np.issubdtype(g.dtype, np.integer):
        np.testing.assert_array_equal(g, want.astype(g.dtype))
    else:
        np.testing.assert_allclose(g, want, rtol=rtol, atol=1e-5)


def np_ref(x):
    """NumPy reference input: bf16 computed in float32."""
    return x.astype(np.float32) if x.dtype == BF16 else x


# ---- matmul ----

MATMUL_SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
    ((3,), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)), ((2, 1, 2, 3), (5, 3, 4)),
    ((1, 2, 3), (6, 1, 3, 2)), ((2, 0), (0, 3)), ((0, 2, 3), (3, 1)),
]


def test_matmul_shapes():
    args = [(rand(a, np.float32, i), rand(b, np.float32, i + 50))
            for i, (a, b) in enumerate(MATMUL_SHAPES)]
    flat = [x for pair in args for x in pair]

    def f(*xs):
        return [jnp.matmul(xs[2 * i], xs[2 * i + 1]) for i in range(len(args))]
    for g, (a, b) in zip(pyjax.jit(f)(*flat), args):
        assert_close(g, np.matmul(a, b))
    for i in (1, 4, 7):  # eagerly
        assert_close(jnp.matmul(*args[i]), np.matmul(*args[i]))


@pytest.mark.parametrize("da,db,out_dt", [
    (np.int8, np.int8, np.int8), (np.bool_, np.bool_, np.bool_), (np.uint8, np.int8, np.int16),
    (np.int8, np.float32, np.float32), (BF16, BF16, BF16), (np.complex64, np.float32,
                                                            np.complex64),
    (np.int32, np.int32, np.int32)], ids=lambda d: np.dtype(d).name)
def test_matmul_dtypes(da, db, out_dt):
    a, b = rand((2, 3, 4), da, 1), rand((4, 5), db, 2)
    out = pyjax.jit(jnp.matmul)(a, b)
    ref_dt = {np.dtype(np.bool_): np.bool_, np.dtype(np.complex64): np.complex128}.get(
        np.dtype(out_dt), np.float64)
    want = np.matmul(np_ref(a).astype(ref_dt), np_ref(b).astype(ref_dt))
    assert_close(out, np.asarray(want).astype(out_dt) if out_dt != BF16 else want, out_dt,
                 rtol=1e-2 if out_dt == BF16 else 1e-5)


def test_matmul_is_one_dot_general_without_broadcast():
    jaxpr = pyjax.make_jaxpr(jnp.matmul)(np.zeros((2, 1, 4, 3), np.float32),
                                         np.zeros((5, 3, 6), np.float32))
    names = [e.primitive.name for e in jaxpr.jaxpr.eqns]
    assert names.count("dot_general") == 1
    assert "broadcast_in_dim" not in names


def test_matmul_errors_and_preferred_type():
    a = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match="matmul operand 0 must have ndim at least 1"):
        jnp.matmul(np.float32(1), a)
    with pytest.raises(ValueError, match="contracting dimensions must match"):
        jnp.matmul(a, a)
    with pytest.raises(ValueError, match="Incompatible shapes for matmul arguments"):
        jnp.matmul(np.ones((2, 2, 3)), np.ones((3, 3, 2)))
    with pytest.raises(TypeError, match="requires ndarray or scalar"):
        jnp.matmul([[1.0]], a)
    i8 = rand((2, 3), np.int8)
    out = jnp.matmul(i8, i8.T, preferred_element_type=np.int32)
    assert_close(out, i8.astype(np.int32) @ i8.T.astype(np.int32), np.int32)


# ---- dot, vdot, vecdot, inner, outer, tensordot, kron, cross ----

def test_dot_family():
    a2, b2 = rand((3, 4), np.float32, 1), rand((4, 2), np.float32, 2)
    a3, b3 = rand((2, 3, 4), np.float32, 3), rand((5, 4, 6), np.float32, 4)
    v, w = rand((4,), np.float32, 5), rand((4,), np.float32, 6)
    c1, c2 = rand((2, 3), np.complex64, 7), rand((2, 3), np.complex64, 8)
    s = np.float32(2.5)

    def f(a2, b2, a3, b3, v, w, c1, c2, s):
        return (jnp.dot(a2, b2), jnp.dot(a3, b3), jnp.dot(a2, v), jnp.dot(v, w), jnp.dot(s, a2),
                jnp.vdot(c1, c2), jnp.vdot(a2, a2), jnp.vecdot(c1, c2),
                jnp.vecdot(a3, v), jnp.vecdot(c1, c2, axis=0), jnp.inner(a2, a3),
                jnp.inner(v, w), jnp.inner(s, v), jnp.outer(a2, v), jnp.outer(v, c1),
                jnp.matvec(a3, v), jnp.vecmat(v, b3))
    want = (np.dot(a2, b2), np.dot(a3, b3), np.dot(a2, v), np.dot(v, w), np.dot(s, a2),
            np.vdot(c1, c2), np.vdot(a2, a2), np.vecdot(c1, c2), np.vecdot(a3, v),
            np.vecdot(c1, c2, axis=0), np.inner(a2, a3), np.inner(v, w), np.inner(s, v),
            np.outer(a2, v), np.outer(v, c1), np.matvec(a3, v), np.vecmat(v, b3))
    args = (a2, b2, a3, b3, v, w, c1, c2, s)
    for g, ww in zip(pyjax.jit(f)(*args), want):
        assert_close(g, ww)
    # eagerly: one call of each function
    assert_close(jnp.dot(a2, b2), want[0])
    assert_close(jnp.vdot(c1, c2), want[5])
    assert_close(jnp.vecdot(c1, c2), want[7])
    assert_close(jnp.inner(v, w), want[11])
    assert_close(jnp.outer(a2, v), want[13])


def test_dot_family_errors():
    a = np.ones((2, 3), np.float32)
    with pytest.raises(TypeError, match="not aligned"):  # JAX's type
        jnp.dot(a, a)
    with pytest.raises(ValueError, match="same number of elements"):
        jnp.vdot(a, np.ones(5))
    with pytest.raises(ValueError, match="last dimensions must match"):
        jnp.inner(a, np.ones((3, 2)))
    with pytest.raises(ValueError, match="axes must have equal sizes"):
        jnp.vecdot(a, np.ones((2, 4)))


def test_tensordot():
    a, b = rand((2, 3, 4), np.int8, 1), rand((3, 4, 5), np.int8, 2)
    c = rand((4, 2), np.float32, 3)

    def f(a, b, c):
        return (jnp.tensordot(a, b), jnp.tensordot(a, b, ([1, 2], [0, 1])),
                jnp.tensordot(a, c, axes=([2, 0], [0, 1])), jnp.tensordot(a, b, 0),
                jnp.tensordot(a, c, axes=(-1, 0)))
    want = (np.tensordot(a, b), np.tensordot(a, b, ([1, 2], [0, 1])),
            np.tensordot(a, c, ([2, 0], [0, 1])), np.tensordot(a, b, 0),
            np.tensordot(a, c, (-1, 0)))
    for out in (pyjax.jit(f)(a, b, c),):
        assert_close(out[0], want[0].astype(np.int8), np.int8)  # int8 stays int8 (JAX)
        assert_close(out[1], want[1].astype(np.int8), np.int8)
        assert_close(out[2], want[2])
        assert_close(out[3], want[3].astype(np.int8), np.int8)
        assert_close(out[4], want[4])
    with pytest.raises(TypeError, match="exceeds input ranks"):
        jnp.tensordot(a, b, 4)
    with pytest.raises(TypeError, match="equal length"):
        jnp.tensordot(a, b, ([0, 1], [0]))
    with pytest.raises(ValueError, match="shape mismatch"):
        jnp.tensordot(a, b, ([0], [0]))
    with pytest.raises(TypeError, match="must be an int or a pair"):
        jnp.tensordot(a, b, "x")


def test_kron_cross():
    a, b = rand((2, 3), np.int32, 1), rand((3, 1, 2), np.int32, 2)
    u3, v3 = rand((4, 3), np.float32, 3), rand((3,), np.float32, 4)
    u2, v2 = rand((4, 2), np.float32, 5), rand((2,), np.float32, 6)
    m = rand((3, 4), np.float32, 7)

    def f(a, b, u3, v3, u2, v2, m):
        return (jnp.kron(a, b), jnp.kron(np.float32(2), a), jnp.cross(u3, v3),
                jnp.cross(u2, v2), jnp.cross(u3, v2), jnp.cross(m, u3, axisa=0))
    want = (np.kron(a, b), np.kron(np.float32(2), a), np.cross(u3, v3),
            u2[:, 0] * v2[1] - u2[:, 1] * v2[0],  # 2-vectors: the z component
            np.cross(u3, np.append(v2, 0)), np.cross(m, u3, axisa=0))
    for out in (pyjax.jit(f)(a, b, u3, v3, u2, v2, m),):
        for g, w in zip(out, want):
            assert_close(g, w)
    with pytest.raises(ValueError, match="dimension must be 2 or 3"):
        jnp.cross(np.ones(4), np.ones(4))


# ---- diagonal & trace ----

def test_diagonal_trace():
    x = rand((3, 4, 5), np.int8, 1)
    m = rand((4, 6), np.float32, 2)

    def f(x, m):
        return (jnp.diagonal(m), jnp.diagonal(m, 2), jnp.diagonal(m, -3), jnp.diagonal(m, 7),
                jnp.diagonal(x, 1, 0, 2), jnp.diagonal(x, -1, -1, 1), jnp.trace(m),
                jnp.trace(x, 1, 1, 2), jnp.trace(m, -2, dtype=np.int32), jnp.diag(m, 1))
    want = (np.diagonal(m), np.diagonal(m, 2), np.diagonal(m, -3), np.diagonal(m, 7),
            np.diagonal(x, 1, 0, 2), np.diagonal(x, -1, -1, 1), np.trace(m),
            np.trace(x, 1, 1, 2), np.trace(m, -2, dtype=np.int32), np.diag(m, 1))
    out = pyjax.jit(f)(x, m)
    for g, w in zip(out, want):
        assert_close(g, w)
    assert out[7].dtype == np.int32  # sum's promotion: int8 -> int32
    assert_close(jnp.diagonal(m, 2), want[1])  # eagerly
    assert_close(jnp.trace(m), want[6])
    with pytest.raises(ValueError, match="at least two dimensions"):
        jnp.diagonal(np.ones(3))
    with pytest.raises(ValueError, match="cannot be the same"):
        jnp.diagonal(m, 0, 1, -1)


# ---- einsum ----

EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ij->ji", [(2, 3)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iji->j", [(2, 3, 2)]),
    ("ij->", [(2, 3)]),
    ("i,i->", [(4,), (4,)]),
    ("i,j->ij", [(2,), (3,)]),
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (5, 3, 4)]),
    ("...ij,jk", [(2, 2, 3), (3, 4)]),
    ("i...->...", [(3, 2, 2)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ij,kl,jk->li", [(2, 3), (4, 5), (3, 4)]),
    ("abc,cd,ae->bde", [(2, 3, 4), (4, 5), (2, 6)]),
    ("ijk,jil->kl", [(2, 3, 4), (3, 2, 5)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]),
    ("ab,ab,ab->", [(2, 3), (2, 3), (2, 3)]),
    ("ij,i", [(1, 3), (4,)]),
    ("i,i,i", [(3,), (3,), (3,)]),
    ("iij,jk->ik", [(3, 3, 2), (2, 4)]),
    (" ij , jk -> ik ", [(2, 3), (3, 4)]),
]


def test_einsum_against_numpy():
    ops = [[rand(s, np.float32, 10 * i + j) for j, s in enumerate(shapes)]
           for i, (_, shapes) in enumerate(EINSUM_CASES)]

    def f(*flat):
        out, k = [], 0
        for (expr, shapes) in EINSUM_CASES:
            out.append(jnp.einsum(expr, *flat[k:k + len(shapes)]))
            k += len(shapes)
        return out
    flat = [x for xs in ops for x in xs]
    for g, (expr, _), xs in zip(pyjax.jit(f)(*flat), EINSUM_CASES, ops):
        assert_close(g, np.einsum(expr, *xs))
    for i in (0, 3, 10, 13):  # eagerly
        assert_close(jnp.einsum(EINSUM_CASES[i][0], *ops[i]), np.einsum(EINSUM_CASES[i][0],
                                                                        *ops[i]))


def test_einsum_dtypes_and_options():
    a, b = rand((2, 3), np.int8, 1), rand((3, 4), np.int8, 2)
    c = rand((3, 4), np.complex64, 3)
    bo = rand((3, 3), np.bool_, 4)

    def f(a, b, c, bo):
        return (jnp.einsum("ij,jk->ik", a, b), jnp.einsum("ij,jk->ik", a, c),
                jnp.einsum("ij,jk->ik", a, b, preferred_element_type=np.int32),
                jnp.einsum("ij,jk", bo, bo), jnp.einsum(a, [0, 1], b, [1, 2], [0, 2]),
                jnp.einsum(a, [Ellipsis, 1], a, [Ellipsis, 1], [Ellipsis]),
                jnp.einsum("ij,jk,kl", a, b, b.T, optimize=False),
                jnp.einsum("ii->", bo))
    out = pyjax.jit(f)(a, b, c, bo)
    assert_close(out[0], np.einsum("ij,jk->ik", a, b).astype(np.int8), np.int8)
    assert_close(out[1], np.einsum("ij,jk->ik", a, c))
    assert_close(out[2], np.einsum("ij,jk->ik", a.astype(np.int32), b), np.int32)
    assert_close(out[3], np.einsum("ij,jk", bo, bo))
    assert_close(out[4], np.einsum(a, [0, 1], b, [1, 2], [0, 2]).astype(np.int8), np.int8)
    assert_close(out[5], np.einsum(a, [Ellipsis, 1], a, [Ellipsis, 1], [Ellipsis]).astype(
        np.int8), np.int8)
    assert_close(out[6], np.einsum("ij,jk,kl", a, b, b.T).astype(np.int8), np.int8)
    assert_close(out[7], np.einsum("ii->", bo))
    path, _ = jnp.einsum_path("ij,jk,kl->il", a, b, b.T)
    assert path[0] == "einsum_path" and len(path) == 3


def test_einsum_errors():
    a = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match="operand subscripts given for 1 operands"):
        jnp.einsum("ij,jk->ik", a)
    with pytest.raises(ValueError, match="has 2 dimensions but its subscripts"):
        jnp.einsum("ijk->i", a)
    with pytest.raises(ValueError, match="size of label 'j'"):
        jnp.einsum("ij,jk->ik", a, a)
    with pytest.raises(ValueError, match="does not appear in the inputs"):
        jnp.einsum("ij->iz", a)
    with pytest.raises(ValueError, match="output subscript repeated"):
        jnp.einsum("ij->ii", a)
    with pytest.raises(ValueError, match="invalid subscript"):
        jnp.einsum("i1->i", a)
