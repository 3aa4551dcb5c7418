#!/usr/bin/env python3
"""What a photod costs a box that runs it, from outside the process (issue 32), for several
builds side by side.

  python3 Benchmarks/footprint.py --photod before=/tmp/photod-before --photod after=.build/release/photod \\
      --library LIB --database DB [--rounds 5]

Per build and round, the builds alternating (the order turned each round):
- `photod --version`: wall time from fork to exit, and its peak RSS (`ru_maxrss` of the child);
- a start on LIB with a copy of DB (made once per build, so each keeps its own): from exec to
  `library.status` idle, then the shared libraries mapped (distinct `.so` files in
  /proc/PID/maps), VmRSS, RssAnon, RssFile and VmHWM from /proc/PID/status; then 12 fetches
  (a predicate page of the library, the moments, the folder albums) and VmHWM again; then, with
  no request for 20 s (a photod rests once quiet for ~10 s and says so in `library.status`'s
  `memory.rests`; an older one is just left alone), VmRSS, RssAnon, RssFile and the kernel's
  /proc/PID/smaps_rollup (file-backed pages: clean, shared with the page cache, dropped under
  pressure and read again; anonymous: what the process alone holds).
Prints a table of medians and appends the measurements to --results (JSON lines) with the load.
Python 3 standard library only.
"""
import argparse
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time


def status(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
                out[key] = int(value.split()[0]) / 1024.0
    return out


def rollup(pid):
    out = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("Rss", "Pss", "Shared_Clean", "Private_Clean", "Shared_Dirty", "Private_Dirty", "Anonymous"):
                out[key] = int(value.split()[0]) / 1024.0
    return out


def libraries(pid):
    with open(f"/proc/{pid}/maps") as f:
        return len({line.split()[-1] for line in f if ".so" in line.split()[-1]})


class Photod:
    def __init__(self, binary, library, database, work):
        self.sock = os.path.join(work, "s.sock")
        self.log = open(os.path.join(work, "log"), "a")
        self.t0 = time.monotonic()
        self.p = subprocess.Popen([binary, "--library", library, "--database", database, "--socket", self.sock,
                                   "--cache-dir", os.path.join(work, "cache")],
                                  stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.monotonic() + 60
        while True:
            try:
                s = socket.socket(socket.AF_UNIX)
                s.connect(self.sock)
                break
            except OSError:
                if time.monotonic() > deadline or self.p.poll() is not None:
                    raise SystemExit(f"footprint: {binary} did not open its socket")
                time.sleep(0.005)
        self.f = s.makefile("rwb")
        self.n = 0

    def call(self, method, params=None):
        self.n += 1
        self.f.write(json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params or {}}).encode() + b"\n")
        self.f.flush()
        r = json.loads(self.f.readline())
        if "error" in r:
            raise SystemExit(f"footprint: {method}: {r['error']}")
        return r["result"]

    def wait_idle(self):
        while self.call("library.status").get("state") != "idle":
            time.sleep(0.05)

    def stop(self):
        self.p.terminate()
        self.p.wait()
        self.log.close()


def version_run(binary):
    """Wall time of `binary --version`, ms."""
    t = time.perf_counter()
    subprocess.run([binary, "--version"], check=True, stdout=subprocess.DEVNULL)
    return (time.perf_counter() - t) * 1000


