"""Correspondence curves of the thread view (SyncTrace IV-B1, IV-B2), bpy-free.

One curve per hand-off (the primary correspondences of `Synchronisation`, ``Queue.get`` ↔
``Queue.put`` rather than the lock calls inside them; of a wait's primary rows the one whose
release started last, the release that ended it: the holder of numba's reentrant compiler
lock releases it ~60 times during one wait, and every candidate drew a dark wedge of 128
curves for 2 hand-offs) whose wait overlaps the window and whose release lies in it, between
two shown threads:

- three anchors (Fig. 3) just inside the ring: the wait's start and end moments on the
  waiting thread's sector and the release moment on the releasing thread's sector; the curve
  is the filled ribbon between the cubic Béziers start→release and end→release, pulled
  towards the centre (the more, the farther apart the two moments are on the ring), so it
  is as wide as the wait at the waiter and a point at the releaser: asymmetric, waiter and
  releaser are told apart.  Semi-transparent, in the waiting thread's colour (or the
  object's colour in object mode; grey for an object only one thread ever waited on);
- a circle at the release moment;
- a wait marker: the wait's time range as a semi-transparent band on the releasing
  thread's sector, with a start shading in the waiter's colour;
- aggregation (Eq. 8): waits that are part of a cluster of sub-pixel calls are drawn as one
  compound curve per (cluster, releasing thread): from the cluster's start and end to the
  minimum and maximum release moment rel_A(T_m), lighter and beneath the single curves.

Paper note: IV-B2 says "we render the non-aggregated correspondences opaquely on the
canvas' background, below their non-aggregated counterparts" — one of the two must read
"aggregated": the compound (aggregated) curves are the ones drawn beneath the single ones
(the sentence's own purpose: their larger area should not draw too much attention); we do
that (lower z, lighter, more transparent).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SAMPLES = 28
OVERFLOW_BINS = 200  # waits beyond max_curves are merged per 1/200 of the window
ANCHOR_INSET = 1.05  # curves end this many level widths inside the zero-level radius (on the lane band)
MARKER_BAND = (0.75, 0.12)  # wait markers span [Z - a, Z - b]
MIN_WAIT_PX = 2.5  # a wait narrower than this many pixels is widened to it at the waiter
MIN_RIBBON_PX = 1.3  # a ribbon is never thinner than this
CIRCLE_PX = (3.0, 6.5)  # release circle inner/outer radius in pixels


@dataclass
class CurveSet:
    """Curves, circles and markers in world units, before they become layers."""

    left: np.ndarray  # (m, s, 3)
    right: np.ndarray
    waiter_lane: np.ndarray  # (m,)
    releaser_lane: np.ndarray
    row: np.ndarray  # (m,) correspondence row, -1 for compound curves
    wait_call: np.ndarray  # (m,) the wait call (compound: the cluster's longest call)
    release_call: np.ndarray  # (m,) the release call (compound: -1)
    object: np.ndarray  # (m,) object index into sync.object_names
    compound: np.ndarray  # (m,) bool
    n_corr: np.ndarray  # (m,) correspondences drawn by this curve
    marker_angles: np.ndarray  # (m, 2) wait range on the releaser's sector
    release_xy: np.ndarray  # (m, 2) release anchor (compound: max release)


def shown_rows(sync, sel, lane_of_thread: np.ndarray) -> np.ndarray:
    """The hand-offs between shown threads, wait overlapping and release inside the window:
    primary correspondences, of each wait the one whose release started last (the others were
    releases during the wait that did not end it)."""
    tr = sync.trace
    w, r = sync.wait_call, sync.release_call
    lw, lr = lane_of_thread[tr.thread[w]], lane_of_thread[tr.thread[r]]
    ok = sync.primary & (lw >= 0) & (lr >= 0)
    ok &= (tr.end[w] >= sel.t0) & (tr.start[w] <= sel.t1) & (tr.start[r] >= sel.t0) & (tr.start[r] <= sel.t1)
    rows = np.flatnonzero(ok)
    if rows.size:
        rows = rows[np.lexsort((tr.start[r[rows]], w[rows]))]
        last = np.r_[w[rows][1:] != w[rows][:-1], True]  # the latest release of each wait
        rows = np.sort(rows[last])
    return rows


def shown_position(calls: np.ndarray, pos: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Position in the shown calls of each call, or of its nearest shown ancestor."""
    p = pos[calls]
    cur = calls.copy()
    for _ in range(4096):
        miss = p < 0
        if not miss.any():
            break
        cur[miss] = parent[cur[miss]]
        gone = miss & (cur < 0)
        p[gone] = -2
        still = miss & ~gone
        p[still] = pos[cur[still]]
    return p


