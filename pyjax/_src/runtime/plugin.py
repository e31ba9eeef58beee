"""Finding, preparing the environment for, and loading a PJRT plugin.

Discovery order for the CPU plugin:

1. ``PYJAX_PLUGIN_PATH``: an explicit path to a PJRT plugin ``.so``.
2. ``fastatomstruct-xla-cpu`` when installed (``pip install 'pyjax[cpu-ynn]'``): an unmodified
   build of XLA's CPU plugin from mid-2026 (zml/pjrt-artifacts), whose dots run on YNNPACK as
   jaxlib's do: faster compiled programs than (3); pyjax's tests pass on it with the YNNPACK
   fusions pyjax asks for (runtime/compile_options.py, docs/performance.md).
3. The ``xla_plugins`` entry point named ``xla_cpu_pjrt`` (installed by
   ``pip install xla-cpu-pjrt``, a dependency of pyjax): its module folder holds
   ``xla_cpu_pjrt.so``.
4. A scan of every ``sys.path`` entry for ``xla_plugins/xla_cpu_pjrt/*.so``.

Other builds of XLA's CPU plugin are only used when named by ``PYJAX_PLUGIN_PATH``, never
picked up because they are installed: ``lammps-jax-pjrt-cpu`` 0.11.2 miscompiles two in-place
permutations of one array, which pyjax's blocked LU does (tests/runtime/test_plugin_soundness.py,
docs/performance.md).
"""

import ctypes
import glob
import importlib.util
import mmap
import os
import re
import sys
import threading
import warnings

from . import capi
from .errors import PluginNotFoundError, XlaRuntimeError

PLUGIN_PATH_ENV = "PYJAX_PLUGIN_PATH"
_ENTRY_POINT_GROUP = "xla_plugins"
_CPU_ENTRY_POINT = "xla_cpu_pjrt"
_CPU_SO_NAME = "xla_cpu_pjrt.so"
# The YNNPACK build: (package, file). Its package's __init__ is not imported (find_spec only).
YNN_PLUGIN = ("fastatomstruct_xla_cpu", "libpjrt_cpu.so")
_INSTALL_HINT = (f"install it with: pip install xla-cpu-pjrt, or set {PLUGIN_PATH_ENV} "
                 "to the path of a PJRT plugin .so")

# A well-formed XLA flag: --xla_<name> or --xla_<name>=<value>.
_XLA_FLAG_RE = re.compile(r"^--(xla_[A-Za-z0-9_]+)(=.*)?$")


def find_plugin_path():
    """Returns the path of the CPU PJRT plugin to load.

    Raises
    ------
    PluginNotFoundError
        Naming every place looked at, and how to install the plugin.
    """
    looked = []
    explicit = os.environ.get(PLUGIN_PATH_ENV)
    if explicit:
        if os.path.isfile(explicit):
            return explicit
        raise PluginNotFoundError(
            f"{PLUGIN_PATH_ENV}={explicit!r} does not name an existing file. "
            f"Fix or unset it; to use the default CPU plugin, {_INSTALL_HINT}.")

    ynn = find_ynn_plugin_path()
    if ynn:
        return ynn
    # The usual install first: a direct module lookup is far cheaper than scanning the
    # metadata of every installed distribution for entry points.
    try:
        spec = importlib.util.find_spec("xla_plugins.xla_cpu_pjrt")
    except (ImportError, ValueError):
        spec = None
    for d in (spec.submodule_search_locations or []) if spec else []:
        candidate = os.path.join(d, _CPU_SO_NAME)
        if os.path.isfile(candidate):
            return candidate
    try:
        from importlib import metadata  # slow to import: only when the direct lookup failed
        eps = metadata.entry_points(group=_ENTRY_POINT_GROUP)
    except Exception:  # broken metadata must not hide the fallback scan
        eps = ()
    for ep in eps:
        if ep.name != _CPU_ENTRY_POINT:
            continue
        looked.append(f"entry point {_ENTRY_POINT_GROUP}:{ep.name} = {ep.value}")
        try:
            spec = importlib.util.find_spec(ep.value)
        except (ImportError, ValueError):
            spec = None
        dirs = list(spec.submodule_search_locations or []) if spec else []
        if spec and spec.origin and not dirs:
            dirs = [os.path.dirname(spec.origin)]
        for d in dirs:
            candidate = os.path.join(d, _CPU_SO_NAME)
            looked.append(candidate)
            if os.path.isfile(candidate):
                return candidate
            found = sorted(glob.glob(os.path.join(d, "*.so")))
            if found:
                return found[0]
    if not looked:
        looked.append(f"entry point group {_ENTRY_POINT_GROUP!r} (no {_CPU_ENTRY_POINT!r})")

    for entry in sys.path:
        folder = os.path.join(entry or ".", "xla_plugins", "xla_cpu_pjrt")
        pattern = os.path.join(folder, "*.so")
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    looked.append("sys.path entries: */xla_plugins/xla_cpu_pjrt/*.so")
    raise PluginNotFoundError(
        "No XLA CPU PJRT plugin found. Looked for: " + "; ".join(looked)
        + f". {_INSTALL_HINT}.")


