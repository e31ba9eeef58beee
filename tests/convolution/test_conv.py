"""conv_general_dilated and the functions built on it, against a direct NumPy implementation
(tests/convolution/reference.py); gradients against finite differences; vmap against a loop.
"""
import importlib.util
import pathlib

import ml_dtypes
import numpy as np
import pytest

import pyjax
import pyjax.lax as lax
from pyjax.test_util import check_grads

_spec = importlib.util.spec_from_file_location(
    "conv_reference", pathlib.Path(__file__).with_name("reference.py"))
ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ref)

TESTED_PRIMITIVES = {"conv_general_dilated"}
JVP_TESTED = {"conv_general_dilated"}
TRANSPOSE_TESTED = {"conv_general_dilated"}
BATCH_TESTED = {"conv_general_dilated"}

RNG = np.random.default_rng(0)
NCHW = ("NCHW", "OIHW", "NCHW")
NHWC = ("NHWC", "HWIO", "NHWC")


def randn(*shape, dtype=np.float32):
    return RNG.normal(size=shape).astype(dtype)


# Each case: (name, lhs shape NC..., rhs shape OI..., kwargs); shapes are canonical (N, C, sp)
# and (O, I, sp); layouts are applied by the test.
CASES = [
    ("1d-valid", (2, 3, 7), (4, 3, 3), dict(window_strides=(1,), padding="VALID")),
    ("1d-stride-same", (2, 2, 9), (3, 2, 4), dict(window_strides=(2,), padding="SAME")),
    ("2d-same-lower-stride", (2, 3, 6, 5), (4, 3, 3, 2),
     dict(window_strides=(2, 1), padding="SAME_LOWER")),
    ("2d-explicit-negative", (1, 2, 6, 7), (3, 2, 2, 3),
     dict(window_strides=(1, 2), padding=((2, -1), (0, 1)))),
    ("2d-lhs-dilation", (2, 2, 4, 5), (3, 2, 3, 2),
     dict(window_strides=(1, 1), padding=((1, 2), (0, 0)), lhs_dilation=(2, 3))),
    ("2d-rhs-dilation-stride", (1, 3, 9, 8), (2, 3, 2, 3),
     dict(window_strides=(2, 3), padding="SAME", rhs_dilation=(3, 2))),
    ("2d-feature-groups", (2, 6, 5, 5), (6, 2, 3, 3),
     dict(window_strides=(1, 1), padding="VALID", feature_group_count=3)),
    ("2d-batch-groups", (4, 3, 5, 4), (6, 3, 2, 2),
     dict(window_strides=(1, 1), padding=((1, 0), (0, 1)), batch_group_count=2)),
    ("2d-batch-groups-dilated", (4, 3, 7, 5), (4, 3, 2, 3),
     dict(window_strides=(2, 1), padding=((1, 2), (0, 1)), lhs_dilation=(1, 2),
          rhs_dilation=(2, 1), batch_group_count=2)),
    ("3d", (1, 2, 4, 5, 3), (2, 2, 2, 3, 2),
     dict(window_strides=(1, 2, 1), padding="SAME", rhs_dilation=(1, 1, 2))),
]


def _string_layout(nd, layout):
    spatial = "DHW"[3 - (nd - 2):]
    if layout == "NCHW":
        return ("NC" + spatial, "OI" + spatial, "NC" + spatial)
    return ("N" + spatial + "C", spatial + "IO", "N" + spatial + "C")


def _physical(x, spec_string, canonical):
    """Transpose a canonical array (order ``canonical``, e.g. 'NCHW') into ``spec_string``."""
    return np.transpose(x, [canonical.index(c) for c in spec_string])


def case_arrays(lhs_shape, rhs_shape, layout, dtype=np.float32):
    nd = len(lhs_shape)
    dn = _string_layout(nd, layout)
    lhs_c, rhs_c = randn(*lhs_shape, dtype=dtype), randn(*rhs_shape, dtype=dtype)
    spatial = dn[0].replace("N", "").replace("C", "")
    lhs = _physical(lhs_c, dn[0], "NC" + spatial)
    rhs = _physical(rhs_c, dn[1], "OI" + spatial)
    return lhs, rhs, dn


