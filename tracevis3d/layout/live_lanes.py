"""Lanes of the growing live icicle (bpy-free): which lane a thread's calls are drawn in,
with the static views' packing done online.

A server that starts a thread per request gives a thread, and so a lane, per request: the
static views pack threads of one kind that never run at once into one lane
(`select.pack_lanes`, first fit).  The live view does the same as the threads arrive,
without knowing the future: a thread that appears takes the first lane of its kind (same
publisher, same process, the same name but for its numbers: `select.thread_kind`) whose
thread has returned from all its calls and did so at least ``gap`` before the new thread's
first call; else it opens a lane.  While there are fewer than `select.PACK_MIN_LANES`
lanes a lane takes at most `select.NAMED_PACK_MAX` threads, and is named by their names
in the order they ran ("deep300, deep600, deep900", as the icicle names each thread of a
lane it shares by name), up to `LISTED_MAX_EM`; a lane of more is named by their number
and kind ("36× process_request_thread").  Lanes never move once opened (a box, once
placed, stays where it is).

A thread that comes back to work after its lane was taken (its stack was empty, as a thread
whose tracing started inside a call, or the main thread between its top-level calls) goes
on in another lane: a thread is a list of *segments* (its first local call index, its
lane), and a call's lane is that of the segment it falls in.  Calls are appended in
pre-order per thread and a new segment only starts at a call appended after every call of
the previous one, so each lane's calls stay in time order.

Each lane also keeps its deepest call and its *lead*: the levels above its first call that
is not runtime infrastructure, which the layout draws thin (`LiveLayout.lead_of`).

Costs: O(changed threads) per update to keep the lanes' free times, O(lanes of the kind)
numpy per new thread to find a free lane, O(1) per call to find its lane (one segment, the
common case) or a binary search.
"""
from __future__ import annotations

import numpy as np

from ..live.store import grow_rows
from .lane_blocks import LANE_RUN_MIN, block_label
from ..params.shared import MAX_LANES
from .select import NAMED_PACK_MAX, PACK_GAP_FALLBACK, PACK_GAP_FRAC, PACK_MIN_LANES, packed_name_of, thread_kind
from .text import text_width

#: a lane's `LiveLanes.lead` while it has only runtime infrastructure
NO_LEAD = 1 << 30
#: a lane of a few threads is named by their names, one after another, up to this long (em)
LISTED_MAX_EM = 20.0


