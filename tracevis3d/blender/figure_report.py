"""What a rendered figure shows, measured on the scene and the image (bpy + numpy only).

Used by the figure tests and by bench/bench_figures.py (also on scenes built by older
versions, so it reads only what every version writes: FONT objects with a ``tv3d_kind``
property in the "TraceVis3D" collection, and the scene camera).

- `label_pixel_boxes`: every label's glyphs, evaluated and projected through the camera:
  pixel bounding box and text size (the em, the height Blender's ``size`` spans);
- `figure_report`: labels on the icicle (count, smallest text in px), the grey share of the
  icicle's pixels, and the empty margin on each side of the image;
- `view_measures`: what every view is measured by: names of calls or groups of calls
  (`NAME_KINDS`) whose projected text is at least `READABLE_PX` high, the share of the
  frame's `EMPTY_CELL_PX` cells with nothing drawn, and the widest empty margin.
"""
from __future__ import annotations

import numpy as np

#: label kinds that name calls (as opposed to legend, axis, lane and title texts)
CALL_LABEL_KINDS = ("call", "run", "row", "group", "cluster", "fold")
#: label kinds that name a call or a group of calls (`view_measures`; "cluster" is the
#: kind older versions gave the names of sub-pixel clusters)
NAME_KINDS = ("call", "run", "row", "group", "cluster")
#: a name counts as readable from this projected text size (the em) up, in pixels at 1080 lines
READABLE_PX = 14.0
#: the frame is cut into cells this many pixels wide (at 1080 lines) to measure empty space
EMPTY_CELL_PX = 40
#: a pixel differs from the white page by more than this → something is drawn there
BACKGROUND_TOLERANCE = 0.06
#: OKLab chroma below this counts as grey
GREY_CHROMA = 0.03
BACKDROP_L = 0.9  # a backdrop's light achromatic pixels (OKLab L above this) are page


def project_points(points, scene=None) -> np.ndarray:
    """Pixel coordinates (x right, y down) of world points through the scene camera."""
    import bpy
    from bpy_extras.object_utils import world_to_camera_view
    from mathutils import Vector

    scene = scene or bpy.context.scene
    w = scene.render.resolution_x * scene.render.resolution_percentage / 100.0
    h = scene.render.resolution_y * scene.render.resolution_percentage / 100.0
    out = np.empty((len(points), 2))
    for k, p in enumerate(points):  # a few thousand points at most (label corners)
        v = world_to_camera_view(scene, scene.camera, p if isinstance(p, Vector) else Vector(tuple(map(float, p))))
        out[k] = (v.x * w, (1.0 - v.y) * h)
    return out


def label_pixel_boxes(collection: str = "TraceVis3D", scene=None) -> list:
    """Per label object shown in renders, in build order: (kind, text, x0, y0, x1, y1, em_px).

    The box bounds the evaluated glyphs (corners of the text's local bounding box, which
    Blender computes from the glyphs), projected through the scene camera; ``em_px`` is
    the projected length of the text size along the text's up axis.
    """
    import bpy
    from mathutils import Vector

    scene = scene or bpy.context.scene
    coll = bpy.data.collections.get(collection)
    if coll is None:
        return []
    dg = bpy.context.evaluated_depsgraph_get()

    def order(ob):
        tail = ob.name.rsplit("_", 1)[-1]
        return int(tail) if tail.isdigit() else 0

    out = []
    for ob in sorted((o for o in coll.objects if o.type == "FONT" and not o.hide_render), key=order):
        ev = ob.evaluated_get(dg)
        m = ob.matrix_world
        corners = [m @ Vector(c) for c in ev.bound_box]
        p = project_points(corners, scene)
        size = float(ob.data.size)
        a, b = project_points([m @ Vector((0.0, 0.0, 0.0)), m @ Vector((0.0, size, 0.0))], scene)
        kind = str(ob.get("tv3d_kind", ""))
        if not kind and ob.name.startswith("TV3D_live_label_"):  # versions that did not tag the live names
            kind = "call"
        out.append((kind, ob.data.body, float(p[:, 0].min()), float(p[:, 1].min()),
                    float(p[:, 0].max()), float(p[:, 1].max()), float(np.hypot(*(a - b)))))
    return out


def _oklab(rgb_srgb: np.ndarray) -> np.ndarray:
    # the matrices of `tracevis3d.layout.palette`, repeated on purpose: this module is also
    # loaded on its own (by file path) to measure figures made by older versions
    c = np.clip(rgb_srgb, 0.0, 1.0)
    lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    m1 = np.array([[0.4122214708, 0.5363325363, 0.0514459929],
                   [0.2119034982, 0.6806995451, 0.1073969566],
                   [0.0883024619, 0.2817188376, 0.6299787005]])
    m2 = np.array([[0.2104542553, 0.7936177850, -0.0040720468],
                   [1.9779984951, -2.4285922050, 0.4505937099],
                   [0.0259040371, 0.7827717662, -0.8086757660]])
    return np.cbrt(lin @ m1.T) @ m2.T


