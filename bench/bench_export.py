"""Chrome Trace Event JSON export (`tracevis3d.save(trace, path, format="chrome")`), one table.

For synthetic traces of growing size (4 threads): seconds to write the file, its size, the
write rate, and the process's peak memory growth while writing, next to the peer measured
in the same run: orjson (the fastest JSON serialiser on PyPI) dumping the same events
built as Python dicts, which is what an exporter written the obvious way does; the peer's
time includes building the dicts and its memory holds them all.  The 10^7 row writes only
ours (the peer would need tens of GB).

    .venv/bin/python bench/bench_export.py [--sizes 100000,1000000,10000000]
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
which, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
t = tracevis3d.synthetic(n, threads=4, seed=1)
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
    with open(out, "wb") as fh:
        fh.write(orjson.dumps({"traceEvents": ev}))
dt = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"s": dt, "bytes": os.path.getsize(out), "grow_mb": (peak - base) / 1024}))
"""


def run(which: str, n: int, folder: str) -> dict:
    out = os.path.join(folder, f"{which}_{n}.json")
    env = {**os.environ, "PYTHONPATH": REPO}
    p = subprocess.run([sys.executable, "-c", CHILD, which, str(n), out], capture_output=True, text=True, env=env,
                       timeout=3600)
    if p.returncode != 0:
        return {"error": p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}"}
    res = json.loads(p.stdout.strip().splitlines()[-1])
    os.unlink(out)
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000,1000000,10000000")
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for n in sizes:
            ours = run("ours", n, folder)
            peer = run("orjson", n, folder) if n <= 2_000_000 else {}
            rows.append((n, ours, peer))
    print("| calls | ours s | file MB | ours MB/s | ours peak growth MB | orjson+dicts s | its peak growth MB |"
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
