"""Label stage: names on boxes that read on a projector (bpy-free).

- Size: ``label_px`` pixels at 1080 image lines (scaled with the resolution, never below
  `MIN_TEXT_PX`·H/1080), measured as the text size (the em) projected on the image.
- Every box whose front face, projected through the camera, can hold `MIN_CHARS`
  characters plus padding at that size gets a label, widest boxes first, up to
  ``max_labels``.  Long names are shortened to their informative end
  (`text.name_candidates`): ``json.encoder._iterencode_dict`` →
  ``…encoder._iterencode_dict`` → ``…_iterencode_dict`` → ``…code_dict``.
- Orientation: the text faces the camera (its normal is the view direction with the
  baseline kept parallel to the time axis, so it stays parallel to the box edges); it is
  placed along the view ray through the middle of the box's front face, just in front of
  the face, so its projection is centred on the face and it is never hidden by its box.
- Colour: dark or light text, whichever contrasts more with the box (WCAG contrast ratio).
- Plates: a name that stands for several boxes (a run, a row, a group) spans boxes of other
  colours and gaps between them, where no text colour reads everywhere (white digits over a
  light grey cell).  Such a name gets a plate: a thin box of its function's colour just in
  front of the faces, as wide as the text and as tall as the face (`LabelPlacer.plate_layer`).
"""
from __future__ import annotations

import numpy as np

from . import palette
from .camera import euler_xyz, project
from .spec import CameraSpec, InstanceLayer, LabelSet, MaterialSpec
from .cluster import cluster_subpixel_calls
from .fold import ROW_SHARE
from .geometry import BOX_FILL, AtIndex, dominant_member, drawn_chunks
from .text import ASCENT, DESCENT, fit_text, name_candidates, text_width

MIN_TEXT_PX = 14.0
PAD = 0.25  # horizontal padding on each side, in em
TEXT_DARK = (0.010, 0.010, 0.012, 1.0)
TEXT_LIGHT = (0.96, 0.96, 0.96, 1.0)
TEXT_UI = (0.02, 0.02, 0.025, 1.0)
TEXT_MUTED = (0.16, 0.16, 0.17, 1.0)
#: a plate's thickness in text sizes, in front of the faces (y = 0); its text stands as far
#: again in front of the plate (`place_facing_text`'s ``clearance``).  Far more than the
#: depth buffer resolves at the camera's distance (about 1e-3 of a text size at 1080p):
#: thinner plates flickered with the boxes behind them (seen in Workbench)
PLATE_DEPTH = 0.08


def text_px(params) -> float:
    """Label text size in pixels at the figure's resolution."""
    h = float(params.resolution[1])
    return max(float(params.label_px), MIN_TEXT_PX) * h / 1080.0


#: a secondary text is sized this much over `MIN_TEXT_PX`: the perspective shrinks text that
#: stands lower in the frame than the lanes whose pixel size set it by up to ~2 % (seen: 13.8 px)
SIDE_TEXT_MARGIN = 1.05


def side_text_share(params, share: float) -> float:
    """A secondary text's size (the names of async lanes and counter tracks, drawn smaller
    than the calls' names: ``share`` of `text_px`), in label sizes, never under `MIN_TEXT_PX`
    at 1080 lines once projected (`SIDE_TEXT_MARGIN`), nor over the label size: at the default
    16 px, 0.8 of it was 12.6 px on the image, too small to read on a slide."""
    floor = SIDE_TEXT_MARGIN * MIN_TEXT_PX / max(float(params.label_px), MIN_TEXT_PX)
    return min(max(float(share), floor), 1.0)


def text_basis(to_camera) -> tuple:
    """(baseline, up, normal) of text that faces ``to_camera`` with its baseline along +x."""
    c = np.asarray(to_camera, np.float64)
    x = np.array([1.0, 0.0, 0.0])
    n = c - (c @ x) * x
    nn = np.linalg.norm(n)
    n = n / nn if nn > 1e-9 else np.array([0.0, -1.0, 0.0])
    up = np.cross(n, x)
    return x, up, n


#: a front face's luminance in the rendered figure over its colour's: the figures' lighting
#: leaves the faces that carry names at 0.82-0.83 of their colour (Workbench, measured on six
#: colours in the icicle and the live view), so text is chosen against that, not the colour:
#: a slate blue of luminance 0.20 took dark text that read at 3.6:1 where light reads at 4.4:1
FACE_SHADE = 0.82


