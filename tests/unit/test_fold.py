"""Folding, runs, rows, hiding and synchronisation kernels against brute-force twins, and the
documented fold rule on hand-made traces (bpy-free)."""
import numpy as np
from hypothesis import given, settings, strategies as st

from tracevis3d.kernels.fold import dominant_child_share, fold_chain_length, place_folded_levels
from tracevis3d.kernels.reshape import nearest_kept_ancestor
from tracevis3d.kernels.runs import child_rows, sibling_runs
from tracevis3d.kernels.sync import kind_durations
from tracevis3d.layout import IcicleParams, icicle_layout
from tracevis3d.layout.fold import PASS_THROUGH_SHARE, auto_fold_rule, fold_levels
from tracevis3d.model import KIND_IO, KIND_WAIT, Trace
from tracevis3d.transform import merge_calls
from tree_factory import random_trace


def _children(parent):
    ch = {i: [] for i in range(len(parent))}
    for i, p in enumerate(parent):
        if p >= 0:
            ch[int(p)].append(i)
    return ch


# ------------------------------------------------------------------------------ twins
def share_brute(start, end, parent):
    ch = _children(parent)
    out = []
    for i in range(len(parent)):
        if not ch[i]:
            out.append(0.0)
            continue
        d = end[i] - start[i]
        best = max(end[c] - start[c] for c in ch[i])
        out.append(best / d if d > 0 else 1.0)
    return np.array(out)


def chain_brute(folded, parent):
    ch = _children(parent)

    def down(i):
        if not folded[i]:
            return 0
        return 1 + max([down(c) for c in ch[i] if folded[c]], default=0)

    return np.array([down(i) for i in range(len(parent))])


def place_brute(folded, parent, lane, band_class, heights, base):
    """The documented rule of place_folded_levels, written from the top down."""
    n = len(parent)
    down = chain_brute(folded, parent)
    bottom, height = np.zeros(n), np.ones(n)
    eff = np.zeros(n, bool)
    start = np.full(n, -1)
    levels = np.zeros(n, int)
    for i in range(n):
        p = parent[i]
        if p >= 0:
            r = start[p] if eff[p] else p
            bottom[i] = bottom[r] + height[r]
        if folded[i] and p >= 0 and eff[p]:
            eff[i], start[i] = True, start[p]
            bottom[i], height[i] = bottom[start[p]], height[start[p]]
        elif folded[i] and not (down[i] == 1 and band_class[i] >= 1):
            eff[i], start[i], levels[i] = True, i, down[i]
            height[i] = heights[lane[i]][band_class[i]]
        else:
            height[i] = base[i]
    return bottom, height, eff, start, levels


def sync_brute(kind, start, end, parent, which):
    ch = _children(parent)

    def dur(i):
        if kind[i] == which:
            return end[i] - start[i]
        return sum(dur(c) for c in ch[i])

    return np.array([dur(i) for i in range(len(parent))])


def runs_brute(func, start, end, parent, lane, gap):
    n = len(func)
    head = list(range(n))
    prev = {}
    for i in range(n):
        key = ("p", int(parent[i])) if parent[i] >= 0 else ("l", int(lane[i]))
        j = prev.get(key)
        if j is not None and func[j] == func[i] and start[i] - end[j] <= gap[lane[i]]:
            head[i] = head[j]
        prev[key] = i
    return np.array(head)


def rows_brute(func, start, end, parent):
    ch = _children(parent)
    out = []
    for i in range(len(parent)):
        c = ch[i]
        if not c:
            out.append((0, -1, 0.0, 0))
            continue
        t = {}
        k = {}
        for j in c:
            t[func[j]] = t.get(func[j], 0.0) + end[j] - start[j]
            k[func[j]] = k.get(func[j], 0) + 1
        best = max(t.values())
        out.append((len(c), best, sum(t.values()), [k[f] for f in t if t[f] == best]))
    return out


