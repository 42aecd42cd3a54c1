"""The layout stages every view shares (bpy-free): hide by rule, thread order, time axis,
colour families, the kind scheme, label texts and the heads-up display."""
import numpy as np
import pytest

from tracevis3d.layout import IcicleParams, icicle_layout
from tracevis3d.layout import palette
from tracevis3d.layout.annotate import nice_ticks, tick_texts, trace_title
from tracevis3d.layout.colour import INFRA_RGB, KIND_BROWN, OTHER_RGB, WAIT_RGB
from tracevis3d.naming import describe_function, drop_locals
from tracevis3d.layout.select import order_threads, select_calls
from tracevis3d.layout.text import fit_text, name_candidates, text_width
from tracevis3d.model import KIND_IO, KIND_WAIT, Trace
from tree_factory import random_trace


def _named_trace():
    """Two packages (three and two modules), an import frame, a wait."""
    names = ["main (/app/prog.py:1)", "parse (/x/site-packages/docutils/parsers/rst/states.py:10)",
             "walk (/x/site-packages/docutils/nodes.py:20)", "emit (/x/site-packages/docutils/writers/html.py:5)",
             "dumps (/usr/lib/python3.11/json/encoder.py:7)", "loads (/usr/lib/python3.11/json/decoder.py:8)",
             "_find_and_load (<frozen importlib._bootstrap>:1165)", "Queue.get (/usr/lib/python3.11/queue.py:154)"]
    func, start, end, parent, kind = [], [], [], [], []

    def add(f, s, e, p, k=0):
        func.append(f)
        start.append(s)
        end.append(e)
        parent.append(p)
        kind.append(k)
        return len(func) - 1

    root = add(0, 0, 1000, -1)
    t = 1.0
    for f, d in ((1, 150), (2, 120), (3, 90), (4, 80), (5, 70), (6, 60), (7, 50)):
        add(f, t, t + d, root, KIND_WAIT if f == 7 else 0)
        t += d + 5
    return Trace.from_arrays(func, start, end, parent, function_names=names, kind=kind).check()


# ---------------------------------------------------------------------------- hide
def test_hide_by_regex_and_module_promotes_children_and_keeps_indices():
    tr = random_trace(seed=11, n_roots=6, names=[f"pkg.mod{i % 3}.f{i}" for i in range(10)])
    hide = IcicleParams(hide=[r"\.f[0-2]$"], cluster_px=0, fold="none")
    spec = icicle_layout(tr, hide)
    ci = spec.layer("calls").attributes["call_index"]
    hidden = np.isin(tr.func, [0, 1, 2])
    # every drawn call is a kept call of the loaded trace, each kept call drawn once
    assert set(ci.tolist()) == set(np.flatnonzero(~hidden).tolist())
    # children were promoted: a kept call whose parent is hidden now sits lower than its depth
    sel = select_calls(tr, hide)
    assert sel.trace.check() is sel.trace and len(sel.trace) == (~hidden).sum()
    assert np.array_equal(sel.original(np.arange(len(sel.trace))), np.flatnonzero(~hidden))
    mods = icicle_layout(tr, IcicleParams(hide_modules=["pkg.mod1"], cluster_px=0, fold="none"))
    ci2 = mods.layer("calls").attributes["call_index"]
    assert not np.isin(tr.func[ci2], [1, 4, 7]).any() and len(ci2) == np.isin(tr.func, [0, 2, 3, 5, 6, 8, 9]).sum()
    with pytest.raises(ValueError, match="hide every call"):
        icicle_layout(tr, IcicleParams(hide=["."]))


# ---------------------------------------------------------------------- thread order
def test_thread_order_main_first_and_user_order():
    tr = random_trace(seed=12, threads=4, n_roots=3)
    tr.thread_names = ["worker-a", "MainThread", "zeta", "alpha"]
    lanes = order_threads(tr, np.arange(4), "default")
    assert lanes[0] == 1  # the main thread first, whatever its index
    assert sorted(lanes.tolist()) == [0, 1, 2, 3]
    assert order_threads(tr, np.arange(4), "name").tolist() == [3, 1, 0, 2]
    assert order_threads(tr, np.arange(4), ["zeta", 0]).tolist()[:2] == [2, 0]
    busy = order_threads(tr, np.arange(4), "busy")
    roots = tr.parent < 0
    tot = np.bincount(tr.thread[roots], weights=(tr.end - tr.start)[roots])
    assert np.all(np.diff(tot[busy]) <= 0)
    spec = icicle_layout(tr, IcicleParams(thread_order=["alpha"]))
    assert spec.meta["lane_names"][0] == "alpha"
    with pytest.raises(ValueError, match="thread_order"):
        icicle_layout(tr, IcicleParams(thread_order=["nope"]))


