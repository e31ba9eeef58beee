"""Integer number theory: ``gcd`` and ``lcm``, elementwise with broadcasting.

``gcd`` is Euclid's algorithm in one ``lax.while_loop`` over whole arrays (as JAX does): every
step replaces ``(a, b)`` by ``(b, a % b)`` where ``b != 0`` and the loop stops when every
``b`` is zero, so the trip count is that of the slowest element (``O(log(max))``).
"""
from __future__ import annotations

from pyjax._src.core import dtypes
from pyjax._src.lax import elementwise as lax
from pyjax._src.lax import shape_ops as lax_shape
from pyjax._src.numpy import util
from pyjax._src.numpy import creation
from pyjax._src.numpy import reductions
from pyjax._src.numpy import ufuncs

__all__ = ["gcd", "lcm"]


def _integer_args(name, x1, x2):
    util.check_arraylike(name, x1, x2)
    x1, x2 = util.promote_args_numeric(name, x1, x2)
    x1, x2 = creation.asarray(x1), creation.asarray(x2)
    shape = util.broadcast_shapes(x1.shape, x2.shape)
    x1, x2 = util.broadcast_to(x1, shape), util.broadcast_to(x2, shape)
    if not dtypes.is_integer(x1.dtype):
        raise ValueError(f"Arguments to jax.numpy.{name} must be integers, got "
                         f"{x1.dtype.name}.")
    return x1, x2


def _gcd(x1, x2):
    from pyjax._src.control_flow.while_loop import while_loop
    def cond(state):
        _, b = state
        return reductions.any(lax.ne(b, lax_shape.full(b.shape, 0, b.dtype)))

    def body(state):
        a, b = state
        nz = lax.ne(b, lax_shape.full(b.shape, 0, b.dtype))
        safe_b = lax.select(nz, b, lax_shape.full(b.shape, 1, b.dtype))
        return lax.select(nz, b, a), lax.select(nz, lax.rem(a, safe_b),
                                                lax_shape.full(b.shape, 0, b.dtype))

    a, _ = while_loop(cond, body, (ufuncs.absolute(x1), ufuncs.absolute(x2)))
    # abs(INT_MIN) wraps to INT_MIN, so the remainders can end negative: gcd(-128, -127)
    # in int8 is 1, not -1 (NumPy's value)
    return ufuncs.absolute(a)


def gcd(x1, x2, /):
    """The greatest common divisor of ``|x1|`` and ``|x2|``, elementwise (``gcd(0, 0) = 0``).

    Integer (or boolean) arguments only; they are promoted and broadcast together.
    """
    x1, x2 = _integer_args("gcd", x1, x2)
    return _gcd(x1, x2)


def lcm(x1, x2, /):
    """The lowest common multiple of ``|x1|`` and ``|x2|``, elementwise (0 if either is 0).

    Integer (or boolean) arguments only; they are promoted and broadcast together. Results
    that do not fit the dtype wrap around, as in NumPy.
    """
    x1, x2 = _integer_args("lcm", x1, x2)
    x1, x2 = ufuncs.absolute(x1), ufuncs.absolute(x2)
    d = _gcd(x1, x2)
    zero = lax_shape.full(d.shape, 0, d.dtype)
    nz = lax.ne(d, zero)
    safe_d = lax.select(nz, d, lax_shape.full(d.shape, 1, d.dtype))
    return lax.select(nz, lax.mul(x1, lax.div(x2, safe_d)), zero)

