"""Chrome counters and async slices (issue 25, item 1): a hand-written file against expected
arrays, real traces, the numba kernels against brute-force twins, hostile inputs."""
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tracevis3d
from tracevis3d.io.compact import load_compact, save_compact
from tracevis3d.io.native import load_native, save_native
from tracevis3d.kernels import jsonside as jsd
from tracevis3d.model import SIDE_FIELDS

REAL = Path(__file__).resolve().parents[3] / "shared" / "realdata"

HAND = b"""{"traceEvents":[
{"ph":"X","name":"main","pid":1,"tid":1,"ts":100,"dur":100},
{"ph":"C","name":"mem","pid":1,"ts":110,"args":{"rss":10,"heap":5}},
{"ph":"C","name":"mem","pid":1,"ts":105,"args":{"rss":8,"heap":NaN}},
{"ph":"C","name":"mem","pid":1,"id":7,"ts":120,"args":{"rss":1}},
{"ph":"C","name":"gc","pid":2,"ts":130,"args":{"n":"x","m":1.5e-1}},
{"ph":"b","cat":"net","name":"req","id":"0x1","pid":1,"ts":101},
{"ph":"b","cat":"net","name":"parse","id":"0x1","pid":1,"ts":102},
{"ph":"n","cat":"net","name":"mark","id":"0x1","pid":1,"ts":103},
{"ph":"e","cat":"net","name":"parse","id":"0x1","pid":1,"ts":104},
{"ph":"e","cat":"net","name":"req","id":"0x1","pid":1,"ts":150},
{"ph":"b","cat":"net","name":"open","id":2,"pid":1,"ts":160},
{"ph":"n","cat":"net","name":"tick","id":2,"pid":1,"ts":170},
{"ph":"e","cat":"io","name":"lost","id":3,"pid":1,"ts":140}
]}
"""


