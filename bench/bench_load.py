"""Benchmark: loading Chrome Trace Event JSON and the native format (issue: trace model).

Prints one table.  Every figure is also given as a ratio to a peer measured in
the same run on the same bytes:

  (a) the bare JSON parse of the file: orjson.loads (fastest full parse on PyPI
      here), plus pysimdjson's parse (lazy: builds its tape only) and json.loads;
  (b) json.load + a plain-Python tree build (tests/support/reference_builder.py, the
      naive twin the importer is tested against).

Usage:  .venv/bin/python bench/bench_load.py [--calls 1000000] [--threads 4] [--scale] [--skip-naive] [--skip-cold]
``--scale`` adds the 10M-call check (synthetic → native save/load, JSON load),
run in a subprocess each, with peak RSS.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import pathlib
import resource
import subprocess
import sys
import tempfile
import time
import warnings

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # bench scripts run from a checkout (not product code)
sys.path.insert(0, str(ROOT / "tests" / "support"))



def best_of(fn, repeat=3):
    best = float("inf")
    out = None
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def viztracer_style(trace):
    """Rename synthetic functions the way VizTracer names them: ``Cls.meth (file:line)``."""
    names = []
    for k, s in enumerate(trace.function_names):
        parts = s.split(".")
        mod = "/".join(parts[:2]) if len(parts) > 2 else parts[0]
        qual = ".".join(parts[2:]) if len(parts) > 2 else parts[-1]
        names.append(f"{qual} (/home/user/project/{mod}.py:{10 + 7 * k})")
    trace.function_names = names
    trace.meta["clock_origin"] = 81995229620.478  # absolute µs, like VizTracer
    return trace


def make_file(n_calls, threads, path):
    from tracevis3d.io.chrome_writer import chrome_json_bytes
    from tracevis3d.io.synthesis import synthetic_trace

    t = viztracer_style(synthetic_trace(n_calls, threads=threads, seed=1))
    data = chrome_json_bytes(t, style="viztracer")
    path.write_bytes(data)
    return data


def cold_start(path: pathlib.Path) -> tuple[float, float, float]:
    """(import s, first load s incl. numba compile, second load s) in a fresh
    process with an empty numba cache."""
    code = f"""
import time, warnings
warnings.simplefilter('ignore')
t0 = time.perf_counter()
import tracevis3d
t1 = time.perf_counter()
tracevis3d.load({str(path)!r})
t2 = time.perf_counter()
tracevis3d.load({str(path)!r})
t3 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2)
"""
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, NUMBA_CACHE_DIR=d, PYTHONPATH=str(ROOT))
        cold = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        warm_cache = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                    check=True)
    a = [float(x) for x in cold.stdout.split()]
    b = [float(x) for x in warm_cache.stdout.split()]
    return a[0], a[1], b[1]


def scale_check(n_calls: int, threads: int) -> list:
    rows = []
    with tempfile.TemporaryDirectory() as d:
        npz = pathlib.Path(d) / "big.tv3d.npz"
        js = pathlib.Path(d) / "big.json"
        steps = {
            "synthetic + save native": f"""
