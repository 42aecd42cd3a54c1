"""The EXTRAVIS section of the sidebar, in real (headless) Blender: the add-on (the repository
root, tests/support/addon_loader.py) registered in this process; its panel draws the EXTRAVIS schema,
its Build (``tracevis3d.extravis``) runs the command line's build job, a moved window handle
sets the time window of the next Build, and Show Call's ``describe_hit`` describes picks of
the scene (rays from the camera)."""
import json
import re
import sys

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
pytestmark = pytest.mark.blender

import tracevis3d  # noqa: E402

PKG = "tv3d_addon"


@pytest.fixture(scope="module")
def addon():
    from addon_loader import registered_addon

    yield from registered_addon()


@pytest.fixture(scope="module")
def trace_file(tmp_path_factory):
    t = tracevis3d.synthetic(3000, threads=3, seed=4)
    path = tmp_path_factory.mktemp("xv-ui") / "synthetic.tv3d.npz"
    tracevis3d.save(t, path)
    return path, tracevis3d.load(path)


def _record():
    return json.loads(bpy.context.scene["tracevis3d_extravis"])


def _setup(trace_file, window):
    scene = bpy.context.scene
    scene.tracevis3d.trace_path = str(trace_file[0])
    g = scene.tracevis3d_extravis_params
    g.level, g.resolution = "module", (640, 360)
    g.use_time_window, g.time_window_start, g.time_window_end = True, *window
    return g


def test_the_panel_draws_the_extravis_schema(addon):
    from extension_driver import RecordingLayout

    from tracevis3d.params.extravis import EXTRAVIS

    panels = sys.modules[f"{PKG}.ui.panels"]
    log = []
    panels.VIEW3D_PT_tracevis3d_extravis.draw(type("P", (), {"layout": RecordingLayout(log)})(), bpy.context)
    group = bpy.context.scene.tracevis3d_extravis_params
    shown = {n for kind, d, n in log if kind == "prop" and d == group}
    want = {row[0] for p in EXTRAVIS if p.ui for row in p.kind.props(p)}
    assert want <= shown and shown <= set(group.bl_rna.properties.keys()), want - shown
    assert {n for kind, _d, n in log if kind == "operator"} == {"tracevis3d.extravis", "tracevis3d.extravis_highlight"}
    assert bpy.ops.tracevis3d.extravis.get_rna_type() is not None


