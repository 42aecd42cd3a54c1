"""The fly-through's refinement levels (`tracevis3d.layout.fly_levels`, issue 70 item 5):
nested windows, their count, the frames of each phase and the camera's zoom about a point."""
import math

import numpy as np
import pytest

from tracevis3d.layout import fly_levels


@pytest.mark.parametrize("span,window,levels", [
    ((0.0, 1e6), (500e3, 510e3), 4),       # 100x in the middle
    ((0.0, 1e6), (0.0, 2e3), 5),           # 500x at the start: the windows pushed right
    ((0.0, 1e6), (999e3, 1e6), 3),         # 1000x at the end: pushed left
    ((100.0, 300.0), (150.0, 200.0), 1),   # one level: the window itself
])
def test_windows_nest_narrow_geometrically_and_end_on_the_target(span, window, levels):
    ws = fly_levels.nested_windows(span, window, levels)
    assert len(ws) == levels and ws[-1] == pytest.approx(window)
    outer = span
    widths = []
    for a, b in ws:
        assert outer[0] - 1e-6 <= a < b <= outer[1] + 1e-6  # each inside the one before (and the figure)
        outer = (a, b)
        widths.append(b - a)
    full, last = span[1] - span[0], window[1] - window[0]
    expected = [full * (last / full) ** (j / levels) for j in range(1, levels + 1)]
    assert widths == pytest.approx(expected, rel=1e-9)


def test_bad_windows_are_refused_in_one_line():
    with pytest.raises(ValueError, match="outside the figure"):
        fly_levels.nested_windows((0.0, 100.0), (200.0, 300.0), 3)
    with pytest.raises(ValueError, match="not 2x narrower"):
        fly_levels.nested_windows((0.0, 100.0), (10.0, 80.0), 3)


def test_level_count_follows_the_magnification_within_its_bounds():
    assert fly_levels.level_count(100.0, 8, 300) == math.ceil(math.log(100) / math.log(fly_levels.LEVEL_STEP))
    assert fly_levels.level_count(4.0, 8, 300) == 1
    assert fly_levels.level_count(1e6, 4, 300) == 4       # the declared cap
    assert fly_levels.level_count(1e6, 8, 12) == 4        # 12 frames: 3 held, 9 for the approach, 2 a phase
    assert fly_levels.level_count(1e6, 8, 2) == 1


@pytest.mark.parametrize("n,k", [(12, 4), (300, 4), (30, 1), (9, 3), (2, 1)])
def test_phases_cover_every_frame_once_in_order(n, k):
    ph = fly_levels.phase_frames(n, k)
    assert len(ph) == k + 1 and ph[0][0] == 1 and ph[-1][1] == n
    frames = [f for a, b in ph for f in range(a, b + 1)]
    assert frames == list(range(1, n + 1))
    assert all(b >= a for a, b in ph)
    if n >= 2 * k + 1:
        assert all(b > a for a, b in ph[:-1])  # every approach has a start and an end frame


def test_zoom_about_brings_the_frame_onto_the_target():
    rng = np.random.default_rng(7)
    for _ in range(200):
        l, r = sorted(rng.uniform(-100, 100, 2))
        a = rng.uniform(l, r)
        b = a + rng.uniform(1e-3, 0.9) * (r - a)
        s, x = fly_levels.zoom_about((l, r), (a, b))
        assert x + (l - x) * s == pytest.approx(a, abs=1e-6 * (r - l))
        assert x + (r - x) * s == pytest.approx(b, abs=1e-6 * (r - l))
    assert fly_levels.zoom_about((0.0, 10.0), (2.0, 12.0)) == (1.0, 7.0)  # as wide: no closer


def test_scaled_pose_magnifies_about_the_point():
    loc, fwd, p = np.array([1.0, -10.0, 3.0]), np.array([0.0, 1.0, -0.2]), np.array([4.0, 0.0, 1.0])
    near = fly_levels.scaled_pose(loc, fwd, p, 0.25, orthographic=False)
    assert near == pytest.approx(p + 0.25 * (loc - p))
    side = fly_levels.scaled_pose(loc, fwd, p, 0.25, orthographic=True)
    f = fwd / np.linalg.norm(fwd)
    assert np.dot(side - loc, f) == pytest.approx(0.0, abs=1e-12)  # an orthographic view only moves across
    d = p - loc
    assert side - loc == pytest.approx(0.75 * (d - np.dot(d, f) * f))


def _busiest_brute(start, t0, t1, width):
    """Brute-force twin of `fly_levels.busiest_window`: count every window's starts one by one."""
    n = max(int((t1 - t0) // width), 1)
    best, best_k = -1, 0
    for k in range(n):
        a, b = t0 + k * width, t0 + (k + 1) * width
        last = k == n - 1
        c = sum(1 for s in start if a <= s < b or (last and s == b))
        if c > best:
            best, best_k = c, k
    return t0 + best_k * width, t0 + (best_k + 1) * width


@pytest.mark.timeout(60)
@pytest.mark.parametrize("seed", range(5))
def test_busiest_window_is_where_most_calls_start(seed):
    rng = np.random.default_rng(seed)
    t0, t1 = 100.0, 100.0 + rng.uniform(500.0, 5000.0)
    burst = rng.uniform(t0, t1)
    start = np.concatenate([rng.uniform(t0, t1, 300), rng.normal(burst, 5.0, 120).clip(t0, t1)])
    width = (t1 - t0) / rng.integers(3, 40)
    got = fly_levels.busiest_window(start, (t0, t1), width)
    assert got == pytest.approx(_busiest_brute(start.tolist(), t0, t1, width))
    assert got[0] - 1e-9 <= burst + 20.0 and got[1] + 1e-9 >= burst - 20.0  # the burst's window
    assert fly_levels.auto_window(start, (t0, t1), 128.0)[1] - fly_levels.auto_window(
        start, (t0, t1), 128.0)[0] == pytest.approx((t1 - t0) / 128.0)
    with pytest.raises(ValueError, match="no window"):
        fly_levels.busiest_window(start, (t0, t0), width)


@pytest.mark.timeout(60)
def test_zoom_window_takes_auto_on_the_command_line_and_in_the_panel():
    from tracevis3d.params.animation import ANIMATION, AUTO_WINDOW

    p = ANIMATION["zoom_window"]
    k = p.kind
    assert k.parse("auto") == AUTO_WINDOW and k.parse("1ms:2ms") == (1000.0, 2000.0)
    assert k.check("auto", p.name) == AUTO_WINDOW and k.from_json(k.to_json("auto")) == AUTO_WINDOW
    with pytest.raises(ValueError, match="or auto"):
        k.parse("soon")
    props: dict = {}
    for value in ((5.0, 9.0), AUTO_WINDOW, None):
        k.to_props(p, value, props.__setitem__)
        assert k.from_props(p, props.get) == value
    assert props["zoom_window_mode"] == "off" and [name for name, *_ in k.props(p)] == [
        "zoom_window_mode", "zoom_window_start", "zoom_window_end"]
