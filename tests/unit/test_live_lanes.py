"""The live view's lanes (`layout.live_lanes.LiveLanes`): threads of one kind that never run
at once share a lane, decided online as the threads arrive; the brute-force twin is the
static views' first fit (`select.pack_lanes`) over the same threads."""
from __future__ import annotations

import numpy as np

from tracevis3d.layout.live_lanes import LiveLanes
from tracevis3d.layout.select import NAMED_PACK_MAX, pack_lanes, thread_kind
from tracevis3d.live.store import ThreadCalls


def _thread(name: str, spans, session: int = 0, pid: int = 1, open_last: bool = False) -> ThreadCalls:
    """A thread whose calls are the roots ``spans`` [(start, end)] (the last one still open
    with ``open_last``)."""
    T = ThreadCalls(pid, 100 + len(name), name, "proc", session)
    T.reserve(len(spans))
    for k, (a, b) in enumerate(spans):
        T.func[k], T.start[k], T.end[k], T.depth[k], T.parent[k], T.endi[k] = 0, a, b, 0, -1, k + 1
    T.n = len(spans)
    if open_last:
        T.endi[T.n - 1] = -1
        T.stack[0] = T.n - 1
        T.sp = 1
    return T


def _arrive(lanes: LiveLanes, threads: list, ti: int, have: int = 0, gap: float = 0.0) -> None:
    T = threads[ti]
    lanes.note_changes(ti, T, np.arange(have, T.n))
    lanes.place([(ti, have)], threads, gap)


def test_online_packing_is_the_static_first_fit():
    """Threads arriving one by one, each finished before the next starts or not: the lanes
    are the rows `select.pack_lanes` gives the same threads (first fit, by first start)."""
    rng = np.random.default_rng(5)
    for trial in range(40):
        n = int(rng.integers(1, 40))
        first = np.sort(rng.uniform(0, 1000, n))
        last = first + rng.exponential(60, n)
        names = [f"Thread-{k} ({rng.choice(['handle', 'worker'])})" for k in range(n)]
        threads = [_thread(nm, [(a, b)]) for nm, a, b in zip(names, first, last)]
        lanes = LiveLanes(pack=True, min_lanes=0, soft_lanes=0)  # (no tighter gaps: the static rule's own)
        gap = float(rng.choice([0.0, 5.0]))
        for ti in range(n):  # arrival order = first start; a thread's calls are known once it ends
            for tj in range(ti):
                lanes.note_changes(tj, threads[tj], np.zeros(0, np.int64))
            _arrive(lanes, threads, ti, gap=gap)
        got = [lanes.lane_of(ti, [0])[0] for ti in range(n)]
        want = pack_lanes([(1, thread_kind(nm)) for nm in names], first, last, gap)
        assert got == want.tolist(), (trial, got, want.tolist())


def test_threads_arriving_in_one_update_are_packed_in_time_order():
    """A viewer that updates once after the whole run (a render) still packs: the threads
    new in one update are placed in the order of their first call."""
    spans = [(0, 10), (20, 30), (40, 50), (60, 70)]
    threads = [_thread(f"Thread-{k} (process_request_thread)", [s]) for k, s in enumerate(spans)]
    threads.reverse()  # announced in another order than they ran
    lanes = LiveLanes(pack=True, min_lanes=0)
    for ti, T in enumerate(threads):
        lanes.note_changes(ti, T, np.arange(T.n))
    lanes.place([(ti, 0) for ti in range(len(threads))], threads, 1.0)
    assert lanes.n_lanes == 1 and lanes.packed
    assert lanes.lane_threads[0] == [3, 2, 1, 0]
    assert lanes.lane_name(0, threads) == "4× process_request_thread"


