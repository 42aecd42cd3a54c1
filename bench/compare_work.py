"""What a compare's tree join has to do, counted without walking it: one table (issue 79).

    .venv/bin/python bench/compare_work.py [--sizes 1e6,1e7] [--files A B]

For each pair (``tracevis3d.synthetic(n, threads=4)`` against ``perturb(a, seed=2)``, or two
trace files, e.g. build/compare-goal/synthetic_100000000{,_perturbed2}.tv3d.npz), the join's plan
(`setjoin_tree.join_plan`, made inside ``compare`` as the command makes it; the compare is
stopped there) and from it: the classes of each side, the cells of the rows' size windows (what
the window pass reads), the delta postings added one by one and the membership-row cells added
(`setjoin_walk.add_postings`' split, over each row's subtree window), the counters' dtype, and
the window pass's cells per run of equal |y| (one threshold and loop
each), the class pairs with J > τ estimated from the join's own sample of rows
(`setjoin_walk.sample_match_count`).  The peer is the number of calls: the columns say how the
work grows against them.  10^8 needs ~14 GB and ~3 min.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from numba import njit


class _Planned(Exception):
    pass


@njit(cache=False, nogil=True)
def _delta_work(d_ptr, d_items, post_ptr, post_k, k_lo, k_hi, dense_row, dense_ratio):
    """(postings added one by one, membership-row cells added) over every row's delta, split as
    `setjoin_walk.add_postings` splits them."""
    sparse = 0
    cells = 0
    for w in range(k_lo.shape[0]):
        lo, hi = k_lo[w], k_hi[w]
        for j in range(d_ptr[w], d_ptr[w + 1]):
            e = d_items[j]
            p0 = post_ptr[e] + np.searchsorted(post_k[post_ptr[e]:post_ptr[e + 1]], lo)
            p1 = post_ptr[e] + np.searchsorted(post_k[post_ptr[e]:post_ptr[e + 1]], hi)
            if dense_row[e] >= 0 and (p1 - p0) * dense_ratio >= hi - lo:
                cells += hi - lo
            else:
                sparse += p1 - p0
    return sparse, cells


def plan_of(a, b) -> dict:
    """The tree join's plan of ``compare(a, b)`` (its defaults), the compare stopped there."""
    import tracevis3d.analysis.compare_join as compare_join

    got = {}
    make = compare_join.join_plan

    def keep(*args, **kw):
        got["plan"] = dict(make(*args, **kw))
        got["tau"] = args[4]
        raise _Planned

    compare_join.join_plan = keep
    try:
        import tracevis3d

        tracevis3d.compare(a, b, keep_class_pairs=False)
    except _Planned:
        pass
    finally:
        compare_join.join_plan = make
    return got


def work_row(label: str, n_calls: int, a, b) -> str:
    from tracevis3d.kernels.setjoin_tree import sample_rows
    from tracevis3d.kernels.setjoin_walk import DENSE_RATIO, sample_match_count

    t = time.perf_counter()
    got = plan_of(a, b)
    p, tau = got["plan"], float(got["tau"])
    windows = int((p["own_hi"] - p["k_lo"]).astype(np.int64).sum())
    # the window pass's runs of equal |y| (one threshold and loop each): the run of each size rank
    run_id = np.concatenate([[0], np.cumsum(np.diff(p["b_size_sorted"]) != 0)])
    lo, hi = p["k_lo"].astype(np.int64), p["own_hi"].astype(np.int64)
    has = hi > lo
    runs = int((run_id[hi[has] - 1] - run_id[lo[has]] + 1).sum())
    sparse, cells = _delta_work(p["d_ptr"], p["d_items"], p["post_ptr"], p["post_k"], p["k_lo"], p["k_hi"],
                                p["dense_row"], DENSE_RATIO)
    sample = sample_rows(p["na"])
    matched = sample_match_count(sample, p["a_ptr"], p["a_items"], tau, p["post_ptr"], p["post_k"],
                                 p["b_size_sorted"], p["run_end"], p["dense_row"], p["dense_map"])
    pairs = matched * p["na"] / max(1, sample.size)
    return (f"| {label} | {n_calls:,} | {p['na']:,} × {p['nb']:,} | {windows:.3g} | {sparse:.3g} | {cells:.3g} | "
            f"{p['dense_map'].shape[0]} | {np.dtype(p['odt']).name} | {pairs:.3g} | {windows / max(1, runs):,.0f} | "
            f"{windows / n_calls:,.0f} | "
            f"{time.perf_counter() - t:.0f} s |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e6,1e7", help="calls of A of the synthetic pairs")
    ap.add_argument("--files", nargs=2, default=None, metavar=("A", "B"), help="a pair of trace files instead")
    args = ap.parse_args()
    import tracevis3d

    print("| pair | calls of A | A classes × B classes | size-window cells | delta postings one by one | "
          "membership-row cells | membership rows | counters | class pairs (sampled) | cells a run of equal |y| | "
          "window cells a call | "
          "counted in |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    if args.files:
        from tracevis3d.io import mapguard

        mapguard.exit_on_sigbus()
        a, b = tracevis3d.load(args.files[0]), tracevis3d.load(args.files[1])
        print(work_row(args.files[0], len(a), a, b), flush=True)
        return
    for n in (int(float(x)) for x in args.sizes.split(",")):
        a = tracevis3d.synthetic(n, threads=4)
        print(work_row(f"synthetic {n:.0e}", n, a, tracevis3d.perturb(a, seed=2)), flush=True)


if __name__ == "__main__":
    main()
