"""Names on the widest calls of the live scene, refreshed at a lower rate than the boxes.

Candidates are the calls of the top ``levels`` levels of every lane (their per-thread
local indices are collected as they arrive: O(new)); once per `INTERVAL` seconds the widest
``max_labels`` (`LiveParams`) of them that are in view, on a full level (`LiveLayout.level_thickness`: not
folded, among the first `LiveLayout.full_levels`) and wide
enough for their name get one of a fixed pool of text objects (no object is created or
deleted per pass after the pool is full).  As in the static icicle (`layout.labels`): the
text is `LiveLayout.label_px` pixels (never under 14 px at 1080 lines), shortened to its
informative end (`text.fit_text`), centred on the box's face, and only where the face holds
it; labels carry ``tv3d_kind`` "call" and ``call_index`` (the thread's local call index).
`write_hud` writes the heads-up display (title, legend) into objects made once.
"""
from __future__ import annotations

import math
import time

import bpy
import numpy as np

from ..layout.icicle import short_name
from ..layout.live import BOX_FILL
from ..live.store import grow_rows

INTERVAL = 1.0


def text_object(coll, name: str, material, parent=None):
    """A FONT object of the live scene, linked in ``coll``: in the x-z plane facing the camera,
    or (``parent``) a heads-up item in its parent's frame, casting no shadow."""
    from .writer import attach_to_camera, no_shadow

    cu = bpy.data.curves.new(name, "FONT")
    cu.materials.append(material)
    ob = bpy.data.objects.new(name, cu)
    coll.objects.link(ob)
    if parent is None:
        ob.rotation_euler = (math.pi / 2, 0.0, 0.0)
    else:
        cu.align_y = "BOTTOM_BASELINE"
        attach_to_camera(ob, parent)
        no_shadow(ob)
    return ob


class LiveLabels:
    def __init__(self, coll, material, material_light=None):
        """``material``: dark text; ``material_light``: light text, for names on dark boxes
        (the module colours, the red of waits), chosen per label as the static icicle's
        (`layout.labels.contrast_text_material`)."""
        self.coll, self.material = coll, material
        self.material_light = material_light or material
        self.pool: list = []
        self.cand: list[np.ndarray] = []
        self.cand_n: list[int] = []
        self.last = -math.inf
        self._short: dict = {}

    def collect(self, ti: int, T, lo: int, hi: int, levels: int, depth=None, hidden=None) -> None:
        """Remember the calls of the first ``levels`` levels among thread ``ti``'s new
        calls [lo, hi) (the lanes' full levels lie within them); ``depth``: the levels
        they are drawn at (default ``T.depth``), ``hidden``: bool per new call, not drawn."""
        depth = T.depth if depth is None else depth
        while len(self.cand) <= ti:
            self.cand.append(np.zeros(64, np.int64))
            self.cand_n.append(0)
        keep = depth[lo:hi] < levels
        if hidden is not None:
            keep &= ~hidden
        new = lo + np.flatnonzero(keep)
        k = self.cand_n[ti]
        self.cand[ti] = grow_rows(self.cand[ti], k + new.size)
        self.cand[ti][k: k + new.size] = new
        self.cand_n[ti] = k + new.size

    def forget(self, ti: int, T, cut: float) -> None:
        """Drop thread ``ti``'s candidates that ended before ``cut`` (the live view's trail)."""
        if ti >= len(self.cand) or not self.cand_n[ti]:
            return
        c = self.cand[ti][: self.cand_n[ti]]
        keep = c[(T.endi[c] < 0) | (T.end[c] >= cut)]
        self.cand[ti][: keep.size] = keep
        self.cand_n[ti] = keep.size

    def _label(self, k: int):
        while len(self.pool) <= k:
            self.pool.append(text_object(self.coll, f"TV3D_live_label_{len(self.pool)}", self.material))
        return self.pool[k]

    def refresh(self, session, layout, t0: float, t1: float, force: bool = False, px: float = 0.0,
                depth_of=None) -> int:
        """Place the labels (at most once per INTERVAL unless ``force``); how many are shown.
        ``px``: world length of a pixel; ``depth_of(thread)``: the levels its calls are
        drawn at (default their depths)."""
        depth_of = depth_of or (lambda ti: session.threads[ti].depth)
        most = int(layout.p.max_labels) if layout.p.show_labels else 0
        from ..layout.labels import PAD, contrast_text_material
        from ..layout.text import ASCENT, DESCENT, fit_text, name_candidates

        now = time.monotonic()
        if not force and now - self.last < INTERVAL:
            return -1
        self.last = now
        tpx = layout.label_px()
        size = tpx * px
        face_px = BOX_FILL * layout.h / px if px > 0 else 0.0
        if px <= 0 or face_px < tpx * (ASCENT + DESCENT) * 1.08:  # the full levels are too thin for names
            for ob in self.pool:
                ob.hide_render = ob.hide_viewport = True
            return 0
        picks = []
        for ti, T in enumerate(session.threads):
            if ti >= len(self.cand) or not self.cand_n[ti]:
                continue
            loc = self.cand[ti][: self.cand_n[ti]]
            lane = layout.lanes.lane_of(ti, loc)  # threads of one kind may share a lane (`LiveLanes`)
            # full levels: not folded (the lane's infrastructure, the fold ranges), the first `full_levels`
            depth = depth_of(ti)[loc]
            keep = (layout.level_thickness(lane, depth) >= 1.0) & (depth < layout.levels_of(lane))
            loc, lane = loc[keep], lane[keep]
            start = np.maximum(T.start[loc], t0)
            end = np.where(T.endi[loc] < 0, session.sessions[T.session].now, T.end[loc])
            end = np.minimum(end, t1)
            width = (end - start) * layout.scale_t
            ok = np.flatnonzero(width > (3 * 0.5 + 1.0 + 2 * PAD) * size)
            top = ok[np.argsort(-width[ok], kind="stable")[:most]]
            picks += [(float(width[j]), ti, int(loc[j]), float(start[j]), int(lane[j])) for j in top]
        picks.sort(reverse=True)
        shown = 0
        for width, ti, i, start, lane in picks:
            if shown >= most:
                break
            T = session.threads[ti]
            f = int(T.func[i])
            cands = self._short.get(f)
            if cands is None:
                cands = self._short[f] = name_candidates(short_name(session.fnames[f]))
            text = fit_text(cands, width / size - 2 * PAD)
            if not text:
                continue
            ob = self._label(shown)
            if ob.data.body != text:
                ob.data.body = text
            ob.data.size = size
            ob.data.align_x = "CENTER"
            slot = layout.call_slots(T.func[i: i + 1], session.fkind[T.func[i: i + 1]], session.fnames,
                                     session.ffiles, session.flines)
            light = contrast_text_material(layout.colouring.rgb[slot])[0] == "TV3D_text_light"
            mat = self.material_light if light else self.material
            if ob.data.materials[0] != mat:
                ob.data.materials[0] = mat
            ob["tv3d_kind"] = "call"
            ob["call_index"] = int(i)
            z, _ = layout.level_z(lane, int(depth_of(ti)[i]))
            ob.location = (start * layout.scale_t + 0.5 * width, -0.02, float(z) - 0.5 * (ASCENT - DESCENT) * size)
            ob.hide_render = ob.hide_viewport = False
            shown += 1
        for ob in self.pool[shown:]:
            ob.hide_render = ob.hide_viewport = True
        return shown


