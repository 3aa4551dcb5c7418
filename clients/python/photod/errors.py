"""The errors photod answers, one class per JSON-RPC code, and the client's own."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Type


class PhotodError(Exception):
    """An error from photod (``code`` is its JSON-RPC code), or from reaching it (``code`` None).

    ``name`` is photod's symbolic name (``"notFound"``), ``detail`` the sentence for people,
    ``data`` the whole ``error.data`` object (members particular to the error).
    """

    code: Optional[int] = None
    name: str = "error"

    def __init__(self, detail: str, *, code: Optional[int] = None, name: Optional[str] = None,
                 data: Optional[Dict[str, Any]] = None, method: Optional[str] = None) -> None:
        super().__init__(detail)
        if code is not None:
            self.code = code
        if name is not None:
            self.name = name
        self.detail = detail
        self.data: Dict[str, Any] = data or {}
        self.method = method

    def __str__(self) -> str:
        where = f"{self.method}: " if self.method else ""
        return f"{where}{self.name}: {self.detail}" if self.code is not None else f"{where}{self.detail}"


class Unreachable(PhotodError):
    """No socket accepted a connection (photod not running, or not allowed to connect)."""
    name = "unreachable"

    def __init__(self, detail: str, *, sockets: Optional[List[str]] = None, permission: bool = False) -> None:
        super().__init__(detail)
        self.sockets = sockets or []
        #: True when a socket was there but refused us (its mode or group): retrying will not help.
        self.permission = permission


class ConnectionLost(PhotodError):
    """The connection ended before photod answered (photod stopped or was killed). ``delivered``
    is False when the request never left (safe to send again, whatever it was)."""
    name = "connectionLost"
    delivered = True


class MalformedReply(PhotodError):
    """photod sent something this client cannot read (a bug on one side or the other)."""
    name = "malformedReply"


class ParseError(PhotodError):
    code, name = -32700, "parseError"


class InvalidRequest(PhotodError):
    code, name = -32600, "invalidRequest"


class MethodNotFound(PhotodError):
    code, name = -32601, "methodNotFound"


class InvalidParams(PhotodError):
    """Wrong, missing or unknown parameters; ``param`` names the one at fault when photod does
    (and ``position`` where a predicate or sort does not parse)."""
    code, name = -32602, "invalidParams"

    @property
    def param(self) -> Optional[str]:
        return self.data.get("param")

    @property
    def position(self) -> Optional[int]:
        return self.data.get("position")


class InternalError(PhotodError):
    code, name = -32603, "internalError"


class TokenExpired(PhotodError):
    """The token is older than photod's journal keeps (or newer than its database: rebuilt).
    Refetch what you hold, then resume from ``current_token``."""
    code, name = -32001, "tokenExpired"

    @property
    def current_token(self) -> Optional[int]:
        return self.data.get("currentToken")


class Unavailable(PhotodError):
    """A write could not be committed now (disk full, database busy), or a tree's disk is not there."""
    code, name = -32002, "unavailable"


class PermissionDenied(PhotodError):
    """A write from a caller who is not one of photod's writers."""
    code, name = -32003, "permissionDenied"


class NotFound(PhotodError):
    """An object named in the request does not exist (``ids`` for writes, ``id`` for a collection)."""
    code, name = -32004, "notFound"

    @property
    def ids(self) -> List[str]:
        return list(self.data.get("ids") or ([self.data["id"]] if "id" in self.data else []))


class Overloaded(PhotodError):
    code, name = -32005, "overloaded"


class Unsupported(PhotodError):
    """An image of a format photod does not render (MNG, ICO, BPG)."""
    code, name = -32006, "unsupported"


class Cancelled(PhotodError):
    code, name = -32007, "cancelled"


class ImageFailed(PhotodError):
    """The asset's file cannot be rendered; ``reason`` is ``corrupt``, ``undecodable``,
    ``unreadable``, ``tooLarge`` or ``timeout``."""
    code, name = -32008, "imageFailed"

    @property
    def reason(self) -> Optional[str]:
        return self.data.get("reason")


class Conflict(PhotodError):
    """(``assets.trash``, ``restore``, ``deletePermanently``) a file on disk is not the one photod
    indexed or trashed: changed, replaced or gone. ``refused`` lists each asset and its reason;
    nothing was changed."""
    code, name = -32010, "conflict"


class TooLarge(PhotodError):
    """(photod-nats) an answer larger than the NATS server's ``max_payload``."""
    code, name = -32009, "tooLarge"


_BY_CODE: Dict[int, Type[PhotodError]] = {
    c.code: c for c in (ParseError, InvalidRequest, MethodNotFound, InvalidParams, InternalError, TokenExpired,
                        Unavailable, PermissionDenied, NotFound, Overloaded, Unsupported, Cancelled, ImageFailed,
                        Conflict, TooLarge) if c.code is not None
}


def from_response(error: Any, method: Optional[str] = None) -> PhotodError:
    """The exception for a JSON-RPC ``error`` member."""
    if not isinstance(error, dict) or not isinstance(error.get("code"), int):
        return MalformedReply(f"an error without a code: {error!r}", method=method)
    data = error.get("data") if isinstance(error.get("data"), dict) else {}
    detail = data.get("detail") or error.get("message") or "error"
    cls = _BY_CODE.get(error["code"], PhotodError)
    return cls(detail, code=error["code"], name=data.get("name") or cls.name, data=data, method=method)
