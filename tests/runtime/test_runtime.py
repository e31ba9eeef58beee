"""Tests of layer 0 (pyjax._src.runtime) against numpy, with hand-written StableHLO."""

import gc
import os
import subprocess
import sys
import textwrap

import ml_dtypes
import numpy as np
import pytest

from pyjax._src.runtime import (Buffer, Client, Device, Executable, PluginNotFoundError,
                                XlaRuntimeError, dtype_to_pjrt_type, get_client)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

F32_4 = (np.float32, (4,))
ADD = """module {
  func.func public @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %a, %b : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}"""

ALL_DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
              np.uint32, np.uint64, np.float16, ml_dtypes.bfloat16, np.float32, np.float64,
              np.complex64, np.complex128]


@pytest.fixture(scope="module")
def client():
    return get_client()


@pytest.fixture(scope="module")
def add_exe(client):
    return client.compile(ADD, [F32_4, F32_4], [F32_4])


def need_devices(client, n):
    if len(client.devices) < n:
        pytest.skip(f"needs {n} devices (set PYJAX_CPU_DEVICES)")


def run_python(code, timeout=120, **env_overrides):
    """Runs code in a fresh interpreter; returns CompletedProcess."""
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    for k, v in env_overrides.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=timeout)


def sample(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)
    if dt.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    return (rng.standard_normal(shape) * 100).astype(dt)


# --- client and devices ------------------------------------------------------------------
def test_client_and_devices(client):
    assert isinstance(client, Client)
    assert get_client() is client
    assert client.platform == "cpu"
    assert isinstance(client.platform_version, str)
    devs = client.devices
    assert [d.id for d in devs] == list(range(len(devs)))
    d0 = devs[0]
    assert isinstance(d0, Device)
    assert (d0.platform, d0.device_kind, d0.process_index) == ("cpu", "cpu", 0)
    assert d0.client is client
    assert repr(d0) == "CpuDevice(id=0)" and str(d0) == "cpu:0"  # JAX 0.10.2's forms
    assert {d0: 1}[devs[0]] == 1 and d0 == devs[0]
    if len(devs) > 1:
        assert d0 != devs[1] and hash(d0) != hash(devs[1])
    assert client.device(0) is d0
    with pytest.raises(ValueError):
        client.device(len(devs))


# --- transfers ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(), (0,), (5,), (3, 4), (2, 0, 3), (2, 3, 4)])
def test_roundtrip_every_dtype(client, dtype, shape):
    x = sample(dtype, shape)
    buf = client.buffer_from_pyval(x)
    assert buf.shape == shape and buf.dtype == np.dtype(dtype)
    assert buf.device is client.devices[0]
    assert buf.nbytes == x.nbytes
    y = buf.to_numpy()
    assert y.dtype == x.dtype and y.shape == x.shape
    assert y.tobytes() == x.tobytes()  # bit-exact, NaNs included
    assert y.flags.owndata and y.flags.writeable
    y[...] = 0  # a fresh copy: the device value is unchanged
    assert buf.to_numpy().tobytes() == x.tobytes()


def test_bfloat16_values(client):
    x = np.array([1.0, -2.5, 3.140625, np.inf], dtype=ml_dtypes.bfloat16)
    y = client.buffer_from_pyval(x).to_numpy()
    assert y.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(y.astype(np.float32), x.astype(np.float32))


def test_copy_semantics_and_noncontiguous(client):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    buf = client.buffer_from_pyval(x)
    x[:] = -1  # the upload copied during the call
    np.testing.assert_array_equal(buf.to_numpy(), np.arange(12).reshape(3, 4))
    base = np.arange(24, dtype=np.int32).reshape(4, 6)
    for view in (base.T, base[:, ::2], base[::-1]):
        np.testing.assert_array_equal(client.buffer_from_pyval(view).to_numpy(), view)
    ro = np.frombuffer(np.arange(5, dtype=np.int64).tobytes(), np.int64)
    assert not ro.flags.writeable
    np.testing.assert_array_equal(client.buffer_from_pyval(ro).to_numpy(), np.arange(5))
    big_endian = np.arange(4, dtype=">f4")
    np.testing.assert_array_equal(client.buffer_from_pyval(big_endian).to_numpy(),
                                  np.arange(4))
    np.testing.assert_array_equal(np.asarray(client.buffer_from_pyval([1, 2])), [1, 2])


