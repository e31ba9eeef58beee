"""The batching (vmap) rules of every primitive, generated from the primitive registry.

For every primitive, one or more cases (operands of one example and params); for each case a
spread of batch-axis placements (each operand batched or not; the batch axis at the front, in
the middle or at the end). ``vmap(f, in_axes)(*batched)`` must equal ``f`` applied to each
example in a Python loop, stacked with NumPy. All placements of a case run in one ``jit`` so
that each case costs one compile. ``BATCH_TESTED`` says which primitives the cases cover;
tests/lax/test_registry.py requires every primitive there or in another module's set (the
collectives over named axes are checked against NumPy in tests/interpreters/test_vmap.py; their
JVP and transpose rules here).
"""
import numpy as np
import pytest

import pyjax
from pyjax import lax
from pyjax._src.core.primitive import registry
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import parallel
from pyjax._src.lax.slicing import GatherDimensionNumbers as GDN
from pyjax._src.lax.slicing import GatherScatterMode as GSM
from pyjax._src.lax.slicing import ScatterDimensionNumbers as SDN

B = 4  # batch size: differs from every per-example dimension, so misplaced axes show
RNG = np.random.default_rng(0)
F32, I32, U8, BOOL, C64 = np.float32, np.int32, np.uint8, np.bool_, np.complex64

# The collectives need a named axis; test_vmap.py checks them against NumPy.
COLLECTIVES = {"psum", "pmax", "pmin", "all_gather", "axis_index", "ppermute"}

# Their lowering belongs to pmap/shard_map (not written yet); test_collective_lowering_error
# below checks the error that stands in for it (read by tests/lax/test_registry.py).
TESTED_PRIMITIVES = set(COLLECTIVES)


# ---- operand makers: each returns one example ----

def fl(*shape, lo=-2.0, hi=2.0):
    return lambda: RNG.uniform(lo, hi, shape).astype(F32)


def it(*shape, lo=-5, hi=6, dtype=I32):
    return lambda: RNG.integers(lo, hi, shape).astype(dtype)


def bl(*shape):
    return lambda: RNG.random(shape) > 0.5


def cx(*shape):
    return lambda: (RNG.uniform(-2, 2, shape) + 1j * RNG.uniform(-2, 2, shape)).astype(C64)


def unique_rows(n, k):
    """(k, 1) int32 indices, distinct, from range(n)."""
    return lambda: RNG.permutation(n)[:k, None].astype(I32)


def scalar_index(hi):
    return lambda: np.int32(RNG.integers(0, hi))


class Case:
    def __init__(self, prim, makers, params=None, name="", fn=None, spread="full"):
        self.prim, self.makers, self.params = prim, makers, params or {}
        self.spread = spread
        self.id = prim + (f"-{name}" if name else "")
        self.fn = fn or (lambda *xs: registry[prim].bind(*xs, **self.params))

    def __repr__(self):
        return self.id


# ---- the elementwise table, one case per primitive ----

_DOMAIN = {"acosh": (1.1, 3.0), "log": (0.1, 2.0), "sqrt": (0.1, 2.0), "rsqrt": (0.1, 2.0),
           "log1p": (0.1, 2.0), "lgamma": (0.1, 2.0), "digamma": (0.1, 2.0),
           "asin": (-0.9, 0.9), "acos": (-0.9, 0.9), "atanh": (-0.9, 0.9),
           "erf_inv": (-0.9, 0.9), "div": (0.5, 2.0), "rem": (0.5, 2.0), "pow": (0.5, 2.0)}
_INT_DOMAIN = {"shift_left": (0, 4), "shift_right_arithmetic": (0, 4),
               "shift_right_logical": (0, 4), "div": (1, 6), "rem": (1, 6)}


def _maker(name, kinds, shape):
    if "f" in kinds:
        lo, hi = _DOMAIN.get(name, (-2.0, 2.0))
        return fl(*shape, lo=lo, hi=hi)
    if "c" in kinds:
        return cx(*shape)
    if "i" in kinds:
        lo, hi = _INT_DOMAIN.get(name, (-5, 6))
        return it(*shape, lo=lo, hi=hi)
    return bl(*shape)


# The table's members share one rule (batch_util.elementwise_rule): the first of each arity
# gets the full spread of placements, the others a short one (compiles are the cost here).
_FULL_SPREAD = {"neg", "add", "eq"}


