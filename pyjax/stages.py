"""``jax.stages``: the ahead-of-time stages of a jitted function."""
from pyjax._src.transformations.jit import Jitted as Wrapped  # noqa: F401
from pyjax._src.transformations.stages import (  # noqa: F401
    ArgInfo as ArgInfo, Compiled as Compiled, Lowered as Lowered, Traced as Traced)
