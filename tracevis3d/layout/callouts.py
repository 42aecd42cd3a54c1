"""Callout stage: names for calls too narrow to carry their own, in the free room above them.

A short program spends its time in calls of a few pixels: in a 16 ms ``json.tool`` run the
argument parser and the decoder are boxes 10-20 pixels wide, under every size of their
names, so the icicle's label stage (`labels.icicle_labels`) leaves them unnamed while the
sky above the stacks stays empty.  A presenter names them with a callout: the name in that
empty room, a thin leader down to the box.

The rule, after every other label is placed:

- **Candidates** are drawn boxes (not folded bands, not merged clusters) at least
  `CALLOUT_MIN_PX` wide on the image, whose face carries no label and lies under none (a
  member of a named row or group is named already), of a function not yet named anywhere
  in the figure (each name once).  The runtime's own work is left out: a call that import
  machinery or thread start-up makes, other than a module body (the ``io.open_code`` and
  ``marshal.loads`` of every import).  Those right under a named call come first
  (`NAME_HOPS`: the parts of what is named say more than a box deep in a nameless stack),
  C built-ins (``id``, ``len``) last, the widest first among equals; `MAX_CANDIDATES` are
  tried.
- **A place** for the name is the lowest height above the box where the name's rectangle
  (`PAD` em clear around it) touches nothing drawn: boxes and their extruded tops, the axis,
  lane names, title, legend, earlier callouts and their leaders.  It stays inside the
  candidate's own lane (the top lane: up to the content's top edge) and over the lanes
  (never in the lane names' column, where it would read as a lane's name).  The name stands
  centred over its leader, or from it to the right or to the left, in the longest of its
  forms (`text.name_candidates`, up to `CALLOUT_MAX_EM`) or a shorter one that keeps a
  qualifier: whichever blocks the fewest leaders of the candidates still to come (names over
  a cluster of narrow calls form a staircase rather than a lid), then the longest form, then
  the lowest place.  Only where no such place is free does the name stand farther aside
  (`SIDE_STEPS` of `SIDE_STEP_EM`), its leader slanted at most `MAX_SLANT`, and never over or
  within `ASIDE_CLEAR_EM` of another candidate's box (it would read as that box's name).
- **The leader** runs up the middle of the box's face to its top edge, then straight to
  `GAP_EM` under the name's nearest point, in front of the faces.  A place whose leader would
  cross another leader or a name (on the boxes or a callout), or come within
  `LEADER_APART_EM` of another leader over the stacks, is not taken.
- At most ``max_callouts`` (the parameter, `params.shared.MAX_CALLOUTS`, and what is left of
  the placer's label budget).

Labels are kind ``call`` with the call's ``call_index`` (picking names the call) and
``callout_leader``, the index of their leader (other labels: -1); the leaders are a
CurveLayer ``callout_leaders`` (material ``TV3D_callout_leader``, the call in ``call_index``).
"""
from __future__ import annotations

import numpy as np

from .annotate import cells_free, occupancy_grid, summed_area
from .camera import euler_xyz, project, world_per_pixel
from ..kernels.drawn import mark_drawn_and_named
from .geometry import AtIndex
from .labels import LEADER_PX, LEADER_RGB, PAD, box_face_pixels, place_facing_text, text_basis
from .spec import CurveLayer, LabelSet
from .text import ASCENT, DESCENT, has_qualifier, name_candidates, text_width

CALLOUT_MIN_PX = 4.0  # narrower boxes get no callout: the leader would point at nothing seen
NAME_HOPS = 3  # candidates rank by the levels up to a named ancestor (1, 2, 3 or more), then by width
MAX_CANDIDATES = 32  # the widest unnamed boxes tried, at most (each tried costs ~0.5 ms)
CALLOUT_MAX_EM = 22.0  # the longest form of a name a callout takes (else a shorter one)
GAP_EM = 0.3  # between the leader's top and its name, and the name's margin above the stack
STEP_EM = 0.25  # heights tried, this far apart
MAX_STEPS = 4000  # heights tried, at most (1,000 label sizes)
SIDE_STEP_EM = 3.0  # a name farther aside than its own width: in steps of this many label sizes
SIDE_STEPS = 4
MAX_SLANT = 1.0  # a leader runs at most this far sideways for every pixel it rises
ASIDE_CLEAR_EM = 1.5  # a name aside keeps this far (sideways) from every other candidate's box
LEADER_APART_EM = 0.6  # leaders keep this far apart (two leaders closer read as one)
LEADER_MATERIAL = "TV3D_callout_leader"


