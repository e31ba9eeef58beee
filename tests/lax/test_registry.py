"""Completeness: every declared primitive has lowering tests (each test module of tests/lax
lists the primitives it exercises in TESTED_PRIMITIVES) and all its required rules."""
import importlib.util
import pathlib

import pyjax  # noqa: F401  (declares every primitive)
from pyjax._src.core.primitive import registry

HERE = pathlib.Path(__file__).parent

# Primitives whose tests live outside tests/lax (named with the file that covers them).
TESTED_ELSEWHERE = {"jit": "tests/interpreters/test_jit.py",
                    "stop_gradient": "tests/interpreters/test_ad.py",
                    "custom_jvp_call": "tests/test_custom_derivatives.py",
                    "custom_vjp_call": "tests/test_custom_derivatives.py",
                    "custom_lin": "tests/test_custom_derivatives.py",  # never lowered: raises
                    "checkpoint": "tests/test_checkpoint.py",
                    "cond": "tests/control_flow/test_cond.py",
                    "scan": "tests/control_flow/test_scan.py",
                    "while": "tests/control_flow/test_while_loop.py"}


def _tested():
    names = set(TESTED_ELSEWHERE)
    for path in HERE.glob("test_*.py"):
        if path.name == "test_registry.py":
            continue
        spec = importlib.util.spec_from_file_location(f"_reg_{path.stem}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        names |= set(getattr(mod, "TESTED_PRIMITIVES", ()))
    return names


def test_every_primitive_has_lowering_tests():
    missing = sorted(set(registry) - _tested())
    assert not missing, f"primitives without lowering tests: {missing}"


def test_every_primitive_has_abstract_eval_and_lowering():
    for name, p in registry.items():
        assert callable(p.abstract_eval), name
        assert callable(p.lower), name
