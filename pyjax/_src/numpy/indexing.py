"""NumPy indexing on pyjax arrays: ``x[idx]``, ``x.at[idx].set(y)`` and friends, ``take``.

An index is parsed once into a list of entries (slices, new axes, integers, integer arrays;
boolean masks become integer arrays on the host) and then lowered the cheapest way:

- only static ints and slices: ``lax.rev`` + ``lax.slice`` + ``lax.squeeze`` (+ a reshape for
  ``None``), as JAX does, so small Jaxprs stay small;
- scalar traced ints on top of that: ``lax.dynamic_slice``;
- anything else: one ``lax.gather`` (``x[idx]``) or one ``lax.scatter*`` (``.at[idx]``).

For gather/scatter every operand dimension is either a *window* (a slice with step 1: a window
starting at a static offset) or *collapsed* (indexed by integers or integer arrays, or by a
strided slice turned into an arange). The batch dimensions of the indices are the advanced
index's broadcast shape (placed where NumPy puts it) plus one per strided slice, so the output
and update layouts come straight out of XLA's dimension numbers without transposes.

Out-of-bounds indices: ``x[idx]`` clamps (JAX's promise-in-bounds default); updates through
``.at`` drop them (fill-or-drop default); ``take`` fills (NaN, minimum int, ...).
"""
from __future__ import annotations

import operator
import warnings

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.config import config
from pyjax._src.core.errors import NonConcreteBooleanIndexError
from pyjax._src.core.trace import Tracer
from pyjax._src.lax import elementwise as lax_ew
from pyjax._src.lax import shape_ops as lax_shape
from pyjax._src.lax import slicing as lax_slicing
from pyjax._src.core.axes import canonicalize_axis
from pyjax._src.lax import base as lax_base
from pyjax._src.lax.base import aval_of
from pyjax._src.lax.slicing import GatherScatterMode
from pyjax._src.numpy import key_arrays
from pyjax._src.numpy.eager_compiled import compiled_when_eager

__all__ = ["take", "take_along_axis"]


# ---- parsing an index ----

class _Entry:
    """One parsed index entry.

    kind: "slice" (dim, start, stop, step, size), "new", "int" (dim, static value),
    "dyn" (dim, 0-d device/traced value), "array" (dim, host or device int array),
    "bool" (a static bool scalar: an advanced index of shape (1,) or (0,) on no dimension).
    """
    __slots__ = ("kind", "dim", "value", "start", "step", "size")

    def __init__(self, kind, dim=None, value=None, start=0, step=1, size=0):
        self.kind, self.dim, self.value = kind, dim, value
        self.start, self.step, self.size = start, step, size

    @property
    def advanced(self):
        return self.kind in ("int", "dyn", "array", "bool")

    def adv_shape(self):
        if self.kind == "bool":
            return (1,) if self.value else (0,)
        if self.kind in ("int", "dyn"):
            return ()
        return tuple(np.shape(self.value)) if isinstance(self.value, np.ndarray) else \
            tuple(self.value.shape)


class Slice:
    """A slice of ``size`` elements every ``stride`` from ``start``, where ``start`` may be
    traced (``jax.ds``): ``x[ds(i, 2)]`` is ``x[i:i + 2]`` for a dynamic ``i``. As
    ``lax.dynamic_slice``, a start that would run past the end is moved back so that the slice
    has its ``size`` elements."""

    __slots__ = ("start", "size", "stride")

    def __init__(self, start, size, stride=1):
        size, stride = operator.index(size), operator.index(stride)
        if size < 0 or stride < 1:
            raise ValueError(f"Slice: size must be >= 0 and stride >= 1, got size={size}, "
                             f"stride={stride}")
        self.start, self.size, self.stride = start, size, stride

    def __repr__(self):
        return f"Slice(start={self.start!r}, size={self.size}, stride={self.stride})"

    def __eq__(self, other):
        if type(other) is not Slice or (self.size, self.stride) != (other.size, other.stride):
            return False
        return self.start is other.start or (type(self.start) is int and
                                             type(other.start) is int and
                                             self.start == other.start)

    def __hash__(self):
        return hash((self.start if isinstance(self.start, int) else id(self.start),
                     self.size, self.stride))


def ds(start, size=None, stride=None):
    """``jax.ds``: ``ds(None)`` is ``:``, ``ds(j)`` is ``:j``, ``ds(i, n)`` is ``i:i+n`` and
    ``ds(i, n, k)`` is ``i:i+n:k`` (``n`` elements), with ``i`` possibly traced."""
    if size is None:
        if start is None:
            return slice(None)
        return Slice(0, start, 1 if stride is None else stride)
    return Slice(start, size, 1 if stride is None else stride)


def _consumed_dims(i):
    """How many dimensions of the indexed array the index item ``i`` consumes (-1: the
    ellipsis)."""
    if i is None:
        return 0
    if i is Ellipsis:
        return -1
    if isinstance(i, (bool, np.bool_)):
        return 0
    if hasattr(i, "dtype") and dtypes.is_bool(np.dtype(i.dtype)):
        return np.ndim(i)
    if isinstance(i, (list, tuple)):  # a list of bools is a mask
        a = np.asarray(i)
        return a.ndim if a.dtype == np.bool_ else 1
    return 1


