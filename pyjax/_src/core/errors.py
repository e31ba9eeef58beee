"""The exceptions pyjax raises for tracing mistakes, named as in ``jax.errors``."""
from __future__ import annotations


class JAXTypeError(TypeError):
    pass


class ConcretizationTypeError(JAXTypeError):
    """A traced (abstract) value was used where Python needs a concrete one."""

    def __init__(self, tracer_desc: str, context: str = "", remedy: str | None = None):
        if remedy is None:
            remedy = ("If the value depends only on static inputs, mark those arguments static "
                      "with `static_argnums` or `static_argnames` in `jit`; for control flow on "
                      "traced values use `lax.cond`, `lax.while_loop` or `jnp.where` instead of "
                      "Python `if`/`while`.")
        super().__init__("Abstract tracer value encountered where concrete value is expected: "
                         f"{tracer_desc}\n{context}{remedy}")


class TracerBoolConversionError(ConcretizationTypeError):
    pass


class TracerIntegerConversionError(ConcretizationTypeError):
    pass


class TracerArrayConversionError(JAXTypeError):
    def __init__(self, tracer_desc: str, context: str = "", remedy: str | None = None):
        if remedy is None:
            remedy = ("A traced value cannot become a NumPy array inside a transformation: use "
                      "pyjax.numpy functions instead of numpy ones, or move the computation out "
                      "of `jit`.")
        super().__init__(
            f"The numpy.ndarray conversion method __array__() was called on {tracer_desc}\n"
            f"{context}{remedy}")


class UnexpectedTracerError(Exception):
    """A tracer was used after the transformation that made it had finished."""


class JAXIndexError(IndexError):
    """The base of pyjax's index errors (as ``jax.errors.JAXIndexError``)."""


class InconclusiveDimensionOperation(Exception):
    """An operation on symbolic dimensions whose result cannot be decided. pyjax has no
    symbolic shapes yet, so nothing raises it; it exists so that ``except`` clauses written
    for JAX work."""


class NonConcreteBooleanIndexError(JAXIndexError):
    def __init__(self, aval_str: str):
        super().__init__(
            f"Array boolean indices must be concrete; got {aval_str}. Boolean masks give results "
            "whose shape depends on the data, which `jit` cannot compile. Use "
            "`jnp.where(mask, x, fill)` to keep the shape static, or index outside `jit`.")


class KeyReuseError(Exception):
    pass
