"""Cutaways beyond the icicle (issue 25, item 4): the comparison (a:N / b:N), the thread
view (a call on the focused icicle or the semicircle, a thread's lane) and the cone tree (a
call's node): the layout's box holds the way from the camera to the target and not the
target, renders lose what stood in front of it, and bad targets are one-line errors (exit 2)."""
import subprocess
import sys

import numpy as np
import pytest

import tracevis3d
from tracevis3d.layout.camera import project, world_per_pixel
from tracevis3d.layout.compare import CompareParams, compare_layout
from tracevis3d.layout.cone import ConeParams, cone_layout
from tracevis3d.layout.cutaway import cutaway_box
from tracevis3d.layout.threads import threads_layout
from tracevis3d.layout.threads_params import ThreadsParams
from tracevis3d.params.trace_kinds import parse_cutaway

from cutaway_box import inside_box

RES = (960, 540)


def _way(spec, point, n=12):
    eye = np.asarray(spec.camera.location)
    return eye + (np.asarray(point, np.float64) - eye) * np.linspace(0.05, 0.95, n)[:, None]


def _front(layer, j):
    """The middle of the front face (y smallest) of instance ``j``."""
    return layer.positions[j].astype(np.float64) - np.array([0.0, layer.scales[j, 1] / 2 - 1e-4, 0.0])


def test_each_view_takes_its_own_forms():
    assert parse_cutaway("a:12", ("a", "b")) == ("a", 12) and parse_cutaway("b:0", ("a", "b")) == ("b", 0)
    for bad, forms in (("call:3", ("a", "b")), ("lane:x", ("call",)), ("a:3", ("call", "lane")), ("a:x", ("a", "b"))):
        with pytest.raises(ValueError, match="cutaway must be"):
            parse_cutaway(bad, forms)
    with pytest.raises(ValueError, match=r"a:N \(call N of trace A\)"):
        CompareParams(cutaway="call:3").validate()
    with pytest.raises(ValueError, match=r"call:N \(a call index\), or none"):
        ConeParams(cutaway="lane:main").validate()
    assert ThreadsParams(cutaway="lane:worker").validate().cutaway == "lane:worker"


def test_compare_box_holds_the_way_to_a_call_of_a_or_b():
    a = tracevis3d.synthetic(2000, threads=1, seed=2)
    cmp = tracevis3d.compare(a, tracevis3d.synthetic(2000, threads=1, seed=3))
    spec0 = compare_layout(cmp, CompareParams(resolution=RES))
    for side in ("a", "b"):
        calls = spec0.layer(f"calls_{side}")
        j = int(np.argmax(calls.scales[:, 0] * (calls.attributes["depth"] == 2)))
        ci = int(calls.attributes["call_index"][j])
        box = compare_layout(cmp, CompareParams(resolution=RES, cutaway=f"{side}:{ci}")).meta["cutaway"]
        assert box["target"] == f"{side}:{ci}"
        assert inside_box(box, _way(spec0, _front(calls, j))).all()
        assert not inside_box(box, calls.positions[j][None].astype(np.float64))[0]
    with pytest.raises(ValueError, match="call 99999 of trace B is not drawn"):
        compare_layout(cmp, CompareParams(resolution=RES, cutaway="b:99999"))


def test_threads_box_holds_the_way_to_a_call_on_the_icicle_or_the_semicircle_or_a_lane():
    t = tracevis3d.synthetic(3000, threads=3, seed=2)
    p = dict(resolution=RES, focus=1)
    spec0 = threads_layout(t, ThreadsParams(**p))
    wall = spec0.layer("wall_calls")
    j = int(np.argmax(wall.scales[:, 0] * (wall.attributes["depth"] == 1)))
    ci = int(wall.attributes["call_index"][j])
    box = threads_layout(t, ThreadsParams(**p, cutaway=f"call:{ci}")).meta["cutaway"]
    assert inside_box(box, _way(spec0, _front(wall, j))).all()
    assert not inside_box(box, wall.positions[j][None].astype(np.float64))[0]
    # a call of another thread: its bar on the semicircle (in the front plane, facing the camera)
    ring = spec0.layer("ring")
    other = np.flatnonzero(ring.attributes["lane"] != spec0.meta["focus_lane"])
    k = int(other[np.argmax(ring.radii[other, 1] - ring.radii[other, 0])])
    ci = int(ring.attributes["call_index"][k])
    box = threads_layout(t, ThreadsParams(**p, cutaway=f"call:{ci}")).meta["cutaway"]
    a, r = ring.angles[k].mean(), ring.radii[k].mean()
    mid = np.asarray(spec0.meta["ring_origin"]) + np.array([spec0.meta["ring_stretch"] * r * np.cos(a), 0.0,
                                                            -r * np.sin(a)])
    assert inside_box(box, _way(spec0, mid - np.array([0, 1e-3, 0]))).all()
    assert not inside_box(box, (mid + np.array([0, 1e-3, 0]))[None])[0]
    for lane in spec0.meta["lane_names"]:
        assert threads_layout(t, ThreadsParams(**p, cutaway=f"lane:{lane}")).meta["cutaway"]["target"] == f"lane:{lane}"
    with pytest.raises(ValueError, match="no lane 'nosuch'"):
        threads_layout(t, ThreadsParams(**p, cutaway="lane:nosuch"))
    with pytest.raises(ValueError, match="not drawn"):
        threads_layout(t, ThreadsParams(**p, cutaway=f"call:{len(t) + 3}"))


