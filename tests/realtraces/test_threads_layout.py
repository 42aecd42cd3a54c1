"""Thread view stages without Blender: ring geometry, thread colours, the sector mesh kernel
against a plain-Python twin, and the layout's parameters on the recorded program."""
from dataclasses import replace

import numpy as np
import pytest

import tracevis3d
from tracevis3d.kernels.ring import ribbon_mesh, sector_mesh
from tracevis3d.layout.corr_curves import object_colour_index
from tracevis3d.layout.ring import ARC_SPAN, ARC_START, FRONT, RingPlacement, neighbour_distinct, sector_angles
from tracevis3d.layout.threads import threads_layout
from tracevis3d.layout.threads_params import ThreadsParams


@pytest.mark.parametrize("n", list(range(1, 50)))
def test_no_two_neighbours_share_a_colour(n):
    for m in (3, 4, 7, 10):
        c = neighbour_distinct(n, m)
        assert c.min() >= 0 and c.max() < max(m, 3)
        if n > 1:
            assert all(c[k] != c[(k + 1) % n] for k in range(n) if (k + 1) % n != k)


@pytest.mark.parametrize("n, focus, scale", [(1, 0, 3.0), (2, 1, 2.5), (5, 3, 4.0), (43, 10, 2.5)])
def test_sector_angles(n, focus, scale):
    """Lanes in order left to right over the semicircle (SyncTrace IV-B), the focus wider."""
    a0, a1 = sector_angles(n, focus, scale)
    w = a1 - a0
    if n > 1:
        others = np.delete(w, focus)
        assert np.allclose(others, others[0]) and np.isclose(w[focus], scale * others[0])
    assert np.all(a0[1:] >= a1[:-1])  # in lane order, no overlap
    assert a0.min() >= ARC_START - 1e-9 and a1.max() <= ARC_START + ARC_SPAN + 1e-9
    assert np.isclose(a0[0], ARC_START) and np.isclose(a1[-1], ARC_START + ARC_SPAN)


def test_ring_placement_stands_the_semicircle_up_in_the_front_plane():
    """Local (x, y, h) → (x, h, −y): a rotation; the upper half-arc (local angles π..2π)
    lies above the centre, left to right, and bars go into the picture (+y)."""
    assert np.isclose(np.linalg.det(FRONT), 1.0)
    place = RingPlacement((5.0, 0.0, 2.0), 0.5)
    a = np.array([np.pi, 1.5 * np.pi, 2 * np.pi])
    w = place.to_world(np.stack([10 * np.cos(a), 10 * np.sin(a), np.zeros(3)], 1))
    assert np.allclose(w, [[0.0, 0.0, 2.0], [5.0, 0.0, 7.0], [10.0, 0.0, 2.0]])
    assert np.allclose(place.direction([[0.0, 0.0, 1.0]]), [[0.0, 1.0, 0.0]])
    # stretched: a half-ellipse 1.5 times as wide, as tall
    wide = RingPlacement((5.0, 0.0, 2.0), 0.5, 1.5).to_world(np.stack([10 * np.cos(a), 10 * np.sin(a), np.zeros(3)], 1))
    assert np.allclose(wide, [[-2.5, 0.0, 2.0], [5.0, 0.0, 7.0], [12.5, 0.0, 2.0]])


def _sector_twin(a0, a1, r0, r1, z0, z1, max_seg):
    """Plain Python: the corners of each cut of every sector."""
    out = []
    for i in range(len(a0)):
        k = min(max(int(np.ceil((a1[i] - a0[i]) / max_seg)), 1), 64)
        for j in range(k + 1):
            a = a0[i] + (a1[i] - a0[i]) * j / k
            for r, z in ((r0[i], z0[i]), (r1[i], z0[i]), (r1[i], z1[i]), (r0[i], z1[i])):
                out.append((r * np.cos(a), r * np.sin(a), z))
    return np.array(out)


def test_sector_mesh_matches_twin():
    rng = np.random.default_rng(4)
    n = 40
    a0 = rng.uniform(-3, 3, n)
    a1 = a0 + rng.uniform(1e-4, 2.0, n)
    r0 = rng.uniform(1, 5, n)
    r1 = r0 + rng.uniform(0.1, 1, n)
    z0 = np.zeros(n)
    z1 = rng.uniform(0.1, 2, n)
    v, q, owner = sector_mesh(0.0, 0.0, a0, a1, r0, r1, z0, z1, np.radians(5.0))
    np.testing.assert_allclose(v, _sector_twin(a0, a1, r0, r1, z0, z1, np.radians(5.0)), rtol=1e-5, atol=1e-5)
    assert q.min() >= 0 and q.max() < len(v)
    assert np.array_equal(np.unique(owner), np.arange(n))
    # every face's vertices belong to its own sector's block of vertices
    k = np.minimum(np.maximum(np.ceil((a1 - a0) / np.radians(5.0)), 1), 64).astype(int)
    first = np.r_[0, np.cumsum(4 * (k + 1))]
    assert np.all(q >= first[owner][:, None]) and np.all(q < first[owner + 1][:, None])
    lv, lq, lf = ribbon_mesh(np.zeros((2, 3, 3)), np.ones((2, 3, 3)))
    assert lv.shape == (12, 3) and lq.shape == (4, 4) and lf.tolist() == [0, 0, 1, 1]


@pytest.fixture(scope="module")
def program(sync_program_path):
    tr = tracevis3d.load(sync_program_path)
    return tr, tracevis3d.synchronisation(tr)


