"""Recursion stage: a tower of recursive calls named once, for what it is.

A recursion stacks the same names level over level: json's encoder nests
``_iterencode_dict › _iterencode_list`` 105 levels deep, a walker recurses 900 times
through ``walk › <genexpr> › sum``.  The icicle draws a tower whose levels, narrow or
squeezed, say nothing one by one, and the reader cannot tell a recursion from a deep stack
of distinct calls.  A presenter writes on it what it is.

The rule:

- **Towers.** Per shown call, its recursion depth (`kernels.recursion.recursion_depth`: the
  calls of its own function open around it).  A chain (the calls that share an outermost
  call of one function) spans the levels from its outermost call to its deepest call; one
  that spans at least `MIN_LEVELS` levels of the stack is a recursion (the runtime's own,
  ``exec`` through every nested import, is not named).  Chains whose outermost call opens
  within `MAX_CYCLE` levels inside another's (the functions of one cycle) form one tower, named
  by its functions in the order they first open ("walk › <genexpr> › sum") and by the
  levels it spans: "2,700-level recursion: walk › <genexpr> › sum".
- **Which.** The widest towers on the image, at most `MAX_TOWERS`, each at least
  `MIN_TOWER_EM` label sizes wide (a thinner one is a needle no name can stand over).
- **Where.** Over the tower, centred on it, in the free room above it, at most
  `SKY_REACH_EM` over its highest call (inside its lane: the
  names of other lanes' calls are not this tower's), as the callouts take theirs
  (`layout.callouts`, which then avoid it); where the sky over the tower is taken (a
  tower up to its lane's top), by its side (`GAP_EM` from it, level with its middle) where
  nothing is drawn; else on a white plate on the tower's face, in its upper part, clear of
  every name already placed: the plate covers only levels too thin or too narrow to be
  named.

Labels are kind ``group`` (they name a group of calls), ``call_index`` the tower's outermost
call (picking selects it); the plates are an InstanceLayer ``<prefix>recursion_plates``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels.recursion import recursive_in_run, running_max_by_segment
from .annotate import cells_free, occupancy_grid, summed_area
from .callouts import text_cells
from .camera import project, world_per_pixel
from .geometry import AtIndex
from .labels import PAD, PLATE_DEPTH, place_facing_text
from .spec import InstanceLayer, LabelSet
from .text import ASCENT, DESCENT, name_candidates, text_width

MIN_LEVELS = 12  # a recursion spans at least this many levels of the stack
MAX_TOWERS = 3  # towers named per figure, the widest first
MAX_TRIED = 12  # towers tried at most (a tower no name fits on is passed over)
MAX_GROUPS = 256  # recursions looked at, the widest (each a few microseconds; a hostile trace has millions)
MERGE_GAP = 0.01  # recursions of one function at one level this share of the figure's time apart are two
MAX_CYCLE = 4  # a chain opening this many levels or fewer inside a tower's outermost call is of its cycle
MIN_TOWER_EM = 3.0  # a tower named is at least this many label sizes wide on the image
MAX_TEXT_EM = 34.0  # the longest form of a tower's name
STEP_EM = 0.25  # heights tried, this far apart
GAP_EM = 0.5  # a name by a tower's side stands this far from it
SKY_REACH_EM = 1.0  # a name over a tower stands at most this far over its highest call
PLATE_MATERIAL = "TV3D_name_plate"


@dataclass
class Tower:
    outer: int  # the outermost call (index among the shown calls)
    funcs: list  # function ids of the cycle, in the order they first open
    levels: int  # levels of the stack from the outermost call to the deepest recursive call
    lane: int
    start: float  # µs, the outermost call's
    end: float


#: `recursive_calls` reads this many shown calls at a time (`recursive_in_run`: its outputs' room,
#: 16 bytes a call, over these only), or one tree where a tree holds more
RECURSION_CHUNK_CALLS = 1 << 19


def recursive_calls(func, idx, parent, infra=None, chunk: int = RECURSION_CHUNK_CALLS) -> tuple:
    """``(deep, outer)``: the shown calls inside a recursion of their function
    (`recursion_depth`'s ``rec`` > 1, a function of ``infra`` left out), ascending, and the
    outermost call of each one's chain, for the shown calls ``idx`` (calls of ``func``'s
    trace) of the forest ``parent`` (pre-order, -1 for roots).  Computed a run of whole trees
    at a time (cut at roots, where the kernel's stack of open calls is empty: the same
    values), each run read where it lies (`kernels.recursion.recursive_in_run`: the open
    calls' state on its stack, `recursion_depth`'s values), so it holds no array over every
    shown call but the roots."""
    n = int(parent.shape[0])
    roots = np.flatnonzero(parent < 0)
    cuts = np.array([0, n])
    if roots.size and roots[0] == 0:  # else not a forest in pre-order from its first call: one run
        cuts = np.unique(np.append(roots[np.minimum(np.searchsorted(roots, np.arange(0, n, chunk)),
                                                    roots.size - 1)], n))
    del roots
    infra_of = np.zeros(0, np.bool_) if infra is None else np.ascontiguousarray(infra, np.bool_)
    dt = np.int32 if n < np.iinfo(np.int32).max else np.int64  # (4 bytes a recursive call where they fit)
    n_funcs = int(func.max(initial=-1)) + 1

    def run(ab):  # a run of whole trees, read where it lies (`kernels.recursion.recursive_in_run`)
        deep, outer = recursive_in_run(func, idx, parent, ab[0], ab[1], infra_of, n_funcs)
        return deep.astype(dt, copy=False), outer.astype(dt, copy=False)

    parts = [run(ab) for ab in zip(cuts[:-1].tolist(), cuts[1:].tolist())]
    if not parts:
        return np.zeros(0, dt), np.zeros(0, dt)
    return np.concatenate([d for d, _ in parts]), np.concatenate([o for _, o in parts])


def recursion_towers(sel, infra=None) -> list:
    """The recursions of the selection ``sel`` (`select.Selection`) spanning at least
    `MIN_LEVELS` levels, merged into towers (see the module docstring), widest first.
    ``infra`` (bool per function, `naming.FunctionTable.infra`): functions of the runtime
    (``exec`` runs a module that imports one more: the import machinery recurses through
    every import) open no tower."""
    tr = sel.trace
    if sel.idx.size == 0:
        return []
    deep, outer_deep = recursive_calls(tr.func, sel.idx, sel.parent, infra)
    if deep.size == 0:
        return []
    func = AtIndex(lambda k: tr.func[sel.idx[k]])  # read at the recursions' calls only
    # read at the recursions' calls only (no copies of every shown call's depth and times)
    depth = AtIndex(lambda k: tr.depth[sel.idx[k]].astype(np.int64))
    # per chain (its outermost call): the deepest level any of its calls reaches
    chains, inv = np.unique(outer_deep, return_inverse=True)
    reach = np.full(chains.size, -1, np.int64)
    np.maximum.at(reach, inv, depth[deep])
    span = reach - depth[chains] + 1
    keep = span >= MIN_LEVELS
    chains, reach = chains[keep], reach[keep]
    if chains.size == 0:
        return []
    start, end = AtIndex(lambda k: tr.start[sel.idx[k]]), AtIndex(lambda k: tr.end[sel.idx[k]])
    # chains of one function that open at one level one after another (a generator's resumptions, a
    # walker called in a loop) are one recursion unless `MERGE_GAP` of the figure's time lies between:
    # its calls' stretch, its deepest level, its first chain's outermost call
    lane_of, level, f_of, c_start = sel.lane[chains], depth[chains], func[chains], start[chains]
    order = np.lexsort((c_start, f_of, level, lane_of))
    gap = MERGE_GAP * (sel.t1 - sel.t0)
    same = np.zeros(order.size, np.bool_)
    same[1:] = ((lane_of[order][1:] == lane_of[order][:-1]) & (level[order][1:] == level[order][:-1])
                & (f_of[order][1:] == f_of[order][:-1]))
    # the latest end so far within each key (a running maximum that restarts where the key changes)
    prev_end = running_max_by_segment(end[chains][order].astype(np.float64), ~same)
    new = ~same
    new[1:] |= c_start[order][1:] - prev_end[:-1] > gap
    ginv = np.empty(order.size, np.int64)
    ginv[order] = np.cumsum(new) - 1
    groups = np.arange(int(new.sum()))
    g_start = np.full(groups.size, np.inf)
    g_end = np.full(groups.size, -np.inf)
    g_reach = np.full(groups.size, -1, np.int64)
    np.minimum.at(g_start, ginv, start[chains])
    np.maximum.at(g_end, ginv, end[chains])
    np.maximum.at(g_reach, ginv, reach)
    g_outer = np.full(groups.size, -1, np.int64)
    for k in np.argsort(start[chains], kind="stable")[::-1].tolist():  # the earliest chain's outer call last
        g_outer[ginv[k]] = chains[k]
    widest = np.argsort(g_start - g_end, kind="stable")[:MAX_GROUPS]  # towers are the widest: bounded work
    towers: list = []
    for g in widest[np.argsort(depth[g_outer[widest]], kind="stable")].tolist():  # outermost first
        o = int(g_outer[g])
        home = None
        for t in towers:  # a chain that opens just inside a tower's outermost call: of its cycle
            if (t.lane == sel.lane[o] and t.start <= g_start[g] and g_end[g] <= t.end
                    and 0 < depth[o] - depth[t.outer] <= MAX_CYCLE):
                home = t
                break
        if home is None:
            towers.append(Tower(o, [int(func[o])], int(g_reach[g] - depth[o] + 1), int(sel.lane[o]),
                                float(g_start[g]), float(g_end[g])))
        else:
            if int(func[o]) not in home.funcs:
                home.funcs.append(int(func[o]))
            home.levels = max(home.levels, int(g_reach[g] - depth[home.outer] + 1))
    towers.sort(key=lambda t: -(t.end - t.start))
    return towers


def tower_texts(tower: Tower, ft) -> list:
    """The forms of a tower's name, longest first: "105-level recursion: json.encoder._iterencode_dict
    › json.encoder._iterencode_list", then shorter forms of the functions' names."""
    names = [name_candidates(ft.display[f]) for f in tower.funcs]
    head = f"{tower.levels:,}-level recursion: "
    forms = []
    for k in range(max(len(n) for n in names)):
        parts = [n[min(k, len(n) - 1)] for n in names]
        for i, part in enumerate(parts):  # two functions of one name (``And.parseImpl``, ``MatchFirst.parseImpl``)
            depth = k           # keep the forms that tell them apart
            while depth > 0 and sum(p == part for p in parts) > 1:
                depth -= 1
                parts[i] = part = names[i][min(depth, len(names[i]) - 1)]
        text = head + " › ".join(parts)
        if text_width(text) <= MAX_TEXT_EM and text not in forms:
            forms.append(text)
    if not forms:  # a cycle of many functions: as many of its first ones as fit, and how many more
        short = [n[-1] for n in names]
        for m in range(len(short) - 1, 0, -1):
            text = f"{head}{' › '.join(short[:m])} › {len(short) - m} more"
            if text_width(text) <= MAX_TEXT_EM or m == 1:
                forms.append(text)
                break
        if not forms:
            forms.append(head + short[0])
    return forms


