"""The EXTRAVIS view (Cornelissen et al., Sec. 3–5), bpy-free: the circular bundle view on the
left and the Massive Sequence View on the right, of the same calls (a time window) at one
hierarchy level, in one figure.

- **Circular bundle view** (`layout.extravis_heb`): leaves on a circle, the hierarchy as an
  extruded icicle ring around it, one tube per (caller element, callee element) pair along
  the hierarchy path, β-straightened, its width the calls it carries.
- **Massive Sequence View** (Sec. 3.3, 5): the hierarchy as an icicle along the top (boxes
  extruded into the picture by the calls their elements take part in), in the columns of the
  circle's leaves (same order, same shares); below it the mural: every call of the window a
  row, the first at the top, spanning its caller's column to its callee's, coloured caller
  → callee.  The mural is an image (`ImageLayer`) rendered at the pixel size it takes in the
  figure by `kernels.extravis.mural_ibaa`: with more calls than pixel lines, a line blends
  its calls by importance (IBAA, Eq. 3) with W = f^p (Eq. 2, `analysis.hierarchy.call_importance`,
  computed over the whole trace's sequence).
- **One view alone** (``views``): ``"heb"`` the circular view, ``"sequence"`` the sequence
  view, each filling the content rectangle (``render-heb``, ``render-sequence``); ``"both"``
  side by side (``render-extravis``).  The same stages make all three.
- **Linking** (Sec. 3): both views show the calls that start in ``time_window``;
  ``highlight`` keeps the calls from or to the matching elements lit in both views (tubes and
  rows), the others pale.  Sectors, icicle boxes and the names (labels of kind ``element``)
  carry ``element_index``, tubes ``src_element``/``dst_element``/``calls``, the mural's
  object ``row_calls`` (a call per pixel line), so picking can report the element or call.

Geometry is made in "layout pixels" (a unit is a pixel of the planned content rectangle)
and scaled by `UNIT` into the world.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..analysis.hierarchy import (PACKAGE, THREAD, THREADS, Hierarchy, auto_level, call_importance,
                                  hierarchy, level_index, sequence_order)
from ..model import Trace
from ..params.extravis import ExtravisParams
from . import palette
from .annotate import (MATERIAL_TEXT_COLOURS, TIME, XUnit, fmt_time, hud_layers, incomplete_rows, plan_hud,
                       trace_kind_text, x_unit_of)
from .camera import fit_camera_rect, project, view_direction, world_per_pixel
from .extravis_heb import (GRADIENT_STEPS, TOWARD_CAMERA, bundle_curves, coloured_pairs, control_points, gradient_rgb,
                           leaf_arcs, ring_labels, ring_layer, tube_layer)
from .labels import TEXT_DARK, TEXT_LIGHT, text_px
from .spec import ImageLayer, InstanceLayer, LabelSet, LightSpec, MaterialSpec, SceneSpec

UNIT = 0.01  # world units per layout pixel
N_FAMILIES = 10  # packages with their own colour (the most active); the rest grey
PALE = np.array([0.80, 0.80, 0.80])
BACKGROUND = np.array([1.0, 1.0, 1.0])
THREAD_RGB = np.array([0.30, 0.34, 0.42])
LEAF_ROW_EM = 4.5  # height of the sequence view's leaf row (em): names run upwards in it
LEAF_ROW_EM_ALONE = 7.0  # the same when the sequence view fills the figure alone (longer names)
LABEL_FRONT = 0.35  # labels stand this many em in front of the faces they name (no depth fighting)
NAMED_LEAF_EM = 1.3  # the least arc (column) of the busiest leaves: one line of a name, px_per_layout ≲ 1 included
#: what a scene shows: both views side by side, the circular bundle view or the sequence view alone
VIEWS = ("both", "heb", "sequence")
VIEW_SUBTITLES = {"both": "who calls whom, and when", "heb": "who calls whom", "sequence": "who calls whom, when"}


def shown_trace(trace: Trace, params: ExtravisParams) -> tuple:
    """(the trace whose relations are shown, the loaded trace's index of each of its calls or
    None): ``hide``/``hide_modules`` and ``fold`` merge calls away as in the cone tree
    (`layout.cone.folded_trace`), so their children are called by their caller."""
    if params.fold == "none" and not params.hide and not params.hide_modules:
        return trace, None
    from .cone import folded_trace
    from ..params.icicle import IcicleParams

    ip = IcicleParams(hide=list(params.hide), hide_modules=list(params.hide_modules), fold=params.fold,
                      resolution=tuple(params.resolution), label_px=float(params.label_px)).validate()
    tr, orig, _ = folded_trace(trace, ip, params.fold)
    return tr, (orig if orig is not None else np.arange(len(tr)))


def resolved_level(params: ExtravisParams, h, seq) -> ExtravisParams:
    """``params`` with ``level="auto"`` replaced by the level it stands for on the window's
    calls ``seq`` (`analysis.hierarchy.auto_level`); the same object otherwise."""
    if params.level != "auto":
        return params
    return dataclasses.replace(params, level=auto_level(h, seq))


def window_calls(trace: Trace, params: ExtravisParams) -> np.ndarray:
    """The calls of the window in sequence order (int64)."""
    order = sequence_order(trace)
    if params.time_window is None:
        return order
    t0, t1 = (float(x) for x in params.time_window)
    s = trace.start[order]
    out = order[(s >= t0) & (s <= t1)]
    if out.size == 0:
        raise ValueError(f"no calls to show: no call starts in the window {fmt_time(t0)}–{fmt_time(t1)}")
    return out


def lit_elements(h: Hierarchy, patterns) -> np.ndarray | None:
    """bool per element: matched by a ``highlight`` regex (on the dotted name), inside a
    matched element's subtree, or an ancestor of one (a coarser level lifts to it)."""
    if not patterns:
        return None
    from ..userregex import user_regex

    # linear-time search (`tracevis3d.userregex`): re's backtracking ran ``(a+)+$`` for minutes
    rx = [user_regex(p, "highlight") for p in patterns]
    hit = np.array([any(r.search(s) for r in rx) for s in h.full_names], bool)  # per element, not per call
    lit = np.zeros(len(h), bool)
    for e in np.flatnonzero(hit):
        lit[e:h.end[e]] = True
    anc = h.ancestors()
    for d in range(anc.shape[0]):
        a = anc[d, hit]
        lit[a[a >= 0]] = True
    lit[0] = False
    return lit


