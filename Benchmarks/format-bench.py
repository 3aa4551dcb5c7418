#!/usr/bin/env python3
"""256-px thumbnails of the formats issue 33 added — TIFF (LZW strips, JPEG tiles), GIF, BMP,
JPEG 2000, JPEG XL and a camera RAW (DNG) — photod's PhotoImaging next to vipsthumbnail and
ImageMagick on the same files, in the same run.

The files are made from thumb-bench.py's 3000x2000 JPEGs (../shared/bench/make-corpus.py,
--scale 2): ImageMagick writes the TIFF, GIF, BMP and JPEG 2000 ones, cjxl (libjxl-tools) the
JPEG XL ones at distance 1, and the DNGs are linear DNGs (16-bit LinearRaw sensor data, the
JPEG as a 1500x1000 embedded preview, as cameras embed one) written here. The tools and their
process layout are thumb-bench.py's (two threads or two processes on the two cores, warm cache,
rounds rotating the order); a tool that cannot read a format shows its errors. Standard library
only.
"""
import argparse
import os
import resource
import struct
import subprocess
import sys

import siblings  # noqa: E402

tb = siblings.load("thumb-bench.py")

# Format: (file extension, how to make one from a JPEG: a function (src, dst)).
def im(*options):
    def make(src, dst):
        subprocess.run(["convert", src, *options, dst], check=True, stderr=subprocess.DEVNULL)
    return make