def _hidden_node(spec):
    """(k, j): a cone node k whose centre is hidden behind a nearer node j on the image."""
    pos, r = np.asarray(spec.meta["node_positions"]), np.asarray(spec.meta["node_radius"])
    ci = spec.layer("cone_nodes").attributes["call_index"]
    rgb = spec.layer("cone_nodes").colors[:, :3]
    cam = spec.camera
    pr = project(cam, pos, spec.resolution)
    dist = np.linalg.norm(pos - np.asarray(cam.location), axis=1)
    rpx = r / world_per_pixel(cam, pos, spec.resolution)
    best = None
    for k in np.argsort(-rpx).tolist():
        if ci[k] < 0 or rpx[k] < 4:
            continue
        for j in range(len(pos)):
            if j != k and dist[j] < dist[k] - r[k] - r[j] and np.linalg.norm(pr[j] - pr[k]) < 0.4 * rpx[j] \
                    and np.abs(rgb[j] - rgb[k]).max() > 0.25:  # colours that tell the two apart
                return k, j
    return best


def test_cone_box_holds_the_way_to_a_node_and_removes_the_node_in_front():
    t = tracevis3d.synthetic(3000, threads=2, seed=3)
    spec0 = cone_layout(t, ConeParams(resolution=(1280, 720)))
    k, j = _hidden_node(spec0)
    pos, r = np.asarray(spec0.meta["node_positions"]), np.asarray(spec0.meta["node_radius"])
    ci = int(spec0.layer("cone_nodes").attributes["call_index"][k])
    box = cone_layout(t, ConeParams(resolution=(1280, 720), cutaway=f"call:{ci}")).meta["cutaway"]
    assert inside_box(box, pos[j][None])[0] and not inside_box(box, pos[k][None])[0]
    near = pos[k] + r[k] * (np.asarray(spec0.camera.location) - pos[k]) / np.linalg.norm(spec0.camera.location - pos[k])
    assert inside_box(box, _way(spec0, near)).all()
    # a call folded into a drawn node's chain finds that node; a call whose context is not drawn is an error
    small = cone_layout(t, ConeParams(resolution=(640, 360), max_nodes=3))
    drawn = set(small.layer("cone_nodes").attributes["call_index"].tolist())
    missing = next(c for c in range(len(t)) if c not in drawn and t.depth[c] >= 4)
    with pytest.raises(ValueError, match=f"calling context of call {missing} is not among the"):
        cone_layout(t, ConeParams(resolution=(640, 360), max_nodes=3, cutaway=f"call:{missing}"))


