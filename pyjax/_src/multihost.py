"""`jax.experimental.multihost_utils` and `mesh_utils` for the one-process runs pyjax supports
(the XLA CPU plugin cannot run several processes: runtime/distributed.py), and the Pathways-only
APIs that libraries import (`colocated_python`, `ifrt_programs`), which raise
NotImplementedError when used. orbax-checkpoint imports all of them."""
import abc
import math
import zlib

import numpy as np

from pyjax._src import api
from pyjax._src.core import pytree
from pyjax._src.core.sharding import NamedSharding


def _one_process(name):
    if api.process_count() != 1:
        raise NotImplementedError(f"multihost_utils.{name} with {api.process_count()} "
                                  "processes: pyjax runs one process")


def broadcast_one_to_all(in_tree, is_source=None):
    """Process 0's values of `in_tree` as host arrays in every process (one process here:
    its own values, or zeros where `is_source=False`, as JAX's psum of them)."""
    _one_process("broadcast_one_to_all")
    if is_source is None:
        is_source = api.process_index() == 0
    return pytree.tree_map(
        lambda x: np.asarray(x) if is_source else np.zeros_like(np.asarray(x)), in_tree)


def sync_global_devices(name):
    """A barrier across processes (nothing to wait for with one process)."""
    _one_process("sync_global_devices")
    np.uint32(zlib.crc32(name.encode()))  # JAX hashes the name the same way (type check)


def process_allgather(in_tree, tiled=False):
    """Every process's values of `in_tree`, as host arrays: stacked on a new leading axis of
    size process_count() (tiled=False) or concatenated along axis 0 (tiled=True)."""
    _one_process("process_allgather")

    def gather(x):
        out = np.asarray(x)
        return out if tiled else np.expand_dims(out, 0)
    return pytree.tree_map(gather, in_tree)


def assert_equal(in_tree, fail_message=""):
    """Checks that every process has the same `in_tree` (trivially true with one)."""
    _one_process("assert_equal")


def reached_preemption_sync_point(step_id):
    raise RuntimeError("Preemption sync manager has not been initialized. Make sure "
                       "`jax.distributed.initialize` has been called.")


def host_local_array_to_global_array(local_inputs, global_mesh, pspecs):
    """With one process the local arrays are the global ones: placed on `global_mesh` by
    `pspecs` (a PartitionSpec or a pytree of them)."""
    _one_process("host_local_array_to_global_array")
    return _place(local_inputs, global_mesh, pspecs)


def global_array_to_host_local_array(global_inputs, global_mesh, pspecs):
    _one_process("global_array_to_host_local_array")
    return _place(global_inputs, global_mesh, pspecs)


def _place(tree, mesh, pspecs):
    from pyjax._src.core.sharding import PartitionSpec
    if isinstance(pspecs, PartitionSpec) or pspecs is None:
        spec = PartitionSpec() if pspecs is None else pspecs
        return pytree.tree_map(lambda x: api.device_put(x, NamedSharding(mesh, spec)), tree)
    return pytree.tree_map(lambda x, s: api.device_put(x, NamedSharding(mesh, s)), tree, pspecs,
                           is_leaf=lambda s: isinstance(s, PartitionSpec))


def create_device_mesh(mesh_shape, devices=None, *, contiguous_submeshes=False,
                       allow_split_physical_axes=False):
    """The devices (default: all) in order, as an array of shape `mesh_shape` (CPU devices
    have no physical topology to follow)."""
    if devices is None:
        devices = api.devices()
    mesh_shape = tuple(int(d) for d in mesh_shape)
    if math.prod(mesh_shape) != len(devices):
        raise ValueError(f"Number of devices {len(devices)} must equal the product of "
                         f"mesh_shape {mesh_shape}")
    out = np.empty(len(devices), dtype=object)
    out[:] = list(devices)
    return out.reshape(mesh_shape)


def create_hybrid_device_mesh(mesh_shape, dcn_mesh_shape, devices=None, *,
                              process_is_granule=False, should_sort_granules_by_key=True,
                              allow_split_physical_axes=False):
    """A mesh over slices (granules): with one process, one granule, so `dcn_mesh_shape` must
    be all ones and the mesh is `create_device_mesh` of the product shape."""
    if any(d != 1 for d in dcn_mesh_shape):
        raise NotImplementedError(f"create_hybrid_device_mesh(dcn_mesh_shape={dcn_mesh_shape})"
                                  ": pyjax runs one process, a single granule")
    shape = tuple(a * b for a, b in zip(mesh_shape, dcn_mesh_shape))
    return create_device_mesh(shape, devices)


def _pathways_only(name):
    def unsupported(*args, **kwargs):
        raise NotImplementedError(f"{name} runs Python on the CPU devices colocated with "
                                  "accelerators under Pathways (IFRT); pyjax has no such "
                                  "runtime")
    unsupported.__name__ = name.rsplit(".", 1)[-1]
    return unsupported


colocated_python = _pathways_only("jax.experimental.colocated_python.colocated_python")
colocated_python_class = _pathways_only(
    "jax.experimental.colocated_python.colocated_python_class")
colocated_cpu_devices = _pathways_only(
    "jax.experimental.colocated_python.colocated_cpu_devices")


class DeviceList(tuple):
    """A sequence of devices (JAX's `xla_client.DeviceList`, built from a tuple of them)."""

    def __new__(cls, devices):
        return super().__new__(cls, tuple(devices))


class IfrtPrograms:
    """`jax.extend.ifrt_programs.ifrt_programs`: IFRT program builders (Pathways)."""

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return _pathways_only(f"jax.extend.ifrt_programs.ifrt_programs.{name}")


ifrt_programs = IfrtPrograms()


class GlobalAsyncCheckpointManagerBase(abc.ABC):
    """What an asynchronous array checkpoint manager provides (JAX's abstract base class)."""

    @abc.abstractmethod
    def check_for_errors(self):
        """Raises an error raised by a background save, if any."""

    @abc.abstractmethod
    def wait_until_finished(self):
        """Blocks until the pending saves are done."""

    @abc.abstractmethod
    def serialize(self, arrays, tensorstore_specs, *, on_commit_callback):
        """Starts saving `arrays`."""

    @abc.abstractmethod
    def deserialize(self, shardings, tensorstore_specs, global_shapes=None, dtypes=None):
        """Reads arrays back."""
