#!/usr/bin/env python3
"""256-px thumbnails from 3000x2000 JPEGs: photod's PhotoImaging (2 threads) next to
vipsthumbnail and ImageMagick's `convert -thumbnail` on the same files, in the same run.

The corpus comes from ../shared/bench/make-corpus.py (--scale 2: the 6000x4000 camera profiles
become 3000x2000, ~1.8 MB of real entropy-coded data each); only files of exactly 3000x2000
are kept. Each tool makes a 256x256-bounded JPEG of every file, with two processes or threads
on the machine's two cores:

  photod        photod-thumb-bench thumbs --threads 2 (render fit 256x256 + encode JPEG q85, written)
  vipsthumbnail two processes, each half of the files, VIPS_CONCURRENCY=1
  convert       `convert F -thumbnail 256x256 OUT.jpg`, one process per file, two at a time,
                MAGICK_THREAD_LIMIT=1 (the issue's baseline)
  convert-hint  the same with `-define jpeg:size=512x512` (ImageMagick's own shrink-on-load
                hint; shown for honesty, not the baseline)

Rounds rotate the order. images/s = files / wall seconds of the whole batch (process start-up
included for every tool); images per CPU-second (user+sys of the tool's processes) is also
printed, which stays meaningful when other work shares the machine. Standard library only.
"""
import argparse
import concurrent.futures
import json
import os
import resource
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def make_corpus(args):
    corpus = os.path.join(args.workdir, "corpus-%d" % args.count)
    if os.path.isdir(corpus) and len(os.listdir(corpus)) >= args.count:
        return sorted(os.path.join(corpus, f) for f in os.listdir(corpus))[: args.count]
    shutil.rmtree(corpus, ignore_errors=True)
    os.makedirs(corpus)
    maker = os.path.join(args.shared, "bench", "make-corpus.py")
    chosen = 0
    seed = 1
    while chosen < args.count and seed < 50:
        raw = os.path.join(args.workdir, "raw-%d" % seed)
        shutil.rmtree(raw, ignore_errors=True)
        manifest = raw + ".manifest.tsv"
        subprocess.run([sys.executable, maker, "--seed", str(seed), "--scale", "2", "--size", args.file_size,
                        "--layout", "flat", "--no-exif-frac", "0", raw, str(args.count * 3)], check=True,
                       stdout=subprocess.DEVNULL)
        with open(manifest) as f:
            header = f.readline().rstrip("\n").split("\t")
            for line in f:
                row = dict(zip(header, line.rstrip("\n").split("\t")))
                if row["width"] == "3000" and row["height"] == "2000" and chosen < args.count:
                    os.rename(os.path.join(raw, row["path"]), os.path.join(corpus, "%04d.jpg" % chosen))
                    chosen += 1
        shutil.rmtree(raw, ignore_errors=True)
        os.remove(manifest)
        seed += 1
    log("corpus: %d files of 3000x2000 in %s" % (chosen, corpus))
    return sorted(os.path.join(corpus, f) for f in os.listdir(corpus))[: args.count]


def release_bench(root, scratch_path=None):
    """Builds photod-thumb-bench in release mode; its path."""
    cmd = ["swift", "build", "-c", "release", "--product", "photod-thumb-bench", "--package-path", root]
    if scratch_path:
        cmd += ["--scratch-path", scratch_path]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    bin_dir = subprocess.run(cmd + ["--show-bin-path"], check=True, capture_output=True, text=True).stdout.strip()
    return os.path.join(bin_dir, "photod-thumb-bench")


def prepare(args):
    """The shared directory (../shared, else /work/shared), the work directory, and the
    photod-thumb-bench binary (built in release mode unless --bench names one)."""
    if not os.path.isdir(os.path.join(args.shared, "bench")) and os.path.isdir("/work/shared/bench"):
        args.shared = "/work/shared"
    os.makedirs(args.workdir, exist_ok=True)
    if not args.bench:
        args.bench = release_bench(ROOT, getattr(args, "scratch_path", None))


def rounds(args, names):
    """(round, tool, its emptied output directory) for every run; rounds rotate the tools' order."""
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            out = os.path.join(args.workdir, "out", name)
            shutil.rmtree(out, ignore_errors=True)
            os.makedirs(out)
            yield r, name, out


def warm(files):
    """Reads every file once: every tool then reads from the page cache."""
    for f in files:
        with open(f, "rb") as fh:
            while fh.read(1 << 20):
                pass


