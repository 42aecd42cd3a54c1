"""Counters, flows and instants drawn in the icicle's scene (issue 25, items 2, 3 and 5):
the stages of `layout.side_tracks` against brute-force twins, then real traces: a
VizTracer recording with counters (memory, objects, garbage collection) whose tracks follow
the recorded values, and the PyTorch profile whose CPU→GPU flows are arcs from the
launching call to the kernel, seen in the rendered pixels."""
import json

import numpy as np
import pytest

import tracevis3d
import tracevis3d.io
from tracevis3d.io.compact import load_compact, save_compact
from tracevis3d.io.native import load_native, save_native
from tracevis3d.layout import IcicleParams, icicle_layout
from tracevis3d.layout import flow_arcs as flow_mod
from tracevis3d.layout import side_tracks as side
from tracevis3d.layout.camera import project
from tracevis3d.layout.spec import HALO_KEY

from side_traces import crossed_by_arcs, with_side_tracks


def peaks_twin(ts, values, t0, t1, n_cols):
    """Brute force: the step function's peak over each column, sample by sample."""
    w = (t1 - t0) / n_cols
    out = []
    for c in range(n_cols):
        a, b = t0 + c * w, t0 + (c + 1) * w
        vals = [values[k] for k in range(len(ts)) if a <= ts[k] < b]
        held = [values[k] for k in range(len(ts)) if ts[k] <= a]
        if held:
            vals.append(held[-1])
        out.append(max(vals) if vals else np.nan)
    return np.array(out)


@pytest.mark.parametrize("seed", range(6))
def test_column_peaks_match_the_twin(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 60))
    ts = np.sort(rng.uniform(-20, 120, n)) + 0.01 * rng.random(n)  # off the column edges
    values = rng.normal(0, 5, n)
    for n_cols in (1, 7, 50):
        got = side.column_peaks(ts, values, 0.0, 100.0, n_cols)
        want = peaks_twin(ts, values, 0.0, 100.0, n_cols)
        assert np.array_equal(np.isnan(got), np.isnan(want))
        assert np.allclose(got[~np.isnan(got)], want[~np.isnan(want)])


def test_a_spike_narrower_than_a_column_is_kept():
    ts = np.array([0.0, 50.0, 50.001, 90.0])
    got = side.column_peaks(ts, np.array([1.0, 99.0, 1.0, 2.0]), 0.0, 100.0, 4)
    assert got.tolist() == [1.0, 1.0, 99.0, 2.0]


def _counters_trace():
    t = with_side_tracks(tracevis3d.synthetic(3000, threads=2, seed=3))
    span = float(t.end.max())
    t.counter_names = ["memory", "flag", "steady"]
    t.series_names = ["rss", "heap", "on", "v"]
    t.series_units = ["MB", "", "", ""]
    t.series_counter = np.array([0, 0, 1, 2], np.int32)
    t.series_pid = np.zeros(4, np.int64)
    ts = np.linspace(0, span, 200)
    t.counter_ts = np.concatenate([ts, ts, ts, ts])
    t.counter_value = np.concatenate([10 + ts / span * 90, 5 + 0.001 * np.sin(ts), (np.arange(200) % 2) * 1.0,
                                      np.full(200, 7.0)])
    t.counter_series = np.repeat(np.arange(4, dtype=np.int32), 200)
    return t.check()


def test_default_series_vary_most_one_per_counter_first_constants_never():
    t = _counters_trace()
    shown, lo, hi, others = side.choose_series(t, 0.0, float(t.end.max()), [], 3)
    labels = [side.series_label(t, s) for s in shown]
    assert labels == ["memory · rss", "memory · heap", "flag · on"]  # a counter's series stay together
    assert "steady · v" not in labels and "steady · v" in others
    shown, *_ = side.choose_series(t, 0.0, float(t.end.max()), [], 2)  # one per counter before a second
    assert [side.series_label(t, s) for s in shown] == ["memory · rss", "flag · on"]
    shown, *_ = side.choose_series(t, 0.0, float(t.end.max()), ["steady"], 3)  # chosen by name, even constant
    assert [side.series_label(t, s) for s in shown] == ["steady · v"]
    assert side.choose_series(t, 0.0, 1.0, [], 0)[0].size == 0


def test_track_boxes_follow_the_values_and_carry_their_kind():
    t = _counters_trace()
    spec = icicle_layout(t, IcicleParams(resolution=(960, 540), counters=["rss"]))
    layer = spec.layer("counters")
    assert spec.meta["counter_tracks"] == ["memory · rss"]
    assert np.all(layer.attributes["tv3d_kind"] == side.SIDE_KINDS["counter"])
    assert np.all(layer.attributes["side_index"] == 0) and np.all(layer.attributes["call_index"] == -1)
    order = np.argsort(layer.positions[:, 0])
    h = layer.scales[order, 2]
    assert np.all(np.diff(h) >= -1e-6) and h[-1] > 8 * h[0]  # rss grows 10 → 100 MB from base 0
    texts = [tx for tx, k in zip(spec.labels.texts, spec.labels.kind) if k == "counter"]
    assert texts == ["memory · rss", "0–100 MB"]
    none = icicle_layout(t, IcicleParams(resolution=(960, 540), max_counters=0))
    assert not any(L.name == "counters" for L in none.layers) and none.meta["n_counter_tracks"] == 0


def test_flows_and_instants_round_trip_and_become_arcs_and_markers(tmp_path):
    t = tracevis3d.synthetic(2000, threads=3, seed=9)
    wide = np.argsort(-(t.end - t.start) * (t.depth > 0), kind="stable")  # wide calls: drawn, not roots
    a, b = wide[t.thread[wide] == 0][:5], wide[t.thread[wide] == 1][:5]
    t.flow_id = np.arange(5, dtype=np.int64)
    t.flow_from, t.flow_to = a.astype(np.int32), b.astype(np.int32)
    t.instant_ts = np.array([float(t.start[a[0]]), float(t.start[b[1]])])
    t.instant_name = np.zeros(2, np.int32)
    t.instant_names = ["mark"]
    t.instant_thread = np.array([0, -1], np.int32)
    t.instant_scope = np.array([ord("t"), ord("g")], np.uint8)
    t.instant_pid = t.thread_pid[[0, 0]].astype(np.int64)
    t.check()
    save_native(t, tmp_path / "f.tv3d.npz")
    save_compact(t, tmp_path / "f.tv3c")
    for u in (load_native(tmp_path / "f.tv3d.npz"), load_compact((tmp_path / "f.tv3c").read_bytes())):
        for k in ("flow_id", "flow_from", "flow_to", "instant_ts", "instant_thread", "instant_scope", "instant_pid"):
            assert np.array_equal(getattr(u, k), getattr(t, k)), k
    spec = icicle_layout(t, IcicleParams(resolution=(960, 540)))
    flows = spec.layer("flows")
    assert spec.meta["n_flows_drawn"] == 5 and np.all(flows.attributes["tv3d_kind"] == side.SIDE_KINDS["flow"])
    # translucent, so the names under a curtain of arcs (a PyTorch trace's 9,450 flows) still read
    assert {spec.materials[m].color[3] for m in flows.materials} == {flow_mod.FLOW_ALPHA} and flow_mod.FLOW_ALPHA < 0.7
    assert all(spec.materials[m].blended for m in flows.materials)  # smooth in EEVEE, not dithered noise
    inst = spec.layer("instants")
    assert len(inst) == 2 and np.all(inst.attributes["tv3d_kind"] == side.SIDE_KINDS["instant"])
    # the global instant spans every lane, the thread's one its lane only
    tall = inst.scales[:, 2]
    assert tall[inst.attributes["side_index"] == 1][0] > 2 * tall[inst.attributes["side_index"] == 0][0]
    off = icicle_layout(t, IcicleParams(resolution=(960, 540), show_flows=False, show_instants=False))
    assert not any(getattr(L, "name", "") in ("flows", "instants") for L in off.layers)


