"""Benchmark (issue 67, goal): loading a Perfetto protobuf trace of 10^6 slices with
`tracevis3d.load`, against ``perfetto_trace_pb2.Trace.FromString`` alone (the protobuf package's
upb parse into Python message objects, no trace model) on the same file, in the same run.

    .venv/bin/python bench/bench_perfetto.py [--slices 1000000] [--threads 8] [--repeat 3]

The file is written once with perfetto_trace_pb2 (`tools/record_perfetto.py`'s `sdk_like_trace`:
8 threads on one sequence each, nested slices up to 12 deep, names and categories interned per
sequence, the incremental clock 64, 2 counter tracks, flows between threads) and kept in
build/perfetto/.  Kernels are warmed on a small file first; each row is the best of ``--repeat``
runs, wall and CPU seconds.  Prints one table; goal: tracevis3d.load <= 1.5x FromString.
"""
from __future__ import annotations

import argparse
import gc
import os
import pathlib
import sys
import time
import warnings

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _best(fn, repeat: int) -> tuple[float, float, object]:
    """(best wall s, best CPU s, the last result) of ``repeat`` calls of ``fn``."""
    walls, cpus, out = [], [], None
    for _ in range(repeat):
        out = None
        gc.collect()
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return min(walls), min(cpus), out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--slices", type=int, default=1_000_000)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

    import tracevis3d
    from tools.record_perfetto import sdk_like_trace

    out = ROOT / "build" / "perfetto"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"bench_{a.slices}_{a.threads}.pftrace"
    if not path.exists():
        t = time.perf_counter()
        data = sdk_like_trace(a.slices, threads=a.threads, processes=2, counter_every=200,
                              flows=max(10, a.slices // 1000), args_every=0, instants=20, seed=1)
        tmp = path.with_suffix(".part")
        tmp.write_bytes(data)
        os.replace(tmp, path)
        print(f"wrote {path} ({len(data) / 1e6:.1f} MB) in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    data = path.read_bytes()
    small = out / "bench_warm.pftrace"
    if not small.exists():
        small.write_bytes(sdk_like_trace(2000, threads=2, seed=2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tracevis3d.load(small)  # the kernels compiled / loaded from the cache

        def load():
            return tracevis3d.load(path)

        pw, pc, msg = _best(lambda: pb.Trace.FromString(data), a.repeat)
        n_packets = len(msg.packet)
        del msg
        lw, lc, tr = _best(load, a.repeat)
    rows = [("perfetto_trace_pb2.Trace.FromString (peer)", pw, pc), ("tracevis3d.load", lw, lc)]
    print(f"file: {path.name}, {len(data) / 1e6:.1f} MB, {n_packets} packets; trace: {len(tr)} calls, "
          f"{tr.n_threads} threads, {tr.counter_ts.size} counter samples, {tr.flow_id.size} flows; "
          f"best of {a.repeat}")
    print(f"{'':44s} {'wall s':>8s} {'x peer':>7s} {'CPU s':>8s} {'x peer':>7s}")
    for name, w, c in rows:
        print(f"{name:44s} {w:8.3f} {w / pw:7.2f} {c:8.3f} {c / pc:7.2f}")
    print(f"goal: tracevis3d.load <= 1.5x the peer (wall): {'met' if lw <= 1.5 * pw else 'NOT met'} "
          f"({lw / pw:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
