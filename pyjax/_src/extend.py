"""What `jax.extend` offers libraries: the current-trace token, `linear_util.WrappedFun`,
effects, and the mapped/unmapped avals of batching."""
from pyjax._src.core import trace as trace_mod


class OpaqueTraceState:
    """A token for the trace active when it was made: equal to another exactly when both were
    made under the same trace (libraries compare them to refuse cross-trace mutation)."""

    __slots__ = ("_trace",)

    def __init__(self, trace):
        self._trace = trace

    def __eq__(self, other):
        return isinstance(other, OpaqueTraceState) and self._trace is other._trace

    def __hash__(self):
        return id(self._trace)


def get_opaque_trace_state(convention=None):
    return OpaqueTraceState(trace_mod.current_trace())


def find_top_trace(xs):
    """The innermost trace among the tracers in `xs` (the one with most parents), else the
    current one."""
    def depth(t):
        n = 0
        while t is not None:
            t, n = getattr(t, "parent", None), n + 1
        return n
    traces = [x._trace for x in xs if isinstance(x, trace_mod.Tracer)]
    return max(traces, key=depth) if traces else trace_mod.current_trace()


class Effect:
    """Base class of side effects a primitive declares."""


def mapped_aval(size, axis, aval):
    """The aval of one slice of `aval` along `axis` (None: not mapped)."""
    if axis is None:
        return aval
    shape = list(aval.shape)
    if shape[axis] != size:
        raise ValueError(f"mapped_aval: axis {axis} of {aval} has size {shape[axis]}, "
                         f"expected {size}")
    del shape[axis]
    return aval.update(shape=tuple(shape))


def unmapped_aval(size, axis, aval, *unused):
    """The aval of `size` stacked copies of `aval` along `axis` (None: not mapped)."""
    if axis is None:
        return aval
    shape = list(aval.shape)
    shape.insert(axis, size)
    return aval.update(shape=tuple(shape))


class WrappedFun:
    """A function with its debug info, as `jax.extend.linear_util.WrappedFun`."""

    def __init__(self, f, params=None, debug_info=None):
        self.f, self.params, self.debug_info = f, dict(params or {}), debug_info

    def call_wrapped(self, *args, **kwargs):
        return self.f(*args, **self.params, **kwargs)

    @property
    def __name__(self):
        return getattr(self.f, "__name__", "<unnamed function>")


def wrap_init(f, params=None, *, debug_info=None):
    return WrappedFun(f, params, debug_info)


_EXCLUDED_PATHS = []


def register_exclusion(path):
    """Record a path whose frames JAX hides from user tracebacks. pyjax does not filter
    tracebacks, so the paths are only recorded."""
    _EXCLUDED_PATHS.append(path)

