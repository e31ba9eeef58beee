"""Test set-up: 8 virtual CPU devices, no persistent compilation cache, and config restored
after every test."""
import os

os.environ.setdefault("PYJAX_CPU_DEVICES", "8")
# Tests compile in memory only (tests/runtime/test_disk_cache.py turns the persistent cache
# on in its own directories): hermetic, and no disk writes for thousands of programs.
os.environ["PYJAX_COMPILATION_CACHE"] = "0"

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


@pytest.fixture
def in_threads():
    """``in_threads(work, n)``: runs ``work(k)`` for k in range(n) on n threads at once and
    re-raises the first exception any of them raised."""
    import threading

    def run(work, n):
        errors = []

        def guarded(k):
            try:
                work(k)
            except BaseException as e:  # pragma: no cover - reported below
                errors.append(e)

        threads = [threading.Thread(target=guarded, args=(k,)) for k in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
    return run
