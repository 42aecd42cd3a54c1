"""EXTRAVIS' circular bundle view (Cornelissen et al., Sec. 4; Holten's hierarchical edge
bundles), bpy-free: the hierarchy's leaves on a circle, the hierarchy mirrored outward as an
extruded icicle ring (a `SectorLayer`), every relation a tube along the hierarchy path.

- **Leaves** (the elements of the chosen level that take part in a shown call, and the
  threads) sit on the circle of radius R in hierarchy order, clockwise from the top; each
  takes an arc in proportion to the calls it makes or receives to the power `ARC_POWER`
  (the paper gives every leaf the same arc; with hundreds of elements the busy ones would
  then be too narrow to name; 0.65 names 18 classes of the 1M-call sympy trace where the
  square root names 11), with a gap between top-level groups.  The busiest leaves get at
  least the arc that holds one line of text (`floored_shares`): as many as fit in
  `MAX_FLOORED` of the circle, so a module with few calls among busy ones is still named.
- **Ring** (Fig. 7): element of depth d gets band ``leaf depth − d`` outward from the
  circle: the leaves innermost (a wider band, names written radially), packages outermost
  (names along the arc).  Threads span the bands below the "threads" group.
- **Bundles** (Fig. 5, Eq. 1): the inner, invisible radial tree puts an element of depth d
  at radius R·d / leaf depth on the middle angle of its arc (the root at the centre); a
  relation's control polygon runs from its caller leaf up to the least common ancestor and
  down to its callee leaf, straightened by β and drawn as a cubic B-spline by the kernel the
  comparison's bundles use (`kernels.bundle.bundled_curves`, one tree as both sides).
- **Tubes**: one per relation and colour step (the spline cut into `GRADIENT_STEPS` pieces,
  each in the colour of its place on the green → red gradient, so Workbench shows the
  gradient with one material per step), radius by the calls it carries (log scale).
- **Minimum blending's equivalent** (Sec. 4: an opposite-direction spline must stay visible
  inside a bundle): every tube comes towards the camera along its length, its callee end
  `TOWARD_CAMERA` in front of its caller end.  Where a bundle's splines mostly run A → B, the
  rare B → A spline is red near A, where all the others are green, and lies in front of
  them there; like minimum blending the result does not depend on the drawing order.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..analysis.hierarchy import THREAD, UNQUALIFIED, element_label
from ..kernels.bundle import bundled_curves
from .spec import LabelSet, SectorLayer, TubeLayer
from .text import ASCENT, DESCENT, fit_text, fit_thread_label, name_candidates

GRADIENT_STEPS = 8
SAMPLES = 8 * GRADIENT_STEPS + 1
TOWARD_CAMERA = 0.06  # of R: how far the callee end of a tube lies in front of its caller end
ARC_POWER = 0.65  # a leaf's arc grows with (its calls) ** ARC_POWER
MAX_GAPS = 0.1  # the share of the circle the gaps between top-level groups may take
MAX_FLOORED = 0.5  # the share of the circle the busiest leaves' minimum arcs may take
GREEN = np.array([0.02, 0.50, 0.04])
RED = np.array([0.80, 0.02, 0.02])


def gradient_rgb(t) -> np.ndarray:
    """Linear RGB on the caller → callee gradient (green → red) at t in [0, 1]."""
    t = np.clip(np.asarray(t, np.float64), 0.0, 1.0)[..., None]
    return GREEN * (1.0 - t) + RED * t


@dataclass
class Arcs:
    """Where every shown element sits: ``f0``/``f1`` its share of the circle (0..1,
    clockwise from the top) and of the sequence view's width; ``shown`` bool per element."""

    f0: np.ndarray
    f1: np.ndarray
    shown: np.ndarray
    leaves: np.ndarray  # the shown leaves, pre-order