def polar(a, radius, z) -> np.ndarray:
    a = np.asarray(a, np.float64)
    return np.stack([radius * np.cos(a), radius * np.sin(a), np.full_like(a, z)], axis=-1)


def bezier_to_centre(p0: np.ndarray, p3: np.ndarray, samples: int) -> np.ndarray:
    """(m, s, 3) cubic Béziers p0 → p3 with inner control points pulled towards the centre:
    p1 = k p0, p2 = k p3, k = 1 - 0.8 sin(Δ/2), Δ the angle between p0 and p3 seen from the
    centre (a curve across the ring passes near the centre, one to a neighbour stays close
    to the ring)."""
    a0 = np.arctan2(p0[:, 1], p0[:, 0])
    a3 = np.arctan2(p3[:, 1], p3[:, 0])
    d = np.abs((a3 - a0 + np.pi) % (2 * np.pi) - np.pi)
    k = (1.0 - 0.8 * np.sin(d / 2))[:, None]
    p1 = p0 * np.r_[1.0, 1.0, 1.0] * np.c_[k, k, np.ones_like(k)]
    p2 = p3 * np.c_[k, k, np.ones_like(k)]
    t = np.linspace(0.0, 1.0, samples)[None, :, None]
    u = 1.0 - t
    return (u ** 3 * p0[:, None] + 3 * u * u * t * p1[:, None] + 3 * u * t * t * p2[:, None]
            + t ** 3 * p3[:, None])


def widen(left: np.ndarray, right: np.ndarray, min_w: float) -> tuple:
    """Push the sides of a ribbon apart (in the ground plane) where they are closer than ``min_w``."""
    c = 0.5 * (left + right)
    d = right - left
    width = np.linalg.norm(d[..., :2], axis=-1)
    tang = np.gradient(c, axis=1)
    nrm = np.stack([-tang[..., 1], tang[..., 0], np.zeros_like(tang[..., 0])], axis=-1)
    nrm /= np.maximum(np.linalg.norm(nrm, axis=-1, keepdims=True), 1e-12)
    thin = width < min_w
    side = np.where(np.sum(d * nrm, axis=-1, keepdims=True) < 0, -1.0, 1.0)
    half = np.where(thin[..., None], 0.5 * min_w * side * nrm, 0.5 * d)
    return c - half, c + half


def min_arc(a0, a1, radius, min_world) -> tuple:
    """Angles widened symmetrically to an arc of at least ``min_world`` at ``radius``."""
    need = min_world / max(radius, 1e-9)
    mid = 0.5 * (a0 + a1)
    half = np.maximum(0.5 * (a1 - a0), 0.5 * need)
    return mid - half, mid + half