def version_rss(binary):
    """Peak RSS of `binary --version` in MiB, in a child of its own (ru_maxrss is a maximum)."""
    code = ("import resource,subprocess,sys;subprocess.run([sys.argv[1],'--version'],stdout=subprocess.DEVNULL);"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    return int(subprocess.run([sys.executable, "-c", code, binary], capture_output=True, text=True, check=True).stdout) / 1024.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--photod", action="append", required=True, help="NAME=BINARY")
    ap.add_argument("--library", required=True)
    ap.add_argument("--database", required=True, help="an index of LIBRARY (copied per build)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--results", default="")
    a = ap.parse_args()
    builds = [tuple(b.split("=", 1)) for b in a.photod]
    work = tempfile.mkdtemp(prefix="photod-footprint-")
    dbs = {}
    for name, _ in builds:
        d = os.path.join(work, name)
        os.makedirs(d)
        dbs[name] = os.path.join(d, "p.db")
        shutil.copy(a.database, dbs[name])
    rows = {name: [] for name, _ in builds}
    load = os.getloadavg()[0]
    for r in range(a.rounds):
        order = builds[r % len(builds):] + builds[:r % len(builds)]
        for name, binary in order:
            m = {"round": r}
            m["version_ms"] = statistics.median(version_run(binary) for _ in range(5))
            m["version_rss_mib"] = version_rss(binary)
            d = Photod(binary, a.library, dbs[name], os.path.dirname(dbs[name]))
            d.wait_idle()
            m["idle_s"] = time.monotonic() - d.t0
            m["libraries"] = libraries(d.p.pid)
            m["idle"] = status(d.p.pid)
            for _ in range(10):
                d.call("assets.fetch", {"predicate": 'mediaType == "image" AND pixelWidth >= 400', "sort": "-localDateTime",
                                        "limit": 100})
            d.call("moments.fetch", {"limit": 100})
            d.call("albums.fetch", {"limit": 100})
            m["after_fetches"] = status(d.p.pid)
            # At rest: no request for 20 s (the quiet rule is 10 s, checked every 2.5), then one
            # status call; again (up to three times) if the photod says it has not rested yet.
            for _ in range(3):
                time.sleep(20)
                m["rest"], m["rollup"] = status(d.p.pid), rollup(d.p.pid)
                rests = d.call("library.status").get("memory", {}).get("rests")
                if rests is None or rests > 0:
                    break
            d.stop()
            rows[name].append(m)
            print(f"round {r} {name}: {json.dumps(m)}", file=sys.stderr)
    print(f"\nload average at the start {load:.2f}, at the end {os.getloadavg()[0]:.2f}; medians of {a.rounds} rounds\n")
    names = [name for name, _ in builds]
    print("| | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))

    table = [
        ("`photod --version`, ms", lambda m: m["version_ms"], "%.1f"),
        ("`photod --version`, peak RSS MiB", lambda m: m["version_rss_mib"], "%.1f"),
        ("start to idle (restart over the index), s", lambda m: m["idle_s"], "%.2f"),
        ("shared libraries mapped at idle", lambda m: m["libraries"], "%d"),
        ("VmRSS at idle, MiB", lambda m: m["idle"]["VmRSS"], "%.1f"),
        ("RssAnon at idle, MiB", lambda m: m["idle"]["RssAnon"], "%.1f"),
        ("RssFile at idle, MiB", lambda m: m["idle"]["RssFile"], "%.1f"),
        ("VmRSS after 12 fetches, MiB", lambda m: m["after_fetches"]["VmRSS"], "%.1f"),
        ("VmHWM after 12 fetches, MiB", lambda m: m["after_fetches"]["VmHWM"], "%.1f"),
        ("VmRSS at rest after the fetches, MiB", lambda m: m["rest"]["VmRSS"], "%.1f"),
        ("RssAnon at rest, MiB", lambda m: m["rest"]["RssAnon"], "%.1f"),
        ("RssFile at rest, MiB", lambda m: m["rest"]["RssFile"], "%.1f"),
        ("smaps_rollup at rest: Private_Dirty / Shared_Clean + Private_Clean, MiB",
         lambda m: (m["rollup"]["Private_Dirty"], m["rollup"]["Shared_Clean"] + m["rollup"]["Private_Clean"]), "%.1f / %.1f"),
    ]
    for label, f, fmt in table:
        def cell(n):
            values = [f(m) for m in rows[n]]
            if isinstance(values[0], tuple):
                return fmt % tuple(statistics.median(v[i] for v in values) for i in range(len(values[0])))
            return fmt % statistics.median(values)
        print(f"| {label} | " + " | ".join(cell(n) for n in names) + " |")
    if a.results:
        with open(a.results, "a") as out:
            out.write(json.dumps({"when": time.strftime("%Y-%m-%dT%H:%M:%S"), "load": load, "rows": rows}) + "\n")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