def floored_shares(weight: np.ndarray, room: float, floor: float, max_floored: float = 0.5) -> np.ndarray:
    """Shares of ``room`` in proportion to ``weight``, except that the K heaviest leaves get at
    least ``floor`` (K = ⌊max_floored · room / floor⌋, so the floors never take more than
    ``max_floored`` of the room):  w_i = max(c · weight_i, floor) for the K heaviest,
    c · weight_i for the others, with the one c > 0 that makes Σ w = room (Σ w grows
    monotonically with c; solved by bisection).  The order of the shares by weight is kept."""
    weight = np.asarray(weight, np.float64)
    n = weight.size
    if n == 0 or not floor > 0:
        return weight / max(weight.sum(), 1e-300) * room
    k = int(min(n, np.floor(max_floored * room / floor)))
    heavy = np.zeros(n, bool)
    heavy[np.argsort(-weight, kind="stable")[:k]] = True

    def total(c):
        w = c * weight
        return np.where(heavy, np.maximum(w, floor), w).sum()

    lo, hi = 0.0, room / max(weight.sum(), 1e-300)  # total(hi) >= room
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if total(mid) < room else (lo, mid)
    w = hi * weight
    w = np.where(heavy, np.maximum(w, floor), w)
    return w * (room / w.sum())  # the bisection's last rounding


def leaf_arcs(h, leaves: np.ndarray, weight: np.ndarray, gap: float = 0.004, floor: float = 0.0) -> Arcs:
    """Arcs of ``leaves`` (pre-order) in proportion to weight ** ARC_POWER, the busiest at
    least ``floor`` (a share of the circle; `floored_shares`), a ``gap`` between leaves of
    different top-level groups; every ancestor spans its leaves."""
    n = len(h)
    top = h.ancestors()[1][leaves] if leaves.size else np.zeros(0, np.int32)
    breaks = np.concatenate([[0], (top[1:] != top[:-1]).astype(np.float64)]) if leaves.size else np.zeros(0)
    share = np.maximum(weight, 0.0) ** ARC_POWER + 1e-9
    gap = min(gap, MAX_GAPS / (breaks.sum() + 1))  # many packages: narrower gaps, not a ring of gaps
    room = 1.0 - gap * (breaks.sum() + 1)
    w = floored_shares(share, room, floor, MAX_FLOORED)
    f0 = 0.5 * gap + np.cumsum(w) - w + gap * np.cumsum(breaks)
    f1 = f0 + w
    F0 = np.full(n, np.inf)
    F1 = np.full(n, -np.inf)
    F0[leaves], F1[leaves] = f0, f1
    anc = h.ancestors()
    for d in range(anc.shape[0]):  # a few levels
        a = anc[d, leaves]
        ok = a >= 0
        np.minimum.at(F0, a[ok], f0[ok])
        np.maximum.at(F1, a[ok], f1[ok])
    shown = np.isfinite(F0)
    return Arcs(np.where(shown, F0, 0.0), np.where(shown, F1, 0.0), shown, leaves)


def angle_of(f) -> np.ndarray:
    """Angle (radians, counter-clockwise from +x in the figure's x-z plane) of circle share f."""
    return np.pi / 2 - 2.0 * np.pi * np.asarray(f, np.float64)


def leaf_depth(h, level_idx: int) -> int:
    return level_idx + 1


def bands(h, arcs: Arcs, level_idx: int) -> tuple:
    """(element ids, inner band, outer band) of every shown element's ring sector (bands
    counted outward from the circle, the leaves' band 0)."""
    from ..analysis.hierarchy import THREAD, THREADS

    dl = leaf_depth(h, level_idx)
    e = np.flatnonzero(arcs.shown & (h.depth > 0) & (h.depth <= dl))
    b = dl - h.depth[e]
    lo, hi = b.copy(), b.copy()
    k = h.kind[e]
    thr = k == THREAD
    lo[thr], hi[thr] = 0, max(dl - 2, 0)
    grp = k == THREADS
    lo[grp], hi[grp] = dl - 1, dl - 1
    keep = ~(grp & (dl < 2))
    return e[keep], lo[keep], hi[keep]


def band_radii(lo, hi, R: float, leaf_w: float, band_w: float, gap: float) -> tuple:
    r0 = R + gap + np.where(lo > 0, leaf_w + (lo - 1) * band_w, 0.0)
    r1 = R + gap + leaf_w + hi * band_w
    return r0, r1


