"""`lax.pswapaxes`: swap the mapped axis `axis_name` with the positional `axis` of `x`, which
is `all_to_all` splitting and concatenating along that same axis (JAX's definition)."""
from pyjax._src.lax import parallel

__all__ = ["pswapaxes"]


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    return parallel.all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)
