"""Threads that never run at once share a lane (`layout.select.pack_lanes`): a server's thread
per request, a pool that starts a thread per task.  The packing against a brute-force twin,
and the selection it makes on a trace of short threads (lanes contiguous, parents in their
lane, every thread shown, the title counting threads, not lanes)."""
import json

import numpy as np
import pytest

import tracevis3d
import tracevis3d.io
from tracevis3d.params.icicle import IcicleParams
from tracevis3d.layout.select import PACK_MIN_LANES, pack_lanes, packed_lane_name, select_calls, thread_kind


def brute_pack(kinds, first, last, gap):
    """First fit, written plainly: each lane goes to the first row (in the order rows were
    opened) of its kind all of whose lanes ended ``gap`` before it starts."""
    rows = []  # [kind, [lane, ...]]
    out = []
    for k in range(len(kinds)):
        for r, (kind, members) in enumerate(rows):
            if kind == kinds[k] and all(last[m] + gap <= first[k] for m in members):
                members.append(k)
                out.append(r)
                break
        else:
            rows.append((kinds[k], [k]))
            out.append(len(rows) - 1)
    return np.array(out)


@pytest.mark.parametrize("seed", range(20))
def test_pack_lanes_matches_its_brute_force_twin(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    first = np.sort(rng.uniform(0, 100, n)) if seed % 2 else rng.uniform(0, 100, n)
    last = first + rng.exponential(8.0, n)
    kinds = [(int(rng.integers(0, 2)), f"k{int(rng.integers(0, 3))}") for _ in range(n)]
    gap = float(rng.uniform(0, 2))
    row = pack_lanes(kinds, first, last, gap)
    assert np.array_equal(row, brute_pack(kinds, first, last, gap))
    for r in np.unique(row):  # a row holds one kind, and its lanes never overlap (with the gap)
        m = np.flatnonzero(row == r)
        assert len({kinds[k] for k in m}) == 1
        order = m[np.argsort(first[m])]
        if seed % 2:  # lanes in time order: each row's lanes follow one another
            assert np.all(first[order][1:] >= last[order][:-1] + gap - 1e-12)
    assert sorted(set(row.tolist())) == list(range(int(row.max()) + 1))


def test_thread_kind_and_the_packed_name():
    assert thread_kind("Thread-12 (process_request_thread)") == thread_kind("Thread-3 (process_request_thread)")
    assert thread_kind("Thread-12 (worker)") != thread_kind("Thread-12 (handler)")
    assert thread_kind("ThreadPoolExecutor-0_3") == thread_kind("ThreadPoolExecutor-1_0")
    # threads named by their ids (catapult's tall_trace: "10", "30") are no kind
    assert thread_kind("10") != thread_kind("30") and thread_kind("") == ""
    # the packed name: what the threads run, else their name without the number that tells them apart
    from tracevis3d.layout.select import packed_name_of

    assert packed_name_of(["Thread-3 (process_request_thread)"] * 4) == "4× process_request_thread"
    assert packed_name_of(["Task-2", "Task-7"]) == "2× Task"
    assert packed_name_of(["worker_12", "worker_3"]) == "2× worker"
    assert packed_name_of(["ThreadPoolExecutor-0_3", "ThreadPoolExecutor-0_4"]) == "2× ThreadPoolExecutor-…"
    assert packed_name_of(["pool-1-thread-2", "pool-1-thread-5"]) == "2× pool-…-thread"


def _short_threads_trace(path, n_threads=12, per_thread=3, overlap=False):
    """A Chrome trace: a main thread over the whole run and ``n_threads`` request threads one
    after another (``overlap``: all at once), each a request call with children."""
    ev = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "MainThread"}},
          {"ph": "X", "name": "serve", "pid": 1, "tid": 1, "ts": 0, "dur": 100 * n_threads + 100}]
    for k in range(n_threads):
        tid = 100 + k
        ev.append({"ph": "M", "name": "thread_name", "pid": 1, "tid": tid,
                   "args": {"name": f"Thread-{k + 1} (process_request_thread)"}})
        t0 = 10 if overlap else 10 + 100 * k
        ev.append({"ph": "X", "name": "process_request_thread", "pid": 1, "tid": tid, "ts": t0, "dur": 80})
        for j in range(per_thread):
            ev.append({"ph": "X", "name": f"step{j}", "pid": 1, "tid": tid, "ts": t0 + 5 + 20 * j, "dur": 15})
    path.write_text(json.dumps({"traceEvents": ev}))
    return tracevis3d.load(path)


