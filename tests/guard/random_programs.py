"""Small random programs over a NumPy-compatible namespace ``m`` (``numpy`` or
``pyjax.numpy``): the differential guard runs each through pyjax (eager, ``jit``, ``vmap``,
``grad``, ``scan``) and compares with the same program run by NumPy.

A program is a list of steps, each a source line over the running value ``a`` and NumPy
constants ``c<k>`` (so a failure prints as code that reproduces it)."""
import numpy as np

# (source, needs, smooth): ``needs`` is a predicate on the current shape; ``smooth``: the
# step is differentiable everywhere we evaluate it (used by the gradient check).
_UNARY = [
    ("m.sin(a)", None, True), ("m.cos(a)", None, True), ("m.tanh(a)", None, True),
    ("a * 0.5 + 1.0", None, True), ("a * a * 0.1", None, True),
    ("m.exp(m.tanh(a))", None, True), ("m.log1p(a * a)", None, True),
    ("m.sqrt(a * a + 1.0)", None, True), ("1.0 / (1.0 + a * a)", None, True),
    ("m.abs(a)", None, False), ("m.maximum(a, 0.1)", None, False),
    ("m.clip(a, -0.5, 0.5)", None, False),
]
_SHAPE = [
    ("m.transpose(a)", lambda s: len(s) >= 2, True),
    ("a.reshape(-1)", lambda s: len(s) >= 2, True),
    ("m.expand_dims(a, 0)", lambda s: len(s) <= 2, True),
    ("a[::2]", lambda s: len(s) >= 1 and s[0] >= 2, True),
    ("a[1:]", lambda s: len(s) >= 1 and s[0] >= 2, True),
    ("m.concatenate([a, a[:1]], axis=0)", lambda s: len(s) >= 1 and s[0] <= 6, True),
    ("m.flip(a, 0)", lambda s: len(s) >= 1, True),
    ("m.swapaxes(a, 0, -1)", lambda s: len(s) >= 2, True),
    ("m.squeeze(a, 0)", lambda s: len(s) >= 2 and s[0] == 1, True),
]
_REDUCE = [
    ("m.sum(a, axis=-1)", lambda s: len(s) >= 2, True),
    ("m.mean(a, axis=0)", lambda s: len(s) >= 2, True),
    ("m.max(a, axis=-1)", lambda s: len(s) >= 2 and s[-1] >= 1, False),
    ("m.cumsum(a, axis=0)", lambda s: len(s) >= 1, True),
    ("m.prod(m.tanh(a), axis=0, keepdims=True)", lambda s: len(s) >= 1, True),
]
_WITH_CONST = [  # {c}: a constant of the current shape; {r}: of the last dimension
    ("a + {c}", None, True), ("a * {c}", None, True), ("a - {r}", lambda s: len(s) >= 1, True),
    ("m.where({c} > 0, a, -a)", None, True), ("m.minimum(a, {c})", None, False),
    ("a @ {k}", lambda s: len(s) in (1, 2) and s[-1] >= 1, True),
]


class Program:
    def __init__(self, steps, consts, shape):
        self.steps, self.consts, self.shape = steps, consts, shape

    def __call__(self, m, a):
        env = dict(self.consts, m=m)
        for src in self.steps:
            env["a"] = a
            a = eval(src, env)
        return a

    def __str__(self):
        lines = [f"# input shape {self.shape}"]
        lines += [f"{k} = np.array({v.tolist()!r}, np.float32)" for k, v in self.consts.items()]
        lines += [f"a = {s}" for s in self.steps]
        return "\n".join(lines)


def random_program(rng, shape, n_steps=5, smooth_only=False):
    """A random program for inputs of ``shape`` (tracked through the steps with NumPy)."""
    steps, consts = [], {}
    a = np.zeros(shape, np.float32)
    for _ in range(n_steps):
        pools = [_UNARY, _SHAPE, _REDUCE, _WITH_CONST]
        pool = pools[rng.choice(4, p=[0.35, 0.25, 0.15, 0.25])]
        options = [o for o in pool if (o[1] is None or o[1](a.shape))
                   and (o[2] or not smooth_only)]
        if not options:
            continue
        src = options[rng.integers(len(options))][0]
        if "{" in src:
            name = f"c{len(consts)}"
            if "{k}" in src:
                value = rng.standard_normal((a.shape[-1], int(rng.integers(1, 4))))
            elif "{r}" in src:
                value = rng.standard_normal(a.shape[-1:])
            else:
                value = rng.standard_normal(a.shape)
            consts[name] = value.astype(np.float32)
            src = src.format(c=name, r=name, k=name)
        steps.append(src)
        a = eval(src, dict(consts, m=np, a=a))
        if a.size > 4096 or a.ndim > 3:  # keep programs small: drop the step, stop
            steps.pop()
            break
    return Program(steps, consts, shape)
