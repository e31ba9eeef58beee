"""`import jax` resolved to pyjax: a meta-path finder that maps every module `jax[.x.y]` to the
already existing module `pyjax[.x.y]` (the same object, so `jax.numpy is pyjax.numpy`).

Used by `pyjax.install_as_jax()` and `python -m pyjax script.py`. A `jax.*` module that pyjax
does not have raises the ordinary ModuleNotFoundError naming it.
"""
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types

# longest prefix first: JAX's private modules that libraries reach into (`jax._src.*`) and its
# experimental `hijax` API map to pyjax's stand-ins for the few names they read, not to pyjax's
# own private modules
ALIASES = (("jax._src", "pyjax._src.jax_private"),
           ("jax.experimental.hijax", "pyjax._src.jax_private.hijax"),
           ("jax.experimental.sparse", "pyjax._src.jax_private.sparse"), ("jax", "pyjax"))


def _target(fullname):
    """The pyjax module name a `jax...` name maps to, or None for other names."""
    for prefix, real in ALIASES:
        if fullname == prefix or fullname.startswith(prefix + "."):
            return real + fullname[len(prefix):]
    return None


# the JAX release whose API pyjax follows: what `jax.__version__` says under the alias (libraries
# choose code paths by it); pyjax's own version stays `pyjax.__version__`
JAX_API_VERSION = "0.10.2"


class JaxModule(types.ModuleType):
    """The top-level `jax` module under the alias: every attribute is pyjax's, except the
    version, which is the JAX API version pyjax implements."""

    def __init__(self, pyjax_module):
        super().__init__("jax", pyjax_module.__doc__)
        self.__dict__["_pyjax"] = pyjax_module
        self.__version__ = JAX_API_VERSION
        self.__version_info__ = tuple(int(p) for p in JAX_API_VERSION.split("."))
        self.__path__ = list(pyjax_module.__path__)
        # `jax.version`: the same JAX API version (flax compares `jax.version.__version_info__`)
        version = types.ModuleType("jax.version", "The JAX API version pyjax follows.")
        version.__version__ = version._version = self.__version__
        version.__version_info__ = self.__version_info__
        version._pyjax_alias = True
        self.version = sys.modules["jax.version"] = version

    def __getattr__(self, name):
        return getattr(self.__dict__["_pyjax"], name)

    def __dir__(self):
        return sorted(set(dir(self.__dict__["_pyjax"])) | set(self.__dict__))


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        module = importlib.import_module(self.target)
        self._alias_name = spec.name
        if spec.name == "jax":
            self._own_spec = None
            return JaxModule(module)
        self._own_spec = getattr(module, "__spec__", None)
        return module

    def exec_module(self, module):
        # importlib stamped the alias spec on the module; give the pyjax module its own back so
        # its relative imports and `importlib.reload` keep working
        if not isinstance(module, JaxModule):
            module.__spec__ = self._own_spec
        # a stand-in aliased below this module (`jax.experimental.hijax`) is imported now:
        # `from jax.experimental import hijax` looks for the attribute, then for the module
        # `pyjax.experimental.hijax`, which does not exist
        for prefix, _ in ALIASES:
            if prefix.rpartition(".")[0] == self._alias_name:
                importlib.import_module(prefix)


class JaxAliasFinder(importlib.abc.MetaPathFinder):
    """Finds `jax` and `jax.*` as the matching pyjax modules."""

    def find_spec(self, fullname, path=None, target=None):
        real = _target(fullname)
        if real is None:
            return None
        try:
            if importlib.util.find_spec(real) is None:
                return None
        except ModuleNotFoundError:  # a parent of `real` does not exist
            return None
        is_pkg = hasattr(importlib.import_module(real), "__path__")
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(real), is_package=is_pkg)


def _is_alias(module):
    return (isinstance(module, JaxModule) or getattr(module, "_pyjax_alias", False)
            or getattr(module, "__name__", "").split(".")[0] == "pyjax")


def install_as_jax():
    """Make `import jax` (and every `jax.*` module) resolve to pyjax in this process.

    Call it before the program or library imports `jax`. Idempotent. Raises RuntimeError if the
    real JAX is already imported, since its modules and arrays cannot mix with pyjax's.
    """
    clash = sorted(name for name, mod in sys.modules.items()
                   if name.split(".")[0] in ("jax", "jaxlib") and mod is not None
                   and not _is_alias(mod))
    if clash:
        raise RuntimeError(
            "pyjax.install_as_jax(): the real JAX is already imported "
            f"({', '.join(clash[:3])}{', ...' if len(clash) > 3 else ''}); call install_as_jax() "
            "before anything imports jax, or run the program with `python -m pyjax script.py`")
    if not any(isinstance(f, JaxAliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, JaxAliasFinder())
    importlib.import_module("jax")