def test_parameters_of_the_layout(program):
    tr, sync = program
    base = threads_layout(tr, ThreadsParams(resolution=(640, 360)), sync)
    assert base.meta["lane_names"][base.meta["focus_lane"]] in ("consumer", "MainThread")
    order = threads_layout(tr, ThreadsParams(threads=["producer", "consumer", "MainThread"], resolution=(640, 360)),
                           sync)
    assert order.meta["lane_names"] == ["producer", "consumer", "MainThread"]
    hidden = threads_layout(tr, ThreadsParams(hide_threads=["MainThread"], focus="consumer", resolution=(640, 360)),
                            sync)
    assert hidden.meta["lane_names"] == ["consumer", "producer"]
    assert hidden.meta["n_curves"] == 6  # the six queue hand-offs; MainThread's wait is hidden
    t0, t1 = base.meta["t0"], base.meta["t1"]
    win = threads_layout(tr, ThreadsParams(time_window=(t0, t0 + 0.65 * (t1 - t0)), resolution=(640, 360)), sync)
    assert 0 < win.meta["n_curves"] < base.meta["n_curves"]
    flat = threads_layout(tr, ThreadsParams(fold="none", max_levels=2, zero_radius=7.0, resolution=(640, 360)), sync)
    assert flat.meta["zero_radius"] == 7.0 and max(flat.meta["lane_levels"]) <= 2.0 + 1e-6
    assert flat.meta["outer_radius"] < base.meta["outer_radius"]
    wide = threads_layout(tr, ThreadsParams(focus="producer", focus_scale=5.0, resolution=(640, 360)), sync)
    ang = np.array(wide.meta["lane_angles"])
    assert int(np.argmax(ang[:, 1] - ang[:, 0])) == wide.meta["lane_names"].index("producer")
    none = threads_layout(tr, ThreadsParams(max_curves=0, resolution=(640, 360)), sync)
    assert none.meta["n_curves"] == 0 and none.meta["n_compound"] >= 1
    with pytest.raises(ValueError, match="hidden"):
        threads_layout(tr, ThreadsParams(focus="producer", hide_threads=["producer"]), sync)
    with pytest.raises(ValueError, match="color_by"):
        threads_layout(tr, ThreadsParams(color_by="rainbow"), sync)


def test_object_mode_greys_objects_one_thread_waited_on(program):
    tr, sync = program
    objs = np.arange(len(sync.object_names))
    k = object_colour_index(sync, objs)
    waiters = {}
    for w, o in zip(sync.wait_call.tolist(), sync.object.tolist()):
        waiters.setdefault(o, set()).add(int(tr.thread[w]))
    for o in objs.tolist():
        assert (k[o] >= 0) == (len(waiters.get(o, ())) >= 2)
    spec = threads_layout(tr, ThreadsParams(color_by="object", resolution=(640, 360)), sync)
    from tracevis3d.layout.threads import GREY

    corr = spec.layer("corr")
    is_grey = np.all(np.isclose(corr.colors[:, :3], GREY, atol=1e-6), axis=1)
    for g, o in zip(is_grey.tolist(), corr.attributes["object"].tolist()):
        assert g == (k[o] < 0)


def test_highlighted_wait_colours_curves_by_shared_objects(program):
    tr, sync = program
    get = next(int(w) for w, p in zip(sync.wait_call, sync.primary) if p and tr.name(int(w)).startswith("Queue.get"))
    spec = threads_layout(tr, ThreadsParams(color_by="object", highlight_wait=get, resolution=(640, 360)), sync)
    from tracevis3d.layout.threads import GREY, HIGHLIGHT_RGB

    corr = spec.layer("corr")
    palette = np.vstack([HIGHLIGHT_RGB, GREY[None]])
    cls = np.argmin(np.abs(corr.colors[:, None, :3] - palette[None]).sum(-1), axis=1)
    mine = set(sync.objects_of(get))
    for c, w in zip(cls.tolist(), corr.attributes["wait_call"].tolist()):
        theirs = set(sync.objects_of(w))
        assert c == (0 if theirs == mine else 1 if theirs & mine else 2)
    assert (cls == 0).sum() >= 6  # the six queue waits
    assert (cls == 2).sum() >= 1  # MainThread's Condition.wait: another object


def test_without_hand_offs_the_busiest_thread_is_the_focus():
    """No thread waited on another (no hand-offs): the thread with the most calls becomes
    the straight icicle, not the first thread (the real PyTorch profile's first thread holds
    310 one-level calls; its figure named nothing)."""
    t = tracevis3d.synthetic(3000, threads=4, seed=11)
    calls = np.bincount(t.thread, minlength=t.n_threads)
    spec = threads_layout(t, ThreadsParams(resolution=(640, 360)).validate())
    assert spec.meta["n_curves"] == 0
    assert calls.argmax() != 0  # the test tells the two rules apart
    assert spec.meta["focus_thread"] == int(np.argmax(calls))



def test_focus_is_a_thread_with_calls_in_the_span_shown():
    """The span shown by default is where two threads run at once; a thread that ran only
    before it (catapult's tall_trace: its busiest thread, 3 calls, ends before fifteen
    one-call threads overlap) is not the focus: the view failed with "no calls to show".
    Focusing it by name says why it cannot be, and how to show it."""
    import json

    from tracevis3d.io import load_bytes

    ev = [{"ph": "X", "name": "early", "pid": 1, "tid": 1, "ts": 0, "dur": 7},
          {"ph": "X", "name": "sub", "pid": 1, "tid": 1, "ts": 1, "dur": 1},
          {"ph": "X", "name": "sub", "pid": 1, "tid": 1, "ts": 3, "dur": 3}]
    ev += [{"ph": "X", "name": "A", "pid": 1, "tid": k, "ts": 14, "dur": 8} for k in (2, 3, 4)]
    t = load_bytes(json.dumps(ev).encode(), source="early_thread.json", warn=False)
    spec = threads_layout(t, ThreadsParams(resolution=(640, 360)).validate())
    assert t.thread_names[spec.meta["focus_thread"]] != "1"
    with pytest.raises(ValueError, match=r"'1' has no calls in the span shown.*span 'all'"):
        threads_layout(t, ThreadsParams(resolution=(640, 360), focus="1").validate())
    spec = threads_layout(t, ThreadsParams(resolution=(640, 360), focus="1", window="all").validate())
    assert t.thread_names[spec.meta["focus_thread"]] == "1"