def test_thread_instants_are_a_rug_under_their_lane_never_over_its_calls():
    """Many lanes folded to about one level each (a browser's): a thread's ticks hang in the
    gap under its lane, never over its boxes nor into the lane below; past `MAX_INSTANTS`
    the ticks kept spread over the whole window, not the earliest."""
    from tracevis3d.layout import instants as inst_mod

    t = tracevis3d.synthetic(6000, threads=16, seed=5)
    n = 40_000
    rng = np.random.default_rng(1)
    t.instant_ts = np.sort(rng.uniform(float(t.start.min()), float(t.end.max()), n))
    t.instant_name, t.instant_names = np.zeros(n, np.int32), ["tick"]
    t.instant_thread = rng.integers(0, 16, n).astype(np.int32)
    t.instant_scope = np.full(n, ord("t"), np.uint8)
    t.instant_pid = t.thread_pid[t.instant_thread].astype(np.int64)
    t.check()
    spec = icicle_layout(t, IcicleParams(resolution=(1920, 1080), max_lanes=0, pack_threads=False))
    m = spec.meta
    lay = spec.layer("instants")
    assert len(lay) == inst_mod.MAX_INSTANTS == m["n_instant_markers"]
    z = np.asarray(m["lane_z"])
    tops = z + np.asarray(m["lane_levels"]) * m["level_height"]
    lane = np.asarray(m["lane_threads"]).tolist()
    k = np.array([lane.index(int(t.instant_thread[i])) for i in lay.attributes["side_index"]])
    lo = lay.positions[:, 2] - lay.scales[:, 2] / 2
    hi = lay.positions[:, 2] + lay.scales[:, 2] / 2
    eps = 1e-4 * m["level_height"]
    assert np.all(hi <= z[k] + eps)  # under the lane's base: over none of its calls
    below = np.where(k + 1 < z.size, tops[np.minimum(k + 1, z.size - 1)], -np.inf)
    assert np.all(lo >= below - eps)  # and not into the next lane
    assert np.all(hi - lo > 0.5 * float(np.median(m["world_per_pixel"])))  # yet seen: over half a pixel tall
    x = lay.positions[:, 0]
    assert x.min() < 0.05 * spec.meta["params"]["time_length"] and x.max() > 0.95 * spec.meta["params"]["time_length"]


def test_a_low_counter_track_has_its_name_and_range_on_one_line(monkeypatch):
    """A track too low for two lines of text (a room under one of many lanes) carries
    "name  range" on one line, the range whole; a tall one its name over its range."""
    texts = side.one_line_texts(["MemoryUsage · TotalStorage", "m"], ["0–79", "0–1.2 MB"])
    assert texts[1] == "m  0–1.2 MB"
    from tracevis3d.layout.annotate import MAX_LANE_NAME_EM
    from tracevis3d.layout.text import text_width

    long = side.one_line_texts(["MemoryUsage · TotalStorage · PendingTransfersOnDisk"], ["0–79 kB"])[0]
    assert long.endswith("  0–79 kB") and "…" in long and text_width(long) <= MAX_LANE_NAME_EM, long
    t = _counters_trace()
    tall = icicle_layout(t, IcicleParams(resolution=(1280, 720), counters=["rss"]))
    got = [x for x, kind in zip(tall.labels.texts, tall.labels.kind) if kind == "counter"]
    assert "memory · rss" in got and any(x.endswith(" MB") and "memory" not in x for x in got), got
    # a track lower than `TWO_LINE_TRACK_SIZES` label sizes (here: every track, the threshold
    # raised; Chromium's page load: a 24-px track under a lane of 24 folded ones, 14-px text)
    monkeypatch.setattr(side, "TWO_LINE_TRACK_SIZES", 1e6)
    low = icicle_layout(t, IcicleParams(resolution=(1280, 720), counters=["rss"]))
    got = [x for x, kind in zip(low.labels.texts, low.labels.kind) if kind == "counter"]
    assert len(got) == 1 and got[0].startswith("memory · rss  0–") and got[0].endswith(" MB"), got


# ----------------------------------------------------------------- real traces, rendered
def _render(trace, path, **params):
    bpy = pytest.importorskip("bpy")
    from tracevis3d.blender.figure_report import load_image
    from tracevis3d.blender.hygiene import remove_startup_defaults
    from tracevis3d.blender.render import render_figure
    from tracevis3d.blender.scene import build_icicle

    bpy.ops.wm.read_factory_settings()
    remove_startup_defaults(bpy.context.scene)
    p = IcicleParams(resolution=(1280, 720), **params)
    build_icicle(trace, p)
    render_figure(str(path), engine="workbench", resolution=p.resolution)
    return load_image(path, channels=3), icicle_layout(trace, p)


def _blank(img, pts) -> np.ndarray:
    """Is the image white (background) at each pixel (x right, y down)?"""
    x = np.clip(np.round(pts[:, 0]).astype(int), 0, img.shape[1] - 1)
    y = np.clip(np.round(pts[:, 1]).astype(int), 0, img.shape[0] - 1)
    return img[y, x].min(axis=1) > 0.97


@pytest.fixture(scope="module")
def counters_trace(counters_trace_path):
    return tracevis3d.load(counters_trace_path)


