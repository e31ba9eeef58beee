"""Operators, properties and NumPy-style methods of pyjax arrays and tracers.

Importing this module attaches them to both ``ArrayImpl`` (concrete arrays) and ``Tracer``
(values inside transformations), so ``x + 1``, ``x[0]``, ``x.sum()`` and ``x.at[i].set(v)``
work the same eagerly and under ``jit``. Each method is a thin forwarder to the
``pyjax.numpy`` function of the same name, which is looked up at call time (so the modules that
define them may import this one's siblings freely).
"""
from __future__ import annotations

import importlib

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.trace import Tracer
from pyjax._src.dispatch import eager as dispatch
from pyjax._src.lax import elementwise as lax
from pyjax._src.lax import shape_ops as lax_shape
from pyjax._src.numpy import array_api
from pyjax._src.numpy import creation
from pyjax._src.numpy import ufuncs

# Modules searched, in order, for the functions the methods forward to.
_MODULES = ("ufuncs", "creation", "reductions", "shape", "products", "indexing")
_fn_cache: dict = {}


def _jnp(name):
    fn = _fn_cache.get(name)
    if fn is not None:
        return fn
    for mod in _MODULES:
        m = importlib.import_module(f"pyjax._src.numpy.{mod}")
        if name in getattr(m, "__all__", ()) or (mod == "indexing" and hasattr(m, name)):
            fn = getattr(m, name, None)
            if fn is not None:
                _fn_cache[name] = fn
                return fn
    raise NotImplementedError(f"pyjax.numpy.{name} (needed by the array method) is not "
                              "implemented yet")


# ---------------------------------------------------------------------------------------
# operators
# ---------------------------------------------------------------------------------------

_ACCEPTED = (ArrayImpl, Tracer, np.ndarray, np.generic, bool, int, float, complex)
_REJECTED = (list, tuple, set, frozenset, dict)


def _accepts(other, opchar, self):
    if isinstance(other, _ACCEPTED) or hasattr(other, "__jax_array__"):
        return True
    if isinstance(other, _REJECTED):  # as in JAX: a TypeError, not a fall-back to identity
        raise TypeError(f"unsupported operand type(s) for {opchar}: "
                        f"'{type(self).__name__}' and '{type(other).__name__}'")
    return False


# Where both operands already share a dtype (a Python scalar is weakly typed and takes the
# array's; two arrays of one aval) the jnp function is the bare primitive: the eager hot path
# of ``x + 1.0`` goes from the operator straight to PJRT (dispatch.eager_binary). Each entry
# says for which dtype kinds that holds (true division of integers is not ``div``; bool ``+``
# is ``or``; the ordered comparisons of complex numbers are lexicographic). Reflected forms
# swap the operands. Comparisons cannot tell 0.0 from -0.0, so ``x > 0`` is fast too.
_FAST = {"add": (lax.add_p, "iufc"), "subtract": (lax.sub_p, "iufc"),
         "multiply": (lax.mul_p, "iufc"), "true_divide": (lax.div_p, "fc"),
         "equal": (lax.eq_p, "biufc"), "not_equal": (lax.ne_p, "biufc"),
         "less": (lax.lt_p, "biuf"), "less_equal": (lax.le_p, "biuf"),
         "greater": (lax.gt_p, "biuf"), "greater_equal": (lax.ge_p, "biuf")}
_COMPARES = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}


def _binop(opchar, fn_name, swapped=False):
    spec = _FAST.get(fn_name)
    if spec is not None:
        with_float, with_int, with_array = dispatch.eager_binary(
            spec[0], spec[1], swapped, signed_zeros=fn_name not in _COMPARES)

    def op(self, other):
        if spec is not None and type(self) is ArrayImpl:
            t = type(other)
            r = (with_float(self, other) if t is float else with_int(self, other)
                 if t is int else with_array(self, other) if t is ArrayImpl else None)
            if r is not None:
                return r
        if not _accepts(other, opchar, self):
            return NotImplemented
        return _jnp(fn_name)(other, self) if swapped else _jnp(fn_name)(self, other)
    op.__name__ = ("r" if swapped else "") + fn_name
    return op


def _rbinop(opchar, fn_name):
    return _binop(opchar, fn_name, swapped=True)


