"""``import pyjax`` imports nothing heavy it does not need (docs/performance_import.md), and the
ml_dtypes types it leaves out until first use behave as if they had always been there.

Each check runs in a fresh interpreter: what a process has imported cannot be undone."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Packages pyjax must not import at ``import pyjax``: test and science tools, JAX itself, and
# ml_dtypes (0.7.0 takes ~0.75 s to import; runtime/ml_dtypes_loader.py imports it on use).
HEAVY = ("ml_dtypes", "scipy", "sklearn", "pytest", "hypothesis", "jax", "jaxlib",
         "matplotlib", "pandas", "torch", "tensorflow", "IPython", "numba")


def _run(code):
    """Runs ``code`` in a fresh interpreter at the repository root; returns its last stdout
    line parsed as JSON."""
    env = dict(os.environ)
    env.pop("JAX_PLATFORMS", None)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_import_pyjax_imports_nothing_heavy():
    out = _run("""
        import json, sys
        import pyjax, pyjax.numpy as jnp
        heavy = %r
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in heavy)
        # a jitted float32 program and finfo of NumPy's types need no ml_dtypes either
        y = pyjax.jit(lambda x: jnp.sin(x) * 2)(jnp.arange(3.0))
        eps = float(jnp.finfo(jnp.float32).eps)
        print(json.dumps([loaded, "ml_dtypes" in sys.modules, eps, y.tolist()]))
    """ % (HEAVY,))
    loaded, ml_after_use, eps, y = out
    assert loaded == []
    assert not ml_after_use
    assert eps == pytest.approx(2.0 ** -23)
    assert y == pytest.approx([0.0, 1.682941969, 1.818594854], rel=1e-6)


def test_extended_types_load_on_first_use():
    out = _run("""
        import json, sys
        import numpy as np
        import pyjax, pyjax.numpy as jnp
        res = {}
        res["listed"] = "bfloat16" in dir(jnp) and "float8_e4m3fn" in dir(jnp)
        res["before"] = "ml_dtypes" in sys.modules
        # jnp.dtype is NumPy's dtype constructor, knowing ml_dtypes' names (optax's tests)
        res["jnp_dtype"] = [str(jnp.dtype("float8_e4m3fn")), str(jnp.dtype("float32")),
                            isinstance(np.dtype("f4"), jnp.dtype)]
        x = jnp.zeros(3, "bfloat16") + 1.5          # a dtype string loads ml_dtypes
        res["str_dtype"] = [str(x.dtype), x.astype(jnp.float32).tolist()]
        res["after"] = "ml_dtypes" in sys.modules
        res["same_class"] = jnp.bfloat16 is jnp.bfloat16 and jnp.bfloat16 == np.dtype("bfloat16")
        res["promote"] = [str(jnp.promote_types(jnp.bfloat16, jnp.float16)),
                          str(jnp.result_type(jnp.bfloat16, 1.0)),
                          str(jnp.promote_types("int4", int))]
        res["info"] = [float(jnp.finfo(jnp.bfloat16).eps), int(jnp.iinfo(jnp.int4).max)]
        res["kinds"] = [jnp.issubdtype(jnp.float8_e4m3fn, jnp.floating),
                        jnp.issubdtype(jnp.uint4, jnp.unsignedinteger),
                        pyjax.dtypes.bfloat16 == jnp.bfloat16]
        print(json.dumps(res))
    """)
    assert out["listed"] and not out["before"] and out["after"]
    assert out["str_dtype"] == ["bfloat16", [1.5, 1.5, 1.5]]
    assert out["jnp_dtype"] == ["float8_e4m3fn", "float32", True]
    assert out["same_class"]
    assert out["promote"] == ["float32", "bfloat16", "int4"]
    assert out["info"] == [2.0 ** -7, 7]
    assert out["kinds"] == [True, True, True]


@pytest.mark.parametrize("order", ["ml_dtypes_first", "ml_dtypes_after"])
def test_ml_dtypes_imported_by_the_user(order):
    # Whoever imports ml_dtypes, before or after pyjax, pyjax must know its types at once:
    # a bfloat16 NumPy array reaching pyjax is a bfloat16 array, not an unknown dtype.
    first, after = ("import ml_dtypes", "") if order == "ml_dtypes_first" else \
        ("", "import ml_dtypes")
    out = _run(f"""
        import json
        {first}
        import numpy as np
        import pyjax, pyjax.numpy as jnp
        {after}
        a = np.array([1.0, 2.5, -3.0], dtype=ml_dtypes.bfloat16)
        y = jnp.asarray(a) * 2
        print(json.dumps([str(y.dtype), y.astype(jnp.float32).tolist(),
                          jnp.issubdtype(a.dtype, jnp.floating), str(jnp.result_type(a, 1))]))
    """)
    assert out == ["bfloat16", [2.0, 5.0, -6.0], True, "bfloat16"]
