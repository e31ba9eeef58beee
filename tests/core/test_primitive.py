"""Open rule tables: a transformation declares its rule kind once; primitives take rules of any
declared kind as declaration keywords, and a later module adds rules to existing primitives
with ``def_rule``, without editing their declarations."""
import numpy as np
import pytest

import pyjax
from pyjax import lax
from pyjax._src.core import primitive as core_prim
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.primitive import Primitive, declare_rule_kind, registry, with_self
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import parallel
from pyjax._src.lax import shape_ops

# A toy transformation of this test module: counts elementwise flops of a Jaxpr.
declare_rule_kind("test_flops", "test: flops(*avals, **params) -> int")


def _elementwise_flops(*avals, **params):
    return int(np.prod(avals[0].shape, dtype=np.int64))


# Registered on existing primitives from here, without touching lax.
for _p in (ew.sin_p, ew.mul_p, ew.add_p):
    _p.def_rule("test_flops", _elementwise_flops)


def count_flops(closed):
    total = 0
    for eqn in closed.jaxpr.eqns:
        rule = eqn.primitive.test_flops  # plain attribute: None without a rule
        if rule is None:
            raise NotImplementedError(f"no flops rule for {eqn.primitive}")
        total += rule(*[v.aval for v in eqn.invars], **eqn.params)
    return total


def test_later_module_adds_a_rule_kind_to_existing_primitives():
    x = np.ones((3, 4), np.float32)
    closed = pyjax.make_jaxpr(lambda v: lax.add(lax.mul(lax.sin(v), 2.0), 1.0))(x)
    assert count_flops(closed) == 3 * 12
    closed = pyjax.make_jaxpr(lambda v: lax.cos(v))(x)
    with pytest.raises(NotImplementedError, match="no flops rule for cos"):
        count_flops(closed)
    assert "test_flops" in core_prim.rule_kinds()
    assert ew.cos_p.test_flops is None and "test_flops" in ew.sin_p.rules()


def test_declared_kind_is_a_declaration_keyword():
    p = Primitive("test_prim_kw", abstract_eval=lambda x: x, lower=lambda ctx, x: x,
                  test_flops=lambda x: 7, batch=None)
    assert p.test_flops(ShapedArray((2,), np.float32)) == 7
    assert p.jvp is None and p.transpose is None and p.partial_eval is None
    assert set(p.rules()) == {"abstract_eval", "lower", "test_flops"}


def test_unknown_rule_kind_is_an_error():
    with pytest.raises(TypeError, match="unknown rule kind 'flopz'"):
        Primitive("test_prim_bad_kind", abstract_eval=lambda x: x, lower=lambda ctx, x: x,
                  flopz=lambda x: 0)
    assert "test_prim_bad_kind" not in registry
    with pytest.raises(TypeError, match="unknown rule kind"):
        ew.sin_p.def_rule("no_such_kind", lambda: None)


def test_rule_kind_names_cannot_shadow_primitive_attributes():
    for bad in ("bind", "name", "def_rule", "_private", "not a name"):
        with pytest.raises(ValueError):
            declare_rule_kind(bad)
    declare_rule_kind("test_flops")  # declaring again is a no-op


def test_with_self_gives_the_rule_its_primitive():
    seen = []

    def make(prim):
        seen.append(prim)
        return lambda *avals: prim.name
    p = Primitive("test_prim_self", abstract_eval=lambda x: x, lower=lambda ctx, x: x,
                  test_flops=with_self(make))
    assert seen == [p] and p.test_flops() == "test_prim_self"
    q = Primitive("test_prim_self2", abstract_eval=lambda x: x, lower=lambda ctx, x: x)
    q.def_rule("test_flops", with_self(make))
    assert seen == [p, q] and q.test_flops() == "test_prim_self2"


def test_partial_eval_and_axis_awareness_are_declared_with_the_primitive():
    from pyjax._src.control_flow.cond import cond_p
    from pyjax._src.control_flow.scan import scan_p
    from pyjax._src.control_flow.while_loop import while_p
    from pyjax._src.transformations.checkpoint import checkpoint_p
    from pyjax._src.transformations.jit import jit_p
    for p in (jit_p, cond_p, scan_p, while_p, checkpoint_p):
        assert callable(p.partial_eval) and callable(p.partial_eval_jaxpr), p
        assert callable(p.axis_aware), p
    for p in (parallel.psum_p, parallel.pmax_p, parallel.axis_index_p, parallel.ppermute_p):
        assert callable(p.axis_aware), p
    assert callable(parallel.pmax_p.jvp)  # given in the declaration, not assigned afterwards
    assert ew.sin_p.partial_eval is None and ew.sin_p.axis_aware is None


def test_generic_rules_bind_their_own_primitive():
    # elementwise_rule / linear_jvp are made per primitive (with_self), not looked up by name
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    out, d = ew.sin_p.batch([x], [0])
    np.testing.assert_allclose(np.asarray(out), np.sin(x), rtol=1e-6)
    out, t = shape_ops.reshape_p.jvp((x,), (x,), new_sizes=(3, 2), dimensions=None,
                                     sharding=None)
    np.testing.assert_array_equal(np.asarray(t), x.reshape(3, 2))
    assert ew.sin_p.batch.__name__ == "sin_batch_rule"


def test_every_elementwise_primitive_is_a_module_attribute():
    assert {f"{n}_p" for n in ew.prims} <= set(vars(ew))
    assert all(getattr(ew, f"{n}_p") is p for n, p in ew.prims.items())


def test_no_registry_string_lookups_in_rules():
    # Rules refer to primitives as objects; the registry is for introspection only.
    import pathlib
    import re
    root = pathlib.Path(pyjax.__file__).parent / "_src"
    offenders = []
    for path in root.rglob("*.py"):
        text = path.read_text()
        for pat in (r'\bregistry\[\s*["\w]', r'_b\("', r'prims\["\w+"\]\.bind'):
            for m in re.finditer(pat, text):
                line = text[:m.start()].count("\n") + 1
                if path.name == "primitive.py" and "registry[name]" in text.splitlines()[
                        line - 1]:
                    continue
                offenders.append(f"{path.relative_to(root)}:{line}")
    assert not offenders, offenders