@pytest.mark.parametrize("bad", [np.array(["a"]), np.array([object()]), np.zeros(2, "M8[s]")])
def test_unsupported_dtype(client, bad):
    with pytest.raises(TypeError, match=str(bad.dtype).replace("[", r"\[")):
        client.buffer_from_pyval(bad)


def test_dtype_to_pjrt_type():
    expected = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 11, 12, 14, 15]
    assert [dtype_to_pjrt_type(np.dtype(d)) for d in ALL_DTYPES] == expected
    with pytest.raises(TypeError, match="object"):
        dtype_to_pjrt_type(object)


def test_copy_to_device(client):
    need_devices(client, 2)
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    b0 = client.buffer_from_pyval(x)
    b1 = b0.copy_to_device(client.devices[1])
    assert b1.device is client.devices[1]
    np.testing.assert_array_equal(b1.to_numpy(), x)
    b2 = client.buffer_from_pyval(x, device=client.devices[-1])
    assert b2.device is client.devices[-1]


# --- compile and execute -----------------------------------------------------------------
def test_execute_add(client, add_exe):
    assert isinstance(add_exe, Executable)
    assert add_exe.num_outputs == 1 and add_exe.portable
    assert add_exe.in_types == [(np.dtype(np.float32), (4,))] * 2
    a, b = np.arange(4, dtype=np.float32), np.full(4, 0.5, np.float32)
    (out,) = add_exe.execute([client.buffer_from_pyval(a), client.buffer_from_pyval(b)])
    assert isinstance(out, Buffer) and out.shape == (4,) and out.dtype == np.float32
    np.testing.assert_array_equal(out.block_until_ready().to_numpy(), a + b)
    assert out.is_ready()
    (out2,) = add_exe.execute_unchecked([out, out])
    np.testing.assert_array_equal(out2.to_numpy(), 2 * (a + b))


def test_async_chain(client, add_exe):
    x = client.buffer_from_pyval(np.ones(4, np.float32))
    for _ in range(100):
        (x,) = add_exe.execute_unchecked([x, x])
    np.testing.assert_array_equal(x.to_numpy(), np.full(4, 2.0 ** 100, np.float32))


def test_multiple_outputs_and_scalars(client):
    src = """module {
      func.func public @main(%x: tensor<2x3xf64>, %s: tensor<i32>)
          -> (tensor<2x3xf64>, tensor<3xf64>, tensor<i32>, tensor<2x3xi1>) {
        %0 = stablehlo.multiply %x, %x : tensor<2x3xf64>
        %z = stablehlo.constant dense<0.0> : tensor<f64>
        %1 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0]
            : (tensor<2x3xf64>, tensor<f64>) -> tensor<3xf64>
        %2 = stablehlo.add %s, %s : tensor<i32>
        %3 = stablehlo.compare GT, %x, %0 : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xi1>
        return %0, %1, %2, %3 : tensor<2x3xf64>, tensor<3xf64>, tensor<i32>, tensor<2x3xi1>
      }
    }"""
    types = [(np.float64, (2, 3)), (np.float64, (3,)), (np.int32, ()), (np.bool_, (2, 3))]
    exe = client.compile(src, [(np.float64, (2, 3)), (np.int32, ())], types)
    assert exe.num_outputs == 4
    x = np.array([[0.5, 2.0, -1.0], [3.0, 0.25, 1.0]])
    outs = exe.execute([client.buffer_from_pyval(x), client.buffer_from_pyval(np.int32(21))])
    res = [o.to_numpy() for o in outs]
    np.testing.assert_array_equal(res[0], x * x)
    np.testing.assert_array_equal(res[1], x.sum(0))
    assert res[2].shape == () and res[2] == 42 and res[2].dtype == np.int32
    np.testing.assert_array_equal(res[3], x > x * x)
    # out_types=None asks the plugin
    exe2 = client.compile(src, None, None)
    assert [(d, s) for d, s in exe2.out_types] == [(np.dtype(d), s) for d, s in types]


