"""photod.aio.Library against a real photod: the same names as coroutines, concurrent calls on
one connection, and the async change iterator across a restart."""
import asyncio
import shutil
import signal
import tempfile
import unittest
from pathlib import Path

from support import Daemon, make_jpeg, make_library, needs_photod

import photod
import photod.aio


@needs_photod
class Async(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = Path(tempfile.mkdtemp(prefix="photod-py-aio-"))
        make_library(cls.root, days=2, per_day=3)
        cls.daemon = Daemon(cls.root)

    @classmethod
    def tearDownClass(cls):
        cls.daemon.close()
        shutil.rmtree(cls.root, ignore_errors=True)

    def run_async(self, coroutine):
        return asyncio.run(asyncio.wait_for(coroutine, 120))

    def test_reads_writes_and_images(self):
        async def body():
            async with photod.aio.Library(str(self.daemon.socket)) as lib:
                self.assertTrue((await lib.status()).is_idle)
                result = await lib.assets(sort="localDateTime", page_size=4)
                self.assertEqual(len(result), 6)
                first = await result.get(0)
                self.assertEqual(first.local_date_time, "2019-05-01T09:10:00")
                self.assertEqual([a.id async for a in result], result.ids)
                self.assertEqual([m.local_date for m in await lib.moments()], ["2019-05-02", "2019-05-01"])
                self.assertEqual(len(await lib.albums()), 2)
                self.assertEqual((await lib.moment_lists("month"))[0].id, "mo_2019-05")
                self.assertIn("s_allPhotos", [s.id for s in await lib.smart_albums()])
                self.assertEqual(len(await lib.folders()), 1)
                # Image requests on one connection render side by side; answers matched by id.
                images = await asyncio.gather(*(lib.request_image(i, 50 + n, 50) for n, i in enumerate(result.ids)))
                self.assertEqual([im.asset for im in images], result.ids)
                with self.assertRaises(photod.NotFound):
                    await lib.collection_assets("m_18000101")
                w = await lib.set_favorite(result.ids[0])
                self.assertEqual(w.updated, [result.ids[0]])
                details = await result.change_details()
                self.assertEqual(details.changed_indexes, [0])
                album = (await lib.create_album("Async")).id
                await lib.add_to_album(album, result.ids[:2])
                self.assertEqual((await lib.collection_assets(album)).ids, result.ids[:2])
                await lib.move_album(album, None)
                await lib.set_keywords(result.ids[1], "aio", ["k"])
                self.assertEqual((await lib.asset(result.ids[1])).keywords, ["k"])
        self.run_async(body())

    def test_changes_across_a_restart(self):
        async def body():
            async with photod.aio.Library(str(self.daemon.socket)) as lib:
                changes = lib.changes()
                start = await changes.subscribe()
                make_jpeg(self.root / "2019-05-02" / "IMG_aio.jpg", "2019:05:02 20:00:00")
                first = await changes.__anext__()
                self.assertEqual(first.token, start + 1)
                self.assertEqual(len(first.assets_inserted), 1)
                loop = asyncio.get_running_loop()
                await loop.run_in_executor(None, self.daemon.restart)
                await lib.set_favorite(first.assets_inserted[0])   # the library reconnects
                await loop.run_in_executor(None, lambda: self.daemon.restart(signal.SIGKILL))
                await lib.set_hidden(first.assets_inserted[0])
                got = [(await changes.__anext__()).token, (await changes.__anext__()).token]
                # The journal's next two change sets (the kill makes the numbers jump: none is used twice).
                journal = (await lib.changes_since(start + 1))[0]
                self.assertEqual(got, [c.token for c in journal][:2])
                self.assertEqual(got[0], start + 2)
                last = got[1]
                # A wait cut short by wait_for loses nothing.
                for _ in range(3):
                    with self.assertRaises(asyncio.TimeoutError):
                        await asyncio.wait_for(changes.__anext__(), 0.05)
                await lib.set_favorite(first.assets_inserted[0], False)
                for _ in range(200):
                    try:
                        got = await asyncio.wait_for(changes.__anext__(), 0.05)
                        break
                    except asyncio.TimeoutError:
                        continue
                self.assertEqual(got.token, (await lib.changes_since(last))[0][0].token)
                await changes.close()
                with self.assertRaises(photod.TokenExpired):
                    await lib.changes(since=10 ** 9).__anext__()
        self.run_async(body())


if __name__ == "__main__":
    unittest.main()
