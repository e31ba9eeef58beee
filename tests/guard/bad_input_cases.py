"""The table of bad inputs the guard throws at pyjax: public functions x kinds of bad
arguments (wrong types, negative/huge/float shapes, invalid axes, wrong dtypes, deleted
arrays, wrong devices, empty and 0-d arrays).

Each case is ``Case(expr, exc, pattern)``: ``expr`` is evaluated in ``namespace()``;
``exc`` is the exception type it must raise and ``pattern`` a regex its message must match
(it names the bad argument or value). ``exc=None`` means the input is valid in JAX and
``pattern`` is then a NumPy expression giving JAX's documented result.
``CRASH_PRONE`` cases once killed the process; they run in a subprocess.
Also used by ``benchmarks/reliability_trial.py``.
"""
import collections
import re

Case = collections.namedtuple("Case", "expr exc pattern")

CASES = []
CRASH_PRONE = []


def bad(expr, exc, pattern, table=CASES):
    table.append(Case(expr, exc, pattern))


def same(expr, numpy_expr):
    CASES.append(Case(expr, None, numpy_expr))


def namespace():
    """Fresh operands: x f32[2,3], i i32[2,3], s f32[], e f32[0,3], d a deleted f32[3]."""
    import numpy as np
    import pyjax as jax
    import pyjax.numpy as jnp
    from pyjax import lax, random
    d = jnp.arange(3.0) + 1
    d.delete()
    return dict(np=np, jax=jax, jnp=jnp, lax=lax, random=random,
                x=jnp.arange(6.0).reshape(2, 3), i=jnp.arange(6).reshape(2, 3),
                s=jnp.float32(2.0), e=jnp.zeros((0, 3)), d=d, key=random.key(0),
                GDN=lax.GatherDimensionNumbers, SDN=lax.ScatterDimensionNumbers)


def run_case(case, ns):
    """Returns None when ``case`` behaves as expected, else a line saying what happened.
    Exceptions other than the expected ones count as failures (a crash cannot be caught)."""
    import numpy as np
    try:
        got = eval(case.expr, ns)
        if case.exc is None:
            got = np.asarray(got)
    except Exception as e:  # noqa: BLE001 - every exception is judged below
        if case.exc is None:
            return f"raised {type(e).__name__}: {e}"
        if not isinstance(e, case.exc):
            return f"raised {type(e).__name__} (wanted {case.exc.__name__}): {e}"
        msg = str(e)
        if not re.search(case.pattern, msg, re.S):
            return f"unclear message (wanted /{case.pattern}/): {msg[:300]}"
        if "error: " in msg and ("-:" in msg or "stablehlo" in msg.lower()):
            return f"raw compiler dump reached the user: {msg[:300]}"
        return None
    if case.exc is not None:
        return f"no error, returned {str(got)[:100]!s}"
    want = np.asarray(eval(case.pattern, ns))
    if got.shape != want.shape or not np.allclose(got, want, equal_nan=True):
        return f"wrong result {got!r}, wanted {want!r}"
    return None


# --- creation: bad shapes, sizes and dtypes ------------------------------------------------
_SHAPE_FNS = ["jnp.zeros({})", "jnp.ones({})", "jnp.empty({})", "jnp.full({}, 1.0)",
              "jnp.zeros_like(x, shape={})", "jnp.full_like(x, 2, shape={})",
              "random.normal(key, {})", "random.uniform(key, {})",
              "random.randint(key, {}, 0, 3)", "random.bernoulli(key, 0.5, {})",
              "jnp.broadcast_to(s, {})", "jnp.tile(s, {})" ]
for _f in _SHAPE_FNS:
    bad(_f.format("(-1,)"), ValueError, r"negative (dimensions|repetitions).*-1")
    bad(_f.format("(2, -3)"), ValueError, r"negative (dimensions|repetitions).*-3")
    bad(_f.format("2.5"), TypeError, r"2\.5")
    bad(_f.format("(2, 1.0)"), TypeError, r"1\.0")
    bad(_f.format("'3'"), TypeError, r"'3'")
    bad(_f.format("(2, None)"), TypeError, r"None")
    bad(_f.format("(2**62,)"), ValueError, r"RESOURCE_EXHAUSTED.*bytes", CRASH_PRONE)
    bad(_f.format("(2**31, 2**31)"), ValueError, r"RESOURCE_EXHAUSTED.*2147483648", CRASH_PRONE)
    bad(_f.format("(2**64,)"), ValueError, r"18446744073709551616",
        CRASH_PRONE)
for _f in ["jnp.zeros", "jnp.ones", "jnp.empty", "jnp.eye", "jnp.identity", "jnp.arange"]:
    bad(f"{_f}(2, dtype='foo')", TypeError, r"'foo'")
    bad(f"{_f}(2, dtype=object)", TypeError, r"object")
    bad(f"{_f}(2, dtype=np.str_)", TypeError, r"str")