def load(data: bytes, name: str = "t.json"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tracevis3d.io.load_bytes(data, source=name).check()


def test_hand_written_file():
    t = load(HAND)
    assert t.counter_names == ["mem", "mem[7]", "gc"]
    assert t.series_names == ["rss", "heap", "rss", "m"]
    assert t.series_counter.tolist() == [0, 0, 1, 2] and t.series_pid.tolist() == [1, 1, 1, 2]
    assert t.counter_series.tolist() == [0, 0, 1, 2, 3]
    assert t.counter_ts.tolist() == [5.0, 10.0, 10.0, 20.0, 30.0]  # µs from the first call (ts 100)
    assert t.counter_value.tolist() == [8.0, 10.0, 5.0, 1.0, 0.15]
    assert t.async_names == ["req", "parse", "mark", "open", "tick"]
    assert t.async_start.tolist() == [1.0, 2.0, 3.0, 60.0, 70.0]
    assert t.async_end.tolist() == [50.0, 4.0, 3.0, 70.0, 70.0]  # "open" closed at its track's last ts
    assert t.async_name.tolist() == [0, 1, 2, 3, 4]
    assert t.async_track.tolist() == [0, 0, 0, 1, 1]
    assert t.async_depth.tolist() == [0, 1, 2, 0, 1]
    assert t.async_track_cats == ["net", "net", "io"] and t.async_track_ids[1:] == ["2", "3"]
    assert t.async_track_pid.tolist() == [1, 1, 1]
    rep = t.meta["repairs"]
    for code in ("counter_nonfinite", "counter_not_number", "async_unclosed", "async_unmatched_end"):
        assert rep[code]["count"] == 1, code
    assert "NaN" in rep["counter_nonfinite"]["first"] and "line 4" in rep["counter_nonfinite"]["first"]
    assert '"lost"' in rep["async_unmatched_end"]["first"]
    assert t.meta["skipped"] == {}
    assert len(t) == 1 and t.instant_ts.size == 0  # calls and instants as before


def test_hand_written_round_trips(tmp_path):
    t = load(HAND)
    save_native(t, tmp_path / "h.tv3d.npz")
    save_compact(t, tmp_path / "h.tv3c")
    for u in (load_native(tmp_path / "h.tv3d.npz"), load_compact((tmp_path / "h.tv3c").read_bytes())):
        for k in SIDE_FIELDS:
            a, b = getattr(t, k), getattr(u, k)
            assert (np.array_equal(a, b) and a.dtype == b.dtype) if isinstance(a, np.ndarray) else a == b, k


def _real(name):
    p = REAL / name
    if not p.exists():
        pytest.skip(f"{p} is absent (real traces live in ../shared/realdata)")
    return p


def test_real_catapult_counters_and_legacy_async():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = tracevis3d.load(_real("catapult/x_event_trace.json")).check()
    raw = json.loads(_real("catapult/x_event_trace.json").read_text())
    evs = raw["traceEvents"] if isinstance(raw, dict) else raw
    cs = [e for e in evs if e.get("ph") == "C"]
    assert t.counter_ts.size == sum(len(e["args"]) for e in cs) == 42
    assert t.counter_names[0].startswith("unused_memory_bytes[") and t.series_names == ["value"]
    want = sorted(e["args"]["value"] for e in cs)
    assert sorted(t.counter_value.tolist()) == want
    assert np.all(np.diff(t.counter_ts) >= 0)
    n_s = sum(e.get("ph") == "S" for e in evs)
    n_t = sum(e.get("ph") == "T" for e in evs)
    assert t.async_start.size == n_s + n_t  # every S ended by its F; T steps as instants
    assert set(t.async_track_cats) == {"cc"} and "async_unclosed" not in t.meta["repairs"]


def test_real_catapult_simple_trace_counter():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = tracevis3d.load(_real("catapult/simple_trace.json")).check()
    assert t.counter_names == ["counter"] and t.counter_ts.size == 5


# --- brute-force twins of the kernels

def _pairs_twin(texts):
    out = []
    for r, s in enumerate(texts):
        obj = json.loads(s)
        if not isinstance(obj, dict):
            continue
        for k, v in obj.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                out.append((r, k, float(v) if math.isfinite(v) else None,
                            jsd.PAIR_OK if math.isfinite(v) else jsd.PAIR_NONFINITE))
            else:
                out.append((r, k, None, jsd.PAIR_NOT_NUMBER))
    return out


values = st.one_of(st.integers(-10**6, 10**6), st.floats(allow_nan=True, allow_infinity=True),
                   st.text(max_size=3), st.booleans(), st.none(), st.lists(st.integers(), max_size=2))
objs = st.one_of(st.dictionaries(st.text("abc", min_size=1, max_size=3), values, max_size=4),
                 st.lists(st.integers(), max_size=2), st.integers())


@settings(max_examples=150, deadline=None)
@given(st.lists(objs, max_size=6))
def test_counter_pairs_twin(rows):
    texts = [json.dumps(o) for o in rows]
    buf = np.frombuffer(" ".join(texts).encode() or b" ", np.uint8)
    off, pos = [], 0
    for s in texts:
        off.append(pos)
        pos += len(s.encode()) + 1
    ln = np.array([len(s.encode()) for s in texts], np.int64)
    row, koff, klen, voff, vlen, val, stat = jsd.counter_pairs(buf, np.array(off, np.int64), ln,
                                                               np.zeros(64, np.uint8))
    got = []
    for k in range(row.size):
        s = int(stat[k])
        if s == jsd.PAIR_INEXACT:
            v = float(bytes(buf[voff[k]: voff[k] + vlen[k]]))
            s = jsd.PAIR_OK if math.isfinite(v) else jsd.PAIR_NONFINITE
        else:
            v = float(val[k])
        key = json.loads(b'"' + bytes(buf[koff[k]: koff[k] + klen[k]]) + b'"')
        got.append((int(row[k]), key, v if s == jsd.PAIR_OK else None, s))
    want = _pairs_twin(texts)
    assert [g[:2] + (g[3],) for g in got] == [w[:2] + (w[3],) for w in want]
    for g, w in zip(got, want):
        if w[2] is not None:
            assert g[2] == pytest.approx(w[2], rel=1e-15, abs=0)


def _match_twin(track, kind, ts, name):
    """Per track: begins pushed; an end without a name (or agreeing with the innermost open
    one) pops it, else pops down to the innermost open one of its name (those above counted
    misnested), else (no open one has it) pops the innermost (a name mismatch)."""
    out, stack = [], []
    n_open = n_orph = n_mis = n_name = 0
    for k in range(len(track) + 1):
        if stack and (k == len(track) or track[k] != track[k - 1]):
            last = ts[k - 1]
            while stack:
                j = stack.pop()
                out.append((j, max(last, ts[j]), len(stack)))
                n_open += 1
        if k == len(track):
            break
        if kind[k] == jsd.A_BEGIN:
            stack.append(k)
        elif kind[k] == jsd.A_END:
            if not stack:
                n_orph += 1
                continue
            open_names = [name[j] for j in stack]
            target = len(stack) - 1
            if name[k] >= 0 and open_names[-1] >= 0 and open_names[-1] != name[k]:
                hits = [d for d, nm in enumerate(open_names) if nm == name[k]]
                if hits:
                    target = hits[-1]
                else:
                    n_name += 1
            while len(stack) > target:
                j = stack.pop()
                out.append((j, ts[k], len(stack)))
                if len(stack) > target:
                    n_mis += 1
        else:
            out.append((k, ts[k], len(stack)))
    return out, [n_open, n_orph, n_mis, n_name]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 20), st.integers(-1, 2)),
                max_size=30))
def test_match_async_twin(evs):
    evs = sorted(evs, key=lambda e: (e[0], e[2]))
    track = np.array([e[0] for e in evs], np.int64)
    kind = np.array([e[1] for e in evs], np.int8)
    ts = np.array([e[2] for e in evs], np.float64)
    name = np.array([e[3] for e in evs], np.int64)
    srow, send, sdep, counts, firsts = jsd.match_async(track, kind, ts, name)
    want, w_counts = _match_twin(track.tolist(), kind.tolist(), ts.tolist(), name.tolist())
    assert list(zip(srow.tolist(), send.tolist(), sdep.tolist())) == want
    assert counts.tolist() == w_counts
    assert all((f >= 0) == (c > 0) for f, c in zip(firsts.tolist(), counts.tolist()))