def contrast_text_material(rgb) -> list:
    """'TV3D_text_dark' or 'TV3D_text_light' per linear colour, whichever contrasts more with
    the colour as rendered on a front face (`FACE_SHADE`)."""
    lum = FACE_SHADE * palette.relative_luminance(np.asarray(rgb, np.float64).reshape(-1, 3))
    ld = palette.relative_luminance(np.array([TEXT_DARK[:3]]))[0]
    ll = palette.relative_luminance(np.array([TEXT_LIGHT[:3]]))[0]
    c_dark = (lum + 0.05) / (ld + 0.05)
    c_light = (ll + 0.05) / (lum + 0.05)
    return ["TV3D_text_dark" if a >= b else "TV3D_text_light" for a, b in zip(c_dark, c_light)]


def place_facing_text(face_centre, cam: CameraSpec, size_world, to_camera, vertical: bool = False,
                      width_world=None, clearance: float = 0.02):
    """Baseline anchors and Euler rotations of texts centred on face points, facing the camera.

    Each text is moved from its face point towards the camera along the view ray (so its
    projection stays centred on the face) until all of it lies ``clearance`` text sizes in
    front of the face plane (y = 0); the baseline sits (ASCENT - DESCENT)/2 em below the text's middle.  A
    ``vertical`` text runs upwards (turned a quarter left, as on a vertical axis); then
    ``width_world`` (its length) tells how far its top end leans back.
    """
    p = np.asarray(face_centre, np.float64).reshape(-1, 3)
    s = np.asarray(size_world, np.float64).reshape(-1)
    bx, up, n = text_basis(to_camera)
    if vertical:
        length = np.asarray(width_world, np.float64).reshape(-1)
        bx, up = up, -bx  # baseline upwards, the text's "up" to the left
    loc = np.asarray(cam.location, np.float64)
    if cam.orthographic:
        ray = np.tile(np.asarray(to_camera, np.float64) / np.linalg.norm(to_camera), (p.shape[0], 1))
    else:
        ray = loc - p
        ray /= np.linalg.norm(ray, axis=1, keepdims=True)
    half = 0.5 * (ASCENT + DESCENT) * s
    lean = max(up[1], 0.0) * half  # how far the top of the text reaches behind its middle
    if vertical:
        lean = max(bx[1], 0.0) * 0.5 * length  # the text's upper end
    step = (lean + clearance * s) / np.maximum(-ray[:, 1], 1e-3)
    centre = p + ray * step[:, None]
    anchor = centre - up[None, :] * ((ASCENT - DESCENT) / 2.0 * s)[:, None]
    rot = np.tile(euler_xyz(bx, up, n), (p.shape[0], 1))
    return anchor, rot


#: `box_face_pixels` projects this many faces at a time (its four points a face, 96 bytes each, a chunk's only)
FACE_CHUNK = 1 << 16


def box_face_pixels(cam, resolution, x0, x1, z0, z1) -> tuple:
    """Projected width and height (pixels) of front faces (y = 0) [x0,x1] × [z0,z1]
    (`FACE_CHUNK` faces at a time: the same values, a chunk's temporaries)."""
    n = int(np.size(x0))
    wpx, hpx = np.empty(n), np.empty(n)
    for a in range(0, n, FACE_CHUNK):
        s = slice(a, min(a + FACE_CHUNK, n))
        wpx[s], hpx[s] = _face_pixels(cam, resolution, x0[s], x1[s], z0[s], z1[s])
    return wpx, hpx


def _face_pixels(cam, resolution, x0, x1, z0, z1) -> tuple:
    zc = 0.5 * (z0 + z1)
    xc = 0.5 * (x0 + x1)
    n = x0.size
    pts = np.concatenate([np.stack([x0, np.zeros(n), zc], 1), np.stack([x1, np.zeros(n), zc], 1),
                          np.stack([xc, np.zeros(n), z0], 1), np.stack([xc, np.zeros(n), z1], 1)])
    pr = project(cam, pts, resolution)
    wpx = np.abs(pr[n:2 * n, 0] - pr[:n, 0])
    hpx = np.abs(pr[2 * n:3 * n, 1] - pr[3 * n:, 1])
    return wpx, hpx


LEADER_PX = 1.4  # width of a leader from a name to what it names (the cone's far names, callouts)
LEADER_RGB = (0.18, 0.18, 0.19)  # linear: a mid grey, quieter than the text


