"""stackprof, Safari, GHC ``-pj`` and V8 heap profiles (`tracevis3d.io.stackprof`, ``.safari``,
``.ghc``, ``.heapprofile``) against naive readings written here from speedscope's importers
(``stackprof.ts``, ``safari.ts``, ``haskell.ts``, ``v8heapalloc.ts``), on speedscope's sample
files; the hostile files of tests/support/hostile_profiles.py (every JSON profile reader); the twin of
`kernels.stacklists.stackprof_raw` and ``on_previous_stack``."""
from __future__ import annotations

import pathlib
import random
import re
import warnings

import numpy as np
import pytest

import hostile_profiles as hp
import tracevis3d

from speedscope_twins import calls_of, load_quiet, read_json, same_calls, time_order
from tracevis3d.model import TraceFormatError, TraceWarning

SAMPLES = pathlib.Path(__file__).resolve().parents[1] / "data" / "formats" / "speedscope-samples"


def merged_matches(trace, stacks, weights, what=""):
    """``trace`` is the Left Heavy view of (stacks of names, weights): every name path once, as
    wide as the weights under it; children side by side from their parent's left edge, the
    heaviest first (ties in any order), the parent's own weight after them."""
    total = {}
    for st, w in zip(stacks, weights):
        for d in range(1, len(st) + 1):
            total[st[:d]] = total.get(st[:d], 0.0) + w
    want = {p: w for p, w in total.items() if w > 0}
    got = calls_of(trace)
    widths = {}
    for p, a, b in got:
        assert p not in widths, f"{what}: {p} twice"
        widths[p] = b - a
    assert set(widths) == set(want), f"{what}: paths differ: {set(widths) ^ set(want)}"
    scale = max(want.values()) if want else 1.0
    for p in want:
        assert abs(widths[p] - want[p]) <= 1e-9 * scale, f"{what}: {p} is {widths[p]}, not {want[p]}"
    start = {p: a for p, a, _ in got}
    kids = {}
    for p in got:
        kids.setdefault(p[0][:-1], []).append(p)
    for parent, ks in kids.items():
        ks.sort(key=lambda c: c[1])
        x = start.get(parent, 0.0)
        for i, (p, a, b) in enumerate(ks):
            assert abs(a - x) <= 1e-9 * scale, f"{what}: {p} starts at {a}, not {x}"
            if i:
                assert (b - a) <= (ks[i - 1][2] - ks[i - 1][1]) + 1e-9 * scale, f"{what}: {p} is not heaviest first"
            x = b


# ----------------------------------------------------------------------------- stackprof
def naive_stackprof(doc):
    """(stacks of names, weights, mode) read as speedscope's ``stackprof.ts``, except that a lone
    GC sample stands on the last stack that was not one (tracevis3d's documented reading)."""
    frames, raw, mode = doc["frames"], doc["raw"], doc["mode"]
    deltas = doc.get("raw_timestamp_deltas", [])
    stacks, weights, prev, si, i = [], [], [], 0, 0
    while i < len(raw):
        h = raw[i]
        i += 1
        st = tuple(raw[i:i + h])
        i += h
        names = tuple(frames[str(f)].get("name") or "(unknown)" for f in st)
        if len(st) == 1 and names[0] == "(garbage collection)":
            st = prev + st
        else:
            prev = st
        n = raw[i]
        i += 1
        if mode == "object":
            w = n
        elif mode == "cpu":
            w = n * doc["interval"]
        else:
            w = sum(deltas[si:si + n])
            si += n
        stacks.append(st)
        weights.append(w)
    return stacks, weights, mode


STACKPROF = ["stackprof/object-stackprof.json", "stackprof/ruby-stackprof.json.gz",
             "stackprof/simple-cpu-stackprof.json", "stackprof/simple-stackprof.json",
             "stackprof/stackprof-last-frame-no-name.json"]


@pytest.mark.parametrize("rel", STACKPROF)
def test_stackprof_samples_match_the_naive_reading(rel):
    doc = read_json(SAMPLES / rel)
    tr = load_quiet(SAMPLES / rel)
    stacks, weights, mode = naive_stackprof(doc)
    names = {k: (v.get("name") or "(unknown)") for k, v in doc["frames"].items()}

    def named(calls):
        return [(tuple(names[str(f)] for f in p), a, b) for p, a, b in calls]

    assert tr.meta["format"] == "stackprof"
    if mode == "object":
        assert tr.meta["merged"] and tr.meta["x_unit"] == "objects"
        merged_matches(tr, [tuple(names[str(f)] for f in s) for s in stacks], weights, rel)
    else:
        assert not tr.meta.get("merged")
        same_calls(calls_of(tr), named(time_order(stacks, weights)), what=rel)


