"""gather / scatter primitives against a NumPy reference of XLA's semantics: dimension numbers,
out-of-bounds modes, fill values, duplicate indices, dtypes, eager and under jit; errors."""
import ml_dtypes
import numpy as np
import pytest

import pyjax
import pyjax.lax as lax
from pyjax._src.lax.slicing import (GatherDimensionNumbers as GDN, GatherScatterMode,
                                    ScatterDimensionNumbers as SDN)

TESTED_PRIMITIVES = {"gather", "scatter", "scatter-add", "scatter-sub", "scatter-mul",
                     "scatter-min", "scatter-max"}

F32, I32, U8, BOOL, BF16, C64 = (np.float32, np.int32, np.uint8, np.bool_, ml_dtypes.bfloat16,
                                 np.complex64)


def _data(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if np.issubdtype(dt, np.integer):
        return rng.integers(0, 50, shape).astype(dt)
    x = rng.uniform(-3, 3, shape)
    if dt.kind == "c":
        x = x + 1j * rng.uniform(-3, 3, shape)
    return x.astype(dt)


# ---- NumPy references of XLA's gather / scatter (index vector = last dim of indices) ----

def ref_gather(op, idx, dn, slice_sizes, mode, fill=None):
    batch_shape = idx.shape[:-1]
    window = [d for d in range(op.ndim)
              if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    rank = len(batch_shape) + len(dn.offset_dims)
    wsz, bsz = iter([slice_sizes[d] for d in window]), iter(batch_shape)
    out_shape = tuple(next(wsz) if i in dn.offset_dims else next(bsz) for i in range(rank))
    out = np.empty(out_shape, op.dtype)
    for oi in np.ndindex(*out_shape):
        b = tuple(oi[i] for i in range(rank) if i not in dn.offset_dims)
        off = [oi[i] for i in dn.offset_dims]
        start = [0] * op.ndim
        for k, d in enumerate(dn.start_index_map):
            start[d] = int(idx[b][k])
        for od, bd in zip(dn.operand_batching_dims, dn.start_indices_batching_dims):
            start[od] = b[bd]
        ok = all(0 <= start[d] <= op.shape[d] - slice_sizes[d] for d in dn.start_index_map)
        if mode == "fill" and not ok:
            out[oi] = fill
            continue
        start = [min(max(s, 0), op.shape[d] - slice_sizes[d]) for d, s in enumerate(start)]
        for w, d in enumerate(window):
            start[d] += off[w]
        out[oi] = op[tuple(start)]
    return out


def ref_scatter(op, idx, upd, dn, combine, mode):
    out = op.copy()
    window = [d for d in range(op.ndim)
              if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
    ws = [1] * op.ndim
    for w, d in enumerate(window):
        ws[d] = upd.shape[dn.update_window_dims[w]]
    for ui in np.ndindex(*upd.shape):
        s = tuple(ui[i] for i in range(upd.ndim) if i not in dn.update_window_dims)
        off = [ui[i] for i in dn.update_window_dims]
        start = [0] * op.ndim
        for k, d in enumerate(dn.scatter_dims_to_operand_dims):
            start[d] = int(idx[s][k])
        for od, bd in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims):
            start[od] = s[bd]
        if mode == "clip":
            start = [min(max(v, 0), op.shape[d] - ws[d]) for d, v in enumerate(start)]
        elif not all(0 <= start[d] <= op.shape[d] - ws[d] for d in range(op.ndim)):
            continue
        for w, d in enumerate(window):
            start[d] += off[w]
        out[tuple(start)] = combine(out[tuple(start)], upd[ui])
    return out


def _close(got, want, dtype):
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape,
                                                                 got.dtype, want.dtype)
    if np.dtype(dtype) == np.dtype(BF16):
        np.testing.assert_allclose(got.astype(F32), want.astype(F32), rtol=1e-2)
    else:
        np.testing.assert_array_equal(got, want)


# (operand shape, indices, dnums, slice_sizes)
GATHER_CASES = [
    # rows x[i]
    ((5, 3), np.array([[0], [4], [2], [2]]), GDN((1,), (0,), (0,)), (1, 3)),
    # points x[i, j]
    ((4, 6), np.array([[0, 1], [3, 5], [2, 2]]), GDN((), (0, 1), (0, 1)), (1, 1)),
    # 2x2 windows, nothing collapsed, batch of shape (2, 2)
    ((5, 6), np.array([[[0, 0], [1, 3]], [[3, 4], [2, 1]]]), GDN((2, 3), (), (0, 1)), (2, 2)),
    # index the middle dim, offset dims around the batch dim
    ((3, 5, 4), np.array([[1], [4], [0]]), GDN((0, 2), (1,), (1,)), (3, 1, 4)),
    # start_index_map in reverse order
    ((4, 6), np.array([[5, 0], [1, 3]]), GDN((), (0, 1), (1, 0)), (1, 1)),
    # batching dims (take_along_axis): operand dim 0 pairs with indices dim 0
    ((3, 5), np.array([[[1], [4]], [[0], [0]], [[2], [3]]]),
     GDN((), (1,), (1,), (0,), (0,)), (1, 1)),
    # empty batch
    ((4, 3), np.zeros((0, 1), np.int64), GDN((1,), (0,), (0,)), (1, 3)),
]


@pytest.mark.parametrize("case", range(len(GATHER_CASES)))
def test_gather_in_bounds_matches_reference(case):
    shape, idx, dn, ss = GATHER_CASES[case]
    x = _data(F32, shape)
    idx = idx.astype(np.int32)
    want = ref_gather(x, idx, dn, ss, "clip")
    for mode in ("clip", "fill", "promise_in_bounds"):
        _close(lax.gather(x, idx, dn, ss, mode=mode), want, F32)


@pytest.mark.parametrize("dtype", [F32, I32, U8, BOOL, BF16, C64])
def test_gather_dtypes_eager_and_jit(dtype):
    shape, idx, dn, ss = GATHER_CASES[0]
    x = _data(dtype, shape)
    want = ref_gather(x, idx, dn, ss, "clip")
    _close(lax.gather(x, idx.astype(np.int32), dn, ss), want, dtype)
    if dtype in (F32, BOOL):
        f = pyjax.jit(lambda a, i: lax.gather(a, i, dn, ss, mode="clip"))
        _close(f(x, idx.astype(np.int32)), want, dtype)


@pytest.mark.parametrize("idx_dtype", [np.int8, np.uint8, np.uint32])
def test_gather_index_dtypes(idx_dtype):
    x = _data(F32, (6, 2))
    idx = np.array([[0], [5], [3]], idx_dtype)
    dn = GDN((1,), (0,), (0,))
    np.testing.assert_array_equal(np.asarray(lax.gather(x, idx, dn, (1, 2))), x[[0, 5, 3]])


OOB_IDX = np.array([[0, 0], [4, 1], [-1, 2], [2, 9], [3, 3], [-7, -7]], np.int32)


@pytest.mark.parametrize("mode", ["clip", "promise_in_bounds", None])
def test_gather_out_of_bounds_clamps(mode):
    # JAX's lax.gather defaults to promise_in_bounds, which clamps (only the scatters default
    # to fill/drop)
    x = _data(F32, (5, 6))
    dn = GDN((1, 2), (), (0, 1))
    want = ref_gather(x, OOB_IDX, dn, (2, 3), "clip")
    np.testing.assert_array_equal(np.asarray(lax.gather(x, OOB_IDX, dn, (2, 3), mode=mode)),
                                  want)
    # the first row of the output is the window at (0, 0); an index of -1 clamps to 0
    np.testing.assert_array_equal(want[2], x[0:2, 2:5])


@pytest.mark.parametrize("dtype,fill", [(F32, np.nan), (I32, np.iinfo(np.int32).min),
                                        (U8, 255), (BOOL, True), (C64, np.nan)])
def test_gather_fill_defaults(dtype, fill):
    x = _data(dtype, (5, 6))
    dn = GDN((1, 2), (), (0, 1))
    want = ref_gather(x, OOB_IDX, dn, (2, 3), "fill", fill)
    for got in (lax.gather(x, OOB_IDX, dn, (2, 3), mode=GatherScatterMode.FILL_OR_DROP),
                pyjax.jit(lambda a, i: lax.gather(a, i, dn, (2, 3), mode="fill"))(x, OOB_IDX)):
        np.testing.assert_array_equal(np.asarray(got), want)
    # a window that runs past the edge is filled entirely, even its in-bounds part
    row = np.asarray(lax.gather(x, OOB_IDX, dn, (2, 3), mode="fill"))[1]
    np.testing.assert_array_equal(row, np.full(row.shape, fill, row.dtype))


def test_gather_fill_value_explicit_and_partial_window():
    x = _data(F32, (5, 6))
    dn = GDN((1, 2), (), (0, 1))
    got = np.asarray(lax.gather(x, OOB_IDX, dn, (2, 3), mode="fill", fill_value=-1.5))
    np.testing.assert_array_equal(got, ref_gather(x, OOB_IDX, dn, (2, 3), "fill", -1.5))
    assert np.all(got[1] == -1.5)          # start (4, 1): rows 4..5 run past row 4
    np.testing.assert_array_equal(got[4], x[3:5, 3:6])   # start (3, 3) fits exactly


def test_gather_batching_dims_fill():
    x = _data(F32, (3, 5))
    idx = np.array([[[1], [5]], [[-1], [0]], [[2], [4]]], np.int32)
    dn = GDN((), (1,), (1,), (0,), (0,))
    got = lax.gather(x, idx, dn, (1, 1), mode="fill", fill_value=0.0)
    np.testing.assert_array_equal(np.asarray(got), ref_gather(x, idx, dn, (1, 1), "fill", 0.0))


def test_gather_jaxpr_and_lowering():
    dn = GDN((1,), (0,), (0,))
    f = lambda a, i: lax.gather(a, i, dn, (1, 3), mode="clip")  # noqa: E731
    x, i = np.ones((4, 3), F32), np.array([[1]], np.int32)
    text = str(pyjax.make_jaxpr(f)(x, i))
    assert "gather[" in text and "GatherScatterMode.CLIP" in text and "slice_sizes=(1, 3)" in text
    hlo = pyjax.jit(f).lower(x, i).as_text()
    assert "stablehlo.gather" in hlo and "stablehlo.clamp" in hlo
    assert "collapsed_slice_dims = [0]" in hlo and "index_vector_dim = 1" in hlo


def test_gather_abstract_eval_matches_result():
    for shape, idx, dn, ss in GATHER_CASES:
        x = _data(F32, shape)
        out = pyjax.eval_shape(lambda a, i: lax.gather(a, i, dn, ss), x, idx.astype(np.int32))
        real = lax.gather(x, idx.astype(np.int32), dn, ss)
        assert out.shape == real.shape and out.dtype == real.dtype


def test_gather_errors():
    x = np.ones((4, 3), F32)
    dn = GDN((1,), (0,), (0,))
    with pytest.raises(TypeError, match="integer"):
        lax.gather(x, np.array([[1.0]], F32), dn, (1, 3))
    with pytest.raises(TypeError, match="slice_sizes"):
        lax.gather(x, np.array([[1]], I32), dn, (1, 4))
    with pytest.raises(TypeError, match="slice_sizes"):
        lax.gather(x, np.array([[1]], I32), dn, (1,))
    with pytest.raises(TypeError, match="start_index_map"):
        lax.gather(x, np.array([[1, 2]], I32), dn, (1, 3))
    with pytest.raises(TypeError, match="offset_dims"):
        lax.gather(x, np.array([[1]], I32), GDN((1, 2), (0,), (0,)), (1, 3))
    with pytest.raises(TypeError, match="collapsed"):
        lax.gather(x, np.array([[1]], I32), GDN((1,), (0,), (0,)), (2, 3))
    with pytest.raises(ValueError, match="Unknown gather mode"):
        lax.gather(x, np.array([[1]], I32), dn, (1, 3), mode="bogus")
    with pytest.raises(TypeError, match="GatherDimensionNumbers"):
        lax.gather(x, np.array([[1]], I32), ((1,), (0,), (0,)), (1, 3))


def test_mode_from_any():
    M = GatherScatterMode
    assert M.from_any(None) is M.FILL_OR_DROP
    assert M.from_any("fill") is M.FILL_OR_DROP and M.from_any("drop") is M.FILL_OR_DROP
    assert M.from_any("clip") is M.CLIP and M.from_any(M.CLIP) is M.CLIP
    assert M.from_any("promise_in_bounds") is M.PROMISE_IN_BOUNDS
    with pytest.raises(ValueError):
        M.from_any("wrap")
    assert hash(GDN((1,), (0,), (0,))) == hash(GDN((1,), (0,), (0,)))


# ---- scatter ----

COMBINE = {"scatter": (lax.scatter, lambda a, b: b), "scatter_add": (lax.scatter_add, np.add),
           "scatter_sub": (lax.scatter_sub, np.subtract),
           "scatter_mul": (lax.scatter_mul, np.multiply),
           "scatter_min": (lax.scatter_min, np.minimum),
           "scatter_max": (lax.scatter_max, np.maximum)}

# (operand shape, indices (may repeat), distinct indices for set, updates shape, dnums)
SCATTER_CASES = [
    ((5, 3), np.array([[0], [4], [2], [2], [0]]), np.array([[0], [4], [2], [1], [3]]), (5, 3),
     SDN((1,), (0,), (0,))),
    ((4, 6), np.array([[0, 1], [3, 5], [0, 1]]), np.array([[0, 1], [3, 5], [1, 1]]), (3,),
     SDN((), (0, 1), (0, 1))),
    ((5, 6), np.array([[[0, 0], [1, 3]], [[3, 4], [0, 0]]]),
     np.array([[[0, 0], [1, 3]], [[3, 4], [3, 0]]]), (2, 2, 2, 2), SDN((2, 3), (), (0, 1))),
    ((3, 5, 4), np.array([[1], [4], [1]]), np.array([[1], [4], [2]]), (3, 3, 4),
     SDN((0, 2), (1,), (1,))),
    ((3, 5), np.array([[[1], [4]], [[0], [0]], [[2], [2]]]),
     np.array([[[1], [4]], [[0], [3]], [[2], [1]]]), (3, 2), SDN((), (1,), (1,), (0,), (0,))),
]


@pytest.mark.parametrize("name", list(COMBINE))
@pytest.mark.parametrize("case", range(len(SCATTER_CASES)))
def test_scatter_matches_reference(name, case):
    shape, idx, distinct, ushape, dn = SCATTER_CASES[case]
    fn, comb = COMBINE[name]
    if case in (1, 2, 3) and name not in ("scatter", "scatter_add"):
        return  # every combiner runs on cases 0 and 4; the layouts on set and add
    if name == "scatter":  # duplicates make set implementation-defined
        idx = distinct
    x, u = _data(F32, shape, 1), _data(F32, ushape, 2)
    idx = idx.astype(np.int32)
    want = ref_scatter(x, idx, u, dn, comb, "fill")
    np.testing.assert_allclose(np.asarray(fn(x, idx, u, dn)), want, rtol=1e-6)
    if case in (0, 4):
        jf = pyjax.jit(lambda a, i, b: fn(a, i, b, dn))
        np.testing.assert_allclose(np.asarray(jf(x, idx, u)), want, rtol=1e-6)


def test_scatter_add_accumulates_duplicates():
    x = np.zeros(4, I32)
    idx = np.array([[1], [1], [1], [3]], np.int32)
    got = lax.scatter_add(x, idx, np.array([1, 2, 3, 4], I32), SDN((), (0,), (0,)))
    np.testing.assert_array_equal(np.asarray(got), [0, 6, 0, 4])


@pytest.mark.parametrize("name", ["scatter", "scatter_add", "scatter_mul", "scatter_max"])
def test_scatter_out_of_bounds_modes(name):
    fn, comb = COMBINE[name]
    x, u = _data(F32, (5, 6), 3), _data(F32, (6, 2, 3), 4)
    idx = OOB_IDX
    dn = SDN((1, 2), (), (0, 1))
    if name == "scatter":  # distinct clamped windows keep set well defined
        idx = np.array([[0, 0], [4, 1], [-1, 3], [2, 9], [2, 0], [-7, 9]], np.int32)
    for mode in ("fill", "clip"):
        want = ref_scatter(x, idx, u, dn, comb, mode)
        got = fn(x, idx, u, dn, mode=mode)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, err_msg=mode)
    # drop leaves the places that only out-of-bounds windows touch unchanged
    dropped = np.asarray(fn(x, idx, u, dn))
    np.testing.assert_array_equal(dropped[4, :3], x[4, :3])


