"""Finding photod's socket as photoctl does, and one blocking JSON-RPC connection on it."""
from __future__ import annotations

import json
import os
import socket
import threading
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

from . import errors

SYSTEM_SOCKET = "/run/photod/photod.sock"
#: photod may send lines this long (a page of records with long paths): longer is a broken reply.
MAX_LINE = 64 * 1024 * 1024

PathLike = Union[str, bytes, "os.PathLike[str]"]


def default_sockets(environ: Optional[Mapping[str, str]] = None) -> List[str]:
    """The sockets photoctl tries, in its order: ``$PHOTOD_SOCKET`` alone when it is set; else the
    per-user socket (``$RUNTIME_DIRECTORY`` — its first directory — else ``$XDG_RUNTIME_DIR``,
    else ``/tmp/photod-$UID``, or ``/run/photod`` for root), then the system service's
    ``/run/photod/photod.sock``."""
    env = os.environ if environ is None else environ
    if env.get("PHOTOD_SOCKET"):
        return [env["PHOTOD_SOCKET"]]
    directory = (env.get("RUNTIME_DIRECTORY", "").split(":")[0] or env.get("XDG_RUNTIME_DIR")
                 or ("/run/photod" if os.getuid() == 0 else f"/tmp/photod-{os.getuid()}"))
    own = os.path.join(directory, "photod.sock")
    return [own] if own == SYSTEM_SOCKET else [own, SYSTEM_SOCKET]


def sockets_for(socket_path: Optional[Union[PathLike, Sequence[PathLike]]]) -> List[str]:
    """``socket_path`` as a list of paths; the default places when None."""
    if socket_path is None:
        return default_sockets()
    if isinstance(socket_path, (str, bytes, os.PathLike)):
        return [os.fsdecode(socket_path)]
    return [os.fsdecode(p) for p in socket_path]


Notification = Dict[str, Any]


class _Null:
    """A parameter sent as JSON ``null`` (``None`` leaves a parameter out)."""

    def __repr__(self) -> str:
        return "NULL"


NULL = _Null()


class Connection:
    """One connection to photod: requests go out as lines, answers are matched by id, and the
    notifications that arrive in between go to ``on_notification``. Not for several threads at
    once (``Library`` keeps a pool of them)."""

    def __init__(self, sock: socket.socket, path: str, timeout: Optional[float]) -> None:
        self.sock = sock
        self.path = path
        self.timeout = timeout
        self._buffer = bytearray()
        self._next_id = 0
        self.closed = False
        #: Set when photod said it stops or reloads: the connection is not used again.
        self.stopping = False
        self._close_lock = threading.Lock()

    @classmethod
    def open(cls, paths: Sequence[str], timeout: Optional[float] = 60.0) -> "Connection":
        """The first of ``paths`` that accepts; else ``Unreachable`` with the most telling reason
        (a socket we may not open beats one that is missing)."""
        failures: List[OSError] = []
        for path in paths:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.settimeout(timeout)
                s.connect(path)
                return cls(s, path, timeout)
            except OSError as e:
                s.close()
                failures.append(e)
        denied = next((e for e in failures if isinstance(e, PermissionError)), None)
        first = denied or (failures[0] if failures else OSError("no socket to try"))
        where = ", ".join(paths) or "(none)"
        hint = ("; ask to be added to photod's socket group" if denied else
                "; is photod running? (set $PHOTOD_SOCKET or pass socket= to choose the socket)")
        raise errors.Unreachable(f"cannot reach photod at {where}: {first.strerror or first}{hint}",
                                 sockets=list(paths), permission=denied is not None)

    def close(self) -> None:
        """Closes the socket; a read waiting in another thread ends with ``ConnectionLost``."""
        with self._close_lock:
            if self.closed:
                return
            self.closed = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()

    # Writing

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def send(self, method: str, params: Optional[Mapping[str, Any]] = None, request_id: Optional[int] = None) -> int:
        """Sends one request; returns its id."""
        rid = self.new_id() if request_id is None else request_id
        message: Dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params:
            message["params"] = {k: (None if v is NULL else v) for k, v in params.items() if v is not None}
        line = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        try:
            self.sock.sendall(line)
        except OSError as e:
            self.close()
            lost = errors.ConnectionLost(f"the connection to photod broke while sending: {e}", method=method)
            lost.delivered = False
            raise lost from None
        return rid

    # Reading

    def read_message(self, method: Optional[str] = None, timeout: Optional[float] = ...) -> Dict[str, Any]:  # type: ignore[assignment]
        """The next message photod sends. ``timeout`` (seconds; None waits forever; default the
        connection's) raises ``TimeoutError`` when nothing whole arrives in time."""
        if timeout is not ...:
            self.sock.settimeout(timeout)
        try:
            while True:
                end = self._buffer.find(b"\n")
                if end >= 0:
                    line = bytes(self._buffer[:end])
                    del self._buffer[:end + 1]
                    if not line.strip():
                        continue
                    try:
                        message = json.loads(line)
                    except ValueError as e:
                        raise errors.MalformedReply(f"photod sent a line that is not JSON: {e}", method=method) from None
                    if not isinstance(message, dict):
                        raise errors.MalformedReply("photod sent a line that is not a JSON object", method=method)
                    return message
                if len(self._buffer) > MAX_LINE:
                    self.close()
                    raise errors.MalformedReply(f"a line longer than {MAX_LINE} bytes", method=method)
                try:
                    chunk = self.sock.recv(1 << 20)
                except socket.timeout:
                    raise TimeoutError(f"photod did not answer {method or 'in time'}") from None
                except OSError as e:
                    self.close()
                    raise errors.ConnectionLost(f"the connection to photod broke: {e}", method=method) from None
                if not chunk:
                    self.close()
                    raise errors.ConnectionLost("photod closed the connection", method=method)
                self._buffer += chunk
        finally:
            if timeout is not ... and not self.closed:
                self.sock.settimeout(self.timeout)

    def call(self, method: str, params: Optional[Mapping[str, Any]] = None,
             on_notification: Optional[Callable[[Notification], None]] = None) -> Any:
        """Sends a request and returns its ``result``; photod's error as its ``PhotodError``."""
        rid = self.send(method, params)
        while True:
            try:
                message = self.read_message(method)
            except TimeoutError:
                # The answer may still come: this connection cannot be matched again.
                self.close()
                raise
            if "method" in message and "id" not in message:
                self._notice(message)
                if on_notification is not None:
                    on_notification(message)
                continue
            if message.get("id") != rid:
                continue  # an answer to a request given up on (a cancelled image request)
            if "error" in message:
                raise errors.from_response(message["error"], method)
            if "result" not in message:
                raise errors.MalformedReply("an answer with neither result nor error", method=method)
            return message["result"]

    def _notice(self, message: Notification) -> None:
        if message.get("method") in ("photod.stopping", "photod.reloading"):
            self.stopping = True