@pytest.mark.parametrize("command, bad, says", [
    ("render-compare", "call:3", "a:N (call N of trace A)"),
    ("render-threads", "a:3", "call:N (a call index), lane:NAME"),
    ("render-cone", "lane:1", "call:N (a call index), or none"),
])
def test_cli_bad_cutaway_is_one_line_exit_2(tmp_path, command, bad, says):
    t = tracevis3d.synthetic(300, threads=2, seed=1)
    path = tmp_path / "t.tv3d.npz"
    tracevis3d.save(t, path)
    traces = [str(path), str(path)] if command == "render-compare" else [str(path)]
    r = subprocess.run([sys.executable, "-m", "tracevis3d", command, *traces, "-o", str(tmp_path / "x.png"),
                        "--cutaway", bad], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and says in r.stderr and r.stderr.strip().count("\n") == 0, r.stderr


def test_cli_cutaway_of_a_call_not_drawn_is_one_line_exit_2(tmp_path):
    t = tracevis3d.synthetic(300, threads=2, seed=1)
    path = tmp_path / "t.tv3d.npz"
    tracevis3d.save(t, path)
    r = subprocess.run([sys.executable, "-m", "tracevis3d", "render-cone", str(path), "-o", str(tmp_path / "x.png"),
                        "--cutaway", "call:5000"], capture_output=True, text=True, timeout=300)
    lines = [ln for ln in r.stderr.splitlines() if not ln.startswith("[")]
    assert r.returncode == 2 and len(lines) == 1 and "call 5000 is not in the cone tree" in lines[0], r.stderr


# ----------------------------------------------------------------- rendered
def _render(job, path, res):
    bpy = pytest.importorskip("bpy")
    from tracevis3d.blender.figure_report import load_image
    from tracevis3d.blender.hygiene import remove_startup_defaults
    from tracevis3d.blender.render import render_figure

    bpy.ops.wm.read_factory_settings()
    remove_startup_defaults(bpy.context.scene)
    job().run(interval=0.01)
    render_figure(str(path), engine="workbench", resolution=res)
    return load_image(path, channels=3)


def _at(img, px):
    x = np.clip(np.round(px[:, 0]).astype(int), 0, img.shape[1] - 1)
    y = np.clip(np.round(px[:, 1]).astype(int), 0, img.shape[0] - 1)
    return img[y, x]


@pytest.mark.blender
def test_cone_render_shows_the_hidden_node(tmp_path):
    from tracevis3d.blender.cone_tasks import cone_build_job

    t = tracevis3d.synthetic(3000, threads=2, seed=3)
    res = (1280, 720)
    p = ConeParams(resolution=res, show_labels=False)
    spec0 = cone_layout(t, p)
    k, j = _hidden_node(spec0)
    ci = int(spec0.layer("cone_nodes").attributes["call_index"][k])
    pc = ConeParams(resolution=res, show_labels=False, cutaway=f"call:{ci}")
    a = _render(lambda: cone_build_job(t, p), tmp_path / "a.png", res)
    b = _render(lambda: cone_build_job(t, pc), tmp_path / "b.png", res)
    pos = np.asarray(spec0.meta["node_positions"])
    pk, pj = project(spec0.camera, pos[[k, j]], res)
    va, vb = _at(a, pk[None])[0], _at(b, pk[None])[0]
    assert np.abs(va - vb).max() > 0.1, (va, vb)  # the node in front is gone
    assert vb.min() < 0.97  # and the target is there, not the background
    assert np.mean(np.abs(a - b).max(axis=2) > 0.05) < 0.1  # the rest of the tree stays


@pytest.mark.blender
def test_compare_render_removes_the_boxes_in_front_of_a_call_of_b(tmp_path):
    from tracevis3d.blender.tasks import compare_build_job

    a = tracevis3d.synthetic(2000, threads=1, seed=2)
    cmp = tracevis3d.compare(a, a)
    res = (1280, 720)
    p = CompareParams(resolution=res, show_labels=False)
    spec0 = compare_layout(cmp, p)
    calls = spec0.layer("calls_b")
    best = (0, -1, None)
    for j in np.argsort(-calls.scales[:, 0])[:80].tolist():  # the call of B with the most boxes in its way
        c = np.stack([calls.positions[j] - calls.scales[j] / 2, calls.positions[j] + calls.scales[j] / 2]).astype(float)
        box = cutaway_box(c, spec0.camera, float(world_per_pixel(spec0.camera, c.mean(0)[None], res)[0]))
        inside = np.flatnonzero(inside_box(box, calls.positions.astype(np.float64)))
        if inside.size > best[0]:
            best = (inside.size, j, inside)
    j = best[1]
    ci = int(calls.attributes["call_index"][j])
    spec = compare_layout(cmp, CompareParams(resolution=res, show_labels=False, cutaway=f"b:{ci}"))
    gone = np.flatnonzero(inside_box(spec.meta["cutaway"], calls.positions.astype(np.float64)))
    assert gone.size >= 2 and j not in gone
    before = _render(lambda: compare_build_job(cmp, p), tmp_path / "a.png", res)
    after = _render(lambda: compare_build_job(cmp, spec.meta["params"]), tmp_path / "b.png", res)
    # the removed boxes' front faces change; the target's front stays drawn; the rest stays
    px = project(spec0.camera, np.stack([_front(calls, g) for g in gone.tolist()]), res)
    changed = np.abs(_at(before, px) - _at(after, px)).max(axis=1) > 0.05
    assert changed.mean() > 0.5, changed
    assert _at(after, project(spec0.camera, _front(calls, j)[None], res))[0].min() < 0.97
    assert np.mean(np.abs(before - after).max(axis=2) > 0.05) < 0.1