@pytest.mark.parametrize("dtype", [I32, U8, BOOL, BF16, C64])
def test_scatter_dtypes(dtype):
    x, u = _data(dtype, (6,), 5), _data(dtype, (4,), 6)
    idx = np.array([[5], [0], [5], [2]], np.int32)
    dn = SDN((), (0,), (0,))
    names = {BOOL: ("scatter_add", "scatter_mul", "scatter_min", "scatter_max"),
             C64: ("scatter_add", "scatter_mul")}.get(dtype, ("scatter_add", "scatter_max"))
    for name in names:
        fn, comb = COMBINE[name]
        if dtype == BOOL:
            comb = {"scatter_add": np.logical_or, "scatter_mul": np.logical_and,
                    "scatter_min": np.logical_and, "scatter_max": np.logical_or}[name]
        want = ref_scatter(x, idx, u, dn, comb, "fill")
        got = np.asarray(fn(x, idx, u, dn))
        assert got.dtype == want.dtype
        if dtype == BF16:
            np.testing.assert_allclose(got.astype(F32), want.astype(F32), rtol=2e-2)
        else:
            np.testing.assert_array_equal(got, want, err_msg=name)


def test_scatter_python_scalar_update_and_empty_indices():
    x = np.arange(4, dtype=F32)
    dn = SDN((), (0,), (0,))
    got = lax.scatter_add(x, np.array([2], np.int32), 5, dn)  # a weak scalar update
    assert got.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(got), [0, 1, 7, 3])
    got = lax.scatter(x, np.zeros((0, 1), np.int32), np.zeros((0,), F32), dn)
    np.testing.assert_array_equal(np.asarray(got), x)