# ------------------------------------------------------------------------------ kernels
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), pt=st.sampled_from([0.0, 0.4, 0.8]))
def test_dominant_child_share_and_chains_match_brute_force(seed, pt):
    tr = random_trace(n_roots=4, seed=seed, pass_through=pt, max_depth=6)
    share = dominant_child_share(tr.start, tr.end, tr.parent)
    np.testing.assert_allclose(share, share_brute(tr.start, tr.end, tr.parent), rtol=1e-12)
    folded = np.random.default_rng(seed).random(len(tr)) < 0.5
    assert np.array_equal(fold_chain_length(folded, tr.parent), chain_brute(folded, tr.parent))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), pt=st.sampled_from([0.0, 0.5, 0.9]))
def test_auto_fold_flags_match_their_formula(seed, pt):
    """`kernels.fold.auto_fold_flags` against its formula written with numpy over
    `dominant_child_share` (what `layout.fold.auto_fold_parts` computed before the kernel),
    with waits and I/O among the calls."""
    from tracevis3d.kernels.fold import auto_fold_flags

    tr = random_trace(n_roots=4, seed=seed, pass_through=pt, max_depth=6)
    rng = np.random.default_rng(seed)
    kind = np.where(rng.random(len(tr)) < 0.2, rng.integers(1, 4, len(tr)), 0).astype(np.uint8)
    infra_f = rng.random(int(tr.func.max()) + 1) < 0.3
    other = kind == 0
    infra = infra_f[tr.func] & other
    through = (share_brute(tr.start, tr.end, tr.parent) >= PASS_THROUGH_SHARE) & other
    pp = np.maximum(tr.parent, 0)
    passing = through & ~infra & (tr.parent >= 0) & through[pp] & ~infra[pp]
    got = auto_fold_flags(tr.func, kind, tr.start, tr.end, tr.parent, infra_f, PASS_THROUGH_SHARE)
    assert np.array_equal(got[0], infra) and np.array_equal(got[1], passing)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), p_fold=st.floats(0.0, 1.0), p_wide=st.floats(0.0, 1.0))
def test_place_folded_levels_matches_brute_force(seed, p_fold, p_wide):
    tr = random_trace(n_roots=4, seed=seed, pass_through=0.5, max_depth=6)
    rng = np.random.default_rng(seed)
    folded = rng.random(len(tr)) < p_fold
    wide = rng.random(len(tr)) < p_wide
    band_class = np.where(wide, rng.integers(1, 3, len(tr)), 0).astype(np.int8)
    lane = np.ascontiguousarray(tr.thread, np.int32)
    heights = rng.uniform(0.01, 1.0, (int(lane.max()) + 1, 5))
    base = np.where(rng.random(len(tr)) < 0.3, 0.4, 1.0)
    got = place_folded_levels(folded, tr.parent, lane, band_class, heights, base)
    want = place_brute(folded, tr.parent, lane, band_class, heights, base)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g, float), np.asarray(w, float), atol=1e-12)
    bottom, height, eff, start, levels = got
    # a drawn call sits on top of its parent's box (or its parent's band)
    p = tr.parent
    has = p >= 0
    drawn = (start < 0) | (start == np.arange(len(tr)))
    for i in np.flatnonzero(drawn & has):
        r = start[p[i]] if eff[p[i]] else p[i]
        assert bottom[i] >= bottom[r] + height[r] - 1e-12


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_kind_durations_match_brute_force(seed):
    tr = random_trace(n_roots=4, seed=seed, kinds=True, max_depth=5)
    for which in (KIND_WAIT, KIND_IO):
        got = kind_durations(tr.kind, tr.start, tr.end, tr.parent, which)
        np.testing.assert_allclose(got, sync_brute(tr.kind, tr.start, tr.end, tr.parent, which), rtol=1e-9,
                                   atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), gap=st.floats(0.0, 20.0))
