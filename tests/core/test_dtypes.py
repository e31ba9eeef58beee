"""Tests for pyjax._src.core.dtypes and pyjax._src.core.config.

The golden promotion table is JAX's documented table ("Type promotion semantics",
docs/type_promotion.rst), copied out literally below.
"""

import os
import subprocess
import sys
import warnings

import ml_dtypes
import numpy as np
import pytest

import pyjax
from pyjax._src.core import dtypes
from pyjax._src.core.config import Config, config, disable_x64, enable_x64

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG_PY = os.path.join(REPO, "pyjax", "_src", "core", "config.py")


@pytest.fixture(autouse=True)
def restore_config():
    saved = config.values
    yield
    for name, value in saved.items():
        if config.read(name) != value or type(config.read(name)) is not type(value):
            config.update(name, value)


@pytest.fixture
def x64():
    config.update("jax_enable_x64", True)


@pytest.fixture
def x32():
    config.update("jax_enable_x64", False)


# ---------------------------------------------------------------------------------------
# JAX's documented binary promotion table
# ---------------------------------------------------------------------------------------

COLS = "b1 u1 u2 u4 u8 i1 i2 i4 i8 bf f2 f4 f8 c8 c16 i* f* c*".split()
TABLE = """
b1  b1  u1  u2  u4  u8  i1  i2  i4  i8  bf  f2  f4  f8  c8  c16 i*  f*  c*
u1  u1  u1  u2  u4  u8  i2  i2  i4  i8  bf  f2  f4  f8  c8  c16 u1  f*  c*
u2  u2  u2  u2  u4  u8  i4  i4  i4  i8  bf  f2  f4  f8  c8  c16 u2  f*  c*
u4  u4  u4  u4  u4  u8  i8  i8  i8  i8  bf  f2  f4  f8  c8  c16 u4  f*  c*
u8  u8  u8  u8  u8  u8  f*  f*  f*  f*  bf  f2  f4  f8  c8  c16 u8  f*  c*
i1  i1  i2  i4  i8  f*  i1  i2  i4  i8  bf  f2  f4  f8  c8  c16 i1  f*  c*
i2  i2  i2  i4  i8  f*  i2  i2  i4  i8  bf  f2  f4  f8  c8  c16 i2  f*  c*
i4  i4  i4  i4  i8  f*  i4  i4  i4  i8  bf  f2  f4  f8  c8  c16 i4  f*  c*
i8  i8  i8  i8  i8  f*  i8  i8  i8  i8  bf  f2  f4  f8  c8  c16 i8  f*  c*
bf  bf  bf  bf  bf  bf  bf  bf  bf  bf  bf  f4  f4  f8  c8  c16 bf  bf  c8
f2  f2  f2  f2  f2  f2  f2  f2  f2  f2  f4  f2  f4  f8  c8  c16 f2  f2  c8
f4  f4  f4  f4  f4  f4  f4  f4  f4  f4  f4  f4  f4  f8  c8  c16 f4  f4  c8
f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  c16 c16 f8  f8  c16
c8  c8  c8  c8  c8  c8  c8  c8  c8  c8  c8  c8  c8  c16 c8  c16 c8  c8  c8
c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16
i*  i*  u1  u2  u4  u8  i1  i2  i4  i8  bf  f2  f4  f8  c8  c16 i*  f*  c*
f*  f*  f*  f*  f*  f*  f*  f*  f*  f*  bf  f2  f4  f8  c8  c16 f*  f*  c*
c*  c*  c*  c*  c*  c*  c*  c*  c*  c*  c8  c8  c8  c16 c8  c16 c*  c*  c*
"""
ROWS = {line.split()[0]: dict(zip(COLS, line.split()[1:]))
        for line in TABLE.strip().splitlines()}

# How each table name is passed in: a strong dtype, or the weak Python type.
ARG = {
    "b1": np.bool_, "u1": np.uint8, "u2": np.uint16, "u4": np.uint32, "u8": np.uint64,
    "i1": np.int8, "i2": np.int16, "i4": np.int32, "i8": np.int64,
    "bf": ml_dtypes.bfloat16, "f2": np.float16, "f4": np.float32, "f8": np.float64,
    "c8": np.complex64, "c16": np.complex128, "i*": int, "f*": float, "c*": complex,
}
# A Python scalar value standing for each weak node.
WEAK_VALUE = {"i*": 3, "f*": 2.5, "c*": 1 + 2j}
STRONG = COLS[:15]


