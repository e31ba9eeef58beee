"""Large float dots of CPU programs on the host's BLAS (lax/dot_host.py): which dots go there,
their values against NumPy in float64 and against XLA's dot, gradients, vmap, loops, and the
``pyjax_host_dot`` flag. The threshold is lowered so that small shapes take the host path."""
import numpy as np
import pytest

import pyjax
import pyjax.lax as lax
import pyjax.numpy as jnp
from pyjax._src.lax import blas_threads, dot_host
from pyjax.test_util import check_grads

RNG = np.random.default_rng(7)


@pytest.fixture
def small_threshold(monkeypatch):
    monkeypatch.setattr(dot_host, "HOST_DOT_MIN_FLOPS", 64)


@pytest.fixture
def host_dot_flag():
    old = pyjax.config.pyjax_host_dot
    yield
    pyjax.config.update("pyjax_host_dot", old)


def _text(f, *args):
    return pyjax.jit(f).lower(*args).as_text()


def _on_host(f, *args):
    text = _text(f, *args)
    return "pyjax_host_callback" in text and "stablehlo.dot_general" not in text


def _ref(lhs, rhs, dims):
    """dot_general in float64 by einsum."""
    (lc, rc), (lb, rb) = dims
    letters = iter("abcdefghijklmnop")
    ls = [next(letters) for _ in range(lhs.ndim)]
    rs = [None] * rhs.ndim
    for l, r in zip(lb, rb):
        rs[r] = ls[l]
    for l, r in zip(lc, rc):
        rs[r] = ls[l]
    rs = [c or next(letters) for c in rs]
    out = ([ls[d] for d in lb] + [ls[d] for d in range(lhs.ndim) if d not in lb + lc]
           + [rs[d] for d in range(rhs.ndim) if d not in rb + rc])
    return np.einsum(f"{''.join(ls)},{''.join(rs)}->{''.join(out)}", lhs, rhs)


