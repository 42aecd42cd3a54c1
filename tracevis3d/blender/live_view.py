"""The growing live scene in Blender: calls appended as instances, never rebuilt.

Instances live in point-cloud chunks of `CHUNK` points made once by the icicle writer
(`writer.write_layer`, zero-size boxes = room).  Per update: the new calls' boxes are
written into the last chunk(s) with one ``foreach_set`` per attribute (O(chunk) memcpy),
the calls that were open or just closed get their width rewritten element-wise (O(open
calls)), and the camera follows "now".  A call's instance is found from (thread, local
index) through per-thread growable arrays.  A call narrower than a pixel is drawn by its
cluster alone: the cluster pass gives its instance back, and new calls take such instances
first; so the scene holds the boxes one can see, the clusters and the calls since the last
pass -- not one instance per call (10^7 calls: see bench/bench_live_scale.py).
"""
from __future__ import annotations

import math
import os
import time

import bpy
import numpy as np

from ..layout.annotate import MATERIAL_TEXT_COLOURS
from ..layout.labels import TEXT_LIGHT
from ..layout.live import MAX_NAME_EM, LiveLayout, LiveParams
from ..layout.live_colour import CLUSTER_SLOT_NAMES, SLOT_NAMES, DrawnDepths
from ..layout.live_lanes import axis_ticks, lane_name_places
from ..layout.spec import MaterialSpec, SceneSpec
from ..layout.text import cut_end
from ..live.store import grow_rows
from ..warmup import live_all
from .live_chunks import CHUNK, ChunkedLayer
from .live_labels import MAX_SWATCHES, LiveLabels, text_object, write_hud
from .writer import attach_to_camera, ensure_collection, ensure_material, setup_world_and_display, write_camera, \
    write_layer, write_lights

TEXT_MATERIAL = "TV3D_live_text"
MAX_TICKS = 12  # time-axis labels (a 1-2-5 step gives 5-10 over the window)


