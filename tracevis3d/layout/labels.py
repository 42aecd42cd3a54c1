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
"""
from __future__ import annotations

import numpy as np

from . import palette
from .camera import euler_xyz, project
from .spec import CameraSpec, LabelSet
from .text import ASCENT, DESCENT, fit_text

MIN_TEXT_PX = 14.0
PAD = 0.25  # horizontal padding on each side, in em
TEXT_DARK = (0.010, 0.010, 0.012, 1.0)
TEXT_LIGHT = (0.96, 0.96, 0.96, 1.0)
TEXT_UI = (0.02, 0.02, 0.025, 1.0)
TEXT_MUTED = (0.16, 0.16, 0.17, 1.0)


def text_px(params) -> float:
    """Label text size in pixels at the figure's resolution."""
    h = float(params.resolution[1])
    return max(float(params.label_px), MIN_TEXT_PX) * h / 1080.0


def text_basis(to_camera) -> tuple:
    """(baseline, up, normal) of text that faces ``to_camera`` with its baseline along +x."""
    c = np.asarray(to_camera, np.float64)
    x = np.array([1.0, 0.0, 0.0])
    n = c - (c @ x) * x
    nn = np.linalg.norm(n)
    n = n / nn if nn > 1e-9 else np.array([0.0, -1.0, 0.0])
    up = np.cross(n, x)
    return x, up, n


def contrast_text_material(rgb) -> list:
    """'TV3D_text_dark' or 'TV3D_text_light' per linear colour, whichever contrasts more."""
    lum = palette.relative_luminance(np.asarray(rgb, np.float64).reshape(-1, 3))
    ld = palette.relative_luminance(np.array([TEXT_DARK[:3]]))[0]
    ll = palette.relative_luminance(np.array([TEXT_LIGHT[:3]]))[0]
    c_dark = (lum + 0.05) / (ld + 0.05)
    c_light = (ll + 0.05) / (lum + 0.05)
    return ["TV3D_text_dark" if a >= b else "TV3D_text_light" for a, b in zip(c_dark, c_light)]


def place_facing_text(face_centre, cam: CameraSpec, size_world, to_camera):
    """Baseline anchors and Euler rotations of texts centred on face points, facing the camera.

    Each text is moved from its face point towards the camera along the view ray (so its
    projection stays centred on the face) until its top lies in front of the face plane
    (y < 0); the baseline sits (ASCENT - DESCENT)/2 em below the text's vertical middle.
    """
    p = np.asarray(face_centre, np.float64).reshape(-1, 3)
    s = np.asarray(size_world, np.float64).reshape(-1)
    bx, up, n = text_basis(to_camera)
    loc = np.asarray(cam.location, np.float64)
    if cam.orthographic:
        ray = np.tile(np.asarray(to_camera, np.float64) / np.linalg.norm(to_camera), (p.shape[0], 1))
    else:
        ray = loc - p
        ray /= np.linalg.norm(ray, axis=1, keepdims=True)
    half = 0.5 * (ASCENT + DESCENT) * s
    lean = max(up[1], 0.0) * half  # how far the top of the text reaches behind its middle
    step = (lean + 0.02 * s) / np.maximum(-ray[:, 1], 1e-3)
    centre = p + ray * step[:, None]
    anchor = centre - up[None, :] * ((ASCENT - DESCENT) / 2.0 * s)[:, None]
    rot = np.tile(euler_xyz(bx, up, n), (p.shape[0], 1))
    return anchor, rot


def face_rects(cam, resolution, x0, x1, z0, z1) -> np.ndarray:
    """Pixel bounding boxes (px0, py0, px1, py1) of front faces [x0,x1] × [z0,z1] at y = 0."""
    n = x0.size
    y = np.zeros(n)
    corners = np.concatenate([np.stack([x0, y, z0], 1), np.stack([x1, y, z0], 1),
                              np.stack([x0, y, z1], 1), np.stack([x1, y, z1], 1)])
    pr = project(cam, corners, resolution).reshape(4, n, 2)
    return np.stack([pr[..., 0].min(0), pr[..., 1].min(0), pr[..., 0].max(0), pr[..., 1].max(0)], 1)