def test_thread_names_do_not_overlap_and_long_end_names_keep_the_ring_large():
    """Eight threads with long names (like the real PyTorch profile's "python3.8: thread
    3113936 (python3.8)"): every placed thread name lies inside the image, off the legend and
    off every other name; the focused thread is named; and the long names at the ends no
    longer shrink the semicircle (its room beside the ends is capped at SIDE_NAME_EM)."""
    t = tracevis3d.synthetic(4000, threads=8, seed=5)
    short = threads_layout(t, ThreadsParams(resolution=(1280, 720)).validate())
    t.thread_names = [f"python3.8: thread {3113936 + 977 * k} (python3.8)" for k in range(t.n_threads)]
    spec = threads_layout(t, ThreadsParams(resolution=(1280, 720)).validate())
    lab = spec.labels
    lanes = [j for j, k in enumerate(lab.kind) if k == "lane"]
    assert t.thread_names[spec.meta["focus_thread"]] in [lab.texts[j] for j in lanes]
    boxes = _label_boxes(spec, lanes)
    for a, b in enumerate(boxes):
        assert b[0] >= 0 and b[1] >= 0 and b[2] <= 1280 and b[3] <= 720, (lab.texts[lanes[a]], b)
        for c in boxes[a + 1:]:
            assert not (b[0] + 1 < c[2] and c[0] + 1 < b[2] and b[1] + 1 < c[3] and c[1] + 1 < b[3]), (b, c)
    # the semicircle is as large with long names as with short ones (within 15 %)
    assert _ring_px(spec) >= 0.85 * _ring_px(short), (_ring_px(spec), _ring_px(short))


def _label_boxes(spec, which) -> list:
    """Pixel boxes (x0, y0, x1, y1) of the labels ``which`` (upright text facing the camera)."""
    from tracevis3d.layout.camera import project
    from tracevis3d.layout.text import ASCENT, DESCENT, text_width

    lab = spec.labels
    px = project(spec.camera, lab.anchors[which].astype(np.float64), spec.resolution)
    # the size in pixels from two points one text size apart (the anchor's own depth)
    up = lab.anchors[which].astype(np.float64) + np.array([0.0, 0.0, 1.0]) * lab.sizes[which, None]
    h = np.abs(project(spec.camera, up, spec.resolution)[:, 1] - px[:, 1])
    boxes = []
    for i, j in enumerate(which):
        w = text_width(lab.texts[j]) * h[i]
        x0 = px[i, 0] - (w if lab.align[j] == 2 else 0.5 * w if lab.align[j] == 1 else 0.0)
        boxes.append((x0, px[i, 1] - ASCENT * h[i], x0 + w, px[i, 1] + DESCENT * h[i]))
    return boxes


def test_thread_names_stay_under_the_icicle(threads_trace_path):
    """The semicircle is sized by where its bars reach (a deep call rises only over its own
    angles, `ring_extent`), so it may come up to the icicle, and a name stands just outside
    the bars where it is (`lane_outline`): the threads' names stay under the icicle's time
    axis (a name once stood on the axis of the real sympy pool trace)."""
    # the synthetic ones put a name on the axis without the icicle's keep-out (checked)
    for t in (tracevis3d.load(threads_trace_path), tracevis3d.synthetic(20000, threads=3, seed=3),
              tracevis3d.synthetic(20000, threads=6, seed=2)):
        spec = threads_layout(t, ThreadsParams(resolution=(1280, 720)).validate())
        lab = spec.labels
        names = [j for j, m in enumerate(lab.material) if m.startswith("TV3D_lane_text")]
        axis = [j for j, k in enumerate(lab.kind) if k == "axis"]
        assert names and axis
        axis_bottom = max(b[3] for b in _label_boxes(spec, axis))
        for j, b in zip(names, _label_boxes(spec, names)):
            assert b[1] >= axis_bottom, (lab.texts[j], b, axis_bottom)


def _ring_px(spec) -> float:
    """Pixel width of the semicircle: its outer radius on both sides of its centre."""
    from tracevis3d.layout.camera import project
    m = spec.meta
    o, r = np.asarray(m["ring_origin"], np.float64), m["ring_scale"] * m["ring_stretch"] * m["outer_radius"]
    px = project(spec.camera, np.stack([o - [r, 0.0, 0.0], o + [r, 0.0, 0.0]]), spec.resolution)
    return float(px[1, 0] - px[0, 0])


def _drawn_bars(seed, n_lanes=3, n=400):
    """A ring of ``n_lanes`` lanes over [0, 1000] µs and random bars on it (the fields of
    `geometry.Drawn` that `lane_outline` and `ring_extent` read)."""
    from types import SimpleNamespace

    from tracevis3d.layout.ring import make_ring

    rng = np.random.default_rng(seed)
    ring = make_ring(n_lanes, np.full(n_lanes, 12.0), 1, 2.0, 9.0, 0.0, 1000.0)
    start = rng.uniform(-50.0, 1000.0, n)
    d = SimpleNamespace(lane=rng.integers(0, n_lanes, n), start=start, end=start + rng.exponential(60.0, n),
                        level_bottom=rng.integers(0, 12, n).astype(np.float64), level_height=rng.uniform(0.5, 1.0, n))
    return ring, d


@pytest.mark.parametrize("seed", range(4))
def test_lane_outline_matches_twin(seed):
    """Each lane's outline bin holds the largest outer radius of the bars that touch it (a
    bar over fractions [f0, f1] of its section touches bin j of B when f0 < (j+1)/B and
    f1 ≥ j/B), the zero circle where none does: brute force over bins and bars."""
    from tracevis3d.layout.ring import BAR_FILL
    from tracevis3d.layout.threads import lane_outline

    ring, d = _drawn_bars(seed)
    bins = 16
    got = lane_outline(ring, d, bins)
    for k in range(ring.a0.size):
        for j in range(bins):
            want = ring.zero_radius
            for i in range(d.lane.size):
                w = ring.a1[k] - ring.a0[k]
                f0 = (ring.angle(k, d.start[i]) - ring.a0[k]) / w
                f1 = (ring.angle(k, d.end[i]) - ring.a0[k]) / w
                if d.lane[i] == k and (f0 < (j + 1) / bins or j == bins - 1) and (f1 >= j / bins or j == 0):
                    want = max(want, ring.zero_radius + d.level_bottom[i] + BAR_FILL * d.level_height[i])
            assert got[k, j] == pytest.approx(want), (k, j)


