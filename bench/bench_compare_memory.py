"""Where the memory of `tracevis3d.compare` goes: time and peak RSS per stage, by size.

    NUMBA_CACHE_DIR=build/numba-cache PYTHONPATH=. .venv/bin/python bench/bench_compare_memory.py
    ... bench_compare_memory.py --sizes 100000,500000 --max-mb 6000

Workload (issue 26): a = tracevis3d.synthetic(n, threads=4), b = tracevis3d.perturb(a, seed=2).
Every size runs in a FRESH process (peaks never carry over; the numba cache is filled by a
first small run so that no compile is measured).  In that process:
- ``load``: synthetic + perturb, the two traces alone (the PEER: its peak is what the
  comparison starts from, so every stage's peak is also given as a ratio to it);
- ``argsort``: numpy argsort of n float64 (a second peer, for time: "stage time ÷ argsort");
- then every stage of `compare_traces` as its ``lap`` names them (classes, call_order, join,
  tiers, overview, kept_class_pairs, top_k, kept_pairs, groups, pair_fields, repetitions; the
  join, tiers and overview repeat once per wave of class pairs and are summed): seconds, and
  the peak RSS reached DURING the stage (the highest of its laps) (VmHWM from /proc/self/status, reset
  at every stage boundary by writing 5 to /proc/self/clear_refs), as MB and bytes per call
  ((peak − RSS of the interpreter after a small warm-up compare) ÷ (|A| + |B|));
- ``total``: the whole compare, its peak, and the result's own size (what the returned
  `Comparison` keeps alive beyond the two traces).
The child's comparison sees at most --available-mb (default --max-mb) of available memory (its memory check,
`analysis.comparison.check_compare_memory`): a size that cannot fit is refused up front and
reported with its message and the seconds to the refusal.  The parent also watches each
child's RSS and kills it above --max-mb (the machine is shared).
One table: rows = stage, columns = size (s, MB, B/call, peak ÷ load peak, time ÷ argsort).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time

from benchio import write_json_whole  # noqa: E402 (bench/ is the script's folder)

STAGES = ("classes", "call_order", "join", "tiers", "overview", "kept_class_pairs", "top_k", "kept_pairs",
          "groups", "pair_fields", "repetitions")


def _status_kb(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _reset_peak() -> None:
    """VmHWM := VmRSS (Linux >= 4.0)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def child(n: int, available_mb: float) -> dict:
    import numpy as np

    import tracevis3d
    from tracevis3d.analysis import comparison as cmpmod

    out = {"n": n}
    w = tracevis3d.synthetic(2000, threads=4)   # every module and cached kernel loaded first
    tracevis3d.compare(w, tracevis3d.perturb(w, seed=2))
    del w
    base_kb = _status_kb("VmRSS")
    _reset_peak()
    t = time.perf_counter()
    a = tracevis3d.synthetic(n, threads=4)
    b = tracevis3d.perturb(a, seed=2)
    out["calls"] = len(a) + len(b)
    out["load"] = (time.perf_counter() - t, _status_kb("VmHWM"))
    after_load_kb = _status_kb("VmRSS")
    _reset_peak()
    x = np.random.default_rng(0).random(n)
    t = time.perf_counter()
    np.argsort(x)
    out["argsort"] = (time.perf_counter() - t, _status_kb("VmHWM"))
    del x
    _reset_peak()

    # each stage's end is a call of compare_traces' clock (`lap`): read and reset the peak there
    marks = []
    real = time.perf_counter

    class _Clock:
        @staticmethod
        def perf_counter():
            marks.append(_status_kb("VmHWM"))
            _reset_peak()
            return real()

    # the comparison's own memory check sees at most --available-mb (less what is resident now):
    # a size that cannot fit under it is refused up front, as it would be on a smaller machine
    real_available = cmpmod.available_memory_bytes
    cap = available_mb * 2 ** 20 - _status_kb("VmRSS") * 1024
    cmpmod.available_memory_bytes = lambda: min(real_available(), cap)
    cmpmod.time = _Clock
    try:
        t = real()
        cmp = tracevis3d.compare(a, b)
        total_s = real() - t
    except MemoryError as e:
        out["refused"] = (real() - t, str(e), max(marks + [_status_kb("VmHWM")]) / 1024)
        return out
    finally:
        cmpmod.time = time
    total_peak = max(marks + [_status_kb("VmHWM")])
    timings = cmp.params["timings"]
    # marks[0] = the clock's start; marks[k] = the end of the k-th lap (params["laps"] names them)
    peak = {}
    for stage, kb in zip(cmp.params["laps"], marks[1:]):
        peak[stage] = max(peak.get(stage, 0), kb)
    for stage in STAGES:
        out[stage] = (timings.get(stage, 0.0), peak.get(stage, 0))
    keep = 0
    for v in vars(cmp).values():
        if isinstance(v, np.ndarray) and v.dtype != object:
            keep += v.nbytes
    out["total"] = (total_s, total_peak)
    out["result_mb"] = keep / 2 ** 20
    out["base_mb"] = base_kb / 1024
    out["after_load_mb"] = after_load_kb / 1024
    out["pairs"] = dict(class_pairs=cmp.n_class_pairs, kept=cmp.n_pairs_kept,
                        waves=cmp.params["join"].get("waves", 1))
    return out