def _elementwise_cases():
    cases = []
    for name, kinds, _, _ in ew._unary:
        cases.append(Case(name, [_maker(name, kinds, (2, 3))],
                          spread="full" if name in _FULL_SPREAD else "short"))
    for name, kinds, _, _ in ew._binary:
        cases.append(Case(name, [_maker(name, kinds, (2, 3))] * 2,
                          spread="full" if name in _FULL_SPREAD else "short"))
    for name, _, kinds in ew._comparisons:
        cases.append(Case(name, [_maker(name, kinds, (2, 3))] * 2,
                          spread="full" if name in _FULL_SPREAD else "short"))
    return cases


def _dot(lc, rc, lb=(), rb=()):
    return dict(dimension_numbers=((lc, rc), (lb, rb)), precision=None,
                preferred_element_type=None, out_sharding=None)


_take = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
_put = SDN(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
_pair_take = GDN(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,),
                 operand_batching_dims=(0,), start_indices_batching_dims=(0,))


def _gather(dn=_take, sizes=(1, 3), mode=GSM.PROMISE_IN_BOUNDS, fill=None):
    return dict(dimension_numbers=dn, slice_sizes=sizes, indices_are_sorted=False,
                unique_indices=False, mode=mode, fill_value=fill)


def _scatter(unique=True, mode=GSM.FILL_OR_DROP):
    return dict(dimension_numbers=_put, indices_are_sorted=False, unique_indices=unique,
                mode=mode)


def _jitted(x, y):
    return lax.sin(x) * y + 1.0


_jit_fn = pyjax.jit(_jitted)


def _higher_order_cases():
    """checkpoint and the custom-derivative calls (landing in parallel: only when present)."""
    cases = []
    try:
        from pyjax._src.transformations.checkpoint import checkpoint
        from pyjax._src.transformations.custom_derivatives import custom_jvp, custom_vjp
    except ImportError:
        return cases
    cases.append(Case("checkpoint", [fl(2, 3), fl(2, 3)], fn=checkpoint(_jitted)))
    cj = custom_jvp(_jitted)
    cj.defjvp(lambda p, t: (cj(*p), lax.cos(p[0]) * t[0] * p[1] + lax.sin(p[0]) * t[1]))
    cases.append(Case("custom_jvp_call", [fl(2, 3), fl(2, 3)], fn=cj))
    cv = custom_vjp(_jitted)
    cv.defvjp(lambda x, y: (cv(x, y), (x, y)),
              lambda res, g: (lax.cos(res[0]) * g * res[1], lax.sin(res[0]) * g))
    cases.append(Case("custom_vjp_call", [fl(2, 3), fl(2, 3)], fn=cv))
    return cases


def _while_cases():
    """lax.while_loop with a trip count per example (a batched predicate when ``n`` is
    batched) or shared by the batch (unbatched predicate)."""
    from pyjax._src.control_flow.while_loop import while_loop

    def loop(x, n):
        return while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, lax.sin(c[1]) + c[1]),
                          (0, x))[1]
    return [Case("while", [fl(2, 3), it(lo=0, hi=5)], fn=loop)]


def _cond_scan_cases():
    """lax.switch (an unbatched index stays a cond, a batched one selects) and lax.scan over
    batched or unbatched consts, carries and xs."""
    from pyjax._src.control_flow.cond import switch
    from pyjax._src.control_flow.scan import scan

    def branchy(i, x, y):
        return switch(i, [lambda x, y: x * y, lambda x, y: lax.sin(x) + y,
                          lambda x, y: x - y], x, y)

    def rnn(w, h, xs):
        def step(h, x):
            h = lax.tanh(lax.dot(w, h) + x)
            return h, lax.reduce_sum(h, (0,))
        return scan(step, h, xs)

    return [Case("cond", [it(lo=-1, hi=4), fl(2, 3), fl(2, 3)], fn=branchy),
            Case("scan", [fl(3, 3), fl(3), fl(4, 3)], fn=rnn)]


# Bound only inside autodiff, where a batched application is an error (as JAX's forward mode
# of a custom_vjp function is).
NOT_BATCHED = {"custom_lin"}

