"""``pip install ./clients/python`` in a fresh virtual environment, then the package from there."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
PACKAGE = HERE.parent


def venv_available() -> bool:
    import importlib.util
    return all(importlib.util.find_spec(m) is not None for m in ("venv", "ensurepip"))


@unittest.skipUnless(venv_available(), "python3-venv is not installed (scripts/install-deps --tests installs it)")
class Install(unittest.TestCase):
    def test_pip_install_in_a_fresh_venv(self):
        where = Path(tempfile.mkdtemp(prefix="photod-py-venv-"))
        try:
            subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
            python = where / "bin" / "python"
            # The package builds with its own backend: no index is needed (nor used).
            build = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                                    "--no-index", str(PACKAGE)], capture_output=True, text=True)
            self.assertEqual(build.returncode, 0, build.stderr)
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            shown = subprocess.run([str(python), "-m", "photod", "--help"], capture_output=True, text=True, cwd=where, env=env)
            self.assertEqual(shown.returncode, 0, shown.stderr)
            self.assertIn("usage: python3 -m photod", shown.stdout)
            where_from = subprocess.run([str(python), "-c", "import photod, photod.aio, photod.gallery; print(photod.__file__)"],
                                        capture_output=True, text=True, cwd=where, env=env)
            self.assertEqual(where_from.returncode, 0, where_from.stderr)
            self.assertTrue(where_from.stdout.startswith(str(where)), where_from.stdout)
            gallery = subprocess.run([str(python), "-m", "photod.gallery", "--help"], capture_output=True, text=True,
                                     cwd=where, env=env)
            self.assertEqual(gallery.returncode, 0, gallery.stderr)
            self.assertIn("--port", gallery.stdout)
            installed = list((where / "lib").glob("python3*/site-packages/photod/gallery/static/*"))
            self.assertTrue(installed, "the gallery's static files were not installed")
            self.assertTrue((where / "bin" / "photod-gallery").exists(), "no photod-gallery command")
        finally:
            shutil.rmtree(where, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
