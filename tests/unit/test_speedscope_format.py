"""speedscope JSON (`tracevis3d.io.speedscope`) against a naive reading written here from
speedscope's semantics (its ``file-format.ts`` and ``profile.ts``): evented profiles as the exact
open/close calls, sampled profiles laid end to end in time order (a frame continues while
consecutive stacks agree up to it, weight-0 samples skipped), ``bytes``/``none`` profiles as
Left Heavy; on speedscope's sample files, py-spy and pyinstrument recordings and generated
files.  The twins of `kernels.stacklists` (`stack_paths`, `evented_stacks`) are here too.

The naive twins (`time_order`, `events_calls`, `left_heavy`, `calls_of`) are in
tests/support/speedscope_twins.py, shared with the other profile tests."""
from __future__ import annotations

import json
import pathlib
import random
import shutil
import subprocess
import sys

import numpy as np
import pytest

import tracevis3d
from tracevis3d.model import TraceFormatError, TraceWarning

from speedscope_twins import calls_of, events_calls, left_heavy, load_quiet, read_json, same_calls, time_order

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "formats"
SAMPLES = DATA / "speedscope-samples"
UNIT_US = {"nanoseconds": 1e-3, "microseconds": 1.0, "milliseconds": 1e3, "seconds": 1e6}



# ----------------------------------------------------------------------------- naive speedscope
def naive_speedscope(doc):
    """Per profile kept: its calls [(path of frame indices, start µs, end µs)] read naively, and
    whether the file is on a clock.  Mirrors speedscope's importers profile by profile."""
    units = [p.get("unit") or "none" for p in doc["profiles"]]
    timed = units[0] in UNIT_US
    out = []
    for p, u in zip(doc["profiles"], units):
        if (u in UNIT_US) != timed:
            continue
        scale = UNIT_US.get(u, 1.0)
        if p["type"] == "evented":
            ev = [(e["type"], e["frame"], e["at"]) for e in p["events"]]
            if timed:
                out.append((p.get("name"), events_calls(ev, scale)))
                continue
            stack, paths, times = [], [], []
            for typ, f, at in ev:
                if typ == "O":
                    stack.append(f)
                else:
                    stack.pop()
                paths.append(tuple(stack))
                times.append(at * scale)
            end = max(p["endValue"] * scale, times[-1] if times else 0)
            w = [b - a for a, b in zip(times, times[1:] + [end])]
            calls = ("merged", paths, w)
        else:
            stacks = [tuple(s) for s in p["samples"]]
            w = p.get("weights") or [1] * len(stacks)
            if timed:
                calls = time_order(stacks, [x * scale for x in w], p.get("startValue", 0) * scale)
            else:
                calls = ("merged", stacks, w)
        out.append((p.get("name"), calls))
    return out, timed


def check_against_naive(path, trace=None):
    doc = read_json(path)
    trace = trace or load_quiet(path)
    want, timed = naive_speedscope(doc)
    assert trace.n_threads == len(want)
    assert bool(trace.meta.get("merged")) == (not timed)
    names = [fr.get("name") or "(anonymous)" for fr in doc["shared"]["frames"]]

    def named(calls):  # the twin works on frame indices (speedscope's frame keys); compared by name
        return [(tuple(names[f] for f in p), a, b) for p, a, b in calls]

    for t, (name, calls) in enumerate(want):
        if name:
            assert trace.thread_names[t] == name
        got = calls_of(trace, t)
        if timed:
            same_calls(got, named(calls), what=f"{path.name} profile {t}")
        else:
            _, stacks, w = calls
            same_calls(got, named(left_heavy(stacks, w, rank=lambda f: f)), what=f"{path.name} profile {t}")
    return trace


SPEEDSCOPE_FILES = ["speedscope/0.0.1/simple.speedscope.json", "speedscope/0.1.2/simple-sampled.speedscope.json",
                    "speedscope/0.6.0/two-sampled.speedscope.json"]


@pytest.mark.parametrize("rel", SPEEDSCOPE_FILES)
def test_speedscope_samples_match_the_naive_reading(rel):
    tr = check_against_naive(SAMPLES / rel)
    assert tr.meta["format"] == "speedscope"
    assert set(tr.function_names) >= {"a", "b", "c"}


