"""`jax._src.checkify`: the public `jax.experimental.checkify` names plus the type variable
`Out` that flax.nnx's `checkify` wrapper names in its annotations."""
import typing

from pyjax.experimental.checkify import *  # noqa: F401,F403
from pyjax.experimental.checkify import (  # noqa: F401
    Error, JaxException, checkify, user_checks)

Out = typing.TypeVar("Out")
