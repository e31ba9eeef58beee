"""What `jax.experimental.hijax` resolves to under `install_as_jax()`: JAX's experimental
"high-level types" API (user-defined primitives over mutable, structured values). pyjax does not
implement it. flax.nnx subclasses these names when its module is imported and uses them only
when `flax_hijax_variable` is turned on, so the names exist and every use raises
NotImplementedError naming what was asked for."""
from pyjax._src.core.abstract import ShapedArray as AbstractValue  # noqa: F401


def _unsupported(what):
    raise NotImplementedError(
        f"jax.experimental.hijax ({what}) is not implemented in pyjax; with flax, leave "
        "`flax_hijax_variable` off (its default)")


class _EffectTypeSet:
    """A set of effect types (JAX's `control_flow_allowed_effects`)."""

    def __init__(self):
        self._types = set()

    def add_type(self, effect_type):
        self._types.add(effect_type)

    def contains(self, effect):
        return isinstance(effect, tuple(self._types))


control_flow_allowed_effects = _EffectTypeSet()


class HiPrimitive:
    """Base of a high-level primitive: defined as JAX's, never bound in pyjax."""

    def __init__(self, name):
        self.name = name

    def bind(self, *args, **params):
        _unsupported(f"binding the high-level primitive {self.name!r}")

    def __repr__(self):
        return self.name


class HiType:
    """Base of a high-level abstract type."""
    __slots__ = ()


class MutableHiType(HiType):
    """Base of a mutable high-level abstract type."""
    __slots__ = ()


class aval_property(property):
    """A property of a high-level value that reads its abstract type."""


def aval_method(method):
    """A method of a high-level value's abstract type: kept as the plain function."""
    return method


def register_hitype(value_type, to_aval):
    """Registers `value_type` as a high-level type: accepted, never reached, since pyjax never
    traces such values (binding a HiPrimitive raises first)."""


class AvalQDD:
    def __init__(self, aval, qdd):
        _unsupported("AvalQDD")


class AvalMutableQDD:
    def __init__(self, aval, mutable_qdd):
        _unsupported("AvalMutableQDD")


class Zero:
    """A symbolic zero tangent (never made in pyjax)."""

    def __init__(self, aval):
        _unsupported("Zero")


def instantiate_zeros(x):
    _unsupported("instantiate_zeros")


def is_undefined_primal(x):
    _unsupported("is_undefined_primal")
