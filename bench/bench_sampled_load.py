"""The JSON sampled-profile readers against orjson: load time of a speedscope file and a Firefox
Profiler (processed) file of 10^6 samples each, as a ratio to ``orjson.loads`` of the same
bytes, measured in the same run (the goal: ≤ 2×; both readers parse with orjson once, so the
ratio is what the reading adds to the parse).

The files are generated (seeded): several threads, stacks 20-60 frames deep drawn from a few
hundred functions, changing from sample to sample as a real program's do (mostly the same
stack or a few frames at the top, sometimes a deeper return and call).  The speedscope file is
what py-spy writes (``sampled``, seconds, a weight per sample); the Firefox file a processed
profile (per-thread tables, ``shared.stringArray``, ``samples.time`` in ms).

    .venv/bin/python bench/bench_sampled_load.py [--samples 1000000] [--threads 4] [--repeat 3]

Prints one table: per file its size, samples, calls, orjson's best time, tracevis3d.load's
best time, their ratio and the goal.  Times are the process's CPU time (every measured thing
runs on one thread): on a shared machine wall time is mostly the other processes' load.
"""
from __future__ import annotations

import argparse
import gc
import os
import pathlib
import sys
import tempfile
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parent.parent
if __name__ == "__main__" and str(REPO) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO))

GOAL_RATIO = 2.0


def random_stacks(n_samples: int, seed: int, n_funcs: int = 300, lo: int = 20, hi: int = 60) -> list:
    """``n_samples`` stacks (lists of function ids, root first) of a random walk between depths
    ``lo`` and ``hi``: 45 % the same as the previous, 30 % one or two top frames replaced, 20 % a
    return of 1-4 frames and calls of 1-4, 5 % a return of 5-15 and new calls."""
    rng = np.random.default_rng(seed)
    r = rng.random(n_samples)
    a = rng.integers(1, 5, n_samples)
    b = rng.integers(1, 5, n_samples)
    big = rng.integers(5, 16, n_samples)
    pool = rng.integers(0, n_funcs, n_samples * 16).tolist()
    stack = pool[:40]
    pi = 40
    out = []
    for k in range(n_samples):
        x = r[k]
        if x >= 0.45:
            if x < 0.75:
                cut = add = 1 + int(a[k]) % 2
            elif x < 0.95:
                cut, add = int(a[k]), int(b[k])
            else:
                cut, add = int(big[k]), int(big[(k + 7) % n_samples])
            keep = max(0, len(stack) - cut)
            add = min(max(keep + add, lo), hi) - keep
            stack = stack[:keep] + pool[pi:pi + add]
            pi = (pi + add) % (len(pool) - 64)
        out.append(stack)
    return out


def speedscope_bytes(n_samples: int, n_threads: int, seed: int = 1) -> bytes:
    """A py-spy-like speedscope file: ``n_threads`` sampled profiles, ``n_samples`` in all."""
    import orjson

    n_funcs = 300
    frames = [{"name": f"func_{k}", "file": f"/src/pkg/module_{k % 37}.py", "line": 10 + k} for k in range(n_funcs)]
    per = n_samples // n_threads
    profiles = []
    for t in range(n_threads):
        m = per if t < n_threads - 1 else n_samples - per * (n_threads - 1)
        profiles.append({"type": "sampled", "name": f"Thread {1000 + t} \"worker-{t}\"", "unit": "seconds",
                         "startValue": 0.0, "endValue": m * 0.001, "samples": random_stacks(m, seed + t, n_funcs),
                         "weights": [0.001] * m})
    doc = {"$schema": "https://www.speedscope.app/file-format-schema.json", "exporter": "bench",
           "shared": {"frames": frames}, "profiles": profiles, "name": "bench", "activeProfileIndex": 0}
    return orjson.dumps(doc)


def _prefix_table(stacks: list) -> tuple:
    """(prefix, frame, sample stack) of ``stacks`` (lists of function ids): their prefix tree."""
    index: dict = {}
    prefix, frame, sample = [], [], []
    for s in stacks:
        node = -1
        for f in s:
            key = (node, f)
            k = index.get(key)
            if k is None:
                k = index[key] = len(frame)
                prefix.append(None if node < 0 else node)
                frame.append(f)
            node = k
        sample.append(node if node >= 0 else None)
    return prefix, frame, sample