def test_build_and_the_window_follows_the_handles(addon, trace_file):
    from tracevis3d.blender.extravis_tasks import GRIPS, window_from_handles

    trace = trace_file[1]
    w0, w1 = (float(x) for x in np.quantile(trace.start, [0.3, 0.6]))
    g = _setup(trace_file, (w0, w1))
    assert bpy.ops.tracevis3d.extravis() == {"FINISHED"}
    rec = _record()
    assert rec["views"] == "both" and rec["params"]["time_window"] == pytest.approx([w0, w1], rel=1e-6)
    coll = bpy.data.collections["TraceVis3D"]
    names = {ob.name for ob in coll.objects}
    assert {"TV3D_heb_ring", "TV3D_heb_tubes", "TV3D_sequence_mural", "TV3D_window_handles", *GRIPS} <= names, names
    assert window_from_handles() is None  # nothing moved
    # the end handle moved down the bar (later): the next Build's window ends where it is now
    end = coll.objects[GRIPS[1]]
    (s0, s1), (top, bot) = end["tv3d_window_span"], end["tv3d_window_bar"]
    want_t1 = float(np.quantile(trace.start, 0.85))
    end.location.z = top - (want_t1 - s0) / (s1 - s0) * (top - bot)
    bpy.context.view_layer.update()
    assert window_from_handles() == pytest.approx((w0, want_t1), rel=1e-5)
    assert bpy.ops.tracevis3d.extravis() == {"FINISHED"}
    assert (g.time_window_start, g.time_window_end) == pytest.approx((w0, want_t1), rel=1e-5)
    assert _record()["params"]["time_window"] == pytest.approx([w0, want_t1], rel=1e-5)
    start = trace.start
    n_now = int(((start >= g.time_window_start) & (start <= g.time_window_end)).sum())
    mural = bpy.data.collections["TraceVis3D"].objects["TV3D_sequence_mural"]
    assert len(set(np.asarray(mural["row_calls"]).tolist())) > 0 and n_now > 0
    coll = bpy.data.collections["TraceVis3D"]
    assert sum(ob.name.startswith("TV3D_window_") and ob.type == "EMPTY" for ob in coll.objects) == 2
    assert window_from_handles() is None  # rebuilt where they are
    # moving the handle boxes' object moves the window with it
    boxes = coll.objects["TV3D_window_handles"]
    dz = 0.1 * (top - bot)
    boxes.location.z += dz
    bpy.context.view_layer.update()
    got = window_from_handles()
    shift = dz / (top - bot) * (s1 - s0)
    assert got == pytest.approx((w0 - shift, want_t1 - shift), rel=1e-4)
    # one view alone from the panel: the same job
    assert bpy.ops.tracevis3d.extravis(views="sequence") == {"FINISHED"}
    rec = _record()
    names = {ob.name for ob in bpy.data.collections["TraceVis3D"].objects}
    assert rec["views"] == "sequence" and "TV3D_heb_tubes" not in names and "TV3D_sequence_mural" in names
    assert rec["params"]["time_window"] == pytest.approx([w0 - shift, want_t1 - shift], rel=1e-4)
    # handles that meet: one line, nothing built
    coll = bpy.data.collections["TraceVis3D"]
    a, b = coll.objects[GRIPS[0]], coll.objects[GRIPS[1]]
    a.location.z = b.location.z = 0.5 * (a.location.z + b.location.z)
    bpy.context.view_layer.update()
    with pytest.raises(RuntimeError, match="handles meet"):
        bpy.ops.tracevis3d.extravis()
    # a window typed into the panel since the last Build wins over the handles
    g.time_window_start, g.time_window_end = w0, w1
    assert bpy.ops.tracevis3d.extravis() == {"FINISHED"}
    assert _record()["params"]["time_window"] == pytest.approx([w0, w1], rel=1e-6)


def test_a_saved_extravis_record_fills_the_panel(addon, tmp_path):
    """A scene built by the command line (no extension fields set) reopens with the record's
    trace and parameters in scene.tracevis3d_extravis_params."""
    P = sys.modules[f"{PKG}.ui.properties"]
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    params = {"level": "class", "beta": 0.5, "time_window": [10.0, 2000.0], "highlight": ["^re"], "future": 1}
    scene["tracevis3d_extravis"] = json.dumps({"trace_path": str(tmp_path / "t.json"), "params": params,
                                               "views": "heb"})
    assert P.restore_session(scene, blend_path=str(tmp_path / "x.blend"))
    p = P.params_of(scene, "extravis")
    assert (p.level, p.beta, p.time_window, p.highlight) == ("class", 0.5, (10.0, 2000.0), ["^re"])
    assert scene.tracevis3d.trace_path == str(tmp_path / "t.json")
    assert not P.restore_session(scene, blend_path=str(tmp_path / "x.blend"))  # a set trace path stays


