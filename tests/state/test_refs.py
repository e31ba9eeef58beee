"""Mutable array references (`jax.new_ref`, docs/refs.md): eager reads and writes against the
same NumPy updates, refs in `jit` (arguments updated, closed over, made inside), in `scan`,
`fori_loop`, `while_loop` and `cond` bodies, `grad` through functions that use refs (finite
differences), `vmap` (a Python loop), and JAX's errors."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax.test_util import check_grads, count_compiles


@pytest.fixture
def x64():
    pyjax.config.update("jax_enable_x64", True)
    yield
    pyjax.config.update("jax_enable_x64", False)


# ---- eager ----

def test_eager_reads_and_writes_follow_numpy():
    init = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    r, a = pyjax.new_ref(jnp.asarray(init)), init.copy()
    assert isinstance(r, pyjax.Ref) and not isinstance(r, pyjax.Array)
    assert str(pyjax.typeof(r)) == "Ref{float32[3,4]}" and r.shape == (3, 4) and len(r) == 3
    assert r.dtype == np.float32 and r.ndim == 2 and r.size == 12
    np.testing.assert_array_equal(r[1], a[1])
    np.testing.assert_array_equal(r[-1, 1:3], a[-1, 1:3])
    np.testing.assert_array_equal(r[:, ::2], a[:, ::2])
    np.testing.assert_array_equal(r[jnp.array([2, 0])], a[[2, 0]])
    r[1:] += 1.0
    a[1:] += 1.0
    r[0, 2] = 7.0
    a[0, 2] = 7.0
    r[:, ::2] = jnp.full((3, 2), -1.0)
    a[:, ::2] = -1.0
    r.addupdate(jnp.ones((3, 4)))
    a += 1.0
    pyjax.ref.addupdate(r, 2, jnp.full(4, 10.0))
    a[2] += 10.0
    np.testing.assert_array_equal(pyjax.ref.swap(r, (0, 0), np.float32(5.0)), a[0, 0])
    a[0, 0] = 5.0
    pyjax.ref.set(r, (slice(None), 3), jnp.zeros(3))
    a[:, 3] = 0.0
    np.testing.assert_array_equal(r[...], a)
    np.testing.assert_array_equal(pyjax.ref.get(r), a)
    # freeze gives the value; eagerly the ref stays usable, as in JAX
    np.testing.assert_array_equal(pyjax.freeze(r), a)
    np.testing.assert_array_equal(r[0], a[0])
    assert pyjax.free_ref(r) == ()


def test_repr_weak_type_and_int_refs():
    s = pyjax.new_ref(0.0)
    assert repr(s) == "Ref(0., dtype=float32, weak_type=True)"
    s[...] = jnp.float32(2.0)  # a strongly typed write: the value is strong, as in JAX
    assert repr(s) == "Ref(2., dtype=float32)"
    n = pyjax.new_ref(jnp.arange(5))
    n[2] += 10
    n[...] = n[...] * 2
    np.testing.assert_array_equal(n[...], np.array([0, 2, 24, 6, 8]))
    assert repr(n) == "Ref([ 0,  2, 24,  6,  8], dtype=int32)"
    k = pyjax.new_ref(np.ones(2))  # NumPy float64 is canonicalized, as for arrays
    assert k.dtype == np.float32


# ---- jit ----

def test_jit_updates_argument_refs_and_closed_over_refs():
    acc = pyjax.new_ref(jnp.zeros(3))

    @pyjax.jit
    def f():
        acc[1] += 1.0

    f()
    f()
    np.testing.assert_array_equal(acc[...], [0.0, 2.0, 0.0])

    @pyjax.jit
    def g(q, x):
        q[...] += x
        acc[0] += 1.0
        return q[0] * 2

    init = jnp.arange(3.0)
    q = pyjax.new_ref(init)
    np.testing.assert_array_equal(g(q, 1.0), 2.0)
    g(q, 1.0)  # from now on the refs' buffers are donated (nothing else holds them)
    with count_compiles() as n:
        for _ in range(2):
            out = g(q, 1.0)
    assert n() == 0  # later calls run the one compiled program
    np.testing.assert_array_equal(out, 8.0)
    np.testing.assert_array_equal(q[...], [4.0, 5.0, 6.0])
    np.testing.assert_array_equal(acc[...], [4.0, 2.0, 0.0])
    # arrays handed out (the initial value, a whole read) are never donated away
    held = q[...]
    g(q, 1.0)
    np.testing.assert_array_equal(init, [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(held, [4.0, 5.0, 6.0])
    np.testing.assert_array_equal(q[...], [5.0, 6.0, 7.0])
    q[...] = q[...] - 1.0
    # a closed-over ref is read at call time, not baked in at trace time
    c = pyjax.new_ref(2.0)
    h = pyjax.jit(lambda x: c[...] * x)
    np.testing.assert_allclose(h(3.0), 6.0)
    c[...] = 5.0
    np.testing.assert_allclose(h(3.0), 15.0)
    # pytrees of refs, static arguments, a jitted function calling another one
    d = {"a": pyjax.new_ref(1.0), "b": [pyjax.new_ref(jnp.ones(2))]}

    @pyjax.jit
    def tree(d, k):
        d["a"][...] += k
        d["b"][0][...] = d["b"][0][...] * k
    pyjax.jit(lambda d: tree(d, 3.0))(d)
    np.testing.assert_allclose(d["a"][...], 4.0)
    np.testing.assert_allclose(d["b"][0][...], [3.0, 3.0])
    pick = pyjax.jit(lambda r, i: r[i], static_argnums=1)
    np.testing.assert_allclose(pick(q, 2), 6.0)
    assert float(acc[0]) == 5.0


def test_refs_made_inside_jit_and_freeze():
    @pyjax.jit
    def f(x):
        r = pyjax.new_ref(jnp.zeros(3))
        r[...] = jnp.sin(x) * jnp.ones(3)
        r[1] += x * x
        e = pyjax.empty_ref(pyjax.typeof(x))
        e[...] = 2 * x
        return pyjax.freeze(r), e[...]

    x = np.float32(0.5)
    v, e = f(x)
    np.testing.assert_allclose(v, [np.sin(x), np.sin(x) + x * x, np.sin(x)], rtol=1e-6)
    np.testing.assert_allclose(e, 1.0)


# ---- loops and branches ----

def test_scan_fori_while_cond_write_outer_refs():
    acc = pyjax.new_ref(0.0)
    hist = pyjax.new_ref(jnp.zeros(4))

    def body(c, x):
        acc[...] += x
        hist[x.astype(jnp.int32)] = acc[...]
        return c + acc[...], None

    xs = jnp.arange(4.0)
    c, _ = lax.scan(body, 0.0, xs)
    np.testing.assert_allclose(acc[...], 6.0)
    np.testing.assert_allclose(hist[...], np.cumsum(np.arange(4.0)))
    np.testing.assert_allclose(c, np.cumsum(np.arange(4.0)).sum())

    counts = pyjax.new_ref(jnp.zeros(4, jnp.int32))

    def fb(i, carry):
        counts[i] += i
        return carry

    lax.fori_loop(0, 4, fb, 0)          # a scan (static bounds)
    pyjax.jit(lambda n: lax.fori_loop(0, n, fb, 0))(4)   # a while loop (traced bound)
    np.testing.assert_array_equal(counts[...], [0, 2, 4, 6])

    total = pyjax.new_ref(0.0)

    def wbody(i):
        total[...] += total[...] + 1.0
        return i + 1
    lax.while_loop(lambda i: total[...] < 20.0, wbody, 0)
    np.testing.assert_allclose(total[...], 31.0)  # 1, 3, 7, 15, 31

    flag = pyjax.new_ref(0)
    for p, want in [(True, 5), (False, -1)]:
        lax.cond(p, lambda: flag.__setitem__(..., 5), lambda: flag.__setitem__(..., -1))
        assert int(flag[...]) == want
    lax.switch(1, [lambda r: r.__setitem__(..., 10), lambda r: r.__setitem__(..., 11)], flag)
    assert int(flag[...]) == 11  # a ref passed as an operand is closed over


def test_nested_loops_in_jit_thread_refs_through_every_level():
    grid = pyjax.new_ref(jnp.zeros((2, 3)))

    @pyjax.jit
    def fill(scale):
        def outer(i, c):
            def inner(j, d):
                grid[i, j] += scale * (i * 3 + j)
                return d
            return lax.fori_loop(0, 3, inner, c)
        return lax.fori_loop(0, 2, outer, 0.0)

    fill(1.0)
    fill(2.0)
    np.testing.assert_allclose(grid[...], 3.0 * np.arange(6.0).reshape(2, 3))


# ---- grad and vmap ----

def _uses_refs(x):
    r = pyjax.new_ref(jnp.zeros(3, x.dtype))
    r[...] = jnp.sin(x) * jnp.ones(3, x.dtype)
    r[1] += x * x

    def body(c, t):
        r[0] = r[0] * t + jnp.cos(c)
        return c * 1.5, None
    lax.scan(body, x, jnp.arange(1.0, 4.0, dtype=x.dtype))
    return (r[...] ** 2).sum()


def test_grad_through_refs_matches_finite_differences(x64):
    x = jnp.float64(0.7)
    check_grads(_uses_refs, (x,), order=1, modes=("rev",))  # eager grad (record, replay)
    check_grads(pyjax.jit(_uses_refs), (x,), order=1)
    np.testing.assert_allclose(pyjax.jit(pyjax.grad(_uses_refs))(x), pyjax.grad(_uses_refs)(x),
                               rtol=1e-12)
    # an outer ref read inside grad is a constant of the differentiation, read at call time
    c = pyjax.new_ref(2.0)
    g = pyjax.grad(lambda y: c[...] * y * y)
    np.testing.assert_allclose(g(3.0), 12.0)
    c[...] = 5.0
    np.testing.assert_allclose(g(3.0), 30.0)
    # a ref argument that is not differentiated plumbs stop_gradient values out
    log = pyjax.new_ref(0.0)

    def plumb(y, log):
        log[...] += lax.stop_gradient(y * y)
        return jnp.sin(y)
    np.testing.assert_allclose(pyjax.grad(plumb)(0.5, log), np.cos(0.5))
    np.testing.assert_allclose(pyjax.jit(pyjax.grad(plumb))(2.0, log), np.cos(2.0))
    np.testing.assert_allclose(log[...], 4.25)


def test_vmap_of_function_using_refs_is_a_loop():
    xs = jnp.array([0.1, 0.7, -1.3])
    got = pyjax.vmap(_uses_refs)(xs)
    want = [float(_uses_refs(x)) for x in xs]
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_vmap_over_ref_arguments_writes_each_example_slice():
    def add(x, r):
        r[...] += x * jnp.arange(1.0, 3.0)

    xs = jnp.arange(3.0)
    r0 = pyjax.new_ref(jnp.zeros((3, 2)))
    pyjax.vmap(add)(xs, r0)
    r1 = pyjax.new_ref(jnp.ones((2, 3)))
    pyjax.jit(pyjax.vmap(add, in_axes=(0, 1)))(xs, r1)
    want = np.outer(np.arange(3.0), [1.0, 2.0])
    np.testing.assert_allclose(r0[...], want)
    np.testing.assert_allclose(r1[...], 1.0 + want.T)


# ---- errors ----

def test_errors_are_jaxs():
    r = pyjax.new_ref(jnp.zeros(3))
    with pytest.raises(ValueError, match=r"Invalid shape for `swap`. Ref shape: \(3,\). "
                                         r"Expected shape: \(3,\). Value shape: \(4,\)"):
        r[...] = jnp.ones(4)
    with pytest.raises(ValueError, match="Invalid shape for `swap`.*Value shape: \\(\\)"):
        r[...] = 1.0  # no broadcasting
    with pytest.raises(ValueError, match="Invalid dtype for `swap`. Ref dtype: float32. "
                                         "Value dtype: int32"):
        r[0] = 1  # no promotion: a Python int is int32
    with pytest.raises(ValueError, match="Invalid shape for `addupdate`"):
        r.addupdate(1.0)
    with pytest.raises(ValueError, match="Out of bound indexer: idx=5, dim=3"):
        r[5]
    with pytest.raises(pyjax.errors.NonConcreteBooleanIndexError):
        r[jnp.array([True, False, True])]
    with pytest.raises(TypeError, match="Error interpreting argument to new_ref"):
        pyjax.new_ref([1.0, 2.0])
    with pytest.raises(NotImplementedError, match="empty_ref"):
        pyjax.empty_ref(pyjax.typeof(jnp.zeros(2)))  # eagerly, as JAX
    with pytest.raises(NotImplementedError, match="memory_space"):
        pyjax.new_ref(1.0, memory_space="any")
    with pytest.raises(ValueError, match="traced for jit returned a mutable array reference "
                                         r"of type Ref\{float32\[\]\}, but mutable array "
                                         "references cannot be returned"):
        pyjax.jit(lambda: pyjax.new_ref(1.0))()
    with pytest.raises(ValueError, match="cannot be returned"):
        pyjax.jit(lambda q: q)(r)
    with pytest.raises(ValueError, match="only one reference to a mutable array may be passed.*"
                                         "at both a and b"):
        pyjax.jit(lambda a, b: None)(r, r)  # "at both a and b"
    with pytest.raises(ValueError, match="mutable array references cannot be carried"):
        lax.scan(lambda c, x: (c, None), pyjax.new_ref(0.0), jnp.arange(3.0))

    def frozen_read(x):
        q = pyjax.new_ref(x)
        pyjax.freeze(q)
        return q[...]
    with pytest.raises(ValueError, match="`get` must be called on `Ref` types"):
        pyjax.jit(frozen_read)(1.0)

    def frozen_write(x):
        q = pyjax.new_ref(x)
        pyjax.freeze(q)
        q[...] = x
    with pytest.raises(ValueError, match="`swap` must be called on `Ref` types"):
        pyjax.jit(frozen_write)(1.0)
    outer = pyjax.new_ref(0.0)
    with pytest.raises(Exception, match="set/swap operation with a differentiated value on a "
                                        "non-differentiated array reference"):
        pyjax.grad(lambda x: (outer.__setitem__(..., x), x)[1])(1.0)
    with pytest.raises(Exception, match="vmapped value on an unbatched array reference"):
        pyjax.vmap(lambda x: outer.__setitem__(..., x))(jnp.arange(3.0))
    with pytest.raises(ValueError, match=r"Expected cotangent type Ref\{float32\[3\]\}"):
        pyjax.grad(lambda q: q[...].sum())(r)
    assert float(outer[...]) == 0.0  # nothing leaked into the ref
    # transformations that do not thread refs say so instead of baking the value in
    with pytest.raises(NotImplementedError, match="traced for make_jaxpr uses mutable array"):
        pyjax.make_jaxpr(lambda: outer[...] + 1)()
    # a ref made inside a trace and kept outside it is dead
    kept = []
    pyjax.jit(lambda x: kept.append(pyjax.new_ref(x)))(1.0)
    with pytest.raises(ValueError, match="after the function that created it finished"):
        kept[0][...]


def test_donation_with_refs_is_honoured():
    # JAX 0.10.2 runs it and deletes the donated argument (more: test_refused_calls.py)
    r = pyjax.new_ref(jnp.zeros(3))

    def add(x):
        r[...] += x

    f = pyjax.jit(add, donate_argnums=0)
    x = jnp.ones(3) + 0.0
    f(x)
    np.testing.assert_array_equal(r[...], np.ones(3))
    assert x.is_deleted()
