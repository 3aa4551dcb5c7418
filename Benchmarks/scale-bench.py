#!/usr/bin/env python3
"""photod at scale (issue 15, "A million assets on a 2-core box"): the same measurements on a
100,000-file and a 1,000,000-file library, side by side, in one run, against the release build.
Python 3 standard library only.

  python3 Benchmarks/scale-bench.py                 # 100,000 and 1,000,000 files (the 1M corpus: ~3 min
                                                    # and 10 GB to make once)
  python3 Benchmarks/scale-bench.py --quick         # 10,000 and 50,000 files: under a minute plus the build (CI)
  python3 Benchmarks/scale-bench.py --sizes 20000,200000 --runs 50 --rounds 5 --no-build

Corpora: ../shared/bench/make-corpus.py OUT N --seed 11 --size 8k, cached under
WORK/corpus/lib-N-8k-s11 (WORK is --workdir). photod runs as
  photod --library CORPUS --database D --socket S --cache-dir C --timezone UTC --log-level info
from .build/release/photod (built first with `swift build -c release --product photod` unless
--no-build). Per size, in this order (a fresh database each time it says "fresh"):

  1, 2  a read pass over every file (warm cache), then photod on a fresh database: files/s =
        lastScan.files / lastScan.seconds (library.status), wall = exec -> idle with lastScan;
        peak RSS = VmHWM from /proc/PID/status, sampled every 0.1 s and read at idle. After
        every size, --index-rounds - 1 more fresh indexes of each, the sizes alternating: row 1's
        ratio is the median of the rounds' ratios (one index each swung by 0.73-0.97 on this VM;
        a round's two sizes run back to back).
  3     100 assets marked favorite, then assets.fetch with five predicates and sorts (a page of 1,000 from
        the start and one of 100 from the middle of each result): VmRSS after them.
  4     one connection, one request at a time, --runs times each after one unmeasured call:
        smartAlbums.fetch, momentLists.fetch, albums.fetch (100), and assets.fetch of 100 with a
        predicate and a sort; request written -> whole response line read (JSON decoding
        excluded). Median and p90 (nearest rank).
  8     SIGTERM; (.db + .db-wal) bytes / counts.assets.
  5, 7  --rounds restarts on the same database over the unchanged library: exec -> rpc.hello
        answered ("listening"); then at once the page of row 4 (the first predicate fetch after
        a start); exec -> state idle with lastScan; lastScan.readFiles must be 0.
  6     the same after `sync; echo 3 > /proc/sys/vm/drop_caches` (skipped, with the reason, when
        that cannot be written).
  9     smallest size only, --cold-rounds rounds: caches dropped, then photod's initial index of a
        fresh database (lastScan files/s); caches dropped, then
        `find -H CORPUS -type f -print0 | xargs -0 -P 16 -n 64 cat > /dev/null` (files / wall);
        their ratio. The order alternates by round.

Output: a table (row, one column per size, target, verdict) and one JSON object per measurement
appended to WORK/scale-results.jsonl, between a header (commit, sources modified, date, photod
version, load average) and a footer (load average at the end, CPU seconds stolen by the
hypervisor during the run, from /proc/stat's steal field). Each measurement line carries the
steal and load of its own step.

Exit status: 0 when every step ran (missed targets are reported, not failures); 1 when a step
failed (the run stops there, the table shows what was measured) or a restart re-read files.
"""
import argparse
import datetime
import json
import math
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from types import SimpleNamespace

from rpc_client import Client

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


import siblings  # noqa: E402

ib = siblings.load("index-bench.py")
log = ib.log
BenchError = ib.BenchError
TICK = os.sysconf("SC_CLK_TCK")

SEED = 11
FILE_SIZE = "8k"

# The fetches of row 3: (predicate, sort). The corpus's pixel widths are 300-500 at 8 KB per
# file (make-corpus.py scales the camera sizes down to fit), its dates 2015-2024.
FETCHES = [
    ("pixelWidth >= 400", "-localDateTime"),
    ("isFavorite == true", "-localDateTime"),
    ('localDateTime BETWEEN "2018-03-01" AND "2019-06-30"', "pixelWidth,-localDateTime"),
    ('make BEGINSWITH "canon" AND latitude != null', "-pixelWidth,localDateTime"),
    ('mediaType == "image" AND localDate >= "2022-01-01"', "localDateTime"),
]
# The page of rows 4 and 7.
PAGE = {"predicate": 'mediaType == "image" AND pixelWidth >= 400', "sort": "-localDateTime", "limit": 100}
FAVORITES = 100


# ---------------------------------------------------------------- the rows of the table
def _ms(v):
    return "%.2f (p90 %.2f)" % (v["median"], v["p90"])