@pytest.mark.blender
def test_real_counters_are_tracks_whose_heights_follow_the_recorded_values(counters_trace, tmp_path):
    tr = counters_trace
    assert {"memory", "objects", "garbage collection"} <= set(tr.counter_names)
    img, spec = _render(tr, tmp_path / "counters.png", counters=["traced_mb"])
    assert spec.meta["counter_tracks"] == ["memory · traced_mb"]
    s = tr.series_names.index("traced_mb")
    b = side.series_bounds(tr)
    ts, v = tr.counter_ts[b[s]:b[s + 1]], tr.counter_value[b[s]:b[s + 1]]
    bottom, top = spec.meta["counter_track_z"][0]
    track_h = top - bottom
    x_us = np.linspace(ts[0], ts[-1], 12)[1:-1]  # times inside the recording
    held = v[np.searchsorted(ts, x_us, side="right") - 1]
    frac = held / v.max()
    wx = (x_us - spec.meta["t0"]) * spec.meta["world_per_us"]
    inside = np.stack([wx, np.zeros_like(wx), bottom + 0.5 * frac * track_h], 1)
    above = np.stack([wx, np.zeros_like(wx), np.full_like(wx, bottom + 0.93 * track_h)], 1)
    cam = spec.camera
    blank_in = _blank(img, project(cam, inside, spec.resolution))
    blank_above = _blank(img, project(cam, above, spec.resolution))
    assert not blank_in[frac > 0.15].any(), (frac, blank_in)  # the area reaches up to the value
    assert blank_above[frac < 0.5].all(), (frac, blank_above)  # and no higher
    assert not blank_above[frac > 0.97].any(), (frac, blank_above)
    texts = [t for t, k in zip(spec.labels.texts, spec.labels.kind) if k == "counter"]
    assert texts[0] == "memory · traced_mb" and texts[1].startswith("0–")
    # the tracks' height is taken from the lanes' budget, not from their names
    default = icicle_layout(tr, IcicleParams())
    assert default.meta["n_counter_tracks"] == 3
    names = sum(k in ("call", "run", "row", "group") for k in default.labels.kind)
    without = icicle_layout(tr, IcicleParams(max_counters=0))
    # (the tracks take about a quarter of the height: fewer levels can be named, never none;
    # the squeeze keeps each lane's widest calls named: 30 of 84 and 42 of 83 names on two
    # recordings, 32 of 62 before it thinned the nameless levels first)
    assert names >= 0.3 * sum(k in ("call", "run", "row", "group") for k in without.labels.kind) and names >= 10


def _label_corners(labels, i, anchor=None, size=None):
    """The 4 corners of label i's rectangle, brute force: its rotation's matrix, product of the
    three axis rotations (Blender's XYZ Euler), applied to the text's local corners."""
    ex, ey, ez = (float(v) for v in labels.rotation[i])
    rx = np.array([[1, 0, 0], [0, np.cos(ex), -np.sin(ex)], [0, np.sin(ex), np.cos(ex)]])
    ry = np.array([[np.cos(ey), 0, np.sin(ey)], [0, 1, 0], [-np.sin(ey), 0, np.cos(ey)]])
    rz = np.array([[np.cos(ez), -np.sin(ez), 0], [np.sin(ez), np.cos(ez), 0], [0, 0, 1]])
    m = rz @ ry @ rx
    anchor = np.asarray(labels.anchors[i] if anchor is None else anchor, np.float64)
    size = float(labels.sizes[i] if size is None else size)
    from tracevis3d.layout.text import text_width

    w = text_width(labels.texts[i]) * size
    x0 = -int(labels.align[i]) / 2.0 * w
    return np.array([anchor + m @ np.array([x0 + dx * w, dz * size, 0.0]) for dx in (0.0, 1.0) for dz in (-0.25, 0.8)])


def test_names_that_arcs_cross_stand_in_front_of_them_on_the_same_pixels():
    """A name a flow arc crosses on the picture is brought in front of the arc, scaled about the
    camera so that every pixel of it stays where it was (EEVEE's lit arcs hid the letters under
    them: a GPU render of the PyTorch profile read "M mcpy Ht D"): its rectangle projects where
    the name's rectangle on its box would, and every arc point over it (32 points a sample
    interval, each a disc of its width) is farther away than its farthest corner.  A name the
    arcs do not cross keeps its place; no arcs, nothing moves."""
    t = crossed_by_arcs()
    res = (960, 540)
    spec = icicle_layout(t, IcicleParams(resolution=res))
    lab, cam, arcs = spec.labels, spec.camera, spec.layer("flows")
    scale = lab.attributes[flow_mod.ARC_SCALE_KEY]
    moved = np.flatnonzero(scale > 0)  # the names and their halos
    halos = [i for i in moved if lab.kind[i] == "halo"]
    names = [i for i in moved if lab.kind[i] != "halo"]
    assert len(names) == len(halos) == spec.meta["n_labels_over_arcs"] > 0
    halo_of = {(lab.texts[i], int(lab.call_index[i])): i for i in halos}
    for i in names:  # a light halo, thickened, between the name and the arcs
        h = halo_of[(lab.texts[i], int(lab.call_index[i]))]
        assert lab.material[h] == flow_mod.HALO_MATERIAL and lab.attributes[HALO_KEY][h] > 0 > lab.attributes[HALO_KEY][i]
        assert scale[i] < scale[h] < 1_000_000  # farther than the name, nearer than its place
        # apart by more than the depth buffer resolves (thin arcs: a gap of their width fought)
        assert scale[h] - scale[i] >= 1e6 * flow_mod.LABEL_DEPTH_GAP - 2
    eye = np.asarray(cam.location, np.float64)
    fwd = np.asarray(cam.target, np.float64) - eye
    fwd /= np.linalg.norm(fwd)
    c = arcs.centres.astype(np.float64)
    u = np.linspace(0, 1, 32, endpoint=False)[None, None, :, None]
    dense = (c[:, :-1, None] * (1 - u) + c[:, 1:, None] * u).reshape(-1, 3)
    r = np.repeat(arcs.half_x[:, :-1].astype(np.float64), 32, axis=1).reshape(-1)
    dense_px = project(cam, dense, res)
    from tracevis3d.layout.camera import world_per_pixel

    r_px = r / world_per_pixel(cam, dense, res)
    plain = icicle_layout(t, IcicleParams(resolution=res, show_flows=False))
    for i in moved:
        k = scale[i] / 1e6
        home = eye + (lab.anchors[i].astype(np.float64) - eye) / k
        corners = _label_corners(lab, i)
        home_px = project(cam, _label_corners(lab, i, home, lab.sizes[i] / k), res)
        assert np.abs(project(cam, corners, res) - home_px).max() < 0.05  # the same pixels
        lo, hi = home_px.min(0), home_px.max(0)
        over = ((dense_px[:, 0] + r_px >= lo[0]) & (dense_px[:, 0] - r_px <= hi[0])
                & (dense_px[:, 1] + r_px >= lo[1]) & (dense_px[:, 1] - r_px <= hi[1]))
        assert over.any()
        assert ((corners - eye) @ fwd).max() < ((dense[over] - eye) @ fwd - r[over]).min()  # in front of them
        assert k < 1.0  # towards the camera
    kept = [i for i in range(len(lab)) if scale[i] <= 0 and lab.space[i] == "world"]
    assert kept
    for i in kept:  # no arc in front of a name left in place (its rectangle 1.5 px in from each side)
        corners = _label_corners(lab, i)
        px = project(cam, corners, res)
        lo, hi = px.min(0) + 1.5, px.max(0) - 1.5
        over = ((dense_px[:, 0] + r_px >= lo[0]) & (dense_px[:, 0] - r_px <= hi[0])
                & (dense_px[:, 1] + r_px >= lo[1]) & (dense_px[:, 1] - r_px <= hi[1]))
        assert not over.any() or ((corners - eye) @ fwd).max() < ((dense[over] - eye) @ fwd - r[over]).min(), \
            lab.texts[i]
    assert flow_mod.ARC_SCALE_KEY not in plain.labels.attributes


