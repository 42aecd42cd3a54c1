"""The detail inset (`layout.inset`): a crowded stretch the figure leaves unnamed, magnified
in the free room of the frame with its own names, its calls in the figure's colours, joined
to the stretch by frames and lines; and its kernels against brute force."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

import tracevis3d
from tracevis3d.layout.camera import project
from tracevis3d.params.icicle import IcicleParams
from tracevis3d.layout.text import ASCENT, DESCENT, text_width


# ------------------------------------------------------------------ kernels, brute force
def _best_stretch_brute(lane, start, end, func, ok, span):
    best, best_i = 0, -1
    for i in range(len(start)):
        w = span[lane[i]]
        if w <= 0:
            continue
        edge = start[i] + w
        funcs = {int(func[j]) for j in range(len(start))
                 if lane[j] == lane[i] and start[j] >= start[i] and end[j] <= edge and ok[j]}
        if len(funcs) > best:
            best, best_i = len(funcs), i
    return best, best_i


@pytest.mark.parametrize("seed", range(24))
def test_best_stretch_matches_brute_force(seed):
    from tracevis3d.kernels.stretch import best_stretch

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 80))
    lane = np.sort(rng.integers(0, 3, n)).astype(np.int64)
    if seed % 2:  # ties: equal starts and ends
        start = rng.integers(0, 30, n).astype(np.float64)
        end = start + rng.integers(0, 6, n)
    else:
        start = rng.uniform(0, 100, n)
        end = start + rng.uniform(0, 15, n)
    order = np.lexsort((start, lane))
    lane, start, end = lane[order], start[order], end[order]
    func = rng.integers(0, 9, n).astype(np.int64)
    ok = rng.random(n) < 0.7
    span = rng.uniform(-5, 30, 3)
    got = best_stretch(lane, start, end, func, ok, span)
    want = _best_stretch_brute(lane, start, end, func, ok, span)
    assert got[0] == want[0]
    if want[0]:  # the first stretch of the largest value
        assert got[1] == want[1]
    else:
        assert got == (0, -1)


@pytest.mark.parametrize("seed", range(8))
def test_free_rectangles_are_free_and_find_the_room(seed):
    """Every rectangle returned is free, inside the content rectangle and within the sizes
    asked; a free block planted in a crowded grid is found (up to the search's step)."""
    from tracevis3d.layout.inset_plan import free_rectangles

    rng = np.random.default_rng(seed)
    cell = 8.0
    grid = rng.random((40, 60)) < 0.5
    r0, c0 = int(rng.integers(0, 20)), int(rng.integers(0, 30))
    grid[r0:r0 + 16, c0:c0 + 24] = False  # 192 x 128 px free
    content = (0.0, 0.0, 60 * cell, 40 * cell)
    rects = free_rectangles(grid, cell, content, 80.0, 60.0, 400.0, 400.0)
    assert rects
    for x0, y0, x1, y1 in rects:
        a, b, c, d = int(x0 // cell), int(y0 // cell), int(x1 // cell), int(y1 // cell)
        assert not grid[b:d, a:c].any()
        assert x1 - x0 >= 80 and y1 - y0 >= 60 and x1 - x0 <= 400 and y1 - y0 <= 400
    best = rects[0]
    assert (best[2] - best[0]) * (best[3] - best[1]) >= 22 * 14 * cell * cell  # the planted block, less a step


# ------------------------------------------------------------------ a crowded short program
def _crowded_program(path, room: bool = True, second_thread: bool = False):
    """A 10 ms program whose 1.2-1.5 ms stretch holds a parser's crowd: 10 calls of 5+5
    distinct functions, 30-50 µs each (5-9 px at 1920 px), nested, under ``parse_args``;
    then a wide ``work`` call.
    ``room``: the main thread's stack beside the crowd is low (room over it)."""
    ev = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "MainThread"}},
          {"ph": "X", "name": "main (tool.py:1)", "pid": 1, "tid": 1, "ts": 0, "dur": 10000},
          {"ph": "X", "name": "parse_args (argparse.py:1)", "pid": 1, "tid": 1, "ts": 1200, "dur": 300},
          {"ph": "X", "name": "work (tool.py:10)", "pid": 1, "tid": 1, "ts": 2000, "dur": 7900}]
    t = 1202.0
    for k in range(5):
        ev.append({"ph": "X", "name": f"sre.s{k} (sre.py:{10 + k})", "pid": 1, "tid": 1, "ts": t, "dur": 50})
        ev.append({"ph": "X", "name": f"sre.l{k} (sre.py:{40 + k})", "pid": 1, "tid": 1, "ts": t + 1,
                   "dur": 30 + k})
        t += 58
    if second_thread:  # a worker that runs one long call
        ev += [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "worker"}},
               {"ph": "X", "name": "serve (tool.py:90)", "pid": 1, "tid": 2, "ts": 100, "dur": 9000}]
    if not room:  # a tall stack over the whole run: no free room anywhere
        for d in range(40):
            ev.append({"ph": "X", "name": f"deep_{d} (tool.py:{200 + d})", "pid": 1, "tid": 1, "ts": 2001 + d,
                       "dur": 7800 - 2 * d})
    path.write_text(json.dumps({"traceEvents": ev}))
    return tracevis3d.load(path)