def test_short_threads_share_lanes(tmp_path):
    trace = _short_threads_trace(tmp_path / "server.json")
    sel = select_calls(trace, IcicleParams().validate())
    assert sel.lane_members is not None and len(sel.lane_names) == 2, sel.lane_names
    assert sorted(sel.threads.tolist()) == list(range(trace.n_threads))
    assert sel.lane_names[1] == packed_lane_name(sel.trace, sel.lane_members[1]) == "12× process_request_thread"
    assert np.all(np.diff(sel.lane) >= 0)  # lanes contiguous, in lane order
    has = sel.parent >= 0
    assert np.all(sel.parent[has] < np.flatnonzero(has))  # pre-order: a parent before its children
    assert np.all(sel.lane[sel.parent[has]] == sel.lane[has])  # ... in the child's lane
    assert np.array_equal(sel.trace.parent[sel.idx[has]], sel.idx[sel.parent[has]])
    lot = sel.lane_of_thread()
    assert np.array_equal(lot[sel.trace.thread[sel.idx]], sel.lane)
    # a lane's threads follow one another in time
    for m in sel.lane_members:
        ends = [(float(trace.start[trace.thread == t].min()), float(trace.end[trace.thread == t].max())) for t in m]
        assert all(a[1] <= b[0] for a, b in zip(ends, ends[1:]))
    # the option off, or too few lanes to pack, or threads that overlap: a lane per thread
    off = select_calls(trace, IcicleParams(pack_threads=False).validate())
    assert off.lane_members is None and len(off.lane_names) == trace.n_threads
    few = select_calls(_short_threads_trace(tmp_path / "few.json", n_threads=PACK_MIN_LANES - 1),
                       IcicleParams().validate())
    assert few.lane_members is None
    busy = select_calls(_short_threads_trace(tmp_path / "busy.json", overlap=True), IcicleParams().validate())
    assert busy.lane_members is None


def test_the_icicle_counts_threads_and_says_what_a_packed_lane_is(tmp_path):
    from tracevis3d.layout.icicle import icicle_layout
    from tracevis3d.layout.select import PACKED_NOTE

    trace = _short_threads_trace(tmp_path / "server.json")
    spec = icicle_layout(trace)
    assert "13 threads" in spec.meta["title"], spec.meta["title"]
    assert spec.meta["lane_names"] == ["MainThread", "12× process_request_thread"]
    assert PACKED_NOTE in spec.labels.texts


def test_pack_lanes_of_many_threads():
    """20,000 threads of one kind, all at once (a hostile trace): one row each, the first
    fitting row found in a min-tree (n log n; a scan of every open row per thread, 2·10^8
    steps, took minutes)."""
    n = 20_000
    row = pack_lanes([("p", "Thread-#")] * n, np.zeros(n), np.ones(n), 0.01)
    assert np.array_equal(row, np.arange(n))
    row = pack_lanes([("p", "Thread-#")] * n, np.arange(n) * 2.0, np.arange(n) * 2.0 + 1.0, 0.5)
    assert (row == 0).all()


def _request_threads(n: int, every_us: float = 50.0, dur_us: float = 400.0):
    """A server's ``n`` threads of one request each, one started every ``every_us``, each
    ``dur_us`` long (8 at once): three calls a thread."""
    ev = []
    for k in range(n):
        tid, t0 = 1000 + k, k * every_us
        ev.append({"ph": "M", "pid": 1, "tid": tid, "name": "thread_name",
                   "args": {"name": f"Thread-{k + 1} (handle)"}})
        ev.append({"ph": "X", "pid": 1, "tid": tid, "ts": t0, "dur": dur_us, "name": "handle (app.py:10)"})
        ev.append({"ph": "X", "pid": 1, "tid": tid, "ts": t0 + 10, "dur": 100.0, "name": "_thread.lock.acquire"})
        ev.append({"ph": "X", "pid": 1, "tid": tid, "ts": t0 + 150, "dur": 100.0, "name": "render (app.py:20)"})
    return tracevis3d.io.load_bytes(json.dumps({"traceEvents": ev}).encode(), source="requests")


def test_many_short_threads_all_fit_the_lanes_with_a_tighter_gap():
    """3,000 request threads, 8 at once: at the default gap (1 % of the axis) they take 36
    rows, and the 24 lanes showed 1,848 of them (1,152 left out); a tighter gap
    (`PACK_GAP_FALLBACK`) fits all in the lanes.  The thread view's top icicle of a packed
    section is one lane."""
    from tracevis3d.layout.select import PACK_GAP_FRAC
    from tracevis3d.layout.threads import threads_layout
    from tracevis3d.params.threads import ThreadsParams

    trace = _request_threads(3000)
    params = IcicleParams().validate()
    sel = select_calls(trace, params)
    assert sel.n_threads_left_out == 0 and len(sel.lane_names) <= params.max_lanes
    assert sum(len(m) for m in sel.lane_members) == 3000
    # (the default gap alone would not have fitted them)
    rng = trace.thread_ranges()
    first, last = trace.start[rng[:, 0]], trace.end[rng[:, 1] - 1]
    span = float(last.max() - first.min())
    assert pack_lanes([("p", "Thread-# (handle)")] * 3000, first, last, PACK_GAP_FRAC * span).max() + 1 > 24
    spec = threads_layout(trace, ThreadsParams(resolution=(960, 540)).validate())
    assert "3000 threads" in spec.meta["title"] and " of " not in spec.meta["title"], spec.meta["title"]
    # the top icicle's name under its axis is one (its three rows' names stood on one spot)
    at = [tuple(np.round(p, 4)) for p, k in zip(spec.labels.anchors, spec.labels.kind) if k == "lane"]
    assert len(at) == len(set(at))


