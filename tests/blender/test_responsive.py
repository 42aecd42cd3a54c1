"""First use: bad input fails before numba, pre-built kernels move with the install, honest
progress on a cold cache (issue 10).  The timings themselves are in bench/bench_responsive.py.
"""
import gzip
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from tracevis3d import TraceFormatError
from tracevis3d import kernel_cache as kc
from tracevis3d.io.sniff import check_trace_file

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORRUPT = b'{"traceEvents": [{"ph": "X", "name": "main", "ts": 0, "dur": '


@pytest.mark.parametrize("content, message", [
    (b"", r"empty file, no trace events \(it ends at byte 0 \(line 1, column 1\)\)"),
    (b" \n\t ", r"empty file, no trace events \(it ends at byte 4 \(line 2, column 3\)\)"),
    (b"hello world", r"not a trace in any format TraceVis3D reads \(tracevis3d formats lists them\) at byte 0 "
                     r"\(line 1, column 1\): 'hello world'"),
    (b"\xef\xbb\xbf \n <html>", r"lists them\) at byte 6 \(line 2, column 2\)"),
    (b'{"a": 1}', r"without a 'traceEvents' array \(the object ends at byte 7 \(line 1, column 8\)\)"),
    (b'{"traceEvents": 5}', "'traceEvents' is a JSON int, not an array of events"),
    (b"[]", r"no trace events: the event array ends at byte 1 \(line 1, column 2\) and is empty"),
    (b"[1, 2]", r"an event that is not a JSON object at byte 1 \(line 1, column 2\) in event #0"),
    (b"42", r"not a trace in any format TraceVis3D reads \(tracevis3d formats lists them\) at byte 0"),
    (CORRUPT, r"cut short at byte 61 \(line 1, column 62\) inside the first event, which starts at byte 17 "
              r"\(line 1, column 18\): no complete event"),
    (b"\x1f\x8b\x08\x00garbage-not-deflate" + b"\x00" * 20, "corrupt gzip"),
])
def test_sniff_rejects_what_cannot_be_a_trace(tmp_path, content, message):
    p = tmp_path / "bad.json"
    p.write_bytes(content)
    with pytest.raises(TraceFormatError, match=message) as e:
        check_trace_file(p)
    assert str(p) in str(e.value) and len(str(e.value).splitlines()) == 1


def test_sniff_missing_and_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="trace file not found"):
        check_trace_file(tmp_path / "nope.json")
    with pytest.raises(TraceFormatError, match="directory"):
        check_trace_file(tmp_path)


@pytest.mark.parametrize("content", [
    b'[{"ph":"X","ts":1,"dur":1,"name":"a"}',                    # unterminated array: repairable
    b'[{"ph":"X","ts":1,"dur":1,"name":"a"}, {"ph":"X","ts":2',  # one complete event, then cut
    b'{"displayTimeUnit": "ns", "traceEvents": [{"ph":"B","ts":1,"name":"a"}]}',
    b'[{"ph":"X" "ts":1}]',      # invalid JSON mid-event: the importer names the byte
    b"[" * 5000,                 # too deep for Python's parser: left to the importer
    b'[{"ph":"X","ts":NaN}]',
])
def test_sniff_lets_the_importer_decide(tmp_path, content):
    p = tmp_path / "maybe.json"
    p.write_bytes(content)
    check_trace_file(p)  # no error: anything not certainly wrong goes on
    gz = tmp_path / "maybe.json.gz"
    gz.write_bytes(gzip.compress(content))
    check_trace_file(gz)


def test_sniff_reads_only_the_head_of_a_large_file(tmp_path):
    p = tmp_path / "big.json"
    ev = json.dumps({"ph": "X", "ts": 1, "dur": 1, "name": "a", "pid": 1, "tid": 1})
    p.write_text("[" + ",".join([ev] * 40_000))  # 2 MB, cut short: the importer repairs it
    check_trace_file(p)
    p.write_bytes(b"PK\x03\x04" + b"\x00" * 100)  # the native format: its loader decides
    check_trace_file(p)


def _fresh_python(code: str, cache, extra_env=None, timeout=900):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=REPO)
    env.pop("NUMBA_CPU_NAME", None)
    env.update(extra_env or {})
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True,
                          text=True, timeout=timeout, cwd=REPO)


