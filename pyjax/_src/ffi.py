"""``jax.ffi``: calling C functions written against XLA's FFI from traced and compiled code.

A user compiles a handler ``XLA_FFI_Error* handler(XLA_FFI_CallFrame*)``, wraps its address in
a PyCapsule (``pycapsule``), registers it under a name (``register_ffi_target``: the plugin's
FFI extension, platform "Host", as ``runtime/ffi.py`` does for pyjax's own host callbacks) and
calls it with ``ffi_call(name, result_shape_dtypes)(*arrays, **attributes)``. That binds the
``ffi_call`` primitive, lowered to ``stablehlo.custom_call @name`` with ``api_version = 4`` (the
typed FFI) and the keyword attributes in its ``backend_config`` dictionary.

As in JAX: ``ffi_call`` has no derivative (wrap it in ``custom_jvp``/``custom_vjp``); under
``vmap`` it follows ``vmap_method`` (None refuses); ``has_side_effect`` keeps an unused call.
What the CPU plugin cannot do raises NotImplementedError naming the option: the legacy
custom-call API (``api_version=0``, ``custom_call_api_version`` other than 4), non-row-major
layouts, handlers for FFI stages other than "execute", custom types, targets for other
platforms, and batch partitioning (the plugin has no custom-partitioner extension).
"""
from __future__ import annotations

import ctypes
import re
import threading
from collections.abc import Sequence

import numpy as np

from pyjax._src import runtime
from pyjax._src.callback import VMAP_METHODS, batch_by_loop
from pyjax._src.core import dtypes
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.rules import not_mapped
from pyjax._src.core.trace import aval_of
from pyjax._src.lax import batch_util, shape_ops
from pyjax._src.lax import collective_lowering as cl
from pyjax._src.core.sharding_rules import replicated_results

__all__ = ["ffi_call", "ffi_lowering", "build_ffi_lowering_function", "include_dir",
           "pycapsule", "register_ffi_target", "register_ffi_target_as_batch_partitionable",
           "register_ffi_type", "register_ffi_type_id"]

_targets: dict = {}          # name -> (handler address, the capsule, kept alive)
_lock = threading.Lock()

# ctypes.pythonapi holds the GIL, as the Python C API needs
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype = ctypes.c_char_p
_capsule_name.argtypes = [ctypes.py_object]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def pycapsule(funcptr):
    """Wrap a ctypes function pointer (e.g. ``ctypes.CDLL(path).handler``) in a PyCapsule,
    the form ``register_ffi_target`` takes."""
    try:
        address = ctypes.cast(funcptr, ctypes.c_void_p).value
    except (TypeError, ctypes.ArgumentError):
        raise TypeError(f"pycapsule: expected a ctypes function pointer, got "
                        f"{type(funcptr).__name__}") from None
    if not address:
        raise ValueError("pycapsule: the function pointer is NULL")
    return _capsule_new(address, None, None)


def _capsule_address(obj, who):
    if type(obj).__name__ != "PyCapsule":
        raise TypeError(f"{who}: expected a PyCapsule (jax.ffi.pycapsule(fn)), got "
                        f"{type(obj).__name__}")
    return _capsule_pointer(obj, _capsule_name(obj))


def _check_platform(platform, who):
    if not isinstance(platform, str):
        raise TypeError(f"{who}: platform must be a string, got {platform!r}")
    if platform.lower() not in ("cpu", "host"):
        raise NotImplementedError(f"{who}: platform={platform!r}: pyjax registers FFI "
                                  "targets with the CPU plugin only")