def test_stackprof_gc_stands_on_the_previous_stack():
    tr = load_quiet(SAMPLES / "stackprof/simple-stackprof.json")
    gc = tr.function_names.index("(garbage collection)")
    at = np.flatnonzero(tr.func == gc)
    assert at.size and all(tr.depth[at] > 0)


def test_stackprof_last_frame_without_a_name_is_unknown():
    tr = load_quiet(SAMPLES / "stackprof/stackprof-last-frame-no-name.json")
    assert "(unknown)" in tr.function_names


def _raw_brute(raw):
    out, i = [], 0
    while i < len(raw):
        h = raw[i]
        out.append((list(range(i + 1, i + 1 + h)), raw[i + 1 + h]))
        i += h + 2
    return out


@pytest.mark.parametrize("seed", range(6))
def test_stackprof_kernels_against_brute_force(seed):
    from tracevis3d.kernels import stacklists as sl

    rng = random.Random(seed)
    raw = []
    for _ in range(rng.randrange(0, 60)):
        h = rng.randrange(0, 6)
        raw += [h] + [rng.randrange(100, 110) for _ in range(h)] + [rng.randrange(0, 4)]
    pos, off, cnt, status, where = sl.stackprof_raw(np.array(raw, np.int64))
    assert status == sl.OK and where == -1
    want = _raw_brute(raw)
    assert [(pos[off[k]:off[k + 1]].tolist(), int(cnt[k])) for k in range(len(cnt))] == want
    # lone samples on the last stack that was not one
    flat = np.array([raw[p] for p in pos.tolist()], np.int64)
    lone = np.array([len(p) == 1 and raw[p[0]] == 100 for p, _ in want], bool)
    got_flat, got_off = sl.on_previous_stack(flat, off, lone)
    prev, expect = [], []
    for (p, _), is_lone in zip(want, lone):
        st = [raw[x] for x in p]
        if is_lone:
            st = prev + st
        else:
            prev = st
        expect.append(st)
    assert [got_flat[got_off[k]:got_off[k + 1]].tolist() for k in range(len(expect))] == expect


# ----------------------------------------------------------------------------- Safari
def naive_safari(doc):
    """(stacks of frame keys, durations µs, start µs, names by key) as speedscope's
    ``safari.ts``."""
    rec = doc["recording"]
    stacks, durs, names = [], [], {}
    prev_end = float("inf")
    for s, d in zip(rec["sampleStackTraces"], rec["sampleDurations"]):
        start = s["timestamp"] - d
        if start - prev_end > 0.002:
            stacks.append(())
            durs.append((start - prev_end) * 1e6)
        st = []
        for f in reversed(s["stackFrames"]):
            key = (f.get("name"), f.get("url"), f.get("line"), f.get("column"))
            url = f.get("url")
            names[key] = f.get("name") or (f"(anonymous {url.split('/')[-1]}:{f.get('line')})" if url
                                           else "(anonymous)")
            st.append(key)
        stacks.append(tuple(st))
        durs.append(d * 1e6)
        prev_end = s["timestamp"]
    first = rec["sampleStackTraces"][0]
    return stacks, durs, (first["timestamp"] - rec["sampleDurations"][0]) * 1e6, names


@pytest.mark.parametrize("rel", ["Safari/13.1/simple.html-recording.json", "source-maps/safari-13-webpack.json.gz"])
def test_safari_samples_match_the_naive_reading(rel):
    doc = read_json(SAMPLES / rel)
    tr = load_quiet(SAMPLES / rel)
    stacks, durs, start, names = naive_safari(doc)
    want = [(tuple(names[k] for k in p), a, b) for p, a, b in time_order(stacks, durs, start)]
    same_calls(calls_of(tr), want, what=rel)
    assert tr.thread_names == [doc["recording"]["displayName"]]
    assert tr.meta["format"] == "safari"


