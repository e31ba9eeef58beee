"""Helpers shared by the ``pyjax.numpy`` modules: argument checks, promotion, broadcasting."""
from __future__ import annotations

import warnings

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.config import config
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.trace import Tracer
from pyjax._src.core.trace import aval_of, shape_of  # noqa: F401 (for the numpy modules)
from pyjax._src.core.axes import canonicalize_axis, canonicalize_axes, index  # noqa: F401
from pyjax._src.lax import elementwise as lax_ew
from pyjax._src.lax import base as lax_base
from pyjax._src.lax.key_ops import is_key as _is_key

_SCALARS = (bool, int, float, complex)


def is_arraylike(x) -> bool:
    # key arrays too, as in JAX: the shape functions move their key data, and a numeric
    # primitive refuses them (lax/key_ops.py)
    return isinstance(x, (ArrayImpl, Tracer, np.ndarray, np.generic, bool, int, float, complex)) \
        or hasattr(x, "__jax_array__") or _is_key(x)


def check_arraylike(fun_name: str, *args):
    """Raise JAX's TypeError for non-array arguments (lists and tuples are not accepted)."""
    for pos, a in enumerate(args):
        if not is_arraylike(a):
            raise TypeError(f"{fun_name} requires ndarray or scalar arguments, got {type(a)} at "
                            f"position {pos}.")


def ndim_of(x):
    return len(shape_of(x))


def dtype_of(x):
    return x.dtype if _is_key(x) else aval_of(x).dtype


def _keys_unpromoted(args):
    """Key arrays take part in promotion only with keys of their own key dtype (JAX's rule
    and error)."""
    kdt = next(a.dtype for a in args if _is_key(a))
    if not all(_is_key(a) and a.dtype == kdt for a in args):
        bad = next(a.dtype for a in args if _is_key(a) and a.dtype != kdt) if all(
            map(_is_key, args)) else kdt
        raise ValueError(f"dtype={bad} is not a valid dtype for JAX type promotion.")
    return list(args)


def promote_dtypes(*args):
    """Convert arguments to their JAX result type (weak types respected); no broadcasting."""
    args = [_unwrap(a) for a in args]
    if len(args) < 2:
        return list(args)
    if any(map(_is_key, args)):
        return _keys_unpromoted(args)
    avals = [aval_of(a) for a in args]
    to_dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    out = []
    for a, av in zip(args, avals):
        if av.dtype == to_dtype and av.weak_type == weak:
            out.append(a)
        elif type(a) in _SCALARS:
            out.append(lax_base.coerce_scalar(a, to_dtype, wrap=True) if weak or to_dtype != av.dtype
                       else a)
        else:
            out.append(lax_ew.convert_element_type(a, to_dtype, weak))
    return out


def promote_dtypes_inexact(*args):
    """Promote, then make the common dtype inexact (ints and bools become the default float)."""
    to_dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    to_dtype = dtypes.to_inexact_dtype(to_dtype)
    return [_convert(a, to_dtype, weak) for a in args]


def promote_dtypes_numeric(*args):
    to_dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    to_dtype = dtypes.to_numeric_dtype(to_dtype)
    return [_convert(a, to_dtype, weak) for a in args]


def promote_dtypes_complex(*args):
    to_dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    to_dtype = dtypes.to_complex_dtype(to_dtype)
    return [_convert(a, to_dtype, weak) for a in args]


def _convert(a, to_dtype, weak):
    av = aval_of(a)
    if av.dtype == to_dtype and av.weak_type == weak:
        return a
    if type(a) in _SCALARS:
        return lax_base.coerce_scalar(a, to_dtype, wrap=True)
    return lax_ew.convert_element_type(a, to_dtype, weak)


def broadcast_shapes(*shapes):
    """NumPy broadcasting of shapes, with JAX's error message."""
    shapes = [tuple(s) for s in shapes]
    if not shapes:
        return ()
    nd = max(len(s) for s in shapes)
    out = []
    for i in range(nd):
        size = 1
        for s in shapes:
            k = len(s) - nd + i
            if k < 0:
                continue
            d = s[k]
            if d == 1:
                continue
            if size == 1:
                size = d
            elif d != size:
                raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}")
        out.append(size)
    return tuple(out)


def check_rank_promotion(fun_name, shapes):
    """The ``jax_numpy_rank_promotion`` config: 'warn' or 'raise' when operands of different
    non-zero ranks broadcast (scalars broadcast freely), with JAX's messages."""
    mode = config.jax_numpy_rank_promotion
    if mode == "allow" or len({len(s) for s in shapes if s}) < 2:
        return
    shapes_str = " ".join(str(tuple(s)) for s in shapes)
    if mode == "warn":
        warnings.warn(
            f"Following NumPy automatic rank promotion for {fun_name} on shapes {shapes_str}. "
            "Set the jax_numpy_rank_promotion config option to 'allow' to disable this "
            "warning; for more information, see "
            "https://docs.jax.dev/en/latest/rank_promotion_warning.html.", stacklevel=4)
    else:
        raise ValueError(
            f"Operands could not be broadcast together for {fun_name} on shapes {shapes_str} "
            "and with the config option jax_numpy_rank_promotion='raise'. For more "
            "information, see https://docs.jax.dev/en/latest/rank_promotion_warning.html.")