_BINOPS = [
    ("add", "+", "add"), ("sub", "-", "subtract"), ("mul", "*", "multiply"),
    ("truediv", "/", "true_divide"), ("floordiv", "//", "floor_divide"),
    ("mod", "%", "remainder"), ("divmod", "divmod()", "divmod"), ("matmul", "@", "matmul"),
    ("and", "&", "bitwise_and"), ("or", "|", "bitwise_or"), ("xor", "^", "bitwise_xor"),
    ("lshift", "<<", "left_shift"), ("rshift", ">>", "right_shift"),
]
_COMPARISONS = [("eq", "==", "equal"), ("ne", "!=", "not_equal"), ("lt", "<", "less"),
                ("le", "<=", "less_equal"), ("gt", ">", "greater"),
                ("ge", ">=", "greater_equal")]


def _power_op(swapped):
    # not in _binop: ``pow()`` has a third argument, which is refused
    def op(self, other, mod=None):
        if mod is not None:
            raise NotImplementedError("three-argument pow() is not supported for pyjax arrays")
        if not _accepts(other, "**", self):
            return NotImplemented
        return ufuncs.power(other, self) if swapped else ufuncs.power(self, other)
    op.__name__ = "rpow" if swapped else "pow"
    return op


_pow, _rpow = _power_op(False), _power_op(True)


def _round_op(self, ndigits=None):
    return ufuncs.round(self, 0 if ndigits is None else ndigits)


# ---------------------------------------------------------------------------------------
# properties
# ---------------------------------------------------------------------------------------

def _T(self):
    return _jnp("transpose")(self)


def _mT(self):
    if self.ndim < 2:
        raise ValueError(f"matrix transpose with ndim < 2 is undefined, got an array of shape "
                         f"{self.shape}")
    return _jnp("swapaxes")(self, -1, -2)


def _real(self):
    return ufuncs.real(self)


def _imag(self):
    return ufuncs.imag(self)


def _at(self):
    return _jnp("at_property")(self)


# ---------------------------------------------------------------------------------------
# methods
# ---------------------------------------------------------------------------------------

def _forward(name):
    def method(self, *args, **kwargs):
        return _jnp(name)(self, *args, **kwargs)
    method.__name__ = name
    method.__doc__ = f"Same as ``pyjax.numpy.{name}(self, ...)``."
    return method


def _getitem(self, idx):
    return _jnp("getitem")(self, idx)


def _is_shape_arg(a):
    return isinstance(a, (tuple, list)) or (hasattr(a, "shape") and np.ndim(a) == 1)


def _reshape(self, *args, order="C", **kwargs):
    """``x.reshape(2, 3)`` or ``x.reshape((2, 3))`` (one dimension may be -1)."""
    if "shape" in kwargs:
        if args:
            raise TypeError("reshape() got both positional and keyword shape arguments")
        newshape = kwargs.pop("shape")
    elif len(args) == 1 and _is_shape_arg(args[0]):
        newshape = tuple(args[0])
    else:
        newshape = args
    if kwargs:
        raise TypeError(f"reshape() got unexpected keyword arguments {sorted(kwargs)}")
    return _jnp("reshape")(self, newshape, order=order)


def _transpose(self, *args):
    """``x.transpose()``, ``x.transpose(1, 0)`` or ``x.transpose((1, 0))``."""
    if not args:
        axes = None
    elif len(args) == 1 and (args[0] is None or _is_shape_arg(args[0])):
        axes = args[0]
    else:
        axes = args
    return _jnp("transpose")(self, axes)


def _astype(self, dtype, copy=False, device=None):
    return creation.astype(self, dtype, copy=copy, device=device)


def _ravel(self, order="C"):
    return _jnp("ravel")(self, order)


def _clip(self, min=None, max=None, **kwargs):  # noqa: A002 - NumPy's names
    return ufuncs.clip(self, min, max, **kwargs)


def _round(self, decimals=0, out=None):
    return ufuncs.round(self, decimals, out)


def _copy(self):
    return creation.array(self, copy=True)