def reference(lhs, rhs, dn, kw):
    dnums = lax.conv_dimension_numbers(lhs.shape, rhs.shape, dn)
    lspec, rspec = dnums.lhs_spec, dnums.rhs_spec
    n = lhs.ndim - 2
    pad = kw["padding"]
    if isinstance(pad, str):
        k = [rhs.shape[d] for d in rspec[2:]]
        k = [(kk - 1) * r + 1 for kk, r in zip(k, kw.get("rhs_dilation", (1,) * n))]
        pad = lax.padtype_to_pads([lhs.shape[d] for d in lspec[2:]], k, kw["window_strides"],
                                  pad)
    return ref.conv(lhs.astype(np.float64), rhs.astype(np.float64), kw["window_strides"], pad,
                    kw.get("lhs_dilation"), kw.get("rhs_dilation"), tuple(dnums),
                    kw.get("feature_group_count", 1), kw.get("batch_group_count", 1))


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("name,lhs_shape,rhs_shape,kw", CASES, ids=[c[0] for c in CASES])
def test_values_match_direct_loop(name, lhs_shape, rhs_shape, kw, layout):
    lhs, rhs, dn = case_arrays(lhs_shape, rhs_shape, layout)
    want = reference(lhs, rhs, dn, kw)
    got = pyjax.jit(lambda a, b: lax.conv_general_dilated(a, b, dimension_numbers=dn, **kw))(
        lhs, rhs)
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)


def test_eager_equals_jit_and_dimension_number_forms():
    lhs, rhs, dn = case_arrays((2, 3, 6, 5), (4, 3, 3, 2), "NHWC")
    kw = dict(window_strides=(2, 1), padding="SAME")
    eager = lax.conv_general_dilated(lhs, rhs, dimension_numbers=dn, **kw)
    jitted = pyjax.jit(lambda a, b: lax.conv_general_dilated(a, b, dimension_numbers=dn,
                                                             **kw))(lhs, rhs)
    np.testing.assert_array_equal(np.asarray(eager), np.asarray(jitted))
    dnums = lax.conv_dimension_numbers(lhs.shape, rhs.shape, dn)
    assert dnums == lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    via_named = lax.conv_general_dilated(lhs, rhs, dimension_numbers=dnums, **kw)
    np.testing.assert_array_equal(np.asarray(via_named), np.asarray(eager))
    # None is NCHW/OIHW/NCHW
    l2, r2 = np.transpose(lhs, (0, 3, 1, 2)), np.transpose(rhs, (3, 2, 0, 1))
    default = lax.conv_general_dilated(l2, r2, **kw)
    np.testing.assert_allclose(np.transpose(np.asarray(default), (0, 2, 3, 1)),
                               np.asarray(eager), rtol=1e-5, atol=1e-5)


def test_mixed_spatial_order_layout():
    # lhs spatial dims are ordered by the kernel's: 'NWHC' with 'OIHW' puts H before W
    lhs_c, rhs_c = randn(1, 2, 5, 4), randn(3, 2, 2, 3)
    lhs = np.transpose(lhs_c, (0, 3, 2, 1))  # NWHC
    out = lax.conv_general_dilated(lhs, rhs_c, (1, 1), "VALID",
                                   dimension_numbers=("NWHC", "OIHW", "CHWN"))
    want = ref.conv(lhs_c.astype(np.float64), rhs_c.astype(np.float64), (1, 1),
                    ((0, 0), (0, 0)))  # N O H W
    np.testing.assert_allclose(np.asarray(out), np.transpose(want, (1, 2, 3, 0)), rtol=1e-4,
                               atol=1e-4)


