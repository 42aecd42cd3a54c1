"""Profiles recorded here, now, by the real tools (Chromium, node): each test runs the tool on a
small page or script and loads what it wrote (`tracevis3d.io.chrome_profile`, `io.perfetto`,
`io.chrome`).  A tool that is not installed, or that writes nothing here, skips its test.
Their twins on hand-made and shipped inputs are in tests/unit/test_chrome_profile.py and
tests/unit/test_perfetto.py."""
import os
import shutil
import subprocess
import warnings

import numpy as np
import pytest

import tracevis3d
from tracevis3d.io.chrome_profile import LANE_SUFFIX
from tracevis3d.model import TraceWarning


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed (Debian: apt-get install "
                                                              "chromium): the real V8 profile is recorded by it")
def test_a_real_chromium_v8_profile(tmp_path):
    """Chromium tracing its own page load with V8's CPU profiler (the page of record_traces'
    chromium_page: fib in a timeout and in a worker, a sort, a layout): the worker's and the
    page's JavaScript are lanes of sampled calls, fib's recursion deep in them.  (Two renderers
    here: both main threads' lanes have the same name.)"""
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
    try:
        from record_traces import CHROMIUM_CATEGORIES, CHROMIUM_PAGE
    finally:
        sys.path.pop(0)
    page = tmp_path / "page.html"
    page.write_text(CHROMIUM_PAGE)
    out = tmp_path / "trace.json"
    cmd = ["chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={tmp_path / 'profile'}", f"--trace-startup={CHROMIUM_CATEGORIES}",
           "--trace-startup-format=json", f"--trace-startup-file={out}", "--trace-startup-duration=4",
           "--virtual-time-budget=3000", f"--screenshot={tmp_path / 'page.png'}", f"file://{page}"]
    subprocess.run(cmd, capture_output=True, timeout=120)
    if not out.exists():
        pytest.skip("chromium wrote no trace here")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = tracevis3d.load(str(out))
    t.check()
    lanes = [k for k, nm in enumerate(t.thread_names) if nm.endswith(LANE_SUFFIX)]  # (two renderers: same names)
    assert lanes, t.meta.get("skipped")
    names = set()
    deepest = 0
    for k in lanes:
        a, b = t.thread_ranges()[k]
        names |= {t.function_names[f] for f in np.unique(t.func[a:b])}
        if b > a:
            deepest = max(deepest, int(t.depth[a:b].max()) + 1)
    assert {"fib", "sortWork", "layoutWork"} <= names and deepest >= 15, (names, deepest)
    assert "DedicatedWorker thread" + LANE_SUFFIX in [t.thread_names[k] for k in lanes]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed: the real .cpuprofile is recorded "
                                                          "by node --cpu-prof")
def test_a_real_node_cpu_profile(tmp_path):
    """node --cpu-prof on a script (fib, JSON round trips, a sort, a recursive tree): its
    functions as calls, fib's recursion and the tree's several levels deep, GC on stacks."""
    js = tmp_path / "work.js"
    js.write_text("""
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
function parseAll(k) { let s = 0; for (let i = 0; i < k; i++) s += JSON.parse(JSON.stringify({a: [i]})).a[0]; return s; }
function sortMany() { const a = []; for (let i = 0; i < 300000; i++) a.push(Math.sin(i)); return a.sort((x, y) => x - y)[0]; }
class Tree { constructor(d) { this.kids = d > 0 ? [new Tree(d - 1), new Tree(d - 1)] : []; }
             size() { return 1 + this.kids.reduce((s, k) => s + k.size(), 0); } }
let total = 0;
for (let r = 0; r < 3; r++) { total += fib(27) + parseAll(20000) + sortMany() + new Tree(15).size(); }
console.log(total);
""")
    # sampled every 100 µs (node's default, 1 ms, can miss a short function on a busy machine)
    subprocess.run(["node", "--cpu-prof", "--cpu-prof-interval", "100", f"--cpu-prof-dir={tmp_path}", str(js)],
                   check=True, capture_output=True, timeout=120, cwd=tmp_path)
    prof = next(tmp_path.glob("*.cpuprofile"))
    t = tracevis3d.load(str(prof))
    t.check()
    names = set(t.function_names[f] for f in np.unique(t.func))
    assert {"fib", "parseAll", "sortMany", "size"} <= names, names
    fib = [i for i in range(len(t)) if t.function_names[t.func[i]] == "fib"]
    assert max(int(t.depth[i]) for i in fib) >= 8
    mods = {tracevis3d.names.parse_function_name(t.function_names[f], t.function_files[f],
                                                 int(t.function_lines[f])).module for f in np.unique(t.func)}
    assert any(m == "work" or m.endswith("/work") for m in mods), mods  # the script's module


def test_recorded_chromium_proto_and_json_both_load(tmp_path):
    """Chromium recorded now, once as proto and once as JSON (the same kind of run): both load with
    threads and processes named, calls, flows and async slices, and the proto's counters (Chromium's
    JSON writes a thread's time as tts/tdur, no counter events, in these categories)."""
    from tools.record_perfetto import chromium_path, record_chromium

    if chromium_path() is None:
        pytest.skip("chromium is not installed (Debian: apt-get install chromium)")
    proto = record_chromium(str(tmp_path / "c.pftrace"), "proto")
    js = record_chromium(str(tmp_path / "c.json"), "json")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        a = tracevis3d.load(proto)
        b = tracevis3d.load(js)
    assert a.meta["format"] == "perfetto" and b.meta["format"].startswith("chrome")
    for tr in (a, b):
        assert len(tr) > 0 and "CrBrowserMain" in tr.thread_names
        assert "Browser" in tr.process_names and "Renderer" in tr.process_names
        assert tr.flow_id.size > 0 and tr.async_start.size > 0
    assert a.counter_ts.size > 0  # thread time and memory counters: the JSON form writes tts/tdur instead
    assert len(set(a.function_names) & set(b.function_names)) > 50
