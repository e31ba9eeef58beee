"""Every config flag is honoured (a behaviour test here) or rejects its values other than the
default with NotImplementedError: the test walks the config's own registry."""
import logging
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax._src.core.config import config
from pyjax._src.interpreters import staging

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(autouse=True)
def restore_config():
    saved = config.values
    yield
    for name, value in saved.items():
        if config.read(name) is not value and config.read(name) != value:
            config.update(name, value)


def _run_python(code, **env):
    e = dict(os.environ, PYTHONPATH=REPO, **env)
    return subprocess.run([sys.executable, "-c", code], env=e, capture_output=True,
                          text=True, timeout=120)


# ---- one behaviour test per implemented flag ----

def _enable_x64():
    config.update("jax_enable_x64", True)
    assert jnp.arange(3.0).dtype == np.float64
    config.update("jax_enable_x64", False)
    assert jnp.arange(3.0).dtype == np.float32


def _default_matmul_precision():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    f = pyjax.jit(lambda x, y: jnp.dot(x, y))
    assert "precision_config" not in f.lower(a, a.T).as_text()
    config.update("jax_default_matmul_precision", "highest")
    assert "HIGHEST" in f.lower(a, a.T).as_text()
    assert "HIGHEST" in str(pyjax.make_jaxpr(jnp.dot)(a, a.T))
    np.testing.assert_allclose(f(a, a.T), a @ a.T)
    with pytest.raises(NotImplementedError, match="jax_default_matmul_precision"):
        config.update("jax_default_matmul_precision", "F32_F32_F32")


def _numpy_rank_promotion():
    x, y = jnp.ones(3), jnp.ones((2, 3))
    f = pyjax.jit(lambda a, b: a + b)
    np.testing.assert_array_equal(f(x, y), np.full((2, 3), 2.0))  # cached under 'allow'
    config.update("jax_numpy_rank_promotion", "raise")
    msg = (r"Operands could not be broadcast together for add on shapes \(3,\) \(2, 3\) and "
           r"with the config option jax_numpy_rank_promotion='raise'")
    with pytest.raises(ValueError, match=msg):
        jnp.add(x, y)
    with pytest.raises(ValueError, match="jax_numpy_rank_promotion='raise'"):
        f(x, y)  # the trace cached under 'allow' does not hold any more
    jnp.add(x, 1.0), jnp.add(y, y), x + jnp.float32(2)  # scalars and equal ranks are fine
    config.update("jax_numpy_rank_promotion", "warn")
    with pytest.warns(UserWarning, match="Following NumPy automatic rank promotion for add"):
        jnp.add(x, y)
    config.update("jax_numpy_rank_promotion", "allow")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jnp.add(x, y)


def _numpy_dtype_promotion():
    i, f = jnp.ones(2, jnp.int32), jnp.ones(2, jnp.float32)
    assert (i + f).dtype == np.float32
    config.update("jax_numpy_dtype_promotion", "strict")
    with pytest.raises(Exception, match="jax_numpy_dtype_promotion=strict"):
        i + f  # noqa: B018