def test_bad_file_fails_before_numba_on_a_cold_cache(tmp_path):
    """A fresh process, an empty cache: the corrupt file's error comes without numba loaded."""
    bad = tmp_path / "corrupt.json"
    bad.write_bytes(CORRUPT)
    r = _fresh_python(f"""
        import sys, time
        t = time.perf_counter()
        import tracevis3d
        try:
            tracevis3d.load({str(bad)!r})
        except tracevis3d.TraceFormatError as e:
            print("ERR", e)
        print("numba" in sys.modules, "llvmlite" in sys.modules)
        print(f"{{time.perf_counter() - t:.3f}}")
        """, tmp_path / "cache")
    out = r.stdout.splitlines()
    assert r.returncode == 0, r.stderr
    assert out[0].startswith("ERR ") and "corrupt.json" in out[0] and "inside the first event" in out[0]
    assert out[1] == "False False", "numba was imported before the file was rejected"
    compiled = [f for f in (tmp_path / "cache").rglob("*") if f.suffix in (".nbi", ".nbc")]
    assert not compiled, compiled  # (the record of the sources, `drop_stale_entries`, may be there)


def _cold_icicle(folder):
    """The CLI's icicle of a 51-call trace in a fresh process on an empty numba cache (the
    early process of `test_first_icicle_on_a_cold_cache_says_so`: ~70 s of compiling)."""
    trace = folder / "t.json"
    ev = [{"ph": "X", "name": f"f{k % 7} (m.py:{k})", "ts": k * 10, "dur": 8, "pid": 1, "tid": 1}
          for k in range(50)]
    ev.append({"ph": "X", "name": "main (m.py:1)", "ts": 0, "dur": 600, "pid": 1, "tid": 1})
    trace.write_text(json.dumps(ev))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(folder / "cache"), PYTHONPATH=REPO)
    r = subprocess.run([sys.executable, "-m", "tracevis3d", "render-icicle", str(trace), "-o",
                        str(folder / "fig.png"), "--resolution", "160x90"], env=env, capture_output=True,
                       text=True, timeout=1800, cwd=REPO)
    return r, folder / "fig.png"


#: started by conftest at collection (`pytest_collection_finish`) for the tests marked with their name
EARLY_PROCESSES = {"cold_icicle": _cold_icicle}


@pytest.mark.slow
@pytest.mark.early_process("cold_icicle")
def test_first_icicle_on_a_cold_cache_says_so(early_result):
    """The CLI on an empty cache (this checkout ships no pre-built kernels: they are compiled
    now): it completes, and the progress says "preparing kernels (first run only …)" first."""
    r, fig = early_result("cold_icicle", sys.modules[__name__])
    assert r.returncode == 0, r.stderr[-2000:]
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("[")]
    first = [ln for ln in lines if "preparing kernels (first run only, about" in ln]
    assert first and "loading t.json" in first[0], lines
    assert any("preparing kernels (first run only" in ln and "layout of 51 calls" in ln for ln in lines), lines
    assert fig.is_file()


TINY_KERNEL = '''
from numba import njit


@njit(cache=True)
def triple_sum(a):
    s = 0
    for x in a:
        s += 3 * x
    return s
'''

RUN_KERNEL = """
    import json, sys
    import numpy as np
    sys.path.insert(0, {root!r})
    import importlib
    k = importlib.import_module({module!r})
    v = k.triple_sum(np.arange(10))
    d = k.triple_sum
    print(json.dumps({{"v": int(v), "hits": sum(d._cache_hits.values()), "misses": sum(d._cache_misses.values())}}))
"""


