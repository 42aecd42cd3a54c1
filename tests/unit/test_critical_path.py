"""The critical path (`tracevis3d.critical_path`): its kernels against brute-force twins, the
walk's path against the longest path of the graph built explicitly, the segments' tiling of
the run, each hand-off rule on small traces whose answer is known, and real recordings."""
from __future__ import annotations

import pathlib

import networkx as nx
import numpy as np
import pytest

from critical_path_twin import (F_JOIN, F_START, innermost_brute, path_graph, random_sync_trace, walk_nodes)
from tracevis3d.analysis.critical_path import HANDOFF, IDLE, RUNNING, WAITING, critical_path
from tracevis3d.analysis.critical_path_handoffs import (HK_FLOW, HK_JOIN, HK_QUEUE, HK_START, HK_SYNC, is_join,
                                                        is_start, queue_method)
from tracevis3d.model import KIND_OTHER, KIND_RELEASE, KIND_WAIT, Trace

REPO = pathlib.Path(__file__).resolve().parents[2]
FORMATS = REPO / "tests" / "data" / "formats"
CP_DATA = REPO / "tests" / "data" / "critical_path"


def assert_tiles(cp) -> None:
    """Segments in time order cover [T0, T1] without gaps or overlaps."""
    assert len(cp) > 0
    assert cp.start[0] == cp.t_first and cp.end[-1] == cp.t_last
    assert np.array_equal(cp.start[1:], cp.end[:-1])
    assert np.all(cp.end >= cp.start)
    on = cp.why != HANDOFF
    assert np.all(cp.end[on] > cp.start[on])  # empty pieces are not written
    assert abs(cp.duration.sum() - cp.span) <= 1e-9 * max(1.0, cp.span)


@pytest.mark.parametrize("seed", range(40))
def test_walk_is_a_longest_path_of_the_graph(seed):
    """The twin: (a) the walk's path is a path of the graph of program order and hand-offs,
    (b) it weighs as much as the longest path (networkx), which is the whole span, (c) its
    segments tile the run."""
    t = random_sync_trace(seed, threads=2 + seed % 4)
    cp = critical_path(t)
    G, order = path_graph(cp)
    assert nx.is_directed_acyclic_graph(G)
    longest = nx.dag_longest_path_length(G, weight="weight")
    path = walk_nodes(cp, order)
    for a, b in zip(path[:-1], path[1:]):
        assert G.has_edge(a, b), (a, b)
    weight = sum(G.edges[a, b]["weight"] for a, b in zip(path[:-1], path[1:]))
    assert weight == pytest.approx(longest, rel=1e-9, abs=1e-9)
    assert longest == pytest.approx(cp.span, rel=1e-9, abs=1e-9)
    assert_tiles(cp)


@pytest.mark.parametrize("seed", range(12))
def test_equal_timestamps_end_and_tile(seed):
    """On a coarse integer grid (equal timestamps everywhere, zero-length hand-offs) the walk
    ends, uses each hand-off at most once and the segments still tile the run."""
    t = random_sync_trace(100 + seed, threads=3 + seed % 3, ints=True)
    cp = critical_path(t)
    assert_tiles(cp)
    taken = cp.meta["pieces"][3]
    taken = taken[taken >= 0]
    assert np.unique(taken).size == taken.size