@pytest.mark.parametrize("seed", range(4))
def test_ring_extent_of_the_drawn_bars_matches_sampling(seed):
    """The drawn semicircle's height, left and right reach (ring units from its centre) from
    the bars' outline: at least every bar's outer edge sampled densely over its own angles,
    and no more than the same sampling widened by one outline bin (the outline's grain)."""
    from tracevis3d.layout.ring import BAR_FILL
    from tracevis3d.layout.threads import lane_outline, ring_extent

    ring, d = _drawn_bars(seed)
    bins = 48
    up, left, right = ring_extent(ring, lane_outline(ring, d, bins))
    r = ring.zero_radius + d.level_bottom + BAR_FILL * d.level_height
    f = np.linspace(0.0, 1.0, 2001)

    def reach(widen):
        a0, a1 = ring.angle(d.lane, d.start), ring.angle(d.lane, d.end)
        step = widen * (ring.a1 - ring.a0)[d.lane] / bins
        a0, a1 = np.maximum(a0 - step, ring.a0[d.lane]), np.minimum(a1 + step, ring.a1[d.lane])
        a = a0[:, None] + f * (a1 - a0)[:, None]
        x, y = r[:, None] * np.cos(a), r[:, None] * np.sin(a)
        return [max(float(v), ring.zero_radius) for v in ((-y).max(), (-x).max(), x.max())]

    for got, lo, hi in zip((up, left, right), reach(0.0), reach(1.0)):
        assert lo - 1e-9 <= got <= hi + 1e-6


def test_a_ring_its_height_limits_is_widened_into_a_half_ellipse():
    """A semicircle is twice as wide as tall; under the icicle its block is wider than that,
    so the ring is stretched along x (`RingPlacement.stretch`, at most `MAX_STRETCH`): its
    bars drawn that many times as wide as the same bars unstretched, as tall, inside the image."""
    from tracevis3d.layout.camera import project
    from tracevis3d.layout.threads import MAX_STRETCH

    t = tracevis3d.synthetic(20000, threads=1, seed=3)
    spec = threads_layout(t, ThreadsParams(resolution=(1920, 1080)))
    stretch = spec.meta["ring_stretch"]
    assert 1.05 < stretch <= MAX_STRETCH
    ring = spec.layer("ring")
    a = np.linspace(ring.angles[:, 0], ring.angles[:, 1], 5).ravel()
    r = np.tile(ring.radii[:, 1], 5)
    local = np.stack([r * np.cos(a), r * np.sin(a), np.zeros_like(a)], 1)
    px = project(spec.camera, ring.placed(local), spec.resolution)
    flat = project(spec.camera, replace(ring, stretch=1.0).placed(local), spec.resolution)
    width, height = np.ptp(px[:, 0]), np.ptp(px[:, 1])
    assert width == pytest.approx(stretch * np.ptp(flat[:, 0]), rel=0.03)
    assert height == pytest.approx(np.ptp(flat[:, 1]), rel=0.03)
    assert px[:, 0].min() >= 0 and px[:, 0].max() <= spec.resolution[0]


@pytest.mark.parametrize("threads", [1, 4])
def test_the_rings_base_reaches_the_bottom_of_the_content(threads):
    """Under the icicle the ring stands on the bottom of the content rectangle: its lowest
    bars (the semicircle's ends) within 5 px of it, not 17 px above it (the block's bottom
    edge, seen a little from the side, stands higher under the narrower ring than at the
    block's corner that the frame fits)."""
    from tracevis3d.layout.camera import project

    t = tracevis3d.synthetic(20000, threads=threads, seed=3)
    spec = threads_layout(t, ThreadsParams(resolution=(1920, 1080)))
    ring = spec.layer("ring")
    a, r = np.repeat(ring.angles, 2, axis=1).ravel(), np.tile(ring.radii, 2).ravel()  # every bar's 4 corners
    local = np.stack([r * np.cos(a), r * np.sin(a), np.zeros_like(a)], 1)
    lowest = project(spec.camera, ring.placed(local), spec.resolution)[:, 1].max()
    bottom = spec.meta["content_rect"][3]
    assert bottom - 5.0 <= lowest <= bottom + 5.0, (lowest, bottom)


@pytest.mark.parametrize("zero_radius", [2.0, 9.0, 30.0])
def test_inner_radius_is_the_curves_room(zero_radius):
    """The inside of the ring is the hand-off curves' room: ``zero_radius`` whenever one is
    shown; without any, only the lane band's (`MIN_ZERO_RADIUS`), more where many lanes would
    leave level 0 a sliver of less than `LANE_ARC_LEVELS` along the arc; never above
    ``zero_radius``."""
    from tracevis3d.layout.ring import LANE_ARC_LEVELS, MIN_ZERO_RADIUS, inner_radius

    for lanes in (1, 4, 17, 43):
        assert inner_radius(zero_radius, 1, lanes) == zero_radius
        assert inner_radius(zero_radius, 500, lanes) == zero_radius
        z = inner_radius(zero_radius, 0, lanes)
        assert z <= zero_radius
        assert z == min(zero_radius, max(MIN_ZERO_RADIUS, LANE_ARC_LEVELS * lanes / ARC_SPAN))
        if z < zero_radius:  # each lane's level 0 still spans LANE_ARC_LEVELS (gaps aside)
            assert z * ARC_SPAN / lanes >= LANE_ARC_LEVELS - 1e-9


