"""pyjax's own cost estimate (transformations/cost_model.py): what ``Compiled.cost_analysis()``
answers where the plugin's ``GetCostAnalysis`` is UNIMPLEMENTED. Oracles: the counts that
follow from the shapes (2·M·N·K for a matrix product, one transcendental per tanh element),
XLA's own ``flops``/``transcendentals`` (the loaded plugin's, or, where it has no cost analysis,
xla-cpu-pjrt's, computed in one subprocess for every compared program), and for convolutions the convolution itself (of ones:
each output counts the multiply-adds that reach a real input element)."""
import importlib
import json
import os
import pkgutil
import subprocess
import sys

import numpy as np
import pytest

import pyjax
import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.core.primitive import registry
from pyjax._src.runtime.errors import XlaRuntimeError
from pyjax._src.runtime.executable import Executable
from pyjax._src.transformations import cost_model

KEYS = {"flops", "transcendentals", "bytes accessed"}


def _compiled(f, *args):
    return jax.jit(f).lower(*args).compile()


def _plugin(compiled, name):
    """XLA's figures for the compared program ``name`` (absent keys are 0, as XLA leaves zeros
    out): the loaded plugin's, else xla-cpu-pjrt's from a subprocess, else a skip."""
    try:
        got = compiled._entry.exe.cost_analysis()
    except XlaRuntimeError as e:
        if "UNIMPLEMENTED" not in str(e):
            raise
        got = _reference_figures().get(name)
        if got is None:
            pytest.skip("neither this plugin nor an installed xla-cpu-pjrt has cost analysis")
    return {k: float(got.get(k, 0.0)) for k in KEYS}


_REFERENCE = []


def _reference_figures():
    """{name: xla-cpu-pjrt's cost dict} for every program of COMPARED, from one subprocess
    that loads this file with that plugin ({} when it is not installed)."""
    if not _REFERENCE:
        import importlib.util
        spec = importlib.util.find_spec("xla_plugins.xla_cpu_pjrt")
        paths = [os.path.join(d, "xla_cpu_pjrt.so")
                 for d in ((spec.submodule_search_locations or []) if spec else [])]
        paths = [p for p in paths if os.path.isfile(p)]
        figures = {}
        if paths:
            code = ("import importlib.util, json, sys\n"
                    "spec = importlib.util.spec_from_file_location('cost_tests', sys.argv[1])\n"
                    "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
                    "print(json.dumps(m.xla_figures()))\n")
            r = subprocess.run([sys.executable, "-c", code, __file__], capture_output=True,
                               text=True, timeout=300,
                               env=dict(os.environ, PYJAX_PLUGIN_PATH=paths[0],
                                        PYJAX_CPU_DEVICES="1"))
            assert r.returncode == 0, r.stderr
            figures = json.loads(r.stdout.strip().splitlines()[-1])
        _REFERENCE.append(figures)
    return _REFERENCE[0]


def xla_figures():
    """The loaded plugin's cost dict of every COMPARED program (run by the subprocess)."""
    out = {}
    for name, (f, make_args) in COMPARED.items():
        got = _compiled(f, *make_args())._entry.exe.cost_analysis()
        out[name] = {k: float(v) for k, v in got.items()}
    return out


def _estimate(compiled):
    return cost_model.estimate(compiled._entry.closed)


def _matmul(a, b):
    return a @ b


def _layer(x, w):
    return jnp.tanh(x @ w)


def _scan_of_dots(c0, ws):
    return lax.scan(lambda c, w: (jnp.tanh(c @ w), None), c0, ws)[0]


def _control_flow_and_calls(p, a):
    b = lax.cond(p, lambda a: jnp.tanh(a @ a), lambda a: jnp.exp(jnp.exp(a)) + 1.0, a)
    b = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] @ c[1]), (0, b))[1]
    b = jax.jit(lambda x: jax.checkpoint(jnp.sin)(x) * 2.0)(b)
    return b ** 3  # integer_pow: two multiplies per element, read from its lowering


def _chain(x, y):
    return (x * y + x) - y


def _ones(*shape):
    return lambda: (jnp.ones(shape),)


