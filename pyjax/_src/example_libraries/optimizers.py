"""`jax.example_libraries.optimizers`: first-order optimizers as `(init_fun, update_fun,
get_params)` triples over pytrees of parameters.

An optimizer is written for one array (`@optimizer` on a function returning the three
per-array functions); the decorator maps it over a pytree and keeps the state in an
`OptimizerState` pytree, so it can be passed through `jit`. Step sizes are a number or a
schedule `i -> step size`."""
import functools
from typing import Any, Callable, NamedTuple

from pyjax import numpy as jnp
from pyjax._src.core import pytree

__all__ = [
    "OptimizerState", "Optimizer", "optimizer", "sgd", "momentum", "nesterov", "adagrad",
    "rmsprop", "rmsprop_momentum", "adam", "adamax", "sm3", "constant", "exponential_decay",
    "inverse_time_decay", "polynomial_decay", "piecewise_constant", "make_schedule", "l2_norm",
    "clip_grads", "JoinPoint", "unpack_optimizer_state", "pack_optimizer_state"]


class OptimizerState(NamedTuple):
    packed_state: Any   # per parameter leaf: the leaves of its state
    tree_def: Any       # the parameters' tree structure
    subtree_defs: Any   # per parameter leaf: its state's tree structure


pytree.register_pytree_node(
    OptimizerState,
    lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], aux[0], aux[1]))


class Optimizer(NamedTuple):
    init_fn: Callable
    update_fn: Callable
    params_fn: Callable


def optimizer(opt_maker):
    """Lift an optimizer for single arrays to one for pytrees of arrays."""
    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            x0_flat, tree = pytree.tree_flatten(x0_tree)
            states = [pytree.tree_flatten(init(x0)) for x0 in x0_flat]
            return OptimizerState([s[0] for s in states], tree, tuple(s[1] for s in states))

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            states_flat, tree, subtrees = opt_state
            grad_flat, grad_tree_def = pytree.tree_flatten(grad_tree)
            if grad_tree_def != tree:
                raise TypeError(
                    "optimizer update function was passed a gradient tree that did not match "
                    f"the parameter tree structure with which it was initialized: parameter "
                    f"tree {tree} and grad tree {grad_tree_def}.")
            new = [pytree.tree_flatten(update(i, g, pytree.tree_unflatten(sub, s)))
                   for g, s, sub in zip(grad_flat, states_flat, subtrees)]
            for (_, new_sub), sub in zip(new, subtrees):
                if new_sub != sub:
                    raise TypeError(
                        "optimizer update function produced an output structure that did not "
                        f"match its input structure: input {sub} and output {new_sub}.")
            return OptimizerState([n[0] for n in new], tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            states_flat, tree, subtrees = opt_state
            return pytree.tree_unflatten(tree, [
                get_params(pytree.tree_unflatten(sub, s)) for s, sub in zip(states_flat, subtrees)])

        return Optimizer(tree_init, tree_update, tree_get_params)
    return tree_opt_maker


def _identity(x):
    return x


# ---- optimizers (per array) ----

@optimizer
def sgd(step_size):
    """x <- x - step_size(i) * g."""
    step_size = make_schedule(step_size)
    return _identity, lambda i, g, x: x - step_size(i) * g, _identity


@optimizer
def momentum(step_size, mass):
    """v <- mass * v + g; x <- x - step_size(i) * v."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, v = state
        v = mass * v + g
        return x - step_size(i) * v, v
    return lambda x0: (x0, jnp.zeros_like(x0)), update, lambda state: state[0]


@optimizer
def nesterov(step_size, mass):
    """v <- mass * v + g; x <- x - step_size(i) * (mass * v + g)."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, v = state
        v = mass * v + g
        return x - step_size(i) * (mass * v + g), v
    return lambda x0: (x0, jnp.zeros_like(x0)), update, lambda state: state[0]


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad with momentum on the normalized gradient."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        inv = jnp.where(g_sq > 0, 1.0 / jnp.sqrt(g_sq), 0.0)
        m = (1.0 - momentum) * (g * inv) + momentum * m
        return x - step_size(i) * m, g_sq, m
    return init, update, lambda state: state[0]


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """avg <- gamma * avg + (1 - gamma) g^2; x <- x - step_size(i) g / sqrt(avg + eps)."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg = state
        avg = avg * gamma + jnp.square(g) * (1.0 - gamma)
        return x - step_size(i) * g / jnp.sqrt(avg + eps), avg
    return lambda x0: (x0, jnp.zeros_like(x0)), update, lambda state: state[0]


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp whose normalized step is accumulated with momentum."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, avg, mom = state
        avg = avg * gamma + jnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg + eps)
        return x - mom, avg, mom
    return init, update, lambda state: state[0]


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma & Ba, 2015), bias-corrected moments, eps outside the square root."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        m_hat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        v_hat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * m_hat / (jnp.sqrt(v_hat) + eps), m, v
    return init, update, lambda state: state[0]


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax: Adam with the infinity norm of past gradients in place of the second moment."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        rate = step_size(i) / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        return x - rate * m / (u + eps), m, u
    return init, update, lambda state: state[0]


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al., 2019): one accumulator vector per axis; a coordinate's accumulator is
    the minimum over its axes' entries plus g^2, and each axis keeps the maximum over the rest."""
    step_size = make_schedule(step_size)

    def init(x0):
        x0 = jnp.asarray(x0)
        vs = [jnp.zeros(n, x0.dtype) for n in x0.shape] or [jnp.zeros((), x0.dtype)]
        return x0, jnp.zeros_like(x0), vs

    def update(i, g, state):
        x, m, vs = state
        nd = x.ndim
        along = ([jnp.reshape(v, tuple(-1 if a == k else 1 for a in range(nd)))
                  for k, v in enumerate(vs)] if nd else vs)
        accum = functools.reduce(jnp.minimum, along) + jnp.square(g)
        inv = jnp.where(accum > 0, 1.0 / jnp.sqrt(accum), 0.0)
        m = (1.0 - momentum) * (g * inv) + momentum * m
        vs = ([jnp.max(accum, axis=tuple(a for a in range(nd) if a != k)) for k in range(nd)]
              if nd else [accum])
        return x - step_size(i) * m, m, vs
    return init, update, lambda state: state[0]


# ---- schedules ----

def constant(step_size):
    return lambda i: step_size


def exponential_decay(step_size, decay_steps, decay_rate):
    return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    if staircase:
        return lambda i: step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    def schedule(step_num):
        step_num = jnp.minimum(step_num, decay_steps)
        mult = (1 - step_num / decay_steps) ** power
        return mult * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries, values):
    """values[0] up to boundaries[0] (inclusive), values[1] up to boundaries[1], ..."""
    boundaries, values = jnp.array(boundaries), jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if boundaries.shape[0] != values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")
    return lambda i: values[jnp.sum(i > boundaries)]