def element_colours(h: Hierarchy, touch_el: np.ndarray) -> tuple:
    """(slot per element, slot RGB (k, 3), family legend [(name, slot)]): the most active
    packages a hue each (deeper levels lighter shades), the rest grey; threads slate."""
    anc = h.ancestors()
    pkg = anc[1]
    is_pkg = h.kind == PACKAGE
    act = np.where(is_pkg, touch_el, -1)
    top = [int(e) for e in np.argsort(-act)[:N_FAMILIES] if act[e] > 0]
    base = palette.categorical(max(len(top), 1))[:len(top)]
    fam = np.full(len(h), len(top), np.int64)  # len(top): grey
    for k, e in enumerate(top):
        fam[pkg == e] = k
    rgb_f = np.vstack([base, [[0.55, 0.55, 0.55]], [THREAD_RGB]]) if top else np.array([[0.55] * 3, THREAD_RGB])
    fam = np.where((h.kind == THREAD) | (h.kind == THREADS), len(top) + 1, fam)
    shade = np.clip(h.depth - 1, 0, 3)
    slot = fam * 4 + shade
    rgb = np.vstack([palette.lighten(rgb_f, f) for f in (0.0, 0.28, 0.48, 0.64)])  # (4·k, 3) by shade
    k = rgb_f.shape[0]
    rgb = rgb.reshape(4, k, 3).transpose(1, 0, 2).reshape(4 * k, 3)
    return slot.astype(np.int32), rgb, [(h.names[e], 4 * i) for i, e in enumerate(top)]


def title_of(trace: Trace, params: ExtravisParams, n_calls: int, views: str = "both") -> str:
    if params.title is not None:
        return params.title
    calls = "call paths" if x_unit_of(trace).merged else "calls"  # merged stacks: a call is a call path
    parts = [trace.title_name, f"{n_calls:,} {calls}", f"{trace.n_threads} thread{'s' if trace.n_threads != 1 else ''}",
             f"{params.level} level"]
    if params.time_window is not None:
        parts.append("window {}–{}".format(*axis_times(params.time_window, x_unit_of(trace))))
    if trace_kind_text(trace):  # merged stacks, or calls made from samples
        parts.append(trace_kind_text(trace))
    return " · ".join(parts) + " — " + VIEW_SUBTITLES[views]


def legend_rows(params, families, n_pairs, cmax, n_calls, lit_note, views: str = "both") -> list:
    rows = []
    if params.color_mode == "gradient":
        rows += [("calls: caller → callee", -1, "heading"), ("caller end", 0, "swatch"), ("callee end", 1, "swatch")]
    else:
        rows += [("calls: when they start", -1, "heading"), ("early", 0, "swatch"), ("late", 1, "swatch")]
    if views != "sequence":
        rows.append((f"tube width: calls per element pair ({n_pairs:,} pairs, up to {cmax:,})", -1, "note"))
    if views != "heb":
        rows.append((f"rows: {n_calls:,} calls, first at the top; rare calls kept visible (p = {params.power:g})", -1,
                     "note"))
    if params.time_window is not None and views != "heb":
        rows.append(("the bar left of the rows: the whole run, the window dark between its handles", -1, "note"))
    if lit_note:
        rows.append((lit_note, -1, "note"))
    if families:
        rows.append(("packages", -1, "heading"))
        rows += [(name, 2 + k, "swatch") for k, (name, _) in enumerate(families)]
    return rows