def _ids_twin(ev):
    """(kind, id text, scope text) of an event, the spec's precedence: id, id2.global, id2.local."""
    def text(v):
        return v if isinstance(v, str) else json.dumps(v)
    scope = text(ev["scope"]) if "scope" in ev else None
    if "id" in ev:
        return jsd.ID_PLAIN, text(ev["id"]), scope
    id2 = ev.get("id2")
    if isinstance(id2, dict) and "global" in id2:
        return jsd.ID2_GLOBAL, text(id2["global"]), scope
    if isinstance(id2, dict) and "local" in id2:
        return jsd.ID2_LOCAL, text(id2["local"]), scope
    return jsd.ID_NONE, None, scope


id_values = st.one_of(st.integers(-10**20, 10**20), st.text("0x1fz\\\"", max_size=4))
events = st.fixed_dictionaries({"ph": st.just("b")}, optional={
    "id": id_values, "scope": st.text("ab", max_size=2), "name": st.text("ab", max_size=2),
    "id2": st.one_of(st.fixed_dictionaries({}, optional={"local": id_values, "global": id_values}),
                     st.integers(0, 3)),
    "args": st.dictionaries(st.sampled_from(["id", "scope", "local"]), id_values, max_size=2)})


@settings(max_examples=200, deadline=None)
@given(st.lists(events, max_size=6))
def test_event_ids_twin(evs):
    texts = [json.dumps(e, separators=(",", ":") if k % 2 else (", ", ": ")).encode() for k, e in enumerate(evs)]
    off = np.cumsum([0] + [len(x) + 1 for x in texts])[:-1].astype(np.int64)
    buf = np.frombuffer(b" ".join(texts) or b" ", np.uint8)
    ln = np.array([len(x) for x in texts], np.int64)
    kind, i_off, i_len, s_off, s_len = jsd.event_ids(buf, off, ln, np.zeros(64, np.uint8))

    def span(o, n, raw_string):
        if n < 0:
            return None
        b = bytes(buf[o: o + n])
        return json.loads(b'"' + b + b'"') if raw_string else b.decode()
    for k, e in enumerate(evs):
        w_kind, w_id, w_scope = _ids_twin(e)
        assert int(kind[k]) == w_kind
        quoted = i_len[k] >= 0 and buf[i_off[k] - 1] == ord('"')
        got_id = span(i_off[k], i_len[k], quoted)
        assert (got_id if quoted or got_id is None else json.dumps(json.loads(got_id))) == w_id
        got_scope = span(s_off[k], s_len[k], s_len[k] >= 0 and buf[s_off[k] - 1] == ord('"'))
        assert got_scope == w_scope


# --- hostile

def test_million_counter_samples_linear():
    n = 10**6
    head = b'{"traceEvents":[{"ph":"X","name":"main","pid":1,"tid":1,"ts":0,"dur":10},\n'
    ts = np.arange(n)
    body = b",\n".join(b'{"ph":"C","name":"m","pid":1,"ts":%d,"args":{"v":%d}}' % (k, k % 97)
                       for k in ts.tolist())
    t = load(head + body + b"]}")
    assert t.counter_ts.size == n and t.series_names == ["v"] and t.counter_names == ["m"]
    assert np.array_equal(t.counter_value, (ts % 97).astype(float))
    side = sum(getattr(t, k).nbytes for k in SIDE_FIELDS if isinstance(getattr(t, k), np.ndarray))
    assert side <= 20 * n + 1000  # 8 + 8 + 4 bytes a sample, nothing per sample beyond that


def test_only_unmatched_ends_bounded():
    n = 200_000
    head = b'{"traceEvents":[{"ph":"X","name":"main","pid":1,"tid":1,"ts":0,"dur":10},\n'
    body = b",\n".join(b'{"ph":"e","cat":"c","name":"x","id":%d,"pid":1,"ts":%d}' % (k % 1000, k)
                       for k in range(n))
    t = load(head + body + b"]}")
    assert t.async_start.size == 0
    assert t.meta["repairs"]["async_unmatched_end"]["count"] == n
    assert len(t.async_track_ids) == 1000  # the tracks, never one entry per event


# --- async ids, matching by (category, scope, id[, process]), legacy steps

IDS = b"""{"traceEvents":[
{"ph":"X","name":"main","pid":1,"tid":1,"ts":100,"dur":100},
{"ph":"b","cat":"net","name":"req","id":"0x1f","pid":1,"ts":101},
{"ph":"e","cat":"net","id":"0x1f","pid":2,"ts":110},
{"ph":"b","cat":"net","name":"a","id2":{"local":"0x2"},"pid":1,"ts":101},
{"ph":"b","cat":"net","name":"a","id2":{ "local" : "0x2" },"pid":2,"ts":102},
{"ph":"e","cat":"net","name":"a","id2":{"local":"0x2"},"pid":2,"ts":103},
{"ph":"e","cat":"net","name":"a","id2":{"local":"0x2"},"pid":1,"ts":120},
{"ph":"b","cat":"net","name":"g","id2":{"global":"0x1f"},"pid":3,"ts":130},
{"ph":"e","cat":"net","name":"g","id":"0x1f","pid":4,"ts":131},
{"ph":"b","cat":"net","name":"s","id":"0x1f","scope":"other","pid":1,"ts":140},
{"ph":"e","cat":"net","name":"s","id":"0x1f","scope":"other","pid":1,"ts":141}
]}
"""


