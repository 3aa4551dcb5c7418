#!/usr/bin/env python3
"""Places and search, measured from outside photod (issue 30).

  python3 Benchmarks/places-search-bench.py --library LIB --photod PHOTOD [--rounds 3] [--runs 7]
      [--skip-index | --index-only | --existing | --instructions] [--workdir DIR] [--results FILE]

In one run, on one library (e.g. ../shared/bench/make-corpus.py's 100,000 or 1,000,000 files):

1. The first index, `--rounds` times with the gazetteer on and off alternately (`--gazetteer
   on|off`, fresh databases): photod's CPU (utime + stime from /proc, at idle) per asset, the
   writer thread's (`photod-sort`, where places are looked up and written) apart, and
   `lastScan`'s files/s. On minus off is what placing costs an asset. `--skip-index` makes one
   index (gazetteer on) and skips the comparison; `--index-only` stops after it. On a VM whose
   neighbours move CPU times by ±3 µs a file, `--instructions` counts instead: both indexes
   under callgrind (valgrind), on − off in instructions an asset, and that in time at the rate
   the binary runs natively (then stops).
2. The pass that places a library indexed before places (as after migration 011): the places of
   that database are cleared, `places.end` set to its last asset, the database sealed as a clean
   stop leaves it (so the start is an upgrade's, not one after a change made while photod was
   stopped, which reads every page first), and photod started again; the pass's time is from the
   start to `library.status.placing` reaching its total.
3. `assets.search` with queries of 1 to 3 words drawn from the library (the most and least
   common city, a year folder, the most common camera make, one file's own word, a prefix as one
   types, and combinations, a rare word before a common one and after it), `--runs` + 1 rounds, each query's first page (limit 100) asked new
   (a favorite set or cleared before each round moves the change token: nothing kept answers
   it), then the same page again and the next page: per query the medians, p50 and p99 of each
   kind and over every request. Then, likewise, what a search box asks as one types, a letter at a
   time (`typed`: every prefix of the most common city, year, make and file-name word), apart.
   `places.fetch`: its median.
4. Size: what places and search add to the database — a VACUUMed copy against a VACUUMed copy
   with their tables, indexes, columns and triggers dropped, per asset.

Each request is timed from writing its line to having read the answer's (the socket, as a
client sees it). Prints a table and appends one JSON line to --results with the commit and the
load average. Python 3 standard library and the sqlite3 module only.
"""
import argparse
import json
import os
import shutil
import sqlite3
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from rpc_client import Client  # noqa: E402

# What migrations 011, 012 and 015 add (places, the coordinates' index, search), to measure what they cost.
WITHOUT = """
DROP TRIGGER assets_unindexed_insert; DROP TABLE assets_unindexed;
DROP TRIGGER assets_indexes_delete;
DROP TRIGGER assets_words_update;
DROP TRIGGER directories_words_insert; DROP TRIGGER directories_words_update; DROP TRIGGER directories_words_delete;
DROP TRIGGER places_words_insert; DROP TRIGGER asset_keywords_words_insert; DROP TRIGGER asset_keywords_words_delete;
DROP TRIGGER user_albums_words_insert; DROP TRIGGER user_albums_words_update; DROP TRIGGER user_albums_words_delete;
DROP TRIGGER IF EXISTS moments_words_insert; DROP TRIGGER IF EXISTS moments_words_update;
DROP TRIGGER IF EXISTS moments_words_delete;
DROP TRIGGER IF EXISTS moments_unindexed_insert; DROP TRIGGER IF EXISTS moments_unindexed_delete;
DROP TABLE IF EXISTS moments_unindexed;
DROP TRIGGER IF EXISTS cameras_words_insert; DROP TABLE IF EXISTS camera_words; DROP TABLE IF EXISTS camera_counts;
DROP TRIGGER IF EXISTS assets_camera_count_update; DROP INDEX IF EXISTS assets_camera;
DROP TRIGGER IF EXISTS assets_group_count_update; DROP TABLE IF EXISTS group_counts;
DROP TABLE asset_words; DROP VIEW asset_words_source; DROP TABLE folder_words; DROP TABLE place_words;
DROP TABLE keyword_words; DROP TABLE album_words; DROP TABLE moment_words;
DROP INDEX assets_location; DROP INDEX assets_place; DROP TABLE place_counts;
DROP INDEX assets_directory; CREATE INDEX assets_directory ON assets(directory_id, local_datetime);
DROP TRIGGER assets_place_count_update;
ALTER TABLE assets DROP COLUMN place_id; ALTER TABLE assets DROP COLUMN zone_offset; ALTER TABLE assets DROP COLUMN file_place;
ALTER TABLE files DROP COLUMN file_place; ALTER TABLE tombstones DROP COLUMN file_place; DROP TABLE places;
ALTER TABLE moments DROP COLUMN title; ALTER TABLE moments DROP COLUMN location_names;
ALTER TABLE moments DROP COLUMN place_tally;
"""
# Cameras (migration 021), once the indexes naming the column are gone.
WITHOUT_CAMERAS = """
ALTER TABLE assets DROP COLUMN camera_id; DROP TABLE cameras;
"""


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_cpu_seconds(pid, name):
    """CPU (utime + stime) of the process's threads called `name` (the writer is photod-sort)."""
    total = 0.0
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, t)) as f:
                text = f.read()
        except FileNotFoundError:
            continue
        if text[text.index("(") + 1:text.rindex(")")] == name:
            fields = text.rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


