"""Firefox Profiler files (`tracevis3d.io.firefox`) against a naive reading written here: Gecko
profiles (a recording made with Firefox ESR, the Firefox Profiler's fixtures, speedscope's
DevTools exports with speedscope's "script frames only" rule) and processed profiles (the
Firefox Profiler's fixtures of versions 0-68, generated files): every thread's calls in time
order, each sample lasting until the next and the last one sampling interval; markers as
instants (the twins: tests/support/gecko_twins.py; a profile recorded now by Firefox: tests/realtraces/
test_recorded_firefox.py).  The twin of `kernels.stacklists.nearest_kept` is here too."""
from __future__ import annotations

import json
import pathlib
import random

import numpy as np
import pytest

import tracevis3d

from gecko_twins import check, naive_gecko, naive_processed
from speedscope_twins import load_quiet
from tracevis3d.model import TraceFormatError

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "formats"
SAMPLES = DATA / "speedscope-samples"
FIREFOX = DATA / "firefox"


DEVTOOLS = ["Firefox/59/simple-firefox.json", "Firefox/61/recursion.json", "Firefox/63/simple-firefox.json",
            "source-maps/firefox-79-webpack.json.gz"]


@pytest.mark.parametrize("rel", DEVTOOLS)
def test_devtools_exports_match_speedscopes_script_frames(rel):
    tr = check(SAMPLES / rel, lambda d: naive_gecko(d, js_only=True))
    assert tr.meta["format"] == "gecko" and tr.meta["js_only"]
    assert tr.meta["sampling_interval_us"] == 1000.0
    assert tr.thread_names == ["GeckoMain"]


@pytest.mark.parametrize("rel", DEVTOOLS[:2])
def test_devtools_exports_every_frame_when_asked(rel):
    tr = check(SAMPLES / rel, lambda d: naive_gecko(d, js_only=False), js_only=False)
    assert not tr.meta["js_only"]
    assert "(root)" in tr.function_names


def test_recursion_sample_names_its_functions():
    tr = load_quiet(SAMPLES / "Firefox/61/recursion.json")
    assert {"main", "alpha", "beta"} <= set(tr.function_names)
    f = tr.function_names.index("alpha")
    assert tr.function_files[f].endswith("recursion.js") and tr.function_lines[f] == 1
    assert len(tr.instant_ts) == 7  # the markers


GECKO = ["profiler-gecko-1.json", "gecko-worker.json.gz"]


@pytest.mark.parametrize("name", GECKO)
def test_gecko_profiles_match_the_naive_reading(name):
    tr = check(FIREFOX / name, lambda d: naive_gecko(d, js_only=False))
    assert tr.meta["format"] == "gecko" and not tr.meta["js_only"]


def test_recorded_gecko_profile_has_both_workers_and_their_script():
    tr = load_quiet(FIREFOX / "gecko-worker.json.gz")
    assert tr.thread_names == ["DOM Worker", "DOM Worker"]
    assert len(set(tr.thread_pid.tolist())) == 2  # the parent process and the content process
    assert tr.process_names[1] == "file:// Content"
    assert {"fib", "sortMany"} <= set(tr.function_names)
    f = tr.function_names.index("fib")
    assert tr.function_files[f].startswith("blob:") and tr.function_lines[f] == 2
    assert len(tr.instant_ts) > 100 and all(tr.instant_scope == ord("t"))
    # unsymbolicated native frames: named by the library of the (sub)profile's ``libs`` holding
    # them, the library their file (the Firefox Profiler's resource)
    in_lib = [k for k, nm in enumerate(tr.function_names) if nm.startswith("libxul.so+0x")]
    assert len(in_lib) > 50 and {tr.function_files[k] for k in in_lib} == {"libxul.so"}
    js = check(FIREFOX / "gecko-worker.json.gz", lambda d: naive_gecko(d, js_only=True), js_only=True)
    used = {js.function_names[f] for f in set(js.func.tolist())}
    assert "fib" in used and not any(n.startswith("0x") for n in used)


PROCESSED = ["profiler-processed-1.json", "profiler-processed-3.json", "profiler-unsymbolicated.json",
             "profiler-argument-values.json", "profiler-single.json"]


@pytest.mark.parametrize("name", PROCESSED)
def test_processed_profiles_match_the_naive_reading(name):
    tr = check(FIREFOX / name, naive_processed)
    assert tr.meta["format"] == "firefox"


