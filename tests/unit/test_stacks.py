"""The stack builder under every sampled and aggregated format (`tracevis3d.io.stacks`,
`tracevis3d.kernels.stacks`), against brute-force twins written from speedscope's semantics:
the time-ordered view (a frame continues while consecutive stacks agree up to it) and the
Left Heavy view (each frame path once, children heaviest first, self weight at the right)."""
from __future__ import annotations

import numpy as np
import pytest

from tracevis3d.io.limits import DEFAULT_LIMITS
from tracevis3d.io.stacks import FrameTable, StackProfile, merge_trace, merged_trace, timed_trace
from tracevis3d.kernels import stacks as ks
from tracevis3d.model import TraceFormatError


def _paths(parent, frame):
    """Each stack's frame path, root first (brute force)."""
    out = []
    for s in range(len(parent)):
        p, x = [], s
        while x >= 0:
            p.append(int(frame[x]))
            x = int(parent[x])
        out.append(tuple(reversed(p)))
    return out


def _twin_time_order(paths, times, end):
    """speedscope's time-ordered view: a list of (path, start, end) per call."""
    calls, open_ = [], []  # open_: [(path prefix, start)]
    for k, (pth, t) in enumerate(zip(paths + [()], list(times) + [end])):
        common = 0
        while common < len(open_) and common < len(pth) and open_[common][0] == pth[:common + 1]:
            common += 1
        while len(open_) > common:
            pre, s = open_.pop()
            if t > s:
                calls.append((pre, s, t))
        for d in range(common, len(pth)):
            open_.append((pth[:d + 1], t))
    return sorted(calls)


def _twin_left_heavy(paths, weights):
    """speedscope's Left Heavy view: (path, start, end) of every frame path with weight > 0."""
    total, self_w = {}, {}
    for pth, w in zip(paths, weights):
        if not pth:
            continue
        self_w[pth] = self_w.get(pth, 0.0) + w
        for d in range(1, len(pth) + 1):
            total[pth[:d]] = total.get(pth[:d], 0.0) + w
    first_seen = {}
    for pth in paths:
        for d in range(1, len(pth) + 1):
            first_seen.setdefault(pth[:d][-1], len(first_seen))
    calls = []

    def lay(prefix, x):
        kids = [p for p in total if len(p) == len(prefix) + 1 and p[:len(prefix)] == prefix and total[p] > 0]
        kids.sort(key=lambda p: (-total[p], p[-1]))
        for p in kids:
            calls.append((p, x, x + total[p]))
            lay(p, x)
            x += total[p]

    lay((), 0.0)
    return sorted(calls)


def _calls_of(trace):
    out = []
    for i in range(len(trace)):
        p, x = [], i
        while x >= 0:
            p.append(int(trace.func[x]))
            x = int(trace.parent[x])
        out.append((tuple(reversed(p)), float(trace.start[i]), float(trace.end[i])))
    return sorted(out)


def _random_profile(rng, n_frames=4, n_stacks=30, n_samples=60):
    parent = np.full(n_stacks, -1, np.int64)
    for s in range(1, n_stacks):
        parent[s] = rng.integers(-1, s)  # any earlier stack, or a root
    frame = rng.integers(0, n_frames, n_stacks)
    samples = rng.integers(-1, n_stacks, n_samples)
    return parent, frame, samples


@pytest.mark.parametrize("seed", range(12))
def test_timed_trace_equals_speedscope_time_order(seed):
    rng = np.random.default_rng(seed)
    parent, frame, samples = _random_profile(rng)
    times = np.sort(rng.choice(np.arange(1000), samples.size, replace=False)).astype(float)
    fr = FrameTable()
    for k in range(4):
        fr.add(f"f{k}")
    p = StackProfile("t", parent, frame, samples, sample_time=times, end_time=float(times[-1] + 3))
    t = timed_trace(fr, [p], source="x", fmt="test", limits=DEFAULT_LIMITS, input_bytes=10_000, warn=False)
    paths = [(_paths(parent, frame)[s] if s >= 0 else ()) for s in samples]
    want = _twin_time_order(paths, times - times[0], float(times[-1] + 3 - times[0]))
    assert _calls_of(t) == want
    assert t.meta["n_samples"] == samples.size and t.meta["clock_origin"] == times[0]


