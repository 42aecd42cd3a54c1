"""Flows in the thread view (bpy-free): the trace's flow events as arcs
from the call that starts them to the call they reach, where those calls are drawn.

A flow's end lies on the focused thread's straight icicle (the view's main view, on top)
when its call belongs to the focused thread, else on its thread's section of the
semicircle; a call that is not drawn is represented by its nearest drawn ancestor, as in
the icicle (`flow_arcs.drawn_ancestor`).  Each end sits where its call starts: on the
front face of the icicle's box (at the middle of its height), or on the bar's middle
radius on the semicircle.  Flows whose two ends fall in the same `FLOW_CELL_PX` pixel cells
of the image are bundled into one arc whose radius grows with the square root of their
number, the cells twice as wide while there are more than `MAX_THREAD_FLOW_ARCS` bundles (at
most `flow_arcs.FLOW_CELL_MAX_FRAC` of the image), and the largest are drawn, as many as keep
their ink within `THREAD_VIEW_INK_FRAC` of the picture's height in each band of its columns
(`flow_arcs.ink_selection`, on the projected arcs): the icicle's rule (`flow_arcs.flow_arcs`),
with the cells taken on the image because the two surfaces have no shared time axis.  An arc
is a quadratic Bézier bowed towards the camera by a quarter of its length, so an arc from
the icicle down to the semicircle passes in front of the boxes, never through them.  Each arc carries ``tv3d_kind`` = flow and the index of its
first flow (``side_index``), so picking reports it.

Where the flows join many pairs of threads (at least `SUMMARY_MIN_PAIRS`: a browser's page
load, 24 threads), single arcs between the icicle and the semicircle crossed the whole figure
and every name: the view then draws one arc a pair of threads instead (`summary_arcs`), inside
the semicircle from the section of the thread that starts them to the section of the thread
they reach, each end at the median time of its flows, as wide as √(flows) allows, in the
colour of the thread reached; the focused thread's flows start and end on its own section.
A flow within one thread is not drawn there (the legend says so).
"""
from __future__ import annotations

import numpy as np

from .camera import project
from .flow_arcs import (FLOW_CELL_MAX_FRAC, FLOW_CELL_PX, MIN_ICICLE_FLOW_ARCS, bezier_points, coarsened_bundles,
                         drawn_ancestor, first_reach, flow_radius, flow_tubes, flows_inside, ink_selection)

#: the most arcs the thread view draws: beyond, its pixel cells widen (as the icicle's, `flow_arcs.flow_arcs`;
#: a Chromium page load's flows between 82 threads drew 600 arcs across the ring, which hid it)
MAX_THREAD_FLOW_ARCS = 300
#: the thread view's arcs: their ink in a band of columns at most this share of the image height
#: (`flow_arcs.ink_selection`; the largest arc into each thread kept whatever its ink); more than the
#: icicle's: its arcs fan in to a stream or a thread on the semicircle, where the fan is what they show
#: (PyTorch's launches into stream 7), over no names
THREAD_VIEW_INK_FRAC = 0.2


#: the thread view summarises its flows, one arc a pair of threads (`summary_arcs`), when they
#: join at least this many pairs of threads (a Chromium page load: 79; PyTorch's CPU threads and
#: its four streams: 6, whose launches keep their single arcs, a fan from each training step)
SUMMARY_MIN_PAIRS = 12
#: the most pair arcs drawn (the pairs with most flows)
MAX_SUMMARY_ARCS = 60
#: a pair arc's middle point: this share of the way from the ring's centre to its chord's middle
SUMMARY_PULL = 0.35
#: pair arcs are this much thicker than single ones (each stands for many flows)
SUMMARY_WIDTH = 1.6


def legend_row(n_flows: int, n_pair_arcs: int = 0) -> list:
    """The legend's note on the arcs, ``n_flows`` the flows in the window between the threads
    shown (`flow_arcs.flows_in_window`; none: no note); ``n_pair_arcs``: the flows summarised,
    one arc a (starting, reached) pair of threads, as many as the pairs (`pair_counts`)."""
    if not n_flows:
        return []
    if n_pair_arcs:
        which = ("one arc a pair of threads" if n_pair_arcs <= MAX_SUMMARY_ARCS else
                 f"one arc a pair of threads ({MAX_SUMMARY_ARCS} of {n_pair_arcs}: those with most)")
        return [(f"arcs: {n_flows:,} flows, {which}, from the thread that starts them to the thread they reach (its "
                 f"colour), at their median time, wider for more; flows within a thread not drawn", -1, "note")]
    where = "; where many, only the largest" if n_flows > MIN_ICICLE_FLOW_ARCS else ""
    return [(f"arcs: {n_flows:,} flows, from the call that starts one to the call it reaches, in the colour of the "
             f"thread reached{where}", -1, "note")]