def find_ynn_plugin_path():
    """The YNNPACK build's ``.so`` when its package is installed, else None."""
    package, so_name = YNN_PLUGIN
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    for d in (spec.submodule_search_locations or []) if spec else []:
        candidate = os.path.join(d, so_name)
        if os.path.isfile(candidate):
            return candidate
    return None


def is_ynn_plugin(path):
    """Whether ``path`` is the YNNPACK build's ``.so``."""
    return path is not None and os.path.basename(path) == YNN_PLUGIN[1] \
        and os.path.basename(os.path.dirname(path)) == YNN_PLUGIN[0]


def prepare_environment(plugin_path=None):
    """Sets the environment the plugin reads, before it is loaded.

    * ``TF_CPP_MIN_LOG_LEVEL=1`` unless set, to hide the plugin's INFO logs; ``3`` for the
      YNNPACK build, which logs two spurious ERROR lines at every compile ("Target machine
      feature +prefer-no-gather is not supported on the host machine": a tuning attribute
      of its own target, not a CPU feature). Its real errors still reach pyjax as
      PJRT errors, which pyjax raises.
    * ``XLA_FLAGS``: the plugin aborts the whole process at the first compile on a
      flag it does not know. So each token is checked: it must look like
      ``--xla_name[=value]`` and ``xla_name`` must occur as a string in the plugin
      binary (every flag the plugin parses does). Other tokens are removed from
      ``XLA_FLAGS`` with a RuntimeWarning. The check costs a few ms per known flag
      and ~0.3 s per unknown one (a scan of the .so), and only runs when XLA_FLAGS
      is set. A malformed *value* of a known flag can still abort.
    """
    quiet = is_ynn_plugin(plugin_path)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3" if quiet else "1")
    flags = os.environ.get("XLA_FLAGS")
    if not flags or not flags.strip():
        return
    kept, dropped = [], []
    image = _open_image(plugin_path)
    try:
        for token in flags.split():
            m = _XLA_FLAG_RE.match(token)
            if m and (image is None or _binary_mentions(image, m.group(1))):
                kept.append(token)
            else:
                dropped.append(token)
    finally:
        if image is not None:
            image.close()
    if dropped:
        warnings.warn(
            "pyjax: removed from XLA_FLAGS the entries the XLA plugin would abort on "
            "(not of the form --xla_name[=value], or unknown to the plugin): "
            + " ".join(dropped), RuntimeWarning, stacklevel=2)
        if kept:
            os.environ["XLA_FLAGS"] = " ".join(kept)
        else:
            del os.environ["XLA_FLAGS"]


def _open_image(path):
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None


def _binary_mentions(image, name):
    """True if ``name`` appears as a whole NUL-terminated identifier in the binary."""
    needle = name.encode() + b"\0"
    i = image.find(needle)
    while i >= 0:
        before = image[i - 1] if i else 0
        if not (before == 95 or 48 <= before <= 57 or 65 <= before <= 90
                or 97 <= before <= 122):  # not preceded by [A-Za-z0-9_]
            return True
        i = image.find(needle, i + 1)
    return False


