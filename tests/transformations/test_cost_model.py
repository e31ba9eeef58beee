"""pyjax's own cost estimate (transformations/cost_model.py): what ``Compiled.cost_analysis()``
answers where the plugin's ``GetCostAnalysis`` is UNIMPLEMENTED. Oracles: the counts that
follow from the shapes (2·M·N·K for a matrix product, one transcendental per tanh element),
the current plugin's own ``flops``/``transcendentals`` where it has them (the comparisons skip
under a plugin without cost analysis), and for convolutions the convolution itself (of ones:
each output counts the multiply-adds that reach a real input element)."""
import importlib
import pkgutil

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


def _plugin(compiled):
    """The plugin's own figures (absent keys are 0, as XLA leaves zeros out), or a skip."""
    try:
        got = compiled._entry.exe.cost_analysis()
    except XlaRuntimeError as e:
        if "UNIMPLEMENTED" in str(e):
            pytest.skip("this plugin has no cost analysis")
        raise
    return {k: float(got.get(k, 0.0)) for k in KEYS}


def _estimate(compiled):
    return cost_model.estimate(compiled._entry.closed)


def _matmul(a, b):
    return a @ b


def _layer(x, w):
    return jnp.tanh(x @ w)


def _scan_of_dots(c0, ws):
    return lax.scan(lambda c, w: (jnp.tanh(c @ w), None), c0, ws)[0]


@pytest.fixture(scope="module")
def programs():
    return {"dot": _compiled(_matmul, jnp.ones((8, 16)), jnp.ones((16, 4))),
            "layer": _compiled(_layer, jnp.ones((8, 16)), jnp.ones((16, 4))),
            "scan": _compiled(_scan_of_dots, jnp.ones((4, 16)), jnp.ones((5, 16, 16)))}


def test_flops_from_the_shapes(programs):
    assert _estimate(programs["dot"])["flops"] == 2 * 8 * 16 * 4
    layer = _estimate(programs["layer"])
    assert layer["flops"] == 2 * 8 * 16 * 4 and layer["transcendentals"] == 8 * 4
    # a loop body counts once (XLA's convention), plus the loop counter's add and compare
    scan = _estimate(programs["scan"])
    assert scan["flops"] == 2 * 4 * 16 * 16 + 2 and scan["transcendentals"] == 4 * 16


@pytest.mark.parametrize("name", ["dot", "layer", "scan"])
def test_equals_the_plugins_figures(programs, name):
    plugin, ours = _plugin(programs[name]), _estimate(programs[name])
    assert ours["flops"] == plugin["flops"]
    assert ours["transcendentals"] == plugin["transcendentals"]


def test_transcendentals_count_elements():
    def f(x, y):
        return jnp.exp(x) + jnp.tanh(y) * 2.0
    c = _estimate(_compiled(f, jnp.ones((3, 5)), jnp.ones((3, 5))))
    assert c["transcendentals"] == 2 * 15 and c["flops"] == 2 * 15  # the mul and the add


def test_control_flow_and_calls():
    n = 8

    def f(p, a):
        b = lax.cond(p, lambda a: jnp.tanh(a @ a), lambda a: jnp.exp(jnp.exp(a)) + 1.0, a)
        b = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] @ c[1]), (0, b))[1]
        b = jax.jit(lambda x: jax.checkpoint(jnp.sin)(x) * 2.0)(b)
        return b ** 3  # integer_pow: two multiplies per element, read from its lowering
    compiled = _compiled(f, True, jnp.ones((n, n)))
    c = _estimate(compiled)
    # cond: each key's maximum over the branches (dot+tanh / exp, exp, add), plus the
    # predicate's conversion; while: body (dot, add) and cond (compare) once each
    cond_flops, cond_trans = max(2 * n ** 3, n * n), max(n * n, 2 * n * n)
    assert c["flops"] == 1 + cond_flops + (2 * n ** 3 + 1) + 1 + n * n + 2 * n * n
    assert c["transcendentals"] == cond_trans + n * n
    plugin = _plugin(compiled)
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


@pytest.mark.parametrize("f, shape", [
    (lambda x: jnp.cumsum(x, 1), (3, 100)),  # XLA's CPU pipeline scans rows of 16
    (lambda x: lax.cumlogsumexp(x, 0), (1000,)),
    (lambda x: lax.reduce(x, 0.0, lambda u, v: u * v + 1.0, (0,)), (6, 5)),
    (lambda x: jnp.sort(x, 1), (4, 33)),
    (lambda x: jnp.fft.fft2(x), (8, 16)),
    # scan's lowering: u copies of the step in the loop body, the rest straight-line
    (lambda ws: lax.scan(lambda c, w: (jnp.tanh(c @ w), None), ws[0], ws, reverse=True,
                         unroll=2)[0], (5, 16, 16)),
    (lambda ws: lax.scan(lambda c, w: (jnp.tanh(c @ w), None), ws[0], ws, unroll=True)[0],
     (3, 16, 16)),
    (lambda x: lax.scan(lambda c, _: (c * 2.0 + 1.0, None), x, None, length=40)[0], (4,)),
])
def test_other_rules_equal_the_plugins_figures(f, shape):
    compiled = _compiled(f, jnp.ones(shape))
    plugin, ours = _plugin(compiled), _estimate(compiled)
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
    def chain(x, y):
        return (x * y + x) - y
    x = jnp.ones((8, 16))
    compiled = _compiled(chain, x, x)
    ours = _estimate(compiled)["bytes accessed"]
    assert ours == 3 * 3 * x.nbytes
    assert ours > _plugin(compiled)["bytes accessed"]


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