for _n, _arg in [("jnp.eye({})", "N"), ("jnp.eye(2, {})", "M"), ("jnp.identity({})", "N"),
                 ("jnp.linspace(0, 1, {})", "num"), ("random.split(key, {})", "num"),
                 ("random.orthogonal(key, {})", "n")]:
    bad(_n.format(-2), ValueError, rf"negative dimensions.*{_arg}.*-2")
    bad(_n.format(2.5), TypeError, r"2\.5")
    bad(_n.format("'a'"), TypeError, r"'a'")
bad("jnp.eye(2, k=1.5)", TypeError, r"k must be an integer.*1\.5")
bad("jnp.arange(0, 10, 0)", ZeroDivisionError, r"step")
bad("jnp.arange('a')", TypeError, r"str")
bad("jnp.arange(None)", TypeError, r"arange.*None")
bad("jnp.arange(jnp.ones(3))", ValueError, r"start.*\(3,\)")
bad("jnp.linspace(0, 1, 5, axis=2)", ValueError, r"axis 2")
bad("jnp.array(['a'])", TypeError, r"'a'")
bad("jnp.array([[1, 2], [3]])", ValueError, r"inhomogeneous")
bad("jnp.array(None)", TypeError, r"None")
bad("jnp.array(2**40)", OverflowError, r"1099511627776")
same("jnp.array([2**31], dtype=jnp.uint32)", "np.array([2**31], np.uint32)")
same("jnp.zeros(0)", "np.zeros(0)")
same("jnp.zeros((0, 2**40))", "np.zeros((0, 2**40))")
same("jnp.arange(5, 0)", "np.arange(5, 0)")
same("jnp.linspace(0, 1, 0)", "np.linspace(0, 1, 0)")
same("jnp.eye(0, 3)", "np.eye(0, 3)")
for _dt in ["float8_e8m0fnu", "float4_e2m1fn"]:  # not put on devices (see runtime/buffer.py)
    bad(f"jnp.zeros(3, jnp.{_dt})", TypeError, _dt)
for _dt in ["float8_e3m4", "float8_e4m3"]:
    same(f"jnp.zeros(3, jnp.{_dt}) + 1.5", "np.full(3, 1.5)")

# --- shape ops: invalid axes, permutations, sizes ------------------------------------------
for _f in ["jnp.squeeze(x, {})", "jnp.expand_dims(x, {})", "jnp.sum(x, axis={})",
           "jnp.mean(x, axis={})", "jnp.max(x, axis={})", "jnp.min(x, axis={})",
           "jnp.prod(x, axis={})", "jnp.any(x, axis={})", "jnp.all(x, axis={})",
           "jnp.std(x, axis={})", "jnp.var(x, axis={})", "jnp.argmax(x, axis={})",
           "jnp.argmin(x, axis={})", "jnp.cumsum(x, axis={})", "jnp.cumprod(x, axis={})",
           "jnp.sort(x, axis={})", "jnp.argsort(x, axis={})", "jnp.flip(x, axis={})",
           "jnp.concatenate([x, x], axis={})", "jnp.stack([x, x], axis={})",
           "jnp.split(x, 1, axis={})", "jnp.take(x, 0, axis={})",
           "jnp.nansum(x, axis={})", "jnp.count_nonzero(x, axis={})", "jnp.median(x, axis={})",
           "random.categorical(key, x, axis={})", "random.permutation(key, x, axis={})"]:
    bad(_f.format(7), ValueError, r"axis 7 is out of bounds")
    bad(_f.format(-7), IndexError, r"axis -7 is out of bounds")  # AxisError is both
    bad(_f.format(1.0), TypeError, r"1\.0")
    bad(_f.format("'0'"), TypeError, r"'0'")
for _f in ["jnp.sum", "jnp.max", "jnp.mean", "jnp.prod", "jnp.squeeze", "jnp.expand_dims"]:
    bad(f"{_f}(x, axis=(0, 0))" if "dims" not in _f else f"{_f}(x, (0, 0))",
        ValueError, r"repeated axis")
for _f in ["jnp.sum", "jnp.mean", "jnp.argmax", "jnp.cumsum", "jnp.squeeze"]:
    bad(f"{_f}(s, axis=0)", ValueError, r"axis 0 is out of bounds for array of dimension 0")
for _f in ["jnp.argmin", "jnp.argmax", "jnp.cumsum", "jnp.cumprod", "jnp.sort"]:
    bad(f"{_f}(x, axis=(0, 1))", TypeError, r"\(0, 1\)")
