"""The thread view: who waits on whom (SyncTrace IV-B in 3D), Trace → SceneSpec (bpy-free).

    analysis (`Synchronisation`) → select → fold (each lane within its ring budget) → colour
    → HUD plan → the focused thread's icicle stages → frame (the icicle on top, a block for
    the ring under its time axis) → icicle geometry and labels → ring placement → clusters
    → ring bars → curves, circles, markers → ring labels, thread names → SceneSpec

As in SyncTrace (Fig. 1), the *main view* is on top and the *context view* below it, both
facing the camera in the figure's front plane:

- main view: the focused thread as the straight extruded icicle, built by the icicle's own
  stages (`layout.icicle`: fold, budget, colour by waiting and I/O, clusters, labels, time
  axis) and framed with the real camera, so its names are as large as the icicle's;
- context view: every shown thread is a bended icicle in its section of a semicircle
  (`layout.ring`), time running left to right along the arc, levels outward, placed by
  the shared fold stage so the ring shows the program's own calls; bars are extruded into
  the picture by their share of waiting and I/O; wide bars carry names along the arc;
- correspondence curves inside the semicircle (`layout.corr_curves`), wait markers on the
  releasing threads, compound curves for clusters;
- title and legend as a heads-up display (`layout.annotate`).
The three share the frame: the icicle takes the top of the content rectangle, the
semicircle (twice as wide as it is tall) the rest, the legend the column at the right.

Over 600 lines: the thread view's pipeline (ring, curves, labels, legend, composition); its
parameters live in `params.threads`, its flows in `threads_flows`.
"""
from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np

from ..kernels.drawn import clipped_widths
from ..kernels.raster import inside_polygon_banded, polygon_bands
from ..kernels.ring import lane_outline_radii
from ..model import KIND_RELEASE, KIND_WAIT, Trace
from . import palette
from .annotate import (MATERIAL_TEXT_COLOURS, TWO_COLUMN_FRAC, fmt_time, free_room_replan, hud_layers, incomplete_rows,
                       legend_box, legend_in_corner, legend_placement, legend_size, plan_hud, threads_shown_text,
                       trace_kind_text, window_text, x_unit_of)
from .budget import level_px
from .camera import euler_xyz, fit_camera_rect, project, view_direction, world_per_pixel
from .colour import hue_ring, colour_calls, legend_swatch_rows
from .cutaway import threads_cutaway
from . import threads_flows
from .flow_arcs import flows_in_window
from .corr_curves import (ANCHOR_INSET, CIRCLE_PX, MARKER_BAND, build_curves, circle_ribbons, object_colour_index,
                          shown_rows)
from .fold import fold_levels
from .geometry import cluster_calls, drawn_calls
from .labels import TEXT_DARK, TEXT_LIGHT, contrast_text_material, name_plate_material, text_px
from ..naming import function_table
from ..params.icicle import IcicleParams
from .ring import (ARC_SPAN, ARC_START, BAR_FILL, BASE_HEIGHT, RingPlacement, bar_heights, inner_radius, make_ring,
                   neighbour_distinct, polar, sector_angles)
from .lane_blocks import block_name, lane_name_runs, lane_names_by_run
from .select import select_calls
from .subpixel import CUT_PX, cut_subpixel, stalk_columns
from .spec import CurveLayer, InstanceLayer, LabelSet, LegendEntry, LightSpec, MaterialSpec, SceneSpec, SectorLayer
from .text import ASCENT, DESCENT, fit_text, name_candidates, text_width, thread_name_candidates
from .threads_params import ThreadsParams

LANE_BAND = (1.25, 0.85)  # thread colour band [Z - a, Z - b]: the curves start on it
CURVE_ALPHA, COMPOUND_ALPHA, MARKER_ALPHA, START_ALPHA = 0.55, 0.22, 0.28, 0.9
GREY = palette.srgb_to_linear([0.62, 0.62, 0.62])
#: the semicircle takes at most this share of the content height when the icicle is shown
RING_HEIGHT_SHARE = 0.68
#: thread names sit this many text sizes outside the ring
NAME_GAP_EM = 0.5
#: room beside the semicircle's ends for the end threads' names, at most (em of the text; a
#: longer name finds another place, `thread_name_labels`)
SIDE_NAME_EM = 9.0
#: a thread name whose place on the arc has |cos| of its angle above this stands beside the
#: arc (right-aligned on the left, left-aligned on the right), else centred above it
SIDE_ALIGN_COS = 0.5
#: a name with no room outside its bars is tried beside its section, at these shares of the
#: way from the ring's inside to its lane's deepest bar
SIDE_SPOT_DEPTHS = (0.8, 0.6, 0.95, 0.4)
#: rows under the base line for names with no room beside the arc, this many text sizes apart
UNDER_ROWS, UNDER_ROW_EM = 2, 1.3
#: thread names stand this share of the way from the ring to the camera (same place and size
#: in the image): in front of the flows' arcs, which bow towards the camera
NAME_LIFT = 0.3
#: free room around each thread name (text sizes), so no two names touch
NAME_PAD_EM = 0.2
#: each name's white plate stands this share of the camera distance behind the name
PLATE_BEHIND = 0.004
#: ring names: at most this many, on bars at least this many label sizes long
MAX_RING_LABELS = 80
#: the ring's bars are extruded into the picture this much of `ring.bar_heights` (seen from
#: the front, deep bars would hide their neighbours)
FRONT_DEPTH = 0.5
#: a semicircle limited by its height is widened into a half-ellipse at most this many times
#: as wide (`ring.RingPlacement.stretch`)
MAX_STRETCH = 1.8
#: passes that place the ring and lower its base onto the content's bottom (each pass grows
#: the ring into the room the last one found)
BASE_PASSES = 2


def resolve_thread(trace: Trace, t) -> int:
    """A thread index from a name or an index; ValueError naming the threads otherwise."""
    if isinstance(t, (int, np.integer)) and 0 <= int(t) < trace.n_threads:
        return int(t)
    if isinstance(t, str):
        if t in trace.thread_names:
            return trace.thread_names.index(t)
        if t.isdigit() and int(t) < trace.n_threads:
            return int(t)
    raise ValueError(f"no thread {t!r}; threads: {', '.join(trace.thread_names)}")


def shown_threads(trace: Trace, params: ThreadsParams) -> list:
    ts = [resolve_thread(trace, t) for t in params.threads] if params.threads else list(range(trace.n_threads))
    hidden = {resolve_thread(trace, t) for t in params.hide_threads}
    ts = [t for t in dict.fromkeys(ts) if t not in hidden]
    if not ts:
        raise ValueError("no thread left to show (every thread is hidden)")
    return ts


def default_focus(sync, threads: list, lane_of_thread=None) -> int:
    """The shown thread that waited longest on others; among equals (a trace without
    hand-offs: none waited) the one with the most calls, then the first.  With
    ``lane_of_thread`` (packed sections, `select.pack_lanes`), the section whose threads
    waited longest together (then have the most calls) is chosen, and its thread that
    waited longest."""
    n = sync.trace.n_threads
    waited = sync.pair_wait_us.sum(axis=1) if sync.pair_wait_us.size else np.zeros(n)
    calls = np.bincount(sync.trace.thread, minlength=n)
    if lane_of_thread is not None:
        lanes = np.asarray(lane_of_thread)[threads]
        lane_waited = np.bincount(lanes, weights=waited[threads], minlength=int(lanes.max()) + 1)
        lane_calls = np.bincount(lanes, weights=calls[threads], minlength=int(lanes.max()) + 1)
        best = max(dict.fromkeys(lanes.tolist()), key=lambda k: (lane_waited[k], lane_calls[k], -k))
        threads = [t for t, k in zip(threads, lanes.tolist()) if k == best]
    return max(threads, key=lambda t: (waited[t], calls[t], -threads.index(t)))


def lane_colours(n_lanes: int) -> np.ndarray:
    """(n_lanes, 3): categorical thread colours (no wait red), no two ring neighbours alike."""
    m = min(max(n_lanes, 3), 10)
    return hue_ring(m)[neighbour_distinct(n_lanes, m)]


def _materials(prefix: str, rgb: np.ndarray, alpha: float) -> tuple:
    names = [f"{prefix}{k:02d}" for k in range(len(rgb))]
    # translucent: blended (smooth in EEVEE, as the flows' tubes; dithered, a hand-off curve was
    # speckled at a preview's few samples)
    mats = {n: MaterialSpec(n, tuple(float(c) for c in col) + (float(alpha),), kind="tube", cushion=False,
                            blended=float(alpha) < 1.0) for n, col in zip(names, rgb)}
    return names, mats


def compact_materials(lay):
    """A sector/curve layer whose material list holds only the materials it uses (fewer
    materials to write: 43 threads give ~250 possible ones)."""
    if not isinstance(lay, (SectorLayer, CurveLayer)):
        return lay
    u, inv = np.unique(lay.material_index, return_inverse=True)
    lay.material_index = inv.astype(np.int32).reshape(-1)
    lay.materials = [lay.materials[k] for k in u.tolist()]
    return lay


def ring_bar_colours(tr, sel, params, lane_rgb):
    """(slot per shown call, slot rgb, cluster rgb, legend rows, title) for the ring bars."""
    idx = sel.idx
    if params.color_by == "thread":
        depth = tr.depth[idx]
        slot = (sel.lane * 2 + (depth % 2)).astype(np.int32)
        rgb = np.repeat(lane_rgb, 2, axis=0)
        rgb[1::2] = palette.lighten(lane_rgb, 0.25)
        return slot, rgb, palette.lighten(rgb, 0.5), [], "bars: thread colours"
    # colour by kind: the call areas, which only the categorical modes' legend order uses, are not needed
    col = colour_calls(tr, idx, SimpleNamespace(color_by="kind"), None, None, fmt_time)
    if params.highlight:
        from ..analysis.filters import function_mask
        from .colour import highlight_colouring

        col = highlight_colouring(col, function_mask(tr, params.highlight)[tr.func[idx]],
                                  "matching " + ", ".join(params.highlight))
    rows = legend_swatch_rows(col.legend)
    return col.slot, col.slot_rgb, col.cluster_rgb, rows, "bars: " + col.title


def _rgba(rgb, alpha):
    out = np.ones((len(rgb), 4), np.float32)
    out[:, :3] = rgb
    out[:, 3] = alpha
    return out


def _sector_layer(name, place: RingPlacement, angles, radii, heights, colors, material_index, materials, attributes):
    """A SectorLayer of local ring rows, placed upright in the front plane."""
    return SectorLayer(name, np.asarray(angles, np.float32), (np.asarray(radii) * place.scale).astype(np.float32),
                       (np.asarray(heights) * place.scale).astype(np.float32), colors, material_index, materials,
                       attributes, plane="front", origin=tuple(float(v) for v in place.origin),
                       stretch=float(place.stretch))