def extravis_hierarchy(trace: Trace, params: ExtravisParams) -> Hierarchy:
    """The `Hierarchy` the EXTRAVIS views draw: with ``params.pack_threads``, threads of one kind
    are one element (`select.thread_groups`, as the cone tree merges them)."""
    from .select import PACK_MIN_LANES, thread_groups

    return hierarchy(trace, thread_groups(trace, PACK_MIN_LANES) if params.pack_threads else None)


def extravis_layout(trace: Trace, params: ExtravisParams | None = None, hier: Hierarchy | None = None,
                    views: str = "both") -> SceneSpec:
    """The EXTRAVIS SceneSpec of ``trace`` (module docstring); ``views``: one of `VIEWS`."""
    if not isinstance(trace, Trace):
        raise TypeError(f"extravis_layout needs a Trace, got {type(trace).__name__}")
    if views not in VIEWS:
        raise ValueError(f"views must be one of {', '.join(VIEWS)}, not {views!r}")
    show_heb, show_seq = views != "sequence", views != "heb"
    params = (params or ExtravisParams()).validate()
    if len(trace) == 0:
        from ..model_side import no_calls_message

        raise ValueError(f"no calls to show: {no_calls_message(trace, trace.meta.get('source') or 'the trace')}")
    loaded_trace = trace
    trace, orig = shown_trace(trace, params)
    h = hier if hier is not None and orig is None else extravis_hierarchy(trace, params)
    seq = window_calls(trace, params)
    params = resolved_level(params, h, seq)
    li = level_index(params.level)
    rel = h.relations(params.level)
    caller, callee = rel.caller[seq], rel.callee[seq]
    n_el = len(h)
    touch = np.bincount(caller, minlength=n_el) + np.bincount(callee, minlength=n_el)
    leaves = np.flatnonzero(touch > 0).astype(np.int32)
    anc = h.ancestors()
    touch_el = np.zeros(n_el, np.float64)  # calls each element (with its subtree) takes part in
    for d in range(anc.shape[0]):
        a = anc[d, leaves]
        np.add.at(touch_el, a[a >= 0], touch[leaves][a >= 0])
    lit = lit_elements(h, params.highlight)
    call_lit = None if lit is None else (lit[caller] | lit[callee])

    # ---------------------------------------------------------------- plan (pixels)
    res = tuple(params.resolution)
    tpx = text_px(params)
    slot, slot_rgb, families = element_colours(h, touch_el)
    pairs = h.pairs(params.level, calls=seq)
    keep = np.argsort(-pairs.count, kind="stable")[:int(params.max_pairs)]
    keep.sort()
    src, dst, cnt, tmean = pairs.src[keep], pairs.dst[keep], pairs.count[keep], pairs.t_mean[keep]
    cmax = int(cnt.max()) if cnt.size else 0
    lit_note = ""
    if call_lit is not None:
        lit_note = f"highlighted: {', '.join(params.highlight)} ({int(call_lit.sum()):,} calls lit); the others pale"
    coloured = coloured_pairs(cnt, params.colour_share)  # without a highlight: the heaviest in colour
    if call_lit is None and not coloured.all() and show_heb:
        pale_share = float(cnt[~coloured].sum()) / max(float(cnt.sum()), 1.0)
        lit_note = (f"pale: {int((~coloured).sum()):,} relations of at most {int(cnt[~coloured].max()):,} calls "
                    f"each ({100 * pale_share:.0f} % of the calls)")
    swatch_rgb = np.vstack([gradient_rgb([0.0, 1.0]) if params.color_mode == "gradient" else palette.sequential([0.0, 1.0]),
                            slot_rgb[[s for _, s in families]] if families else np.zeros((0, 3))])
    rows = legend_rows(params, families, len(pairs), cmax, seq.size, lit_note, views)
    at = next((k for k, r in enumerate(rows) if r == ("packages", -1, "heading")), len(rows))  # the notes' end
    rows[at:at] = incomplete_rows(loaded_trace)
    title = title_of(loaded_trace, params, seq.size, views)
    plan = plan_hud(res, tpx, title, rows, params.show_title, params.show_legend, max_legend_frac=0.16)
    x0, y0, x1, y1 = plan.rect
    Hc, Wc = y1 - y0, x1 - x0
    dl = li + 1
    band_w = 1.75 * tpx
    leaf_w = 6.5 * tpx
    gap = 0.25 * tpx
    R_out = 0.5 * (min(Hc, Wc) if views == "heb" else Hc)
    R = R_out - gap - leaf_w - (dl - 1) * band_w
    if R < 0.42 * R_out:
        leaf_w = max(3.5 * tpx, R_out - gap - (dl - 1) * band_w - 0.42 * R_out)
        R = R_out - gap - leaf_w - (dl - 1) * band_w
    heb_c = np.array([R_out, 0.0, 0.0])  # the circle's centre (layout pixels; x right, z up)
    seq_x0 = (2.0 * R_out if show_heb else 0.0) + 5.5 * tpx  # left of the mural: the window bar, the times
    seq_x1 = max(Wc, seq_x0 + 10 * tpx)
    # the busiest leaves get an arc that holds a line of their name: on the ring where there
    # is one (the sequence view beside it is too narrow to name as many), else a column
    line = NAMED_LEAF_EM * tpx
    if show_heb:
        floor = line / (2.0 * np.pi * (R + gap + 0.5 * leaf_w)) + 0.0024  # + the sectors' pads
    else:
        floor = line / (seq_x1 - seq_x0)
    arcs = leaf_arcs(h, leaves, touch[leaves].astype(np.float64), floor=floor)
    seq_top = R_out
    ic_h = band_w
    leaf_h = (LEAF_ROW_EM if show_heb else LEAF_ROW_EM_ALONE) * tpx
    mural_top = seq_top - (dl - 1) * ic_h - leaf_h - 0.4 * tpx
    mural_bot = -R_out

    # ---------------------------------------------------------------- HEB
    heights = band_w * (0.35 + 1.4 * np.log1p(touch_el) / np.log1p(max(touch_el.max(), 1.0)))
    materials = {}
    mat_names = [f"TV3D_xv_{k:02d}" for k in range(slot_rgb.shape[0])]
    for name, c in zip(mat_names, slot_rgb):
        materials[name] = MaterialSpec(name, tuple(float(v) for v in c) + (1.0,), cushion=False, from_attribute=False)
    ring, sect = ring_layer(h, arcs, li, R, leaf_w, band_w, gap, slot, mat_names, heights, tuple(heb_c * UNIT))
    ring.radii = (ring.radii * UNIT).astype(np.float32)
    ring.heights = (ring.heights * UNIT).astype(np.float32)
    cx, cz = control_points(h, arcs, li, R)
    curves = bundle_curves(h, src, dst, cx, cz, params.beta)  # layout pixels, centred on the circle
    curves = curves + heb_c[None, None, :]
    rad = tpx * (0.05 + 0.32 * np.sqrt(cnt / max(cmax, 1)))
    tube_rgb, step_slot = _tube_colours(trace, seq, params, tmean)
    tube_names = [f"TV3D_xv_tube_{k}" for k in range(GRADIENT_STEPS)] + ["TV3D_xv_tube_pale"]
    for name, c in zip(tube_names, np.vstack([tube_rgb, PALE])):
        materials[name] = MaterialSpec(name, tuple(float(v) for v in c) + (1.0,), kind="tube", cushion=False,
                                       from_attribute=False)
    if lit is not None:
        pair_lit = lit[src] | lit[dst]
    else:
        pair_lit = coloured
    step_slot = np.where(pair_lit[:, None], step_slot, GRADIENT_STEPS)
    curves_w = curves * UNIT
    tubes = tube_layer(curves_w, rad * UNIT, step_slot, tube_names, TOWARD_CAMERA * R * UNIT,
                       {"src_element": src.astype(np.int32), "dst_element": dst.astype(np.int32),
                        "calls": cnt.astype(np.int32)}, back=~pair_lit)

    # ---------------------------------------------------------------- sequence view
    icicle, (sh, bx0, bx1, bz0, bz1, leaf_band, thr_grp) = _sequence_icicle(
        h, arcs, dl, (seq_x0, seq_x1, seq_top), ic_h, leaf_h, heights, slot, slot_rgb, mat_names)

    # ---------------------------------------------------------------- camera
    to_cam = view_direction(params.azimuth, params.elevation)
    hmax = float(heights.max()) if heights.size else band_w
    pts = []
    for xx in (0.0,) + ((2 * R_out,) if show_heb else ()) + ((seq_x0, seq_x1) if show_seq else ()):
        for zz in (-R_out, R_out):
            for yy in (-TOWARD_CAMERA * R, hmax):
                pts.append((xx, yy, zz))
    pts = np.array(pts) * UNIT
    cam = fit_camera_rect(pts, to_cam, res, plan.rect, lens_mm=params.lens_mm)
    cam.clip_end = max(cam.clip_end, 10.0 * float(np.linalg.norm(np.asarray(cam.location) - np.asarray(cam.target))))
    at = heb_c if show_heb else np.array([0.5 * (seq_x0 + seq_x1), 0.0, 0.0])
    wpp = float(world_per_pixel(cam, [at * UNIT], res)[0])
    px_per_layout = UNIT / wpp  # image pixels per layout pixel
    size_world = tpx * wpp

    # ---------------------------------------------------------------- mural
    mural, m_w, m_h, cov = None, 0, 0, np.zeros(1)
    if show_seq:
        mural, m_w, m_h, cov = _mural(trace, orig, h, arcs, seq, caller, callee, call_lit, params, cam,
                                      (seq_x0, seq_x1, mural_top, mural_bot))

    # ---------------------------------------------------------------- labels
    labels = [LabelSet.empty()]
    if params.show_labels and show_heb:
        labels.append(ring_labels(h, sect, px_per_layout, tpx, lambda p: ((p + heb_c) * UNIT).astype(np.float32),
                                  size_world, 400))
    if params.show_labels and show_seq:
        labels.append(icicle_labels(h, sh, bx0, bx1, bz0, bz1, leaf_band & ~thr_grp, px_per_layout, tpx, size_world))
        labels.append(time_labels(trace, seq, seq_x0, mural_top, mural_bot, tpx, size_world, px_per_layout))
    swatch_mats = [f"TV3D_xv_sw_{k:02d}" for k in range(swatch_rgb.shape[0])]
    for name, c in zip(swatch_mats, swatch_rgb):
        materials[name] = MaterialSpec(name, tuple(float(v) for v in c) + (1.0,), cushion=False, from_attribute=False)
    hud_labels, legend_layer, hud_dist = hud_layers(plan, cam, res, swatch_rgb, swatch_mats)
    for name, c in (("TV3D_text_dark", TEXT_DARK), ("TV3D_text_light", TEXT_LIGHT), *MATERIAL_TEXT_COLOURS.items()):
        materials[name] = MaterialSpec(name, c, kind="text", cushion=False, from_attribute=False)
    layers = (([ring, tubes] if show_heb else []) + ([icicle, mural] if show_seq else [])
              + ([legend_layer] if legend_layer is not None else []))
    grips = None
    if params.time_window is not None and show_seq:  # the window's handles on the whole trace's time, linked to the mural
        span_t = (float(loaded_trace.start.min()), float(loaded_trace.end.max()))
        handles = window_handles(tuple(float(x) for x in params.time_window), span_t, seq_x0 - 0.55 * tpx,
                                 0.3 * tpx, mural_top, mural_bot, materials)
        layers += handles
        grips = {"span": list(span_t), "bar_z": [mural_top * UNIT, mural_bot * UNIT],  # world z of the run's ends
                 "times": [float(x) for x in params.time_window], "at": handles[0].positions[2:4].tolist(),
                 "size": float(handles[0].scales[2, 0])}
    all_labels = LabelSet.concat(labels + [hud_labels])
    sun = -view_direction(params.azimuth - 35.0, 50.0)
    spec = SceneSpec(
        layers=layers, labels=all_labels, legend=[], materials=materials, camera=cam,
        lights=[LightSpec("TV3D_key", "SUN", tuple(sun), 3.0),
                LightSpec("TV3D_fill", "SUN", tuple(-view_direction(params.azimuth + 60.0, 10.0)), 0.8)],
        resolution=res, background=tuple(BACKGROUND),
        meta={"layout": "extravis", "views": views, "n_calls": int(seq.size), "n_merged_calls": len(loaded_trace) - len(trace), "n_pairs": int(len(pairs)), "n_tubes": int(src.size) if show_heb else 0,
              "n_leaves": int(leaves.size), "n_elements": int(arcs.shown.sum()), "mural_px": [m_w, m_h],
              "n_labels": int(sum(len(x) for x in labels)), "title": plan.title, "text_px": tpx,
              "content_rect": list(plan.rect), "hud_distance": hud_dist,
              "n_lit_calls": None if call_lit is None else int(call_lit.sum()),
              "mural_coverage": float(cov.mean()), "window_grips": grips, "params": params.to_dict()},
    )
    return spec.validate()


