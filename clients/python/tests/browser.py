"""A real browser for the gallery's tests and benchmark: Debian's headless ``chromium`` driven over
the DevTools protocol (a WebSocket, spoken here with the standard library: no Selenium, no driver).
"""
from __future__ import annotations

import atexit
import base64
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request
import zlib
from typing import Any, Dict, List, Tuple

CHROMIUM = next((p for p in (os.environ.get("PHOTOD_CHROMIUM"), shutil.which("chromium"), shutil.which("chromium-browser"),
                             shutil.which("google-chrome")) if p), None)


class WebSocket:
    """Just enough of RFC 6455 for the DevTools protocol: text frames, masked from the client."""

    def __init__(self, url: str, timeout: float = 30) -> None:
        m = re.fullmatch(r"ws://([^/:]+):(\d+)(/.*)", url)
        if not m:
            raise ValueError(f"not a ws:// URL: {url}")
        self.sock = socket.create_connection((m.group(1), int(m.group(2))), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {m.group(3)} HTTP/1.1\r\nHost: {m.group(1)}:{m.group(2)}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("the browser closed the connection during the handshake")
            head += chunk
        head, self.buffer = head.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise ConnectionError(f"handshake refused: {head[:200]!r}")

    def send(self, text: str) -> None:
        data = text.encode()
        header = bytes([0x81])
        n = len(data)
        header += bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n) if n < 65536 else \
            bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _read(self, n: int) -> bytes:
        while len(self.buffer) < n:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("the browser closed the connection")
            self.buffer += chunk
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def receive(self) -> str:
        message = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            payload = self._read(n)
            opcode = b0 & 0x0F
            if opcode == 0x8:
                raise ConnectionError("the browser closed the WebSocket")
            if opcode == 0x9:          # ping
                continue
            message += payload
            if b0 & 0x80:
                return message.decode()

    def close(self) -> None:
        self.sock.close()


class Browser:
    """Headless chromium with one page: ``goto``, ``js`` (an expression, awaited), ``wait``,
    ``screenshot``."""

    def __init__(self, width: int = 1280, height: int = 900) -> None:
        if CHROMIUM is None:
            raise RuntimeError("no chromium")
        self.profile = tempfile.mkdtemp(prefix="photod-chromium-")
        args = [CHROMIUM, "--headless=new", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
                "--disable-extensions", "--disable-background-networking", "--disable-sync", "--mute-audio",
                "--disable-dev-shm-usage", f"--user-data-dir={self.profile}", "--remote-debugging-port=0",
                "--remote-allow-origins=*", f"--window-size={width},{height}", "about:blank"]
        if os.getuid() == 0:
            args.insert(1, "--no-sandbox")     # chromium refuses to run as root with its sandbox
        # Its own process group: closing (or this process exiting) ends every chromium process.
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        atexit.register(self.close)
        try:
            port = self._port()
        except BaseException:
            self.close()
            raise
        targets = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30).read())
        page = next(t for t in targets if t.get("type") == "page")
        self.ws = WebSocket(page["webSocketDebuggerUrl"])
        self.next_id = 0
        self.events: List[Dict[str, Any]] = []
        self.command("Page.enable")
        self.command("Runtime.enable")
        self.command("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def _port(self) -> int:
        deadline = time.monotonic() + 60
        assert self.process.stderr is not None
        seen = b""
        while time.monotonic() < deadline:
            line = self.process.stderr.readline()
            if not line:
                if self.process.poll() is not None:
                    raise RuntimeError(f"chromium exited: {seen.decode(errors='replace')[-2000:]}")
                continue
            seen += line
            m = re.search(rb"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            if m:
                # Keep draining its messages so that it never blocks on a full pipe.
                import threading
                threading.Thread(target=lambda: [None for _ in iter(self.process.stderr.readline, b"")],
                                 daemon=True).start()
                return int(m.group(1))
        raise RuntimeError("chromium did not open its DevTools port")

    def command(self, method: str, **params: Any) -> Dict[str, Any]:
        self.next_id += 1
        rid = self.next_id
        self.ws.send(json.dumps({"id": rid, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.receive())
            if message.get("id") == rid:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)
            del self.events[:-500]

    def js(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises awaited)."""
        result = self.command("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}: {result['exceptionDetails'].get('exception', {}).get('description')}")
        return result.get("result", {}).get("value")

    def goto(self, url: str, timeout: float = 30) -> None:
        self.command("Page.navigate", url=url)
        self.wait("document.readyState === 'complete'", timeout)

    def wait(self, expression: str, timeout: float = 20, every: float = 0.05) -> Any:
        """Polls an expression until it is truthy; returns its value."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.js(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout} s waiting for: {expression}")
            time.sleep(every)

    def screenshot(self, path: str) -> bytes:
        data = base64.b64decode(self.command("Page.captureScreenshot", format="png")["data"])
        with open(path, "wb") as f:
            f.write(data)
        return data

    def close(self) -> None:
        if getattr(self, "closed", False):
            return
        self.closed = True
        if hasattr(self, "ws"):
            self.ws.close()
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def png_pixels(data: bytes) -> Tuple[int, int, List[bytes]]:
    """Decodes an 8-bit RGB or RGBA PNG (what chromium writes) into rows of RGB bytes."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, chunks, width = 8, b"", 0
    height = color = 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color in (2, 6), f"PNG depth {depth} color {color}"
        elif kind == b"IDAT":
            chunks += body
        pos += 12 + n
    channels = 3 if color == 2 else 4
    raw = zlib.decompress(chunks)
    stride = width * channels
    rows: List[bytes] = []
    previous = bytearray(stride)
    i = 0
    for _ in range(height):
        f = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - channels] if x >= channels else 0
            b = previous[x]
            c = previous[x - channels] if x >= channels else 0
            if f == 1:
                line[x] = (line[x] + a) & 0xFF
            elif f == 2:
                line[x] = (line[x] + b) & 0xFF
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 0xFF
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        previous = line
        rows.append(bytes(line) if channels == 3 else bytes(v for k, v in enumerate(line) if k % 4 != 3))
    return width, height, rows


def colourfulness(data: bytes, step: int = 4) -> Tuple[int, float]:
    """How much of a screenshot is not its background: (distinct colours, coarsely; the fraction of
    sampled pixels that differ from the most common colour)."""
    width, height, rows = png_pixels(data)
    counts: Dict[Tuple[int, int, int], int] = {}
    for y in range(0, height, step):
        row = rows[y]
        for x in range(0, width, step):
            key = (row[3 * x] >> 4, row[3 * x + 1] >> 4, row[3 * x + 2] >> 4)
            counts[key] = counts.get(key, 0) + 1
    total = sum(counts.values())
    return len(counts), 1 - max(counts.values()) / total