class Photod:
    def __init__(self, a, db, extra=(), prefix=()):
        self.dir = tempfile.mkdtemp(prefix="psb-", dir="/tmp")
        self.sock = os.path.join(self.dir, "s")
        cmd = [*prefix, a.photod, "--library", a.library, "--database", db, "--socket", self.sock, "--cache-dir",
               os.path.join(self.dir, "cache"), "--timezone", "UTC", *extra]
        self.log = open(os.path.join(self.dir, "log"), "wb")
        self.t0 = time.monotonic()
        self.p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)
        while True:
            if self.p.poll() is not None:
                raise SystemExit("photod exited: %s" % open(self.log.name).read()[-2000:])
            try:
                self.c = Client(self.sock)
                break
            except OSError:
                time.sleep(0.01)

    def status(self):
        return self.c.call("library.status")

    def wait(self, done, timeout=3600):
        while True:
            st = self.status()
            if done(st):
                return st
            if time.monotonic() - self.t0 > timeout:
                raise SystemExit("photod did not finish in %d s" % timeout)
            time.sleep(0.05)

    def timed(self, method, params):
        secs, line = self.c.raw(method, params)
        msg = json.loads(line)
        if "error" in msg:
            raise SystemExit("%s %s: %s" % (method, json.dumps(params), msg["error"]))
        return secs * 1000, msg["result"]

    def stop(self):
        self.p.terminate()
        self.p.wait(120)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def idle(st):
    return st.get("state") == "idle" and st.get("lastScan") is not None


def index(a, db, gazetteer):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.unlink(db + suffix)
    d = Photod(a, db, ["--gazetteer", gazetteer])
    st = d.wait(idle)
    cpu = cpu_seconds(d.p.pid)
    writer = thread_cpu_seconds(d.p.pid, "photod-sort")
    files = st["lastScan"]["files"]
    rate = files / st["lastScan"]["seconds"]
    d.stop()
    return {"gazetteer": gazetteer, "files": files, "cpu_us_per_file": cpu / files * 1e6,
            "writer_us_per_file": writer / files * 1e6, "files_per_s": rate}


