"""Benchmark: loading memray captures of ~10^6 and ~10^7 allocator records (issue 71).

    NUMBA_CACHE_DIR=build/numba-cache PYTHONPATH=. .venv/bin/python bench/bench_memory.py \
        [--records 1000000 10000000] [--capture existing.bin] [--repeat 3]

Records a program that allocates and frees small lists with ``python -m memray run
--trace-python-allocators`` (about 7.5 records per loop turn; memray's default LZ4 compression),
then times, in the same run, per capture:
- the peer: memray's own reader iterating its records (``memray.FileReader(path)`` then
  ``for r in reader.get_allocation_records(): pass``), and the same reading the five fields a
  record has (address, size, allocator, thread, stack) in a Python loop;
- `tracevis3d.load_memory(reader="memray")`: through that FileReader, its records once into
  arrays, the ranges paired, the clock placed, memray's leaked records summed;
- `tracevis3d.load_memory(reader="own")`: our reader (`kernels.memray_scan`: the LZ4 frame
  inflated, the records scanned by numba) and the same arrays, ranges, clock and leaks.
Each is CPU seconds of this process (``time.process_time``), the best of ``--repeat`` runs, numba
kernels compiled before.  Prints one table, the ratio to the peer in the last column (the goal:
``load_memory`` <= 2x).
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


def through_filereader(path: str) -> None:
    from tracevis3d.io import load_memory

    load_memory(path, reader="memray")


def own_reader(path: str) -> None:
    from tracevis3d.io import load_memory

    load_memory(path, reader="own", warn=False)


def best(fn, path: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.process_time()
        fn(path)
        times.append(time.process_time() - t)
    return min(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--records", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--capture", help="time this capture instead of recording them")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        paths = [a.capture] if a.capture else []
        for k, records in enumerate([] if a.capture else a.records):
            folder = os.path.join(tmp, str(k))
            os.makedirs(folder)
            log(f"recording ~{records:,} records")
            paths.append(record(folder, records))
        import memray

        own_reader(paths[0])  # the kernels compiled (numba's cache) before timing
        for path in paths:
            n = memray.FileReader(path).metadata.total_allocations
            log(f"capture: {n:,} records, {os.path.getsize(path) / 1e6:.1f} MB")
            for name, fn in (("memray FileReader, iterate its records (peer)", bare),
                             ("memray FileReader, read 5 fields per record in Python", fields),
                             ("load_memory(reader='memray'): through FileReader", through_filereader),
                             ("load_memory(reader='own'): numba reader of the format", own_reader)):
                sec = best(fn, path, a.repeat)
                log(f"  {name}: {sec:.2f} s")
                rows.append((name, n, sec))
    print(f"{'what':58s} {'records':>12s} {'CPU s':>9s} {'x peer':>7s}")
    for i, (name, n, sec) in enumerate(rows):
        base = rows[i - i % 4][2]
        print(f"{name:58s} {n:>12,} {sec:9.2f} {sec / base:7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
