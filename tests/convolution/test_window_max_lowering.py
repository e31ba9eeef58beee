"""Windowed and cumulative max/min lowered with elementwise max/min (strided slices, an
associative scan) and the max-pool gradient written with strided slices: the same values as
Python loops, bit for bit, with NaNs, ties, infinities and signed zeros, and the gradient with
JAX's CPU selection rule (XLA's select_and_scatter on the operand padded with the identity)."""
import itertools

import numpy as np
import pytest

import pyjax
from pyjax import lax
from pyjax._src.lax import windowed_reductions as wr

RNG = np.random.default_rng(11)
BF16 = np.dtype(pyjax.numpy.bfloat16)


def _bits(a):
    """The bits of ``a``, every NaN as the same quiet NaN: the sign and payload of a NaN that
    max/min return are the plugin's choice (xla-cpu-pjrt keeps the operand's NaN, the YNNPACK
    build's newer XLA returns -NaN); which elements are NaN is not."""
    a = np.asarray(a)
    if a.dtype.kind == "f" or a.dtype == BF16:
        a = np.where(np.isnan(a.astype(np.float32)), np.array(np.nan, a.dtype), a)
    return a.view(f"u{a.dtype.itemsize}")


def _identity(dt, is_max):
    if np.issubdtype(dt, np.integer):
        return np.iinfo(dt).min if is_max else np.iinfo(dt).max
    return np.array(-np.inf if is_max else np.inf, dt)