def _view(self, dtype=None, type=None):  # noqa: A002 - NumPy's names
    """A reinterpretation of the bits as ``dtype`` (a changed item size changes the last
    dimension, as in NumPy)."""
    if type is not None:
        raise NotImplementedError("`type` argument of array.view() is not supported.")
    if dtype is None:
        return self
    dt = dtypes.check_user_dtype(dtype, "view")
    x = self
    src = x.dtype
    if dt == src:
        return x
    if dtypes.is_bool(src):
        x, src = lax.convert_element_type(x, np.uint8), np.dtype(np.uint8)
    out_bool = dtypes.is_bool(dt)
    target = np.dtype(np.uint8) if out_bool else dt
    if target == src:
        out = x
    elif target.itemsize == src.itemsize:
        out = lax.bitcast_convert_type(x, target)
    else:
        shape = tuple(x.shape)
        if not shape:
            raise ValueError("Changing the dtype of a 0d array is only supported if the "
                             "itemsize is unchanged")
        if src.itemsize > target.itemsize:
            ratio = src.itemsize // target.itemsize
            out = lax.bitcast_convert_type(x, target)
            out = lax_shape.reshape(out, shape[:-1] + (shape[-1] * ratio,))
        else:
            ratio = target.itemsize // src.itemsize
            if shape[-1] % ratio:
                raise ValueError("When changing to a larger dtype, its size must be a divisor "
                                 "of the total size in bytes of the last axis of the array.")
            out = lax_shape.reshape(x, shape[:-1] + (shape[-1] // ratio, ratio))
            out = lax.bitcast_convert_type(out, target)
    if out_bool:
        out = lax.ne(out, np.uint8(0))
    return out


def _item(self, *args):
    return np.asarray(self).item(*args)  # a tracer raises its concretization error


def _tolist(self):
    return np.asarray(self).tolist()


_FORWARDED = ["sum", "mean", "max", "min", "argmax", "argmin", "prod", "all", "any", "cumsum",
              "cumprod", "std", "var", "ptp", "squeeze", "swapaxes", "take", "repeat", "sort",
              "argsort", "nonzero", "trace", "diagonal", "dot", "conj", "conjugate",
              "searchsorted", "argpartition", "compress", "choose", "nansum", "nanmean"]


def _attach(cls):
    for dunder, opchar, fn_name in _BINOPS:
        setattr(cls, f"__{dunder}__", _binop(opchar, fn_name))
        setattr(cls, f"__r{dunder}__", _rbinop(opchar, fn_name))
    for dunder, opchar, fn_name in _COMPARISONS:
        setattr(cls, f"__{dunder}__", _binop(opchar, fn_name))
    cls.__pow__ = _pow
    cls.__rpow__ = _rpow
    cls.__neg__ = lambda self: ufuncs.negative(self)
    cls.__pos__ = lambda self: ufuncs.positive(self)
    cls.__abs__ = lambda self: ufuncs.absolute(self)
    cls.__invert__ = lambda self: ufuncs.invert(self)
    cls.__round__ = _round_op
    cls.__getitem__ = _getitem
    cls.__array_namespace__ = array_api.array_namespace
    cls.to_device = array_api.to_device
    if cls is ArrayImpl:  # a tracer has no data to export
        cls.__dlpack__ = array_api.dlpack
        cls.__dlpack_device__ = array_api.dlpack_device
    cls.T = property(_T)
    cls.mT = property(_mT)
    cls.real = property(_real)
    cls.imag = property(_imag)
    cls.at = property(_at)
    for name in _FORWARDED:
        setattr(cls, name, _forward(name))
    cls.reshape = _reshape
    cls.transpose = _transpose
    cls.astype = _astype
    cls.ravel = _ravel
    cls.flatten = _ravel
    cls.clip = _clip
    cls.round = _round
    cls.copy = _copy
    cls.view = _view
    if "item" not in cls.__dict__:
        cls.item = _item
    if "tolist" not in cls.__dict__:
        cls.tolist = _tolist
    if not hasattr(cls, "itemsize"):
        cls.itemsize = property(lambda self: self.dtype.itemsize)
    if not hasattr(cls, "nbytes"):
        cls.nbytes = property(lambda self: self.size * self.dtype.itemsize)


_attach(ArrayImpl)
_attach(Tracer)
