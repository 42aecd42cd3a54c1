"""render-animation (issue 23): real bpy, headless, tiny Workbench renders; we look at pixels.

The trace: four root calls of one thread, well apart in time (0-90, 210-290, 410-490,
610-700 µs), so a growth animation's frame k must show exactly the calls whose start the
clock has passed, and nothing of the others.
"""
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
pytestmark = pytest.mark.blender

from tracevis3d.cli import main  # noqa: E402

STARTS = [0.0, 210.0, 410.0, 610.0]
ENDS = [90.0, 290.0, 490.0, 700.0]
BARE = ["--no-labels", "--no-legend", "--no-axes", "--no-title"]
BG_TOL = 0.06


@pytest.fixture(scope="module")
def four_calls(tmp_path_factory) -> pathlib.Path:
    from tracevis3d.io.chrome_writer import save_chrome
    from tracevis3d.model import Trace

    names = [f"f{k} (/src/app/main.py:{k + 1})" for k in range(4)]
    tr = Trace.from_arrays([0, 1, 2, 3], STARTS, ENDS, [-1, -1, -1, -1], function_names=names)
    path = tmp_path_factory.mktemp("anim") / "four.json"
    save_chrome(tr, path)
    return path


def _png(path) -> np.ndarray:
    from tracevis3d.blender.figure_report import load_image

    return load_image(str(path), channels=4)


def _run(*argv) -> int:
    return main(["render-animation", *map(str, argv)])


def _box_points(frac: float) -> np.ndarray:
    """World points at ``frac`` of each call box's width, mid-height, on its front face."""
    ob = bpy.data.objects["TV3D_calls"]
    A = ob.data.attributes
    n = len(A["position"].data)
    pos = np.empty(n * 3, np.float32)
    sc = np.empty(n * 3, np.float32)
    ci = np.empty(n, np.int32)
    A["position"].data.foreach_get("vector", pos)
    A["tv_scale"].data.foreach_get("vector", sc)
    A["call_index"].data.foreach_get("value", ci)
    pos, sc = pos.reshape(n, 3).astype(float), sc.reshape(n, 3).astype(float)
    order = np.argsort(ci)
    pos, sc = pos[order], sc[order]
    pts = pos.copy()
    pts[:, 0] = pos[:, 0] - sc[:, 0] / 2 + frac * sc[:, 0]
    pts[:, 1] = pos[:, 1] - sc[:, 1] / 2
    return pts


def _project(points) -> np.ndarray:
    from tracevis3d.blender.figure_report import project_points

    return project_points(points, bpy.context.scene)


def _drawn_at(img, px) -> np.ndarray:
    h, w = img.shape[:2]
    out = []
    for x, y in px:
        xi, yi = int(round(x)), int(round(y))
        patch = img[max(yi - 1, 0):min(yi + 2, h), max(xi - 1, 0):min(xi + 2, w), :3]
        out.append(bool((np.abs(patch - 1.0).max(-1) > BG_TOL).all()))
    return np.array(out)


def test_growth_frame_k_shows_exactly_the_started_calls(four_calls, tmp_path):
    out = tmp_path / "frames"
    rc = _run(four_calls, "-o", out, "--seconds", 1, "--fps", 8, "--easing", "linear",
              "--resolution", "320x180", *BARE)
    assert rc == 0
    from tracevis3d.blender.animate import growth_time

    scene = bpy.context.scene
    assert (scene.frame_start, scene.frame_end) == (1, 8)
    pts = _box_points(0.15)
    checked = 0
    for k in range(1, 9):
        t = growth_time(scene, k)
        assert t == pytest.approx(700.0 * (k - 1) / 7, abs=1e-3)
        scene.frame_set(k)
        px = _project(pts)
        want = np.array(STARTS) + 0.15 * (np.array(ENDS) - np.array(STARTS)) < t
        started = np.array(STARTS) < t
        img = _png(out / f"frame_{k:04d}.png")
        seen = _drawn_at(img, px)
        assert (seen == want).all(), (k, t, seen, want)
        # nothing of a call not yet started: its whole box area is background
        checked += int((~started).sum())
    assert checked > 0
    # the modifier is data: the growth group reads t_start/t_end and Scene Time
    ob = bpy.data.objects["TV3D_calls"]
    assert ob.modifiers[0].name == "TraceVis3D growth"
    assert {"t_start", "t_end"} <= set(ob.data.attributes.keys())
    kinds = {n.bl_idname for n in ob.modifiers[0].node_group.nodes}
    assert "GeometryNodeInputSceneTime" in kinds
    assert not bpy.app.handlers.frame_change_pre and not bpy.app.handlers.frame_change_post


def test_ranges_equal_the_whole_render_and_saved_blend_renders_alone(four_calls, tmp_path):
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    common = ["--seconds", 2, "--fps", 10, "--resolution", "96x54", "--samples", 1]
    assert _run(four_calls, "-o", whole, *common, "--save", tmp_path / "scene.blend") == 0
    assert _run(four_calls, "-o", parts, *common, "--frames", "1-10") == 0
    assert _run(four_calls, "-o", parts, *common, "--frames", "11-20") == 0
    names = sorted(os.listdir(whole))
    assert names == [f"frame_{k:04d}.png" for k in range(1, 21)] == sorted(os.listdir(parts))
    for name in names:
        assert np.array_equal(_png(whole / name), _png(parts / name)), name
    # a fresh Blender, no TraceVis3D anywhere (no PYTHONPATH, empty user folders), no trace
    user = tmp_path / "user"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("BLENDER_USER")}
    for d in ("CONFIG", "SCRIPTS", "EXTENSIONS", "DATAFILES"):
        (user / d).mkdir(parents=True)
        env[f"BLENDER_USER_{d}"] = str(user / d)
    alone = tmp_path / "alone.png"
    code = (
        "import bpy, sys\n"
        f"bpy.ops.wm.open_mainfile(filepath={str(tmp_path / 'scene.blend')!r})\n"
        "assert 'tracevis3d' not in sys.modules\n"
        "sc = bpy.context.scene\n"
        "sc.frame_set(13)\n"
        "im = sc.render.image_settings\n"
        "im.media_type = 'IMAGE'; im.file_format = 'PNG'\n"
        f"sc.render.filepath = {str(alone)!r}\n"
        "bpy.ops.render.render(write_still=True)\n")
    far = tmp_path / "elsewhere"
    far.mkdir()
    os.rename(four_calls, four_calls.with_suffix(".moved"))
    try:
        r = subprocess.run([sys.executable, "-c", code], cwd=far, env=env, capture_output=True, text=True,
                           timeout=300)
    finally:
        os.rename(four_calls.with_suffix(".moved"), four_calls)
    assert r.returncode == 0, r.stderr[-2000:]
    assert np.array_equal(_png(alone), _png(whole / "frame_0013.png"))


