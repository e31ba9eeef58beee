"""Hand-encoded ``xla.CompileOptionsProto`` bytes (protobuf wire format).

PJRT_Client_Compile takes the options as a serialized protobuf. pyjax has no
protobuf dependency, so the few fields it needs are encoded here. Field numbers
(from the descriptors embedded in the plugin):

CompileOptionsProto: executable_build_options=3 (message),
    compile_portable_executable=4 (bool), env_option_overrides=7
    (map<string, OptionOverrideProto>: entries {key=1, value=2}).
ExecutableBuildOptionsProto: num_replicas=4, num_partitions=5,
    use_spmd_partitioning=6, device_assignment=9 (message),
    allow_spmd_sharding_propagation_to_output=12 (repeated bool),
    allow_spmd_sharding_propagation_to_parameters=18 (repeated bool),
    use_shardy_partitioner=19.
DeviceAssignmentProto: replica_count=1, computation_count=2,
    computation_devices=3 (repeated ComputationDevice{replica_device_ids=1, packed}).

The options must ALWAYS carry num_replicas and num_partitions: empty options
make the plugin abort the process (``Check failed: replica_count > 0``).
"""

from pyjax._src.runtime.protobuf_wire import (
    bytes_field as _bytes_field, int_field as _int_field, packed_ints as _packed_ints,
    tag as _tag)


def device_assignment_proto(device_ids, num_replicas, num_partitions):
    """Encodes a DeviceAssignmentProto.

    ``device_ids`` is flat, replica-major: the device of (replica r, partition p)
    is ``device_ids[r * num_partitions + p]`` (JAX's ``(replicas, partitions)`` array).
    """
    device_ids = [int(d) for d in device_ids]
    if len(device_ids) != num_replicas * num_partitions:
        raise ValueError(
            f"device_assignment has {len(device_ids)} devices but num_replicas * "
            f"num_partitions = {num_replicas} * {num_partitions} = "
            f"{num_replicas * num_partitions}")
    body = _int_field(1, num_replicas) + _int_field(2, num_partitions)
    for p in range(num_partitions):
        replicas = [device_ids[r * num_partitions + p] for r in range(num_replicas)]
        body += _bytes_field(3, _packed_ints(1, replicas))
    return body


def build_compile_options(num_replicas=1, num_partitions=1, *,
                          use_spmd_partitioning=False, use_shardy_partitioner=False,
                          device_assignment=None, portable=False,
                          allow_spmd_sharding_propagation_to_output=None,
                          allow_spmd_sharding_propagation_to_parameters=None,
                          env_option_overrides=None):
    """Returns serialized ``CompileOptionsProto`` bytes.

    Parameters
    ----------
    num_replicas, num_partitions : int
        Both must be >= 1; they are always written.
    use_spmd_partitioning, use_shardy_partitioner : bool
    device_assignment : sequence of int, optional
        Flat replica-major device ids, see ``device_assignment_proto``.
    portable : bool
        ``compile_portable_executable``: a single-device executable that can run on
        any device (chosen at execute time).
    allow_spmd_sharding_propagation_to_output / _to_parameters : sequence of bool, optional
    """
    num_replicas, num_partitions = int(num_replicas), int(num_partitions)
    if num_replicas < 1 or num_partitions < 1:
        raise ValueError(f"num_replicas ({num_replicas}) and num_partitions "
                         f"({num_partitions}) must both be >= 1")
    build = _int_field(4, num_replicas) + _int_field(5, num_partitions)
    if use_spmd_partitioning:
        build += _int_field(6, 1)
    if device_assignment is not None:
        build += _bytes_field(
            9, device_assignment_proto(device_assignment, num_replicas, num_partitions))
    if allow_spmd_sharding_propagation_to_output:
        build += _packed_ints(12, [bool(b) for b in allow_spmd_sharding_propagation_to_output])
    if allow_spmd_sharding_propagation_to_parameters:
        build += _packed_ints(
            18, [bool(b) for b in allow_spmd_sharding_propagation_to_parameters])
    if use_shardy_partitioner:
        build += _int_field(19, 1)
    options = _bytes_field(3, build)
    if portable:
        options += _int_field(4, 1)
    overrides = DEFAULT_OPTION_OVERRIDES if env_option_overrides is None else env_option_overrides
    for name, value in overrides.items():
        options += _bytes_field(7, _bytes_field(1, name.encode()) +
                                _bytes_field(2, _option_override(value)))
    return options