def _expected(cell, x64_on):
    """(dtype, weak) that result_type must return for a table cell."""
    if cell.endswith("*"):
        kind = {"i*": np.int64, "f*": np.float64, "c*": np.complex128}[cell]
        dt = np.dtype(kind)
        return (dt if x64_on else {np.dtype(np.int64): np.dtype(np.int32),
                                   np.dtype(np.float64): np.dtype(np.float32),
                                   np.dtype(np.complex128): np.dtype(np.complex64)}[dt]), True
    dt = np.dtype(ARG[cell])
    if not x64_on:
        dt = {np.dtype(np.int64): np.dtype(np.int32), np.dtype(np.uint64): np.dtype(np.uint32),
              np.dtype(np.float64): np.dtype(np.float32),
              np.dtype(np.complex128): np.dtype(np.complex64)}.get(dt, dt)
    return dt, False


def test_table_is_symmetric():
    for a in COLS:
        for b in COLS:
            assert ROWS[a][b] == ROWS[b][a], (a, b)


@pytest.mark.parametrize("x64_on", [True, False])
def test_result_type_full_table(x64_on):
    config.update("jax_enable_x64", x64_on)
    for a in COLS:
        for b in COLS:
            want = _expected(ROWS[a][b], x64_on)
            got = dtypes.result_type(ARG[a], ARG[b], return_weak_type_flag=True)
            assert got == want, (a, b, got, want)
            # Python scalar values behave like the weak Python types.
            va = WEAK_VALUE.get(a, ARG[a])
            vb = WEAK_VALUE.get(b, ARG[b])
            assert dtypes.result_type(va, vb, return_weak_type_flag=True) == want, (a, b)


@pytest.mark.parametrize("x64_on", [True, False])
def test_result_type_full_table_with_arrays(x64_on):
    config.update("jax_enable_x64", x64_on)
    for a in STRONG:
        for b in STRONG:
            want = _expected(ROWS[a][b], x64_on)
            xa = np.zeros(2, ARG[a])
            xb = np.ones((), ARG[b])[()]   # numpy scalar
            assert dtypes.result_type(xa, xb, return_weak_type_flag=True) == want, (a, b)
            assert dtypes.result_type(np.dtype(ARG[a]), str(np.dtype(ARG[b])),
                                      return_weak_type_flag=True) == want, (a, b)


@pytest.mark.parametrize("x64_on", [True, False])
def test_promote_types_full_table(x64_on):
    # promote_types is never canonicalized (as in JAX); weak results are 64-bit dtypes.
    config.update("jax_enable_x64", x64_on)
    weak_dt = {"i*": np.dtype(np.int64), "f*": np.dtype(np.float64),
               "c*": np.dtype(np.complex128)}
    for a in COLS:
        for b in COLS:
            cell = ROWS[a][b]
            want = weak_dt[cell] if cell in weak_dt else np.dtype(ARG[cell])
            got = dtypes.promote_types(ARG[a], ARG[b])
            assert isinstance(got, np.dtype)
            assert got == want, (a, b, got, want)


def test_table_agrees_with_numpy_where_documented():
    # Same-signedness integers and float/complex pairs without bf16 promote like NumPy.
    groups = [["u1", "u2", "u4", "u8"], ["i1", "i2", "i4", "i8"], ["f2", "f4", "f8", "c8", "c16"]]
    for g in groups:
        for a in g:
            for b in g:
                assert dtypes.promote_types(ARG[a], ARG[b]) == np.promote_types(ARG[a], ARG[b])


# ---------------------------------------------------------------------------------------
# weak types
# ---------------------------------------------------------------------------------------

class Fake:
    """Stand-in for the lead's Array / Tracer / ShapedArray: has .dtype and .weak_type."""

    def __init__(self, dtype, weak_type=False):
        self.dtype = np.dtype(dtype)
        self.weak_type = weak_type