def test_lanes_of_one_kind_are_named_once_as_a_block():
    """3,000 request threads packed into about 20 lanes: the icicle named each "150× handle",
    twenty times over, and so did the thread view's ring and legend.  Now the block is named
    once, counting all its threads and lanes (`lane_blocks.lane_name_runs`): a lane name beside its
    middle with a bracket the block's height in the icicle (where a call named in one of its
    lanes is not named again in the others over the same stretch: "150× app.handle" stood in
    every row), one name on the ring and one legend
    row in the thread view (where the top icicle's lane, one of them, keeps its own name)."""
    from tracevis3d.layout.icicle import icicle_layout
    from tracevis3d.layout.lane_blocks import block_name, lane_name_runs
    from tracevis3d.layout.threads import threads_layout
    from tracevis3d.params.threads import ThreadsParams

    trace = _request_threads(3000)
    sel = select_calls(trace, IcicleParams().validate())
    runs = lane_name_runs(sel)
    assert len(runs) == 1, runs
    a, b, name = runs[0]
    assert (a, b) == (0, len(sel.lane_names) - 1) and b >= 10
    assert name == "3000× handle" and block_name(runs[0]) == f"3000× handle in {b + 1} lanes"
    spec = icicle_layout(trace, IcicleParams(resolution=(1280, 720)).validate())
    lane_texts = [t for t, k in zip(spec.labels.texts, spec.labels.kind) if k == "lane"]
    assert lane_texts == [name], lane_texts
    # the same call over the same stretch is named once in the block, not in each of its lanes
    handle = [t for t, k in zip(spec.labels.texts, spec.labels.kind) if t.endswith("app.handle") and k != "legend"]
    assert len(handle) == 1, handle
    axis = next(lay for lay in spec.layers if lay.name == "axis")
    upright = axis.scales[:, 2] > 50 * axis.scales[:, 0]  # the bracket (a tick is a few pixels long)
    assert upright.sum() == 1, axis.scales
    spec = threads_layout(trace, ThreadsParams(resolution=(1280, 720)).validate())
    texts = list(spec.labels.texts)
    whole = block_name(runs[0])
    assert sum(whole in t for t in texts) == 2, [t for t in texts if "handle" in t]  # the ring and the legend
    # and the top icicle's lane, one of the block, under its own name (on the ring and under its axis)
    assert sum(t.endswith("× handle") for t in texts) == 2, [t for t in texts if "handle" in t]


def test_a_comparison_side_shows_a_section_of_request_threads(tmp_path):
    """Each side shows the section of threads that does the work (`select.thread_sections`)
    in its one lane; a thread of A that does not exist is an error naming the parameter."""
    from tracevis3d.layout.compare import CompareParams, compare_layout

    a = _short_threads_trace(tmp_path / "a.json", n_threads=12, per_thread=4)
    b = _short_threads_trace(tmp_path / "b.json", n_threads=10, per_thread=4)
    spec = compare_layout(tracevis3d.compare(a, b))
    assert spec.meta["side_lanes"] == ["12× process_request_thread", "10× process_request_thread"]
    off = compare_layout(tracevis3d.compare(a, b), CompareParams(pack_threads=False).validate())
    assert "×" not in " ".join(off.meta["side_lanes"])
    with pytest.raises(ValueError, match="thread_a: no thread named 'nope'"):
        compare_layout(tracevis3d.compare(a, b), CompareParams(thread_a="nope").validate())


def test_thread_labels_counted_once_say_the_same():
    """`Trace.thread_label` with the counts a figure makes once (`thread_name_counts`) says
    what it says counting itself: the process in front where a name is ambiguous."""
    t = tracevis3d.synthetic(300, threads=3, seed=1)
    t.thread_names = ["MainThread", "MainThread", "worker"]
    t.process_names = ["pool-1", "pool-2", "pool-1"]
    counts = t.thread_name_counts()
    for n_shown in (1, 3):
        assert [t.thread_label(k, n_shown, counts) for k in range(3)] == [t.thread_label(k, n_shown) for k in range(3)]
    assert t.thread_label(0, 1) == "pool-1: MainThread" and t.thread_label(2, 1) == "worker"


