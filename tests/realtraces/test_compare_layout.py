"""The comparison scene's layout (bpy-free): tubes join matched calls at the right places, a
permuted copy is coloured as permuted, unmatched calls stand out, groups split below a common
root, brushing and align (TraceDiff IV-B..E)."""
import numpy as np
import pytest

import tracevis3d
from tracevis3d.layout.compare import (MATCHED_RGB, UNMATCHED_RGB, CompareParams, align_window_b,
                                       best_partners, compare_layout, matched_calls, phase_groups)
from tracevis3d.model import Trace

from phase_programs import phase_calls, phase_program


@pytest.fixture(scope="module")
def permuted():
    a = phase_program(["parse", "check", "write"])
    b = phase_program(["write", "check", "parse"], extra="report")  # first and last swapped, one new phase
    return a, b, tracevis3d.compare(a, b, tau=0.2)


def test_tubes_join_the_matched_calls_at_their_inner_edges(permuted):
    a, b, cmp = permuted
    spec = compare_layout(cmp, CompareParams(resolution=(960, 540), beta=0.85, cluster_px=0))
    tubes = spec.layer("tubes")
    calls_a, calls_b = spec.layer("calls_a"), spec.layer("calls_b")
    box_a = {int(c): k for k, c in enumerate(calls_a.attributes["call_index"])}
    box_b = {int(c): k for k, c in enumerate(calls_b.attributes["call_index"])}
    assert len(tubes) >= 3
    for k in range(len(tubes)):
        ia, ib = int(tubes.attributes["call_a"][k]), int(tubes.attributes["call_b"][k])
        pa, sa = calls_a.positions[box_a[ia]], calls_a.scales[box_a[ia]]
        pb, sb = calls_b.positions[box_b[ib]], calls_b.scales[box_b[ib]]
        c = tubes.centres[k]
        # starts under A's box (its lower edge, mid x), ends on top of B's box
        assert abs(c[0, 0] - pa[0]) < 1e-4 and abs(c[0, 2] - (pa[2] - sa[2] / 2)) < 1e-4
        assert abs(c[-1, 0] - pb[0]) < 1e-4 and abs(c[-1, 2] - (pb[2] + sb[2] / 2)) < 1e-4
        # as wide as the two calls at its ends (one match per tube here; at most the cap),
        # thinner in the middle (λ)
        cap = CompareParams().max_tube_px * spec.meta["world_per_px"]
        assert abs(tubes.half_x[k, 0] - min(sa[0], cap) / 2) < 1e-4
        assert abs(tubes.half_x[k, -1] - min(sb[0], cap) / 2) < 1e-4
        assert tubes.half_x[k, len(c) // 2] < 0.6 * max(tubes.half_x[k, 0], tubes.half_x[k, -1])
        # A lies above the band, B below, the curve runs down through it
        assert c[0, 2] > 0 > c[-1, 2] and np.all(np.diff(c[:, 2]) <= 1e-5)


def test_a_permuted_copy_is_coloured_as_permuted(permuted):
    a, b, cmp = permuted
    spec = compare_layout(cmp, CompareParams(resolution=(960, 540), color_by="permutation", cluster_px=0,
                                             declutter_px=0))
    tubes = spec.layer("tubes")
    name_of = {int(c): a.function_names[a.func[c]] for c in tubes.attributes["call_a"]}
    perm = {name_of[int(c)]: int(bn) for c, bn in zip(tubes.attributes["call_a"], tubes.attributes["bin_permutation"])}
    # parse and write swapped places: red; check stayed in the middle of its group: grey
    assert perm["parse"] > perm["check"] and perm["write"] > perm["check"]
    assert perm["check"] == 0
    # the colour follows the bin (a material per bin, grey → red)
    mats = spec.layer("tubes").materials
    k = list(name_of.values()).index("parse")
    assert mats[tubes.material_index[k]].startswith("TV3D_tube_perm")


def test_unmatched_calls_stand_out(permuted):
    a, b, cmp = permuted
    has_a, has_b = matched_calls(cmp)
    report = [i for i in range(len(b)) if b.function_names[b.func[i]].startswith("report")]
    assert not has_b[report].any() and has_a.all()
    spec = compare_layout(cmp, CompareParams(resolution=(960, 540), cluster_px=0))
    calls_b = spec.layer("calls_b")
    col = {int(c): calls_b.colors[k, :3] for k, c in enumerate(calls_b.attributes["call_index"])}
    for i in report:
        assert np.allclose(col[i], UNMATCHED_RGB, atol=1e-5)
    for i in np.flatnonzero(has_b):
        if i in col and b.function_names[b.func[i]] != "main":
            assert np.allclose(col[i], MATCHED_RGB, atol=1e-5)
    assert spec.meta["n_unmatched_b"] == len(report) and spec.meta["n_unmatched_a"] == 0


def test_groups_split_below_a_common_root(permuted):
    a, b, cmp = permuted
    group, ra, rb = phase_groups(cmp)
    names = {a.function_names[a.func[r]] for r in ra[np.unique(group)]}
    # main ↔ main holds every match; the phases become the groups
    assert {"parse", "check", "write"} <= names


def _rooted(roots):
    """Calls under the given roots: each (names of a chain, phases in order); a chain
    ``["main", "_worker", "get", "run"]`` is main → _worker → [get (a short leaf), run →
    phases], as a pool's worker loop takes a task; a chain of one name holds the phases itself."""
    names, start, end, parent = [], [], [], []
    t = 0.0
    for chain, order in roots:
        r = len(names)
        names.append(chain[0])
        start.append(t)
        parent.append(-1)
        holder = r
        if len(chain) > 1:  # _worker, its short get, then run holding the phases
            names += [chain[1], chain[2], chain[3]]
            start += [t + 1, t + 2, t + 5]
            parent += [r, r + 1, r + 1]
            holder = r + 3
        end += [0.0] * (len(names) - len(end))
        end[r + 2 if len(chain) > 1 else r] = t + 4 if len(chain) > 1 else 0.0
        t += 10.0
        for ph in order:
            f, s_, e, _ = phase_calls(ph, t, tag=chain[0])
            base = len(names)
            for k in range(len(f)):
                names.append(f[k])
                start.append(s_[k])
                end.append(e[k])
                parent.append(holder if k == 0 else base)
            t += 110.0
        t += 10.0
        end[r] = t
        if len(chain) > 1:
            end[r + 1], end[r + 3] = t - 1, t - 2
        t += 10.0
    uniq = sorted(set(names))
    return Trace.from_arrays([uniq.index(n) for n in names], start, end, parent, function_names=uniq,
                             thread_names=["MainThread"]).check()


def _descent_twin(end_index, marked, root):
    """`single_marked_descent` as the layout first wrote it: each child's subtree scanned."""
    node = int(root)
    while True:
        kids = []
        c = node + 1
        while c < end_index[node]:
            if marked[c:end_index[c]].any():
                kids.append(c)
            c = int(end_index[c])
        if len(kids) != 1:
            return node
        node = kids[0]


@pytest.mark.parametrize("seed", range(6))
def test_single_marked_descent_is_its_twin(seed):
    """From a call down while one child's subtree holds the marked calls: random trees (deep
    chains among them), random marks, every call as the start."""
    from tracevis3d.kernels.tree import depth_and_end_from_parent, single_marked_descent
    rng = np.random.default_rng(seed)
    n = 300
    parent = np.full(n, -1, np.int32)    # pre-order: each call's parent is the previous call or one above it
    for i in range(1, n):
        p = i - 1
        while p >= 0 and rng.random() > (0.9 if seed % 2 else 0.4):   # odd seeds: deep chains
            p = parent[p]
        parent[i] = p
    _, end_index = depth_and_end_from_parent(parent)
    for share in (0.01, 0.1, 0.5):
        marked = rng.random(n) < share
        for root in range(n):
            below = np.concatenate([[0], np.cumsum(marked, dtype=np.int64)])
            assert single_marked_descent(end_index, below, root) == _descent_twin(end_index, marked, root)


def test_groups_split_again_below_a_worker_loop():
    """A pool's worker: main → _worker → [get, run → phases]; the first split (below _worker)
    leaves run holding nearly every match, so it is split again: one group per phase (the
    tubes of a phase were bent through run's middle and back, a 48-thread pool)."""
    chain = ["main", "_worker", "get", "run"]
    a = _rooted([(chain, ["parse", "check", "write"])])
    b = _rooted([(chain, ["write", "check", "parse"])])
    cmp = tracevis3d.compare(a, b, tau=0.2)
    group, ra, rb = phase_groups(cmp)
    names = {a.function_names[a.func[r]] for r in ra[np.unique(group)]}
    assert {"parse", "check", "write"} <= names
    # each phase's B root is the same phase in B
    for gk in np.unique(group):
        na = a.function_names[a.func[ra[gk]]]
        if na in ("parse", "check", "write"):
            assert b.function_names[b.func[rb[gk]]] == na


def test_groups_split_by_the_matches_in_view():
    """Two roots of about equal weight: no group holds 90 % of all matches, but the view's
    (those under ``main``, ``shown``) are one group's, which is split into its phases."""
    a = _rooted([(["main"], ["parse", "check", "write"]), (["idle"], ["poll", "sleep", "wake"])])
    b = _rooted([(["main"], ["write", "check", "parse"]), (["idle"], ["wake", "sleep", "poll"])])
    cmp = tracevis3d.compare(a, b, tau=0.2)
    name = lambda r: a.function_names[a.func[r]]  # noqa: E731
    group, ra, rb = phase_groups(cmp)
    assert not {"parse", "check", "write"} & {name(r) for r in ra[np.unique(group)]}
    main = int(np.flatnonzero(a.parent < 0)[0])
    shown = (cmp.pairs["a"] >= main) & (cmp.pairs["a"] < a.end_index[main])
    group, ra, rb = phase_groups(cmp, shown)
    assert {"parse", "check", "write"} <= {name(r) for r in ra[np.unique(group[shown])]}


def test_a_pool_of_hundreds_of_threads_still_has_tubes():
    """512 threads: each side packs dozens of worker icicles a few pixels wide into its lane,
    every level squeezed, no box on a full level: their top boxes end the tubes (there were
    none at all), so the picture says which worker's work matches which."""
    a = tracevis3d.synthetic(40_000, threads=512)
    spec = compare_layout(tracevis3d.compare(a, tracevis3d.perturb(a, seed=1)))
    assert spec.meta["n_tubes"] >= 20 and spec.meta["n_pairs_in_tubes"] >= 200


def test_wide_tubes_with_finer_tubes_inside_are_left_out(permuted):
    """Decluttering: an aligned phase (wide at both ends, its children matched inside both)
    has no tube of its own unless asked for, nor has main; the phases that moved keep theirs
    (what moved stays visible); the children keep theirs; no tube is wider than the cap."""
    a, b, cmp = permuted
    name = lambda i: a.function_names[a.func[i]]  # noqa: E731
    every = compare_layout(cmp, CompareParams(resolution=(960, 540), cluster_px=0, declutter_px=0, max_tube_px=0))
    tidy = compare_layout(cmp, CompareParams(resolution=(960, 540), cluster_px=0))
    names_every = {name(int(c)) for c in every.layer("tubes").attributes["call_a"]}
    names_tidy = {name(int(c)) for c in tidy.layer("tubes").attributes["call_a"]}
    assert {"main", "parse", "check", "write"} <= names_every
    assert not {"main", "check"} & names_tidy  # aligned
    assert {"parse", "write"} <= names_tidy  # moved: first and last swapped
    assert {n for n in names_every if "_" in n} == {n for n in names_tidy if "_" in n}  # the children stay
    px = tidy.meta.get("world_per_px") or None
    tubes = tidy.layer("tubes")
    cap = CompareParams().max_tube_px
    widest = 2 * tubes.half_x.max()
    widest_every = 2 * every.layer("tubes").half_x.max()
    assert widest <= widest_every
    if px:
        assert widest <= cap * px * 1.001


def test_best_partners_is_the_top_k_rule():
    pairs = np.zeros(8, dtype=[("a", np.int32), ("b", np.int32), ("sim", np.float64), ("dt", np.float64)])
    pairs["a"] = [0, 0, 0, 1, 1, 2, 3, 3]
    pairs["b"] = [5, 6, 7, 5, 8, 9, 5, 9]
    pairs["sim"] = [0.9, 0.9, 0.5, 0.4, 0.3, 0.8, 0.2, 0.5]
    pairs["dt"] = [3.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    keep = best_partners(pairs, 1)
    # A 0's best is (0, 6) (same similarity, closer in time), B 5's is (0, 5), B 7's only
    # partner is (0, 7); (3, 5) is nobody's best: A 3 prefers (3, 9), B 5 prefers (0, 5)
    assert keep.tolist() == [True, True, True, True, True, True, False, True]
    assert best_partners(pairs, 3).all()


def _best_partners_twin(pairs, k):
    """Brute force: sort each call's pairs by (−similarity, Δt, position), keep the first k."""
    keep = np.zeros(pairs.size, bool)
    for side in ("a", "b"):
        for call in np.unique(pairs[side]):
            idx = sorted(np.flatnonzero(pairs[side] == call), key=lambda i: (-pairs["sim"][i], pairs["dt"][i], i))
            keep[idx[:k]] = True
    return keep


@pytest.mark.parametrize("seed", range(6))
def test_best_partners_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    pairs = np.zeros(n, dtype=[("a", np.int32), ("b", np.int32), ("sim", np.float64), ("dt", np.float64)])
    pairs["a"], pairs["b"] = rng.integers(0, 20, n), rng.integers(0, 30, n)
    pairs["sim"] = rng.integers(0, 5, n) / 4  # many ties
    pairs["dt"] = rng.integers(0, 3, n)
    for k in (1, 2, 5):
        assert np.array_equal(best_partners(pairs, k), _best_partners_twin(pairs, k))


def test_brushing_and_align(permuted):
    a, b, cmp = permuted
    parse = next(i for i in range(len(a)) if a.function_names[a.func[i]] == "parse")
    spec = compare_layout(cmp, CompareParams(resolution=(960, 540), brush_a=parse, cluster_px=0))
    tubes = spec.layer("tubes")
    grey = tubes.materials.index("TV3D_tube_brushed_out")
    ca = tubes.attributes["call_a"]
    inside = (ca >= parse) & (ca < a.end_index[parse])
    other_phase = ~inside & (ca != 0)  # the root group (main ↔ main) lies in parse's stack: it keeps its colour
    assert inside.any() and other_phase.any()
    assert np.all(tubes.material_index[other_phase] == grey) and np.all(tubes.material_index[inside] != grey)
    t0, t1 = align_window_b(cmp, parse)
    pb = next(i for i in range(len(b)) if b.function_names[b.func[i]] == "parse")
    assert t0 <= b.start[pb] and b.end[pb] <= t1
    aligned = compare_layout(cmp, CompareParams(resolution=(960, 540), window_b=(t0, t1), cluster_px=0))
    assert aligned.meta["window_b"] == [t0, t1]
    with pytest.raises(ValueError, match="brush"):
        compare_layout(cmp, CompareParams(brush_a=10_000))


def test_params_round_trip_and_errors():
    p = CompareParams(color_by="ratio", lam=0.3, band=5.0, beta=0.7, window_a=(0.0, 10.0), brush_b=3)
    assert CompareParams.from_dict(p.to_dict()) == p
    for bad, msg in (({"color_by": "x"}, "color_by"), ({"lam": 2}, "lam"), ({"beta": -1}, "beta"),
                     ({"window_b": [5, 1]}, "window_b"), ({"nope": 1}, "unknown"), ({"max_tubes": 0}, "max_tubes")):
        with pytest.raises(ValueError, match=msg):
            CompareParams.from_dict(bad)
    with pytest.raises(TypeError):
        compare_layout("not a comparison")


def test_real_pair_is_bounded_and_deterministic(realdata):
    a = tracevis3d.load(realdata / "hta-trace-diff" / "control.json.gz")
    b = tracevis3d.load(realdata / "hta-trace-diff" / "test.json.gz")
    cmp = tracevis3d.compare(a, b, tau=0.2)
    p = CompareParams(max_tubes=500)
    s1 = compare_layout(cmp, p)
    s2 = compare_layout(cmp, p)
    t1, t2 = s1.layer("tubes"), s2.layer("tubes")
    # the budget bounds the tubes; tubes whose ends share pixels merge, so a few fewer (465)
    assert 400 <= len(t1) <= 500 and np.array_equal(t1.centres, t2.centres)
    assert np.isfinite(t1.centres).all() and (t1.half_x > 0).all()
    # one group per training step, not one group for everything
    assert s1.meta["n_groups"] >= 6


def test_similarity_is_transparency_on_thin_tubes_and_a_highlight_on_wide_ones(permuted):
    """IV-D: in the similarity mode, tubes under 16 px get translucent materials (weaker =
    more transparent), wider ones opaque glossy materials (stronger = glossier)."""
    a, b, cmp = permuted
    spec = compare_layout(cmp, CompareParams(resolution=(480, 270), color_by="similarity", cluster_px=0,
                                             declutter_px=0))
    tubes = spec.layer("tubes")
    mats = {m.name: m for m in spec.materials} if isinstance(spec.materials, list) else spec.materials
    names = [tubes.materials[i] for i in tubes.material_index]
    glossy = np.array([n.startswith("TV3D_tube_simgloss") for n in names])
    assert glossy.any() and (~glossy).any(), names
    for k, n in enumerate(names):
        m = mats[n]
        if glossy[k]:
            assert m.color[3] == 1.0 and m.gloss > 0
        else:
            assert n.startswith("TV3D_tube_sim") and m.gloss == 0 and m.color[3] < 1.0
    # the split follows the width: every glossy tube is wider than every translucent one
    w = 2 * tubes.half_x.max(axis=1)
    assert w[glossy].min() >= w[~glossy].max()


def test_the_focus_window_is_marked_on_the_overview(permuted):
    """IV-A: with a focus window the overview marks the bins it covers (snapped to bins);
    without one nothing is marked."""
    a, b, cmp = permuted
    plain = compare_layout(cmp, CompareParams(resolution=(480, 270)))
    assert not [lay for lay in plain.layers if lay.name.startswith("focus_")]
    spec = compare_layout(cmp, CompareParams(resolution=(480, 270), window_a=(100.0, 200.0)))
    focus = [lay for lay in spec.layers if lay.name.startswith("focus_")]
    assert [lay.name for lay in focus] == ["focus_a"]
    edges = cmp.overview_edges_a
    L = CompareParams().time_length
    x_scale = L / (edges[-1] - edges[0])
    x0 = focus[0].positions[0, 0] - focus[0].scales[0, 0] / 2
    x1 = focus[0].positions[0, 0] + focus[0].scales[0, 0] / 2
    t0, t1 = x0 / x_scale + edges[0], x1 / x_scale + edges[0]
    assert t0 <= 100.0 < t0 + (edges[1] - edges[0]) + 1e-6 and t1 - (edges[1] - edges[0]) - 1e-6 < 200.0 <= t1
    # between A's icicle and its overview bars
    ov = spec.layer("overview_a")
    assert focus[0].positions[0, 2] < (ov.positions[:, 2] - ov.scales[:, 2] / 2).min()


def test_side_names_lie_inside_the_image(realdata):
    """The names of the two sides ("A: control · thread 3113936 (python…") stand left of the
    icicles, right-aligned, sized by the world per pixel at A's lane: the frame makes room for
    all of them (before: its room was estimated from the rectangle's width, smaller than the
    pixel the names are sized by, and A's name was cut at the image's left edge)."""
    from tracevis3d.layout.camera import project, world_per_pixel
    from tracevis3d.layout.text import text_width

    a = tracevis3d.load(realdata / "hta-trace-diff" / "control.json.gz")
    b = tracevis3d.load(realdata / "hta-trace-diff" / "test.json.gz")
    spec = compare_layout(tracevis3d.compare(a, b, tau=0.2), CompareParams())
    lab = spec.labels
    sides = [k for k, kind in enumerate(lab.kind) if kind == "lane"]
    assert len(sides) == 2 and all(lab.align[k] == 2 for k in sides)
    anchors = lab.anchors[sides].astype(np.float64)
    right_px = project(spec.camera, anchors, spec.resolution)[:, 0]
    length_px = np.array([text_width(lab.texts[k]) * float(lab.sizes[k]) for k in sides]) / world_per_pixel(
        spec.camera, anchors, spec.resolution)
    assert (right_px - length_px >= 0.0).all(), (right_px, length_px)


def _pool_run(work_of_thread, seed):
    """A pool program's run: a main thread that waits, and workers, each running many calls
    of the function ``work_of_thread`` gives it (task functions by name)."""
    rng = np.random.default_rng(seed)
    func, start, end, parent, thread = [], [], [], [], []
    names = ["main (/app/p.py:1)", "alpha (/app/p.py:10)", "beta (/app/p.py:20)", "step (/app/p.py:30)"]
    func += [0]
    start += [0.0]
    end += [1000.0]
    parent += [-1]
    thread += [0]
    for t, (fname, n) in enumerate(work_of_thread, start=1):
        f = names.index(next(x for x in names if x.startswith(fname)))
        t0 = 0.0
        for _ in range(n):
            d = float(rng.uniform(2.0, 4.0))
            func += [f, 3]
            start += [t0, t0 + 0.1]
            end += [t0 + d, t0 + d - 0.1]
            parent += [-1, len(func) - 2]
            thread += [t, t]
            t0 += d + 0.5
    return Trace.from_arrays(func, start, end, parent, thread=thread, function_names=names,
                             thread_names=["MainThread"] + [f"w{t}" for t in range(1, len(work_of_thread) + 1)]).check()


def test_the_b_side_shows_the_thread_that_does_a_s_work_not_b_s_busiest():
    """A pool's workers swap tasks between runs: in A, w1 runs alpha (the busiest work) and w2
    beta; in B, w1 runs beta (now the busiest) and w2 alpha.  The comparison shows A's w1
    against B's w2, the thread doing the same work (`thread_work.corresponding_thread`), not
    against B's busiest thread (a comparison of alpha with beta: a mixed pool's pair showed a
    sympy worker against the other run's main thread)."""
    from tracevis3d.layout.compare_tubes import side_threads
    from tracevis3d.layout.thread_work import corresponding_thread, working_thread

    a = _pool_run([("alpha", 200), ("beta", 120)], 1)
    b = _pool_run([("beta", 260), ("alpha", 200)], 2)
    assert working_thread(a) == 1 and working_thread(b) == 1  # the test tells the rules apart
    assert corresponding_thread(b, a, 1) == 2 and corresponding_thread(b, a, 2) == 1
    assert corresponding_thread(b, a, 0) == 0  # the main thread: the main thread
    cmp = tracevis3d.compare(a, b)
    assert side_threads(cmp, CompareParams()) == {"thread_a": 1, "thread_b": 2}
    assert side_threads(cmp, CompareParams(thread_a="w2")) == {"thread_b": 1}  # A's given: B follows
    assert side_threads(cmp, CompareParams(thread_b=0)) == {"thread_a": 1}  # B's given: kept
    spec = compare_layout(cmp, CompareParams(resolution=(960, 540)))
    sides = [x for x, k in zip(spec.labels.texts, spec.labels.kind) if x.startswith(("A:", "B:"))]
    assert any(x.endswith("w1") for x in sides if x.startswith("A:")), sides
    assert any(x.endswith("w2") for x in sides if x.startswith("B:")), sides


def test_the_corresponding_thread_takes_memory_linear_in_the_calls():
    """A hostile pair: 20,000 threads of one call each against a thread of 20,000 functions.
    The work in common is summed over the (thread, function) pairs that occur, never in a
    dense threads × functions table (3.2 GB here): the peak stays under 100 MB."""
    import tracemalloc

    from tracevis3d.layout.thread_work import corresponding_thread

    n = 20_000
    names = [f"f{k} (/app/m.py:{k + 1})" for k in range(n)]
    other = Trace.from_arrays(np.arange(n), np.arange(n, dtype=float), np.arange(n, dtype=float) + 0.5,
                              np.full(n, -1), thread=np.zeros(n, np.int64), function_names=names).check()
    trace = Trace.from_arrays(np.arange(n)[::-1].copy(), np.zeros(n), np.full(n, 1.0 + 1e-3), np.full(n, -1),
                              thread=np.arange(n), function_names=names).check()
    tracemalloc.start()
    try:
        got = corresponding_thread(trace, other, 0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert 0 <= got < n
    assert peak < 100 * 2 ** 20, peak


def _browser_run(main_work: list, compositor_work: float, idle_threads: int = 0) -> Trace:
    """A browser's renderer: per thread a message loop (``RunLoop::Run``, a root over the whole
    run) running tasks (``ThreadController active``) whose own work is ``main_work``'s
    (function, µs) children on CrRendererMain, the task's self time on the Compositor;
    ``idle_threads`` more renderers' main threads that only idle in their loop."""
    names = ["RunLoop::Run", "ThreadController active", "Canvas2D::ProduceCanvasResource", "FunctionCall"]
    func, start, end, parent, thread = [], [], [], [], []

    def loop(t, tasks):
        func.append(0), start.append(0.0), end.append(4e6), parent.append(-1), thread.append(t)
        root, t0 = len(func) - 1, 10.0
        for kids, self_us in tasks:
            task = len(func)
            dur = self_us + sum(d for _, d in kids)
            func.append(1), start.append(t0), end.append(t0 + dur), parent.append(root), thread.append(t)
            c0 = t0 + self_us
            for f, d in kids:
                func.append(names.index(f)), start.append(c0), end.append(c0 + d), parent.append(task)
                thread.append(t)
                c0 += d
            t0 += dur + 10.0

    loop(0, [(main_work, 1e3)])
    loop(1, [([], compositor_work)])
    for k in range(idle_threads):
        loop(2 + k, [([], 10.0)])
    n = 2 + idle_threads
    return Trace.from_arrays(func, start, end, parent, thread=thread, function_names=names,
                             thread_names=["CrRendererMain", "Compositor"] + ["CrRendererMain"] * idle_threads,
                             process_names=["Renderer"] * n).check()


def test_the_b_side_is_the_thread_of_the_same_kind_where_one_shares_work():
    """Two page loads: A's renderer main thread spent 2.6 s in a task whose work the trace gives
    to the task itself, B's in a canvas call under it; B's compositor's tasks (0.94 s) share
    more by name with A's main thread than B's main thread does.  B's side is B's
    CrRendererMain (same process and thread name, numbers aside: `thread_work.thread_kind`),
    not its compositor; an idle renderer's loop (a root over the whole run) is no work; the
    title tells the two runs of one file name apart by their folders."""
    from tracevis3d.layout.compare import pair_titles
    from tracevis3d.layout.thread_work import corresponding_thread, thread_kind, working_thread

    a = _browser_run([("FunctionCall", 0.28e6)], 0.9e6)
    a_tasks = a.func == 1
    a.end[np.flatnonzero(a_tasks & (a.thread == 0))] += 2.6e6  # the long task's own time
    a = Trace.from_arrays(a.func, a.start, np.minimum(a.end, 4e6), a.parent, thread=a.thread,
                          function_names=a.function_names, thread_names=a.thread_names,
                          process_names=a.process_names).check()
    b = _browser_run([("Canvas2D::ProduceCanvasResource", 2.6e6), ("FunctionCall", 0.25e6)], 0.94e6, idle_threads=2)
    assert working_thread(a) == 0 and thread_kind(b, 2) == thread_kind(a, 0)
    assert corresponding_thread(b, a, 0) == 0
    assert corresponding_thread(b, a, 1) == 1  # the compositor: the compositor
    a.meta["source"], b.meta["source"] = "/runs/rec-1/page.json", "/runs/rec-2/page.json"
    assert pair_titles(a, b) == ("page (rec-1)", "page (rec-2)")
    b.meta["source"] = a.meta["source"]
    assert pair_titles(a, b) == ("page", "page")