def _disable_jit():
    seen = []

    @pyjax.jit
    def f(x):
        seen.append(type(x).__name__)
        return x * 2

    f(jnp.ones(2))
    assert seen[-1] != "ArrayImpl"  # traced
    config.update("jax_disable_jit", True)
    np.testing.assert_array_equal(f(jnp.ones(2)), [2.0, 2.0])
    assert seen[-1] == "ArrayImpl"  # ran op by op, on concrete arrays
    config.update("jax_disable_jit", False)
    with pyjax.disable_jit():
        f(jnp.ones(2))
        assert seen[-1] == "ArrayImpl"
    assert config.jax_disable_jit is False
    f(jnp.ones(3))
    assert seen[-1] != "ArrayImpl"
    # control flow runs as the Python it means: only the branch taken, a loop for scan
    from pyjax import lax
    taken = []
    branch = lambda name: lambda v: taken.append(name) or v * 2.0  # noqa: E731
    with pyjax.disable_jit():
        assert float(lax.cond(jnp.float32(1.0) > 0, branch("t"), branch("f"), 1.5)) == 3.0
        assert taken == ["t"]
        assert float(lax.switch(5, [branch("a"), branch("b")], 1.0)) == 2.0
        assert taken == ["t", "b"]
        carries = []

        def body(c, x):
            carries.append(type(c).__name__)
            return c + x, c * x

        c, ys = lax.scan(body, jnp.float32(0.0), jnp.arange(4.0), reverse=True)
        assert len(carries) == 4 and "ArrayImpl" in carries
        np.testing.assert_allclose(c, 6.0)
        np.testing.assert_allclose(ys, [0.0 * 5, 1.0 * 5, 2.0 * 3, 0.0])
        with pytest.raises(ValueError, match="zero-length scan"):
            lax.scan(body, 0.0, jnp.zeros((0,)))
    taken.clear()
    lax.cond(True, branch("t"), branch("f"), 1.5)
    assert sorted(taken) == ["f", "t"]  # both traced when jit is on


def _num_cpu_devices():
    n = len(pyjax.devices())
    config.update("jax_num_cpu_devices", n)  # what it has already: fine
    with pytest.raises(RuntimeError, match="before backends are initialized"):
        config.update("jax_num_cpu_devices", n + 1)
    assert config.jax_num_cpu_devices != n + 1
    # before the backend starts, the flag (or JAX_NUM_CPU_DEVICES) decides the count
    code = ("import pyjax; pyjax.config.update('jax_num_cpu_devices', 3); "
            "print(len(pyjax.devices()))")
    r = _run_python(code, PYJAX_CPU_DEVICES="")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[-1] == "3"
    r = _run_python("import pyjax; print(len(pyjax.devices()))", PYJAX_CPU_DEVICES="",
                    JAX_NUM_CPU_DEVICES="5")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[-1] == "5"


def _log_compiles(caplog):
    f = pyjax.jit(lambda x: x * 3 + 1)
    config.update("jax_log_compiles", True)
    with caplog.at_level(logging.WARNING, logger="pyjax"):
        f(jnp.ones(7))
    assert any("Compiling" in r.getMessage() and "f32[7]" in r.getMessage()
               for r in caplog.records)
    caplog.clear()
    config.update("jax_log_compiles", False)
    with caplog.at_level(logging.WARNING, logger="pyjax"):
        f(jnp.ones(9))
    assert not any("Compiling" in r.getMessage() for r in caplog.records)


def _enable_checks(monkeypatch):
    calls = []
    real = staging.check_jaxpr
    monkeypatch.setattr(staging, "check_jaxpr", lambda j: calls.append(j) or real(j))
    pyjax.make_jaxpr(lambda x: x + 1)(1.0)
    assert calls == []
    config.update("jax_enable_checks", True)
    pyjax.make_jaxpr(lambda x: x + 1)(1.0)
    pyjax.jit(lambda x: x * 2)(jnp.ones(2))
    assert len(calls) == 2


def _default_device():
    d = pyjax.devices()[3]
    config.update("jax_default_device", d)
    assert jnp.ones(3).devices() == {d}
    assert jnp.asarray(np.arange(3)).devices() == {d}
    assert (jnp.ones(3) + 1.0).devices() == {d}
    assert pyjax.jit(lambda: jnp.zeros(2))().devices() == {d}
    assert not jnp.ones(3).committed
    config.update("jax_default_device", None)
    assert jnp.ones(3).devices() == {pyjax.devices()[0]}
    with pytest.raises(TypeError, match="jax_default_device"):
        config.update("jax_default_device", 3)


def _platforms():
    config.update("jax_platforms", "cpu")
    assert pyjax.default_backend() == "cpu"