def test_a_ring_without_hand_offs_has_a_smaller_inside(program):
    """A trace without hand-offs draws no curves inside the ring, so its inside shrinks to the
    lane band's room (the bars take the radius it frees); one with hand-offs keeps the
    default inside for its curves."""
    from tracevis3d.layout.ring import MIN_ZERO_RADIUS

    tr, sync = program
    with_curves = threads_layout(tr, ThreadsParams(resolution=(1280, 720)), sync)
    assert with_curves.meta["n_curves"] > 0 and with_curves.meta["zero_radius"] == ThreadsParams().zero_radius
    alone = tracevis3d.synthetic(20000, threads=1, seed=3)
    spec = threads_layout(alone, ThreadsParams(resolution=(1920, 1080)))
    assert spec.meta["n_curves"] == 0 and spec.meta["zero_radius"] == MIN_ZERO_RADIUS


@pytest.mark.parametrize("names, focus, want_left, want_right", [
    (["MainThread"], 0, False, False),  # one thread: its name on top, the ring as wide as the frame
    (["MainThread", "worker"], 1, True, False),  # the wide focus section's middle is high on the arc
    (["a", "b", "c", "d"], 3, True, True),
    (["a", "b"], 0, False, True),
    (["a", "b", "c"], 1, True, True),
])
def test_side_room_only_for_names_beside_the_ends(names, focus, want_left, want_right):
    """Room beside the semicircle's ends is kept only on a side whose end thread's name is set
    beside the arc (its section's middle low on the arc, `SIDE_ALIGN_COS`), as long as
    that name (at most `SIDE_NAME_EM`)."""
    from tracevis3d.layout.text import text_width
    from tracevis3d.layout.threads import NAME_GAP_EM, SIDE_NAME_EM, side_name_room

    left, right = side_name_room(names, focus, 2.5)
    assert (left > 0) == want_left and (right > 0) == want_right
    for room, name in ((left, names[0]), (right, names[-1])):
        if room:
            assert room == pytest.approx(min(text_width(name) * 1.3 + NAME_GAP_EM, SIDE_NAME_EM))


def test_a_worker_process_thread_on_the_wall_says_which_process():
    """A trace of several processes whose threads share a name (each pool worker process
    has its "MainThread"): the wall, an icicle of the focused thread alone, and the legend's
    note name it with its process ("ForkPoolWorker-2: MainThread"); the name alone would be
    any of them.  A trace of one process keeps the bare thread name."""
    t = tracevis3d.synthetic(3000, threads=3, seed=11)
    t.process_names = ["MainProcess", "ForkPoolWorker-1", "ForkPoolWorker-2"]
    t.thread_names = ["MainThread"] * 3
    spec = threads_layout(t, ThreadsParams(resolution=(960, 540)).validate())
    focus = spec.meta["focus_thread"]
    want = f"{t.process_names[focus]}: MainThread"
    lanes = [x for x, k in zip(spec.labels.texts, spec.labels.kind) if k == "lane"]
    assert lanes.count(want) == 2, lanes  # its name on the ring and on the wall
    legend = " ".join(x for x, k in zip(spec.labels.texts, spec.labels.kind) if k == "legend")
    assert f"top: {want} as a straight icicle" in legend, legend
    t.process_names = ["MainProcess"] * 3
    t.thread_names = ["MainThread", "Thread-1", "Thread-2"]
    assert [t.thread_label(k, 1) for k in range(3)] == t.thread_names


def test_ring_names_drop_the_process_where_the_thread_alone_is_unique():
    """A pool of worker processes: "MainProcess: QueueFeederThread" found no room beside its
    narrow section and went under the base line, next to another process's section; its own
    name, unique among the lanes, fits there.  Every process's "MainThread" keeps its process."""
    from tracevis3d.params.icicle import IcicleParams
    from tracevis3d.layout.select import select_calls
    from tracevis3d.layout.threads import short_thread_names

    tr = tracevis3d.synthetic(2000, threads=4, seed=3)
    tr.thread_names = ["MainThread", "QueueFeederThread", "MainThread", "MainThread"]
    tr.process_names = ["MainProcess", "MainProcess", "ForkProcess-1", "ForkProcess-2"]
    tr.thread_pid = np.array([1, 1, 2, 3], np.int64)
    sel = select_calls(tr, IcicleParams())
    names = list(sel.lane_names)
    short = dict(zip(names, short_thread_names(sel, names)))
    assert short["MainProcess: QueueFeederThread"] == "QueueFeederThread"
    assert short["MainProcess: MainThread"] == "MainProcess: MainThread"
    assert short["ForkProcess-2: MainThread"] == "ForkProcess-2: MainThread"


def test_a_name_past_the_bars_has_a_leader_to_its_section():
    """A thread name placed past every bar of the ring (its section too narrow and crowded for
    it: the queue feeder of a process pool) gets a leader: a thin ribbon along its section's
    direction, from just outside the section's bars to just under the name, in its colour."""
    from tracevis3d.layout.threads import LEADER_PX, _name_leaders

    place = RingPlacement((1.0, 2.0, 3.0), 2.0)
    lay = _name_leaders([(1, 1.2, 3.0, 7.0), (0, 2.0, 5.0, 4.0)], place, 0.01, 3, np.eye(3))
    assert len(lay) == 1 and lay.material_index.tolist() == [1] and lay.materials[1] == "TV3D_lane_text01"
    mid = 0.5 * (lay.left[0] + lay.right[0])  # world points at the two ends
    local = (mid - np.asarray(place.origin)) / place.scale @ FRONT  # back to the ring's plane (FRONT is a rotation)
    assert np.allclose(np.hypot(local[:, 0], local[:, 1]), [3.0, 7.0], atol=1e-5)
    assert np.allclose(np.arctan2(local[:, 1], local[:, 0]), 1.2, atol=1e-5)
    width = np.linalg.norm(lay.left[0] - lay.right[0], axis=1)
    assert np.allclose(width, LEADER_PX * 0.01, rtol=1e-4)  # LEADER_PX pixels wide in the world


