"""Lowered.compiler_ir(dialect="hlo") / as_text(dialect="hlo"): XLA's own unoptimized HLO of
the program, re-printed as JAX's XlaComputation.as_hlo_text() prints it."""
import re

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.lowering.hlo_text import jax_style

_DUMP = '''HloModule jit_f, entry_computation_layout={(f32[2]{0})->(f32[2]{0}, s32[])}

%region_0.1 (Arg_0.2: f32[], Arg_1.1: f32[]) -> f32[] {
  %Arg_0.2 = f32[] parameter(0)
  %Arg_1.1 = f32[] parameter(1)
  ROOT %add.2 = f32[] add(%Arg_0.2, %Arg_1.1), metadata={op_name="a{b}\\"c%d" source_line=9}
}

ENTRY %main.5 (Arg_0.5: f32[2]) -> (f32[2], s32[]) {
  %Arg_0.5 = f32[2]{0} parameter(0)
  %cc.1 = f32[2]{0} custom-call(%Arg_0.5), custom_call_target="x%y", backend_config={k = 1 : i32}, metadata={op_name="cc"}
  %c.1 = f32[] constant(0)
  %r.1 = f32[] reduce(%cc.1, %c.1), dimensions={0}, to_apply=%region_0.1, metadata={op_name="r"}
  ROOT %tuple.1 = (f32[2]{0}, s32[]) tuple(%cc.1, %r.1)
}
'''


def test_reprinted_as_jax_prints_it():
    # names lose '%' (not inside strings), headers their signature, instructions metadata
    assert jax_style(_DUMP) == '''HloModule jit_f, entry_computation_layout={(f32[2]{0})->(f32[2]{0}, s32[])}

region_0.1 {
  Arg_0.2 = f32[] parameter(0)
  Arg_1.1 = f32[] parameter(1)
  ROOT add.2 = f32[] add(Arg_0.2, Arg_1.1)
}

ENTRY main.5 {
  Arg_0.5 = f32[2]{0} parameter(0)
  cc.1 = f32[2]{0} custom-call(Arg_0.5), custom_call_target="x%y", backend_config={k = 1 : i32}
  c.1 = f32[] constant(0)
  r.1 = f32[] reduce(cc.1, c.1), dimensions={0}, to_apply=region_0.1
  ROOT tuple.1 = (f32[2]{0}, s32[]) tuple(cc.1, r.1)
}
'''


_INSTR = re.compile(r"^  (ROOT )?([\w.\-]+) = (\S+|\(.*?\)) ([a-z\-]+)\((.*?)\)(.*)$")


def _computations(text):
    """{name: [(root, name, shape, opcode, operands, attributes)]} of a module's text."""
    comps, cur = {}, None
    for line in text.splitlines()[1:]:
        if not line:
            continue
        if line == "}":
            cur = None
        elif line.endswith("{") and not line.startswith(" "):
            cur = comps.setdefault(line.split()[-2], [])
        else:
            m = _INSTR.match(line)
            assert m and cur is not None, line
            cur.append(m.groups())
    return comps


def _loop_cond_dot(x, w):
    y = lax.fori_loop(0, 3, lambda i, v: v * 2.0 + i, x)
    z = lax.cond(y.sum() > 0, jnp.sin, jnp.cos, y)
    return z @ w, jnp.max(z, axis=1)


