"""The key-value store that the processes of one distributed run share (what JAX's
coordination service gives ``jax.distributed``): process 0 serves it over TCP, every process
(process 0 too) talks to it with a ``KeyValueClient``. A PJRT plugin that builds a
multi-process client exchanges its topology through it, via the ``kv_*_callback`` arguments of
``PJRT_Client_Create`` (:func:`pjrt_callbacks`).

The wire format is one JSON object per line each way; values are bytes (base64 on the wire).
Every wait has a timeout: a blocking get, the connect, each socket read.
"""
import base64
import ctypes
import json
import socket
import socketserver
import threading
import time
from ctypes import POINTER, c_char_p, c_int, c_size_t, c_void_p

_NOT_FOUND, _DEADLINE_EXCEEDED, _INTERNAL = 5, 4, 13   # PJRT_Error_Code (absl's)


class KeyValueError(RuntimeError):
    """A failed store operation; ``code`` is the PJRT/absl error code it maps to."""

    def __init__(self, message, code=_INTERNAL):
        super().__init__(message)
        self.code = code


def split_address(address):
    """``'host:port'`` (or ``'[::1]:port'``) -> (host, port)."""
    if not isinstance(address, str) or ":" not in address:
        raise ValueError(f"expected an address 'host:port', got {address!r}")
    host, port = address.rsplit(":", 1)
    try:
        port = int(port)
    except ValueError:
        raise ValueError(f"expected an address 'host:port' with a numeric port, "
                         f"got {address!r}") from None
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    return host or "0.0.0.0", port


class _Store:
    def __init__(self):
        self.data = {}
        self.cond = threading.Condition()
        self.connected = set()

    def handle(self, req):
        op = req.get("op")
        with self.cond:
            if op == "set":
                self.data[req["key"]] = req["value"]
                self.cond.notify_all()
                return {"ok": True}
            if op == "try_get":
                if req["key"] in self.data:
                    return {"ok": True, "value": self.data[req["key"]]}
                return {"ok": False, "code": _NOT_FOUND,
                        "error": f"key {req['key']!r} not found"}
            if op == "get":
                ok = self.cond.wait_for(lambda: req["key"] in self.data,
                                        timeout=max(0.0, req["timeout_ms"] / 1000))
                if ok:
                    return {"ok": True, "value": self.data[req["key"]]}
                return {"ok": False, "code": _DEADLINE_EXCEEDED,
                        "error": f"key {req['key']!r} not set within {req['timeout_ms']} ms"}
            if op == "connect":   # a barrier: every process of the run has connected
                self.connected.add(req["process_id"])
                self.cond.notify_all()
                ok = self.cond.wait_for(lambda: len(self.connected) >= req["num_processes"],
                                        timeout=max(0.0, req["timeout_ms"] / 1000))
                if ok:
                    return {"ok": True}
                return {"ok": False, "code": _DEADLINE_EXCEEDED,
                        "error": f"only processes {sorted(self.connected)} of "
                                 f"{req['num_processes']} connected within "
                                 f"{req['timeout_ms']} ms"}
        return {"ok": False, "code": _INTERNAL, "error": f"unknown request {op!r}"}


class _Handler(socketserver.StreamRequestHandler):
    def handle(self):
        for line in self.rfile:
            try:
                reply = self.server.store.handle(json.loads(line))
            except Exception as e:  # noqa: BLE001 - a bad request must not kill the server
                reply = {"ok": False, "code": _INTERNAL, "error": f"bad request: {e}"}
            self.wfile.write(json.dumps(reply).encode() + b"\n")


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class KeyValueServer:
    """The store, served on ``bind_address`` ('host:port'; port 0 picks a free one) by a
    daemon thread until :meth:`shutdown`."""

    def __init__(self, bind_address):
        host, port = split_address(bind_address)
        host = "0.0.0.0" if host in ("::", "") else host
        try:
            self._server = _Server((host, port), _Handler)
        except OSError as e:
            raise KeyValueError(f"could not serve the coordinator at {bind_address!r}: "
                                f"{e}") from None
        self._server.store = _Store()
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        name="pyjax-kv-store", daemon=True)
        self._thread.start()

    def shutdown(self):
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


