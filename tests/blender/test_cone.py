"""The cone tree (issue 14): calling-context tree and recursion folding against brute force,
the Carrière–Kazman layout's invariants (property test: every child on its parent's base
circle, sibling footprints apart, subtrees inside their footprint), and render-cone end to
end on a real trace (pixels: apex above the base, labels drawn)."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tracevis3d

from cone_checks import check_cone
from tracevis3d.analysis.context import calling_context_tree, prune_by_time
from tracevis3d.kernels.cone import cone_footprints, cone_positions
from tracevis3d.layout.cone import ConeParams, cone_layout

from tree_strategies import forest, ops_strategy
from tree_factory import random_trace


def brute_contexts(t, fold):
    """Path of functions from the root (thread first) per call; with ``fold``, recursion
    folded: a call of a function open among its callers takes the nearest such caller's path.
    Also the outermost-call flag (no caller has the same path) that says whether its time counts."""
    return brute_merged_contexts(t, np.zeros(len(t), bool), fold)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=ops_strategy, threads=st.integers(1, 3), fold=st.booleans())
def test_context_tree_equals_brute_force(ops, threads, fold):
    t = forest(ops, True, threads)
    c = calling_context_tree(t, per_thread=True, fold_recursion=fold)
    paths, outer = brute_contexts(t, fold)
    assert len(c) == 1 + t.n_threads + len(set(paths))
    ids = {}
    for i, path in enumerate(paths):
        assert ids.setdefault(path, int(c.ctx[i])) == c.ctx[i]
    # time: the outermost calls of a node (no folded recursion counted twice)
    want = np.bincount(c.ctx[outer], weights=(t.end - t.start)[outer], minlength=len(c))
    assert np.allclose(c.time[1 + t.n_threads:], want[1 + t.n_threads:])
    assert np.array_equal(c.calls[1 + t.n_threads:], np.bincount(c.ctx, minlength=len(c))[1 + t.n_threads:])


def brute_merged_contexts(t, merged, fold):
    """The calling contexts of the trace without the ``merged`` calls: each call's path of
    unmerged functions from the root, walking up past merged callers (None for a merged
    call), recursion folded with ``fold`` (see `brute_contexts`), and the outermost-call flag
    that says whether its time is counted."""
    paths, outer = [], []

    def callers(i):  # the unmerged callers of call i, nearest first
        out, p = [], int(t.parent[i])
        while p >= 0:
            if not merged[p]:
                out.append(p)
            p = int(t.parent[p])
        return out

    for i in range(len(t)):
        if merged[i]:
            paths.append(None)
            outer.append(False)
            continue
        up = callers(i)
        same = [a for a in up if t.func[a] == t.func[i]] if fold else []
        if same:
            paths.append(paths[same[0]])
        elif not up:
            paths.append((int(t.thread[i]), int(t.func[i])))
        else:
            paths.append(paths[up[0]] + (int(t.func[i]),))
        outer.append(all(paths[a] != paths[i] for a in up))
    return paths, np.array(outer, bool)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=ops_strategy, threads=st.integers(1, 3), fold=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_context_tree_of_merged_calls_equals_brute_force(ops, threads, fold, seed):
    """Calls merged into their callers in the sweep (the cone tree's fold): the tree of the
    trace without them, node for node, and the same as merging them out of the trace first."""
    from tracevis3d.transform import merge_calls

    t = forest(ops, True, threads)
    merged = np.random.default_rng(seed).random(len(t)) < 0.4
    c = calling_context_tree(t, per_thread=True, fold_recursion=fold, merged=merged)
    paths, outer = brute_merged_contexts(t, merged, fold)
    kept = [p for p in paths if p is not None]
    assert len(c) == 1 + t.n_threads + len(set(kept))
    assert np.array_equal(c.ctx < 0, merged)
    ids = {}
    for i, path in enumerate(paths):
        if path is not None:
            assert ids.setdefault(path, int(c.ctx[i])) == c.ctx[i]
    want = np.bincount(c.ctx[outer], weights=(t.end - t.start)[outer], minlength=len(c))
    assert np.allclose(c.time[1 + t.n_threads:], want[1 + t.n_threads:])
    if (~merged).any() and merged.any():  # the same tree as the rebuilt trace's
        m = calling_context_tree(merge_calls(t, merged), per_thread=True, fold_recursion=fold)
        assert len(m) == len(c)
        assert np.allclose(np.sort(m.time), np.sort(c.time))
        assert np.array_equal(np.sort(m.calls), np.sort(c.calls))


def _layout_invariants(t, max_nodes, gap=0.25, level_h=2.0, n_bands=4):
    c = calling_context_tree(t)
    pr = prune_by_time(c, max_nodes)
    assert len(pr) <= max(max_nodes, 1) + c.per_thread * t.n_threads + 1
    size = 0.2 + 0.8 * np.sqrt(c.time[pr.node] / max(c.time[0], 1e-300))
    foot, off, base, angle, *bands = cone_footprints(pr.child_ptr, pr.child_ids, size.copy(), gap, n_bands)
    pos, turn = cone_positions(pr.parent, base, angle, level_h)
    return check_cone(pr.parent, pos, turn, size, foot, off, base, bands, level_h, gap), pr


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), fanout=st.integers(1, 8), depth=st.integers(1, 6),
       max_nodes=st.integers(1, 300), n_bands=st.integers(2, 6))
def test_cone_layout_property(seed, fanout, depth, max_nodes, n_bands):
    t = random_trace(n_roots=8, fanout=fanout, max_depth=depth, threads=2, seed=seed, n_func=12)
    _layout_invariants(t, max_nodes, n_bands=n_bands)


def _spine(levels, spine_r=1.0, leaf_r=0.3):
    """A chain of ``levels`` nodes below a root, each node with its chain child between two
    leaves: (child_ptr, child_ids, sphere radius)."""
    parent, size, node = [-1], [spine_r], 0
    for _ in range(levels):
        parent += [node, node, node]
        size += [leaf_r, spine_r, leaf_r]
        node = len(parent) - 2
    parent = np.asarray(parent)
    counts = np.bincount(parent[1:], minlength=parent.size)
    return (np.r_[0, np.cumsum(counts)].astype(np.int64), (np.argsort(parent[1:], kind="stable") + 1).astype(np.int64),
            np.asarray(size))


def test_leaves_beside_a_deep_sibling_keep_the_ring_small():
    """A leaf reaches no deeper than its own level, so beside a deep sibling it need only
    clear that sibling's sphere, not the disc of the whole subtree below it: every ring of a
    30-level spine with two leaves per level stays a few sphere radii wide, and the root's
    footprint grows with the depth, not geometrically (with one disc per subtree the leaves
    went to the far side of ever wider rings: a root footprint of 1078, rings up to 346)."""
    gap, levels = 0.25, 30
    ptr, ids, size = _spine(levels)
    foot, off, base, angle, *bands = cone_footprints(ptr, ids, size, gap, 12)
    assert base.max() <= 2.0 * (1.0 + 0.3) * (1.0 + gap)
    assert foot[0] <= levels * (1.0 + 0.3)
    parent = np.full(size.size, -1)
    parent[ids] = np.repeat(np.arange(size.size), np.diff(ptr))
    pos, turn = cone_positions(parent, base, angle, 2.0)
    check_cone(parent, pos, turn, size, foot, off, base, bands, 2.0, gap)


@pytest.mark.parametrize("name", ["viztracer-examples/different_sorts.json",
                                  "viztracer-examples/multi_process_pool.json", "hta-trace-diff/control.json.gz"])
def test_cone_layout_invariants_on_real_traces(realdata, name):
    t = tracevis3d.load(realdata / name)
    pairs, pr = _layout_invariants(t, 300)
    assert pairs > 50
    assert pr.partial.any() or len(pr) == len(pr.cct)


def test_pruning_keeps_the_heaviest_and_marks_partial():
    t = random_trace(n_roots=20, fanout=4, max_depth=5, threads=1, seed=3, n_func=30)
    c = calling_context_tree(t)
    pr = prune_by_time(c, 25)
    kept = set(pr.node.tolist())
    assert len(pr) == 25
    assert np.all(pr.parent[1:] < np.arange(1, len(pr)))  # children after parents
    dropped = np.setdiff1d(np.arange(len(c)), pr.node)
    assert c.time[dropped].max() <= c.time[pr.node].min() + 1e-9
    for j, k in enumerate(pr.node.tolist()):  # partial exactly when a child context is not drawn
        kids = np.flatnonzero(c.parent == k)
        assert pr.partial[j] == any(int(x) not in kept for x in kids)


def test_cone_params_errors():
    t = random_trace(n_roots=2, fanout=2, max_depth=2, threads=1, seed=1)
    for kw in ({"max_nodes": 0}, {"orientation": "sideways"}, {"color_by": "depth"}, {"hide": ["("]}):
        with pytest.raises(ValueError):
            cone_layout(t, ConeParams(**kw))


@pytest.mark.blender
def test_render_cone_real_trace(realdata, tmp_path):
    """render-cone on VizTracer's multi_process_pool: the figure and the .blend; in the image
    the root sphere is drawn above its children (apex above the base), every drawn node is
    not background, and the labels are dark text beside their spheres (by their alignment)."""
    bpy = pytest.importorskip("bpy")
    from bpy_extras.object_utils import world_to_camera_view
    from mathutils import Vector

    from rendered_pixels import image_pixels
    from tracevis3d.cli import main

    path = realdata / "viztracer-examples" / "multi_process_pool.json"
    res = (640, 360)
    out, blend = tmp_path / "cone.png", tmp_path / "cone.blend"
    assert main(["render-cone", str(path), "-o", str(out), "--resolution", f"{res[0]}x{res[1]}",
                 "--max-nodes", "60", "--label-px", "40", "--orientation", "vertical", "--save", str(blend)]) == 0
    assert blend.is_file()
    spec = cone_layout(tracevis3d.load(path), ConeParams(max_nodes=60, resolution=res, label_px=40.0,
                                                         orientation="vertical"))
    img = image_pixels(out)
    scene = bpy.context.scene
    pos = np.array(spec.meta["node_positions"])
    radius = np.array(spec.meta["node_radius"])
    parent = np.array(spec.meta["node_parent"])

    def pixel(p):
        v = world_to_camera_view(scene, scene.camera, Vector(p.tolist()))
        return int((1 - v.y) * res[1]), int(v.x * res[0])

    px = np.array([pixel(p) for p in pos])
    assert np.all((px[:, 0] >= 0) & (px[:, 0] < res[1]) & (px[:, 1] >= 0) & (px[:, 1] < res[0]))
    kids = np.flatnonzero(parent == 0)
    assert kids.size >= 2 and np.all(px[kids, 0] > px[0, 0] + 5)  # apex above the base circle
    drawn = np.abs(img[..., :3] - 1).max(-1) > 0.1
    big = np.flatnonzero(radius > 0.4)
    hit = [drawn[max(r - 1, 0): r + 2, max(c - 1, 0): c + 2].any() for r, c in px[big]]
    assert np.mean(hit) > 0.9, np.mean(hit)
    labels = [k for k, kind in enumerate(spec.labels.kind) if kind == "call"]
    assert len(labels) >= 5
    rgb = img[..., :3]
    dark = (rgb.max(-1) < 0.5) & (rgb.max(-1) - rgb.min(-1) < 0.08)  # grey-black text, not a sphere
    text_hits = 0
    for k in labels:
        r, c = pixel(spec.labels.anchors[k].astype(np.float64))
        w = int(0.5 * 40 * 360 / 1080 * len(spec.labels.texts[k]))
        c -= (w, w // 2, 0)[{2: 0, 1: 1}.get(int(spec.labels.align[k]), 2)]  # the text's left end
        box = dark[max(r - 12, 0): r + 2, max(c, 0): c + w]
        text_hits += box.sum() >= 3
    assert text_hits >= 0.8 * len(labels), (text_hits, len(labels))
    # picking: the ray from the camera through a node's centre hits that node, which maps to its call
    from tracevis3d.blender.pick import pick_ray_detail

    nodes = next(lay for lay in spec.layers if lay.name == "cone_nodes")
    calls = nodes.attributes["call_index"]
    k = int(np.flatnonzero(calls >= 0)[np.argmax(radius[calls >= 0])])
    origin = np.array(scene.camera.matrix_world.translation)
    hit = pick_ray_detail(origin, pos[k] - origin)
    assert hit is not None and hit["kind"] == "box" and hit["call"] == calls[k], (hit, int(calls[k]))


def test_expand_on_demand_keeps_every_child():
    t = random_trace(n_roots=20, fanout=5, max_depth=4, threads=1, seed=5, n_func=30)
    c = calling_context_tree(t, fold_recursion=True)  # the cone's tree (recursion folded by default)
    pr = prune_by_time(c, 10)
    j = int(np.flatnonzero(pr.partial)[-1])
    k = int(pr.node[j])
    call = int(c.first[k])
    full = prune_by_time(c, 10, expand_calls=[call])
    kids = np.flatnonzero(c.parent == k)
    assert set(kids.tolist()) <= set(full.node.tolist())
    assert not full.partial[list(full.node).index(k)]
    spec = cone_layout(t, ConeParams(max_nodes=10, expand=[call]))
    assert spec.meta["n_nodes"] == len(full)


def test_tube_mesh_normal_rings_are_round_and_perpendicular():
    """Twin: every ring vertex lies at its radius from the ring's centre, in the plane
    perpendicular to the curve (straight tubes in any direction, and a closed circle)."""
    from tracevis3d.kernels.tubes import tube_mesh_normal

    rng = np.random.default_rng(4)
    a = rng.normal(size=(20, 3))
    d = rng.normal(size=(20, 3))
    d[0] = (1.0, 0.0, 0.0)  # along the axes too
    d[1] = (0.0, 0.0, -1.0)
    centres = np.stack([a, a + d, a + 2 * d], axis=1)
    half = rng.uniform(0.05, 0.5, size=(20, 3))
    sides = 12
    verts, quads, tube = tube_mesh_normal(centres, half, half, sides)
    v = verts.reshape(20, 3, sides, 3).astype(np.float64)
    off = v - centres[:, :, None, :]
    assert np.allclose(np.linalg.norm(off, axis=-1), half[:, :, None], rtol=1e-5, atol=1e-5)
    u = d / np.linalg.norm(d, axis=1, keepdims=True)
    assert np.allclose(np.einsum("kisj,kj->kis", off, u), 0.0, atol=1e-5)
    assert quads.shape == (20 * 2 * sides, 4) and np.array_equal(np.unique(tube), np.arange(20))
    ang = np.linspace(0, 2 * np.pi, 25)
    ring = np.stack([np.cos(ang), np.sin(ang), np.zeros(25)], 1)[None]
    ring[0, -1] = ring[0, 0]
    rv, _, _ = tube_mesh_normal(ring, np.full((1, 25), 0.1), np.full((1, 25), 0.1), 8)
    rv = rv.reshape(25, 8, 3).astype(np.float64)
    tangent = np.stack([-np.sin(ang), np.cos(ang), np.zeros(25)], 1)
    assert np.allclose(np.einsum("isj,ij->is", rv - ring[0][:, None], tangent), 0.0, atol=2e-2)


def test_highlight_keeps_colour_only_on_matching_nodes(realdata):
    t = tracevis3d.load(realdata / "viztracer-examples" / "different_sorts.json")
    spec = cone_layout(t, ConeParams(max_nodes=60, highlight=["quick_sort"]))
    nodes = next(lay for lay in spec.layers if lay.name == "cone_nodes")
    mats = [nodes.materials[i] for i in nodes.material_index]
    calls = nodes.attributes["call_index"]
    names = [t.function_names[t.func[c]] if c >= 0 else "" for c in calls]
    lit = [not m.endswith("_pale") for m in mats]
    assert spec.meta["n_highlighted"] == sum(1 for n, c in zip(names, calls) if c >= 0 and "quick_sort" in n) > 0
    assert all(lit[k] == ("quick_sort" in names[k] or calls[k] < 0) for k in range(len(calls)))
    with pytest.raises(ValueError, match="highlight"):
        cone_layout(t, ConeParams(highlight=["("]))


def _cover_of(spec) -> float:
    """Share of the image's 40-px cells that the cone tree of ``spec`` (spheres, edges, base
    circles, names) covers, measured as the layout measures its candidates."""
    from types import SimpleNamespace

    from tracevis3d.layout.cone import _tree_occupancy, covered_share
    from tracevis3d.layout.spec import LabelSet

    m = spec.meta
    parent = np.asarray(m["node_parent"])
    kids = np.bincount(parent[1:], minlength=parent.size)
    pruned = SimpleNamespace(parent=parent, child_ptr=np.r_[0, np.cumsum(kids)],
                             child_ids=np.argsort(parent[1:], kind="stable") + 1)
    world = [k for k, s in enumerate(spec.labels.space) if s == "world"]
    lab = spec.labels
    labels = LabelSet([lab.texts[k] for k in world], lab.anchors[world], lab.sizes[world],
                      [lab.material[k] for k in world], lab.align[world], [lab.kind[k] for k in world],
                      lab.call_index[world], lab.rotation[world], ["world"] * len(world))
    shape = (m["orientation"], np.asarray(m["node_positions"]), m["level_height"], spec.camera, None, None)
    return covered_share(_tree_occupancy(shape, pruned, np.asarray(m["node_radius"]), np.asarray(m["base_radius"]),
                                         labels, spec.resolution, m["text_px"]))


def test_covered_share_counts_cells_with_anything():
    from tracevis3d.layout.cone import COVER_CELL_PX, CORNER_CELL_PX, covered_share

    rng = np.random.default_rng(4)
    grid = rng.random((135, 241)) < 0.002  # a partial cell at the right edge
    f = int(round(COVER_CELL_PX / CORNER_CELL_PX))
    cells = [[grid[r:r + f, c:c + f].any() for c in range(0, grid.shape[1], f)] for r in range(0, grid.shape[0], f)]
    assert covered_share(grid) == pytest.approx(np.mean(cells))


def test_cone_tree_is_turned_to_spread_over_the_frame(realdata, monkeypatch):
    """The whole tree is turned about its axis (`cone.SPINS`); the turn chosen covers about
    as much of the frame as the unturned tree, or more (VizTracer's multi-process pool and a
    deep synthetic tree)."""
    import tracevis3d.layout.cone as cone

    traces = [tracevis3d.load(realdata / "viztracer-examples" / "multi_process_pool.json"),
              random_trace(n_roots=6, fanout=4, max_depth=7, threads=3, seed=11, n_func=40)]
    for t in traces:
        turned = cone_layout(t)
        assert turned.meta["spin"] in cone.SPINS
        with monkeypatch.context() as mp:
            mp.setattr(cone, "SPINS", (0.0,))
            plain = cone_layout(t)
        assert plain.meta["spin"] == 0.0
        # within 2 % of the frame: the turn keeps the larger trees first (`SPIN_KEEP_SCORE`), so a
        # turn of a larger tree may cover a little less (the pool's 3 Dummy threads as one node: 1.3 %)
        assert _cover_of(turned) >= _cover_of(plain) - 0.02, (_cover_of(turned), _cover_of(plain))


def _brute_segment_meets_box(a, b, box) -> bool:
    """Whether segment a–b meets the closed box, by sampling: an endpoint inside, or the
    segment crossing one of the box's four sides (exact orientation tests)."""
    x0, y0, x1, y1 = box
    if any(x0 <= p[0] <= x1 and y0 <= p[1] <= y1 for p in (a, b)):
        return True

    def cross(o, p, q):
        return (p[0] - o[0]) * (q[1] - o[1]) - (p[1] - o[1]) * (q[0] - o[0])

    def meets(p1, p2, q1, q2):
        d1, d2, d3, d4 = cross(q1, q2, p1), cross(q1, q2, p2), cross(p1, p2, q1), cross(p1, p2, q2)
        return d1 * d2 <= 0 and d3 * d4 <= 0 and max(min(p1[0], p2[0]), min(q1[0], q2[0])) <= min(
            max(p1[0], p2[0]), max(q1[0], q2[0])) and max(min(p1[1], p2[1]), min(q1[1], q2[1])) <= min(
            max(p1[1], p2[1]), max(q1[1], q2[1]))

    corners = ((x0, y0), (x1, y0), (x1, y1), (x0, y1))
    return any(meets(a, b, corners[i], corners[(i + 1) % 4]) for i in range(4))


