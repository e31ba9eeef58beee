"""jax.export: export a jitted function, call it eagerly, from jit and under vmap, serialize
it and call it in a fresh process; what it refuses."""
import collections
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import export

# Registry coverage (tests/lax/test_registry.py): lowered (eagerly and inside jit), its JVP
# rule (JAX's refusal without a serialized VJP), batching against a loop.
TESTED_PRIMITIVES = JVP_TESTED = BATCH_TESTED = {"call_exported"}

W = np.arange(6.0, dtype=np.float32).reshape(2, 3)


@jax.jit
def model(x, y):
    h = jax.jit(lambda v: jnp.sin(v) @ W)(x)  # a nested jit: a private function in the module
    return {"a": h + y, "b": (x * 2).sum()}


def _reference(x, y):
    return {"a": np.sin(x) @ W + y, "b": (x * 2).sum()}


SPECS = (jax.ShapeDtypeStruct((4, 2), jnp.float32), jax.ShapeDtypeStruct((3,), jnp.float32))


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(4, 2)).astype(np.float32),
            rng.normal(size=(3,)).astype(np.float32))


def _check(out, x, y):
    want = _reference(x, y)
    np.testing.assert_allclose(np.asarray(out["a"]), want["a"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(float(out["b"]), want["b"], rtol=1e-5)


def test_export_call_eager_jit_vmap_and_round_trip():
    exp = export.export(model)(*SPECS)
    assert [a.shape for a in exp.in_avals] == [(4, 2), (3,)]
    assert [a.shape for a in exp.out_avals] == [(4, 3), ()]
    text = exp.mlir_module()
    assert "func.func public @main(%arg0: tensor<4x2xf32>, %arg1: tensor<3xf32>)" in text
    x, y = _inputs()
    _check(exp.call(x, y), x, y)
    back = export.deserialize(exp.serialize())
    assert back.in_tree == exp.in_tree and back.out_tree == exp.out_tree
    assert back.mlir_module() == text
    x2, y2 = _inputs(1)
    _check(back.call(jnp.asarray(x2), jnp.asarray(y2)), x2, y2)
    g = jax.jit(lambda a, b: back.call(a, b)["a"] * 10 + exp.call(a, b)["a"])
    np.testing.assert_allclose(np.asarray(g(x, y)), 11 * _reference(x, y)["a"], rtol=1e-5)
    xs = np.stack([_inputs(k)[0] for k in range(5)])
    got = jax.vmap(lambda v: back.call(v, y)["b"])(xs)
    np.testing.assert_allclose(np.asarray(got), [_reference(v, y)["b"] for v in xs],
                               rtol=1e-5)


def test_round_trip_in_a_fresh_process(tmp_path):
    exp = export.export(model)(*SPECS)
    path = tmp_path / "model.bin"
    path.write_bytes(bytes(exp.serialize()))
    x, y = _inputs(3)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    code = textwrap.dedent(f"""
        import json, numpy as np, pyjax.numpy as jnp
        from pyjax import export
        exp = export.deserialize(open({str(path)!r}, "rb").read())
        out = exp.call(np.load({str(tmp_path / 'x.npy')!r}), np.load({str(tmp_path / 'y.npy')!r}))
        print(json.dumps({{"a": np.asarray(out["a"]).tolist(), "b": float(out["b"])}}))
    """)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120, env=dict(os.environ, PYTHONPATH=root))
    assert p.returncode == 0, p.stderr
    import json
    got = json.loads(p.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(np.array(got["a"]), _reference(x, y)["a"], rtol=1e-5,
                               atol=1e-6)
    assert got["b"] == pytest.approx(float(_reference(x, y)["b"]), rel=1e-5)


def test_namedtuple_trees_need_registration():
    Pair = collections.namedtuple("Pair", "u v")
    f = jax.jit(lambda p: Pair(p.u + 1, p.v * 2))
    exp = export.export(f)(Pair(jax.ShapeDtypeStruct((2,), jnp.float32),
                                jax.ShapeDtypeStruct((), jnp.int32)))
    with pytest.raises(ValueError, match="register_namedtuple_serialization"):
        exp.serialize()
    export.register_namedtuple_serialization(Pair, serialized_name="tests.Pair")
    back = export.deserialize(exp.serialize())
    out = back.call(Pair(jnp.ones(2), jnp.int32(3)))
    assert isinstance(out, Pair) and int(out.v) == 6
    np.testing.assert_array_equal(np.asarray(out.u), [2.0, 2.0])


def test_what_export_refuses():
    exp = export.export(model)(*SPECS)
    x, y = _inputs()
    with pytest.raises(TypeError, match=r"exported for argument 0 of type f32\[4,2\]"):
        exp.call(np.ones((5, 2), np.float32), y)
    with pytest.raises(ValueError, match="pytree structure"):
        exp.call(x, y, y)
    with pytest.raises(ValueError, match="Cannot differentiate the exported function"):
        jax.grad(lambda v: exp.call(v, y)["b"])(x)
    with pytest.raises(TypeError, match="must be the result of `jit`"):
        export.export(lambda v: v)
    with pytest.raises(NotImplementedError, match="shape polymorphism"):
        export.symbolic_shape("b, 4")
    with pytest.raises(NotImplementedError, match="vjp_order"):
        exp.serialize(vjp_order=1)
    with pytest.raises(ValueError, match="not bytes written by pyjax"):
        export.deserialize(b"garbage")
    assert export.default_export_platform() == "cpu" and not export.is_symbolic_dim(3)


def test_donating_and_callback_programs_inline():
    donating = jax.jit(lambda v: v * 2 + 1, donate_argnums=0)
    exp = export.export(donating)(jax.ShapeDtypeStruct((3,), jnp.float32))
    assert "tf.aliasing_output" not in exp.mlir_module()  # donation is the caller's choice
    got = jax.jit(lambda v: exp.call(v) - 1)(jnp.arange(3.0))
    np.testing.assert_array_equal(np.asarray(got), [0.0, 2.0, 4.0])
    host = jax.jit(lambda v: jax.pure_callback(lambda a: a * 3, jax.ShapeDtypeStruct(
        v.shape, v.dtype), v) + 1)
    exp = export.export(host)(jax.ShapeDtypeStruct((2,), jnp.float32))
    np.testing.assert_array_equal(np.asarray(jax.jit(exp.call)(jnp.ones(2))), [4.0, 4.0])


def test_host_kernel_modules_are_refused_in_another_process(tmp_path):
    # LAPACK host kernels are called by ids of the exporting process's function table: in
    # another process the same ids name other functions (a silently wrong result once)
    m = np.random.default_rng(0).standard_normal((40, 40)).astype(np.float32)
    a = m @ m.T + 40 * np.eye(40, dtype=np.float32)  # 40x40: above the host-kernel threshold
    exp = export.export(jax.jit(jnp.linalg.cholesky))(a)
    assert b"pyjax_host_callback" in exp.mlir_module_serialized
    same = export.deserialize(exp.serialize())
    np.testing.assert_allclose(same.call(a), np.linalg.cholesky(a), rtol=1e-5, atol=1e-5)
    path = tmp_path / "chol.bin"
    path.write_bytes(bytes(exp.serialize()))
    code = textwrap.dedent(f"""
        import numpy as np
        from pyjax import export
        exp = export.deserialize(open({str(path)!r}, "rb").read())
        try:
            exp.call(np.eye(40, dtype=np.float32))
        except NotImplementedError as e:
            print("refused:", e)
    """)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120, env=dict(os.environ, PYTHONPATH=root))
    assert p.returncode == 0, p.stderr
    assert "refused:" in p.stdout and "host kernels" in p.stdout