class KeyValueClient:
    """One process's connection to the store; thread-safe: each request takes a connection
    from a pool (a new one when all are busy), so a blocking get never holds up a put."""

    def __init__(self, address, timeout_s):
        self._host, self._port = split_address(address)
        self._address = address
        self._pool = [self._connect(timeout_s)]   # the coordinator may not be listening yet
        self._closed = False

    def _connect(self, timeout_s):
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                sock = socket.create_connection(
                    (self._host, self._port), timeout=max(0.1, deadline - time.monotonic()))
                return sock, sock.makefile("rwb")
            except OSError as e:
                if time.monotonic() >= deadline:
                    raise KeyValueError(f"could not connect to the coordinator at "
                                        f"{self._address!r} within {timeout_s} s: {e}",
                                        _DEADLINE_EXCEEDED) from None
                time.sleep(0.05)

    def _request(self, req, wait_s):
        if self._closed:
            raise KeyValueError("the key-value client is closed")
        try:
            sock, f = self._pool.pop()
        except IndexError:
            sock, f = self._connect(10.0)
        try:
            sock.settimeout(wait_s + 10.0)   # the server answers by then or is gone
            f.write(json.dumps(req).encode() + b"\n")
            f.flush()
            line = f.readline()
        except OSError as e:
            sock.close()
            raise KeyValueError(f"the coordinator did not answer: {e}") from None
        if not line:
            sock.close()
            raise KeyValueError("the coordinator closed the connection")
        self._pool.append((sock, f))
        reply = json.loads(line)
        if not reply["ok"]:
            raise KeyValueError(reply["error"], reply["code"])
        return reply

    def set(self, key, value):
        value = value.encode() if isinstance(value, str) else bytes(value)
        self._request({"op": "set", "key": key,
                       "value": base64.b64encode(value).decode()}, 0)

    def blocking_get(self, key, timeout_ms):
        reply = self._request({"op": "get", "key": key, "timeout_ms": int(timeout_ms)},
                              timeout_ms / 1000)
        return base64.b64decode(reply["value"])

    def try_get(self, key):
        return base64.b64decode(self._request({"op": "try_get", "key": key}, 0)["value"])

    def connect(self, process_id, num_processes, timeout_s):
        self._request({"op": "connect", "process_id": process_id,
                       "num_processes": num_processes, "timeout_ms": int(timeout_s * 1000)},
                      timeout_s)

    def close(self):
        self._closed = True
        while self._pool:
            sock, f = self._pool.pop()
            f.close()
            sock.close()


# --- the PJRT_Client_Create callbacks ------------------------------------------------------
# PJRT_KeyValue{Get,TryGet,Put}Callback_Args (pjrt_c_api.h, 0.81). callback_error points at a
# PJRT_CallbackError function pointer, which makes the PJRT_Error* a failing callback returns.
_ERROR_FN = ctypes.CFUNCTYPE(c_void_p, c_int, c_char_p, c_size_t)


class KVGetArgs(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("extension_start", c_void_p),
                ("key", c_void_p), ("key_size", c_size_t), ("timeout_in_ms", c_int),
                ("callback_error", POINTER(_ERROR_FN)), ("user_arg", c_void_p),
                ("value", c_void_p), ("value_size", c_size_t),
                ("value_deleter_callback", c_void_p)]


class KVTryGetArgs(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("extension_start", c_void_p),
                ("key", c_void_p), ("key_size", c_size_t),
                ("callback_error", POINTER(_ERROR_FN)), ("user_arg", c_void_p),
                ("value", c_void_p), ("value_size", c_size_t),
                ("value_deleter_callback", c_void_p)]


class KVPutArgs(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("extension_start", c_void_p),
                ("key", c_void_p), ("key_size", c_size_t),
                ("value", c_void_p), ("value_size", c_size_t),
                ("callback_error", POINTER(_ERROR_FN)), ("user_arg", c_void_p)]


_CALLBACK = ctypes.CFUNCTYPE(c_void_p, c_void_p)   # PJRT_Error* (*)(Args*)
_libc = ctypes.CDLL(None)
_libc.malloc.restype, _libc.malloc.argtypes = c_void_p, [c_size_t]
_FREE = ctypes.cast(_libc.free, c_void_p).value   # the value deleter the plugin calls


def _fail(args, code, message):
    """The PJRT_Error* for a failure, made by the plugin's callback_error (NULL if absent)."""
    if not args.callback_error:
        return None
    msg = str(message).encode("utf-8", "replace")
    return args.callback_error[0](code, msg, len(msg))


def _give_value(args, value):
    buf = _libc.malloc(max(1, len(value)))
    if not buf:
        return _fail(args, 8, "out of memory for a key-value store value")
    ctypes.memmove(buf, value, len(value))
    args.value, args.value_size, args.value_deleter_callback = buf, len(value), _FREE
    return None


def _guarded(struct, body):
    """A C callback running ``body(args)``: no exception ever leaves it (it becomes the
    plugin's error), so a mistake in Python cannot take the process down."""
    def callback(ptr):
        if not ptr:   # nothing to answer (and nothing to read)
            return None
        args = struct.from_address(ptr)
        try:
            return body(args)
        except KeyValueError as e:
            return _fail(args, e.code, e)
        except BaseException as e:  # noqa: BLE001
            return _fail(args, _INTERNAL, f"{type(e).__name__}: {e}")
    return _CALLBACK(callback)


def pjrt_callbacks(client):
    """``{field: function pointer}`` for ``PJRT_Client_Create_Args`` (kv_get_callback,
    kv_put_callback, kv_try_get_callback) backed by ``client``, and the ctypes objects to keep
    alive as long as the PJRT client."""
    def key(args):
        return ctypes.string_at(args.key, args.key_size).decode("utf-8", "replace")

    def get(args):
        return _give_value(args, client.blocking_get(key(args), args.timeout_in_ms))

    def try_get(args):
        return _give_value(args, client.try_get(key(args)))

    def put(args):
        client.set(key(args), ctypes.string_at(args.value, args.value_size))
        return None

    keep = [_guarded(KVGetArgs, get), _guarded(KVPutArgs, put),
            _guarded(KVTryGetArgs, try_get)]
    ptrs = [ctypes.cast(f, c_void_p).value for f in keep]
    return dict(zip(("kv_get_callback", "kv_put_callback", "kv_try_get_callback"), ptrs)), keep