def leader_material(name: str) -> MaterialSpec:
    """The material ``name`` of leaders (`LEADER_RGB`, unlit as text)."""
    return MaterialSpec(name, LEADER_RGB + (1.0,), kind="text", cushion=False, from_attribute=False)


def name_plate_material() -> MaterialSpec:
    """``TV3D_name_plate``: the white plate behind a name that stands over other things (a
    thread's name over flow arcs, a thread's tag on a shared lane)."""
    return MaterialSpec("TV3D_name_plate", (1.0, 1.0, 1.0, 1.0), cushion=False, from_attribute=False)


def _at(values, keep, dtype=None) -> np.ndarray:
    """``np.asarray(values, dtype)[keep]``, where ``values`` may be an `AtIndex` (a candidate
    group's colours, calls or sizes read at the names kept only, not made for every candidate)."""
    if isinstance(values, AtIndex):
        return np.asarray(values[keep], dtype)
    return np.asarray(values, dtype)[keep]


class LabelPlacer:
    """Collects labels from several candidate groups (boxes, runs, clusters, fold markers),
    never giving two overlapping faces a label each, up to ``max_labels``.  Every face
    lies in the front plane y = 0, so overlap is tested on the faces' (x, z) rectangles;
    a text is centred inside its face, so labels of disjoint faces never collide."""

    def __init__(self, cam, resolution, to_camera, size_px, max_labels, min_width_px=0.0, repeat_gap=0.0):
        self.cam, self.res, self.to_cam = cam, resolution, to_camera
        self.size_px, self.max_labels = float(size_px), int(max_labels)
        self.min_w = max(self.size_px * (3 * 0.5 + 1.0 + 2 * PAD), float(min_width_px))
        self.need_h = self.size_px * (ASCENT + DESCENT) * 1.08
        self.rects = np.zeros((0, 4))
        self.keys = np.zeros(0, np.int64)  # what each label names (a function), -1: not a name
        self.repeat_gap = float(repeat_gap)  # world distance within which a name is not repeated
        self.zones = np.zeros((0, 2))  # (z0, z1) bands within which a name is not repeated either
        self.sets = []
        self.plates = []  # (x0, x1, z0, z1, depth, slot, call_index) arrays of each add's plated names

    @property
    def count(self) -> int:
        return int(self.rects.shape[0])

    def repeat_zones(self, zones) -> None:
        """Bands of height (``zones``: (z0, z1) each, world) in which a function named once is
        not named again over the same stretch of time, however far apart (a block of lanes
        of one kind, `lane_blocks.lane_name_runs`: the same call in its 21 rows said once)."""
        self.zones = np.asarray(zones, np.float64).reshape(-1, 2)

    def _zone_of(self, zc) -> np.ndarray:
        """The repeat zone of each height in ``zc`` (-1: none)."""
        zc = np.asarray(zc, np.float64).reshape(-1)
        if not self.zones.shape[0]:
            return np.full(zc.size, -1, np.int64)
        inside = (self.zones[None, :, 0] <= zc[:, None]) & (zc[:, None] <= self.zones[None, :, 1])
        return np.where(inside.any(1), inside.argmax(1), -1)

    def reserve(self, x0, x1, z0, z1) -> None:
        """Faces [x0,x1] × [z0,z1] (world, y = 0) taken by something else (a thread's tag,
        `icicle.member_tags`): no label is placed over them; they do not count as labels."""
        r = np.stack([np.asarray(v, np.float64).reshape(-1) for v in (x0, z0, x1, z1)], 1)
        self.rects = np.vstack([self.rects, r])
        self.keys = np.append(self.keys, np.full(r.shape[0], -1, np.int64))
        self.max_labels += r.shape[0]

    def add(self, texts_of, x0, x1, z0, z1, rgb, call_index, kind, world_per_px, keys=None,
            vertical: bool = False, plate_slot=None) -> int:
        """Label the candidate faces [x0,x1] × [z0,z1] (world, y = 0) that can hold a name,
        widest first, skipping any whose face overlaps an already labelled face.
        ``texts_of(k)`` gives candidate k's texts, most informative first.  With ``keys``
        (the function each candidate names), a candidate is also skipped when the same
        function is already named within ``repeat_gap`` above or below it, over at least
        half of its width: a tower of the same name on every level says nothing more.
        A ``vertical`` label runs up a tall narrow face instead of across it.
        ``plate_slot`` (the colour slot of each candidate): its names get plates of that slot
        (see the module docstring), for faces that span several boxes.
        Returns the number of labels added."""
        n = x0.size
        room = self.max_labels - self.count
        if n == 0 or room <= 0:
            return 0
        # width and height through the face's middle (a bounding box of a slanted face is taller)
        wpx, hpx = box_face_pixels(self.cam, self.res, x0, x1, z0, z1)
        if vertical:  # the text's length runs along the face's height
            wpx, hpx = hpx, wpx
        ok = np.flatnonzero((wpx >= self.min_w) & (hpx >= self.need_h))
        ok = ok[np.argsort(-wpx[ok], kind="stable")]
        texts, keep = [], []
        # (the extent of x0 and x1 together, and the faces of the candidates that can hold a name
        # only: no arrays of every candidate's four sides)
        eps = 1e-6 * max(float(np.maximum(x0.max(), x1.max()) - np.minimum(x0.min(), x1.min())), 1e-9)
        world = np.stack([x0[ok] + eps, z0[ok] + eps, x1[ok] - eps, z1[ok] - eps], 1)  # touching faces: apart
        for j, k in enumerate(ok):  # bounded: stops after `room` labels
            r = world[j]
            key = -1 if keys is None else int(keys[k])
            if self.rects.shape[0]:
                q = self.rects
                if np.any((q[:, 0] < r[2]) & (r[0] < q[:, 2]) & (q[:, 1] < r[3]) & (r[1] < q[:, 3])):
                    continue
                if key >= 0 and (self.repeat_gap > 0 or self.zones.shape[0]):
                    same = self.keys == key
                    ov = np.minimum(q[:, 2], r[2]) - np.maximum(q[:, 0], r[0])
                    near = (q[:, 1] < r[3] + self.repeat_gap) & (r[1] < q[:, 3] + self.repeat_gap)
                    if self.zones.shape[0] and same.any():
                        zone = self._zone_of(0.5 * (r[1] + r[3]))[0]
                        if zone >= 0:
                            near = near | (self._zone_of(0.5 * (q[:, 1] + q[:, 3])) == zone)
                    if np.any(same & near & (ov >= 0.5 * np.minimum(q[:, 2] - q[:, 0], r[2] - r[0]))):
                        continue
            t = fit_text(texts_of(int(k)), float(wpx[k]) / self.size_px - 2 * PAD)
            if not t:
                continue
            texts.append(t)
            keep.append(int(k))
            self.rects = np.vstack([self.rects, r[None]])
            self.keys = np.append(self.keys, key)
            if len(keep) >= room:
                break
        if not keep:
            return 0
        keep = np.asarray(keep, np.int64)
        face = np.stack([0.5 * (x0[keep] + x1[keep]), np.zeros(keep.size), 0.5 * (z0[keep] + z1[keep])], 1)
        size_world = self.size_px * _at(world_per_px, keep, np.float64)
        length = np.array([text_width(t) for t in texts]) * size_world
        plated = plate_slot is not None and not vertical
        anchor, rot = place_facing_text(face, self.cam, size_world, self.to_cam, vertical, length,
                                        2.0 * PLATE_DEPTH if plated else 0.02)
        if plated:
            half = 0.5 * length + PAD * size_world
            self.plates.append((np.maximum(face[:, 0] - half, x0[keep]), np.minimum(face[:, 0] + half, x1[keep]),
                                z0[keep], z1[keep], PLATE_DEPTH * size_world,
                                _at(plate_slot, keep, np.int64), _at(call_index, keep, np.int64)))
        mats = contrast_text_material(_at(rgb, keep))
        self.sets.append(LabelSet(texts, anchor.astype(np.float32), size_world.astype(np.float32), mats,
                                  np.ones(keep.size, np.uint8), [kind] * keep.size,
                                  _at(call_index, keep, np.int32), rot.astype(np.float32),
                                  ["world"] * keep.size))
        return int(keep.size)

    def labels(self) -> LabelSet:
        return LabelSet.concat(self.sets)

    def plate_layer(self, name: str, slot_rgb, slot_names, extra: dict | None = None):
        """The plates of the names added with ``plate_slot`` since the last call: one thin box
        each, y in [-depth, 0], of its slot's colour and material (a box's, so it shades as
        the boxes do), with the named call's ``call_index`` for picking; None without plates.
        The plates are handed over (a comparison takes each side's in its own colours)."""
        if not self.plates:
            return None
        plates, self.plates = self.plates, []
        x0, x1, z0, z1, dy, slot, call = (np.concatenate(c) for c in zip(*plates))
        n = x0.size
        pos = np.stack([0.5 * (x0 + x1), -0.5 * dy, 0.5 * (z0 + z1)], 1).astype(np.float32)
        sc = np.stack([np.maximum(x1 - x0, 1e-6), dy, z1 - z0], 1).astype(np.float32)
        col = np.ones((n, 4), np.float32)
        col[:, :3] = np.asarray(slot_rgb, np.float32)[slot]
        attrs = {"call_index": call.astype(np.int32)}
        for key, v in (extra or {}).items():
            attrs[key] = np.full(n, v, np.int32)
        return InstanceLayer(name, pos, sc, col, slot.astype(np.int32), list(slot_names), attrs)