def ring_layers(sel, ring, place, sync, d, cl, px_units, slot_rgb, cluster_rgb, slot=None, stalks=None):
    """The ring bars (boxes of their own) and the lighter cluster bars, folded as in the
    icicle; with them, in the clusters' colours, the ``stalks`` (`subpixel.Stalks`) of
    what a cut dropped (``slot``: the colour slot of every shown call)."""
    tr = sel.trace
    s = np.flatnonzero(cl.single)
    orig = sel.original(d.idx[s])
    k = tr.kind[d.idx[s]]
    top = FRONT_DEPTH * bar_heights(sync.dur_w[orig], sync.dur_o[orig], tr.end[d.idx[s]] - tr.start[d.idx[s]],
                                    (k == 1) | (k == 3))
    Z = ring.zero_radius
    r0 = Z + d.level_bottom[s]
    r1 = r0 + BAR_FILL * d.level_height[s]
    a0, a1 = ring.angle(d.lane[s], d.start[s]), ring.angle(d.lane[s], d.end[s])
    a1 = np.maximum(a1, a0 + 0.6 * px_units / np.maximum(r1, 1e-9))
    names, _ = _materials("TV3D_ring_", slot_rgb, 1.0)
    bars = _sector_layer("ring", place, np.stack([a0, a1], 1), np.stack([r0, r1], 1),
                         np.stack([np.zeros_like(top), top], 1), _rgba(slot_rgb[d.slot[s]], 1.0),
                         d.slot[s].astype(np.int32), names,
                         {"call_index": d.call_id[s].astype(np.int32), "lane": d.lane[s].astype(np.int32)})
    nc = len(cl)
    cslot = d.slot[cl.dom] if nc else np.zeros(0, np.int32)
    cr0 = Z + d.level_bottom[cl.rep] if nc else np.zeros(0)
    cr1 = cr0 + BAR_FILL * d.level_height[cl.rep] if nc else np.zeros(0)
    c_lane, c_start, c_end = cl.lane, cl.start, cl.end
    c_ids = d.call_id[cl.rep].astype(np.int32) if nc else np.zeros(0, np.int32)
    c_count = cl.count.astype(np.int32)
    if stalks is not None and len(stalks):  # a column of what a cut dropped: from its stubs' top up
        c_lane, c_start, c_end = np.r_[c_lane, stalks.lane], np.r_[c_start, stalks.start], np.r_[c_end, stalks.end]
        cslot = np.r_[cslot, slot[stalks.rep]].astype(np.int32)
        cr0, cr1 = np.r_[cr0, Z + stalks.bottom], np.r_[cr1, Z + stalks.top]
        c_ids = np.r_[c_ids, sel.original(sel.idx[stalks.rep])].astype(np.int32)
        c_count = np.r_[c_count, stalks.n_calls].astype(np.int32)
        nc += len(stalks)
    ca0, ca1 = ring.angle(c_lane, c_start), ring.angle(c_lane, c_end)
    ca1 = np.maximum(ca1, ca0 + 0.6 * px_units / np.maximum(cr1, 1e-9))
    cnames, _ = _materials("TV3D_ringc_", cluster_rgb, 1.0)
    clus = _sector_layer("ring_clusters", place, np.stack([ca0, ca1], 1), np.stack([cr0, cr1], 1),
                         np.tile([[0.0, FRONT_DEPTH * BASE_HEIGHT]], (nc, 1)), _rgba(cluster_rgb[cslot], 1.0),
                         cslot.astype(np.int32), cnames, {"call_index": c_ids, "n_calls": c_count})
    mats = {**_materials("TV3D_ring_", slot_rgb, 1.0)[1], **_materials("TV3D_ringc_", cluster_rgb, 1.0)[1]}
    return [bars, clus], mats


HIGHLIGHT_RGB = np.array([palette.srgb_to_linear([0.85, 0.15, 0.12]), palette.srgb_to_linear([0.55, 0.35, 0.18])])


def highlight_classes(sync, cs, call: int) -> np.ndarray:
    """Object mode with a hovered wait (IV-B3): 0 red when a curve's wait acts on the same
    set of objects as ``call``, 1 brown when it shares at least one, 2 grey otherwise."""
    mine = set(sync.objects_of(call))
    out = np.full(len(cs.wait_call), 2, np.int32)
    for k, w in enumerate(cs.wait_call.tolist()):  # one set per distinct wait call
        theirs = set(sync.objects_of(w)) if w >= 0 else set()
        out[k] = 0 if theirs == mine and mine else (1 if theirs & mine else 2)
    return out


def curve_colours(sync, cs, params, lane_rgb):
    """Colour index per curve and the palette: waiter's lane colour, or object mode (with a
    highlighted wait: red / brown / grey)."""
    if params.color_by == "object" and params.highlight_wait is not None:
        return highlight_classes(sync, cs, int(params.highlight_wait)), np.vstack([HIGHLIGHT_RGB, GREY[None]])
    if params.color_by == "object":
        k = object_colour_index(sync, cs.object)
        m = int(k.max()) + 1 if k.size and k.max() >= 0 else 0
        rgb = np.vstack([hue_ring(max(m, 1))[:m], GREY[None]])
        return np.where(k >= 0, k, m).astype(np.int32), rgb
    return cs.waiter_lane.astype(np.int32), lane_rgb


def curve_layers(sync, cs, ring, place, params, lane_rgb, px_units):
    """Compound curves (beneath), single curves, release circles; wait markers + start shading."""
    ci, rgb = curve_colours(sync, cs, params, lane_rgb)
    layers, mats = [], {}
    for name, sel_rows, alpha in (("corr_compound", cs.compound, COMPOUND_ALPHA), ("corr", ~cs.compound, CURVE_ALPHA)):
        k = np.flatnonzero(sel_rows)
        col = palette.lighten(rgb, 0.35) if name == "corr_compound" else rgb
        names, m = _materials(f"TV3D_{name}_", col, alpha)
        mats.update(m)
        layers.append(CurveLayer(name, place.to_world(cs.left[k]).astype(np.float32),
                                 place.to_world(cs.right[k]).astype(np.float32), _rgba(col[ci[k]], alpha), ci[k], names,
                                 {"corr_index": cs.row[k], "wait_call": cs.wait_call[k],
                                  "release_call": cs.release_call[k], "n_corr": cs.n_corr[k], "object": cs.object[k]}))
    k = np.flatnonzero(~cs.compound)
    inner, outer = circle_ribbons(cs.release_xy[k], CIRCLE_PX[0] * px_units, CIRCLE_PX[1] * px_units, -0.14)
    for ribbon in (inner, outer):  # round dots on a stretched ring too
        ribbon[..., 0] = cs.release_xy[k, :1] + (ribbon[..., 0] - cs.release_xy[k, :1]) / place.stretch
    names, m = _materials("TV3D_release_", rgb, 0.95)
    mats.update(m)
    layers.append(CurveLayer("release_circles", place.to_world(inner).astype(np.float32),
                             place.to_world(outer).astype(np.float32), _rgba(rgb[ci[k]], 0.95), ci[k], names,
                             {"corr_index": cs.row[k], "release_call": cs.release_call[k]}))
    # wait markers on the releaser's section, start shading at their start
    Z = ring.zero_radius
    a = cs.marker_angles
    a1 = np.maximum(a[:, 1], a[:, 0] + 1.5 * px_units / Z) if a.size else a[:, 1]
    shade = np.minimum(a[:, 0] + np.maximum(0.12 * (a1 - a[:, 0]), 2.5 * px_units / Z), a1) if a.size else a[:, 0]
    n = a.shape[0]
    ang = np.concatenate([np.stack([a[:, 0], a1], 1), np.stack([a[:, 0], shade], 1)])
    rad = np.tile(np.array([[Z - MARKER_BAND[0], Z - MARKER_BAND[1]]]), (2 * n, 1))
    hgt = np.concatenate([np.tile([[0.0, 0.05]], (n, 1)), np.tile([[0.0, 0.07]], (n, 1))])
    mnames, m1 = _materials("TV3D_marker_", rgb, MARKER_ALPHA)
    snames, m2 = _materials("TV3D_markstart_", rgb, START_ALPHA)
    mats.update(m1)
    mats.update(m2)
    cols = np.concatenate([_rgba(rgb[ci], MARKER_ALPHA), _rgba(rgb[ci], START_ALPHA)])
    layers.append(_sector_layer("wait_markers", place, ang, rad, hgt, cols,
                                np.concatenate([ci, ci + len(rgb)]).astype(np.int32), mnames + snames,
                                {"corr_index": np.concatenate([cs.row, cs.row]).astype(np.int32),
                                 "start_shading": np.r_[np.zeros(n, np.int32), np.ones(n, np.int32)]}))
    return layers, mats


def lane_band_layer(ring, place, lane_rgb):
    """A band in each thread's colour just inside the ring, where its curves start (the
    thread's colour key of IV-B)."""
    n = ring.a0.size
    Z = ring.zero_radius
    names, mats = _materials("TV3D_lane_", lane_rgb, 1.0)
    return _sector_layer("lane_bands", place, np.stack([ring.a0, ring.a1], 1),
                         np.tile(np.array([[Z - LANE_BAND[0], Z - LANE_BAND[1]]]), (n, 1)),
                         np.tile(np.array([[0.0, 0.08]]), (n, 1)), _rgba(lane_rgb, 1.0),
                         np.arange(n, dtype=np.int32), names, {"lane": np.arange(n, dtype=np.int32)}), mats


def lane_text_materials(lane_rgb) -> dict:
    """Text materials in the thread colours, darkened for contrast on white."""
    dark = palette.darker(lane_rgb)
    return {f"TV3D_lane_text{k:02d}": MaterialSpec(f"TV3D_lane_text{k:02d}", tuple(float(c) for c in col) + (1.0,),
                                                   kind="text", cushion=False, from_attribute=False)
            for k, col in enumerate(dark)}


def _facing_rotation(baseline) -> np.ndarray:
    """Euler angles of texts in the front plane (normal towards the camera, -y) whose
    baseline runs along ``baseline`` (unit vectors in the x-z plane)."""
    b = np.asarray(baseline, np.float64).reshape(-1, 3)
    up = np.stack([-b[:, 2], np.zeros(len(b)), b[:, 0]], 1)
    n = np.cross(b, up)
    return np.array([euler_xyz(b[k], up[k], n[k]) for k in range(len(b))]).reshape(-1, 3)


def short_thread_names(sel, names: list) -> list:
    """Each lane's name without its process ("QueueFeederThread" for "MainProcess:
    QueueFeederThread") where no other lane's thread has that name, else its name (a
    packed lane, "8× worker", keeps its own)."""
    from collections import Counter

    tr = sel.trace
    own = [tr.thread_names[t] if t < len(tr.thread_names) and tr.thread_names[t] else names[k]
           for k, t in enumerate(np.asarray(sel.lane_threads)[:len(names)])]
    count = Counter(own)
    return [o if count[o] == 1 and names[k].endswith(o) else names[k] for k, o in enumerate(own)]


