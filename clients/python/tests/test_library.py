"""photod.Library against a real photod: fetches, records, collections, errors, change sets across
restarts, change details after real file changes, images and writes."""
import os
import re
import shutil
import signal
import tempfile
import threading
import unittest
from pathlib import Path

from support import REPO, Daemon, make_jpeg, make_library, needs_photod

import photod

#: Every field of docs/PROTOCOL.md's asset record table, to check each is an attribute.
_TABLE = (REPO / "docs" / "PROTOCOL.md").read_text().split("### The asset record")[1].split("## Change sets")[0]
DOCUMENTED = sorted({f for row in re.findall(r"^\| (`[^|]+`) \|", _TABLE, re.M) for f in re.findall(r"`([a-zA-Z]+)`", row)})


def snake(name: str) -> str:
    """``localDateTime`` → ``local_date_time``."""
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


class Discovery(unittest.TestCase):
    def test_the_places_photoctl_looks(self):
        self.assertEqual(photod.default_sockets({"PHOTOD_SOCKET": "/x.sock", "XDG_RUNTIME_DIR": "/r"}), ["/x.sock"])
        self.assertEqual(photod.default_sockets({"RUNTIME_DIRECTORY": "/a:/b", "XDG_RUNTIME_DIR": "/r"}),
                         ["/a/photod.sock", photod.SYSTEM_SOCKET])
        self.assertEqual(photod.default_sockets({"XDG_RUNTIME_DIR": "/r"}), ["/r/photod.sock", photod.SYSTEM_SOCKET])
        own = "/run/photod" if os.getuid() == 0 else f"/tmp/photod-{os.getuid()}"
        self.assertEqual(photod.default_sockets({})[0], f"{own}/photod.sock")
        self.assertEqual(photod.default_sockets({})[-1], photod.SYSTEM_SOCKET)

    def test_unreachable_says_where_it_looked(self):
        with self.assertRaises(photod.Unreachable) as e:
            photod.Library(["/nonexistent/a.sock", "/nonexistent/b.sock"]).status()
        self.assertIn("/nonexistent/a.sock, /nonexistent/b.sock", str(e.exception))
        self.assertFalse(e.exception.permission)

    def test_error_classes_carry_the_code(self):
        e = photod.errors.from_response({"code": -32001, "message": "tokenExpired",
                                         "data": {"name": "tokenExpired", "detail": "old", "currentToken": 7}})
        self.assertIsInstance(e, photod.TokenExpired)
        self.assertEqual((e.code, e.current_token, e.detail), (-32001, 7, "old"))
        for code, cls in [(-32003, photod.PermissionDenied), (-32004, photod.NotFound), (-32602, photod.InvalidParams),
                          (-32008, photod.ImageFailed), (-32009, photod.TooLarge), (-32099, photod.PhotodError)]:
            self.assertIs(type(photod.errors.from_response({"code": code, "message": "m", "data": {}})), cls)


