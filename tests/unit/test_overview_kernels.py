"""The overview's one-pass kernels (issue 79: a 10^7-call icicle in seconds, 10^8 in 12 GB)
against the numpy formulas and kernels they replace, bit for bit: the window's context
(`kernels.fold_context`), the colour stage's sums (`kernels.overview_sums`), the clusters read
where the drawn calls lie (`kernels.overview_clusters`), the occupancy grid and the inset's
reads (`kernels.overview_drawn`), the placement with height codes (`kernels.fold_codes`), the
4-byte sibling runs (`kernels.fold_runs`); and the columns read where indexed
(`fold.LevelHeights`, `icicle.MeasureUnits`) against the arrays they stand for."""
import numpy as np
import pytest

import tracevis3d
from tracevis3d.kernels.dominant import dominant_members
from tracevis3d.kernels.fold import squeezed_levels
from tracevis3d.kernels.fold_codes import squeezed_codes
from tracevis3d.kernels.fold_context import context_flags
from tracevis3d.kernels.fold_runs import sibling_runs32
from tracevis3d.kernels.overview_clusters import drawn_clusters
from tracevis3d.kernels.overview_drawn import covered_of, drawn_occupancy, named_functions_of, unnamed_boxes
from tracevis3d.kernels.overview_sums import (add_at, add_at_marked, categorical_slots, function_areas,
                                              functions_in_slot)
from tracevis3d.kernels.raster import box_pixel_rects, covered_cells_px
from tracevis3d.kernels.runs import sibling_runs
from tracevis3d.layout.cluster import cluster_subpixel_calls

pytestmark = pytest.mark.timeout(300)


def forest(rng, n: int, n_lanes: int = 3) -> tuple:
    """A random forest in pre-order, lanes contiguous: (parent, lane, start, end) with times on
    a coarse grid (ties between calls, children inside their parents)."""
    parent = np.full(n, -1, np.int32)
    lane = np.sort(rng.integers(0, n_lanes, n)).astype(np.int32)
    start, end = np.zeros(n), np.zeros(n)
    stack, clock, last_lane = [], 0.0, -1
    for i in range(n):
        if lane[i] != last_lane:
            stack, clock, last_lane = [], 0.0, lane[i]
        while stack and rng.random() < 0.4:
            stack.pop()
        parent[i] = stack[-1] if stack else -1
        clock += float(rng.integers(0, 3))
        start[i] = clock
        stack.append(i)
    for i in range(n - 1, -1, -1):  # an end at or after its children's
        kids_end = end[i] if end[i] > 0 else start[i]
        end[i] = kids_end + float(rng.integers(0, 3))
        p = parent[i]
        if p >= 0:
            end[p] = max(end[p], end[i])
    return parent, lane, start, end


@pytest.mark.parametrize("seed", range(4))
def test_window_context_flags_are_the_numpy_formula(seed):
    from tracevis3d.layout.fold import PASS_THROUGH_SHARE

    rng = np.random.default_rng(seed)
    parent, lane, start, end = forest(rng, 400)
    kind = (rng.random(400) < 0.1).astype(np.uint8)
    nl = int(lane.max()) + 1
    lo, hi = np.full(nl, np.inf), np.full(nl, -np.inf)
    np.minimum.at(lo, lane, start)
    np.maximum.at(hi, lane, end)
    sp = ((end - start) >= PASS_THROUGH_SHARE * (hi[lane] - lo[lane])) & ((start == lo[lane]) | (end == hi[lane]))
    sp &= kind == 0
    has = np.zeros(400, np.bool_)
    has[parent[sp & (parent >= 0)]] = True
    got = context_flags(start, end, parent, lane, kind, nl, PASS_THROUGH_SHARE, 0)
    assert np.array_equal(got, sp & has)
    assert (sp & has).any() or seed  # the forest makes spanning chains (else the test would not test)