def _default_prng_impl():
    try:
        config.update("jax_default_prng_impl", "unsafe_rbg")
        assert str(pyjax.random.key(0).dtype) == "key<urbg>"
        assert pyjax.random.PRNGKey(0).shape == (4,)
    finally:
        config.update("jax_default_prng_impl", "threefry2x32")
    assert str(pyjax.random.key(0).dtype) == "key<fry>"


def _platform_name():
    config.update("jax_platform_name", "cpu")
    assert pyjax.default_backend() == "cpu"


def _traceback_filtering():
    # more in tests/debug/test_traceback_filtering.py
    def user(x):
        return jnp.add(x, "x")
    for mode, internal_frames in [("off", True), ("quiet_remove_frames", False)]:
        config.update("jax_traceback_filtering", mode)
        with pytest.raises(TypeError) as info:
            pyjax.jit(user)(jnp.ones(2))
        assert any("pyjax/_src" in str(f.path) for f in info.traceback) is internal_frames


def _check_tracer_leaks():
    # more in tests/debug/test_flags.py
    leaked = []
    config.update("jax_check_tracer_leaks", True)
    with pytest.raises(Exception, match="Leaked trace StagingTrace"):
        pyjax.jit(lambda x: leaked.append(x) or x)(1.0)


def _transfer_guard_to(name):
    from pyjax.errors import JaxRuntimeError
    config.update(name, "disallow")
    with pytest.raises(JaxRuntimeError, match="Disallowed host-to-device transfer"):
        jnp.ones(2) + np.ones(2, np.float32)


def _transfer_guard():
    # more in tests/debug/test_flags.py
    _transfer_guard_to("jax_transfer_guard")


def _transfer_guard_h2d():
    _transfer_guard_to("jax_transfer_guard_host_to_device")


def _transfer_guard_d2h():
    from pyjax.errors import JaxRuntimeError
    y = jnp.ones(2) * jnp.ones(2)
    config.update("jax_transfer_guard_device_to_host", "disallow")
    with pytest.raises(JaxRuntimeError, match="Disallowed device-to-host transfer"):
        np.asarray(y)


def _transfer_guard_d2d():
    from pyjax.errors import JaxRuntimeError
    x = pyjax.device_put(jnp.ones(2), pyjax.devices()[1])
    config.update("jax_transfer_guard_device_to_device", "disallow_explicit")
    with pytest.raises(JaxRuntimeError, match="Disallowed device-to-device transfer"):
        pyjax.device_put(x, pyjax.devices()[0])


def _threefry_partitionable():
    # False: JAX's original stream, bits(key, n) == threefry_2x32(key, arange(n))
    from pyjax import random
    k = random.key(5)
    want = np.asarray(random.threefry_2x32(random.key_data(k), np.arange(3, dtype=np.uint32)))
    try:
        config.update("jax_threefry_partitionable", False)
        np.testing.assert_array_equal(random.bits(k, (3,), np.uint32), want)
    finally:
        config.update("jax_threefry_partitionable", True)
    assert not np.array_equal(np.asarray(random.bits(k, (3,), np.uint32)), want)


def _compilation_cache(monkeypatch):
    """Each persistent-cache flag decides whether a freshly compiled program reaches the disk
    (tests/runtime/test_disk_cache.py tests the cache itself)."""
    import tempfile
    from pyjax._src.runtime import disk_cache
    d = tempfile.mkdtemp()
    names = ("jax_compilation_cache_dir", "jax_enable_compilation_cache",
             "jax_persistent_cache_min_compile_time_secs",
             "jax_persistent_cache_min_entry_size_bytes", "jax_compilation_cache_max_size")
    old = {n: config.read(n) for n in names}
    x = jnp.ones(3)
    consts = iter(range(100, 200))

    def stored(**flags):
        for n, v in flags.items():
            config.update(n, v)
        before = len(disk_cache.entries())
        pyjax.jit(lambda v, c=float(next(consts)): v * c)(x)
        return len(disk_cache.entries()) - before
    try:
        assert stored(jax_compilation_cache_dir=d, jax_enable_compilation_cache=True) == 1
        assert stored(jax_enable_compilation_cache=False) == 0
        assert stored(jax_enable_compilation_cache=True,
                      jax_persistent_cache_min_compile_time_secs=1e6) == 0
        assert stored(jax_persistent_cache_min_compile_time_secs=0.0,
                      jax_persistent_cache_min_entry_size_bytes=1 << 40) == 0
        assert stored(jax_persistent_cache_min_entry_size_bytes=0) == 1
        assert disk_cache.entries()
        stored(jax_compilation_cache_max_size=0)  # the next store sweeps the directory
        assert disk_cache.entries() == []
    finally:
        for n, v in old.items():
            config.update(n, v)