# XLA:CPU's "fast" min/max drop NaNs; JAX semantics propagate them.
# XNNPACK off: this plugin's XNNPACK dot (used from about 128x256 @ 256x256 up) keeps the
# packed right operand of its previous call keyed by the buffer's address, so a new buffer
# allocated where a freed one was gives the old product (a silently wrong jnp.dot after a
# training step; tests/runtime/test_differential.py). Without it dots run at the same speed
# (128x784 @ 784x512: 0.50-0.63 ms either way; an MLP SGD step 3.4-3.8 ms either way).
# LLVM optimization level 1 instead of the default: measured 3x faster compiles of dot-heavy
# programs (dot+tanh at 128x784x512: 182 -> 55 ms) with equal or faster kernels (dots call
# into a runtime library; elementwise loops ran the same or faster). At run time O1, O2 and
# XLA's default are within 4 % on the SGD step, scan RNN and MLP forward; O0 is 1.4-1.6x slower.
# The XNN/oneDNN fusion and multi_thread_eigen options gave no gain on xla-cpu-pjrt
# (docs/performance.md).
# YNNPACK fusions for dots and reductions (the YNNPACK build, runtime/plugin.py; about 7 % less
# CPU on an MLP SGD step than dots alone, docs/performance.md). Not XLA's whole default set:
# elementwise fusions are left to XLA. YNNPACK's max/min reductions drop NaNs (max of a
# 65537-vector holding a NaN gave 4.04; JAX 0.10.2 gives 4.04 too, NumPy NaN), so pyjax writes
# float max/min reduces with a select body, which XLA does not give YNNPACK
# (lax/reductions.py). xla-cpu-pjrt knows the option and has no YNNPACK code: no effect there.
# 512-bit vectors for XLA's own loops on AMD CPUs with AVX-512 (Zen 4 on: no clock penalty
# for them): transcendental elementwise code 1.1-1.8x faster (gelu of 10^6 floats 352 -> 195 us,
# sigmoid 278 -> 164, softmax rows 494 -> 377; sin 1.1x slower), dot-heavy steps unchanged
# (MLP SGD, scan RNN, transformer block: CPU time 1.00-1.06x, docs/performance.md). Elsewhere
# XLA's default (256 bits), which spares Intel's AVX-512 frequency drop.
def _prefers_512_bit_vectors():
    try:
        with open("/proc/cpuinfo", "rb") as f:
            head = f.read(1 << 16)
    except OSError:
        return False
    return b"AuthenticAMD" in head and b" avx512f" in head


DEFAULT_OPTION_OVERRIDES = {"xla_cpu_enable_fast_min_max": False,
                            "xla_cpu_use_xnnpack": False,
                            "xla_backend_optimization_level": 1,
                            "xla_cpu_experimental_ynn_fusion_type":
                                "LIBRARY_FUSION_TYPE_DOT,LIBRARY_FUSION_TYPE_REDUCE"}
if _prefers_512_bit_vectors():
    DEFAULT_OPTION_OVERRIDES["xla_cpu_prefer_vector_width"] = 512


def _option_override(value):
    """An ``OptionOverrideProto``: string_field=1, bool_field=2, int_field=3, double_field=4."""
    if isinstance(value, bool):
        return _int_field(2, int(value))
    if isinstance(value, int):
        return _int_field(3, value)
    if isinstance(value, float):
        import struct
        return _tag(4, 1) + struct.pack("<d", value)
    return _bytes_field(1, str(value).encode())


def option_overrides(compiler_options):
    """``DEFAULT_OPTION_OVERRIDES`` updated with a user's ``compiler_options`` (as
    ``jit(..., compiler_options=)`` takes them), after checking their types here: the plugin
    rejects an unknown name or a value it cannot parse with a clean error at compile time,
    but only str, bool, int and float values have an encoding."""
    if compiler_options is None:
        return DEFAULT_OPTION_OVERRIDES
    if not isinstance(compiler_options, dict):
        raise TypeError(f"compiler_options must be a dict of option names to values, got "
                        f"{compiler_options!r}")
    merged = dict(DEFAULT_OPTION_OVERRIDES)
    for name, value in compiler_options.items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"compiler_options keys must be option names (str), got {name!r}")
        if type(value).__name__ in ("bool_", "int64", "int32", "float64", "float32"):
            value = value.item()  # NumPy scalars
        if not isinstance(value, (str, bool, int, float)):
            raise TypeError(f"compiler_options[{name!r}] must be a str, bool, int or float, "
                            f"got {value!r} of type {type(value).__name__}")
        if (isinstance(value, int) and not isinstance(value, bool)
                and not -(1 << 63) <= value < (1 << 63)):
            raise ValueError(f"compiler_options[{name!r}] = {value} does not fit in int64")
        merged[name] = value
    return merged