def register_ffi_target(name, fn, platform="cpu", api_version=1, **kwargs):
    """Register the FFI handler ``fn`` (a PyCapsule, or ``{"execute": capsule}``) as the
    target ``name`` for ``platform`` ("cpu"). ``api_version=1`` is the typed FFI; ``traits``
    (an int of XLA_FFI_Handler_Traits bits) is the one extra keyword the plugin takes."""
    who = "register_ffi_target"
    if not isinstance(name, str) or not name:
        raise TypeError(f"{who}: name must be a non-empty string, got {name!r}")
    _check_platform(platform, who)
    if api_version != 1:
        raise NotImplementedError(
            f"{who}: api_version={api_version!r}: the legacy custom-call API needs XLA's "
            "custom-call registry, which the PJRT plugin does not expose; use the typed FFI "
            "(api_version=1)")
    traits = kwargs.pop("traits", 0)
    if kwargs:
        raise TypeError(f"{who}: unexpected keyword arguments {sorted(kwargs)}")
    if isinstance(fn, dict):
        other = sorted(set(fn) - {"execute"})
        if other or "execute" not in fn:
            raise NotImplementedError(f"{who}: handlers for the FFI stages {other or fn} "
                                      "(the plugin takes one handler, for 'execute')")
        fn = fn["execute"]
    address = _capsule_address(fn, who)
    with _lock:
        known = _targets.get(name)
        if known is not None:
            if known[0] != address:
                raise ValueError(f"{who}: an FFI target named {name!r} is already registered "
                                 "with another function")
            return
        runtime.ffi.register_handler(runtime.get_client("cpu")._api, name.encode(), address,
                                     int(traits))
        _targets[name] = (address, fn)


def register_ffi_target_as_batch_partitionable(name):
    raise NotImplementedError(
        f"register_ffi_target_as_batch_partitionable({name!r}): the CPU plugin has no custom "
        "partitioner extension")


def register_ffi_type_id(name, obj, platform="cpu"):
    raise NotImplementedError(f"register_ffi_type_id({name!r}): pyjax does not register "
                              "FFI types (stateful handlers)")


def register_ffi_type(name, type_registration, platform="cpu"):
    raise NotImplementedError(f"register_ffi_type({name!r}): pyjax does not register "
                              "FFI types (stateful handlers)")


def include_dir():
    raise NotImplementedError("jax.ffi.include_dir: the xla-cpu-pjrt plugin ships no XLA FFI "
                              "headers (xla/ffi/api/ffi.h); write the handler against the "
                              "C API layouts of the XLA release the plugin was built from")


# ---- attributes ----------------------------------------------------------------------------

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*\Z")
_FLOAT_BITS = {"float16": ("f16", np.uint16), "bfloat16": ("bf16", np.uint16),
               "float32": ("f32", np.uint32), "float64": ("f64", np.uint64)}


def _element_type(dt):
    dt = np.dtype(dt)
    if dt == np.bool_:
        return "i1"
    if dtypes.is_integer(dt):
        return f"{'ui' if dt.kind == 'u' else 'i'}{dt.itemsize * 8}"
    if dt.name in _FLOAT_BITS:
        return _FLOAT_BITS[dt.name][0]
    return None


def _scalar_text(v, dt):
    dt = np.dtype(dt)
    if dt == np.bool_:
        return "true" if v else "false"
    if dtypes.is_integer(dt):
        return str(int(v))
    # the bit pattern: exact, and valid for inf and nan
    bits = np.asarray(v, dt).view(_FLOAT_BITS[dt.name][1])
    return f"0x{int(bits):0{dt.itemsize * 2}X}"


