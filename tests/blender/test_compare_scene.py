"""The comparison scene end to end (issue 11): ``render-compare`` on real pairs, its errors,
and picking tubes; real bpy, headless, in this process (the panel and operators run in a
fresh Blender process: tests/test_operators.py, ``test_compare_operators``).

Pairs: the HTA pair in ../shared/realdata (PyTorch profiler, control vs test; skipped when
absent) and a committed VizTracer pair (json.tool on two documents, `json_pair_paths`).
"""
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from tracevis3d.cli import main

from rendered_pixels import image_pixels

bpy = pytest.importorskip("bpy")
pytestmark = pytest.mark.blender

REPO = pathlib.Path(__file__).resolve().parents[2]
PNG = b"\x89PNG\r\n\x1a\n"


def _hta(realdata):
    d = realdata / "hta-trace-diff"
    a, b = d / "control.json.gz", d / "test.json.gz"
    if not (a.is_file() and b.is_file()):
        pytest.skip(f"the HTA pair is not in {d}")
    return a, b


def _tubes():
    obs = [ob for ob in bpy.context.scene.objects if ob.type == "MESH" and "tv3d_tubes" in ob]
    assert len(obs) == 1, [ob.name for ob in bpy.context.scene.objects]
    return obs[0]


def _face_centres(ob) -> np.ndarray:
    me = ob.data
    c = np.empty(len(me.polygons) * 3, np.float32)
    me.polygons.foreach_get("center", c)
    return c.reshape(-1, 3)


def _tube_pixels(ob, res, k=400, seed=0):
    """Image pixels (row, col) of up to k face centres of the tubes (through the camera)."""
    from bpy_extras.object_utils import world_to_camera_view
    from mathutils import Vector

    scene = bpy.context.scene
    centres = _face_centres(ob)
    pick = np.random.default_rng(seed).choice(len(centres), min(k, len(centres)), replace=False)
    out = []
    for p in centres[pick]:
        v = world_to_camera_view(scene, scene.camera, ob.matrix_world @ Vector(p.tolist()))
        if 0 <= v.x < 1 and 0 <= v.y < 1 and v.z > 0:
            out.append((int((1 - v.y) * res[1]), int(v.x * res[0])))
    return np.array(out)


def check_figure(out, res, min_on_tubes=0.8):
    """A PNG of the size asked for, not blank, and drawn (not background) where the tubes are."""
    assert out.read_bytes()[:8] == PNG
    img = image_pixels(out)
    assert img.shape == (res[1], res[0], 4)
    drawn = np.abs(img[..., :3] - 1).max(-1) > 0.06
    assert 0.05 < drawn.mean() < 0.9, drawn.mean()
    px = _tube_pixels(_tubes(), res)
    assert len(px) > 50
    on = drawn[px[:, 0], px[:, 1]].mean()
    assert on >= min_on_tubes, f"only {on:.0%} of the tubes' pixels are drawn"
    return img


# --------------------------------------------------------------------------- recordings
def test_the_recorded_pair_is_one_program_on_two_inputs(fresh_json_pair_paths):
    """The recorder on the pair's program, recorded now: both sides valid, one program (their
    calls pair up), and B ran the float encoder A never ran."""
    import tracevis3d

    a_path, b_path, _seconds = fresh_json_pair_paths
    a, b = tracevis3d.load(a_path), tracevis3d.load(b_path)
    c = tracevis3d.compare(a, b)
    assert c.n_pairs_total > 0 and len(a) > 1000 and len(b) > 1000
    # B's floats go through floatstr; A has none: those calls match nothing in A
    assert any("floatstr" in n for n in c.unmatched_calls("b")["name"])
    assert not any("floatstr" in n for n in a.function_names)


