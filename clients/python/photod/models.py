"""What photod's answers hold, as objects: attribute access to every field of the records
documented in docs/PROTOCOL.md (``asset.local_date_time`` for ``localDateTime``), the JSON
itself in ``.raw``."""
from __future__ import annotations

import base64
import datetime as _dt
import re
from typing import Any, Dict, Generic, List, Optional, Tuple, TypeVar, Union, overload

T = TypeVar("T")
_CAMEL = re.compile(r"_([a-z0-9])")


def camel(name: str) -> str:
    """``local_date_time`` → ``localDateTime``; ``key_asset_ids`` → ``keyAssetIDs``."""
    out = _CAMEL.sub(lambda m: m.group(1).upper(), name)
    return re.sub(r"Ids\b", "IDs", re.sub(r"Id\b", "ID", out)) if out != "id" else out


class _Field(Generic[T]):
    """A documented member of a record: None when photod left it out."""

    def __init__(self, key: Optional[str] = None) -> None:
        self.key = key

    def __set_name__(self, owner: type, name: str) -> None:
        if self.key is None:
            self.key = camel(name)

    @overload
    def __get__(self, obj: None, owner: type) -> "_Field[T]": ...
    @overload
    def __get__(self, obj: "Record", owner: type) -> T: ...

    def __get__(self, obj: Optional["Record"], owner: type) -> Union["_Field[T]", T]:
        if obj is None:
            return self
        return obj.raw.get(self.key)  # type: ignore[arg-type,return-value]


class Record:
    """One JSON object from photod. Every member is an attribute under its snake_case name;
    members a newer photod adds appear the same way."""

    def __init__(self, raw: Dict[str, Any]) -> None:
        self.raw = raw

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raw = self.__dict__.get("raw", {})
        for key in (camel(name), name):
            if key in raw:
                return raw[key]
        raise AttributeError(f"{type(self).__name__} has no field {name!r} (members: {', '.join(sorted(raw))})")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.raw == self.raw  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.raw.get("id")))

    def __repr__(self) -> str:
        shown = {k: self.raw[k] for k in ("id", "token", "title", "path", "localDate") if k in self.raw}
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in shown.items())})"


def _local(text: Optional[str]) -> Optional[_dt.datetime]:
    return _dt.datetime.fromisoformat(text) if text else None


def _utc(text: Optional[str]) -> Optional[_dt.datetime]:
    return _dt.datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None


class Resource(Record):
    """One file behind an asset: ``role`` is ``primary``, ``raw``, ``pairedVideo`` or ``sidecar``."""
    path: _Field[str] = _Field()
    role: _Field[str] = _Field()
    path_bytes: _Field[Optional[str]] = _Field()

    @property
    def fs_path(self) -> Union[str, bytes]:
        """The path to open: bytes when the name is not valid UTF-8, else the string."""
        return base64.b64decode(self.raw["pathBytes"]) if self.raw.get("pathBytes") else self.raw["path"]


