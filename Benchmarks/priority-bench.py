#!/usr/bin/env python3
"""Indexing next to other work: the unit's old scheduling (Nice=10, CPUSchedulingPolicy=batch,
IOSchedulingClass=idle) and its new one (nice 0, CPUWeight=20) side by side, in one run.

    python3 Benchmarks/priority-bench.py [--library DIR] [--rounds N] [--requests N]
                                         [--photod BIN] [--old-photod BIN]

With --old-photod (a build of before a change of thread priorities) the old configuration runs
that binary, and a third configuration runs it under the new scheduling: the thread priorities'
own effect, next to the unit's.

Each round indexes the library from an empty database under one configuration (they alternate)
while two CPU-bound processes stand in for the machine's real work (a web server, a build), one
per core, in a cgroup of their own with the default weight; photod runs in another cgroup, with
CPUWeight=20's cpu.shares (204) for the new configuration, the default (1024) for the old one,
as systemd sets them on cgroup v1. Meanwhile a client asks for a 256-px image of a random indexed
asset every 100 ms and times each answer. Printed per configuration (medians of the rounds):
the index's wall time, the other work's throughput as a share of what it does alone, and the
image requests' p50 and p90 latency. Needs root and a writable cgroup v1 cpu hierarchy (or
prints why not). The library defaults to the 100,000-file corpus of make-corpus.py.
"""

import argparse
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rpc_client import Client  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
CGROUP = Path("/sys/fs/cgroup/cpu")
BURN = "import sys,time\nend=time.monotonic()+float(sys.argv[1])\nwhile time.monotonic()<end:\n  sum(range(20000))\n"


def cgroup(name, shares):
    path = CGROUP / name
    path.mkdir(exist_ok=True)
    (path / "cpu.shares").write_text(str(shares))
    return path


def burners(seconds, group):
    """Two CPU-bound processes in `group`, one per core."""
    procs = []
    for _ in range(2):
        p = subprocess.Popen([sys.executable, "-c", BURN, str(seconds)])
        (group / "cgroup.procs").write_text(str(p.pid))
        procs.append(p)
    return procs