class LiveLanes:
    """Thread segments → lanes (see the module doc).  ``pack``: threads of one kind share a
    lane (``LiveParams.pack_threads``), a few each while there are fewer than ``min_lanes`` lanes."""

    def __init__(self, pack: bool = True, min_lanes: int = PACK_MIN_LANES, gap_frac: float = PACK_GAP_FRAC,
                 soft_lanes: int = MAX_LANES.default):
        self.pack, self.min_lanes, self.gap_frac = bool(pack), int(min_lanes), float(gap_frac)
        #: from this many lanes on, a thread that fits none at the gap tries the tighter gaps of
        #: `select.PACK_GAP_FALLBACK` before a lane is opened for it (0: never)
        self.soft_lanes = int(soft_lanes)
        self.n_lanes = 0
        self.lane_kind = np.zeros(16, np.int64)        # kind id of each lane
        self.lane_free_at = np.zeros(16, np.float64)   # µs its thread's last call ended (inf: busy)
        self.lane_holder = np.zeros(16, np.int64)      # the thread drawing in it now
        self.lane_threads: list[list[int]] = []        # every thread that drew in it, in order
        self._kinds: dict = {}
        self.seg_first: list[np.ndarray] = []          # per thread: first local call of each segment
        self.seg_lane: list[np.ndarray] = []           # per thread: lane of each segment
        self.thread_busy: list[bool] = []              # per thread: has open calls
        self.thread_end: list[float] = []              # per thread: end of its last closed call, µs
        self._deepest = np.zeros(16, np.int64)         # per lane: depth of its deepest call
        self._lead = np.full(16, NO_LEAD, np.int64)    # per lane: depth of its first program call
        self.display: list[int] = []                   # lanes top to bottom: each process's together
        self._last_of_proc: dict = {}                  # (publisher, pid) -> its lowest lane

    @property
    def packed(self) -> bool:
        """Some lane holds more than one thread."""
        return any(len(m) > 1 for m in self.lane_threads)

    @property
    def deepest(self) -> np.ndarray:
        """Per lane: the depth of its deepest call so far."""
        return self._deepest[: self.n_lanes]

    @property
    def lead(self) -> np.ndarray:
        """Per lane: the depth of its shallowest call that is not runtime infrastructure
        and is at least `gap` long (`NO_LEAD` while it has none): the levels above it are
        the threads' start-up (`LiveLayout.lead_of`).  The length keeps a thread's last
        tiny clean-up call, a root, from opening its start-up levels again."""
        return self._lead[: self.n_lanes]

    def update(self, threads: list, changed: dict, new: list, now: float, window_us: float, is_infrastructure,
               depth_of=None) -> None:
        """One live update: ``changed`` {thread: local calls appended or closed since the
        last one (the calls then open)}, ``new`` [(thread, first new call)]; ``now``, µs
        (the end of open calls); ``window_us``: the window in view (`gap`);
        ``is_infrastructure(func)``: bool per function; ``depth_of(thread)``: the levels
        its calls are drawn at (default: their depths; `live_colour.drawn_depths` with
        ``--hide``).  Notes the changes, places the threads with new calls (`place`),
        keeps each lane's `deepest` and `lead`."""
        depth_of = depth_of or (lambda ti: threads[ti].depth)
        for ti, loc in changed.items():
            self.note_changes(ti, threads[ti], loc)
        gap = self.gap(window_us)
        self.place(new, threads, gap)
        for ti, have in new:
            T = threads[ti]
            lane = int(self.seg_lane[ti][-1])  # new calls are in the thread's last segment
            self._deepest[lane] = max(self._deepest[lane], int(depth_of(ti)[have: T.n].max()))
        for ti, loc in changed.items():
            T = threads[ti]
            width = np.where(T.endi[loc] < 0, now, T.end[loc]) - T.start[loc]
            own = loc[(width >= gap) & ~is_infrastructure(T.func[loc])]
            if own.size:
                np.minimum.at(self._lead, self.lane_of(ti, own), depth_of(ti)[own].astype(np.int64))

    def grow_rows(self) -> None:
        if self.n_lanes < self.lane_kind.shape[0]:
            return
        for name, fill in (("lane_kind", 0), ("lane_free_at", 0.0), ("lane_holder", 0), ("_deepest", 0),
                           ("_lead", NO_LEAD)):
            setattr(self, name, grow_rows(getattr(self, name), self.n_lanes + 1, fill))

    def _open_lane(self, kind: int, ti: int, proc: tuple = (0, 0)) -> int:
        """A new lane for thread ``ti``: drawn under the last lane of its process (``proc``:
        publisher, pid), as the static views keep a process's lanes together (a worker
        process's threads arriving after another process's), else at the bottom."""
        self.grow_rows()
        lane = self.n_lanes
        self.n_lanes += 1
        self.lane_kind[lane], self.lane_holder[lane], self.lane_free_at[lane] = kind, ti, np.inf
        self.lane_threads.append([ti])
        last = self._last_of_proc.get(proc)
        if last is None or last == self.display[-1]:
            self.display.append(lane)
        else:
            self.display.insert(self.display.index(last) + 1, lane)
        self._last_of_proc[proc] = lane
        return lane

    def display_order(self) -> np.ndarray:
        """The lanes from top to bottom (lane ids)."""
        return np.asarray(self.display, np.int64)

    def _kind(self, T) -> int:
        key = (int(T.session), int(T.pid), thread_kind(str(T.name)))
        return self._kinds.setdefault(key, len(self._kinds))

    def note_changes(self, ti: int, T, loc: np.ndarray) -> None:
        """Thread ``ti``'s calls ``loc`` were appended or closed since the last update: keep
        its busy state and last end, and its lane's free time."""
        while len(self.thread_busy) <= ti:
            self.thread_busy.append(False)
            self.thread_end.append(-np.inf)
            self.seg_first.append(np.zeros(0, np.int64))
            self.seg_lane.append(np.zeros(0, np.int64))
        closed = loc[T.endi[loc] >= 0]
        if closed.size:
            self.thread_end[ti] = max(self.thread_end[ti], float(T.end[closed].max()))
        self.thread_busy[ti] = bool(T.sp)
        if self.seg_lane[ti].size:
            lane = int(self.seg_lane[ti][-1])
            if self.lane_holder[lane] == ti:
                self.lane_free_at[lane] = np.inf if T.sp else self.thread_end[ti]

    def place(self, new: list, threads: list, gap_us: float) -> None:
        """Lanes for the threads with new calls: ``new`` is [(thread, first new local index)],
        each thread's `note_changes` already made.  A thread still holding its lane goes
        on in it; the others (new ones, or back after their lane was taken) are placed in
        the order of their first new call (first fit, as `select.pack_lanes`)."""
        todo = []
        for ti, have in new:
            seg = self.seg_lane[ti]
            if seg.size and self.lane_holder[int(seg[-1])] == ti:
                continue
            todo.append((float(threads[ti].start[have]), ti, have))
        todo.sort()
        for first, ti, have in todo:
            T = threads[ti]
            kind = self._kind(T)
            lane = -1
            if self.pack:
                n = self.n_lanes
                ok = self._fitting(kind, ti, first, gap_us)
                if not ok.size and self.soft_lanes and n >= self.soft_lanes and self.gap_frac > 0:
                    for frac in PACK_GAP_FALLBACK:  # lanes running out: tighter gaps, as the static views
                        ok = self._fitting(kind, ti, first, gap_us * frac / self.gap_frac)
                        if ok.size:
                            break
                if ok.size:
                    lane = int(ok[0])
                    self.lane_holder[lane] = ti
                    self.lane_threads[lane].append(ti)
            if lane < 0:
                lane = self._open_lane(kind, ti, (int(T.session), int(T.pid)))
            self.lane_free_at[lane] = np.inf if self.thread_busy[ti] else self.thread_end[ti]
            self.seg_first[ti] = np.append(self.seg_first[ti], have)
            self.seg_lane[ti] = np.append(self.seg_lane[ti], lane)

    def _fitting(self, kind: int, ti: int, first: float, gap_us: float) -> np.ndarray:
        """The lanes (ids, ascending) thread ``ti`` of ``kind``, first call at ``first``, may
        go on in: its kind's, free ``gap_us`` before it, and, while there are fewer than
        ``min_lanes``, holding fewer than `NAMED_PACK_MAX` threads (named by them, `lane_name`)."""
        n = self.n_lanes
        ok = (self.lane_kind[:n] == kind) & (self.lane_free_at[:n] <= first - gap_us) & (self.lane_holder[:n] != ti)
        if n < self.min_lanes:
            ok &= np.array([len(set(m)) < NAMED_PACK_MAX for m in self.lane_threads], np.bool_)
        return np.flatnonzero(ok)

    def gap(self, window_us: float) -> float:
        """µs between threads that share a lane: `select.PACK_GAP_FRAC` of the window in view."""
        return self.gap_frac * max(float(window_us), 0.0)

    def lane_of(self, ti: int, loc) -> np.ndarray:
        """Lane of thread ``ti``'s calls ``loc`` (local indices)."""
        loc = np.asarray(loc, np.int64)
        lanes = self.seg_lane[ti] if ti < len(self.seg_lane) else np.zeros(0, np.int64)
        if lanes.size <= 1:
            return np.full(loc.shape, int(lanes[0]) if lanes.size else 0, np.int64)
        k = np.searchsorted(self.seg_first[ti], loc, side="right") - 1
        return lanes[np.maximum(k, 0)]

    def lanes_of_thread(self, ti: int) -> list:
        return [int(v) for v in self.seg_lane[ti]] if ti < len(self.seg_lane) else []

    def shared_naming(self, threads: list) -> tuple:
        """(some lane is named by its threads' names, some by their number and kind): what the
        legend says of the lanes several threads share (`lane_name`)."""
        listed = counted = False
        for m in self.lane_threads:
            members = list(dict.fromkeys(m))
            if len(members) > 1:
                if _listed([str(threads[t].name) for t in members]):
                    listed = True
                else:
                    counted = True
        return listed, counted

    def lane_name(self, lane: int, threads: list) -> str:
        """A lane's name: its thread's, or how many threads of which kind share it
        (`select.packed_name_of`), after its process's name when there are several."""
        members = list(dict.fromkeys(self.lane_threads[lane]))  # a thread may come back to a lane
        names = [str(threads[t].name).strip() for t in members]  # PyTorch's "stream 22 ": no " , "
        counts = [int(getattr(threads[t], "members", 1)) for t in members]
        if max(counts) > 1:  # records that hold threads one after another (past the live quota)
            names = [nm for nm, k in zip(names, counts) for _ in range(k)]
        name = ", ".join(names) if _listed(names) and max(counts) == 1 else packed_name_of(names)
        # with several processes, the process in front ("ForkProcess-2: MainThread"), as
        # `Trace.thread_label` names the static views' lanes: every worker has a MainThread
        process = str(getattr(threads[members[0]], "process", "") or "")
        if process and process != name and len(self._last_of_proc) > 1:
            return f"{process}: {name}"
        return name

    def names(self, threads: list, max_em: float) -> tuple:
        """(each lane's name, `lane_name`, where a block of one kind's lanes has its name,
        `block_label`, on its top lane; the blocks, `name_blocks`)."""
        names = [self.lane_name(lane, threads) for lane in range(self.n_lanes)]
        blocks = self.name_blocks(threads)
        for block, name in blocks:
            names[block[0]] = block_label(name, len(block), max_em)
        return names, blocks

    def _names_of(self, lane: int, threads: list) -> tuple:
        """(the names of the threads that drew in ``lane``, one per thread a record held;
        whether the lane is named by listing them, `_listed`)."""
        members = list(dict.fromkeys(self.lane_threads[lane]))
        names = [str(threads[t].name).strip() for t in members]
        counts = [int(getattr(threads[t], "members", 1)) for t in members]
        listed = _listed(names) and max(counts) == 1
        return [nm for nm, k in zip(names, counts) for _ in range(k)], listed

    def name_blocks(self, threads: list, min_lanes: int = LANE_RUN_MIN) -> list:
        """Lanes next to each other (top to bottom) that threads of one kind share, ``min_lanes``
        or more (the static views' blocks, `lane_blocks.lane_name_runs`): [(their lanes, top to
        bottom; the name of all their threads, "459× handle")], for the view to name each
        block once instead of every lane with the same "57× handle"."""
        out: list = []
        run: list = []
        names: list = []

        def close():
            if len(run) >= min_lanes:
                out.append((list(run), packed_name_of(names)))

        for lane in self.display:
            own, listed = self._names_of(lane, threads)
            shared = len(own) > 1 and not listed
            if shared and run and self.lane_kind[lane] == self.lane_kind[run[0]]:
                run.append(lane)
                names.extend(own)
                continue
            close()
            run, names = ([lane], list(own)) if shared else ([], [])
        close()
        return out


