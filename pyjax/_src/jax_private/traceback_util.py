"""`jax._src.traceback_util`: JAX hides library frames from user tracebacks; pyjax does not
filter tracebacks, so these record the request and change nothing else."""
_exclude_paths = []


def register_exclusion(path):
    _exclude_paths.append(path)


def api_boundary(fun=None, **kwargs):
    """Marks a user-facing API function (a traceback-filtering boundary in JAX): the function
    itself is returned unchanged."""
    if fun is None:
        return lambda f: f
    return fun


def include_frame(frame):
    return not any(frame.f_code.co_filename.startswith(p) for p in _exclude_paths)