def test_weak_examples(x32):
    rt = lambda *a: dtypes.result_type(*a, return_weak_type_flag=True)  # noqa: E731
    bf = np.zeros(3, ml_dtypes.bfloat16)
    assert rt(bf, 1.0) == (dtypes.bfloat16, False)
    assert rt(np.int8(1), 1) == (dtypes.int8, False)
    assert rt(np.zeros(2, np.int32), 1.0) == (dtypes.float32, True)  # i4 v f* = f*
    assert rt(np.uint8(1), np.int8(1)) == (dtypes.int16, False)
    assert rt(dtypes.uint64, dtypes.int64) == (dtypes.float32, True)
    assert rt(dtypes.float16, dtypes.bfloat16) == (dtypes.float32, False)
    assert rt(1.0, 2.0) == (dtypes.float32, True)
    assert rt(1.0, 2.0, 3.5) == (dtypes.float32, True)
    assert rt(1, 2) == (dtypes.int32, True)
    assert rt(1, 2.0) == (dtypes.float32, True)
    assert rt(1, 2j) == (dtypes.complex64, True)
    assert rt(True, 1) == (dtypes.int32, True)
    assert rt(True, False) == (dtypes.bool_, False)
    assert rt(3) == (dtypes.int32, True)
    assert rt(np.float64(3)) == (dtypes.float32, False)   # numpy scalars are strong
    assert rt(np.zeros(2, np.int16), np.array(1)) == (dtypes.int32, False)   # arrays strong
    assert rt(None) == (dtypes.float32, False)


def test_weak_examples_x64(x64):
    rt = lambda *a: dtypes.result_type(*a, return_weak_type_flag=True)  # noqa: E731
    assert rt(1.0, 2.0) == (dtypes.float64, True)
    assert rt(np.zeros(2, np.int32), 1.0) == (dtypes.float64, True)
    assert rt(np.zeros(2, np.float32), 1.0) == (dtypes.float32, False)
    assert rt(np.int16(1), 1) == (dtypes.int16, False)
    assert rt(np.int16(1), np.array(1)) == (dtypes.int64, False)
    assert rt(dtypes.uint64, dtypes.int64) == (dtypes.float64, True)
    assert rt(3) == (dtypes.int64, True)


def test_weak_objects(x32):
    rt = lambda *a: dtypes.result_type(*a, return_weak_type_flag=True)  # noqa: E731
    assert rt(Fake(np.float32, True), Fake(ml_dtypes.bfloat16)) == (dtypes.bfloat16, False)
    assert rt(Fake(np.int32, True), Fake(np.int8)) == (dtypes.int8, False)
    assert rt(Fake(np.int32, True), Fake(np.uint16)) == (dtypes.uint16, False)
    assert rt(Fake(np.float32, True), Fake(np.int8)) == (dtypes.float32, True)
    assert rt(Fake(np.float32, True), 1) == (dtypes.float32, True)
    assert rt(Fake(np.int32, True), Fake(np.int32, False)) == (dtypes.int32, False)
    assert rt(Fake(np.int32, True), Fake(np.int32, True)) == (dtypes.int32, True)
    # All weak: the strong dtypes are joined, then the default dtype of that kind is used.
    assert rt(Fake(np.int16, True), Fake(np.int8, True)) == (dtypes.int32, True)
    assert rt(Fake(np.float16, True)) == (dtypes.float32, True)
    assert rt(Fake(np.float16, True), 1.0) == (dtypes.float32, True)
    assert rt(Fake(ml_dtypes.bfloat16, True), Fake(np.float32)) == (dtypes.float32, False)
    assert rt(Fake(np.bool_, True), Fake(np.int8)) == (dtypes.int8, False)
    assert rt(Fake(np.bool_, True)) == (dtypes.bool_, False)
    assert rt(Fake(np.complex64, True), Fake(np.float16)) == (dtypes.complex64, False)
    assert rt(Fake(np.complex64, True), 1.0) == (dtypes.complex64, True)
    with enable_x64():
        assert rt(Fake(np.int16, True), Fake(np.int8, True)) == (dtypes.int64, True)
        assert rt(Fake(np.float32, True)) == (dtypes.float64, True)


