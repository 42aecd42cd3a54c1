"""Flows as arcs between the calls they bind, in front of the icicle's lanes (bpy-free):
the *relationships* of the execution-visualization survey (seed 003, Sec. 3.1) on the calls'
time axis.  `flow_arcs` bundles the flows whose two ends fall in the same pixel columns of the
same lanes into one arc, its width by how many it carries; the thread view's arcs
(`threads_flows`) take its bundling, tubes and materials.  Every arc carries ``tv3d_kind``
flow (`side_tracks.SIDE_KINDS`) and ``side_index`` (its first flow), so picking can report it.
"""
from __future__ import annotations

import numpy as np

from .side_tracks import INSTANT_RGB, SIDE_KINDS
from .spec import HALO_KEY, LabelSet, MaterialSpec, TubeLayer

FLOW_CELL_PX = 24.0  # flows whose two ends fall in the same columns of the same lanes are one arc
#: the icicle's arcs at most: bundles beyond this many and its columns widen (doubled, up to `FLOW_CELL_MAX_FRAC` of
#: the width) until they are not, then the largest are drawn (a page load's 7,000 flows between 12 of
#: Chrome's threads made 600 arcs at 24 px, a tangle over the lanes that hid them)
MAX_ICICLE_FLOW_ARCS = 150
FLOW_CELL_MAX_FRAC = 0.2
#: the icicle's arcs cover at most this share of the lanes in any band of `INK_BAND_PX` columns
#: (`_within_ink`: the largest bundles first; at least `MIN_ICICLE_FLOW_ARCS`): a page load's flows
#: between threads run across 20 lanes, and 150 of them crossed out the names of its first second
#: (Chromium)
FLOW_INK_FRAC = 0.12
INK_BAND_PX = 64.0
MAX_INK_PX = 65536.0  # image coordinates beyond this are clipped (`ink_selection`)
MIN_ICICLE_FLOW_ARCS = 12
FLOW_SAMPLES = 16
FLOW_ALPHA = 0.55  # translucent: the names under a curtain of arcs still read
FLOW_RGB = (0.02, 0.05, 0.50)
#: flows of several categories: one colour each (linear, saturated, apart from the calls'
#: muted palette), the most frequent `len(FLOW_CAT_RGB)` categories; the rest `FLOW_OTHER_RGB`
FLOW_CAT_RGB = ((0.02, 0.05, 0.50), (0.55, 0.02, 0.20), (0.00, 0.28, 0.22), (0.60, 0.18, 0.00),
                (0.22, 0.02, 0.45), (0.28, 0.26, 0.00))
FLOW_OTHER_RGB = (0.20, 0.20, 0.22)
#: `labels_over_arcs`: an arc's centre line is tested at this many points per sample interval
#: (its 16 samples lie up to 30 px apart on a long arc: a name is 12 px tall)
ARC_TEST_STEPS = 8
#: `labels_over_arcs`: the gap between the nearest arc over a name, its halo and the name: an arc's
#: width, at least this share of the name's distance (thin arcs are a hundredth of a text size wide:
#: a gap that small is within the depth buffer's precision at that distance, and the name and its
#: halo fought, white letters with dark edges; 24-bit depth at 90 units with a 0.09 clip start: 0.006)
LABEL_DEPTH_GAP = 1e-3
#: the label attribute of `labels_over_arcs`' scale about the camera, in millionths (-1: not moved):
#: an animation whose camera moves puts such names back on their boxes (`blender.animate`)
ARC_SCALE_KEY = "arc_scale_ppm"
#: a name brought in front of arcs gets a light halo (`labels_over_arcs`): its glyphs' outlines moved
#: out by this share of its size, in `HALO_MATERIAL`, between it and the arcs (Workbench's dark
#: bands crossed dark letters with little contrast).  Half a pixel at the names' 16 px: at 0.06 (a
#: pixel) the halo swamped strokes a pixel wide, white letters with dark edges (a GPU check)
HALO_OFFSET = 0.03
HALO_MATERIAL = "TV3D_text_light"