def _slices(t):
    """(track id text, scope, name, start, end, depth) of each async slice."""
    return [(t.async_track_ids[tr], t.async_track_scopes[tr], t.async_names[nm], s, e, d)
            for tr, nm, s, e, d in zip(t.async_track.tolist(), t.async_name.tolist(), t.async_start.tolist(),
                                       t.async_end.tolist(), t.async_depth.tolist())]


def test_async_ids_kept_readable_and_matched_by_scope_and_process():
    t = load(IDS)
    # "id" and id2.global match across processes; id2.local only inside its process; scope apart
    assert t.async_track_ids == ["0x1f", "0x2", "0x2", "0x1f"]
    assert t.async_track_scopes == ["", "", "", "other"]
    assert t.async_track_id_kind.tolist() == [jsd.ID_PLAIN, jsd.ID2_LOCAL, jsd.ID2_LOCAL, jsd.ID_PLAIN]
    assert t.async_track_pid.tolist() == [1, 1, 2, 1]
    assert sorted(_slices(t)) == sorted([
        ("0x1f", "", "req", 1.0, 10.0, 0), ("0x1f", "", "g", 30.0, 31.0, 0),  # the end omits its name
        ("0x2", "", "a", 1.0, 20.0, 0), ("0x2", "", "a", 2.0, 3.0, 0), ("0x1f", "other", "s", 40.0, 41.0, 0)])
    assert "async_unmatched_end" not in t.meta["repairs"] and "async_unclosed" not in t.meta["repairs"]


NESTED = b"""{"traceEvents":[
{"ph":"X","name":"main","pid":1,"tid":1,"ts":0,"dur":100},
{"ph":"b","cat":"c","name":"outer","id":1,"pid":1,"ts":1},
{"ph":"b","cat":"c","name":"mid","id":1,"pid":1,"ts":2},
{"ph":"b","cat":"c","name":"inner","id":1,"pid":1,"ts":3},
{"ph":"e","cat":"c","name":"mid","id":1,"pid":1,"ts":4},
{"ph":"b","cat":"c","name":"x","id":1,"pid":1,"ts":5},
{"ph":"e","cat":"c","name":"nope","id":1,"pid":1,"ts":6},
{"ph":"e","cat":"c","id":1,"pid":1,"ts":7},
{"ph":"e","cat":"c","name":"outer","id":1,"pid":1,"ts":8},
{"ph":"S","cat":"l","name":"load","id":"0xa","pid":1,"ts":10},
{"ph":"T","cat":"l","name":"load","id":"0xa","pid":1,"ts":11,"args":{"step":"parse"}},
{"ph":"p","cat":"l","name":"load","id":"0xa","pid":1,"ts":12,"args":{"step":"layout"}},
{"ph":"F","cat":"l","name":"load","id":"0xa","pid":1,"ts":13}
]}
"""


def test_async_end_names_lifo_and_legacy_steps():
    t = load(NESTED)
    got = sorted(_slices(t), key=lambda x: (x[0], x[3], x[5]))
    assert got == [
        ("0xa", "", "load", 10.0, 13.0, 0), ("0xa", "", "load", 11.0, 11.0, 1),  # T and p: marks inside
        ("0xa", "", "load", 12.0, 12.0, 1),
        ("1", "", "outer", 1.0, 7.0, 0),  # the nameless end closes the innermost open slice
        ("1", "", "mid", 2.0, 4.0, 1), ("1", "", "inner", 3.0, 4.0, 2),  # closed by mid's end
        ("1", "", "x", 5.0, 6.0, 1)]  # "nope" names no open slice: the innermost one
    rep = t.meta["repairs"]
    assert rep["async_misnested"]["count"] == 1 and '"inner"' in rep["async_misnested"]["first"]
    assert rep["async_end_name_mismatch"]["count"] == 1 and '"nope"' in rep["async_end_name_mismatch"]["first"]
    assert rep["async_unmatched_end"]["count"] == 1 and '"outer"' in rep["async_unmatched_end"]["first"]
    assert t.meta["skipped"] == {}  # p steps are read now


