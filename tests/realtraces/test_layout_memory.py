"""The icicle's layout stages without arrays over every drawn call where they read a few (issue
70 item 4, the overview of a mapped 10^8-call file): on real recordings, `lanes_occupancy`
projecting the drawn calls a chunk at a time gives the same grid and the same figure, array
for array, as one projection of them all; the faces read at indices (`Drawn.face_low_at`,
`face_high_at`, `AtIndex`, what the label, callout, recursion and inset stages now read) are
the elements of the whole arrays (`Drawn.face_low`, `face_high`), bit for bit."""
import dataclasses

import numpy as np
import pytest

import tracevis3d
import tracevis3d.layout.icicle as icicle
from tracevis3d.layout import IcicleParams, icicle_layout
from tracevis3d.layout.geometry import AtIndex

RECORDINGS = ["viztracer-examples/different_sorts.json", "viztracer-examples/multi_process_pool.json"]


def spec_arrays(spec) -> dict:
    """Every array and list of the SceneSpec's layers and labels, and its meta, by name."""
    out = {"meta": repr(sorted(spec.meta.items())), "legend": repr(spec.legend), "camera": repr(spec.camera)}

    def take(prefix, obj):
        for f in dataclasses.fields(obj):
            v = getattr(obj, f.name)
            if isinstance(v, dict):
                for k, a in v.items():
                    out[f"{prefix}{f.name}.{k}"] = a
            else:
                out[prefix + f.name] = v

    for k, layer in enumerate(spec.layers):
        take(f"layer{k}.", layer)
    take("labels.", spec.labels)
    return out


def same(a, b) -> bool:
    from tracevis3d.layout.fold import LevelHeights  # a fold's heights, read where indexed

    if isinstance(a, (np.ndarray, LevelHeights)) or isinstance(b, (np.ndarray, LevelHeights)):
        a, b = np.asarray(a), np.asarray(b)
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    return a == b


def layout_and_grids(trace, monkeypatch, chunk: int) -> tuple:
    """The icicle of ``trace`` with `lanes_occupancy` projecting ``chunk`` drawn calls at a time,
    the grids it returned and the figure's stages."""
    grids, stages = [], {}
    occupancy = icicle.lanes_occupancy

    def keep(*args, **kw):
        grids.append(occupancy(*args, **kw))
        return grids[-1]

    monkeypatch.setattr(icicle, "OCCUPANCY_CHUNK", chunk)
    monkeypatch.setattr(icicle, "lanes_occupancy", keep)
    spec = icicle_layout(trace, IcicleParams(), stages_out=stages)
    monkeypatch.setattr(icicle, "lanes_occupancy", occupancy)
    return spec, grids, stages["stages"]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", RECORDINGS)
