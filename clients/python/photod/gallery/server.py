"""The gallery's server: a timeline of moments, albums and an asset view over HTTP, kept live by
photod's change sets (Server-Sent Events), on the standard library's ``http.server``.

Nothing from a request reaches the file system: routes are fixed patterns, ids are checked
against photod's id syntax, and the only files read are the gallery's own static files (loaded
at start) and the image paths photod answers.
"""
from __future__ import annotations

import collections
import hashlib
import ipaddress
import json
import os
import queue
import re
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Deque, Dict, Iterable, List, Optional, Set, Tuple
from urllib.parse import parse_qs, urlsplit

from .. import errors
from ..library import FetchResult, Library
from ..models import Asset, ChangeSet, Moment

STATIC = Path(__file__).resolve().parent / "static"
ASSET_ID = re.compile(r"a_[a-z2-7]{20}")
COLLECTION_ID = re.compile(r"(?:m_\d{8}|f_[a-z2-7]{13}|s_[A-Za-z]{1,40}|u_[a-z2-7]{20}|pl_[0-9a-f]{16})")
IMAGE_KEY = re.compile(r"[0-9a-f]{8,64}")
#: The image sizes the page asks for: square grid tiles (fill), and the asset view (fit).
SIZES = {256: "fill", 512: "fill", 1600: "fit"}
#: Tiles sent with a collection page, and with each moment of the timeline (the rest of a big
#: day comes as it scrolls into view).
TILE_PAGE = 200
MOMENT_TILES = 60
#: Change sets the server keeps to replay to a page that reconnects (``Last-Event-ID``).
REPLAY = 500
#: Collections whose fetch results the server keeps to diff (the pages' open views).
MAX_VIEWS = 400
#: Pages connected to the event stream at once (each holds a thread).
MAX_PAGES = 64
#: Smart albums the gallery does not show: hidden assets, and those deleted from the library.
NOT_SHOWN = ("s_hidden", "s_recentlyDeleted")
#: Shown after all with ``--allow-writes``: a page that may delete may restore.
RECENTLY_DELETED = "s_recentlyDeleted"


def _hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def tile(asset: Asset, keys: Dict[Tuple[str, int], str], trashed: bool = False) -> Dict[str, Any]:
    """What the page needs to draw an asset's tile. A tile of Recently Deleted (``trashed``)
    also has the file's name and date, drawn when photod has no image of it (its file is gone)."""
    w, h = asset.display_size
    key = keys.get((asset.id, 256))
    out = {"id": asset.id, "w": w, "h": h, "video": asset.is_video, "duration": asset.duration,
           "fav": bool(asset.is_favorite), "format": asset.format, "exists": asset.exists,
           "thumb": f"/img/{asset.id}/256/{key}" if key else f"/thumb/{asset.id}/256"}
    if trashed and asset.exists:
        out.update(trashed=True, name=os.path.basename(asset.path or ""), localDateTime=asset.local_date_time)
    return out


class Page:
    """One open page's event stream: its queue, and whether it fell too far behind."""

    def __init__(self) -> None:
        self.queue: "queue.Queue[Optional[str]]" = queue.Queue(maxsize=1000)
        self.dropped = False


def moment_header(m: Moment) -> Dict[str, Any]:
    # `title` is the place ("Lisbon & Sintra") from a photod with places, the date before them.
    place = m.title if m.date_title else None
    return {"id": m.id, "title": m.date_title or m.title, "place": place, "localDate": m.local_date, "count": m.asset_count,
            "photos": m.photo_count, "videos": m.video_count, "latitude": m.latitude, "longitude": m.longitude}