def test_sibling_runs_and_child_rows_match_brute_force(seed, gap):
    tr = random_trace(n_roots=8, seed=seed, n_func=3, tiny=0.4, threads=2)
    g = np.full(2, gap)
    head, run_end, count = sibling_runs(tr.func, tr.start, tr.end, tr.parent, tr.thread, g)
    want = runs_brute(tr.func, tr.start, tr.end, tr.parent, tr.thread, g)
    assert np.array_equal(head, want)
    for h in np.unique(head):
        m = np.flatnonzero(head == h)
        assert count[h] == m.size and run_end[h] == tr.end[m].max()
    n_ch, rs, re_, dom, dt, dc, tot = child_rows(tr.func, tr.start, tr.end, tr.end_index, tr.n_functions)
    for i, (n, best, total, counts) in enumerate(rows_brute(tr.func, tr.start, tr.end, tr.parent)):
        assert n_ch[i] == n
        if n:
            assert abs(dt[i] - best) < 1e-9 and abs(tot[i] - total) < 1e-9 and dc[i] in counts
            kids = np.flatnonzero(tr.parent == i)
            assert rs[i] == tr.start[kids].min() and re_[i] == tr.end[kids].max()


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), p=st.floats(0.0, 0.9))
def test_merge_calls_promotes_children_and_keeps_invariants(seed, p):
    tr = random_trace(n_roots=5, seed=seed, threads=2, kinds=True)
    hidden = np.random.default_rng(seed).random(len(tr)) < p
    up = nearest_kept_ancestor(tr.parent, hidden)
    for i in range(len(tr)):  # twin: walk up the parent chain
        a = tr.parent[i]
        while a >= 0 and hidden[a]:
            a = tr.parent[a]
        assert up[i] == a
    out = merge_calls(tr, hidden)
    out.check()
    keep = np.flatnonzero(~hidden)
    assert len(out) == keep.size
    # exact times, order and functions of every kept call
    assert np.array_equal(out.start, tr.start[keep]) and np.array_equal(out.end, tr.end[keep])
    assert np.array_equal(out.func, tr.func[keep]) and np.array_equal(out.kind, tr.kind[keep])
    newpos = {int(k): j for j, k in enumerate(keep)}
    for j, k in enumerate(keep):
        a = up[k]
        assert out.parent[j] == (newpos[int(a)] if a >= 0 else -1)
    assert merge_calls(tr, np.zeros(len(tr), bool)) is tr


# ------------------------------------------------------------------------- the fold rule
def _hand_trace():
    """runpy → exec → main → run → _run → work (with two children), and a waiting wrapper."""
    names = ["_run_code (<frozen runpy>:88)", "builtins.exec", "main (/app/prog.py:10)",
             "Runner.run (/app/prog.py:20)", "Runner._run (/app/prog.py:30)", "work (/app/prog.py:40)",
             "step (/app/prog.py:50)", "Queue.get (/usr/lib/python3.11/queue.py:154)",
             "Condition.wait (/usr/lib/python3.11/threading.py:288)"]
    #        0    1    2    3    4    5    6    7    8    9
    func = [0, 1, 2, 3, 4, 5, 6, 6, 7, 8]
    start = [0, 1, 2, 3, 4, 5, 6, 50, 95.5, 96]
    end = [100, 99, 98, 95, 94, 93, 49, 90, 97.5, 97]
    parent = [-1, 0, 1, 2, 3, 4, 5, 5, 2, 8]
    kind = [0, 0, 0, 0, 0, 0, 0, 0, KIND_WAIT, KIND_WAIT]
    return Trace.from_arrays(func, start, end, parent, function_names=names, kind=kind).check()


def test_auto_fold_rule_on_a_hand_made_trace():
    tr = _hand_trace()
    rule = auto_fold_rule(tr)
    # runpy and exec: infrastructure; main: passes through but heads its chain (its parent is
    # infrastructure), stays; run, _run: pass through under a passing parent, fold; work:
    # two children, stays; waits never fold
    assert rule.tolist() == [True, True, False, True, True, False, False, False, False, False]
    idx = np.arange(len(tr))
    lane = np.zeros(len(tr), np.int32)
    wide = np.full(len(tr), 1000.0)
    f = fold_levels(tr, idx, tr.parent, lane, 1, "auto", wide, 50.0, 16.0, 0.01)
    # two runs: [runpy, exec] and [run, _run], each one band of one level (wide)
    assert f.run_levels.tolist() == [2, 0, 0, 2, 0, 0, 0, 0, 0, 0]
    assert f.drawn.tolist() == [True, False, True, True, False, True, True, True, True, True]
    assert f.bottom.tolist()[:6] == [0.0, 0.0, 1.0, 2.0, 2.0, 3.0]
    # manual ranges and none
    f2 = fold_levels(tr, idx, tr.parent, lane, 1, "1:2", wide, 50.0, 16.0, 0.01)
    assert f2.run_levels[1] == 2 and f2.drawn.tolist()[:4] == [True, True, False, True]
    f3 = fold_levels(tr, idx, tr.parent, lane, 1, "none", wide, 50.0, 16.0, 0.01)
    assert not f3.folded.any() and f3.bottom.tolist() == tr.depth.astype(float).tolist()


