"""The Jaxpr IR: printer (JAX's format), checker, evaluator, constants."""
import numpy as np
import pytest

import pyjax
import pyjax.lax as lax
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.jaxpr import (Eqn, Jaxpr, JaxprTypeError, Var, check_jaxpr,
                                   eval_jaxpr)
from pyjax._src.core.primitive import registry


def test_print_one_line_and_multi_line():
    j = pyjax.make_jaxpr(lambda x: lax.mul(lax.sin(x), 2.0))(1.0)
    assert str(j) == ("{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = mul b 2.0:f32[] "
                      "in (c,) }")

    def long(x, y):
        for _ in range(4):
            x = lax.add(lax.mul(x, y), lax.cos(x))
        return x, y
    s = str(pyjax.make_jaxpr(long)(np.ones(3, np.float32), np.ones(3, np.float32)))
    lines = s.splitlines()
    assert lines[0] == "{ lambda ; a:f32[3] b:f32[3]. let"
    assert lines[1] == "    c:f32[3] = mul a b"
    assert lines[-1].strip().startswith("in (") and s.endswith("}")


def test_constvars_and_params_print():
    c = pyjax.device_put(np.ones(3, np.float32))
    j = pyjax.make_jaxpr(lambda x: lax.convert_element_type(lax.add(x, c), np.int32))(
        np.ones(3, np.float32))
    s = str(j)
    assert s.startswith("{ lambda a:f32[3]; b:f32[3]. let")
    assert "convert_element_type[new_dtype=int32 weak_type=False]" in s
    assert len(j.consts) == 1


def test_check_jaxpr_accepts_traced_and_rejects_wrong_types():
    j = pyjax.make_jaxpr(lambda x, y: lax.add(lax.sin(x), y))(1.0, 2.0)
    check_jaxpr(j.jaxpr)
    a = Var(ShapedArray((3,), np.float32))
    b = Var(ShapedArray((3,), np.int32))  # sin of f32 cannot give i32
    bad = Jaxpr([], [a], [b], [Eqn(registry["sin"], [a], [b], {})])
    with pytest.raises(JaxprTypeError, match="sin"):
        check_jaxpr(bad)
    c = Var(ShapedArray((3,), np.float32))
    unbound = Jaxpr([], [a], [c], [Eqn(registry["sin"], [c], [c], {})])
    with pytest.raises(JaxprTypeError):
        check_jaxpr(unbound)


def test_eval_jaxpr_matches_function():
    def f(x, y):
        return lax.sub(lax.mul(x, y), lax.exp(y))
    j = pyjax.make_jaxpr(f)(1.0, 2.0)
    out, = eval_jaxpr(j.jaxpr, j.consts, 3.0, 0.5)
    np.testing.assert_allclose(float(out), 3.0 * 0.5 - np.exp(0.5), rtol=1e-6)


def test_weak_types_in_avals():
    j = pyjax.make_jaxpr(lambda x, y: lax.add(x, y))(1.0, np.float32(2.0))
    a, b = j.in_avals
    assert a.weak_type and not b.weak_type


def test_shaped_array_basics():
    a = ShapedArray((2, 3), np.float32)
    assert a.str_short() == "f32[2,3]" and a.ndim == 2 and a.size == 6
    assert a == ShapedArray((2, 3), np.float32) and hash(a) == hash(ShapedArray((2, 3), "float32"))
    assert a != a.update(weak_type=True)
