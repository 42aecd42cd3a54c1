"""Benchmark: loading a memray capture of ~10^7 allocator records (issue 71).

    NUMBA_CACHE_DIR=build/numba-cache PYTHONPATH=. .venv/bin/python bench/bench_memory.py \
        [--records 10000000] [--capture existing.bin] [--repeat 2]

Records a program that allocates and frees small lists with ``python -m memray run
--trace-python-allocators`` (about 7.5 records per loop turn), then times, in the same run:
- the peer: memray's own reader iterating its records (``memray.FileReader(path)`` then
  ``for r in reader.get_allocation_records(): pass``), and the same reading the five fields a
  record has (address, size, allocator, thread, stack) in a Python loop;
- `tracevis3d.load_memory` (the same FileReader, its records once into arrays, the ranges
  paired, the clock placed, memray's leaked records summed).
Each is the best of ``--repeat`` runs (numba kernels compiled before).  Prints one table, the
ratio to the bare iteration in the last column (the goal: <= 2x).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time

PROGRAM = textwrap.dedent("""
    import sys
    n = int(sys.argv[1])
    keep = []
    for i in range(n):
        x = [i, i + 1]
        if i % 1000 == 0:
            keep.append(x)
""")


def log(msg: str) -> None:
    sys.stderr.write(f"[bench] {msg}\n")
    sys.stderr.flush()


def record(folder: str, records: int) -> str:
    prog = os.path.join(folder, "allocate.py")
    with open(prog, "w") as f:
        f.write(PROGRAM)
    out = os.path.join(folder, "capture.bin")
    turns = int(records / 7.5)
    subprocess.run([sys.executable, "-m", "memray", "run", "-q", "-f", "--trace-python-allocators", "-o", out, prog,
                    str(turns)], check=True, capture_output=True)
    return out


def bare(path: str) -> None:
    import memray

    r = memray.FileReader(path)
    for _ in r.get_allocation_records():
        pass
    r.close()


def fields(path: str) -> None:
    import memray

    r = memray.FileReader(path)
    a, s, k, t, st = [], [], [], [], []
    for rec in r.get_allocation_records():
        a.append(rec.address); s.append(rec.size); k.append(rec.allocator); t.append(rec.tid); st.append(rec.stack_id)
    r.close()


def ours(path: str) -> None:
    from tracevis3d.io.memray import load_memory

    load_memory(path)


def best(fn, path: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn(path)
        times.append(time.perf_counter() - t)
    return min(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--records", type=int, default=10_000_000)
    ap.add_argument("--capture", help="time this capture instead of recording one")
    ap.add_argument("--repeat", type=int, default=2)
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = a.capture or record(tmp, a.records)
        import memray

        n = memray.FileReader(path).metadata.total_allocations
        log(f"capture: {n:,} records, {os.path.getsize(path) / 1e6:.1f} MB")
        from tracevis3d.kernels.memcov import band_grid  # noqa: F401  (compiles before the timing)

        ours(path)  # the kernels compiled (numba's cache) before timing
        rows = [("memray FileReader, iterate its records (peer)", best(bare, path, a.repeat)),
                ("memray FileReader, read 5 fields per record in Python", best(fields, path, a.repeat)),
                ("tracevis3d.load_memory (arrays, ranges, clock, leaks)", best(ours, path, a.repeat))]
    base = rows[0][1]
    print(f"{'what':58s} {'records':>12s} {'seconds':>9s} {'x peer':>7s}")
    for name, sec in rows:
        print(f"{name:58s} {n:>12,} {sec:9.2f} {sec / base:7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