# ----------------------------------------------------------------- the icicle's label stage

#: a lane's roots are named as a row when they fill at least this share of its extent
LANE_ROW_MIN_FILL = 0.05

def named_lane_rows(fold) -> np.ndarray:
    """Lanes whose roots form a row worth one name (`layout.fold.lane_root_rows`, the fold's
    ``lane_rows``): one function takes `ROW_SHARE` of the roots' time over at least two
    calls, the roots fill `LANE_ROW_MIN_FILL` of the row (two calls at a lane's two ends
    are no row), and the row's first call of that function is drawn, not folded.  The
    icicle's labels and the thread view's ring name them by this one rule."""
    n_r, l_start, l_end, l_dom, l_dom_t, l_dom_c, l_tot, l_first = fold.lane_rows
    lr = np.flatnonzero((l_dom_c >= 2) & (l_dom_t >= ROW_SHARE * np.maximum(l_tot, 1e-300)) & (l_first >= 0)
                        & (l_tot >= LANE_ROW_MIN_FILL * (l_end - l_start)))
    return lr[fold.drawn[l_first[lr]] & ~fold.folded[l_first[lr]]]


def lane_row_candidates(fold, lane: int, ft) -> list:
    """Texts naming lane ``lane``'s row of roots (`named_lane_rows`): "31× worker"."""
    n_r, l_start, l_end, l_dom, l_dom_t, l_dom_c, l_tot, l_first = fold.lane_rows
    more = "" if l_dom_t[lane] >= 0.99 * l_tot[lane] else " & more"
    return counted_candidates(int(l_dom_c[lane]), ft.display[int(l_dom[lane])], more)


