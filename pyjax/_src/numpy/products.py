"""Products of ``pyjax.numpy``: matmul, dot, vdot, vecdot, inner, outer, tensordot, einsum,
kron, cross, and the diagonal helpers (diagonal, trace, diag).

Every contraction lowers to one ``lax.dot_general``: ``matmul``'s broadcast batch dimensions
become dot_general batch dimensions (size-1 batch dimensions of one side are squeezed and
carried as free dimensions of the other, so nothing is materialized), and ``einsum`` contracts
its operands pairwise.
"""
from __future__ import annotations

import builtins
import math
import string

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.lax import dot as lax_dot
from pyjax._src.lax import elementwise as lax_ew
from pyjax._src.lax import reductions as lax_red
from pyjax._src.lax import shape_ops as lax_shape
from pyjax._src.numpy import reductions as jred
from pyjax._src.numpy import shape as jshape
from pyjax._src.numpy import util
from pyjax._src.numpy.eager_compiled import compiled_when_eager
from pyjax._src.numpy.shape import asarray, convert

__all__ = ["matmul", "dot", "vdot", "vecdot", "matvec", "vecmat", "inner", "outer",
           "tensordot", "einsum", "einsum_path", "kron", "cross", "diagonal", "trace"]

_max, _min = builtins.max, builtins.min


def _promote(fun, *args):
    util.check_arraylike(fun, *args)
    args = util.promote_dtypes(*[asarray(a) for a in args])
    return [asarray(a) for a in args]


def _pref(preferred_element_type, dt):
    if preferred_element_type is None:
        return dt
    return dtypes.check_user_dtype(preferred_element_type, "preferred_element_type")


def _dot_general(a, b, lc, rc, lb, rb, precision, out_dt, out_sharding=None, dot_fn=None):
    """``dot_fn``: einsum's ``_dot_general`` override, called as JAX's einsum calls it (out_sharding
    passed only when there is one)."""
    dims = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
    if dot_fn is not None and dot_fn is not lax_dot.dot_general:
        extra = {} if out_sharding is None else {"out_sharding": out_sharding}
        return dot_fn(a, b, dims, precision, preferred_element_type=out_dt, **extra)
    return lax_dot.dot_general(a, b, dims, precision=precision, preferred_element_type=out_dt,
                               out_sharding=out_sharding)


def _out_sharding(s, what):
    """``out_sharding=`` of a jnp function as a NamedSharding (None when it asks for nothing)."""
    from pyjax._src.core.sharding_rules import as_named_sharding
    return None if s is None else as_named_sharding(s, what)


def _permuted(sharding, perm):
    """The sharding whose dimension ``perm[i]`` is ``sharding``'s dimension ``i``."""
    if sharding is None:
        return None
    from pyjax._src.core.sharding import PartitionSpec
    spec = list(sharding.spec) + [None] * (len(perm) - len(sharding.spec))
    out = [None] * len(perm)
    for i, p in enumerate(perm):
        out[p] = spec[i]
    return sharding.update(spec=PartitionSpec(*out))


def _mul(a, b):
    """Elementwise product with broadcasting (logical and for bools)."""
    a, b = util.broadcast_arrays(*util.promote_dtypes(a, b))
    if dtypes.is_bool(util.dtype_of(a)):
        return lax_ew.bitwise_and(a, b)
    return lax_ew.mul(a, b)


def _conj(x):
    return lax_ew.conj(x) if dtypes.is_complex(util.dtype_of(x)) else x


# ---------------------------------------------------------------------------------------
# matmul and friends
# ---------------------------------------------------------------------------------------

