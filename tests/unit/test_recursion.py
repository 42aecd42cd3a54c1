"""Recursion towers (`kernels.recursion`, `layout.recursion`): a recursion is named once, for
what it is ("40-level recursion: visit › descend"), over its tower or on a plate on it."""
from __future__ import annotations

import json

import numpy as np
import pytest

import tracevis3d
from tracevis3d.kernels.recursion import recursion_depth, running_max_by_segment
from tracevis3d.layout.camera import project
from tracevis3d.layout.icicle import icicle_layout
from tracevis3d.params.icicle import IcicleParams
from tracevis3d.layout.recursion import MIN_LEVELS, recursion_towers
from tracevis3d.layout.select import select_calls
from tracevis3d.layout.text import ASCENT, DESCENT, text_width
from tree_factory import random_trace


def _brute_recursion(func, parent):
    """Walk up from every call: its calls of the same function, and the outermost of them."""
    n = func.size
    rec, outer = np.ones(n, np.int64), np.arange(n)
    for i in range(n):
        p = parent[i]
        while p >= 0:
            if func[p] == func[i]:
                rec[i] += 1
                outer[i] = p
            p = parent[p]
    return rec, outer


@pytest.mark.parametrize("seed", range(6))
def test_recursion_depth_equals_its_brute_force_twin(seed):
    t = random_trace(n_roots=8, fanout=3, max_depth=7, threads=2, seed=seed, n_func=4 + seed)
    rec, outer = recursion_depth(t.func, t.parent)
    brute_rec, brute_outer = _brute_recursion(t.func, t.parent)
    assert np.array_equal(rec, brute_rec) and np.array_equal(outer, brute_outer)
    assert rec.max() > 2  # few functions, deep trees: recursions to find


@pytest.mark.parametrize("seed", range(4))
def test_recursive_calls_read_where_they_lie_are_the_kernel_over_every_call(seed):
    """`recursive_in_run` (through `recursive_calls`, runs of whole trees cut at roots, shown
    calls a subset of a trace's) against `recursion_depth` over the gathered functions: the
    recursive calls, less the runtime's functions, and their chains' outermost calls."""
    from tracevis3d.layout.recursion import recursive_calls

    t = random_trace(n_roots=12, fanout=3, max_depth=7, threads=2, seed=seed, n_func=4 + seed)
    rng = np.random.default_rng(seed)
    n_all = len(t) + 50
    idx = np.sort(rng.permutation(n_all)[: len(t)])  # the shown calls: some of a larger trace's
    func_all = rng.integers(0, 4 + seed, n_all).astype(np.int32)
    func_all[idx] = t.func
    rec, outer = recursion_depth(func_all[idx], t.parent)
    infra = rng.random(4 + seed) < 0.3
    for mask in (None, infra):
        keep = rec > 1 if mask is None else (rec > 1) & ~mask[func_all[idx]]
        want = np.flatnonzero(keep)
        for chunk in (1, 5, 64, 1 << 40):
            deep, out = recursive_calls(func_all, idx, t.parent, mask, chunk=chunk)
            assert np.array_equal(deep, want) and np.array_equal(out, outer[want]), chunk
    assert rec.max() > 2


def test_running_max_by_segment_equals_its_brute_force_twin():
    rng = np.random.default_rng(3)
    v = rng.normal(size=200)
    first = rng.random(200) < 0.1
    got = running_max_by_segment(v, first)
    starts = [i for i in range(200) if first[i] or i == 0]
    want = [max(v[max(s for s in starts if s <= i): i + 1]) for i in range(200)]
    assert np.array_equal(got, np.array(want))