CASES = _elementwise_cases() + [
    # elementwise with implicit rank-0 operands, params, several cases
    Case("add", [fl(2, 3), fl()], name="scalar"),
    Case("round", [fl(2, 3)], dict(rounding_method=1)),
    Case("integer_pow", [fl(2, 3)], dict(y=3)),
    Case("pow", [fl(2, 3, lo=0.5, hi=2.0), fl(2, 3)]),
    Case("select_n", [bl(2, 3), fl(2, 3), fl(2, 3)]),
    Case("select_n", [bl(), fl(2, 3), fl(2, 3)], name="scalar_which"),
    Case("select_n", [it(2, 3, lo=0, hi=3), fl(2, 3), fl(2, 3), fl(2, 3)], name="int_which"),
    Case("clamp", [fl(), fl(2, 3), fl(lo=2.0, hi=3.0)]),
    Case("clamp", [fl(2, 3, lo=-2, hi=-1), fl(2, 3), fl(2, 3, lo=1, hi=2)], name="arrays"),
    Case("convert_element_type", [fl(2, 3, lo=-9, hi=9)],
         dict(new_dtype=np.dtype(I32), weak_type=False)),
    Case("bitcast_convert_type", [fl(2, 3)], dict(new_dtype=np.dtype(I32))),
    Case("bitcast_convert_type", [fl(2, 3)], dict(new_dtype=np.dtype(U8)), name="narrow"),
    Case("bitcast_convert_type", [it(2, 4, lo=0, hi=255, dtype=U8)],
         dict(new_dtype=np.dtype(F32)), name="widen"),
    Case("reduce_precision", [fl(2, 3)], dict(exponent_bits=5, mantissa_bits=4)),
    Case("copy", [fl(2, 3)]),
    # shape
    Case("broadcast_in_dim", [fl(2, 3)], dict(shape=(2, 5, 3), broadcast_dimensions=(0, 2),
                                              sharding=None)),
    Case("broadcast_in_dim", [fl(1, 3)], dict(shape=(2, 5, 3), broadcast_dimensions=(1, 2),
                                              sharding=None), name="stretch"),
    Case("broadcast_in_dim", [fl()], dict(shape=(2, 3), broadcast_dimensions=(),
                                          sharding=None), name="scalar"),
    Case("reshape", [fl(2, 3)], dict(new_sizes=(3, 2), dimensions=None, sharding=None)),
    Case("reshape", [fl(2, 3)], dict(new_sizes=(6,), dimensions=(1, 0), sharding=None),
         name="dimensions"),
    Case("squeeze", [fl(2, 1, 3)], dict(dimensions=(1,))),
    Case("transpose", [fl(2, 3, 5)], dict(permutation=(2, 0, 1))),
    Case("rev", [fl(2, 3)], dict(dimensions=(1,))),
    Case("slice", [fl(5, 6)], dict(start_indices=(1, 0), limit_indices=(4, 6), strides=(1, 2))),
    Case("dynamic_slice", [fl(5, 6), scalar_index(5), scalar_index(6)],
         dict(slice_sizes=(2, 3))),
    Case("dynamic_update_slice", [fl(5, 6), fl(2, 3), scalar_index(5), scalar_index(6)]),
    Case("concatenate", [fl(2, 3), fl(2, 1), fl(2, 2)], dict(dimension=1)),
    Case("pad", [fl(2, 3), fl()], dict(padding_config=((1, 0, 0), (-1, 2, 1)))),
    Case("iota", [], dict(dtype=np.dtype(I32), shape=(2, 3), dimension=1, sharding=None)),
    # gather / scatter
    Case("gather", [fl(5, 3), it(2, 1, lo=0, hi=5)], _gather()),
    Case("gather", [fl(5, 3), it(2, 1, lo=-2, hi=7)], _gather(mode=GSM.FILL_OR_DROP),
         name="fill"),
    Case("gather", [fl(5, 3), it(2, 1, lo=-2, hi=7)], _gather(mode=GSM.CLIP), name="clip"),
    Case("gather", [fl(2, 5), it(2, 3, 1, lo=0, hi=5)],
         _gather(dn=_pair_take, sizes=(1, 1)), name="batching_dims"),
    Case("scatter", [fl(5, 3), unique_rows(5, 2), fl(2, 3)], _scatter()),
    Case("scatter-add", [fl(5, 3), it(3, 1, lo=0, hi=5), fl(3, 3)], _scatter(False)),
    Case("scatter-add", [fl(5, 3), it(3, 1, lo=-2, hi=7), fl(3, 3)],
         _scatter(False, GSM.CLIP), name="clip"),
    Case("scatter-sub", [fl(5, 3), it(3, 1, lo=0, hi=5), fl(3, 3)], _scatter(False)),
    Case("scatter-mul", [fl(5, 3), it(3, 1, lo=0, hi=5), fl(3, 3)], _scatter(False)),
    Case("scatter-min", [fl(5, 3), it(3, 1, lo=0, hi=5), fl(3, 3)], _scatter(False)),
    Case("scatter-max", [fl(5, 3), it(3, 1, lo=0, hi=5), fl(3, 3)], _scatter(False)),
    # reductions
    Case("reduce_sum", [fl(2, 3, 5)], dict(axes=(0, 2))),
    Case("reduce_prod", [fl(2, 3)], dict(axes=(1,))),
    Case("reduce_max", [fl(2, 3)], dict(axes=(0,))),
    Case("reduce_min", [fl(2, 3)], dict(axes=(1,))),
    Case("reduce_and", [bl(2, 3)], dict(axes=(1,))),
    Case("reduce_or", [bl(2, 3)], dict(axes=(0,))),
    Case("reduce_xor", [it(2, 3)], dict(axes=(1,))),
    Case("argmax", [fl(2, 3)], dict(axes=(1,), index_dtype=np.dtype(I32))),
    Case("argmin", [fl(2, 3)], dict(axes=(0,), index_dtype=np.dtype(I32))),
    Case("cumsum", [fl(2, 3)], dict(axis=1, reverse=False)),
    Case("cumprod", [fl(2, 3)], dict(axis=0, reverse=True)),
    Case("cummax", [fl(2, 3)], dict(axis=1, reverse=False)),
    Case("cummin", [fl(2, 3)], dict(axis=1, reverse=True)),
    Case("cumlogsumexp", [fl(2, 3)], dict(axis=0, reverse=False)),
    # dot_general
    Case("dot_general", [fl(2, 3), fl(3, 5)], _dot((1,), (0,))),
    Case("dot_general", [fl(2, 3, 5), fl(2, 5, 3)], _dot((2,), (1,), (0,), (0,)), name="batch"),
    Case("dot_general", [fl(3), fl(3)], _dot((0,), (0,)), name="vector"),
    # sorting
    Case("sort", [fl(2, 5)], dict(dimension=1, is_stable=True, num_keys=1)),
    Case("sort", [it(2, 5, lo=0, hi=3), fl(2, 5)], dict(dimension=1, is_stable=True,
                                                          num_keys=1), name="key_val"),
    Case("top_k", [fl(2, 5)], dict(k=3)),
    Case("stop_gradient", [fl(2, 3)]),
    # a jitted call
    Case("jit", [fl(2, 3), fl(2, 3)], fn=_jit_fn),
] + _higher_order_cases() + _while_cases() + _cond_scan_cases()


