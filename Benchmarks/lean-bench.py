#!/usr/bin/env python3
"""Issue 32's targets side by side, in one run, each measured from outside photod.

  python3 Benchmarks/lean-bench.py --photod STATIC [--rounds 3] [--package]
  python3 Benchmarks/lean-bench.py --photod STATIC --quick        # 10,000 and 50,000 files, one round: ~2 min

STATIC is a release build (the package's: `swift build -c release --product photod
--static-swift-stdlib`). The steps, in one process, one after the other:
1. `index-bench.py --tools photod,photod-restart,limit-j2-F` on its 20 KB corpus (100,000 files;
   --quick 10,000), interleaved rounds: the initial index against the C probe (`limit -j 2 -F
   index`), photod's CPU per file and its busiest thread's (the writer), the restart over the
   unchanged library.
2. The first index of `make-corpus.py --seed 11 --size 8k` at two sizes (100,000 and 1,000,000;
   --quick 10,000 and 50,000; corpora cached under WORKDIR/corpus as scale-bench.py caches them,
   or given with --small/--large), rounds alternating the sizes, each on a fresh database: the
   rate (`lastScan`), the peaks of RssAnon and RssFile (`/proc/PID/status` every 0.1 s), the
   bytes it wrote by then (`/proc/PID/io`: the WAL and its checkpoints so far), a page of a predicate, the moments and the folder albums, and
   VmHWM; a clean stop and the database file's size; then photod started again on that index:
   the same fetches, 20 s without a request (photod rests once quiet for ~10 s), and VmRSS,
   RssAnon and RssFile at rest.
3. `photod --version`: wall time from fork to exit, median of 20.
4. --package: `scripts/package --no-build` around STATIC: the .deb's size and its Installed-Size.
Prints one table, a row per target, with the medians and a verdict; appends every measurement to
WORKDIR/lean-results.jsonl. Python 3 standard library only.
"""
import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)


import siblings  # noqa: E402

sb = siblings.load("scale-bench.py")
fp = siblings.load("footprint.py")
ib = sb.ib


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def index_bench(a, size):
    """Step 1: index-bench.py's rounds; medians per tool from its JSON lines."""
    out = os.path.join(a.workdir, "lean-index.jsonl")
    before = os.path.getsize(out) if os.path.exists(out) else 0
    subprocess.run([sys.executable, os.path.join(HERE, "index-bench.py"), "--sizes", str(size), "--rounds", str(a.rounds),
                    "--tools", "photod,photod-restart,limit-j2-F", "--photod", a.photod, "--out", out,
                    "--workdir", a.workdir, "--shared", a.shared], check=True, stdout=sys.stderr)
    with open(out) as f:
        f.seek(before)
        runs = [json.loads(line) for line in f if line.strip()]
    by = {}
    for r in runs:
        if r.get("rc") == 0:
            by.setdefault(r["tool"], []).append(r)
    med = lambda tool, key: statistics.median(r[key] for r in by[tool])
    photod = by["photod"]
    return {
        "files_per_s": med("photod", "files_per_s"),
        "probe_files_per_s": med("limit-j2-F", "files_per_s"),
        "cpu_us_per_file": statistics.median(r["cpu"] / r["files"] * 1e6 for r in photod),
        "busiest_us_per_file": statistics.median(max(r["extra"]["thread_cpu_s"]) / r["files"] * 1e6 for r in photod),
        "restart_files_per_s": med("photod-restart", "files_per_s"),
    }


def proc_status(pid):
    return fp.status(pid)


def written_bytes(pid):
    with open(f"/proc/{pid}/io") as f:
        for line in f:
            if line.startswith("write_bytes:"):
                return int(line.split()[1])
    return 0


def fetches(d):
    """A client's first look: a predicate page, the moments, the folder albums (four times)."""
    for _ in range(4):
        d.call("assets.fetch", {"predicate": 'mediaType == "image" AND pixelWidth >= 400', "sort": "-localDateTime", "limit": 100})
        d.call("moments.fetch", {"limit": 100})
        d.call("albums.fetch", {"limit": 100})