def test_evented_none_unit_is_merged_in_samples():
    tr = load_quiet(SAMPLES / "speedscope/0.0.1/simple.speedscope.json")
    assert tr.meta["merged"] and tr.meta["x_unit"] == "samples"


def test_sampled_seconds_are_on_a_clock_in_microseconds():
    tr = load_quiet(SAMPLES / "speedscope/0.1.2/simple-sampled.speedscope.json")
    assert not tr.meta.get("merged")
    assert tr.meta["time_unit"] == "us"
    # the first root call spans all 14 s of weights
    assert float(tr.end[0] - tr.start[0]) == pytest.approx(14e6)


def test_out_of_order_events_are_refused_naming_the_event():
    with pytest.raises(TraceFormatError) as e:
        tracevis3d.load(SAMPLES / "speedscope/invalid/out-of-order-events.json")
    msg = str(e.value)
    assert "\n" not in msg and "out-of-order-events.json" in msg
    assert "profiles[0].events[6]" in msg and "'B'" in msg and "'A'" in msg


def test_incomplete_events_are_closed_at_end_value_with_a_warning():
    with pytest.warns(TraceWarning, match="unclosed_frames"):
        tr = tracevis3d.load(SAMPLES / "speedscope/invalid/incomplete-trace.json")
    assert len(tr) == 1 and tr.function_names[tr.func[0]] == "A"
    assert float(tr.end[0] - tr.start[0]) == 100.0
    assert tr.meta["repairs"]["unclosed_frames"]["count"] == 1


# ----------------------------------------------------------------------------- py-spy, pyinstrument
PROGRAM_FUNCS = {"main", "middle", "leaf_work", "sleeper"}


def test_pyspy_recording_matches_and_names_the_programs_functions():
    tr = check_against_naive(DATA / "pyspy" / "prog.speedscope.json")
    assert PROGRAM_FUNCS - {"sleeper"} <= set(tr.function_names)
    assert tr.meta["sampling_interval_us"] == pytest.approx(10_000)
    assert int(tr.thread_tid[0]) == 18335  # py-spy's "Thread 18335 ..." name
    assert "/prog.py" in tr.function_files[tr.function_names.index("leaf_work")]


def test_pyinstrument_recording_matches_and_names_the_programs_functions():
    tr = check_against_naive(DATA / "pyinstrument" / "prog.speedscope.json")
    assert PROGRAM_FUNCS <= set(tr.function_names)


def _record(tmp_path, argv, out):
    try:
        r = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        pytest.skip(f"{argv[0]} could not run here: {e}")
    if r.returncode != 0 or not out.is_file():
        pytest.skip(f"{pathlib.Path(argv[0]).name} could not record here (exit {r.returncode}): "
                    f"{(r.stderr or r.stdout).strip()[-300:]}")
    return out


def _tool(name):
    p = pathlib.Path(sys.executable).parent / name
    return str(p) if p.exists() else shutil.which(name)


def test_pyspy_live_recording_loads_with_the_functions_named(tmp_path):
    exe = _tool("py-spy")
    if not exe:
        pytest.skip("py-spy is not installed (pip install py-spy==0.4.3)")
    prog = tmp_path / "prog.py"
    prog.write_text((DATA / "pyspy" / "prog.py").read_text())
    out = _record(tmp_path, [exe, "record", "--format", "speedscope", "-o", str(tmp_path / "p.json"), "--",
                             sys.executable, str(prog)], tmp_path / "p.json")
    tr = check_against_naive(out)
    assert {"main", "middle", "leaf_work"} <= set(tr.function_names)


def test_pyinstrument_live_recording_loads_with_the_functions_named(tmp_path):
    exe = _tool("pyinstrument")
    if not exe:
        pytest.skip("pyinstrument is not installed (pip install pyinstrument==5.1.3)")
    prog = tmp_path / "prog.py"
    prog.write_text((DATA / "pyinstrument" / "prog.py").read_text())
    out = _record(tmp_path, [exe, "-r", "speedscope", "-o", str(tmp_path / "p.json"), str(prog)],
                  tmp_path / "p.json")
    tr = check_against_naive(out)
    assert PROGRAM_FUNCS <= set(tr.function_names), (sorted(set(tr.function_names)), out.read_text()[:2000])