def _placements(ranks, spread="full"):
    """A spread of in_axes: all at the front, all at the end, each operand alone batched in
    its middle, and a mix of end / front / unbatched. The short spread: the mix, and the last
    operand alone in its middle (the only operand, for one)."""
    k = len(ranks)
    if k == 0:
        return [()]
    if spread == "short":
        alone = tuple(min(1, r) if j == k - 1 else None for j, r in enumerate(ranks))
        if k == 1:
            return [alone]
        mix = tuple(ranks[0] if j == 0 else 0 if j == 1 else None for j in range(k))
        return [mix, alone]
    out = [tuple(0 for _ in ranks), tuple(ranks)]
    if k == 1:
        out.append((min(1, ranks[0]),))
    else:
        for i in range(k):
            out.append(tuple(min(1, r) if j == i else None for j, r in enumerate(ranks)))
        out.append(tuple(ranks[0] if j == 0 else 0 if j == 1 else None for j in range(k)))
    return list(dict.fromkeys(out))


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _prepare(case):
    """(placements, batched argument sets, per-example argument lists) for ``case``."""
    examples = [[m() for _ in range(B)] for m in case.makers]  # per operand, per example
    placements = _placements([np.ndim(ex[0]) for ex in examples], case.spread)
    arg_sets = [[ex[0] if ax is None else np.stack(ex, axis=ax) for ex, ax in zip(examples, pl)]
                for pl in placements]
    per_example = [[[ex[0] if ax is None else ex[b] for ex, ax in zip(examples, pl)]
                    for b in range(B)] for pl in placements]
    return placements, arg_sets, per_example


def _check_cases(cases):
    """vmap of each case at each placement (all in one ``jit``, one compile) against the
    Python loop over its examples (eager: one cached executable per primitive), stacked with
    NumPy."""
    prepared = [_prepare(c) for c in cases]
    flat = [a for _, arg_sets, _ in prepared for args in arg_sets for a in args]

    def batched_all(*flat):
        it_ = iter(flat)
        return [pyjax.vmap(case.fn, in_axes=pl, axis_size=B)(*[next(it_) for _ in args])
                for case, (placements, arg_sets, _) in zip(cases, prepared)
                for pl, args in zip(placements, arg_sets)]
    results = iter(pyjax.jit(batched_all)(*flat))
    for case, (placements, _, per_example) in zip(cases, prepared):
        for pl, examples in zip(placements, per_example):
            batched = next(results)
            loop = [_as_list(case.fn(*ex)) for ex in examples]
            for j, got in enumerate(_as_list(batched)):
                got = np.asarray(got)
                want = np.stack([np.asarray(o[j]) for o in loop])
                msg = f"{case.id} with in_axes={pl}, output {j}"
                assert got.shape == want.shape and got.dtype == want.dtype, (
                    msg, got.shape, want.shape, got.dtype, want.dtype)
                if np.issubdtype(want.dtype, np.inexact):
                    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-5, err_msg=msg,
                                               equal_nan=True)
                else:
                    np.testing.assert_array_equal(got, want, err_msg=msg)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_batching_rule_matches_loop(case):
    _check_cases([case])