def _window_loop(x, init, fold, window, strides, padding, base_dilation, window_dilation):
    """reduce_window by its definition: pad and dilate with ``init``, fold every window."""
    dil = [(n - 1) * b + 1 if n else 0 for n, b in zip(x.shape, base_dilation)]
    xd = np.full([d + lo + hi for d, (lo, hi) in zip(dil, padding)], init, x.dtype)
    xd[tuple(slice(lo, lo + d, b) for d, (lo, _), b in zip(dil, padding, base_dilation))] = x
    span = [(w - 1) * d + 1 for w, d in zip(window, window_dilation)]
    out_shape = [(p - s) // st + 1 for p, s, st in zip(xd.shape, span, strides)]
    out = np.empty(out_shape, x.dtype)
    for o in np.ndindex(*out_shape):
        elems = xd[tuple(slice(i * st, i * st + s, d)
                         for i, st, s, d in zip(o, strides, span, window_dilation))].ravel()
        acc = elems[0]
        for e in elems[1:]:
            acc = fold(acc, e)
        out[o] = acc
    return out


def _nan_max(a, b):  # NaN-propagating; +0 over -0 (JAX 0.10.2: max(-0., 0.) is +0. both ways)
    if a != a or b != b:
        return a if a != a else b
    if a == b:
        return a if not np.signbit(a) else b
    return a if a > b else b


def _nan_min(a, b):  # -0 over +0
    if a != a or b != b:
        return a if a != a else b
    if a == b:
        return a if np.signbit(a) else b
    return a if a < b else b


def _special_operand(shape, dt):
    if np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        x = RNG.integers(max(info.min, -4), min(info.max, 4), size=shape).astype(dt)
        x.flat[[0, 7]] = info.min, info.max
        return x
    x = RNG.integers(-3, 3, size=shape).astype(np.float32)  # many ties
    flat = x.reshape(-1)
    flat[[3, 20]] = np.nan
    flat[[5, 6, 11]] = -np.inf
    flat[9] = np.inf
    flat[[13, 14, 25, 26]] = [-0.0, 0.0, 0.0, -0.0]
    return x.astype(dt)


@pytest.mark.parametrize("dt", [np.float32, np.float16, BF16, np.int8, np.uint8, np.int32])
def test_reduce_window_max_min_match_loop(dt):
    x = _special_operand((2, 7, 6), dt)
    windows = [((1, 3, 3), (1, 1, 1), ((0, 0), (1, 1), (1, 1)), (1, 1, 1), (1, 1, 1)),
               ((1, 2, 3), (1, 2, 1), ((0, 0), (0, 1), (2, 0)), (1, 2, 1), (1, 1, 2)),
               ((2, 1, 2), (1, 3, 2), ((1, 0), (0, 0), (0, 0)), (1, 1, 1), (1, 1, 1))]

    @pyjax.jit
    def pools(x):
        return [lax.reduce_window(x, _identity(dt, is_max), lax.max if is_max else lax.min,
                                  *w) for w in windows for is_max in (True, False)]

    got = pools(x)
    for (w, is_max), g in zip(itertools.product(windows, (True, False)), got):
        want = _window_loop(x, _identity(dt, is_max), _nan_max if is_max else _nan_min, *w)
        g = np.asarray(g)
        assert g.dtype == np.dtype(dt) and g.shape == want.shape
        # bit for bit: NaNs where NaNs are, and the sign of every zero
        np.testing.assert_array_equal(_bits(g), _bits(want))


def _pool_grad_loop(x, ct, window, strides, padding, select_ge):
    """JAX's max/min-pool gradient on CPU, by its definition: the operand padded with the
    identity; in each window (row-major) the selected element stays unless it is not >= (<=)
    the next one; each window's cotangent added to its selected element, windows in order."""
    ident = _identity(x.dtype, select_ge)
    xp = np.pad(x, padding, constant_values=ident)
    out = np.zeros(xp.shape, ct.dtype)
    for w in np.ndindex(*ct.shape):
        best = None
        for o in np.ndindex(*window):
            idx = tuple(i * s + k for i, s, k in zip(w, strides, o))
            v = xp[idx]
            if best is None or not (best[1] >= v if select_ge else best[1] <= v):
                best = (idx, v)
        out[best[0]] += ct[w]
    return out[tuple(slice(lo, lo + n) for (lo, _), n in zip(padding, x.shape))]


POOLS = [((1, 3, 3, 1), (1, 1, 1, 1), ((0, 0), (1, 1), (1, 1), (0, 0))),  # 3x3 SAME
         ((1, 2, 2, 1), (1, 2, 2, 1), ((0, 0),) * 4),  # tiled 2x2
         ((1, 3, 2, 1), (1, 2, 1, 1), ((0, 0), (2, 1), (0, 1), (0, 0)))]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_pool_gradient_is_jaxs_selection(dt, request):
    if dt == np.float64:
        request.getfixturevalue("x64")
    x = _special_operand((2, 7, 6, 2), np.float32).astype(dt)
    x[0, 0, 0, 0], x[0, 0, 1, 0] = np.nan, 1.0  # a NaN first in a window gives way
    x[1, :, 0, 1] = -np.inf  # -inf at the padded edge: the padding keeps the gradient
    ct_full = (RNG.standard_normal((2, 7, 6, 2)) * np.exp(RNG.normal(0, 4, (2, 7, 6, 2))))

    def grads(x, ct_full):
        out = []
        for window, strides, padding in POOLS:
            for op, init in ((lax.max, -np.inf), (lax.min, np.inf)):
                y, vjp = pyjax.vjp(lambda v: lax.reduce_window(
                    v, np.array(init, dt), op, window, strides, padding), x)
                out.append(vjp(ct_full[tuple(slice(0, n) for n in y.shape)])[0])
        return out

    ct_full = ct_full.astype(dt)
    got = pyjax.jit(grads)(x, ct_full)
    for (pool, ge), g in zip(itertools.product(POOLS, (True, False)), got):
        shape = _window_loop(x, _identity(dt, ge), max, *pool, (1,) * 4, (1,) * 4).shape
        want = _pool_grad_loop(x, ct_full[tuple(slice(0, n) for n in shape)], *pool, ge)
        np.testing.assert_array_equal(np.asarray(g), want)
    # the cases the rule decides: the 1.0 after the NaN takes the first window's cotangent
    assert np.asarray(got[0])[0, 0, 0, 0] == 0.0
    # and XLA's own select_and_scatter (windows above _SCATTER_SLICED) gives the same bits
    old = wr._SCATTER_SLICED
    try:
        wr._SCATTER_SLICED = 0
        via_xla = pyjax.jit(lambda a, b: grads(a, b))(x, ct_full)
    finally:
        wr._SCATTER_SLICED = old
    for a, b in zip(got, via_xla):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("dt", [np.float32, BF16, np.int32, np.uint8])
def test_cummax_cummin_match_loop(dt):
    x = _special_operand((3, 37), dt)

    @pyjax.jit
    def scans(x):
        return [f(x, axis=a, reverse=r) for f in (lax.cummax, lax.cummin)
                for a in (0, 1) for r in (False, True)]

    got = scans(x)
    for (fold, axis, rev), g in zip(itertools.product((_nan_max, _nan_min), (0, 1),
                                                      (False, True)), got):
        v = np.moveaxis(x, axis, -1)
        v = v[..., ::-1] if rev else v
        want = np.empty_like(v)
        for row in np.ndindex(*v.shape[:-1]):
            acc = v[row][0]
            for j, e in enumerate(v[row]):
                acc = e if j == 0 else fold(acc, e)
                want[row][j] = acc
        want = np.moveaxis(want[..., ::-1] if rev else want, -1, axis)
        np.testing.assert_array_equal(_bits(np.asarray(g)), _bits(want))
