"""Flows in the thread view (issue 25, item 3; `layout.threads_flows`): arcs from the call
that starts a flow to the call it reaches, on the focused thread's icicle and the
semicircle; on the real PyTorch profile the CPU→GPU arcs leave the launching thread's icicle
and reach the kernel's stream on the semicircle, seen in the rendered pixels, and a cutaway
of a call that arcs pass in front of shows the call again."""
import numpy as np
import pytest

import tracevis3d
from tracevis3d.layout import side_tracks as side
from tracevis3d.layout.camera import project, world_per_pixel
from tracevis3d.layout.cutaway import cutaway_box
from tracevis3d.layout.threads import threads_layout
from tracevis3d.layout.threads_params import ThreadsParams
from tracevis3d.layout.threads_flows import MAX_THREAD_FLOW_ARCS

from cutaway_box import inside_box

RES = (1280, 720)
FOCUS = "thread 3126441 (python3.8)"  # the CPU thread that launches most kernels (6,102 flows to stream 7)


@pytest.fixture(scope="module")
def pytorch(realdata):
    path = realdata / "hta-trace-diff" / "control.json.gz"
    if not path.exists():
        pytest.skip(f"{path} not found")
    return tracevis3d.load(path)


def test_no_flows_option_and_a_trace_without_flows():
    t = tracevis3d.synthetic(2000, threads=2, seed=1)
    spec = threads_layout(t, ThreadsParams(resolution=(640, 360)))
    assert spec.meta["n_flows"] == 0 and "flows" not in [lay.name for lay in spec.layers]
    assert ThreadsParams.SCHEMA["show_flows"].cli_flag == "--no-flows"


def _ring_lane_of(spec, point) -> int:
    """The semicircle section (lane) a world point on the front plane lies in, or -1."""
    o = np.asarray(spec.meta["ring_origin"])
    d = (np.asarray(point) - o) / spec.meta["ring_scale"]
    d[0] /= spec.meta["ring_stretch"]
    a = np.arctan2(-d[2], d[0]) % (2 * np.pi)
    if not spec.meta["zero_radius"] - 1e-6 <= np.hypot(d[0], d[2]) <= spec.meta["outer_radius"] + 1e-6:
        return -1
    for lane, (a0, a1) in enumerate(spec.meta["lane_angles"]):
        if a0 - 1e-6 <= a <= a1 + 1e-6:
            return lane
    return -1


def test_real_pytorch_flows_leave_the_icicle_and_reach_the_stream_on_the_semicircle(pytorch):
    tr = pytorch
    spec = threads_layout(tr, ThreadsParams(resolution=RES, focus=FOCUS))
    arcs = spec.layer("flows")
    assert 0 < len(arcs) <= MAX_THREAD_FLOW_ARCS
    assert spec.meta["n_flows_drawn"] > 0.5 * tr.flow_from.size
    # no lock waits in a profiler's trace: the title says what the view shows, its flows
    assert spec.meta["title"] == f"Who passes work to whom · control · 8 threads, {tr.flow_from.size:,} flows"
    legend = [t for t, k in zip(spec.labels.texts, spec.labels.kind) if k == "legend"]
    assert "threads" in legend and not any("wide end" in t or "waiting thread" in t for t in legend), legend
    swatches = legend[legend.index("threads") + 1:][:8]
    assert len(set(swatches)) == 8 and not any(t.startswith("top:") for t in swatches), legend  # told apart
    assert (arcs.attributes["tv3d_kind"] == side.SIDE_KINDS["flow"]).all()
    w = np.sqrt(arcs.attributes["flows"])
    r = arcs.half_x[:, 0]
    big, small = np.argmax(w), np.argmin(w)
    assert r[big] >= r[small]  # width grows with the square root of the count (capped)
    first = arcs.attributes["side_index"]
    from_focus = np.array([tr.thread_names[int(tr.thread[tr.flow_from[f]])] == FOCUS for f in first.tolist()])
    wall = spec.layer("wall_calls")
    bottom = float((wall.positions[:, 2] - wall.scales[:, 2] / 2).min())
    # the thickest arc of the focused thread leaves its icicle and reaches the kernel's stream
    k = int(np.flatnonzero(from_focus)[np.argmax(arcs.attributes["flows"][from_focus])])
    f = int(first[k])
    assert arcs.centres[k, 0, 2] >= bottom - 1e-4 and _ring_lane_of(spec, arcs.centres[k, 0]) == -1
    lane = _ring_lane_of(spec, arcs.centres[k, -1])
    assert spec.meta["lane_threads"][lane] == int(tr.thread[tr.flow_to[f]])
    # the other CPU thread's arcs run on the semicircle, from its section to the stream's
    k = int(np.flatnonzero(~from_focus)[np.argmax(arcs.attributes["flows"][~from_focus])])
    f = int(first[k])
    assert spec.meta["lane_threads"][_ring_lane_of(spec, arcs.centres[k, 0])] == int(tr.thread[tr.flow_from[f]])
    assert spec.meta["lane_threads"][_ring_lane_of(spec, arcs.centres[k, -1])] == int(tr.thread[tr.flow_to[f]])
    # every arc in the colour of the thread it reaches (its material that thread's lane's)
    lane_of_thread = {t: k for k, t in enumerate(spec.meta["lane_threads"])}
    reached = np.array([lane_of_thread[int(tr.thread[tr.flow_to[f]])] for f in first.tolist()])
    assert [arcs.materials[m] for m in arcs.material_index.tolist()] == [f"TV3D_flow_lane{k:02d}" for k in reached]
    assert len(set(reached.tolist())) >= 3  # the streams tell apart
    # translucent as the icicle's arcs: the wall's names under the fan of launches still read
    from tracevis3d.layout.flow_arcs import FLOW_ALPHA

    assert {spec.materials[m].color[3] for m in arcs.materials} == {FLOW_ALPHA}