def text_cells(labels: LabelSet, cam, res, tpx: float, to_cam, cell: float) -> np.ndarray:
    """`annotate.occupancy_grid` of the texts of ``labels`` (world labels facing the camera,
    ``tpx`` pixels tall; those that run upwards, `labels.place_facing_text`'s ``vertical``,
    turned a quarter)."""
    n = len(labels)
    if n == 0:
        return occupancy_grid(res, cell)
    p = project(cam, labels.anchors.astype(np.float64), res)
    w = np.array([text_width(t) for t in labels.texts]) * tpx
    flat = np.all(np.abs(labels.rotation - euler_xyz(*text_basis(to_cam))[None]) <= 1e-4, axis=1)  # not upwards
    # a centred text's baseline anchor: the text spans w across, ASCENT above and DESCENT under it
    x0 = np.where(flat, p[:, 0] - 0.5 * w, p[:, 0] - ASCENT * tpx)
    x1 = np.where(flat, p[:, 0] + 0.5 * w, p[:, 0] + DESCENT * tpx)
    y0 = np.where(flat, p[:, 1] - ASCENT * tpx, p[:, 1] - 0.5 * w)
    y1 = np.where(flat, p[:, 1] + DESCENT * tpx, p[:, 1] + 0.5 * w)
    return occupancy_grid(res, cell, rects=np.stack([x0, y0, x1, y1], 1))


def _crosses_any(p, q, seg) -> bool:
    """Does the pixel segment pq cross any of the segments ``seg`` ((m, 2, 2): from, to)?
    Touching ends do not count (the orientation test: each segment's ends lie strictly on
    both sides of the other's line)."""
    if len(seg) == 0:
        return False
    a, b = seg[:, 0], seg[:, 1]

    def side(u, v, w):
        return (v[..., 0] - u[..., 0]) * (w[..., 1] - u[..., 1]) - (v[..., 1] - u[..., 1]) * (w[..., 0] - u[..., 0])
    return bool(np.any((side(a, b, p) * side(a, b, q) < 0) & (side(p, q, a) * side(p, q, b) < 0)))


def _hops_to_a_name(trace, d, named_ids, which) -> np.ndarray:
    """Per drawn call ``which``: how many drawn levels up its nearest named ancestor stands (a
    box whose call is in ``named_ids``, loaded-trace call ids), capped at `NAME_HOPS`: a call
    right under a named one (``json.load`` under ``json.tool.main``) says what that one does;
    one deep inside an unnamed stack says less."""
    drawn = np.zeros(len(trace), np.bool_)
    named = np.zeros(len(trace), np.bool_)
    named_ids = named_ids[named_ids >= 0].astype(np.int64)
    is_named = np.zeros(int(named_ids.max(initial=-1)) + 1, np.bool_)
    is_named[named_ids] = True  # a lookup, not np.isin: O(drawn calls) whatever the number of names
    if isinstance(d.idx, np.ndarray):  # the drawn calls' fields gathered: arrays by drawn call
        n = d.idx.size
        mark_drawn_and_named(drawn, named, np.arange(n), np.asarray(d.idx, np.int64), False, np.asarray(d.folded),
                             np.asarray(d.call_id), True, is_named)
    else:  # read where they lie (a whole figure of 10^7 calls: no gathers of their fields)
        src = d.source
        mark_drawn_and_named(drawn, named, src.pos, src.idx, bool(src.whole), src.folded, src.orig, False, is_named)
    hops = np.full(which.size, NAME_HOPS, np.int64)
    seen = np.zeros(which.size, np.int64)
    anc = trace.parent[d.idx[which]]
    for _ in range(4 * NAME_HOPS):  # folded levels between do not count
        live = (anc >= 0) & (hops == NAME_HOPS) & (seen < NAME_HOPS)
        if not live.any():
            break
        a = np.maximum(anc, 0)
        seen += live & drawn[a]
        hops = np.where(live & named[a], np.minimum(seen, NAME_HOPS), hops)
        anc = np.where(live, trace.parent[a], -1)
    return hops


