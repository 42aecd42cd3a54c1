"""Brute-force twins of the kernel helpers that several kernels share (issue 81: one piece
for each repeated piece of logic)."""
import numpy as np

import tracevis3d as tv
from tracevis3d.kernels.runs import dominant_child


def _trace():
    return tv.synthetic(3000, threads=3)


def test_dominant_child_is_the_heaviest_function_of_a_row():
    t = _trace()
    nf = len(t.function_names)
    acc, cnt, touched = np.zeros(nf), np.zeros(nf, np.int64), np.empty(nf, np.int64)
    checked = 0
    for p in range(t.func.shape[0]):
        kids = []
        c = p + 1
        while c < t.end_index[p]:
            kids.append(c)
            c = t.end_index[c]
        if not kids:
            continue
        time_of = {}
        for c in kids:  # first met wins ties, as the kernel's strict comparison does
            time_of.setdefault(int(t.func[c]), [0.0, 0])
            time_of[int(t.func[c])][0] += t.end[c] - t.start[c]
            time_of[int(t.func[c])][1] += 1
        best = max(time_of, key=lambda f: (time_of[f][0], -list(time_of).index(f)))
        got = dominant_child(p, t.func, t.start, t.end, t.end_index, acc, cnt, touched)
        assert got[:4] == (len(kids), t.start[kids[0]], t.end[kids[-1]],
                           sum(t.end[c] - t.start[c] for c in kids))
        assert got[4:] == (best, time_of[best][0], time_of[best][1])
        assert not acc.any() and not cnt.any()
        checked += 1
    assert checked > 100


def test_child_key_is_the_function_then_the_childrens_classes_with_their_hash_chain():
    from tracevis3d.kernels.gamma import child_key, keyed_start, keyed_step

    t = _trace()
    seed = np.uint64(7)
    cls = (np.arange(t.func.shape[0]) * 7919 % 101).astype(np.int32)
    buf = np.empty(t.func.shape[0] + 1, np.int32)
    for i in range(0, t.func.shape[0], 7):
        key = [int(t.func[i])] + [int(cls[c]) for c in range(i + 1, t.end_index[i]) if t.parent[c] == i]
        h = np.uint64(keyed_start(key[0], seed))
        for x in key[1:]:
            h = np.uint64(keyed_step(h, x))
        m, got = child_key(i, t.func, t.end_index, cls, buf, seed)
        assert list(buf[:m]) == key and got == h


def test_box_rect_bounds_the_four_projected_corners():
    from tracevis3d.kernels.raster import box_rect

    rng = np.random.default_rng(3)
    loc, right, up, fwd = np.array([3.0, -80.0, 30.0]), np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.6, 0.8]), \
        np.array([0.0, 0.8, -0.6])
    for ortho in (False, True):
        for _ in range(200):
            x0, y1, z0 = rng.uniform(-50, 50), rng.uniform(0, 5), rng.uniform(0, 20)
            x1, z1 = x0 + rng.exponential(3), z0 + rng.uniform(0, 2)
            px = []
            for x, y, z in ((x0, 0.0, z0), (x1, 0.0, z0), (x0, y1, z1), (x1, y1, z1)):
                q = (x - loc[0], y - loc[1], z - loc[2])
                a = q[0] * right[0] + q[1] * right[1] + q[2] * right[2]
                b = q[0] * up[0] + q[1] * up[1] + q[2] * up[2]
                d = 1.0 if ortho else max(q[0] * fwd[0] + q[1] * fwd[1] + q[2] * fwd[2], 1e-12)
                px.append((960.0 + 900.0 * a / d - 1.5, 540.0 - (900.0 * b / d + 2.0)))
            got = box_rect(x0, x1, y1, z0, z1, loc, right, up, fwd, 900.0, 960.0, 540.0, 1.5, -2.0, ortho)
            assert got == (min(p[0] for p in px), min(p[1] for p in px), max(p[0] for p in px),
                           max(p[1] for p in px))


def test_ring_quads_join_two_rings_side_by_side():
    from tracevis3d.kernels.tubes import ring_quads

    for sides in (3, 5, 8):
        quads = np.full((sides + 2, 4), -1, np.int32)
        tube = np.full(sides + 2, -1, np.int32)
        assert ring_quads(quads, tube, 1, 10, sides, 7) == 1 + sides
        want = [(10 + j, 10 + (j + 1) % sides, 10 + sides + (j + 1) % sides, 10 + sides + j) for j in range(sides)]
        assert [tuple(q) for q in quads[1:1 + sides]] == want
        assert list(tube) == [-1] + [7] * sides + [-1] and list(quads[0]) == [-1] * 4


def test_grown_doubles_or_meets_the_need_and_keeps_the_front():
    from tracevis3d.kernels.grow import grown

    a = np.arange(5, dtype=np.int32)
    assert grown(a, 5) is a
    for need, size in ((6, 10), (11, 11), (40, 40)):
        b = grown(a, need)
        assert b.dtype == a.dtype and b.shape == (size,) and list(b[:5]) == list(a)


def test_room_for_is_the_greatest_value_plus_spare_or_the_least():
    from tracevis3d.kernels.grow import room_for

    rng = np.random.default_rng(5)
    for n in (0, 1, 50):
        a = rng.integers(-3, 40, n).astype(np.int32)
        for plus, least in ((0, 0), (1, 1), (2, 2), (3, 3)):
            assert room_for(a, plus, least) == max([least] + [int(x) + plus for x in a])