def test_precision_and_preferred_element_type():
    lhs = RNG.integers(-8, 8, (2, 3, 5, 5)).astype(np.int8)
    rhs = RNG.integers(-8, 8, (4, 3, 3, 3)).astype(np.int8)
    out = lax.conv_general_dilated(lhs, rhs, (1, 1), "SAME", preferred_element_type=np.int32)
    assert out.dtype == np.int32
    want = ref.conv(lhs.astype(np.int64), rhs.astype(np.int64), (1, 1), ((1, 1), (1, 1)))
    np.testing.assert_array_equal(np.asarray(out), want)  # no int8 overflow
    x, w = randn(1, 2, 4, 4), randn(2, 2, 2, 2)
    for p in (lax.Precision.HIGHEST, "highest", (lax.Precision.DEFAULT, lax.Precision.HIGH)):
        got = lax.conv_general_dilated(x, w, (1, 1), "VALID", precision=p)
        np.testing.assert_allclose(np.asarray(got), ref.conv(x, w, (1, 1), ((0, 0), (0, 0))),
                                   rtol=1e-5, atol=1e-5)
    # bfloat16 operands with a float32 result: gradients come back in bfloat16
    bf16 = np.dtype(ml_dtypes.bfloat16)
    g = pyjax.grad(lambda k: lax.conv_general_dilated(
        x.astype(bf16), k, (1, 1), "VALID", preferred_element_type=np.float32).sum())(
        w.astype(bf16))
    assert g.dtype == bf16
    want = pyjax.grad(lambda k: lax.conv_general_dilated(
        x.astype(bf16).astype(np.float32), k, (1, 1), "VALID").sum())(w)
    np.testing.assert_allclose(np.asarray(g).astype(np.float32), np.asarray(want), rtol=2e-2,
                               atol=2e-2)
    with pytest.raises(ValueError, match="Precision"):
        lax.conv_general_dilated(x, w, (1, 1), "VALID", precision="bogus")


def test_conv_wrappers():
    x, w = randn(2, 3, 7, 6), randn(4, 3, 3, 2)
    np.testing.assert_allclose(
        np.asarray(lax.conv(x, w, (2, 1), "SAME")),
        ref.conv(x, w, (2, 1), lax.padtype_to_pads((7, 6), (3, 2), (2, 1), "SAME")),
        rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(
        np.asarray(lax.conv_with_general_padding(x, w, (1, 1), ((1, 0), (2, 1)), (2, 1),
                                                 (1, 2))),
        ref.conv(x, w, (1, 1), ((1, 0), (2, 1)), (2, 1), (1, 2)), rtol=1e-4, atol=1e-4)


def test_shape_helpers():
    assert lax.padtype_to_pads((5, 6), (3, 2), (2, 2), "SAME") == [(1, 1), (0, 0)]
    assert lax.padtype_to_pads((5, 6), (3, 3), (2, 2), "SAME_LOWER") == [(1, 1), (1, 0)]
    assert lax.padtype_to_pads((5,), (3,), (1,), "VALID") == [(0, 0)]
    assert lax.conv_general_permutations(NHWC) == ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    assert lax.conv_shape_tuple((2, 3, 7, 6), (4, 3, 3, 2), (2, 1), "SAME") == (2, 4, 4, 6)
    assert lax.conv_general_shape_tuple((2, 7, 6, 3), (3, 2, 3, 4), (1, 1), "VALID",
                                        NHWC) == (2, 5, 5, 4)
    x, w = randn(2, 7, 6, 3), randn(3, 2, 3, 4)
    out = lax.conv_general_dilated(x, w, (2, 3), ((1, 2), (0, 1)), dimension_numbers=NHWC)
    assert out.shape == lax.conv_general_shape_tuple(x.shape, w.shape, (2, 3),
                                                     ((1, 2), (0, 1)), NHWC)
    with pytest.raises(RuntimeError, match="Unrecognized padding type"):
        lax.padtype_to_pads((5,), (3,), (1,), "FULL")


@pytest.mark.parametrize("padding", ["SAME", "VALID", ((1, 2), (0, 1))])
def test_conv_transpose_is_the_input_gradient(padding):
    # conv_transpose(transpose_kernel=True) computes the vjp of a strided convolution
    x, w = randn(2, 6, 6, 3), randn(3, 2, 3, 4)  # NHWC, HWIO
    strides = (2, 2)
    fwd = lambda x: lax.conv_general_dilated(x, w, strides, padding, dimension_numbers=NHWC)
    y, vjp = pyjax.vjp(fwd, x)
    ct = randn(*y.shape)
    got = lax.conv_transpose(ct, w, strides, padding, dimension_numbers=NHWC,
                             transpose_kernel=True)
    want = vjp(ct)[0]
    if isinstance(padding, str):
        # the shapes agree when the strides divide the input; compare the overlap
        swapped = w.shape[:2] + w.shape[2:][::-1]  # the kernel as transpose_kernel uses it
        assert got.shape == lax.conv_transpose_shape_tuple(ct.shape, swapped, strides, padding,
                                                           NHWC)
        # SAME may give more rows than the input (cropped here), VALID fewer (input rows no
        # window reached, whose gradient is zero)
        g, wnt = np.asarray(got), np.asarray(want)
        h, v = min(g.shape[1], 6), min(g.shape[2], 6)
        np.testing.assert_allclose(g[:, :h, :v], wnt[:, :h, :v], rtol=1e-4, atol=1e-4)
        assert not wnt[:, h:].any() and not wnt[:, :, v:].any()
    else:
        lo_hi = [(w.shape[i] - 1 - lo, w.shape[i] - 1 - hi + (x.shape[i + 1] + lo + hi
                                                              - w.shape[i]) % 2)
                 for i, (lo, hi) in enumerate(padding)]
        got = lax.conv_transpose(ct, w, strides, lo_hi, dimension_numbers=NHWC,
                                 transpose_kernel=True)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-4)