def _names(spec, inset: bool):
    lab = spec.labels
    flag = lab.attributes.get("inset", np.full(len(lab), -1))
    return [j for j in range(len(lab)) if lab.kind[j] in ("call", "run", "row", "group") and (flag[j] == 1) == inset]


def _text_rect(spec, j, tpx):
    lab = spec.labels
    p = project(spec.camera, lab.anchors[j:j + 1].astype(np.float64), spec.resolution)[0]
    w = text_width(lab.texts[j]) * tpx
    return p[0] - 0.5 * w, p[1] - ASCENT * tpx, p[0] + 0.5 * w, p[1] + DESCENT * tpx


def _text_px(spec, j):
    """Projected height of world label ``j`` (its size at its anchor)."""
    from tracevis3d.layout.camera import world_per_pixel

    lab = spec.labels
    return float(lab.sizes[j]) / float(world_per_pixel(spec.camera, lab.anchors[j:j + 1].astype(np.float64),
                                                       spec.resolution)[0])


def _boxes_px(spec, layer):
    pos, sc = layer.positions.astype(np.float64), layer.scales.astype(np.float64)
    c = np.stack([project(spec.camera, pos + sc * np.array([sx, sy, sz]), spec.resolution)
                  for sx in (-0.5, 0.5) for sy in (-0.5, 0.5) for sz in (-0.5, 0.5)])
    return c[..., 0].min(0), c[..., 1].min(0), c[..., 0].max(0), c[..., 1].max(0)


