"""Fold stage: levels that carry little information get little height (SyncTrace IV-C).

The rule (``fold="auto"``, the default) folds a call when it is not a wait, release or
I/O call and

1. it is runtime infrastructure (`naming.INFRA_MODULES` / `INFRA_FUNCTIONS`: the import
   machinery, program and thread start-up, the tracer), or
2. it passes its time through: its longest child covers at least `PASS_THROUGH_SHARE`
   (90 %) of its duration, and its parent (not infrastructure) passes through too, so
   the first call of a pass-through chain keeps its level and its name (``main`` stays,
   the ``run → _run → __call__`` wrappers under it fold).

3. (not a fold, a squeeze) a call too narrow to carry a name (narrower than
   `NARROW_EM` label sizes) is drawn `NARROW_HEIGHT` of a level tall, so narrow deep
   stacks (recursions, import towers) do not take the height the named calls need; unless
   it can be named with others: it belongs to a wide run of repeated calls
   (`kernels.runs.sibling_runs`), or to a wide row of siblings that one function
   dominates (`ROW_SHARE` of the row's time, `kernels.runs.child_rows`): those rows are
   named "120× Body.paragraph".  The first narrow level above a call wide enough to be
   named keeps its full height too, so the frontier where the wide calls break up into
   narrow ones can still be named by groups ("58× Text.text & more").

4. (under a height budget, `layout.budget`) each lane takes the levels it is given at a
   readable height, giving up first what carries no name (`squeeze_parameters`, the least
   change that fits, found by bisection per lane): pass-through chains wide enough to be
   named stay open (their calls keep levels and names) while calls too narrow for a name
   shrink down to `SQUEEZE_MIN` of a level; then the pass-through chains fold from the
   narrowest up; then what carries no name (squeezed levels, narrow bands, bands of
   runtime infrastructure) thins to `SQUEEZE_FLOOR`: deep narrow towers become thin
   strata; then the threshold of "too narrow to be named" rises towards the lane's widest
   call, and last the level under those calls thins too: the widest calls keep full,
   readable levels even in a lane among many (17 busy threads in 1080 pixels).  Calls
   rank by width, a call as wide as its parent just after it
   (`kernels.fold.chain_ranked_width`), so a chain of one width opens a level at a time, and the room a
   jump of the threshold leaves is given back (`refill_squeeze`).  Without a
   budget (`budget_of` None) every pass-through chain folds.

5. (a window's context) in the figure of a time window (``trace`` cut to it, the calls
   running across its edges clipped to it: `select.window_cut`), the calls that span a
   lane's extent (`window_context`: nearly all of it, an end clipped by the window's edge)
   above the deepest such call pass their time through by construction: ``exec › <module> ›
   report`` over the ``analyse`` a detail inset magnifies.  They fold as pass-through calls
   do (the squeeze folds them last, being the lane's widest), whatever their parent, so the
   window's own calls keep the height a magnified stretch has (a detail inset 6 levels tall
   spent 3 of them on that chain and the four algorithms ``analyse`` runs were strata a
   hundredth of a level tall); the deepest keeps its level and its name (what the stretch
   is inside of).  Outside a window
   a call shares an end of its lane's extent with its child only where both have one time
   there (a wrapper that adds nothing: rule 2 at 100 %).

``fold="A:B[,C:D]"`` folds every call whose stack level lies in a range (inclusive);
``fold="none"`` folds nothing.

Folded calls are drawn as bands (`kernels.fold.place_folded_levels`): a run of folded
calls, parent to child, becomes ONE slab (the box of its first call): as tall as a level
(`BAND_WIDE`) when the run is wide enough to carry a marker that says how many levels it
holds, else a thin slab (`BAND_NARROW` of a level; a view that has no use for the markers
of bands that name no call draws those thin too: `fold_levels`' ``nameless_band``, the
comparison's sides); what the run calls that is not folded
sits on the slab.  A single wide folded call is not folded (its band would take its level
anyway, and hide its name).  Times and order are untouched: folding only moves boxes down
and leaves the folded calls out of the drawing (they remain in the trace and the data).
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from ..kernels.fold import H_FIRST_NARROW, H_SQUEEZED, auto_fold_flags, chain_ranked_width
from ..kernels.fold_codes import squeezed_codes
from ..kernels.fold_runs import sibling_runs32
from .fold_heights import LevelHeights
from ..kernels.fold_reduce import envelope_tops, kept_tree, reduced_tops, tiny_subtrees
from ..kernels.overview_pass import is_every_position, widest_per_lane
from ..kernels.runs import sibling_runs
from ..kernels.tree import depth_and_end_from_parent
from ..model import KIND_OTHER, Trace
from ..naming import function_table
from ..params.kinds import parse_fold

PASS_THROUGH_SHARE = 0.9
NARROW_EM = 3.5
NARROW_HEIGHT = 0.4
ROW_SHARE = 0.5
BAND_WIDE = 1.0
BAND_NARROW = 0.25
SQUEEZE_MIN = 0.08  # squeezed levels before the squeeze thins what carries no name, in levels
SQUEEZE_FLOOR = 0.01  # the thinnest a squeezed level or a nameless band gets, in levels
SQUEEZE_MAX = 5.0  # the squeeze's range (`squeeze_parameters`)
SQUEEZE_STEPS = 11  # bisection steps of the squeeze per lane (σ to 5/2048)
#: a call as wide as its parent ranks this much narrower for the squeeze's name threshold
#: (`kernels.fold.chain_ranked_width`): above the threshold's resolution at the top, 0.6 %
CHAIN_RANK_STEP = 0.03
#: the squeeze gives back the room a jump of its name threshold leaves only while the level
#: under the widest calls (where groups are named) keeps this much of its height
#: (`refill_squeeze`): thinner, it loses more names than the calls it opens carry
REFILL_MIN_FRONTIER = 0.9
REFILL_STEPS = 6  # bisection steps of that level's height (to 0.1/64 of a level)
#: a lane fits its budget when its levels are within this share above it
BUDGET_TOLERANCE = 1e-3
#: the squeeze's bisection summarises a subtree of calls too narrow to be named by at most
#: this many (levels, bands) pairs (`kernels.fold_reduce.tiny_subtrees`), and tries
#: subtrees over at most this many times the calls in all
FRONTIER_MAX, FRONTIER_WORK = 8, 4

_RULE_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


@dataclass
class Folding:
    """Vertical placement of the shown calls, in levels (one level = one unfolded call)."""

    bottom: np.ndarray  # float64 per shown call
    height: "LevelHeights"  # float64 per shown call, read where indexed (a code a call)
    folded: np.ndarray  # bool, effectively folded
    run_start: np.ndarray  # int32 (index into the shown calls), -1 when not folded
    run_levels: np.ndarray  # int32, levels of the run at run starts, 0 elsewhere
    drawn: np.ndarray  # bool: unfolded calls and run starts (the slabs)
    # the runs of repeated siblings (`kernels.runs.sibling_runs`) of two calls or more, by
    # their first calls: a few of the calls, not an array over all of them (10^8 calls)
    rep_heads: np.ndarray  # int64: the shown calls that start a run of 2 or more, ascending
    rep_end: np.ndarray  # float64 per run in ``rep_heads``: the end of the run (µs)
    rep_count: np.ndarray  # int64 per run in ``rep_heads``: the number of calls in the run
    rows: tuple  # `kernels.runs.child_rows` of the calls ``row_calls`` (not of every shown call)
    row_named: np.ndarray  # bool per shown call: its children form a wide, dominated row
    row_calls: np.ndarray  # int64: the shown calls whose ``row_named`` is set, ascending
    lane_levels: np.ndarray  # float64 per lane: height of the lane's tallest stack
    rule: str  # "auto", "none" or "levels"
    lane_rows: tuple = None  # `lane_root_rows`: the row each lane's roots form
    #: float64 per lane: its levels with nothing squeezed (what it asks of the budget)
    lane_demand: np.ndarray = None
    squeezed: bool = False  # some lane was squeezed into its budget
    #: float64 per shown call: the top of the calls cut under it (`Envelopes`: a stalk
    #: from its top to there), -inf where none were cut; None without envelopes
    stalk_top: np.ndarray = None


@dataclass
class Envelopes:
    """What a cut left of the subtrees it dropped (`kernels.fold_reduce.subpixel_stubs`):
    per shown call the first index and the number of its envelope's pairs (a, b, u) in the
    pools (0: none), and how many calls were dropped under it."""

    first: np.ndarray  # int32
    count: np.ndarray  # int8
    pool_a: np.ndarray  # int16
    pool_b: np.ndarray  # int16
    pool_u: np.ndarray  # int8
    n_under: np.ndarray  # int64

    @staticmethod
    def none(n: int) -> "Envelopes":
        return Envelopes(np.zeros(n, np.int32), np.zeros(n, np.int8), np.zeros(0, np.int16), np.zeros(0, np.int16),
                         np.zeros(0, np.int8), np.zeros(n, np.int64))


def fits_budget(demand, budget_of) -> np.ndarray:
    """Per lane: its ``demand`` (levels with nothing squeezed) fits the budget ``budget_of``
    gives it (to `BUDGET_TOLERANCE`): the fold squeezes nothing there, so a budget that
    any lane fits leaves the fold as it is."""
    demand = np.asarray(demand, np.float64)
    return demand <= np.asarray(budget_of(demand), np.float64) * (1 + BUDGET_TOLERANCE)


def window_context(start, end, parent, lane, kind, n_lanes: int) -> np.ndarray:
    """Per shown call: rule 5's context of a window (module doc).  A call *spans* its lane
    when it covers `PASS_THROUGH_SHARE` of the lane's extent (its first start to its last
    end) and shares one of the extent's ends exactly (clipped there by the window's edge:
    a window at the trace's start cuts only its end); it is no wait, release or I/O call.
    A spanning call with a spanning child is context (the deepest spanning call is not).
    ``parent``: local indices (-1 for roots).  Two passes over the calls, no temporaries
    (`kernels.fold_context.context_flags`)."""
    n = int(np.shape(start)[0])
    if n == 0:
        return np.zeros(0, np.bool_)
    from ..kernels.fold_context import context_flags

    nl = max(int(n_lanes), int(np.max(lane)) + 1, 1)
    return context_flags(np.asarray(start, np.float64), np.asarray(end, np.float64), np.asarray(parent),
                         np.asarray(lane), np.asarray(kind), nl, float(PASS_THROUGH_SHARE), int(KIND_OTHER))


#: `window_context` and the drawn mask of `fold_levels` read this many shown calls at a time
CONTEXT_CHUNK = 1 << 20


def auto_fold_parts(trace: Trace) -> tuple:
    """Per call of ``trace``: (is runtime infrastructure, passes its time through) under the
    automatic rule's points 1 and 2 (see module doc).  Cached."""
    hit = _RULE_CACHE.get(trace)
    if hit is not None:
        return hit
    ft = function_table(trace)
    parts = auto_fold_flags(trace.func, trace.kind, trace.start, trace.end, trace.parent,
                            np.ascontiguousarray(ft.infra, np.bool_), PASS_THROUGH_SHARE)
    _RULE_CACHE[trace] = parts
    return parts


