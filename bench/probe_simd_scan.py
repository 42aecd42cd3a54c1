"""Probe for issue 25's structural scanner: can numba compare 32 bytes at once, and what does
that buy on trace JSON?  Not a benchmark of the product: the kernels here are probes.

    .venv/bin/python bench/probe_simd_scan.py [TRACE.json]

Prints one table, ratios to numpy's ``count_nonzero(buf == '"')`` on the same bytes (default:
10^6 synthetic calls written as Chrome JSON):
- counting quotes with a plain loop (LLVM vectorizes it by itself) and with `eq_mask32`, an
  ``@intrinsic`` that loads 32 bytes as an LLVM ``<32 x i8>`` vector and compares them with a
  byte at once (one mask word: simdjson's stage-1 primitive, Langdale and Lemire, VLDB J. 2019);
- walking every string to its closing quote byte by byte (as `jsontokens.scan_string`) and 32
  bytes at a time with `eq_mask32`.

Measured 2026-11-26 (2 shared cores, quiet; the 289 MB goal file of bench_side.py, one thread):

  kernel                                   s   GB/s  x numpy
  numpy count_nonzero(buf == 34)       0.486   0.59     1.00
  count quotes, scalar loop            0.014  21.38    36.00
  count quotes, 32-byte compare        0.035   8.18    13.78
  walk strings, byte by byte           0.411   0.70     1.18
  walk strings, 32-byte compare        0.139   2.08     3.51

So numba does emit vector compares, and it vectorizes a plain counting loop by itself at
21 GB/s. Walking the strings 32 bytes at a time is 3x faster than byte by byte (0.14 s against
0.41 s for the file's 27.5 M strings, on one thread), though still 10x slower than classifying
every byte. Trace JSON's strings are short (most of them keys), so the per-string branch
dominates. A structural scanner would classify the whole buffer first (bitmaps of quotes,
backslashes and structural bytes, at GB/s), and the event scan would then read positions
from the bitmaps instead of from the bytes.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

QUOTE, BACKSLASH = 34, 92


@intrinsic
def eq_mask32(typingctx, arr, pos, byte):
    """Bit k of the result: ``arr[pos + k] == byte`` for k < 32 (one unaligned vector load;
    the caller keeps ``pos + 32 <= len(arr)``)."""
    sig = types.uint32(arr, pos, byte)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        vec = ir.VectorType(ir.IntType(8), 32)
        v = builder.load(builder.bitcast(builder.gep(ary.data, [args[1]]), vec.as_pointer()), align=1)
        b = builder.trunc(args[2], ir.IntType(8))
        splat = ir.Constant(vec, ir.Undefined)
        for k in range(32):
            splat = builder.insert_element(splat, b, ir.Constant(ir.IntType(32), k))
        return builder.bitcast(builder.icmp_unsigned("==", v, splat), ir.IntType(32))

    return sig, codegen


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
def walk_strings_mask32(buf):
    """The same walk, the closing quote found 32 bytes at a time (a block with a backslash
    before its first quote is stepped through byte by byte)."""
    n, i, s = buf.shape[0], 0, 0
    while i < n:
        if buf[i] == QUOTE:
            i += 1
            while True:
                if i + 32 > n:
                    while i < n and buf[i] != QUOTE:
                        if buf[i] == BACKSLASH:
                            i += 1
                        i += 1
                    break
                mq = eq_mask32(buf, i, np.uint8(QUOTE))
                mb = eq_mask32(buf, i, np.uint8(BACKSLASH))
                before = np.uint32(0xFFFFFFFF)  # the bytes before the first quote
                if mq:
                    before = (mq & (~mq + np.uint32(1))) - np.uint32(1)
                if mb & before:  # an escape before the first quote: byte by byte
                    end = i + 32
                    while i < end and buf[i] != QUOTE:
                        if buf[i] == BACKSLASH:
                            i += 1
                        i += 1
                    if i < n and buf[i] == QUOTE:
                        break
                    continue
                if mq:
                    t = 0
                    while not (mq >> np.uint32(t)) & np.uint32(1):
                        t += 1
                    i += t
                    break
                i += 32
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
               ("walk strings, 32-byte compare", walk_strings_mask32))
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