# --------------------------------------------------------------------------- render-compare
def test_render_compare_viztracer_pair(json_pair_paths, tmp_path, capsys):
    a, b, _ = json_pair_paths
    out, blend = tmp_path / "pair.png", tmp_path / "pair.blend"
    rc = main(["render-compare", str(a), str(b), "-o", str(out), "--resolution", "480x270", "--samples", "1",
               "--color-by", "similarity", "--lambda", "0.5", "--band", "6", "--beta", "0.7",
               "--save", str(blend)])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    assert cap.out == f"{out}\n"  # stdout carries the output path only
    assert "[100%]" in cap.err and "rendering 480x270" in cap.err and "tubes for" in cap.err
    check_figure(out, (480, 270))
    rec = json.loads(bpy.context.scene["tracevis3d_compare"])
    assert rec["trace_a"] == str(a) and rec["trace_b"] == str(b) and rec["tau"] == 0.2
    p = rec["params"]
    assert (p["color_by"], p["lam"], p["band"], p["beta"], p["resolution"]) == ("similarity", 0.5, 6.0, 0.7, [480, 270])
    # the saved .blend keeps the record, with both paths relative to it, and the tubes
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    rec = json.loads(bpy.context.scene["tracevis3d_compare"])
    assert rec["trace_a_rel"] == "//" + os.path.relpath(a, tmp_path).replace(os.sep, "/")
    assert rec["trace_b_rel"].endswith("json_tool_b.json")
    from tracevis3d.blender.tubes import tube_values

    me = _tubes().data
    assert "tube_index" in me.attributes and "match_index" in me.attributes
    for name in ("match_index", "call_a", "call_b", "similarity", "dt", "ratio", "bin_ratio"):
        assert tube_values(me, name) is not None, name  # per tube, saved with the .blend


def test_render_compare_real_hta_pair(realdata, tmp_path, capsys):
    a, b = _hta(realdata)
    out = tmp_path / "hta.png"
    rc = main(["render-compare", str(a), str(b), "-o", str(out), "--resolution", "320x180", "--samples", "1",
               "--color-by", "ratio", "--brush-a", "ProfilerStep#1011", "--no-overview"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    assert cap.out == f"{out}\n"
    check_figure(out, (320, 180))
    import tracevis3d

    p = json.loads(bpy.context.scene["tracevis3d_compare"])["params"]
    ta = tracevis3d.load(a, warn=False)
    assert ta.function_names[ta.func[p["brush_a"]]] == "ProfilerStep#1011"
    assert p["color_by"] == "ratio" and p["show_overview"] is False


def test_align_and_brush_resolve_calls_by_name(json_pair_paths, tmp_path, capsys):
    """--align-a puts B's focus on the matches of a call of A (`align_window_b`); names find
    the longest call of a function; the record keeps the call indices (align_a, not the
    window it gave: a rebuild aligns again)."""
    import tracevis3d
    from tracevis3d.layout.compare import align_window_b

    a, b, _ = json_pair_paths
    out = tmp_path / "aligned.png"
    rc = main(["render-compare", str(a), str(b), "-o", str(out), "--resolution", "160x90", "--samples", "1",
               "--align-a", "_iterencode_list", "--brush-b", "_iterencode_dict", "--no-labels"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    assert "--align-a: B's focus on the matches of call" in cap.err
    c = tracevis3d.compare(tracevis3d.load(a), tracevis3d.load(b))
    call = c.find_call("a", "_iterencode_list")
    p = json.loads(bpy.context.scene["tracevis3d_compare"])["params"]
    assert p["align_a"] == call and p["window_b"] is None
    from tracevis3d.layout.compare import CompareParams, resolve_calls

    assert resolve_calls(c, CompareParams.from_dict(p)).window_b == align_window_b(c, call)
    assert p["brush_b"] == c.find_call("b", "_iterencode_dict")
    assert "_iterencode_dict" in c.b.function_names[c.b.func[p["brush_b"]]]


TINY_A = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "MainThread"}},
          {"ph": "X", "name": "main (app.py:1)", "ts": 0, "dur": 1000, "pid": 1, "tid": 1},
          {"ph": "X", "name": "load_config (app.py:10)", "ts": 10, "dur": 300, "pid": 1, "tid": 1},
          {"ph": "X", "name": "parse (app.py:20)", "ts": 20, "dur": 200, "pid": 1, "tid": 1},
          {"ph": "X", "name": "compute (app.py:30)", "ts": 400, "dur": 550, "pid": 1, "tid": 1}]
# B: compute twice as long, and a call A never makes
TINY_B = TINY_A[:4] + [{"ph": "X", "name": "compute (app.py:30)", "ts": 400, "dur": 1100, "pid": 1, "tid": 1},
                       {"ph": "X", "name": "report (app.py:50)", "ts": 1600, "dur": 300, "pid": 1, "tid": 1}]
TINY_B[1] = dict(TINY_B[1], dur=2000)


def tiny_pair(tmp_path):
    a, b = tmp_path / "tiny_a.json", tmp_path / "tiny_b.json"
    a.write_text(json.dumps({"traceEvents": TINY_A}))
    b.write_text(json.dumps({"traceEvents": TINY_B}))
    return a, b


@pytest.mark.parametrize("args, needle", [
    (["--thread-a", "no-such-thread"], "tiny_a.json: no thread named 'no-such-thread'"),
    (["--thread-b", "7"], "tiny_b.json: thread index 7 out of range"),
    (["--brush-a", "no_such_function"], "--brush-a: no call of A is named like 'no_such_function'"),
    (["--brush-b", "99"], "--brush-b: call 99 of B is outside 0..4"),
    (["--align-a", "nothing"], "--align-a: no call of A is named like 'nothing'"),
])
def test_bad_compare_options_one_line(tmp_path, capsys, args, needle):
    a, b = tiny_pair(tmp_path)
    rc = main(["render-compare", str(a), str(b), "-o", str(tmp_path / "x.png"), *args])
    err = capsys.readouterr().err
    errors = [ln for ln in err.splitlines() if ln.startswith("tracevis3d: ")]
    assert rc == 2 and len(errors) == 1 and needle in errors[0], err
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("ext, engine, magic", [(".jpg", "eevee", b"\xff\xd8\xff"), (".tif", "workbench", b"II*\x00")])
def test_compare_output_formats_and_engines(tmp_path, capsys, ext, engine, magic):
    a, b = tiny_pair(tmp_path)
    out = tmp_path / f"fig{ext}"
    rc = main(["render-compare", str(a), str(b), "-o", str(out), "--resolution", "96x54", "--engine", engine,
               "--samples", "1"])
    assert rc == 0, capsys.readouterr().err
    assert out.read_bytes()[:len(magic)] == magic


def _run(*args, timeout=300):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "tracevis3d", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout, env=env)