def test_default_thread_order_keeps_each_process_together():
    """A pool of worker processes (VizTracer on a ProcessPoolExecutor): each process's threads
    stay together, processes by first activity, the main thread of each first.  Before, every
    process's main thread came first and the parent's other threads ended up under the workers."""
    tr = random_trace(seed=12, threads=5, n_roots=4)
    rng = tr.thread_ranges()
    first = np.array([tr.start[rng[t, 0]] for t in range(5)])
    tr.thread_names = ["MainThread", "MainThread", "feeder", "MainThread", "manager"]
    pid = np.array([10, 20, 10, 30, 10])
    tr.thread_pid = pid.astype(np.int64)
    tr.thread_tid = np.where(np.arange(5) % 2 == 0, pid + 1 + np.arange(5), pid).astype(np.int64)
    tr.thread_tid[0] = 10
    lanes = order_threads(tr, np.arange(5), "default").tolist()
    procs = [int(pid[t]) for t in lanes]
    assert procs == sorted(procs, key=lambda p: first[pid == p].min())  # together, by first activity
    for p in set(procs):
        mine = [t for t in lanes if pid[t] == p]
        assert tr.thread_names[mine[0]] == "MainThread"
        assert all(first[a] <= first[b] for a, b in zip(mine[1:], mine[2:]))


# ------------------------------------------------------------------------- time axis
def test_ticks_are_relative_to_the_window_in_one_unit():
    ticks, scale, unit, dec = nice_ticks(30_000.0)  # a 30 ms window, wherever it starts
    texts = tick_texts(ticks, scale, unit, dec)
    assert texts[0] == "0" and all(t.endswith(" ms") for t in texts[1:])
    assert texts[:3] == ["0", "5 ms", "10 ms"] and 5 <= len(texts) <= 8
    t2 = tick_texts(*nice_ticks(2.5e6))
    assert all(t.endswith(" s") for t in t2[1:]) and "0.5 s" in t2
    t3 = tick_texts(*nice_ticks(0.8))
    assert all(t.endswith(" ns") for t in t3[1:])
    # a window of 10^300 µs (``--window 0:1e300``) wrote labels of 294 digits over each other
    for span in (1e300, 3e12):
        t4 = tick_texts(*nice_ticks(span))
        assert t4[0] == "0" and all(len(t) <= 10 and t.endswith(" s") for t in t4[1:]), t4
    assert tick_texts(*nice_ticks(5e11))[1] == "100000 s"  # up to 10^6 s: digits as before
    tr = random_trace(seed=13)
    t0, t1 = float(tr.start.max()) * 0.3, float(tr.start.max()) * 0.6
    spec = icicle_layout(tr, IcicleParams(time_window=(t0, t1)))
    axis = [t for t, k in zip(spec.labels.texts, spec.labels.kind) if k == "axis"]
    assert axis[0] == "0" and len({t.split()[-1] for t in axis[1:]}) == 1
    assert "window from" in spec.meta["title"]


# --------------------------------------------------------------------------- colours
def test_module_colours_are_families_of_shades_with_reserved_tones():
    tr = _named_trace()
    spec = icicle_layout(tr, IcicleParams(color_by="module", cluster_px=0, fold="none"))
    calls = spec.layer("calls")
    col = {int(tr.func[c]): calls.colors[k, :3].astype(float) for k, c in enumerate(calls.attributes["call_index"])}
    lch = {f: palette.linear_srgb_to_oklab(c[None])[0] for f, c in col.items()}
    hue = {f: np.degrees(np.arctan2(v[2], v[1])) % 360 for f, v in lch.items()}

    def hue_gap(a, b):
        d = abs(hue[a] - hue[b]) % 360
        return min(d, 360 - d)

    # docutils modules (1, 2, 3): one hue family, different shades; json (4, 5): another family
    assert max(hue_gap(1, 2), hue_gap(1, 3), hue_gap(2, 3)) < 40
    assert hue_gap(4, 5) < 40 and hue_gap(1, 4) > 40
    assert len({tuple(np.round(col[f], 3)) for f in (1, 2, 3)}) == 3
    # import machinery muted (not grey), the wait its own red
    assert np.allclose(col[6], INFRA_RGB, atol=1e-6) and np.allclose(col[7], WAIT_RGB, atol=1e-6)
    infra_chroma = np.hypot(*palette.linear_srgb_to_oklab(INFRA_RGB[None])[0, 1:])
    assert infra_chroma > 0.03 and not np.allclose(INFRA_RGB, OTHER_RGB)
    names = [e.name for e in spec.legend]
    assert "docutils.parsers.rst.states" in names and "json.encoder" in names
    assert len(names) == len(set(names))  # every legend entry unambiguous


