"""polygamma and Hurwitz zeta at negative arguments (lax/special_reflection.py), with the
order traced and different per element.

Oracle: the recurrence psi^(n)(x) = psi^(n)(x + M) - (-1)^n n! sum_{k<M} (x + k)^-(n+1) with
the sum in 40-digit decimals and SciPy's value at x + M in [20, 21). XLA's expansion (JAX 0.10.2's
too) gave psi'(-9.63) = -5.3e15 (true 11.62) and zeta(3, -10.25) = -4.9e21 (true -62.0).
Near a zero of psi^(n) the relative error is unbounded for any method, so the error is
measured against |f(x)| + |x f'(x)| (the rounding of x alone moves f by eps times that)."""
import math
from decimal import Decimal, localcontext

import numpy as np
import pytest
import scipy.special as ss

import pyjax
import pyjax.lax as lax
from pyjax.scipy import special as jss
from pyjax.test_util import check_grads


def exact_polygamma(n, x):
    m = int(math.ceil(20 - x))
    with localcontext() as ctx:
        ctx.prec = 40
        tail = sum(1 / (Decimal(x) + k) ** (n + 1) for k in range(m))
        return float(Decimal(float(ss.polygamma(n, x + m))) - (-1) ** n * math.factorial(n) * tail)


def exact_zeta(s, q):
    m = int(math.ceil(20 - q))
    with localcontext() as ctx:
        ctx.prec = 40
        head = sum(1 / (Decimal(q) + k) ** s for k in range(m))
        return float(head + Decimal(float(ss.zeta(s, q + m))))


def negative_points(dtype):
    rng = np.random.default_rng(3)
    x = np.concatenate([-rng.uniform(0, 3, 12), -rng.uniform(3, 30, 12),
                        -np.exp(rng.uniform(np.log(30), np.log(1000), 12)),
                        [-0.5, -2.5, -999.5, -1e-3, -1 + 1e-6, -3.3, -9.63, -3.7]])
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_polygamma_at_negative_x_with_traced_order(dtype, x64):
    x = negative_points(dtype)
    orders = np.arange(11)
    n = np.repeat(orders, x.size).astype(dtype)
    xs = np.tile(x, orders.size)
    got = np.asarray(pyjax.jit(lax.polygamma)(n, xs), np.float64)
    ref = np.array([exact_polygamma(int(k), float(v)) for k, v in zip(n, xs)])
    slope = np.array([exact_polygamma(int(k) + 1, float(v)) for k, v in zip(n, xs)])
    big = np.abs(ref) > np.finfo(dtype).max   # overflows in dtype (float32 near poles)
    assert np.all(np.isinf(got[big]) & (np.sign(got[big]) == np.sign(ref[big])))
    err = np.abs(got - ref) / (np.abs(ref) + np.abs(xs * slope))
    # measured worst: 5.4e-16 (float64), 2.4e-7 (float32)
    assert err[~big].max() < (2e-15 if dtype == np.float64 else 1e-6)
    # at half-integers the cot term vanishes for even n: psi^(n)(1/2 - k) = psi^(n)(1/2 + k)
    # (float32: XLA's own expansion at 1/2 + k is 3e-6 off for n = 4)
    k = np.array([1.0, 3.0, 40.0, 999.0])
    for order in (2, 4, 10):
        np.testing.assert_allclose(jss.polygamma(order, (0.5 - k).astype(dtype)),
                                   ss.polygamma(order, 0.5 + k),
                                   rtol=1e-14 if dtype == np.float64 else 1e-5)


def test_scipy_polygamma_traced_order_and_edges(x64):
    x = np.array([-9.63, -9.63, -9.63, -150.2, -2.0, -3.0])
    n = np.array([1, 2, 3, 5, 1, 2])
    got = pyjax.jit(jss.polygamma)(n, x)
    want = [exact_polygamma(k, v) for k, v in zip(n[:4], x[:4])]
    np.testing.assert_allclose(got[:4], want, rtol=1e-14)
    # the poles keep XLA's values (JAX 0.10.2 gives inf and nan there too)
    assert np.isinf(got[4]) and not np.isfinite(got[5])
    # orders beyond the reflection's table are NaN rather than a wrong number
    assert np.isnan(lax.polygamma(np.float32(61.0), np.float32(-1.3)))


def test_zeta_at_negative_q(x64):
    s = np.array([2.0, 2.0, 3.0, 4.0, 7.0, 2.0, 11.0])
    q = np.array([-0.5, -3.3, -10.25, -100.7, -0.999, -500.5, -7.2])
    got = np.asarray(lax.zeta(s, q))
    np.testing.assert_allclose(got, [exact_zeta(int(a), b) for a, b in zip(s, q)], rtol=2e-14)
    np.testing.assert_allclose(np.asarray(lax.zeta(s.astype(np.float32), q.astype(np.float32))),
                               [exact_zeta(int(a), float(np.float32(b))) for a, b in zip(s, q)],
                               rtol=2e-6)
    # next to the poles (q -> -k) and near s = 1: SciPy
    s2 = np.array([3.0, 2.0, 2.0, 1 + 1e-8, 1.001])
    q2 = np.array([-3 + 1e-7, -1e-9, -2 - 1e-9, 2.0, 0.5])
    np.testing.assert_allclose(np.asarray(jss.zeta(s2, q2)), ss.zeta(s2, q2), rtol=1e-14)
    # non-integer s at q < 0 is complex: NaN, as SciPy and JAX
    assert np.isnan(lax.zeta(2.5, -1.3)) and np.isnan(jss.zeta(2.5, -1.3))


def test_derivatives_at_negative_x(x64):
    x = np.array([-9.63, -0.4, -2.5, -41.3])
    check_grads(lambda x: lax.polygamma(np.array([0.0, 1.0, 2.0, 3.0]), x), (x,), order=1)
    check_grads(lambda q: lax.zeta(np.array([2.0, 3.0, 4.0, 2.0]), q), (x,), order=1)
