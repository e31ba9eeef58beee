"""``jax.ffi``: a C handler, compiled here with ``cc`` (skipped without one), registered through
a PyCapsule and called with ``ffi_call`` eagerly, under jit and vmap, with attributes; against
NumPy. The handler is written against the XLA FFI C layouts this plugin uses (the plugin ships
no ffi.h; docs/PJRT notes, section 7)."""
import ctypes
import shutil
import subprocess

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp

TESTED_PRIMITIVES = BATCH_TESTED = {"ffi_call"}
JVP_TESTED = {"ffi_call"}  # its rule refuses, as JAX's (test_no_derivative_and_bad_input)

# out0[i] = scale * x[i] + y[i] + offset; out1[r] = sum of row r of x (rows: out1's size)
HANDLER_C = r"""
#include <stdint.h>
#include <string.h>
typedef struct { size_t ss; void* ext; int32_t dtype; void* data; int64_t rank; int64_t* dims; } Buf;
typedef struct { const char* ptr; size_t len; } Span;
typedef struct { int32_t dtype; void* value; } Scalar;
#define AT(p, off, T) (*(T*)((char*)(p) + (off)))
static int64_t size_of(Buf* b) { int64_t n = 1; for (int64_t k = 0; k < b->rank; k++) n *= b->dims[k]; return n; }
static Scalar* attr(void* f, const char* name) {
  int64_t n = AT(f, 136, int64_t); Span** names = AT(f, 152, Span**); void** vals = AT(f, 160, void**);
  for (int64_t i = 0; i < n; i++)
    if (names[i]->len == strlen(name) && !memcmp(names[i]->ptr, name, names[i]->len)) return (Scalar*)vals[i];
  return 0;
}
void* scaled_add(void* f) {
  for (void* e = AT(f, 8, void*); e; e = AT(e, 16, void*))
    if (AT(e, 8, int32_t) == 1) { char* m = AT(e, 24, char*); AT(m, 24, int32_t) = 0; AT(m, 28, int32_t) = 1; AT(m, 32, uint32_t) = 0; return 0; }
  if (AT(f, 32, int32_t) != 3) return 0;
  Buf** args = AT(f, 72, Buf**); Buf** rets = AT(f, 112, Buf**);
  Scalar* s = attr(f, "scale"); Scalar* o = attr(f, "offset");
  float scale = s ? *(float*)s->value : 1.0f;
  int64_t offset = o ? *(int64_t*)o->value : 0;
  float* x = args[0]->data; float* y = args[1]->data; float* out = rets[0]->data; float* sums = rets[1]->data;
  int64_t n = size_of(args[0]), rows = size_of(rets[1]), len = n / rows;
  for (int64_t i = 0; i < n; i++) out[i] = scale * x[i] + y[i] + (float)offset;
  for (int64_t r = 0; r < rows; r++) { float t = 0; for (int64_t i = 0; i < len; i++) t += x[r * len + i]; sums[r] = t; }
  return 0;
}
"""


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    d = tmp_path_factory.mktemp("ffi")
    (d / "h.c").write_text(HANDLER_C)
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(d / "h.so"), str(d / "h.c")],
                   check=True, capture_output=True, timeout=60)
    lib = ctypes.CDLL(str(d / "h.so"))
    pyjax.ffi.register_ffi_target("pyjax_test_scaled_add", pyjax.ffi.pycapsule(lib.scaled_add),
                                  platform="cpu")
    # the same function again is fine; another under the same name is not
    pyjax.ffi.register_ffi_target("pyjax_test_scaled_add",
                                  {"execute": pyjax.ffi.pycapsule(lib.scaled_add)})
    return lib


def _call_shapes():
    return [pyjax.ShapeDtypeStruct((4,), np.float32), pyjax.ShapeDtypeStruct((), np.float32)]


def _call():
    return pyjax.ffi.ffi_call("pyjax_test_scaled_add", _call_shapes(),
                              vmap_method="broadcast_all")


X = np.array([1.0, -2.0, 3.5, 0.25], np.float32)
Y = np.array([10.0, 20.0, 30.0, 40.0], np.float32)


