"""The benchmarks' JSON-RPC client for photod's socket (Python standard library only)."""
import json
import socket
import time


class Client:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.file = self.sock.makefile("rwb")
        self.next = 1

    def request(self, method, params=None):
        """(its id, the line) of a new request, not sent yet."""
        n = self.next
        self.next += 1
        req = {"jsonrpc": "2.0", "id": n, "method": method}
        if params is not None:
            req["params"] = params
        return n, json.dumps(req).encode() + b"\n"

    def send(self, method, params=None):
        """Sends a request; returns its id."""
        n, line = self.request(method, params)
        self.file.write(line)
        self.file.flush()
        return n

    def read(self):
        """The next message: a response or a notification."""
        return json.loads(self.file.readline())

    def raw(self, method, params=None):
        """Sends a request; returns (seconds until the next whole line was read, that line)."""
        _, line = self.request(method, params)
        t = time.perf_counter()
        self.file.write(line)
        self.file.flush()
        resp = self.file.readline()
        return time.perf_counter() - t, resp

    def call(self, method, params=None):
        """The result of a request (notifications before its answer are skipped)."""
        n = self.send(method, params)
        while True:
            m = self.read()
            if m.get("id") == n:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m["result"]
