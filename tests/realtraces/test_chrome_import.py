"""Chrome Trace Event import: real files, hand-checked cases, repairs, errors, properties."""
import gzip
import json
import warnings

import numpy as np
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tracevis3d
from tracevis3d import TraceFormatError, TraceWarning
from tracevis3d.io import load_bytes
from tracevis3d.io.chrome_writer import chrome_json_bytes
from tracevis3d.model import ARRAY_DTYPES, STRING_TABLES

from reference_builder import build_reference
from time_limits import time_limit

REAL_DIRS = ("speedscope-trace-event", "catapult", "viztracer-examples", "hta-trace-diff")


def _load_quiet(path_or_bytes, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        if isinstance(path_or_bytes, (bytes, bytearray)):
            return load_bytes(bytes(path_or_bytes), **kw)
        return tracevis3d.load(path_or_bytes, **kw)


def _real_files(realdata):
    files = []
    for d in REAL_DIRS:
        files += sorted(p for p in (realdata / d).iterdir() if p.suffix in (".json", ".gz"))
    return files


# ----------------------------------------------------------------- real files
def test_every_real_file_loads(realdata):
    files = _real_files(realdata)
    assert len(files) >= 45
    for p in files:
        t = _load_quiet(p)
        t.check()
        assert len(t) > 0, p
        assert t.meta["source"] == str(p)


def test_real_x_only_files_match_reference_builder(realdata):
    """VizTracer/Catapult files: the fast importer equals the naive builder."""
    for name in ("viztracer-examples/multithread.json", "viztracer-examples/different_sorts.json",
                 "viztracer-examples/multi_process_pool.json", "catapult/big_trace.json",
                 "catapult/main_thread_has_unclosed_slices.json", "speedscope-trace-event/simple.json"):
        raw = (realdata / name).read_bytes()
        doc = json.loads(raw)
        events = doc["traceEvents"] if isinstance(doc, dict) else doc
        _assert_same_as_reference(_load_quiet(raw), events, by_key_order=False)


def test_viztracer_counts_checked_by_hand(realdata):
    t = _load_quiet(realdata / "viztracer-examples/multithread.json")
    doc = json.loads((realdata / "viztracer-examples/multithread.json").read_bytes())
    n_x = sum(1 for e in doc["traceEvents"] if e.get("ph") == "X")
    assert len(t) == n_x == 582
    assert t.n_threads == 5
    assert t.thread_names[0] == "MainThread"
    assert sorted(t.thread_names[1:]) == ["Dummy-5", "Dummy-6", "Dummy-7", "Dummy-8"]
    assert t.process_names == ["MainProcess"] * 5
    # VizTracer names carry file:line; the hierarchy path starts at the module
    i = t.function_names.index(next(s for s in t.function_names if s.startswith("fib ")))
    assert t.function_files[i].endswith(".py") and t.function_lines[i] > 0
    # lock waits were recognised
    waits = {t.function_names[f] for f in np.unique(t.func[t.kind == tracevis3d.KIND_WAIT])}
    assert any("acquire" in w for w in waits), waits
    assert "time.sleep" in waits  # idle on a timer: not work

    d = _load_quiet(realdata / "viztracer-examples/different_sorts.json")
    assert len(d) == 21329 and d.n_threads == 1 and d.max_depth == 20


def test_args_kept_only_where_present(realdata):
    t = _load_quiet(realdata / "viztracer-examples/function_args_return.json")
    assert len(t.args_call) == len(t) == 25
    a = t.args_of(0)
    assert isinstance(a, dict) and a
    m = _load_quiet(realdata / "viztracer-examples/multithread.json")
    assert len(m.args_call) == 0 and m.args_blob.nbytes == 0


def test_flows_bind_to_calls(realdata):
    t = _load_quiet(realdata / "catapult/flow_simple.json")
    assert len(t.flow_id) == 3
    names = {(t.name(a), t.name(b)) for a, b in zip(t.flow_from, t.flow_to)}
    # checked by hand: s→t→f chain A→Other→Some (the f without bp binds to the
    # next slice), and s→f B→Blergh (f binds to the slice starting at its ts)
    assert names == {("SenderA", "OtherSlice"), ("OtherSlice", "SomeSlice"), ("SenderB", "Blergh")}
    f = _load_quiet(realdata / "catapult/flow.json")
    assert len(f.flow_id) > 300
    assert (f.thread[f.flow_from] != f.thread[f.flow_to]).any()  # cross-thread flows
    assert f.meta["repairs"]["flow_unbound"]["count"] > 0


def test_pytorch_pair_loads_with_flows(realdata):
    a = _load_quiet(realdata / "hta-trace-diff/control.json.gz")
    b = _load_quiet(realdata / "hta-trace-diff/test.json.gz")
    assert (len(a), len(b)) == (74937, 68324)
    assert a.n_threads == b.n_threads == 8
    assert len(a.flow_id) == 9450 and len(b.flow_id) == 9984
    assert any(n.startswith("stream ") for n in a.thread_names)


def test_instants_and_skipped_phases(realdata):
    t = _load_quiet(realdata / "catapult/simple_trace.json")
    assert len(t.instant_ts) == 6
    assert t.meta["skipped"] == {"sample": 3}  # its 5 counter events are counters now (issue 25)
    assert t.counter_ts.size == 5
    x = _load_quiet(realdata / "catapult/x_event_trace.json")
    assert x.meta["skipped"] == {"object": 4}  # 230 async S/T/F and 42 counters are kept now
    assert x.async_start.size == 53 + 124 and x.counter_ts.size == 42


def test_sampled_profile(realdata):
    t = _load_quiet(realdata / "speedscope-trace-event/simple-with-samples.json")
    assert t.meta["format"] == "chrome-json-samples"
    assert t.thread_names == ["mqt_js"] and t.function_names[0] == "[root]"
    assert t.max_depth >= 1


# ----------------------------------------------------- hand-checked edge cases
def _calls(t):
    return [(t.name(i), t.start[i], t.end[i], int(t.depth[i])) for i in range(len(t))]


def test_simple_nesting(realdata):
    t = _load_quiet(realdata / "speedscope-trace-event/simple.json")
    assert _calls(t) == [("alpha", 0, 14, 0), ("beta", 1, 13, 1), ("gamma", 2, 7, 2), ("epsilon", 7, 11, 2)]


@pytest.mark.parametrize("name", ["simple-partial.json", "simple-partial-trailing-comma.json",
                                  "simple-partial-whitespace.json"])
def test_partial_files_are_repaired(realdata, name):
    with pytest.warns(TraceWarning, match="not closed"):
        t = tracevis3d.load(realdata / "speedscope-trace-event" / name)
    assert [c[0] for c in _calls(t)] == ["alpha", "beta", "gamma", "epsilon"]
    assert t.meta["repairs"]["truncated"]["count"] == 1


def test_zero_duration_end_before_begin(realdata):
    t = _load_quiet(realdata / "speedscope-trace-event/zero-duration-events.json")
    assert _calls(t) == [("A", 0, 10, 0), ("B", 1, 1, 1), ("C", 2, 2, 1), ("D", 3, 3, 1)]
    assert t.meta["repairs"] == {}


def test_overlapping_x_is_clipped_and_reported(realdata):
    with pytest.warns(TraceWarning, match="clipped"):
        t = tracevis3d.load(realdata / "speedscope-trace-event/invalid-x-nesting.json")
    assert _calls(t) == [("alpha", 0, 10, 0), ("beta", 5, 10, 1)]
    assert t.meta["repairs"]["x_overlap"]["count"] == 1
    assert "beta" in t.meta["repairs"]["x_overlap"]["first"]
    d = _load_quiet(realdata / "speedscope-trace-event/invalid-x-nesting.json", overlap="drop")
    assert _calls(d) == [("alpha", 0, 10, 0)]
    assert d.meta["repairs"]["x_overlap_dropped"]["count"] == 1


def test_unmatched_and_mismatched_end_events(realdata):
    sd = realdata / "speedscope-trace-event"
    t = _load_quiet(sd / "mismatched-name.json")
    assert _calls(t) == [("alpha", 0, 10, 0)]
    assert set(t.meta["repairs"]) == {"e_unmatched", "unclosed"}
    t = _load_quiet(sd / "end-event-with-empty-stack.json")
    assert t.meta["repairs"]["e_unmatched"]["count"] >= 1
    t = _load_quiet(sd / "end-non-top-of-stack.json")
    assert _calls(t) == [("A", 0, 10, 0), ("B", 1, 10, 1), ("Z", 10, 11, 0)]
    assert t.meta["repairs"]["e_mismatch"]["count"] == 1
    t = _load_quiet(sd / "too-many-end-events.json")
    assert _calls(t) == [("alpha", 0, 14, 0), ("beta", 1, 13, 1)]
    assert t.meta["repairs"]["e_unmatched"]["count"] == 2
    t = _load_quiet(sd / "not-enough-end-events.json")
    assert t.meta["repairs"]["unclosed"]["count"] >= 1


def test_multiprocess_names(realdata):
    t = _load_quiet(realdata / "speedscope-trace-event/multiprocess.json")
    assert t.n_threads == 8
    assert t.thread_names[:4] == ["p0t0", "p0t1", "p1t0", "p1t1"]
    assert t.process_names[:3] == ["p0", "p0", "p1"]


def test_out_of_order_events(realdata):
    t = _load_quiet(realdata / "speedscope-trace-event/out-of-order.json")
    assert _calls(t) == [("A", 0, 10, 0), ("B", 1, 9, 1), ("C", 2, 8, 2)]
    assert "out_of_order" in t.meta["repairs"]


def test_numbers_strings_nan_and_non_utf8():
    ev = (b'[{"ph":"X","name":"a\\u00e9","ts":"5","dur":2,"pid":"proc","tid":"main"},'
          b'{"ph":"X","name":"\xff\xfebad","ts":1e1,"dur":1.0000000000000000001},'
          b'{"ph":"X","name":"n","ts":20,"dur":NaN},'
          b'{"ph":"X","name":"z","ts":30,"dur":0},'
          b'{"ph":"X","name":"neg","ts":40,"dur":-1},'
          b'{"ph":"X","name":"abc","ts":"abc","dur":1},'
          b'{"ph":"X","name":"long","ts":50.000000000000000000000000000000000000000000000000000000000000000000001,"dur":1}]')
    with pytest.warns(TraceWarning):
        t = load_bytes(ev, source="x.json")
    t.check()
    names = sorted(t.function_names)
    assert "aé" in names and "z" in names and "neg" in names and "n" not in names
    assert any("\ufffd" in s for s in names)
    assert set(t.meta["repairs"]) >= {"bad_utf8", "bad_dur", "negative_dur", "bad_number", "no_ts"}
    assert "abc" not in names and "long" in names
    assert t.start[t.func == t.function_names.index("long")][0] + t.meta["clock_origin"] == 50.0
    assert "proc" in t.process_names and "main" in t.thread_names
    i = t.function_names.index("aé")
    k = int(np.flatnonzero(t.func == i)[0])
    assert t.duration[k] == 2.0


def test_exact_numbers():
    """Timestamps parse to the same doubles as Python's float (fast path and fallback)."""
    vals = ["81995229620.478", "0.5744784873156823", "1e-7", "12345678901234567890.5", "3.0e2",
            "1661203462584767.123", "0.1", "-0"]
    evs = ",".join(f'{{"ph":"X","name":"f{k}","ts":{v},"dur":1,"tid":{k}}}' for k, v in enumerate(vals))
    t = _load_quiet(("[" + evs + "]").encode())
    origin = t.meta["clock_origin"]
    got = {t.thread_tid[t.thread[i]]: t.start[i] + origin for i in range(len(t))}
    assert origin == min(float(v) for v in vals)
    for k, v in enumerate(vals):
        assert got[k] - origin == float(v) - origin


def test_deep_recursion_100k():
    n = 100_000
    ev = [{"ph": "B", "name": f"r{k % 3}", "ts": k, "pid": 1, "tid": 1} for k in range(n)]
    ev += [{"ph": "E", "ts": 2 * n - k, "pid": 1, "tid": 1} for k in range(n)]
    t = _load_quiet(orjson.dumps(ev))
    assert len(t) == n and t.max_depth == n - 1
    t.check()
    xs = [{"ph": "X", "name": "f", "ts": k, "dur": 2 * (n - k), "pid": 1, "tid": 1} for k in range(n)][::-1]
    u = _load_quiet(orjson.dumps({"traceEvents": xs}))
    assert u.max_depth == n - 1
    assert int(u.subtree_size[0]) == n


def test_gzip_and_native_sniffing(tmp_path, realdata):
    raw = (realdata / "viztracer-examples/multithread.json").read_bytes()
    p = tmp_path / "renamed.bin"
    p.write_bytes(gzip.compress(raw))
    a = _load_quiet(p)
    n = tmp_path / "t.json"  # a native file with a misleading name
    tracevis3d.save(a, n)
    b = tracevis3d.load(n)
    assert len(a) == len(b) == 582


# ------------------------------------------------------------------- errors
@pytest.mark.parametrize("data,match", [
    (b"", "empty file"),
    (b"hello world", r"not a trace in any format TraceVis3D reads .* byte 0"),
    (b"{}", "traceEvents"),
    (b"[]", "no trace events"),
    (b'{"traceEvents": []}', "no trace events"),
    (b'[{"ph":"X" "ts":1}]', r"invalid JSON at byte 11 \(line 1, column 12\) in event #0"),
    (b'[{"ph":"X","ts":1,"dur":1,"name":"a"},\n 5]', r"not a JSON object at byte 40 \(line 2"),
    (b"[" * 200_000, "not a JSON object"),
    (b'[{"ph":"X","ts":1,"args":' + b"[" * 10_000 + b"]" * 10_000 + b"}]", "nested deeper"),
    (b'[{"ph":"C","ts":1,"name":"c"}]', "no call events"),
])
def test_bad_input_clear_errors(data, match, tmp_path):
    p = tmp_path / "bad.json"
    p.write_bytes(data)
    with pytest.raises(TraceFormatError, match=match) as e:
        tracevis3d.load(p)
    assert str(p) in str(e.value)


def test_gzip_bomb_guard(tmp_path):
    p = tmp_path / "bomb.json.gz"
    p.write_bytes(gzip.compress(b"[" + b" " * (50 << 20) + b"]"))
    with pytest.raises(TraceFormatError, match="decompresses to more than"):
        tracevis3d.load(p, max_bytes=10 << 20)


def test_event_count_guard():
    data = b"[" + b'{"ph":"X","ts":1,"dur":1,"name":"a"},' * 50 + b"]"
    with pytest.raises(TraceFormatError, match="more than 10 events"):
        load_bytes(data, max_events=10)


def test_missing_and_directory(tmp_path):
    with pytest.raises(FileNotFoundError):
        tracevis3d.load(tmp_path / "nope.json")
    with pytest.raises(TraceFormatError, match="directory"):
        tracevis3d.load(tmp_path)


# --------------------------------------------------------------- properties
def _assert_same_as_reference(t, events, by_key_order=True):
    ref = build_reference(events)
    assert len(t) == len(ref)
    t.check()
    origin = t.meta["clock_origin"]
    # the reference orders threads by (pid, tid); map ours the same way
    keys = [(int(p), int(q)) for p, q in zip(t.thread_pid, t.thread_tid)]
    if by_key_order:
        assert keys == sorted(keys)
    else:
        order = sorted(range(len(keys)), key=lambda k: keys[k])
        ref_by_thread = {}
        for c in ref:
            ref_by_thread.setdefault(c["thread"], []).append(c)
        rng = t.thread_ranges()
        for k in order:
            lo, hi = rng[k]
            rs = ref_by_thread[keys[k]]
            base = ref.index(rs[0])
            assert hi - lo == len(rs)
            for j, c in enumerate(rs):
                i = lo + j
                assert t.name(i) == c["name"]
                assert t.start[i] + origin == pytest.approx(c["start"], abs=1e-6)
                assert t.end[i] + origin == pytest.approx(c["end"], abs=1e-6)
                assert t.depth[i] == c["depth"]
                assert (t.parent[i] - lo if t.parent[i] >= 0 else -1) == (
                    c["parent"] - base if c["parent"] >= 0 else -1)
        return
    for i, c in enumerate(ref):
        assert t.name(i) == c["name"], i
        assert t.start[i] + origin == c["start"]
        assert t.end[i] + origin == c["end"]
        assert t.depth[i] == c["depth"]
        assert t.parent[i] == c["parent"]


@st.composite
def event_streams(draw, broken=False):
    """Random nested calls on a few threads, written as X and/or B/E events,
    shuffled across threads; ``broken`` drops/mismatches/reorders some events."""
    n_threads = draw(st.integers(1, 3))
    events = []
    for th in range(n_threads):
        t = 0
        stack = []
        for _ in range(draw(st.integers(1, 25))):
            op = draw(st.sampled_from(["open", "open", "close", "leaf"]))
            t += draw(st.integers(0, 3))
            name = draw(st.sampled_from("abcde"))
            form = draw(st.sampled_from(["X", "BE"]))
            if op == "open":
                stack.append([name, t, form])
            elif op == "close" and stack:
                nm, t0, fm = stack.pop()
                if fm == "X":
                    events.append({"ph": "X", "name": nm, "ts": t0, "dur": t - t0, "pid": 1, "tid": th})
                else:
                    events.append({"ph": "B", "name": nm, "ts": t0, "pid": 1, "tid": th})
                    events.append({"ph": "E", "name": nm, "ts": t, "pid": 1, "tid": th})
            elif op == "leaf":
                d = draw(st.integers(0, 2))
                events.append({"ph": "X", "name": name, "ts": t, "dur": d, "pid": 1, "tid": th})
                t += d
        while stack:
            t += 1
            nm, t0, fm = stack.pop()
            events.append({"ph": "X", "name": nm, "ts": t0, "dur": t - t0, "pid": 1, "tid": th})
    # keep per-thread B/E file order meaningful: B before its E (stable by ts)
    perm = draw(st.permutations(range(len(events))))
    events = [events[k] for k in perm]
    events.sort(key=lambda e: (e["ts"], 0 if e["ph"] == "B" else 1) if e["ph"] in "BE" else (e["ts"], 0))
    if broken and events:
        for _ in range(draw(st.integers(1, 4))):
            k = draw(st.integers(0, len(events) - 1))
            what = draw(st.sampled_from(["drop", "rename", "overlap", "swap"]))
            if what == "drop":
                events.pop(k)
            elif what == "rename":
                events[k] = dict(events[k], name=draw(st.sampled_from("abcdez")))
            elif what == "overlap" and events[k]["ph"] == "X":
                events[k] = dict(events[k], dur=events[k]["dur"] + draw(st.integers(1, 5)))
            elif what == "swap" and k + 1 < len(events):
                events[k], events[k + 1] = events[k + 1], events[k]
            if not events:
                break
    return events


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(event_streams())
def test_valid_streams_equal_reference(events):
    if not events:
        return
    _assert_same_as_reference(_load_quiet(orjson.dumps(events)), events)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(event_streams(broken=True))
def test_broken_streams_equal_reference(events):
    if not any(e["ph"] in "XB" for e in events):
        return
    try:
        t = _load_quiet(orjson.dumps({"traceEvents": events}))
    except TraceFormatError:
        assert not build_reference(events)
        return
    _assert_same_as_reference(t, events)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(event_streams(broken=True), st.sampled_from(["sorted", "viztracer"]))
def test_native_and_chrome_round_trips(tmp_path_factory, events, style):
    if not any(e["ph"] in "XB" for e in events):
        return
    try:
        a = _load_quiet(orjson.dumps(events))
    except TraceFormatError:
        return
    p = tmp_path_factory.mktemp("rt") / "t.tv3d.npz"
    tracevis3d.save(a, p)
    b = tracevis3d.load(p)
    for k, dt in ARRAY_DTYPES.items():
        x, y = getattr(a, k), getattr(b, k)
        assert x.dtype == y.dtype == dt and np.array_equal(x, y), k
    for k in STRING_TABLES:
        assert getattr(a, k) == getattr(b, k)
    assert a.function_paths == b.function_paths and a.meta == b.meta
    c = _load_quiet(chrome_json_bytes(a, style=style, clock_origin=a.meta["clock_origin"]))
    for k in ("func", "parent", "depth", "end_index", "thread"):
        assert np.array_equal(getattr(a, k), getattr(c, k)), k
    assert np.allclose(a.start, c.start, atol=1e-3) and np.allclose(a.end, c.end, atol=1e-3)


# ---------------------------------------------------- garbage and truncation
def test_truncated_at_random_points(realdata):
    """Every cut point gives a repaired trace or a clean TraceFormatError."""
    rng = np.random.default_rng(7)
    for name in ("viztracer-examples/multithread.json", "catapult/flow.json",
                 "speedscope-trace-event/simple.json", "catapult/x_event_trace.json"):
        raw = (realdata / name).read_bytes()
        full = len(_load_quiet(raw))
        for cut in sorted(rng.integers(0, len(raw), 40)):
            with time_limit(20):
                try:
                    t = _load_quiet(raw[:cut])
                except TraceFormatError:
                    continue
                t.check()
                assert len(t) <= full + 5  # cut B/E pairs may close differently


def test_garbage_bytes(realdata):
    rng = np.random.default_rng(11)
    raw = bytearray((realdata / "catapult/big_trace.json").read_bytes())
    outcomes = {"ok": 0, "error": 0}
    for _ in range(60):
        b = bytearray(raw)
        for pos in rng.integers(0, len(b), rng.integers(1, 20)):
            b[pos] = int(rng.integers(0, 256))
        with time_limit(20):
            try:
                t = _load_quiet(bytes(b))
                t.check()
                outcomes["ok"] += 1
            except TraceFormatError as e:
                assert "byte" in str(e) or "events" in str(e)
                outcomes["error"] += 1
    assert outcomes["error"] > 0  # mutations do get caught
    junk = rng.integers(0, 256, 1 << 20).astype(np.uint8).tobytes()
    for prefix in (b"", b"[", b'{"traceEvents": [', b'[{"ph": "X", "name": "'):
        with time_limit(20):
            with pytest.raises(TraceFormatError):
                load_bytes(prefix + junk)


# ------------------------------------------------------- kinds and objects
def test_kinds_and_objects_from_names_and_args():
    ev = [
        {"ph": "X", "name": "worker", "ts": 0, "dur": 100, "tid": 1},
        {"ph": "X", "name": "Lock.acquire", "ts": 1, "dur": 10, "tid": 1, "args": {"lock": "L1"}},
        {"ph": "X", "name": "<method 'release' of '_thread.lock' objects>", "ts": 20, "dur": 1, "tid": 1,
         "args": {"self": "<locked _thread.lock object at 0x7f00aa>"}},
        {"ph": "X", "name": "socket.socket.recv", "ts": 30, "dur": 5, "tid": 1},
        {"ph": "X", "name": "acquire lock#7", "ts": 40, "dur": 5, "tid": 1},
        {"ph": "X", "name": "my_runtime::park", "ts": 50, "dur": 5, "tid": 1},
    ]
    t = _load_quiet(orjson.dumps(ev))
    kinds = {t.name(i): int(t.kind[i]) for i in range(len(t))}
    assert kinds == {"worker": 0, "Lock.acquire": 1, "<method 'release' of '_thread.lock' objects>": 2,
                     "socket.socket.recv": 3, "acquire lock#7": 1, "my_runtime::park": 0}
    objs = {t.name(i): t.objects_of(i) for i in range(len(t))}
    assert objs["Lock.acquire"] == ["lock:L1"]
    assert objs["<method 'release' of '_thread.lock' objects>"] == ["_thread.lock@0x7f00aa"]
    assert objs["acquire lock#7"] == ["lock:7"]
    # the rule table is extensible per call
    from tracevis3d.kinds import KIND_RULES

    u = _load_quiet(orjson.dumps(ev), kind_rules=[(tracevis3d.KIND_WAIT, r"::park$")] + KIND_RULES)
    assert int(u.kind[u.function_names.index("my_runtime::park") == u.func].max()) == tracevis3d.KIND_WAIT


def test_parallel_scan_equals_sequential(realdata, monkeypatch):
    """The two-thread scan (used for files over 16 MB) gives the same trace as
    the sequential one, for every real file and for cut/garbled copies."""
    from tracevis3d.io import chrome

    def both(data):
        monkeypatch.setattr(chrome, "PARALLEL_SCAN_BYTES", 1 << 62)
        try:
            seq = _load_quiet(data)
        except TraceFormatError as e:
            seq = e
        monkeypatch.setattr(chrome, "PARALLEL_SCAN_BYTES", 0)
        try:
            par = _load_quiet(data)
        except TraceFormatError as e:
            par = e
        if isinstance(seq, Exception):
            assert isinstance(par, TraceFormatError) and str(par) == str(seq)
            return
        for k in ARRAY_DTYPES:
            assert np.array_equal(getattr(seq, k), getattr(par, k)), k
        assert seq.meta["repairs"] == par.meta["repairs"]

    files = [p for p in _real_files(realdata) if p.suffix == ".json"]
    for p in files:
        both(p.read_bytes())
    raw = (realdata / "viztracer-examples/multithread.json").read_bytes()
    for cut in (len(raw) // 2, len(raw) // 2 + 7, len(raw) - 3):
        both(raw[:cut])
    both(raw.replace(b'"ph": "X"', b'"ph": "X", "args": {"s": "x\\", {\\"ph\\": 1"}', 50))
