"""SPMD programs are written in Shardy's dialect and compiled with its partitioner: no
GSPMD deprecation warning from the plugin, and shardings over meshes whose devices are in
another order than the program's still place every value right."""
import os
import subprocess
import sys
import textwrap

import numpy as np

import pyjax
import pyjax.numpy as jnp
from pyjax._src import runtime
from pyjax.sharding import Mesh, NamedSharding, PartitionSpec as P

# The plugin logs on fd 2 from C++: the child process points fd 2 at a file around each phase.
# Phase "gspmd" (a hand-written GSPMD module) shows the capture would see the warning.
_CHILD = textwrap.dedent("""
    import os, sys, tempfile
    import numpy as np
    import pyjax, pyjax.numpy as jnp
    from pyjax.sharding import NamedSharding, PartitionSpec as P
    from pyjax._src import runtime

    def captured(fn):
        with tempfile.TemporaryFile() as f:
            saved = os.dup(2)
            os.dup2(f.fileno(), 2)
            try:
                fn()
            finally:
                sys.stderr.flush()
                os.dup2(saved, 2)
                os.close(saved)
            f.seek(0)
            return f.read().decode(errors="replace")

    mesh = pyjax.make_mesh((2, 2), ("x", "y"))
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    def pyjax_programs():
        s = NamedSharding(mesh, P("x"))
        f = pyjax.jit(lambda a: pyjax.lax.with_sharding_constraint(a * 2, s).sum(0))
        f(pyjax.device_put(x, NamedSharding(mesh, P("x", "y")))).block_until_ready()
        g = pyjax.shard_map(lambda a: pyjax.lax.psum(a, "y"), mesh=mesh,
                            in_specs=P("x", "y"), out_specs=P("x"))
        g(x).block_until_ready()
    def gspmd():
        src = '''module {
          func.func public @main(%a: tensor<8xf32> {mhlo.sharding = "{devices=[2]<=[2]}"})
              -> (tensor<8xf32> {mhlo.sharding = "{replicated}"}) {
            return %a : tensor<8xf32>
          }
        }'''
        runtime.get_client().compile(src, None, None, num_partitions=2,
                                     use_spmd_partitioning=True)
    print("PYJAX<<" + captured(pyjax_programs) + ">>")
    print("GSPMD<<" + captured(gspmd) + ">>")
""")


def test_no_gspmd_warning_from_spmd_programs():
    env = dict(os.environ, PYJAX_CPU_DEVICES="4", TF_CPP_MIN_LOG_LEVEL="0")
    out = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True,
                         text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    mine = out.stdout.split("PYJAX<<")[1].split(">>")[0]
    control = out.stdout.split("GSPMD<<")[1].split(">>")[0]
    assert "GSPMD" in control  # the capture sees the plugin's warning when there is one
    assert "GSPMD" not in mine, mine[-2000:]


def _compiled_texts(monkeypatch):
    client = runtime.get_client()
    texts, compile_ = [], client.compile

    def spy(text, *args, **kwargs):
        if kwargs.get("num_partitions", 1) > 1:
            texts.append((text, kwargs.get("use_shardy_partitioner")))
        return compile_(text, *args, **kwargs)
    monkeypatch.setattr(client, "compile", spy)
    return texts


def test_sdy_annotations_and_a_permuted_mesh(monkeypatch):
    texts = _compiled_texts(monkeypatch)
    devs = pyjax.devices()
    a = Mesh(np.array(devs).reshape(2, 4), ("x", "y"))
    b = Mesh(np.array(devs[::-1]).reshape(4, 2), ("u", "v"))  # the same devices reversed
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    f = pyjax.jit(lambda v: jnp.cumsum(
        pyjax.lax.with_sharding_constraint(v * 2, NamedSharding(b, P("v", "u"))), 0))
    y = f(pyjax.device_put(x, NamedSharding(a, P("x", "y"))))
    np.testing.assert_array_equal(np.asarray(y), np.cumsum(x * 2, 0))
    ((text, shardy),) = texts
    assert shardy and "mhlo.sharding" not in text
    assert 'sdy.mesh @mesh = <["x"=2, "y"=4]>' in text
    assert 'device_ids=[7, 6, 5, 4, 3, 2, 1, 0]' in text
    assert '"sdy.sharding_constraint"' in text and '[{"v"}, {"u"}]' in text
