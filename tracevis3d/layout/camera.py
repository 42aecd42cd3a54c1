"""Camera framing for layouts (bpy-free): fit a camera so given points fill the frame."""
from __future__ import annotations

import math

import numpy as np

from .spec import CameraSpec


def view_direction(azimuth_deg: float, elevation_deg: float) -> np.ndarray:
    """Unit vector from the target towards the camera.

    Azimuth 0 looks along +y (camera at -y, in front of the x-z plane), positive azimuth
    moves the camera towards +x; elevation lifts it above the x-y plane.
    """
    az = math.radians(azimuth_deg)
    el = math.radians(elevation_deg)
    return np.array([math.sin(az) * math.cos(el), -math.cos(az) * math.cos(el), math.sin(el)])


def camera_basis(to_camera: np.ndarray, up=(0.0, 0.0, 1.0)):
    """(right, up, forward) of a camera looking along ``-to_camera``."""
    f = -np.asarray(to_camera, np.float64)
    f /= np.linalg.norm(f)
    r = _cross3(f, np.asarray(up, np.float64))
    r /= np.linalg.norm(r)
    u = _cross3(r, f)
    return r, u, f


def _cross3(a, b) -> np.ndarray:
    """``np.cross`` of two 3-vectors, the same products and differences without its
    general-axis set-up (camera_basis runs hundreds of times per cone layout)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def half_tans(resolution, lens_mm, sensor_mm):
    """(tan of the half horizontal angle, tan of the half vertical angle) of a camera with Blender's sensor fit AUTO."""
    w, h = resolution
    t = (sensor_mm / 2.0) / lens_mm  # Blender's sensor fit AUTO: sensor spans the larger side
    if w >= h:
        return t, t * h / w
    return t * w / h, t


#: a perspective camera's near clip plane stands at this share of the depth of the nearest point
#: it is fitted to (`near_clip`).  The depth buffer resolves z² · 2⁻²⁴ / near at depth z
#: (`box_overlap.depth_step`): at 1e-3 of the distance, one step was ~3.5e-3 world units at the
#: pydoc figure's 58, more than the gaps between a trace's own neighbouring calls (2e-4 to 8e-4),
#: and which of two such faces a pixel showed followed the GPU's draw order, which changes from
#: render to render (issue 72: 4-15 pixels of a 1920x1080 frame).  At 1/8 of the nearest depth
#: (~0.1 of the distance) a step is ~100 times finer.  The heads-up display stands at four near
#: clips (`annotate.hud_layers`): half way to the nearest point, in front of the figure.
NEAR_CLIP_SHARE = 0.125


def near_clip(dist: float, nearest: float) -> float:
    """The near clip distance of a perspective camera ``dist`` from its target whose nearest
    geometry lies ``nearest`` deep along its view: `NEAR_CLIP_SHARE` × ``nearest``, never less
    than the old 1e-3 × ``dist`` (nor 1e-3)."""
    return float(max(NEAR_CLIP_SHARE * float(nearest), float(dist) * 1e-3, 1e-3))


