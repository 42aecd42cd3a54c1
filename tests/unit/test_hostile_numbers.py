"""Issue 78's reader cases (tests/support/hostile_numbers.py): numbers from a file read as ASCII
digits of bounded length in range (`tracevis3d.filenumbers`), lanes capped at
``Limits.max_lanes_read``, a cProfile dump whose times reach the largest float, and nested code
objects read in linear time.  Each case: a one-line `TraceFormatError` naming the file, or a
checked trace; none a traceback, none a hang."""
from __future__ import annotations

import re

import pytest

import hostile_numbers as hn
import tracevis3d
from time_limits import time_limit
from tracevis3d import filenumbers as fnum
from tracevis3d.model import TraceFormatError

pytestmark = pytest.mark.timeout(900)


@pytest.mark.parametrize("name", [c[0] for c in hn.CASES])
def test_hostile(name, tmp_path):
    """A one-line error that starts with the file's path and matches, or a checked trace (with
    the repair named); a number spelled in other digits than ASCII is never read as its value
    (12), and no number past int64 reaches the trace."""
    _, factory, expected, options = next(c for c in hn.CASES if c[0] == name)
    p = tmp_path / f"{name}.bin"
    p.write_bytes(factory())
    with time_limit(300):
        try:
            trace = tracevis3d.load(p, warn=False, **options)
            err = None
        except TraceFormatError as e:
            err = str(e)
    if expected is None or isinstance(expected, tuple):
        assert err is None, err
        trace.check()
        assert len(trace) > 0
        if expected is not None:
            assert expected[1] in trace.meta.get("repairs", {}), (name, trace.meta.get("repairs"))
        if name.endswith(("_superscript", "_arabic", "_fullwidth")):
            assert 12 not in trace.function_lines.tolist() and 12 not in trace.thread_tid.tolist() \
                and 12 not in trace.thread_pid.tolist(), name
        for k in ("total_ticks", "total_alloc"):
            v = trace.meta.get(k)
            assert v is None or (isinstance(v, int) and 0 <= v < 2 ** 63), (k, v)
    else:
        assert err is not None, f"{name}: loaded {len(trace)} calls; expected an error matching {expected!r}"
        assert "\n" not in err and err.startswith(f"{p}: "), err
        assert re.search(expected, err), err


def test_ascii_numbers_only():
    assert fnum.read_int("12") == 12 and fnum.read_int(b"12") == 12 and fnum.read_int("-3") == -3
    for bad in (hn.SUPERSCRIPT, hn.ARABIC_INDIC, hn.FULLWIDTH, hn.HUGE, hn.HUGE_5000, " 1", "1 ", "", "1_0", "0x1",
                "12\n", None, 12):
        assert fnum.read_int(bad) is None, bad
    assert fnum.read_int("5", 0, 4) is None and fnum.read_int("4", 0, 4) == 4 and fnum.read_int("-1", 0) is None
    assert fnum.read_int("0x1f", base=16) == 31 and fnum.read_int("f" * 17, base=16) is None
    assert fnum.read_line("2147483647") == 2 ** 31 - 1 and fnum.read_line("2147483648") == -1
    assert fnum.read_id("9" * 19) == int("9" * 19) % fnum.ID_MODULUS and fnum.read_id("9" * 20) is None
    assert fnum.read_id("0x7f", hex_ok=True) == 127 and fnum.read_id("7f", hex_ok=True) == 127
    assert fnum.read_id("7f") is None and fnum.read_id("f" * 5000, hex_ok=True) is None
    assert fnum.is_digits("0123") and not fnum.is_digits("²") and not fnum.is_digits("١") and not fnum.is_digits("")
    assert fnum.read_float("1.5") == 1.5 and fnum.read_float("-2e3") == -2000.0 and fnum.read_float(".5") == 0.5
    for bad in ("nan", "NaN", "inf", "-Infinity", "1e309", "1_0", "١.٥", " 1", "1e99999", "0." + "0" * 100 + "1"):
        assert fnum.read_float(bad) is None, bad
    assert fnum.read_float("1e308") == 1e308 and fnum.read_float("1e308", 1e21) is None


