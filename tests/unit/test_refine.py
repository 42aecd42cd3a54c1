"""The bpy-free planning of refinement by view (`tracevis3d.layout.refine`, issue 70): the
view's matrix, the stretch a view sees, where a refined stretch goes and what a view needs."""
import numpy as np
import pytest

from tracevis3d.layout.camera import project
from tracevis3d.params.icicle import IcicleParams
from tracevis3d.layout.refine import (MIN_ZOOM, Overview, Placement, camera_matrix, frame_x_range, place_refinement,
                                      refine_decision, view_window, window_params)
from tracevis3d.layout.spec import CameraSpec

RES = (1920, 1080)


def _pixels(m, points):
    """Pixels (x right, y down) of world points through a world → clip matrix."""
    h = (m @ np.c_[points, np.ones(len(points))].T).T
    ndc = h[:, :2] / h[:, 3:]
    return np.c_[(ndc[:, 0] + 1) / 2 * RES[0], (1 - ndc[:, 1]) / 2 * RES[1]]


@pytest.mark.parametrize("ortho", [False, True])
def test_camera_matrix_projects_as_the_layout_does(ortho):
    cam = CameraSpec(location=(3.0, -40.0, 8.0), target=(10.0, 0.0, 2.0), lens_mm=100.0, shift_x=0.07,
                     shift_y=-0.03, orthographic=ortho, ortho_scale=25.0)
    pts = np.random.default_rng(1).uniform(0, 20, (50, 3))
    assert np.abs(_pixels(camera_matrix(cam, RES), pts) - project(cam, pts, RES)).max() < 1e-6


def _overview():
    return Overview.from_meta({"t0": 1000.0, "t1": 101000.0, "world_per_us": 20.0 / 100000.0}, 0.0, 10.0, RES[0])


def _looking_at(x0, x1, z=5.0):
    """A straight-on camera whose frame spans x0..x1 on the front plane."""
    lens, sensor = 50.0, 36.0
    d = (x1 - x0) / 2.0 / ((sensor / 2.0) / lens)
    xc = 0.5 * (x0 + x1)
    return CameraSpec(location=(xc, -d, z), target=(xc, 0.0, z), lens_mm=lens, sensor_width_mm=sensor,
                      clip_start=0.01, clip_end=1e4)


def test_view_window_of_the_overview():
    ov = _overview()
    left, right = frame_x_range(camera_matrix(_looking_at(4.0, 6.0), RES), 5.0)
    assert left == pytest.approx(4.0) and right == pytest.approx(6.0)
    (t0, t1), us_px = view_window(camera_matrix(_looking_at(4.0, 6.0), RES), RES, ov)
    assert t0 == pytest.approx(1000.0 + 4.0 / ov.world_per_us) and t1 == pytest.approx(1000.0 + 6.0 / ov.world_per_us)
    assert us_px == pytest.approx((t1 - t0) / RES[0])
    # a view wider than the figure is clipped to the trace
    (t0, t1), _ = view_window(camera_matrix(_looking_at(-10.0, 40.0), RES), RES, ov)
    assert (t0, t1) == (ov.t0, ov.t1)


def test_placement_splits_the_time_axis_and_maps_back():
    ov = _overview()
    window = (41000.0, 42000.0)
    meta = {"t0": window[0], "t1": window[1], "world_per_us": 20.0 / 1000.0, "lane_z": [0.0], "lane_levels": [8.0],
            "level_height": 1.0}
    cam = _looking_at(-2.0, 21.0, z=4.0)
    pl = place_refinement(ov, meta, cam, RES, window)
    xa, xb = ov.x_of(window)
    assert pl.xa == pytest.approx(xa) and pl.xb == pytest.approx(xb)
    assert pl.width >= 23.0 and pl.shift == pytest.approx(pl.width - (xb - xa))
    assert pl.offset[2] == pytest.approx(ov.z_hi - 8.0)  # the lanes' tops meet
    # left of the stretch: the overview's time; in it: the refined figure's; right: the overview's, moved
    assert pl.time_at(xa - 1.0) == pytest.approx(ov.t0 + (xa - 1.0) / ov.world_per_us)
    mid = pl.origin + 10.0  # 10 world units into the refined figure: 500 µs
    assert pl.time_at(mid) == pytest.approx(window[0] + 500.0)
    assert pl.time_at(pl.xa + pl.width + 1.0) == pytest.approx(ov.t0 + (pl.xa + pl.width + 1.0 - pl.shift)
                                                               / ov.world_per_us)
    assert Placement.from_dict(pl.to_dict()) == pl
    # the refined camera framing its figure sees the window again through the split
    moved = CameraSpec(location=tuple(np.add(cam.location, pl.offset)), target=tuple(np.add(cam.target, pl.offset)),
                       lens_mm=cam.lens_mm, clip_start=0.01, clip_end=1e4)
    (t0, t1), _ = view_window(camera_matrix(moved, RES), RES, ov, pl)
    assert t0 == pytest.approx(window[0]) and t1 == pytest.approx(window[1])


def test_refine_decision():
    ov = _overview()
    assert refine_decision((ov.t0, ov.t1), ov.us_per_px, ov) == ("overview", None)
    assert refine_decision((0, 1), ov.us_per_px / (0.9 * MIN_ZOOM), ov)[0] == "overview"
    w = (41000.0, 42000.0)
    assert refine_decision(w, 1000.0 / RES[0], ov) == ("refine", w)
    assert refine_decision((41050.0, 41950.0), 900.0 / RES[0], ov, current=w) == ("keep", w)
    assert refine_decision((41500.0, 41600.0), 100.0 / RES[0], ov, current=w) == ("refine", (41500.0, 41600.0))


def test_window_params():
    p = window_params(IcicleParams(), (10.0, 20.0), thread="MainThread")
    assert p.time_window == (10.0, 20.0) and p.threads == ["MainThread"]
    with pytest.raises(ValueError):
        window_params(IcicleParams(), (20.0, 10.0))