# Programs whose estimate is compared with XLA's figures: name -> (function, arguments).
COMPARED = {
    "dot": (_matmul, lambda: (jnp.ones((8, 16)), jnp.ones((16, 4)))),
    "layer": (_layer, lambda: (jnp.ones((8, 16)), jnp.ones((16, 4)))),
    "scan": (_scan_of_dots, lambda: (jnp.ones((4, 16)), jnp.ones((5, 16, 16)))),
    "control": (_control_flow_and_calls, lambda: (True, jnp.ones((8, 8)))),
    "chain": (_chain, lambda: (jnp.ones((8, 16)), jnp.ones((8, 16)))),
    "cumsum": (lambda x: jnp.cumsum(x, 1), _ones(3, 100)),  # XLA's CPU pipeline: rows of 16
    "cumlogsumexp": (lambda x: lax.cumlogsumexp(x, 0), _ones(1000)),
    "reduce": (lambda x: lax.reduce(x, 0.0, lambda u, v: u * v + 1.0, (0,)), _ones(6, 5)),
    "sort": (lambda x: jnp.sort(x, 1), _ones(4, 33)),
    "fft2": (lambda x: jnp.fft.fft2(x), _ones(8, 16)),
    # scan's lowering: u copies of the step in the loop body, the rest straight-line
    "scan_unroll2": (lambda ws: lax.scan(lambda c, w: (jnp.tanh(c @ w), None), ws[0], ws,
                                         reverse=True, unroll=2)[0], _ones(5, 16, 16)),
    "scan_unrolled": (lambda ws: lax.scan(lambda c, w: (jnp.tanh(c @ w), None), ws[0], ws,
                                          unroll=True)[0], _ones(3, 16, 16)),
    "scan_length": (lambda x: lax.scan(lambda c, _: (c * 2.0 + 1.0, None), x, None,
                                       length=40)[0], _ones(4)),
}


@pytest.fixture(scope="module")
def programs():
    return {name: _compiled(COMPARED[name][0], *COMPARED[name][1]())
            for name in ("dot", "layer", "scan")}


def test_flops_from_the_shapes(programs):
    assert _estimate(programs["dot"])["flops"] == 2 * 8 * 16 * 4
    layer = _estimate(programs["layer"])
    assert layer["flops"] == 2 * 8 * 16 * 4 and layer["transcendentals"] == 8 * 4
    # a loop body counts once (XLA's convention), plus the loop counter's add and compare
    scan = _estimate(programs["scan"])
    assert scan["flops"] == 2 * 4 * 16 * 16 + 2 and scan["transcendentals"] == 4 * 16


@pytest.mark.parametrize("name", ["dot", "layer", "scan"])
def test_equals_the_plugins_figures(programs, name):
    plugin, ours = _plugin(programs[name], name), _estimate(programs[name])
    assert ours["flops"] == plugin["flops"]
    assert ours["transcendentals"] == plugin["transcendentals"]


def test_transcendentals_count_elements():
    def f(x, y):
        return jnp.exp(x) + jnp.tanh(y) * 2.0
    c = _estimate(_compiled(f, jnp.ones((3, 5)), jnp.ones((3, 5))))
    assert c["transcendentals"] == 2 * 15 and c["flops"] == 2 * 15  # the mul and the add


def test_control_flow_and_calls():
    n = 8
    compiled = _compiled(_control_flow_and_calls, *COMPARED["control"][1]())
    c = _estimate(compiled)
    # cond: each key's maximum over the branches (dot+tanh / exp, exp, add), plus the
    # predicate's conversion; while: body (dot, add) and cond (compare) once each
    cond_flops, cond_trans = max(2 * n ** 3, n * n), max(n * n, 2 * n * n)
    assert c["flops"] == 1 + cond_flops + (2 * n ** 3 + 1) + 1 + n * n + 2 * n * n
    assert c["transcendentals"] == cond_trans + n * n
    plugin = _plugin(compiled, "control")
    assert c["transcendentals"] == plugin["transcendentals"]
    assert c["flops"] == plugin["flops"]