def thread_name_labels(sel, ring, place, size_world, focus_lane, cam, res, to_cam, px_world: float, outline,
                       keep_out=None, behind_px=None, lane_rgb=None, captions=None):
    """Each thread's name outside its section of the semicircle, placed without overlaps.

    Threads in order of importance (the focused one, then by calls); each takes the first
    free place of: its section's middle just outside its bars (centred above the arc, beside
    it near the two ends), up to two lines further out, the quarter points of its section,
    beside its section's two edges (`SIDE_SPOT_DEPTHS`); the same by the thread's own name
    (`short_thread_names`); either name past every bar of the ring along its section's
    direction; then `UNDER_ROWS` rows under the semicircle's base line where the image has room (left
    half: from the left end, right half: from the right end).  A place is free when its text box stays inside
    the image, off ``keep_out`` (pixel rectangles: the legend), off the ring's bars and off
    the names already placed.  A thread left without a place is named by its colour in the
    legend; only the `MAX_NAME_TRIES` first threads are tried (a trace of thousands of
    threads: no ring has room for more names, and each try costs).  The bars' outline is
    tested by bands of its edges (`kernels.raster.inside_polygon_banded`): 3,000 threads
    took 160 s testing every edge.  A name past every bar gets a leader, a thin line in its thread's colour
    (``lane_rgb``) from just outside its section's bars to just under it.
    Returns (labels, white plates or None, leaders or None): a name over any of ``behind_px`` (pixel
    points of what passes behind the names: the flows' arcs) gets a white plate just behind
    it, where those stop, so it stays readable.  ``outline``: the bars' outer radius per lane
    and angular bin (`lane_outline`: a name stands just outside the bars where it stands, not
    outside its lane's deepest call).  ``captions``: lane -> (name candidates, call index) of
    what the lane runs (`lane_captions`: a section too narrow for names on its bars), "runs
    <name>" in `CAPTION_EM` of its name's size, placed once every name is: under the name, over
    it, after it or before it, the first place free and clear of the flows' arcs."""
    from .labels import text_basis

    n = ring.a0.size
    sizes = np.full(n, size_world, np.float64)
    if 0 <= focus_lane < n:
        sizes[focus_lane] *= 1.2
    names, spots_of, shorter = _block_names(sel, focus_lane)
    gap = NAME_GAP_EM * size_world / place.scale
    outer = ring.zero_radius + np.asarray(ring.lane_levels, np.float64)
    bins = outline.shape[1]

    def outline_at(k, a):  # the bars' outer radius of lane k at angle a
        f = (a - ring.a0[k]) / max(ring.a1[k] - ring.a0[k], 1e-12)
        return outline[k, min(max(int(f * bins), 0), bins - 1)]

    ox, oy, band_y0, band_ptr, band_ids = _outline_px_bands(ring, place, outline, cam, res)
    W, H = res
    margin = 4.0
    boxes: list = [tuple(b) for b in (keep_out or [])]
    calls = np.bincount(np.asarray(sel.lane, np.int64), minlength=n)[:n] if len(sel.lane) else np.zeros(n)
    order = sorted(range(n), key=lambda k: (k != focus_lane, -calls[k], k))
    R = float(outer.max()) + gap

    def candidates(k):
        # just outside the bars where the name stands (its section's middle, then points
        # further from it), then outside the lane's deepest bar
        for base, spots in (((lambda a: outline_at(k, a)), NEAR_SPOTS), ((lambda a: outer[k]), (0.5, 0.25, 0.75))):
            for i, a in enumerate(ring.a0[k] + np.asarray(spots) * (ring.a1[k] - ring.a0[k])):
                c = np.cos(a)
                align = 2 if c < -SIDE_ALIGN_COS else 0 if c > SIDE_ALIGN_COS else 1
                for step in range(4) if i == 0 else range(1):  # the middle: up to three lines further out
                    r = base(a) + gap + step * 0.6 * sizes[k] / place.scale
                    yield polar(np.array([a]), r, 0.0)[0], align, (0.3 if align == 1 else -0.3), None
        # beside its section, at heights along its bars (a narrow section whose bars reach
        # the icicle above: the room beside it, over a shallower neighbour)
        for frac in SIDE_SPOT_DEPTHS:
            r = ring.zero_radius + frac * (outer[k] - ring.zero_radius)
            da = gap / max(r, 1e-9)
            for a in (ring.a0[k] - da, ring.a1[k] + da):
                for align in (0, 2):
                    yield polar(np.array([a]), r, 0.0)[0], align, 0.0, None

    def beyond(k):  # along its section's middle (then its quarter points), past every bar of the ring
        for i, f in enumerate((0.5, 0.25, 0.75)):
            a = ring.a0[k] + f * (ring.a1[k] - ring.a0[k])
            c = np.cos(a)
            align = 2 if c < -SIDE_ALIGN_COS else 0 if c > SIDE_ALIGN_COS else 1
            for step in range(4) if i == 0 else range(1):
                yield polar(np.array([a]), R + step * 0.6 * sizes[k] / place.scale, 0.0)[0], align, 0.0, a

    def under(k):  # rows under the semicircle's base line, from its nearer end
        left = 0.5 * (ring.a0[k] + ring.a1[k]) < 1.5 * np.pi  # its section's middle
        for row in range(UNDER_ROWS):
            y = gap + (row + 0.5) * UNDER_ROW_EM * sizes[k] / place.scale
            yield np.array([-R if left else R, y, 0.0]), 0 if left else 2, 0.0, None

    short = short_thread_names(sel, names)
    captions = captions or {}
    cap_x, cap_up, _ = text_basis(to_cam)
    cap_text, cap_world, cap_size, cap_align, cap_call = [], [], [], [], []

    def free(box) -> bool:  # inside the image, off the names and keep-outs, off the ring's bars
        if box[0] < margin or box[1] < margin or box[2] > W - margin or box[3] > H - margin:
            return False
        if any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in boxes):
            return False
        xs, ys = np.linspace(box[0], box[2], 7), np.linspace(box[1], box[3], 3)
        grid = np.stack(np.meshgrid(xs, ys), -1).reshape(-1, 2)
        return not inside_polygon_banded(np.ascontiguousarray(grid[:, 0]), np.ascontiguousarray(grid[:, 1]), ox, oy,
                                         band_y0, OUTLINE_BAND_PX, band_ptr, band_ids).any()

    def text_box(world, text, h_px, align):
        x, y = project(cam, world[None], res)[0, :2]
        w_px = text_width(text) * h_px
        x0 = x - (w_px if align == 2 else 0.5 * w_px if align == 1 else 0.0)
        half = (0.5 * (ASCENT + DESCENT) + NAME_PAD_EM) * h_px  # the text's middle is at the place
        return (x0 - NAME_PAD_EM * h_px, y - half, x0 + w_px + NAME_PAD_EM * h_px, y + half)

    def arcs_behind(box) -> bool:  # a name there gets a plate; a caption has none: it goes elsewhere
        if behind_px is None or not len(behind_px):
            return False
        return bool(((behind_px[:, 0] > box[0]) & (behind_px[:, 0] < box[2]) &
                     (behind_px[:, 1] > box[1]) & (behind_px[:, 1] < box[3])).any())

    def place_caption(k, world, align, name_box):  # under the name, over it, after it, before it
        cands, call = captions[k]
        size = CAPTION_EM * sizes[k]
        step = (0.5 * (ASCENT + DESCENT) * (sizes[k] + size) + 0.1 * sizes[k])
        x = project(cam, world[None], res)[0, 0]
        after = (name_box[2] - x) * px_world + 0.3 * size  # from the name's place to its box's ends
        before = (name_box[0] - x) * px_world - 0.3 * size
        for at, al, form in ((world - step * cap_up, align, "runs {}"), (world + step * cap_up, align, "runs {}"),
                             (world + after * cap_x, 0, "runs {}"), (world + before * cap_x, 2, "runs {} ·")):
            for text in (form.format(c) for c in cands):
                box = text_box(at, text, size / px_world, al)
                clear = CAPTION_CLEAR_EM * size / px_world  # apart from what it is not part of
                if free((box[0] - (clear if al != 0 else 0.0), box[1], box[2] + (clear if al != 2 else 0.0), box[3])) \
                        and not arcs_behind(box):
                    boxes.append(box)
                    cap_text.append(text)
                    cap_world.append(at)
                    cap_size.append(size)
                    cap_align.append(al)
                    cap_call.append(call)
                    return

    captioned: list = []  # (lane, its name's place, alignment): captions go after every name
    kept = np.zeros(n, bool)
    leaders: list = []  # (lane, angle, from radius, to radius)
    plated = np.zeros(n, bool)
    anchors = np.zeros((n, 3))
    aligns = np.ones(n, np.uint8)
    for k in [k for k in order if names[k]][:MAX_NAME_TRIES]:
        h_px = sizes[k] / px_world
        # the full name beside its section, then the thread's own name there (where the process
        # part is not needed to tell it apart), then either past every bar along its section's
        # direction, then the full name under the base line: a name there reads as the
        # nearest section's
        texts = [names[k]] + ([short[k]] if short[k] != names[k] else []) + ([shorter[k]] if k in shorter else [])
        spots = spots_of.get(k, [k])
        tries = ([(t, j, candidates(j)) for t in texts for j in spots]
                 + [(t, j, beyond(j)) for t in texts for j in spots] + [(names[k], k, under(k))])
        for text, at, local, align, lift, lead in ((t, j, *c) for t, j, cands in tries for c in cands):
            world = place.to_world(local[None])[0]
            world[2] += lift * sizes[k]
            box = text_box(world, text, h_px, align)
            if not free(box):
                continue
            boxes.append(box)
            kept[k], anchors[k], aligns[k] = True, world, align
            names[k] = text
            if lead is not None:  # from outside its section's bars to under the name
                leaders.append((k, lead, outline_at(at, lead) + 0.5 * gap,
                                float(np.hypot(local[0], local[1])) - 0.75 * sizes[k] / place.scale))
            plated[k] = arcs_behind(box)
            if k in captions:
                captioned.append((k, world, align, box))
            break
    for k, world, align, box in captioned:
        place_caption(k, world, align, box)
    idx = np.flatnonzero(kept)
    cap = _caption_labels(cap_text, cap_world, cap_size, cap_align, cap_call, cam, to_cam)
    lane_names, plates = _lane_names_and_plates(idx, names, anchors[idx], aligns[idx], sizes[idx], plated[idx], cam,
                                                to_cam)
    return LabelSet.concat([lane_names, cap]), plates, _name_leaders(leaders, place, px_world, ring.a0.size, lane_rgb)


