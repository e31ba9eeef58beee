"""NumPy references for the ecosystem tests: a one-hidden-layer tanh MLP with hand-written
backprop (float64) and the optimizer formulas of adam/adamw, sgd with momentum, lamb, cosine
decay, global-norm clipping and reduce-on-plateau, written from their papers/documentation."""
import numpy as np


def mlp_loss_grad(p, x, y):
    h = np.tanh(x @ p["w1"] + p["b1"])
    out = h @ p["w2"] + p["b2"]
    r = out - y
    loss = np.mean(r ** 2)
    dout = 2 * r / r.size
    dh = (dout @ p["w2"].T) * (1 - h ** 2)
    return loss, {"w1": x.T @ dh, "b1": dh.sum(0), "w2": h.T @ dout, "b2": dout.sum(0)}


def train(update_fn, params, x, y, steps, state=None):
    """Losses of `steps` full-batch steps; `state` (a dict) is the optimizer's, for inspection."""
    p = {k: v.astype(np.float64) for k, v in params.items()}
    state = {} if state is None else state
    losses = []
    for t in range(steps):
        loss, g = mlp_loss_grad(p, x, y)
        losses.append(loss)
        state["value"] = loss  # the metric a plateau rule watches (optax's `value=`)
        p = update_fn(t, p, g, state)
    return np.array(losses)


def adam(lr, b1=0.9, b2=0.999, eps=1e-8, wd=0.0, schedule=None, clip=None):
    def update(t, p, g, st):
        if clip is not None:
            norm = np.sqrt(sum(np.sum(v ** 2) for v in g.values()))
            if norm >= clip:
                g = {k: v / norm * clip for k, v in g.items()}
        st.setdefault("m", {k: 0 * v for k, v in p.items()})
        st.setdefault("v", {k: 0 * v for k, v in p.items()})
        rate = schedule(t) if schedule else lr
        out = {}
        for k in p:
            st["m"][k] = b1 * st["m"][k] + (1 - b1) * g[k]
            st["v"][k] = b2 * st["v"][k] + (1 - b2) * g[k] ** 2
            mh = st["m"][k] / (1 - b1 ** (t + 1))
            vh = st["v"][k] / (1 - b2 ** (t + 1))
            out[k] = p[k] - rate * (mh / (np.sqrt(vh) + eps) + wd * p[k])
        return out
    return update


def sgd_momentum(lr, momentum):
    def update(t, p, g, st):
        st.setdefault("tr", {k: 0 * v for k, v in p.items()})
        for k in p:
            st["tr"][k] = g[k] + momentum * st["tr"][k]
        return {k: p[k] - lr * st["tr"][k] for k in p}
    return update


def cosine(init, steps):
    return lambda t: init * 0.5 * (1 + np.cos(np.pi * min(t, steps) / steps))


def conv_same(x, k):
    """NumPy 'SAME' 2-D convolution (cross-correlation), NHWC input, HWIO kernel."""
    kh, kw = k.shape[:2]
    xp = np.pad(x, ((0, 0), ((kh - 1) // 2, kh // 2), ((kw - 1) // 2, kw // 2), (0, 0)))
    out = np.zeros(x.shape[:3] + (k.shape[3],))
    for i in range(x.shape[1]):
        for j in range(x.shape[2]):
            out[:, i, j] = np.einsum("nhwc,hwco->no", xp[:, i:i + kh, j:j + kw], k)
    return out


def lamb(lr, b1=0.9, b2=0.999, eps=1e-6, wd=0.0):
    """LAMB (You et al., 2020): the Adam direction plus weight decay, scaled per parameter by
    the trust ratio ||p|| / ||direction|| (1 where either norm is zero)."""
    def update(t, p, g, st):
        st.setdefault("m", {k: 0 * v for k, v in p.items()})
        st.setdefault("v", {k: 0 * v for k, v in p.items()})
        out = {}
        for k in p:
            st["m"][k] = b1 * st["m"][k] + (1 - b1) * g[k]
            st["v"][k] = b2 * st["v"][k] + (1 - b2) * g[k] ** 2
            d = (st["m"][k] / (1 - b1 ** (t + 1))) / (
                np.sqrt(st["v"][k] / (1 - b2 ** (t + 1))) + eps) + wd * p[k]
            pn, dn = np.linalg.norm(p[k]), np.linalg.norm(d)
            ratio = 1.0 if pn == 0 or dn == 0 else pn / dn
            out[k] = p[k] - lr * ratio * d
        return out
    return update


def reduce_on_plateau(inner, factor, patience, rtol=1e-4, atol=0.0, cooldown=0):
    """`inner`'s step scaled by a factor that is multiplied by `factor` once the loss has not
    improved (value < (1 - rtol) * best - atol) for `patience` steps in a row; `cooldown`
    steps after a reduction ignore plateaus. The scale after this step's bookkeeping applies
    to this step (accumulation of one value). st["plateau"]["scales"] records it per step."""
    def update(t, p, g, st):
        s = st.setdefault("plateau", {"best": np.inf, "count": 0, "scale": 1.0,
                                      "cooldown": 0, "scales": []})
        new = inner(t, p, g, st.setdefault("inner", {}))
        value = st["value"]
        improved = value < (1 - rtol) * s["best"] - atol
        if improved:
            s["best"] = value
        count = 0 if improved else s["count"] + 1
        if s["cooldown"] > 0:
            s["count"], s["cooldown"] = 0, s["cooldown"] - 1
        elif count == patience:
            s["count"], s["scale"], s["cooldown"] = 0, s["scale"] * factor, cooldown
        else:
            s["count"] = count
        s["scales"].append(s["scale"])
        return {k: p[k] + s["scale"] * (new[k] - p[k]) for k in p}
    return update