def test_auto_colour_mode_follows_the_trace_size():
    small = _named_trace()
    assert icicle_layout(small, IcicleParams()).meta["color_mode"] == "function"
    many = random_trace(seed=14, n_func=400, n_roots=60, names=[f"p{i % 7}.m{i % 13}.f{i}" for i in range(400)])
    assert icicle_layout(many, IcicleParams(cluster_px=0)).meta["color_mode"] == "module"


def test_kind_colours_follow_synctrace():
    # root(0) waits through child 1 (60 of 100); call 2 does I/O for its whole time; 3 does neither
    tr = Trace.from_arrays([0, 1, 2, 3], [0, 10, 200, 300], [100, 70, 250, 400], [-1, 0, -1, -1],
                           function_names=["a", "wait", "read", "compute"],
                           kind=[0, KIND_WAIT, KIND_IO, 0]).check()
    spec = icicle_layout(tr, IcicleParams(color_by="kind", cluster_px=0, fold="none"))
    calls = spec.layer("calls")
    c = {int(i): calls.colors[k, :3].astype(float) for k, i in enumerate(calls.attributes["call_index"])}
    assert np.allclose(c[3], KIND_BROWN, atol=1e-6)  # neither waits nor does I/O
    lab = {i: palette.linear_srgb_to_oklab(v[None])[0] for i, v in c.items()}
    hue = {i: np.degrees(np.arctan2(v[2], v[1])) % 360 for i, v in lab.items()}
    assert hue[1] < 60 or hue[1] > 340  # red: waiting
    assert 100 < hue[2] < 180  # green: I/O
    # intensity grows with the share of time: the wait call (100 %) is stronger than root (60 %)
    chroma = {i: np.hypot(*v[1:]) for i, v in lab.items()}
    assert chroma[1] > chroma[0] and lab[1][0] < lab[0][0]


# ------------------------------------------------------------------------- names, text
def test_label_texts_keep_the_informative_end():
    assert drop_locals("_make_iterencode.<locals>._iterencode_dict") == "_iterencode_dict"
    mod, fam, qual, disp, short, infra = describe_function(
        "_make_iterencode.<locals>._iterencode_dict (/usr/lib/python3.11/json/encoder.py:334)")
    assert (mod, fam, disp) == ("json.encoder", "json", "json.encoder._iterencode_dict")
    assert describe_function("<module> (/x/site-packages/docutils/core.py:1)")[3] == "docutils.core"
    assert describe_function("_find_and_load (<frozen importlib._bootstrap>:1165)")[5]
    c = name_candidates("json.encoder._iterencode_dict")
    assert c == ["json.encoder._iterencode_dict", "…encoder._iterencode_dict", "…_iterencode_dict"]
    w = text_width("…encoder._iterencode_dict")
    assert fit_text(c, w) == "…encoder._iterencode_dict" and fit_text(c, w - 0.01) == "…_iterencode_dict"
    assert fit_text(["…__init__"], 1.0) == ""  # never "…nit__" or "_call…"
    for t in (fit_text(name_candidates("a.b._call_with_frames_removed"), x) for x in np.linspace(1, 20, 40)):
        assert t == "" or t.endswith("removed")
    # camel case cut at words and at an acronym's ends (C++ class names of Chromium's traces)
    assert name_candidates("RendererGLContext") == ["RendererGLContext", "…GLContext", "…Context"]
    assert name_candidates("XMLHttpRequest") == ["XMLHttpRequest", "…HttpRequest", "…Request"]
    assert name_candidates("HTTPServer") == ["HTTPServer", "…Server"]


