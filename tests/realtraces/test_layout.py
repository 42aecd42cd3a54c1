"""Icicle layout (bpy-free): sub-pixel clustering kernel vs its brute-force twin,
geometry of the boxes against the calls, parameters, palette, camera framing."""
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tracevis3d.layout import IcicleParams, icicle_layout
from tracevis3d.layout import palette
from tracevis3d.layout.camera import fit_camera, project, view_direction, world_per_pixel
from tracevis3d.layout.cluster import cluster_subpixel_calls
from tracevis3d.layout.icicle import fit_label, short_name
from tracevis3d.model import Trace
from tree_factory import random_trace

_KEY = None


# ----------------------------------------------------------------------------- helpers
def cluster_brute(start, end, depth, lane, min_width, max_gap):
    """Brute-force twin of cluster_subpixel_calls: group by (lane, depth), sort by start,
    walk each group; small calls chain while the gap to the cluster end <= max_gap and
    no wide call of the same group lies between them."""
    n = len(start)
    groups = {}
    for i in range(n):
        groups.setdefault((int(lane[i]), int(depth[i])), []).append(i)
    clusters = []  # (lane, depth, start, end, members)
    for (ln, d), members in groups.items():
        members.sort(key=lambda i: (start[i], i))
        cur = None
        for i in members:
            if end[i] - start[i] >= min_width[ln]:
                cur = None
                continue
            if cur is not None and start[i] - cur[3] <= max_gap[ln]:
                cur[3] = max(cur[3], end[i])
                cur[4].append(i)
            else:
                cur = [ln, d, start[i], end[i], [i]]
                clusters.append(cur)
    return clusters


def _as_sets(cluster_of, c_lane, c_depth, c_start, c_end, c_count, c_rep, c_uniform):
    out = set()
    for k in range(len(c_lane)):
        members = tuple(sorted(np.flatnonzero(cluster_of == k).tolist()))
        assert len(members) == c_count[k]
        assert c_rep[k] in members
        assert c_uniform[k] == (len({int(x) for x in _KEY[list(members)]}) == 1)
        out.add((int(c_lane[k]), int(c_depth[k]), float(c_start[k]), float(c_end[k]), members))
    return out


def _trace_arrays(tr):
    return tr.start.copy(), tr.end.copy(), tr.depth.copy(), tr.thread.copy()


# ------------------------------------------------------------------- clustering kernel
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), threads=st.integers(1, 3), w=st.floats(0.01, 30.0),
       g=st.floats(0.0, 10.0), tiny=st.sampled_from([0.0, 0.3]))
def test_cluster_kernel_matches_brute_force(seed, threads, w, g, tiny):
    tr = random_trace(n_roots=6, threads=threads, seed=seed, tiny=tiny)
    s, e, d, ln = _trace_arrays(tr)
    mw = np.linspace(w, 2 * w, threads)
    mg = np.full(threads, g)
    global _KEY
    _KEY = tr.func
    got = cluster_subpixel_calls(s, e, d, ln, mw, mg, tr.func)
    want = cluster_brute(s, e, d, ln, mw, mg)
    want_set = {(c[0], c[1], float(c[2]), float(c[3]), tuple(sorted(c[4]))) for c in want}
    assert _as_sets(*got) == want_set
    # every small call is in exactly one cluster, no wide call is
    small = (e - s) < mw[ln]
    assert np.array_equal(got[0] >= 0, small)
    # the representative is the longest member
    for k in range(len(got[1])):
        m = np.flatnonzero(got[0] == k)
        assert (e - s)[got[6][k]] == (e - s)[m].max()


def test_cluster_kernel_hand_made():
    # one lane, depth 0: three tiny adjacent calls, a wide call, two tiny far apart
    s = np.array([0.0, 0.3, 0.6, 1.0, 10.0, 20.0])
    e = np.array([0.2, 0.5, 0.8, 9.0, 10.1, 20.1])
    d = np.zeros(6, np.int32)
    ln = np.zeros(6, np.int32)
    of, cl, cd, cs, ce, cc, cr, cu = cluster_subpixel_calls(s, e, d, ln, np.array([1.0]), np.array([1.0]),
                                                            np.array([0, 0, 1, 0, 0, 0]))
    assert of.tolist() == [0, 0, 0, -1, 1, 2]
    assert cs.tolist() == [0.0, 10.0, 20.0] and ce.tolist() == [0.8, 10.1, 20.1]
    assert cc.tolist() == [3, 1, 1] and cu.tolist() == [False, True, True]
    # a wide call between tiny ones splits the cluster even when the gap is small
    s = np.array([0.0, 0.3, 0.5])
    e = np.array([0.2, 0.45, 2.0])
    of = cluster_subpixel_calls(s, e, np.zeros(3, np.int32), np.zeros(3, np.int32),
                                np.array([1.0]), np.array([5.0]), np.zeros(3, np.int32))[0]
    assert of.tolist() == [0, 0, -1]