def test_no_arguments(client):
    src = """module { func.func public @main() -> tensor<2xui8> {
      %0 = stablehlo.constant dense<[7, 255]> : tensor<2xui8>
      return %0 : tensor<2xui8> } }"""
    exe = client.compile(src, [], [(np.uint8, (2,))])
    np.testing.assert_array_equal(exe.execute([])[0].to_numpy(), [7, 255])
    (out,) = exe.execute_unchecked([], client.devices[-1])
    assert out.device is client.devices[-1]


def test_argument_checks(client, add_exe):
    f = client.buffer_from_pyval(np.zeros(4, np.float32))
    with pytest.raises(TypeError, match="takes 2 arguments.*got 1"):
        add_exe.execute([f])
    with pytest.raises(TypeError, match="takes 2 arguments"):
        add_exe.execute_unchecked([f, f, f])  # never reads stale pointers
    i = client.buffer_from_pyval(np.zeros(4, np.int32))
    with pytest.raises(TypeError, match=r"argument 1: expected float32\[4\], got int32\[4\]"):
        add_exe.execute([f, i])
    s = client.buffer_from_pyval(np.zeros(5, np.float32))
    with pytest.raises(ValueError, match=r"argument 0: expected float32\[4\], got float32\[5\]"):
        add_exe.execute([s, f])
    with pytest.raises(TypeError, match="must be a Buffer"):
        add_exe.execute([np.zeros(4, np.float32), f])


def test_out_types_mismatch(client):
    with pytest.raises(ValueError, match=r"out_types\[0\] is float32\[5\]"):
        client.compile(ADD, [F32_4, F32_4], [(np.float32, (5,))])
    with pytest.raises(ValueError, match="2 results"):
        client.compile(ADD, [F32_4, F32_4], [F32_4, F32_4])


def test_bad_mlir(client):
    bad = ADD.replace("stablehlo.add", "stablehlo.bogus_op")
    with pytest.raises(XlaRuntimeError, match="stablehlo.bogus_op") as info:
        client.compile(bad, [F32_4, F32_4], [F32_4])
    assert info.value.code_name == "UNKNOWN" and "error" in info.value.message
    with pytest.raises(XlaRuntimeError, match="main"):
        client.compile(ADD.replace("public @main", "public @f"), [F32_4, F32_4], [F32_4])


def test_portable_on_other_device(client, add_exe):
    need_devices(client, 4)
    d3 = client.devices[3]
    a = client.buffer_from_pyval(np.arange(4, dtype=np.float32), device=d3)
    (out,) = add_exe.execute([a, a])
    assert out.device is d3
    np.testing.assert_array_equal(out.to_numpy(), 2 * np.arange(4))
    b = client.buffer_from_pyval(np.arange(4, dtype=np.float32))
    with pytest.raises(ValueError, match="argument 1 is on CpuDevice"):
        add_exe.execute([a, b])
    with pytest.raises(XlaRuntimeError):  # unchecked: PJRT's own device check
        add_exe.execute_unchecked([a, b], d3)


def test_pinned_device_assignment(client):
    need_devices(client, 3)
    exe = client.compile(ADD, [F32_4, F32_4], [F32_4], device_assignment=[2])
    assert not exe.portable and exe.devices == [client.devices[2]]
    a = client.buffer_from_pyval(np.ones(4, np.float32), device=client.devices[2])
    (out,) = exe.execute([a, a])
    assert out.device is client.devices[2]
    np.testing.assert_array_equal(out.to_numpy(), np.full(4, 2.0))
    with pytest.raises(ValueError, match="compiled for"):
        exe.execute([a, a], client.devices[0])