def flow_lanes(tr, lane_of_thread, fi) -> tuple:
    """(lane of each flow's first call, of its second) for flows ``fi`` (−1: a thread not shown)."""
    lanes = np.asarray(lane_of_thread, np.int64)
    return lanes[tr.thread[tr.flow_from[fi]]], lanes[tr.thread[tr.flow_to[fi]]]


def pair_counts(tr, lane_of_thread, t0: float, t1: float) -> tuple:
    """(pairs of shown threads the flows in [t0, t1] join, either way round; (starting, reached)
    pairs): the first decides whether the view summarises, the second is how many arcs the
    summary has (`summary_arc_count`)."""
    if tr.flow_from.size == 0:
        return 0, 0
    lf, lt = flow_lanes(tr, lane_of_thread, np.flatnonzero(flows_inside(tr, t0, t1)))
    ok = (lf >= 0) & (lt >= 0) & (lf != lt)
    lf, lt = lf[ok], lt[ok]
    n = int(max(lf.max(initial=0), lt.max(initial=0))) + 1
    return np.unique(np.minimum(lf, lt) * n + np.maximum(lf, lt)).size, np.unique(lf * n + lt).size


def summary_arc_count(tr, lane_of_thread, t0: float, t1: float) -> int:
    """The arcs of the thread view's flow summary, one a (starting, reached) pair of threads
    (`summary_arcs`, at most `MAX_SUMMARY_ARCS` drawn), or 0 where it draws the flows one by
    one: they join fewer than `SUMMARY_MIN_PAIRS` pairs of shown threads in [t0, t1]."""
    pairs, arcs = pair_counts(tr, lane_of_thread, t0, t1)
    return arcs if pairs >= SUMMARY_MIN_PAIRS else 0


def summarised(tr, lane_of_thread, t0: float, t1: float) -> bool:
    """Whether the thread view draws its flows one arc a pair of threads (`summary_arc_count`)."""
    return summary_arc_count(tr, lane_of_thread, t0, t1) > 0