def drawn_ancestor(tr, drawn_row: np.ndarray, calls: np.ndarray) -> np.ndarray:
    """The row of each call among the drawn calls, or of its nearest drawn ancestor (-1: none):
    `tracevis3d.kernels.drawn.nearest_drawn_rows`, each undrawn ancestor walked through once
    (a walk per level cost O(flows × depth): minutes for flows through a 10^5-deep tower)."""
    from ..kernels.drawn import nearest_drawn_rows

    return nearest_drawn_rows(tr.parent, np.asarray(drawn_row, np.int64).copy(), np.asarray(calls, np.int64))


def drawn_ancestor_by_levels(tr, drawn_row: np.ndarray, calls: np.ndarray) -> np.ndarray:
    """`drawn_ancestor` one vectorised step per level (the tests' twin of the kernel)."""
    cur = calls.astype(np.int64).copy()
    row = np.full(cur.size, -1, np.int64)
    todo = np.ones(cur.size, bool)
    while todo.any():
        r = drawn_row[cur[todo]]
        hit = r >= 0
        idx = np.flatnonzero(todo)
        row[idx[hit]] = r[hit]
        todo[idx[hit]] = False
        up = tr.parent[cur[idx[~hit]]]
        cur[idx[~hit]] = up
        todo[idx[~hit][up < 0]] = False
    return row


def unique_rows(key: np.ndarray) -> tuple:
    """(first, group, count) of the distinct rows of the int64 table ``key`` (n, k), as
    ``np.unique(key, axis=0, return_index=True, return_inverse=True, return_counts=True)``
    gives them (rows in lexicographic order, each one's first occurrence), from one stable
    `np.lexsort` of the columns instead of a sort of the rows as opaque records (several
    times slower: 9,450 flows of a PyTorch trace, 6 ms a figure)."""
    key = np.asarray(key, np.int64)
    n = key.shape[0]
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    order = np.lexsort(key.T[::-1])
    srt = key[order]
    new = np.ones(n, np.bool_)
    new[1:] = np.any(srt[1:] != srt[:-1], axis=1)
    starts = np.flatnonzero(new)
    group = np.empty(n, np.int64)
    group[order] = np.cumsum(new) - 1
    return order[starts].astype(np.int64), group, np.diff(np.append(starts, n)).astype(np.int64)


def coarsened_bundles(key_of, cell: float, widest: float, max_bundles: int) -> tuple:
    """(key, first, group, count, cell): the flows bundled by ``key_of(cell)`` (their lanes and
    the cells of ``cell`` width their ends fall in; `unique_rows`), the cells twice as wide
    while there are more than ``max_bundles`` bundles, up to ``widest``."""
    while True:
        key = np.asarray(key_of(cell)).astype(np.int64)
        first, group, count = unique_rows(key)
        if count.size <= max_bundles or cell >= widest:
            return key, first, group, count, cell
        cell = min(2.0 * cell, widest)


def flows_inside(tr, t0: float, t1: float, shown=None) -> np.ndarray:
    """Per flow: do both of its calls overlap [t0, t1] (the flows a figure of that window draws),
    and, with ``shown`` (bool per thread), are both on threads the figure shows."""
    f, g = tr.flow_from, tr.flow_to
    inside = (tr.start[f] <= t1) & (tr.end[f] >= t0) & (tr.start[g] <= t1) & (tr.end[g] >= t0)
    if shown is not None:
        inside &= shown[tr.thread[f]] & shown[tr.thread[g]]
    return inside


def flow_material(name: str, rgb) -> MaterialSpec:
    """A flow arcs' material: translucent (`FLOW_ALPHA`) and blended, so the names under a
    curtain of arcs still read."""
    return MaterialSpec(name, tuple(float(c) for c in rgb) + (FLOW_ALPHA,), kind="tube", cushion=False, gloss=0.3,
                        from_attribute=False, blended=True)


def flow_colours(tr, t0: float, t1: float, shown=None) -> np.ndarray:
    """The colour class of each flow category (`FLOW_CAT_RGB` index; `len(FLOW_CAT_RGB)`:
    the rest) when the flows in [t0, t1] (`flows_inside`, on the ``shown`` threads) have
    several categories, the most frequent first; None for one category (every arc `FLOW_RGB`)."""
    if tr.flow_from.size == 0 or len(tr.flow_cat_names) < 2:
        return None
    count = np.bincount(tr.flow_cat[flows_inside(tr, t0, t1, shown)], minlength=len(tr.flow_cat_names))
    if int((count > 0).sum()) < 2:
        return None
    order = np.argsort(-count, kind="stable")
    cls = np.full(len(tr.flow_cat_names), len(FLOW_CAT_RGB), np.int64)
    top = order[count[order] > 0][:len(FLOW_CAT_RGB)]
    cls[top] = np.arange(top.size)
    return cls


