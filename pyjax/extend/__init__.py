"""Interfaces for libraries that extend pyjax, as ``jax.extend``."""
from pyjax.extend import core as core
from pyjax.extend import linear_util as linear_util
from pyjax.extend import source_info_util as source_info_util