@pytest.mark.parametrize("seed", range(12))
def test_merged_trace_equals_speedscope_left_heavy(seed):
    rng = np.random.default_rng(100 + seed)
    parent, frame, samples = _random_profile(rng)
    weights = rng.integers(0, 5, samples.size).astype(float)
    fr = FrameTable()
    for k in range(4):
        fr.add(f"f{k}")
    p = StackProfile("t", parent, frame, samples, sample_weight=weights)
    if not (weights[samples >= 0] > 0).any():
        return
    t = merged_trace(fr, [p], unit="samples", source="x", fmt="test", limits=DEFAULT_LIMITS, input_bytes=10_000,
                     warn=False)
    paths = [(_paths(parent, frame)[s] if s >= 0 else ()) for s in samples]
    assert _calls_of(t) == _twin_left_heavy(paths, weights)
    assert t.meta["merged"] and t.meta["x_unit"] == "samples"


def test_canonical_nodes_merges_equal_paths_only():
    parent = np.array([-1, 0, 0, -1, 3, 1], np.int64)
    frame = np.array([0, 1, 1, 0, 2, 2], np.int64)
    from tracevis3d.kernels.chrome_tree import frame_depths

    par, depth, _, _ = frame_depths(parent, 100)
    canon, c_parent, c_frame, _ = ks.canonical_nodes(par, frame, depth)
    paths = _paths(parent, frame)
    for i in range(6):
        for j in range(6):
            assert (canon[i] == canon[j]) == (paths[i] == paths[j])
    assert _paths(c_parent, c_frame) == sorted(set(paths), key=lambda p: [paths.index(p)])


def test_merge_trace_of_a_timed_trace_keeps_total_self_time():
    import tracevis3d

    t = tracevis3d.synthetic(3000, threads=2, seed=3)
    m = merge_trace(t)
    assert m.meta["merged"] and m.meta["x_unit"] == "µs"
    for th in range(t.n_threads):
        a = t.self_time[t.thread == th].sum()
        roots = (m.thread == th) & (m.parent < 0)
        assert np.isclose((m.end[roots] - m.start[roots]).sum(), a, rtol=1e-9)
    assert len(m) <= len(t)


def test_bad_stack_tables_are_repaired_or_refused():
    fr = FrameTable()
    fr.add("a")
    # a cycle of parents, a frame out of range, a stack out of range, a negative and a nan weight
    p = StackProfile("t", np.array([1, 0, 7], np.int64), np.array([0, 0, 9], np.int64), np.array([0, 1, 2, 5, -3]),
                     sample_time=np.array([0.0, 1.0, 2.0, 3.0, 4.0]))
    t = timed_trace(fr, [p], source="bad.json", fmt="test", limits=DEFAULT_LIMITS, input_bytes=100, warn=False)
    assert {"stack_cycle", "stack_frame_range", "stack_parent_range", "sample_stack_range"} <= set(t.meta["repairs"])
    with pytest.raises(TraceFormatError, match="bad.json: no samples"):
        timed_trace(fr, [StackProfile("t", np.zeros(0), np.zeros(0), np.zeros(0, np.int64), sample_time=np.zeros(0))],
                    source="bad.json", fmt="test", limits=DEFAULT_LIMITS, input_bytes=100)
    q = StackProfile("t", np.array([-1]), np.array([0]), np.array([0, 0]), sample_weight=np.array([np.nan, -1.0]))
    with pytest.raises(TraceFormatError, match="weigh nothing"):
        merged_trace(fr, [q], unit="samples", source="bad.json", fmt="test", limits=DEFAULT_LIMITS, input_bytes=100,
                     warn=False)
    r = StackProfile("t", np.array([-1]), np.array([0]), np.array([0, 0]), sample_time=np.array([0.0, 1e300]))
    t = timed_trace(fr, [r], source="bad.json", fmt="test", limits=DEFAULT_LIMITS, input_bytes=100, warn=False)
    assert "sample_time" in t.meta["repairs"] and t.end.max() < 1e21


