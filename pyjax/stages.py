"""``jax.stages``: the ahead-of-time stages of a jitted function."""
from pyjax._src.transformations.jit import (  # noqa: F401
    ArgInfo as ArgInfo, Compiled as Compiled, Jitted as Wrapped, Lowered as Lowered,
    Traced as Traced)