def _block_names(sel, focus_lane: int):
    """The lanes' names with each block of one kind's lanes (`lane_name_runs`) named once, at its
    middle (`block_name`; the focused lane keeps its own).  Returns (names, a block's named lane ->
    the lanes beside which its name may stand, nearest first, ... -> its name without its lanes,
    where the whole does not fit)."""
    names = list(sel.lane_names)
    spots_of = {}
    shorter = {}
    for run in lane_name_runs(sel):
        a, b, plain = run
        rest = [k for k in range(a, b + 1) if k != focus_lane]  # (the top icicle's lane keeps its name)
        for k in rest:
            names[k] = ""
        mid = rest[len(rest) // 2]
        names[mid], shorter[mid] = block_name(run), plain
        spots_of[mid] = sorted(rest, key=lambda j: (abs(j - mid), j))
    return names, spots_of, shorter


def _outline_px_bands(ring, place, outline, cam, res):
    """The ring's outline in pixels (each angular bin's radius over its angles, in steps, as the
    bars), as x, y and its bands (`polygon_bands`) for `inside_polygon_banded`."""
    bins = outline.shape[1]
    edges = [np.linspace(ring.a0[k], ring.a1[k], bins + 1) for k in range(ring.a0.size)]
    steps = [polar(np.stack([e[:-1], e[1:]], 1).ravel(), np.repeat(outline[k], 2), 0.0) for k, e in enumerate(edges)]
    outline_px = project(cam, place.to_world(np.concatenate(steps + [np.zeros((1, 3))])), res)[:, :2]
    ox, oy = np.ascontiguousarray(outline_px[:, 0]), np.ascontiguousarray(outline_px[:, 1])
    return (ox, oy, *polygon_bands(ox, oy, OUTLINE_BAND_PX))


def _lane_names_and_plates(idx, names: list, anchors, aligns, size, plated, cam, to_cam):
    """The placed names of lanes ``idx`` (at ``anchors``, facing the camera) as a LabelSet, and a
    white plate just behind each ``plated`` one, as large as its box (arcs behind it stop there),
    or None; in a perspective view both are moved towards the camera (`NAME_LIFT`), keeping their
    place and size in the image."""
    from .labels import place_facing_text, text_basis

    anchor, rot = place_facing_text(anchors, cam, size, to_cam)
    width = np.array([text_width(names[k]) for k in idx]) * size
    shift = np.where(aligns == 2, -0.5, np.where(aligns == 0, 0.5, 0.0)) * width
    middle = anchors + shift[:, None] * text_basis(to_cam)[0][None]
    plate_size = np.stack([width + 2 * NAME_PAD_EM * size, np.full(idx.size, 1e-3) * size,
                           (ASCENT + DESCENT + 2 * NAME_PAD_EM) * size], 1)
    if not cam.orthographic:  # towards the camera: the same place and size in the image
        eye = np.asarray(cam.location, np.float64)
        anchor = eye + (anchor - eye) * (1.0 - NAME_LIFT)
        middle = eye + (middle - eye) * (1.0 - NAME_LIFT + PLATE_BEHIND)
        size = size * (1.0 - NAME_LIFT)
        plate_size = plate_size * (1.0 - NAME_LIFT + PLATE_BEHIND)
    else:
        middle = middle - np.asarray(to_cam, np.float64) / np.linalg.norm(to_cam) * 0.05 * size[:, None]
    on = plated
    n = int(on.sum())
    plates = InstanceLayer("lane_name_plates", middle[on].astype(np.float32), plate_size[on].astype(np.float32),
                           np.tile(np.array([1.0, 1.0, 1.0, 1.0], np.float32), (n, 1)), np.zeros(n, np.int32),
                           ["TV3D_name_plate"], {"call_index": np.full(n, -1, np.int32)}) if n else None
    lane_names = LabelSet([names[k] for k in idx], anchor.astype(np.float32), size.astype(np.float32),
                          [f"TV3D_lane_text{k:02d}" for k in idx], aligns, ["lane"] * idx.size,
                          np.full(idx.size, -1, np.int32), rot.astype(np.float32), ["world"] * idx.size)
    return lane_names, plates


#: a thread's caption (what it runs, `lane_captions`) in this share of its name's size
CAPTION_EM = 0.78
#: a caption's name is at most this many of its text sizes long
CAPTION_MAX_EM = 16.0
#: free room (text sizes) at a caption's far end, so that it does not run on into other text
CAPTION_CLEAR_EM = 1.5


def lane_captions(sel, d, ring_labels) -> dict:
    """lane -> (name candidates, call index) of what a lane runs (`thread_work.lane_lead_calls`),
    for the lanes whose bars do not name it (``ring_labels``: `ring_call_labels`' names): a
    narrow section of a pool's worker shows a stack of unnamed bars, or only its loop's
    ``…Thread.run``, and its caption says what the stack is."""
    from .thread_work import lane_lead_calls

    named = np.isin(d.call_id, np.asarray(ring_labels.call_index, np.int64)) if len(ring_labels) else \
        np.zeros(len(d.call_id), np.bool_)
    said = set(zip(d.lane[named].tolist(), d.func[named].tolist()))  # (lane, function) named on a bar
    ft = function_table(sel.trace)
    out = {}
    for lane, k in lane_lead_calls(sel.trace, d, np.unique(d.lane)).items():
        f = int(d.func[k])
        if (lane, f) in said or _words(ft.short[f]) <= _words(sel.lane_names[lane]):
            continue  # named on its bars, or by the lane's own name ('5× process_request_thread')
        qual = ft.qualname[f] if ft.qualname[f] and ft.qualname[f] != "<module>" else ft.display[f]
        forms = [qual] + [t for t in name_candidates(qual) if t != qual] + [ft.short[f]]  # no module: a caption
        cands = [t for t in dict.fromkeys(forms) if t and text_width(t) <= CAPTION_MAX_EM]
        if cands:
            out[lane] = (cands, int(d.call_id[k]))
    return out


def _words(text) -> set:
    """The words of a name, lower case, numbers left out ('PyTorch Profiler (0)' → {'pytorch',
    'profiler'})."""
    return {w for w in re.findall(r"\w+", str(text).lower()) if not w.isdigit()}


def _caption_labels(texts, world, size, align, call, cam, to_cam) -> LabelSet:
    """The captions placed by `thread_name_labels` (world points of their middles), facing the
    camera and lifted towards it as the names are."""
    from .labels import place_facing_text

    if not texts:
        return LabelSet.empty()
    size = np.asarray(size, np.float64)
    anchor, rot = place_facing_text(np.asarray(world, np.float64), cam, size, to_cam)
    if not cam.orthographic:
        eye = np.asarray(cam.location, np.float64)
        anchor = eye + (anchor - eye) * (1.0 - NAME_LIFT)
        size = size * (1.0 - NAME_LIFT)
    n = len(texts)
    return LabelSet(list(texts), anchor.astype(np.float32), size.astype(np.float32), ["TV3D_text_muted"] * n,
                    np.asarray(align, np.uint8), ["call"] * n, np.asarray(call, np.int32), rot.astype(np.float32),
                    ["world"] * n)


#: threads whose names `thread_name_labels` tries to place (by importance), and the bands
#: (pixels) of the ring's outline it tests a name's box against
MAX_NAME_TRIES = 80
OUTLINE_BAND_PX = 16.0
#: a name's leader: its width in pixels, and how far in front of the ring's plane it lies (local units)
LEADER_PX = 1.6
LEADER_FRONT = -0.12


def _name_leaders(leaders, place, px_world: float, n_lanes: int, lane_rgb):
    """One straight ribbon per leader (lane, angle, from radius, to radius), `LEADER_PX` wide,
    in the lane's text colour (`lane_text_materials`); None without leaders."""
    leaders = [ld for ld in leaders if ld[3] > ld[2]]
    if not leaders:
        return None
    lane = np.array([ld[0] for ld in leaders], np.int32)
    a = np.array([ld[1] for ld in leaders])
    r = np.array([[ld[2], ld[3]] for ld in leaders])
    a2 = np.repeat(a[:, None], 2, axis=1)
    centre = polar(a2, r, LEADER_FRONT)  # (m, 2, 3): from, to
    half = 0.5 * LEADER_PX * px_world / place.scale
    across = polar(a2 + 0.5 * np.pi, half, 0.0)
    rgb = palette.darker(np.asarray(lane_rgb, np.float64)) if lane_rgb is not None else np.full((n_lanes, 3), 0.3)
    col = np.ones((lane.size, 4), np.float32)
    col[:, :3] = rgb[lane]
    return CurveLayer("lane_name_leaders", place.to_world(centre - across).astype(np.float32),
                      place.to_world(centre + across).astype(np.float32), col, lane,
                      [f"TV3D_lane_text{k:02d}" for k in range(n_lanes)], {"lane": lane.copy()})


def _arc_text_room(ring, place, r_in, r_out, a0, a1, px_world: float, tpx: float) -> np.ndarray:
    """Pixels a straight name along the arc's tangent may take on a band from ``r_in`` to
    ``r_out`` over angles ``a0..a1``: it stays inside the band while its outer corners do,
    (ℓ/2)² + (r_mid + h/2)² ≤ r_out², and inside the angles (the chord at r_mid)."""
    r_mid = 0.5 * (r_in + r_out)
    half_h = 0.5 * tpx * (ASCENT + DESCENT) * 1.08 * px_world / place.scale
    in_band = 2.0 * np.sqrt(np.maximum(r_out ** 2 - (r_mid + half_h) ** 2, 0.0))
    chord = 2.0 * r_mid * np.sin(0.5 * np.minimum(a1 - a0, np.pi))
    return np.minimum(in_band, chord) * place.scale / px_world


def ring_call_labels(sel, ring, place, d, cl, slot_rgb, px_world, tpx, max_labels: int, fold=None) -> tuple:
    """Names along the arc on the ring's bars that can hold one: the text's baseline follows
    the arc's tangent at the bar's middle, its length at most the chord at the bar's middle
    radius less padding, its height within the bar's radial width; widest bars first.
    Bars do not overlap, so neither do their names.  Then the row of a lane's roots where
    none of them was named (``fold``'s lane rows, the icicle's rule `labels.named_lane_rows`:
    an asyncio task's hundreds of resumptions, "212× worker"), over the row's angles.
    A row's name stands over gaps and merged bars as much as over its own bars, so it sits
    on a plate of its function's colour (the icicle's `labels.LabelPlacer.plate_layer`): a
    thin sector in front of the bars, the text's length and padding along the arc.
    Returns (labels, the plates' SectorLayer or None)."""
    from .labels import PAD, PLATE_DEPTH, lane_row_candidates, named_lane_rows

    if max_labels <= 0:
        return LabelSet.empty(), None
    s = np.flatnonzero(cl.single)
    Z = ring.zero_radius
    need_h = tpx * (ASCENT + DESCENT) * 1.08
    r_in = Z + d.level_bottom[s]
    r_out = r_in + BAR_FILL * d.level_height[s]
    a0, a1 = ring.angle(d.lane[s], d.start[s]), ring.angle(d.lane[s], d.end[s])
    thick_px = BAR_FILL * d.level_height * place.scale / px_world  # every drawn bar's radial width
    chord_px = _arc_text_room(ring, place, r_in, r_out, a0, a1, px_world, tpx)
    ok = np.flatnonzero((thick_px[s] >= need_h) & (chord_px >= tpx * 3.0) & ~d.folded[s])
    ok = ok[np.argsort(-chord_px[ok], kind="stable")]
    ft = function_table(sel.trace)
    texts, at, kinds, amid, rmid = [], [], [], [], []
    for k in ok.tolist():
        t = fit_text(name_candidates(ft.display[int(d.func[s[k]])]), chord_px[k] / tpx - 0.5)
        if t:
            texts.append(t)
            at.append(int(s[k]))
            kinds.append("call")
            amid.append(0.5 * (a0[k] + a1[k]))
            rmid.append(0.5 * (r_in[k] + r_out[k]))
            if len(texts) >= max_labels:
                break
    if fold is not None and getattr(fold, "lane_rows", None) is not None and len(texts) < max_labels:
        _, l_start, l_end, _, _, _, _, l_first = fold.lane_rows
        lr = named_lane_rows(fold)
        local_of_shown = np.full(sel.idx.size, -1, np.int64)
        local_of_shown[d.local] = np.arange(d.local.size)
        lh = local_of_shown[l_first[lr]]
        lr, lh = lr[lh >= 0], lh[lh >= 0]
        named = np.asarray(at, np.int64)
        for lane, h in zip(lr.tolist(), lh.tolist()):
            same_row = (d.lane[named] == d.lane[h]) & (d.level_id[named] == d.level_id[h]) if named.size else []
            if np.any(same_row):
                continue  # a root of the lane is named on its own
            ri = Z + d.level_bottom[h]
            ro = ri + BAR_FILL * d.level_height[h]
            ra0 = ring.angle(np.array([d.lane[h]]), np.array([max(l_start[lane], ring.t0)]))[0]
            ra1 = ring.angle(np.array([d.lane[h]]), np.array([min(l_end[lane], ring.t1)]))[0]
            room = float(_arc_text_room(ring, place, ri, ro, ra0, ra1, px_world, tpx))
            if thick_px[h] < need_h or room < 3.0 * tpx:
                continue
            t = fit_text(lane_row_candidates(fold, lane, ft), room / tpx - 0.5)
            if t:
                texts.append(t)
                at.append(int(h))
                kinds.append("row")
                amid.append(0.5 * (ra0 + ra1))
                rmid.append(0.5 * (ri + ro))
                if len(texts) >= max_labels:
                    break
    if not texts:
        return LabelSet.empty(), None
    sk = np.asarray(at, np.int64)
    am = np.asarray(amid)
    size = tpx * px_world
    plate_h = PLATE_DEPTH * size / place.scale  # local depth of a plate
    centre_local = polar(am, np.asarray(rmid), -max(0.05, 2.0 * plate_h))
    # baseline along the tangent, reading left to right (world x grows)
    tangent_local = np.stack([-np.sin(am), np.cos(am), np.zeros_like(am)], 1)
    base = place.direction(tangent_local)
    stretch_of = np.linalg.norm(base, axis=1)  # world length of a local unit along the arc, over scale
    plated = np.flatnonzero(np.asarray(kinds) == "row")
    plates = None
    if plated.size:
        rm = np.asarray(rmid)[plated]
        half_w = np.asarray([0.5 * text_width(texts[k]) + PAD for k in plated.tolist()]) * size
        half_a = half_w / (place.scale * stretch_of[plated] * np.maximum(rm, 1e-9))
        rk = sk[plated]
        ri = Z + d.level_bottom[rk]
        slot = d.slot[rk].astype(np.int32)
        names, _ = _materials("TV3D_ring_", slot_rgb, 1.0)
        plates = _sector_layer("ring_label_plates", place, np.stack([am[plated] - half_a, am[plated] + half_a], 1),
                               np.stack([ri, ri + BAR_FILL * d.level_height[rk]], 1),
                               np.tile([[-plate_h, 0.0]], (plated.size, 1)), _rgba(slot_rgb[slot], 1.0), slot, names,
                               {"call_index": d.call_id[rk].astype(np.int32)})
    base /= stretch_of[:, None]
    base *= np.where(base[:, :1] < 0, -1.0, 1.0)
    up = np.stack([-base[:, 2], np.zeros(len(base)), base[:, 0]], 1)
    centre = place.to_world(centre_local)
    centre[:, 1] -= 0.02 * size
    anchor = centre - up * ((ASCENT - DESCENT) / 2.0 * size)
    n = sk.size
    return LabelSet(texts, anchor.astype(np.float32), np.full(n, size, np.float32),
                    contrast_text_material(slot_rgb[d.slot[sk]]), np.ones(n, np.uint8), kinds,
                    d.call_id[sk].astype(np.int32), _facing_rotation(base).astype(np.float32), ["world"] * n), plates


def object_legend(sync, sel, lane_of_thread):
    """Legend rows (name, colour index, "swatch") of the objects of the shown hand-offs in
    object mode, most waited first (at most 6; grey ones left out)."""
    objs = np.unique(sync.object[shown_rows(sync, sel, lane_of_thread)])
    k = object_colour_index(sync, objs)
    keep = np.argsort(k[k >= 0])[:6]
    objs, k = objs[k >= 0][keep], k[k >= 0][keep]
    return [(sync.object_names[o], int(c), "swatch") for o, c in zip(objs.tolist(), k.tolist())]


def legend_rows(params, bar_rows, bar_title, sel, object_rows, focus_name, has_compound, waits: bool = True,
                top_from: str = ""):
    """The thread view's legend; ``waits``: the view has hand-offs (without, the threads'
    colours are those of the arcs into them, and the curves' notes are left out);
    ``top_from``: where the top icicle's time axis starts, when not at the trace's start."""
    rows = [(bar_title, -1, "heading")] + bar_rows
    rows.append(("depth: share of time waiting or in I/O", -1, "note"))
    if waits and params.color_by == "object":
        rows.append(("curves: colour of the object", -1, "heading"))
        rows += [(name, 2000 + c, "swatch") for name, c, _ in object_rows]
        rows.append(("grey: an object only one thread waited on", -1, "note"))
    else:
        rows.append(("curves: the waiting thread" if waits else "threads", -1, "heading"))
        names, runs = lane_names_by_run(sel)  # a block of one kind's lanes: one row, its first lane's colour
        cands = [thread_name_candidates(name) if name else () for name in names]
        for run in runs:
            cands[run[0]] = (block_name(run), run[2])  # without its lanes where the whole does not fit
        rows += [(c, 1000 + k, "swatch") for k, c in enumerate(cands) if c][:10]
    if waits:
        rows.append(("wide end: the wait; dot: the release", -1, "note"))
        rows.append(("band inside the arc: the wait, on the releaser", -1, "note"))
        if has_compound:
            rows.append(("pale fans: waits of merged tiny calls", -1, "note"))
    if params.show_icicle and focus_name:
        rows.append((f"top: {focus_name} as a straight icicle" + (f", its 0 at {top_from} into the trace"
                                                                    if top_from else ""), -1, "note"))
    return rows


#: the title says the span shown when it leaves out more than this share of the trace, and the
#: top icicle's note where its axis starts when that is past this share of it
SPAN_NOTE_SHARE = 0.05


def concurrent_window(trace: Trace, threads) -> tuple | None:
    """The span in which at least two of ``threads`` are active (from the first moment two
    run at once to the last), each thread active from its first call's start to its last
    call's end; None when they never overlap.  "Who waits on whom" happens there: a
    program that imports for half a second before it starts its pool does not give its
    ring half a turn of a single thread."""
    rng = trace.thread_ranges()
    spans = [(float(trace.start[a:b].min()), float(trace.end[a:b].max())) for t in threads
             for a, b in [rng[int(t)]] if b > a]
    if len(spans) < 2:
        return None
    ev = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans], key=lambda x: (x[0], -x[1]))
    active, t_a, t_b = 0, None, None
    for t, step in ev:
        if step > 0 and active + 1 == 2 and t_a is None:
            t_a = t
        if step < 0 and active == 2:
            t_b = t
        active += step
    if t_a is None or t_b is None or not t_b > t_a:
        return None
    return (t_a, t_b)


