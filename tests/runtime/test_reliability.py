"""Misuses and races that used to kill the process (abort, SIGSEGV, SIGBUS) or leak, each
run in a subprocess where it could crash: huge shapes, delete() racing with reads, interrupts
during compile and in Buffer.__del__, truncated plugin files, and StableHLO attribute
constraints checked at abstract-eval time."""
import gc
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.runtime import get_client
from pyjax._src.runtime.errors import PluginNotFoundError

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_python(code, timeout=120, **env_overrides):
    """Runs code in a fresh interpreter (it may crash); returns the CompletedProcess."""
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    env.update(env_overrides)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=timeout)


def _check_ok(r):
    assert r.returncode == 0, f"rc={r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    return r.stdout


# --- 7: shapes XLA cannot represent ------------------------------------------------------
HUGE = [
    "jnp.zeros((2**62,))",
    "jnp.zeros((2**31, 2**31))",
    "jnp.ones((2**31, 0)) @ jnp.ones((0, 2**31 + 5))",
    "pyjax.jit(lambda: jnp.zeros((2**62,))).lower().compile()",
    "jnp.zeros((2**61,), jnp.float32)",  # 2**63 bytes: one past int64
    "jnp.zeros((2**62, 2**62, 0))",
]


def test_overflowing_shapes_raise_value_error_instead_of_aborting():
    code = "import pyjax, pyjax.numpy as jnp\n" + "".join(f"""
try:
    {c}
    print("NO ERROR: {c}")
except ValueError as e:
    print("VE", e)
""" for c in HUGE)
    out = _check_ok(run_python(code))
    assert "NO ERROR" not in out
    lines = [l for l in out.splitlines() if l.startswith("VE")]
    assert len(lines) == len(HUGE)
    assert "float32[4611686018427387904]" in lines[0] and "18446744073709551616 bytes" in lines[0]
    assert "float32[2147483648, 2147483653]" in lines[2]
    assert all("RESOURCE_EXHAUSTED" in l for l in lines)


def test_overflowing_and_negative_shapes_raise_at_once():
    with pytest.raises(ValueError, match="RESOURCE_EXHAUSTED.*bytes"):
        pyjax.eval_shape(lambda: jnp.zeros((2**62,)))
    with pytest.raises(ValueError, match="RESOURCE_EXHAUSTED"):
        pyjax.jit(lambda: jnp.zeros((2**31, 2**31))).lower()
    with pytest.raises(ValueError, match="RESOURCE_EXHAUSTED"):
        pyjax.ShapeDtypeStruct((2**40, 2**40), np.float32)
    with pytest.raises(ValueError, match="negative dimensions.*-1"):
        pyjax.ShapeDtypeStruct((-1, 3), np.float32)
    # the largest that fit are fine as abstract values
    s = pyjax.ShapeDtypeStruct((2**61 - 1,), np.float32)
    assert s.shape == (2**61 - 1,)
    assert pyjax.eval_shape(lambda: jnp.zeros((2**40, 2**20), jnp.int8)).shape == (2**40, 2**20)
    assert jnp.zeros((0, 3)).shape == (0, 3)


# --- 8: delete() racing with reads -------------------------------------------------------
RACE = """
import sys, threading, time, random
import numpy as np
sys.setswitchinterval(1e-5)
import pyjax.numpy as jnp
from pyjax._src.runtime.errors import DeletedBufferError
bad, deleted_errors, reads = [], [0], [0]
for it in range(ITERS):
    x = jnp.arange(SIZE, dtype=jnp.float32) + it
    want = np.arange(SIZE, dtype=np.float32) + it
    b = x._buf
    def reader():
        while True:
            try:
                v = b.to_numpy()
            except DeletedBufferError:
                deleted_errors[0] += 1
                return
            except Exception as e:
                bad.append(repr(e)); return
            reads[0] += 1
            if not np.array_equal(v, want):
                bad.append("wrong value")
    ts = [threading.Thread(target=reader) for _ in range(8)]
    for t in ts: t.start()
    time.sleep(random.random() * 0.001)
    x.delete()
    for t in ts: t.join()
    del x, b
print("bad", bad[:3], "reads", reads[0], "deleted", deleted_errors[0])
"""


@pytest.mark.parametrize("size", [100, 100_000])
def test_delete_racing_with_reads_never_crashes(size):
    out = _check_ok(run_python(RACE.replace("ITERS", "150").replace("SIZE", str(size)),
                               timeout=300))
    assert "bad [] " in out, out
    assert "deleted 1200" in out, out  # every reader ends on the deleted error


@pytest.mark.xfail(reason="open: 8 threads reading one buffer (no delete) sometimes leave an "
                   "external-reference hold in the plugin, and destroying the buffer then "
                   "aborts ('Non-zero type 1 hold on destruction'), even with the reads "
                   "serialised per buffer", strict=False)
