"""A host function's result that is not C-contiguous (LAPACK returns Fortran-ordered arrays)
reaches the program intact: the C-ordered copy the FFI handler makes must live until it is
copied into the result buffer (a temporary freed first left malloc's pointers in its first
bytes)."""
import numpy as np

import pyjax


def test_fortran_ordered_and_strided_results_under_jit():
    # large enough (16 KB) that NumPy returns the freed copy to malloc, not to its own cache
    a = np.arange(4096.0, dtype=np.float32).reshape(64, 64)
    spec = pyjax.ShapeDtypeStruct((64, 64), np.float32)
    cases = {"fortran": lambda x: np.asfortranarray(np.asarray(x) * 2),
             "strided": lambda x: (np.asarray(x) * 2)[:, ::-1][:, ::-1],
             "transposed": lambda x: np.ascontiguousarray((np.asarray(x) * 2).T).T}
    for name, fn in cases.items():
        got = pyjax.jit(lambda v, fn=fn: pyjax.pure_callback(fn, spec, v))(a)
        np.testing.assert_array_equal(np.asarray(got), a * 2, err_msg=name)
