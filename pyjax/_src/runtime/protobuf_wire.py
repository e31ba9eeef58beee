"""The protobuf wire format, written by hand for the few messages pyjax builds
(CompileOptionsProto in ``compile_options.py``, pprof profiles in ``memory_profile.py``):
varints, and fields of the VARINT and LEN wire types."""
from __future__ import annotations

VARINT, LEN = 0, 2


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # int64 negatives use ten bytes, two's complement
    out = bytearray()
    while True:
        bits = value & 0x7F
        value >>= 7
        if value:
            out.append(bits | 0x80)
        else:
            out.append(bits)
            return bytes(out)


def tag(field: int, wire_type: int) -> bytes:
    return varint((field << 3) | wire_type)


def int_field(field: int, value: int) -> bytes:
    return tag(field, VARINT) + varint(int(value))


def bytes_field(field: int, payload: bytes) -> bytes:
    return tag(field, LEN) + varint(len(payload)) + payload


def packed_ints(field: int, values) -> bytes:
    return bytes_field(field, b"".join(varint(int(v)) for v in values))
