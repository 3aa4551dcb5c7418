#!/usr/bin/env python3
"""Library fetches of every shape the docs allow, timed from outside photod (issue 29).

  python3 Benchmarks/fetch-engines.py --library LIB --database DB --engine NAME=PHOTOD[,VAR=VALUE] ... [--rounds 3] [--runs 7]
  python3 Benchmarks/fetch-engines.py --library LIB --database DB --engine ... --fresh   # also: right after a first index

DB is indexed from LIB first when it does not exist (by the first engine's photod). Each
engine is a photod binary started with its environment (VAR=VALUE: PHOTOD_FETCH_ENGINE=sql made
the build at fde918b answer by SQL alone) on a copy of DB of its own (DB-NAME.db, with the files
beside it: made once), the engines alternating within each round, the order rotated by round.
Per start: the page of scale-bench's row 4 sent as soon as rpc.hello is answered (the first
predicate fetch after a start; the start before asked it last), then a query no start asked,
idle, the fetch catalog awaited when there is one, then every
shape: its first request (a query this process has not seen), then --runs requests of the same
query at the next offsets (paging through it), each timed from writing the request line to
having read the response line; then VmRSS, RssAnon and VmHWM from /proc/PID/status. --fresh adds,
per engine, a first index of a fresh database followed at once by 11 of row 4's pages (their
median) and the peak RSS of it all.

Prints one table (shape, then per engine first and median ms per size) and appends every
measurement to --results (JSON lines) with the commit, the load average and what else ran.
Python 3 standard library only.
"""
import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


import siblings  # noqa: E402

sb = siblings.load("scale-bench.py")
cf = siblings.load("compare-fetches.py")
ib = sb.ib
log = ib.log

ROW4 = {"predicate": 'mediaType == "image" AND pixelWidth >= 400', "sort": "-localDateTime", "limit": 100}
# A query no start before asked (a predicate of the same cost, another sort).
NEW_AFTER_START = {"predicate": 'pixelWidth >= 400 AND mediaType == "image"', "sort": "-addedDate", "limit": 100}
AFTER_START = "first predicate fetch after a start (row 4, the last query before the stop)"
NEW_AT_START = "then a query not asked before the stop"
SORT_KEYS = ["localDateTime", "addedDate", "pixelWidth", "pixelHeight", "duration", "make", "model", "path",
             "mediaType", "latitude", "longitude", "isFavorite"]
# One predicate per key (the corpus: JPEGs only, 2015-2024, widths 250-500, GPS on 60 %, no
# keywords, no videos: the video keys and keywords select nothing, which costs SQL a scan all the same).
PREDICATES = [
    ("mediaType", 'mediaType == "image"'),
    ("subtypes", 'subtypes CONTAINS "screenshot"'),
    ("localDateTime", 'localDateTime >= "2020-01-01T00:00:00"'),
    ("localDate", 'localDate BETWEEN "2019-05-01" AND "2019-05-31"'),
    ("addedDate", 'addedDate >= "2000-01-01"'),
    ("pixelWidth", "pixelWidth >= 400"),
    ("pixelHeight", "pixelHeight < 250"),
    ("latitude", "latitude > 40"),
    ("longitude", "longitude < 0"),
    ("duration", "duration > 1"),
    ("frameRate", "frameRate >= 30"),
    ("bitRate", "bitRate > 1000000"),
    ("videoCodec", 'videoCodec == "h264"'),
    ("audioCodec", "audioCodec == null"),
    ("isFavorite", "isFavorite == true"),
    ("isHidden", "isHidden == false"),
    ("make", 'make == "Canon"'),
    ("model", 'model BEGINSWITH "EOS"'),
    ("path", 'path CONTAINS "/2019-05"'),
    ("keywords", 'keywords CONTAINS "beach"'),
]


