"""The ahead-of-time stages of a jitted function (``jax.stages``): ``jitted.trace(...)`` gives
a ``Traced`` (its Jaxpr and output structure), ``.lower()`` a ``Lowered`` (StableHLO text, or
XLA's HLO with ``dialect="hlo"``), ``.compile()`` a ``Compiled`` that runs the arguments it was
compiled for. The stages hold the ``Jitted`` and call its compile and run methods."""
from __future__ import annotations

from pyjax._src import runtime
from pyjax._src.core import pytree, pytree_data, refs
from pyjax._src.core.abstract import ShapeDtypeStruct
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.sharded_array import ShardedShapedArray
from pyjax._src.core.trace import get_aval
from pyjax._src.dispatch import eager as dispatch
from pyjax._src.interpreters import lowering
from pyjax._src.lowering import hlo_text
from pyjax._src.runtime.compile_options import DEFAULT_OPTION_OVERRIDES, option_overrides
from pyjax._src.runtime.errors import XlaRuntimeError
from pyjax._src.transformations import cost_model, spmd


def _leaf_aval(x):
    if type(x) is ArrayImpl:
        return x.aval
    if type(x) is refs.Ref:  # threaded by jit_refs.call
        raise refs.RefArgument()
    return get_aval(x)


def _check_dialect(dialect):
    if dialect not in (None, "stablehlo", "hlo"):
        raise ValueError(f"unknown dialect: {dialect}")


def _forget_host_copies(leaves, donated):
    # A donated array's buffer is gone: drop its host copy so that a later read raises.
    for x, d in zip(leaves, donated):
        if d and type(x) is ArrayImpl:
            x._npy = None


def _key_spec(sds, trailing, dtype):
    # a key array's output spec: its own shape and key dtype, as JAX's eval_shape gives
    return ShapeDtypeStruct(sds.shape[:len(sds.shape) - len(trailing)], dtype)


def _shape_dtype_tree(out_tree, avals):
    specs = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type,
                              sharding=a.sharding if type(a) is ShardedShapedArray else None)
             for a in avals]
    if pytree_data.has_data_nodes(out_tree):
        return pytree_data.collapse_data_leaves(out_tree, specs, _key_spec)
    return pytree.tree_unflatten(out_tree, specs)


class ArgInfo:
    """One argument of a traced call (``jax.stages.ArgInfo``): its abstract value (``shape``,
    ``dtype``) and whether it is donated."""
    __slots__ = ("_aval", "donated")

    def __init__(self, aval, donated):
        self._aval, self.donated = aval, bool(donated)

    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)

    def __repr__(self):
        return f"ArgInfo({self._aval.str_short()}, donated={self.donated})"


class _KeyAval:
    """A key array argument's abstract value as ``ArgInfo`` shows it (``key<fry>[3]``)."""
    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype

    def str_short(self):
        return f"{self.dtype}[{','.join(map(str, self.shape))}]"


def _key_arg_info(info, trailing, dtype):
    shape = info.shape[:len(info.shape) - len(trailing)]
    return ArgInfo(_KeyAval(shape, dtype), info.donated)


class _Stage:
    """What every AOT stage says about its call: ``in_tree``, ``args_info``, ``out_tree``,
    ``out_info`` (``_trace`` is the stage's Traced)."""

    # what users see: key arrays are leaves (core/pytree.py, "two views")
    @property
    def in_tree(self):
        return pytree_data.user_treedef(self._trace._key[0])

    @property
    def args_info(self):
        t = self._trace
        donated = t._donated or (False,) * len(t._key[2])  # () when nothing is donated
        infos = [ArgInfo(a, d) for a, d in zip(t._key[2], donated)]
        if pytree_data.has_data_nodes(t._key[0]):
            return pytree_data.collapse_data_leaves(t._key[0], infos, _key_arg_info)
        return pytree.tree_unflatten(t._key[0], infos)

    @property
    def out_tree(self):
        return pytree_data.user_treedef(self._trace._out_tree)

    @property
    def out_info(self):
        t = self._trace
        return _shape_dtype_tree(t._out_tree, t.jaxpr.out_avals)