def box_face_pixels(cam, resolution, x0, x1, z0, z1) -> tuple:
    """Projected width and height (pixels) of front faces (y = 0) [x0,x1] × [z0,z1]."""
    zc = 0.5 * (z0 + z1)
    xc = 0.5 * (x0 + x1)
    n = x0.size
    pts = np.concatenate([np.stack([x0, np.zeros(n), zc], 1), np.stack([x1, np.zeros(n), zc], 1),
                          np.stack([xc, np.zeros(n), z0], 1), np.stack([xc, np.zeros(n), z1], 1)])
    pr = project(cam, pts, resolution)
    wpx = np.abs(pr[n:2 * n, 0] - pr[:n, 0])
    hpx = np.abs(pr[2 * n:3 * n, 1] - pr[3 * n:, 1])
    return wpx, hpx


class LabelPlacer:
    """Collects labels from several candidate groups (boxes, runs, clusters, fold markers),
    never giving two overlapping faces a label each, up to ``max_labels``.  Every face
    lies in the front plane y = 0, so overlap is tested on the faces' (x, z) rectangles;
    a text is centred inside its face, so labels of disjoint faces never collide."""

    def __init__(self, cam, resolution, to_camera, size_px, max_labels, min_width_px=0.0):
        self.cam, self.res, self.to_cam = cam, resolution, to_camera
        self.size_px, self.max_labels = float(size_px), int(max_labels)
        self.min_w = max(self.size_px * (3 * 0.5 + 1.0 + 2 * PAD), float(min_width_px))
        self.need_h = self.size_px * (ASCENT + DESCENT) * 1.08
        self.rects = np.zeros((0, 4))
        self.sets = []

    @property
    def count(self) -> int:
        return int(self.rects.shape[0])

    def add(self, texts_of, x0, x1, z0, z1, rgb, call_index, kind, world_per_px) -> int:
        """Label the candidate faces [x0,x1] × [z0,z1] (world, y = 0) that can hold a name,
        widest first, skipping any whose face overlaps an already labelled face.
        ``texts_of(k)`` gives candidate k's texts, most informative first.  Returns the
        number of labels added."""
        n = x0.size
        room = self.max_labels - self.count
        if n == 0 or room <= 0:
            return 0
        rects = face_rects(self.cam, self.res, x0, x1, z0, z1)
        wpx, hpx = rects[:, 2] - rects[:, 0], rects[:, 3] - rects[:, 1]
        ok = np.flatnonzero((wpx >= self.min_w) & (hpx >= self.need_h))
        ok = ok[np.argsort(-wpx[ok], kind="stable")]
        texts, keep = [], []
        eps = 1e-6 * max(float(np.ptp(np.concatenate([x0, x1]))), 1e-9)
        world = np.stack([x0 + eps, z0 + eps, x1 - eps, z1 - eps], 1)  # touching faces do not overlap
        for k in ok:  # bounded: stops after `room` labels
            r = world[k]
            if self.rects.shape[0]:
                q = self.rects
                if np.any((q[:, 0] < r[2]) & (r[0] < q[:, 2]) & (q[:, 1] < r[3]) & (r[1] < q[:, 3])):
                    continue
            t = fit_text(texts_of(int(k)), float(wpx[k]) / self.size_px - 2 * PAD)
            if not t:
                continue
            texts.append(t)
            keep.append(int(k))
            self.rects = np.vstack([self.rects, r[None]])
            if len(keep) >= room:
                break
        if not keep:
            return 0
        keep = np.asarray(keep, np.int64)
        face = np.stack([0.5 * (x0[keep] + x1[keep]), np.zeros(keep.size), 0.5 * (z0[keep] + z1[keep])], 1)
        size_world = self.size_px * np.asarray(world_per_px, np.float64)[keep]
        anchor, rot = place_facing_text(face, self.cam, size_world, self.to_cam)
        mats = contrast_text_material(np.asarray(rgb)[keep])
        self.sets.append(LabelSet(texts, anchor.astype(np.float32), size_world.astype(np.float32), mats,
                                  np.ones(keep.size, np.uint8), [kind] * keep.size,
                                  np.asarray(call_index, np.int32)[keep], rot.astype(np.float32),
                                  ["world"] * keep.size))
        return int(keep.size)

    def labels(self) -> LabelSet:
        return LabelSet.concat(self.sets)