def test_prebuilt_generic_kernels_load_at_another_install_path(tmp_path):
    """A cache compiled for the generic CPU as package ``tinypkg`` at one path, exported, then
    installed for a copy at another path imported as ``outer.tinypkg`` (as Blender names an
    extension's modules), with the host's magic tuple: the host process compiles nothing.
    Copied verbatim (no relocation) the same cache is not found (numba keys it by path)."""
    import shutil

    for pkg in (tmp_path / "built" / "tinypkg", tmp_path / "installed" / "outer" / "tinypkg"):
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "kern.py").write_text(TINY_KERNEL)
    (tmp_path / "installed" / "outer" / "__init__.py").write_text("")
    built = tmp_path / "cache-built"
    r = _fresh_python(RUN_KERNEL.format(root=str(tmp_path / "built"), module="tinypkg.kern"), built,
                      {"NUMBA_CPU_NAME": "generic"})
    assert r.returncode == 0 and json.loads(r.stdout.splitlines()[-1])["misses"] == 1, r.stderr
    shipped = tmp_path / "shipped"
    manifest = kc.export_cache(str(built), str(tmp_path / "built" / "tinypkg"), str(shipped), package="tinypkg")
    assert [f for f in manifest["files"] if f.endswith(".nbi")] and manifest["cpu"] == "generic"
    user = tmp_path / "user-cache"
    installed = tmp_path / "installed" / "outer" / "tinypkg"
    rep = kc.install_shipped(str(shipped), str(installed), str(user), package="outer.tinypkg")
    assert rep["installed"] == 1 and rep["entries"] == 1, rep
    assert kc.install_shipped(str(shipped), str(installed), str(user), package="outer.tinypkg")["installed"] == 0
    r = _fresh_python(RUN_KERNEL.format(root=str(tmp_path / "installed"), module="outer.tinypkg.kern"), user)
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout.splitlines()[-1])
    assert got == {"v": 135, "hits": 1, "misses": 0}, (got, r.stderr)
    verbatim = tmp_path / "verbatim"
    shutil.copytree(built, verbatim)
    r = _fresh_python(RUN_KERNEL.format(root=str(tmp_path / "installed"), module="outer.tinypkg.kern"), verbatim,
                      {"NUMBA_CPU_NAME": "generic"})
    assert json.loads(r.stdout.splitlines()[-1])["misses"] == 1  # another path: compiled again


def test_shipped_kernels_install_at_the_highest_cpu_level_this_cpu_runs(tmp_path):
    """The generic kernels shipped with the same kernels compiled for x86-64-v3 beside them
    (``<tag>/x86-64-v3/``, as tools/kernel_caches.py ships the levels): a CPU at v3 or above
    gets v3's code (v4 asked, v3 the highest shipped), one below gets the generic code, and
    the installed v3 kernel loads and runs in a host process without compiling (where this
    CPU runs v3: a CPU that lacks its features would stop at the first instruction)."""
    pkg = tmp_path / "built" / "tinypkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "kern.py").write_text(TINY_KERNEL)
    shipped = tmp_path / "shipped"
    for cpu, dest in (("generic", shipped), ("x86-64-v3", shipped / "x86-64-v3")):
        built = tmp_path / f"cache-{cpu}"
        r = _fresh_python(RUN_KERNEL.format(root=str(tmp_path / "built"), module="tinypkg.kern"), built,
                          {"NUMBA_CPU_NAME": cpu, "NUMBA_CPU_FEATURES": ""})
        assert r.returncode == 0 and json.loads(r.stdout.splitlines()[-1])["misses"] == 1, r.stderr
        assert kc.export_cache(str(built), str(pkg), str(dest), package="tinypkg", cpu=cpu)["cpu"] == cpu

    def data(cache):
        return [p.read_bytes() for p in sorted(pathlib.Path(cache).rglob("*.nbc"))]
    assert data(shipped / "x86-64-v3") != data(tmp_path / "cache-generic")  # other code
    for asked, got in (("x86-64-v4", "x86-64-v3"), ("x86-64-v3", "x86-64-v3"), ("generic", "generic")):
        user = tmp_path / f"user-{asked}"
        rep = kc.install_shipped(str(shipped), str(pkg), str(user), package="tinypkg", cpu=asked)
        assert rep["installed"] == 1 and rep["cpu"] == got, rep
        assert data(user) == data(tmp_path / f"cache-{got}")
    if kc.host_cpu_level() == "generic":
        pytest.skip("this CPU does not run x86-64-v3 code: the install's choice is checked, not the run")
    user = tmp_path / "user-host"
    assert kc.install_shipped(str(shipped), str(pkg), str(user), package="tinypkg")["cpu"] == "x86-64-v3"
    r = _fresh_python(RUN_KERNEL.format(root=str(tmp_path / "built"), module="tinypkg.kern"), user)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout.splitlines()[-1]) == {"v": 135, "hits": 1, "misses": 0}, r.stderr


TWO_KINDS = """
    import json, sys
    import numpy as np
    sys.path.insert(0, {root!r})
    import importlib
    k = importlib.import_module("tinypkg.kern")
    vals = [int(k.triple_sum(np.arange(10, dtype=dt))) for dt in {dtypes!r}]
    d = k.triple_sum
    print(json.dumps({{"v": vals, "hits": sum(d._cache_hits.values()), "misses": sum(d._cache_misses.values())}}))
"""