def _tube_colours(trace: Trace, seq, params: ExtravisParams, tmean):
    """The bundles' colours: (the `GRADIENT_STEPS` step colours, each tube's step per segment):
    "gradient" runs caller → callee along each tube; otherwise a tube's one colour says when its
    calls happen on average (``tmean``) in the calls shown (``seq``)."""
    steps = np.arange(GRADIENT_STEPS)
    if params.color_mode == "gradient":
        return gradient_rgb((steps + 0.5) / GRADIENT_STEPS), np.tile(steps, (tmean.size, 1))
    span = max(float(trace.start[seq].max() - trace.start[seq].min()), 1e-9)
    tnorm = (tmean - float(trace.start[seq].min())) / span
    return (palette.sequential((steps + 0.5) / GRADIENT_STEPS),
            np.repeat(np.minimum((tnorm * GRADIENT_STEPS).astype(np.int64), GRADIENT_STEPS - 1)[:, None],
                      GRADIENT_STEPS, axis=1))


def _sequence_icicle(h: Hierarchy, arcs, dl: int, frame, ic_h: float, leaf_h: float, heights, slot, slot_rgb,
                     mat_names):
    """The sequence view's icicle of the shown elements down to the level's depth ``dl``: bands
    ``ic_h`` tall (a thread spans the bands below "threads"; the leaves' band ``leaf_h``: names run
    upwards in it) over the columns x0..x1 from ``top`` (``frame``: x0, x1, top; layout pixels).
    Returns (its layer, (the elements, their boxes x0, x1, z0, z1, in the leaves' band, the
    "threads" group))."""
    seq_x0, seq_x1, seq_top = frame
    sh = np.flatnonzero(arcs.shown & (h.depth > 0) & (h.depth <= dl))
    band = np.where(h.kind[sh] == THREAD, dl - 1, h.depth[sh] - 1)
    top_band = np.where(h.kind[sh] == THREAD, 1, band)
    bx0 = seq_x0 + np.asarray(arcs.f0[sh]) * (seq_x1 - seq_x0)
    bx1 = seq_x0 + np.asarray(arcs.f1[sh]) * (seq_x1 - seq_x0)
    bz1 = seq_top - top_band * ic_h
    leaf_band = band == dl - 1
    bz0 = seq_top - band * ic_h - np.where(leaf_band, leaf_h, ic_h)
    thr_grp = h.kind[sh] == THREADS
    bz1 = np.where(thr_grp, seq_top, bz1)
    bz0 = np.where(thr_grp, seq_top - ic_h, bz0)
    bdep = heights[sh] * 0.6
    pos = np.stack([(bx0 + bx1) / 2, bdep / 2, (bz0 + bz1) / 2], axis=1)
    inset = np.minimum(0.08 * ic_h, 0.15 * (bx1 - bx0))
    scl = np.stack([np.maximum(bx1 - bx0 - 2 * inset, 0.3), bdep, (bz1 - bz0) - 0.08 * ic_h], axis=1)
    icicle = InstanceLayer("sequence_icicle", (pos * UNIT).astype(np.float32), (scl * UNIT).astype(np.float32),
                           np.hstack([slot_rgb[slot[sh]], np.ones((sh.size, 1))]).astype(np.float32),
                           slot[sh].astype(np.int32), mat_names,
                           {"call_index": np.full(sh.size, -1, np.int32), "element_index": sh.astype(np.int32)})
    return icicle, (sh, bx0, bx1, bz0, bz1, leaf_band, thr_grp)


