"""`jit` of a function that uses mutable array references (core/refs.py).

A jitted function may take refs as arguments or close over refs made outside it. Its trace
then fails with `RefsTouched` (or `_leaf_aval` refuses a Ref argument), and `call` runs a
companion `Jitted` of a pure function instead: the refs' current values go in as extra
arguments, fresh refs holding them stand in for the caller's inside the function, and their
final values come back as extra outputs, which `call` stores into the caller's refs. A ref
first touched while tracing the companion is added to its list and the companion is made
again. Companions are cached per (argument structure, statics, which leaves are refs, the
closed-over refs), so later calls run one compiled program.
"""
from __future__ import annotations

from pyjax._src.core import pytree
from pyjax._src.core import refs
from pyjax._src.core.refs import Ref

_MAX_ROUNDS = 16  # each round finds at least one new ref; more would mean a changing function


def _check_distinct(jitted, leaves, ref_pos, closed):
    seen = {}
    names = None
    for i in ref_pos:
        r = leaves[i]
        if id(r) in seen:
            raise ValueError(
                "only one reference to a mutable array may be passed as an argument to a "
                f"function, but when tracing {jitted.__name__} for jit the mutable array "
                f"reference of type {r.aval} appeared at both leaf {seen[id(r)]} and leaf {i} "
                "of the arguments.")
        seen[id(r)] = i
    for r in closed:
        if id(r) in seen:
            raise ValueError(
                f"a mutable array reference of type {r.aval} is both passed as an argument to "
                f"{jitted.__name__} and closed over by it; pass it only once.")
    del names


def _companion(jitted, in_tree, statics, ref_pos, closed):
    key = (in_tree, statics, ref_pos, tuple(id(r) for r in closed))
    comps = jitted.__dict__.setdefault("_ref_companions", {})
    hit = comps.get(key)
    if hit is not None:
        return hit[0]
    fun = jitted.fun

    def threaded(closed_vals, leaf_vals):
        with refs.threaded(closed, closed_vals) as t:
            leaves = list(leaf_vals)
            inner = []
            for i in ref_pos:
                r = Ref(leaves[i], refs.inner_aval_of(leaf_vals_refs[i]))
                leaves[i] = r
                inner.append(r)
            dyn_args, dyn_kwargs = pytree.tree_unflatten(in_tree, leaves)
            args, kwargs = list(dyn_args), dict(dyn_kwargs)
            for k, v in statics:
                if isinstance(k, int):
                    args.insert(k, v)
                else:
                    kwargs[k] = v
            out = fun(*args, **kwargs)
            for leaf in pytree.tree_leaves(out):
                if type(leaf) is Ref:
                    raise ValueError(
                        f"function {jitted.__name__} traced for jit returned a mutable array "
                        f"reference of type {leaf.aval}, but mutable array references cannot "
                        "be returned.")
            # None (no output) for refs the function only read
            closed_out = [v if w else None for v, w in zip(t.final(), t.written())]
            args_out = [r._read() if r._value is not leaf_vals[i] else None
                        for i, r in zip(ref_pos, inner)]
            return out, closed_out, args_out

    leaf_vals_refs = {}  # position -> the caller's Ref, for its type (set per call below)
    threaded.__name__ = jitted.__name__
    threaded.__qualname__ = getattr(jitted, "__qualname__", jitted.__name__)
    comp = type(jitted)(threaded, device=jitted.device)
    comp._ref_companion = True
    comps[key] = (comp, leaf_vals_refs, list(closed))
    return comp


def call(jitted, args, kwargs, exc):
    """Run ``jitted(*args, **kwargs)`` threading the refs it takes or closes over."""
    statics, dyn_args, dyn_kwargs = jitted._split(args, kwargs)
    leaves, in_tree = pytree.tree_flatten((dyn_args, dyn_kwargs))
    ref_pos = tuple(i for i, x in enumerate(leaves) if type(x) is Ref)
    sig = (in_tree, statics, ref_pos)
    known = jitted.__dict__.setdefault("_ref_closed", {})
    closed = list(known.get(sig, ()))
    for r in exc.refs:
        if all(r is not c for c in closed):
            closed.append(r)
    for _ in range(_MAX_ROUNDS):
        _check_distinct(jitted, leaves, ref_pos, closed)
        comp = _companion(jitted, in_tree, statics, ref_pos, closed)
        key = (in_tree, statics, ref_pos, tuple(id(r) for r in closed))
        jitted._ref_companions[key][1].update({i: leaves[i] for i in ref_pos})
        closed_vals = [r._read() for r in closed]
        leaf_vals = [x._read() if type(x) is Ref else x for x in leaves]
        try:
            out, new_closed, new_args = comp(closed_vals, leaf_vals)
        except refs.RefsTouched as e:
            if e.depth != refs.depth() + 1 or not e.refs:
                raise
            closed += [r for r in e.refs if all(r is not c for c in closed)]
            continue
        known[sig] = tuple(closed)
        for r, v in zip(closed, new_closed):
            if v is not None:
                r._write(v)
        for i, v in zip(ref_pos, new_args):
            if v is not None:
                leaves[i]._write(v)
        return out
    raise RuntimeError(f"jit({jitted.__name__}): the mutable array references it uses kept "
                       "changing from one trace to the next")
