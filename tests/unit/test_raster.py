"""The coverage grid of the legend's search for room (`kernels.raster`) against brute force,
and the boxes' pixel rectangles against the camera's own projection."""
import numpy as np
import pytest

from tracevis3d.kernels.raster import covered_cells, covered_cells_px
from tracevis3d.layout.annotate import free_corner, occupancy_grid, summed_area
from tracevis3d.layout.camera import box_rects, fit_camera_rect, project, view_direction


def _covered_twin(ny, nx, r0, c0, r1, c1):
    out = np.zeros((ny, nx), bool)
    for a, c, b, d in zip(r0, c0, r1, c1):
        out[max(a, 0):max(min(b, ny), 0), max(c, 0):max(min(d, nx), 0)] = True
    return out


@pytest.mark.parametrize("seed", range(8))
def test_covered_cells_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    ny, nx, n = int(rng.integers(1, 40)), int(rng.integers(1, 60)), int(rng.integers(0, 50))
    r0, c0 = rng.integers(-5, ny + 5, n), rng.integers(-5, nx + 5, n)
    r1, c1 = r0 + rng.integers(-2, 15, n), c0 + rng.integers(-2, 20, n)
    got = covered_cells(ny, nx, r0.astype(np.int64), c0.astype(np.int64), r1.astype(np.int64), c1.astype(np.int64))
    assert np.array_equal(got, _covered_twin(ny, nx, r0, c0, r1, c1))


@pytest.mark.parametrize("seed", range(8))
def test_covered_cells_of_pixel_rects_matches_brute_force(seed):
    """Pixel rectangles: cells floor(x0/cell) .. floor(x1/cell) (inclusive), NaN covers
    nothing, infinities are clipped."""
    rng = np.random.default_rng(100 + seed)
    ny, nx, n, cell = int(rng.integers(1, 30)), int(rng.integers(1, 50)), int(rng.integers(0, 60)), 8.0
    x0 = rng.uniform(-40, nx * cell + 40, n)
    y0 = rng.uniform(-40, ny * cell + 40, n)
    x1, y1 = x0 + rng.uniform(-10, 120, n), y0 + rng.uniform(-10, 80, n)
    if n:
        x0[0], y1[n // 2], x1[-1] = np.nan, np.inf, -np.inf
    got = covered_cells_px(ny, nx, cell, x0, y0, x1, y1)
    want = np.zeros((ny, nx), bool)
    for a0, b0, a1, b1 in zip(x0, y0, x1, y1):
        if np.isnan([a0, b0, a1, b1]).any():
            continue
        c0, r0 = int(np.floor(np.clip(a0, -1e9, 1e9) / cell)), int(np.floor(np.clip(b0, -1e9, 1e9) / cell))
        c1, r1 = int(np.floor(np.clip(a1, -1e9, 1e9) / cell)) + 1, int(np.floor(np.clip(b1, -1e9, 1e9) / cell)) + 1
        want |= _covered_twin(ny, nx, [r0], [c0], [r1], [c1])
    assert np.array_equal(got, want)


@pytest.mark.parametrize("ortho", [False, True])
def test_box_rects_bound_the_projected_corners(ortho):
    rng = np.random.default_rng(3)
    n = 300
    x0 = rng.uniform(0, 20, n)
    x1 = x0 + rng.uniform(0, 2, n)
    y1, z0 = rng.uniform(0, 3, n), rng.uniform(0, 10, n)
    z1 = z0 + rng.uniform(0, 1, n)
    corners = [np.stack([x, y, z], 1) for x in (x0, x1) for y, z in ((np.zeros(n), z0), (y1, z1))]
    cam = fit_camera_rect(np.concatenate(corners), view_direction(-5, 15), (1920, 1080), (30, 60, 1500, 1000),
                          ortho, 100.0)
    pr = np.stack([project(cam, c, (1920, 1080)) for c in corners])
    got = box_rects(cam, (1920, 1080), x0, x1, y1, z0, z1)
    want = (pr[..., 0].min(0), pr[..., 1].min(0), pr[..., 0].max(0), pr[..., 1].max(0))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, atol=1e-6)