def cpu_seconds(pids):
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError):
            pass
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", type=Path, default=Path("/tmp/photod-bench/corpus/lib-100000-8k-s11"))
    parser.add_argument("--rounds", type=int, default=3, help="rounds per configuration (default 3)")
    parser.add_argument("--requests", type=int, default=40, help="image requests per round (default 40)")
    parser.add_argument("--photod", type=Path, default=REPO / ".build/release/photod")
    parser.add_argument("--old-photod", type=Path, help="the binary for the old configuration (default: --photod), "
                                                        "to compare a build of before a change of thread priorities")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("priority-bench: needs root (cgroups, chrt)")
    if not (CGROUP / "cgroup.procs").exists() or not os.access(CGROUP, os.W_OK):
        try:
            (CGROUP / "priority-bench-probe").mkdir()
            (CGROUP / "priority-bench-probe").rmdir()
        except OSError as e:
            sys.exit(f"priority-bench: no writable cgroup v1 cpu hierarchy at {CGROUP}: {e}")
    if not args.library.is_dir():
        sys.exit(f"priority-bench: no library at {args.library} (make one with ../shared/bench/make-corpus.py)")
    if not args.photod.exists():
        sys.exit(f"priority-bench: no {args.photod}: swift build -c release")
    groups = {"other": cgroup("priority-bench-other", 1024), "old": cgroup("priority-bench-old", 1024),
              "new": cgroup("priority-bench-new", 204)}
    work = Path(tempfile.mkdtemp(prefix="priority-bench-"))
    try:
        configs = ["old", "new-old-threads", "new"] if args.old_photod else ["old", "new"]
        results = {c: [] for c in configs}
        # A first, unmeasured index puts the library in the page cache for every round after it.
        for i, config in enumerate(["new"] + configs * args.rounds):
            r = measure(config, args, groups, work)
            if i == 0:
                print(f"warm-up ({config}): {r['indexed']:.1f} s", flush=True)
                continue
            results[config].append(r)
            print(f"round {i}: {config}: index {r['indexed']:.1f} s, other work {r['share'] * 100:.0f} % of alone, "
                  f"images p50 {r['p50'] * 1000:.0f} ms p90 {r['p90'] * 1000:.0f} ms ({r['requests']} requests)", flush=True)
        print()
        print("| configuration | index (s) | other work, % of alone | image p50 (ms) | image p90 (ms) |")
        print("|---|---|---|---|---|")
        labels = {"old": "Nice=10, batch, idle I/O" + (f" ({args.old_photod})" if args.old_photod else ""),
                  "new-old-threads": f"nice 0, CPUWeight=20 ({args.old_photod})",
                  "new": f"nice 0, CPUWeight=20 ({args.photod})"}
        for config in configs:
            label = labels[config]
            rs = results[config]
            med = lambda k: statistics.median(r[k] for r in rs)
            print(f"| {label} | {med('indexed'):.1f} | {med('share') * 100:.0f} | {med('p50') * 1000:.0f} | {med('p90') * 1000:.0f} |")
        print(f"\n{args.rounds} rounds each, alternating; library {args.library} ({len(os.listdir(args.library))} top entries); "
              f"load average at the end {os.getloadavg()[0]:.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        for g in groups.values():
            try:
                for pid in (g / "cgroup.procs").read_text().split():
                    (CGROUP / "cgroup.procs").write_text(pid)
                g.rmdir()
            except OSError:
                pass


def measure(config, args, groups, work):
    db = work / f"db-{config}-{time.monotonic_ns()}"
    db.mkdir()
    sock = db / "photod.sock"
    prefix = ["nice", "-n", "10", "chrt", "-b", "0", "ionice", "-c", "3"] if config == "old" else []
    group = groups["new" if config.startswith("new") else "old"]
    cmd = prefix + [str(args.photod), "--library", str(args.library), "--database", str(db / "photod.db"),
                    "--socket", str(sock), "--cache-dir", str(db / "cache"), "--log-level", "warning"]
    binary = args.old_photod if config in ("old", "new-old-threads") and args.old_photod else args.photod
    cmd[len(prefix)] = str(binary)
    burn = burners(3600, groups["other"])
    proc = None
    failed = 0
    try:
        burn_pids = [p.pid for p in burn]
        cpu_before = cpu_seconds(burn_pids)
        started = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        (group / "cgroup.procs").write_text(str(proc.pid))
        while not sock.exists():
            time.sleep(0.01)
        client = Client(str(sock))
        latencies = []
        while client.call("library.status")["counts"]["assets"] < 2000:
            time.sleep(0.05)
        while True:
            status = client.call("library.status")
            if status["state"] == "idle":
                break
            if len(latencies) < args.requests:
                offset = random.randrange(max(1, status["counts"]["assets"] - 1))
                assets = client.call("assets.fetch", {"limit": 1, "offset": offset})["assets"]
                if assets:
                    t = time.perf_counter()
                    try:
                        client.call("images.request", {"id": assets[0]["id"], "targetSize": [256, 256]})
                        latencies.append(time.perf_counter() - t)
                    except RuntimeError:
                        failed += 1
            time.sleep(0.1)
        indexed = time.monotonic() - started
        cpu = cpu_seconds(burn_pids) - cpu_before
    finally:
        for p in burn:
            p.kill()
            p.wait()
        if proc:
            proc.send_signal(signal.SIGTERM)
            proc.wait()
        shutil.rmtree(db, ignore_errors=True)
    # Two burners on two cores: alone they get 2 CPU seconds per second.
    latencies.sort()
    return {"indexed": indexed, "share": cpu / (2 * indexed), "requests": len(latencies), "failed": failed,
            "p50": latencies[len(latencies) // 2] if latencies else float("nan"),
            "p90": latencies[int(len(latencies) * 0.9)] if latencies else float("nan")}


if __name__ == "__main__":
    main()