def test_conv_transpose_against_loop():
    x, w = randn(1, 4, 5, 2), randn(3, 2, 2, 3)  # NHWC, HWIO
    got = lax.conv_transpose(x, w, (2, 1), "SAME")
    pads = [(2, 1), (1, 0)]  # transposed SAME: (k=3, s=2) -> (2, 1); (k=2, s=1) -> (1, 0)
    want = ref.conv(x.astype(np.float64), w.astype(np.float64), (1, 1), pads, (2, 1), None,
                    ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2)))
    assert got.shape == (1, 8, 5, 3)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)


def test_patches_and_local():
    x = randn(2, 5, 6, 3)  # NHWC
    p = lax.conv_general_dilated_patches(x, (2, 3), (1, 2), "VALID", dimension_numbers=NHWC)
    assert p.shape == (2, 4, 2, 3 * 6)
    p = np.asarray(p)
    for c in range(3):
        for i in range(2):
            for j in range(3):
                np.testing.assert_array_equal(p[..., c * 6 + i * 3 + j],
                                              x[:, i:i + 4, j:j + 4:2, c])
    # locally connected: a different kernel at each of the 4x2 output positions
    w = randn(4, 2, 3 * 6, 5)  # H W (C*filter) O, with dimension numbers HWIO
    got = np.asarray(lax.conv_general_dilated_local(x, w, (1, 2), "VALID", (2, 3),
                                                    dimension_numbers=NHWC))
    want = np.einsum("nhwk,hwko->nhwo", p, w)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


# ---- gradients (finite differences, float64) ----

GRAD_CASES = [c for c in CASES if c[0] in ("1d-stride-same", "2d-explicit-negative",
                                           "2d-lhs-dilation", "2d-rhs-dilation-stride",
                                           "2d-feature-groups", "2d-batch-groups-dilated")]


@pytest.mark.parametrize("name,lhs_shape,rhs_shape,kw,layout",
                         [c + ("NCHW" if i % 2 else "NHWC",) for i, c in enumerate(GRAD_CASES)],
                         ids=[c[0] for c in GRAD_CASES])
def test_gradients_match_finite_differences(x64, name, lhs_shape, rhs_shape, kw, layout):
    # both operands, forward and reverse mode; each case in one layout (the values test covers
    # both layouts, and the transpose rules only permute specs)
    lhs, rhs, dn = case_arrays(lhs_shape, rhs_shape, layout, np.float64)
    f = pyjax.jit(lambda a, b: lax.conv_general_dilated(a, b, dimension_numbers=dn, **kw))
    check_grads(f, (lhs, rhs), order=1, modes=("fwd", "rev"))