def recursion_labels(sel, d, ft, frame, t0: float, tpx: float, res, occupied: np.ndarray, cell: float,
                     content_rect, names: LabelSet, name_rects, name_prefix: str = "",
                     max_names: int = MAX_TOWERS) -> tuple:
    """(LabelSet, plate InstanceLayer or None, pixel rectangles taken) of the towers' names.

    ``d``: the drawn calls, placed; ``occupied``: the `annotate.occupancy_grid` (``cell``
    pixels) of everything drawn and the HUD; ``names``: the labels placed so far (avoided);
    ``name_rects``: their faces (the placer's ``rects``, world x0, z0, x1, z1);
    ``max_names``: what is left of the figure's label budget (``max_labels``)."""
    empty = LabelSet.empty(), None, []
    room = min(MAX_TOWERS, int(max_names))
    towers = recursion_towers(sel, ft.infra) if room > 0 else []
    if not towers:
        return empty
    cam = frame.cam
    texts_grid = text_cells(names, cam, res, tpx, frame.to_cam, cell)
    sat = summed_area(occupied | texts_grid)
    sat_names = summed_area(texts_grid)
    cx0, cy0, cx1, _ = (float(v) for v in content_rect)
    lane_top = frame.z_base + frame.lane_heights
    h_em = ASCENT + DESCENT
    out_text, out_centre, out_size, out_call, out_plate, plates, taken = [], [], [], [], [], [], []
    drawn_depth = AtIndex(lambda k: sel.trace.depth[d.idx[k]])  # read inside a tower only
    for tower in towers[:MAX_TRIED]:  # each tried costs a pass over the drawn calls
        if len(out_text) >= room:
            break
        j = int(d.position_of(tower.outer))
        if j < 0:  # the outermost call is folded away or not drawn
            continue
        x0 = (max(tower.start, t0) - t0) * frame.scale_t
        x1 = (tower.end - t0) * frame.scale_t
        z_face = float(d.face_high_at(j))
        (px0, _), (px1, _) = project(cam, np.array([[x0, 0.0, z_face], [x1, 0.0, z_face]]), res)
        if px1 - px0 < MIN_TOWER_EM * tpx:  # the towers come widest first: the rest are needles too
            break
        box = _tower_box(tower, d, x0, x1, drawn_depth, int(sel.trace.depth[sel.idx[tower.outer]]), frame, t0)
        if box is None:  # (once per tower: a pass over the drawn calls)
            continue
        lane = int(tower.lane)
        top = np.inf if lane == 0 else float(lane_top[lane])
        xc = 0.5 * (box[0] + box[1])  # over its upper half, not its outermost call's middle
        # over the lanes, never in the lane names' column left of the time origin
        left = max(cx0, float(project(cam, np.array([[0.0, 0.0, z_face]]), res)[0, 0]))
        s0 = float(world_per_pixel(cam, np.array([[xc, 0.0, z_face]]), res)[0])
        placed = on_face = False
        forms = [f for f in tower_texts(tower, ft) if (text_width(f) + 2 * PAD) * tpx <= cx1 - cx0]
        h_px = (h_em + 2 * PAD) * tpx
        for where in ("sky", "beside", "face"):  # any form over the tower, then by it, then on a plate on it
            for form in forms:
                w_px = (text_width(form) + 2 * PAD) * tpx
                if where == "sky":  # heights from its outermost call's face up to its lane's top
                    step = STEP_EM * tpx * s0
                    n = int(min((top - z_face) / step, 4000)) if np.isfinite(top) else 4000
                    if n <= 0:
                        continue
                    zs = z_face + step * np.arange(n)
                    pp = project(cam, np.stack([np.full(n, xc), np.zeros(n), zs], 1), res)
                    ux = np.clip(pp[:, 0], left + 0.5 * w_px, cx1 - 0.5 * w_px)
                    fits = (pp[:, 1] - 0.5 * h_px >= cy0) & cells_free(sat, cell, ux - 0.5 * w_px, pp[:, 1] - 0.5 * h_px,
                                                                   ux + 0.5 * w_px, pp[:, 1] + 0.5 * h_px)
                    if np.isfinite(top):  # not over the lane above (it would read as that lane's)
                        fits &= zs + (0.5 * h_em + PAD) * tpx * s0 <= top
                    # on the tower: no higher than `SKY_REACH_EM` over its highest call (floating
                    # higher, over a taller neighbour, it names nothing)
                    fits &= zs - (0.5 * h_em + PAD) * tpx * s0 <= box[3] + SKY_REACH_EM * tpx * s0
                    if not fits.any():
                        continue
                    k = int(np.argmax(fits))
                    wpp = float(world_per_pixel(cam, np.array([[xc, 0.0, zs[k]]]), res)[0])
                    centre = np.array([xc + (ux[k] - pp[k, 0]) * wpp, 0.0, zs[k]])
                    rect = (ux[k] - 0.5 * w_px, pp[k, 1] - 0.5 * h_px, ux[k] + 0.5 * w_px, pp[k, 1] + 0.5 * h_px)
                elif where == "beside":  # by its side, level with its middle, in free room
                    on = _beside(box, cam, res, w_px, h_px, sat, cell, (left, cy0, cx1), tpx)
                    if on is None:
                        continue
                    centre, rect, wpp = on
                else:  # on the tower's face, on a plate, clear of every name
                    on = _on_face(box, cam, res, w_px, h_px, sat_names, cell, name_rects, (cx0, cy0, cx1))
                    if on is None:
                        continue
                    centre, rect, wpp = on
                    plates.append((centre, w_px * wpp, h_px * wpp))
                    on_face = True
                placed = True
                out_text.append(form)
                out_centre.append(centre)
                out_size.append(tpx * wpp)
                out_call.append(int(d.call_id[j]))
                out_plate.append(on_face)
                taken.append(rect)
                texts_grid = texts_grid | occupancy_grid(res, cell, rects=[rect])
                sat = summed_area(occupied | texts_grid)
                sat_names = summed_area(texts_grid)
                break
            if placed:
                break
    if not out_text:
        return empty
    n = len(out_text)
    size = np.asarray(out_size, np.float64)
    on_plate = np.asarray(out_plate, np.bool_)
    anchor, rot = place_facing_text(np.asarray(out_centre), cam, size, frame.to_cam,
                                    clearance=np.where(on_plate, 2.0 * PLATE_DEPTH, 0.02))
    labels = LabelSet(out_text, anchor.astype(np.float32), size.astype(np.float32), ["TV3D_text_ui"] * n,
                      np.ones(n, np.uint8), ["group"] * n, np.asarray(out_call, np.int32), rot.astype(np.float32),
                      ["world"] * n)
    layer = None
    if plates:
        m = len(plates)
        pos = np.array([[c[0], 0.0, c[2]] for c, _, _ in plates], np.float64)
        depth = PLATE_DEPTH * size[on_plate]
        pos[:, 1] = -0.5 * depth
        scale = np.stack([np.array([w for _, w, _ in plates]), depth, np.array([h for _, _, h in plates])], 1)
        layer = InstanceLayer(f"{name_prefix}recursion_plates", pos.astype(np.float32), scale.astype(np.float32),
                              np.ones((m, 4), np.float32), np.zeros(m, np.int32), [PLATE_MATERIAL],
                              {"call_index": np.asarray(out_call, np.int32)[on_plate]})
    return labels, layer, taken