class Traced(_Stage):
    """A jitted function traced for some arguments (``jitted.trace(...)``): its ``jaxpr``,
    its output structure (``out_info``) and ``lower()``."""

    def __init__(self, jitted, key, closed, out_tree, donated, leaves=()):
        self.jaxpr = closed
        self._jitted, self._key, self._out_tree, self._donated = jitted, key, out_tree, donated
        # an SPMD program: its arguments' shapes and layouts (what spmd.plan reads), else None
        self._spmd_args = None
        if spmd.is_spmd_call(jitted, closed, leaves):
            self._spmd_args = [ShapeDtypeStruct(a.shape, a.dtype,
                                                sharding=spmd.leaf_sharding(x))
                               for x, a in zip(leaves, key[2])]

    def _spmd_plan(self):
        return spmd.plan(self._jitted, self._key, self.jaxpr, self._out_tree, self._spmd_args)

    _trace = property(lambda self: self)

    def lower(self):
        return Lowered(self)


class Lowered(_Stage):
    def __init__(self, traced: Traced):
        self._traced = traced
        self._text = None

    _trace = property(lambda self: self._traced)

    def cost_analysis(self):
        """XLA's cost estimates (of the compiled program)."""
        return self.compile().cost_analysis()

    def as_text(self, dialect=None):
        """The program's StableHLO text, or with ``dialect="hlo"`` its (unoptimized) HLO
        module text."""
        _check_dialect(dialect)
        if dialect == "hlo":
            return self.compiler_ir("hlo").as_hlo_text()
        t = self._traced
        if self._text is None and t._spmd_args is not None:  # the module that is compiled
            mesh, in_sh, out_sh = t._spmd_plan()
            self._text = spmd.lower_text(t._jitted, t.jaxpr, mesh, in_sh, out_sh,
                                         t._donated or ())[0]
        if self._text is None:
            self._text = lowering.lower_module(self._traced.jaxpr.jaxpr,
                                               self._traced._jitted.__name__,
                                               donated_invars=self._traced._donated)
        return self._text

    def compiler_ir(self, dialect=None):
        """The StableHLO text, or with ``dialect="hlo"`` an ``XlaComputation`` (its
        ``as_hlo_text()``): XLA's own translation of that StableHLO before optimization,
        made by one more compile with XLA's dump options (PJRT has no call for it)."""
        _check_dialect(dialect)
        if dialect != "hlo":
            return self.as_text(dialect)
        if getattr(self, "_hlo", None) is None:
            if self._traced._jitted._spmd:
                raise NotImplementedError(
                    "compiler_ir(dialect='hlo') of a program with NamedSharding/PartitionSpec "
                    "shardings: the HLO is read back for single-device programs only; "
                    "as_text() gives the StableHLO")
            jitted = self._traced._jitted
            text, proto = runtime.get_client().unoptimized_hlo(
                self.as_text(), jitted._option_overrides or DEFAULT_OPTION_OVERRIDES)
            self._hlo = hlo_text.XlaComputation(text, proto)
        return self._hlo

    def compile(self, compiler_options=None):
        """The executable; ``compiler_options`` (XLA options, over the jit's own) compile a
        separate one."""
        t = self._traced
        if t._spmd_args is not None:
            if compiler_options is not None:
                raise NotImplementedError("Lowered.compile(compiler_options=...) of an SPMD "
                                          "program (arguments laid out over a mesh)")
            return Compiled(t._jitted, spmd.compiled_program(t._jitted, t._key, t.jaxpr,
                                                             t._out_tree, t._spmd_plan(),
                                                             t._donated),
                            t._key, t)
        if compiler_options is not None:
            merged = dict(t._jitted.compiler_options or {}, **compiler_options)
            entry = t._jitted._compile(t._key, t.jaxpr, t._out_tree, t._donated,
                                       overrides=option_overrides(merged))
            return Compiled(t._jitted, entry, t._key, t)
        entry = t._jitted._cache.get(t._key)
        if entry is None:
            entry = t._jitted._compile(t._key, t.jaxpr, t._out_tree, t._donated)
        return Compiled(t._jitted, entry, t._key, t)


class CompiledMemoryStats:
    """What ``Compiled.memory_analysis()`` returns: byte counts as attributes."""

    def __init__(self, **fields):
        self.__dict__.update(fields)

    def __repr__(self):
        return "CompiledMemoryStats(" + ", ".join(f"{k}={v}" for k, v in
                                                  self.__dict__.items()) + ")"