def _dynamic_window(arr, idx):
    """For an index holding ``Slice`` entries: ``(window, index, starts)`` where ``window`` is
    the ``lax.dynamic_slice`` of ``arr`` covering every Slice, ``index`` the index into it
    (each Slice a static strided slice) and ``starts`` the window's start indices. ``None``
    when there is no Slice."""
    items = idx if isinstance(idx, tuple) else (idx,)
    if not any(type(i) is Slice for i in items):
        return None
    shape = aval_of(arr).shape
    counts = [_consumed_dims(i) for i in items]
    rest = len(shape) - sum(c for c in counts if c > 0)
    starts, sizes, new, dim = [0] * len(shape), list(shape), [], 0
    for i, c in zip(items, counts):
        if type(i) is Slice:
            if dim >= len(shape):
                raise IndexError(f"Too many indices for an array of shape {shape}")
            starts[dim] = i.start
            sizes[dim] = (i.size - 1) * i.stride + 1 if i.size else 0
            new.append(slice(None, None, i.stride))
        else:
            new.append(i)
        dim += rest if c < 0 else c
    window = lax_shape.dynamic_slice(arr, starts, sizes)
    return window, tuple(new), starts


def _is_device_value(x):
    return isinstance(x, Tracer) or (hasattr(x, "aval") and not isinstance(x, type)
                                     and not isinstance(x, (np.ndarray, np.generic)))


def _concrete_or_none(x):
    """Host value of a device array or a tracer with a known value, else None."""
    if isinstance(x, Tracer):
        v = x.to_concrete_value()
        return None if v is None else np.asarray(v)
    return np.asarray(x)


def _list_to_index(seq):
    try:
        arr = np.asarray(seq)
    except Exception:  # noqa: BLE001 - tracers inside the list; built with lax below
        arr = None
    if arr is not None and arr.dtype != object:
        if arr.size == 0 and not (dtypes.is_integer(arr.dtype) or dtypes.is_bool(arr.dtype)):
            arr = arr.astype(np.int32)  # NumPy reads `x[[]]` as an empty integer index
        return arr
    items = list(seq)
    if any(isinstance(e, (slice, type(None), type(Ellipsis))) or isinstance(e, (list, tuple))
           for e in items):
        raise TypeError("Using a non-tuple sequence for multidimensional indexing is not "
                        f"allowed; use `arr[tuple(seq)]` instead of `arr[seq]`. Got {seq!r}.")
    dt = dtypes.result_type(*items)
    parts = [lax_shape.reshape(lax_ew.convert_element_type(e, dt), (1,)) for e in items]
    return lax_shape.concatenate(parts, 0)


def _bad_index_type(i, pos):
    if isinstance(i, (float, complex, np.floating, np.complexfloating)) or (
            hasattr(i, "dtype") and not (dtypes.is_integer(np.dtype(i.dtype))
                                         or dtypes.is_bool(np.dtype(i.dtype)))):
        dt = getattr(i, "dtype", type(i).__name__)
        return TypeError(f"Indexer must have integer or boolean type, got indexer with type {dt} "
                         f"at position {pos}, indexer value {i!r}")
    return TypeError(f"Indexer of type {type(i).__name__} is not supported: only integers, "
                     "slices (`:`), ellipsis (`...`), None and integer or boolean arrays are "
                     f"valid indices (got {i!r} at position {pos}).")


def _static_bound(v, what):
    if v is None:
        return None
    if isinstance(v, Tracer) and v.to_concrete_value() is None:
        raise IndexError(
            f"Array slice indices must have static start/stop/step to be used with NumPy "
            f"indexing syntax. Found slice {what} = {v!r}. To index a statically sized array at "
            "a dynamic position, try lax.dynamic_slice / lax.dynamic_update_slice (JAX does not "
            "support dynamically sized arrays within JIT compiled functions).")
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"slice indices must be integers or None, got {v!r}") from None