@pytest.mark.parametrize("seed", range(10))
def test_segments_name_the_innermost_call(seed):
    """Each segment on a thread names the deepest call active there (a scan of every call),
    and why it is on the path follows from that call."""
    t = random_sync_trace(200 + seed)
    cp = critical_path(t)
    woken = set((cp.meta["intervals"]["key"][cp.meta["intervals"]["key"] % 2 == 0] // 2).tolist())
    for k in range(len(cp)):
        if cp.why[k] == HANDOFF:
            continue
        mid = 0.5 * (cp.start[k] + cp.end[k])
        c = innermost_brute(t, int(cp.thread[k]), mid)
        assert cp.call[k] == c
        want = IDLE if c < 0 else WAITING if t.kind[c] == KIND_WAIT and c not in woken else RUNNING
        assert cp.why[k] == want


@pytest.mark.parametrize("seed", range(10))
def test_woken_intervals_brute_force(seed):
    """Rules 1 (sync objects) and 6 (flows) recomputed by brute force: per woken wait, the
    latest release of a correspondence whose time finds the waiter in that very wait call;
    per root call, the latest flow source starting in the time before it."""
    from tracevis3d.analysis.synchronisation import synchronisation

    t = random_sync_trace(300 + seed, threads=3)
    sync = synchronisation(t)
    cp = critical_path(t, sync)
    iv = cp.meta["intervals"]
    want: dict = {}
    for w, r in zip(sync.wait_call.tolist(), sync.release_call.tolist()):
        tr = t.start[r]
        c = innermost_brute(t, int(t.thread[w]), tr)
        if c >= w and c < t.end_index[w] and t.kind[c] == KIND_WAIT and t.start[c] <= tr <= t.end[c]:
            want[2 * c] = max(want.get(2 * c, -np.inf), tr)
    roots = np.flatnonzero(t.depth == 0)
    for f, g in zip(t.flow_from.tolist(), t.flow_to.tolist()):
        r = g  # flows reach root calls in these traces
        same = roots[(t.thread[roots] == t.thread[r]) & (roots < r)]
        ws = t.end[same].max() if same.size else cp.t_first
        if ws <= t.start[f] <= t.start[r] and t.thread[f] != t.thread[r]:
            want[2 * r + 1] = max(want.get(2 * r + 1, -np.inf), t.start[f])
    got = dict(zip(iv["key"].tolist(), iv["tr"].tolist()))
    for key, tr in want.items():  # every brute-force interval is woken, by a release at least as late
        assert key in got, key
        assert got[key] >= tr
    for key, kind, tr in zip(iv["key"].tolist(), iv["kind"].tolist(), iv["tr"].tolist()):
        if kind in (HK_SYNC, HK_FLOW):
            assert key in want and want[key] == tr


def test_innermost_timeline_twin():
    """`innermost_timeline` tiles [t0, t1] per thread and names the deepest call (scan)."""
    from tracevis3d.kernels.critical_path import innermost_timeline

    for seed in range(8):
        t = random_sync_trace(400 + seed, threads=3)
        r = t.thread_ranges()
        t0, t1 = float(t.start.min()), float(t.end.max())
        ptr, a, b, c = innermost_timeline(t.start, t.end, r[:, 0].copy(), r[:, 1].copy(), t0, t1)
        for k in range(t.n_threads):
            A, B, C = a[ptr[k]:ptr[k + 1]], b[ptr[k]:ptr[k + 1]], c[ptr[k]:ptr[k + 1]]
            assert A[0] == t0 and B[-1] == t1 and np.array_equal(A[1:], B[:-1])
            for x, y, z in zip(A, B, C):
                assert z == innermost_brute(t, k, 0.5 * (x + y))


def _trace(calls, threads, objects=None, flows=()):
    """A trace from rows (thread, parent, start, end, name, kind[, objects])."""
    names = sorted({c[4] for c in calls})
    objs = [list(c[6]) if len(c) > 6 else [] for c in calls]
    ptr = np.zeros(len(calls) + 1, np.int64)
    ptr[1:] = np.cumsum([len(o) for o in objs])
    tables = dict(obj_ptr=ptr, obj_ids=np.array([x for o in objs for x in o], np.int32),
                  object_names=list(objects or []))
    if flows:
        f = np.array(flows, np.int32)
        tables.update(flow_id=np.arange(len(f), dtype=np.int64), flow_from=f[:, 0].copy(), flow_to=f[:, 1].copy(),
                      flow_cat=np.zeros(len(f), np.int32), flow_cat_names=[""])
    return Trace.from_arrays([names.index(c[4]) for c in calls], [c[2] for c in calls], [c[3] for c in calls],
                             [c[1] for c in calls], [c[0] for c in calls], function_names=names,
                             thread_names=threads, kind=np.array([c[5] for c in calls], np.uint8), **tables).check()


def test_lock_handoff_thread_start_and_join():
    """Main starts a worker, waits on a lock the worker releases, then joins it: the path goes
    main → (start) → worker → (its end: join) → main; without the join, main → (start) →
    worker → (lock release) → main."""
    O, W, R = KIND_OTHER, KIND_WAIT, KIND_RELEASE
    rows = [
        (0, -1, 0, 100, "main", O),
        (0, 0, 10, 14, "Thread.start", O),
        (0, 0, 20, 50, "Lock.acquire", W, [0]),
        (0, 0, 55, 80, "Thread.join", W),
        (1, -1, 12, 70, "run", O),
        (1, 4, 30, 40, "work", O),
        (1, 4, 45, 46, "Lock.release", R, [0]),
    ]
    cp = critical_path(_trace(rows, ["main", "worker"], ["lock"]))
    assert_tiles(cp)
    h = cp.handoffs
    assert cp.handoff_kind[h].tolist() == [HK_START, HK_JOIN]
    assert cp.start[h].tolist() == [10.0, 70.0] and cp.end[h].tolist() == [12.0, 80.0]
    assert cp.meta["pieces"][0].tolist() == [0, 1, 0]
    assert cp.n_handoffs_known == 3  # the lock's hand-off too, not on the path
    rows[3] = (0, 0, 55, 80, "sleep", W)  # no join: the lock's release is how main goes on
    cp = critical_path(_trace(rows, ["main", "worker"], ["lock"]))
    assert_tiles(cp)
    h = cp.handoffs
    assert cp.handoff_kind[h].tolist() == [HK_START, HK_SYNC]
    assert cp.start[h].tolist() == [10.0, 45.0] and cp.end[h].tolist() == [12.0, 50.0]
    sleep = (cp.why == WAITING) & (cp.start == 55.0)
    assert sleep.sum() == 1 and cp.end[sleep][0] == 80.0  # the sleep: waiting with no known waker
    text = cp.summary()
    assert "of the wall time on main" in text and "of the wall time on worker" in text


def test_release_inside_own_wait_runs_until_it():
    """A thread that releases inside its own wait (``Condition.wait``'s ``_release_save``)
    runs until that release: the path reaches B at its release (20) and goes back through
    B's wait as running, not through the wake of that wait (50, later)."""
    O, W, R = KIND_OTHER, KIND_WAIT, KIND_RELEASE
    t = _trace([
        (0, -1, 0, 100, "a_main", O),
        (0, 0, 5, 30, "Lock.acquire", W, [0]),
        (1, -1, 0, 60, "b_main", O),
        (1, 2, 10, 50, "Condition.wait", W, [1]),
        (1, 3, 20, 21, "Lock.release", R, [0]),
        (2, -1, 0, 70, "c_main", O),
        (2, 5, 45, 46, "Condition.notify", R, [1]),
    ], ["A", "B", "C"], ["lock", "cond"])
    cp = critical_path(t)
    assert_tiles(cp)
    assert cp.meta["pieces"][0].tolist() == [1, 0]
    h = cp.handoffs
    assert cp.start[h].tolist() == [20.0] and cp.end[h].tolist() == [30.0]
    in_wait = (cp.thread == 1) & (cp.start == 10.0)
    assert in_wait.sum() == 1 and cp.end[in_wait][0] == 20.0
    assert cp.why[in_wait][0] == RUNNING and t.function_names[t.func[cp.call[in_wait][0]]] == "Condition.wait"


def test_queue_by_type_and_flows():
    """A C queue's get with no object woken by its type's put; a flow into a root call wakes
    the time before it only when its source starts after the previous root ended."""
    O, W, R = KIND_OTHER, KIND_WAIT, KIND_RELEASE
    t = _trace([
        (0, -1, 0, 100, "main", O),
        (0, 0, 30, 31, "_queue.SimpleQueue.put", R),
        (0, 0, 60, 61, "cudaLaunchKernel", O),
        (0, 0, 62, 63, "cudaLaunchKernel", O),
        (1, -1, 0, 50, "_worker", O),
        (1, 4, 5, 35, "_queue.SimpleQueue.get", W),
        (2, -1, 64, 90, "kernel_a", O),
        (2, -1, 95, 120, "kernel_b", O),
    ], ["main", "worker", "stream 7"], flows=[(2, 6), (3, 7)])
    cp = critical_path(t)
    assert_tiles(cp)
    iv = cp.meta["intervals"]
    kinds = dict(zip(iv["key"].tolist(), iv["kind"].tolist()))
    assert kinds[2 * 5] == HK_QUEUE
    assert kinds[2 * 6 + 1] == HK_FLOW  # launched at 60, after the stream's previous work (none, T0)
    assert 2 * 7 + 1 not in kinds  # launched at 62, while kernel_a still ran: it waited on the stream
    # the path ends on the stream at 120, goes back through kernel_a, then to the launch at 60
    h = cp.handoffs
    assert cp.handoff_kind[h].tolist() == [HK_FLOW] and cp.start[h][0] == 60.0 and cp.end[h][0] == 64.0


def test_profiler_span_threads_left_out():
    """A thread whose calls are all a profiler's span (category Trace) is not on the path."""
    O = KIND_OTHER
    t = _trace([(0, -1, 5, 50, "op", O), (1, -1, 0, 100, "PyTorch Profiler (0)", O)], ["cpu", "Spans"])
    t.function_cats = ["" if n == "op" else "Trace" for n in t.function_names]
    cp = critical_path(t)
    assert cp.threads.tolist() == [0] and cp.t_first == 5.0 and cp.t_last == 50.0


def test_names():
    assert is_join("Thread.join (/usr/lib/python3.11/threading.py:1087)") and is_join("pthread_join")
    assert is_join("std::thread::join") and not is_join("str.join") and not is_join("_path_join (<frozen>:126)")
    assert is_start("_thread.start_new_thread") and is_start("Thread.start (threading.py:945)")
    assert not is_start("Process.start") and not is_start("ThreadPoolExecutor.submit")
    assert queue_method("_queue.SimpleQueue.get") == ("_queue.SimpleQueue", "get")
    assert queue_method("Queue.put (/usr/lib/python3.11/queue.py:122)") == ("Queue", "put")
    assert queue_method("dict.get") is None and queue_method("list.append") is None
    assert (F_START, F_JOIN) == (3, 4)


def test_bad_input():
    with pytest.raises(TypeError, match="needs a Trace"):
        critical_path("run.json")


def _real(path):
    import tracevis3d

    t = tracevis3d.load(str(path))
    return t, critical_path(t)


@pytest.mark.parametrize("name", ["recorded/py-spy", "recorded/uftrace", "recorded/chromium", "perfetto"])
def test_tiles_the_run_on_recorded_formats(name):
    """The covering property on real recordings of other tools (each folder's files that load)."""
    import tracevis3d

    folder = FORMATS / name
    files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.endswith((".md", ".py", ".txt")))
    seen = 0
    for p in files[:4]:
        try:
            t = tracevis3d.load(str(p))
        except (tracevis3d.TraceError, ValueError):
            continue
        if not len(t):
            continue
        assert_tiles(critical_path(t))
        seen += 1
    if not seen:
        pytest.skip(f"no trace of {name} loads here")


def test_the_pipeline_recording():
    """examples/threads_pipeline.py recorded (tests/data/critical_path): the path ends on
    MainThread (it verifies the files last), reaches every kind of hand-off the program makes
    (a thread's start, a lock or condition, the executor's SimpleQueue, a join) and names the
    signing (``pbkdf2_hmac``) and the writer's slow disk (``time.sleep``, waiting with no known
    waker) as where the time went."""
    from tracevis3d.analysis.critical_path import HANDOFF_KINDS

    t, cp = _real(CP_DATA / "threads_pipeline.json.gz")
    assert_tiles(cp)
    names = t.thread_names
    assert names[cp.thread[-1]] == "MainThread"
    kinds = {HANDOFF_KINDS[k] for k in cp.handoff_kind[cp.handoffs]}
    assert {"thread start", "sync object", "queue (by type)", "join"} <= kinds, kinds
    fs = cp.by_function()
    top = {t.function_names[f].split(" (")[0] for f in np.argsort(-fs)[:3]}
    assert {"_hashlib.pbkdf2_hmac", "time.sleep"} <= top, top
    sleep = t.function_names.index("time.sleep")
    assert set(cp.why[(cp.call >= 0) & (t.func[np.maximum(cp.call, 0)] == sleep)].tolist()) == {WAITING}
    text = cp.summary()
    assert "of the wall time on MainThread" in text and "pbkdf2_hmac" in text


def test_realdata_viztracer_multithread(realdata):
    t, cp = _real(realdata / "viztracer-examples" / "multithread.json")
    assert_tiles(cp)
    from tracevis3d.analysis.critical_path import HANDOFF_KINDS

    assert [HANDOFF_KINDS[k] for k in cp.handoff_kind[cp.handoffs]] == ["thread start", "join"]


@pytest.mark.parametrize("name", ["control", "test"])
def test_realdata_pytorch_pair(realdata, name):
    """PyTorch profiler traces: the profiler's own span is left out, the path tiles the run and
    takes CPU → GPU launches (flows) and GPU → CPU synchronisations."""
    from tracevis3d.analysis.critical_path_handoffs import HK_DEVICE

    t, cp = _real(realdata / "hta-trace-diff" / f"{name}.json.gz")
    assert_tiles(cp)
    assert "PyTorch Profiler" not in {t.thread_names[k] for k in cp.threads}
    kinds = set(cp.handoff_kind[cp.handoffs].tolist())
    assert HK_FLOW in kinds and HK_DEVICE in kinds


def test_end_walks_back_from_a_chosen_point():
    t = random_sync_trace(7, threads=3)
    whole = critical_path(t)
    mid = 0.5 * (whole.t_first + whole.t_last)
    cp = critical_path(t, end=(1, mid))
    assert cp.t_last == mid and cp.thread[-1] == 1
    assert_tiles(cp)
    with pytest.raises(ValueError, match="not a chosen thread"):
        critical_path(t, end=(1, whole.t_last + 1e6))


def test_flags_and_params():
    """--critical-path on both commands (off by default), from the one declaration."""
    from tracevis3d.cli import make_parser
    from tracevis3d.cli.common import view_params

    for cmd, view in (("render-icicle", "icicle"), ("render-threads", "threads")):
        on = view_params(view, make_parser().parse_args([cmd, "t.json", "-o", "x.png", "--critical-path"]))
        off = view_params(view, make_parser().parse_args([cmd, "t.json", "-o", "x.png"]))
        assert on.critical_path is True and off.critical_path is False
        assert type(on).from_dict(on.to_dict()).critical_path is True


def test_layouts_light_the_path():
    """The icicle and the thread view with the path on: its ribbon and hand-off arcs as tubes
    (one arc per hand-off shown), the calls off it pale, its shares in the legend; off: none
    of it (the figure as before)."""
    import tracevis3d
    from tracevis3d.layout.critical_path import PATH_MATERIAL, path_of
    from tracevis3d.layout.icicle import icicle_layout
    from tracevis3d.params.icicle import IcicleParams
    from tracevis3d.layout.threads import threads_layout
    from tracevis3d.layout.threads_params import ThreadsParams

    t = tracevis3d.load(str(CP_DATA / "threads_pipeline.json.gz"))
    cp = path_of(t)
    for spec, arcs in ((icicle_layout(t, IcicleParams(critical_path=True, resolution=(960, 540))), cp.handoffs.size),
                       (threads_layout(t, ThreadsParams(critical_path=True, resolution=(960, 540))), None)):
        by = {lay.name: lay for lay in spec.layers}
        assert "critical_path" in by and PATH_MATERIAL in by["critical_path"].materials
        assert (by["critical_path"].attributes["path_part"] == 1).any()  # thick: where it runs
        if arcs is not None:
            assert len(by["critical_path_handoffs"]) == arcs
        assert any(x.startswith("critical path:") for x in spec.labels.texts)
        assert any("pale: not on the critical path" in x for x in spec.labels.texts)
    plain = icicle_layout(t, IcicleParams(resolution=(960, 540)))
    assert not any("critical" in lay.name for lay in plain.layers)
    assert not any("critical path" in x for x in plain.labels.texts)