def _arc_samples_in_front_of_a_wall_call(spec, cut_of):
    """(call, pixels): a large box of the focused icicle (a call or a cluster, named by its
    call) with arc samples in front of it: inside the layout's cutaway box of the call
    (``cut_of(call)``), inside the box's front face on the image and away from arc ends."""
    arcs = spec.layer("flows")
    boxes = [spec.layer("wall_calls"), spec.layer("wall_clusters")]
    pos = np.concatenate([b.positions for b in boxes]).astype(np.float64)
    size = np.concatenate([b.scales for b in boxes]).astype(np.float64)
    call = np.concatenate([b.attributes["call_index"] for b in boxes])
    cam, res = spec.camera, spec.resolution
    pts = arcs.centres[:, 4:-4].reshape(-1, 3).astype(np.float64)
    ends = project(cam, np.concatenate([arcs.centres[:, 0], arcs.centres[:, -1]]).astype(np.float64), res)

    def in_front(j, box):
        lo, hi = pos[j] - size[j] / 2, pos[j] + size[j] / 2
        face = project(cam, np.array([[lo[0], lo[1], lo[2]], [hi[0], lo[1], hi[2]]]), res)
        (x0, x1), (y0, y1) = sorted(face[:, 0]), sorted(face[:, 1])
        px = project(cam, pts[inside_box(box, pts)], res)
        if not len(px):
            return px
        ok = (px[:, 0] > x0 + 4) & (px[:, 0] < x1 - 4) & (px[:, 1] > y0 + 4) & (px[:, 1] < y1 - 4)
        far = np.min(np.linalg.norm(px[:, None, :] - ends[None], axis=2), axis=1) > 12
        return px[ok & far]

    tried = 0
    for j in np.argsort(-(size[:, 0] * size[:, 2])).tolist()[:200]:
        lo, hi = pos[j] - size[j] / 2, pos[j] + size[j] / 2
        own = cutaway_box(np.stack([lo, hi]), cam, float(world_per_pixel(cam, ((lo + hi) / 2)[None], res)[0]))
        if len(in_front(j, own)) < 3:
            continue
        px = in_front(j, cut_of(int(call[j])))
        if len(px) >= 3:
            return int(call[j]), px
        tried += 1
        if tried >= 4:
            break
    return None


