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