@pytest.mark.blender
def test_flow_arcs_cast_no_shadows_and_names_over_them_are_written_in_front():
    """Translucent arcs cast no shadows on the boxes (EEVEE drew them as dark blotches on a
    box's top face); the boxes still do.  The names the still brought in front of the arcs are
    written where the layout put them, with their scale kept for an animation to undo."""
    bpy = pytest.importorskip("bpy")
    from tracevis3d.blender.hygiene import remove_startup_defaults
    from tracevis3d.blender.scene import build_icicle

    bpy.ops.wm.read_factory_settings()
    remove_startup_defaults(bpy.context.scene)
    t = crossed_by_arcs()
    p = IcicleParams(resolution=(960, 540))
    build_icicle(t, p)
    assert bpy.data.objects["TV3D_flows"].visible_shadow is False
    assert bpy.data.objects["TV3D_calls"].visible_shadow is True
    # every face of the arcs' mesh says it is a flow (issue 68: the tube writer dropped tv3d_kind)
    from tracevis3d.layout.side_tracks import SIDE_KINDS

    me = bpy.data.objects["TV3D_flows"].data
    kinds = np.zeros(len(me.polygons), np.int32)
    me.attributes["tv3d_kind"].data.foreach_get("value", kinds)
    assert kinds.size and (kinds == SIDE_KINDS["flow"]).all()
    assert "side_index" in me.attributes
    spec = icicle_layout(t, p)
    scale = spec.labels.attributes[flow_mod.ARC_SCALE_KEY]
    fonts = {int(ob.name.rsplit("_", 1)[1]): ob for ob in bpy.data.objects
             if ob.type == "FONT" and ob.name.startswith("TV3D_label_")}
    moved = np.flatnonzero(scale > 0)
    assert moved.size
    for i in moved:
        ob = fonts[int(i)]
        assert ob[flow_mod.ARC_SCALE_KEY] == scale[i]
        assert np.allclose(tuple(ob.location), spec.labels.anchors[i], atol=1e-5)
        halo = spec.labels.kind[i] == "halo"  # its glyphs thickened; the name's not
        assert (ob.data.offset > 0) == halo and ob.data.materials[0].name.startswith(
            flow_mod.HALO_MATERIAL if halo else "TV3D_text")


def test_real_pytorch_flows_are_arcs_from_the_launching_call_to_the_kernel(realdata, tmp_path):
    path = realdata / "hta-trace-diff" / "control.json.gz"
    if not path.exists():
        pytest.skip(f"{path} not found")
    tr = tracevis3d.load(path)
    assert tr.flow_from.size > 1000
    img, spec = _render(tr, tmp_path / "flows.png")
    off, _ = _render(tr, tmp_path / "no_flows.png", show_flows=False)
    arcs = spec.layer("flows")
    # most flows drawn: the largest bundles, as many as leave the lanes seen (`flow_arcs._within_ink`)
    assert spec.meta["n_flows_drawn"] > 0.4 * tr.flow_from.size
    assert flow_mod.MIN_ICICLE_FLOW_ARCS < spec.meta["n_flow_arcs"] == len(arcs) <= flow_mod.MAX_ICICLE_FLOW_ARCS
    # the thickest arc: its ends sit on the calls its first flow binds (the launch, the kernel)
    k = int(np.argmax(arcs.attributes["flows"]))
    f = int(arcs.attributes["side_index"][k])
    lane_z = np.asarray(spec.meta["lane_z"])
    lanes = list(spec.meta["lane_threads"])
    la, lb = lanes.index(int(tr.thread[tr.flow_from[f]])), lanes.index(int(tr.thread[tr.flow_to[f]]))
    z0, z1 = arcs.centres[k, 0, 2], arcs.centres[k, -1, 2]
    assert lane_z[la] <= z0 and (la == 0 or z0 < lane_z[la - 1])  # leaves the launching thread's lane
    assert lane_z[lb] <= z1 and (lb == 0 or z1 < lane_z[lb - 1])  # reaches the kernel's stream
    x0 = (tr.start[tr.flow_from[f]] - spec.meta["t0"]) * spec.meta["world_per_us"]
    assert spec.meta["flow_cell_px"] >= flow_mod.FLOW_CELL_PX  # the columns its bundles took (wider for many)
    cell = spec.meta["flow_cell_px"] * float(np.median(spec.meta["world_per_pixel"]))
    assert abs(arcs.centres[k, 0, 0] - x0) <= cell
    # in the pixels: along the arc the image differs from the same figure without flows
    pts = project(spec.camera, arcs.centres[k, 2:-2], spec.resolution)
    x = np.clip(np.round(pts[:, 0]).astype(int), 1, img.shape[1] - 2)
    y = np.clip(np.round(pts[:, 1]).astype(int), 1, img.shape[0] - 2)
    near = [np.abs(img[yy - 1:yy + 2, xx - 1:xx + 2] - off[yy - 1:yy + 2, xx - 1:xx + 2]).max() for xx, yy in zip(x, y)]
    assert np.mean(np.array(near) > 0.1) > 0.8, near


@pytest.mark.blender
def test_many_global_instants_are_ticks_not_bars_over_every_call():
    """Up to `MAX_BARS` global instants are bars over every lane; more (Chrome's start-up in
    Perfetto's format: 105 "PeakMemoryTracking" lines over the whole figure) are ticks in the rug
    of the lowest lane, under its calls."""
    from tracevis3d.layout import instants as inst_mod

    t = tracevis3d.synthetic(3000, threads=4, seed=6)
    for n, bars in ((inst_mod.MAX_BARS, True), (5 * inst_mod.MAX_BARS, False)):
        t.instant_ts = np.linspace(float(t.start.min()), float(t.end.max()), n)
        t.instant_name, t.instant_names = np.zeros(n, np.int32), ["mark"]
        t.instant_thread = np.full(n, -1, np.int32)
        t.instant_scope = np.full(n, ord("g"), np.uint8)
        t.instant_pid = np.full(n, -1, np.int64)
        t.check()
        spec = icicle_layout(t, IcicleParams(resolution=(1920, 1080)))
        m, lay = spec.meta, spec.layer("instants")
        z = np.asarray(m["lane_z"])
        tops = z + np.asarray(m["lane_levels"]) * m["level_height"]
        hi = lay.positions[:, 2] + lay.scales[:, 2] / 2
        if bars:
            assert np.allclose(hi, tops.max())  # over every lane
        else:
            assert np.all(hi <= z.min() + 1e-4 * m["level_height"])  # under the lowest lane's calls