def test_a_ring_row_name_sits_on_a_plate_of_its_colour():
    """The row of a lane's roots ("30× a.worker": an asyncio task's resumptions, the icicle's
    rule) is named over its gaps as much as over its bars: the name sits on a plate, a thin
    sector of the row's colour in front of the bars (local depth < 0, the text in front of
    it), as long along the arc as the text and its padding, within the row's angles."""
    from tracevis3d.layout.labels import PAD
    from tracevis3d.layout.text import text_width
    from tracevis3d.model import Trace

    func, start, end, parent, thread = [0], [0.0], [3000.0], [-1], [0]
    for k in range(30):
        func.append(1)
        start.append(100.0 * k)
        end.append(100.0 * k + 20.0)
        parent.append(-1)
        thread.append(1)
    tr = Trace.from_arrays(func, start, end, parent, thread=thread,
                           function_names=["main (/app/a.py:1)", "worker (/app/a.py:8)"],
                           thread_names=["MainThread", "Task-2"]).check()
    spec = threads_layout(tr, ThreadsParams(focus="MainThread"))
    lab = spec.labels
    rows = [k for k, kind in enumerate(lab.kind) if kind == "row"]
    assert [lab.texts[k] for k in rows] == ["30× a.worker"]
    plates = next(lay for lay in spec.layers if lay.name == "ring_label_plates")
    bars = next(lay for lay in spec.layers if lay.name == "ring")
    assert len(plates) == 1 and plates.attributes["call_index"][0] == lab.call_index[rows[0]]
    assert plates.heights[0, 0] < 0 and plates.heights[0, 1] == 0  # in front of the bars' faces
    worker = np.flatnonzero(bars.attributes["call_index"] >= 1)
    assert np.allclose(plates.colors[0], bars.colors[worker[0]])  # the row's function's colour
    assert plates.angles[0, 0] >= bars.angles[worker, 0].min() - 1e-6  # within the row
    assert plates.angles[0, 1] <= bars.angles[worker, 1].max() + 1e-6
    # its length along the arc (world, at the middle radius, the ring's stretch) is the text's and padding
    a = float(plates.angles[0].mean())
    r = float(plates.radii[0].mean()) / 1.0
    tangent = np.array([-np.sin(a) * plates.stretch, np.cos(a)])
    arc = (plates.angles[0, 1] - plates.angles[0, 0]) * r * np.linalg.norm(tangent)
    size = float(lab.sizes[rows[0]])
    assert np.isclose(arc, (text_width("30× a.worker") + 2 * PAD) * size, rtol=0.02)
    # the text stands in front of the plate (world y grows into the picture)
    depth_front = plates.origin[1] + plates.heights[0, 0]
    assert lab.anchors[rows[0], 1] < depth_front


def _inside_polygon(pts: np.ndarray, poly: np.ndarray) -> np.ndarray:
    """Even-odd rule, every edge at once: which of the points (m, 2) lie inside the closed
    polygon (k, 2) (the thread view's name test before `inside_polygon_banded`)."""
    x, y = pts[:, 0:1], pts[:, 1:2]
    x0, y0 = poly[:, 0][None], poly[:, 1][None]
    x1, y1 = np.roll(poly[:, 0], -1)[None], np.roll(poly[:, 1], -1)[None]
    crosses = (y0 > y) != (y1 > y)
    t = (y - y0) / np.where(y1 != y0, y1 - y0, 1.0)
    return ((crosses & (x < x0 + t * (x1 - x0))).sum(1) % 2) == 1


@pytest.mark.parametrize("seed", range(6))
def test_inside_polygon_banded_equals_the_plain_test(seed):
    """`kernels.raster.inside_polygon_banded` (the edges of a point's band only) against the
    plain even-odd test over every edge (`_inside_polygon`, its twin): the same answer for
    random polygons, star outlines like the ring's and points on vertices' rows."""
    from tracevis3d.kernels.raster import inside_polygon_banded, polygon_bands

    rng = np.random.default_rng(seed)
    k = int(rng.integers(3, 300))
    if seed % 2:  # a star around a centre, as the ring's outline
        a = np.sort(rng.uniform(np.pi, 2 * np.pi, k))
        r = rng.uniform(50, 400, k)
        poly = np.concatenate([np.stack([900 + r * np.cos(a), 800 + r * np.sin(a)], 1), [[900.0, 800.0]]])
    else:
        poly = rng.uniform(0, 1000, (k, 2))
    q = rng.uniform(-50, 1050, (2000, 2))
    q[:200, 1] = poly[rng.integers(0, len(poly), 200), 1]  # on a vertex's row
    q[200:300] = poly[rng.integers(0, len(poly), 100)]  # on vertices
    for band in (3.0, 16.0, 500.0):
        y0, ptr, ids = polygon_bands(np.ascontiguousarray(poly[:, 0]), np.ascontiguousarray(poly[:, 1]), band)
        got = inside_polygon_banded(np.ascontiguousarray(q[:, 0]), np.ascontiguousarray(q[:, 1]),
                                    np.ascontiguousarray(poly[:, 0]), np.ascontiguousarray(poly[:, 1]), y0, band,
                                    ptr, ids)
        assert np.array_equal(got, _inside_polygon(q, poly)), band


def test_thousands_of_threads_get_a_thread_view_with_names():
    """A hostile trace: 2,000 threads at once, each one call (no two of one kind: named by
    their ids).  The thread view is made (placing names tested every candidate box against
    every edge of the ring's outline, 160 s for 3,000 threads), names only the first
    `MAX_NAME_TRIES` threads it tries, and names some."""
    from tracevis3d.layout.threads import MAX_NAME_TRIES
    from tracevis3d.model import Trace

    n = 2000
    tr = Trace.from_arrays(np.arange(n) % 7, np.arange(n) * 0.5, np.arange(n) * 0.5 + 3.0, np.full(n, -1),
                           thread=np.arange(n), function_names=[f"f{k} (/app/m.py:{k})" for k in range(7)],
                           thread_names=[str(1000 + k) for k in range(n)]).check()
    spec = threads_layout(tr, ThreadsParams(resolution=(960, 540)))
    names = [t for t, k in zip(spec.labels.texts, spec.labels.kind) if k == "lane"]
    assert 3 <= len(names) <= MAX_NAME_TRIES


