"""Test set-up: 8 virtual CPU devices, and config restored after every test."""
import os

os.environ.setdefault("PYJAX_CPU_DEVICES", "8")

import pytest  # noqa: E402

import pyjax  # noqa: E402


@pytest.fixture(autouse=True)
def _restore_x64():
    old = pyjax.config.jax_enable_x64
    yield
    if pyjax.config.jax_enable_x64 != old:
        pyjax.config.update("jax_enable_x64", old)


@pytest.fixture
def x64():
    pyjax.config.update("jax_enable_x64", True)
    yield
