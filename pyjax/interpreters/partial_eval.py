"""Partial evaluation names, as ``jax.interpreters.partial_eval``: `PartialVal`; tracing with
partially known values (`trace_to_jaxpr_nounits`) is not exposed yet and raises
NotImplementedError naming itself."""
from typing import Any, NamedTuple


class PartialVal(NamedTuple):
    """A value that is known (a concrete value) or unknown (only its abstract value)."""
    pval_known: Any
    pval_aval: Any

    @classmethod
    def known(cls, const):
        return cls(const, None)

    @classmethod
    def unknown(cls, aval):
        return cls(None, aval)

    def is_known(self):
        return self.pval_aval is None

    def get_known(self):
        return self.pval_known if self.is_known() else None

    def get_aval(self):
        from pyjax._src.core.trace import get_aval
        return get_aval(self.pval_known) if self.is_known() else self.pval_aval


def trace_to_jaxpr_nounits(fun, pvals, instantiate=False):
    raise NotImplementedError("jax.interpreters.partial_eval.trace_to_jaxpr_nounits is not "
                              "implemented in pyjax")
