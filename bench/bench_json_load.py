"""JSON load at the parser's speed and memory (issue 26, item 2): one table.

    .venv/bin/python bench/bench_json_load.py [--files A.json,B.json] [--before REV] [--repeat 3]

For each file, in fresh processes: ``tracevis3d.load(path)``, its peak the process's ru_maxrss
after its first load (imports and kernels included), its time that of a second load in the
process (the first also loads the compiled kernels from numba's cache, 0.3 s, once per
session), with this tree and with the tree at ``--before`` (a git
revision extracted to a temporary folder: the same code before this work), and pysimdjson's
``Parser().parse`` of the file's bytes (the peer of the goal: its time is the parse alone, the
file read before it is not counted; its peak includes the bytes).  Best of ``--repeat`` runs
(one for files over 512 MB); every run of a file over 512 MB holds ``/tmp/tv3d-heavy.lock``
(the machine's memory is shared).  Goals: time <= 2x simdjson, peak <= file + 1 GiB.

Measured (stop 52, 2026-11-26, this 2-core machine, quiet; the peer 9c8c63d is the tree before the
file was read into a huge-page buffer and before working_waits became one kernel; 5 runs of the
sympy file, 1 of the 10^7 file):

| file | MB | calls | tree | load s | peak GB | simdjson parse s | time × simdjson | peak − file GiB |
|---|---|---|---|---|---|---|---|---|
| sympy_pool.json | 177 | 1,049,895 | this tree | 0.56 | 0.45 | 0.36 | 1.57× | 0.25 |
| sympy_pool.json | 177 | 1,049,895 | 9c8c63d | 0.67 | 0.47 | 0.36 | 1.87× | 0.27 |
| s10m.json | 1351 | 10,000,000 | this tree | 6.36 | 2.35 | 11.50 | 0.55× | 0.93 |
| s10m.json | 1351 | 10,000,000 | 9c8c63d | 6.01 | 2.66 | 11.50 | 0.52× | 1.22 |

Both goals met on both files (the 10^7 file's peak was 1.22 GiB over its size: working_waits' numpy
temporaries at 10^7 calls; a run on a busy machine gave sympy 2.05× against 2.33× before).

Defaults: the real 178 MB VizTracer trace of sympy and the 10^7-call synthetic file written by
``tracevis3d.save(..., format="chrome")`` (``/tmp/s10m.json``; made by ``--make-10m`` if absent).
"""
from __future__ import annotations

import argparse
import fcntl
import os
import pathlib
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))  # a bench script, not the add-on
from bench_views import extract  # noqa: E402  (a git revision into a folder: the peer)

BIG = 512 << 20
LOCK = "/tmp/tv3d-heavy.lock"
OURS = """
import resource, sys, time, warnings
warnings.simplefilter("ignore")
import tracevis3d
tr = tracevis3d.load(sys.argv[1])  # the first load also loads the compiled kernels from the cache
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # the peak of opening one file
n = len(tr)
del tr
t = time.perf_counter()
tr = tracevis3d.load(sys.argv[1])
s = time.perf_counter() - t
print("RESULT", s, peak, n)
"""
SIMD = """
import resource, sys, time
import simdjson
with open(sys.argv[1], "rb") as f:
    data = f.read()
p = simdjson.Parser()
t = time.perf_counter()
doc = p.parse(data)
s = time.perf_counter() - t
print("RESULT", s, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, 0)
"""


def run(code: str, path: pathlib.Path, root: pathlib.Path, cache: str) -> tuple:
    """(seconds, peak bytes, calls) of one child, or (None, message, 0)."""
    env = dict(os.environ, PYTHONPATH=str(root), NUMBA_CACHE_DIR=cache)
    lock = open(LOCK, "a") if path.stat().st_size > BIG else None
    try:
        if lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
        r = subprocess.run([sys.executable, "-c", code, str(path)], cwd=root, env=env, capture_output=True,
                           text=True, timeout=1800)
    finally:
        if lock:
            lock.close()
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            _, s, peak, n = line.split()
            return float(s), int(peak), int(n)
    return None, (r.stderr or r.stdout).strip()[-160:], 0


def best(code, path, root, cache, repeat) -> tuple:
    runs = [run(code, path, root, cache) for _ in range(repeat)]
    ok = [r for r in runs if r[0] is not None]
    if not ok:
        return runs[-1]
    return min(r[0] for r in ok), min(r[1] for r in ok), ok[0][2]


def make_10m(path: pathlib.Path) -> None:
    code = ("import sys, tracevis3d; tracevis3d.save(tracevis3d.synthetic(10**7, threads=4), sys.argv[1], "
            "format='chrome')")
    with open(LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run([sys.executable, "-c", code, str(path)], cwd=REPO, check=True,
                       env=dict(os.environ, PYTHONPATH=str(REPO)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", default="/work/main/build/traces/sympy_pool.json,/tmp/s10m.json")
    ap.add_argument("--before", default="7884337", help="the tree before this work: a git revision")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--make-10m", action="store_true", help="write /tmp/s10m.json when it is absent")
    args = ap.parse_args()
    files = [pathlib.Path(f) for f in args.files.split(",")]
    if args.make_10m and not pathlib.Path("/tmp/s10m.json").exists():
        make_10m(pathlib.Path("/tmp/s10m.json"))
    cache = str(REPO / "build" / "numba-cache")
    with tempfile.TemporaryDirectory(prefix="tv3d-jsonload-") as tmp:
        warm = []  # small files that compile the kernels first (untimed): one and two scan threads
        for name, n in (("small.json", 20_000), ("two_threads.json", 400_000)):
            warm.append(pathlib.Path(tmp) / name)
            warm[-1].write_bytes(b'{"traceEvents": [' + b",".join(
                b'{"ph":"X","name":"f%d","pid":1,"tid":%d,"ts":%d,"dur":1}' % (k % 7, k % 2, k)
                for k in range(n)) + b"]}")
        roots = [("this tree", REPO, cache)]
        if args.before:
            peer = extract(args.before, pathlib.Path(tmp))
            roots.append((args.before, peer, str(pathlib.Path(tmp) / "numba-cache")))
        for _, root, c in roots:
            for w in warm:
                run(OURS, w, root, c)
        print("| file | MB | calls | tree | load s | peak GB | simdjson parse s | its peak GB | time × simdjson "
              "| peak − file GiB | goals (≤ 2×, ≤ 1 GiB) |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for path in files:
            if not path.exists():
                print(f"| {path} | missing | | | | | | | | | |")
                continue
            size = path.stat().st_size
            rep = 1 if size > BIG else args.repeat
            simd = best(SIMD, path, REPO, cache, rep)
            for label, root, c in roots:
                s, peak, n = best(OURS, path, root, c, rep)
                if s is None:
                    print(f"| {path.name} | {size / 1e6:.0f} | | {label} | error: {peak} | | | | | | |")
                    continue
                ratio = s / simd[0]
                over = (peak - size) / 2 ** 30
                goals = ("✓" if ratio <= 2 else "✗") + " " + ("✓" if over <= 1 else "✗")
                print(f"| {path.name} | {size / 1e6:.0f} | {n:,} | {label} | {s:.2f} | {peak / 1e9:.2f} | "
                      f"{simd[0]:.2f} | {simd[1] / 1e9:.2f} | {ratio:.2f}× | {over:.2f} | {goals} |", flush=True)


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"({time.perf_counter() - t0:.0f} s)")
