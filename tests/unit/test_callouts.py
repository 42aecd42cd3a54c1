"""Callouts (`layout.callouts`): calls too narrow for their names are named in the free room
above them, with a leader down to the box; the names touch nothing drawn and no leader
crosses a name."""
from __future__ import annotations

import json

import numpy as np

import tracevis3d
from tracevis3d.layout.camera import project
from tracevis3d.params.icicle import IcicleParams
from tracevis3d.layout.text import ASCENT, DESCENT, text_width


def _short_program(path, crowd: int = 0, nested: bool = False):
    """A 10 ms program: a narrow call at its start (``configure_logging``), three narrow ones (``parse_args``, ``load``
    over a tower of 30 nested ``step`` calls, ``encode``), and an import whose machinery
    reads a file (``io.open_code`` under ``importlib._bootstrap._load``), then a wide ``work``
    call; ``crowd`` more narrow calls of distinct functions close together before them;
    ``nested``: a narrow ``outer`` call whose ``helper`` is wider than ``load``, and a C
    built-in (``isinstance``) wider than all but ``outer``."""
    ev = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "MainThread"}},
          {"ph": "X", "name": "main (tool.py:1)", "pid": 1, "tid": 1, "ts": 0, "dur": 10000},
          {"ph": "X", "name": "configure_logging (tool.py:5)", "pid": 1, "tid": 1, "ts": 2, "dur": 50},
          {"ph": "X", "name": "work (tool.py:10)", "pid": 1, "tid": 1, "ts": 5000, "dur": 4900},
          {"ph": "X", "name": "inner (tool.py:20)", "pid": 1, "tid": 1, "ts": 5010, "dur": 4000},
          {"ph": "X", "name": "parse_args (argparse.py:1)", "pid": 1, "tid": 1, "ts": 1100, "dur": 50},
          {"ph": "X", "name": "load (json/__init__.py:274)", "pid": 1, "tid": 1, "ts": 1600, "dur": 60},
          {"ph": "X", "name": "encode (json/encoder.py:183)", "pid": 1, "tid": 1, "ts": 2600, "dur": 45},
          {"ph": "X", "name": "_load (<frozen importlib._bootstrap>:1)", "pid": 1, "tid": 1, "ts": 3600, "dur": 300},
          {"ph": "X", "name": "io.open_code", "pid": 1, "tid": 1, "ts": 3610, "dur": 50}]
    for k in range(30):
        ev.append({"ph": "X", "name": "step (json/decoder.py:50)", "pid": 1, "tid": 1, "ts": 1600.5 + 0.5 * k,
                   "dur": 59 - k})
    if nested:
        ev += [{"ph": "X", "name": "builtins.isinstance", "pid": 1, "tid": 1, "ts": 2400, "dur": 70},
               {"ph": "X", "name": "outer (tool.py:30)", "pid": 1, "tid": 1, "ts": 2100, "dur": 80},
               {"ph": "X", "name": "helper (tool.py:40)", "pid": 1, "tid": 1, "ts": 2102, "dur": 64},
               {"ph": "X", "name": "tail (tool.py:50)", "pid": 1, "tid": 1, "ts": 2170, "dur": 8}]
    for k in range(crowd):
        ev.append({"ph": "X", "name": f"handler_{k} (tool.py:{100 + k})", "pid": 1, "tid": 1, "ts": 4000 + 110 * k,
                   "dur": 30 + 2 * k})
    path.write_text(json.dumps({"traceEvents": ev}))
    return tracevis3d.load(path)


def _text_rect(spec, j, tpx):
    """Pixel rectangle of world label ``j`` (centred, across)."""
    lab = spec.labels
    p = project(spec.camera, lab.anchors[j:j + 1].astype(np.float64), spec.resolution)[0]
    w = text_width(lab.texts[j]) * tpx
    return p[0] - 0.5 * w, p[1] - ASCENT * tpx, p[0] + 0.5 * w, p[1] + DESCENT * tpx


def _cross(p, q, a, b) -> bool:
    """Do segments pq and ab cross (brute force: sample pq, test the side of ab each point is on
    and whether the points straddle ab inside its extent)?"""
    t = np.linspace(0.0, 1.0, 2001)[:, None]
    pts = p[None] + (q - p)[None] * t
    ab = b - a
    side = np.sign(ab[0] * (pts[:, 1] - a[1]) - ab[1] * (pts[:, 0] - a[0]))
    flips = np.flatnonzero(side[:-1] * side[1:] < 0)
    for f in flips:
        u = ((pts[f] - a) @ ab) / (ab @ ab)
        if 0.0 < u < 1.0:
            return True
    return False


