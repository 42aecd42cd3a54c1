"""Real recordings of profilers the readers met late: Xdebug (PHP, callgrind format), yappi
(Python, callgrind format) and Austin (Python, collapsed stacks with P/T frames), shipped in
tests/data/formats/{xdebug,yappi,austin}/ (READMEs there: tool, version, command, licence).

Each cost checked here is computed from the file's own lines by a short parser of this test
(`_callgrind_totals`, `_austin_lines`), not by the readers."""
from __future__ import annotations

import gzip
import pathlib
import re
from collections import defaultdict

import numpy as np
import pytest

import tracevis3d
from tracevis3d.model import TraceFormatError
from tracevis3d.names import parse_function_name, parse_functions
from tracevis3d.naming import describe_function

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "formats"
XDEBUG = DATA / "xdebug" / "php_work.cachegrind.out.gz"
YAPPI = DATA / "yappi" / "sampled_work.yappi.callgrind.gz"
AUSTIN_WALL = DATA / "austin" / "sampled_work.austin.wall.txt.gz"
AUSTIN_MEMORY = DATA / "austin" / "sampled_work.austin.memory.txt.gz"

pytestmark = pytest.mark.timeout(300)


def _text(path: pathlib.Path) -> str:
    return gzip.decompress(path.read_bytes()).decode("utf-8")


def _callgrind_totals(text: str, column: int, called: bool = False) -> dict:
    """{function name: self cost + inclusive costs of the calls it makes} in event ``column``
    (0-based, after the one position ``line``), summed over all its ``fn=`` blocks; with
    ``called``, {function name: the inclusive costs of the call lines that call it}.  A plain
    line-by-line reading of the format (name compression ``(id) name``; no ``+n``/``*``
    compression, which neither Xdebug nor yappi writes)."""
    names: dict = {}
    totals: dict = defaultdict(float)
    fn = cfn = None
    for line in text.splitlines():
        if line.startswith(("fn=", "cfn=")):
            m = re.match(r"c?fn=\((\d+)\)(?: (.*))?$", line)
            if m.group(2) is not None:
                names[m.group(1)] = m.group(2)
            if line.startswith("fn="):
                fn = m.group(1)
            else:
                cfn = m.group(1)
        elif line.startswith("calls="):
            pass
        elif line[:1].isdigit() and fn is not None:
            if not called:
                totals[names[fn]] += float(line.split()[1 + column])
            elif cfn is not None:
                totals[names[cfn]] += float(line.split()[1 + column])
            cfn = None
    return dict(totals)


def _calls_named(t, name: str) -> np.ndarray:
    return np.flatnonzero(np.asarray([t.function_names[f] == name for f in t.func.tolist()]))


# ----------------------------------------------------------------------------------------- Xdebug

def test_xdebug_time_in_microseconds_costs_from_the_file():
    t = tracevis3d.load(XDEBUG, warn=False)
    assert t.meta["x_unit"] == "µs" and t.meta["callgrind_event"] == "Time_(10ns)"
    assert t.n_threads == 1
    totals = _callgrind_totals(_text(XDEBUG), 0)
    # the one root is {main}, whose cost is the file's own (10 ns ticks → µs)
    roots = np.flatnonzero(t.parent < 0)
    assert [t.name(int(r)) for r in roots] == ["{main}"]
    assert t.duration[roots[0]] == pytest.approx(totals["{main}"] * 0.01, rel=1e-9)
    # a function called from one place, not recursive: its one call is its whole cost (to the
    # 10 ns Xdebug rounds each call's time to: main's call line and main's own lines differ by
    # a few ticks, and main's callees get their share of main's call)
    for name in ("text_work", "json_work", "Inventory->largest"):
        calls = _calls_named(t, name)
        assert calls.size == 1, name
        assert t.duration[calls[0]] == pytest.approx(totals[name] * 0.01, abs=0.05), name
    # inclusive is inclusive: a call holds its callees, its self time is what is left
    i = int(_calls_named(t, "text_work")[0])
    kids = np.flatnonzero(t.parent == i)
    assert t.duration[kids].sum() < t.duration[i]
    assert {t.name(int(k)) for k in kids} >= {"php::preg_match_all", "php::md5", "php::str_repeat"}


def test_xdebug_memory_event_selected_by_name_or_index():
    by_name = tracevis3d.load(XDEBUG, event="Memory_(bytes)", warn=False)
    by_index = tracevis3d.load(XDEBUG, event=1, warn=False)
    assert by_name.meta["x_unit"] == by_index.meta["x_unit"] == "bytes"
    totals = _callgrind_totals(_text(XDEBUG), 1)
    for t in (by_name, by_index):
        roots = np.flatnonzero(t.parent < 0)
        # memory is not additive: no callee becomes a root of its own (only {main}, never called)
        assert [t.name(int(r)) for r in roots] == ["{main}"]
        assert t.duration[roots[0]] == pytest.approx(totals["{main}"], rel=1e-9)
    with pytest.raises(TraceFormatError, match=r"no event 'Memory'.*Time_\(10ns\), Memory_\(bytes\)"):
        tracevis3d.load(XDEBUG, event="Memory", warn=False)