def _parse_index(shape, idx):
    """Parse ``idx`` for an array of ``shape`` into a list of _Entry (ellipsis expanded)."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    items = []  # ("ellipsis" | "slice" | "new" | "int" | "dyn" | "array" | "bool" | "mask", v)
    for pos, i in enumerate(idx):
        if i is None:
            items.append(("new", None))
        elif i is Ellipsis:
            items.append(("ellipsis", None))
        elif isinstance(i, slice):
            items.append(("slice", i))
        elif isinstance(i, (bool, np.bool_)):
            items.append(("bool", bool(i)))
        elif isinstance(i, (int, np.integer)):
            if type(i) is int:
                _check_python_int_index(i)
            items.append(("int", int(i)))
        else:
            if isinstance(i, (list, tuple)):
                i = _list_to_index(i)
            if isinstance(i, (np.ndarray, np.generic)):
                i = np.asarray(i)
                if dtypes.is_bool(i.dtype):
                    items.append(("bool", bool(i)) if i.ndim == 0 else ("mask", i))
                elif dtypes.is_integer(i.dtype):
                    items.append(("int", int(i)) if i.ndim == 0 else ("array", i))
                else:
                    raise _bad_index_type(i, pos)
            elif _is_device_value(i):
                dt = aval_of(i).dtype
                if dtypes.is_bool(dt):
                    v = _concrete_or_none(i)
                    if v is None:
                        raise NonConcreteBooleanIndexError(aval_of(i).str_short())
                    items.append(("bool", bool(v)) if v.ndim == 0 else ("mask", v))
                elif dtypes.is_integer(dt):
                    items.append(("dyn" if aval_of(i).ndim == 0 else "array", i))
                else:
                    raise _bad_index_type(i, pos)
            else:
                raise _bad_index_type(i, pos)
    n_ell = sum(k == "ellipsis" for k, _ in items)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 if k in ("slice", "int", "dyn", "array") else
                   (np.ndim(v) if k == "mask" else 0) for k, v in items)
    ndim = len(shape)
    if consumed > ndim:
        raise IndexError(f"Too many indices: {ndim}-dimensional array indexed with {consumed} "
                         "regular indices.")
    if n_ell == 0:
        items.append(("ellipsis", None))
    entries, dim = [], 0
    for k, v in items:
        if k == "ellipsis":
            for _ in range(ndim - consumed):
                entries.append(_slice_entry(dim, shape[dim], slice(None)))
                dim += 1
        elif k == "new":
            entries.append(_Entry("new"))
        elif k == "bool":
            entries.append(_Entry("bool", value=v))
        elif k == "slice":
            entries.append(_slice_entry(dim, shape[dim], v))
            dim += 1
        elif k == "mask":
            mshape = shape[dim:dim + v.ndim]
            if v.ndim == 1 and v.size == 0 and tuple(mshape) != (0,):
                # an empty 1-d mask selects nothing, like an empty integer index (NumPy, JAX)
                entries.append(_Entry("array", dim, np.zeros((0,), np.int32)))
                dim += 1
                continue
            if tuple(v.shape) != tuple(mshape):
                bad = next(j for j in range(v.ndim) if v.shape[j] != mshape[j])
                raise IndexError(f"boolean index did not match indexed array along axis "
                                 f"{dim + bad}; size of axis is {mshape[bad]} but size of "
                                 f"corresponding boolean axis is {v.shape[bad]}")
            for j, nz in enumerate(np.nonzero(v)):
                entries.append(_Entry("array", dim + j, nz))
            dim += v.ndim
        else:
            entries.append(_Entry(k, dim, v))
            dim += 1
    return entries


def _slice_entry(dim, n, s):
    start, stop, step = (_static_bound(s.start, "start"), _static_bound(s.stop, "stop"),
                         _static_bound(s.step, "step"))
    if step == 0:
        raise ValueError("slice step cannot be zero")
    start, stop, step = slice(start, stop, step).indices(n)
    size = len(range(start, stop, step))
    return _Entry("slice", dim, None, start if size else 0, step if size > 1 else 1, size)


# ---- index values ----

def _index_dtype(values):
    """int32, or int64 (with x64 on) when an index needs it."""
    if not config.jax_enable_x64:
        return np.dtype(np.int32)
    for v in values:
        if isinstance(v, np.ndarray):
            if v.size and (v.max() > np.iinfo(np.int32).max or v.min() < np.iinfo(np.int32).min):
                return np.dtype(np.int64)
        elif isinstance(v, int):
            if not np.iinfo(np.int32).min <= v <= np.iinfo(np.int32).max:
                return np.dtype(np.int64)
        else:
            dt = aval_of(v).dtype
            if dt.itemsize == 8 or dt == np.uint32:
                return np.dtype(np.int64)
    return np.dtype(np.int32)


def _normalize(value, n, dtype):
    """Negative indices count from the end: ``i + n`` where ``i < 0``; cast to ``dtype``."""
    if isinstance(value, (int, np.ndarray)):
        v = np.asarray(value)
        v = np.where(v < 0, v + n, v) if dtypes.is_signed(v.dtype) else v
        info = np.iinfo(dtype)
        return np.asarray(np.clip(v, info.min, info.max), dtype)  # beyond range: still OOB
    src = aval_of(value).dtype
    if src != dtype:
        value = lax_ew.convert_element_type(value, dtype)
    if dtypes.is_signed(src) and n:
        neg = lax_ew.lt(value, np.zeros((), dtype)[()])
        value = lax_ew.select(neg, lax_ew.add(value, np.asarray(n, dtype)[()]), value)
    return value


# ---- the static / dynamic-slice fast path ----

def _static_slices(arr, entries):
    """Apply the static slices of ``entries`` with rev + slice."""
    shape = arr.shape
    rev_dims, starts, limits, strides = [], [0] * len(shape), list(shape), [1] * len(shape)
    changed = False
    for e in entries:
        if e.kind == "slice":
            n = shape[e.dim]
            if e.step < 0:
                rev_dims.append(e.dim)
                start = n - 1 - e.start
            else:
                start = e.start
            step = abs(e.step)
            starts[e.dim], strides[e.dim] = start, step
            limits[e.dim] = start + (e.size - 1) * step + 1 if e.size else start
            changed |= (starts[e.dim], limits[e.dim], step) != (0, n, 1)
    if rev_dims:
        arr = lax_shape.rev(arr, tuple(rev_dims))
    if changed:
        arr = lax_shape.slice(arr, tuple(starts), tuple(limits),
                              None if all(s == 1 for s in strides) else tuple(strides))
    return arr


def _check_int_dims(shape, entries):
    for e in entries:
        if e.kind in ("int", "dyn") and shape[e.dim] == 0:
            raise IndexError(f"index is out of bounds for axis {e.dim} with size 0")


def _slice_path(arr, entries):
    """Basic indexing without gather. With integer indices (static or traced) JAX's approach:
    one ``dynamic_slice`` whose starts are operands, so ``x[i]`` for many values of ``i`` shares
    one executable; strided or reversed slices go first through ``rev`` + ``slice``."""
    shape = arr.shape
    _check_int_dims(shape, entries)
    ints = [e for e in entries if e.kind in ("int", "dyn")]
    if ints:
        arr = _static_slices(arr, [e for e in entries if e.kind == "slice" and e.step != 1])
        starts, sizes = [0] * len(shape), list(arr.shape)
        for e in entries:
            if e.kind == "slice" and e.step == 1:
                starts[e.dim], sizes[e.dim] = e.start, e.size
            elif e.kind in ("int", "dyn"):  # negative starts count from the end, then clamp
                starts[e.dim], sizes[e.dim] = e.value, 1
        arr = lax_shape.dynamic_slice(arr, starts, sizes)
        arr = lax_shape.squeeze(arr, tuple(e.dim for e in ints))
    else:
        arr = _static_slices(arr, entries)
    if any(e.kind == "new" for e in entries):
        out_shape = []
        for e in entries:
            if e.kind == "new":
                out_shape.append(1)
            elif e.kind == "slice":
                out_shape.append(e.size)
        arr = lax_shape.reshape(arr, tuple(out_shape))
    return arr


# ---- gather / scatter lowering of a general index ----

class _Plan:
    """Dimension numbers and index components for one gather/scatter."""

    def __init__(self, shape, entries):
        adv = [e for e in entries if e.advanced]
        adv_shapes = [e.adv_shape() for e in adv]
        self.adv_shape = _broadcast_shapes(adv_shapes)
        adv_pos = [i for i, e in enumerate(entries) if e.advanced]
        contiguous = bool(adv_pos) and adv_pos == list(range(adv_pos[0], adv_pos[-1] + 1))
        # The output layout: a list of ("B",) | ("new",) | ("win", entry) | ("stride", entry).
        tokens = []
        if adv_pos and not contiguous:
            tokens.append(("B",))
        for i, e in enumerate(entries):
            if e.advanced:
                if contiguous and i == adv_pos[0]:
                    tokens.append(("B",))
            elif e.kind == "new":
                tokens.append(("new",))
            elif e.step == 1:
                tokens.append(("win", e))
            else:
                tokens.append(("stride", e))
        self.out_shape, self.gs_shape, self.window_positions, batch_shape = [], [], [], []
        stride_batch_pos, b_batch_pos = {}, None
        for t in tokens:
            if t[0] == "new":
                self.out_shape.append(1)
                continue
            if t[0] == "B":
                b_batch_pos = len(batch_shape)
                dims = list(self.adv_shape)
                batch_shape.extend(dims)
            elif t[0] == "stride":
                stride_batch_pos[id(t[1])] = len(batch_shape)
                dims = [t[1].size]
                batch_shape.append(t[1].size)
            else:
                self.window_positions.append(len(self.gs_shape))
                dims = [t[1].size]
            self.out_shape.extend(dims)
            self.gs_shape.extend(dims)
        self.out_shape, self.gs_shape = tuple(self.out_shape), tuple(self.gs_shape)
        self.batch_shape = tuple(batch_shape)
        nb = len(self.adv_shape)
        # components: (operand dim, value (host int array or device array), batch dims it
        # varies along (its dims map to these batch positions, right-aligned for advanced)).
        self.components = []
        self.collapsed, self.slice_sizes = [], list(shape)
        for e in entries:
            if e.kind in ("int", "dyn", "array"):
                vshape = e.adv_shape()
                bdims = tuple(range(b_batch_pos + nb - len(vshape), b_batch_pos + nb))
                self.components.append((e.dim, e.value, bdims, vshape))
                self.collapsed.append(e.dim)
                self.slice_sizes[e.dim] = 1
            elif e.kind == "slice" and e.step != 1:
                vals = e.start + e.step * np.arange(e.size, dtype=np.int64)
                self.components.append((e.dim, vals, (stride_batch_pos[id(e)],), (e.size,)))
                self.collapsed.append(e.dim)
                self.slice_sizes[e.dim] = 1
            elif e.kind == "slice":
                self.slice_sizes[e.dim] = e.size
                if e.start != 0:
                    self.components.append((e.dim, e.start, (), ()))
        self.collapsed.sort()

    def indices(self, shape):
        """The indices array (batch_shape + (k,)) and the operand dims of its k components."""
        comps = self.components
        dt = _index_dtype([c[1] for c in comps])
        host, dev = [], []
        normalized = [(d, _normalize(v, shape[d], dt), bdims, vshape)
                      for d, v, bdims, vshape in comps]
        any_dev = any(not isinstance(c[1], np.ndarray) for c in normalized)
        for c in normalized:
            # with device components, static scalars are cheaper as broadcast literals
            on_host = isinstance(c[1], np.ndarray) and not (any_dev and c[1].ndim == 0)
            (host if on_host else dev).append(c)
        parts, dims = [], []
        if host:
            cols = []
            for d, v, bdims, vshape in host:
                # v's dims sit at batch positions bdims; size-1 dims broadcast
                full = np.reshape(v, [vshape[bdims.index(i)] if i in bdims else 1
                                      for i in range(len(self.batch_shape))])
                cols.append(np.broadcast_to(full, self.batch_shape))
                dims.append(d)
            parts.append(np.stack(cols, axis=-1).astype(dt))
        for d, v, bdims, vshape in dev:
            if isinstance(v, np.ndarray):
                v = v[()]
            tgt = self.batch_shape + (1,)
            keep = [i for i, b in enumerate(bdims) if vshape[i] == self.batch_shape[b]]
            if len(keep) != len(vshape):
                v = lax_shape.reshape(v, tuple(vshape[i] for i in keep))
            parts.append(lax_shape.broadcast_in_dim(v, tgt, tuple(bdims[i] for i in keep)))
            dims.append(d)
        if len(parts) == 1:
            return parts[0], tuple(dims)
        if not dev:
            return parts[0], tuple(dims)
        return lax_shape.concatenate(parts, len(self.batch_shape)), tuple(dims)


def _broadcast_shapes(shapes):
    try:
        return tuple(np.broadcast_shapes(*shapes)) if shapes else ()
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with "
                         f"shapes {' '.join(str(s) for s in shapes)}") from None


def _zeros(shape, dtype, weak=False):
    z = lax_shape.broadcast_in_dim(np.zeros((), dtype), tuple(shape), ())
    if weak:
        z = lax_ew.convert_element_type(z, dtype, weak_type=True)
    return z


def _check_empty_dims(shape, plan):
    if 0 in plan.gs_shape:
        return True
    for d in plan.collapsed:
        if shape[d] == 0:
            raise IndexError(f"index is out of bounds for axis {d} with size 0")
    return False


def _gather(arr, entries, *, indices_are_sorted, unique_indices, mode, fill_value):
    shape = arr.shape
    plan = _Plan(shape, entries)
    if _check_empty_dims(shape, plan):
        return _zeros(plan.out_shape, arr.dtype, aval_of(arr).weak_type)
    if not plan.components:  # only full windows (and bool scalars): a broadcast
        out = lax_shape.broadcast_in_dim(arr, plan.gs_shape, tuple(plan.window_positions))
    else:
        indices, dims = plan.indices(shape)
        dnums = lax_slicing.GatherDimensionNumbers(
            offset_dims=tuple(plan.window_positions), collapsed_slice_dims=tuple(plan.collapsed),
            start_index_map=dims)
        out = lax_slicing.gather(arr, indices, dnums, tuple(plan.slice_sizes),
                                 indices_are_sorted=indices_are_sorted,
                                 unique_indices=unique_indices, mode=mode, fill_value=fill_value)
    if plan.out_shape != plan.gs_shape:
        out = lax_shape.reshape(out, plan.out_shape)
    return out


def rewriting_take(arr, idx, *, indices_are_sorted=False, unique_indices=False, mode=None,
                   fill_value=None):
    """``arr[idx]`` with NumPy semantics (out-of-bounds integer indices are clamped unless
    ``mode`` says otherwise)."""
    arr = _as_array(arr)
    win = _dynamic_window(arr, idx)
    if win is not None:
        arr, idx = win[0], win[1]
    entries = _parse_index(arr.shape, idx)
    parsed = (GatherScatterMode.PROMISE_IN_BOUNDS if mode is None
              else GatherScatterMode.from_any(mode))
    has_adv = any(e.kind in ("array", "bool") for e in entries)
    if not has_adv and (parsed != GatherScatterMode.FILL_OR_DROP
                        or not any(e.kind in ("int", "dyn") for e in entries)):
        if all(e.kind == "slice" and (e.start, e.step, e.size) == (0, 1, arr.shape[e.dim])
               for e in entries):
            return arr
        return _slice_path(arr, entries)
    # Static slices first (rev + slice), so the gather only sees full windows.
    sliced = [e for e in entries if e.kind == "slice"]
    arr = _static_slices(arr, sliced)
    for e in sliced:
        e.start, e.step = 0, 1
    return _gather(arr, entries, indices_are_sorted=indices_are_sorted,
                   unique_indices=unique_indices, mode=parsed, fill_value=fill_value)


def getitem(self, idx):
    """``Array.__getitem__`` / ``Tracer.__getitem__``."""
    return rewriting_take(self, idx)


def _as_array(x):
    if hasattr(x, "aval") or isinstance(x, (np.ndarray, np.generic)):
        return x
    if isinstance(x, (bool, int, float, complex)):
        return np.asarray(x, dtypes.python_scalar_dtype(x))
    raise TypeError(f"Expected an array, got {type(x).__name__}: {x!r}")


# ---- scatter (.at[] updates) ----

def _cast_updates(x, y):
    """Updates take the array's dtype; warn when that cast is unsafe (as JAX does)."""
    x_dt = aval_of(x).dtype
    if isinstance(y, (list, tuple)):
        y = np.asarray(y)
    if type(y) is int and dtypes.is_integer(x_dt):
        return np.asarray(lax_base.coerce_scalar(y, x_dt, wrap=True), x_dt)   # int8: 1000 -> -24
    if isinstance(y, (bool, int, float, complex)):
        return np.asarray(y).astype(x_dt) if isinstance(y, complex) and x_dt.kind != "c" \
            else np.asarray(y, x_dt)
    ya = aval_of(y)
    if ya.dtype != x_dt:
        if not ya.weak_type and dtypes.result_type(x_dt, ya.dtype) != x_dt:
            warnings.warn(f"scatter inputs have incompatible types: cannot safely cast value from "
                          f"dtype={ya.dtype.name} to dtype={x_dt.name}. In future JAX releases "
                          "this will result in an error.", FutureWarning, stacklevel=4)
        y = lax_ew.convert_element_type(y, x_dt)
    return y


