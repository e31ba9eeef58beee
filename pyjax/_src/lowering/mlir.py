"""A small builder for StableHLO MLIR text.

It knows MLIR/StableHLO syntax and nothing about tracing. Ops are written in MLIR's generic
form (``%3 = "stablehlo.add"(%1, %2) : (t, t) -> t``), which the plugin's parser accepts for
every op, so one code path serves all of them. Dimension lists use ``array<i64: ...>``
(``dense<...> : tensor<Nxi64>`` is rejected by the plugin's StableHLO version).
"""
from __future__ import annotations

import numpy as np

from pyjax._src.core import dtypes

_ELEM = {
    "bool": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "ui8", "uint16": "ui16", "uint32": "ui32", "uint64": "ui64",
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
    "complex64": "complex<f32>", "complex128": "complex<f64>",
    "float8_e4m3fn": "f8E4M3FN", "float8_e5m2": "f8E5M2",
    "float8_e4m3fnuz": "f8E4M3FNUZ", "float8_e5m2fnuz": "f8E5M2FNUZ",
    "float8_e4m3b11fnuz": "f8E4M3B11FNUZ", "float8_e4m3": "f8E4M3", "float8_e3m4": "f8E3M4",
}


def elem_type(dtype) -> str:
    try:
        return _ELEM[np.dtype(dtype).name]
    except KeyError:
        raise TypeError(f"dtype {dtype} has no StableHLO element type") from None


def tensor_type(shape, dtype) -> str:
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{elem_type(dtype)}>"


def ir_type(aval) -> str:
    return tensor_type(aval.shape, aval.dtype)


def i64_array(xs) -> str:
    xs = list(xs)
    return f"array<i64: {', '.join(str(int(x)) for x in xs)}>" if xs else "array<i64>"


def bool_array(xs) -> str:
    xs = list(xs)
    return (f"array<i1: {', '.join('true' if x else 'false' for x in xs)}>" if xs
            else "array<i1>")


def int_list(xs) -> str:
    return "[" + ", ".join(str(int(x)) for x in xs) + "]"


def _float_bits(x, dtype) -> str:
    raw = np.asarray(x, dtype).tobytes()
    return "0x" + raw[::-1].hex().upper()


def _scalar_literal(x, dtype) -> str:
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return "true" if bool(x) else "false"
    if dtypes.is_integer(dt):
        return str(int(x))
    if dtypes.is_complex(dt):
        part = dtypes.to_real_dtype(dt)
        c = complex(np.asarray(x, dt)[()])
        return f"({_float_bits(c.real, part)}, {_float_bits(c.imag, part)})"
    return _float_bits(x, dt)


def dense_attr(value, dtype) -> str:
    """A ``dense<...>`` attribute (without its type) holding ``value`` as ``dtype``."""
    arr = np.asarray(value, dtype=dtype)
    if arr.size == 0:
        return "dense<>"
    flat = arr.reshape(-1)
    raw = np.ascontiguousarray(arr).tobytes()
    if arr.ndim == 0 or raw == raw[:arr.dtype.itemsize] * arr.size:
        return f"dense<{_scalar_literal(flat[0], arr.dtype)}>"
    if arr.dtype == np.bool_:
        return "dense<" + _nested_bools(arr) + ">"
    return f'dense<"0x{raw.hex().upper()}">'


def _nested_bools(arr):
    if arr.ndim == 0:
        return "true" if arr else "false"
    return "[" + ", ".join(_nested_bools(a) for a in arr) + "]"


class Value:
    """An SSA value: its textual name and its abstract value."""

    __slots__ = ("name", "aval")

    def __init__(self, name, aval):
        self.name = name
        self.aval = aval

    @property
    def type(self):
        return ir_type(self.aval)

    def __repr__(self):
        return f"{self.name} : {self.type}"


class Counter:
    __slots__ = ("n",)

    def __init__(self):
        self.n = 0

    def next(self):
        self.n += 1
        return self.n - 1