def test_vmap_primitive_eagerly_matches_loop():
    # The same rules, bound eagerly instead of under jit.
    x = RNG.normal(size=(3, B, 4)).astype(F32)
    i = RNG.integers(0, 3, (B,)).astype(I32)
    f = lambda x, i: lax.dynamic_slice(lax.cumsum(x, 1), (i, 1), (2, 2))  # noqa: E731
    got = pyjax.vmap(f, in_axes=(1, 0))(x, i)
    want = np.stack([np.asarray(f(x[:, b], i[b])) for b in range(B)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_vmap_over_an_empty_axis_with_batched_indices():
    # operand and start indices both batched over a size-0 axis (optax's hungarian_algorithm
    # under vmap of an empty batch): the per-example slice of the batch dim is 0, not 1
    x, i = np.zeros((0, 3, 4), F32), np.zeros((0,), I32)
    take = lambda x, i: x[i, 1:]  # noqa: E731  (dynamic_slice's batch rule)
    fancy = lambda x, i: x[np.array([0, 2]) + i]  # noqa: E731  (gather's batch rule)
    for f, shape in ((take, (0, 3)), (fancy, (0, 2, 4))):
        assert pyjax.vmap(f)(x, i).shape == shape
        assert pyjax.jit(pyjax.vmap(f))(x, i).shape == shape


# ---- the collectives' JVP and transpose rules, under the vmap that binds their axis ----

def _collective_fns():
    ring = [(0, 1), (1, 2), (2, 3), (3, 0)]
    return {"psum": lambda v: lax.psum(v, "i"), "pmax": lambda v: lax.pmax(v, "i"),
            "pmin": lambda v: lax.pmin(v, "i"), "all_gather": lambda v: lax.all_gather(v, "i"),
            "all_gather_tiled": lambda v: lax.all_gather(v, "i", axis=0, tiled=True),
            "ppermute": lambda v: lax.ppermute(v, "i", ring[:3])}


LINEAR_COLLECTIVES = {"psum", "all_gather", "all_gather_tiled", "ppermute"}


@pytest.mark.parametrize("name", sorted(_collective_fns()))
def test_collective_jvp_and_transpose(x64, name):
    g = pyjax.vmap(_collective_fns()[name], axis_name="i")
    x = RNG.normal(size=(B, 3))  # distinct values: pmax/pmin have no ties
    t = RNG.normal(size=(B, 3))
    y, ty = pyjax.jvp(g, (x,), (t,))
    eps = 1e-6
    fd = (np.asarray(g(x + eps * t)) - np.asarray(g(x - eps * t))) / (2 * eps)
    np.testing.assert_allclose(np.asarray(ty), fd, rtol=1e-6, atol=1e-8)
    if name in LINEAR_COLLECTIVES:
        ct = RNG.normal(size=np.shape(y))
        (tx,) = pyjax.linear_transpose(g, x)(ct)
        np.testing.assert_allclose(np.sum(np.asarray(tx) * x), np.sum(ct * np.asarray(g(x))),
                                   rtol=1e-10)


def test_collectives_are_axis_aware():
    assert COLLECTIVES <= set(registry)
    assert all(registry[n].axis_aware is not None for n in COLLECTIVES)
    assert registry["sin"].axis_aware is None


# What this module covers (read by tests/lax/test_registry.py). The collectives' batching is
# checked against NumPy in tests/interpreters/test_vmap.py.
BATCH_TESTED = {c.prim for c in CASES} | NOT_BATCHED
JVP_TESTED = {"psum", "pmax", "pmin", "all_gather", "ppermute"}
TRANSPOSE_TESTED = {"psum", "all_gather", "ppermute"}


def test_collective_lowering_error():
    # Outside vmap the collectives cannot be staged for a device program yet.
    with pytest.raises(NotImplementedError, match="pmap/shard_map"):
        pyjax.jit(lambda x: parallel.psum_p.bind(x, axes=("i",)))(np.ones(3, F32))
    with pytest.raises(NameError, match="unbound axis name: i"):
        lax.psum(np.ones(3, F32), "i")