@pytest.mark.parametrize("content", [b'{"traceEvents": [{"ph": "X", "name": "main", "ts": 0, "dur": ',
                                     b"\x1f\x8b\x08garbage", b""])
def test_corrupt_second_file_fails_cleanly(tmp_path, content):
    """One line naming the second file, exit 1, nothing written, before the first is loaded."""
    good, _ = tiny_pair(tmp_path)
    bad = tmp_path / "second_run.json"
    bad.write_bytes(content)
    r = _run("render-compare", good, bad, "-o", tmp_path / "x.png")
    assert r.returncode == 1, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"tracevis3d: error: cannot read trace {bad}: "), r.stderr
    assert r.stdout == "" and not (tmp_path / "x.png").exists()


# --------------------------------------------------------------------------- picking tubes
def test_picking_a_tube_agrees_with_blenders_ray_cast(json_pair_paths):
    """Rays from the camera through tube faces: `pick_ray_detail` finds what Blender's own
    BVH ray cast (`Object.ray_cast`) finds first on the tube mesh, unless a box is nearer."""
    import tracevis3d
    from mathutils import Vector
    from tracevis3d.blender import pick
    from tracevis3d.blender.scene import build_compare

    a, b, _ = json_pair_paths
    bpy.ops.wm.read_homefile(use_factory_startup=True)
    c = tracevis3d.compare(tracevis3d.load(a), tracevis3d.load(b))
    build_compare(c, {"resolution": [480, 270]}, paths=(a, b))
    ob = _tubes()
    cam = bpy.context.scene.camera.matrix_world.translation
    centres = _face_centres(ob)
    rng = np.random.default_rng(3)
    tubes = boxes = 0
    last_tube = None
    for f in rng.choice(len(centres), 25, replace=False):
        target = ob.matrix_world @ Vector(centres[f].tolist())
        d = (target - cam).normalized()
        hit = pick.pick_ray_detail(tuple(cam), tuple(d))
        inv = ob.matrix_world.inverted()
        ok, loc, _n, face = ob.ray_cast(inv @ cam, inv.to_3x3() @ d)
        assert ok and hit is not None
        t_ref = (ob.matrix_world @ loc - cam).length
        if hit["kind"] == "tube":
            tubes, last_tube = tubes + 1, hit
            assert hit["distance"] == pytest.approx(t_ref, rel=1e-4, abs=1e-6)
            match = np.empty(len(ob.data.polygons), np.int32)
            ob.data.attributes["match_index"].data.foreach_get("value", match)
            assert hit["match_index"] == match[face] or hit["distance"] == pytest.approx(t_ref, rel=1e-6)
            assert 0 <= hit["call_a"] < len(c.a) and 0 <= hit["call_b"] < len(c.b)
            # a tube joins two key boxes; the match speaking for it lies in their subtrees
            pair = c.pairs[hit["match_index"]]
            ca, cb = int(hit["call_a"]), int(hit["call_b"])
            assert ca <= pair["a"] < c.a.end_index[ca] and cb <= pair["b"] < c.b.end_index[cb]
        else:
            boxes += 1
            assert hit["distance"] <= t_ref + 1e-6 and hit["side"] in (0, 1)
    assert tubes >= 12, (tubes, boxes)
    d = pick.describe_match(c.a, c.b, last_tube)
    assert d["A"].startswith(c.a.function_names[c.a.func[last_tube["call_a"]]])
    assert {"A", "B", "similarity", "Δt µs", "duration B ÷ A", "A duration µs", "B start µs"} <= set(d)


