"""Direct NumPy implementations of convolution and windowed reductions: the oracles.

Written from the definitions (StableHLO's convolution and reduce_window): dilate, pad (a
negative pad crops), then slide the window with a Python loop over window offsets.
"""
import itertools

import numpy as np


def dilate(x, dilation, axes):
    for ax, d in zip(axes, dilation):
        if d == 1 or x.shape[ax] == 0:
            continue
        shape = list(x.shape)
        shape[ax] = (x.shape[ax] - 1) * d + 1
        out = np.zeros(shape, x.dtype)
        idx = [slice(None)] * x.ndim
        idx[ax] = slice(None, None, d)
        out[tuple(idx)] = x
        x = out
    return x


def pad(x, pads, axes, value=0):
    """``pads`` are (low, high) per axis in ``axes``; negative values crop."""
    widths = [(0, 0)] * x.ndim
    for ax, (lo, hi) in zip(axes, pads):
        widths[ax] = (max(lo, 0), max(hi, 0))
    x = np.pad(x, widths, constant_values=value)
    idx = [slice(None)] * x.ndim
    for ax, (lo, hi) in zip(axes, pads):
        idx[ax] = slice(-min(lo, 0), x.shape[ax] + min(hi, 0))
    return x[tuple(idx)]


def _conv_canonical(x, w, strides):
    """x: (N, C, spatial...), w: (O, C, window...) -> (N, O, out spatial...)."""
    n_sp = x.ndim - 2
    out_sp = [max(0, (x.shape[2 + i] - w.shape[2 + i]) // strides[i] + 1)
              if x.shape[2 + i] >= w.shape[2 + i] else 0 for i in range(n_sp)]
    out = np.zeros((x.shape[0], w.shape[0]) + tuple(out_sp),
                   np.result_type(x.dtype, w.dtype))
    if 0 in out.shape:
        return out
    for k in itertools.product(*[range(s) for s in w.shape[2:]]):
        idx = (slice(None), slice(None)) + tuple(
            slice(k[i], k[i] + (out_sp[i] - 1) * strides[i] + 1, strides[i])
            for i in range(n_sp))
        patch = x[idx]  # (N, C, out spatial...)
        wk = w[(slice(None), slice(None)) + tuple(k)]  # (O, C)
        out += np.moveaxis(np.tensordot(patch, wk, axes=([1], [1])), -1, 1)
    return out


def conv(lhs, rhs, strides, padding, lhs_dilation=None, rhs_dilation=None,
         dimension_numbers=None, feature_group_count=1, batch_group_count=1):
    """``lax.conv_general_dilated`` from its definition. ``padding`` is explicit pairs;
    ``dimension_numbers`` is None or a (lhs_spec, rhs_spec, out_spec) of index tuples."""
    n = lhs.ndim - 2
    ones = (1,) * n
    lhs_dilation = lhs_dilation or ones
    rhs_dilation = rhs_dilation or ones
    if dimension_numbers is None:
        dimension_numbers = (tuple(range(n + 2)),) * 3
    lspec, rspec, ospec = dimension_numbers
    x = np.transpose(lhs, lspec)
    w = np.transpose(rhs, rspec)
    sp = tuple(range(2, n + 2))
    x = pad(dilate(x, lhs_dilation, sp), padding, sp)
    w = dilate(w, rhs_dilation, sp)
    G, B = feature_group_count, batch_group_count
    if G > 1:
        cg, og = x.shape[1] // G, w.shape[0] // G
        out = np.concatenate([_conv_canonical(x[:, g * cg:(g + 1) * cg],
                                              w[g * og:(g + 1) * og], strides)
                              for g in range(G)], axis=1)
    elif B > 1:
        nb, og = x.shape[0] // B, w.shape[0] // B
        out = np.concatenate([_conv_canonical(x[g * nb:(g + 1) * nb],
                                              w[g * og:(g + 1) * og], strides)
                              for g in range(B)], axis=1)
    else:
        out = _conv_canonical(x, w, strides)
    return np.transpose(out, np.argsort(ospec))


def reduce_window(x, op, init, window, strides, padding, base_dilation=None,
                  window_dilation=None):
    """``lax.reduce_window`` from its definition, with ``op`` a NumPy binary ufunc-like."""
    nd = x.ndim
    base_dilation = base_dilation or (1,) * nd
    window_dilation = window_dilation or (1,) * nd
    axes = tuple(range(nd))
    # dilation holes and padding hold the init value
    xd = dilate(x, base_dilation, axes)
    hole = dilate(np.ones(x.shape, bool), base_dilation, axes)
    xd = np.where(hole, xd, init)
    xp = pad(xd, padding, axes, value=init)
    wd = [(w - 1) * d + 1 for w, d in zip(window, window_dilation)]
    out_shape = [max(0, (xp.shape[i] - wd[i]) // strides[i] + 1) if xp.shape[i] >= wd[i] else 0
                 for i in range(nd)]
    out = np.full(out_shape, init, dtype=x.dtype)
    for k in itertools.product(*[range(w) for w in window]):
        idx = tuple(slice(k[i] * window_dilation[i],
                          k[i] * window_dilation[i] + (out_shape[i] - 1) * strides[i] + 1,
                          strides[i]) for i in range(nd))
        if 0 in out_shape:
            break
        out = op(out, xp[idx])
    return out