def _brute_side_labels(order, ax, ay, align, width, ascent, descent, lim, cx, cy, rad, min_rad, segs, pad,
                       max_labels, over_edges):
    """`kernels.cone.place_side_labels` in plain Python: the greedy loop, box by box."""
    placed, out = [], []
    for k in order:
        if len(out) >= max_labels:
            break
        tries = [(side, True) for side in range(len(align))]
        if over_edges[k]:
            tries += [(side, False) for side in range(len(align))]
        for side, edges in tries:
            x0 = ax[side][k] - (width[k] if align[side] == 2 else 0.5 * width[k] if align[side] == 1 else 0.0)
            box = (x0, ay[side][k] - ascent, x0 + width[k], ay[side][k] + descent)
            if box[0] < lim[0] or box[2] > lim[2] or box[1] < lim[1] or box[3] > lim[3]:
                continue
            if any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in placed):
                continue
            hidden = False
            for j in range(len(rad)):
                dx = max(box[0] - cx[j], cx[j] - box[2], 0.0)
                dy = max(box[1] - cy[j], cy[j] - box[3], 0.0)
                if j != k and rad[j] > min_rad and np.hypot(dx, dy) < rad[j]:
                    hidden = True
            grown = (box[0] - pad, box[1] - pad, box[2] + pad, box[3] + pad)
            if hidden or (edges and any(_brute_segment_meets_box(a, b, grown) for a, b in segs)):
                continue
            placed.append(box)
            out.append((k, side))
            break
    return out


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(0, 60), max_labels=st.integers(0, 30),
       n_places=st.integers(1, 6), n_seg=st.integers(0, 40))
