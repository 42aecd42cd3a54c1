"""A fly-through that refines along its path (issue 70, item 5): ``render-animation TRACE --kind
flythrough --zoom-window auto`` on a real deep trace (docutils in a thread pool, recorded at test
time, the zoom tests' trace), flying into its busiest window >= 100x narrower than the figure (the
zoom tests' rule, `layout.fly_levels.busiest_window`, at `params.animation.ZOOM_AUTO_MAGNIFICATION`).

Measured on the rendered frames and through the scene camera: the last frame names calls at
>= 14 px (at 1080 lines) at least 0.7x as often as the dedicated ``render-icicle --window``
figure of that window names them (its layout); the first frame is the plain fly-through's first
frame; a frame of a refined level rendered alone (``--frames K-K``) and by a fresh Blender from
the saved .blend with no TraceVis3D and no Python path is the frame of the whole render.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
pytestmark = pytest.mark.blender

import tracevis3d  # noqa: E402
from tracevis3d.cli import main  # noqa: E402
from zoom_helpers import box_x_extents, busiest_window, names_enough, names_in_frame  # noqa: E402

from tracevis3d.params.animation import ZOOM_AUTO_MAGNIFICATION as MAGNIFICATION  # noqa: E402  (>= 100x)
COMMON = ["--seconds", "1", "--fps", "12", "--resolution", "640x360", "--samples", "1"]
#: pixels two renders of one frame may differ by: none (the near clip of the path keeps the depth
#: buffer fine enough that no draw-order tie is left, tests/blender/test_dask_split_frames.py)
TIE_PX = 0


def _png(path) -> np.ndarray:
    from tracevis3d.blender.figure_report import load_image

    return load_image(str(path), channels=4)


def _pixels_off(a, b) -> int:
    return int((np.abs(_png(a) - _png(b)).max(-1) > 2 / 255).sum())


def _dedicated_names(trace, params, window) -> int:
    """Names of calls the dedicated ``render-icicle --window`` figure of the window places."""
    from tracevis3d.blender.view import NAME_KINDS
    from tracevis3d.layout.icicle import icicle_layout
    from tracevis3d.layout.refine import window_params

    spec = icicle_layout(trace, window_params(params, window))
    return sum(1 for k in spec.labels.kind if k in NAME_KINDS)


def _fresh_blender_frame(blend, frame: int, png, work) -> subprocess.CompletedProcess:
    """Frame ``frame`` of ``blend`` rendered by a fresh Blender with no TraceVis3D (no PYTHONPATH,
    empty user folders: no add-on, no handler, no driver code of ours)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("BLENDER_USER")}
    for d in ("CONFIG", "SCRIPTS", "EXTENSIONS", "DATAFILES"):
        (work / "user" / d).mkdir(parents=True, exist_ok=True)
        env[f"BLENDER_USER_{d}"] = str(work / "user" / d)
    code = (
        "import bpy, sys\n"
        f"bpy.ops.wm.open_mainfile(filepath={str(blend)!r})\n"
        "assert 'tracevis3d' not in sys.modules\n"
        "sc = bpy.context.scene\n"
        f"sc.frame_set({int(frame)})\n"
        "im = sc.render.image_settings\n"
        "im.media_type = 'IMAGE'; im.file_format = 'PNG'\n"
        f"sc.render.filepath = {str(png)!r}\n"
        "bpy.ops.render.render(write_still=True)\n")
    return subprocess.run([sys.executable, "-c", code], cwd=work, env=env, capture_output=True, text=True,
                          timeout=600)