def _box_rects(spec, layer):
    """Pixel bounding rectangles of a layer's boxes (their eight corners, projected)."""
    pos, sc = layer.positions.astype(np.float64), layer.scales.astype(np.float64)
    corners = []
    for sx in (-0.5, 0.5):
        for sy in (-0.5, 0.5):
            for sz in (-0.5, 0.5):
                corners.append(project(spec.camera, pos + sc * np.array([sx, sy, sz]), spec.resolution))
    c = np.stack(corners)
    return c[..., 0].min(0), c[..., 1].min(0), c[..., 0].max(0), c[..., 1].max(0)


def test_narrow_calls_are_named_above_their_stacks(tmp_path):
    from tracevis3d.layout.callouts import LEADER_MATERIAL, MAX_SLANT
    from tracevis3d.layout.icicle import icicle_layout

    trace = _short_program(tmp_path / "tool.json")
    spec = icicle_layout(trace, IcicleParams(show_legend=False, inset="none"))  # the sky over the calls free
    tpx = spec.meta["text_px"]
    leaders = spec.layer("callout_leaders")
    assert LEADER_MATERIAL in spec.materials
    lab = spec.labels
    out = leaders.attributes["call_index"].tolist()
    texts = {lab.texts[j]: j for j in range(len(lab)) if lab.kind[j] == "call" and int(lab.call_index[j]) in out}
    names = {trace.function_names[int(trace.func[lab.call_index[j]])].split(" (")[0]: t for t, j in texts.items()}
    # the narrow calls of the program are named, each once (``step``, over ``load``, aside or not)
    assert {"configure_logging", "parse_args", "load", "encode"} <= set(names) <= {
        "configure_logging", "parse_args", "load", "encode", "step"}, texts
    assert len(texts) == len(out)
    assert "io.open_code" not in names  # the import machinery's own reading
    boxes = spec.layer("calls")
    bx0, by0, bx1, by1 = _box_rects(spec, boxes)
    rects = {t: _text_rect(spec, j, tpx) for t, j in texts.items()}
    for t, (x0, y0, x1, y1) in rects.items():
        j = texts[t]
        start = project(spec.camera, np.array([[0.0, 0.0, lab.anchors[j, 2]]]), spec.resolution)[0, 0]
        assert x0 >= start - 1, t  # over the lane, not in the lane names' column
        hit = (bx0 < x1 - 1) & (x0 + 1 < bx1) & (by0 < y1 - 1) & (y0 + 1 < by1)
        assert not hit.any(), (t, np.flatnonzero(hit))  # over nothing drawn
        for u, r in rects.items():  # no two callouts overlap
            assert u == t or not (r[0] < x1 and x0 < r[2] and r[1] < y1 and y0 < r[3]), (t, u)
    # each leader: up the middle of its call's face to the face's top edge, then to just under
    # its name, straight up where the room over the call is free
    x_of = boxes.attributes["call_index"].tolist()
    straight = 0
    for k, call in enumerate(out):
        b = x_of.index(call)
        lo = leaders.left[k].astype(np.float64)
        hi = leaders.right[k].astype(np.float64)
        mid = 0.5 * (lo + hi)
        j = [texts[t] for t in texts if int(lab.call_index[texts[t]]) == call][0]
        atol = 1e-5 * spec.meta["params"]["time_length"]
        assert np.isclose(mid[0, 0], boxes.positions[b, 0], atol=atol) and np.isclose(mid[1, 0], mid[0, 0], atol=atol)
        assert abs(mid[0, 2] - boxes.positions[b, 2]) < 0.5 * boxes.scales[b, 2]  # starts on the face
        assert np.isclose(mid[1, 2], boxes.positions[b, 2] + 0.5 * boxes.scales[b, 2], atol=atol)  # its top edge
        ends = project(spec.camera, mid, spec.resolution)
        run, rise = abs(ends[2, 0] - ends[1, 0]), ends[1, 1] - ends[2, 1]
        assert run <= MAX_SLANT * rise + 1, lab.texts[j]  # slanted at most MAX_SLANT
        straight += bool(np.isclose(mid[2, 0], mid[0, 0], atol=atol))
        name_low = project(spec.camera, lab.anchors[j:j + 1].astype(np.float64), spec.resolution)[0, 1] + DESCENT * tpx
        top = ends[2, 1]
        assert name_low < top < name_low + tpx, (lab.texts[j], name_low, top)  # ends just under its name
        assert np.all(mid[:, 1] < 0)  # in front of the faces
    assert straight >= 3  # where the room over a call is free, its leader runs straight up
    # without labels, or with max_callouts 0, no callouts; at most max_callouts
    for bare in (IcicleParams(show_labels=False, inset="none"), IcicleParams(max_callouts=0, inset="none")):
        assert not any(x.name == "callout_leaders" for x in icicle_layout(trace, bare).layers)
    two = icicle_layout(trace, IcicleParams(show_legend=False, max_callouts=2, inset="none"))
    assert len(two.layer("callout_leaders")) == 2