def shapes():
    """(name, method, params, how): how is "page" (paged through) or "repeat" (the same request)."""
    out = [("row 4: image AND pixelWidth >= 400, -localDateTime", "assets.fetch", dict(ROW4), "page")]
    for key, p in PREDICATES:
        params = {"predicate": p, "limit": 100}
        if key == "isHidden":
            params["includeHidden"] = True
        out.append(("predicate on %s" % key, "assets.fetch", params, "page"))
    for key in SORT_KEYS:
        for d in ("", "-"):
            out.append(("sort %s%s" % (d, key), "assets.fetch", {"sort": d + key, "limit": 100}, "page"))
        out.append(("pixelWidth >= 400, sort %s" % key, "assets.fetch",
                    {"predicate": "pixelWidth >= 400", "sort": key, "limit": 100}, "page"))
    out += [
        ("no predicate, default order, offset 50 %", "assets.fetch", {"limit": 100, "offset": "half"}, "page"),
        ("row 4 at offset 50 %", "assets.fetch", dict(ROW4, offset="half"), "page"),
        ("row 4 at its last page", "assets.fetch", dict(ROW4, offset="end"), "repeat"),
        ("pixelWidth >= 400, sort make, offset 50 %", "assets.fetch",
         {"predicate": "pixelWidth >= 400", "sort": "make", "limit": 100, "offset": "half"}, "page"),
        ("count: row 4's predicate, limit 1", "assets.fetch", {"predicate": ROW4["predicate"], "limit": 1}, "repeat"),
        ("count: make == \"Canon\", limit 1", "assets.fetch", {"predicate": 'make == "Canon"', "limit": 1}, "repeat"),
        ("fetchIDs: library, default order", "assets.fetchIDs", {}, "repeat"),
        ("fetchIDs: row 4", "assets.fetchIDs", {"predicate": ROW4["predicate"], "sort": ROW4["sort"]}, "repeat"),
        ("fetchIDs: make == \"Canon\", sort -pixelWidth", "assets.fetchIDs",
         {"predicate": 'make == "Canon"', "sort": "-pixelWidth"}, "repeat"),
        ("moment: pixelWidth >= 400", "collections.assets", {"id": "MOMENT", "predicate": "pixelWidth >= 400"}, "page"),
        ("folder album: sort -pixelWidth", "collections.assets", {"id": "ALBUM", "sort": "-pixelWidth"}, "page"),
        ("s_favorites: row 4", "collections.assets", {"id": "s_favorites", "predicate": ROW4["predicate"]}, "page"),
        ("s_recentlyAdded: pixelWidth >= 400", "collections.assets",
         {"id": "s_recentlyAdded", "predicate": "pixelWidth >= 400", "limit": 100}, "page"),
        ("fetchIDs: folder album, make == \"Canon\"", "assets.fetchIDs", {"id": "ALBUM", "predicate": 'make == "Canon"'},
         "repeat"),
    ]
    return out


def other_work():
    """What else runs: the processes outside this benchmark using the CPU now (ps, top five)."""
    try:
        ps = subprocess.run(["ps", "-eo", "pcpu,comm,args", "--sort=-pcpu"], capture_output=True, text=True).stdout
    except OSError:
        return []
    rows = []
    for line in ps.splitlines()[1:]:
        parts = line.split(None, 2)
        if len(parts) == 3 and float(parts[0]) >= 5 and "fetch-engines" not in parts[2]:
            rows.append("%s%% %s" % (parts[0], parts[2][:120]))
    return rows[:5]


def resolve(d, params, total_of):
    """Params with the placeholders filled: MOMENT, ALBUM, offset "half"/"end"."""
    p = dict(params)
    if p.get("id") == "MOMENT":
        p["id"] = d.moment
    elif p.get("id") == "ALBUM":
        p["id"] = d.album
    if p.get("offset") in ("half", "end"):
        probe = {k: v for k, v in p.items() if k != "offset"}
        probe["limit"] = 1
        total = total_of(probe)
        p["offset"] = total // 2 if params["offset"] == "half" else max(0, total - p.get("limit", 100))
    return p