def xla_flags_device_count():
    """The N of ``--xla_force_host_platform_device_count=N`` in XLA_FLAGS, or None."""
    for token in os.environ.get("XLA_FLAGS", "").split():
        if token.startswith("--xla_force_host_platform_device_count="):
            return token.split("=", 1)[1]
    return None


_ENTRY_SYMBOL = b"GetPjrtApi"


def check_plugin_file(path, install_hint=_INSTALL_HINT):
    """Raises PluginNotFoundError saying what is wrong with ``path`` when it cannot be a
    loadable PJRT plugin. Loading a truncated shared object kills the process (SIGBUS inside
    the dynamic loader, which maps sections past the end of the file), so before dlopen this
    checks: a regular readable file, an ELF header, section and program header tables that
    lie inside the file, and ``GetPjrtApi`` among the names of its dynamic symbol table
    (read when the section headers can be read)."""
    import struct

    def bad(why):
        return PluginNotFoundError(f"Could not load the PJRT plugin {path}: {why}. "
                                   f"{install_hint}.")
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            image = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else None
    except OSError as e:
        raise bad(f"cannot read it ({e})") from None
    if image is None or size < 64:
        raise bad(f"the file has {size} bytes, too few for an ELF shared object")
    try:
        if image[:4] != b"\x7fELF":
            raise bad("it does not start with the ELF magic bytes (not a shared object)")
        if image[4] != 2 or image[5] != 1:
            raise bad("it is not a 64-bit little-endian ELF file")
        (e_phoff, e_shoff) = struct.unpack_from("<QQ", image, 32)
        (e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx) = struct.unpack_from(
            "<HHHHH", image, 54)
        if e_phoff + e_phentsize * e_phnum > size:
            raise bad(f"its program headers end at byte {e_phoff + e_phentsize * e_phnum}, "
                      f"past the end of the file ({size} bytes): the file is truncated")
        for i in range(e_phnum):  # every loaded segment must lie inside the file
            p_type, _, p_offset, _, _, p_filesz = struct.unpack_from(
                "<IIQQQQ", image, e_phoff + i * e_phentsize)
            if p_type == 1 and p_offset + p_filesz > size:
                raise bad(f"a loadable segment ends at byte {p_offset + p_filesz}, past the "
                          f"end of the file ({size} bytes): the file is truncated")
        if not e_shoff or e_shentsize < 64:
            return  # no section headers to read the symbol table from
        if e_shoff + e_shentsize * e_shnum > size:
            raise bad(f"its section headers end at byte {e_shoff + e_shentsize * e_shnum}, "
                      f"past the end of the file ({size} bytes): the file is truncated")
        sections = [struct.unpack_from("<IIQQQQIIQQ", image, e_shoff + i * e_shentsize)
                    for i in range(e_shnum)]
        for sh_type, _, _, _, off, sz, link, _, _, _ in sections:
            if sh_type != 11 or link >= e_shnum:  # SHT_DYNSYM and its string table
                continue
            str_off, str_size = sections[link][4], sections[link][5]
            if off + sz > size or str_off + str_size > size:
                raise bad("its dynamic symbol table lies past the end of the file: the file "
                          "is truncated")
            strings = image[str_off:str_off + str_size]
            for k in range(sz // 24):
                name_off = struct.unpack_from("<I", image, off + 24 * k)[0]
                if strings[name_off:name_off + len(_ENTRY_SYMBOL) + 1] == \
                        _ENTRY_SYMBOL + b"\0":
                    return
            raise bad(f"its dynamic symbol table has no {_ENTRY_SYMBOL.decode()} symbol")
    except struct.error:
        raise bad("its ELF headers are cut short: the file is truncated") from None
    finally:
        image.close()


_loaded = {}
_load_lock = threading.Lock()


def load_plugin(path=None, install_hint=_INSTALL_HINT):
    """Loads (once per path) and initializes a PJRT plugin; returns its ``capi.Api``.
    ``install_hint`` ends the errors (how to install the right plugin)."""
    if path is None:
        path = find_plugin_path()
    path = os.path.abspath(path)
    with _load_lock:
        api = _loaded.get(path)
        if api is not None:
            return api
        check_plugin_file(path, install_hint)
        prepare_environment(path)
        try:
            lib = ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
        except OSError as e:
            raise PluginNotFoundError(
                f"Could not load the PJRT plugin {path}: {e}. {install_hint}.") from e
        try:
            get_api = lib.GetPjrtApi
        except AttributeError as e:
            raise PluginNotFoundError(
                f"{path} is not a PJRT plugin (no GetPjrtApi symbol). {install_hint}.") from e
        get_api.restype = ctypes.c_void_p
        get_api.argtypes = []
        api_ptr = get_api()
        if not api_ptr:
            raise PluginNotFoundError(f"GetPjrtApi() of {path} returned NULL.")
        try:
            api = capi.Api(api_ptr, lib, path)
        except XlaRuntimeError as e:
            raise PluginNotFoundError(str(e)) from e
        if api.version[0] != capi.HEADER_API_VERSION[0]:
            raise PluginNotFoundError(
                f"{path} implements PJRT C API {api.version[0]}.{api.version[1]}, "
                f"but pyjax speaks {capi.HEADER_API_VERSION[0]}.x.")
        api.call("Plugin_Initialize", capi.Plugin_Initialize_Args())
        attrs = capi.Plugin_Attributes_Args()
        try:
            api.call("Plugin_Attributes", attrs)
            api.attributes = api.read_named_values(attrs.attributes, attrs.num_attributes)
        except XlaRuntimeError:
            api.attributes = {}
        _loaded[path] = api
        return api


# --- the CUDA plugin ---------------------------------------------------------------------
# The jax-cuda13-pjrt / jax-cuda12-pjrt wheels (``pip install 'pyjax[cuda13]'``) install
# ``jax_plugins/xla_cuda13/xla_cuda_plugin.so`` (resp. xla_cuda12). Their Python package
# imports jax, so pyjax never imports it: it looks for the .so on sys.path.

CUDA_PLUGIN_PATH_ENV = "PYJAX_CUDA_PLUGIN_PATH"
_CUDA_PLUGIN_DIRS = ("xla_cuda13", "xla_cuda12")   # the newer CUDA first
_CUDA_SO_NAME = "xla_cuda_plugin.so"
CUDA_INSTALL_HINT = ("install the CUDA PJRT plugin with: pip install 'pyjax[cuda13]' (or "
                     f"'pyjax[cuda12]'), or set {CUDA_PLUGIN_PATH_ENV} to its .so")

# Libraries the plugin links against by soname, in dependency order, as the nvidia-* wheels
# install them (nvidia/<package>/lib/, or nvidia/cu13/lib/ for CUDA 13). The wheels' folders
# are not on the dynamic loader's path, so they are loaded first, with RTLD_GLOBAL; a library
# found nowhere is left to the system (a local CUDA install on LD_LIBRARY_PATH).
_CUDA_LIBRARIES = {
    "xla_cuda13": ("libcudart.so.13", "libnvrtc.so.13", "libnvJitLink.so.13",
                   "libcublasLt.so.13", "libcublas.so.13", "libcupti.so.13",
                   "libcusparse.so.12", "libcusolver.so.12", "libcufft.so.12", "libnccl.so.2",
                   "libnvshmem_host.so.3", "libcudnn.so.9"),
    "xla_cuda12": ("libcudart.so.12", "libnvrtc.so.12", "libnvJitLink.so.12",
                   "libcublasLt.so.12", "libcublas.so.12", "libcupti.so.12",
                   "libcusparse.so.12", "libcusolver.so.11", "libcufft.so.11", "libnccl.so.2",
                   "libnvshmem_host.so.3", "libcudnn.so.9"),
}


def find_cuda_plugin_path():
    """The path of the CUDA PJRT plugin, or None when none is installed.

    ``PYJAX_CUDA_PLUGIN_PATH`` first (it must name a file), then
    ``jax_plugins/xla_cuda13/xla_cuda_plugin.so`` and ``.../xla_cuda12/...`` on sys.path.
    """
    explicit = os.environ.get(CUDA_PLUGIN_PATH_ENV)
    if explicit:
        if os.path.isfile(explicit):
            return explicit
        raise PluginNotFoundError(
            f"{CUDA_PLUGIN_PATH_ENV}={explicit!r} does not name an existing file. Fix or "
            "unset it.")
    for name in _CUDA_PLUGIN_DIRS:
        for entry in sys.path:
            candidate = os.path.join(entry or ".", "jax_plugins", name, _CUDA_SO_NAME)
            if os.path.isfile(candidate):
                return candidate
    return None


_preloaded = set()


def preload_cuda_libraries(plugin_path):
    """Loads the CUDA libraries of the nvidia-* wheels the plugin at ``plugin_path`` needs;
    returns the paths loaded."""
    flavour = next((n for n in _CUDA_PLUGIN_DIRS if f"{os.sep}{n}{os.sep}" in plugin_path),
                   _CUDA_PLUGIN_DIRS[0])
    loaded = []
    for soname in _CUDA_LIBRARIES[flavour]:
        if soname in _preloaded:
            continue
        for entry in sys.path:
            found = sorted(glob.glob(os.path.join(entry or ".", "nvidia", "*", "lib", soname)))
            if found:
                try:
                    ctypes.CDLL(found[0], mode=os.RTLD_NOW | os.RTLD_GLOBAL)
                except OSError:
                    break  # a broken wheel: the plugin's own load will report what is missing
                _preloaded.add(soname)
                loaded.append(found[0])
                break
    return loaded


def cuda_client_options():
    """The create options JAX gives the CUDA plugin, read from the same environment variables:
    ``XLA_PYTHON_CLIENT_ALLOCATOR`` (default|platform|bfc|cuda_async|vmm),
    ``XLA_CLIENT_MEM_FRACTION`` (or the older ``XLA_PYTHON_CLIENT_MEM_FRACTION``),
    ``XLA_PYTHON_CLIENT_PREALLOCATE``, ``XLA_PYTHON_CLIENT_COLLECTIVE_MEM_SIZE_MB``."""
    options = {"platform_name": "cuda"}
    allocator = os.environ.get("XLA_PYTHON_CLIENT_ALLOCATOR", "default").lower()
    if allocator not in ("default", "platform", "bfc", "cuda_async", "vmm"):
        raise ValueError('XLA_PYTHON_CLIENT_ALLOCATOR env var must be "default", "platform", '
                         f'"bfc", "cuda_async", or "vmm", got "{allocator}"')
    options["allocator"] = allocator
    fraction = os.environ.get("XLA_CLIENT_MEM_FRACTION", "")
    old_fraction = os.environ.get("XLA_PYTHON_CLIENT_MEM_FRACTION", "")
    if old_fraction and fraction:
        raise ValueError("XLA_CLIENT_MEM_FRACTION is specified together with "
                         "XLA_PYTHON_CLIENT_MEM_FRACTION. Remove the latter one, it is "
                         "deprecated.")
    fraction = fraction or old_fraction
    if fraction:
        options["memory_fraction"] = float(fraction)
    preallocate = os.environ.get("XLA_PYTHON_CLIENT_PREALLOCATE", "")
    if preallocate:
        options["preallocate"] = preallocate not in ("false", "False", "0")
    collective = os.environ.get("XLA_PYTHON_CLIENT_COLLECTIVE_MEM_SIZE_MB", "")
    if collective:
        options["collective_memory_size"] = int(collective) * (1 << 20)
    return options


def set_cuda_data_dir():
    """Points XLA at the ptxas and libdevice of the nvidia-cuda-nvcc / nvvm wheels
    (``--xla_gpu_cuda_data_dir`` in XLA_FLAGS) unless XLA_FLAGS names a folder already; XLA
    compiles PTX with them. Returns the folder, or None (a system CUDA is used then)."""
    flags = os.environ.get("XLA_FLAGS", "")
    if "--xla_gpu_cuda_data_dir" in flags:
        return None
    for entry in sys.path:
        for sub in ("cu13", "cuda_nvcc"):
            folder = os.path.join(entry or ".", "nvidia", sub)
            if os.path.isfile(os.path.join(folder, "bin", "ptxas")):
                os.environ["XLA_FLAGS"] = f"{flags} --xla_gpu_cuda_data_dir={folder}".strip()
                return folder
    return None
