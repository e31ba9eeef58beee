"""Traces, tracers and the current-trace context (the stackless model of DESIGN.md).

``Primitive.bind`` hands each call to ``current_trace()``. Outside any transformation that is
the eager evaluation trace (registered by ``dispatch/eager.py``). A transformation sets
its own trace for the duration of the user function; each trace keeps its parent so nested
transformations of closures never confuse their values.
"""
from __future__ import annotations

import itertools
import threading

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core import errors
from pyjax._src.core.abstract import ShapedArray

_EVAL_TRACE = None  # set by dispatch.eager


class _TraceState(threading.local):
    trace = None
    name_stack = ""  # "outer/inner" inside jax.named_scope blocks (staged equations keep it)
    # Inside `jax.ensure_compile_time_eval()`: a primitive applied to no tracer runs eagerly
    # even under a transformation; one applied to tracers goes to the trace as usual.
    compile_time_eval = False


_state = _TraceState()


def set_eval_trace(trace):
    global _EVAL_TRACE
    _EVAL_TRACE = trace


def current_trace():
    t = _state.trace
    return _EVAL_TRACE if t is None else t


def is_eager():
    return _state.trace is None or _state.trace is _EVAL_TRACE


class set_current_trace:
    """Context manager: run a block under ``trace`` (``None`` means eager)."""

    __slots__ = ("trace", "prev")

    def __init__(self, trace):
        self.trace = trace

    def __enter__(self):
        self.prev = _state.trace
        _state.trace = self.trace
        return self.trace

    def __exit__(self, *exc):
        _state.trace = self.prev
        return False


_trace_ids = itertools.count()


class Trace:
    """Base class of all transformations' traces."""

    def __init__(self, parent=None):
        self.parent = parent
        self.live = True
        self.id = next(_trace_ids)

    def process_primitive(self, primitive, args, params):  # pragma: no cover - abstract
        raise NotImplementedError

    def describe_tracer(self, tracer) -> str:
        return f"{tracer.aval.str_short()}"

    def finish(self):
        self.live = False

    @property
    def main(self):
        """What identifies this trace (JAX's deprecated ``Trace.main``, its tag there): the
        trace itself. equinox's ``filter_jvp`` tells its own tracers by it."""
        return self

    def __repr__(self):
        return f"{type(self).__name__}(id={self.id})"


def _referrer_desc(obj, tracer):
    """``<type>`` and where in it the tracer sits, as JAX prints a leaked tracer's referrers."""
    where = ""
    if isinstance(obj, (list, tuple)):
        where = next((f"[{i}]" for i, x in enumerate(obj) if x is tracer), "")
    elif isinstance(obj, dict):
        where = next((f"[{k!r}]" for k, x in obj.items() if x is tracer), "")
    elif hasattr(obj, "f_code"):  # a frame still running
        return f"the frame of {obj.f_code.co_name} at {obj.f_code.co_filename}:{obj.f_lineno}"
    return f"<{type(obj).__name__} {id(obj):#x}>{where}"


def check_no_leaks(trace):
    """``jax_check_tracer_leaks``: raise when a tracer of the finished ``trace`` is still
    referenced (stored in a global, a closure or an attribute). Costs a garbage collection,
    so it runs only while the flag is on; callers drop their own references first."""
    import gc
    import sys
    gc.collect()
    me = sys._getframe()
    leaked = [r for r in gc.get_referrers(trace) if isinstance(r, Tracer) and r._trace is trace]
    if not leaked:
        return
    lines = []
    for t in leaked:
        lines.append(repr(t))
        for r in gc.get_referrers(t):
            if r is leaked or r is me:
                continue
            lines.append(f"{repr(t)} is referred to by {_referrer_desc(r, t)}")
    del leaked
    raise Exception(f"Leaked trace {type(trace).__name__}. Leaked tracer(s):\n\n"
                    + "\n".join(lines))


def check_tracer_live(tracer):
    if not tracer._trace.live:
        raise errors.UnexpectedTracerError(
            f"Encountered an unexpected tracer: {tracer!r}. A tracer made while transforming a "
            "function was used after that transformation finished, typically because it was "
            "stored in a global, an attribute or a closure that outlived the call (a side effect). "
            "Return values from transformed functions instead of storing them.")