def _program(path, levels=40, resumptions=1, second_at=None):
    """main > run > [visit > descend]×(levels/2) over 400 µs of a 10 ms run from 3 ms on, too
    narrow for a name per level (``resumptions`` sibling copies one after another, as a
    generator's resumptions are), a wide ``report`` after; ``second_at``: another recursion
    of ``walk`` that far into the run; the import machinery recursing through ``exec`` over
    all of it (the runtime's: never named)."""
    ev = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "MainThread"}},
          {"ph": "X", "name": "builtins.exec", "pid": 1, "tid": 1, "ts": 0, "dur": 10000},
          {"ph": "X", "name": "_find_and_load (<frozen importlib._bootstrap>:1)", "pid": 1, "tid": 1, "ts": 1,
           "dur": 9998}]
    for k in range(14):  # exec inside exec: nested imports
        ev.append({"ph": "X", "name": "builtins.exec", "pid": 1, "tid": 1, "ts": 2 + k * 0.01, "dur": 9996 - k * 0.02})
    ev += [{"ph": "X", "name": "main (prog.py:1)", "pid": 1, "tid": 1, "ts": 3, "dur": 9990},
           {"ph": "X", "name": "run (prog.py:5)", "pid": 1, "tid": 1, "ts": 4, "dur": 4000},
           {"ph": "X", "name": "report (prog.py:50)", "pid": 1, "tid": 1, "ts": 4100, "dur": 5800}]
    width = 400.0 / resumptions
    for r in range(resumptions):
        t0 = 3000 + r * width
        for k in range(levels):
            name = "visit (prog.py:10)" if k % 2 == 0 else "descend (prog.py:20)"
            ev.append({"ph": "X", "name": name, "pid": 1, "tid": 1, "ts": t0 + 0.1 * k, "dur": width - 1 - 0.2 * k})
    if second_at is not None:
        for k in range(MIN_LEVELS + 2):
            ev.append({"ph": "X", "name": "walk (prog.py:30)", "pid": 1, "tid": 1, "ts": second_at + 0.1 * k,
                       "dur": 900 - 0.2 * k})
    path.write_text(json.dumps({"traceEvents": ev}))
    return tracevis3d.load(path)


def _towers(trace):
    from tracevis3d.naming import function_table

    sel = select_calls(trace, IcicleParams().validate(), window_first=True, name_members=True)
    return sel, recursion_towers(sel, function_table(sel.trace).infra)


def test_a_recursion_is_one_tower_named_once(tmp_path):
    """A recursion through two functions, 40 levels, is one tower named by its cycle and its
    levels, kind group, its outermost call picked; the runtime's recursion (exec in exec)
    is not named; resumptions one after another are one tower; a second recursion later
    is another."""
    trace = _program(tmp_path / "one.json")
    sel, towers = _towers(trace)
    assert len(towers) == 1
    names = [sel.trace.function_names[f].split(" ")[0] for f in towers[0].funcs]
    assert names == ["visit", "descend"] and towers[0].levels == 40
    spec = icicle_layout(trace)
    lab = spec.labels
    named = [j for j in range(len(lab)) if "recursion" in lab.texts[j]]
    assert [lab.texts[j] for j in named] == ["40-level recursion: prog.visit › prog.descend"], lab.texts
    j = named[0]
    assert lab.kind[j] == "group"
    outermost = int(np.flatnonzero(np.char.startswith(np.asarray(trace.function_names)[trace.func], "visit"))[0])
    assert lab.call_index[j] == outermost
    # over its tower: the name spans the tower's stretch of time
    res, cam, tpx = spec.resolution, spec.camera, spec.meta["text_px"]
    p = project(cam, lab.anchors, res)
    w = np.array([text_width(t) for t in lab.texts]) * tpx
    boxes = [(p[k, 0] - (0.5 * w[k] if lab.align[k] == 1 else 0.0), p[k, 1] - ASCENT * tpx,
              p[k, 0] + (0.5 * w[k] if lab.align[k] == 1 else w[k]), p[k, 1] + DESCENT * tpx)
             for k in range(len(lab))]
    wpu, t0 = spec.meta["world_per_us"], spec.meta["t0"]
    ends = project(cam, np.array([[(trace.start[outermost] - t0) * wpu, 0.0, 0.0],
                                  [(trace.end[outermost] - t0) * wpu, 0.0, 0.0]]), res)[:, 0]
    assert boxes[j][0] <= ends[0] and ends[1] <= boxes[j][2], (boxes[j], ends)
    for k in range(len(lab)):
        if k != j and lab.space[k] == "world" and lab.kind[k] in ("call", "run", "row", "group", "fold"):
            a, b = boxes[j], boxes[k]
            assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (lab.texts[k], a, b)
    # the figure's label budget bounds them too
    few = icicle_layout(trace, IcicleParams(max_labels=0).validate()).labels
    assert not [t for t in few.texts if "recursion" in t]
    # resumptions (sibling copies one after another) are one tower; a recursion 50 % of the run later another
    assert len(_towers(_program(tmp_path / "res.json", resumptions=6))[1]) == 1
    two = _towers(_program(tmp_path / "two.json", second_at=5000))[1]
    assert len(two) == 2
    # too shallow: not a tower
    assert _towers(_program(tmp_path / "low.json", levels=MIN_LEVELS - 2))[1] == []