def callout_labels(placer, trace, d, single, ft, frame, t0: float, tpx: float, res, occupied: np.ndarray, cell: float,
                   content_rect, max_callouts: int, other_names=(), named_elsewhere=()) -> tuple:
    """(LabelSet, CurveLayer or None) of the callouts (see the module docstring).

    ``placer``: the `labels.LabelPlacer` that named the boxes (its faces and names are
    avoided; what is left of its budget bounds the callouts); ``trace``: the selection's trace
    (``d.idx`` indexes it); ``d``: the drawn calls, placed;
    ``single``: bool per drawn call, drawn as its own box (not merged); ``occupied``: the
    `annotate.occupancy_grid` (cells of ``cell`` pixels) of everything drawn and the HUD;
    ``other_names``: pixel rectangles of names placed by other stages (`layout.recursion`),
    which no leader crosses either (and which count in the label budget); ``named_elsewhere``:
    functions (display names) another stage names (`layout.inset`), not called out again."""
    empty = LabelSet.empty()
    room = min(int(max_callouts), placer.max_labels - placer.count - len(other_names))
    if room <= 0 or d.start.size == 0:
        return empty, None
    cam = frame.cam
    # read at the candidates only: no arrays over every drawn call
    x0 = AtIndex(lambda k: (d.start[k] - t0) * frame.scale_t)
    x1 = AtIndex(lambda k: (d.end[k] - t0) * frame.scale_t)
    z_lo, z_hi = AtIndex(d.face_low_at), AtIndex(d.face_high_at)
    ok = np.flatnonzero(single & ~d.folded)
    wpx, hpx = box_face_pixels(cam, res, x0[ok], x1[ok], z_lo[ok], z_hi[ok])
    keep = (wpx >= CALLOUT_MIN_PX) & (hpx >= 1.0)
    ok, wpx = ok[keep], wpx[keep]
    ok = ok[np.argsort(-wpx, kind="stable")[:MAX_CANDIDATES * 20]]
    rects, keys = placer.rects, placer.keys
    placed = placer.labels()
    named = set(ft.display[int(k)] for k in keys[keys >= 0]) | set(named_elsewhere)
    parent = trace.parent[d.idx[ok]]
    runtime_io = (parent >= 0) & np.asarray(ft.infra, np.bool_)[trace.func[np.maximum(parent, 0)]]
    runtime_io &= np.array([ft.qualname[int(f)] != "<module>" for f in d.func[ok]], np.bool_)
    ok = ok[~runtime_io]
    if rects.shape[0] and ok.size:  # a face under a name (its own, or a named row's or group's)
        under = np.zeros(ok.size, np.bool_)
        for r0, r1, r2, r3 in rects:  # a few hundred names at most
            under |= (r0 < x1[ok]) & (x0[ok] < r2) & (r1 < z_hi[ok]) & (z_lo[ok] < r3)
        ok = ok[~under]
    # the parts of named calls first, C built-ins (``id``, ``len``: little to say) last; stable: the widest
    # first among equals
    builtin = np.array([ft.family[int(f)] == "builtins" for f in d.func[ok]], np.bool_)
    ok = ok[np.argsort(_hops_to_a_name(trace, d, placed.call_index, ok) + (NAME_HOPS + 1) * builtin, kind="stable")]
    cand = []
    for c in ok.tolist():  # the widest unnamed boxes of functions not named yet, one per function
        f = ft.display[int(d.func[c])]
        if f in named:
            continue
        named.add(f)
        cand.append(c)
        if len(cand) >= MAX_CANDIDATES:
            break
    if not cand:
        return empty, None
    grid = occupied.copy()
    texts_grid = text_cells(placed, cam, res, tpx, frame.to_cam, cell)  # leaders never cross a name
    if len(other_names):
        texts_grid |= occupancy_grid(res, cell, rects=other_names)
    names_grid = texts_grid.copy()  # the names alone, without the leaders
    sat, sat_texts, sat_names = summed_area(grid), summed_area(texts_grid), summed_area(names_grid)
    cx0, cy0, cx1, _ = (float(v) for v in content_rect)
    lane_top = frame.z_base + frame.lane_heights
    h_em = ASCENT + DESCENT
    h_px = (h_em + 2 * GAP_EM) * tpx  # a name's rectangle with its margins
    texts, centres, sizes, calls, leaders = [], [], [], [], []
    # where each candidate's leader stands on the image (a name over it blocks that leader)
    cand = np.asarray(cand, np.int64)
    cand_x = 0.5 * (x0[cand] + x1[cand])
    cand_px = project(cam, np.stack([cand_x, np.zeros(cand.size), z_hi[cand]], 1), res)[:, 0]
    drawn = []  # the leaders' pieces on the image, (from, to) pixel points
    for j, c in enumerate(cand.tolist()):
        names = name_candidates(ft.display[int(d.func[c])])
        # the full name, or a shorter form that keeps a qualifier ("…ArgumentParser.__init__", not "…__init__")
        forms = [t for t in names if (t == names[0] or has_qualifier(t)) and text_width(t) <= CALLOUT_MAX_EM]
        xc = float(cand_x[j])
        base = np.array([xc, 0.0, float(z_hi[c])])
        s0 = float(world_per_pixel(cam, base[None], res)[0])
        step = STEP_EM * tpx * s0
        lane = int(d.lane[c])
        top = np.inf if lane == 0 else float(lane_top[lane]) - h_em * tpx * s0
        n_steps = int(min((top - base[2]) / step if np.isfinite(top) else MAX_STEPS, MAX_STEPS))
        if n_steps <= 0 or not forms:
            continue
        zs = base[2] + (GAP_EM + 0.5 * h_em) * tpx * s0 + step * np.arange(n_steps)
        pts = np.stack([np.full(n_steps, xc), np.zeros(n_steps), zs], 1)
        pp = project(cam, pts, res)
        above = pp[:, 1] - 0.5 * h_px >= cy0
        if not above.any():
            continue
        pts, pp, zs = pts[above], pp[above], zs[above]
        face, face_top, lane_left = project(cam, np.array([[xc, 0.0, 0.5 * (z_lo[c] + z_hi[c])], [xc, 0.0, z_hi[c]],
                                                          [0.0, 0.0, z_hi[c]]]), res)
        knee = face_top
        left = max(cx0, float(lane_left[0]))  # over the lanes, not in the lane names' column
        later = cand_px[j + 1:]  # the leaders of the candidates still to come (a name over one blocks it)
        others = np.arange(cand.size) != j
        options = []
        for f_rank, form in enumerate(forms):  # the longest form first
            w_px = (text_width(form) + 2 * PAD) * tpx
            reach = 0.5 * w_px - PAD * tpx  # the name's span a leader may reach
            offs = np.array([0.0, reach, -reach] + [sg * (reach + m * SIDE_STEP_EM * tpx)
                                                    for m in range(1, SIDE_STEPS + 1) for sg in (1.0, -1.0)])
            # every offset (rows: centred, beside, then farther aside with a slanted leader) at every height
            ux = pp[None, :, 0] + offs[:, None]
            ux = ux + np.maximum(left - (ux - 0.5 * w_px), 0.0)  # into the content rectangle
            ux = ux - np.maximum(ux + 0.5 * w_px - cx1, 0.0)
            # where the leader meets the name: straight up (the box's middle seen at that height), or slanted
            ends = np.clip(pp[None, :, 0], ux - reach, ux + reach)
            rise = knee[1] - (pp[:, 1] + 0.5 * h_em * tpx) - GAP_EM * tpx  # from the top edge of the box
            y0, y1 = np.broadcast_to(pp[:, 1] - 0.5 * h_px, ux.shape), np.broadcast_to(pp[:, 1] + 0.5 * h_px, ux.shape)
            frees = (np.abs(ends - pp[None, :, 0]) <= MAX_SLANT * rise[None]) & cells_free(
                sat, cell, ux - 0.5 * w_px, y0, ux + 0.5 * w_px, y1)
            # per offset: the lowest free height, the names still to come it stands over, and (aside) by
            rows = np.arange(offs.size)
            ks = frees.argmax(axis=1)
            uk, ek = ux[rows, ks], ends[rows, ks]
            blocked = ((later[None] > uk[:, None] - 0.5 * w_px) & (later[None] < uk[:, None] + 0.5 * w_px)).sum(axis=1)
            # a name aside, over or by another candidate's box, would read as that box's
            by = (np.abs(cand_px[None] - uk[:, None]) < ASIDE_CLEAR_EM * tpx + 0.5 * w_px) & (others[None])
            valid = frees.any(axis=1) & ~((rows > 2) & by.any(axis=1))
            for pref in np.flatnonzero(valid).tolist():
                options.append((pref > 2, int(blocked[pref]), f_rank, int(ks[pref]), pref, float(uk[pref]),
                                float(ek[pref]), form, w_px))
        failed = set()  # leaders already found crossing something (the same leader serves several names)
        for _, blocked, _, k, _, ux_k, end_x, form, w_px in sorted(options):
            if (k, round(end_x)) in failed:
                continue
            failed.add((k, round(end_x)))
            # the leader: up the box's face to its top edge (the knee), then straight to just under
            # the name, crossing no name and no other leader
            text_low = pp[k, 1] + 0.5 * h_em * tpx
            tip = np.array([end_x, text_low + GAP_EM * tpx])
            if _crosses_any(knee, tip, np.asarray(drawn).reshape(-1, 2, 2)):
                continue
            n_s = max(int(np.hypot(*(tip - knee)) / (0.5 * cell)), 2)
            way = knee[None] + (tip - knee)[None] * np.linspace(0.0, 1.0, n_s)[:, None]
            # leaders of neighbouring boxes start close: they keep `LEADER_APART_EM` apart farther up
            near = np.hypot(*(way - knee).T) < LEADER_APART_EM * tpx + cell
            far = way[~near]
            if far.size and not np.all(cells_free(sat_texts, cell, far[:, 0] - 1, far[:, 1] - 1, far[:, 0] + 1,
                                                   far[:, 1] + 1)):
                continue
            if near.any() and not np.all(cells_free(sat_names, cell, way[near, 0] - 1, way[near, 1] - 1,
                                                     way[near, 0] + 1, way[near, 1] + 1)):
                continue
            drawn += [(face, knee), (knee, tip)]
            wpp = float(world_per_pixel(cam, pts[k][None], res)[0])
            centre = pts[k].copy()
            centre[0] += (ux_k - pp[k, 0]) * wpp
            texts.append(form)
            centres.append(centre)
            sizes.append(tpx * wpp)
            calls.append(int(d.call_id[c]))
            leaders.append((xc, 0.5 * (z_lo[c] + z_hi[c]), float(z_hi[c]), xc + (end_x - pp[k, 0]) * wpp,
                            zs[k] - (0.5 * h_em + GAP_EM) * tpx * wpp, wpp))
            text_rect = (ux_k - 0.5 * w_px, pp[k, 1] - 0.5 * h_px, ux_k + 0.5 * w_px, pp[k, 1] + 0.5 * h_px)
            pad = LEADER_APART_EM * tpx  # other leaders keep this far off this one
            grid |= occupancy_grid(res, cell, rects=[text_rect], points=way, radii=1.0)
            texts_grid |= occupancy_grid(res, cell, rects=[text_rect], points=way, radii=np.where(near, 1.0, pad))
            names_grid |= occupancy_grid(res, cell, rects=[text_rect])
            sat, sat_texts, sat_names = summed_area(grid), summed_area(texts_grid), summed_area(names_grid)
            break
        if len(texts) >= room:
            break
    if not texts:
        return empty, None
    n = len(texts)
    size = np.asarray(sizes, np.float64)
    anchor, rot = place_facing_text(np.asarray(centres), cam, size, frame.to_cam)
    labels = LabelSet(texts, anchor.astype(np.float32), size.astype(np.float32), ["TV3D_text_ui"] * n,
                      np.ones(n, np.uint8), ["call"] * n, np.asarray(calls, np.int32), rot.astype(np.float32),
                      ["world"] * n, {"callout_leader": np.arange(n, dtype=np.int32)})
    lx0, lz0, lz_knee, lx1, lz1, lw = (np.asarray(v, np.float64) for v in zip(*leaders))
    y = -0.02 * size  # in front of the faces, as the names are
    pts = np.stack([np.stack([lx0, y, lz0], 1), np.stack([lx0, y, lz_knee], 1), np.stack([lx1, y, lz1], 1)], 1)
    half = 0.5 * LEADER_PX * lw
    way = np.stack([lx1 - lx0, lz1 - lz_knee], 1)  # the slanted part's direction
    way /= np.maximum(np.linalg.norm(way, axis=1), 1e-12)[:, None]
    across = np.zeros((n, 3, 3))
    across[:, :2, 0] = half[:, None]  # the stub runs up: its sides lie along x
    across[:, 2, 0], across[:, 2, 2] = -way[:, 1] * half, way[:, 0] * half
    left, right = pts - across, pts + across
    col = np.ones((n, 4), np.float32)
    col[:, :3] = LEADER_RGB
    layer = CurveLayer("callout_leaders", left.astype(np.float32), right.astype(np.float32), col,
                       np.zeros(n, np.int32), [LEADER_MATERIAL], {"call_index": np.asarray(calls, np.int32)})
    return labels, layer
