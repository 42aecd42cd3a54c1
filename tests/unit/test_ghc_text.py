"""GHC's text profiling report (``+RTS -p`` / ``-P``): real reports of one program against a
naive reading of their cost-centre tree laid out Left Heavy, against the JSON report (``-pj``)
of the same program, and bad input refused in one line naming the file and the line."""
from __future__ import annotations

import pathlib
from collections import Counter

import pytest

import tracevis3d
from collapsed_twins import left_heavy
from refusals import refusal
from speedscope_twins import calls_of
from tracevis3d.io import formats
from tracevis3d.io.ghc_text import load_ghc_prof

DIR = pathlib.Path(__file__).resolve().parents[1] / "data" / "formats" / "ghc"


def naive_rows(text: str, column: str) -> tuple:
    """[(path of 'MODULE.LABEL', weight)] of the tree (indentation = depth) and first appearances."""
    lines = text.splitlines()
    h = next(i for i, ln in enumerate(lines) if ln.startswith("COST CENTRE") and "no." in ln)
    cols = lines[h].split()[2:]
    nums = cols[cols.index("no."):]
    j = nums.index(column)
    out, order, path = [], {}, []
    for ln in lines[h + 1:]:
        if not ln.strip():
            continue
        tok = ln.split()
        depth = len(ln) - len(ln.lstrip(" "))
        name = f"{tok[1]}.{tok[0]}"
        order.setdefault(name, len(order))
        path = path[:depth] + [name]
        out.append((tuple(path), float(tok[len(tok) - len(nums) + j])))
    return out, order


@pytest.mark.parametrize("name,measure,column,unit", [("trees-p.prof", "ticks", "%time", "% time"),
                                                       ("trees-p.prof", "alloc", "%alloc", "% alloc"),
                                                       ("trees-P.prof", "ticks", "ticks", "ticks"),
                                                       ("trees-P.prof", "alloc", "bytes", "bytes")])
def test_real_reports_are_read_as_their_left_heavy_tree(name, measure, column, unit):
    data = (DIR / name).read_bytes()
    assert formats.detect(data).key == "ghc-prof"
    trace = tracevis3d.load(DIR / name, warn=False, measure=measure)
    assert trace.meta["merged"] and trace.meta["x_unit"] == unit and trace.meta["format"] == "ghc-prof"
    rows, order = naive_rows(data.decode(), column)
    want = sorted(left_heavy(rows, order))
    got = sorted(calls_of(trace))
    assert got == [(p, pytest.approx(s), pytest.approx(e)) for p, s, e in want]
    assert trace.thread_names == ["trees " + ("time" if measure == "ticks" else "allocation")]
    k = trace.function_names.index("Main.fib")
    assert trace.function_files[k] == "trees.hs" and trace.function_lines[k] == 25  # the span's file and line
    assert trace.function_paths[k][0] == "Main"
    assert trace.meta["total_ticks"] > 0 and trace.meta["total_alloc"] > 0


def _self_by_name(trace) -> Counter:
    c = Counter()
    for f, s in zip(trace.func.tolist(), trace.self_time.tolist()):
        c[trace.function_names[f]] += s
    return c


def test_the_text_and_json_reports_of_one_program_agree():
    """Allocation is all but deterministic: the same heaviest cost centres, bytes within 1 %."""
    text = _self_by_name(tracevis3d.load(DIR / "trees-P.prof", warn=False, measure="alloc"))
    js = _self_by_name(tracevis3d.load(DIR / "trees-pj.json", warn=False, measure="alloc"))
    top = [n for n, _ in text.most_common(4)]
    assert top == [n for n, _ in js.most_common(4)]
    for n in top:
        assert text[n] == pytest.approx(js[n], rel=0.01)


HEAD = ("\tSat Nov 28 18:00 2026 Time and Allocation Profiling Report  (Final)\n\n\t   p +RTS -p -RTS\n\n"
        "\ttotal time  =        0.17 secs   (173 ticks @ 1000 us, 1 processor)\n"
        "\ttotal alloc = 1,000 bytes  (excludes profiling overheads)\n\n")
TREE = "COST CENTRE MODULE SRC no. entries %time %alloc %time %alloc\n\n"


def test_a_row_too_deep_is_taken_as_a_child_and_names_with_blanks_stay_whole():
    text = HEAD + TREE + ("MAIN MAIN <built-in> 1 0 10.0 0.0 100.0 100.0\n"
                          "   deep Main a.hs:1:1 2 1 50.0 0.0 90.0 0.0\n"
                          "  stage clean Main a.hs:2:1 3 1 40.0 0.0 40.0 0.0\n")
    t = load_ghc_prof(text.encode(), source="p.prof", warn=False)
    assert t.meta["repairs"]["ghc_depth"]["count"] == 1
    assert "Main.stage clean" in t.function_names
    assert sorted(t.depth.tolist()) == [0, 1, 2]


BAD = [
    (HEAD, "no cost-centre tree"),
    (HEAD + TREE + "MAIN MAIN <built-in> 1 0 10.0\n", "line 10: expected 'cost-centre module src"),
    (HEAD + TREE + "MAIN MAIN <built-in> 1 0 x 0.0 100.0 100.0\n", "line 10: expected numbers"),
    (HEAD + TREE + "MAIN MAIN <built-in> 1 0 1e30 0.0 100.0 100.0\n", "line 10: 1e30 is past the limit"),
    (HEAD + TREE, "has no rows"),
    (HEAD + "COST CENTRE no. entries %time\n", "unexpected columns"),
    (HEAD + TREE + "MAIN MAIN <built-in> 1 0 0.0 0.0 100.0 100.0\n", "weigh nothing"),
]


@pytest.mark.parametrize("text,what", BAD)
def test_bad_reports_are_refused_in_one_line_naming_the_line(text, what):
    msg = refusal(load_ghc_prof, text.encode(), "bad.prof")
    assert what in msg, msg


def test_invalid_utf8_is_repaired_and_counted():
    text = (HEAD + TREE + "MAIN MAIN <built-in> 1 0 10.0 0.0 100.0 100.0\n").encode().replace(b"<built-in>", b"<\xff>")
    t = load_ghc_prof(text, source="p.prof", warn=False)
    assert t.meta["repairs"]["invalid_utf8"]["count"] == 1