def run_photod(args, files, out):
    cmd = [args.bench, "thumbs", "--threads", "2", "--size", str(args.size), "--out", out] + files
    t = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t
    if p.returncode != 0:
        raise SystemExit("photod-thumb-bench failed: " + p.stderr[-2000:])
    errors = json.loads(p.stdout.strip().splitlines()[-1])["errors"]
    return wall, errors


def run_vips(args, files, out):
    env = dict(os.environ, VIPS_CONCURRENCY="1")
    halves = [files[0::2], files[1::2]]
    t = time.monotonic()
    procs = [subprocess.Popen(["vipsthumbnail", "-s", "%dx%d" % (args.size, args.size), "-o", out + "/%s.jpg[Q=85]"] + h,
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for h in halves if h]
    errors = sum(1 for p in procs if p.wait() != 0)
    return time.monotonic() - t, errors


def run_convert(args, files, out, hint=False):
    env = dict(os.environ, MAGICK_THREAD_LIMIT="1")

    def one(i_f):
        i, f = i_f
        cmd = ["convert"] + (["-define", "jpeg:size=%dx%d" % (2 * args.size, 2 * args.size)] if hint else []) \
            + [f, "-thumbnail", "%dx%d" % (args.size, args.size), "-quality", "85", os.path.join(out, "%d.jpg" % i)]
        return subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode

    t = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        errors = sum(1 for rc in pool.map(one, enumerate(files)) if rc != 0)
    return time.monotonic() - t, errors


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=200, help="number of 3000x2000 JPEGs (default 200)")
    ap.add_argument("--rounds", type=int, default=2, help="rounds, tool order rotated (default 2)")
    ap.add_argument("--size", type=int, default=256, help="thumbnail box in pixels (default 256)")
    ap.add_argument("--file-size", default="1800k", help="mean JPEG file size for make-corpus.py (default 1800k)")
    ap.add_argument("--workdir", default="/tmp/photod-thumb-bench")
    ap.add_argument("--shared", default=os.path.join(os.path.dirname(ROOT), "shared"),
                    help="the shared directory holding bench/make-corpus.py (default ../shared)")
    ap.add_argument("--bench", help="photod-thumb-bench binary (default: build it in release mode)")
    ap.add_argument("--scratch-path", default=None, help="swift build --scratch-path for the release build")
    ap.add_argument("--tools", default="photod,vipsthumbnail,convert,convert-hint")
    args = ap.parse_args()
    prepare(args)
    files = make_corpus(args)
    warm(files)
    tools = {"photod": run_photod, "vipsthumbnail": run_vips, "convert": run_convert,
             "convert-hint": lambda a, f, o: run_convert(a, f, o, hint=True)}
    names = [t for t in args.tools.split(",") if t in tools]
    results = {n: [] for n in names}
    cpu_rates = {n: [] for n in names}
    for r, name, out in rounds(args, names):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall, errors = tools[name](args, files, out)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        made = len([x for x in os.listdir(out) if x.endswith(".jpg")])
        rate = made / wall
        results[name].append(rate)
        cpu_rates[name].append(made / cpu if cpu > 0 else 0.0)
        log("round %d %-13s %6.1f images/s (%d made, %d errors, %.1f s wall, %.1f s CPU)"
            % (r + 1, name, rate, made, errors, wall, cpu))
    best = {n: max(v) for n, v in results.items()}
    best_cpu = {n: max(v) for n, v in cpu_rates.items()}
    print("\n%d JPEGs of 3000x2000 (~%s each) -> %dx%d-bounded JPEG thumbnails, 2 cores, warm cache, best of %d rounds"
          % (len(files), args.file_size, args.size, args.size, args.rounds))
    print("load average at the end: %s" % open("/proc/loadavg").read().split()[0:3])
    print("| tool | images/s (wall) | photod ratio | images per CPU-second | photod ratio |")
    print("|---|---|---|---|---|")
    for n in names:
        ratio = best["photod"] / best[n] if "photod" in best else float("nan")
        cratio = best_cpu["photod"] / best_cpu[n] if "photod" in best_cpu and best_cpu[n] > 0 else float("nan")
        print("| %s | %.1f | %s | %.1f | %s |" % (n, best[n], "1.00" if n == "photod" else "%.2fx" % ratio,
                                              best_cpu[n], "1.00" if n == "photod" else "%.2fx" % cratio))


if __name__ == "__main__":
    main()