def test_a_crowded_stretch_is_magnified_and_named(tmp_path):
    from tracevis3d.layout.icicle import icicle_layout

    trace = _crowded_program(tmp_path / "tool.json")
    spec = icicle_layout(trace, IcicleParams(max_callouts=0))
    meta = spec.meta["inset"]
    assert meta is not None and meta["new_functions"] >= 3
    tpx = spec.meta["text_px"]
    inside = _names(spec, inset=True)
    assert len(inside) >= 6
    x0, y0, x1, y1 = meta["rect"]
    for j in inside:
        # each names a call of the stretch, stands inside the inset's rectangle, is readable
        c = int(spec.labels.call_index[j])
        assert c >= 0 and trace.start[c] <= meta["t1"] and trace.end[c] >= meta["t0"]
        r = _text_rect(spec, j, tpx)
        assert x0 - 1 <= r[0] and r[2] <= x1 + 1 and y0 - 1 <= r[1] and r[3] <= y1 + 1, (spec.labels.texts[j], r)
        assert _text_px(spec, j) >= 14.0 * 0.97
    # the inset's boxes fill its rectangle under the caption (one similarity, fitted through the camera)
    boxes = spec.layer("inset_boxes")
    part = boxes.attributes["inset_part"]
    bx0, by0, bx1, by1 = (v[part <= 1] for v in _boxes_px(spec, boxes))
    assert x0 - 3 <= bx0.min() and bx1.max() <= x1 + 3 and y0 - 3 <= by0.min() and by1.max() <= y1 + 3
    assert (bx1.max() - bx0.min()) >= 0.9 * (x1 - x0) or (by1.max() - by0.min()) >= 0.8 * (y1 - y0)
    # the figure's own boxes stay out of the inset's rectangle
    for name in ("calls", "clusters"):
        bx0, by0, bx1, by1 = _boxes_px(spec, spec.layer(name))
        assert not np.any((bx0 < x1 - 2) & (x0 + 2 < bx1) & (by0 < y1 - 2) & (y0 + 2 < by1)), name
    # no name of the inset overlaps a name of the figure
    outside = [j for j in range(len(spec.labels)) if spec.labels.space[j] == "world" and j not in inside
               and spec.labels.kind[j] != "inset"]
    for j in inside:
        a = _text_rect(spec, j, tpx)
        for k in outside:
            b = _text_rect(spec, k, tpx)
            assert not (a[0] < b[2] - 1 and b[0] < a[2] - 1 and a[1] < b[3] - 1 and b[1] < a[3] - 1), \
                (spec.labels.texts[j], spec.labels.texts[k])
    # its caption says what is magnified and by how much
    cap = [t for t, k in zip(spec.labels.texts, spec.labels.kind) if k == "inset"]
    assert len(cap) == 1 and cap[0].startswith("detail: ") and "× wider" in cap[0]
    # with several lanes, the caption says whose stretch it is
    two = _crowded_program(tmp_path / "two.json", second_thread=True)
    spec = icicle_layout(two, IcicleParams(max_callouts=0))
    cap = [t for t, k in zip(spec.labels.texts, spec.labels.kind) if k == "inset"]
    assert spec.meta["inset"] is not None and cap[0].startswith("detail of MainThread: "), cap


def test_the_inset_keeps_the_figures_colours_and_calls(tmp_path):
    """A call drawn as a box of its own in both the figure and the inset has one colour in
    both; every inset box carries its call (``call_index`` of the loaded trace) and its
    times on the figure's clock."""
    from tracevis3d.layout.icicle import icicle_layout

    trace = _crowded_program(tmp_path / "tool.json")
    spec = icicle_layout(trace, IcicleParams(max_callouts=0))
    main, ins = spec.layer("calls"), spec.layer("inset_boxes")
    part = ins.attributes["inset_part"]
    assert set(part.tolist()) <= {0, 1, 2, 3} and (part == 3).sum() == 1  # calls, merged, plates, the panel
    colour = {int(c): tuple(col) for c, col in zip(main.attributes["call_index"], main.colors)}
    both = [k for k, c in enumerate(ins.attributes["call_index"]) if int(c) in colour and part[k] == 0]
    assert len(both) >= 3
    for k in both:
        assert tuple(ins.colors[k]) == colour[int(ins.attributes["call_index"][k])]
    ci = ins.attributes["call_index"]
    t0 = float(spec.meta["t0"])
    for k in np.flatnonzero(part <= 1):
        c = int(ci[k])
        assert 0 <= c < len(trace)
        # its clipped extent lies within the call's own times, on the figure's clock
        assert ins.attributes["t_start"][k] >= trace.start[c] - t0 - 1e-3 * (trace.end[c] - trace.start[c]) - 1e-3
        assert ins.attributes["t_end"][k] <= trace.end[c] - t0 + 1e-3 * (trace.end[c] - trace.start[c]) + 1e-3


def test_inset_none_and_a_window_asked_for(tmp_path):
    from tracevis3d.layout.icicle import icicle_layout

    trace = _crowded_program(tmp_path / "tool.json")
    off = icicle_layout(trace, IcicleParams(inset="none"))
    assert off.meta["inset"] is None and not any(x.name.startswith("inset_") for x in off.layers)
    assert "inset" not in off.labels.attributes
    asked = icicle_layout(trace, IcicleParams(inset="1.2ms:1.35ms", max_callouts=0))
    meta = asked.meta["inset"]
    assert meta is not None and (meta["t0"], meta["t1"]) == (1200.0, 1350.0)
    boxes = asked.layer("inset_boxes")
    shown = [int(c) for c in boxes.attributes["call_index"][boxes.attributes["inset_part"] == 0]]
    assert all(trace.end[c] >= 1200.0 and trace.start[c] <= 1350.0 for c in shown)
    with pytest.raises(ValueError, match="inset"):
        IcicleParams(inset="sometimes").validate()


