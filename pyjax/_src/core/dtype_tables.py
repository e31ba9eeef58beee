"""The tables of ``core/dtypes.py`` that list dtypes: kind sets, lattice node ids, the promotion
lattice's upper sets and result_type's entries. Built once with NumPy's types at import and
again when the ml_dtypes types arrive (``runtime/ml_dtypes_loader.py`` says why they wait).
"""
from __future__ import annotations

from typing import Any

import numpy as np

_FLOAT8_NAMES = ("float8_e4m3fn", "float8_e5m2", "float8_e4m3b11fnuz", "float8_e4m3fnuz",
                 "float8_e5m2fnuz", "float8_e3m4", "float8_e4m3", "float8_e8m0fnu")
_FLOAT4_NAMES = ("float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn")  # the sub-byte floats
_INTN_SIGNED_NAMES = ("int1", "int2", "int4")
_INTN_UNSIGNED_NAMES = ("uint1", "uint2", "uint4")
ML_DTYPE_NAMES = (("bfloat16",) + _FLOAT8_NAMES + _FLOAT4_NAMES + _INTN_SIGNED_NAMES
                  + _INTN_UNSIGNED_NAMES)
_SUB_BYTE = (("int2", 2), ("uint2", 2), ("int4", 4), ("uint4", 4), ("float4_e2m1fn", 4))


def build(ns: dict[str, Any], ext: dict[str, np.dtype]) -> dict[str, Any]:
    """The tables, as ``{global name: value}`` for ``core/dtypes.py``. ``ns`` holds NumPy's
    dtypes (``int8``, ..., ``float0``) and the ``default_*_dtype`` functions; ``ext`` the
    ml_dtypes dtypes by name (empty before ml_dtypes is loaded)."""
    d = {n: ns[n] for n in ("bool_", "int8", "int16", "int32", "int64", "uint8", "uint16",
                            "uint32", "uint64", "float16", "float32", "float64", "complex64",
                            "complex128", "float0")}
    t: dict[str, Any] = {}
    t["_FLOAT8"] = tuple(ext[n] for n in _FLOAT8_NAMES if n in ext)
    t["_FLOAT4"] = tuple(ext[n] for n in _FLOAT4_NAMES if n in ext)
    custom = tuple(ext[n] for n in ("bfloat16",) if n in ext) + t["_FLOAT8"] + t["_FLOAT4"]
    t["_CUSTOM_FLOATS"] = custom                          # kind 'V' in numpy
    t["_INTN_SIGNED"] = tuple(ext[n] for n in _INTN_SIGNED_NAMES if n in ext)
    t["_INTN_UNSIGNED"] = tuple(ext[n] for n in _INTN_UNSIGNED_NAMES if n in ext)
    intn = t["_INTN"] = t["_INTN_SIGNED"] + t["_INTN_UNSIGNED"]

    signed = frozenset((d["int8"], d["int16"], d["int32"], d["int64"]) + t["_INTN_SIGNED"])
    unsigned = frozenset((d["uint8"], d["uint16"], d["uint32"], d["uint64"])
                         + t["_INTN_UNSIGNED"])
    floating = frozenset((d["float16"], d["float32"], d["float64"]) + custom)
    complex_ = frozenset((d["complex64"], d["complex128"]))
    t.update(_SIGNED_SET=signed, _UNSIGNED_SET=unsigned, _INTEGER_SET=signed | unsigned,
             _FLOATING_SET=floating, _CUSTOM_FLOAT_SET=frozenset(custom),
             _COMPLEX_SET=complex_, _INEXACT_SET=floating | complex_,
             _NUMERIC_SET=signed | unsigned | floating | complex_)
    t["_SUPPORTED_SET"] = t["_NUMERIC_SET"] | {d["bool_"], d["float0"]}

    # Every dtype pyjax knows; its position is its lattice node id.
    dts = tuple(d[n] for n in ("bool_", "int8", "int16", "int32", "int64", "uint8", "uint16",
                               "uint32", "uint64", "float16", "float32", "float64",
                               "complex64", "complex128")) + custom + intn + (d["float0"],)
    index = {dt: i for i, dt in enumerate(dts)}
    n = len(dts)
    t.update(_DTYPES=dts, _DT_INDEX=index, _N=n, _I_WEAK=n, _F_WEAK=n + 1, _C_WEAK=n + 2)
    # the dtype a node stands for (uncanonical), and its name in errors
    t["_NODE_DTYPE"] = dts + (d["int64"], d["float64"], d["complex128"])
    t["_NODE_NAME"] = tuple(str(dt) for dt in dts) + ("int", "float", "complex")

    # dtype -> the function giving its kind's default (it depends on x64)
    t["_KIND_DEFAULT"] = {**dict.fromkeys(floating, ns["default_float_dtype"]),
                          **dict.fromkeys(signed, ns["default_int_dtype"]),
                          **dict.fromkeys(unsigned, ns["default_uint_dtype"]),
                          **dict.fromkeys(complex_, ns["default_complex_dtype"])}
    t["_UPPER"] = {"standard": _upper_sets(_standard_lattice(d, index, t, ext), n),
                   "strict": _upper_sets(_strict_lattice(index, t), n)}

    # result_type's entries (2 * dtype index + weak) of arguments by type
    value_entry = {int: 2 * index[d["int64"]] + 1, float: 2 * index[d["float64"]] + 1,
                   complex: 2 * index[d["complex128"]] + 1, bool: 2 * index[d["bool_"]]}
    for dt in dts[:-1]:   # not float0
        value_entry.setdefault(dt.type, 2 * index[dt])   # numpy scalar values
    t["_PYTYPE_ARG_ENTRY"] = dict(value_entry)   # the same types passed as types, not values
    for dt in dts[:-1]:
        # np.dtype instances: numpy gives each builtin (and ml_dtypes) type its own dtype
        # class, whose instances differ only in byte order, which promotion ignores.
        value_entry.setdefault(type(dt), 2 * index[dt])
    t["_VALUE_TYPE_ENTRY"] = value_entry

    t["_ISDTYPE_KINDS"] = {"bool": frozenset((d["bool_"],)), "signed integer": signed,
                           "unsigned integer": unsigned, "integral": signed | unsigned,
                           "real floating": floating, "complex floating": complex_,
                           "numeric": t["_NUMERIC_SET"]}
    t["_SUB_BYTE_BITS"] = {ext[name]: bits for name, bits in _SUB_BYTE if name in ext}
    return t


