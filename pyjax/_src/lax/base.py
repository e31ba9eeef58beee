"""Shared pieces for declaring primitives: dtype checks, shape rules, operand coercion."""
from __future__ import annotations

import weakref

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.trace import Tracer, aval_of  # noqa: F401 (aval_of: for the lax modules)
from pyjax._src.lowering import mlir

# dtype kinds a primitive accepts: f=real floating, c=complex, i=signed int, u=unsigned, b=bool
_KIND_NAMES = {"f": "floating", "c": "complex", "i": "signed integer", "u": "unsigned integer",
               "b": "bool"}


def kind(dt) -> str:
    if dtypes.is_bool(dt):
        return "b"
    if dtypes.is_complex(dt):
        return "c"
    if dtypes.is_floating(dt):
        return "f"
    if dtypes.is_unsigned(dt):
        return "u"
    if dtypes.is_integer(dt):
        return "i"
    return "?"


def check_kinds(name, avals, kinds):
    for a in avals:
        if kind(a.dtype) not in kinds:
            allowed = ", ".join(_KIND_NAMES[k] for k in kinds)
            raise TypeError(f"{name} does not accept dtype {a.dtype.name}. Accepted dtypes are "
                            f"subtypes of {allowed}.")


def check_same_dtypes(name, avals):
    first = avals[0].dtype
    for a in avals[1:]:
        if a.dtype != first:
            got = ", ".join(b.dtype.name for b in avals)
            raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got {got}. "
                            f"(Tip: jnp.{name} is a similar function that does automatic type "
                            "promotion on inputs).")


# The dtype kinds a Python scalar may take when it meets a strongly typed operand in lax: an int
# may become any number, a float any inexact number, a complex only a complex number. Anything
# else would change its value silently (lax.add(x_int32, 1.5) is not x + 1), so lax refuses it.
_SCALAR_TARGET_KINDS = ((bool, ""), (complex, "c"), (float, "fc"), (int, "iufc"))


def check_scalar_fits(name, x, dtype, tip=True):
    """Raise JAX's TypeError when the Python scalar ``x`` cannot take ``dtype`` (the dtype of
    the other operand of the lax function ``name``) without losing its value."""
    for t, kinds in _SCALAR_TARGET_KINDS:
        if isinstance(x, t):
            if kind(dtype) not in kinds:
                raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                                f"{np.dtype(dtype).name}, {dtypes.python_scalar_dtype(x).name} "
                                f"(the Python scalar {x!r})." + (
                                    f" (Tip: jnp.{name} is a similar function that does "
                                    "automatic type promotion on inputs)." if tip else ""))
            return


def broadcasting_shape(name, avals):
    """Elementwise ops take equal shapes; rank-0 operands broadcast implicitly."""
    shape = None
    for a in avals:
        if a.shape == ():
            continue
        if shape is None:
            shape = a.shape
        elif a.shape != shape:
            shapes = ", ".join(str(b.shape) for b in avals)
            raise TypeError(f"{name} got incompatible shapes for broadcasting: {shapes}.")
    return () if shape is None else shape


def all_weak(avals):
    return all(a.weak_type for a in avals)


def is_python_scalar(x):
    return type(x) in (int, float, complex) or (
        isinstance(x, (int, float, complex)) and not isinstance(x, (bool, np.generic)))


def coerce_scalar(x, dtype, wrap=False):
    """A Python scalar as a value of ``dtype``: stays a (weak) Python scalar when ``dtype`` is
    the natural weak dtype of int/float/complex, else becomes a NumPy scalar of ``dtype``.

    ``wrap``: jnp's promotion (JAX's rule): a Python int that fits the weak int dtype wraps
    around into a narrower integer ``dtype``; lax callers keep the range check."""
    dtype = np.dtype(dtype)
    t = type(x)
    if t in (int, float, complex):
        if dtypes.python_scalar_dtype(x) == dtype:
            return x
        if t is not complex and dtypes.python_scalar_dtype(0.0) == dtype:
            return float(x)
        if dtypes.python_scalar_dtype(0j) == dtype:
            return complex(x)
    if dtypes.is_integer(dtype) and isinstance(x, (int, np.integer)):
        if t is int and wrap:
            # JAX: a Python int is first a weak int32 (int64 under x64), so it must fit that,
            # then it converts to the narrower dtype with wrap-around (int8: 200 -> -56)
            weak = np.dtype(dtypes.python_scalar_dtype(0))
            info = np.iinfo(weak)
            if not info.min <= x <= info.max:
                raise OverflowError(f"Python int {x} too large to convert to {weak.name}")
            return np.asarray(x, weak).astype(dtype)[()]
        info = np.iinfo(dtype)
        if not info.min <= int(x) <= info.max:
            raise OverflowError(f"Python int {x} too large to convert to {dtype.name}")
    return np.asarray(x, dtype)[()]


