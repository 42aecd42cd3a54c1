"""The critical path drawn (issue 82): the icicle and the thread view of a real 5-thread
program (tests/data/critical_path) built as the panel builds them and rendered headless with
Workbench; the pixels say the path's ribbon is there on several lanes and the rest is pale.
And the panel's field (the add-on registered, no window) reaches the build."""
import json
import pathlib

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

pytestmark = pytest.mark.blender
REPO = pathlib.Path(__file__).resolve().parents[2]
TRACE = REPO / "tests" / "data" / "critical_path" / "threads_pipeline.json.gz"
RES = (960, 540)


def _magenta(img: np.ndarray) -> np.ndarray:
    """Pixels of the path's hue (`layout.critical_path.PATH_SRGB`, lit or shaded): red and blue
    well above green."""
    r, g, b = img[..., 0], img[..., 1], img[..., 2]
    return (r - g > 0.3) & (b - g > 0.15) & (r > 0.35)


def _saturated(img: np.ndarray) -> int:
    """Pixels with colour (max - min channel > 0.25) that are not the path's."""
    rgb = img[..., :3]
    chroma = rgb.max(axis=-1) - rgb.min(axis=-1)
    return int(((chroma > 0.25) & ~_magenta(img)).sum())


def _render(view: str, out, **params):
    """(spec laid out as the build lays it out, rendered pixels) of ``view`` at `RES`."""
    import tracevis3d
    from rendered_pixels import image_pixels
    from tracevis3d.blender.render import render_figure

    trace = tracevis3d.load(str(TRACE))
    bpy.ops.wm.read_factory_settings(use_empty=True)
    if view == "icicle":
        from tracevis3d.blender.tasks import build_job
        from tracevis3d.layout.icicle import icicle_layout
        from tracevis3d.params.icicle import IcicleParams

        build_job(trace, {"resolution": list(RES), **params}, scene=bpy.context.scene).run(interval=0.01)
        spec = icicle_layout(trace, IcicleParams(resolution=RES, **params))
    else:
        from tracevis3d.blender.threads_tasks import threads_build_job
        from tracevis3d.layout.threads import threads_layout
        from tracevis3d.layout.threads_params import ThreadsParams

        p = ThreadsParams(resolution=RES, **params)
        threads_build_job(trace, p, scene=bpy.context.scene).run(interval=0.01)
        spec = threads_layout(trace, p)
    render_figure(str(out), engine="workbench", resolution=RES)
    return spec, image_pixels(out)


def _lanes_with_ribbon(spec, img, lane_of_tube) -> set:
    """Lanes where the ribbon's thick tubes show the path's hue within 3 px of their middle."""
    from tracevis3d.layout.camera import project

    tubes = next(lay for lay in spec.layers if lay.name == "critical_path")
    thick = np.flatnonzero(tubes.attributes["path_part"] == 1)
    mag = _magenta(img)
    lanes = set()
    mid = tubes.centres[thick, tubes.centres.shape[1] // 2]
    for k, (x, y) in zip(thick.tolist(), project(spec.camera, mid, RES)):
        xi, yi = int(round(x)), int(round(y))
        if 3 <= xi < RES[0] - 3 and 3 <= yi < RES[1] - 3 and mag[yi - 3:yi + 4, xi - 3:xi + 4].any():
            lanes.add(lane_of_tube(k, mid[thick.tolist().index(k)]))
    return lanes


@pytest.mark.timeout(900)
def test_icicle_lights_the_path_and_pales_the_rest(tmp_path):
    spec, img = _render("icicle", tmp_path / "cp.png", critical_path=True, inset="none")
    _, plain = _render("icicle", tmp_path / "plain.png", inset="none")
    z = np.asarray(spec.meta["lane_z"])
    def lane_of(k, p):
        return int(np.argmin(np.abs(z - p[2])))

    lanes = _lanes_with_ribbon(spec, img, lane_of)
    assert len(lanes) >= 3, lanes  # one ribbon across lanes
    assert len(_lanes_with_ribbon(spec, plain, lane_of)) < len(lanes)  # the hue is the ribbon's there
    assert _magenta(img).sum() > 2 * _magenta(plain).sum()
    assert _saturated(img) < 0.6 * _saturated(plain), (_saturated(img), _saturated(plain))


@pytest.mark.timeout(900)
def test_thread_view_lights_the_path_and_pales_the_rest(tmp_path):
    spec, img = _render("threads", tmp_path / "cp.png", critical_path=True)
    _, plain = _render("threads", tmp_path / "plain.png")
    origin = np.asarray(spec.meta["ring_origin"])
    angles = np.asarray(spec.meta["lane_angles"])

    def lane_of(k, p):  # the section whose angles hold the point's (the ring stands in the front plane)
        a = np.arctan2(-(p[2] - origin[2]), (p[0] - origin[0]) / spec.meta["ring_stretch"]) % (2 * np.pi)
        hit = np.flatnonzero((angles[:, 0] - 1e-3 <= a) & (a <= angles[:, 1] + 1e-3))
        return int(hit[0]) if hit.size else -1

    lanes = _lanes_with_ribbon(spec, img, lane_of) - {-1}
    assert len(lanes) >= 3, lanes
    assert len(_lanes_with_ribbon(spec, plain, lane_of) - {-1}) < len(lanes)
    assert _saturated(img) < 0.8 * _saturated(plain), (_saturated(img), _saturated(plain))


@pytest.mark.timeout(900)
def test_the_panels_field_builds_the_path():
    """Threads and icicle sections: the "Critical path" field (from the one declaration) reaches
    the build: the ribbon's object, the saved parameters, the legend's heading."""
    from addon_loader import registered_addon

    gen = registered_addon()
    next(gen)
    try:
        scene = bpy.context.scene
        scene.tracevis3d.trace_path = str(TRACE)
        for view, key in (("threads", "tv3d_threads"), ("icicle", "tracevis3d_build")):
            group = getattr(scene, f"tracevis3d_{view}_params")
            assert group.bl_rna.properties["critical_path"].name == "Critical path"
            group.critical_path = True
            group.resolution_x, group.resolution_y = RES
            assert bpy.ops.tracevis3d.build_view(view=view) == {"FINISHED"}
            objs = bpy.data.collections["TraceVis3D"].all_objects
            assert any(o.get("tv3d_layer") == "critical_path" for o in objs), view
            record = json.loads(scene[key])
            assert record["params"]["critical_path"] is True, view
            texts = {o.data.body for o in objs if o.type == "FONT"}
            assert any(t.startswith("critical path:") for t in texts), sorted(texts)[:20]
    finally:
        next(gen, None)
