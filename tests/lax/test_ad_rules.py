"""The JVP and transpose rules of the structural, reduction, dot, gather/scatter and sort
primitives, generated from the primitive registry, with a completeness check over all of it.

* Every primitive with a JVP rule: the rule's tangent against central finite differences of
  the primitive itself, in float64 (the rule is called directly, under ``jit``).
* Every linear primitive: its transpose rule against the dot-product identity
  ``<T(ct), x> == <ct, L(x)>``.
* Completeness over the registry (tests/lax/test_registry.py) reads ``JVP_TESTED`` and
  ``TRANSPOSE_TESTED`` from here.

The oracles are NumPy and finite differences. Shapes are few so that executables are shared.
"""
import numpy as np
import pytest

import pyjax
from pyjax._src.core import dtypes
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.primitive import registry
from pyjax._src.core.rules import UndefinedPrimal, Zero
from pyjax._src.lax.slicing import GatherDimensionNumbers as GDN
from pyjax._src.lax.slicing import GatherScatterMode as GSM
from pyjax._src.lax.slicing import ScatterDimensionNumbers as SDN
from pyjax.test_util import check_grads

RNG = np.random.default_rng(0)
I32 = np.int32


def normal(*shape):
    return RNG.normal(size=shape)


def distinct(*shape):
    """Values far enough apart that max/sort choices don't flip under finite differences."""
    n = int(np.prod(shape))
    return (RNG.permutation(n) * 0.37 - n * 0.15).reshape(shape) + 0.01 * normal(*shape)


def idx(*vals):
    """Int32 indices: a scalar for one int, else the array of the given rows."""
    return np.asarray(vals[0] if len(vals) == 1 and np.ndim(vals[0]) == 0 else vals, I32)


class Case:
    """``prim`` applied to ``args`` (float64 arrays are differentiated, integer ones are not).

    ``linear``: groups of argument numbers to transpose with together; the other float
    arguments are held at zero (jointly linear primitives) or at their values (``bilinear``).
    ``tangents``: the arguments given a tangent (default: every float argument).
    ``linear_params``: the params of the linear map that the transpose rule is checked on.
    """

    def __init__(self, prim, args, params=None, *, linear=(), bilinear=False, tangents=None,
                 eps=1e-6, tol=1e-6, name="", linear_params=None):
        self.prim, self.args, self.params = prim, [np.asarray(a) for a in args], params or {}
        self.linear_params = self.params if linear_params is None else linear_params
        self.linear, self.bilinear, self.eps, self.tol = linear, bilinear, eps, tol
        floats = [i for i, a in enumerate(self.args) if np.issubdtype(a.dtype, np.inexact)]
        self.floats = floats
        self.tangents = floats if tangents is None else list(tangents)
        self.id = f"{prim}{'-' + name if name else ''}"

    def __repr__(self):
        return self.id


_take = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
_put = SDN(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
_batched_take = GDN(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,),
                    operand_batching_dims=(0,), start_indices_batching_dims=(0,))


def _gather(mode, fill=None, unique=False):
    return dict(dimension_numbers=_take, slice_sizes=(1, 4), indices_are_sorted=False,
                unique_indices=unique, mode=mode, fill_value=fill)


def _scatter(mode=GSM.FILL_OR_DROP, unique=False):
    return dict(dimension_numbers=_put, indices_are_sorted=False, unique_indices=unique,
                mode=mode)


def _dot(lc, rc, lb=(), rb=(), pref=None):
    return dict(dimension_numbers=((lc, rc), (lb, rb)), precision=None,
                preferred_element_type=pref, out_sharding=None)


def _with_zeros(x, *positions):
    x = x.copy()
    for p in positions:
        x[p] = 0.0
    return x


_dup = idx([0], [3], [0])          # repeated row 0
_oob = idx([1], [7], [3])          # row 7 is out of bounds for 5 rows
_uniq = idx([4], [0], [2])
F = GSM.FILL_OR_DROP