def run_child(n: int, max_mb: float, available_mb: float) -> dict:
    cmd = [sys.executable, __file__, "--child", str(n), "--available-mb", str(available_mb)]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    killed = [0.0]

    def watch():
        while p.poll() is None:
            try:
                with open(f"/proc/{p.pid}/status") as f:
                    for line in f:
                        if line.startswith("VmRSS:"):
                            mb = int(line.split()[1]) / 1024
                            if mb > max_mb:
                                killed[0] = mb
                                p.kill()
            except OSError:
                return
            time.sleep(0.05)

    w = threading.Thread(target=watch, daemon=True)
    w.start()
    text, _ = p.communicate()
    w.join()
    if killed[0]:
        return {"n": n, "killed_mb": killed[0]}
    if p.returncode:
        return {"n": n, "error": f"exit {p.returncode}"}
    return json.loads(text.strip().splitlines()[-1])


def table(results) -> str:
    ok = [r for r in results if "total" in r]
    head = f"{'stage':<17}" + "".join(f"| {r['n']:>9,} calls (A) {'':<30}" for r in ok)
    sub = f"{'':<17}" + "".join(f"| {'s':>6} {'peak MB':>8} {'B/call':>7} {'÷load':>6} {'t÷sort':>7} {'':<12}"
                                 for _ in ok)
    lines = [head, sub]
    for stage in ("load", "argsort") + STAGES + ("total",):
        row = f"{stage:<17}"
        for r in ok:
            s, kb = r[stage]
            mb = kb / 1024
            per_call = (kb - r['base_mb'] * 1024) * 1024 / r['calls']
            row += (f"| {s:6.2f} {mb:8.0f} {per_call:7.0f} {kb / r['load'][1]:6.2f} "
                    f"{s / r['argsort'][0]:7.1f} {'':<12}")
        lines.append(row)
    lines.append(f"{'result arrays MB':<17}" + "".join(f"| {r['result_mb']:8.0f} {'':<43}" for r in ok))
    lines.append(f"{'class pairs':<17}" + "".join(f"| {r['pairs']['class_pairs']:>14,} {'':<37}" for r in ok))
    lines.append(f"{'waves':<17}" + "".join(f"| {r['pairs'].get('waves', 1):>14,} {'':<37}" for r in ok))
    for r in results:
        if "killed_mb" in r:
            lines.append(f"n={r['n']:,}: killed above --max-mb ({r['killed_mb']:.0f} MB): not measured")
        elif "refused" in r:
            lines.append(f"n={r['n']:,}: refused by compare's memory check after {r['refused'][0]:.1f} s, peak "
                         f"{r['refused'][2]:.0f} MB (loading the traces: {r['load'][1] / 1024:.0f} MB; available "
                         f"memory capped): {r['refused'][1]}")
        elif "error" in r:
            lines.append(f"n={r['n']:,}: {r['error']}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000,500000,1000000,2000000",
                    help="calls of A per run, comma-separated (B has about as many)")
    ap.add_argument("--max-mb", type=float, default=6000.0, help="kill a run whose RSS passes this")
    ap.add_argument("--available-mb", type=float, default=None,
                    help="the available memory compare's check sees (default --max-mb), e.g. 16384 to ask "
                         "whether a size fits a 16 GiB machine while the watchdog still kills above --max-mb")
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--json", default=None, help="also write the raw results here")
    args = ap.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child, args.available_mb or args.max_mb)))
        return
    available = args.available_mb or args.max_mb
    run_child(20_000, args.max_mb, available)  # fills the numba cache: no compile in the measured runs
    results = []
    for n in (int(s) for s in args.sizes.split(",")):
        results.append(run_child(n, args.max_mb, available))
        print(f"# n={n:,}: {'ok' if 'total' in results[-1] else results[-1]}", file=sys.stderr, flush=True)
        if "total" not in results[-1]:
            break
    if args.json:
        write_json_whole(args.json, results)
    print("compare(synthetic(n, threads=4), perturb(a, seed=2)): per stage seconds, peak RSS during the stage, "
          "(peak − RSS of the warmed-up interpreter) per call of A+B, peak ÷ peak of loading the two traces, time ÷ numpy argsort of n doubles")
    print(table(results))


if __name__ == "__main__":
    main()
