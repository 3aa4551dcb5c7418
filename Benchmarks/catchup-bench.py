#!/usr/bin/env python3
"""photod's change journal caught up from far behind (issue 15, "the change journal's catch-up
(changes.since an old token, 100,000 change sets behind) streams at the socket's pace with
bounded memory"). Python 3 standard library only.

  python3 Benchmarks/catchup-bench.py               # 100,000 change sets behind
  python3 Benchmarks/catchup-bench.py --quick       # 10,000
  python3 Benchmarks/catchup-bench.py --change-sets 50000 --slow-seconds 20 --no-build

It indexes a small library (200 JPEGs of ../shared/bench/make-corpus.py), stops photod, and appends N change sets to
its journal the way the writer records them (each names 1-50 of the library's assets as updated
and three collections, `changes.time` rising by a millisecond each), then starts photod again
(`--journal-max-changes` above N: nothing is pruned) and measures, one client after another:

  1  a fast reader: `changes.subscribe` since the token before the first, reading every
     notification as it comes: change sets per second and MB per second until the last token;
     photod's VmRSS before, its peak (VmHWM, sampled every 0.05 s) and after.
  2  a slow reader: the same subscription read at --slow-rate bytes per second for
     --slow-seconds, then not at all for as long: photod's VmRSS over the whole time (it must not
     hold the journal in memory for a client that does not read), and whether the subscription
     then goes on where it stopped (every token once, in order, to the last).
  3  `changes.since` paged by 1,000 from the same token, one request after another: change sets
     per second.

Prints the figures and appends one JSON object to WORK/catchup-results.jsonl. Exit status 1 when
a step fails (a token missed or repeated, photod gone).
"""
import argparse
import json
import os
import random
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import rpc_client  # noqa: E402


def log(*a):
    print(*a, flush=True)


class BenchError(Exception):
    pass


def kb(pid, key):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Photod:
    def __init__(self, a, lib, state):
        self.a, self.lib, self.state = a, lib, state
        self.sock = os.path.join(state, "s")
        self.db = os.path.join(state, "photod.db")
        self.p = None

    def start(self):
        if os.path.lexists(self.sock):
            os.unlink(self.sock)
        self.logf = open(os.path.join(self.state, "photod.log"), "ab")
        self.p = subprocess.Popen([self.a.photod, "--library", self.lib, "--database", self.db, "--socket", self.sock,
                                   "--cache-dir", os.path.join(self.state, "cache"), "--timezone", "UTC",
                                   "--journal-max-changes", str(self.a.change_sets * 2), "--log-level", "notice"],
                                  stdin=subprocess.DEVNULL, stdout=self.logf, stderr=self.logf)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.p.poll() is not None:
                raise BenchError("photod exited with %s" % self.p.returncode)
            try:
                c = rpc_client.Client(self.sock)
                st = c.call("library.status")
                if st.get("state") == "idle" and st.get("lastScan"):
                    return c
                c.sock.close()
            except OSError:
                pass
            time.sleep(0.1)
        raise BenchError("photod did not become idle within 60 s")

    def stop(self):
        self.p.terminate()
        if self.p.wait(timeout=60) != 0:
            raise BenchError("photod exited with %d after SIGTERM" % self.p.returncode)
        self.logf.close()


