"""The cone tree of a trace's calling-context tree (SEAT Sec. 2.4.5; Robertson et al. 1991),
Trace → SceneSpec (bpy-free), as a pipeline of shared stages:

    filter (hide, utilities, patterns) → calling-context tree → prune by inclusive time
    → Carrière–Kazman footprints → node positions → colour (the icicle's module palette)
    → HUD plan → camera → spheres, edges, base circles, partial markers → labels → SceneSpec

The framing (levels' spacing, the stretch and camera that fill the figure, which orientation
to keep) is `layout.cone_framing`'s.

A node sits at the apex of its cone, its children evenly spaced (by footprint) on the cone's
base circle one level lower (`kernels.cone`); sibling cones never collide.  A node is a
sphere whose radius grows with the square root of its inclusive time (area ∝ time), coloured
by module or function like the icicle (`layout.colour`); edges are thin round tubes, each
base circle a thin ring.  A node some of whose subtree is not drawn (pruned to ``max_nodes``,
or hidden by a filter) carries a dark stub pointing on, down its axis: SEAT's
partially-expanded state.  ``orientation``: ``vertical`` (root on top) or ``horizontal``
(root on the left, the tree growing to the right).
"""
from __future__ import annotations

import math

import numpy as np

from ..analysis.context import calling_context_tree, prune_by_time
from ..kernels.cone import cone_footprints
from ..model import Trace
from .annotate import (MATERIAL_TEXT_COLOURS, centre_with_legend, free_room_replan, hud_layers, legend_box, legend_placement,
                       incomplete_rows, occupancy_grid, plan_hud, trace_kind_text, x_unit_of)
from .camera import view_direction
from .colour import OTHER_RGB, colour_calls, legend_swatch_rows
from .cone_framing import R_MAX, R_MIN, axis_down, framed_tree, level_spacing, oversized_orientation
from .cone_geometry import (EDGE_RGB, PARTIAL_RGB, RING_RGB, cone_labels, edge_tubes, label_leaders,
                            node_appear_us, partial_stubs, ring_tubes, sphere_tubes)
from .cutaway import cone_cutaway
from .labels import TEXT_DARK, TEXT_LIGHT, leader_material, text_px
from ..params.cone import ORIENTATIONS, ConeParams  # noqa: F401
from ..params.icicle import IcicleParams
from .select import PACK_MIN_LANES, filtered_trace, thread_groups
from .spec import LabelSet, LegendEntry, LightSpec, MaterialSpec, SceneSpec

GAP = 0.25  # extra room between sibling footprints, relative to their radii
#: sibling subtrees are kept apart level by level for this many levels below them (the last
#: band holds every deeper level; `kernels.cone.cone_footprints`)
BANDS = 12


def node_radii(time: np.ndarray, root_time: float) -> np.ndarray:
    """Sphere radius per node: area ∝ inclusive time, from R_MIN to R_MAX (the root)."""
    frac = np.clip(time / root_time, 0.0, 1.0) if root_time > 0 else np.zeros_like(time)
    return R_MIN + (R_MAX - R_MIN) * np.sqrt(frac)


def level_height(foot_root: float, n_levels: int) -> float:
    """Vertical distance between levels: the tree's height about 0.7 of its width, at
    least 3 sphere radii so cones stay cones."""
    return max(3.0 * R_MAX, 1.4 * foot_root / max(n_levels, 1))


def cone_title(trace: Trace, pruned, n_calls: int, params: ConeParams, root: int | None = None) -> str:
    if params.title is not None:
        return params.title
    kind = trace_kind_text(trace)  # merged stacks (whose calls are call paths), or calls made from samples
    calls = "call paths" if x_unit_of(trace).merged else "calls"
    if root is not None:
        from ..naming import describe_function

        sub = f" · subtree of {describe_function(trace.name(0))[2]} (call {root:,})"
    else:
        sub = ""
    return (f"{trace.title_name}{sub} · calling contexts · {len(pruned):,} of {len(pruned.cct):,} contexts · "
            f"{n_calls:,} {calls}" + (f" · {kind}" if kind else ""))