def _listed(names: list) -> bool:
    """A lane of the threads ``names`` is named by them ("deep300, deep600"), not by their
    number and kind: one thread, or at most `NAMED_PACK_MAX` whose names fit `LISTED_MAX_EM`."""
    return len(names) == 1 or (len(names) <= NAMED_PACK_MAX and text_width(", ".join(names)) <= LISTED_MAX_EM)


def names_that_fit(mid, heights, size: float) -> list:
    """bool per lane: its name is written, centred on its lane's middle ``mid`` (world z), a
    line ``size`` tall; the tallest lanes first (most levels: most going on), each where it
    keeps a line's gap from every name already written.  84 threads of a browser in 540 px
    piled their names into one block; a lane of a name's height or more always has its own."""
    import bisect

    order = sorted(range(len(mid)), key=lambda k: (-heights[k], k))
    taken: list = []  # the z of the names written, sorted
    out = [False] * len(mid)
    gap = 1.05 * float(size)
    for k in order:
        z = float(mid[k])
        j = bisect.bisect_left(taken, z)
        if (j == 0 or z - taken[j - 1] >= gap) and (j == len(taken) or taken[j] - z >= gap):
            taken.insert(j, z)
            out[k] = True
    return out


def lane_name_places(blocks: list, mid: list, heights: list, size: float) -> tuple:
    """Where the lanes' names stand and which are written (`names_that_fit`), a block of lanes
    (`LiveLanes.name_blocks`) named once by its top lane at the block's middle, as tall as all
    its lanes, its other lanes unnamed: (middle of each name, bool per lane)."""
    mid, heights = list(mid), list(heights)
    hidden = set()
    for block, _ in blocks:
        mid[block[0]] = float(np.mean([mid[lane] for lane in block]))
        heights[block[0]] = float(sum(heights[lane] for lane in block))
        hidden.update(block[1:])
    named = [lane for lane in range(len(mid)) if lane not in hidden]
    fits = names_that_fit([mid[lane] for lane in named], [heights[lane] for lane in named], size)
    shown = [False] * len(mid)
    for lane, ok in zip(named, fits):
        shown[lane] = ok
    return mid, shown


