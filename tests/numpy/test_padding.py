"""pad against NumPy: every mode and option over dtypes and pad widths (including pads
longer than the axis), a callable mode, jit with traced constants, vmap, gradients, errors."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax.errors import ConcretizationTypeError
from pyjax.test_util import check_grads

MODES = [("constant", {}), ("constant", dict(constant_values=((1, 2), (3, 4)))),
         ("edge", {}), ("wrap", {}), ("empty", {}),
         ("linear_ramp", {}), ("linear_ramp", dict(end_values=(5, 1))),
         ("maximum", {}), ("minimum", dict(stat_length=2)), ("mean", {}),
         ("mean", dict(stat_length=((1, 2), (3, 1)))), ("median", {}),
         ("reflect", {}), ("reflect", dict(reflect_type="odd")),
         ("symmetric", {}), ("symmetric", dict(reflect_type="odd"))]
WIDTHS = [(2, 3), ((1, 2), (0, 5)), ((7, 9), (5, 4))]


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.uint8, np.bool_, np.complex64],
                         ids=lambda d: np.dtype(d).name)
def test_pad_modes(dtype):
    x = (np.arange(12).reshape(3, 4) * 3 % 7).astype(dtype)
    # every width for the two main dtypes; one large one (longer than the axes) for others
    widths = WIDTHS[1:] if dtype == np.float32 else WIDTHS[-1:]
    for mode, kw in MODES:
        if dtype in (np.uint8, np.bool_) and ("odd" in str(kw) or mode == "linear_ramp"):
            continue  # NumPy's own results wrap around or fail there
        if dtype == np.bool_ and mode in ("mean", "median"):
            continue
        for pw in widths:
            want = np.pad(x, pw, mode, **kw)
            got = jnp.pad(x, pw, mode, **kw)
            assert got.dtype == want.dtype, (mode, kw, pw)
            if mode != "empty":
                np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6,
                                           err_msg=f"{mode} {kw} {pw}")


def test_pad_0d_1d_3d_and_zero_widths():
    np.testing.assert_array_equal(jnp.pad(np.float32(3), 2), np.pad(np.float32(3), 2))
    x = np.arange(5.0, dtype=np.float32)
    for mode in ["reflect", "symmetric", "wrap"]:
        np.testing.assert_array_equal(jnp.pad(x, (13, 11), mode), np.pad(x, (13, 11), mode))
    y = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(jnp.pad(y, ((0, 0), (1, 0), (2, 2)), "reflect",
                                          reflect_type="odd"),
                                  np.pad(y, ((0, 0), (1, 0), (2, 2)), "reflect",
                                         reflect_type="odd"))
    np.testing.assert_array_equal(jnp.pad(np.ones((1, 3)), 2, "reflect"),
                                  np.pad(np.ones((1, 3)), 2, "reflect"))


def test_pad_callable_mode():
    def pad_with(vector, pad_width, iaxis, kwargs):
        v = kwargs.get("padder", 10)
        vector = vector.at[:pad_width[0]].set(v)
        return vector.at[vector.shape[0] - pad_width[1]:].set(v)

    def np_pad_with(vector, pad_width, iaxis, kwargs):
        vector[:pad_width[0]] = kwargs.get("padder", 10)
        vector[vector.size - pad_width[1]:] = kwargs.get("padder", 10)

    x = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(jnp.pad(x, 2, pad_with), np.pad(x, 2, np_pad_with))
    np.testing.assert_array_equal(jnp.pad(x, 1, pad_with, padder=-1),
                                  np.pad(x, 1, np_pad_with, padder=-1))


def test_pad_jit_vmap_traced_constant():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    f = pyjax.jit(lambda x, c: jnp.pad(x, ((1, 0), (2, 1)), constant_values=c))
    np.testing.assert_array_equal(f(x, 7.0), np.pad(x, ((1, 0), (2, 1)), constant_values=7.0))
    g = pyjax.vmap(lambda r: jnp.pad(r, 2, "reflect", reflect_type="odd"))
    np.testing.assert_array_equal(g(x), np.stack([np.pad(r, 2, "reflect", reflect_type="odd")
                                                  for r in x]))
    with pytest.raises(ConcretizationTypeError, match="pad_width"):
        pyjax.jit(lambda x, w: jnp.pad(x, w))(x, 1)


def test_pad_errors():
    x = np.ones((2, 3))
    with pytest.raises(ValueError, match="not supported"):
        jnp.pad(x, 1, "bogus")
    with pytest.raises(ValueError, match="unsupported keyword"):
        jnp.pad(x, 1, "edge", constant_values=3)
    with pytest.raises(ValueError, match="negative"):
        jnp.pad(x, -1)
    with pytest.raises(ValueError, match="broadcast"):
        jnp.pad(x, ((1, 2, 3),))
    with pytest.raises(TypeError, match="integral"):
        jnp.pad(x, 1.5)
    with pytest.raises(ValueError, match="empty axis"):
        jnp.pad(np.zeros((0, 2)), 1, "wrap")
    with pytest.raises(ValueError, match="stat_length of 0"):
        jnp.pad(x, 1, "mean", stat_length=0)


def test_pad_grads(x64):
    x = np.random.default_rng(0).normal(size=(3, 4))
    modes = [("constant", {}), ("edge", {}), ("wrap", {}), ("linear_ramp", {}),
             ("mean", dict(stat_length=2)), ("maximum", {}), ("median", {}),
             ("reflect", dict(reflect_type="odd")), ("symmetric", {})]

    def all_modes(x):  # one function, so one check_grads for every mode
        return jnp.concatenate([jnp.pad(x, ((2, 5), (1, 3)), m, **kw).ravel()
                                for m, kw in modes])
    check_grads(all_modes, (x,), order=1)
    check_grads(lambda c: jnp.pad(x, 1, constant_values=c), (2.0,), order=1, modes=("rev",))


def test_pad_fast_forms_exact_periods_and_batched_constant():
    # wrap/edge/linear_ramp are slices + concatenations (no gather) and one constant value is one
    # stablehlo.pad, the forms XLA:CPU runs fastest; values still NumPy's
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    for mode, pw in [("wrap", ((3, 6), (4, 0))), ("wrap", ((0, 7), (9, 1))),
                     ("edge", ((0, 4), (5, 0))), ("edge", ((1, 1), (0, 0)))]:
        np.testing.assert_array_equal(jnp.pad(x, pw, mode), np.pad(x, pw, mode),
                                      err_msg=f"{mode} {pw}")
    for mode in ["wrap", "edge", "constant", "linear_ramp"]:
        text = pyjax.jit(lambda x, mode=mode: jnp.pad(x, 2, mode)).lower(x).as_text()
        assert "stablehlo.gather" not in text, mode
    text = pyjax.jit(lambda x: jnp.pad(x, ((1, 2), (3, 0)), constant_values=5)).lower(x).as_text()
    assert text.count("stablehlo.pad") == 1 and "concatenate" not in text
    cs = np.array([1.0, -2.0, 3.5], np.float32)
    got = pyjax.vmap(lambda c: jnp.pad(x, ((1, 0), (0, 2)), constant_values=c))(cs)
    np.testing.assert_array_equal(got, np.stack([np.pad(x, ((1, 0), (0, 2)), constant_values=c)
                                                 for c in cs]))