def test_serialize_roundtrip(client, add_exe):
    exe = client.deserialize_executable(add_exe.serialize(), add_exe.in_types,
                                        add_exe.out_types, portable=True)
    a = client.buffer_from_pyval(np.arange(4, dtype=np.float32), device=client.devices[-1])
    np.testing.assert_array_equal(exe.execute([a, a])[0].to_numpy(), 2 * np.arange(4))


# --- lifetime, deletion, donation ---------------------------------------------------------
def test_delete_then_use(client, add_exe):
    b = client.buffer_from_pyval(np.ones(4, np.float32))
    b.to_numpy()
    assert not b.is_deleted()
    b.delete()
    assert b.is_deleted()
    for use in (b.to_numpy, b.block_until_ready, lambda: b.copy_to_device(client.devices[0]),
                lambda: add_exe.execute([b, b])[0].to_numpy()):
        with pytest.raises(XlaRuntimeError, match=r"Array has been deleted with shape=float32\[4\]\."):
            use()
    e = client.buffer_from_pyval(np.ones((0, 3), np.float32))
    e.delete()
    with pytest.raises(XlaRuntimeError):
        e.to_numpy()
    b.delete()  # deleting twice is harmless; destroying deleted buffers too (by the GC)


def test_donation(client):
    src = """module { func.func public @main(%a: tensor<4xf32> {tf.aliasing_output = 0 : i32})
        -> tensor<4xf32> {
      %0 = stablehlo.add %a, %a : tensor<4xf32>
      return %0 : tensor<4xf32> } }"""
    exe = client.compile(src, [F32_4], [F32_4])
    x = client.buffer_from_pyval(np.arange(4, dtype=np.float32))
    (y,) = exe.execute([x])
    np.testing.assert_array_equal(y.to_numpy(), 2 * np.arange(4))
    assert x.is_deleted() and not y.is_deleted()
    with pytest.raises(XlaRuntimeError, match=r"Array has been deleted with shape=float32\[4\]\."):
        x.to_numpy()
    with pytest.raises(XlaRuntimeError):
        exe.execute([x])


def test_many_buffers_freed(client, add_exe):
    x = client.buffer_from_pyval(np.ones(4, np.float32))
    for _ in range(2000):
        add_exe.execute_unchecked([x, x])
        client.buffer_from_pyval(np.ones(16, np.float32))
    gc.collect()


def test_threads(client, add_exe, in_threads):
    def work(k):
        x = client.buffer_from_pyval(np.full(4, k, np.float32))
        for _ in range(300):
            (y,) = add_exe.execute_unchecked([x, x])
            assert y.to_numpy()[0] == 2 * k

    in_threads(work, 4)


# --- multi-device programs -------------------------------------------------------------
ALL_REDUCE = """module {
  func.func public @main(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<ui32>) {
    %0 = "stablehlo.all_reduce"(%a) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %s = stablehlo.add %x, %y : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4xf32>) -> tensor<4xf32>
    %r = stablehlo.replica_id : tensor<ui32>
    return %0, %r : tensor<4xf32>, tensor<ui32>
  }
}"""


@pytest.mark.parametrize("assignment", [None, "reversed"])
def test_execute_sharded_all_reduce(client, assignment):
    need_devices(client, 2)
    da = None if assignment is None else [client.devices[-1].id, client.devices[0].id]
    exe = client.compile(ALL_REDUCE, [F32_4], [F32_4, (np.uint32, ())], num_replicas=2,
                         device_assignment=da)
    expected = client.devices[:2] if da is None else [client.devices[-1], client.devices[0]]
    assert exe.devices == expected and not exe.portable
    args = [[client.buffer_from_pyval(np.full(4, i + 1, np.float32), d)]
            for i, d in enumerate(exe.devices)]
    outs = exe.execute_sharded(args)
    assert len(outs) == 2 and all(len(o) == 2 for o in outs)
    for r, (summed, rid) in enumerate(outs):
        assert summed.device is exe.devices[r] and rid.device is exe.devices[r]
        np.testing.assert_array_equal(summed.to_numpy(), np.full(4, 3.0))
        assert int(rid.to_numpy()) == r
    with pytest.raises(ValueError, match="execute_sharded"):
        exe.execute(args[0])
    with pytest.raises(ValueError, match="argument lists for 2 devices"):
        exe.execute_sharded(args[:1])
    with pytest.raises(ValueError, match="expected"):
        exe.execute_sharded(args[::-1])  # each shard on the wrong device


