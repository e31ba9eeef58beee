"""Functions applied over array axes: ``vectorize`` (with ``excluded`` and a gufunc
``signature``), ``apply_along_axis``, ``apply_over_axes``, and JAX's ``ufunc`` class with
``frompyfunc``.

All of them are ``vmap`` over the loop dimensions, so the user's function is traced once,
not called per element (as in JAX).
"""
from __future__ import annotations

import functools
import math
import re

import numpy as np

from pyjax._src.core import axes as axes_mod
from pyjax._src.core import errors
from pyjax._src.core.trace import Tracer
from pyjax._src.control_flow.scan import scan
from pyjax._src.numpy import util
from pyjax._src.numpy.creation import arange, asarray, full
from pyjax._src.numpy.shape import (broadcast_shapes, broadcast_to, expand_dims, moveaxis,
                                    reshape, ravel, concatenate, stack)
from pyjax._src.numpy.ufuncs import where as _where
from pyjax._src.transformations.vmap import vmap

__all__ = ["vectorize", "apply_along_axis", "apply_over_axes", "ufunc", "frompyfunc"]

_DIM = r"\w+"
_CORE = rf"\((?:{_DIM}(?:,{_DIM})*)?\)"
_ARGS = rf"{_CORE}(?:,{_CORE})*"
_SIGNATURE = re.compile(rf"^{_ARGS}->{_ARGS}$")


def _parse_signature(signature):
    """``"(m,n),(n)->(m)"`` -> ([("m", "n"), ("n",)], [("m",)])."""
    sig = signature.replace(" ", "")
    if not _SIGNATURE.match(sig):
        raise ValueError(f"not a valid gufunc signature: {signature!r}")
    ins, outs = sig.split("->")
    parse = lambda s: [tuple(re.findall(_DIM, arg)) for arg in re.findall(_CORE, s)]  # noqa
    return parse(ins), parse(outs)


def _flat_call(fun, args, batch_shape, out_core_ndims=None):
    """Call ``fun`` on each of the ``prod(batch_shape)`` examples of ``args`` (arrays whose
    leading dims are ``batch_shape``) by one ``vmap``; results get ``batch_shape`` back."""
    n = math.prod(batch_shape)
    nb = len(batch_shape)
    flat = [reshape(a, (n,) + tuple(a.shape[nb:])) for a in args]
    out = vmap(fun)(*flat) if flat else fun()
    unflat = lambda o: reshape(o, batch_shape + tuple(o.shape[1:]))  # noqa: E731
    return tuple(unflat(o) for o in out) if isinstance(out, tuple) else unflat(out)