def test_mp4_decodes_to_the_frame_count_and_size(four_calls, tmp_path):
    out = tmp_path / "a.mp4"
    assert _run(four_calls, "-o", out, "--seconds", 1, "--fps", 10, "--resolution", "128x72",
                "--samples", 1) == 0
    clip = bpy.data.movieclips.load(str(out))
    assert clip.frame_duration == 10
    assert tuple(clip.size) == (128, 72)


def test_turntable_first_and_last_frames_match(four_calls, tmp_path):
    out = tmp_path / "spin"
    assert _run(four_calls, "-o", out, "--kind", "turntable", "--seconds", 1, "--fps", 5,
                "--resolution", "128x72", "--frames", "1-5", "--samples", 1) == 0
    first, last, mid = _png(out / "frame_0001.png"), _png(out / "frame_0005.png"), _png(out / "frame_0003.png")
    # the same view: 360° in float32 is 2π + 1.7e-7 rad, a few anti-aliased edge pixels differ slightly
    diff = np.abs(first - last).max(-1)
    assert (diff > 0.02).mean() < 0.002 and diff.mean() < 0.002, (diff.max(), (diff > 0.02).mean())
    assert np.abs(first - mid).max() > 0.1  # it does move
    info = json.loads(bpy.context.scene["tracevis3d_animation"])
    assert info["kind"] == "turntable"


def test_flythrough_keeps_its_target_in_frame(four_calls, tmp_path):
    out = tmp_path / "fly"
    assert _run(four_calls, "-o", out, "--kind", "flythrough", "--seconds", 2, "--fps", 6,
                "--resolution", "160x90", "--samples", 1, *BARE) == 0
    scene = bpy.context.scene
    info = json.loads(scene["tracevis3d_animation"])
    k = info["target"]["frame"]
    scene.frame_set(k)
    px = _project(np.array([info["target"]["world"]]))[0]
    assert 0.1 * 160 < px[0] < 0.9 * 160 and 0.1 * 90 < px[1] < 0.9 * 90, px
    img = _png(out / f"frame_{k:04d}.png")
    assert _drawn_at(img, [px]).all()
    # an establishing shot: frame 1 shows every call whole, the path then goes closer
    scene.frame_set(1)
    corners = np.concatenate([_box_points(0.0), _box_points(1.0)])
    c_px = _project(corners)
    assert (c_px[:, 0] > 0).all() and (c_px[:, 0] < 160).all() and (c_px[:, 1] > 0).all() and (c_px[:, 1] < 90).all()
    far = np.ptp(c_px[:, 0])
    scene.frame_set(k)
    assert np.ptp(_project(corners)[:, 0]) > 2 * far  # closer at the target
    # the camera moves by keyframes (F-curves), nothing else
    cam = scene.camera
    assert cam.animation_data is not None and cam.animation_data.action is not None
    assert not cam.animation_data.drivers


def test_flythrough_targets_a_task_not_the_loop_and_hides_the_inset(tmp_path):
    """A browser-like thread: a message loop (a root over the whole run) running tasks, the
    busiest at the start.  The fly-through's target is a task (a box at most a quarter of the
    figure wide), never the loop, the largest box; the path ends where the tasks end, not over
    the loop's idle rest; the still's detail inset (a magnifier in the room the still's camera
    left) is hidden, and the path keeps off it."""
    from tracevis3d.io.chrome_writer import save_chrome
    from tracevis3d.model import Trace

    names = ["RunLoop::Run", "RunTask"] + [f"Document::Step{k}" for k in range(20)]
    func, start, end, parent = [0], [0.0], [10000.0], [-1]
    t = 10.0
    for k in range(60):  # tasks, short and many at the start (20 functions: an inset names them), one long
        d = 30.0 if k < 59 else 1500.0
        func += [1, 2 + k % 20]
        start += [t, t + 1.0]
        end += [t + d, t + d - 1.0]
        parent += [0, len(func) - 2]
        t += d + (5.0 if k < 40 else 80.0)
    path = tmp_path / "loop.json"
    save_chrome(Trace.from_arrays(func, start, end, parent, function_names=names), path)
    out = tmp_path / "fly"
    assert _run(path, "-o", out, "--kind", "flythrough", "--seconds", 1, "--fps", 6,
                "--resolution", "1280x720", "--samples", 1, "--frames", "1-1") == 0
    scene = bpy.context.scene
    info = json.loads(scene["tracevis3d_animation"])
    calls = bpy.data.objects["TV3D_calls"]
    A = calls.data.attributes
    n = len(A["position"].data)
    pos, sc = np.empty(n * 3, np.float32), np.empty(n * 3, np.float32)
    A["position"].data.foreach_get("vector", pos)
    A["tv_scale"].data.foreach_get("vector", sc)
    pos, sc = pos.reshape(n, 3), sc.reshape(n, 3)
    j = int(np.argmin(np.abs(pos - np.array(info["target"]["world"], np.float32)).sum(1)))  # the target box
    assert np.allclose(pos[j], info["target"]["world"], atol=1e-4)
    assert sc[j, 0] <= 0.25 * float(sc[:, 0].max()), (sc[j], float(sc[:, 0].max()))
    # the path ends where the tasks end (half the run), not over the loop's idle end
    scene.frame_set(scene.frame_end)
    tasks = sc[:, 0] < 0.5 * float(sc[:, 0].max())
    last = int(np.argmax(np.where(tasks, pos[:, 0] + sc[:, 0] / 2, -np.inf)))  # the last task's end
    end = pos[last] + np.array([sc[last, 0] / 2, -sc[last, 1] / 2, 0.0], np.float32)
    assert 0 < _project(end[None].astype(float))[0][0] < 1280, _project(end[None].astype(float))
    # a figure with an inset (a crowded stretch of 5 functions, as the growth's test below)
    ev = [{"ph": "X", "name": "main (tool.py:1)", "pid": 1, "tid": 1, "ts": 0, "dur": 10000},
          {"ph": "X", "name": "parse_args (argparse.py:1)", "pid": 1, "tid": 1, "ts": 1200, "dur": 300},
          {"ph": "X", "name": "work (tool.py:10)", "pid": 1, "tid": 1, "ts": 2000, "dur": 7900}]
    ev += [{"ph": "X", "name": f"sre.s{k} (sre.py:{10 + k})", "pid": 1, "tid": 1, "ts": 1202.0 + 58 * k, "dur": 50}
           for k in range(5)]
    crowd = tmp_path / "crowd.json"
    crowd.write_text(json.dumps({"traceEvents": ev}))
    assert _run(crowd, "-o", tmp_path / "fly2", "--kind", "flythrough", "--seconds", 1, "--fps", 6,
                "--resolution", "960x540", "--samples", 1, "--frames", "1-1", "--max-callouts", 0) == 0
    scene = bpy.context.scene
    inset = [ob for ob in scene.objects if str(ob.get("tv3d_layer", "")).startswith("inset_")
             or ob.get("inset", -1) == 1 or ob.get("tv3d_kind") == "inset"]
    assert len(inset) >= 4 and all(ob.hide_render and ob.hide_viewport for ob in inset), \
        [(ob.name, ob.hide_render) for ob in inset]


