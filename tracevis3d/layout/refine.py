"""Refinement by view (issue 70): which stretch of a figure a view sees, and how a stretch laid
out again at full detail takes the place of the overview's merged geometry there (bpy-free).

An overview icicle maps its time span ``[T0, T1]`` to ``x ∈ [0, time_length]`` at
``world_per_us``; calls under a pixel at its camera are merged.  Zooming a uniform 3D scene
into 1 ms of a 10 s trace cannot show that millisecond's stack (a 10^4× zoom shows a sliver of
one level, and float32 world coordinates run out of precision), so a refinement is a
*focus + context* split of the time axis, like Perfetto's and speedscope's x-only zoom:

- the stretch ``[t0, t1]`` is laid out again by the same code as ``render-icicle --window``
  (`icicle.icicle_layout` with ``time_window``: selection, folding, labels, callouts, detail
  inset), keeping the overview's colours (`overview_colouring_of`), so every call at least a
  pixel wide in that view is drawn and named as a dedicated figure of the window would name it;
- the overview is cut at the stretch's ends ``xa``, ``xb``: what lies left of ``xa`` stays,
  what lies right of ``xb`` moves right by ``shift`` to make room, the boxes crossing a cut are
  clipped to their parts outside the stretch (`Placement`); the refined figure (its lanes, lane
  names, axis, camera and heads-up title and legend) sits between, translated, not scaled;
- its camera (the dedicated figure's, translated) frames it; the context starts at the frame's
  edges, and a view pulled back sees the overview on both sides.

`view_window` works out the stretch a view sees (the scene camera, or the 3D viewport's
``perspective_matrix`` and region size) through the current split (`Placement.time_at`), and
`refine_decision` says whether that view needs a refinement, another one, or the overview.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..params.icicle import IcicleParams

__all__ = ["Overview", "Placement", "window_params", "refined_layout", "place_refinement", "view_window",
           "refine_decision", "overview_colouring_of", "overview_colours", "OverviewColours", "content_fingerprint",
           "file_identity",
           "colours_file_name", "aligned_window",
           "prune_colours", "trace_copy_name", "KEPT_PREFIXES", "camera_matrix", "projection_matrix", "frame_x_range", "MIN_ZOOM"]

#: a view refines when it shows the figure's time at least this many times finer than the overview
MIN_ZOOM = 2.0
#: a refinement is kept while the view's window stays within this share of it (no re-layout for a nudge)
KEEP_OVERLAP = 0.8
#: room between the refined figure's frame and the overview on each side (share of its time axis)
CONTEXT_GAP = 0.03


@dataclass
class Overview:
    """The overview figure's time axis and where its lanes are (world units)."""

    t0: float
    t1: float
    world_per_us: float
    time_length: float
    z_lo: float  # the lanes' lowest and highest world z (the overview's boxes)
    z_hi: float
    us_per_px: float  # the overview's time per pixel at its camera

    @classmethod
    def from_meta(cls, meta: dict, z_lo: float, z_hi: float, width_px: float) -> "Overview":
        t0, t1 = float(meta["t0"]), float(meta["t1"])
        wpu = float(meta["world_per_us"])
        return cls(t0, t1, wpu, (t1 - t0) * wpu, float(z_lo), float(z_hi), (t1 - t0) / max(0.8 * width_px, 1.0))

    def x_of(self, t) -> np.ndarray:
        return (np.asarray(t, np.float64) - self.t0) * self.world_per_us


@dataclass
class Placement:
    """Where a refined stretch sits in the scene and how the overview makes room for it.

    The refined figure's world point p goes to p + ``offset``; the overview keeps x ≤ ``xa``,
    drops ``(xa, xb)`` and moves x ≥ ``xb`` by ``shift``.  The refined figure takes
    ``[xa, xa + width]`` (its frame at the lanes' middle); ``origin`` = xa + its left margin is
    where its t0 lands, at ``world_per_us`` of its own figure."""

    window: tuple
    xa: float
    xb: float
    width: float
    shift: float
    offset: tuple
    origin: float
    world_per_us: float  # the refined figure's
    overview: Overview

    def time_at(self, x) -> np.ndarray:
        """The time shown at scene x (the inverse of the split; inside the refined figure's
        margins the nearest end of its window)."""
        o = self.overview
        x = np.asarray(x, np.float64)
        left = o.t0 + x / o.world_per_us
        mid = np.clip(self.window[0] + (x - self.origin) / self.world_per_us, self.window[0], self.window[1])
        right = o.t0 + (x - self.shift) / o.world_per_us
        return np.where(x <= self.xa, left, np.where(x < self.xa + self.width, mid, right))

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["overview"] = dataclasses.asdict(self.overview)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Placement":
        d = dict(d)
        d["overview"] = Overview(**d["overview"])
        d["window"] = tuple(d["window"])
        d["offset"] = tuple(d["offset"])
        return cls(**d)


