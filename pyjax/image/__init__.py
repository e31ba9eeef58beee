"""``pyjax.image``: image resampling, as ``jax.image``."""
from pyjax._src.image.scale import (  # noqa: F401
    ResizeMethod as ResizeMethod, resize as resize, scale_and_translate as scale_and_translate)
