"""Faces of neighbouring boxes kept farther apart than the depth buffer resolves (issue 72: a
frame rendered twice, or in two ranges of an animation, is the same image): the depth step
of a camera, the trimmed clusters' gap that follows it, and the detail inset's name plates
set back inside their faces.  Brute force against the formulas, no bpy."""
import numpy as np

from tracevis3d.layout.box_overlap import GAP_STEPS, depth_step
from tracevis3d.layout.inset import PLATE_INSET_STEPS, PREFIX, plates_off_faces
from tracevis3d.layout.spec import CameraSpec, InstanceLayer


def test_depth_step_is_d_squared_over_near_times_two_to_the_minus_24():
    cam = CameraSpec((3.0, -40.0, 12.0), (3.0, 0.0, 3.0), clip_start=0.041)
    d = float(np.sqrt(40.0 ** 2 + 9.0 ** 2))
    assert np.isclose(depth_step(cam), d * d / 0.041 / 2 ** 24)
    # the 640x360 pydoc growth's camera: 58 away, near clip 1e-3 of that: ~3.5e-3 world a step
    far = CameraSpec((0.0, -58.0, 0.0), (0.0, 0.0, 0.0), clip_start=0.058)
    assert 3.4e-3 < depth_step(far) < 3.5e-3
    ortho = CameraSpec((0.0, -5.0, 0.0), (0.0, 0.0, 0.0), orthographic=True, clip_start=0.01, clip_end=100.01)
    assert np.isclose(depth_step(ortho), 100.0 / 2 ** 24)


def _layer(name, scales):
    n = len(scales)
    return InstanceLayer(PREFIX + name, np.zeros((n, 3), np.float32), np.asarray(scales, np.float32),
                         np.ones((n, 4), np.float32), np.zeros(n, np.int32), ["m"])


def test_only_the_insets_plates_are_set_back_inside_their_faces():
    cam = CameraSpec((0.0, -58.0, 0.0), (0.0, 0.0, 0.0), clip_start=0.058)
    eps = PLATE_INSET_STEPS * depth_step(cam)
    calls = _layer("calls", [[1.0, 0.1, 0.2]])
    clusters = _layer("clusters", [[0.5, 0.1, 0.2]])
    panel = _layer("panel", [[5.0, 0.001, 4.0]])
    plates = _layer("label_plates", [[1.0, 0.014, 0.2], [3 * eps, 0.014, 0.2]])
    before = [x.scales.copy() for x in (calls, clusters, panel, plates)]
    plates_off_faces([calls, clusters, panel, plates], cam)
    for x, b in zip((calls, clusters, panel), before):
        assert np.array_equal(x.scales, b)
    want = before[3].astype(np.float64)
    want[0, [0, 2]] -= 2 * eps  # x and z narrower by eps on each side; y (its depth) as it was
    want[1, 2] -= 2 * eps  # too narrow to take from: its width stays
    assert np.allclose(plates.scales, want, rtol=0, atol=1e-7)


def test_the_gap_is_half_a_step_two_steps_along_an_oblique_ray():
    # a ray at |x . ray| = 0.25 crosses the gap over gap / 0.25 of depth
    assert GAP_STEPS / 0.25 >= 2.0


def test_the_near_clip_is_an_eighth_of_the_nearest_points_depth():
    from tracevis3d.layout.camera import NEAR_CLIP_SHARE, fit_camera, view_direction

    # an icicle-like slab (long in x, tall in z, thin in y) seen from the side and above
    rng = np.random.default_rng(3)
    pts = np.column_stack([rng.uniform(0, 100, 400), rng.uniform(0, 1.2, 400), rng.uniform(0, 30, 400)])
    for az, el in ((-18.0, 12.0), (0.0, 0.0), (35.0, 25.0)):
        cam = fit_camera(pts, view_direction(az, el), (1920, 1080))
        loc, tgt = np.asarray(cam.location), np.asarray(cam.target)
        f = (tgt - loc) / np.linalg.norm(tgt - loc)
        depth = (pts - loc) @ f  # brute force: every point's depth along the view
        assert np.isclose(cam.clip_start, NEAR_CLIP_SHARE * depth.min(), rtol=1e-9)
        # every point beyond the clip; the heads-up display (4 near clips) in front of them all
        assert depth.min() >= 2.0 * 4.0 * cam.clip_start * (1 - 1e-9)
        d = float(np.linalg.norm(tgt - loc))
        assert cam.clip_start > 0.05 * d  # ~0.1 of the distance, not the old 1e-3
        # the depth step at the figure: ~100x finer than at 1e-3 of the distance
        assert depth_step(cam) * 50.0 < d * d * 2.0 ** -24 / (1e-3 * d)


def test_a_point_near_the_camera_keeps_the_old_near_clip():
    from tracevis3d.layout.camera import near_clip

    assert near_clip(58.0, 40.0) == 5.0
    assert near_clip(58.0, 0.2) == 0.058  # never below 1e-3 of the distance
    assert near_clip(0.5, 0.001) == 1e-3


def test_touching_calls_of_a_row_are_set_a_gap_apart_and_nothing_else_moves():
    from tracevis3d.layout.box_overlap import GAP, call_ends_apart

    cam = CameraSpec((50.0, -58.0, 0.0), (50.0, 0.0, 0.0), clip_start=7.0)
    rng = np.random.default_rng(5)
    gap = 1e-4  # the figure's length (~96 world units) × GAP: more than half this camera's depth step
    lane, bottom, xs, xe = [], [], [], []
    for row in range(6):  # rows of calls one after the other: touching, nearly, or well apart
        x = 0.0
        while x < 95.0:
            w = float(rng.choice([0.5, 1.0, 2.0]))
            lane.append(row // 2)
            bottom.append(float(row % 2))
            xs.append(x)
            xe.append(x + w)
            x += w + float(rng.choice([0.0, 0.0, 0.3 * gap, 10 * gap, 1.0]))
    lane, bottom, xs, xe = (np.array(v) for v in (lane, bottom, xs, xe))
    order = rng.permutation(len(xs))  # the layout's order is not the rows'
    lane, bottom, xs, xe = lane[order], bottom[order], xs[order], xe[order]
    assert np.isclose(gap, GAP * 100.0) and gap > GAP_STEPS * depth_step(cam)
    gap = GAP * xe.max()
    got = call_ends_apart(lane, bottom, np.ones(len(xs)), xs, xe, cam)
    for i in range(len(xs)):  # brute force: the next call of its row
        row = np.flatnonzero((lane == lane[i]) & (bottom == bottom[i]) & (xs > xs[i]))
        apart = xs[row].min() - xe[i] if row.size else np.inf
        want = xs[row].min() - gap if apart < gap else xe[i]
        assert np.isclose(got[i], want, rtol=0, atol=1e-12), (i, got[i], want)
    assert (got < xe).sum() > 10  # touching and nearly touching calls were there