def test_two_processes_caches_merge_without_losing_an_entry(tmp_path):
    """tools/kernel_caches.py compiles the warm-up's halves in two processes, each in its own
    cache, and merges them: two signatures of one kernel (one per process, both numbered
    ``.1.nbc`` by numba) and a kernel only one made all load from the merged cache; merging
    again adds nothing; caches of other sources are refused."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("kernel_caches", os.path.join(REPO, "tools", "kernel_caches.py"))
    tools_kc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tools_kc)
    pkg = tmp_path / "src" / "tinypkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "kern.py").write_text(TINY_KERNEL)
    (pkg / "other.py").write_text(TINY_KERNEL.replace("3 * x", "5 * x"))
    root = str(tmp_path / "src")
    one, two = tmp_path / "one", tmp_path / "two"
    assert _fresh_python(TWO_KINDS.format(root=root, dtypes=["int64"]), one).returncode == 0
    r = _fresh_python(TWO_KINDS.format(root=root, dtypes=["int32"]) + "    import tinypkg.other as o; o.triple_sum(np.arange(3))\n",
                      two)
    assert r.returncode == 0, r.stderr[-2000:]
    assert sorted(p.name for p in one.rglob("*.nbc")) == ["kern.triple_sum-5.py311.1.nbc"]
    assert "kern.triple_sum-5.py311.1.nbc" in [p.name for p in two.rglob("*.nbc")]
    assert tools_kc.merge_cache(one, two) == 2
    assert tools_kc.merge_cache(one, two) == 0
    r = _fresh_python(TWO_KINDS.format(root=root, dtypes=["int64", "int32"]) + "    import tinypkg.other as o; "
                      "assert o.triple_sum(np.arange(3)) == 15 and sum(o.triple_sum._cache_hits.values()) == 1\n", one)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout.splitlines()[-1]) == {"v": [135, 135], "hits": 2, "misses": 0}
    (pkg / "kern.py").write_text(TINY_KERNEL + "\n# changed\n")
    changed = tmp_path / "changed"
    assert _fresh_python(TWO_KINDS.format(root=root, dtypes=["int16"]), changed).returncode == 0
    with pytest.raises(tools_kc.KernelCacheError, match="other sources"):
        tools_kc.merge_cache(one, changed)


def test_module_names_are_rewritten_in_a_pickle_and_nothing_else():
    import pickle

    data = pickle.dumps({"m": "tinypkg.kern", "sym": "_ZN7tinypkg4kern", "pkg": "tinypkg", "x": "tinypkgs",
                         "long": "tinypkg." + "a" * 300}, protocol=5)
    back = pickle.loads(kc.rewrite_module_names(data, "tinypkg", "outer.tinypkg"))
    assert back == {"m": "outer.tinypkg.kern", "sym": "_ZN7tinypkg4kern", "pkg": "outer.tinypkg",
                    "x": "tinypkgs", "long": "outer.tinypkg." + "a" * 300}


def test_shipped_kernels_for_another_python_are_not_installed(tmp_path):
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    (shipped / kc.MANIFEST).write_text(json.dumps({"tag": "py3.13-numba0.68.1-arm64", "files": ["x.nbi"]}))
    rep = kc.install_shipped(str(shipped), str(tmp_path / "pkg"), str(tmp_path / "cache"))
    assert rep["installed"] == 0 and "py3.13" in rep["skipped"]
    assert kc.install_shipped(str(tmp_path / "none"), str(tmp_path / "pkg"), str(tmp_path / "cache"))["skipped"]


def test_cold_note_follows_the_cache(tmp_path):
    assert kc.is_cold("load", str(tmp_path))
    assert kc.cold_note("compare").startswith("preparing kernels (first run only, about") or \
        not kc.is_cold("compare")
    d = tmp_path / kc.cache_subdir(os.path.join(kc.package_root(), "kernels"))
    d.mkdir(parents=True)
    for name in ("jsonscan.scan_trace-1.py311.nbi", "jsonevent.scan_event-2.py311.nbi", "jsontokens.skip_ws-3.py311.nbi",
                 "jsonspans.intern_spans-4.py311.nbi", "tree.group_by_key-2.py311.nbi",
                 "sidescan.scan_fast-5.py311.nbi", "sideshape.side_run-5.py311.nbi", "sidetables.new_fast-6.py311.nbi"):
        (d / name).write_bytes(b"")
    assert not kc.is_cold("load", str(tmp_path)) and kc.is_cold("layout", str(tmp_path))
    assert kc.cold_note("load", str(tmp_path)) == ""


def test_cold_note_counts_only_what_is_missing(tmp_path):
    """A step whose modules are cached but one announces that one's share of the step's compile
    seconds (by source size), not the whole step's: after a kernel edit in a checkout the
    comparison said "about 80 s" where only the fused join's modules were left to compile."""
    full = kc.cold_seconds("compare", str(tmp_path))
    assert full == kc.COLD_SECONDS["compare"] and kc.cold_note("compare", str(tmp_path)).endswith("about 80 s); ")
    d = tmp_path / kc.cache_subdir(os.path.join(kc.package_root(), "kernels"))
    d.mkdir(parents=True)
    for mod in kc.step_modules("compare"):
        if mod != "kernels/setjoin_walk":
            (d / f"{mod.split('/')[1]}.f-1.py311.nbi").write_bytes(b"")
    assert kc.cold_modules("compare", str(tmp_path)) == ["kernels/setjoin_walk"]
    part = kc.cold_seconds("compare", str(tmp_path))
    assert 0 < part < full / 4, part
    (d / "setjoin_walk.f-1.py311.nbi").write_bytes(b"")
    assert kc.cold_seconds("compare", str(tmp_path)) == 0.0 and kc.cold_note("compare", str(tmp_path)) == ""


