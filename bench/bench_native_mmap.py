"""Benchmark (issue 26, item 5): opening a native file in place (memory map) against reading
it into memory, measured in the same run on the same file, each in a fresh process.

Prints one table: seconds to open (validation included), the process's own memory after it
(RssAnon: file pages mapped in belong to the page cache, which the system can drop), and a
time window of 1 % of the run opened from the mapped file.  Peer: the copy.

Usage:  PYTHONPATH=. .venv/bin/python bench/bench_native_mmap.py [--calls 5000000]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap

CHILD = textwrap.dedent("""
    import sys, time
    import tracevis3d
    from tracevis3d.io.native import load_native

    def anon():
        for line in open("/proc/self/status"):
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024

    path, mode, t0, t1 = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
    base = anon()
    t = time.perf_counter()
    tr = load_native(path, mmap=mode != "copy", window=(t0, t1) if mode == "window" else None)
    print(time.perf_counter() - t, anon() - base, len(tr))
    """)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=5_000_000)
    a = ap.parse_args()
    import tracevis3d

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "big.tv3d.npz")
        t = tracevis3d.synthetic(a.calls, threads=4, seed=1)
        span = float(t.end.max())
        tracevis3d.save(t, path)
        del t
        size = os.path.getsize(path)
        rows = []
        for mode in ("copy", "map", "window"):
            best = None
            for _ in range(2):
                out = subprocess.run([sys.executable, "-c", CHILD, path, mode, str(0.5 * span), str(0.51 * span)],
                                     capture_output=True, text=True, check=True).stdout.split()
                s, mem, n = float(out[0]), int(out[1]), int(out[2])
                best = (s, mem, n) if best is None or s < best[0] else best
            rows.append((mode,) + best)
    s0, m0 = rows[0][1], rows[0][2]
    print(f"native file: {a.calls:,} calls, {size / 1e6:.0f} MB")
    print(f"{'open':28} {'s':>7} {'× copy':>7} {'own MB':>8} {'× copy':>7} {'calls':>11}")
    names = {"copy": "read into memory (peer)", "map": "memory-mapped", "window": "mapped, 1 % time window"}
    for mode, s, mem, n in rows:
        print(f"{names[mode]:28} {s:7.3f} {s / s0:7.2f} {mem / 1e6:8.1f} {mem / max(m0, 1):7.2f} {n:11,}")


if __name__ == "__main__":
    main()