@needs_photod
class Reads(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = Path(tempfile.mkdtemp(prefix="photod-py-lib-"))
        make_library(cls.root, days=3, per_day=4)
        cls.daemon = Daemon(cls.root)
        cls.lib = cls.daemon.library_client()

    @classmethod
    def tearDownClass(cls):
        cls.lib.close()
        cls.daemon.close()
        shutil.rmtree(cls.root, ignore_errors=True)

    def test_search_collections(self):
        # Folder albums by the words of their paths; smart albums by their titles; each with its kind.
        found = self.lib.search_collections("2019 05 02")
        self.assertEqual([(c["kind"], c["title"]) for c in found], [("folder", "2019-05-02")])
        self.assertEqual(found[0]["assetCount"], 4)
        self.assertEqual([c["id"] for c in self.lib.search_collections("favo")], ["s_favorites"])
        self.assertEqual(len(self.lib.search_collections("2019", limit=2)), 2)
        with self.assertRaises(photod.errors.InvalidParams):
            self.lib.search_collections('"open')

    def test_fetch_is_a_lazily_paged_sequence(self):
        calls = []
        original = self.lib.call
        self.lib.call = lambda m, p=None, **k: calls.append(m) or original(m, p, **k)  # type: ignore[method-assign]
        try:
            r = self.lib.assets(sort="-localDateTime", page_size=5)
            self.assertEqual(calls, ["assets.fetchIDs"])
            self.assertEqual((len(r), r.total), (12, 12))
            self.assertIsInstance(r.token, int)
            first = r[0]
            self.assertEqual(calls, ["assets.fetchIDs", "assets.fetch"])   # one page, not all
            self.assertEqual(first.local_date_time, "2019-05-03T12:12:00")
            self.assertEqual(r[-1].local_date_time, "2019-05-01T09:10:00")
            self.assertEqual([a.id for a in r], r.ids)
            self.assertEqual(len([c for c in calls if c == "assets.fetch"]), 3)
            self.assertEqual([a.id for a in r[2:4]], r.ids[2:4])
            self.assertIn(first, r)
            self.assertEqual(r.index_of(first.id), 0)
        finally:
            del self.lib.call
        limited = self.lib.assets(sort="localDateTime", limit=5)
        self.assertEqual(len(limited.refetch()), 5)                    # the same fetch: its limit too
        page = self.lib.assets(sort="localDateTime", limit=3, offset=2)
        self.assertEqual((len(page), page.total), (3, 12))
        self.assertEqual(page[0].id, self.lib.assets(sort="localDateTime").ids[2])

    def test_every_documented_field_is_an_attribute(self):
        a = self.lib.assets(limit=1)[0]
        missing = [f for f in DOCUMENTED if f not in a.raw and f != "pathBytes"]
        self.assertEqual(missing, [], "documented fields photod did not send")
        self.assertGreater(len(DOCUMENTED), 30)
        for field in DOCUMENTED:
            self.assertEqual(getattr(a, snake(field)) if field != "resources" else a.raw["resources"],
                             a.raw.get(field), field)
        self.assertEqual((a.make, a.model, a.pixel_width, a.pixel_height, a.utc_offset), ("photod", "Test Camera", 320, 240, "+02:00"))
        self.assertEqual(a.capture_datetime.utcoffset().total_seconds(), 7200)
        self.assertEqual(a.resources[0].role, "primary")
        self.assertTrue(a.exists and not a.is_video)
        with self.assertRaises(AttributeError):
            a.no_such_field

    def test_predicates_collections_and_lists(self):
        self.assertEqual(len(self.lib.assets('localDateTime >= "2019-05-02"')), 8)
        moments = self.lib.moments()
        self.assertEqual([m.local_date for m in moments], ["2019-05-03", "2019-05-02", "2019-05-01"])
        self.assertEqual([m.asset_count for m in moments], [4, 4, 4])
        self.assertEqual(len(moments[0].key_asset_ids), 3)
        self.assertEqual(len(self.lib.moments(limit=2)), 2)
        day = self.lib.collection_assets(moments[0].id)
        self.assertEqual([a.local_date_time[:10] for a in day], ["2019-05-03"] * 4)
        self.assertEqual([m.id for m in self.lib.moment_lists("year")], ["y_2019"])
        self.assertEqual([m.kind for m in self.lib.moment_lists()], ["year", "month"])
        albums = self.lib.albums()
        self.assertEqual(sorted(a.title for a in albums), ["2019-05-01", "2019-05-02", "2019-05-03"])
        smart = {s.id: s for s in self.lib.smart_albums()}
        self.assertEqual(smart["s_allPhotos"].asset_count, 12)
        self.assertEqual(smart["s_favorites"].subtype, "smartAlbumFavorites")
        self.assertEqual(self.lib.folders()[0].path, str(self.root))
        status = self.lib.status()
        self.assertTrue(status.is_idle)
        self.assertEqual(status.counts["assets"], 12)

    def test_errors_are_typed(self):
        with self.assertRaises(photod.NotFound) as e:
            self.lib.collection_assets("f_nope")
        self.assertEqual(e.exception.ids, ["f_nope"])
        with self.assertRaises(photod.InvalidParams) as e:
            self.lib.assets("pixelWidth >>> 3")
        self.assertEqual(e.exception.param, "predicate")
        self.assertIsNotNone(e.exception.position)
        with self.assertRaises(photod.TokenExpired) as e:
            next(self.lib.changes(since=10 ** 9))
        self.assertEqual(e.exception.current_token, self.lib.current_token())
        with self.assertRaises(photod.NotFound):
            self.lib.set_favorite("a_aaaaaaaaaaaaaaaaaaaa")
        with self.assertRaises(photod.NotFound):
            self.lib.asset("a_aaaaaaaaaaaaaaaaaaaa")

    def test_images(self):
        asset = self.lib.assets(limit=1)[0]
        degraded = []
        image = self.lib.request_image(asset.id, 100, 100, delivery="opportunistic", on_degraded=degraded.append)
        self.assertEqual((image.width, image.height, image.is_degraded), (100, 75, False))
        self.assertTrue(Path(image.path).read_bytes().startswith(b"\xff\xd8"))
        fill = self.lib.request_image(asset.id, 64, 64, mode="fill")
        self.assertEqual((fill.width, fill.height), (64, 64))
        data, record = self.lib.image_bytes(asset.id, 100, 100)
        self.assertEqual(record.path, image.path)
        self.assertEqual(data, Path(image.path).read_bytes())
        fast = self.lib.request_image(asset.id, 64, 64, mode="fill", delivery="fast")
        self.assertEqual(fast.path, fill.path)
        with self.assertRaises(photod.InvalidParams):
            self.lib.request_image(asset.id, 0, 10)
        # Several threads at once share the pool (renders side by side).
        out, threads = [], []
        for i, a in enumerate(self.lib.assets()):
            t = threading.Thread(target=lambda a=a, i=i: out.append(self.lib.request_image(a.id, 40 + i, 40 + i)))
            threads.append(t)
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(len(out), 12)


@needs_photod
class Changes(unittest.TestCase):
    def setUp(self):
        self.root = Path(tempfile.mkdtemp(prefix="photod-py-ch-"))
        make_library(self.root, days=2, per_day=3)
        self.daemon = Daemon(self.root)
        self.lib = self.daemon.library_client()

    def tearDown(self):
        self.lib.close()
        self.daemon.close()
        shutil.rmtree(self.root, ignore_errors=True)

    def test_details_follow_real_changes(self):
        result = self.lib.assets(sort="localDateTime")
        changes = self.lib.changes(since=result.token)
        new = make_jpeg(self.root / "2019-05-02" / "IMG_new.jpg", "2019:05:01 23:00:00", hue=200)
        change = next(changes)
        details = result.change_details(change)
        self.assertTrue(details.has_incremental_changes)
        self.assertEqual(details.inserted_indexes, [3])        # after the three photos of 1 May
        self.assertEqual(details.removed_indexes, [])
        after = details.fetch_result_after_changes
        self.assertEqual(after[3].path, str(new))
        # A favorite is a change, in place; a file deleted leaves the result.
        self.lib.set_favorite(after.ids[0])
        os.unlink(self.root / "2019-05-01" / "IMG_001.jpg")
        seen = [next(changes), next(changes)]
        d = after.change_details(seen[0])
        if d.covered_through < seen[1].token:
            d = d.fetch_result_after_changes.change_details(seen[1]) or d
        final = d.fetch_result_after_changes
        self.assertEqual(len(final), 6)
        self.assertNotIn(str(self.root / "2019-05-01" / "IMG_001.jpg"), [a.path for a in final])
        self.assertTrue(final[0].is_favorite)
        # Applied to the old list, the details make the new one.
        whole = after.change_details()
        self.assertEqual(whole.apply(list(after.ids), lambda i: whole.fetch_result_after_changes.ids[i]),
                         whole.fetch_result_after_changes.ids)
        self.assertIsNone(final.change_details(seen[1]))   # already reflected
        changes.close()

    def test_changes_resume_across_restarts_and_kills(self):
        tokens, errors_seen = [], []
        changes = self.lib.changes(on_reconnecting=errors_seen.append)
        start = changes.subscribe()
        done = threading.Event()

        def follow():
            for c in changes:
                tokens.append(c.token)
                if len(tokens) == 6:
                    done.set()
                    return

        reader = threading.Thread(target=follow)
        reader.start()
        ids = self.lib.assets().ids
        self.lib.set_favorite(ids[0])
        self.lib.set_favorite(ids[1])
        self.daemon.restart()                                  # SIGTERM: photod.stopping
        self.lib.set_favorite(ids[2])                          # (the library's pool reconnects too)
        self.lib.set_hidden(ids[3])
        self.daemon.restart(signal.SIGKILL)                    # no goodbye: the connection ends
        self.lib.set_favorite(ids[4])
        self.lib.set_keywords(ids[5], "tests", ["x"])
        self.assertTrue(done.wait(60), f"got {tokens}")
        reader.join(10)
        # None missed, none twice: the journal's change sets after `start` (the kill makes the
        # numbers jump past those photod may have sent: none is used twice).
        journal, _, _ = self.lib.changes_since(start)
        self.assertEqual(tokens, [c.token for c in journal][:6])
        self.assertEqual(len(set(tokens)), 6)
        self.assertGreaterEqual(len(errors_seen), 1)   # told (both restarts may fall in one retry)
        changes.close()

    def test_close_from_another_thread_ends_the_iteration(self):
        changes = self.lib.changes()
        changes.subscribe()
        ended = threading.Event()
        t = threading.Thread(target=lambda: (list(changes), ended.set()))
        t.start()
        threading.Timer(0.3, changes.close).start()
        self.assertTrue(ended.wait(10))

    def test_timeout(self):
        with self.lib.changes(timeout=0.3) as changes, self.assertRaises(TimeoutError):
            next(changes)

    def test_writes(self):
        ids = self.lib.assets(sort="localDateTime").ids
        w = self.lib.set_favorite([ids[0], ids[1]])
        self.assertEqual(sorted(w.updated), sorted(ids[:2]))
        self.assertIsNone(self.lib.set_favorite(ids[0]).token)          # nothing changed
        self.assertEqual(self.lib.collection_assets("s_favorites").ids, ids[:2])
        self.lib.set_hidden(ids[2])
        self.assertEqual(len(self.lib.assets()), 5)
        self.assertEqual(len(self.lib.assets(include_hidden=True)), 6)
        hidden = self.lib.collection_assets("s_hidden")
        self.assertEqual(hidden[0].id, ids[2])
        self.assertTrue(hidden[0].is_hidden)
        folder = self.lib.create_folder("Trips").id
        album = self.lib.create_album("Beach", folder=folder).id
        self.lib.add_to_album(album, [ids[4], ids[3]])
        self.assertEqual(self.lib.collection_assets(album).ids, [ids[4], ids[3]])
        self.assertEqual(self.lib.user_albums()[0].folder_id, folder)
        self.lib.move_album(album, None)
        self.assertIsNone(self.lib.user_albums()[0].folder_id)
        self.lib.rename_album(album, "Sea")
        self.assertEqual(self.lib.user_albums()[0].title, "Sea")
        self.lib.remove_from_album(album, ids[4])
        self.assertEqual(self.lib.collection_assets(album).ids, [ids[3]])
        self.lib.set_keywords(ids[3], "faces", ["Ada", "Bob"])
        self.assertEqual(self.lib.asset(ids[3]).keywords, ["Ada", "Bob"])
        self.lib.add_keywords(ids[3], "faces", ["Cy"])
        self.lib.remove_keywords(ids[3], "faces", ["Ada"])
        self.assertEqual(self.lib.asset(ids[3]).keywords, ["Bob", "Cy"])
        self.lib.delete_album(folder)
        self.assertEqual([f.id for f in self.lib.user_folders()], [])
        self.assertIsInstance(self.lib.rescan().token, int)
        # User state survives a restart.
        self.daemon.restart()
        self.assertTrue(self.lib.asset(ids[0]).is_favorite)



@needs_photod
class Trash(unittest.TestCase):
    """trash, restore and delete_permanently on a root photod may write (--trash-root)."""

    def setUp(self):
        self.root = Path(tempfile.mkdtemp(prefix="photod-py-trash-"))
        make_library(self.root, days=1, per_day=3)
        self.daemon = Daemon(self.root, extra=["--trash-root", str(self.root)])
        self.lib = self.daemon.library_client()

    def tearDown(self):
        self.lib.close()
        self.daemon.close()
        shutil.rmtree(self.root, ignore_errors=True)

    def test_trash_restore_delete(self):
        ids = self.lib.assets(sort="localDateTime").ids
        path = Path(self.lib.asset(ids[0]).path)
        self.lib.set_favorite(ids[0])
        trashed = self.lib.trash(ids[0])
        self.assertEqual(trashed.trashed, [ids[0]])
        self.assertFalse(path.exists())
        hidden = [p.name for p in path.parent.iterdir() if p.name.startswith(".photod-trashed-")]
        self.assertEqual(len(hidden), 1)
        self.assertTrue(hidden[0].endswith("-" + path.name))
        self.assertEqual(self.lib.collection_assets("s_recentlyDeleted").ids, [ids[0]])
        with self.assertRaises(photod.NotFound):
            self.lib.trash(ids[0])                                   # not in the library any more
        restored = self.lib.restore(ids[0])
        self.assertEqual(restored.renamed, [])
        self.assertTrue(path.exists())
        self.assertTrue(self.lib.asset(ids[0]).is_favorite)
        self.lib.trash([ids[1]])
        gone = self.lib.delete_permanently(ids[1])
        self.assertEqual(gone.deleted, [ids[1]])
        self.assertEqual([p for p in path.parent.iterdir() if p.name.startswith(".photod-trashed-")], [])
        # A refusal is typed, names each asset, and changes nothing.
        with self.assertRaises(photod.NotFound) as refused:
            self.lib.restore([ids[2]])
        self.assertEqual([r["id"] for r in refused.exception.data["refused"]], [ids[2]])
        self.assertTrue(Path(self.lib.asset(ids[2]).path).exists())
        conflict = photod.errors.from_response({"code": -32010, "message": "conflict",
                                                "data": {"name": "conflict", "detail": "x", "refused": []}})
        self.assertIsInstance(conflict, photod.Conflict)


if __name__ == "__main__":
    unittest.main()