bad("x.reshape(7)", TypeError, r"\(2, 3\).*\(7,\)")
bad("x.reshape(-1, -1)", ValueError, r"one unknown dimension")
bad("x.reshape(4, -1)", TypeError, r"\(4, -1\)")
bad("x.reshape(2.5, 2)", TypeError, r"2\.5")
bad("jnp.reshape(x, (3, 'a'))", TypeError, r"'a'")
bad("jnp.reshape(x, (-2, 3))", ValueError, r"-2")
bad("jnp.transpose(x, (0, 0))", ValueError, r"\(0, 0\)")
bad("jnp.transpose(x, (0, 2))", ValueError, r"axis 2")
bad("jnp.transpose(x, (0,))", ValueError, r"\(0,\)")
bad("jnp.transpose(x, (0.0, 1))", TypeError, r"0\.0")
bad("jnp.moveaxis(x, 0, 5)", ValueError, r"axis 5")
bad("jnp.swapaxes(x, 0, 5)", ValueError, r"axis 5")
bad("jnp.squeeze(x, 0)", ValueError, r"shape=\(2, 3\)")
bad("jnp.concatenate([x, jnp.ones(3)])", ValueError, r"\(2, 3\), \(3,\)")
bad("jnp.concatenate([x, jnp.ones((2, 2))], axis=0)", TypeError,
    r"\(2, 3\).*\(2, 2\)|\(2, 2\).*\(2, 3\)")
bad("jnp.concatenate([])", ValueError, r"at least one array")
bad("jnp.concatenate([s, s])", ValueError, r"[Zz]ero-dimensional")
bad("jnp.stack([x, jnp.ones(3)])", ValueError, r"same shape")
bad("jnp.stack([])", ValueError, r"at least one array")
bad("jnp.split(x, 4, axis=1)", ValueError, r"equal division")
bad("jnp.split(x, 0)", ValueError, r"0")
bad("jnp.split(x, 2.5)", TypeError, r"2\.5")
bad("jnp.split(s, 2)", ValueError, r"zero-dimensional")
bad("jnp.broadcast_to(x, (3, 3))", ValueError, r"\(2, 3\).*\(3, 3\)")
bad("jnp.broadcast_to(x, (3,))", ValueError, r"\(2, 3\).*\(3,\)")
bad("jnp.broadcast_to(x, (2.0, 3))", TypeError, r"2\.0")
bad("x + jnp.ones(4)", ValueError, r"\(2, 3\).*\(4,\)")
bad("jnp.matmul(x, x)", ValueError, r"\(2, 3\)")
bad("jnp.matmul(s, s)", ValueError, r"ndim")
# JAX raises TypeError (from dot_general); pyjax NumPy's ValueError (tests/numpy/test_products)
bad("jnp.dot(x, jnp.ones(4))", TypeError, r"\(2, 3\).*\(4,\)")  # TypeError, as JAX
same("jnp.squeeze(jnp.zeros((1, 3)), 0)", "np.zeros(3)")
same("jnp.expand_dims(x, -3)", "np.expand_dims(np.arange(6.0).reshape(2, 3), -3)")
same("jnp.sum(x, axis=-2)", "np.arange(6.0).reshape(2, 3).sum(-2)")
same("jnp.concatenate([e, x])", "np.arange(6.0).reshape(2, 3)")
same("jnp.split(e, 3, axis=1)[0]", "np.zeros((0, 1))")

# --- reductions of empty and 0-d arrays ----------------------------------------------------
for _f in ["max", "min", "argmax", "argmin", "nanmax", "nanmin", "ptp"]:
    bad(f"jnp.{_f}(jnp.zeros((0,)))", ValueError, r"empty|zero-size|identity")
    bad(f"jnp.{_f}(e, axis=0)", ValueError, r"empty|zero-size|identity")
for _f in ["sum", "prod", "any", "all", "mean", "count_nonzero", "cumsum", "nansum"]:
    same(f"jnp.{_f}(jnp.zeros((0,)))", f"np.{_f}(np.zeros((0,)))")
    same(f"jnp.{_f}(s)", f"np.{_f}(np.float32(2.0))")
same("jnp.max(e, axis=1)", "np.zeros(0)")
same("jnp.max(jnp.zeros((0,)), initial=1.0)", "1.0")
same("jnp.argmax(s)", "0")
bad("jnp.sort(s)", ValueError, r"axis -1 is out of bounds for array of dimension 0")
same("jnp.var(x, ddof=-1)", "np.var(np.arange(6.0), ddof=-1)")

# --- indexing ------------------------------------------------------------------------------
bad("x[0, 0, 0]", IndexError, r"[Tt]oo many indices")
bad("x['a']", TypeError, r"'a'")
bad("x[1.5]", TypeError, r"1\.5")
bad("x[None, ..., ...]", IndexError, r"ellipsis")
bad("x[jnp.array([True])]", IndexError, r"boolean")
bad("x[jnp.array([0.5])]", TypeError, r"float32")
bad("s[0]", IndexError, r"0-dimensional")
bad("jnp.zeros((0,))[0]", IndexError, r"out of bounds.*size 0")
bad("x.at['a'].set(1.)", TypeError, r"'a'")
bad("x.at[0].set(jnp.ones(5))", ValueError, r"\(5,\)")
bad("jnp.take(x, jnp.array([1.5]))", TypeError, r"float32")
bad("jnp.take(x, 0, mode='bogus')", ValueError, r"bogus")
bad("jnp.take(x, 2**40)", OverflowError, r"1099511627776.*int32")
bad("x[2**40]", OverflowError, r"1099511627776.*int32")
bad("x.at[2**40].set(1.0)", OverflowError, r"1099511627776.*int32")
bad("x.at[0, -2**40].add(1.0)", OverflowError, r"-1099511627776.*int32")
same("x[1, -1]", "5.0")
same("x[5:9]", "np.zeros((0, 3))")
same("jnp.take(x, 10)", "np.nan")  # JAX's default mode for take is "fill"
same("jnp.arange(3.0).at[5].set(1.0)", "np.arange(3.0)")  # out-of-bound updates dropped
same("jnp.arange(3.0).at[5].get(mode='clip')", "2.0")