# key, label, how a value is shown, target (text), test (None: no target). Rows whose key ends
# in "_ratio" or "_growth" are computed from two sizes and shown in the largest size's column.
ROWS = [
    ("index_rate", "1. initial index, files/s (lastScan)", "{:,.0f}", "", None),
    ("index_wall", "1. initial index, wall s (exec → idle)", "{:.2f}", "", None),
    ("index_rate_median", "1. initial index, files/s, median of --index-rounds (sizes alternating)", "{:,.0f}", "", None),
    ("index_rate_ratio", "1. files/s, largest ÷ smallest (median of the rounds' ratios)", "{:.2f}", "≥ 0.85",
     lambda v: v >= 0.85),
    ("index_hwm_mb", "2. peak RSS during the index (VmHWM), MB", "{:.1f}", "≤ 40 MB", lambda v: v <= 40),
    ("index_anon_mb", "2. of it photod's own (RssAnon, sampled peak), MB", "{:.1f}", "", None),
    ("fetch_rss_mb", "3. RSS after predicate fetches (VmRSS), MB", "{:.1f}", "≤ 40 MB", lambda v: v <= 40),
    ("fetch_anon_mb", "3. of it photod's own (RssAnon), MB", "{:.1f}", "", None),
    ("fetch_rss_growth", "3. RSS after fetches, largest − smallest, MB", "{:+.1f}", "≤ +5 MB", lambda v: v <= 5),
    ("lat_smartAlbums", "4. smartAlbums.fetch, ms", _ms, "≤ 5 ms (median)", lambda v: v["median"] <= 5),
    ("lat_momentLists", "4. momentLists.fetch, ms", _ms, "≤ 5 ms (median)", lambda v: v["median"] <= 5),
    ("lat_albums", "4. albums.fetch (limit 100), ms", _ms, "≤ 5 ms (median)", lambda v: v["median"] <= 5),
    ("lat_page", "4. assets.fetch 100, predicate + sort, ms", _ms, "≤ 5 ms (median)", lambda v: v["median"] <= 5),
    ("restart_listen_s", "5. restart: exec → socket answers, s", "{:.3f}", "≤ 0.5 s", lambda v: v <= 0.5),
    ("restart_idle_s", "5. restart: exec → idle with lastScan, s", "{:.3f}", "≤ 2 s", lambda v: v <= 2),
    ("restart_read_files", "5. restart: lastScan.readFiles (worst round)", "{:d}", "= 0", lambda v: v == 0),
    ("cold_restart_listen_s", "6. restart, caches dropped: exec → socket answers, s", "{:.3f}", "≤ 1 s",
     lambda v: v <= 1),
    ("cold_restart_idle_s", "6. restart, caches dropped: exec → idle, s", "{:.3f}", "", None),
    ("first_fetch_ms", "7. first predicate fetch after a start, ms", "{:.1f}", "≤ 50 ms", lambda v: v <= 50),
    ("cold_first_fetch_ms", "7. the same after a start with caches dropped, ms", "{:.1f}", "", None),
    ("db_bytes_per_asset", "8. database (.db + -wal) bytes per asset", "{:,.0f}", "≤ 500", lambda v: v <= 500),
    ("cold_index_rate", "9. caches dropped: photod initial index, files/s", "{:,.0f}", "", None),
    ("cold_read_rate", "9. caches dropped: xargs -P 16 cat, files/s", "{:,.0f}", "", None),
    ("cold_rate_ratio", "9. photod ÷ xargs -P 16 cat (cold)", "{:.2f}", "≥ 0.8", lambda v: v >= 0.8),
]
ROW = {r[0]: r for r in ROWS}