def _under_a_lane(tmp_path, resumptions=1):
    """The program of `_program` under a Worker thread's lane: its tower reaches its lane's top."""
    _program(tmp_path / "one.json", resumptions=resumptions)
    data = json.loads((tmp_path / "one.json").read_text())
    data["traceEvents"] += [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "Worker"}},
                            {"ph": "X", "name": "serve (prog.py:90)", "pid": 1, "tid": 2, "ts": 0, "dur": 10000},
                            {"ph": "X", "name": "handle (prog.py:91)", "pid": 1, "tid": 2, "ts": 10, "dur": 9000}]
    (tmp_path / "two.json").write_text(json.dumps(data))
    trace = tracevis3d.load(tmp_path / "two.json")
    return trace, icicle_layout(trace, IcicleParams(thread_order=["Worker", "MainThread"]).validate())


def _tower_pixels(trace, spec):
    """The tower's outermost call's stretch on the image (x0, x1), and the name's pixel box."""
    outermost = int(np.flatnonzero(np.char.startswith(np.asarray(trace.function_names)[trace.func], "visit"))[0])
    wpu, t0 = spec.meta["world_per_us"], spec.meta["t0"]
    res, cam, tpx = spec.resolution, spec.camera, spec.meta["text_px"]
    z = spec.meta["lane_z"][1]
    ends = project(cam, np.array([[(trace.start[outermost] - t0) * wpu, 0.0, z],
                                  [(trace.end[outermost] - t0) * wpu, 0.0, z]]), res)[:, 0]
    lab = spec.labels
    named = [j for j in range(len(lab)) if "recursion" in lab.texts[j]]
    assert len(named) == 1, lab.texts
    j = named[0]
    p = project(cam, lab.anchors[j][None], res)[0]
    w = text_width(lab.texts[j]) * tpx
    return ends, (p[0] - 0.5 * w, p[1] - ASCENT * tpx, p[0] + 0.5 * w, p[1] + DESCENT * tpx), j


def test_a_recursion_up_to_its_lane_top_is_named_by_its_side(tmp_path):
    """Where the sky over a tower is taken (a lane above it), its name stands by its side,
    under the lane above, clear of the tower."""
    trace, spec = _under_a_lane(tmp_path)
    assert spec.meta["lane_names"] == ["Worker", "MainThread"]
    ends, box, j = _tower_pixels(trace, spec)
    assert spec.labels.anchors[j][2] < spec.meta["lane_z"][0]
    assert box[0] >= ends[1] or box[2] <= ends[0], (box, ends)  # beside the tower, not over it
    assert min(abs(box[0] - ends[1]), abs(box[2] - ends[0])) < 2 * spec.meta["text_px"]  # next to it
    assert not [layer for layer in spec.layers if layer.name == "recursion_plates"]


def test_a_recursion_with_no_room_by_it_is_named_on_a_plate(tmp_path, monkeypatch):
    """With no room by its side either, the name goes on a white plate on the tower's face (a
    generator's tower: 8 resumptions, each too narrow for a name per level)."""
    import tracevis3d.layout.recursion as recursion

    monkeypatch.setattr(recursion, "_beside", lambda *a, **k: None)
    trace, spec = _under_a_lane(tmp_path, resumptions=8)
    ends, box, j = _tower_pixels(trace, spec)
    assert box[0] < ends[1] and ends[0] < box[2]  # over the tower's stretch
    plates = [layer for layer in spec.layers if layer.name == "recursion_plates"]
    assert len(plates) == 1 and len(plates[0]) == 1 and spec.materials["TV3D_name_plate"].color[:3] == (1, 1, 1)
    a = spec.labels.anchors[j]
    assert abs(plates[0].positions[0, 0] - a[0]) < 0.5 * plates[0].scales[0, 0]
    assert abs(plates[0].positions[0, 2] - a[2]) < plates[0].scales[0, 2]
    assert a[1] < plates[0].positions[0, 1]  # the text in front of its plate


def test_a_tower_name_tells_its_functions_apart_and_fits():
    """Two functions of one short name keep the forms that tell them apart; a cycle too long
    for `MAX_TEXT_EM` names as many of its first functions as fit, and how many more."""
    from types import SimpleNamespace

    from tracevis3d.layout.recursion import MAX_TEXT_EM, Tower, tower_texts

    ft = SimpleNamespace(display=["pyparsing.core.And.parseImpl", "pyparsing.core.MatchFirst.parseImpl"]
                         + [f"sympy.core.module{k}.function_number_{k}" for k in range(8)])
    two = tower_texts(Tower(0, [0, 1], 30, 0, 0.0, 1.0), ft)
    for text in two:
        a, b = text.split(": ", 1)[1].split(" › ")
        assert a != b and text.startswith("30-level recursion: "), text
    assert text_width(two[-1]) <= MAX_TEXT_EM
    long = tower_texts(Tower(0, list(range(2, 10)), 25, 0, 0.0, 1.0), ft)
    assert len(long) == 1 and long[0].endswith(" more") and text_width(long[0]) <= MAX_TEXT_EM, long
    assert long[0].startswith("25-level recursion: …number_0 › …number_1 › ")  # the shortest forms, in order