def test_is_weakly_typed():
    assert dtypes.is_weakly_typed(1)
    assert dtypes.is_weakly_typed(1.0)
    assert dtypes.is_weakly_typed(1j)
    assert not dtypes.is_weakly_typed(True)
    assert not dtypes.is_weakly_typed(np.float64(1.0))   # a float subclass, but strong
    assert not dtypes.is_weakly_typed(np.zeros(3))
    assert dtypes.is_weakly_typed(Fake(np.int32, True))
    assert not dtypes.is_weakly_typed(Fake(np.int32, False))
    assert dtypes.is_python_scalar(1) and not dtypes.is_python_scalar(np.int32(1))


def test_result_type_errors():
    with pytest.raises(ValueError, match="at least one"):
        dtypes.result_type()
    with pytest.raises(TypeError, match="object"):
        dtypes.result_type(np.zeros(2, object), 1)
    with pytest.raises(TypeError, match="not-a-dtype"):
        dtypes.result_type("not-a-dtype")


def test_small_types_promotion():
    rt = lambda *a: dtypes.result_type(*a, return_weak_type_flag=True)  # noqa: E731
    assert rt(dtypes.float8_e4m3fn, 1.0) == (dtypes.float8_e4m3fn, False)
    assert rt(dtypes.float8_e4m3fn, np.int8(1)) == (dtypes.float8_e4m3fn, False)
    assert rt(dtypes.int4, 1) == (dtypes.int4, False)
    with pytest.raises(dtypes.TypePromotionError, match="no available implicit"):
        dtypes.result_type(dtypes.float8_e4m3fn, dtypes.float32)
    with pytest.raises(dtypes.TypePromotionError, match="4-bit"):
        dtypes.result_type(dtypes.int4, dtypes.int8)
    with pytest.raises(ValueError):   # TypePromotionError is a ValueError, as in JAX
        dtypes.promote_types(dtypes.float8_e5m2, dtypes.float8_e4m3fn)


def test_strict_promotion_mode():
    config.update("jax_numpy_dtype_promotion", "strict")
    rt = lambda *a: dtypes.result_type(*a, return_weak_type_flag=True)  # noqa: E731
    assert rt(dtypes.float32, 1.0) == (dtypes.float32, False)
    assert rt(dtypes.int8, 1) == (dtypes.int8, False)
    assert rt(dtypes.float32, dtypes.float32) == (dtypes.float32, False)
    with pytest.raises(dtypes.TypePromotionError, match="strict"):
        dtypes.result_type(dtypes.int32, dtypes.float32)
    with pytest.raises(dtypes.TypePromotionError):
        dtypes.result_type(dtypes.float16, dtypes.float32)
    config.update("jax_numpy_dtype_promotion", "standard")
    assert dtypes.result_type(dtypes.int32, dtypes.float32) == dtypes.float32


def test_result_cache_follows_x64():
    a = np.zeros(2, np.float64)
    with enable_x64():
        assert dtypes.result_type(a, 1) == dtypes.float64
        assert dtypes.canonicalize_dtype("float64") == dtypes.float64
    with disable_x64():
        assert dtypes.result_type(a, 1) == dtypes.float32
        assert dtypes.canonicalize_dtype("float64") == dtypes.float32
    with enable_x64():
        assert dtypes.result_type(a, 1) == dtypes.float64
        assert dtypes.canonicalize_dtype("float64") == dtypes.float64


# ---------------------------------------------------------------------------------------
# canonicalization, user dtypes
# ---------------------------------------------------------------------------------------

def test_canonicalize_x32(x32):
    c = dtypes.canonicalize_dtype
    assert c(np.int64) == np.int32 and c("uint64") == np.uint32
    assert c(np.dtype("float64")) == np.float32 and c(np.complex128) == np.complex64
    assert c(int) == np.int32 and c(float) == np.float32 and c(complex) == np.complex64
    assert c(bool) == np.bool_ and c("bfloat16") == dtypes.bfloat16
    assert c(np.int16) == np.int16 and c(np.float16) == np.float16
    assert c(dtypes.float0) == dtypes.float0
    assert c(np.dtype(">f8")) == np.float32
    assert c(np.dtype(">i2")) == np.int16 and c(np.dtype(">i2")).isnative
    for x in (np.int64, int, "float64"):
        assert isinstance(c(x), np.dtype)