def broadcast_to(x, shape):
    """Broadcast one operand to ``shape`` (NumPy rules) with ``lax.broadcast_in_dim``."""
    from pyjax._src.lax import shape_ops
    shape = tuple(shape)
    xs = shape_of(x)
    if xs == shape:
        return x
    if len(xs) > len(shape):
        raise ValueError(f"Cannot broadcast array of shape {xs} to shape {shape}: the target "
                         "has fewer dimensions")
    lead = len(shape) - len(xs)
    keep = []
    for i, d in enumerate(xs):
        if d != shape[lead + i] and d != 1:
            raise ValueError(f"Incompatible shapes for broadcasting: {xs} and requested shape "
                             f"{shape}")
        if d == shape[lead + i]:
            keep.append(i)
    if len(keep) != len(xs):  # drop the size-1 dims that get stretched
        x = shape_ops.reshape(x, tuple(xs[i] for i in keep))
    return shape_ops.broadcast_in_dim(x, shape, tuple(lead + i for i in keep))


def broadcast_arrays(*args):
    """Broadcast operands to their common shape. Rank-0 Python scalars stay scalars (elementwise
    primitives broadcast them implicitly, which keeps Jaxprs small)."""
    shapes = [shape_of(a) for a in args]
    if all(s == shapes[0] for s in shapes):
        return list(args)
    if config.jax_numpy_rank_promotion != "allow":
        check_rank_promotion("broadcast_arrays", shapes)
    shape = broadcast_shapes(*shapes)
    return [a if (s == shape or (s == () and type(a) in _SCALARS)) else broadcast_to(a, shape)
            for a, s in zip(args, shapes)]


# ---- the hot path: promotion + broadcasting plans cached by argument signature ----
# A signature is each argument's aval (arrays, tracers) or its Python type (scalars); the plan
# says, per argument, what dtype conversion and broadcast it needs. Values never enter the key,
# so overflow checks on Python ints still happen when the plan runs.

_plan_cache: dict = {}
_KEEP = 0
# plans hold promotion results, which the promotion mode changes
config.on_change("jax_numpy_dtype_promotion", lambda _: _plan_cache.clear())


def _sig(a):
    t = type(a)
    if t is ArrayImpl:
        return a.aval
    if t in _SCALARS:
        return t
    if isinstance(a, Tracer):
        return a.aval
    return None


def _make_plan(kind, args):
    promote = {"": promote_dtypes, "inexact": promote_dtypes_inexact,
               "numeric": promote_dtypes_numeric}[kind]
    promoted = promote(*args)
    shapes = [shape_of(a) for a in promoted]
    out_shape = broadcast_shapes(*shapes)
    plan = []
    for a, p, s in zip(args, promoted, shapes):
        if type(a) in _SCALARS:
            conv = _KEEP if type(p) is type(a) and p == a else aval_of(p).dtype
            bshape = None if s == () else out_shape
        else:
            pa = aval_of(p)
            conv = _KEEP if pa == aval_of(a) else (pa.dtype, pa.weak_type)
            bshape = None if s == out_shape else out_shape
        plan.append((conv, bshape))
    return promoted, tuple(plan)


def _run_plan(args, plan):
    out = []
    for a, (conv, bshape) in zip(args, plan):
        if conv is not _KEEP:
            if type(a) in _SCALARS:
                a = lax_base.coerce_scalar(a, conv, wrap=True)
            else:
                a = lax_ew.convert_element_type(a, conv[0], conv[1])
        if bshape is not None:
            a = broadcast_to(a, bshape)
        out.append(a)
    return out


def _unwrap(a):
    """The array an object with ``__jax_array__`` stands for (flax's Variables): operations
    use that array, traced or not, never the object itself."""
    if type(a) in _SCALARS or isinstance(a, (ArrayImpl, Tracer, np.ndarray, np.generic)):
        return a
    f = getattr(a, "__jax_array__", None)
    return a if f is None else f()


def _promote_and_broadcast(kind, fun_name, args):
    args = [_unwrap(a) for a in args]
    if config.jax_numpy_rank_promotion != "allow" and len(args) > 1:
        check_rank_promotion(fun_name, [np.shape(a) for a in args])
    try:
        key = (kind, dtypes.x64_enabled(), *[_sig(a) for a in args])
        plan = _plan_cache.get(key)
    except TypeError:
        key, plan = None, None
    if plan is not None:
        return _run_plan(args, plan)
    check_arraylike(fun_name, *args)
    if key is None or None in key:
        if any(map(_is_key, args)) and len({str(dtype_of(a)) for a in args}) > 1:
            names = ", ".join(str(dtype_of(a)) if _is_key(a) else dtypes.result_type(a).name
                              for a in args)  # JAX's elementwise error for keys and non-keys
            raise TypeError(f"{fun_name} does not accept dtypes {names}.")
        promote = {"": promote_dtypes, "inexact": promote_dtypes_inexact,
                   "numeric": promote_dtypes_numeric}[kind]
        return broadcast_arrays(*promote(*args))
    promoted, plan = _make_plan(kind, args)
    if len(_plan_cache) > 4096:
        _plan_cache.clear()
    _plan_cache[key] = plan
    return _run_plan(args, plan)


def promote_args(fun_name, *args):
    """Check, promote dtypes and broadcast shapes: what every NumPy-style elementwise needs."""
    return _promote_and_broadcast("", fun_name, args)


def promote_args_inexact(fun_name, *args):
    return _promote_and_broadcast("inexact", fun_name, args)


def promote_args_numeric(fun_name, *args):
    return _promote_and_broadcast("numeric", fun_name, args)