def flow_category_rows(tr, cls: np.ndarray, slot0: int) -> list:
    """Legend swatches of the flow categories (`flow_colours`), their slots from ``slot0`` on
    (`flow_materials` in that order), "other categories" last where some share its grey."""
    rows = []
    for k in range(len(FLOW_CAT_RGB)):
        cats = np.flatnonzero(cls == k)
        if cats.size:
            rows.append((tr.flow_cat_names[int(cats[0])] or "(no category)", slot0 + k, "swatch"))
    n_rest = int((cls == len(FLOW_CAT_RGB)).sum())
    if n_rest:
        rows.append((f"other categories ({n_rest})", slot0 + len(FLOW_CAT_RGB), "swatch"))
    return rows


def flow_materials() -> tuple:
    """(names, rgb) of the flows' category materials (`FLOW_CAT_RGB`, then `FLOW_OTHER_RGB`)."""
    rgb = np.array(FLOW_CAT_RGB + (FLOW_OTHER_RGB,), np.float32)
    return [f"TV3D_flow_c{k}" for k in range(rgb.shape[0])], rgb


def flow_arcs(sel, d, frame, params, t0: float, t1: float, colours, name_prefix: str = ""):
    """(tube layer or None, info) of the trace's flows between drawn calls.

    A flow leaves its source call at the call's start and reaches its target call's start,
    each at the middle of the call's box on its front face (a call that is not drawn is
    represented by its nearest drawn ancestor); flows whose two ends fall in the same
    `FLOW_CELL_PX` columns of the same lanes are bundled into one arc whose radius grows with
    the square root of their number, columns twice as wide while there are more than
    `MAX_ICICLE_FLOW_ARCS` bundles (at most `FLOW_CELL_MAX_FRAC` of the width); the largest
    `MAX_ICICLE_FLOW_ARCS` bundles are drawn, and of those as many as keep their ink within
    `FLOW_INK_FRAC` of the lanes where they run (`_within_ink`).  An arc
    is a quadratic Bézier bowed towards the camera by a quarter of its length, so arcs
    between neighbouring lanes stay clear of the boxes.  Flows of several categories
    (``colours``: `flow_colours` of the window, None for one colour) are bundled by
    category too, each arc in its category's colour."""
    tr = sel.trace
    nf = int(tr.flow_from.size)
    info = {"n_flows": nf, "n_flow_arcs": 0, "n_flows_drawn": 0}
    if nf == 0 or not params.show_flows:
        return None, info
    drawn_row = np.full(len(tr), -1, np.int64)
    drawn_row[d.idx] = np.arange(d.idx.size)
    fi = np.flatnonzero(flows_inside(tr, t0, t1))
    ra = drawn_ancestor(tr, drawn_row, tr.flow_from[fi])
    rb = drawn_ancestor(tr, drawn_row, tr.flow_to[fi])
    ok = (ra >= 0) & (rb >= 0) & (ra != rb)
    fi, ra, rb = fi[ok], ra[ok], rb[ok]
    if fi.size == 0:
        return None, info
    px = float(np.median(frame.px))
    xa = (np.clip(tr.start[tr.flow_from[fi]], t0, t1) - t0) * frame.scale_t
    xb = (np.clip(tr.start[tr.flow_to[fi]], t0, t1) - t0) * frame.scale_t
    za = d.bottom[ra] + d.height[ra] / 2
    zb = d.bottom[rb] + d.height[rb] / 2
    cell = FLOW_CELL_PX * px
    cls = colours
    f_cls = cls[tr.flow_cat[fi]] if cls is not None else np.zeros(fi.size, np.int64)
    widest = max(cell, FLOW_CELL_MAX_FRAC * float(params.time_length))
    key, first, group, count, cell = coarsened_bundles(
        lambda c: np.stack([d.lane[ra], np.floor(xa / c), d.lane[rb], np.floor(xb / c), f_cls], 1),
        cell, widest, MAX_ICICLE_FLOW_ARCS)
    m_all = count.size

    def mean(v):
        return np.bincount(group, v, m_all) / count

    ends = np.stack([mean(xa), mean(za), mean(xb), mean(zb)], 1)
    reach = first_reach(tr, fi, group, t0, t1, m_all)
    keep = np.argsort(-count, kind="stable")[:MAX_ICICLE_FLOW_ARCS]
    ends, cnt = ends[keep], count[keep]
    m = cnt.size
    p0 = np.stack([ends[:, 0], np.zeros(m), ends[:, 1]], 1)
    p2 = np.stack([ends[:, 2], np.zeros(m), ends[:, 3]], 1)
    length = np.linalg.norm(p2 - p0, axis=1)
    p1 = (p0 + p2) / 2
    p1[:, 1] -= 0.25 * length + 4 * px  # bowed towards the camera (the front is y < 0)
    p1[:, 2] += 0.1 * length
    inked = _within_ink(p0, p1, p2, cnt, frame, px, key[first[keep]][:, 2])
    keep, cnt, p0, p1, p2 = keep[inked], cnt[inked], p0[inked], p1[inked], p2[inked]
    rep = fi[first[keep]]
    info.update(n_flow_arcs=int(cnt.size), n_flows_drawn=int(cnt.sum()), flow_cell_px=round(float(cell / px), 9))
    reach = reach[keep]
    if cls is None:
        return flow_tubes(f"{name_prefix}flows", p0, p1, p2, cnt, rep, px, reach_us=reach), info
    names, rgb = flow_materials()
    k = f_cls[first[keep]]
    return flow_tubes(f"{name_prefix}flows", p0, p1, p2, cnt, rep, px, k, names, rgb[k], reach_us=reach), info