def auto_fold_rule(trace: Trace) -> np.ndarray:
    """Per call of ``trace``: does the automatic rule fold it (see module doc)?"""
    infra, passing = auto_fold_parts(trace)
    return infra | passing


def fold_mask(trace: Trace, idx: np.ndarray, fold) -> tuple:
    """(rule name, bool per shown call) for the ``fold`` parameter."""
    kind, ranges = parse_fold(fold)
    if kind == "none":
        return kind, np.zeros(idx.size, np.bool_)
    if kind == "auto":
        return kind, auto_fold_rule(trace)[idx]
    d = trace.depth[idx]
    m = np.zeros(idx.size, np.bool_)
    for a, b in ranges:
        m |= (d >= a) & (d <= b)
    return kind, m


def squeeze_parameters(sigma, named_px: float, widest_px, nameless_band: float = BAND_WIDE) -> tuple:
    """(unfold threshold px, name threshold px, height table (lanes × 5, the columns of
    `kernels.fold.squeeze_classes`)) per lane for a squeeze ``sigma`` in [0, `SQUEEZE_MAX`]
    (the higher, the fewer levels a lane takes), in the order that loses the fewest names:

    - 0 → 1: every pass-through call wide enough for a name keeps its level (the chains
      open); calls too narrow to carry a name (`NARROW_EM` label sizes) shrink from
      `NARROW_HEIGHT` to `SQUEEZE_MIN` of a level: they carry no name anyway;
    - 1 → 2: pass-through calls fold into bands from the narrowest up: the unfold
      threshold rises geometrically to the lane's widest call (then every chain is folded);
    - 2 → 3: what still carries no name thins to `SQUEEZE_FLOOR` of a level: the squeezed
      levels, the narrow bands and the bands that only say how many levels they fold
      (runtime infrastructure); a deep narrow tower becomes a thin stratum, its shape kept;
    - 3 → 4: the threshold of "too narrow to be named" rises geometrically to the lane's
      widest call: only the widest calls and the first level under them keep a full level;
    - 4 → 5: the first level under them thins too: the lane's widest calls keep the only
      full level.  A lane among many (one thread of a pool of 16 in a 1080-pixel figure
      has two levels) keeps the names of its widest calls, where shrinking the whole figure
      instead would leave no name readable in any lane.

    ``nameless_band``: the height (levels) of a wide band that carries no name (runtime
    infrastructure: it says how many levels it folds) before the squeeze thins it.
    """
    sigma = np.asarray(sigma, np.float64)
    ratio = np.maximum(np.asarray(widest_px, np.float64) / max(named_px, 1e-9), 1.0)
    thin = np.clip(sigma - 2.0, 0.0, 1.0)
    unfold = named_px * ratio ** np.clip(sigma - 1.0, 0.0, 1.0)
    unfold = np.where(sigma >= 2.0, np.inf, unfold)
    # (at most the widest call itself: the power must not round past it)
    thr = np.minimum(named_px * ratio ** np.clip(sigma - 3.0, 0.0, 1.0), np.maximum(widest_px, named_px))
    heights = np.empty(sigma.shape + (5,), np.float64)
    squeezed = NARROW_HEIGHT - (NARROW_HEIGHT - SQUEEZE_MIN) * np.clip(sigma, 0.0, 1.0)
    heights[..., H_SQUEEZED] = squeezed - (SQUEEZE_MIN - SQUEEZE_FLOOR) * thin
    heights[..., H_FIRST_NARROW] = 1.0 - (1.0 - SQUEEZE_FLOOR) * np.clip(sigma - 4.0, 0.0, 1.0)
    heights[..., 0] = BAND_NARROW - (BAND_NARROW - SQUEEZE_FLOOR) * thin
    heights[..., 1] = nameless_band - (nameless_band - SQUEEZE_FLOOR) * thin
    heights[..., 2] = BAND_WIDE
    return unfold, thr, heights