def test_side_labels_equal_brute_force(seed, n, max_labels, n_places, n_seg):
    from tracevis3d.kernels.cone import place_side_labels

    rng = np.random.default_rng(seed)
    cx, cy = rng.uniform(0, 400, n), rng.uniform(0, 300, n)
    rad = rng.uniform(0, 25, n)
    off = rng.uniform(-30, 30, (n_places, 2))
    ax = cx[None, :] + off[:, :1] + rng.uniform(-3, 3, (n_places, n))
    ay = cy[None, :] + off[:, 1:] + rng.uniform(-3, 3, (n_places, n))
    align = rng.integers(0, 3, n_places)
    width = rng.uniform(10, 120, n)
    order = rng.permutation(n).astype(np.int64)
    lim = np.array([0.0, 20.0, 400.0, 300.0])
    seg = rng.uniform(0, 400, (n_seg, 4))
    seg[: n_seg // 4, 2] = seg[: n_seg // 4, 0]  # some vertical and horizontal segments
    seg[n_seg // 4: n_seg // 2, 3] = seg[n_seg // 4: n_seg // 2, 1]
    over = rng.random(n) < 0.3  # nodes whose names may lie over edges when nothing else is free
    node, side = place_side_labels(order, ax, ay, align.astype(np.int64), width, 12.0, 4.0, lim, cx, cy, rad, 5.0,
                                   *(np.ascontiguousarray(seg[:, c]) for c in range(4)), 1.5, max_labels, over)
    segs = [((s[0], s[1]), (s[2], s[3])) for s in seg]
    assert list(zip(node.tolist(), side.tolist())) == _brute_side_labels(
        order.tolist(), ax, ay, align, width, 12.0, 4.0, lim, cx, cy, rad, 5.0, segs, 1.5, max_labels, over)


def test_segment_meets_box_equals_brute_force():
    """`kernels.cone._segment_meets_box` against orientation tests, on segments through,
    beside, inside, touching and along the box (vertical and horizontal ones too)."""
    from tracevis3d.kernels.cone import _segment_meets_box

    rng = np.random.default_rng(3)
    box = (10.0, 20.0, 30.0, 35.0)
    pts = np.concatenate([rng.uniform(0, 40, (400, 4)), rng.integers(0, 5, (400, 4)) * 10.0])
    pts[::7, 2] = pts[::7, 0]
    pts[1::7, 3] = pts[1::7, 1]
    for x0, y0, x1, y1 in pts:
        assert _segment_meets_box(x0, y0, x1, y1, *box) == _brute_segment_meets_box((x0, y0), (x1, y1), box), (
            x0, y0, x1, y1)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), m=st.integers(0, 50))
