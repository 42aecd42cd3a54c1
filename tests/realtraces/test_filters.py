"""Filters (SEAT 2.9.1): relaxed pattern classes, collapse, partially-expanded flags and the
utility score against brute-force twins and a hand-made call graph."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tracevis3d
from tracevis3d.analysis.filters import (FilterSpec, call_graph, filter_trace, repeated_patterns, top_utilities,
                                         utilities)
from tracevis3d.kernels.patterns import collapse_repeats, partially_expanded
from tracevis3d.model import Trace

from tree_strategies import forest, ops_strategy
from tree_factory import random_trace


def children(t, i):
    out, c = [], i + 1
    while c < t.end_index[i]:
        out.append(c)
        c = t.end_index[c]
    return out


def relaxed_form(t, i, ignore_order, collapse_runs, depth):
    """Brute force: the relaxed canonical form of call i as nested tuples (recursive)."""
    if depth == 0:
        return (int(t.func[i]),)
    kids = [relaxed_form(t, c, ignore_order, collapse_runs, None if depth is None else depth - 1)
            for c in children(t, i)]
    if ignore_order:
        kids.sort(key=repr)
    if collapse_runs:
        kids = [k for j, k in enumerate(kids) if j == 0 or kids[j - 1] != k]
    return (int(t.func[i]), tuple(kids))


def same_partition(a, b):
    """Two labelings of the same items define the same partition."""
    pairs = set(zip(a.tolist(), b.tolist()))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=ops_strategy, ignore_order=st.booleans(), collapse_runs=st.booleans(),
       depth=st.one_of(st.none(), st.integers(0, 3)))
def test_relaxed_patterns_equal_brute_force(ops, ignore_order, collapse_runs, depth):
    t = forest(ops, True, 2)
    p = repeated_patterns(t, ignore_order, collapse_runs, depth)
    forms = [relaxed_form(t, i, ignore_order, collapse_runs, depth) for i in range(len(t))]
    ids = {f: k for k, f in enumerate(dict.fromkeys(forms))}
    brute = np.array([ids[f] for f in forms])
    assert p.n_classes == len(ids)
    assert same_partition(p.cls, brute)
    assert np.array_equal(p.count, np.bincount(p.cls, minlength=p.n_classes))


def test_relaxed_criteria_merge_what_they_should():
    # root0: a(b, b, c)   root1: a(c, b)   root2: a(b, c)   root3: a(b, c) with c(d)
    func = [0, 1, 1, 2, 0, 2, 1, 0, 1, 2, 0, 1, 2, 3]
    parent = [-1, 0, 0, 0, -1, 4, 4, -1, 7, 7, -1, 10, 10, 12]
    start = np.arange(14, dtype=float)
    end = start + 0.5
    for r, e in ((0, 4), (4, 7), (7, 10), (10, 14)):
        end[r] = e - 0.1
    end[12] = 13.8
    t = Trace.from_arrays(func, start, end, parent).check()
    roots = [0, 4, 7, 10]

    def groups(**kw):
        c = repeated_patterns(t, **kw).cls[roots]
        return [int(np.flatnonzero(c == c[j])[0]) for j in range(4)]
    assert groups() == [0, 1, 2, 3]
    assert groups(ignore_order=True) == [0, 1, 1, 3]
    assert groups(collapse_runs=True) == [0, 1, 0, 3]
    assert groups(ignore_order=True, collapse_runs=True) == [0, 0, 0, 3]
    assert groups(max_depth=1, ignore_order=True, collapse_runs=True) == [0, 0, 0, 0]
    assert groups(max_depth=0) == [0, 0, 0, 0]


def test_collapse_and_partial_against_brute_force():
    t = random_trace(n_roots=30, fanout=3, max_depth=4, threads=2, seed=7, n_func=2)
    p = repeated_patterns(t)
    eligible = np.zeros(p.n_classes, bool)
    eligible[p.repeated(3)] = True
    hidden, collapsed = collapse_repeats(t.end_index, p.cls, eligible)
    # brute force: walk pre-order, remember classes seen outside hidden subtrees
    seen, b_hidden, b_coll = set(), np.zeros(len(t), bool), np.zeros(len(t), bool)
    for i in range(len(t)):
        if b_hidden[i] or not eligible[p.cls[i]]:
            continue
        if p.cls[i] in seen:
            b_hidden[i + 1: t.end_index[i]] = True
            b_coll[i] = t.end_index[i] > i + 1
        else:
            seen.add(p.cls[i])
    assert np.array_equal(hidden, b_hidden) and np.array_equal(collapsed, b_coll)
    assert collapsed.any()
    partial = partially_expanded(t.parent, hidden)
    b_partial = np.zeros(len(t), bool)
    for h in np.flatnonzero(hidden):
        a = t.parent[h]
        while a >= 0 and hidden[a]:
            a = t.parent[a]
        if a >= 0:
            b_partial[a] = True
    assert np.array_equal(partial, b_partial)
    assert np.array_equal(partial & ~hidden, collapsed)  # only collapsed roots lost calls


def hand_made_trace() -> Trace:
    """main calls a, b, c; each of a, b, c calls log once; a also calls log twice more; log calls
    nothing; b calls fmt, fmt calls log.  Functions: main=0 a=1 b=2 c=3 log=4 fmt=5."""
    calls = [(0, -1), (1, 0), (4, 1), (4, 1), (4, 1), (2, 0), (4, 5), (5, 5), (4, 7), (3, 0), (4, 9)]
    func = [f for f, _ in calls]
    parent = [p for _, p in calls]
    n = len(func)
    start = np.arange(n, dtype=float)
    end = start + 0.5
    parent_arr = np.array(parent)
    for i in range(n - 1, -1, -1):  # parents end after their last child
        kids = np.flatnonzero(parent_arr == i)
        if kids.size:
            end[i] = end[kids].max() + 0.1
    names = ["main", "a", "b", "c", "log", "fmt"]
    return Trace.from_arrays(func, start, end, parent, function_names=names).check()


def test_utility_scores_on_a_hand_made_call_graph():
    t = hand_made_trace()
    caller, callee, count = call_graph(t)
    edges = {(int(a), int(b)): int(c) for a, b, c in zip(caller, callee, count)}
    assert edges == {(0, 1): 1, (0, 2): 1, (0, 3): 1, (1, 4): 3, (2, 4): 1, (2, 5): 1, (5, 4): 1, (3, 4): 1}
    u = utilities(t)
    assert u.fan_in.tolist() == [0, 1, 1, 1, 4, 1] and u.fan_out.tolist() == [3, 1, 2, 1, 0, 1]
    big_n = 6
    p = np.array([3, 1, 1, 1]) / 6  # log's calls by caller a, b, c, fmt
    h = -(p * np.log(p)).sum()
    assert u.scatter[4] == pytest.approx(h / math.log(big_n))
    expect = 4 / big_n * math.log(big_n / 1) / math.log(big_n) * (0.5 + 0.5 * h / math.log(big_n))
    assert u.score[4] == pytest.approx(expect)
    # one caller, scatter 0: fan_in/N · log(N/(fan_out+1))/log N · 1/2
    assert u.score[5] == pytest.approx(1 / 6 * math.log(6 / 2) / math.log(6) * 0.5)
    assert u.score[0] == 0.0
    top = top_utilities(t, 3, min_fan_in=2)
    assert [r["name"] for r in top] == ["log"]


def test_filter_trace_hides_utilities_and_marks_callers_partial():
    t = hand_made_trace()
    f = filter_trace(t, FilterSpec(hide_utilities=1))
    assert "log" not in [f.trace.function_names[x] for x in f.trace.func]
    kept_names = [t.function_names[t.func[i]] for i in f.orig]
    assert kept_names == ["main", "a", "b", "fmt", "c"]
    assert [kept_names[i] for i in np.flatnonzero(f.partial)] == ["a", "b", "fmt", "c"]
    f.trace.check()


def test_filters_on_a_real_trace(realdata):
    t = tracevis3d.load(realdata / "viztracer-examples" / "different_sorts.json")
    top = top_utilities(t, 3)
    assert top[0]["name"] == "builtins.len"
    f = filter_trace(t, FilterSpec(collapse_patterns=True))
    f.trace.check()
    assert len(f.trace) < len(t) / 2 and f.collapsed.sum() > 100
    assert np.all(f.partial[f.collapsed])


def test_expand_on_demand_and_highlight_in_the_icicle():
    """A call whose children a filter hides is partial; asking to expand it brings its
    children back (and only its); highlight keeps the colour of matching calls, the others
    take the pale slot."""
    from tracevis3d.analysis.filters import FilterSpec, filter_trace
    from tracevis3d.layout.colour import PALE_RGB
    from tracevis3d.layout.icicle import icicle_layout
    from tracevis3d.params.icicle import IcicleParams
    from tracevis3d.model import Trace

    #   main → [helper → leaf, helper → leaf, work]
    names = ["main", "helper", "leaf", "work"]
    func = [0, 1, 2, 1, 2, 3]
    start = [0.0, 10.0, 12.0, 30.0, 32.0, 50.0]
    end = [100.0, 20.0, 18.0, 40.0, 38.0, 90.0]
    parent = [-1, 0, 1, 0, 3, 0]
    t = Trace.from_arrays(func, start, end, parent, function_names=names, thread_names=["MainThread"]).check()
    hidden = filter_trace(t, FilterSpec(hide=("^helper$",)))
    assert hidden.partial[0]  # main lost its helper children
    assert sorted(t.function_names[t.func[i]] for i in hidden.orig) == ["leaf", "leaf", "main", "work"]
    back = filter_trace(t, FilterSpec(hide=("^helper$",), expand=(0,)))
    assert back.orig is None or len(back.orig) == len(t)  # main's children are shown again
    other = filter_trace(t, FilterSpec(hide=("^helper$",), expand=(5,)))  # expanding "work" changes nothing
    assert list(other.orig) == list(hidden.orig)
    for asked in ((6,), (0, 10**9), (-1,)):  # an index of another trace, with or without a filter: named
        for hide in ((), ("^helper$",)):
            with pytest.raises(ValueError, match=f"expand: no call {asked[-1]:,} in the trace \\(its calls are 0–5\\)"):
                filter_trace(t, FilterSpec(hide=hide, expand=asked))
    spec = icicle_layout(t, IcicleParams(resolution=(480, 270), highlight=["^work$"], fold="none",
                                         color_by="function"))
    boxes = spec.layer("calls")
    calls = boxes.attributes["call_index"]
    col = {t.function_names[t.func[c]]: boxes.colors[k, :3] for k, c in enumerate(calls)}
    assert np.allclose(col["main"], PALE_RGB, atol=1e-5) and np.allclose(col["leaf"], PALE_RGB, atol=1e-5)
    assert not np.allclose(col["work"], PALE_RGB, atol=0.05)
    with pytest.raises(ValueError, match="highlight: bad regular expression"):
        IcicleParams(highlight=["("]).validate()