# ----------------------------------------------------------------------------- GHC
def naive_ghc(doc, field):
    cc = {c["id"]: f"{c['module']}.{c['label']}" for c in doc["cost_centres"]}
    stacks, weights = [], []

    def walk(node, prefix):
        st = prefix + (cc[node["id"]],)
        stacks.append(st)
        weights.append(node.get(field, 0))
        for c in node["children"]:
            walk(c, st)

    walk(doc["profile"], ())
    return stacks, weights


@pytest.mark.parametrize("measure", ["ticks", "alloc"])
def test_ghc_sample_matches_the_naive_left_heavy(measure):
    path = SAMPLES / "haskell/simple.prof"
    doc = read_json(path)
    tr = load_quiet(path, measure=measure)
    stacks, weights = naive_ghc(doc, measure)
    merged_matches(tr, stacks, weights, f"ghc {measure}")
    assert tr.meta["merged"] and tr.meta["x_unit"] == ("ticks" if measure == "ticks" else "bytes")
    assert tr.thread_names == [f"binary-trees {'time' if measure == 'ticks' else 'allocation'}"]
    assert float(tr.end[tr.depth == 0].max()) == doc["total_ticks"] if measure == "ticks" else True


def test_ghc_bad_measure_is_refused():
    with pytest.raises(ValueError, match="measure"):
        tracevis3d.load(SAMPLES / "haskell/simple.prof", measure="time")


def test_ghc_file_names_keep_source_locations():
    tr = load_quiet(SAMPLES / "haskell/simple.prof")
    f = tr.function_names.index("Main.main")
    assert tr.function_files[f].startswith("src/Main.hs")
    assert tr.function_files[tr.function_names.index("MAIN.MAIN")] == ""


# ----------------------------------------------------------------------------- V8 heap profile
def naive_heap(doc):
    stacks, weights = [], []

    def name(cf):
        n = cf.get("functionName")
        url = cf.get("url")
        return n or (f"(anonymous {url.split('/')[-1]}:{cf.get('lineNumber')})" if url else "(anonymous)")

    def key(cf):
        return (name(cf), cf.get("url"), cf.get("lineNumber"), cf.get("columnNumber"))

    todo = [(doc["head"], ())]
    while todo:
        node, prefix = todo.pop()
        st = prefix + (key(node["callFrame"]),)
        stacks.append(st)
        weights.append(node.get("selfSize", 0))
        todo.extend((c, st) for c in node["children"])
    return stacks, weights


@pytest.mark.parametrize("rel", ["Chrome/69/Heap-20181005T144546.heapprofile",
                                 "node/10.11.0/Heap-20181003T105432.heapprofile"])
def test_heap_profiles_match_the_naive_left_heavy(rel):
    doc = read_json(SAMPLES / rel)
    tr = load_quiet(SAMPLES / rel)
    stacks, weights = naive_heap(doc)
    # compared by name paths: frames with one name and different places are told apart by key,
    # so the twin's keys are mapped to names only where that keeps paths distinct
    by_name = [tuple(k[0] for k in st) for st in stacks]
    if len(set(by_name)) == len(set(stacks)):
        merged_matches(tr, by_name, weights, rel)
    else:
        assert abs(float(tr.end[tr.depth == 0].sum()) - sum(weights)) < 1e-6
    assert tr.meta["format"] == "heapprofile" and tr.meta["x_unit"] == "bytes"
    assert tr.function_names[tr.func[0]] == "(root)"


# ----------------------------------------------------------------------------- hostile files
@pytest.mark.parametrize("name,factory,expected", hp.CASES, ids=[c[0] for c in hp.CASES])
def test_hostile_profiles(tmp_path, name, factory, expected):
    p = tmp_path / "hostile.json"
    p.write_bytes(factory())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TraceWarning)
        try:
            tr = tracevis3d.load(p)
        except TraceFormatError as e:
            msg = str(e)
            assert "\n" not in msg and str(p) in msg, msg
            assert expected is not None, f"{name}: refused: {msg}"
            assert re.search(expected, msg), f"{name}: {msg!r} does not match {expected!r}"
            return
    warned = [str(w.message) for w in caught if issubclass(w.category, TraceWarning)]
    tr.check()
    if expected is not None:
        assert any(re.search(expected, m) for m in warned), f"{name}: loaded; warnings {warned} miss {expected!r}"
