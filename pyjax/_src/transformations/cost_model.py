"""pyjax's own estimate of a program's cost, read from its Jaxpr: what ``Compiled.cost_analysis()``
answers when the plugin cannot (``PJRT_Executable_GetCostAnalysis`` is UNIMPLEMENTED in newer
XLA CPU plugins).

The keys and their meaning are XLA's ``HloCostAnalysis``: ``flops`` (arithmetic operations),
``transcendentals`` (exp, log, tanh, sqrt, pow, ...: one per element, not in ``flops``) and
``bytes accessed`` (bytes read and written). The conventions follow what XLA's CPU plugin and
JAX 0.10.2 answer (checked program by program, docs/debugging.md):

- elementwise arithmetic, comparisons, selects and conversions: one flop per output element;
- ``dot_general``: 2 x (batch x M x N x K); convolutions: 2 x the multiply-adds that touch a
  real input element (padding and dilation holes are not counted);
- reductions: (input elements - output elements) x the reducer's cost; windowed reductions:
  output elements x (window elements - 1) x the reducer's cost; cumulative ones as XLA's CPU
  pipeline rewrites them (``_cumulative_steps``);
- sort: n x ceil(log2 n) comparisons over the operand's n elements, plus the elementwise
  work of the CPU's packed sort where it applies (``lax/sorting.py``); FFT: 8 x elements x the
  product of log2 of the FFT lengths;
- a loop body counts once (``while``, ``scan``: XLA does not multiply by the trip count; a
  ``scan`` as its lowering emits it, ``_scan``), ``cond`` the maximum over its branches, key
  by key, and calls (``jit``, ``checkpoint``, custom derivatives) their body.

Unlike XLA's figure, which is taken after fusion, ``bytes accessed`` here adds up every
equation's operands and results, as if each were its own kernel: larger than XLA's for fused
chains, smaller where XLA counts the operand reads a kernel repeats (convolutions, loops). Primitives it has no model for (``NOT_MODELED``:
eigen- and singular value decompositions, custom calls) count their bytes and no flops, as
XLA's estimate skips custom calls. Linear algebra with a model uses textbook flop counts.
"""
from __future__ import annotations

import math

import numpy as np

from pyjax._src.control_flow import scan as scan_lowering
from pyjax._src.interpreters import lowering, staging
from pyjax._src.lax import sorting

FLOPS, TRANSCENDENTALS, BYTES = "flops", "transcendentals", "bytes accessed"

# one flop per output element
ELEMENTWISE = frozenset("""
    abs add and ceil clamp clz complex conj convert_element_type div eq floor ge gt imag
    is_finite le lt max min mul ne neg nextafter not or population_count real reduce_precision
    rem round select_n shift_left shift_right_arithmetic shift_right_logical sign square sub
    xor""".split())

# one transcendental per output element (special functions too: XLA's CPU plugins expand
# some of them into polynomials, whose flops this model does not count)
TRANSCENDENTAL = frozenset("""
    acos acosh asin asinh atan atan2 atanh bessel_i1e cbrt cos cosh digamma erf erf_inv erfc
    exp expm1 igamma igamma_grad_a igammac lgamma log log1p polygamma pow
    random_gamma_grad regularized_incomplete_beta rsqrt sin sinh sqrt tan tanh xla_erf_inv
    xla_lgamma zeta""".split())

# no arithmetic: data movement, layout, randomness bits, host callbacks (the device does no
# arithmetic for them) and markers
NO_FLOPS = frozenset("""
    all_gather all_to_all axis_index bitcast_convert_type broadcast_in_dim check concatenate
    copy dce_sink debug_callback device_put dynamic_slice dynamic_update_slice gather io_callback
    iota lu_pivots_to_permutation name optimization_barrier pad ppermute pure_callback reshape
    rev rng_bit_generator rng_uniform scatter sharding_constraint slice squeeze stop_gradient
    transpose""".split())

# reducers: (flops, transcendentals) per combination of two elements
_REDUCE = {"reduce_sum": (1, 0), "reduce_max": (1, 0), "reduce_min": (1, 0),
           "reduce_prod": (1, 0), "reduce_and": (1, 0), "reduce_or": (1, 0),
           "reduce_xor": (1, 0),
           # JAX's argmax reducer: compare, NaN check, tie on the index, two selects
           "argmax": (9, 0), "argmin": (9, 0),
           # collectives combine each element once
           "psum": (1, 0), "pmax": (1, 0), "pmin": (1, 0), "reduce_scatter": (1, 0)}