def test_process_instants_stand_over_their_process_and_follow_it_through_subsets(tmp_path):
    """A process's instant spans the lanes of its process only (not every lane), a thread
    subset keeps it only with a thread of its process, and its pid survives the files; a file
    from before ``instant_pid`` gets the thread's process for thread instants, -1 otherwise."""
    t = tracevis3d.synthetic(3000, threads=3, seed=4)
    t.thread_pid = np.array([100, 100, 200], np.int64)
    t0 = float(t.end.max()) * 0.5
    t.instant_ts = np.full(4, t0)
    t.instant_name = np.arange(4, dtype=np.int32)
    t.instant_names = ["thread0", "proc100", "proc200", "global"]
    t.instant_thread = np.array([0, -1, -1, -1], np.int32)
    t.instant_scope = np.frombuffer(b"tppg", np.uint8).copy()
    t.instant_pid = np.array([100, 100, 200, 100], np.int64)
    t.check()
    spec = icicle_layout(t, IcicleParams(resolution=(960, 540), fold="none"))
    inst = spec.layer("instants")
    lanes = spec.meta.get("lane_threads")
    z_lo = inst.positions[:, 2] - inst.scales[:, 2] / 2
    z_hi = inst.positions[:, 2] + inst.scales[:, 2] / 2
    by = {int(k): (float(z_lo[j]), float(z_hi[j])) for j, k in enumerate(inst.attributes["side_index"])}
    assert sorted(by) == [0, 1, 2, 3], by
    # process 100 (threads 0 and 1) and process 200 (thread 2) do not overlap; global covers both
    assert by[1][1] <= by[2][0] + 1e-6 or by[2][1] <= by[1][0] + 1e-6, (by, lanes)
    assert by[3][0] <= min(by[1][0], by[2][0]) + 1e-6 and by[3][1] >= max(by[1][1], by[2][1]) - 1e-6
    assert by[0][1] - by[0][0] < by[1][1] - by[1][0]

    # a process whose lanes are not adjacent (200 between 100's, in the order the user asks:
    # the default keeps a process's lanes together): a bar over each run of its lanes, none
    # over the other process's lane
    t2 = tracevis3d.Trace(**{k: getattr(t, k) for k in t.__dataclass_fields__})
    t2.thread_pid = np.array([100, 200, 100], np.int64)
    spec2 = icicle_layout(t2, IcicleParams(resolution=(960, 540), fold="none", thread_order=[0, 1, 2]))
    inst2 = spec2.layer("instants")
    lanes2 = spec2.meta["lane_threads"]
    assert lanes2 == [0, 1, 2], lanes2
    zl = inst2.positions[:, 2] - inst2.scales[:, 2] / 2
    zh = inst2.positions[:, 2] + inst2.scales[:, 2] / 2
    side_of = inst2.attributes["side_index"]
    bars_100 = [(float(zl[j]), float(zh[j])) for j in np.flatnonzero(side_of == 1)]
    (p200,) = [(float(zl[j]), float(zh[j])) for j in np.flatnonzero(side_of == 2)]
    assert len(bars_100) == 2, bars_100
    for lo, hi in bars_100:  # neither crosses process 200's lane
        assert hi <= p200[0] + 1e-6 or lo >= p200[1] - 1e-6, (bars_100, p200)

    only = t.subset(thread=[2])
    assert sorted(only.instant_names[k] for k in only.instant_name) == ["global", "proc200"]
    assert sorted(only.instant_pid.tolist()) == [100, 200]
    both = t.subset(thread=[0])
    assert sorted(both.instant_names[k] for k in both.instant_name) == ["global", "proc100", "thread0"]

    save_native(t, tmp_path / "f.tv3d.npz")
    save_compact(t, tmp_path / "f.tv3c")
    for u in (load_native(tmp_path / "f.tv3d.npz"), load_compact((tmp_path / "f.tv3c").read_bytes())):
        assert u.instant_pid.tolist() == [100, 100, 200, 100]
    old = tracevis3d.Trace(**{k: getattr(t, k) for k in t.__dataclass_fields__ if k != "instant_pid"})
    assert old.instant_pid.tolist() == [100, -1, -1, -1]
    old.check()


def test_picking_reports_counters_flows_and_instants():
    bpy = pytest.importorskip("bpy")
    from tracevis3d.blender.hygiene import remove_startup_defaults
    from tracevis3d.blender.pick import describe_side, pick_ray_detail
    from tracevis3d.blender.scene import build_icicle

    t = _counters_trace()
    wide = np.argsort(-(t.end - t.start) * (t.depth > 0), kind="stable")
    a, b = wide[t.thread[wide] == 0][:1], wide[t.thread[wide] == 1][:1]
    t.flow_id, t.flow_from, t.flow_to = np.array([7], np.int64), a.astype(np.int32), b.astype(np.int32)
    t.instant_ts, t.instant_name, t.instant_names = np.array([float(t.end.max()) * 0.9]), np.zeros(1, np.int32), ["x"]
    t.instant_thread, t.instant_scope = np.array([1], np.int32), np.array([ord("t")], np.uint8)
    t.instant_pid = t.thread_pid[[1]].astype(np.int64)
    t.check()
    bpy.ops.wm.read_factory_settings()
    remove_startup_defaults(bpy.context.scene)
    p = IcicleParams(resolution=(960, 540), counters=["rss"])
    build_icicle(t, p)
    spec = icicle_layout(t, p)
    eye = np.asarray(spec.camera.location)

    def pick(point):
        return pick_ray_detail(tuple(eye), tuple(np.asarray(point) - eye))

    arc = spec.layer("flows").centres[0]
    hit = pick(arc[len(arc) // 2])
    assert hit is not None and hit["kind"] == "flow" and hit["index"] == 0, hit
    assert describe_side(t, hit)["id"] == 7 and describe_side(t, hit)["category"] == ""  # set without one
    col = spec.layer("counters")
    j = int(np.argmax(col.scales[:, 2]))
    front = col.positions[j] - np.array([0.0, col.scales[j, 1] / 2 - 1e-4, 0.0])
    hit = pick(front)
    assert hit is not None and hit["kind"] == "counter" and describe_side(t, hit)["name"] == "memory · rss", hit
    mark = spec.layer("instants").positions[0]
    hit = pick(mark)
    assert hit is not None and hit["kind"] == "instant" and describe_side(t, hit)["name"] == "x", hit


def pack_rows_twin(start, end, max_rows):
    rows, ends, over = [], [], 0
    for s, e in zip(start, end):
        free = [k for k, x in enumerate(ends) if x <= s]
        if free:
            r = free[0]
        elif len(ends) < max_rows:
            ends.append(-np.inf)
            r = len(ends) - 1
        else:
            over += 1
            r = int(np.argmin(ends))
        ends[r] = max(ends[r], e)
        rows.append(r)
    return rows, len(ends), over


@pytest.mark.parametrize("seed", range(8))
def test_pack_rows_matches_the_twin(seed):
    from tracevis3d.kernels.rows import pack_rows

    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 80))
    start = np.sort(rng.integers(0, 100, n).astype(np.float64))
    end = start + rng.integers(0, 30, n)
    for max_rows in (1, 3, 8):
        row, used, over = pack_rows(start, end, max_rows)
        want = pack_rows_twin(start, end, max_rows)
        assert (row.tolist(), int(used), int(over)) == want
        if over == 0:  # no two slices of a row overlap
            for r in range(used):
                s, e = start[row == r], end[row == r]
                assert np.all(s[1:] >= e[:-1])