def refill_squeeze(lo, hi, done, named_px: float, widest, budget, tops, nameless_band: float = BAND_WIDE) -> tuple:
    """The squeeze's parameters per lane after its bisection (``hi``: the least squeeze
    found to fit, ``lo``: the most that did not), with the room a jump of the name
    threshold leaves given back.

    The lane's top is a step function of the threshold: calls of nearly one width close
    together, and one step of σ can drop a lane from 5 levels to 1.25 when its budget is
    3: two levels go unused and the calls that would fit them lose their names.  Where
    the threshold jumped between ``lo`` and ``hi``, the threshold of ``lo`` is kept
    (those calls keep full levels) and the level under them (the column `H_FIRST_NARROW`,
    the last thing the squeeze thins) is thinned instead, as much as the budget needs
    (bisection, `REFILL_STEPS`), down to `REFILL_MIN_FRONTIER` of a level (thinner, its
    group names would go: then ``hi`` stands).  ``tops(unfold, thr, heights, lanes=mask)``:
    the tops of those lanes under a squeeze; ``nameless_band`` as in `squeeze_parameters`."""
    unfold, thr, heights = squeeze_parameters(hi, named_px, widest, nameless_band)
    _, thr_lo, heights_lo = squeeze_parameters(lo, named_px, widest, nameless_band)
    jumped = ~np.asarray(done, np.bool_) & (thr_lo < thr) & (np.asarray(lo) >= 3.0)
    if not jumped.any():
        return unfold, thr, heights
    thr_try = np.where(jumped, thr_lo, thr)
    trial = heights_lo.copy()

    def fits_with(frontier, lanes):
        trial[:, H_FIRST_NARROW] = frontier
        return lanes & (tops(unfold, thr_try, np.where(lanes[:, None], trial, heights), lanes=lanes) <= budget)

    fits = fits_with(REFILL_MIN_FRONTIER, jumped)
    if not fits.any():
        return unfold, thr, heights
    a, b = np.full(fits.size, REFILL_MIN_FRONTIER), np.ones(fits.size)  # a fits, b may not
    for _ in range(REFILL_STEPS):
        m = 0.5 * (a + b)
        ok = fits_with(m, fits)
        a, b = np.where(ok, m, a), np.where(ok, b, m)
    trial[:, H_FIRST_NARROW] = a
    return unfold, np.where(fits, thr_lo, thr), np.where(fits[:, None], trial, heights)


