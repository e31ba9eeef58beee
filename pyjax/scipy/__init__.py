"""``pyjax.scipy``: SciPy's API on pyjax arrays. Submodules load on first attribute access
(``jax.scipy.signal``), as in JAX."""
import importlib as _importlib


def __getattr__(name):
    if name.startswith("_"):
        raise AttributeError(name)
    try:
        return _importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