def _within_ink(p0, p1, p2, count, frame, px: float, reached) -> np.ndarray:
    """Which arcs (Bézier p0 → p1 → p2, largest first) are drawn: each in turn while its ink
    keeps every band of `INK_BAND_PX` columns it crosses within `FLOW_INK_FRAC` of the lanes'
    height there (an arc's ink: its length times its width, `flow_radius`, in pixels, per band
    by where its pieces run); the first `MIN_ICICLE_FLOW_ARCS` always.  Flows between threads
    run across the lanes within a few columns: 150 arcs over the first second of Chromium's
    page load crossed out every name there, while they covered 10 % of the whole picture.
    ``reached``: the lane each arc reaches (the largest into each is kept too, `ink_selection`)."""
    base = np.asarray(frame.z_base, np.float64)
    tall_px = float(np.max(base + np.asarray(frame.lane_heights, np.float64)) - np.min(base)) / px
    pts = bezier_points(p0, p1, p2)[:, :, [0, 2]] / px  # the picture's x and z, in pixels
    return ink_selection(pts, flow_radius(count), tall_px, reached=reached)


def ink_selection(pts_px, radius_px, tall_px: float, min_arcs: int | None = None,
                  frac: float = FLOW_INK_FRAC, reached=None) -> np.ndarray:
    """Indices of the arcs drawn, in order: each arc in turn (largest first) while its ink
    keeps every band of `INK_BAND_PX` image columns it crosses within ``frac`` (`FLOW_INK_FRAC`)
    of ``tall_px`` times the band's width; the first ``min_arcs`` (`MIN_ICICLE_FLOW_ARCS`)
    always.  ``pts_px``: (arcs, samples, 2) the arcs' centre lines in image pixels;
    ``radius_px``: their half widths; ``reached``: per arc the lane it reaches -- the first
    (largest) arc into every lane is kept too, so no lane that flows reach loses them all
    (PyTorch's launches into its small streams, beside the thousands into stream 7; one per
    pair of lanes was 60 more arcs across Chromium's 24 lanes).
    An arc's ink in a band: the length of its pieces whose middle falls in the band times its
    width."""
    min_arcs = MIN_ICICLE_FLOW_ARCS if min_arcs is None else int(min_arcs)
    m = int(pts_px.shape[0])
    if m <= min_arcs:
        return np.arange(m)
    must = np.zeros(m, np.bool_)
    must[:min_arcs] = True
    if reached is not None:
        must[np.unique(np.asarray(reached, np.int64), return_index=True)[1]] = True
    # a point projected from behind the camera (not finite, or far off the image) counts at
    # the image's edge: the bands stay as many as the image has columns
    pts_px = np.clip(np.nan_to_num(np.asarray(pts_px, np.float64), nan=0.0, posinf=0.0, neginf=0.0),
                     -MAX_INK_PX, MAX_INK_PX)
    mid_x = 0.5 * (pts_px[:, 1:, 0] + pts_px[:, :-1, 0])
    ink = np.hypot(np.diff(pts_px[:, :, 0], axis=1), np.diff(pts_px[:, :, 1], axis=1)) * \
        2.0 * np.asarray(radius_px, np.float64)[:, None]
    band = np.floor(mid_x / INK_BAND_PX).astype(np.int64)
    band -= band.min()
    n_bands = int(band.max()) + 1
    cap = float(frac) * float(tall_px) * INK_BAND_PX
    used = np.zeros(n_bands)
    keep = []
    for k in range(m):  # at most MAX_ICICLE_FLOW_ARCS / MAX_THREAD_FLOW_ARCS
        add = np.bincount(band[k], ink[k], n_bands)
        if must[k] or np.all(used + add <= cap):
            used += add
            keep.append(k)
    return np.asarray(keep, np.int64)


