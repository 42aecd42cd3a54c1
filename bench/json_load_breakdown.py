"""Where a Chrome JSON load's time goes, first load in a fresh process and steady state: one table.

    .venv/bin/python bench/json_load_breakdown.py FILE.json [--loads 2]

Run in a fresh process (this script is that process): ``import tracevis3d`` and its parts (numpy,
the kernel-cache check of `tracevis3d._numba_env`, the model), then ``tracevis3d.load(FILE)``
``--loads`` times.  Each load's time is split by the importer's stages (the module-level functions
of `tracevis3d.io.chrome` that `load_chrome` calls, timed by wrapping them), and the first load's
share spent loading compiled kernels from numba's cache (``Cache.load_overload``: the index, the
object code, linking it) is given per kernel.  Stages overlap where the importer runs a second
thread (`chrome._SideJob`): their sum may pass the load's wall time.
"""
from __future__ import annotations

import argparse
import sys
import time

T_START = time.perf_counter()


def _timed_imports() -> list:
    rows = []
    t = time.perf_counter()
    import numpy  # noqa: F401

    rows.append(("import numpy", time.perf_counter() - t))
    t = time.perf_counter()
    import tracevis3d._numba_env  # noqa: F401  (the kernel-cache check runs here)

    rows.append(("import tracevis3d._numba_env (kernel-cache check)", time.perf_counter() - t))
    t = time.perf_counter()
    import tracevis3d  # noqa: F401

    rows.append(("import tracevis3d (the rest)", time.perf_counter() - t))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--loads", type=int, default=2)
    ap.add_argument("--top", type=int, default=12, help="kernels listed by their cache-load time")
    args = ap.parse_args()
    import warnings

    warnings.simplefilter("ignore")
    rows = _timed_imports()
    import tracevis3d

    t = time.perf_counter()
    tracevis3d._kernels_ready()
    rows.append(("_kernels_ready (imports numba)", time.perf_counter() - t))
    t = time.perf_counter()
    from numba.core import caching

    rows.append(("import numba.core.caching", time.perf_counter() - t))

    t = time.perf_counter()
    import tracevis3d.io.chrome as chrome

    rows.append(("import tracevis3d.io.chrome (and its kernels' modules)", time.perf_counter() - t))
    cache_loads: dict = {}
    orig_load = caching.Cache.load_overload

    def load_overload(self, sig, target_context):
        t0 = time.perf_counter()
        try:
            return orig_load(self, sig, target_context)
        finally:
            f = self._py_func
            name = f"{f.__module__.rsplit('.', 1)[-1]}.{f.__qualname__}"
            dt = time.perf_counter() - t0
            k = cache_loads.setdefault(name, [0, 0.0])
            k[0] += 1
            k[1] += dt

    caching.Cache.load_overload = load_overload
    stage_times: dict = {}

    def wrap(name, fn):
        def timed(*a, **k):
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                stage_times[name] = stage_times.get(name, 0.0) + time.perf_counter() - t0
        return timed

    for name in dir(chrome):
        fn = getattr(chrome, name)
        if callable(fn) and getattr(fn, "__module__", "") == chrome.__name__ and not isinstance(fn, type) \
                and name not in ("load_chrome",):
            setattr(chrome, name, wrap(name, fn))
    for name in ("preorder_sort", "nest_sorted_intervals", "classify_functions", "working_waits",
                 "parse_function_name", "side_tracks", "counter_samples", "memory_counters", "dump_counters"):
        if hasattr(chrome, name):
            setattr(chrome, name, wrap(name, getattr(chrome, name)))
    per_load = []
    for _ in range(args.loads):
        stage_times.clear()
        cache_before = sum(v[1] for v in cache_loads.values())
        t = time.perf_counter()
        tr = tracevis3d.load(args.path)
        total = time.perf_counter() - t
        per_load.append((total, dict(stage_times), sum(v[1] for v in cache_loads.values()) - cache_before))
        del tr
    print(f"# {args.path}; fresh process; from the interpreter's start to the end of the first load: "
          f"{rows_total(rows) + per_load[0][0]:.3f} s (imports {rows_total(rows):.3f} s)")
    print("| step | s |")
    print("|---|---|")
    for what, s in rows:
        print(f"| {what} | {s:.3f} |")
    print()
    heads = " | ".join(f"load {k + 1} s" for k in range(len(per_load)))
    print(f"| stage | {heads} |")
    print("|---|" + "---|" * len(per_load))
    print("| whole load | " + " | ".join(f"{p[0]:.3f}" for p in per_load) + " |")
    print("| of which loading kernels from the cache | " + " | ".join(f"{p[2]:.3f}" for p in per_load) + " |")
    names = sorted(set().union(*[p[1] for p in per_load]), key=lambda n: -per_load[-1][1].get(n, 0.0))
    for n in names:
        print(f"| {n} | " + " | ".join(f"{p[1].get(n, 0.0):.3f}" for p in per_load) + " |")
    print()
    print(f"| kernel loaded from the cache (first load; {len(cache_loads)} kernels, "
          f"{sum(v[1] for v in cache_loads.values()):.3f} s) | loads | s |")
    print("|---|---|---|")
    for name, (n, s) in sorted(cache_loads.items(), key=lambda kv: -kv[1][1])[: args.top]:
        print(f"| {name} | {n} | {s:.3f} |")


def rows_total(rows) -> float:
    return sum(s for what, s in rows if what.startswith("import tracevis3d") or what == "import numpy")


if __name__ == "__main__":
    main()
    print(f"(whole process {time.perf_counter() - T_START:.3f} s)", file=sys.stderr)
