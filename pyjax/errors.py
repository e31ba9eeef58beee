"""Exceptions raised by pyjax, as in ``jax.errors``."""
from pyjax._src.core.errors import (  # noqa: F401
    ConcretizationTypeError, InconclusiveDimensionOperation, JAXIndexError, JAXTypeError,
    KeyReuseError, NonConcreteBooleanIndexError,
    TracerArrayConversionError, TracerBoolConversionError, TracerIntegerConversionError,
    UnexpectedTracerError)
from pyjax._src.runtime import XlaRuntimeError as JaxRuntimeError  # noqa: F401
from pyjax._src.core.jaxpr import JaxprTypeError  # noqa: F401
