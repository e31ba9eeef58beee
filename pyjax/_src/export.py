"""``jax.export``: a jitted function as a self-contained StableHLO program that can be saved,
loaded in another process and called (eagerly or from inside ``jit``).

``export(jit(f))(*specs)`` traces and lowers ``f`` for the given shapes with its constants
written into the module, and returns an ``Exported``: the module text, the input and output
pytree structures and abstract values. ``serialize()`` gives bytes (pyjax's own format: a
header line, a JSON description, the module text); ``deserialize`` reads them back.
``Exported.call`` binds the ``call_exported`` primitive, whose lowering copies the exported
module's functions into the program being built (renamed, ``@main`` made private) and calls
them; run eagerly, that program is compiled once and cached like any primitive's.

Not supported (each raises): shape polymorphism (``symbolic_shape``), multi-platform
exports, serialized VJPs (``vjp_order > 0``), sharded exports, and calling in another
process a module that calls host kernels (LAPACK on the CPU, host callbacks: they are
referred to by ids of the exporting process's function table).
"""
from __future__ import annotations

import collections
import json
import re
import uuid

import numpy as np

from pyjax._src.core import dtypes, pytree
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.trace import aval_of
from pyjax._src.interpreters import lowering
from pyjax._src.lowering import mlir
from pyjax._src.runtime import ffi as runtime_ffi

_MAGIC = b"pyjax-exported-v1\n"
CALLING_CONVENTION_VERSION = 9
_PROCESS_TOKEN = uuid.uuid4().hex  # tells this process's serialized modules from others'
_HOST_TARGET = runtime_ffi.TARGET
minimum_supported_calling_convention_version = 9
maximum_supported_calling_convention_version = 9


def default_export_platform() -> str:
    return "cpu"


class DisabledSafetyCheck:
    """A safety check to skip when calling an exported function (``platform()``,
    ``custom_call(target)``); pyjax's exports have no check to skip, so these are recorded
    only."""

    def __init__(self, kind, value=None):
        self.kind, self.value = kind, value

    @classmethod
    def platform(cls):
        return cls("platform")

    @classmethod
    def custom_call(cls, target_name):
        return cls("custom_call", target_name)

    def __repr__(self):
        return f"DisabledSafetyCheck({self.kind!r}, {self.value!r})"

    def __eq__(self, other):
        return isinstance(other, DisabledSafetyCheck) and (self.kind, self.value) == (
            other.kind, other.value)

    def __hash__(self):
        return hash((self.kind, self.value))