def test_a_figure_of_few_lanes_shares_them_by_name(tmp_path):
    """With few lanes (`PACK_MIN_LANES` or fewer), the icicle still puts threads of one kind
    that run one after another in one lane (three request threads do not leave two thirds
    of the frame empty), but each keeps its name: the lane is named by its first thread and
    every later one carries a tag, a white plate at its first call's start on the lane's
    base with its name (kind ``lane``) that no call's name covers.  A thread too short for
    its tag (`select._tag_share`: its name's width in pixels) keeps a lane of its own; the other views (the option's
    default in `select_calls`) do not share lanes of few."""
    from tracevis3d.layout.icicle import icicle_layout
    from tracevis3d.layout.select import PACKED_NAMED_NOTE, PACKED_NOTE, _tag_share

    trace = _short_threads_trace(tmp_path / "three.json", n_threads=3)
    assert select_calls(trace, IcicleParams().validate()).lane_members is None
    sel = select_calls(trace, IcicleParams().validate(), window_first=True, name_members=True)
    assert sel.lane_names == ["MainThread", "Thread-1 (process_request_thread)"]
    assert sel.member_named.tolist() == [False, True] and len(sel.lane_members[1]) == 3
    spec = icicle_layout(trace)
    assert spec.meta["lane_names"] == sel.lane_names and "4 threads" in spec.meta["title"]
    lab = spec.labels
    plates = spec.layer("member_plates")
    assert len(plates) == 2 and spec.materials["TV3D_name_plate"].color == (1.0, 1.0, 1.0, 1.0)
    tags = {lab.texts[j]: j for j in range(len(lab)) if lab.kind[j] == "lane" and lab.align[j] == 0}  # left-aligned
    assert sorted(tags) == ["Thread-2 (process_request_thread)", "Thread-3 (process_request_thread)"], lab.texts
    x0 = plates.positions[:, 0] - plates.scales[:, 0] / 2
    x1 = plates.positions[:, 0] + plates.scales[:, 0] / 2
    z0 = plates.positions[:, 2] - plates.scales[:, 2] / 2
    z1 = plates.positions[:, 2] + plates.scales[:, 2] / 2
    for k, name in enumerate(sorted(tags)):
        tid = 100 + int(name[7]) - 1
        t = trace.thread_names.index(name)
        start = float(trace.start[trace.thread == t].min())
        assert np.isclose(x0[k], (start - spec.meta["t0"]) * spec.meta["world_per_us"], atol=1e-6), tid
        assert np.isclose(z0[k], spec.meta["lane_z"][1])  # on the lane's base
        a = lab.anchors[tags[name]]
        assert x0[k] < a[0] < x1[k] and z0[k] < a[2] < z1[k] and a[1] < plates.positions[k, 1]  # in front
    for j in range(len(lab)):  # no call's name on a tag
        if lab.kind[j] in ("call", "run", "row", "group"):
            a = lab.anchors[j]
            assert not np.any((x0 < a[0]) & (a[0] < x1) & (z0 < a[2]) & (a[2] < z1)), lab.texts[j]
    legend = " ".join(lab.texts[j] for j in range(len(lab)) if lab.kind[j] == "legend")  # lines wrapped
    assert PACKED_NAMED_NOTE in legend and PACKED_NOTE not in legend, legend
    # a thread too short for its tag keeps its own lane
    short = json.loads((tmp_path / "three.json").read_text())
    for e in short["traceEvents"]:
        if e.get("tid") == 102 and e["ph"] == "X":
            e["ts"], e["dur"] = 210 + 0.2 * (e["ts"] - 210), 0.2 * e["dur"]  # 16 µs of 400
    (tmp_path / "short.json").write_text(json.dumps(short))
    short = tracevis3d.load(tmp_path / "short.json")
    t2 = short.thread_names.index("Thread-2 (process_request_thread)")
    assert 16 < _tag_share(short, [t2], 4, IcicleParams().validate())[0] * 400
    sel = select_calls(short, IcicleParams().validate(), window_first=True, name_members=True)
    assert sel.lane_names == ["MainThread", "Thread-1 (process_request_thread)", "Thread-3 (process_request_thread)"]


def test_short_names_share_a_lane_in_a_short_stretch(tmp_path):
    """The room a thread needs to share a lane by name is its tag's, in pixels: three workers
    named ``deep300``.. that each run 10 % of the figure's time (the main thread spent the
    rest starting them) share one lane, each tagged; with names as long as a request
    thread's, the same stretches are too short and each keeps its lane."""
    from tracevis3d.layout.icicle import icicle_layout

    def trace(names):
        ev = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "MainThread"}},
              {"ph": "X", "name": "main", "pid": 1, "tid": 1, "ts": 0, "dur": 400}]
        for k, name in enumerate(names):
            ev += [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 10 + k, "args": {"name": name}},
                   {"ph": "X", "name": "work", "pid": 1, "tid": 10 + k, "ts": 50 + 120 * k, "dur": 40},
                   {"ph": "X", "name": "walk", "pid": 1, "tid": 10 + k, "ts": 55 + 120 * k, "dur": 30}]
        path = tmp_path / f"{len(names[0])}.json"
        path.write_text(json.dumps({"traceEvents": ev}))
        return tracevis3d.load(path)

    short = trace(["deep300", "deep600", "deep900"])
    sel = select_calls(short, IcicleParams().validate(), window_first=True, name_members=True)
    assert sel.lane_names == ["MainThread", "deep300"] and sel.member_named.tolist() == [False, True]
    lab = icicle_layout(short).labels
    tags = [t for t, k in zip(lab.texts, lab.kind) if k == "lane"]
    assert {"deep600", "deep900"} <= set(tags), tags
    long = trace([f"Thread-{k} (process_request_thread)" for k in (1, 2, 3)])
    sel = select_calls(long, IcicleParams().validate(), window_first=True, name_members=True)
    assert len(sel.lane_names) == 4 and sel.member_named is None, sel.lane_names