def test_scatter_apply():
    x = np.arange(5, dtype=F32)
    idx = np.array([[1], [3], [3]], np.int32)
    got = lax.scatter_apply(x, idx, lambda v: v * 2.0, SDN((), (0,), (0,)), update_shape=(3,))
    np.testing.assert_array_equal(np.asarray(got), [0, 2, 2, 12, 4])  # applied per occurrence
    jf = pyjax.jit(lambda a: lax.scatter_apply(a, idx, lambda v: -v, SDN((), (0,), (0,)),
                                               update_shape=(3,)))
    np.testing.assert_array_equal(np.asarray(jf(x)), [0, -1, 2, 3, 4])


def test_scatter_jaxpr_and_lowering():
    dn = SDN((), (0,), (0,))
    f = lambda a, i, u: lax.scatter_mul(a, i, u, dn, mode="clip")  # noqa: E731
    args = (np.ones(4, F32), np.array([[1]], np.int32), np.ones(1, F32))
    assert "scatter-mul[" in str(pyjax.make_jaxpr(f)(*args))
    hlo = pyjax.jit(f).lower(*args).as_text()
    assert "stablehlo.scatter" in hlo and "stablehlo.multiply" in hlo
    assert "inserted_window_dims = [0]" in hlo and "stablehlo.clamp" in hlo


def test_scatter_errors():
    x = np.ones((4, 3), F32)
    dn = SDN((1,), (0,), (0,))
    i = np.array([[1]], I32)
    with pytest.raises(TypeError, match="dtype"):
        lax.scatter_add(x, i, np.ones((1, 3), I32), dn)
    with pytest.raises(TypeError, match="updates shape"):
        lax.scatter_add(x, i, np.ones((2, 3), F32), dn)
    with pytest.raises(TypeError, match="integer"):
        lax.scatter(x, np.array([[1.0]], F32), np.ones((1, 3), F32), dn)
    with pytest.raises(TypeError, match="larger"):
        lax.scatter(x, i, np.ones((1, 5), F32), dn)
    with pytest.raises(TypeError, match="ScatterDimensionNumbers"):
        lax.scatter(x, i, np.ones((1, 3), F32), ((1,), (0,), (0,)))
    with pytest.raises(TypeError, match="does not accept dtype bool"):
        lax.scatter_sub(np.ones(3, bool), np.array([[1]], I32), np.ones(1, bool),
                        SDN((), (0,), (0,)))