def test_concurrent_reads_of_one_buffer_then_destroy():
    code = """
    import sys, threading
    sys.setswitchinterval(1e-6)
    import pyjax.numpy as jnp
    for it in range(100):
        x = jnp.arange(100, dtype=jnp.float32) + it
        b = x._buf
        b.block_until_ready()
        def reader():
            for _ in range(200):
                b.to_numpy()
        ts = [threading.Thread(target=reader) for _ in range(8)]
        for t in ts: t.start()
        for t in ts: t.join()
        del x, b
    print("ok")
    """
    assert "ok" in _check_ok(run_python(code, timeout=300))


def test_read_after_delete_raises_deleted_error():
    x = jnp.arange(10.0) + 1
    b = x._buf
    b.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        b.to_numpy()


# --- 9: interrupts -----------------------------------------------------------------------
def test_interrupt_after_compile_returns_does_not_leak_the_executable(monkeypatch):
    client = get_client()
    api = client._api
    destroyed = []
    real_destroy, real_call = api.LoadedExecutable_Destroy, api.call

    def destroy(args_ref):
        destroyed.append(1)
        return real_destroy(args_ref)

    def call(name, args):
        out = real_call(name, args)
        if name == "Client_Compile":
            raise KeyboardInterrupt  # as if Ctrl-C landed right after the plugin returned
        return out

    monkeypatch.setattr(api, "LoadedExecutable_Destroy", destroy)
    monkeypatch.setattr(api, "call", call)
    text = """
func.func public @main(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.add %a, %a : tensor<3xf32>
  return %0 : tensor<3xf32>
}"""
    with pytest.raises(KeyboardInterrupt):
        client.compile(text, [(np.float32, (3,))], [(np.float32, (3,))])
    gc.collect()
    assert destroyed, "the compiled executable was leaked"


def test_buffer_del_with_unset_slots_is_silent():
    from pyjax._src.runtime.buffer import _Result
    seen = []
    old = sys.unraisablehook
    sys.unraisablehook = lambda u: seen.append(u)
    try:
        b = _Result()  # what an interrupt between creation and the slot stores leaves
        del b
        gc.collect()
    finally:
        sys.unraisablehook = old
    assert not seen, [repr(u.exc_value) for u in seen]


# --- 10: plugin files --------------------------------------------------------------------
def _plugin_path():
    from pyjax._src.runtime.plugin import find_plugin_path
    return find_plugin_path()


@pytest.mark.parametrize("cut", [100, 10_000_000])
def test_truncated_plugin_is_refused_before_loading(tmp_path, cut):
    src = _plugin_path()
    if os.path.getsize(src) <= cut:
        pytest.skip("plugin smaller than the cut")
    bad = tmp_path / "truncated.so"
    with open(src, "rb") as f:
        bad.write_bytes(f.read(cut))
    r = run_python("""
        from pyjax._src.runtime import get_client, PluginNotFoundError
        try:
            get_client()
        except PluginNotFoundError as e:
            print("MSG:", e)
    """, PYJAX_PLUGIN_PATH=str(bad))
    out = _check_ok(r)
    assert "MSG:" in out and "truncated" in out and str(bad) in out


def test_plugin_checks_name_what_is_wrong(tmp_path):
    from pyjax._src.runtime.plugin import check_plugin_file
    check_plugin_file(_plugin_path())  # the real one passes
    empty = tmp_path / "empty.so"
    empty.write_bytes(b"")
    with pytest.raises(PluginNotFoundError, match="0 bytes"):
        check_plugin_file(str(empty))
    text = tmp_path / "text.so"
    text.write_bytes(b"x" * 100)
    with pytest.raises(PluginNotFoundError, match="ELF magic"):
        check_plugin_file(str(text))
    import ctypes.util
    libm = ctypes.util.find_library("m")
    for d in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64"):
        p = os.path.join(d, libm or "libm.so.6")
        if os.path.isfile(p):
            with pytest.raises(PluginNotFoundError, match="no GetPjrtApi symbol"):
                check_plugin_file(p)
            break


# --- 11: StableHLO attribute constraints -------------------------------------------------
def test_reduce_precision_bits_checked_at_abstract_eval():
    x = jnp.ones(3)
    with pytest.raises(ValueError, match="exponent_bits must be positive.*-1"):
        lax.reduce_precision(x, -1, 2)
    with pytest.raises(ValueError, match="exponent_bits"):
        pyjax.eval_shape(lambda x: lax.reduce_precision(x, 0, 2), x)
    with pytest.raises(ValueError, match="mantissa_bits must be non-negative.*-3"):
        lax.reduce_precision(x, 5, -3)
    np.testing.assert_array_equal(np.asarray(lax.reduce_precision(x, 5, 2)), np.ones(3))


def test_bitcast_between_complex_and_real_checked_at_abstract_eval():
    with pytest.raises(TypeError, match="complex64.*uint8"):
        lax.bitcast_convert_type(jnp.ones(3, jnp.complex64), jnp.uint8)
    with pytest.raises(TypeError, match="uint8.*complex64"):
        pyjax.eval_shape(lambda x: lax.bitcast_convert_type(x, jnp.complex64),
                         jnp.ones((3, 8), jnp.uint8))
    y = lax.bitcast_convert_type(jnp.ones(3, jnp.float32), jnp.uint8)
    assert y.shape == (3, 4)