def overflow_groups(tr, w, lw, over, p, t0, t1, base):
    """Waits beyond ``max_curves`` grouped per (waiting lane, 1/OVERFLOW_BINS of the window):
    (cluster id per row of ``over``, group start, end, representative position)."""
    b = np.minimum(((np.clip(tr.start[w[over]], t0, t1) - t0) / max(t1 - t0, 1e-300) * OVERFLOW_BINS)
                   .astype(np.int64), OVERFLOW_BINS - 1)
    ug, ginv = np.unique(lw[over] * OVERFLOW_BINS + b, return_inverse=True)
    gs, ge = np.full(ug.size, np.inf), np.full(ug.size, -np.inf)
    np.minimum.at(gs, ginv, np.maximum(tr.start[w[over]], t0))
    np.maximum.at(ge, ginv, np.minimum(tr.end[w[over]], t1))
    rep = np.zeros(ug.size, np.int64)
    rep[ginv[::-1]] = np.maximum(p[over[::-1]], 0)
    return base + ginv, gs, ge, rep


def build_curves(sync, sel, ring, lane_of_thread, cluster_of, c_start, c_end, c_rep, px: float,
                 max_curves: int | None = None) -> CurveSet:
    """The curves of the shown hand-offs (singles, then compounds per cluster and releasing
    lane); ``px`` is the world size of a pixel at the ring.  Beyond ``max_curves`` single
    curves, the shorter waits join compound curves per (waiting thread, 1/200 of the window)."""
    tr = sync.trace
    rows = shown_rows(sync, sel, lane_of_thread)
    w, r = sync.wait_call[rows], sync.release_call[rows]
    lw = lane_of_thread[tr.thread[w]].astype(np.int64)
    lr = lane_of_thread[tr.thread[r]].astype(np.int64)
    pos = np.full(len(tr), -1, np.int64)
    pos[sel.original(sel.idx)] = np.arange(sel.idx.size)  # the analysis' calls (before any hiding)
    p = shown_position(w.astype(np.int64), pos, tr.parent)
    clus = np.where(p >= 0, cluster_of[np.maximum(p, 0)], -1) if p.size else np.zeros(0, np.int64)
    single = clus < 0
    if max_curves is not None and int(single.sum()) > max_curves:
        s_all = np.flatnonzero(single)
        over = s_all[np.argsort(-(tr.end[w[s_all]] - tr.start[w[s_all]]), kind="stable")[max_curves:]]
        ids, gs, ge, grep = overflow_groups(tr, w, lw, over, p, ring.t0, ring.t1, c_start.size)
        clus = clus.astype(np.int64)
        clus[over] = ids
        c_start, c_end, c_rep = np.r_[c_start, gs], np.r_[c_end, ge], np.r_[c_rep, grep].astype(np.int64)
        single = clus < 0
    Rc = ring.zero_radius - ANCHOR_INSET
    # singles
    ws, we = ring.angle(lw, tr.start[w]), ring.angle(lw, tr.end[w])
    ws, we = min_arc(ws, we, Rc, MIN_WAIT_PX * px)
    ar = ring.angle(lr, tr.start[r])
    s_idx = np.flatnonzero(single)
    # compounds: one per (cluster, releasing lane), Eq. 8
    c_idx = np.flatnonzero(~single)
    key = clus[c_idx].astype(np.int64) * max(lane_of_thread.size, 1) + lr[c_idx]
    uk, inv = np.unique(key, return_inverse=True)
    nc = uk.size
    first = np.zeros(nc, np.int64)
    first[inv[::-1]] = c_idx[::-1]
    rmin = np.full(nc, np.inf)
    rmax = np.full(nc, -np.inf)
    np.minimum.at(rmin, inv, ar[c_idx])
    np.maximum.at(rmax, inv, ar[c_idx])
    cl = clus[first]
    cs, ce = ring.angle(lw[first], c_start[cl]) if nc else np.zeros(0), ring.angle(lw[first], c_end[cl]) if nc \
        else np.zeros(0)
    cs, ce = min_arc(cs, ce, Rc, MIN_WAIT_PX * px)
    z_single, z_comp = 0.03, 0.015
    left = np.concatenate([bezier_to_centre(polar(ws[s_idx], Rc, z_single), polar(ar[s_idx], Rc, z_single), SAMPLES),
                           bezier_to_centre(polar(cs, Rc, z_comp), polar(rmin, Rc, z_comp), SAMPLES)])
    right = np.concatenate([bezier_to_centre(polar(we[s_idx], Rc, z_single), polar(ar[s_idx], Rc, z_single), SAMPLES),
                            bezier_to_centre(polar(ce, Rc, z_comp), polar(rmax, Rc, z_comp), SAMPLES)])
    left, right = widen(left, right, MIN_RIBBON_PX * px)
    counts = np.bincount(inv, minlength=nc) if nc else np.zeros(0, np.int64)
    mark_s = np.concatenate([ring.angle(lr[s_idx], tr.start[w[s_idx]]),
                             ring.angle(lr[first], c_start[cl]) if nc else np.zeros(0)])
    mark_e = np.concatenate([ring.angle(lr[s_idx], tr.end[w[s_idx]]),
                             ring.angle(lr[first], c_end[cl]) if nc else np.zeros(0)])
    rel_a = np.concatenate([ar[s_idx], rmax])
    return CurveSet(
        left=left.astype(np.float32), right=right.astype(np.float32),
        waiter_lane=np.concatenate([lw[s_idx], lw[first]]), releaser_lane=np.concatenate([lr[s_idx], lr[first]]),
        row=np.concatenate([rows[s_idx], np.full(nc, -1)]).astype(np.int32),
        wait_call=np.concatenate([w[s_idx], sel.original(sel.idx[c_rep[cl]]) if nc else np.zeros(0, np.int64)]
                                 ).astype(np.int32),
        release_call=np.concatenate([r[s_idx], np.full(nc, -1)]).astype(np.int32),
        object=np.concatenate([sync.object[rows[s_idx]], sync.object[rows[first]]]).astype(np.int32),
        compound=np.r_[np.zeros(s_idx.size, bool), np.ones(nc, bool)],
        n_corr=np.r_[np.ones(s_idx.size, np.int64), counts].astype(np.int32),
        marker_angles=np.stack([mark_s, mark_e], axis=1) if mark_s.size else np.zeros((0, 2)),
        release_xy=polar(rel_a, Rc, 0.0)[:, :2] if rel_a.size else np.zeros((0, 2)),
    )


