"""Imports go one way: a module of pyjax/_src imports (at the top or lazily inside a function)
only modules of its own layer or of lower layers, as docs/design.md lays out."""
import ast
import pathlib

import pytest

SRC = pathlib.Path(__file__).resolve().parents[2] / "pyjax" / "_src"

# package (or top-level module) under pyjax/_src -> layer; docs/design.md explains each
LAYERS = {
    "runtime": 0,
    "core": 1, "lowering": 1,
    "lax": 2,
    "interpreters": 3, "dispatch": 3,
    "transformations": 4, "control_flow": 4, "parallel": 4, "callback": 4, "ffi": 4,
    "numpy": 5, "random": 5, "api": 5, "test_util": 5, "state": 5,
    "nn": 6, "scipy": 6, "image": 6, "ops": 6, "sharding": 6, "debug": 6, "export": 6,
    "profiler": 6, "example_libraries": 6, "jax_alias": 6, "flatten_util": 5, "extend": 1, "checkify": 6, "memory_profile": 6, "jax_private": 6,
    "monitoring": 0, "multihost": 5,
}


def _part(module):
    """The first component under pyjax._src of a dotted module name (None if outside)."""
    parts = module.split(".")
    if parts[:2] != ["pyjax", "_src"] or len(parts) < 3:
        return None
    return parts[2]


def _imports(path):
    rel = path.relative_to(SRC.parent.parent)
    pkg = list(rel.with_suffix("").parts[:-1])
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[:len(pkg) - node.level + 1] if node.level > 1 else pkg
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            names = [mod + "." + a.name for a in node.names] if mod in ("pyjax._src",) else [mod]
            for m in names:
                yield node.lineno, m
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name


def _modules():
    return sorted(p for p in SRC.rglob("*.py"))


def test_every_package_has_a_layer():
    missing = {p.relative_to(SRC).parts[0].removesuffix(".py") for p in _modules()} - set(LAYERS)
    missing.discard("__init__")
    assert not missing, f"give these a layer in LAYERS and docs/design.md: {sorted(missing)}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_imports_go_down(path):
    own = path.relative_to(SRC).parts[0].removesuffix(".py")
    if own == "__init__":
        return
    bad = []
    for line, mod in _imports(path):
        other = _part(mod)
        if other is None or other not in LAYERS:
            continue
        if LAYERS[other] > LAYERS[own]:
            bad.append(f"line {line}: {mod} (layer {LAYERS[other]} > {own}'s {LAYERS[own]})")
    assert not bad, "\n".join(bad)