def _broadcast_updates(y, shape):
    ys = tuple(np.shape(y)) if isinstance(y, np.ndarray) else tuple(y.shape)
    while len(ys) > len(shape) and ys[0] == 1:  # NumPy drops leading unit dims of the value
        ys = ys[1:]
        y = lax_shape.reshape(y, ys)
    if ys == tuple(shape):
        return y
    try:
        out = np.broadcast_shapes(ys, tuple(shape))
    except ValueError:
        out = None
    if out != tuple(shape):
        raise ValueError(f"Incompatible shapes for broadcasting: the update values of shape {ys} "
                         f"cannot be broadcast to the indexed shape {tuple(shape)}")
    lead = len(shape) - len(ys)
    keep = [i for i, d in enumerate(ys) if d == shape[lead + i]]
    if len(keep) != len(ys):
        y = lax_shape.reshape(y, tuple(ys[i] for i in keep))
    return lax_shape.broadcast_in_dim(y, tuple(shape), tuple(lead + i for i in keep))


def _scatter(x, idx, y, scatter_fn, *, indices_are_sorted=False, unique_indices=False,
             mode=None, apply_fn=None):
    x = _as_array(x)
    win = _dynamic_window(x, idx)
    if win is not None:  # update the window of the Slices, then put it back in place
        window, idx, starts = win
        new = _scatter(window, idx, y, scatter_fn, indices_are_sorted=indices_are_sorted,
                       unique_indices=unique_indices, mode=mode, apply_fn=apply_fn)
        return lax_shape.dynamic_update_slice(x, new, starts)
    shape = x.shape
    entries = _parse_index(shape, idx)
    _check_int_dims(shape, entries)
    plan = _Plan(shape, entries)
    if _check_empty_dims(shape, plan):
        return x
    if apply_fn is None:
        y = _broadcast_updates(_cast_updates(x, y), plan.out_shape)
        if plan.out_shape != plan.gs_shape:
            y = lax_shape.reshape(y, plan.gs_shape)
    if not plan.components:  # no index vector: scatter into a leading unit dimension
        x1 = lax_shape.reshape(x, (1,) + tuple(shape))
        comp = [(0, np.zeros((), np.int64), (), ())]
        plan.components, plan.collapsed = comp, [0]
        plan.slice_sizes = [1] + plan.slice_sizes
        indices, dims = plan.indices((1,) + tuple(shape))
        collapsed = (0,)
        operand, reshape_back = x1, True
    else:
        indices, dims = plan.indices(shape)
        collapsed = tuple(plan.collapsed)
        operand, reshape_back = x, False
    dnums = lax_slicing.ScatterDimensionNumbers(
        update_window_dims=tuple(plan.window_positions), inserted_window_dims=collapsed,
        scatter_dims_to_operand_dims=dims)
    # one index vector (only integers and slices, no index arrays) is trivially unique, as
    # JAX's indexer marks it: scatter_mul's gradient needs it
    unique_indices = unique_indices or not plan.batch_shape
    kw = dict(indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode)
    if apply_fn is not None:
        out = lax_slicing.scatter_apply(operand, indices, apply_fn, dnums,
                                        update_shape=plan.gs_shape, **kw)
    else:
        out = scatter_fn(operand, indices, y, dnums, **kw)
    return lax_shape.reshape(out, shape) if reshape_back else out