def first_index(a, library, expected):
    """Step 2, one round: a fresh database over `library`."""
    work = tempfile.mkdtemp(prefix="lean-", dir=a.workdir)
    try:
        db = os.path.join(work, "p.db")
        d = fp.Photod(a.photod, library, db, work)
        peak = {"RssAnon": 0.0, "RssFile": 0.0}
        last = 0.0
        while True:
            st = proc_status(d.p.pid)
            for k in peak:
                peak[k] = max(peak[k], st[k])
            if time.monotonic() - last > 1:
                s = d.call("library.status")
                last = time.monotonic()
                if s["state"] == "idle" and s.get("lastScan"):
                    break
            time.sleep(0.1)
        scan = s["lastScan"]
        if scan["files"] != expected:
            raise SystemExit(f"lean-bench: {library}: the scan saw {scan['files']} files, {expected} expected")
        r = {"files": scan["files"], "files_per_s": scan["files"] / scan["seconds"], "vmhwm_mb": proc_status(d.p.pid)["VmHWM"],
             "peak_anon_mb": peak["RssAnon"], "peak_file_mb": peak["RssFile"], "written_bytes": written_bytes(d.p.pid)}
        fetches(d)
        r["vmhwm_after_fetches_mb"] = proc_status(d.p.pid)["VmHWM"]
        d.stop()
        r["database_bytes"] = os.path.getsize(db)
        # Started again on that index, as a box runs it: the fetches, then quiet, then its RSS.
        d = fp.Photod(a.photod, library, db, work)
        d.wait_idle()
        fetches(d)
        time.sleep(a.quiet)
        st = proc_status(d.p.pid)
        r.update(rest_rss_mb=st["VmRSS"], rest_anon_mb=st["RssAnon"], rest_file_mb=st["RssFile"])
        d.stop()
        return r
    finally:
        shutil.rmtree(work, ignore_errors=True)


def version_ms(a):
    return statistics.median(fp.version_run(a.photod) for _ in range(20))


def package(a):
    """Step 4: the .deb around STATIC (scripts/package takes the binaries from the static build directory)."""
    out = tempfile.mkdtemp(prefix="lean-package-", dir=a.workdir)
    try:
        subprocess.run([os.path.join(ROOT, "scripts", "package"), "--no-build", "--out", out], check=True, stdout=sys.stderr)
        debs = [f for f in os.listdir(out) if f.startswith("photod_") and f.endswith(".deb")]
        if not debs:
            raise SystemExit("lean-bench: scripts/package made no photod_*.deb")
        deb = os.path.join(out, debs[0])
        installed = subprocess.run(["dpkg-deb", "-f", deb, "Installed-Size"], capture_output=True, text=True, check=True)
        return {"deb_bytes": os.path.getsize(deb), "installed_bytes": int(installed.stdout.strip()) * 1024}
    finally:
        shutil.rmtree(out, ignore_errors=True)