def ring_params(params: ThreadsParams, threads, window=None) -> IcicleParams:
    """The shared stages' parameters of the ring (select, fold, filters); without the
    automatic rule (nothing to squeeze) levels past ``max_levels`` are left out."""
    from ..params.kinds import parse_fold

    cap = None if parse_fold(params.fold)[0] == "auto" else params.max_levels - 1
    return IcicleParams(threads=threads, thread_order=threads if params.threads else "default",
                        time_window=window, fold=params.fold, max_depth=cap, hide=list(params.hide),
                        hide_modules=list(params.hide_modules), resolution=params.resolution,
                        label_px=params.label_px, pack_threads=params.pack_threads).validate()


def wall_params(params: ThreadsParams, focus, t0: float, t1: float) -> IcicleParams:
    """The focused thread's icicle: the icicle's stages and defaults, coloured by waiting and I/O
    (``focus``: a thread, or the threads of a packed section, drawn as one lane)."""
    threads = [int(t) for t in focus] if isinstance(focus, (list, tuple, np.ndarray)) else [int(focus)]
    return IcicleParams(threads=threads, time_window=(t0, t1), color_by="kind", fold=params.fold,
                        hide=list(params.hide), hide_modules=list(params.hide_modules),
                        highlight=list(params.highlight),
                        resolution=params.resolution, show_title=False, show_legend=False, show_axes=True,
                        label_px=params.label_px, azimuth=params.azimuth, elevation=params.elevation,
                        lens_mm=params.lens_mm, show_labels=params.show_labels,
                        max_callouts=params.max_callouts, inset="none",
                        critical_path=params.critical_path).validate()


def wall_span(sel, focus_lane: int) -> tuple:
    """The time the focused section's icicle shows: the window, less what lies before its
    first call and after its last (a request thread that ran for a tenth of the window
    fills the wall's width, not a tenth of it); the ring keeps the whole window."""
    on = sel.lane == focus_lane
    if not on.any():
        return sel.t0, sel.t1
    calls = sel.idx[on]
    t0 = max(sel.t0, float(sel.trace.start[calls].min()))
    t1 = min(sel.t1, float(sel.trace.end[calls].max()))
    return (t0, t1) if t1 > t0 else (sel.t0, sel.t1)


def ring_extent(ring, outline) -> tuple:
    """(height, left, right) of the drawn semicircle in ring units, measured from its
    centre, from the bars' ``outline`` (`lane_outline`): the largest ``r · |sin a|``
    (height), ``−r · cos a`` (left) and ``r · cos a`` (right) over every bin (r its radius, a
    over its angles), at least the zero circle, so a deep call reaches high only where it
    stands."""
    Z = float(ring.zero_radius)
    n = ring.a0.size
    if not n:
        return Z, Z, Z
    bins = outline.shape[1]
    f = np.linspace(0.0, 1.0, bins + 1)
    edges = ring.a0[:, None] + f[None, :] * (ring.a1 - ring.a0)[:, None]  # (lanes, bins + 1)
    lo, hi = edges[:, :-1], edges[:, 1:]
    # on [π, 2π]: |sin| peaks at 3π/2, −cos falls and cos rises with the angle
    top = np.where((lo <= 1.5 * np.pi) & (hi >= 1.5 * np.pi), 1.0, np.maximum(np.abs(np.sin(lo)), np.abs(np.sin(hi))))
    up, left, right = (outline * top).max(), (-outline * np.cos(lo)).max(), (outline * np.cos(hi)).max()
    return max(float(up), Z), max(float(left), Z), max(float(right), Z)


#: where along its section (fractions) a thread's name is tried just outside the bars
NEAR_SPOTS = (0.5, 0.25, 0.75, 0.375, 0.625, 0.125, 0.875)
#: angular bins per lane of the drawn outline (`lane_outline`)
OUTLINE_BINS = 48


def lane_outline(ring, d, bins: int = OUTLINE_BINS, stalks=None) -> np.ndarray:
    """(n_lanes, bins) outer radius of each lane's drawn bars ``d`` (and ``stalks``,
    `subpixel.Stalks`) over ``bins`` equal angular bins of its section, the zero circle
    where none stands (`kernels.ring.lane_outline_radii`)."""
    if d is None or not d.lane.size:
        return np.full((ring.a0.size, bins), float(ring.zero_radius))
    lane, start, end, bottom, height = d.lane, d.start, d.end, d.level_bottom, d.level_height
    if stalks is not None and len(stalks):
        lane, start, end = np.r_[lane, stalks.lane], np.r_[start, stalks.start], np.r_[end, stalks.end]
        # a stalk reaches its top: as a bar of that reach
        bottom, height = np.r_[bottom, stalks.bottom], np.r_[height, (stalks.top - stalks.bottom) / BAR_FILL]
    return lane_outline_radii(np.asarray(lane, np.int64), np.asarray(start, np.float64),
                              np.asarray(end, np.float64), np.asarray(bottom, np.float64),
                              np.asarray(height, np.float64), int(ring.a0.size), float(ring.t0),
                              float(ring.t1), float(ring.zero_radius), float(BAR_FILL), int(bins))


def side_name_room(lane_names, focus_lane: int, focus_scale: float) -> tuple:
    """(left, right) room beside the semicircle's ends for the end threads' names (text
    sizes), at most `SIDE_NAME_EM` (a longer name takes another place:
    `thread_name_labels`); none on a side whose end thread's section has its middle
    high on the arc, where its name is centred above the bars, not beside them (one
    thread: its name on top, the ring as wide as the frame)."""
    a0, a1 = sector_angles(len(lane_names), focus_lane, focus_scale)
    if not len(lane_names):
        return 0.0, 0.0
    room = [min(text_width(lane_names[k]) * 1.3 + NAME_GAP_EM, SIDE_NAME_EM) for k in (0, -1)]
    mid = 0.5 * (a0[[0, -1]] + a1[[0, -1]])
    # `thread_name_labels` sets a name beside the arc where |cos| of its angle exceeds 0.5
    return (room[0] if np.cos(mid[0]) < -SIDE_ALIGN_COS else 0.0, room[1] if np.cos(mid[1]) > SIDE_ALIGN_COS else 0.0)


