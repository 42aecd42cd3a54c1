"""The Trace model: invariants, derived arrays, subsets, names."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tracevis3d
from tracevis3d import Trace, TraceInvariantError
from tracevis3d.names import parse_function_name


def small():
    # thread 0: 0(1(2),3)  thread 1: 4(5)
    return Trace.from_arrays(
        func=[0, 1, 2, 1, 0, 2], start=[0, 1, 2, 5, 0, 1], end=[10, 4, 3, 6, 4, 2],
        parent=[-1, 0, 1, 0, -1, 4], thread=[0, 0, 0, 0, 1, 1],
        function_names=["main", "a.B.run", "aten::mm"], thread_names=["Main", "Worker"])


def test_derived_arrays():
    t = small().check()
    assert len(t) == 6 and t.n_threads == 2
    assert t.depth.tolist() == [0, 1, 2, 1, 0, 1]
    assert t.end_index.tolist() == [4, 3, 3, 4, 6, 6]
    assert t.duration.tolist() == [10, 3, 1, 1, 4, 1]
    assert t.self_time.tolist() == [6, 2, 1, 1, 3, 1]
    assert t.children_count.tolist() == [2, 1, 0, 0, 1, 0]
    assert t.subtree_size.tolist() == [4, 2, 1, 1, 2, 1]
    assert t.thread_ranges().tolist() == [[0, 4], [4, 6]]
    assert t.function_names[t.func[1]] == "a.B.run" and t.name(1) == "a.B.run"
    assert t.function_paths == [("main",), ("a", "B", "run"), ("aten", "mm")]
    assert t.nbytes / len(t) <= 64


def _self_time_brute(t, i):
    """Twin of `kernels.tree.self_times`: the duration less the children's, found by ``parent``."""
    kids = [j for j in range(len(t)) if t.parent[j] == i]
    return float(t.end[i] - t.start[i]) - sum(float(t.end[j] - t.start[j]) for j in kids)


def test_self_time_of_some_calls_is_self_time_bit_for_bit():
    t = small()
    assert t.self_time_of([3, 0, 4]).tolist() == [1, 6, 3] == [_self_time_brute(t, i) for i in (3, 0, 4)]
    s = tracevis3d.synthetic(20_000, threads=3, seed=5, sync=True)
    idx = np.random.default_rng(1).choice(len(s), 3000, replace=False)
    assert np.array_equal(s.self_time_of(idx), s.self_time[idx])  # same sums in the same order
    assert np.allclose(s.self_time_of(idx[:200]), [_self_time_brute(s, int(i)) for i in idx[:200]])
    assert s.self_time_of(np.zeros(0, np.int64)).shape == (0,)


def test_self_time_of_runs_of_consecutive_calls_is_self_time_bit_for_bit():
    """Runs of consecutive calls, as a whole figure's measure stage asks for them a chunk at a
    time (`layout.icicle_measure.MeasureUnits`): the whole trace, runs cut inside deep
    subtrees and at thread boundaries, one call, and a run that is not quite consecutive."""
    s = tracevis3d.synthetic(20_000, threads=3, seed=5, sync=True)
    want = s.self_time
    n = len(s)
    rng = np.random.default_rng(2)
    cuts = [(0, n), (0, 1), (n - 1, n), (1, n - 1)] + [tuple(sorted(rng.integers(0, n + 1, 2))) for _ in range(30)]
    for a, b in cuts:
        got = s.self_time_of(np.arange(a, b))
        assert got.tobytes() == want[a:b].tobytes(), (a, b)
    assert np.allclose([_self_time_brute(s, i) for i in range(500, 700)], s.self_time_of(np.arange(500, 700)))
    gap = np.r_[np.arange(100, 200), np.arange(201, 300)]  # not consecutive: one call at a time
    assert s.self_time_of(gap).tobytes() == want[gap].tobytes()