CASES = [
    Case("broadcast_in_dim", [normal(3, 1)], dict(shape=(2, 3, 4), broadcast_dimensions=(1, 2),
                                                  sharding=None), linear=[(0,)]),
    Case("reshape", [normal(3, 4)], dict(new_sizes=(2, 6), dimensions=None, sharding=None),
         linear=[(0,)]),
    Case("reshape", [normal(3, 4)], dict(new_sizes=(2, 6), dimensions=(1, 0), sharding=None),
         linear=[(0,)], name="dimensions"),
    Case("squeeze", [normal(3, 1, 4)], dict(dimensions=(1,)), linear=[(0,)]),
    Case("transpose", [normal(2, 3, 4)], dict(permutation=(2, 0, 1)), linear=[(0,)]),
    Case("rev", [normal(3, 4)], dict(dimensions=(0, 1)), linear=[(0,)]),
    Case("slice", [normal(3, 4)], dict(start_indices=(0, 1), limit_indices=(3, 4),
                                       strides=(2, 2)), linear=[(0,)]),
    Case("slice", [normal(3, 4)], dict(start_indices=(1, 0), limit_indices=(3, 3),
                                       strides=None), linear=[(0,)], name="unstrided"),
    # Starts (1, 2) with sizes (2, 3) clamp to (1, 1).
    Case("dynamic_slice", [normal(3, 4), idx(1), idx(2)], dict(slice_sizes=(2, 3)),
         linear=[(0,)]),
    Case("dynamic_update_slice", [normal(3, 4), normal(2, 2), idx(1), idx(3)],
         linear=[(0, 1), (0,), (1,)]),
    Case("concatenate", [normal(3, 4), normal(3, 2)], dict(dimension=1),
         linear=[(0, 1), (1,)]),
    Case("pad", [normal(3, 4), normal()], dict(padding_config=((1, 2, 1), (-1, 1, 0))),
         linear=[(0, 1), (0,), (1,)]),
    Case("reduce_sum", [normal(3, 4)], dict(axes=(1,)), linear=[(0,)]),
    Case("reduce_sum", [normal(2, 3, 4)], dict(axes=(0, 2)), linear=[(0,)], name="two_axes"),
    Case("reduce_prod", [_with_zeros(normal(3, 4), (1, 2))], dict(axes=(0,))),
    Case("reduce_prod", [_with_zeros(normal(2, 3, 4), (0, 1, 1), (1, 1, 1), (0, 2, 0))],
         dict(axes=(0, 2)), name="zeros"),
    Case("reduce_max", [distinct(3, 4)], dict(axes=(1,))),
    Case("reduce_min", [distinct(2, 3, 4)], dict(axes=(0, 2))),
    Case("cumsum", [normal(3, 4)], dict(axis=1, reverse=False), linear=[(0,)]),
    Case("cumsum", [normal(3, 4)], dict(axis=0, reverse=True), linear=[(0,)], name="reverse"),
    Case("cumprod", [_with_zeros(normal(3, 5), (1, 2))], dict(axis=1, reverse=False)),
    Case("cumprod", [_with_zeros(normal(3, 5), (0, 3), (2, 1), (2, 3))],
         dict(axis=1, reverse=True), name="reverse"),
    Case("cummax", [distinct(3, 5)], dict(axis=1, reverse=False)),
    Case("cummax", [distinct(3, 5)], dict(axis=0, reverse=True), name="reverse"),
    Case("cummin", [distinct(3, 5)], dict(axis=1, reverse=True)),
    Case("cumlogsumexp", [normal(3, 5)], dict(axis=1, reverse=False)),
    Case("cumlogsumexp", [normal(3, 5)], dict(axis=1, reverse=True), name="reverse"),
    Case("sort", [distinct(3, 5)], dict(dimension=1, is_stable=True, num_keys=1)),
    Case("sort", [distinct(3, 5), normal(3, 5), RNG.integers(0, 9, (3, 5)).astype(I32)],
         dict(dimension=0, is_stable=True, num_keys=1), name="operands"),
    Case("top_k", [distinct(3, 5)], dict(k=3)),
    Case("dot_general", [normal(3, 4), normal(4, 2)], _dot((1,), (0,)),
         linear=[(0,), (1,)], bilinear=True),
    Case("dot_general", [normal(2, 3, 4), normal(2, 4, 5)], _dot((2,), (1,), (0,), (0,)),
         linear=[(0,), (1,)], bilinear=True, name="batch"),
    Case("dot_general", [normal(3, 4, 2), normal(2, 5, 4)], _dot((1, 2), (2, 0)),
         linear=[(0,), (1,)], bilinear=True, name="contract_two"),
    Case("dot_general", [normal(3, 2, 4).astype(np.float32), normal(4, 2).astype(np.float32)],
         _dot((2,), (0,), (1,), (1,), pref=np.dtype(np.float64)), linear=[(0,), (1,)],
         bilinear=True, eps=0.5, tol=1e-5, name="preferred"),
    Case("gather", [normal(5, 4), _dup], _gather(F), linear=[(0,)]),
    # Out-of-bounds rows read NaN, so the linear map (the tangent's) fills with 0.
    Case("gather", [normal(5, 4), _oob], _gather(F), linear=[(0,)], name="fill_nan",
         linear_params=_gather(F, fill=0)),
    Case("gather", [normal(5, 4), _oob], _gather(GSM.CLIP), linear=[(0,)], name="clip"),
    Case("gather", [normal(3, 5), idx([[4], [0]], [[1], [1]], [[3], [2]])],
         dict(dimension_numbers=_batched_take, slice_sizes=(1, 1), indices_are_sorted=False,
              unique_indices=False, mode=GSM.PROMISE_IN_BOUNDS, fill_value=None),
         linear=[(0,)], name="batching"),
    Case("scatter-add", [normal(5, 4), _dup, normal(3, 4)], _scatter(),
         linear=[(0, 2), (0,), (2,)]),
    Case("scatter-add", [normal(5, 4), _oob, normal(3, 4)], _scatter(),
         linear=[(0, 2), (2,)], name="drop"),
    Case("scatter-add", [normal(5, 4), _oob, normal(3, 4)], _scatter(GSM.CLIP),
         linear=[(0, 2), (2,)], name="clip"),
    Case("scatter-sub", [normal(5, 4), _dup, normal(3, 4)], _scatter(),
         linear=[(0, 2), (2,)]),
    Case("scatter", [normal(5, 4), _uniq, normal(3, 4)], _scatter(unique=True),
         linear=[(0, 2), (0,), (2,)], name="unique"),
    Case("scatter", [normal(5, 4), _dup, normal(3, 4)], _scatter(), name="repeated"),
    Case("scatter", [normal(5, 4), _oob, normal(3, 4)], _scatter(), name="drop"),
    Case("scatter-mul", [normal(5, 4), _uniq, normal(3, 4)], _scatter(unique=True),
         linear=[(0,)], bilinear=True, name="unique"),
    Case("scatter-mul", [normal(5, 4), _dup, normal(3, 4)], _scatter(), linear=[(0,)],
         bilinear=True, tangents=(0,), name="repeated"),
    Case("scatter-min", [distinct(5, 4), _dup, distinct(3, 4)], _scatter()),
    Case("scatter-max", [distinct(5, 4), _dup, distinct(3, 4)], _scatter()),
    Case("scatter-max", [distinct(5, 4), _oob, distinct(3, 4)], _scatter(GSM.CLIP),
         name="clip"),
]