def window_params(params: IcicleParams, window, thread=None) -> IcicleParams:
    """The overview's parameters for a dedicated figure of ``window`` (µs, the trace's clock)
    of ``thread`` (an index or a name; None: the overview's threads): ``--window`` [``--threads``]."""
    t0, t1 = (float(v) for v in window)
    if not t1 > t0:
        raise ValueError(f"an empty window: {t0:g}..{t1:g} µs")
    changes = {"time_window": (t0, t1)}
    if thread is not None:
        changes["threads"] = [thread]
    return dataclasses.replace(params, **changes).validate()


def overview_colours(trace, params: IcicleParams) -> "OverviewColours":
    """The `OverviewColours` of the overview figure of ``trace`` drawn with ``params``: its
    select, fold and colour stages run once over the whole trace (`icicle.icicle_stages`, as
    `icicle.icicle_layout` runs them)."""
    from .icicle import icicle_stages
    from .labels import text_px

    st = icicle_stages(trace, params, text_px(params), window_first=True, name_members=True)
    return OverviewColours.from_stages(st, len(trace))


def overview_colouring_of(trace, params: IcicleParams):
    """A ``colouring_of`` (`icicle.icicle_stages`) that gives a window's calls the slots the
    overview figure of ``trace`` gave them (`OverviewColours.colouring_of`); calls the overview
    does not show get its last slot ("other").  Costs the overview's stages once
    (`overview_colours`: keep the result per trace)."""
    return overview_colours(trace, params).colouring_of


def refined_layout(trace, params: IcicleParams, window, thread=None, colouring_of=None):
    """The dedicated ``--window`` figure of the stretch (`icicle.icicle_layout`), with the
    overview's colours when ``colouring_of`` is given; its lights left out (the overview's light
    the scene).  (window params, SceneSpec)."""
    from .icicle import icicle_layout

    wp = window_params(params, window, thread)
    spec = icicle_layout(trace, wp, colouring_of=colouring_of)
    return wp, dataclasses.replace(spec, lights=[])


def _ray_plane_x(origin, direction, z_mid: float) -> float:
    """x where the ray meets the front plane y = 0 (the ray's x at the lanes' middle height when
    it runs along the plane)."""
    o, d = np.asarray(origin, np.float64), np.asarray(direction, np.float64)
    if abs(d[1]) > 1e-12:
        s = -o[1] / d[1]
        return float(o[0] + s * d[0])
    s = (z_mid - o[2]) / d[2] if abs(d[2]) > 1e-12 else 0.0
    return float(o[0] + s * d[0])


def camera_matrix(cam, resolution) -> np.ndarray:
    """The 4×4 world → clip matrix of a `CameraSpec` at ``resolution`` (Blender's conventions:
    sensor fit AUTO on the larger side, lens shift in units of it), for `view_window`."""
    from .camera import camera_basis

    loc = np.asarray(cam.location, np.float64)
    r, u, f = camera_basis(loc - np.asarray(cam.target, np.float64), cam.up)
    view = np.eye(4)
    view[0, :3], view[1, :3], view[2, :3] = r, u, -f  # camera local: x right, y up, z back (-z forward)
    view[:3, 3] = -view[:3, :3] @ loc
    return projection_matrix(cam.orthographic, cam.lens_mm, cam.sensor_width_mm, cam.ortho_scale, cam.shift_x,
                             cam.shift_y, cam.clip_start, cam.clip_end, resolution) @ view


def projection_matrix(orthographic: bool, lens_mm: float, sensor_mm: float, ortho_scale: float, shift_x: float,
                      shift_y: float, clip_start: float, clip_end: float, resolution) -> np.ndarray:
    """Blender's camera projection (sensor fit AUTO: the sensor spans the larger side; lens shift
    in units of it) at ``resolution``: camera local → clip."""
    w, h = (float(v) for v in resolution)
    m = max(w, h)
    n, fa = float(clip_start), float(clip_end)
    sx, sy = 2.0 * shift_x * m / w, 2.0 * shift_y * m / h
    proj = np.zeros((4, 4))
    if orthographic:
        half = ortho_scale / 2.0
        proj[0, 0], proj[1, 1] = m / (w * half), m / (h * half)
        proj[0, 3], proj[1, 3] = -sx, -sy
        proj[2, 2], proj[2, 3], proj[3, 3] = -2.0 / (fa - n), -(fa + n) / (fa - n), 1.0
    else:
        t = (sensor_mm / 2.0) / lens_mm  # half-tangent of the larger side
        proj[0, 0], proj[1, 1] = m / (w * t), m / (h * t)
        proj[0, 2], proj[1, 2] = sx, sy
        proj[2, 2], proj[2, 3], proj[3, 2] = -(fa + n) / (fa - n), -2.0 * fa * n / (fa - n), -1.0
    return proj


