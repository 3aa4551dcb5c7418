"""``Library``: photod's library as a Python program sees it — fetches, collections, change sets
with resumption, change details, images and user-state writes — on photod's Unix socket."""
from __future__ import annotations

import os
import threading
import time
from typing import (Any, Callable, Dict, Generator, Iterable, Iterator, List, Mapping, NamedTuple, Optional, Sequence, Tuple,
                    TypeVar, Union, overload)

from . import errors
from ._connection import NULL, Connection, PathLike, sockets_for
from .details import ChangeDetails
from .models import (Album, Asset, ChangeSet, CollectionList, Image, Moment, MomentList, Place, Record, SmartAlbum, Status,
                     UserAlbum, UserFolder, WriteResult)

R = TypeVar("R", bound=Record)

#: photod's page size limit for records.
MAX_PAGE = 1000
#: The most ids one ``assets.fetchIDs`` answers.
MAX_IDS = 1_000_000
#: Methods that are safe to send again on a fresh connection when a kept one turned out broken.
_REPEATABLE_PREFIXES = ("rpc.", "library.status", "library.errors", "assets.fetch", "assets.get", "moments.",
                        "momentLists.", "albums.fetch", "smartAlbums.", "collectionLists.", "userAlbums.fetch",
                        "collections.assets", "changes.since", "changes.currentToken", "assets.setFavorite",
                        "assets.setHidden", "assets.setKeywords", "images.request")


class FetchRequest(NamedTuple):
    """What a fetch asked for, to ask again: the library's assets (``collection`` None) or a
    collection's, with the fetch options."""
    collection: Optional[str] = None
    predicate: Optional[str] = None
    sort: Optional[str] = None
    include_hidden: bool = False

    def params(self) -> Dict[str, Any]:
        p: Dict[str, Any] = {"predicate": self.predicate, "sort": self.sort}
        if self.include_hidden:
            p["includeHidden"] = True
        if self.collection is not None:
            p["id"] = self.collection
        return p


class Collections(List[R]):
    """A list of collection records with the ``token`` of the snapshot they come from."""

    def __init__(self, items: Iterable[R], token: int) -> None:
        super().__init__(items)
        self.token = token


def page_plan(request: FetchRequest, wanted: List[str], offset: int) -> Generator[Tuple[str, Dict[str, Any]], Any, List[Asset]]:
    """The calls that load one page of a fetch result's records, for the sync and the asyncio
    ``FetchResult`` alike: a generator that yields each call (method, params), is sent its
    result, and returns the records. First the same fetch at the page's offset, so that hidden
    assets and Recently Deleted's come as they were fetched; then by id those the index no longer
    gives there (the library changed since); those gone since become id-only records."""
    method = "collections.assets" if request.collection is not None else "assets.fetch"
    params = request.params()
    params.update(offset=offset, limit=len(wanted))
    records = {a["id"]: a for a in (yield method, params).get("assets", [])}
    lost = [id for id in wanted if id not in records]
    for chunk in range(0, len(lost), MAX_PAGE):
        answer = yield "assets.get", {"ids": lost[chunk:chunk + MAX_PAGE], "includeHidden": True}
        records.update((a["id"], a) for a in answer.get("assets", []))
    return [Asset(records.get(id) or {"id": id}) for id in wanted]