class vectorize:  # noqa: N801 - NumPy's and JAX's name
    """``vectorize(pyfunc, *, excluded=frozenset(), signature=None)``: a function that
    applies ``pyfunc`` to each element (or, with a ``signature`` like ``"(n),(n)->()"``, to
    each core sub-array) of its broadcast arguments. ``excluded``: positions or names of
    arguments passed through unchanged."""

    def __init__(self, pyfunc, *, excluded=frozenset(), signature=None):
        if not callable(pyfunc):
            raise TypeError(f"vectorize: pyfunc must be callable, got {pyfunc!r}")
        for e in excluded:
            if not isinstance(e, (int, str)):
                raise TypeError(f"jax.numpy.vectorize can only exclude integer or string "
                                f"arguments, but excluded={excluded!r}")
            if isinstance(e, int) and e < 0:
                raise ValueError(f"excluded={excluded!r} contains negative numbers")
        self.pyfunc, self.excluded, self.signature = pyfunc, frozenset(excluded), signature
        self._sig = _parse_signature(signature) if signature is not None else None
        functools.update_wrapper(self, pyfunc)

    def __call__(self, *args, **kwargs):
        excluded = self.excluded
        kw_fixed = {k: v for k, v in kwargs.items() if k in excluded}
        kw_names = [k for k in kwargs if k not in excluded]
        pos = [i for i in range(len(args)) if i not in excluded]
        operands = [asarray(args[i]) for i in pos] + [asarray(kwargs[k]) for k in kw_names]

        def call(*ops):
            full_args = list(args)
            for i, o in zip(pos, ops[:len(pos)]):
                full_args[i] = o
            kw = dict(kw_fixed)
            kw.update(zip(kw_names, ops[len(pos):]))
            return self.pyfunc(*full_args, **kw)

        if self._sig is None:
            in_core = [()] * len(operands)
            out_core = None
        else:
            in_core, out_core = self._sig
            if len(in_core) != len(operands):
                raise TypeError(f"wrong number of positional arguments: expected "
                                f"{len(in_core)}, got {len(operands)}")
        sizes = {}
        batch_shapes = []
        for op, core in zip(operands, in_core):
            if op.ndim < len(core):
                raise ValueError(f"input with shape {op.shape} does not have enough "
                                 f"dimensions for all core dimensions {core!r}")
            core_shape = op.shape[op.ndim - len(core):]
            for name, size in zip(core, core_shape):
                if sizes.setdefault(name, size) != size:
                    raise ValueError(f"inconsistent size for core dimension {name!r}: "
                                     f"{size} vs {sizes[name]}")
            batch_shapes.append(op.shape[:op.ndim - len(core)])
        batch = broadcast_shapes(*batch_shapes) if batch_shapes else ()
        ops = [broadcast_to(op, batch + op.shape[op.ndim - len(core):])
               for op, core in zip(operands, in_core)]

        def checked(*ops):
            out = call(*ops)
            if out_core is None:
                return tuple(asarray(o) for o in out) if isinstance(out, tuple) else asarray(out)
            outs = out if isinstance(out, tuple) else (out,)
            if len(outs) != len(out_core):
                raise ValueError(f"wrong number of outputs from the function: expected "
                                 f"{len(out_core)}, got {len(outs)}")
            for o, core in zip(outs, out_core):
                o = asarray(o)
                if o.ndim != len(core):
                    raise ValueError(f"output shape {o.shape} does not match core dimensions "
                                     f"{core!r} of the signature {self.signature!r}")
                for name, size in zip(core, o.shape):
                    if sizes.setdefault(name, size) != size:
                        raise ValueError(f"inconsistent size for core dimension {name!r}: "
                                         f"{size} vs {sizes[name]}")
            return out if isinstance(out, tuple) or len(out_core) != 1 else asarray(out)

        if not batch:
            return checked(*ops)
        return _flat_call(checked, ops, batch)


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``func1d(v, *args, **kwargs)`` on every 1-D slice ``v`` of ``arr`` along ``axis``;
    its result's dimensions replace ``axis``."""
    util.check_arraylike("apply_along_axis", arr)
    arr = asarray(arr)
    axis = axes_mod.canonicalize_axis(axis, arr.ndim, fun="apply_along_axis")
    moved = moveaxis(arr, axis, -1)
    batch = tuple(moved.shape[:-1])
    out = _flat_call(lambda v: asarray(func1d(v, *args, **kwargs)), [moved], batch)
    core = out.ndim - len(batch)
    # the result's own dims go where `axis` was
    return moveaxis(out, tuple(range(len(batch), out.ndim)),
                    tuple(range(axis, axis + core))) if core else out


def apply_over_axes(func, a, axes):
    """``a = func(a, axis)`` for each axis in ``axes`` in turn, keeping the dimension count
    (a result with one dimension fewer gets it back as size 1)."""
    util.check_arraylike("apply_over_axes", a)
    a = asarray(a)
    for axis in ([axes] if np.ndim(axes) == 0 else list(axes)):
        b = asarray(func(a, axis))
        if b.ndim == a.ndim:
            a = b
        elif b.ndim == a.ndim - 1:
            a = expand_dims(b, axis)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return a


# ---------------------------------------------------------------------------------------
# ufunc
# ---------------------------------------------------------------------------------------