def test_ffi_call_eager_jit_and_attributes(target):
    out, total = _call()(X, Y)
    np.testing.assert_array_equal(out, X + Y)
    assert float(total) == X.sum()
    f = pyjax.jit(lambda x, y: _call()(x, y, scale=np.float32(2.5), offset=3))
    out, total = f(X, Y)
    np.testing.assert_array_equal(out, 2.5 * X + Y + 3)
    np.testing.assert_array_equal(f(Y, X)[0], 2.5 * Y + X + 3)
    text = f.lower(X, Y).as_text()
    assert 'call_target_name = "pyjax_test_scaled_add"' in text and "scale = 0x40200000 : f32" in text
    assert "offset = 3 : i64" in text
    jaxpr = pyjax.make_jaxpr(lambda x, y: _call()(x, y))(X, Y)
    assert jaxpr.eqns[0].primitive.name == "ffi_call"
    as_tuple = pyjax.ffi.ffi_call("pyjax_test_scaled_add", tuple(_call_shapes()))(X, Y)
    assert type(as_tuple) is tuple and type(_call()(X, Y)) is list  # JAX's container


def test_ffi_call_under_vmap(target):
    xs = np.stack([X, 2 * X, -X])
    shapes = [pyjax.ShapeDtypeStruct((4,), np.float32), pyjax.ShapeDtypeStruct((), np.float32)]
    for method in ("broadcast_all", "sequential", "sequential_unrolled", "expand_dims"):
        call = pyjax.ffi.ffi_call("pyjax_test_scaled_add", shapes, vmap_method=method)
        ys = xs + 1 if method == "expand_dims" else Y  # expand_dims: y must be batched too
        in_axes = (0, 0) if method == "expand_dims" else (0, None)
        out, totals = pyjax.vmap(lambda x, y: call(x, y, scale=np.float32(-1.0)),
                                 in_axes)(xs, ys)
        np.testing.assert_array_equal(out, -xs + ys, err_msg=method)
        np.testing.assert_array_equal(totals, xs.sum(1), err_msg=method)
    no_method = pyjax.ffi.ffi_call("pyjax_test_scaled_add", shapes)
    with pytest.raises(NotImplementedError, match="vmap_method is one of"):
        pyjax.vmap(lambda x: no_method(x, Y))(xs)


def test_no_derivative_and_bad_input(target):
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'ffi_call'"):
        pyjax.grad(lambda x: _call()(x, Y)[1])(X)
    with pytest.raises(ValueError, match="no FFI target named 'nope' is registered"):
        pyjax.jit(lambda x: pyjax.ffi.ffi_call("nope", pyjax.ShapeDtypeStruct((4,),
                                                                           np.float32))(x))(X)
    with pytest.raises(TypeError, match="attribute bad=.* has a type the FFI cannot take"):
        _call()(X, Y, bad=[1, 2])
    with pytest.raises(ValueError, match="already registered with another function"):
        pyjax.ffi.register_ffi_target("pyjax_test_scaled_add",
                                      pyjax.ffi.pycapsule(ctypes.CDLL(None).strlen))
    with pytest.raises(TypeError, match="expected a PyCapsule"):
        pyjax.ffi.register_ffi_target("x", target.scaled_add)
    with pytest.raises(NotImplementedError, match="api_version=0"):
        pyjax.ffi.register_ffi_target("x", pyjax.ffi.pycapsule(target.scaled_add),
                                      api_version=0)
    with pytest.raises(NotImplementedError, match="platform='cuda'"):
        pyjax.ffi.register_ffi_target("x", pyjax.ffi.pycapsule(target.scaled_add), "cuda")
    with pytest.raises(NotImplementedError, match="input_output_aliases"):
        pyjax.ffi.ffi_call("x", X, input_output_aliases={0: 0})
    with pytest.raises(NotImplementedError, match="only row-major"):
        pyjax.ffi.ffi_call("x", X, input_layouts=[(1, 0)])


def test_ffi_lowering_for_a_user_primitive(target):
    from pyjax.extend.core import Primitive
    from pyjax.interpreters import mlir
    prim = Primitive("pyjax_test_scaled_add_prim")
    prim.multiple_results = True
    prim.def_abstract_eval(lambda x, y, **_: [pyjax.core.ShapedArray(x.shape, x.dtype),
                                              pyjax.core.ShapedArray((), x.dtype)])
    mlir.register_lowering(prim, pyjax.ffi.ffi_lowering("pyjax_test_scaled_add"))
    out, total = pyjax.jit(lambda x, y: prim.bind(x, y, scale=np.float32(3.0)))(X, Y)
    np.testing.assert_array_equal(out, 3 * X + Y)
    assert float(total) == X.sum()