class FetchResult(Sequence[Asset]):
    """The assets of one fetch, in its order, from one snapshot of the index (PhotoKit's
    ``PHFetchResult``).

    The ids are loaded at once (``assets.fetchIDs``, about 25 bytes an asset); the records lazily,
    ``page_size`` at a time, as they are indexed or iterated. ``token`` is the change token the
    ids reflect: ``lib.changes(since=result.token)`` hears of every later change, and
    ``change_details(change_set)`` says what a change set means for this result.
    """

    def __init__(self, library: "Library", request: FetchRequest, ids: List[str], token: int, total: int,
                 offset: int = 0, page_size: int = 200, limit: Optional[int] = None) -> None:
        self.library = library
        self.request = request
        self.ids = ids
        self.token = token
        #: How many assets matched (more than ``len(self)`` when ``limit`` cut the list).
        self.total = total
        self.offset = offset
        #: The fetch's ``limit`` (None: every match), kept to fetch the same again.
        self.limit = limit
        self.page_size = max(1, min(page_size, MAX_PAGE))
        self._pages: Dict[int, List[Asset]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, index: int) -> Asset: ...
    @overload
    def __getitem__(self, index: slice) -> List[Asset]: ...

    def __getitem__(self, index: Union[int, slice]) -> Union[Asset, List[Asset]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self.ids)))]
        if index < 0:
            index += len(self.ids)
        if not 0 <= index < len(self.ids):
            raise IndexError("FetchResult index out of range")
        page = index // self.page_size
        with self._lock:
            loaded = self._pages.get(page)
        if loaded is None:
            loaded = self._load(page)
            with self._lock:
                self._pages[page] = loaded
        return loaded[index - page * self.page_size]

    def __iter__(self) -> Iterator[Asset]:
        for i in range(len(self.ids)):
            yield self[i]

    def __contains__(self, item: object) -> bool:
        id = item.id if isinstance(item, Asset) else item
        return id in self.ids

    def index_of(self, asset_id: str) -> Optional[int]:
        """The index of the asset with this id, or None."""
        try:
            return self.ids.index(asset_id)
        except ValueError:
            return None

    def __repr__(self) -> str:
        return f"FetchResult({len(self.ids)} of {self.total} assets, token {self.token}, {self.request})"

    def _load(self, page: int) -> List[Asset]:
        start = page * self.page_size
        plan = page_plan(self.request, self.ids[start:start + self.page_size], self.offset + start)
        try:
            method, params = next(plan)
            while True:
                method, params = plan.send(self.library.call(method, params))
        except StopIteration as done:
            return done.value

    def refetch(self) -> "FetchResult":
        """The same fetch, now."""
        return self.library._fetch(self.request, limit=self.limit, offset=self.offset, page_size=self.page_size)

    def change_details(self, change_set: Optional[ChangeSet] = None) -> Optional[ChangeDetails]:
        """What changed in this result (PhotoKit's ``changeDetails(for:)``): None when
        ``change_set`` is given and this result already reflects it (its token is not newer);
        else the same fetch again, diffed against this one, with the assets the journal's change
        sets up to the new fetch's token updated marked changed. The details cover every change
        up to their ``covered_through`` — perhaps later than ``change_set``: keep
        ``fetch_result_after_changes`` and skip the change sets it already covers. Details that
        say "reload" (``has_incremental_changes`` False) when the journal no longer reaches back."""
        if change_set is not None and change_set.token <= self.token:
            return None
        after = self.refetch()
        if after.token <= self.token:
            return ChangeDetails(self, after, ())
        updated: List[str] = []
        token = self.token
        try:
            while token < after.token:
                page, last, _ = self.library.changes_since(token)
                for c in page:
                    if c.token <= after.token:
                        updated += c.assets_updated
                if last <= token:
                    break
                token = last
        except errors.TokenExpired:
            return ChangeDetails.reload(self, after)
        return ChangeDetails(self, after, updated)


