"""Chrome traces and V8 CPU profiles of every version (`tracevis3d.io.chrome`,
`tracevis3d.io.chrome_profile`): speedscope's sample collection (Chrome 65-141, Node 10, Hermes,
trace-event samples; tests/data/formats/speedscope-samples, MIT), a real Node.js profile recorded
here (tests/data/formats/node) and hostile profiles (tests/support/hostile_chrome_v8.py)."""
import collections
import json
import pathlib
import re
import warnings

import numpy as np
import pytest

import tracevis3d
from tracevis3d import TraceFormatError
from tracevis3d.io import load_bytes
from tracevis3d.io.chrome_profile import LANE_SUFFIX, SAMPLES_LANE_SUFFIX

import hostile_chrome_v8 as hv8
from time_limits import time_limit

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "formats"
SS = DATA / "speedscope-samples"


def _load(path_or_bytes, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if isinstance(path_or_bytes, (bytes, bytearray)):
            return load_bytes(bytes(path_or_bytes), **kw)
        return tracevis3d.load(str(path_or_bytes), **kw)


def _lane(t, name):
    k = list(t.thread_names).index(name)
    a, b = t.thread_ranges()[k]
    return range(int(a), int(b))


def _totals(t, calls=None):
    """Each function's summed call time (speedscope's "total weight" when calls do not recurse)."""
    out = collections.Counter()
    for i in (range(len(t)) if calls is None else calls):
        out[t.function_names[t.func[i]]] += float(t.end[i] - t.start[i])
    return out


# ------------------------------------------------------------ .cpuprofile, both forms
@pytest.mark.parametrize("path, speedscope", [
    # speedscope's snapshots (src/import/__snapshots__/chrome.test.ts.snap): total weights in µs
    ("Chrome/65/simple.cpuprofile", {"(anonymous)": 34345, "a": 33285, "b": 17002, "c": 16283, "d": 33285}),
    ("node/10.11.0/example.cpuprofile", {"(anonymous)": 44777, "a": 33202, "b": 16788, "c": 16414, "d": 33202}),
])
def test_both_cpuprofile_forms_read_as_speedscope_reads_them(path, speedscope):
    """The current form (Chrome 65: ``nodes``, ``timeDeltas``) and the old one (Node 10: a
    ``head`` tree, ``startTime`` in s, absolute ``timestamps``) of one program: the same calls,
    (anonymous) › a › b › d then a › c › d, each function as long as speedscope says, except that
    the frames open at the last sample run one sampling interval past it (speedscope ends them
    at the last sample)."""
    t = _load(SS / path)
    t.check()
    assert t.meta["format"] == "v8-cpuprofile" and t.thread_names == ["main" + LANE_SUFFIX]
    assert [(t.name(i), int(t.depth[i])) for i in range(len(t))] == [
        ("(anonymous)", 0), ("a", 1), ("b", 2), ("d", 3), ("c", 2), ("d", 3)]
    step = t.meta["sampling_interval_us"]
    assert 1200 < step < 1300
    got = _totals(t)
    for name, want in speedscope.items():
        assert got[name] - want in (0, step), (name, got[name], want)
    lines = {t.function_names[f]: int(t.function_lines[f]) for f in np.unique(t.func)}
    assert lines == {"(anonymous)": 1, "a": 1, "b": 6, "c": 10, "d": 14}  # 1-based, as speedscope shows them
    assert t.meta["cpuprofile_form"] == ("head" if "node" in path else "nodes")


def test_a_big_cpuprofile_keeps_working():
    """sucrase.cpuprofile (Chrome 65, 1 MB): 205 493 calls, deep, every one a JavaScript function."""
    t = _load(SS / "Chrome/65/sucrase.cpuprofile.gz")
    t.check()
    assert len(t) == 205_493 and t.max_depth >= 40
    assert t.meta["sampling_interval_us"] > 0 and t.meta["repairs"] == {}


def test_the_old_form_with_time_deltas_and_seconds(tmp_path):
    """The old form without ``timestamps``: times from ``startTime`` (seconds) and ``timeDeltas``."""
    head = {"functionName": "(root)", "id": 1, "callUID": 1, "hitCount": 0, "lineNumber": 0, "url": "",
            "children": [{"functionName": "main", "id": 2, "callUID": 2, "hitCount": 2, "lineNumber": 4,
                          "url": "file:///srv/app.js", "children": []}]}
    doc = {"head": head, "startTime": 12.5, "endTime": 12.6, "samples": [2, 2, 1], "timeDeltas": [100, 100, 100]}
    p = tmp_path / "old.cpuprofile"
    p.write_text(json.dumps(doc))
    t = _load(p)
    assert [(t.name(i), t.start[i] + t.meta["clock_origin"], t.end[i] + t.meta["clock_origin"]) for i in range(len(t))] \
        == [("main", 12.5e6 + 100, 12.5e6 + 300)]
    assert t.function_files[t.func[0]] == "file:///srv/app.js" and t.function_lines[t.func[0]] == 5


def test_v8_profilers_export_is_recognised():
    """v8-profiler(-node8)'s export of the old form starts with ``typeId``, ``uid``, ``title``
    before ``head``: recognised as a .cpuprofile (by its bytes, not its name), read alike."""
    head = {"functionName": "(root)", "id": 1, "callUID": 1, "hitCount": 0, "url": "", "lineNumber": 0,
            "children": [{"functionName": "tick", "id": 2, "callUID": 2, "hitCount": 2, "url": "file:///t.js",
                          "lineNumber": 1, "children": []}]}
    doc = {"typeId": "CPU", "uid": "1", "title": "Profile 1", "head": head, "startTime": 1, "endTime": 2,
           "samples": [2, 2, 1], "timestamps": [1_000_010, 1_000_020, 1_000_030]}
    t = _load(json.dumps(doc).encode(), source="exported")
    assert t.meta["format"] == "v8-cpuprofile" and [t.name(i) for i in range(len(t))] == ["tick"]
    assert (t.start[0] + t.meta["clock_origin"], t.end[0] + t.meta["clock_origin"]) == (1_000_010, 1_000_030)


def test_a_real_node_profile_recorded_here():
    """node --cpu-prof of tests/data/formats/node/workload.js (README there): its functions by
    name, > 1000 calls, fib's recursion and the tree's levels deep, GC on the stacks it
    interrupted, the sampling interval stated."""
    t = _load(DATA / "node" / "workload.cpuprofile.gz")
    t.check()
    assert len(t) > 1000
    names = _totals(t)
    assert {"fib", "tokenize", "countWords", "topWords", "sortRecords", "jsonRoundTrip", "makeCorpus", "sum",
            "Node", "analyse", "main"} <= set(names), sorted(names)
    anonymous = sum(1 for i in range(len(t)) if t.name(i) == "(anonymous)")
    assert anonymous < len(t) / 2
    fib_depths = [int(t.depth[i]) for i in range(len(t)) if t.name(i) == "fib"]
    assert max(fib_depths) - min(fib_depths) >= 8
    gc = [i for i in range(len(t)) if t.name(i) == "(garbage collector)"]
    assert gc and all(t.depth[i] > 0 for i in gc)  # on the stack it interrupted, not under the root
    assert 50 <= t.meta["sampling_interval_us"] <= 1000
    f = t.function_names.index("tokenize")
    assert t.function_files[f].endswith("workload.js") and t.function_lines[f] > 1


# ------------------------------------------------------------ Chrome traces, 65-141
CHROME_TRACES = [  # (file, JS lanes at least, JS calls at least)
    ("Chrome/65/simple-timeline.json.gz", {"CrRendererMain"}, 100),
    ("Chrome/66/worker.json.gz", {"CrRendererMain", "DedicatedWorker thread"}, 100),
    ("Chrome/69/simple.json.gz", {"CrRendererMain"}, 150),
    ("Chrome/70/worker.json.gz", {"CrRendererMain", "DedicatedWorker thread"}, 150),
    ("Chrome/116/Trace-20230603T221323.json.gz", {"CrRendererMain"}, 100),
    ("Chrome/141/no-arg-data.json", {"CrRendererMain"}, 70),
    ("source-maps/chrome-85-parcel.json.gz", {"CrRendererMain"}, 300),
]


@pytest.mark.parametrize("path, lanes, min_calls", CHROME_TRACES, ids=[c[0] for c in CHROME_TRACES])
def test_chrome_traces_of_every_version_load_with_their_js(path, lanes, min_calls):
    """DevTools recordings of Chrome 65-141 (arrays and ``{"metadata", "traceEvents"}`` exports):
    each loads, its V8 profiles' samples become calls on "<thread> (JS)" lanes, the sampling
    interval is stated."""
    t = _load(SS / path)
    t.check()
    js = [m for m in t.meta["js_profiles"]]
    assert {m["sampled_thread"] for m in js} >= lanes
    assert sum(m["calls"] for m in js) >= min_calls
    for m in js:
        assert m["thread"] in t.thread_names and m["calls"] == len(_lane(t, m["thread"]))
    assert 50 < t.meta["sampling_interval_us"] < 2000


def test_chrome_141_js_calls_are_loaded():
    """A DevTools export of Chrome 141 holding nothing but metadata and a V8 profile (no call
    events): its ~75 sampled calls load, on "CrRendererMain (JS)"; the nodes whose parents were
    sent before the recording began start their stacks, as speedscope shows them (800492 › a …)."""
    t = _load(SS / "Chrome/141/no-arg-data.json")
    assert t.thread_names == ["CrRendererMain" + LANE_SUFFIX] and 70 <= len(t) <= 80
    roots = {t.name(i) for i in range(len(t)) if t.depth[i] == 0}
    assert "800492" in roots
    assert t.meta["repairs"]["js_node_parent"]["count"] > 0
    assert t.max_depth >= 15


def test_chunks_of_nodes_sent_before_the_trace_began():
    """chrome-85-parcel.json: its first profile's chunks name nodes the trace does not hold (and
    it has no Profile event): its samples are empty stacks, counted; the second profile loads."""
    t = _load(SS / "source-maps/chrome-85-parcel.json.gz")
    assert t.meta["repairs"]["js_sample_node"]["count"] > 0
    assert t.meta["repairs"]["js_profile_no_start"]["count"] == 1
    names = set(_totals(t, _lane(t, "CrRendererMain" + LANE_SUFFIX)))
    assert {"parcelRequire.jXuE", "o.zap"} <= names, names


# ------------------------------------------------------------ trace-event samples (speedscope, Hermes)
def test_samples_beside_events_get_lanes_of_their_own(realdata):
    """multi-thread-with-samples.json: X events and samples/stackFrames of two threads: both kept,
    the samples' calls on "<thread> (samples)" lanes; their lengths are speedscope's weights
    (its snapshot: [root] 34 096 µs, function1 13 326 on thread 1; [root thread 2] 54 096,
    function3 13 326, function4 10 000 on thread 2)."""
    t = _load(realdata / "speedscope-trace-event" / "multi-thread-with-samples.json")
    t.check()
    assert t.thread_names == ["mqt_js", "2", "mqt_js" + SAMPLES_LANE_SUFFIX, "2" + SAMPLES_LANE_SUFFIX]
    assert _totals(t, _lane(t, "mqt_js")) == {"mqt_js": 0.0}  # the X event stays
    assert _totals(t, _lane(t, "mqt_js" + SAMPLES_LANE_SUFFIX)) == {"[root]": 34096, "function1": 13326}
    assert _totals(t, _lane(t, "2" + SAMPLES_LANE_SUFFIX)) == {"[root thread 2]": 54096, "function3": 13326,
                                                              "function4": 10000}
    assert [m["samples"] for m in t.meta["sample_lanes"]] == [3, 5]
    assert t.meta["format"] == "chrome-json" and t.meta["n_samples"] == 8


def test_samples_alone_stay_on_their_threads_with_hermes_locations(realdata):
    """simple-with-samples.json (Hermes): samples only: the thread's own calls, as before; Hermes'
    frame names keep their text and give their file (the bundle's URL) and line."""
    t = _load(realdata / "speedscope-trace-event" / "simple-with-samples.json")
    assert t.meta["format"] == "chrome-json-samples" and t.thread_names == ["mqt_js"]
    f = next(k for k, nm in enumerate(t.function_names) if nm.startswith("function3("))
    assert t.function_files[f].startswith("http://localhost:8081/index.bundle?") and t.function_lines[f] == 17
    assert _totals(t)["[root]"] == 64710  # speedscope: [root] total weight 64 710 µs


@pytest.mark.parametrize("name", ["simple-hermes.json", "hermes-multiple-frames.json"])
def test_hermes_events_give_their_functions_file_and_line(realdata, name):
    """Hermes' B/E events carry url, line and column in their args (speedscope's
    isHermesTraceEvent): the functions' file and line."""
    t = _load(realdata / "speedscope-trace-event" / name)
    beta = t.function_names.index("beta")
    assert t.function_files[beta].endswith("metro-runtime/src/polyfills/require.js")
    assert t.function_lines[beta] == 54
    root = t.function_names.index("[root]")
    assert t.function_files[root] == "" and t.function_lines[root] == -1


def test_events_v8_profiles_and_samples_together(tmp_path):
    """One trace with all three: the events' calls, a V8 profile's "(JS)" lane and the samples'
    "(samples)" lane, on one clock, each lane in its thread's process; the interval stated."""
    ev = [{"ph": "M", "name": "thread_name", "pid": 3, "tid": 1, "args": {"name": "Main"}},
          {"ph": "X", "name": "Task", "pid": 3, "tid": 1, "ts": 1000, "dur": 500},
          {"ph": "P", "name": "Profile", "id": "0x1", "pid": 3, "tid": 1, "ts": 1000,
           "args": {"data": {"startTime": 1000}}},
          {"ph": "P", "name": "ProfileChunk", "id": "0x1", "pid": 3, "tid": 9, "ts": 1100,
           "args": {"data": {"cpuProfile": {"nodes": [{"id": 1, "callFrame": {"functionName": "(root)"}},
                                                      {"id": 2, "parent": 1, "callFrame": {"functionName": "js"}}],
                                            "samples": [2, 2, 1]}, "timeDeltas": [10, 10, 10]}}}]
    doc = {"traceEvents": ev, "stackFrames": {"1": {"name": "native"}, "2": {"name": "leaf", "parent": 1}},
           "samples": [{"ts": 1200, "pid": 3, "tid": 1, "sf": 2}, {"ts": 1300, "pid": 3, "tid": 1, "sf": 1},
                       {"ts": 1400, "pid": 3, "tid": 1, "sf": 2}]}
    p = tmp_path / "all.json"
    p.write_text(json.dumps(doc))
    t = _load(p)
    t.check()
    assert t.thread_names == ["Main", "Main" + LANE_SUFFIX, "Main" + SAMPLES_LANE_SUFFIX]
    o = t.meta["clock_origin"]
    calls = [(t.thread_names[t.thread[i]], t.name(i), t.start[i] + o, t.end[i] + o) for i in range(len(t))]
    assert calls == [("Main", "Task", 1000, 1500), ("Main (JS)", "js", 1010, 1030),
                     ("Main (samples)", "native", 1200, 1400), ("Main (samples)", "leaf", 1200, 1300)]
    assert set(t.thread_pid.tolist()) == {3} and len(set(t.thread_tid.tolist())) == 3
    assert t.meta["sampling_interval_us"] == 10


def test_unreadable_samples_beside_events_leave_the_events():
    """A 'samples' array that is no JSON array of objects, beside events that hold calls: the
    events load, the samples are left out and counted (with samples alone it is an error, as
    before)."""
    bad_samples = b',"stackFrames":{"1":{"name":"x"}},"samples":[{"ts":1,"pid":1,"tid":1,"sf":1},7]}'
    t = _load(b'{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":5}]' + bad_samples)
    assert t.function_names == ["a"] and t.meta["repairs"]["samples_unread"]["count"] == 1
    assert "sample #1" in t.meta["repairs"]["samples_unread"]["first"]
    with pytest.raises(TraceFormatError, match="bad 'samples' array"):
        _load(b'{"traceEvents":[]' + bad_samples)


def test_sample_intervals_per_thread_equal_brute_force():
    from tracevis3d.io.chrome import _sample_intervals

    rng = np.random.default_rng(1)
    for _ in range(300):
        n, nk = int(rng.integers(0, 40)), int(rng.integers(1, 6))
        k, t = rng.integers(0, nk, n), rng.integers(0, 20, n).astype(float)
        if n and rng.random() < 0.3:
            t[0] = np.nan
        count, step = _sample_intervals(k, t, nk)
        for key in range(nk):
            d = np.diff(np.sort(t[(k == key) & np.isfinite(t)]))
            assert step[key] == (float(np.median(d[d > 0])) if (d > 0).any() else 0.0)
        assert (count == np.bincount(k, minlength=nk)).all()


# ------------------------------------------------------------ hostile profiles
@pytest.mark.parametrize("name, factory, expected", hv8.CASES, ids=[c[0] for c in hv8.CASES])
def test_hostile_v8_profiles(name, factory, expected):
    """Each hostile profile loads (repaired, every call inside ±max_abs_time) or is refused with
    one line naming the file and the problem; never another exception, never a hang (the
    guard is generous: the 10^6-node cases take a few seconds)."""
    data = factory()
    source = f"{name}.cpuprofile"
    with time_limit(300):
        try:
            t = _load(data, source=source)
        except TraceFormatError as e:
            msg = str(e)
            assert expected is not None, msg
            assert "\n" not in msg and msg.startswith(source) and re.search(expected, msg), msg
            return
    assert expected is None, f"loaded, expected an error matching {expected!r}"
    t.check()
    assert len(t) > 0
    ends = t.end + t.meta["clock_origin"]
    starts = t.start + t.meta["clock_origin"]
    assert np.isfinite(ends).all() and np.abs(ends).max() <= 1e21 and np.abs(starts).max() <= 1e21