def load_image(path, channels: int = 3) -> np.ndarray:
    """(h, w, channels) stored (sRGB) floats of an image file, row 0 at the top."""
    import bpy

    img = bpy.data.images.load(str(path), check_existing=False)
    try:
        w, h = img.size
        a = np.empty(w * h * 4, np.float32)
        img.pixels.foreach_get(a)
        return a.reshape(h, w, 4)[::-1, :, :channels].copy()
    finally:
        bpy.data.images.remove(img)


def backdrop_rects(meta: dict) -> list:
    """The pixel rectangles of a figure's backdrops (its detail inset's panel), from its
    SceneSpec ``meta``: for `figure_report`'s ``backdrops``."""
    inset = meta.get("inset") if isinstance(meta, dict) else None
    return [tuple(inset["rect"])] if inset and inset.get("rect") is not None else []


def figure_report(image_path, collection: str = "TraceVis3D", scene=None, content_rect=None,
                  backdrops=None) -> dict:
    """Measure a rendered figure (see module doc).

    ``content_rect`` (x0, y0, x1, y1 pixels) limits the grey share to the icicle's area;
    by default the area left of the legend column (the leftmost 80 %) below the title.
    The icicle's pixels are those that differ from the page and are neither near-black
    nor near-white text; grey ones have OKLab chroma below `GREY_CHROMA`.  ``backdrops``
    (`backdrop_rects`): rectangles whose light achromatic pixels (OKLab L above
    `BACKDROP_L`: the inset's panel, lit by Workbench to ~0.9) are page, not icicle.
    """
    img = load_image(image_path)
    h, w = img.shape[:2]
    _, margins = page_margins(img)
    x0, y0, x1, y1 = content_rect if content_rect is not None else (0, int(0.06 * h), int(0.8 * w), h)
    block = img[int(y0):int(y1), int(x0):int(x1)]
    region = block.reshape(-1, 3)
    lab = _oklab(region)
    on = (np.abs(region - 1.0).max(-1) > BACKGROUND_TOLERANCE) & (lab[:, 0] > 0.35)
    chroma = np.hypot(lab[:, 1], lab[:, 2])
    if backdrops:  # the region's mask in rows and columns, a backdrop's rectangle cut out of it
        on2 = on.reshape(block.shape[:2])
        page = ((lab[:, 0] > BACKDROP_L) & (chroma < GREY_CHROMA)).reshape(on2.shape)
        for bx0, by0, bx1, by1 in backdrops:
            ys = slice(max(int(np.ceil(by0)) - int(y0), 0), max(int(np.ceil(by1)) - int(y0), 0))
            xs = slice(max(int(np.ceil(bx0)) - int(x0), 0), max(int(np.ceil(bx1)) - int(x0), 0))
            on2[ys, xs] &= ~page[ys, xs]
        on = on2.reshape(-1)
    grey_share = float((on & (chroma < GREY_CHROMA)).sum() / max(on.sum(), 1))
    boxes = label_pixel_boxes(collection, scene)
    call_boxes = [b for b in boxes if b[0] in CALL_LABEL_KINDS]
    inside = [b for b in call_boxes if b[2] >= 0 and b[3] >= 0 and b[4] <= w and b[5] <= h]
    return {
        "labels": len(inside),
        "label_kinds": {k: sum(1 for b in inside if b[0] == k) for k in CALL_LABEL_KINDS},
        "min_label_px": float(min((b[6] for b in inside), default=float("nan"))),
        "min_label_glyph_px": float(min((b[5] - b[3] for b in inside), default=float("nan"))),
        "all_texts_min_px": float(min((b[6] for b in boxes), default=float("nan"))),
        "grey_share": grey_share,
        "margins": margins,
        "max_margin": float(max(margins.values())),
        "size": (w, h),
    }


def page_margins(img: np.ndarray) -> tuple:
    """``(drawn, margins)``: the pixels that differ from the white page by more than
    `BACKGROUND_TOLERANCE`, and the blank share of the image's width (left, right) and
    height (top, bottom) outside their bounding box (1.0 each for a blank image)."""
    h, w = img.shape[:2]
    drawn = np.abs(img - 1.0).max(-1) > BACKGROUND_TOLERANCE
    rows, cols = np.flatnonzero(drawn.any(1)), np.flatnonzero(drawn.any(0))
    if rows.size:
        margins = {"left": cols[0] / w, "right": (w - 1 - cols[-1]) / w, "top": rows[0] / h,
                   "bottom": (h - 1 - rows[-1]) / h}
    else:
        margins = {"left": 1.0, "right": 1.0, "top": 1.0, "bottom": 1.0}
    return drawn, margins