def counted_candidates(count: int, display: str, more: str) -> list:
    """Texts for a group of calls one function dominates, most informative first:
    ``120× docutils.nodes.Text.astext & more`` … ``120× …astext``, then without the count,
    ending with the bare name."""
    names = name_candidates(display)
    if count <= 1:  # one call of the function (and others): its name says it
        return [f"{x}{more}" for x in names] + names[-1:]
    out = [f"{count:,}× {x}{more}" for x in names]
    out += [f"{count:,}× {names[-1]}"] if more else []
    out += [f"{x}{more}" for x in names[1:]]
    return out + [names[-1]]


#: `icicle_labels` finds each function's lowest and highest box colour this many drawn calls at a time
RANGE_CHUNK_CALLS = 1 << 20


def band_last_calls(fold, d, starts, shown_func) -> np.ndarray:
    """Per folded band (``starts``: drawn calls that start a run), the function of the last
    call of its run in pre-order (the end of the wrapper chain it folds; ``shown_func``: the
    function of every shown call, indexable); -1 when it has none."""
    rs = fold.run_start
    member = np.flatnonzero(rs >= 0)
    out = np.full(starts.size, -1, np.int64)
    if member.size == 0 or shown_func is None:
        return out
    order = np.lexsort((member, rs[member]))
    key = rs[member][order]
    last_of_run = np.r_[key[1:] != key[:-1], True]
    runs, last = key[last_of_run], member[order][last_of_run]
    start_local = d.local[starts]
    pos = np.minimum(np.searchsorted(runs, start_local), runs.size - 1)
    ok = runs[pos] == start_local
    out[ok] = shown_func[last[pos[ok]]]  # an array or an `AtIndex` (read at these calls only)
    return out