def summary_arcs(tr, fi, lf, lt, ring, place, t0: float, t1: float) -> tuple:
    """One arc a (starting lane, reached lane) pair of the flows ``fi`` (lanes ``lf`` → ``lt``,
    different): (p0, p1, p2 world points, flows, first flow, reached lane, first reach µs from
    t0), the pairs with most flows first, at most `MAX_SUMMARY_ARCS`.  Ends on each lane's
    section at the median start of its flows' calls there, at the curves' anchor radius
    (`corr_curves.ANCHOR_INSET` inside the ring); the middle point pulled towards the centre."""
    from .corr_curves import ANCHOR_INSET
    from .ring import polar

    n_lanes = int(max(lf.max(initial=0), lt.max(initial=0))) + 1
    _, first, group, count = np.unique(lf * n_lanes + lt, return_index=True, return_inverse=True,
                                       return_counts=True)
    group = group.reshape(-1)
    starts = np.r_[0, np.cumsum(count)[:-1]]

    def median_time(calls):
        t = np.clip(tr.start[calls], t0, t1)
        return t[np.lexsort((t, group))[starts + count // 2]]

    a_from = ring.angle(lf[first], median_time(tr.flow_from[fi]))
    a_to = ring.angle(lt[first], median_time(tr.flow_to[fi]))
    radius = ring.zero_radius - ANCHOR_INSET
    q0, q2 = polar(a_from, radius), polar(a_to, radius)
    q1 = SUMMARY_PULL * 0.5 * (q0 + q2)
    reach = first_reach(tr, fi, group, t0, t1, count.size)
    keep = np.argsort(-count, kind="stable")[:MAX_SUMMARY_ARCS]
    return (place.to_world(q0[keep]), place.to_world(q1[keep]), place.to_world(q2[keep]), count[keep],
            fi[first[keep]], lt[first[keep]], reach[keep])


def _row_of(n: int, rows_of_calls: np.ndarray) -> np.ndarray:
    out = np.full(n, -1, np.int64)
    ok = rows_of_calls >= 0
    out[rows_of_calls[ok]] = np.flatnonzero(ok)
    return out


def flow_ends(sel, d, ring, place, comp, calls: np.ndarray) -> tuple:
    """(world points (n, 3), surface key (n,): 0 the icicle, 1 + lane on the semicircle,
    -1 where the call has no drawn box) of the flow ends at ``calls`` (indices of
    ``sel.trace``)."""
    from .ring import BAR_FILL, polar

    tr = sel.trace
    n = calls.size
    pts = np.zeros((n, 3))
    key = np.full(n, -1, np.int64)
    start = np.clip(tr.start[calls], sel.t0, sel.t1)
    on_wall = np.zeros(n, bool)
    st = comp.st
    if st is not None:
        # the icicle's drawn calls in this trace's indices (through the loaded trace's)
        shown_of_loaded = np.full(int(sel.original(np.arange(len(tr))).max()) + 1 if len(tr) else 0, -1, np.int64)
        shown_of_loaded[sel.original(np.arange(len(tr)))] = np.arange(len(tr))
        cid = np.asarray(st.drawn.call_id, np.int64)
        wall_calls = np.where(cid < shown_of_loaded.size, shown_of_loaded[np.minimum(cid, shown_of_loaded.size - 1)],
                              -1)
        wall_row = np.full(len(tr), -1, np.int64)
        ok = wall_calls >= 0
        wall_row[wall_calls[ok]] = np.flatnonzero(ok)
        focus = set(int(t) for t in st.sel.lane_threads.tolist())
        mine = np.isin(tr.thread[calls], list(focus))
        rw = drawn_ancestor(tr, wall_row, calls[mine])
        at = np.flatnonzero(mine)[rw >= 0]
        rw = rw[rw >= 0]
        wd, frame = st.drawn, comp.frame  # the icicle's own span (`threads.wall_span`)
        pts[at, 0] = (np.clip(tr.start[calls[at]], st.sel.t0, st.sel.t1) - st.sel.t0) * frame.scale_t
        pts[at, 2] = wd.bottom[rw] + 0.5 * wd.height[rw]
        key[at] = 0
        on_wall[mine] = True  # the focused thread's calls are drawn on the icicle only
    ring_row = np.full(len(tr), -1, np.int64)
    ring_row[d.idx] = np.arange(d.idx.size)
    rest = np.flatnonzero(~on_wall)
    rr = drawn_ancestor(tr, ring_row, calls[rest])
    at = rest[rr >= 0]
    rr = rr[rr >= 0]
    radius = ring.zero_radius + d.level_bottom[rr] + 0.5 * BAR_FILL * d.level_height[rr]
    pts[at] = place.to_world(polar(ring.angle(d.lane[rr], start[at]), radius, 0.0))
    key[at] = 1 + d.lane[rr]
    return pts, key


def flow_materials(lane_rgb) -> dict:
    """One tube material per thread (lane order): its colour, darkened as the thread names are,
    translucent as the icicle's arcs (`flow_arcs.FLOW_ALPHA`: the names under them read)."""
    from .palette import darker
    from .flow_arcs import flow_material

    return {f"TV3D_flow_lane{k:02d}": flow_material(f"TV3D_flow_lane{k:02d}", col)
            for k, col in enumerate(np.clip(darker(lane_rgb), 0.0, 1.0))}


def thread_view_flows(sel, d, ring, place, comp, params, cam, resolution, px_world: float, lane_materials: dict,
                      focus_lane: int, summary: bool) -> tuple:
    """(tube layer or None, info) of the flows in the thread view (module docstring); each
    arc in the material of the thread it reaches (``lane_materials``, one per lane in lane
    order: `flow_materials`; the focused thread's for an end on the icicle); ``summary``: one
    arc a pair of threads (`summary_arc_count` > 0, decided once for the legend and the arcs)."""
    tr = sel.trace
    nf = int(tr.flow_from.size)
    info = {"n_flows": nf, "n_flow_arcs": 0, "n_flows_drawn": 0, "flow_summary": False}
    if nf == 0 or not params.show_flows:
        return None, info
    t0, t1 = sel.t0, sel.t1
    fi = np.flatnonzero(flows_inside(tr, t0, t1))
    if summary:  # one arc a pair of threads (`summary_arc_count`, which the legend says)
        lf, lt = flow_lanes(tr, sel.lane_of_thread(), fi)
        ok = (lf >= 0) & (lt >= 0) & (lf != lt)
        p0, p1, p2, cnt, rep, lane, reach = summary_arcs(tr, fi[ok], lf[ok], lt[ok], ring, place, t0, t1)
        info.update(n_flow_arcs=int(cnt.size), n_flows_drawn=int(cnt.sum()), flow_summary=True,
                    n_flows_within=int(((lf == lt) & (lf >= 0)).sum()))
        lane_rgb = np.array([spec.color[:3] for spec in lane_materials.values()], np.float32).reshape(-1, 3)
        lane = lane.astype(np.int32)
        return flow_tubes("flows", p0, p1, p2, cnt, rep, SUMMARY_WIDTH * px_world, lane, list(lane_materials),
                          lane_rgb[lane], reach_us=reach), info
    pa, ka = flow_ends(sel, d, ring, place, comp, tr.flow_from[fi])
    pb, kb = flow_ends(sel, d, ring, place, comp, tr.flow_to[fi])
    ok = (ka >= 0) & (kb >= 0) & (np.linalg.norm(pa - pb, axis=1) > 1e-9)
    fi, pa, pb, ka, kb = fi[ok], pa[ok], pb[ok], ka[ok], kb[ok]
    if fi.size == 0:
        return None, info
    ia, ib = project(cam, pa, resolution), project(cam, pb, resolution)
    _, first, group, count, _ = coarsened_bundles(  # the icicle's rule (`flow_arcs.flow_arcs`)
        lambda c: np.column_stack([ka, np.floor(ia / c), kb, np.floor(ib / c)]), FLOW_CELL_PX,
        FLOW_CELL_MAX_FRAC * float(max(resolution)), MAX_THREAD_FLOW_ARCS)
    m_all = count.size
    p0 = np.stack([np.bincount(group, pa[:, j], m_all) / count for j in range(3)], 1)
    p2 = np.stack([np.bincount(group, pb[:, j], m_all) / count for j in range(3)], 1)
    reach = first_reach(tr, fi, group, t0, t1, m_all)
    keep = np.argsort(-count, kind="stable")[:MAX_THREAD_FLOW_ARCS]
    p0, p2, cnt, rep, reach = p0[keep], p2[keep], count[keep], fi[first[keep]], reach[keep]
    m = cnt.size
    length = np.linalg.norm(p2 - p0, axis=1)
    mid = 0.5 * (p0 + p2)
    towards = np.asarray(cam.location, np.float64)[None] - mid
    towards /= np.maximum(np.linalg.norm(towards, axis=1, keepdims=True), 1e-12)
    p1 = mid + towards * (0.25 * length + 4 * px_world)[:, None]  # bowed towards the camera
    # as many as leave the picture seen (`flow_arcs.ink_selection`: Chromium's 300 arcs between
    # 24 threads were a tangle over every name), their ink measured where they are drawn
    pts = project(cam, bezier_points(p0, p1, p2).reshape(-1, 3), resolution)[:, :2].reshape(m, -1, 2)
    drawn = ink_selection(pts, flow_radius(cnt), float(resolution[1]), frac=THREAD_VIEW_INK_FRAC,
                          reached=kb[first[keep]])
    keep, p0, p1, p2, cnt, rep, reach = (a[drawn] for a in (keep, p0, p1, p2, cnt, rep, reach))
    info.update(n_flow_arcs=int(cnt.size), n_flows_drawn=int(cnt.sum()))
    to_key = kb[first[keep]]
    lane = np.where(to_key >= 1, to_key - 1, focus_lane).astype(np.int32)
    lane_rgb = np.array([spec.color[:3] for spec in lane_materials.values()], np.float32).reshape(-1, 3)
    return flow_tubes("flows", p0, p1, p2, cnt, rep, px_world, lane, list(lane_materials), lane_rgb[lane],
                      reach_us=reach), info