def bezier_points(p0, p1, p2) -> np.ndarray:
    """(arcs, `FLOW_SAMPLES`, 3) points of the quadratic Béziers p0 → p1 → p2."""
    u = np.linspace(0.0, 1.0, FLOW_SAMPLES)
    a, bb, c = (1 - u) ** 2, 2 * u * (1 - u), u ** 2
    return a[None, :, None] * p0[:, None, :] + bb[None, :, None] * p1[:, None, :] + c[None, :, None] * p2[:, None, :]


def flow_radius(count) -> np.ndarray:
    """An arc's half width in pixels: 0.35 + 0.3 √(flows it carries), at most 3.5."""
    return np.minimum(0.35 + 0.3 * np.sqrt(np.asarray(count, np.float64)), 3.5)


def flow_tubes(name: str, p0, p1, p2, count, first_flow, px: float, material_index=None, materials=None,
               rgb=None, reach_us=None) -> TubeLayer:
    """The bundled flows as tubes: each a quadratic Bézier p0 → p1 → p2 (`FLOW_SAMPLES`
    points), as thick as √count (at most 3.5 px), carrying ``tv3d_kind`` flow, its first
    flow (``side_index``, picking), ``flows`` (how many it bundles) and, given, ``t_reach``
    (``reach_us``: when the first of its flows reaches its call, µs from the figure's start:
    a growth shows the arc from then on).  All in `FLOW_RGB` (material ``TV3D_flow``), or
    each tube in ``materials[material_index]`` with colour ``rgb`` (per tube)."""
    m = count.size
    centres = bezier_points(p0, p1, p2).astype(np.float32)
    r = (flow_radius(count) * px).astype(np.float32)
    half = np.repeat(r[:, None], FLOW_SAMPLES, 1).astype(np.float32)
    if materials is None:
        col = np.tile(np.array(FLOW_RGB + (1.0,), np.float32), (m, 1))
        material_index, materials = np.zeros(m, np.int32), ["TV3D_flow"]
    else:
        col = np.concatenate([np.asarray(rgb, np.float32).reshape(m, 3), np.ones((m, 1), np.float32)], 1)
    attrs = {"match_index": np.full(m, -1, np.int32), "tv3d_kind": np.full(m, SIDE_KINDS["flow"], np.int32),
             "side_index": first_flow.astype(np.int32), "flows": count.astype(np.int32)}
    if reach_us is not None:
        attrs["t_reach"] = np.asarray(reach_us, np.float32).reshape(m)  # (float32: a frame is far coarser)
    return TubeLayer(name, centres, half, half.copy(), col, np.asarray(material_index, np.int32), list(materials),
                     attrs, sides=4, face_colors=False, cross_section="normal")