def fit_camera(points, to_camera, resolution, orthographic=False, lens_mm=50.0,
               sensor_mm=36.0, margin=1.06) -> CameraSpec:
    """A camera looking along ``-to_camera`` that sees every point with a small margin
    (perspective: its near clip `near_clip` of the nearest point's depth).

    Orthographic: ``ortho_scale`` covers the projected extent (Blender's ortho scale is
    the larger image side).  Perspective: distance D from the projected centre such that
    for every point q (relative to the centre, in camera coordinates a, b, depth z):
    |a| <= tan_x (D + z) and |b| <= tan_y (D + z).
    """
    p = np.asarray(points, np.float64).reshape(-1, 3)
    r, u, f = camera_basis(to_camera)
    a, b, z = p @ r, p @ u, p @ f
    ca, cb = 0.5 * (a.min() + a.max()), 0.5 * (b.min() + b.max())
    cz = 0.5 * (z.min() + z.max())
    center = ca * r + cb * u + cz * f
    w, h = resolution
    span_a = max(a.max() - a.min(), 1e-6) * margin
    span_b = max(b.max() - b.min(), 1e-6) * margin
    extent = float(np.linalg.norm(p.max(0) - p.min(0))) + 1.0
    if orthographic:
        if w >= h:
            scale = max(span_a, span_b * w / h)
        else:
            scale = max(span_b, span_a * h / w)
        dist = extent * 2.0
        loc = center - f * dist
        return CameraSpec(tuple(loc), tuple(center), orthographic=True, ortho_scale=float(scale),
                          lens_mm=lens_mm, sensor_width_mm=sensor_mm,
                          clip_start=0.01, clip_end=float(dist + extent * 2))
    tx, ty = half_tans(resolution, lens_mm, sensor_mm)
    qa, qb, qz = (a - ca) * margin, (b - cb) * margin, z - cz
    dist = float(max(np.max(np.abs(qa) / tx - qz), np.max(np.abs(qb) / ty - qz), 1e-3))
    # refine: centre the projected bounding box and let its larger side fill the frame
    for _ in range(6):
        q = p - (center - f * dist)
        za = np.maximum(q @ f, 1e-9)
        na, nb = (q @ r) / (za * tx), (q @ u) / (za * ty)  # normalised image coords in [-1, 1]
        cna, cnb = 0.5 * (na.min() + na.max()), 0.5 * (nb.min() + nb.max())
        fill = max(na.max() - na.min(), nb.max() - nb.min()) / 2.0 * margin
        center = center + r * (cna * tx * dist) + u * (cnb * ty * dist)
        dist = dist * fill
    loc = center - f * dist
    nearest = float(((p - loc) @ f).min())  # the depth of the nearest point fitted
    return CameraSpec(tuple(loc), tuple(center), orthographic=False, lens_mm=lens_mm,
                      sensor_width_mm=sensor_mm, clip_start=near_clip(dist, nearest),
                      clip_end=float(dist + extent * 2))


def world_per_pixel(cam: CameraSpec, points, resolution) -> np.ndarray:
    """World length of one pixel (measured perpendicular to the view) at each point."""
    p = np.asarray(points, np.float64).reshape(-1, 3)
    w, h = resolution
    if cam.orthographic:
        return np.full(p.shape[0], cam.ortho_scale / max(w, h))
    tx, _ = half_tans(resolution, cam.lens_mm, cam.sensor_width_mm)
    f = np.asarray(cam.target, np.float64) - np.asarray(cam.location, np.float64)
    f /= np.linalg.norm(f)
    depth = (p - np.asarray(cam.location, np.float64)) @ f
    return 2.0 * tx * np.maximum(depth, 1e-9) / w


def project(cam: CameraSpec, points, resolution) -> np.ndarray:
    """Pixel coordinates (x right, y DOWN, origin top-left) of world points.

    With Blender's lens shift (s_x, s_y, in units of the larger image side M), a camera
    ray at normalised offset (a/z, b/z) lands at pixel
    (W/2 + (a/z - 2 s_x T)·M/(2T), H/2 - (b/z - 2 s_y T)·M/(2T)), T the half-tangent of
    the larger side (orthographic: a/z → a, 2T → ortho_scale).
    """
    from ..kernels.raster import project_points

    p = np.ascontiguousarray(np.asarray(points, np.float64).reshape(-1, 3))
    w, h = resolution
    m = max(w, h)
    loc = np.asarray(cam.location, np.float64)
    r, u, f = camera_basis(loc - np.asarray(cam.target, np.float64), cam.up)
    ortho_s = cam.ortho_scale / m if cam.orthographic else 0.0  # world per pixel
    two_t = 2.0 * ((cam.sensor_width_mm / 2.0) / cam.lens_mm)
    return project_points(p, loc, r, u, f, two_t, float(m), w / 2.0, h / 2.0, cam.shift_x * m, cam.shift_y * m,
                          float(ortho_s))


