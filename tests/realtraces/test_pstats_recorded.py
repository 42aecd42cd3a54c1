"""pstats dumps recorded now by this Python's own cProfile (the standard library: nothing to
install), in its two common forms: ``python -m cProfile -o OUT script.py`` and ``python -m
cProfile -o OUT -m module``, and a dump that ``pstats.Stats.add`` merged from two runs.  The
tree estimated from each call graph keeps the profile's total, draws the program as wide as its
cumulative time, and cuts recursion (`tracevis3d.io.pstats`)."""
from __future__ import annotations

import marshal
import pathlib
import subprocess
import sys
import warnings

import pytest

from tracevis3d.io import load
from tracevis3d.io.pstats import read_marshal
from tracevis3d.layout.xunit import trace_kind_text

pytestmark = pytest.mark.timeout(300)

#: the program recorded (also the script of the committed recording `script_busy.prof.gz`)
SCRIPT = (pathlib.Path(__file__).resolve().parents[1] / "data" / "formats" / "pstats" / "script_busy.py").read_text()


def _record(tmp_path, *args, profiler: str = "cProfile") -> tuple:
    out = tmp_path / "out.prof"
    subprocess.run([sys.executable, "-m", profiler, "-o", str(out), *args], check=True, cwd=tmp_path,
                   timeout=240, capture_output=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trace = load(out)
    return trace, read_marshal(out.read_bytes())[0]  # profile's dumps hold a code object: not marshal.loads


def _widths(trace, func: str) -> float:
    """Seconds of the calls of ``func`` that have no call of it above them."""
    total = 0.0
    for i in range(len(trace)):
        if trace.function_names[trace.func[i]] != func:
            continue
        p, nested = int(trace.parent[i]), False
        while p >= 0 and not nested:
            nested = trace.function_names[trace.func[p]] == func
            p = int(trace.parent[p])
        if not nested:
            total += (float(trace.end[i]) - float(trace.start[i])) * 1e-6
    return total


def _check_total(trace, stats, profiler: str = "cProfile"):
    roots = trace.depth == 0
    width = float((trace.end[roots] - trace.start[roots]).sum()) * 1e-6
    assert width == pytest.approx(sum(v[2] for v in stats.values()), rel=1e-3)
    assert trace.meta["estimated_from"] == f"a call graph ({profiler})"
    assert trace_kind_text(trace) == f"merged stacks estimated from a call graph ({profiler})"


def test_a_script_under_cprofile(tmp_path):
    (tmp_path / "prog.py").write_text(SCRIPT)
    trace, stats = _record(tmp_path, "prog.py")
    _check_total(trace, stats)
    key = next(k for k in stats if k[0].endswith("prog.py") and k[2] == "main")
    assert _widths(trace, "main") == pytest.approx(stats[key][3], rel=1e-6)
    # fib calls itself: cut where it recurs, the recursion counted, fib never under fib
    assert trace.meta["repairs"]["pstats_recursion"]["count"] >= 1
    fib = trace.function_names.index("fib")
    for i in range(len(trace)):
        if trace.func[i] == fib:
            assert trace.func[trace.parent[i]] != fib
    fib_key = next(k for k in stats if k[2] == "fib")
    assert _widths(trace, "fib") == pytest.approx(stats[fib_key][3], rel=1e-6)
    assert "{built-in method builtins.exec}" in trace.function_names
    k = trace.function_names.index("round_trip")
    assert trace.function_paths[k][-1] == "round_trip"


def test_a_module_under_cprofile(tmp_path):
    (tmp_path / "in.json").write_text('{"a": [' + ", ".join(str(i) for i in range(20000)) + "]}")
    trace, stats = _record(tmp_path, "-m", "json.tool", "in.json", "out.json")
    _check_total(trace, stats)
    key = next(k for k in stats if k[0].endswith("json/tool.py") and k[2] == "main")
    assert len(stats[key][4]) == 1
    assert _widths(trace, "main") == pytest.approx(stats[key][3], rel=1e-6)


def test_two_runs_merged_by_pstats(tmp_path):
    import pstats

    (tmp_path / "prog.py").write_text(SCRIPT)
    _record(tmp_path, "prog.py")
    (tmp_path / "out.prof").rename(tmp_path / "a.prof")
    _record(tmp_path, "prog.py")
    st = pstats.Stats(str(tmp_path / "a.prof"))
    st.add(str(tmp_path / "out.prof"))
    st.dump_stats(str(tmp_path / "both.prof"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trace = load(tmp_path / "both.prof")
    stats = marshal.loads((tmp_path / "both.prof").read_bytes())
    _check_total(trace, stats)
    key = next(k for k in stats if k[0].endswith("prog.py") and k[2] == "main")
    assert _widths(trace, "main") == pytest.approx(stats[key][3], rel=1e-6)


def test_a_script_under_the_profile_module(tmp_path):
    """The pure-Python ``profile`` keeps only call counts per caller: the program's width is an
    estimate (each caller's share under its own ct), close to its ct here, where a split by calls
    alone would give ``exec``'s one call from runpy a seventeenth of the program."""
    (tmp_path / "prog.py").write_text(SCRIPT)
    trace, stats = _record(tmp_path, "prog.py", profiler="profile")
    _check_total(trace, stats, "profile")
    assert any(k[2].startswith("<code object <module> of prog.py") for k in stats)
    key = next(k for k in stats if k[0].endswith("prog.py") and k[2] == "main")
    assert _widths(trace, "main") == pytest.approx(stats[key][3], rel=0.05)