def test_nested_code_objects_are_read_once_per_layout(monkeypatch):
    """Code objects nested 13 deep whose innermost no layout reads: each is read at most once
    per candidate layout (it was read once per layout per try of the level above: 3^13)."""
    from tracevis3d.io import safe_marshal

    reads = []
    real = safe_marshal._Marshal._code_fields

    def counted(self, at, layout, depth):
        reads.append(at)
        return real(self, at, layout, depth)

    monkeypatch.setattr(safe_marshal._Marshal, "_code_fields", counted)
    for broken in (True, False):
        reads.clear()
        data = hn.nested_code_dump(13, broken)
        try:
            safe_marshal.read_marshal(data, "n.prof")
        except TraceFormatError as e:
            assert broken and "a code object's code that is a NoneType" in str(e)
        assert len(reads) <= len(safe_marshal._CODE_LAYOUTS) * 14, len(reads)


def test_a_time_past_the_limit_is_zero_and_named(tmp_path):
    """One root of 1e300 s beside a normal program: its time is 0 (repair pstats_number, naming
    max_abs_time), the program is drawn as it is."""
    p = tmp_path / "huge.prof"
    p.write_bytes(hn.pstats_one_huge_root())
    t = tracevis3d.load(p, warn=False)
    rep = t.meta["repairs"]["pstats_number"]
    assert rep["count"] == 1 and "past 1e+15 s" in rep["action"]
    assert t.meta["pstats_root_total_s"] == pytest.approx(2.0)


# ----------------------------------------------------------------------------- lanes past max_lanes_read
def _perf_uneven(n_threads: int) -> bytes:
    """Thread k (tid 100 + k) samples 1 + (7k mod 5) times, on stacks that differ by thread."""
    ev = []
    t = 0
    for k in range(n_threads):
        for j in range(1 + (7 * k) % 5):
            t += 1
            leaf = ["leaf", "work", "idle"][(k + j) % 3]
            ev.append(f"prog {100 + k}  10.{t:06d}:    1000 cpu-clock:\n\t    11ad {leaf}+0x34 (/p)\n"
                      f"\t    1348 main+0x62 (/p)\n\n")
    return "".join(ev).encode()


def _same_trace(a, b):
    for k in ("func", "start", "end", "depth", "parent", "thread", "thread_pid", "thread_tid"):
        assert getattr(a, k).tolist() == getattr(b, k).tolist(), k
    assert a.thread_names == b.thread_names
    assert [a.function_names[f] for f in a.func] == [b.function_names[f] for f in b.func]


def test_perf_threads_past_the_cap_are_one_lane_as_the_builder_merges_them(tmp_path, monkeypatch):
    """perf script caps its lane ids before it splits its stack table (`lanes.cap_lane_ids`):
    the same trace as the builder's merge of every thread's profile (`lanes.cap_profiles`),
    the heaviest threads kept, the rest one lane "other threads", every sample in it."""
    from tracevis3d.io import lanes, perf_script

    p = tmp_path / "t.perf.txt"
    p.write_bytes(_perf_uneven(12))
    t = tracevis3d.load(p, warn=False, max_lanes_read=4)
    assert t.thread_names[-1] == lanes.OTHER_LANES and t.n_threads == 4
    counts = [1 + (7 * k) % 5 for k in range(12)]
    kept = sorted(sorted(range(12), key=lambda k: (-counts[k], k))[:3])
    assert t.thread_tid.tolist()[:3] == [100 + k for k in kept]
    assert t.meta["n_samples"] == sum(counts)
    assert t.meta["repairs"]["lanes_capped"]["count"] == 9 and "max_lanes_read" in t.meta["repairs"]["lanes_capped"]["action"]
    monkeypatch.setattr(perf_script, "cap_lane_ids", lambda order, nl, sl, lim, rep, what="threads": (order, nl, sl))
    u = tracevis3d.load(p, warn=False, max_lanes_read=4)
    _same_trace(t, u)
    assert u.meta["repairs"]["lanes_capped"]["count"] == 9