def test_no_room_or_nothing_crowded_no_inset(tmp_path):
    from tracevis3d.layout.icicle import icicle_layout

    one = tmp_path / "one.json"
    one.write_text(json.dumps({"traceEvents": [{"ph": "X", "name": "f", "pid": 1, "tid": 1, "ts": 0, "dur": 5}]}))
    assert icicle_layout(tracevis3d.load(one), IcicleParams()).meta["inset"] is None
    full = icicle_layout(_crowded_program(tmp_path / "full.json", room=False),
                         IcicleParams(max_callouts=0, resolution=(480, 270)))
    if full.meta["inset"] is not None:  # whatever room it found is free of the figure's boxes
        x0, y0, x1, y1 = full.meta["inset"]["rect"]
        bx0, by0, bx1, by1 = _boxes_px(full, full.layer("calls"))
        assert not np.any((bx0 < x1 - 2) & (x0 + 2 < bx1) & (by0 < y1 - 2) & (y0 + 2 < by1))


def test_the_inset_on_a_real_deep_trace(deep_trace_path):
    """json.tool on a 105-level document (the committed recording, tests/data/recorded: its
    figure names 22 calls and its inset 8 more, 7 of them new functions).  Guards: an inset that
    takes the room of the figure's own names or names nothing new (a planner that ignored the
    room's height once kept an inset naming fewer than 3 new functions); names of the inset
    under 14 px; the figure's names lost (at least 20 in all, inset or not: well under the 30
    drawn, far over a figure whose labelling failed).  Asked for (``--inset`` over the argument
    parser's ``parse_args``), the inset names the argument parser's calls, a few pixels wide in
    the figure, at ≥ 14 px.
    (Recorded during the session, as before, the same program named 14 to 52 functions by the
    machine's load while it ran: a bound on such a recording says nothing about the figure.)"""
    from tracevis3d.layout.icicle import icicle_layout

    trace = tracevis3d.load(deep_trace_path)
    spec = icicle_layout(trace)
    meta = spec.meta["inset"]
    inside = _names(spec, inset=True)
    assert meta is None or meta["new_functions"] >= 3, meta
    assert all(_text_px(spec, j) >= 14.0 * 0.97 for j in inside)
    assert len(_names(spec, inset=False)) + len(inside) >= 20

    names = np.asarray(trace.function_names)[trace.func]
    parse = np.flatnonzero(np.char.startswith(names.astype(str), "ArgumentParser.parse_args "))
    assert parse.size, "json.tool parses its arguments"
    c = int(parse[0])
    t0 = float(trace.start[c] - trace.start.min())
    window = f"{t0:.3f}:{t0 + float(trace.end[c] - trace.start[c]):.3f}"
    asked = icicle_layout(trace, IcicleParams(inset=window))
    assert asked.meta["inset"] is not None, asked.meta.get("inset_note")
    inside = _names(asked, inset=True)
    texts = [asked.labels.texts[j] for j in inside]
    assert all(_text_px(asked, j) >= 14.0 * 0.97 for j in inside)
    # the argument parser's calls: names shortened from the left ("…consume_positionals") are
    # still theirs when some call inside parse_args carries them
    inside_parse = {str(n) for n in names[(trace.thread == trace.thread[c]) & (trace.start >= trace.start[c])
                                          & (trace.end <= trace.end[c])]}
    cores = [re.sub(r"^\d+× ", "", t).lstrip("…").split(" (")[0] for t in texts]
    assert any("ArgumentParser" in t or "known_args" in t or any(k and k in n for n in inside_parse)
               for t, k in zip(texts, cores)), texts


