#!/usr/bin/env python3
"""images.request through a running photod: 256-px thumbnails of 3000x2000 JPEGs, end to end
over the socket, next to ImageMagick's `convert -thumbnail` on the same files in the same run,
then the latency of a cache hit over the socket.

The corpus is thumb-bench.py's (../shared/bench/make-corpus.py --scale 2, only 3000x2000 files
kept; reused from its work directory when present). photod (release build) indexes it, then:

  cold      two connections each request half of the files (highQuality, fit 256x256), one
            request at a time: images/s = files / wall seconds, from the first request to the
            last answer (photod decodes, scales, encodes and writes each into its cache);
  convert   `convert F -thumbnail 256x256 -quality 85 OUT`, two at a time (MAGICK_THREAD_LIMIT=1);
  hit       one connection requests images already in the cache, one at a time: the median and
            99th percentile of request → answer, measured by the client (Python's json and a
            Unix socket included);
  degraded  for files not rendered yet, opportunistic: request → the images.degraded stand-in
            (the EXIF thumbnail), median.

Standard library only. Prints a table and the ratios.
"""
import argparse
import concurrent.futures
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import siblings
from rpc_client import Client

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def request_all(sock, ids, size, delivery="highQuality"):
    c = Client(sock)
    errors = 0
    for i in ids:
        n = c.send("images.request", {"id": i, "targetSize": [size, size], "deliveryMode": delivery})
        while True:
            m = c.read()
            if m.get("id") == n:
                errors += "error" in m
                break
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--hits", type=int, default=2000, help="cache-hit requests timed (default 2000)")
    ap.add_argument("--file-size", default="1800k")
    ap.add_argument("--workdir", default="/tmp/photod-thumb-bench")
    ap.add_argument("--shared", default=os.path.join(os.path.dirname(ROOT), "shared"))
    ap.add_argument("--photod", help="photod binary (default: build it in release mode)")
    ap.add_argument("--scratch-path", default=None)
    args = ap.parse_args()

    tb = siblings.load("thumb-bench.py")
    os.makedirs(args.workdir, exist_ok=True)
    files = tb.make_corpus(args)
    if not args.photod:
        cmd = ["swift", "build", "-c", "release", "--product", "photod"]
        if args.scratch_path:
            cmd += ["--scratch-path", args.scratch_path]
        subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        out = subprocess.run(cmd + ["--show-bin-path"], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()
        args.photod = os.path.join(out, "photod")

    work = tempfile.mkdtemp(prefix="image-bench-", dir=args.workdir)
    lib = os.path.join(work, "lib")
    os.makedirs(lib)
    for f in files:
        shutil.copy(f, lib)
    sock = os.path.join(work, "photod.sock")

    def start():
        """Starts photod on the library and returns it with a client, once it is idle."""
        p = subprocess.Popen([args.photod, "--library", lib, "--database", os.path.join(work, "photod.db"), "--socket", sock,
                              "--cache-dir", os.path.join(work, "cache"), "--log-level", "warning"],
                             stderr=open(os.path.join(work, "photod.log"), "a"))
        deadline = time.time() + 120
        while True:
            try:
                client = Client(sock)
                if client.call("library.status")["state"] == "idle":
                    return p, client
            except OSError:
                pass
            if time.time() > deadline:
                raise SystemExit("photod not idle; see %s/photod.log" % work)
            time.sleep(0.1)

    daemon, c = start()
    try:
        ids = []
        offset = 0
        while True:
            page = c.call("assets.fetch", {"limit": 1000, "offset": offset})
            ids += [a["id"] for a in page["assets"]]
            if page.get("nextOffset") is None:
                break
            offset = page["nextOffset"]
        half = len(ids) // 2
        first, second = ids[:half], ids[half:]

        # Degraded first: the stand-in's latency for files not rendered yet (a tenth of them).
        probe = Client(sock)
        stand = []
        for i in first[: max(1, len(first) // 10)]:
            t = time.perf_counter()
            n = probe.send("images.request", {"id": i, "targetSize": [args.size, args.size], "deliveryMode": "opportunistic"})
            got = None
            while True:
                m = probe.read()
                if m.get("method") == "images.degraded" and got is None:
                    got = time.perf_counter() - t
                if m.get("id") == n:
                    break
            if got is not None:
                stand.append(got)
        # Clear what the probe rendered, so that "cold" renders every file.
        probe.sock.close()
        shutil.rmtree(os.path.join(work, "cache"), ignore_errors=True)
        daemon.terminate()
        daemon.wait()
        daemon, c = start()

        # Cold: every file rendered, two connections.
        t = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            errors = sum(pool.map(lambda part: request_all(sock, part, args.size), [first, second]))
        cold = time.monotonic() - t

        # ImageMagick on the same files, same machine, same run.
        out = os.path.join(work, "convert")
        os.makedirs(out)
        convert, convert_errors = tb.run_convert(argparse.Namespace(size=args.size), files, out)

        # Cache hits, one connection, one at a time.
        hit = Client(sock)
        lat = []
        for k in range(args.hits):
            i = ids[k % len(ids)]
            t = time.perf_counter()
            n = hit.send("images.request", {"id": i, "targetSize": [args.size, args.size]})
            while hit.read().get("id") != n:
                pass
            lat.append(time.perf_counter() - t)
        status = c.call("library.status")["images"]
    finally:
        daemon.terminate()
        daemon.wait()

    ms = lambda v: "%.2f" % (v * 1000)
    lat.sort()
    print("images.request through photod, %d JPEGs of 3000x2000, %d-px thumbnails, 2 cores" % (len(files), args.size))
    print("| measure | value |")
    print("|---|---|")
    print("| photod, cold (2 connections): images/s | %.1f (%d errors) |" % (len(ids) / cold, errors))
    print("| convert -thumbnail (2 at a time): images/s | %.1f (%d errors) |" % (len(files) / convert, convert_errors))
    print("| ratio photod / convert | %.1fx |" % ((len(ids) / cold) / (len(files) / convert)))
    print("| cache hit over the socket: median / p99 ms (%d requests) | %s / %s |" % (
        len(lat), ms(statistics.median(lat)), ms(lat[int(len(lat) * 0.99) - 1])))
    if stand:
        print("| opportunistic: request -> degraded stand-in, median ms (%d) | %s |" % (len(stand), ms(statistics.median(stand))))
    print("| daemon counters | rendered %d, cacheHits %d, failed %d |" % (status["rendered"], status["cacheHits"], status["failed"]))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