class Changes(Iterator[ChangeSet]):
    """The change sets after a token, then as they are committed: an iterator that reconnects.

    When photod stops, reloads, restarts or is killed, it connects again — to the socket it first
    reached, every 0.05 s doubling to 2 s while photod is away — and subscribes since the last
    change set it gave you: none is missed or given twice. ``TokenExpired`` is raised when photod's
    journal no longer reaches back (refetch what you hold, then follow ``lib.changes(since=
    error.current_token)``); a refused subscription (a bad filter) raises its error.
    ``close()`` (from any thread) ends the iteration.
    """

    def __init__(self, library: "Library", since: Optional[int], collection: Optional[str], media_type: Optional[str],
                 on_reconnecting: Optional[Callable[[str], None]], on_reconnected: Optional[Callable[[int], None]],
                 timeout: Optional[float]) -> None:
        self.library = library
        #: The token of the last change set delivered (None until subscribed from now).
        self.token = since
        self.filter = {"collection": collection, "mediaType": media_type}
        self.on_reconnecting = on_reconnecting
        self.on_reconnected = on_reconnected
        self.timeout = timeout
        self._sockets = library.sockets
        self._connection: Optional[Connection] = None
        self._closed = threading.Event()
        self._retrying = False
        self._delay = 0.05
        #: photod's newest token when the subscription was last made.
        self.subscribed_token: Optional[int] = None

    def __iter__(self) -> "Changes":
        return self

    def close(self) -> None:
        """Ends the iteration: a ``next()`` waiting in another thread stops with ``StopIteration``."""
        self._closed.set()
        c = self._connection
        if c is not None:
            c.close()

    def __enter__(self) -> "Changes":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def subscribe(self) -> int:
        """Subscribes now (``next()`` does it on first use): returns photod's current token. Call
        it before the work whose changes you want to hear of, when starting from now."""
        while not self._closed.is_set():
            try:
                return self._subscribe()
            except (errors.Unreachable, errors.ConnectionLost, errors.Overloaded, errors.Unavailable, TimeoutError) as e:
                if isinstance(e, errors.Unreachable) and e.permission:
                    raise
                self._wait(e)
        raise StopIteration

    def _subscribe(self) -> int:
        c = Connection.open(self._sockets, timeout=self.library.timeout)
        self._sockets = [c.path]   # from now on that daemon only: its tokens are ours
        self._connection = c
        if self._closed.is_set():
            c.close()
            raise StopIteration
        params = dict(self.filter)
        if self.token is not None:
            params["since"] = self.token
        try:
            result = c.call("changes.subscribe", params)
        except BaseException:
            c.close()
            self._connection = None
            raise
        current = int(result["token"])
        self.subscribed_token = current
        if self.token is None:
            self.token = current
        self._delay = 0.05
        if self._retrying:
            self._retrying = False
            if self.on_reconnected:
                self.on_reconnected(current)
        return current

    def _wait(self, why: BaseException) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        if not self._retrying:
            self._retrying = True
            if self.on_reconnecting:
                self.on_reconnecting(str(why))
        self._closed.wait(self._delay)
        self._delay = min(self._delay * 2, 2.0)

    def __next__(self) -> ChangeSet:
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        while not self._closed.is_set():
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"no change set in {self.timeout} s")
            c = self._connection
            try:
                if c is None or c.closed or c.stopping:
                    if c is not None:
                        c.close()
                        self._connection = None
                    self._subscribe()
                    c = self._connection
                    assert c is not None
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    continue          # the deadline's check above raises
                message = c.read_message("changes", timeout=left)
            except TimeoutError:
                continue              # the subscribe's, or the read's: the deadline's check decides
            except errors.TokenExpired:
                raise
            except (errors.Unreachable, errors.ConnectionLost, errors.Overloaded, errors.Unavailable) as e:
                if self._closed.is_set():
                    break
                if isinstance(e, errors.Unreachable) and e.permission:
                    raise
                self._wait(e)
                continue
            method = message.get("method")
            if method == "changes":
                change = ChangeSet(message.get("params") or {})
                if not isinstance(change.token, int):
                    raise errors.MalformedReply("a change set without a token", method="changes")
                if self.token is not None and change.token <= self.token:
                    continue  # a repeat after reconnecting
                self.token = change.token
                return change
            if method == "changes.expired":
                params = message.get("params") or {}
                c.close()
                self._connection = None
                raise errors.TokenExpired(
                    f"the journal was pruned past token {params.get('token')}; refetch and resume from currentToken",
                    data={"name": "tokenExpired", "currentToken": params.get("currentToken")}, method="changes")
            if method in ("photod.stopping", "photod.reloading"):
                c.close()
                self._connection = None
                self._retrying = True
                if self.on_reconnecting:
                    self.on_reconnecting(f"photod is {'stopping' if method == 'photod.stopping' else 'reloading'}")
                continue
        raise StopIteration