def test_canonicalize_x64(x64):
    c = dtypes.canonicalize_dtype
    assert c(np.int64) == np.int64 and c(int) == np.int64 and c(float) == np.float64
    assert c("complex128") == np.complex128 and c(np.uint64) == np.uint64


def test_defaults():
    with disable_x64():
        assert dtypes.default_int_dtype() == np.int32
        assert dtypes.default_uint_dtype() == np.uint32
        assert dtypes.default_float_dtype() == np.float32
        assert dtypes.default_complex_dtype() == np.complex64
        assert not dtypes.x64_enabled()
        assert dtypes.python_scalar_dtype(1) == np.int32
        assert dtypes.python_scalar_dtype(1.5) == np.float32
        assert dtypes.python_scalar_dtype(1j) == np.complex64
        assert dtypes.python_scalar_dtype(True) == np.bool_
    with enable_x64():
        assert dtypes.x64_enabled()
        assert dtypes.default_int_dtype() == np.int64
        assert dtypes.default_float_dtype() == np.float64
        assert dtypes.default_complex_dtype() == np.complex128
        assert dtypes.python_scalar_dtype(1) == np.int64
        assert dtypes.python_scalar_dtype(float) == np.float64
    with pytest.raises(TypeError):
        dtypes.python_scalar_dtype("1")


def test_dtype_of(x32):
    d = dtypes.dtype_of
    assert d(1) == np.int32 and d(1.0) == np.float32 and d(1j) == np.complex64
    assert d(True) == np.bool_
    assert d(np.float64(1)) == np.float32
    assert d(np.zeros(2, np.int64)) == np.int32
    assert d(np.zeros(2, np.int8)) == np.int8
    assert d(Fake(np.float64, True)) == np.float32
    assert d("bfloat16") == dtypes.bfloat16
    assert d(np.float16) == np.float16
    assert d(int) == np.int32
    with enable_x64():
        assert d(1) == np.int64 and d(np.zeros(2, np.int64)) == np.int64


X64_WARNING = (
    "Explicitly requested dtype float64 requested in zeros is not available, and will be "
    "truncated to dtype float32. To enable more dtypes, set the jax_enable_x64 configuration "
    "option or the JAX_ENABLE_X64 (or PYJAX_ENABLE_X64) shell environment variable. See "
    "https://github.com/jax-ml/jax#current-gotchas for more.")


def test_check_user_dtype_warns(x32):
    with pytest.warns(UserWarning) as rec:
        out = dtypes.check_user_dtype("float64", "zeros")
    assert out == np.float32
    assert [str(w.message) for w in rec] == [X64_WARNING]
    with pytest.warns(UserWarning, match="dtype int64 requested in asarray .* dtype int32"):
        assert dtypes.check_user_dtype(np.dtype("int64"), "asarray") == np.int32
    with pytest.warns(UserWarning, match="truncated to dtype complex64"):
        dtypes.check_user_dtype(np.complex128, "ones")


def test_check_user_dtype_silent(x32):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert dtypes.check_user_dtype(float, "zeros") == np.float32
        assert dtypes.check_user_dtype(int, "zeros") == np.int32
        assert dtypes.check_user_dtype("float32", "zeros") == np.float32
        assert dtypes.check_user_dtype("bfloat16", "zeros") == dtypes.bfloat16
        assert dtypes.check_user_dtype(None, "zeros") is None
        with enable_x64():
            assert dtypes.check_user_dtype("float64", "zeros") == np.float64


def test_check_user_dtype_errors():
    with pytest.raises(TypeError, match="object"):
        dtypes.check_user_dtype(object, "zeros")
    with pytest.raises(TypeError, match="'not-a-dtype'"):
        dtypes.check_user_dtype("not-a-dtype", "zeros")
    with pytest.raises(TypeError, match="<U"):
        dtypes.check_user_dtype(np.dtype("U3"), "zeros")


