"""The cone tree of one call's subtree (``render-cone --root CALL``, what `view.zoom_to(call=...)`
lays out on a cone tree): `transform.subtree_trace`, `transform.find_call` and `cone_layout`'s
``root``, each against a brute-force twin on random call trees (tests/support/tree_factory.py)."""
import numpy as np
import pytest

from tracevis3d.layout.cone import ConeParams, cone_layout
from tracevis3d.transform import find_call, subtree_trace
from tree_factory import random_trace


def _subtree_twin(trace, call: int) -> list:
    """(func, start, end, parent within the subtree, depth within it) per call of the subtree,
    found by walking parents (no end_index)."""
    out = []
    for k in range(len(trace)):
        a, path = k, []
        while a >= 0 and a != call:
            a = int(trace.parent[a])
            path.append(a)
        if a == call:
            out.append((int(trace.func[k]), float(trace.start[k]), float(trace.end[k]), len(path)))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_subtree_of_a_call_is_a_trace_of_its_own(seed):
    tr = random_trace(n_roots=4, fanout=3, max_depth=5, threads=2, seed=seed)
    calls = np.flatnonzero(tr.end_index - np.arange(len(tr)) >= 3)
    for call in calls[:: max(1, calls.size // 6)].tolist():
        sub = subtree_trace(tr, call).check()
        twin = _subtree_twin(tr, call)
        assert len(sub) == len(twin) and sub.n_threads == 1
        got = [(int(f), float(s), float(e), int(d)) for f, s, e, d in zip(sub.func, sub.start, sub.end, sub.depth)]
        assert got == twin
        assert sub.parent[0] == -1 and sub.depth[0] == 0
        inner = np.arange(1, len(sub))
        assert np.array_equal(sub.parent[inner] + call, tr.parent[inner + call])
        assert sub.thread_names == [tr.thread_names[tr.thread[call]]]


def test_find_call_takes_an_index_or_a_names_longest_call():
    tr = random_trace(n_roots=5, seed=3)
    dur = tr.end - tr.start
    for f in range(3):
        name = tr.function_names[f]
        mine = [i for i in range(len(tr)) if tr.function_names[tr.func[i]] == name]
        if not mine:
            continue
        best = min(mine, key=lambda i: (-dur[i], i))
        assert find_call(tr, name) == best
    assert find_call(tr, 7) == 7 and find_call(tr, " 7 ") == 7
    with pytest.raises(ValueError, match=f"no call {len(tr)} in the trace"):
        find_call(tr, len(tr))
    with pytest.raises(ValueError, match="no call in the trace is named like 'nothing like it'"):
        find_call(tr, "nothing like it")


def test_the_rooted_cone_is_the_cone_of_the_subtree_with_the_loaded_traces_calls():
    tr = random_trace(n_roots=3, fanout=4, max_depth=6, threads=2, seed=5)
    size = tr.end_index - np.arange(len(tr))
    call = int(np.flatnonzero(size == size[tr.depth == 1].max())[0])
    params = ConeParams(fold="none", max_nodes=2000, show_labels=False)
    rooted = cone_layout(tr, ConeParams(root=call, fold="none", max_nodes=2000, show_labels=False))
    alone = cone_layout(subtree_trace(tr, call), params)
    assert rooted.meta["root_call"] == call and alone.meta["root_call"] is None
    assert rooted.meta["n_nodes"] == alone.meta["n_nodes"] and rooted.meta["n_calls"] == size[call]
    assert f"subtree of {tr.function_names[tr.func[call]].rsplit('.', 1)[-1]} (call {call:,})" in rooted.meta["title"]
    spheres = {lay.name: lay for lay in rooted.layers}["cone_nodes"].attributes["call_index"]
    spheres_alone = {lay.name: lay for lay in alone.layers}["cone_nodes"].attributes["call_index"]
    real = spheres >= 0
    # picking a sphere gives a call of the loaded trace, inside the subtree
    assert np.all((spheres[real] >= call) & (spheres[real] < tr.end_index[call]))
    assert np.array_equal(spheres[real], spheres_alone[spheres_alone >= 0] + call)
    with pytest.raises(ValueError, match="root: no call in the trace is named like 'nothing'"):
        cone_layout(tr, ConeParams(root="nothing"))