def test_folding_keeps_exact_times_and_order():
    tr = random_trace(n_roots=10, seed=3, pass_through=0.6, max_depth=7, threads=2)
    for fold in ("auto", "none", "2:4"):
        spec = icicle_layout(tr, IcicleParams(fold=fold, cluster_px=0, resolution=(3840, 2160)))
        calls = spec.layer("calls")
        ci = calls.attributes["call_index"]
        k = spec.meta["world_per_us"]
        t0 = spec.meta["t0"]
        np.testing.assert_allclose(calls.positions[:, 0], ((tr.start[ci] + tr.end[ci]) / 2 - t0) * k,
                                   rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(calls.scales[:, 0], (tr.end[ci] - tr.start[ci]) * k, rtol=1e-4, atol=1e-4)
        # every call is drawn, or folded into a drawn ancestor's band
        assert spec.meta["n_boxes"] + spec.meta["n_folded"] == len(tr)
        # a drawn call sits above its drawn parent, in its lane
        z_of = dict(zip(ci.tolist(), calls.positions[:, 2] - calls.scales[:, 2] / 2))
        top_of = dict(zip(ci.tolist(), calls.positions[:, 2] + calls.scales[:, 2] / 2))
        for i in ci:
            p = tr.parent[i]
            if p >= 0 and p in z_of:
                assert z_of[i] >= top_of[p] - 1e-5


def squeeze_classes_brute(parent, lane, name_px, width_px, infra, passing, wide, unfold, thr, heights):
    """The documented rule of `squeeze_classes`, call by call."""
    folded, band_class, base = [], [], []
    for i, p in enumerate(parent):
        l = lane[i]
        folded.append(bool(infra[i] or (passing[i] and width_px[i] < unfold[l])))
        narrow = name_px[i] < thr[l]
        parent_narrow = p >= 0 and name_px[p] < thr[lane[p]]
        base.append(1.0 if not narrow else heights[l][3] if parent_narrow else heights[l][4])
        band_class.append(0 if not wide[i] else 1 if (infra[i] or narrow) else 2)
    return np.array(folded), np.array(band_class), np.array(base)


def _random_lanes_forest(rng):
    n, n_lanes = int(rng.integers(1, 300)), int(rng.integers(1, 4))
    parent = np.full(n, -1, np.int64)
    lane = np.zeros(n, np.int32)
    for i in range(1, n):  # pre-order: a parent comes before its children, in its lane
        if rng.random() < 0.85:
            parent[i] = int(rng.integers(max(0, i - 8), i))
            lane[i] = lane[parent[i]]
        else:
            lane[i] = int(rng.integers(0, n_lanes))
    name_px, width_px = rng.uniform(0, 200, n), rng.uniform(0, 200, n)
    infra, passing, wide = rng.random(n) < 0.2, rng.random(n) < 0.3, rng.random(n) < 0.5
    return n, n_lanes, parent, lane, name_px, width_px, infra, passing, wide


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10 ** 6))
def test_squeeze_classes_and_squeezed_levels_match_brute_force(seed):
    """`squeeze_classes` against its documented rule, and `squeezed_levels` against that rule
    followed by the brute-force placement, on random forests in several lanes."""
    from tracevis3d.kernels.fold import squeeze_classes, squeezed_levels

    rng = np.random.default_rng(seed)
    n, n_lanes, parent, lane, name_px, width_px, infra, passing, wide = _random_lanes_forest(rng)
    unfold, thr = rng.uniform(0, 250, n_lanes), rng.uniform(0, 100, n_lanes)
    heights = rng.uniform(0.01, 1.0, (n_lanes, 5))
    folded, band_class, base = np.empty(n, np.bool_), np.empty(n, np.int8), np.empty(n, np.float64)
    squeeze_classes(parent, lane, name_px, width_px, infra, passing, wide, unfold, thr, heights, folded, band_class,
                    base)
    want = squeeze_classes_brute(parent, lane, name_px, width_px, infra, passing, wide, unfold, thr, heights)
    for g, w in zip((folded, band_class, base), want):
        np.testing.assert_array_equal(g, w)
    got = squeezed_levels(parent, lane, name_px, width_px, infra, passing, wide, unfold, thr, heights)
    placed = place_brute(want[0], parent, lane, want[1], heights, want[2])
    for g, w in zip(got[:5], placed):
        np.testing.assert_allclose(np.asarray(g, float), np.asarray(w, float), atol=1e-12)
    top = np.zeros(n_lanes)
    np.maximum.at(top, lane, placed[0] + placed[1])
    np.testing.assert_allclose(got[5], top, atol=1e-12)