def test_free_corner_finds_room_near_a_corner_and_never_on_content():
    res = (400, 200)
    busy = occupancy_grid(res, 8.0, rects=[(0, 0, 400, 60), (0, 60, 120, 200)])  # a top band, a left column
    at = free_corner(busy, 8.0, (0, 0, 400, 200), (100, 60), 4.0)
    assert at is not None
    x, y = at
    assert x >= 120 + 4 - 1e-9 and y >= 60 + 4 - 1e-9 and x + 100 <= 400 and y + 60 <= 200
    # the bottom right corner (the top right is taken), to a grid cell and the pad
    assert x + 100 >= 400 - 8 - 4 and y + 60 >= 200 - 8 - 4
    full = occupancy_grid(res, 8.0, rects=[(0, 0, 400, 200)])
    assert free_corner(full, 8.0, (0, 0, 400, 200), (100, 60), 4.0) is None


@pytest.mark.parametrize("seed", range(6))
def test_dominant_member_matches_its_sorting_twin(seed):
    """`kernels.dominant` against the (cluster, function) key sort it replaced: the heaviest
    function per cluster (ties: the smaller id), its last member, share and calls."""
    from tracevis3d.layout.geometry import dense_ranks, dominant_member

    rng = np.random.default_rng(seed)
    n, k, f = int(rng.integers(1, 400)), int(rng.integers(1, 30)), int(rng.integers(1, 12))
    of = rng.integers(-1, k, n)
    func = rng.integers(0, f, n)
    dur = rng.integers(0, 4, n).astype(float)  # small integers: ties happen
    calls = rng.integers(1, 5, n).astype(float)
    m = np.flatnonzero(of >= 0)
    key = of[m] * f + func[m]
    uk, inv = np.unique(key, return_inverse=True)
    tot = np.bincount(inv, weights=dur[m])
    kc = uk // f
    order = np.lexsort((-tot, kc))
    first = order[np.r_[True, kc[order][1:] != kc[order][:-1]]] if order.size else order
    member = np.empty(uk.size, np.int64)
    member[inv] = m
    dom, share, n_calls = np.zeros(k, np.int64), np.zeros(k), np.zeros(k)
    dom[kc[first]] = member[first]
    share[kc[first]] = tot[first] / np.maximum(np.bincount(kc, weights=tot, minlength=k)[kc[first]], 1e-300)
    n_calls[kc[first]] = np.bincount(inv, weights=calls[m])[first]
    got = dominant_member(of, func, dur, k, calls)
    assert np.array_equal(got[0], dom) and np.allclose(got[1], share) and np.allclose(got[2], n_calls)
    v = rng.integers(-50, 50, n) * int(rng.choice([1, 10 ** 9]))
    assert np.array_equal(dense_ranks(v), np.unique(v, return_inverse=True)[1])


def _brute_free_corner(grid, cell, rect, size, pad):
    """`annotate.free_corner` in numpy, every window at once (its form before the kernel)."""
    x0, y0, x1, y1 = rect
    w, h = size
    if w <= 0 or h <= 0 or w + 2 * pad > x1 - x0 or h + 2 * pad > y1 - y0:
        return None
    ny, nx = grid.shape
    sat = np.zeros((ny + 1, nx + 1), np.int64)
    sat[1:, 1:] = np.cumsum(np.cumsum(grid, 0), 1)
    ww, hh = int(np.ceil((w + 2 * pad) / cell)), int(np.ceil((h + 2 * pad) / cell))
    c_lo, c_hi = int(np.ceil(x0 / cell)), int(np.floor(x1 / cell)) - ww + 1
    r_lo, r_hi = int(np.ceil(y0 / cell)), int(np.floor(y1 / cell)) - hh + 1
    c_lo, r_lo = max(c_lo - 1, 0), max(r_lo - 1, 0)
    c_hi, r_hi = min(c_hi + 1, nx - ww), min(r_hi + 1, ny - hh)
    if c_hi < c_lo or r_hi < r_lo:
        return None
    r = np.arange(r_lo, r_hi + 1)[:, None]
    c = np.arange(c_lo, c_hi + 1)[None, :]
    busy = sat[r + hh, c + ww] - sat[r, c + ww] - sat[r + hh, c] + sat[r, c]
    fr, fc = np.nonzero(busy == 0)
    if fr.size == 0:
        return None
    bx = np.clip((c_lo + fc) * cell + pad, x0, x1 - w)
    by = np.clip((r_lo + fr) * cell + pad, y0, y1 - h)
    corners = ((x1 - w, y0, 0.0), (x1 - w, y1 - h, 0.05), (x0, y0, 0.1), (x0, y1 - h, 0.15))
    diag = float(np.hypot(x1 - x0, y1 - y0))
    score = np.min([np.hypot(bx - cx, by - cy) / diag + bias for cx, cy, bias in corners], axis=0)
    k = int(np.argmin(score))
    return float(bx[k]), float(by[k])


