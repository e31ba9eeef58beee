"""Global configuration flags (``pyjax.config``).

Flags are plain instance attributes of the :data:`config` singleton, so reading
one on a hot path (``config.jax_enable_x64``) is a single attribute lookup.
Writes go through :meth:`Config.update`, which validates the value and runs the
callbacks registered with :meth:`Config.on_change` (used to clear caches that
depend on a flag, e.g. dtype canonicalization when x64 flips).
"""

from __future__ import annotations

import contextlib
import os
import threading
from typing import Any, Callable

__all__ = ["Config", "config", "enable_x64", "disable_x64", "bool_env"]

_TRUTHY = ("1", "true", "yes", "y", "on", "t")
_FALSY = ("0", "false", "no", "n", "off", "f", "")


def bool_env(*names: str, default: bool = False) -> bool:
    """Reads the first set environment variable among ``names`` as a bool."""
    for name in names:
        raw = os.environ.get(name)
        if raw is None:
            continue
        val = raw.strip().lower()
        if val in _TRUTHY:
            return True
        if val in _FALSY:
            return False
        raise ValueError(f"invalid truth value {raw!r} for environment variable {name}")
    return default


def _int_env(*names: str, default: int) -> int:
    for name in names:
        raw = os.environ.get(name)
        if raw is not None and raw.strip():
            try:
                return int(raw)
            except ValueError:
                raise ValueError(f"invalid integer {raw!r} for environment variable {name}") from None
    return default


def _str_env(*names: str, default: str | None) -> str | None:
    for name in names:
        raw = os.environ.get(name)
        if raw is not None:
            return raw
    return default


class _Flag:
    __slots__ = ("name", "default", "kind", "choices", "allow_none", "help", "validator",
                 "supported", "unsupported_why")

    def __init__(self, name, default, kind, choices, allow_none, help, validator,
                 supported=None, unsupported_why=""):
        self.name = name
        self.default = default
        self.kind = kind
        self.choices = choices
        self.allow_none = allow_none
        self.help = help
        self.validator = validator
        # the valid values pyjax honours (a tuple, or a predicate); None: all of them
        self.supported = supported
        self.unsupported_why = unsupported_why

    def is_supported(self, value) -> bool:
        sup = self.supported
        if sup is None:
            return True
        return sup(value) if callable(sup) else value in sup

    def check(self, value: Any) -> Any:
        if value is None and self.allow_none:
            return None
        kind = self.kind
        if kind is bool:
            # Accept numpy bools / 0/1 ints, but not arbitrary truthy objects.
            if isinstance(value, bool) or (type(value).__name__ == "bool_"):
                value = bool(value)
            elif isinstance(value, int) and value in (0, 1):
                value = bool(value)
            else:
                raise TypeError(f"config option {self.name} expects a bool, got {value!r}")
        elif kind is int:
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"config option {self.name} expects an int, got {value!r}")
            value = int(value)
        elif kind is float:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"config option {self.name} expects a float, got {value!r}")
            value = float(value)
        elif kind is str:
            if not isinstance(value, str):
                raise TypeError(f"config option {self.name} expects a str, got {value!r}")
        # kind None: any value
        if self.choices is not None and value not in self.choices:
            raise ValueError(
                f"config option {self.name} must be one of {sorted(map(str, self.choices))}, "
                f"got {value!r}")
        if self.validator is not None:
            self.validator(value)
        if not self.is_supported(value):
            raise NotImplementedError(
                f"config option {self.name}={value!r} is not implemented in pyjax"
                + (f": {self.unsupported_why}" if self.unsupported_why else ""))
        return value


def _check_default_device(value: Any) -> None:
    # a Device (checked by its attributes: this module imports nothing of pyjax) or 'cpu'
    if value == "cpu":
        return
    if not (hasattr(value, "platform") and hasattr(value, "id") and hasattr(value, "client")):
        raise TypeError(f"config option jax_default_device expects a Device, a platform "
                        f"name or None, got {value!r}")