def test_squeeze_parameters_end_points():
    """σ = 0: nothing squeezed beyond NARROW_HEIGHT, bands at their full heights; σ = 3:
    what carries no name at SQUEEZE_FLOOR, the threshold still the name's width; σ = 5:
    the threshold at the lane's widest call, the first narrow level thinned too; named
    bands keep a level throughout."""
    from tracevis3d.kernels.fold import H_FIRST_NARROW, H_SQUEEZED
    from tracevis3d.layout.fold import (BAND_NARROW, BAND_WIDE, NARROW_HEIGHT, SQUEEZE_FLOOR, SQUEEZE_MAX,
                                        squeeze_parameters)

    widest = np.array([400.0, 40.0])
    u, t, h = squeeze_parameters(np.zeros(2), 50.0, widest)
    assert np.allclose(h[:, H_SQUEEZED], NARROW_HEIGHT) and np.allclose(h[:, H_FIRST_NARROW], 1.0)
    assert np.allclose(h[:, :3], [BAND_NARROW, BAND_WIDE, BAND_WIDE]) and np.allclose(t, 50.0)
    u, t, h = squeeze_parameters(np.full(2, 3.0), 50.0, widest)
    assert np.isinf(u).all() and np.allclose(t, 50.0)
    assert np.allclose(h[:, [0, 1, H_SQUEEZED]], SQUEEZE_FLOOR) and np.allclose(h[:, [2, H_FIRST_NARROW]], 1.0)
    u, t, h = squeeze_parameters(np.full(2, SQUEEZE_MAX), 50.0, widest)
    assert np.allclose(t, [400.0, 50.0])  # a lane narrower than a name keeps the name's width
    assert np.allclose(h[:, H_FIRST_NARROW], SQUEEZE_FLOOR) and np.allclose(h[:, 2], BAND_WIDE)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10 ** 6))
def test_reduced_tops_of_the_whole_tree_are_the_tops_of_the_whole_placement(seed):
    """`kernels.fold_reduce.reduced_tops` with no call dropped (the bisection's question, in
    reused arrays) against the last output of `squeezed_levels` (the whole placement), on
    random forests in several lanes, with the work arrays dirty from an earlier call (the
    reduced trees: tests/test_fold_reduce.py)."""
    from tracevis3d.kernels.fold import squeezed_levels
    from tracevis3d.kernels.fold_reduce import reduced_tops

    rng = np.random.default_rng(seed)
    n, n_lanes, parent, lane, name_px, width_px, infra, passing, wide = _random_lanes_forest(rng)
    work = (np.ones(n, np.bool_), np.full(n, 2, np.int8), np.full(n, 7.0), np.full(n, 5, np.int32),
            np.full(n, 3.0), np.full(n, 2.0), np.ones(n, np.bool_), np.full(n, 9, np.int32))
    none = (np.zeros(n, np.int32), np.zeros(n, np.int8), np.zeros(0, np.int16), np.zeros(0, np.int16),
            np.zeros(0, np.int8))
    for _ in range(2):
        unfold, thr = rng.uniform(0, 250, n_lanes), rng.uniform(0, 100, n_lanes)
        heights = rng.uniform(0.01, 1.0, (n_lanes, 5))
        want = squeezed_levels(parent, lane, name_px, width_px, infra, passing, wide, unfold, thr, heights)[-1]
        got = reduced_tops(parent, lane, name_px, width_px, infra, passing, wide, *none, unfold, thr, heights, *work)
        assert np.allclose(got, want), (got, want)