# --------------------------------------------------------------------------- pixels
def _project(points):
    """Image (row, col) of world points through the scene's camera (NaN when behind it)."""
    from bpy_extras.object_utils import world_to_camera_view
    from mathutils import Vector

    scene = bpy.context.scene
    rx, ry = scene.render.resolution_x, scene.render.resolution_y
    out = []
    for p in points:
        v = world_to_camera_view(scene, scene.camera, Vector(tuple(map(float, p))))
        out.append((int((1 - v.y) * ry), int(v.x * rx)) if v.z > 0 else (-1, -1))
    return np.array(out)


def _colour_at(img, rc, r=1):
    y, x = rc
    return np.median(img[max(y - r, 0):y + r + 1, max(x - r, 0):x + r + 1, :3].reshape(-1, 3), axis=0)


def _attr(me, name, dtype=np.int32):
    a = np.empty(len(me.attributes[name].data), dtype)
    me.attributes[name].data.foreach_get("value", a)
    return a


@pytest.fixture(scope="module")
def permuted_render(tmp_path_factory):
    """The permuted synthetic pair of tests/test_compare_layout.py (parse and write swapped,
    a phase 'report' only in B) rendered by ``render-compare`` in permutation colours."""
    import tracevis3d
    from phase_programs import phase_program

    d = tmp_path_factory.mktemp("permuted")
    a = phase_program(["parse", "check", "write"])
    b = phase_program(["write", "check", "parse"], extra="report")
    pa, pb, out = d / "a.npz", d / "b.npz", d / "perm.png"
    tracevis3d.save(a, pa)
    tracevis3d.save(b, pb)
    rc = main(["render-compare", str(pa), str(pb), "-o", str(out), "--resolution", "640x360", "--samples", "1",
               "--color-by", "permutation", "--no-labels", "--no-legend", "--no-title", "--no-overview",
               "--all-tubes"])  # the phases' own tubes too (decluttering leaves them out)
    assert rc == 0
    return a, b, image_pixels(out)


def _boxes(side):
    """(call index, world centre, world scale) per box of the icicle of run ``side``."""
    from mathutils import Vector

    ob = next(o for o in bpy.context.scene.objects if o.get("tv3d_layer") == f"calls_{side}")
    calls = _attr(ob.data, "call_index")
    n = len(calls)
    pos, scale = np.empty(n * 3, np.float32), np.empty(n * 3, np.float32)
    ob.data.attributes["position"].data.foreach_get("vector", pos)
    ob.data.attributes["tv_scale"].data.foreach_get("vector", scale)
    m = ob.matrix_world
    pos = np.array([m @ Vector(tuple(map(float, p))) for p in pos.reshape(-1, 3)])
    return calls, pos, scale.reshape(-1, 3) * np.array(m.to_scale())


