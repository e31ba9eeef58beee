"""Mutable array references (`jax.Ref`): the box, its abstract value, and the frames that
discharge its state while functions are traced.

pyjax discharges refs at trace time. A `Ref` is a Python box holding its current value: an
`Array` eagerly, a tracer while the function that owns it is being transformed. Reads and
writes are ordinary array operations on that value (indexing, ``.at[...].set``; the indexing
lives in `pyjax/_src/state/`), so every transformation (grad, vmap, jit) sees pure code and no
primitive or rule is needed.

What needs care is a ref used inside a function that is traced to a Jaxpr (jit, a loop body,
a branch) but created outside it: the Jaxpr must take the ref's value as an input and return
its final value, and the caller must store that value back. Every `staging.trace_to_jaxpr`
pushes a `Frame`. Touching a ref owned by an outer frame registers it in every frame between
(saving its state), and the trace then fails with `RefsTouched` after restoring it. `jit`,
`scan`, `while_loop` and `cond` catch that exception and trace again with the refs threaded
through as explicit inputs and outputs (`threaded`); any other transformation lets it reach
the user as a NotImplementedError naming the transformation, instead of silently baking the
ref's value into a cached Jaxpr.
"""
from __future__ import annotations

import threading

import numpy as np

from pyjax._src.core import trace as trace_mod
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.trace import Tracer

_state = trace_mod._state


class AbstractRef:
    """The type of a mutable reference to an array of type ``inner_aval`` (`jax.ref.AbstractRef`);
    ``jax.typeof(ref)`` prints as ``Ref{float32[3]}``."""

    __slots__ = ("inner_aval", "memory_space", "kind")

    def __init__(self, inner_aval, memory_space=None, kind=None):
        self.inner_aval = inner_aval
        self.memory_space = memory_space
        self.kind = kind

    shape = property(lambda self: self.inner_aval.shape)
    dtype = property(lambda self: self.inner_aval.dtype)
    ndim = property(lambda self: len(self.inner_aval.shape))
    size = property(lambda self: int(np.prod(self.inner_aval.shape, dtype=np.int64)))
    weak_type = property(lambda self: self.inner_aval.weak_type)

    def __eq__(self, other):
        return (type(other) is AbstractRef and self.inner_aval == other.inner_aval
                and self.memory_space == other.memory_space and self.kind == other.kind)

    def __hash__(self):
        return hash((AbstractRef, self.inner_aval, self.memory_space, self.kind))

    def str_short(self):
        return f"Ref{{{self.inner_aval.str_short()}}}"

    def __repr__(self):
        a = self.inner_aval
        return f"Ref{{{a.dtype.name}[{','.join(map(str, a.shape))}]}}"

    __str__ = __repr__


# ---- frames ----

class Frame:
    """One function being traced (or the eager level at the bottom): the refs it touched that
    an outer frame owns, with the state each had when first touched."""

    __slots__ = ("trace", "touched")

    def __init__(self, trace):
        self.trace = trace
        self.touched = {}  # id(ref) -> (ref, saved state)


EAGER = Frame(None)  # owns every ref made outside any trace, in every thread


class _Stack(threading.local):
    def __init__(self):
        self.frames = [EAGER]


_stack = _Stack()


def depth():
    return len(_stack.frames)


def push_frame(trace):
    f = Frame(trace)
    _stack.frames.append(f)
    return f


def pop_frame(frame):
    """Pop ``frame`` and put back the refs it touched; returns them (registration order)."""
    frames = _stack.frames
    assert frames[-1] is frame, "ref frames popped out of order"
    frames.pop()
    touched = list(frame.touched.values())
    for ref, saved in reversed(touched):
        ref._restore(saved)
    return [r for r, _ in touched]


class RefsTouched(NotImplementedError):
    """A function being traced used mutable array references that an outer frame owns.
    `jit`, `scan`, `while_loop` and `cond` catch it and trace again with the refs threaded
    through; anything else shows it to the user."""

    def __init__(self, refs, transform, fun_name, frame_depth):
        self.refs = refs
        self.depth = frame_depth  # the depth of the frame that raised it
        types = ", ".join(str(r.aval) for r in refs)
        super().__init__(
            f"the function {fun_name} traced for {transform} uses mutable array "
            f"reference(s) of type {types} created outside it; pyjax threads such references "
            "through jit, lax.scan, lax.fori_loop, lax.while_loop and lax.cond only (pass the "
            "values in and out explicitly for other transformations).")


