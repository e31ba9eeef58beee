"""The persistent compilation cache: a second process loads what the first compiled, corrupt
entries are skipped and replaced, concurrent writers leave valid entries, the thresholds and
the size bound hold, and the flags turn it on and off."""
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax.experimental.compilation_cache import compilation_cache as cc
from pyjax.test_util import count_compiles, count_xla_compiles, persistent_cache_stats
from pyjax._src.runtime import disk_cache

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# A program run in a fresh process: it prints its XLA compile count, the cache's counts and
# a result that depends on the compiled code (so a wrong executable would show).
PROGRAM = textwrap.dedent("""
    import json, sys
    import pyjax, pyjax.numpy as jnp
    from pyjax.test_util import count_xla_compiles, persistent_cache_stats

    def loss(w, x):
        return jnp.sum(jnp.tanh(x @ w) ** 2)

    with count_xla_compiles() as n:
        step = pyjax.jit(pyjax.grad(loss))
        w = jnp.arange(12.0).reshape(3, 4) / 10
        x = jnp.arange(6.0).reshape(2, 3) / 7
        g = step(w, x)
        on_other = pyjax.device_put(w, pyjax.devices()[1])
        g1 = step(on_other, pyjax.device_put(x, pyjax.devices()[1]))
        # a loaded program calls this process's host callback (by the id it was lowered with)
        host = pyjax.jit(lambda v: pyjax.pure_callback(
            lambda a: (a * 3).astype(a.dtype), pyjax.ShapeDtypeStruct(v.shape, v.dtype), v))
        out = [g.tolist(), g1.tolist(), str(g1.devices()), host(x).tolist()]
    print(json.dumps({"xla": n(), "stats": persistent_cache_stats(), "out": out}))
""")


def _run(cache_dir, *, env=None, program=PROGRAM, check=True):
    e = dict(os.environ, PYTHONPATH=ROOT, PYJAX_COMPILATION_CACHE="1",
             PYJAX_COMPILATION_CACHE_DIR=str(cache_dir), PYJAX_CPU_DEVICES="2")
    e.update(env or {})
    p = subprocess.run([sys.executable, "-c", program], env=e, capture_output=True,
                       text=True, timeout=120)
    if check:
        assert p.returncode == 0, p.stderr
    import json
    return json.loads(p.stdout.strip().splitlines()[-1]), p.stderr


def _reference():
    def loss(w, x):
        return np.sum(np.tanh(x @ w) ** 2)
    w = np.arange(12.0).reshape(3, 4) / 10
    x = np.arange(6.0).reshape(2, 3) / 7
    t = np.tanh(x @ w)
    return x.T @ (2 * t * (1 - t ** 2))


def _entry_files(d):
    return sorted(str(p) for p in d.rglob("*.pjrtexe"))


def test_second_process_loads_what_the_first_compiled(tmp_path):
    first, _ = _run(tmp_path)
    assert first["xla"] > 0 and first["stats"]["stores"] == first["xla"]
    assert _entry_files(tmp_path)
    second, _ = _run(tmp_path)
    assert second["xla"] == 0, second  # everything came from disk
    assert second["stats"]["hits"] == first["stats"]["stores"]
    assert second["out"] == first["out"]
    np.testing.assert_allclose(second["out"][0], _reference(), rtol=1e-5)
    np.testing.assert_allclose(second["out"][1], _reference(), rtol=1e-5)
    assert "1" in second["out"][2]  # the loaded program also runs on the second device
    np.testing.assert_allclose(second["out"][3], np.arange(6.0).reshape(2, 3) / 7 * 3,
                               rtol=1e-6)