def _ones_like(x):
    av = aval_of(x)
    ones = lax_shape.broadcast_in_dim(np.ones((), av.dtype), tuple(av.shape), ())
    return lax_ew.convert_element_type(ones, av.dtype, True) if av.weak_type else ones


def _wider_scatter_dtype(x, y):
    """The dtype ``x`` and ``y`` promote to when it is wider than ``x``'s (else None)."""
    x_dt = aval_of(x).dtype
    if not dtypes.is_numeric(x_dt):
        return None
    if isinstance(y, (list, tuple)):
        y = np.asarray(y)
    y_dt = getattr(y, "dtype", None)
    if y_dt is not None and not dtypes.is_numeric(y_dt):
        return None
    wide = dtypes.result_type(x_dt, y)
    return None if wide == x_dt else wide


def _scatter_method(name, scatter_fn, doc):
    """The ``x.at[idx]`` method ``name``: ``values`` scattered into ``x`` by ``scatter_fn``.
    As JAX, an accumulating update whose values promote ``x`` (an int array, float values)
    is computed in the promoted dtype and cast back: ``x.at[[0, 0]].add(0.6)`` adds 1."""
    def method(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        x = _as_array(self.array)
        wide = None if name == "set" else _wider_scatter_dtype(x, values)
        kw = dict(indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                  mode=mode)
        if wide is None:
            return _scatter(x, self.index, values, scatter_fn, **kw)
        x_av = aval_of(x)
        y_dt = np.asarray(values).dtype if isinstance(values, (list, tuple)) else \
            dtypes.dtype_of(values)
        if not dtypes.is_weakly_typed(values):  # the warning _cast_updates gives for them
            warnings.warn(f"scatter inputs have incompatible types: cannot safely cast value "
                          f"from dtype={y_dt.name} to dtype={x_av.dtype.name}. In future "
                          "JAX releases this will result in an error.", FutureWarning,
                          stacklevel=2)
        out = _scatter(lax_ew.convert_element_type(x, wide), self.index, values, scatter_fn,
                       **kw)
        return lax_ew.convert_element_type(out, x_av.dtype, x_av.weak_type)
    method.__name__, method.__qualname__ = name, f"_IndexUpdateRef.{name}"
    method.__doc__ = doc
    return method


class _IndexUpdateRef:
    """``x.at[idx]``: functional, out-of-place versions of ``x[idx] op= y``."""

    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def __repr__(self):
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
            fill_value=None):
        """``x[idx]``; ``mode="fill"`` returns ``fill_value`` for out-of-bounds indices."""
        return rewriting_take(self.array, self.index, indices_are_sorted=indices_are_sorted,
                              unique_indices=unique_indices, mode=mode, fill_value=fill_value)

    set = _scatter_method("set", lax_slicing.scatter,
                          "``x[idx] = y``; out-of-bounds updates are dropped (``mode=\"clip\"`` "
                          "clamps).")
    add = _scatter_method("add", lax_slicing.scatter_add,
                          "``x[idx] += y``; repeated indices accumulate.")
    subtract = _scatter_method("subtract", lax_slicing.scatter_sub,
                               "``x[idx] -= y``; repeated indices accumulate.")
    multiply = mul = _scatter_method("multiply", lax_slicing.scatter_mul,
                                     "``x[idx] *= y``; repeated indices accumulate.")

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] /= y``: ``x / ones.at[idx].multiply(y)`` (true division, as in JAX)."""
        x = _as_array(self.array)
        dt = dtypes.to_inexact_dtype(aval_of(x).dtype)
        if dt != aval_of(x).dtype:
            x = lax_ew.convert_element_type(x, dt, aval_of(x).weak_type)
        denom = _scatter(_ones_like(x), self.index, values, lax_slicing.scatter_mul,
                         indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                         mode=mode)
        return lax_ew.div(x, denom)

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] **= y``: ``x ** ones.at[idx].multiply(y)``, as in JAX."""
        x = _as_array(self.array)
        expo = _scatter(_ones_like(x), self.index, values, lax_slicing.scatter_mul,
                        indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                        mode=mode)
        if dtypes.is_inexact(aval_of(x).dtype):
            return lax_ew.pow(x, expo)
        from pyjax._src.numpy import ufuncs
        return ufuncs.power(x, expo)

    min = _scatter_method("min", lax_slicing.scatter_min, "``x[idx] = minimum(x[idx], y)``.")
    max = _scatter_method("max", lax_slicing.scatter_max, "``x[idx] = maximum(x[idx], y)``.")

    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``func.at(x, idx)``: apply the unary ``func`` at the indexed places (once per
        occurrence of an index)."""
        return _scatter(self.array, self.index, None, None, indices_are_sorted=indices_are_sorted,
                        unique_indices=unique_indices, mode=mode, apply_fn=func)


class IndexUpdateHelper:
    """The object behind ``x.at``: ``x.at[idx]`` gives an :class:`_IndexUpdateRef`."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return _IndexUpdateRef(self.array, index)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.array!r})"


