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
from pyjax._src.core import trace as trace_mod
from pyjax._src.core.refs import Ref

_MAX_ROUNDS = 16  # each round finds at least one new ref; more would mean a changing function


def _check_distinct(jitted, leaves, ref_pos, closed, names):
    """JAX's error for one ref passed twice (a write through one would miss the other)."""
    seen = {}
    for i in ref_pos:
        r = leaves[i]
        if id(r) in seen:
            raise ValueError(
                "only one reference to a mutable array may be passed as an argument to a "
                f"function, but when tracing {jitted.__name__} for jit the mutable array "
                f"reference of type {r.aval} appeared at both {names()[seen[id(r)]]} and "
                f"{names()[i]}.")
        seen[id(r)] = i
    for r in closed:
        if id(r) in seen:
            raise ValueError(
                f"a mutable array reference of type {r.aval} is both passed as an argument "
                f"({names()[seen[id(r)]]}) to {jitted.__name__} and closed over by it; pass it "
                "only once.")


def _companion(jitted, in_tree, statics, ref_pos, closed, donate, leaf_donate):
    """The pure jitted function for this call signature: ``threaded(donated, kept,
    donated_leaves, kept_leaves)`` takes the refs' values (closed-over refs first, then the
    argument refs; split by ``donate``) and the other argument leaves (split by the user's
    donations, ``leaf_donate``), and returns ``(out, new values)`` with None for the refs it
    only read."""
    key = (in_tree, statics, ref_pos, tuple(id(r) for r in closed), donate, leaf_donate)
    comps = jitted.__dict__.setdefault("_ref_companions", {})
    hit = comps.get(key)
    if hit is not None:
        return hit
    fun = jitted.fun
    n_closed = len(closed)
    types = {}  # position -> the inner aval of the caller's ref there (set by `call`)

    def threaded(donated, kept, donated_leaves, kept_leaves):
        d, k = iter(donated), iter(kept)
        vals = [next(d) if m else next(k) for m in donate]
        d, k = iter(donated_leaves), iter(kept_leaves)
        leaf_vals = [next(d) if m else next(k) for m in leaf_donate]
        with refs.threaded(closed, vals[:n_closed]) as t:
            leaves = list(leaf_vals)
            inner = []
            for i, v in zip(ref_pos, vals[n_closed:]):
                leaves[i] = Ref(v, types[i])
                inner.append(leaves[i])
            dyn_args, dyn_kwargs = pytree.tree_unflatten(in_tree, leaves)
            args, kwargs = list(dyn_args), dict(dyn_kwargs)
            for key_, v in statics:
                if isinstance(key_, int):
                    args.insert(key_, v)
                else:
                    kwargs[key_] = v
            out = fun(*args, **kwargs)
            for leaf in pytree.tree_leaves(out):
                if type(leaf) is Ref:
                    raise ValueError(
                        f"function {jitted.__name__} traced for jit returned a mutable array "
                        f"reference of type {leaf.aval}, but mutable array references cannot "
                        "be returned.")
            new = [v if w else None for v, w in zip(t.final(), t.written())]
            new += [r._read() if r._value is not v else None
                    for r, v in zip(inner, vals[n_closed:])]
            return out, new

    threaded.__name__ = jitted.__name__
    threaded.__qualname__ = getattr(jitted, "__qualname__", jitted.__name__)
    comp = type(jitted)(threaded, device=jitted.device,
                        donate_argnums=((0,) if any(donate) else ())
                        + ((2,) if any(leaf_donate) else ()))
    comp._ref_companion = True
    comps[key] = hit = (comp, types)
    return hit


def call(jitted, args, kwargs, exc):
    """Run ``jitted(*args, **kwargs)`` threading the refs it takes or closes over."""
    statics, dyn_args, dyn_kwargs = jitted._split(args, kwargs)
    leaves, in_tree = pytree.tree_flatten((dyn_args, dyn_kwargs))
    ref_pos = tuple(i for i, x in enumerate(leaves) if type(x) is Ref)
    # the user's donate_argnums/argnames, per leaf; a ref's buffer is never donated by them
    # (the ref keeps it; written refs are donated below when nothing else holds them)
    user = jitted._donated_leaves(dyn_args, dyn_kwargs, len(args)) or (False,) * len(leaves)
    leaf_donate = tuple(bool(u) and type(x) is not Ref for u, x in zip(user, leaves))
    def names():  # per leaf, only for an error message
        return jitted._dyn_arg_names(args, kwargs, dyn_args, dyn_kwargs)
    sig = (in_tree, statics, ref_pos)
    known = jitted.__dict__.setdefault("_ref_closed", {})
    closed, written = known.get(sig, ((), None))
    closed = list(closed)
    for r in exc.refs:
        if all(r is not c for c in closed):
            closed.append(r)
            written = None
    eager = trace_mod.is_eager()
    for _ in range(_MAX_ROUNDS):
        _check_distinct(jitted, leaves, ref_pos, closed, names)
        all_refs = closed + [leaves[i] for i in ref_pos]
        # Donate the buffers of refs this signature writes (known from its last call) when
        # nothing outside the ref holds them: XLA then updates them in place.
        donate = tuple(bool(eager and written and w and r._owned)
                       for r, w in zip(all_refs, written or [False] * len(all_refs)))
        comp, types = _companion(jitted, in_tree, statics, ref_pos, closed, donate,
                                 leaf_donate)
        types.update({i: refs.inner_aval_of(leaves[i]) for i in ref_pos})
        vals = [r._read() for r in all_refs]
        leaf_vals = [None if type(x) is Ref else x for x in leaves]
        try:
            out, new = comp([v for v, m in zip(vals, donate) if m],
                            [v for v, m in zip(vals, donate) if not m],
                            [v for v, m in zip(leaf_vals, leaf_donate) if m],
                            [v for v, m in zip(leaf_vals, leaf_donate) if not m])
        except refs.RefsTouched as e:
            if e.depth != refs.depth() + 1 or not e.refs:
                raise
            closed += [r for r in e.refs if all(r is not c for c in closed)]
            written = None
            continue
        known[sig] = (tuple(closed), tuple(v is not None for v in new))
        for r, v in zip(all_refs, new):
            if v is not None:
                r._write(v, owned=eager)  # a fresh output buffer
        return out
    raise RuntimeError(f"jit({jitted.__name__}): the mutable array references it uses kept "
                       "changing from one trace to the next")
