"""What `jax._src.*` resolves to under `install_as_jax()`: the few private JAX names that
optax, chex, flax and equinox read, with JAX's behaviour where pyjax can give it. Only code
run as `jax` reaches these modules; pyjax itself never imports them."""

import importlib as _importlib

# submodules JAX always imports, which libraries read as attributes of `jax._src` without
# importing them (chex: `jax._src.xla_bridge._backends`; orbax: `jax._src.tree_util`,
# `jax._src.distributed`)
_ALWAYS_LOADED = ("xla_bridge", "distributed", "tree_util")


def __getattr__(name):
    if name in _ALWAYS_LOADED:
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
