"""Probe for issue 25's structural scanner: can numba compare 32 bytes at once, and what does
that buy on trace JSON?  Not a benchmark of the product: the kernels here are probes.

    PYTHONPATH=. .venv/bin/python bench/probe_simd_scan.py [TRACE.json]

Prints one table, ratios to numpy's ``count_nonzero(buf == '"')`` on the same bytes (default:
10^6 synthetic calls written as Chrome JSON):
- counting quotes with a plain loop (LLVM vectorizes it by itself) and with
  `jsontokens.eq_mask32`, an ``@intrinsic`` that loads 32 bytes as an LLVM ``<32 x i8>`` vector
  and compares them with a byte at once (one mask word: simdjson's stage-1 primitive, Langdale
  and Lemire, VLDB J. 2019);
- walking every string to its closing quote byte by byte (as `jsontokens.scan_string` did
  before stop 51) and with `jsontokens.scan_string` itself (32 bytes at a time).

Measured 2026-11-26 (2 shared cores, quiet; the 289 MB goal file of bench_side.py, one thread):

  kernel                                   s   GB/s  x numpy
  numpy count_nonzero(buf == 34)       0.688   0.42     1.00
  count quotes, scalar loop            0.014  20.83    49.64
  count quotes, 32-byte compare        0.034   8.41    20.05
  walk strings, byte by byte           0.413   0.70     1.66
  walk strings, 32-byte compare        0.211   1.37     3.26

(an earlier probe's own 32-byte walk, without `scan_string`'s escape flag and tuple, took
0.139 s.)  So numba does emit vector compares, and it vectorizes a plain counting loop by
itself at 21 GB/s; walking the strings 32 bytes at a time halves the byte loop's time (the
file's 27.5 M strings), still 15x slower than classifying every byte: trace JSON's strings
are short (most of them keys), so the per-string branch dominates.  A structural scanner would
classify the whole buffer first (bitmaps of quotes, backslashes and structural bytes, at
GB/s), and the event scan would then read positions from the bitmaps instead of the bytes.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from numba import njit

from tracevis3d.kernels.jsontokens import eq_mask32, scan_string

QUOTE, BACKSLASH = 34, 92


@njit(nogil=True)
def count_scalar(buf):
    c = 0
    for j in range(buf.shape[0]):
        if buf[j] == QUOTE:
            c += 1
    return c


@njit(nogil=True)
def count_mask32(buf):
    n, c, i = buf.shape[0], 0, 0
    while i + 32 <= n:
        m = eq_mask32(buf, i, np.uint8(QUOTE))
        while m:
            c += 1
            m &= m - np.uint32(1)
        i += 32
    for j in range(i, n):
        c += buf[j] == QUOTE
    return c


@njit(nogil=True)
def walk_strings_scalar(buf):
    """Strings walked to their closing quote byte by byte; returns their number."""
    n, i, s = buf.shape[0], 0, 0
    while i < n:
        if buf[i] == QUOTE:
            i += 1
            while i < n and buf[i] != QUOTE:
                if buf[i] == BACKSLASH:
                    i += 1
                i += 1
            s += 1
        i += 1
    return s


@njit(nogil=True)
def walk_strings_scan_string(buf):
    """The same walk with the scanner's own `jsontokens.scan_string`."""
    n, i, s = buf.shape[0], 0, 0
    while i < n:
        if buf[i] == QUOTE:
            i = scan_string(buf, i)[0] - 1
            if i < 0:
                break
            s += 1
        i += 1
    return s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", nargs="?", help="a trace JSON file (default: 10^6 synthetic calls)")
    args = ap.parse_args()
    if args.trace:
        buf = np.fromfile(args.trace, np.uint8)
    else:
        from tracevis3d.io.chrome_writer import chrome_json_bytes
        from tracevis3d.io.synthesis import synthetic_trace

        buf = np.frombuffer(chrome_json_bytes(synthetic_trace(1_000_000, threads=4, seed=1)), np.uint8)
    kernels = (("count quotes, scalar loop", count_scalar), ("count quotes, 32-byte compare", count_mask32),
               ("walk strings, byte by byte", walk_strings_scalar),
               ("walk strings, 32-byte compare", walk_strings_scan_string))
    for _, f in kernels:
        f(buf[:4096])
    t = time.perf_counter()
    peer = int(np.count_nonzero(buf == QUOTE))
    t_peer = time.perf_counter() - t
    print(f"{buf.size / 1e6:.1f} MB")
    print(f"{'kernel':34} {'s':>7} {'GB/s':>6} {'x numpy':>8}  result")
    print(f"{'numpy count_nonzero(buf == 34)':34} {t_peer:7.3f} {buf.size / t_peer / 1e9:6.2f} {1.0:8.2f}  {peer}")
    for name, f in kernels:
        best = np.inf
        for _ in range(3):
            t = time.perf_counter()
            r = f(buf)
            best = min(best, time.perf_counter() - t)
        print(f"{name:34} {best:7.3f} {buf.size / best / 1e9:6.2f} {t_peer / best:8.2f}  {r}")


if __name__ == "__main__":
    main()