# --- lax: dtypes never promote, shapes and attributes checked ------------------------------
bad("lax.add(x, jnp.ones(3))", TypeError, r"\(2, 3\), \(3,\)")
bad("lax.add(x, i)", TypeError, r"float32, int32")
bad("lax.add(jnp.float32(1), jnp.int32(1))", TypeError, r"float32, int32")
bad("lax.add(1, 1.0)", TypeError, r"same dtypes")
bad("lax.mul(x, 'a')", TypeError, r"'a'")
bad("lax.sub(x, None)", TypeError, r"None")
bad("lax.max(x, jnp.ones((2, 3), jnp.float16))", TypeError, r"float32, float16")
same("lax.add(x, 1)", "np.arange(6.0).reshape(2, 3) + 1")  # weak Python scalars are fine
same("lax.add(i, 2)", "np.arange(6).reshape(2, 3) + 2")
same("lax.sub(x, np.float64(1))", "np.arange(6.0).reshape(2, 3) - 1")  # f64 -> f32 without x64
bad("lax.add(i, 1.5)", TypeError, r"int32, float32 \(the Python scalar 1.5\)")
bad("lax.add(i, True)", TypeError, r"int32, bool")
bad("lax.add(jnp.float32(1), 1j)", TypeError, r"float32, complex64")
bad("lax.max(i, 2**40)", OverflowError, r"1099511627776")
bad("lax.add(x, np.ones((2, 3), np.int64))", TypeError, r"float32, int32")
bad("lax.dot_general(x, x, (((1,), (0,)), ((), ())))", TypeError, r"\(3,\) and \(2,\)")
bad("lax.dot_general(x, x, (((5,), (1,)), ((), ())))", TypeError, r"\(5,\)")
bad("lax.dot_general(x, x, ((1, 1), ((), ())))", TypeError, r"sequence of ints")
bad("lax.dot_general(x, i, (((1,), (1,)), ((), ())))", TypeError, r"float32, int32")
bad("lax.dot_general(x, x, 'a')", TypeError, r"'a'")
bad("lax.pad(x, jnp.int32(0), [(1, 1, 0), (0, 0, 0)])", TypeError, r"float32 and int32")
bad("lax.pad(x, 0.0, [(1, 1, 0)])", ValueError, r"padding_config")
bad("lax.pad(x, 0.0, [(1, 1, -1), (0, 0, 0)])", ValueError, r"interior")
bad("lax.pad(x, 0.0, [(-5, 0, 0), (0, 0, 0)])", ValueError, r"-3")
bad("lax.pad(x, 0.0, [(1.5, 1, 0), (0, 0, 0)])", TypeError, r"1\.5")
bad("lax.pad(x, jnp.ones(2), [(1, 1, 0), (0, 0, 0)])", ValueError, r"scalar")
bad("lax.reduce_precision(x, -1, 2)", ValueError, r"exponent_bits.*-1")
bad("lax.reduce_precision(x, 5, -3)", ValueError, r"mantissa_bits.*-3")
bad("lax.reduce_precision(x, 2.5, 2)", TypeError, r"exponent_bits.*2\.5")
bad("lax.reduce_precision(x, 5, 2.5)", TypeError, r"mantissa_bits.*2\.5")
bad("lax.reduce_precision(i, 5, 2)", TypeError, r"int32")
bad("lax.reduce_precision(x, 2**62, 1)", ValueError, r"exponent_bits.*int32.*4611686018427387904")
bad("lax.reduce_precision(x, 1, 2**31)", ValueError, r"mantissa_bits.*int32.*2147483648")
bad("lax.bitcast_convert_type(jnp.ones(3, jnp.complex64), jnp.uint8)", TypeError,
    r"complex64.*uint8")