def _check_matmul_precision(value: Any) -> None:
    # JAX accepts None, the strings below, or a lax.Precision enum (checked by name).
    if value is None or not isinstance(value, str):
        return
    allowed = {"default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
               "fastest", "bfloat16_3x", "tensorfloat32_3x", "float32_3x",
               "ANY_F8_ANY_F8_F32", "F16_F16_F16", "F16_F16_F32", "BF16_BF16_BF16",
               "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6", "TF32_TF32_F32",
               "TF32_TF32_F32_X3", "F32_F32_F32", "F64_F64_F64"}
    if value not in allowed and value.lower() not in allowed:
        raise ValueError(
            f"config option jax_default_matmul_precision got unknown precision {value!r}; "
            f"expected one of {sorted(allowed)} or None")


class Config:
    """Holds pyjax's configuration flags as attributes.

    Read flags as attributes (``config.jax_enable_x64``); change them with
    ``config.update(name, value)`` (assigning the attribute does the same).
    """

    def __init__(self) -> None:
        object.__setattr__(self, "_flags", {})
        object.__setattr__(self, "_callbacks", {})
        object.__setattr__(self, "_lock", threading.RLock())

    # -- definition -----------------------------------------------------------------

    def define(self, name: str, default: Any, *, kind: type | None = None,
               choices: Any = None, allow_none: bool = False, help: str = "",
               validator: Callable[[Any], None] | None = None, supported: Any = None,
               unsupported_why: str = "") -> None:
        """Declares a new flag. ``kind`` is bool/int/float/str or None (any value).
        ``supported`` (a tuple of values or a predicate) lists the valid values pyjax
        implements; others raise NotImplementedError, on update and at definition (where
        the default comes from an environment variable)."""
        if name in self._flags:
            raise ValueError(f"config option {name} is already defined")
        flag = _Flag(name, default, kind, None if choices is None else tuple(choices),
                     allow_none, help, validator, supported, unsupported_why)
        self._flags[name] = flag
        object.__setattr__(self, name, flag.check(default))

    # -- reading ----------------------------------------------------------------------

    def read(self, name: str) -> Any:
        """Returns the current value of flag ``name``."""
        if name not in self._flags:
            raise AttributeError(f"Unrecognized config option: {name}")
        return getattr(self, name)

    @property
    def values(self) -> dict[str, Any]:
        """A snapshot dict of every flag's current value."""
        return {name: getattr(self, name) for name in self._flags}

    def flag_names(self) -> list[str]:
        return list(self._flags)

    def flag(self, name: str) -> _Flag:
        """The definition of flag ``name`` (kind, choices, default, supported values)."""
        if name not in self._flags:
            raise AttributeError(f"Unrecognized config option: {name}")
        return self._flags[name]

    def __getattr__(self, name: str) -> Any:
        # Only reached for names that are not flags (flags are real attributes).
        raise AttributeError(f"Unrecognized config option: {name}")

    # -- writing ----------------------------------------------------------------------

    def update(self, name: str, value: Any) -> None:
        """Sets flag ``name`` to ``value`` after validating it; runs change callbacks."""
        flag = self._flags.get(name)
        if flag is None:
            raise AttributeError(f"Unrecognized config option: {name}")
        value = flag.check(value)
        with self._lock:
            old = getattr(self, name)
            object.__setattr__(self, name, value)
            changed = not _same(old, value)
            callbacks = list(self._callbacks.get(name, ())) if changed else ()
        for fn in callbacks:
            fn(value)

    def __setattr__(self, name: str, value: Any) -> None:
        self.update(name, value)

    def on_change(self, name: str, fn: Callable[[Any], None]) -> Callable[[Any], None]:
        """Registers ``fn(new_value)`` to run whenever flag ``name`` changes value.

        Returns ``fn`` so it can be used as a decorator-style helper.
        """
        if name not in self._flags:
            raise AttributeError(f"Unrecognized config option: {name}")
        self._callbacks.setdefault(name, []).append(fn)
        return fn

    def add_validator(self, name: str, fn: Callable[[Any], None]) -> None:
        """Adds a check that runs before flag ``name`` takes a new value (for checks that need
        a layer above this one, e.g. whether the backend has started); it raises to refuse."""
        flag = self.flag(name)
        prev = flag.validator

        def chained(value):
            if prev is not None:
                prev(value)
            fn(value)
        flag.validator = chained

    def remove_on_change(self, name: str, fn: Callable[[Any], None]) -> None:
        cbs = self._callbacks.get(name, [])
        if fn in cbs:
            cbs.remove(fn)

    @contextlib.contextmanager
    def override(self, **flags: Any):
        """Context manager that sets flags and restores their previous values."""
        saved = {name: self.read(name) for name in flags}
        try:
            for name, value in flags.items():
                self.update(name, value)
            yield self
        finally:
            for name, value in saved.items():
                self.update(name, value)

    # JAX compatibility no-ops.
    def parse_flags_with_absl(self) -> None:
        pass

    def config_with_absl(self) -> None:
        pass

    def __repr__(self) -> str:
        return "Config(" + ", ".join(f"{k}={v!r}" for k, v in self.values.items()) + ")"