from tracevis3d.io.synthesis import synthetic_trace
import tracevis3d
t = synthetic_trace({n_calls}, threads={threads}, seed=3)
tracevis3d.save(t, {str(npz)!r})
from tracevis3d.io.chrome_writer import save_chrome
save_chrome(t, {str(js)!r}, style='sorted')
""",
            "load native": f"import tracevis3d; t = tracevis3d.load({str(npz)!r}); t.check()",
            "load JSON": f"import tracevis3d; t = tracevis3d.load({str(js)!r}); print(len(t), file=__import__('sys').stderr)",
        }
        for label, code in steps.items():
            wrapped = ("import time, resource, warnings; warnings.simplefilter('ignore'); s = time.perf_counter()\n"
                       + code + "\nprint(time.perf_counter() - s, "
                       "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 / 1024)")
            r = subprocess.run([sys.executable, "-c", wrapped], capture_output=True, text=True,
                               env=dict(os.environ, PYTHONPATH=str(ROOT)))
            if r.returncode:
                rows.append((f"10M: {label}", "FAILED", r.stderr.strip().splitlines()[-1:]))
                continue
            secs, gib = (float(x) for x in r.stdout.split())
            size = (npz.stat().st_size if "native" in label else js.stat().st_size) / 1e9 if npz.exists() else 0
            rows.append((f"{n_calls // 10**6}M calls: {label}", f"{secs:.2f} s",
                         f"peak RSS {gib:.2f} GiB, file {size:.2f} GB"))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=1_000_000)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--scale", action="store_true", help="also the 10M-call scale check")
    ap.add_argument("--skip-naive", action="store_true", help="skip the slow plain-Python peer")
    ap.add_argument("--skip-cold", action="store_true", help="skip the numba cold-start runs (two fresh compiles)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    import orjson
    import simdjson

    import tracevis3d
    from tracevis3d.io import load_bytes
    from reference_builder import build_reference

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="tv3d-bench-"))
    path = tmp / "viztracer_1m.json"
    data = make_file(args.calls, args.threads, path)
    n_events = data.count(b'"ph": "X"')
    print(f"# file: {n_events} X events in VizTracer layout (end-sorted, threads interleaved), "
          f"{len(data) / 1e6:.0f} MB, {args.threads} threads; machine: {os.cpu_count()} cores", flush=True)

    load_bytes(data[:2000].rsplit(b"},", 1)[0] + b"}]}")  # compile/warm the kernels
    t_ours, trace = best_of(lambda: load_bytes(data))
    t_ours_file, _ = best_of(lambda: tracevis3d.load(path))
    t_orjson, _ = best_of(lambda: orjson.loads(data))
    parser = simdjson.Parser()
    t_simd, _ = best_of(lambda: parser.parse(data) and None)
    t_json, _ = best_of(lambda: json.loads(data), repeat=1)
    if not args.skip_naive:
        def naive():
            doc = json.loads(data)
            return build_reference(doc["traceEvents"])
        t_naive, ref = best_of(naive, repeat=1)
        assert len(ref) == len(trace)
    npz = tmp / "t.tv3d.npz"
    t_save, _ = best_of(lambda: tracevis3d.save(trace, npz))
    t_nload, back = best_of(lambda: tracevis3d.load(npz))
    assert len(back) == len(trace)
    bpc = trace.nbytes / len(trace)
    imp, cold, warm = cold_start(path) if not args.skip_cold else (float("nan"),) * 3

    rows = [
        ("calls in the model", f"{len(trace):,}", ""),
        ("load (tracevis3d.load_bytes, warm)", f"{t_ours:.3f} s", f"{len(trace) / t_ours / 1e6:.2f} M calls/s"),
        ("load from file (tracevis3d.load)", f"{t_ours_file:.3f} s", ""),
        ("peer (a) orjson.loads, bare parse", f"{t_orjson:.3f} s", f"ours / orjson = {t_ours / t_orjson:.2f}x (goal <= 1.5x)"),
        ("  pysimdjson parse (lazy tape only)", f"{t_simd:.3f} s", f"ours / simdjson = {t_ours / t_simd:.2f}x"),
        ("  json.loads, bare parse", f"{t_json:.3f} s", f"ours / json = {t_ours / t_json:.2f}x"),
    ]
    if not args.skip_naive:
        rows.append(("peer (b) json.load + plain-Python tree", f"{t_naive:.3f} s",
                     f"speed-up {t_naive / t_ours:.1f}x (goal >= 10x)"))
    rows += [
        ("native save (.tv3d.npz)", f"{t_save:.3f} s", f"{npz.stat().st_size / len(trace):.1f} bytes/call on disk"),
        ("native load", f"{t_nload:.3f} s", f"JSON load / native load = {t_ours / t_nload:.1f}x (goal >= 20x)"),
        ("bytes per call in memory (no args)", f"{bpc:.1f}", "goal <= 64"),
        ("import tracevis3d", f"{imp:.3f} s", ""),
        ("numba cold start: first load incl. compile", f"{cold:.2f} s", "empty NUMBA_CACHE_DIR"),
        ("numba cached: first load, compiled cache", f"{warm:.2f} s", "second process, same cache"),
    ]
    if args.scale:
        rows += scale_check(10_000_000, args.threads)
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(str(r[1])) for r in rows)
    print(f"{'figure':<{w0}}  {'value':>{w1}}  note")
    for a, b, c in rows:
        print(f"{a:<{w0}}  {str(b):>{w1}}  {c}")
    print(f"# peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