def test_segment_samples_equal_brute_force(seed, m):
    """`segment_samples` against the numpy sampling it replaced, bit for bit."""
    from tracevis3d.kernels.cone_frame import segment_samples

    rng = np.random.default_rng(seed)
    a, b = rng.uniform(-100, 2000, (m, 2)), rng.uniform(-100, 2000, (m, 2))
    n = rng.integers(2, 40, m).astype(np.int64)
    seg = np.repeat(np.arange(m), n)
    t = (np.arange(seg.size) - np.repeat(np.cumsum(n) - n, n)) / (n[seg] - 1)
    brute = a[seg] + (b[seg] - a[seg]) * t[:, None]
    got = segment_samples(a, b, n)
    assert got.shape == brute.shape
    assert np.array_equal(got, brute)


@pytest.mark.parametrize("name", ["viztracer-examples/multi_process_pool.json", "hta-trace-diff/control.json.gz",
                                  None])
def test_no_name_is_crossed_by_an_edge(realdata, name):
    """Every call's name lies clear of every edge of the tree as the camera sees it (centre to
    centre) and of every partially-expanded stub (`_brute_segment_meets_box`, the kernel's
    brute-force twin).  A thread's name (kind lane) may lie over an edge where no place clear
    of them is free: a thread's node has a fan of edges around it, and multi_process_pool's
    cone named 4 of its 9 threads; now its 3 thread nodes (the pool's forked workers one, the Dummy threads one), each named."""
    from tracevis3d.layout.camera import project
    from tracevis3d.layout.text import ASCENT, DESCENT, text_width

    t = (tracevis3d.load(realdata / name) if name else
         random_trace(n_roots=6, fanout=4, max_depth=7, threads=3, seed=11, n_func=40))
    spec = cone_layout(t)
    res, cam, tpx = spec.resolution, spec.camera, spec.meta["text_px"]
    pos = np.asarray(spec.meta["node_positions"])
    parent = np.asarray(spec.meta["node_parent"])
    centre = project(cam, pos, res)
    child = np.flatnonzero(parent >= 0)
    segs = list(zip(map(tuple, centre[parent[child]]), map(tuple, centre[child])))
    stubs = spec.layer("cone_partial").centres.reshape(-1, 2, 3).astype(np.float64)  # from the sphere on
    segs += list(zip(map(tuple, project(cam, stubs[:, 0], res)), map(tuple, project(cam, stubs[:, 1], res))))
    lab = spec.labels
    names = [j for j in range(len(lab)) if lab.kind[j] == "call" and lab.space[j] == "world"]
    assert len(names) >= 10
    threads = [j for j in range(len(lab)) if lab.kind[j] == "lane" and lab.texts[j] != "all threads"]
    if name == "viztracer-examples/multi_process_pool.json":
        # 9 threads: the main process's 3 Dummy threads one node, the pool's 5 forked workers (their
        # processes of one kind, each its MainThread: `select.kind_of`) another, every node named
        n_thread_nodes = int(np.count_nonzero(parent == 0))
        assert t.n_threads == 9 and n_thread_nodes == 3 and len(threads) >= n_thread_nodes, \
            [lab.texts[j] for j in threads]
        assert any("5× ForkPoolWorker" in lab.texts[j] for j in threads), [lab.texts[j] for j in threads]
    anchor = project(cam, lab.anchors[names], res)
    for j, (x, y) in zip(names, anchor):
        w = text_width(lab.texts[j]) * tpx
        x0 = x - (w if lab.align[j] == 2 else 0.5 * w if lab.align[j] == 1 else 0.0)
        box = (x0 + 0.5, y - ASCENT * tpx + 0.5, x0 + w - 0.5, y + DESCENT * tpx - 0.5)  # float slack
        crossed = [s for s in segs if _brute_segment_meets_box(*s, box)]
        assert not crossed, (lab.texts[j], box, crossed[:2])