def test_processed_js_only_keeps_the_script_functions():
    tr = check(FIREFOX / "profiler-argument-values.json", lambda d: naive_processed(d, js_only=True), js_only=True)
    assert {tr.function_names[f] for f in set(tr.func.tolist())} <= {"foo", "bar", "baz", "quux"} | \
        {n for n in tr.function_names if "(" not in n}


def test_processed_version_58_files_and_markers():
    tr = load_quiet(FIREFOX / "profiler-argument-values.json")
    f = tr.function_names.index("foo")
    assert tr.function_files[f] and tr.function_lines[f] == 19
    assert len(tr.instant_ts) == 13 and "DOMEvent" in tr.instant_names


def test_bench_generator_processed_file_matches(tmp_path):
    from bench.bench_sampled_load import firefox_bytes

    p = tmp_path / "ff.json"
    p.write_bytes(firefox_bytes(4000, 3))
    tr = check(p, naive_processed)
    assert tr.n_threads == 3


def _shared_v66(doc):
    """A processed profile of the per-thread form rewritten as version 66: tables in ``shared``
    (thread 0's), ``prefixOffset``, ``timeDeltas``."""
    th = doc["threads"][0]
    st = th["stackTable"]
    off = [0 if p is None else i - p for i, p in enumerate(st["prefix"])]
    shared = {"stackTable": {"frame": st["frame"], "prefixOffset": off, "length": len(off)},
              "frameTable": th["frameTable"], "funcTable": th["funcTable"], "stringArray": doc["shared"]["stringArray"]}
    t = th["samples"]["time"]
    th2 = {k: v for k, v in th.items() if k not in ("stackTable", "frameTable", "funcTable")}
    th2["samples"] = dict(th["samples"], timeDeltas=[t[0]] + [b - a for a, b in zip(t, t[1:])])
    del th2["samples"]["time"]
    return {"meta": dict(doc["meta"], preprocessedProfileVersion=66), "shared": shared, "threads": [th2]}


def test_processed_version_66_shared_tables(tmp_path):
    from bench.bench_sampled_load import firefox_bytes

    doc = _shared_v66(json.loads(firefox_bytes(3000, 1)))
    p = tmp_path / "v66.json"
    p.write_text(json.dumps(doc))
    check(p, naive_processed)


# ----------------------------------------------------------------------------- errors and the kernel
def test_not_a_firefox_profile_is_refused(tmp_path):
    p = tmp_path / "x.json"
    p.write_text(json.dumps({"meta": {"interval": 1}, "libs": []}))
    with pytest.raises(TraceFormatError, match=r"x\.json: .*no 'threads'"):
        tracevis3d.load(p)


def _nearest_brute(parent, keep):
    n = len(parent)
    out = []
    for s in range(n):
        x, seen = s, set()
        while True:
            if keep[x]:
                break
            seen.add(x)
            p = parent[x]
            if p < 0 or p >= n or p in seen:
                x = -1
                break
            x = p
        out.append(x)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_nearest_kept_kernel_against_brute_force(seed):
    from tracevis3d.kernels.stacklists import nearest_kept

    rng = random.Random(seed)
    n = rng.randrange(1, 200)
    parent = [rng.randrange(-1, i) if i and rng.random() < 0.95 else -1 for i in range(n)]
    if seed % 2:  # forward links (still a forest)
        perm = list(range(n))
        rng.shuffle(perm)
        inv = {p: i for i, p in enumerate(perm)}
        parent = [perm[parent[inv[i]]] if parent[inv[i]] >= 0 else -1 for i in range(n)]
    keep = [rng.random() < 0.5 for _ in range(n)]
    got = nearest_kept(np.array(parent, np.int64), np.array(keep)).tolist()
    assert got == _nearest_brute(parent, keep)


def test_nearest_kept_kernel_cuts_cycles():
    from tracevis3d.kernels.stacklists import nearest_kept

    got = nearest_kept(np.array([1, 2, 0, 2], np.int64), np.array([False, True, False, False])).tolist()
    assert got[1] == 1 and got[0] == 1 and got[3] in (1, -1) and got[2] in (1, -1)


def test_an_unsymbolicated_processed_profile_names_addresses_by_their_library():
    """A processed profile without symbols (samply before symbolication): each function is an
    address whose ``resource`` is its library; named "library+0xaddress", the library its file."""
    tr = load_quiet(FIREFOX / "profiler-unsymbolicated.json")
    used = {(tr.function_names[f], tr.function_files[f]) for f in set(tr.func.tolist())}
    assert ("a.out+0x3d33", "a.out") in used and ("dyld+0x6153", "dyld") in used
    assert not [n for n, _ in used if n.startswith("0x")], used