def test_the_walls_name_stands_under_its_axis_and_the_wall_takes_the_width():
    """The wall (the focused thread's icicle) has no column for its name left of it: the
    name, whole, stands under the wall's time axis, left-aligned at its origin, and no
    thread name on the ring covers it; the wall starts at the content's left edge.  (The
    column stood empty above the name: http_threads' figure was 51 % empty, 47 % now.)"""
    from tracevis3d.layout.camera import project

    t = tracevis3d.synthetic(4000, threads=4, seed=5)
    t.thread_names = [f"python3.8: thread {3113936 + 977 * k} (python3.8)" for k in range(t.n_threads)]
    spec = threads_layout(t, ThreadsParams(resolution=(1280, 720)).validate())
    lab = spec.labels
    wall = [j for j, (k, m) in enumerate(zip(lab.kind, lab.material)) if k == "lane" and m == "TV3D_text_ui"]
    assert [lab.texts[j] for j in wall] == [t.thread_names[spec.meta["focus_thread"]]]  # whole, not cut
    axis = [j for j, k in enumerate(lab.kind) if k == "axis"]
    (box,) = _label_boxes(spec, wall)
    assert box[1] >= max(b[3] for b in _label_boxes(spec, axis)) - 1.0  # under the tick labels
    zero = min(axis, key=lambda j: lab.anchors[j, 0])  # the "0" tick, left-aligned at the time origin
    assert lab.texts[zero] == "0" and lab.align[zero] == 0
    origin = project(spec.camera, lab.anchors[[zero]].astype(np.float64), spec.resolution)[0]
    assert abs(box[0] - origin[0]) < 0.5 * spec.meta["text_px"]  # left-aligned at the time origin
    assert origin[0] < 0.06 * 1280  # no name column: the wall begins at the content's left
    ring = [j for j, m in enumerate(lab.material) if m.startswith("TV3D_lane_text")]
    for b in _label_boxes(spec, ring):
        assert not (b[0] < box[2] and box[0] < b[2] and b[1] < box[3] and box[1] < b[3]), (b, box)


def test_the_rings_cut_keeps_its_levels_its_names_and_its_outline(threads_trace_path, monkeypatch):
    """The ring cuts its sub-pixel subtrees before its fold (`layout.subpixel`) and draws them
    as stalks: on a real 5-thread recording it drops most calls, and the figure keeps what
    the whole selection gives: every lane's levels, the ring's names, and each lane's reach
    (the outermost radius of its bars, stalks included, to the gap a bar leaves at the top of
    its level), against the same layout with nothing cut."""
    import tracevis3d.layout.threads as threads_mod

    trace = tracevis3d.load(threads_trace_path)
    cut = threads_layout(trace)
    monkeypatch.setattr(threads_mod, "CUT_PX", 0.0)
    whole = threads_layout(trace)
    assert whole.meta["n_cut"] == 0 and cut.meta["n_cut"] > 0.5 * cut.meta["n_calls"]
    np.testing.assert_allclose(cut.meta["lane_levels"], whole.meta["lane_levels"], rtol=1e-12)

    def names(spec, lane):  # the captions ("runs …") are compared on their own, below
        return sorted(t for t, k in zip(spec.labels.texts, spec.labels.kind)
                      if (k == "lane") == lane and not t.startswith("runs "))

    # the same calls named; a name's text may be fitted shorter in one of the two (room beside
    # bars and stalks that differ below a pixel: "…Pipeline.writer" for
    # "threads_pipeline.Pipeline.writer" on a recording of stop 46, at 077dd53 too)
    def named(spec):
        return sorted(int(c) for c, t, k in zip(spec.labels.call_index, spec.labels.texts, spec.labels.kind)
                      if k != "lane" and c >= 0 and not t.startswith("runs "))

    def captions(spec):  # what a thread runs, beside its name: placed where names are, so as they are
        return sorted(t.rstrip(" ·") for t in spec.labels.texts if t.startswith("runs "))

    def unexplained(a, b):  # captions of one figure only, less those fitted shorter from the left
        odd = sorted(set(a) ^ set(b), key=len)  # (CI of stop 74: "runs …document" for "runs …process_document")
        left = list(odd)
        for short in odd:
            if short in left and short.startswith("runs …"):
                full = next((f for f in left if f != short and f.endswith(short[len("runs …"):])), None)
                if full is not None:
                    left.remove(short)
                    left.remove(full)
        return left

    assert named(cut) == named(whole)
    assert len(unexplained(captions(cut), captions(whole))) <= 1, (captions(cut), captions(whole))
    odd = sorted(set(names(cut, False)) ^ set(names(whole, False)))
    assert len(odd) in (0, 2), odd
    if odd:
        short, full = sorted(odd, key=len)
        assert short.startswith("…") and full.endswith(short[1:]), odd
    # a thread's name stands beside its section where the drawn bars leave it room: the cut's
    # stalks and the whole tree's bars differ below a pixel, so one name may find room in one
    # figure and not in the other (a recording of stop 45: parse_0's name in the cut figure only)
    assert len(set(names(cut, True)) ^ set(names(whole, True))) <= 1, (names(cut, True), names(whole, True))

    def reach(spec):
        out = np.zeros(len(spec.meta["lane_names"]))
        for name in ("ring", "ring_clusters"):
            lay = spec.layer(name)
            lanes = np.searchsorted(np.asarray(spec.meta["lane_angles"])[:, 0], lay.angles.mean(1), side="right") - 1
            np.maximum.at(out, lanes, lay.radii[:, 1] / spec.meta["ring_scale"])
        return out

    # a bar stops at BAR_FILL of its level, a stalk at its envelope's top: within a level's gap
    from tracevis3d.layout.ring import BAR_FILL

    gap = reach(cut) - reach(whole)
    assert (gap >= -1e-6).all() and (gap <= (1.0 - BAR_FILL) + 1e-6).all(), gap
    st = cut.layer("ring_clusters")
    assert st.attributes["n_calls"].sum() > whole.layer("ring_clusters").attributes["n_calls"].sum() * 0.5