@pytest.mark.parametrize("field,value,match", [
    ("parent", [-1, 0, 0, 0, -1, 4], "subtree|sibling|depth"),
    ("depth", [0, 1, 2, 2, 0, 1], "depth"),
    ("end_index", [4, 3, 3, 5, 6, 6], "end_index|subtree"),
    ("start", [0, 1, 2, 5, 0, -1], "inside its parent"),
    ("end", [10, 4, 3, 12, 4, 2], "inside its parent"),
    ("thread", [0, 0, 0, 1, 0, 1], "contiguous|another thread"),
    ("func", [0, 1, 2, 1, 0, 7], "function table"),
])
def test_check_names_the_first_violation(field, value, match):
    t = small()
    setattr(t, field, np.asarray(value, dtype=getattr(t, field).dtype))
    with pytest.raises(TraceInvariantError, match=match):
        t.check()


def test_check_dtypes_and_overlapping_siblings():
    t = small()
    t.start = t.start.astype(np.float32)
    with pytest.raises(TraceInvariantError, match="dtype"):
        t.check()
    u = Trace.from_arrays(func=[0, 0, 0], start=[0, 1, 2], end=[10, 3, 4], parent=[-1, 0, 0])
    with pytest.raises(TraceInvariantError, match="next sibling"):
        u.check()


def test_check_names_bad_object_and_argument_offsets():
    """The CSR offsets of objects and args: a trace without objects whose offsets are not all 0, a
    decreasing offset where there are objects, args' offsets or calls out of order (`_check`)."""
    t = small()
    t.obj_ptr = np.array([0, 0, 1, 1, 0, 0, 0], t.obj_ptr.dtype)  # ends at 0 = len(obj_ids), but rises on the way
    with pytest.raises(TraceInvariantError, match="obj_ptr"):
        t.check()
    t = small()
    t.obj_ids = np.array([0, 0], t.obj_ids.dtype)
    t.object_names = ["lock"]
    t.obj_ptr = np.array([0, 2, 1, 2, 2, 2, 2], t.obj_ptr.dtype)
    with pytest.raises(TraceInvariantError, match="obj_ptr"):
        t.check()
    t.obj_ptr = np.array([0, 1, 1, 2, 2, 2, 2], t.obj_ptr.dtype)
    assert t.check() is t and list(t.objects_of(0)) == ["lock"]
    t = small()
    t.args_call = np.array([3, 1], t.args_call.dtype)
    t.args_ptr = np.array([0, 1, 2], t.args_ptr.dtype)
    t.args_blob = np.zeros(2, t.args_blob.dtype)
    with pytest.raises(TraceInvariantError, match="args_call"):
        t.check()
    t.args_call = np.array([1, 3], t.args_call.dtype)
    t.args_ptr = np.array([0, 2, 2], t.args_ptr.dtype)
    t.args_blob = np.zeros(2, t.args_blob.dtype)
    t.check()
    t.args_ptr = np.array([0, 2, 1], t.args_ptr.dtype)
    t.args_blob = np.zeros(1, t.args_blob.dtype)
    with pytest.raises(TraceInvariantError, match="args_ptr"):
        t.check()


def test_subset():
    t = small()
    s = t.subset(thread="Worker").check()
    assert len(s) == 2 and s.thread_names == ["Worker"] and s.parent.tolist() == [-1, 0]
    w = t.subset(time_window=(4.5, 7)).check()
    assert [w.name(i) for i in range(len(w))] == ["main", "a.B.run"]  # ancestor closure holds
    d = t.subset(max_depth=0).check()
    assert d.depth.max() == 0 and len(d) == 2
    both = t.subset(thread=[0, 1], time_window=(0, 1.5), max_depth=1).check()
    assert len(both) == 4
    with pytest.raises(KeyError):
        t.subset(thread="nope")
    with pytest.raises(ValueError):
        t.subset(time_window=(5, 1))


