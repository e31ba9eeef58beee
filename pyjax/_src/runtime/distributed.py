"""``jax.distributed``: several processes, one program. Process 0 serves a key-value store
(``kv_store.py``), every process connects to it, and the PJRT client is created with the
run's topology (``num_nodes``, ``node_id``, ``visible_devices``) and the store's
``kv_*_callback`` functions, so the plugin can exchange what it needs between processes.

Only a plugin with cross-process collectives can run such a client. The XLA CPU plugin
(``xla-cpu-pjrt``, PJRT API 0.81) cannot: its ``PJRT_Client_Create`` reads ``cpu_device_count``
alone, ignores the key-value callbacks and every topology option (process index stays 0), and
its only CPU collectives are in-process ones (``xla::cpu::InProcessCollectives``; no gloo, no
MPI). ``initialize`` with more than one process raises on it, before starting anything (see
docs/parallel.md, "Several processes").
"""
import os
import threading
import warnings

from . import client as client_mod
from .kv_store import KeyValueClient, KeyValueServer

CPU_CANNOT = (
    "pyjax.distributed.initialize: the XLA CPU PJRT plugin cannot run several processes. "
    "Its PJRT_Client_Create reads only the 'cpu_device_count' option: it ignores the "
    "key-value store callbacks (kv_get_callback/kv_put_callback/kv_try_get_callback) and the "
    "topology options (num_nodes, node_id), so every process would be process 0 of its own "
    "run; and its CPU collectives are in-process only (xla::cpu::InProcessCollectives; it has "
    "no gloo or MPI collectives), so no compiled program can reduce across processes. Use one "
    "process with several CPU devices (PYJAX_CPU_DEVICES=8, or jax.config.update("
    "'jax_num_cpu_devices', 8)), or the CUDA plugin (jax-cuda13-pjrt) on GPUs.")


class State:
    """What ``initialize`` set up (JAX's ``global_state``)."""

    def __init__(self):
        self.coordinator_address = None
        self.num_processes = 1
        self.process_id = 0
        self.local_device_ids = None
        self.partition_index = None
        self.service = None   # the KeyValueServer, on process 0
        self.client = None    # this process's KeyValueClient
        self.timeout_s = 300


global_state = State()
_lock = threading.Lock()


def _check_int(name, value, what):
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be a {what} int. Got {name}={value} of type "
                        f"{type(value)}.")


def _will_be_cpu():
    """Whether the default backend will be the CPU plugin (decided without starting it)."""
    requested = client_mod._platforms_requested()
    if requested:
        first = requested.split(",")[0].strip()
        return first == "cpu"
    from .plugin import find_cuda_plugin_path
    return find_cuda_plugin_path() is None