@pytest.mark.parametrize("name", ["viztracer-examples/multi_process_pool.json", None])
def test_a_thread_named_far_from_its_sphere_has_a_leader_to_it(realdata, name):
    """Where no place beside its sphere is free, a thread's name (or the root's) goes further
    out (`cone_geometry.FAR_PLACES` on): only those names do (a call's name never leaves its
    sphere), and a leader joins each to its node: one line per far name, from the sphere's
    surface (its centre a radius away, in the plane facing the camera) to within
    `LEADER_GAP_EM` of the name's nearest point (below a name placed above the sphere,
    beside a name placed beside it).  On multi_process_pool "ForkPoolWorker-5: MainThread",
    crossed by edges beside its sphere before, lies clear of them further out; a process
    pool recorded with jinja2 (tools/record_traces.py) has all 6 of its threads named, not 4."""
    from tracevis3d.layout.camera import camera_basis
    from tracevis3d.layout.cone_geometry import FAR_PLACES, LABEL_PLACES, LEADER_GAP_EM
    from tracevis3d.layout.text import ASCENT, DESCENT

    t = (tracevis3d.load(realdata / name) if name else
         random_trace(n_roots=6, fanout=4, max_depth=7, threads=3, seed=11, n_func=40))
    # a node per thread (its pool's forked workers would be one: `select.kind_of`), so its 9
    # thread nodes crowd the root's ring as they did
    spec = cone_layout(t, ConeParams(pack_threads=False))
    lab = spec.labels
    pos = np.asarray(spec.meta["node_positions"])
    radius = np.asarray(spec.meta["node_radius"])
    place, node = lab.attributes["label_place"], lab.attributes["cone_node"]
    far = np.flatnonzero(place >= FAR_PLACES)
    assert all(lab.kind[j] == "lane" for j in far), [(lab.texts[j], lab.kind[j]) for j in far]
    if name:
        assert far.size >= 1
    if far.size == 0:
        assert not any(getattr(L, "name", "") == "cone_leaders" for L in spec.layers)
        return
    leaders = spec.layer("cone_leaders")
    assert len(leaders) == far.size and sorted(leaders.attributes["cone_node"]) == sorted(node[far])
    _, u, f = camera_basis(_to_camera(spec))
    mid = 0.5 * (leaders.left + leaders.right).astype(np.float64)  # (m, 2, 3): the line's two ends
    for k, nd in enumerate(leaders.attributes["cone_node"].tolist()):
        j = int(far[np.flatnonzero(node[far] == nd)[0]])
        a, b = mid[k, 0], mid[k, 1]
        off = a - pos[nd]
        off -= (off @ f) * f
        assert np.isclose(np.linalg.norm(off), radius[nd], rtol=1e-3), (lab.texts[j], np.linalg.norm(off), radius[nd])
        sy = LABEL_PLACES[int(place[j])][0][1]
        lift = -DESCENT if sy > 0 else ASCENT if sy < 0 else 0.5 * (ASCENT - DESCENT)
        near = lab.anchors[j].astype(np.float64) + lift * float(lab.sizes[j]) * u
        gap = b - near
        gap -= (gap @ f) * f
        assert np.linalg.norm(gap) <= LEADER_GAP_EM * float(lab.sizes[j]) * 1.01, lab.texts[j]


