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
import os
import sys
import time

T_START = time.perf_counter()


class _Clock:
    """Wall and this thread's CPU seconds since it was made (CPU time: what a step costs when
    other processes share the machine and stretch the wall clock)."""

    def __init__(self):
        self.t, self.c = time.perf_counter(), time.thread_time()

    def read(self) -> tuple:
        return time.perf_counter() - self.t, time.thread_time() - self.c


def _timed_imports() -> list:
    rows = []
    c = _Clock()
    import numpy  # noqa: F401

    rows.append(("import numpy", *c.read()))
    c = _Clock()
    import tracevis3d._numba_env  # noqa: F401  (the kernel-cache check runs here)

    rows.append(("import tracevis3d._numba_env (kernel-cache check)", *c.read()))
    c = _Clock()
    import tracevis3d  # noqa: F401

    rows.append(("import tracevis3d (the rest)", *c.read()))
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

    c = _Clock()
    tracevis3d._kernels_ready()
    rows.append(("_kernels_ready (kernel_cache.ensure_installed)", *c.read()))
    c = _Clock()
    import numba  # noqa: F401
    from numba.core import caching

    rows.append(("import numba", *c.read()))
    c = _Clock()
    import tracevis3d.io.chrome as chrome

    rows.append(("import tracevis3d.io.chrome (and its kernels' modules)", *c.read()))
    cache_loads: dict = {}
    orig_load = caching.Cache.load_overload

    def load_overload(self, sig, target_context):
        c0 = _Clock()
        try:
            return orig_load(self, sig, target_context)
        finally:
            f = self._py_func
            name = f"{f.__module__.rsplit('.', 1)[-1]}.{f.__qualname__}"
            k = cache_loads.setdefault(name, [0, 0.0, 0.0])
            w, c = c0.read()
            k[0] += 1
            k[1] += w
            k[2] += c

    caching.Cache.load_overload = load_overload
    stage_times: dict = {}

    def wrap(name, fn):
        def timed(*a, **k):
            c0 = _Clock()
            try:
                return fn(*a, **k)
            finally:
                w, c = c0.read()
                old = stage_times.get(name, (0.0, 0.0))
                stage_times[name] = (old[0] + w, old[1] + c)
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
        cache_before = sum(v[2] for v in cache_loads.values())
        c = _Clock()
        tr = tracevis3d.load(args.path)
        per_load.append((*c.read(), dict(stage_times), sum(v[2] for v in cache_loads.values()) - cache_before))
        del tr
    imports = [sum(r[i] for r in rows) for i in (1, 2)]
    print(f"# {args.path}; fresh process; the steps before the first load: {imports[0]:.3f} s wall, {imports[1]:.3f} s "
          f"CPU (this thread); load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("| step | wall s | CPU s |")
    print("|---|---|---|")
    for what, w, c in rows:
        print(f"| {what} | {w:.3f} | {c:.3f} |")
    print()
    heads = " | ".join(f"load {k + 1} wall s | load {k + 1} CPU s" for k in range(len(per_load)))
    print(f"| stage (CPU: the calling thread's) | {heads} |")
    print("|---|" + "---|---|" * len(per_load))
    print("| whole load | " + " | ".join(f"{p[0]:.3f} | {p[1]:.3f}" for p in per_load) + " |")
    print("| of which loading kernels from the cache | " + " | ".join(f" | {p[3]:.3f}" for p in per_load) + " |")
    names = sorted(set().union(*[p[2] for p in per_load]), key=lambda n: -per_load[-1][2].get(n, (0, 0))[1])
    for n in names:
        print(f"| {n} | " + " | ".join("{:.3f} | {:.3f}".format(*p[2].get(n, (0.0, 0.0))) for p in per_load) + " |")
    print()
    print(f"| kernel loaded from the cache (first load; {len(cache_loads)} kernels, "
          f"{sum(v[2] for v in cache_loads.values()):.3f} s CPU) | loads | wall s | CPU s |")
    print("|---|---|---|---|")
    for name, (n, w, c) in sorted(cache_loads.items(), key=lambda kv: -kv[1][2])[: args.top]:
        print(f"| {name} | {n} | {w:.3f} | {c:.3f} |")


if __name__ == "__main__":
    main()
    print(f"(whole process {time.perf_counter() - T_START:.3f} s)", file=sys.stderr)