def _speedscope_many(unit: str, n: int) -> bytes:
    import json
    import random

    rng = random.Random(5)
    frames = [{"name": f"f{k}"} for k in range(6)]
    profiles = []
    for k in range(n):
        m = rng.randint(1, 6)
        if k % 3 == 2:  # evented: balanced, values going up from startValue
            at, events = rng.choice([0, 3, 10]), []
            for _ in range(m):
                f = rng.randrange(1, 6)
                events += [{"type": "O", "frame": 0, "at": at}, {"type": "O", "frame": f, "at": at + 1},
                           {"type": "C", "frame": f, "at": at + 2}, {"type": "C", "frame": 0, "at": at + 2}]
                at += rng.choice([2, 3])
            profiles.append({"type": "evented", "name": f"p{k}", "unit": unit, "startValue": 0,
                             "endValue": rng.choice([at, at + 5]), "events": events})
            continue
        profiles.append({"type": "sampled", "name": f"p{k}", "unit": unit, "startValue": rng.choice([0, 3, 10]),
                         "endValue": 100, "samples": [[0] + rng.sample(range(1, 6), rng.randint(0, 3))
                                                       for _ in range(m)],
                         "weights": [rng.choice([0, 1, 2, 5]) for _ in range(m)]})
    return json.dumps({"$schema": "https://www.speedscope.app/file-format-schema.json",
                       "shared": {"frames": frames}, "profiles": profiles}).encode()


@pytest.mark.parametrize("unit", ["milliseconds", "none"])
def test_speedscope_profiles_past_the_cap_read_together_as_the_builder_merges_them(unit, tmp_path, monkeypatch):
    """speedscope reads the sampled profiles past max_lanes_read in one pass (`_sampled_rest`), the
    evented ones in another (`_evented_rest`): the same trace as reading each and merging them
    as the builder merges lanes (`lanes.merge_profiles`), on the clock (each profile's samples
    from its own startValue) and merged."""
    from tracevis3d.io import lanes, speedscope

    p = tmp_path / "s.speedscope.json"
    p.write_bytes(_speedscope_many(unit, 40))
    made = []
    for name in ("_sampled_rest", "_evented_rest"):  # both batches read (none fell back to one by one)
        real = getattr(speedscope, name)
        monkeypatch.setattr(speedscope, name, lambda *a, real=real, **k: made.append(real(*a, **k)) or made[-1])
    t = tracevis3d.load(p, warn=False, max_lanes_read=5)
    assert len(made) == 2 and all(x is not None for x in made), made
    assert t.n_threads == 5 and t.thread_names[-1] == lanes.OTHER_LANES
    assert t.meta["repairs"]["lanes_capped"]["count"] == 36
    monkeypatch.setattr(speedscope, "_sampled_rest", lambda *a, **k: None)
    monkeypatch.setattr(speedscope, "_evented_rest", lambda *a, **k: None)
    u = tracevis3d.load(p, warn=False, max_lanes_read=5)
    assert u.meta["repairs"]["lanes_capped"]["count"] == 36
    if unit == "none":
        _same_trace(t, u)
    else:  # the lane's last call ends one sampling step after its last sample: the step may differ
        last = t.end == t.end[t.thread == 4].max()
        t.end[last] = u.end[last]
        _same_trace(t, u)


def test_gecko_threads_past_the_cap_are_left_out_unread(tmp_path):
    """A Gecko profile of more threads than max_lanes_read: the threads of the most samples are
    read, the others left out (reading each costs its own tables), the repair names the cap."""
    import json

    doc = json.loads(hn.gecko_threads(6))
    for k, th in enumerate(doc["threads"]):
        th["samples"]["data"] = [[2, float(j)] for j in range(1 + (5 * k) % 4)]
    p = tmp_path / "g.json"
    p.write_text(json.dumps(doc))
    t = tracevis3d.load(p, warn=False, max_lanes_read=3)
    counts = [1 + (5 * k) % 4 for k in range(6)]
    kept = sorted(sorted(range(6), key=lambda k: (-counts[k], k))[:3])
    assert t.thread_names == [f"T{k}" for k in kept]
    r = t.meta["repairs"]["lanes_capped"]
    assert r["count"] == 3 and "max_lanes_read" in r["action"] and f"({sum(counts) - sum(counts[k] for k in kept)} samples)" \
        in r["action"]


