"""Benchmark of the synthetic trace generator (and of `perturb`).

    .venv/bin/python bench/bench_synthetic.py [--sizes 1e5,1e6,1e7] [--repeat 1]

Each size runs in a fresh subprocess (so peak memory is per size) with a warm numba
cache.  Printed per size and configuration: generation time, calls/s, bytes per call of
the Trace (``Trace.nbytes``) and peak RSS per call, and ratios against peers measured in
the same run:
  - ``check()``: the model's vectorized invariant check over the same trace (one numpy
    pass family over the same arrays): gen/check says how generation compares with
    merely reading the arrays a few times;
  - a pure-Python generator (one Python object per call, random tree by a stack; the
    approach the project rules forbid), at sizes up to 1e6;
  - `perturb` on the generated trace.
Then numba compile cost: cold (empty cache dir, compile), cached (fresh process, cache
on disk) and warm (already compiled, same process), for a 1000-call trace.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent


def python_peer(n: int, seed: int = 0) -> float:
    """A per-call pure-Python random tree generator of n calls (lists of floats/ints)."""
    import random

    rnd = random.Random(seed)
    t0 = time.perf_counter()
    func, start, end, parent = [], [], [], []
    stack = []
    cursor = 0.0
    while len(func) < n:
        if stack and (len(stack) > 20 or rnd.random() < 0.45):
            i = stack.pop()
            cursor += rnd.lognormvariate(0.0, 0.5)
            end[i] = cursor
            continue
        cursor += rnd.lognormvariate(0.0, 0.5)
        func.append(rnd.randrange(1000))
        start.append(cursor)
        end.append(0.0)
        parent.append(stack[-1] if stack else -1)
        stack.append(len(func) - 1)
    while stack:
        cursor += 1.0
        end[stack.pop()] = cursor
    return time.perf_counter() - t0


def child_measure(n: int, threads: int, sync: bool, repeat: int) -> dict:
    sys.path.insert(0, str(REPO))
    import resource

    from tracevis3d.io.synthesis import perturb, synthetic_trace

    synthetic_trace(1000, threads=threads, sync=sync)  # load compiled kernels
    perturb(synthetic_trace(1000, threads=threads), seed=1)
    best = float("inf")
    tr = None
    for _ in range(repeat):
        tr = None
        t0 = time.perf_counter()
        tr = synthetic_trace(n, threads=threads, seed=1, sync=sync)
        best = min(best, time.perf_counter() - t0)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    t0 = time.perf_counter()
    tr.check()
    t_check = time.perf_counter() - t0
    t0 = time.perf_counter()
    b = perturb(tr, seed=2)
    t_perturb = time.perf_counter() - t0
    out = dict(n=n, threads=threads, sync=sync, gen=best, check=t_check, perturb=t_perturb,
               bytes_per_call=tr.nbytes / n, peak_rss=rss, n_out=len(b),
               max_depth=tr.max_depth, functions=tr.n_functions)
    del b
    if n <= 1_000_000:
        out["python"] = python_peer(n)
    return out


def child_compile() -> dict:
    t0 = time.perf_counter()
    sys.path.insert(0, str(REPO))
    from tracevis3d.io.synthesis import perturb, synthetic_trace

    t_import = time.perf_counter() - t0
    t0 = time.perf_counter()
    a = synthetic_trace(1000, threads=2, sync=True)
    t_gen = time.perf_counter() - t0
    t0 = time.perf_counter()
    perturb(a, seed=1)
    t_pert = time.perf_counter() - t0
    t0 = time.perf_counter()
    a = synthetic_trace(1000, threads=2, sync=True)
    t_gen2 = time.perf_counter() - t0
    t0 = time.perf_counter()
    perturb(a, seed=1)
    t_pert2 = time.perf_counter() - t0
    return dict(import_=t_import, gen=t_gen, perturb=t_pert, gen_warm=t_gen2, perturb_warm=t_pert2)


def run_child(args: list[str], env=None) -> dict:
    r = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"child {args} failed:\n{r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1e5,1e6,1e7")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        spec = json.loads(a.child)
        res = child_compile() if spec.get("compile") else child_measure(**spec)
        print(json.dumps(res))
        return
    sizes = [int(float(s)) for s in a.sizes.split(",") if s]
    print(f"TraceVis3D synthetic generator benchmark  (python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs)\n")
    # compile cost first: cold (empty cache) and cached (second process)
    with tempfile.TemporaryDirectory(prefix="tv3d-numba-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        cold = run_child(["--child", json.dumps({"compile": True})], env)
        cached = run_child(["--child", json.dumps({"compile": True})], env)
    rows = []
    for n in sizes:
        for threads, sync in ((1, False), (8, True)):
            rows.append(run_child(["--child", json.dumps(dict(n=n, threads=threads, sync=sync,
                                                              repeat=a.repeat))]))
    hdr = (f"{'calls':>10} {'thr':>3} {'sync':>4} {'gen s':>7} {'Mcalls/s':>8} {'B/call':>6} "
           f"{'peakRSS B/call':>14} {'check s':>7} {'gen/check':>9} {'python s':>8} "
           f"{'python/gen':>10} {'perturb s':>9} {'perturb/gen':>11}")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        py = r.get("python")
        py_s = f"{py:.3f}" if py else "-"
        py_r = f"{py / r['gen']:.1f}x" if py else "-"
        print(f"{r['n']:>10,} {r['threads']:>3} {str(r['sync'])[0]:>4} {r['gen']:>7.3f} "
              f"{r['n'] / r['gen'] / 1e6:>8.2f} {r['bytes_per_call']:>6.1f} "
              f"{r['peak_rss'] / r['n']:>14.1f} {r['check']:>7.3f} {r['gen'] / r['check']:>9.2f} "
              f"{py_s:>8} {py_r:>10} "
              f"{r['perturb']:>9.3f} {r['perturb'] / r['gen']:>11.2f}")
    print("\npeak RSS includes the interpreter, numpy and numba (~150-200 MB).")
    print("\nnumba compile cost (1000-call trace, 2 threads, sync; seconds):")
    print(f"{'':>22} {'import':>7} {'generate':>9} {'perturb':>8} {'gen warm':>9} {'perturb warm':>12}")
    for nm, c in (("cold (empty cache)", cold), ("cached (new process)", cached)):
        print(f"{nm:>22} {c['import_']:>7.3f} {c['gen']:>9.3f} {c['perturb']:>8.3f} "
              f"{c['gen_warm']:>9.4f} {c['perturb_warm']:>12.4f}")
    print(f"{'cold / warm':>22} {'':>7} {cold['gen'] / cold['gen_warm']:>8.0f}x "
          f"{cold['perturb'] / cold['perturb_warm']:>7.0f}x")
    print(f"{'cached / warm':>22} {'':>7} {cached['gen'] / cached['gen_warm']:>8.0f}x "
          f"{cached['perturb'] / cached['perturb_warm']:>7.0f}x")


if __name__ == "__main__":
    main()