def test_title_and_legend_frame_the_content():
    tr = random_trace(seed=15, threads=2)
    tr.meta["source"] = "/data/run_42.json.gz"
    spec = icicle_layout(tr, IcicleParams())
    assert trace_title(tr, select_calls(tr, IcicleParams()), IcicleParams()).startswith("run_42 · ")
    kinds = np.array(spec.labels.kind)
    space = np.array(spec.labels.space)
    assert set(space[(kinds == "title") | (kinds == "legend")]) == {"camera"}
    assert spec.layer("legend").space == "camera"
    from tracevis3d.layout.camera import camera_to_world, project

    x0, y0, x1, y1 = spec.meta["content_rect"]
    pts = camera_to_world(spec.camera, spec.labels.anchors[space == "camera"].astype(float))
    px = project(spec.camera, pts, spec.resolution)
    legend = px[kinds[space == "camera"] == "legend"]
    title = px[kinds[space == "camera"] == "title"]
    assert title[:, 1].max() <= y0  # above the icicle
    if legend[:, 0].min() < x1:  # the legend in a place the lanes leave free: no box under it
        lx0, ly0 = legend[:, 0].min(), legend[:, 1].min() - 20
        lx1, ly1 = lx0 + 200, legend[:, 1].max() + 5
        calls = spec.layer("calls")
        c = project(spec.camera, calls.positions.astype(float), spec.resolution)
        inside = (c[:, 0] > lx0) & (c[:, 0] < lx1) & (c[:, 1] > ly0) & (c[:, 1] < ly1)
        assert not inside.any(), int(inside.sum())
    off = icicle_layout(tr, IcicleParams(show_title=False, title="x"))
    assert "title" not in off.labels.kind
    custom = icicle_layout(tr, IcicleParams(title="My run"))
    assert custom.meta["title"] == "My run"


def test_hostile_names_stay_bounded():
    """Names are data: a 200k-character function name or thread name must not cost quadratic
    time or produce a label longer than its box."""
    long_func = "pkg." + "x" * 100_000 + ".f (/a/" + "d/" * 50_000 + "m.py:1)"
    tr = Trace.from_arrays([0, 1], [0.0, 10.0], [100.0, 90.0], [-1, 0],
                           function_names=[long_func, "a." * 30_000 + "g"],
                           thread_names=["T" * 100_000]).check()
    import time

    t = time.perf_counter()
    spec = icicle_layout(tr, IcicleParams())
    assert time.perf_counter() - t < 30  # a hang guard, not a timing test (it takes ~0.1 s)
    assert max(len(t) for t in spec.labels.texts) < 400
    lane = [t for t, k in zip(spec.labels.texts, spec.labels.kind) if k == "lane"][0]
    assert "…" in lane and len(lane) < 60  # cut in its middle (`text.fit_lane_name`)


def test_a_thread_name_in_a_narrow_legend_keeps_its_thread_not_the_end_of_its_words():
    """A legend row naming a thread ("MainProcess: Thread-1 (_handle_workers)") that does
    not fit drops its process first ("Thread-1 (_handle_workers)"), then is cut at its end;
    a function name keeps its informative end as before ("…_iterencode_dict")."""
    from tracevis3d.layout.annotate import plan_hud
    from tracevis3d.layout.text import thread_name_candidates

    name = "MainProcess: Thread-1 (_handle_workers)"
    assert thread_name_candidates(name) == (name, "Thread-1 (_handle_workers)")
    assert thread_name_candidates("MainThread") == ("MainThread",)
    rows = [(thread_name_candidates(name), 1000, "swatch"), ("json.encoder._iterencode_dict", 1, "swatch")]
    for room_px, want in ((2000, name), (300, "Thread-1 (_handle_workers)")):
        plan = plan_hud((1920, 1080), 16.0, None, rows, False, True, max_legend_frac=room_px / 1920)
        texts = [t for t, _, _ in plan.legend_rows]
        assert texts[0] == want, texts
        assert texts[1] == fit_text(name_candidates(rows[1][0]), (room_px - 1.5 * 16.0) / 16.0), texts
    plan = plan_hud((1920, 1080), 16.0, None, rows, False, True, max_legend_frac=120 / 1920)
    first = plan.legend_rows[0][0]
    assert first.startswith("Thread-1") and first.endswith("…"), first  # cut at its end
    # a name whose number ends it is cut in its middle: seven pool workers stay apart
    from tracevis3d.layout.text import cut_thread_name

    workers = [thread_name_candidates(f"Browser: ThreadPoolForegroundWorker #{k}") for k in range(1, 8)]
    plan = plan_hud((1920, 1080), 16.0, None, [(w, 1000 + k, "swatch") for k, w in enumerate(workers)], False, True,
                    max_legend_frac=220 / 1920)
    texts = [t for t, _, _ in plan.legend_rows]
    assert len(set(texts)) == 7 and all("…" in t and t.endswith(f"#{k}") for k, t in enumerate(texts, 1)), texts
    assert cut_thread_name("Thread-1 (_handle_workers)", 8.0).startswith("Thread-1")