def _to_camera(spec):
    """The unit vector from the camera's target to the camera (the spec's camera)."""
    cam = spec.camera
    d = np.asarray(cam.location, np.float64) - np.asarray(cam.target, np.float64)
    return d / np.linalg.norm(d)


def _brute_stretch(vpos, depth, spacing, orientation, k_start, k_max, extent, to_cam, rect, lens_mm, rounds):
    """`kernels.cone_frame.stretch_rounds` as `framed_tree` ran it before: numpy positions, the
    camera of every round by `camera.fit_camera_rect` and the aspect by `camera.project`."""
    from tracevis3d.layout.camera import fit_camera_rect, project
    from tracevis3d.layout.cone_framing import _extent_points, stretched

    res = (1920, 1080)
    aspect = (rect[2] - rect[0]) / max(rect[3] - rect[1], 1.0)
    k = float(np.clip(k_start, 1.0, k_max))
    k_fit = k
    for _ in range(rounds):
        pos = stretched(vpos, spacing, depth, k, orientation)
        pts = _extent_points(pos, None, None, None, orientation, extent)
        cam = fit_camera_rect(pts, to_cam, res, rect, lens_mm=lens_mm)
        pr = project(cam, pts, res)
        got = np.ptp(pr[:, 0]) / max(np.ptp(pr[:, 1]), 1e-9)
        factor = got / aspect if orientation == "vertical" else aspect / got
        k_new = float(np.clip(k * factor, 1.0, k_max))
        k_fit = k
        if abs(k_new / k - 1.0) < 0.01:
            return k, k
        k = k_new
    return k_fit, k


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), orientation=st.sampled_from(["vertical", "horizontal"]),
       spin=st.sampled_from([0.0, 0.7853981633974483, 2.356194490192345]), k_start=st.floats(0.5, 30.0),
       wide=st.booleans())
def test_stretch_rounds_equal_brute_force(seed, orientation, spin, k_start, wide):
    """The stretch found by `kernels.cone_frame.stretch_rounds` is the one the rounds of numpy
    camera fits find, and its camera `camera.fit_camera_rect`'s (to 1e-9: its dot products
    are summed left to right, numpy's by BLAS)."""
    from tracevis3d.kernels.cone_frame import stretch_rounds
    from tracevis3d.layout.cone import GAP, node_radii, pruned_chains
    from tracevis3d.layout.cone_framing import FIT_ROUNDS, _extent_offsets, _fit_frame, level_spacing
    from tracevis3d.layout.camera import view_direction

    t = random_trace(n_roots=4, fanout=3, max_depth=6, threads=2, seed=seed, n_func=30)
    cct = calling_context_tree(t)
    pruned, _ = pruned_chains(cct, ConeParams(max_nodes=120), None, [])
    radius = node_radii(cct.time[pruned.node], float(cct.time[0]))
    _, _, base, angle = cone_footprints(pruned.child_ptr, pruned.child_ids, radius * 1.15, GAP, 12)[:4]
    n_levels = max(int(pruned.depth.max()), 1)
    vpos, _ = cone_positions(pruned.parent, base, angle, 1.0)
    c, s = np.cos(spin), np.sin(spin)
    vpos[:, 0], vpos[:, 1] = c * vpos[:, 0] - s * vpos[:, 1], s * vpos[:, 0] + c * vpos[:, 1]
    depth = np.minimum(pruned.depth, n_levels)
    spacing = level_spacing(pruned.depth, radius, n_levels)
    extent = _extent_offsets(radius, base, pruned.child_ptr, orientation)
    to_cam = view_direction(-35.0 if orientation == "vertical" else -45.0, 22.0 if orientation == "vertical" else 14.0)
    rect = (40.0, 90.0, 1880.0, 1040.0) if wide else (40.0, 90.0, 900.0, 1040.0)
    k_max = 40.0
    around, has, ring = extent
    got = stretch_rounds(vpos, depth.astype(np.int64), spacing, orientation == "horizontal", k_start, k_max, around,
                         has.astype(np.int64), ring if ring is not None else np.zeros((16, 0, 3)),
                         *_fit_frame(to_cam, (1920, 1080), rect, 50.0), (rect[2] - rect[0]) / (rect[3] - rect[1]),
                         FIT_ROUNDS)
    want = _brute_stretch(vpos, depth, spacing, orientation, k_start, k_max, extent, to_cam, rect, 50.0, FIT_ROUNDS)
    assert np.allclose(got[:2], want, rtol=1e-9, atol=0), (got[:2], want)
    # the camera of the positions last fitted: `fit_camera_rect`'s, to rounding
    from tracevis3d.layout.camera import fit_camera_rect
    from tracevis3d.layout.cone_framing import _extent_points, _rect_camera, stretched

    pts = _extent_points(stretched(vpos, spacing, depth, got[0], orientation), None, None, None, orientation, extent)
    cam = fit_camera_rect(pts, to_cam, (1920, 1080), rect, lens_mm=50.0)
    f = _fit_frame(to_cam, (1920, 1080), rect, 50.0)[2]
    nearest = float(((pts - (got[2] - f * got[3])) @ f).min())  # the nearest extent point's depth
    mine = _rect_camera(got[2], got[3], got[4], f, (1920, 1080), rect, 50.0, nearest)
    size = np.linalg.norm(np.asarray(cam.location) - np.asarray(cam.target))
    for field in ("location", "target"):
        assert np.allclose(getattr(mine, field), getattr(cam, field), rtol=0, atol=1e-9 * size), field
    for field in ("clip_start", "clip_end", "shift_x", "shift_y", "lens_mm", "sensor_width_mm", "orthographic"):
        assert np.isclose(getattr(mine, field), getattr(cam, field), rtol=1e-9), field