def test_show_call_describes_picks_of_both_views(addon, trace_file):
    from tracevis3d.blender.pick import pick_ray_detail
    from tracevis3d.layout.extravis import extravis_layout
    from tracevis3d.params.extravis import ExtravisParams

    trace = trace_file[1]
    w = tuple(float(x) for x in np.quantile(trace.start, [0.2, 0.7]))
    _setup(trace_file, w)
    assert bpy.ops.tracevis3d.extravis() == {"FINISHED"}
    pick_ops = sys.modules[f"{PKG}.ui.operators.pick_ops"]
    params = ExtravisParams.from_known(_record()["params"])
    spec = extravis_layout(trace, params)
    h = tracevis3d.hierarchy(trace)
    eye = np.asarray(bpy.context.scene.camera.matrix_world.translation, np.float64)

    def describe(point):
        hit = pick_ray_detail(tuple(eye), tuple(np.asarray(point, np.float64) - eye))
        assert hit is not None
        return hit, pick_ops.describe_hit(bpy.context, hit)

    ring = spec.layer("heb_ring")
    k = int(np.argmax(ring.angles[:, 1] - ring.angles[:, 0]))
    a, r = float(ring.angles[k].mean()), float(ring.radii[k].mean())
    hit, (title, d, call, side) = describe(np.asarray(ring.origin) + np.array([r * np.cos(a), 0.0, -r * np.sin(a)]))
    assert title == d["element"] == h.full_names[hit["element_index"]] and side == "" and call >= 0
    assert {"kind", "calls in", "calls out", "calls within"} <= set(d)
    icicle = spec.layer("sequence_icicle")
    j = int(np.argmax(icicle.scales[:, 0] * icicle.scales[:, 2]))
    hit, (title, d, call, side) = describe(icicle.positions[j] - [0.0, 0.5 * icicle.scales[j, 1], 0.0])
    assert hit["element_index"] == icicle.attributes["element_index"][j] and title == d["element"]
    tubes = spec.layer("heb_tubes")
    t = int(np.argmax(tubes.attributes["calls"]))
    hit, (title, d, call, side) = describe(tubes.centres[t][len(tubes.centres[t]) // 2])
    assert hit["kind"] == "tube" and " → " in title and d["calls"] == hit["calls"] and d["first µs"] <= d["last µs"]
    img = spec.layer("sequence_mural")
    o, u, v = (np.asarray(x) for x in (img.origin, img.u, img.v))
    hit, (title, d, call, side) = describe(o + 0.5 * u + 0.5 * v)
    assert call == hit["call"] and title == d["name"] and w[0] <= trace.start[call] <= w[1] and "relation" in d
    text = pick_ops.format_call(d)
    assert "relation:" in text


def test_highlight_the_picked_element_from_the_panel(addon, trace_file):
    """Show Call on a ring sector remembers its element; Highlight lights exactly that
    element's calls in both views (the record's params and the pale tubes), Add keeps the
    ones lit, Clear lights everything again; with nothing picked, one clear line."""
    from tracevis3d.blender.pick import pick_ray_detail
    from tracevis3d.layout.extravis import extravis_layout, lit_elements
    from tracevis3d.params.extravis import ExtravisParams

    trace = trace_file[1]
    w = tuple(float(x) for x in np.quantile(trace.start, [0.2, 0.7]))
    g = _setup(trace_file, w)
    g.highlight = ""
    scene = bpy.context.scene
    scene.tracevis3d.picked_element = ""
    with pytest.raises(RuntimeError, match="no element picked"):
        bpy.ops.tracevis3d.extravis_highlight(mode="picked")
    assert bpy.ops.tracevis3d.extravis() == {"FINISHED"}
    spec = extravis_layout(trace, ExtravisParams.from_known(_record()["params"]))
    h = tracevis3d.hierarchy(trace)
    eye = np.asarray(scene.camera.matrix_world.translation, np.float64)
    ring = spec.layer("heb_ring")

    inner = ring.radii[:, 0]
    names = [h.full_names[e] for e in ring.attributes["element_index"]]
    leaves = np.flatnonzero((inner <= inner.min() + 1e-6) & ~np.array([n.startswith("thread") for n in names]))
    order = leaves[np.argsort(-(ring.angles[leaves, 1] - ring.angles[leaves, 0]))]
    first, second = (int(ring.attributes["element_index"][k]) for k in order[:2])
    k = int(order[0])  # what the mouse picks there (a camera ray) is the element Show Call is given
    a, r = float(ring.angles[k].mean()), float(ring.radii[k].mean())
    point = np.asarray(ring.origin) + np.array([r * np.cos(a), 0.0, -r * np.sin(a)])
    assert pick_ray_detail(tuple(eye), tuple(point - eye))["element_index"] == first

    def pale_share():
        tubes = bpy.data.collections["TraceVis3D"].objects["TV3D_heb_tubes"]  # rebuilt by each Highlight
        names = [s.material.name if s.material else "" for s in tubes.material_slots]
        idx = np.empty(len(tubes.data.polygons), np.int32)
        tubes.data.polygons.foreach_get("material_index", idx)
        return float(np.mean([names[i] == "TV3D_xv_tube_pale" for i in idx]))

    assert pale_share() == 0.0
    # Show Call of the widest leaf (by its index, as a script would; the mouse does the same)
    assert bpy.ops.tracevis3d.show_call(element_index=first) == {"FINISHED"}
    assert scene.tracevis3d.picked_element == h.full_names[first]
    assert bpy.ops.tracevis3d.extravis_highlight(mode="picked") == {"FINISHED"}
    rec = _record()["params"]
    assert rec["highlight"] == [f"^{re.escape(h.full_names[first])}$"]
    lit = lit_elements(h, rec["highlight"])
    assert lit[first] and lit.sum() < len(h) - 1
    pale = pale_share()
    assert 0.0 < pale < 1.0  # the element's relations lit, the others pale
    # Add a second element: both lit, fewer tubes pale
    assert bpy.ops.tracevis3d.show_call(element_index=second) == {"FINISHED"}
    assert bpy.ops.tracevis3d.extravis_highlight(mode="add") == {"FINISHED"}
    assert len(_record()["params"]["highlight"]) == 2 and pale_share() <= pale
    # a call row picked: no element remembered
    assert bpy.ops.tracevis3d.show_call(call_index=0) == {"FINISHED"}
    assert scene.tracevis3d.picked_element == ""
    assert bpy.ops.tracevis3d.extravis_highlight(mode="clear") == {"FINISHED"}
    assert _record()["params"]["highlight"] == [] and pale_share() == 0.0


def test_the_window_follows_moved_handles_without_build(addon, trace_file):
    """Follow Handles: a handle moved (the depsgraph handler notices it), let be for the
    settle time, and one `follow_handles.poll` step rebuilds the views for the handles'
    window (what the UI's timer does); recent moves wait; meeting handles build nothing;
    with the switch off nothing follows."""
    import time

    from tracevis3d.blender.extravis_tasks import GRIPS

    follow = sys.modules[f"{PKG}.ui.follow_handles"]
    trace = trace_file[1]
    w0, w1 = (float(x) for x in np.quantile(trace.start, [0.2, 0.5]))
    g = _setup(trace_file, (w0, w1))
    scene = bpy.context.scene
    scene.tracevis3d.extravis_follow_handles = True
    assert bpy.ops.tracevis3d.extravis() == {"FINISHED"}
    assert follow.poll(scene, now=time.monotonic() + 10.0) is None  # nothing moved (the new handles: not a move)
    coll = bpy.data.collections["TraceVis3D"]
    end = coll.objects[GRIPS[1]]
    (s0, s1), (top, bot) = end["tv3d_window_span"], end["tv3d_window_bar"]
    want = float(np.quantile(trace.start, 0.8))
    end.location.z = top - (want - s0) / (s1 - s0) * (top - bot)
    bpy.context.view_layer.update()
    moved = follow._state["moved_at"]
    assert moved is not None  # the depsgraph handler saw the move
    assert follow.poll(scene, now=moved + 0.1 * follow.SETTLE_S) == "waiting"  # until the handles settle
    assert follow.poll(scene, now=time.monotonic() + 10.0) == "rebuilt"
    assert _record()["params"]["time_window"] == pytest.approx([w0, want], rel=1e-5)
    assert (g.time_window_start, g.time_window_end) == pytest.approx((w0, want), rel=1e-5)
    assert follow.poll(scene, now=time.monotonic() + 10.0) is None  # built where they are
    # the handles meet: nothing built, one word
    coll = bpy.data.collections["TraceVis3D"]
    a, b = coll.objects[GRIPS[0]], coll.objects[GRIPS[1]]
    a.location.z = b.location.z
    bpy.context.view_layer.update()
    assert follow.poll(scene, now=time.monotonic() + 10.0) == "meet"
    # switched off: moved handles wait for Build
    a.location.z += 0.5 * (top - bot) * 0.1
    scene.tracevis3d.extravis_follow_handles = False
    bpy.context.view_layer.update()
    assert follow.poll(scene, now=time.monotonic() + 10.0) is None
    scene.tracevis3d.extravis_follow_handles = True