def test_a_compare_way_compiled_alone_is_not_announced(tmp_path):
    """The comparison's join takes the fused or the streamed way (decided inside the step): a
    cache that holds one way in full reads as warm (a user who only compares huge pairs saw
    "preparing kernels (first run only, about 10 s)" on every comparison, the streamed way's
    module never compiled); with a module of each way missing, both are announced."""
    d = tmp_path / kc.cache_subdir(os.path.join(kc.package_root(), "kernels"))
    d.mkdir(parents=True)
    ways = kc.STEP_WAYS["compare"]
    assert set(ways) == {"fused", "streamed"} and not set(ways["fused"]) & set(ways["streamed"])
    for mod in kc.STEP_KERNELS["compare"] + ways["fused"]:
        (d / f"{mod.split('/')[1]}.f-1.py311.nbi").write_bytes(b"")
    assert kc.cold_modules("compare", str(tmp_path)) == [] and kc.cold_note("compare", str(tmp_path)) == ""
    (d / "setjoin_fused.f-1.py311.nbi").unlink()
    assert kc.cold_modules("compare", str(tmp_path)) == ["kernels/setjoin_fused", *ways["streamed"]]
    for mod in ways["streamed"]:
        (d / f"{mod.split('/')[1]}.f-1.py311.nbi").write_bytes(b"")
    assert not kc.is_cold("compare", str(tmp_path))


def test_a_native_file_is_not_announced_as_a_long_compile(tmp_path):
    """Loading a native or compact file compiles the tree's check (1-2 s on an empty cache), not
    the JSON scanner (~45 s): its step is "load_native" (a native 10^7-call file said "about 45
    s" and loaded in 0.6 s).  JSON and gzip keep "load"; a pipe is not peeked at."""
    from tracevis3d.io.compact import save_compact
    from tracevis3d.io.sniff import is_native_file
    from tracevis3d.io.native import save_native

    from tracevis3d import synthetic

    t = synthetic(200, threads=2)
    save_native(t, tmp_path / "t.tv3d.npz")
    save_compact(t, tmp_path / "t.tv3c")
    (tmp_path / "t.json").write_bytes(b'{"traceEvents": []}')
    (tmp_path / "t.json.gz").write_bytes(b"\x1f\x8b\x08\x00")
    assert [is_native_file(tmp_path / n) for n in ("t.tv3d.npz", "t.tv3c", "t.json", "t.json.gz")] == \
        [True, True, False, False]
    assert kc.COLD_SECONDS["load_native"] < 5 < kc.COLD_SECONDS["load"]
    d = tmp_path / "cache" / kc.cache_subdir(os.path.join(kc.package_root(), "kernels"))
    d.mkdir(parents=True)
    (d / "tree.first_bad_call-260.py311.nbi").write_bytes(b"")
    assert not kc.is_cold("load_native", str(tmp_path / "cache")) and kc.is_cold("load", str(tmp_path / "cache"))
    fifo = tmp_path / "t.fifo"
    os.mkfifo(fifo)
    assert not is_native_file(fifo)  # returns at once: nothing read from the pipe


def test_sniff_leaves_pipes_alone(tmp_path):
    """A FIFO is not read (that would consume it): the importer reads it once."""
    fifo = tmp_path / "trace.fifo"
    os.mkfifo(fifo)
    assert check_trace_file(fifo) == str(fifo)  # returns at once, nothing opened
