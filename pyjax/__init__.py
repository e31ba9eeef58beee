"""pyjax: JAX's system written from scratch in Python.

NumPy-style immutable arrays (``pyjax.numpy``) and composable transformations (``jit`` so far),
compiled by XLA through the PJRT C API of an XLA plugin. ``import pyjax as jax`` is the intent.
"""
from pyjax._src.core.config import config as config
from pyjax._src.core.array import Array as Array
from pyjax._src.core.abstract import ShapeDtypeStruct as ShapeDtypeStruct
from pyjax._src.dispatch import eager as _dispatch  # installs the eager trace
from pyjax._src.transformations.jit import (
    jit as jit, make_jaxpr as make_jaxpr, eval_shape as eval_shape, disable_jit as disable_jit)
from pyjax._src.transformations.vmap import vmap as vmap
from pyjax._src.transformations.grad import (
    jvp as jvp, linearize as linearize, vjp as vjp, grad as grad,
    value_and_grad as value_and_grad, jacfwd as jacfwd, jacrev as jacrev,
    jacobian as jacobian, hessian as hessian, linear_transpose as linear_transpose)
from pyjax._src.transformations.custom_derivatives import custom_jvp as custom_jvp, custom_vjp as custom_vjp
from pyjax._src.transformations.closure import (
    closure_convert as closure_convert, custom_gradient as custom_gradient)
from pyjax._src.transformations import reduction_jvp as _reduction_jvp  # noqa: F401 (rules)
from pyjax._src.transformations.checkpoint import (
    checkpoint as checkpoint, remat as remat, checkpoint_policies as checkpoint_policies)
from pyjax._src.api import (
    devices as devices, device_count as device_count, local_devices as local_devices,
    local_device_count as local_device_count, default_backend as default_backend,
    device_put as device_put, device_get as device_get,
    block_until_ready as block_until_ready, process_index as process_index,
    process_count as process_count, typeof as typeof, ensure_compile_time_eval as
    ensure_compile_time_eval, process_indices as process_indices, host_id as host_id,
    host_count as host_count, host_ids as host_ids, default_device as default_device,
    live_arrays as live_arrays, copy_to_host_async as copy_to_host_async,
    print_environment_info as print_environment_info, named_scope as named_scope,
    named_call as named_call, Ref as Ref, new_ref as new_ref, freeze as freeze,
    empty_ref as empty_ref, free_ref as free_ref)
from pyjax._src.runtime import Device as Device
from pyjax._src.core.dtypes import float0 as float0
from pyjax._src.api import (
    make_mesh as make_mesh, make_array_from_callback as make_array_from_callback,
    make_array_from_single_device_arrays as make_array_from_single_device_arrays,
    make_array_from_process_local_data as make_array_from_process_local_data,
    reshard as reshard)
from pyjax._src.core.sharding import (
    PartitionSpec as P, NamedSharding as NamedSharding, set_mesh as set_mesh)
from pyjax._src.core.sharded_array import Shard as Shard
from pyjax._src.parallel.pmap import pmap as pmap
from pyjax._src.parallel.shard_map import shard_map as shard_map
from pyjax._src.dispatch.cache import clear_all as clear_caches
from pyjax._src.core.config import flag_context as _flag_context
# JAX's flag context managers: ``with jax.debug_nans(True): ...``
debug_nans = _flag_context("jax_debug_nans")
debug_infs = _flag_context("jax_debug_infs")
log_compiles = _flag_context("jax_log_compiles")
explain_cache_misses = _flag_context("jax_explain_cache_misses")
enable_checks = _flag_context("jax_enable_checks")
checking_leaks = _flag_context("jax_check_tracer_leaks")
check_tracer_leaks = checking_leaks
default_matmul_precision = _flag_context("jax_default_matmul_precision")
numpy_rank_promotion = _flag_context("jax_numpy_rank_promotion")
numpy_dtype_promotion = _flag_context("jax_numpy_dtype_promotion")
remove_size_one_mesh_axis_from_type = _flag_context("jax_remove_size_one_mesh_axis_from_type")
default_prng_impl = _flag_context("jax_default_prng_impl")
threefry_partitionable = _flag_context("jax_threefry_partitionable")
transfer_guard = _flag_context("jax_transfer_guard")
transfer_guard_host_to_device = _flag_context("jax_transfer_guard_host_to_device")
transfer_guard_device_to_host = _flag_context("jax_transfer_guard_device_to_host")
transfer_guard_device_to_device = _flag_context("jax_transfer_guard_device_to_device")
no_tracing = _flag_context("jax_no_tracing")
no_execution = _flag_context("jax_no_execution")
thread_guard = _flag_context("jax_thread_guard")
debug_key_reuse = _flag_context("jax_debug_key_reuse")
enable_custom_prng = _flag_context("jax_enable_custom_prng")
legacy_prng_key = _flag_context("jax_legacy_prng_key")
softmax_custom_jvp = _flag_context("jax_softmax_custom_jvp")
allow_f16_reductions = _flag_context("jax_allow_f16_reductions")
jax2tf_associative_scan_reductions = _flag_context("jax2tf_associative_scan_reductions")
array_garbage_collection_guard = _flag_context("jax_array_garbage_collection_guard")
auto_pcast = _flag_context("jax_auto_pcast")
from pyjax._src.core.config import enable_x64 as enable_x64
from pyjax._src.callback import pure_callback as pure_callback
from pyjax import tree_util as tree_util
from pyjax import tree as tree
from pyjax import errors as errors
from pyjax import numpy as numpy
from pyjax import lax as lax
from pyjax import dtypes as dtypes
from pyjax import random as random
from pyjax import test_util as test_util
from pyjax import sharding as sharding
from pyjax import debug as debug
from pyjax import distributed as distributed
from pyjax import profiler as profiler
from pyjax import stages as stages
from pyjax import export as export
from pyjax import nn as nn
from pyjax import ops as ops
from pyjax import image as image
from pyjax import ref as ref
from pyjax import typing as typing
from pyjax import flatten_util as flatten_util
from pyjax import monitoring as monitoring
from pyjax import core as core
from pyjax import extend as extend
from pyjax import api_util as api_util
from pyjax import ad_checkpoint as ad_checkpoint
from pyjax import custom_batching as custom_batching
from pyjax import custom_derivatives as custom_derivatives
from pyjax import ffi as ffi
from pyjax._src.jax_alias import install_as_jax as install_as_jax
from pyjax._src.api import effects_barrier as effects_barrier
from pyjax._src.transformations.fwd_and_bwd import fwd_and_bwd as fwd_and_bwd
from pyjax._src.transformations.user_context import make_user_context as make_user_context
from pyjax._src.numpy.indexing import ds as ds
from pyjax._src.parallel.smap import smap as smap

__version__ = "0.1.0"
from pyjax import scipy as scipy
