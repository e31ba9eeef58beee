"""The lowering key (dispatch/jaxpr_key.py): a process with a warm persistent cache finds the
module text by a canonical key of the Jaxpr and skips lowering, with the same results; any
change that could change the program changes the key."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax.experimental.compilation_cache import compilation_cache as cc
from pyjax.test_util import persistent_cache_stats
from pyjax._src.dispatch.jaxpr_key import lowering_key

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Prints how often it lowered, the cache's counts and results that depend on the program.
PROGRAM = textwrap.dedent("""
    import json
    import numpy as np
    import pyjax, pyjax.numpy as jnp
    from pyjax._src.interpreters import lowering
    from pyjax.test_util import persistent_cache_stats
    lowered = [0]
    real = lowering.lower_module
    def counting(*a, **k):
        lowered[0] += 1
        return real(*a, **k)
    lowering.lower_module = counting

    def loss(w, x):
        return jnp.sum(jnp.tanh(x @ w) ** 2) + jnp.sum(pyjax.lax.cumsum(w, axis=0, reverse=True))

    w = np.arange(12.0, dtype=np.float32).reshape(3, 4) / 10
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3) / 7
    g = pyjax.jit(pyjax.grad(loss))(w, x)
    scaled = pyjax.jit(lambda v: v * SCALE)(x)
    print(json.dumps({"lowered": lowered[0], "stats": persistent_cache_stats(),
                      "g": np.asarray(g).tolist(), "scaled": np.asarray(scaled).tolist()}))
""")


def _run(cache_dir, scale):
    # one compile tier, so that the first process's results are the full build's bits (the
    # quick tier agrees to a few ulps only) and "identical" can be asserted
    env = dict(os.environ, PYTHONPATH=ROOT, PYJAX_COMPILATION_CACHE="1",
               PYJAX_COMPILATION_CACHE_DIR=str(cache_dir), PYJAX_TIERED_COMPILATION="0")
    p = subprocess.run([sys.executable, "-c", PROGRAM.replace("SCALE", repr(scale))],
                       env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_warm_process_skips_lowering_with_identical_results(tmp_path):
    first = _run(tmp_path, 2.5)
    assert first["lowered"] == 2 and first["stats"]["text_stores"] == 2
    second = _run(tmp_path, 2.5)
    assert second["lowered"] == 0 and second["stats"]["text_hits"] == 2
    assert second["stats"]["hits"] >= 2  # and the executables came from disk
    assert second["g"] == first["g"] and second["scaled"] == first["scaled"]
    w = np.arange(12.0).reshape(3, 4) / 10
    x = np.arange(6.0).reshape(2, 3) / 7
    t = np.tanh(x @ w)
    want = x.T @ (2 * t * (1 - t ** 2)) + np.arange(1, 4)[:, None]
    np.testing.assert_allclose(second["g"], want, rtol=1e-5)
    # a literal inlined into the program: another value is another text, never the old one
    third = _run(tmp_path, 3.5)
    assert third["lowered"] == 1 and third["stats"]["text_hits"] == 1
    np.testing.assert_allclose(third["scaled"], x * 3.5, rtol=1e-6)


def _key(fn, *args, lower_kw=None, name="f"):
    closed = pyjax.make_jaxpr(fn)(*args)
    return lowering_key(closed.jaxpr, name, dict(lower_kw or {"platform": "cpu"}))


def _program(scale=2.0, reverse=False, op=lax.cumsum):
    # one source line for all variants: locations are part of the program (and of its key)
    return lambda v: op(v * scale, axis=0, reverse=reverse)


def test_key_is_canonical_and_changes_with_the_program():
    x = np.ones((2, 3), np.float32)
    base = _key(_program(), x)
    assert base is not None and base == _key(_program(), x)  # a retrace: new variables
    changed = {
        "param": _key(_program(reverse=True), x),
        "literal": _key(_program(scale=3.0), x),
        "dtype": _key(_program(), x.astype(np.float16)),
        "shape": _key(_program(), np.ones((3, 2), np.float32)),
        "primitive": _key(_program(op=lax.cumprod), x),
        "donation": _key(_program(), x, lower_kw={"platform": "cpu", "donated_invars": (True,)}),
        "name": _key(_program(), x, name="g"),
        "location": _key(lambda v: lax.cumsum(v * 2.0, axis=0), x),
    }
    assert None not in changed.values()
    assert len({base, *changed.values()}) == len(changed) + 1, changed


def test_key_changes_with_weak_type_and_flags():
    f = _program(scale=1.5, op=lambda v, axis, reverse: v)
    strong, weak = _key(f, np.float32(1.0)), _key(f, 1.0)
    assert strong != weak
    old = pyjax.config.jax_default_matmul_precision
    try:
        pyjax.config.update("jax_default_matmul_precision", "highest")
        assert _key(f, np.float32(1.0)) != strong
    finally:
        pyjax.config.update("jax_default_matmul_precision", old)
    assert _key(f, np.float32(1.0)) == strong
    with pyjax.enable_x64(True):
        assert _key(f, np.float32(1.0)) != strong
    from pyjax._src.lax import collective_lowering as cl
    with cl.lowering_axes(("i",), (2,), manual=False):  # as pmap compiles its body
        assert _key(f, np.float32(1.0)) != strong


def test_custom_derivative_calls_are_keyed_by_their_body():
    import inspect
    from pyjax._src.transformations import custom_derivatives
    # the key leaves out their derivative rules: their lowering must read only call_jaxpr
    params = inspect.signature(custom_derivatives._call_lower).parameters
    assert [n for n, p in params.items() if p.kind is p.KEYWORD_ONLY] == ["call_jaxpr"]
    x = np.ones(3, np.float32)
    relu = _key(pyjax.nn.relu, x)
    assert relu is not None and relu == _key(pyjax.nn.relu, x)
    assert _key(pyjax.nn.relu6, x) not in (None, relu)


def test_programs_it_cannot_key_are_lowered_as_before():
    def f(v):
        return pyjax.pure_callback(lambda a: a * 2, pyjax.ShapeDtypeStruct(v.shape, v.dtype), v)
    assert _key(f, np.ones(3, np.float32)) is None
    # a user's primitive (its rule is not in pyjax's files) and an FFI call (its target is
    # this process's registration)
    from pyjax.extend.core import Primitive
    from pyjax.interpreters import mlir
    mine = Primitive("user_double")
    mine.def_abstract_eval(lambda a: a)
    mlir.register_lowering(mine, mlir.lower_fun(lambda v: v * 2, multiple_results=False))
    assert _key(lambda v: mine.bind(v), np.ones(3, np.float32)) is None
    call = pyjax.ffi.ffi_call("no_such_target", pyjax.ShapeDtypeStruct((3,), np.float32))
    assert _key(lambda v: call(v), np.ones(3, np.float32)) is None


@pytest.fixture
def cache_dir(tmp_path):
    names = ("jax_compilation_cache_dir", "jax_enable_compilation_cache")
    old = {n: pyjax.config.read(n) for n in names}
    cc.set_cache_dir(tmp_path)
    pyjax.config.update("jax_enable_compilation_cache", True)
    yield tmp_path
    for n, v in old.items():
        pyjax.config.update(n, v)


def test_x64_and_donation_in_process_give_their_own_programs(cache_dir):
    """The same function under another x64 flag or donation pattern is not served the first
    one's text (its results and input aliasing show it)."""
    f = lambda v: v * 0.1 + 1
    x = np.arange(4.0)
    y32 = np.asarray(pyjax.jit(f)(x))
    assert y32.dtype == np.float32
    before = persistent_cache_stats()["text_hits"]
    pyjax.clear_caches()
    with pyjax.enable_x64(True):
        y64 = np.asarray(pyjax.jit(f)(x))
    assert y64.dtype == np.float64 and persistent_cache_stats()["text_hits"] == before
    np.testing.assert_allclose(y64, x * 0.1 + 1, rtol=1e-15)
    pyjax.clear_caches()
    d = pyjax.device_put(np.arange(4.0, dtype=np.float32))
    out = pyjax.jit(f, donate_argnums=0)(d)
    assert persistent_cache_stats()["text_hits"] == before
    assert d.is_deleted()  # the donated program, not the first one's text
    np.testing.assert_allclose(np.asarray(out), y32, rtol=1e-6)
    pyjax.clear_caches()
    assert np.asarray(pyjax.jit(f)(x)).tolist() == y32.tolist()
    assert persistent_cache_stats()["text_hits"] == before + 1