def test_threads_of_processes_that_share_a_name_keep_the_process_number():
    """Two renderers' main threads (V8 profiles: "Renderer #1: CrRendererMain (JS)", "Renderer
    #2: …") lost their processes where the margin was narrow and read alike; a pool's workers
    ("python -c #2: MainThread") likewise.  The candidates keep the process's number before
    dropping the process."""
    from tracevis3d.layout.text import fit_lane_name, text_width, thread_name_candidates

    assert thread_name_candidates("Renderer #2: CrRendererMain (JS)") == (
        "Renderer #2: CrRendererMain (JS)", "#2: CrRendererMain (JS)", "CrRendererMain (JS)")
    assert thread_name_candidates("MainProcess: MainThread") == ("MainProcess: MainThread", "MainThread")
    room = text_width("#2: CrRendererMain (JS)") + 0.1
    assert [fit_lane_name(f"Renderer #{k}: CrRendererMain (JS)", room) for k in (1, 2)] == [
        "#1: CrRendererMain (JS)", "#2: CrRendererMain (JS)"]


def test_a_wrapped_legend_note_keeps_a_number_with_its_unit():
    """The cone tree's note "sphere area: inclusive time (root 11.1 s)" wrapped in a narrow
    legend ended a line with "11.1" and put "s)" under it (a VizTracer trace of Pygments and
    Cython): a number and its unit stay on one line; other words still break."""
    from tracevis3d.layout.annotate import _words, _wrap
    from tracevis3d.layout.text import text_width

    note = "sphere area: inclusive time (root 11.1 s)"
    for room in (13.0, 13.5, 14.0, 15.0, 16.0):
        lines = _wrap(note, room)
        assert not any(ln.endswith(("11.1", "(root 11.1")) and ln != note for ln in lines), lines
        assert "11.1 s)" in " ".join(lines) and any("11.1 s)" in ln for ln in lines), lines
    assert _wrap("a b c d e f", text_width("a b c")) == ["a b c", "d e f"]
    assert _words("up to 5 sx, 3 ms, 40 %") == ["up", "to", "5", "sx,", "3 ms,", "40 %"]  # "sx": not a unit


def test_negligible_waits_and_io_read_as_neither():
    """A call that waits or does I/O for under `KIND_NEGLIGIBLE` of its time is drawn as one
    that does neither (black's format_str, 0.0004 % reading, was pale green, "does I/O")."""
    from tracevis3d.layout.colour import KIND_NEGLIGIBLE, colour_calls

    # root (0-1000) > reader (0-1000) > read (I/O: 0-2, 0.2 %); root > waiter (1000-2000) > get (wait, 1000-1500)
    tr = Trace.from_arrays([0, 1, 2, 3, 4], [0.0, 0.0, 0.0, 1000.0, 1000.0], [2000.0, 1000.0, 2.0, 2000.0, 1500.0],
                           [-1, 0, 1, 0, 3], [0] * 5, function_names=["root", "reader", "read", "waiter", "get"],
                           kind=np.array([0, 0, KIND_IO, 0, KIND_WAIT], np.uint8)).check()
    idx = np.arange(5)
    c = colour_calls(tr, idx, IcicleParams(color_by="kind"), np.ones(5), lambda m: np.ones(5), str)
    assert 2.0 / 1000.0 < KIND_NEGLIGIBLE
    assert c.slot[1] == 0 and c.slot[0] != 0 and c.slot[3] != 0  # reader: neither; root and waiter wait
    assert c.slot[2] != 0 and c.slot[4] != 0


