"""On the YNNPACK CPU build, products whose left operand is contracted on its leading
dimensions (weight gradients) are lowered with their transposes written out, so that YNNPACK
takes them instead of Eigen (lax/dot.py, ``_row_major_operands``); the values are the
products' own."""
import numpy as np
import pytest

import pyjax
from pyjax import lax
from pyjax._src import runtime

CASES = [  # (lhs shape, rhs shape, contracting dims): the forms the rewrite takes, and not
    ((128, 96), (128, 40), ((0,), (0,))),      # xᵀ·g, both transposed
    ((8, 16, 32), (8, 16, 24), ((0, 1), (0, 1))),  # 3-D activations, merged to 2-D
    ((32, 16), (24, 32), ((0,), (1,))),        # lhs transposed, rhs already minor
    ((32, 4, 5), (32, 6), ((0,), (0,))),        # N-D lhs, 2-D rhs: result reshaped back
    ((16, 32), (32, 24), ((1,), (0,))),         # a plain product: left as it is
    ((32, 16), (32,), ((0,), (0,))),            # a vector right operand: left as it is
]
REWRITTEN = [True, True, True, True, False, False]


@pytest.mark.parametrize("case, rewritten", list(zip(CASES, REWRITTEN)))
def test_values_match_numpy_and_the_rewrite_applies_on_the_ynnpack_build(case, rewritten):
    a_shape, b_shape, dims = case
    rng = np.random.default_rng(0)
    a = rng.normal(size=a_shape).astype(np.float32)
    b = rng.normal(size=b_shape).astype(np.float32)
    f = pyjax.jit(lambda x, y: lax.dot_general(x, y, (dims, ((), ()))))
    got = np.asarray(f(a, b))
    want = np.tensordot(a.astype(np.float64), b.astype(np.float64), axes=dims)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    text = f.lower(a, b).as_text()
    ynn = runtime.cpu_dots_want_row_major()
    assert ("stablehlo.optimization_barrier" in text) == (ynn and rewritten)


def test_no_rewrite_for_other_plugins_dtypes_or_batch_dims(monkeypatch):
    a = np.ones((64, 8), np.float32)
    b = np.ones((64, 4), np.float32)
    wgrad = ((0,), (0,)), ((), ())
    monkeypatch.setattr(runtime, "cpu_dots_want_row_major", lambda: False)
    text = pyjax.jit(lambda x, y: lax.dot_general(x, y, wgrad)).lower(a, b).as_text()
    assert "optimization_barrier" not in text
    monkeypatch.setattr(runtime, "cpu_dots_want_row_major", lambda: True)
    text = pyjax.jit(lambda x, y: lax.dot_general(x, y, wgrad)).lower(a, b).as_text()
    assert "optimization_barrier" in text
    for args, dn in [((a.astype(np.float16), b.astype(np.float16)), wgrad),  # not float32
                     ((a.astype(np.int32), b.astype(np.int32)), wgrad),
                     ((np.ones((3, 64, 8), np.float32), np.ones((3, 64, 4), np.float32)),
                      (((1,), (1,)), ((0,), (0,))))]:  # batch dimensions
        text = pyjax.jit(lambda x, y: lax.dot_general(x, y, dn)).lower(*args).as_text()
        assert "optimization_barrier" not in text


@pytest.mark.skipif(not runtime.cpu_dots_want_row_major(), reason="needs the YNNPACK build")
def test_an_mlp_gradient_leaves_no_product_to_eigen():
    rng = np.random.default_rng(1)
    w1, w2 = (rng.normal(size=s).astype(np.float32) * 0.1 for s in [(64, 32), (32, 8)])
    x = rng.normal(size=(16, 64)).astype(np.float32)

    def loss(ws, x):
        return (pyjax.numpy.tanh(x @ ws[0]) @ ws[1]).sum()
    hlo = pyjax.jit(pyjax.grad(loss)).lower((w1, w2), x).compile().as_text()
    entry = hlo[hlo.index("ENTRY"):]
    entry = entry[:entry.index("\n}")]
    assert " dot(" not in entry  # every product is a YNNPACK fusion
    g = pyjax.grad(loss)((w1, w2), x)
    h = np.tanh(x @ w1)  # the gradient by hand, against NumPy in float64
    gw2 = h.T.astype(np.float64) @ np.ones((16, 8))
    gw1 = x.T.astype(np.float64) @ ((np.ones((16, 8)) @ w2.T) * (1 - h ** 2))
    np.testing.assert_allclose(g[1], gw2, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(g[0], gw1, rtol=1e-4, atol=1e-4)