def test_colour_sums_are_np_add_at_in_call_order():
    rng = np.random.default_rng(5)
    n, nf = 5000, 37
    func = rng.integers(0, nf, n).astype(np.int32)
    values = rng.random(n) * 10.0 ** rng.integers(-6, 6, n)  # magnitudes apart: the order shows
    want = np.zeros(nf)
    np.add.at(want, func, values)
    got = np.zeros(nf)
    add_at(got, func, values)
    assert np.array_equal(got, want)
    got2, present = np.zeros(nf), np.zeros(nf, np.bool_)
    add_at_marked(got2, present, func, values)
    assert np.array_equal(got2, want) and np.array_equal(present, np.bincount(func, minlength=nf) > 0)
    kind = rng.integers(0, 3, n).astype(np.uint8)
    start = rng.random(n)
    end = start + values
    folded = rng.random(n) < 0.3
    infra = rng.random(nf) < 0.2
    free = ~((kind == 1) | infra[func])
    area = np.zeros(nf)
    np.add.at(area, func, np.where(free, (end - start) * np.where(folded, 0.25, 1.0), 0.0))
    got3 = np.zeros(nf)
    function_areas(got3, func, kind, start, end, folded, infra, 1, 0.25)
    assert np.array_equal(got3, area)
    idx = rng.permutation(n)[:800]
    slot = rng.integers(0, 4, 800).astype(np.int32)
    marks = np.zeros(nf, np.bool_)
    functions_in_slot(marks, func, idx, slot, 3)
    assert np.array_equal(np.flatnonzero(marks), np.unique(func[idx][slot == 3]))


@pytest.mark.parametrize("idx_dtype, slot_dtype", [(np.int64, np.uint8), (np.int32, np.int32)])
def test_colour_slots_in_one_pass_are_the_numpy_passes(idx_dtype, slot_dtype):
    """`categorical_slots` against the numpy passes `layout.colour._categorical` made (the
    function's slot, "other" for none, the runtime's, then the waits')."""
    rng = np.random.default_rng(9)
    n, nf = 6000, 41
    func = rng.integers(0, nf, n).astype(np.int32)
    kind = rng.integers(0, 4, n).astype(np.uint8)
    idx = np.sort(rng.permutation(n)[:4500]).astype(idx_dtype)
    slot_of_func = np.where(rng.random(nf) < 0.6, rng.integers(0, 30, nf), -1).astype(np.int64)
    infra = rng.random(nf) < 0.2
    wait_kind, infra_slot, wait_slot, other_slot = 2, 30, 31, 32
    s = slot_of_func[func[idx]]
    s = np.where(s < 0, other_slot, s)
    wait = kind[idx] == wait_kind
    s = np.where(infra[func[idx]] & ~wait, infra_slot, s)
    want = np.where(wait, wait_slot, s).astype(slot_dtype)
    got = np.empty(idx.size, slot_dtype)
    categorical_slots(got, func, kind, idx, slot_of_func, infra, wait_kind, wait_slot, infra_slot, other_slot)
    assert np.array_equal(got, want)
    assert {wait_slot, infra_slot, other_slot} <= set(got.tolist())


def _subpixel_clusters_twin(start, end, depth, lane, min_width, max_gap, key):
    """SyncTrace IV-B2's clusters as `layout.cluster.cluster_subpixel_calls` documents them, by
    hand: one open cluster per (lane, depth), a small call joining it when it starts at most
    ``max_gap`` after its end, a wide one closing it; each cluster's longest member (first on
    ties) and uniformity taken from its member list at the end."""
    cluster_of = np.full(start.size, -1, np.int64)
    clusters = []  # [lane, depth, start, end, members]
    open_at, cur = {}, None
    for i in range(start.size):
        if lane[i] != cur:
            open_at, cur = {}, lane[i]
        w = end[i] - start[i]
        if w >= min_width[cur]:
            open_at.pop(depth[i], None)
            continue
        j = open_at.get(depth[i])
        if j is not None and start[i] - clusters[j][3] <= max_gap[cur]:
            clusters[j][3] = max(clusters[j][3], end[i])
            clusters[j][4].append(i)
        else:
            j = len(clusters)
            clusters.append([cur, depth[i], start[i], end[i], [i]])
            open_at[depth[i]] = j
        cluster_of[i] = j
    rep = [m[int(np.argmax(end[m] - start[m]))] for *_, m in clusters]
    uniform = [len(set(key[m].tolist())) == 1 for *_, m in clusters]
    return (cluster_of, [c[0] for c in clusters], [c[1] for c in clusters], [c[2] for c in clusters],
            [c[3] for c in clusters], [len(c[4]) for c in clusters], rep, uniform)