def test_async_ids_round_trip_native_compact_and_chrome(tmp_path):
    from tracevis3d.io.chrome_writer import chrome_json_bytes
    t = load(IDS)
    save_native(t, tmp_path / "i.tv3d.npz")
    save_compact(t, tmp_path / "i.tv3c")
    again = load(chrome_json_bytes(t))
    for u in (load_native(tmp_path / "i.tv3d.npz"), load_compact((tmp_path / "i.tv3c").read_bytes())):
        for k in SIDE_FIELDS:
            a, b = getattr(t, k), getattr(u, k)
            assert (np.array_equal(a, b) and a.dtype == b.dtype) if isinstance(a, np.ndarray) else a == b, k
    assert sorted(_slices(again)) == sorted(_slices(t))
    assert sorted(zip(again.async_track_ids, again.async_track_scopes, again.async_track_id_kind.tolist())) == \
        sorted(zip(t.async_track_ids, t.async_track_scopes, t.async_track_id_kind.tolist()))


def test_tracks_of_older_files_get_the_new_fields():
    """A file written before the tracks' id kind and scope: plain ids without scope."""
    t = load(HAND)
    kw = {k: getattr(t, k) for k in ("func", "start", "end", "parent", "thread")}
    old = dict(t.side_tracks())
    old.pop("async_track_id_kind")
    old.pop("async_track_scopes")
    from tracevis3d.model import Trace
    u = Trace.from_arrays(**kw, **old).check()
    assert u.async_track_scopes == [""] * 3 and u.async_track_id_kind.tolist() == [jsd.ID_PLAIN] * 3


def test_counter_string_id_readable():
    t = load(b'{"traceEvents":[{"ph":"X","name":"m","pid":1,"tid":1,"ts":0,"dur":9},'
             b'{"ph":"C","name":"q","id":"0x5f","pid":1,"ts":1,"args":{"v":1}},'
             b'{"ph":"C","name":"q","id":7,"pid":1,"ts":2,"args":{"v":2}}]}')
    assert t.counter_names == ["q[0x5f]", "q[7]"]


# --- subsets: side tracks cut like the calls (Trace.subset, load(window=))

def _cut_file(seed: int = 3) -> bytes:
    rng = np.random.default_rng(seed)
    ev = ['{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":100}',
          '{"ph":"X","name":"b","pid":2,"tid":2,"ts":0,"dur":100}',
          '{"ph":"s","cat":"f","name":"f","id":1,"pid":1,"tid":1,"ts":5}',
          '{"ph":"f","cat":"f","name":"f","id":1,"pid":2,"tid":2,"ts":6,"bp":"e"}']
    for k in range(60):
        p = 1 + k % 2
        ev.append('{"ph":"C","name":"m%d","pid":%d,"ts":%d,"args":{"v":%d,"w":%d}}'
                  % (p, p, rng.integers(0, 100), k, -k))
    for k in range(20):
        a, b = sorted(rng.integers(0, 100, 2).tolist())
        ev.append('{"ph":"b","cat":"c","name":"x","id2":{"local":%d},"pid":%d,"ts":%d}' % (k % 3, 1 + k % 2, a))
        ev.append('{"ph":"e","cat":"c","id2":{"local":%d},"pid":%d,"ts":%d}' % (k % 3, 1 + k % 2, b))
    for k in range(10):
        ev.append('{"ph":"i","name":"i","pid":1,"tid":1,"ts":%d,"s":"%s"}' % (k * 10, "tg"[k % 2]))
    return ("[" + ",\n".join(ev) + "]").encode()


def _series_samples(t):
    """{(counter name, series name, pid): [(ts, value), ...]}"""
    out: dict = {}
    for ts, v, s in zip(t.counter_ts.tolist(), t.counter_value.tolist(), t.counter_series.tolist()):
        key = (t.counter_names[int(t.series_counter[s])], t.series_names[s], int(t.series_pid[s]))
        out.setdefault(key, []).append((ts, v))
    return out


def _async_set(t):
    return sorted((t.async_track_ids[tr], int(t.async_track_pid[tr]), s, e, d)
                  for tr, s, e, d in zip(t.async_track.tolist(), t.async_start.tolist(), t.async_end.tolist(),
                                         t.async_depth.tolist()))


@pytest.mark.parametrize("window", [(20.0, 60.0), (0.0, 100.0), (50.0, 50.0), (200.0, 300.0)])
def test_subset_window_cuts_side_tracks(window, tmp_path):
    t = load(_cut_file())
    t0, t1 = window
    u = t.subset(time_window=window).check()
    want = {}
    for key, pts in _series_samples(t).items():  # brute force: in the window plus the last before it
        before = [p for p in pts if p[0] < t0]
        kept = before[-1:] + [p for p in pts if t0 <= p[0] <= t1]
        if kept:
            want[key] = kept
    assert _series_samples(u) == want
    assert _async_set(u) == sorted((i, p, max(s, t0), min(e, t1), d) for i, p, s, e, d in _async_set(t)
                                   if e >= t0 and s <= t1)
    assert sorted(u.instant_ts.tolist()) == [x for x in sorted(t.instant_ts.tolist()) if t0 <= x <= t1]
    assert u.flow_id.size == (1 if len(u) == 2 else 0)  # flows go with their calls
    # the same through load(window=) and a native file
    path = tmp_path / "c.json"
    path.write_bytes(_cut_file())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v = tracevis3d.load(str(path), window=window).check()
    assert _series_samples(v) == want and _async_set(v) == _async_set(u)