def test_spmd_partitioned(client):
    need_devices(client, 2)
    src = """module {
      func.func public @main(%a: tensor<8xf32> {mhlo.sharding = "{devices=[2]<=[2]}"})
          -> (tensor<f32> {mhlo.sharding = "{replicated}"}) {
        %z = stablehlo.constant dense<0.0> : tensor<f32>
        %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0]
            : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
        return %0 : tensor<f32>
      }
    }"""
    exe = client.compile(src, [F32_4], [(np.float32, ())], num_partitions=2,
                         use_spmd_partitioning=True)
    x = np.arange(8, dtype=np.float32)
    outs = exe.execute_sharded([[client.buffer_from_pyval(x[4 * i:4 * i + 4], d)]
                                for i, d in enumerate(exe.devices)])
    assert [float(o[0].to_numpy()) for o in outs] == [28.0, 28.0]


def test_compile_needs_enough_devices(client):
    with pytest.raises(ValueError, match="devices"):
        client.compile(ALL_REDUCE, [F32_4], None, num_replicas=len(client.devices) + 1)
    with pytest.raises(ValueError, match="portable"):
        client.compile(ALL_REDUCE, [F32_4], None, num_replicas=2, portable=True)


# --- subprocesses: environment, plugin discovery, shutdown --------------------------------
def test_device_count_from_env(monkeypatch):
    from pyjax._src.runtime import cpu_device_count
    code = """
        from pyjax._src.runtime import get_client
        c = get_client()
        print(len(c.devices), [d.id for d in c.devices])
    """
    r = run_python(code, PYJAX_CPU_DEVICES="3")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "3 [0, 1, 2]"
    monkeypatch.delenv("PYJAX_CPU_DEVICES", raising=False)
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    assert cpu_device_count() == 1  # JAX's default
    # JAX's way of asking for N CPU devices is honoured when PYJAX_CPU_DEVICES is unset.
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=5")
    assert cpu_device_count() == 5
    monkeypatch.setenv("PYJAX_CPU_DEVICES", "2")
    assert cpu_device_count() == 2
    for bad in ("abc", "0", "-2", "1.5"):
        monkeypatch.setenv("PYJAX_CPU_DEVICES", bad)
        with pytest.raises(ValueError, match="PYJAX_CPU_DEVICES must be a positive integer"):
            cpu_device_count()


def test_missing_plugin_message(monkeypatch, tmp_path):
    code = """
        from pyjax._src.runtime import get_client, PluginNotFoundError
        try:
            get_client()
        except PluginNotFoundError as e:
            assert isinstance(e, RuntimeError)
            print("MSG:", e)
    """
    r = run_python(code, PYJAX_PLUGIN_PATH="/nonexistent/plugin.so")
    assert r.returncode == 0, r.stderr
    assert "/nonexistent/plugin.so" in r.stdout
    assert "pip install xla-cpu-pjrt" in r.stdout and "PYJAX_PLUGIN_PATH" in r.stdout
    # A file that is not a shared object, in-process (dlopen fails cleanly).
    from pyjax._src.runtime.plugin import find_plugin_path, load_plugin
    fake = tmp_path / "fake.so"
    fake.write_bytes(b"not a shared object")
    monkeypatch.setenv("PYJAX_PLUGIN_PATH", str(fake))
    assert find_plugin_path() == str(fake)
    with pytest.raises(PluginNotFoundError, match="Could not load.*pip install xla-cpu-pjrt"):
        load_plugin()
    monkeypatch.delenv("PYJAX_PLUGIN_PATH")
    assert find_plugin_path().endswith(".so")