def test_names_beside_a_sphere_clear_it_anywhere_in_the_image():
    """A name beside its sphere starts beyond the sphere's outline on the image, also near
    the image's edges under a perspective camera (the root at the left edge covered the "a"
    of "all threads": the anchor was brought nearer the camera straight along the view
    direction, which slides a point off the image's centre outwards)."""
    from tracevis3d.layout.camera import camera_basis, fit_camera, project, view_direction, world_per_pixel
    from tracevis3d.layout.cone_geometry import LABEL_GAP_EM, label_places

    to_cam = view_direction(-30.0, 20.0)
    xs = np.linspace(-10.0, 10.0, 9)
    pos = np.stack([xs, np.zeros_like(xs), np.zeros_like(xs)], 1)
    radius = np.full(xs.size, 1.2)
    res = (1920, 1080)
    cam = fit_camera(np.concatenate([pos - 1.5, pos + 1.5]), to_cam, res)
    r, u, f = camera_basis(to_cam)
    size = 0.4 * np.ones(xs.size)
    right, left = label_places(pos, radius, size, r, u, f, cam.location)[:2]
    c = project(cam, pos, res)
    rad_px = radius / world_per_pixel(cam, pos, res)
    gap_px = LABEL_GAP_EM * size / world_per_pixel(cam, pos, res)
    assert (project(cam, right, res)[:, 0] - c[:, 0] >= rad_px + 0.5 * gap_px).all()
    assert (c[:, 0] - project(cam, left, res)[:, 0] >= rad_px + 0.5 * gap_px).all()
    # the old move straight along f put the names near the image's edges onto their spheres
    old = pos + np.outer(radius + LABEL_GAP_EM * size, r) - np.outer(radius, f)
    assert (project(cam, old, res)[:, 0] - c[:, 0] < rad_px).any()


def test_a_recursive_descent_through_two_functions_is_one_node_not_a_stick():
    """walk > <genexpr> > walk > ... 900 deep in three threads, beside a few short calls: with
    only direct recursion folded the context tree was a stick of 1,800 levels per thread whose
    contexts took the whole node budget (7 of 5,516 contexts drawn, three names).  Now the cycle
    folds: walk's node says how deep it went, and the other calls are drawn and named."""
    from tracevis3d.model import Trace

    func, start, end, parent, thread = [], [], [], [], []

    def add(f, s, e, p, t):
        func.append(f), start.append(s), end.append(e), parent.append(p), thread.append(t)
        return len(func) - 1

    for t, depth in enumerate((300, 600, 900)):
        t0 = 10_000.0 * t
        root = add(0, t0, t0 + 9000.0, -1, t)  # work
        for k in range(6):  # short helpers beside the recursion: dumps, loads, ...
            add(3 + k, t0 + 10.0 * k, t0 + 10.0 * k + 8.0, root, t)
        p, s, e = root, t0 + 100.0, t0 + 8900.0
        for d in range(depth):
            p = add(1 if d % 2 == 0 else 2, s, e, p, t)  # walk, <genexpr>, walk, ...
            s, e = s + 0.1, e - 0.1
    names = ["work", "walk", "walk.<genexpr>"] + [f"helper_{k}" for k in range(6)]
    tr = Trace.from_arrays(func, start, end, parent, thread, function_names=names,
                           thread_names=["deep300", "deep600", "deep900"]).check()
    spec = cone_layout(tr)
    # every thread's work, its helpers and the walk cycle (walk › <genexpr>, one chain node)
    assert spec.meta["n_nodes"] >= 3 * (1 + 6 + 1)
    texts = [x for x, k in zip(spec.labels.texts, spec.labels.kind) if k == "call"]
    assert any("walk (450× recursive)" in x for x in texts), texts
    assert any(x.startswith("helper_") for x in texts), texts
    flat = cone_layout(tr, ConeParams(fold_recursion=False))
    assert flat.meta["n_nodes"] < spec.meta["n_nodes"]  # the stick takes the budget