def test_a_cutaway_finds_a_thread_that_shares_a_lane_by_its_name(tmp_path):
    """``--cutaway lane:NAME`` takes a thread's own name where it shares a lane (the lane is
    named by its first thread): the cutaway of "Thread-3 (process_request_thread)" is the
    lane's, as is that of its first thread; an unknown name is still a clear error."""
    from tracevis3d.layout.icicle import icicle_layout

    trace = _short_threads_trace(tmp_path / "three.json", n_threads=3)
    first = icicle_layout(trace, IcicleParams(cutaway="lane:Thread-1 (process_request_thread)"))
    third = icicle_layout(trace, IcicleParams(cutaway="lane:Thread-3 (process_request_thread)"))
    assert third.meta["cutaway"]["scale"] == first.meta["cutaway"]["scale"]
    with pytest.raises(ValueError, match="no lane 'Thread-9'"):
        icicle_layout(trace, IcicleParams(cutaway="lane:Thread-9"))


def test_a_cutaway_takes_a_block_of_lanes_by_the_name_the_figure_gives_it():
    """The figure names a block of one kind's lanes once ("3000× handle"): ``--cutaway
    lane:3000× handle`` (or "... in N lanes") cuts to the whole block, in the icicle and on
    the thread view's ring, a box taller than any one lane's."""
    from tracevis3d.layout.icicle import icicle_layout
    from tracevis3d.layout.lane_blocks import lane_name_runs
    from tracevis3d.layout.threads import threads_layout
    from tracevis3d.params.threads import ThreadsParams

    trace = _request_threads(3000)
    (a, b, name), = lane_name_runs(select_calls(trace, IcicleParams().validate()))
    block = icicle_layout(trace, IcicleParams(cutaway=f"lane:{name}").validate())
    also = icicle_layout(trace, IcicleParams(cutaway=f"lane:{name} in {b - a + 1} lanes").validate())
    one = icicle_layout(trace, IcicleParams(cutaway=f"lane:{b}").validate())
    assert block.meta["cutaway"]["scale"] == also.meta["cutaway"]["scale"]
    assert block.meta["cutaway"]["scale"][1] > 3 * one.meta["cutaway"]["scale"][1], (block.meta["cutaway"],
                                                                                   one.meta["cutaway"])
    ring = threads_layout(trace, ThreadsParams(cutaway=f"lane:{name}", resolution=(960, 540)).validate())
    assert ring.meta["cutaway"]["scale"][0] > 0


def _child_processes_trace(path, n_children=8):
    """A Chrome trace of a program that runs 4 pool workers and starts ``n_children`` child
    processes one after another (each its own process named "python -c", its MainThread)."""
    ev = [{"ph": "M", "name": "process_name", "pid": 1, "tid": 1, "args": {"name": "MainProcess"}},
          {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "MainThread"}},
          {"ph": "X", "name": "main", "pid": 1, "tid": 1, "ts": 0, "dur": 100 * n_children + 100}]
    for w in range(4):
        ev += [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 10 + w,
                "args": {"name": f"ThreadPoolExecutor-0_{w}"}},
               {"ph": "X", "name": "work", "pid": 1, "tid": 10 + w, "ts": 5, "dur": 100 * n_children}]
    for k in range(n_children):
        pid = 100 + k
        ev += [{"ph": "M", "name": "process_name", "pid": pid, "tid": pid, "args": {"name": "python -c"}},
               {"ph": "M", "name": "thread_name", "pid": pid, "tid": pid, "args": {"name": "MainThread"}},
               {"ph": "X", "name": "<module>", "pid": pid, "tid": pid, "ts": 10 + 100 * k, "dur": 50}]
    path.write_text(json.dumps({"traceEvents": ev}))
    return tracevis3d.load(path)


def test_child_processes_of_one_kind_share_a_lane_named_by_their_process(tmp_path):
    """Child processes a program starts one after another (each "python -c" with its
    MainThread; VizTracer follows them) are threads of one kind: one lane, "8× python -c",
    not eight near-empty lanes; the pool's workers keep their lanes, each named so that they
    differ ("ThreadPoolExecutor-0_3", not "MainProcess: ThreadPoolExecu…" four times)."""
    from tracevis3d.layout.icicle import icicle_layout

    trace = _child_processes_trace(tmp_path / "children.json")
    sel = select_calls(trace, IcicleParams().validate())
    assert sel.lane_names[-1] == "8× python -c", sel.lane_names
    assert len(sel.lane_names) == 6
    spec = icicle_layout(trace)
    shown = [t for t, k in zip(spec.labels.texts, spec.labels.kind) if k == "lane"]
    assert len(set(shown)) == len(shown) and "ThreadPoolExecutor-0_3" in shown, shown