def _same(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return a is b


config = Config()


def _only_cpu(value):
    # None or '' pick the default (CPU); 'cpu' names it; pyjax has no other platform.
    return not value or all(p.strip() == "cpu" for p in value.split(","))


def _known_platforms(value):
    # jax_platforms: a priority list of platforms pyjax can load (runtime/client.py chooses)
    return not value or all(p.strip() in ("cpu", "cuda", "gpu") for p in value.split(","))


# Precision names lax.Precision takes; the dot-algorithm presets are not implemented.
_PRECISIONS = (None, "default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
               "fastest", "bfloat16_3x")


def _precision_supported(value):
    return value is None or not isinstance(value, str) or value.lower() in _PRECISIONS


def _default_cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "pyjax")


def _check_nonnegative(name, v):
    if v < 0:
        raise ValueError(f"{name} must be >= 0, got {v}")


def _bad_max_size(v):
    raise ValueError(f"jax_compilation_cache_max_size must be -1 (unbounded) or a number of "
                     f"bytes >= 0, got {v}")


_d = config.define
# Each flag is honoured where noted, or its other values raise NotImplementedError.
_d("jax_enable_x64", bool_env("PYJAX_ENABLE_X64", "JAX_ENABLE_X64"), kind=bool,
   help="Enable 64-bit types (int64, uint64, float64, complex128).")
# read by lax.dot_general's canonicalize_precision (a precision_config on every dot)
_d("jax_default_matmul_precision", _str_env("JAX_DEFAULT_MATMUL_PRECISION", default=None),
   kind=None, allow_none=True, validator=_check_matmul_precision,
   supported=_precision_supported,
   unsupported_why="dot algorithm presets are not supported; use a lax.Precision name",
   help="Default precision for matmul-like ops (None means the backend default).")
# read by jnp's broadcasting (numpy/util.py)
_d("jax_numpy_rank_promotion", _str_env("JAX_NUMPY_RANK_PROMOTION", default="allow"),
   kind=str, choices=("allow", "warn", "raise"),
   help="What to do when jax.numpy broadcasting promotes ranks implicitly.")
# read by dtype promotion (core/dtypes.py)
_d("jax_numpy_dtype_promotion", _str_env("JAX_NUMPY_DTYPE_PROMOTION", default="standard"),
   kind=str, choices=("standard", "strict"),
   help="'standard' uses JAX's promotion lattice; 'strict' forbids implicit promotion.")
