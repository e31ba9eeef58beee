"""What `jax.experimental.sparse` resolves to under `install_as_jax()`. pyjax has no sparse
arrays; numpyro imports `BCOO` at import time and uses it only for a CAR distribution given a
scipy.sparse adjacency matrix, so the name exists and every use raises NotImplementedError."""


def _unsupported(what):
    raise NotImplementedError(
        f"jax.experimental.sparse ({what}) is not implemented in pyjax: pass dense arrays")


class BCOO:
    """Stand-in for JAX's batched-COO sparse array: constructing one raises."""

    def __init__(self, *args, **kwargs):
        _unsupported("BCOO")

    @classmethod
    def fromdense(cls, *args, **kwargs):
        _unsupported("BCOO.fromdense")

    @classmethod
    def from_scipy_sparse(cls, *args, **kwargs):
        _unsupported("BCOO.from_scipy_sparse")


class BCSR(BCOO):
    """Stand-in for JAX's batched-CSR sparse array: constructing one raises."""


def __getattr__(name):
    raise AttributeError(f"jax.experimental.sparse has no attribute {name!r} under pyjax, "
                         "which does not implement sparse arrays")
