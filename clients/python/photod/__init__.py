"""photod's client library for Python: the library photod indexes, its change sets, change
details and images, on photod's Unix socket (standard library only).

    import photod
    lib = photod.Library()                    # finds the socket as photoctl does
    videos = lib.assets('mediaType == "video"', sort="-localDateTime")
    for change in lib.changes(since=videos.token):
        details = videos.change_details(change)
        ...

See docs/PYTHON.md; the protocol underneath is docs/PROTOCOL.md.
"""
from ._connection import NULL, SYSTEM_SOCKET, default_sockets
from .details import ChangeDetails, Move
from .errors import (Cancelled, Conflict, ConnectionLost, ImageFailed, InternalError, InvalidParams, InvalidRequest,
                     MalformedReply, MethodNotFound, NotFound, Overloaded, ParseError, PermissionDenied, PhotodError,
                     TokenExpired, TooLarge, Unavailable, Unreachable, Unsupported)
from .library import Changes, Collections, FetchRequest, FetchResult, Library
from .models import (Album, Asset, ChangeSet, CollectionList, Image, Moment, MomentList, Place, Record, Resource, SmartAlbum,
                     Status, UserAlbum, UserFolder, WriteResult)

__version__ = "0.1.0"

__all__ = [
    "Library", "FetchResult", "FetchRequest", "Collections", "Changes", "ChangeDetails", "Move",
    "Asset", "Resource", "Moment", "MomentList", "Album", "SmartAlbum", "Place", "UserAlbum", "UserFolder", "CollectionList",
    "ChangeSet", "Image", "Status", "Record", "WriteResult",
    "PhotodError", "Unreachable", "ConnectionLost", "MalformedReply", "ParseError", "InvalidRequest", "MethodNotFound",
    "InvalidParams", "InternalError", "TokenExpired", "Unavailable", "PermissionDenied", "NotFound", "Overloaded",
    "Unsupported", "Cancelled", "ImageFailed", "Conflict", "TooLarge",
    "default_sockets", "SYSTEM_SOCKET", "NULL",
]