def test_xdebug_names_read_as_php():
    t = tracevis3d.load(XDEBUG, warn=False)
    by_display = {describe_function(nm, p)[3]: p for nm, p in zip(t.function_names, parse_functions(t))}
    for name in ("{main}", "main", "php::preg_match_all", "php::md5", "Inventory->largest", "RegularPolygon::make",
                 "{closure:php_work.php:76-78}", "Inventory->{closure:php_work.php:56-58}"):
        assert name in by_display, (name, sorted(by_display))
    assert by_display["php::md5"].module == "php" and by_display["php::md5"].path == ("php", "md5")
    assert by_display["Inventory->largest"].path == ("php_work", "Inventory", "largest")
    assert by_display["RegularPolygon::make"].path == ("shapes", "RegularPolygon", "make")
    assert all(p.lang == "php" for p in by_display.values())


# ------------------------------------------------------------------------------------------ yappi

def test_yappi_ticks_are_microseconds_and_names_lose_their_location():
    t = tracevis3d.load(YAPPI, warn=False)
    assert t.meta["x_unit"] == "µs" and t.meta["callgrind_event"] == "Ticks"
    assert t.n_threads == 1  # yappi's callgrind file sums its threads
    assert not any(re.search(r" \S+:\d+$", nm) for nm in t.function_names)
    k = t.function_names.index("json_work")
    assert t.function_files[k].endswith("sampled_work.py") and int(t.function_lines[k]) == 26
    roots = {t.name(int(r)) for r in np.flatnonzero(t.parent < 0)}
    assert {"run", "<module>"} <= roots  # the worker threads' Thread.run, the main thread's module
    p = parse_function_name("json_work", t.function_files[k], 26)
    assert describe_function("json_work", p)[3].endswith("sampled_work.json_work")


def test_yappi_function_costs_are_the_files():
    t = tracevis3d.load(YAPPI, warn=False)
    text = _text(YAPPI)
    own = _callgrind_totals(text, 0)
    claimed = _callgrind_totals(text, 0, called=True)
    short = {re.sub(r" \S+:\d+$", "", k): k for k in own if "sampled_work.py" in k}
    for name in ("json_work", "regex_work", "diff_work", "sort_work"):
        calls = _calls_named(t, name)
        assert calls.size >= 1, name
        # called from the pool's threads and the main thread: its calls together are what the
        # call lines that call it say (yappi's wall clock may say more than its own lines hold:
        # that rest is its self time, never given to its callees)
        assert t.duration[calls].sum() == pytest.approx(claimed[short[name]], rel=1e-9), name
        kids = np.flatnonzero(np.isin(t.parent, calls))
        assert t.duration[kids].sum() <= own[short[name]] * (1 + 1e-9), name


# ----------------------------------------------------------------------------------------- Austin

def _austin_lines(text: str) -> list:
    """(tid, frames, count) of every stack line of an Austin file (header/trailer left out)."""
    out = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        stack, count = line.rsplit(" ", 1)
        parts = stack.split(";")
        assert parts[0].startswith("P") and parts[1].startswith("T")
        out.append((int(parts[1].split(":")[-1]), parts[2:], int(count)))
    return out


def test_austin_threads_are_lanes_and_counts_are_microseconds():
    t = tracevis3d.load(AUSTIN_WALL, warn=False)
    lines = _austin_lines(_text(AUSTIN_WALL))
    tids = {tid for tid, _, _ in lines}
    assert t.n_threads == len(tids) == 4
    assert set(t.thread_tid.tolist()) == tids
    assert sorted(t.thread_names) == sorted(f"thread {tid}" for tid in tids)
    assert t.meta["x_unit"] == "µs" and t.meta["collapsed_header"]["mode"] == "wall"
    assert not t.meta.get("repairs")
    used = {t.function_names[f] for f in set(t.func.tolist())}
    assert not any(re.match(r"^(P\d+|T\d+:\d+)$", nm) or nm.startswith("#") for nm in used)
    for k, tid in enumerate(t.thread_tid.tolist()):
        roots = np.flatnonzero((t.parent < 0) & (t.thread == k))
        assert t.duration[roots].sum() == pytest.approx(sum(c for i, f, c in lines if i == tid and f)), tid


def test_austin_frames_named_as_python():
    t = tracevis3d.load(AUSTIN_WALL, warn=False)
    shown = {describe_function(nm, p)[3] for nm, p in zip(t.function_names, parse_functions(t))}
    assert any(s.endswith("sampled_work.json_work") for s in shown), sorted(shown)[:20]
    assert "importlib._bootstrap._find_and_load" in shown
    assert "threading.Condition.wait" in shown


def test_austin_memory_counts_are_bytes_freed_left_out():
    t = tracevis3d.load(AUSTIN_MEMORY, warn=False)
    text = _text(AUSTIN_MEMORY)
    lines = _austin_lines(text)
    freed = sum(1 for _, _, c in lines if c < 0)
    assert t.meta["x_unit"] == "bytes" and t.meta["collapsed_header"]["mode"] == "memory"
    assert freed > 0 and t.meta["repairs"]["collapsed_freed"]["count"] == freed
    assert "collapsed_line" not in t.meta["repairs"]
    assert t.meta["total_weight"] == pytest.approx(sum(c for _, f, c in lines if c > 0 and f))
    with pytest.warns(Warning, match="collapsed_freed"):
        tracevis3d.load(AUSTIN_MEMORY)
