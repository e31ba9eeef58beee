"""`jax.monitoring`: listeners for events, durations, time spans and scalars that a program
(or a library: orbax records its save and restore times) reports. pyjax itself records
nothing; the listeners get what user and library code records."""
_event_listeners = []
_duration_listeners = []
_time_span_listeners = []
_scalar_listeners = []


def record_event(event, **kwargs):
    for f in list(_event_listeners):
        f(event, **kwargs)


def record_event_duration_secs(event, duration, **kwargs):
    for f in list(_duration_listeners):
        f(event, duration, **kwargs)


def record_event_time_span(event, start_time, end_time, **kwargs):
    for f in list(_time_span_listeners):
        f(event, start_time, end_time, **kwargs)


def record_scalar(event, value, **kwargs):
    for f in list(_scalar_listeners):
        f(event, value, **kwargs)


def register_event_listener(callback):
    _event_listeners.append(callback)


def register_event_duration_secs_listener(callback):
    _duration_listeners.append(callback)


def register_event_time_span_listener(callback):
    _time_span_listeners.append(callback)


def register_scalar_listener(callback):
    _scalar_listeners.append(callback)


def _unregister(listeners, callback, kind):
    if callback not in listeners:
        raise AssertionError(f"{kind} listener {callback!r} is not registered")
    listeners.remove(callback)


def unregister_event_listener(callback):
    _unregister(_event_listeners, callback, "event")


def unregister_event_duration_listener(callback):
    _unregister(_duration_listeners, callback, "event duration")


def unregister_event_time_span_listener(callback):
    _unregister(_time_span_listeners, callback, "event time span")


def unregister_scalar_listener(callback):
    _unregister(_scalar_listeners, callback, "scalar")


def clear_event_listeners():
    for listeners in (_event_listeners, _duration_listeners, _time_span_listeners,
                      _scalar_listeners):
        listeners.clear()
