"""``jax.export``: save a jitted function as a StableHLO program and call it elsewhere."""
from pyjax._src.export import (  # noqa: F401
    DisabledSafetyCheck as DisabledSafetyCheck, Exported as Exported,
    SymbolicScope as SymbolicScope, default_export_platform as default_export_platform,
    deserialize as deserialize, export as export, is_symbolic_dim as is_symbolic_dim,
    maximum_supported_calling_convention_version as
    maximum_supported_calling_convention_version,
    minimum_supported_calling_convention_version as
    minimum_supported_calling_convention_version,
    register_namedtuple_serialization as register_namedtuple_serialization,
    register_pytree_node_serialization as register_pytree_node_serialization,
    symbolic_args_specs as symbolic_args_specs, symbolic_shape as symbolic_shape)