def merge_row_boxes_twin(x0, x1, row, px):
    """Per row, in order: a box joins the row's open box when it starts inside it, or when one
    of the two is narrower than a pixel and it starts within a pixel of the open box's end."""
    out, open_ = [], {}
    for i, (a, b, r) in enumerate(zip(x0, x1, row)):
        o = open_.get(r)
        if o is not None and (a < o[2] or ((b - a < px or o[2] - o[1] < px) and a < o[2] + px)):
            o[2] = max(o[2], b)
            o[3] += 1
            continue
        if o is not None:
            out.append(tuple(o))
        open_[r] = [i, a, b, 1]
    out += [tuple(open_[r]) for r in sorted(open_)]
    return out


@pytest.mark.parametrize("seed", range(8))
def test_merge_row_boxes_matches_the_twin(seed):
    from tracevis3d.kernels.rows import merge_row_boxes

    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 120))
    x0 = np.sort(rng.uniform(0, 100, n))
    x1 = x0 + rng.choice([0.1, 0.5, 2.0, 30.0], n)
    row = rng.integers(0, 3, n).astype(np.int32)
    first, a, b, cnt = merge_row_boxes(x0, x1, row, 3, 1.0)
    assert list(zip(first.tolist(), a.tolist(), b.tolist(), cnt.tolist())) == merge_row_boxes_twin(
        x0.tolist(), x1.tolist(), row.tolist(), 1.0)
    assert cnt.sum() == n


def test_running_totals_are_not_drawn_unless_asked_for():
    """Chrome's per-thread "thread_time" counters (Perfetto traces carry one for every thread) are
    running totals: by default they give way to every other counter, and draw only when named."""
    import dataclasses

    t = _counters_trace()
    names = list(t.counter_names)
    k = names.index("memory")
    names[k] = "thread_time (tid 7)"
    u = dataclasses.replace(t, counter_names=names)
    shown, *_ = side.choose_series(u, 0.0, float(u.end.max()), [], 3)
    assert not any(side.series_label(u, s).startswith("thread_time") for s in shown)
    shown, *_ = side.choose_series(u, 0.0, float(u.end.max()), ["thread_time"], 3)
    assert shown.size and all(side.series_label(u, s).startswith("thread_time") for s in shown)


def test_a_deep_async_tower_draws_as_few_boxes():
    """60,000 nested async slices (issue 68: 17 s and 0.9 GB to draw, one box per slice in the
    overflow row): the lane draws one box per row."""
    from tracevis3d.layout.async_lanes import MAX_ASYNC_ROWS
    from tracevis3d.layout.icicle import icicle_layout

    n = 60_000
    ev = [{"ph": "X", "name": "main", "pid": 1, "tid": 1, "ts": 0, "dur": 2 * n + 10}]
    ev += [{"ph": "b", "name": f"s{k % 7}", "cat": "net", "id": 1, "pid": 1, "tid": 1, "ts": k} for k in range(n)]
    ev += [{"ph": "e", "name": f"s{k % 7}", "cat": "net", "id": 1, "pid": 1, "tid": 1, "ts": 2 * n - k}
           for k in range(n - 1, -1, -1)]
    t = tracevis3d.io.load_bytes(json.dumps({"traceEvents": ev}).encode())
    assert t.async_start.size == n and int(t.async_depth.max()) == n - 1
    spec = icicle_layout(t, IcicleParams(resolution=(960, 540)))
    assert len(spec.layer("async")) <= MAX_ASYNC_ROWS


def test_async_slices_are_lanes_of_their_own():
    t = with_side_tracks(tracevis3d.synthetic(2000, threads=2, seed=4))
    span = float(t.end.max())
    t.async_start, t.async_end = t.async_start * span / 10, t.async_end * span / 10
    t.check()
    spec = icicle_layout(t, IcicleParams(resolution=(960, 540), max_counters=0))
    assert spec.meta["async_lanes"] == ["async · net (pid 10)", "async · net (pid 11)"]
    boxes = spec.layer("async")
    assert len(boxes) == 4 and np.all(boxes.attributes["tv3d_kind"] == side.SIDE_KINDS["async"])
    (b0, t0), (b1, t1) = spec.meta["below_z"]
    z = boxes.positions[:, 2]
    own = boxes.attributes["side_index"]
    assert np.all((z[own < 3] > b0) & (z[own < 3] < t0)) and np.all((z[own == 3] > b1) & (z[own == 3] < t1))
    # nested slices of one track stack upwards
    assert z[own == 0][0] < z[own == 1][0] < z[own == 2][0]
    assert max(spec.meta["below_z"][0]) < min(spec.meta["lane_z"])  # under the thread lanes
    off = icicle_layout(t, IcicleParams(resolution=(960, 540), max_counters=0, show_async=False))
    assert "async_lanes" not in off.meta