@settings(max_examples=30, deadline=None)
@given(st.integers(10, 3000), st.integers(1, 4), st.integers(0, 10**6), st.floats(0, 1), st.integers(0, 12))
def test_subset_of_synthetic_is_valid(n, threads, seed, frac, depth):
    t = tracevis3d.synthetic(n, threads=threads, seed=seed, sync=threads > 1)
    span = t.span
    s = t.subset(thread=list(range(0, t.n_threads, 2)), time_window=(frac * span * 0.5, frac * span),
                 max_depth=depth)
    s.check()
    assert len(s) <= len(t)
    # what is kept is exactly the calls that satisfy the three conditions
    keep = (np.isin(t.thread, range(0, t.n_threads, 2)) & (t.end >= frac * span * 0.5)
            & (t.start <= frac * span) & (t.depth <= depth))
    assert len(s) == int(keep.sum())
    assert np.array_equal(s.start, t.start[keep]) and np.array_equal(s.func, t.func[keep])


def test_save_load_synthetic_with_objects(tmp_path):
    t = tracevis3d.synthetic(5000, threads=3, seed=4, sync=True)
    p = tmp_path / "s.tv3d.npz"
    tracevis3d.save(t, p)
    u = tracevis3d.load(p).check()
    assert np.array_equal(t.obj_ids, u.obj_ids) and t.object_names == u.object_names
    assert u.objects_of(int(np.flatnonzero(u.kind > 0)[0]))


def test_native_rejects_other_zips(tmp_path):
    import zipfile

    p = tmp_path / "other.npz"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("a.txt", "x")
    with pytest.raises(tracevis3d.TraceFormatError, match="not a TraceVis3D"):
        tracevis3d.load(p)
    q = tmp_path / "cut.tv3d.npz"
    tracevis3d.save(small(), q)
    q.write_bytes(q.read_bytes()[:200])
    with pytest.raises(tracevis3d.TraceFormatError):
        tracevis3d.load(q)


@pytest.mark.parametrize("name,path,file,line", [
    ("fib (/home/x/src/pkg/mod.py:6)", ("pkg", "mod", "fib"), "/home/x/src/pkg/mod.py", 6),
    ("A.run (/a/pkg/mod.py:3)", ("pkg", "mod", "A", "run"), "/a/pkg/mod.py", 3),
    ("torch/nn/modules/module.py(1501): _call_impl", ("torch", "nn", "modules", "module", "_call_impl"),
     "torch/nn/modules/module.py", 1501),
    ("<method 'append' of 'list' objects>", ("builtins", "list", "append"), "", -1),
    ("aten::mm", ("aten", "mm"), "", -1),
    ("v8::internal::Heap::Scavenge(int)", ("v8", "internal", "Heap", "Scavenge"), "", -1),
    ("pkg.mod.Class.method", ("pkg", "mod", "Class", "method"), "", -1),
    ("ProfilerStep#2", ("ProfilerStep#2",), "", -1),
])
def test_parse_function_name(name, path, file, line):
    p = parse_function_name(name)
    assert (p.path, p.file, p.line) == (path, file, line)


def test_title_name_of_files_and_of_generated_traces():
    """Figures name a trace by its file without folder and trace extensions, and a generated
    trace by its generators (its source records every parameter: a slide's whole title was
    ``synthetic(n_calls=10000000, threads=4, seed=0, n_functions=1500, …)``)."""
    import tracevis3d

    t = tracevis3d.synthetic(200, threads=2, seed=3)
    assert t.title_name == "synthetic"
    assert tracevis3d.perturb(t, seed=1).title_name == "perturb(synthetic)"
    for src, name in (("/data/docutils_pool.json.gz", "docutils_pool"), ("C:\\runs\\run(1).tv3d.npz", "run(1)"),
                      ("trace.tv3c", "trace"), (".json", ".json"), ("", "trace")):
        t.meta["source"] = src
        assert t.title_name == name
    t.meta["source"] = "synthetic(" * 10 ** 5  # a native file's meta is any text: bounded
    assert t.title_name == "synthetic(synthetic(synthetic(synthetic)))"