def test_a_lane_name_keeps_the_end_that_tells_threads_apart():
    """`text.fit_lane_name`: without its process where that fits, else cut in its middle:
    the end stays; `cut_middle` fits the width it is given."""
    from tracevis3d.layout.text import cut_middle, fit_lane_name, text_width

    assert fit_lane_name("MainProcess: ThreadPoolExecutor-0_3", 14.0) == "ThreadPoolExecutor-0_3"
    names = [fit_lane_name(f"MainProcess: ThreadPoolExecutor-0_{k}", 8.0) for k in range(4)]
    assert len(set(names)) == 4 and all(n.endswith(f"0_{k}") for k, n in enumerate(names)), names
    # a shared lane's name keeps its count and what its threads run: cut at its end
    assert fit_lane_name("6× process_request_thread", 8.0).startswith("6× proc")
    for w in (1.0, 3.0, 6.0, 20.0):
        for text in ("x" * 40, "ThreadPoolExecutor-12_3 (worker)", "ab"):
            got = cut_middle(text, w)
            assert got == text or (text_width(got) <= max(w, text_width("…" + text[-1])) + 1e-9
                                   and got.endswith(text[-1]) and "…" in got), (text, w, got)


def test_a_thread_kinds_label_never_shrinks_to_its_count():
    """`text.fit_thread_label` (EXTRAVIS' ring and the sequence view's columns): a group of
    threads' "5000× handle" keeps what its threads run, cut at its end, or shows nothing; the
    count alone ("5000×", stop 50's sequence column) says nothing of which threads these are."""
    from tracevis3d.layout.text import fit_thread_label, text_width

    assert fit_thread_label("5000× handle", 20.0) == "5000× handle"
    for name in ("5000× handle", "238× process_request_thread", "1,024× worker"):
        count = name.split(" ")[0]
        for w in (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 12.0):
            got = fit_thread_label(name, w)
            assert got == "" or (got.startswith(count + " ") and len(got) >= len(count) + 4
                                 and text_width(got) <= w + 1e-9), (name, w, got)
    assert fit_thread_label("238× process_request_thread", 8.0).startswith("238× proc")
    assert fit_thread_label("Thread-1 (worker)", 4.0) == "Thread-1"  # a thread's id still leads


def test_processes_of_one_name_are_numbered_in_their_threads_names(tmp_path):
    """A spawned pool's workers are each a process named "python -c" with its MainThread:
    their lanes read "python -c #1: MainThread", "python -c #2: …" (the k-th by pid), not
    three times the same name; a packed lane of one such process's threads says whose
    ("python -c #1: 3× heartbeat"); processes of distinct names keep their names."""
    ev = [{"ph": "M", "name": "process_name", "pid": 1, "tid": 1, "args": {"name": "MainProcess"}},
          {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "MainThread"}},
          {"ph": "X", "name": "main", "pid": 1, "tid": 1, "ts": 0, "dur": 1000}]
    for k, pid in enumerate((30, 10, 20)):
        ev += [{"ph": "M", "name": "process_name", "pid": pid, "tid": pid, "args": {"name": "python -c"}},
               {"ph": "M", "name": "thread_name", "pid": pid, "tid": pid, "args": {"name": "MainThread"}},
               {"ph": "X", "name": "worker", "pid": pid, "tid": pid, "ts": 10 + k, "dur": 900}]
    for j in range(3):  # three short heartbeat threads of the first worker, one after another
        ev += [{"ph": "M", "name": "thread_name", "pid": 30, "tid": 300 + j, "args": {"name": f"heartbeat-{j}"}},
               {"ph": "X", "name": "beat", "pid": 30, "tid": 300 + j, "ts": 100 + 200 * j, "dur": 50}]
    for j in range(6):  # filler threads of the main process, so that there are more than 8 lanes
        ev += [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 50 + j, "args": {"name": f"io-{j}"}},
               {"ph": "X", "name": "io", "pid": 1, "tid": 50 + j, "ts": 5, "dur": 990}]
    path = tmp_path / "spawned.json"
    path.write_text(json.dumps({"traceEvents": ev}))
    trace = tracevis3d.load(path)
    names = select_calls(trace, IcicleParams().validate()).lane_names
    workers = sorted(n for n in names if n.startswith("python -c #") and n.endswith(": MainThread"))
    assert workers == ["python -c #1: MainThread", "python -c #2: MainThread", "python -c #3: MainThread"], names
    assert "python -c #3: 3× heartbeat" in names, names  # pid 30 is the third "python -c" by pid
    assert "MainProcess: MainThread" in names