def ring_cut(sel, params, focus_lane: int):
    """The ring's selection with its sub-pixel subtrees cut (`subpixel.cut_subpixel`): a
    lane's arc is never longer than its section of a half-circle as wide as the image, so
    a call narrower than `subpixel.CUT_PX` there is narrower than a pixel wherever the
    ring is drawn, and what lies under it becomes its stalk."""
    n_lanes = sel.lane_threads.size
    if not n_lanes or not sel.idx.size:
        return cut_subpixel(sel, np.zeros(sel.idx.size), params.fold)
    a0, a1 = sector_angles(n_lanes, focus_lane, params.focus_scale)
    px_per_us = 0.5 * params.resolution[0] * (a1 - a0) / max(sel.t1 - sel.t0, 1e-300)
    tr = sel.trace
    width = clipped_widths(sel.idx, sel.lane, tr.start, tr.end, float(sel.t0), float(sel.t1), px_per_us)
    return cut_subpixel(sel, width, params.fold, CUT_PX)


def ring_stage(sel, params, slot, focus_lane, ring_px: float, zero_radius: float, tpx: float) -> SimpleNamespace:
    """The ring's fold (the shared fold stage, each lane within ``params.max_levels``, its
    time scale that of a semicircle ``ring_px`` pixels tall), its sections, drawn calls and
    outline (`lane_outline`): everything of the ring that depends on its size only."""
    tr = sel.trace
    n_lanes = sel.lane_threads.size
    us_per_px_lane = (sel.t1 - sel.t0) / max(0.9 * ring_px * np.pi / max(n_lanes, 1), 1.0)
    width_px = clipped_widths(sel.idx, sel.lane, tr.start, tr.end, float(sel.t0), float(sel.t1),
                              np.full(max(n_lanes, 1), 1.0 / us_per_px_lane))
    fold = fold_levels(tr, sel.idx, sel.parent, sel.lane, n_lanes, params.fold, width_px, 4.5 * tpx, tpx,
                       us_per_px_lane, budget_of=lambda demand: np.minimum(demand, float(params.max_levels)),
                       envelopes=sel.envelopes)
    ring = make_ring(n_lanes, np.maximum(fold.lane_levels, 1.0), focus_lane, params.focus_scale, zero_radius,
                     sel.t0, sel.t1)
    d = drawn_calls(sel, fold, slot, np.zeros(sel.idx.size))
    stalks = stalk_columns(sel, fold, us_per_px_lane)
    return SimpleNamespace(fold=fold, ring=ring, drawn=d, stalks=stalks, outline=lane_outline(ring, d, stalks=stalks))


def wall_stages(trace, ip, tpx: float, room_px: float, stages: dict):
    """The focused thread's icicle stages (`icicle.icicle_stages`) in a room ``room_px``
    pixels tall, kept in ``stages``: an earlier composition's when its fold squeezed no
    lane and this room's budget squeezes none either (the room changes the fold only
    through the budget, `fold.fits_budget`), else new ones."""
    from .fold import fits_budget
    from .icicle import icicle_stages, lane_budget_of

    key = ("wall", float(room_px))
    if key not in stages:
        earlier = [st for k, st in stages.items() if k[0] == "wall" and not st.fold.squeezed]
        if earlier and fits_budget(earlier[0].fold.lane_demand, lane_budget_of(earlier[0].sel, ip, tpx, room_px)).all():
            stages[key] = earlier[0]
        else:
            # a packed section: one lane (its threads share a row of the ring at the ring's gap:
            # at the wall's, tried down to none, they fit one)
            stages[key] = icicle_stages(trace, ip, tpx, room_px, pack_min_lanes=1, max_lanes=1)
    return stages[key]


def wall_geometry(comp, tpx: float, callout_room: tuple | None = None) -> None:
    """The focused thread's icicle drawn in the composition ``comp`` keeps (boxes, labels,
    time axis, callouts in the room above it: `icicle.icicle_geometry`) and its materials,
    into ``comp.wall_*``: built only for the composition the figure keeps."""
    from .icicle import figure_materials, icicle_geometry, label_materials

    if comp.st is None:
        return
    comp.wall_layers, comp.wall_labels, _ = icicle_geometry(comp.st, comp.frame, comp.ip, tpx, name_prefix="wall_",
                                                            callout_room=callout_room)
    comp.wall_mats = figure_materials(comp.st.colouring)
    comp.wall_mats.update(label_materials(comp.wall_layers))
    comp.wall_labels, comp.wall_name_box = _wall_name_under_axis(comp.wall_labels, comp.frame, comp.ip, tpx,
                                                                 comp.st.sel.lane_names)


def _wall_name_under_axis(label_sets, frame, ip, tpx: float, names) -> tuple:
    """The wall's lane name (the icicle's, right of no lane: the wall is one) moved from the
    column left of the wall to under its time axis, left-aligned at the time origin: the
    column stood empty above it (the wall takes the frame's width instead, `compose_views`),
    the band under the axis was the ring's names' room.  There it has the wall's width, so
    it is the whole name (``names``: the wall's lane names), not cut to the column's
    `MAX_LANE_NAME_EM`.  Returns (label sets, the name's pixel box for the ring's names to
    keep off, or None)."""
    from .labels import place_facing_text
    from .text import cut_end

    out, box = [], None
    for ls in label_sets:
        if not len(ls) or any(k != "lane" for k in ls.kind):
            out.append(ls)
            continue
        px = float(np.median(frame.px))
        size = tpx * px
        z = -0.25 * frame.h + frame.z_axis - (0.95 + 1.3) * size  # a line under the tick labels
        n = len(ls)
        face = np.stack([np.zeros(n), np.zeros(n), np.full(n, z)], 1)
        anchor, rot = place_facing_text(face, frame.cam, np.full(n, size), frame.to_cam)
        texts = [cut_end(nm, 0.8 * ip.resolution[0] / tpx) for nm in names[:n]] if len(names) >= n else list(ls.texts)
        out.append(LabelSet(texts, anchor.astype(np.float32), np.full(n, size, np.float32), list(ls.material),
                            np.zeros(n, np.uint8), list(ls.kind), ls.call_index, rot.astype(np.float32),
                            ["world"] * n))
        x, y = project(frame.cam, anchor[:1].astype(np.float64), ip.resolution)[0, :2]
        w = max(text_width(t) for t in texts) * tpx
        box = (float(x) - 0.3 * tpx, float(y) - ASCENT * tpx - 0.3 * tpx, float(x) + w + 0.3 * tpx,
               float(y) + DESCENT * tpx + 0.3 * tpx)
    return out, box


def compose_views(trace, params, sel, focus, focus_lane, slot, rect, tpx, side_em, beside_px: float = 0.0,
                  zero_radius: float | None = None, stages: dict | None = None,
                  fold_px: float | None = None) -> SimpleNamespace:
    """The icicle on top and the semicircle below in the pixel rectangle ``rect``: the
    ring's fold and geometry, the focused thread's icicle stages, the frame and camera,
    and where the ring stands (`RingPlacement`).  The semicircle is as wide as ``rect``
    allows (names beside its ends) less ``beside_px`` at its right (room for the legend
    beside it), at most `RING_HEIGHT_SHARE` of its height; the icicle gets the rest.
    ``side_em``: (left, right) room for names beside the ends (`side_name_room`).
    ``zero_radius``: the ring's inner radius (`ring.inner_radius`), ``params.zero_radius``
    when None.  ``stages``: the ring's stages (`ring_stage`) and the icicle's stages of
    compositions tried before, by the size they were made for, reused when this one has the
    same size (a legend that does not fit beside the ring leaves the ring's height as it was).
    The icicle's geometry is not built here (`wall_geometry`).  ``fold_px``: the ring's
    height (pixels) its fold takes the time scale of (`ring_stage`), default this
    composition's (``out.fold_px``)."""
    from .frame import MAX_LEVEL_FRAC, frame_lanes

    res = params.resolution
    n_lanes = sel.lane_threads.size
    x0, y0, x1, y1 = rect
    W, H = x1 - x0, y1 - y0
    name_units = (NAME_GAP_EM + 1.6) * tpx  # room for the thread names above the arc (pixels)
    axis_px = 2.4 * tpx + 0.5 * level_px(tpx)
    side_l, side_r = side_em
    radius_px = max(min(0.5 * (W - beside_px - (side_l + side_r) * tpx), RING_HEIGHT_SHARE * H - name_units),
                    4.0 * tpx)
    wall_px = H - radius_px - name_units - axis_px
    if wall_px < 4.0 * level_px(tpx):
        wall_px = 4.0 * level_px(tpx)
        radius_px = max(H - wall_px - name_units - axis_px, 4.0 * tpx)
    ring_px = radius_px + name_units if params.show_icicle else H
    # the ring's levels: the shared fold stage, each lane within max_levels
    stages = {} if stages is None else stages
    Z = params.zero_radius if zero_radius is None else zero_radius
    fold_px = float(ring_px if fold_px is None else fold_px)
    key = ("ring", fold_px, float(Z))
    if key not in stages:
        stages[key] = ring_stage(sel, params, slot, focus_lane, fold_px, Z, tpx)
    fold, ring, d, outline = stages[key].fold, stages[key].ring, stages[key].drawn, stages[key].outline
    stalks = stages[key].stalks
    # the semicircle's drawn height when its width is what limits it (a bar reaches high only
    # over its own angles: shallow calls on top leave room above); the height it does not
    # take goes to the icicle instead of a gap between the two
    up_units, left_units, right_units = ring_extent(ring, outline)
    need_px = (W - beside_px - (side_l + side_r) * tpx) * up_units / (left_units + right_units)
    if params.show_icicle and 4.0 * tpx <= need_px < radius_px:
        radius_px = need_px
        wall_px = H - radius_px - name_units - axis_px
        ring_px = radius_px + name_units
    to_cam = view_direction(params.azimuth, params.elevation)
    R_units = ring.outer_radius
    out = SimpleNamespace(ring=ring, fold=fold, drawn=d, stalks=stalks, outline=outline, wall_layers=[], wall_labels=[],
                          wall_mats={}, st=None, frame=None, ip=None, name_units=name_units,
                          side_px=(side_l * tpx, side_r * tpx), fold_px=fold_px)
    if params.show_icicle:
        ip = wall_params(params, sel.members[focus_lane], *wall_span(sel, focus_lane))
        st = wall_stages(trace, ip, tpx, wall_px + 2.2 * tpx, stages)
        # the frame keeps the ratio of the icicle's levels to the ring's block: levels at
        # least readable, taller when the icicle needs fewer than its room holds, but no
        # taller than the frame lets a level be (`frame.MAX_LEVEL_FRAC`): the height a
        # shallow icicle leaves goes to the ring's block, not to an empty band under the ring
        wall_levels = max(float(st.lane_levels.sum()), 1.0)
        h_px = min(max(wall_px / wall_levels, level_px(tpx)), MAX_LEVEL_FRAC * res[1])
        ring_px = max(ring_px, H - axis_px - wall_levels * h_px)
        # no column for the wall's name left of it: the name goes under its axis (`wall_geometry`)
        frame = frame_lanes(st.lane_levels, st.lane_ext, rect, ip, tpx, 0.0, st.sel.t0, st.sel.t1,
                            below_levels=ring_px / h_px)
        out.st, out.frame, out.ip = st, frame, ip
        out.cam = frame.cam
        zb0, zb1 = frame.below
        L = float(ip.time_length)
        px_w = float(np.median(frame.px))
        names_w = name_units * px_w  # world room for the names above the arc
        left = float(np.min(frame.cam_left)) if hasattr(frame, "cam_left") else 0.0
        free_w = L - beside_px * px_w  # the time axis is about the rectangle's width
        # the base line's drawn points: the lane band and the outermost bars standing on it
        # (the first lane's calls at the window's start, the last lane's at its end)
        top = ring.zero_radius + d.level_bottom + BAR_FILL * d.level_height
        on_base = [((d.lane == 0) & (d.start <= ring.t0)), ((d.lane == n_lanes - 1) & (d.end >= ring.t1))]
        outer = [float(top[m].max()) if m.any() else ring.zero_radius for m in on_base]
        ends = polar(np.array([ARC_START, ARC_START, ARC_START + ARC_SPAN, ARC_START + ARC_SPAN]),
                     np.array([ring.zero_radius - LANE_BAND[0], outer[0], ring.zero_radius - LANE_BAND[0],
                               outer[1]]), 0.0)
        base = zb0
        for _ in range(BASE_PASSES):
            # the drawn bars' extent (shallow calls leave room above or beside the semicircle
            # that a larger one can take), centred across the free width
            by_height = (zb1 - base - 0.5 * names_w) / up_units
            by_width = (free_w - (side_l + side_r) * tpx * px_w) / (left_units + right_units)
            scale = max(min(by_height, by_width), 1e-6 / R_units)
            # a semicircle that its height limits is widened into a half-ellipse over the free width
            stretch = float(np.clip(by_width / scale, 1.0, MAX_STRETCH))
            centre = left + 0.5 * (free_w + (side_l - side_r) * tpx * px_w) + \
                0.5 * (left_units - right_units) * scale * stretch
            out.place = RingPlacement((centre, 0.0, base + 0.15 * names_w), scale, stretch)
            # the block's bottom edge meets the rectangle's bottom at its lowest corner; seen
            # from the side (azimuth), it stands higher under the ring, which is narrower: the
            # next pass lowers the ring's base onto the rectangle's bottom (no empty band)
            lowest = float(project(frame.cam, out.place.to_world(ends), res)[:, 1].max())
            base -= max(y1 - lowest, 0.0) * px_w
        out.ring_block_px = (zb1 - zb0) / px_w
    else:
        out.place = RingPlacement((0.0, 0.0, 0.0), 1.0)
        R = R_units + name_units / max(ring_px, 1.0) * R_units
        pts = out.place.to_world(np.array([[x, y, 0.0] for x in (-R, R) for y in (0.0, -R)] +
                                          [[0.0, 0.0, 1.4], [0.0, -R, 1.4]]))
        out.cam = fit_camera_rect(pts, to_cam, res, rect, lens_mm=params.lens_mm)
    return out