def unproject(persp: np.ndarray, ndc_x: float, ndc_y: float) -> tuple:
    """(origin, direction) of the ray through a point in normalised device coordinates."""
    inv = np.linalg.inv(np.asarray(persp, np.float64))
    a = inv @ np.array([ndc_x, ndc_y, -1.0, 1.0])
    b = inv @ np.array([ndc_x, ndc_y, 1.0, 1.0])
    a, b = a[:3] / a[3], b[:3] / b[3]
    return a, b - a


def frame_x_range(persp: np.ndarray, z_mid: float) -> tuple:
    """(left, right) x where a view's left and right edges, at half height, meet the figure's
    front plane (y = 0)."""
    return tuple(_ray_plane_x(*unproject(persp, nx, 0.0), z_mid) for nx in (-1.0, 1.0))


def place_refinement(overview: Overview, spec_meta: dict, camera, resolution, window) -> Placement:
    """Where the refined figure (``spec_meta``, ``camera``: its layout's) goes: its frame's
    left edge at the window's start in the overview, its lanes' top on the overview's lanes'
    top; the overview beyond the window's end moved right by what the figure is wider."""
    lane_z = np.asarray(spec_meta["lane_z"], np.float64)
    lane_levels = np.asarray(spec_meta["lane_levels"], np.float64)
    z_top_w = float((lane_z + lane_levels * float(spec_meta["level_height"])).max()) if lane_z.size else 0.0
    z_mid_w = 0.5 * (float(lane_z.min()) + z_top_w) if lane_z.size else 0.0
    left, right = frame_x_range(camera_matrix(camera, resolution), z_mid_w)
    tl = float(spec_meta["world_per_us"]) * (float(spec_meta["t1"]) - float(spec_meta["t0"]))
    gap = CONTEXT_GAP * tl  # the context starts just outside the frame
    left, right = min(left, 0.0) - gap, max(right, tl) + gap
    xa, xb = (float(v) for v in overview.x_of(window))
    width = right - left
    dz = overview.z_hi - z_top_w
    return Placement(window=(float(window[0]), float(window[1])), xa=xa, xb=xb, width=width,
                     shift=width - (xb - xa), offset=(xa - left, 0.0, dz), origin=xa - left,
                     world_per_us=float(spec_meta["world_per_us"]), overview=overview)


def view_window(persp: np.ndarray, region, overview: Overview, placement: Placement | None = None) -> tuple:
    """The stretch of time a view sees and its time per pixel: ((t0, t1), µs per pixel).

    ``persp``: the view's world → clip matrix (Blender's ``RegionView3D.perspective_matrix``,
    or `camera_matrix`); ``region``: its (width, height) in pixels; ``placement``: the
    refinement in the scene now (None: the plain overview).  The view's left and right edges
    are followed to the figure's front plane at the lanes' middle height and mapped back to
    time through the split; the stretch is clipped to the trace."""
    z_mid = 0.5 * (overview.z_lo + overview.z_hi)
    xl, xr = frame_x_range(persp, z_mid)
    if placement is not None:
        tl, tr = (float(v) for v in placement.time_at([xl, xr]))
    else:
        tl, tr = overview.t0 + xl / overview.world_per_us, overview.t0 + xr / overview.world_per_us
    tl, tr = max(min(tl, tr), overview.t0), min(max(tl, tr), overview.t1)
    if not tr > tl:
        return (overview.t0, overview.t1), overview.us_per_px
    return (tl, tr), (tr - tl) / max(float(region[0]), 1.0)


def refine_decision(window, us_per_px: float, overview: Overview, current=None) -> tuple:
    """What a view of ``window`` at ``us_per_px`` needs: ("overview", None) when it shows the
    figure's time about as finely as the overview (less than `MIN_ZOOM`× finer), ("keep",
    current) when the refinement in place (``current``: its window) covers at least
    `KEEP_OVERLAP` of the view's window and is no more than 1/`KEEP_OVERLAP` of it, else
    ("refine", window)."""
    t0, t1 = (float(v) for v in window)
    if us_per_px * MIN_ZOOM > overview.us_per_px:
        return ("overview", None)
    if current is not None:
        c0, c1 = (float(v) for v in current)
        inter = max(0.0, min(c1, t1) - max(c0, t0))
        if inter >= KEEP_OVERLAP * (t1 - t0) and (t1 - t0) >= KEEP_OVERLAP * (c1 - c0):
            return ("keep", (c0, c1))
    return ("refine", (t0, t1))