def test_texts_follow_the_storing_thresholds(cache_dir):
    x = np.arange(3.0, dtype=np.float32)
    texts = lambda: list(cache_dir.rglob("*.mlirtext"))
    old = pyjax.config.jax_persistent_cache_min_compile_time_secs
    try:
        pyjax.config.update("jax_persistent_cache_min_compile_time_secs", 1e6)
        pyjax.jit(lambda v: v * 7.25 - 1)(x)  # neither the executable nor its text
        assert texts() == [] and not list(cache_dir.rglob("*.pjrtexe"))
        pyjax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        pyjax.jit(lambda v: v * 8.25 - 1)(x)
        assert len(texts()) == 1
    finally:
        pyjax.config.update("jax_persistent_cache_min_compile_time_secs", old)


HOST_KERNEL_PROGRAM = textwrap.dedent("""
    import json, sys
    import numpy as np
    import pyjax, pyjax.numpy as jnp
    from pyjax.test_util import persistent_cache_stats
    m = np.random.default_rng(0).standard_normal((40, 40)).astype(np.float32)
    a = m @ m.T + 40 * np.eye(40, dtype=np.float32)
    if sys.argv[1] == "shift":  # another host function registered first takes its table id
        f = lambda v: pyjax.pure_callback(np.zeros_like, pyjax.ShapeDtypeStruct(v.shape,
                                                                                v.dtype), v)
        pyjax.jit(f)(a).block_until_ready()
    got = np.asarray(pyjax.jit(jnp.linalg.cholesky)(a))
    print(json.dumps({"err": float(np.abs(got - np.linalg.cholesky(a)).max()),
                      "stats": persistent_cache_stats()}))
""")


def test_texts_that_call_host_kernels_are_never_kept(tmp_path):
    # a LAPACK host kernel is registered with this process's FFI table while lowering and
    # named by its id in the text: a warm process that skipped lowering computed garbage
    env = dict(os.environ, PYTHONPATH=ROOT, PYJAX_COMPILATION_CACHE="1",
               PYJAX_COMPILATION_CACHE_DIR=str(tmp_path))
    for mode in ("plain", "plain", "shift"):
        p = subprocess.run([sys.executable, "-c", HOST_KERNEL_PROGRAM, mode], env=env,
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        out = json.loads(p.stdout.strip().splitlines()[-1])
        assert out["err"] < 1e-4, (mode, out)
        assert out["stats"]["text_hits"] == 0 and out["stats"]["text_stores"] == 0, out