def first_reach(tr, fi, group, t0: float, t1: float, n_groups: int) -> np.ndarray:
    """Per bundle (``group``: the bundle of each flow ``fi`` of ``tr``, of ``n_groups``), when
    the first of its flows reaches its call: the call's start, in [t0, t1], µs from t0."""
    out = np.full(n_groups, np.inf)
    np.minimum.at(out, group, np.clip(tr.start[tr.flow_to[fi]], t0, t1) - t0)
    return out


def side_materials() -> dict:
    return {**{n: flow_material(n, rgb) for n, rgb in zip(*flow_materials())},
            "TV3D_flow": flow_material("TV3D_flow", FLOW_RGB),
            "TV3D_instant": MaterialSpec("TV3D_instant", INSTANT_RGB + (1.0,), cushion=False)}


def flows_in_window(tr, t0: float, t1: float, shown=None) -> int:
    """Flows whose two calls overlap [t0, t1], on the ``shown`` threads (bool per thread) if
    given (what the legend announces before the arcs exist)."""
    return int(flows_inside(tr, t0, t1, shown).sum()) if tr.flow_from.size else 0


def labels_over_arcs(labels: LabelSet, tubes: TubeLayer, cam, resolution) -> tuple:
    """(labels, how many moved): the world labels that arcs of ``tubes`` cross on the
    picture brought in front of those arcs, their pixels unchanged, so an arc passes behind a
    name instead of crossing it out.  (EEVEE lights the translucent arcs into pale bands that
    hid the letters under them: "M mcpy Ht D" on a GPU render of the PyTorch profile.)

    A label's rectangle, in its own plane (its rotation): its advance width (`text.text_width`)
    times its size, from a quarter size under its baseline to 0.8 above, aligned as it is.  The arcs' centre lines are tested
    at `ARC_TEST_STEPS` points per sample interval, each a disc of its half width.  A crossed
    label is scaled about the camera by k = (d_arc - m) / d_far (a homothety centred at the
    camera maps every point along its own ray, so the picture keeps every pixel of it): d_arc
    the least depth of the arc points over it, m two gaps (a gap: an arc's width, at least
    `LABEL_DEPTH_GAP` of d_far), d_far the depth of its farthest corner; k is kept in the attribute `ARC_SCALE_KEY`.  Each moved name gets a
    halo (a label of kind "halo" after the others: the same words, `HALO_MATERIAL`, its glyphs
    thickened by `HALO_OFFSET`, `spec.HALO_KEY`) scaled to one gap behind it, so the arcs
    stop short of the letters in any engine.  Seen from elsewhere
    (a camera that moves, the viewport) a moved name stands that far in front of its box, so
    an animation whose camera moves puts it back.  An orthographic camera has no such scale
    (a move along the view would change nothing): its labels are left as they are."""
    from .camera import camera_basis, project, world_per_pixel
    from .text import text_width

    n = len(labels)
    if n == 0 or len(tubes) == 0 or cam.orthographic:
        return labels, 0
    cand = np.flatnonzero(np.asarray(labels.space) == "world")
    if cand.size == 0:
        return labels, 0
    loc = np.asarray(cam.location, np.float64)
    fwd = camera_basis(loc - np.asarray(cam.target, np.float64), cam.up)[2]  # the view direction
    c = np.asarray(tubes.centres, np.float64)
    u = np.linspace(0.0, 1.0, ARC_TEST_STEPS, endpoint=False)[None, None, :, None]
    dense = (c[:, :-1, None, :] * (1 - u) + c[:, 1:, None, :] * u).reshape(-1, 3)
    half = np.repeat(np.asarray(tubes.half_x, np.float64)[:, :-1], ARC_TEST_STEPS, axis=1).reshape(-1)
    pts_px = project(cam, dense, resolution)
    r_px = half / world_per_pixel(cam, dense, resolution)
    depth = (dense - loc) @ fwd - half  # the arc's near side
    a = np.asarray(labels.anchors, np.float64)[cand]
    size = np.asarray(labels.sizes, np.float64)[cand]
    width = np.array([text_width(labels.texts[i]) for i in cand]) * size
    left = a[:, 0] - np.asarray(labels.align, np.float64)[cand] / 2.0 * width
    ax_x, ax_y = _text_axes(np.asarray(labels.rotation, np.float64)[cand])
    base = a + (left - a[:, 0])[:, None] * ax_x
    corners = np.stack([base + (dx * width)[:, None] * ax_x + (dz * size)[:, None] * ax_y
                        for dx in (0.0, 1.0) for dz in (-0.25, 0.8)], 1)  # (labels, 4, 3)
    cpx = project(cam, corners.reshape(-1, 3), resolution).reshape(-1, 4, 2)
    lo, hi = cpx.min(axis=1), cpx.max(axis=1)
    far = ((corners - loc) @ fwd).max(axis=1)
    anchors = np.asarray(labels.anchors, np.float32).copy()
    sizes = np.asarray(labels.sizes, np.float32).copy()
    scale = np.asarray(labels.attributes.get(ARC_SCALE_KEY, np.full(n, -1)), np.int32).copy()
    moved = 0
    halos = []  # (label, anchor, size, scale ppm) of each moved name's halo
    ok = np.isfinite(pts_px).all(axis=1) & np.isfinite(depth)
    pts_px, r_px, depth, half = pts_px[ok], r_px[ok], depth[ok], half[ok]
    for j, i in enumerate(cand):
        hit = ((pts_px[:, 0] + r_px >= lo[j, 0]) & (pts_px[:, 0] - r_px <= hi[j, 0])
               & (pts_px[:, 1] + r_px >= lo[j, 1]) & (pts_px[:, 1] - r_px <= hi[j, 1]))
        if not hit.any():
            continue
        gap = max(2.0 * float(half[hit].max()), LABEL_DEPTH_GAP * float(far[j]))
        near = float(depth[hit].min()) - 2.0 * gap  # the name's farthest corner; its halo's: one gap behind
        if near >= far[j] or not far[j] > 0.0:
            continue  # already in front (or behind the camera: not on the picture)
        k = near / far[j]
        if not k > 0.05:  # an arc nearly at the camera: leave the name where it is
            continue
        anchors[i] = loc + k * (a[j] - loc)
        sizes[i] = k * size[j]
        scale[i] = int(round(k * 1e6))
        k_halo = (near + gap) / far[j]  # halfway back to the arcs
        halos.append((i, loc + k_halo * (a[j] - loc), k_halo * size[j], int(round(k_halo * 1e6))))
        moved += 1
    if not moved:
        return labels, 0
    attributes = dict(labels.attributes)
    attributes[ARC_SCALE_KEY] = scale
    out = LabelSet(list(labels.texts), anchors, sizes, list(labels.material), labels.align, list(labels.kind),
                   labels.call_index, labels.rotation, list(labels.space), attributes)
    hi_ = np.array([h[0] for h in halos], np.int64)
    m = hi_.size
    halo_attrs = {key: np.full(m, -1, np.int32) for key in attributes}
    halo_attrs[ARC_SCALE_KEY] = np.array([h[3] for h in halos], np.int32)
    halo_attrs[HALO_KEY] = np.full(m, int(round(HALO_OFFSET * 1e6)), np.int32)
    halo_set = LabelSet([labels.texts[i] for i in hi_], np.array([h[1] for h in halos], np.float32),
                        np.array([h[2] for h in halos], np.float32), [HALO_MATERIAL] * m,
                        np.asarray(labels.align)[hi_], ["halo"] * m, np.asarray(labels.call_index)[hi_],
                        np.asarray(labels.rotation)[hi_], ["world"] * m, halo_attrs)
    return LabelSet.concat([out, halo_set]), moved


def _text_axes(euler_xyz: np.ndarray) -> tuple:
    """The world directions of a text's x (along the line) and y (up its letters) axes, per
    label, from Blender's XYZ Euler rotation (R = Rz Ry Rx; columns 0 and 1)."""
    cx, cy, cz = (np.cos(euler_xyz[:, k]) for k in range(3))
    sx, sy, sz = (np.sin(euler_xyz[:, k]) for k in range(3))
    ax_x = np.stack([cz * cy, sz * cy, -sy], 1)
    ax_y = np.stack([cz * sy * sx - sz * cx, sz * sy * sx + cz * cx, cy * sx], 1)
    return ax_x, ax_y
