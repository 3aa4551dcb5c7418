#!/usr/bin/env python3
"""The trash through the API, measured from outside photod (issue 31).

  python3 Benchmarks/trash-bench.py [--files 10000] [--runs 50] [--batch 1000] [--photod PHOTOD] [--workdir DIR]

On a fresh copy of a library made by ../shared/bench/make-corpus.py (the copy is renamed in:
the trash writes to it), with photod started with `--trash-root` on it and idle:

1. One asset per call, `--runs` times each, interleaved: `assets.setFavorite` (the durable user-
   state write, the baseline), `assets.trash`, `assets.restore`, then `assets.trash` and
   `assets.deletePermanently` of other assets. Each call timed from writing its line to reading
   its answer: median and p90, and each against the favorite's median.
2. `--batch` assets in one call: trash, restore, trash again and delete for good.
3. After it all: the library's files agree with the index (every asset in the library has its
   file; no trashed file is left but those of assets in Recently Deleted).

Prints a table and appends one JSON line to --results with the commit and the load average.
Python 3 standard library only.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SHARED = os.path.normpath(os.path.join(REPO, "..", "shared", "bench"))
sys.path.insert(0, HERE)
from rpc_client import Client  # noqa: E402


def timed(client, method, params):
    start = time.perf_counter()
    client.call(method, params)
    return (time.perf_counter() - start) * 1000


def wait_idle(client, timeout=600):
    deadline = time.time() + timeout
    while client.call("library.status")["state"] != "idle":
        if time.time() > deadline:
            sys.exit("photod not idle after %d s" % timeout)
        time.sleep(0.1)


def all_ids(client):
    ids, offset = [], 0
    while offset is not None:
        page = client.call("assets.fetch", {"limit": 1000, "offset": offset, "sort": "path"})
        ids += [(a["id"], a["path"]) for a in page["assets"]]
        offset = page["nextOffset"]
    return ids


def summary(ms):
    ms = sorted(ms)
    return statistics.median(ms), ms[min(len(ms) - 1, int(len(ms) * 0.9))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--photod", default=os.path.join(REPO, ".build", "release", "photod"))
    ap.add_argument("--workdir", default="/tmp/photod-trash-bench")
    ap.add_argument("--results", default=os.path.join(REPO, ".bench", "trash-bench.jsonl"))
    a = ap.parse_args()
    if not os.access(a.photod, os.X_OK):
        sys.exit("no photod at %s (swift build -c release --product photod, or --photod PATH)" % a.photod)
    corpus = os.path.join(a.workdir, "corpus-%d" % a.files)
    if not os.path.isdir(corpus):
        os.makedirs(a.workdir, exist_ok=True)
        subprocess.run([sys.executable, os.path.join(SHARED, "make-corpus.py"), corpus, str(a.files), "--seed", "3",
                        "--size", "8k"], check=True, stdout=subprocess.DEVNULL)
    work = tempfile.mkdtemp(prefix="run-", dir=a.workdir)
    lib = os.path.join(work, "lib")
    subprocess.run(["cp", "-a", corpus, lib], check=True)
    state = os.path.join(work, "state")
    os.makedirs(state)
    sock = os.path.join(state, "photod.sock")
    log = open(os.path.join(state, "photod.log"), "ab")
    proc = subprocess.Popen([a.photod, "--library", lib, "--database", os.path.join(state, "photod.db"), "--socket", sock,
                             "--cache-dir", os.path.join(state, "cache"), "--trash-root", lib], stdout=subprocess.DEVNULL, stderr=log)
    try:
        deadline = time.time() + 60
        while True:
            try:
                c = Client(sock)
                break
            except OSError:
                if time.time() > deadline:
                    sys.exit("photod did not come up")
                time.sleep(0.05)
        wait_idle(c)
        ids = [i for i, _ in all_ids(c)]
        need = 4 * a.runs + 2 * a.batch
        if len(ids) < need:
            sys.exit("%d assets; the runs need %d" % (len(ids), need))
        one = {k: [] for k in ("setFavorite", "trash", "restore", "trash (to delete)", "deletePermanently")}
        for i in range(a.runs):
            x, y = ids[2 * i], ids[2 * i + 1]
            one["setFavorite"].append(timed(c, "assets.setFavorite", {"ids": [x], "favorite": True}))
            one["trash"].append(timed(c, "assets.trash", {"ids": [x]}))
            one["restore"].append(timed(c, "assets.restore", {"ids": [x]}))
            one["trash (to delete)"].append(timed(c, "assets.trash", {"ids": [y]}))
            one["deletePermanently"].append(timed(c, "assets.deletePermanently", {"ids": [y]}))
        batch_ids = ids[2 * a.runs:2 * a.runs + a.batch]
        batch = {
            "trash": timed(c, "assets.trash", {"ids": batch_ids}),
            "restore": timed(c, "assets.restore", {"ids": batch_ids}),
            "trash again": timed(c, "assets.trash", {"ids": batch_ids}),
            "deletePermanently": timed(c, "assets.deletePermanently", {"ids": batch_ids}),
        }
        wait_idle(c)
        # The files agree with the index.
        library = all_ids(c)
        missing = [p for _, p in library if not os.path.exists(p)]
        hidden = sum(1 for dp, _, fs in os.walk(lib) for f in fs if f.startswith(".photod-trashed-"))
        deleted = c.call("library.status")["counts"].get("recentlyDeleted", 0)
    finally:
        proc.terminate()
        proc.wait()
    base = statistics.median(one["setFavorite"])
    print("trash-bench: %d files, %d runs, batch %d, %s" % (a.files, a.runs, a.batch, a.photod))
    print("%-22s %9s %9s %8s" % ("one asset per call", "p50 ms", "p90 ms", "× fav"))
    rows = {}
    for k, ms in one.items():
        p50, p90 = summary(ms)
        rows[k] = {"p50": round(p50, 2), "p90": round(p90, 2)}
        print("%-22s %9.2f %9.2f %8.2f" % (k, p50, p90, p50 / base))
    print("%-22s %9s %12s" % ("%d in one call" % a.batch, "ms", "per asset"))
    for k, ms in batch.items():
        print("%-22s %9.1f %12.3f" % (k, ms, ms / a.batch))
    print("after: %d assets, %d without their file, %d trashed files, %d in Recently Deleted" % (len(library), len(missing), hidden, deleted))
    commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    os.makedirs(os.path.dirname(a.results), exist_ok=True)
    with open(a.results, "a") as f:
        f.write(json.dumps({"commit": commit, "load": os.getloadavg(), "files": a.files, "one": rows,
                            "batch": {k: round(v, 1) for k, v in batch.items()}, "missing": len(missing),
                            "hidden": hidden, "recentlyDeleted": deleted}) + "\n")
    shutil.rmtree(work, ignore_errors=True)
    if missing or hidden != 0 or deleted != 0:
        sys.exit("the files and the index disagree")


if __name__ == "__main__":
    main()