def _mural(trace: Trace, orig, h: Hierarchy, arcs, seq, caller, callee, call_lit, params: ExtravisParams, cam, box):
    """The sequence view's mural (`mural_image`) of the calls ``seq`` over ``box`` (x0, x1, top,
    bottom; layout pixels), as many pixels as it covers in the image.  Returns (its layer, width,
    height, each column's coverage); its ``row_calls``: the middle call of each pixel line, as an
    index into the loaded trace (``orig``: of the shown trace's calls, None when the same)."""
    seq_x0, seq_x1, mural_top, mural_bot = box
    res = tuple(params.resolution)
    corners = np.array([[seq_x0, 0.0, mural_top], [seq_x1, 0.0, mural_top], [seq_x0, 0.0, mural_bot],
                        [seq_x1, 0.0, mural_bot]]) * UNIT
    pc = project(cam, corners, res)
    m_w = int(max(8, round(abs(pc[1, 0] - pc[0, 0]))))
    m_h = int(max(8, round(abs(pc[2, 1] - pc[0, 1]))))
    loaded = orig if orig is not None else np.arange(len(trace))  # call index in the loaded trace
    W = call_importance(trace, int(params.importance_window), float(params.power), params.level, hierarchy_=h)[seq]
    img, cov = mural_image(h, arcs, caller, callee, W, trace.start[seq], call_lit, params.color_mode, m_w, m_h)
    line_call = np.minimum(((np.arange(m_h) + 0.5) * seq.size / m_h).astype(np.int64), seq.size - 1)
    mural = ImageLayer("sequence_mural", img, tuple(corners[0]), tuple(corners[1] - corners[0]),
                       tuple(corners[2] - corners[0]),
                       attributes={"row_calls": loaded[seq[line_call]].astype(np.int32)})
    return mural, m_w, m_h, cov