def _debug_nans_infs():
    """The flags raise where the values appear (tests/test_debug_nans.py has the rest)."""
    for name, bad in (("jax_debug_nans", -1.0), ("jax_debug_infs", 0.0)):
        config.update(name, True)
        try:
            with pytest.raises(FloatingPointError, match="encountered in log"):
                jnp.log(jnp.float32(bad))
        finally:
            config.update(name, False)
        assert not np.isfinite(float(jnp.log(jnp.float32(bad))))


def _explain_cache_misses(caplog):
    """A retrace logs why (tests/test_debugging.py checks the messages)."""
    f = pyjax.jit(lambda v: v + 1)
    config.update("jax_explain_cache_misses", True)
    try:
        with caplog.at_level(logging.WARNING, logger="pyjax"):
            f(jnp.ones(2))
            f(jnp.ones(3))
    finally:
        config.update("jax_explain_cache_misses", False)
    assert any("seen f32[2], now f32[3]" in r.getMessage() for r in caplog.records)


def _tiered_compilation(monkeypatch):
    """On, a long-compiling program starts on its low tier; off, it is compiled once at the
    full level (tests/runtime/test_tiered.py tests the tiers themselves)."""
    from pyjax._src.dispatch import compiler
    from pyjax._src.runtime import tiered
    monkeypatch.setattr(compiler, "TIERED_MIN_OPS", 0)
    tiers = []
    for on, k in ((True, 7.25), (False, 8.25)):
        config.update("pyjax_tiered_compilation", on)
        with tiered.hold():
            f = pyjax.jit(lambda u, k=k: u @ u + k)
            f(jnp.ones((2, 2)))
            tiers.append(next(iter(f._cache.entries.values())).exe.tier)
    config.update("pyjax_tiered_compilation", True)
    assert tiered.wait_for_upgrades(timeout=60)
    assert tiers == ["low", "full"]


def _no_tracing():
    f = pyjax.jit(lambda x: x * 2)
    x3, x4 = jnp.ones(3), jnp.ones(4)
    f(x3)
    with pyjax.no_tracing(True):
        np.testing.assert_array_equal(f(x3), 2 * np.ones(3))  # a cache hit traces nothing
        with pytest.raises(RuntimeError, match="for `jit`, but 'no_tracing' is set"):
            f(x4)
        with pytest.raises(RuntimeError, match="'no_tracing' is set"):
            pyjax.make_jaxpr(lambda x: x + 1)(x3)
    np.testing.assert_array_equal(f(x4), 2 * np.ones(4))


def _no_execution():
    f = pyjax.jit(lambda x: x * 2)
    x = jnp.ones(3)
    f(x)
    with pyjax.no_execution(True):
        with pytest.raises(RuntimeError, match="no_execution config option is set"):
            f(x)  # cached: the refusal is in the runtime, below every cache
        with pytest.raises(RuntimeError, match="no_execution config option is set"):
            x + 1.0
        assert pyjax.make_jaxpr(f)(x).eqns  # tracing still works
    np.testing.assert_array_equal(f(x) + 1.0, 3 * np.ones(3))