def lane_root_rows(func, start, end, parent, lane, n_lanes: int, n_functions: int) -> tuple:
    """The row the root calls of each lane form, as `kernels.runs.child_rows` gives the row
    of a call's children (a lane is the children of its thread): per lane ``(n_roots,
    row_start, row_end, dom_func, dom_time, dom_count, total, dom_first)``, ``dom_func``
    the function whose roots take the most time (-1 for a lane without roots) and
    ``dom_first`` the first of its roots (a shown call).  A task of an asyncio program
    (VizTracer's ``--log_async``: a lane per task) or a browser thread is hundreds of
    roots, one resumption or task each, too narrow to be named one by one: their row is
    ("31× worker")."""
    nl = max(int(n_lanes), 1)
    n_roots, row_start, row_end = np.zeros(nl, np.int64), np.zeros(nl), np.zeros(nl)
    dom_func, dom_first = np.full(nl, -1, np.int64), np.full(nl, -1, np.int64)
    dom_time, dom_count, total = np.zeros(nl), np.zeros(nl, np.int64), np.zeros(nl)
    r = np.flatnonzero(np.asarray(parent) < 0)
    if r.size == 0:
        return n_roots, row_start, row_end, dom_func, dom_time, dom_count, total, dom_first
    rl, rf = np.asarray(lane)[r].astype(np.int64), np.asarray(func)[r].astype(np.int64)
    dur = np.asarray(end)[r] - np.asarray(start)[r]
    n_roots[:] = np.bincount(rl, minlength=nl)[:nl]
    total[:] = np.bincount(rl, weights=dur, minlength=nl)[:nl]
    row_start[:] = np.inf
    np.minimum.at(row_start, rl, np.asarray(start)[r])
    np.maximum.at(row_end, rl, np.asarray(end)[r])
    row_start[n_roots == 0] = 0.0
    key = rl * max(int(n_functions), 1) + rf
    order = np.argsort(key, kind="stable")  # stable: the first root of each (lane, function) first
    k = key[order]
    first = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    t = np.add.reduceat(dur[order], first)
    c = np.diff(np.r_[first, k.size])
    gl = rl[order][first]
    best = np.lexsort((-t, gl))  # per lane, the function with the most time first
    top = best[np.r_[True, gl[best][1:] != gl[best][:-1]]]
    lanes = gl[top]
    dom_func[lanes], dom_time[lanes], dom_count[lanes] = rf[order][first][top], t[top], c[top]
    dom_first[lanes] = r[order][first][top]
    return n_roots, row_start, row_end, dom_func, dom_time, dom_count, total, dom_first