def window_handles(window, span, x, w, top, bot, materials) -> list:
    """The time window as a pair of handles in the scene (EXTRAVIS Sec. 3: the window chosen on
    the sequence view): a thin bar left of the mural is the whole trace's time, top to bottom,
    the window a dark stretch on it between two handle boxes (``window_time``: the moment
    each stands for, µs).  Layout pixels in, world layers out."""
    t0, t1 = span
    frac = lambda t: (min(max(t, t0), t1) - t0) / max(t1 - t0, 1e-300)  # noqa: E731
    z = lambda t: top - frac(t) * (top - bot)  # noqa: E731
    za, zb = z(window[0]), z(window[1])
    hz = 0.25 * w
    boxes = [((x, 0.3 * w, 0.5 * (top + bot)), (w, 0.6 * w, top - bot), 0, -1.0),
             ((x, 0.2 * w, 0.5 * (za + zb)), (w * 1.3, 0.8 * w, max(za - zb, hz)), 1, -1.0),
             ((x, 0.0, za), (w * 2.2, 1.2 * w, 2 * hz), 1, window[0]),
             ((x, 0.0, zb), (w * 2.2, 1.2 * w, 2 * hz), 1, window[1])]
    for name, rgb in (("TV3D_xv_window", (0.82, 0.82, 0.82)), ("TV3D_xv_window_sel", (0.12, 0.12, 0.14))):
        materials[name] = MaterialSpec(name, rgb + (1.0,), cushion=False, from_attribute=False)
    mats = ["TV3D_xv_window", "TV3D_xv_window_sel"]
    pos = np.array([b[0] for b in boxes]) * UNIT
    scl = np.array([b[1] for b in boxes]) * UNIT
    mi = np.array([b[2] for b in boxes], np.int32)
    cols = np.ones((4, 4), np.float32)
    handles = InstanceLayer("window_handles", pos.astype(np.float32), scl.astype(np.float32), cols, mi, mats,
                            {"call_index": np.full(4, -1, np.int32),
                             "window_time": np.array([b[3] for b in boxes], np.float32)})
    return [handles]


