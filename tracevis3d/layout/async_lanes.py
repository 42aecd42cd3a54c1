"""Async slices as lanes of their own under the thread lanes (bpy-free).

Chrome's async slices (``b``/``e``/``n``) belong to tracks (category, id, process), not to
threads: a network request, a coroutine, a scheduled task.  A figure gives each (category,
process) one lane under the thread lanes, its slices packed into rows so that none overlap
(`kernels.rows.pack_rows`: nested slices stack upwards as in an icicle; at most
`MAX_ASYNC_ROWS` rows, the rest drawn in the row that frees first and counted).  At most
`MAX_ASYNC_LANES` lanes, the categories with the most slices in the window first; slices
narrower than a pixel keep a pixel's width.  Each box carries ``tv3d_kind`` = async and
``side_index`` = the slice's index in the trace's async arrays.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .spec import InstanceLayer, LabelSet, MaterialSpec

MAX_ASYNC_ROWS = 6
MAX_ASYNC_LANES = 4
ASYNC_ROW_UNITS = 0.45  # height of a row, in counter-track heights
ASYNC_RGB = ((0.45, 0.55, 0.72), (0.72, 0.55, 0.40), (0.50, 0.66, 0.52), (0.66, 0.50, 0.66), (0.60, 0.60, 0.45),
             (0.45, 0.66, 0.68))
MIN_LABEL_EM = 3.0
ASYNC_TEXT = 0.8  # lane and slice names, in label sizes (`labels.side_text_share`: never under 14 px)


@dataclass
class AsyncLane:
    label: str  # "async · net (pid 10)"
    slices: np.ndarray  # int64 indices into the trace's async arrays, by start
    row: np.ndarray  # int32 row of each slice
    n_rows: int
    overflow: int

    @property
    def units(self) -> float:
        return ASYNC_ROW_UNITS * max(self.n_rows, 1)


@dataclass
class AsyncPlan:
    lanes: list = field(default_factory=list)
    others: list = field(default_factory=list)  # labels of lanes not drawn

    def __len__(self) -> int:
        return len(self.lanes)


def process_labels(tr) -> dict:
    """pid → the label its threads' lanes give the process (`Trace.thread_label`: "Browser",
    "Renderer #2" where several share a name), for the pids that have threads with a named
    process; an async lane is named like them ("async · navigation (Renderer #2)", not by pid)."""
    labels = tr.thread_name_counts()[2]
    out: dict = {}
    for t, pid in enumerate(tr.thread_pid[:len(labels)].tolist()):
        if labels[t] and not str(labels[t]).isdigit():  # a process named by its pid alone says no more
            out.setdefault(int(pid), str(labels[t]))
    return out


def async_plan(tr, t0: float, t1: float, show: bool) -> AsyncPlan:
    """The async lanes of a figure: slices overlapping [t0, t1], grouped by (category,
    process) of their track, packed into rows."""
    from ..kernels.rows import pack_rows

    if not show or tr.async_start.size == 0:
        return AsyncPlan()
    inside = np.flatnonzero((tr.async_end >= t0) & (tr.async_start <= t1))
    if inside.size == 0:
        return AsyncPlan()
    cats = np.asarray(tr.async_track_cats, dtype=object)
    trk = tr.async_track[inside]
    proc = process_labels(tr)
    key_names = [f"{c} ({proc.get(p) or f'pid {p}'})" for c, p in zip(cats, tr.async_track_pid.tolist())]
    if len(set(tr.async_track_pid.tolist())) == 1:
        key_names = [str(c) for c in cats]
    names, group = np.unique(np.asarray(key_names, dtype=object)[trk], return_inverse=True)
    group = group.reshape(-1)
    counts = np.bincount(group, minlength=names.size)
    order = np.argsort(-counts, kind="stable")
    plan = AsyncPlan()
    for g in order[:MAX_ASYNC_LANES]:  # a few lanes; their slices vectorised in the kernel
        sl = inside[group == g]
        sl = sl[np.argsort(tr.async_start[sl], kind="stable")]
        row, used, over = pack_rows(tr.async_start[sl], tr.async_end[sl], MAX_ASYNC_ROWS)
        plan.lanes.append(AsyncLane(f"async · {names[g] or 'no category'}", sl, row, int(used), int(over)))
    plan.others = [f"async · {names[g]}" for g in order[MAX_ASYNC_LANES:]]
    return plan


def async_geometry(tr, plan: AsyncPlan, rows: tuple, frame, params, t0: float, t1: float, tpx: float,
                   track_depth: float, name_prefix: str = ""):
    """(boxes layer, label set, materials) of the async lanes, lane k in the block
    ``rows[0][k]``..``rows[1][k]`` (bottom, top) of the frame; each slice's name on it
    where it fits at the labels' size."""
    from ..kernels.rows import merge_row_boxes
    from .annotate import lane_labels
    from .labels import place_facing_text, side_text_share
    from .text import fit_text, name_candidates

    bottoms, tops = rows
    px = float(np.median(frame.px))
    pos, sc, col, mat, sidx, texts, anchors = [], [], [], [], [], [], []
    size_w = side_text_share(params, ASYNC_TEXT) * tpx * px
    for k, lane in enumerate(plan.lanes):
        row_h = (tops[k] - bottoms[k]) / max(lane.n_rows, 1)
        s = lane.slices
        x0 = (np.clip(tr.async_start[s], t0, t1) - t0) * frame.scale_t
        x1 = (np.clip(tr.async_end[s], t0, t1) - t0) * frame.scale_t
        # slices of a row that overlap (only the overflow row has any) or are narrower than a
        # pixel are drawn as one box (`kernels.rows.merge_row_boxes`), lighter where it holds
        # several: boxes ≤ rows × pixels, whatever the file holds
        first, x0, x1, held = merge_row_boxes(x0, x1, lane.row, lane.n_rows, px)
        s, row = s[first], lane.row[first]
        w = np.maximum(x1 - x0, px)
        z = bottoms[k] + (row + 0.5) * row_h
        n = s.size
        pos.append(np.stack([x0 + w / 2, np.full(n, track_depth / 2), z], 1))
        sc.append(np.stack([w, np.full(n, track_depth), np.full(n, 0.86 * row_h)], 1))
        name = tr.async_name[s]
        slot = name % len(ASYNC_RGB)
        c = np.ones((n, 4))
        c[:, :3] = np.asarray(ASYNC_RGB)[slot]
        c[held > 1, :3] = 0.55 * c[held > 1, :3] + 0.45  # several slices in one box: lighter
        col.append(c)
        mat.append(slot.astype(np.int32))
        sidx.append(s.astype(np.int32))
        if row_h >= 1.1 * size_w:  # names where a row is tall enough and the slice wide enough
            wide = np.flatnonzero(w >= MIN_LABEL_EM * size_w)
            for j in wide[np.argsort(-w[wide], kind="stable")][:40]:
                txt = fit_text(name_candidates(tr.async_names[int(name[j])]), float(w[j] / size_w) - 0.6)
                if txt:
                    texts.append(txt)
                    anchors.append((x0[j] + w[j] / 2, 0.0, z[j]))
    n_all = sum(len(p) for p in pos)
    mats = [f"TV3D_async_{k}" for k in range(len(ASYNC_RGB))]
    layer = InstanceLayer(
        f"{name_prefix}async", np.concatenate(pos).astype(np.float32), np.concatenate(sc).astype(np.float32),
        np.concatenate(col).astype(np.float32), np.concatenate(mat), mats,
        {"call_index": np.full(n_all, -1, np.int32), "tv3d_kind": np.full(n_all, 4, np.int32),
         "side_index": np.concatenate(sidx)})
    sets = [lane_labels([lane.label for lane in plan.lanes], np.asarray(bottoms), np.asarray(tops), frame.cam,
                        params.resolution, frame.to_cam, size_w, 0.7 * size_w)]
    if texts:
        m = len(texts)
        anchor, rot = place_facing_text(np.asarray(anchors), frame.cam, np.full(m, size_w), frame.to_cam)
        sets.append(LabelSet(texts, anchor.astype(np.float32), np.full(m, size_w, np.float32), ["TV3D_text_ui"] * m,
                             np.full(m, 1, np.uint8), ["async"] * m, np.full(m, -1, np.int32),
                             rot.astype(np.float32), ["world"] * m))
    labels = LabelSet.concat(sets)
    labels.kind = ["async"] * len(labels)
    materials = {nm: MaterialSpec(nm, tuple(ASYNC_RGB[k]) + (1.0,)) for k, nm in enumerate(mats)}
    return layer, labels, materials