bad("lax.bitcast_convert_type(x, 'foo')", TypeError, r"'foo'")
bad("lax.bitcast_convert_type(x, 'S')", TypeError, r"new_dtype.*S")
bad("lax.bitcast_convert_type(jnp.ones((3, 3), jnp.int16), jnp.float32)", TypeError, r"\(3, 3\)")
bad("lax.convert_element_type(x, 'foo')", TypeError, r"'foo'")
bad("lax.convert_element_type(x, object)", TypeError, r"object")
bad("lax.integer_pow(x, 1.5)", TypeError, r"1\.5")
bad("lax.integer_pow(x, 'a')", TypeError, r"'a'")
bad("lax.integer_pow(i, -1)", TypeError, r"-1.*int32")
same("lax.integer_pow(x, 3)", "np.arange(6.0).reshape(2, 3) ** 3")
bad("lax.slice(x, (0, 0), (3, 3))", TypeError, r"\(3, 3\)")
bad("lax.slice(x, (0,), (1,))", TypeError, r"\(0,\)")
bad("lax.slice(x, (1, 0), (0, 3))", TypeError, r"\(1, 0\)")
bad("lax.slice(x, (-1, 0), (1, 3))", TypeError, r"\(-1, 0\)")
bad("lax.slice(x, (0, 0), (2, 3), (0, 1))", TypeError, r"\(0, 1\)")
bad("lax.slice(x, (0.5, 0), (2, 3))", TypeError, r"0\.5")
bad("lax.dynamic_slice(x, (0,), (1, 1))", ValueError, r"1 vs 2")
bad("lax.dynamic_slice(x, (0, 0), (3, 1))", TypeError, r"\(3, 1\)")
bad("lax.dynamic_slice(x, (0, 0), (-1, 1))", TypeError, r"\(-1, 1\)")
bad("lax.dynamic_slice(x, (0.5, 0), (1, 1))", TypeError, r"0\.5")
same("lax.dynamic_slice(x, (5, 5), (1, 1))", "[[5.0]]")  # start indices are clamped
bad("lax.dynamic_update_slice(x, jnp.ones((3, 3)), (0, 0))", TypeError, r"\(3, 3\)")
bad("lax.dynamic_update_slice(x, jnp.ones((1, 1), jnp.int32), (0, 0))", TypeError, r"int32")
_G = "GDN(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=({}))"
same(f"lax.gather(jnp.arange(5.), jnp.array([[7]]), {_G.format('0,')}, (1,))", "[4.0]")
same(f"lax.gather(jnp.arange(5.), jnp.array([[7]]), {_G.format('0,')}, (1,), mode='fill')",
     "[np.nan]")
bad(f"lax.gather(jnp.arange(5.), jnp.array([[7]]), {_G.format('0,')}, (6,))", TypeError,
    r"slice_sizes")
bad(f"lax.gather(jnp.arange(5.), jnp.array([[7]]), {_G.format('1,')}, (1,))", TypeError,
    r"start_index_map")
bad(f"lax.gather(jnp.arange(5.), jnp.array([[0.5]]), {_G.format('0,')}, (1,))", TypeError,
    r"float32")
bad(f"lax.gather(jnp.arange(5.), jnp.array([[7]]), {_G.format('0,')}, (1,), mode='bogus')",
    ValueError, r"bogus")
bad("lax.gather(jnp.arange(5.), jnp.array([[7]]), (), (1,))", TypeError, r"tuple")
_S = "SDN(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=({}))"
same(f"lax.scatter(jnp.arange(5.), jnp.array([[7]]), jnp.array([9.]), {_S.format('0,')})",
     "np.arange(5.0)")  # out-of-bound updates are dropped (FILL_OR_DROP)
same(f"lax.scatter_add(jnp.arange(5.), jnp.array([[1]]), jnp.array([9.]), {_S.format('0,')})",
     "[0., 10., 2., 3., 4.]")
bad(f"lax.scatter(jnp.arange(5.), jnp.array([[1]]), jnp.array([9]), {_S.format('0,')})",
    TypeError, r"float32.*int32")
bad(f"lax.scatter_add(jnp.arange(5.), jnp.array([[1]]), jnp.array([9.]), {_S.format('3,')})",
    TypeError, r"\(3,\)")
bad(f"lax.scatter(jnp.arange(5.), jnp.array([[1]]), jnp.array([9.]), {_S.format('0,')}, "
    "mode='bogus')", ValueError, r"bogus")

# --- transformations: options -------------------------------------------------------------
for _t in ["jax.jit", "jax.grad", "jax.vmap", "jax.value_and_grad", "jax.jacfwd", "jax.jacrev",
           "jax.make_jaxpr", "jax.hessian", "jax.linearize", "jax.vjp", "jax.eval_shape"]:
    bad(f"{_t}(None)", TypeError, r"callable.*None|None.*callable")
    bad(f"{_t}(3)", TypeError, r"callable.*3|3.*callable")
