#!/usr/bin/env python3
"""photod socket benchmark (issue 5): fetches with a predicate and a sort, and the fan-out of
change sets to many subscribers, over the socket, on a large library.

  python3 Benchmarks/socket-bench.py                 # 100,000-file corpus, 200 fetches per case,
                                                      # 100 subscribers, 60 writes
  python3 Benchmarks/socket-bench.py --quick         # 2,000 files, 30 fetches, 20 subscribers, 20 writes
  python3 Benchmarks/socket-bench.py --photod PATH   # a given binary (default: builds release)

1. photod indexes a corpus made by ../shared/bench/make-corpus.py (cached under --workdir, the
   same one index-bench.py and collections-bench.py use).
2. Fetches: one client connection sends `assets.fetch` with `limit` 100 and each case's
   predicate and sort, --runs times after 5 unmeasured ones, at offset 0 and at an offset in
   the middle of the result; the time is from writing the request line to having read the
   whole response line (JSON decoding in Python excluded). Median and p90.
3. Fan-out: --subscribers connections subscribe (`changes.subscribe`); a writer toggles a
   favorite --writes times, one at a time. For each change set, the latency is from its commit
   (the change set's `time`, stamped in the commit's transaction: an upper bound) to the moment
   the last subscriber has read its notification (one thread waits on all sockets with epoll).
   Every subscriber must receive every change set, in token order. Median, p90 and max, and the
   same from the write request's send, for reference.
Python 3 standard library only.
"""
import argparse
import datetime
import json
import os
import select
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from rpc_client import Client

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SHARED = os.path.normpath(os.path.join(REPO, "..", "shared", "bench"))

CASES = [
    ("images at least 750 px wide, newest first",
     'mediaType == "image" AND pixelWidth >= 750', "-localDateTime"),
    ("one camera maker, by width then time",
     'make BEGINSWITH "canon"', "pixelWidth,-localDateTime"),
    ("a date range or videos, by added date",
     'localDate BETWEEN "2019-01-01" AND "2020-12-31" OR mediaType == "video"', "-addedDate"),
    ("with GPS, not favorites, by latitude",
     'latitude != null AND NOT isFavorite == true', "latitude"),
    ("a path part, by capture time",
     'path CONTAINS "/2021-"', "localDateTime"),
]


def stats(xs):
    xs = sorted(xs)
    return statistics.median(xs), xs[max(0, int(len(xs) * 0.9) - 1)], xs[-1]


