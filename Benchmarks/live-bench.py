#!/usr/bin/env python3
"""photod live-watcher benchmark: how long after a file's close() its change set is committed,
what a 10,000-file burst costs next to an initial index of the same files, and what a watched
library costs when nothing happens. Python 3 standard library only.

  python3 Benchmarks/live-bench.py --quick     # smoke test: 200 writes, 2,000-file burst, 10 s idle (~1 min)
  python3 Benchmarks/live-bench.py             # 1,000 writes, 10,000-file burst x 3 rounds, 60 s idle on
                                               # 100,000 files (~5 min on 2 cores)

Phases (--phases, every one with its own photod, stopped with SIGTERM at its end):

  single  photod on a fresh library (a copy of the --base corpus, default lib-2000), idle; then
          --writes distinct JPEG files (bytes of corpus files, each with its own name) are written
          into --dirs existing folders, one every --rate s on a fixed schedule: os.open, os.write,
          os.close, time.monotonic() right after the close. A poller thread opens the database
          read-only (WAL: it never blocks photod's writer) and every --poll-interval s (1 ms) runs
          SELECT rowid, name FROM files WHERE rowid > ?; a name's first sighting is when its
          change set was committed. Latency = sighting - close: an upper bound, late by at most
          one poll gap (about 1.1 ms: the query plus the sleep; the gaps are reported).
          Checks: every file seen, metadataReads rose by exactly --writes.
  burst   per round (--burst-rounds, order alternated): (a) the initial index of a copy of the
          --burst corpus (default lib-10000) by a fresh photod, as index-bench.py measures it
          (files/s = lastScan.files / lastScan.seconds; wall = spawn -> 'scan finished'); (b) a
          fresh photod on a copy of the base corpus, idle, then `cp -r CORPUS LIB/burst` (t0 just
          before cp starts), the same poller counting new rows of `files`, until every file is
          committed and photod is idle. files/s = files / (t0 -> last commit seen). Ratio =
          burst files/s / initial files/s (target >= ~1: a burst is no more costly than the
          initial index); photod's CPU per file in both (load-independent). Checks: all files
          committed, metadataReads delta == files, no event-queue overflow.
  idle    photod on the --idle corpus (default lib-100000, read in place: photod only reads the
          library; its database and socket are in the workdir), idle, --settle s, then over
          --idle-seconds: CPU from /proc/PID/stat (utime+stime), wake-ups = voluntary +
          nonvoluntary context switches summed over /proc/PID/task/*/status, per second, and
          watcher.watches. No RPC connection is open during the window.

Results: one JSON object per phase (round) appended to WORK/results.jsonl after a header
line with the provenance (commit, modified sources, photod version, load average).
Exit status: 0 when every phase ran and its checks held (missed speed targets are reported,
not failures); 1 when a phase failed, missed files or read a file twice; 2 on setup errors.
Helpers (build, corpus, provenance, /proc readers, JSON-RPC client, the initial-index run) come
from index-bench.py.
"""
import argparse
import json
import math
import os
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from array import array
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))


import siblings  # noqa: E402

ib = siblings.load("index-bench.py")
log = ib.log
BenchError = ib.BenchError

# Targets (the live-watching issue).
TARGET_P50_MS = 50.0
TARGET_P99_MS = 250.0
TARGET_BURST_RATIO = 0.9      # burst files/s / initial files/s "no more costly": >= ~1 (10 % slack)
TARGET_IDLE_CPU_PCT = 0.1     # ~0: % of one core
TARGET_IDLE_WAKEUPS = 1.0     # per second, all threads


# ---------------------------------------------------------------- helpers
def pct(xs, q):
    """Nearest-rank percentile of a sorted list."""
    if not xs:
        return None
    return xs[max(0, min(len(xs) - 1, math.ceil(q * len(xs)) - 1))]


def fmt(x, f="%.1f"):
    return "-" if x is None else f % x


def ctx_switches(pid):
    """{tid: (name, voluntary + nonvoluntary context switches)} of every thread of pid."""
    out = {}
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return out
    for t in tids:
        try:
            with open("/proc/%d/task/%s/status" % (pid, t)) as f:
                txt = f.read()
        except OSError:
            continue
        kv = dict(l.split(":", 1) for l in txt.splitlines() if ":" in l)
        try:
            out[int(t)] = (kv.get("Name", "").strip(),
                           int(kv["voluntary_ctxt_switches"]) + int(kv["nonvoluntary_ctxt_switches"]))
        except (KeyError, ValueError):
            pass
    return out


def copy_tree(src, dst):
    """cp -r src dst (dst must not exist); seconds."""
    t0 = time.monotonic()
    subprocess.run(["cp", "-r", src, dst], check=True)
    return time.monotonic() - t0


def rundir(a, prefix, library=False):
    """A new directory for one photod's database, socket and log (WORK/runs), or with
    library=True for a library (--lib-dir, default WORK/runs too)."""
    base = a.lib_dir if library and a.lib_dir else os.path.join(a.workdir, "runs")
    os.makedirs(base, exist_ok=True)
    return tempfile.mkdtemp(prefix=prefix + "-", dir=base)


def cleanup(a, d):
    if d and not a.keep:
        shutil.rmtree(d, ignore_errors=True)


def media_dirs(root):
    """Directories below root that directly hold files, sorted."""
    out = []
    for d, _, files in os.walk(root):
        if files:
            out.append(d)
    return sorted(out)


def corpus_files(root, n):
    """The first n files of a corpus (sorted walk)."""
    out = []
    for d, dirs, files in os.walk(root):
        dirs.sort()
        for f in sorted(files):
            out.append(os.path.join(d, f))
            if len(out) >= n:
                return out
    return out