def test_module_structure_and_opcodes():
    x, w = jnp.ones((4, 3)), jnp.ones((3, 2))
    lowered = pyjax.jit(_loop_cond_dot).lower(x, w)
    text = lowered.as_text(dialect="hlo")
    comp = lowered.compiler_ir(dialect="hlo")
    assert comp.as_hlo_text() == text and comp.name() == "jit__loop_cond_dot"
    assert text.splitlines()[0] == ("HloModule jit__loop_cond_dot, entry_computation_layout="
                                    "{(f32[4,3]{1,0}, f32[3,2]{1,0})->(f32[4,2]{1,0}, f32[4]{0})}")
    assert "%" not in text and "metadata" not in text
    comps = _computations(text)
    entry = [c for c in comps if text.count(f"ENTRY {c} {{")]
    assert len(entry) == 1
    body = comps[entry[0]]
    assert [i[3] for i in body if i[0]] == ["tuple"]  # ROOT: the tuple of the two results
    ops = {i[3]: i for c in comps.values() for i in c}
    assert {"while", "conditional", "dot", "reduce", "parameter", "maximum"} <= set(ops)
    assert "lhs_contracting_dims={1}, rhs_contracting_dims={0}" in ops["dot"][5]
    assert ops["dot"][2] == "f32[4,2]{1,0}"
    # every computation an instruction names is defined, every operand defined before use
    for c in comps.values():
        defined = set()
        for root, name, shape, opcode, operands, attrs in c:
            for ref in re.findall(r"(?:to_apply|condition|body)=([\w.\-]+)", attrs):
                assert ref in comps, ref
            for ref in re.findall(r"branch_computations=\{(.*?)\}", attrs):
                assert all(r.strip() in comps for r in ref.split(",")), ref
            names = [] if opcode in ("parameter", "constant") else operands.split(",")
            for o in filter(None, (o.strip() for o in names)):
                assert o in defined, (o, name)
            defined.add(name)
    proto = comp.as_serialized_hlo_module_proto()
    assert isinstance(proto, bytes) and b"jit__loop_cond_dot" in proto
    assert comp.as_hlo_module().to_string() == text


def test_real_square_is_one_multiply_and_complex_is_not():
    # optax's numerics_test: abs_sq, jnp.square, x * x and x ** 2 give the same ENTRY for
    # real inputs (as in JAX, conj and real of a real array are no-ops)
    def entry(f, x):
        text = pyjax.jit(f).lower(x).as_text(dialect="hlo")
        return text[text.index("ENTRY"):]

    abs_sq = lambda x: (x.conj() * x).real  # noqa: E731
    for x in (3.0, np.array([4, 5.2], np.float32), 3):
        texts = {entry(f, x) for f in (abs_sq, jnp.square, lambda x: x * x, lambda x: x ** 2)}
        assert len(texts) == 1, texts
        assert re.search(r"ROOT \S+ = \S+ multiply\(Arg_0.1, Arg_0.1\)", texts.pop())
    z = np.array([4 + 1j, 5.2 + 1j], np.complex64)
    assert entry(abs_sq, z) != entry(jnp.square, z)
    assert " real(" in entry(abs_sq, z)


def test_dialect_errors():
    lowered = pyjax.jit(lambda x: x + 1).lower(1.0)
    with pytest.raises(ValueError, match="unknown dialect: hlo2"):
        lowered.compiler_ir(dialect="hlo2")
    with pytest.raises(NotImplementedError, match="as_hlo_dot_graph"):
        lowered.compiler_ir(dialect="hlo").as_hlo_dot_graph()
    # an SPMD program: not silently the single-device HLO
    from pyjax.sharding import NamedSharding, PartitionSpec
    n = pyjax.device_count()
    sharding = NamedSharding(pyjax.make_mesh((n,), ("x",)), PartitionSpec("x"))
    spmd = pyjax.jit(lambda a: a * 2, in_shardings=sharding).lower(jnp.ones(2 * n))
    with pytest.raises(NotImplementedError, match="single-device programs only"):
        spmd.compiler_ir(dialect="hlo")


def test_module_proto_compiles_and_runs_like_the_jit():
    # the serialized HloModuleProto is a real program: PJRT compiles it (format "hlo") and it
    # computes what the jitted function computes
    from pyjax._src import runtime
    from pyjax._src.runtime.client import build_compile_options
    from pyjax._src.runtime.executable import Executable

    def f(x, w):
        return jnp.tanh(x @ w).sum(axis=0), jnp.sort(x, axis=1)

    rng = np.random.default_rng(0)
    x, w = rng.random((4, 3), np.float32), rng.random((3, 2), np.float32)
    proto = pyjax.jit(f).lower(x, w).compiler_ir("hlo").as_serialized_hlo_module_proto()
    client = runtime.get_client()
    options = build_compile_options(1, 1, device_assignment=[client.devices[0].id])
    owner = client._compile_loaded(proto, options, counted=False, program_format="hlo")
    exe = Executable(client, owner, None, None, portable=False)
    args = [pyjax.device_put(a) for a in (x, w)]
    outs = [o.to_numpy() for o in exe.execute([a._buf for a in args])]
    for got, want in zip(outs, pyjax.jit(f)(x, w)):
        np.testing.assert_array_equal(got, np.asarray(want))
