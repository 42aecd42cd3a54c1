"""Layout of the growing live icicle (bpy-free): where a call's box goes, its colour, the
heads-up display and the camera that follows "now".

The scale is fixed when the view starts (world units per µs from ``window_us``), so a
box, once placed, never moves: appending calls appends instances and closing a call only
changes its width.  Lanes (a thread each, or threads of one kind one after another:
`live_lanes.LiveLanes`) are stacked downwards, each as tall as its own deepest
call so far (levels doubling per lane up to ``max_levels``; deeper calls are drawn on the
last level, thinner; a lane that grows moves the lanes below it: every z is written again,
rare and amortised); a box is as deep (y) as one level high, with the same cushion
material as the static icicle.

Colours (`live_colour.LiveColouring`): the module of the function, as the static icicle's ``module``
mode (packages are hue families, a package's modules shades of its hue; `colour.family_shade`),
given to the modules covering the most area so far and re-ranked at a lower rate than the
updates (a re-ranking that changes a slot rewrites every box); runtime infrastructure
(imports, start-up, thread bootstrap: `naming.INFRA_MODULES`) sand, SyncTrace's reserved red
for waits, C built-ins and modules beyond the colour budget grey.  The heads-up display is
the shared stage (`annotate.plan_hud`, `annotate.hud_layers`: title row, legend column) and
the camera fits the lanes into the rest of the frame (`camera.fit_camera_rect`).
"""
from __future__ import annotations

import math

import numpy as np

from ..model import KIND_WAIT
from ..params.kinds import parse_fold
from .annotate import hud_layers, plan_hud
from .camera import fit_camera_rect, view_direction
from .colour import CLUSTER_LIGHTEN
from .live_colour import CLUSTER_SLOT_NAMES, INFRA, PALE, SLOT_NAMES, WAIT, LiveColouring
from .live_lanes import LiveLanes
from .palette import lighten
from .spec import CameraSpec, LightSpec, MaterialSpec

BOX_FILL = 0.85
TEXT_PX = 15.0     # HUD, lane and axis text height in pixels at 1080 lines (scaled with the image)
SQUEEZED = 0.25    # levels past the full ones are this tall (a lane's deep calls stay visible, thin)
MIN_FULL_LEVELS = 2
#: the legend's note where a lane is named by the threads that share it (`LiveLanes.lane_name`)
LISTED_NOTE = "lane \"a, b\": threads that share it, one after another"
#: many lanes (a server's threads): the squeezed levels thin down to this share of a level
#: (a 100-level lane then takes 8 levels) and the full levels down to one, so the lanes'
#: first levels stay readable however many lanes there are
SQUEEZE_FLOOR = 0.08
#: the squeezed levels thin down to this share of a level before the full levels drop
SQUEEZE_KEEP = 0.12
#: levels between two lanes: `LANE_GAP`, thinner with many lanes (the gaps take at most
#: `LANE_GAPS_TOTAL` levels, as the static frame's), in steps of `LANE_GAP_STEP` down to
#: `MIN_LANE_GAP` (each step moves every box: at most two such relayouts)
LANE_GAP, LANE_GAPS_TOTAL, LANE_GAP_STEP, MIN_LANE_GAP = 0.6, 5.4, 0.15, 0.3


def lane_gap(n_lanes: int) -> float:
    """Levels between two of ``n_lanes`` lanes (see `LANE_GAP`)."""
    want = LANE_GAPS_TOTAL / max(n_lanes - 1, 1)
    return max(MIN_LANE_GAP, min(LANE_GAP, math.floor(want / LANE_GAP_STEP + 1e-9) * LANE_GAP_STEP))


#: the levels grow to fill the frame's height (a level at most `frame.MAX_LEVEL_FRAC` of the
#: image, as in the static icicle), and follow the room the lanes leave when it changes by
#: more than this factor
FILL_SLACK = 1.15
#: levels are this much taller than `LiveLayout.readable_level_height` asks (twice: its own
#: margin and the level height's), so a name always fits
LEVEL_SLACK = 1.05
MIN_TEXT_PX = 11.0
NAME_EM = 9.0      # room for the lanes' names beside the calls, in text heights (at least)
MAX_NAME_EM = 16.0  # ... and at most ("ForkProcess-2: MainThread" takes 12.5)