def verdict(ok):
    return "met" if ok else "not met"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--photod", required=True, help="the static release build to measure")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="10,000 and 50,000 files, one round (the targets are for 100k and 1M)")
    ap.add_argument("--small", help="the smaller make-corpus.py --seed 11 --size 8k library (default: made and cached)")
    ap.add_argument("--large", help="the larger one")
    ap.add_argument("--quiet", type=float, default=20.0, help="seconds without a request before the RSS at rest")
    ap.add_argument("--package", action="store_true", help="also build the .deb around the binaries (scripts/package --no-build)")
    ap.add_argument("--workdir", default="/tmp/photod-bench")
    ap.add_argument("--shared", default=ib.DEFAULT_SHARED)
    a = ap.parse_args()
    a.photod = os.path.abspath(a.photod)
    if a.quick:
        a.rounds = 1
    os.makedirs(a.workdir, exist_ok=True)
    small_n, large_n = (10_000, 50_000) if a.quick else (100_000, 1_000_000)

    def corpus(path, n):
        if path:
            return path, ib.expected_files(path) if os.path.exists(path + ".manifest.tsv") else n
        return sb.ensure_corpus(SimpleNamespace(workdir=a.workdir, shared=a.shared), n)

    small, small_expected = corpus(a.small, small_n)
    large, large_expected = corpus(a.large, large_n)
    started = datetime.datetime.now().isoformat(timespec="seconds")
    load0 = os.getloadavg()

    log(f"lean-bench: index-bench.py at {small_n} files, {a.rounds} round(s)")
    idx = index_bench(a, small_n)
    rounds = []
    for i in range(a.rounds):
        for name, lib, expected in ([("small", small, small_expected), ("large", large, large_expected)][:: 1 if i % 2 == 0 else -1]):
            log(f"lean-bench: round {i + 1}, first index of {lib}")
            r = first_index(a, lib, expected)
            r.update(size=name, round=i + 1)
            rounds.append(r)
    med = lambda size, key: statistics.median(r[key] for r in rounds if r["size"] == size)
    ver = version_ms(a)
    pkg = package(a) if a.package else None

    S, L = "small", "large"
    ratio = med(L, "files_per_s") / med(S, "files_per_s")
    written = med(S, "written_bytes") / med(S, "database_bytes")
    rows = [
        ("initial index ÷ `limit -j 2 -F index`", f"{idx['files_per_s']:,.0f} files/s ÷ {idx['probe_files_per_s']:,.0f} = "
         f"{idx['files_per_s'] / idx['probe_files_per_s']:.2f}×", "≥ 1.0×", idx["files_per_s"] >= idx["probe_files_per_s"]),
        ("CPU per file, whole process", f"{idx['cpu_us_per_file']:.1f} µs", "≤ 40 µs", idx["cpu_us_per_file"] <= 40),
        ("busiest thread (the writer) per file", f"{idx['busiest_us_per_file']:.1f} µs", "≤ 15 µs", idx["busiest_us_per_file"] <= 15),
        (f"bytes written by idle ÷ final database, {small_n:,}",
         f"{written:.2f}× ({med(S, 'written_bytes') / 1e6:.0f} MB, {med(S, 'database_bytes') / 1e6:.1f} MB)",
         "≤ 2×", written <= 2),
        ("restart over the unchanged library", f"{idx['restart_files_per_s']:,.0f} files/s", "≥ 400,000",
         idx["restart_files_per_s"] >= 400_000),
        (f"{large_n:,}-file index ÷ {small_n:,}-file rate", f"{ratio:.2f} ({med(L, 'files_per_s'):,.0f} ÷ {med(S, 'files_per_s'):,.0f})",
         "≥ 0.85×", ratio >= 0.85),
        (f"VmHWM while indexing {large_n:,}, fetches included", f"{med(L, 'vmhwm_after_fetches_mb'):.1f} MiB (anonymous at its "
         f"peak {med(L, 'peak_anon_mb'):.1f}, file pages {med(L, 'peak_file_mb'):.1f})", "≤ 35 MB",
         med(L, "vmhwm_after_fetches_mb") <= 35 * 1e6 / 2**20),
        (f"VmRSS at rest after the fetches, {small_n:,}", f"{med(S, 'rest_rss_mb'):.1f} MiB (anonymous {med(S, 'rest_anon_mb'):.1f})",
         "≤ 30 MB", med(S, "rest_rss_mb") <= 30 * 1e6 / 2**20),
        (f"growth at rest from {small_n:,} to {large_n:,}", f"{med(L, 'rest_rss_mb') - med(S, 'rest_rss_mb'):.1f} MiB", "≤ 5 MB",
         med(L, "rest_rss_mb") - med(S, "rest_rss_mb") <= 5 * 1e6 / 2**20),
        ("`photod --version`, fork to exit", f"{ver:.1f} ms", "≤ 20 ms", ver <= 20),
    ]
    if pkg:
        rows += [("`photod_*.deb`", f"{pkg['deb_bytes'] / 1e6:.1f} MB", "≤ 12 MB", pkg["deb_bytes"] <= 12e6),
                 ("installed", f"{pkg['installed_bytes'] / 1e6:.1f} MB", "≤ 40 MB", pkg["installed_bytes"] <= 40e6)]
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    load1 = os.getloadavg()
    print(f"\nlean-bench at {commit}, {started}, {a.rounds} round(s), load {load0[0]:.2f} at the start and {load1[0]:.2f} at the end"
          + (" (--quick: the targets are for 100,000 and 1,000,000 files)" if a.quick else ""))
    print("| target | measured (medians) | target | |\n|---|---|---|---|")
    for name, measured, target, ok in rows:
        print(f"| {name} | {measured} | {target} | {verdict(ok)} |")
    with open(os.path.join(a.workdir, "lean-results.jsonl"), "a") as f:
        f.write(json.dumps({"commit": commit, "started": started, "quick": a.quick, "load": [load0[0], load1[0]],
                            "index_bench": idx, "rounds": rounds, "version_ms": ver, "package": pkg}) + "\n")


if __name__ == "__main__":
    main()
