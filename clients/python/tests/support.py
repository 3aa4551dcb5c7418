"""What the Python client's tests share: a real photod on a temporary library, and photos made
for it (ffmpeg's test pattern, with an EXIF block written here)."""
from __future__ import annotations

import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path
from typing import List, Optional, Tuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))          # the package from this checkout, not an installed one

import photod  # noqa: E402

REPO = HERE.parent.parent.parent
PHOTOD = Path(os.environ.get("PHOTOD_BIN") or REPO / ".build" / "debug" / "photod")
FFMPEG = shutil.which("ffmpeg")

#: Why the tests that need photod cannot run here (None when they can).
MISSING = (f"no photod binary at {PHOTOD} (build it: swift build, or set PHOTOD_BIN)" if not PHOTOD.exists() else
           "ffmpeg is not installed (scripts/install-deps --tests installs it)" if FFMPEG is None else None)
needs_photod = unittest.skipIf(MISSING is not None, MISSING or "")


def exif_block(date: str, offset: Optional[str] = None, make: str = "photod", model: str = "Test Camera") -> bytes:
    """An APP1 Exif segment with Make, Model, DateTimeOriginal (``YYYY:MM:DD HH:MM:SS``) and,
    when given, OffsetTimeOriginal (``+09:00``)."""
    def ascii_entry(tag: int, text: str) -> Tuple[int, int, bytes]:
        return tag, 2, text.encode() + b"\0"

    ifd0 = [ascii_entry(0x010F, make), ascii_entry(0x0110, model)]
    exif = [ascii_entry(0x9003, date)] + ([ascii_entry(0x9011, offset)] if offset else [])

    def layout(entries: List[Tuple[int, int, bytes]], start: int, extra: List[Tuple[int, int, int]]) -> bytes:
        count = len(entries) + len(extra)
        data_at = start + 2 + 12 * count + 4
        head, data = b"", b""
        rows = [(tag, kind, len(v), v) for tag, kind, v in entries] + [(t, k, 1, v) for t, k, v in extra]
        for tag, kind, n, value in sorted(rows, key=lambda r: r[0]):
            if isinstance(value, int):
                head += struct.pack("<HHII", tag, kind, n, value)
            elif len(value) <= 4:
                head += struct.pack("<HHI", tag, kind, n) + value.ljust(4, b"\0")
            else:
                head += struct.pack("<HHII", tag, kind, n, data_at + len(data))
                data += value + (b"\0" if len(value) % 2 else b"")
        return struct.pack("<H", count) + head + struct.pack("<I", 0) + data

    first_len = len(layout(ifd0, 8, [(0x8769, 4, 0)]))
    tiff = b"II*\0" + struct.pack("<I", 8) + layout(ifd0, 8, [(0x8769, 4, 8 + first_len)])
    tiff += layout(exif, 8 + first_len, [])
    payload = b"Exif\0\0" + tiff
    return b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload


def make_jpeg(path: Path, date: str, width: int = 320, height: int = 240, hue: int = 0, offset: Optional[str] = None,
              model: str = "Test Camera") -> Path:
    """A JPEG of ffmpeg's test pattern (turned by ``hue`` degrees) taken at ``date`` on the capture clock."""
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = subprocess.run([FFMPEG or "ffmpeg", "-loglevel", "error", "-f", "lavfi", "-i", f"testsrc2=s={width}x{height}",
                          "-vf", f"hue=h={hue}", "-frames:v", "1", "-f", "image2", "-c:v", "mjpeg", "-q:v", "4", "pipe:1"],
                         check=True, capture_output=True).stdout
    assert raw[:2] == b"\xff\xd8", "ffmpeg did not make a JPEG"
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(raw[:2] + exif_block(date, offset, model=model) + raw[2:])
    os.replace(tmp, path)
    return path


def make_library(root: Path, days: int = 3, per_day: int = 4) -> List[Path]:
    """``days`` folders of ``per_day`` photos each, one day apart in May 2019, with varied hues."""
    made = []
    for d in range(days):
        for i in range(per_day):
            made.append(make_jpeg(root / f"2019-05-{d + 1:02d}" / f"IMG_{d}{i:02d}.jpg",
                                  f"2019:05:{d + 1:02d} {9 + i:02d}:{10 + d:02d}:00", hue=(d * per_day + i) * 29,
                                  offset="+02:00"))
    return made


class Daemon:
    """photod on ``library`` with its database, socket and cache in a temporary directory."""

    def __init__(self, library: Path, state: Optional[Path] = None, extra: Optional[List[str]] = None) -> None:
        self.library = library
        self.state = state or Path(tempfile.mkdtemp(prefix="photod-py-"))
        self.socket = self.state / "photod.sock"
        self.extra = extra or []
        self.process: Optional[subprocess.Popen] = None
        self.start()

    def start(self) -> None:
        self.log = open(self.state / "photod.log", "ab")
        self.process = subprocess.Popen(
            [str(PHOTOD), "--library", str(self.library), "--database", str(self.state / "photod.db"),
             "--socket", str(self.socket), "--cache-dir", str(self.state / "cache"), *self.extra],
            stdout=self.log, stderr=subprocess.STDOUT)
        self.wait_until_idle()

    def library_client(self, **kwargs: object) -> "photod.Library":
        return photod.Library(str(self.socket), **kwargs)  # type: ignore[arg-type]

    def wait_until_idle(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"photod exited with {self.process.returncode}: see {self.state / 'photod.log'}")
            try:
                with self.library_client(timeout=10) as lib:
                    if lib.status().is_idle:
                        return
            except (photod.Unreachable, photod.ConnectionLost):
                pass
            if time.monotonic() > deadline:
                raise TimeoutError("photod did not become idle")
            time.sleep(0.05)

    def stop(self, sig: int = signal.SIGTERM) -> int:
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(sig)
        code = self.process.wait(60)
        self.log.close()
        return code

    def restart(self, sig: int = signal.SIGTERM) -> None:
        self.stop(sig)
        self.start()

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.stop()
        shutil.rmtree(self.state, ignore_errors=True)
