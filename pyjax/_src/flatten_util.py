"""`jax.flatten_util.ravel_pytree`: a pytree of arrays as one flat vector and back."""
import warnings

import numpy as np

from pyjax import numpy as jnp
from pyjax._src.core.pytree import tree_unflatten, user_tree_flatten
from pyjax._src.numpy import dtypes_api


class HashablePartial:
    """`fun` with leading `args` bound, equal (and hashing equal) to another with the same
    function and arguments, so an unravel function can be a static argument of `jit`."""

    def __init__(self, fun, *args):
        self.fun, self.args = fun, args

    def __eq__(self, other):
        return (type(other) is HashablePartial and self.fun is other.fun
                and self.args == other.args)

    def __hash__(self):
        return hash((self.fun, self.args))

    def __call__(self, *args):
        return self.fun(*self.args, *args)


def ravel_pytree(pytree):
    """Ravel (flatten) a pytree of arrays down to a 1-D array.

    Returns the concatenation of the raveled leaves (in `tree_flatten` order, promoted to their
    common dtype) and a function that maps such a vector back to a pytree of the original
    structure, shapes and dtypes.
    """
    leaves, treedef = user_tree_flatten(pytree)
    flat, unravel_list = _ravel_list(leaves)
    return flat, HashablePartial(_unravel_pytree, treedef, unravel_list)


def _unravel_pytree(treedef, unravel_list, flat):
    return tree_unflatten(treedef, unravel_list(flat))


def _ravel_list(leaves):
    if not leaves:
        return jnp.array([], jnp.float32), HashablePartial(_unravel_empty)
    arrays = [jnp.asarray(x) for x in leaves]
    from_dtypes = tuple(a.dtype for a in arrays)
    to_dtype = dtypes_api.result_type(*from_dtypes)
    shapes = tuple(a.shape for a in arrays)
    indices = tuple(int(i) for i in np.cumsum([int(np.prod(s, dtype=np.int64)) for s in shapes]))
    if all(d == to_dtype for d in from_dtypes):
        flat = jnp.concatenate([jnp.ravel(a) for a in arrays])
        return flat, HashablePartial(_unravel_list_single_dtype, indices, shapes)
    flat = jnp.concatenate([jnp.ravel(a.astype(to_dtype)) for a in arrays])
    return flat, HashablePartial(_unravel_list, indices, shapes, from_dtypes, to_dtype)


def _unravel_empty(flat):
    return []


def _check_shape(indices, flat):
    shape = getattr(flat, "shape", None)
    if shape != (indices[-1],):
        raise ValueError(f"ravel_pytree's unravel function expected an array of shape "
                         f"({indices[-1]},), got {shape}")


def _unravel_list_single_dtype(indices, shapes, flat):
    _check_shape(indices, flat)
    starts = (0,) + indices[:-1]
    return [flat[a:b].reshape(s) for a, b, s in zip(starts, indices, shapes)]


def _unravel_list(indices, shapes, from_dtypes, to_dtype, flat):
    if np.dtype(flat.dtype) != to_dtype:
        raise TypeError(f"unravel function given array of dtype {flat.dtype} but expected "
                        f"dtype {to_dtype}")
    _check_shape(indices, flat)
    starts = (0,) + indices[:-1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        return [flat[a:b].reshape(s).astype(d)
                for a, b, s, d in zip(starts, indices, shapes, from_dtypes)]