bad("jax.jit(lambda a: a, static_argnums=5)(x)", ValueError, r"static_argnums.*5")
bad("jax.jit(lambda a: a, static_argnums=-5)(x)", ValueError, r"static_argnums.*-5")
bad("jax.jit(lambda a: a, static_argnums='a')", TypeError, r"'a'")
bad("jax.jit(lambda a: a, static_argnames=('b',))", ValueError, r"'b'")
bad("jax.jit(lambda a: a, donate_argnums=5)(x)", ValueError, r"donate_argnums.*5")
bad("jax.jit(lambda a: a, donate_argnums=1.5)", TypeError, r"1\.5")
bad("jax.jit(lambda a: a, static_argnums=0)(x)", ValueError, r"[Nn]on-hashable")
bad("jax.jit(lambda a: a, bogus=1)", TypeError, r"bogus")
bad("jax.jit(lambda a: a)('a')", TypeError, r"'a'")
bad("jax.jit(lambda a: a)(object())", TypeError, r"object")
bad("jax.jit(lambda a: a, device=3)", TypeError, r"device.*3")
bad("jax.jit(lambda a: a, backend='gpu')(x)", RuntimeError, r"gpu")
bad("jax.jit(lambda a, b: a)(x)", TypeError, r"'b'")
bad("jax.grad(lambda a: a)(x)", TypeError, r"scalar.*\(2, 3\)")
bad("jax.grad(lambda a: a.sum())(i)", TypeError, r"int32")
bad("jax.grad(lambda a: a.sum(), argnums=3)(x)", TypeError, r"argnums=3")
bad("jax.grad(lambda a: a.sum(), argnums=1.5)(x)", TypeError, r"argnums.*1\.5")
bad("jax.grad(lambda a: a.sum(), argnums=())(x)", ValueError, r"argnums")
bad("jax.grad(lambda a: a.sum(), holomorphic=True)(x)", TypeError, r"complex.*float32")
bad("jax.grad(lambda a: float(a) * a)(s)", TypeError, r"[Cc]oncret")
bad("jax.grad(lambda a: jnp.sum(np.asarray(a)))(x)", TypeError, r"numpy|NumPy|__array__")
bad("jax.vmap(lambda a: a, in_axes=2)(x)", ValueError, r"axis 2")
bad("jax.vmap(lambda a: a, in_axes=1.5)(x)", TypeError, r"1\.5")
bad("jax.vmap(lambda a: a, in_axes=(0, 0))(x)", ValueError, r"in_axes")
bad("jax.vmap(lambda a: a, out_axes=5)(x)", ValueError, r"out_axes 5")
bad("jax.vmap(lambda a, b: a + b)(x, jnp.ones(3))", ValueError, r"inconsistent sizes")
bad("jax.vmap(lambda a: a)(s)", ValueError, r"rank should be at least 1")
bad("jax.vmap(lambda a: a, in_axes=None)(x)", ValueError, r"non-None")
bad("jax.vmap(lambda a: a, in_axes=None, axis_size=-1)(x)", ValueError, r"axis_size.*-1")
bad("jax.vmap(lambda a: a, in_axes=None, axis_size=1.5)(x)", TypeError, r"axis_size.*1\.5")
bad("jax.jvp(lambda a: a, (x,), (jnp.ones(3),))", ValueError, r"\(3,\)")
bad("jax.jvp(lambda a: a, (x,), x)", TypeError, r"tuples or lists")
bad("jax.vjp(lambda a: a, x)[1](jnp.ones(3))", ValueError, r"f32\[3\]")
bad("jax.eval_shape(lambda a: a, 'a')", TypeError, r"'a'")
bad("jax.ShapeDtypeStruct((2, 2.5), jnp.float32)", TypeError, r"2\.5")
bad("jax.ShapeDtypeStruct((-1, 3), jnp.float32)", ValueError, r"-1")
bad("jax.ShapeDtypeStruct((2,), 'foo')", TypeError, r"'foo'")
bad("jax.checkpoint(lambda a: a, policy='bogus')", TypeError, r"policy.*'bogus'")
bad("jax.grad(jax.checkpoint(lambda a: jnp.sin(a).sum(), static_argnums=5))(x)", ValueError,
    r"static_argnums.*5")
bad("lax.cond(True, lambda a: a, lambda a: a[0], x)", TypeError, r"float32\[3\]")
bad("lax.cond(jnp.ones(2) > 0, lambda a: a, lambda a: a, x)", TypeError, r"\(2,\)")
bad("lax.switch(1.5, [lambda a: a, lambda a: a * 2], x)", TypeError, r"1\.5")
bad("lax.scan(lambda c, a: (jnp.ones(2), a), 0.0, x)", TypeError, r"carry")
bad("lax.scan(lambda c, a: (c, a), 0.0, x, length=5)", ValueError, r"length.*5")
bad("lax.scan(lambda c, a: (c, a), 0.0, s)", ValueError, r"leading axis")
bad("lax.while_loop(lambda c: jnp.ones(2) > 0, lambda c: c, 0.0)", TypeError, r"bool\[2\]")
# float bounds run as a while_loop, as in JAX: i = 0, 1, 2, 3 while i < 3.5
same("lax.fori_loop(0, 3.5, lambda i, c: c + i, 0)", "6.0")
same("lax.cond(1.5, lambda a: a, lambda a: -a, x)", "np.arange(6.0).reshape(2, 3)")  # 'iuf'
same("lax.switch(5, [lambda a: a, lambda a: a * 2], x)", "np.arange(6.0).reshape(2, 3) * 2")
same("jax.vmap(lambda a: a * 2)(e)", "np.zeros((0, 3))")

