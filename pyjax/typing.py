"""Type annotations for pyjax programs, as ``jax.typing``."""
from typing import Any, Protocol, Union

import numpy as np

from pyjax._src.core.array import Array


class SupportsDType(Protocol):
    @property
    def dtype(self) -> np.dtype: ...


# what jnp functions accept as an array argument (a Tracer is a subclass of Array's role)
ArrayLike = Union[Array, np.ndarray, np.bool_, np.number, bool, int, float, complex]
DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]

__all__ = ["ArrayLike", "DTypeLike"]