def test_occupancy_in_chunks_draws_the_same_figure(realdata, monkeypatch, name):
    trace = tracevis3d.load(realdata / name)
    whole, whole_grids, st = layout_and_grids(trace, monkeypatch, 1 << 40)  # one projection of every call
    assert st.drawn.idx.size > 3 * 97  # several chunks below
    chunked, chunked_grids, _ = layout_and_grids(trace, monkeypatch, 97)
    assert len(whole_grids) == len(chunked_grids) >= 1
    for a, b in zip(whole_grids, chunked_grids):
        assert a.any() and a.dtype == b.dtype and np.array_equal(a, b)
    a, b = spec_arrays(whole), spec_arrays(chunked)
    assert a.keys() == b.keys()
    assert [k for k in a if not same(a[k], b[k])] == []


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", RECORDINGS)
def test_placed_boxes_read_at_indices_are_the_whole_arrays_elements(realdata, name):
    """`Drawn.place` reads the boxes' z, height and depth where indexed (`AtIndex`): the same
    floats as the arrays over every drawn call it made before, and `face_low_at` /
    `face_high_at` those of the whole faces."""
    from tracevis3d.layout.frame import frame_lanes
    from tracevis3d.layout.geometry import BOX_FILL
    from tracevis3d.layout.icicle import text_px

    params = IcicleParams().validate()
    stages = {}
    icicle_layout(tracevis3d.load(realdata / name), params, stages_out=stages)
    st = stages["stages"]
    d = st.drawn
    frame = frame_lanes(st.lane_levels, st.lane_ext, (0.0, 0.0) + tuple(params.resolution), params,
                        text_px(params), 0.0, st.sel.t0, st.sel.t1)
    d.place(frame)
    bottom = frame.z_base[d.lane] + d.level_bottom * frame.h  # the arrays `place` made before
    height = d.level_height * frame.h
    ext = frame.depth * d.ext_unit
    low, high = bottom + (1 - BOX_FILL) / 2 * height, bottom + (1 + BOX_FILL) / 2 * height
    n = d.idx.size
    assert n > 1 and (high > low).all() and (ext > 0).all()
    rng = np.random.default_rng(7)
    picks = [np.arange(n), rng.integers(0, n, 50), rng.random(n) < 0.3, np.zeros(0, np.int64), slice(3, n // 2)]
    for k in picks:
        for lazy, whole in ((d.bottom, bottom), (d.height, height), (d.ext, ext)):
            assert np.array_equal(lazy[k], whole[k])
        assert np.array_equal(d.face_low_at(k), low[k]) and np.array_equal(d.face_high_at(k), high[k])
        assert np.array_equal(AtIndex(d.face_high_at)[k], high[k])
    assert np.array_equal(d.face_low, low) and np.array_equal(d.face_high, high)
    for j in (0, n // 2, n - 1):  # one call: the same float as the array's element
        assert d.face_low_at(j) == low[j] and float(d.bottom[j]) == float(bottom[j])


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", RECORDINGS)
def test_fold_keeps_runs_and_rows_at_their_calls_only(realdata, name):
    """`Folding.rep_*` and ``rows`` hold the kernels' per-call columns at the run heads (2 calls
    or more) and at the named rows' calls: the same values, nothing else."""
    from tracevis3d.kernels.runs import child_rows, sibling_runs
    from tracevis3d.kernels.tree import depth_and_end_from_parent

    stages = {}
    icicle_layout(tracevis3d.load(realdata / name), IcicleParams(), stages_out=stages)
    st = stages["stages"]
    sel, fold = st.sel, st.fold
    tr, idx = sel.trace, sel.idx
    func, start, end = tr.func[idx], tr.start[idx], tr.end[idx]
    us_per_px = (sel.t1 - sel.t0) / (0.8 * IcicleParams().resolution[0])  # as `icicle_stages` passes it
    _, rep_end, rep_count = sibling_runs(func, start, end, sel.parent, sel.lane,
                                         np.full(max(sel.lane_threads.size, 1), float(us_per_px)))
    heads = np.flatnonzero(rep_count >= 2)
    assert heads.size > 0 and np.array_equal(fold.rep_heads, heads)
    assert np.array_equal(fold.rep_end, rep_end[heads]) and np.array_equal(fold.rep_count, rep_count[heads])
    rows = child_rows(func, start, end, depth_and_end_from_parent(sel.parent)[1], tr.n_functions)
    named = np.flatnonzero(fold.row_named)
    assert np.array_equal(fold.row_calls, named) and len(fold.rows) == len(rows) == 7
    for kept, dense in zip(fold.rows, rows):
        assert kept.dtype == dense.dtype and np.array_equal(kept, dense[named])


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", RECORDINGS)
def test_position_among_drawn_calls_is_the_table_of_every_shown_call(realdata, name):
    """`Drawn.position_of` (a search) gives what a table over every shown call gave: the drawn
    call's position, -1 for a shown call not drawn (folded away)."""
    stages = {}
    icicle_layout(tracevis3d.load(realdata / name), IcicleParams(fold="3:5"), stages_out=stages)
    st = stages["stages"]
    d, n_shown = st.drawn, st.sel.idx.size
    table = np.full(n_shown, -1, np.int64)
    table[d.local] = np.arange(d.local.size)
    assert 0 < d.local.size < n_shown  # some shown calls folded away
    every = np.arange(n_shown)
    got = d.position_of(every)
    assert got.dtype == np.int64 and np.array_equal(got, table)
    some = np.random.default_rng(3).integers(0, n_shown, 40)
    assert np.array_equal(d.position_of(some), table[some])
    assert all(int(d.position_of(int(k))) == table[k] for k in some[:10])


def drawn_and_spec(trace, monkeypatch, gathered: bool) -> tuple:
    """The icicle of ``trace`` with its drawn calls gathered into arrays or read from the shown
    calls where indexed (`geometry.shown_drawn_calls`), and its stages."""
    monkeypatch.setattr(icicle, "GATHERED_MAX_CALLS", 1 << 62 if gathered else 0)
    stages = {}
    spec = icicle_layout(trace, IcicleParams(), stages_out=stages)
    return spec, stages["stages"]


DRAWN_FIELDS = ("idx", "call_id", "local", "lane", "start", "end", "func", "slot", "folded", "run_levels",
                "level_bottom", "level_height", "level_id", "ext_unit")


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", RECORDINGS)
def test_drawn_calls_read_where_indexed_draw_the_same_figure(realdata, monkeypatch, name):
    """A figure whose drawn calls hold only ``local`` and ``level_id`` (the rest `ShownColumn`s,
    what a whole-trace overview of 10^8 calls uses) is the gathered figure, array for array;
    each column, whole and at indices, is the gathered array's values and dtype."""
    from tracevis3d.layout.geometry import ShownColumn

    trace = tracevis3d.load(realdata / name)
    spec_g, st_g = drawn_and_spec(trace, monkeypatch, True)
    spec_s, st_s = drawn_and_spec(trace, monkeypatch, False)
    a, b = spec_arrays(spec_g), spec_arrays(spec_s)
    assert a.keys() == b.keys()
    assert [k for k in a if not same(a[k], b[k])] == []
    assert [k for k, v in b.items() if isinstance(v, ShownColumn)] == []  # the figure holds arrays
    g, s = st_g.drawn, st_s.drawn
    n = g.idx.size
    assert n > 100 and isinstance(s.start, ShownColumn) and isinstance(s.local, np.ndarray)
    rng = np.random.default_rng(11)
    picks = [rng.integers(0, n, 60), rng.random(n) < 0.4, slice(5, n // 3), np.zeros(0, np.int64)]
    for f in DRAWN_FIELDS:
        whole_g, col = getattr(g, f), getattr(s, f)
        whole_s = np.asarray(col)
        assert whole_s.dtype == whole_g.dtype or f == "local", f  # local: int32 positions where they fit
        assert np.array_equal(whole_s, whole_g), f
        for k in picks:
            assert np.array_equal(col[k], whole_g[k]), f
        for j in (0, n - 1):
            assert col[j] == whole_g[j], f
    with pytest.raises(TypeError):
        s.start[0] = 0.0  # nothing to write into


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", RECORDINGS)
def test_recursive_calls_a_run_of_trees_at_a_time_are_the_kernels(realdata, name):
    """`recursion.recursive_calls`, `recursion_depth` run over runs of whole trees (a few
    calls each here, cut at roots), gives the recursive calls and their chains' outermost
    calls that one run of the kernel over every shown call gives."""
    from tracevis3d.kernels.recursion import recursion_depth
    from tracevis3d.layout.recursion import recursive_calls
    from tracevis3d.naming import function_table

    stages = {}
    trace = tracevis3d.load(realdata / name)
    icicle_layout(trace, IcicleParams(), stages_out=stages)
    sel = stages["stages"].sel
    tr = sel.trace
    func = tr.func[sel.idx]
    rec, outer = recursion_depth(func, sel.parent)
    infra = np.asarray(function_table(tr).infra, np.bool_)
    for mask in (None, infra):
        keep = rec > 1 if mask is None else (rec > 1) & ~mask[func]
        want = np.flatnonzero(keep)
        for chunk in (1, 7, 97, 1 << 40):
            deep, out = recursive_calls(tr.func, sel.idx, sel.parent, mask, chunk=chunk)
            assert np.array_equal(deep, want) and np.array_equal(out, outer[want]), chunk
    assert (rec > 1).any() and (sel.parent < 0).sum() > 2  # recursions, and several trees to cut at


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", RECORDINGS)
def test_clusters_a_lane_at_a_time_are_one_pass_over_every_call(realdata, name):
    """`geometry.cluster_calls` (one lane's drawn calls at a time) gives the clusters, their
    numbering, members, dominant calls and times of one `cluster_subpixel_calls` pass over
    every drawn call, field for field."""
    from tracevis3d.layout.cluster import cluster_subpixel_calls
    from tracevis3d.layout.frame import frame_lanes
    from tracevis3d.layout.geometry import cluster_calls, dominant_member
    from tracevis3d.layout.icicle import text_px

    params = IcicleParams().validate()
    stages = {}
    icicle_layout(tracevis3d.load(realdata / name), params, stages_out=stages)
    st = stages["stages"]
    d = st.drawn
    frame = frame_lanes(st.lane_levels, st.lane_ext, (0.0, 0.0) + tuple(params.resolution), params,
                        text_px(params), 0.0, st.sel.t0, st.sel.t1)
    for px in (params.cluster_px, 40.0):  # the figure's pixel, and wide enough for clusters in every lane
        min_w = (px * frame.us_per_px).astype(np.float64)
        of, *per_cluster = cluster_subpixel_calls(d.start, d.end, d.level_id, d.lane, min_w, min_w, d.func)
        nc = per_cluster[0].size
        dur = d.end - d.start
        dom, share = dominant_member(of, d.func, dur, nc)
        time = np.bincount(of[of >= 0], weights=dur[of >= 0], minlength=nc)
        cl = cluster_calls(d, frame, px)
        want = [of] + per_cluster + [dom, share, time]
        got = [cl.cluster_of, cl.lane, cl.level, cl.start, cl.end, cl.count, cl.rep, cl.uniform, cl.dom,
               cl.dom_share, cl.time]
        assert nc > 0 and len(np.unique(cl.lane)) >= (min(2, len(np.unique(d.lane))) if px > 1 else 1)
        for k, (a, b) in enumerate(zip(want, got)):
            assert a.dtype == b.dtype and np.array_equal(a, b), k


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", RECORDINGS)
def test_fold_rows_over_runs_of_trees_are_one_pass_over_every_call(realdata, monkeypatch, name):
    """The fold's rows of children and name widths made over runs of whole trees (a few calls
    each here, `fold.name_width_runs`) give the fold of one pass over every shown call,
    field for field, and so the same figure."""
    import tracevis3d.layout.fold as fold

    trace = tracevis3d.load(realdata / name)
    out = []
    for chunk in (1 << 40, 97, 1):
        monkeypatch.setattr(fold, "NAME_WIDTH_CHUNK_CALLS", chunk)
        stages = {}
        spec = icicle_layout(trace, IcicleParams(), stages_out=stages)
        out.append((spec_arrays(spec), stages["stages"].fold))
    from tracevis3d.kernels.runs import sibling_runs

    sel = stages["stages"].sel
    tr, idx = sel.trace, sel.idx
    us_per_px = (sel.t1 - sel.t0) / (0.8 * IcicleParams().resolution[0])  # as `icicle_stages` passes it
    head = sibling_runs(tr.func[idx], tr.start[idx], tr.end[idx], sel.parent, sel.lane,
                        np.full(max(sel.lane_threads.size, 1), float(us_per_px)))[0]
    assert len(fold.name_width_runs(sel.parent, head, 1)) >= 3  # cut into several runs
    (a, fa), *rest = out
    for b, fb in rest:
        assert [k for k in a if not same(a[k], b[k])] == []
        for f in dataclasses.fields(fa):
            x, y = getattr(fa, f.name), getattr(fb, f.name)
            if isinstance(x, tuple):
                assert len(x) == len(y) and all(same(u, v) for u, v in zip(x, y)), f.name
            else:
                assert same(x, y), f.name


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", RECORDINGS)
def test_box_colour_ranges_a_chunk_at_a_time_name_the_same(realdata, monkeypatch, name):
    """The label stage's lowest and highest box colour per function, found a few drawn calls
    at a time (`labels.RANGE_CHUNK_CALLS`), names the figure as one pass over them all."""
    import tracevis3d.kernels.drawn as drawn_kernels
    import tracevis3d.layout.labels as labels

    trace = tracevis3d.load(realdata / name)
    calls = []
    whole = drawn_kernels.range_by_key

    def counted(*args):
        calls.append(args[0].size)
        return whole(*args)

    monkeypatch.setattr(drawn_kernels, "range_by_key", counted)
    a = spec_arrays(icicle_layout(trace, IcicleParams()))
    n_whole = len(calls)
    monkeypatch.setattr(labels, "RANGE_CHUNK_CALLS", 7)
    b = spec_arrays(icicle_layout(trace, IcicleParams()))
    assert n_whole >= 1 and len(calls) - n_whole > 3 * n_whole  # the ranges were found in chunks
    assert a.keys() == b.keys() and [k for k in a if not same(a[k], b[k])] == []