def parse_time(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp()


def fetches(c, writer, runs, total_assets):
    print("\n== assets.fetch: a page of 100 with a predicate and a sort, median of %d runs (ms, request sent to "
          "response read)" % runs)
    print("- repeat: the same request again (the daemon keeps recent results per change token)")
    print("- deep page: the same at an offset in the middle of the result")
    print("- new query: a predicate the daemon has not seen (one more condition that every asset passes)")
    print("- after a write: the first request after a favorite was toggled (a write drops every kept")
    print("  result: it is read again)\n")
    print("| case | predicate | sort | matches | repeat | deep page | new query | after a write |")
    print("|---|---|---|---|---|---|---|---|")
    ids = [a["id"] for a in c.call("assets.fetch", {"limit": 3})["assets"]]
    columns = {"repeat": [], "deep": [], "new": [], "write": []}
    serial = [0]
    for name, predicate, sort in CASES:
        first = c.call("assets.fetch", {"predicate": predicate, "sort": sort, "limit": 100})
        matches = first["total"]
        base = {"predicate": predicate, "sort": sort, "limit": 100}
        deep = dict(base, offset=(matches // 2) // 100 * 100)

        def new_query():
            serial[0] += 1
            return dict(base, predicate="(%s) AND pixelWidth != -%d" % (predicate, serial[0]))

        def after_write():
            serial[0] += 1
            writer.call("assets.setFavorite", {"ids": [ids[serial[0] % len(ids)]], "favorite": serial[0] % 2 == 0})
            return base

        row = []
        for key, make in (("repeat", lambda: base), ("deep", lambda: deep), ("new", new_query), ("write", after_write)):
            for _ in range(3):
                c.raw("assets.fetch", make())
            xs = []
            for _ in range(runs):
                params = make()
                xs.append(c.raw("assets.fetch", params)[0] * 1000)
            med = stats(xs)[0]
            columns[key].append(med)
            row.append(med)
        print("| %s | `%s` | `%s` | %d | %.2f | %.2f | %.2f | %.2f |" % ((name, predicate, sort, matches) + tuple(row)),
              flush=True)
    print("| median of the cases | | | | %.2f | %.2f | %.2f | %.2f |" % tuple(statistics.median(columns[k])
                                                                       for k in ("repeat", "deep", "new", "write")))
    print("target: <= 5 ms median for a page with a predicate and a sort on %d assets" % total_assets)


def fanout(sock_path, subscribers, writes):
    subs = []
    ep = select.epoll()
    for i in range(subscribers):
        s = socket.socket(socket.AF_UNIX)
        s.connect(sock_path)
        s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"changes.subscribe"}\n')
        subs.append({"sock": s, "buf": b"", "tokens": [], "got": {}})
    # Read the subscription answers.
    start = None
    for sub in subs:
        f = sub["sock"].makefile("rb")
        resp = json.loads(f.readline())
        start = resp["result"]["token"] if start is None else min(start, resp["result"]["token"])
        f.close()
    by_fd = {}
    for sub in subs:
        sub["sock"].setblocking(False)
        ep.register(sub["sock"].fileno(), select.EPOLLIN)
        by_fd[sub["sock"].fileno()] = sub
    w = Client(sock_path)
    # Assets no other part of the run touched, each toggled from what it is now.
    page = w.call("assets.fetch", {"limit": 10, "offset": 500})["assets"]
    ids = [a["id"] for a in page]
    favorite = {a["id"]: a["isFavorite"] for a in page}
    commit_to_last, send_to_last, first_to_last, send_to_ack = [], [], [], []
    for n in range(writes):
        target = ids[n % len(ids)]
        favorite[target] = not favorite[target]
        sent = time.time()
        result = w.call("assets.setFavorite", {"ids": [target], "favorite": favorite[target]})
        send_to_ack.append((time.time() - sent) * 1000)
        token = result["token"]
        pending = set(by_fd)
        commit_time = None
        first = None
        last = None
        deadline = time.time() + 10
        while pending:
            if time.time() > deadline:
                sys.exit("fan-out: %d subscribers did not get token %d" % (len(pending), token))
            for fd, _ in ep.poll(1):
                sub = by_fd[fd]
                try:
                    data = sub["sock"].recv(1 << 16)
                except BlockingIOError:
                    continue
                now = time.time()
                sub["buf"] += data
                while b"\n" in sub["buf"]:
                    line, sub["buf"] = sub["buf"].split(b"\n", 1)
                    msg = json.loads(line)
                    if msg.get("method") != "changes":
                        continue
                    t = msg["params"]["token"]
                    sub["tokens"].append(t)
                    if t == token:
                        commit_time = parse_time(msg["params"]["time"])
                        pending.discard(fd)
                        first = first or now
                        last = now
        commit_to_last.append((last - commit_time) * 1000)
        first_to_last.append((last - first) * 1000)
        send_to_last.append((last - sent) * 1000)
    for sub in subs:
        expected = list(range(start + 1, start + 1 + writes))
        if sub["tokens"] != expected:
            sys.exit("fan-out: a subscriber got tokens %s..., expected %s..." % (sub["tokens"][:5], expected[:5]))
        sub["sock"].close()
    med, p90, mx = stats(commit_to_last)
    smed, sp90, smx = stats(send_to_last)
    print("\n== fan-out: %d subscribers, %d change sets, each received by every subscriber in token order" % (subscribers, writes))
    print("| measured | median ms | p90 ms | max ms |")
    print("|---|---|---|---|")
    print("| commit (change set's time) to the last subscriber's receipt | %.2f | %.2f | %.2f |" % (med, p90, mx))
    print("| write request sent to the last subscriber's receipt | %.2f | %.2f | %.2f |" % (smed, sp90, smx))
    print("| the first subscriber's receipt to the last's | %.2f | %.2f | %.2f |" % stats(first_to_last))
    print("| write request sent to its answer (the commit) | %.2f | %.2f | %.2f |" % stats(send_to_ack))
    print("target: <= 10 ms median from commit to the last of %d subscribers" % subscribers)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=100000)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--subscribers", type=int, default=100)
    ap.add_argument("--writes", type=int, default=60)
    ap.add_argument("--workdir", default="/tmp/photod-bench")
    ap.add_argument("--photod", help="the photod binary (default: build the release one)")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    if a.quick:
        a.files, a.runs, a.subscribers, a.writes = 2000, 30, 20, 20
    photod = a.photod
    if photod is None:
        subprocess.run(["swift", "build", "-c", "release", "--product", "photod"], cwd=REPO, check=True,
                       stdout=subprocess.DEVNULL)
        photod = os.path.join(REPO, ".build", "release", "photod")

    corpus = os.path.join(a.workdir, "corpus", "lib-%d-20k-s1" % a.files)
    if not os.path.isdir(corpus):
        os.makedirs(os.path.dirname(corpus), exist_ok=True)
        print("generating %s ..." % corpus, flush=True)
        subprocess.run([sys.executable, os.path.join(SHARED, "make-corpus.py"), corpus, str(a.files), "--seed", "1",
                        "--size", "20k"], check=True, stdout=subprocess.DEVNULL)
    tmp = tempfile.mkdtemp(prefix="photod-sock-")
    sock_path = os.path.join(tmp, "s.sock")
    log_path = os.path.join(tmp, "photod.log")
    with open(log_path, "wb") as log:
        p = subprocess.Popen([photod, "--library", corpus, "--database", os.path.join(tmp, "db"), "--socket", sock_path,
                              "--timezone", "UTC"], stderr=log)
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
        total = status["counts"]["assets"]
        print("photod %s, %d assets (%s), load average %s" % (c.call("rpc.hello")["daemonVersion"], total, corpus,
                                                             " ".join("%.2f" % x for x in os.getloadavg())))
        rss = lambda: {k: v.strip() for k, v in (l.split(":", 1) for l in open("/proc/%d/status" % p.pid)) if k in ("VmRSS", "VmHWM")}
        before = rss()
        fetches(c, Client(sock_path), a.runs, total)
        after = rss()
        print("photod memory: VmRSS %s after indexing, %s after the fetches (peak %s)" % (before["VmRSS"], after["VmRSS"], after["VmHWM"]))
        fanout(sock_path, a.subscribers, a.writes)
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait()
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
