"""Benchmark of the TraceDiff comparison (tracevis3d.compare), one table per run.

    .venv/bin/python bench/bench_compare.py                 # 100k join + 1M whole compare
    .venv/bin/python bench/bench_compare.py --n 20000 --big 0 --peer-frac 1

Workload: a = synthetic_trace(n, seed=1), b = perturb(a, seed=2) (the "second run");
the whole-compare rows also run b = perturb(a, seed=2, new_functions=0.0).
1. Class-level join on the distinct Γ-sets of A and B (TraceDiff Eq. 3, tau): ours
   (`kernels.setjoin_tree.jaccard_join_tree`, the default, and `setjoin_prefix.jaccard_join`,
   the filter join) against the peer `SetSimilaritySearch`
   (SearchIndex(B, "jaccard", tau).query(a) per set of A; it reports s >= tau, so its
   output is filtered to s > tau before the check) and a plain numba bitset/popcount
   brute force (`jaccard_join_bruteforce`, parallel).  Outputs are checked identical
   (pairs exactly, similarities to 1e-12) before the times are reported.
2. The whole `compare_traces` at --big calls for each workload, each in a fresh
   subprocess (warm numba cache), with its RSS sampled from /proc, and as the peer in
   the same process the numba brute-force class join timed on every --bf-stride'th
   class of A (extrapolated; its pairs checked equal to compare's on those rows).
3. Numba cold start: first `compare` in a subprocess with an EMPTY numba cache
   directory (compile everything), then with that cache filled.
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

import numpy as np

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # bench scripts run from a checkout (not product code)


from tracevis3d.analysis.comparison import compare_traces, gamma_classes  # noqa: E402
from tracevis3d.kernels.setjoin import jaccard_join_bruteforce, sets_to_bitsets  # noqa: E402
from tracevis3d.kernels.setjoin_prefix import jaccard_join  # noqa: E402
from tracevis3d.kernels.setjoin_tree import jaccard_join_tree  # noqa: E402
from tracevis3d.io.synthesis import perturb, synthetic_trace  # noqa: E402


WORKLOADS = {
    # the colleague's workload: perturb's defaults (a quarter of the inserted
    # subtrees under new functions, which pushes B to ~70k classes at 1M)
    "default": (dict(), dict()),
    # closer to the issue's stated statistics, as far as the generator allows: no
    # new functions in the second run (B ~64k sets at 1M).  Class and call pair
    # counts stay ~25x the issue's assumption; other options tried (n_functions
    # 4000/6000/8000, repeat_prob 0.1/0.6) gave MORE class pairs (up to 354M).
    "fewer-new-functions": (dict(), dict(new_functions=0.0)),
}


def workload(n, syn=None, per=None):
    a = synthetic_trace(n, seed=1, **(syn or {}))
    b = perturb(a, seed=2, **(per or {}))
    return a, b


def class_sets(a, b):
    functions, cls, ptr, items = gamma_classes(a, b)
    rows_a = np.unique(cls[: len(a)]).astype(np.int32)
    rows_b = np.unique(cls[len(a):]).astype(np.int32)
    return functions, ptr, items, rows_a, rows_b


def best_of(f, repeat):
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t)
    return best, out


def as_set(ra, rb, s):
    return dict(zip(zip(ra.tolist(), rb.tolist()), s.tolist()))


def same(d1, d2):
    if d1.keys() != d2.keys():
        return False
    return all(abs(d1[k] - d2[k]) <= 1e-12 for k in d1)


def run_join(n, tau, peer_frac, repeat):
    a, b = workload(n)
    functions, ptr, items, rows_a, rows_b = class_sets(a, b)
    cls_a = gamma_classes(a, b)[1][: len(a)]
    nf = len(functions)
    size = np.diff(ptr)
    row_of = np.searchsorted(rows_a, cls_a).astype(np.int32)
    # warm up (compile / load the numba cache) on a tiny input
    w = synthetic_trace(300, seed=1)
    compare_traces(w, perturb(w, seed=2), join="tree")
    compare_traces(w, perturb(w, seed=2), join="filter")
    t_ours, (cptr, cq, cs) = best_of(lambda: jaccard_join_tree(ptr, items, rows_a, rows_b, tau, nf,
                                                                 row_of, a.end_index), repeat)
    ours = as_set(np.repeat(np.arange(len(rows_a)), np.diff(cptr)), cq, cs)
    rows = [("ours, tree join: overlaps inherited along A's tree (numba, parallel)", t_ours,
             len(ours), True, "")]
    t_f, (fptr, fq, fs) = best_of(lambda: jaccard_join(ptr, items, rows_a, rows_b, tau, nf), repeat)
    rows.append(("ours, filter join: prefix + size filters, popcount (numba, parallel)", t_f,
                 len(fq), same(ours, as_set(np.repeat(np.arange(len(rows_a)), np.diff(fptr)), fq, fs)), ""))

    nw = (nf + 63) // 64
    bits_a = sets_to_bitsets(ptr, items, rows_a, nw)
    bits_b = sets_to_bitsets(ptr, items, rows_b, nw)
    jaccard_join_bruteforce(bits_a[:3], size[rows_a[:3]], bits_b[:3], size[rows_b[:3]], tau)
    t_bf, bf = best_of(lambda: jaccard_join_bruteforce(bits_a, size[rows_a], bits_b, size[rows_b], tau), 1)
    rows.append(("numba bitset/popcount brute force (parallel)", t_bf, len(bf[0]), same(ours, as_set(*bf)), ""))

    if peer_frac > 0:
        from SetSimilaritySearch import SearchIndex

        sets_b = [items[ptr[c]:ptr[c + 1]].tolist() for c in rows_b]
        stride = max(1, int(round(1.0 / peer_frac)))
        sample = np.arange(0, len(rows_a), stride)     # every stride-th set of A
        m = len(sample)
        sets_a = [items[ptr[c]:ptr[c + 1]].tolist() for c in rows_a[sample]]
        t0 = time.perf_counter()
        index = SearchIndex(sets_b, similarity_func_name="jaccard", similarity_threshold=tau)
        t1 = time.perf_counter()
        found = {}
        for r, x in zip(sample.tolist(), sets_a):
            for q, s in index.query(x):
                if s > tau:                      # the peer reports s >= tau
                    found[(r, q)] = s
        t2 = time.perf_counter()
        chosen = set(sample.tolist())
        mine = {k: v for k, v in ours.items() if k[0] in chosen}
        t_peer = (t1 - t0) + (t2 - t1) / (m / len(rows_a))
        note = "" if m == len(rows_a) else f"timed on every {stride}th set of A ({m}/{len(rows_a)}), extrapolated"
        rows.append(("SetSimilaritySearch SearchIndex(B).query(a) (Python)", t_peer,
                     len(found) if m == len(rows_a) else None, same(mine, found), note))
    stats = dict(calls_a=len(a), calls_b=len(b), functions=nf, sets_a=len(rows_a), sets_b=len(rows_b),
                 class_pairs=len(ours), mean_set=float(size[rows_a].mean()))
    return rows, stats


CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {repo!r})
t0 = time.perf_counter()
import tracevis3d
from tracevis3d.analysis.comparison import compare_traces
from tracevis3d.io.synthesis import synthetic_trace, perturb
t_import = time.perf_counter() - t0
mode = {mode!r}
if mode == "cold":
    a = synthetic_trace(300, seed=1); b = perturb(a, seed=2)
    t = time.perf_counter(); compare_traces(a, b); t_first = time.perf_counter() - t
    t = time.perf_counter(); compare_traces(a, b); t_second = time.perf_counter() - t
    print(json.dumps(dict(import_s=t_import, first_s=t_first, second_s=t_second)))
else:
    n = {n}
    a = synthetic_trace(n, seed=1, **{syn!r}); b = perturb(a, seed=2, **{per!r})
    # the numba cache was filled by an earlier process: no compiling here, so the
    # peak RSS is the compare's own (plus the inputs); cache loading is in the time
    import gc, threading
    gc.collect()
    def rss_now():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize()
    peak = [rss_now()]
    rss0 = peak[0]
    stop = threading.Event()
    def sample():
        while not stop.is_set():
            peak[0] = max(peak[0], rss_now())
            stop.wait(0.005)
    th = threading.Thread(target=sample, daemon=True); th.start()
    t = time.perf_counter(); c = compare_traces(a, b); dt = time.perf_counter() - t
    stop.set(); th.join()
    peak[0] = max(peak[0], rss_now())
    s = c.summary()
    s["stages"] = c.params["timings"]
    if not {with_bf}:
        s.update(compare_s=dt, peak_rss_mb=peak[0] / 2**20, rss_before_mb=rss0 / 2**20)
        print(json.dumps(s))
        sys.exit(0)
    # peer in the same process: the plain numba bitset/popcount brute force class
    # join, timed on every {bf_stride}th class of A and extrapolated (checked equal
    # to compare's class pairs on those rows)
    import numpy as np
    from tracevis3d.kernels.setjoin import jaccard_join_bruteforce, sets_to_bitsets
    size = np.diff(c.class_ptr)
    nw = (len(c.functions) + 63) // 64
    pick = np.arange(0, c.class_rows_a.size, {bf_stride})
    # warm-up on 3 rows first: the brute force is not part of compare, so the
    # cache-filling process never loaded it (its compile must not be timed)
    w3 = sets_to_bitsets(c.class_ptr, c.class_items, c.class_rows_a[:3], nw)
    jaccard_join_bruteforce(w3, size[c.class_rows_a[:3]], w3, size[c.class_rows_a[:3]], c.tau)
    bits_a = sets_to_bitsets(c.class_ptr, c.class_items, c.class_rows_a[pick], nw)
    bits_b = sets_to_bitsets(c.class_ptr, c.class_items, c.class_rows_b, nw)
    t = time.perf_counter()
    bra, brb, brs = jaccard_join_bruteforce(bits_a, size[c.class_rows_a[pick]], bits_b,
                                            size[c.class_rows_b], c.tau)
    bf_s = (time.perf_counter() - t) * c.class_rows_a.size / pick.size
    ok = True
    for i, r in enumerate(pick.tolist()):
        lo, hi = c.class_pair_ptr[r], c.class_pair_ptr[r + 1]
        m = bra == i
        ok = ok and np.array_equal(brb[m], c.class_pair_row_b[lo:hi])
    s.update(bf_s=bf_s, bf_same=bool(ok), bf_rows=int(pick.size))
    s.update(compare_s=dt, peak_rss_mb=peak[0] / 2**20, rss_before_mb=rss0 / 2**20,
             maxrss_process_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
             inputs_mb=(a.nbytes + b.nbytes) / 2**20)
    print(json.dumps(s))
"""