# ---------------------------------------------------------------- photod
class Photod:
    """One photod process on a library, with its database and socket in tmp."""

    def __init__(self, a, library, tmp):
        self.sock = os.path.join(tmp, "photod.sock")
        if len(self.sock.encode()) > 100:
            self.sock = os.path.join(tempfile.mkdtemp(prefix="lb-", dir="/tmp"), "s")
        self.db = os.path.join(tmp, "photod.db")
        self.logf = os.path.join(tmp, "photod.log")
        self.cmd = [a.photod, "--library", library, "--database", self.db, "--socket", self.sock,
                    "--timezone", "UTC"] + a.photod_arg
        self.rpc = None
        with open(self.logf, "wb") as lf:
            self.t0 = time.monotonic()
            self.p = subprocess.Popen(self.cmd, stdin=subprocess.DEVNULL, stdout=lf, stderr=lf)
        self.pid = self.p.pid

    def alive(self):
        return self.p.poll() is None

    def status(self):
        for _ in range(2):
            try:
                if self.rpc is None:
                    self.rpc = ib.Rpc(self.sock, timeout=60)
                return self.rpc.call("library.status")
            except (FileNotFoundError, ConnectionRefusedError, ConnectionError, BrokenPipeError, socket.timeout):
                self.close_rpc()
                if not self.alive():
                    raise BenchError("photod exited with %s:\n%s" % (self.p.returncode, ib.tail_of(self.logf)))
        return None

    def close_rpc(self):
        if self.rpc is not None:
            self.rpc.close()
            self.rpc = None

    def wait_idle(self, timeout, first_interval=0.05, max_interval=1.0):
        """Poll library.status (back-off from first_interval to max_interval: the call is
        O(library) in photod) until state == idle and the initial scan is over."""
        deadline = time.monotonic() + timeout
        interval = first_interval
        st = None
        while True:
            if not self.alive():
                raise BenchError("photod exited with %s:\n%s" % (self.p.returncode, ib.tail_of(self.logf)))
            try:
                st = self.status()
            except BenchError:
                raise
            if st and st.get("state") == "idle" and st.get("lastScan"):
                return st
            if time.monotonic() > deadline:
                raise BenchError("photod not idle after %.0f s (last status: %s)" % (timeout, st and {
                    k: st.get(k) for k in ("state", "counts", "sortQueue", "watcher")}))
            time.sleep(interval)
            interval = min(max_interval, interval * 1.5)

    def cpu(self):
        return ib.proc_stat(self.pid)[1]

    def stop(self):
        """SIGTERM and wait (60 s, then SIGKILL); the exit code."""
        self.close_rpc()
        if self.p.returncode is not None:
            return self.p.returncode
        try:
            self.p.send_signal(signal.SIGTERM)
            return self.p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            return "killed after 60 s"
        except OSError:
            return self.p.poll()


class Poller(threading.Thread):
    """Polls the database read-only every `interval` s for new rows of `files` (rowid above the
    watermark at start) and records when each one was first seen (time.monotonic() right after
    the query returned)."""

    def __init__(self, db, interval):
        super().__init__(daemon=True)
        uri = "file:%s?mode=ro" % urllib.parse.quote(os.path.abspath(db))
        self.conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False, timeout=5)
        self.interval = interval
        self.hi = self.conn.execute("SELECT coalesce(max(rowid), 0) FROM files").fetchone()[0]
        self.start_rowid = self.hi
        self.seen = {}            # name (bytes) -> first time seen
        self.count = 0            # new rows seen
        self.last_time = None     # when the last new row was seen
        self.gaps = array("d")    # time between consecutive query returns
        self.errors = 0
        self.cpu = 0.0            # CPU seconds of this thread (it competes with photod for the cores)
        self.stop_event = threading.Event()
        self.lock = threading.Lock()

    def run(self):
        q = "SELECT rowid, name FROM files WHERE rowid > ? ORDER BY rowid"
        prev = None
        self.cpu0 = time.thread_time()
        while not self.stop_event.is_set():
            try:
                rows = self.conn.execute(q, (self.hi,)).fetchall()
            except sqlite3.OperationalError:
                rows = []
                self.errors += 1
            now = time.monotonic()
            if rows:
                with self.lock:
                    for rid, name in rows:
                        self.seen.setdefault(bytes(name), now)
                    self.count += len(rows)
                    self.hi = rows[-1][0]
                    self.last_time = now
            if prev is not None:
                self.gaps.append(now - prev)
            prev = now
            self.cpu = time.thread_time() - self.cpu0
            time.sleep(self.interval)

    def finish(self):
        self.stop_event.set()
        self.join(5)
        self.conn.close()

    def gap_stats(self):
        g = sorted(self.gaps)
        return {"polls": len(g) + 1, "gap_median_ms": round(1000 * pct(g, 0.5), 3) if g else None,
                "gap_p99_ms": round(1000 * pct(g, 0.99), 3) if g else None,
                "gap_max_ms": round(1000 * g[-1], 3) if g else None, "errors": self.errors,
                "cpu_s": round(self.cpu, 3)}


def delta(after, before, *keys):
    def get(d):
        for k in keys:
            d = (d or {}).get(k)
        return d
    x, y = get(after), get(before)
    return x - y if x is not None and y is not None else None


