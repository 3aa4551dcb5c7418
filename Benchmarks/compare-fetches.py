#!/usr/bin/env python3
"""Collection fetches of two photod builds side by side, on the same library.

  python3 Benchmarks/compare-fetches.py --library LIB \\
      --before OLD/.build/release/photod:OLD.db --after .build/release/photod:NEW.db [--rounds 3] [--runs 30]

Each side is a photod binary and the database it indexed the library into (index it first:
photod --library LIB --database DB, until idle). Per round, before then after: photod started
on its database, idle, then 12 s (builds before issue 29 made their fetch catalog in the
background after a start), then each request --runs times after one unmeasured call, timed from writing the
request to reading the whole response line; the round's median per request. Prints one line
per request with every round's median for each side. Python 3 standard library only.

--paired: both sides run at once (give each its own copy of the database) and answer each request
in turn, --runs pairs per request, the order alternating (before after, after before, ...); per
request, each side's median and the median of the pairs' ratios after ÷ before. For a host whose
speed moves in phases of seconds (a VM's CPU given and taken by the hypervisor): a pair shares
its phase, two rounds minutes apart may not.
"""
import contextlib
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rpc_client import Client  # noqa: E402


def requests(largest_album):
    out = [("smartAlbums.fetch", None), ("momentLists.fetch", None), ("albums.fetch", {"limit": 100}),
           ("moments.fetch", {"limit": 100}), ("collectionLists.fetch", None), ("userAlbums.fetch", None)]
    if largest_album:
        out += [("collections.assets", {"id": largest_album, "limit": 100}),
                ("collections.assets", {"id": largest_album, "limit": 100, "offset": 800})]
    return out


def label(method, params):
    return method + (" @%d" % params["offset"] if params and "offset" in params else "")


def wait_idle(sock, proc, timeout=600):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SystemExit("photod exited %d" % proc.returncode)
        try:
            c = Client(sock)
            if c.call("library.status").get("state") == "idle":
                return c
            c.sock.close()
        except OSError:
            pass
        time.sleep(0.5)
    raise SystemExit("photod did not become idle")


def largest_album(c):
    best, offset = None, 0
    while offset is not None:
        page = c.call("albums.fetch", {"limit": 1000, "offset": offset})
        for a in page["albums"]:
            if best is None or a["assetCount"] > best["assetCount"]:
                best = a
        offset = page["nextOffset"]
    return best["id"] if best else None


@contextlib.contextmanager
def running(binary, database, library):
    """A client of photod started on its database and idle, then 12 s (see above)."""
    with tempfile.TemporaryDirectory() as tmp:
        sock = os.path.join(tmp, "s.sock")
        proc = subprocess.Popen([binary, "--library", library, "--database", database, "--socket", sock,
                                 "--log-level", "warning"])
        try:
            c = wait_idle(sock, proc)
            time.sleep(12)
            yield c
        finally:
            proc.terminate()
            proc.wait()


def measure(binary, database, library, runs, album):
    with running(binary, database, library) as c:
        album = album or largest_album(c)
        out = {}
        for method, params in requests(album):
            c.raw(method, params)
            out[label(method, params)] = statistics.median(c.raw(method, params)[0] * 1000 for _ in range(runs))
        return out, album


def paired(sides, library, runs):
    (_, before_bin, before_db), (_, after_bin, after_db) = sides
    with running(before_bin, before_db, library) as before, running(after_bin, after_db, library) as after:
        print("pairs per request: %d; load average %s" % (runs, open("/proc/loadavg").read().split()[0]))
        print("%-26s %-12s %-12s %s" % ("request", "before ms", "after ms", "after ÷ before (median of pairs)"))
        for method, params in requests(largest_album(after)):
            before.raw(method, params)
            after.raw(method, params)
            b, a = [], []
            for k in range(runs):
                order = [(before, b), (after, a)] if k % 2 == 0 else [(after, a), (before, b)]
                for client, times in order:
                    times.append(client.raw(method, params)[0] * 1000)
            print("%-26s %-12.2f %-12.2f %.3f" % (label(method, params), statistics.median(b), statistics.median(a),
                                                 statistics.median(y / x for x, y in zip(b, a))))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--library", required=True)
    ap.add_argument("--before", required=True, help="PHOTOD:DATABASE")
    ap.add_argument("--after", required=True, help="PHOTOD:DATABASE")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--paired", action="store_true", help="both sides at once, requests in turn (above)")
    a = ap.parse_args()
    sides = [("before",) + tuple(a.before.split(":", 1)), ("after",) + tuple(a.after.split(":", 1))]
    if a.paired:
        paired(sides, a.library, a.runs)
        return
    results, album = {}, None
    for _ in range(a.rounds):
        for name, binary, database in sides:
            r, album = measure(binary, database, a.library, a.runs, album)
            for k, v in r.items():
                results.setdefault((k, name), []).append(v)
    print("median ms per round; load average %s" % open("/proc/loadavg").read().split()[0])
    print("%-26s %-24s %-24s" % ("request", "before", "after"))
    for method, params in requests(album):
        k = label(method, params)
        print("%-26s %-24s %-24s" % (k, " / ".join("%.2f" % v for v in results[(k, "before")]),
                                     " / ".join("%.2f" % v for v in results[(k, "after")])))


if __name__ == "__main__":
    main()
