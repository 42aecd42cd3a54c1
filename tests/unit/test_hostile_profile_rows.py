"""Issue 78's slow V8 case: a Chrome trace of 10^4 V8 profiles (Profile + ProfileChunk events)
read its event table an element at a time, three reads per event, and took each profile's step
with `np.median`.  `chrome_profile.read_profiles` reads each column once for all its rows; the
trace is the same."""
from __future__ import annotations

import numpy as np
import pytest

import hostile_numbers as hn
import tracevis3d
from tracevis3d.io import chrome_profile

pytestmark = pytest.mark.timeout(300)


class _Counted:
    """An event table whose reads are counted (each ``table[rows, column]``)."""

    def __init__(self, table, reads: list):
        self.table, self.reads = table, reads

    def __getitem__(self, key):
        self.reads.append(key[1])
        return self.table[key]

    def __getattr__(self, name):
        return getattr(self.table, name)


def test_profile_events_read_their_columns_once(tmp_path, monkeypatch):
    """400 profile events: a handful of column reads in all, not three per event; the trace is
    the one read without counting."""
    p = tmp_path / "v8.json"
    p.write_bytes(hn.chrome_v8_profiles(200))
    plain = tracevis3d.load(p, warn=False)
    reads: list = []
    real = chrome_profile.read_profiles

    def counted(buf, ii, ss, rows, *a, **k):
        assert len(rows) == 400
        return real(buf, _Counted(ii, reads), _Counted(ss, reads), rows, *a, **k)

    monkeypatch.setattr(chrome_profile, "read_profiles", counted)
    t = tracevis3d.load(p, warn=False)
    assert 0 < len(reads) <= 4, len(reads)
    for k in ("func", "start", "end", "depth", "parent", "thread", "thread_pid", "thread_tid"):
        assert np.array_equal(getattr(t, k), getattr(plain, k)), k
    assert t.thread_names == plain.thread_names and t.function_names == plain.function_names


def test_a_profiles_step_is_numpys_median():
    """`_median` (a profile's sampling step) is `np.median`, value for value, on sizes odd and
    even, ties and spreads of many magnitudes."""
    rng = np.random.default_rng(7)
    assert chrome_profile._median(np.zeros(0)) == 0.0
    for n in [*range(1, 30), 999, 1000]:
        for x in (rng.random(n) * 1e3, np.round(rng.random(n) * 4) + 0.5, rng.exponential(size=n) * 1e-7,
                  10.0 ** rng.integers(-300, 300, n)):
            assert chrome_profile._median(x) == float(np.median(x)), n


def _leaves_twin(raw, parent, kind_of):
    """DevTools' rules sample by sample (`sample_leaves`' docstring): a lone ``(program)`` sample
    between two JavaScript samples of the same bottom frame takes the previous one's node; GC
    on top of the last non-GC sample's stack, one node per stack; else JavaScript or empty."""
    n = raw.size

    def kind(x):
        return int(kind_of[x]) if x >= 0 else 0

    def bottom(x):
        while parent[x] >= 0:
            x = int(parent[x])
        return x

    leaf = [int(x) if kind(x) == 3 else -1 for x in raw.tolist()]
    for i in range(1, n - 1):
        a, b, c = int(raw[i - 1]), int(raw[i]), int(raw[i + 1])
        if kind(b) == 1 and kind(a) == 3 and kind(c) == 3 and bottom(a) == bottom(c):
            leaf[i] = a
    under, last = [], -1
    for i in range(n):
        if kind(int(raw[i])) != 2:
            last = i
        under.append(leaf[last] if last >= 0 else -1)
    gc = sorted({under[i] for i in range(n) if kind(int(raw[i])) == 2 and under[i] >= 0})
    for i in range(n):
        if kind(int(raw[i])) == 2:
            leaf[i] = parent.size + gc.index(under[i]) if under[i] >= 0 else int(raw[i])
    return leaf, gc


def test_sample_leaves_match_devtools_rules_sample_by_sample():
    """`leaves_of_kinds` (the top-level frames found only when a lone ``(program)`` sample needs
    them) against a sample-by-sample twin: random trees, every kind of node.  (In a parent cycle
    the bottom frame is wherever pointer jumping stops: not a rule to twin.)"""
    rng = np.random.default_rng(3)
    lone_seen = 0
    for _ in range(300):
        n_nodes, n = int(rng.integers(1, 12)), int(rng.integers(0, 40))
        parent = np.array([int(rng.integers(-1, k)) if k else -1 for k in range(n_nodes)], np.int64)
        kind_of = rng.choice(np.array([0, 1, 2, 3, 3, 3], np.int8), n_nodes)
        raw = rng.integers(-1, n_nodes, n).astype(np.int64)
        leaf, gc = chrome_profile.leaves_of_kinds(raw, parent, kind_of)
        want_leaf, want_gc = _leaves_twin(raw, parent, kind_of)
        assert leaf.tolist() == want_leaf and gc.tolist() == want_gc
        lone_seen += sum(1 for i in range(1, n - 1) if want_leaf[i] == raw[i - 1] and kind_of[raw[i]] == 1)
    assert lone_seen > 20, lone_seen


def test_parents_are_walked_only_for_a_lone_program_sample():
    """The top-level frames (pointer jumping over all nodes, per profile) are found only when a
    lone ``(program)`` sample needs them: parents no walk could follow (out of range) are never
    read for a profile without one (before: every profile walked them)."""
    kind_of = np.array([3, 3, 1], np.int8)
    unwalkable = np.array([9, 9, 9], np.int64)
    leaf, gc = chrome_profile.leaves_of_kinds(np.array([0, 1, 1, 0, 2, 2]), unwalkable, kind_of)
    assert leaf.tolist() == [0, 1, 1, 0, -1, -1] and gc.size == 0
    with pytest.raises(IndexError):  # a lone (program) sample: now they are walked
        chrome_profile.leaves_of_kinds(np.array([0, 2, 1]), unwalkable, kind_of)
