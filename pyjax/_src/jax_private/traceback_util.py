"""`jax._src.traceback_util`: the boundaries whose exceptions show only user frames, and the
paths of libraries that hide their own frames too (core/traceback_util.py)."""
from pyjax._src.core import source_info
from pyjax._src.core import traceback_util as _impl


def register_exclusion(path):
    """Frames of files under ``path`` are filtered out like pyjax's own."""
    source_info.add_internal_path(path)


def api_boundary(fun=None, **kwargs):
    """Marks a user-facing API function: its exceptions show the user's frames only."""
    if fun is None:
        return _impl.api_boundary
    return _impl.api_boundary(fun)


def include_frame(frame):
    return not source_info.is_internal(frame.f_code)