# --- more jnp arguments -------------------------------------------------------------------
bad("jnp.round(x, 1.5)", TypeError, r"decimals.*1\.5")
bad("jnp.nonzero(x, size=-1)", ValueError, r"size.*-1")
bad("jnp.unique(x, size=-1)", ValueError, r"size.*-1")
bad("jnp.nonzero(x, size=1.5)", TypeError, r"size.*1\.5")
bad("jnp.sum(x, dtype='foo')", TypeError, r"'foo'")
bad("jnp.sum(x, out=np.zeros(3))", NotImplementedError, r"out")
bad("jnp.sum(x, where=jnp.ones(4, bool))", ValueError, r"\(4,\)")
bad("x.astype('foo')", TypeError, r"'foo'")
bad("jnp.repeat(x, -1)", ValueError, r"-1")
bad("jnp.repeat(x, jnp.array([1, 2]), axis=1)", ValueError, r"\(2,\)")
bad("jnp.roll(x, 1.5)", TypeError, r"1\.5")
bad("jnp.einsum('ij,jk->ik', x, x)", ValueError, r"'j'")
bad("jnp.einsum('ij->k', x)", ValueError, r"'k'")
bad("jnp.where(x > 0, x)", ValueError, r"both or neither")
bad("jnp.sort(x, kind='bogus')", TypeError, r"kind")
bad("jnp.searchsorted(x, 1.0)", ValueError, r"\(2, 3\)")
bad("jnp.diag(jnp.ones((2, 2, 2)))", ValueError, r"\(2, 2, 2\)")
bad("jnp.trace(x, axis1=0, axis2=0)", ValueError, r"axis1 and axis2")
bad("jnp.matmul(x, x.T, precision='bogus')", ValueError, r"'bogus'")
bad("jnp.dot(x, x.T, preferred_element_type='foo')", TypeError, r"'foo'")
bad("jnp.meshgrid(x, indexing='bogus')", ValueError, r"'bogus'")
bad("jnp.moveaxis(x, (0, 1), (0,))", ValueError, r"2 vs 1")
bad("jnp.arange(3, dtype=jnp.uint2)", TypeError, r"uint2")
bad("jnp.ones(3, dtype=jnp.int4)", TypeError, r"int4")
same("jnp.nonzero(x, size=0)[0]", "np.zeros(0)")
same("jnp.round(x / 7, 2)", "np.round(np.arange(6.0).reshape(2, 3) / 7, 2)")
same("jax.jit(lambda a: a.sum())(e)", "0.0")
same("jax.grad(lambda a: (a * a).sum())(e)", "np.zeros((0, 3))")

# --- deleted arrays -----------------------------------------------------------------------
for _use in ["d + 1", "np.asarray(d)", "jnp.sum(d)", "d.reshape(3, 1)", "d[0]", "float(d[0])",
             "jax.jit(lambda a: a * 2)(d)", "jax.grad(lambda a: a.sum())(d)",
             "jax.vmap(lambda a: a * 2)(d)", "jax.device_put(d)", "d.block_until_ready()",
             "lax.add(d, d)", "lax.dynamic_slice(d, (0,), (1,))", "d.tolist()", "d.copy()",
             "jnp.concatenate([d, d])", "jax.device_put(d, jax.devices()[-1])", "d.at[0].set(1)",
             "random.normal(key, (3,)) + d", "jax.jvp(lambda a: a * 2, (d,), (d,))"]:
    bad(_use, RuntimeError, r"deleted.*float32\[3\]")

# --- wrong devices and platforms ---------------------------------------------------------
bad("jax.devices('gpu')", RuntimeError, r"gpu")
bad("jax.devices('cuda')", RuntimeError, r"cuda")
bad("jax.devices(3)", TypeError, r"3")
bad("jax.local_devices(backend='tpu')", RuntimeError, r"tpu")
bad("jax.device_count('gpu')", RuntimeError, r"gpu")
bad("jnp.zeros(3, device=jax.devices('gpu'))", RuntimeError, r"gpu")
bad("jax.jit(lambda a: a, backend='tpu')(x)", RuntimeError, r"tpu")
bad("jax.device_put(x, 'cpu:1')", TypeError, r"'cpu:1'")
bad("jax.device_put(x, 3)", TypeError, r"3.*int|int.*3")
bad("jnp.zeros(3, device='cpu')", TypeError, r"'cpu'")
bad("jax.jit(lambda a: a, device='cpu')", TypeError, r"'cpu'")
bad("jax.device_put(x, jax.devices()[-1]) + jax.device_put(x, jax.devices()[0])", ValueError,
    r"incompatible devices")
same("jax.device_put(x, jax.devices()[-1]) + x", "np.arange(6.0).reshape(2, 3) * 2")
same("jax.device_put(np.arange(3.0), None)", "np.arange(3.0)")

# Integer division by a constant zero: XLA's constant folder divides natively (SIGFPE). XLA's
# semantics: x / 0 is all ones (-1 signed, the maximum unsigned), x % 0 is x.
for _expr, _want in [
        ("jax.jit(lambda: lax.div(lax.full((2,), 0, 'int32'), 0))()", "np.array([-1, -1], np.int32)"),
        ("jax.jit(lambda: lax.rem(lax.full((2,), 5, 'int32'), 0))()", "np.array([5, 5], np.int32)"),
        ("jax.jit(lambda: lax.div(lax.full((2,), 7, 'uint8'), np.uint8(0)))()",
         "np.array([255, 255], np.uint8)"),
        ("jax.jit(lambda: jnp.full(3, 4, 'int32') // 0)()", "np.array([-2, -2, -2], np.int32)")]:
    CRASH_PRONE.append(Case(_expr, None, _want))