def test_chrome_export_round_trips_counters_async_and_flows(tmp_path):
    t = with_side_tracks(tracevis3d.synthetic(3000, threads=3, seed=6))
    rng = np.random.default_rng(1)
    src = rng.choice(len(t), 40, replace=False)
    dst = rng.choice(len(t), 40, replace=False)
    later = t.start[dst] > t.end[src]  # a flow goes forward in time
    src, dst = np.where(later, src, dst), np.where(later, dst, src)
    t.flow_id = np.arange(40, dtype=np.int64) + 100
    t.flow_from, t.flow_to = src.astype(np.int32), dst.astype(np.int32)
    t.counter_value = np.abs(t.counter_value)  # (any finite value is fine; keep the units simple)
    t.check()
    path = tmp_path / "side.json.gz"
    tracevis3d.save(t, path, format="chrome")
    u = tracevis3d.load(path)
    assert u.counter_names == t.counter_names and u.series_names == t.series_names
    assert np.allclose(u.counter_value, t.counter_value) and np.allclose(u.counter_ts, t.counter_ts, atol=1e-3)
    assert np.allclose(u.async_start, t.async_start, atol=1e-3) and np.allclose(u.async_end, t.async_end, atol=1e-3)
    assert list(u.async_track_cats) == list(t.async_track_cats)
    assert [u.async_names[i] for i in u.async_name] == [t.async_names[i] for i in t.async_name]
    # flows bind to the same calls wherever the call has time of its own to bind to
    from tracevis3d.io.chrome_writer import flow_point_times

    def own(calls):
        ts = flow_point_times(t, calls)
        kids = [np.flatnonzero(t.parent == c) for c in calls]
        return np.array([not any(t.start[k] <= x < t.end[k] for k in ks) for x, ks in zip(ts, kids)])

    ok = own(src) & own(dst)

    o = np.argsort(u.flow_id, kind="stable")
    assert np.array_equal(u.flow_id[o], t.flow_id)

    def same(i, j):  # a call by what it is (the importer may order equal starts differently)
        return (abs(u.start[i] - t.start[j]) < 1e-2 and abs(u.end[i] - t.end[j]) < 1e-2
                and u.thread_names[u.thread[i]] == t.thread_names[t.thread[j]] and u.name(i) == t.name(j))

    bound = np.array([same(u.flow_from[o[k]], src[k]) and same(u.flow_to[o[k]], dst[k]) for k in range(40)])
    assert ok.sum() >= 20 and bound[ok].all(), np.flatnonzero(ok & ~bound)


@pytest.mark.parametrize("seed", range(5))
def test_window_ranges_match_the_twin(seed):
    rng = np.random.default_rng(seed)
    t = _counters_trace()
    n = 300
    t.series_names, t.series_units = [f"s{k}" for k in range(7)], [""] * 7
    t.series_counter, t.series_pid = np.zeros(7, np.int32), np.zeros(7, np.int64)
    t.counter_names = ["c"]
    t.counter_series = np.sort(rng.integers(0, 6, n)).astype(np.int32)  # series 6 has no sample
    t.counter_ts = np.concatenate([np.sort(rng.uniform(0, 100, int((t.counter_series == k).sum())))
                                   for k in range(7)])
    t.counter_value = rng.normal(0, 3, n)
    t.check()
    for t0, t1 in ((20.0, 40.0), (0.0, 100.0), (99.0, 99.5), (-5.0, 1.0)):
        lo, hi = side.window_ranges(t, t0, t1)
        for k in range(7):  # the twin: searchsorted per series, as the step function is defined
            m = t.counter_series == k
            ts, v = t.counter_ts[m], t.counter_value[m]
            a = max(int(np.searchsorted(ts, t0, side="right")) - 1, 0)
            z = int(np.searchsorted(ts, t1, side="right"))
            if z > a:
                assert (lo[k], hi[k]) == (v[a:z].min(), v[a:z].max()), (k, t0, t1)
            else:
                assert np.isnan(lo[k]) and np.isnan(hi[k])


def test_counter_tracks_stand_under_the_lanes_of_their_process(tmp_path):
    """Two processes of two threads each, a varying counter in each: the first process's
    track stands in the room under its last lane (above the second process's lanes), the
    second's (its lanes at the bottom) under the time axis; the lanes keep their order and
    no track overlaps a lane. Rendered: the first track's boxes are drawn between the
    lanes."""
    t = tracevis3d.synthetic(4000, threads=4, seed=7)
    span = float(t.end.max())
    t.thread_pid = np.array([100, 100, 200, 200], np.int64)
    t.counter_names = ["memory", "queue"]
    t.series_names = ["rss", "depth"]
    t.series_units = ["MB", ""]
    t.series_counter = np.array([0, 1], np.int32)
    t.series_pid = np.array([100, 200], np.int64)
    ts = np.linspace(0, span, 300)
    t.counter_ts = np.concatenate([ts, ts])
    t.counter_value = np.concatenate([10 + 90 * ts / span, 50 + 40 * np.sin(ts / span * 20)])
    t.counter_series = np.repeat(np.arange(2, dtype=np.int32), 300)
    t.check()
    spec = icicle_layout(t, IcicleParams(resolution=(960, 540)))
    base = np.asarray(spec.meta["lane_z"], np.float64)  # lane 0 on top
    lanes = np.stack([base, base + np.asarray(spec.meta["lane_levels"]) * spec.meta["level_height"]], 1)
    lane_pid = t.thread_pid[np.asarray(spec.meta["lane_threads"])]
    z = np.asarray(spec.meta["counter_track_z"], np.float64)
    place = spec.meta["counter_track_lanes"]
    layer = spec.layer("counters")
    own = layer.attributes["side_index"]
    k_mem, k_q = (list(spec.meta["counter_tracks"]).index(n) for n in ("memory · rss", "queue · depth"))
    j = place[k_mem]
    assert place[k_q] == -1 and j >= 0 and lane_pid[j] == 100 and lane_pid[j + 1] == 200
    b, top = z[k_mem]
    assert lanes[j + 1][1] < b < top < lanes[j][0]  # between its process's last lane and the next process
    assert z[k_q][1] < lanes[:, 0].min()  # under every lane (and the axis)
    zs = layer.positions[own == 0, 2]
    assert np.all((zs > b) & (zs < top))
    img, spec = _render(t, tmp_path / "procs.png")
    from tracevis3d.layout.camera import project

    z = np.asarray(spec.meta["counter_track_z"], np.float64)
    b, top = z[k_mem]

    pts = np.array([[float(x), 0.0, b + 0.15 * (top - b)] for x in np.linspace(0.3, 0.7, 5) * spec.meta.get(
        "time_length", IcicleParams().time_length)])
    assert (~_blank(img, project(spec.camera, pts, (1280, 720)))).mean() >= 0.6


def test_picking_an_async_slice_reports_its_track():
    from tracevis3d.blender.pick import describe_side

    t = with_side_tracks(tracevis3d.synthetic(500, threads=2, seed=4))
    d = describe_side(t, {"kind": "async", "index": 3})
    assert d == {"kind": "async", "name": "request", "category": "net", "id": "7", "scope": "db", "pid": 11,
                 "start_us": 0.5, "end_us": 0.75, "depth": 0}