class Block:
    """A list of op lines sharing one SSA counter with its enclosing function."""

    def __init__(self, counter: Counter, indent="    "):
        self.counter = counter
        self.lines = []
        self.indent = indent
        self.loc = ""  # ' loc("scope/op")' appended to the ops being emitted (named_scope)

    def fresh(self, prefix="%"):
        return f"{prefix}{self.counter.next()}"

    def op(self, name, operands, out_avals, attrs=None, regions=(), single=None):
        """Emit one op in generic form. ``out_avals`` may be one aval (returns a Value) or a
        list (returns a list of Values)."""
        many = isinstance(out_avals, (list, tuple))
        avals = list(out_avals) if many else [out_avals]
        ins = ", ".join(v.name for v in operands)
        in_types = ", ".join(v.type for v in operands)
        out_types = ", ".join(ir_type(a) for a in avals)
        if len(avals) != 1:
            out_types = f"({out_types})"
        attr_text = ""
        if attrs:
            attr_text = " {" + ", ".join(f"{k} = {v}" for k, v in attrs.items()) + "}"
        region_text = ""
        if regions:
            region_text = " (" + ", ".join(r.text(self.indent) for r in regions) + ")"
        if not avals:
            self.lines.append(f'"{name}"({ins}){region_text}{attr_text} : ({in_types}) -> ()'
                              f"{self.loc}")
            return []
        res = self.fresh()
        lhs = res if len(avals) == 1 else f"{res}:{len(avals)}"
        self.lines.append(f'{lhs} = "{name}"({ins}){region_text}{attr_text} : '
                          f"({in_types}) -> {out_types}{self.loc}")
        if len(avals) == 1:
            outs = [Value(res, avals[0])]
        else:
            outs = [Value(f"{res}#{i}", a) for i, a in enumerate(avals)]
        return outs if many else outs[0]

    def constant(self, value, aval) -> Value:
        attr = dense_attr(value, aval.dtype)
        return self.op("stablehlo.constant", [], aval,
                       attrs={"value": f"{attr} : {ir_type(aval)}"})

    def ret(self, values, op_name="stablehlo.return"):
        ins = ", ".join(v.name for v in values)
        types = ", ".join(v.type for v in values)
        self.lines.append(f'"{op_name}"({ins}) : ({types}) -> ()')

    def region(self, arg_avals) -> "Region":
        return Region(self.counter, arg_avals, self.indent + "    ")


class Region(Block):
    """A single-block region, e.g. the body of a reduce or the comparator of a sort."""

    def __init__(self, counter, arg_avals, indent):
        super().__init__(counter, indent)
        self.args = [Value(f"%r{counter.next()}", a) for a in arg_avals]

    def text(self, outer_indent):
        args = ", ".join(f"{v.name}: {v.type}" for v in self.args)
        body = "".join(f"\n{self.indent}  {line}" for line in self.lines)
        return f"{{\n{self.indent}^bb0({args}):{body}\n{outer_indent}}}"


class Function:
    def __init__(self, name, arg_avals, public, arg_attrs=None, result_attrs=None):
        self.name = name
        self.public = public
        self.counter = Counter()
        self.block = Block(self.counter)
        self.args = [Value(f"%arg{i}", a) for i, a in enumerate(arg_avals)]
        self.arg_attrs = arg_attrs or {}
        self.result_attrs = result_attrs or {}
        self.results = None

    def finish(self, results):
        self.results = list(results)
        self.block.lines.append(
            "func.return " + ", ".join(v.name for v in self.results)
            + (" : " + ", ".join(v.type for v in self.results) if self.results else ""))

    def text(self):
        def arg(i, v):
            a = self.arg_attrs.get(i)
            return f"{v.name}: {v.type}" + (f" {{{a}}}" if a else "")
        args = ", ".join(arg(i, v) for i, v in enumerate(self.args))
        res = []
        for i, v in enumerate(self.results):
            a = self.result_attrs.get(i)
            res.append(v.type + (f" {{{a}}}" if a else ""))
        vis = "public" if self.public else "private"
        body = "".join(f"\n    {line}" for line in self.block.lines)
        return f"  func.func {vis} @{self.name}({args}) -> ({', '.join(res)}) {{{body}\n  }}"


class Module:
    def __init__(self, name="pyjax_module", attrs=None):
        self.name = name
        self.functions: list[Function] = []
        self.attrs = attrs or {}
        self._names = set()
        self.fn_cache = {}  # id(jaxpr) -> (jaxpr, function name), for private functions
        self.top_ops: list[str] = []  # module-level ops before the functions (sdy.mesh)

    def unique_name(self, hint):
        name, i = hint, 0
        while name in self._names:
            i += 1
            name = f"{hint}_{i}"
        self._names.add(name)
        return name

    def add_function(self, fn: Function):
        self.functions.append(fn)

    def text(self):
        attrs = ""
        if self.attrs:
            attrs = " attributes {" + ", ".join(f"{k} = {v}" for k, v in self.attrs.items()) + "}"
        funcs = "\n".join([f"  {line}" for line in self.top_ops]
                          + [f.text() for f in self.functions])
        return f"module @{self.name}{attrs} {{\n{funcs}\n}}\n"


def _quoted(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def location(name_stack, op_name, source=None):
    """The ``loc(...)`` suffix of an op: its name ``name_stack/op_name`` (XLA keeps it as the
    HLO op's ``op_name`` metadata) and, given a ``SourceInfo``, the user's file and line
    (``source_file``/``source_line`` metadata), as JAX writes them:
    ``loc("scope/op"("file.py":12:0))``."""
    name = _quoted(f"{name_stack}/{op_name}" if name_stack else op_name)
    if source is None:
        return f" loc({name})"
    return f" loc({name}({_quoted(source.file)}:{int(source.line)}:0))"


def sanitize_name(name: str) -> str:
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return out or "fn"
