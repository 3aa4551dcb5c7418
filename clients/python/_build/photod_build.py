"""The package's build backend (PEP 517, PEP 660), standard library only: ``pip install
./clients/python`` then needs nothing from an index — not setuptools, not wheel — so it works
the same offline, on a home server, as in CI. It packs ``photod/`` (Python files, ``py.typed``,
the gallery's static files) into a wheel, and the tree into an sdist."""
from __future__ import annotations

import base64
import hashlib
import io
import os
import tarfile
import zipfile
from pathlib import Path
from typing import Dict, List, Optional

ROOT = Path(__file__).resolve().parent.parent
NAME, VERSION = "photod", "0.1.0"
TAG = "py3-none-any"
DIST = f"{NAME}-{VERSION}"
SUMMARY = "Client library for photod (the Linux photo and video library daemon), and a web gallery built on it"
SUFFIXES = {".py", ".typed", ".html", ".js", ".css", ".svg"}


def _metadata() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8") if (ROOT / "README.md").exists() else ""
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {VERSION}\nSummary: {SUMMARY}\nRequires-Python: >=3.9\n"
            "Classifier: Programming Language :: Python :: 3\nClassifier: Operating System :: POSIX :: Linux\n"
            "Classifier: Typing :: Typed\nDescription-Content-Type: text/markdown\n\n" + readme)


def _dist_info() -> Dict[str, str]:
    return {
        "METADATA": _metadata(),
        "WHEEL": f"Wheel-Version: 1.0\nGenerator: photod_build\nRoot-Is-Purelib: true\nTag: {TAG}\n",
        "entry_points.txt": "[console_scripts]\nphotod-gallery = photod.gallery.__main__:main\n",
        "top_level.txt": f"{NAME}\n",
    }


def _sources() -> List[Path]:
    return sorted(p for p in (ROOT / NAME).rglob("*") if p.is_file() and p.suffix in SUFFIXES
                  and "__pycache__" not in p.parts)


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _write_wheel(directory: str, files: Dict[str, bytes]) -> str:
    info = f"{DIST}.dist-info"
    for name, text in _dist_info().items():
        files[f"{info}/{name}"] = text.encode()
    record = [_record_line(n, d) for n, d in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = f"{DIST}-{TAG}.whl"
    with zipfile.ZipFile(os.path.join(directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            entry = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(entry, data)
    return wheel


def get_requires_for_build_wheel(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[dict] = None) -> List[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Optional[dict] = None) -> str:
    info = Path(metadata_directory) / f"{DIST}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    for name, text in _dist_info().items():
        (info / name).write_text(text, encoding="utf-8")
    return info.name


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory: str, config_settings: Optional[dict] = None,
                metadata_directory: Optional[str] = None) -> str:
    return _write_wheel(wheel_directory, {p.relative_to(ROOT).as_posix(): p.read_bytes() for p in _sources()})


def build_editable(wheel_directory: str, config_settings: Optional[dict] = None,
                   metadata_directory: Optional[str] = None) -> str:
    # `pip install -e`: a .pth file puts this checkout on sys.path.
    return _write_wheel(wheel_directory, {f"_{NAME}_editable.pth": (str(ROOT) + "\n").encode()})


def build_sdist(sdist_directory: str, config_settings: Optional[dict] = None) -> str:
    name = f"{DIST}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        paths = [ROOT / "pyproject.toml", ROOT / "README.md", ROOT / "_build" / "photod_build.py", *_sources()]
        for p in paths:
            if p.exists():
                tar.add(p, arcname=f"{DIST}/{p.relative_to(ROOT).as_posix()}", recursive=False)
        pkg_info = _metadata().encode()
        entry = tarfile.TarInfo(f"{DIST}/PKG-INFO")
        entry.size = len(pkg_info)
        tar.addfile(entry, io.BytesIO(pkg_info))
    return name