def at_property(self):
    """The ``Array.at`` / ``Tracer.at`` property: ``property(at_property)``."""
    return IndexUpdateHelper(self)


# ---- take / take_along_axis ----

def _take_mode(mode, fn):
    if mode is None or mode == "fill":
        return GatherScatterMode.FILL_OR_DROP
    if mode == "raise":
        raise NotImplementedError(f"The 'raise' mode to jnp.{fn} is not supported.")
    if mode == "wrap":
        return "wrap"
    return GatherScatterMode.from_any(mode)


def _check_python_int_index(i):
    """A Python int index converts as ``jnp.asarray(i)`` would: beyond the default int dtype
    (int32 without x64) it raises OverflowError, for reads and ``.at`` updates alike (else an
    update at 2**40 was silently dropped where the read raised)."""
    dt = dtypes.canonicalize_dtype(np.int64)
    if not np.iinfo(dt).min <= i <= np.iinfo(dt).max:
        raise OverflowError(f"Python int {i} too large to convert to {dt.name}")


def _int_indices(indices, fn):
    if isinstance(indices, (list, tuple)):
        indices = np.asarray(indices)
        if indices.size == 0:
            indices = indices.astype(np.int32)
    elif isinstance(indices, (int, np.integer)):
        if type(indices) is int:
            _check_python_int_index(indices)
        indices = np.asarray(indices)
    elif isinstance(indices, (bool, float, complex)):
        indices = np.asarray(indices)
    dt = aval_of(indices).dtype
    if not dtypes.is_integer(dt):
        raise TypeError(f"jnp.{fn} requires integer indices, got dtype {dt.name}")
    return indices