@pytest.mark.parametrize("merged", [False, True])
def test_the_builder_merges_the_lightest_profiles_into_one_lane(merged):
    """`stacks.timed_trace` and `merged_trace` keep max_lanes_read - 1 profiles (the most samples, or
    in a merged trace the most weight) and merge the rest into "other threads": every sample is
    still there, the merged trace's weight is the same, parents and stacks out of range in a
    merged profile are taken as the builder takes them."""
    import numpy as np

    from tracevis3d.io import lanes, stacks
    from tracevis3d.io.limits import Limits

    frames = stacks.FrameTable()
    for nm in ("main", "a", "b", "c"):
        frames.add(nm)
    profiles = []
    for k in range(7):
        n = 1 + (3 * k) % 5
        profiles.append(stacks.StackProfile(
            thread_name=f"t{k}", stack_parent=np.array([-1, 0, 0, 7 if k == 3 else 1]),
            stack_frame=np.array([0, 1, 2, 3]), sample_stack=np.array([(j % 4) if k != 5 else 9 for j in range(n)]),
            sample_time=None if merged else np.arange(n) * 10.0 + k, sample_weight=np.full(n, 1.0 + k), tid=k + 1))
    build = stacks.merged_trace if merged else stacks.timed_trace
    kw = dict(unit="samples") if merged else {}
    lim = Limits(max_lanes_read=3)
    t = build(frames, profiles, source="x", fmt="t", limits=lim, input_bytes=1000, warn=False, **kw)
    assert t.thread_names[-1] == lanes.OTHER_LANES and t.n_threads == 3
    assert t.meta["repairs"]["lanes_capped"]["count"] == 5
    assert t.meta["n_samples"] == sum(p.sample_stack.size for p in profiles)
    weight = [float(p.sample_weight.sum()) for p in profiles] if merged else [p.sample_stack.size for p in profiles]
    kept = sorted(sorted(range(7), key=lambda k: (-weight[k], k))[:2])
    assert t.thread_tid.tolist()[:2] == [k + 1 for k in kept]
    assert 5 not in kept and t.meta["repairs"]["sample_stack_range"]["count"] == 1  # its one sample, merged
    if merged:
        u = build(frames, profiles, source="x", fmt="t", limits=Limits(), input_bytes=1000, warn=False, **kw)
        assert t.meta["total_weight"] == pytest.approx(u.meta["total_weight"])


# ----------------------------------------------------------------------------- the fuzzer's numeric edges
def test_the_structured_fuzzer_writes_numbers_json_cannot():
    """A number the structured fuzzer puts in a JSON tree as raw text (5,000 digits, NaN, -0, a
    tree nested thousands deep) is in the bytes as that text, whichever way the tree is written."""
    import json
    import random

    import fuzz_structured as fs

    tree = {"a": fs._RAW.format("9" * 5000), "b": [fs._RAW.format("-Infinity"), "x\ud800"],
            "c": fs._RAW.format(json.dumps({"n": "é\"q"})[:-1] + ',"children":[]}')}
    for seed in range(10):  # ensure_ascii or raw UTF-8
        out = fs._json_bytes(tree, random.Random(seed))
        assert b'"a":' + b"9" * 5000 in out.replace(b" ", b"") and b"[-Infinity," in out.replace(b" ", b"")
        assert b'"c":{"n":"' in out.replace(b" ", b"") and b"RAW:" not in out


def test_the_structured_fuzzer_mutates_pstats_dumps():
    """The marshal family: every mutation of a recording gives bytes (the reader's to judge); the
    code-object mutation nests code objects and sometimes breaks the innermost."""
    import random

    import fuzz_structured as fs

    dumps = [(p, d) for p, k, d in fs.seeds() if k == "marshal"]
    assert len(dumps) >= 6, [str(p) for p, _ in dumps]
    labels = set()
    for seed in range(60):
        rng = random.Random(seed)
        _p, data = dumps[seed % len(dumps)]
        out, label = fs.mutate_marshal(data, rng)
        assert isinstance(out, bytes) and out and label.startswith("marshal"), label
        labels.add(label.split()[1] if " " in label else label)  # "marshal(unreadable)": the Python 2 dump
    assert {"time", "count", "line", "code"} <= labels, labels