# read by dispatch/debug_values.py (eager results) and jit (outputs, then an op-by-op rerun)
_d("jax_debug_nans", bool_env("JAX_DEBUG_NANS"), kind=bool,
   help="Raise FloatingPointError when a computation produces a NaN.")
_d("jax_debug_infs", bool_env("JAX_DEBUG_INFS"), kind=bool,
   help="Raise FloatingPointError when a computation produces an inf.")
# read by jit (calls the function), while_loop and eager grad
_d("jax_disable_jit", bool_env("JAX_DISABLE_JIT"), kind=bool,
   help="Run jitted functions eagerly (for debugging).")
_d("jax_platforms", _str_env("PYJAX_PLATFORMS", "JAX_PLATFORMS", default=None), kind=str,
   allow_none=True, supported=_known_platforms,
   unsupported_why="pyjax has the 'cpu' and 'cuda' (alias 'gpu') platforms",
   help="Comma-separated platform priority list, e.g. 'cpu' or 'cuda,cpu'.")
_d("jax_platform_name", _str_env("JAX_PLATFORM_NAME", default=""), kind=str,
   supported=_only_cpu, unsupported_why="pyjax has the 'cpu' platform only",
   help="Deprecated single-platform selector (use jax_platforms).")
# read by the runtime when it creates the CPU client (dispatch/eager.py passes it on)
_d("jax_num_cpu_devices", _int_env("PYJAX_CPU_DEVICES", "JAX_NUM_CPU_DEVICES", default=-1),
   kind=int, help="Number of virtual CPU devices (-1: backend default).")
# read by dispatch.compiler.compile_jaxpr (a log record per compile)
_d("jax_log_compiles", bool_env("JAX_LOG_COMPILES"), kind=bool,
   help="Log a message each time a function is compiled.")
# read by jit's tracing (transformations/jit.py: a log record per retrace, saying why)
_d("jax_explain_cache_misses", bool_env("JAX_EXPLAIN_CACHE_MISSES"), kind=bool,
   help="Log why a jitted function is traced again (which argument's type, which static "
        "value or which pytree structure changed).")
# read by core/transfer_guard.py (host reads, to_array, device_put/device_get, on_device)
_GUARD_LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")
_d("jax_transfer_guard", _str_env("JAX_TRANSFER_GUARD", default=None), kind=str,
   allow_none=True, choices=_GUARD_LEVELS,
   help="Guard for all transfers (the per-direction flags override it): allow, log, "
        "disallow (implicit transfers), log_explicit, disallow_explicit (all transfers).")
for _direction in ("host_to_device", "device_to_host", "device_to_device"):
    _d(f"jax_transfer_guard_{_direction}",
       _str_env(f"JAX_TRANSFER_GUARD_{_direction.upper()}", default=None), kind=str,
       allow_none=True, choices=_GUARD_LEVELS,
       help=f"Guard for {_direction.replace('_', '-')} transfers (None: jax_transfer_guard).")
# read by jit and make_jaxpr (check_jaxpr on every traced Jaxpr)
_d("jax_enable_checks", bool_env("JAX_ENABLE_CHECKS"), kind=bool,
   help="Run internal consistency checks (slow).")
# read when a trace finishes (staging.trace_to_jaxpr, vmap, grad): core/trace.check_no_leaks
_d("jax_check_tracer_leaks", bool_env("JAX_CHECK_TRACER_LEAKS"), kind=bool,
   help="Raise when a tracer outlives its transformation (costs a garbage collection per "
        "trace).")
# read by core/traceback_util.py when an exception leaves a pyjax API boundary
_d("jax_traceback_filtering", _str_env("JAX_TRACEBACK_FILTERING", default="auto"), kind=str,
   choices=("off", "tracebackhide", "remove_frames", "quiet_remove_frames", "auto"),
   help="How pyjax-internal frames are filtered from tracebacks.")