def _wrap_or_normalize(indices, n, mode, dt):
    if mode == "wrap":
        if isinstance(indices, np.ndarray):
            return np.mod(indices, n).astype(dt)
        i = _normalize(indices, 0, dt)
        r = lax_ew.rem(i, np.asarray(n, dt)[()])
        return lax_ew.select(lax_ew.lt(r, np.zeros((), dt)[()]),
                             lax_ew.add(r, np.asarray(n, dt)[()]), r)
    return _normalize(indices, n, dt)


@compiled_when_eager("axis", "out", "mode", "unique_indices", "indices_are_sorted", "fill_value")
def take(a, indices, axis=None, out=None, mode=None, unique_indices=False,
         indices_are_sorted=False, fill_value=None):
    """Take elements of ``a`` along ``axis`` (the flattened array when ``axis`` is None).

    JAX's out-of-bounds default is ``mode="fill"``: out-of-bounds indices give ``fill_value``
    (NaN for inexact types, the minimum signed / maximum unsigned integer, True for bool).
    ``"clip"`` clamps and ``"wrap"`` wraps around; ``"raise"`` is not supported.
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    if key_arrays.is_key_array(a):
        return key_arrays.take(a, indices, axis, mode, fill_value)
    a = _as_array(a)
    indices = _int_indices(indices, "take")
    if axis is None:
        a = lax_shape.reshape(a, (int(np.prod(a.shape, dtype=np.int64)),))
        axis = 0
    ndim = len(a.shape)
    axis = canonicalize_axis(axis, ndim, fun="take")
    gmode = _take_mode(mode, "take")
    n = a.shape[axis]
    ishape = tuple(np.shape(indices)) if isinstance(indices, np.ndarray) else indices.shape
    out_shape = a.shape[:axis] + tuple(ishape) + a.shape[axis + 1:]
    if int(np.prod(out_shape)) == 0:
        return _zeros(out_shape, aval_of(a).dtype, aval_of(a).weak_type)
    if n == 0:
        raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
    dt = _index_dtype([indices])
    # JAX and NumPy clamp negative indices to 0 in take's "clip" mode (no wrap from the end)
    idx = _wrap_or_normalize(indices, 0 if gmode == GatherScatterMode.CLIP else n, gmode, dt)
    if gmode == "wrap":
        gmode = GatherScatterMode.PROMISE_IN_BOUNDS
    idx = (np.expand_dims(idx, -1) if isinstance(idx, np.ndarray)
           else lax_shape.reshape(idx, tuple(ishape) + (1,)))
    k = len(ishape)
    dnums = lax_slicing.GatherDimensionNumbers(
        offset_dims=tuple(range(axis)) + tuple(range(axis + k, ndim - 1 + k)),
        collapsed_slice_dims=(axis,), start_index_map=(axis,))
    sizes = tuple(1 if d == axis else s for d, s in enumerate(a.shape))
    return lax_slicing.gather(a, idx, dnums, sizes, unique_indices=unique_indices,
                              indices_are_sorted=indices_are_sorted, mode=gmode,
                              fill_value=fill_value)


@compiled_when_eager("axis", "mode", "fill_value")
def take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None):
    """Take values from ``arr`` by matching 1-d index slices along ``axis`` (NumPy's
    ``take_along_axis``); the other dimensions of ``arr`` and ``indices`` broadcast.

    The default ``mode="fill"`` returns ``fill_value`` for out-of-bounds indices."""
    if key_arrays.is_key_array(arr):
        return key_arrays.take(arr, indices, axis, mode, fill_value, take_along=True)
    arr = _as_array(arr)
    indices = _int_indices(indices, "take_along_axis")
    ishape = tuple(np.shape(indices)) if isinstance(indices, np.ndarray) else indices.shape
    if axis is None:
        if len(ishape) != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        arr = lax_shape.reshape(arr, (int(np.prod(arr.shape, dtype=np.int64)),))
        axis = 0
    ndim = len(arr.shape)
    if len(ishape) != ndim:
        raise ValueError("indices and arr must have the same number of dimensions; "
                         f"{len(ishape)} vs. {ndim}")
    axis = canonicalize_axis(axis, ndim, fun="take_along_axis")
    gmode = _take_mode(mode, "take_along_axis")
    # Broadcast the non-axis dimensions of both operands.
    shp = []
    for d in range(ndim):
        if d == axis:
            shp.append(None)
            continue
        a, b = arr.shape[d], ishape[d]
        if a != b and a != 1 and b != 1:
            raise ValueError(f"Incompatible shapes for broadcasting: {arr.shape} and {ishape} "
                             f"(dimension {d})")
        shp.append(max(a, b) if 0 not in (a, b) else 0)
    arr_shape = tuple(arr.shape[d] if d == axis else shp[d] for d in range(ndim))
    idx_shape = tuple(ishape[d] if d == axis else shp[d] for d in range(ndim))
    if int(np.prod(idx_shape)) == 0:
        return _zeros(idx_shape, aval_of(arr).dtype, aval_of(arr).weak_type)
    n = arr.shape[axis]
    if n == 0:
        raise IndexError("Cannot do a non-empty jnp.take_along_axis() from an empty axis.")
    if arr_shape != tuple(arr.shape):
        arr = _bcast_to(arr, arr_shape)
    dt = _index_dtype([indices])
    idx = _wrap_or_normalize(indices, n, gmode, dt)
    if gmode == "wrap":
        gmode = GatherScatterMode.PROMISE_IN_BOUNDS
    if isinstance(idx, np.ndarray):
        idx = np.broadcast_to(idx, idx_shape)[..., None]
    else:
        if tuple(idx.shape) != idx_shape:
            idx = _bcast_to(idx, idx_shape)
        idx = lax_shape.reshape(idx, idx_shape + (1,))
    others = tuple(d for d in range(ndim) if d != axis)
    dnums = lax_slicing.GatherDimensionNumbers(
        offset_dims=(), collapsed_slice_dims=(axis,), start_index_map=(axis,),
        operand_batching_dims=others, start_indices_batching_dims=others)
    return lax_slicing.gather(arr, idx, dnums, (1,) * ndim, mode=gmode, fill_value=fill_value)


def _bcast_to(x, shape):
    xs = tuple(x.shape)
    keep = [i for i in range(len(xs)) if xs[i] == shape[i]]
    if len(keep) != len(xs):
        x = lax_shape.reshape(x, tuple(xs[i] for i in keep))
    return lax_shape.broadcast_in_dim(x, tuple(shape), tuple(keep))