def _jax_shaped_trace():
    """A trace shaped as JAX's profiler writes one (`tools/record_traces.py` jax_mlp): one process,
    three Python threads all named "python" (the main thread and two pool workers, the main one
    starting first), two XLA threads named by a word and a 19-digit id, Python frames written
    ``$file:line name`` and C functions ``$module name``."""
    ev = [{"ph": "M", "pid": 701, "name": "process_name", "args": {"name": "/host:CPU"}}]
    tids = {"main": 448619493, "w1": 3839801175, "w2": 3779097365, "e1": 2914633416, "e2": 2863378872}
    names = {"main": "python", "w1": "python", "w2": "python", "e1": "tf_XLAEigen/2914633416442290764",
             "e2": "tf_XLAEigen/2863378872783946613"}
    for k, tid in tids.items():
        ev.append({"ph": "M", "pid": 701, "tid": tid, "name": "thread_name", "args": {"name": names[k]}})
    t0 = {"main": 50.0, "w1": 0.0, "w2": 20.0, "e1": 100.0, "e2": 150.0}  # a worker's stack dated from the start
    span = {"main": 900.0, "w1": 500.0, "w2": 450.0}
    for k, tid in tids.items():
        if k.startswith("e"):
            for j in range(3):
                ev.append({"ph": "X", "pid": 701, "tid": tid, "ts": t0[k] + 200 * j, "dur": 150,
                           "name": "ThunkExecutor::Execute"})
            continue
        ev += [{"ph": "X", "pid": 701, "tid": tid, "ts": t0[k], "dur": span[k], "name": "$threading.py:988 _bootstrap"},
               {"ph": "X", "pid": 701, "tid": tid, "ts": t0[k] + 10, "dur": 400, "name": "$pjit.py:1137 _pjit_call_impl"},
               {"ph": "X", "pid": 701, "tid": tid, "ts": t0[k] + 20, "dur": 300, "name": "$mlir.py:1287 lower_jaxpr"},
               {"ph": "X", "pid": 701, "tid": tid, "ts": t0[k] + 30, "dur": 5, "name": "$builtins len"}]
    import json

    from tracevis3d.io import load_bytes

    return load_bytes(json.dumps({"traceEvents": ev, "displayTimeUnit": "ns"}).encode(), source="jax.json")


def test_threads_of_one_process_that_share_a_name_are_numbered_and_long_ids_shortened():
    """JAX names its main thread and every Python worker "python": the lanes read "python #1"
    (the busiest: the main thread), "#2", "#3", not three times "python"; an XLA
    thread's 19-digit id is cut to its ends ("tf_XLAEigen/29…64") before its words are; and
    the Python frames are coloured by their modules (``$pjit.py:1137 …`` is module pjit)."""
    from tracevis3d.layout.text import fit_lane_name, thread_name_candidates

    tr = _jax_shaped_trace()
    counts = tr.thread_name_counts()
    labels = {tr.thread_label(t, tr.n_threads, counts) for t in range(tr.n_threads)}
    assert {"python #1", "python #2", "python #3"} <= labels, labels
    root = np.flatnonzero(tr.depth == 0)
    main = int(tr.thread[root[np.argmax(tr.end[root] - tr.start[root])]])  # 900 µs; the workers 500 and 450
    assert tr.thread_label(main, 5, counts) == "python #1"
    assert tr.thread_label(int(tr.thread[np.argmin(tr.start)]), 5, counts) == "python #2"  # started first
    assert thread_name_candidates("tf_XLAEigen/2914633416442290764")[-1] == "tf_XLAEigen/29…64"
    assert fit_lane_name("tf_XLAEigen/2914633416442290764", 9.0) == "tf_XLAEigen/29…64"
    assert fit_lane_name("ThreadPoolExecutor-0_3", 9.0).endswith("-0_3")  # short numbers untouched
    spec = icicle_layout(tr, IcicleParams(resolution=(1920, 1080)))
    lanes = [t for t, k in zip(spec.labels.texts, spec.labels.kind) if k == "lane"]
    assert len(set(lanes)) == len(lanes) and any(x.startswith("python #") for x in lanes), lanes
    assert any(x.startswith("tf_XLAEigen/2") and "…" in x for x in lanes), lanes
    legend = [e.name for e in spec.legend]  # few functions: coloured by function, named with their module
    assert {"threading._bootstrap", "pjit._pjit_call_impl", "mlir.lower_jaxpr"} <= set(legend), legend


def test_a_packed_name_drops_the_separator_its_ids_leave():
    from tracevis3d.layout.select import packed_name_of

    assert packed_name_of(["tf_XLAEigen/2914633416442290764", "tf_XLAEigen/286337887"]) == "2× tf_XLAEigen"
    assert packed_name_of(["tf_XLAPjRtCpuClient/-4300164874264753615", "tf_XLAPjRtCpuClient/-48"]) == \
        "2× tf_XLAPjRtCpuClient"
    assert packed_name_of(["worker-1", "worker-2", "worker-3"]) == "3× worker"