def _widest_per_lane(name_px, infra_part, pass_part, kind, lane, n_lanes: int) -> tuple:
    """Per lane, the widest nameable call (``name_px``, 0 where infrastructure or pass-through)
    among its work (`KIND_OTHER`) and among all its calls (`kernels.overview_pass.widest_per_lane`:
    `_lane_max` of both, bit for bit); zeros without lanes.  A lane past ``n_lanes``: IndexError."""
    if not n_lanes:
        return np.zeros(1, np.float64), np.zeros(1, np.float64)
    work, every, ok = widest_per_lane(np.asarray(name_px, np.float64), np.asarray(infra_part, np.bool_),
                                      np.asarray(pass_part, np.bool_), kind, lane, int(n_lanes), int(KIND_OTHER))
    if not ok:
        raise IndexError(f"a call's lane is outside the {n_lanes} lanes")
    return work, every


def _lane_max(values, lane, n_lanes) -> np.ndarray:
    """Max of ``values`` per lane (runs of equal ``lane`` reduced first: lanes are contiguous)."""
    out = np.zeros(n_lanes, np.float64)
    if values.size == 0:
        return out
    starts = np.flatnonzero(np.r_[True, lane[1:] != lane[:-1]])
    np.maximum.at(out, lane[starts], np.maximum.reduceat(values, starts))
    return out


def _bisection_tree(parent, local_end, lane, name_px, width_px, infra, passing, wide, named_px: float,
                    env: Envelopes) -> tuple:
    """The squeeze's bisection tree: the shown calls with every subtree of calls too narrow
    to be named at any squeeze replaced by its root and the frontier of what it adds on top
    (`kernels.fold_reduce.tiny_subtrees`; ``env``: the envelopes of a cut, kept or merged
    into those frontiers).  ``(parent, columns, pools)``: the kept calls' parents (indices
    among them), their columns as `kernels.fold_reduce.reduced_tops` takes them (lane …
    wide, env_first, env_count) and the frontier pools."""
    keep, env_first, env_count, pool_a, pool_b, pool_u = tiny_subtrees(
        parent, local_end, name_px, width_px, infra, passing, wide, float(named_px), FRONTIER_MAX,
        FRONTIER_WORK * parent.size, env.first, env.count, env.pool_a, env.pool_b, env.pool_u)
    kept, kept_parent = kept_tree(keep, parent)
    cols = (lane, name_px, width_px, infra, passing, wide)
    if kept.size < parent.size:
        cols = tuple(c[kept] for c in cols)
    return kept_parent, cols + (env_first[kept], env_count[kept]), (pool_a, pool_b, pool_u)