class RefArgument(RefsTouched):
    """A Ref passed as an argument of a jitted function (no trace was attempted)."""

    def __init__(self):
        NotImplementedError.__init__(
            self, "a mutable array reference was passed as an argument of a function traced "
            "without being run (make_jaxpr, eval_shape, jit(...).trace/.lower); pyjax threads "
            "ref arguments only through calls of jitted functions, vmap and grad")
        self.refs = []
        self.depth = depth() + 1


def check_no_refs_returned(outs, debug_info):
    """JAX's error for a traced function returning a Ref."""
    for x in outs:
        if type(x) is Ref:
            name = getattr(debug_info, "fun_name", "fun")
            how = getattr(debug_info, "transform", "jit")
            raise ValueError(
                f"function {name} traced for {how} returned a mutable array reference of type "
                f"{x.aval}, but mutable array references cannot be returned.")


# ---- the box ----

def _level_error(ref, value_trace):
    kind = type(value_trace).__name__
    if "JVP" in kind or "PartialEval" in kind or "Grad" in kind:
        return Exception(
            "performing a set/swap operation with a differentiated value on a "
            f"non-differentiated array reference of type {ref.aval}. Move the array "
            "reference to be an argument of the differentiated function?")
    if "Batch" in kind:
        return Exception(
            "performing a set/swap operation with vmapped value on an unbatched array "
            f"reference of type {ref.aval}. Move the array reference to be an argument to "
            "the vmapped function?")
    return Exception(
        f"performing a set/swap operation with a value traced by {kind} on an array "
        f"reference of type {ref.aval} made outside that transformation. Move the array "
        "reference to be an argument of the transformed function?")


def _constant_part(value):
    """A JVP tracer with a zero tangent or an unbatched batch tracer is a constant of the
    transformation: its inner value can be stored in an outer ref (JAX's stop_gradient)."""
    while isinstance(value, Tracer):
        tangent = getattr(value, "tangent", _MISSING)
        if tangent is not _MISSING and type(tangent).__name__ == "Zero":
            value = value.primal
            continue
        if getattr(value, "batch_dim", _MISSING) is None and hasattr(value, "val"):
            value = value.val
            continue
        return value
    return value


_MISSING = object()