def test_subset_thread_keeps_its_process_side_tracks():
    t = load(_cut_file())
    u = t.subset(thread=[1]).check()  # the thread of pid 2
    assert set(u.series_pid.tolist()) == {2} and set(u.async_track_pid.tolist()) == {2}
    assert {k: v for k, v in _series_samples(t).items() if k[2] == 2} == _series_samples(u)
    assert _async_set(u) == [x for x in _async_set(t) if x[1] == 2]
    assert u.flow_id.size == 0  # its other end was on thread 0
    w = t.subset(max_depth=0)  # no thread or window: everything kept
    assert _series_samples(w) == _series_samples(t) and _async_set(w) == _async_set(t)


# --- files without calls

def test_counters_only_file_loads_with_an_empty_call_tree(tmp_path):
    data = (b'{"traceEvents":[{"ph":"C","name":"mem","pid":1,"ts":1000,"args":{"rss":1}},'
            b'{"ph":"C","name":"mem","pid":1,"ts":1010,"args":{"rss":3}},'
            b'{"ph":"b","cat":"c","name":"x","id":1,"pid":1,"ts":1002},{"ph":"e","cat":"c","id":1,"pid":1,"ts":1005}]}')
    t = load(data, "c.json")
    assert len(t) == 0 and t.n_threads == 0 and t.meta["clock_origin"] == 1000.0
    assert t.counter_ts.tolist() == [0.0, 10.0] and t.async_start.tolist() == [2.0]
    p = tmp_path / "c.tv3d.npz"
    save_native(t, p)
    assert load_native(p).counter_value.tolist() == [1.0, 3.0]
    from tracevis3d.layout import IcicleParams, icicle_layout
    with pytest.raises(ValueError, match=r"^no calls to show: c.json has no calls but 2 counter samples, "
                                         r"1 async slice: the views draw those only beside calls$"):
        icicle_layout(t, IcicleParams(resolution=(960, 540)))


@pytest.mark.parametrize("tail", [b"]}", b'],"stackFrames":{}}'])
def test_counters_alone_load_too(tail):
    """Counters and nothing else (the scanner's fast path takes them all, so no event row is left):
    the file loaded as the one with async slices beside them does; it said "no call events, and a
    'stackFrames' object without 'samples' (it starts at byte 0)" of a file without stackFrames."""
    data = (b'{"traceEvents":[{"ph":"C","name":"mem","pid":1,"ts":1000,"args":{"rss":1}},'
            b'{"ph":"C","name":"mem","pid":1,"ts":1010,"args":{"rss":3}}' + tail)
    t = load(data, "c.json")
    assert len(t) == 0 and t.counter_value.tolist() == [1.0, 3.0] and t.counter_ts.tolist() == [0.0, 10.0]
    from tracevis3d.layout import IcicleParams, icicle_layout
    with pytest.raises(ValueError, match=r"^no calls to show: c.json has no calls but 2 counter samples"):
        icicle_layout(t, IcicleParams(resolution=(960, 540)))
    with pytest.raises(tracevis3d.model.TraceFormatError, match=r"'stackFrames' object without 'samples' "
                                                                r"\(it starts at byte 32 "):
        load(b'{"traceEvents":[],"stackFrames":{}}', "s.json")


def test_nothing_to_show_still_refused():
    with pytest.raises(tracevis3d.model.TraceFormatError, match="counter samples or async slices: nothing"):
        load(b'[{"ph":"C","ts":1,"name":"c"},{"ph":"e","cat":"c","id":1,"ts":3}]')


def _series_twin(pid, nid, cid, keys):
    """Brute force: dicts of (process, name, id, key) → series and (process, name, id) → counter."""
    s_of, c_of, sid, s_counter, sfirst, cfirst = {}, {}, [], [], [], []
    for k, key in enumerate(keys):
        c_key = (pid[k], nid[k], cid[k])
        if c_key not in c_of:
            c_of[c_key] = len(cfirst)
            cfirst.append(k)
        if c_key + (key,) not in s_of:
            s_of[c_key + (key,)] = len(sfirst)
            sfirst.append(k)
            s_counter.append(c_of[c_key])
        sid.append(s_of[c_key + (key,)])
    return sid, s_counter, sfirst, cfirst


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(-1, 2), st.sampled_from([0, 7, -2**63]),
                          st.text("ab\u00e9", max_size=3)), max_size=200))
def test_series_ids_twin(pairs):
    from tracevis3d.io import chrome_side
    keys = [p[3].encode() for p in pairs]
    buf = np.frombuffer(b"".join(keys) + b" ", np.uint8)
    koff = np.cumsum([0] + [len(x) for x in keys])[:-1].astype(np.int64)
    klen = np.array([len(x) for x in keys], np.int64)
    cols = [np.array([p[i] for p in pairs], np.int64) for i in range(3)]
    want = _series_twin(*[c.tolist() for c in cols], keys)
    if pairs:
        *got, ok = jsd.series_ids(buf, *cols, koff, klen, 12345)
        assert ok and [g.tolist() for g in got] == list(want)
    # the fallback (keys built to collide) agrees
    real = jsd.series_ids
    try:
        jsd.series_ids = lambda *a: (None, None, None, None, False)
        got = chrome_side._series(buf, *cols, koff, klen, 7)
    finally:
        jsd.series_ids = real
    assert [np.asarray(g).tolist() for g in got] == list(want)