@pytest.mark.parametrize("lhs_shape, rhs_shape, kw", [
    ((2, 3, 8, 8), (5, 3, 3, 3), dict(window_strides=(1, 1), padding="SAME")),
    ((2, 4, 9, 7), (6, 4, 3, 2), dict(window_strides=(2, 1), padding=((1, 2), (0, 1)),
                                      lhs_dilation=(1, 2), rhs_dilation=(2, 1))),
    ((4, 4, 9), (6, 2, 3), dict(window_strides=(1,), padding="VALID", feature_group_count=2)),
    ((4, 4, 9), (6, 4, 3), dict(window_strides=(1,), padding=((2, 0),), batch_group_count=2)),
])
def test_convolution_counts_real_taps(lhs_shape, rhs_shape, kw):
    def conv(a, k):
        return lax.conv_general_dilated(a, k, **kw)
    lhs, rhs = jnp.ones(lhs_shape), jnp.ones(rhs_shape)
    compiled = _compiled(conv, lhs, rhs)
    # with ones, each output element is the number of multiply-adds that reach real input
    assert _estimate(compiled)["flops"] == 2 * float(np.asarray(compiled(lhs, rhs)).sum())


@pytest.mark.parametrize("name", ["cumsum", "cumlogsumexp", "reduce", "sort", "fft2",
                                  "scan_unroll2", "scan_unrolled", "scan_length"])
def test_other_rules_equal_the_plugins_figures(name):
    f, make_args = COMPARED[name]
    compiled = _compiled(f, *make_args())
    plugin, ours = _plugin(compiled, name), _estimate(compiled)
    assert (ours["flops"], ours["transcendentals"]) == (plugin["flops"],
                                                        plugin["transcendentals"])


def _no_cost_analysis(self):
    raise XlaRuntimeError("GetCostAnalysis is not implemented.", code=12)


def test_compiled_cost_analysis_falls_back(monkeypatch, programs):
    monkeypatch.setattr(Executable, "cost_analysis", _no_cost_analysis)
    x, w = jnp.ones((8, 16)), jnp.ones((16, 4))
    got = jax.jit(_layer).lower(x, w).compile().cost_analysis()
    assert set(got) == KEYS and all(type(v) is float for v in got.values())
    assert got["flops"] == 2 * 8 * 16 * 4 and got["transcendentals"] == 8 * 4
    # every equation's operands and results: at least the arguments and the output
    assert got["bytes accessed"] >= x.nbytes + w.nbytes + 8 * 4 * 4
    assert jax.jit(_matmul).lower(x, w).cost_analysis()["flops"] == 2 * 8 * 16 * 4


def test_other_plugin_errors_are_raised(monkeypatch, programs):
    def broken(self):
        raise XlaRuntimeError("something else", code=13)
    monkeypatch.setattr(Executable, "cost_analysis", broken)
    with pytest.raises(XlaRuntimeError, match="INTERNAL: something else"):
        programs["dot"].cost_analysis()


def test_bytes_add_up_each_equation():
    # XLA fuses the chain into one kernel (reads x and y, writes the result once); the
    # estimate counts each equation's operands and result
    x = jnp.ones((8, 16))
    compiled = _compiled(_chain, *COMPARED["chain"][1]())
    ours = _estimate(compiled)["bytes accessed"]
    assert ours == 3 * 3 * x.nbytes
    assert ours > _plugin(compiled, "chain")["bytes accessed"]


def test_every_primitive_has_a_model():
    for m in pkgutil.walk_packages(pyjax.__path__, "pyjax."):
        importlib.import_module(m.name)
    missing = [n for n, p in registry.items()
               if getattr(p.abstract_eval, "__module__", "").startswith("pyjax.")
               and not cost_model.has_model(p)]
    assert not missing, f"give these a cost rule in transformations/cost_model.py: {missing}"


def test_spmd_program_falls_back_to_the_whole_program(monkeypatch):
    from pyjax.sharding import Mesh, NamedSharding, PartitionSpec as P
    mesh = Mesh(np.array(jax.devices()[:2]), ("x",))
    a = jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, P("x", None)))
    compiled = jax.jit(_matmul).lower(a, jnp.ones((16, 4))).compile()
    assert not hasattr(compiled._entry, "closed")  # an SPMD program: no Jaxpr of its own
    monkeypatch.setattr(Executable, "cost_analysis", _no_cost_analysis)
    assert compiled.cost_analysis()["flops"] == 2 * 8 * 16 * 4  # both halves
