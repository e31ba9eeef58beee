"""Lowerings of ``polygamma`` and Hurwitz ``zeta``: XLA's expansion (chlo.polygamma,
chlo.zeta) for x >= 0, the reflection formula below 0.

XLA's expansion goes through the Hurwitz zeta function and loses every digit for negative
non-integer arguments (psi'(-9.63) came out as -5e15 instead of 11.6; JAX 0.10.2 has the same
fault). Below 0 these lowerings use

    psi^(n)(x) = (-1)^n psi^(n)(1 - x) - n! C_n(x)
    zeta(n + 1, q) = (-1)^n (zeta(n + 1, 1 - q) + C_n(q))       (integer order n >= 1)

with C_n(x) = pi^(n+1) cot^(n)(pi x) / n! = pi^(n+1) Q_n(cot(pi x)): Q_n is a polynomial
(Q_0 = u, Q_{j+1} = -(1 + u^2) Q_j' / (j + 1); all coefficients of one Q_j share a sign, so
building them does not cancel). The order n may be traced and differ per element, so one
``stablehlo.while`` builds the coefficient rows Q_0, Q_1, ... up to the largest order in use,
evaluating by Horner (one coefficient per step) only the rows some element needs. cot(pi x) is
formed from r = x - round(x) (exact) and, near half-integers, as tan(pi (1/2 - |r|)) with
1/2 - |r| exact, so u is exactly 0 there and the odd polynomials (even n) vanish exactly
where psi^(n)(x) = psi^(n)(1 - x). Orders above ``_MAX_ORDER`` at x < 0 give NaN (the value
overflows there anyway, except near half-integers).
"""
from __future__ import annotations

import numpy as np

from pyjax._src.core.abstract import ShapedArray
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import reductions, shape_ops

# the largest order reflected, by float width: pi^(n+1) n! overflows float32 near n = 26 and
# float64 near n = 136; zeta needs no factorial, so keep some room beyond
_MAX_ORDER = {2: 60, 4: 60, 8: 200}


def _bwhere(pred, a, b):
    """select with a scalar or full-shape ``pred`` and arrays/Python scalars ``a``, ``b``."""
    ref = a if not isinstance(a, (int, float)) else b
    shape, dtype = tuple(ref.aval.shape), ref.aval.dtype
    a, b = (shape_ops.full(shape, v, dtype) if isinstance(v, (int, float)) else v
            for v in (a, b))
    if tuple(pred.aval.shape) != shape:
        pred = shape_ops.broadcast_in_dim(pred, shape, ())
    return ew.select(pred, a, b)


def _reduce(p, x):
    nd = len(x.aval.shape)
    return p.bind(x, axes=tuple(range(nd))) if nd else x


def _cot_pi(x):
    """cot(pi x) for non-integer x (exactly 0 at half-integers)."""
    r = ew.sub(x, ew.round(x))
    h = ew.sub(shape_ops.full_like(x, 0.5), ew.abs(r))
    near_half = ew.lt(h, 0.25)
    hs = _bwhere(near_half, h, 0.25)       # each branch sees its own range only
    rs = _bwhere(near_half, 0.25, r)
    by_tan = ew.mul(ew.sign(r), ew.tan(ew.mul(hs, np.pi)))
    by_cos = ew.div(ew.cos(ew.mul(rs, np.pi)), ew.sin(ew.mul(rs, np.pi)))
    return _bwhere(near_half, by_tan, by_cos)


def _is_int(v):
    return ew.eq(v, ew.floor(v))


