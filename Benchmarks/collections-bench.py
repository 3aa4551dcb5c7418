#!/usr/bin/env python3
"""photod collections benchmark (issue 3): the sort queue's cost per job as the library grows,
and the latency of the collection queries over the socket on a large library.

  python3 Benchmarks/collections-bench.py                # 100,000-file corpus, 30 runs per query
  python3 Benchmarks/collections-bench.py --quick        # 2,000 files, 10 runs

1. `photod-bench N` (the release executable of this package) feeds the real sort queue and
   SQLite store with synthetic 50-file jobs and prints the median job time around every
   10,000 assets: the cost per job must stay flat as the library grows.
2. photod indexes a corpus made by ../shared/bench/make-corpus.py (cached under --workdir);
   then one client connection times each query --runs times and prints medians: the whole
   library's moments (`moments.fetch` paged at 1,000), moment lists, a page of albums, the
   smart albums with their counts, a page of assets, a page of one moment's assets, status.
Python 3 standard library only.
"""
import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from rpc_client import Client

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SHARED = os.path.normpath(os.path.join(REPO, "..", "shared", "bench"))


def timed(fn, runs):
    xs = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        xs.append((time.perf_counter() - t) * 1000)
    xs.sort()
    return statistics.median(xs), xs[int(len(xs) * 0.9) - 1 if len(xs) > 1 else 0]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=100000)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--workdir", default="/tmp/photod-bench")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-build", action="store_true")
    a = ap.parse_args()
    if a.quick:
        a.files, a.runs = 2000, 10
    if not a.no_build:
        for product in ("photod", "photod-bench"):
            subprocess.run(["swift", "build", "-c", "release", "--product", product], cwd=REPO, check=True,
                           stdout=subprocess.DEVNULL)
    bin_dir = os.path.join(REPO, ".build", "release")

    print("== sort queue: cost per 50-file job as the library grows (photod-bench %d)" % a.files, flush=True)
    subprocess.run([os.path.join(bin_dir, "photod-bench"), str(a.files)], check=True)

    corpus = os.path.join(a.workdir, "corpus", "lib-%d-20k-s1" % a.files)
    if not os.path.isdir(corpus):
        os.makedirs(os.path.dirname(corpus), exist_ok=True)
        print("generating %s ..." % corpus, flush=True)
        subprocess.run([sys.executable, os.path.join(SHARED, "make-corpus.py"), corpus, str(a.files), "--seed", "1",
                        "--size", "20k"], check=True, stdout=subprocess.DEVNULL)
    tmp = tempfile.mkdtemp(prefix="photod-coll-")
    sock_path = os.path.join(tmp, "s.sock")
    log_path = os.path.join(tmp, "photod.log")
    with open(log_path, "wb") as log:
        p = subprocess.Popen([os.path.join(bin_dir, "photod"), "--library", corpus, "--database",
                              os.path.join(tmp, "db"), "--socket", sock_path, "--timezone", "UTC"], stderr=log)
    try:
        while True:
            with open(log_path, "rb") as f:
                if b"scan finished" in f.read():
                    break
            if p.poll() is not None:
                sys.exit("photod exited: " + open(log_path).read())
            time.sleep(0.1)
        c = Client(sock_path)
        status = c.call("library.status")
        print("\n== queries over the socket: %d assets, %s (median and p90 of %d runs, ms)"
              % (status["counts"]["assets"], status["lastScan"] and "indexed in %.2f s" % status["lastScan"]["seconds"],
                 a.runs))

        def all_moments():
            offset, n = 0, 0
            while offset is not None:
                r = c.call("moments.fetch", {"limit": 1000, "offset": offset})
                n += len(r["moments"])
                offset = r["nextOffset"]
            return n

        count = all_moments()
        day = c.call("moments.fetch", {"limit": 1})["moments"][0]["id"]
        queries = [
            ("moments.fetch, the whole library (%d moments, pages of 1,000)" % count, all_moments),
            ("momentLists.fetch", lambda: c.call("momentLists.fetch")),
            ("albums.fetch, 100", lambda: c.call("albums.fetch", {"limit": 100})),
            ("smartAlbums.fetch (with counts)", lambda: c.call("smartAlbums.fetch")),
            ("collectionLists.fetch", lambda: c.call("collectionLists.fetch")),
            ("assets.fetch, 100 from the middle", lambda: c.call("assets.fetch", {"limit": 100, "offset": status["counts"]["assets"] // 2})),
            ("collections.assets, one moment, 100", lambda: c.call("collections.assets", {"id": day, "limit": 100})),
            ("library.status", lambda: c.call("library.status")),
        ]
        print("| query | median ms | p90 ms |")
        print("|---|---|---|")
        for name, fn in queries:
            med, p90 = timed(fn, a.runs)
            print("| %s | %.2f | %.2f |" % (name, med, p90), flush=True)
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait()
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
