"""Completeness over the whole primitive registry.

Every module of pyjax is imported first (walking the package: random, control flow, custom
derivatives, checkpoint, ...), so a primitive declared in a new module is in the registry without
this file naming it. Every primitive of pyjax must have ``abstract_eval`` and ``lower``, a ``jvp``
rule or ``NOT_DIFFERENTIABLE``, a ``transpose`` when ``linear``, and a ``batch`` rule; and the
generic tests must exercise it. Test modules anywhere under tests/ say what they cover with
module-level sets of primitive names:

* ``TESTED_PRIMITIVES``: lowering (run eagerly or under jit) against NumPy;
* ``JVP_TESTED``: the JVP rule against finite differences;
* ``TRANSPOSE_TESTED``: the transpose rule against the dot-product identity;
* ``BATCH_TESTED``: the batching rule against a Python loop (or a documented exemption).
"""
import importlib
import importlib.util
import pathlib
import pkgutil
import re

import pytest

import pyjax
from pyjax._src.core.primitive import Primitive, registry, rule_kinds
from pyjax._src.core.rules import NOT_DIFFERENTIABLE

TESTS = pathlib.Path(__file__).parent.parent
COVERAGE_SETS = ("TESTED_PRIMITIVES", "JVP_TESTED", "TRANSPOSE_TESTED", "BATCH_TESTED")


def _import_all_of_pyjax():
    for m in pkgutil.walk_packages(pyjax.__path__, "pyjax."):
        importlib.import_module(m.name)


_import_all_of_pyjax()


def pyjax_primitives():
    """The registry without the primitives that tests declare for themselves."""
    return {n: p for n, p in registry.items()
            if getattr(p.abstract_eval, "__module__", "").startswith("pyjax.")}


def _coverage():
    """Each coverage set, united over every test module that defines it."""
    sets = {k: set() for k in COVERAGE_SETS}
    pattern = re.compile(r"^(%s)\b" % "|".join(COVERAGE_SETS), re.M)
    for path in sorted(TESTS.rglob("test_*.py")):
        if path.resolve() == pathlib.Path(__file__).resolve():
            continue
        if not pattern.search(path.read_text()):
            continue
        name = "_reg_" + "_".join(path.relative_to(TESTS).with_suffix("").parts)
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for k in COVERAGE_SETS:
            sets[k] |= set(getattr(mod, k, ()))
    return sets


COVERAGE = _coverage()
PRIMS = pyjax_primitives()


def test_registry_is_complete():
    # the walk reaches primitives of every layer that declares them
    assert {"sin", "sort", "dot_general", "gather", "psum", "stop_gradient", "jit", "cond",
            "scan", "while", "custom_jvp_call", "custom_vjp_call", "checkpoint"} <= set(PRIMS)


def problems(prims, coverage):
    """What each completeness check finds missing, by check."""
    return {
        "abstract_eval or lower": [n for n, p in prims.items()
                                   if not (callable(p.abstract_eval) and callable(p.lower))],
        "jvp or NOT_DIFFERENTIABLE": [n for n, p in prims.items()
                                      if not (callable(p.jvp) or p.jvp is NOT_DIFFERENTIABLE)],
        "transpose of a linear primitive": [n for n, p in prims.items()
                                            if p.linear and not callable(p.transpose)],
        "batch rule": [n for n, p in prims.items() if not callable(p.batch)],
        "lowering test (TESTED_PRIMITIVES)": [n for n in prims
                                              if n not in coverage["TESTED_PRIMITIVES"]],
        "JVP test (JVP_TESTED)": [n for n, p in prims.items()
                                  if callable(p.jvp) and n not in coverage["JVP_TESTED"]],
        "transpose test (TRANSPOSE_TESTED)": [n for n, p in prims.items() if p.linear
                                              and n not in coverage["TRANSPOSE_TESTED"]],
        "batching test (BATCH_TESTED)": [n for n in prims if n not in coverage["BATCH_TESTED"]],
    }


PROBLEMS = problems(PRIMS, COVERAGE)


@pytest.mark.parametrize("check", sorted(PROBLEMS))
def test_every_primitive_passes(check):
    missing = sorted(PROBLEMS[check])
    assert not missing, f"primitives without a {check}: {missing}"


def test_checks_catch_an_incomplete_primitive():
    def abstract_eval(x):
        return x
    abstract_eval.__module__ = "pyjax._src.lax.some_new_module"  # as if pyjax declared it
    p = Primitive("test_reg_incomplete", abstract_eval=abstract_eval, lower=None, linear=True)
    try:
        assert "test_reg_incomplete" in pyjax_primitives()
        found = problems({p.name: p}, COVERAGE)
        assert all(found[k] == [p.name] for k in found if "JVP test" not in k), found
    finally:
        del registry[p.name]


def test_every_rule_is_callable_or_absent():
    bad = [(n, k) for n, p in PRIMS.items() for k, r in p.rules().items()
           if not callable(r) and not (k == "jvp" and r is NOT_DIFFERENTIABLE)]
    assert not bad, f"rules that are neither callable nor None: {bad}"
    assert {"abstract_eval", "lower", "jvp", "transpose", "batch", "axis_aware",
            "partial_eval", "partial_eval_jaxpr"} <= set(rule_kinds())


def test_coverage_sets_name_real_primitives():
    # a renamed primitive must not leave a stale name that hides a missing test
    for k, names in COVERAGE.items():
        stale = sorted(names - set(registry))
        assert not stale, f"{k} names primitives that do not exist: {stale}"