def cone_layout(trace: Trace, params: ConeParams | None = None) -> SceneSpec:
    """Turn ``trace`` into the cone-tree SceneSpec (module docstring)."""
    if not isinstance(trace, Trace):
        raise TypeError(f"cone_layout needs a Trace, got {type(trace).__name__}")
    params = (params or ConeParams()).validate()
    ip = params.icicle_params()
    if len(trace) == 0:
        from ..model_side import no_calls_message

        raise ValueError(f"no calls to show: {no_calls_message(trace, trace.meta.get('source') or 'the trace')}")
    root = None
    if params.root is not None:  # one call's subtree is the tree (`rooted`)
        trace, root, ip = rooted(trace, params.root, ip)
    tr, orig, partial_calls, merged = shown_calls(trace, ip, params.fold)
    if root is not None:  # calls of the subtree → calls of the loaded trace
        orig = (np.arange(len(tr), dtype=np.int64) if orig is None else orig.astype(np.int64)) + root
    groups = thread_groups(tr, PACK_MIN_LANES) if params.pack_threads else None
    cct = calling_context_tree(tr, fold_recursion=params.fold_recursion, merged=merged, thread_groups=groups)
    expand = [int(c) for c in params.expand]
    if orig is not None and expand:  # calls of the loaded trace → calls of the shown one
        k = np.searchsorted(orig, expand)
        expand = [int(i) for i, c in zip(k, expand) if i < orig.size and orig[i] == c]
    pruned, tail = pruned_chains(cct, params, partial_calls, expand)
    node = pruned.node
    time = cct.time[node]
    radius = node_radii(time, float(cct.time[0]))
    foot, offset, base, angle = cone_footprints(pruned.child_ptr, pruned.child_ids, radius * 1.15, GAP, BANDS)[:4]
    n_levels = int(pruned.depth.max()) if len(pruned) > 1 else 1

    # colour: the icicle's palette on a representative call of every context
    rep = cct.first[node]
    real = rep >= 0
    idx = np.where(real, rep, 0).astype(np.int64)
    xu = x_unit_of(trace)  # a merged trace's measure, else time
    colouring = colour_calls(tr, idx, ip, np.where(real, time, 0.0), lambda m: time, xu.fmt)
    n_slots = len(colouring.slot_rgb)
    slot = np.where(real, colouring.slot, n_slots).astype(np.int32)  # pseudo nodes: neutral
    slot_rgb = np.vstack([colouring.slot_rgb, np.asarray(OTHER_RGB)[None] * 0.6])
    slot_names = [f"TV3D_cone_{k:02d}" for k in range(n_slots + 1)]
    n_highlit = 0
    if params.highlight:  # the other nodes get a pale copy of their colour (a material each: Workbench)
        from ..analysis.filters import function_mask
        from .palette import lighten

        lit = function_mask(tr, params.highlight, params.highlight)[np.maximum(cct.func[node], 0)] & real
        n_highlit = int(lit.sum())
        slot = np.where(real & ~lit, slot + n_slots + 1, slot).astype(np.int32)
        slot_rgb = np.vstack([slot_rgb, lighten(slot_rgb, 0.8)])
        slot_names += [f"{nm}_pale" for nm in slot_names]

    res = tuple(params.resolution)
    tpx = text_px(ip)
    n_partial = int(pruned.partial.sum())
    rows = [(f"colour: {colouring.title}", -1, "heading")]
    rows += legend_swatch_rows(colouring.legend)
    rows.append((f"sphere area: inclusive {xu.quantity} (root {xu.fmt(float(cct.time[0]))})", -1, "note"))
    if params.highlight:
        rows.append((f"highlighted: {', '.join(params.highlight)} ({n_highlit} nodes); the others pale", -1, "note"))
    if groups is not None:
        rows.append((GROUPED_NOTE, -1, "note"))
    if n_partial:
        rows.append((f"dark stub: partially expanded ({len(cct) - len(pruned):,} contexts not shown)", -1, "note"))
    rows += incomplete_rows(trace)  # a tracer's full buffer
    shown = ~merged  # the calls of the tree (fold_mask never merges them all)
    n_shown = int(shown.sum())
    title = cone_title(trace, pruned, n_shown, params, root)
    plan = plan_hud(res, tpx, title, rows, params.show_title, params.show_legend)
    call_of_node = np.where(real, rep, -1)  # picking: a node → its first call in the loaded trace
    if orig is not None:
        call_of_node = np.where(real, orig[np.maximum(rep, 0)], -1)

    texts_of: dict = {}  # node → (label text, its width in ems), shared by the candidate figures
    names_of: dict = {}  # function → short name

    def labels_of(shape, rect):
        stubs = (axis_down(shape[0]), shape[2])  # the partial stubs `partial_stubs` draws
        return cone_labels(cct, pruned, shape[1], radius, time, shape[3], res, shape[4],
                           params.max_labels if params.show_labels else 0, tpx, call_of_node, tail, rect, texts_of,
                           names_of, stubs)

    spacing_mid = float(np.median(level_spacing(pruned.depth, radius, n_levels))) if n_levels else 1.0
    stretch: dict = {}  # per orientation, the stretch of the last shape framed (the rounds start there)

    framing: dict = {}  # what the candidate framings share (`framed_tree`'s cache)

    def framed(orientation, rect, spin):
        sh = framed_tree(orientation, pruned, radius, base, angle, n_levels, float(foot[0]), rect, params, spin,
                         stretch.get(orientation, 1.0), framing)
        stretch[orientation] = sh[2] / max(spacing_mid, 1e-12)
        return sh

    tree_grids: dict = {}  # a shape's positions (by id, kept alive here) → where its bare tree is

    def occupancy(shape, lab):
        """`_tree_occupancy`, the bare tree's grid of a shape made once."""
        made = tree_grids.get(id(shape[1]))
        if made is None:
            made = tree_grids[id(shape[1])] = (shape[1], _tree_grid(shape, pruned, radius, base, res))
        return made[1] | _label_grid(shape[3], lab, res, tpx)

    # the candidates, framed in the whole width: with ``auto`` both orientations (deep trees
    # grow to the right), and the tree turned about its axis (`SPINS`); those that show the
    # tree nearly as large as the largest, and of them the few whose bare tree covers most
    full = plan_hud(res, tpx, title, rows, params.show_title, False) if plan.legend_rows else plan
    orients = ("vertical", "horizontal") if params.orientation == "auto" else (params.orientation,)
    shapes = [(framed(o, full.rect, s), s) for o in orients for s in SPINS]
    if len(orients) > 1:  # an orientation whose spheres come out far larger than useful is dropped
        best = {o: max(sh[-1] for sh, _ in shapes if sh[0] == o) for o in orients}
        keep = oversized_orientation(best, res)
        if keep is not None:
            shapes = [(sh, s) for sh, s in shapes if sh[0] == keep]
    top = max(sh[-1] for sh, _ in shapes)
    shapes = [(sh[:-1], s) for sh, s in shapes if sh[-1] >= SPIN_KEEP_SCORE * top]
    if len(shapes) > 1:
        bare = [covered_share(occupancy(sh, LabelSet.empty())) for sh, _ in shapes]
        shapes = [shapes[k] for k in np.argsort(bare, kind="stable")[::-1][:SPIN_NAMED]]

    replan_of = free_room_replan(res, tpx, title, rows, params.show_title)
    replans: dict = {}  # (share of the width, scale) → its plan: the same for every candidate figure

    def replan(frac, scale):
        if (frac, scale) not in replans:
            replans[frac, scale] = replan_of(frac, scale)
        return replans[frac, scale]

    def place_legend(grid):
        return legend_placement(full, plan, grid, CORNER_CELL_PX, res, replan)

    def figure_of(shape, spin):
        """The figure of one candidate: (cover, shape, labels, spin, hud plan, where the tree
        and its names are: `occupancy`).  The legend
        goes to a free corner of the tree's frame if there is one (cone trees are sparse):
        the tree in the whole width, then in slightly narrower frames (a wide tree's top is
        narrow: a corner opens for the legend sooner than a whole column would), else the
        legend takes its column.  Cover: the share of the frame's cells that the tree, its
        names and the legend cover."""
        x0, y0, x1, y1 = full.rect
        column_w = (x1 - x0) - (plan.rect[2] - plan.rect[0])
        for share in (LEGEND_CORNER_SHARES if plan.legend_rows else (0.0,)):
            sh = shape if share == 0.0 else framed(shape[0], (x0, y0, x1 - share * column_w, y1), spin)[:-1]
            rect = (x0, y0, x1 - share * column_w, y1)
            lab = labels_of(sh, rect)
            grid = occupancy(sh, lab)
            if not plan.legend_rows:
                return covered_share(grid), sh, lab, spin, plan, grid
            placed = place_legend(grid)
            if placed is not None:
                return (covered_share(grid | occupancy_grid(res, CORNER_CELL_PX, rects=[legend_box(placed)])), sh, lab,
                        spin, placed, grid)
        sh = framed(shape[0], plan.rect, spin)[:-1]
        lab = labels_of(sh, plan.rect)
        grid = occupancy(sh, lab)
        return covered_share(grid | occupancy_grid(res, CORNER_CELL_PX, rects=[legend_box(plan)])), sh, lab, spin, plan, grid

    figures = [figure_of(sh, s) for sh, s in shapes]
    _, shape, labels, spin, plan, drawn = max(figures, key=lambda f: f[0])  # the first of equals
    plan = centre_with_legend(shape[3], drawn, CORNER_CELL_PX, plan, full.rect, res, 0.8 * tpx)
    orientation, pos, lh, cam, to_cam, turn = shape
    cut = cone_cutaway(params, cct, pruned, tail, orig, pos, radius, cam, res)
    down = axis_down(orientation)
    up_axis = np.array([0.0, 0.0, 1.0]) if orientation == "vertical" else np.array([1.0, 0.0, 0.0])
    edge_w = 0.045 + 0.09 * np.sqrt(np.clip(time / max(float(cct.time[0]), 1e-300), 0, 1))
    t0, t1 = float(tr.start[shown].min()), float(tr.end[shown].max())
    appear = node_appear_us(rep, tr.start, pruned.parent, pruned.depth, t0)  # for a growth animation
    layers = [
        sphere_tubes(pos, radius, slot, slot_rgb, slot_names, call_of_node.astype(np.int32), node, up_axis, appear),
        edge_tubes(pos, radius, pruned.parent, edge_w, appear),
        ring_tubes(pos, base, pruned.child_ptr, pruned.child_ids, down, 0.035, appear),
        partial_stubs(pos, radius, pruned.partial, down, lh, appear),
    ]
    leaders = label_leaders(labels, pos, radius, cam, res, to_cam)
    if leaders is not None:
        layers.append(leaders)
    swatch_mats = [f"TV3D_c{k:02d}" for k in range(n_slots)]
    hud_labels, legend_layer, hud_dist = hud_layers(plan, cam, res, colouring.slot_rgb, swatch_mats)
    if legend_layer is not None:
        layers.append(legend_layer)
    materials = _materials(slot_rgb, slot_names, colouring.slot_rgb, swatch_mats)
    legend = [LegendEntry(it.name, tuple(float(c) for c in colouring.slot_rgb[it.slot])) for it in colouring.legend]
    sun = -view_direction(params.azimuth - 40.0, 55.0)
    spec = SceneSpec(
        layers=layers, labels=LabelSet.concat([labels, hud_labels]), legend=legend, materials=materials,
        camera=cam, lights=[LightSpec("TV3D_key", "SUN", tuple(sun), 3.0),
                            LightSpec("TV3D_fill", "SUN", tuple(-view_direction(params.azimuth + 70.0, 15.0)), 0.8)],
        resolution=res, background=(1.0, 1.0, 1.0),
        meta={"layout": "cone", "t0": t0, "t1": t1, "x_unit": xu.measure, "orientation": orientation, "spin": float(spin), "n_folded_calls": int(len(trace) - n_shown), "n_nodes": len(pruned), "n_contexts": len(cct),
              "n_calls": n_shown, "root_call": root, "n_partial": n_partial, "n_highlighted": n_highlit, "level_height": lh, "root_footprint": float(foot[0]), "footprint": foot.tolist() if len(pruned) <= 5000 else None,
              "footprint_offset": offset.tolist() if len(pruned) <= 5000 else None,
              "turn": turn.tolist() if len(pruned) <= 5000 else None, "base_radius": base.tolist() if len(pruned) <= 5000 else None,
              "node_positions": pos.tolist() if len(pruned) <= 5000 else None,
              "node_radius": radius.tolist() if len(pruned) <= 5000 else None,
              "node_parent": pruned.parent.tolist(), "n_labels": len(labels), "title": plan.title,
              "content_rect": list(plan.rect), "hud_distance": hud_dist, "text_px": tpx,
              "params": params.to_dict(), **({"cutaway": cut} if cut is not None else {})},
    )
    return spec.validate()