def circle_ribbons(centres_xy: np.ndarray, r_in: float, r_out: float, z: float, samples: int = SAMPLES) -> tuple:
    """Annuli around ``centres_xy`` as ribbons (left = inner circle, right = outer)."""
    a = np.linspace(0, 2 * np.pi, samples)[None, :]
    cx, cy = centres_xy[:, :1], centres_xy[:, 1:2]
    zz = np.full((centres_xy.shape[0], samples), z)
    inner = np.stack([cx + r_in * np.cos(a), cy + r_in * np.sin(a), zz], axis=-1)
    outer = np.stack([cx + r_out * np.cos(a), cy + r_out * np.sin(a), zz], axis=-1)
    return inner.astype(np.float32), outer.astype(np.float32)


def object_colour_index(sync, objects: np.ndarray) -> np.ndarray:
    """Object mode (IV-B3): a colour index per object waited on by two or more threads
    (most waited first), -1 (grey) for an object only one thread ever waited on."""
    tr = sync.trace
    if len(sync) == 0:
        return np.full(objects.size, -1, np.int64)
    nt = max(tr.n_threads, 1)
    key = np.unique(sync.object.astype(np.int64) * nt + tr.thread[sync.wait_call])
    n_threads = np.bincount(key // nt, minlength=len(sync.object_names))
    wait_us = np.bincount(sync.object, weights=(tr.end - tr.start)[sync.wait_call], minlength=len(sync.object_names))
    shared = np.flatnonzero(n_threads >= 2)
    rank = np.full(len(sync.object_names), -1, np.int64)
    rank[shared[np.argsort(-wait_us[shared], kind="stable")]] = np.arange(shared.size)
    return rank[objects]