class Ref:
    """A mutable array reference (`jax.Ref`): make one with ``jax.new_ref(x)``; read it with
    ``ref[idx]``, write it with ``ref[idx] = v`` or ``ref[idx] += v``."""

    __slots__ = ("_value", "_aval", "_frame", "_trace", "_frozen", "_owned", "__weakref__")
    __array_priority__ = 1000

    def __init__(self, value, inner_aval, memory_space=None, kind=None):
        self._value = value
        self._aval = AbstractRef(inner_aval, memory_space, kind)
        self._frame = _stack.frames[-1]
        self._trace = _state.trace
        self._frozen = False
        # Whether the value is an array nothing outside this ref holds (made by a write, never
        # handed out whole): then a jitted update may donate its buffer (jit_refs.py).
        self._owned = False

    # -- state kept while frames borrow the ref --
    def _saved(self):
        return (self._value, self._frame, self._trace, self._frozen, self._owned)

    def _restore(self, saved):
        self._value, self._frame, self._trace, self._frozen, self._owned = saved

    def _enter(self):
        """Make the current frame able to use this ref (register it in the frames between)."""
        frames = _stack.frames
        top = frames[-1]
        if self._frame is top:
            return
        between = []
        for f in reversed(frames):
            if f is self._frame:
                break
            between.append(f)
        else:
            raise ValueError(
                f"a mutable array reference of type {self.aval} was used after the function "
                "that created it finished tracing (it was stored outside that function).")
        for f in reversed(between):  # outermost first
            if id(self) not in f.touched:
                f.touched[id(self)] = (self, self._saved())
            self._frame, self._trace = f, f.trace

    def _check_live(self, op):
        if self._frozen:
            inner = self._aval.inner_aval
            raise ValueError(f"`{op}` must be called on `Ref` types: "
                             f"{inner.dtype.name}[{','.join(map(str, inner.shape))}] (the "
                             "reference was frozen or freed).")

    def _read(self):
        """The whole current value."""
        self._enter()
        self._check_live("get")
        return self._value

    def _write(self, value, owned=False):
        """Replace the whole value by ``value`` (an array of the ref's shape and dtype);
        ``owned`` when nothing else holds it (a fresh result)."""
        self._enter()
        self._check_live("swap")
        mine = self._trace
        if isinstance(value, Tracer) and _state.trace is not mine:
            # Inside a transformation the ref is outside of: only values of the ref's own
            # trace or of traces around it may be stored (JAX's rule for grad and vmap).
            value = _constant_part(value)
            if isinstance(value, Tracer):
                trace_mod.check_tracer_live(value)
                t = value._trace
                outer = mine
                while outer is not None and outer is not t:
                    outer = outer.parent
                if outer is None:
                    raise _level_error(self, t)
        self._value = value
        self._owned = owned

    # -- what a Ref is --
    @property
    def aval(self):
        return self._aval

    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)
    ndim = property(lambda self: self._aval.ndim)
    size = property(lambda self: self._aval.size)
    weak_type = property(lambda self: self._aval.weak_type)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        raise TypeError(f"iteration over a mutable array reference ({self.aval}) is not "
                        "supported; read it first: ref[...]")

    def __array__(self, dtype=None, copy=None):
        raise TypeError(f"a mutable array reference ({self.aval}) cannot be converted to a "
                        "NumPy array; read it first: np.asarray(ref[...])")

    def __bool__(self):
        raise TypeError(f"the truth value of a mutable array reference ({self.aval}) is "
                        "undefined; read it first: ref[...]")

    @property
    def at(self):
        raise NotImplementedError("Ref.at: indexed views of a mutable array reference are not "
                                  "supported by pyjax; index the ref directly (ref[idx] = v)")

    def __repr__(self):
        value = self._value
        if isinstance(value, Tracer) or self._frame is not EAGER:
            return f"Traced<{self._aval.str_short()}>"
        text = repr(value)
        return "Ref" + text[text.index("("):] if text.startswith("Array(") else f"Ref({text})"

    # indexing: installed by pyjax/_src/state (it needs jnp indexing, a higher layer)
    def __getitem__(self, idx):
        return _ops.get(self, idx)

    def __setitem__(self, idx, value):
        _ops.set(self, idx, value)

    def addupdate(self, x, idx=()):
        """``ref[idx] += x`` without reading ``ref[idx]`` in user code."""
        _ops.addupdate(self, idx, x)


class _NoOps:
    def __getattr__(self, name):
        raise RuntimeError("pyjax._src.state is not imported: Ref indexing is unavailable")


_ops = _NoOps()


def set_ops(ops):
    """Install the indexing operations (`pyjax/_src/state/ops.py`)."""
    global _ops
    _ops = ops


class threaded:
    """``with threaded(refs, values) as t:`` run code in which each of ``refs`` belongs to the
    current (top) frame and holds the matching value of ``values`` (tracers of the trace being
    built); ``t.final()`` gives their values at the end; leaving restores them."""

    def __init__(self, refs, values):
        self.refs = list(refs)
        self.values = list(values)

    def __enter__(self):
        top = _stack.frames[-1]
        self.saved = [r._saved() for r in self.refs]
        for r, v in zip(self.refs, self.values):
            r._value, r._frame, r._trace = v, top, top.trace
        return self

    def final(self):
        """The refs' current values, each with the weak type it came in with (a loop carry
        or the results of two branches must keep one type)."""
        out = []
        for r, v0 in zip(self.refs, self.values):
            v = r._value
            weak = trace_mod.aval_of(v0).weak_type
            if trace_mod.aval_of(v).weak_type != weak:
                v = _ops.with_weak_type(v, weak)
            out.append(v)
        return out

    def written(self):
        """Which refs were written (their value is no longer the one they came in with)."""
        return [r._value is not v0 for r, v0 in zip(self.refs, self.values)]

    def __exit__(self, *exc):
        for r, s in zip(reversed(self.refs), reversed(self.saved)):
            r._restore(s)
        return False


def is_ref(x):
    return type(x) is Ref


def inner_aval_of(x) -> ShapedArray:
    return x._aval.inner_aval