def rooted(trace: Trace, what, ip: IcicleParams) -> tuple:
    """``root``: the subtree of the call ``what`` names (an index, or a function name: its
    longest call, `transform.find_call`) as the trace drawn (`transform.subtree_trace`).
    Returns ``(subtree trace, the call's index, ip with its expanded calls as the subtree's)``;
    ValueError naming ``root``."""
    import dataclasses

    from ..transform import find_call, subtree_trace

    try:
        call = find_call(trace, what)
    except ValueError as e:
        raise ValueError(f"root: {e}") from None
    sub = subtree_trace(trace, call)
    inside = [int(c) - call for c in ip.expand if call <= int(c) < call + len(sub)]
    return sub, call, dataclasses.replace(ip, expand=inside)


#: a calling context that holds this share of its parent's time as its parent's only drawn
#: child continues its parent's node (the icicle's pass-through rule, `layout.fold`)
CHAIN_SHARE = 0.9


def compress_chains(pruned, time: np.ndarray, share: float = CHAIN_SHARE) -> tuple:
    """``pruned`` with its pass-through chains drawn as one node each: a node that is its
    parent's only drawn child and holds at least ``share`` of its parent's time continues
    the parent's node (the icicle's rule 2 on the calling-context tree: ``main › run ›
    _run`` is one sphere, not a stick of three levels).  ``time`` per pruned node.  Returns
    the compressed tree (its nodes are the chains' heads, children of a chain's last node
    hang from its head) and ``tail``: per compressed node, the full tree's node that ends
    its chain (its own node when it is no chain).  Pre-order is kept.  O(nodes)."""
    from ..analysis.context import PrunedTree

    m = len(pruned)
    par = pruned.parent
    n_child = np.diff(pruned.child_ptr)
    absorbed = np.zeros(m, np.bool_)
    k = np.arange(1, m)
    p = par[k]
    absorbed[k] = (p > 0) & (n_child[np.maximum(p, 0)] == 1) & (time[k] >= share * time[np.maximum(p, 0)])
    if not absorbed.any():
        return pruned, pruned.node.copy()
    head = np.arange(m)
    for i in np.flatnonzero(absorbed).tolist():  # pre-order: a parent's head is known (≤ nodes)
        head[i] = head[par[i]]
    tail_full = pruned.node.copy()
    tail_full[head[absorbed]] = pruned.node[absorbed]  # the last (deepest) of a chain wins
    keep = np.flatnonzero(~absorbed)
    new_of = np.full(m, -1, np.int64)
    new_of[keep] = np.arange(keep.size)
    new_parent = np.where(par[keep] >= 0, new_of[head[np.maximum(par[keep], 0)]], -1)
    depth = np.zeros(keep.size, np.int64)
    for i in range(1, keep.size):  # pre-order: parents first
        depth[i] = depth[new_parent[i]] + 1
    counts = np.bincount(new_parent[1:], minlength=keep.size) if keep.size > 1 else np.zeros(keep.size, np.int64)
    child_ptr = np.zeros(keep.size + 1, np.int64)
    np.cumsum(counts, out=child_ptr[1:])
    child_ids = (np.argsort(new_parent[1:], kind="stable") + 1).astype(np.int64)
    # a chain is partial when any of its nodes is
    partial = np.zeros(keep.size, np.bool_)
    np.logical_or.at(partial, new_of[head], pruned.partial)
    hidden = np.zeros(keep.size, np.int64)
    np.add.at(hidden, new_of[head], pruned.hidden_below)
    out = PrunedTree(pruned.cct, pruned.node[keep], new_parent.astype(np.int64), depth, child_ptr, child_ids,
                     hidden, partial)
    return out, tail_full[keep]