def test_what_is_not_packed():
    """Busy threads, threads of another kind or publisher, threads too close in time, and
    packing off: each its own lane; with fewer than `min_lanes` lanes, a lane takes at most
    `NAMED_PACK_MAX` threads and is named by them, in the order they ran."""
    def lanes_of(threads, pack=True, min_lanes=0, gap=1.0):
        lanes = LiveLanes(pack=pack, min_lanes=min_lanes)
        for ti in range(len(threads)):
            _arrive(lanes, threads, ti, gap=gap)
        return lanes.n_lanes

    seq = [(0, 10), (20, 30), (40, 50)]
    assert lanes_of([_thread(f"worker-{k}", [s]) for k, s in enumerate(seq)]) == 1
    assert lanes_of([_thread(f"worker-{k}", [s]) for k, s in enumerate(seq)], pack=False) == 3
    assert lanes_of([_thread(f"worker-{k}", [s]) for k, s in enumerate(seq)], min_lanes=8) == 1
    five = [_thread(f"worker-{k}", [(20 * k, 20 * k + 10)]) for k in range(5)]
    lanes = LiveLanes(pack=True, min_lanes=8)
    for ti in range(5):
        _arrive(lanes, five, ti, gap=1.0)
    assert lanes.n_lanes == 2 and [len(m) for m in lanes.lane_threads] == [NAMED_PACK_MAX, 1]
    assert lanes.lane_name(0, five) == "worker-0, worker-1, worker-2, worker-3"
    assert lanes.shared_naming(five) == (True, False)
    long = [_thread(f"Thread-{k} (process_request_thread)", [(20 * k, 20 * k + 10)]) for k in range(3)]
    lanes = LiveLanes(pack=True, min_lanes=8)
    for ti in range(3):
        _arrive(lanes, long, ti, gap=1.0)
    assert lanes.n_lanes == 1 and lanes.lane_name(0, long) == "3× process_request_thread"  # too long to list
    assert lanes.shared_naming(long) == (False, True)
    assert lanes_of([_thread(f"worker-{k}", [s]) for k, s in enumerate(seq)], gap=35.0) == 3
    assert lanes_of([_thread(nm, [s]) for nm, s in zip(["reader-1", "writer-2", "reader-3"], seq)]) == 2
    assert lanes_of([_thread(f"worker-{k}", [s], session=k) for k, s in enumerate(seq)]) == 3
    assert lanes_of([_thread(f"worker-{k}", [s], open_last=True) for k, s in enumerate(seq)]) == 3
    assert lanes_of([_thread(nm, [s]) for nm, s in zip(["10", "30", "50"], seq)]) == 3  # ids, no kind


def test_a_thread_back_after_its_lane_was_taken_goes_on_in_another_lane():
    """A thread idle with an empty stack may lose its lane; its next calls open a segment in
    another lane, and its earlier calls stay where they were drawn."""
    a = _thread("worker-1", [(0, 10)])
    b = _thread("worker-2", [(20, 30)])
    threads = [a, b]
    lanes = LiveLanes(pack=True, min_lanes=0)
    _arrive(lanes, threads, 0)
    _arrive(lanes, threads, 1)
    assert lanes.n_lanes == 1
    # worker-1 comes back while worker-2 still runs (its stack is not empty)
    b.endi[0], b.stack[0], b.sp = -1, 0, 1
    lanes.note_changes(1, b, np.array([0]))
    a.reserve(1)
    a.func[1], a.start[1], a.end[1], a.depth[1], a.parent[1], a.endi[1] = 0, 25, 28, 0, -1, 2
    a.n = 2
    _arrive(lanes, threads, 0, have=1)
    assert lanes.n_lanes == 2
    assert lanes.lane_of(0, [0, 1]).tolist() == [0, 1]
    assert lanes.lane_of(1, [0]).tolist() == [0]
    assert lanes.lane_name(0, threads) == "worker-1, worker-2" and lanes.lane_name(1, threads) == "worker-1"


def test_many_threads_of_one_kind_at_once_stay_linear():
    """4,096 threads of one kind all running at once (the session's thread limit): a lane
    each, placed in one update without a quadratic scan in Python."""
    n = 4096
    threads = [_thread(f"Thread-{k} (handle)", [(k, 10 ** 6)], open_last=True) for k in range(n)]
    lanes = LiveLanes(pack=True)
    for ti, T in enumerate(threads):
        lanes.note_changes(ti, T, np.arange(T.n))
    lanes.place([(ti, 0) for ti in range(n)], threads, 1.0)
    assert lanes.n_lanes == n and not lanes.packed
    assert lanes.lane_of(n - 1, [0]).tolist() == [n - 1]


def test_drawn_depths_is_the_count_of_ancestors_not_hidden():
    """`layout.live.drawn_depths` (``--hide`` in the live view), batch by batch, against
    the brute-force walk up the parents."""
    from tracevis3d.layout.live_colour import drawn_depths

    rng = np.random.default_rng(3)
    for trial in range(30):
        n = int(rng.integers(1, 400))
        parent = np.full(n, -1, np.int32)
        depth = np.zeros(n, np.int32)
        stack = []
        for i in range(n):  # a random pre-order tree, several roots
            while stack and rng.random() < 0.35:
                stack.pop()
            parent[i] = stack[-1] if stack else -1
            depth[i] = len(stack)
            stack.append(i)
        func = rng.integers(0, 6, n).astype(np.int32)
        hidden = rng.random(6) < 0.4
        drawn = np.zeros(n, np.int32)
        cuts = np.sort(rng.integers(0, n + 1, 3))
        for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, n]):
            drawn_depths(parent, func, hidden, depth, drawn, int(lo), int(hi))
        want = np.zeros(n, np.int32)
        for i in range(n):
            p = parent[i]
            while p >= 0:
                want[i] += not hidden[func[p]]
                p = parent[p]
        assert np.array_equal(drawn, want), trial