# ----------------------------------------------------------------------------- generated files
def _frames(n):
    return [{"name": f"f{k % (n - 3)}", "file": f"m{k % 5}.py", "line": k} for k in range(n)]


def _doc(profiles, n_frames=12):
    return {"$schema": "https://www.speedscope.app/file-format-schema.json", "shared": {"frames": _frames(n_frames)},
            "profiles": profiles}


def _random_sampled(rng, n, n_frames, unit="milliseconds"):
    st, samples = [], []
    for _ in range(n):
        r = rng.random()
        if r < 0.3 and st:
            st = st[:rng.randrange(len(st))]
        elif r < 0.7:
            st = st + [rng.randrange(n_frames) for _ in range(rng.randrange(1, 4))]
        samples.append(list(st))
    weights = [rng.choice([0, 1, 2, 0.5, 3]) for _ in range(n)]
    return {"type": "sampled", "name": f"p{rng.random():.3f}", "unit": unit, "startValue": rng.choice([0, 100]),
            "endValue": 1e9, "samples": samples, "weights": weights}


def _random_evented(rng, n, n_frames, unit="microseconds"):
    ev, st, at = [], [], 0
    for _ in range(n):
        if st and rng.random() < 0.45:
            ev.append({"type": "C", "frame": st.pop(), "at": at})
        else:
            f = rng.randrange(n_frames)
            st.append(f)
            ev.append({"type": "O", "frame": f, "at": at})
        at += rng.choice([0, 0, 1, 5])
    while st:
        ev.append({"type": "C", "frame": st.pop(), "at": at})
    return {"type": "evented", "name": "ev", "unit": unit, "startValue": 0, "endValue": at + 3, "events": ev}


@pytest.mark.parametrize("seed", range(6))
def test_generated_files_match_the_naive_reading(tmp_path, seed):
    rng = random.Random(seed)
    unit = ["milliseconds", "seconds", "bytes", "none", "nanoseconds", "microseconds"][seed]
    profs = [_random_sampled(rng, rng.randrange(1, 300), 12, unit) for _ in range(2)]
    profs.append(_random_evented(rng, rng.randrange(2, 300), 12, unit))
    p = tmp_path / "g.speedscope.json"
    p.write_text(json.dumps(_doc(profs)))
    check_against_naive(p)


def test_bench_generator_file_matches_the_naive_reading(tmp_path):
    from bench.bench_sampled_load import speedscope_bytes

    p = tmp_path / "b.json"
    p.write_bytes(speedscope_bytes(3000, 3))
    tr = check_against_naive(p)
    assert tr.n_threads == 3 and tr.meta["n_samples"] >= 3000


def test_mixed_units_keep_the_first_profiles_kind(tmp_path):
    rng = random.Random(3)
    doc = _doc([_random_sampled(rng, 50, 12, "seconds"), _random_sampled(rng, 50, 12, "bytes")])
    p = tmp_path / "mixed.json"
    p.write_text(json.dumps(doc))
    tr = load_quiet(p)
    assert tr.n_threads == 1 and not tr.meta.get("merged")
    assert tr.meta["skipped"]["profiles of another unit"] == 1


def test_bytes_profile_is_merged_in_bytes(tmp_path):
    doc = _doc([{"type": "sampled", "name": "heap", "unit": "bytes", "startValue": 0, "endValue": 30,
                 "samples": [[0, 1], [0, 2], [0, 1]], "weights": [10, 5, 15]}])
    p = tmp_path / "bytes.json"
    p.write_text(json.dumps(doc))
    tr = load_quiet(p)
    assert tr.meta["merged"] and tr.meta["x_unit"] == "bytes"
    got = calls_of(tr)
    f0, f1, f2 = (d["name"] for d in doc["shared"]["frames"][:3])
    assert sorted(got) == sorted([((f0,), 0.0, 30.0), ((f0, f1), 0.0, 25.0), ((f0, f2), 25.0, 30.0)])


