"""Files, strings and printing: ``save``, ``savez``, ``load``, ``fromfile``, ``fromstring``,
``fromiter``, ``fromfunction``, ``array_repr``, ``array_str`` and NumPy's print options.

As in JAX, saving and the print options are NumPy's own functions (arrays convert through
``__array__``); ``load`` returns device arrays; ``fromfile``/``fromiter`` are not provided
(reading files or iterators is impure under transformations) and say what to use instead.
"""
from __future__ import annotations

import numpy as np

from pyjax._src.core import axes as axes_mod
from pyjax._src.core import dtypes
from pyjax._src.numpy.creation import asarray
from pyjax._src.transformations.vmap import vmap

__all__ = ["save", "savez", "load", "fromfile", "fromstring", "fromiter", "fromfunction",
           "array_repr", "array_str", "printoptions", "get_printoptions",
           "set_printoptions"]

save = np.save
savez = np.savez
printoptions = np.printoptions
get_printoptions = np.get_printoptions
set_printoptions = np.set_printoptions


def load(file, *args, **kwargs):
    """``np.load``, with a single saved array returned as a device array (archives and
    pickled objects are returned as NumPy gives them)."""
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray):
        return asarray(out) if out.dtype != object else out
    return out


def fromfile(*args, **kwargs):
    """Not provided: reading a file is not a pure function of its arguments."""
    raise NotImplementedError(
        "jnp.fromfile() is not implemented because it may be non-pure and thus unsafe for "
        "use with JIT and other JAX transformations. Consider using "
        "jnp.asarray(np.fromfile(...)) instead, although care should be taken if "
        "np.fromfile is used within jax transformations because of its potential side "
        "effect of consuming the file object; for more information see Common Gotchas in "
        "JAX.")


def fromiter(*args, **kwargs):
    """Not provided: consuming an iterator is not a pure function of its arguments."""
    raise NotImplementedError(
        "jnp.fromiter() is not implemented because it may be non-pure and thus unsafe for "
        "use with JIT and other JAX transformations. Consider using "
        "jnp.asarray(np.fromiter(...)) instead, although care should be taken if "
        "np.fromiter is used within jax transformations because of its potential side "
        "effect of consuming the iterable object; for more information see Common Gotchas "
        "in JAX.")


def fromstring(string, dtype=float, count=-1, *, sep):
    """A 1-D array parsed from the text ``string`` (numbers separated by ``sep``)."""
    return asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """``function(i0, i1, ...)`` at every index of a grid of ``shape``: the function is
    traced once on scalar indices of ``dtype`` and vectorized over the grid by ``vmap``."""
    shape = axes_mod.canonicalize_shape(shape, "shape", "fromfunction")
    dtype = dtypes.canonicalize_dtype(dtype)
    fn = lambda *idx: function(*idx, **kwargs)  # noqa: E731
    for i in range(len(shape) - 1, -1, -1):
        fn = vmap(fn, in_axes=tuple(0 if j == i else None for j in range(len(shape))))
    from pyjax._src.numpy.index_tricks import indices
    idx = indices(shape, dtype=dtype, sparse=True)
    # each vmap level maps one axis: feed it that axis's 1-D index vector
    return fn(*[asarray(ix).reshape(-1) for ix in idx]) if shape else function(**kwargs)


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    """NumPy's ``array_repr`` of the array's values."""
    return np.array_repr(np.asarray(arr), max_line_width, precision, suppress_small)


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    """NumPy's ``array_str`` of the array's values."""
    return np.array_str(np.asarray(a), max_line_width, precision, suppress_small)
