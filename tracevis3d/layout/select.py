"""Select stage: which calls a figure shows, in which lanes, in which order (bpy-free).

1. hide: calls matched by ``params.hide`` (regexes on the raw or the display name) or ``params.hide_modules``
   (a module or any of its submodules), the top ``params.hide_utilities`` utility routines, and the
   descendants of collapsed pattern instances (``params.collapse_patterns``) are removed and their children
   promoted (`tracevis3d.analysis.filters.filter_trace`, `tracevis3d.transform.merge_calls`);
2. threads: ``params.threads`` (indices or names) or all;
3. lane order: ``params.thread_order``: ``default`` = processes in the order of their first activity, each
   process's threads together: its main thread first (named ``MainThread``/``main`` or whose tid equals its
   pid), then by first activity; ``start``, ``name``, ``busy`` (most time in root calls first), or a list of
   threads shown first in that order, the rest after them in the default order;
4. time window and ``max_depth``;
5. packing: with ``params.pack_threads`` and more than `PACK_MIN_LANES` lanes, threads of
   one kind that never run at once share a lane (`pack_lanes`: a server's thread per request).
The result keeps every lane's calls in depth-first pre-order (lanes contiguous, in lane
order), which is what the fold and cluster kernels need.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..kernels.overview_pass import lane_of_calls
from ..model import Trace
from ..names import thread_kind
from ..params.icicle import IcicleParams
from .thread_work import busiest_lanes

if TYPE_CHECKING:  # imported where used: analysis.filters is not loaded for every layout
    from ..analysis.filters import FilterSpec

_HIDDEN_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_CUT_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_SECTIONS_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_MAIN_NAMES = ("mainthread", "main", "main thread", "crbrowsermain", "crrenderermain")


@dataclass
class Selection:
    """The calls of one figure.  Call indices refer to ``trace`` (the trace after hiding)."""

    trace: Trace
    #: shown calls, lanes contiguous in lane order, pre-order inside: int32 (`index_dtype`: a trace
    #: of fewer than 2^31 calls), else int64
    idx: np.ndarray
    parent: np.ndarray  # int32, parent of each shown call as an index into idx (-1 roots)
    lane: np.ndarray  # int32, lane of each shown call
    lane_threads: np.ndarray  # int32, thread of each lane (lane order)
    lane_names: list
    t0: float
    t1: float
    windowed: bool
    orig: np.ndarray | None = None  # index in the original trace of each call of ``trace``
    partial: np.ndarray | None = None  # bool per call of ``trace``: part of its subtree is hidden
    #: the threads of each lane, in time order, where lanes were packed (`pack_lanes`); None:
    #: one thread a lane (``lane_threads``)
    lane_members: list | None = None
    #: per lane, True where its threads share it by name (`NAMED_PACK_MAX` at most, a figure
    #: of few lanes): the lane is named by its first thread, every later one at its start
    #: (`icicle.member_tags`); None: no such lane
    member_named: np.ndarray | None = None
    #: what a cut dropped under some shown calls (`subpixel.cut_subpixel`; a
    #: `fold.Envelopes` over the shown calls): a fold of this selection places them with it
    envelopes: object | None = None
    #: threads with calls that were left out because the figure had more lanes than
    #: ``max_lanes`` (`busiest_lanes`); 0: none
    n_threads_left_out: int = 0

    @property
    def members(self) -> list:
        """The threads of each lane (lists, time order): ``lane_members``, or one a lane."""
        return self.lane_members if self.lane_members is not None else [[int(t)] for t in self.lane_threads]

    @property
    def threads(self) -> np.ndarray:
        """Every shown thread (int32), lane by lane."""
        if self.lane_members is None:
            return self.lane_threads
        return np.asarray([t for m in self.lane_members for t in m], np.int32)

    def lane_of_thread(self) -> np.ndarray:
        """The lane of every thread of ``trace`` (-1: not shown)."""
        return _lane_of_thread(self.trace.n_threads, self.lane_threads, self.lane_members)

    def lane_of(self, thread: int) -> int:
        """The lane of thread ``thread`` (an index of ``trace``), -1 when it is not shown."""
        return int(self.lane_of_thread()[thread]) if 0 <= thread < self.trace.n_threads else -1

    def original(self, i) -> np.ndarray:
        """Call indices of ``trace`` (after hiding) → indices in the trace the user loaded."""
        i = np.asarray(i)
        return (i if self.orig is None else self.orig[i]).astype(np.int32)


def _lane_of_thread(n_threads: int, lane_threads: np.ndarray, members: list | None) -> np.ndarray:
    """The lane of every thread (-1: not shown) of lanes ``lane_threads``, or of ``members``
    (the threads of each lane) where lanes were packed."""
    out = np.full(max(n_threads, 1), -1, np.int64)
    if members is None:
        out[np.asarray(lane_threads, np.int64)] = np.arange(len(lane_threads))
    else:
        for k, m in enumerate(members):
            out[np.asarray(m, np.int64)] = k
    return out


def filter_spec(params) -> FilterSpec:
    """The `analysis.filters.FilterSpec` of a view's parameters (hide, modules, utilities,
    collapsed patterns)."""
    from ..analysis.filters import FilterSpec

    return FilterSpec(hide=tuple(params.hide), hide_modules=tuple(params.hide_modules),
                      hide_utilities=int(getattr(params, "hide_utilities", 0)),
                      collapse_patterns=bool(getattr(params, "collapse_patterns", False)),
                      expand=tuple(int(c) for c in getattr(params, "expand", ())))


def filtered_trace(trace: Trace, params):
    """`analysis.filters.filter_trace` under ``params`` (cached per trace and filter)."""
    from ..analysis.filters import filter_trace

    spec = filter_spec(params)
    per_trace = _HIDDEN_CACHE.setdefault(trace, {})
    if spec not in per_trace:
        per_trace[spec] = filter_trace(trace, spec)
    return per_trace[spec]


def hidden_trace(trace: Trace, params: IcicleParams) -> tuple:
    """``trace`` with the calls hidden by ``params`` merged away, and the original index of
    each kept call (None when nothing is hidden); cached per trace."""
    f = filtered_trace(trace, params)
    return f.trace, f.orig


def _is_main(trace: Trace, t: int) -> bool:
    name = (trace.thread_names[t] if t < len(trace.thread_names) else "").strip().lower()
    if name in _MAIN_NAMES:
        return True
    return bool(trace.thread_pid[t] == trace.thread_tid[t]) and trace.thread_pid[t] != 0


def order_threads(trace: Trace, threads: np.ndarray, order) -> np.ndarray:
    """``threads`` (thread indices) in the lane order ``order`` asks for (see module doc)."""
    threads = np.asarray(threads, np.int32)
    if threads.size <= 1:
        return threads
    rng = trace.thread_ranges()
    first = np.array([trace.start[rng[t, 0]] if rng[t, 1] > rng[t, 0] else np.inf for t in threads])
    names = [trace.thread_names[t] for t in threads]
    main = np.array([_is_main(trace, int(t)) for t in threads])
    # processes stay together, each from its first activity (a program's pool of worker
    # processes after the process that started them), its main thread first
    _, proc = np.unique(trace.thread_pid[threads], return_inverse=True)
    proc_first = np.full(int(proc.max()) + 1, np.inf)
    np.minimum.at(proc_first, proc, first)
    proc_index = np.full(proc_first.size, np.iinfo(np.int64).max, np.int64)
    np.minimum.at(proc_index, proc, threads.astype(np.int64))
    proc_rank = np.empty(proc_first.size, np.int64)
    proc_rank[np.lexsort((proc_index, proc_first))] = np.arange(proc_first.size)
    default = np.lexsort((threads, first, ~main, proc_rank[proc]))
    if isinstance(order, str):
        if order == "default":
            perm = default
        elif order == "start":
            perm = np.lexsort((threads, first))
        elif order == "name":
            perm = np.array(sorted(range(len(threads)), key=lambda k: (names[k].lower(), int(threads[k]))))
        elif order == "busy":  # time in root calls (only asked for here: O(calls))
            roots = np.flatnonzero(trace.parent < 0)
            busy = np.bincount(trace.thread[roots], weights=trace.end[roots] - trace.start[roots],
                               minlength=trace.n_threads)[threads]
            perm = np.lexsort((threads, -busy))
        else:
            raise ValueError(f"unknown thread order {order!r}")
        return threads[perm]
    wanted = resolve_in_order(trace, order)
    pos = {int(t): k for k, t in enumerate(threads)}
    head = [int(t) for t in wanted if int(t) in pos]
    head = list(dict.fromkeys(head))
    rest = [int(threads[k]) for k in default if int(threads[k]) not in head]
    return np.asarray(head + rest, np.int32)


def resolve_in_order(trace: Trace, spec) -> list:
    """Thread indices of the thread specs in ``spec``, in its order (ValueError naming a thread not found)."""
    out = []
    for s in spec:
        try:
            out.extend(int(t) for t in trace._resolve_threads([s]))
        except (KeyError, IndexError) as e:
            raise ValueError(f"thread_order: {str(e).strip(chr(34) + chr(39))}") from None
    return out


def thread_sections(trace: Trace) -> np.ndarray:
    """The section of every thread of ``trace`` (a thread index standing for it: its first
    thread) when the threads that `pack_lanes` would put in one lane over the whole trace
    share one; each thread its own when at most `PACK_MIN_LANES` threads have calls.  Kept
    per trace (the comparison asks for it choosing a side's thread and again drawing it)."""
    hit = _SECTIONS_CACHE.get(trace)
    if hit is not None:
        return hit
    out = np.arange(trace.n_threads, dtype=np.int64)
    rng = trace.thread_ranges()
    threads = np.flatnonzero(rng[:, 1] > rng[:, 0])
    if threads.size > PACK_MIN_LANES:
        first = np.array([trace.start[rng[t, 0]: rng[t, 1]].min() for t in threads])
        last = np.array([trace.end[rng[t, 0]: rng[t, 1]].max() for t in threads])
        order = np.lexsort((threads, first))
        threads, first, last = threads[order], first[order], last[order]
        row = _pack_threads(trace, threads, first, last, float(last.max() - first.min()))
        head = np.full(int(row.max()) + 1, -1, np.int64)
        for k in range(threads.size - 1, -1, -1):  # the first thread of each row stands for it
            head[row[k]] = threads[k]
        out[threads] = head[row]
    _SECTIONS_CACHE[trace] = out
    return out


def _at_piece(column: np.ndarray, piece: np.ndarray) -> np.ndarray:
    """``column[piece]``: a view of the column where the piece is a whole range of calls (no
    gather of a thread's 10^7 calls)."""
    if piece.size and int(piece[-1]) - int(piece[0]) + 1 == piece.size:
        return column[int(piece[0]): int(piece[-1]) + 1]
    return column[piece]


def _every_call(pieces: list, n: int) -> bool:
    """Whether ``pieces`` (ranges of calls, in lane order) are the ``n`` calls of their trace in
    order, each a whole range: the shown positions are the calls (no pass over them)."""
    at = 0
    for p in pieces:
        if p.size == 0:
            continue
        if int(p[0]) != at or int(p[-1]) - int(p[0]) + 1 != p.size:
            return False
        at += p.size
    return at == n


def _pieces_extent(tr: Trace, pieces: list) -> tuple:
    """(first start, last end) of the calls of ``pieces`` (their concatenation's min and max)."""
    shown = [p for p in pieces if p.size]
    return (float(min(_at_piece(tr.start, p).min() for p in shown)),
            float(max(_at_piece(tr.end, p).max() for p in shown)))


def index_dtype(n_calls: int):
    """The dtype of a selection's call indices into a trace of ``n_calls`` calls: int32 where
    they fit (4 bytes a shown call, not 8: a 10^8-call overview), else int64."""
    return np.dtype(np.int32) if n_calls <= np.iinfo(np.int32).max else np.dtype(np.int64)


def _kept(tr: Trace, lo: int, hi: int, params, chunk: int = 1 << 22) -> np.ndarray:
    """The calls of [lo, hi) (one thread) inside ``params``' time window and depth, ascending
    (`index_dtype`)."""
    dt = index_dtype(len(tr))
    if params.time_window is None and params.max_depth is None:
        return np.arange(lo, hi, dtype=dt)
    out = []
    for a in range(lo, hi, chunk):
        b = min(a + chunk, hi)
        m = np.ones(b - a, np.bool_)
        if params.time_window is not None:
            t0, t1 = params.time_window
            m &= tr.end[a:b] >= t0
            m &= tr.start[a:b] <= t1
        if params.max_depth is not None:
            m &= tr.depth[a:b] <= params.max_depth
        out.append((a + np.flatnonzero(m)).astype(dt))
    return np.concatenate(out) if out else np.zeros(0, dt)


def window_cut(trace: Trace, window) -> tuple:
    """(the window's trace, the index in ``trace`` of each of its calls; (None, empty)
    when no call overlaps it): ``trace.subset(time_window=window)`` -- the calls of every
    thread that overlap the window, found without a pass over ``trace``
    (`model_window.window_calls`), so a memory-mapped trace larger than the memory is cut
    at the window's cost -- with their times clipped to the window, as if the trace had
    been recorded during the window only: the calls running across its edges (a thread's
    root runs through the whole trace) are measured by their part in the window (their
    area in the colour ranking, their self and inclusive time, their children's share in
    the fold rule), which is what the figure shows of them.  The last cut of each trace
    is kept."""
    from ..model_window import window_calls
    from ..naming import share_function_table

    t0, t1 = (float(x) for x in window)
    hit = _CUT_CACHE.get(trace)
    if hit is not None and hit[0] == (t0, t1):
        return hit[1], hit[2]
    keep = window_calls(trace, t0, t1)
    cut = None
    if keep.size:
        cut = trace.subset(time_window=(t0, t1))  # its own copies: clipped in place
        share_function_table(trace, cut)  # the same functions: their names are not parsed again per window
        np.maximum(cut.start, t0, out=cut.start)
        np.minimum(cut.end, t1, out=cut.end)
    _CUT_CACHE[trace] = ((t0, t1), cut, keep)
    return cut, keep


def select_calls(trace: Trace, params: IcicleParams, window_first: bool = False,
                 pack_min_lanes: int | None = None, name_members: bool = False, max_lanes: int | None = None,
                 keep_threads=()) -> Selection:
    """The `Selection` of ``trace`` under ``params`` (hide → threads → order → window/depth).

    ``window_first`` (the icicle's own figure): with a time window, ``trace`` is first cut
    to the calls of every thread that overlap it (`window_cut`), and every later stage
    (hiding, lane order, the fold rule, the colour ranking, the measures) sees only those:
    the figure of a window is the figure of that window on its own, the same as that of
    ``trace.subset(time_window=window)`` with its times clipped to the window (its call
    indices mapped back to ``trace``), and
    it costs the window's calls, not the trace's (a memory-mapped trace larger than the
    memory can be drawn in a window).  ``pack_min_lanes``: lanes are packed (``params.pack_threads``)
    when there are more than this many, default `PACK_MIN_LANES` (the thread view's focused
    section: 1, its threads in one lane).  ``name_members`` (the icicle's figure): with
    fewer lanes than that, threads of one kind that never run at once still share a lane
    (three workers started one after another do not leave two thirds of the frame empty),
    each keeping its own name (``Selection.member_named``), at most `NAMED_PACK_MAX` a lane.
    Beyond ``max_lanes`` lanes (default: ``params.max_lanes`` where no threads were chosen)
    only the lanes whose threads work the most are kept (`busiest_lanes`), and those of
    ``keep_threads`` (the thread view's focus)."""
    cut_keep = None
    if window_first and params.time_window is not None:
        trace, cut_keep = window_cut(trace, params.time_window)
        if trace is None:
            raise ValueError("no calls to show: the thread/time selection matches nothing")
    filt = filtered_trace(trace, params)
    tr, orig = filt.trace, filt.orig
    if cut_keep is not None:  # indices in the trace the user loaded
        orig = cut_keep if orig is None else cut_keep[orig]
    if len(tr) == 0:
        if not len(trace):
            from ..model_side import no_calls_message

            raise ValueError(f"no calls to show: {no_calls_message(trace, trace.meta.get('source') or 'the trace')}")
        raise ValueError("no calls to show: hide/hide_modules hide every call")
    if params.threads is not None and len(params.threads):
        try:
            threads = tr._resolve_threads(params.threads)
        except (KeyError, IndexError) as e:
            raise ValueError(str(e).strip("'\"")) from None
    else:
        threads = np.arange(tr.n_threads, dtype=np.int32)
    rng = tr.thread_ranges()
    threads = np.asarray([t for t in threads if rng[t, 1] > rng[t, 0]], np.int32)
    if threads.size == 0:
        raise ValueError("no calls to show: the chosen threads have no calls")
    lanes = order_threads(tr, threads, params.thread_order)
    # per lane, in slices of its range (no temporaries as long as a huge mapped trace):
    # closed under parents, a parent overlaps every window its child does
    pieces = [_kept(tr, int(rng[t, 0]), int(rng[t, 1]), params) for t in lanes]
    idx = np.concatenate(pieces)
    if idx.size == 0:
        raise ValueError("no calls to show: the thread/time selection matches nothing")
    if params.time_window is not None:
        t0, t1 = (float(x) for x in params.time_window)
    else:
        t0, t1 = _pieces_extent(tr, pieces)
        if not t1 > t0:
            t1 = t0 + 1.0
    members = None
    min_lanes = PACK_MIN_LANES if pack_min_lanes is None else pack_min_lanes
    by_name = name_members and 1 < lanes.size <= min_lanes
    if getattr(params, "pack_threads", False) and (lanes.size > min_lanes or by_name):
        shown = [k for k, p in enumerate(pieces) if p.size]
        first = np.array([_at_piece(tr.start, pieces[k]).min() for k in shown])
        last = np.array([_at_piece(tr.end, pieces[k]).max() for k in shown])
        # by name: a thread too short for its tag keeps a lane of its own
        alone = (last - first < _tag_share(tr, lanes[shown], lanes.size, params) * (t1 - t0)) if by_name else None
        row = _pack_threads(tr, lanes[shown], first, last, t1 - t0, alone, _lane_cap(params, max_lanes))
        if row.max() + 1 < len(shown):  # some threads share a lane
            order = np.argsort(row, kind="stable")  # each row's threads in lane order
            cuts = np.flatnonzero(np.diff(row[order])) + 1
            rows = [[shown[k] for k in part] for part in np.split(order, cuts)]
            members = [[int(lanes[k]) for k in r] for r in rows]
            pieces = [pieces[k] for r in rows for k in r]
            lanes = np.asarray([m[0] for m in members], np.int32)
            idx = np.concatenate(pieces)
    left_out = 0
    cap = _lane_cap(params, max_lanes)
    if cap and lanes.size > cap:
        groups = members if members is not None else [[int(t)] for t in lanes]
        must = {int(t) for t in keep_threads}
        keep = busiest_lanes(tr, groups, cap, [k for k, g in enumerate(groups) if must & set(g)])
        left_out = sum(len(groups[k]) for k in range(len(groups)) if not keep[k])
        kept = np.flatnonzero(keep)
        first_piece = np.concatenate([[0], np.cumsum([len(g) for g in groups])])  # a lane's pieces, one a thread
        pieces = [pieces[j] for k in kept for j in range(first_piece[k], first_piece[k + 1])]
        lanes = lanes[kept]
        members = [members[k] for k in kept] if members is not None else None
        idx = np.concatenate(pieces)
        if params.time_window is None:
            t0, t1 = _pieces_extent(tr, pieces)
            if not t1 > t0:
                t1 = t0 + 1.0
    parent = np.empty(idx.size, np.int32) if not _every_call(pieces, len(tr)) or tr.parent.dtype != np.int32 \
        else None  # the figure of every call, in order: its parents are the trace's own (mapped, not copied)
    at = 0
    for piece in pieces if parent is not None else ():  # a parent is on its child's lane, in its (ascending) piece
        gp = tr.parent[piece]
        if piece.size and int(piece[-1]) - int(piece[0]) + 1 == piece.size:  # a whole range: no search
            parent[at: at + piece.size] = np.where(gp >= 0, gp - (int(piece[0]) - at), -1)
        else:
            parent[at: at + piece.size] = np.where(gp >= 0, at + np.searchsorted(piece, gp), -1)
        at += piece.size
    if parent is None:
        parent = tr.parent
    lane = lane_of_calls(_lane_of_thread(tr.n_threads, lanes, members).astype(np.int32), tr.thread, idx, False)
    counts = tr.thread_name_counts()
    named = None
    if members is not None and by_name:
        named = np.array([1 < len(m) <= NAMED_PACK_MAX for m in members], np.bool_)
    names = [tr.thread_label(int(t), lanes.size, counts)
             if members is None or len(members[k]) == 1 or (named is not None and named[k]) else
             packed_lane_name(tr, members[k], counts) for k, t in enumerate(lanes)]
    return Selection(tr, idx, parent, lane, lanes, names, float(t0), float(t1), params.time_window is not None,
                     orig, filt.partial if filt.partial.any() else None, members,
                     named if named is not None and named.any() else None, n_threads_left_out=left_out)


#: lanes are packed (`pack_lanes`) only when a figure has more than this many
PACK_MIN_LANES = 8
#: threads that share a lane stand at least this share of the time axis apart
PACK_GAP_FRAC = 0.01
#: ... or these, tried in turn, where that gap takes more rows than the figure has lanes
PACK_GAP_FALLBACK = (0.0025, 0.0005, 0.0)
#: a figure of few lanes (`select_calls`' ``name_members``) names each thread of a shared lane
#: where the lane has at most this many
NAMED_PACK_MAX = 4
#: ... and each of them runs long enough for its tag (`_tag_share`): its name and this many
#: label sizes more, on this share of the image's width (the time axis at its narrowest,
#: beside the legend's column)
NAMED_PACK_TAG_CLEAR_EM = 2.0
NAMED_PACK_AXIS_SHARE = 0.8


def _tag_share(tr: Trace, threads, n_lanes: int, params) -> np.ndarray:
    """Per thread of ``threads``, the share of the time axis its tag needs when it shares a
    lane by name (`icicle.member_tags`: its name's shortest form on a plate at its first
    call's start): (that form's width + `NAMED_PACK_TAG_CLEAR_EM`) label sizes, over
    `NAMED_PACK_AXIS_SHARE` of the image's width.  A rule in pixels, not in the share of the
    figure's time: three workers of 11 % of the time each, on a machine where starting them
    took longer, still share a lane."""
    from .labels import PAD, text_px
    from .text import text_width, thread_name_candidates

    counts = tr.thread_name_counts()
    em = np.array([min(text_width(t) for t in thread_name_candidates(tr.thread_label(int(th), n_lanes, counts)))
                   for th in threads], np.float64)
    return (em + 2 * PAD + NAMED_PACK_TAG_CLEAR_EM) * text_px(params) / (NAMED_PACK_AXIS_SHARE
                                                                         * float(params.resolution[0]))


def _lane_cap(params, max_lanes) -> int:
    """The figure's most lanes: ``max_lanes`` when given, else ``params.max_lanes`` unless
    the threads were chosen by name (0: no bound)."""
    if max_lanes is None:
        chosen = params.threads is not None and len(params.threads)
        max_lanes = 0 if chosen else int(getattr(params, "max_lanes", 0) or 0)
    return int(max_lanes)


def _pack_threads(trace: Trace, threads, first, last, span: float, alone=None, max_rows: int = 0) -> np.ndarray:
    """`pack_lanes` of ``threads`` of ``trace`` (each its (process, `thread_kind`)), their
    gap `PACK_GAP_FRAC` of ``span``; ``alone`` (bool per thread): those share no lane.
    Where that takes more than ``max_rows`` rows (the figure's lanes; 0: no bound), the
    tighter gaps of `PACK_GAP_FALLBACK` are tried, the first that fits (else the fewest rows)
    kept: a server's 5,000 threads of one request each, 8 at once, took 58 rows at the
    default gap, and the 24 lanes showed 2,041 of them; with no gap 8 rows hold all."""
    kinds = [kind_of(trace, t) if alone is None or not alone[k] else (("alone", k), "")
             for k, t in enumerate(threads)]
    row = pack_lanes(kinds, first, last, PACK_GAP_FRAC * span)
    shared = max_rows and row.size and len(set(kinds)) < len(kinds)  # else a gap changes nothing
    for frac in PACK_GAP_FALLBACK if shared else ():
        if row.max() + 1 <= max_rows:
            break
        tighter = pack_lanes(kinds, first, last, frac * span)
        if tighter.max() < row.max():
            row = tighter
    return row


def kind_of(trace: Trace, t: int) -> tuple:
    """What threads of one kind share (the packed lanes, the cone's thread groups): their
    `thread_kind`, and their process's kind: its name's `thread_kind` where it has a name
    (the child processes a program starts one after another, "python -c", each with its
    MainThread; a pool's forked "ForkPoolWorker-#"), else the process itself."""
    pn = trace.process_names[t] if t < len(trace.process_names) else ""
    process = ("name", thread_kind(pn)) if pn else ("pid", int(trace.thread_pid[t]))
    return process, thread_kind(trace.thread_names[t])


def thread_groups(trace: Trace, min_threads: int) -> tuple | None:
    """Threads of one kind (one process, the same `thread_kind`: names equal but for
    their numbers) as one group, where ``trace`` has more than ``min_threads`` threads with
    calls: a server's thread per request, a pool's workers run the same code, and a
    calling-context tree of each is the same tree drawn many times over.  Returns (group of
    each thread, name of each group: the thread's own where it is alone in its kind, else
    `packed_lane_name`, "36× process_request_thread") or None (no two threads of a
    kind, or few threads)."""
    rng = trace.thread_ranges()
    busy = np.flatnonzero(rng[:, 1] > rng[:, 0])
    if busy.size <= min_threads:
        return None
    kinds: dict = {}
    for t in busy.tolist():
        kinds.setdefault(kind_of(trace, t), []).append(t)
    if len(kinds) == busy.size:
        return None
    group_of = np.zeros(trace.n_threads, np.int32)
    names = []
    counts = trace.thread_name_counts()
    for g, members in enumerate(sorted(kinds.values())):  # groups in the order of their first thread
        group_of[members] = g
        if len(members) == 1:
            names.append(trace.thread_label(members[0], trace.n_threads, counts))
            continue
        names.append(packed_lane_name(trace, members, counts))
    return group_of, names


def pack_lanes(kinds: list, first: np.ndarray, last: np.ndarray, gap: float) -> np.ndarray:
    """The row of each lane (in lane order) when lanes of one kind (``kinds``: any hashable
    per lane, e.g. (process, `thread_kind`)) that never run at once share a row: first fit,
    lane by lane, into the first row of its kind whose lanes all ended at least ``gap``
    before ``first`` of this one (``first``/``last``: each lane's first start and last end);
    a lane that fits none opens a row.  First fit fills the first rows (the comparison shows
    one section: the fuller, the more it shows).  The first fitting row is found in a
    min-tree over the rows' ends, O(log n) a lane however many threads a hostile trace has.
    Rows are numbered by their first lane, so a row stands where its first lane stood; a
    lane alone in its row keeps its place."""
    from collections import Counter

    capacity = Counter(kinds)
    trees: dict = {}  # kind -> [leaf count, min-tree of the rows' ends, global row of each leaf]
    row = np.empty(len(kinds), np.int64)
    n_rows = 0
    for k, kind in enumerate(kinds):
        if kind not in trees:
            size = 1 << max(int(capacity[kind]) - 1, 0).bit_length()
            trees[kind] = [0, [np.inf] * (2 * size), []]
        used, tree, rows = trees[kind]
        size = len(tree) // 2
        limit = float(first[k]) - gap
        if tree[1] <= limit:  # the leftmost row whose end is at most first - gap
            i = 1
            while i < size:
                i = 2 * i if tree[2 * i] <= limit else 2 * i + 1
            leaf = i - size
        else:
            leaf = used
            rows.append(n_rows)
            trees[kind][0] = used + 1
            n_rows += 1
        row[k] = rows[leaf]
        i = leaf + size
        tree[i] = max(tree[i], float(last[k])) if tree[i] != np.inf else float(last[k])
        i //= 2
        while i:
            tree[i] = min(tree[2 * i], tree[2 * i + 1])
            i //= 2
    return row


def section_members(trace: Trace, thread: int) -> list:
    """The threads of ``thread``'s section (`thread_sections`), in time order."""
    sections = thread_sections(trace)
    members = np.flatnonzero(sections == sections[int(thread)])
    rng = trace.thread_ranges()
    first = [float(trace.start[rng[t, 0]: rng[t, 1]].min()) if rng[t, 1] > rng[t, 0] else np.inf for t in members]
    return [int(t) for _, t in sorted(zip(first, members.tolist()))]


def packed_lane_name(trace: Trace, threads: list, counts: tuple | None = None) -> str:
    """The name of a lane that several threads share: how many, and what they run
    ("6× process_request_thread", from "Thread-7 (process_request_thread)"; the legend
    says what the count means, `PACKED_NOTE`).  Threads of several processes (`kind_of`:
    processes of one kind) are named by their processes, and by their threads where those
    are not the processes' main threads ("8× python -c", "3× ForkPoolWorker: Dummy-…");
    the threads of one process, in a trace of several, after their process's label
    (`Trace.thread_name_counts`: "python -c #1: 5× heartbeat").  ``counts``: that tuple,
    for a caller that names many lanes."""
    counts = counts if counts is not None else trace.thread_name_counts()
    if len({int(trace.thread_pid[t]) for t in threads}) > 1:
        procs = [trace.process_names[t] if t < len(trace.process_names) else "" for t in threads]
        if all(procs):
            name = packed_name_of(procs)
            thread = trace.thread_names[threads[0]]
            if thread and thread.lower() not in _MAIN_NAMES:
                name += ": " + packed_name_of([trace.thread_names[t] for t in threads]).split("× ", 1)[-1]
            return name
        return packed_name_of([trace.thread_names[t] for t in threads])
    name = packed_name_of([trace.thread_names[t] for t in threads])
    label = counts[2][threads[0]] if threads[0] < len(counts[2]) else ""
    return f"{label}: {name}" if label and counts[0] > 1 else name


def packed_name_of(names: list) -> str:
    """`packed_lane_name` of the threads named ``names`` (the live view's lanes)."""
    import re

    kind = thread_kind(names[0])
    inner = kind[kind.find("(") + 1: kind.rfind(")")] if "(" in kind and kind.rfind(")") > kind.find("(") else ""
    if inner and "#" not in inner:
        return f"{len(names)}× {inner}"
    # a trailing number is what tells the threads apart: "3× worker", not "3× worker-…"
    bare = re.sub(r"[-_./: ]*#$", "", kind)
    return f"{len(names)}× {(bare if bare and bare != kind else kind).replace('#', '…')}"


#: the legend's note where lanes were packed
PACKED_NOTE = "lane \"6× name\": threads of one kind, one after another"
#: ... and where a lane's threads are named one by one (`select_calls`' ``name_members``)
PACKED_NAMED_NOTE = "white tags: threads that share a lane, one after another"
