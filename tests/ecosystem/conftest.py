"""Ecosystem tests import optax/chex/flax/equinox as `jax` libraries: `jax` resolves to pyjax.
A library that is not installed skips its tests; one that is installed but fails to import
fails them (that failure is what these tests are for)."""
import importlib
import importlib.util

import pytest

import pyjax


def import_library(name):
    """Import `name` under install_as_jax(), skipping the test when it is not installed."""
    if importlib.util.find_spec(name.split(".")[0]) is None:
        pytest.skip(f"{name} is not installed (see shims/README.md for the install command)")
    pyjax.install_as_jax()
    return importlib.import_module(name)