def make_schedule(scalar_or_schedule):
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# ---- utilities ----

def l2_norm(tree):
    """The l2 norm of all the leaves of `tree` taken together."""
    leaves = pytree.tree_leaves(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """Scale `grad_tree` down so that its l2 norm is at most `max_norm`."""
    norm = l2_norm(grad_tree)
    return pytree.tree_map(lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm)),
                           grad_tree)


class JoinPoint:
    """Marks where a parameter leaf's optimizer state subtree joins the parameter tree."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):  # so that JoinPoint(s) unpacks like its subtree
        yield self.subtree


def unpack_optimizer_state(opt_state):
    """An OptimizerState as a pytree of JoinPoints (for saving, e.g. with pickle)."""
    states_flat, tree_def, subtree_defs = opt_state
    subtrees = [JoinPoint(pytree.tree_unflatten(sub, s))
                for s, sub in zip(states_flat, subtree_defs)]
    return pytree.tree_unflatten(tree_def, subtrees)


def pack_optimizer_state(marked_pytree):
    """The inverse of `unpack_optimizer_state`."""
    joins, tree_def = pytree.tree_flatten(marked_pytree,
                                          is_leaf=lambda x: isinstance(x, JoinPoint))
    if not all(isinstance(j, JoinPoint) for j in joins):
        raise TypeError("pack_optimizer_state: expected a pytree of JoinPoints")
    flat = [pytree.tree_flatten(j.subtree) for j in joins]
    return OptimizerState([f[0] for f in flat], tree_def, tuple(f[1] for f in flat))