def fill_journal(db, n, seed):
    """Appends n change sets naming the library's assets, as the writer records them."""
    con = sqlite3.connect(db)
    ids = [r[0] for r in con.execute("SELECT id FROM assets")]
    moments = [r[0] for r in con.execute("SELECT 'm_' || CAST(day AS TEXT) FROM moments")] or ["m_1"]
    t = con.execute("SELECT max(time) FROM changes").fetchone()[0] or int(time.time() * 1000)
    g = random.Random(seed)
    rows = []
    for i in range(n):
        t += 1
        updated = ",".join(g.sample(ids, g.randint(1, min(50, len(ids)))))
        rows.append((t, "", updated, "", "", ",".join([g.choice(moments), "s_allPhotos", "s_favorites"]), ""))
    con.executemany("INSERT INTO changes (time, assets_inserted, assets_updated, assets_deleted, collections_inserted, "
                    "collections_updated, collections_deleted) VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    con.commit()
    first, last = con.execute("SELECT min(token), max(token) FROM changes").fetchone()
    con.close()
    return first, last


def subscribe(path, since):
    c = rpc_client.Client(path)
    n = c.send("changes.subscribe", {"since": since})
    while True:
        m = c.read()
        if m.get("id") == n:
            if "error" in m:
                raise BenchError("changes.subscribe: %s" % m["error"])
            return c


def fast_reader(d, since, last):
    rss0 = kb(d.p.pid, "VmRSS")
    c = subscribe(d.sock, since)
    t0 = time.monotonic()
    expect, count, nbytes, peak, next_sample = since + 1, 0, 0, rss0, 0.0
    while expect <= last:
        line = c.file.readline()
        if not line:
            raise BenchError("photod closed the connection at token %d" % expect)
        nbytes += len(line)
        m = json.loads(line)
        if m.get("method") != "changes":
            continue
        tok = m["params"]["token"]
        if tok != expect:
            raise BenchError("fast reader: token %d where %d was due" % (tok, expect))
        expect += 1
        count += 1
        now = time.monotonic()
        if now >= next_sample:
            peak = max(peak, kb(d.p.pid, "VmRSS"))
            next_sample = now + 0.05
    secs = time.monotonic() - t0
    c.sock.close()
    return {"change_sets": count, "seconds": round(secs, 3), "per_s": round(count / secs), "mb_per_s": round(nbytes / secs / 1e6, 2),
            "rss_before_mb": round(rss0 / 1024, 1), "rss_peak_mb": round(peak / 1024, 1),
            "rss_after_mb": round(kb(d.p.pid, "VmRSS") / 1024, 1)}


def slow_reader(d, since, last, rate, seconds):
    rss0 = kb(d.p.pid, "VmRSS")
    c = subscribe(d.sock, since)
    c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    samples, expect, buf = [], since + 1, b""
    t0 = time.monotonic()

    def take(block):
        nonlocal expect, buf
        buf += block
        *lines, buf = buf.split(b"\n")
        for line in lines:
            m = json.loads(line)
            if m.get("method") == "changes":
                if m["params"]["token"] != expect:
                    raise BenchError("slow reader: token %d where %d was due" % (m["params"]["token"], expect))
                expect += 1

    # Reading slowly, then not at all (through the client's buffer: it may hold the first lines).
    while time.monotonic() - t0 < 2 * seconds:
        t = time.monotonic() - t0
        if t < seconds:
            take(c.file.read1(max(1, int(rate / 20))))
        samples.append(kb(d.p.pid, "VmRSS"))
        time.sleep(0.05)
    at_pause = expect
    # Then to the end, as fast as it comes.
    c.sock.settimeout(30)
    while expect <= last:
        block = c.file.read1(1 << 20)
        if not block:
            raise BenchError("photod closed the connection at token %d" % expect)
        take(block)
    c.sock.close()
    return {"read_until_token": at_pause - 1, "rss_before_mb": round(rss0 / 1024, 1),
            "rss_max_mb": round(max(samples) / 1024, 1), "rss_min_mb": round(min(samples) / 1024, 1),
            "finished_in_order": True}


def since_pages(d, since, last):
    c = rpc_client.Client(d.sock)
    t0 = time.monotonic()
    token, count = since, 0
    while token < last:
        r = c.call("changes.since", {"since": token, "limit": 1000})
        got = r["changes"]
        if not got:
            raise BenchError("changes.since %d returned nothing before the last token %d" % (token, last))
        if got[0]["token"] != token + 1:
            raise BenchError("changes.since %d began at %d" % (token, got[0]["token"]))
        token = got[-1]["token"]
        count += len(got)
    secs = time.monotonic() - t0
    c.sock.close()
    return {"change_sets": count, "seconds": round(secs, 3), "per_s": round(count / secs)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--change-sets", type=int, help="change sets behind (default 100000; --quick 10000)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--slow-rate", type=int, default=256 * 1024, help="bytes/s of the slow reader (default %(default)s)")
    ap.add_argument("--slow-seconds", type=float, default=10, help="seconds the slow reader reads, and then pauses (default %(default)s)")
    ap.add_argument("--workdir", default="/tmp/photod-bench")
    ap.add_argument("--shared", default=os.path.join(os.path.dirname(REPO), "shared", "bench"),
                    help="where make-corpus.py is (default: %(default)s)")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--debug", action="store_true", help="use .build/debug/photod")
    a = ap.parse_args()
    a.change_sets = a.change_sets or (10000 if a.quick else 100000)
    a.photod = os.path.join(REPO, ".build", "debug" if a.debug else "release", "photod")
    if not a.no_build and not a.debug:
        subprocess.run(["swift", "build", "-c", "release", "--product", "photod"], cwd=REPO, check=True,
                       stdout=subprocess.DEVNULL)
    os.makedirs(a.workdir, exist_ok=True)
    state = tempfile.mkdtemp(prefix="catchup-", dir=a.workdir)
    lib = os.path.join(state, "lib")
    subprocess.run([sys.executable, os.path.join(a.shared, "make-corpus.py"), lib, "200", "--seed", "3", "--size", "8k"],
                   check=True, stdout=subprocess.DEVNULL)
    d = Photod(a, lib, state)
    result = {"commit": subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True,
                                       text=True).stdout.strip(), "change_sets": a.change_sets,
              "loadavg_start": os.getloadavg(), "photod": a.photod}
    try:
        d.start().sock.close()
        d.stop()
        t = time.monotonic()
        first, last = fill_journal(d.db, a.change_sets, 7)
        log("journal: %d change sets appended in %.1f s (tokens %d-%d)" % (a.change_sets, time.monotonic() - t, first, last))
        d.start().sock.close()
        since = last - a.change_sets
        result["fast"] = fast_reader(d, since, last)
        log("1 fast reader: %(change_sets)d change sets in %(seconds).2f s: %(per_s)d/s, %(mb_per_s).1f MB/s; "
            "VmRSS %(rss_before_mb).1f MB before, peak %(rss_peak_mb).1f, after %(rss_after_mb).1f" % result["fast"])
        result["slow"] = slow_reader(d, since, last, a.slow_rate, a.slow_seconds)
        log("2 slow reader (%d B/s for %.0f s, then a pause as long): up to token %d; VmRSS %.1f MB before, %.1f-%.1f "
            "meanwhile; then every token in order to the last" % (
                a.slow_rate, a.slow_seconds, result["slow"]["read_until_token"], result["slow"]["rss_before_mb"],
                result["slow"]["rss_min_mb"], result["slow"]["rss_max_mb"]))
        result["since"] = since_pages(d, since, last)
        log("3 changes.since, pages of 1,000: %(change_sets)d change sets in %(seconds).2f s: %(per_s)d/s" % result["since"])
        d.stop()
    except (BenchError, OSError, ValueError) as e:
        result["failure"] = str(e)
        if d.p is not None and d.p.poll() is None:
            d.p.kill()
    result["loadavg_end"] = os.getloadavg()
    with open(os.path.join(a.workdir, "catchup-results.jsonl"), "a") as f:
        f.write(json.dumps(result) + "\n")
    if "failure" in result:
        log("FAILED: %s (kept %s)" % (result["failure"], state))
        sys.exit(1)
    shutil.rmtree(state, ignore_errors=True)
    log("commit %s, load average %.2f at the start, %.2f at the end" % (result["commit"], result["loadavg_start"][0],
                                                                       result["loadavg_end"][0]))


if __name__ == "__main__":
    main()