from ..params.live import LiveParams  # noqa: E402,F401  (declared once in params.live)


class LiveLayout:
    """Boxes of calls in the fixed live frame, the heads-up display and the camera (see the
    module doc)."""

    def __init__(self, params: LiveParams | None = None):
        self.p = (params or LiveParams()).validate()
        self.scale_t = self.p.time_length / self.p.window_us
        self.h = self.p.level_height
        self.colouring = LiveColouring(self.p.highlight, self.p.hide, self.p.hide_modules)
        #: which lane each thread's calls go in (threads of one kind packed online)
        self.lanes = LiveLanes(self.p.pack_threads)
        self.lane_levels = np.zeros(0, np.int64)   # levels of each lane (0: not seen yet)
        self.lane_lead = np.zeros(0, np.int64)     # infrastructure levels at the top of each lane (`lead_of`)
        self.fold_mode, self.fold_ranges = parse_fold(self.p.fold)
        self._tops = np.zeros(1, np.float64)
        self.full_levels = int(self.p.max_levels)  # levels drawn a full level tall (`fit_full_levels`)
        self.squeeze = SQUEEZED  # the deeper levels' share of a level (`fit_full_levels`)
        self.gap = LANE_GAP  # levels between two lanes (`lane_gap`)
        #: the pixel rectangle the camera fits the lanes into (the view sets it from its HUD plan)
        self.content_rect = None
        self.name_em = NAME_EM  # room for the lanes' names (`fit_name_room`)

    @property
    def slot_rgb(self) -> np.ndarray:
        return self.colouring.rgb

    # ---------------------------------------------------------------- lanes
    def lead_of(self, lane) -> np.ndarray:
        """Levels at the top of ``lane`` that hold runtime infrastructure alone (thread
        start-up, ``exec``: `LiveColouring`'s sand), drawn `squeeze` of a level tall: the
        static icicle's fold of infrastructure (`layout.fold`, rule 1), known as calls
        arrive (``fold="auto"``; 0 with ``none`` or level ranges); the program's first
        levels get the full height and the names."""
        lane = np.asarray(lane, np.int64)
        if not self.lane_lead.shape[0] or self.fold_mode != "auto":
            return np.zeros(lane.shape, np.int64)
        return self.lane_lead[np.minimum(lane, self.lane_lead.shape[0] - 1)]

    def folded_before(self, lead, level) -> np.ndarray:
        """How many of the levels above stack level ``level`` are folded (drawn thin): the
        lane's infrastructure levels (``lead``, `lead_of`) and the levels of the ``fold``
        ranges ``A:B`` (inclusive)."""
        lvl = np.asarray(level, np.float64)
        out = np.minimum(lvl, np.asarray(lead, np.float64))
        for a, b in self.fold_ranges:
            out = out + np.clip(lvl - a, 0.0, b - a + 1.0)
        return out

    def is_folded(self, lead, level) -> np.ndarray:
        lvl = np.asarray(level)
        out = lvl < np.asarray(lead)
        for a, b in self.fold_ranges:
            out = out | ((lvl >= a) & (lvl <= b))
        return out

    def level_offset(self, lane, level) -> np.ndarray:
        """Levels from the top of ``lane`` to the top of stack level ``level``: folded
        levels (the lane's infrastructure, `lead_of`, or the ``fold`` ranges:
        `folded_before`) `squeeze` of a level tall, the next `full_levels` a full level,
        deeper ones `squeeze` of a level (the height budget of the static icicle,
        `layout.budget`: names stay readable on the program's first levels however many
        lanes there are)."""
        return self._level_offset(self.lead_of(lane), level, self.full_levels, self.squeeze)

    def _level_offset(self, lead, level, full: int, squeeze: float) -> np.ndarray:
        """`level_offset` with a lane's ``lead`` and the levels drawn with ``full`` full
        levels and ``squeeze`` (a layout being tried, `_fill_height`)."""
        lvl = np.asarray(level, np.float64)
        thin = self.folded_before(lead, lvl)
        own = lvl - thin
        return squeeze * (thin + np.maximum(own - full, 0.0)) + np.minimum(own, float(full))

    def level_thickness(self, lane, level) -> np.ndarray:
        """A level's height in levels: 1 for the first `full_levels` levels that are not
        folded, else `squeeze` (only full levels hold names)."""
        lead = self.lead_of(lane)
        own = np.asarray(level) - self.folded_before(lead, level)
        return np.where(~self.is_folded(lead, level) & (own < self.full_levels), 1.0, self.squeeze)

    def level_z(self, lane, level) -> tuple:
        """(z of the middle, height) of stack level ``level`` in ``lane``, world units."""
        t = self.level_thickness(lane, level)
        return self.lane_top(lane) - (self.level_offset(lane, level) + 0.5 * t) * self.h, t * self.h

    def lane_height(self, lane, levels) -> np.ndarray:
        return (self.level_offset(lane, levels) + self.gap) * self.h

    def fit_full_levels(self, lane_levels, lane_lead=None) -> tuple:
        """(full levels per lane, the same in every lane; the squeezed levels' share of a
        level): the most full levels at which all lanes fit the frame's content height at
        a readable level height (`budget.level_px`), the squeezed levels `SQUEEZED` tall or
        thinner down to `SQUEEZE_KEEP` (a full level holds a name, a squeezed one never),
        at least `MIN_FULL_LEVELS`.  When even that does not fit (many lanes), the squeezed
        levels thin down to `SQUEEZE_FLOOR` and then the full levels down to one: the
        first levels of every lane keep a readable height (else the camera zooms out
        until no level holds a name)."""
        from .annotate import content_height
        from .budget import level_px

        tpx = self.label_px()
        avail = content_height(tuple(self.p.resolution), tpx, self.p.show_title) - 2.6 * tpx
        # a level is drawn `LEVEL_SLACK`² taller than readable (`need_levels`), and the first
        # level's top faces take tan(elevation) levels: room as the camera will fit it
        room = avail / (level_px(tpx) * LEVEL_SLACK ** 2) - math.tan(math.radians(self.p.elevation))
        levels = np.asarray(lane_levels, np.float64)
        lead = np.zeros_like(levels) if lane_lead is None else np.asarray(lane_lead, np.float64)
        lead = self.folded_before(lead, levels)  # every folded level: infrastructure, ranges
        own = levels - lead
        def squeeze_for(k: int) -> float:
            """The squeezed levels' share at which the lanes fit with ``k`` full levels
            (-1: they do not fit whatever it is)."""
            deep = (lead + np.maximum(own - k, 0.0)).sum()
            left = room - (np.minimum(own, k) + lane_gap(len(levels))).sum()
            if deep <= 0:
                return SQUEEZED if left >= 0 else -1.0
            return min(left / deep, SQUEEZED)

        for k in range(int(self.p.max_levels), MIN_FULL_LEVELS - 1, -1):
            s = squeeze_for(k)
            if s >= SQUEEZE_KEEP:  # a full level more is worth thinner squeezed ones
                return k, float(s)
        for k in range(MIN_FULL_LEVELS, 0, -1):
            s = squeeze_for(k)
            if s >= SQUEEZE_FLOOR:
                return k, float(s)
        return 1, SQUEEZE_FLOOR

    def label_px(self) -> float:
        """Call labels' text size in pixels: the static icicle's (`labels.text_px`, never
        under 14 px at 1080 lines)."""
        from .labels import MIN_TEXT_PX

        return max(float(self.p.label_px), MIN_TEXT_PX) * self.p.resolution[1] / 1080.0

    def readable_level_height(self) -> float:
        """World height of a level whose face holds a name (`budget.level_px`) when the time
        window fills the width of `content_rect` (less the lanes' names): the frame is wider
        than the lanes are tall on a wide legend or few lanes, and then the width sets the
        scale; never under ``level_height``."""
        from .budget import level_px

        if self.content_rect is None:
            return float(self.p.level_height)
        x0, _, x1, _ = self.content_rect
        tpx = self.label_px()
        w_px = max(float(x1 - x0) - NAME_EM * tpx, 1.0)
        world_per_px = self.p.time_length / w_px
        foreshorten = max(math.cos(math.radians(self.p.elevation)), 0.2)
        return max(float(self.p.level_height), LEVEL_SLACK * level_px(tpx) * world_per_px / foreshorten)

    def _fill_height(self, levels, lead, full: int, squeeze: float, need_h: float) -> float:
        """The level height at which the lanes (``levels``, ``lead``, drawn with ``full``
        and ``squeeze``) fill the content rectangle's height when the time window fills its
        width: a run of one or two lanes is not a strip over an empty frame.  At least
        ``need_h`` (`readable_level_height`) with 5 % slack; a level at most
        `frame.MAX_LEVEL_FRAC` of the image's height, as the static icicle's."""
        if self.content_rect is None or not len(levels):
            return need_h * LEVEL_SLACK
        from .frame import MAX_LEVEL_FRAC

        x0, y0, x1, y1 = self.content_rect
        tpx = self.label_px()
        world_per_px = self.p.time_length / max(float(x1 - x0) - NAME_EM * tpx, 1.0)
        foreshorten = max(math.cos(math.radians(self.p.elevation)), 0.2)
        units = float((self._level_offset(lead, levels, full, squeeze) + lane_gap(len(levels))).sum())
        avail = (float(y1 - y0) - 2.6 * self.text_px()) * world_per_px / foreshorten
        tops = math.tan(math.radians(self.p.elevation))  # the top faces of the first level's boxes
        fill = 0.99 * avail / max(units + tops, 1.0)
        most = MAX_LEVEL_FRAC * self.p.resolution[1] * world_per_px / foreshorten
        return max(need_h * LEVEL_SLACK, min(fill, most))

    def need_levels(self, deepest, lead=None) -> bool:
        """Grow each lane's levels (doubling from ``levels`` up to ``max_levels``) for its
        deepest call (``deepest[lane]``, a depth); ``lead[lane]``: the depth of its first
        call that is not runtime infrastructure (`lead_of`; default 0).  True when a lane
        grew, appeared or its lead changed (the lanes below it move: every box's z must
        then be written again)."""
        deepest = np.asarray(deepest, np.int64)
        p = self.p
        cur = np.zeros(deepest.shape[0], np.int64)
        cur[: self.lane_levels.shape[0]] = self.lane_levels[: deepest.shape[0]]
        if lead is None or self.fold_mode != "auto":
            lead = np.zeros_like(deepest)
        lead = np.asarray(lead, np.int64)[: deepest.shape[0]]
        # max_levels below the folded ones (the infrastructure, or the fold ranges)
        cap = p.max_levels + np.minimum(self.folded_before(lead, 2 * p.max_levels), p.max_levels).astype(np.int64)
        want = np.where(cur > 0, cur, min(p.levels, p.max_levels))
        while True:
            grow = (want < deepest + 1) & (want < cap)
            if not grow.any():
                break
            want = np.where(grow, np.minimum(want * 2, cap), want)
        lead = np.minimum(lead, want)
        old, old_lead = self.lane_levels, self.lane_lead
        same = want.shape == old.shape and (want == old).all() and (lead == old_lead).all()
        full, squeeze = (self.full_levels, self.squeeze) if same else self.fit_full_levels(want, lead)
        need_h = self.readable_level_height()
        target = self._fill_height(want, lead, full, squeeze, need_h)
        # levels grow when they must (a name must fit), and follow the room the lanes leave
        # with slack (a legend growing row by row, a lane appearing, moves nothing often)
        taller = need_h > self.h * (1 + 1e-6) or not (1 / FILL_SLACK < target / self.h < FILL_SLACK)
        if same and not taller:
            return False
        if taller:
            self.h = target
        self.lane_levels, self.lane_lead = want, lead
        gap = lane_gap(want.shape[0])
        squeezed = full != self.full_levels or squeeze != self.squeeze or gap != self.gap
        self.full_levels, self.squeeze, self.gap = full, squeeze, gap
        old_tops = self._tops
        self._tops = self._stacked_tops(want)
        # a new lane goes under its process's lanes: the lanes below it move, as they do
        # when a lane grows or the full levels change
        k = old.shape[0]
        moved = old_tops.shape[0] > k and bool((self._tops[:k] != old_tops[:k]).any())
        return bool((want[:k] != old).any() or (lead[:k] != old_lead[:k]).any()) or squeezed or taller or moved

    def _stacked_tops(self, want) -> np.ndarray:
        """z of each lane's top (lane ids), the lanes stacked in `LiveLanes.display_order`,
        and after them the bottom of the lowest."""
        n = want.shape[0]
        order = self.lanes.display_order()
        if order.shape[0] != n:  # lanes set without `LiveLanes` (tests of the layout alone): by id
            order = np.arange(n)
        edges = -np.concatenate([[0.0], np.cumsum(self.lane_height(order, want[order]))])
        tops = np.empty(n + 1, np.float64)
        tops[order] = edges[:-1]
        tops[n] = edges[-1]
        return tops

    def lane_top(self, lane) -> np.ndarray:
        lane = np.asarray(lane, np.int64)
        return self._tops[np.minimum(lane, self._tops.shape[0] - 1)]

    def levels_of(self, lane) -> np.ndarray:
        lane = np.asarray(lane, np.int64)
        if not self.lane_levels.shape[0]:
            return np.full(lane.shape, self.p.levels)
        return self.lane_levels[np.minimum(lane, self.lane_levels.shape[0] - 1)]

    def bottom(self, n_lanes: int) -> float:
        """z of the bottom of the lowest of lanes 0 .. ``n_lanes`` − 1 (all of them: the
        bottom `_stacked_tops` keeps after the tops)."""
        n = self._tops.shape[0] - 1
        if n < 1:
            return float(-self.lane_height(0, self.p.levels))
        if n_lanes >= n:
            return float(self._tops[n])
        k = np.arange(max(n_lanes, 1))
        return float(np.min(self._tops[k] - self.lane_height(k, self.lane_levels[k])))

    # ---------------------------------------------------------------- boxes
    @property
    def cluster_rgb(self) -> np.ndarray:
        return lighten(self.slot_rgb, CLUSTER_LIGHTEN).astype(np.float32)

    def materials(self) -> dict:
        out = {nm: MaterialSpec(nm, tuple(float(c) for c in rgb) + (1.0,), "box")
               for nm, rgb in zip(SLOT_NAMES, self.slot_rgb)}
        out.update({nm: MaterialSpec(nm, tuple(float(c) for c in rgb) + (1.0,), "cluster")
                    for nm, rgb in zip(CLUSTER_SLOT_NAMES, self.cluster_rgb)})
        return out

    def lights(self) -> list:
        p = self.p
        return [LightSpec("TV3D_key", "SUN", tuple(-view_direction(p.azimuth - 35.0, 55.0)), 3.0),
                LightSpec("TV3D_fill", "SUN", tuple(-view_direction(p.azimuth + 60.0, 20.0)), 0.8)]

    def is_infrastructure(self, func) -> np.ndarray:
        """Whether functions ``func`` are runtime infrastructure (`LiveColouring`'s sand;
        their slots given by `LiveColouring.slots`)."""
        return self.colouring.reserved[np.asarray(func, np.int64)] == INFRA

    def call_slots(self, func, kind, names, files, lines) -> np.ndarray:
        """The colour slot of calls (waits in the reserved red, else their function's;
        outside a highlight: pale)."""
        slots = self.colouring.slots(names, files, lines)
        return np.where(kind == KIND_WAIT, np.where(self.colouring.pale[func], PALE, WAIT), slots[func]).astype(np.int32)

    def boxes(self, start, end, depth, lane, func, kind, names, files, lines) -> tuple:
        """(positions, scales, colours, material slots) of calls given by their arrays
        (``names``, ``files``, ``lines``: the function table, for the module colours)."""
        n = start.shape[0]
        levels = self.levels_of(lane)
        lvl = np.minimum(depth, levels - 1)
        x0 = start * self.scale_t
        x1 = end * self.scale_t
        pos = np.empty((n, 3), np.float32)
        sc = np.empty((n, 3), np.float32)
        pos[:, 0] = (x0 + x1) / 2
        pos[:, 1] = self.h / 2
        z, hz = self.level_z(lane, lvl)
        pos[:, 2] = z
        sc[:, 0] = np.maximum(x1 - x0, 1e-5)
        sc[:, 1] = self.h
        sc[:, 2] = np.where(depth >= levels, 0.3, BOX_FILL) * hz
        slot = self.call_slots(func, kind, names, files, lines)
        self.colouring.used[np.unique(slot)] = True
        col = np.ones((n, 4), np.float32)
        col[:, :3] = self.slot_rgb[slot]
        return pos, sc, col, slot

    def cluster_boxes(self, start, end, depth, lane, func, kind, names, files, lines, px: float) -> tuple:
        """Calls narrower than a pixel (``px`` world units) merged per (lane, drawn level) with
        the shared kernel (`layout.cluster.cluster_subpixel_calls`, SyncTrace IV-B2; the
        arrays in per-lane pre-order).  Returns (small: bool per call, cluster boxes:
        positions, scales, colours, slots, and per cluster its lane, level, and its longest
        call's function and kind), a cluster at least a pixel wide, in its longest call's
        colour lightened."""
        from .cluster import cluster_subpixel_calls

        n_lanes = int(lane.max()) + 1 if lane.size else 1
        level = np.minimum(depth, self.levels_of(lane) - 1).astype(np.int32)
        w = np.full(n_lanes, px / self.scale_t)
        cluster_of, c_lane, c_depth, c_start, c_end, _, c_rep, _ = cluster_subpixel_calls(
            start.astype(np.float64), end.astype(np.float64), level, lane.astype(np.int32), w, w, func.astype(np.int64))
        k = c_lane.shape[0]
        pos = np.empty((k, 3), np.float32)
        sc = np.empty((k, 3), np.float32)
        x0, x1 = c_start * self.scale_t, np.maximum(c_end * self.scale_t, c_start * self.scale_t + px)
        pos[:, 0] = (x0 + x1) / 2
        pos[:, 1] = self.h / 2
        z, hz = self.level_z(c_lane, c_depth)
        pos[:, 2] = z
        sc[:, 0] = x1 - x0
        sc[:, 1] = self.h
        sc[:, 2] = BOX_FILL * hz
        rep = c_rep.astype(np.int64)
        slot = self.call_slots(func[rep], kind[rep], names, files, lines)
        col = np.ones((k, 4), np.float32)
        col[:, :3] = self.cluster_rgb[slot]
        return cluster_of >= 0, (pos, sc, col, slot), (c_lane, c_depth, func[rep], kind[rep])

    def empty_layer(self, name: str, n: int):
        """A layer of ``n`` invisible (zero-size) boxes: room to append into."""
        from .spec import InstanceLayer

        return InstanceLayer(name, np.zeros((n, 3), np.float32), np.zeros((n, 3), np.float32),
                             np.ones((n, 4), np.float32), np.zeros(n, np.int32), list(SLOT_NAMES))

    # ---------------------------------------------------------------- view
    def view_window(self, now_us: float) -> tuple:
        """(t0, t1) µs in view: the last ``window`` up to now (all of it while shorter)
        following now, else [0, now]."""
        t1 = max(now_us, 1.0)
        if self.p.follow:
            return max(t1 - self.p.window_us, 0.0), t1
        return 0.0, t1

    @property
    def names_right(self) -> bool:
        """The lanes' names go right of "now" when following it (nothing is drawn there; on
        the left the older calls run on out of the window), else left of the run's start."""
        return bool(self.p.follow)

    def fit_name_room(self, names) -> None:
        """The room the camera leaves for the lanes' names: the widest of ``names`` (with
        several processes a name carries its process), `NAME_EM` to `MAX_NAME_EM` text heights."""
        from .text import text_width

        widest = max((text_width(str(n)) for n in names), default=0.0)
        self.name_em = float(min(max(NAME_EM, widest + 0.6), MAX_NAME_EM))

    def text_px(self) -> float:
        """Text height in pixels: `TEXT_PX` at 1080 lines, never under `MIN_TEXT_PX`."""
        return max(TEXT_PX * self.p.resolution[1] / 1080.0, MIN_TEXT_PX)

    def legend_rows(self, threads: list | None = None) -> list:
        """The colours' rows (`LiveColouring.legend_rows`), and the notes on lanes that
        several threads share when some do (`select.PACKED_NOTE`; `LISTED_NOTE` where a
        lane is named by its threads' names: ``threads``, the store's, tell which)."""
        rows = self.colouring.legend_rows()
        if self.lanes.packed:
            from .select import PACKED_NOTE

            listed, counted = self.lanes.shared_naming(threads) if threads is not None else (False, True)
            if counted:
                rows = rows + [(PACKED_NOTE, -1, "note")]
            if listed:
                rows = rows + [(LISTED_NOTE, -1, "note")]
        return rows

    def hud_plan(self, title: str, rows=None):
        """The shared heads-up display plan (title row, legend column, content rectangle);
        ``rows``: the legend's (default `legend_rows`)."""
        return plan_hud(tuple(self.p.resolution), self.text_px(), title,
                        self.legend_rows() if rows is None else rows, self.p.show_title, self.p.show_legend)

    def camera(self, now_us: float, n_lanes: int, rect=None) -> CameraSpec:
        """Looks at the window in view (`view_window`) and the lanes so far, fitted into the
        pixel rectangle ``rect`` (default: the whole frame less a margin): the lanes' names
        (`names_right`) and the time axis below are inside it."""
        p = self.p
        w, hgt = p.resolution
        if rect is None:
            m = 0.03 * hgt
            rect = (m, m, w - m, hgt - m)
        t0, t1 = self.view_window(now_us)
        x0, x1 = t0 * self.scale_t, t1 * self.scale_t
        d = view_direction(p.azimuth, p.elevation)
        top, bottom = 0.5 * self.h, self.bottom(n_lanes)
        corners = np.array([[x, y, z] for x in (x0, x1) for y in (0.0, self.h) for z in (bottom, top)])
        cam = fit_camera_rect(corners, d, (w, hgt), rect, orthographic=True)
        tpx = self.text_px()
        for _ in range(2):  # the text's room in world units depends on the scale it gives
            px = cam.ortho_scale / max(w, hgt)   # world per pixel
            room, below = self.name_em * tpx * px, bottom - 1.9 * tpx * px
            left, right = (x0, x1 + room) if self.names_right else (x0 - room, x1)
            corners = np.array([[x, y, z] for x in (left, right) for y in (0.0, self.h) for z in (below, top)])
            cam = fit_camera_rect(corners, d, (w, hgt), rect, orthographic=True)
        dist = float(np.linalg.norm(np.asarray(cam.location) - np.asarray(cam.target)))
        cam.clip_start, cam.clip_end = 0.1, dist * 3
        return cam

    def hud(self, plan, cam: CameraSpec):
        """(camera-space labels, legend swatch layer or None, distance) of the plan."""
        return hud_layers(plan, cam, tuple(self.p.resolution), self.slot_rgb, list(SLOT_NAMES))