def axis_ticks(t0: float, t1: float, scale_t: float, size: float, max_ticks: int) -> list:
    """(time µs, text) of the live view's time-axis labels over the window [t0, t1]: a 1-2-5
    step (`annotate.nice_ticks`), every tick in one unit, grown until the labels (``size`` world
    units tall, ``scale_t`` world units a µs) keep a gap ("0 ms50 ms100 ms" where the calls
    filled a part of the window); none while the window is narrower than a few labels."""
    import math

    from .annotate import nice_ticks

    if (t1 - t0) * scale_t < 6 * size:
        return []
    ticks, scale, unit, dec = nice_ticks(max(t1 - t0, 1e-3))
    step = float(ticks[1] - ticks[0]) if len(ticks) > 1 else max(t1 - t0, 1e-3)
    widest = max(text_width(f"{t / scale:.{dec}f} {unit}") for t in (t0, t1)) * size
    grow = next((g for g in (1.0, 2.0, 5.0, 10.0, 20.0, 50.0) if step * g * scale_t >= widest + 1.5 * size), 100.0)
    step *= grow
    first = math.ceil(t0 / step) * step
    times = [first + k * step for k in range(max_ticks) if first + k * step <= t1 + 1e-9]
    return [(t, f"{t / scale:.{dec}f} {unit}") for t in times]