class Gallery:
    """The state behind the pages: the moments, the fetch results of the collections pages show
    (diffed on each change set), what photod's image keys are, and the event stream."""

    def __init__(self, library: Library, allow_writes: bool = False, log: Any = None) -> None:
        self.lib = library
        self.allow_writes = allow_writes
        self.log = log or (lambda text: None)
        self.lock = threading.RLock()
        self.moments: List[Moment] = []
        self.moments_token = -1
        self.views: "collections.OrderedDict[str, FetchResult]" = collections.OrderedDict()
        self.keys: Dict[Tuple[str, int], str] = {}
        self.paths: Dict[Tuple[str, int], str] = {}
        #: Assets known to be shown (listed in a collection the gallery shows, or checked visible):
        #: only their images are served. A change set naming one makes it checked again.
        self.visible: Set[str] = set()
        #: Counts the change sets that made the gallery forget assets: an answer from photod asked
        #: for before one of them may predate it, so it is not remembered (see ``remember``).
        self.forgetting = 0
        #: Tells a page that reconnects to a restarted gallery to load its data again.
        self.epoch = os.urandom(6).hex()
        self.events: Deque[Tuple[int, str]] = collections.deque(maxlen=REPLAY)
        self.sequence = 0
        self.clients: Set[Page] = set()
        self.photod_state = "connecting"
        self.photod_detail = ""
        self.stopping = threading.Event()
        self.changes: Optional[Any] = None
        #: A change set could not be applied (photod went away mid-way): pages reload once it is back.
        self.needs_resync = False
        #: Set once the change feed is subscribed: what is cached after it is covered by its change sets.
        self.following = threading.Event()
        self.learning: "queue.Queue[str]" = queue.Queue(maxsize=5000)
        self.static: Dict[str, Tuple[bytes, str, str]] = {}
        for name, kind in (("index.html", "text/html; charset=utf-8"), ("app.js", "text/javascript; charset=utf-8"),
                           ("style.css", "text/css; charset=utf-8"), ("favicon.svg", "image/svg+xml")):
            data = (STATIC / name).read_bytes()
            self.static[name] = (data, kind, _hash(data))

    # Reading

    def load_moments(self) -> List[Moment]:
        """The moments, newest first (fetched again when a change set names a moment)."""
        with self.lock:
            if self.moments_token < 0:
                result = self.lib.moments()
                self.moments, self.moments_token = list(result), result.token
            return self.moments

    def shows(self, collection_id: str) -> bool:
        """Whether pages may see this collection: not Hidden; Recently Deleted with ``--allow-writes``."""
        return collection_id not in NOT_SHOWN or (collection_id == RECENTLY_DELETED and self.allow_writes)

    def view(self, collection_id: str) -> FetchResult:
        """The fetch result of a collection a page shows (kept to diff on change sets)."""
        if not self.shows(collection_id):
            raise errors.NotFound(f"the gallery does not show {collection_id}", data={"id": collection_id})
        with self.lock:
            found = self.views.get(collection_id)
            if found is not None:
                self.views.move_to_end(collection_id)
                return found
        result = self.lib.collection_assets(collection_id, page_size=MOMENT_TILES if collection_id.startswith("m_")
                                            else TILE_PAGE)
        with self.lock:
            self.views[collection_id] = result
            while len(self.views) > MAX_VIEWS:
                self.views.popitem(last=False)
        return result

    def remember(self, asked: int, ids: Iterable[str]) -> None:
        """Notes assets as shown, from an answer photod gave after ``asked = self.forgetting`` was
        read: not when a change set was applied in between (it may have hidden one of them while
        the answer was on its way, and nothing would forget it again)."""
        with self.lock:
            if self.forgetting != asked:
                return
            if len(self.visible) > 500_000:
                self.visible.clear()
            self.visible.update(ids)

    def tiles(self, result: FetchResult, offset: int, limit: int, trashed: bool = False) -> List[Dict[str, Any]]:
        asked = self.forgetting
        assets = [a for a in result[offset:offset + limit] if a.exists]
        self.remember(asked, (a.id for a in assets))
        self.precache([a.id for a in assets if (a.id, 256) not in self.keys])
        return [tile(a, self.keys, trashed) for a in assets]

    def precache(self, ids: List[str]) -> None:
        """Asks photod to render the tiles the page is about to show, at low priority, and learns
        their images' keys in the background, so that the next pages name the tiles'
        content-addressed URLs (cached by the browser for good) instead of asking where they are."""
        if not ids:
            return
        try:
            self.lib.start_caching(ids, 256, 256, "fill")
        except errors.PhotodError:
            pass
        for id in ids:
            try:
                self.learning.put_nowait(id)
            except queue.Full:
                break

    def learn_keys(self) -> None:
        while not self.stopping.is_set():
            try:
                id = self.learning.get(timeout=0.5)
            except queue.Empty:
                continue
            if (id, 256) in self.keys:
                continue
            try:
                self.image(id, 256)
            except (errors.PhotodError, TimeoutError):
                pass

    def warm(self) -> None:
        """At start: the timeline's first page, so that the first visitor's page is answered
        from memory and names its thumbnails' final URLs."""
        try:
            self.timeline(0, 6)
        except (errors.PhotodError, TimeoutError):
            pass

    def timeline(self, offset: int, limit: int) -> Dict[str, Any]:
        moments = self.load_moments()
        page = moments[offset:offset + limit]
        out = []
        for m in page:
            result = self.view(m.id)
            out.append(dict(moment_header(m), tiles=self.tiles(result, 0, MOMENT_TILES), total=len(result),
                            token=result.token))
        nxt = offset + len(page)
        return {"moments": out, "nextOffset": nxt if nxt < len(moments) else None, "total": len(moments),
                "token": self.moments_token}

    def collection(self, collection_id: str, offset: int, limit: int) -> Dict[str, Any]:
        result = self.view(collection_id)
        tiles = self.tiles(result, offset, limit, trashed=collection_id == RECENTLY_DELETED)
        nxt = offset + len(tiles)
        return {"id": collection_id, "tiles": tiles, "total": len(result), "offset": offset,
                "nextOffset": nxt if nxt < len(result) else None, "token": result.token}

    def albums(self) -> Dict[str, Any]:
        def cover(ids: Optional[List[str]]) -> Optional[str]:
            return f"/thumb/{ids[0]}/256" if ids else None

        smart = [{"id": s.id, "title": s.title, "count": s.asset_count, "cover": cover(s.key_asset_ids)}
                 for s in self.lib.smart_albums() if self.shows(s.id)]
        folders = [{"id": a.id, "title": a.title, "count": a.asset_count, "path": a.path, "cover": cover(a.key_asset_ids)}
                   for a in self.lib.albums()]
        user = [{"id": a.id, "title": a.title, "count": a.asset_count, "cover": cover(a.key_asset_ids)}
                for a in self.lib.user_albums()]
        # Countries and their cities (regions left out: the list stays short).
        places: List[Dict[str, Any]] = []
        for country in self.lib.places():
            places.append({"id": country.id, "title": country.title, "count": country.asset_count, "level": 0})
            cities = [c for r in country.places for c in ([r] if r.kind == "city" else r.places)]
            for c in sorted(cities, key=lambda c: (-c.asset_count, c.title)):
                places.append({"id": c.id, "title": c.title, "count": c.asset_count, "level": 1})
        return {"smart": smart, "folders": folders, "user": user, "places": places}

    def search(self, query: str, offset: int, limit: int) -> Dict[str, Any]:
        """A page of the assets a text search finds (``assets.search``), as a collection's page."""
        asked = self.forgetting
        assets, total = self.lib.search(query, limit=limit, offset=offset)
        self.remember(asked, (a.id for a in assets))
        self.precache([a.id for a in assets if (a.id, 256) not in self.keys])
        nxt = offset + len(assets)
        return {"id": "search", "tiles": [tile(a, self.keys) for a in assets], "total": total, "offset": offset,
                "nextOffset": nxt if nxt < total else None,
                "collection": {"id": "search", "title": f"“{query}”", "count": total, "kind": "search"}}

    def title_of(self, collection_id: str) -> Dict[str, Any]:
        """A collection's title and count, for a page's header."""
        if collection_id.startswith("m_"):
            for m in self.load_moments():
                if m.id == collection_id:
                    return {"id": m.id, "title": " · ".join(t for t in (m.date_title or m.title, m.title if m.date_title else None) if t),
                            "count": m.asset_count, "kind": "moment"}
        else:
            data = self.albums()
            for kind in ("smart", "folders", "user", "places"):
                for c in data[kind]:
                    if c["id"] == collection_id:
                        return dict(c, kind=kind)
        raise errors.NotFound(f"no collection {collection_id}", data={"id": collection_id})

    def asset(self, asset_id: str) -> Dict[str, Any]:
        asked = self.forgetting
        try:
            a, trashed = self.lib.asset(asset_id, include_hidden=False), False
        except errors.NotFound:
            # assets.get does not answer for Recently Deleted: its fetch result does.
            found = self.trashed_asset(asset_id)
            if found is None:
                raise
            a, trashed = found, True
        self.remember(asked, [a.id])
        w, h = a.display_size
        return {"id": a.id, "name": os.path.basename(a.path or ""), "path": a.path, "localDateTime": a.local_date_time,
                "utcOffset": a.utc_offset, "dateSource": a.date_source, "mediaType": a.media_type, "format": a.format,
                "width": w, "height": h, "fileSize": a.file_size, "make": a.make, "model": a.model,
                "lens": a.lens_model, "latitude": a.latitude, "longitude": a.longitude, "altitude": a.altitude,
                "duration": a.duration, "videoCodec": a.video_codec, "audioCodec": a.audio_codec,
                "frameRate": a.frame_rate, "keywords": a.keywords or [], "fav": bool(a.is_favorite),
                "subtypes": a.subtypes or [], "available": a.is_available, "trashed": trashed,
                "large": f"/thumb/{a.id}/1600", "thumb": tile(a, self.keys)["thumb"]}

    def trashed_asset(self, asset_id: str) -> Optional[Asset]:
        """The record of an asset in Recently Deleted (None when it is not there, or when this
        gallery does not show Recently Deleted)."""
        if not self.shows(RECENTLY_DELETED):
            return None
        result = self.view(RECENTLY_DELETED)
        index = result.index_of(asset_id)
        if index is None:
            return None
        found = result[index]
        return found if found.exists else None

    def in_trash(self, asset_id: str) -> bool:
        """Whether the Recently Deleted a page shows lists this asset (as last diffed)."""
        with self.lock:
            result = self.views.get(RECENTLY_DELETED)
        return result is not None and asset_id in result

    def image(self, asset_id: str, size: int) -> Tuple[str, str]:
        """photod's image of the asset at a size the page uses: (path, key). Only of an asset the
        gallery shows: a hidden one is ``NotFound``, and one in Recently Deleted unless it is
        shown (``--allow-writes``) — or when photod has no image of it (its file is gone)."""
        asked = self.forgetting
        self.check_visible(asset_id)
        try:
            image = self.lib.request_image(asset_id, size, size, mode=SIZES[size], delivery="highQuality")
        except errors.ImageFailed as e:
            if self.in_trash(asset_id):
                # photod draws an asset it trashed from its hidden file; one deleted outside photod has none.
                raise errors.NotFound(f"photod has no image of this asset of Recently Deleted ({e.detail})",
                                      data={"id": asset_id}) from None
            raise
        key = os.path.basename(image.path).split("-", 1)[0]
        if not IMAGE_KEY.fullmatch(key):
            key = _hash(image.path.encode())
        with self.lock:
            if self.forgetting != asked:
                return image.path, key      # served, not remembered: a change set came meanwhile
            if len(self.keys) > 200_000:
                self.keys.clear()
                self.paths.clear()
            self.keys[(asset_id, size)] = key
            self.paths[(asset_id, size)] = image.path
        return image.path, key

    def check_visible(self, asset_id: str) -> None:
        with self.lock:
            if asset_id in self.visible:
                return
            asked = self.forgetting
        self.lib.asset(asset_id, include_hidden=False)   # NotFound when hidden, deleted or unknown
        self.remember(asked, [asset_id])

    def known_image(self, asset_id: str, size: int, key: str) -> Optional[str]:
        """The path of the image with this key when photod answered it before and the asset has
        not changed since (its change set forgets it): served without asking photod again."""
        with self.lock:
            if self.keys.get((asset_id, size)) == key:
                return self.paths.get((asset_id, size))
        return None

    def forget_images(self, ids: Iterable[str]) -> None:
        with self.lock:
            self.forgetting += 1
            for id in ids:
                self.visible.discard(id)
                for size in SIZES:
                    self.keys.pop((id, size), None)
                    self.paths.pop((id, size), None)

    def set_favorite(self, asset_id: str, favorite: bool) -> Dict[str, Any]:
        result = self.lib.set_favorite(asset_id, favorite)
        return {"token": result.token, "updated": result.updated}

    def trash(self, asset_id: str) -> Dict[str, Any]:
        """Moves the asset to Recently Deleted (``assets.trash``: its files renamed to hidden names)."""
        result = self.lib.trash(asset_id)
        return {"token": result.token, "trashed": result.trashed}

    def restore(self, asset_id: str) -> Dict[str, Any]:
        """Brings the asset back from Recently Deleted; ``renamed`` lists files put back under
        another name (theirs was taken meanwhile)."""
        result = self.lib.restore(asset_id)
        return {"token": result.token, "restored": result.restored, "renamed": result.renamed}

    def delete_permanently(self, asset_id: str) -> Dict[str, Any]:
        """Deletes an asset of Recently Deleted for good. A file photod could not unlink keeps
        the asset there: ``Conflict`` with photod's reason."""
        result = self.lib.delete_permanently(asset_id)
        kept = [k for k in (result.kept or []) if k.get("id") == asset_id]
        if kept:
            raise errors.Conflict(f"photod kept it in Recently Deleted: {kept[0].get('reason')}", data={"kept": kept})
        return {"token": result.token, "deleted": result.deleted}

    # Live

    def publish(self, kind: str, payload: Dict[str, Any], event_id: Optional[int] = None) -> None:
        """Sends an event to every open page (change events are also kept to replay)."""
        with self.lock:
            self.sequence += 1
            text = f"event: {kind}\n" + (f"id: {event_id}\n" if event_id is not None else "") + \
                   "".join(f"data: {line}\n" for line in json.dumps(payload, ensure_ascii=False).split("\n")) + "\n"
            if event_id is not None:
                self.events.append((event_id, text))
            for page in list(self.clients):
                try:
                    page.queue.put_nowait(text)
                except queue.Full:
                    # A page that does not read: cut off; it reconnects and replays from its last id.
                    page.dropped = True
                    self.clients.discard(page)

    def subscribe(self, last_id: Optional[int]) -> Tuple[Page, List[str], bool]:
        """A queue of events for one page, the kept events after ``last_id`` to send first, and
        whether the page missed events that are not kept (it then reloads its data)."""
        page = Page()
        with self.lock:
            if len(self.clients) >= MAX_PAGES:
                raise errors.Overloaded(f"{MAX_PAGES} pages are open already")
            self.clients.add(page)
            if last_id is None:
                return page, [], False
            kept = [text for token, text in self.events if token > last_id]
            oldest = self.events[0][0] if self.events else None
            token = self.changes.token if self.changes is not None else None
            missed = token is not None and token > last_id and (oldest is None or oldest > last_id + 1)
            return page, kept, missed

    def unsubscribe(self, page: Page) -> None:
        with self.lock:
            self.clients.discard(page)

    def status_payload(self) -> Dict[str, Any]:
        return {"photod": self.photod_state, "detail": self.photod_detail, "writable": self.allow_writes,
                "epoch": self.epoch}

    def _set_state(self, state: str, detail: str = "") -> None:
        if state != self.photod_state:
            self.photod_state, self.photod_detail = state, detail
            self.log(f"photod {state}{': ' + detail if detail else ''}")
            self.publish("status", self.status_payload())

    def follow(self) -> None:
        """The change thread: applies each change set to what the pages show and tells them."""
        since: Optional[int] = None
        while not self.stopping.is_set():
            try:
                self.changes = self.lib.changes(
                    since=since, on_reconnecting=lambda why: self._set_state("reconnecting", why),
                    on_reconnected=lambda token: self._reconnected())
                self.changes.subscribe()
                if not self.following.is_set():
                    # Pages answered before the first subscription are heard of by no change set.
                    self.forget_all()
                    self.following.set()
                self._set_state("connected")
                for change in self.changes:
                    since = change.token
                    if self.needs_resync:
                        self.resync()       # covers this change set too
                        continue
                    try:
                        self.apply(change)
                    except errors.PhotodError as e:
                        self.log(f"change set {change.token} not applied: {e}; the pages reload when photod is back")
                        self.needs_resync = True
            except errors.TokenExpired as e:
                since = e.current_token
                self.resync()
            except errors.PhotodError as e:
                self._set_state("reconnecting", str(e))
                self.stopping.wait(1)
            except StopIteration:
                pass

    def _reconnected(self) -> None:
        self._set_state("connected")
        if self.needs_resync:
            self.resync()

    def forget_all(self) -> None:
        with self.lock:
            anything = bool(self.views or self.visible or self.keys or self.moments_token >= 0)
            self.forgetting += 1
            self.views.clear()
            self.visible.clear()
            self.keys.clear()
            self.paths.clear()
            self.moments_token = -1
        if anything:
            self.publish("resync", {"token": None})

    def resync(self) -> None:
        """Forgets what was fetched and tells the pages to load their data again."""
        with self.lock:
            self.views.clear()
            self.moments_token = -1
            self.needs_resync = False
        token = self.changes.token if self.changes is not None else None
        self.publish("resync", {"token": token}, event_id=token)

    def apply(self, change: ChangeSet) -> None:
        """One change set, as the pages see it: each open collection's change details, new and
        gone moments, the sidebar's counts."""
        # A file that changed has new images (and a hidden asset is shown no more): asked again.
        self.forget_images(change.assets_updated + change.assets_deleted)
        deleted = set(change.collections_deleted)
        touched = set(change.collections_inserted + change.collections_updated) | deleted
        with self.lock:
            for cid in deleted:
                self.views.pop(cid, None)
            open_views = [(cid, r) for cid, r in self.views.items() if cid in touched]
            moments_known = self.moments_token >= 0
            moment_ids = {m.id for m in self.moments}
        updates: List[Dict[str, Any]] = [{"id": cid, "gone": True, "token": change.token}
                                         for cid in sorted(deleted) if not cid.startswith("m_")]
        for cid, before in open_views:
            try:
                details = before.change_details(change)
            except errors.NotFound:
                with self.lock:
                    self.views.pop(cid, None)
                updates.append({"id": cid, "gone": True, "token": change.token})
                continue
            if details is None:
                continue
            after = details.fetch_result_after_changes
            with self.lock:
                if cid in self.views:
                    self.views[cid] = after
            if not details.has_incremental_changes:
                updates.append({"id": cid, "reload": True, "total": len(after), "token": after.token})
                continue
            trashed = cid == RECENTLY_DELETED
            changed_ids = details.changed_ids
            for id in changed_ids[:200]:     # their images' keys anew (a changed file has new ones)
                try:
                    self.image(id, 256)
                except (errors.PhotodError, TimeoutError):
                    pass
            inserted = [dict(tile(after[i], self.keys, trashed), index=i) for i in details.inserted_indexes]
            moved = [dict(tile(after[m.to_index], self.keys, trashed), index=m.to_index) for m in details.moves]
            changed = [tile(after[i], self.keys, trashed) for i in details.changed_indexes]
            with self.lock:
                self.visible.update(t["id"] for t in inserted + moved + changed)
            if inserted or moved or changed or details.removed_indexes:
                updates.append({"id": cid, "removed": details.removed_ids, "inserted": inserted, "moved": moved,
                                "changed": changed, "total": len(after), "token": after.token})
        moments_event: Dict[str, Any] = {}
        # (Moments never loaded are nobody's on screen: nothing to tell.)
        if moments_known and any(c.startswith("m_") for c in touched):
            with self.lock:
                self.moments_token = -1
            now = self.load_moments()
            now_ids = {m.id for m in now}
            with self.lock:
                viewed = set(self.views)
            inserted_moments = []
            for i, m in enumerate(now):
                if m.id not in moment_ids:
                    result = self.view(m.id)
                    inserted_moments.append(dict(moment_header(m), tiles=self.tiles(result, 0, MOMENT_TILES),
                                                 total=len(result), index=i, token=result.token))
            replaced = []
            for m in now:
                if m.id in touched and m.id in moment_ids and m.id not in viewed:
                    # A moment a page may show whose fetch result was not kept: sent whole.
                    result = self.view(m.id)
                    replaced.append(dict(moment_header(m), tiles=self.tiles(result, 0, MOMENT_TILES), total=len(result),
                                         token=result.token))
            moments_event = {
                "inserted": inserted_moments,
                "deleted": sorted(moment_ids - now_ids),
                "updated": [moment_header(m) for m in now if m.id in touched and m.id in moment_ids],
                "replaced": replaced,
            }
        albums = any(c[:2] in ("s_", "f_", "u_") for c in touched)
        if updates or moments_event or albums or change.assets_updated:
            self.publish("change", {"token": change.token, "views": updates, "moments": moments_event,
                                    "albums": albums, "assets": change.assets_updated[:1000]}, event_id=change.token)

    def start(self, wait_for_feed: float = 10) -> threading.Thread:
        t = threading.Thread(target=self.follow, name="photod-gallery-changes", daemon=True)
        t.start()
        # Served only once the feed is heard (when photod is there to hear it), so that nothing a
        # page is given predates it.
        self.following.wait(timeout=wait_for_feed)
        for n in range(2):
            threading.Thread(target=self.learn_keys, name=f"photod-gallery-keys-{n}", daemon=True).start()
        threading.Thread(target=self.warm, name="photod-gallery-warm", daemon=True).start()
        return t

    def stop(self) -> None:
        self.stopping.set()
        if self.changes is not None:
            self.changes.close()
        with self.lock:
            for page in list(self.clients):
                page.dropped = True
                try:
                    page.queue.put_nowait(None)
                except queue.Full:
                    pass