def test_free_corner_equals_brute_force():
    """`free_corner` (the `kernels.raster.nearest_free_window` sweep) is the numpy search
    over every window bit for bit, on random grids, rectangles, sizes and pads (also
    symmetric grids, where windows tie)."""
    rng = np.random.default_rng(5)
    for trial in range(400):
        ny, nx = int(rng.integers(5, 60)), int(rng.integers(5, 90))
        grid = rng.random((ny, nx)) < rng.uniform(0.0, 0.6)
        if trial % 5 == 0:
            grid[:] = False  # ties everywhere
        cell = float(rng.choice([4.0, 8.0, 7.5]))
        x0, y0 = float(rng.uniform(0, 40)), float(rng.uniform(0, 40))
        rect = (x0, y0, x0 + float(rng.uniform(10, nx * cell)), y0 + float(rng.uniform(10, ny * cell)))
        size = (float(rng.uniform(0, 150)), float(rng.uniform(0, 100)))
        pad = float(rng.uniform(0, 12))
        sat = summed_area(grid) if trial % 2 else None
        assert free_corner(grid, cell, rect, size, pad, sat) == _brute_free_corner(grid, cell, rect, size, pad), trial


def _project_twin(cam, points, res):
    """`layout.camera.project`'s formula in numpy (the version before its kernel)."""
    from tracevis3d.layout.camera import camera_basis

    p = np.asarray(points, np.float64).reshape(-1, 3)
    w, h = res
    m = max(w, h)
    r, u, f = camera_basis(np.asarray(cam.location) - np.asarray(cam.target), cam.up)
    q = p - np.asarray(cam.location, np.float64)
    a, b, z = q @ r, q @ u, q @ f
    if cam.orthographic:
        s = cam.ortho_scale / m
        px, py = a / s, b / s
    else:
        t = (cam.sensor_width_mm / 2.0) / cam.lens_mm
        px, py = a / (z * 2.0 * t) * m, b / (z * 2.0 * t) * m
    return np.stack([w / 2.0 + (px - cam.shift_x * m), h / 2.0 - (py - cam.shift_y * m)], axis=1)


@pytest.mark.parametrize("ortho", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_project_matches_its_numpy_twin(ortho, seed):
    """`kernels.raster.project_points` (through `camera.project`): the numpy formula, shifted
    cameras fitted to a part of the frame, points in front of and around the content."""
    rng = np.random.default_rng(seed)
    pts = rng.uniform(-5, 5, (500, 3)) * rng.uniform(0.1, 10, 3)
    res = (1920, 1080) if seed % 2 else (800, 1200)
    rect = (0.1 * res[0], 0.2 * res[1], 0.7 * res[0], 0.9 * res[1])
    cam = fit_camera_rect(pts, view_direction(rng.uniform(-60, 60), rng.uniform(5, 60)), res, rect, ortho)
    got = project(cam, pts, res)
    want = _project_twin(cam, pts, res)
    assert got.shape == (500, 2) and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9)
    assert project(cam, np.zeros((0, 3)), res).shape == (0, 2)
    assert np.allclose(project(cam, pts[3], res), want[3:4])  # one point, any shape
