"""Where numba's first-use compile time goes: per step, per kernel, per signature.

    .venv/bin/python bench/compile_profile.py [--trace build/traces/threads.json] [--json out.json]

Runs in a fresh process with an empty temporary ``NUMBA_CACHE_DIR`` (unless
``--cache-dir`` is given) the steps a new user takes: load a VizTracer JSON, the icicle
layout, the Blender build (bpy), then a compare of two traces.  A listener on numba's
``numba:compile`` event records every compilation; a kernel that compiles another one
inside (a jitted callee) is charged its own time only (exclusive), so the rows add up to
the step's compile time.  Prints one table per step, slowest kernels first.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict

from benchio import write_json_whole  # noqa: E402 (bench/ is the script's folder)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _install_listener(records: list):
    """Record (kernel, signature, exclusive seconds) of every numba compilation."""
    from numba.core import event

    class Exclusive(event.Listener):
        def __init__(self):
            self.stack = []  # [start, child_time]

        def on_start(self, ev):
            self.stack.append([time.perf_counter(), 0.0])

        def on_end(self, ev):
            t0, child = self.stack.pop()
            dt = time.perf_counter() - t0
            if self.stack:
                self.stack[-1][1] += dt
            d = ev.data or {}
            disp = d.get("dispatcher")
            name = getattr(getattr(disp, "py_func", None), "__module__", "?").rsplit(".", 1)[-1] + "." + \
                getattr(getattr(disp, "py_func", None), "__qualname__", "?")
            sig = ", ".join(str(a) for a in d.get("args", ()))
            records.append((name, sig, dt - child))

    listener = Exclusive()
    event.register("numba:compile", listener)
    return listener


def _steps(trace_path: str):
    """(name, callable) of the first-use steps, in order."""
    state = {}

    def load():
        import tracevis3d

        state["trace"] = tracevis3d.load(trace_path)
        return f"{len(state['trace'])} calls"

    def layout():
        from tracevis3d.layout.icicle import IcicleParams, icicle_layout

        state["spec"] = icicle_layout(state["trace"], IcicleParams())
        return f"{state['spec'].meta['n_boxes']} boxes"

    def build():
        import bpy  # noqa: F401
        from tracevis3d.blender.scene import build_icicle

        build_icicle(state["trace"], {})
        return "scene written"

    def compare():
        import tracevis3d

        other = os.path.join(os.path.dirname(trace_path), "json_tool.json")
        b = tracevis3d.load(other) if os.path.isfile(other) else state["trace"]
        c = tracevis3d.compare(state["trace"], b)
        return f"{c.n_pairs_total} call pairs"

    return [("load", load), ("layout", layout), ("build", build), ("compare", compare)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", default=os.path.join(REPO, "build", "traces", "threads.json"))
    ap.add_argument("--cache-dir", default=None, help="numba cache (default: a new empty one)")
    ap.add_argument("--json", default=None, help="also write the records as JSON")
    ap.add_argument("--steps", default="load,layout,build,compare")
    ap.add_argument("--root", default=REPO, help="the folder holding the tracevis3d package to run")
    args = ap.parse_args(argv)
    os.environ["NUMBA_CACHE_DIR"] = args.cache_dir or tempfile.mkdtemp(prefix="tv3d-cold-")
    sys.path.insert(0, args.root)
    t = time.perf_counter()
    import numba  # noqa: F401

    t_numba = time.perf_counter() - t
    records: list = []
    _install_listener(records)
    out = {"numba_import": t_numba, "cpu_name": os.environ.get("NUMBA_CPU_NAME", "host"), "steps": {}}
    wanted = args.steps.split(",")
    for name, fn in _steps(args.trace):
        if name not in wanted:
            continue
        start = len(records)
        t = time.perf_counter()
        what = fn()
        wall = time.perf_counter() - t
        rows = records[start:]
        per = defaultdict(lambda: [0.0, []])
        for kernel, sig, dt in rows:
            per[kernel][0] += dt
            per[kernel][1].append((sig, dt))
        compile_s = sum(dt for _k, _s, dt in rows)
        out["steps"][name] = {"wall": wall, "compile": compile_s, "what": what,
                              "kernels": {k: {"s": v[0], "sigs": v[1]} for k, v in per.items()}}
        print(f"\n## {name}: {wall:.2f} s wall, {compile_s:.2f} s compiling {len(per)} kernels, "
              f"{len(rows)} signatures ({what})")
        print("| kernel | s | signatures |")
        print("|---|---|---|")
        for k, (s, sigs) in sorted(per.items(), key=lambda kv: -kv[1][0]):
            print(f"| {k} | {s:.2f} | {len(sigs)} |")
    if args.json:
        write_json_whole(args.json, out, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