def empty_cell_share(img: np.ndarray, cell_px: int = EMPTY_CELL_PX) -> float:
    """Share of the image's ``cell_px`` × ``cell_px`` cells (scaled with the image height
    from 1080 lines; partial cells at the right and bottom edges count) in which no pixel
    differs from the white page by more than `BACKGROUND_TOLERANCE`."""
    h, w = img.shape[:2]
    c = max(int(round(cell_px * h / 1080.0)), 1)
    drawn = np.abs(img - 1.0).max(-1) > BACKGROUND_TOLERANCE
    ny, nx = -(-h // c), -(-w // c)
    pad = np.zeros((ny * c, nx * c), np.bool_)
    pad[:h, :w] = drawn
    cells = pad.reshape(ny, c, nx, c).any(axis=(1, 3))
    return float(1.0 - cells.mean())


def view_measures(image_path, collection: str = "TraceVis3D", scene=None, boxes=None) -> dict:
    """Issue 19's measures of a rendered view (see module doc): ``names`` (readable names of
    calls inside the image), ``names_by_kind``, ``min_name_px``, ``empty_share``, ``margins``,
    ``max_margin``, ``drawn_share`` (pixels that are not page)."""
    img = load_image(image_path)
    h, w = img.shape[:2]
    if boxes is None:
        boxes = label_pixel_boxes(collection, scene)
    need = READABLE_PX * h / 1080.0 - 1e-3
    names = [b for b in boxes if b[0] in NAME_KINDS and b[6] >= need and b[2] >= -1 and b[3] >= -1
             and b[4] <= w + 1 and b[5] <= h + 1]
    drawn, margins = page_margins(img)
    return {
        "names": len(names),
        "names_by_kind": {k: sum(1 for b in names if b[0] == k) for k in NAME_KINDS},
        "min_name_px": float(min((b[6] for b in names), default=float("nan"))),
        "small_names": sum(1 for b in boxes if b[0] in NAME_KINDS and b[6] < need),
        "empty_share": empty_cell_share(img),
        "margins": margins,
        "max_margin": float(max(margins.values())),
        "drawn_share": float(drawn.mean()),
        "size": (w, h),
    }


#: the permutation colour mode's grey material (aligned matches): the others are moved ones
ALIGNED_TUBE_MATERIAL = "TV3D_tube_perm0"


def moved_tubes_visible(image_path, scratch_dir, tolerance: float = 0.08) -> float:
    """Share of the moved tubes' pixels that stay visible among the aligned ones, in a
    comparison scene rendered in the permutation colour mode (``image_path``: the full
    figure).  The scene is rendered three times more into ``scratch_dir``: with the aligned
    tubes' material fully transparent (M), with every tube material transparent (N) and
    with the moved tubes' materials transparent (A); the moved tubes' pixels are those where
    M differs from N less their one-pixel rims (anti-aliased with what lies behind), and the
    share of them where the full figure differs from A (the moved tube shows there: hidden,
    the pixel would be what the aligned tubes alone make it) is returned.  (Comparing the
    full figure with M instead counted a thin moved tube over a grey bundle as hidden: its
    inner pixel is still partly covered, so it blends with the grey behind it, not with the
    white of M; seen on a real docutils-pool pair, 0.74 by that rule, the red tubes plainly
    in front.)  1.0: no dense aligned bundle hides a moved tube; nan when nothing moved.
    Uses Workbench (material colours)."""
    import pathlib

    import bpy

    from .render import render_figure

    mats = [m for m in bpy.data.materials if m.name.startswith("TV3D_tube_")]
    aligned = bpy.data.materials.get(ALIGNED_TUBE_MATERIAL)
    if aligned is None or not mats:
        return float("nan")
    scene = bpy.context.scene
    res = (scene.render.resolution_x, scene.render.resolution_y)
    old = {m.name: tuple(m.diffuse_color) for m in mats}
    out = {}
    try:
        moved_mats = [m for m in mats if m != aligned]
        for tag, hidden in (("moved_only", [aligned]), ("no_tubes", mats), ("aligned_only", moved_mats)):
            for m in mats:
                m.diffuse_color = old[m.name]
            for m in hidden:
                m.diffuse_color = old[m.name][:3] + (0.0,)
            path = pathlib.Path(scratch_dir) / f"{tag}.png"
            render_figure(str(path), engine="workbench", resolution=res)
            out[tag] = load_image(path)
    finally:
        for m in mats:
            m.diffuse_color = old[m.name]
    full = load_image(image_path)
    moved = np.abs(out["moved_only"] - out["no_tubes"]).max(-1) > 2 * tolerance
    # the moved tubes' inside: their one-pixel rims blend (anti-aliasing) with whatever lies
    # behind them, aligned tubes included, and say nothing about what hides them
    inner = moved.copy()
    inner[1:-1, 1:-1] &= (moved[:-2, 1:-1] & moved[2:, 1:-1] & moved[1:-1, :-2] & moved[1:-1, 2:])
    inner[[0, -1], :] = False
    inner[:, [0, -1]] = False
    moved = inner
    if not moved.any():
        return float("nan")
    shows = np.abs(full - out["aligned_only"]).max(-1) > tolerance
    return float((moved & shows).sum() / moved.sum())