def jxl(src, dst):
    png = dst + ".png"
    subprocess.run(["convert", src, png], check=True)
    subprocess.run(["cjxl", png, dst, "-d", "1"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.remove(png)


def dng(src, dst):
    """A linear DNG: the photo's pixels (linearised, 16-bit) as LinearRaw sensor data in a
    SubIFD, and a 1500x1000 JPEG of it as IFD0's preview."""
    pre = dst + ".preview.jpg"
    subprocess.run(["convert", src, "-resize", "1500x1000", "-quality", "90", pre], check=True)
    preview = open(pre, "rb").read()
    os.remove(pre)
    rgb = subprocess.run(["convert", src, "-depth", "16", "-colorspace", "RGB", "-endian", "LSB", "rgb:-"], check=True,
                         capture_output=True).stdout
    w, h = 3000, 2000

    def entry(tag, typ, values):
        if typ == 2:
            return (tag, typ, len(values) + 1, values.encode() + b"\0")
        fmt = {1: "B", 3: "H", 4: "I"}.get(typ)
        if typ == 10:
            return (tag, typ, len(values), b"".join(struct.pack("<ii", *v) for v in values))
        return (tag, typ, len(values), b"".join(struct.pack("<" + fmt, v) for v in values))

    matrix = [(32406, 10000), (-15372, 10000), (-4986, 10000), (-9689, 10000), (18758, 10000), (415, 10000),
              (557, 10000), (-2040, 10000), (10570, 10000)]
    ifd0 = [entry(254, 4, [1]), entry(256, 4, [1500]), entry(257, 4, [1000]), entry(258, 3, [8, 8, 8]), entry(259, 3, [7]),
            entry(262, 3, [6]), (273, 4, 1, "preview"), entry(271, 2, "photod"), entry(272, 2, "Bench DNG"),
            entry(277, 3, [3]), entry(278, 4, [1000]), entry(279, 4, [len(preview)]), (330, 4, 1, "sub"),
            entry(50706, 1, [1, 4, 0, 0]), entry(50721, 10, matrix)]
    sub = [entry(254, 4, [0]), entry(256, 4, [w]), entry(257, 4, [h]), entry(258, 3, [16, 16, 16]), entry(259, 3, [1]),
           entry(262, 3, [34892]), (273, 4, 1, "sensor"), entry(277, 3, [3]), entry(278, 4, [h]), entry(279, 4, [len(rgb)])]
    ifd0.sort(key=lambda e: e[0])
    sub.sort(key=lambda e: e[0])
    sub_at = 8 + 2 + 12 * len(ifd0) + 4
    data_at = sub_at + 2 + 12 * len(sub) + 4
    extra = bytearray()
    places = {}

    def table(entries):
        out = struct.pack("<H", len(entries))
        for tag, typ, count, value in entries:
            if value == "sub":
                v = struct.pack("<I", sub_at)
            elif isinstance(value, str):
                v = value  # patched below
            elif len(value) <= 4:
                v = value.ljust(4, b"\0")
            else:
                v = struct.pack("<I", data_at + len(extra))
                extra.extend(value + b"\0" * (len(value) % 2))
            out += struct.pack("<HHI", tag, typ, count)
            if isinstance(v, str):
                places[v] = len(out)
                out += b"\0\0\0\0"
            else:
                out += v
        return out + b"\0\0\0\0"

    t0 = table(ifd0)
    t1 = table(sub)
    preview_at = data_at + len(extra)
    sensor_at = preview_at + len(preview) + len(preview) % 2
    t0 = t0[:places["preview"]] + struct.pack("<I", preview_at) + t0[places["preview"] + 4:]
    t1 = t1[:places["sensor"]] + struct.pack("<I", sensor_at) + t1[places["sensor"] + 4:]
    with open(dst, "wb") as f:
        f.write(b"II*\0" + struct.pack("<I", 8) + t0 + t1 + extra + preview + b"\0" * (len(preview) % 2) + rgb)


FORMATS = {
    "tiff-lzw": ("tif", im("-compress", "LZW")),
    "tiff-jpeg-tiles": ("tif", im("-compress", "JPEG", "-quality", "90", "-define", "tiff:tile-geometry=256x256")),
    "gif": ("gif", im("-colors", "256")),
    "bmp": ("bmp", lambda src, dst: subprocess.run(["convert", src, "BMP3:" + dst], check=True)),
    "jpeg2000": ("jp2", im("-quality", "40")),
    "jxl": ("jxl", jxl),
    "dng": ("dng", dng),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=12, help="files per format (default 12)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--file-size", default="1800k")
    ap.add_argument("--workdir", default="/tmp/photod-format-bench")
    ap.add_argument("--shared", default=os.path.join(os.path.dirname(tb.ROOT), "shared"))
    ap.add_argument("--bench", help="photod-thumb-bench binary (default: build it in release mode)")
    ap.add_argument("--formats", default=",".join(FORMATS))
    ap.add_argument("--tools", default="photod,vipsthumbnail,convert")
    args = ap.parse_args()
    tb.prepare(args)
    jpegs = tb.make_corpus(args)
    tools = {"photod": tb.run_photod, "vipsthumbnail": tb.run_vips, "convert": tb.run_convert}
    names = [t for t in args.tools.split(",") if t in tools]
    rows = []
    for fmt in args.formats.split(","):
        ext, make = FORMATS[fmt]
        folder = os.path.join(args.workdir, fmt)
        os.makedirs(folder, exist_ok=True)
        files = []
        for i, src in enumerate(jpegs):
            dst = os.path.join(folder, "%04d.%s" % (i, ext))
            if not os.path.exists(dst):
                make(src, dst)
            files.append(dst)
        size = sum(os.path.getsize(f) for f in files) / len(files)
        tb.warm(files)
        best, best_cpu = {}, {}
        for r, name, out in tb.rounds(args, names):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            wall, errors = tools[name](args, files, out)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            made = len([x for x in os.listdir(out) if x.endswith(".jpg") or x.endswith(".png")])
            tb.log("%-16s round %d %-13s %6.1f images/s (%d made, %d errors, %.1f s CPU)"
                   % (fmt, r + 1, name, made / wall, made, errors, cpu))
            if made:
                best[name] = max(best.get(name, 0), made / wall)
                best_cpu[name] = max(best_cpu.get(name, 0), made / cpu if cpu > 0 else 0)
        rows.append((fmt, size, best, best_cpu))
    print("\n%d files of 3000x2000 per format -> %dx%d-bounded thumbnails, 2 cores, warm cache, best of %d rounds (images/s)"
          % (len(jpegs), args.size, args.size, args.rounds))
    print("load average at the end: %s" % open("/proc/loadavg").read().split()[0:3])
    print("each cell: images/s of wall time / images per CPU-second")
    print("| format | mean file | " + " | ".join(names) + " | photod / vipsthumbnail (wall, CPU) |")
    print("|---|---|" + "---|" * len(names) + "---|")
    for fmt, size, best, cpu in rows:
        cells = ["%.1f / %.1f" % (best[n], cpu[n]) if best.get(n) else "fails" for n in names]
        both = all(k in d for d in (best, cpu) for k in ("photod", "vipsthumbnail"))
        ratio = "%.2fx, %.2fx" % (best["photod"] / best["vipsthumbnail"], cpu["photod"] / cpu["vipsthumbnail"]) if both else "-"
        print("| %s | %.1f MB | %s | %s |" % (fmt, size / 1e6, " | ".join(cells), ratio))


if __name__ == "__main__":
    sys.exit(main())
