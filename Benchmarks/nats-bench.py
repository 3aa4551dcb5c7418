#!/usr/bin/env python3
"""photod-nats: how soon a change set is visible to a consumer of the stream, and a burst's
publish throughput, on one box (nats-server, photod, the bridge and the consumer on loopback).

    python3 Benchmarks/nats-bench.py [--singles N] [--burst N] [--rounds R] [--quick]
                                     [--photod BIN] [--bridge BIN]

Starts a nats-server -js of its own (a temporary store, a free port), photod on an empty
temporary library, photod-nats (--name bench), and a JetStream consumer (nats-py, an ordered
push consumer on photod.bench.changes) that notes the wall time each change set arrives.

  singles  N files written one at a time, each after the last one's change set arrived. For
           each: commit -> visible (the change set's own commit `time`, photod's clock, to its
           arrival: the bridge reading it, publishing, the stream storing and acknowledging it,
           the consumer's delivery) and file -> visible (the write to the arrival: inotify,
           photod's batch and commit too). Target: commit -> visible p50 <= 20 ms.
  burst    N files moved into the library at once (made beforehand with make-corpus.py); the
           change sets' count, the bridge's publish rate over the burst (change sets and assets
           per second, first to last arrival), and how long after photod's last commit the
           last one was visible. photod makes the change sets (a burst's are large: hundreds of
           assets each), so this is the whole chain's rate.
  backlog  the bridge stopped while photod makes --backlog change sets (favorite writes), then
           started: it publishes them from photod's journal back to back, one acknowledgment
           at a time: the bridge's own publish rate.

Medians over --rounds rounds (fresh processes each). Needs nats-server and nats-py (run it
with .build/nats-venv/bin/python3, or it re-runs itself with that; scripts/install-deps --tests
makes it). --quick: 30 singles and a 1,000-file burst, one round (CI's smoke profile).
"""

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rpc_client import Client  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
VENV = REPO / ".build/nats-venv/bin/python3"
SHARED = REPO.parent / "shared"

try:
    import nats
    from nats.js import api
except ImportError:
    if VENV.exists() and Path(sys.executable) != VENV:
        os.execv(str(VENV), [str(VENV), *sys.argv])
    # Skipped, visibly (CI where PyPI cannot be reached): not a failure of the bridge.
    print("nats-bench: SKIPPED: nats-py is missing (scripts/install-deps --tests puts it in .build/nats-venv)")
    sys.exit(0)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values, p):
    values = sorted(values)
    if not values:
        return float("nan")
    k = (len(values) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def commit_time(text):
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=__import__("datetime").timezone.utc).timestamp()


def wait_for(what, condition, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.02)
    sys.exit(f"nats-bench: no {what} after {timeout} s")