def instructions(a, workdir):
    """Placing's cost counted in instructions: the first index with the gazetteer off, then on,
    each under callgrind (which counts every thread's user-mode instructions, the same whatever
    else the machine runs; ~6 minutes each at 100,000 files), on a copy of the binary without its
    debug information (valgrind 3.19 does not read Swift's DWARF 5). On − off per asset is
    converted to time at the rate the same binary runs natively: an index with the gazetteer
    off, its user CPU over its instructions."""
    binary = os.path.join(workdir, "photod-stripped")
    shutil.copy(a.photod, binary)
    subprocess.run(["strip", "--strip-debug", binary], check=True)
    stripped = argparse.Namespace(**{**vars(a), "photod": binary})
    counts = {}
    for g in ("off", "on"):
        db, out = os.path.join(workdir, "callgrind-%s.db" % g), os.path.join(workdir, "callgrind-%s.out" % g)
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(db + suffix):
                os.unlink(db + suffix)
        d = Photod(stripped, db, ["--gazetteer", g], prefix=["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out])
        st = d.wait(idle, timeout=4 * 3600)
        d.stop()
        with open(out) as f:
            total = next(int(line.split()[1]) for line in f if line.startswith(("summary:", "totals:")))
        counts[g] = {"files": st["lastScan"]["files"], "instructions": total}
        log("callgrind, gazetteer %s: %d files, %.0f instructions a file" % (g, counts[g]["files"], total / counts[g]["files"]))
        os.unlink(db)
    db = os.path.join(workdir, "native-off.db")
    d = Photod(a, db, ["--gazetteer", "off"])
    st = d.wait(idle)
    with open("/proc/%d/stat" % d.p.pid) as f:
        user = int(f.read().rsplit(")", 1)[1].split()[11]) / os.sysconf("SC_CLK_TCK")
    d.stop()
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.unlink(db + suffix)
    per = {g: c["instructions"] / c["files"] for g, c in counts.items()}
    ns_per_instruction = user / st["lastScan"]["files"] * 1e9 / per["off"]
    return {"instructions_per_file": per, "placing_instructions_per_file": per["on"] - per["off"],
            "user_us_per_file_off": user / st["lastScan"]["files"] * 1e6, "ns_per_instruction": ns_per_instruction,
            "placing_user_us_per_file": (per["on"] - per["off"]) * ns_per_instruction / 1000}


def queries(db):
    q = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    cities = q.execute("""SELECT p.city, count(*) n FROM assets a JOIN places p ON p.id = a.place_id
                          WHERE p.city IS NOT NULL GROUP BY p.city ORDER BY n DESC""").fetchall()
    year = q.execute("""SELECT substr(CAST(local_datetime AS TEXT), 1, 4) y, count(*) n FROM assets GROUP BY y
                        ORDER BY n DESC LIMIT 1""").fetchone()[0]
    make = q.execute("""SELECT lower(make), count(*) n FROM assets WHERE make IS NOT NULL GROUP BY lower(make)
                        ORDER BY n DESC LIMIT 1""").fetchone()
    name = q.execute("SELECT CAST(path AS TEXT) FROM assets ORDER BY pk LIMIT 1 OFFSET (SELECT count(*) / 2 FROM assets)").fetchone()[0]
    q.close()
    word = max(os.path.splitext(os.path.basename(name))[0].replace("_", "-").split("-"), key=len)
    top, rare = cities[0][0], cities[-1][0]
    out = [top, rare, year, word, top[:2], "%s %s" % (top, year), "%s %s" % (rare, year), "%s %s" % (year, rare)]
    if make:
        out += [make[0].split()[0], "%s %s %s" % (rare, make[0].split()[0], year)]
    return out


def typed(db, picked):
    """What a search box asks as one types, a letter at a time: every prefix of the most common
    city, the most common year, the most common make and the most common word of the file
    names without their extensions (of 5,000 spread over the library: "img" of IMG_0615.JPG),
    each one a new query; `picked` is `queries`' list."""
    q = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    names = [r[0] for r in q.execute("""SELECT CAST(path AS TEXT) FROM assets
                                       WHERE pk % (SELECT max(1, count(*) / 5000) FROM assets) = 0""")]
    q.close()
    words = {}
    for n in names:
        for w in re.findall(r"[^\W\d_]{2,}", os.path.splitext(os.path.basename(n))[0].lower()):
            words[w] = words.get(w, 0) + 1
    ends = [picked[0], picked[2]] + ([picked[8]] if len(picked) > 8 else [])
    ends += [max(words, key=words.get)] if words else []
    out = []
    for end in ends:
        out += [end[:i] for i in range(1, len(end) + 1) if end[:i] not in out]
    return out


def search_round(d, qs, runs):
    """Each query `runs` + 1 times as a client meets it: its first page asked new (a favorite
    set and cleared between the rounds moves the change token, so nothing kept from the round
    before answers it), the same page again, and the next page (offset 100)."""
    per = {text: {"first": [], "again": [], "next": []} for text in qs}
    anyone = d.timed("assets.fetch", {"limit": 1})[1]["assets"][0]["id"]
    for run in range(runs + 1):
        flag = run % 2 == 0
        d.timed("assets.setFavorite", {"ids": [anyone], "favorite": flag})
        for text in qs:
            ms, r = d.timed("assets.search", {"query": text, "limit": 100})
            per[text]["first"].append(ms)
            per[text]["total"] = r["total"]
            per[text]["again"].append(d.timed("assets.search", {"query": text, "limit": 100})[0])
            per[text]["next"].append(d.timed("assets.search", {"query": text, "limit": 100, "offset": 100})[0])
    if runs % 2 == 0:
        d.timed("assets.setFavorite", {"ids": [anyone], "favorite": False})
    places = [d.timed("places.fetch", {})[0] for _ in range(runs + 1)]

    def tail(kind):
        every = sorted(t for r in per.values() for t in r[kind])
        return {"p50_ms": statistics.median(every), "p99_ms": every[min(len(every) - 1, int(len(every) * 0.99))]}
    out = {"queries": {text: {"total": r["total"], "first_ms": statistics.median(r["first"]),
                              "again_ms": statistics.median(r["again"]), "next_ms": statistics.median(r["next"])}
                       for text, r in per.items()},
           "first": tail("first"), "again": tail("again"), "next": tail("next")}
    every = sorted(t for r in per.values() for kind in ("first", "again", "next") for t in r[kind])
    out.update({"p50_ms": statistics.median(every), "p99_ms": every[min(len(every) - 1, int(len(every) * 0.99))],
                "places_fetch_median_ms": statistics.median(places[1:]), "places_fetch_first_ms": places[0]})
    return out


def size(db, assets):
    tmp = tempfile.mkdtemp(prefix="psb-size-", dir=os.path.dirname(os.path.abspath(db)))
    try:
        w, wo = os.path.join(tmp, "with.db"), os.path.join(tmp, "without.db")
        shutil.copy(db, w)
        c = sqlite3.connect(w)
        c.execute("VACUUM")
        c.close()
        shutil.copy(w, wo)
        c = sqlite3.connect(wo)
        c.executescript(WITHOUT)
        if c.execute("SELECT count(*) FROM pragma_table_info('assets') WHERE name = 'camera_id'").fetchone()[0]:
            c.executescript(WITHOUT_CAMERAS)
        c.execute("VACUUM")
        c.close()
        a, b = os.path.getsize(w), os.path.getsize(wo)
        return {"db_bytes": os.path.getsize(db), "vacuumed": a, "vacuumed_without": b, "bytes_per_asset": (a - b) / assets}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def reseal(db):
    """Seals the database as a clean stop of photod would (`DatabaseSeal`: device, inode, size,
    modification and change times), so that the start after this script changed it offline is the
    start after an upgrade it stands for, not one after damage: without it the start reads every
    page first (`PRAGMA quick_check`, ~3 s at 1M), which the pass would be charged with."""
    assert not os.path.exists(db + "-wal") or os.path.getsize(db + "-wal") == 0
    st = os.stat(db)
    with open(db + ".clean", "w") as f:
        f.write("photod-seal 1 %d %d %d %d %d\n" % (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--library", required=True)
    p.add_argument("--photod", required=True)
    p.add_argument("--workdir", default="/tmp/photod-places-bench")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--skip-index", action="store_true")
    p.add_argument("--existing", action="store_true",
                   help="measure search, places.fetch and size on the database a run left in --workdir (no index, no pass)")
    p.add_argument("--index-only", action="store_true", help="the first indexes (on and off) only: what placing costs")
    p.add_argument("--instructions", action="store_true",
                   help="placing's cost in instructions (callgrind, gazetteer off and on), converted at the native rate")
    p.add_argument("--results", default=None)
    a = p.parse_args()
    a.library = os.path.abspath(a.library)
    os.makedirs(a.workdir, exist_ok=True)
    db = os.path.join(a.workdir, "photod.db")
    out = {"library": a.library, "commit": subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"],
                                                           capture_output=True, text=True).stdout.strip(),
           "loadavg": open("/proc/loadavg").read().split()[:3], "index": []}

    if a.instructions:
        out["instructions"] = r = instructions(a, a.workdir)
        print("| placing, instructions an asset (callgrind, gazetteer on − off) | %.0f (on %.0f, off %.0f) |"
              % (r["placing_instructions_per_file"], r["instructions_per_file"]["on"], r["instructions_per_file"]["off"]))
        print("| placing, user CPU an asset at the native rate (%.3f ns an instruction: %.1f µs user a file, off) | %.2f µs |"
              % (r["ns_per_instruction"], r["user_us_per_file_off"], r["placing_user_us_per_file"]))
        if a.results:
            with open(a.results, "a") as f:
                f.write(json.dumps(out) + "\n")
        return

    order = [] if a.existing else ["on"] if a.skip_index else [g for r in range(a.rounds) for g in (("off", "on") if r % 2 == 0 else ("on", "off"))]
    for g in order:
        r = index(a, db if g == "on" else db + ".off", g)
        log("index, gazetteer %s: %d files, %.0f files/s, %.1f µs CPU a file (the writer %.1f)"
            % (g, r["files"], r["files_per_s"], r["cpu_us_per_file"], r["writer_us_per_file"]))
        out["index"].append(r)
    if not a.skip_index and not a.existing:
        for s in ("", "-wal", "-shm"):
            if os.path.exists(db + ".off" + s):
                os.unlink(db + ".off" + s)
        for key, field in (("placing_cpu_us_per_file", "cpu_us_per_file"), ("placing_writer_us_per_file", "writer_us_per_file")):
            on = [r[field] for r in out["index"] if r["gazetteer"] == "on"]
            off = [r[field] for r in out["index"] if r["gazetteer"] == "off"]
            out[key] = statistics.median(on) - statistics.median(off)
            out[key + "_spread"] = (min(on), max(on), min(off), max(off))
    if a.index_only:
        for key, what in (("placing_cpu_us_per_file", "CPU an asset, whole process"),
                          ("placing_writer_us_per_file", "the writer thread's CPU an asset")):
            lo_on, hi_on, lo_off, hi_off = out[key + "_spread"]
            print("| placing, %s (gazetteer on − off, medians of %d) | %.1f µs (on %.1f–%.1f, off %.1f–%.1f) |"
                  % (what, a.rounds, out[key], lo_on, hi_on, lo_off, hi_off))
        if a.results:
            with open(a.results, "a") as f:
                f.write(json.dumps(out) + "\n")
        return

    # The pass over a library indexed before places.
    c = sqlite3.connect(db)
    placed = c.execute("SELECT count(*) FROM assets WHERE latitude IS NOT NULL AND deleted_at IS NULL").fetchone()[0]
    assets = c.execute("SELECT count(*) FROM assets").fetchone()[0]
    if not a.existing:
        c.execute("UPDATE assets SET place_id = NULL, zone_offset = NULL")
        c.execute("DELETE FROM meta WHERE key LIKE 'places.%'")
        c.execute("INSERT INTO meta (key, value) SELECT 'places.end', max(pk) FROM assets")
        c.commit()
    c.close()
    if not a.existing:
        reseal(db)
    d = Photod(a, db)
    st = d.wait(lambda s: idle(s) and (s.get("placing") is None or s["placing"]["done"] >= s["placing"]["total"]))
    if not a.existing:
        out["pass"] = {"assets": placed, "seconds": time.monotonic() - d.t0}
        log("pass: %d assets placed in %.1f s (from the start)" % (placed, out["pass"]["seconds"]))

    qs = queries(db)
    out["search"] = search_round(d, qs, a.runs)
    out["typed"] = search_round(d, typed(db, qs), a.runs)
    d.stop()
    out["size"] = size(db, assets)

    print("| what | figure |")
    print("|---|---|")
    if "placing_cpu_us_per_file" in out:
        print("| placing, CPU an asset (gazetteer on − off, medians of %d) | %.1f µs (the writer thread's %.1f µs) |"
              % (a.rounds, out["placing_cpu_us_per_file"], out["placing_writer_us_per_file"]))
    if "pass" in out:
        print("| the pass over %d assets with coordinates | %.1f s |" % (placed, out["pass"]["seconds"]))
    for text, r in out["search"]["queries"].items():
        print("| `assets.search` \"%s\" (%d found), medians | new %.1f ms, again %.1f ms, next page %.1f ms |"
              % (text, r["total"], r["first_ms"], r["again_ms"], r["next_ms"]))
    s = out["search"]
    for kind, what in (("first", "asked new"), ("again", "the same page again"), ("next", "the next page")):
        print("| `assets.search`, %s | p50 %.1f ms, p99 %.1f ms |" % (what, s[kind]["p50_ms"], s[kind]["p99_ms"]))
    print("| `assets.search`, every request | p50 %.1f ms, p99 %.1f ms |" % (s["p50_ms"], s["p99_ms"]))
    print("| `places.fetch` | first %.1f ms, median %.1f ms |" % (s["places_fetch_first_ms"], s["places_fetch_median_ms"]))
    t = out["typed"]
    slow = sorted(t["queries"].items(), key=lambda kv: -kv[1]["first_ms"])
    print("| `assets.search` as one types (%s), asked new | p50 %.1f ms, p99 %.1f ms; slowest %s |"
          % (", ".join('"%s"' % k for k in t["queries"]), t["first"]["p50_ms"], t["first"]["p99_ms"],
             ", ".join('"%s" %.0f ms' % (k, r["first_ms"]) for k, r in slow[:5])))
    z = out["size"]
    print("| places and search in the database (VACUUMed, with − without) | %.0f bytes an asset |" % z["bytes_per_asset"])
    if a.results:
        with open(a.results, "a") as f:
            f.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