class Asset(Record):
    """A photo or video (PhotoKit's ``PHAsset``). See docs/PROTOCOL.md, "The asset record".

    An asset of a ``FetchResult`` that left the library after the fetch has only its id:
    ``exists`` is False and the other fields are None.
    """
    id: _Field[str] = _Field()
    path: _Field[str] = _Field()
    path_bytes: _Field[Optional[str]] = _Field()
    media_type: _Field[str] = _Field()
    format: _Field[str] = _Field()
    subtypes: _Field[List[str]] = _Field()
    local_date_time: _Field[str] = _Field()
    utc_offset: _Field[Optional[str]] = _Field()
    utc_offset_source: _Field[Optional[str]] = _Field()
    date_source: _Field[str] = _Field()
    pixel_width: _Field[Optional[int]] = _Field()
    pixel_height: _Field[Optional[int]] = _Field()
    orientation: _Field[int] = _Field()
    latitude: _Field[Optional[float]] = _Field()
    longitude: _Field[Optional[float]] = _Field()
    altitude: _Field[Optional[float]] = _Field()
    #: Where it was taken, in words: ``{"city", "subLocation", "region", "country",
    #: "countryCode", "source"}`` (and ``"near"``), or None.
    place: _Field[Optional[Dict[str, Optional[str]]]] = _Field()
    make: _Field[Optional[str]] = _Field()
    model: _Field[Optional[str]] = _Field()
    lens_model: _Field[Optional[str]] = _Field()
    duration: _Field[Optional[float]] = _Field()
    frame_rate: _Field[Optional[float]] = _Field()
    capture_frame_rate: _Field[Optional[float]] = _Field()
    video_codec: _Field[Optional[str]] = _Field()
    audio_codec: _Field[Optional[str]] = _Field()
    bit_rate: _Field[Optional[int]] = _Field()
    burst_identifier: _Field[Optional[str]] = _Field()
    represents_burst: _Field[bool] = _Field()
    rating: _Field[Optional[int]] = _Field()
    keywords: _Field[List[str]] = _Field()
    is_favorite: _Field[bool] = _Field()
    is_hidden: _Field[bool] = _Field()
    is_available: _Field[bool] = _Field()
    file_size: _Field[int] = _Field()
    added_date: _Field[str] = _Field()

    @property
    def exists(self) -> bool:
        """False for an asset that left the library after its fetch (only ``id`` is known)."""
        return "path" in self.raw

    @property
    def resources(self) -> List[Resource]:
        """The files behind the asset, the primary first."""
        return [Resource(r) for r in self.raw.get("resources") or []]

    @property
    def fs_path(self) -> Union[str, bytes, None]:
        """The primary file's path to open: bytes when the name is not valid UTF-8."""
        if self.raw.get("pathBytes"):
            return base64.b64decode(self.raw["pathBytes"])
        return self.raw.get("path")

    @property
    def is_video(self) -> bool:
        return self.raw.get("mediaType") == "video"

    @property
    def capture_datetime(self) -> Optional[_dt.datetime]:
        """``local_date_time`` as a datetime on the capture clock: naive, or aware when the UTC
        offset is known (never converted to this machine's zone)."""
        local = _local(self.local_date_time)
        if local is None or not self.utc_offset:
            return local
        sign = 1 if self.utc_offset[0] == "+" else -1
        hours, minutes = (int(x) for x in self.utc_offset[1:].split(":"))
        return local.replace(tzinfo=_dt.timezone(sign * _dt.timedelta(hours=hours, minutes=minutes)))

    @property
    def added_datetime(self) -> Optional[_dt.datetime]:
        """When photod first indexed it (UTC, aware)."""
        return _utc(self.added_date)

    @property
    def display_size(self) -> Tuple[Optional[int], Optional[int]]:
        """(width, height) as shown: orientations 5–8 swap the stored sides."""
        w, h = self.pixel_width, self.pixel_height
        return (h, w) if (self.orientation or 1) >= 5 else (w, h)


class _Collection(Record):
    id: _Field[str] = _Field()
    title: _Field[str] = _Field()
    asset_count: _Field[int] = _Field()
    key_asset_ids: _Field[List[str]] = _Field()
    start_date: _Field[Optional[str]] = _Field()
    end_date: _Field[Optional[str]] = _Field()


class Moment(_Collection):
    """One calendar day on the capture clock (``m_YYYYMMDD``). ``title`` is where its photos
    were taken ("Lisbon & Sintra"; None when none has a place), ``date_title`` the day
    ("Saturday, 4 May 2019"), ``location_names`` its cities, most photos first."""
    local_date: _Field[str] = _Field()
    date_title: _Field[Optional[str]] = _Field()
    location_names: _Field[Optional[List[str]]] = _Field()
    photo_count: _Field[int] = _Field()
    video_count: _Field[int] = _Field()
    latitude: _Field[Optional[float]] = _Field()
    longitude: _Field[Optional[float]] = _Field()

    @property
    def date(self) -> _dt.date:
        return _dt.date.fromisoformat(self.local_date)