def _tops_on(tree, n_lanes: int):
    """``tops(unfold, thr, heights, lanes=None)``: the lane tops of the placement under a
    squeeze (the bisection's question) on ``tree`` (`_bisection_tree`), in work arrays reused
    from call to call; with ``lanes`` (a mask), those lanes' tops only (the others 0)."""
    parent, cols, pools = tree
    n, nl = parent.size, max(n_lanes, 1)
    work = (np.empty(n, np.bool_), np.empty(n, np.int8), np.empty(n, np.float64), np.empty(n, np.int32),
            np.empty(n, np.float64), np.empty(n, np.float64), np.empty(n, np.bool_), np.empty(n, np.int32))
    lane = cols[0]
    # lanes are contiguous (select stage): lane l's calls are [bounds[l], bounds[l + 1]), their
    # parents inside them, so some lanes' tops need only their calls (any other order: every
    # call, every time)
    bounds = np.searchsorted(lane, np.arange(nl + 1), side="left") if (lane[1:] >= lane[:-1]).all() else None
    rebased: dict = {}  # the parents of a range of lanes, as indices in that range

    def tops(unfold, thr, heights, lanes=None):
        args = (np.asarray(unfold, np.float64), np.asarray(thr, np.float64), np.ascontiguousarray(heights, np.float64))
        if lanes is None or np.all(lanes) or bounds is None:
            return reduced_tops(parent, *cols, *pools, *args, *work)[:n_lanes]
        top = np.zeros(nl)
        chosen = np.flatnonzero(np.asarray(lanes, np.bool_))
        for run in np.split(chosen, np.flatnonzero(np.diff(chosen) > 1) + 1) if chosen.size else []:
            a, b = int(bounds[run[0]]), int(bounds[run[-1] + 1])  # consecutive lanes: one range of calls
            if b <= a:
                continue
            p = rebased.get((a, b))
            if p is None:
                p = rebased[(a, b)] = np.where(parent[a:b] >= 0, parent[a:b] - a, -1)
            got = reduced_tops(p, *(c[a:b] for c in cols), *pools, *args, *(w[a:b] for w in work))
            top[run] = got[run]
        return top[:n_lanes]

    return tops


#: the fold's rows and name widths are made over runs of whole trees of about this many
#: shown calls (`name_width_runs`)
NAME_WIDTH_CHUNK_CALLS = 1 << 17


def name_width_runs(parent: np.ndarray, head: np.ndarray, chunk: int | None = None) -> np.ndarray:
    """``[(a, b), ...]`` (int64, shape (k, 2)): ranges of the shown calls, about ``chunk``
    calls each, cut only at a root that starts a run of its own (``head[r] == r``,
    `sibling_runs`): no subtree, row of children or run of siblings crosses a cut, so
    `child_rows` and `name_widths` over each range, its positions rebased, give their values
    over all the calls.  One range where the calls are not a forest in pre-order from the first."""
    chunk = NAME_WIDTH_CHUNK_CALLS if chunk is None else chunk
    n = int(parent.shape[0])
    roots = np.flatnonzero(parent < 0)
    roots = roots[head[roots] == roots]
    cuts = np.array([0, n], np.int64)
    if n and roots.size and roots[0] == 0:
        at = np.searchsorted(roots, np.arange(0, n, chunk))
        cuts = np.unique(np.append(roots[np.minimum(at, roots.size - 1)], n)).astype(np.int64)
        if any(int(head[a:b].min()) < a for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist()) if b > a):
            cuts = np.array([0, n], np.int64)  # a run reaching back over a cut (lanes interleaved): one range
    return np.stack([cuts[:-1], cuts[1:]], 1)


def every_call(idx: np.ndarray, n: int) -> bool:
    """Whether the shown calls ``idx`` are the ``n`` calls of their trace, in order (a
    whole-trace figure), read in one pass (`kernels.overview_pass.is_every_position`: no array
    over them)."""
    return idx.shape[0] == n and bool(is_every_position(idx))