def test_frames_with_one_name_stay_apart_by_index(tmp_path):
    doc = {"shared": {"frames": [{"name": "f", "file": "a.py", "line": 1}, {"name": "f", "file": "a.py", "line": 1}]},
           "profiles": [{"type": "sampled", "unit": "seconds", "samples": [[0], [1]], "weights": [1, 1]}]}
    p = tmp_path / "dup.json"
    p.write_text(json.dumps(doc))
    tr = load_quiet(p)
    assert len(tr) == 2 and tr.n_functions == 2  # two frames, two calls: speedscope keys frames by index


def test_only_the_frames_used_become_functions(tmp_path):
    doc = {"$schema": "https://www.speedscope.app/file-format-schema.json",
           "shared": {"frames": [{"name": f"f{k}"} for k in range(50_000)] + [7, None]},
           "profiles": [{"type": "sampled", "unit": "seconds", "samples": [[3, 9], [3]], "weights": [1, 1]}]}
    p = tmp_path / "many.json"
    p.write_text(json.dumps(doc))
    tr = load_quiet(p)
    assert tr.function_names == ["f3", "f9"]


# ----------------------------------------------------------------------------- kernel twins
def _paths_brute(flat, offsets):
    return [tuple(flat[offsets[k]:offsets[k + 1]]) for k in range(len(offsets) - 1)]


def _node_path(parent, frame, x):
    p = []
    while x >= 0:
        p.append(int(frame[x]))
        x = int(parent[x])
    return tuple(reversed(p))


@pytest.mark.parametrize("seed", range(8))
def test_stack_paths_kernel_against_brute_force(seed):
    from tracevis3d.kernels.stacklists import stack_paths

    rng = random.Random(seed)
    lists, st = [], []
    for _ in range(rng.randrange(0, 400)):
        r = rng.random()
        if r < 0.3 and st:
            st = st[:rng.randrange(len(st))]
        elif r < 0.6:
            st = st + [rng.randrange(5) for _ in range(rng.randrange(1, 5))]
        elif r < 0.7:
            st = [rng.randrange(5) for _ in range(rng.randrange(0, 6))]
        lists.append(list(st))
    offsets = np.zeros(len(lists) + 1, np.int64)
    offsets[1:] = np.cumsum([len(x) for x in lists]) if lists else []
    flat = np.array([f for x in lists for f in x], np.int64)
    parent, frame, stack = stack_paths(flat, offsets)
    want = _paths_brute(flat.tolist(), offsets.tolist())
    got = [_node_path(parent, frame, int(s)) for s in stack]
    assert got == want
    paths = [_node_path(parent, frame, i) for i in range(parent.size)]
    assert len(set(paths)) == len(paths)  # each frame path one node
    assert all(parent[i] < i for i in range(parent.size))  # numbered by first appearance


@pytest.mark.parametrize("seed", range(8))
def test_evented_stacks_kernel_against_brute_force(seed):
    from tracevis3d.kernels import stacklists as sl

    rng = random.Random(seed)
    is_open, frame, st = [], [], []
    for _ in range(rng.randrange(1, 300)):
        if st and rng.random() < 0.45:
            f = st.pop() if rng.random() < 0.97 or seed < 4 else 99
            is_open.append(False)
            frame.append(f)
        else:
            f = rng.randrange(6)
            st.append(f)
            is_open.append(True)
            frame.append(f)
    if seed % 3 == 2 and is_open:  # a close with nothing open
        is_open.append(False)
        frame.append(0)
        st = []
    parent, node_frame, after, status, where, left = sl.evented_stacks(np.array(is_open), np.array(frame, np.int64))
    # brute force
    stack, want_after, want_status, want_where = [], [], sl.OK, -1
    for k, (o, f) in enumerate(zip(is_open, frame)):
        if o:
            stack.append(f)
        elif not stack:
            want_status, want_where = sl.CLOSE_EMPTY, k
            break
        elif stack[-1] != f:
            want_status, want_where = sl.CLOSE_MISMATCH, k
            break
        else:
            stack.pop()
        want_after.append(tuple(stack))
    assert (status, where) == (want_status, want_where)
    if status == sl.OK:
        assert [(_node_path(parent, node_frame, int(a)) if a >= 0 else ()) for a in after] == want_after
        assert left == len(stack)
