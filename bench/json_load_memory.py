"""Where a Chrome JSON load's memory peaks: the resident set stage by stage, one table.

    .venv/bin/python bench/json_load_memory.py FILE.json [--loads 1]

Run in a fresh process (this script is that process; a file over 4 GB of load under ``flock
/tmp/tv3d-bigmem.lock``).  Each stage of the importer (the module-level functions of
`tracevis3d.io.chrome` that `load_chrome` calls, the file's read in `tracevis3d.io`) is timed and
its memory read from ``/proc/self/status``: the resident set (VmRSS) when it starts and ends and
the highest it reached meanwhile (VmHWM, reset before each stage through ``/proc/self/clear_refs``:
the kernel's own count, every numpy and numba buffer included, unlike tracemalloc).  The rows
"(between)" are the importer's own lines between two stages; the importer's second threads
(`chrome._SideJob`) run inside the main thread's stages and are not rows of their own.  Linux only.
"""
from __future__ import annotations

import argparse
import os
import sys
import threading
import time

GIB = 1 << 30


def _status() -> dict:
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmRSS", "VmHWM")):
                k, v = line.split(":")
                out[k] = int(v.split()[0]) * 1024
    return out


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


class Timeline:
    """The stages' rows: (name, seconds, RSS at start, peak during, RSS at end)."""

    def __init__(self):
        self.rows: list = []
        self.depth = 0
        self.t_last = time.perf_counter()

    def gap(self) -> None:
        st = _status()
        now = time.perf_counter()
        if self.rows and now - self.t_last > 0.0:
            self.rows.append(("(between)", now - self.t_last, None, st["VmHWM"], st["VmRSS"]))
        _reset_peak()

    def wrap(self, name: str, fn):
        def timed(*a, **k):
            if self.depth or threading.current_thread() is not threading.main_thread():
                return fn(*a, **k)  # (a second thread's stages run inside the main one's)
            self.gap()
            st0 = _status()
            t = time.perf_counter()
            self.depth += 1
            try:
                return fn(*a, **k)
            finally:
                self.depth -= 1
                st = _status()
                self.t_last = time.perf_counter()
                self.rows.append((name, self.t_last - t, st0["VmRSS"], st["VmHWM"], st["VmRSS"]))
                _reset_peak()
        return timed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--loads", type=int, default=1)
    args = ap.parse_args()
    import warnings

    warnings.simplefilter("ignore")
    import tracevis3d
    import tracevis3d.io as tio
    import tracevis3d.io.chrome as chrome

    base = _status()["VmRSS"]
    size = os.path.getsize(args.path)
    tl = Timeline()
    tio._read_input = tl.wrap("read the file (io._read_input)", tio._read_input)
    for name in dir(chrome):
        fn = getattr(chrome, name)
        if callable(fn) and getattr(fn, "__module__", "") == chrome.__name__ and not isinstance(fn, type) \
                and name != "load_chrome" and not name.startswith("__"):
            setattr(chrome, name, tl.wrap(name, fn))
    for name in ("preorder_sort", "nest_sorted_intervals", "classify_functions", "working_waits",
                 "FastSide", "Trace", "side_tracks", "counter_fields", "memory_counters", "dump_counters"):
        if hasattr(chrome, name):
            setattr(chrome, name, tl.wrap(name, getattr(chrome, name)))
    for k in range(args.loads):
        tl.rows.clear()
        _reset_peak()
        t0 = time.perf_counter()
        tr = tracevis3d.load(args.path)
        whole = time.perf_counter() - t0
        st = _status()
        tl.rows.append(("(after the importer: load_bytes' conventions, the Trace returned)",
                        time.perf_counter() - tl.t_last, None, st["VmHWM"], st["VmRSS"]))
        peak = max(r[3] for r in tl.rows)
        print(f"# {args.path}: {size / GIB:.3f} GiB, {len(tr):,} calls; load {k + 1}: {whole:.2f} s; "
              f"RSS before {base / GIB:.2f} GiB; peak {peak / GIB:.2f} GiB = file + {(peak - size) / GIB:.2f} "
              f"GiB; the Trace held {st['VmRSS'] / GIB:.2f} GiB; load average "
              f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        print("| stage | s | RSS at start GiB | peak during GiB | RSS at end GiB |")
        print("|---|---|---|---|---|")
        for name, s, a, p, e in tl.rows:
            mark = " **peak**" if p == peak else ""
            print(f"| {name}{mark} | {s:.2f} | {'' if a is None else f'{a / GIB:.2f}'} | {p / GIB:.2f} | "
                  f"{e / GIB:.2f} |")
        del tr


if __name__ == "__main__":
    main()
    sys.stdout.flush()