@pytest.mark.blender
def test_real_pytorch_flows_and_a_cutaway_in_the_rendered_thread_view(pytorch, tmp_path, monkeypatch):
    pytest.importorskip("bpy")
    from tracevis3d.layout import threads_flows

    # every bundle drawn (the ink rule off): the cutaway is checked on arcs in front of the icicle's calls
    monkeypatch.setattr(threads_flows, "THREAD_VIEW_INK_FRAC", 1e9)
    from tracevis3d.blender.figure_report import load_image
    from tracevis3d.blender.hygiene import remove_startup_defaults
    from tracevis3d.blender.render import render_figure
    from tracevis3d.blender.threads_tasks import threads_build_job
    import bpy

    def render(name, **kw):
        # no legend: its flows row would move the composition between the images compared
        bpy.ops.wm.read_factory_settings()
        remove_startup_defaults(bpy.context.scene)
        threads_build_job(pytorch, ThreadsParams(resolution=RES, focus=FOCUS, show_labels=False, show_legend=False,
                                                 **kw)).run(interval=0.01)
        render_figure(str(tmp_path / name), engine="workbench", resolution=RES)
        return load_image(tmp_path / name, channels=3)

    spec = threads_layout(pytorch, ThreadsParams(resolution=RES, focus=FOCUS, show_labels=False, show_legend=False))
    arcs = spec.layer("flows")
    img, off = render("flows.png"), render("no_flows.png", show_flows=False)
    # along the thickest arc the image differs from the same figure without flows
    k = int(np.argmax(arcs.attributes["flows"]))
    pts = project(spec.camera, arcs.centres[k, 2:-2].astype(np.float64), RES)
    x = np.clip(np.round(pts[:, 0]).astype(int), 1, RES[0] - 2)
    y = np.clip(np.round(pts[:, 1]).astype(int), 1, RES[1] - 2)
    near = [np.abs(img[b - 1:b + 2, a - 1:a + 2] - off[b - 1:b + 2, a - 1:a + 2]).max() for a, b in zip(x, y)]
    assert np.mean(np.array(near) > 0.1) > 0.8, near
    # a call of the icicle that arcs pass in front of: hidden there by them, shown again by the cutaway
    found = _arc_samples_in_front_of_a_wall_call(spec, lambda c: threads_layout(pytorch, ThreadsParams(
        resolution=RES, focus=FOCUS, show_labels=False, show_legend=False, cutaway=f"call:{c}")).meta["cutaway"])
    assert found is not None
    call, px = found
    cut = render("cut.png", cutaway=f"call:{call}")

    def at(im):
        xx = np.clip(np.round(px[:, 0]).astype(int), 0, RES[0] - 1)
        yy = np.clip(np.round(px[:, 1]).astype(int), 0, RES[1] - 1)
        return im[yy, xx]

    hidden = np.abs(at(img) - at(off)).max(axis=1) > 0.1
    shown = np.abs(at(cut) - at(off)).max(axis=1) < 0.05
    assert hidden.mean() > 0.6 and shown[hidden].mean() > 0.8, (hidden, shown)
    # arcs elsewhere stay
    assert np.mean([np.abs(cut[b - 1:b + 2, a - 1:a + 2] - off[b - 1:b + 2, a - 1:a + 2]).max() > 0.1
                    for a, b in zip(x, y)]) > 0.5


def test_thread_names_over_arcs_stand_on_plates_in_front_of_them(pytorch):
    """A thread name that arcs pass behind gets a white plate: behind the name, in front of
    every arc sample inside its rectangle on the image (the arcs stop there); a name with
    no arc behind it gets none."""
    spec = threads_layout(pytorch, ThreadsParams(resolution=RES, focus=FOCUS))
    plates, arcs, lab = spec.layer("lane_name_plates"), spec.layer("flows"), spec.labels
    assert plates is not None and 0 < len(plates) < sum(k == "lane" for k in lab.kind)
    eye = np.asarray(spec.camera.location, np.float64)
    pts = arcs.centres.reshape(-1, 3).astype(np.float64)
    pts_px = project(spec.camera, pts, RES)
    names = [j for j, k in enumerate(lab.kind) if k == "lane"]
    name_dist = np.linalg.norm(lab.anchors[names].astype(np.float64) - eye, axis=1)
    for c, size in zip(plates.positions.astype(np.float64), plates.scales.astype(np.float64)):
        corners = project(spec.camera, np.stack([c - size / 2, c + size / 2]), RES)
        (x0, x1), (y0, y1) = sorted(corners[:, 0]), sorted(corners[:, 1])
        inside = (pts_px[:, 0] > x0) & (pts_px[:, 0] < x1) & (pts_px[:, 1] > y0) & (pts_px[:, 1] < y1)
        assert inside.any()
        d = np.linalg.norm(c - eye)
        assert d < np.linalg.norm(pts[inside] - eye, axis=1).min()
        assert d > name_dist.min()