# Symbolic-zero tangents for some of the operands (the rules instantiate the others).
def _partial(case_id, arg):
    c = next(c for c in CASES if c.id == case_id)
    return Case(c.prim, c.args, c.params, tangents=(arg,),
                name=f"{c.id[len(c.prim) + 1:]}-only{arg}".lstrip("-"))


PARTIAL = [_partial(*p) for p in [
    ("dynamic_update_slice", 1), ("concatenate", 0), ("pad", 1), ("dot_general", 1),
    ("scatter-add-drop", 2), ("scatter-repeated", 0), ("scatter-mul-unique", 0),
    ("scatter-max", 2)]]
JVP_CASES = CASES + PARTIAL
TRANSPOSE_CASES = [(c, g) for c in CASES for g in c.linear]
# What these generic tests cover (read by tests/lax/test_registry.py).
JVP_TESTED = {c.prim for c in JVP_CASES}
TRANSPOSE_TESTED = {c.prim for c, _ in TRANSPOSE_CASES}


# ---- helpers ----

def _tangent_aval(a):
    aval = ShapedArray(a.shape, a.dtype)
    if np.issubdtype(a.dtype, np.inexact):
        return aval
    return ShapedArray(a.shape, dtypes.float0)


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


_prim_fns = {}


def _prim_fn(case, linear=False):
    """The primitive as a jitted function of all its arguments (cached per case)."""
    key = (case.prim, repr(case.linear_params if linear else case.params))
    fn = _prim_fns.get(key)
    if fn is None:
        prim = registry[case.prim]
        params = case.linear_params if linear else case.params
        fn = _prim_fns[key] = pyjax.jit(lambda *xs: prim.bind(*xs, **params))
    return fn


def _inner(a, b):
    return float(np.sum(np.asarray(a, np.float64) * np.asarray(b, np.float64)))


# ---- JVP against finite differences ----