class ufunc:  # noqa: N801 - JAX's name
    """JAX's ``jnp.ufunc``: a broadcasting function of ``nin`` arrays with NumPy's ufunc
    methods (``reduce``, ``accumulate``, ``at``, ``outer``, ``reduceat``). ``func`` must
    broadcast (wrap a scalar function with ``vectorize`` or use ``frompyfunc``); ``call``,
    ``reduce``, ``accumulate``, ``at``, ``reduceat`` may give faster implementations."""

    def __init__(self, func, /, nin, nout, *, name=None, nargs=None, identity=None,
                 call=None, reduce=None, accumulate=None, at=None, reduceat=None):
        self.__name__ = name or getattr(func, "__name__", "ufunc")
        self._func = func
        self.nin, self.nout = int(nin), int(nout)
        self.nargs = nargs if nargs is not None else self.nin
        self.identity = identity
        self._call_fn = call if call is not None else func
        self._reduce, self._accumulate = reduce, accumulate
        self.__doc__ = getattr(func, "__doc__", None)
        self._at, self._reduceat = at, reduceat

    def __repr__(self):
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args, **kwargs):
        # lean: the built-in binary ufuncs (jnp.add, ...) are these objects (one extra call)
        if kwargs:
            if kwargs.pop("out", None) is not None:
                raise NotImplementedError(f"out argument of {self}")
            if kwargs.pop("where", None) is not None:
                raise NotImplementedError(f"where argument of {self}")
        return self._call_fn(*args, **kwargs)

    def _out_dtype(self, rows):
        """The dtype of the function's result on two elements of ``rows`` (logical ufuncs
        give bool for integer inputs, as NumPy's methods do)."""
        probe = rows[:1] if rows.shape[0] else full((1,) + tuple(rows.shape[1:]), 0, rows.dtype)
        return asarray(self(probe, probe)).dtype

    def _binary(self, what):
        if self.nin != 2 or self.nout != 1:
            raise ValueError(f"{what} only supported for binary ufuncs with one output, "
                             f"got {self} with nin={self.nin}, nout={self.nout}")

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None,
               where=None):
        """Fold the binary function over ``axis`` (int, tuple or None)."""
        self._binary("reduce")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduce()")
        if self._reduce is not None and where is None and initial is None:
            return self._reduce(a, axis=axis, dtype=dtype, keepdims=keepdims)
        util.check_arraylike(f"{self.__name__}.reduce", a)
        a = asarray(a, dtype=dtype)
        axes = axes_mod.canonicalize_axes(axis, a.ndim, fun=f"{self.__name__}.reduce")
        keep = [d for d in range(a.ndim) if d not in axes]

        def to_rows(x):  # reduced axes first, flattened
            return reshape(x.transpose(tuple(axes) + tuple(keep)),
                           (math.prod(a.shape[d] for d in axes),)
                           + tuple(a.shape[d] for d in keep))
        moved = to_rows(a)
        if initial is None and (where is not None or moved.shape[0] == 0):
            if self.identity is None:
                raise ValueError(f"reduction operation '{self.__name__}' does not have an "
                                 "identity, so to use a where mask or reduce an empty array "
                                 "one has to specify 'initial'")
            initial = self.identity
        out_dtype = self._out_dtype(moved)
        if initial is None:
            init, moved = moved[0].astype(out_dtype), moved[1:]
        else:
            init = full(moved.shape[1:], initial, out_dtype)
        if where is None:
            res, _ = scan(lambda c, x: (asarray(self(c, x)).astype(c.dtype), None), init,
                          moved)
        else:  # masked-out elements leave the running value as it is
            mask = to_rows(broadcast_to(asarray(where), a.shape))

            def step(c, xm):
                return _where(xm[1], asarray(self(c, xm[0])).astype(c.dtype), c), None
            res, _ = scan(step, init, (moved, mask))
        if keepdims:
            res = reshape(res, tuple(1 if d in axes else a.shape[d] for d in range(a.ndim)))
        return res

    def accumulate(self, a, axis=0, dtype=None, out=None):
        """The running fold along ``axis``: ``[a0, f(a0, a1), f(f(a0, a1), a2), ...]``."""
        self._binary("accumulate")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
        if self._accumulate is not None:
            return self._accumulate(a, axis=axis, dtype=dtype)
        util.check_arraylike(f"{self.__name__}.accumulate", a)
        a = asarray(a, dtype=dtype)
        axis = axes_mod.canonicalize_axis(axis, a.ndim, fun=f"{self.__name__}.accumulate")
        moved = moveaxis(a, axis, 0)
        if moved.shape[0] == 0:
            return a

        def step(c, x):
            c = asarray(self(c, x)).astype(c.dtype)
            return c, c
        _, rest = scan(step, moved[0].astype(self._out_dtype(moved)), moved[1:])
        return moveaxis(concatenate([moved[:1].astype(rest.dtype), rest]), 0, axis)

    def at(self, a, indices, b=None, /, *, inplace=True):
        """A copy of ``a`` with ``a[indices] = f(a[indices], b)`` applied one index after
        another (repeated indices accumulate). JAX arrays are immutable: pass
        ``inplace=False``."""
        if inplace:
            raise NotImplementedError("jax.numpy.ufunc.at: JAX arrays are immutable, must "
                                      "use inplace=False")
        if self._at is not None:
            return self._at(a, indices, b)
        util.check_arraylike(f"{self.__name__}.at", a)
        a = asarray(a)
        if isinstance(indices, tuple):
            for i in indices:  # JAX 0.10.2 takes only arrays, ints and None here
                if isinstance(i, (slice, type(Ellipsis))):
                    raise TypeError(f"{self.__name__}.at: index tuple entries must be arrays "
                                    f"or integers, got {i!r}")
        elif isinstance(indices, list):
            indices = asarray(indices)
        if self.nin == 2 and b is None:
            raise ValueError(f"{self.__name__}.at: binary ufunc needs a second operand")
        if a.size == 0:  # nothing to update (JAX 0.10.2 returns the empty array too)
            args = (ravel(a), ravel(asarray(b))[:0]) if self.nin == 2 else (ravel(a),)
            return a.astype(asarray(self(*args)).dtype)
        # the flat position of every element a[indices] selects, in NumPy's (row-major) order;
        # out-of-bounds indices get position a.size, and their updates are dropped (as JAX)
        selected = reshape(arange(a.size, dtype=np.int32), a.shape).at[indices].get(
            mode="fill", fill_value=a.size)
        positions = ravel(selected)
        if self.nin == 2:
            values = ravel(broadcast_to(asarray(b), selected.shape))
            dtype = asarray(self(ravel(a)[:0], values[:0])).dtype
        else:
            values = positions  # unused by the step
            dtype = asarray(self(ravel(a)[:0])).dtype

        # as JAX: the result has the ufunc's result dtype (a is cast to it first)
        def step(acc, xs):
            i, v = xs
            new = self(acc[i], v) if self.nin == 2 else self(acc[i])
            return acc.at[i].set(asarray(new).astype(acc.dtype), mode="drop"), None
        res, _ = scan(step, ravel(a).astype(dtype), (positions, values))
        return reshape(res, a.shape)

    def outer(self, A, B, /, **kwargs):
        """``f(A[i...], B[j...])`` for every pair: shape ``A.shape + B.shape``."""
        self._binary("outer")
        util.check_arraylike(f"{self.__name__}.outer", A, B)
        A, B = asarray(A), asarray(B)
        return self(reshape(A, A.shape + (1,) * B.ndim), B, **kwargs)

    def reduceat(self, a, indices, axis=0, dtype=None, out=None):
        """``reduce`` over ``a[indices[i]:indices[i+1]]`` along ``axis`` for each i (the
        element at ``indices[i]`` alone where the next index is not larger); ``indices``
        must be concrete."""
        self._binary("reduceat")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduceat()")
        if self._reduceat is not None:
            return self._reduceat(a, indices, axis=axis, dtype=dtype)
        util.check_arraylike(f"{self.__name__}.reduceat", a)
        if isinstance(indices, Tracer) and indices.to_concrete_value() is None:
            raise errors.ConcretizationTypeError(
                indices.aval.str_short(), f"{self.__name__}.reduceat needs concrete indices "
                "(the segment lengths decide the output's structure).\n")
        a = asarray(a, dtype=dtype)
        axis = axes_mod.canonicalize_axis(axis, a.ndim, fun=f"{self.__name__}.reduceat")
        ind = np.asarray(indices if not isinstance(indices, Tracer)
                         else indices.to_concrete_value()).astype(np.int64).ravel()
        n = a.shape[axis]
        if ind.size and (ind.min() < -n or ind.max() >= n):
            raise IndexError(f"{self.__name__}.reduceat: index out of bounds for axis of "
                             f"size {n}")
        ind = np.where(ind < 0, ind + n, ind)
        moved = moveaxis(a, axis, 0)
        parts = []
        for k, start in enumerate(ind):
            stop = ind[k + 1] if k + 1 < len(ind) else n
            seg = moved[start:stop] if stop > start else moved[start:start + 1]
            parts.append(self.reduce(seg, axis=0))
        res = stack(parts) if parts else moved[:0]
        return moveaxis(res, 0, axis)


def frompyfunc(func, /, nin, nout, *, identity=None):
    """A ``ufunc`` from a scalar Python function of ``nin`` arguments (vectorized)."""
    return ufunc(vectorize(func), nin, nout, name=getattr(func, "__name__", None),
                 identity=identity)