def pruned_chains(cct, params, partial_calls, expand) -> tuple:
    """The ``max_nodes`` largest calling contexts, pass-through chains compressed
    (`compress_chains`), as many nodes as ``max_nodes`` after compressing: the node budget
    goes to the tree's branches, not to its sticks.  Returns ``(pruned, tail)``."""
    want = int(params.max_nodes)
    budget = want
    for _ in range(4):
        pruned = prune_by_time(cct, budget, partial_calls, expand)
        pc, tail = compress_chains(pruned, cct.time[pruned.node])
        if len(pc) >= want or len(pruned) >= len(cct) or budget >= 20 * want:
            return pc, tail
        budget = budget + (want - len(pc))
    return pc, tail


def fold_mask(tr: Trace, fold) -> np.ndarray:
    """The calls the ``fold`` rule merges into their callers (bool per call of ``tr``):
    with ``auto`` the runtime infrastructure (the icicle's rule 1; pass-through chains
    stay: they are the program's own calls), with level ranges the calls at those stack
    levels, none with ``none``; none either when the rule would merge every call (the
    infrastructure is shown rather than nothing)."""
    from .fold import auto_fold_parts, parse_fold

    kind, ranges = parse_fold(fold)
    if kind == "auto":
        merge = auto_fold_parts(tr)[0].copy()
    elif kind == "levels":
        merge = np.zeros(len(tr), np.bool_)
        for a, b in ranges:
            merge |= (tr.depth >= a) & (tr.depth <= b)
    else:
        merge = np.zeros(len(tr), np.bool_)
    if merge.all():
        merge[:] = False
    return merge