class Exported:
    """A function exported for some input shapes (JAX's attribute names)."""

    def __init__(self, fun_name, in_tree, in_avals, out_tree, out_avals, module_text,
                 disabled_safety_checks=()):
        self.fun_name = fun_name
        self.in_tree, self.out_tree = in_tree, out_tree
        self.in_avals, self.out_avals = tuple(in_avals), tuple(out_avals)
        self.mlir_module_serialized = module_text.encode()
        self.platforms = ("cpu",)
        self.nr_devices = 1
        self.in_shardings_hlo = (None,) * len(self.in_avals)
        self.out_shardings_hlo = (None,) * len(self.out_avals)
        self.ordered_effects = ()
        self.unordered_effects = ()
        self.disabled_safety_checks = tuple(disabled_safety_checks)
        self.calling_convention_version = CALLING_CONVENTION_VERSION
        self.module_kept_var_idx = tuple(range(len(self.in_avals)))
        self.uses_global_constants = False
        # host kernels (LAPACK on the CPU, host callbacks) are called through ids of this
        # process's function table (runtime/ffi.py); a module read back in another process
        # would call whatever that process registered under the same ids
        self._host_calls_foreign = False

    def mlir_module(self) -> str:
        return self.mlir_module_serialized.decode()

    def __repr__(self):
        ins = ", ".join(a.str_short() for a in self.in_avals)
        outs = ", ".join(a.str_short() for a in self.out_avals)
        return f"Exported({self.fun_name}: ({ins}) -> ({outs}))"

    def has_vjp(self) -> bool:
        return False

    def vjp(self):
        raise NotImplementedError("pyjax exports carry no VJP (serialize(vjp_order=0) only)")

    def serialize(self, vjp_order: int = 0) -> bytearray:
        """Bytes that ``deserialize`` turns back into this Exported (in any process)."""
        if vjp_order:
            raise NotImplementedError("serialize(vjp_order > 0): pyjax exports carry no VJP")
        head = {"fun_name": self.fun_name,
                "in_tree": _encode_tree(self.in_tree), "out_tree": _encode_tree(self.out_tree),
                "in_avals": [_encode_aval(a) for a in self.in_avals],
                "out_avals": [_encode_aval(a) for a in self.out_avals],
                "platforms": list(self.platforms),
                "calling_convention_version": self.calling_convention_version}
        if _HOST_TARGET in self.mlir_module_serialized:
            head["host_calls_of_process"] = _PROCESS_TOKEN
        head_bytes = json.dumps(head).encode()
        return bytearray(_MAGIC + len(head_bytes).to_bytes(8, "little") + head_bytes
                         + self.mlir_module_serialized)

    def call(self, *args, **kwargs):
        """Runs the exported program on arguments of the exported types."""
        if self._host_calls_foreign:
            raise NotImplementedError(
                f"Exported {self.fun_name} calls host kernels (LAPACK factorizations on the "
                "CPU, or host callbacks), which pyjax refers to by this process's function "
                "table: it was serialized in another process and cannot be called here. "
                "Export and call it in one process, or export a program without them.")
        leaves, tree = pytree.tree_flatten((args, kwargs))
        if tree != self.in_tree:
            raise ValueError(f"The invocation args and kwargs must have the same pytree "
                             f"structure as when {self.fun_name} was exported: expected "
                             f"{self.in_tree}, got {tree}")
        for i, (x, want) in enumerate(zip(leaves, self.in_avals)):
            got = aval_of(x)
            if got.shape != want.shape or got.dtype != want.dtype:
                raise TypeError(f"Function {self.fun_name} was exported for argument {i} of "
                                f"type {want.str_short()}, but it is called with "
                                f"{got.str_short()}")
        outs = call_exported_p.bind(*leaves, exported=self)
        return pytree.tree_unflatten(self.out_tree, list(outs))


def export(fun_jit, *, platforms=None, disabled_checks=()):
    """``export(jit(f))(*args_specs, **kwargs_specs)`` -> ``Exported``. The specs are
    ``jax.ShapeDtypeStruct``s or arrays (only their shapes and dtypes matter)."""
    from pyjax._src.transformations.jit import Jitted
    if not isinstance(fun_jit, Jitted):
        raise TypeError(f"Function to be exported must be the result of `jit` but is: "
                        f"{fun_jit!r}")
    if platforms is not None and tuple(platforms) != ("cpu",):
        raise NotImplementedError(f"export(platforms={platforms!r}): pyjax exports for the "
                                  "'cpu' platform only")

    def do_export(*args_specs, **kwargs_specs):
        for leaf in pytree.tree_leaves((args_specs, kwargs_specs)):
            shape = getattr(leaf, "shape", ())
            if not all(isinstance(d, (int, np.integer)) for d in shape):
                raise NotImplementedError(
                    f"export: shape polymorphism is not supported (got shape {shape})")
        traced = fun_jit.trace(*args_specs, **kwargs_specs)
        closed = traced.jaxpr
        text = lowering.lower_module(closed.jaxpr, fun_jit.__name__,
                                     const_values=[np.asarray(c) for c in closed.consts])
        in_avals = [a.update(weak_type=False) for a in closed.in_avals]
        out_avals = [a.update(weak_type=False) for a in closed.out_avals]
        # the transformations' trees (key arrays as their key data), as the avals are
        return Exported(fun_jit.__name__, traced._trace._key[0], in_avals,
                        traced._trace._out_tree, out_avals, text, disabled_checks)
    return do_export