OCCUPANCY_CELL_PX = 8.0


def composition_occupancy(comp, params, tpx) -> np.ndarray:
    """Where the icicle and the semicircle (its names around it) are on the image."""
    from .annotate import occupancy_grid
    from .icicle import lanes_occupancy

    res = params.resolution
    grid = lanes_occupancy(comp.st, comp.frame, comp.ip, tpx) if comp.st is not None else \
        occupancy_grid(res, OCCUPANCY_CELL_PX)
    ring, place = comp.ring, comp.place
    R = ring.outer_radius
    # the half-disc (and the names above and beside it) as horizontal strips
    a = np.linspace(np.pi, 2 * np.pi, 65)
    arc = project(comp.cam, place.to_world(polar(a, R, 0.0)), res)
    centre = project(comp.cam, place.to_world(np.zeros((1, 3))), res)[0]
    pad = 2.2 * tpx
    ys = np.arange(arc[:, 1].min() - pad, centre[1] + 0.5 * tpx, OCCUPANCY_CELL_PX)
    rects = []
    for y in ys:
        inside = arc[:, 1] <= y + OCCUPANCY_CELL_PX
        if inside.any():
            rects.append((arc[inside, 0].min() - comp.side_px[0], y, arc[inside, 0].max() + comp.side_px[1],
                          y + OCCUPANCY_CELL_PX))
    return grid | occupancy_grid(res, OCCUPANCY_CELL_PX, rects=rects)


def no_merged_trace(trace: Trace) -> None:
    """A ValueError of one line when ``trace`` is merged stacks (`annotate.x_unit_of`): the
    thread view draws waits and their releases on the threads' common clock, and a merged
    trace (pprof, collapsed stacks, callgrind, ``--merge``) has no clock: its x is a
    measure, its calls are call paths laid side by side, so no wait overlaps a release."""
    unit = x_unit_of(trace)
    if unit.merged:
        # x of merged stacks in time (a CPU profile's nanoseconds) is time summed per call path
        x = "time summed per call path" if unit.is_time else unit.quantity
        raise ValueError(f"the thread view needs calls on a clock: {trace.title_name} is merged stacks (x in "
                         f"{x}, not a clock), whose waits have no moment to meet a release; "
                         f"draw it with render-icicle or render-cone")


def no_waits_note(trace: Trace, sync) -> str:
    """The one line the thread view gives a trace whose waits it cannot draw ("" when it has
    hand-offs): no wait or release calls at all (its tracer did not record the objects
    threads wait on, or the program does not wait), or waits none of which another
    thread's release ended."""
    if sync.n_handoffs:
        return ""
    n_wait = int(np.count_nonzero(trace.kind == KIND_WAIT))
    n_release = int(np.count_nonzero(trace.kind == KIND_RELEASE))
    if n_wait == 0 and n_release == 0:
        return "no waits: no wait or release calls"
    if n_wait == 0:
        return f"no waits: {n_release:,} release calls, no wait calls"
    return f"no hand-offs: no other thread ended its {n_wait:,} waits"


#: the legend's line under a `no_waits_note`
NO_WAITS_MEANS = "nothing for curves to join: the ring shows what each thread does"