# ---------------------------------------------------------------------------------------
# issubdtype / predicates / info / names
# ---------------------------------------------------------------------------------------

def test_issubdtype():
    s = dtypes.issubdtype
    assert s(dtypes.bfloat16, np.floating) and s(dtypes.bfloat16, np.inexact)
    assert s("bfloat16", np.number) and not s(dtypes.bfloat16, np.integer)
    assert not s(dtypes.bfloat16, np.complexfloating)
    assert s(dtypes.float8_e4m3fn, np.floating)
    assert s(dtypes.int4, np.signedinteger) and s(dtypes.uint4, np.unsignedinteger)
    assert not s(dtypes.int4, np.unsignedinteger)
    assert s(np.float32, np.floating) and s(np.int8, np.signedinteger)
    assert s(np.uint8, np.integer) and not s(np.uint8, np.signedinteger)
    assert s(np.complex64, np.complexfloating) and s(np.complex64, np.inexact)
    assert s(np.bool_, np.bool_) and not s(np.bool_, np.integer) and not s(np.bool_, np.number)
    assert s(float, np.floating) and s(int, np.integer)
    assert s(np.floating, np.inexact) and not s(np.inexact, np.floating)
    assert s(dtypes.bfloat16, dtypes.bfloat16) and not s(dtypes.bfloat16, np.float16)
    assert s(np.float32, "float32") and not s(np.float32, np.float64)
    assert s(np.zeros(2, np.float32).dtype, np.floating)


def test_isdtype():
    assert dtypes.isdtype(dtypes.bfloat16, "real floating")
    assert dtypes.isdtype(np.int8, ("bool", "integral"))
    assert dtypes.isdtype(np.bool_, "bool") and not dtypes.isdtype(np.bool_, "numeric")
    assert dtypes.isdtype(np.complex64, "complex floating")
    assert dtypes.isdtype(np.uint16, "unsigned integer")
    assert not dtypes.isdtype(np.uint16, "signed integer")
    assert dtypes.isdtype(np.float32, np.float32) and not dtypes.isdtype(np.float32, np.float16)
    with pytest.raises(ValueError, match="kind"):
        dtypes.isdtype(np.float32, "floaty")


def test_predicates():
    floats = [np.float16, np.float32, np.float64, ml_dtypes.bfloat16, ml_dtypes.float8_e5m2]
    ints = [np.int8, np.int16, np.int32, np.int64, ml_dtypes.int4]
    uints = [np.uint8, np.uint16, np.uint32, np.uint64, ml_dtypes.uint4]
    cplx = [np.complex64, np.complex128]
    for t in floats:
        dt = np.dtype(t)
        assert dtypes.is_floating(dt) and dtypes.is_inexact(dt) and dtypes.is_numeric(dt)
        assert not (dtypes.is_integer(dt) or dtypes.is_complex(dt) or dtypes.is_bool(dt))
    for t in ints:
        dt = np.dtype(t)
        assert dtypes.is_integer(dt) and dtypes.is_signed(dt) and not dtypes.is_unsigned(dt)
        assert not dtypes.is_inexact(dt) and dtypes.is_numeric(dt)
    for t in uints:
        dt = np.dtype(t)
        assert dtypes.is_integer(dt) and dtypes.is_unsigned(dt) and not dtypes.is_signed(dt)
    for t in cplx:
        dt = np.dtype(t)
        assert dtypes.is_complex(dt) and dtypes.is_inexact(dt) and not dtypes.is_floating(dt)
    b = np.dtype(bool)
    assert dtypes.is_bool(b) and not dtypes.is_integer(b) and not dtypes.is_numeric(b)
    assert not dtypes.is_numeric(dtypes.float0) and not dtypes.is_floating(dtypes.float0)