def box_rects(cam: CameraSpec, resolution, x0, x1, y1, z0, z1) -> tuple:
    """Pixel bounding rectangles (x0, y0, x1, y1 arrays) of boxes seen through ``cam``: the
    corners (x0|x1, 0, z0) and (x0|x1, y1, z1) (front face's lower edge, back top edge),
    projected as `project` does (`kernels.raster.box_pixel_rects`)."""
    from ..kernels.raster import box_pixel_rects

    f64 = lambda a: np.ascontiguousarray(a, np.float64)  # noqa: E731
    return box_pixel_rects(f64(x0), f64(x1), f64(y1), f64(z0), f64(z1), *box_rect_camera(cam, resolution))


def box_rect_camera(cam: CameraSpec, resolution) -> tuple:
    """The camera arguments of `kernels.raster.box_pixel_rects` (`box_rects`): (location,
    right, up, forward, k, half width, half height, shift x, shift y, orthographic)."""
    w, h = resolution
    m = max(w, h)
    to_cam = np.asarray(cam.location, np.float64) - np.asarray(cam.target, np.float64)
    r, u, f = camera_basis(to_cam, cam.up)
    k = m / cam.ortho_scale if cam.orthographic else m / (2.0 * (cam.sensor_width_mm / 2.0) / cam.lens_mm)
    return (np.asarray(cam.location, np.float64), r, u, f, float(k), w / 2.0, h / 2.0, cam.shift_x * m,
            cam.shift_y * m, bool(cam.orthographic))


def fit_camera_rect(points, to_camera, resolution, rect, orthographic=False, lens_mm=50.0,
                    sensor_mm=36.0) -> CameraSpec:
    """A camera that shows ``points`` exactly inside the pixel rectangle ``rect``.

    ``rect`` = (x0, y0, x1, y1) in pixels (y down).  The camera is fitted as if its whole
    frame were the rectangle (same angular size of a pixel: the lens scaled by M / M_rect,
    M the larger side), then Blender's lens shift moves the rectangle to its place in the
    full frame (shift_x = (W/2 - cx)/M, shift_y = (cy - H/2)/M).
    """
    w, h = resolution
    x0, y0, x1, y1 = (float(v) for v in rect)
    wc, hc = max(x1 - x0, 1.0), max(y1 - y0, 1.0)
    m, mc = float(max(w, h)), float(max(wc, hc))
    cam = fit_camera(points, to_camera, (wc, hc), orthographic, lens_mm * m / mc, sensor_mm, margin=1.0)
    cam.lens_mm = lens_mm
    if orthographic:
        cam.ortho_scale = cam.ortho_scale * m / mc
    cam.shift_x = (w / 2.0 - 0.5 * (x0 + x1)) / m
    cam.shift_y = (0.5 * (y0 + y1) - h / 2.0) / m
    return cam


def camera_local_from_pixels(cam: CameraSpec, pixels, resolution, distance: float) -> np.ndarray:
    """Camera-local points (x right, y up, z = -distance) that land on the given pixels."""
    px = np.asarray(pixels, np.float64).reshape(-1, 2)
    w, h = resolution
    m = max(w, h)
    if cam.orthographic:
        s = cam.ortho_scale / m
        x = (px[:, 0] - w / 2.0 + cam.shift_x * m) * s
        y = (h / 2.0 - px[:, 1] + cam.shift_y * m) * s
    else:
        t = (cam.sensor_width_mm / 2.0) / cam.lens_mm
        k = 2.0 * t * distance / m
        x = (px[:, 0] - w / 2.0 + cam.shift_x * m) * k
        y = (h / 2.0 - px[:, 1] + cam.shift_y * m) * k
    return np.stack([x, y, np.full(px.shape[0], -distance)], axis=1)


def camera_pixel_size(cam: CameraSpec, resolution, distance: float) -> float:
    """World length of one pixel on the camera-space plane at ``distance``."""
    m = max(resolution)
    if cam.orthographic:
        return cam.ortho_scale / m
    return 2.0 * (cam.sensor_width_mm / 2.0) / cam.lens_mm * distance / m


