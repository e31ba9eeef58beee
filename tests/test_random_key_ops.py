"""Key arrays through the lax and jnp operations JAX 0.10.2 allows on them (observed with
JAX 0.10.2: the shape primitives, select_n, gather/scatter, eq/ne, the filled-like
constructors and the jnp functions built on them), and refused by the numeric ones.

Oracle: the same operation on the key data (``random.key_data``) in NumPy, with the key
data's trailing dimension carried along; a Python loop for vmap; eager for jit."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax, random

GRID = random.split(random.key(3), (2, 3))      # key<fry>[2, 3]
OTHER = random.split(random.key(4), (2, 3))
K1, K2 = random.split(random.key(5))
D, E = np.asarray(random.key_data(GRID)), np.asarray(random.key_data(OTHER))  # u32[2,3,2]
D1 = np.asarray(random.key_data(K1))
PRED = np.array([[True, False, True], [False, False, True]])
IDX = np.array([2, 0, 2])


def _data(k):
    return np.asarray(random.key_data(k))


def _check_keys(out, expected, dtype=GRID.dtype):
    assert isinstance(out, random.PRNGKeyArray), type(out)
    assert out.dtype == dtype
    np.testing.assert_array_equal(_data(out), expected)


# name -> (the operation on key arrays, the same operation on uint32[..., 2] key data)
LAX_CASES = {
    "reshape": (lambda k, o, i: lax.reshape(k, (3, 2)), lambda d, e, i: d.reshape(3, 2, 2)),
    "reshape_dims": (lambda k, o, i: lax.reshape(k, (6,), dimensions=(1, 0)),
                     lambda d, e, i: d.transpose(1, 0, 2).reshape(6, 2)),
    "transpose": (lambda k, o, i: lax.transpose(k, (1, 0)), lambda d, e, i: d.transpose(1, 0, 2)),
    "broadcast_in_dim": (lambda k, o, i: lax.broadcast_in_dim(k, (4, 2, 3), (1, 2)),
                         lambda d, e, i: np.broadcast_to(d, (4, 2, 3, 2))),
    "squeeze": (lambda k, o, i: lax.squeeze(k[:1], (0,)), lambda d, e, i: d[0]),
    "expand_dims": (lambda k, o, i: lax.expand_dims(k, (-1,)), lambda d, e, i: d[:, :, None]),
    "rev": (lambda k, o, i: lax.rev(k, (1,)), lambda d, e, i: d[:, ::-1]),
    "slice": (lambda k, o, i: lax.slice(k, (0, 0), (2, 3), (1, 2)), lambda d, e, i: d[:, ::2]),
    "index_in_dim": (lambda k, o, i: lax.index_in_dim(k, -1, 1, keepdims=False),
                     lambda d, e, i: d[:, -1]),
    "dynamic_slice": (lambda k, o, i: lax.dynamic_slice(k, (1, i), (1, 2)),
                      lambda d, e, i: d[1:2, min(i, 1):min(i, 1) + 2]),
    "dynamic_update_slice": (lambda k, o, i: lax.dynamic_update_slice(k, o[:1, :2], (1, i)),
                             lambda d, e, i: _dus(d, e[:1, :2], (1, min(i, 1)))),
    "concatenate": (lambda k, o, i: lax.concatenate([k, o], 1),
                    lambda d, e, i: np.concatenate([d, e], 1)),
    "select_n": (lambda k, o, i: lax.select_n(PRED, k, o),
                 lambda d, e, i: np.where(PRED[..., None], e, d)),
    "select_scalar": (lambda k, o, i: lax.select(i > 0, k, o), lambda d, e, i: d if i > 0 else e),
    "gather": (lambda k, o, i: lax.gather(
        k, np.array([[1, 0], [0, 2]]), lax.GatherDimensionNumbers(
            offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0, 1)), (1, 2),
        mode="clip"),
        lambda d, e, i: np.stack([d[1, 0:2], d[0, 1:3]])),
    "scatter": (lambda k, o, i: lax.scatter(
        k, np.array([[1], [0]]), o[:, :2], lax.ScatterDimensionNumbers(
            update_window_dims=(1,), inserted_window_dims=(0,),
            scatter_dims_to_operand_dims=(0,)), mode="clip"),
        lambda d, e, i: _scatter_rows(d, e[:, :2])),
    "full_like_zero": (lambda k, o, i: lax.full_like(k, 0), lambda d, e, i: np.zeros_like(d)),
    "full_like_key": (lambda k, o, i: lax.full_like(k, o[1, 2]),
                      lambda d, e, i: np.broadcast_to(e[1, 2], d.shape)),
    "tile": (lambda k, o, i: lax.tile(k, (1, 2)), lambda d, e, i: np.tile(d, (1, 2, 1))),
    "stop_gradient": (lambda k, o, i: lax.stop_gradient(k), lambda d, e, i: d),
}


def _dus(d, u, starts):
    out = d.copy()
    out[starts[0]:starts[0] + u.shape[0], starts[1]:starts[1] + u.shape[1]] = u
    return out


def _scatter_rows(d, rows):  # operand row 1 gets rows[0], row 0 gets rows[1] (first 2 keys)
    out = d.copy()
    out[1, :2], out[0, :2] = rows[0], rows[1]
    return out


@pyjax.jit
def _all_lax(k, o, i):
    return {name: f(k, o, i) for name, (f, _) in LAX_CASES.items()}


@pytest.mark.parametrize("i", [0, 2])
def test_lax_ops_on_keys_eager_and_jit_match_numpy_on_key_data(i):
    jitted = _all_lax(GRID, OTHER, i)
    for name, (f, ref) in LAX_CASES.items():
        expected = ref(D, E, i)
        _check_keys(f(GRID, OTHER, i), expected)
        _check_keys(jitted[name], expected)


def test_lax_eq_ne_compare_all_key_words():
    same_first = lax.dynamic_update_slice(OTHER, GRID[:1, :1], (0, 0))  # one key in common
    np.testing.assert_array_equal(np.asarray(lax.eq(GRID, same_first)),
                                  (D == _data(same_first)).all(-1))
    np.testing.assert_array_equal(np.asarray(lax.ne(GRID, same_first)),
                                  (D != _data(same_first)).any(-1))
    # keys that share one key-data word are still different keys
    half = random.wrap_key_data(np.stack([D1, [D1[0], D1[1] + 1]]).astype(np.uint32))
    np.testing.assert_array_equal(np.asarray(half == K1), [True, False])
    np.testing.assert_array_equal(np.asarray(jnp.not_equal(half, K1)), [False, True])
    assert bool(jnp.array_equal(GRID, GRID)) and not bool(jnp.array_equal(GRID, OTHER))
    assert bool(pyjax.jit(jnp.array_equiv)(GRID, GRID))


JNP_CASES = {
    "flip": (lambda k: jnp.flip(k, 1), lambda d: d[:, ::-1]),
    "roll": (lambda k: jnp.roll(k, 1, axis=1), lambda d: np.roll(d, 1, axis=1)),
    "roll_flat": (lambda k: jnp.roll(k, 2),
                  lambda d: np.roll(d.reshape(6, 2), 2, 0).reshape(d.shape)),
    "tile": (lambda k: jnp.tile(k, 2), lambda d: np.tile(d, (1, 2, 1))),
    "repeat": (lambda k: jnp.repeat(k, 2, axis=0), lambda d: np.repeat(d, 2, axis=0)),
    "swapaxes": (lambda k: jnp.swapaxes(k, 0, 1), lambda d: d.swapaxes(0, 1)),
    "moveaxis": (lambda k: jnp.moveaxis(k, 0, -1), lambda d: d.transpose(1, 0, 2)),
    "rot90": (lambda k: jnp.rot90(k), lambda d: np.rot90(d, axes=(0, 1))),
    "split": (lambda k: jnp.split(k, 3, axis=1)[2], lambda d: d[:, 2:]),
    "array_split": (lambda k: jnp.array_split(k.ravel(), 4)[1], lambda d: d.reshape(6, 2)[2:4]),
    "stack": (lambda k: jnp.stack([k, k], axis=-1), lambda d: np.stack([d, d], axis=2)),
    "hstack": (lambda k: jnp.hstack([k, k]), lambda d: np.concatenate([d, d], 1)),
    "vstack": (lambda k: jnp.vstack([k[0], k[1]]), lambda d: d),
    "where": (lambda k: jnp.where(PRED, k, K1), lambda d: np.where(PRED[..., None], d, D1)),
    "select": (lambda k: jnp.select([PRED], [k], K1), lambda d: np.where(PRED[..., None], d, D1)),
    "take": (lambda k: jnp.take(k, IDX, axis=1), lambda d: d[:, IDX]),
    "take_clip": (lambda k: jnp.take(k, np.array([0, 9]), axis=1, mode="clip"),
                  lambda d: d[:, [0, 2]]),
    "take_along_axis": (lambda k: jnp.take_along_axis(k, np.array([[2], [1]]), axis=1),
                        lambda d: np.stack([d[0, 2:3], d[1, 1:2]])),
    "getitem_array": (lambda k: k[:, IDX], lambda d: d[:, IDX]),
    "getitem_mask": (lambda k: k[PRED], lambda d: d[PRED]),
    "at_get": (lambda k: k.at[1, IDX].get(), lambda d: d[1, IDX]),
    "at_set": (lambda k: k.at[:, 1].set(K1), lambda d: _set(d, (slice(None), 1), D1)),
    "at_set_array": (lambda k: k.at[1, np.array([0, 2])].set(k[0, :2]),
                     lambda d: _set(d, (1, [0, 2]), d[0, :2])),
    "append": (lambda k: jnp.append(k.ravel(), K1),
               lambda d: np.concatenate([d.reshape(6, 2), [D1]])),
    "insert": (lambda k: jnp.insert(k.ravel(), 1, K1),
               lambda d: np.insert(d.reshape(6, 2), 1, D1, axis=0)),
    "delete": (lambda k: jnp.delete(k, 1, axis=1), lambda d: np.delete(d, 1, axis=1)),
    "triu": (lambda k: jnp.triu(k), lambda d: d * np.triu(np.ones((2, 3), bool))[..., None]),
    "diagonal": (lambda k: jnp.diagonal(k), lambda d: d[[0, 1], [0, 1]]),
    "diagflat": (lambda k: jnp.diagflat(k[0]), lambda d: _set(np.zeros((3, 3, 2), np.uint32),
                                                             ([0, 1, 2], [0, 1, 2]), d[0])),
    "block": (lambda k: jnp.block([[k, k[:, :1]]]), lambda d: np.concatenate([d, d[:, :1]], 1)),
    "broadcast_arrays": (lambda k: jnp.broadcast_arrays(k[:1], k)[0],
                         lambda d: np.broadcast_to(d[:1], d.shape)),
    "atleast_3d": (lambda k: jnp.atleast_3d(k), lambda d: d[:, :, None]),
    "array_of_list": (lambda k: jnp.array([k[0], k[1]]), lambda d: d),
    "ones_like": (lambda k: jnp.ones_like(k), lambda d: np.ones_like(d)),
    "full_like": (lambda k: jnp.full_like(k, K1), lambda d: np.broadcast_to(D1, d.shape)),
    "copy": (lambda k: jnp.copy(k), lambda d: d),
}


def _set(d, idx, v):
    out = d.copy()
    out[idx] = v
    return out


@pyjax.jit
def _all_jnp(k):
    return {name: f(k) for name, (f, _) in JNP_CASES.items()}


def test_jnp_functions_on_keys_eager_and_jit_match_numpy_on_key_data():
    jitted = _all_jnp(GRID)
    for name, (f, ref) in JNP_CASES.items():
        expected = ref(D)
        _check_keys(f(GRID), expected)
        _check_keys(jitted[name], expected)


def test_key_dtype_queries_and_constructors():
    assert jnp.result_type(GRID) == GRID.dtype and jnp.result_type(GRID, K1) == GRID.dtype
    _check_keys(jnp.zeros((2,), GRID.dtype), np.zeros((2, 2), np.uint32))
    _check_keys(jnp.ones((2,), GRID.dtype), np.ones((2, 2), np.uint32))
    _check_keys(lax.full((3,), K1), np.broadcast_to(D1, (3, 2)))
    # asking for another dtype gives that dtype's array, as in JAX
    np.testing.assert_array_equal(np.asarray(jnp.zeros_like(GRID, dtype=np.float32)),
                                  np.zeros((2, 3), np.float32))
    # JAX: isnan/isinf of keys are all False, isfinite all True, isclose is equality,
    # iscomplexobj False; iscomplex refuses
    assert not np.asarray(jnp.isnan(GRID)).any() and np.asarray(jnp.isfinite(GRID)).all()
    np.testing.assert_array_equal(np.asarray(jnp.isclose(GRID, GRID[:, :1])),
                                  (D == D[:, :1]).all(-1))
    assert not jnp.iscomplexobj(GRID) and jnp.isrealobj(GRID)
    with pytest.raises(TypeError, match="iscomplex takes numeric arrays"):
        jnp.iscomplex(GRID)
    rows = jnp.unstack(GRID, axis=1)
    assert len(rows) == 3
    _check_keys(rows[2], D[:, 2])
    _check_keys(jnp.full_like(GRID, OTHER[0]), np.broadcast_to(E[0], D.shape))
    with pytest.raises(NotImplementedError, match="order='K'"):
        jnp.copy(GRID, order="C")


def test_rbg_keys_keep_their_four_words():
    rk = random.split(random.key(1, impl="rbg"), 4)
    rd = _data(rk)
    _check_keys(lax.rev(rk, (0,)), rd[::-1], rk.dtype)
    _check_keys(rk.at[1].set(rk[3]), _set(rd, 1, rd[3]), rk.dtype)
    _check_keys(jnp.where(np.array([1, 0, 1, 0], bool), rk, rk[0]),
                np.where(np.array([1, 0, 1, 0], bool)[:, None], rd, rd[0]), rk.dtype)
    _check_keys(jnp.ones_like(rk), np.ones((4, 4), np.uint32), rk.dtype)


def test_vmap_of_key_ops_matches_a_python_loop():
    keys = GRID.ravel()              # key<fry>[6]
    others = OTHER.ravel()
    pred = PRED.ravel()
    idx = np.array([0, 1, 1, 0, 1, 0])
    out_sel = pyjax.vmap(lambda p, a, b: lax.select(p, a, b))(pred, keys, others)
    out_set = pyjax.vmap(lambda row, i, k: row.at[i].set(k))(GRID[np.array([0, 1, 0, 1, 0, 1])],
                                                           idx, keys)
    out_dus = pyjax.vmap(lambda row, k, i: lax.dynamic_update_index_in_dim(row, k, i, 0),
                         in_axes=(None, 0, 0))(keys, others, idx)
    out_eq = pyjax.vmap(lambda a, b: a == b, in_axes=(0, None))(keys, keys[1])
    for n in range(6):
        _check_keys(out_sel[n], _data(lax.select(pred[n], keys[n], others[n])))
        _check_keys(out_set[n], _set(D[n % 2], idx[n], _data(keys)[n]))
        _check_keys(out_dus[n], _set(_data(keys), idx[n], _data(others)[n]))
        assert bool(out_eq[n]) == (n == 1)


def test_control_flow_carries_keys_through_select_and_indexing():
    def body(i, carry):
        ks, best = carry
        nxt = random.split(ks[i % 3])
        ks = ks.at[i % 3].set(nxt[0])
        return ks, lax.select(i % 2 == 0, nxt[1], best)

    def run(ks, best):
        return lax.fori_loop(0, 4, body, (ks, best))

    eager = run(GRID[0], K1)
    jitted = pyjax.jit(run)(GRID[0], K1)
    for a, b in zip(eager, jitted):
        _check_keys(b, _data(a))
    picked = lax.cond(True, lambda a, b: jnp.where(PRED[0], a, b), lambda a, b: b, GRID[0],
                      GRID[1])
    _check_keys(picked, np.where(PRED[0][:, None], D[0], D[1]))
    chosen = lax.switch(1, [lambda k: k[0], lambda k: k[::-1][0]], GRID[0])
    _check_keys(chosen, D[0, 2])


def test_grad_with_key_arguments_and_aux_outputs():
    def loss(x, ks):
        k = lax.select(x > 0, ks[0], ks[1])
        return x * random.uniform(k), jnp.stack([k, ks[2]])

    g, aux = pyjax.grad(loss, has_aux=True)(1.5, GRID[0])
    assert np.isclose(float(g), float(random.uniform(GRID[0, 0])))
    _check_keys(aux, D[0, [0, 2]])
    g2 = pyjax.grad(lambda x, k: pyjax.checkpoint(loss)(x, k)[0])(-1.0, GRID[0])
    assert np.isclose(float(g2), float(random.uniform(GRID[0, 1])))


@pytest.mark.parametrize("fn, err, match", [
    (lambda: GRID + GRID, TypeError, "key"),
    (lambda: lax.add(GRID, GRID), TypeError, "key"),
    (lambda: jnp.sort(GRID), TypeError, "key"),
    (lambda: lax.pad(GRID, K1, [(1, 1, 0), (0, 0, 0)]), TypeError, "key"),
    (lambda: lax.select(True, K1, random.key_data(K2)), TypeError, "uint32"),
    (lambda: lax.select(True, K1, random.key(0, impl="rbg")), TypeError, "key<rbg>"),
    (lambda: lax.concatenate([GRID, random.key_data(GRID)], 1), TypeError, "uint32"),
    (lambda: lax.reshape(GRID, (4,)), TypeError, "size"),
    (lambda: lax.rev(GRID, (2,)), TypeError, "rank 2"),
    (lambda: lax.slice(GRID, (0, 0, 0), (1, 1, 1)), TypeError, "start_indices"),
    (lambda: GRID == 1, TypeError, "equal does not accept dtypes key<fry>, int"),
    # JAX: "multiply does not accept dtypes key<fry>, float32."
    (lambda: jnp.multiply(GRID, 2.0), TypeError, "multiply does not accept dtypes key<fry>, float"),
    (lambda: jnp.concatenate([GRID, jnp.zeros((2, 3), np.uint32)]), ValueError,
     "not a valid dtype"),
    (lambda: jnp.array([K1, random.key(0, impl="rbg")]), ValueError, "not a valid dtype"),
    (lambda: GRID.at[0].add(K1), TypeError, "get"),
    (lambda: lax.convert_element_type(GRID, np.uint32), ValueError, "from key<fry> to uint32"),
    (lambda: GRID.at[0].set(D1), TypeError, "key values"),
])
def test_numeric_and_mismatched_uses_are_refused(fn, err, match):
    with pytest.raises(err, match=match):
        fn()


def test_at_apply_maps_the_selected_keys():
    # JAX 0.10.2 lowers keys.at[i].apply(f) only for an identity f (any other f fails in its
    # scatter verifier); pyjax applies f to each selected key. Oracle: f on the keys one by one.
    keys = random.split(random.key(0), 4)
    data = np.asarray(random.key_data(keys))

    def f(k):
        return random.fold_in(k, 7)

    def fd(i):
        return np.asarray(random.key_data(f(keys[i])))

    _check_keys(keys.at[1].apply(f), _set(data, 1, fd(1)), keys.dtype)
    want = _set(_set(data, 1, fd(1)), 2, fd(2))
    _check_keys(keys.at[1:3].apply(f), want, keys.dtype)
    _check_keys(pyjax.jit(lambda ks, i: ks.at[i].apply(f, unique_indices=True))(
        keys, jnp.array([2, 1])), want, keys.dtype)
    _check_keys(keys.at[np.array([0, 3])].apply(lambda k: k), data, keys.dtype)
    # repeats would need f once per occurrence: refused rather than applied once
    with pytest.raises(NotImplementedError, match="repeated indices"):
        keys.at[np.array([1, -3])].apply(f)
    with pytest.raises(NotImplementedError, match="unique_indices=True"):
        pyjax.jit(lambda i: keys.at[i].apply(f))(jnp.array([0, 1]))
    with pytest.raises(TypeError, match="to one key of the same dtype, got uint32"):
        keys.at[1].apply(random.key_data)