def attribute_text(name, value):
    """The MLIR text of one FFI attribute: Python bool/int/float as i1/i64/f64 (JAX's
    choices), NumPy scalars by their dtype, strings, 1-d NumPy arrays as dense arrays."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, int):
        return f"{value} : i64"
    if isinstance(value, float):
        return f"{_scalar_text(value, np.float64)} : f64"
    if isinstance(value, np.generic) and _element_type(value.dtype):
        return f"{_scalar_text(value, value.dtype)} : {_element_type(value.dtype)}"
    if (isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype != np.bool_
            and _element_type(value.dtype)):
        items = ", ".join(_scalar_text(v, value.dtype) for v in value)
        return f"array<{_element_type(value.dtype)}{': ' + items if items else ''}>"
    raise TypeError(f"ffi_call: attribute {name}={value!r} has a type the FFI cannot take "
                    f"({type(value).__name__}); use a bool, int, float, str, NumPy scalar or "
                    "1-d NumPy array")


def _attributes(kwargs):
    out = []
    for k in sorted(kwargs):
        if not _NAME.match(k):
            raise ValueError(f"ffi_call: attribute name {k!r} is not an identifier")
        out.append((k, attribute_text(k, kwargs[k])))
    return tuple(out)


# ---- the primitive -------------------------------------------------------------------------

def _abstract_eval(*avals, result_avals, **_):
    return list(result_avals)


def custom_call(ctx, target_name, operands, result_avals, attributes=(),
                has_side_effect=False):
    """Emit ``stablehlo.custom_call @target_name`` (typed FFI) with ``attributes`` (pairs of
    name and MLIR text) in its backend_config; returns the result values."""
    if target_name not in _targets:
        raise ValueError(f"ffi_call: no FFI target named {target_name!r} is registered for the "
                         "CPU (jax.ffi.register_ffi_target)")
    config = ", ".join(f"{k} = {v}" for k, v in attributes)
    attrs = {"call_target_name": f'"{target_name}"', "api_version": "4 : i32",
             "has_side_effect": "true" if has_side_effect else "false",
             "backend_config": "{" + config + "}"}

    def emit(block, args):
        return block.op("stablehlo.custom_call", list(args), list(result_avals), attrs=attrs)
    if cl.partitioned_by_xla():
        # in an SPMD program the handler sees whole operands, as JAX's (results replicated);
        # one with side effects runs once per execution, on partition 0
        return cl.on_whole_operands(ctx.block, operands, result_avals, emit,
                                    once=has_side_effect)
    return emit(ctx.block, operands)


def _lower(ctx, *operands, target_name, result_avals, has_side_effect, attributes,
           vmap_method):
    return custom_call(ctx, target_name, operands, result_avals, attributes, has_side_effect)


def _jvp(primals, tangents, **params):
    raise NotImplementedError("Differentiation rule for 'ffi_call' not implemented: wrap the "
                              "call in jax.custom_jvp or jax.custom_vjp")


def _batch(args, dims, **params):
    vmap_method = params["vmap_method"]
    if vmap_method not in VMAP_METHODS[:4]:
        raise NotImplementedError(
            f"vmap is only supported for the ffi_call primitive when vmap_method is one of "
            f"{', '.join(map(repr, VMAP_METHODS[:4]))}. Got vmap_method={vmap_method!r}.")
    if vmap_method in ("sequential", "sequential_unrolled"):
        return batch_by_loop(ffi_call_p, args, dims, params,
                             vmap_method == "sequential_unrolled")
    size = batch_util.batch_size(args, dims)
    new = []
    for x, d in zip(args, dims):
        if d is not not_mapped:
            new.append(batch_util.bdim_to(x, d, 0, size))
        elif vmap_method == "broadcast_all":
            new.append(batch_util.broadcast_batched(x, size, 0))
        else:  # expand_dims: a leading axis of size 1
            new.append(shape_ops.expand_dims(x, (0,)))
    params = dict(params, result_avals=tuple(ShapedArray((size,) + a.shape, a.dtype)
                                             for a in params["result_avals"]))
    outs = ffi_call_p.bind(*new, **params)
    return list(outs), [0] * len(outs)


# effectful: dead-code elimination keeps every call (an unused pure one costs a call, never
# a value); XLA itself may drop one without has_side_effect.
ffi_call_p = Primitive("ffi_call", abstract_eval=_abstract_eval, lower=_lower,
                       multiple_results=True, effectful=True, jvp=_jvp, batch=_batch,
                       sharding_rule=replicated_results)  # JAX 0.10.2's result types


def _result_avals(result_shape_dtypes):
    many = isinstance(result_shape_dtypes, Sequence)
    items = list(result_shape_dtypes) if many else [result_shape_dtypes]
    avals = []
    for x in items:
        if not (hasattr(x, "shape") and hasattr(x, "dtype")):
            raise TypeError(f"ffi_call: result_shape_dtypes must be an object with .shape and "
                            f".dtype (e.g. jax.ShapeDtypeStruct) or a sequence of them, got "
                            f"{x!r}")
        avals.append(ShapedArray(tuple(x.shape), dtypes.canonicalize_dtype(x.dtype)))
    return tuple(avals), many


def _row_major(layouts, what):
    if layouts is None:
        return
    for layout in layouts if isinstance(layouts, (list, tuple)) else [layouts]:
        if layout is not None and tuple(layout) != tuple(range(len(tuple(layout)))):
            raise NotImplementedError(f"ffi_call: {what}={layouts!r}: only row-major "
                                      "layouts (None) are supported")


def ffi_call(target_name, result_shape_dtypes, *deprecated_args, has_side_effect=False,
             vmap_method=None, input_layouts=None, output_layouts=None,
             input_output_aliases=None, custom_call_api_version=4, legacy_backend_config=None,
             **deprecated_kwargs):
    """A function calling the registered FFI target ``target_name``: ``f(*arrays,
    **attributes)`` returns arrays of ``result_shape_dtypes`` (a tuple or list when that is
    one, as JAX)."""
    if deprecated_args or deprecated_kwargs:
        raise TypeError("ffi_call: pass the arguments to the function ffi_call returns: "
                        "ffi_call(target_name, result_shape_dtypes)(*args, **attributes)")
    if not isinstance(target_name, str):
        raise TypeError(f"ffi_call: target_name must be a string, got {target_name!r}")
    if vmap_method is not None and vmap_method not in VMAP_METHODS:
        raise ValueError(f"ffi_call: vmap_method must be one of {VMAP_METHODS} or None, got "
                         f"{vmap_method!r}")
    if custom_call_api_version != 4 or legacy_backend_config is not None:
        raise NotImplementedError(
            f"ffi_call: custom_call_api_version={custom_call_api_version!r} / "
            "legacy_backend_config: pyjax calls typed FFI targets (api version 4) only")
    if input_output_aliases:
        raise NotImplementedError("ffi_call: input_output_aliases is not supported yet")
    _row_major(input_layouts, "input_layouts")
    _row_major(output_layouts, "output_layouts")
    result_avals, many = _result_avals(result_shape_dtypes)

    def call(*args, **kwargs):
        for i, a in enumerate(args):
            aval_of(a)  # raises TypeError for what is not an array
        outs = ffi_call_p.bind(*args, target_name=target_name, result_avals=result_avals,
                               has_side_effect=bool(has_side_effect),
                               attributes=_attributes(kwargs), vmap_method=vmap_method)
        if not many:
            return outs[0]
        return tuple(outs) if isinstance(result_shape_dtypes, tuple) else list(outs)
    call.__name__ = f"ffi_call_{target_name}"
    return call


# ---- lowering rules for user primitives ----------------------------------------------------

def build_ffi_lowering_function(call_target_name, *, operand_layouts=None,
                                result_layouts=None, backend_config=None,
                                skip_ffi_layout_processing=False, **lowering_args):
    """``lower(ctx, *operands, **params)`` emitting the custom call of ``call_target_name``,
    the params as its attributes (added to ``backend_config``, a dict); returns its values."""
    _row_major(operand_layouts, "operand_layouts")
    _row_major(result_layouts, "result_layouts")
    if backend_config is not None and not isinstance(backend_config, dict):
        raise NotImplementedError("ffi_lowering: backend_config must be a dict of attributes "
                                  "(a string is the legacy custom-call API)")
    has_side_effect = bool(lowering_args.pop("has_side_effect", False))
    if lowering_args:
        raise NotImplementedError(f"ffi_lowering: options {sorted(lowering_args)}")
    base = dict(backend_config or {})

    def lower(ctx, *operands, **params):
        return custom_call(ctx, call_target_name, operands, ctx.avals_out,
                           _attributes({**base, **params}), has_side_effect)
    return lower


def ffi_lowering(call_target_name, **kwargs):
    """A lowering rule for a user primitive (``jax.extend.core.Primitive``) that calls the FFI
    target ``call_target_name``; install it with ``jax.interpreters.mlir.register_lowering``
    (its params become attributes)."""
    build = build_ffi_lowering_function(call_target_name, **kwargs)

    def rule(ctx, *operands, **params):
        out = build(ctx, *operands, **params)
        return out if len(ctx.avals_out) != 1 else out[0]
    rule._pyjax_lower_fun = True  # a pyjax-native rule: register_lowering installs it as is
    return rule