class Library:
    """photod's library (PhotoKit's ``PHPhotoLibrary`` and the fetch methods of ``PHAsset`` and
    ``PHAssetCollection``), reached on a Unix socket: ``socket`` a path, a list of paths tried in
    order, or None for photoctl's places (``$PHOTOD_SOCKET``; the per-user socket, then
    ``/run/photod/photod.sock``).

    One library may be shared between threads: each call takes a connection from a small pool
    (``max_connections``, so that image requests render side by side); a connection that broke is
    replaced, and a read or a repeatable write is sent once more on the new one. ``timeout`` bounds
    one call (seconds; None waits forever).
    """

    def __init__(self, socket: Optional[Union[PathLike, Sequence[PathLike]]] = None, *, timeout: Optional[float] = 60.0,
                 max_connections: int = 4) -> None:
        self.sockets = sockets_for(socket)
        self.timeout = timeout
        self._idle: List[Connection] = []
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(max(1, max_connections))
        self._caching: Optional[Connection] = None
        self._caching_lock = threading.Lock()

    def __enter__(self) -> "Library":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _drop_idle(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for c in idle:
            c.close()

    def close(self) -> None:
        """Closes the connections; the next call opens a new one."""
        self._drop_idle()
        with self._caching_lock:
            if self._caching is not None:
                self._caching.close()
                self._caching = None

    # Calls

    def _take(self) -> Tuple[Connection, bool]:
        with self._lock:
            while self._idle:
                c = self._idle.pop()
                if not c.closed and not c.stopping:
                    return c, True
                c.close()
        c = Connection.open(self.sockets, timeout=self.timeout)
        return c, False

    def _give_back(self, c: Connection) -> None:
        if c.closed or c.stopping:
            c.close()
            return
        with self._lock:
            self._idle.append(c)

    def call(self, method: str, params: Optional[Mapping[str, Any]] = None, *,
             on_notification: Optional[Callable[[Dict[str, Any]], None]] = None) -> Any:
        """Calls any method (for those this class does not wrap) and returns its ``result``."""
        repeatable = method.startswith(_REPEATABLE_PREFIXES)
        with self._slots:
            c, kept = self._take()
            try:
                return c.call(method, params, on_notification)
            except errors.ConnectionLost as lost:
                # Again on a fresh connection: a read or a repeatable write, or anything that never left.
                if not (kept and (repeatable or not lost.delivered)):
                    raise
                # photod went away since: every kept connection is to the old one.
                c.close()
                self._drop_idle()
                c = Connection.open(self.sockets, timeout=self.timeout)
                return c.call(method, params, on_notification)
            finally:
                self._give_back(c)

    def status(self) -> Status:
        """``library.status``: the state (``indexing``, ``idle``), counts, roots, the last scan."""
        return Status(self.call("library.status"))

    def wait_until_idle(self, timeout: float = 600.0, poll: float = 0.1) -> Status:
        """Waits until photod has nothing to index (or raises ``TimeoutError``)."""
        deadline = time.monotonic() + timeout
        while True:
            s = self.status()
            if s.is_idle:
                return s
            if time.monotonic() >= deadline:
                raise TimeoutError(f"photod still {s.state} after {timeout} s")
            time.sleep(poll)

    def file_errors(self, limit: int = 100, offset: int = 0) -> List[Record]:
        """Files that could not be indexed (``library.errors``), in path order."""
        return [Record(e) for e in self.call("library.errors", {"limit": limit, "offset": offset})["errors"]]

    # Fetches

    def _fetch(self, request: FetchRequest, limit: Optional[int], offset: int, page_size: int = 200) -> FetchResult:
        if offset < 0 or (limit is not None and limit < 1):
            raise errors.InvalidParams("offset must be ≥ 0 and limit ≥ 1", method="assets.fetchIDs")
        params = request.params()
        params["limit"] = min(MAX_IDS, offset + limit) if limit is not None else MAX_IDS
        answer = self.call("assets.fetchIDs", params)
        return FetchResult(self, request, list(answer["ids"][offset:]), int(answer["token"]), int(answer["total"]),
                           offset=offset, page_size=page_size, limit=limit)

    def assets(self, predicate: Optional[str] = None, sort: Optional[str] = None, limit: Optional[int] = None,
               offset: int = 0, include_hidden: bool = False, *, page_size: int = 200) -> FetchResult:
        """The library's assets (``predicate`` and ``sort`` in docs/PREDICATES.md's syntax, e.g.
        ``'mediaType == "video"'``, ``"-localDateTime"``), as a lazily paged ``FetchResult``."""
        return self._fetch(FetchRequest(None, predicate, sort, include_hidden), limit, offset, page_size)

    def collection_assets(self, collection_id: str, predicate: Optional[str] = None, sort: Optional[str] = None,
                          limit: Optional[int] = None, offset: int = 0, include_hidden: bool = False, *,
                          page_size: int = 200) -> FetchResult:
        """The assets of a moment (``m_…``), folder album (``f_…``), smart album (``s_…``), user
        album (``u_…``) or burst (``b_…``), in its own order unless ``sort`` is given."""
        return self._fetch(FetchRequest(collection_id, predicate, sort, include_hidden), limit, offset, page_size)

    def search(self, query: str, predicate: Optional[str] = None, sort: Optional[str] = None, limit: int = 100,
               offset: int = 0, include_hidden: bool = False) -> Tuple[List[Asset], int]:
        """Assets whose file and folder names, keywords, place and camera match ``query`` (words
        and "phrases", case and accents folded, the last word a prefix), most relevant first:
        one page and how many match in all. A malformed query raises ``InvalidParams`` with
        ``data["position"]``."""
        params: Dict[str, Any] = {"query": query, "limit": limit, "offset": offset}
        if predicate is not None:
            params["predicate"] = predicate
        if sort is not None:
            params["sort"] = sort
        if include_hidden:
            params["includeHidden"] = True
        answer = self.call("assets.search", params)
        return [Asset(r) for r in answer["assets"]], int(answer["total"])

    def search_collections(self, query: str, limit: int = 20) -> List[Dict[str, Any]]:
        """Places, user albums, folder albums, moments and smart albums whose own words match
        ``query`` (``collections.search``), each record with its ``kind``, at most ``limit`` of
        each kind, in that order."""
        return list(self.call("collections.search", {"query": query, "limit": limit})["collections"])

    def get_assets(self, ids: Sequence[str], include_hidden: bool = False) -> Dict[str, Asset]:
        """The records of these assets now, by id (``assets.get``); ids not in the library are left out."""
        out: Dict[str, Asset] = {}
        for start in range(0, len(ids), MAX_PAGE):
            answer = self.call("assets.get", {"ids": list(ids[start:start + MAX_PAGE]), "includeHidden": include_hidden})
            out.update((a["id"], Asset(a)) for a in answer["assets"])
        return out

    def asset(self, asset_id: str, include_hidden: bool = True) -> Asset:
        """One asset's record now; ``NotFound`` when it is not in the library."""
        found = self.get_assets([asset_id], include_hidden).get(asset_id)
        if found is None:
            raise errors.NotFound(f"no asset {asset_id}", data={"name": "notFound", "ids": [asset_id]}, method="assets.get")
        return found

    def _pages(self, method: str, key: str, cls: Callable[[Dict[str, Any]], R], params: Dict[str, Any],
               limit: Optional[int], offset: int) -> Collections[R]:
        items: List[R] = []
        token = 0
        while True:
            want = MAX_PAGE if limit is None else min(MAX_PAGE, limit - len(items))
            answer = self.call(method, dict(params, limit=want, offset=offset))
            if not items:
                token = int(answer["token"])
            items += [cls(r) for r in answer[key]]
            offset = answer.get("nextOffset")
            if offset is None or (limit is not None and len(items) >= limit):
                return Collections(items, token)

    def moments(self, year: Optional[int] = None, month: Optional[int] = None, from_date: Optional[str] = None,
                to_date: Optional[str] = None, limit: Optional[int] = None, offset: int = 0) -> Collections[Moment]:
        """Moments — one per calendar day on the capture clock — newest first (``from_date``,
        ``to_date``: ``YYYY-MM-DD``, inclusive)."""
        params = {"year": year, "month": month, "from": from_date, "to": to_date}
        return self._pages("moments.fetch", "moments", Moment, params, limit, offset)

    def moment_lists(self, kind: Optional[str] = None) -> Collections[MomentList]:
        """The moment lists by ``"year"`` or ``"month"`` (both, years first, when None), newest first."""
        answer = self.call("momentLists.fetch", {"kind": kind})
        return Collections([MomentList(r) for r in answer.get("years", []) + answer.get("months", [])],
                           int(answer["token"]))

    def albums(self, limit: Optional[int] = None, offset: int = 0) -> Collections[Album]:
        """Folder albums: every directory that directly holds visible assets, in path order."""
        return self._pages("albums.fetch", "albums", Album, {}, limit, offset)

    def smart_albums(self) -> Collections[SmartAlbum]:
        """Every smart album (All Photos, Favorites, Videos, Recently Added…) with its count and rule."""
        answer = self.call("smartAlbums.fetch")
        return Collections([SmartAlbum(r) for r in answer["smartAlbums"]], int(answer["token"]))

    def places(self) -> Collections[Place]:
        """Where the photos were taken: countries, each with its regions and cities (``places``)."""
        answer = self.call("places.fetch")
        return Collections([Place(r) for r in answer["places"]], int(answer["token"]))

    def folders(self) -> Collections[CollectionList]:
        """The folder tree above the folder albums (collection lists), a list per root first."""
        answer = self.call("collectionLists.fetch")
        return Collections([CollectionList(r) for r in answer["lists"]], int(answer["token"]))

    def user_albums(self) -> Collections[UserAlbum]:
        """The albums users made, by title."""
        answer = self.call("userAlbums.fetch")
        return Collections([UserAlbum(r) for r in answer["albums"]], int(answer["token"]))

    def user_folders(self) -> Collections[UserFolder]:
        """The folders of user albums, by title."""
        answer = self.call("userAlbums.fetch")
        return Collections([UserFolder(r) for r in answer["folders"]], int(answer["token"]))

    # Changes

    def current_token(self) -> int:
        """The newest change token (0 before the first change set)."""
        return int(self.call("changes.currentToken")["token"])

    def changes_since(self, since: int, limit: int = 1000, collection: Optional[str] = None,
                      media_type: Optional[str] = None) -> Tuple[List[ChangeSet], int, bool]:
        """The change sets after ``since`` from the journal: (change sets, the last token examined —
        pass it as the next ``since`` —, whether newer ones exist)."""
        answer = self.call("changes.since", {"since": since, "limit": limit, "collection": collection,
                                             "mediaType": media_type})
        return [ChangeSet(c) for c in answer["changes"]], int(answer["token"]), bool(answer.get("more"))

    def changes(self, since: Optional[int] = None, *, collection: Optional[str] = None, media_type: Optional[str] = None,
                on_reconnecting: Optional[Callable[[str], None]] = None,
                on_reconnected: Optional[Callable[[int], None]] = None, timeout: Optional[float] = None) -> Changes:
        """The change sets after ``since`` (from now when None), then each as it is committed, across
        photod's restarts (see ``Changes``). ``collection`` or ``media_type`` (``"image"``,
        ``"video"``) filters them; ``timeout`` makes ``next()`` raise ``TimeoutError`` after that
        many seconds without one."""
        return Changes(self, since, collection, media_type, on_reconnecting, on_reconnected, timeout)

    # Images

    def request_image(self, asset_id: str, width: int, height: int, mode: str = "fit", delivery: str = "highQuality",
                      on_degraded: Optional[Callable[[Image], None]] = None) -> Image:
        """The asset rendered to fit (``mode="fit"``) or fill (``"fill"``, cropped to exactly the
        size) ``width`` × ``height``, as a file in photod's cache. ``delivery`` is
        ``"highQuality"`` (the final image only), ``"opportunistic"`` (a quick stand-in first,
        given to ``on_degraded``, then the final image) or ``"fast"`` (whatever is at hand soonest;
        ``is_degraded`` says which)."""
        params = {"id": asset_id, "targetSize": [width, height], "contentMode": mode, "deliveryMode": delivery}

        def notice(message: Dict[str, Any]) -> None:
            if message.get("method") == "images.degraded" and on_degraded is not None:
                on_degraded(Image(message.get("params") or {}))

        return Image(self.call("images.request", params, on_notification=notice))

    def image_bytes(self, asset_id: str, width: int, height: int, mode: str = "fit") -> Tuple[bytes, Image]:
        """The rendered image's bytes and its record (photod's cache must be readable here)."""
        image = self.request_image(asset_id, width, height, mode)
        with open(image.path, "rb") as f:
            return f.read(), image

    def _caching_call(self, method: str, params: Dict[str, Any]) -> Any:
        # Pre-caching belongs to a connection: one kept for it.
        with self._caching_lock:
            if self._caching is None or self._caching.closed or self._caching.stopping:
                self._caching = Connection.open(self.sockets, timeout=self.timeout)
            return self._caching.call(method, params)

    def start_caching(self, asset_ids: Sequence[str], width: int, height: int, mode: str = "fit") -> Record:
        """Renders these assets in the background so that requesting them later is quick:
        ``queued``, ``cached``, ``skipped``. It lasts as long as this library's caching connection."""
        return Record(self._caching_call("images.startCaching", {"ids": list(asset_ids), "targetSize": [width, height],
                                                                 "contentMode": mode}))

    def stop_caching(self, asset_ids: Optional[Sequence[str]] = None) -> int:
        """Stops pre-caching these assets (all when None); returns how many renders stopped."""
        return int(self._caching_call("images.stopCaching", {"ids": list(asset_ids) if asset_ids else None})["stopped"])

    # Writes

    @staticmethod
    def _ids(ids: Union[str, Sequence[str]]) -> List[str]:
        return [ids] if isinstance(ids, str) else list(ids)

    def _write(self, method: str, params: Dict[str, Any]) -> WriteResult:
        return WriteResult(self.call(method, params))

    def set_favorite(self, asset_ids: Union[str, Sequence[str]], favorite: bool = True) -> WriteResult:
        """Marks assets favorite (or not)."""
        return self._write("assets.setFavorite", {"ids": self._ids(asset_ids), "favorite": favorite})

    def set_hidden(self, asset_ids: Union[str, Sequence[str]], hidden: bool = True) -> WriteResult:
        """Hides assets (they leave moments, albums and smart albums but Hidden), or shows them."""
        return self._write("assets.setHidden", {"ids": self._ids(asset_ids), "hidden": hidden})

    def set_keywords(self, asset_id: Union[str, Sequence[str]], source: str, keywords: Sequence[str]) -> WriteResult:
        """Makes ``source``'s keywords on the asset(s) exactly these (``[]`` clears them); the
        files' own keywords and other sources' are untouched."""
        return self._write("assets.setKeywords", {"ids": self._ids(asset_id), "source": source, "keywords": list(keywords)})

    def add_keywords(self, asset_id: Union[str, Sequence[str]], source: str, keywords: Sequence[str]) -> WriteResult:
        return self._write("assets.addKeywords", {"ids": self._ids(asset_id), "source": source, "keywords": list(keywords)})

    def remove_keywords(self, asset_id: Union[str, Sequence[str]], source: str, keywords: Sequence[str]) -> WriteResult:
        return self._write("assets.removeKeywords", {"ids": self._ids(asset_id), "source": source,
                                                     "keywords": list(keywords)})

    def create_album(self, title: str, folder: Optional[str] = None) -> WriteResult:
        """A new user album (in a user folder ``uf_…`` or at the top); its id is ``.id``."""
        return self._write("albums.create", {"title": title, "folder": folder})

    def create_folder(self, title: str, parent: Optional[str] = None) -> WriteResult:
        """A new user folder; its id is ``.id``."""
        return self._write("albums.createFolder", {"title": title, "parent": parent})

    def add_to_album(self, album_id: str, asset_ids: Union[str, Sequence[str]]) -> WriteResult:
        """Appends assets to a user album, in the order given (members keep their place)."""
        return self._write("albums.addAssets", {"id": album_id, "ids": self._ids(asset_ids)})

    def remove_from_album(self, album_id: str, asset_ids: Union[str, Sequence[str]]) -> WriteResult:
        return self._write("albums.removeAssets", {"id": album_id, "ids": self._ids(asset_ids)})

    def rename_album(self, album_id: str, title: str) -> WriteResult:
        return self._write("albums.rename", {"id": album_id, "title": title})

    def move_album(self, album_id: str, folder: Optional[str]) -> WriteResult:
        """Moves a user album or folder into ``folder`` (None: the top)."""
        return self._write("albums.move", {"id": album_id, "folder": NULL if folder is None else folder})

    def delete_album(self, album_id: str) -> WriteResult:
        """Deletes a user album, or a folder with everything below it; the assets stay."""
        return self._write("albums.delete", {"id": album_id})

    def trash(self, asset_ids: Union[str, Sequence[str]]) -> WriteResult:
        """Moves assets to Recently Deleted: every file of each is renamed in its own folder to a
        hidden ``.photod-trashed-`` name (photod must run with ``--trash-root`` for its root). All or
        nothing: a refusal raises (``NotFound``, ``PermissionDenied``, ``Unavailable``, ``Conflict``,
        each with ``data["refused"]``) and changes nothing."""
        return self._write("assets.trash", {"ids": self._ids(asset_ids)})

    def restore(self, asset_ids: Union[str, Sequence[str]]) -> WriteResult:
        """Brings trashed assets back with their ids, favorites and albums; ``result.renamed``
        lists ``{"from", "to"}`` for files restored under another name (theirs was taken)."""
        return self._write("assets.restore", {"ids": self._ids(asset_ids)})

    def delete_permanently(self, asset_ids: Union[str, Sequence[str]]) -> WriteResult:
        """Deletes assets in Recently Deleted for good: their trashed files are unlinked, they and
        their user state purged. ``result.deleted`` are the ids deleted; ``result.kept`` those
        whose files could not be unlinked, with the reason."""
        return self._write("assets.deletePermanently", {"ids": self._ids(asset_ids)})

    def rescan(self, path: Optional[Union[str, "os.PathLike[str]"]] = None) -> Record:
        """Compares a tree inside a root (or every root) with the disk now; answers when committed."""
        return Record(self.call("library.rescan", {"path": os.fspath(path) if path is not None else None}))
