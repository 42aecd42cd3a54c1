"""Layout of the growing live icicle (bpy-free): where a call's box goes, its colour, and
the camera that follows "now".

The scale is fixed when the view starts (world units per µs from ``window_us``), so a
box, once placed, never moves: appending calls appends instances and closing a call only
changes its width.  Lanes (threads) are stacked downwards, ``levels`` call levels each
(deeper calls are drawn on the last level, thinner); a box is as deep (y) as one level
high, with the same cushion material as the static icicle.  Colours: the function's module
(`palette.categorical`, first come first served), SyncTrace's reserved red for waits.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model import KIND_WAIT
from .camera import camera_basis, view_direction
from .colour import OTHER_RGB, WAIT_RGB
from .palette import categorical
from .spec import CameraSpec, InstanceLayer, LightSpec, MaterialSpec

N_MODULE_COLOURS = 12
#: material per colour slot (Workbench shows material colours): other, wait, then modules
SLOT_NAMES = ["TV3D_live_other", "TV3D_live_wait"] + [f"TV3D_live_module_{k}" for k in range(N_MODULE_COLOURS)]
BOX_FILL = 0.85
LABEL_ROOM = 0.14  # share of the view's width left of the calls, for the lanes' names


@dataclass
class LiveParams:
    window_us: float = 1e6        # time shown across the image when following "now"
    follow: bool = True            # camera follows now; False: [0, max(now, window)] (whole run)
    levels: int = 4                # call levels per lane at the start (doubles as calls go deeper)
    max_levels: int = 24            # deeper calls share the last level (drawn thinner)
    time_length: float = 40.0      # world width of ``window_us``
    level_height: float = 0.5
    resolution: tuple = (1280, 720)
    azimuth: float = -18.0
    elevation: float = 16.0

    def validate(self) -> "LiveParams":
        if not (self.window_us > 0 and np.isfinite(self.window_us)):
            raise ValueError(f"window must be > 0 µs, got {self.window_us}")
        if not 1 <= int(self.levels) <= 1000:
            raise ValueError(f"levels must be within 1..1000, got {self.levels}")
        return self


class LiveLayout:
    """Boxes of calls in the fixed live frame (see module doc)."""

    def __init__(self, params: LiveParams | None = None):
        self.p = (params or LiveParams()).validate()
        self.scale_t = self.p.time_length / self.p.window_us
        self.h = self.p.level_height
        self.slot_rgb = np.vstack([OTHER_RGB, WAIT_RGB, categorical(N_MODULE_COLOURS)]).astype(np.float32)
        self.module_slot: dict = {}
        self.func_slot = np.zeros(0, np.int32)

    @property
    def lane_pitch(self) -> float:
        return (self.p.levels + 1.5) * self.h

    def need_levels(self, deepest: int) -> bool:
        """Grow the levels per lane (doubling, up to max_levels) for calls ``deepest`` deep;
        True when it grew (every box's z must then be written again: rare, amortised)."""
        want = self.p.levels
        while want < deepest + 1 and want < self.p.max_levels:
            want *= 2
        want = min(want, self.p.max_levels)
        if want != self.p.levels:
            self.p.levels = want
            return True
        return False

    def materials(self) -> dict:
        return {nm: MaterialSpec(nm, tuple(float(c) for c in rgb) + (1.0,), "box")
                for nm, rgb in zip(SLOT_NAMES, self.slot_rgb)}

    def lights(self) -> list:
        p = self.p
        return [LightSpec("TV3D_key", "SUN", tuple(-view_direction(p.azimuth - 35.0, 55.0)), 3.0),
                LightSpec("TV3D_fill", "SUN", tuple(-view_direction(p.azimuth + 60.0, 20.0)), 0.8)]

    def _function_slots(self, paths, files) -> np.ndarray:
        """Colour slot of every function; new functions get their module's slot (cached)."""
        nf = len(paths)
        k0 = self.func_slot.shape[0]
        if nf > k0:
            add = np.zeros(nf - k0, np.int32)
            for j, f in enumerate(range(k0, nf)):
                path = paths[f]
                module = path[0] if len(path) > 1 else (files[f] or "")
                if module and module != "builtins":
                    add[j] = 2 + self.module_slot.setdefault(module, len(self.module_slot)) % N_MODULE_COLOURS
            self.func_slot = np.concatenate([self.func_slot, add])
        return self.func_slot

    def lane_top(self, lane) -> np.ndarray:
        return -np.asarray(lane, np.float64) * self.lane_pitch

    def boxes(self, start, end, depth, lane, func, kind, paths, files) -> tuple:
        """(positions, scales, colours, material slots) of calls given by their arrays
        (``paths``/``files``: the function table, for the module colours)."""
        n = start.shape[0]
        lvl = np.minimum(depth, self.p.levels - 1)
        x0 = start * self.scale_t
        x1 = end * self.scale_t
        pos = np.empty((n, 3), np.float32)
        sc = np.empty((n, 3), np.float32)
        pos[:, 0] = (x0 + x1) / 2
        pos[:, 1] = self.h / 2
        pos[:, 2] = self.lane_top(lane) - (lvl + 0.5) * self.h
        sc[:, 0] = np.maximum(x1 - x0, 1e-5)
        sc[:, 1] = self.h
        sc[:, 2] = np.where(depth >= self.p.levels, 0.3, BOX_FILL) * self.h
        slot = np.where(kind == KIND_WAIT, 1, self._function_slots(paths, files)[func]).astype(np.int32)
        col = np.ones((n, 4), np.float32)
        col[:, :3] = self.slot_rgb[slot]
        return pos, sc, col, slot

    def trace_boxes(self, trace, idx) -> tuple:
        """`boxes` of calls ``idx`` of a Trace."""
        idx = np.asarray(idx, np.int64)
        return self.boxes(trace.start[idx], trace.end[idx], trace.depth[idx], trace.thread[idx], trace.func[idx],
                          trace.kind[idx], trace.function_paths, trace.function_files)

    def empty_layer(self, name: str, n: int) -> InstanceLayer:
        """A layer of ``n`` invisible (zero-size) boxes: room to append into."""
        return InstanceLayer(name, np.zeros((n, 3), np.float32), np.zeros((n, 3), np.float32),
                             np.ones((n, 4), np.float32), np.zeros(n, np.int32), list(SLOT_NAMES))

    def view_window(self, now_us: float) -> tuple:
        """(t0, t1) µs in view: [now - window, now] following now, else [0, now]."""
        if self.p.follow:
            t1 = max(now_us, self.p.window_us)
            return t1 - self.p.window_us, t1
        return 0.0, max(now_us, 1.0)

    def camera(self, now_us: float, n_lanes: int, deepest: int) -> CameraSpec:
        """Looks at [now - window, now] (follow) or [0, max(now, window)] and the lanes so far."""
        p = self.p
        t0, t1 = self.view_window(now_us)
        x0, x1 = t0 * self.scale_t, t1 * self.scale_t
        x0 -= LABEL_ROOM * (x1 - x0)  # the lanes' names, left of the calls
        levels = min(max(deepest, 3), p.levels)
        # room for the title above and the time axis below (text ~2 % of the view's width)
        top = 0.5 * self.h + 0.05 * (x1 - x0)
        bottom = -(max(n_lanes, 1) - 1) * self.lane_pitch - levels * self.h - 0.06 * (x1 - x0)
        aspect = p.resolution[0] / p.resolution[1]
        d = view_direction(p.azimuth, p.elevation)
        right, up, _ = camera_basis(d)
        corners = np.array([[x, y, z] for x in (x0, x1) for y in (0.0, self.h) for z in (bottom, top)])
        u, v = corners @ right, corners @ up
        wr, hu = float(np.ptp(u)), float(np.ptp(v))
        centre = corners.mean(axis=0)
        centre += right * ((u.max() + u.min()) / 2 - centre @ right) + up * ((v.max() + v.min()) / 2 - centre @ up)
        dist = 4.0 * max(wr, hu) + 10.0
        return CameraSpec(location=tuple(centre + d * dist), target=tuple(centre), orthographic=True,
                          ortho_scale=float(max(wr, hu * aspect) * 1.06), clip_start=0.1, clip_end=dist * 3)