def _two_category_flows(path):
    """A Chrome trace with v1 flows of two categories sharing an id ("ipc" 1 and "gpu" 1: two
    chains, flows chain by category and id) and a v2 bind_id link (no category)."""
    import json

    ev = [{"ph": "X", "name": n, "pid": 1, "tid": 1 + k % 2, "ts": 20 * k, "dur": 10} for k, n in enumerate("abcdef")]
    ev += [{"ph": "s", "cat": "ipc", "id": 1, "pid": 1, "tid": 1, "ts": 1},
           {"ph": "f", "cat": "ipc", "id": 1, "pid": 1, "tid": 2, "ts": 21, "bp": "e"},
           {"ph": "s", "cat": "gpu", "id": 1, "pid": 1, "tid": 1, "ts": 41},
           {"ph": "f", "cat": "gpu", "id": 1, "pid": 1, "tid": 2, "ts": 61, "bp": "e"}]
    ev[4].update(bind_id=7, flow_out=True)
    ev[5].update(bind_id=7, flow_in=True)
    path.write_text(json.dumps({"traceEvents": ev}))
    return tracevis3d.load(path)


def test_flow_categories_are_read_kept_and_written(tmp_path):
    """Each flow keeps its event's ``cat`` (``flow_cat`` into ``flow_cat_names``; a bind_id
    link has none, ""), through native and compact files, subsets and the Chrome export (a
    flow without a category written as "flow"); a trace built without categories gets one
    unnamed category, and a category outside the table is a clear error."""
    t = _two_category_flows(tmp_path / "cats.json")
    got = {(t.name(int(a)), t.name(int(b))): t.flow_cat_names[int(c)] for a, b, c in
           zip(t.flow_from, t.flow_to, t.flow_cat)}
    assert got == {("a", "b"): "ipc", ("c", "d"): "gpu", ("e", "f"): ""}, got
    save_native(t, tmp_path / "c.tv3d.npz")
    save_compact(t, tmp_path / "c.tv3c")
    for u in (load_native(tmp_path / "c.tv3d.npz"), load_compact((tmp_path / "c.tv3c").read_bytes()),
              t.subset(thread=[0, 1])):
        assert u.flow_cat.tolist() == t.flow_cat.tolist() and u.flow_cat_names == t.flow_cat_names
    tracevis3d.save(t, tmp_path / "back.json", format="chrome")
    u = tracevis3d.load(tmp_path / "back.json")
    back = {(u.name(int(a)), u.name(int(b))): u.flow_cat_names[int(c)] for a, b, c in
            zip(u.flow_from, u.flow_to, u.flow_cat)}
    assert back == {("a", "b"): "ipc", ("c", "d"): "gpu", ("e", "f"): "flow"}, back
    old = tracevis3d.Trace(**{k: getattr(t, k) for k in t.__dataclass_fields__ if k not in ("flow_cat",
                                                                                           "flow_cat_names")})
    assert old.flow_cat.tolist() == [0, 0, 0] and old.flow_cat_names == [""]
    old.check()
    old.flow_cat = np.array([0, 0, 3], np.int32)
    with pytest.raises(tracevis3d.model.TraceInvariantError, match="flow_cat outside flow_cat_names"):
        old.check()


def test_flows_of_several_categories_are_coloured_by_category(tmp_path):
    """The icicle's arcs take their category's colour (`flow_arcs.FLOW_CAT_RGB`, the most
    frequent first), flows of different categories are never bundled into one arc, and the
    legend names each category beside its swatch; flows of one category stay `FLOW_RGB`
    with the note alone."""
    t = _two_category_flows(tmp_path / "cats.json")
    spec = icicle_layout(t, IcicleParams(resolution=(960, 540)))
    arcs = spec.layer("flows")
    assert len(arcs) == 3  # three flows, three categories: no bundle mixes them
    cat_of = {int(f): t.flow_cat_names[int(t.flow_cat[f])] for f in arcs.attributes["side_index"]}
    colour = {cat_of[int(f)]: tuple(np.round(arcs.colors[k, :3], 4))
              for k, f in enumerate(arcs.attributes["side_index"])}
    assert len(set(colour.values())) == 3
    assert all(any(np.allclose(c, x, atol=1e-4) for x in flow_mod.FLOW_CAT_RGB) for c in colour.values())
    legend = [x for x, k in zip(spec.labels.texts, spec.labels.kind) if k == "legend"]
    assert {"ipc", "gpu", "(no category)"} <= set(legend), legend
    names, _ = flow_mod.flow_materials()
    assert set(arcs.materials) == set(names) and all(spec.materials[n].blended for n in names)
    t1 = t.subset(thread=[0, 1])
    t1.flow_cat = np.zeros(3, np.int32)
    t1.flow_cat_names = ["ipc"]
    spec1 = icicle_layout(t1, IcicleParams(resolution=(960, 540)))
    assert spec1.layer("flows").materials == ["TV3D_flow"]
    assert not {"ipc", "(no category)"} & {x for x, k in zip(spec1.labels.texts, spec1.labels.kind) if k == "legend"}


def test_tracks_under_the_axis_stand_below_its_tick_labels_back_edges_included():
    """A track under the time axis is extruded in depth: seen from above, its back edge rises
    on screen.  Its boxes, back edges included, project below the axis' tick labels (their
    descent included), at the default view and at a steep one (torch_cnn's memory track
    rose over "0.5 s", "1.0 s", ...).  Checked with the async lanes (the block's first units)
    and without them (a counter track right under the axis)."""
    t = _counters_trace()
    bare = _counters_trace()
    for f in ("async_start", "async_end", "async_track", "async_name", "async_depth"):
        setattr(bare, f, getattr(bare, f)[:0])
    for t, elevation in ((t, None), (t, 40.0), (bare.check(), None), (bare, 40.0)):
        p = IcicleParams(resolution=(1280, 720)) if elevation is None else IcicleParams(resolution=(1280, 720),
                                                                                       elevation=elevation)
        spec = icicle_layout(t, p)
        assert all(k == -1 for k in spec.meta.get("counter_track_lanes", []))  # one process: under the axis
        blocks = [L for L in spec.layers if L.name in ("counters", "async")]
        pos = np.concatenate([L.positions for L in blocks]).astype(np.float64)
        sc = np.concatenate([L.scales for L in blocks]).astype(np.float64)
        back_top = np.stack([pos[:, 0], pos[:, 1] + sc[:, 1] / 2, pos[:, 2] + sc[:, 2] / 2], 1)
        box_px = project(spec.camera, back_top, p.resolution)  # y down
        lab = spec.labels
        axis = np.flatnonzero(np.array(lab.kind) == "axis")
        anchors = lab.anchors[axis].astype(np.float64)
        up = anchors + np.array([0.0, 0.0, 1.0]) * lab.sizes[axis, None]
        a_px, u_px = project(spec.camera, anchors, p.resolution), project(spec.camera, up, p.resolution)
        label_px = np.abs(a_px[:, 1] - u_px[:, 1])
        for k in range(axis.size):  # the boxes under each label (a label is ~4 sizes wide)
            under = np.abs(box_px[:, 0] - a_px[k, 0] - 2 * label_px[k]) < 3 * label_px[k]
            if under.any():
                assert box_px[under, 1].min() > a_px[k, 1] + 0.25 * label_px[k], (elevation, k)
