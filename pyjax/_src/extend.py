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


# ---- `jax.api_util`: flattening a WrappedFun's arguments and results ----

class _OutTree:
    """The thunk `flatten_fun*` return: the output treedef, known once the function ran."""

    def __init__(self):
        self.treedef = None

    def __call__(self):
        if self.treedef is None:
            raise RuntimeError("the output tree is known only after the flattened function "
                               "has been called")
        return self.treedef


def flatten_fun_nokwargs(fun, in_tree):
    """`(flat_fun, out_tree)`: `flat_fun(*leaves)` calls `fun(*tree_unflatten(in_tree, leaves))`
    and returns its flattened result; `out_tree()` is the result's treedef."""
    from pyjax._src.core import pytree
    out_tree = _OutTree()

    def flat(*leaves):
        out = fun.call_wrapped(*pytree.tree_unflatten(in_tree, leaves))
        flat_out, out_tree.treedef = pytree.tree_flatten(out)
        return flat_out
    return WrappedFun(flat, None, fun.debug_info), out_tree


def flatten_fun(fun, in_tree):
    """As `flatten_fun_nokwargs`, for `in_tree` the treedef of `(args, kwargs)`."""
    from pyjax._src.core import pytree
    out_tree = _OutTree()

    def flat(*leaves):
        args, kwargs = pytree.tree_unflatten(in_tree, leaves)
        flat_out, out_tree.treedef = pytree.tree_flatten(fun.call_wrapped(*args, **kwargs))
        return flat_out
    return WrappedFun(flat, None, fun.debug_info), out_tree



_EXCLUDED_PATHS = []


def register_exclusion(path):
    """Record a path whose frames JAX hides from user tracebacks. pyjax does not filter
    tracebacks, so the paths are only recorded."""
    _EXCLUDED_PATHS.append(path)



# ---- JAX-style primitives and rule tables (`jax.extend.core.Primitive`, `ad.primitive_jvps`) --

from pyjax._src.core.primitive import Primitive as _Primitive  # noqa: E402


def _no_rule(kind, name):
    def missing(*args, **params):
        raise NotImplementedError(f"primitive {name!r} has no {kind} rule")
    return missing


class JaxStylePrimitive(_Primitive):
    """A primitive built the way JAX's `Primitive(name)` is: rules given afterwards with
    `def_impl`, `def_abstract_eval` and the rule tables of `jax.interpreters` (which use
    pyjax's rule signatures, the same as JAX's). Not entered in pyjax's registry: libraries may
    declare several with one name, as JAX allows."""

    def __init__(self, name):  # noqa: super().__init__ would register the name
        self.name = name
        self.multiple_results = False
        self.impl = None
        self.linear = False
        self.effectful = False
        self.abstract_eval = _no_rule("abstract_eval", name)
        self.lower = None

    def def_impl(self, impl):
        self.impl = impl
        return impl

    def def_abstract_eval(self, abstract_eval):
        self.abstract_eval = abstract_eval
        return abstract_eval

    def def_effectful_abstract_eval(self, effectful_abstract_eval):
        def abstract_eval(*avals, **params):
            out, _effects = effectful_abstract_eval(*avals, **params)
            return out
        self.effectful = True
        self.abstract_eval = abstract_eval
        return effectful_abstract_eval


class RuleTable:
    """A JAX rule dictionary (`ad.primitive_jvps`, `batching.primitive_batchers`, ...) whose
    entries are the primitives' pyjax rules of one kind."""

    def __init__(self, kind, adapt=None):
        self.kind, self.adapt = kind, adapt

    def __setitem__(self, prim, rule):
        prim.def_rule(self.kind, self.adapt(rule) if self.adapt else rule)

    def __getitem__(self, prim):
        rule = getattr(prim, self.kind, None)
        if rule is None:
            raise KeyError(prim)
        return rule

    def __contains__(self, prim):
        return getattr(prim, self.kind, None) is not None

    def get(self, prim, default=None):
        return getattr(prim, self.kind, None) or default
