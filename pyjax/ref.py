"""`jax.ref`: mutable array references (docs/refs.md)."""
from pyjax._src.core.refs import AbstractRef as AbstractRef, Ref as Ref
from pyjax._src.state.ops import (
    addupdate as addupdate, freeze as freeze, get as get, new_ref as new_ref, set as set,
    swap as swap)
