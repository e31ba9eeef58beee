"""The HLO module of a lowered program, as JAX's ``Lowered.compiler_ir(dialect="hlo")`` gives it.

pyjax emits StableHLO only. The HLO here is XLA's own translation of that StableHLO (the
plugin's ``before_optimizations`` dump, see ``runtime.Client.unoptimized_hlo``), so it is the
same converter JAX uses and no second translation can drift from the program that runs. This
module only re-prints the dump the way JAX's ``XlaComputation.as_hlo_text()`` does: names
without ``%``, computation headers without their signature, no ``metadata={...}``.
"""
from __future__ import annotations

import re

_HEADER = re.compile(r"^(ENTRY )?%?([^\s(]+) \(.*\) -> .* \{$")


def _skip_string(text, i):
    """Index just past the double-quoted string starting at ``text[i]``."""
    i += 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            return i + 1
        i += 1
    raise ValueError(f"unterminated string in HLO text: {text[:80]!r}")


def _skip_braces(text, i):
    """Index just past the ``{...}`` group starting at ``text[i]`` (strings respected)."""
    depth = 0
    while i < len(text):
        c = text[i]
        if c == '"':
            i = _skip_string(text, i)
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError(f"unbalanced braces in HLO text: {text[:80]!r}")


def _instruction(line):
    """One instruction line: ``%`` dropped from names and ``, metadata={...}`` removed, both
    only outside string literals (custom-call targets and attributes are left as they are)."""
    out, i = [], 0
    while i < len(line):
        c = line[i]
        if c == '"':
            j = _skip_string(line, i)
            out.append(line[i:j])
            i = j
        elif line.startswith(", metadata={", i):
            i = _skip_braces(line, i + len(", metadata="))
        elif c == "%" and i + 1 < len(line) and (line[i + 1].isalnum() or line[i + 1] in "_-."):
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


# Newer XLA (the YNNPACK plugin build) prints the source locations of ``metadata`` as tables
# between the module header and the first computation; they only serve the metadata, which
# is dropped, so they go too.
_LOCATION_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")


def jax_style(dump: str) -> str:
    """XLA's dump text of a module re-printed as JAX's ``as_hlo_text()`` prints it."""
    lines, in_table = [], False
    for line in dump.splitlines():
        if line in _LOCATION_TABLES:
            in_table = True
            continue
        if in_table:  # a table runs to its blank line, which goes with it
            in_table = bool(line)
            continue
        if line.startswith("HloModule") or not line or line == "}":
            lines.append(line)
            continue
        m = _HEADER.match(line)
        if m and not line.startswith(" "):
            lines.append(f"{m.group(1) or ''}{m.group(2)} {{")
            continue
        lines.append(_instruction(line))
    return "\n".join(lines) + "\n"


def _varint(data, i):
    value = shift = 0
    while True:
        if i >= len(data):
            raise ValueError("truncated protobuf varint")
        b = data[i]
        value |= (b & 0x7F) << shift
        i, shift = i + 1, shift + 7
        if not b & 0x80:
            return value, i


def module_proto_of(hlo_proto: bytes) -> bytes:
    """The ``HloModuleProto`` (field 1) inside XLA's dumped ``HloProto`` wrapper."""
    i = 0
    while i < len(hlo_proto):
        key, i = _varint(hlo_proto, i)
        field, wire = key >> 3, key & 7
        if wire == 2:
            n, i = _varint(hlo_proto, i)
            if field == 1:
                return bytes(hlo_proto[i:i + n])
            i += n
        elif wire == 0:
            _, i = _varint(hlo_proto, i)
        elif wire in (1, 5):
            i += 8 if wire == 1 else 4
        else:
            raise ValueError(f"unexpected protobuf wire type {wire} in an HloProto")
    raise ValueError("the dumped HloProto holds no HloModuleProto")


class HloModule:
    """What ``XlaComputation.as_hlo_module()`` returns: ``name``, ``to_string()`` and the
    serialized ``HloModuleProto``."""

    def __init__(self, name, text, proto):
        self._name, self._text, self._proto = name, text, proto

    @property
    def name(self):
        return self._name

    def to_string(self):
        return self._text

    def as_serialized_hlo_module_proto(self):
        if self._proto is None:
            raise NotImplementedError("the plugin wrote no HloModuleProto for this module")
        return self._proto

    def __repr__(self):
        return f"HloModule({self._name})"


class XlaComputation:
    """The unoptimized HLO module of a lowered program (JAX's ``XlaComputation``): its text
    ``as_hlo_text()``, ``as_hlo_module()``, ``as_serialized_hlo_module_proto()`` and
    ``name()``."""

    def __init__(self, dump_text, hlo_proto=None):
        """``dump_text``: XLA's dump of the module; ``hlo_proto``: its dumped ``HloProto``."""
        self._dump = dump_text
        self._proto = None if hlo_proto is None else module_proto_of(hlo_proto)
        self._text = jax_style(dump_text)
        head = dump_text.split(",", 1)[0].split()
        self._name = head[1] if len(head) > 1 and head[0] == "HloModule" else ""

    def name(self):
        return self._name

    def as_hlo_text(self, print_large_constants=False):
        if print_large_constants and "{...}" in self._text:
            raise NotImplementedError(
                "as_hlo_text(print_large_constants=True): XLA's dump that pyjax reads elides "
                "large constants as {...}; the StableHLO (Lowered.as_text()) holds their values")
        return self._text

    def as_hlo_module(self):
        return HloModule(self._name, self._text, self._proto)

    get_hlo_module = as_hlo_module

    def as_serialized_hlo_module_proto(self):
        return self.as_hlo_module().as_serialized_hlo_module_proto()

    def as_hlo_dot_graph(self):
        raise NotImplementedError("XlaComputation.as_hlo_dot_graph(): pyjax has no HLO graph "
                                  "renderer; as_hlo_text() gives the module")

    def program_shape(self):
        raise NotImplementedError("XlaComputation.program_shape(): read the signature from "
                                  "the entry_computation_layout of as_hlo_text()")

    def __repr__(self):
        return f"<XlaComputation {self._name}>"