def test_device_gpu_without_gpu_exits_2_with_one_line(four_calls, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(pathlib.Path(__file__).resolve().parents[2]))
    r = subprocess.run([sys.executable, "-m", "tracevis3d", "render-animation", str(four_calls), "-o",
                        str(tmp_path / "f"), "--device", "gpu"], env=env, capture_output=True, text=True,
                       timeout=300)
    from tracevis3d.blender.device import find_gpu

    if find_gpu()[0] is not None:
        pytest.skip("this machine has a GPU")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "--device gpu" in lines[0], r.stderr


def test_device_auto_says_cpu_once(four_calls, tmp_path, capsys):
    from tracevis3d.blender.device import find_gpu

    if find_gpu()[0] is not None:
        pytest.skip("this machine has a GPU")
    out = tmp_path / "still.png"
    assert main(["render-icicle", str(four_calls), "-o", str(out), "--resolution", "64x36", "--device", "auto"]) == 0
    err = capsys.readouterr().err
    assert err.count("device: CPU") == 1, err


def test_bad_animation_arguments_are_one_line_exit_2(four_calls, tmp_path, capsys):
    for argv, word in (([four_calls, "-o", tmp_path / "x.gif"], "folder for PNG frames"),
                       ([four_calls, "-o", tmp_path / "f", "--frames", "5-2"], "frames"),
                       ([four_calls, "-o", tmp_path / "f", "--seconds", 1, "--fps", 4, "--frames", "3-9"],
                        "frames 1-4"),
                       ([four_calls, four_calls, "-o", tmp_path / "f", "--kind", "handoffs"], "thread view"),
                       ([four_calls, "--view", "cone", "-o", tmp_path / "f", "--kind", "handoffs"], "thread view"),
                       ([four_calls, "-o", tmp_path / "f", "--kind", "reveal"], "two traces"),
                       ([four_calls, "-o", tmp_path / "f", "--view", "compare"], "two traces")):
        assert _run(*argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and word in err[0], err


@pytest.fixture(scope="module")
def pair(tmp_path_factory) -> tuple:
    import tracevis3d
    from tracevis3d.io.chrome_writer import save_chrome

    a = tracevis3d.synthetic(1500, threads=1, seed=3)
    b = tracevis3d.perturb(a, seed=1)
    d = tmp_path_factory.mktemp("pair")
    save_chrome(a, d / "a.json")
    save_chrome(b, d / "b.json")
    return d / "a.json", d / "b.json"


def test_reveal_tubes_grow_from_a_to_b_in_order(pair, tmp_path):
    out = tmp_path / "rev"
    assert _run(*pair, "-o", out, "--seconds", 1, "--fps", 8, "--resolution", "640x360", "--samples", 1,
                "--frames", "8-8") == 0
    scene = bpy.context.scene
    info = json.loads(scene["tracevis3d_animation"])
    assert info["kind"] == "reveal" and info["tubes"] > 3
    ob = bpy.data.objects[info["tube_object"]]
    assert ob.modifiers[-1].name == "TraceVis3D reveal"
    me = ob.data
    n_all = len(me.vertices)
    z = np.empty(n_all * 3, np.float32)
    me.attributes["position"].data.foreach_get("vector", z)
    z_bottom = z.reshape(-1, 3)[:, 2].min()

    def shown(frame):
        scene.frame_set(frame)
        ev = ob.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
        p = np.empty(len(ev.vertices) * 3, np.float32)
        ev.vertices.foreach_get("co", p)
        return p.reshape(-1, 3)

    counts = [len(shown(k)) for k in range(1, 9)]
    assert counts[0] == 0 and counts[-1] == n_all
    assert all(x <= y for x, y in zip(counts, counts[1:])) and 0 < counts[3] < n_all
    # a tube grows from its A end (above) to its B end: when the first ones show, none has reached B
    first = next(k for k, c in enumerate(counts, 1) if c > 0)
    assert shown(first)[:, 2].min() > z_bottom + 0.05
    assert (out / "frame_0008.png").is_file()


def test_handoffs_appear_when_their_waits_end(sync_program_path, tmp_path):
    """tests/support/sync_program.py recorded with VizTracer (known hand-offs; committed)."""
    out = tmp_path / "hand"
    assert _run(sync_program_path, "--view", "threads", "-o", out, "--seconds", 1, "--fps", 6, "--easing", "linear",
                "--resolution", "320x180", "--samples", 1, "--frames", "6-6") == 0
    scene = bpy.context.scene
    info = json.loads(scene["tracevis3d_animation"])
    assert info["kind"] == "handoffs" and info["handoff_faces"] > 0
    ob = bpy.data.objects["TV3D_corr"]
    assert ob.modifiers[-1].name == "TraceVis3D handoffs"
    t = np.empty(len(ob.data.polygons), np.float32)
    ob.data.attributes["t_handoff"].data.foreach_get("value", t)
    c = info["clock"]
    for k in range(1, 7):
        scene.frame_set(k)
        now = c["Trace Start (µs)"] + (k - 1) / 5 * (c["Trace End (µs)"] - c["Trace Start (µs)"])
        ev = ob.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
        assert len(ev.polygons) == int((t <= now).sum()), k
    assert 0 < int((t <= c["Trace End (µs)"] / 2).sum()) < len(t)  # some before the middle, some after


def test_comparison_growth_each_run_in_its_own_time(pair, tmp_path):
    out = tmp_path / "cgrow"
    assert _run(*pair, "--kind", "growth", "-o", out, "--seconds", 1, "--fps", 6, "--easing", "linear",
                "--resolution", "320x180", "--samples", 1, "--frames", "6-6") == 0
    scene = bpy.context.scene
    info = json.loads(scene["tracevis3d_animation"])
    assert info["kind"] == "growth" and len(info["now_objects"]) == 2 and info["tubes"] > 0
    for side in "ab":
        ob = bpy.data.objects[f"TV3D_calls_{side}"]
        assert ob.modifiers[0].name == "TraceVis3D growth"
        t = np.empty(len(ob.data.attributes["position"].data), np.float32)
        ob.data.attributes["t_start"].data.foreach_get("value", t)
        assert t.min() >= -1.0  # µs from the side's own window start
    tubes = bpy.data.objects[info["tube_object"]]

    def n_tube_vertices(k):
        scene.frame_set(k)
        return len(tubes.evaluated_get(bpy.context.evaluated_depsgraph_get()).data.vertices)

    counts = [n_tube_vertices(k) for k in range(1, 7)]
    assert counts[0] == 0 and counts[-1] == len(tubes.data.vertices)
    assert all(x <= y for x, y in zip(counts, counts[1:]))


@pytest.mark.parametrize("stretch", [1.0, 1.4])
def test_sector_times_against_a_per_vertex_twin(stretch):
    """`anim_threads.sector_times` against the rule done one vertex at a time: the angle
    around the ring's origin in the front plane (x unstretched: a half-ellipse's ring), the
    lane whose angles hold it, the time on that lane's linear map, a sector's first time the
    least of its vertices'."""
    import math

    from tracevis3d.blender.anim_threads import sector_times

    rng = np.random.default_rng(5)
    lanes = np.array([[math.pi, 0.75 * math.pi], [0.7 * math.pi, 0.3 * math.pi], [0.25 * math.pi, 0.0]])
    origin = (1.5, 0.2, -0.7)
    span = 5000.0
    n_sec = 40
    lane = rng.integers(0, 3, n_sec)
    f = np.sort(rng.uniform(0, 1, (n_sec, 2)), axis=1)
    verts, quads, sector = [], [], []
    for s in range(n_sec):  # a strip of 3 quads per sector between its two angles, two radii
        a = lanes[lane[s], 0] + np.linspace(f[s, 0], f[s, 1], 4) * (lanes[lane[s], 1] - lanes[lane[s], 0])
        r0, r1 = rng.uniform(1, 2), rng.uniform(2.1, 3)
        base = len(verts)
        for ang in a:
            for r in (r0, r1):
                verts.append((origin[0] + stretch * r * math.cos(ang), origin[1] + 0.1, origin[2] - r * math.sin(ang)))
        for j in range(3):
            quads.append((base + 2 * j, base + 2 * j + 1, base + 2 * j + 3, base + 2 * j + 2))
            sector.append(s)
    got = sector_times(np.array(verts), np.array(quads), np.array(sector), origin, lanes, span, stretch)
    for i, (x, _y, z) in enumerate(verts):
        ang = math.atan2(-(z - origin[2]), (x - origin[0]) / stretch)
        ln = next(k for k in range(3) if min(lanes[k]) - 1e-9 <= ang <= max(lanes[k]) + 1e-9)
        t = (ang - lanes[ln, 0]) / (lanes[ln, 1] - lanes[ln, 0]) * span
        assert got["t_vertex"][i] == pytest.approx(min(max(t, 0.0), span), abs=0.05)
        assert got["ring_r"][i] == pytest.approx(math.hypot((x - origin[0]) / stretch, z - origin[2]), rel=1e-5)
        assert got["arc_a0"][i] + got["arc_dadt"][i] * got["t_vertex"][i] == pytest.approx(ang, abs=1e-5)
    for fi, s in enumerate(sector):
        assert got["t_first"][fi] == pytest.approx(f[s, 0] * span, abs=0.05)


def test_thread_view_growth_rings_grow_along_their_arcs(sync_program_path, tmp_path):
    """render-animation --view threads --kind growth: the wall grows like the icicle, every
    ring sector at frame k reaches no later than the clock's time on its lane's angle map,
    a sector not yet started is absent, the last frame is the whole figure, and the
    hand-offs appear with the same clock."""
    from tracevis3d.blender.anim_threads import sector_times

    out = tmp_path / "tgrow"
    assert _run(sync_program_path, "--view", "threads", "--kind", "growth", "-o", out, "--seconds", 1, "--fps", 6,
                "--easing", "linear", "--resolution", "320x180", "--samples", 1, "--frames", "6-6") == 0
    scene = bpy.context.scene
    info = json.loads(scene["tracevis3d_animation"])
    assert info["kind"] == "growth" and "ring" in info["arc_layers"] and info["arc_faces"] > 0
    assert bpy.data.objects["TV3D_wall_calls"].modifiers[0].name == "TraceVis3D growth"
    meta = json.loads(scene["tracevis3d_meta"])
    ring = bpy.data.objects["TV3D_ring"]
    me = ring.data
    t_first = np.empty(len(me.polygons), np.float32)
    me.attributes["t_first"].data.foreach_get("value", t_first)
    c = info["clock"]
    span = c["Trace End (µs)"]
    faces = []
    for k in range(1, 7):
        scene.frame_set(k)
        now = (k - 1) / 5 * span
        ev = ring.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
        faces.append(len(ev.polygons))
        tol = 1e-6 * span  # float32 attributes
        assert int((t_first <= now - tol).sum()) <= len(ev.polygons) <= int((t_first <= now + tol).sum()), k
        if len(ev.polygons):
            v = np.empty(3 * len(ev.vertices), np.float32)
            ev.attributes["position"].data.foreach_get("vector", v)
            corner = np.empty(len(ev.loops), np.int32)
            ev.attributes[".corner_vert"].data.foreach_get("value", corner)
            sec = np.empty(len(ev.polygons), np.int32)
            ev.attributes["sector_index"].data.foreach_get("value", sec)
            at = sector_times(v.reshape(-1, 3), corner.reshape(-1, 4), sec, meta["ring_origin"], meta["lane_angles"],
                              span, meta.get("ring_stretch", 1.0))
            assert at["t_vertex"].max() <= now + 2e-3 * span, (k, at["t_vertex"].max(), now)
    assert faces[0] < faces[-1] == len(me.polygons) and all(a <= b for a, b in zip(faces, faces[1:]))
    assert info.get("handoff_faces", 0) > 0
    assert (out / "frame_0006.png").is_file()


def test_node_appear_us_against_the_calls_of_each_context():
    """`node_appear_us` against its rule, node by node: a node with a first call appears at
    that call's start; a pseudo node (no call: a thread's root, the root) with the earliest
    of its children (recursively)."""
    from tracevis3d.layout.cone_geometry import node_appear_us

    rng = np.random.default_rng(2)
    n = 60
    parent = np.full(n, -1)
    depth = np.zeros(n, int)
    for k in range(1, n):
        parent[k] = rng.integers(0, k)
        depth[k] = depth[parent[k]] + 1
    start = rng.uniform(100, 900, 500)
    first = rng.integers(0, 500, n)
    first[rng.uniform(size=n) < 0.2] = -1
    first[0] = -1
    got = node_appear_us(first, start, parent, depth, 100.0)

    def value(k):
        if first[k] >= 0:
            return start[first[k]] - 100.0
        return min([value(c) for c in range(n) if parent[c] == k], default=np.inf)

    for k in range(n):
        want = value(k)
        assert got[k] == pytest.approx(want if np.isfinite(want) else 0.0, abs=1e-3), k


def test_cone_growth_nodes_appear_when_their_context_is_entered(four_calls, sync_program_path, tmp_path):
    """render-animation --view cone --kind growth: at frame k exactly the nodes (and edges,
    circles) whose context was entered by the clock's time are drawn, a node's name shows
    with it, the last frame is the whole tree, and the clock stands after the title."""
    out = tmp_path / "cgrow"
    assert _run(sync_program_path, "--view", "cone", "--kind", "growth", "-o", out, "--seconds", 1, "--fps", 6,
                "--easing", "linear", "--resolution", "320x180", "--samples", 1, "--frames", "6-6") == 0
    scene = bpy.context.scene
    info = json.loads(scene["tracevis3d_animation"])
    assert info["kind"] == "growth" and info["appear_faces"] > 0
    nodes = bpy.data.objects["TV3D_cone_nodes"]
    me = nodes.data
    t = np.empty(len(me.polygons), np.float32)
    me.attributes["t_appear"].data.foreach_get("value", t)
    span = info["clock"]["Trace End (µs)"]
    counts = []
    for k in range(1, 7):
        scene.frame_set(k)
        now = (k - 1) / 5 * span
        ev = nodes.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
        counts.append(len(ev.polygons))
        tol = 1e-6 * span
        assert int((t <= now - tol).sum()) <= len(ev.polygons) <= int((t <= now + tol).sum()), k
    assert counts[0] < counts[-1] == len(me.polygons) and counts[2] < counts[-1]
    assert bpy.data.objects["TV3D_now"].parent == scene.camera
    named = [ob for ob in bpy.data.collections["TraceVis3D"].objects
             if ob.type == "FONT" and ob.get("call_index", -1) >= 0 and ob.animation_data is not None]
    assert named  # some names wait for their node
    scene.frame_set(1)
    assert any(ob.hide_render for ob in named)
    scene.frame_set(6)
    assert not any(ob.hide_render for ob in named)


def test_retiming_the_scene_clock_moves_boxes_and_names_together(sync_program_path, tmp_path):
    """The clock lives in the scene's five custom properties: every modifier's clock inputs
    follow them (drivers without Python) and so does every name's visibility, so editing
    them (here: the animation twice as fast, linear) retimes the boxes and the names alike.
    Checked on the evaluated boxes (a call is drawn iff the clock reached its start) and on
    each name (shown iff the clock reached its time) at every frame."""
    from tracevis3d.blender.anim_nodes import CLOCK_PROPERTY, read_clock, trace_time

    out = tmp_path / "retime"
    assert _run(sync_program_path, "--view", "threads", "--kind", "growth", "-o", out, "--seconds", 2, "--fps", 5,
                "--easing", "eased", "--resolution", "160x90", "--samples", 1, "--frames", "1-1") == 0
    scene = bpy.context.scene
    before = read_clock(scene)
    assert set(before) == {"Start (s)", "Duration (s)", "Ease", "Trace Start (µs)", "Trace End (µs)"}
    scene[CLOCK_PROPERTY.format("Duration (s)")] = before["Duration (s)"] / 2
    scene[CLOCK_PROPERTY.format("Ease")] = 0.0
    scene.update_tag()  # what editing the property in Blender's UI does
    c = read_clock(scene)
    wall = bpy.data.objects["TV3D_wall_calls"]
    t_start = np.empty(len(wall.data.attributes["position"].data), np.float32)
    wall.data.attributes["t_start"].data.foreach_get("value", t_start)
    timed = [ob for ob in bpy.data.collections["TraceVis3D"].objects
             if ob.type == "FONT" and ob.animation_data is not None and ob.animation_data.drivers]
    assert timed and all(fc.driver.is_simple_expression for ob in timed for fc in ob.animation_data.drivers)

    def check(k):
        """Boxes and names at frame k agree with the clock at the scene's second of k."""
        scene.frame_set(k)
        fps = scene.render.fps / scene.render.fps_base
        now = float(trace_time([k], fps, c["Start (s)"], c["Duration (s)"], c["Ease"],
                               c["Trace Start (µs)"], c["Trace End (µs)"])[0])
        mod = wall.modifiers["TraceVis3D growth"]
        assert mod[mod.node_group.interface.items_tree["Duration (s)"].identifier] == pytest.approx(c["Duration (s)"])
        # the growth modifier's own output (the instancer after it off): the widths tv_scale.x
        for m in wall.modifiers[1:]:
            m.show_viewport = False
        ev = wall.evaluated_get(bpy.context.evaluated_depsgraph_get())
        sc = np.empty(3 * len(ev.data.attributes["position"].data), np.float32)
        ev.data.attributes["tv_scale"].data.foreach_get("vector", sc)
        for m in wall.modifiers[1:]:
            m.show_viewport = True
        grown = sc.reshape(-1, 3)[:, 0] > 0
        tol = 1e-4 * c["Trace End (µs)"]
        assert ((t_start < now - tol) <= grown).all() and (grown <= (t_start < now + tol)).all(), k
        for ob in timed:  # each name: hidden iff the retimed clock has not reached its time
            at = float(ob.animation_data.drivers[0].driver.expression.rsplit("<", 1)[1])
            assert ob.hide_render == (now < at) or abs(now - at) < tol, (k, ob.name, now, at)
        return sum(not ob.hide_render for ob in timed)

    shown_counts = [check(k) for k in range(1, 11)]
    # twice as fast: everything is grown by the middle of the animation, names shown
    assert shown_counts[0] < shown_counts[5] == len(timed) == shown_counts[-1], shown_counts
    # a frame rate with a base (29.97 = 30 / 1.001; here 5 / 2): Scene Time and the names alike
    scene.render.fps_base = 2.0
    assert [check(k) for k in range(1, 6)][1] < len(timed)
    scene.render.fps_base = 1.0


def test_callout_leaders_appear_with_their_names(tmp_path):
    """The growth shows a callout's leader (`layout.callouts`) exactly while its name is shown:
    at every frame, the evaluated leader mesh has the faces of the calls whose callout name
    the clock has reached, and no others."""
    from tracevis3d.io.chrome_writer import save_chrome
    from tracevis3d.model import Trace

    # main over 10 ms, a wide call two levels deep, and three narrow ones (callouts) at 3.1, 5.6
    # and 8.6 ms
    starts = [0.0, 60.0, 70.0, 80.0, 3100.0, 5600.0, 8600.0]
    ends = [10000.0, 3000.0, 2900.0, 2800.0, 3150.0, 5660.0, 8645.0]
    names = ["main (tool.py:1)", "work (tool.py:10)", "inner (tool.py:20)", "leaf (tool.py:30)",
             "parse_args (argparse.py:1)", "load (json/__init__.py:1)", "encode (json/encoder.py:1)"]
    tr = Trace.from_arrays(list(range(7)), starts, ends, [-1, 0, 1, 2, 0, 0, 0], function_names=names)
    path = tmp_path / "tool.json"
    save_chrome(tr, path)
    out = tmp_path / "frames"
    assert _run(path, "-o", out, "--seconds", 2, "--fps", 5, "--easing", "linear", "--resolution", "960x540",
                "--frames", "1-1", "--no-legend") == 0
    scene = bpy.context.scene
    lead = bpy.data.objects["TV3D_callout_leaders"]
    assert "TraceVis3D appear" in lead.modifiers
    calls = np.empty(len(lead.data.polygons), np.int32)
    lead.data.attributes["call_index"].data.foreach_get("value", calls)
    assert len(set(calls.tolist())) >= 1 and set(calls.tolist()) <= {4, 5, 6}
    names_of = {int(ob["call_index"]): ob for ob in bpy.data.collections["TraceVis3D"].objects
                if ob.type == "FONT" and ob.get("callout_leader", -1) >= 0}
    assert set(names_of) == set(calls.tolist())
    shown_counts = []
    for k in range(1, 11):
        scene.frame_set(k)
        ev = lead.evaluated_get(bpy.context.evaluated_depsgraph_get())
        seen = np.empty(len(ev.data.polygons), np.int32)
        if len(seen):  # (no faces left: no attributes either)
            ev.data.attributes["call_index"].data.foreach_get("value", seen)
        shown = {c for c, ob in names_of.items() if not ob.hide_render}
        assert set(seen.tolist()) == shown, (k, sorted(set(seen.tolist())), sorted(shown))
        shown_counts.append(len(shown))
    assert shown_counts[0] < shown_counts[-1] == len(names_of), shown_counts


def test_the_detail_inset_grows_on_its_own_time_axis(tmp_path):
    """A growth of a figure with a detail inset (`layout.inset`): the inset's boxes carry the
    growth modifier with their own times, and each of its names shows only once the clock
    has passed its call's start, all of them once it has passed the inset's stretch."""
    from tracevis3d.blender.animate import growth_time

    ev = [{"ph": "X", "name": "main (tool.py:1)", "pid": 1, "tid": 1, "ts": 0, "dur": 10000},
          {"ph": "X", "name": "parse_args (argparse.py:1)", "pid": 1, "tid": 1, "ts": 1200, "dur": 300},
          {"ph": "X", "name": "work (tool.py:10)", "pid": 1, "tid": 1, "ts": 2000, "dur": 7900}]
    t = 1202.0
    for k in range(5):
        ev.append({"ph": "X", "name": f"sre.s{k} (sre.py:{10 + k})", "pid": 1, "tid": 1, "ts": t, "dur": 50})
        t += 58
    path = tmp_path / "crowd.json"
    path.write_text(json.dumps({"traceEvents": ev}))
    out = tmp_path / "frames"
    assert _run(path, "-o", out, "--seconds", 20, "--fps", 5, "--easing", "linear", "--resolution", "960x540",
                "--frames", "1-1", "--max-callouts", 0) == 0
    scene = bpy.context.scene
    assert json.loads(scene["tracevis3d_meta"]).get("inset")  # the build recorded the inset's axis
    boxes = bpy.data.objects["TV3D_inset_boxes"]
    assert "TraceVis3D growth" in boxes.modifiers and "t_start" in boxes.data.attributes
    names = [ob for ob in bpy.data.collections["TraceVis3D"].objects
             if ob.type == "FONT" and ob.get("inset", -1) == 1 and ob.get("call_index", -1) >= 0]
    assert len(names) >= 3
    import tracevis3d

    tr = tracevis3d.load(path)
    starts = {int(ob["call_index"]): float(tr.start[int(ob["call_index"])]) for ob in names}
    seen_partial = False
    for k in range(1, 101):
        scene.frame_set(k)
        now = growth_time(scene, k)
        shown = [ob for ob in names if not ob.hide_render]
        for ob in shown:
            assert now >= starts[int(ob["call_index"])] - 1e-6, (k, now, ob.data.body)
        if now >= 1600.0:
            assert len(shown) == len(names), (k, now)
        seen_partial |= 0 < len(shown) < len(names)
    assert seen_partial


def _served(sent_us: float) -> list:
    """Thread 2 serving for 10 ms, receiving (6.0–7.0 ms) a flow thread 1 sent at ``sent_us``."""
    return [{"ph": "X", "name": "serve (tool.py:90)", "pid": 1, "tid": 2, "ts": 0, "dur": 10000},
            {"ph": "X", "name": "recv (tool.py:95)", "pid": 1, "tid": 2, "ts": 6000, "dur": 1000},
            {"ph": "s", "name": "f", "cat": "ipc", "id": 1, "pid": 1, "tid": 1, "ts": sent_us},
            {"ph": "f", "bp": "e", "name": "f", "cat": "ipc", "id": 1, "pid": 1, "tid": 2, "ts": 6100}]


def test_flow_arcs_appear_when_the_clock_reaches_the_call_they_reach(tmp_path):
    """A growth of a figure with flows (`layout.flow_arcs`): an arc is drawn from the frame the
    clock reaches the call it ends in, never before (they stood over the empty lanes from
    frame 1: a PyTorch profile's launches)."""
    ev = [{"ph": "X", "name": "main (tool.py:1)", "pid": 1, "tid": 1, "ts": 0, "dur": 10000},
          {"ph": "X", "name": "send (tool.py:5)", "pid": 1, "tid": 1, "ts": 1000, "dur": 500}] + _served(1100)
    path = tmp_path / "flow.json"
    path.write_text(json.dumps({"traceEvents": ev}))
    assert _run(path, "-o", tmp_path / "frames", "--seconds", 2, "--fps", 5, "--easing", "linear",
                "--resolution", "640x360", "--frames", "1-1") == 0
    scene = bpy.context.scene
    info = json.loads(scene["tracevis3d_animation"])
    assert info["flow_arcs_timed"] == 1
    arcs = bpy.data.objects["TV3D_flows"]
    assert "TraceVis3D appear" in arcs.modifiers
    faces = []
    for k in range(1, 11):
        scene.frame_set(k)
        faces.append(len(arcs.evaluated_get(bpy.context.evaluated_depsgraph_get()).data.polygons))
    from tracevis3d.blender.animate import growth_time

    shown = [growth_time(scene, k) >= 6000.0 for k in range(1, 11)]  # the clock, µs from the trace's start
    assert [f > 0 for f in faces] == shown, (faces, [round(growth_time(scene, k)) for k in range(1, 11)])
    assert not shown[0] and shown[-1]


def test_thread_view_growth_times_its_flow_arcs_and_callout_leaders(tmp_path):
    """The thread view's growth: its flow arcs (`layout.threads_flows`, carrying ``t_reach``)
    appear when the clock reaches the call each reaches, and a callout's leader never before
    its name (a name above the wall was timed with the ring's names, its leader from frame 1)."""
    # a stack 5 levels deep over the whole run, three narrow calls on its top: their names go
    # above the wall (as torch_cnn's did), timed with the ring's names
    ev = [{"ph": "X", "name": f"level{d} (tool.py:{d + 1})", "pid": 1, "tid": 1, "ts": d, "dur": 10000 - 2 * d}
          for d in range(5)]
    ev += [{"ph": "X", "name": "parse_args (argparse.py:1)", "pid": 1, "tid": 1, "ts": 3100, "dur": 50},
           {"ph": "X", "name": "load (json/__init__.py:1)", "pid": 1, "tid": 1, "ts": 5600, "dur": 60},
           {"ph": "X", "name": "encode (json/encoder.py:1)", "pid": 1, "tid": 1, "ts": 8600, "dur": 45}]
    ev += _served(100)
    path = tmp_path / "two.json"
    path.write_text(json.dumps({"traceEvents": ev}))
    assert _run(path, "-o", tmp_path / "frames", "--view", "threads", "--kind", "growth", "--seconds", 2,
                "--fps", 5, "--easing", "linear", "--resolution", "960x540", "--frames", "1-1", "--fold", "none") == 0
    scene = bpy.context.scene
    info = json.loads(scene["tracevis3d_animation"])
    assert info["flow_arcs_timed"] >= 1
    from tracevis3d.blender.animate import growth_time

    dg = bpy.context.evaluated_depsgraph_get
    arcs = bpy.data.objects["TV3D_flows"]
    lead = bpy.data.objects.get("TV3D_callout_leaders")
    names = {int(ob["call_index"]): ob for ob in bpy.data.collections["TraceVis3D"].objects
             if ob.type == "FONT" and ob.get("callout_leader", -1) >= 0}
    for k in range(1, 11):
        scene.frame_set(k)
        n_arc = len(arcs.evaluated_get(dg()).data.polygons)
        assert (n_arc > 0) == (growth_time(scene, k) >= 6000.0), (k, n_arc, growth_time(scene, k))
        if lead is not None and names:
            ev_lead = lead.evaluated_get(dg()).data
            seen = np.empty(len(ev_lead.polygons), np.int32)
            if len(seen):
                ev_lead.attributes["call_index"].data.foreach_get("value", seen)
            shown = {c for c, ob in names.items() if not ob.hide_render}
            assert set(seen.tolist()) <= shown, (k, set(seen.tolist()), shown)
    from tracevis3d.blender.anim_camera import box_extent
    from tracevis3d.blender.animate import _world_boxes

    _lo, hi = box_extent(_world_boxes(bpy.data.collections["TraceVis3D"]))
    assert names and all(ob.location.z > hi[2] for ob in names.values())  # the names above the wall


def test_a_moving_camera_puts_the_names_in_front_of_arcs_back_on_their_boxes(tmp_path):
    """The still brings a name that flow arcs cross in front of them, scaled about its camera
    (`layout.flow_arcs.labels_over_arcs`: the same pixels from there).  Seen from a camera
    that moves it would float in front of its box: a fly-through or a turntable puts it back
    (scaled by 1/k about the still's camera), and clearing the animation brings it forward
    again; names the arcs do not cross never move."""
    from side_traces import crossed_by_arcs

    from tracevis3d.blender.animate import clear_animation
    from tracevis3d.io.native import save_native
    from tracevis3d.layout.flow_arcs import ARC_SCALE_KEY

    path = tmp_path / "crossed.tv3d.npz"
    save_native(crossed_by_arcs(), path)
    assert _run(path, "-o", tmp_path / "still", "--kind", "growth", "--seconds", 1, "--fps", 2,
                "--resolution", "960x540", "--frames", "1-1") == 0
    fonts = [ob for ob in bpy.data.collections["TraceVis3D"].objects if ob.type == "FONT"]
    moved = [ob for ob in fonts if ob.get(ARC_SCALE_KEY, -1) > 0]
    assert moved
    before = {ob.name: (np.array(ob.location), ob.data.size) for ob in fonts}
    scene = bpy.context.scene
    clear_animation(scene)
    eye = np.array(json.loads(scene.camera["tv3d_still"])["location"])
    assert _run(path, "-o", tmp_path / "fly", "--kind", "flythrough", "--seconds", 1, "--fps", 2,
                "--resolution", "960x540", "--frames", "1-1") == 0
    fonts = {ob.name: ob for ob in bpy.data.collections["TraceVis3D"].objects if ob.type == "FONT"}
    for name, (loc, size) in before.items():
        ob = fonts[name]
        k = ob.get(ARC_SCALE_KEY, -1) / 1e6
        if k > 0:  # back on its box: 1/k times as far from the still's camera, 1/k times as large
            assert np.allclose(np.array(ob.location), eye + (loc - eye) / k, atol=1e-4)
            assert abs(ob.data.size - size / k) < 1e-5
            assert ob.hide_render == (ob.get("tv3d_kind") == "halo")  # a halo would lie in its name's plane
        elif ob.get("tv3d_kind") != "lane":  # (lanes' names follow the camera's left edge: keyed)
            assert np.allclose(np.array(ob.location), loc, atol=1e-6)
    clear_animation(bpy.context.scene)
    for name, (loc, size) in before.items():
        assert np.allclose(np.array(fonts[name].location), loc, atol=1e-4) and abs(fonts[name].data.size - size) < 1e-5
        assert not fonts[name].hide_render


def test_the_clock_stands_above_the_top_faces_the_camera_sees(four_calls, tmp_path):
    """Seen from above, the top faces of the highest boxes rise above their front edge on the
    picture; the growth's clock stands above where the camera sees the figure's top back edge
    (it stood on the top bar: red "2.828 s" on a PyTorch profile's blue span)."""
    from bpy_extras.object_utils import world_to_camera_view
    from mathutils import Vector

    from tracevis3d.blender.anim_camera import box_extent
    from tracevis3d.blender.animate import _world_boxes

    assert _run(four_calls, "-o", tmp_path / "g", "--seconds", 1, "--fps", 2, "--resolution", "640x360",
                "--frames", "1-1", "--elevation", 35) == 0
    scene = bpy.context.scene
    now = bpy.data.objects["TV3D_now"].modifiers["TraceVis3D now"]
    named = {it.name: mod_id for it in now.node_group.interface.items_tree
             if getattr(it, "in_out", None) == "INPUT" and (mod_id := it.identifier)}
    top, front, left = (float(now[named[k]]) for k in ("Top", "Front", "Left"))
    lo, hi = box_extent(_world_boxes(bpy.data.collections["TraceVis3D"]))
    assert top > hi[2]  # higher than the top boxes' front edge
    for x in (lo[0], hi[0]):  # at the image column where each end of the top back edge is seen
        edge = world_to_camera_view(scene, scene.camera, Vector((x, hi[1], hi[2])))
        a, b = (world_to_camera_view(scene, scene.camera, Vector((x + d, front, top))) for d in (-1.0, 1.0))
        f = (edge.x - a.x) / (b.x - a.x)  # the clock's baseline there (linear in x on the picture)
        assert a.y + f * (b.y - a.y) >= edge.y - 1e-4, (x, edge, a, b)


def test_flythrough_keeps_the_lane_names_in_the_picture(tmp_path):
    """A fly-through flies past the figure's start, where the lanes' names stand: they keep to
    the picture's left edge (keyframes of their x at the camera's), never left of their place
    in the still, so every frame says which thread is which; clearing the animation puts them
    back (the GPU check of stop 52: no name after frame 30 of a browser trace's fly-through)."""
    from bpy_extras.object_utils import world_to_camera_view
    from mathutils import Vector

    from tracevis3d.blender.animate import clear_animation
    from tracevis3d.io.chrome_writer import save_chrome
    from tracevis3d.model import Trace

    func, start, end, parent, thread = [], [], [], [], []
    for th in range(3):
        for k in range(40):
            func.append(th * 40 + k % 7)
            start.append(k * 100.0 + th * 7)
            end.append(k * 100.0 + 60.0 + th * 7)
            parent.append(-1)
            thread.append(th)
    names = [f"work_{k}" for k in range(120)]
    path = tmp_path / "lanes.json"
    save_chrome(Trace.from_arrays(func, start, end, parent, thread=thread, function_names=names,
                                  thread_names=["main", "worker-1", "worker-2"]), path)
    assert _run(path, "-o", tmp_path / "fly", "--kind", "flythrough", "--seconds", 2, "--fps", 10,
                "--resolution", "640x360", "--frames", "1-1") == 0
    scene = bpy.context.scene
    info = json.loads(scene["tracevis3d_animation"])
    lanes = [ob for ob in bpy.data.collections["TraceVis3D"].objects if ob.type == "FONT"
             and ob.get("tv3d_kind") == "lane" and not ob.hide_render]
    assert info["sticky_lane_names"] == len(lanes) >= 3
    home = {ob.name: float(ob["tv3d_home_x"]) for ob in lanes}
    moved = 0
    for f in range(1, scene.frame_end + 1, 3):
        scene.frame_set(f)
        for ob in lanes:
            assert ob.location.x >= home[ob.name] - 1e-6
            left = Vector((ob.location.x - ob.dimensions.x, ob.location.y, ob.location.z))
            assert world_to_camera_view(scene, scene.camera, left).x > -0.01, (f, ob.name)  # its left end seen
            moved += ob.location.x > home[ob.name] + 1e-3
    assert moved  # the camera flew past the start: the names followed it
    clear_animation(scene)
    assert all(abs(ob.location.x - home[ob.name]) < 1e-6 and "tv3d_home_x" not in ob for ob in lanes)