def camera_to_world(cam: CameraSpec, local) -> np.ndarray:
    """World points of camera-local points (for tests and picking)."""
    q = np.asarray(local, np.float64).reshape(-1, 3)
    to_cam = np.asarray(cam.location, np.float64) - np.asarray(cam.target, np.float64)
    r, u, f = camera_basis(to_cam, cam.up)
    # camera local: x = right, y = up, -z = forward
    return np.asarray(cam.location, np.float64) + q[:, :1] * r + q[:, 1:2] * u - q[:, 2:3] * f


def euler_xyz(basis_x, basis_y, basis_z) -> np.ndarray:
    """XYZ Euler angles (Blender's default order) of the rotation whose columns are the axes."""
    R = np.stack([np.asarray(basis_x, np.float64), np.asarray(basis_y, np.float64),
                  np.asarray(basis_z, np.float64)], axis=-1)
    # R = Rz(c) Ry(b) Rx(a)
    b = np.arcsin(np.clip(-R[..., 2, 0], -1.0, 1.0))
    a = np.arctan2(R[..., 2, 1], R[..., 2, 2])
    c = np.arctan2(R[..., 1, 0], R[..., 0, 0])
    return np.stack([a, b, c], axis=-1)


def centre_content(cam: CameraSpec, grid: np.ndarray, cell: float, rect, resolution, keep_out=None,
                   pad: float = 0.0) -> tuple:
    """Move what is drawn to the middle of ``rect`` with the camera's lens shift (a pure
    translation of the image: geometry and labels anchored in the world move together; a
    heads-up display is laid out from the camera afterwards).  ``grid``: an occupancy grid
    of ``cell``-pixel cells (`annotate.occupancy_grid`) of what is drawn; along each axis the
    drawn extent's centre is moved to the rectangle's centre, shortened (3/4, 1/2, 1/4 of
    the way, else not at all) while the moved cells would meet ``keep_out`` (x0, y0, x1, y1
    pixels, e.g. the legend placed beside the content) within ``pad`` pixels.  A framing
    fitted to bounding points leaves the labels beyond those points out: a figure whose
    names stand at one side only sat off-centre with a wide empty margin at the other.
    Changes ``cam`` in place; returns the (dx, dy) pixels moved (y down)."""
    grid = np.asarray(grid, np.bool_)
    rows, cols = np.flatnonzero(grid.any(1)), np.flatnonzero(grid.any(0))
    if not rows.size:
        return 0.0, 0.0
    x0, y0, x1, y1 = (float(v) for v in rect)
    want_x = 0.5 * ((x0 + x1) - (cols[0] + cols[-1] + 1) * cell)
    want_y = 0.5 * ((y0 + y1) - (rows[0] + rows[-1] + 1) * cell)
    ny, nx = grid.shape
    for f in (1.0, 0.75, 0.5, 0.25, 0.0):
        dx, dy = int(round(f * want_x / cell)), int(round(f * want_y / cell))
        if keep_out is None or (dx == 0 and dy == 0):
            break
        k0 = max(int(np.floor((keep_out[0] - pad) / cell)), 0)
        k1 = min(int(np.ceil((keep_out[2] + pad) / cell)), nx)
        r0 = max(int(np.floor((keep_out[1] - pad) / cell)), 0)
        r1 = min(int(np.ceil((keep_out[3] + pad) / cell)), ny)
        # the cells that would land in the keep-out region come from it moved back
        s0, s1, t0, t1 = max(k0 - dx, 0), min(k1 - dx, nx), max(r0 - dy, 0), min(r1 - dy, ny)
        if s1 <= s0 or t1 <= t0 or not grid[t0:t1, s0:s1].any():
            break
    m = float(max(resolution))
    cam.shift_x -= dx * cell / m
    cam.shift_y += dy * cell / m
    return dx * cell, dy * cell
