"""The built-in binary ufuncs as ``jnp.ufunc`` objects, as in JAX: ``jnp.add.reduce``,
``jnp.multiply.accumulate``, ``jnp.maximum.at``, ``jnp.add.outer``, ... Calling one is the
plain function (``numpy/ufuncs.py``) behind one ``__call__``; the methods use the matching
reductions, cumulative reductions and scatters where there is one, and the generic ``ufunc``
methods otherwise. Code inside pyjax keeps calling the plain functions."""
from __future__ import annotations

from pyjax._src.numpy import reductions as red
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.numpy.creation import asarray
from pyjax._src.numpy.dtypes_api import result_type
from pyjax._src.numpy.vectorize import ufunc

__all__ = ["add", "subtract", "multiply", "maximum", "minimum", "bitwise_and",
           "bitwise_or", "bitwise_xor", "logical_and", "logical_or", "logical_xor"]


def _at(method, promote=False):
    """``ufunc.at`` as one scatter. With ``promote`` the result has the ufunc's result dtype,
    as JAX's (its maximum.at/minimum.at take the generic path: int a, float b -> float)."""
    def at(a, indices, b):
        a = asarray(a)
        if promote:
            a = a.astype(result_type(a, b))
        return getattr(a.at[indices], method)(b)
    return at


def _bool_reduce(fn):
    def reduce(a, axis=0, dtype=None, keepdims=False):
        out = fn(a, axis=axis, keepdims=keepdims)
        return out if dtype is None else out.astype(dtype)
    return reduce


add = ufunc(uf.add, 2, 1, name="add", identity=0, reduce=red.sum, accumulate=red.cumsum,
            at=_at("add"))
multiply = ufunc(uf.multiply, 2, 1, name="multiply", identity=1, reduce=red.prod,
                 accumulate=red.cumprod, at=_at("multiply"))
subtract = ufunc(uf.subtract, 2, 1, name="subtract", at=_at("subtract"))
maximum = ufunc(uf.maximum, 2, 1, name="maximum", at=_at("max", promote=True),
                reduce=lambda a, axis=0, dtype=None, keepdims=False:
                red.max(a if dtype is None else asarray(a).astype(dtype), axis=axis,
                        keepdims=keepdims))
minimum = ufunc(uf.minimum, 2, 1, name="minimum", at=_at("min", promote=True),
                reduce=lambda a, axis=0, dtype=None, keepdims=False:
                red.min(a if dtype is None else asarray(a).astype(dtype), axis=axis,
                        keepdims=keepdims))
bitwise_and = ufunc(uf.bitwise_and, 2, 1, name="bitwise_and", identity=-1)
bitwise_or = ufunc(uf.bitwise_or, 2, 1, name="bitwise_or", identity=0)
bitwise_xor = ufunc(uf.bitwise_xor, 2, 1, name="bitwise_xor", identity=0)
logical_and = ufunc(uf.logical_and, 2, 1, name="logical_and", identity=True,
                    reduce=_bool_reduce(red.all))
logical_or = ufunc(uf.logical_or, 2, 1, name="logical_or", identity=False,
                   reduce=_bool_reduce(red.any))
logical_xor = ufunc(uf.logical_xor, 2, 1, name="logical_xor", identity=False)