def mural_image(h, arcs, caller, callee, W, start, call_lit, color_mode: str, width: int, height: int) -> tuple:
    """The mural's RGBA pixels (height, width, 4) and coverage (`kernels.extravis.mural_ibaa`)."""
    from ..kernels.extravis import mural_ibaa

    lo = arcs.f0 * width
    hi = arcs.f1 * width
    lc, hc, le, he = lo[caller], hi[caller], lo[callee], hi[callee]
    x0 = np.floor(np.minimum(lc, le)).astype(np.int64)
    x1 = np.maximum(np.ceil(np.maximum(hc, he)).astype(np.int64), x0 + 1)
    x0 = np.clip(x0, 0, width - 1)
    x1 = np.clip(x1, 1, width)
    xc = 0.5 * (lc + hc) - 0.5
    xe = 0.5 * (le + he) - 0.5
    n = caller.size
    if color_mode == "gradient":
        c0 = np.tile(gradient_rgb(0.0), (n, 1))
        c1 = np.tile(gradient_rgb(1.0), (n, 1))
    else:
        span = max(float(start.max() - start.min()), 1e-9)
        c0 = palette.sequential((start - start.min()) / span)
        c1 = c0
    if call_lit is not None:
        c0 = np.where(call_lit[:, None], c0, PALE)
        c1 = np.where(call_lit[:, None], c1, PALE)
    rgb, cov = mural_ibaa(x0, x1, xc, xe, np.ascontiguousarray(c0, np.float64), np.ascontiguousarray(c1, np.float64),
                          np.ascontiguousarray(W, np.float64), int(height), int(width), BACKGROUND.astype(np.float64))
    img = np.ones((height, width, 4), np.float32)
    img[:, :, :3] = rgb
    return img, cov