def _many_loops_trace(n_threads=40, n_busy=10, flows=True):
    """``n_threads`` threads, each an idle message loop (one root over the whole second, as
    Chrome's ``RunLoop::Run``); the first ``n_busy`` run 40 tasks of 20 µs each, the others a
    task of (thread index) µs; flows from every thread's first task to the next thread's."""
    import json

    from tracevis3d.io import load_bytes

    ev = []
    for t in range(n_threads):
        ev.append({"ph": "M", "pid": 1, "tid": t + 1, "name": "thread_name", "args": {"name": f"Worker{t}"}})
        ev.append({"ph": "X", "pid": 1, "tid": t + 1, "ts": 0, "dur": 1_000_000, "name": "RunLoop::Run"})
        tasks = [(100 + 1000 * k, 20) for k in range(40)] if t < n_busy else [(100, t)]
        for ts, dur in tasks:
            ev.append({"ph": "X", "pid": 1, "tid": t + 1, "ts": ts, "dur": dur, "name": f"Task{t % 5}"})
        if flows and t + 1 < n_threads:
            ev.append({"ph": "s", "pid": 1, "tid": t + 1, "ts": 101, "id": t, "cat": "ipc", "name": "f"})
            ev.append({"ph": "f", "pid": 1, "tid": t + 2, "ts": 101.5, "id": t, "cat": "ipc", "name": "f",
                       "bp": "e"})
    return load_bytes(json.dumps(ev).encode(), source="loops.json")


def test_a_figure_of_many_threads_keeps_the_lanes_that_work_most():
    """82 threads of a Chrome page load drew 82 lanes of a few pixels with names written over
    each other: beyond `max_lanes` lanes the icicle keeps those whose threads work the most
    (under their roots: the loop's own time is idle), in their usual order, says so in its
    title, counts only the flows between the lanes it keeps, and every call of a kept
    thread is drawn; --threads and max_lanes=0 show every thread asked for."""
    from tracevis3d.layout.icicle import icicle_layout
    from tracevis3d.layout.thread_work import busiest_lanes

    tr = _many_loops_trace()
    spec = icicle_layout(tr, IcicleParams(max_lanes=12).validate())
    kept = spec.meta["lane_threads"]
    busy = [tr.thread_names.index(f"Worker{t}") for t in range(10)]
    light = [tr.thread_names.index(f"Worker{t}") for t in (39, 38)]  # the most work of the others: 39, 38 µs
    assert sorted(kept) == sorted(busy + light) and kept == sorted(kept), kept  # the usual order kept
    assert spec.meta["n_threads_left_out"] == 28 and "12 of 40 threads (the busiest)" in spec.meta["title"]
    shown = np.isin(tr.thread, kept)
    assert spec.meta["n_calls"] == int(shown.sum())
    assert spec.meta["n_boxes"] + spec.meta["n_clustered_calls"] + spec.meta["n_folded"] == int(shown.sum())
    between = sum(1 for a, b in zip(tr.thread[tr.flow_from], tr.thread[tr.flow_to]) if a in kept and b in kept)
    legend = " ".join(t for t, k in zip(spec.labels.texts, spec.labels.kind) if k == "legend")
    assert between == 10 and f"arcs: {between} flows" in legend, legend  # not the 39 of every thread
    assert icicle_layout(tr, IcicleParams(max_lanes=0).validate()).meta["n_threads_left_out"] == 0
    chosen = icicle_layout(tr, IcicleParams(max_lanes=12, threads=list(range(20))).validate())
    assert len(chosen.meta["lane_threads"]) == 20 and chosen.meta["n_threads_left_out"] == 0
    assert IcicleParams().max_lanes == 24 and len(icicle_layout(tr).meta["lane_threads"]) == 24
    # ties keep the earlier lane; a lane's work is its threads' together
    groups = [[0], [1, 2], [3]]
    assert busiest_lanes(tr, groups, 1).tolist() == [False, True, False]  # Worker1 + Worker2: 1600 µs


