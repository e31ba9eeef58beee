"""`python -m pyjax script.py` and `pyjax.install_as_jax()`: `jax` resolves to pyjax's modules."""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run(args, cwd):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


SCRIPT = textwrap.dedent("""
    import sys
    import jax
    import jax.numpy as jnp
    from jax import lax, random
    from jax.nn import logsumexp  # jax.scipy.special comes with the special-functions branch
    import jax.tree_util as tu
    from jax.example_libraries import stax, optimizers
    from jax.flatten_util import ravel_pytree
    import pyjax
    assert jax.jit is pyjax.jit and jnp is pyjax.numpy and lax is pyjax.lax
    assert jax.__version__ == "0.10.2" and jax.__version_info__ == (0, 10, 2)
    x = jnp.arange(4.0)
    print("ARGS", sys.argv[1:])
    print("LSE", float(logsumexp(x)))
    print("GRAD", float(jax.grad(lambda v: jnp.sum(jnp.sin(v)))(x)[1]))
    print("NAME", __name__)
    init, apply = stax.serial(stax.Dense(2), stax.Relu)
    shape, params = init(random.PRNGKey(0), (3, 4))
    opt_init, opt_update, get_params = optimizers.sgd(0.1)
    state = opt_update(0, jax.tree_util.tree_map(jnp.ones_like, params), opt_init(params))
    print("STAX", shape, ravel_pytree(get_params(state))[0].shape)
""")


def test_python_m_pyjax_runs_a_jax_script(tmp_path):
    import numpy as np
    (tmp_path / "script.py").write_text(SCRIPT)
    r = _run(["-m", "pyjax", "script.py", "--flag", "3"], tmp_path)
    assert r.returncode == 0, r.stderr
    out = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    assert out["ARGS"] == "['--flag', '3']"
    assert out["NAME"] == "__main__"
    assert out["STAX"] == "(3, 2) (10,)"
    assert abs(float(out["LSE"]) - np.log(np.exp(np.arange(4.0)).sum())) < 1e-5
    assert abs(float(out["GRAD"]) - np.cos(1.0)) < 1e-6


def test_python_m_pyjax_missing_module_and_usage(tmp_path):
    (tmp_path / "bad.py").write_text("import jax.no_such_module\n")
    r = _run(["-m", "pyjax", "bad.py"], tmp_path)
    assert r.returncode != 0 and "No module named 'jax.no_such_module'" in r.stderr
    r = _run(["-m", "pyjax"], tmp_path)
    assert r.returncode == 2 and "usage" in r.stderr


def test_install_as_jax_refuses_the_real_jax(tmp_path):
    # a stand-in "real" jax package on the path, imported first
    (tmp_path / "jax").mkdir()
    (tmp_path / "jax" / "__init__.py").write_text("REAL = True\n")
    code = ("import jax, pyjax\n"
            "try:\n    pyjax.install_as_jax()\nexcept RuntimeError as e:\n    print('REFUSED', e)\n")
    r = _run(["-c", code], tmp_path)
    assert "REFUSED" in r.stdout and "already imported" in r.stdout, r.stdout + r.stderr


def test_install_as_jax_in_process_aliases_modules():
    code = ("import pyjax, sys; pyjax.install_as_jax(); pyjax.install_as_jax()\n"
            "import jax.numpy, jax.nn, jax.lax as L\n"
            "from jax.numpy import fft\n"
            "assert sys.modules['jax.numpy'] is pyjax.numpy and L is pyjax.lax\n"
            "assert fft is pyjax.numpy.fft and pyjax.numpy.__spec__.name == 'pyjax.numpy'\n"
            "print('OK')\n")
    r = _run(["-c", code], ROOT)
    assert r.stdout.strip() == "OK", r.stderr


def test_private_and_experimental_stand_ins(tmp_path):
    # `from jax.experimental import hijax` and `jax._src.state.types` exist for flax.nnx to
    # import; using hijax raises NotImplementedError, and pyjax itself has no such module
    script = tmp_path / "hijax_probe.py"
    script.write_text(textwrap.dedent("""
        import importlib.util
        from jax.experimental import hijax
        from jax._src.state.types import AbstractRef
        from jax._src.tree_util import _registry
        import jax
        assert importlib.util.find_spec("pyjax.experimental.hijax") is None
        assert not isinstance(jax.typeof(jax.numpy.ones(2)), AbstractRef)
        assert isinstance(jax.typeof(jax.new_ref(jax.numpy.ones(2))), AbstractRef)
        assert jax.tree_util.Partial in _registry
        try:
            hijax.HiPrimitive("p").bind(1)
        except NotImplementedError as e:
            print("REFUSED", "hijax" in str(e))
    """))
    r = _run(["-m", "pyjax", str(script)], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "REFUSED True" in r.stdout
