"""`jax._src.state.types`: the abstract value of a mutable array reference. pyjax has no refs
(`jax.new_ref` raises NotImplementedError), so no pyjax value ever has this type: flax.nnx
imports it only to recognise refs, and takes its ordinary path for everything else."""


class AbstractRef:
    """The type of a mutable reference to an array of type `inner_aval` (JAX's `AbstractRef`)."""

    def __init__(self, inner_aval, memory_space=None, kind=None):
        self.inner_aval = inner_aval
        self.memory_space = memory_space
        self.kind = kind

    shape = property(lambda self: self.inner_aval.shape)
    dtype = property(lambda self: self.inner_aval.dtype)
    ndim = property(lambda self: len(self.inner_aval.shape))

    def __repr__(self):
        return f"Ref{{{self.inner_aval}}}"
