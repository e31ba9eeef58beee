"""profiler.device_memory_profile: a gzipped pprof Profile of the live buffers, decoded here
with a small protobuf reader (field numbers from pprof's profile.proto)."""
import gc
import gzip

import numpy as np

import pyjax as jax
import pyjax.numpy as jnp


def _varint(buf, i):
    n = shift = 0
    while True:
        b = buf[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, i


def _fields(buf):
    """[(field number, int or bytes)] of one message."""
    out, i = [], 0
    while i < len(buf):
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _varint(buf, i)
        elif wire == 2:
            n, i = _varint(buf, i)
            v, i = bytes(buf[i:i + n]), i + n
        else:
            raise AssertionError(f"unexpected wire type {wire}")
        out.append((number, v))
    return out


def _decode(data):
    top = _fields(gzip.decompress(data))
    strings = [v.decode() for n, v in top if n == 6]
    types = [tuple(strings[v] for _, v in _fields(m)) for n, m in top if n == 1]
    functions = {dict(_fields(m))[1]: strings[dict(_fields(m))[2]] for n, m in top if n == 5}
    samples = []
    for n, m in top:
        if n == 2:
            fs = _fields(m)
            loc = [v for k, v in fs if k == 1][0]
            values = [v for k, v in fs if k == 2]
            labels = {strings[dict(_fields(v))[1]]: strings[dict(_fields(v))[2]]
                      for k, v in fs if k == 3}
            samples.append((functions[loc], values, labels))
    return strings, types, samples


def test_profile_lists_every_live_buffer(tmp_path):
    keep = [jnp.arange(1000.0) * 2, jnp.ones((3, 4), jnp.int32) + 1]
    # arrays of earlier tests held in reference cycles must not die between the two reads
    gc.collect()
    gc.disable()
    try:
        profile = jax.profiler.device_memory_profile()
        live = jax.live_arrays()
    finally:
        gc.enable()
    strings, types, samples = _decode(profile)
    assert strings[0] == "" and types == [("allocations", "count"), ("space", "bytes")]
    assert len(samples) == len(live)
    assert sum(v[1] for _, v, _ in samples) == sum(x.nbytes for x in live)
    mine = [s for s in samples if s[0] in ("f32[1000]", "i32[3,4]")]
    assert ("f32[1000]", [1, 4000]) in [(n, v) for n, v, _ in mine]
    labels = next(lab for n, _, lab in mine if n == "i32[3,4]")
    assert labels == {"device": str(keep[1]._buf.device), "shape": "(3, 4)", "dtype": "int32"}
    path = tmp_path / "memory.prof"
    jax.profiler.save_device_memory_profile(str(path))
    assert _decode(path.read_bytes())[1] == types
    np.testing.assert_array_equal(np.asarray(keep[1]), 2)
