"""V8's sampled JavaScript stacks in Chrome traces (`tracevis3d.io.chrome_profile`): Profile and
ProfileChunk events (DevTools' Performance recordings, Chromium's v8.cpu_profiler category)
become calls on a lane of their own beside the sampled thread."""
import json
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tracevis3d
from tracevis3d.io.chrome_profile import LANE_SUFFIX


def _node(nid, name, parent=None, url="", line=-1):
    nd = {"id": nid, "callFrame": {"functionName": name, "url": url, "scriptId": 1 if url else 0,
                                   "lineNumber": line, "columnNumber": 0}}
    if parent is not None:
        nd["parent"] = parent
    return nd


def _devtools_trace(extra=()):
    """A renderer main thread with its own trace events and a V8 profile of it in DevTools' form:
    the Profile event on the sampled thread, two chunks on the profiler thread, nodes split
    over the chunks, (root)/(program)/(idle) pseudo frames, one negative delta."""
    url = "https://example.com/static/app.min.js?v=3"
    ev = [{"ph": "M", "name": "thread_name", "pid": 7, "tid": 1, "args": {"name": "CrRendererMain"}},
          {"ph": "M", "name": "thread_name", "pid": 7, "tid": 9, "args": {"name": "v8:ProfEvntProc"}},
          {"ph": "X", "name": "RunTask", "pid": 7, "tid": 1, "ts": 1000, "dur": 900},
          {"ph": "X", "name": "FunctionCall", "pid": 7, "tid": 1, "ts": 1050, "dur": 700},
          {"ph": "P", "name": "Profile", "id": "0x1", "pid": 7, "tid": 1, "ts": 1000,
           "args": {"data": {"startTime": 1000}}},
          {"ph": "P", "name": "ProfileChunk", "id": "0x1", "pid": 7, "tid": 9, "ts": 1200,
           "args": {"data": {"cpuProfile": {"nodes": [_node(1, "(root)"), _node(2, "(program)", 1),
                                                      _node(3, "main", 1, url, 0), _node(4, "render", 3, url, 10)],
                                            "samples": [2, 3, 4, 4]},
                             "timeDeltas": [100, 100, 100, 100]}}},
          {"ph": "P", "name": "ProfileChunk", "id": "0x1", "pid": 7, "tid": 9, "ts": 1700,
           "args": {"data": {"cpuProfile": {"nodes": [_node(5, "fib", 4, url, 20), _node(6, "(idle)", 1)],
                                            "samples": [5, 4, 5, 6, 3]},
                             "timeDeltas": [100, 100, -50, 150, 100]}}},
          *extra]
    return {"traceEvents": ev}


def _load(tmp_path, doc, name="t.json"):
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tracevis3d.load(str(p))


def _calls_of(t, lane_name):
    k = list(t.thread_names).index(lane_name)
    a, b = t.thread_ranges()[k]
    o = t.meta["clock_origin"]
    return [(t.function_names[t.func[i]], round(t.start[i] + o, 3), round(t.end[i] + o, 3), int(t.depth[i]))
            for i in range(a, b)]