class Handler(BaseHTTPRequestHandler):
    """One request: a fixed route, or 404."""

    server: "GalleryServer"
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes: without this, Nagle's algorithm holds the body back
    # for the browser's delayed acknowledgment (40 ms a request).
    disable_nagle_algorithm = True
    server_version = "photod-gallery"
    sys_version = ""

    routes = [
        ("GET", re.compile(r"/"), "index"),
        ("GET", re.compile(r"/(?:c|a)/[A-Za-z0-9_]+"), "index"),
        ("GET", re.compile(r"/search"), "index"),
        ("GET", re.compile(r"/api/search"), "search"),
        ("GET", re.compile(r"/static/(app\.js|style\.css|favicon\.svg)"), "static"),
        ("GET", re.compile(r"/api/info"), "info"),
        ("GET", re.compile(r"/api/moments"), "moments"),
        ("GET", re.compile(r"/api/albums"), "albums"),
        ("GET", re.compile(r"/api/collection/(" + COLLECTION_ID.pattern + ")"), "collection"),
        ("GET", re.compile(r"/api/asset/(" + ASSET_ID.pattern + ")"), "asset"),
        ("GET", re.compile(r"/api/events"), "events"),
        ("GET", re.compile(r"/thumb/(" + ASSET_ID.pattern + r")/(\d{3,4})"), "thumb"),
        ("GET", re.compile(r"/img/(" + ASSET_ID.pattern + r")/(\d{3,4})/(" + IMAGE_KEY.pattern + ")"), "img"),
        ("POST", re.compile(r"/api/asset/(" + ASSET_ID.pattern + ")/favorite"), "favorite"),
        ("POST", re.compile(r"/api/asset/(" + ASSET_ID.pattern + ")/trash"), "trash"),
        ("POST", re.compile(r"/api/asset/(" + ASSET_ID.pattern + ")/restore"), "restore"),
        ("POST", re.compile(r"/api/asset/(" + ASSET_ID.pattern + ")/delete"), "delete"),
    ]

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)

    @property
    def gallery(self) -> Gallery:
        return self.server.gallery

    def do_GET(self) -> None:
        self.dispatch("GET")

    def do_HEAD(self) -> None:
        self.dispatch("GET", head=True)

    def do_POST(self) -> None:
        # A body left unread on a refusal would be read as the next request: one request a connection.
        self.close_connection = True
        self.dispatch("POST")

    def dispatch(self, method: str, head: bool = False) -> None:
        self.head = head
        if not self.server.host_allowed(self.headers.get("Host", "")):
            return self.send_error_json(HTTPStatus.MISDIRECTED_REQUEST, "this gallery does not answer for that host name "
                                        "(start it with --allowed-host NAME)")
        url = urlsplit(self.path)
        self.query = parse_qs(url.query)
        for verb, pattern, name in self.routes:
            match = pattern.fullmatch(url.path)
            if match and verb == method:
                try:
                    return getattr(self, "route_" + name)(*match.groups())
                except errors.NotFound as e:
                    return self.send_error_json(HTTPStatus.NOT_FOUND, e.detail)
                except errors.Unsupported as e:       # a format photod does not render (GIF, TIFF, RAW…)
                    return self.send_error_json(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, e.detail)
                except errors.ImageFailed as e:       # a damaged file, one no decoder here renders
                    return self.send_error_json(HTTPStatus.UNPROCESSABLE_ENTITY, e.detail)
                except errors.PermissionDenied as e:
                    return self.send_error_json(HTTPStatus.FORBIDDEN, e.detail)
                except errors.InvalidParams as e:
                    return self.send_error_json(HTTPStatus.BAD_REQUEST, e.detail)
                except errors.Conflict as e:         # a file is not the one photod indexed or trashed
                    return self.send_error_json(HTTPStatus.CONFLICT, e.detail)
                except (errors.Unreachable, errors.ConnectionLost, errors.Unavailable, errors.Overloaded, TimeoutError) as e:
                    return self.send_error_json(HTTPStatus.SERVICE_UNAVAILABLE, f"photod is not reachable now: {e}",
                                                retry=True)
                except (BrokenPipeError, ConnectionResetError):
                    return
        if any(p.fullmatch(url.path) for _, p, _ in self.routes):
            return self.send_error_json(HTTPStatus.METHOD_NOT_ALLOWED, f"{method} is not allowed here")
        self.send_error_json(HTTPStatus.NOT_FOUND, "no such page")

    # Responses

    def security_headers(self) -> None:
        self.send_header("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; "
                         "img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("X-Frame-Options", "DENY")

    def send_body(self, status: int, body: bytes, kind: str, headers: Iterable[Tuple[str, str]] = ()) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.security_headers()
        self.end_headers()
        if not self.head:
            self.wfile.write(body)

    def send_json(self, value: Any, status: int = HTTPStatus.OK) -> None:
        body = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
        self.send_body(status, body, "application/json; charset=utf-8", [("Cache-Control", "no-store")])

    def send_error_json(self, status: int, detail: str, retry: bool = False) -> None:
        headers = [("Cache-Control", "no-store")] + ([("Retry-After", "1")] if retry else [])
        body = json.dumps({"error": detail}, ensure_ascii=False).encode()
        self.send_body(status, body, "application/json; charset=utf-8", headers)

    def redirect(self, location: str) -> None:
        self.send_response(HTTPStatus.FOUND)
        self.send_header("Location", location)
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", "0")
        self.security_headers()
        self.end_headers()

    def int_param(self, name: str, default: int, low: int, high: int) -> int:
        try:
            value = int(self.query.get(name, [str(default)])[0])
        except ValueError:
            raise errors.InvalidParams(f"'{name}' must be an integer") from None
        if not low <= value <= high:
            raise errors.InvalidParams(f"'{name}' must be between {low} and {high}")
        return value

    # Routes

    def route_index(self) -> None:
        self.route_static("index.html")

    def route_static(self, name: str) -> None:
        body, kind, etag = self.gallery.static[name]
        if self.headers.get("If-None-Match") == f'"{etag}"':
            return self.not_modified(f'"{etag}"', "no-cache")
        self.send_body(HTTPStatus.OK, body, kind, [("ETag", f'"{etag}"'), ("Cache-Control", "no-cache")])

    def not_modified(self, etag: str, cache: str) -> None:
        self.send_response(HTTPStatus.NOT_MODIFIED)
        self.send_header("ETag", etag)
        self.send_header("Cache-Control", cache)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def route_info(self) -> None:
        self.send_json(dict(self.gallery.status_payload(), version=self.server.version))

    def route_moments(self) -> None:
        self.send_json(self.gallery.timeline(self.int_param("offset", 0, 0, 10 ** 7), self.int_param("limit", 6, 1, 100)))

    def route_albums(self) -> None:
        self.send_json(self.gallery.albums())

    def route_collection(self, collection_id: str) -> None:
        page = self.gallery.collection(collection_id, self.int_param("offset", 0, 0, 10 ** 7),
                                       self.int_param("limit", TILE_PAGE, 1, 1000))
        if self.query.get("header"):
            page["collection"] = self.gallery.title_of(collection_id)
        self.send_json(page)

    def route_search(self) -> None:
        query = self.query.get("q", [""])[0]
        self.send_json(self.gallery.search(query, self.int_param("offset", 0, 0, 10 ** 7), self.int_param("limit", TILE_PAGE, 1, 1000)))

    def route_asset(self, asset_id: str) -> None:
        self.send_json(self.gallery.asset(asset_id))

    def size(self, text: str) -> int:
        size = int(text)
        if size not in SIZES:
            raise errors.NotFound(f"no image size {size} (sizes: {', '.join(map(str, SIZES))})")
        return size

    def route_thumb(self, asset_id: str, size_text: str) -> None:
        """The asset's image at this size as it is now (revalidated each time: its ETag is the
        image's key); pages name the content-addressed ``/img/…/KEY`` once the key is known."""
        size = self.size(size_text)
        path, key = self.gallery.image(asset_id, size)
        self.send_image(path, f'"{key}-{size}"', "no-cache", f"/thumb/{asset_id}/{size}")

    def route_img(self, asset_id: str, size_text: str, key: str) -> None:
        """An image by its content: cached by the browser for good; another version redirects."""
        size = self.size(size_text)
        etag = f'"{key}-{size}"'
        immutable = "public, max-age=31536000, immutable"
        if self.headers.get("If-None-Match") == etag:
            return self.not_modified(etag, immutable)
        known = self.gallery.known_image(asset_id, size, key)
        if known is not None and os.path.exists(known):
            return self.send_image(known, etag, immutable, f"/thumb/{asset_id}/{size}")
        path, current = self.gallery.image(asset_id, size)
        if current != key:
            return self.redirect(f"/img/{asset_id}/{size}/{current}")
        self.send_image(path, etag, immutable, f"/thumb/{asset_id}/{size}")

    def send_image(self, path: str, etag: str, cache: str, again: str) -> None:
        if self.headers.get("If-None-Match") == etag:
            return self.not_modified(etag, cache)
        try:
            with open(path, "rb") as f:   # the path photod answered, never one from the request
                body = f.read()
        except PermissionError:
            return self.send_error_json(HTTPStatus.BAD_GATEWAY, f"photod's image cache is not readable by this user "
                                        f"({path}): run the gallery in photod's group")
        except FileNotFoundError:
            # Evicted between photod's answer and now: ask again.
            return self.redirect(again)
        kind = "image/png" if path.endswith(".png") else "image/jpeg"
        self.send_body(HTTPStatus.OK, body, kind, [("ETag", etag), ("Cache-Control", cache)])

    def write_refused(self) -> bool:
        """Answers 403 (and True) unless writes are on and the request comes from the gallery's
        own page: a header a form cannot send, and no other site's ``Origin`` (against CSRF)."""
        if not self.gallery.allow_writes:
            self.send_error_json(HTTPStatus.FORBIDDEN, "the gallery is read-only (start it with --allow-writes)")
            return True
        if self.headers.get("X-Requested-With") != "photod-gallery" or not self.server.same_origin(self.headers):
            self.send_error_json(HTTPStatus.FORBIDDEN, "a write must come from the gallery's own page")
            return True
        return False

    def route_favorite(self, asset_id: str) -> None:
        if self.write_refused():
            return
        try:
            length = int(self.headers.get("Content-Length", "0"))
            if not 0 < length <= 1024:
                raise ValueError
            body = json.loads(self.rfile.read(length))
            favorite = body["favorite"]
            if not isinstance(favorite, bool):
                raise ValueError
        except (ValueError, KeyError, TypeError):
            return self.send_error_json(HTTPStatus.BAD_REQUEST, 'the body must be {"favorite": true|false}')
        self.send_json(self.gallery.set_favorite(asset_id, favorite))

    def route_trash(self, asset_id: str) -> None:
        self.asset_write(asset_id, self.gallery.trash)

    def route_restore(self, asset_id: str) -> None:
        self.asset_write(asset_id, self.gallery.restore)

    def route_delete(self, asset_id: str) -> None:
        self.asset_write(asset_id, self.gallery.delete_permanently)

    def asset_write(self, asset_id: str, write: Any) -> None:
        """A write on one asset that takes no body (trash, restore, delete now)."""
        if self.write_refused():
            return
        length = self.headers.get("Content-Length", "0")
        if not length.isdigit() or int(length) > 1024:
            return self.send_error_json(HTTPStatus.BAD_REQUEST, "this write takes no body")
        self.rfile.read(int(length))
        try:
            answer = write(asset_id)
        except errors.PhotodError as e:
            return self.write_failed(asset_id, e)
        self.send_json(answer)

    #: How photod's refusals of a write are answered to the page.
    WRITE_REFUSALS = ((errors.NotFound, HTTPStatus.NOT_FOUND),                  # gone, or not in Recently Deleted
                      (errors.PermissionDenied, HTTPStatus.FORBIDDEN),          # a root not opened to the trash
                      (errors.Conflict, HTTPStatus.CONFLICT),                   # a file changed, replaced or gone
                      (errors.Unavailable, HTTPStatus.SERVICE_UNAVAILABLE),     # its disk is not there
                      (errors.InvalidParams, HTTPStatus.BAD_REQUEST))

    def write_failed(self, asset_id: str, e: errors.PhotodError) -> None:
        """photod's refusal in photod's words: the reason it gives for this asset (``refused``:
        without the id the page already shows), else its whole detail."""
        if isinstance(e, (errors.Unreachable, errors.ConnectionLost, errors.Overloaded)):
            return self.send_error_json(HTTPStatus.SERVICE_UNAVAILABLE, f"photod is not reachable now: {e}", retry=True)
        if isinstance(e, errors.MethodNotFound):
            return self.send_error_json(HTTPStatus.NOT_IMPLEMENTED, "this photod cannot delete (it is older than "
                                        "assets.trash: upgrade it)")
        own = [r.get("detail") for r in e.data.get("refused") or [] if r.get("id") == asset_id and r.get("detail")]
        detail = own[0] if own else e.detail
        status = next((s for kind, s in self.WRITE_REFUSALS if isinstance(e, kind)), HTTPStatus.BAD_GATEWAY)
        self.send_error_json(status, detail if status != HTTPStatus.BAD_GATEWAY else str(e))

    def route_events(self) -> None:
        """Server-Sent Events: the status, then each change set's effect on what pages show."""
        last = self.headers.get("Last-Event-ID") or ""
        last_id = int(last) if re.fullmatch(r"[0-9]{1,18}", last) else None
        page, kept, missed = self.gallery.subscribe(last_id)
        try:
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Accel-Buffering", "no")
            self.security_headers()
            self.end_headers()
            self.close_connection = True
            first = "retry: 1000\n\n" + f"event: status\ndata: {json.dumps(self.gallery.status_payload())}\n\n"
            if missed:
                first += "event: resync\ndata: {}\n\n"
            self.wfile.write(first.encode() + "".join(kept).encode())
            self.wfile.flush()
            while not self.gallery.stopping.is_set() and not page.dropped:
                try:
                    item = page.queue.get(timeout=15)
                except queue.Empty:
                    self.wfile.write(b": keep-alive\n\n")
                    self.wfile.flush()
                    continue
                if item is None:
                    return
                self.wfile.write(item.encode())
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            return
        finally:
            self.gallery.unsubscribe(page)


class GalleryServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: Tuple[str, int], gallery: Gallery, allowed_hosts: Iterable[str] = (),
                 verbose: bool = False, version: str = "") -> None:
        super().__init__(address, Handler)
        self.gallery = gallery
        self.verbose = verbose
        self.version = version
        host = address[0]
        self.loopback = _is_loopback(host)
        self.allowed = {h.lower() for h in allowed_hosts}

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        shown = host if host not in ("0.0.0.0", "::", "") else "127.0.0.1"
        return f"http://{'[' + shown + ']' if ':' in str(shown) else shown}:{port}/"

    def host_allowed(self, header: str) -> bool:
        return host_allowed(header, self.loopback, self.allowed)

    def same_origin(self, headers: Any) -> bool:
        origin = headers.get("Origin")
        if origin is None:
            return True
        return urlsplit(origin).netloc.lower() == (headers.get("Host") or "").lower()


def host_allowed(header: str, loopback: bool, allowed: Set[str]) -> bool:
    """Whether to answer a request for this ``Host``, against DNS rebinding (a page of another
    site whose name is made to point here): on a loopback address only loopback names, elsewhere
    only addresses; and the names ``--allowed-host`` lists."""
    name = header.strip().lower()
    if name.startswith("["):
        name = name[1:].split("]", 1)[0]
    elif name.count(":") == 1:
        name = name.split(":", 1)[0]
    if name in allowed:
        return True
    if loopback:
        return name in ("localhost", "127.0.0.1", "::1") or _is_loopback(name)
    return _is_ip(name)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return False


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"