def test_xla_flags_sanitized(monkeypatch):
    from pyjax._src.runtime.plugin import find_plugin_path, prepare_environment
    monkeypatch.setenv("XLA_FLAGS", "--xla_bogus_flag_xyz=1 notaflag "
                       "--xla_cpu_enable_fast_math=false --xla_dump_hlo_as_text")
    with pytest.warns(RuntimeWarning, match="--xla_bogus_flag_xyz=1 notaflag"):
        prepare_environment(find_plugin_path())
    assert os.environ["XLA_FLAGS"] == "--xla_cpu_enable_fast_math=false --xla_dump_hlo_as_text"
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_enable_fast_math=false")
    prepare_environment(find_plugin_path())  # nothing to remove: no warning
    assert os.environ["XLA_FLAGS"] == "--xla_cpu_enable_fast_math=false"
    # End to end: without the clean-up this compile would abort the process.
    code = """
        import os, numpy as np
        from pyjax._src.runtime import get_client
        c = get_client()
        c.compile(%r, [(np.float32, (4,))] * 2, None)
        print("ok", os.environ.get("XLA_FLAGS"))
    """ % ADD
    r = run_python(code, XLA_FLAGS="--xla_bogus_flag_xyz=1 --xla_cpu_enable_fast_math=false",
                   PYJAX_CPU_DEVICES="1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok --xla_cpu_enable_fast_math=false"
    assert "removed from XLA_FLAGS" in r.stderr


def test_xla_flags_set_after_import_apply(tmp_path):
    # JAX 0.10.2 honours XLA_FLAGS set after `import jax` and before the first computation
    # (observed: --xla_dump_to set then dumps the first jit's program). The XLA CPU plugin
    # parses XLA_FLAGS once per process, when the first client is created (measured: a later
    # client does not see a change either), so nothing in pyjax may create a client at import
    # (docs/first_call.md, "Creating the client at import"). The sleep gives anything started
    # at import the time to do so.
    dump = tmp_path / "dump"
    code = """
        import os, time
        import pyjax, pyjax.numpy as jnp
        time.sleep(0.5)
        os.environ["XLA_FLAGS"] = "--xla_dump_to=" + %r
        print(float(pyjax.jit(lambda x: x * 3.0)(jnp.ones(2))[1]))
    """ % str(dump)
    r = run_python(code, XLA_FLAGS=None, PYJAX_COMPILATION_CACHE="0")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "3.0"
    assert dump.is_dir() and any(p.suffix == ".txt" for p in dump.iterdir())


def test_exit_with_live_objects():
    code = """
        import numpy as np
        from pyjax._src.runtime import get_client
        c = get_client()
        exe = c.compile(%r, [(np.float32, (4,))] * 2, [(np.float32, (4,))])
        x = c.buffer_from_pyval(np.ones(4, np.float32))
        outs = [exe.execute([x, x]) for _ in range(100)]   # some still in flight
        gone = c.buffer_from_pyval(np.ones(3)); gone.delete()
        cycle = [x, exe]; cycle.append(cycle)               # freed only at shutdown
        print("done")
    """ % ADD
    r = run_python(code, PYJAX_CPU_DEVICES="2")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "done"
    assert "Exception ignored" not in r.stderr and "Traceback" not in r.stderr


def test_unknown_in_types(client):
    exe = client.compile(ADD, None, None)
    assert exe.in_types is None and exe.out_types == [(np.dtype(np.float32), (4,))]
    a = client.buffer_from_pyval(np.ones(4, np.float32))
    np.testing.assert_array_equal(exe.execute([a, a])[0].to_numpy(), np.full(4, 2.0))
    np.testing.assert_array_equal(exe.execute_unchecked([a, a])[0].to_numpy(), np.full(4, 2.0))
    with pytest.raises(XlaRuntimeError):  # PJRT's own count check
        exe.execute_unchecked([a])