def firefox_bytes(n_samples: int, n_threads: int, seed: int = 2) -> bytes:
    """A processed Firefox Profiler file (version 57: per-thread tables, ``shared.stringArray``)
    with ``n_threads`` threads, ``n_samples`` samples in all."""
    import orjson

    n_funcs = 300
    strings = [f"func_{k}" for k in range(n_funcs)] + [f"resource://pkg/module_{k}.js" for k in range(37)]
    per = n_samples // n_threads
    threads = []
    rng = np.random.default_rng(seed)
    for t in range(n_threads):
        m = per if t < n_threads - 1 else n_samples - per * (n_threads - 1)
        prefix, frame, sample = _prefix_table(random_stacks(m, seed + t, n_funcs))
        times = np.cumsum(1.0 + rng.random(m) * 0.05).round(4).tolist()
        threads.append({
            "name": "GeckoMain" if t == 0 else f"DOM Worker {t}", "processType": "default", "processName": "bench",
            "pid": str(4000 + t // 2), "tid": 5000 + t, "isMainThread": t == 0,
            "registerTime": 0, "unregisterTime": None, "processStartupTime": 0, "processShutdownTime": None,
            "pausedRanges": [],
            "samples": {"length": m, "stack": sample, "time": times, "weight": None, "weightType": "samples"},
            "markers": {"length": 0, "data": [], "name": [], "startTime": [], "endTime": [], "phase": [],
                        "category": []},
            "stackTable": {"length": len(frame), "frame": frame, "prefix": prefix},
            "frameTable": {"length": n_funcs, "func": list(range(n_funcs)), "address": [-1] * n_funcs,
                           "line": [None] * n_funcs, "column": [None] * n_funcs, "category": [0] * n_funcs,
                           "subcategory": [0] * n_funcs, "innerWindowID": [0] * n_funcs,
                           "nativeSymbol": [None] * n_funcs, "inlineDepth": [0] * n_funcs},
            "funcTable": {"length": n_funcs, "name": list(range(n_funcs)), "isJS": [True] * n_funcs,
                          "relevantForJS": [False] * n_funcs, "resource": [-1] * n_funcs,
                          "fileName": [n_funcs + k % 37 for k in range(n_funcs)],
                          "lineNumber": [10 + k for k in range(n_funcs)], "columnNumber": [1] * n_funcs},
            "resourceTable": {"length": 0, "lib": [], "name": [], "host": [], "type": []},
            "nativeSymbols": {"length": 0, "libIndex": [], "address": [], "name": [], "functionSize": []},
        })
    doc = {"meta": {"interval": 1, "startTime": 1.7e12, "processType": 0, "product": "Firefox", "stackwalk": 1,
                    "version": 27, "preprocessedProfileVersion": 57, "categories": [
                        {"name": "Other", "color": "grey", "subcategories": ["Other"]}], "markerSchema": []},
           "libs": [], "shared": {"stringArray": strings}, "threads": threads}
    return orjson.dumps(doc)


def _best(fn, repeat: int) -> tuple:
    best, out = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        t0 = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t0)
        if _ < repeat - 1:
            del out
            out = None
    return best, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    os.environ.setdefault("NUMBA_CACHE_DIR", str(REPO / "build" / "numba-cache"))
    import orjson

    import tracevis3d

    t_start = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory(prefix="tv3d-bench-sampled-") as tmp:
        for label, make in (("speedscope (sampled)", speedscope_bytes), ("Firefox (processed)", firefox_bytes)):
            small = pathlib.Path(tmp) / "warm.json"
            small.write_bytes(make(2000, 2))
            tracevis3d.load(small)  # numba's kernels compiled or loaded from the cache, once
            data = make(args.samples, args.threads)
            path = pathlib.Path(tmp) / "profile.json"
            path.write_bytes(data)
            t_json, _ = _best(lambda: orjson.loads(data), args.repeat)
            t_load, trace = _best(lambda: tracevis3d.load(path), args.repeat)
            rows.append((label, len(data) / 1e6, int(trace.meta.get("n_samples", 0)), len(trace), t_json, t_load))
            trace = data = None
    print(f"| file ({args.samples:,} samples, {args.threads} threads) | MB | samples | calls | orjson.loads CPU s "
          f"| tracevis3d.load CPU s | × orjson | goal |")
    print("|---|---|---|---|---|---|---|---|")
    for label, mb, ns, nc, tj, tl in rows:
        ratio = tl / tj
        print(f"| {label} | {mb:.0f} | {ns:,} | {nc:,} | {tj:.2f} | {tl:.2f} | {ratio:.2f} | "
              f"≤ {GOAL_RATIO:g} {'met' if ratio <= GOAL_RATIO else 'NOT met'} |")
    print(f"(best of {args.repeat}; {time.perf_counter() - t_start:.0f} s in all; {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