def test_instants_keep_their_process(tmp_path):
    """A process-scope instant keeps its event's pid (what it spans in the views and what a
    thread subset keeps it by) through the importer, the Chrome export and a thread subset."""
    data = b"""{"traceEvents":[
{"ph":"X","name":"a","pid":1,"tid":1,"ts":100,"dur":100},
{"ph":"X","name":"b","pid":2,"tid":5,"ts":100,"dur":100},
{"ph":"i","name":"p2","pid":2,"tid":5,"ts":150,"s":"p"},
{"ph":"i","name":"t1","pid":1,"tid":1,"ts":120,"s":"t"},
{"ph":"i","name":"g","pid":1,"tid":1,"ts":130,"s":"g"}
]}"""
    t = load(data)
    by = {t.instant_names[int(k)]: j for j, k in enumerate(t.instant_name)}
    assert t.instant_pid[by["p2"]] == 2 and t.instant_thread[by["p2"]] == -1
    assert t.instant_pid[by["t1"]] == 1
    tracevis3d.save(t, tmp_path / "x.json", format="chrome")
    u = tracevis3d.load(tmp_path / "x.json")
    ub = {u.instant_names[int(k)]: j for j, k in enumerate(u.instant_name)}
    assert u.instant_pid[ub["p2"]] == 2 and chr(u.instant_scope[ub["p2"]]) == "p"
    one = t.subset(thread=[int(np.flatnonzero(t.thread_pid == 1)[0])])
    assert sorted(one.instant_names[int(k)] for k in one.instant_name) == ["g", "t1"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(-1, 6), st.sampled_from([0.0, 1.0, 2.5, 3.0, -1.0, math.nan, math.inf])),
                max_size=60), st.booleans())
def test_key_time_order_twin(rows, sort_times):
    """The counting sort by key equals np.lexsort((t, key)) whenever it answers, and answers
    for every file whose series come in time order (non-negative keys, no NaN)."""
    from tracevis3d.io.chrome_side import by_key_then_time
    key = np.array([r[0] for r in rows], np.int64)
    t = np.array([r[1] for r in rows], np.float64)
    if sort_times:  # each key's times in order, as a file written while recording has them
        key = np.abs(key)
        t = np.nan_to_num(t, nan=0.0)
        for k in np.unique(key):
            t[key == k] = np.sort(t[key == k])
    want = np.lexsort((t, key))
    order, ok = jsd.key_time_order(key, t)
    if ok:
        assert order.tolist() == want.tolist()
    if sort_times:
        assert ok
    if not np.isnan(t).any():  # (the importer's times are finite)
        assert by_key_then_time(key, t).tolist() == want.tolist()


def _memory_events(n=60):
    """PyTorch's memory profile in its own words (``torch.profiler`` with profile_memory: an
    instant ``[memory]`` per allocation and free, carrying the allocator's totals), on the
    CPU and on one CUDA device, beside calls and a counter of the file's own."""
    ev = [{"ph": "X", "pid": 7, "tid": 7, "ts": 10 * j, "dur": 8, "name": f"aten::op{j % 3}"} for j in range(n)]
    cpu, cuda = [], []
    total = 0
    for j in range(n):
        b = 4096 * (1 + j % 5) * (-1 if j % 4 == 3 else 1)
        total += b
        cpu.append((10 * j + 1, total))
        ev.append({"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 7, "tid": 7,
                   "ts": 10 * j + 1, "args": {"Device Type": 0, "Device Id": -1, "Addr": 94000000 + j, "Bytes": b,
                                              "Total Allocated": total, "Total Reserved": 0, "Ev Idx": j}})
        if j % 10 == 0:
            cuda.append((10 * j + 2, 512 * j))
            ev.append({"ph": "i", "s": "t", "name": "[memory]", "pid": 7, "tid": 7, "ts": 10 * j + 2,
                       "args": {"Device Type": 1, "Device Id": 0, "Bytes": 512, "Total Allocated": 512 * j,
                                "Total Reserved": 2 ** 21}})
    ev.append({"ph": "i", "s": "t", "name": "[memory]", "pid": 7, "tid": 7, "ts": 3, "args": {"Total Allocated": "x"}})
    ev.append({"ph": "i", "s": "t", "name": "[memory]", "pid": 7, "tid": 7, "ts": 4, "args": []})  # no totals
    ev.append({"ph": "X", "name": "[memory]", "pid": 7, "tid": 7, "ts": 4, "dur": 1,  # a call of that name: not read
               "args": {"Total Allocated": 1e300}})
    ev.append({"ph": "C", "pid": 7, "ts": 5, "name": "cpu", "args": {"load": 3}})
    return json.dumps({"traceEvents": ev}).encode(), cpu, cuda