def threads_layout(trace: Trace, params: ThreadsParams | None = None, sync=None) -> SceneSpec:
    """The thread view of ``trace`` (see module docstring); ``sync`` reuses an analysis.

    A trace without hand-offs (`no_waits_note`) keeps the ring and the focused icicle: the
    threads' activity over one clock and the flows between them still say what the program
    does; the legend opens with the reason in a heading (``meta["no_waits"]``, which the
    command line also writes to stderr; the title says "no hand-offs" where no flows tell
    the story instead), so the empty inside of the ring is not read as threads that never
    waited on each other.  A merged
    trace is refused (`no_merged_trace`)."""
    from ..analysis.synchronisation import synchronisation

    if not isinstance(trace, Trace):
        raise TypeError(f"threads_layout needs a Trace, got {type(trace).__name__}")
    no_merged_trace(trace)
    params = (params or ThreadsParams()).validate()
    sync = sync if sync is not None else synchronisation(trace)
    res = params.resolution
    tpx = text_px(params)
    threads = shown_threads(trace, params)
    focus = resolve_thread(trace, params.focus) if params.focus is not None else None
    if focus is not None and focus not in threads:
        raise ValueError(f"the focused thread {trace.thread_names[focus]!r} is hidden")
    window = params.time_window
    if window is None and params.window == "concurrent":
        window = concurrent_window(trace, threads)
    sel = select_calls(trace, ring_params(params, threads, window), max_lanes=0 if params.threads else params.max_lanes,
                       keep_threads=[focus] if focus is not None else ())
    tr = sel.trace
    n_lanes = sel.lane_threads.size
    # the focused icicle needs calls in the span shown: a thread that ran only before the
    # others started (a main thread that spawns its workers and returns) is not chosen
    with_calls = [int(t) for m, c in zip(sel.members, np.bincount(sel.lane, minlength=n_lanes)) if c for t in m]
    lane_of_thread = sel.lane_of_thread()
    if focus is None:
        focus = default_focus(sync, with_calls, lane_of_thread if sel.lane_members is not None else None)
    elif focus not in with_calls:
        raise ValueError(f"the focused thread {trace.thread_names[focus]!r} has no calls in the span shown "
                         f"({fmt_time(sel.t0 - trace.start.min())} to {fmt_time(sel.t1 - trace.start.min())} "
                         f"into the trace): focus another thread, or show the whole trace (span 'all')")
    focus_lane = int(lane_of_thread[focus])
    lane_rgb = lane_colours(n_lanes)
    n_shown = int(sel.idx.size)
    left_out = sel.n_threads_left_out
    sel = ring_cut(sel, params, focus_lane).sel

    # HUD plan
    n_threads = int(sel.threads.size)
    threads_text = threads_shown_text(n_threads, left_out)
    n_handoffs = sync.n_handoffs  # waits ended by another thread
    no_waits = no_waits_note(trace, sync)
    n_flows = flows_in_window(tr, sel.t0, sel.t1, lane_of_thread >= 0 if left_out else None) \
        if params.show_flows else 0
    title = _threads_title(trace, params, threads_text, n_handoffs, n_flows)
    slot, slot_rgb, cluster_rgb, bar_rows, bar_title = ring_bar_colours(tr, sel, params, lane_rgb)
    path = critical_path_stage(trace, sync, sel, params)  # the critical path lit, the rest pale
    if path is not None:
        slot, slot_rgb, cluster_rgb, bar_rows = path.recolour(slot, slot_rgb, cluster_rgb, bar_rows)
    obj_rows = object_legend(sync, sel, lane_of_thread) if params.color_by == "object" else []
    # the span shown, when it is not the whole trace ("concurrent": from when two threads first run
    # at once): the ring's in the title, where the top icicle's axis starts in its note (its 0)
    origin, whole = float(trace.start.min()), float(trace.end.max() - trace.start.min())
    if sel.windowed and params.title is None and sel.t1 - sel.t0 < (1 - SPAN_NOTE_SHARE) * whole:
        title += f" · {window_text(sel.t0, sel.t1, origin)}"
    w0 = wall_span(sel, focus_lane)[0] - origin
    top_from = fmt_time(w0) if w0 > SPAN_NOTE_SHARE * whole else ""
    rows = legend_rows(params, bar_rows, bar_title, sel, obj_rows, sel.lane_names[focus_lane], True,
                       waits=n_handoffs > 0, top_from=top_from)  # no curves: no notes on them
    rows += path.rows if path is not None else []
    if no_waits:  # the reason the ring's inside is empty, first and in a heading's size
        rows[:0] = [(no_waits, -1, "heading"), (NO_WAITS_MEANS, -1, "note")]
    rows += incomplete_rows(trace, sel.t0, on_axis=bool(params.show_icicle))  # the wall's axis marks it
    n_pair_arcs = threads_flows.summary_arc_count(tr, sel.lane_of_thread(), sel.t0, sel.t1) if n_flows else 0
    rows += threads_flows.legend_row(n_flows, n_pair_arcs)
    n_obj = max([c for _, c, _ in obj_rows], default=-1) + 1
    obj_rgb = hue_ring(max(n_obj, 1))[:n_obj]
    all_rgb = np.vstack([slot_rgb, lane_rgb, obj_rgb])

    def swatch(s):
        return s if s < 1000 else len(slot_rgb) + s - 1000 if s < 2000 else len(slot_rgb) + n_lanes + s - 2000

    used = sorted({swatch(x) for _, s, _ in rows for x in (s if isinstance(s, tuple) else (s,)) if x >= 0})
    compact = {u: k for k, u in enumerate(used)}  # only the swatches shown get a material
    hud_rows = [(t, tuple(compact[swatch(x)] for x in s) if isinstance(s, tuple) else compact[swatch(s)] if s >= 0
                 else -1, k) for t, s, k in rows]
    plan = plan_hud(res, tpx, title, hud_rows, params.show_title, params.show_legend)
    side_em = side_name_room(sel.lane_names, focus_lane, params.focus_scale)

    # the inside of the ring is the hand-off curves' room: few curves, a smaller inside
    Z = inner_radius(params.zero_radius, shown_rows(sync, sel, lane_of_thread).size, n_lanes)

    plan, comp = _compose_with_legend(trace, params, sel, focus, focus_lane, slot, plan, title, hud_rows, tpx,
                                      side_em, Z)
    from .icicle import hud_rects

    wall_geometry(comp, tpx, (plan.rect, hud_rects(plan, res), None))
    ring, fold, d, cam, place = comp.ring, comp.fold, comp.drawn, comp.cam, comp.place
    wall_layers, wall_labels, wall_mats = comp.wall_layers, comp.wall_labels, comp.wall_mats
    to_cam = view_direction(params.azimuth, params.elevation)
    px_world = float(world_per_pixel(cam, np.asarray(place.origin)[None], res)[0])
    px_units = px_world / place.scale

    # ring clusters (SyncTrace IV-B2), bars, curves
    fr = SimpleNamespace(us_per_px=ring.us_per_radian() * px_units / max(ring.zero_radius, 1e-9))
    cl = cluster_calls(d, fr, params.cluster_px)
    layers, mats = ring_layers(sel, ring, place, sync, d, cl, px_units, slot_rgb, cluster_rgb, slot, comp.stalks)
    cluster_of_shown = np.full(sel.idx.size, -1, np.int64)
    cluster_of_shown[d.local] = cl.cluster_of
    folded_rows = fold.run_start >= 0
    cluster_of_shown[folded_rows] = cluster_of_shown[fold.run_start[folded_rows]]
    c_rep_shown = d.local[cl.rep] if len(cl) else np.zeros(0, np.int64)
    cs = build_curves(sync, sel, ring, lane_of_thread, cluster_of_shown, cl.start, cl.end, c_rep_shown, px_units,
                      params.max_curves)
    clayers, cmats = curve_layers(sync, cs, ring, place, params, lane_rgb, px_units)
    band, bmats = lane_band_layer(ring, place, lane_rgb)
    layers = clayers[:1] + layers + [band] + clayers[1:]
    if path is not None:  # the ribbon on the ring and the focused icicle, the other curves dimmed
        layers += path.layers(clayers, cmats, comp, ring, place, px_units)
        mats.update(path.materials)
    for m in (cmats, bmats, lane_text_materials(lane_rgb), wall_mats):
        mats.update(m)
    flow_mats = threads_flows.flow_materials(lane_rgb)
    flows, flow_info = threads_flows.thread_view_flows(sel, d, ring, place, comp, params, cam, res, px_world,
                                                       flow_mats, focus_lane, n_pair_arcs > 0)
    label_sets = []
    if params.show_labels:
        behind = project(cam, flows.centres.reshape(-1, 3).astype(np.float64), res) if flows is not None else None
        keep_out = [legend_box(plan)] if plan.legend_rows else []
        if comp.frame is not None:  # the icicle, its names and its time axis above the block of the ring
            wall_bottom = project(cam, np.array([[place.origin[0], 0.0, comp.frame.below[1]]]), res)[0, 1]
            keep_out.append((0.0, 0.0, float(res[0]), float(wall_bottom)))
            if getattr(comp, "wall_name_box", None) is not None:
                keep_out.append(comp.wall_name_box)
        ring_names, ring_plates = ring_call_labels(sel, ring, place, d, cl, slot_rgb, px_world, tpx, MAX_RING_LABELS,
                                                   fold)
        names, plates, leaders = thread_name_labels(sel, ring, place, 1.3 * tpx * px_world, focus_lane, cam, res,
                                                    to_cam, px_world, comp.outline, keep_out, behind, lane_rgb,
                                                    lane_captions(sel, d, ring_names))
        label_sets += [names, ring_names]
        if leaders is not None:
            layers.append(leaders)
        if plates is not None:
            layers.append(plates)
            mats["TV3D_name_plate"] = name_plate_material()
        if ring_plates is not None:
            layers.append(ring_plates)
    layers += wall_layers
    label_sets += wall_labels
    if flows is not None:
        layers.append(flows)
        mats.update(flow_mats)
    cut = threads_cutaway(params, sel, d, ring, place, comp, cam, res)
    sw_rgb = all_rgb[used] if used else np.zeros((0, 3))
    sw_names = [f"TV3D_lg{k:02d}" for k in range(len(sw_rgb))]
    for n, col in zip(sw_names, sw_rgb):
        mats[n] = MaterialSpec(n, tuple(float(c) for c in col) + (1.0,), cushion=False)
    hud_labels, legend_layer, _ = hud_layers(plan, cam, res, sw_rgb, sw_names)
    label_sets.append(hud_labels)
    if legend_layer is not None:
        layers.append(legend_layer)
    for name, c in (("TV3D_text_dark", TEXT_DARK), ("TV3D_text_light", TEXT_LIGHT), *MATERIAL_TEXT_COLOURS.items()):
        mats[name] = MaterialSpec(name, c, kind="text", cushion=False, from_attribute=False)
    mats.setdefault("TV3D_axis", MaterialSpec("TV3D_axis", MATERIAL_TEXT_COLOURS["TV3D_text_muted"], kind="text",
                                              cushion=False, from_attribute=False))
    layers = [compact_materials(lay) for lay in layers]
    sun = -view_direction(params.azimuth - 35.0, 55.0)
    spec = SceneSpec(
        layers=layers, labels=LabelSet.concat(label_sets),
        legend=[LegendEntry(n, tuple(float(c) for c in col)) for n, col in zip(sel.lane_names, lane_rgb)],
        materials=mats, camera=cam,
        lights=[LightSpec("TV3D_key", "SUN", tuple(sun), 3.0),
                LightSpec("TV3D_fill", "SUN", tuple(-view_direction(params.azimuth + 60.0, 20.0)), 0.8)],
        resolution=res, background=(1.0, 1.0, 1.0),
        meta={"layout": "threads", "t0": sel.t0, "t1": sel.t1, "lane_threads": sel.lane_threads.tolist(),
              "lane_names": list(sel.lane_names), "lane_angles": np.stack([ring.a0, ring.a1], 1).tolist(),
              "lane_levels": ring.lane_levels.tolist(),
              "zero_radius": ring.zero_radius, "outer_radius": ring.outer_radius,
              "anchor_radius": ring.zero_radius - ANCHOR_INSET, "ring_origin": list(place.origin),
              "ring_scale": place.scale, "ring_stretch": float(place.stretch), "ring_plane": "front",
              "wall_world_per_us": float(comp.frame.scale_t) if comp.frame is not None else 0.0,
              "focus_thread": int(focus), "focus_lane": focus_lane, "world_per_pixel": px_world,
              "lane_rgb": lane_rgb.tolist(), "n_curves": int((~cs.compound).sum()),
              "n_compound": int(cs.compound.sum()), "n_calls": n_shown, "n_cut": n_shown - int(sel.idx.size),
              "n_clusters": len(cl), "color_mode": params.color_by, "title": plan.title,
              "content_rect": list(plan.rect), "params": params.to_dict(), "text_px": tpx,
              **({"no_waits": no_waits} if no_waits else {}), **flow_info,
              **({"cutaway": cut} if cut is not None else {})},
    )
    return spec.validate()


def critical_path_stage(trace: Trace, sync, sel, params: ThreadsParams):
    """`layout.critical_path.ThreadsPath` when ``params.critical_path``, else None."""
    if not params.critical_path:
        return None
    from .critical_path import ThreadsPath

    return ThreadsPath(trace, sync, sel)


def _threads_title(trace: Trace, params: ThreadsParams, threads_text: str, n_handoffs: int, n_flows: int) -> str:
    """The figure's title: ``params.title``, else the question it answers (who waits on whom; who
    passes work to whom where there are flows but no hand-offs; what the threads do where neither),
    with the trace's kind where its calls come from samples."""
    if params.title is not None:
        return params.title
    if n_handoffs == 0 and n_flows:  # a browser's or a profiler's trace: no lock waits, its flows are the story
        title = (f"Who passes work to whom · {trace.title_name} · {threads_text}, {n_flows:,} flow"
                 f"{'s' if n_flows != 1 else ''}")
    elif n_handoffs == 0:  # neither (JAX's compiler threads): no question the figure answers
        title = f"What the threads do · {trace.title_name} · {threads_text}, no hand-offs or flows"
    else:
        title = (f"Who waits on whom · {trace.title_name} · {threads_text}, {n_handoffs:,} hand-off"
                 f"{'s' if n_handoffs != 1 else ''}")
    if trace_kind_text(trace):  # calls made from samples: waits between samples are lost
        title += f" · {trace_kind_text(trace)}"
    return title


def _compose_with_legend(trace: Trace, params: ThreadsParams, sel, focus, focus_lane: int, slot, plan, title: str,
                         hud_rows, tpx: float, side_em: float, Z: float):
    """The views composed (`compose_views`) around the legend: first in room the views leave over
    the whole width (above a wall that idles, beside a shallow end of the semicircle), as the
    icicle's and the cone's are; else beside the semicircle, under the icicle; else in a column of
    its own.  Returns (the HUD plan, the composition)."""
    stages: dict = {}
    res = params.resolution
    if not (plan.legend_rows and params.show_icicle):
        return plan, compose_views(trace, params, sel, focus, focus_lane, slot, plan.rect, tpx, side_em, zero_radius=Z,
                                   stages=stages)
    full = plan_hud(res, tpx, title, hud_rows, params.show_title, False)
    narrow = plan_hud(res, tpx, title, hud_rows, params.show_title, True, max_legend_frac=TWO_COLUMN_FRAC)
    lw, lh = legend_size(narrow, res, 1)
    wide = compose_views(trace, params, sel, focus, focus_lane, slot, full.rect, tpx, side_em, 0.0, Z, stages)
    placed = legend_placement(full, narrow, composition_occupancy(wide, params, tpx), OCCUPANCY_CELL_PX, res,
                              free_room_replan(res, tpx, title, hud_rows, params.show_title))
    if placed is not None:
        return placed, wide
    # the legend beside the semicircle, under the icicle
    comp = compose_views(trace, params, sel, focus, focus_lane, slot, full.rect, tpx, side_em, lw + 1.5 * tpx, Z,
                         stages)
    if lh <= getattr(comp, "ring_block_px", 0.0):
        return legend_in_corner(full, narrow, (full.rect[2] - lw, full.rect[3] - lh), res, 1), comp
    # the legend in its column: the ring keeps the first composition's fold (its time scale an
    # estimate either way: the frame sets the ring's size afterwards; the narrower rectangle
    # changes it by the legend's share of the width)
    return plan, compose_views(trace, params, sel, focus, focus_lane, slot, plan.rect, tpx, side_em, zero_radius=Z,
                               stages=stages, fold_px=comp.fold_px)