def test_a_windowed_figure_takes_an_inset_of_its_own_trace(tmp_path):
    """The inset is cut from the figure's own trace (after --window and --hide): its calls
    map back to the loaded trace's indices, inside the stretch."""
    from tracevis3d.layout.icicle import icicle_layout

    trace = _crowded_program(tmp_path / "tool.json")
    spec = icicle_layout(trace, IcicleParams(time_window=(800.0, 6000.0), hide=["^work"], max_callouts=0))
    m = spec.meta["inset"]
    assert m is not None
    boxes = spec.layer("inset_boxes")
    ci = boxes.attributes["call_index"][boxes.attributes["inset_part"] == 0]
    assert np.all((ci >= 0) & (ci < len(trace)))
    assert np.all(trace.end[ci] >= m["t0"]) and np.all(trace.start[ci] <= m["t1"])
    names = {trace.function_names[trace.func[c]].split(" ")[0] for c in ci}
    assert "work" not in names and {"sre.s0", "sre.s4"} <= names, names


def test_a_window_asked_for_without_room_says_why(tmp_path):
    """``inset=T0:T1`` where the frame has no room: no inset, and the figure says why (the
    command line prints it)."""
    from tracevis3d.layout.icicle import icicle_layout
    from tracevis3d.layout import inset_plan as inset_stage

    trace = _crowded_program(tmp_path / "tool.json")
    big = IcicleParams(inset="1.2ms:1.35ms", max_callouts=0)
    spec = icicle_layout(trace, big)
    assert spec.meta["inset"] is not None and "inset_note" not in spec.meta
    orig = inset_stage.MIN_W_EM
    try:
        inset_stage.MIN_W_EM = 1000.0  # no free rectangle is this wide
        spec = icicle_layout(trace, big)
    finally:
        inset_stage.MIN_W_EM = orig
    assert spec.meta["inset"] is None and "no free room" in spec.meta["inset_note"]
    auto = icicle_layout(trace, IcicleParams(max_callouts=0, resolution=(200, 120)))
    assert "inset_note" not in auto.meta  # auto says nothing when it finds no place


def test_show_call_picks_an_inset_box(tmp_path):
    """A ray from the camera through an inset box's front face picks its call (the loaded
    trace's index), not the panel behind it."""
    bpy = pytest.importorskip("bpy")
    from tracevis3d.blender.pick import pick_ray
    from tracevis3d.blender.scene import build_icicle

    bpy.ops.wm.read_factory_settings(use_empty=True)
    trace = _crowded_program(tmp_path / "tool.json")
    out = build_icicle(trace, IcicleParams(max_callouts=0))
    spec_inset = out["meta"]["inset"]
    assert spec_inset is not None
    ob = bpy.data.objects["TV3D_inset_boxes"]
    A = ob.data.attributes
    n = len(A["position"].data)
    pos, sc, ci = np.empty(3 * n, np.float32), np.empty(3 * n, np.float32), np.empty(n, np.int32)
    A["position"].data.foreach_get("vector", pos)
    A["tv_scale"].data.foreach_get("vector", sc)
    A["call_index"].data.foreach_get("value", ci)
    pos, sc = pos.reshape(n, 3), sc.reshape(n, 3)
    cam = np.array(bpy.context.scene.camera.matrix_world.translation)
    part = np.empty(n, np.int32)
    A["inset_part"].data.foreach_get("value", part)
    k = int(np.argmax(np.where(part == 0, sc[:, 0] * sc[:, 2], -1.0)))  # the largest face of a call
    face = pos[k].astype(np.float64) - np.array([0.0, 0.5 * sc[k, 1], 0.0])
    assert pick_ray(cam, face - cam) == int(ci[k])
    assert 0 <= int(ci[k]) < len(trace)


def test_the_written_figure_lists_only_the_materials_its_boxes_use(tmp_path):
    """Every instance layer of the icicle lists only the materials its boxes use, in the
    order of the figure's slots (Blender's instancer has a branch per material listed)."""
    from tracevis3d.layout.icicle import icicle_layout

    spec = icicle_layout(_crowded_program(tmp_path / "tool.json"), IcicleParams(max_callouts=0))
    for x in spec.layers:
        if hasattr(x, "positions") and len(x):
            assert sorted(set(x.material_index.tolist())) == list(range(len(x.materials))), x.name
    full = [m for m in sorted(spec.materials) if m.startswith("TV3D_c")]
    calls = spec.layer("calls").materials
    assert calls == [m for m in full if m in calls]  # the slots' order kept