@pytest.mark.parametrize("seed", range(4))
def test_subpixel_clusters_are_their_brute_force_twin(seed):
    from tracevis3d.layout.cluster import cluster_subpixel_calls

    rng = np.random.default_rng(seed)
    n = 3000
    lane = np.sort(rng.integers(0, 3, n)).astype(np.int32)
    depth = rng.integers(0, 5, n).astype(np.int32)
    start = np.cumsum(rng.choice([0.0, 0.1, 0.5, 2.0], n))
    end = start + rng.choice([0.05, 0.2, 0.2, 0.6, 3.0], n) * rng.random(n)
    key = rng.integers(0, 2 + seed, n).astype(np.int32)
    min_width, max_gap = np.array([0.5, 0.3, 1.0]), np.array([0.4, 0.1, 2.0])
    got = cluster_subpixel_calls(start, end, depth, lane, min_width, max_gap, key)
    want = _subpixel_clusters_twin(start, end, depth, lane, min_width, max_gap, key)
    assert np.array_equal(got[0], want[0])
    for g, w in zip(got[1:], want[1:]):
        assert np.array_equal(g, np.asarray(w, g.dtype))
    assert got[7].any() and not got[7].all() and (got[5] > 2).any()  # uniform and mixed, many members


def drawn_reading(rng, whole: bool) -> dict:
    """Drawn calls read where they lie: positions among the shown calls, the shown calls' calls
    (or every call, ``whole``), times to clip, functions and lanes."""
    n_calls = 3000
    parent, lane_c, start, end = forest(rng, n_calls, 3)
    idx = np.arange(n_calls, dtype=np.int32) if whole else np.sort(rng.permutation(n_calls)[:2000]).astype(np.int32)
    n_shown = idx.size
    pos = np.sort(rng.permutation(n_shown)[: n_shown * 3 // 4]).astype(np.int32)
    lane = lane_c[idx]
    func = rng.integers(0, 20, n_calls).astype(np.int32)
    t0, t1 = float(start.min()) + 3.0, float(end.max()) - 3.0
    calls = pos if whole else idx[pos]
    return dict(pos=pos, idx=np.zeros(0, np.int32) if whole else idx, whole=whole, start=start, end=end, func=func,
                lane=lane, t0=t0, t1=t1, s=np.maximum(start[calls], t0), e=np.minimum(end[calls], t1),
                f=func[calls], ln=lane[pos], calls=calls)


@pytest.mark.parametrize("whole", [True, False])
def test_clusters_read_in_place_are_the_lane_kernels(whole):
    rng = np.random.default_rng(11)
    r = drawn_reading(rng, whole)
    n = r["pos"].size
    level = rng.integers(0, 6, n).astype(np.int32)
    min_w = np.array([2.0, 3.0, 1.5])
    got = drawn_clusters(r["pos"], r["idx"], whole, r["start"], r["end"], r["t0"], r["t1"], r["func"], r["lane"],
                         level, min_w, 20)
    # the lane-at-a-time kernels (`geometry.cluster_calls` before)
    ln = r["ln"]
    cuts = np.concatenate(([0], np.flatnonzero(ln[1:] != ln[:-1]) + 1, [n]))
    of, parts, nc = np.full(n, -1, np.int32), [], 0
    for a, b in zip(cuts[:-1], cuts[1:]):
        s, e, f = r["s"][a:b], r["e"][a:b], r["f"][a:b]
        of_l, *cols = cluster_subpixel_calls(s, e, level[a:b], ln[a:b], min_w, min_w, f)
        k = cols[2].size
        dur = e - s
        dom, share, _ = dominant_members(of_l, f.astype(np.int64), dur, np.zeros(0), k, 20)
        member = of_l >= 0
        time = np.bincount(of_l[member], weights=dur[member], minlength=k) if k else np.zeros(0)
        of[a:b] = np.where(member, of_l + np.int32(nc), of_l)
        cols[5] = cols[5] + np.int32(a)
        parts.append(cols + [np.maximum(dom, 0) + a, share, time])
        nc += k
    want = [of] + [np.concatenate(c) for c in zip(*parts)]
    assert len(got) == len(want) and nc > 10
    for x, y in zip(got, want):
        assert x.dtype == y.dtype and np.array_equal(x, y)


@pytest.mark.parametrize("whole", [True, False])
def test_occupancy_of_drawn_boxes_is_the_projected_rectangles(whole):
    from tracevis3d.layout.camera import box_rect_camera, fit_camera_rect

    rng = np.random.default_rng(3)
    r = drawn_reading(rng, whole)
    n_shown = r["lane"].size
    bottom = rng.integers(0, 12, n_shown) * 0.75
    table = np.array([[0.25, 1.0, 1.0, 0.08, 0.4, 1.0]] * 3)
    hcode = rng.integers(0, 6, n_shown).astype(np.uint8)
    ext_unit = 0.12 + 0.88 * rng.random(n_shown)
    z_base, h, depth, scale_t = np.array([0.0, 20.0, 40.0]), 1.3, 4.0, 0.01
    pts = np.array([[0.0, 0.0, 0.0], [r["t1"] * scale_t, 10.0, 60.0]])
    cam = fit_camera_rect(pts, (-3.0, -8.0, 2.0), (1920, 1080), (100, 80, 1800, 1000))
    camera = box_rect_camera(cam, (1920, 1080))
    ny, nx, cell = 135, 240, 8.0
    diff = np.zeros((ny + 1, nx + 1), np.int64)
    pos = r["pos"]
    for a in range(0, pos.size, 500):  # in chunks, as the layout calls it
        drawn_occupancy(diff, pos[a:a + 500], r["idx"], whole, r["start"], r["end"], r["t0"], r["t1"], r["lane"],
                        bottom, hcode, table, ext_unit[pos[a:a + 500]], z_base, h, depth, scale_t, 0.06, 0.94,
                        *camera, ny, nx, cell)
    got = covered_of(diff, ny, nx)
    b = z_base[r["ln"]] + bottom[pos] * h
    g = table[r["ln"], hcode[pos]] * h
    rx0, ry0, rx1, ry1 = box_pixel_rects((r["s"] - r["t0"]) * scale_t, (r["e"] - r["t0"]) * scale_t,
                                         depth * ext_unit[pos], b + 0.06 * g, b + 0.94 * g, *camera)
    want = covered_cells_px(ny, nx, cell, rx0, ry0, rx1 + 1.0, ry1 + 1.0)
    assert want.any() and np.array_equal(got, want)


@pytest.mark.parametrize("whole", [True, False])
def test_inset_reads_in_place_are_the_numpy_formulas(whole):
    rng = np.random.default_rng(8)
    r = drawn_reading(rng, whole)
    n_calls = r["start"].size
    orig = rng.permutation(10 * n_calls)[:n_calls].astype(np.int64)
    call_id = orig[r["calls"]]
    named_ids = rng.choice(call_id, 40)
    lo = int(named_ids.min())
    table = np.zeros(int(named_ids.max()) - lo + 1, np.bool_)
    table[named_ids - lo] = True
    present = np.zeros(20, np.bool_)
    named_functions_of(r["pos"], r["idx"], whole, orig, r["func"], lo, table, present)
    assert np.array_equal(np.flatnonzero(present), np.unique(r["f"][np.isin(call_id, named_ids)]))
    cluster_of = np.where(rng.random(r["pos"].size) < 0.5, -1, 0).astype(np.int32)
    folded = rng.random(r["lane"].size) < 0.2
    infra = rng.random(20) < 0.2
    named_func = rng.random(20) < 0.3
    us_per_px = np.array([0.5, 1.0, 2.0])
    k, w = unnamed_boxes(r["pos"], r["idx"], whole, r["start"], r["end"], r["t0"], r["t1"], r["func"], r["lane"],
                         folded, cluster_of, infra, named_func, us_per_px)
    width = (r["e"] - r["s"]) / us_per_px[r["ln"]]
    keep = (cluster_of < 0) & ~folded[r["pos"]] & ~infra[r["f"]] & ~named_func[r["f"]] & (width >= 1.0)
    assert k.size > 5 and np.array_equal(k, np.flatnonzero(keep)) and np.array_equal(w, width[keep])


@pytest.mark.parametrize("seed", range(3))
def test_placement_with_height_codes_is_squeezed_levels(seed):
    rng = np.random.default_rng(seed)
    n = 2000
    parent, lane, start, end = forest(rng, n, 3)
    name_px = rng.random(n) * 100
    width_px = rng.random(n) * 100
    infra, passing, wide = rng.random(n) < 0.15, rng.random(n) < 0.3, rng.random(n) < 0.5
    unfold, thr = np.array([30.0, 60.0, np.inf]), np.array([20.0, 50.0, 10.0])
    heights = rng.random((3, 5))
    want = squeezed_levels(parent, lane, name_px, width_px, infra, passing, wide, unfold, thr, heights)
    bottom, code, eff, run_start, run_levels, top, table = squeezed_codes(parent, lane, name_px, width_px, infra,
                                                                          passing, wide, unfold, thr, heights)
    got = (bottom, table[lane, code], eff, run_start, run_levels, top)
    for x, y in zip(got, want):
        assert x.dtype == y.dtype and np.array_equal(x, y)
    assert (run_levels >= 2).any() and eff.any()


def test_sibling_runs_with_four_byte_heads_are_sibling_runs():
    rng = np.random.default_rng(2)
    parent, lane, start, end = forest(rng, 3000, 3)
    func = rng.integers(0, 3, 3000).astype(np.int32)
    gap = np.array([1.0, 0.5, 2.0])
    got, want = sibling_runs32(func, start, end, parent, lane, gap), sibling_runs(func, start, end, parent, lane, gap)
    assert got[0].dtype == np.int32 and got[2].dtype == np.int32
    for x, y in zip(got, want):
        assert np.array_equal(x, y)
    assert (want[2] >= 2).any()


def test_columns_read_where_indexed_are_their_arrays():
    from tracevis3d.layout.fold import LevelHeights
    from tracevis3d.layout.icicle import MeasureUnits, measure_calls

    rng = np.random.default_rng(4)
    lane = np.sort(rng.integers(0, 3, 500)).astype(np.int32)
    code = rng.integers(0, 6, 500).astype(np.uint8)
    table = rng.random((3, 6))
    heights = LevelHeights(code, lane, table)
    whole = table[lane, code]
    assert np.array_equal(np.asarray(heights), whole) and heights.size == 500
    some = rng.integers(0, 500, 50)
    assert np.array_equal(heights[some], whole[some]) and heights[7] == whole[7]
    assert np.array_equal(heights[10:40], whole[10:40]) and np.array_equal(heights + 1.0, whole + 1.0)
    tr = tracevis3d.synthetic(3000, threads=2, seed=5)
    idx = np.sort(rng.permutation(len(tr))[:2000]).astype(np.int32)
    for which in ("constant", "inclusive", "self", "calls"):
        mv = measure_calls(tr, idx, which)
        mmax = float(mv.max())
        want = 0.12 + 0.88 * (mv / mmax)
        units = MeasureUnits(tr, idx, which)
        assert units.mmax == mmax and np.array_equal(np.asarray(units), want)
        assert np.array_equal(units[some], want[some]) and units[9] == want[9]


def test_max_at_and_lane_units_are_their_numpy_forms():
    from tracevis3d.kernels.overview_sums import max_at
    from tracevis3d.layout.icicle import MeasureUnits, per_lane_max

    rng = np.random.default_rng(6)
    out, want = np.zeros(9), np.zeros(9)
    index, values = rng.integers(0, 9, 400), rng.random(400) * 5 - 1
    np.maximum.at(want, index, values)
    max_at(out, index, values)
    assert np.array_equal(out, want)
    tr = tracevis3d.synthetic(4000, threads=3, seed=2)
    idx = np.arange(len(tr), dtype=np.int32)
    lane = tr.thread.astype(np.int32)  # lanes contiguous: a thread a lane
    drawn = rng.random(len(tr)) < 0.7
    drawn[lane == 2] = False  # a lane without drawn calls: 0
    for which in ("self", "inclusive", "constant"):
        units = MeasureUnits(tr, idx, which, drawn, lane, 4)
        on = np.flatnonzero(drawn)
        assert np.array_equal(units.lane_units(), per_lane_max(np.asarray(units)[on], lane[on], 4))


@pytest.mark.parametrize("seed", range(3))
def test_rows_and_name_widths_are_child_rows_and_name_widths(seed):
    from tracevis3d.kernels.fold_runs import rows_and_name_widths
    from tracevis3d.kernels.runs import child_rows, name_widths
    from tracevis3d.kernels.tree import depth_and_end_from_parent

    rng = np.random.default_rng(seed)
    parent, lane, start, end = forest(rng, 4000, 3)
    func = rng.integers(0, 4, 4000).astype(np.int32)  # few functions: dominated rows, ties
    end_index = depth_and_end_from_parent(parent)[1]
    head, run_end, _ = sibling_runs(func, start, end, parent, lane, np.array([1.0, 0.5, 2.0]))
    width_px = rng.random(4000) * 30
    rows = child_rows(func, start, end, end_index, 4)
    want_px, want_named = name_widths(parent, func, start, width_px, head, run_end, *rows[:5], rows[6], 0.5, 0.5, 3.0)
    px, named, got_rows, calls = rows_and_name_widths(parent, end_index, head, func, start, end, width_px, run_end, 4,
                                                      0.5, 0.5, 3.0)
    assert np.array_equal(px, want_px) and np.array_equal(named, want_named) and named.sum() > 3
    assert np.array_equal(calls, np.flatnonzero(want_named))
    for x, y in zip(got_rows, rows):
        assert x.dtype == y.dtype and np.array_equal(x, y[calls])


def test_lane_busy_in_one_pass_is_the_bincount_of_self_times():
    from tracevis3d.kernels.overview_sums import lane_busy_times
    from tracevis3d.model import KIND_WAIT

    tr = tracevis3d.synthetic(5000, threads=3, seed=7, sync=True)
    for idx in (np.arange(len(tr), dtype=np.int32), np.sort(np.random.default_rng(1).permutation(len(tr))[:3000])):
        lane = tr.thread[idx].astype(np.int32)
        st = np.where(tr.kind[idx] == KIND_WAIT, 0.0, np.maximum(tr.self_time_of(idx), 0.0))
        want = np.bincount(lane, weights=st, minlength=3)[:3]
        got = lane_busy_times(tr.start, tr.end, tr.end_index, tr.kind, idx, idx.size == len(tr), lane, 3, KIND_WAIT)
        assert np.array_equal(got, want) and (tr.kind[idx] == KIND_WAIT).any()


def test_the_overview_on_several_threads_draws_the_figure_of_one(monkeypatch):
    """`overview_pool.in_parts` (the occupancy grid and the measure's maxima in parts on a pool)
    on three threads, every part small: the figure of one thread, array for array."""
    import dataclasses

    from tracevis3d.layout import icicle, icicle_measure, overview_pool
    from tracevis3d.params.icicle import IcicleParams

    monkeypatch.setattr(icicle, "GATHERED_MAX_CALLS", 0)  # the drawn calls read in place (a 10^8 figure's)
    monkeypatch.setattr(overview_pool, "MIN_PARALLEL_CALLS", 0)
    monkeypatch.setattr(icicle, "OCCUPANCY_CHUNK", 997)
    monkeypatch.setattr(icicle_measure, "MEASURE_CHUNK", 1009)
    tr = tracevis3d.synthetic(20000, threads=3, seed=9)

    def arrays(n_threads):
        monkeypatch.setenv("TRACEVIS3D_LAYOUT_THREADS", str(n_threads))
        spec = icicle.icicle_layout(tr, IcicleParams())
        out = {"meta": repr(sorted(spec.meta.items())), "labels": repr(spec.labels.texts)}
        for k, layer in enumerate(spec.layers):
            for f in dataclasses.fields(layer):
                v = getattr(layer, f.name)
                for name, a in (v.items() if isinstance(v, dict) else [("", v)]):
                    out[f"{k}.{f.name}.{name}"] = a
        return out

    one, three = arrays(1), arrays(3)
    assert one.keys() == three.keys()
    for k in one:
        a, b = one[k], three[k]
        assert (np.array_equal(a, b) and np.asarray(a).dtype == np.asarray(b).dtype) if isinstance(a, np.ndarray) \
            else a == b, k