def start(d, engine, tag):
    """Starts d's photod with the engine's environment."""
    saved = {k: os.environ.get(k) for k in engine.env}
    os.environ.update(engine.env)
    try:
        d.start(tag)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def measure_start(a, d, engine, size_label, res, run_id):
    """One start of photod with `engine`: every shape."""
    start(d, engine, engine.name)
    out = {}
    try:
        d.wait_answering()
        first, _ = d.timed("assets.fetch", ROW4)
        out[AFTER_START] = {"first": first * 1000}
        out[NEW_AT_START] = {"first": d.timed("assets.fetch", NEW_AFTER_START)[0] * 1000}
        d.wait_idle(600, 0.5)
        # The catalog's files are mapped or made in the background: wait until a fetch uses them.
        deadline = time.monotonic() + 300
        while True:
            st = d.call("library.status").get("fetchCatalog")
            # (None: a build with no catalog; the fde918b build with PHOTOD_FETCH_ENGINE=sql never makes it.)
            if not st or engine.env.get("PHOTOD_FETCH_ENGINE") == "sql" or (st.get("token") is not None and not st.get("building")):
                break
            if time.monotonic() > deadline:
                raise ib.BenchError("the fetch catalog was not made within 300 s")
            time.sleep(0.2)
        if d.moment is None:
            d.moment = d.call("moments.fetch", {"limit": 1})["moments"][0]["id"]
            d.album = cf.largest_album(d.client)

        def total_of(probe):
            m = "collections.assets" if "id" in probe else "assets.fetch"
            return d.call(m, probe)["total"]

        for name, method, params, how in shapes():
            p = resolve(d, params, total_of)
            t, r = d.timed(method, p)
            total = r.get("total", 0)
            times = []
            for k in range(a.runs):
                q = dict(p)
                if how == "page" and total > 0:
                    lim = q.get("limit", 100)
                    q["offset"] = (q.get("offset", 0) + (k + 1) * lim) % max(1, total)
                times.append(d.timed(method, q)[0] * 1000)
            out[name] = {"first": t * 1000, "median": statistics.median(times), "total": total}
        for key in ("VmRSS", "RssAnon", "VmHWM"):
            out[key] = ib.proc_status_kb(d.p.pid, key) / 1024
        d.timed("assets.fetch", ROW4)  # a client's last query before the stop
    finally:
        if d.p is not None:
            d.stop()
    for k, v in out.items():
        rec = {"run_id": run_id, "size": size_label, "engine": engine.name, "shape": k,
               "loadavg": os.getloadavg()}
        rec.update(v if isinstance(v, dict) else {"value": v})
        res.append(rec)
    return out


