"""Partial evaluation, as ``jax.interpreters.partial_eval``: `PartialVal` and
`trace_to_jaxpr_nounits` (run the known part of a function now, stage the rest)."""
from pyjax._src.interpreters.partial_eval import (  # noqa: F401
    PartialVal as PartialVal, trace_to_jaxpr_nounits as trace_to_jaxpr_nounits)