def test_a_name_does_not_float_over_a_taller_neighbour(tmp_path, monkeypatch):
    """A tower whose sky is blocked by a taller stack next to it (the name is wider than the
    tower) is named by its side or on it, not high over the neighbour, where it would name
    nothing (`SKY_REACH_EM`: without it, the name floats over the neighbour's top)."""
    import tracevis3d.layout.recursion as recursion

    _program(tmp_path / "one.json")
    data = json.loads((tmp_path / "one.json").read_text())
    for k in range(90):  # a taller stack of distinct calls just right of the tower
        data["traceEvents"].append({"ph": "X", "name": f"g{k} (other.py:{k})", "pid": 1, "tid": 1,
                                    "ts": 3420 + 0.1 * k, "dur": 500 - 0.2 * k})
    (tmp_path / "tall.json").write_text(json.dumps(data))
    trace = tracevis3d.load(tmp_path / "tall.json")

    def name_y():
        spec = icicle_layout(trace)
        lab = spec.labels
        j = [k for k in range(len(lab)) if "recursion" in lab.texts[k]]
        assert len(j) == 1, lab.texts
        return project(spec.camera, lab.anchors[j[0]][None], spec.resolution)[0, 1], spec.meta["text_px"]

    y, tpx = name_y()
    monkeypatch.setattr(recursion, "SKY_REACH_EM", 1e9)
    y_float, _ = name_y()
    assert y > y_float + 5 * tpx, (y, y_float)  # image y grows downwards


def test_a_recursion_late_in_its_outermost_call_is_named_over_it(tmp_path):
    """A recording whose early calls a tracer's full buffer dropped: the outermost call of a
    recursion lasts 10 ms, but the recursion's levels stand in its last 1.5 ms.  The name stands
    over those levels (its middle inside their stretch), not over the empty middle of the
    outermost call."""
    ev = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "MainThread"}},
          {"ph": "X", "name": "job (prog.py:1)", "pid": 1, "tid": 1, "ts": 0, "dur": 10000},
          {"ph": "X", "name": "prop (prog.py:5)", "pid": 1, "tid": 1, "ts": 1, "dur": 9998},
          {"ph": "X", "name": "wrapped (prog.py:9)", "pid": 1, "tid": 1, "ts": 2, "dur": 9996}]
    for k in range(MIN_LEVELS + 4):  # prop › engine › prop › engine ... from 8.5 ms on
        name = "engine (prog.py:20)" if k % 2 == 0 else "prop (prog.py:5)"
        ev.append({"ph": "X", "name": name, "pid": 1, "tid": 1, "ts": 8500 + 0.5 * k, "dur": 1450 - k})
    (tmp_path / "late.json").write_text(json.dumps({"traceEvents": ev}))
    trace = tracevis3d.load(tmp_path / "late.json")
    spec = icicle_layout(trace, IcicleParams(resolution=(1280, 720)).validate())
    lab = spec.labels
    named = [j for j in range(len(lab)) if "recursion" in lab.texts[j]]
    assert len(named) == 1, lab.texts
    j = named[0]
    wpu, t0 = spec.meta["world_per_us"], spec.meta["t0"]
    z = float(lab.anchors[j][2])
    x = project(spec.camera, np.array([[(8500 - t0) * wpu, 0.0, z], [(9950 - t0) * wpu, 0.0, z]]),
                spec.resolution)[:, 0]
    p = project(spec.camera, lab.anchors[j][None].astype(np.float64), spec.resolution)[0]
    w = text_width(lab.texts[j]) * spec.meta["text_px"]
    middle = p[0] + (0.0 if lab.align[j] == 1 else 0.5 * w if lab.align[j] == 0 else -0.5 * w)
    assert x[0] - w <= middle <= x[1] + w, (middle, x, lab.texts[j])  # over or by the levels
    far = project(spec.camera, np.array([[(5000 - t0) * wpu, 0.0, z]]), spec.resolution)[0, 0]
    assert abs(middle - far) > 0.25 * (x[1] - far), (middle, far)  # not at the outermost call's middle
