"""Benchmark: hostile inputs (issue 9), one table.

Each class of tests/hostile_cases.py is generated at three sizes and loaded in a
fresh process under an address-space limit and a time limit.  For each size the
table gives the outcome (ok: a checked Trace; error: a TraceFormatError), the
load time and the peak RSS of the process; the last column is the scaling
exponent of the load time over the three sizes (log t / log size, fitted;
1 is linear).  Goals: exponent <= 1.1, and for inputs under 10 MB <= 5 s and
<= 2 GB peak.

Usage:  .venv/bin/python bench/bench_hostile.py [--repo PATH] [--timeout 120] [--only NAME ...]
``--repo`` loads with another checkout's tracevis3d (e.g. the code before the fix).
"""
from __future__ import annotations

import argparse
import math
import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from hostile_cases import CASES, measure_case  # noqa: E402

#: (case, three sizes in bytes of the generator's size parameter)
SIZES = {
    "long_name": (5_000, 10_000, 20_000),
    "many_long_names": (125_000, 250_000, 500_000),
    "names_same_ends": (2_500_000, 5_000_000, 10_000_000),
    "colliding_tids": (2_500_000, 5_000_000, 10_000_000),
    "sync_calls_args": (2_500_000, 5_000_000, 10_000_000),
    "samples_deep_chain": (200_000, 400_000, 800_000),
    "samples_repeat": (250_000, 500_000, 1_000_000),
    "unmatched_e_deep": (1_750_000, 3_500_000, 7_000_000),
    "pending_e": (2_500_000, 5_000_000, 10_000_000),
    "pending_e_matched": (2_500_000, 5_000_000, 10_000_000),
    "flow_deep_chain": (3_250_000, 6_500_000, 13_000_000),
    "empty_events_gz": (75_000, 150_000, 300_000),
    "x_events_gz": (75_000, 150_000, 300_000),
    "newlines_error_gz": (130_000, 260_000, 520_000),
    "newlines_error": (50_000_000, 100_000_000, 200_000_000),
    "whitespace_events": (50_000_000, 100_000_000, 200_000_000),
    "tiny_events": (2_500_000, 5_000_000, 10_000_000),
}


def exponent(sizes, times):
    pts = [(math.log(s), math.log(max(t, 1e-3))) for s, t in zip(sizes, times) if t is not None]
    if len(pts) < 2:
        return float("nan")
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    num = sum((x - mx) * (y - my) for x, y in pts)
    den = sum((x - mx) ** 2 for x, _ in pts)
    return num / den


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", default=str(ROOT))
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--max-gb", type=float, default=6.0, help="address-space limit per run")
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args()
    names = args.only or list(SIZES)
    print(f"# repo {args.repo}; per run: timeout {args.timeout:.0f} s, address space {args.max_gb:g} GB")
    print("| case | file bytes (3 sizes) | outcome | load s | peak RSS MB | exponent |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="tv3d-hostile-") as d:
        for name in names:
            files, outs, secs, peaks = [], [], [], []
            stop = False
            for n in SIZES[name]:
                data, opts = CASES[name](n)
                files.append(len(data))
                if stop:
                    outs.append("skipped")
                    secs.append(None)
                    peaks.append(None)
                    continue
                r = measure_case(data, opts, workdir=d, timeout=args.timeout,
                                 max_address_space=int(args.max_gb * (1 << 30)), repo=args.repo, name=name)
                outs.append(r["outcome"])
                secs.append(r["seconds"])
                peaks.append(r["peak_mb"])
                if r["outcome"] == "timeout":
                    stop = True  # a bigger one would time out too
            good = [t if o not in ("timeout", "skipped") else None for o, t in zip(outs, secs)]
            ex = exponent(files, good)
            fmt_t = " / ".join("—" if t is None else (f">{t:.0f}" if o == "timeout" else f"{t:.2f}")
                               for o, t in zip(outs, secs))
            fmt_m = " / ".join("—" if m is None else f"{m:.0f}" for m in peaks)
            print(f"| {name} | {' / '.join(f'{b:,}' for b in files)} | {' / '.join(outs)} | {fmt_t} | "
                  f"{fmt_m} | {ex:.2f} |", flush=True)


if __name__ == "__main__":
    main()
