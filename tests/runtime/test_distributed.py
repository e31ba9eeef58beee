"""pyjax.distributed: the coordinator's key-value store (across threads and processes), the
PJRT key-value callbacks called the way a plugin calls them, initialize/shutdown in fresh
processes, and the clear error on the CPU plugin, which cannot run several processes."""
import ctypes
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from pyjax._src.runtime import capi, kv_store
from pyjax._src.runtime.client import Client, get_client
from pyjax._src.runtime.kv_store import KeyValueClient, KeyValueError, KeyValueServer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def store():
    server = KeyValueServer("127.0.0.1:0")
    yield f"127.0.0.1:{server.port}"
    server.shutdown()


def test_store_set_get_and_timeouts(store):
    a, b = KeyValueClient(store, 5), KeyValueClient(store, 5)
    a.set("k1", b"\x00\xffbytes")
    assert b.try_get("k1") == b"\x00\xffbytes"
    with pytest.raises(KeyValueError, match="not found") as e:
        b.try_get("absent")
    assert e.value.code == 5   # NOT_FOUND
    t = time.monotonic()
    with pytest.raises(KeyValueError, match="not set within 200 ms") as e:
        b.blocking_get("absent", 200)
    assert e.value.code == 4 and time.monotonic() - t < 5   # DEADLINE_EXCEEDED, no hang
    # A blocking get waits for a put that comes later from another client.
    threading.Timer(0.2, lambda: a.set("later", "v")).start()
    assert b.blocking_get("later", 5000) == b"v"
    a.close()
    with pytest.raises(KeyValueError, match="closed"):
        a.set("x", b"")


def test_connect_barrier_waits_for_every_process():
    server = KeyValueServer("127.0.0.1:0")
    try:
        address = f"127.0.0.1:{server.port}"
        done = []

        def process(pid):
            c = KeyValueClient(address, 5)
            c.connect(pid, 3, 10)
            done.append(pid)
            c.close()
        threads = [threading.Thread(target=process, args=(pid,)) for pid in (2, 0)]
        for t in threads:
            t.start()
        time.sleep(0.3)
        assert done == []   # two of three have arrived: both still wait
        process(1)
        for t in threads:
            t.join(10)
        assert sorted(done) == [0, 1, 2]
    finally:
        server.shutdown()


def test_connect_timeouts_do_not_hang():
    t = time.monotonic()
    with pytest.raises(KeyValueError, match="could not connect"):
        KeyValueClient(f"127.0.0.1:{free_port()}", 0.3)
    server = KeyValueServer("127.0.0.1:0")
    try:
        c = KeyValueClient(f"127.0.0.1:{server.port}", 5)
        with pytest.raises(KeyValueError, match=r"only processes \[0\] of 2 connected"):
            c.connect(0, 2, 0.3)
    finally:
        server.shutdown()
    assert time.monotonic() - t < 10
    with pytest.raises(ValueError, match="host:port"):
        KeyValueClient("no-port", 1)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(KeyValueError, match="could not serve the coordinator"):
            KeyValueServer(f"127.0.0.1:{taken.getsockname()[1]}")


def _call(fn, args):
    return kv_store._CALLBACK(fn)(ctypes.addressof(args))


def test_pjrt_callbacks_as_a_plugin_calls_them(store):
    """Call the kv_* function pointers with the header's Args structs; errors come back
    through callback_error (recorded here), never as a Python exception or a crash."""
    writer, reader = KeyValueClient(store, 5), KeyValueClient(store, 5)
    fns, keep = kv_store.pjrt_callbacks(writer)
    rfns, rkeep = kv_store.pjrt_callbacks(reader)
    errors = []

    @kv_store._ERROR_FN
    def callback_error(code, msg, size):
        errors.append((code, ctypes.string_at(msg, size).decode()))
        return 0xBAD0

    err_ptr = ctypes.pointer(callback_error)
    key, value = b"topology/0", b"\x01\x02\x00\x03"
    put = kv_store.KVPutArgs(key=ctypes.cast(key, ctypes.c_void_p).value, key_size=len(key),
                             value=ctypes.cast(value, ctypes.c_void_p).value,
                             value_size=len(value), callback_error=err_ptr)
    put.struct_size = ctypes.sizeof(put)
    assert _call(fns["kv_put_callback"], put) is None and not errors

    get = kv_store.KVGetArgs(key=ctypes.cast(key, ctypes.c_void_p).value, key_size=len(key),
                             timeout_in_ms=1000, callback_error=err_ptr)
    assert _call(rfns["kv_get_callback"], get) is None and not errors
    assert ctypes.string_at(get.value, get.value_size) == value
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(get.value_deleter_callback)(get.value)  # free

    missing = b"topology/9"
    tg = kv_store.KVTryGetArgs(key=ctypes.cast(missing, ctypes.c_void_p).value,
                               key_size=len(missing), callback_error=err_ptr)
    assert _call(rfns["kv_try_get_callback"], tg) == 0xBAD0
    assert errors[-1][0] == 5 and "not found" in errors[-1][1]
    get.key, get.key_size, get.timeout_in_ms = tg.key, tg.key_size, 50
    assert _call(rfns["kv_get_callback"], get) == 0xBAD0 and errors[-1][0] == 4
    # A closed connection is an INTERNAL error, not an exception through C.
    writer.close()
    assert _call(fns["kv_put_callback"], put) == 0xBAD0 and errors[-1][0] == 13
    reader.close()