def icicle_labels(h, sh, bx0, bx1, bz0, bz1, upright, px_per_layout, tpx, size_world) -> LabelSet:
    """Names on the sequence view's icicle boxes that hold them: along the box in the upper
    bands (at least 3 em wide), upwards in the leaves' taller band (a column at least 1 em
    wide, so the columns of the mural are named)."""
    from .extravis_heb import ASCENT, DESCENT, band_label, fit_element

    texts, anchors, rots, els = [], [], [], []
    half = 0.5 * (ASCENT - DESCENT) * size_world / UNIT  # the baseline below the text's middle
    for k in np.argsort(-(bx1 - bx0)):
        w_px = (bx1[k] - bx0[k]) * px_per_layout
        h_px = (bz1[k] - bz0[k]) * px_per_layout
        name = band_label(h, int(sh[k]), bool(upright[k]))
        if name is None:
            continue
        xc, zc = 0.5 * (bx0[k] + bx1[k]), 0.5 * (bz0[k] + bz1[k])
        if upright[k]:
            if w_px < 1.0 * tpx:
                continue
            text = fit_element(h, int(sh[k]), name, (h_px - 0.6 * tpx) / tpx)
            at, rot = (xc + half, zc), (np.pi / 2, -np.pi / 2, 0.0)
        else:
            if w_px < 3.0 * tpx or h_px < 1.1 * tpx:
                continue
            text = fit_element(h, int(sh[k]), name, (w_px - 0.6 * tpx) / tpx)
            at, rot = (xc, zc - half), (np.pi / 2, 0.0, 0.0)
        if not text:
            continue
        texts.append(text)
        els.append(int(sh[k]))
        anchors.append((at[0] * UNIT, -LABEL_FRONT * size_world, at[1] * UNIT))
        rots.append(rot)
    n = len(texts)
    return LabelSet(texts, np.asarray(anchors, np.float32).reshape(n, 3), np.full(n, size_world, np.float32),
                    ["TV3D_text_dark"] * n, np.ones(n, np.uint8), ["element"] * n, np.full(n, -1, np.int32),
                    np.asarray(rots, np.float32).reshape(n, 3), None,
                    {"element_index": np.asarray(els, np.int32).reshape(n)})


#: at most this many more decimals than the axis' own for a moment that would read like another
MAX_EXTRA_DECIMALS = 3


def axis_times(times, unit: XUnit = TIME) -> list:
    """Moments (µs from the trace start) as the icicle's time axis writes them: one unit for
    all, "0" for zero (`annotate.nice_ticks`, `annotate.tick_texts`; a merged trace's
    ``unit``: positions in its measure, `annotate.XUnit`).  A moment whose text
    would equal an earlier one's (the last call's start 3.29 s beside the round mark 3 s: both
    "3 s") gets more decimals, up to `MAX_EXTRA_DECIMALS`, until it reads differently."""
    times = [float(t) for t in times]
    _, scale, tick_unit, dec = unit.nice_ticks(max(max(abs(t) for t in times), 1e-3))
    shown, texts = [], []  # the values the texts say ("3.0 s" says what "3 s" says), the texts
    for t in times:
        d = dec
        while t != 0 and round(t / scale, d) in shown and d < dec + MAX_EXTRA_DECIMALS:
            d += 1
        shown.append(round(t / scale, d))
        texts.append(unit.tick_texts([t], scale, tick_unit, d)[0])
    return texts


#: the sequence view's time marks keep this many label sizes between their middles
TIME_MARK_GAP_EM = 1.6


def time_labels(trace, seq, x, top, bot, tpx, size_world, px_per_layout) -> LabelSet:
    """Times left of the mural, in the icicle's time axis format (one unit, "0" for zero):
    the start of the first call at its top, of the last at its bottom, and between them the
    axis' round times (`annotate.nice_ticks`) each beside the row of the first call that
    starts at or after it, where they keep `TIME_MARK_GAP_EM` from the others.  Rows are
    calls, not equal times: the marks show where the program's time went quickly (marks
    close together: few calls) or slowly (far apart); the ends alone hid that."""
    starts = trace.start[seq]
    t_first, t_last = float(starts[0]), float(starts[-1])
    per_em = tpx / px_per_layout  # a label size, in layout units
    # (time, height of its text's middle, of its baseline): the ends inside the mural's edges
    marks = [(t_first, top - 0.55 * per_em, top - 0.9 * per_em), (t_last, bot + 0.35 * per_em, bot)]
    unit = x_unit_of(trace)
    for t in unit.nice_ticks(max(abs(t_first), abs(t_last), 1e-3))[0].tolist():
        if not t_first < t < t_last:
            continue
        z = top + (bot - top) * float(np.searchsorted(starts, t, side="left")) / max(seq.size, 1)
        if all(abs(z - m[1]) >= TIME_MARK_GAP_EM * per_em for m in marks):
            marks.append((t, z, z - 0.35 * per_em))
    rounds = axis_times([m[0] for m in marks[2:]] + [marks[0][0], marks[1][0]], unit)  # the ends yield (`axis_times`)
    texts = rounds[-2:] + rounds[:-2]
    off = 1.3 * per_em  # left of the window's bar
    anchors = [((x - off) * UNIT, -LABEL_FRONT * size_world, m[2] * UNIT) for m in marks]
    n = len(marks)
    return LabelSet(texts, np.asarray(anchors, np.float32), np.full(n, size_world, np.float32),
                    ["TV3D_text_muted"] * n, np.full(n, 2, np.uint8), ["axis"] * n, np.full(n, -1, np.int32),
                    None, None)


__all__ = ["extravis_layout", "mural_image", "shown_trace", "window_calls"]