def test_a_devtools_profile_becomes_a_lane_of_sampled_calls(tmp_path):
    """Samples at 1100 … 1800 µs (deltas from startTime 1000; the -50 puts the 7th sample before
    the 6th: time order): (program) and (idle) are no JavaScript, (root) no frame; main › render
    runs while the samples hold it, fib inside render; the last sample lasts the median interval
    (100 µs).  The trace's own events on the sampled thread keep their lane."""
    t = _load(tmp_path, _devtools_trace())
    t.check()
    assert t.meta["skipped"] == {}
    lane = "CrRendererMain" + LANE_SUFFIX
    assert lane in t.thread_names and "CrRendererMain" in t.thread_names
    # samples at 1100 (program), 1200 main, 1300 render, 1400 render, 1500 fib, 1600 render,
    # 1550 fib (the -50), 1700 (idle), 1800 main; in time order the fibs run 1500-1600, and the
    # last main lasts one median interval: to 1900
    assert _calls_of(t, lane) == [("main", 1200.0, 1700.0, 0), ("render", 1300.0, 1700.0, 1),
                                  ("fib", 1500.0, 1600.0, 2), ("main", 1800.0, 1900.0, 0)]
    k = list(t.thread_names).index(lane)
    assert t.thread_pid[k] == 7 and t.process_names[k] == t.process_names[list(t.thread_names).index("CrRendererMain")]
    fib = t.function_names.index("fib")
    assert t.function_files[fib].startswith("https://example.com/") and t.function_lines[fib] == 21
    parsed = tracevis3d.names.parse_function_name("fib", t.function_files[fib], 21)
    assert "app" in parsed.module and "?" not in parsed.module  # the script names it, not its query
    assert t.meta["js_profiles"][0]["samples"] == 9 and t.meta["js_profiles"][0]["interval_us"] == 100.0
    # the lane survives the native format
    p = tmp_path / "t.tv3d.npz"
    tracevis3d.save(t, str(p))
    back = tracevis3d.load(str(p))
    assert list(back.thread_names) == list(t.thread_names) and np.array_equal(back.start, t.start)


def _naive(nodes_parent, names, samples, deltas, start):
    """The flame chart's reading of one profile, by brute force, with DevTools' two rules: each
    sample's stack a tuple of nodes root → leaf ((root) left out, (idle)/(program) empty), in
    time order; a lone (program) sample between two stacks of the same bottom frame takes the
    previous stack; a GC sample stands on the (fixed) stack of the last non-GC sample before it
    (a GC frame of its own per stack it is on), alone after an empty one; a frame's call lasts
    while consecutive samples share the stack up to it, stacks compared by their frames' names
    from the bottom (speedscope's reading, `stacks.timed_trace`: two nodes of one frame under
    one parent are one frame); the last sample lasts the median positive interval, 1 µs when
    there is none (one sample, or all at one time: the builder's rule); calls of no duration
    are left out."""
    t = start + np.cumsum(np.asarray(deltas, float))
    d = np.diff(t)
    step = float(np.median(d[d > 0])) if (d > 0).any() else 1.0
    o = np.argsort(t, kind="stable")
    gc = "(garbage collector)"

    def chain(leaf):
        out, seen, n = [], set(), leaf
        while n is not None and n in names and names[n] != "(root)" and n not in seen:
            seen.add(n)
            out.append(n)
            n = nodes_parent.get(n)
        return tuple(reversed(out))

    def kind(leaf):
        nm = names.get(leaf)
        return "empty" if nm in (None, "(root)", "(idle)") else "program" if nm == "(program)" else \
            "gc" if nm == gc else "js"

    raw = [samples[i] for i in o]
    kinds = [kind(x) for x in raw]
    stacks = [chain(x) if k == "js" else () for x, k in zip(raw, kinds)]
    for i in range(1, len(raw) - 1):
        if kinds[i] == "program" and kinds[i - 1] == kinds[i + 1] == "js" and \
                chain(raw[i - 1])[0] == chain(raw[i + 1])[0]:
            stacks[i] = chain(raw[i - 1])
    for i in range(len(raw)):
        if kinds[i] == "gc":
            j = max((j for j in range(i) if kinds[j] != "gc"), default=-1)
            under = stacks[j] if j >= 0 else ()
            stacks[i] = under + (("gc", under[-1]),) if under else chain(raw[i])
    seq = [(float(t[i]), stk) for i, stk in zip(o, stacks)] + [(float(t[o[-1]]) + step, ())]
    calls, open_ = [], []

    def frame(n):
        return gc if isinstance(n, tuple) else names[n]

    for when, stk in seq:
        c = 0
        while c < len(open_) and c < len(stk) and frame(open_[c][0]) == frame(stk[c]):
            c += 1
        for depth in range(len(open_) - 1, c - 1, -1):
            calls.append((open_[depth][0], open_[depth][1], when, depth))
        open_ = open_[:c] + [(stk[j], when) for j in range(c, len(stk))]
    return sorted((gc if isinstance(n, tuple) else names[n], s, e, dp) for n, s, e, dp in calls if e > s)