def child(mode, n=0, cache_dir=None, mem_limit_gb=12, syn=None, per=None, bf_stride=20,
          with_bf=True):
    env = dict(os.environ)
    if cache_dir:
        env["NUMBA_CACHE_DIR"] = cache_dir
    code = CHILD.format(repo=str(REPO), mode=mode, n=n, syn=syn or {}, per=per or {},
                        bf_stride=bf_stride, with_bf=bool(with_bf))
    pre = f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({mem_limit_gb << 30}, {mem_limit_gb << 30}))\n"
    p = subprocess.run([sys.executable, "-c", pre + code], env=env, capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000, help="calls per trace for the join rows")
    ap.add_argument("--big", type=int, default=1_000_000, help="calls per trace, whole compare (0: skip)")
    ap.add_argument("--tau", type=float, default=0.2)
    ap.add_argument("--peer-frac", type=float, default=0.1,
                    help="share of A's sets the peer is timed on (1 = all; 0 = skip the peer)")
    ap.add_argument("--bf-stride", type=int, default=20,
                    help="whole-compare rows: brute force timed on every k-th class of A")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--big-repeat", type=int, default=5,
                    help="whole compare: fresh processes per workload (median reported)")
    args = ap.parse_args()
    import numba

    print(f"# bench_compare  numba {numba.__version__}, {numba.config.NUMBA_NUM_THREADS} threads, "
          f"{os.cpu_count()} CPUs, load avg {os.getloadavg()[0]:.1f} at start")
    rows, st = run_join(args.n, args.tau, args.peer_frac, args.repeat)
    table = []   # (workload, method, time, ratio, rss, growth, same, note)
    wl = (f"{st['calls_a'] // 1000}k default: {st['sets_a']}/{st['sets_b']} sets, "
          f"{st['class_pairs']} class pairs")
    t_ours = rows[0][1]
    for name, t, n_pairs, ok, note in rows:
        table.append((wl, "join: " + name, t, t / t_ours, None, None, ok, note))

    child("cold")   # fill the numba cache (default directory) in a process of its own
    if args.big:
        for wname, opts in WORKLOADS.items():
            syn, per = opts
            runs = [child("big", args.big, syn=syn, per=per, bf_stride=args.bf_stride,
                          with_bf=(i == 0)) for i in range(max(1, args.big_repeat))]
            r = runs[0]
            label = f"{args.big // 1000}k {wname} {syn or ''}{per or ''}"
            if any("error" in x for x in runs):
                err = next(x["error"] for x in runs if "error" in x)
                table.append((label, "whole compare_traces", None, None, None, None, False, err))
                continue
            times = sorted(x["compare_s"] for x in runs)
            med = runs[[x["compare_s"] for x in runs].index(times[len(times) // 2])]
            label += (f": {r['classes_a']}/{r['classes_b']} sets, {r['class_pairs']} class pairs, "
                      f"{r['pairs_total']:.3g} call pairs, {r['pairs_kept']} kept")
            stages = ", ".join(f"{k} {v:.2f}" for k, v in med["stages"].items())
            table.append((label, f"whole compare_traces (median of {len(runs)} fresh processes, "
                          "warm numba cache)", med["compare_s"], 1.0,
                          max(x["peak_rss_mb"] for x in runs),
                          max(x["peak_rss_mb"] - x["rss_before_mb"] for x in runs), True,
                          f"all runs {', '.join(f'{t:.2f}' for t in times)} s; median run's "
                          f"stages: {stages}; groups {r['groups']}"))
            table.append((label, "numba bitset/popcount brute force class join only (parallel)",
                          r["bf_s"], r["bf_s"] / med["compare_s"], None, None, r["bf_same"],
                          f"timed on {r['bf_rows']} of {r['classes_a']} A sets "
                          f"(every {args.bf_stride}th), extrapolated"))
    with tempfile.TemporaryDirectory(prefix="tv3d-numba-") as d:
        cold = child("cold", cache_dir=d)
        warm = child("cold", cache_dir=d)
    for nm, r in (("empty", cold), ("filled", warm)):
        if "error" in r:
            table.append(("300 calls, numba cache " + nm, "first compare", None, None, None, None, False, r["error"]))
        else:
            table.append(("300 calls, numba cache " + nm, "first compare (import "
                          f"{r['import_s']:.2f} s, second compare {r['second_s']:.3f} s)",
                          r["first_s"], None, None, None, True, "numba cold start" if nm == "empty" else ""))

    print(f"\ntau={args.tau}; '×' = time / time of the first row of its workload "
          "(ours: tree join resp. whole compare); 'same' = output checked identical; "
          "RSS sampled every 5 ms from /proc, growth = peak - RSS after building the inputs")
    hdr = ("workload", "method", "time s", "×", "peak RSS MB", "growth MB", "same", "note")
    print("| " + " | ".join(hdr) + " |")
    print("|" + "|".join("---" for _ in hdr) + "|")
    f = lambda v, fmt: "" if v is None else format(v, fmt)
    for w, m, t, ratio, rss, gr, ok, note in table:
        print(f"| {w} | {m} | {f(t, '.3f')} | {f(ratio, '.1f')} | {f(rss, '.0f')} | {f(gr, '.0f')} | "
              f"{'yes' if ok else 'NO'} | {note} |")


if __name__ == "__main__":
    main()