def ring_layer(h, arcs: Arcs, level_idx: int, R: float, leaf_w: float, band_w: float, gap: float,
               rgb_slot: np.ndarray, materials: list, heights: np.ndarray, origin) -> tuple:
    """The extruded icicle ring (`SectorLayer`, upright in the front plane) and, per sector,
    (element, r0, r1, angle0, angle1) for the labels."""
    e, lo, hi = bands(h, arcs, level_idx)
    r0, r1 = band_radii(lo, hi, R, leaf_w, band_w, gap)
    pad = 0.0012
    th0 = angle_of(arcs.f1[e] - pad)  # clockwise: the arc's end has the smaller angle
    th1 = angle_of(arcs.f0[e] + pad)
    inset = 0.04 * band_w
    # local ring angles are the world angles mirrored (`layout.ring.FRONT`: local y → −z)
    angles = np.stack([-th1, -th0], axis=1).astype(np.float32)
    radii = np.stack([r0 + inset, r1 - inset], axis=1).astype(np.float32)
    hts = np.stack([np.zeros(e.size), heights[e]], axis=1).astype(np.float32)
    slot = rgb_slot[e].astype(np.int32)
    colors = np.ones((e.size, 4), np.float32)
    lay = SectorLayer("heb_ring", angles, radii, hts, colors, slot, materials,
                      attributes={"call_index": np.full(e.size, -1, np.int32), "element_index": e.astype(np.int32)},
                      centre=(0.0, 0.0), segment_deg=1.0, plane="front", origin=tuple(origin))
    return lay, (e, r0, r1, th0, th1, lo)


def control_points(h, arcs: Arcs, level_idx: int, R: float) -> tuple:
    """(x, z) of every element's control point in the inner radial tree."""
    dl = leaf_depth(h, level_idx)
    mid = angle_of(0.5 * (arcs.f0 + arcs.f1))
    rad = R * np.minimum(h.depth, dl) / dl
    from ..analysis.hierarchy import THREAD

    rad = np.where(h.kind == THREAD, R, rad)
    return rad * np.cos(mid), rad * np.sin(mid)


def bundle_curves(h, src, dst, cx, cz, beta: float, samples: int = SAMPLES) -> np.ndarray:
    """(m, samples, 3) float64 centre curves in the x-z plane (y = 0) of relations src → dst:
    the path leaf → … → LCA → … → leaf straightened by β (Eq. 1), as cubic B-splines
    (`kernels.bundle.bundled_curves`)."""
    src = np.asarray(src, np.int64)
    dst = np.asarray(dst, np.int64)
    m = src.size
    if m == 0:
        return np.zeros((0, samples, 3))
    lca = h.lca(src, dst).astype(np.int64)
    anc = h.ancestors()
    ca = h.parent[src].astype(np.int64)  # from the caller's parent up to the LCA
    below = anc[np.minimum(h.depth[lca] + 1, anc.shape[0] - 1), dst].astype(np.int64)  # LCA's child towards dst
    pb = h.parent[dst].astype(np.int64)
    cb = np.where(pb == lca, -1, pb)
    kp = h.parent.astype(np.int64)
    x = np.ascontiguousarray(cx, np.float64)
    y = np.zeros_like(x)
    z = np.ascontiguousarray(cz, np.float64)
    ea = np.stack([x[src], y[src], z[src]], axis=1)
    eb = np.stack([x[dst], y[dst], z[dst]], axis=1)
    return bundled_curves(ca, cb, lca, below, kp, kp, x, y, z, x, y, z, ea, eb, float(beta), int(samples))


#: with more relations than this, only the heaviest are in colour (`coloured_pairs`)
COLOUR_ALL_PAIRS = 200
#: ... and at least this many of them
MIN_COLOURED_PAIRS = 100


