"""Detail inset stage of the icicle: a crowded stretch of one lane, magnified, in the free
room of the frame (bpy-free).

A short program's figure is often crowded in one place: an argument parser, a regular
expression compiler and a file opened, side by side within a millimetre of the time axis,
each box a few pixels wide: narrower than any form of its name, too close to the next for
a callout's leader.  A presenter shows such a place magnified beside the figure, with a
frame on the place and lines to the magnified copy (an inset, "detail of").  So does the
icicle (``inset``: ``auto``, ``none`` or a window ``T0:T1``):

- **where** (``auto``): the calls the figure leaves unnamed (boxes of their own, not the
  runtime's, whose function has no name anywhere in the figure) are candidates; for each
  of the `MAX_RECTS` largest free rectangles of the frame (`inset_plan.free_rectangles`: nothing
  drawn, no name, no title or legend, no flow arc or counter track within
  `INSET_PAD_EM`), the stretch of one lane that, magnified to the rectangle's width, makes
  the most candidates wide enough for their shortest name (`inset_plan.best_window`, at the
  magnifications `ZOOMS`); the stretches expected to name most are built, at most
  `MAX_BUILT` and the next only while none names `ENOUGH_NEW_NAMES` functions the figure
  does not (an inset costs what its window's calls cost), and the one that names most is
  kept, if it names at least `MIN_NEW_NAMES`;
- **what**: the figure of that stretch on its own (`icicle.icicle_stages` on the window,
  its own fold within the rectangle's height budget, its own labels and recursion names),
  each call in its colour of the figure (the figure's colour slot of that call), boxes of
  a uniform thin depth, on a light panel: it reads as a figure of its own, not as calls
  of the lane whose free room it takes;
- **how**: laid out for the rectangle of the main image (`frame.frame_lanes` with the
  rectangle as content rectangle, the same camera direction, lens and resolution, so a
  pixel is a pixel), then moved into the main scene by one uniform scale and translation
  (`place_similar`) that puts its content on that rectangle through the main camera, its
  front in the figure's front plane: labels keep their pixel size, boxes their proportions;
- **marks** (``inset_marks``): a thin frame around the stretch in the figure, one around
  the panel, and lines joining them that cross no name (`_joining_lines`: the two outer
  lines between like corners, else from the nearest corners, else the one shortest; else
  the outer two behind the figure's front faces, hidden where they pass over boxes), and
  a caption over the panel ("detail: 6.94 – 7.28 ms, 12× wider").
Every inset element carries the call it shows (``call_index`` of the loaded trace) and
``t_start``/``t_end`` (µs from the figure's window start), so picking and the growth
animation treat them as the figure's own calls.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .geometry import drawn_chunks
from .inset_plan import (MIN_H_EM, MIN_NEW_NAMES, MIN_W_EM, InsetPlan, named_functions, names_calls,
                         plan_inset)
from .spec import CurveLayer, InstanceLayer, LabelSet

#: insets built and counted, at most (the plans expected to name most; a third when the first two name
#: few: on a json_tool recording the two wide rectangles, 7 label sizes tall, named 5 and 3 functions
#: where 9 and 8 were expected, the tall one 11)...
MAX_BUILT = 3
ENOUGH_NEW_NAMES = 6  # ...the next only while the best so far names fewer new functions than this
INSET_DEPTH_LEVELS = 0.5  # the inset's boxes: this many level heights deep, all alike
CAPTION_MATERIAL = "TV3D_text_muted"
PREFIX = "inset_"  # the inset's layers are named so (their own time axis: ``t_start``/``t_end``)
INSET_ATTRIBUTE = "inset"  # 1 on the inset's labels (`LabelSet.attributes`)
MARK_MATERIAL = "TV3D_inset_mark"
MARK_PX = 1.4  # width of the frames and the joining lines
MARK_RGB = (0.30, 0.30, 0.32)
PANEL_MATERIAL = "TV3D_inset_panel"
#: linear: a faint grey behind the inset, a page of its own, framed, that no one takes for a
#: call (the figure's greys, "other" and runtime, are far darker): sRGB 0.98 where it is
#: emitted (EEVEE, Cycles), 0.90 under Workbench's studio light (measured)
PANEL_RGB = (0.96, 0.96, 0.965)


def place_similar(points_sub: np.ndarray, cam, res, rect, y_front: float, rounds: int = 5) -> tuple:
    """(k, T): the uniform scale and translation p → k·p + T that puts ``points_sub`` (the
    inset's content, in its own world, its front at y = 0) on the pixel rectangle ``rect``
    of ``cam`` (the main camera) with its front in the plane y = ``y_front`` (the figure's
    front: what joins the inset to the figure runs in front of every box): its projected
    bounding box centred on the rectangle's centre, as large as fits inside it (laid out
    for the rectangle by another camera, it has the rectangle's size within a few pixels),
    refined ``rounds`` times (perspective: a pixel's
    world size depends on the depth) by moving it along x and z (a Jacobian of the
    projection at its centre)."""
    from .camera import project

    x0, y0, x1, y1 = (float(v) for v in rect)
    p = np.asarray(points_sub, np.float64)
    want = np.array([0.5 * (x0 + x1), 0.5 * (y0 + y1)])
    # a first guess: the content's centre at the camera's target (x, z), its front at y_front;
    # the rounds scale it and move it onto the rectangle
    k = 1.0
    c_sub = 0.5 * (p.min(0) + p.max(0))
    T = np.array([0.0, y_front, 0.0]) + np.asarray(cam.target, np.float64) * np.array([1.0, 0.0, 1.0]) \
        - k * c_sub * np.array([1.0, 0.0, 1.0])
    for _ in range(rounds):
        q = k * p + T
        pr = project(cam, q, res)
        (bx0, by0), (bx1, by1) = pr.min(0), pr.max(0)
        ratio = float(min(max(x1 - x0, 1.0) / max(bx1 - bx0, 1e-9), max(y1 - y0, 1.0) / max(by1 - by0, 1e-9)))
        c = 0.5 * (q.min(0) + q.max(0))
        # scale about the content's centre (x and z; the front stays at y_front)
        T = T + (1.0 - ratio) * (c - T) * np.array([1.0, 0.0, 1.0])
        k = k * ratio
        q = k * p + T
        pr = project(cam, q, res)
        c = 0.5 * (q.min(0) + q.max(0))
        have = 0.5 * (pr.min(0) + pr.max(0))
        eps = 1e-3 * max(float(np.ptp(q[:, 0])), 1e-9)
        j = project(cam, np.array([c, c + [eps, 0.0, 0.0], c + [0.0, 0.0, eps]]), res)
        J = np.stack([(j[1] - j[0]) / eps, (j[2] - j[0]) / eps], 1)  # d pixel / d (x, z)
        try:
            dxz = np.linalg.solve(J, want - have)
        except np.linalg.LinAlgError:
            break
        T = T + np.array([dxz[0], 0.0, dxz[1]])
    return k, T


@dataclasses.dataclass
class Inset:
    """What the inset stage adds to the figure."""

    layers: list
    labels: list  # LabelSets
    rect: tuple  # the pixels it takes (frame and caption)
    meta: dict
    line_points: np.ndarray  # (m, 2) pixels along its joining lines (what callouts keep off)
    functions: set  # the functions it names (ids of the figure's trace)


#: ``inset_part`` of each box of the inset's one instance layer (`merged_boxes`): what it was
PARTS = {"calls": 0, "clusters": 1, "panel": 3}  # anything else (name plates): 2
#: the inset's name plates stop this many depth steps inside their face's edges (`plates_off_faces`)
PLATE_INSET_STEPS = 0.5


def plates_off_faces(layers: list, cam) -> None:
    """The name plates among the inset's instance layers (not its calls, clusters or panel)
    made `PLATE_INSET_STEPS` depth steps of ``cam`` (`box_overlap.depth_step`) narrower and lower
    on each side, in place.  A plate stands on its call's front face as tall as the face and at
    most as wide, so its top, bottom and sides lay in the planes of the box's, edge to edge; the
    inset's boxes are one instancer (`merged_boxes`), whose instances Blender draws in an order
    that changes from render to render, and along such an edge the depth buffer cannot tell the
    two faces apart: a pixel there showed the plate or the box by draw order.  Set back by half a
    step, the faces lie two steps apart along any ray of the icicle's oblique views."""
    from .box_overlap import depth_step

    eps = PLATE_INSET_STEPS * depth_step(cam)
    for x in layers:
        if isinstance(x, InstanceLayer) and len(x) and x.name[len(PREFIX):] not in PARTS:
            sc = x.scales.astype(np.float64)
            for a in (0, 2):
                sc[:, a] = np.where(sc[:, a] > 4.0 * eps, sc[:, a] - 2.0 * eps, sc[:, a])
            x.scales = sc.astype(np.float32)


def merged_boxes(layers: list, name: str) -> InstanceLayer:
    """The inset's instance layers (its calls, merged calls, name plates, panel) as one
    layer ``name``: one object to write, not four.  Materials are the union of those used
    (indices remapped; a layer's instancer costs ~1.5 ms per material in Blender, and the
    inset uses few of the figure's); an attribute a layer lacks is -1
    (int) or 0 (float) there; ``inset_part`` says which layer each box came from (`PARTS`)."""
    mats: list = []  # the materials the boxes use (a writer's instancer costs ~1.5 ms per material)
    for x in layers:
        used = np.unique(x.material_index)
        mats += [x.materials[int(i)] for i in used if x.materials[int(i)] not in mats]
    keys = {}
    for x in layers:
        for k, a in x.attributes.items():
            keys.setdefault(k, a.dtype)
    attrs = {k: [] for k in keys}
    part = []
    for x in layers:
        n = len(x)
        for k, dt in keys.items():
            a = x.attributes.get(k)
            attrs[k].append(a.astype(dt) if a is not None else np.full(n, -1 if dt == np.int32 else 0, dt))
        part.append(np.full(n, PARTS.get(x.name[len(PREFIX):], 2), np.int32))
    remap = [np.array([mats.index(m) if m in mats else 0 for m in x.materials], np.int32) for x in layers]
    return InstanceLayer(
        name, np.concatenate([x.positions for x in layers]).astype(np.float32),
        np.concatenate([x.scales for x in layers]).astype(np.float32),
        np.concatenate([x.colors for x in layers]).astype(np.float32),
        np.concatenate([r[x.material_index] for r, x in zip(remap, layers)]).astype(np.int32), mats,
        {**{k: np.concatenate(v) for k, v in attrs.items()}, "inset_part": np.concatenate(part)})


def _slot_lookup(sel, colouring, lane: int):
    """A `colouring_of` for `icicle.icicle_stages`: the inset's calls keep the slot the
    figure gave them (its calls of ``lane``, by their index in the figure's trace)."""
    lo, hi = np.searchsorted(sel.lane, [lane, lane + 1])
    ids, slots = sel.idx[lo:hi], colouring.slot[lo:hi]
    if ids.size > 1 and not bool(np.all(ids[1:] >= ids[:-1])):  # (ascending already: a lane of one thread)
        order = np.argsort(ids, kind="stable")
        ids, slots = ids[order], slots[order]
    fallback = len(colouring.slot_rgb) - 1  # "other" in the categorical modes

    def colouring_of(sel_in):
        want = np.asarray(sel_in.original(sel_in.idx), np.int64)
        pos = np.clip(np.searchsorted(ids, want), 0, max(ids.size - 1, 0))
        hit = ids[pos] == want if ids.size else np.zeros(want.size, np.bool_)
        slot = np.where(hit, slots[pos] if ids.size else fallback, fallback).astype(np.int32)
        return dataclasses.replace(colouring, slot=slot)

    return colouring_of


def _moved(layers: list, labels: list, k: float, T: np.ndarray) -> None:
    """Every inset element moved by p → k·p + T (in place)."""
    T32 = T.astype(np.float32)
    for x in layers:
        if isinstance(x, InstanceLayer):
            x.positions = (np.float32(k) * x.positions + T32).astype(np.float32)
            x.scales = (np.float32(k) * x.scales).astype(np.float32)
        elif isinstance(x, CurveLayer):
            x.left = (np.float32(k) * x.left + T32).astype(np.float32)
            x.right = (np.float32(k) * x.right + T32).astype(np.float32)
    for s in labels:
        s.anchors = (np.float32(k) * s.anchors + T32).astype(np.float32)
        s.sizes = (np.float32(k) * s.sizes).astype(np.float32)


def _segments(name: str, segs: np.ndarray, cam, res, to_cam) -> CurveLayer:
    """Thin straight ribbons (``segs`` (m, 2, 3) world), `MARK_PX` pixels wide, facing the camera."""
    from .camera import world_per_pixel

    p, q = segs[:, 0], segs[:, 1]
    mid = 0.5 * (p + q)
    half = 0.5 * MARK_PX * world_per_pixel(cam, mid, res)
    n = np.cross(q - p, np.asarray(to_cam, np.float64)[None])
    n /= np.maximum(np.linalg.norm(n, axis=1), 1e-12)[:, None]
    off = n * half[:, None]
    left = np.stack([p - off, q - off], 1)
    right = np.stack([p + off, q + off], 1)
    m = segs.shape[0]
    col = np.ones((m, 4), np.float32)
    col[:, :3] = MARK_RGB
    return CurveLayer(name, left.astype(np.float32), right.astype(np.float32), col, np.zeros(m, np.int32),
                      [MARK_MATERIAL], {"call_index": np.full(m, -1, np.int32)})


def _rect_edges(x0, x1, y, z0, z1) -> np.ndarray:
    c = np.array([[x0, y, z0], [x1, y, z0], [x1, y, z1], [x0, y, z1]], np.float64)
    return np.stack([c, np.roll(c, -1, axis=0)], 1)


def _joining_lines(src: np.ndarray, dst: np.ndarray, cam, res, names_grid: np.ndarray, cell: float) -> np.ndarray:
    """Lines from corners of the rectangle ``src`` (4 corners, world) to corners of ``dst``
    that cross no name (``names_grid``: `annotate.occupancy_grid` cells of ``cell`` pixels
    taken by names): the two outer lines of the four between like corners (those outside
    both rectangles on the image), else the two from the source's corners nearest the
    inset to the inset's nearest, else the one shortest line; else the two outer lines
    behind the figure's front faces (where they pass over boxes, the boxes hide them, and
    the names in front of them).  ((m, 2, 3) world segments, behind)."""
    from .camera import project

    ps, pd = project(cam, src, res), project(cam, dst, res)

    def through(a, b, poly):
        # does segment ab pass through the (convex) quadrilateral's interior?  sampled
        t = np.linspace(0.02, 0.98, 49)[:, None]
        pts = a[None] + t * (b - a)[None]
        c = poly.mean(0)
        inner = c[None] + 0.97 * (poly - c[None])
        inside = np.ones(len(pts), np.bool_)
        for i in range(4):
            e0, e1 = inner[i], inner[(i + 1) % 4]
            s = (e1[0] - e0[0]) * (pts[:, 1] - e0[1]) - (e1[1] - e0[1]) * (pts[:, 0] - e0[0])
            sc = (e1[0] - e0[0]) * (c[1] - e0[1]) - (e1[1] - e0[1]) * (c[0] - e0[0])
            inside &= s * sc > 0
        return bool(inside.any())

    def crosses_a_name(a, b):
        n = int(np.ceil(np.linalg.norm(b - a) / (0.5 * cell))) + 2
        pts = a[None] + np.linspace(0.0, 1.0, n)[:, None] * (b - a)[None]
        r = np.clip((pts[:, 1] // cell).astype(np.int64), 0, names_grid.shape[0] - 1)
        c = np.clip((pts[:, 0] // cell).astype(np.int64), 0, names_grid.shape[1] - 1)
        return bool(names_grid[r, c].any())

    def clear(pairs):
        return all(not through(ps[i], pd[j], ps) and not through(ps[i], pd[j], pd) and
                   not crosses_a_name(ps[i], pd[j]) for i, j in pairs)

    outer = [i for i in range(4) if not through(ps[i], pd[i], ps) and not through(ps[i], pd[i], pd)]
    if len(outer) > 2:  # the two farthest apart
        outer = list(max(((i, j) for i in outer for j in outer if i < j),
                         key=lambda ij: np.linalg.norm((ps[ij[0]] + pd[ij[0]]) - (ps[ij[1]] + pd[ij[1]]))))
    dist = np.linalg.norm(ps[:, None] - pd[None], axis=2)
    near_src = np.argsort(dist.min(1))[:2]
    nearest = [(int(i), int(np.argmin(dist[i]))) for i in near_src]
    shortest = [tuple(int(v) for v in np.unravel_index(np.argmin(dist), dist.shape))]
    for pairs in ([(i, i) for i in outer], nearest, shortest):
        if pairs and len({j for _, j in pairs}) == len(pairs) and clear(pairs):
            return np.stack([np.stack([src[i], dst[j]]) for i, j in pairs]), False
    if not outer:
        return np.zeros((0, 2, 3)), False
    return np.stack([np.stack([src[i], dst[i]]) for i in outer]), True


def build_inset(plan: InsetPlan, st, frame, params, tpx: float, names_grid: np.ndarray, cell: float,
                figure_of) -> Inset | None:
    """The inset of ``plan`` (see the module docstring): its layers and labels in the main
    scene, moved onto ``plan.rect``; None when its window shows nothing.  ``names_grid``:
    the cells (``cell`` pixels) the figure's names take, which the joining lines keep off;
    ``figure_of``: the icicle of a stretch on its own (`icicle.stretch_figure`: the view's
    stages, handed in, for a stage does not import its view)."""
    from .camera import world_per_pixel
    from .labels import place_facing_text
    from .text import text_width

    sel = st.sel
    res = params.resolution
    x0, y0, x1, y1 = plan.rect
    cap_h = 1.8 * tpx
    fig_rect = (x0, y0 + cap_h, x1, y1)
    threads = [int(t) for t in sel.members[plan.lane]]
    p_in = dataclasses.replace(
        params, time_window=(float(plan.t0), float(plan.t1)), threads=threads, hide=[], hide_modules=[],
        hide_utilities=0, collapse_patterns=False, expand=[], highlight=[], show_title=False, show_legend=False,
        show_axes=False, max_counters=0, show_flows=False, show_instants=False, show_async=False, cutaway=None,
        max_callouts=0, pack_threads=False, extrude_measure="constant", lane_depth=INSET_DEPTH_LEVELS,
        inset="none", lane_gap=None).validate()
    try:
        st_in, fr, layers, label_sets = figure_of(sel.trace, p_in, tpx, fig_rect,
                                                  _slot_lookup(sel, st.colouring, plan.lane), PREFIX)
    except ValueError:  # nothing in the window
        return None
    s_in = st_in.sel
    label_sets = [s for s in label_sets if len(s)]
    named = set()  # the functions its names name (ids of the figure's trace)
    for s in label_sets:
        ci = s.call_index[names_calls(s) & (s.call_index >= 0)]
        named |= set(sel.trace.func[ci].tolist())
    # the calls they show, in the loaded trace; their times on the figure's clock
    for x in layers:
        ci = x.attributes.get("call_index")
        if ci is not None:
            x.attributes["call_index"] = np.where(ci >= 0, sel.original(np.maximum(ci, 0)), -1).astype(np.int32)
        if isinstance(x, InstanceLayer) and len(x):
            xs = x.positions[:, 0].astype(np.float64) - 0.5 * x.scales[:, 0]
            x.attributes["t_start"] = (xs / fr.scale_t + s_in.t0 - sel.t0).astype(np.float32)
            x.attributes["t_end"] = ((xs + x.scales[:, 0]) / fr.scale_t + s_in.t0 - sel.t0).astype(np.float32)
    for s in label_sets:
        s.call_index = np.where(s.call_index >= 0, sel.original(np.maximum(s.call_index, 0)), -1).astype(np.int32)
    boxes = [x for x in layers if isinstance(x, InstanceLayer) and len(x)]
    if not boxes:
        return None
    lo = np.min([(x.positions - 0.5 * x.scales).min(0) for x in boxes], axis=0).astype(np.float64)
    hi = np.max([(x.positions + 0.5 * x.scales).max(0) for x in boxes], axis=0).astype(np.float64)
    corners = np.array([[a, b, c] for a in (lo[0], hi[0]) for b in (lo[1], hi[1]) for c in (lo[2], hi[2])])
    cam = frame.cam
    k, T = place_similar(corners, cam, res, fig_rect, -0.03 * frame.h)
    _moved(layers, label_sets, k, T)
    lo, hi = k * lo + T, k * hi + T
    # marks: the stretch in the figure, the inset, the lines between them
    d = st.drawn
    lane = plan.lane
    z_lo = float(frame.z_base[lane])
    z_hi = None  # the top of the lane's boxes in the stretch, a chunk of the drawn calls at a time
    for s in drawn_chunks(d.local.size):
        in_lane = np.flatnonzero((d.lane[s] == lane) & (d.end[s] > plan.t0) & (d.start[s] < plan.t1))
        if in_lane.size:
            top = float(d.face_high_at(in_lane + s.start).max())
            z_hi = top if z_hi is None else max(z_hi, top)
    if z_hi is None:
        z_hi = z_lo + frame.h
    sx0, sx1 = (plan.t0 - sel.t0) * frame.scale_t, (plan.t1 - sel.t0) * frame.scale_t
    m = 0.15 * frame.h
    y_front = -0.03 * frame.h
    src = _rect_edges(sx0, sx1, y_front, z_lo - m, z_hi + m)
    gap = 0.35 * tpx * float(world_per_pixel(cam, (0.5 * (lo + hi))[None], res)[0])
    plates_off_faces(layers, cam)
    dst = _rect_edges(lo[0] - gap, hi[0] + gap, lo[1], lo[2] - gap, hi[2] + gap)
    lines, behind = _joining_lines(src[:, 0], dst[:, 0], cam, res, names_grid, cell)
    if behind:
        lines[:, :, 1] = 0.02 * frame.h
    marks = _segments(PREFIX + "marks", np.concatenate([src, dst, lines]), cam, res, frame.to_cam)
    layers.append(marks)
    # a light panel behind it: the inset reads as a figure of its own, not as calls of the lane
    # whose free room it takes
    back = hi[1] + 0.02 * (hi[2] - lo[2])
    px0, px1, pz0, pz1 = lo[0] - gap, hi[0] + gap, lo[2] - gap, hi[2] + gap
    before = np.full(1, -1.0, np.float32)  # shown from the first frame of a growth
    layers.append(InstanceLayer(PREFIX + "panel", np.array([[0.5 * (px0 + px1), back, 0.5 * (pz0 + pz1)]], np.float32),
                                np.array([[px1 - px0, 1e-3 * (px1 - px0), pz1 - pz0]], np.float32),
                                np.array([PANEL_RGB + (1.0,)], np.float32), np.zeros(1, np.int32), [PANEL_MATERIAL],
                                {"call_index": np.full(1, -1, np.int32), "t_start": before - 1.0, "t_end": before}))
    layers = [merged_boxes([x for x in layers if isinstance(x, InstanceLayer)], PREFIX + "boxes")] + \
        [x for x in layers if not isinstance(x, InstanceLayer)]
    # the caption over the inset
    zoom = float((plan.rect[2] - plan.rect[0]) / max((plan.t1 - plan.t0) / float(frame.us_per_px[lane]), 1e-9))
    from .annotate import x_unit_of

    times = x_unit_of(sel.trace).range_text(plan.t0 - sel.t0, plan.t1 - sel.t0)  # a merged trace: its measure
    room = (plan.rect[2] - plan.rect[0]) / tpx
    # a figure of several lanes: which lane (the inset may stand in another lane's free room)
    whose = f"detail of {sel.lane_names[lane]}" if sel.lane_threads.size > 1 else "detail"
    forms = [f"{whose}: {times}, {zoom:.0f}× wider", f"{whose}: {times}", times]
    text = next((t for t in forms if text_width(t) <= room), times)
    size = tpx * float(world_per_pixel(cam, np.array([[lo[0], lo[1], hi[2]]]), res)[0])
    width = text_width(text) * size
    centre = np.array([[lo[0] - gap + 0.5 * width, lo[1], hi[2] + gap + 0.55 * size]])
    anchor, rot = place_facing_text(centre, cam, np.array([size]), frame.to_cam)
    caption = LabelSet([text], anchor.astype(np.float32), np.array([size], np.float32), [CAPTION_MATERIAL],
                       np.ones(1, np.uint8), ["inset"], np.full(1, -1, np.int32), rot.astype(np.float32), ["world"])
    label_sets.append(caption)
    for s in label_sets:  # what the growth animation and picking tell the inset's names by
        s.attributes[INSET_ATTRIBUTE] = np.ones(len(s), np.int32)
    n_names = sum(int(names_calls(s).sum()) for s in label_sets)
    meta = {"caption": text, "t0": float(plan.t0), "t1": float(plan.t1), "lane": int(lane), "rect": [float(v) for v in plan.rect],
            "zoom": zoom, "scale": float(k), "offset": [float(v) for v in T], "names": n_names,
            # the inset's own time axis in the scene: x = x_origin + world_per_us · (t − t_offset),
            # t in µs from the figure's window start (the growth animation's clock)
            "world_per_us": float(fr.scale_t * k), "x_origin": float(T[0]), "t_offset": float(s_in.t0 - sel.t0)}
    from .camera import project

    line_px = np.zeros((0, 2))
    if lines.shape[0]:
        ends = project(cam, lines.reshape(-1, 3), res).reshape(-1, 2, 2)
        t = np.linspace(0.0, 1.0, 64)[None, :, None]
        line_px = (ends[:, :1] + t * (ends[:, 1:] - ends[:, :1])).reshape(-1, 2)
    return Inset(layers, label_sets, plan.rect, meta, line_px, named)


def time_range(a: float, b: float) -> str:
    """``a`` to ``b`` µs in the unit of ``b``, as the time axis writes its ticks: "0 – 43.4 ms",
    "6.94 – 7.28 ms", "1.03 – 1.11 s" (`annotate.fmt_time`'s units and digits)."""
    from .annotate import UNITS

    scale, unit = next(((sc, u) for sc, u in UNITS if abs(b) >= sc), UNITS[-1])
    first = "0" if abs(a) < 0.0005 * abs(b) else f"{a / scale:.3g}"
    return f"{first} – {b / scale:.3g} {unit}"


def mark_material():
    """``TV3D_inset_mark``: the frames and joining lines (`MARK_RGB`, unlit as text)."""
    from .spec import MaterialSpec

    return MaterialSpec(MARK_MATERIAL, MARK_RGB + (1.0,), kind="text", cushion=False, from_attribute=False)


def panel_material():
    """``TV3D_inset_panel``: the light panel behind the inset (`PANEL_RGB`, unlit as text)."""
    from .spec import MaterialSpec

    return MaterialSpec(PANEL_MATERIAL, PANEL_RGB + (1.0,), kind="text", cushion=False, from_attribute=False)


def detail_inset(st, frame, params, tpx: float, occupied: np.ndarray, cell: float, content_rect, names: LabelSet,
                 cl, figure_of) -> tuple:
    """(the icicle's detail inset (module docstring) or None, why a window asked for got
    none): planned (`plan_inset`), built (`build_inset`), and kept only when it names at
    least `MIN_NEW_NAMES` functions the figure does not (``auto``; a window asked for is
    kept whatever it names).  ``figure_of``: as in `build_inset`."""
    from ..naming import function_table

    from .callouts import text_cells

    plans = plan_inset(st, frame, params, tpx, occupied, cell, content_rect, names, cl)
    names_grid = text_cells(names, frame.cam, params.resolution, tpx, frame.to_cam, cell)
    plans.sort(key=lambda p: -p.expected)
    ft = function_table(st.sel.trace)
    shown = set(int(f) for f in named_functions(st.drawn, names).tolist())
    best, best_new = None, set()
    for plan in plans[:MAX_BUILT]:
        if len(best_new) >= ENOUGH_NEW_NAMES:  # another rectangle is tried only for a poor first inset
            break
        inset = build_inset(plan, st, frame, params, tpx, names_grid, cell, figure_of)
        if inset is None:
            continue
        new = inset.functions - shown
        if best is None or len(new) > len(best_new):
            best, best_new = inset, new
    asked = params.inset != "auto"
    if best is None or (not asked and len(best_new) < MIN_NEW_NAMES):
        why = None
        if asked:
            why = (f"no free room of {MIN_W_EM:g} × {MIN_H_EM:g} label sizes in the frame" if not plans else
                   "the window shows no calls")
        return None, why
    best.meta["new_functions"] = len(best_new)
    best.meta["named_functions"] = tuple(ft.display[f] for f in sorted(best_new))
    return best, None

