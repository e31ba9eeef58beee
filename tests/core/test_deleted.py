"""A deleted or donated array raises JAX's RuntimeError on every use."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp

MSG = r"^Array has been deleted with shape=float32\[4\]\.$"


def _uses(x):
    jitted = pyjax.jit(lambda a: a * 2)
    return {
        "repr": lambda: repr(x), "str": lambda: str(x), "print": lambda: print(x),
        "asarray": lambda: np.asarray(x), "float": lambda: float(x[0]),
        "float_of_array": lambda: float(x.sum()), "add": lambda: x + 1.0,
        "mul": lambda: x * x, "sin": lambda: jnp.sin(x), "sum": lambda: jnp.sum(x),
        "jit": lambda: jitted(x), "index": lambda: x[1], "slice": lambda: x[1:3],
        "tolist": lambda: x.tolist(), "block": lambda: x.block_until_ready(),
        "device_put": lambda: pyjax.device_put(x, pyjax.devices()[1]),
        "astype": lambda: x.astype(jnp.int32), "reshape": lambda: x.reshape(2, 2),
        "iter": lambda: list(x), "where": lambda: jnp.where(x > 0, x, 0.0),
    }


@pytest.mark.parametrize("make", ["small", "computed", "read_before"])
def test_deleted_array_every_use(make):
    x = jnp.arange(4.0)
    if make == "computed":
        x = x * 3.0
    elif make == "read_before":
        np.asarray(x)  # a host copy exists; deletion must drop it
    names = list(_uses(x))
    assert not x.is_deleted()
    x.delete()
    assert x.is_deleted()
    x.delete()  # twice is fine
    for name in names:
        with pytest.raises(RuntimeError, match=MSG):
            _uses(x)[name]()
    assert x.shape == (4,) and x.dtype == np.float32  # metadata stays readable


def test_scalar_and_other_dtypes_in_message():
    x = jnp.int32(7) + 0
    x.delete()
    with pytest.raises(RuntimeError, match=r"^Array has been deleted with shape=int32\[\]\.$"):
        int(x)
    y = jnp.ones((2, 3), jnp.bfloat16)
    y.delete()
    with pytest.raises(RuntimeError, match=r"shape=bfloat16\[2,3\]\."):
        y + y


@pytest.mark.parametrize("read_first", [False, True])
def test_donated_array_every_use(read_first):
    f = pyjax.jit(lambda a: a * 2.0, donate_argnums=0)
    x = jnp.arange(4.0) + 0.0
    if read_first:
        np.asarray(x)  # the host copy must not outlive the donation
    y = f(x)
    np.testing.assert_array_equal(y, np.arange(4.0) * 2)
    assert x.is_deleted() and not y.is_deleted()
    for name, use in _uses(x).items():
        with pytest.raises(RuntimeError, match=MSG):
            use()
    with pytest.raises(RuntimeError, match=MSG):
        f(x)


def test_donated_by_name_and_through_aot():
    f = pyjax.jit(lambda a, b: a + b, donate_argnames="b")
    x, y = jnp.ones(4), jnp.ones(4) + 1.0
    np.testing.assert_array_equal(f(x, b=y), np.full(4, 3.0))
    assert y.is_deleted() and not x.is_deleted()
    with pytest.raises(RuntimeError, match=MSG):
        np.asarray(y)
    g = pyjax.jit(lambda a: a - 1.0, donate_argnums=(0,))
    z = jnp.ones(4) + 0.0
    np.asarray(z)
    compiled = g.lower(z).compile()
    np.testing.assert_array_equal(compiled(z), np.zeros(4))
    assert z.is_deleted()
    with pytest.raises(RuntimeError, match=MSG):
        float(z[0])