@pytest.mark.timeout(1800)
def test_the_flythrough_names_the_window_as_it_arrives(docutils_pool_paths, tmp_path):
    from tracevis3d.blender.anim_refine import LEVEL_COLLECTION
    from tracevis3d.blender.hygiene import read_build_record
    from tracevis3d.params.icicle import IcicleParams

    path = str(docutils_pool_paths[0])
    trace = tracevis3d.load(path)
    span = float(trace.end.max()) - float(trace.start.min())
    window = busiest_window(trace, span / MAGNIFICATION)
    zoom = ["--kind", "flythrough", "--zoom-window", "auto"]  # the busiest window, as the zoom tests pick it
    plain, whole, alone = tmp_path / "plain", tmp_path / "whole", tmp_path / "alone"
    blend = tmp_path / "fly.blend"

    assert main(["render-animation", path, "-o", str(plain), "--kind", "flythrough", *COMMON, "--frames", "1-1"]) == 0
    assert main(["render-animation", path, "-o", str(whole), *zoom, *COMMON, "--save", str(blend)]) == 0
    scene = bpy.context.scene
    info = json.loads(scene["tracevis3d_animation"])
    z = info["refine"]
    n_levels = len(z["levels"])
    assert z["window"] == pytest.approx(list(window)) and z["magnification"] >= 100.0, z
    assert 1 <= n_levels <= 4, z  # the declared default bound (--zoom-levels 4)
    levels = [bpy.data.collections[LEVEL_COLLECTION.format(j)] for j in range(1, n_levels + 1)]
    assert bpy.data.collections.get(LEVEL_COLLECTION.format(n_levels + 1)) is None
    print("flythrough levels:", json.dumps({"seconds": z["seconds"], "objects_total": len(bpy.data.objects),
                                            "levels": z["levels"]}))

    # the last frame: the window's names, through the camera, as its dedicated figure names them
    n = info["frames"][1]
    scene.frame_set(n)
    assert all(ob.hide_render for c in levels[:-1] for ob in c.objects)  # only the last level is seen
    names = names_in_frame(scene, levels[-1].name)
    params = IcicleParams.from_dict(read_build_record(scene)["params"])
    dedicated = _dedicated_names(trace, params, tuple(z["window"]))
    assert names_enough(len(names), dedicated), (len(names), dedicated)
    # on the first frame nothing of the levels: the overview seen whole
    scene.frame_set(1)
    assert all(ob.hide_render for c in levels for ob in c.objects)
    assert names_in_frame(scene, levels[-1].name) == []

    frames = sorted(os.listdir(whole))
    assert frames == [f"frame_{k:04d}.png" for k in range(1, n + 1)]
    assert _pixels_off(plain / "frame_0001.png", whole / "frame_0001.png") <= TIE_PX  # the plain one's first frame
    assert np.abs(_png(whole / frames[0]) - _png(whole / frames[-1])).max() > 0.1  # it flies

    # a frame of a refined level (the one before the last: between two switches) rendered alone
    k = int(z["levels"][-2]["frames"][0]) + 1 if n_levels > 1 else n - 1
    assert main(["render-animation", path, "-o", str(alone), *zoom, *COMMON, "--frames", f"{k}-{k}"]) == 0
    assert _pixels_off(alone / f"frame_{k:04d}.png", whole / f"frame_{k:04d}.png") <= TIE_PX
    # the saved .blend plays the same in a Blender without TraceVis3D (keys only: no driver, no handler)
    fresh = tmp_path / "fresh.png"
    r = _fresh_blender_frame(blend, k, fresh, tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert _pixels_off(fresh, whole / f"frame_{k:04d}.png") <= TIE_PX


@pytest.mark.timeout(600)
def test_the_panel_sets_up_the_same_flythrough_and_takes_it_away(tmp_path):
    """The Animate section's Set Up Animation with *Fly into* (the same `animate_scene`): the
    levels are built within the declared bound, the overview is cut around a level's stretch on
    that level's frames only (keyed modifier inputs, evaluated per frame), and Remove Animation
    and a new build leave the figure's own objects."""
    from addon_loader import registered_addon
    from tracevis3d.blender.anim_refine import FLY_KEY, FLY_SPLIT_MODIFIER, LEVEL_COLLECTION
    from tracevis3d.blender.animate import ANIM_KEY
    from tracevis3d.blender.hygiene import remove_startup_defaults
    from tracevis3d.blender.scene import build_icicle
    from tracevis3d.params.icicle import IcicleParams

    fixture = registered_addon()
    next(fixture)
    try:
        path = tmp_path / "run.json"
        tracevis3d.save(tracevis3d.synthetic(4000, threads=2, seed=3), path, format="chrome")
        trace = tracevis3d.load(path)
        scene = bpy.context.scene
        remove_startup_defaults(scene)
        params = IcicleParams(resolution=(320, 180))
        build_icicle(trace, params, trace_path=str(path))
        n_objects = len(bpy.data.objects)
        span = float(trace.end.max()) - float(trace.start.min())
        window = busiest_window(trace, span / MAGNIFICATION)
        s = scene.tracevis3d
        s.kind, s.seconds, s.fps = "flythrough", 1.0, 12
        s.zoom_window_mode, s.zoom_window_start, s.zoom_window_end, s.zoom_levels = "window", *window, 2
        assert bpy.ops.tracevis3d.animate() == {"FINISHED"}
        info = json.loads(scene[ANIM_KEY])["refine"]
        assert len(info["levels"]) == 2 and info["window"] == pytest.approx(list(window))  # 128x, capped at 2
        assert bpy.data.collections.get(LEVEL_COLLECTION.format(1)) and bpy.data.collections.get(
            LEVEL_COLLECTION.format(2)) and not bpy.data.collections.get(LEVEL_COLLECTION.format(3))
        calls = bpy.data.objects["TV3D_calls"]
        assert calls.modifiers[0].name == FLY_SPLIT_MODIFIER
        ident = {k.name: k.identifier for k in calls.modifiers[0].node_group.interface.items_tree
                 if k.in_out == "INPUT"}
        calls.modifiers["TraceVis3D instancer"].show_viewport = False  # the points, not the boxes
        seen = {}
        for frame in (1, info["levels"][0]["frames"][0], 12):
            scene.frame_set(frame)
            mod = calls.modifiers[FLY_SPLIT_MODIFIER]
            x0, x1 = box_x_extents(calls)
            left, right, shift = (float(mod[ident[k]]) for k in ("Left", "Right", "Shift"))
            seen[frame] = (mod.show_render, left, right, shift)
            if frame == 1:  # the overview whole: the split off
                assert not mod.show_render and x0.size == len(calls.data.points)
                continue
            tol = 1e-3 * (right - left + abs(shift))
            assert mod.show_render and ((x1 <= left + tol) | (x0 >= right + shift - tol)).all(), frame
        first = seen[info["levels"][0]["frames"][0]]
        assert seen[12][2] - seen[12][1] < first[2] - first[1]  # the last level's stretch is the narrower
        calls.modifiers["TraceVis3D instancer"].show_viewport = True
        assert bpy.ops.tracevis3d.clear_animation() == {"FINISHED"}
        assert FLY_KEY not in scene and not any(c.name.startswith(LEVEL_COLLECTION.format(""))
                                                for c in bpy.data.collections)
        assert not any(m.name == FLY_SPLIT_MODIFIER for ob in bpy.data.objects for m in ob.modifiers)
        assert len(bpy.data.objects) == n_objects
        s.zoom_window_mode = "auto"  # the panel's "Busiest": the same window here (the figure is the whole trace)
        assert bpy.ops.tracevis3d.animate() == {"FINISHED"}
        assert json.loads(scene[ANIM_KEY])["refine"]["window"] == pytest.approx(list(window))
        build_icicle(trace, params, trace_path=str(path))  # a new build takes the levels away too
        assert FLY_KEY not in scene and len(bpy.data.objects) == n_objects
    finally:
        next(fixture, None)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("extra,message", [
    (["--zoom-window", "0:1ms"], "--zoom-window is flown into by the icicle's flythrough: --kind flythrough"),
    (["--kind", "flythrough", "--zoom-window", "0:900s"], "not 2x narrower than the figure"),
    (["--kind", "flythrough", "--zoom-window", "900s:901s"], "lies outside the figure"),
])
def test_a_window_that_cannot_be_flown_into_is_one_line(extra, message, tmp_path, capsys):
    path = tmp_path / "run.json"
    tracevis3d.save(tracevis3d.synthetic(2000, threads=1, seed=5), path, format="chrome")
    assert main(["render-animation", str(path), "-o", str(tmp_path / "out"), "--seconds", "1", "--fps", "4",
                 "--resolution", "96x54", *extra]) == 2
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if message in ln]
    assert len(lines) == 1 and "Traceback" not in err, err[-2000:]