class LiveView:
    """Keeps a Blender collection in step with a `LiveSession` (call `update` after polls)."""

    def __init__(self, params: LiveParams | None = None, collection: str = "TraceVis3D Live", scene=None):
        live_all()  # the live kernels (stack, sub-pixel clusters) loaded now, at connect, not in a poll
        self.scene = scene or bpy.context.scene
        self.layout = LiveLayout(params)
        self.coll = ensure_collection(collection, self.scene)
        for ob in list(self.coll.objects):
            bpy.data.objects.remove(ob, do_unlink=True)
        spec = SceneSpec(layers=[], labels=None, legend=[], materials=self.layout.materials(),
                         camera=self.layout.camera(0.0, 1), lights=self.layout.lights(),
                         resolution=tuple(self.layout.p.resolution), background=(1.0, 1.0, 1.0))
        for ms in spec.materials.values():
            ensure_material(ms)
        for name, rgba in MATERIAL_TEXT_COLOURS.items():
            ensure_material(MaterialSpec(name, tuple(rgba), "text", cushion=False, from_attribute=False))
        self._slot_rgb = self.layout.slot_rgb.copy()
        self.cam_ob = write_camera(spec, self.coll, name="TV3D_live_camera", scene=self.scene)
        write_lights(spec, self.coll)
        setup_world_and_display(spec, self.scene)
        self.calls = ChunkedLayer(self.layout, self.coll, "live_calls", SLOT_NAMES)
        self.clusters = ChunkedLayer(self.layout, self.coll, "live_clusters", CLUSTER_SLOT_NAMES)
        self.n_clusters = 0
        self.n = 0                       # calls appended
        self.n_slots = 0                 # instances ever used (the free ones among them in ``free``)
        self.free = np.zeros(0, np.int64)  # instances given back, ascending: taken again first
        self.n_merged = 0                # calls drawn by a cluster alone (no instance)
        # the trail: following now, what ended a window before the view's start is let go of
        self.n_retired = 0               # calls whose box was let go of (out of the trail)
        self._retired_t = 0.0            # µs: the calls closed before it have no box
        self._ret_cursor: list[int] = []  # per thread: calls below it were looked at
        self._ret_pending: list[np.ndarray] = []  # per thread: looked at, still spanning the cut
        self._frozen_passes: list = []   # (µs right of every cluster of the pass, clusters up to it)
        self._view_t0 = 0.0              # µs: the start of the window in view (set with the camera)
        self._area_closed = np.zeros(0, np.float64)  # per function: summed widths of its closed calls
        self._area_cursor: list[int] = []  # per thread: calls below it are summed (or open, below)
        self._area_open: list[np.ndarray] = []  # per thread: calls open at the last ranking
        self.inst: list[np.ndarray] = []  # per thread: instance of each local call, -1: none (capacity doubling)
        self.drawn = DrawnDepths(self.layout.colouring)  # ``--hide``: the level each call is drawn at
        self._threads: list = []
        self._thread_shown: list[bool] = []  # ``threads``: per thread, drawn
        self.inst_n: list[int] = []
        self.open_prev: list = []        # (thread, local) open at the last update
        self.stats = dict(updates=0, appended=0, longest_update=0.0, total_update=0.0)
        self.calls.chunk(0)  # the first chunks (and the instancer node groups) now, not in a poll
        self.clusters.chunk(0)
        self.lane_labels: list = []
        self.text_mat = ensure_material(MaterialSpec(TEXT_MATERIAL, (0.08, 0.08, 0.08, 1.0), "text",
                                                     cushion=False, from_attribute=False))
        light = ensure_material(MaterialSpec(TEXT_MATERIAL + "_light", TEXT_LIGHT, "text", cushion=False,
                                             from_attribute=False))
        self.labels = LiveLabels(self.coll, self.text_mat, light)
        self.texts: dict = {}  # time-axis ticks
        # the heads-up display (title, legend): camera-space objects under one empty that
        # scales with the camera's ortho scale; rebuilt when the legend changes
        self.hud_root = bpy.data.objects.new("TV3D_live_hud", None)
        self.coll.objects.link(self.hud_root)
        self.hud_root.parent = self.cam_ob
        self._legend_key = None
        self._plan = self.layout.hud_plan("live")
        self.layout.content_rect = self._plan.rect
        self._hud_scale0 = 1.0
        self._hud_objects: list = []
        self.title_ob = None
        # the legend's swatches: one point cloud made now (zero-size points = room)
        self.legend_ob = write_layer(self.layout.empty_layer("live_legend", MAX_SWATCHES), self.coll,
                                     "TV3D_live_legend")
        attach_to_camera(self.legend_ob, self.hud_root)
        self._last_rank = -math.inf
        self._last_cluster, self._cluster_px = -math.inf, 0.0
        self._frozen_n, self._frozen_t, self._frozen_px, self._frozen_stale = 0, 0.0, 0.0, False
        self._c_about = np.zeros((CHUNK, 4), np.int64)  # per cluster: lane, level, function, kind
        self._last_pass_now = 0.0
        self._busy_seen = 0

    def _lane_label(self, ti: int, name: str):
        """The thread's name above its lane (a text object; updated when renamed)."""
        while len(self.lane_labels) <= ti:
            self.lane_labels.append(text_object(self.coll, f"TV3D_live_lane_{len(self.lane_labels)}", self.text_mat))
            self.lane_labels[-1]["tv3d_kind"] = "lane"
        ob = self.lane_labels[ti]
        if ob.data.body != name:
            ob.data.body = name
        return ob

    @property
    def chunks(self) -> list:
        return self.calls.chunks

    def _alloc(self, k: int) -> np.ndarray:
        """``k`` instances for new boxes: the lowest given back first (they fill the chunks
        already there), then new ones."""
        take = min(k, self.free.shape[0])
        got = self.free[:take]
        self.free = self.free[take:]
        fresh = np.arange(self.n_slots, self.n_slots + k - take, dtype=np.int64)
        self.n_slots += k - take
        return np.concatenate([got, fresh]) if take else fresh

    def _give_back(self, inst: np.ndarray) -> None:
        """Instances whose calls a cluster draws now: their boxes made invisible, kept for new calls."""
        z = np.zeros((inst.shape[0], 3), np.float32)
        self.calls.put(inst, z, z, np.ones((inst.shape[0], 4), np.float32), np.zeros(inst.shape[0], np.int32))
        self.free = np.union1d(self.free, inst)

    def _write_boxes(self, session, sel: dict) -> bool:
        """(Re)write the boxes of the calls in ``sel`` (thread -> list of local index arrays);
        whether there were any."""
        threads = session.threads
        parts = []
        for ti, locs in sel.items():
            T = threads[ti]
            loc = np.unique(np.concatenate(locs)) if len(locs) > 1 else locs[0]
            loc = loc[self.inst[ti][loc] >= 0]  # the others are drawn by their cluster
            if not loc.size:
                continue
            end = T.end[loc]
            if T.sp:
                now = session.sessions[T.session].now
                end = np.where(T.endi[loc] < 0, now, end)
            func = T.func[loc]
            parts.append((self.inst[ti][loc], T.start[loc], end, self._depths(ti, T)[loc],
                          self.layout.lanes.lane_of(ti, loc), func, session.fkind[func]))
        if parts:
            cols = [np.concatenate(c) for c in zip(*parts)]
            self.calls.put(cols[0], *self.layout.boxes(*cols[1:], session.fnames, session.ffiles, session.flines))
            self._sync_materials()
        return bool(parts)

    def update(self, session, changes=None, force_labels: bool = False) -> dict:
        """Append the calls new since the last update, re-size the open/closed ones, move the
        camera.  Reads the session's per-thread stores directly (never materialises
        ``session.trace``): O(new + open calls) plus one foreach_set per touched chunk; every
        ``recolour_seconds`` an O(calls) ranking of the module colours, and when a lane grows
        or the ranking changes, every box written again."""
        t = time.perf_counter()
        threads = self._threads = session.threads
        # new functions' colour slots (from the names the session parsed already)
        self.layout.colouring.slots(session.fnames, session.ffiles, session.flines, getattr(session, "fparsed", None))
        while len(self.inst) < len(threads):
            self.inst.append(np.zeros(64, np.int64))
            self.inst_n.append(0)
        sel = {}  # thread -> list of local index arrays whose boxes are (re)written
        new = []  # (thread, its first new call)
        for ti, T in enumerate(threads):
            have = self.inst_n[ti]
            if T.n > have and self._shown(ti, T):
                self.inst[ti] = grow_rows(self.inst[ti], T.n)
                hidden = self.drawn.new_calls(ti, T, have)
                if hidden is None:
                    self.inst[ti][have: T.n] = self._alloc(T.n - have)
                else:  # hidden calls get no box (their children moved up)
                    self.inst[ti][have: T.n] = -1
                    self.inst[ti][have + np.flatnonzero(~hidden)] = self._alloc(int((~hidden).sum()))
                self.inst_n[ti] = T.n
                self.n += T.n - have
                sel.setdefault(ti, []).append(np.arange(have, T.n))
                self.labels.collect(ti, T, have, T.n, 2 * self.layout.p.max_levels, self._depths(ti, T),
                                    hidden)  # `LiveLayout.lead_of` + full levels
                new.append((ti, have))
        now = max((s.now for s in session.sessions.values()), default=0.0)
        # the lanes of the threads with new calls (`LiveLanes.update`), from what changed: the
        # new calls, and the calls open at the last update, which may have closed
        changed = {ti: list(locs) for ti, locs in sel.items()}
        for ti, loc in self.open_prev:
            changed.setdefault(ti, []).append(loc)
        lanes, window = self.layout.lanes, np.subtract(*self.layout.view_window(now)[::-1])
        not_program = self.layout.is_infrastructure if not self.drawn.hiding else \
            (lambda f: self.layout.is_infrastructure(f) | self.layout.colouring.hidden[f])
        lanes.update(threads, {ti: np.concatenate(locs) for ti, locs in changed.items()}, new, now, window,
                     not_program, self._depths)
        if self.layout.need_levels(lanes.deepest, lanes.lead):  # a lane got taller: the lanes below move (rare)
            sel = {ti: [self._boxed_calls(ti)] for ti in range(len(threads))}
            self.stats["relayouts"] = self.stats.get("relayouts", 0) + 1
            self._frozen_stale = True  # the frozen clusters' z moved too
        # module colours re-ranked by area: every recolour_seconds, at once while no module
        # has its colour yet (the first update sees a few calls: a short run stayed grey to
        # its end), and on a forced update (a figure rendered now)
        colouring = self.layout.colouring
        if force_labels or (colouring.modules and not colouring.ranked) or self._recolour_due(t):
            self._last_rank = t
            changed = self._recolour(session)
            if changed.size:
                self._recolour_calls(session, changed)
                self.stats["recolours"] = self.stats.get("recolours", 0) + 1
                self._cluster_px = 0.0  # the clusters' colours too, at once
                self._frozen_stale = True
        # calls open last time (maybe closed now) and open now: their width changed
        opened = [(ti, T.stack[: T.sp].copy()) for ti, T in enumerate(threads) if T.sp and self._shown(ti, T)]
        for ti, loc in self.open_prev + opened:
            sel.setdefault(ti, []).append(loc)
        self.open_prev = opened
        wrote = self._write_boxes(session, sel)
        self._hud(session, now)
        if self.layout.need_levels(lanes.deepest, lanes.lead):  # the legend narrowed the frame: levels grew
            self._write_boxes(session, {ti: [self._boxed_calls(ti)] for ti in range(len(threads))})
            self.stats["relayouts"] = self.stats.get("relayouts", 0) + 1
            self._frozen_stale = True
        lane_names, blocks = lanes.names(threads, MAX_NAME_EM)
        self.layout.fit_name_room(lane_names)
        self.set_camera(now, lanes.n_lanes)
        px = self.cam_ob.data.ortho_scale / max(self.layout.p.resolution)  # world per pixel
        # the slow passes take turns: never a cluster pass in the update that re-coloured
        # or moved every box (each is O(calls); the pause stays one pass long), except in a
        # forced update (a figure rendered now): a run whose every update was busy had never
        # been clustered, and a render of 2·10^6 instances came out blank
        busy = self.stats.get("recolours", 0) + self.stats.get("relayouts", 0)
        if (busy == self._busy_seen or force_labels) and self._cluster_due(t, px):
            self._cluster_pass(session, px)
        self._busy_seen = busy
        self.calls.write()
        self.clusters.write()
        if not wrote and self.n_slots > len(self.chunks) * CHUNK - CHUNK // 2:
            self.calls.chunk(len(self.chunks))  # an idle poll: make the next chunk before it is needed
        size = self.layout.text_px() * px
        t0_view, t1_view = self.layout.view_window(now)
        right = self.layout.names_right
        x = t1_view * self.layout.scale_t + 0.6 * size if right else t0_view * self.layout.scale_t - 0.6 * size
        heights = [float(self.layout.lane_height(lane, self.layout.levels_of(lane))) for lane in range(lanes.n_lanes)]
        mid = [float(self.layout.lane_top(lane)) - 0.5 * h for lane, h in enumerate(heights)]
        mid, shown = lane_name_places(blocks, mid, heights, size)
        for lane in range(lanes.n_lanes):
            ob = self._lane_label(lane, lane_names[lane])
            ob.data.size = size
            if ob.data.align_x != ("LEFT" if right else "RIGHT"):
                ob.data.align_x = "LEFT" if right else "RIGHT"
            ob.location = (x, -0.05, mid[lane] - 0.35 * size)
            hide = not shown[lane]
            if ob.hide_render != hide:
                ob.hide_render = ob.hide_viewport = hide
        self._axis(lanes.n_lanes, t0_view, t1_view, size)
        self.labels.refresh(session, self.layout, t0_view, t1_view, force=force_labels, px=px,
                            depth_of=lambda ti: self._depths(ti, threads[ti]))
        dt = time.perf_counter() - t
        st = self.stats
        st["updates"] += 1
        st["appended"] = self.n
        st["instances"] = self.n_slots - self.free.shape[0]
        st["total_update"] += dt
        st["longest_update"] = max(st["longest_update"], dt)
        st["last_update"] = dt
        return st

    def _shown(self, ti: int, T) -> bool:
        """Whether thread ``ti`` is drawn (``threads``: by index or name, decided when it is
        first seen; a thread not shown gets no instance, lane or label)."""
        want = self.layout.p.threads
        if want is None:
            return True
        while len(self._thread_shown) <= ti:
            k = len(self._thread_shown)
            self._thread_shown.append(k in want or str(self._threads[k].name) in want)
        return self._thread_shown[ti]

    def _depths(self, ti: int, T=None) -> np.ndarray:
        """The levels thread ``ti``'s calls are drawn at (`layout.live.DrawnDepths`)."""
        return self.drawn.of(ti, T if T is not None else self._threads[ti])

    def _text(self, key: str, body: str, size: float, location, align: str = "LEFT"):
        """A text object of the live scene's annotations (made once, then only edited)."""
        ob = self.texts.get(key)
        if ob is None:
            ob = self.texts[key] = text_object(self.coll, f"TV3D_live_{key}", self.text_mat)
            ob["tv3d_kind"] = "axis"
        cu = ob.data
        if cu.body != body:
            cu.body = body
        cu.size, cu.align_x = size, align
        ob.location = location
        ob.hide_render = ob.hide_viewport = not body
        return ob

    def _cluster_due(self, t: float, px: float) -> bool:
        """Every ``cluster_seconds`` (a pass costs the calls since the previous one), or at
        once when the scale changed by a fifth since the clusters were made."""
        stale = not (0.8 < px / self._cluster_px < 1.25) if self._cluster_px else True
        if self._view_t0 < self._retired_t:  # the view shows what the trail let go of (follow off)
            stale, self._frozen_px = True, 0.0  # everything again
        if not stale and t - self._last_cluster < self.layout.p.cluster_seconds:
            return False
        self._last_cluster, self._cluster_px = t, px
        return True

    def _cluster_pass(self, session, px: float) -> None:
        """Sub-pixel calls drawn as clusters (SyncTrace IV-B2, the static icicle's kernel) at
        the slow rate.  The calls that start before the previous pass's "now" (less a few
        pixels) are clustered one last time and their clusters frozen (kept while the pixel
        size stays; moved and re-coloured with the lanes and the ranking); the calls after
        that are clustered anew at every pass.  A cluster that spans the cut is two adjacent
        boxes.  So a pass costs O(calls since the previous one) when following now.  Calls
        that became sub-pixel give their instance back (their cluster draws them), those that
        stopped being sub-pixel (another scale) get one again; open calls keep theirs."""
        if not (abs(px / self._frozen_px - 1.0) < 0.01 if self._frozen_px else False):  # another scale: all again
            self._frozen_n, self._frozen_t, self._frozen_px = 0, 0.0, px
            self._frozen_passes = []
            self._retired_t, self._ret_cursor, self._ret_pending = 0.0, [], []  # the boxes come back:
            self.n_merged += self.n_retired  # no box until this pass gives the wide ones theirs
            self.n_retired = 0
        elif self._frozen_stale:  # lanes moved or colours changed: the frozen clusters follow
            self._restyle_frozen(session)
        self._frozen_stale = False
        L = self.layout
        now = max((s.now for s in session.sessions.values()), default=0.0)
        cut = max(self._last_pass_now - 3 * px / L.scale_t, self._frozen_t)
        part_a, part_b = [], []
        for ti, T in enumerate(session.threads):
            n = self.inst_n[ti] if ti < len(self.inst_n) else 0
            # suffixes of the pre-order (starts never decrease)
            lo = int(np.searchsorted(T.start[:n], self._frozen_t)) if self._frozen_t > 0 else 0
            mid = max(int(np.searchsorted(T.start[:n], cut)), lo)
            end = np.where(T.endi[lo:n] < 0, session.sessions[T.session].now, T.end[lo:n])
            for part, a, b in ((part_a, lo, mid), (part_b, mid, n)):
                if b > a:
                    part.append((self.inst[ti][a:b], T.start[a:b], end[a - lo: b - lo], self._depths(ti, T)[a:b],
                                 L.lanes.lane_of(ti, np.arange(a, b)), T.func[a:b], np.arange(a, b),
                                 np.full(b - a, ti)))
        frozen = self._cluster_part(session, part_a, px, now, self._frozen_n)
        self._frozen_n += frozen
        if frozen:  # sub-pixel calls starting before the cut: their clusters end within a pixel after it
            self._frozen_passes.append((cut + px / L.scale_t, self._frozen_n))
        if cut > self._frozen_t:
            self._frozen_t = cut
        k = self._cluster_part(session, part_b, px, now, self._frozen_n)
        old = self.n_clusters
        self.n_clusters = self._frozen_n + k
        if old > self.n_clusters:  # clusters no longer there: zero size
            m = old - self.n_clusters
            z = np.zeros((m, 3), np.float32)
            self.clusters.put(np.arange(self.n_clusters, old), z, z, np.ones((m, 4), np.float32),
                              np.zeros(m, np.int32))
        self._last_pass_now = now
        if L.p.follow:
            self._retire(session, min(self._view_t0 - L.p.window_us, self._frozen_t))
        self.stats["clusters"] = self.n_clusters
        self.stats["clustered_calls"] = self.n_merged
        self.stats["retired_calls"] = self.n_retired

    def _cluster_part(self, session, parts: list, px: float, now: float, base: int) -> int:
        """Cluster the calls ``parts`` (per-thread pre-order pieces), show/hide their boxes,
        write their clusters from index ``base``; how many clusters."""
        if not parts:
            return 0
        inst, start, end, depth, lane, func, loc, thread = (np.concatenate(c) for c in zip(*parts))
        if self.drawn.hiding:  # hidden calls are neither boxes nor in clusters
            keep = ~self.layout.colouring.hidden[func]
            inst, start, end, depth, lane, func, loc, thread = (a[keep] for a in
                                                                (inst, start, end, depth, lane, func, loc, thread))
            if not inst.size:
                return 0
        kind = session.fkind[func]
        names = (session.fnames, session.ffiles, session.flines)
        small, (cpos, csc, ccol, cslot), about = self.layout.cluster_boxes(start, end, depth, lane, func, kind,
                                                                           *names, px)
        small &= end < now  # an open call keeps its box: it grows (it may be in a cluster too)
        # a call its cluster draws has no instance: the scene holds the boxes one can see
        # (a pixel wide or more), the clusters and the calls since the last pass, whatever
        # the number of calls
        gone = np.flatnonzero(small & (inst >= 0))
        if gone.size:
            self._give_back(inst[gone])
            self._set_inst(thread[gone], loc[gone], np.full(gone.size, -1, np.int64))
            self.n_merged += gone.size
        back = np.flatnonzero(~small & (inst < 0))  # wider than a pixel again (another scale)
        if back.size:
            got = self._alloc(back.size)
            self._set_inst(thread[back], loc[back], got)
            self.n_merged -= back.size
            pos, sc, col, slot = self.layout.boxes(start[back], end[back], depth[back], lane[back], func[back],
                                                   kind[back], *names)
            self.calls.put(got, pos, sc, col, slot)
        k = cpos.shape[0]
        if k:
            self.clusters.put(base + np.arange(k), cpos, csc, ccol, cslot)
            self._c_about = grow_rows(self._c_about, base + k)
            self._c_about[base: base + k] = np.stack([a.astype(np.int64) for a in about], axis=1)
        return k

    def _retire(self, session, cut: float) -> None:
        """The trail: following now, the boxes of the calls that ended before ``cut`` (a window
        before the view's start, and frozen) are given back, the frozen clusters wholly
        before it too (moved down when they are most of the clusters: amortised O(1)), and
        the label candidates before it forgotten.  O(calls since the last cut + the calls
        spanning it).  So the scene holds what the last two windows show, however long the
        run; the session keeps every call (`LiveSession.trace`), and when the view shows the
        time before the cut again (follow off) the next cluster pass brings it all back."""
        if cut <= self._retired_t:
            return
        for ti, T in enumerate(session.threads):
            while len(self._ret_cursor) <= ti:
                self._ret_cursor.append(0)
                self._ret_pending.append(np.zeros(0, np.int64))
            n = self.inst_n[ti] if ti < len(self.inst_n) else 0
            lo = self._ret_cursor[ti]
            hi = max(int(np.searchsorted(T.start[:n], cut)), lo)
            loc = np.concatenate([self._ret_pending[ti], np.arange(lo, hi, dtype=np.int64)])
            done = (T.endi[loc] >= 0) & (T.end[loc] < cut)
            self._ret_pending[ti] = loc[~done]  # still open or spanning the cut: at most a stack
            self._ret_cursor[ti] = hi
            gone = loc[done]
            gone = gone[self.inst[ti][gone] >= 0]
            if gone.size:
                self._give_back(self.inst[ti][gone])
                self.inst[ti][gone] = -1
                self.n_retired += gone.size
            self.labels.forget(ti, T, cut)
        self._retired_t = cut
        q = 0
        while q < len(self._frozen_passes) and self._frozen_passes[q][0] < cut:
            q += 1
        r = self._frozen_passes[q - 1][1] if q else 0
        live = self.n_clusters - r
        if r and r >= max(live, CHUNK // 4):  # move the clusters left down over those let go of
            if live:
                self.clusters.move(np.arange(r, self.n_clusters), np.arange(live))
                self._c_about[:live] = self._c_about[r: self.n_clusters]
            z = np.zeros((r, 3), np.float32)
            self.clusters.put(np.arange(live, self.n_clusters), z, z, np.ones((r, 4), np.float32),
                              np.zeros(r, np.int32))
            self.n_clusters, self._frozen_n = live, self._frozen_n - r
            self._frozen_passes = [(t, k - r) for t, k in self._frozen_passes[q:]]

    def _set_inst(self, thread: np.ndarray, loc: np.ndarray, inst: np.ndarray) -> None:
        """The instance of call ``loc`` of thread ``thread`` (element-wise)."""
        for ti in np.unique(thread).tolist():
            m = thread == ti
            self.inst[ti][loc[m]] = inst[m]

    def _restyle_frozen(self, session) -> None:
        """The frozen clusters' z (their lane may have moved) and colour (the ranking may have
        changed) from their lane, level and longest call: O(frozen clusters)."""
        L = self.layout
        k = self._frozen_n
        if not k:
            return
        lane, level, func, kind = (self._c_about[:k, j] for j in range(4))
        z, _ = L.level_z(lane, level)
        slot = L.call_slots(func, kind.astype(np.uint8), session.fnames, session.ffiles, session.flines)
        self.clusters.restyle(np.arange(k), L.cluster_rgb[slot], slot, z=z)

    def _recolour_due(self, t: float) -> bool:
        if t - self._last_rank < self.layout.p.recolour_seconds:
            return False
        self._last_rank = t
        return True

    def _boxed_calls(self, ti: int) -> np.ndarray:
        """Local indices of thread ``ti``'s calls that may have a box: those after the trail's
        cut and those spanning it (all of them when nothing was let go of)."""
        n = self.inst_n[ti] if ti < len(self.inst_n) else 0
        if ti >= len(self._ret_cursor):
            return np.arange(n)
        return np.concatenate([self._ret_pending[ti], np.arange(self._ret_cursor[ti], n)])

    def _recolour(self, session) -> bool:
        """Rank the modules by the area their calls cover so far (summed box widths; open
        calls up to now), at most every ``recolour_seconds``: the closed calls' areas are
        summed once (O(calls since the last ranking + open calls)).  True when a function's
        colour changed."""
        L = self.layout
        names = session.fnames  # their slots were given at the start of the update
        closed = self._area_closed = grow_rows(self._area_closed, len(names), fill=0.0)
        area = np.zeros(len(names), np.float64)
        for ti, T in enumerate(session.threads):
            while len(self._area_cursor) <= ti:
                self._area_cursor.append(0)
                self._area_open.append(np.zeros(0, np.int64))
            loc = np.concatenate([self._area_open[ti], np.arange(self._area_cursor[ti], T.n)])
            self._area_cursor[ti] = T.n
            is_open = T.endi[loc] < 0
            done = loc[~is_open]
            closed[: len(names)] += np.bincount(T.func[done], weights=T.end[done] - T.start[done],
                                                minlength=len(names))[: len(names)]
            op = self._area_open[ti] = loc[is_open]  # at most the thread's stack
            area += np.bincount(T.func[op], weights=session.sessions[T.session].now - T.start[op],
                                minlength=len(names))[: len(names)]
        return L.colouring.rank(area + closed[: len(names)])

    def _recolour_calls(self, session, changed: np.ndarray) -> None:
        """Colour and material of the calls of the functions ``changed`` (positions and sizes
        stay): O(calls that may have a box) numpy, two attributes written per touched chunk."""
        L = self.layout
        flag = np.zeros(len(session.fnames), np.bool_)
        flag[changed] = True
        for ti, T in enumerate(session.threads):
            loc = self._boxed_calls(ti)
            loc = loc[flag[T.func[loc]] & (self.inst[ti][loc] >= 0)]
            if not loc.size:
                continue
            func = T.func[loc]
            slot = L.call_slots(func, session.fkind[func], session.fnames, session.ffiles, session.flines)
            L.colouring.used[np.unique(slot)] = True
            self.calls.restyle(self.inst[ti][loc], L.slot_rgb[slot], slot)
        self._sync_materials()

    def _sync_materials(self) -> None:
        """Module colours are given as modules appear: copy new ones into their materials
        (Workbench shows the material colour; the other engines read the instance's)."""
        rgb = self.layout.slot_rgb
        crgb = self.layout.cluster_rgb
        for k in np.flatnonzero(np.abs(rgb - self._slot_rgb).max(axis=1) > 0).tolist():
            for name, c in ((SLOT_NAMES[k], rgb[k]), (CLUSTER_SLOT_NAMES[k], crgb[k])):
                mat = bpy.data.materials.get(name)  # the node trees read the instance colour
                if mat is not None:
                    mat.diffuse_color = tuple(float(v) for v in c) + (1.0,)
        self._slot_rgb = rgb.copy()

    def _title(self, session, now: float) -> str:
        from ..layout.annotate import fmt_time

        if self.layout.p.title:
            return str(self.layout.p.title)
        programs = sorted({os.path.basename(s.program) or s.program for s in session.sessions.values()})
        names = ", ".join(programs) if programs else "waiting for a program"
        if len(names) > 40:
            names = names[:39] + "…"
        return (f"live · {names} · {len(session.threads)} threads · {session.n_calls:,} calls · "
                f"now {fmt_time(now)}" + (f" · {session.dropped:,} dropped" if session.dropped else ""))

    def _hud(self, session, now: float) -> None:
        """The title (programs, threads, calls, now, drops) and the legend of the module
        colours in use: the shared heads-up stage (`annotate.plan_hud`/`hud_layers`) in
        camera space.  Rebuilt (a dozen objects) only when the legend's rows change; the
        title's text is edited in place."""
        L = self.layout
        rows = L.legend_rows(session.threads)
        key = tuple(rows)
        title = self._title(session, now)
        if key != self._legend_key:
            self._legend_key = key
            self._plan = L.hud_plan(title, rows)
            L.content_rect = self._plan.rect
            cam = L.camera(now, max(L.lanes.n_lanes, 1), self._plan.rect)
            labels, swatches, _ = L.hud(self._plan, cam)
            self._write_hud(labels, swatches)
            self._hud_scale0 = cam.ortho_scale
        if self.title_ob is not None:
            room = (L.p.resolution[0] - 2 * 0.03 * L.p.resolution[1]) / self._plan.title_px
            body = cut_end(title, room)
            if self.title_ob.data.body != body:
                self.title_ob.data.body = body

    def _write_hud(self, labels, swatches) -> None:
        self.title_ob = write_hud(self._hud_objects, self.coll, self.hud_root, self.legend_ob, labels, swatches)

    def _axis(self, n_lanes: int, t0: float, t1: float, size: float) -> None:
        """A time axis under the lanes: ticks at a 1-2-5 step over the window in view, times
        since the start, every tick in one unit (`layout.annotate.nice_ticks`); at most
        `MAX_TICKS` text objects, edited in place.  None while the window is narrower than a
        few labels (nothing run yet: they would be drawn on top of each other)."""
        L = self.layout
        bottom = L.bottom(n_lanes) - 1.6 * size
        shown = axis_ticks(t0, t1, L.scale_t, size, MAX_TICKS)
        for k in range(MAX_TICKS):
            if k < len(shown):
                t, text = shown[k]
                self._text(f"tick_{k}", text, size, (t * L.scale_t, -0.05, bottom), "CENTER")
            elif f"tick_{k}" in self.texts:
                self._text(f"tick_{k}", "", size, (0.0, 0.0, 0.0))

    def set_camera(self, now_us: float, n_lanes: int) -> None:
        """Frame the window in view and the lanes in the HUD plan's content rectangle; the
        HUD keeps its pixel size (its root scales with the ortho scale)."""
        from mathutils import Vector

        c = self.layout.camera(now_us, n_lanes, self._plan.rect)
        self._view_t0 = self.layout.view_window(now_us)[0]
        self.cam_ob.location = c.location
        self.cam_ob.rotation_euler = (Vector(c.target) - Vector(c.location)).to_track_quat("-Z", "Y").to_euler()
        cam = self.cam_ob.data
        cam.ortho_scale = c.ortho_scale
        cam.shift_x, cam.shift_y = c.shift_x, c.shift_y
        cam.clip_end = c.clip_end
        k = c.ortho_scale / self._hud_scale0
        self.hud_root.scale = (k, k, k)

    def remove(self) -> None:
        for ob in list(self.coll.objects):
            bpy.data.objects.remove(ob, do_unlink=True)
        self.calls.remove_template()
        self.clusters.remove_template()