def label(n):
    if n % 1_000_000 == 0:
        return "%dM" % (n // 1_000_000)
    if n % 1000 == 0:
        return "%dk" % (n // 1000)
    return str(n)


def p90(xs):
    xs = sorted(xs)
    return xs[max(0, math.ceil(0.9 * len(xs)) - 1)]


def steal_seconds():
    """CPU time the hypervisor stole from this guest, all CPUs (/proc/stat, the cpu line's 8th value)."""
    with open("/proc/stat") as f:
        return int(f.readline().split()[8]) / TICK


# ---------------------------------------------------------------- results
class Results:
    """Every measurement, kept for the table and appended to the JSON lines file at once."""

    def __init__(self, path, run_id, prov):
        self.values = {}     # (size label, key) -> value
        self.skipped = {}    # (size label, key) -> reason
        self.problems = []   # correctness checks that failed (exit status 1)
        self.run_id, self.prov = run_id, prov
        self.file = open(path, "a")

    def write(self, rec):
        self.file.write(json.dumps(rec) + "\n")
        self.file.flush()

    def put(self, size, key, value, unit, step, **extra):
        self.values[(size, key)] = value
        rec = {"kind": "measurement", "run_id": self.run_id, "commit": self.prov["commit"],
               "ts": datetime.datetime.now().isoformat(timespec="seconds"), "size": size, "key": key,
               "row": ROW[key][1], "value": value, "unit": unit}
        rec.update(step.context())
        rec.update(extra)
        self.write(rec)

    def skip(self, size, key, reason):
        self.skipped[(size, key)] = reason
        self.write({"kind": "skipped", "run_id": self.run_id, "size": size, "key": key, "reason": reason})


class Step:
    """A named step: its start time, load and steal; any error becomes a BenchError naming it."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        log("== %s" % self.name)
        self.t0, self.steal0, self.load0 = time.monotonic(), steal_seconds(), os.getloadavg()[0]
        return self

    def context(self):
        return {"step": self.name, "step_s": round(time.monotonic() - self.t0, 3),
                "steal_s": round(steal_seconds() - self.steal0, 2), "loadavg1_start": self.load0,
                "loadavg1": os.getloadavg()[0]}

    def __exit__(self, kind, e, tb):
        if e is None or isinstance(e, KeyboardInterrupt):
            return False
        if isinstance(e, BenchError) and str(e).startswith(self.name + ": "):
            return False
        if not isinstance(e, BenchError):
            traceback.print_exception(kind, e, tb)  # a bug of this script, or photod answered something unexpected
        raise BenchError("%s: %s" % (self.name, e if isinstance(e, BenchError) else "%s: %s" % (type(e).__name__, e))) from e


# ---------------------------------------------------------------- the machine
def drop_caches():
    """sync; echo 3 > /proc/sys/vm/drop_caches. None when done, else why it could not be."""
    if os.geteuid() != 0:
        return "not root (uid %d): /proc/sys/vm/drop_caches is root's" % os.geteuid()
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
    except OSError as e:
        return "cannot write /proc/sys/vm/drop_caches: %s" % e
    return None


def read_all(corpus, parallel):
    """`find -H CORPUS -type f -print0 | xargs -0 -P N -n 64 cat > /dev/null`; its wall time (-H: a
    corpus given as a symbolic link is read through it; without, `find` listed nothing, and rows 1's
    warm read and 9 read no file)."""
    t0 = time.monotonic()
    r = subprocess.run(["bash", "-c", 'set -o pipefail; find -H "$1" -type f -print0 | xargs -0 -P %d -n 64 cat > /dev/null'
                        % parallel, "read-all", corpus], stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    if r.returncode != 0:
        raise BenchError("find | xargs -P %d cat over %s failed (exit %d): %s" % (parallel, corpus, r.returncode,
                                                                                r.stderr[-500:]))
    return wall


def ensure_corpus(a, n):
    d = ib.corpus_path(a.workdir, n, FILE_SIZE, SEED)
    if not os.path.isdir(d):
        need = n * 8192 * 1.3
        free = shutil.disk_usage(a.workdir).free
        if free < need:
            raise BenchError("a %d-file corpus needs about %.1f GB in %s, %.1f GB are free" % (n, need / 1e9, a.workdir,
                                                                                              free / 1e9))
    d = ib.ensure_corpus(SimpleNamespace(workdir=a.workdir, file_size=FILE_SIZE, seed=SEED, shared=a.shared), n)
    expected = ib.expected_files(d)
    if expected != n:
        raise BenchError("%s: its manifest lists %s files, expected %d (remove it to make it again)" % (d, expected, n))
    return d, expected


def build(a):
    a.photod = os.path.join(REPO, ".build", "debug" if a.debug else "release", "photod")
    if not a.no_build and not a.debug:
        # Others may be editing the tree: SwiftPM refuses a source modified during the build.
        for attempt in range(1, 6):
            log("build: swift build -c release --product photod (in %s), attempt %d" % (REPO, attempt))
            t0 = time.monotonic()
            try:
                r = subprocess.run(["swift", "build", "-c", "release", "--product", "photod"], cwd=REPO,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            except FileNotFoundError:
                raise BenchError("swift is not on PATH (or use --no-build)")
            if r.returncode == 0:
                log("build: done in %.0f s" % (time.monotonic() - t0))
                break
            log(r.stdout[-3000:])
            if "modified during the build" not in r.stdout or attempt == 5:
                raise BenchError("swift build -c release --product photod failed (exit %d)" % r.returncode)
            time.sleep(5)
    if not os.access(a.photod, os.X_OK):
        raise BenchError("no binary at %s (build it, or run without --no-build)" % a.photod)


def provenance(a):
    def sh(*cmd):
        try:
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=30)
            return r.stdout.strip() if r.returncode == 0 else None
        except (OSError, subprocess.SubprocessError):
            return None
    dirty = sh("git", "-C", REPO, "status", "--porcelain", "--", "Sources", "Package.swift")
    return {"commit": sh("git", "-C", REPO, "rev-parse", "--short", "HEAD"),
            "sources_modified": len(dirty.splitlines()) if dirty is not None else None,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "photod": a.photod, "build": "debug" if a.debug else "release", "photod_version": sh(a.photod, "--version"),
            "photod_mtime": datetime.datetime.fromtimestamp(os.path.getmtime(a.photod)).isoformat(timespec="seconds"),
            "nproc": os.cpu_count(), "kernel": os.uname().release, "host": socket.gethostname(),
            "loadavg_start": os.getloadavg(), "steal_s_at_start": steal_seconds()}


# ---------------------------------------------------------------- photod
class Daemon:
    """One photod on one database: started, awaited and stopped as often as the steps ask."""

    def __init__(self, a, corpus, db, rundir):
        self.a, self.corpus, self.db, self.rundir = a, corpus, db, rundir
        self.sock = os.path.join(rundir, "photod.sock")
        if len(self.sock.encode()) > 100:  # sun_path holds 108 bytes
            self.sock = os.path.join(tempfile.mkdtemp(prefix="ps-", dir="/tmp"), "s")
        self.p = self.client = None
        self.starts = 0

    def start(self, tag):
        if self.p is not None:
            raise BenchError("photod is already running")
        self.starts += 1
        self.log_path = os.path.join(self.rundir, "photod-%02d-%s.log" % (self.starts, tag))
        if os.path.lexists(self.sock):
            os.unlink(self.sock)  # so that no stale socket answers for the new process
        cmd = [self.a.photod, "--library", self.corpus, "--database", self.db, "--socket", self.sock,
               "--cache-dir", os.path.join(self.rundir, "cache"), "--timezone", "UTC", "--log-level", "info"]
        with open(self.log_path, "wb") as lf:
            self.t0, self.t0_wall = time.monotonic(), time.time()
            self.p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=lf, stderr=lf)
        self.log_file = open(self.log_path, "rb")
        self.log_tail = b""
        self.hwm_kb = 0
        self.anon_kb = 0
        return cmd

    def tail(self):
        return ib.tail_of(self.log_path, 1500)

    def check_alive(self):
        if self.p.poll() is not None:
            rc = self.p.returncode
            self.p = None
            raise BenchError("photod exited with %s (log %s):\n%s" % (rc, self.log_path, self.tail()))

    def sample(self):
        try:
            self.hwm_kb = max(self.hwm_kb, ib.proc_status_kb(self.p.pid, "VmHWM"))
            # VmHWM counts the shared libraries' pages too (25 MB of Swift runtime, Foundation,
            # SQLite... on this machine): the anonymous part is what photod itself allocates.
            self.anon_kb = max(self.anon_kb, ib.proc_status_kb(self.p.pid, "RssAnon"))
        except OSError:
            pass
        return self.hwm_kb

    def wait_answering(self, timeout=60.0):
        """Seconds from exec until rpc.hello is answered; leaves self.client connected."""
        deadline = self.t0 + timeout
        while True:
            self.check_alive()
            try:
                c = Client(self.sock)
            except (FileNotFoundError, ConnectionRefusedError, BlockingIOError):
                if time.monotonic() > deadline:
                    raise BenchError("photod's socket %s did not accept a connection within %.0f s:\n%s"
                                     % (self.sock, timeout, self.tail()))
                time.sleep(0.002)
                continue
            c.sock.settimeout(max(1.0, deadline - time.monotonic()))
            try:
                line = c.raw("rpc.hello")[1]
            except (OSError, socket.timeout) as e:
                raise BenchError("rpc.hello after connecting: %s\n%s" % (e, self.tail()))
            t = time.monotonic() - self.t0
            msg = json.loads(line) if line else None
            if not msg or "result" not in msg:
                raise BenchError("rpc.hello answered %r\n%s" % (line, self.tail()))
            c.sock.settimeout(60.0)
            self.client = c
            return t

    def call(self, method, params=None):
        try:
            return self.client.call(method, params)
        except RuntimeError as e:
            raise BenchError(str(e))
        except (OSError, ValueError) as e:
            self.check_alive()
            raise BenchError("%s: %s" % (method, e))

    def timed(self, method, params=None):
        """(seconds from writing the request to having read the response line, result)."""
        try:
            secs, line = self.client.raw(method, params)
        except OSError as e:
            self.check_alive()
            raise BenchError("%s: %s" % (method, e))
        if not line:
            self.check_alive()
            raise BenchError("%s: photod closed the connection" % method)
        msg = json.loads(line)
        if "error" in msg:
            raise BenchError("%s %s: %s" % (method, json.dumps(params), msg["error"]))
        if "result" not in msg:
            raise BenchError("%s: not a response: %s" % (method, line[:300]))
        return secs, msg["result"]

    def wait_idle(self, timeout, poll, progress=False):
        """Seconds from exec until library.status says idle with a lastScan; that status.

        The end is seen in photod's log ("scan finished", logged right after the state turns
        idle), read every 5 ms, and confirmed with library.status, which is also asked every
        `poll` s in case the line is missed."""
        deadline = self.t0 + timeout
        next_status = time.monotonic()
        next_sample = 0.0
        next_progress = time.monotonic() + 10
        line_at = None          # when the log line was read
        asked_after_line = False
        while True:
            self.check_alive()
            now = time.monotonic()
            if now > deadline:
                raise BenchError("photod not idle %.0f s after its start (log %s):\n%s" % (timeout, self.log_path,
                                                                                          self.tail()))
            if now >= next_sample:
                self.sample()
                next_sample = now + 0.1
            if line_at is None:
                chunk = self.log_file.read()
                if chunk:
                    self.log_tail = (self.log_tail + chunk)[-4096:]
                    if b"scan finished" in self.log_tail:
                        line_at = now
            if line_at is not None or now >= next_status:
                st = self.call("library.status")
                if st.get("state") == "idle" and st.get("lastScan"):
                    self.sample()
                    # Idle at the line, unless a status after it still said otherwise.
                    return (line_at if line_at is not None and not asked_after_line else now) - self.t0, st
                if line_at is not None:
                    asked_after_line = True   # then asked every 10 ms until it says idle
                if progress and now >= next_progress and st.get("currentScan"):
                    cs = st["currentScan"]
                    log("  indexing: %s of %s files committed, %s files/s, %.0f s" % (
                        cs.get("committed"), cs.get("files"), cs.get("filesPerSecond"), now - self.t0))
                    next_progress = now + 10
                next_status = time.monotonic() + (0.01 if line_at is not None else poll)
            time.sleep(0.005 if line_at is None else max(0.0, next_status - time.monotonic()))

    def finished_s(self, st):
        """Seconds from exec to lastScan.finishedAt (photod's own clock, UTC): a cross-check of the
        end as seen from outside."""
        try:
            at = datetime.datetime.strptime(st["lastScan"]["finishedAt"], "%Y-%m-%dT%H:%M:%S.%fZ")
        except (KeyError, TypeError, ValueError):
            return None
        return round(at.replace(tzinfo=datetime.timezone.utc).timestamp() - self.t0_wall, 4)

    def cpu_s(self):
        return ib.proc_stat(self.p.pid)[1]

    def rss_kb(self):
        return ib.proc_status_kb(self.p.pid, "VmRSS")

    def stop(self):
        """SIGTERM; photod must exit 0 within two minutes. Seconds it took."""
        if self.client is not None:
            self.client.sock.close()
            self.client = None
        t = time.monotonic()
        self.p.send_signal(signal.SIGTERM)
        try:
            rc = self.p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.kill()
            raise BenchError("photod did not stop within 120 s of SIGTERM (killed):\n%s" % self.tail())
        self.p = None
        self.log_file.close()
        if rc != 0:
            raise BenchError("photod exited with %d after SIGTERM:\n%s" % (rc, self.tail()))
        return time.monotonic() - t

    def kill(self):
        if self.client is not None:
            self.client.sock.close()
            self.client = None
        if self.p is not None:
            try:
                self.p.kill()
                self.p.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                pass
            self.p = None


def check_scan(st, expected, what):
    """Fails when the scan did not see exactly the corpus's files."""
    last = st["lastScan"]
    if last.get("files") != expected:
        raise BenchError("%s: lastScan.files is %s, the corpus has %d files" % (what, last.get("files"), expected))
    if not last.get("seconds"):
        raise BenchError("%s: lastScan.seconds is %r" % (what, last.get("seconds")))
    return last


# ---------------------------------------------------------------- one size
def measure_size(a, res, n, corpus, expected, smallest):
    S = label(n)
    base = os.path.join(a.workdir, "runs")
    os.makedirs(base, exist_ok=True)
    rundir = tempfile.mkdtemp(prefix="scale-%s-" % S, dir=base)
    a.rundirs.append(rundir)
    d = Daemon(a, corpus, os.path.join(rundir, "photod.db"), rundir)
    a.daemons.append(d)

    with Step("%s: read every file once (warm cache)" % S):
        log("  %.1f s" % read_all(corpus, 2))

    with Step("%s: initial index, fresh database" % S) as step:
        cmd = d.start("index")
        log("  " + " ".join(cmd))
        d.wait_answering()
        wall, st = d.wait_idle(a.timeout, poll=1.0, progress=True)
        hwm, cpu = d.sample(), d.cpu_s()
        last = check_scan(st, expected, "the initial index")
        if last.get("readFiles") != expected:
            raise BenchError("lastScan.readFiles is %s on a fresh database, expected %d" % (last.get("readFiles"), expected))
        rate = last["files"] / last["seconds"]
        extra = {"lastScan": last, "counts": st.get("counts"), "cpu_s": round(cpu, 2),
                 "finished_at_s": d.finished_s(st)}
        res.put(S, "index_rate", rate, "files/s", step, **extra)
        res.put(S, "index_wall", wall, "s", step)
        res.put(S, "index_hwm_mb", hwm / 1024, "MB", step)
        res.put(S, "index_anon_mb", d.anon_kb / 1024, "MB", step)
        assets = st["counts"]["assets"]
        log("  %d files in %.2f s (lastScan.seconds; %.2f s exec → idle): %.0f files/s, %d errors; "
            "CPU %.1f s; VmHWM %.1f MB (RssAnon peak %.1f MB)" % (last["files"], last["seconds"], wall, rate,
                                                                 last.get("errors") or 0, cpu, hwm / 1024, d.anon_kb / 1024))

    with Step("%s: %d favorites, then predicate fetches" % (S, FAVORITES)) as step:
        page = d.call("assets.fetch", {"limit": 1000, "offset": assets // 2})["assets"]
        ids = [x["id"] for x in page[::max(1, len(page) // FAVORITES)]][:FAVORITES]
        r = d.call("assets.setFavorite", {"ids": ids, "favorite": True})
        if len(r.get("updated", [])) != len(ids):
            raise BenchError("assets.setFavorite updated %d of %d assets" % (len(r.get("updated", [])), len(ids)))
        rss_before = d.rss_kb()
        totals = []
        for pred, sort in FETCHES:
            first = d.call("assets.fetch", {"predicate": pred, "sort": sort, "limit": 1000})
            d.call("assets.fetch", {"predicate": pred, "sort": sort, "limit": 100, "offset": first["total"] // 2})
            totals.append({"predicate": pred, "sort": sort, "total": first["total"]})
        if totals[1]["total"] != len(ids):
            raise BenchError("isFavorite == true matched %d assets, %d were marked" % (totals[1]["total"], len(ids)))
        rss = d.rss_kb()
        anon = ib.proc_status_kb(d.p.pid, "RssAnon")
        res.put(S, "fetch_rss_mb", rss / 1024, "MB", step, rss_before_fetches_mb=round(rss_before / 1024, 1),
                hwm_mb=round(d.sample() / 1024, 1), fetches=totals)
        res.put(S, "fetch_anon_mb", anon / 1024, "MB", step)
        log("  VmRSS %.1f MB before the fetches, %.1f MB after (VmHWM %.1f MB); matches: %s" % (
            rss_before / 1024, rss / 1024, d.hwm_kb / 1024, ", ".join(str(t["total"]) for t in totals)))

    with Step("%s: latency, %d runs each" % (S, a.runs)) as step:
        cases = [("lat_smartAlbums", "smartAlbums.fetch", None),
                 ("lat_momentLists", "momentLists.fetch", None),
                 ("lat_albums", "albums.fetch", {"limit": 100}),
                 ("lat_page", "assets.fetch", PAGE)]
        for key, method, params in cases:
            _, result = d.timed(method, params)  # unmeasured: the first call after the fetches above
            if key == "lat_page" and not result["assets"]:
                raise BenchError("the page %s matched no asset" % json.dumps(PAGE))
            xs = [d.timed(method, params)[0] * 1000 for _ in range(a.runs)]
            v = {"median": statistics.median(xs), "p90": p90(xs)}
            res.put(S, key, v, "ms", step, method=method, params=params, runs_ms=[round(x, 3) for x in xs],
                    max_ms=round(max(xs), 3))
            log("  %-18s median %.2f ms, p90 %.2f, max %.2f" % (method, v["median"], v["p90"], max(xs)))

    with Step("%s: stop; database size" % S) as step:
        shutdown = d.stop()
        files = {sfx: os.path.getsize(d.db + sfx) if os.path.exists(d.db + sfx) else 0 for sfx in ("", "-wal", "-shm")}
        per_asset = (files[""] + files["-wal"]) / assets
        res.put(S, "db_bytes_per_asset", per_asset, "bytes", step, db_bytes=files[""], wal_bytes=files["-wal"],
                shm_bytes=files["-shm"], assets=assets, shutdown_s=round(shutdown, 3))
        log("  .db %d bytes, -wal %d: %.0f bytes per asset (%d assets); stopped in %.2f s" % (
            files[""], files["-wal"], per_asset, assets, shutdown))

    def restarts(cold):
        what = "restart with caches dropped" if cold else "restart (warm)"
        with Step("%s: %s, %d rounds" % (S, what, a.rounds)) as step:
            rounds = []
            for rnd in range(a.rounds):
                why = drop_caches() if cold else None
                if why and rnd > 0:
                    raise BenchError(why)
                if why:
                    log("  skipped: %s" % why)
                    for k in ("cold_restart_listen_s", "cold_restart_idle_s", "cold_first_fetch_ms"):
                        res.skip(S, k, why)
                    return
                d.start("cold-restart" if cold else "restart")
                listen = d.wait_answering()
                fetch_s, page = d.timed("assets.fetch", PAGE)
                idle, st = d.wait_idle(a.timeout, poll=0.05)
                last = check_scan(st, expected, what)
                rounds.append({"listen_s": listen, "first_fetch_ms": fetch_s * 1000, "idle_s": idle,
                               "finished_at_s": d.finished_s(st),
                               "read_files": last.get("readFiles"), "hwm_mb": d.sample() / 1024,
                               "first_fetch_total": page["total"], "lastScan": last})
                log("  round %d: socket answers %.3f s, first fetch %.1f ms, idle %.3f s, readFiles %s, VmHWM %.1f MB" % (
                    rnd + 1, listen, fetch_s * 1000, idle, last.get("readFiles"), d.hwm_kb / 1024))
                d.stop()
            pre = "cold_" if cold else ""
            med = lambda k: statistics.median(r[k] for r in rounds)
            res.put(S, pre + "restart_listen_s", med("listen_s"), "s", step, rounds=rounds)
            res.put(S, pre + "restart_idle_s", med("idle_s"), "s", step)
            res.put(S, pre + "first_fetch_ms", med("first_fetch_ms"), "ms", step)
            if not cold:
                worst = max(r["read_files"] for r in rounds)
                res.put(S, "restart_read_files", worst, "files", step)
            bad = [r["read_files"] for r in rounds if r["read_files"] != 0]
            if bad:
                res.problems.append("%s: %s re-read files over an unchanged library (readFiles %s)" % (S, what, bad))

    restarts(cold=False)
    restarts(cold=True)

    if smallest:
        cold_comparison(a, res, S, corpus, expected, rundir)


def cold_comparison(a, res, S, corpus, expected, rundir):
    with Step("%s: caches dropped, photod's initial index vs. xargs -P 16 cat, %d round(s)" % (S, a.cold_rounds)) as step:
        rounds = []
        for rnd in range(a.cold_rounds):
            r = {}
            for tool in (["cat", "photod"] if rnd % 2 == 0 else ["photod", "cat"]):
                why = drop_caches()
                if why and (rnd > 0 or r):
                    raise BenchError(why)
                if why:
                    log("  skipped: %s" % why)
                    for k in ("cold_index_rate", "cold_read_rate", "cold_rate_ratio"):
                        res.skip(S, k, why)
                    return
                if tool == "cat":
                    wall = read_all(corpus, 16)
                    r["cat_s"], r["cat_rate"] = wall, expected / wall
                    log("  round %d: xargs -P 16 cat: %.2f s, %.0f files/s" % (rnd + 1, wall, expected / wall))
                else:
                    wall, last, cpu = fresh_index(a, corpus, expected, rundir, "cold-index", "the cold initial index", 1.0)
                    r.update(photod_rate=last["files"] / last["seconds"], photod_wall_s=wall, lastScan=last,
                             photod_cpu_s=round(cpu, 2))
                    log("  round %d: photod: %.2f s (lastScan.seconds), %.0f files/s" % (
                        rnd + 1, last["seconds"], r["photod_rate"]))
            r["ratio"] = r["photod_rate"] / r["cat_rate"]
            rounds.append(r)
        res.put(S, "cold_index_rate", statistics.median(r["photod_rate"] for r in rounds), "files/s", step,
                rounds=rounds)
        res.put(S, "cold_read_rate", statistics.median(r["cat_rate"] for r in rounds), "files/s", step)
        res.put(S, "cold_rate_ratio", statistics.median(r["ratio"] for r in rounds), "ratio", step)


def fresh_index(a, corpus, expected, parent, tag, what, poll):
    """photod's initial index of `corpus` on a fresh database in a directory under `parent`
    (removed afterwards unless --keep): (wall s exec -> idle, lastScan, CPU s)."""
    sub = tempfile.mkdtemp(prefix=tag + "-", dir=parent)
    d = Daemon(a, corpus, os.path.join(sub, "photod.db"), sub)
    a.daemons.append(d)
    d.start(tag)
    d.wait_answering()
    wall, st = d.wait_idle(a.timeout, poll=poll)
    last = check_scan(st, expected, what)
    cpu = d.cpu_s()
    d.stop()
    a.daemons.remove(d)
    if not a.keep:
        shutil.rmtree(sub, ignore_errors=True)
    return wall, last, cpu


def index_rounds(a, res, sizes, corpora):
    """Row 1's rate again, --index-rounds - 1 more times per size, the sizes alternating (a
    hypervisor's slow minute then falls on both): the median of all of a size's rounds."""
    rates = {label(n): [res.values[(label(n), "index_rate")]] for n in sizes}
    with Step("initial index, %d more round(s) per size, sizes alternating" % (a.index_rounds - 1)) as step:
        for r in range(a.index_rounds - 1):
            for n, (corpus, expected) in zip(sizes, corpora):
                _, last, _ = fresh_index(a, corpus, expected, os.path.join(a.workdir, "runs"), "index-round",
                                         "an index round", 0.5)
                rates[label(n)].append(last["files"] / last["seconds"])
                log("  round %d, %s: %.0f files/s" % (r + 2, label(n), rates[label(n)][-1]))
        for size, xs in rates.items():
            res.put(size, "index_rate_median", statistics.median(xs), "files/s", step, rounds=[round(x) for x in xs])
        lo, hi = label(sizes[0]), label(sizes[-1])
        ratios = [h / l for l, h in zip(rates[lo], rates[hi])]
        res.put(hi, "index_rate_ratio", statistics.median(ratios), "ratio", step, rounds=[round(r, 3) for r in ratios])


# ---------------------------------------------------------------- the table
def derived(res, sizes):
    """The rows about two sizes: put in the largest size's column."""
    if len(sizes) < 2:
        return
    lo, hi = label(sizes[0]), label(sizes[-1])
    step = SimpleNamespace(context=lambda: {"step": "derived", "from": lo, "to": hi})
    v = res.values
    if (hi, "index_rate_ratio") not in v and (lo, "index_rate") in v and (hi, "index_rate") in v:
        res.put(hi, "index_rate_ratio", v[(hi, "index_rate")] / v[(lo, "index_rate")], "ratio", step)
    if (lo, "fetch_rss_mb") in v and (hi, "fetch_rss_mb") in v:
        res.put(hi, "fetch_rss_growth", v[(hi, "fetch_rss_mb")] - v[(lo, "fetch_rss_mb")], "MB", step)


def table(res, sizes):
    cols = [label(n) for n in sizes]
    log("| row | %s | target | verdict |" % " | ".join(cols))
    log("|---|%s---|---|" % ("---|" * len(cols)))
    for key, name, shown, target, test in ROWS:
        cells, missed, skipped, measured = [], [], [], 0
        for c in cols:
            if (c, key) in res.values:
                val = res.values[(c, key)]
                cells.append(shown(val) if callable(shown) else shown.format(val))
                measured += 1
                if test is not None and not test(val):
                    missed.append(c)
            elif (c, key) in res.skipped:
                cells.append("skipped")
                skipped.append(res.skipped[(c, key)])
            else:
                cells.append("")
        if skipped:
            verdict = "skipped: " + skipped[0]
        elif test is None:
            verdict = ""
        elif not measured:
            verdict = "not measured"
        elif missed:
            verdict = "not met" + ("" if len(missed) == measured else " (%s)" % ", ".join(missed))
        else:
            verdict = "met"
        name = name.replace("largest", cols[-1]).replace("smallest", cols[0])
        log("| %s | %s | %s | %s |" % (name, " | ".join(cells), target, verdict))


# ---------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100000,1000000", help="library sizes in files, smallest first "
                                                               "(default: %(default)s)")
    ap.add_argument("--quick", action="store_true", help="--sizes 10000,50000 --runs 10 --rounds 2: under a minute plus the build")
    ap.add_argument("--runs", type=int, help="requests timed per query in row 4 (default 30; --quick 10)")
    ap.add_argument("--rounds", type=int, help="restarts per kind, rows 5-7 (default 3; --quick 2)")
    ap.add_argument("--cold-rounds", type=int, default=1, help="rounds of row 9 (default: %(default)s)")
    ap.add_argument("--index-rounds", type=int, help="fresh initial indexes per size for row 1's median, the first "
                    "being row 1's own, the others alternating between the sizes at the end (default 3; --quick 1)")
    ap.add_argument("--workdir", default="/tmp/photod-bench",
                    help="corpora, temporary databases, scale-results.jsonl (default: %(default)s)")
    ap.add_argument("--shared", default=ib.DEFAULT_SHARED, help="where make-corpus.py is (default: %(default)s)")
    ap.add_argument("--no-build", action="store_true", help="use the existing .build/release/photod")
    ap.add_argument("--debug", action="store_true", help="use the existing .build/debug/photod (what `scripts/test` "
                    "built): every step runs, the figures are a debug build's (CI runs --quick --debug)")
    ap.add_argument("--keep", action="store_true", help="keep the databases and photod's logs (WORK/runs/scale-*)")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds a start may take to become idle "
                                                                "(default: %(default)s)")
    a = ap.parse_args()
    if a.quick:
        a.sizes = "10000,50000"
    a.runs = a.runs or (10 if a.quick else 30)
    a.rounds = a.rounds or (2 if a.quick else 3)
    a.index_rounds = a.index_rounds or (1 if a.quick else 3)
    try:
        sizes = sorted({int(x) for x in a.sizes.split(",") if x.strip()})
    except ValueError:
        ap.error("--sizes takes numbers separated by commas (got %r)" % a.sizes)
    if not sizes or sizes[0] < 100:
        ap.error("--sizes: at least one size of 100 files or more")
    if a.runs < 1 or a.rounds < 1 or a.cold_rounds < 1:
        ap.error("--runs, --rounds and --cold-rounds must be at least 1")
    a.workdir = os.path.abspath(a.workdir)
    a.shared = os.path.abspath(a.shared)
    a.rundirs, a.daemons = [], []
    os.makedirs(a.workdir, exist_ok=True)
    out = os.path.join(a.workdir, "scale-results.jsonl")
    run_id = time.strftime("%Y%m%dT%H%M%S")
    t_start = time.monotonic()
    res = failure = None
    try:
        with Step("build"):
            build(a)
        prov = provenance(a)
        res = Results(out, run_id, prov)
        res.write({"kind": "header", "run_id": run_id, "provenance": prov,
                   "args": {k: v for k, v in vars(a).items() if k not in ("rundirs", "daemons")}})
        if a.debug:
            log("a DEBUG build (%s): every step runs; its figures are not photod's" % a.photod)
        log("%s, commit %s (%s modified source files), %s, %d CPUs, load average %s" % (
            prov["photod_version"], prov["commit"], prov["sources_modified"], prov["date"], prov["nproc"],
            " ".join("%.2f" % x for x in prov["loadavg_start"])))
        corpora = []
        for n in sizes:
            with Step("corpus of %d files" % n):
                corpora.append(ensure_corpus(a, n))
        for i, (n, (corpus, expected)) in enumerate(zip(sizes, corpora)):
            measure_size(a, res, n, corpus, expected, smallest=(i == 0))
        if a.index_rounds > 1:
            index_rounds(a, res, sizes, corpora)
        derived(res, sizes)
    except BenchError as e:
        failure = str(e)
    except KeyboardInterrupt:
        failure = "interrupted"
    finally:
        for d in a.daemons:
            d.kill()
    if res is None:
        sys.exit("scale-bench: FAILED: %s" % failure)
    steal = steal_seconds() - res.prov["steal_s_at_start"]
    load_end = os.getloadavg()
    res.write({"kind": "footer", "run_id": run_id, "loadavg_end": load_end, "steal_s": round(steal, 2),
               "duration_s": round(time.monotonic() - t_start, 1), "failure": failure, "problems": res.problems})
    log("")
    log("%s, commit %s%s, %s; load average %s at the start, %s at the end; %.1f CPU s stolen by the "
        "hypervisor; %.0f s" % (
            res.prov["photod_version"], res.prov["commit"],
            " + %d modified source files" % res.prov["sources_modified"] if res.prov["sources_modified"] else "",
            res.prov["date"], " ".join("%.2f" % x for x in res.prov["loadavg_start"]),
            " ".join("%.2f" % x for x in load_end), steal, time.monotonic() - t_start))
    log("")
    table(res, sizes)
    log("")
    log("results: %s (run_id %s)" % (out, run_id))
    if failure or a.keep:
        log("databases and logs kept in: %s" % ", ".join(a.rundirs))
    elif a.rundirs:
        for r in a.rundirs:
            shutil.rmtree(r, ignore_errors=True)
    for p in res.problems:
        log("PROBLEM: %s" % p)
    if failure:
        log("FAILED: %s" % failure)
        log("(the rows after that step were not measured)")
    sys.exit(1 if failure or res.problems else 0)


if __name__ == "__main__":
    main()