def test_a_trace_without_hand_offs_or_flows_says_so_and_explains_no_curves():
    """Threads that never wait on one another and pass no flows (JAX's compiler threads): the
    title no longer asks "Who waits on whom" to answer "0 hand-offs", and the legend lists the
    threads without the notes on curves that are not there."""
    tr = tracevis3d.synthetic(3000, threads=3, seed=4)
    spec = threads_layout(tr, ThreadsParams(resolution=RES))
    # (then the span: the threads overlap from 377 µs on, 6.5 % of the run before it)
    assert spec.meta["title"].startswith(f"What the threads do · {tr.title_name} · 3 threads, no hand-offs or flows ·")
    legend = [t for t, k in zip(spec.labels.texts, spec.labels.kind) if k == "legend"]
    assert "threads" in legend and not any("wide end" in t or "waiting thread" in t for t in legend), legend


def _posting_threads(n_threads: int = 8, rounds: int = 40) -> "tracevis3d.Trace":
    """A browser-like run: ``n_threads`` threads, each a long loop with short tasks; every
    round, thread k posts a task to thread (k + 1 + round % 3) % n (v1 flow events s/f)."""
    import json as _json
    import tempfile

    ev = []
    for k in range(n_threads):
        ev.append({"ph": "M", "name": "thread_name", "pid": 1, "tid": k + 1, "args": {"name": f"worker {k}"}})
        ev.append({"ph": "X", "name": "RunLoop::Run", "pid": 1, "tid": k + 1, "ts": 0, "dur": 100_000})
    fid = 0
    for r in range(rounds):
        for k in range(n_threads):
            to = (k + 1 + r % 3) % n_threads
            t = 1000 + 2000 * r + 50 * k
            ev.append({"ph": "X", "name": f"Post{k}", "pid": 1, "tid": k + 1, "ts": t, "dur": 20})
            ev.append({"ph": "X", "name": f"Task{to}", "pid": 1, "tid": to + 1, "ts": t + 500, "dur": 30})
            fid += 1
            ev.append({"ph": "s", "name": "post", "cat": "task", "id": fid, "pid": 1, "tid": k + 1, "ts": t + 5})
            ev.append({"ph": "f", "bp": "e", "name": "post", "cat": "task", "id": fid, "pid": 1, "tid": to + 1,
                       "ts": t + 510})
    with tempfile.TemporaryDirectory() as d:
        path = f"{d}/posting.json"
        with open(path, "w") as fh:
            _json.dump({"traceEvents": ev}, fh)
        return tracevis3d.load(path)