def test_each_process_keeps_its_lanes_together_and_names_them():
    """A pool of worker processes, its threads arriving in time order: a new lane goes under
    its process's last lane (the parent's queue feeder under its main thread, not under the
    workers), and with several processes a lane's name carries its process, as the static
    views name them (every worker has a "MainThread")."""
    arrivals = [("MainThread", 1, "MainProcess"), ("MainThread", 2, "ForkProcess-1"),
                ("QueueFeederThread", 1, "MainProcess"), ("MainThread", 3, "ForkProcess-2"),
                ("Thread-1", 1, "MainProcess")]
    threads = []
    for k, (name, pid, process) in enumerate(arrivals):
        T = _thread(name, [(10.0 * k, 10.0 * k + 100.0)], pid=pid)
        T.process = process
        threads.append(T)
    lanes = LiveLanes(pack=True)
    for ti in range(len(threads)):
        _arrive(lanes, threads, ti)
    shown = [lanes.lane_name(int(lane), threads) for lane in lanes.display_order()]
    assert shown == ["MainProcess: MainThread", "MainProcess: QueueFeederThread", "MainProcess: Thread-1",
                     "ForkProcess-1: MainThread", "ForkProcess-2: MainThread"]
    one = LiveLanes(pack=True)  # one process: the names alone
    _arrive(one, threads[:1], 0)
    assert one.lane_name(0, threads[:1]) == "MainThread"


def test_live_layout_stacks_lanes_in_display_order():
    """`LiveLayout` stacks the lanes top to bottom in `LiveLanes.display_order` (lane ids stay
    what the boxes were written with); a lane inserted above others moves them (a relayout)."""
    from tracevis3d.layout.live import LiveLayout, LiveParams

    threads = []
    for k, (name, pid) in enumerate([("MainThread", 1), ("MainThread", 2), ("Feeder", 1)]):
        T = _thread(name, [(10.0 * k, 10.0 * k + 100.0)], pid=pid)
        T.process = f"p{pid}"
        threads.append(T)
    lay = LiveLayout(LiveParams(window_us=200.0))
    for ti in range(2):
        _arrive(lay.lanes, threads, ti)
    lay.need_levels(np.array([3, 3]))
    top1 = float(lay.lane_top(1))
    _arrive(lay.lanes, threads, 2)
    assert lay.lanes.display_order().tolist() == [0, 2, 1]
    assert lay.need_levels(np.array([3, 3, 3]))  # the new lane sits above lane 1: it moved
    tops = [float(lay.lane_top(k)) for k in range(3)]
    assert tops[0] > tops[2] > tops[1] and tops[1] < top1
    h = [float(lay.lane_height(k, lay.levels_of(k))) for k in range(3)]
    assert np.isclose(tops[0] - h[0], tops[2]) and np.isclose(tops[2] - h[2], tops[1])
    assert np.isclose(lay.bottom(3), tops[1] - h[1])


def test_lane_names_that_fit_never_overlap_and_tall_lanes_keep_theirs():
    """84 thin lanes (a browser's threads) piled their names into one block: a name is written
    where it keeps a line's gap from every other, the tallest lanes first."""
    from tracevis3d.layout.live_lanes import names_that_fit

    rng = np.random.default_rng(3)
    heights = rng.uniform(0.2, 3.0, 84)
    heights[[5, 40]] = 6.0  # two deep lanes
    tops = np.cumsum(heights[::-1])[::-1]
    mid = tops - heights / 2
    size = 1.0
    shown = np.array(names_that_fit(mid, heights, size))
    z = np.sort(mid[shown])
    assert np.all(np.diff(z) >= 1.05 * size - 1e-9)
    assert shown[5] and shown[40]
    assert 10 < shown.sum() < 84
    # lanes a name's height or more apart: every name
    assert all(names_that_fit([0.0, 2.0, 4.0], [2.0, 2.0, 2.0], 1.0))