class MomentList(_Collection):
    """A year (``y_YYYY``) or month (``mo_YYYY-MM``) of moments."""
    kind: _Field[str] = _Field()
    year: _Field[int] = _Field()
    month: _Field[Optional[int]] = _Field()
    photo_count: _Field[int] = _Field()
    video_count: _Field[int] = _Field()
    moment_count: _Field[int] = _Field()
    moment_ids: _Field[List[str]] = _Field()


class Album(_Collection):
    """A folder album (``f_…``): a directory that directly holds visible assets."""
    kind: _Field[str] = _Field()
    path: _Field[str] = _Field()


class SmartAlbum(_Collection):
    """A smart album (``s_…``) with its rule."""
    subtype: _Field[str] = _Field()
    rule: _Field[str] = _Field()


class Place(_Collection):
    """A country, region or city where photos were taken (``pl_…``): ``kind``, ``country_code``,
    and the regions and cities below it as ``places``."""
    kind: _Field[str] = _Field()
    country_code: _Field[Optional[str]] = _Field()

    @property
    def places(self) -> List["Place"]:
        return [Place(r) for r in (self.raw.get("places") or [])]


class UserAlbum(_Collection):
    """An album a user made (``u_…``), kept only in photod's database."""
    folder_id: _Field[Optional[str]] = _Field()
    created_date: _Field[str] = _Field()
    updated_date: _Field[str] = _Field()


class UserFolder(_Collection):
    """A folder of user albums (``uf_…``)."""
    parent_id: _Field[Optional[str]] = _Field()
    created_date: _Field[str] = _Field()
    updated_date: _Field[str] = _Field()


class CollectionList(_Collection):
    """The folder tree above folder albums (``l_…``)."""
    path: _Field[str] = _Field()
    parent_id: _Field[Optional[str]] = _Field()
    list_ids: _Field[List[str]] = _Field()
    album_ids: _Field[List[str]] = _Field()
    album_count: _Field[int] = _Field()


class Status(Record):
    """``library.status``: ``state`` (``indexing``/``idle``), counts, roots, the last scan…"""
    state: _Field[str] = _Field()
    version: _Field[str] = _Field()
    pid: _Field[int] = _Field()

    @property
    def is_idle(self) -> bool:
        return self.raw.get("state") == "idle"


class ChangeSet(Record):
    """One commit's changes (docs/PROTOCOL.md, "Change sets"), in token order."""
    token: _Field[int] = _Field()
    time: _Field[str] = _Field()

    def _part(self, group: str, kind: str) -> List[str]:
        return list((self.raw.get(group) or {}).get(kind) or [])

    @property
    def assets_inserted(self) -> List[str]:
        return self._part("assets", "inserted")

    @property
    def assets_updated(self) -> List[str]:
        return self._part("assets", "updated")

    @property
    def assets_deleted(self) -> List[str]:
        return self._part("assets", "deleted")

    @property
    def collections_inserted(self) -> List[str]:
        return self._part("collections", "inserted")

    @property
    def collections_updated(self) -> List[str]:
        return self._part("collections", "updated")

    @property
    def collections_deleted(self) -> List[str]:
        return self._part("collections", "deleted")

    @property
    def committed_at(self) -> Optional[_dt.datetime]:
        """The commit time (UTC, aware)."""
        return _utc(self.time)

    def names(self, id: str) -> bool:
        """Whether the change set names this asset or collection."""
        return any(id in self._part(g, k) for g in ("assets", "collections") for k in ("inserted", "updated", "deleted"))


class Image(Record):
    """A rendered image in photod's cache: read ``path`` (it holds this image for as long as it
    exists; request again rather than keep it)."""
    asset: _Field[str] = _Field()
    path: _Field[str] = _Field()
    width: _Field[int] = _Field()
    height: _Field[int] = _Field()
    format: _Field[str] = _Field()
    is_degraded: _Field[bool] = _Field()

    @property
    def content_type(self) -> str:
        return "image/png" if self.raw.get("format") == "png" else "image/jpeg"


class WriteResult(Record):
    """A write's answer: ``token`` of its change set (None when nothing changed) and ``updated`` ids."""
    token: _Field[Optional[int]] = _Field()
    updated: _Field[List[str]] = _Field()