def test_pytorch_memory_instants_become_counter_series_per_device(tmp_path):
    data, cpu, cuda = _memory_events()
    t = tracevis3d.io.load_bytes(data, source="mem.json")
    assert t.counter_names == ["cpu", "cpu memory", "cuda:0 memory"]
    assert t.series_names == ["load", "allocated", "reserved", "allocated", "reserved"]
    assert t.series_units == ["", "MB", "MB", "MB", "MB"] and t.series_counter.tolist() == [0, 1, 1, 2, 2]
    t0 = t.meta["clock_origin"]

    def series(s):
        w = t.counter_series == s
        return (t.counter_ts[w] + t0).tolist(), t.counter_value[w].tolist()

    assert series(1) == ([float(a) for a, _ in cpu], [v / 1e6 for _, v in cpu])  # the string total: not a sample
    assert series(3) == ([float(a) for a, _ in cuda], [v / 1e6 for _, v in cuda])
    assert series(4)[1] == [2 ** 21 / 1e6] * len(cuda)
    assert t.instant_ts.size == len(cpu) + len(cuda) + 2  # the instants stay
    t.check()
    save_native(t, tmp_path / "m.tv3d.npz")
    save_compact(t, tmp_path / "m.tv3c")
    for u in (load_native(tmp_path / "m.tv3d.npz"), load_compact((tmp_path / "m.tv3c").read_bytes())):
        assert u.counter_names == t.counter_names and np.array_equal(u.counter_value, t.counter_value)
    # written back as Chrome JSON (its counters as C events, the instants kept) and read again:
    # the memory counters once, not again from the instants
    tracevis3d.save(t, tmp_path / "m.json", format="chrome")
    back = tracevis3d.load(tmp_path / "m.json")
    assert back.counter_names == t.counter_names, back.counter_names
    assert back.series_units == t.series_units  # kept in metadata events (C events carry none)
    assert np.allclose(back.counter_value, t.counter_value)
    # a file that has the counter itself (a writer that keeps the instants' args too): not twice
    both = data[:-2] + b', {"ph": "C", "pid": 7, "ts": 6, "name": "cpu memory", "args": {"allocated": 1}}]}'
    twice = tracevis3d.io.load_bytes(both, source="both.json")
    assert twice.counter_names == ["cpu", "cpu memory", "cuda:0 memory"], twice.counter_names
    assert (twice.counter_series == twice.series_names.index("allocated")).sum() == 1  # the file's one sample
    # the icicle's default tracks: the totals that vary, labelled in MB
    from tracevis3d.layout import IcicleParams, icicle_layout

    spec = icicle_layout(t, IcicleParams(resolution=(960, 540)))
    labels = [x for x, kind in zip(spec.labels.texts, spec.labels.kind) if kind == "counter"]
    assert any(x.startswith("cpu me") and "· allocated" in x for x in labels), labels  # the device kept
    assert any(x.endswith(" MB") for x in labels), labels
    # a hostile device number (1e300) and totals beyond float range: bounded, no warning
    hostile = data.replace(b'"Device Id": 0', b'"Device Id": 1e300').replace(b'"Total Reserved": 2097152',
                                                                              b'"Total Reserved": 1e999')
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        h = tracevis3d.io.load_bytes(hostile, source="hostile.json", warn=False)
    assert h.counter_names[-1].startswith("cuda") and np.all(np.isfinite(h.counter_value))


def test_counter_units_from_metadata_events_hostile_ones_skipped():
    """A series' unit as the Chrome writer keeps it (a metadata event per series); a unit event
    that is not three strings, or names no series, changes nothing; a long unit is cut."""
    from tracevis3d.io.chrome_writer import COUNTER_UNIT_EVENT as U
    ev = [{"ph": "C", "pid": 1, "ts": k, "name": "mem", "args": {"rss": k, "heap": 2 * k}} for k in range(3)]
    ev += [{"ph": "C", "pid": 2, "ts": 1, "name": "mem", "args": {"rss": 5}},
           {"ph": "M", "pid": 1, "tid": 0, "name": U, "args": {"counter": "mem", "series": "rss", "unit": "MB"}},
           {"ph": "M", "pid": 1, "tid": 0, "name": U, "args": {"counter": "mem", "series": "heap", "unit": 7}},
           {"ph": "M", "pid": 1, "tid": 0, "name": U, "args": ["mem", "heap", "kB"]},
           {"ph": "M", "pid": 1, "tid": 0, "name": U, "args": {"counter": "nope", "series": "rss", "unit": "s"}},
           {"ph": "M", "pid": 2, "tid": 0, "name": U, "args": {"counter": "mem", "series": "rss", "unit": "x" * 10**5}}]
    t = tracevis3d.io.load_bytes(json.dumps({"traceEvents": ev}).encode(), source="units.json")
    units = {(int(t.series_pid[s]), t.series_names[s]): t.series_units[s] for s in range(len(t.series_names))}
    assert units[(1, "rss")] == "MB" and units[(1, "heap")] == ""
    assert 0 < len(units[(2, "rss")]) < 10**4, len(units[(2, "rss")])