def test_calls_right_under_a_named_call_are_tried_first(tmp_path, monkeypatch):
    """Candidates rank by the drawn levels up to their nearest named ancestor, then by width:
    ``helper`` (64 µs, under the unnamed ``outer``) comes after every call right under the
    named ``main``, though it is wider than all but ``outer``; a C built-in comes last, though
    it is wider than all but ``outer`` too."""
    from tracevis3d.layout import callouts
    from tracevis3d.layout.icicle import icicle_layout

    tried = []
    real = callouts.name_candidates

    def spy(display):
        tried.append(display.rsplit(".", 1)[-1])
        return real(display)

    monkeypatch.setattr(callouts, "name_candidates", spy)
    icicle_layout(_short_program(tmp_path / "tool.json", nested=True), IcicleParams(show_legend=False, inset="none"))
    assert "helper" in tried and set(tried[:tried.index("helper")]) >= {"outer", "load", "configure_logging",
                                                                         "parse_args", "encode"}, tried
    assert tried[-1] == "isinstance", str(tried)


def test_leaders_never_cross_a_name(tmp_path):
    """Every leader's column on the image, from its call to its name, misses every other text,
    where eight narrow calls stand side by side (their names form a staircase)."""
    from tracevis3d.layout.icicle import icicle_layout

    trace = _short_program(tmp_path / "tool.json", crowd=8)
    spec = icicle_layout(trace, IcicleParams(show_legend=False, inset="none"))  # the sky over the calls free
    tpx = spec.meta["text_px"]
    leaders = spec.layer("callout_leaders")
    lab = spec.labels
    world = [j for j in range(len(lab)) if lab.space[j] == "world" and lab.kind[j] in ("call", "run", "row", "group")]
    own = leaders.attributes["call_index"].tolist()
    assert len(leaders) >= 5, [lab.texts[j] for j in world]
    for k in range(len(leaders)):
        mid = 0.5 * (leaders.left[k] + leaders.right[k]).astype(np.float64)
        p = project(spec.camera, mid, spec.resolution)
        way = p[1][None] + (p[2] - p[1])[None] * np.linspace(0, 1, 200)[:, None]  # its slanted part, sampled
        for j in world:
            if int(lab.call_index[j]) == own[k]:
                continue
            x0, y0, x1, y1 = _text_rect(spec, j, tpx)
            inside = (x0 < way[:, 0]) & (way[:, 0] < x1) & (y0 < way[:, 1]) & (way[:, 1] < y1)
            assert not inside.any(), (lab.texts[j], k)
        for m in range(k):  # no two leaders cross
            q = project(spec.camera, 0.5 * (leaders.left[m] + leaders.right[m]).astype(np.float64), spec.resolution)
            assert not _cross(p[1], p[2], q[1], q[2]), (k, m)


def test_the_thread_views_wall_names_its_narrow_calls_clear_of_the_ring(tmp_path):
    """The thread view's wall (the focused thread's icicle) takes callouts as the icicle does:
    over the wall, above its time axis, where no other name of the figure (the ring's, the
    lanes') stands."""
    from tracevis3d.layout.threads import threads_layout
    from tracevis3d.params.threads import ThreadsParams

    spec = threads_layout(_short_program(tmp_path / "tool.json"))
    lab = spec.labels
    tpx = spec.meta["text_px"]
    lead = lab.attributes["callout_leader"]
    out = np.flatnonzero(lead >= 0)
    assert len(out) >= 3 and len(spec.layer("callout_leaders")) == len(out)
    axis = spec.layer("wall_axis")
    axis_y = project(spec.camera, axis.positions.astype(np.float64), spec.resolution)[:, 1].min()
    others = [j for j in range(len(lab)) if lead[j] < 0 and lab.space[j] == "world"]
    anchors = project(spec.camera, lab.anchors[others].astype(np.float64), spec.resolution)
    none = threads_layout(_short_program(tmp_path / "tool.json"), ThreadsParams(max_callouts=0))
    assert not any(x.name == "callout_leaders" for x in none.layers)  # the thread view's own parameter
    for j in out:
        x0, y0, x1, y1 = _text_rect(spec, j, tpx)
        assert y1 < axis_y, lab.texts[j]  # over the wall
        inside = (x0 < anchors[:, 0]) & (anchors[:, 0] < x1) & (y0 < anchors[:, 1]) & (anchors[:, 1] < y1)
        assert not inside.any(), (lab.texts[j], [lab.texts[others[k]] for k in np.flatnonzero(inside)])