@pytest.mark.parametrize("case", JVP_CASES, ids=repr)
def test_jvp_matches_finite_differences(case, x64):
    prim = registry[case.prim]
    assert callable(prim.jvp), case.prim
    args = case.args
    tans = {i: normal(*args[i].shape).astype(args[i].dtype) for i in case.tangents}
    zero_outputs = []

    def jvp(*xs):
        primals, tvals = xs[:len(args)], dict(zip(sorted(tans), xs[len(args):]))
        tangents = [tvals[i] if i in tvals else Zero(_tangent_aval(a))
                    for i, a in enumerate(args)]
        out, t_out = prim.jvp(tuple(primals), tuple(tangents), **case.params)
        # All-zero tangents give symbolic zeros (checked while tracing).
        _, t_zero = prim.jvp(tuple(primals), tuple(Zero(_tangent_aval(a)) for a in args),
                             **case.params)
        assert all(type(t) is Zero for t in _as_list(t_zero))
        t_out = _as_list(t_out)
        zero_outputs[:] = [type(t) is Zero for t in t_out]
        return _as_list(out), [t for t in t_out if type(t) is not Zero]

    out, t_out = pyjax.jit(jvp)(*args, *[tans[i] for i in sorted(tans)])
    f = _prim_fn(case)
    expected_out = _as_list(f(*args))
    for o, e in zip(out, expected_out):
        np.testing.assert_array_equal(np.asarray(o), np.asarray(e))

    def shifted(s):
        return _as_list(f(*[a + s * case.eps * tans[i] if i in tans else a
                            for i, a in enumerate(args)]))
    plus, minus = shifted(1), shifted(-1)
    t_iter = iter(t_out)
    for k, (o, p, m) in enumerate(zip(expected_out, plus, minus)):
        if zero_outputs[k]:  # a symbolic zero only for outputs that cannot have a tangent
            assert not np.issubdtype(np.asarray(o).dtype, np.inexact), (case, k)
            continue
        fd = (np.asarray(p, np.float64) - np.asarray(m, np.float64)) / (2 * case.eps)
        # Positions filled with NaN by an out-of-bounds gather have tangent zero.
        fd = np.where(np.isnan(np.asarray(o)), 0.0, fd)
        got = np.asarray(next(t_iter))
        assert got.shape == fd.shape and got.dtype == np.asarray(o).dtype
        np.testing.assert_allclose(got, fd, rtol=case.tol, atol=case.tol, err_msg=case.id)


# ---- transpose against the dot-product identity ----

@pytest.mark.parametrize("case,group", TRANSPOSE_CASES,
                         ids=[f"{c.id}-{''.join(map(str, g))}" for c, g in TRANSPOSE_CASES])
def test_transpose_dot_product_identity(case, group, x64):
    prim = registry[case.prim]
    assert prim.linear and callable(prim.transpose), case.prim
    args = list(case.args)
    if not case.bilinear:  # hold the other linear inputs at zero, so that L is linear
        args = [np.zeros_like(a) if i in case.floats and i not in group else a
                for i, a in enumerate(args)]
    xs = {i: normal(*args[i].shape).astype(args[i].dtype) for i in group}
    applied = [xs.get(i, a) for i, a in enumerate(args)]
    y = np.asarray(_prim_fn(case, linear=True)(*applied))
    ct = normal(*y.shape).astype(y.dtype)

    def transpose(ct, *fixed):
        known = dict(zip([i for i in range(len(args)) if i not in group], fixed))
        rule_args = [UndefinedPrimal(ShapedArray(a.shape, a.dtype)) if i in group else known[i]
                     for i, a in enumerate(args)]
        cts = prim.transpose(ct, *rule_args, **case.linear_params)
        assert len(cts) == len(args)
        assert all(cts[i] is None for i in range(len(args)) if i not in group)
        # A symbolic zero cotangent gives symbolic zeros.
        zs = prim.transpose(Zero(ShapedArray(y.shape, y.dtype)), *rule_args,
                            **case.linear_params)
        assert all(type(zs[i]) is Zero for i in group)
        return [cts[i] for i in group]

    fixed = [a for i, a in enumerate(args) if i not in group]
    cts = pyjax.jit(transpose)(ct, *fixed)
    for i, c in zip(group, cts):
        assert c.shape == args[i].shape and c.dtype == args[i].dtype, (i, c.aval)
    lhs = sum(_inner(c, xs[i]) for i, c in zip(group, cts))
    rhs = _inner(ct, y)
    np.testing.assert_allclose(lhs, rhs, rtol=1e-5 if case.tol > 1e-6 else 1e-10, atol=1e-10)