def shown_calls(trace: Trace, ip: IcicleParams, fold) -> tuple:
    """The calls a calling-context view shows: the filters (`select.filtered_trace`), and
    the calls the ``fold`` rule merges (`fold_mask`).  Returns ``(trace after the filters,
    index in the loaded trace of each of its calls or None, partially-expanded flag per
    call or None, merged mask)``; the cone tree merges the calls in its sweep
    (`analysis.context.calling_context_tree`), without a copy of the trace."""
    filt = filtered_trace(trace, ip)
    tr, orig = filt.trace, filt.orig
    partial = filt.partial if filt.partial.any() else None
    if len(tr) == 0:
        raise ValueError("no calls to show: the filters hide every call")
    return tr, orig, partial, fold_mask(tr, fold)


def folded_trace(trace: Trace, ip: IcicleParams, fold) -> tuple:
    """`shown_calls` as a trace: the merged calls removed (`transform.merge_calls`), their
    children called by their callers.  Returns ``(trace, index in the loaded trace of each
    call or None, partially-expanded flag per call or None)``."""
    from ..transform import merge_calls
    from ..naming import share_function_table

    tr, orig, partial, merge = shown_calls(trace, ip, fold)
    if merge.any():
        kept = np.flatnonzero(~merge)
        src, tr = tr, merge_calls(tr, merge)
        share_function_table(src, tr)
        orig = kept if orig is None else orig[kept]
        partial = None if partial is None else partial[kept]
    return tr, orig, partial