def _reflected_cot_terms(ctx, order, x, reflect):
    """(C_n(x), n!) elementwise where ``reflect`` (``order`` = n, float), NaN elsewhere."""
    dtype = x.aval.dtype
    max_order = _MAX_ORDER[np.dtype(dtype).itemsize]
    width = max_order + 2
    i32 = np.dtype(np.int32)

    def init(order, x, reflect):
        n = _bwhere(reflect, order, -1.0)
        jmax = ew.convert_element_type(ew.min(_reduce(reductions.reduce_max_p, n),
                                              float(max_order)), i32)
        big = _bwhere(reflect, order, float(max_order + 1))
        jmin = ew.convert_element_type(_reduce(reductions.reduce_min_p, big), i32)
        u = _cot_pi(_bwhere(reflect, x, 0.25))
        row = np.zeros(width, dtype)
        row[1] = 1                                      # Q_0 = u
        j = shape_ops.full((), 0, i32)
        # Horner from Q_0's degree (1), or skip rows no element needs (-1)
        i = _bwhere(ew.le(jmin, 0), shape_ops.full((), 1, i32), -1)
        zeros, nans = shape_ops.full_like(x, 0.0), shape_ops.full_like(x, np.nan)
        pw, fact = shape_ops.full((), np.pi, dtype), shape_ops.full((), 1.0, dtype)
        return [j, i, ew.add(shape_ops.full((width,), 0.0, dtype), row), pw, fact, zeros, nans, nans,
                u, n, jmax, jmin]

    state = ctx.lower_fun(init, [order, x, reflect], multiple_results=True)
    degrees = np.arange(1, width, dtype=dtype)

    def cond(j, i, *rest):
        return ew.le(j, rest[-2])

    def body(j, i, coef, pw, fact, acc, c_out, f_out, u, n, jmax, jmin):
        horner = ew.ge(i, 0)
        c_i = shape_ops.reshape(shape_ops.dynamic_slice(coef, [ew.max(i, 0)], [1]), ())
        acc_next = ew.add(ew.mul(acc, u), c_i)
        row_done = ew.bitwise_not(horner)
        jf = ew.convert_element_type(j, dtype)
        hit = _bwhere(row_done, ew.eq(n, jf), False)
        c_out = _bwhere(hit, ew.mul(acc, pw), c_out)
        f_out = _bwhere(hit, shape_ops.broadcast_in_dim(fact, acc.aval.shape, ()), f_out)
        # the next row: Q_{j+1} = -(1 + u^2) Q_j' / (j + 1) on the coefficients
        deriv = shape_ops.concatenate(
            [ew.mul(shape_ops.slice(coef, [1], [width]), degrees),
             shape_ops.full((1,), 0.0, dtype)], 0)
        shifted = shape_ops.concatenate(
            [shape_ops.full((2,), 0.0, dtype), shape_ops.slice(deriv, [0], [width - 2])], 0)
        nxt = ew.div(ew.neg(ew.add(deriv, shifted)), ew.add(jf, 1.0))
        j1 = ew.add(j, 1)
        return [_bwhere(row_done, j1, j),
                _bwhere(horner, ew.sub(i, 1), _bwhere(ew.ge(j1, jmin), ew.add(j1, 1), -1)),
                _bwhere(row_done, nxt, coef),
                _bwhere(row_done, ew.mul(pw, np.pi), pw),
                _bwhere(row_done, ew.mul(fact, ew.add(jf, 1.0)), fact),
                _bwhere(horner, acc_next, 0.0),
                c_out, f_out, u, n, jmax, jmin]

    out = _lower_loop(ctx, list(state), cond, body)
    return out[6], out[7]


def _lower_loop(ctx, state, cond_fn, body_fn):
    from pyjax._src.lax.special import _lower_loop as loop
    return loop(ctx, state, cond_fn, body_fn)


def _sign_of_order(n):
    """(-1)^n for an integer-valued float n."""
    half = ew.mul(n, 0.5)
    return ew.sub(1.0, ew.mul(ew.sub(half, ew.floor(half)), 4.0))


def _upcast(ctx, args):
    """16-bit floats are computed in float32."""
    dtype = args[0].aval.dtype
    if np.dtype(dtype).itemsize >= 4:
        return args, None
    f32 = np.dtype(np.float32)
    return [ctx.lower_fun(lambda a: ew.convert_element_type(a, f32), [a]) for a in args], dtype


def _downcast(ctx, out, dtype):
    if dtype is None:
        return out
    return ctx.lower_fun(lambda a: ew.convert_element_type(a, dtype), [out])


def _prepare(ctx, a, x, min_order):
    from pyjax._src.lax.special import _broadcast_operands
    (a, x), small = _upcast(ctx, _broadcast_operands(ctx, [a, x]))

    def mask(a, x):
        reflect = ew.bitwise_and(ew.lt(x, 0.0), ew.bitwise_not(_is_int(x)))
        reflect = ew.bitwise_and(reflect, ew.bitwise_and(_is_int(a), ew.ge(a, min_order)))
        return [reflect, _bwhere(reflect, ew.sub(1.0, x), x)]

    reflect, y = ctx.lower_fun(mask, [a, x], multiple_results=True)
    return a, x, reflect, y, small


def polygamma_lower(ctx, m, x):
    m, x, reflect, y, small = _prepare(ctx, m, x, 0.0)
    base = ctx.op("chlo.polygamma", [m, y], ShapedArray(x.aval.shape, x.aval.dtype))
    order = ctx.lower_fun(lambda m, r: _bwhere(r, m, -1.0), [m, reflect])
    c_n, fact = _reflected_cot_terms(ctx, order, x, reflect)

    def combine(m, reflect, base, c_n, fact):
        return _bwhere(reflect, ew.sub(ew.mul(_sign_of_order(m), base), ew.mul(fact, c_n)),
                       base)

    return _downcast(ctx, ctx.lower_fun(combine, [m, reflect, base, c_n, fact]), small)


def zeta_lower(ctx, s, q):
    s, q, reflect, y, small = _prepare(ctx, s, q, 2.0)
    base = ctx.op("chlo.zeta", [s, y], ShapedArray(q.aval.shape, q.aval.dtype))
    order = ctx.lower_fun(lambda s, r: _bwhere(r, ew.sub(s, 1.0), -1.0), [s, reflect])
    c_n, _ = _reflected_cot_terms(ctx, order, q, reflect)

    def combine(order, reflect, base, c_n):
        return _bwhere(reflect, ew.mul(_sign_of_order(order), ew.add(base, c_n)), base)

    return _downcast(ctx, ctx.lower_fun(combine, [order, reflect, base, c_n]), small)