# ---- through the public API: VJP against JVP, and second derivatives ----

needs_api = pytest.mark.skipif(not hasattr(pyjax, "vjp"), reason="pyjax.vjp not available yet")


def _api_fn(case):
    """The primitive as a function of its differentiated arguments only, returning its
    inexact outputs (a list)."""
    prim = registry[case.prim]
    args = case.args

    def f(*diff):
        full = list(args)
        for i, d in zip(case.tangents, diff):
            full[i] = d
        outs = _as_list(prim.bind(*full, **case.params))
        return [o for o in outs if dtypes.is_inexact(o.dtype)]
    return f


# The reversed cumulative reductions differ from the forward ones by a rev only.
VJP_CASES = [c for c in JVP_CASES if not (c.prim.startswith("cum") and "reverse" in c.id)]


@needs_api
@pytest.mark.parametrize("case", VJP_CASES, ids=repr)
def test_vjp_agrees_with_jvp(case, x64):
    f = _api_fn(case)
    diff = [case.args[i] for i in case.tangents]
    tans = [normal(*d.shape).astype(d.dtype) for d in diff]
    outs = [o for o in _as_list(_prim_fn(case)(*case.args)) if dtypes.is_inexact(o.dtype)]
    cts = [normal(*o.shape).astype(o.dtype) for o in outs]

    def both(diff, tans, cts):
        _, t_out = pyjax.jvp(f, tuple(diff), tuple(tans))
        _, pullback = pyjax.vjp(f, *diff)
        return t_out, pullback(cts)

    t_out, x_cts = pyjax.jit(both)(diff, tans, cts)
    lhs = sum(_inner(c, t) for c, t in zip(x_cts, tans))
    rhs = sum(_inner(c, t) for c, t in zip(cts, t_out))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-5 if case.tol > 1e-6 else 1e-9, atol=1e-9)


# Primitives whose tangents depend on the primal (the nonlinear ones and the bilinear dot):
# their JVP rules must be differentiable themselves.
SECOND_ORDER = [c for c in CASES if c.id in {
    "reduce_prod-zeros", "reduce_max", "cumprod", "cummax", "cumlogsumexp", "sort-operands",
    "top_k", "dot_general-batch", "scatter-repeated", "scatter-mul-unique", "scatter-max"}]


@needs_api
@pytest.mark.parametrize("case", SECOND_ORDER, ids=repr)
def test_jvp_of_jvp_matches_finite_differences(case, x64):
    f = pyjax.jit(_api_fn(case))
    diff = [case.args[i] for i in case.tangents]
    # check_grads multiplies tolerances by an output's size: divide by the largest one
    size = max(o.size for o in f(*diff))
    check_grads(f, diff, order=2, modes=("fwd",), rtol=1e-5 / size, atol=1e-5 / size, eps=1e-5)


# ---- rule behaviour the generic checks don't reach ----

def test_reduce_max_splits_ties_equally(x64):
    x = np.array([[1.0, 3.0, 3.0, 2.0], [5.0, 5.0, 5.0, 0.0]])
    t = np.array([[1.0, 2.0, 4.0, 8.0], [1.0, 2.0, 6.0, 8.0]])
    _, dy = pyjax.jit(lambda x, t: registry["reduce_max"].jvp((x,), (t,), axes=(1,)))(x, t)
    np.testing.assert_allclose(np.asarray(dy), [3.0, 3.0])


def test_scatter_mul_repeated_indices_needs_unique_for_updates_tangent(x64):
    c = next(c for c in CASES if c.id == "scatter-mul-repeated")
    op, ind, upd = c.args
    with pytest.raises(NotImplementedError, match="unique_indices"):
        registry["scatter-mul"].jvp((op, ind, upd), (Zero(ShapedArray(op.shape, op.dtype)),
                                                   Zero(ShapedArray(ind.shape, dtypes.float0)),
                                                   upd), **c.params)


def test_scatter_transpose_needs_unique_indices(x64):
    c = next(c for c in CASES if c.id == "scatter-repeated")
    op, ind, upd = c.args
    with pytest.raises(NotImplementedError, match="unique_indices"):
        registry["scatter"].transpose(op, UndefinedPrimal(ShapedArray(op.shape, op.dtype)), ind,
                                      UndefinedPrimal(ShapedArray(upd.shape, upd.dtype)),
                                      **c.params)