def test_the_icicle_bundles_many_flows_into_at_most_its_budget_of_arcs():
    """Thousands of flows between many lanes (Chrome) are bundled in wider columns until at
    most `MAX_ICICLE_FLOW_ARCS` arcs remain, each carrying its bundle's count, and of those the
    largest are drawn while their ink leaves every band of columns mostly clear
    (`_within_ink`); few flows keep an arc each."""
    import json

    from tracevis3d.io import load_bytes
    from tracevis3d.layout import flow_arcs as side
    from tracevis3d.layout.icicle import icicle_layout

    rng = np.random.default_rng(3)
    ev = []
    n_threads, n_tasks = 12, 400
    for t in range(n_threads):
        ev += [{"ph": "X", "pid": 1, "tid": t + 1, "ts": 10 * k, "dur": 8, "name": f"T{t}"} for k in range(n_tasks)]
    fid = 0
    for k in range(3000):
        a, b = rng.integers(0, n_threads, 2)
        if a == b:
            continue
        j = int(rng.integers(0, n_tasks - 1))
        ev.append({"ph": "s", "pid": 1, "tid": int(a) + 1, "ts": 10 * j + 1, "id": fid, "cat": "c", "name": "f"})
        ev.append({"ph": "f", "pid": 1, "tid": int(b) + 1, "ts": 10 * j + 12, "id": fid, "cat": "c", "name": "f",
                   "bp": "e"})
        fid += 1
    tr = load_bytes(json.dumps(ev).encode(), source="tangle.json")
    spec = icicle_layout(tr, IcicleParams().validate())
    arcs = spec.layer("flows")
    assert side.MIN_ICICLE_FLOW_ARCS < len(arcs) < side.MAX_ICICLE_FLOW_ARCS, len(arcs)
    assert int(arcs.attributes["flows"].max()) > 1
    assert int(arcs.attributes["flows"].sum()) == spec.meta["n_flows_drawn"] < spec.meta["n_flows"] == fid
    # the ink of the arcs beyond the first few stays within its share of the lanes in every band
    px = float(np.median(spec.meta["world_per_pixel"]))
    z = np.asarray(spec.meta["lane_z"])
    tall_px = (z.max() + spec.meta["lane_levels"][0] * spec.meta["level_height"] - z.min()) / px
    pts = arcs.centres.astype(np.float64) / px
    width = 2 * arcs.half_x[:, 1:].astype(np.float64) / px
    ink = np.hypot(np.diff(pts[..., 0], axis=1), np.diff(pts[..., 2], axis=1)) * width
    band = np.floor(0.5 * (pts[:, 1:, 0] + pts[:, :-1, 0]) / side.INK_BAND_PX).astype(np.int64)
    band -= band.min()
    n_bands = int(band.max()) + 1
    # arcs kept whatever their ink: the first few, and the largest into each lane
    first = arcs.attributes["side_index"]
    reached = tr.thread[tr.flow_to[first]]
    must = np.zeros(len(arcs), bool)
    must[:side.MIN_ICICLE_FLOW_ARCS] = True
    must[np.unique(reached, return_index=True)[1]] = True
    assert np.unique(reached).size == n_threads  # every thread that flows reach keeps an arc
    cap = side.FLOW_INK_FRAC * tall_px * side.INK_BAND_PX
    used = np.zeros(n_bands)
    for k in range(len(arcs)):  # each further arc drawn keeps the bands it crosses within the cap
        used += np.bincount(band[k], ink[k], n_bands)
        assert must[k] or np.all(used[np.unique(band[k])] <= cap * 1.001), (k, used.max(), cap)
    assert (~must).sum() >= 5  # and such arcs are there
    legend = " ".join(t for t, k in zip(spec.labels.texts, spec.labels.kind) if k == "legend")
    assert "where many, only the largest" in legend, legend
    few = load_bytes(json.dumps(ev[:n_threads * n_tasks + 20]).encode(), source="few.json")
    assert len(icicle_layout(few).layer("flows")) == 10  # 10 flows far apart: an arc each


def test_the_thread_view_of_many_threads_keeps_the_busiest_sections_and_its_focus():
    """The ring of a trace of 40 message loops keeps its 12 busiest threads and the thread
    focused on (here one of the idle ones), says so in its title; --threads shows every
    thread asked for."""
    from tracevis3d.layout.threads import threads_layout
    from tracevis3d.layout.threads_params import ThreadsParams

    tr = _many_loops_trace()
    idle = tr.thread_names.index("Worker20")
    spec = threads_layout(tr, ThreadsParams(max_lanes=12, focus=idle, window="all").validate())
    assert "12 of 40 threads (the busiest)" in spec.meta["title"], spec.meta["title"]
    assert idle in spec.meta["lane_threads"] and len(spec.meta["lane_threads"]) == 12
    every = threads_layout(tr, ThreadsParams(max_lanes=12, threads=list(range(20)), window="all").validate())
    assert "· 20 threads" in every.meta["title"] and len(every.meta["lane_threads"]) == 20, every.meta["title"]


def test_ink_selection_is_bounded_on_points_off_the_image():
    """Arcs projected from behind the camera (NaN, infinite or huge pixel coordinates) keep
    the bands few (no allocation by the coordinates' size) and the largest arcs first."""
    from tracevis3d.layout.flow_arcs import MIN_ICICLE_FLOW_ARCS, ink_selection

    m = MIN_ICICLE_FLOW_ARCS + 20
    pts = np.zeros((m, 16, 2))
    pts[:, :, 0] = np.linspace(0, 1000, 16)[None] + np.arange(m)[:, None]
    pts[:, :, 1] = np.linspace(0, 500, 16)[None]
    pts[-3, 4, 0], pts[-2, 5, 0], pts[-1, 6, 1] = np.nan, 1e300, -np.inf
    keep = ink_selection(pts, np.full(m, 2.0), 600.0)
    assert keep[:MIN_ICICLE_FLOW_ARCS].tolist() == list(range(MIN_ICICLE_FLOW_ARCS))
    assert np.all(np.diff(keep) > 0) and keep.max() < m