def matmul(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """Matrix product with NumPy's rules: 1-D operands are vectors, leading dimensions are
    broadcast batch dimensions. ``out_sharding``: the result's sharding (explicit axes)."""
    out_sharding = _out_sharding(out_sharding, "matmul")
    out = _matmul(a, b, precision=precision, preferred_element_type=preferred_element_type,
                  out_sharding=out_sharding)
    return _place_if_eager(out, out_sharding)


def _place_if_eager(x, s):
    if s is None:
        return x
    from pyjax._src.core.sharding_rules import place_if_eager
    return place_if_eager(x, s)


@compiled_when_eager("precision", "preferred_element_type", "out_sharding")
def _matmul(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    a, b = _promote("matmul", a, b)
    for i, x in enumerate((a, b)):
        if x.ndim == 0:
            raise ValueError(f"matmul operand {i} must have ndim at least 1, but it has ndim 0")
    out_dt = _pref(preferred_element_type, a.dtype)
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    a_batch = a.shape[:-2] if not a_vec else ()
    b_batch = b.shape[:-2] if not b_vec else ()
    ka, kb = a.ndim - 1, (0 if b_vec else b.ndim - 2)
    if a.shape[ka] != b.shape[kb]:
        raise ValueError(f"matmul: contracting dimensions must match, got shapes {a.shape} and "
                         f"{b.shape} ({a.shape[ka]} != {b.shape[kb]})")
    nb = _max(len(a_batch), len(b_batch))
    a_off, b_off = nb - len(a_batch), nb - len(b_batch)
    lb, rb, a_sq, b_sq = [], [], [], []
    out_src = []  # for each output batch position: ("batch", k) | ("a", dim) | ("b", dim)
    for i in range(nb):
        ai = i - a_off if i >= a_off else None
        bi = i - b_off if i >= b_off else None
        sa = a_batch[ai] if ai is not None else 1
        sb = b_batch[bi] if bi is not None else 1
        if ai is not None and bi is not None and sa == sb:
            out_src.append(("batch", len(lb)))
            lb.append(ai)
            rb.append(bi)
        elif ai is not None and (bi is None or sb == 1):
            if bi is not None:
                b_sq.append(bi)
            out_src.append(("a", ai))
        elif bi is not None and (ai is None or sa == 1):
            if ai is not None:
                a_sq.append(ai)
            out_src.append(("b", bi))
        else:
            raise ValueError(f"Incompatible shapes for matmul arguments: {a.shape} and "
                             f"{b.shape}")
    if a_sq:
        a = jshape.squeeze(a, tuple(a_sq))
    if b_sq:
        b = jshape.squeeze(b, tuple(b_sq))
    # dimension numbers of the squeezed operands
    amap = [d for d in range(len(a_batch) + (1 if a_vec else 2)) if d not in a_sq]
    bmap = [d for d in range(len(b_batch) + (1 if b_vec else 2)) if d not in b_sq]
    ka_new, kb_new = amap.index(ka), bmap.index(kb)
    lb_new = [amap.index(d) for d in lb]
    rb_new = [bmap.index(d) for d in rb]
    # dot_general's output: batch dims, a's free dims (in order), b's free dims (in order)
    a_free = [d for d in amap if d not in lb and d != ka]
    b_free = [d for d in bmap if d not in rb and d != kb]
    pos = {("batch", k): k for k in range(len(lb))}
    for j, d in enumerate(a_free):
        pos[("a", d)] = len(lb) + j
    for j, d in enumerate(b_free):
        pos[("b", d)] = len(lb) + len(a_free) + j
    perm = [pos[s] for s in out_src]
    if not a_vec:
        perm.append(pos[("a", len(a_batch))])
    if not b_vec:
        perm.append(pos[("b", len(b_batch) + 1)])
    out = _dot_general(a, b, [ka_new], [kb_new], lb_new, rb_new, precision, out_dt,
                       _permuted(out_sharding, perm))
    if perm != list(range(len(perm))):
        out = lax_shape.transpose(out, tuple(perm))
    return out


def dot(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """NumPy's ``dot``: scalars multiply; otherwise contract the last axis of ``a`` with the
    second-to-last of ``b`` (the only axis when ``b`` is 1-D)."""
    out_sharding = _out_sharding(out_sharding, "dot")
    out = _dot(a, b, precision=precision, preferred_element_type=preferred_element_type,
               out_sharding=out_sharding)
    return _place_if_eager(out, out_sharding)


@compiled_when_eager("precision", "preferred_element_type", "out_sharding")
def _dot(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    a, b = _promote("dot", a, b)
    out_dt = _pref(preferred_element_type, a.dtype)
    if a.ndim == 0 or b.ndim == 0:
        if out_sharding is not None:
            raise NotImplementedError("jnp.dot: out_sharding with a scalar operand")
        return convert(_mul(a, b), out_dt)
    kb = 0 if b.ndim == 1 else b.ndim - 2
    if a.shape[-1] != b.shape[kb]:
        # TypeError as JAX's (its dot_general shape rule raises it)
        raise TypeError(f"dot: shapes {a.shape} and {b.shape} not aligned: "
                         f"{a.shape[-1]} (dim {a.ndim - 1}) != {b.shape[kb]} (dim {kb})")
    return _dot_general(a, b, [a.ndim - 1], [kb], [], [], precision, out_dt, out_sharding)


@compiled_when_eager("precision", "preferred_element_type")
def vdot(a, b, *, precision=None, preferred_element_type=None):
    """Dot product of the flattened arrays, conjugating ``a``."""
    a, b = _promote("vdot", a, b)
    a, b = jshape.ravel(a), jshape.ravel(b)
    if a.shape != b.shape:
        raise ValueError(f"vdot: arrays must have the same number of elements, got {a.size} "
                         f"and {b.size}")
    return dot(_conj(a), b, precision=precision, preferred_element_type=preferred_element_type)


@compiled_when_eager("axis", "precision", "preferred_element_type")
def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """Vector dot product along ``axis`` (conjugating ``x1``), broadcasting the others."""
    x1, x2 = _promote("vecdot", x1, x2)
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError("vecdot requires arrays with at least one dimension")
    ax1 = util.canonicalize_axis(axis, x1.ndim, fun="vecdot")
    ax2 = util.canonicalize_axis(axis, x2.ndim, fun="vecdot")
    if x1.shape[ax1] != x2.shape[ax2]:
        raise ValueError(f"vecdot: axes must have equal sizes, got shapes {x1.shape} and "
                         f"{x2.shape} along axis {axis}")
    x1 = jshape.moveaxis(x1, ax1, -1)
    x2 = jshape.moveaxis(x2, ax2, -1)
    batch = util.broadcast_shapes(x1.shape[:-1], x2.shape[:-1])
    x1 = util.broadcast_to(x1, batch + x1.shape[-1:])
    x2 = util.broadcast_to(x2, batch + x2.shape[-1:])
    nb = len(batch)
    out_dt = _pref(preferred_element_type, x1.dtype)
    return _dot_general(_conj(x1), x2, [nb], [nb], range(nb), range(nb), precision, out_dt)


@compiled_when_eager()
def matvec(x1, x2, /):
    """Batched matrix-vector product: ``x1[..., m, n] @ x2[..., n]``."""
    x1, x2 = _promote("matvec", x1, x2)
    return jshape.squeeze(matmul(x1, jshape.expand_dims(x2, -1)), -1)


@compiled_when_eager()
def vecmat(x1, x2, /):
    """Batched vector-matrix product: ``conj(x1[..., m]) @ x2[..., m, n]``."""
    x1, x2 = _promote("vecmat", x1, x2)
    return jshape.squeeze(matmul(jshape.expand_dims(_conj(x1), -2), x2), -2)


@compiled_when_eager("precision", "preferred_element_type")
def inner(a, b, *, precision=None, preferred_element_type=None):
    """Contract the last axis of ``a`` with the last axis of ``b``."""
    a, b = _promote("inner", a, b)
    out_dt = _pref(preferred_element_type, a.dtype)
    if a.ndim == 0 or b.ndim == 0:
        return convert(_mul(a, b), out_dt)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"inner: last dimensions must match, got shapes {a.shape} and "
                         f"{b.shape}")
    return _dot_general(a, b, [a.ndim - 1], [b.ndim - 1], [], [], precision, out_dt)


@compiled_when_eager("out")
def outer(a, b, out=None):
    """Outer product of the flattened inputs: shape ``(a.size, b.size)``."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.outer is not supported.")
    a, b = _promote("outer", a, b)
    a, b = jshape.ravel(a), jshape.ravel(b)
    shape = (a.shape[0], b.shape[0])
    return _mul(lax_shape.broadcast_in_dim(a, shape, (0,)),
                lax_shape.broadcast_in_dim(b, shape, (1,)))


@compiled_when_eager("axes", "precision", "preferred_element_type")
def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    """Sum products over ``axes``: an int ``N`` (last N of ``a``, first N of ``b``) or a pair
    of axis sequences."""
    a, b = _promote("tensordot", a, b)
    out_dt = _pref(preferred_element_type, a.dtype)
    if not isinstance(axes, (list, tuple, str)) and hasattr(axes, "__index__"):
        n = util.index(axes, "axes", "tensordot")
        if n < 0 or n > _min(a.ndim, b.ndim):
            raise TypeError(f"Number of tensordot axes (axes {n}) exceeds input ranks "
                            f"({a.shape} and {b.shape})")
        ca, cb = list(range(a.ndim - n, a.ndim)), list(range(n))
    elif isinstance(axes, (list, tuple)) and len(axes) == 2:
        ax_a, ax_b = axes
        ca = list(util.canonicalize_axes(ax_a, a.ndim, "axes", "tensordot", allow_none=False))
        cb = list(util.canonicalize_axes(ax_b, b.ndim, "axes", "tensordot", allow_none=False))
        if len(ca) != len(cb):
            raise TypeError("tensordot requires axes lists to have equal length, got "
                            f"{ax_a} and {ax_b}.")
    else:
        raise TypeError("tensordot axes argument must be an int or a pair of sequences of "
                        f"ints, got {axes!r}")
    for i, j in zip(ca, cb):
        if a.shape[i] != b.shape[j]:
            raise ValueError(f"tensordot: shape mismatch on contracted axes: {a.shape} axis "
                             f"{i} vs {b.shape} axis {j}")
    return _dot_general(a, b, ca, cb, [], [], precision, out_dt)


@compiled_when_eager()
def kron(a, b):
    """Kronecker product: blocks of ``b`` scaled by each element of ``a``."""
    a, b = _promote("kron", a, b)
    nd = _max(a.ndim, b.ndim)
    a = jshape.reshape(a, (1,) * (nd - a.ndim) + a.shape)
    b = jshape.reshape(b, (1,) * (nd - b.ndim) + b.shape)
    inter = []
    for da, db in zip(a.shape, b.shape):
        inter += [da, db]
    inter = tuple(inter)
    ab = lax_shape.broadcast_in_dim(a, inter, tuple(range(0, 2 * nd, 2)))
    bb = lax_shape.broadcast_in_dim(b, inter, tuple(range(1, 2 * nd, 2)))
    return lax_shape.reshape(_mul(ab, bb), tuple(x * y for x, y in zip(a.shape, b.shape)))


@compiled_when_eager("axisa", "axisb", "axisc", "axis")
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 2- or 3-vectors along the given axes (broadcasting the others)."""
    a, b = _promote("cross", a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a = jshape.moveaxis(a, util.canonicalize_axis(axisa, a.ndim, "axisa", "cross"), -1)
    b = jshape.moveaxis(b, util.canonicalize_axis(axisb, b.ndim, "axisb", "cross"), -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("incompatible dimensions for cross product (dimension must be 2 or 3),"
                         f" got {a.shape[-1]} and {b.shape[-1]}")
    comp = lambda x, i: lax_shape.index_in_dim(x, i, x.ndim - 1, keepdims=False)  # noqa: E731
    a0, a1 = comp(a, 0), comp(a, 1)
    b0, b1 = comp(b, 0), comp(b, 1)
    a2 = comp(a, 2) if a.shape[-1] == 3 else None
    b2 = comp(b, 2) if b.shape[-1] == 3 else None

    def sub(x, y):
        x, y = util.broadcast_arrays(x, y)
        return lax_ew.sub(x, y)
    z = sub(_mul(a0, b1), _mul(a1, b0))
    if a2 is None and b2 is None:
        return z
    zero = lambda: convert(np.zeros((), a.dtype), a.dtype)  # noqa: E731
    a2 = zero() if a2 is None else a2
    b2 = zero() if b2 is None else b2
    x = sub(_mul(a1, b2), _mul(a2, b1))
    y = sub(_mul(a2, b0), _mul(a0, b2))
    x, y, z = jshape.broadcast_arrays(x, y, z)
    out = jshape.stack([x, y, z], axis=-1)
    return jshape.moveaxis(out, -1, util.canonicalize_axis(axisc, out.ndim, "axisc", "cross"))


# ---------------------------------------------------------------------------------------
# diagonals
# ---------------------------------------------------------------------------------------

def _diag_last2(x, offset=0):
    """The ``offset`` diagonal of the last two axes of ``x`` (moved to the end), as a strided
    slice of the flattened matrix: no gather needed."""
    r, c = x.shape[-2:]
    lead = x.shape[:-2]
    if offset >= 0:
        x = lax_shape.slice_in_dim(x, _min(offset, c), c, 1, x.ndim - 1)
    else:
        x = lax_shape.slice_in_dim(x, _min(-offset, r), r, 1, x.ndim - 2)
    r, c = x.shape[-2:]
    n = _min(r, c)
    if n == 0:
        return lax_shape.reshape(lax_shape.slice_in_dim(
            lax_shape.reshape(x, lead + (r * c,)), 0, 0, 1, len(lead)), lead + (0,))
    flat = lax_shape.reshape(x, lead + (r * c,))
    nd = len(lead) + 1
    start = (0,) * nd
    limit = lead + ((n - 1) * (c + 1) + 1,)
    strides = (1,) * len(lead) + (c + 1,)
    return lax_shape.slice(flat, start, limit, strides)


@compiled_when_eager("offset", "axis1", "axis2")
def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal of ``a`` over ``axis1``/``axis2``, appended as the last axis."""
    util.check_arraylike("diagonal", a)
    a = asarray(a)
    if a.ndim < 2:
        raise ValueError(f"diagonal requires an array of at least two dimensions, got shape "
                         f"{a.shape}")
    i = util.canonicalize_axis(axis1, a.ndim, "axis1", "diagonal")
    j = util.canonicalize_axis(axis2, a.ndim, "axis2", "diagonal")
    if i == j:
        raise ValueError(f"diagonal: axis1 and axis2 cannot be the same, got {axis1} and "
                         f"{axis2}")
    offset = jshape.static_int(offset, "diagonal offset")
    rest = [d for d in range(a.ndim) if d not in (i, j)]
    x = jshape.transpose(a, rest + [i, j])
    return _diag_last2(x, offset)


@compiled_when_eager("offset", "axis1", "axis2", "dtype", "out")
def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum along a diagonal (sum's dtype rules: small ints accumulate in the default int)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.trace is not supported.")
    d = diagonal(a, offset, axis1, axis2)
    return jred.sum(d, axis=-1, dtype=dtype)


# ---------------------------------------------------------------------------------------
# einsum
# ---------------------------------------------------------------------------------------

def _operand_list_to_subscripts(args):
    """``einsum(a, [0, 1], b, [1, 2], [0, 2])`` -> ``("ab,bc->ac", [a, b])``."""
    letters = string.ascii_letters

    def term(sub):
        out = ""
        for s in sub:
            if s is Ellipsis:
                out += "..."
            else:
                s = int(s)
                if not 0 <= s < len(letters):
                    raise ValueError(f"einsum: subscript {s} out of range [0, {len(letters)})")
                out += letters[s]
        return out
    args = list(args)
    ops, terms = [], []
    while len(args) >= 2:
        ops.append(args.pop(0))
        terms.append(term(args.pop(0)))
    expr = ",".join(terms)
    if args:
        expr += "->" + term(args[0])
    return expr, ops


def _parse(subscripts, shapes):
    """Parse into per-operand label lists and the output labels. Ellipsis dimensions get
    labels of their own (non-letter characters), right-aligned across operands."""
    s = subscripts.replace(" ", "")
    if "->" in s:
        lhs, rhs = s.split("->")
        explicit = True
    else:
        lhs, rhs, explicit = s, None, False
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: {len(terms)} operand subscripts given for {len(shapes)} "
                         "operands")
    ell_rank = 0
    for t, shp in zip(terms, shapes):
        if "..." in t:
            ell_rank = _max(ell_rank, len(shp) - (len(t) - 3))
    ell = [chr(0x2460 + i) for i in range(ell_rank)]  # labels for ellipsis dimensions
    ins = []
    for i, (t, shp) in enumerate(zip(terms, shapes)):
        if t.count("...") > 1 or ("." in t.replace("...", "")):
            raise ValueError(f"einsum: invalid ellipsis in subscripts {t!r}")
        for ch in t.replace("...", ""):
            if ch not in string.ascii_letters:
                raise ValueError(f"einsum: invalid subscript {ch!r} in {subscripts!r}; "
                                 "subscripts must be letters")
        if "..." in t:
            pre, post = t.split("...")
            k = len(shp) - len(pre) - len(post)
            if k < 0:
                raise ValueError(f"einsum: operand {i} has {len(shp)} dimensions, fewer than "
                                 f"its subscripts {t!r}")
            labels = list(pre) + ell[ell_rank - k:] + list(post)
        else:
            labels = list(t)
        if len(labels) != len(shp):
            raise ValueError(f"einsum: operand {i} has {len(shp)} dimensions but its "
                             f"subscripts {t!r} name {len(labels)}")
        ins.append(labels)
    if explicit:
        if rhs.count("...") > 1:
            raise ValueError("einsum: invalid ellipsis in output subscripts")
        if "..." in rhs:
            pre, post = rhs.split("...")
            out = list(pre) + ell + list(post)
        else:
            out = list(rhs)
        for ch in rhs.replace("...", ""):
            if ch not in string.ascii_letters:
                raise ValueError(f"einsum: invalid output subscript {ch!r}")
        if len(set(out)) != len(out):
            raise ValueError(f"einsum: output subscript repeated in {rhs!r}")
        all_labels = {c for t in ins for c in t}
        for ch in out:
            if ch not in all_labels:
                raise ValueError(f"einsum: output subscript {ch!r} does not appear in the "
                                 "inputs")
    else:
        counts = {}
        for t in ins:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out = ell + sorted(c for c, n in counts.items() if n == 1 and c not in ell)
    return ins, out


def _label_sizes(ins, shapes):
    sizes = {}
    for i, (labels, shp) in enumerate(zip(ins, shapes)):
        for c, d in zip(labels, shp):
            prev = sizes.get(c)
            if prev is None or prev == 1:
                sizes[c] = d
            elif d != 1 and d != prev:
                name = "..." if not c.isalpha() or c not in string.ascii_letters else c
                raise ValueError(f"einsum: size of label {name!r} for operand {i} ({d}) does "
                                 f"not match previous terms ({prev})")
    return sizes


def _prepare_operand(x, labels, sizes, keep):
    """Take diagonals of repeated labels, drop size-1 broadcast dimensions and sum out labels
    that no one else needs (``keep``: labels needed later)."""
    # repeated labels: diagonal
    while True:
        seen = {}
        dup = None
        for pos, c in enumerate(labels):
            if c in seen:
                dup = (seen[c], pos)
                break
            seen[c] = pos
        if dup is None:
            break
        i, j = dup
        rest = [d for d in range(len(labels)) if d not in (i, j)]
        x = _diag_last2(jshape.transpose(x, rest + [i, j]))
        labels = [labels[d] for d in rest] + [labels[i]]
    # size-1 dimensions broadcast against larger ones elsewhere
    sq = [d for d, c in enumerate(labels) if x.shape[d] == 1 and sizes[c] != 1]
    if sq:
        x = jshape.squeeze(x, tuple(sq))
        labels = [c for d, c in enumerate(labels) if d not in sq]
    # labels only this operand has
    red = [d for d, c in enumerate(labels) if c not in keep]
    if red:
        x = _sum_axes(x, red)
        labels = [c for d, c in enumerate(labels) if d not in red]
    return x, labels


def _sum_axes(x, axes):
    if dtypes.is_bool(util.dtype_of(x)):
        return lax_red.reduce_or(x, tuple(axes))
    return lax_red.reduce_sum(x, tuple(axes))


def _contract(a, la, b, lb, keep, precision, out_dt, out_spec=None, dot_fn=None):
    """Contract two prepared operands; labels in ``keep`` survive. ``out_spec``: (sharding,
    output labels) of the einsum's result, for its last contraction."""
    shared = [c for c in la if c in lb]
    batch = [c for c in shared if c in keep]
    contract = [c for c in shared if c not in keep]
    lbatch = [la.index(c) for c in batch]
    rbatch = [lb.index(c) for c in batch]
    lc = [la.index(c) for c in contract]
    rc = [lb.index(c) for c in contract]
    labels = batch + [c for c in la if c not in shared] + [c for c in lb if c not in shared]
    sharding = None
    if out_spec is not None:
        s, out_labels = out_spec
        if set(labels) != set(out_labels):
            raise NotImplementedError("jnp.einsum: out_sharding where the last contraction's "
                                      "result is not the output (repeated or broadcast labels)")
        sharding = _permuted(s, [labels.index(c) for c in out_labels])
    out = _dot_general(a, b, lc, rc, lbatch, rbatch, precision, out_dt, sharding, dot_fn)
    return out, labels


def _pick_pair(ops, labels, keep_out, greedy):
    if not greedy or len(ops) <= 2:
        return 0, 1
    best = None
    for i in range(len(ops)):
        for j in range(i + 1, len(ops)):
            others = {c for k, ls in enumerate(labels) if k not in (i, j) for c in ls}
            keep = others | set(keep_out)
            res = {c for c in labels[i] + labels[j] if c in keep}
            size = math.prod(_label_size(ops, labels, c) for c in res)
            if best is None or size < best[0]:
                best = (size, i, j)
    return best[1], best[2]


def _label_size(ops, labels, c):
    for x, ls in zip(ops, labels):
        if c in ls:
            return x.shape[ls.index(c)]
    return 1


# opt_einsum's strategy names, which JAX's einsum takes; each gives the same values here
# (contraction order changes only rounding), so pyjax contracts greedily for all of them.
_OPTIMIZE_NAMES = ("auto", "auto-hq", "optimal", "greedy", "eager", "opportunistic", "dp",
                   "dynamic-programming", "branch-all", "branch-2", "branch-1",
                   "random-greedy", "random-greedy-128", "none")


def _check_optimize(optimize):
    if optimize is None or isinstance(optimize, (bool, list, tuple)):  # a list: a path
        return
    if not isinstance(optimize, str) or optimize not in _OPTIMIZE_NAMES:
        raise ValueError(f"einsum: optimize must be a bool, a contraction path or one of "
                         f"{list(_OPTIMIZE_NAMES)}, got {optimize!r}")


def einsum(subscripts, /, *operands, out=None, optimize="auto", precision=None,
           preferred_element_type=None, out_sharding=None, _dot_general=None):
    """Einstein summation: ``einsum("ij,jk->ik", a, b)``; implicit output, ``...`` ellipsis,
    repeated subscripts (diagonals) and the operand-list form are supported. Operands are
    contracted pairwise with ``lax.dot_general`` (greedily by result size unless
    ``optimize=False``), or with ``_dot_general`` when given (JAX's private override, which
    flax's attention passes)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.einsum is not supported.")
    out_sharding = _out_sharding(out_sharding, "einsum")
    _check_optimize(optimize)
    if not isinstance(subscripts, str):
        subscripts, operands = _operand_list_to_subscripts((subscripts,) + operands)
    if not operands:
        raise ValueError("einsum requires at least one operand")
    util.check_arraylike("einsum", *operands)
    ops = [asarray(x) for x in operands]
    ops = [asarray(x) for x in util.promote_dtypes(*ops)] if len(ops) > 1 else ops
    dt = util.dtype_of(ops[0])
    out_dt = _pref(preferred_element_type, dt)
    ins, out_labels = _parse(subscripts, [x.shape for x in ops])
    sizes = _label_sizes(ins, [x.shape for x in ops])
    # prepare each operand: labels needed by the output or any other operand are kept
    prepared, labels = [], []
    for k, (x, ls) in enumerate(zip(ops, ins)):
        others = {c for j, t in enumerate(ins) if j != k for c in t}
        x, ls = _prepare_operand(x, ls, sizes, others | set(out_labels))
        prepared.append(x)
        labels.append(ls)
    greedy = optimize not in (False, None, "none")
    while len(prepared) > 1:
        i, j = _pick_pair(prepared, labels, out_labels, greedy)
        others = {c for k, ls in enumerate(labels) if k not in (i, j) for c in ls}
        keep = others | set(out_labels)
        # labels of one side only that no one needs: sum them before the contraction
        a, la = prepared[i], labels[i]
        b, lb = prepared[j], labels[j]
        a, la = _prepare_operand(a, la, sizes, keep | set(lb))
        b, lb = _prepare_operand(b, lb, sizes, keep | set(la))
        last = out_sharding is not None and len(prepared) == 2
        res, lr = _contract(a, la, b, lb, keep, precision, out_dt,
                            (out_sharding, out_labels) if last else None, _dot_general)
        prepared = [x for k, x in enumerate(prepared) if k not in (i, j)] + [res]
        labels = [x for k, x in enumerate(labels) if k not in (i, j)] + [lr]
    res, lr = prepared[0], labels[0]
    res, lr = _prepare_operand(res, lr, sizes, set(out_labels))
    # output labels whose only occurrences were broadcast (size-1) dimensions
    missing = [c for c in out_labels if c not in lr]
    if missing:
        shape = [1 if c in missing else res.shape[lr.index(c)] for c in out_labels]
        keep_dims = [k for k, c in enumerate(out_labels) if c not in missing]
        order = [lr.index(out_labels[k]) for k in keep_dims]
        if order != list(range(len(order))):
            res = lax_shape.transpose(res, tuple(order))
        res = lax_shape.reshape(res, tuple(shape))
    else:
        perm = [lr.index(c) for c in out_labels]
        if perm != list(range(len(perm))):
            res = lax_shape.transpose(res, tuple(perm))
    if out_sharding is not None and len(ops) == 1:
        raise NotImplementedError("jnp.einsum: out_sharding with one operand")
    return _place_if_eager(convert(res, out_dt), out_sharding)


def einsum_path(subscripts, *operands, optimize="greedy"):
    """The pairwise contraction order :func:`einsum` would use, as ``(path, description)``."""
    if not isinstance(subscripts, str):
        subscripts, operands = _operand_list_to_subscripts((subscripts,) + operands)
    shapes = [np.shape(x) for x in operands]
    ins, out_labels = _parse(subscripts, shapes)
    labels = [list(t) for t in ins]
    dummies = [np.empty(s, dtype=np.bool_) for s in shapes]
    path = []
    while len(labels) > 1:
        i, j = _pick_pair(dummies, labels, out_labels, optimize not in (False, None))
        path.append((i, j))
        merged = [c for c in labels[i] + labels[j]]
        keep = {c for k, ls in enumerate(labels) if k not in (i, j) for c in ls}
        keep |= set(out_labels)
        merged = list(dict.fromkeys(c for c in merged if c in keep))
        shape = tuple(_label_size(dummies, labels, c) for c in merged)
        dummies = [x for k, x in enumerate(dummies) if k not in (i, j)] + [
            np.empty(shape, np.bool_)]
        labels = [x for k, x in enumerate(labels) if k not in (i, j)] + [merged]
    return ["einsum_path"] + path, f"pairwise contraction of {subscripts!r}"