def _add_level_groups(placer: "LabelPlacer", d, cl, bi, ft, frame, x, rgb, z_lo, z_hi, group_gap_px: float,
                      group_share: float) -> None:
    """`icicle_labels`' step 5: groups of boxes (``bi``: the drawn calls not in clusters) and
    clusters ``cl`` on one level, across parents, at most ``group_gap_px`` apart (at least one
    pixel), that one function dominates (at least ``group_share`` of their time): "61× …find_and_load
    & more"; items in time order per lane."""
    func, slot, px = d.func, d.slot, frame.px
    nc = len(cl)
    it_start = np.concatenate([d.start[bi], cl.start])
    if it_start.size:
        it_end = np.concatenate([d.end[bi], cl.end])
        it_level = np.concatenate([d.level_id[bi], d.level_id[cl.rep] if nc else np.zeros(0, np.int32)])
        it_lane = np.concatenate([d.lane[bi], cl.lane]).astype(np.int32)
        it_member = np.concatenate([bi, cl.dom if nc else np.zeros(0, np.int64)]).astype(np.int64)
        it_calls = np.concatenate([np.ones(bi.size), cl.count.astype(np.float64)])
        it_time = np.concatenate([d.end[bi] - d.start[bi], cl.time])
        order = np.lexsort((it_start, it_lane))
        it_start, it_end, it_level, it_lane = it_start[order], it_end[order], it_level[order], it_lane[order]
        it_member, it_calls, it_time = it_member[order], it_calls[order], it_time[order]
        key = func[it_member]
        g_of, _, _, g_start, g_end, g_items, g_rep, g_uniform = cluster_subpixel_calls(
            it_start, it_end, it_level.astype(np.int32), it_lane, np.full(px.size, np.inf),
            (max(group_gap_px, 1.0) * frame.us_per_px).astype(np.float64), key)
        multi = np.flatnonzero(g_items >= 2)
        if multi.size:
            g_dom, g_share, g_calls = dominant_member(g_of, key, it_time, g_items.size, it_calls)
            multi = multi[g_share[multi] >= group_share]
            gi, gd = it_member[g_rep[multi]], it_member[g_dom[multi]]

            def group_texts(k):
                more = "" if g_uniform[multi[k]] else " & more"
                return counted_candidates(int(g_calls[multi[k]]), ft.display[int(func[gd[k]])], more)

            placer.add(group_texts, x(g_start[multi]), x(g_end[multi]), z_lo[gi], z_hi[gi], rgb[slot[gd]],
                       d.call_id[gd], "group", px[d.lane[gi]], func[gd], plate_slot=slot[gd])