class Rig:
    """nats-server, photod and photod-nats in a temporary directory."""

    def __init__(self, args):
        self.dir = Path(tempfile.mkdtemp(prefix="nats-bench-"))
        self.library = self.dir / "library"
        self.library.mkdir()
        self.port = free_port()
        self.url = f"nats://127.0.0.1:{self.port}"
        self.procs = []
        self.procs.append(subprocess.Popen(["nats-server", "-js", "-a", "127.0.0.1", "-p", str(self.port),
                                            "-sd", str(self.dir / "js")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_for("nats-server", lambda: self.connectable(self.port))
        socket_path = self.dir / "photod.sock"
        self.procs.append(subprocess.Popen([str(args.photod), "--library", str(self.library), "--database", str(self.dir / "db"),
                                            "--socket", str(socket_path), "--cache-dir", str(self.dir / "cache")],
                                           stdout=subprocess.DEVNULL, stderr=open(self.dir / "photod.log", "w")))
        wait_for("photod's socket", socket_path.exists)
        self.socket = socket_path
        self.bridge_binary = args.bridge
        self.start_bridge()

    def start_bridge(self):
        log = self.dir / "bridge.log"
        before = log.read_text().count("subscribed to photod") if log.exists() else 0
        self.bridge = subprocess.Popen([str(self.bridge_binary), "--socket", str(self.socket), "--nats", self.url, "--name", "bench"],
                                       stdout=subprocess.DEVNULL, stderr=open(log, "a"))
        self.procs.append(self.bridge)
        wait_for("the bridge's subscription", lambda: log.read_text().count("subscribed to photod") > before)

    def stop_bridge(self):
        self.bridge.send_signal(signal.SIGTERM)
        self.bridge.wait(10)
        self.procs.remove(self.bridge)

    @staticmethod
    def connectable(port):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return True
        except OSError:
            return False

    def close(self):
        for p in reversed(self.procs):
            p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


async def round_(args, source, burst_files):
    rig = Rig(args)
    try:
        nc = await nats.connect(rig.url)
        js = nc.jetstream()
        arrivals = []  # (wall time, token, commit time, inserted count)
        arrived = asyncio.Event()

        async def on_message(msg):
            change = json.loads(msg.data)
            arrivals.append((time.time(), change["token"], commit_time(change["time"]), len(change["assets"]["inserted"])))
            arrived.set()
        await js.subscribe("photod.bench.changes", cb=on_message, ordered_consumer=True,
                           deliver_policy=api.DeliverPolicy.NEW)
        await asyncio.sleep(0.5)

        # Singles: one file, wait for its change set, the next.
        commit_latency, file_latency = [], []
        for i in range(args.singles):
            arrived.clear()
            before = len(arrivals)
            target = rig.library / f"single-{i}{source.suffix}"
            tmp = rig.dir / f"single-{i}.tmp"
            shutil.copyfile(source, tmp)
            written = time.time()
            os.rename(tmp, target)
            while len(arrivals) == before:
                await asyncio.wait_for(arrived.wait(), 30)
                arrived.clear()
            seen, _, committed, _ = arrivals[before]
            commit_latency.append((seen - committed) * 1000)
            file_latency.append((seen - written) * 1000)
            await asyncio.sleep(0.02)

        # Burst: a folder of files moved in at once.
        arrivals.clear()
        inserted = 0
        started = time.time()
        os.rename(burst_files, rig.library / "burst")
        deadline = time.monotonic() + 600
        while inserted < args.burst and time.monotonic() < deadline:
            arrived.clear()
            inserted = sum(a[3] for a in arrivals)
            if inserted >= args.burst:
                break
            try:
                await asyncio.wait_for(arrived.wait(), 5)
            except asyncio.TimeoutError:
                pass
        if inserted < args.burst:
            sys.exit(f"nats-bench: the burst's {args.burst} assets did not all arrive ({inserted})")
        first, last = arrivals[0][0], arrivals[-1][0]
        span = max(last - first, 1e-6)
        burst_changes, burst_started, burst_commit = len(arrivals), started, arrivals[-1][2]

        # Backlog: the bridge stopped while photod makes change sets (a favorite set and unset,
        # each write one change set), then started: it publishes them back to back from photod's
        # journal, as fast as it can: its own throughput.
        rig.stop_bridge()
        client = Client(str(rig.socket))
        asset = client.call("assets.fetch", {"limit": 1})["assets"][0]["id"]
        for i in range(args.backlog):
            client.call("assets.setFavorite", {"ids": [asset], "favorite": i % 2 == 0})
        arrivals.clear()
        rig.start_bridge()
        deadline = time.monotonic() + 300
        while len(arrivals) < args.backlog and time.monotonic() < deadline:
            arrived.clear()
            try:
                await asyncio.wait_for(arrived.wait(), 5)
            except asyncio.TimeoutError:
                pass
        if len(arrivals) < args.backlog:
            sys.exit(f"nats-bench: {len(arrivals)} of the backlog's {args.backlog} change sets arrived")
        backlog_rate = (len(arrivals) - 1) / max(arrivals[-1][0] - arrivals[0][0], 1e-6)
        await nc.close()
        return {
            "commit_p50": percentile(commit_latency, 50), "commit_p99": percentile(commit_latency, 99),
            "file_p50": percentile(file_latency, 50), "file_p99": percentile(file_latency, 99),
            "burst_changes": burst_changes, "burst_rate": burst_changes / span, "burst_assets_rate": inserted / span,
            "burst_total": last - burst_started, "burst_after_commit": (last - burst_commit) * 1000,
            "backlog_rate": backlog_rate,
        }
    finally:
        rig.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--singles", type=int, default=200)
    parser.add_argument("--burst", type=int, default=10000)
    parser.add_argument("--backlog", type=int, default=1000, help="change sets published from photod's journal")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="30 singles, a 1,000-file burst, one round")
    parser.add_argument("--photod", type=Path, default=REPO / ".build/release/photod")
    parser.add_argument("--bridge", type=Path, default=REPO / ".build/release/photod-nats")
    args = parser.parse_args()
    if args.quick:
        args.singles, args.burst, args.backlog, args.rounds = 30, 1000, 200, 1
    for binary in (args.photod, args.bridge):
        if not binary.exists():
            sys.exit(f"nats-bench: no {binary}: swift build -c release (or --photod/--bridge)")
    if not shutil.which("nats-server"):
        sys.exit("nats-bench: nats-server is missing: scripts/install-deps --tests")
    staging = Path(tempfile.mkdtemp(prefix="nats-bench-files-"))
    try:
        # The files: make-corpus.py's synthetic photos (small JPEGs with EXIF), made once.
        subprocess.run([sys.executable, str(SHARED / "bench/make-corpus.py"), "--jobs", "2", str(staging / "made"),
                        str(args.burst + 1)], check=True, stdout=subprocess.DEVNULL)
        made = sorted(p for p in (staging / "made").rglob("*") if p.is_file())
        source = made[0]
        results = []
        for r in range(args.rounds):
            burst = staging / f"burst-{r}"
            burst.mkdir()
            for i, f in enumerate(made[1:args.burst + 1]):
                shutil.copyfile(f, burst / f"{i}{f.suffix}")
            results.append(asyncio.run(round_(args, source, burst)))
            print(f"round {r + 1}: " + ", ".join(f"{k} {v:.1f}" for k, v in results[-1].items()), flush=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)

    def median(key):
        return statistics.median(r[key] for r in results)
    print(f"\nphotod-nats, one box, {args.rounds} round(s), medians:")
    print(f"  commit -> visible to a stream consumer: p50 {median('commit_p50'):.1f} ms, p99 {median('commit_p99'):.1f} ms"
          f"  (target p50 <= 20 ms: {'met' if median('commit_p50') <= 20 else 'NOT met'})")
    print(f"  file written -> visible:                p50 {median('file_p50'):.1f} ms, p99 {median('file_p99'):.1f} ms")
    print(f"  a {args.burst:,}-file burst: {median('burst_changes'):.0f} change sets, published at "
          f"{median('burst_rate'):.0f} change sets/s ({median('burst_assets_rate'):.0f} assets/s); all visible "
          f"{median('burst_total'):.1f} s after the move, the last {median('burst_after_commit'):.1f} ms after its commit")
    print(f"  a backlog of {args.backlog:,} change sets from photod's journal (the bridge started after them): "
          f"published at {median('backlog_rate'):.0f} change sets/s")


if __name__ == "__main__":
    main()
