"""What the collapsed-stack load may skip, proven on the scan's own output: its trie is canonical
already (`kernels.stacks.canonical_nodes` returns it unchanged), so a `StackProfile` that says
so (``distinct_paths``) builds the very same trace without it."""
from __future__ import annotations

import random

import numpy as np
import pytest
from left_heavy_twin import left_heavy_order

from tracevis3d.io import collapsed
from tracevis3d.io.limits import DEFAULT_LIMITS
from tracevis3d.io.stacks import FrameTable, StackProfile, merged_trace, timed_trace
from tracevis3d.kernels import stacks as ks
from tracevis3d.kernels.chrome_tree import frame_depths
from tracevis3d.kernels.textscan import OK, collapsed_scan


def _collapsed_text(rng: random.Random, n_lines: int, sort: bool) -> bytes:
    frames = [f"f{k}" for k in range(12)] + ["", "std::a::b", "x y"]
    lines = []
    for _ in range(n_lines):
        depth = rng.randint(0, 9)
        stack = ";".join(rng.choice(frames) for _ in range(depth))
        if rng.random() < 0.1:
            stack += ";"
        lines.append(f"{stack} {rng.randint(0, 5)}")
    if sort:
        lines.sort()
    if rng.random() < 0.3:
        lines.insert(rng.randint(0, len(lines)), "not a stack line")
    return ("\n".join(lines) + "\n").encode()


def _scan(text: bytes, max_depth: int = 1000, python: bool = False):
    buf = np.frombuffer(text, np.uint8)
    if python:
        res = collapsed._python_scan(buf, max_depth)
    else:
        res = collapsed_scan(buf, 0, buf.size, np.uint64(12345), max_depth)
        assert res[0] == OK
        res = res[1:]
    return res


CASES = [(seed, sort, python, depth) for seed in range(24) for sort in (True, False) for python in (False, True)
         for depth in (1000, 3)]


@pytest.mark.parametrize("seed,sort,python,max_depth", CASES)
def test_the_scan_trie_is_canonical(seed, sort, python, max_depth):
    rng = random.Random(seed)
    _, _, _, parent, frame, _, _, _, _ = _scan(_collapsed_text(rng, rng.randint(1, 300), sort), max_depth, python)
    assert np.all(parent < np.arange(parent.size))  # parents first
    par, depth, n_cyc, n_deep = frame_depths(parent.copy(), 1000)
    assert n_cyc == 0 and n_deep == 0
    canon, c_parent, c_frame, c_depth = ks.canonical_nodes(par, frame, depth)
    assert np.array_equal(canon, np.arange(parent.size))
    assert np.array_equal(c_parent, parent) and np.array_equal(c_frame, frame) and np.array_equal(c_depth, depth)


def _same_trace(a, b):
    for name in ("func", "start", "end", "parent", "depth", "end_index", "thread"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.function_names == b.function_names


@pytest.mark.parametrize("seed", range(12))
def test_distinct_paths_builds_the_same_trace(seed):
    rng = random.Random(100 + seed)
    f_off, f_len, _, parent, frame, leaf, weight, _, _ = _scan(_collapsed_text(rng, 200, seed % 2 == 0))
    frames = FrameTable()
    for k in range(f_off.size):
        frames.add(f"fr{k}")
    for build in (merged_trace, timed_trace):
        traces = []
        for distinct in (False, True):
            p = StackProfile(thread_name="t", stack_parent=parent, stack_frame=frame, sample_stack=leaf,
                             sample_weight=weight, distinct_paths=distinct)
            kw = dict(unit="samples") if build is merged_trace else {}
            traces.append(build(frames, [p], source="x", fmt="collapsed", limits=DEFAULT_LIMITS, input_bytes=1 << 20,
                                warn=False, **kw))
        _same_trace(*traces)


def test_a_repaired_table_is_made_canonical_even_when_vouched_for():
    """A reader's promise holds for the table it wrote; once the checks cut it (a parent out of
    range makes a root), two roots may share a frame and canonical_nodes merges them."""
    frames = FrameTable()
    frames.add("a")
    frames.add("b")
    p = StackProfile(thread_name="t", stack_parent=np.array([-1, 99, 0]), stack_frame=np.array([0, 0, 1]),
                     sample_stack=np.array([1, 2]), sample_weight=np.array([1.0, 1.0]), distinct_paths=True)
    t = merged_trace(frames, [p], unit="samples", source="x", fmt="collapsed", limits=DEFAULT_LIMITS,
                     input_bytes=1 << 20, warn=False)
    assert sorted(t.function_names[f] for f in t.func) == ["a", "b"]  # one "a" of weight 2, not two
    assert t.end[t.func == 0].tolist() == [2.0]


@pytest.mark.parametrize("seed", range(40))
def test_left_heavy_opens_each_node_of_weight_once(seed):
    """merged_trace sizes its calls by the nodes of weight > 0 instead of walking the samples
    (`kernels.stacks.count_calls`): the two counts agree on random weighted forests, zero
    weights, tiny weights beside huge ones and wide nodes included."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    parent = np.array([-1] + [int(rng.integers(-1, i)) if rng.random() < 0.9 else -1 for i in range(1, n)],
                      np.int64)
    frame = rng.integers(0, 30, n).astype(np.int64)
    par, depth, _, _ = frame_depths(parent.copy(), 1000)
    _, c_parent, c_frame, c_depth = ks.canonical_nodes(par, frame, depth)
    m = c_parent.size
    self_w = np.where(rng.random(m) < 0.4, 0.0, rng.random(m) * 10.0 ** rng.integers(-12, 16, m))
    total = ks.subtree_totals(c_parent, c_depth, self_w)
    node, pos = left_heavy_order(c_parent, total, self_w, c_frame)
    assert ks.count_calls(node, c_parent, c_depth) == int(np.count_nonzero(total > 0))
