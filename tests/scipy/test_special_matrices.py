"""``pyjax.scipy.linalg``'s special-matrix constructors against ``scipy.linalg``."""
import numpy as np
import pytest
import scipy.linalg as osp

import pyjax
import pyjax.scipy.linalg as jsl
from pyjax.test_util import check_grads

A = np.array
RNG = np.random.default_rng(3)
C = A([1, 2 + 1j, 1 + 2j, -3j])

# (name, pyjax call, scipy call): odd and even sizes, batches, complex and integer inputs
CASES = [
    ("toeplitz", lambda: jsl.toeplitz(A([1, 2, 3])), lambda: osp.toeplitz([1, 2, 3])),
    ("toeplitz-r", lambda: jsl.toeplitz(A([1, 2, 3]), A([9, 8, 7, 6])),
     lambda: osp.toeplitz([1, 2, 3], [9, 8, 7, 6])),
    ("toeplitz-complex", lambda: jsl.toeplitz(C.astype(np.complex64)),
     lambda: osp.toeplitz(C)),
    ("toeplitz-batch", lambda: jsl.toeplitz(A([[1, 2, 5], [3, 4, 6]]), A([0, 7])),
     lambda: osp.toeplitz([[1, 2, 5], [3, 4, 6]], [0, 7])),
    ("hankel", lambda: jsl.hankel(A([1, 2, 3]), A([9, 8, 7, 6])),
     lambda: osp.hankel([1, 2, 3], [9, 8, 7, 6])),
    ("hankel-zeros", lambda: jsl.hankel(A([1.5, 2, 3, 4])), lambda: osp.hankel([1.5, 2, 3, 4])),
    ("circulant", lambda: jsl.circulant(A([[1, 2, 3], [4, 5, 6]])),
     lambda: osp.circulant([[1, 2, 3], [4, 5, 6]])),
    ("companion", lambda: jsl.companion(A([2, 3, 4, 5])), lambda: osp.companion([2, 3, 4, 5])),
    ("companion-2", lambda: jsl.companion(A([2.0, 3.0])), lambda: osp.companion([2.0, 3.0])),
    ("fiedler", lambda: jsl.fiedler(A([1, 4, 12, 45, 77])),
     lambda: osp.fiedler([1, 4, 12, 45, 77])),
    ("leslie", lambda: jsl.leslie(A([0.1, 2.0, 1.0, 0.1]), A([0.2, 0.8, 0.7])),
     lambda: osp.leslie([0.1, 2.0, 1.0, 0.1], [0.2, 0.8, 0.7])),
    ("block_diag", lambda: jsl.block_diag(1, A([2, 3]), A([[4], [5]]), A([[6, 7], [8, 9]])),
     lambda: osp.block_diag(1, [2, 3], [[4], [5]], [[6, 7], [8, 9]])),
    ("block_diag-empty", lambda: jsl.block_diag(), lambda: osp.block_diag()),
    ("hadamard", lambda: jsl.hadamard(8), lambda: osp.hadamard(8)),
    ("hadamard-float", lambda: jsl.hadamard(4, np.float32),
     lambda: osp.hadamard(4, np.float32)),
    ("helmert", lambda: jsl.helmert(5), lambda: osp.helmert(5)),
    ("helmert-full", lambda: jsl.helmert(4, full=True), lambda: osp.helmert(4, full=True)),
    ("hilbert", lambda: jsl.hilbert(5), lambda: osp.hilbert(5)),
    ("invhilbert", lambda: jsl.invhilbert(6), lambda: osp.invhilbert(6)),
] + [(f"convolution_matrix-{mode}-{len(a)}-{n}",
      lambda a=a, n=n, mode=mode: jsl.convolution_matrix(A(a), n, mode),
      lambda a=a, n=n, mode=mode: osp.convolution_matrix(a, n, mode))
     for mode in ("full", "same", "valid") for a, n in [([1, 2, 3], 5), ([1, 2, 3, 4, 5, 6], 2),
                                                       ([1, 2, 3, 4], 4)]
] + [(f"fiedler_companion-{len(a)}", lambda a=a: jsl.fiedler_companion(A(a)),
      lambda a=a: osp.fiedler_companion(a))
     for a in ([2.0, 3.0], [2.0, 3, 4], [1.0, 2, 3, 4], [3.0, 1, 4, 1, 5], [1.0, 2, 3, 4, 5, 6, 7])
] + [(f"{f}-{kind}", lambda f=f, kind=kind: getattr(jsl, f)(6, kind),
      lambda f=f, kind=kind: getattr(osp, f)(6, kind or "symmetric"))
     for f in ("pascal", "invpascal") for kind in (None, "lower", "upper")
] + [(f"dft-{scale}", lambda scale=scale: jsl.dft(6, scale), lambda scale=scale: osp.dft(6, scale))
     for scale in (None, "sqrtn", "n")]