def test_cpu_client_created_with_kv_callbacks(store):
    """The CPU plugin accepts the callbacks (and ignores them): process 0, the devices asked
    for, every device global and addressable."""
    kv = KeyValueClient(store, 5)
    fns, keep = kv_store.pjrt_callbacks(kv)
    client = Client(get_client()._api, {"cpu_device_count": 2}, fns, keep)
    assert client.process_index == 0
    assert [d.id for d in client.global_devices] == [d.id for d in client.devices] == [0, 1]
    kv.close()


_SCRIPT = textwrap.dedent("""
    import sys, pyjax as jax
    port, pid, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    try:
        jax.distributed.initialize(f"127.0.0.1:{port}", num_processes=n, process_id=pid,
                                   initialization_timeout=20)
    except RuntimeError as e:
        print("RuntimeError:", e, "| initialized:", jax.distributed.is_initialized())
        sys.exit(0)
    print("ok", jax.distributed.is_initialized(), jax.process_index(), jax.process_count(),
          jax.process_indices(), jax.local_device_count(), jax.device_count(),
          float(jax.numpy.arange(4.0).sum()))
    for bad in [dict(), dict(num_processes=1, process_id=0)]:
        try:
            jax.distributed.initialize(f"127.0.0.1:{port}", **bad)
        except (RuntimeError, ValueError) as e:
            print(type(e).__name__ + ":", e)
    jax.distributed.shutdown()
    jax.distributed.shutdown()   # a second one does nothing
    print("after shutdown", jax.distributed.is_initialized())
""")


def _run(*argv, env=None):
    out = subprocess.run([sys.executable, "-c", _SCRIPT, *map(str, argv)], cwd=ROOT,
                         capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYJAX_CPU_DEVICES="4", JAX_PLATFORMS="cpu",
                                  PYTHONPATH=ROOT, **(env or {})))
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_initialize_one_process_and_the_cpu_plugin_error():
    out = _run(free_port(), 0, 1)
    assert "ok True 0 1 [0] 4 4 6.0" in out
    assert "RuntimeError: jax.distributed.initialize() must be called before any JAX" in out
    assert "after shutdown False" in out
    # Two processes on the CPU plugin: the error says what is missing; nothing started.
    out = _run(free_port(), 1, 2)
    assert "cannot run several processes" in out and "kv_get_callback" in out
    assert "InProcessCollectives" in out and "initialized: False" in out


def test_initialize_argument_errors():
    import pyjax
    from pyjax._src.runtime import distributed
    with pytest.raises(RuntimeError, match="must be called before"):
        pyjax.distributed.initialize("127.0.0.1:1", 1, 0)   # this process has a backend
    saved = dict(client_mod_clients := distributed.client_mod._clients)
    client_mod_clients.clear()   # pretend no backend, to reach the argument checks
    try:
        with pytest.raises(ValueError, match="coordinator_address should be defined"):
            pyjax.distributed.initialize(num_processes=1, process_id=0)
        with pytest.raises(ValueError, match="Number of processes must be defined"):
            pyjax.distributed.initialize("127.0.0.1:1", process_id=0)
        with pytest.raises(TypeError, match="process_id must be a nonnegative int"):
            pyjax.distributed.initialize("127.0.0.1:1", 2, "0")
        with pytest.raises(ValueError, match="process_id < num_processes"):
            pyjax.distributed.initialize("127.0.0.1:1", 2, 2)
        with pytest.raises(NotImplementedError, match="cluster_detection_method='slurm'"):
            pyjax.distributed.initialize(cluster_detection_method="slurm")
        with pytest.raises(NotImplementedError, match="heartbeat_timeout_seconds"):
            pyjax.distributed.initialize("127.0.0.1:1", 1, 0, heartbeat_timeout_seconds=5)
    finally:
        client_mod_clients.update(saved)
    assert not pyjax.distributed.is_initialized()