def deserialize(blob) -> Exported:
    """The Exported that ``Exported.serialize`` wrote."""
    data = bytes(blob)
    if not data.startswith(_MAGIC) or len(data) < len(_MAGIC) + 8:
        raise ValueError("deserialize: not bytes written by pyjax's Exported.serialize")
    n = int.from_bytes(data[len(_MAGIC):len(_MAGIC) + 8], "little")
    start = len(_MAGIC) + 8
    try:
        head = json.loads(data[start:start + n].decode())
    except ValueError as e:
        raise ValueError(f"deserialize: corrupt header ({e})") from None
    text = data[start + n:].decode()
    exp = Exported(head["fun_name"], _decode_tree(head["in_tree"]),
                   [_decode_aval(a) for a in head["in_avals"]],
                   _decode_tree(head["out_tree"]),
                   [_decode_aval(a) for a in head["out_avals"]], text)
    exp._host_calls_foreign = (_HOST_TARGET in exp.mlir_module_serialized
                               and head.get("host_calls_of_process") != _PROCESS_TOKEN)
    return exp


def symbolic_shape(shape_spec, *, constraints=(), scope=None, like=None):
    raise NotImplementedError("jax.export.symbolic_shape: shape polymorphism is not "
                              "supported by pyjax's export")


def symbolic_args_specs(args, shapes_specs, constraints=(), scope=None):
    raise NotImplementedError("jax.export.symbolic_args_specs: shape polymorphism is not "
                              "supported by pyjax's export")


def is_symbolic_dim(p) -> bool:
    return False  # pyjax has no symbolic dimensions


class SymbolicScope:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("jax.export.SymbolicScope: shape polymorphism is not "
                                  "supported by pyjax's export")


# ---- pytree structures and avals in the serialized header ---------------------------------

_LEAF = object()
_namedtuples: dict = {}  # serialized name -> namedtuple class


def register_namedtuple_serialization(nodetype, *, serialized_name: str):
    """Lets trees with this namedtuple type be serialized (under ``serialized_name``)."""
    if not (isinstance(nodetype, type) and issubclass(nodetype, tuple)
            and hasattr(nodetype, "_fields")):
        raise ValueError(f"register_namedtuple_serialization: {nodetype!r} is not a "
                         "namedtuple class")
    _namedtuples[serialized_name] = nodetype
    nodetype._pyjax_serialized_name = serialized_name
    return nodetype


def register_pytree_node_serialization(nodetype, *, serialized_name, serialize_auxdata,
                                       deserialize_auxdata, from_children=None):
    raise NotImplementedError("register_pytree_node_serialization: pyjax serializes tuples, "
                              "lists, dicts, None and registered namedtuples only")


def _encode_tree(treedef):
    skeleton = pytree.tree_unflatten(treedef, [_LEAF] * treedef.num_leaves)

    def enc(node):
        if node is _LEAF:
            return {"leaf": 1}
        if node is None:
            return {"none": 1}
        if isinstance(node, tuple) and hasattr(node, "_fields"):
            name = getattr(type(node), "_pyjax_serialized_name", None)
            if name is None:
                raise ValueError(f"Cannot serialize PyTreeDef containing namedtuple "
                                 f"{type(node).__name__}: register it with "
                                 "register_namedtuple_serialization")
            return {"namedtuple": name, "children": [enc(c) for c in node]}
        if type(node) is tuple:
            return {"tuple": [enc(c) for c in node]}
        if type(node) is list:
            return {"list": [enc(c) for c in node]}
        if type(node) is dict:
            if not all(isinstance(k, str) for k in node):
                raise ValueError("Cannot serialize a dict pytree node with non-string keys")
            return {"dict": [[k, enc(v)] for k, v in node.items()]}
        raise ValueError(f"Cannot serialize PyTreeDef containing node type "
                         f"{type(node).__name__}")
    return enc(skeleton)


