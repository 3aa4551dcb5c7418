"""The asyncio flavour of ``photod.Library``: the same names, as coroutines, on one connection
whose answers are matched by id (image requests render side by side), and an async iterator of
change sets that reconnects.

    import asyncio, photod.aio
    async def main():
        async with photod.aio.Library() as lib:
            async for change in lib.changes():
                print(change.token, change.assets_inserted)
    asyncio.run(main())
"""
from __future__ import annotations

import asyncio
import json
import os
from typing import Any, AsyncIterator, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union

from . import errors
from ._connection import MAX_LINE, NULL, PathLike, sockets_for
from .details import ChangeDetails
from .library import _REPEATABLE_PREFIXES, MAX_IDS, MAX_PAGE, Collections, FetchRequest, page_plan
from .models import (Album, Asset, ChangeSet, CollectionList, Image, Moment, MomentList, Record, SmartAlbum, Status,
                     UserAlbum, UserFolder, WriteResult)

R = TypeVar("R", bound=Record)


async def _open(paths: Sequence[str], timeout: Optional[float]) -> Tuple[str, asyncio.StreamReader, asyncio.StreamWriter]:
    failures: List[OSError] = []
    for path in paths:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(path, limit=MAX_LINE), timeout)
            return path, reader, writer
        except (OSError, asyncio.TimeoutError) as e:
            failures.append(e if isinstance(e, OSError) else OSError(f"timed out connecting to {path}"))
    denied = next((e for e in failures if isinstance(e, PermissionError)), None)
    first = denied or (failures[0] if failures else OSError("no socket to try"))
    raise errors.Unreachable(f"cannot reach photod at {', '.join(paths)}: {first.strerror or first}",
                             sockets=list(paths), permission=denied is not None)


