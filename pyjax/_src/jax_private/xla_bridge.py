"""`jax._src.xla_bridge`: `_backends`, JAX's dict of the backends already initialized
(platform name -> client), which chex reads to refuse `set_n_cpu_devices` once the CPU
backend exists. Here it is a fresh view of pyjax's runtime clients at each read."""
from pyjax._src.runtime import client as _client


def __getattr__(name):
    if name == "_backends":
        return dict(_client._clients)
    raise AttributeError(f"module 'jax._src.xla_bridge' (pyjax's stand-in) has no attribute "
                         f"{name!r}")