# ------------------------------------------------------------------------------ the overview's colours, kept
#: the version of `OverviewColours`' file (a file of another version is computed again)
COLOURS_FORMAT = 1
#: a trace file up to this size is hashed whole; a larger one by `FINGERPRINT_CHUNKS` pieces
FINGERPRINT_WHOLE = 256 << 20
FINGERPRINT_CHUNKS = 64
FINGERPRINT_CHUNK = 1 << 20


@dataclass
class OverviewColours:
    """The colour slot the overview figure gave every call of its trace, and its `Colouring`
    without the per-call slots: what a refined stretch needs to keep the overview's colours.

    The overview's colour stage ranks functions by their area in the whole figure, so it costs
    the overview's select, fold and colour stages over the whole trace (~0.5 s at 10^6 calls,
    ~10 s at 10^7 on a loaded machine); the build has them at hand (`from_stages`), and
    `save` / `load` keep them beside the trace's content (`content_fingerprint`).
    ``slot_of_call``: one slot per call of the trace (uint8 or uint16); calls the overview does
    not show have the last slot ("other"), as the detail inset does (`inset._slot_lookup`)."""

    slot_of_call: np.ndarray
    colouring: object  # `colour.Colouring` with an empty ``slot``

    @classmethod
    def from_stages(cls, st, n_calls: int) -> "OverviewColours":
        """From the overview's `icicle.IcicleStages` of a trace of ``n_calls`` calls."""
        colouring = st.colouring
        fallback = len(colouring.slot_rgb) - 1
        dtype = np.uint8 if fallback < 255 else np.uint16
        slot = np.full(int(n_calls), fallback, dtype)
        ids = np.asarray(st.sel.original(st.sel.idx), np.int64)
        slot[ids] = np.asarray(colouring.slot).astype(dtype)
        return cls(slot, dataclasses.replace(colouring, slot=np.zeros(0, np.int32)))

    def colouring_of(self, sel_in):
        """A ``colouring_of`` (`icicle.icicle_stages`): the selection's calls in the overview's slots."""
        want = np.asarray(sel_in.original(sel_in.idx), np.int64)
        return dataclasses.replace(self.colouring, slot=self.slot_of_call[want].astype(np.int32))

    def to_bytes(self) -> bytes:
        import io
        import json

        c = self.colouring
        head = {"format": COLOURS_FORMAT, "mode": c.mode, "title": c.title, "slot_names": list(c.slot_names),
                "categorical": bool(c.categorical), "legend": [dataclasses.asdict(it) for it in c.legend]}
        buf = io.BytesIO()
        arrays = {"slot_of_call": self.slot_of_call, "slot_rgb": np.asarray(c.slot_rgb, np.float64),
                  "head": np.frombuffer(json.dumps(head).encode(), np.uint8)}
        if c.cluster_rgb is not None:
            arrays["cluster_rgb"] = np.asarray(c.cluster_rgb, np.float64)
        np.savez(buf, **arrays)
        return buf.getvalue()

    @classmethod
    def from_file(cls, path, n_calls: int) -> "OverviewColours | None":
        """The colours kept in ``path`` for a trace of ``n_calls`` calls; None when the file is
        missing, unreadable, of another format or of another number of calls."""
        import json

        from .colour import Colouring, LegendItem

        try:
            with np.load(path, allow_pickle=False) as z:
                head = json.loads(z["head"].tobytes().decode())
                slot = z["slot_of_call"]
                rgb = z["slot_rgb"]
                cluster = z["cluster_rgb"] if "cluster_rgb" in z.files else None
        except (OSError, ValueError, KeyError, EOFError):
            return None
        if head.get("format") != COLOURS_FORMAT or slot.shape != (int(n_calls),) or slot.dtype.kind != "u":
            return None
        if slot.size and int(slot.max()) >= len(rgb):
            return None
        colouring = Colouring(head["mode"], head["title"], np.zeros(0, np.int32), rgb, list(head["slot_names"]),
                              [LegendItem(**it) for it in head["legend"]], cluster, bool(head["categorical"]))
        return cls(slot, colouring)