def test_a_lane_squeezed_to_one_level_keeps_its_task_not_only_its_last_wait():
    """A worker's lane: its task (45 µs, a tower 100 levels deep under it, two children a
    level, neither passing its time through) and then its last queue wait (55 µs), side by
    side.  Squeezed as far as the squeeze goes (1.5 levels cannot hold a level and the
    tower's stratum), the lane keeps the task a full, nameable level: the name threshold
    rises to the widest call of the lane's work, not to the wait beside it (which shares the
    level anyway); before, the task counted as too narrow and thinned with the tower (a
    docutils pool of 24 workers lost three workers' names)."""
    depth = 100
    spans = [(0.0, 45.0)]  # the spine, in pre-order: each spine call's subtree, then its leaf
    for k in range(depth):
        a, b = spans[-1]
        spans.append((a, a + 0.45 * (b - a)))
    leaves = [(a + 0.45 * (b - a), a + 0.9 * (b - a)) for a, b in spans[:-1]][::-1]
    func = list(range(2, 3 + depth)) + list(range(3 + depth, 3 + 2 * depth))
    func[0] = 0
    start = [a for a, _ in spans] + [a for a, _ in leaves]
    end = [b for _, b in spans] + [b for _, b in leaves]
    parent = [-1] + list(range(depth)) + list(range(depth - 1, -1, -1))
    kind = [0] * (1 + 2 * depth)
    func.append(1)
    start.append(45.0)
    end.append(100.0)
    parent.append(-1)
    kind.append(KIND_WAIT)
    names = ["task (/app/w.py:1)", "Queue.get (/usr/lib/python3.11/queue.py:154)"] + [
        f"step{k} (/app/w.py:{10 + k})" for k in range(2 * depth + 1)]
    tr = Trace.from_arrays(func, start, end, parent, function_names=names, kind=kind).check()
    idx = np.arange(len(tr))
    width_px = (tr.end - tr.start) * 10.0  # 10 px a µs: task 450 px, wait 550 px
    f = fold_levels(tr, idx, tr.parent, np.zeros(len(tr), np.int32), 1, "auto", width_px, 50.0, 16.0, 0.1,
                    budget_of=lambda demand: np.minimum(demand, 1.5))
    assert f.height[0] == 1.0 and f.height[-1] == 1.0  # the task and the wait: full levels
    assert f.height[1:-1].max() < 0.5  # the tower: a thin stratum


def chain_ranked_width_brute(parent, name_px, through, keep, floor_px, step):
    """The documented rule of `chain_ranked_width`, each call's cap found by walking up its
    ancestors (recursion, no shared state)."""
    def rank(i):
        w = name_px[i]
        if w < floor_px or keep[i]:
            return w
        return min(w, max(cap(i), floor_px))

    def cap(i):
        p = parent[i]
        if p < 0:
            return np.inf
        return cap(p) if through[p] else rank(p) * (1.0 - step)

    return np.array([rank(i) for i in range(len(parent))])


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10 ** 6))
def test_chain_ranked_width_matches_brute_force(seed):
    """`chain_ranked_width` against its documented rule on random forests (with chains of
    equal widths, the case it exists for); never below the floor for a nameable call, never
    above the call's own width, and a call as wide as its parent ranks below it."""
    from tracevis3d.kernels.fold import chain_ranked_width

    rng = np.random.default_rng(seed)
    n, _, parent, _, name_px, _, infra, _, _ = _random_lanes_forest(rng)
    same = rng.random(n) < 0.4  # as wide as the parent
    for i in range(n):
        if same[i] and parent[i] >= 0:
            name_px[i] = name_px[parent[i]]
    keep = rng.random(n) < 0.1
    got = chain_ranked_width(parent, name_px, infra, keep, 50.0, 0.03)
    np.testing.assert_allclose(got, chain_ranked_width_brute(parent, name_px, infra, keep, 50.0, 0.03), rtol=1e-12)
    assert (got <= name_px).all() and (got[name_px >= 50.0] >= 50.0).all()
    for i in np.flatnonzero(same & (parent >= 0) & (name_px >= 50.0) & ~keep):
        if not infra[parent[i]] and got[parent[i]] * 0.97 > 50.0:  # (the floor holds all at 50)
            assert got[i] < got[parent[i]]