class _Connection:
    """One connection: a task reads every line, answers go to their waiting futures,
    notifications to ``on_notification``."""

    def __init__(self, path: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 on_notification: Optional[Callable[[Dict[str, Any]], None]] = None) -> None:
        self.path, self.reader, self.writer = path, reader, writer
        self.pending: Dict[int, "asyncio.Future[Any]"] = {}
        self.degraded: Dict[int, Callable[[Image], None]] = {}
        self.next_id = 0
        self.closed = False
        self.stopping = False
        self.on_notification = on_notification
        self.task = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        why: errors.PhotodError = errors.ConnectionLost("photod closed the connection")
        try:
            while True:
                line = await self.reader.readline()
                if not line:
                    break
                if not line.strip():
                    continue
                try:
                    message = json.loads(line)
                except ValueError as e:
                    why = errors.MalformedReply(f"photod sent a line that is not JSON: {e}")
                    break
                if not isinstance(message, dict):
                    continue
                if "id" in message and "method" not in message:
                    future = self.pending.pop(message["id"], None)
                    self.degraded.pop(message["id"], None)
                    if future is not None and not future.done():
                        future.set_result(message)
                    continue
                method = message.get("method")
                if method in ("photod.stopping", "photod.reloading"):
                    self.stopping = True
                if method == "images.degraded":
                    params = message.get("params") or {}
                    handler = self.degraded.get(params.get("requestID"))
                    if handler is not None:
                        handler(Image(params))
                if self.on_notification is not None:
                    self.on_notification(message)
        except (OSError, ValueError, asyncio.LimitOverrunError) as e:
            why = errors.ConnectionLost(f"the connection to photod broke: {e}")
        finally:
            self.closed = True
            for future in self.pending.values():
                if not future.done():
                    future.set_exception(why)
            self.pending.clear()
            self.writer.close()

    async def call(self, method: str, params: Optional[Mapping[str, Any]] = None,
                   on_degraded: Optional[Callable[[Image], None]] = None, timeout: Optional[float] = None) -> Any:
        if self.closed:
            raise errors.ConnectionLost("the connection is closed", method=method)
        self.next_id += 1
        rid = self.next_id
        message: Dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params:
            message["params"] = {k: (None if v is NULL else v) for k, v in params.items() if v is not None}
        future: "asyncio.Future[Any]" = asyncio.get_running_loop().create_future()
        self.pending[rid] = future
        if on_degraded is not None:
            self.degraded[rid] = on_degraded
        try:
            self.writer.write(json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
            await self.writer.drain()
        except OSError as e:
            self.pending.pop(rid, None)
            raise errors.ConnectionLost(f"the connection to photod broke while sending: {e}", method=method) from None
        try:
            answer = await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            self.pending.pop(rid, None)
            raise TimeoutError(f"photod did not answer {method} in {timeout} s") from None
        except errors.PhotodError as e:
            e.method = method
            raise
        if "error" in answer:
            raise errors.from_response(answer["error"], method)
        return answer.get("result")

    async def close(self) -> None:
        if not self.closed:
            self.writer.close()
        self.task.cancel()
        try:
            await self.task
        except (asyncio.CancelledError, Exception):
            pass


class FetchResult:
    """``photod.FetchResult`` for asyncio: ``len()``, ``ids``, ``token``, ``total``; records with
    ``await result.get(i)``, ``await result.slice(start, stop)`` or ``async for``."""

    def __init__(self, library: "Library", request: FetchRequest, ids: List[str], token: int, total: int,
                 offset: int = 0, page_size: int = 200, limit: Optional[int] = None) -> None:
        self.library, self.request, self.ids, self.token, self.total = library, request, ids, token, total
        self.offset = offset
        self.limit = limit
        self.page_size = max(1, min(page_size, MAX_PAGE))
        self._pages: Dict[int, List[Asset]] = {}

    def __len__(self) -> int:
        return len(self.ids)

    def __repr__(self) -> str:
        return f"aio.FetchResult({len(self.ids)} of {self.total} assets, token {self.token}, {self.request})"

    async def get(self, index: int) -> Asset:
        """The asset at ``index`` (its page is loaded on first use)."""
        if index < 0:
            index += len(self.ids)
        if not 0 <= index < len(self.ids):
            raise IndexError("FetchResult index out of range")
        page = index // self.page_size
        if page not in self._pages:
            self._pages[page] = await self._load(page)
        return self._pages[page][index - page * self.page_size]

    async def slice(self, start: int, stop: int) -> List[Asset]:
        return [await self.get(i) for i in range(*slice(start, stop).indices(len(self.ids)))]

    async def __aiter__(self) -> AsyncIterator[Asset]:
        for i in range(len(self.ids)):
            yield await self.get(i)

    async def _load(self, page: int) -> List[Asset]:
        start = page * self.page_size
        plan = page_plan(self.request, self.ids[start:start + self.page_size], self.offset + start)
        try:
            method, params = next(plan)
            while True:
                method, params = plan.send(await self.library.call(method, params))
        except StopIteration as done:
            return done.value

    async def refetch(self) -> "FetchResult":
        return await self.library._fetch(self.request, self.limit, self.offset, self.page_size)

    async def change_details(self, change_set: Optional[ChangeSet] = None) -> Optional[ChangeDetails]:
        """As ``photod.FetchResult.change_details``."""
        if change_set is not None and change_set.token <= self.token:
            return None
        after = await self.refetch()
        if after.token <= self.token:
            return ChangeDetails(self, after, ())  # type: ignore[arg-type]
        updated: List[str] = []
        token = self.token
        try:
            while token < after.token:
                page, last, _ = await self.library.changes_since(token)
                updated += [id for c in page if c.token <= after.token for id in c.assets_updated]
                if last <= token:
                    break
                token = last
        except errors.TokenExpired:
            return ChangeDetails.reload(self, after)  # type: ignore[arg-type]
        return ChangeDetails(self, after, updated)  # type: ignore[arg-type]


class Changes:
    """``photod.Changes`` as an async iterator: the change sets after a token, then as they come,
    across photod's restarts; ``TokenExpired`` when the journal no longer reaches back."""

    def __init__(self, library: "Library", since: Optional[int], collection: Optional[str], media_type: Optional[str],
                 on_reconnecting: Optional[Callable[[str], None]], on_reconnected: Optional[Callable[[int], None]]) -> None:
        self.library = library
        self.token = since
        self.filter = {"collection": collection, "mediaType": media_type}
        self.on_reconnecting, self.on_reconnected = on_reconnecting, on_reconnected
        self.subscribed_token: Optional[int] = None
        self._sockets = library.sockets
        self._conn: Optional[_Connection] = None
        self._queue: "asyncio.Queue[Dict[str, Any]]" = asyncio.Queue(maxsize=256)
        self._retrying = False
        self._delay = 0.05
        self._closed = False
        self._held: Optional[Dict[str, Any]] = None

    def __aiter__(self) -> "Changes":
        return self

    async def close(self) -> None:
        self._closed = True
        if self._conn is not None:
            await self._conn.close()
            self._conn = None

    async def __aenter__(self) -> "Changes":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def subscribe(self) -> int:
        """Subscribes now (the first ``__anext__`` does it otherwise); photod's current token."""
        while True:
            try:
                return await self._subscribe()
            except (errors.Unreachable, errors.ConnectionLost, errors.Overloaded, errors.Unavailable, TimeoutError) as e:
                if isinstance(e, errors.Unreachable) and e.permission:
                    raise
                await self._wait(e)

    async def _subscribe(self) -> int:
        path, reader, writer = await _open(self._sockets, self.library.timeout)
        self._sockets = [path]
        self._queue = asyncio.Queue(maxsize=256)
        queue = self._queue

        def notification(message: Dict[str, Any]) -> None:
            try:
                queue.put_nowait(message)
            except asyncio.QueueFull:
                # The consumer is slow: drop the connection, resume from the token later.
                conn.writer.close()

        conn = _Connection(path, reader, writer, notification)
        self._conn = conn
        params = dict(self.filter)
        if self.token is not None:
            params["since"] = self.token
        try:
            result = await conn.call("changes.subscribe", params, timeout=self.library.timeout)
        except BaseException:
            await conn.close()
            self._conn = None
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

    async def _wait(self, why: BaseException) -> None:
        if self._conn is not None:
            await self._conn.close()
            self._conn = None
        if not self._retrying:
            self._retrying = True
            if self.on_reconnecting:
                self.on_reconnecting(str(why))
        await asyncio.sleep(self._delay)
        self._delay = min(self._delay * 2, 2.0)

    async def __anext__(self) -> ChangeSet:
        while not self._closed:
            if self._conn is None or (self._conn.closed and self._queue.empty()) or self._conn.stopping:
                if self._conn is not None:
                    await self._conn.close()
                    self._conn = None
                try:
                    await self._subscribe()
                except errors.TokenExpired:
                    raise
                except (errors.Unreachable, errors.ConnectionLost, errors.Overloaded, errors.Unavailable,
                        TimeoutError) as e:
                    if isinstance(e, errors.Unreachable) and e.permission:
                        raise
                    await self._wait(e)
                    continue
            conn = self._conn
            assert conn is not None
            if self._held is not None:
                message, self._held = self._held, None
            else:
                getter = asyncio.ensure_future(self._queue.get())
                try:
                    done, _ = await asyncio.wait({getter, conn.task}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    # Cancelled (a wait_for around this call): a message already taken is kept
                    # for the next call, never dropped.
                    if not getter.done():
                        getter.cancel()
                    elif not getter.cancelled() and getter.exception() is None and self._held is None:
                        self._held = getter.result()
                if self._held is None:
                    if self._queue.empty():
                        await self._wait(errors.ConnectionLost("photod closed the connection"))
                    continue
                message, self._held = self._held, None
            method = message.get("method")
            if method == "changes":
                change = ChangeSet(message.get("params") or {})
                if self.token is not None and change.token <= self.token:
                    continue
                self.token = change.token
                return change
            if method == "changes.expired":
                params = message.get("params") or {}
                await self.close()
                raise errors.TokenExpired(
                    f"the journal was pruned past token {params.get('token')}; refetch and resume from currentToken",
                    data={"name": "tokenExpired", "currentToken": params.get("currentToken")}, method="changes")
            if method in ("photod.stopping", "photod.reloading"):
                await conn.close()
                self._conn = None
                self._retrying = True
                if self.on_reconnecting:
                    self.on_reconnecting(f"photod is {'stopping' if method == 'photod.stopping' else 'reloading'}")
        raise StopAsyncIteration


class Library:
    """``photod.Library`` for asyncio: every method a coroutine, on one connection (opened at the
    first call, opened again after it broke; reads and repeatable writes are sent once more)."""

    def __init__(self, socket: Optional[Union[PathLike, Sequence[PathLike]]] = None, *,
                 timeout: Optional[float] = 60.0) -> None:
        self.sockets = sockets_for(socket)
        self.timeout = timeout
        self._conn: Optional[_Connection] = None
        self._lock: Optional[asyncio.Lock] = None

    async def __aenter__(self) -> "Library":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def close(self) -> None:
        if self._conn is not None:
            await self._conn.close()
            self._conn = None

    async def _connection(self) -> Tuple[_Connection, bool]:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._conn is not None and not self._conn.closed and not self._conn.stopping:
                return self._conn, True
            if self._conn is not None:
                await self._conn.close()
            path, reader, writer = await _open(self.sockets, self.timeout)
            self._conn = _Connection(path, reader, writer)
            return self._conn, False

    async def call(self, method: str, params: Optional[Mapping[str, Any]] = None, *,
                   on_degraded: Optional[Callable[[Image], None]] = None) -> Any:
        """Calls any method and returns its ``result``."""
        conn, kept = await self._connection()
        try:
            return await conn.call(method, params, on_degraded, self.timeout)
        except errors.ConnectionLost:
            if not (kept and method.startswith(_REPEATABLE_PREFIXES)):
                raise
            conn, _ = await self._connection()
            return await conn.call(method, params, on_degraded, self.timeout)

    async def status(self) -> Status:
        return Status(await self.call("library.status"))

    async def wait_until_idle(self, timeout: float = 600.0, poll: float = 0.1) -> Status:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            s = await self.status()
            if s.is_idle:
                return s
            if loop.time() >= deadline:
                raise TimeoutError(f"photod still {s.state} after {timeout} s")
            await asyncio.sleep(poll)

    async def _fetch(self, request: FetchRequest, limit: Optional[int], offset: int, page_size: int = 200) -> FetchResult:
        params = request.params()
        params["limit"] = min(MAX_IDS, offset + limit) if limit is not None else MAX_IDS
        answer = await self.call("assets.fetchIDs", params)
        return FetchResult(self, request, list(answer["ids"][offset:]), int(answer["token"]), int(answer["total"]),
                           offset, page_size, limit)

    async def assets(self, predicate: Optional[str] = None, sort: Optional[str] = None, limit: Optional[int] = None,
                     offset: int = 0, include_hidden: bool = False, *, page_size: int = 200) -> FetchResult:
        return await self._fetch(FetchRequest(None, predicate, sort, include_hidden), limit, offset, page_size)

    async def collection_assets(self, collection_id: str, predicate: Optional[str] = None, sort: Optional[str] = None,
                                limit: Optional[int] = None, offset: int = 0, include_hidden: bool = False, *,
                                page_size: int = 200) -> FetchResult:
        return await self._fetch(FetchRequest(collection_id, predicate, sort, include_hidden), limit, offset, page_size)

    async def get_assets(self, ids: Sequence[str], include_hidden: bool = False) -> Dict[str, Asset]:
        out: Dict[str, Asset] = {}
        for start in range(0, len(ids), MAX_PAGE):
            answer = await self.call("assets.get", {"ids": list(ids[start:start + MAX_PAGE]), "includeHidden": include_hidden})
            out.update((a["id"], Asset(a)) for a in answer["assets"])
        return out

    async def asset(self, asset_id: str, include_hidden: bool = True) -> Asset:
        found = (await self.get_assets([asset_id], include_hidden)).get(asset_id)
        if found is None:
            raise errors.NotFound(f"no asset {asset_id}", data={"name": "notFound", "ids": [asset_id]}, method="assets.get")
        return found

    async def _pages(self, method: str, key: str, cls: Callable[[Dict[str, Any]], R], params: Dict[str, Any],
                     limit: Optional[int], offset: int) -> Collections[R]:
        items: List[R] = []
        token = 0
        while True:
            want = MAX_PAGE if limit is None else min(MAX_PAGE, limit - len(items))
            answer = await self.call(method, dict(params, limit=want, offset=offset))
            if not items:
                token = int(answer["token"])
            items += [cls(r) for r in answer[key]]
            offset = answer.get("nextOffset")
            if offset is None or (limit is not None and len(items) >= limit):
                return Collections(items, token)

    async def moments(self, year: Optional[int] = None, month: Optional[int] = None, from_date: Optional[str] = None,
                      to_date: Optional[str] = None, limit: Optional[int] = None, offset: int = 0) -> Collections[Moment]:
        return await self._pages("moments.fetch", "moments", Moment,
                                 {"year": year, "month": month, "from": from_date, "to": to_date}, limit, offset)

    async def moment_lists(self, kind: Optional[str] = None) -> Collections[MomentList]:
        answer = await self.call("momentLists.fetch", {"kind": kind})
        return Collections([MomentList(r) for r in answer.get("years", []) + answer.get("months", [])],
                           int(answer["token"]))

    async def albums(self, limit: Optional[int] = None, offset: int = 0) -> Collections[Album]:
        return await self._pages("albums.fetch", "albums", Album, {}, limit, offset)

    async def smart_albums(self) -> Collections[SmartAlbum]:
        answer = await self.call("smartAlbums.fetch")
        return Collections([SmartAlbum(r) for r in answer["smartAlbums"]], int(answer["token"]))

    async def folders(self) -> Collections[CollectionList]:
        answer = await self.call("collectionLists.fetch")
        return Collections([CollectionList(r) for r in answer["lists"]], int(answer["token"]))

    async def user_albums(self) -> Collections[UserAlbum]:
        answer = await self.call("userAlbums.fetch")
        return Collections([UserAlbum(r) for r in answer["albums"]], int(answer["token"]))

    async def user_folders(self) -> Collections[UserFolder]:
        answer = await self.call("userAlbums.fetch")
        return Collections([UserFolder(r) for r in answer["folders"]], int(answer["token"]))

    async def current_token(self) -> int:
        return int((await self.call("changes.currentToken"))["token"])

    async def changes_since(self, since: int, limit: int = 1000, collection: Optional[str] = None,
                            media_type: Optional[str] = None) -> Tuple[List[ChangeSet], int, bool]:
        answer = await self.call("changes.since", {"since": since, "limit": limit, "collection": collection,
                                                   "mediaType": media_type})
        return [ChangeSet(c) for c in answer["changes"]], int(answer["token"]), bool(answer.get("more"))

    def changes(self, since: Optional[int] = None, *, collection: Optional[str] = None, media_type: Optional[str] = None,
                on_reconnecting: Optional[Callable[[str], None]] = None,
                on_reconnected: Optional[Callable[[int], None]] = None) -> Changes:
        """An async iterator of the change sets after ``since`` (from now when None), on a
        connection of its own, across photod's restarts."""
        return Changes(self, since, collection, media_type, on_reconnecting, on_reconnected)

    async def request_image(self, asset_id: str, width: int, height: int, mode: str = "fit",
                            delivery: str = "highQuality", on_degraded: Optional[Callable[[Image], None]] = None) -> Image:
        params = {"id": asset_id, "targetSize": [width, height], "contentMode": mode, "deliveryMode": delivery}
        return Image(await self.call("images.request", params, on_degraded=on_degraded))

    async def start_caching(self, asset_ids: Sequence[str], width: int, height: int, mode: str = "fit") -> Record:
        return Record(await self.call("images.startCaching", {"ids": list(asset_ids), "targetSize": [width, height],
                                                              "contentMode": mode}))

    async def stop_caching(self, asset_ids: Optional[Sequence[str]] = None) -> int:
        return int((await self.call("images.stopCaching", {"ids": list(asset_ids) if asset_ids else None}))["stopped"])

    @staticmethod
    def _ids(ids: Union[str, Sequence[str]]) -> List[str]:
        return [ids] if isinstance(ids, str) else list(ids)

    async def _write(self, method: str, params: Dict[str, Any]) -> WriteResult:
        return WriteResult(await self.call(method, params))

    async def set_favorite(self, asset_ids: Union[str, Sequence[str]], favorite: bool = True) -> WriteResult:
        return await self._write("assets.setFavorite", {"ids": self._ids(asset_ids), "favorite": favorite})

    async def set_hidden(self, asset_ids: Union[str, Sequence[str]], hidden: bool = True) -> WriteResult:
        return await self._write("assets.setHidden", {"ids": self._ids(asset_ids), "hidden": hidden})

    async def set_keywords(self, asset_id: Union[str, Sequence[str]], source: str, keywords: Sequence[str]) -> WriteResult:
        return await self._write("assets.setKeywords", {"ids": self._ids(asset_id), "source": source,
                                                        "keywords": list(keywords)})

    async def add_keywords(self, asset_id: Union[str, Sequence[str]], source: str, keywords: Sequence[str]) -> WriteResult:
        return await self._write("assets.addKeywords", {"ids": self._ids(asset_id), "source": source,
                                                        "keywords": list(keywords)})

    async def remove_keywords(self, asset_id: Union[str, Sequence[str]], source: str,
                              keywords: Sequence[str]) -> WriteResult:
        return await self._write("assets.removeKeywords", {"ids": self._ids(asset_id), "source": source,
                                                           "keywords": list(keywords)})

    async def create_album(self, title: str, folder: Optional[str] = None) -> WriteResult:
        return await self._write("albums.create", {"title": title, "folder": folder})

    async def create_folder(self, title: str, parent: Optional[str] = None) -> WriteResult:
        return await self._write("albums.createFolder", {"title": title, "parent": parent})

    async def add_to_album(self, album_id: str, asset_ids: Union[str, Sequence[str]]) -> WriteResult:
        return await self._write("albums.addAssets", {"id": album_id, "ids": self._ids(asset_ids)})

    async def remove_from_album(self, album_id: str, asset_ids: Union[str, Sequence[str]]) -> WriteResult:
        return await self._write("albums.removeAssets", {"id": album_id, "ids": self._ids(asset_ids)})

    async def rename_album(self, album_id: str, title: str) -> WriteResult:
        return await self._write("albums.rename", {"id": album_id, "title": title})

    async def move_album(self, album_id: str, folder: Optional[str]) -> WriteResult:
        return await self._write("albums.move", {"id": album_id, "folder": NULL if folder is None else folder})

    async def delete_album(self, album_id: str) -> WriteResult:
        return await self._write("albums.delete", {"id": album_id})

    async def trash(self, asset_ids: Union[str, Sequence[str]]) -> WriteResult:
        return await self._write("assets.trash", {"ids": self._ids(asset_ids)})

    async def restore(self, asset_ids: Union[str, Sequence[str]]) -> WriteResult:
        return await self._write("assets.restore", {"ids": self._ids(asset_ids)})

    async def delete_permanently(self, asset_ids: Union[str, Sequence[str]]) -> WriteResult:
        return await self._write("assets.deletePermanently", {"ids": self._ids(asset_ids)})

    async def rescan(self, path: Optional[Union[str, "os.PathLike[str]"]] = None) -> Record:
        return Record(await self.call("library.rescan", {"path": os.fspath(path) if path is not None else None}))