class Compiled(_Stage):
    def __init__(self, jitted, entry, key, traced=None):
        self._jitted = jitted
        self._entry = entry
        self._key = key
        self._traced = traced

    _trace = property(lambda self: self._traced)

    def __call__(self, *args, **kwargs):
        j = self._jitted
        statics, dyn_args, dyn_kwargs = j._split(args, kwargs)
        leaves, in_tree = pytree.tree_flatten((dyn_args, dyn_kwargs))
        in_avals = tuple(_leaf_aval(x) for x in leaves)
        if (in_tree, statics, in_avals) != self._key[:3]:
            _check_call_matches(self._key, in_tree, statics, in_avals)
        arrays = [dispatch.to_array(x) for x in leaves]
        if isinstance(self._entry, spmd._Program):
            out = spmd.run(self._entry, arrays)
        else:
            out = j._run(self._entry, arrays)
        donated = j._donated_leaves(dyn_args, dyn_kwargs, len(args))
        if donated:
            _forget_host_copies(leaves, donated)
        return out

    def as_text(self):
        """XLA's optimized HLO of the program (as JAX's ``Compiled.as_text()``); the StableHLO
        that went in is ``Lowered.as_text()``. Made on first use by one more compile."""
        if getattr(self, "_hlo_text", None) is None and isinstance(self._entry, spmd._Program):
            prog = self._entry  # XLA's partitioned module (one partition's program)
            self._hlo_text = runtime.get_client().optimized_hlo(
                prog.text, self._jitted._option_overrides or DEFAULT_OPTION_OVERRIDES,
                **spmd.compile_options(prog.mesh))
        if getattr(self, "_hlo_text", None) is None:
            exe = self._entry.exe
            if getattr(exe, "num_replicas", 1) * getattr(exe, "num_partitions", 1) != 1:
                raise NotImplementedError(
                    "Compiled.as_text() of a program over several devices: the optimized HLO "
                    "is only read back for single-device programs; Lowered.as_text() gives "
                    "the StableHLO")
            client = runtime.get_client()
            text = lowering.lower_module(self._entry.closed.jaxpr, self._jitted.__name__,
                                         platform=client.pjrt_platform_name)
            self._hlo_text = client.optimized_hlo(
                text, self._jitted._option_overrides or DEFAULT_OPTION_OVERRIDES)
        return self._hlo_text

    def cost_analysis(self):
        """XLA's cost estimates: ``{"flops": ..., "transcendentals": ...,
        "bytes accessed": ..., ...}`` (floats), as JAX's ``Compiled.cost_analysis()``. Where
        the plugin has none (UNIMPLEMENTED), pyjax's estimate from the program's Jaxpr
        (transformations/cost_model.py, docs/debugging.md)."""
        try:
            return {k: float(v) for k, v in self._entry.exe.cost_analysis().items()}
        except XlaRuntimeError as e:
            if "UNIMPLEMENTED" not in str(e):
                raise
        closed = getattr(self._entry, "closed", None)  # an SPMD program keeps no Jaxpr
        return cost_model.estimate(closed if closed is not None else self._traced.jaxpr)

    def memory_analysis(self):
        """XLA's compiled memory statistics (``argument_size_in_bytes``,
        ``output_size_in_bytes``, ``alias_size_in_bytes``, ``temp_size_in_bytes``,
        ``generated_code_size_in_bytes``, their ``host_`` variants, ``peak_memory_in_bytes``)."""
        return CompiledMemoryStats(**self._entry.exe.memory_stats())


def _check_call_matches(key, in_tree, statics, in_avals):
    """A compiled computation runs arguments of its shapes and dtypes; a weak type alone does
    not matter (JAX compares types without it). Otherwise the error says what differs."""
    tree, want_statics, want_avals = key[:3]
    problems = []
    if tree != in_tree:
        problems.append(f"the argument structure: compiled for {tree}, called with {in_tree}")
    if want_statics != statics:
        problems.append(f"the static arguments: compiled for {want_statics}, called with "
                        f"{statics}")
    if not problems and len(want_avals) == len(in_avals):
        for i, (w, g) in enumerate(zip(want_avals, in_avals)):
            if w.shape != g.shape or w.dtype != g.dtype:
                problems.append(f"argument {i}: compiled for {w.str_short()}, called with "
                                f"{g.str_short()}")
    if problems:
        raise TypeError("Argument types differ from the types for which this computation was "
                        "compiled. The mismatches are:\n" + "\n".join(problems))
