"""The gallery (python3 -m photod.gallery) on a real photod: its HTTP answers and what it refuses,
deleting (to Recently Deleted, restored, deleted for good), then in a real browser (headless
chromium): the timeline, live arrivals and removals, the asset view, a favorite, an album, photod
restarted under an open page, Delete with its confirmation and Recently Deleted. Screenshots go
to .build/gallery-test/ and are looked at."""
import http.client
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import types
import unittest
from pathlib import Path

from support import HERE, MISSING, REPO, Daemon, make_jpeg, make_library, needs_photod

import browser
import photod

SHOTS = REPO / ".build" / "gallery-test"
XSS = "<img src=x onerror=alert(1)>"
#: The headers of a write from the gallery's own page.
FROM_PAGE = {"X-Requested-With": "photod-gallery"}


def trashed_names(folder: Path):
    """The hidden names photod gives trashed files in a folder: ``.photod-trashed-<expiry>-<name>``
    (``.trashed-…`` in photod's first trash: either is accepted)."""
    return sorted(p.name for p in folder.iterdir() if re.match(r"\.(photod-)?trashed-\d+-", p.name))


def eventually(condition, timeout: float = 15, what: str = "the condition"):
    """Polls ``condition`` until it is truthy (the gallery hears of photod's change sets
    asynchronously); returns its value."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


class GalleryProcess:
    """``python3 -m photod.gallery --port 0`` on a photod's socket."""

    def __init__(self, socket: Path, *extra: str) -> None:
        env = dict(os.environ, PYTHONPATH=str(HERE.parent))
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen([sys.executable, "-m", "photod.gallery", "--port", "0", "--socket", str(socket),
                                         *extra], stdout=subprocess.PIPE, stderr=self.log, env=env, text=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        m = re.search(r"on (http://127\.0\.0\.1:(\d+)/)", line)
        if not m:
            self.log.seek(0)
            raise RuntimeError(f"the gallery did not start: {line!r} {self.log.read().decode(errors='replace')}")
        self.url, self.port = m.group(1), int(m.group(2))

    def request(self, method: str, path: str, body: bytes = None, headers: dict = None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, data

    def json(self, path: str):
        status, _, data = self.request("GET", path)
        assert status == 200, (path, status, data)
        return json.loads(data)

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        assert self.process.stdout is not None
        self.process.stdout.close()
        self.log.close()


@needs_photod
class Server(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = Path(tempfile.mkdtemp(prefix="photod-py-gal-"))
        make_library(cls.root, days=2, per_day=3)
        make_jpeg(cls.root / XSS / "IMG_x.jpg", "2019:04:01 10:00:00")
        cls.daemon = Daemon(cls.root)
        cls.gallery = GalleryProcess(cls.daemon.socket)

    @classmethod
    def tearDownClass(cls):
        cls.gallery.stop()
        cls.daemon.close()
        shutil.rmtree(cls.root, ignore_errors=True)

    def test_timeline_collections_and_asset(self):
        page = self.gallery.json("/api/moments?limit=10")
        self.assertEqual([m["localDate"] for m in page["moments"]], ["2019-05-02", "2019-05-01", "2019-04-01"])
        self.assertEqual([len(m["tiles"]) for m in page["moments"]], [3, 3, 1])
        self.assertIsNone(page["nextOffset"])
        self.assertEqual(self.gallery.json("/api/moments?limit=1")["nextOffset"], 1)
        albums = self.gallery.json("/api/albums")
        self.assertIn(XSS, [f["title"] for f in albums["folders"]])       # as data; the page shows it as text
        self.assertEqual({s["id"]: s["count"] for s in albums["smart"]}["s_allPhotos"], 7)
        tile = page["moments"][0]["tiles"][0]
        asset = self.gallery.json(f"/api/asset/{tile['id']}")
        self.assertEqual((asset["make"], asset["utcOffset"], asset["width"]), ("photod", "+02:00", 320))
        grid = self.gallery.json("/api/collection/s_allPhotos?limit=2&header=1")
        self.assertEqual((grid["total"], len(grid["tiles"]), grid["nextOffset"]), (7, 2, 2))
        self.assertEqual(grid["collection"]["title"], "All Photos")

    def test_search_and_places(self):
        # The words of folder and file names, folded, the last word a prefix; "photod" is the camera.
        found = self.gallery.json("/api/search?q=img_101")
        self.assertEqual([t["id"] for t in found["tiles"]], [t["id"] for t in self.gallery.json("/api/search?q=IMG_101")["tiles"]])
        self.assertEqual(found["total"], 1)
        self.assertEqual(self.gallery.json("/api/search?q=img_10")["total"], 3)      # as one types: IMG_100..102
        self.assertEqual(self.gallery.json("/api/search?q=2019-05-0")["total"], 6)
        self.assertEqual(self.gallery.json("/api/search?q=photod")["total"], 7)
        self.assertEqual(self.gallery.json("/api/search?q=nothing%20here")["total"], 0)
        status, _, body = self.gallery.request("GET", "/api/search?q=%22open")
        self.assertEqual(status, 400, body)
        self.assertIn(b"at 0", body)
        # No photo here has a place: the Places list is empty, not an error.
        self.assertEqual(self.gallery.json("/api/albums")["places"], [])

    def test_images_are_content_addressed_and_cached(self):
        tile = self.gallery.json("/api/moments?limit=1")["moments"][0]["tiles"][0]
        status, headers, body = self.gallery.request("GET", f"/thumb/{tile['id']}/256")
        self.assertEqual(status, 200)
        self.assertEqual(headers["cache-control"], "no-cache")
        self.assertTrue(body.startswith(b"\xff\xd8"))
        key = re.fullmatch(r'"([0-9a-f]+)-256"', headers["etag"]).group(1)
        status, _, body = self.gallery.request("GET", f"/thumb/{tile['id']}/256", headers={"If-None-Match": headers["etag"]})
        self.assertEqual((status, body), (304, b""))
        target = f"/img/{tile['id']}/256/{key}"
        status, headers, body = self.gallery.request("GET", target)
        self.assertEqual(status, 200)
        self.assertEqual(headers["content-type"], "image/jpeg")
        self.assertIn("immutable", headers["cache-control"])
        self.assertTrue(body.startswith(b"\xff\xd8"))
        status, _, body = self.gallery.request("GET", target, headers={"If-None-Match": headers["etag"]})
        self.assertEqual((status, body), (304, b""))
        # Another key (an older version of the file) is sent to the current one.
        status, headers, _ = self.gallery.request("GET", f"/img/{tile['id']}/256/00000000deadbeef")
        self.assertEqual((status, headers["location"]), (302, target))
        # Once known, the page's tiles name the immutable URL directly.
        again = self.gallery.json("/api/moments?limit=1")["moments"][0]["tiles"][0]
        self.assertEqual(again["thumb"], target)

    def test_what_it_refuses(self):
        for path in ["/../../etc/passwd", "/static/../server.py", "/static/%2e%2e/server.py", "/img/a_x/256/ab",
                     "/thumb/../../etc/passwd/256", "/api/collection/..%2f..%2fetc", "/api/asset/a_aaaaaaaaaaaaaaaaaaaa",
                     "/thumb/a_aaaaaaaaaaaaaaaaaaaa/256", "/api/nothing"]:
            status, headers, body = self.gallery.request("GET", path)
            self.assertEqual(status, 404, path)
            self.assertNotIn(b"root:", body)
        status, _, _ = self.gallery.request("GET", "/thumb/" + self.any_id() + "/300")   # not a size the page uses
        self.assertEqual(status, 404)
        # Read-only unless --allow-writes.
        status, _, body = self.gallery.request("POST", f"/api/asset/{self.any_id()}/favorite", b'{"favorite":true}',
                                               {"Content-Type": "application/json", "X-Requested-With": "photod-gallery"})
        self.assertEqual(status, 403)
        self.assertIn(b"read-only", body)
        for write in ("trash", "restore", "delete"):
            status, _, body = self.gallery.request("POST", f"/api/asset/{self.any_id()}/{write}", b"", FROM_PAGE)
            self.assertEqual((status, b"read-only" in body), (403, True), write)
            self.assertEqual(self.gallery.request("GET", f"/api/asset/{self.any_id()}/{write}")[0], 405, write)
        self.assertNotIn("s_recentlyDeleted", [s["id"] for s in self.gallery.json("/api/albums")["smart"]])
        # DNS rebinding: another host name is not answered on a loopback address.
        status, _, _ = self.gallery.request("GET", "/api/albums", headers={"Host": "evil.example:80"})
        self.assertEqual(status, 421)
        status, headers, _ = self.gallery.request("GET", "/")
        self.assertEqual(status, 200)
        self.assertIn("script-src 'self'", headers["content-security-policy"])
        self.assertEqual(headers["x-content-type-options"], "nosniff")
        status, _, _ = self.gallery.request("GET", "/api/moments?limit=ten")
        self.assertEqual(status, 400)

    def test_hidden_assets_are_not_served(self):
        with self.daemon.library_client() as lib:
            visible = lib.assets(sort="localDateTime").ids
            hidden = visible[0]
            status, _, _ = self.gallery.request("GET", f"/thumb/{hidden}/256")
            self.assertEqual(status, 200)
            lib.set_hidden(hidden)
            try:
                for path in ["/api/collection/s_hidden", "/api/collection/s_recentlyDeleted"]:
                    self.assertEqual(self.gallery.request("GET", path)[0], 404, path)
                # Once the gallery has the change set, the hidden asset's images and record are gone.
                deadline = time.monotonic() + 10
                while self.gallery.request("GET", f"/thumb/{hidden}/256")[0] != 404:
                    self.assertLess(time.monotonic(), deadline, "a hidden asset's image is still served")
                    time.sleep(0.05)
                self.assertEqual(self.gallery.request("GET", f"/thumb/{hidden}/512")[0], 404)
                self.assertEqual(self.gallery.request("GET", f"/api/asset/{hidden}")[0], 404)
                tiles = [t["id"] for m in self.gallery.json("/api/moments?limit=10")["moments"] for t in m["tiles"]]
                self.assertNotIn(hidden, tiles)
            finally:
                lib.set_hidden(hidden, False)

    def test_host_names_answered(self):
        from photod.gallery.server import host_allowed
        self.assertTrue(host_allowed("127.0.0.1:8080", True, set()))
        self.assertTrue(host_allowed("localhost:8080", True, set()))
        self.assertTrue(host_allowed("[::1]:8080", True, set()))
        self.assertFalse(host_allowed("evil.example:8080", True, set()))
        # Served to the network: addresses, and the names given.
        self.assertTrue(host_allowed("192.168.1.10:8080", False, set()))
        self.assertTrue(host_allowed("[fe80::1]:8080", False, set()))
        self.assertFalse(host_allowed("evil.example:8080", False, set()))
        self.assertTrue(host_allowed("photos.home.arpa:8080", False, {"photos.home.arpa"}))
        self.assertFalse(host_allowed("", False, set()))

    def any_id(self) -> str:
        return self.gallery.json("/api/moments?limit=1")["moments"][0]["tiles"][0]["id"]


class AnswersAcrossAChangeSet(unittest.TestCase):
    """An answer photod gave before a change set that the gallery applied while the answer was on
    its way is not remembered: otherwise a photo hidden meanwhile stayed served until it changed
    again (CI once saw it: the background thread that learns thumbnails' keys raced a hide)."""

    class Library:
        """photod's answers, each arriving after the change set the test applies while it is asked."""
        def __init__(self):
            self.gallery = None

        def hide_meanwhile(self, asset_id):
            self.gallery.forget_images([asset_id])      # what applying the change set does first

        def asset(self, asset_id, include_hidden=True):
            self.hide_meanwhile(asset_id)
            return types.SimpleNamespace(id=asset_id)

        def request_image(self, asset_id, width, height, mode=None, delivery=None):
            self.hide_meanwhile(asset_id)
            return types.SimpleNamespace(path=f"/cache/{'ab' * 16}-{asset_id}.jpg")

    def test_a_hide_meanwhile_is_not_overwritten(self):
        from photod.gallery.server import Gallery
        lib = self.Library()
        gallery = lib.gallery = Gallery(lib)
        gallery.check_visible("a_1")
        self.assertNotIn("a_1", gallery.visible)
        path, _ = gallery.image("a_2", 256)
        self.assertEqual(path, f"/cache/{'ab' * 16}-a_2.jpg")       # this answer is served...
        self.assertEqual((gallery.visible, gallery.keys), (set(), {}))  # ...and nothing of it kept
        # Without a change set meanwhile, both are remembered.
        lib.hide_meanwhile = lambda asset_id: None
        gallery.image("a_3", 256)
        self.assertIn("a_3", gallery.visible)
        self.assertIn(("a_3", 256), gallery.keys)


@needs_photod
class Deleting(unittest.TestCase):
    """Delete, Restore and Delete now through the gallery's routes (--allow-writes), on a photod
    whose root is opened to the trash, and on one whose root is not."""

    @classmethod
    def setUpClass(cls):
        cls.root = Path(tempfile.mkdtemp(prefix="photod-py-galtrash-"))
        make_library(cls.root, days=2, per_day=4)
        cls.daemon = Daemon(cls.root, extra=["--trash-root", str(cls.root)])
        cls.gallery = GalleryProcess(cls.daemon.socket, "--allow-writes")
        cls.lib = cls.daemon.library_client()

    @classmethod
    def tearDownClass(cls):
        cls.lib.close()
        cls.gallery.stop()
        cls.daemon.close()
        shutil.rmtree(cls.root, ignore_errors=True)

    def post(self, asset_id: str, write: str, headers: dict = FROM_PAGE, gallery: GalleryProcess = None):
        status, _, body = (gallery or self.gallery).request("POST", f"/api/asset/{asset_id}/{write}", b"", headers)
        return status, json.loads(body)

    def timeline_ids(self):
        return [t["id"] for m in self.gallery.json("/api/moments?limit=10")["moments"] for t in m["tiles"]]

    def recently_deleted(self):
        return self.gallery.json("/api/collection/s_recentlyDeleted")["tiles"]

    def test_trash_restore_and_delete_now(self):
        ids = self.lib.assets(sort="localDateTime").ids
        first, second = ids[0], ids[1]
        path = Path(self.lib.asset(first).path)
        self.lib.set_favorite(first)
        self.assertIn(first, self.timeline_ids())

        # Delete: the file renamed in its folder to a hidden name, the asset in Recently Deleted.
        status, answer = self.post(first, "trash")
        self.assertEqual((status, answer["trashed"]), (200, [first]), answer)
        self.assertFalse(path.exists())
        hidden = trashed_names(path.parent)
        self.assertEqual(len(hidden), 1)
        self.assertTrue(hidden[0].endswith("-" + path.name), hidden)
        self.assertEqual(self.lib.collection_assets("s_recentlyDeleted").ids, [first])
        # The gallery follows: gone from the timeline, listed in Recently Deleted with its name.
        eventually(lambda: first not in self.timeline_ids(), what="the trashed asset to leave the timeline")
        tiles = eventually(self.recently_deleted, what="Recently Deleted to list the asset")
        self.assertEqual([(t["id"], t["trashed"], t["name"], t["fav"]) for t in tiles], [(first, True, path.name, True)])
        eventually(lambda: {s["id"]: s["count"] for s in self.gallery.json("/api/albums")["smart"]}.get("s_recentlyDeleted") == 1,
                   what="the sidebar's count of Recently Deleted")
        asset = self.gallery.json(f"/api/asset/{first}")
        self.assertEqual((asset["trashed"], asset["name"], asset["fav"]), (True, path.name, True))
        # Its image: photod renders none of a file with a hidden name (the page draws a card
        # instead); if it ever does, the image is served.
        status, headers, body = self.gallery.request("GET", f"/thumb/{first}/256")
        if status == 200:
            self.assertTrue(body.startswith(b"\xff\xd8"))
        else:
            self.assertEqual(status, 404, body)
            self.assertIn("Recently Deleted", json.loads(body)["error"])
        # Twice: photod's refusal, in its words (its reason for this asset).
        status, answer = self.post(first, "trash")
        self.assertEqual(status, 404, answer)
        self.assertEqual(answer["error"], "the asset is already in Recently Deleted")

        # Restore: the file back under its name, the favorite kept, back in the timeline.
        status, answer = self.post(first, "restore")
        self.assertEqual((status, answer["restored"], answer["renamed"]), (200, [first], []), answer)
        self.assertTrue(path.exists())
        self.assertEqual(trashed_names(path.parent), [])
        self.assertTrue(self.lib.asset(first).is_favorite)
        eventually(lambda: first in self.timeline_ids(), what="the restored asset in the timeline")
        eventually(lambda: self.recently_deleted() == [], what="Recently Deleted to be empty")
        self.assertEqual(self.gallery.json(f"/api/asset/{first}")["trashed"], False)

        # A name taken meanwhile: restored beside it, as "NAME (1).jpg".
        self.assertEqual(self.post(first, "trash")[0], 200)
        make_jpeg(path, "2019:05:01 23:00:00", hue=200)
        self.daemon.wait_until_idle()
        eventually(lambda: len(self.lib.assets().ids) == len(ids), what="photod to index the new file")
        status, answer = self.post(first, "restore")
        self.assertEqual(status, 200, answer)
        self.assertEqual([(Path(r["from"]).name, Path(r["to"]).name) for r in answer["renamed"]],
                         [(path.name, path.stem + " (1)" + path.suffix)])
        self.assertTrue(path.with_name(path.stem + " (1)" + path.suffix).exists())

        # Delete now: only from Recently Deleted; the trashed file unlinked, the asset purged.
        status, answer = self.post(second, "delete")
        self.assertEqual(status, 404, answer)
        self.assertIn("not in Recently Deleted", answer["error"])
        second_path = Path(self.lib.asset(second).path)
        self.assertEqual(self.post(second, "trash")[0], 200)
        eventually(lambda: [t["id"] for t in self.recently_deleted()] == [second], what="Recently Deleted to list it")
        status, answer = self.post(second, "delete")
        self.assertEqual((status, answer["deleted"]), (200, [second]), answer)
        self.assertFalse(second_path.exists())
        self.assertEqual(trashed_names(second_path.parent), [])
        eventually(lambda: self.recently_deleted() == [], what="Recently Deleted to be empty")
        self.assertEqual(self.gallery.request("GET", f"/api/asset/{second}")[0], 404)
        self.assertEqual(self.post(second, "delete")[0], 404)

    def test_a_file_deleted_by_someone_else(self):
        # On disk, not through photod: in Recently Deleted, but not in photod's trash. Restore
        # is a conflict (it comes back when its file does); Delete now purges it.
        victim = self.lib.assets(sort="localDateTime").ids[-1]
        path = Path(self.lib.asset(victim).path)
        os.unlink(path)
        eventually(lambda: victim in [t["id"] for t in self.recently_deleted()], what="the deleted file's asset in Recently Deleted")
        status, answer = self.post(victim, "restore")
        self.assertEqual(status, 409, answer)
        self.assertIn("deleted outside photod", answer["error"])
        self.assertNotIn(victim, answer["error"])           # photod's reason for it, without its id
        status, answer = self.post(victim, "delete")
        self.assertEqual((status, answer["deleted"]), (200, [victim]), answer)
        eventually(lambda: victim not in [t["id"] for t in self.recently_deleted()], what="the asset purged")

    def test_only_from_the_page(self):
        some = self.lib.assets(sort="localDateTime").ids[2]
        for headers in ({}, {"X-Requested-With": "photod-gallery", "Origin": "http://evil.example"}):
            status, answer = self.post(some, "trash", headers)
            self.assertEqual(status, 403, answer)
            self.assertIn("own page", answer["error"])
        status, _, body = self.gallery.request("POST", f"/api/asset/{some}/trash", b"x" * 2000, FROM_PAGE)
        self.assertEqual(status, 400, body)
        self.assertTrue(Path(self.lib.asset(some).path).exists())
        self.assertEqual(self.post("a_aaaaaaaaaaaaaaaaaaaa", "trash")[0], 404)

    def test_a_root_not_opened_to_the_trash(self):
        # photod without --trash-root writes nothing to the library: its refusal reaches the page.
        root = Path(tempfile.mkdtemp(prefix="photod-py-galnotrash-"))
        daemon = gallery = None
        try:
            make_library(root, days=1, per_day=1)
            daemon = Daemon(root)
            gallery = GalleryProcess(daemon.socket, "--allow-writes")
            with daemon.library_client() as lib:
                only = lib.assets().ids[0]
                status, answer = self.post(only, "trash", gallery=gallery)
                self.assertEqual(status, 403, answer)
                self.assertIn("trash-root", answer["error"])
                self.assertTrue(Path(lib.asset(only).path).exists())
        finally:
            if gallery is not None:
                gallery.stop()
            if daemon is not None:
                daemon.close()
            shutil.rmtree(root, ignore_errors=True)


BROWSER_MISSING = MISSING or (None if browser.CHROMIUM else
                              "no chromium here (scripts/install-deps --tests installs Debian's chromium)")


class BrowserCase(unittest.TestCase):
    """A photod on a library of three days and a folder named like markup, the gallery with
    --allow-writes on it, and headless chromium."""

    #: photod's options beyond the library's.
    daemon_extra: list = []

    def setUp(self):
        SHOTS.mkdir(parents=True, exist_ok=True)
        self.root = Path(tempfile.mkdtemp(prefix="photod-py-web-"))
        make_library(self.root, days=3, per_day=4)
        make_jpeg(self.root / XSS / "IMG_x.jpg", "2019:04:01 10:00:00", hue=90)
        self.daemon = Daemon(self.root, extra=list(self.daemon_extra))
        self.gallery = GalleryProcess(self.daemon.socket, "--allow-writes")
        self.browser = browser.Browser(1280, 900)

    def tearDown(self):
        self.browser.close()
        self.gallery.stop()
        self.daemon.close()
        shutil.rmtree(self.root, ignore_errors=True)

    def tiles(self) -> int:
        return self.browser.js("document.querySelectorAll('#content .tile').length")

    def loaded(self) -> int:
        return self.browser.js("[...document.querySelectorAll('#content .tile img')].filter(i => i.complete && i.naturalWidth > 0).length")

    def look(self, name: str, at_least: int, busy_at_least: float = 0.25) -> None:
        """A screenshot that is not blank: many colours, most of it not the background (a modal
        dialog's backdrop makes most of the screen one colour: it passes a lower share)."""
        data = self.browser.screenshot(str(SHOTS / name))
        colours, busy = browser.colourfulness(data)
        print(f"\n{name}: {colours} colours, {busy:.0%} not background", flush=True)
        self.assertGreater(colours, at_least, f"{name} looks blank")
        self.assertGreater(busy, busy_at_least, f"{name} is mostly background")


@unittest.skipIf(BROWSER_MISSING is not None, BROWSER_MISSING or "")
class InABrowser(BrowserCase):
    def test_a_person_using_it(self):
        b = self.browser
        self.staged = make_jpeg(Path(self.daemon.state) / "staged" / "IMG_live.jpg", "2019:05:02 23:59:00", hue=300,
                                offset="-07:00")
        b.goto(self.gallery.url)
        # The timeline: a day header per moment, newest first, every thumbnail drawn.
        b.wait("document.querySelectorAll('#content .moment').length === 4")
        b.wait("[...document.querySelectorAll('#content .tile img')].filter(i => i.complete && i.naturalWidth > 0).length === 13")
        headers = b.js("[...document.querySelectorAll('#content .moment h2')].map(h => h.firstChild.textContent)")
        self.assertEqual(headers, ["Friday, 3 May 2019", "Thursday, 2 May 2019", "Wednesday, 1 May 2019", "Monday, 1 April 2019"])
        # The folder named like markup is shown as its text, and made no element.
        self.assertIn(XSS, b.js("document.querySelector('#folders').textContent"))
        self.assertEqual(b.js("document.querySelectorAll('#side img, #content h2 img').length"), 0)
        self.look("timeline.png", 200)

        # A photo copied in appears without a reload; one deleted disappears.
        start = time.monotonic()
        shutil.copyfile(self.staged, self.root / "2019-05-02" / "IMG_live.jpg")     # as cp does it
        b.wait("document.querySelectorAll('#content .tile').length === 14", timeout=15)
        seconds = time.monotonic() - start
        print(f"\na copied photo appeared in the open page after {seconds:.2f} s", flush=True)
        self.assertFalse(b.js("performance.getEntriesByType('navigation').length !== 1"))
        new_id = b.js("document.querySelector('#content .moment[data-id=\"m_20190502\"] .tile.fresh').dataset.id")
        self.assertEqual(b.js("[...document.querySelectorAll('#content .moment[data-id=\"m_20190502\"] .tile')].pop().dataset.id"),
                         new_id, "the new photo, the day's last, is not in its place")
        b.wait("document.querySelector('.tile[data-id=\"%s\"] img').naturalWidth > 0" % new_id)
        marker = b.js("window.stillTheSamePage = 1")
        self.assertEqual(marker, 1)
        os.unlink(self.root / "2019-05-01" / "IMG_001.jpg")
        b.wait("document.querySelectorAll('#content .tile').length === 13", timeout=15)
        # A new day is a new moment, in its place.
        make_jpeg(self.root / "2019-05-10" / "IMG_day.jpg", "2019:05:10 08:00:00", hue=10)
        b.wait("document.querySelector('#content .moment').dataset.id === 'm_20190510'", timeout=15)
        self.assertEqual(b.js("window.stillTheSamePage"), 1, "the page was reloaded")
        # The last photo of a day deleted: its moment goes, and the change set's others still show.
        os.unlink(self.root / XSS / "IMG_x.jpg")
        shutil.copyfile(self.staged, self.root / "2019-05-03" / "IMG_also.jpg")       # dated 2 May: there
        b.wait("!document.querySelector('#content .moment[data-id=\"m_20190401\"]')", timeout=15)
        b.wait("document.querySelectorAll('#content .tile').length === 14", timeout=15)

        # The asset view: a larger image, the date on the capture clock, the camera; a favorite.
        b.js("document.querySelector('.tile[data-id=\"%s\"]').click()" % new_id)
        b.wait("!document.getElementById('viewer').hidden && document.getElementById('large').naturalWidth >= 320")
        self.assertEqual(b.js("document.getElementById('info-date').textContent"), "Thursday, 2 May 2019")
        self.assertEqual(b.js("document.getElementById('info-time').textContent"), "23:59:00 (UTC-07:00)")
        self.assertIn("photod Test Camera", b.js("document.getElementById('facts').textContent"))
        self.assertEqual(b.js("location.pathname"), f"/a/{new_id}")
        b.js("document.getElementById('fav').click()")
        b.wait("document.getElementById('fav').classList.contains('on')")
        with self.daemon.library_client() as lib:
            self.assertTrue(lib.asset(new_id).is_favorite)
        self.look("asset.png", 100)
        b.js("document.getElementById('close').click()")
        b.wait("document.getElementById('viewer').hidden")
        b.wait("document.querySelector('.tile[data-id=\"%s\"] .heart') !== null" % new_id)
        # The sidebar's Favorites follows; opening it shows the one favorite.
        b.wait("[...document.querySelectorAll('#smart a')].some(a => a.textContent.startsWith('Favorites') && a.textContent.endsWith('1'))")
        b.js("[...document.querySelectorAll('#smart a')].find(a => a.textContent.startsWith('Favorites')).click()")
        b.wait("location.pathname === '/c/s_favorites' && document.querySelectorAll('#content .tile').length === 1")
        # A favorite set elsewhere (another client) shows up in the open album.
        other = self.daemon.library_client()
        some = other.assets(sort="localDateTime").ids[0]
        other.set_favorite(some)
        b.wait("document.querySelectorAll('#content .tile').length === 2")
        b.js("history.back()")
        b.wait("document.querySelectorAll('#content .moment').length === 4")

        # photod restarted under the open page: it says so, then goes on live.
        self.daemon.stop()
        b.wait("!document.getElementById('banner').hidden", timeout=15)
        self.daemon.start()
        b.wait("document.getElementById('banner').hidden", timeout=30)
        make_jpeg(self.root / "2019-05-03" / "IMG_after.jpg", "2019:05:03 23:00:00", hue=150)
        b.wait("document.querySelector('#content .moment[data-id=\"m_20190503\"]').querySelectorAll('.tile').length === 5", timeout=15)
        self.assertEqual(b.js("window.stillTheSamePage"), 1, "the page was reloaded")
        other.close()
        self.look("after-restart.png", 200)

    def test_files_it_cannot_show(self):
        # An ICO (photod does not render it) and a JPEG cut short (its header is whole, its image not).
        dib = struct.pack("<IiiHHIIiiII", 40, 1, 2, 1, 32, 0, 8, 0, 0, 0, 0) + b"\x00\x00\xff\xff" + b"\x00" * 4
        ico = struct.pack("<HHH", 0, 1, 1) + struct.pack("<BBBBHHII", 1, 1, 0, 0, 1, 32, len(dib), 22) + dib
        (self.root / "odd").mkdir()
        (self.root / "odd" / "IMG_20190601_120000.ico").write_bytes(ico)
        whole = make_jpeg(Path(self.daemon.state) / "whole.jpg", "2019:06:01 12:00:01", width=640, height=480).read_bytes()
        (self.root / "odd" / "cut.jpg").write_bytes(whole[:len(whole) * 2 // 3])
        self.daemon.wait_until_idle()
        # Idle can come before photod has heard of the last file (on a loaded machine the page once
        # opened without the cut JPEG, and 20 s did not bring it): both in their moment first.
        with self.daemon.library_client() as lib:
            def indexed():
                try:
                    return len(lib.collection_assets("m_20190601").ids) == 2
                except photod.NotFound:
                    return False
            eventually(indexed, timeout=30, what="photod to index the ICO and the cut JPEG into 1 June 2019")
        b = self.browser
        b.goto(self.gallery.url)
        try:
            labels = b.wait("(() => { const l = [...document.querySelectorAll('#content .moment[data-id=\"m_20190601\"] .noimage')]"
                            ".map(e => e.textContent).sort(); return l.length === 2 && l; })()")
        except AssertionError as e:
            shown = b.js("JSON.stringify([...document.querySelectorAll('#content .tile')].map(t => [t.dataset.id, t.textContent, "
                         "(t.querySelector('img') || {}).src, (t.querySelector('img') || {}).naturalWidth]))")
            raise AssertionError(f"{e}; the tiles: {shown}") from None
        self.assertEqual(labels, ["ico", "jpeg · damaged"])

    def test_scrolling_loads_more(self):
        # Forty days: the first page shows six moments, the rest come as one scrolls.
        for d in range(40):
            make_jpeg(self.root / "2018" / f"d{d:02d}" / "IMG.jpg", f"2018:{1 + d // 28:02d}:{1 + d % 28:02d} 12:00:00", hue=d * 9)
        self.daemon.wait_until_idle()
        b = self.browser
        b.goto(self.gallery.url)
        b.wait("document.querySelectorAll('#content .moment').length >= 6")
        first = b.js("document.querySelectorAll('#content .moment').length")
        self.assertLess(first, 44)
        count = "document.querySelectorAll('#content .moment').length"
        shown = first
        while shown < 44:
            # Each scroll to the bottom brings the next page: awaited, however slow the machine.
            b.js("window.scrollTo(0, document.body.scrollHeight)")
            b.wait(f"{count} > {shown} || (window.scrollTo(0, document.body.scrollHeight), false)", timeout=30)
            shown = b.js(count)
        self.assertEqual(b.js(count), 44)


@unittest.skipIf(BROWSER_MISSING is not None, BROWSER_MISSING or "")
class DeletingInABrowser(BrowserCase):
    """Delete with its confirmation, Recently Deleted, Restore and Delete now, and photod's
    refusals as the page shows them. photod starts without --trash-root, then gets it."""

    def click(self, selector: str) -> None:
        self.browser.js(f"document.querySelector({json.dumps(selector)}).click()")

    def open_tile(self, asset_id: str) -> None:
        b = self.browser
        self.click(f'#content .tile[data-id="{asset_id}"]')
        b.wait(f"!document.getElementById('viewer').hidden && location.pathname === '/a/{asset_id}' && "
               "document.getElementById('facts').textContent !== ''")

    def confirm_dialog(self, title: str) -> None:
        self.browser.wait("document.getElementById('confirm').open && document.activeElement.id === 'confirm-cancel'")
        self.assertEqual(self.browser.js("document.getElementById('confirm-title').textContent"), title)

    def test_delete_restore_delete_now(self):
        b = self.browser
        with self.daemon.library_client() as lib:
            ids = lib.assets(sort="localDateTime").ids
            paths = {i: Path(lib.asset(i).path) for i in ids}
        victim, other = ids[5], ids[6]        # 2 May, 10:11 and 11:11
        b.goto(self.gallery.url)
        b.wait("document.querySelectorAll('#content .moment').length === 4")
        b.wait("[...document.querySelectorAll('#content .tile img')].filter(i => i.complete && i.naturalWidth > 0).length === 13")
        # The sidebar lists Recently Deleted (empty) when the gallery may write.
        b.wait("[...document.querySelectorAll('#smart a')].some(a => a.getAttribute('href') === '/c/s_recentlyDeleted')")

        # The asset view has Delete; it asks first, in the page's dialog; Cancel keeps the photo.
        self.open_tile(victim)
        b.wait("document.getElementById('large').naturalWidth >= 320")
        self.assertFalse(b.js("document.getElementById('trash').hidden"))
        self.assertTrue(b.js("document.getElementById('restore').hidden && document.getElementById('purge').hidden"))
        self.look("delete-button.png", 100)
        self.click("#trash")
        self.confirm_dialog("Delete this photo?")
        self.assertIn(paths[victim].name, b.js("document.getElementById('confirm-text').textContent"))
        self.look("delete-confirm.png", 60, 0.05)
        # Esc (a real key press) cancels the question and leaves the viewer open; so does Cancel.
        for kind in ("keyDown", "keyUp"):
            b.command("Input.dispatchKeyEvent", type=kind, key="Escape", code="Escape", windowsVirtualKeyCode=27)
        b.wait("!document.getElementById('confirm').open")
        self.assertFalse(b.js("document.getElementById('viewer').hidden"))
        self.click("#trash")
        self.confirm_dialog("Delete this photo?")
        self.click("#confirm-cancel")
        b.wait("!document.getElementById('confirm').open")
        self.assertFalse(b.js("document.getElementById('viewer').hidden"))
        self.assertTrue(paths[victim].exists())

        # photod without --trash-root refuses: its reason is shown in the dialog, nothing changes.
        self.click("#trash")
        self.confirm_dialog("Delete this photo?")
        self.click("#confirm-ok")
        refusal = b.wait("!document.getElementById('confirm-error').hidden && document.getElementById('confirm-error').textContent")
        self.assertIn("trash-root", refusal)
        self.assertTrue(b.js("document.getElementById('confirm-ok').hidden"))
        self.look("delete-refused.png", 60, 0.05)
        self.click("#confirm-cancel")
        b.wait("!document.getElementById('confirm').open")
        self.assertTrue(paths[victim].exists())
        self.assertEqual(b.js("location.pathname"), f"/a/{victim}")

        # photod restarted with the root opened to the trash: Delete moves it to Recently Deleted.
        self.daemon.extra = ["--trash-root", str(self.root)]
        self.daemon.stop()
        b.wait("!document.getElementById('banner').hidden", timeout=15)
        self.daemon.start()
        b.wait("document.getElementById('banner').hidden", timeout=30)
        self.click("#trash")
        self.confirm_dialog("Delete this photo?")
        self.click("#confirm-ok")
        b.wait("!document.getElementById('confirm').open")
        b.wait(f"!document.querySelector('#content .tile[data-id=\"{victim}\"]') && "
               f"document.getElementById('viewer').dataset.id === '{other}' && location.pathname === '/a/{other}'")
        self.assertFalse(paths[victim].exists())
        self.assertEqual(len(trashed_names(paths[victim].parent)), 1)
        b.wait("!document.getElementById('toast').hidden")
        self.assertIn("Recently Deleted", b.js("document.getElementById('toast').textContent"))
        # The Delete key asks too; this one goes as well.
        b.js("document.dispatchEvent(new KeyboardEvent('keydown', {key: 'Delete'}))")
        self.confirm_dialog("Delete this photo?")
        self.click("#confirm-ok")
        b.wait(f"!document.getElementById('confirm').open && !document.querySelector('#content .tile[data-id=\"{other}\"]')")
        self.assertFalse(paths[other].exists())
        self.click("#close")
        b.wait("document.getElementById('viewer').hidden")
        b.wait("document.querySelectorAll('#content .tile').length === 11")

        # Recently Deleted: both, drawn by photod from their trashed files.
        link = "[...document.querySelectorAll('#smart a')].find(a => a.getAttribute('href') === '/c/s_recentlyDeleted')"
        b.wait(f"{link}.textContent.endsWith('2')")
        b.js(f"{link}.click()")
        b.wait("location.pathname === '/c/s_recentlyDeleted' && document.querySelectorAll('#content .tile.trashed').length === 2")
        self.assertEqual(b.js("document.getElementById('where').textContent"), "Recently Deleted")
        shown = "[...document.querySelectorAll('#content .tile.trashed img')]"
        b.wait(f"{shown}.length === 2 && {shown}.every(i => i.complete && i.naturalWidth > 0 && getComputedStyle(i).opacity === '1')")
        self.assertEqual(b.js("document.querySelectorAll('#content .tile .card:not([hidden])').length"), 0)
        self.look("recently-deleted.png", 100)

        # Restore: back in its folder, gone from Recently Deleted.
        self.open_tile(victim)
        b.wait("!document.getElementById('restore').hidden && !document.getElementById('purge').hidden")
        self.assertTrue(b.js("document.getElementById('trash').hidden && document.getElementById('fav').hidden"))
        b.wait("document.getElementById('large').classList.contains('loaded') && document.getElementById('noimage').hidden")
        self.look("recently-deleted-asset.png", 100)
        self.click("#restore")
        b.wait(f"!document.querySelector('#content .tile[data-id=\"{victim}\"]') && "
               f"document.getElementById('viewer').dataset.id === '{other}' && location.pathname === '/a/{other}'")
        self.assertTrue(paths[victim].exists())
        self.assertIn("back in its folder", b.js("document.getElementById('toast').textContent"))

        # Delete now: asks, then the files are gone for good; the view is empty.
        self.click("#purge")
        self.confirm_dialog("Delete for good?")
        self.click("#confirm-ok")
        b.wait("!document.getElementById('confirm').open && document.getElementById('viewer').hidden")
        b.wait("document.querySelectorAll('#content .tile').length === 0 && "
               "document.querySelector('#content .empty').textContent === 'Nothing here.'")
        self.assertEqual(trashed_names(paths[other].parent), [])
        with self.daemon.library_client() as lib:
            self.assertEqual(lib.collection_assets("s_recentlyDeleted").ids, [])

        # A file deleted on disk by someone else lands here; Restore is refused with photod's reason.
        os.unlink(paths[ids[1]])
        b.wait(f"document.querySelector('#content .tile[data-id=\"{ids[1]}\"]') !== null", timeout=15)
        # Its file is gone: photod has no image of it, and its tile is a card with its name and date.
        gone = f"document.querySelector('#content .tile[data-id=\"{ids[1]}\"]')"
        b.wait(f"{gone}.querySelector('.card:not([hidden])') !== null && !{gone}.querySelector('img')")
        self.assertIn(paths[ids[1]].name, b.js(f"{gone}.textContent"))
        b.wait(f"{link}.textContent.endsWith('1')")      # the sidebar's count follows (a moment later)
        self.assertIsNone(b.js("document.querySelector('#content .empty')"))
        self.look("recently-deleted-card.png", 20, 0.15)
        self.open_tile(ids[1])
        b.wait("!document.getElementById('noimage').hidden")
        self.click("#restore")
        reason = b.wait("!document.getElementById('action-error').hidden && document.getElementById('action-error').textContent")
        self.assertTrue(reason.startswith("Not restored: "), reason)
        self.look("restore-refused.png", 20, 0.15)
        # The timeline has the restored photo back, and not the deleted ones.
        self.click("#close")
        b.wait("document.getElementById('viewer').hidden")
        b.js("document.getElementById('home').click()")
        b.wait("document.querySelectorAll('#content .moment').length === 4 && document.querySelectorAll('#content .tile').length === 11")
        self.assertTrue(b.js(f"document.querySelector('#content .tile[data-id=\"{victim}\"]') !== null"))


if __name__ == "__main__":
    unittest.main()
