"""``lax.DotAlgorithm`` / ``DotAlgorithmPreset`` (accepted as a dot's ``precision=``) and the
``accuracy=`` types ``Tolerance`` / ``AccuracyMode``, under JAX's names.

pyjax honours the algorithms that XLA:CPU computes anyway: ``DEFAULT``, and ``F32_F32_F32`` /
``F64_F64_F64`` (or the equal ``DotAlgorithm``) on operands of that type, which are the default
CPU dot. Any other algorithm raises NotImplementedError naming it, rather than running a
different one silently."""
from __future__ import annotations

import enum
from typing import Any, NamedTuple

import numpy as np

__all__ = ["DotAlgorithm", "DotAlgorithmPreset", "Tolerance", "AccuracyMode"]


class DotAlgorithm(NamedTuple):
    """A dot algorithm: operand storage types, accumulation type and component counts."""
    lhs_precision_type: Any
    rhs_precision_type: Any
    accumulation_type: Any
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


class DotAlgorithmPreset(enum.Enum):
    """Named dot algorithms (``lhs_rhs_accumulation`` types)."""
    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self):
        return f"DotAlgorithmPreset.{self.name}"

    __str__ = __repr__


class Tolerance(NamedTuple):
    """Accuracy of a transcendental op (``accuracy=``): absolute, relative and ulp bounds."""
    atol: float = 0.0
    rtol: float = 0.0
    ulps: int = 0


class AccuracyMode(enum.Enum):
    """Accuracy modes of transcendental ops (``accuracy=``)."""
    DEFAULT = 0
    HIGHEST = 1


_NATIVE = {DotAlgorithmPreset.F32_F32_F32: np.dtype(np.float32),
           DotAlgorithmPreset.F64_F64_F64: np.dtype(np.float64)}


def is_algorithm(precision):
    return isinstance(precision, (DotAlgorithm, DotAlgorithmPreset))


def check_algorithm(precision, lhs_dtype, rhs_dtype):
    """Raise unless ``precision`` (an algorithm) is what the CPU dot of these operands
    computes; pyjax then lowers it as the default dot."""
    if precision is DotAlgorithmPreset.DEFAULT:
        return
    want = _NATIVE.get(precision)
    if isinstance(precision, DotAlgorithm):
        types = {np.dtype(t) for t in (precision.lhs_precision_type,
                                        precision.rhs_precision_type,
                                        precision.accumulation_type)}
        native = (len(types) == 1 and next(iter(types)) in (np.float32, np.float64)
                  and precision.lhs_component_count == precision.rhs_component_count == 1
                  and precision.num_primitive_operations == 1)
        want = next(iter(types)) if native else None
    if want is None or not (np.dtype(lhs_dtype) == np.dtype(rhs_dtype) == want):
        raise NotImplementedError(
            f"dot precision={precision!r} is not supported by pyjax on CPU for operands "
            f"{np.dtype(lhs_dtype).name} and {np.dtype(rhs_dtype).name} (supported: "
            "DotAlgorithmPreset.DEFAULT, and F32_F32_F32 / F64_F64_F64 on operands of that "
            "type)")