_d("jax_default_prng_impl", _str_env("JAX_DEFAULT_PRNG_IMPL", default="threefry2x32"), kind=str,
   choices=("threefry2x32", "rbg", "unsafe_rbg"),
   help="Default PRNG implementation (of random.key(seed), PRNGKey(seed) and raw keys).")
_d("jax_threefry_partitionable", bool_env("JAX_THREEFRY_PARTITIONABLE", default=True), kind=bool,
   help="Use the partitionable threefry key derivation (False: JAX's original stream).")
# read where uncommitted values are placed (core/array.py, dispatch/eager.py)
_d("jax_default_device", None, kind=None, allow_none=True,
   validator=lambda v: _check_default_device(v),
   help="Device on which to place uncommitted values (None: first device).")
# read by dispatch/compiler.py, which hands them to runtime/disk_cache.py
_d("jax_compilation_cache_dir",
   _str_env("PYJAX_COMPILATION_CACHE_DIR", "JAX_COMPILATION_CACHE_DIR",
            default=_default_cache_dir()), kind=str, allow_none=True,
   help="Persistent compilation cache directory (None: no persistent cache). pyjax's "
        "default is $XDG_CACHE_HOME/pyjax or ~/.cache/pyjax.")
_d("jax_enable_compilation_cache",
   bool_env("PYJAX_COMPILATION_CACHE", "JAX_ENABLE_COMPILATION_CACHE", default=True),
   kind=bool, help="Use the persistent compilation cache (PYJAX_COMPILATION_CACHE=0 turns "
                   "it off).")
_d("jax_persistent_cache_min_compile_time_secs",
   float(_str_env("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", default="0")), kind=float,
   validator=lambda v: _check_nonnegative("jax_persistent_cache_min_compile_time_secs", v),
   help="Only programs that took at least this long to compile are stored (pyjax's "
        "default 0: loading one takes ~2 ms, compiling it tens of ms).")
_d("jax_persistent_cache_min_entry_size_bytes",
   _int_env("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", default=0), kind=int,
   help="Only executables of at least this many bytes are stored (0: all; a negative "
        "value, as in JAX, also means all).")
_d("jax_compilation_cache_max_size",
   _int_env("JAX_COMPILATION_CACHE_MAX_SIZE", default=1 << 30), kind=int,
   validator=lambda v: None if v >= -1 else _bad_max_size(v),
   help="Bytes the cache directory may hold before least recently used entries are "
        "evicted (-1: unbounded; pyjax's default 1 GiB).")
# read by dispatch/compiler.py (runtime/tiered.py does the work; docs/first_call.md)
_d("pyjax_tiered_compilation", bool_env("PYJAX_TIERED_COMPILATION", default=True), kind=bool,
   help="Compile long-compiling programs at a low optimisation level first and swap in the "
        "fully optimised build, compiled in a background thread, when it is ready (results "
        "may differ in the last bits between the two; PYJAX_TIERED_COMPILATION=0 turns it "
        "off).")
del _d


@contextlib.contextmanager
def _flag_context(name, value):
    old = getattr(config, name)
    config.update(name, value)
    try:
        yield
    finally:
        config.update(name, old)


def flag_context(name: str, doc: str = ""):
    """JAX's context manager for a flag: ``with jax.debug_nans(True): ...`` sets ``name`` in
    the block and restores it after (process-wide in pyjax; thread-local in JAX)."""
    def manager(new_val=True):
        return _flag_context(name, new_val)
    manager.__name__ = name.removeprefix("jax_")
    manager.__doc__ = doc or f"Context manager setting the {name} config flag in its block."
    return manager


def enable_x64(new_val: bool = True):
    """Context manager that temporarily enables (or sets) 64-bit mode.

    >>> with enable_x64():
    ...     ...  # float64 arrays are available here
    """
    return _flag_context("jax_enable_x64", bool(new_val))


def disable_x64():
    """Context manager that temporarily disables 64-bit mode."""
    return _flag_context("jax_enable_x64", False)