def test_corrupt_and_truncated_entries_are_skipped_and_replaced(tmp_path):
    first, _ = _run(tmp_path)
    files = _entry_files(tmp_path)
    for k, f in enumerate(files):
        data = open(f, "rb").read()
        with open(f, "wb") as out:
            if k % 3 == 0:
                out.write(data[: len(data) // 2])  # truncated
            elif k % 3 == 1:
                out.write(data[:-10] + bytes(10))  # payload bytes flipped
            else:
                out.write(b"garbage")  # not an entry at all
    second, err = _run(tmp_path)
    assert "skipping the compilation cache entry" in err
    assert second["stats"]["corrupt"] == len(files)
    assert second["xla"] == first["xla"]  # recompiled
    assert second["out"] == first["out"]
    third, _ = _run(tmp_path)  # and the replacements are good
    assert third["xla"] == 0 and third["stats"]["corrupt"] == 0


def test_concurrent_writers_leave_valid_entries(tmp_path):
    e = dict(os.environ, PYTHONPATH=ROOT, PYJAX_COMPILATION_CACHE="1",
             PYJAX_COMPILATION_CACHE_DIR=str(tmp_path), PYJAX_CPU_DEVICES="2")
    procs = [subprocess.Popen([sys.executable, "-c", PROGRAM], env=e, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(3)]
    outs = [p.communicate(timeout=180) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    assert not [f for f in tmp_path.rglob("*") if f.name.startswith(".tmp-")]
    last, _ = _run(tmp_path)
    assert last["xla"] == 0 and last["stats"]["corrupt"] == 0


@pytest.fixture
def cache_dir(tmp_path):
    """The persistent cache on, in a fresh directory, for this test only."""
    names = ("jax_compilation_cache_dir", "jax_enable_compilation_cache",
             "jax_persistent_cache_min_compile_time_secs",
             "jax_persistent_cache_min_entry_size_bytes", "jax_compilation_cache_max_size")
    old = {n: pyjax.config.read(n) for n in names}
    cc.set_cache_dir(tmp_path)
    pyjax.config.update("jax_enable_compilation_cache", True)
    yield tmp_path
    for n, v in old.items():
        pyjax.config.update(n, v)


def _fresh_program(k):
    """A jitted function no other test compiles (its constant differs)."""
    return pyjax.jit(lambda x: jnp.sin(x) * k + 0.5)


def test_in_process_store_and_load(cache_dir):
    assert cc.is_initialized()
    x = jnp.arange(5.0)
    f = _fresh_program(3.25)
    stored = len(_entry_files(cache_dir))
    with count_xla_compiles() as n:
        want = np.asarray(f(x))
    assert n() == 1 and len(_entry_files(cache_dir)) == stored + 1
    pyjax.clear_caches()  # memory only: the entries stay on disk
    assert len(_entry_files(cache_dir)) == stored + 1
    before = persistent_cache_stats()["hits"]
    with count_xla_compiles() as n, count_compiles() as made:
        got = np.asarray(_fresh_program(3.25)(x))
    assert n() == 0 and made() == 1
    assert persistent_cache_stats()["hits"] == before + 1
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, np.sin(np.arange(5.0)) * 3.25 + 0.5, rtol=1e-6)
    cc.clear_cache_dir()
    assert _entry_files(cache_dir) == []


def test_thresholds_decide_what_is_stored(cache_dir):
    x = jnp.arange(3.0)
    stored = len(_entry_files(cache_dir))
    pyjax.config.update("jax_persistent_cache_min_compile_time_secs", 1000.0)
    _fresh_program(1.75)(x)
    assert len(_entry_files(cache_dir)) == stored
    pyjax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    pyjax.config.update("jax_persistent_cache_min_entry_size_bytes", 1 << 40)
    _fresh_program(2.75)(x)
    assert len(_entry_files(cache_dir)) == stored
    pyjax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    _fresh_program(4.75)(x)
    assert len(_entry_files(cache_dir)) == stored + 1


def test_size_bound_evicts_least_recently_used(cache_dir):
    x = jnp.arange(3.0)
    cc.clear_cache_dir()
    for k in range(4):
        _fresh_program(10.0 + k)(x)
    files = disk_cache.entries()
    assert len(files) == 4
    sizes = [s for _, s, _ in files]
    keep = sizes[-1] + sizes[-2]
    oldest = files[0][0]
    os.utime(files[1][0], ns=(0, 0))  # the second becomes the least recently used
    disk_cache.evict(keep)
    left = [p for p, _, _ in disk_cache.entries()]
    assert len(left) == 2 and files[1][0] not in left and oldest not in left
    assert sum(s for _, s, _ in disk_cache.entries()) <= keep


def test_turned_off_by_flag(cache_dir):
    x = jnp.arange(3.0)
    cc.clear_cache_dir()
    pyjax.config.update("jax_enable_compilation_cache", False)
    assert not cc.is_initialized()
    _fresh_program(5.5)(x)
    assert _entry_files(cache_dir) == []
    cc.set_cache_dir(None)
    pyjax.config.update("jax_enable_compilation_cache", True)
    assert not cc.is_initialized()


def test_bad_flag_values_raise():
    with pytest.raises(ValueError, match="jax_compilation_cache_max_size"):
        pyjax.config.update("jax_compilation_cache_max_size", -5)
    with pytest.raises(ValueError, match="min_compile_time"):
        pyjax.config.update("jax_persistent_cache_min_compile_time_secs", -1.0)
    with pytest.raises(TypeError, match="jax_compilation_cache_dir"):
        pyjax.config.update("jax_compilation_cache_dir", 3)


def test_off_environment_variable(tmp_path):
    out, _ = _run(tmp_path, env={"PYJAX_COMPILATION_CACHE": "0"})
    assert out["stats"]["stores"] == 0 and _entry_files(tmp_path) == []


def test_unwritable_directory_warns_and_still_runs(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    d = {"jax_compilation_cache_dir": pyjax.config.jax_compilation_cache_dir,
         "jax_enable_compilation_cache": pyjax.config.jax_enable_compilation_cache}
    cc.set_cache_dir(blocker / "sub")
    pyjax.config.update("jax_enable_compilation_cache", True)
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            got = _fresh_program(6.5)(jnp.arange(3.0))
        assert any("could not write" in str(m.message) for m in w)
        np.testing.assert_allclose(np.asarray(got), np.sin(np.arange(3.0)) * 6.5 + 0.5,
                                   rtol=1e-6)
    finally:
        for n, v in d.items():
            pyjax.config.update(n, v)


def test_key_names_the_host_cpu(monkeypatch):
    # An entry compiled on a machine with other instruction sets (a cache directory shared
    # between machines) must miss, not be loaded and die of SIGILL: the key covers the CPU.
    class Api:  # a plugin identity of its own, so the memoized one is not reused
        path, version = "/nonexistent/plugin.so", (0, 1)
    here = disk_cache.key_of(Api(), b"module", b"options")
    assert disk_cache.key_of(Api(), b"module", b"options") == here
    monkeypatch.setattr(disk_cache, "_host_cpu", lambda: "Other CPU|sse2")
    assert disk_cache.key_of(Api(), b"module", b"options") != here