def _tower_box(tower, d, x0: float, x1: float, depth, outer_depth: int, frame, t0: float):
    """(x0, x1, z_lo, z_hi) in world: where the tower stands and the heights of its drawn calls,
    or None.  Its stretch is that of its drawn calls in its upper half (``depth``: of each drawn
    call, read at indices; ``outer_depth``: its outermost call's), within its outermost call's (``x0``, ``x1``):
    a recursion that runs in the last second of a ten-second call (a recording whose early
    inner calls a tracer's full ring buffer dropped: only the long outer calls were kept) is
    named over its levels, not over the empty middle of the outermost call."""
    inside = np.flatnonzero((d.lane == tower.lane) & (d.start >= tower.start) & (d.end <= tower.end))
    if not inside.size:
        return None
    upper = inside[depth[inside] >= outer_depth + max(1, tower.levels // 2)]
    if upper.size:
        x0, x1 = (max(x0, (max(float(d.start[upper].min()), t0) - t0) * frame.scale_t),
                  min(x1, (float(d.end[upper].max()) - t0) * frame.scale_t))
    return x0, x1, float(d.face_low_at(inside).min()), float(d.face_high_at(inside).max())


def _beside(box, cam, res, w_px, h_px, sat, cell, bounds, tpx):
    """A place for a name of ``w_px`` × ``h_px`` pixels right or left of the tower
    (``box``, `_tower_box`), `GAP_EM` from it, its middle level with a height of the
    tower's (the middle first), where nothing is drawn or named (``sat``): (world centre,
    pixel rectangle, world size of a pixel there) or None."""
    x0, x1, z_lo, z_hi = box
    cx0, cy0, cx1 = bounds
    gap = GAP_EM * tpx
    for z in (z_lo + (z_hi - z_lo) * np.array([0.5, 0.65, 0.35, 0.8, 0.2])).tolist():
        for x_edge, sign in ((x1, 1.0), (x0, -1.0)):
            p = project(cam, np.array([[x_edge, 0.0, z]]), res)[0]
            mid = p[0] + sign * (gap + 0.5 * w_px)
            rect = (mid - 0.5 * w_px, p[1] - 0.5 * h_px, mid + 0.5 * w_px, p[1] + 0.5 * h_px)
            if rect[0] < cx0 or rect[2] > cx1 or rect[1] < cy0:
                continue
            if not cells_free(sat, cell, *(np.array([v]) for v in rect))[0]:
                continue
            wpp = float(world_per_pixel(cam, np.array([[x_edge, 0.0, z]]), res)[0])
            return np.array([x_edge + sign * (gap + 0.5 * w_px) * wpp, 0.0, z]), rect, wpp
    return None


def _on_face(box, cam, res, w_px, h_px, sat_names, cell, name_rects, bounds):
    """A place on the tower's face (``box``, `_tower_box`) for a plate of ``w_px`` × ``h_px``
    pixels: its centre in world, its pixel rectangle and the world size of a pixel there;
    the upper part of the tower first, centred, clear of every name (``sat_names``, and the
    faces in ``name_rects``); None where there is none."""
    x0, x1, z_lo, z_hi = box
    cx0, cy0, cx1 = bounds
    xs = x0 + (x1 - x0) * np.array([0.5, 0.35, 0.65, 0.2, 0.8])
    zs = z_lo + (z_hi - z_lo) * np.array([0.7, 0.6, 0.8, 0.5, 0.9, 0.4])
    for z in zs.tolist():
        for x in xs.tolist():
            p = project(cam, np.array([[x, 0.0, z]]), res)[0]
            rect = (p[0] - 0.5 * w_px, p[1] - 0.5 * h_px, p[0] + 0.5 * w_px, p[1] + 0.5 * h_px)
            if rect[0] < cx0 or rect[2] > cx1 or rect[1] < cy0:
                continue
            if not cells_free(sat_names, cell, *(np.array([v]) for v in rect))[0]:
                continue
            wpp = float(world_per_pixel(cam, np.array([[x, 0.0, z]]), res)[0])
            hx, hz = 0.5 * w_px * wpp, 0.5 * h_px * wpp
            if len(name_rects) and np.any((name_rects[:, 0] < x + hx) & (x - hx < name_rects[:, 2])
                                          & (name_rects[:, 1] < z + hz) & (z - hz < name_rects[:, 3])):
                continue
            return np.array([x, 0.0, z]), rect, wpp
    return None