@pytest.mark.parametrize("name,ours,theirs", CASES, ids=[c[0] for c in CASES])
def test_against_scipy(name, ours, theirs):
    got, want = ours(), theirs()
    assert got.shape == want.shape, (got.shape, want.shape)
    if name.startswith(("pascal", "invpascal")):  # SciPy's exact integers; JAX's are floats
        assert got.dtype == np.float32
        np.testing.assert_array_equal(np.asarray(got), want.astype(np.float64))
    elif np.issubdtype(want.dtype, np.integer):  # integer inputs stay integer, as in JAX
        assert got.dtype == np.int32
        np.testing.assert_array_equal(np.asarray(got), want)
    else:
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-6)


def test_size_constructors_dtypes(x64):
    assert jsl.hilbert(3).dtype == np.float64
    assert jsl.dft(3).dtype == np.complex128
    assert jsl.dft(3, dtype=np.complex64).dtype == np.complex64
    np.testing.assert_allclose(np.asarray(jsl.invpascal(12)), osp.invpascal(12), rtol=1e-15)
    np.testing.assert_allclose(np.asarray(jsl.invhilbert(10)), osp.invhilbert(10), rtol=1e-15)


def test_grads_vmap_jit(x64):
    c, r = RNG.normal(size=4), RNG.normal(size=3)
    check_grads(jsl.toeplitz, (c, r), order=1)
    check_grads(jsl.hankel, (c, r), order=1)
    check_grads(jsl.companion, (A([2.0, 0.5, -1.0, 3.0]),), order=1)
    check_grads(lambda a: jsl.convolution_matrix(a, 3, "same"), (c,), order=1)
    batch = RNG.normal(size=(3, 4))
    got = pyjax.vmap(jsl.circulant)(batch)
    np.testing.assert_array_equal(np.asarray(got), np.stack([osp.circulant(b) for b in batch]))
    f = pyjax.jit(lambda a: jsl.fiedler_companion(a) @ jsl.leslie(a[1:], a[2:]))
    a = A([1.0, 2, 3, 4])
    np.testing.assert_allclose(np.asarray(f(a)),
                               osp.fiedler_companion(a) @ osp.leslie(a[1:], a[2:]), rtol=1e-12)


@pytest.mark.parametrize("call,err,match", [
    (lambda: jsl.hadamard(6), ValueError, "power of 2"),
    (lambda: jsl.dft(4, scale="ortho"), ValueError, "scale must be"),
    (lambda: jsl.pascal(3, kind="diag"), ValueError, "kind must be"),
    (lambda: jsl.convolution_matrix(A([1, 2]), 0), ValueError, "positive integer"),
    (lambda: jsl.convolution_matrix(A([1, 2]), 2, "circular"), ValueError, "'mode' argument"),
    (lambda: jsl.companion(A([0.0, 1.0, 2.0])), ValueError, "Leading coefficient is zero"),
    (lambda: jsl.companion(A([1.0])), ValueError, "at least 2"),
    (lambda: jsl.leslie(A([1.0, 2.0]), A([1.0, 2.0])), ValueError, "Incorrect lengths"),
    (lambda: jsl.block_diag(np.ones((2, 2, 2))), ValueError, "less than or equal to 2"),
    (lambda: jsl.toeplitz([1, 2]), TypeError, "requires ndarray or scalar"),
])
def test_errors(call, err, match):
    with pytest.raises(err, match=match):
        call()