def icicle_labels(placer: "LabelPlacer", d, cl, cluster_x, fold, colouring, ft, frame, t0: float, t1: float,
                  band_height: float, group_share: float = 0.5, group_gap_px: float = 0.0,
                  grows_down: bool = False, shown_func=None) -> None:
    """Name what can be named, in this priority (earlier groups win overlaps):

    1. boxes, by their function (not folded bands);
    2. folded bands: the program's by the call they start with ("re.compile (16 levels)", "a › … › b"),
       the rest by their depth ("14 folded levels");
    3. runs of one function among siblings (`kernels.runs.sibling_runs`): "48× time.sleep";
    4. rows of siblings one function dominates (`kernels.runs.child_rows`):
       "299× …StateMachine.check_line";
    5. groups of boxes and clusters on one level, across parents, at most ``group_gap_px``
       apart (at least one pixel), that one function dominates (at least ``group_share`` of
       their time): "61× …find_and_load & more";
    (``grows_down``: the icicle hangs from its roots, so a call's children are below it.)
    6. boxes too narrow for a name across but tall enough for it upwards (a vertical label);
    7. clusters, by the function holding most of their time;
    8. the row of each lane's roots (`layout.fold.lane_root_rows`): "31× worker".
    """
    scale_t, px = frame.scale_t, frame.px
    cache: dict = {}

    def cands(f):
        c = cache.get(f)
        if c is None:
            c = cache[f] = name_candidates(ft.display[f])
        return c

    def x(t):
        return (np.asarray(t) - t0) * scale_t

    single = cl.single
    bi = np.flatnonzero(single)
    func, slot = d.func, d.slot

    def slot_of_function(f, fallback):
        """The colour of function ``f``'s boxes where all its drawn boxes have one (a colour
        by function, module or kind; not a comparison's matched / unmatched), else
        ``fallback``: what a row of several calls is named by, for its text and its plate."""
        f = np.asarray(f, np.int64)
        if func.size == 0 or f.size == 0:
            return fallback
        if "slot_range" not in cache:  # per function: its drawn boxes' lowest and highest slot
            from ..kernels.drawn import range_by_key

            n_keys, lo, hi = int(func.max()) + 1, None, None
            for a in range(0, func.size, RANGE_CHUNK_CALLS):  # int64 copies of a chunk, not of every call
                b = min(a + RANGE_CHUNK_CALLS, func.size)
                lo_c, hi_c = range_by_key(np.ascontiguousarray(func[a:b], np.int64),
                                          np.ascontiguousarray(slot[a:b], np.int64), n_keys)
                lo, hi = (lo_c, hi_c) if lo is None else (np.minimum(lo, lo_c), np.maximum(hi, hi_c))
            cache["slot_range"] = lo, hi
        lo, hi = cache["slot_range"]
        inside = f < lo.size
        fc = np.where(inside, f, 0)
        return np.where(inside & (lo[fc] == hi[fc]), hi[fc], fallback)

    rgb = colouring.slot_rgb
    z_lo, z_hi = AtIndex(d.face_low_at), AtIndex(d.face_high_at)  # read at the named calls only

    def per(calls, of):  # ``of`` the drawn calls ``calls``, read at the names kept (`LabelPlacer.add`)
        return AtIndex(lambda k: of(calls[k]))

    def colour_of(c):
        return rgb[slot[c]]

    def id_of(c):
        return d.call_id[c]

    def size_of(c):
        return px[d.lane[c]]

    def func_of(c):
        return func[c]

    def slot_at(c):
        return slot[c]
    # 1. boxes
    placer.add(lambda k: [] if d.folded[bi[k]] else cands(int(func[bi[k]])), x(d.start[bi]), x(d.end[bi]),
               z_lo[bi], z_hi[bi], per(bi, colour_of), per(bi, id_of), "call", per(bi, size_of), per(bi, func_of))
    # 2. folded bands wide enough for a marker.  A band of the program's own calls names the
    #    call it starts with (the widest of what it folds; kind "call"): the chain it folds
    #    ("publish_string › … › Reader.read") or the call and how many levels it folds
    #    ("re.compile (16 levels)", narrower "re.compile +16"); runtime infrastructure, and a band
    #    too narrow for a name, says how deep it is ("14 folded levels", kind "fold")
    starts = np.concatenate([np.flatnonzero(d.run_levels[s] >= 2) + s.start for s in drawn_chunks(d.local.size)]
                            or [np.zeros(0, np.int64)])  # (bands of two levels or more: few)
    starts = starts[d.level_height[starts] >= 1.0 - 1e-9] if starts.size else starts
    if starts.size:
        last = band_last_calls(fold, d, starts, shown_func)
        own = np.flatnonzero(~np.asarray(ft.infra, np.bool_)[func[starts]])

        def named_band_texts(k):
            c = int(starts[own[k]])
            n, f0, f1 = int(d.run_levels[c]), int(func[c]), int(last[own[k]])
            a = cands(f0)
            out = [] if f1 < 0 or f1 == f0 else [f"{a[0]} › … › {cands(f1)[0]}", f"{a[-1]} › … › {cands(f1)[-1]}"]
            # "(16 levels)", else "+16" (the legend says what it counts): a vertical ellipsis, "⋮16",
            # read at a label's size as a colon, "…tokendef :16", a line number (a Pygments trace)
            return out + [f"{x} ({n} levels)" for x in a] + [f"{x} +{n}" for x in a]

        sb = starts[own]
        placer.add(named_band_texts, x(d.start[sb]), x(d.end[sb]), d.bottom[sb], d.bottom[sb] + band_height,
                   rgb[slot[sb]], d.call_id[sb], "call", px[d.lane[sb]], func[sb])

        def fold_texts(k):
            n = int(d.run_levels[starts[k]])
            return [f"{n} folded levels", f"{n} levels", f"+{n}"]

        placer.add(fold_texts, x(d.start[starts]), x(d.end[starts]), d.bottom[starts],
                   d.bottom[starts] + band_height, rgb[slot[starts]], d.call_id[starts], "fold", px[d.lane[starts]])
    # 3. runs of repeated calls (heads among the drawn calls)
    rh = fold.rep_heads  # runs of 2 calls or more
    run_shown = fold.drawn[rh] & ~fold.folded[rh]
    heads_shown = rh[run_shown]
    heads = d.position_of(heads_shown)
    if heads.size:
        r_cnt = fold.rep_count[run_shown]
        placer.add(lambda k: counted_candidates(int(r_cnt[k]), ft.display[int(func[heads[k]])], ""),
                   x(d.start[heads]), x(np.minimum(fold.rep_end[run_shown], t1)), z_lo[heads], z_hi[heads],
                   per(heads, colour_of), per(heads, id_of), "run", per(heads, size_of), per(heads, func_of),
                   plate_slot=per(heads, slot_at))
    # 4. rows of siblings one function dominates (the row sits on its parent)
    rc = fold.row_calls  # the rows' columns are at these calls
    row_shown = fold.drawn[rc] & ~fold.folded[rc] & (fold.rows[5] >= 2)
    n_ch, r_start, r_end, r_dom, r_dom_t, r_dom_c, r_tot = (a[row_shown] for a in fold.rows)
    rows_shown = rc[row_shown]
    rows = d.position_of(rows_shown)
    if rows.size:
        share = r_dom_t / np.maximum(r_tot, 1e-300)
        # the children's level: as tall as the first child's box (in pre-order the call
        # right after its parent), at most a level (a squeezed row is thin).  The calls the
        # row names (its dominant function's) share one height unless folded; a first child
        # of another function may be thinner, and then the row is not named (it might
        # stand over strata)
        first = np.minimum(rows_shown + 1, fold.height.size - 1)
        h = frame.h * np.minimum(fold.height[first], 1.0)
        ch = d.bottom[rows] - h if grows_down else d.bottom[rows] + d.height[rows]

        def row_texts(k):
            more = "" if share[k] >= 0.99 else " & more"
            return counted_candidates(int(r_dom_c[k]), ft.display[int(r_dom[k])], more)

        row_slot = slot_of_function(r_dom, slot[rows])
        placer.add(row_texts, x(np.maximum(r_start, t0)), x(np.minimum(r_end, t1)),
                   ch + (1 - BOX_FILL) / 2 * h, ch + (1 + BOX_FILL) / 2 * h, rgb[row_slot], d.call_id[rows], "row",
                   px[d.lane[rows]], r_dom, plate_slot=row_slot)
    # 5. groups across parents on one level: items are boxes and clusters, in time order per lane
    _add_level_groups(placer, d, cl, bi, ft, frame, x, rgb, z_lo, z_hi, group_gap_px, group_share)
    # 6. boxes too narrow for their name across, but tall enough for it upwards
    placer.add(lambda k: [] if d.folded[bi[k]] else cands(int(func[bi[k]])), x(d.start[bi]), x(d.end[bi]),
               z_lo[bi], z_hi[bi], per(bi, colour_of), per(bi, id_of), "call", per(bi, size_of), per(bi, func_of),
               vertical=True)
    nc = len(cl)
    # 7. clusters: named by the function holding most of their time ("group", as step 5),
    # else by their number of calls ("cluster"; "708 calls", never the bare number, which
    # on a slide reads as nothing)
    if nc:
        named = cl.dom_share >= 0.6
        for which, kind in ((np.flatnonzero(named), "group"), (np.flatnonzero(~named), "cluster")):
            if which.size == 0:
                continue

            def cl_texts(k, which=which):
                c = int(which[k])
                n = int(cl.count[c])
                if named[c]:
                    return counted_candidates(n, ft.display[int(func[cl.dom[c]])], "" if cl.uniform[c] else " & more")
                return [f"{n:,} calls"]

            placer.add(cl_texts, cluster_x[0][which], cluster_x[1][which], z_lo[cl.rep[which]], z_hi[cl.rep[which]],
                       colouring.cluster_rgb[slot[cl.dom[which]]], d.call_id[cl.rep[which]], kind,
                       px[cl.lane[which]], func[cl.dom[which]])
    # 8. the row each lane's roots form (an asyncio task's resumptions, a browser thread's
    #    tasks: "31× worker"), on the roots' level (`layout.fold.lane_root_rows`), where
    #    nothing above named them
    if fold.lane_rows is not None:
        n_r, l_start, l_end, l_dom, l_dom_t, l_dom_c, l_tot, l_first = fold.lane_rows
        lr = named_lane_rows(fold)
        if lr.size:
            lh = d.position_of(l_first[lr])

            def lane_row_texts(k):
                return lane_row_candidates(fold, int(lr[k]), ft)

            lane_slot = slot_of_function(l_dom[lr], slot[lh])
            placer.add(lane_row_texts, x(np.maximum(l_start[lr], t0)), x(np.minimum(l_end[lr], t1)), z_lo[lh], z_hi[lh],
                       rgb[lane_slot], d.call_id[lh], "row", px[d.lane[lh]], func[lh], plate_slot=lane_slot)
