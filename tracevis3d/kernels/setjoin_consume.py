"""One wave of class pairs consumed for the tiers and the overview: `WaveConsumer` (the
similarity tiers of `setjoin_tiers.TierStream` and the overview bars of
`overview.overview_add_pairs`).

TraceDiff Sec. III (tiers of J = inter / (|x| + |y| − inter) behind the kept call matches,
partner-call counts, the number of call pairs Σ count_x · count_y) and Sec. IV-A / Eq. 4 (the
overview bars, exact over all matches).  `TierStream.add` reads every class pair of a wave
twice (pass 1 `setjoin_tiers._wave_tops`, which also counts each row's tier entries while
its pairs are in cache; pass 2 `setjoin_tiers._wave_tier_entries`, which writes them and
the column candidates in one read); `WaveConsumer` adds the wave to the overview between
the two passes.

The overview keeps its own read of the pairs (`overview._overview_blocks`): folded into
pass 1 it measured slower (2.3 s against 0.5 + 1.6 s, one thread, 48M class pairs of a
3·10^5-call pair: the inlined sweeps and tier inserts in one loop); it is
`overview_add_pairs` itself (its own fixed parts), so its bars are identical.  The tiers'
parts are cut by entries as `TierStream` cuts them (exact whatever the cut:
`setjoin_tiers.column_cutoffs`).

Measured (bench/bench_compare_memory.py, 4-thread synthetic pair, 2 shared cores under a
varying load; the join's code is unchanged, so (tiers + overview) ÷ join compares runs):
10^6 calls, 521M class pairs: 1.16–1.57 before, 0.80–1.07 after (one-call B classes
against multi-call A classes summed into `overview._sweep_one`'s compact rows, one read
of the tiers fewer); 10^7 calls, 4.66·10^9 class pairs: 1.61 before, 1.48 after.  What
remains is per class pair, not per read: one thread, 48M class pairs of a 3·10^5-call pair,
the similarity alone costs 1.5 ns, the tiers 12 ns, the overview 8–12 ns for a one-call
class against one-call classes and 65–120 ns (before `_sweep_one`) when either side has more
calls (cache misses into the per-call difference arrays, 40 bytes per call).
"""
from .overview import overview_add_pairs
from .setjoin_tiers import TierStream


class WaveConsumer(TierStream):
    """`TierStream` whose ``add`` also adds the wave to the overview's accumulators
    ``overview`` (`overview.overview_start`; finished by `overview.overview_finish`): the same
    tiers, partner counts and call-pair count as `TierStream.add` and the same bars, bit for
    bit, as `overview.overview_add_pairs` on every wave (see the module docstring).  ``n_parts``: the tiers' parts (`TierStream`); the overview
    keeps its accumulators' parts."""

    def __init__(self, size_row, size_other, count_row, count_other, k, overview, calls_ptr_a, time_a,
                 calls_ptr_b, time_b, tol_a, tol_b, n_parts=2):
        super().__init__(size_row, size_other, count_row, count_other, k, n_parts)
        self.overview = overview
        self.calls_ptr_a = calls_ptr_a
        self.time_a = time_a
        self.calls_ptr_b = calls_ptr_b
        self.time_b = time_b
        self.tol_a = float(tol_a)
        self.tol_b = float(tol_b)

    def _between_passes(self, ptr, other, inter, rows, lap):
        """The wave added to the overview's accumulators."""
        overview_add_pairs(self.overview, ptr, other, inter, rows, self.size_row, self.size_other,
                           self.calls_ptr_a, self.time_a, self.calls_ptr_b, self.time_b, self.tol_a, self.tol_b)
        lap("overview")