def _standard_lattice(d, index, t, ext) -> dict[int, list[int]]:
    i_weak, f_weak, c_weak = t["_I_WEAK"], t["_F_WEAK"], t["_C_WEAK"]
    b1, i1, i2, i4, i8 = (index[d[n]] for n in ("bool_", "int8", "int16", "int32", "int64"))
    u1, u2, u4, u8 = (index[d[n]] for n in ("uint8", "uint16", "uint32", "uint64"))
    f2, f4, f8 = (index[d[n]] for n in ("float16", "float32", "float64"))
    c8, c16 = index[d["complex64"]], index[d["complex128"]]
    edges = {
        b1: [i_weak],
        i_weak: [u1, i1] + [index[x] for x in t["_INTN"]],
        u1: [u2, i2], u2: [u4, i4], u4: [u8, i8], u8: [f_weak],
        i1: [i2], i2: [i4], i4: [i8], i8: [f_weak],
        f_weak: [c_weak, f2] + [index[x] for x in t["_CUSTOM_FLOATS"]],  # bf16, float8/4/6
        f2: [f4], f4: [f8, c8], f8: [c16],
        c_weak: [c8], c8: [c16], c16: [],
    }
    if "bfloat16" in ext:
        edges[index[ext["bfloat16"]]] = [f4]
    return edges


def _strict_lattice(index, t) -> dict[int, list[int]]:
    # Only weak values promote, and only within their kind (or to a wider kind).
    return {
        t["_I_WEAK"]: [t["_F_WEAK"]] + [index[x] for x in t["_INTEGER_SET"]],
        t["_F_WEAK"]: [t["_C_WEAK"]] + [index[x] for x in t["_FLOATING_SET"]],
        t["_C_WEAK"]: [index[x] for x in t["_COMPLEX_SET"]],
    }


def _upper_sets(edges: dict[int, list[int]], n: int) -> tuple[frozenset, ...]:
    ups = []
    for node in range(n + 3):
        seen = {node}
        stack = [node]
        while stack:
            for nxt in edges.get(stack.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        ups.append(frozenset(seen))
    return tuple(ups)
