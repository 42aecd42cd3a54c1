"""The coverage grid of the legend's search for room (`kernels.raster`) against brute force,
and the boxes' pixel rectangles against the camera's own projection."""
import numpy as np
import pytest

from tracevis3d.kernels.raster import covered_cells, covered_cells_px
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