# (lhs shape, rhs shape, ((lc, rc), (lb, rb))): every operand layout the host path serves
ROUTED = [
    ((6, 5), (5, 7), (((1,), (0,)), ((), ()))),            # x @ w
    ((6, 5), (7, 5), (((1,), (1,)), ((), ()))),            # x @ w.T (backprop's input grad)
    ((5, 6), (5, 7), (((0,), (0,)), ((), ()))),            # x.T @ w (weight grad)
    ((5, 6), (7, 5), (((0,), (1,)), ((), ()))),            # x.T @ w.T
    ((3, 6, 5), (3, 5, 7), (((2,), (1,)), ((0,), (0,)))),  # batched
    ((2, 3, 5, 6), (2, 3, 7, 5), (((2,), (3,)), ((0, 1), (0, 1)))),  # two batch dims, TT
    ((2, 4, 5), (5, 7), (((2,), (0,)), ((), ()))),         # free dims merged (sequence @ w)
    ((6, 2, 3), (2, 3, 7), (((1, 2), (0, 1)), ((), ()))),  # contracting dims merged
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_routed_dots_match_numpy(small_threshold, x64, dtype):
    args, cases = [], []
    for ls, rs, dims in ROUTED:
        lhs, rhs = RNG.normal(size=ls).astype(dtype), RNG.normal(size=rs).astype(dtype)
        args += [lhs, rhs]
        cases.append(dims)
        assert _on_host(lambda a, b, d=dims: lax.dot_general(a, b, d), lhs, rhs), dims

    def together(*flat):
        return [lax.dot_general(flat[2 * i], flat[2 * i + 1], d) for i, d in enumerate(cases)]
    outs = pyjax.jit(together)(*args)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for i, (out, dims) in enumerate(zip(outs, cases)):
        assert out.dtype == dtype
        np.testing.assert_allclose(np.asarray(out), _ref(args[2 * i].astype(np.float64),
                                                         args[2 * i + 1].astype(np.float64),
                                                         dims), rtol=tol, atol=tol)


@pytest.mark.parametrize("case", [
    (np.complex64, (6, 5), (5, 7), (((1,), (0,)), ((), ())), None),
    (np.int32, (6, 5), (5, 7), (((1,), (0,)), ((), ())), None),
    ("bfloat16", (6, 5), (5, 7), (((1,), (0,)), ((), ())), None),
    (np.float32, (6, 5), (5, 7), (((1,), (0,)), ((), ())), np.float64),  # widened result
    (np.float32, (6, 3, 5), (3, 5, 7), (((2,), (1,)), ((1,), (0,))), None),  # batch not first
    (np.float32, (6, 5, 4), (5, 7, 4), (((1,), (0,)), ((), ())), None),  # contracting inside
    (np.float32, (6, 5, 4), (4, 5, 7), (((1, 2), (1, 0)), ((), ())), None),  # pairs crossed
])
def test_unserved_dots_stay_xla(small_threshold, x64, case):
    dtype, ls, rs, dims, pref = case
    dtype = pyjax.numpy.dtype(dtype)
    lhs = RNG.integers(-3, 4, ls).astype(dtype)
    rhs = RNG.integers(-3, 4, rs).astype(dtype)
    f = lambda a, b: lax.dot_general(a, b, dims, preferred_element_type=pref)
    assert "stablehlo.dot_general" in _text(f, lhs, rhs)
    wide = np.complex128 if dtype.kind == "c" else np.float64
    expected = _ref(lhs.astype(wide), rhs.astype(wide), dims)
    np.testing.assert_allclose(np.asarray(pyjax.jit(f)(lhs, rhs)).astype(wide), expected,
                               rtol=1e-2)


def test_threshold_and_flag(host_dot_flag):
    """At the default threshold the MLP's 128x512 @ (512x512)^T goes to the host and a
    32x64 @ 64x64 stays XLA's; the flag turns the host path off and drops compiled programs
    (the same jitted function recompiles and equals the host result to float32 rounding)."""
    x = RNG.normal(size=(128, 512)).astype(np.float32)
    w = RNG.normal(size=(512, 512)).astype(np.float32)
    f = pyjax.jit(lambda x, w: x @ w.T)
    pyjax.config.update("pyjax_host_dot", True)
    assert _on_host(lambda x, w: x @ w.T, x, w)
    assert not _on_host(lambda x, w: x @ w.T, x[:32, :64], w[:64, :64])
    host = np.asarray(f(x, w))
    pyjax.config.update("pyjax_host_dot", False)
    assert not _on_host(lambda x, w: x @ w.T, x, w)
    xla = np.asarray(f(x, w))
    np.testing.assert_allclose(host, xla, rtol=2e-5, atol=2e-4)
    np.testing.assert_allclose(host, x.astype(np.float64) @ w.T.astype(np.float64),
                               rtol=2e-5, atol=2e-4)


def test_grads_vmap_and_loops(small_threshold, x64):
    """Reverse- and forward-mode derivatives (every dot of them on the host), vmap against a
    Python loop, and host dots inside a scan body."""
    x = RNG.normal(size=(6, 5))
    w = RNG.normal(size=(7, 5))
    f = lambda x, w: jnp.sum(jnp.tanh(x @ w.T) ** 2)
    assert _on_host(pyjax.grad(f, argnums=(0, 1)), x, w)
    check_grads(f, (x, w), order=2, modes=("fwd", "rev"))

    xs = RNG.normal(size=(4, 6, 5))
    got = pyjax.jit(pyjax.vmap(lambda x: x @ w.T))(xs)
    np.testing.assert_allclose(np.asarray(got), np.stack([a @ w.T for a in xs]), rtol=1e-12)

    def scan(w, xs):
        def body(c, x):
            c = jnp.tanh(c @ w + x)
            return c, c
        return lax.scan(body, jnp.zeros((6, 5)), xs)[1]
    w2 = RNG.normal(size=(5, 5))
    xs2 = RNG.normal(size=(3, 6, 5))
    assert "pyjax_host_callback" in _text(scan, w2, xs2)
    c, ref = np.zeros((6, 5)), []
    for x_t in xs2:
        c = np.tanh(c @ w2 + x_t)
        ref.append(c)
    np.testing.assert_allclose(np.asarray(pyjax.jit(scan)(w2, xs2)), np.stack(ref),
                               rtol=1e-12)
    check_grads(lambda w: jnp.sum(scan(w, xs2)), (w2,), order=1, modes=("rev",))


def test_blas_thread_count_restored():
    before = blas_threads.get_num_threads()
    assert before, "NumPy's OpenBLAS was not found in /proc/self/maps"
    with blas_threads.single_threaded():
        assert all(n == 1 for n in blas_threads.get_num_threads())
        with blas_threads.single_threaded():
            assert all(n == 1 for n in blas_threads.get_num_threads())
        assert all(n == 1 for n in blas_threads.get_num_threads())
    assert blas_threads.get_num_threads() == before
