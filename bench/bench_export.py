"""Chrome Trace Event JSON export (`tracevis3d.save(trace, path, format="chrome")`), one table.

For synthetic traces of growing size (4 threads): seconds to write the file, its size, the
write rate, and the process's peak memory growth while writing, next to the peer measured
in the same run: orjson (the fastest JSON serialiser on PyPI) dumping the same events
built as Python dicts, which is what an exporter written the obvious way does; the peer's
time includes building the dicts and its memory holds them all.  The 10^7 row writes only
ours (the peer would need tens of GB).

    .venv/bin/python bench/bench_export.py [--sizes 100000,1000000,10000000] [--side]

``--side``: the traces also carry counters and flows (4 samples and 1 flow per 3 calls), written
by both.  Measured (2026-11-26, this 2-core machine, ``--sizes 100000,1000000 --side``), before
(side events one json.dumps per number and event) and after (per chunk: one orjson call per
column, the texts that repeat made once, one join), each run against the same peer:

    | calls (+ 1.33 samples, 0.5 flows each) | before s | after s | file MB | orjson+dicts s | × peer before → after |
    |---|---|---|---|---|---|
    | 100,000   | 1.11  | 0.16 | 34  | 0.53–0.64 | 1.72× → 0.31× |
    | 1,000,000 | 10.57 | 2.25 | 347 | 5.95      | 1.78× → 0.38× |
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r"""
import json, os, resource, sys, time
import numpy as np
import tracevis3d
which, n, out, side = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
t = tracevis3d.synthetic(n, threads=4, seed=1)
if side:  # 4 counter samples and 1 flow per 3 calls (issue 25's goal file: 1.33 M samples, 0.5 M flows per 10^6)
    rng = np.random.default_rng(3)
    ns, nf = 4 * n // 3, n // 2
    t.counter_names, t.series_names, t.series_units = ["memory", "cpu"], ["rss", "heap", "load"], ["MB", "MB", ""]
    t.series_counter, t.series_pid = np.array([0, 0, 1], np.int32), np.full(3, int(t.thread_pid[0]), np.int64)
    t.counter_series = np.sort(np.arange(ns) % 3).astype(np.int32)  # sorted by (series, time)
    t.counter_ts = np.concatenate([np.sort(rng.uniform(0, float(t.end.max()), int((t.counter_series == k).sum())))
                                   for k in range(3)])
    t.counter_value = np.round(rng.uniform(0, 1e3, ns), 3)
    a, b = np.sort(rng.integers(0, n, (2, nf)), axis=0)
    t.flow_id, t.flow_from, t.flow_to = np.arange(nf, dtype=np.int64), a.astype(np.int32), b.astype(np.int32)
    t.flow_cat, t.flow_cat_names = np.zeros(nf, np.int32), ["flow"]
    t.check()
if which == "ours":
    tracevis3d.save(tracevis3d.synthetic(1000, seed=2), out + ".warm", format="chrome")  # kernels compiled
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
if which == "ours":
    tracevis3d.save(t, out, format="chrome")
else:
    import orjson
    names = t.function_names
    ev = [{"pid": int(t.thread_pid[th]), "tid": int(t.thread_tid[th]), "ts": float(s), "ph": "X", "cat": "FEE",
           "name": names[f], "dur": float(d)}
          for th, f, s, d in zip(t.thread.tolist(), t.func.tolist(), t.start.tolist(), t.duration.tolist())]
    if side:
        from tracevis3d.io.chrome_writer import flow_point_times
        ev += [{"ph": "C", "pid": int(t.series_pid[k]), "ts": float(ts), "name": t.counter_names[t.series_counter[k]],
                "args": {t.series_names[k]: float(v)}}
               for k, ts, v in zip(t.counter_series.tolist(), t.counter_ts.tolist(), t.counter_value.tolist())]
        for ph, calls in (("s", t.flow_from), ("f", t.flow_to)):
            th = t.thread[calls]
            ev += [{"ph": ph, "pid": int(t.thread_pid[h]), "tid": int(t.thread_tid[h]), "cat": "flow", "name": "flow",
                    "id": k, "ts": float(ts)} for h, k, ts in zip(th.tolist(), t.flow_id.tolist(),
                                                                 flow_point_times(t, calls).tolist())]
    with open(out, "wb") as fh:
        fh.write(orjson.dumps({"traceEvents": ev}))
dt = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"s": dt, "bytes": os.path.getsize(out), "grow_mb": (peak - base) / 1024}))
"""


def run(which: str, n: int, folder: str, side: bool = False) -> dict:
    out = os.path.join(folder, f"{which}_{n}.json")
    env = {**os.environ, "PYTHONPATH": REPO}
    p = subprocess.run([sys.executable, "-c", CHILD, which, str(n), out, "1" if side else "0"], capture_output=True,
                       text=True, env=env, timeout=3600)
    if p.returncode != 0:
        return {"error": p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}"}
    res = json.loads(p.stdout.strip().splitlines()[-1])
    os.unlink(out)
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000,1000000,10000000")
    ap.add_argument("--side", action="store_true", help="also counters and flows: 4 samples and 1 flow per 3 calls "
                                                        "(issue 25's goal file at 10^6 calls), in both writers")
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for n in sizes:
            ours = run("ours", n, folder, args.side)
            peer = run("orjson", n, folder, args.side) if n <= 2_000_000 else {}
            rows.append((n, ours, peer))
    print("| calls" + (" (+ 1.33 samples, 0.5 flows each)" if args.side else "") + " | ours s | file MB | ours MB/s | ours peak growth MB | orjson+dicts s | its peak growth MB |"
          " time × peer | memory × peer |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n, o, p in rows:
        if "error" in o:
            print(f"| {n:,} | error: {o['error']} |  |  |  |  |  |  |  |")
            continue
        mb = o["bytes"] / 1e6
        ps = f"{p['s']:.2f}" if "s" in p else "–"
        pm = f"{p['grow_mb']:.0f}" if "s" in p else "–"
        rt = f"{o['s'] / p['s']:.2f}×" if "s" in p else "–"
        rm = f"{o['grow_mb'] / max(p['grow_mb'], 1):.2f}×" if "s" in p else "–"
        print(f"| {n:,} | {o['s']:.2f} | {mb:.0f} | {mb / o['s']:.0f} | {o['grow_mb']:.0f} | {ps} | {pm} | {rt} | {rm} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