def _thread_guard():
    # JAX's guard watches multi-process operations; pyjax runs one process, so operations
    # from another thread than the guard's run normally, as in single-process JAX
    import threading
    out = []
    with pyjax.thread_guard(True):
        t = threading.Thread(target=lambda: out.append(np.asarray(jnp.arange(3.0) * 2)))
        t.start()
        t.join()
    np.testing.assert_array_equal(out[0], [0.0, 2.0, 4.0])


def _legacy_prng_key():
    raw, typed = pyjax.random.PRNGKey(0), pyjax.random.key(0)
    with pyjax.legacy_prng_key("error"):
        with pytest.raises(ValueError, match="Legacy uint32 key array passed as key"):
            pyjax.random.normal(raw)
        pyjax.random.normal(typed)
    with pyjax.legacy_prng_key("warn"):
        with pytest.warns(UserWarning, match="jax_legacy_prng_key=\"allow\""):
            pyjax.random.uniform(raw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pyjax.random.uniform(raw)


def _softmax_custom_jvp():
    # off (JAX's default): softmax's code is differentiated, the max shift gradient-stopped;
    # on: the rule y * (t - sum(y * t)). Same derivative, different Jaxprs.
    x = np.array([0.5, -1.0, 2.0], np.float32)
    y = np.exp(x) / np.exp(x).sum()
    want = y[0] * ((np.arange(3) == 0) - y)
    g = pyjax.grad(lambda v: pyjax.nn.softmax(v)[0])
    np.testing.assert_allclose(g(x), want, rtol=1e-5)
    plain = str(pyjax.make_jaxpr(g)(x))
    with pyjax.softmax_custom_jvp(True):
        np.testing.assert_allclose(g(x), want, rtol=1e-5)
        custom = str(pyjax.make_jaxpr(g)(x))
    assert "stop_gradient" in plain and plain != custom


def _allow_f16_reductions():
    x = jnp.ones((2, 3), jnp.float16)
    with pyjax.allow_f16_reductions(False):
        with pytest.raises(ValueError, match=r"reduce_sum on operand f16\[2,3\] is not allowed"):
            pyjax.lax.reduce_sum(x, (1,))
        with pytest.raises(ValueError, match="jax_allow_f16_reductions=False"):
            pyjax.jit(lambda v: pyjax.lax.reduce_sum(v, (0, 1)))(x)
        pyjax.lax.reduce_sum(x[:1], (0,))  # a size-1 axis sums nothing
        pyjax.lax.reduce_sum(x.astype(jnp.float32), (1,))
    np.testing.assert_array_equal(pyjax.lax.reduce_sum(x, (1,)), [3, 3])

def _remove_size_one_mesh_axis():
    from pyjax.sharding import NamedSharding, PartitionSpec as P
    mesh = pyjax.make_mesh((8, 1), ("X", "Y"))
    x = pyjax.device_put(np.ones((8, 4), np.float32), NamedSharding(mesh, P("X", "Y")))
    typed = lambda: pyjax.make_jaxpr(lambda a: a * 2)(x).out_avals[0].str_short()  # noqa: E731
    assert typed() == "f32[8@X,4@Y]"
    with pyjax.remove_size_one_mesh_axis_from_type(True):
        assert typed() == "f32[8@X,4]"
    assert typed() == "f32[8@X,4@Y]"


BEHAVIOUR = {
    "jax_remove_size_one_mesh_axis_from_type": _remove_size_one_mesh_axis,
    "pyjax_tiered_compilation": _tiered_compilation,
    "jax_threefry_partitionable": _threefry_partitionable,
    "jax_explain_cache_misses": _explain_cache_misses,
    "jax_debug_nans": _debug_nans_infs,
    "jax_debug_infs": _debug_nans_infs,
    "jax_compilation_cache_dir": _compilation_cache,
    "jax_enable_compilation_cache": _compilation_cache,
    "jax_persistent_cache_min_compile_time_secs": _compilation_cache,
    "jax_persistent_cache_min_entry_size_bytes": _compilation_cache,
    "jax_compilation_cache_max_size": _compilation_cache,
    "jax_enable_x64": _enable_x64,
    "jax_default_matmul_precision": _default_matmul_precision,
    "jax_numpy_rank_promotion": _numpy_rank_promotion,
    "jax_numpy_dtype_promotion": _numpy_dtype_promotion,
    "jax_disable_jit": _disable_jit,
    "jax_num_cpu_devices": _num_cpu_devices,
    "jax_log_compiles": _log_compiles,
    "jax_enable_checks": _enable_checks,
    "jax_default_device": _default_device,
    "jax_platforms": _platforms,
    "jax_default_prng_impl": _default_prng_impl,
    "jax_platform_name": _platform_name,
    "jax_traceback_filtering": _traceback_filtering,
    "jax_check_tracer_leaks": _check_tracer_leaks,
    "jax_transfer_guard": _transfer_guard,
    "jax_transfer_guard_host_to_device": _transfer_guard_h2d,
    "jax_transfer_guard_device_to_host": _transfer_guard_d2h,
    "jax_transfer_guard_device_to_device": _transfer_guard_d2d,
    "jax_no_tracing": _no_tracing,
    "jax_no_execution": _no_execution,
    "jax_thread_guard": _thread_guard,
    "jax_legacy_prng_key": _legacy_prng_key,
    "jax_softmax_custom_jvp": _softmax_custom_jvp,
    "jax_allow_f16_reductions": _allow_f16_reductions,
}


def _unsupported_values(flag):
    """Valid values of ``flag`` that pyjax does not implement."""
    if flag.choices is not None:
        candidates = list(flag.choices)
    elif flag.kind is bool:
        candidates = [True, False]
    else:
        candidates = ["cuda", "tpu,cpu", "/tmp/pyjax-cache", "F32_F32_F32"]
    out = []
    for v in candidates:
        try:
            flag.check(v)
        except NotImplementedError:
            out.append(v)
        except (TypeError, ValueError, RuntimeError):  # RuntimeError: not now (e.g. a
            pass                                        # platform once backends started)
    return out


@pytest.mark.parametrize("name", config.flag_names())
def test_every_flag_is_honoured_or_rejected(name, caplog, monkeypatch):
    flag = config.flag(name)
    rejected = _unsupported_values(flag)
    assert name in BEHAVIOUR or rejected, (
        f"{name} is neither honoured (no behaviour test) nor rejects any value")
    for value in rejected:
        before = config.read(name)
        with pytest.raises(NotImplementedError, match=name):
            config.update(name, value)
        assert config.read(name) == before
    test = BEHAVIOUR.get(name)
    if test is not None:
        args = {"caplog": caplog, "monkeypatch": monkeypatch}
        test(*[args[p] for p in test.__code__.co_varnames[:test.__code__.co_argcount]])


def test_rejected_examples():
    for name, value in [("jax_platforms", "rocm")]:
        with pytest.raises(NotImplementedError, match=f"{name}={value!r}"):
            config.update(name, value)


def test_unknown_flag_is_an_attribute_error():
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_no_such"):
        config.update("jax_no_such", 1)
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_no_such"):
        config.jax_no_such  # noqa: B018


def test_unimplemented_value_from_the_environment_fails_at_import():
    r = _run_python("import pyjax", JAX_PLATFORMS="rocm")
    assert r.returncode != 0
    assert "NotImplementedError: config option jax_platforms='rocm'" in r.stderr
    r = _run_python("import pyjax; print(pyjax.config.jax_check_tracer_leaks)",
                    JAX_CHECK_TRACER_LEAKS="0")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[-1] == "False"


def test_debug_nans_from_the_environment_is_on_at_import():
    r = _run_python("import pyjax, pyjax.numpy as jnp\n"
                    "try:\n    jnp.log(jnp.float32(-1))\n"
                    "except FloatingPointError as e:\n    print('raised', e)", JAX_DEBUG_NANS="1")
    assert r.returncode == 0, r.stderr
    assert "raised invalid value (nan) encountered in log" in r.stdout