def test_live_colours_group_cpp_names_by_namespace_or_class():
    """Chromium's names have no source file: every call was "C built-ins" grey.  A C++ name
    is grouped by its namespace or class (`live_colour.cpp_group`) and ranked like a module;
    Python's C built-ins and free text stay grey."""
    from tracevis3d.layout.live_colour import OTHER, LiveColouring, cpp_group

    names = ["RunLoop::Run", "RunLoop::RunUntilIdle", "viz::Display::Draw", "ThreadController active",
             "builtins.len", "work (/app/w.py:3)"]
    files = ["", "", "", "", "", "/app/w.py"]
    lines = [-1, -1, -1, -1, -1, 3]
    c = LiveColouring()
    c.slots(names, files, lines)
    c.rank(np.array([5.0, 5.0, 3.0, 9.0, 1.0, 2.0]))
    slots = c.slots(names, files, lines)
    assert slots[0] == slots[1] != OTHER and slots[2] not in (OTHER, slots[0])
    assert slots[3] == OTHER and slots[4] == OTHER and slots[5] != OTHER
    assert [m for m in c.slot_module.values()][:2] == ["RunLoop", "viz"]
    assert cpp_group(None, "std::vector<int>::push_back") == "std" and cpp_group(None, "aten") == ""


def test_a_block_of_one_kinds_lanes_is_named_once():
    """A server's 60 request threads, 4 at a time, pack into 4 lanes that each read
    "15× handle": the live view names the block once, "60× handle in 4 lanes", on its top
    lane at the block's middle, and writes no name on its other lanes; a lane of another kind
    beside it keeps its own name, and a lane listing its few threads is never in a block."""
    from tracevis3d.layout.live_lanes import lane_name_places

    threads = [_thread("MainThread", [(0, 1000)])]
    threads += [_thread(f"Thread-{k + 1} (handle)", [(10 + 15 * k, 10 + 15 * k + 50)]) for k in range(60)]
    lanes = LiveLanes(pack=True, min_lanes=0)
    for ti in range(len(threads)):
        for tj in range(ti):
            lanes.note_changes(tj, threads[tj], np.zeros(0, np.int64))
        _arrive(lanes, threads, ti, gap=1.0)
    assert lanes.n_lanes == 5, [lanes.lane_name(k, threads) for k in range(lanes.n_lanes)]
    names, blocks = lanes.names(threads, 16.0)
    assert blocks == [(lanes.display[1:], "60× handle")]
    assert names[lanes.display[1]] == "60× handle in 4 lanes" and names[lanes.display[0]] == "MainThread"
    mid = [float(-k) for k in range(5)]
    heights = [1.0] * 5
    at, shown = lane_name_places(blocks, [mid[lanes.display.index(k)] for k in range(5)], heights, 0.5)
    top = lanes.display[1]
    assert shown[top] and at[top] == -2.5  # the middle of the block's four lanes
    assert not any(shown[k] for k in lanes.display[2:])
    # two threads of a kind in each lane are listed by name: no block
    few = [_thread(f"w{k}", [(100 * (k // 3) + k % 3, 100 * (k // 3) + k % 3 + 50)]) for k in range(6)]
    lanes = LiveLanes(pack=True, min_lanes=0)
    for ti in range(len(few)):
        _arrive(lanes, few, ti, gap=1.0)
    assert lanes.name_blocks(few) == [], [lanes.lane_name(k, few) for k in range(lanes.n_lanes)]


def test_lanes_running_out_take_the_static_views_tighter_gaps():
    """A server's requests, one every 50 µs, each 400 µs, and the live gap of 1 % of a 1 s
    window (10 ms): a lane was free again only after ~200 later requests had started, and the
    replay of 5,000 of them opened 59 lanes for the first 1,024.  From `MAX_LANES` lanes on, a
    thread that fits none tries the tighter gaps of `select.PACK_GAP_FALLBACK` (as the static
    views do) before a lane is opened for it: the 1,000 requests keep to about that many lanes."""
    from tracevis3d.params.shared import MAX_LANES

    def lanes_for(**kw):
        threads = [_thread(f"Thread-{k + 1} (handle)", [(50.0 * k, 50.0 * k + 400.0)]) for k in range(1000)]
        lanes = LiveLanes(pack=True, min_lanes=0, **kw)
        for ti in range(len(threads)):
            lanes.note_changes(ti, threads[ti], np.arange(threads[ti].n))
            lanes.place([(ti, 0)], threads, lanes.gap(1e6))
        assert sum(len(m) for m in lanes.lane_threads) == 1000
        return lanes.n_lanes

    assert lanes_for(soft_lanes=0) > 150
    assert lanes_for() <= MAX_LANES.default + 1