def broadcast_operand_lowering(ctx, x, shape):
    """Broadcast a rank-0 SSA value to ``shape`` (no-op when shapes already agree)."""
    if x.aval.shape == tuple(shape):
        return x
    aval = x.aval.update(shape=shape)
    return ctx.op("stablehlo.broadcast_in_dim", [x], aval,
                  attrs={"broadcast_dimensions": mlir.i64_array([])})


def zeros_like_value(ctx, aval):
    return ctx.constant(np.zeros((), aval.dtype), ShapedArray((), aval.dtype))


def compare_type(dt) -> str:
    if dtypes.is_inexact(dt):
        return "FLOAT"
    if dtypes.is_unsigned(dt) or dtypes.is_bool(dt):
        return "UNSIGNED"
    return "SIGNED"


def compare(ctx, x, y, direction, out_aval=None, ctype=None):
    out_aval = out_aval or ShapedArray(x.aval.shape, np.bool_)
    return ctx.op("stablehlo.compare", [x, y], out_aval, attrs={
        "comparison_direction": f"#stablehlo<comparison_direction {direction}>",
        "compare_type": f"#stablehlo<comparison_type {ctype or compare_type(x.aval.dtype)}>"})


def is_tracer(x):
    return isinstance(x, Tracer)


def host_call(ctx, fn, operands, out_avals, *, side_effect=True, key=None,
              borrow_args=False):
    """Emit a call of the Python function ``fn(*numpy arrays) -> list of arrays`` from the
    program (through the plugin's FFI: ``runtime/ffi.py``; ``key`` and ``borrow_args``: see
    ``ffi.register_target``). Host callbacks use it with ``side_effect``; pure host kernels
    (LAPACK through NumPy) without, so XLA may drop an unused one."""
    from pyjax._src import runtime
    runtime.ffi.ensure_registered(runtime.get_client()._api)
    ident = runtime.ffi.register_target(fn, [(v.aval.dtype, v.aval.shape) for v in operands],
                                        [(a.dtype, a.shape) for a in out_avals], key=key,
                                        borrow_args=borrow_args)
    attrs = {"call_target_name": f'"{runtime.ffi.TARGET.decode()}"',
             "api_version": "4 : i32",
             "has_side_effect": "true" if side_effect else "false", "backend_config": "{}"}

    def emit(block, args):
        id_val = block.constant(np.int64(ident), ShapedArray((), np.dtype(np.int64)))
        return block.op("stablehlo.custom_call", [id_val, *args], list(out_avals), attrs=attrs)
    from pyjax._src.lax import collective_lowering as cl
    if side_effect and cl.partitioned_by_xla():  # once, on the whole operands (as JAX)
        return cl.on_whole_operands(ctx.block, operands, out_avals, emit)
    return emit(ctx.block, operands)


# ---- values known to be transposes of others, per lowered module ----
# An XLA transpose of a 512² float32 matrix costs 0.6 ms on this CPU (a third of a getrf), one
# of 128² 10-30 us: host kernels that can read a matrix in either layout ask whether their
# operand is noted as the transpose of another value and read that one in place (``lu``'s
# factor for ``triangular_solve``, a transposed operand of ``cholesky``), and transposing a
# noted value gives its original back. Notes come from the transpose lowering (every swap of
# the last two axes) and from kernels that return both layouts' worth of information.
# Module -> {id(value): (value, block, source)}; the entry holds the value, so its id cannot be
# reused while the entry lives.
_transpose_sources = weakref.WeakKeyDictionary()


def note_transpose_of(ctx, value, source):
    """Record that ``value`` (lowered in ``ctx.block``) is ``source`` with its last two axes
    swapped."""
    _transpose_sources.setdefault(ctx.module, {})[id(value)] = (value, ctx.block, source)


def transpose_source(ctx, value):
    """The value whose last two axes swapped give ``value``, when noted in this block."""
    entry = _transpose_sources.get(ctx.module, {}).get(id(value))
    if entry is not None and entry[0] is value and entry[1] is ctx.block:
        return entry[2]
    return None