def test_second_order_gradients(x64):
    # the transposes of the transposes: grouped, strided and dilated
    lhs, rhs, dn = case_arrays((1, 4, 5), (4, 2, 2), "NHWC", np.float64)
    f = pyjax.jit(lambda a, b: lax.conv_general_dilated(
        a, b, (2,), ((1, 0),), (1,), (2,), dimension_numbers=dn, feature_group_count=2))
    check_grads(f, (lhs, rhs), order=2, modes=("rev",))


# ---- vmap: a Python loop ----

VMAP_CASES = [c for c in CASES if c[0] in ("2d-same-lower-stride", "2d-feature-groups",
                                           "2d-batch-groups-dilated")]


@pytest.mark.parametrize("in_axes", [(0, None), (None, 1), (2, 0)])
@pytest.mark.parametrize("name,lhs_shape,rhs_shape,kw", VMAP_CASES,
                         ids=[c[0] for c in VMAP_CASES])
def test_vmap_matches_loop(name, lhs_shape, rhs_shape, kw, in_axes):
    lhs, rhs, dn = case_arrays(lhs_shape, rhs_shape, "NHWC")
    B = 3

    def stack(x, ax):
        return x if ax is None else np.stack([x * (1 + 0.5 * b) for b in range(B)], ax)
    L, R = stack(lhs, in_axes[0]), stack(rhs, in_axes[1])
    f = lambda a, b: lax.conv_general_dilated(a, b, dimension_numbers=dn, **kw)
    got = pyjax.jit(pyjax.vmap(f, in_axes=in_axes))(L, R)
    want = np.stack([reference(L if in_axes[0] is None else np.take(L, b, in_axes[0]),
                               R if in_axes[1] is None else np.take(R, b, in_axes[1]), dn, kw)
                     for b in range(B)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)


def test_grad_of_vmap_and_vmap_of_grad():
    lhs, rhs, dn = case_arrays((2, 4, 4), (4, 2, 3), "NCHW")
    kw = dict(window_strides=(1,), padding="SAME", feature_group_count=2)
    f = lambda a, b: (lax.conv_general_dilated(a, b, dimension_numbers=dn, **kw) ** 2).sum()
    R = np.stack([rhs, 2 * rhs])
    got = pyjax.vmap(pyjax.grad(f, argnums=(0, 1)), in_axes=(None, 0))(lhs, R)
    for b in range(2):
        want = pyjax.grad(f, argnums=(0, 1))(lhs, R[b])
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g[b]), np.asarray(w), rtol=1e-4, atol=1e-4)


# ---- errors ----

@pytest.mark.parametrize("call,exc,match", [
    (lambda x, w: lax.conv_general_dilated(x, w[:, :2], (1, 1), "SAME"), ValueError,
     "rhs input feature dimension"),
    (lambda x, w: lax.conv_general_dilated(x, w, (1,), "SAME"), ValueError, "window_strides"),
    (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "FULL"), ValueError, "padding"),
    (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), ((1, 1),)), ValueError, "pairs"),
    (lambda x, w: lax.conv_general_dilated(x, w, (0, 1), "VALID"), ValueError, "positive"),
    (lambda x, w: lax.conv_general_dilated(x, w[0], (1, 1), "VALID"), TypeError, "ndim"),
    (lambda x, w: lax.conv_general_dilated(x, w.astype(np.int32), (1, 1), "VALID"),
     TypeError, "same dtypes"),
    (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID", feature_group_count=2),
     ValueError, "feature_group_count"),
    (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID", batch_group_count=3),
     ValueError, "batch_group_count"),
    (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID",
                                           dimension_numbers=("NCHW", "OIHW", "NCH")),
     TypeError, "dimension_numbers"),
    (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID",
                                           dimension_numbers=("NCHW", "OIHX", "NCHW")),
     TypeError, "spatial characters"),
    (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), ((-9, 0), (0, 0))), ValueError,
     "Negative padding"),
])
def test_bad_inputs_raise_clear_errors(call, exc, match):
    x, w = randn(2, 3, 5, 5), randn(4, 3, 3, 3)
    with pytest.raises(exc, match=match):
        call(x, w)