# --- structured lax.linalg, custom_linear_solve / custom_root, scipy matrix functions ------
bad("lax.linalg.tridiagonal_solve(x[0], x[0], x[0], x)", ValueError, r"b must have shape.*\(2, 3\)")
bad("lax.linalg.tridiagonal_solve(x[0], x[0, :2], x[0], x.T)", ValueError, r"equal shapes")
bad("lax.linalg.schur(x)", ValueError, r"square matrix.*\(2, 3\)")
bad("lax.linalg.hessenberg(x[0])", ValueError, r"at least 2 dimensions.*\(3,\)")
bad("lax.linalg.tridiagonal(i[:, :2])", TypeError, r"floating or complex.*int32")
bad("lax.linalg.schur(x[:, :2], sort_eig_vals=True)", NotImplementedError, r"sort_eig_vals")
bad("lax.linalg.cholesky_update(x[:, :2], x[0])", ValueError, r"w must be float32\[2\]")
bad("lax.custom_linear_solve(lambda v: v[:1], x[0], lambda mv, b: b)", TypeError,
    r"matvec\(\) output shapes must match b")
bad("lax.custom_linear_solve(lambda v: v, x[0], 3)", TypeError, r"callable.*int")
bad("lax.custom_root(lambda v: v, x[0], 3, 4)", TypeError, r"callable")
bad("jax.scipy.sparse.linalg.cg(x, x[0])", ValueError, r"square.*\(2, 3\)")
bad("jax.scipy.sparse.linalg.gmres(x[:, :2], x[0, :2], restart=0)", ValueError, r"restart.*0")
bad("jax.scipy.linalg.expm(x)", ValueError, r"square.*\(2, 3\)")
bad("jax.scipy.linalg.sqrtm(x)", ValueError, r"square.*\(2, 3\)")
bad("jax.scipy.linalg.funm(x[:, :2], 3)", TypeError, r"func must be callable.*int")
bad("jax.scipy.linalg.schur(x[:, :2], output='upper')", ValueError, r"'upper'")
same("jax.scipy.linalg.expm(jnp.zeros((2, 2)))", "np.eye(2, dtype=np.float32)")
same("lax.linalg.tridiagonal_solve(jnp.zeros(0), jnp.zeros(0), jnp.zeros(0), jnp.zeros((0, 2)))",
     "np.zeros((0, 2), np.float32)")
same("lax.linalg.schur(jnp.zeros((0, 0)))[0]", "np.zeros((0, 0), np.float32)")
same("lax.linalg.schur(jnp.full((3, 3), jnp.nan))[0]", "np.full((3, 3), np.nan, np.float32)")
same("jax.scipy.sparse.linalg.cg(jnp.eye(2), jnp.zeros(2))[0]", "np.zeros(2, np.float32)")
bad("jax.scipy.linalg.qr_multiply(x, x.T, mode='left')", ValueError, r"c must have 2 rows")
bad("jax.scipy.linalg.polar(x, side='middle')", ValueError, r"'middle'")
bad("jax.scipy.linalg.eigh_tridiagonal(x[0], x[0], eigvals_only=True)", ValueError,
    r"e \(n-1,\).*\(3,\)")
bad("jax.scipy.linalg.solve_sylvester(x[:, :2], x[:, :2], x)", ValueError, r"C must have shape")
# mutable array references (tests/state/test_refs.py)
bad("jax.new_ref([1.0, 2.0])", TypeError, r"new_ref.*list")
bad("jax.new_ref(x, kind='bogus')", NotImplementedError, r"kind='bogus'")
bad("jax.new_ref(x).__setitem__(0, i[0])", ValueError, r"dtype.*float32.*int32")
bad("jax.new_ref(x).__setitem__(0, x)", ValueError, r"Expected shape: \(3,\). Value shape: \(2, 3\)")
bad("jax.new_ref(x)[5]", ValueError, r"idx=5, dim=2")
bad("jax.new_ref(x)[0.5]", IndexError, r"float32")
bad("jax.ref.get(x, 0)", TypeError, r"get expects a mutable array reference.*ArrayImpl")
bad("jax.ref.addupdate(jax.new_ref(x), (), s)", ValueError, r"addupdate.*Value shape: \(\)")
bad("jax.free_ref(x)", TypeError, r"free_ref expects a mutable array reference")
bad("jax.empty_ref(3)", TypeError, r"empty_ref expects.*3")
same("jax.freeze(jax.new_ref(x))", "np.arange(6.0, dtype=np.float32).reshape(2, 3)")
same("jax.ref.swap(jax.new_ref(x), (1, 2), s)", "np.float32(5.0)")
