#!/usr/bin/env python3
"""photod indexing benchmark: photod's initial index and restart next to the C floor
(`limit -j 2 index`, `limit index`) and minidlna (`minidlnad -R`), on the same synthetic
libraries, in the same run, warm cache, interleaved rounds. Python 3 standard library only.

  python3 Benchmarks/index-bench.py --quick          # smoke test: 2,000 files, 1 round (< 1 min)
  python3 Benchmarks/index-bench.py                  # 10,000 and 100,000 files, 3 rounds
  python3 Benchmarks/index-bench.py --report FILE    # tables again from a results.jsonl

Steps: (1) generate the libraries with ../shared/bench/make-corpus.py if absent (cached in
WORK/corpus; 100k files take ~2-5 min); (2) `swift build -c release --product photod` in the
repository and `cc -O2 ... limit.c`; (3) per library: a warm-up read of every file, one
unmeasured photod index (it also makes the database the restart runs reuse), then ROUNDS
rounds of every tool, the order rotated each round; (4) a table of medians, the ratios the
issue's targets are about, and every run as one JSON line in --out.

What is measured (wall: monotonic clock; CPU: user+sys; RSS: peak resident set):
  photod          fresh database and socket; photod --library C --database D --socket S
                  --timezone UTC; the end of the scan is its "scan finished" log line (or, with
                  --wait-mode status, library.status polled every --poll s until state ==
                  "idle" and lastScan is present); then one library.status call for lastScan.
                  files/s = lastScan.files / lastScan.seconds (the daemon's own wall time from
                  scan start to last commit). CPU and VmHWM are read from /proc/PID when the
                  end is noticed (startup + scan, not shutdown); the rusage after exit, the
                  busiest threads' CPU and the bytes written are kept in the JSON too.
  photod-restart  the same over an unchanged library and an existing database (made once per
                  library, unmeasured); asserts lastScan.readFiles == 0.
  limit-j2        limit -j 2 index C      (the issue's C floor: 2 threads, libexif with its
                                           default exif_data_fix, SQLite WAL, 50 rows/tx)
  limit-j2-F      limit -j 2 -F index C   (the same without exif_data_fix; what
                                           ../shared/bench/bench.py calls limit-index-j2)
  limit-1         limit index C           (one thread, for reference)
                  files/s = files / limit's own wall (from opening the database to closing it)
  minidlna        minidlnad -R -S on a generated minidlna.conf (media_dir=P,C; db and log in
                  a temp dir; loopback; random port); wall = process start -> exit of the
                  forked scanner process (as ../shared/bench/bench.py does); files = image
                  rows in its DETAILS table; CPU = main + scanner; RSS = the larger of both.

Exit status: 0 when every run worked (missed targets are reported, not failures); 1 when a
run failed or a restart re-read files; other values when the benchmark could not run.
"""
import argparse
import datetime
import json
import os
import random
import re
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DEFAULT_SHARED = os.path.normpath(os.path.join(REPO, "..", "shared", "bench"))
MINIDLNAD = shutil.which("minidlnad") or "/usr/sbin/minidlnad"
TICK = os.sysconf("SC_CLK_TCK")

ALL_TOOLS = ["photod", "photod-restart", "limit-j2", "limit-j2-F", "limit-1", "minidlna"]
LIMIT_ARGS = {"limit-j2": ["-j", "2"], "limit-j2-F": ["-j", "2", "-F"], "limit-1": []}

# Targets from issue 2 ("Speed and memory"), warm cache, 100,000 files.
TARGET_VS_LIMIT = 0.50      # photod initial files/s >= 50 % of limit -j 2 index
TARGET_VS_MINIDLNA = 5.0    # >= 5x minidlna
TARGET_RESTART = 200_000    # files/s, restart over an unchanged library
TARGET_RSS_MB = 100.0       # peak RSS, and flat as the library grows
# "flat": peak RSS at the largest size at most this many MB above the smallest. photod's
# SQLite caches are bounded (writer cache_size 16 MB, each reader 8 MB) but only fill once
# the database is bigger than them, so some growth from 10k to 100k files is expected;
# holding the library in memory would show as growth beyond that (and keep growing).
FLAT_RSS_MB = 25.0


def log(*a):
    print(*a, flush=True)


class BenchError(Exception):
    pass


# ---------------------------------------------------------------- small helpers
def proc_stat(pid):
    """(state, utime+stime seconds) of a live process, from /proc/PID/stat."""
    with open("/proc/%d/stat" % pid) as f:
        tail = f.read().rsplit(")", 1)[1].split()
    return tail[0], (int(tail[11]) + int(tail[12])) / TICK


def proc_status_kb(pid, key):
    with open("/proc/%d/status" % pid) as f:
        m = re.search(r"^%s:\s+(\d+)\s+kB" % key, f.read(), re.M)
    return int(m.group(1)) if m else 0


def proc_io(pid):
    try:
        with open("/proc/%d/io" % pid) as f:
            return {k: int(v) for k, v in (l.split(": ") for l in f.read().splitlines() if ": " in l)}
    except (OSError, ValueError):
        return {}


def sample_threads(pid, acc):
    """acc[tid] = CPU seconds of each thread of pid so far (threads that exit keep their last value)."""
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return
    for t in tids:
        try:
            with open("/proc/%d/task/%s/stat" % (pid, t)) as f:
                tail = f.read().rsplit(")", 1)[1].split()
            acc[int(t)] = (int(tail[11]) + int(tail[12])) / TICK
        except (OSError, IndexError, ValueError):
            pass


