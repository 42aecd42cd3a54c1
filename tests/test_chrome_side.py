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

REAL = Path(__file__).resolve().parents[2] / "shared" / "realdata"

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


def _match_twin(track, kind, ts):
    out, stack, n_open, n_orph = [], [], 0, 0
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
            if stack:
                j = stack.pop()
                out.append((j, ts[k], len(stack)))
            else:
                n_orph += 1
        else:
            out.append((k, ts[k], len(stack)))
    return out, n_open, n_orph


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 20)), max_size=30))
def test_match_async_twin(evs):
    evs = sorted(evs, key=lambda e: (e[0], e[2]))
    track = np.array([e[0] for e in evs], np.int64)
    kind = np.array([e[1] for e in evs], np.int8)
    ts = np.array([e[2] for e in evs], np.float64)
    srow, send, sdep, n_open, _, n_orph, _ = jsd.match_async(track, kind, ts)
    want, w_open, w_orph = _match_twin(track.tolist(), kind.tolist(), ts.tolist())
    assert list(zip(srow.tolist(), send.tolist(), sdep.tolist())) == want
    assert (n_open, n_orph) == (w_open, w_orph)


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
