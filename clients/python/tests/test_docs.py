"""docs/PYTHON.md's examples, run as printed against a real photod."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

from support import HERE, REPO, Daemon, make_jpeg, make_library, needs_photod

DOC = (REPO / "docs" / "PYTHON.md").read_text()


def example(name: str) -> str:
    m = re.search(rf"<!-- example: {name} -->\n```python\n(.*?)```", DOC, re.S)
    assert m, f"no example {name} in docs/PYTHON.md"
    return m.group(1)


@needs_photod
class Examples(unittest.TestCase):
    def setUp(self):
        self.root = Path(tempfile.mkdtemp(prefix="photod-py-doc-"))
        make_library(self.root, days=1, per_day=3)
        self.daemon = Daemon(self.root)
        self.env = dict(os.environ, PYTHONPATH=str(HERE.parent), PHOTOD_SOCKET=str(self.daemon.socket))

    def tearDown(self):
        self.daemon.close()
        shutil.rmtree(self.root, ignore_errors=True)

    def run_example(self, name: str) -> subprocess.Popen:
        script = Path(self.daemon.state) / f"{name}.py"
        script.write_text(example(name))
        return subprocess.Popen([sys.executable, str(script)], env=self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def connected(self, process: subprocess.Popen, sockets: int) -> None:
        """Waits until the example holds ``sockets`` connections (it subscribes from now: what comes
        before is not its to see)."""
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                held = sum(os.readlink(f"/proc/{process.pid}/fd/{fd}").startswith("socket:")
                           for fd in os.listdir(f"/proc/{process.pid}/fd"))
            except OSError:
                held = 0
            if held >= sockets:
                time.sleep(0.3)     # its request on the way
                return
            time.sleep(0.02)
        self.fail(f"the example did not connect: {process.stderr.read() if process.poll() is not None else ''}")

    def read_line(self, process: subprocess.Popen, timeout: float = 20) -> str:
        import selectors
        with selectors.DefaultSelector() as sel:
            sel.register(process.stdout, selectors.EVENT_READ)
            if not sel.select(timeout):
                process.kill()
                self.fail(f"the example printed nothing in {timeout} s: {process.stderr.read()}")
        return process.stdout.readline()

    def test_tagger(self):
        tagger = self.run_example("tagger")
        try:
            self.connected(tagger, 1)
            with self.daemon.library_client() as lib:
                make_jpeg(self.root / "new" / "tall.jpg", "2020:01:01 10:00:00", width=200, height=300)
                line = self.read_line(tagger)
                asset_id, path, shape = line.split()
                self.assertEqual(shape, "portrait")
                self.assertTrue(Path(path).exists())
                self.assertIn("portrait", lib.asset(asset_id).keywords)
        finally:
            tagger.kill()
            tagger.wait()
            tagger.stdout.close()
            tagger.stderr.close()

    def test_change_details(self):
        follower = self.run_example("details")
        try:
            self.connected(follower, 2)     # its fetch's, then its subscription's
            with self.daemon.library_client() as lib:
                ids = lib.assets(sort="localDateTime").ids
                lib.set_favorite(ids[1])
                line = self.read_line(follower)
                self.assertIn(f"inserted ['{ids[1]}']", line)
                lib.set_favorite(ids[0])
                self.assertIn(f"inserted ['{ids[0]}']", self.read_line(follower))
                lib.set_favorite(ids[1], False)
                self.assertIn(f"removed ['{ids[1]}']", self.read_line(follower))
        finally:
            follower.kill()
            follower.wait()
            follower.stdout.close()
            follower.stderr.close()


if __name__ == "__main__":
    unittest.main()
