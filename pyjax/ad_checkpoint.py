"""Rematerialization, as ``jax.ad_checkpoint``."""
from pyjax._src.transformations.checkpoint import (  # noqa: F401
    checkpoint as checkpoint, checkpoint_policies as checkpoint_policies, remat as remat)
from pyjax._src.transformations.ad_checkpoint import (  # noqa: F401
    checkpoint_name as checkpoint_name, print_saved_residuals as print_saved_residuals)