def fresh_index(a, engine, corpus, size_label, res, run_id):
    """A first index of a fresh database with `engine`, then at once 11 of row 4's pages."""
    rundir = tempfile.mkdtemp(prefix="fresh-", dir=a.workdir)
    d = sb.Daemon(SimpleNamespace(photod=engine.photod), corpus, os.path.join(rundir, "photod.db"), rundir)
    start(d, engine, "fresh-" + engine.name)
    try:
        d.wait_answering()
        wall, _ = d.wait_idle(3600, 0.5, progress=True)
        times = [d.timed("assets.fetch", ROW4)[0] * 1000 for _ in range(11)]
        d.sample()
        rec = {"run_id": run_id, "size": size_label, "engine": engine.name, "shape": "fresh index",
               "index_wall_s": wall, "row4_median_ms": statistics.median(times), "row4_first_ms": times[0],
               "hwm_mb": d.hwm_kb / 1024, "anon_peak_mb": d.anon_kb / 1024, "loadavg": os.getloadavg()}
        time.sleep(a.settle)
        d.sample()
        rec["hwm_after_settle_mb"] = d.hwm_kb / 1024
        rec["rss_after_settle_mb"] = d.rss_kb() / 1024
        res.append(rec)
        return rec
    finally:
        if d.p is not None:
            d.stop()
        shutil.rmtree(rundir, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--library", required=True)
    ap.add_argument("--database", required=True, help="indexed from --library first when missing")
    ap.add_argument("--engine", action="append", required=True, metavar="NAME=PHOTOD[,VAR=VALUE...]")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--fresh", action="store_true", help="also a first index of a fresh database per engine")
    ap.add_argument("--settle", type=float, default=15.0, help="seconds after a fresh index before its last RSS sample")
    ap.add_argument("--workdir", default="/work/bench-data/fetch-engines")
    ap.add_argument("--results", default=None, help="JSON lines (default WORKDIR/results.jsonl)")
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    a.results = a.results or os.path.join(a.workdir, "results.jsonl")
    engines = []
    for text in a.engine:
        name, spec = text.split("=", 1)
        photod, *env = spec.split(",")
        engines.append(SimpleNamespace(name=name, photod=os.path.abspath(photod), env=dict(e.split("=", 1) for e in env)))
    n = sum(len(fs) for _, _, fs in os.walk(a.library))
    size_label = "%dk" % (n // 1000) if n < 1_000_000 else "%gM" % (n / 1e6)
    run_id = datetime.datetime.now().strftime("%Y%m%dT%H%M%S")
    commit = subprocess.run(["git", "-C", sb.REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", sb.REPO, "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                           text=True).stdout
    res = []
    header = {"run_id": run_id, "header": True, "commit": commit, "modified": len(dirty.splitlines()), "size": size_label,
              "files": n, "engines": [vars(e) for e in engines], "loadavg_start": os.getloadavg(),
              "other_work_start": other_work(),
              "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    log("run %s at %s (%d modified), %s files, load %s" % (run_id, commit, header["modified"], n, header["loadavg_start"]))
    for w in header["other_work_start"]:
        log("  also running: " + w)
    rundir = os.path.dirname(os.path.abspath(a.database))
    os.makedirs(rundir, exist_ok=True)
    if not os.path.exists(a.database):
        log("indexing %s into %s" % (a.library, a.database))
        d = sb.Daemon(SimpleNamespace(photod=engines[0].photod), a.library, a.database, rundir)
        start(d, engines[0], "index")
        d.wait_answering()
        wall, _ = d.wait_idle(7200, 1.0, progress=True)
        log("  idle after %.1f s" % wall)
        d.stop()
    daemons = {}
    for e in engines:
        stem, ext = os.path.splitext(a.database)
        copy = "%s-%s%s" % (stem, e.name, ext)
        if not os.path.exists(copy):
            for suffix in ("", "-wal"):
                if os.path.exists(a.database + suffix):
                    shutil.copyfile(a.database + suffix, copy + suffix)
            if os.path.isdir(a.database + ".catalog"):
                shutil.copytree(a.database + ".catalog", copy + ".catalog")
        d = sb.Daemon(SimpleNamespace(photod=e.photod), a.library, copy, rundir)
        d.moment = d.album = None
        daemons[e.name] = d
    results = {e.name: [] for e in engines}
    for r in range(a.rounds):
        order = engines[r % len(engines):] + engines[:r % len(engines)]
        for e in order:
            log("round %d: %s (load %.2f)" % (r + 1, e.name, os.getloadavg()[0]))
            results[e.name].append(measure_start(a, daemons[e.name], e, size_label, res, run_id))
    fresh = {}
    if a.fresh:
        for e in engines:
            log("fresh index: %s" % e.name)
            fresh[e.name] = fresh_index(a, e, a.library, size_label, res, run_id)
    footer = {"run_id": run_id, "footer": True, "loadavg_end": os.getloadavg(), "other_work_end": other_work()}
    with open(a.results, "a") as f:
        for rec in [header] + res + [footer]:
            f.write(json.dumps(rec) + "\n")

    def med(e, shape, field):
        vals = [o[shape][field] for o in results[e] if shape in o and field in o[shape]]
        return statistics.median(vals) if vals else None

    print("\n%s files, commit %s, run %s; load %s at the start, %s at the end; medians of %d rounds (ms)"
          % (n, commit, run_id, " ".join("%.2f" % x for x in header["loadavg_start"]),
             " ".join("%.2f" % x for x in footer["loadavg_end"]), a.rounds))
    names_ = [e.name for e in engines]
    print("| shape | total | " + " | ".join("%s first | %s page" % (e, e) for e in names_) + " |")
    print("|---|---|" + "---|---|" * len(engines))
    names = [AFTER_START, NEW_AT_START] + [s[0] for s in shapes()]
    for name in names:
        total = next((o[name].get("total") for o in results[names_[0]] if name in o), None)
        cells = []
        for e in names_:
            f, m = med(e, name, "first"), med(e, name, "median")
            cells.append("%.2f" % f if f is not None else "")
            cells.append("%.2f" % m if m is not None else "")
        print("| %s | %s | %s |" % (name, "" if total is None else "{:,}".format(total), " | ".join(cells)))
    for key in ("VmRSS", "RssAnon", "VmHWM"):
        print("| %s after the fetches, MB | | %s |" % (key, " | ".join(
            "%.1f | " % statistics.median(o[key] for o in results[e]) for e in names_)))
    for e, rec in fresh.items():
        print("fresh index, %s: idle after %.1f s; row 4 first %.1f ms, median of 11 %.1f ms; VmHWM %.1f MB "
              "(RssAnon peak %.1f); after %.0f s: VmHWM %.1f, VmRSS %.1f" % (
                  e, rec["index_wall_s"], rec["row4_first_ms"], rec["row4_median_ms"], rec["hwm_mb"],
                  rec["anon_peak_mb"], a.settle, rec["hwm_after_settle_mb"], rec["rss_after_settle_mb"]))
    for w in footer["other_work_end"]:
        print("also running at the end: " + w)


if __name__ == "__main__":
    main()