#: the legend's note where threads of one kind share a node (`select.thread_groups`)
GROUPED_NOTE = "\"6× name\": threads of one kind, their contexts merged"
CORNER_CELL_PX = 8.0  # the occupancy grid of the legend's corner search
#: the turns of the whole tree about its axis that are tried (radians): which subtree stands
#: beside which decides how much of the frame a sparse tree spreads over
SPINS = tuple(k * math.pi / 4.0 for k in range(8))
#: a shape is a candidate while its root sphere is at least this share of the largest one's
SPIN_KEEP_SCORE = 0.8
#: names are placed (their boxes count) for this many candidates, those whose bare tree covers most
SPIN_NAMED = 3
#: coverage is counted in cells this many pixels wide (at 1080 lines): a cell with anything drawn
COVER_CELL_PX = 40.0


def covered_share(grid: np.ndarray) -> float:
    """Share of the image's `COVER_CELL_PX` cells holding something of an occupancy grid
    of `CORNER_CELL_PX` cells (`_tree_occupancy`)."""
    f = max(int(round(COVER_CELL_PX / CORNER_CELL_PX)), 1)
    ny, nx = grid.shape
    pad = np.zeros((-(-ny // f) * f, -(-nx // f) * f), np.bool_)
    pad[:ny, :nx] = grid
    return float(pad.reshape(pad.shape[0] // f, f, pad.shape[1] // f, f).any(axis=(1, 3)).mean())
#: the tree's frame narrowed by these shares of the legend column's width while a corner
#: for the legend is looked for (0: the whole width); none free: the legend takes a column
LEGEND_CORNER_SHARES = (0.0, 0.35, 0.6)


def _tree_occupancy(shape, pruned, radius, base, labels, res, tpx) -> np.ndarray:
    """Where the drawn tree is on the image (`annotate.occupancy_grid`): spheres, the edges
    and the base circles (drawn at their children's level, as `cone_geometry.ring_tubes`
    draws them; both traced every cell), and the labels' boxes: `_tree_grid` and
    `_label_grid` (a cell is covered when either covers it)."""
    return _tree_grid(shape, pruned, radius, base, res) | _label_grid(shape[3], labels, res, tpx)


def _tree_grid(shape, pruned, radius, base, res) -> np.ndarray:
    """`_tree_occupancy` of the bare tree.  Every point is projected once (`camera.project`
    maps each row on its own, bit for bit whatever it is batched with): the edges run
    between the projected node centres, the base circles between their projected samples."""
    from ..kernels.cone_frame import segment_samples
    from .camera import project, world_per_pixel
    from .cone_geometry import RING_SAMPLES

    orientation, pos, _, cam, _, _ = shape
    parent, child_ptr = pruned.parent, pruned.child_ptr
    centre = project(cam, pos, res)
    pts = [centre]
    rad = [radius / world_per_pixel(cam, pos, res)]
    c = np.flatnonzero(parent >= 0)
    seg_a, seg_b = [centre[parent[c]]], [centre[c]]
    k = np.flatnonzero((np.diff(child_ptr) >= 2) & (base > 0))
    if k.size:
        if orientation == "vertical":
            down, e1, e2 = np.array([0.0, 0.0, -1.0]), np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
        else:
            down, e1, e2 = np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0]), np.array([0.0, 1.0, 0.0])
        first = pruned.child_ids[child_ptr[k]]
        ring_c = pos[k] + ((pos[first] - pos[k]) @ down)[:, None] * down[None, :]
        ang = np.linspace(0.0, 2 * math.pi, RING_SAMPLES)
        circle = np.cos(ang)[:, None] * e1[None, :] + np.sin(ang)[:, None] * e2[None, :]
        ring = project(cam, (ring_c[:, None, :] + base[k][:, None, None] * circle[None]).reshape(-1, 3), res)
        ring = ring.reshape(k.size, RING_SAMPLES, 2)
        seg_a.append(ring[:, :-1].reshape(-1, 2))
        seg_b.append(ring[:, 1:].reshape(-1, 2))
    a, b = np.concatenate(seg_a), np.concatenate(seg_b)
    n = np.clip(np.ceil(np.hypot(*(b - a).T) / CORNER_CELL_PX), 1, 1000).astype(np.int64) + 1
    pts.append(segment_samples(a, b, n))
    rad.append(np.full(pts[-1].shape[0], 1.5))
    return occupancy_grid(res, CORNER_CELL_PX, np.concatenate(pts), np.concatenate(rad))


def _label_grid(cam, labels, res, tpx) -> np.ndarray:
    """`_tree_occupancy` of the labels' boxes alone."""
    from .camera import project
    from .text import text_width

    rects = []
    if len(labels):
        lp = project(cam, labels.anchors, res)
        for j in range(len(labels)):
            w = text_width(labels.texts[j]) * tpx
            x0 = lp[j, 0] - (w if labels.align[j] == 2 else 0.5 * w if labels.align[j] == 1 else 0.0)
            rects.append((x0, lp[j, 1] - tpx, x0 + w, lp[j, 1] + 0.3 * tpx))
    return occupancy_grid(res, CORNER_CELL_PX, rects=rects)


def _materials(slot_rgb, slot_names, swatch_rgb, swatch_names) -> dict:
    mats = {}
    for name, rgb in zip(slot_names, slot_rgb):
        mats[name] = MaterialSpec(name, tuple(float(c) for c in rgb) + (1.0,), kind="tube", cushion=False)
    for name, rgb in zip(swatch_names, swatch_rgb):
        mats[name] = MaterialSpec(name, tuple(float(c) for c in rgb) + (1.0,))
    for name, rgb in (("TV3D_cone_edge", EDGE_RGB), ("TV3D_cone_ring", RING_RGB), ("TV3D_cone_partial", PARTIAL_RGB)):
        mats[name] = MaterialSpec(name, tuple(rgb) + (1.0,), kind="tube", cushion=False)
    mats["TV3D_cone_leader"] = leader_material("TV3D_cone_leader")
    for name, c in (("TV3D_text_dark", TEXT_DARK), ("TV3D_text_light", TEXT_LIGHT), *MATERIAL_TEXT_COLOURS.items()):
        mats[name] = MaterialSpec(name, c, kind="text", cushion=False, from_attribute=False)
    return mats