# ---------------------------------------------------------------- phase: single-file latency
def phase_single(a, st):
    base = st["base"]
    tmp = rundir(a, "single")
    libtmp = None
    d = None
    poller = None
    rec = {"phase": "single", "writes": a.writes, "rate_s": a.rate, "base": base,
           "poll_interval_s": a.poll_interval}
    try:
        libtmp = rundir(a, "lib", library=True)
        lib = os.path.join(libtmp, "lib")
        copy_tree(base, lib)
        dirs = media_dirs(lib)
        step = max(1, len(dirs) // a.dirs)
        targets = dirs[::step][:a.dirs]
        sources = corpus_files(st["burst"], a.writes)
        if len(sources) < a.writes:
            raise BenchError("%s has only %d files for %d writes" % (st["burst"], len(sources), a.writes))
        payloads = []
        for s in sources:
            with open(s, "rb") as f:
                payloads.append(f.read())
        jobs = [(os.path.join(targets[i % len(targets)], "live-%05d.jpg" % i), b"live-%05d.jpg" % i, payloads[i])
                for i in range(a.writes)]
        d = Photod(a, lib, tmp)
        s0 = d.wait_idle(a.timeout)
        rec["base_files"] = (s0.get("lastScan") or {}).get("files")
        poller = Poller(d.db, a.poll_interval)
        d.close_rpc()
        cpu0 = d.cpu()
        poller.start()
        log("single: photod idle on %s files; writing %d files into %d folders, one every %.0f ms (%.0f s) ..." % (
            rec["base_files"], a.writes, len(targets), a.rate * 1000, a.writes * a.rate))
        closes = {}
        lag_max = 0.0
        start = time.monotonic() + 0.2
        for i, (path, name, data) in enumerate(jobs):
            due = start + i * a.rate
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            lag_max = max(lag_max, time.monotonic() - due)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
            closes[name] = time.monotonic()
        t_last_write = time.monotonic()
        deadline = t_last_write + a.single_timeout
        while time.monotonic() < deadline:
            with poller.lock:
                if all(n in poller.seen for n in closes):
                    break
            time.sleep(0.05)
        s1 = d.wait_idle(a.timeout)
        cpu1 = d.cpu()
        poller.finish()
        lat = sorted(1000 * (poller.seen[n] - t) for n, t in closes.items() if n in poller.seen)
        missing = sorted(n.decode() for n in closes if n not in poller.seen)
        worst = sorted(((1000 * (poller.seen[n] - t), n.decode()) for n, t in closes.items() if n in poller.seen),
                       reverse=True)[:5]
        rec.update({
            "seen": len(lat), "missing": len(missing), "missing_names": missing[:20],
            "p50_ms": pct(lat, 0.5), "p90_ms": pct(lat, 0.9), "p99_ms": pct(lat, 0.99),
            "max_ms": lat[-1] if lat else None, "min_ms": lat[0] if lat else None,
            "mean_ms": statistics.fmean(lat) if lat else None,
            "over_250ms": sum(1 for x in lat if x > 250), "worst": [[round(x, 2), n] for x, n in worst],
            "latencies_ms": [round(x, 2) for x in lat],
            "metadata_reads_delta": delta(s1, s0, "metadataReads"),
            "applied_changes_delta": delta(s1, s0, "watcher", "appliedChanges"),
            "jobs_run_delta": delta(s1, s0, "sortQueue", "jobsRun"),
            "overflows_delta": delta(s1, s0, "watcher", "overflows"),
            "files_after": (s1.get("counts") or {}).get("files"),
            "photod_cpu_s": round(cpu1 - cpu0, 3), "writer_lag_max_ms": round(1000 * lag_max, 2),
            "poller": poller.gap_stats(), "watches": (s1.get("watcher") or {}).get("watches"),
            "targets": [os.path.relpath(t, lib) for t in targets],
        })
        poller = None
        problems = []
        if missing:
            problems.append("%d of %d files never committed (e.g. %s)" % (len(missing), a.writes, missing[:3]))
        if rec["metadata_reads_delta"] != a.writes:
            problems.append("metadataReads rose by %s for %d files (expected exactly %d)" % (
                rec["metadata_reads_delta"], a.writes, a.writes))
        if problems:
            rec["problem"] = "; ".join(problems)
    finally:
        if poller is not None:
            poller.finish()
        if d is not None:
            rec["rc"] = d.stop()
        cleanup(a, tmp)
        cleanup(a, libtmp)
    if rec.get("rc") not in (0, None):
        rec.setdefault("problem", "photod exited with %s after SIGTERM" % rec["rc"])
    return rec


def show_single(r):
    log("")
    log("| single-file latency close() → committed | writes | seen | p50 ms | p90 ms | p99 ms | max ms | "
        "metadataReads Δ | sort jobs | photod CPU s | poll gap median/p99 ms |")
    log("|---|---|---|---|---|---|---|---|---|---|---|")
    pg = r.get("poller") or {}
    log("| every %.0f ms, %d folders | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s |" % (
        r["rate_s"] * 1000, len(r.get("targets") or []), r["writes"], r.get("seen", "-"),
        fmt(r.get("p50_ms")), fmt(r.get("p90_ms")), fmt(r.get("p99_ms")), fmt(r.get("max_ms")),
        r.get("metadata_reads_delta", "-"), r.get("jobs_run_delta", "-"), fmt(r.get("photod_cpu_s"), "%.2f"),
        pg.get("gap_median_ms", "-"), pg.get("gap_p99_ms", "-")))
    if r.get("worst"):
        log("  slowest: %s" % ", ".join("%s %.1f ms" % (n, x) for x, n in r["worst"]))
    log("  (latency = first sighting in a read-only poll of `files` - close(); resolution: one poll gap, "
        "~%s ms)" % pg.get("gap_median_ms", "1"))


# ---------------------------------------------------------------- phase: burst vs initial index
def run_initial(a, st):
    """The initial index of the burst corpus's copy, as index-bench.py runs it."""
    tmp = rundir(a, "initial")
    try:
        ns = SimpleNamespace(photod=a.photod, workers=None, photod_arg=a.photod_arg, wait_mode="log",
                             poll=0.02, fallback_poll=30.0, timeout=a.timeout)
        r = ib.run_photod(ns, st["initial_copy"], os.path.join(tmp, "photod.db"), tmp)
    finally:
        cleanup(a, tmp)
    return {"files": r["files"], "scan_s": r["scan_s"], "files_per_s": r["files_per_s"], "wall_s": r["wall"],
            "wall_files_per_s": r["files"] / r["wall"] if r.get("files") and r.get("wall") else None,
            "cpu_s": r["cpu"], "cpu_us_per_file": 1e6 * r["cpu"] / r["files"] if r.get("files") else None,
            "maxrss_mb": r["maxrss_mb"], "rc": r["rc"], "problem": r.get("problem")}


def run_burst(a, st):
    tmp = rundir(a, "burst")
    libtmp = None
    d = None
    poller = None
    n = st["burst_files"]
    rec = {"files": n}
    try:
        # cp alone, into an unwatched directory, just before: what the copy costs by itself
        alone = os.path.join(rundir(a, "cp-alone", library=True), "lib")
        t = time.monotonic()
        rc, ru = ib.reap(subprocess.Popen(["cp", "-r", st["burst"], alone]))
        rec["cp_alone_s"], rec["cp_alone_cpu_s"] = time.monotonic() - t, ru.ru_utime + ru.ru_stime
        if rc != 0:
            raise BenchError("cp -r exited with %s" % rc)
        shutil.rmtree(os.path.dirname(alone))
        libtmp = rundir(a, "lib", library=True)
        lib = os.path.join(libtmp, "lib")
        copy_tree(st["base"], lib)
        d = Photod(a, lib, tmp)
        s0 = d.wait_idle(a.timeout)
        rec["base_files"] = (s0.get("lastScan") or {}).get("files")
        poller = Poller(d.db, a.poll_interval)
        d.close_rpc()
        poller.start()
        dest = os.path.join(lib, "burst")
        cpu0 = d.cpu()
        busy0 = ib.cpu_busy()
        t0 = time.monotonic()
        cp = subprocess.Popen(["cp", "-r", st["burst"], dest])
        cp_rc, cp_ru = ib.reap(cp)
        t_cp = time.monotonic()
        if cp_rc != 0:
            raise BenchError("cp -r exited with %s" % cp_rc)
        deadline = t0 + a.timeout
        while poller.count < n and time.monotonic() < deadline and d.alive():
            time.sleep(0.01)
        t_seen_all = time.monotonic()
        cpu_commit = d.cpu()
        s1 = d.wait_idle(a.timeout, first_interval=0.02, max_interval=0.2)
        t_idle = time.monotonic()
        cpu1 = d.cpu()
        busy1 = ib.cpu_busy()
        poller.finish()
        t_last = poller.last_time
        prefix = os.fsencode(dest) + b"/"
        with sqlite3.connect("file:%s?mode=ro" % urllib.parse.quote(d.db), uri=True) as c:
            in_burst = c.execute("SELECT count(*) FROM files f JOIN directories d ON d.id = f.directory_id "
                                 "WHERE d.path >= ? AND d.path < ?", (prefix, prefix[:-1] + b"0")).fetchone()[0]
        c.close()
        commit_s = (t_last - t0) if t_last else None
        rec.update({
            "committed_rows": poller.count, "committed_in_burst": in_burst,
            "cp_s": t_cp - t0, "cp_cpu_s": cp_ru.ru_utime + cp_ru.ru_stime,
            "last_commit_s": commit_s, "idle_s": t_idle - t0, "all_seen_noticed_s": t_seen_all - t0,
            "files_per_s": n / commit_s if commit_s else None,
            "after_cp_s": commit_s - (t_cp - t0) if commit_s else None,
            "photod_cpu_s": cpu1 - cpu0, "photod_cpu_to_commit_s": cpu_commit - cpu0,
            "cpu_us_per_file": 1e6 * (cpu1 - cpu0) / n,
            "foreign_cpu_s": max(0.0, (busy1 - busy0) - (cpu1 - cpu0) - (cp_ru.ru_utime + cp_ru.ru_stime)),
            "metadata_reads_delta": delta(s1, s0, "metadataReads"),
            "jobs_run_delta": delta(s1, s0, "sortQueue", "jobsRun"),
            "jobs_cancelled_delta": delta(s1, s0, "sortQueue", "jobsCancelled"),
            "applied_changes_delta": delta(s1, s0, "watcher", "appliedChanges"),
            "overflows_delta": delta(s1, s0, "watcher", "overflows"),
            "watches_after": (s1.get("watcher") or {}).get("watches"),
            "files_after": (s1.get("counts") or {}).get("files"),
            "poller": poller.gap_stats(),
        })
        poller = None
        problems = []
        if in_burst != n or rec["committed_rows"] != n:
            problems.append("%s files of the burst committed (%s new rows), expected %d" % (
                in_burst, rec["committed_rows"], n))
        if rec["metadata_reads_delta"] != n:
            problems.append("metadataReads rose by %s for %d files" % (rec["metadata_reads_delta"], n))
        if rec["overflows_delta"]:
            problems.append("%s event-queue overflow(s) (full rescan)" % rec["overflows_delta"])
        if problems:
            rec["problem"] = "; ".join(problems)
    finally:
        if poller is not None:
            poller.finish()
        if d is not None:
            rec["rc"] = d.stop()
        cleanup(a, tmp)
        cleanup(a, libtmp)
    if rec.get("rc") not in (0, None):
        rec.setdefault("problem", "photod exited with %s after SIGTERM" % rec["rc"])
    return rec


def run_burst_mv(a, st):
    """The same files moved in as one folder (`mv` of a copy made beforehand on the library's
    file system): one new directory tree, found by the watcher and scanned; no copier competes
    for the CPU. What the pipeline itself costs for a burst."""
    tmp = rundir(a, "burst-mv")
    libtmp = rundir(a, "lib-mv", library=True)
    d = None
    poller = None
    n = st["burst_files"]
    rec = {"files": n}
    try:
        lib = os.path.join(libtmp, "lib")
        copy_tree(st["base"], lib)
        outside = os.path.join(libtmp, "outside")
        copy_tree(st["burst"], outside)
        d = Photod(a, lib, tmp)
        s0 = d.wait_idle(a.timeout)
        poller = Poller(d.db, a.poll_interval)
        d.close_rpc()
        poller.start()
        cpu0 = d.cpu()
        t0 = time.monotonic()
        os.rename(outside, os.path.join(lib, "burst"))
        deadline = t0 + a.timeout
        while poller.count < n and time.monotonic() < deadline and d.alive():
            time.sleep(0.005)
        s1 = d.wait_idle(a.timeout, first_interval=0.02, max_interval=0.2)
        cpu1 = d.cpu()
        poller.finish()
        t_last = poller.last_time
        commit_s = (t_last - t0) if t_last else None
        rec.update({"committed_rows": poller.count, "last_commit_s": commit_s,
                    "files_per_s": n / commit_s if commit_s else None,
                    "cpu_us_per_file": 1e6 * (cpu1 - cpu0) / n,
                    "metadata_reads_delta": delta(s1, s0, "metadataReads")})
        poller = None
        if rec["committed_rows"] != n or rec["metadata_reads_delta"] != n:
            rec["problem"] = "%s rows committed, metadataReads +%s for %d files" % (
                rec["committed_rows"], rec["metadata_reads_delta"], n)
    finally:
        if poller is not None:
            poller.finish()
        if d is not None:
            rec["rc"] = d.stop()
        cleanup(a, tmp)
        cleanup(a, libtmp)
    return rec


def phase_burst(a, st, rnd):
    la = os.getloadavg()[0]
    order = ["initial", "burst"] if rnd % 2 == 0 else ["burst", "initial"]
    res = {}
    for k in order:
        res[k] = run_initial(a, st) if k == "initial" else run_burst(a, st)
    res["mv"] = run_burst_mv(a, st)
    b, i, m = res["burst"], res["initial"], res["mv"]
    rec = {"phase": "burst", "round": rnd, "order": order, "corpus": st["burst"], "loadavg1": la,
           "burst": b, "initial": i, "mv": m,
           "ratio_mv_files_per_s": m["files_per_s"] / i["files_per_s"] if m.get("files_per_s") and i.get("files_per_s") else None,
           "cpu_ratio_mv": m["cpu_us_per_file"] / i["cpu_us_per_file"] if m.get("cpu_us_per_file") and i.get("cpu_us_per_file") else None,
           "ratio_files_per_s": b["files_per_s"] / i["files_per_s"] if b.get("files_per_s") and i.get("files_per_s") else None,
           "ratio_vs_initial_wall": b["files_per_s"] / i["wall_files_per_s"]
           if b.get("files_per_s") and i.get("wall_files_per_s") else None,
           "cpu_ratio": b["cpu_us_per_file"] / i["cpu_us_per_file"] if i.get("cpu_us_per_file") else None}
    probs = [x["problem"] for x in (b, i, m) if x.get("problem")]
    if probs:
        rec["problem"] = "; ".join(probs)
    log("  burst r%d (%s): %s files committed %s s after cp started = %s files/s (cp %s s, alone %s s; idle at %s s; "
        "%s sort jobs; %s reads; CPU: photod %s µs/file, cp %s s (alone %s s), poller %s s) | initial index %s files/s (lastScan %s s, "
        "wall %s s; CPU %s µs/file) | ratio %s, CPU ratio %s, load %.2f%s" % (
            rnd, "→".join(order), b.get("files"), fmt(b.get("last_commit_s"), "%.2f"), fmt(b.get("files_per_s"), "%.0f"),
            fmt(b.get("cp_s"), "%.2f"), fmt(b.get("cp_alone_s"), "%.2f"), fmt(b.get("idle_s"), "%.2f"),
            b.get("jobs_run_delta"), b.get("metadata_reads_delta"), fmt(b.get("cpu_us_per_file"), "%.0f"),
            fmt(b.get("cp_cpu_s"), "%.2f"), fmt(b.get("cp_alone_cpu_s"), "%.2f"),
            fmt((b.get("poller") or {}).get("cpu_s"), "%.2f"),
            fmt(i.get("files_per_s"), "%.0f"), fmt(i.get("scan_s"), "%.2f"), fmt(i.get("wall_s"), "%.2f"),
            fmt(i.get("cpu_us_per_file"), "%.0f"), fmt(rec["ratio_files_per_s"], "%.2f"), fmt(rec["cpu_ratio"], "%.2f"),
            la, ("   PROBLEM: " + rec["problem"]) if rec.get("problem") else ""))
    log("  burst r%d, folder moved in (mv): %s files committed %s s after the rename = %s files/s, CPU %s µs/file | "
        "ratio to the initial index %s, CPU ratio %s" % (
            rnd, m.get("files"), fmt(m.get("last_commit_s"), "%.2f"), fmt(m.get("files_per_s"), "%.0f"),
            fmt(m.get("cpu_us_per_file"), "%.0f"), fmt(rec["ratio_mv_files_per_s"], "%.2f"), fmt(rec["cpu_ratio_mv"], "%.2f")))
    return rec


def show_burst(rs):
    ok = [r for r in rs if r.get("ratio_files_per_s")]
    log("")
    log("| burst (cp -r) vs initial index | files | cp alone s | cp s | cp start → last commit s | burst files/s | "
        "last commit after cp end s | → idle s | sort jobs | metadataReads Δ | initial files/s (lastScan) | "
        "initial wall s | ratio burst ÷ initial | CPU µs/file burst / initial | load |")
    log("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")

    def row(label, b, i, ratio, load):
        log("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s |" % (
            label, b.get("files", ""), fmt(b.get("cp_alone_s"), "%.2f"), fmt(b.get("cp_s"), "%.2f"),
            fmt(b.get("last_commit_s"), "%.2f"), fmt(b.get("files_per_s"), "%.0f"), fmt(b.get("after_cp_s"), "%.2f"),
            fmt(b.get("idle_s"), "%.2f"), fmt(b.get("jobs_run_delta"), "%d"), fmt(b.get("metadata_reads_delta"), "%d"),
            fmt(i.get("files_per_s"), "%.0f"), fmt(i.get("wall_s"), "%.2f"), fmt(ratio, "%.2f"),
            fmt(b.get("cpu_us_per_file"), "%.0f"), fmt(i.get("cpu_us_per_file"), "%.0f"), fmt(load, "%.2f")))

    for r in rs:
        row("round %d" % r["round"], r["burst"], r["initial"], r.get("ratio_files_per_s"), r["loadavg1"])
    if len(ok) > 1:
        keys_b = ("cp_alone_s", "cp_s", "last_commit_s", "files_per_s", "after_cp_s", "idle_s", "jobs_run_delta",
                  "metadata_reads_delta", "cpu_us_per_file")
        keys_i = ("files_per_s", "wall_s", "cpu_us_per_file")
        row("median", {k: ib.median([r["burst"].get(k) for r in ok]) for k in keys_b},
            {k: ib.median([r["initial"].get(k) for r in ok]) for k in keys_i},
            ib.median([r["ratio_files_per_s"] for r in ok]), None)


# ---------------------------------------------------------------- phase: idle CPU
def phase_idle(a, st):
    tmp = rundir(a, "idle")
    d = None
    rec = {"phase": "idle", "corpus": st["idle"], "seconds": a.idle_seconds}
    try:
        d = Photod(a, st["idle"], tmp)
        log("idle: photod indexing %s (%s files) ..." % (st["idle"], st["idle_files"]))
        s0 = d.wait_idle(a.timeout, first_interval=0.2, max_interval=2.0)
        rec["index_wall_s"] = time.monotonic() - d.t0
        rec["files"] = (s0.get("counts") or {}).get("files")
        d.close_rpc()
        time.sleep(a.settle)
        la = os.getloadavg()[0]
        c0, w0, b0, t0 = d.cpu(), ctx_switches(d.pid), ib.cpu_busy(), time.monotonic()
        log("idle: idle; measuring %.0f s with no client connected ..." % a.idle_seconds)
        time.sleep(a.idle_seconds)
        c1, w1, b1, t1 = d.cpu(), ctx_switches(d.pid), ib.cpu_busy(), time.monotonic()
        s1 = d.status()
        el = t1 - t0
        per_thread = {}
        for tid, (name, n1) in w1.items():
            n0 = w0.get(tid, (name, 0))[1]
            if n1 - n0:
                per_thread["%s/%d" % (name, tid)] = n1 - n0
        wake = sum(per_thread.values())
        rec.update({
            "elapsed_s": el, "cpu_s": c1 - c0, "cpu_pct": 100 * (c1 - c0) / el, "wakeups": wake,
            "wakeups_per_s": wake / el, "threads": len(w1), "threads_started": len(set(w1) - set(w0)),
            "threads_ended": len(set(w0) - set(w1)),
            "busiest_threads": sorted(per_thread.items(), key=lambda kv: -kv[1])[:5],
            "machine_busy_cpu_s": b1 - b0, "loadavg1": la,
            "watches": (s1.get("watcher") or {}).get("watches"),
            "polls_delta": delta(s1, s0, "watcher", "polls"),
            "applied_changes_delta": delta(s1, s0, "watcher", "appliedChanges"),
            "metadata_reads_delta": delta(s1, s0, "metadataReads"),
            "unwatched_trees": len((s1.get("watcher") or {}).get("unwatchedTrees") or []),
            "rss_mb": ib.proc_status_kb(d.pid, "VmRSS") / 1024,
        })
        if rec["metadata_reads_delta"]:
            rec["problem"] = "photod read %s files while the library was idle" % rec["metadata_reads_delta"]
    finally:
        if d is not None:
            rec["rc"] = d.stop()
        cleanup(a, tmp)
    if rec.get("rc") not in (0, None):
        rec.setdefault("problem", "photod exited with %s after SIGTERM" % rec["rc"])
    return rec


def show_idle(r):
    log("")
    log("| idle, watched library | files | watches | window s | CPU s | CPU % of a core | wake-ups/s | "
        "threads | busiest threads (switches) | machine busy CPU s | load |")
    log("|---|---|---|---|---|---|---|---|---|---|---|")
    log("| %s | %s | %s | %.1f | %.3f | %.3f | %.2f | %s | %s | %.1f | %.2f |" % (
        os.path.basename(r["corpus"]), r.get("files"), r.get("watches"), r["elapsed_s"], r["cpu_s"], r["cpu_pct"],
        r["wakeups_per_s"], r["threads"], ", ".join("%s %d" % kv for kv in r["busiest_threads"][:3]) or "none",
        r["machine_busy_cpu_s"], r["loadavg1"]))


# ---------------------------------------------------------------- summary
def summary(results):
    log("")
    log("Targets (live-watching issue):")
    log("| check | measured | target | verdict |")
    log("|---|---|---|---|")
    missed = 0

    def line(check, val, shown, target, ok):
        nonlocal missed
        if val is None:
            v = "n/a"
        elif ok:
            v = "met"
        else:
            v = "NOT met"
            missed += 1
        log("| %s | %s | %s | %s |" % (check, shown if val is not None else "-", target, v))

    s = results.get("single")
    if s:
        line("single file p50 close → commit", s.get("p50_ms"), fmt(s.get("p50_ms"), "%.1f ms"),
             "≤ %.0f ms" % TARGET_P50_MS, s.get("p50_ms") is not None and s["p50_ms"] <= TARGET_P50_MS)
        line("single file p99", s.get("p99_ms"), fmt(s.get("p99_ms"), "%.1f ms"),
             "≤ %.0f ms" % TARGET_P99_MS, s.get("p99_ms") is not None and s["p99_ms"] <= TARGET_P99_MS)
        line("single files committed / read once", s.get("seen"),
             "%s/%s seen, metadataReads +%s" % (s.get("seen"), s["writes"], s.get("metadata_reads_delta")),
             "all, +%d" % s["writes"], s.get("seen") == s["writes"] and s.get("metadata_reads_delta") == s["writes"])
    bs = [r for r in results.get("burst", []) if r.get("ratio_files_per_s")]
    if results.get("burst"):
        m = ib.median([r["ratio_files_per_s"] for r in bs])
        line("burst files/s ÷ initial index files/s (median of %d)" % len(bs), m,
             "%.2f (rounds: %s)" % (m, ", ".join("%.2f" % r["ratio_files_per_s"] for r in bs)) if m else "",
             "≥ ~1 (met at ≥ %.1f)" % TARGET_BURST_RATIO, m is not None and m >= TARGET_BURST_RATIO)
        c = ib.median([r.get("cpu_ratio") for r in bs])
        line("burst CPU/file ÷ initial CPU/file (load-independent)", c, fmt(c, "%.2f"),
             "≤ ~1 (met at ≤ %.2f)" % (1 / TARGET_BURST_RATIO), c is not None and c <= 1 / TARGET_BURST_RATIO)
        mv = [r for r in results.get("burst", []) if r.get("ratio_mv_files_per_s")]
        if mv:
            mm = ib.median([r["ratio_mv_files_per_s"] for r in mv])
            line("folder of the same files moved in (mv): files/s ÷ initial (median of %d)" % len(mv), mm,
                 "%.2f (rounds: %s)" % (mm, ", ".join("%.2f" % r["ratio_mv_files_per_s"] for r in mv)),
                 "≥ ~1 (met at ≥ %.1f)" % TARGET_BURST_RATIO, mm >= TARGET_BURST_RATIO)
            mc = ib.median([r.get("cpu_ratio_mv") for r in mv])
            line("moved-in folder CPU/file ÷ initial CPU/file", mc, fmt(mc, "%.2f"),
                 "≤ ~1 (met at ≤ %.2f)" % (1 / TARGET_BURST_RATIO), mc is not None and mc <= 1 / TARGET_BURST_RATIO)
        allb = results.get("burst", [])
        good = all(r["burst"].get("committed_in_burst") == r["burst"]["files"] and
                   r["burst"].get("metadata_reads_delta") == r["burst"]["files"] for r in allb)
        line("burst files committed / read once", 1 if allb else None,
             "; ".join("%s/%s, +%s reads" % (r["burst"].get("committed_in_burst"), r["burst"]["files"],
                                             r["burst"].get("metadata_reads_delta")) for r in allb),
             "all, reads = files", good)
    i = results.get("idle")
    if i:
        line("idle CPU (%s files watched)" % i.get("files"), i.get("cpu_pct"), fmt(i.get("cpu_pct"), "%.3f %%"),
             "~0 (≤ %.1f %% of a core)" % TARGET_IDLE_CPU_PCT, i.get("cpu_pct") is not None and i["cpu_pct"] <= TARGET_IDLE_CPU_PCT)
        line("idle wake-ups", i.get("wakeups_per_s"), fmt(i.get("wakeups_per_s"), "%.2f/s"),
             "~0 (≤ %.0f/s)" % TARGET_IDLE_WAKEUPS, i.get("wakeups_per_s") is not None and i["wakeups_per_s"] <= TARGET_IDLE_WAKEUPS)
    return missed


# ---------------------------------------------------------------- main
def find_corpus(a, n, _found={}):
    if n in _found:
        return _found[n]
    _found[n] = _find_corpus(a, n)
    return _found[n]


def _find_corpus(a, n):
    name = "lib-%d-%s-s%d" % (n, a.file_size, a.seed)
    for d in (a.corpus_dir, os.path.join(a.workdir, "corpus")):
        if d and os.path.isdir(os.path.join(d, name)):
            p = os.path.join(d, name)
            log("corpus %s: cached" % p)
            return p
    return ib.ensure_corpus(a, n)  # generates into WORK/corpus


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", default="/tmp/live-bench",
                    help="libraries, databases, the limit binary, results (default: %(default)s)")
    ap.add_argument("--corpus-dir", default="/tmp/photod-bench/corpus",
                    help="cached corpora, only read (default: %(default)s; missing ones are generated in WORK/corpus)")
    ap.add_argument("--out", help="results, one JSON object per phase, appended (default: WORK/results.jsonl)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke test: 200 writes, a 2,000-file burst (1 round), 10 s idle on 10,000 files")
    ap.add_argument("--phases", default="single,burst,idle", help="subset of single,burst,idle (default: %(default)s)")
    ap.add_argument("--writes", type=int, help="single-file writes (default 1000; quick 200)")
    ap.add_argument("--rate", type=float, default=0.05, help="seconds between single-file writes (default: %(default)s)")
    ap.add_argument("--dirs", type=int, default=4, help="existing folders the single files go to (default: %(default)s)")
    ap.add_argument("--poll-interval", type=float, default=0.001,
                    help="database poll interval, s (default: %(default)s)")
    ap.add_argument("--base", type=int, default=2000, help="files of the library's existing tree (default: %(default)s)")
    ap.add_argument("--burst", type=int, help="burst corpus size (default 10000; quick 2000)")
    ap.add_argument("--burst-rounds", type=int, help="burst + initial-index rounds (default 3; quick 1)")
    ap.add_argument("--idle", type=int, help="idle corpus size (default 100000; quick 10000)")
    ap.add_argument("--idle-seconds", type=float, help="idle measurement window, s (default 60; quick 10)")
    ap.add_argument("--settle", type=float, default=3.0,
                    help="wait after photod turns idle before the idle window, s (default: %(default)s)")
    ap.add_argument("--single-timeout", type=float, default=30.0,
                    help="how long after the last write to wait for stragglers, s (default: %(default)s)")
    ap.add_argument("--timeout", type=float, default=900.0, help="any wait for photod, s (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=1, help="make-corpus.py seed (default: %(default)s)")
    ap.add_argument("--file-size", default="20k", help="make-corpus.py --size (default: %(default)s)")
    ap.add_argument("--shared", default=ib.DEFAULT_SHARED, help="make-corpus.py and limit.c (default: %(default)s)")
    ap.add_argument("--no-build", action="store_true", help="use the existing .build/release/photod")
    ap.add_argument("--photod", help="benchmark this photod binary instead of building one")
    ap.add_argument("--photod-arg", action="append", default=[], help="extra photod argument (repeatable)")
    ap.add_argument("--lib-dir", help="where the libraries written to go (the base copies the single files and "
                                       "bursts are written into, the initial-index copy; default WORK/runs). "
                                       "/dev/shm takes the file system's write path out of cp's time")
    ap.add_argument("--keep", action="store_true", help="keep the libraries, databases and logs in WORK/runs")
    a = ap.parse_args()
    q = a.quick
    a.writes = a.writes or (200 if q else 1000)
    a.burst = a.burst or (2000 if q else 10000)
    a.burst_rounds = a.burst_rounds or (1 if q else 3)
    a.idle = a.idle or (10000 if q else 100000)
    a.idle_seconds = a.idle_seconds or (10.0 if q else 60.0)
    a.phases = [p for p in a.phases.split(",") if p]
    for p in a.phases:
        if p not in ("single", "burst", "idle"):
            ap.error("unknown phase %s" % p)
    a.workdir = os.path.abspath(a.workdir)
    if a.lib_dir:
        a.lib_dir = os.path.abspath(a.lib_dir)
    a.out = os.path.abspath(a.out or os.path.join(a.workdir, "results.jsonl"))
    a.shared = os.path.abspath(a.shared)
    if a.photod:
        a.photod = os.path.abspath(a.photod)
    os.makedirs(a.workdir, exist_ok=True)
    t_start = time.monotonic()
    run_id = time.strftime("%Y%m%dT%H%M%S")
    results = {"burst": []}
    failed = 0
    try:
        st = {"base": find_corpus(a, a.base), "burst": find_corpus(a, a.burst)}
        st["burst_files"] = ib.expected_files(st["burst"])
        if "idle" in a.phases:
            st["idle"] = find_corpus(a, a.idle)
            st["idle_files"] = ib.expected_files(st["idle"])
        ib.build(a)  # photod (release) and the limit probe (for the warm-up reads)
        prov = ib.provenance(a)
    except (BenchError, subprocess.CalledProcessError) as e:
        sys.exit("live-bench: %s" % e)
    log("%s (commit %s, %s modified source files), %d CPUs, load average %s; run %s" % (
        prov["photod_version"], prov["commit"], prov["sources_modified"], prov["nproc"],
        " ".join("%.2f" % x for x in prov["loadavg"]), run_id))
    with open(a.out, "a") as out:
        out.write(json.dumps({"run_id": run_id, "ts": time.strftime("%Y-%m-%dT%H:%M:%S"), "kind": "header",
                              "bench": "live", "provenance": prov, "args": vars(a)}) + "\n")

        def record(rec):
            nonlocal failed
            rec.update({"run_id": run_id, "ts": time.strftime("%Y-%m-%dT%H:%M:%S"), "bench": "live"})
            rec.setdefault("loadavg", os.getloadavg())
            out.write(json.dumps(rec, default=str) + "\n")
            out.flush()
            if rec.get("problem"):
                failed += 1
                log("  PROBLEM (%s): %s" % (rec["phase"], rec["problem"]))

        def guarded(name, fn, *args):
            try:
                return fn(*args)
            except (BenchError, subprocess.CalledProcessError, OSError, sqlite3.Error) as e:
                r = {"phase": name, "problem": "%s: %s" % (type(e).__name__, e)}
                record(r)
                return None

        for c in {st["base"], st["burst"]}:
            ib.warm_read(a, c)
        if "single" in a.phases:
            log("== single-file latency")
            r = guarded("single", phase_single, a, st)
            if r:
                record(r)
                results["single"] = r
                show_single(r)
        if "burst" in a.phases:
            log("== burst of %d files vs the initial index (%d rounds)" % (st["burst_files"], a.burst_rounds))
            cpdir = rundir(a, "initial-lib", library=True)
            try:
                st["initial_copy"] = os.path.join(cpdir, os.path.basename(st["burst"]))
                copy_tree(st["burst"], st["initial_copy"])
                for rnd in range(a.burst_rounds):
                    r = guarded("burst", phase_burst, a, st, rnd)
                    if r:
                        record(r)
                        results["burst"].append(r)
            finally:
                cleanup(a, cpdir)
            show_burst(results["burst"])
        if "idle" in a.phases:
            log("== idle CPU")
            ib.warm_read(a, st["idle"])
            r = guarded("idle", phase_idle, a, st)
            if r:
                record(r)
                results["idle"] = r
                show_idle(r)
        missed = summary(results)
        la = os.getloadavg()
        out.write(json.dumps({"run_id": run_id, "kind": "footer", "bench": "live", "loadavg_end": la,
                              "missed_targets": missed, "failed_phases": failed,
                              "seconds": round(time.monotonic() - t_start, 1)}) + "\n")
    log("")
    log("load average at start %s, at end %s" % (" ".join("%.2f" % x for x in prov["loadavg"]),
                                                 " ".join("%.2f" % x for x in la)))
    log("raw results: %s (run_id %s)" % (a.out, run_id))
    log("finished in %.0f s: %s; %s" % (time.monotonic() - t_start,
                                        "all targets met" if not missed else "%d target check(s) NOT met" % missed,
                                        "no problems" if not failed else "%d phase(s) with problems (exit 1)" % failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("live-bench: interrupted")