def coloured_pairs(count: np.ndarray, share: float) -> np.ndarray:
    """Which relations keep their colour (bool per relation): all when there are at most
    `COLOUR_ALL_PAIRS` or ``share`` >= 1, else the heaviest (ties by order) whose calls reach
    ``share`` of all, and at least `MIN_COLOURED_PAIRS`.  Calls per relation are heavy-tailed
    (the 95 % of a jedi + lark trace's 3.99 M calls ran along 144 of its 2,824 module pairs,
    a thread pool of four libraries' along 257 of 3,853): all in colour, the thin ones made a
    hairball of floor-width tubes that buried the bundles carrying the calls.  Holten draws
    light edges transparent for the same reason (Sec. 4.3: alpha by length); the pale tubes
    stay as context, behind the coloured ones (`tube_layer`'s ``back``)."""
    count = np.asarray(count, np.float64)
    m = count.size
    if m <= COLOUR_ALL_PAIRS or share >= 1.0:
        return np.ones(m, bool)
    order = np.argsort(-count, kind="stable")
    reach = np.cumsum(count[order]) / max(count.sum(), 1e-300)
    k = max(int(np.searchsorted(reach, share, side="left")) + 1, MIN_COLOURED_PAIRS)
    out = np.zeros(m, bool)
    out[order[:min(k, m)]] = True
    return out


def tube_layer(curves: np.ndarray, radius: np.ndarray, slot_of_step: np.ndarray, materials: list,
               toward_camera: float, attributes: dict, name: str = "heb_tubes", back=None) -> TubeLayer:
    """The relations' tubes: curve k cut into `GRADIENT_STEPS` pieces (k·steps + j), piece j
    in material ``slot_of_step[k, j]``; the curve comes ``toward_camera`` closer along its
    length (its callee end in front: minimum blending's equivalent, module docstring).
    ``back`` (bool per curve): these lie a further ``toward_camera`` away, behind every other."""
    m, s = curves.shape[:2]
    steps = GRADIENT_STEPS
    per = (s - 1) // steps
    c = curves.copy()
    c[:, :, 1] -= toward_camera * np.linspace(0.0, 1.0, s)[None, :]
    if back is not None:
        c[np.asarray(back, bool), :, 1] += 1.05 * toward_camera
    idx = np.arange(steps)[:, None] * per + np.arange(per + 1)[None, :]  # (steps, per+1) samples
    centres = c[:, idx, :].reshape(m * steps, per + 1, 3).astype(np.float32)
    half = np.repeat(radius.astype(np.float32), steps)[:, None] * np.ones((1, per + 1), np.float32)
    mi = slot_of_step.reshape(-1).astype(np.int32)
    attrs = {k: np.repeat(v, steps) for k, v in attributes.items()}
    attrs["match_index"] = np.repeat(np.arange(m, dtype=np.int32), steps)
    return TubeLayer(name, centres, half, half.copy(), np.ones((m * steps, 4), np.float32), mi, materials,
                     attributes=attrs, sides=8, face_colors=False, cross_section="normal")


#: a thread's name is written only where this many label sizes of it fit
MIN_THREAD_NAME_EM = 3.0


def fit_element(h, e: int, name: str, width_em: float) -> str:
    """Element ``e``'s ``name`` in ``width_em`` label sizes ('' when it does not fit): a
    thread's by `text.fit_thread_label` ("thread 31…36", "Thread-1": never the "…8)" of a
    dotted name's cut), any other's by `text.name_candidates`."""
    if int(h.kind[e]) == THREAD:
        return fit_thread_label(name, width_em) if width_em >= MIN_THREAD_NAME_EM else ""
    return fit_text(name_candidates(name), width_em)


def band_label(h, e: int, leaf: bool) -> str | None:
    """The name a band's element shows (`element_label`), None where it would only repeat what
    the band outside it says: a placeholder whose parent is the same placeholder (the module
    '(no module)' in the package '(no module)'), '(no class)' outside the leaves' band (it
    stands there for the names of no module; inside, '(no module)' above says it), and an
    element outside the leaves' band whose only child, drawn inside it, bears its name (the
    package ``prog`` of a C file's one module ``prog``, Go's package ``main`` of its module
    ``main``).  A C program's or a browser's functions have no module: their three bands
    read '(no module)', '(no module)', '(no class)' on the ring and on the sequence view's icicle."""
    name = element_label(h, e)
    if name is None:
        return None
    if name.startswith("("):
        if name == UNQUALIFIED and not leaf:
            return None
        parent = int(h.parent[e])
        return None if parent >= 0 and element_label(h, parent) == name else name
    child = e + 1
    if not leaf and child < len(h.names) and int(h.parent[child]) == e and int(h.end[child]) == int(h.end[e]) \
            and element_label(h, child) == name:
        return None
    return name