@settings(max_examples=150, deadline=None)
@given(st.integers(2, 12).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, n - 1), min_size=n, max_size=n),  # parent choice per node (below its index)
    st.lists(st.sampled_from(["f", "g", "(idle)", "(program)", "h", "(garbage collector)"]), min_size=n, max_size=n),
    st.lists(st.integers(1, n), min_size=1, max_size=40),  # sampled node ids
    st.lists(st.integers(0, 300), min_size=40, max_size=40))))
def test_profile_calls_against_the_flame_reading(tmp_path_factory, case):
    """`chrome_profile` end to end (read, expand, nest) against `_naive` on random profiles:
    node 1 is (root), node k's parent a smaller id, samples of any node."""
    choice, kinds, samples, deltas = case
    n = len(choice)
    parent = {k: (1 + choice[k - 1] % (k - 1) if k > 1 else None) for k in range(1, n + 1)}
    names = {k: ("(root)" if k == 1 else f"{kinds[k - 1]}{k}" if kinds[k - 1] in ("f", "g", "h") else kinds[k - 1])
             for k in range(1, n + 1)}
    samples = [1 + (s - 1) % n for s in samples]
    deltas = deltas[:len(samples)]
    nodes = [_node(k, names[k], parent[k]) for k in range(1, n + 1)]
    doc = {"traceEvents": [
        {"ph": "X", "name": "host", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
        {"ph": "P", "name": "Profile", "id": 1, "pid": 1, "tid": 1, "ts": 0, "args": {"data": {"startTime": 500}}},
        {"ph": "P", "name": "ProfileChunk", "id": 1, "pid": 1, "tid": 2, "ts": 0,
         "args": {"data": {"cpuProfile": {"nodes": nodes, "samples": samples}, "timeDeltas": deltas}}}]}
    want = _naive(parent, names, samples, deltas, 500.0)
    t = _load(tmp_path_factory.mktemp("p"), doc)
    t.check()
    lane = "1" + LANE_SUFFIX
    got = sorted(_calls_of(t, lane)) if lane in t.thread_names else []
    assert got == [(nm, round(s, 3), round(e, 3), dp) for nm, s, e, dp in want]


@pytest.mark.parametrize("chunk, code", [
    ({"cpuProfile": {"nodes": "x", "samples": [1]}, "timeDeltas": [5]}, "js_profile"),
    ({"cpuProfile": {"nodes": [{"id": "a"}, 7, _node(1, "(root)")], "samples": [1, 1]}, "timeDeltas": [5]},
     "js_profile"),
    ({"cpuProfile": {"nodes": [_node(1, "(root)"), _node(2, "a", 3), _node(3, "b", 2)],
                     "samples": [2, "x", 3, 2]}, "timeDeltas": [5, 5, None, 5]}, "js_profile"),
    ({"cpuProfile": [1, 2]}, "js_profile"),
    ({"cpuProfile": {"nodes": [_node(1, "(root)"), _node(2, "a", 1)], "samples": [2, 2 ** 70, 2]},
      "timeDeltas": [10 ** 400, 5, 1e308]}, "js_profile"),  # past int64 and float: Python's json reads them
    ({"cpuProfile": {"nodes": [_node(1, "(root)")], "samples": [1] * 600_000}, "timeDeltas": [1] * 600_000},
     "js_profile"),  # 2.4 MB: over max_args_bytes, left out (its Python objects would take ~10x)
])
def test_hostile_profile_events_are_left_out_and_counted(tmp_path, chunk, code):
    """Nodes that are no list or no nodes, samples that are no node ids, deltas that are no
    numbers, lists of unequal length, a parent cycle: what does not fit is left out and counted
    (a repair naming the event), the rest loads; never an exception."""
    doc = {"traceEvents": [
        {"ph": "X", "name": "host", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
        {"ph": "P", "name": "Profile", "id": 1, "pid": 1, "tid": 1, "ts": 0, "args": {"data": {"startTime": 0}}},
        {"ph": "P", "name": "ProfileChunk", "id": 1, "pid": 1, "tid": 2, "ts": 0, "args": {"data": chunk}}]}
    t = _load(tmp_path, doc)
    t.check()
    assert t.meta["repairs"][code]["count"] >= 1
    assert "event #2" in t.meta["repairs"][code]["first"]


def test_chunks_without_their_profile_event_and_other_samples(tmp_path):
    """Chunks whose Profile event is missing (a trace cut at its start) are timed from the first
    chunk's ts and say so; P events of other kinds are still skipped and counted."""
    doc = _devtools_trace(extra=[{"ph": "P", "name": "Sample", "pid": 7, "tid": 1, "ts": 1500, "args": {}}])
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("name") != "Profile"]
    t = _load(tmp_path, doc)
    t.check()
    assert t.meta["skipped"] == {"sample": 1}
    assert t.meta["repairs"]["js_profile_no_start"]["count"] == 1
    lane = "V8 profile 1" + LANE_SUFFIX  # the sampled thread is not known without the Profile event
    assert _calls_of(t, lane)[0][1] == 1200.0 + 200.0  # first chunk's ts + the deltas to its first main sample


def _cpuprofile(samples, deltas):
    """Node's .cpuprofile form: children lists, no parent links; (root) › main › work › inner,
    (program), (garbage collector) and (idle) under the root."""
    def nd(nid, name, kids=()):
        return {"id": nid, "callFrame": {"functionName": name, "scriptId": "1", "url": "file:///app/job.js",
                                         "lineNumber": nid, "columnNumber": 0}, "hitCount": 0, "children": list(kids)}
    nodes = [nd(1, "(root)", [2, 5, 6, 7]), nd(2, "main", [3]), nd(3, "work", [4]), nd(4, "inner"),
             nd(5, "(program)"), nd(6, "(garbage collector)"), nd(7, "(idle)")]
    return {"nodes": nodes, "startTime": 5000, "endTime": 9000, "samples": samples, "timeDeltas": deltas}


def test_a_cpuprofile_file_and_devtools_rules_for_gc_and_lost_stacks(tmp_path):
    """A V8 .cpuprofile (node --cpu-prof) loads as a trace of one lane.  A collection (GC under
    the root in V8's tree) stands on the stack it interrupted instead of cutting main › work in
    two; a lone (program) sample inside a stack (the sampler lost the stack) keeps it; (idle)
    ends it."""
    # samples: inner, inner, GC, GC, inner, (program), work, (idle), (program), main
    doc = _cpuprofile([4, 4, 6, 6, 4, 5, 3, 7, 5, 2], [10] * 10)
    p = tmp_path / "job.cpuprofile"
    p.write_text(json.dumps(doc))
    t = tracevis3d.load(str(p))
    t.check()
    assert t.thread_names == ["main (JS)"] and t.meta["format"] == "v8-cpuprofile"
    got = [(t.function_names[t.func[i]], t.start[i] + t.meta["clock_origin"], t.end[i] + t.meta["clock_origin"],
            int(t.depth[i])) for i in range(len(t))]
    assert got == [("main", 5010.0, 5080.0, 0), ("work", 5010.0, 5080.0, 1), ("inner", 5010.0, 5070.0, 2),
                   ("(garbage collector)", 5030.0, 5050.0, 3), ("main", 5100.0, 5110.0, 0)], got
    t.function_files[t.function_names.index("work")] == "file:///app/job.js"


@pytest.mark.parametrize("doc, match", [
    ({"nodes": [], "samples": [], "timeDeltas": []}, "without samples"),
    ('{"nodes": [{"id": 1, "callFrame": {"functionName": "(root)"}}], "samp', "cut short or not JSON"),
    ({"nodes": [{"id": 1, "callFrame": {"functionName": "(root)"}}], "samples": [1, 1], "timeDeltas": [1, 1]},
     "hold no JavaScript"),
])
def test_bad_cpuprofiles_name_the_file_and_the_problem(tmp_path, doc, match):
    p = tmp_path / "bad.cpuprofile"
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    with pytest.raises(tracevis3d.TraceFormatError, match=match) as e:
        tracevis3d.load(str(p))
    assert "bad.cpuprofile" in str(e.value)


def test_a_flood_of_profile_ids_is_bounded(tmp_path, monkeypatch):
    """Every Profile event with an id of its own makes a profile (a few tables each): past
    MAX_PROFILES the events are left out and counted, not kept."""
    from tracevis3d.io import chrome_profile

    monkeypatch.setattr(chrome_profile, "MAX_PROFILES", 5)
    ev = [{"ph": "X", "name": "host", "pid": 1, "tid": 1, "ts": 0, "dur": 10}]
    ev += [{"ph": "P", "name": "Profile", "id": k, "pid": 1, "tid": 1, "ts": 0, "args": {"data": {"startTime": 0}}}
           for k in range(12)]
    t = _load(tmp_path, {"traceEvents": ev})
    assert t.meta["repairs"]["js_profile"]["count"] == 7 and "event #6" in t.meta["repairs"]["js_profile"]["first"]


def test_a_sampled_thread_without_events_of_its_own_keeps_its_name(tmp_path):
    """A worker that V8 sampled but that wrote no trace event has no lane of its own; its
    name comes from the metadata ("DedicatedWorker thread (JS)", not its tid)."""
    doc = _devtools_trace()
    for e in doc["traceEvents"]:
        if e.get("tid") == 1 and e.get("ph") in ("X",):
            e["tid"] = 3  # the trace's own events move to another thread
    doc["traceEvents"][0]["args"]["name"] = "DedicatedWorker thread"
    t = _load(tmp_path, doc)
    assert "DedicatedWorker thread" + LANE_SUFFIX in t.thread_names, t.thread_names


def test_the_older_devtools_form_a_whole_profile_in_one_instant(tmp_path):
    """DevTools traces of 2016-2017 hold a whole profile in one instant event "CpuProfile"
    (args.data.cpuProfile: nodes with children lists, startTime, samples, timeDeltas): the same
    lane as the chunked form."""
    def nd(nid, name, kids=()):
        return {"id": nid, "callFrame": {"functionName": name, "url": "https://a.example/app.js", "lineNumber": nid},
                "children": list(kids)}
    cpu = {"nodes": [nd(1, "(root)", [2, 4]), nd(2, "main", [3]), nd(3, "work"), nd(4, "(idle)")],
           "startTime": 2000, "endTime": 2100, "samples": [3, 3, 2, 4, 2], "timeDeltas": [10, 10, 10, 10, 10]}
    doc = {"traceEvents": [
        {"ph": "M", "name": "thread_name", "pid": 3, "tid": 5, "args": {"name": "CrRendererMain"}},
        {"ph": "X", "name": "RunTask", "pid": 3, "tid": 5, "ts": 2000, "dur": 100},
        {"ph": "I", "s": "t", "name": "CpuProfile", "cat": "disabled-by-default-devtools.timeline", "pid": 3, "tid": 5,
         "ts": 2100, "args": {"data": {"cpuProfile": cpu}}}]}
    t = _load(tmp_path, doc)
    t.check()
    assert _calls_of(t, "CrRendererMain" + LANE_SUFFIX) == [("main", 2010.0, 2040.0, 0), ("work", 2010.0, 2030.0, 1),
                                                           ("main", 2050.0, 2060.0, 0)]