def _lead_unions_brute(trace, d, lanes) -> tuple:
    """`thread_work.lane_lead_calls` by hand: per lane and function the union of its drawn bars'
    intervals (merged one by one) and the bars, of the calls it counts."""
    from tracevis3d.naming import function_table
    from tracevis3d.model import KIND_IO, KIND_WAIT

    ft = function_table(trace)
    bars: dict = {}
    for i in range(len(d.idx)):
        k, f = int(d.lane[i]), int(d.func[i])
        if k not in lanes or d.folded[i] or ft.infra[f] or int(trace.kind[d.idx[i]]) in (KIND_WAIT, KIND_IO):
            continue
        bars.setdefault((k, f), []).append(i)
    union: dict = {}
    for (k, f), members in bars.items():
        total, reach = 0.0, -np.inf
        for i in sorted(members, key=lambda i: (d.start[i], i)):
            total += max(d.end[i] - max(d.start[i], reach), 0.0)
            reach = max(reach, d.end[i])
        union[(k, f)] = total
    return union, bars


@pytest.mark.parametrize("seed", range(6))
def test_lane_lead_calls_match_twin(seed):
    """What each lane runs (the caption of a section too narrow for names): the function whose
    drawn bars cover the most of the lane (nested calls of one function counted once), left
    out the runtime's thread start-up, waits and I/O and folded bands; its widest bar."""
    from types import SimpleNamespace

    from tracevis3d.layout.thread_work import lane_lead_calls

    import copy

    t = copy.copy(tracevis3d.synthetic(3000, threads=4, seed=seed))  # a new object: no cached function table
    f0 = int(t.func[0])  # the roots' function made the runtime's Thread.run: never a lane's lead
    names, files, lines = list(t.function_names), list(t.function_files), np.array(t.function_lines)
    names[f0], files[f0], lines[f0] = "threading.Thread.run", "", -1
    t.function_names, t.function_files, t.function_lines = names, files, lines
    rng = np.random.default_rng(seed)
    idx = np.sort(rng.choice(len(t), 1500, replace=False))
    # recursion: some bars get calls of their own function nested in them (1-4 levels), which a
    # sum of durations would count again and the union must not
    nest = rng.integers(0, 5, idx.size) * (rng.random(idx.size) < 0.3)
    src = np.repeat(np.arange(idx.size), 1 + nest)
    level = np.arange(src.size) - np.repeat(np.cumsum(1 + nest) - (1 + nest), 1 + nest)
    s0, e0 = t.start[idx][src], t.end[idx][src]
    inset = 0.1 * level * (e0 - s0)
    d = SimpleNamespace(idx=idx[src], lane=t.thread[idx][src].astype(np.int64), func=t.func[idx][src].astype(np.int64),
                        start=s0 + inset, end=e0 - inset, folded=(rng.random(idx.size) < 0.1)[src])
    lanes = [0, 2, 3]
    got = lane_lead_calls(t, d, lanes)
    union, bars = _lead_unions_brute(t, d, set(lanes))
    assert set(got) == {k for k, _ in bars}
    assert int(t.func[0]) not in {int(d.func[i]) for i in got.values()}
    for k, i in got.items():
        f = int(d.func[i])
        best = max(u for (kk, _), u in union.items() if kk == k)
        assert (k, f) in union and np.isclose(union[(k, f)], best, rtol=1e-12, atol=0.0), (k, f, union[(k, f)], best)
        assert d.end[i] - d.start[i] == max(d.end[j] - d.start[j] for j in bars[(k, f)]), (k, i)


def test_a_narrow_section_is_captioned_with_what_it_runs():
    """A thread whose section is too narrow for names on its bars gets, beside its name, what
    it runs ("runs task_render_page"): the function that covers most of its time, not the
    pool's loop; a caption is a picked call's label (kind ``call``) and overlaps no name."""
    from tracevis3d.model import Trace

    # MainThread: a long main with many calls; 11 workers: a task under the runtime's
    # Thread.run, six levels deep, in sections too narrow for names on their bars
    func, start, end, parent, thread = [], [], [], [], []

    def call(f, s, e, p, th):
        func.append(f); start.append(s); end.append(e); parent.append(p); thread.append(th)  # noqa: E702
        return len(func) - 1

    m = call(0, 0.0, 1000.0, -1, 0)
    for j in range(40):
        a = call(1, 20.0 * j + 1, 20.0 * j + 19, m, 0)
        call(2, 20.0 * j + 2, 20.0 * j + 18, a, 0)
    tasks = []
    for k in range(1, 12):
        p = call(3, 10.0 * k, 900.0, -1, k)
        for j in range(3):
            task = call(4, 10.0 * k + 250 * j + 1, 10.0 * k + 250 * j + 240, p, k)
            tasks.append(task)
            q = task
            for depth in range(5):
                q = call(5 + depth, start[q] + 1, end[q] - 1, q, k)
    names = ["main", "work", "step", "threading.Thread.run", "task_render_page"] + [f"helper_{i}" for i in range(5)]
    t = Trace.from_arrays(func, start, end, parent, thread=thread, function_names=names,
                          thread_names=["MainThread"] + [f"worker_{k}" for k in range(1, 12)]).check()
    spec = threads_layout(t, ThreadsParams(resolution=(1280, 720)).validate())
    lab = spec.labels
    caps = [j for j, txt in enumerate(lab.texts) if txt.startswith("runs ")]
    assert caps and {lab.texts[j].rstrip(" ·") for j in caps} <= {"runs task_render_page", "runs …render_page"}, \
        lab.texts
    assert all(lab.kind[j] == "call" and int(lab.call_index[j]) in tasks for j in caps)
    named = [i for i, k in enumerate(lab.kind) if k == "lane"] + caps
    boxes = _label_boxes(spec, named)
    for a, b in enumerate(boxes):
        assert b[0] >= 0 and b[1] >= 0 and b[2] <= 1280 and b[3] <= 720, (lab.texts[named[a]], b)
        for c in boxes[a + 1:]:
            assert not (b[0] + 1 < c[2] and c[0] + 1 < b[2] and b[1] + 1 < c[3] and c[1] + 1 < b[3]), (b, c)