MAX_SWATCHES = 32  # legend rows with a colour (the module budget and the reserved colours fit)


def write_hud(pool: list, coll, hud_root, legend_ob, labels, swatches):
    """Write the live view's heads-up display into objects made once and reused (text
    objects from ``pool``, grown as needed under ``hud_root``; one point cloud
    ``legend_ob`` of `MAX_SWATCHES` swatches): no data-block is made or removed while the
    scene grows.  Returns the title's object (None without a title)."""
    title_ob = None
    for i in range(len(labels)):
        while len(pool) <= i:
            pool.append(text_object(coll, f"TV3D_live_hud_{len(pool)}", bpy.data.materials[labels.material[i]],
                                    parent=hud_root))
        ob = pool[i]
        cu = ob.data
        if cu.body != labels.texts[i]:
            cu.body = labels.texts[i]
        cu.size = float(labels.sizes[i])
        cu.align_x = ("LEFT", "CENTER", "RIGHT")[int(labels.align[i])]
        cu.materials[0] = bpy.data.materials[labels.material[i]]
        ob.location = tuple(float(v) for v in labels.anchors[i])
        ob.rotation_euler = tuple(float(v) for v in labels.rotation[i])
        ob.hide_render = ob.hide_viewport = False
        ob["tv3d_kind"] = labels.kind[i]
        if labels.kind[i] == "title":
            title_ob = ob
    for ob in pool[len(labels):]:
        ob.hide_render = ob.hide_viewport = True
    k = 0 if swatches is None else min(len(swatches.positions), MAX_SWATCHES)
    pos = np.zeros((MAX_SWATCHES, 3), np.float32)
    sc = np.zeros((MAX_SWATCHES, 3), np.float32)
    col = np.ones((MAX_SWATCHES, 4), np.float32)
    mat = np.zeros(MAX_SWATCHES, np.int32)
    if k:
        pos[:k], sc[:k], col[:k] = swatches.positions[:k], swatches.scales[:k], swatches.colors[:k]
        mat[:k] = swatches.material_index[:k]
    A = legend_ob.data.attributes
    A["position"].data.foreach_set("vector", pos.ravel())
    A["tv_scale"].data.foreach_set("vector", sc.ravel())
    A["tv_color"].data.foreach_set("color", col.ravel())
    A["tv_mat"].data.foreach_set("value", mat)
    legend_ob.data.update_tag()
    return title_ob