def test_finfo_iinfo():
    fb = dtypes.finfo(dtypes.bfloat16)
    assert float(fb.eps) == 2.0 ** -7
    assert float(fb.max) == pytest.approx(3.3895313892515355e38)
    assert fb.bits == 16
    assert dtypes.finfo(np.float32).eps == np.finfo(np.float32).eps
    assert dtypes.finfo(np.zeros(2, np.float16)).max == np.finfo(np.float16).max
    assert dtypes.finfo(np.complex64).dtype == np.float32
    assert float(dtypes.finfo(dtypes.float8_e4m3fn).max) == 448.0
    assert dtypes.iinfo(np.int8).min == -128 and dtypes.iinfo("uint16").max == 65535
    assert dtypes.iinfo(dtypes.int4).min == -8 and dtypes.iinfo(dtypes.int4).max == 7
    with disable_x64():   # not canonicalized, like JAX
        assert dtypes.finfo(np.float64).bits == 64
        assert dtypes.finfo(float).bits == 64
    with pytest.raises(ValueError):
        dtypes.iinfo(np.float32)


def test_short_name():
    want = {np.bool_: "bool", np.int8: "i8", np.int16: "i16", np.int32: "i32",
            np.int64: "i64", np.uint8: "u8", np.uint16: "u16", np.uint32: "u32",
            np.uint64: "u64", np.float16: "f16", ml_dtypes.bfloat16: "bf16",
            np.float32: "f32", np.float64: "f64", np.complex64: "c64",
            np.complex128: "c128", ml_dtypes.float8_e4m3fn: "f8_e4m3fn", ml_dtypes.int4: "i4"}
    for t, name in want.items():
        assert dtypes.short_name(np.dtype(t)) == name
    assert dtypes.short_name(dtypes.float0) == "float0"


def test_conversions():
    assert dtypes.to_real_dtype(np.complex64) == np.float32
    assert dtypes.to_real_dtype(np.complex128) == np.float64
    assert dtypes.to_real_dtype(dtypes.bfloat16) == dtypes.bfloat16
    assert dtypes.to_complex_dtype(np.float32) == np.complex64
    assert dtypes.to_complex_dtype(dtypes.bfloat16) == np.complex64
    assert dtypes.to_complex_dtype(np.float64) == np.complex128
    assert dtypes.to_complex_dtype(np.complex128) == np.complex128
    with disable_x64():
        assert dtypes.to_complex_dtype(np.int32) == np.complex64
        assert dtypes.to_inexact_dtype(np.int8) == np.float32
        assert dtypes.to_numeric_dtype(np.bool_) == np.int32
    with enable_x64():
        # JAX 0.10.2 (observed): integers up to 32 bits and bools -> float32, int64 -> float64
        assert dtypes.to_complex_dtype(np.int32) == np.complex64
        assert dtypes.to_complex_dtype(np.int64) == np.complex128
        assert dtypes.to_inexact_dtype(np.bool_) == np.float32
        assert dtypes.to_inexact_dtype(np.uint32) == np.float32
        assert dtypes.to_inexact_dtype(np.uint64) == np.float64
    assert dtypes.to_inexact_dtype(np.float16) == np.float16


def test_dtype_objects():
    assert dtypes.bfloat16 == np.dtype(ml_dtypes.bfloat16)
    assert dtypes.float0.itemsize == 0 and dtypes.float0.names == ("float0",)
    for name in ["bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64", "float16", "bfloat16", "float32", "float64", "complex64",
                 "complex128"]:
        assert isinstance(getattr(dtypes, name), np.dtype)
    assert dtypes.scalar_type_of(np.float32(1)) is float
    assert dtypes.scalar_type_of(np.zeros(2, np.uint8)) is int
    assert dtypes.coerce_to_array(1).dtype == dtypes.default_int_dtype()


# ---------------------------------------------------------------------------------------
# config
# ---------------------------------------------------------------------------------------

def test_config_defaults_and_read():
    assert config.jax_default_matmul_precision is None
    assert config.jax_numpy_rank_promotion == "allow"
    assert config.jax_debug_nans is False
    assert config.read("jax_debug_nans") is False
    assert isinstance(config.values, dict) and "jax_enable_x64" in config.values
    c = Config()
    c.define("my_flag", 3, kind=int)
    assert c.my_flag == 3 and c.values == {"my_flag": 3}