_WINDOW = {"reduce_window_sum": (1, 0), "reduce_window_max": (1, 0),
           "reduce_window_min": (1, 0)}
# cumulative reductions (reduce_window over the axis on XLA's CPU, _cumulative_steps);
# logaddexp, cumlogsumexp's reducer, is 8 flops and 2 transcendentals in JAX's lowering
_CUMULATIVE = {"cumsum": (1, 0), "cumprod": (1, 0), "cummax": (1, 0), "cummin": (1, 0),
               "cumlogsumexp": (8, 2)}
_SCATTER_COMBINE = frozenset(["scatter-add", "scatter-sub", "scatter-mul", "scatter-min",
                              "scatter-max"])

# Primitives without a model: bytes only. XLA's estimate skips custom calls likewise.
NOT_MODELED = frozenset("""
    call_exported cholesky_update custom_lin eig eigh ffi_call hessenberg schur svd top_k
    tridiagonal tridiagonal_solve""".split())


# the primitives _arithmetic has a rule of its own for
_OWN_RULES = frozenset("""
    conv_general_dilated dot_general fft logistic reduce reduce_window select_and_gather_add
    select_and_scatter_add sort""".split())


def has_model(prim):
    """Whether ``estimate`` knows ``prim`` (or, for NOT_MODELED, knows to count bytes only)."""
    name = prim.name
    return (getattr(prim.lower, "fn", None) is not None or name in _CALLS or name in _LINALG
            or any(name in table for table in (
                ELEMENTWISE, TRANSCENDENTAL, NO_FLOPS, NOT_MODELED, _OWN_RULES, _REDUCE,
                _WINDOW, _CUMULATIVE, _SCATTER_COMBINE)))


class _Cost:
    __slots__ = ("flops", "trans", "bytes")

    def __init__(self, flops=0.0, trans=0.0, nbytes=0.0):
        self.flops, self.trans, self.bytes = flops, trans, nbytes

    def add(self, other, times=1):
        self.flops += times * other.flops
        self.trans += times * other.trans
        self.bytes += times * other.bytes

    def maximum(self, other):
        self.flops = max(self.flops, other.flops)
        self.trans = max(self.trans, other.trans)
        self.bytes = max(self.bytes, other.bytes)


def estimate(closed):
    """``{"flops", "transcendentals", "bytes accessed"}`` (floats) of a ClosedJaxpr."""
    c = _jaxpr_cost(closed)
    return {FLOPS: float(c.flops), TRANSCENDENTALS: float(c.trans), BYTES: float(c.bytes)}


def _jaxpr_cost(jaxpr):
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)  # a ClosedJaxpr or a Jaxpr
    total = _Cost()
    for eqn in jaxpr.eqns:
        total.add(_eqn_cost(eqn))
    return total


def _size(aval):
    return math.prod(getattr(aval, "shape", ()))


def _nbytes(aval):
    try:
        itemsize = np.dtype(aval.dtype).itemsize
    except (TypeError, AttributeError):  # tokens, key types without a NumPy dtype
        itemsize = getattr(getattr(aval, "dtype", None), "itemsize", 0)
    return _size(aval) * itemsize


def _eqn_cost(eqn):
    name = eqn.primitive.name
    body = _CALLS.get(name)
    if body is not None:  # XLA inlines calls and costs the control flow around bodies
        return body(eqn.params)
    ins = [v.aval for v in eqn.invars]
    outs = [v.aval for v in eqn.outvars]
    nbytes = sum(map(_nbytes, ins)) + sum(map(_nbytes, outs))
    composite = lowering.lower_fun_jaxpr(eqn.primitive, ins, eqn.params)
    if composite is not None:  # what the primitive lowers to
        inner = _jaxpr_cost(composite)
        return _Cost(inner.flops, inner.trans, nbytes)
    flops, trans = _arithmetic(name, ins, outs, eqn.params)
    return _Cost(flops, trans, nbytes)