class Tracer:
    """A stand-in for an array while a function is being transformed."""

    __slots__ = ("_trace", "__weakref__")
    __array_priority__ = 1000

    @property
    def aval(self) -> ShapedArray:  # pragma: no cover - abstract
        raise NotImplementedError

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)

    def to_concrete_value(self):
        """The concrete value behind this tracer, or None when it is abstract."""
        return None

    def to_concrete_constant(self):
        """The concrete value behind this tracer when no derivative flows through it, else None.

        A JVP tracer whose primal is concrete but whose tangent is nonzero has a concrete value
        and is not a constant. As in JAX, ``float``, ``complex``, ``item``, ``tolist`` and
        ``__array__`` refuse it (a Python or NumPy value has no derivative, so the result's
        derivative would silently be wrong), while ``bool``, ``int`` and ``__index__`` take
        the concrete value: Python control flow works under eager ``grad``, and the
        functions those conversions make of the value are piecewise constant (derivative 0)."""
        return self.to_concrete_value()

    def _concrete(self, fn_name, err_cls):
        check_tracer_live(self)
        val = self.to_concrete_value()
        if val is None:
            ctx = (f"The problem arose with the `{fn_name}` function. "
                   + self._trace.describe_tracer(self) + "\n")
            raise err_cls(f"{self.aval.str_short()}", ctx)
        return val

    def _constant(self, what, err_cls):
        """The value for a conversion that would drop a derivative (``to_concrete_constant``);
        ``what`` names the conversion in the error."""
        check_tracer_live(self)
        val = self.to_concrete_constant()
        if val is None:
            if self.to_concrete_value() is None:  # abstract (under jit, vmap, ...)
                raise err_cls(self.aval.str_short(), f"The problem arose with {what}. "
                              + self._trace.describe_tracer(self) + "\n")
            raise err_cls(
                self.aval.str_short(),
                f"The problem arose with {what}. The value is being differentiated (it "
                "carries a nonzero tangent of grad, jvp, linearize, vjp or a jacobian) and a "
                "Python or NumPy value has no derivative, so converting it would silently drop "
                "the derivative.\n",
                "Keep it an array (pyjax.numpy functions instead of numpy ones; "
                "`x.astype(dtype)` instead of `float(x)`), or apply `lax.stop_gradient` to it "
                "first if it is meant to be a constant.")
        return val

    def __bool__(self):
        if self.size != 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        return bool(self._concrete("bool", errors.TracerBoolConversionError))

    def __int__(self):
        return int(self._concrete("int", errors.TracerIntegerConversionError))

    def __index__(self):
        if not dtypes.is_integer(self.dtype) and not dtypes.is_bool(self.dtype):
            raise TypeError(f"only integer arrays can be used as an index, got {self.dtype}")
        return int(self._concrete("__index__", errors.TracerIntegerConversionError))

    def __float__(self):
        return float(self._constant("the `float` function", errors.ConcretizationTypeError))

    def __complex__(self):
        return complex(self._constant("the `complex` function", errors.ConcretizationTypeError))

    def __array__(self, dtype=None, copy=None):
        val = self._constant("the numpy.ndarray conversion (np.asarray, np.array or a NumPy "
                             "function)", errors.TracerArrayConversionError)
        return np.asarray(val, dtype=dtype)

    def item(self, *args):
        return np.asarray(self._constant("the item() method",
                                         errors.ConcretizationTypeError)).item(*args)

    def tolist(self):
        return np.asarray(self._constant("the tolist() method",
                                         errors.ConcretizationTypeError)).tolist()

    def __hash__(self):
        raise TypeError(f"unhashable type: {type(self).__name__} (traced arrays are not hashable)")

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __setitem__(self, idx, value):
        raise TypeError(
            f"'{type(self).__name__}' object does not support item assignment. pyjax arrays are "
            "immutable. Instead of ``x[idx] = y``, use ``x = x.at[idx].set(y)`` or another "
            ".at[] method: https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")

    def __repr__(self):
        return f"Traced<{self.aval.str_short()}>with<{type(self._trace).__name__}>"


# ---- abstract values of concrete Python / NumPy things ----

aval_handlers: dict[type, object] = {}


_int_avals: dict = {}  # x64 flag -> (min, max, aval): Python ints are looked up very often


def _int_aval(x):
    x64 = dtypes.x64_enabled()
    hit = _int_avals.get(x64)
    if hit is None:
        dt = dtypes.python_scalar_dtype(0)
        info = np.iinfo(dt)
        hit = _int_avals[x64] = (int(info.min), int(info.max), ShapedArray((), dt, True))
    lo, hi, aval = hit
    if not lo <= x <= hi:
        raise OverflowError(f"Python int {x} too large to convert to {aval.dtype.name}")
    return aval


def _numpy_aval(x):
    return ShapedArray.interned(x.shape, dtypes.canonicalize_dtype(x.dtype), False)


aval_handlers[bool] = lambda x: ShapedArray((), np.dtype(bool), False)
aval_handlers[int] = _int_aval
_weak_avals: dict = {}  # (type, x64 flag) -> the weakly typed aval of Python floats/complexes


def _weak_scalar_aval(x):
    key = (type(x), dtypes.x64_enabled())
    a = _weak_avals.get(key)
    if a is None:
        a = _weak_avals[key] = ShapedArray((), dtypes.python_scalar_dtype(x), True)
    return a


aval_handlers[float] = _weak_scalar_aval
aval_handlers[complex] = _weak_scalar_aval
aval_handlers[np.ndarray] = _numpy_aval


def get_aval(x) -> ShapedArray:
    """The abstract value of a tracer, Array, Python scalar or NumPy value."""
    h = aval_handlers.get(type(x))
    if h is not None:
        return h(x)
    if isinstance(x, Tracer):
        return x.aval
    if isinstance(x, np.generic):
        return _numpy_aval(x)
    if isinstance(x, (bool, np.bool_)):
        return aval_handlers[bool](x)
    if isinstance(x, int):
        return _int_aval(int(x))
    if isinstance(x, float):
        return aval_handlers[float](float(x))
    if isinstance(x, complex):
        return aval_handlers[complex](complex(x))
    if isinstance(x, np.ndarray):
        return _numpy_aval(x)
    if hasattr(x, "__jax_array__"):
        return get_aval(x.__jax_array__())
    raise TypeError(f"Value {x!r} with type {type(x)} is not a valid pyjax type: expected an "
                    "array, a NumPy array or a Python bool, int, float or complex scalar.")


def aval_of(x) -> ShapedArray:
    """The abstract value of ``x``: its ``aval`` attribute when it has one (arrays, tracers,
    key arrays), else ``get_aval(x)``."""
    a = getattr(x, "aval", None)
    return a if a is not None and not isinstance(x, type) else get_aval(x)


def shape_of(x) -> tuple:
    """The shape of an array, tracer or host value (Python scalars and sequences included)."""
    s = getattr(x, "shape", None)
    return tuple(s) if s is not None and not isinstance(x, type) else tuple(np.shape(x))


def is_valid_jaxtype(x) -> bool:
    try:
        get_aval(x)
        return True
    except (TypeError, OverflowError):
        return False
