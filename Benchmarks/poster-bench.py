#!/usr/bin/env python3
"""Video posters per second: photod's poster path (PhotoImaging.renderPoster, as images.request
runs it) next to ffmpegthumbnailer (Debian's) on the same 1080p H.264 and HEVC clips, two
workers each, in the same run.

Clips: ffmpeg makes --count clips per codec, 1920x1080 at 30 fps, --seconds long, a keyframe
every second (as phones write them), from testsrc2 with noise over it (so that frames cost
what camera frames cost to decode), AAC sound. Both tools make a 256-px bounded JPEG of the
frame at 1 s, the poster time of a clip of 10 s or more:

  photod             photod-thumb-bench posters --threads 2 (release build; the first keyframe
                     at or after 1 s, one decoder thread, swscale, area resample, JPEG q85)
  ffmpegthumbnailer  `ffmpegthumbnailer -i F -o OUT.jpg -s 256 -t 00:00:01`, one process per
                     clip, two at a time

Rounds alternate the order; each figure is the median of --rounds rounds, posters/s = clips /
wall seconds of the batch (process start-up included for ffmpegthumbnailer, as a media server
calling it would pay it). CPU-seconds per poster (user+sys of the tool's processes) are
printed too. Standard library only; needs ffmpeg and ffmpegthumbnailer
(`apt-get install ffmpeg ffmpegthumbnailer`).
"""
import argparse
import concurrent.futures
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def make_clips(args, codec):
    out = os.path.join(args.workdir, "%s-%dx%ds" % (codec, args.count, args.seconds))
    os.makedirs(out, exist_ok=True)
    encoder = {"h264": ["-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p"],
               "hevc": ["-c:v", "libx265", "-preset", "veryfast", "-x265-params", "log-level=none", "-tag:v", "hvc1"]}[codec]
    clips = []
    for i in range(args.count):
        path = os.path.join(out, "clip-%02d.mp4" % i)
        clips.append(path)
        if os.path.exists(path):
            continue
        log("making %s" % path)
        subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
                        "testsrc2=size=1920x1080:rate=30,noise=alls=%d:allf=t+u" % (12 + i % 5),
                        "-f", "lavfi", "-i", "sine=frequency=%d" % (300 + 20 * i), "-t", str(args.seconds)]
                       + encoder + ["-g", "30", "-keyint_min", "30", "-c:a", "aac", path + ".tmp.mp4"], check=True)
        os.rename(path + ".tmp.mp4", path)
    return clips


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_photod(args, clips, out):
    cpu = children_cpu()
    start = time.monotonic()
    p = subprocess.run([args.bench, "posters", "--threads", "2", "--size", "256", "--out", out] + clips,
                       capture_output=True, text=True, check=True)
    wall = time.monotonic() - start
    result = json.loads(p.stdout.strip().splitlines()[-1])
    if result["errors"]:
        raise SystemExit("photod failed on %d clips: %s" % (result["errors"], p.stderr))
    return wall, children_cpu() - cpu


def run_thumbnailer(args, clips, out):
    cpu = children_cpu()
    start = time.monotonic()

    def one(item):
        i, clip = item
        subprocess.run(["ffmpegthumbnailer", "-i", clip, "-o", os.path.join(out, "%d.jpg" % i), "-s", "256",
                        "-t", "00:00:01"], check=True, capture_output=True)

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        list(pool.map(one, enumerate(clips)))
    return time.monotonic() - start, children_cpu() - cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=24, help="clips per codec (default 24)")
    ap.add_argument("--seconds", type=int, default=12, help="clip length (default 12)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--workdir", default="/tmp/photod-bench/posters")
    ap.add_argument("--bench", default=None, help="photod-thumb-bench (default: a release build of this checkout)")
    ap.add_argument("--quick", action="store_true", help="4 clips, 2 rounds (CI's smoke run)")
    args = ap.parse_args()
    if args.quick:
        args.count, args.rounds = 4, 2
    for tool in ("ffmpeg", "ffmpegthumbnailer"):
        if not shutil.which(tool):
            raise SystemExit("%s is not installed (apt-get install ffmpeg ffmpegthumbnailer)" % tool)
    if args.bench is None:
        subprocess.run(["swift", "build", "-c", "release", "--product", "photod-thumb-bench"], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
        args.bench = os.path.join(ROOT, ".build", "release", "photod-thumb-bench")
    os.makedirs(args.workdir, exist_ok=True)
    rows = []
    for codec in ("h264", "hevc"):
        clips = make_clips(args, codec)
        figures = {"photod": [], "ffmpegthumbnailer": []}
        cpu = {"photod": [], "ffmpegthumbnailer": []}
        for r in range(args.rounds):
            order = [("photod", run_photod), ("ffmpegthumbnailer", run_thumbnailer)]
            if r % 2:
                order.reverse()
            for name, run in order:
                out = os.path.join(args.workdir, "out-%s-%s" % (codec, name))
                shutil.rmtree(out, ignore_errors=True)
                os.makedirs(out)
                wall, used = run(args, clips, out)
                figures[name].append(len(clips) / wall)
                cpu[name].append(used / len(clips))
                log("%s round %d %s: %.1f posters/s, %.1f ms CPU each" % (codec, r + 1, name, len(clips) / wall, 1000 * used / len(clips)))
        p, f = statistics.median(figures["photod"]), statistics.median(figures["ffmpegthumbnailer"])
        rows.append((codec, p, f, statistics.median(cpu["photod"]), statistics.median(cpu["ffmpegthumbnailer"])))
    print("1080p clips, %d per codec, %ds, keyframe every second, 256-px poster at 1 s, two workers, median of %d rounds"
          % (args.count, args.seconds, args.rounds))
    print("%-6s %16s %22s %7s %18s %26s" % ("codec", "photod posters/s", "ffmpegthumbnailer /s", "ratio", "photod CPU ms", "ffmpegthumbnailer CPU ms"))
    for codec, p, f, pc, fc in rows:
        print("%-6s %16.1f %22.1f %6.2fx %18.1f %26.1f" % (codec, p, f, p / f, 1000 * pc, 1000 * fc))


if __name__ == "__main__":
    main()