def _arithmetic(name, ins, outs, params):
    """(flops, transcendentals) of one equation that is not a call."""
    out_size = _size(outs[0]) if outs else 0
    if name in ELEMENTWISE:
        return out_size, 0
    if name in TRANSCENDENTAL:
        return 0, out_size
    if name == "logistic":  # XLA's CPU plugins expand it: 1 / (1 + exp(-x))
        return 3 * out_size, out_size
    if name in NO_FLOPS or name in NOT_MODELED:
        return 0, 0
    if name in _REDUCE:
        f, t = _REDUCE[name]
        n = _size(ins[0]) - out_size if name not in ("psum", "pmax", "pmin") else _size(ins[0])
        return f * n, t * n
    if name == "reduce":
        f, t = _reducer_cost(params["computation"], ins)
        n = _size(ins[0]) - out_size
        return f * n, t * n
    if name in _WINDOW or name == "reduce_window":
        f, t = (_WINDOW[name] if name in _WINDOW
                else _reducer_cost(params["computation"], ins))
        n = out_size * (math.prod(params["window_dimensions"]) - 1)
        return f * n, t * n
    if name in _CUMULATIVE:
        f, t = _CUMULATIVE[name]
        length = ins[0].shape[params["axis"]]
        n = (out_size // length if length else 0) * _cumulative_steps(length)
        return f * n, t * n
    if name in _SCATTER_COMBINE:
        return _size(ins[2]), 0
    if name == "select_and_scatter_add":  # a compare per window element, an add per source
        return _size(ins[0]) * (math.prod(params["window_dimensions"]) + 1), 0
    if name == "select_and_gather_add":
        return out_size * (math.prod(params["window_dimensions"]) - 1), 0
    if name == "dot_general":
        (lhs_contract, _), _ = params["dimension_numbers"]
        k = math.prod(ins[0].shape[d] for d in lhs_contract)
        return 2 * out_size * k, 0
    if name == "conv_general_dilated":
        return _conv_flops(ins, outs[0], params), 0
    if name == "sort":  # (plus the CPU lowering's key packing, lax/sorting.py)
        n = _size(ins[0])
        packed = sorting.packs(ins, params["dimension"], params["num_keys"])
        extra = n * sorting.packed_sort_flops(ins[0]) if packed else 0
        return (n * math.ceil(math.log2(n)) if n > 1 else 0) + extra, 0
    if name == "fft":
        logs = math.prod(int(math.log2(n)) if n > 0 else 0 for n in params["fft_lengths"])
        return 8 * logs * _size(ins[0]), 0
    if name in _LINALG:
        return _LINALG[name](ins, outs, params), 0
    return 0, 0  # a primitive of its own (pyjax.extend): like NOT_MODELED


def _cumulative_steps(n, nested=False):
    """Reducer applications of a cumulative reduction along an axis of length ``n``, as XLA's
    CPU pipeline counts them: a window of the whole axis at every position up to 16 elements;
    longer axes are padded to a multiple of 16 and split into rows of 16 (scanned alone),
    whose totals are scanned the same way and added back (fitted to JAX 0.10.2's figures for
    n = 16 ... 5000: 240, 515 for 17, 1039 for 64, 17167 for 1000)."""
    if n <= 16:
        return n * n - 1 if nested else n * (n - 1)
    padded = -(-n // 16) * 16
    return 15 * padded + padded + _cumulative_steps(padded // 16, nested=True)


def _reducer_cost(computation, ins):
    """(flops, transcendentals) of one application of a user reducer (``lax.reduce``)."""
    n = len(ins) // 2  # operands, then as many init values
    scalars = [staging.abstractify(np.zeros((), a.dtype)) for a in ins[n:]]
    closed = staging.trace_to_jaxpr(lambda *v: computation(v[:n], v[n:]), scalars * 2)
    c = _jaxpr_cost(closed)
    return c.flops, c.trans


def _conv_flops(ins, out, params):
    """2 x the multiply-adds whose input position is a real element, XLA's count."""
    lhs, rhs = ins[0].shape, ins[1].shape
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    valid = 1
    for i, (lo, _) in enumerate(params["padding"]):
        size, k = lhs[lhs_spec[2 + i]], rhs[rhs_spec[2 + i]]
        o = out.shape[out_spec[2 + i]]
        ld, rd = params["lhs_dilation"][i], params["rhs_dilation"][i]
        pos = (np.arange(o)[:, None] * params["window_strides"][i]
               + np.arange(k)[None, :] * rd - lo)
        valid *= int(np.count_nonzero((pos >= 0) & (pos <= (size - 1) * ld) & (pos % ld == 0)))
    per_output = out.shape[out_spec[0]] * out.shape[out_spec[1]] * rhs[rhs_spec[1]]
    return 2 * per_output * valid


def _batch(aval):
    return math.prod(aval.shape[:-2])


def _cholesky(ins, outs, params):
    return _batch(ins[0]) * ins[0].shape[-1] ** 3 / 3


def _triangular_solve(ins, outs, params):
    return _size(outs[0]) * ins[0].shape[-1]  # n^2 per right-hand side, as LAPACK's trsm


def _lu(ins, outs, params):
    m, n = ins[0].shape[-2:]
    k = min(m, n)  # 2n^3/3 when square
    return _batch(ins[0]) * 2 * (m * n * k - (m + n) * k ** 2 / 2 + k ** 3 / 3)


def _householder_qr(m, n):
    k = min(m, n)  # 2mn^2 - 2n^3/3 when m >= n
    return 2 * m * n * k - (m + n) * k ** 2 + 2 * k ** 3 / 3


def _form_q(m, n, k):
    return 4 * m * n * k - 2 * (m + n) * k ** 2 + 4 * k ** 3 / 3


def _geqrf(ins, outs, params):
    return _batch(ins[0]) * _householder_qr(*ins[0].shape[-2:])


def _householder_product(ins, outs, params):
    return _batch(ins[0]) * _form_q(*ins[0].shape[-2:], ins[1].shape[-1])


def _qr(ins, outs, params):
    m, n = ins[0].shape[-2:]
    return _batch(ins[0]) * (_householder_qr(m, n) + _form_q(m, outs[0].shape[-1], min(m, n)))


_LINALG = {"cholesky": _cholesky, "triangular_solve": _triangular_solve, "lu": _lu,
           "geqrf": _geqrf, "householder_product": _householder_product, "qr": _qr}


# --- calls and control flow: their bodies --------------------------------------------------

def _body(key):
    return lambda params: _jaxpr_cost(params[key])


def _cond(params):
    worst = _Cost()
    for branch in params["branches"]:
        worst.maximum(_jaxpr_cost(branch))
    return worst


def _while(params):
    c = _jaxpr_cost(params["body_jaxpr"])
    c.add(_jaxpr_cost(params["cond_jaxpr"]))
    return c


def _scan(params):
    """What control_flow/scan.py emits: a while loop whose body holds ``u`` copies of the
    step (counted once, as XLA counts a loop body), then the remaining steps straight-line."""
    length, jaxpr = params["length"], params["jaxpr"]
    u = params["unroll"] if params["unroll"] > 1 else scan_lowering._auto_unroll(jaxpr.jaxpr,
                                                                                 length)
    u = min(u, length) if length else 1
    n_loop = (length // u) * u
    c = _Cost()
    c.add(_jaxpr_cost(jaxpr), (u if n_loop else 0) + length - n_loop)
    if n_loop > u:  # XLA drops a loop of one trip, with its counter, as a constant
        n_carry = params["num_carry"]
        sliced = (len(jaxpr.jaxpr.invars) - params["num_consts"] - n_carry
                  + len(jaxpr.jaxpr.outvars) - n_carry)
        # the counter's compare and add; with xs or ys to index, the u - 1 indices of the
        # unrolled copies and, reversed, a subtraction per copy
        c.flops += 2 + (u - 1 + (u if params["reverse"] else 0) if sliced else 0)
    return c


_CALLS = {"jit": _body("jaxpr"), "checkpoint": _body("jaxpr"),
          "custom_jvp_call": _body("call_jaxpr"), "custom_vjp_call": _body("call_jaxpr"),
          "custom_vmap_call": _body("jaxpr"), "linear_call": _body("callee"),
          "custom_linear_solve": lambda params: _jaxpr_cost(params["jaxprs"].solve),
          "cond": _cond, "while": _while, "scan": _scan}