def content_fingerprint(path) -> str:
    """A hash of what decides a trace file's content (SHA-1): the whole file up to
    `FINGERPRINT_WHOLE` bytes (the same bytes anywhere: the same fingerprint); past it, reading
    it all would cost seconds, so the hash covers its size, modification and status-change times
    (ns), inode and device (`file_identity`: an edit of the file changes its ctime, whatever its
    mtime and size stay), and `FINGERPRINT_CHUNKS` evenly spaced pieces of `FINGERPRINT_CHUNK`
    bytes as read.  The file's status is taken before and after the pieces are read; one that
    changed meanwhile is read again (issue 78: an edit outside the pieces that kept the size left
    the kept copy of the old trace in use)."""
    import hashlib
    import os

    for _ in range(3):
        before = os.stat(path)
        size = before.st_size
        h = hashlib.sha1()
        h.update(f"{size}:".encode())
        with open(path, "rb") as f:
            if size <= FINGERPRINT_WHOLE:
                while True:
                    block = f.read(16 << 20)
                    if not block:
                        break
                    h.update(block)
                return h.hexdigest()
            h.update(f"{file_identity(before)}:".encode())
            for k in range(FINGERPRINT_CHUNKS):
                f.seek((size - FINGERPRINT_CHUNK) * k // (FINGERPRINT_CHUNKS - 1))
                h.update(f.read(FINGERPRINT_CHUNK))
        if file_identity(os.stat(path)) == file_identity(before):
            break
    return h.hexdigest()


def file_identity(st) -> list | None:
    """What says a large file (past `FINGERPRINT_WHOLE`) is unchanged without reading it, from its
    ``os.stat``: [size, mtime_ns, ctime_ns, inode, device]; None for a file hashed whole (its
    bytes say it)."""
    if st.st_size <= FINGERPRINT_WHOLE:
        return None
    return [int(st.st_size), int(st.st_mtime_ns), int(st.st_ctime_ns), int(st.st_ino), int(st.st_dev)]


def colours_file_name(fingerprint: str, params: IcicleParams) -> str:
    """The file name of the overview colours of a trace (its `content_fingerprint`) drawn with
    ``params``: the figure's parameters that shape its colours are all of them (resolution,
    fold, colour mode, threads, highlight...), so all are hashed."""
    import hashlib
    import json

    key = json.dumps({"format": COLOURS_FORMAT, "trace": fingerprint, "params": params.to_dict()}, sort_keys=True,
                     default=str)
    return f"overview-colours-{hashlib.sha1(key.encode()).hexdigest()}.npz"


#: the files a zoom keeps in the user cache: the overview's colours, the trace as a native file
KEPT_PREFIXES = ("overview-colours-", "overview-trace-")


def trace_copy_name(fingerprint: str) -> str:
    """The file name of the native copy of a trace (its `content_fingerprint`) in the user cache."""
    return f"overview-trace-{fingerprint}.tv3d.npz"


def prune_colours(folder: str, keep: str, max_files: int, max_bytes: int) -> None:
    """Keep the folder of the zoom's kept files (`KEPT_PREFIXES`) bounded: newest first, the
    files past ``max_files`` or ``max_bytes`` are removed (``keep``, the file just written, stays)."""
    import os

    try:
        entries = [e for e in os.scandir(folder) if e.name.startswith(KEPT_PREFIXES) and e.name.endswith(".npz")]
        entries.sort(key=lambda e: e.stat().st_mtime_ns, reverse=True)
        total = 0
        for k, e in enumerate(entries):
            total += e.stat().st_size
            if e.path != keep and (k >= max_files or total > max_bytes):
                os.remove(e.path)
    except OSError:
        pass


def aligned_window(a_start, a_end, b_start, b_end, pair_a, pair_b, window, origins=(0.0, 0.0)) -> tuple:
    """B's window aligned with A's ``window``: as wide, moved by the median of how much later
    in B the matches (pairs ``pair_a`` ↔ ``pair_b``) of A's calls inside the window start
    (TraceDiff's "align", IV-E, over a stretch instead of one call; the median keeps a few
    matches far away, a repeated call's, from dragging it off); without a match there, the
    same stretch after B's start (``origins``: A's and B's first start) as after A's."""
    lo, hi = (float(v) for v in window)
    pa, pb = np.asarray(pair_a, np.int64), np.asarray(pair_b, np.int64)
    a_start = np.asarray(a_start)
    inside = (a_start[pa] >= lo) & (np.asarray(a_end)[pa] <= hi)
    if inside.any():
        d = float(np.median(np.asarray(b_start)[pb[inside]] - a_start[pa[inside]]))
    else:
        d = float(origins[1]) - float(origins[0])
    return lo + d, hi + d