def test_cluster_kernel_empty_and_lane_reset():
    z = np.zeros(0)
    out = cluster_subpixel_calls(z, z, np.zeros(0, np.int32), np.zeros(0, np.int32),
                                 np.array([1.0]), np.array([1.0]), np.zeros(0, np.int32))
    assert all(len(a) == 0 for a in out)
    # same times in two lanes never share a cluster
    s = np.array([0.0, 0.3, 0.0, 0.3])
    e = s + 0.1
    of, cl, *_ = cluster_subpixel_calls(s, e, np.zeros(4, np.int32), np.array([0, 0, 1, 1], np.int32),
                                        np.array([1.0, 1.0]), np.array([1.0, 1.0]), np.zeros(4, np.int32))
    assert of.tolist() == [0, 0, 1, 1] and cl.tolist() == [0, 1]


# ---------------------------------------------------------------------------- layout
def _all_boxes(spec):
    calls = spec.layer("calls")
    cl = spec.layer("clusters")
    return calls, cl


def test_every_call_is_a_box_or_in_a_cluster_box():
    tr = random_trace(seed=3, tiny=0.4)
    spec = icicle_layout(tr, IcicleParams(resolution=(320, 180), fold="none"))
    calls, cl = _all_boxes(spec)
    ci = calls.attributes["call_index"]
    assert len(np.unique(ci)) == len(ci)
    m = spec.meta
    assert m["n_boxes"] == len(ci) and m["n_clusters"] == len(cl)
    assert m["n_boxes"] + m["n_clustered_calls"] == len(tr) and m["n_folded"] == 0
    assert m["n_clusters"] > 0  # the tiny calls are below a pixel at 320x180
    h = m["level_height"]
    k = m["world_per_us"]
    t0 = m["t0"]
    lane_z = np.array(m["lane_z"])
    lane_of_thread = {t: j for j, t in enumerate(m["lane_threads"])}
    lane = np.array([lane_of_thread[t] for t in tr.thread[ci]])
    # boxes sit where their calls are: x from time, z from depth in the lane, front at y = 0
    np.testing.assert_allclose(calls.positions[:, 0], ((tr.start[ci] + tr.end[ci]) / 2 - t0) * k, rtol=1e-5,
                               atol=1e-4)
    np.testing.assert_allclose(calls.scales[:, 0], (tr.end[ci] - tr.start[ci]) * k, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(calls.positions[:, 2], lane_z[lane] + (tr.depth[ci] + 0.5) * h, rtol=1e-5,
                               atol=1e-5)
    front = calls.positions[:, 1] - calls.scales[:, 1] / 2
    np.testing.assert_allclose(front, 0.0, atol=1e-5)
    # lanes are stacked top to bottom and never overlap
    tops = lane_z + np.array(m["lane_levels"]) * h
    assert np.all(lane_z[:-1] > tops[1:])
    # every clustered call lies inside a cluster box of its lane and level
    clustered = np.setdiff1d(np.arange(len(tr)), ci)
    lo = cl.positions[:, 0] - cl.scales[:, 0] / 2
    hi = cl.positions[:, 0] + cl.scales[:, 0] / 2
    for i in clustered[:: max(1, len(clustered) // 200)]:
        x0, x1 = (tr.start[i] - t0) * k, (tr.end[i] - t0) * k
        ok = (cl.attributes["lane"] == lane_of_thread[tr.thread[i]]) & (cl.attributes["depth"] >= 0) \
            & (np.abs(cl.positions[:, 2] - (lane_z[lane_of_thread[tr.thread[i]]] + (tr.depth[i] + 0.5) * h)) < 1e-4) \
            & (lo <= x0 + 1e-4) & (hi >= x1 - 1e-4)
        assert ok.any(), f"call {i} not covered by a cluster box"
    # clustered calls really are narrower than a pixel, boxes are not
    us_px = np.array(m["us_per_pixel"])
    lane_all = np.array([lane_of_thread[t] for t in tr.thread])
    assert np.all((tr.end - tr.start)[clustered] < us_px[lane_all[clustered]])
    assert np.all((tr.end - tr.start)[ci] >= us_px[lane_all[ci]])
    # cluster boxes are lighter than call colours
    assert palette.relative_luminance(cl.colors[:, :3]).min() > 0.3


def test_cluster_takes_the_lightened_colour_of_what_it_holds():
    tr = random_trace(seed=5, tiny=0.5, max_depth=6, n_func=4)
    spec = icicle_layout(tr, IcicleParams(resolution=(320, 180), color_by="function", fold="none"))
    cl, calls = spec.layer("clusters"), spec.layer("calls")
    assert len(cl) > 0
    colour_of_func = {}
    for c, col in zip(calls.attributes["call_index"], calls.colors[:, :3]):
        colour_of_func.setdefault(int(tr.func[c]), tuple(np.round(col, 5)))
    lighter = palette.lighten(np.array(list(colour_of_func.values())), 0.5)
    # each cluster's colour is one of the function colours, lightened; not one grey
    dist = np.abs(cl.colors[:, None, :3] - lighter[None]).max(-1).min(-1)
    assert dist.max() < 1e-4
    assert len(np.unique(cl.colors[:, :3].round(4), axis=0)) > 1


def test_no_clustering_when_disabled_and_at_high_resolution():
    tr = random_trace(seed=1)
    spec = icicle_layout(tr, IcicleParams(cluster_px=0, fold="none"))
    assert spec.meta["n_clusters"] == 0 and spec.meta["n_boxes"] == len(tr)
    lo = icicle_layout(tr, IcicleParams(resolution=(160, 90))).meta
    hi = icicle_layout(tr, IcicleParams(resolution=(3840, 2160))).meta
    assert lo["n_clustered_calls"] > hi["n_clustered_calls"]  # bigger pixels merge more calls
    assert lo["n_boxes"] + lo["n_clusters"] < hi["n_boxes"] + hi["n_clusters"]


def test_thread_and_window_selection():
    tr = random_trace(seed=2, threads=3)
    spec = icicle_layout(tr, IcicleParams(threads=[1], cluster_px=0, fold="none"))
    ci = spec.layer("calls").attributes["call_index"]
    assert set(tr.thread[ci].tolist()) == {1}
    assert len(ci) == int((tr.thread == 1).sum())
    assert spec.meta["lane_threads"] == [1]
    # by name too
    spec2 = icicle_layout(tr, IcicleParams(threads=[tr.thread_names[2]], cluster_px=0))
    assert spec2.meta["lane_threads"] == [2]
    t0, t1 = 50.0, 400.0
    spec = icicle_layout(tr, IcicleParams(time_window=(t0, t1), cluster_px=0, fold="none"))
    ci = spec.layer("calls").attributes["call_index"]
    want = np.flatnonzero((tr.end >= t0) & (tr.start <= t1))
    assert np.array_equal(np.sort(ci), want)
    calls = spec.layer("calls")
    L = IcicleParams().time_length
    assert calls.positions[:, 0].min() - calls.scales[:, 0].max() / 2 >= -1e-4 - calls.scales[:, 0].max()
    lo = calls.positions[:, 0] - calls.scales[:, 0] / 2
    hi = calls.positions[:, 0] + calls.scales[:, 0] / 2
    assert lo.min() >= -1e-4 and hi.max() <= L + 1e-4  # clipped to the window
    with pytest.raises(ValueError, match="no calls"):
        icicle_layout(tr, IcicleParams(time_window=(1e12, 2e12)))
    spec = icicle_layout(tr, IcicleParams(max_depth=1, cluster_px=0, fold="none"))
    ci = spec.layer("calls").attributes["call_index"]
    assert np.array_equal(np.sort(ci), np.flatnonzero(tr.depth <= 1)) and spec.meta["levels"] == 2
    with pytest.raises(ValueError, match="max_depth"):
        IcicleParams(max_depth=-1).validate()
    with pytest.raises(ValueError, match="no thread named"):
        icicle_layout(tr, IcicleParams(threads=["nope"]))


def test_extrusion_encodes_the_measure():
    tr = random_trace(seed=4)
    for measure, values in (("inclusive", tr.end - tr.start), ("self", tr.self_time),
                            ("calls", np.bincount(tr.func)[tr.func].astype(float))):
        calls = icicle_layout(tr, IcicleParams(extrude_measure=measure, cluster_px=0, fold="none")).layer("calls")
        v = values[calls.attributes["call_index"]]
        y = calls.scales[:, 1]
        # monotone: a larger measure never gets a shallower box
        o = np.argsort(v, kind="stable")
        assert np.all(np.diff(y[o]) >= -1e-5), measure
        # exactly: depth = lane_depth · (0.12 + 0.88 · v / max v)
        np.testing.assert_allclose(y / y.max(), 0.12 + 0.88 * v / v.max(), rtol=1e-5, atol=1e-6)
    calls = icicle_layout(tr, IcicleParams(extrude_measure="constant", cluster_px=0, fold="none")).layer("calls")
    assert np.ptp(calls.scales[:, 1]) < 1e-6


def test_colours_distinguish_functions_and_measures():
    tr = random_trace(seed=6, n_func=8)
    spec = icicle_layout(tr, IcicleParams(color_by="function", cluster_px=0, fold="none"))
    calls = spec.layer("calls")
    f = tr.func[calls.attributes["call_index"]]
    col_of = {}
    for fi, c in zip(f.tolist(), map(tuple, calls.colors[:, :3].round(5))):
        col_of.setdefault(fi, set()).add(c)
    assert all(len(v) == 1 for v in col_of.values())  # one colour per function
    assert len({next(iter(v)) for v in col_of.values()}) == len(col_of)  # distinct colours
    assert len(spec.legend) == len(col_of)
    # material index agrees with the colour
    assert len(np.unique(calls.material_index)) == len(col_of)
    # more functions than colours: the rest is "other"
    tr2 = random_trace(seed=7, n_func=40, n_roots=40)
    spec2 = icicle_layout(tr2, IcicleParams(max_colors=5, cluster_px=0, color_by="function"))
    names2 = [e.name for e in spec2.legend]
    assert len(names2) == 5 and sum(n.startswith("other (") for n in names2) == 1
    # one function past the palette: the grey entry is that function, not "other (1 functions)"
    shown = len(np.unique(tr.func))
    spec1 = icicle_layout(tr, IcicleParams(max_colors=shown, cluster_px=0, fold="none", color_by="function"))
    grey = [e.name for e in spec1.legend if not e.name.startswith(("runtime", "waiting"))][-1]
    coloured = {e.name for e in spec.legend}
    assert not any(e.name.startswith("other") for e in spec1.legend) and grey in coloured, (grey, coloured)
    # depth: deeper is lighter (sequential ramp, monotone lightness)
    spec3 = icicle_layout(tr, IcicleParams(color_by="depth", cluster_px=0, fold="none"))
    c3 = spec3.layer("calls")
    d = tr.depth[c3.attributes["call_index"]]
    lum = palette.relative_luminance(c3.colors[:, :3])
    o = np.argsort(d, kind="stable")
    assert np.all(np.diff(lum[o]) >= -1e-6)
    # module: functions of one module share a colour
    spec4 = icicle_layout(tr, IcicleParams(color_by="module", cluster_px=0, fold="none"))
    c4 = spec4.layer("calls")
    mods = np.array([tr.function_paths[x][1] for x in tr.func[c4.attributes["call_index"]]])
    for mname in np.unique(mods):
        assert len(np.unique(c4.colors[mods == mname].round(5), axis=0)) == 1


def test_palette_is_perceptually_separated():
    lab = palette.linear_srgb_to_oklab(palette.categorical(16))
    dist = np.sqrt(((lab[:, None] - lab[None]) ** 2).sum(-1))
    np.fill_diagonal(dist, 1)
    assert dist.min() > 0.05  # OKLab ΔE: clearly distinguishable
    L = palette.linear_srgb_to_oklab(palette.sequential(np.linspace(0, 1, 50)))[:, 0]
    assert np.all(np.diff(L) > 0)  # sequential ramp: lightness strictly increasing
    rgb = np.random.default_rng(0).random((20, 3))
    np.testing.assert_allclose(palette.oklab_to_linear_srgb(palette.linear_srgb_to_oklab(rgb)), rgb, atol=1e-6)


def test_labels_fit_their_boxes():
    assert fit_label("compute_everything", 100.0, 1.0) == "compute_everything"
    assert fit_label("pkg.mod.compute_everything", 11.0, 1.0) == "…compute_everything"
    assert fit_label("pkg.mod.compute_everything", 6.0, 1.0) == "…everything"
    assert fit_label("abc", 1.0, 1.0) == ""
    assert short_name("fib (/src/pkg/mod.py:6)") == "fib"
    tr = random_trace(seed=8)
    spec = icicle_layout(tr, IcicleParams(resolution=(1920, 1080), fold="none"))
    lab = spec.labels
    kinds = np.array(lab.kind)
    assert {"lane", "axis", "legend", "call", "title"} <= set(kinds.tolist())
    calls = spec.layer("calls")
    pos = {int(c): k for k, c in enumerate(calls.attributes["call_index"])}
    from tracevis3d.naming import function_table
    from tracevis3d.layout.text import text_width
    ft = function_table(tr)
    for j in np.flatnonzero(kinds == "call"):
        k = pos[int(lab.call_index[j])]
        width = text_width(lab.texts[j]) * lab.sizes[j]
        assert width <= calls.scales[k, 0] + 1e-5
        assert abs(lab.anchors[j, 0] - calls.positions[k, 0]) < 0.05 * calls.scales[k, 0]
        shown = lab.texts[j].lstrip("…")
        assert ft.display[tr.func[lab.call_index[j]]].endswith(shown)
    off = icicle_layout(tr, IcicleParams(show_labels=False, show_legend=False, show_title=False))
    assert "call" not in off.labels.kind and "legend" not in off.labels.kind and "title" not in off.labels.kind
    assert [x.name for x in off.layers] == ["calls", "clusters", "axis"]


# -------------------------------------------------------------------------- parameters
def test_params_round_trip_json_and_errors():
    p = IcicleParams(extrude_measure="self", color_by="depth", threads=[0, "main"], time_window=(1.0, 2.0),
                     resolution=(640, 480), cluster_px=2.0, lane_gap=1.5, show_labels=False, fold="2:5,9:",
                     hide=["^_"], hide_modules=["importlib"], thread_order=["main", 1], label_px=20.0, title="T")
    d = json.loads(json.dumps(p.to_dict()))
    assert IcicleParams.from_dict(d) == p
    for bad, msg in (({"extrude_measure": "x"}, "extrude_measure"), ({"color_by": "x"}, "color_by"),
                     ({"resolution": [0, 10]}, "resolution"), ({"time_window": [5, 1]}, "time_window"),
                     ({"cluster_px": -1}, "cluster_px"), ({"bogus": 1}, "unknown"),
                     ({"resolution": "big"}, "resolution"), ({"time_window": [0, float("nan")]}, "time_window"),
                     ({"fold": "3-4"}, "fold"), ({"fold": "5:2"}, "fold"), ({"hide": ["("]}, "hide"),
                     ({"thread_order": "size"}, "thread_order"), ({"label_px": 9}, "label_px")):
        with pytest.raises(ValueError, match=msg):
            IcicleParams.from_dict(bad)
    with pytest.raises(TypeError):
        icicle_layout("not a trace", IcicleParams())


# ------------------------------------------------------------------------------ camera
@pytest.mark.parametrize("ortho", [False, True])
@pytest.mark.parametrize("res", [(1920, 1080), (320, 180), (600, 900)])
def test_camera_frames_every_box(ortho, res):
    tr = random_trace(seed=9, threads=3)
    spec = icicle_layout(tr, IcicleParams(resolution=res, orthographic=ortho))
    from tracevis3d.layout.camera import camera_to_world

    def corners(lay):
        if not hasattr(lay, "positions"):  # a CurveLayer (callout leaders): its ribbons' points
            pts = np.concatenate([lay.left.reshape(-1, 3), lay.right.reshape(-1, 3)])
            return camera_to_world(spec.camera, pts) if lay.space == "camera" else pts
        pts = [lay.positions + lay.scales * np.array([sx, sy, sz], np.float32)
               for sx in (-0.5, 0.5) for sy in (-0.5, 0.5) for sz in (-0.5, 0.5)]
        pts = np.concatenate(pts)
        return camera_to_world(spec.camera, pts) if lay.space == "camera" else pts

    w, h = res
    pr = project(spec.camera, np.concatenate([corners(lay) for lay in spec.layers]), res)
    assert pr[:, 0].min() >= 0 and pr[:, 0].max() <= w
    assert pr[:, 1].min() >= 0 and pr[:, 1].max() <= h
    # the boxes fill the content rectangle (next to the title and legend) in both directions
    x0, y0, x1, y1 = spec.meta["content_rect"]
    boxes = project(spec.camera, np.concatenate([corners(spec.layer("calls")), corners(spec.layer("clusters"))]),
                    res)
    assert boxes[:, 0].min() >= x0 - 1 and boxes[:, 0].max() <= x1 + 1
    assert boxes[:, 1].min() >= y0 - 1 and boxes[:, 1].max() <= y1 + 1
    assert np.ptp(boxes[:, 0]) / (x1 - x0) > 0.8 and np.ptp(boxes[:, 1]) / (y1 - y0) > 0.6


def test_world_per_pixel_matches_projection():
    to_cam = view_direction(-10, 25)
    pts = np.random.default_rng(0).random((50, 3)) * 10
    for ortho in (False, True):
        cam = fit_camera(pts, to_cam, (800, 600), ortho)
        wpp = world_per_pixel(cam, pts[:1], (800, 600))[0]
        r = np.cross(-to_cam, [0, 0, 1])
        r /= np.linalg.norm(r)
        a, b = project(cam, np.stack([pts[0], pts[0] + r * wpp]), (800, 600))
        assert math.isclose(np.linalg.norm(b - a), 1.0, rel_tol=1e-3)


# ------------------------------------------------------------------ degenerate and real input
def test_degenerate_traces():
    one = Trace.from_arrays([0], [5.0], [5.0], [-1], function_names=["only"]).check()  # zero duration
    spec = icicle_layout(one, IcicleParams(resolution=(320, 180)))
    assert spec.meta["n_boxes"] + spec.meta["n_clusters"] == 1
    for lay in spec.layers:
        assert np.isfinite(lay.positions).all() and np.isfinite(lay.scales).all()
        assert (lay.scales > 0).all()
    empty = Trace.from_arrays(np.zeros(0, np.int32), np.zeros(0), np.zeros(0), np.zeros(0, np.int32))
    with pytest.raises(ValueError, match="no calls"):
        icicle_layout(empty, IcicleParams())
    # all calls at the same instant in several threads, deep chain
    n = 50
    chain = Trace.from_arrays(np.arange(n) % 3, np.zeros(n), np.zeros(n), np.arange(n) - 1).check()
    spec = icicle_layout(chain, IcicleParams(color_by="self", extrude_measure="self"))
    assert spec.meta["levels"] == n
    for lay in spec.layers:
        assert np.isfinite(lay.positions).all() and np.isfinite(lay.colors).all()


def test_layout_of_every_real_trace(realdata):
    import warnings

    import tracevis3d
    from tracevis3d.model import TraceError

    files = sorted(p for p in realdata.rglob("*") if p.suffix in (".json", ".gz"))
    assert files
    done = 0
    for path in files:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                tr = tracevis3d.load(path)
            except TraceError:
                continue  # files the importer rejects are its tests' business
        if len(tr) == 0:
            continue
        for color_by in ("function", "inclusive"):
            spec = icicle_layout(tr, IcicleParams(color_by=color_by, resolution=(640, 360)))
            m = spec.meta
            assert m["n_boxes"] + m["n_clustered_calls"] + m["n_folded"] == m["n_calls"], path.name
            # every call is drawn, but those of the threads left out of a figure of many (`max_lanes`)
            assert (m["n_calls"] == len(tr)) == (m["n_threads_left_out"] == 0), path.name
            for lay in spec.layers:
                if hasattr(lay, "centres"):  # the flows' arcs (tubes)
                    assert np.isfinite(lay.centres).all() and np.isfinite(lay.half_x).all(), path.name
                    continue
                if hasattr(lay, "left"):  # the callouts' leaders (ribbons)
                    assert np.isfinite(lay.left).all() and np.isfinite(lay.right).all(), path.name
                    continue
                assert np.isfinite(lay.positions).all() and np.isfinite(lay.scales).all(), path.name
                assert np.isfinite(lay.colors).all(), path.name
        done += 1
    assert done >= 10


def test_centre_content_moves_the_image_by_the_lens_shift_and_keeps_off_the_legend():
    """`camera.centre_content`: what is drawn (cells of an occupancy grid) moves to the
    middle of its rectangle; every world point moves by the same pixels (a lens shift is a
    pure translation of the image); the move is shortened while it would run into the
    legend's box."""
    from tracevis3d.layout.camera import centre_content, fit_camera_rect

    res, cell = (400, 200), 10.0
    rect = (0.0, 0.0, 400.0, 200.0)
    pts = np.array([[x, 0.0, z] for x in (0.0, 4.0) for z in (0.0, 2.0)])
    cam = fit_camera_rect(pts, view_direction(20.0, 25.0), res, rect)
    before = project(cam, pts, res)
    grid = np.zeros((20, 40), np.bool_)
    grid[5:15, 2:22] = True  # drawn: x 20..220 px, y 50..150 px
    dx, dy = centre_content(cam, grid, cell, rect, res)
    assert (dx, dy) == (80.0, 0.0)  # centre 120 → 200; already centred vertically
    assert np.allclose(project(cam, pts, res) - before, [dx, dy])
    cam = fit_camera_rect(pts, view_direction(20.0, 25.0), res, rect)
    dx, _ = centre_content(cam, grid, cell, rect, res, keep_out=(280.0, 40.0, 390.0, 160.0), pad=5.0)
    assert dx == 40.0  # 80 would put the drawn cells (up to 300 px) on the legend; 60 too (pad)
    assert np.allclose(project(cam, pts, res) - before, [dx, 0.0])


# ------------------------------------------------------------------------ many busy lanes
def test_lane_budgets_share_equally_when_the_minimums_do_not_fit():
    from tracevis3d.layout.budget import MIN_LANE_LEVELS, lane_budgets

    demand = np.array([30.0, 20.0, 1.0, 25.0])
    weight = np.array([1.0, 0.1, 0.5, 0.2])
    got = lane_budgets(demand, weight, 40.0)  # fits the minimums: water-filling by weight
    assert abs(got.sum() - 40.0) < 1e-6 and (got >= np.minimum(demand, MIN_LANE_LEVELS) - 1e-9).all()
    assert (got <= demand + 1e-9).all() and got[0] > got[1]
    got = lane_budgets(demand, weight, 6.0)  # 2.5 + 2.5 + 1 + 2.5 > 6: equal shares, none over its need
    assert abs(got.sum() - 6.0) < 1e-6 and got[2] == 1.0
    assert np.allclose(got[[0, 1, 3]], 5.0 / 3.0)


def test_lane_gaps_thin_with_many_lanes():
    from tracevis3d.layout.frame import LANE_GAP_LEVELS, LANE_GAPS_TOTAL, MIN_LANE_GAP_LEVELS, lane_gap_levels

    assert lane_gap_levels(1) == lane_gap_levels(5) == LANE_GAP_LEVELS
    assert abs(lane_gap_levels(17) * 16 - LANE_GAPS_TOTAL) < 1e-9
    assert lane_gap_levels(200) == MIN_LANE_GAP_LEVELS


def test_every_busy_lane_of_a_pool_of_16_keeps_readable_names(docutils_pool_wide_path):
    """docutils in a pool of 16 workers (17 lanes of 30+ levels in 1080 pixels): each
    worker's lane names its widest calls at >= 14 px (before: the lanes were squeezed as a
    whole and no name in the figure could be read)."""
    import tracevis3d

    tr = tracevis3d.load(docutils_pool_wide_path)
    assert tr.n_threads >= 17 and tr.max_depth + 1 >= 30
    spec = icicle_layout(tr, IcicleParams())
    lab = spec.labels
    kinds = np.array(lab.kind)
    names = np.flatnonzero(np.isin(kinds, ["call", "run", "row", "group"]) & (lab.call_index >= 0))
    px = lab.sizes[names] / world_per_pixel(spec.camera, lab.anchors[names].astype(np.float64), (1920, 1080))
    named_lanes = set(tr.thread[lab.call_index[names[px >= 14.0 - 1e-3]]].tolist())
    workers = {t for t in range(tr.n_threads) if tr.thread_names[t].startswith("render")}
    assert len(workers) == 16 and workers <= named_lanes, sorted(workers - named_lanes)


# ------------------------------------------------------------------------ plates under names
def _rows_and_runs_trace():
    """main › parse › 400 × (addtoken, other) alternating, then main › lex › 300 × tokenize:
    boxes too narrow for names, a row one function dominates and a run of one function."""
    func, start, end, parent = [0, 1], [0.0, 0.0], [2000.0, 1000.0], [-1, 0]
    for k in range(400):
        func += [2, 3]
        start += [2.5 * k, 2.5 * k + 2.0]
        end += [2.5 * k + 2.0, 2.5 * k + 2.4]
        parent += [1, 1]
    lex = len(func)
    func.append(4), start.append(1000.0), end.append(2000.0), parent.append(0)
    for k in range(300):
        func.append(5), start.append(1000.0 + 3.3 * k), end.append(1000.0 + 3.3 * k + 3.0), parent.append(lex)
    names = ["main", "parse", "addtoken", "other", "lex", "tokenize"]
    return Trace.from_arrays(func, start, end, parent, [0] * len(func), function_names=names).check()


def test_names_of_several_boxes_stand_on_plates_of_their_colour():
    """A run, row or group name spans boxes of other colours and the gaps between them (white
    digits over a light grey cell, seen on black formatting in a thread pool).  Each such name
    stands on a plate of its colour that covers the whole text on the image, in front of the
    faces and behind the text; its text colour is the one that contrasts with the plate."""
    from tracevis3d.layout.labels import contrast_text_material
    from tracevis3d.layout.text import text_width

    spec = icicle_layout(_rows_and_runs_trace(), IcicleParams())
    plates, lab = spec.layer("label_plates"), spec.labels
    kinds = np.array(lab.kind)
    assert {"run", "row"} <= set(np.array(lab.kind)[np.isin(lab.call_index, plates.attributes["call_index"])])
    front_y = plates.positions[:, 1] - 0.5 * plates.scales[:, 1]
    assert (front_y < 0).all() and np.allclose(plates.positions[:, 1] + 0.5 * plates.scales[:, 1], 0, atol=1e-6)
    res = (1920, 1080)
    x0 = plates.positions[:, 0] - 0.5 * plates.scales[:, 0]
    x1 = plates.positions[:, 0] + 0.5 * plates.scales[:, 0]
    zc = plates.positions[:, 2]
    covered = 0
    for k in np.flatnonzero(np.isin(kinds, ["run", "row", "group"])):
        mine = np.flatnonzero(plates.attributes["call_index"] == lab.call_index[k])
        if mine.size == 0:
            assert kinds[k] == "group"  # a merged cluster is one box: no plate needed
            continue
        a = lab.anchors[k].astype(np.float64)
        half = 0.5 * text_width(lab.texts[k]) * float(lab.sizes[k])
        ends = project(spec.camera, np.array([a - [half, 0, 0], a + [half, 0, 0]]), res)[:, 0]
        ok = False
        for p in mine:
            face = project(spec.camera, np.array([[x0[p], front_y[p], zc[p]], [x1[p], front_y[p], zc[p]]]), res)[:, 0]
            if face[0] <= ends[0] + 1.0 and ends[1] <= face[1] + 1.0:
                ok = a[1] < front_y[p]  # the text in front of its plate
                assert contrast_text_material(plates.colors[p:p + 1, :3])[0] == lab.material[k]
                break
        assert ok, (lab.texts[k], ends, mine)
        covered += 1
    assert covered == len(plates.positions)  # no plate without its name


def test_text_colour_contrasts_with_the_face_as_rendered():
    """Front faces render at `FACE_SHADE` of their colour's luminance; the text colour is the one
    with the higher WCAG contrast against that (a slate blue of luminance 0.20, rendered 0.165
    in the live view, took dark text at 3.6:1 where light reads at 4.4:1)."""
    from tracevis3d.layout.labels import FACE_SHADE, TEXT_DARK, TEXT_LIGHT, contrast_text_material

    rgb = np.random.default_rng(5).uniform(0, 1, (400, 3)) ** 2.2
    rgb = np.vstack([rgb, [[0.14308657, 0.18986213, 0.48382983]]])
    lum = FACE_SHADE * palette.relative_luminance(rgb)
    ld, ll = palette.relative_luminance(np.array([TEXT_DARK[:3], TEXT_LIGHT[:3]]))
    best = np.where((lum + 0.05) / (ld + 0.05) >= (ll + 0.05) / (lum + 0.05), "TV3D_text_dark", "TV3D_text_light")
    assert contrast_text_material(rgb) == best.tolist()
    assert best[-1] == "TV3D_text_light"
