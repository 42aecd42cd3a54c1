"""The class-pair stage of `analysis.comparison.compare_traces`: the exact class-level join of
the Γ-set classes (TraceDiff Sec. III, Eq. 3) and what the comparison takes from its class
pairs: the exact call-pair count, both sides' best similarity tiers and partner-call counts,
the overview bars (Sec. IV-A, over all matches: exact, or past the overview budget a threshold
sample's estimate, `overview_theta`) and, when kept, the class pairs.

Two ways, the same results (the overview bars to float rounding):
- **fused** (`kernels.setjoin_fused.jaccard_join_tree_fused`): the tree join hands each row's
  matches, in cache, to the tiers and the overview; the class pairs are never stored.  Used
  by ``join="tree"`` without a ``wave_pairs`` whenever the class pairs are not kept:
  ``keep_class_pairs=False``, or None (auto) when the join's sampled estimate is above the
  keep limit (and, if the exact count then turns out within it, the streamed way below runs
  to keep them, as before);
- **streamed** (`kernels.setjoin_tree.jaccard_join_tree_waves` or, for ``join="filter"``,
  `kernels.setjoin_prefix.jaccard_join_waves`): the class pairs written in waves and read by
  `kernels.setjoin_consume.WaveConsumer`; kept when asked (``keep_class_pairs=True``) or few;
  a given ``wave_pairs`` (the size of its waves) asks for it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from ..kernels.overview import overview_finish, overview_start
from ..kernels.setjoin import overlap_dtype
from ..kernels.setjoin_consume import WaveConsumer
from ..kernels.setjoin_fused import FUSED_PARTS, RECORD_BYTES, fused_join_bytes, jaccard_join_tree_fused
from ..kernels.setjoin_prefix import FILTER_WAVE_BYTES_PER_CLASS_PAIR, jaccard_join_waves
from ..kernels.setjoin_tree import (WAVE_PAIRS, join_plan, estimate_class_pairs, jaccard_join_tree_waves,
                                    sample_rows)
from ..kernels.setjoin_walk import WEIGHT_BINS_PER_OCTAVE, sample_match_weights


@dataclass
class ClassPairResults:
    """What `join_class_pairs` returns: ``n_pairs_total`` (call pairs), ``n_class_pairs``,
    ``tiers`` = (tptr_a, tpart_a, tsim_a, tptr_b, tpart_b, tsim_b) (`setjoin_tiers.TierStream.finish`),
    ``partners_row`` / ``partners_col`` (per class row of A / B), ``overview`` = (bars_a, delta_a,
    bars_b, delta_b), ``kept`` = (ptr, row_b, overlap, class rows of A in CSR order) or None,
    ``stats`` (the join's) and ``way`` ("fused" or "streamed")."""
    n_pairs_total: int
    n_class_pairs: int
    tiers: tuple
    partners_row: np.ndarray
    partners_col: np.ndarray
    overview: tuple
    kept: tuple | None
    stats: dict
    way: str


def join_class_pairs(class_ptr, class_items, n_functions, rows_a, rows_b, row_of_a, end_index_a, size_a, size_b,
                     count_a, count_b, calls_ptr_a, time_a, calls_ptr_b, time_b, span_a, span_b, n_bins, tol_a,
                     tol_b, tau, top_k, join, keep_class_pairs, wave_pairs, keep_auto, check_memory, lap,
                     overview_budget=None, call_times=None):
    """The class pairs of A's class rows ``rows_a`` and B's ``rows_b`` with J > ``tau`` consumed
    (see the module docstring).  ``calls_ptr_a`` / ``time_a``: each A row's call times sorted
    (µs from A's first start), B likewise.  ``check_memory(class_pairs_held, extra_bytes)``
    raises before the long work when it cannot fit; ``lap(stage)`` marks the stages ("join",
    "tiers", "overview", the join's per wave).  ``overview_budget``: the class pairs the
    fused way's overview visits at most (about): past it, by the join's sampled estimate, the
    bars are estimated from a threshold sample (`overview_theta`); None: exact at any size.
    ``call_times``: with ``time_a`` / ``time_b`` None, called for them when they are first read
    (the fused way's walk does not read them: they are made after it).
    Returns `ClassPairResults`."""
    if join == "tree" and keep_class_pairs is not True and wave_pairs is None:
        plan = join_plan(class_ptr, class_items, rows_a, rows_b, tau, n_functions, row_of_a, end_index_a, 64, None)
        # the sampled rows' matches by the call pairs they stand for: the estimate of the class
        # pairs (`setjoin_tree._sampled_pair_count`'s rows and count) and of the overview's θ
        sample = sample_rows(plan["na"])
        match_n, match_w = sample_match_weights(
            sample, plan["a_ptr"], plan["a_items"], float(tau), plan["post_ptr"], plan["post_k"],
            plan["b_size_sorted"], plan["run_end"], plan["dense_row"], plan["dense_map"],
            np.ascontiguousarray(count_a, np.int64), np.asarray(count_b, np.int64)[plan["b_by_size"]])
        scale = plan["na"] / max(1, sample.size)
        est = float(match_n.sum()) * scale
        if keep_class_pairs is False or est > keep_auto:
            join_bytes = fused_join_bytes(plan["height"], plan["nb"], int(calls_ptr_a[-1]), int(calls_ptr_b[-1]),
                                          int(np.diff(calls_ptr_a).max()), int(top_k), np.dtype(plan["odt"]).itemsize,
                                          min(FUSED_PARTS, numba.get_num_threads()), overview_budget is not None)
            # + the overview's record when the walkers share the items (`setjoin_fused.RECORD_BYTES`
            # per match it keeps, held twice while gathered: every class pair up to twice the
            # budget, about the budget past it); the plan (its membership rows too) is resident
            record = 0 if overview_budget is None else 2 * RECORD_BYTES * min(est, 2.0 * overview_budget)
            check_memory(0, join_bytes + int(record))
            stats: dict = {"estimate": float(est)}
            theta = overview_theta(est, overview_budget)
            if theta > 1.0:
                theta = calibrated_theta(match_n * scale, match_w * scale, overview_budget)
            got = jaccard_join_tree_fused(plan, size_a, size_b, count_a, count_b, int(top_k), calls_ptr_a, time_a,
                                          calls_ptr_b, time_b, span_a, span_b, int(n_bins), tol_a, tol_b, tau,
                                          stats=stats, overview_theta=theta,
                                          share_items=overview_budget is not None, drop_plan=True,
                                          call_times=call_times)
            stats.update(overview_theta=theta, overview_pairs=got["overview_pairs"])
            lap("join")
            if keep_class_pairs is False or got["class_pairs"] > keep_auto:
                return ClassPairResults(got["call_pairs"], got["class_pairs"], got["tiers"], got["partners_row"],
                                        got["partners_col"], got["overview"], None, stats, "fused")
            # few enough to keep after all (the estimate was high): the streamed way keeps them
        del plan
    if time_a is None:
        time_a, time_b = call_times()
    return _streamed(class_ptr, class_items, n_functions, rows_a, rows_b, row_of_a, end_index_a, size_a, size_b,
                     count_a, count_b, calls_ptr_a, time_a, calls_ptr_b, time_b, span_a, span_b, n_bins, tol_a,
                     tol_b, tau, top_k, join, keep_class_pairs, wave_pairs, keep_auto, check_memory, lap)


def overview_theta(estimated_pairs: float, budget) -> float:
    """θ of the overview's threshold sample (`setjoin_window.sample_positions`: a match of w call
    pairs is kept with probability min(1, w / θ)): 1 (every match, exact) while the join's
    estimated class pairs are within twice ``budget`` (None: no budget; a sample of more than
    half the matches would save little and read as "1 in 1"), else their ratio, so that about
    ``budget`` matches of one call pair each are visited (and every heavier one kept with a
    higher probability)."""
    if budget is None:
        return 1.0
    theta = float(estimated_pairs) / max(1.0, float(budget))
    return theta if theta >= 2.0 else 1.0


def calibrated_theta(match_n, match_w, budget) -> float:
    """θ of the overview's threshold sample that visits about ``budget`` matches: the θ ≥ 1 with
    Σ over the matches min(1, w / θ) = budget, from the (scaled) histogram of the sampled rows'
    matches by call pairs w (`setjoin_walk.sample_match_weights`: per bin of
    1/`WEIGHT_BINS_PER_OCTAVE` octave its matches and Σ w; a bin θ falls in counts
    min(matches, Σ w / θ)).  The matches of many call pairs are kept for certain (w ≥ θ), so
    the θ of `overview_theta` (estimate / budget, as if every match were one call pair) visits
    more, 2.6 times the budget on the synthetic 10^6-call pair."""
    lo_w = 2.0 ** (np.arange(match_n.size) / WEIGHT_BINS_PER_OCTAVE)

    def visited(theta):
        return float(np.where(lo_w >= theta, match_n, np.minimum(match_n, match_w / theta)).sum())
    lo, hi = 0.0, 64.0            # log2 θ
    if visited(1.0) <= budget:
        return 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if visited(2.0 ** mid) > budget:
            lo = mid
        else:
            hi = mid
    return float(2.0 ** hi)


#: resident bytes per class pair of one wave of the streamed join (B row int32 + overlap
#: uint16 in its buffers), with the estimate's margin
WAVE_BYTES_PER_CLASS_PAIR = 6 * 1.3
#: the same for ``join="filter"``'s waves (`setjoin_prefix.jaccard_join_waves`: row, B row,
#: similarity per pair), with the same margin
FILTER_JOIN_BYTES_PER_CLASS_PAIR = FILTER_WAVE_BYTES_PER_CLASS_PAIR * 1.3


def _streamed(class_ptr, class_items, n_functions, rows_a, rows_b, row_of_a, end_index_a, size_a, size_b, count_a,
              count_b, calls_ptr_a, time_a, calls_ptr_b, time_b, span_a, span_b, n_bins, tol_a, tol_b, tau, top_k,
              join, keep_class_pairs, wave_pairs, keep_auto, check_memory, lap):
    """The streamed way of `join_class_pairs`: the class pairs in waves (CSRs over some of A's
    class rows, with overlaps) read by one `WaveConsumer` (the tiers in two reads of each
    wave's pairs, the overview in one), and kept when asked or few."""
    overview = overview_start(calls_ptr_a, time_a, calls_ptr_b, time_b)
    tiers = WaveConsumer(size_a, size_b, count_a, count_b, int(top_k), overview, calls_ptr_a,
                         time_a, calls_ptr_b, time_b, tol_a, tol_b, max(1, numba.get_num_threads()))
    kept: list | None = [] if keep_class_pairs is not False else None
    n_kept = [0]

    def consume(rows, ptr, part, inter):
        nonlocal kept
        lap("join")
        tiers.add(ptr, part, inter, rows, lap)       # the tiers and the overview's accumulation
        if kept is not None:
            n_kept[0] += part.shape[0]
            if keep_class_pairs is None and n_kept[0] > keep_auto:
                kept = None           # too many to keep: streamed only
            else:
                kept.append((rows.copy(), np.diff(ptr), part.copy(), inter.copy()))

    wave_pairs = WAVE_PAIRS if wave_pairs is None else max(1, int(wave_pairs))
    wave_bytes_per_pair = WAVE_BYTES_PER_CLASS_PAIR if join == "tree" else FILTER_JOIN_BYTES_PER_CLASS_PAIR

    def check(est):
        # one wave's buffers are resident as far as written: the wave, or all pairs if fewer
        wave_bytes = wave_bytes_per_pair * min(wave_pairs, est)
        held = est if keep_class_pairs else min(est, keep_auto) if keep_class_pairs is None else 0
        check_memory(held, wave_bytes)

    join_stats: dict = {}
    if join == "tree":
        jaccard_join_tree_waves(class_ptr, class_items, rows_a, rows_b, tau, n_functions, row_of_a,
                                end_index_a, consume, wave_pairs, check_pairs=check, stats=join_stats)
    else:
        check(estimate_class_pairs(class_ptr, class_items, rows_a, rows_b, tau, n_functions))
        jaccard_join_waves(class_ptr, class_items, rows_a, rows_b, tau, n_functions, consume, wave_pairs,
                           stats=join_stats)
    lap("join")
    n_pairs_total, tptr_a, tpart_a, tsim_a, tptr_b, tpart_b, tsim_b = tiers.finish()
    n_class_pairs = int(tiers.n_pairs)
    partners_row, partners_col = tiers.partners_row, tiers.partners_col
    tiers = None  # its buffers given back (the join has ended: consume is not called again)
    lap("tiers")
    bars = overview_finish(overview, calls_ptr_a, time_a, calls_ptr_b, time_b, span_a, span_b, int(n_bins), tau)
    overview = None  # likewise
    lap("overview")
    if kept is not None:
        # the kept class pairs, one CSR over A's rows in the order the waves wrote them,
        # then the rows without a match (empty)
        written = np.concatenate([k[0] for k in kept]) if kept else np.zeros(0, np.int64)
        seen = np.zeros(rows_a.size, np.bool_)
        seen[written] = True
        order = np.concatenate([written, np.flatnonzero(~seen)])
        ptr_a = np.zeros(rows_a.size + 1, np.int64)
        lens = np.concatenate([k[1] for k in kept] + [np.zeros(rows_a.size - written.size, np.int64)])
        np.cumsum(lens, out=ptr_a[1:])
        odt = overlap_dtype(class_ptr, rows_a, rows_b)
        part_a = (kept[0][2] if len(kept) == 1 else np.concatenate([k[2] for k in kept])) if kept \
            else np.zeros(0, np.int32)
        inter_a = (kept[0][3] if len(kept) == 1 else np.concatenate([k[3] for k in kept])) if kept \
            else np.zeros(0, odt)
        kept = (ptr_a, part_a, inter_a, rows_a[order])
    return ClassPairResults(int(n_pairs_total), n_class_pairs, (tptr_a, tpart_a, tsim_a, tptr_b, tpart_b, tsim_b),
                            partners_row, partners_col, bars, kept, join_stats, "streamed")
