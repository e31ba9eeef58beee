"""The hand-encoded CompileOptionsProto bytes (checked against PJRT_NOTES.md)."""

import pytest

from pyjax._src.runtime.compile_options import build_compile_options


@pytest.mark.parametrize("kwargs, expected", [
    (dict(), "1a 04 20 01 28 01"),
    (dict(num_partitions=8, use_spmd_partitioning=True), "1a 06 20 01 28 08 30 01"),
    (dict(num_partitions=8, use_spmd_partitioning=True, use_shardy_partitioner=True),
     "1a 09 20 01 28 08 30 01 98 01 01"),
    (dict(num_replicas=8), "1a 04 20 08 28 01"),
    (dict(device_assignment=[3]), "1a 0f 20 01 28 01 4a 09 08 01 10 01 1a 03 0a 01 03"),
    (dict(portable=True), "1a 04 20 01 28 01 20 01"),
])
def test_known_bytes(kwargs, expected):
    assert build_compile_options(**kwargs, env_option_overrides={}).hex(" ") == expected


def test_default_overrides_keep_nan_propagating_min_max():
    b = build_compile_options()
    assert b.startswith(bytes.fromhex("1a 04 20 01 28 01"))
    assert b"xla_cpu_enable_fast_min_max" in b
    assert b"xla_backend_optimization_level" in b


def test_device_assignment_layout():
    # 2 replicas x 2 partitions, replica-major ids [r * 2 + p]: one ComputationDevice per
    # partition listing its replicas' devices.
    b = build_compile_options(2, 2, device_assignment=[10, 11, 12, 13], env_option_overrides={})
    da = b[b.index(b"\x4a") + 2:]
    assert da == bytes([0x08, 2, 0x10, 2, 0x1a, 4, 0x0a, 2, 10, 12, 0x1a, 4, 0x0a, 2, 11, 13])


def test_validation():
    with pytest.raises(ValueError, match="must both be >= 1"):
        build_compile_options(0, 1)
    with pytest.raises(ValueError, match="device_assignment has 1 devices"):
        build_compile_options(2, 1, device_assignment=[0])