def _random_forest(rng, n, n_frames, forward):
    """A stack table of ``n`` nodes: parents before children (``forward``) or shuffled; a few
    nodes with many children (past the child lists of `canonical_nodes`, into its hash table)."""
    parent = np.full(n, -1, np.int64)
    for s in range(1, n):
        parent[s] = rng.integers(-1, s) if rng.random() < 0.7 else rng.integers(-1, min(s, 3))
    frame = rng.integers(0, n_frames, n)
    if not forward:
        perm = rng.permutation(n)
        inv = np.empty(n, np.int64)
        inv[perm] = np.arange(n)
        parent = np.where(parent >= 0, inv[np.maximum(parent, 0)], -1)[np.argsort(inv)]
        frame = frame[np.argsort(inv)]
    return parent, frame


@pytest.mark.parametrize("seed", range(8))
def test_canonical_nodes_against_frame_paths(seed):
    """canon[i] == canon[j] exactly when nodes i and j have one frame path, in forward tables
    and shuffled ones, with wide nodes; the canonical forest holds each path once."""
    from tracevis3d.kernels.chrome_tree import frame_depths

    rng = np.random.default_rng(seed)
    parent, frame = _random_forest(rng, 400, 40 if seed % 2 else 3, forward=seed < 4)
    par, depth, _, _ = frame_depths(parent, 1000)
    canon, c_parent, c_frame, c_depth = ks.canonical_nodes(par, frame, depth)
    paths = _paths(parent, frame)
    first = {}
    for i, pth in enumerate(paths):
        j = first.setdefault(pth, i)
        assert canon[i] == canon[j]
    assert len(set(canon.tolist())) == len(first) == c_parent.size
    c_paths = _paths(c_parent, c_frame)
    assert sorted(c_paths) == sorted(first) and all(c_paths[canon[i]] == paths[i] for i in range(len(paths)))
    assert all(c_depth[k] == len(c_paths[k]) - 1 for k in range(c_parent.size))


def _twin_calls(ts, nodes, c_parent, c_frame):
    """Brute force of `expand_into` + `drop_instant_calls`: (frame path, start, end, depth) of every call."""
    paths = [(_paths(c_parent, c_frame)[x] if x >= 0 else ()) for x in nodes]
    return _twin_time_order(paths[:-1], ts[:-1], float(ts[-1]))


@pytest.mark.parametrize("seed", range(8))
def test_count_and_expand_calls_against_the_time_order(seed):
    """`count_calls` counts what `expand_into` writes; the calls (several threads in one set of
    arrays, samples at one instant included) are speedscope's time order."""
    from tracevis3d.kernels.chrome_tree import frame_depths

    rng = np.random.default_rng(50 + seed)
    threads = []
    for _ in range(3):
        parent, frame = _random_forest(rng, 60, 5, forward=True)
        par, depth, _, _ = frame_depths(parent, 1000)
        canon, cp, cf, cd = ks.canonical_nodes(par, frame, depth)
        n = int(rng.integers(1, 80))
        ts = np.sort(rng.integers(0, 40, n + 1)).astype(float)  # repeated times: calls of no time
        nodes = np.append(canon[rng.integers(0, 60, n)], -1)
        nodes[rng.random(n + 1) < 0.1] = -1
        threads.append((ts, nodes, cp, cd, cf))
    counts = [ks.count_calls(nodes, cp, cd) for _, nodes, cp, cd, _ in threads]
    total = sum(counts)
    out = (np.empty(total, np.int32), np.empty(total), np.empty(total), np.empty(total, np.int32),
           np.empty(total, np.int32), np.empty(total, np.int32))
    base = 0
    for (ts, nodes, cp, cd, cf), c in zip(threads, counts):
        wrote, _ = ks.expand_into(ts, nodes, cp, cd, cf, base, *out)
        assert wrote == c
        base += wrote
    thread = np.repeat(np.arange(3, dtype=np.int32), counts)
    func, start, end, par, dep, eix, thr = ks.drop_instant_calls(*out, thread)
    for k, (ts, nodes, cp, cd, cf) in enumerate(threads):
        got = []
        for i in np.flatnonzero(thr == k):
            p, x = [], i
            while x >= 0:
                p.append(int(func[x]))
                x = int(par[x])
            assert dep[i] == len(p) - 1 and eix[i] > i and (eix[i] == len(func) or dep[eix[i]] <= dep[i])
            got.append((tuple(reversed(p)), float(start[i]), float(end[i])))
        assert sorted(got) == _twin_calls(ts, nodes, cp, cf)