def test_rendered_tubes_join_the_matched_boxes_and_moved_ones_are_red(permuted_render):
    """Pixels: each tube leaves A's icicle within the x range of its call's box and reaches B's
    within its partner's; the swapped phases' tubes are red, the one that stayed is grey."""
    from mathutils import Vector

    a, b, img = permuted_render
    ob = _tubes()
    from tracevis3d.blender.tubes import face_values

    call_a, call_b = face_values(ob.data, "call_a"), face_values(ob.data, "call_b")
    centres = np.array([ob.matrix_world @ Vector(tuple(map(float, c))) for c in _face_centres(ob)])
    box = {side: _boxes(side) for side in "ab"}

    def x_range(side, call):
        calls, pos, scale = box[side]
        k = int(np.flatnonzero(calls == call)[0])
        left, right = pos[k] - [scale[k][0] / 2, 0, 0], pos[k] + [scale[k][0] / 2, 0, 0]
        (_, x0), (_, x1) = _project([left, right])
        return x0, x1

    seen = {}
    for name in ("parse", "check", "write"):
        ia = next(i for i in range(len(a)) if a.function_names[a.func[i]] == name)
        faces = np.flatnonzero(call_a == ia)
        assert faces.size, f"no tube for {name}"
        ib = int(call_b[faces[0]])
        assert b.function_names[b.func[ib]] == name
        ends = centres[faces]
        top, bottom = ends[np.argmax(ends[:, 2])], ends[np.argmin(ends[:, 2])]
        (_, x_top), (_, x_bottom) = _project([top, bottom])
        xa, xb = x_range("a", ia), x_range("b", ib)
        assert xa[0] - 1 <= x_top <= xa[1] + 1, (name, x_top, xa)
        assert xb[0] - 1 <= x_bottom <= xb[1] + 1, (name, x_bottom, xb)
        # a fifth of the way down from A: the tubes cross further down (one covers another)
        near_a = ends[np.argmin(np.abs(ends[:, 2] - (top[2] - 0.2 * (top[2] - bottom[2]))))]
        seen[name] = (x_top, x_bottom, _colour_at(img, _project([near_a])[0]))
    # A runs parse, check, write; B write, check, parse: the tubes cross
    assert seen["parse"][0] < seen["check"][0] < seen["write"][0], seen
    assert seen["write"][1] < seen["check"][1] < seen["parse"][1], seen
    red = lambda c: c[0] - max(c[1], c[2])  # noqa: E731
    # moved: saturated red; kept: the warm grey of aligned tubes (a light pink at most)
    assert red(seen["parse"][2]) > 0.4 and red(seen["write"][2]) > 0.4, seen
    assert red(seen["check"][2]) < 0.2, seen


def test_rendered_unmatched_calls_stand_out(permuted_render):
    """Pixels: the phase only B has ('report') is drawn in the unmatched colour, unlike the
    matched phase 'check' in the same row."""
    from tracevis3d.layout.compare import MATCHED_RGB, UNMATCHED_RGB

    a, b, img = permuted_render
    calls, pos, _scale = _boxes("b")
    name = lambda i: b.function_names[b.func[i]]  # noqa: E731
    report = next(k for k, i in enumerate(calls) if name(i) == "report")
    check = next(k for k, i in enumerate(calls) if name(i) == "check")
    rep_px, chk_px = _project([pos[report], pos[check]])
    c_rep, c_chk = _colour_at(img, rep_px), _colour_at(img, chk_px)
    assert np.abs(c_rep - c_chk).sum() > 0.3, (c_rep, c_chk)
    assert np.abs(c_rep - np.array(UNMATCHED_RGB)).sum() < np.abs(c_rep - np.array(MATCHED_RGB)).sum(), \
        (c_rep, UNMATCHED_RGB, MATCHED_RGB)