def test_a_crowded_lane_uses_its_budget_when_a_chain_of_one_width_closes_at_once():
    """A worker's lane as in a real thread pool: ``<lambda> › doc › publish_string ›
    publish_programmatically`` all about 738 px wide (doc and publish_string pass their
    time through and fold into one band), then ``Publisher.__init__`` (576 px, over a
    narrow tower) beside a short call.  With a budget of 3 levels the squeeze used to jump
    from 4 levels to 1.14 (the chain passed or failed the name threshold together) and
    left two levels of the budget empty; ranked (`chain_ranked_width`), the chain opens a
    level at a time: the lane keeps ``<lambda>`` and the band that names ``doc › … ›
    publish_string`` at full levels."""
    spans = [(0.0, 100.0, -1), (0.05, 99.95, 0), (0.1, 99.9, 1), (0.15, 99.85, 2), (0.2, 78.0, 3)]
    for k in range(30):  # a narrow tower under Publisher.__init__ (6 µs: 44 px)
        spans.append((1.0 + 0.1 * k, 7.0 - 0.1 * k, 4 + k if k else 4))
    spans.append((80.0, 90.0, 3))  # a short call beside it (74 px)
    start, end, parent = (np.array(x) for x in zip(*spans))
    names = [f"f{k} (/app/w.py:{k + 1})" for k in range(len(spans))]
    tr = Trace.from_arrays(np.arange(len(spans)), start, end, parent, function_names=names).check()
    idx = np.arange(len(tr))
    width_px = (tr.end - tr.start) * 7.384  # the chain: 738 px
    def fold(budget):
        return fold_levels(tr, idx, tr.parent, np.zeros(len(tr), np.int32), 1, "auto", width_px, 50.0, 16.0, 0.1,
                           budget_of=lambda demand: np.minimum(demand, budget))

    f = fold(3.0)
    assert 2.0 <= f.lane_levels[0] <= 3.0 * 1.001, f.lane_levels  # (it was 1.14)
    assert f.height[0] == 1.0 and f.height[1] == 1.0  # <lambda>, and the band doc › … › publish_string
    # 3.1 levels: one more call's threshold fits if the level under it gives a little
    # (`refill_squeeze`): publish_programmatically at 0.9 of a level or more, not thin
    f = fold(3.1)
    assert 3.0 <= f.lane_levels[0] <= 3.1 * 1.001 and 0.9 <= f.height[3] < 1.0, (f.lane_levels, f.height[:4])


def lane_root_rows_brute(func, start, end, parent, lane, n_lanes):
    """The documented rule of `layout.fold.lane_root_rows`, lane by lane with dicts."""
    out = []
    for l in range(n_lanes):
        roots = [i for i in range(len(parent)) if parent[i] < 0 and lane[i] == l]
        if not roots:
            out.append((0, 0.0, 0.0, -1, 0.0, 0, 0.0, -1))
            continue
        t, c, first = {}, {}, {}
        for i in roots:
            f = int(func[i])
            t[f] = t.get(f, 0.0) + end[i] - start[i]
            c[f] = c.get(f, 0) + 1
            first.setdefault(f, i)
        best = max(t, key=lambda f: (t[f], -f))
        out.append((len(roots), min(start[i] for i in roots), max(end[i] for i in roots), best, t[best], c[best],
                    sum(end[i] - start[i] for i in roots), first[best]))
    return [np.array(x) for x in zip(*out)]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10 ** 6))
def test_lane_root_rows_match_brute_force(seed):
    """`lane_root_rows` (the row each lane's roots form) against a lane-by-lane count, on
    random forests in several lanes with few functions (ties of time broken alike: equal
    durations, the lower function)."""
    from tracevis3d.layout.fold import lane_root_rows

    rng = np.random.default_rng(seed)
    n, n_lanes, parent, lane, *_ = _random_lanes_forest(rng)
    func = rng.integers(0, 4, n)
    start = np.sort(rng.uniform(0, 100, n))
    end = start + rng.integers(1, 5, n).astype(float)  # few distinct durations: real ties of time
    got = lane_root_rows(func, start, end, parent, lane, n_lanes, 4)
    want = lane_root_rows_brute(func, start, end, parent, lane, n_lanes)
    has = want[0] > 0
    for k, (g, w) in enumerate(zip(got, want)):
        if k in (3, 5, 7):  # the dominant function, its count, its first root: ties may go either way
            continue
        np.testing.assert_allclose(np.asarray(g, float)[has], np.asarray(w, float)[has], err_msg=str(k))
    t_of, c_of = {}, {}
    for i in np.flatnonzero(parent < 0):
        t_of[(lane[i], func[i])] = t_of.get((lane[i], func[i]), 0.0) + end[i] - start[i]
        c_of[(lane[i], func[i])] = c_of.get((lane[i], func[i]), 0) + 1
    for l in np.flatnonzero(has):  # the function chosen takes the most time; its count and first root
        assert np.isclose(t_of[(l, got[3][l])], want[4][l]) and c_of[(l, got[3][l])] == got[5][l]
        f_roots = [i for i in np.flatnonzero((parent < 0) & (lane == l)) if func[i] == got[3][l]]
        assert got[7][l] == f_roots[0]