def initialize(coordinator_address=None, num_processes=None, process_id=None,
               local_device_ids=None, cluster_detection_method=None,
               initialization_timeout=300, heartbeat_timeout_seconds=100,
               shutdown_timeout_seconds=300, coordinator_bind_address=None,
               slice_index=None, partition_index=None):
    """Connects this process to the others of a distributed run (JAX's signature; call it
    before anything that starts a backend). Process 0 also serves the coordinator at
    ``coordinator_bind_address`` (default: every interface, ``coordinator_address``'s port).
    Every wait (connecting, all processes arriving) gives up after ``initialization_timeout``
    seconds."""
    if client_mod._clients:
        raise RuntimeError("jax.distributed.initialize() must be called before any JAX calls "
                           "that might initialise the XLA backend. This includes any "
                           "computation, but also calls to jax.devices, jax.device_put, and "
                           "others.")
    if cluster_detection_method not in (None, "deactivate"):
        raise NotImplementedError(
            f"cluster_detection_method={cluster_detection_method!r}: pyjax detects no "
            "cluster (SLURM, Open MPI, Kubernetes, TPU pods); pass coordinator_address, "
            "num_processes and process_id")
    if heartbeat_timeout_seconds != 100:
        raise NotImplementedError("heartbeat_timeout_seconds: pyjax's coordinator sends no "
                                  "heartbeats (a lost process is seen as a timeout)")
    if slice_index is not None:
        warnings.warn("`slice_index` has been deprecated. Please use `partition_index` "
                      "instead.", DeprecationWarning, stacklevel=2)
        partition_index = slice_index if partition_index is None else partition_index
    coordinator_address = coordinator_address or os.environ.get("JAX_COORDINATOR_ADDRESS")
    if isinstance(local_device_ids, int):
        local_device_ids = [local_device_ids]
    if local_device_ids is None and (env_ids := os.environ.get("JAX_LOCAL_DEVICE_IDS")):
        local_device_ids = [int(i) for i in env_ids.split(",")]
    if coordinator_address is None:
        raise ValueError("coordinator_address should be defined.")
    if num_processes is None:
        raise ValueError("Number of processes must be defined.")
    if process_id is None:
        raise ValueError("The process id of the current process must be defined.")
    _check_int("process_id", process_id, "nonnegative")
    _check_int("num_processes", num_processes, "positive")
    if not 0 <= process_id < num_processes:
        raise ValueError("process_id and num_processes must be nonnegative, with process_id < "
                         f"num_processes. Got process_id={process_id}, "
                         f"num_processes={num_processes}.")
    if not isinstance(initialization_timeout, (int, float)) or initialization_timeout <= 0:
        raise ValueError("initialization_timeout must be a positive number of seconds, got "
                         f"{initialization_timeout!r}")
    if partition_index is None and os.environ.get("JAX_PARTITION_INDEX") is not None:
        partition_index = int(os.environ["JAX_PARTITION_INDEX"])
    if num_processes > 1 and _will_be_cpu():
        raise RuntimeError(CPU_CANNOT)
    bind = coordinator_bind_address or os.environ.get(
        "JAX_COORDINATOR_BIND_ADDRESS", "[::]:" + coordinator_address.rsplit(":", 1)[-1])
    with _lock:
        if global_state.client is not None:
            raise RuntimeError("distributed.initialize should only be called once.")
        service = KeyValueServer(bind) if process_id == 0 else None
        try:
            kv = KeyValueClient(coordinator_address, initialization_timeout)
            kv.connect(process_id, num_processes, initialization_timeout)
        except BaseException:
            if service is not None:
                service.shutdown()
            raise
        state = global_state
        state.coordinator_address, state.num_processes = coordinator_address, num_processes
        state.process_id, state.local_device_ids = process_id, local_device_ids
        state.partition_index, state.timeout_s = partition_index, shutdown_timeout_seconds
        state.service, state.client = service, kv


def is_initialized():
    """Whether ``initialize`` has connected this process (and ``shutdown`` has not run)."""
    return global_state.client is not None


def shutdown():
    """Disconnects this process (process 0 also stops the coordinator); does nothing when
    not initialized. The backend, once started, stays as it was."""
    with _lock:
        state = global_state
        if state.client is not None:
            state.client.close()
        if state.service is not None:
            state.service.shutdown()
        global_state.__init__()


def client_create_extras(platform):
    """(create options, kv callbacks, objects to keep alive) that a distributed run adds to
    ``PJRT_Client_Create`` for ``platform`` (JAX's ``node_id``/``num_nodes`` and
    ``visible_devices``); nothing when not initialized or for the CPU plugin, which ignores
    them."""
    state = global_state
    if state.client is None or platform == "cpu":
        return {}, {}, None
    from .kv_store import pjrt_callbacks
    options = {"node_id": int(state.process_id), "num_nodes": int(state.num_processes)}
    if state.local_device_ids:
        options["visible_devices"] = [int(i) for i in state.local_device_ids]
    callbacks, keep = pjrt_callbacks(state.client)
    return options, callbacks, keep