def children(pid, comm=None):
    """pids whose parent is pid, optionally only those named comm (scans /proc)."""
    out = []
    for e in os.listdir("/proc"):
        if not e.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % e) as f:
                txt = f.read()
            head, tail = txt.rsplit(")", 1)
            if int(tail.split()[1]) == pid and (comm is None or head.split("(", 1)[1] == comm):
                out.append(int(e))
        except (OSError, ValueError, IndexError):
            pass
    return out


def cpu_busy():
    """Busy CPU seconds of the whole machine (all CPUs), from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (v[0] + v[1] + v[2] + v[5] + v[6]) / TICK


def reap(p):
    """Wait for a Popen child with wait4: (exit code, rusage)."""
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, ru


def kill_quietly(p):
    if p is not None and p.returncode is None:
        try:
            p.kill()
        except OSError:
            pass
        try:
            reap(p)
        except ChildProcessError:
            pass


def tail_of(path, n=1500):
    try:
        with open(path, errors="replace") as f:
            return f.read()[-n:]
    except OSError:
        return ""


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


# ---------------------------------------------------------------- JSON-RPC client
class Rpc:
    """A tiny JSON-RPC 2.0 client over a Unix stream socket, one JSON object per line."""

    def __init__(self, path, timeout=10.0):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(timeout)
        self.s.connect(path)
        self.buf = b""
        self.next_id = 1

    def call(self, method, params=None):
        req = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            req["params"] = params
        self.next_id += 1
        self.s.sendall(json.dumps(req).encode() + b"\n")
        while b"\n" not in self.buf:
            chunk = self.s.recv(65536)
            if not chunk:
                raise ConnectionError("photod closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        msg = json.loads(line)
        if "error" in msg:
            raise BenchError("%s: %s" % (method, msg["error"]))
        return msg["result"]

    def close(self):
        self.s.close()


# ---------------------------------------------------------------- preparation
def corpus_path(work, n, size, seed):
    return os.path.join(work, "corpus", "lib-%d-%s-s%d" % (n, size, seed))


def ensure_corpus(a, n):
    d = corpus_path(a.workdir, n, a.file_size, a.seed)
    if os.path.isdir(d):
        log("corpus %s: cached" % d)
        return d
    partial = d + ".partial"
    shutil.rmtree(partial, ignore_errors=True)
    log("corpus %s: generating %d files of %s (seed %d) ..." % (d, n, a.file_size, a.seed))
    t0 = time.monotonic()
    gen = os.path.join(a.shared, "make-corpus.py")
    if not os.path.exists(gen):
        raise BenchError("%s not found (--shared DIR)" % gen)
    r = subprocess.run([sys.executable, gen, partial, str(n), "--seed", str(a.seed), "--size", a.file_size,
                        "--manifest", d + ".manifest.tsv"])
    if r.returncode != 0:
        raise BenchError("make-corpus.py failed (exit %s)" % r.returncode)
    os.rename(partial, d)  # only a complete corpus gets the final name
    log("corpus %s: generated in %.0f s" % (d, time.monotonic() - t0))
    return d


def expected_files(d):
    """Files in the corpus, from its manifest (one header line)."""
    try:
        with open(d + ".manifest.tsv") as f:
            return sum(1 for _ in f) - 1
    except OSError:
        return None


def build(a):
    if a.photod:
        if not os.access(a.photod, os.X_OK):
            raise BenchError("--photod %s is not executable" % a.photod)
    else:
        a.photod = os.path.join(REPO, ".build", "release", "photod")
        if not a.no_build:
            # Others may be editing the tree: SwiftPM refuses a source modified during the
            # build ("was modified during the build"); try again a few times.
            for attempt in range(1, 6):
                log("build: swift build -c release --product photod (in %s), attempt %d" % (REPO, attempt))
                t0 = time.monotonic()
                try:
                    r = subprocess.run(["swift", "build", "-c", "release", "--product", "photod"], cwd=REPO,
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                except FileNotFoundError:
                    raise BenchError("swift is not on PATH (or use --no-build / --photod PATH)")
                if r.returncode == 0:
                    log("build: done in %.0f s" % (time.monotonic() - t0))
                    break
                log(r.stdout[-3000:])
                if "modified during the build" not in r.stdout or attempt == 5:
                    raise BenchError("swift build -c release failed (use --no-build or --photod PATH "
                                     "to benchmark an existing binary)")
                time.sleep(5)
        if not os.access(a.photod, os.X_OK):
            raise BenchError("no release binary at %s" % a.photod)
    a.limit = os.path.join(a.workdir, "limit")
    src = os.path.join(a.shared, "limit.c")
    if not os.path.exists(a.limit) or os.path.getmtime(a.limit) < os.path.getmtime(src):
        if not os.path.exists(src):
            raise BenchError("%s not found (--shared DIR)" % src)
        log("build: cc -O2 -o %s %s -lexif -lsqlite3 -lpthread" % (a.limit, src))
        if subprocess.run(["cc", "-O2", "-o", a.limit, src, "-lexif", "-lsqlite3", "-lpthread"]).returncode != 0:
            raise BenchError("cannot build limit (needs cc, libexif-dev, libsqlite3-dev)")


def provenance(a):
    def sh(cmd, cwd=REPO):
        try:
            return subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return None
    dirty = sh(["git", "status", "--porcelain", "--", "Sources", "Package.swift"])
    return {"commit": sh(["git", "rev-parse", "--short", "HEAD"]),
            "sources_modified": len(dirty.splitlines()) if dirty is not None else None,
            "photod": a.photod, "photod_version": sh([a.photod, "--version"]),
            "photod_mtime": datetime.datetime.fromtimestamp(os.path.getmtime(a.photod)).isoformat(timespec="seconds"),
            "nproc": os.cpu_count(), "kernel": os.uname().release, "loadavg": os.getloadavg(),
            "host": socket.gethostname()}


def warm_read(a, corpus):
    """Read every file once (limit read: open + read 64 KiB + close) and every directory."""
    t0 = time.monotonic()
    r = subprocess.run([a.limit, "-q", "read", corpus], stdout=subprocess.PIPE, text=True, check=True)
    log("warm-up: read pass over %s in %.1f s (%s)" % (corpus, time.monotonic() - t0, r.stdout.strip()))


def rundir(a, prefix):
    base = a.db_dir or os.path.join(a.workdir, "runs")
    os.makedirs(base, exist_ok=True)
    return tempfile.mkdtemp(prefix=prefix + "-", dir=base)


# ---------------------------------------------------------------- photod
SCAN_FINISHED = re.compile(rb"scan finished")


def run_photod(a, corpus, db, tmp):
    """Start photod on corpus with database db, wait until its scan is over, stop it; return
    a record.

    How the end is noticed (--wait-mode):
      log     (default) watch photod's stderr for its "scan finished" line (it is logged
              right after the state turns idle), sample CPU and VmHWM, then ask
              library.status once for lastScan. library.status also runs as a fallback
              every --fallback-poll seconds, in case the log line changes.
      status  ask library.status every --poll seconds until state == "idle" and lastScan is
              present. Beware: library.status counts rows with full-table GROUP BY queries
              (O(library) per call: ~5 ms CPU at 10k files, ~65 ms at 100k), so fast
              polling slows the scan it measures and adds to its CPU time.
    """
    sock = os.path.join(tmp, "photod.sock")
    if len(sock.encode()) > 100:  # sun_path holds 108 bytes
        sock = os.path.join(tempfile.mkdtemp(prefix="pb-", dir="/tmp"), "s")
    logf = os.path.join(tmp, "photod.log")
    cmd = [a.photod, "--library", corpus, "--database", db, "--socket", sock, "--timezone", "UTC"]
    if a.workers:
        cmd += ["--workers", str(a.workers)]
    cmd += a.photod_arg
    rec = {"cmd": cmd}
    p = None
    rpc = None
    log_mode = a.wait_mode == "log"
    interval = a.poll
    try:
        with open(logf, "wb") as lf:
            t0 = time.monotonic()
            p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=lf, stderr=lf)
        lr = open(logf, "rb")
        logbuf = b""
        t_answer = None
        status = None
        polls = 0
        next_poll = t0 if not log_mode else t0 + a.fallback_poll
        deadline = t0 + a.timeout
        sampled = None
        via = None
        thread_cpu = {}
        while True:
            sample_threads(p.pid, thread_cpu)
            if p.poll() is not None:
                raise BenchError("photod exited with %s before the scan finished:\n%s" % (p.returncode, tail_of(logf)))
            now = time.monotonic()
            if now > deadline:
                raise BenchError("photod not idle after %d s (last status %s)" % (a.timeout, status))
            seen_line = False
            if log_mode and sampled is None:
                chunk = lr.read()
                if chunk:
                    logbuf = (logbuf + chunk)[-4096:]
                    seen_line = bool(SCAN_FINISHED.search(logbuf))
            if seen_line and sampled is None:
                # The scan is over: sample before the status call (which costs CPU itself).
                sampled = (time.monotonic(), proc_stat(p.pid)[1], proc_status_kb(p.pid, "VmHWM"))
                via = "log"
            if sampled is not None or now >= next_poll:
                try:
                    if rpc is None:
                        rpc = Rpc(sock)
                    status = rpc.call("library.status")
                    polls += 1
                    if t_answer is None:
                        t_answer = time.monotonic()
                    if status.get("state") == "idle" and status.get("lastScan"):
                        if sampled is None:
                            sampled = (time.monotonic(), proc_stat(p.pid)[1], proc_status_kb(p.pid, "VmHWM"))
                            via = "status"
                        break
                except (FileNotFoundError, ConnectionRefusedError, ConnectionError, BrokenPipeError, socket.timeout):
                    if rpc is not None:
                        rpc.close()
                        rpc = None
                next_poll = time.monotonic() + (a.fallback_poll if log_mode else a.poll)
            time.sleep(0.02 if log_mode else min(interval, 0.02))
        lr.close()
        t_idle, cpu_idle, hwm_kb = sampled
        rss_kb = proc_status_kb(p.pid, "VmRSS")
        io = proc_io(p.pid)
        threads = len(os.listdir("/proc/%d/task" % p.pid))
        rpc.close()
        rpc = None
        p.send_signal(signal.SIGTERM)
        rc, ru = reap(p)
        t_exit = time.monotonic()
    except BaseException:
        if rpc is not None:
            rpc.close()
        kill_quietly(p)
        raise
    last = status["lastScan"]
    files = last.get("files")
    seconds = last.get("seconds")
    rec.update({
        "rc": rc, "files": files, "scan_s": seconds,
        "files_per_s": files / seconds if files and seconds else None,
        "wall": t_idle - t0,  # spawn -> end of scan noticed
        "cpu": cpu_idle, "maxrss_mb": hwm_kb / 1024,
        "extra": {"readFiles": last.get("readFiles"), "errors": last.get("errors"),
                  "removedFiles": last.get("removedFiles"),
                  "counts": status.get("counts"), "pipeline": status.get("pipeline"),
                  "wait_mode": a.wait_mode, "end_seen_via": via, "status_calls": polls,
                  "first_answer_s": round(t_answer - t0, 4) if t_answer else None,
                  "threads_at_idle": threads,
                  # CPU seconds of the busiest threads (sampled every 20 ms while the scan ran;
                  # the reader and writer threads exit when it ends)
                  "thread_cpu_s": sorted((round(v, 2) for v in thread_cpu.values()), reverse=True)[:8],
                  # bytes through read(2)/write(2) and their counts (SQLite's WAL and checkpoints are
                  # most of wchar_mb)
                  "rchar_mb": round(io.get("rchar", 0) / 2**20, 1), "wchar_mb": round(io.get("wchar", 0) / 2**20, 1),
                  "syscr": io.get("syscr"), "syscw": io.get("syscw"), "rss_at_idle_mb": round(rss_kb / 1024, 1),
                  "shutdown_s": round(t_exit - t_idle, 3),
                  "rusage_cpu": round(ru.ru_utime + ru.ru_stime, 3), "rusage_user": round(ru.ru_utime, 3),
                  "rusage_sys": round(ru.ru_stime, 3), "rusage_maxrss_mb": round(ru.ru_maxrss / 1024, 1),
                  "log_tail": tail_of(logf, 400) if rc != 0 else None},
    })
    if rc != 0:
        rec["problem"] = "photod exited with %s after SIGTERM" % rc
    return rec


def t_photod(a, corpus, state):
    tmp = rundir(a, "photod")
    try:
        return run_photod(a, corpus, os.path.join(tmp, "photod.db"), tmp)
    finally:
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)


def t_photod_restart(a, corpus, state):
    base = state.get("restart_db")
    if base is None:
        raise BenchError("no restart database (the unmeasured initial run failed)")
    tmp = rundir(a, "photod-restart")
    try:
        rec = run_photod(a, corpus, base, tmp)
    finally:
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    if rec["extra"]["readFiles"] != 0:
        rec["problem"] = "restart re-read %s files (expected 0)" % rec["extra"]["readFiles"]
    return rec


def prepare_restart_db(a, corpus, state):
    """One unmeasured initial index (also warms photod up); its database is what every
    photod-restart run of this corpus starts from."""
    d = os.path.join(a.db_dir or a.workdir, "restart-db", os.path.basename(corpus))
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    rec = run_photod(a, corpus, os.path.join(d, "photod.db"), d)
    state["restart_db"] = os.path.join(d, "photod.db")
    log("warm-up: photod initial index (unmeasured; makes the restart database): files=%s scan=%.2fs "
        "files/s=%.0f cpu=%.2fs rss=%.1fMB" % (rec["files"], rec["scan_s"], rec["files_per_s"] or 0,
                                               rec["cpu"], rec["maxrss_mb"]))
    return rec


# ---------------------------------------------------------------- limit (the C floor)
def t_limit(args):
    def run(a, corpus, state):
        tmp = rundir(a, "limit")
        cmd = [a.limit, "-q"] + args + ["-d", os.path.join(tmp, "limit.db"), "index", corpus]
        try:
            errf = os.path.join(tmp, "stderr")
            with open(errf, "wb") as ef:
                t0 = time.monotonic()
                p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=ef)
                out = p.stdout.read().decode(errors="replace")
                p.stdout.close()
                rc, ru = reap(p)
                wall = time.monotonic() - t0
            kv = dict(x.split("=", 1) for x in out.split() if "=" in x)
            files = int(kv.get("files", 0)) or None
            own = float(kv["wall"]) if "wall" in kv else None
            rec = {"cmd": cmd, "rc": rc, "files": files, "scan_s": own,
                   "files_per_s": files / own if files and own else None, "wall": wall,
                   "cpu": ru.ru_utime + ru.ru_stime, "maxrss_mb": ru.ru_maxrss / 1024,
                   "extra": {k: kv[k] for k in ("exif", "date", "gps", "err", "dirs") if k in kv}}
            if rc != 0:
                rec["problem"] = "limit exited with %s: %s" % (rc, tail_of(errf, 400))
            return rec
        finally:
            if not a.keep:
                shutil.rmtree(tmp, ignore_errors=True)
    return run


# ---------------------------------------------------------------- minidlna
def t_minidlna(a, corpus, state):
    """minidlnad -R (full rebuild into an empty db_dir). The daemon forks a scanner process;
    the scan is over when that process exits (after its 'Scanning ... finished' log line it
    still builds indexes), which is what ../shared/bench/bench.py measures too."""
    if not os.access(MINIDLNAD, os.X_OK):
        raise BenchError("minidlnad not found (Debian package minidlna)")
    tmp = rundir(a, "minidlna")
    work = tmp
    os.makedirs(work + "/db")
    os.makedirs(work + "/log")
    port = 8200 + random.randrange(1000, 20000)
    conf = work + "/minidlna.conf"
    with open(conf, "w") as f:
        f.write("media_dir=P,%s\ndb_dir=%s/db\nlog_dir=%s/log\ninotify=no\nport=%d\n"
                "network_interface=lo\nfriendly_name=photod-bench\n" % (corpus, work, work, port))
    cmd = [MINIDLNAD, "-R", "-S", "-f", conf, "-P", work + "/minidlna.pid"]
    p = None
    try:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=open(work + "/log/stderr", "wb"))
        scanner = None
        scanner_cpu = 0.0
        scanner_hwm = 0
        t_scan_end = None
        logp = work + "/log/minidlna.log"
        logtxt = ""
        lf = None
        finished = re.compile(r"Scanning .* finished \(\d+ files\)")
        while True:
            now = time.monotonic()
            if p.poll() is not None:
                raise BenchError("minidlnad exited (%s) before its scan ended:\n%s%s" % (
                    p.returncode, tail_of(work + "/log/stderr", 600), tail_of(logp, 600)))
            if now - t0 > a.timeout:
                raise BenchError("minidlna scan not finished after %d s" % a.timeout)
            if lf is None and os.path.exists(logp):
                lf = open(logp, errors="replace")
            if lf is not None:
                logtxt = (logtxt + lf.read())[-20000:]
            if scanner is None:
                kids = children(p.pid, "minidlnad")
                if kids:
                    scanner = kids[0]
                    scanner_cpu, scanner_hwm = 0.0, 0
                elif now - t0 > 30:
                    raise BenchError("minidlnad started no scanner process in 30 s")
            if scanner is not None:
                try:
                    st, c = proc_stat(scanner)
                    if st in ("Z", "X"):
                        raise OSError("exited")
                    scanner_cpu = c
                    scanner_hwm = max(scanner_hwm, proc_status_kb(scanner, "VmHWM"))
                except (OSError, IndexError, ValueError):
                    if lf is not None:
                        logtxt = (logtxt + lf.read())[-20000:]
                    if finished.search(logtxt):
                        t_scan_end = time.monotonic()
                        break
                    # Not the scanner: with -R minidlnad first runs system("rm -rf ..."),
                    # whose forked child is named minidlnad until it execs sh.
                    scanner = None
            time.sleep(0.01)
        if lf is not None:
            lf.close()
        _, main_cpu = proc_stat(p.pid)
        main_hwm = proc_status_kb(p.pid, "VmHWM")
        p.send_signal(signal.SIGTERM)
        rc, ru = reap(p)
    except BaseException:
        kill_quietly(p)
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        raise
    files = details = None
    try:
        c = sqlite3.connect(work + "/db/files.db")
        files = c.execute("select count(*) from DETAILS where MIME like 'image/%'").fetchone()[0]
        details = c.execute("select count(*) from DETAILS").fetchone()[0]
        c.close()
    except sqlite3.Error:
        pass
    if not a.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    wall = t_scan_end - t0
    # minidlnad reaps its scanner with waitpid, so the daemon's rusage includes the scanner;
    # the /proc samples (scanner: last one before it exited, 10 ms polling) are a cross-check.
    cpu_sampled = main_cpu + scanner_cpu
    cpu_ru = ru.ru_utime + ru.ru_stime
    rec = {"cmd": cmd, "rc": 0 if files else 1, "files": files, "scan_s": wall,
           "files_per_s": files / wall if files else None, "wall": wall,
           "cpu": max(cpu_sampled, cpu_ru), "maxrss_mb": max(scanner_hwm, main_hwm, ru.ru_maxrss) / 1024,
           "extra": {"port": port, "details_rows": details, "scanner_cpu": round(scanner_cpu, 2),
                     "main_cpu": round(main_cpu, 2), "rusage_cpu": round(cpu_ru, 2),
                     "scanner_hwm_mb": round(scanner_hwm / 1024, 1),
                     "finished_log": (finished.search(logtxt) or [None])[0]}}
    if not files:
        rec["problem"] = "minidlna indexed no image (log: %s)" % logtxt[-400:]
    return rec


TOOLS = {"photod": t_photod, "photod-restart": t_photod_restart, "minidlna": t_minidlna}
for _name, _args in LIMIT_ARGS.items():
    TOOLS[_name] = t_limit(_args)


# ---------------------------------------------------------------- the matrix
def measure(a, name, corpus, tool, rnd, state, run_id, expected, out):
    la = os.getloadavg()[0]
    b0 = cpu_busy()
    try:
        r = TOOLS[tool](a, corpus, state)
    except BenchError as e:
        r = {"rc": None, "files": None, "files_per_s": None, "problem": str(e)}
    b1 = cpu_busy()
    rec = {"run_id": run_id, "ts": time.strftime("%Y-%m-%dT%H:%M:%S"), "corpus": name, "dir": corpus,
           "expected_files": expected, "tool": tool, "round": rnd}
    rec.update(r)
    for k in ("scan_s", "files_per_s", "wall", "cpu", "maxrss_mb"):
        if rec.get(k) is not None:
            rec[k] = round(rec[k], 4 if k in ("scan_s", "wall") else 2)
    if rec.get("cpu") is not None:
        # CPU burnt on this machine by anything else during the run (other builds...).
        rec["foreign_cpu_s"] = round(max(0.0, (b1 - b0) - rec["cpu"]), 2)
    rec["loadavg1"] = la
    if expected and rec.get("files") not in (None, expected):
        rec.setdefault("problem", "saw %s files, the corpus has %s" % (rec.get("files"), expected))
    out.write(json.dumps(rec) + "\n")
    out.flush()
    fps = rec.get("files_per_s")
    log("  %-8s r%d %-15s files=%-7s files/s=%-8s scan=%-8s cpu=%-7s rss=%-6s foreign_cpu=%s load=%.2f%s" % (
        name, rnd, tool, rec.get("files"), "%.0f" % fps if fps else "-",
        "%.3fs" % rec["scan_s"] if rec.get("scan_s") is not None else "-",
        "%.2fs" % rec["cpu"] if rec.get("cpu") is not None else "-",
        "%.1fMB" % rec["maxrss_mb"] if rec.get("maxrss_mb") is not None else "-",
        rec.get("foreign_cpu_s"), la, ("   PROBLEM: " + rec["problem"]) if rec.get("problem") else ""))
    return rec


def run_matrix(a):
    os.makedirs(a.workdir, exist_ok=True)
    run_id = time.strftime("%Y%m%dT%H%M%S")
    corpora = [(n, ensure_corpus(a, n)) for n in a.sizes]
    build(a)
    prov = provenance(a)
    log("%s (commit %s, %s modified source files), %d CPUs, load average %s" % (
        prov["photod_version"], prov["commit"], prov["sources_modified"], prov["nproc"],
        " ".join("%.2f" % x for x in prov["loadavg"])))
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    records = []
    with open(a.out, "a") as out:
        out.write(json.dumps({"run_id": run_id, "ts": time.strftime("%Y-%m-%dT%H:%M:%S"), "kind": "header",
                              "provenance": prov, "args": {k: v for k, v in vars(a).items()}}) + "\n")
        for n, corpus in corpora:
            name = "%dk" % (n // 1000) if n % 1000 == 0 else str(n)
            expected = expected_files(corpus)
            state = {}
            log("== %s: %s (%s files)" % (name, corpus, expected))
            warm_read(a, corpus)
            if "photod-restart" in a.tools or "photod" in a.tools:
                try:
                    w = prepare_restart_db(a, corpus, state)
                    out.write(json.dumps({"run_id": run_id, "kind": "warmup", "corpus": name, "tool": "photod",
                                          "files": w["files"], "scan_s": w["scan_s"], "cpu": w["cpu"],
                                          "maxrss_mb": w["maxrss_mb"]}) + "\n")
                except BenchError as e:
                    log("warm-up photod run failed: %s" % e)
            if a.warmup:
                for t in a.tools:
                    if t not in ("photod", "photod-restart"):
                        r = TOOLS[t](a, corpus, state)
                        log("warm-up: %s files/s=%.0f (discarded)" % (t, r.get("files_per_s") or 0))
            for rnd in range(a.rounds):
                k = rnd % len(a.tools)
                order = a.tools[k:] + a.tools[:k]
                for t in order:
                    records.append(measure(a, name, corpus, t, rnd, state, run_id, expected, out))
            if not a.keep and state.get("restart_db"):
                shutil.rmtree(os.path.dirname(state["restart_db"]), ignore_errors=True)
    log("")
    log("raw results: %s (run_id %s)" % (a.out, run_id))
    return report(records, prov)


# ---------------------------------------------------------------- report
def fmt(x, f="%.0f"):
    return "-" if x is None else f % x


def report(records, prov=None):
    """Print the table of medians and the target ratios; return the number of failed checks."""
    recs = [r for r in records if r.get("kind") is None]
    corpora = []
    for r in recs:
        if r["corpus"] not in corpora:
            corpora.append(r["corpus"])
    tools = [t for t in ALL_TOOLS if any(r["tool"] == t for r in recs)]
    g = {}
    for r in recs:
        g.setdefault((r["corpus"], r["tool"]), []).append(r)

    def med(c, t, k):
        return median([r.get(k) for r in g.get((c, t), []) if r.get("rc") == 0])

    if prov:
        log("%s, commit %s (%s modified source files); %s CPUs; load average at start %s" % (
            prov.get("photod_version"), prov.get("commit"), prov.get("sources_modified"), prov.get("nproc"),
            " ".join("%.2f" % x for x in prov.get("loadavg", []))))
    log("")
    log("| corpus | tool | runs ok | files | files/s median (range) | scan s | CPU s | CPU µs/file | "
        "peak RSS MB | foreign CPU s | load |")
    log("|---|---|---|---|---|---|---|---|---|---|---|")
    for c in corpora:
        for t in tools:
            rs = g.get((c, t), [])
            ok = [r for r in rs if r.get("rc") == 0]
            if not rs:
                continue
            fps = [r["files_per_s"] for r in ok if r.get("files_per_s")]
            files = max((r.get("files") or 0 for r in ok), default=0)
            cpu = median([r.get("cpu") for r in ok])
            log("| %s | %s | %d/%d | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                c, t, len(ok), len(rs), files or "-",
                "%s (%s–%s)" % (fmt(median(fps)), fmt(min(fps)), fmt(max(fps))) if fps else "-",
                fmt(med(c, t, "scan_s"), "%.3f"), fmt(cpu, "%.2f"),
                fmt(cpu / files * 1e6 if cpu is not None and files else None, "%.1f"),
                fmt(med(c, t, "maxrss_mb"), "%.1f"), fmt(med(c, t, "foreign_cpu_s"), "%.2f"),
                fmt(med(c, t, "loadavg1"), "%.2f")))
    problems = [r for r in recs if r.get("problem")]

    # A load-independent view: the files/s each tool could reach on idle cores, bounded by its
    # CPU time spread over the threads it can use, and by its busiest thread (photod: measured;
    # limit -j 2: 2 threads; limit index and minidlna's scanner: 1).
    ncpu = (prov or {}).get("nproc") or os.cpu_count() or 1
    par = {"limit-j2": 2, "limit-j2-F": 2, "limit-1": 1, "minidlna": 1}

    def bound(c, t):
        ok = [r for r in g.get((c, t), []) if r.get("rc") == 0 and r.get("cpu") and r.get("files")]
        v = []
        for r in ok:
            if t.startswith("photod"):
                busiest = ((r.get("extra") or {}).get("thread_cpu_s") or [0])[0]
                v.append(r["files"] / max(r["cpu"] / ncpu, busiest, 1e-9))
            else:
                v.append(r["files"] / (r["cpu"] / min(ncpu, par.get(t, 1))))
        return median(v)

    log("")
    log("CPU-bound estimate (load-independent): files/s on %d idle cores if the tool's CPU time were its only "
        "limit = files / max(CPU s / usable cores, busiest thread's CPU s); an upper bound, useful when "
        "foreign CPU is high" % ncpu)
    log("| corpus | " + " | ".join(tools) + " |")
    log("|---|" + "---|" * len(tools))
    for c in corpora:
        log("| %s | %s |" % (c, " | ".join(fmt(bound(c, t)) for t in tools)))

    pd = [(c, t) for c in corpora for t in ("photod", "photod-restart") if g.get((c, t))]
    if pd:
        log("")
        log("photod details (medians): wall from spawn to the end of the scan; the busiest thread's CPU "
            "(the writer, in an initial index); bytes written with write(2) (SQLite WAL + checkpoints)")
        log("| corpus | tool | wall s | scan s | CPU s | busiest thread CPU s | written MB | written KB/file | "
            "library.status calls |")
        log("|---|---|---|---|---|---|---|---|---|")
        for c, t in pd:
            ok = [r for r in g[(c, t)] if r.get("rc") == 0 and r.get("extra")]
            files = max((r.get("files") or 0 for r in ok), default=0)
            busiest = median([(r["extra"].get("thread_cpu_s") or [None])[0] for r in ok])
            w = median([r["extra"].get("wchar_mb") for r in ok])
            log("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                c, t, fmt(med(c, t, "wall"), "%.3f"), fmt(med(c, t, "scan_s"), "%.3f"), fmt(med(c, t, "cpu"), "%.2f"),
                fmt(busiest, "%.2f"), fmt(w, "%.1f"), fmt(w * 1024 / files if w is not None and files else None, "%.2f"),
                fmt(median([r["extra"].get("status_calls") for r in ok]), "%d")))

    # Ratios: within-round (same corpus, same round) medians, so slow phases of a noisy
    # machine hit both tools of a ratio alike.
    by_round = {(r["corpus"], r["round"], r["tool"]): r for r in recs if r.get("rc") == 0 and r.get("files_per_s")}

    def ratio(c, t1, t2):
        v = [by_round[(c, rnd, t1)]["files_per_s"] / by_round[(c, rnd, t2)]["files_per_s"]
             for (cc, rnd, tt) in by_round if cc == c and tt == t1 and (c, rnd, t2) in by_round]
        return median(v), v

    log("")
    log("Targets (issue 2; they apply to 100,000 files, warm cache; smaller corpora are shown for the trend):")
    log("| corpus | check | measured | target | verdict |")
    log("|---|---|---|---|---|")
    failed = 0

    def line(c, check, val, shown, target, ok):
        nonlocal failed
        if val is None:
            verdict = "n/a"
        elif ok:
            verdict = "ok"
        else:
            verdict = "MISSED"
            failed += 1
        log("| %s | %s | %s | %s | %s |" % (c, check, shown if val is not None else "-", target, verdict))

    for c in corpora:
        def est(check, value, threshold, target, shown):
            """An informational row: the same check on the CPU-bound estimates."""
            if value is not None:
                log("| %s | (CPU-bound estimate) %s | %s | %s | %s |" % (
                    c, check, shown(value), target, "est. ok" if value >= threshold else "est. missed"))

        def quotient(x, y):
            return x / y if x and y else None

        for base in ("limit-j2", "limit-j2-F"):
            m, v = ratio(c, "photod", base)
            line(c, "photod initial files/s ÷ `%s`" % LIMIT_CMD[base], m,
                 "%.0f %% (rounds: %s)" % (100 * m, ", ".join("%.0f" % (100 * x) for x in v)) if m else "",
                 "≥ %.0f %%" % (100 * TARGET_VS_LIMIT), m is not None and m >= TARGET_VS_LIMIT)
            est("photod ÷ `%s`" % LIMIT_CMD[base], quotient(bound(c, "photod"), bound(c, base)), TARGET_VS_LIMIT,
                "≥ %.0f %%" % (100 * TARGET_VS_LIMIT), lambda x: "%.0f %%" % (100 * x))
        m, v = ratio(c, "photod", "minidlna")
        line(c, "photod initial files/s ÷ minidlna -R", m,
             "%.1f× (rounds: %s)" % (m, ", ".join("%.1f" % x for x in v)) if m else "",
             "≥ %.0f×" % TARGET_VS_MINIDLNA, m is not None and m >= TARGET_VS_MINIDLNA)
        est("photod ÷ minidlna -R", quotient(bound(c, "photod"), bound(c, "minidlna")), TARGET_VS_MINIDLNA,
            "≥ %.0f×" % TARGET_VS_MINIDLNA, lambda x: "%.1f×" % x)
        rs = median([r["files_per_s"] for r in g.get((c, "photod-restart"), []) if r.get("rc") == 0 and r.get("files_per_s")])
        line(c, "photod restart files/s (unchanged library)", rs, fmt(rs), "≥ %d" % TARGET_RESTART,
             rs is not None and rs >= TARGET_RESTART)
        est("photod restart files/s", bound(c, "photod-restart"), TARGET_RESTART, "≥ %d" % TARGET_RESTART,
            lambda x: "%.0f" % x)
        for t in ("photod", "photod-restart"):
            rss = med(c, t, "maxrss_mb")
            line(c, "%s peak RSS" % t, rss, fmt(rss, "%.1f MB"), "< %.0f MB" % TARGET_RSS_MB,
                 rss is not None and rss < TARGET_RSS_MB)
    if len(corpora) >= 2:
        lo, hi = corpora[0], corpora[-1]
        for t in ("photod", "photod-restart"):
            a_, b_ = med(lo, t, "maxrss_mb"), med(hi, t, "maxrss_mb")
            if a_ and b_:
                line("%s→%s" % (lo, hi), "%s peak RSS growth" % t, b_ - a_,
                     "%.1f → %.1f MB (%+.1f MB)" % (a_, b_, b_ - a_),
                     "flat (≤ +%.0f MB: the SQLite caches)" % FLAT_RSS_MB, b_ - a_ <= FLAT_RSS_MB)
    if problems:
        log("")
        log("PROBLEMS (%d runs):" % len(problems))
        for r in problems:
            log("  %s r%s %s: %s" % (r["corpus"], r.get("round"), r["tool"], r["problem"]))
    return failed, len(problems)


LIMIT_CMD = {"limit-j2": "limit -j 2 index", "limit-j2-F": "limit -j 2 -F index", "limit-1": "limit index"}


def cmd_report(a):
    runs = {}
    headers = {}
    for fn in a.report:
        with open(fn) as f:
            for l in f:
                if l.strip():
                    r = json.loads(l)
                    if r.get("kind") == "header":
                        headers[r["run_id"]] = r.get("provenance")
                    elif r.get("kind") is None:
                        runs.setdefault(r.get("run_id"), []).append(r)
    ids = sorted(runs) if a.all_runs else sorted(runs)[-1:]
    bad = 0
    for rid in ids:
        log("### run %s" % rid)
        bad += report(runs[rid], headers.get(rid))[1]
        log("")
    return bad


# ---------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", default="/tmp/photod-bench",
                    help="corpora, the limit binary, temporary databases, results (default: %(default)s)")
    ap.add_argument("--sizes", default="10000,100000", help="library sizes in files (default: %(default)s)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default: %(default)s)")
    ap.add_argument("--tools", default=",".join(ALL_TOOLS), help="subset/order of: %s" % ",".join(ALL_TOOLS))
    ap.add_argument("--quick", action="store_true", help="smoke test: --sizes 2000 --rounds 1")
    ap.add_argument("--out", help="raw results, one JSON object per run, appended (default: WORK/results.jsonl)")
    ap.add_argument("--seed", type=int, default=1, help="make-corpus.py seed (default: %(default)s)")
    ap.add_argument("--file-size", default="20k", help="make-corpus.py --size (default: %(default)s)")
    ap.add_argument("--shared", default=DEFAULT_SHARED,
                    help="directory of make-corpus.py and limit.c (default: %(default)s)")
    ap.add_argument("--no-build", action="store_true", help="use the existing .build/release/photod")
    ap.add_argument("--photod", help="benchmark this photod binary instead of building one")
    ap.add_argument("--workers", type=int, help="photod --workers N (default: photod's own, one per core)")
    ap.add_argument("--photod-arg", action="append", default=[], help="extra photod argument (repeatable)")
    ap.add_argument("--warmup", action="store_true",
                    help="also one discarded run of every non-photod tool per library before the rounds")
    ap.add_argument("--wait-mode", choices=["log", "status"], default="log",
                    help="how the end of photod's scan is noticed: its 'scan finished' log line, then one "
                         "library.status call (default), or polling library.status every --poll s "
                         "(library.status is O(library size), so polling perturbs the scan)")
    ap.add_argument("--poll", type=float, default=0.02,
                    help="library.status poll interval with --wait-mode status, s (default: %(default)s)")
    ap.add_argument("--fallback-poll", type=float, default=30.0,
                    help="library.status interval with --wait-mode log, in case the log line is missed, s "
                         "(default: %(default)s)")
    ap.add_argument("--timeout", type=float, default=900, help="per-run timeout, s (default: %(default)s)")
    ap.add_argument("--db-dir", help="where the temporary databases go (default: WORK/runs; e.g. /dev/shm "
                                      "to see what the file system's write path costs)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary databases and logs in WORK/runs")
    ap.add_argument("--report", nargs="+", metavar="JSONL", help="only print the tables of the last run in these files")
    ap.add_argument("--all-runs", action="store_true", help="with --report: every run, not only the last")
    a = ap.parse_args()
    if a.report:
        sys.exit(1 if cmd_report(a) else 0)
    if a.quick:
        a.sizes, a.rounds = "2000", 1
    a.sizes = [int(x) for x in a.sizes.split(",") if x.strip()]
    a.tools = [t for t in a.tools.split(",") if t]
    for t in a.tools:
        if t not in TOOLS:
            ap.error("unknown tool %s (known: %s)" % (t, ", ".join(ALL_TOOLS)))
    a.workdir = os.path.abspath(a.workdir)
    a.out = os.path.abspath(a.out or os.path.join(a.workdir, "results.jsonl"))
    a.shared = os.path.abspath(a.shared)
    if a.photod:
        a.photod = os.path.abspath(a.photod)
    t0 = time.monotonic()
    try:
        missed, problems = run_matrix(a)
    except BenchError as e:
        sys.exit("index-bench: %s" % e)
    except KeyboardInterrupt:
        sys.exit("index-bench: interrupted")
    log("")
    log("finished in %.0f s: %s; %s" % (
        time.monotonic() - t0, "all targets met" if not missed else "%d target check(s) missed" % missed,
        "no run problems" if not problems else "%d run(s) with problems (exit status 1)" % problems))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