def test_flows_among_many_threads_are_one_arc_a_pair_inside_the_semicircle():
    """A Chromium page load's flows between 24 threads crossed the whole figure (arcs from the
    semicircle up through the icicle) and every name.  Where the flows join many pairs of
    threads (`SUMMARY_MIN_PAIRS`), each (starting, reached) pair is one arc inside the
    semicircle, from the section of the thread that starts them to the section of the thread
    they reach, each end at the median time of its flows, in the reached thread's colour, as
    wide as more flows make it; the legend says so.  PyTorch's 6 pairs keep their single arcs."""
    from tracevis3d.layout import threads_flows as tf

    tr = _posting_threads()
    spec = threads_layout(tr, ThreadsParams(resolution=RES))
    m = spec.meta
    assert m["flow_summary"] and m["n_flows_drawn"] == tr.flow_from.size, m  # no flow within a thread
    arcs = spec.layer("flows")
    assert len(arcs) == m["n_flow_arcs"] == 8 * 3  # each thread posts to three others
    # ends on the ring's sections (not the icicle): the starting thread's and the reached thread's
    names = [spec.meta["lane_names"][k] for k in range(len(spec.meta["lane_angles"]))]
    lane_of_name = {n: k for k, n in enumerate(names)}
    first = arcs.attributes["side_index"]
    src_thread = tr.thread[tr.flow_from[first]]
    dst_thread = tr.thread[tr.flow_to[first]]
    o = np.asarray(m["ring_origin"])
    for j in range(len(arcs)):
        for end, thread in ((arcs.centres[j, 0], src_thread[j]), (arcs.centres[j, -1], dst_thread[j])):
            d = (np.asarray(end, np.float64) - o) / m["ring_scale"]
            d[0] /= m["ring_stretch"]
            r = np.hypot(d[0], d[2])
            assert r < m["zero_radius"], (j, r, m["zero_radius"])  # inside the semicircle
            a = np.arctan2(-d[2], d[0]) % (2 * np.pi)
            a0, a1 = m["lane_angles"][lane_of_name[tr.thread_names[thread]]]
            assert a0 - 1e-6 <= a <= a1 + 1e-6, (j, a, a0, a1)
        # the middle bows towards the centre: closer to it than the chord's middle
        mid_chord = 0.5 * (arcs.centres[j, 0] + arcs.centres[j, -1])
        mid = arcs.centres[j, arcs.centres.shape[1] // 2]
        assert np.linalg.norm(mid - o) < np.linalg.norm(mid_chord - o) + 1e-6
    # 40 rounds, each pair every third: 13 or 14 flows an arc, all of them drawn
    assert set(arcs.attributes["flows"].tolist()) <= {13, 14} and arcs.attributes["flows"].sum() == tr.flow_from.size
    legend = " ".join(t for t, k in zip(spec.labels.texts, spec.labels.kind) if k == "legend")
    assert "one arc a pair of threads" in legend, legend
    # fewer pairs: single arcs, as before
    assert not tf.summarised(tr, np.where(np.arange(tr.n_threads) < 3, np.arange(tr.n_threads), -1), 0.0, 1e6)


def test_real_pytorch_flows_keep_their_single_arcs(pytorch):
    from tracevis3d.layout import threads_flows as tf

    spec = threads_layout(pytorch, ThreadsParams(resolution=RES, focus=FOCUS))
    assert not spec.meta["flow_summary"] and spec.meta["n_flow_arcs"] > 6
    assert tf.pair_counts(pytorch, np.arange(pytorch.n_threads), 0.0, float(pytorch.end.max()))[0] < \
        tf.SUMMARY_MIN_PAIRS


def test_a_span_that_leaves_out_part_of_the_run_is_named_in_title_and_note():
    """pytest on a Flask app: four shopper threads ran in the last half of a 991 ms run; the
    view shows the span where two threads work at once (from 474 ms), and its top icicle's axis
    read "0 … 400 ms" with nothing saying where that 0 lay.  The title names the span (as the
    icicle's names its window) and the top's note where its 0 is; a span of (nearly) the
    whole run adds neither."""
    import json as _json
    import tempfile

    ev = [{"ph": "X", "name": "main", "pid": 1, "tid": 1, "ts": 0, "dur": 1_000_000},
          {"ph": "X", "name": "imports", "pid": 1, "tid": 1, "ts": 0, "dur": 450_000},
          {"ph": "X", "name": "run_pool", "pid": 1, "tid": 1, "ts": 500_000, "dur": 490_000},
          {"ph": "X", "name": "acquire", "pid": 1, "tid": 1, "ts": 510_000, "dur": 470_000}]
    for k in range(2, 5):
        ev.append({"ph": "X", "name": "work", "pid": 1, "tid": k, "ts": 500_000 + 1000 * k, "dur": 400_000})
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        _json.dump({"traceEvents": ev}, f)
    tr = tracevis3d.load(f.name)
    spec = threads_layout(tr, ThreadsParams(resolution=RES, focus="1"))
    assert spec.meta["title"].endswith(" · 402 ms window from 502 ms"), spec.meta["title"]  # two or more at work
    legend = " ".join(t for t, k in zip(spec.labels.texts, spec.labels.kind) if k == "legend")  # wrapped lines
    assert "top: 1 as a straight icicle, its 0 at 502 ms into the trace" in legend, legend
    whole = threads_layout(tr, ThreadsParams(resolution=RES, focus="1", window="all"))
    assert " from " not in whole.meta["title"]
    legend = " ".join(t for t, k in zip(whole.labels.texts, whole.labels.kind) if k == "legend")
    assert "top: 1 as a straight icicle" in legend and "its 0 at" not in legend, legend