def ring_labels(h, sect, px_per_unit: float, tpx: float, to_world, size_world: float, max_labels: int) -> LabelSet:
    """Names on the ring's sectors that hold them at ``tpx`` pixels: along the arc in the
    outer bands, radially in the leaves' band (reading outward on the right, inward on the
    left); widest first, at most ``max_labels``."""
    e, r0, r1, th0, th1, lo = sect
    texts, anchors, rots, els = [], [], [], []
    span = np.abs(th1 - th0)
    order = np.argsort(-(span * (r0 + r1)))
    for k in order:
        if len(texts) >= max_labels:
            break
        name = band_label(h, int(e[k]), lo[k] == 0)
        if name is None:
            continue
        mid = 0.5 * (th0[k] + th1[k])
        rm = 0.5 * (r0[k] + r1[k])
        depth_px = (r1[k] - r0[k]) * px_per_unit
        arc_px = span[k] * rm * px_per_unit
        along = mid - np.pi / 2 if np.sin(mid) >= 0 else mid + np.pi / 2  # text along the arc
        if lo[k] == 0:  # radial text: the band's depth is its room, the arc's width its height
            if arc_px < 1.0 * tpx:  # one line of text: ascent + descent = 0.92 em
                continue
            text = fit_element(h, int(e[k]), name, (depth_px - 0.5 * tpx) / tpx)
            base = mid if np.cos(mid) >= -1e-9 else mid + np.pi
            if not text and depth_px >= 1.1 * tpx:  # a wide leaf whose name is longer than the band is deep
                # along it: a straight line tangent at the band's middle radius, its ends within the
                # leaf's angles and, drifting outwards (radius √(rm² + d²)), inside the band's outer edge
                edge = r1[k] - 0.6 * tpx / px_per_unit
                half = min(rm * np.tan(min(0.5 * span[k], 1.2)), np.sqrt(max(edge * edge - rm * rm, 0.0)))
                text = fit_element(h, int(e[k]), name, (2.0 * half * px_per_unit - 0.8 * tpx) / tpx)
                base = along
        else:
            if depth_px < 1.1 * tpx:
                continue
            text = fit_element(h, int(e[k]), name, (arc_px - 0.8 * tpx) / tpx)
            base = along
        if not text:
            continue
        up = base + np.pi / 2
        centre = np.array([rm * np.cos(mid), 0.0, rm * np.sin(mid)])
        shift = 0.5 * (ASCENT - DESCENT) * size_world  # the baseline below the text's middle
        anchor = centre - shift * np.array([np.cos(up), 0.0, np.sin(up)])
        texts.append(text)
        els.append(int(e[k]))
        anchors.append(to_world(anchor) - np.array([0.0, 0.35 * size_world, 0.0]))  # in front of the face
        rots.append((np.pi / 2, -base, 0.0))
    n = len(texts)
    return LabelSet(texts, np.asarray(anchors, np.float32).reshape(n, 3), np.full(n, size_world, np.float32),
                    ["TV3D_text_dark"] * n, np.ones(n, np.uint8), ["element"] * n, np.full(n, -1, np.int32),
                    np.asarray(rots, np.float32).reshape(n, 3), ["world"] * n,
                    {"element_index": np.asarray(els, np.int32).reshape(n)})


__all__ = ["Arcs", "leaf_arcs", "fit_element", "band_label", "floored_shares", "ring_layer", "control_points", "bundle_curves", "tube_layer", "ring_labels",
           "gradient_rgb", "ASCENT", "DESCENT"]