def test_config_update_and_validation():
    config.update("jax_log_compiles", True)
    assert config.jax_log_compiles is True
    before = config.jax_platforms
    with pytest.raises(NotImplementedError, match="jax_platforms='rocm'"):
        config.update("jax_platforms", "rocm")
    assert config.jax_platforms == before
    config.update("jax_numpy_rank_promotion", "raise")
    assert config.jax_numpy_rank_promotion == "raise"
    config.update("jax_default_matmul_precision", "highest")
    assert config.jax_default_matmul_precision == "highest"
    config.update("jax_platforms", "cpu")
    assert config.jax_platforms == "cpu"
    config.update("jax_num_cpu_devices", len(pyjax.devices()))  # the count it has
    with pytest.raises(RuntimeError, match="jax_num_cpu_devices"):
        config.update("jax_num_cpu_devices", len(pyjax.devices()) + 1)
    with pytest.raises(AttributeError, match="jax_no_such_flag"):
        config.update("jax_no_such_flag", True)
    with pytest.raises(AttributeError, match="jax_no_such_flag"):
        config.read("jax_no_such_flag")
    with pytest.raises(AttributeError, match="jax_no_such_flag"):
        config.jax_no_such_flag  # noqa: B018
    with pytest.raises(TypeError, match="jax_enable_x64"):
        config.update("jax_enable_x64", "yes")
    with pytest.raises(TypeError, match="jax_num_cpu_devices"):
        config.update("jax_num_cpu_devices", 2.5)
    with pytest.raises(ValueError, match="jax_numpy_rank_promotion"):
        config.update("jax_numpy_rank_promotion", "sometimes")
    with pytest.raises(ValueError, match="precision"):
        config.update("jax_default_matmul_precision", "extreme")
    # attribute assignment goes through update (validation + callbacks)
    config.jax_log_compiles = False
    assert config.jax_log_compiles is False
    with pytest.raises(TypeError):
        config.jax_log_compiles = "no"


def test_config_on_change():
    seen = []
    fn = config.on_change("jax_log_compiles", seen.append)
    try:
        config.update("jax_log_compiles", True)
        config.update("jax_log_compiles", True)    # unchanged: no callback
        config.update("jax_log_compiles", False)
        assert seen == [True, False]
    finally:
        config.remove_on_change("jax_log_compiles", fn)
    config.update("jax_log_compiles", True)
    assert seen == [True, False]
    with pytest.raises(AttributeError, match="jax_bogus"):
        config.on_change("jax_bogus", print)


def test_enable_x64_context():
    config.update("jax_enable_x64", False)
    with enable_x64():
        assert config.jax_enable_x64 is True
        with enable_x64(False):
            assert config.jax_enable_x64 is False
        assert config.jax_enable_x64 is True
    assert config.jax_enable_x64 is False
    with pytest.raises(RuntimeError):
        with enable_x64():
            raise RuntimeError
    assert config.jax_enable_x64 is False
    with config.override(jax_enable_x64=True, jax_log_compiles=True):
        assert config.jax_enable_x64 and config.jax_log_compiles
    assert not config.jax_enable_x64 and not config.jax_log_compiles


def test_env_vars_subprocess():
    # Load config.py on its own (stdlib only) so this stays fast whatever pyjax imports.
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('cfg', {CONFIG_PY!r})\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "c = m.config\n"
        "print(c.jax_enable_x64, c.jax_num_cpu_devices, c.jax_platforms)\n")
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYJAX_ENABLE_X64", "JAX_ENABLE_X64", "PYJAX_CPU_DEVICES",
                        "JAX_NUM_CPU_DEVICES", "PYJAX_PLATFORMS", "JAX_PLATFORMS")}

    def run(**extra):
        out = subprocess.run([sys.executable, "-c", code], env={**env, **extra},
                             capture_output=True, text=True, check=True)
        return out.stdout.split()

    assert run() == ["False", "-1", "None"]
    assert run(PYJAX_ENABLE_X64="1", PYJAX_CPU_DEVICES="8", JAX_PLATFORMS="cpu") == \
        ["True", "8", "cpu"]
    assert run(JAX_ENABLE_X64="true")[0] == "True"
    assert run(JAX_ENABLE_X64="yes")[0] == "True"
    assert run(PYJAX_ENABLE_X64="0", JAX_ENABLE_X64="1")[0] == "False"   # pyjax's wins
