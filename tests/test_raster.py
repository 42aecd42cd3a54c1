"""The coverage grid of the legend's search for room (`kernels.raster`) against brute force,
and the boxes' pixel rectangles against the camera's own projection."""
import numpy as np
import pytest

from tracevis3d.kernels.raster import covered_cells
from tracevis3d.layout.annotate import free_corner, occupancy_grid
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