def test_threads_of_a_kind_are_one_node(tmp_path):
    """With more than 8 threads, threads of one kind (a server's thread per request) are one
    node, "12× process_request_thread", and their calls' contexts merge as one thread's do:
    each context's time is the sum over the threads (the brute-force twin: the same tree
    built on a trace whose request threads are renamed to one thread id, by the kernel);
    ``pack_threads=False`` keeps a node per thread."""
    import json

    from tracevis3d.layout.select import thread_groups
    from tracevis3d.layout.cone import GROUPED_NOTE

    def server(same_tid: bool):
        ev = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "MainThread"}},
              {"ph": "X", "name": "serve", "pid": 1, "tid": 1, "ts": 0, "dur": 2000}]
        for k in range(12):
            tid = 100 if same_tid else 100 + k
            ev.append({"ph": "M", "name": "thread_name", "pid": 1, "tid": tid,
                       "args": {"name": f"Thread-{k + 1} (process_request_thread)"}})
            t0 = 10 + 150 * k
            ev.append({"ph": "X", "name": "process_request_thread", "pid": 1, "tid": tid, "ts": t0, "dur": 100 + k})
            for j in range(1 + k % 3):
                ev.append({"ph": "X", "name": f"step{j}", "pid": 1, "tid": tid, "ts": t0 + 5 + 30 * j, "dur": 20 + j})
        path = tmp_path / f"server_{same_tid}.json"
        path.write_text(json.dumps({"traceEvents": ev}))
        return tracevis3d.load(path)

    trace = server(False)
    groups = thread_groups(trace, 8)
    assert groups is not None and sorted(groups[1]) == ["12× process_request_thread", "MainThread"]
    cct = calling_context_tree(trace, thread_groups=groups)
    one = calling_context_tree(server(True))
    assert len(cct) == len(one) == 1 + 2 + 1 + 1 + 3  # root, 2 thread nodes, serve, the handler, 3 steps
    by_path = {}
    for tree in (cct, one):
        paths = {}
        for k in range(1, len(tree)):
            paths[k] = paths.get(int(tree.parent[k]), ()) + ((int(tree.func[k]) if tree.func[k] >= 0 else
                                                              tree.name(k) if tree is cct else "*"),)
        by_path[tree is cct] = {p[1:]: (float(tree.time[k]), int(tree.calls[k])) for k, p in paths.items()
                                if tree.func[k] >= 0 and ("12× process_request_thread" in p or "*" in p)
                                and "serve" not in [trace.function_names[f] for f in p if isinstance(f, int)]}
    assert by_path[True] == by_path[False] and len(by_path[True]) == 4
    spec = cone_layout(trace)
    lanes = [t for t, k in zip(spec.labels.texts, spec.labels.kind) if k == "lane"]
    assert "12× process_request_thread" in lanes, lanes
    assert any(GROUPED_NOTE in t for t in spec.labels.texts) or GROUPED_NOTE in " ".join(spec.labels.texts)
    plain = cone_layout(trace, ConeParams(pack_threads=False))
    assert not any("12×" in t for t in plain.labels.texts) and len(plain.meta["node_parent"]) > len(
        spec.meta["node_parent"])
    assert thread_groups(trace, 13) is None  # 13 threads with calls: grouped only above the limit


def test_a_small_narrow_tree_stays_upright_rather_than_huge_spheres_sideways():
    """A node script's profile: a chain of calls that each take the whole run, a few leaves.
    Turned to grow to the right its spheres came out 163 px in radius against 68 upright (at
    1920x1080) and touched, covering their names; an orientation whose root sphere is more than
    twice the other's and past 4.5 % of the image's height is dropped.  Both within that: the
    larger wins as before (the rule alone, then a chain's layout)."""
    from tracevis3d.layout.cone_framing import OVERSIZE_RATIO, ROOT_SPHERE_MAX_FRAC, oversized_orientation

    res = (1920, 1080)
    cap = ROOT_SPHERE_MAX_FRAC * res[1]
    assert oversized_orientation({"vertical": 68.0, "horizontal": 163.0}, res) == "vertical"
    assert oversized_orientation({"vertical": 161.0, "horizontal": 199.0}, res) is None  # not twice
    assert oversized_orientation({"vertical": 0.6 * cap, "horizontal": 0.95 * cap}, res) is None  # under the cap
    assert oversized_orientation({"vertical": cap, "horizontal": OVERSIZE_RATIO * cap * 1.01}, res) == "vertical"
    import json as _json
    import tempfile

    # the node profile's shape: main › run › load › compile › job over the whole run, then a few
    # calls of a few levels under job (sort, parse, a recursion 8 deep)
    ev = [{"ph": "X", "name": nm, "pid": 1, "tid": 1, "ts": k, "dur": 100_000 - 2 * k}
          for k, nm in enumerate(["main", "run", "load", "compile", "job"])]
    t0 = 10
    for name, dur, depth in (("sortMany", 30_000, 2), ("parseAll", 12_000, 1), ("Tree", 20_000, 8),
                             ("fib", 9_000, 6), ("log", 2_000, 4)):
        for d in range(depth):
            ev.append({"ph": "X", "name": name if d == 0 else f"{name}_{d}", "pid": 1, "tid": 1,
                       "ts": t0 + d, "dur": dur - 2 * d})
        t0 += dur + 5
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        _json.dump(ev, f)
    spec = cone_layout(tracevis3d.load(f.name), ConeParams(resolution=(1920, 1080)))
    assert spec.meta["orientation"] == "vertical", spec.meta["orientation"]


def test_a_chain_label_marks_the_nodes_it_elides():
    """A compressed chain is named by its first and last nodes: "a › b" when b is a's child,
    "a › … › c" when nodes lie between (it read "a › c", as if a called c)."""
    from tracevis3d.layout.cone_geometry import node_label
    from tracevis3d.model import Trace

    # one thread: root a > b > c > d, each the only child of the one before
    func = np.array([0, 1, 2, 3], np.int32)
    start = np.array([0.0, 1.0, 2.0, 3.0])
    end = np.array([10.0, 9.0, 8.0, 7.0])
    parent = np.array([-1, 0, 1, 2], np.int32)
    tr = Trace.from_arrays(func, start, end, parent, np.zeros(4, np.int32),
                           function_names=["mod.a", "mod.b", "mod.c", "mod.d"]).check()
    cct = calling_context_tree(tr)
    node = {int(cct.func[k]): k for k in range(len(cct)) if cct.func[k] >= 0}
    assert node_label(cct, node[0], node[1]) == "a › b"
    assert node_label(cct, node[0], node[2]) == "a › … › c"
    assert node_label(cct, node[1], node[3]) == "b › … › d"
    assert node_label(cct, node[2], None) == "c"