def test_a_lane_of_many_narrow_roots_is_named_as_a_row():
    """An asyncio task as VizTracer records it (``--log_async``: a lane per task): 30
    resumptions of ``worker``, each too narrow for its own name, beside a main thread of
    one long call.  The task's lane carries one row label, "30× a.worker", kind "row"; a lane
    of two roots at its two ends (the main task's start and end) carries none."""
    func, start, end, parent, thread = [0], [0.0], [3000.0], [-1], [0]
    for k in range(30):  # lane 1: the worker's resumptions, 20 µs every 100
        func.append(1)
        start.append(100.0 * k)
        end.append(100.0 * k + 20.0)
        parent.append(-1)
        thread.append(1)
    for a in (0.0, 2990.0):  # lane 2: two roots at the ends
        func.append(2)
        start.append(a)
        end.append(a + 5.0)
        parent.append(-1)
        thread.append(2)
    tr = Trace.from_arrays(func, start, end, parent, thread=thread,
                           function_names=["main (/app/a.py:1)", "worker (/app/a.py:8)", "amain (/app/a.py:20)"],
                           thread_names=["MainThread", "Task-2", "Task-1"]).check()
    spec = icicle_layout(tr, IcicleParams(show_title=False, show_legend=False))
    rows = [t for t, k in zip(spec.labels.texts, spec.labels.kind) if k == "row"]
    assert rows == ["30× a.worker"], rows  # (the module, then the function)


def test_lanes_in_any_order_fold_as_in_lane_order():
    """`fold_levels` places only the lanes its bisection still asks about when the lanes are
    contiguous (as the select stage gives them); given the same calls with lanes
    interleaved, it folds them the same way (it then places every call each time)."""
    rng = np.random.default_rng(5)
    parts, names = [], [f"f{k} (/app/m.py:{k + 1})" for k in range(40)]
    func, start, end, parent = [], [], [], []
    for lane in range(3):  # three lanes, each a deep chain with side calls, contiguous
        base = len(func)
        t0, t1 = 0.0, 100.0
        for d in range(30):
            func.append(int(rng.integers(0, 40)))
            start.append(t0)
            end.append(t1)
            parent.append(base + d - 1 if d else -1)
            t0, t1 = t0 + 0.5 + rng.random(), t1 - 0.5 - rng.random()
        parts.append(np.full(30, lane))
    lane = np.concatenate(parts).astype(np.int32)
    tr = Trace.from_arrays(func, start, end, parent, thread=lane, function_names=names).check()
    idx = np.arange(len(tr))
    width_px = (tr.end - tr.start) * 12.0

    def fold(order):
        inv = np.empty_like(order)
        inv[order] = np.arange(order.size)
        par = np.where(tr.parent[order] >= 0, inv[np.maximum(tr.parent[order], 0)], -1)
        f = fold_levels(tr, idx[order], par, lane[order], 3, "auto", width_px[order], 50.0, 16.0, 0.1,
                        budget_of=lambda demand: np.minimum(demand, [3.0, 5.0, 2.5]))
        return f.lane_levels, f.height[inv]

    contiguous = fold(np.arange(90))
    interleaved = fold(np.arange(90).reshape(3, 30).T.ravel())  # pre-order kept within each lane
    np.testing.assert_allclose(interleaved[0], contiguous[0])
    np.testing.assert_allclose(interleaved[1], contiguous[1])