def _decode_tree(doc):
    def dec(d):
        if "leaf" in d:
            return 0
        if "none" in d:
            return None
        if "namedtuple" in d:
            cls = _namedtuples.get(d["namedtuple"])
            if cls is None:
                raise ValueError(f"deserialize: namedtuple {d['namedtuple']!r} is not "
                                 "registered (register_namedtuple_serialization)")
            return cls(*[dec(c) for c in d["children"]])
        if "tuple" in d:
            return tuple(dec(c) for c in d["tuple"])
        if "list" in d:
            return [dec(c) for c in d["list"]]
        return {k: dec(v) for k, v in d["dict"]}
    return pytree.tree_structure(dec(doc))


def _encode_aval(a):
    return {"shape": list(a.shape), "dtype": np.dtype(a.dtype).name}


def _decode_aval(d):
    name = d["dtype"]
    dt = np.dtype(getattr(dtypes, name)) if hasattr(dtypes, name) else np.dtype(name)
    return ShapedArray(tuple(d["shape"]), dt)


# ---- the call_exported primitive -----------------------------------------------------------

_FUNC = re.compile(r"func\.func (?:public |private )?@([\w.$-]+)")


def _functions_of(module_text):
    """The ``func.func`` texts of a module printed by pyjax (one per top-level function)."""
    body = module_text[module_text.index("{\n") + 2:module_text.rstrip().rindex("}")]
    starts = [m.start() for m in re.finditer(r"(?m)^  func\.func ", body)]
    return [body[a:b].rstrip() for a, b in zip(starts, starts[1:] + [len(body)])]


class _RawFunction:
    __slots__ = ("_text",)

    def __init__(self, text):
        self._text = text

    def text(self):
        return self._text


def _lower(ctx, *args, exported):
    cache = ctx.module.fn_cache
    key = ("exported", id(exported))
    hit = cache.get(key)
    if hit is not None and hit[0] is exported:
        main = hit[1]
    else:
        funcs = _functions_of(exported.mlir_module())
        names = [_FUNC.search(f).group(1) for f in funcs]
        prefix = ctx.module.unique_name(mlir.sanitize_name(f"exported_{exported.fun_name}"))
        renamed = {n: f"{prefix}_{n}" for n in names}
        for f in funcs:
            f = re.sub(r"@([\w.$-]+)", lambda m: "@" + renamed.get(m.group(1), m.group(1)), f)
            f = f.replace("func.func public", "func.func private", 1)
            # donation belongs to the exported program's own calls, not to a callee
            f = re.sub(r"tf\.aliasing_output = \d+ : i32,? ?", "", f)
            f = re.sub(r"(%arg\d+: tensor<[^>]*>) \{\}", r"\1", f)
            ctx.module.add_function(_RawFunction(f))
        main = renamed["main"]
        cache[key] = (exported, main)
    return ctx.block.op("func.call", list(args), list(ctx.avals_out),
                        attrs={"callee": f"@{main}"})


def _abstract_eval(*avals, exported):
    return list(exported.out_avals)


def _jvp(primals, tangents, *, exported):
    raise ValueError(f"Cannot differentiate the exported function {exported.fun_name}: "
                     "pyjax exports carry no VJP (serialize(vjp_order=0) only)")


def _batch(args, dims, *, exported):
    """A loop over the batch (the export has fixed shapes): one call per element."""
    from pyjax._src.callback import batch_by_loop
    return batch_by_loop(call_exported_p, args, dims, dict(exported=exported))


# a one-device export called on split operands gives replicated results (JAX 0.10.2's types;
# pyjax exports have nr_devices 1)
from pyjax._src.core.sharding_rules import replicated_results  # noqa: E402
call_exported_p = Primitive("call_exported", abstract_eval=_abstract_eval, lower=_lower,
                            sharding_rule=replicated_results,
                            multiple_results=True, jvp=_jvp, batch=_batch)
