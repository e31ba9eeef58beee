"""Array layouts, as ``jax.experimental.layout`` (defined in ``pyjax._src.core.layout``)."""
from pyjax._src.core.layout import Format as Format, Layout as Layout  # noqa: F401