def at_shown(column: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``column[idx]``, a column of the trace at the shown calls; the column itself (a
    mapped file's pages, not a copy in the process's memory; never written) where they are
    every call in order (`every_call`)."""
    return column if every_call(idx, column.shape[0]) else column[idx]


def _rows_and_widths(parent, local_end, head, func, start, end, width_px, rep_end, n_functions: int, upx: float,
                     named_px: float) -> tuple:
    """`fold_levels`' rows of children and name widths (`kernels.runs.child_rows`,
    `name_widths`) in one pass over the calls (`kernels.fold_runs.rows_and_name_widths`: no
    array of the rows over every call, the rows named kept at their calls).
    ``(name_px, row_named, rows, row_calls)``."""
    from ..kernels.fold_runs import rows_and_name_widths

    return rows_and_name_widths(parent, local_end, head, func, start, end, np.asarray(width_px, np.float64),
                                rep_end, int(n_functions), float(upx), float(ROW_SHARE), float(named_px))


def fold_levels(trace: Trace, idx: np.ndarray, parent: np.ndarray, lane: np.ndarray, n_lanes: int,
                fold, width_px: np.ndarray, marker_px: float, label_px: float = 16.0,
                us_per_px: float = 1.0, budget_of=None, envelopes: Envelopes | None = None,
                nameless_band: float = BAND_WIDE) -> Folding:
    """Place the shown calls ``idx`` (with local ``parent``) in levels, folding by ``fold``.

    ``width_px`` is each call's (estimated) width in pixels; a run whose first call is at
    least ``marker_px`` wide gets a band tall enough for its marker; with the automatic
    rule, calls narrower than `NARROW_EM` × ``label_px`` are squeezed.

    ``budget_of(levels per lane) -> budget per lane`` (the height budget stage,
    `layout.budget`): a lane taller than its budget is squeezed into it, with the least
    squeeze that fits (`squeeze_parameters`, found by bisection per lane); automatic rule only.

    ``envelopes``: what a cut left of the subtrees it dropped under some shown calls
    (`layout.subpixel.cut_subpixel`): each lane's levels include them, as if their calls
    were placed, and ``stalk_top`` says where they reach.

    ``nameless_band``: the height in levels of a wide band that names no call (runtime
    infrastructure, "14 folded levels"), `BAND_WIDE` by default (tall enough for that
    marker); a view where such markers say nothing worth their level passes `BAND_NARROW`
    (automatic rule only: levels folded on request keep their markers).
    """
    rule, mask = fold_mask(trace, idx, fold)
    width_px = np.asarray(width_px, np.float64)
    lane = np.asarray(lane)
    wide = width_px >= marker_px
    whole = every_call(idx, len(trace))  # the figure of every call: the trace's own (mapped) columns
    start, func, end = (c if whole else c[idx] for c in (trace.start, trace.func, trace.end))
    gap = np.full(max(n_lanes, 1), float(us_per_px))
    if idx.size < np.iinfo(np.int32).max:  # 4-byte heads and counts (`kernels.fold_runs`)
        head, rep_end, rep_count = sibling_runs32(func, start, end, parent, lane, gap)
    else:
        head, rep_end, rep_count = sibling_runs(func, start, end, parent, lane, gap)
    upx = max(float(us_per_px), 1e-300)
    rep_heads = np.flatnonzero(rep_count >= 2)
    rep_count = rep_count[rep_heads].astype(np.int64)  # (the counts at the runs only, before the rows' loop)
    # one past each subtree, among the shown calls: the trace's own where they are every call
    # (its parents are theirs: closed under parents), else made (the depths go at once)
    local_end = trace.end_index if whole and trace.end_index.dtype == np.int32 else \
        depth_and_end_from_parent(parent)[1]
    named_px = NARROW_EM * label_px
    # the widest thing that can carry a call's name: itself, its run, or its parent's row
    # when that is a row of its function's calls (`kernels.runs.name_widths`); what the label
    # stage reads of the runs and rows is kept at their few calls (`_rows_and_widths`: no
    # array of the rows over every call)
    name_px, row_named, rows, row_calls = _rows_and_widths(parent, local_end, head, func, start, end, width_px,
                                                           rep_end, trace.n_functions, upx, named_px)
    rep_end = rep_end[rep_heads]
    del head
    squeeze = rule == "auto"
    nl = max(n_lanes, 1)
    if not squeeze:  # levels folded on request keep the marker that says how many
        nameless_band = BAND_WIDE

    infra = auto_fold_parts(trace)[0] if squeeze else None
    infra_part = mask & (infra if whole else infra[idx]) if squeeze else mask  # (every call: no gathers)
    pass_part = mask & ~infra_part
    del mask, infra
    kind = trace.kind if whole else trace.kind[idx]
    if squeeze:
        # rule 5: a window's context chain passes its time through
        pass_part |= window_context(start, end, parent, lane, kind, n_lanes) & ~infra_part
        # a chain of one width opens a level at a time, shallowest first
        name_px = chain_ranked_width(parent, name_px, infra_part, kind != KIND_OTHER, named_px, CHAIN_RANK_STEP)
    lane32 = np.ascontiguousarray(lane, np.int32)

    env = envelopes if envelopes is not None else Envelopes.none(idx.size)
    stalk = [None]

    def place(unfold, thr, heights):
        heights = np.array(heights, np.float64, order="C")
        if not squeeze:  # level ranges or none: no squeeze, every call a full level
            unfold, thr = np.full(nl, np.inf), np.zeros(nl)
            heights[:, H_SQUEEZED] = heights[:, H_FIRST_NARROW] = 1.0  # (what an envelope's levels take)
        bottom, code, eff, run_start, run_levels, top, table = squeezed_codes(
            parent, lane32, name_px, width_px, infra_part, pass_part, wide, np.asarray(unfold, np.float64),
            np.asarray(thr, np.float64), heights)
        height = LevelHeights(code, lane32, table)
        placed = (bottom, height, eff, run_start, run_levels)
        if envelopes is not None and env.pool_a.size:
            stalk[0] = envelope_tops(bottom + np.asarray(height), lane32, name_px, np.asarray(thr, np.float64), heights,
                                     env.first, env.count, env.pool_a, env.pool_b, env.pool_u)
            top = np.maximum(top, _lane_max(stalk[0], lane, nl))
        return placed, top[:n_lanes]

    # the widest call that can be named: infrastructure is always folded, and pass-through
    # calls fold into their chain's band, which carries the chain's first call's name;
    # ... and the threshold is set by the lane's work, not its waits: a worker whose last
    # queue wait outlasts its task keeps the task's name (the wait, a sibling, is as wide).
    # Both maxima per lane in one pass (`kernels.overview_pass.widest_per_lane`: no arrays over the calls)
    widest, widest_any = _widest_per_lane(name_px, infra_part, pass_part, kind, lane, n_lanes)
    if n_lanes and not (widest > 0.0).all():  # a lane of waits alone: its widest wait
        widest = np.where(widest > 0.0, widest, widest_any)
    del kind
    if budget_of is None or not squeeze or not n_lanes:
        # no budget: every pass-through chain folded, narrow calls at NARROW_HEIGHT
        heights = squeeze_parameters(np.zeros(nl), named_px, widest, nameless_band)[2]
        placed, lane_levels = place(np.full(nl, np.inf), np.full(nl, named_px), heights)
        demand, squeezed = lane_levels, False
    else:
        lo, hi = np.zeros(nl), np.full(nl, SQUEEZE_MAX)
        tops = _tops_on(_bisection_tree(parent, local_end, lane32, name_px, width_px, infra_part, pass_part, wide,
                                        named_px, env), n_lanes)
        del local_end  # (the tree holds its own columns)
        if envelopes is None:
            env = None  # no envelopes to place: `Envelopes.none`'s zeros gone before the placement
        # what each lane needs with every wide pass-through chain open: its tops alone (the
        # whole placement, fresh arrays of every call, is made once, for the squeeze chosen)
        demand = tops(*squeeze_parameters(lo, named_px, widest, nameless_band))
        budget = np.asarray(budget_of(demand), np.float64) * (1 + BUDGET_TOLERANCE)
        done = demand <= budget  # fits with every wide pass-through chain open (`fits_budget`)
        squeezed = not done.all()
        params = squeeze_parameters(lo, named_px, widest, nameless_band)
        if not done.all():
            hi[done] = 0.0
            for _ in range(SQUEEZE_STEPS):
                mid = np.where(done, 0.0, 0.5 * (lo + hi))
                got = tops(*squeeze_parameters(mid, named_px, widest, nameless_band), lanes=~done)
                fits = got <= budget
                hi = np.where(~done & fits, mid, hi)
                lo = np.where(~done & ~fits, mid, lo)
            params = refill_squeeze(lo, hi, done, named_px, widest, budget, tops, nameless_band)
        del tops  # the bisection's reduced tree: gone before the placement's arrays
        placed, lane_levels = place(*params)
    bottom, height, eff, run_start, run_levels = placed
    drawn = run_start < 0
    for a in range(0, idx.size, CONTEXT_CHUNK):  # run starts: no positions array over every call
        drawn[a:a + CONTEXT_CHUNK] |= run_start[a:a + CONTEXT_CHUNK] == np.arange(a, min(a + CONTEXT_CHUNK, idx.size))
    return Folding(bottom, height, eff, run_start, run_levels, drawn, rep_heads, rep_end, rep_count, rows, row_named,
                   row_calls, lane_levels, rule, lane_root_rows(func, start, end, parent, lane, n_lanes,
                                                     trace.n_functions), demand, squeezed,
                   stalk[0] if envelopes is not None else None)
