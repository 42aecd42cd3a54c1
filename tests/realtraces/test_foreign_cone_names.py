"""The cone tree names a node as every other view names its function: with the function's file
(`naming.function_table`), so a native profile's clone symbols keep their whole name. Read
without its file, perf's ``set_ptes.isra.0`` was a Python-dotted name whose last part "0" was
the label (two "0" labels in the cone of tests/data/formats/recorded/perf), and Go's assembly
routines were named as functions of a module ``runtime.asm_amd64.s``."""
import re
from pathlib import Path

import pytest

import tracevis3d
from tracevis3d.layout.cone import cone_layout
from tracevis3d.naming import function_table

DATA = Path(__file__).resolve().parents[1] / "data" / "formats"
RECURSIVE = re.compile(r" \(\d+× recursive\)$")


def _node_names(trace) -> list:
    """The parts of the cone's call labels (a chain "a › … › b" gives a and b)."""
    spec = cone_layout(trace)
    sets = spec.labels if isinstance(spec.labels, list) else [spec.labels]
    parts = []
    for ls in sets:
        for text, kind in zip(ls.texts, ls.kind):
            if kind == "call":
                parts += [RECURSIVE.sub("", p) for p in text.split(" › ") if p != "…"]
    return parts


@pytest.mark.timeout(300)
@pytest.mark.parametrize("path", [DATA / "recorded" / "perf" / "perf.script.txt.gz", DATA / "go" / "cpu.pprof"],
                         ids=["perf", "go"])
def test_cone_names_are_the_functions_names_as_other_views_give_them(path):
    trace = tracevis3d.load(path)
    names = _node_names(trace)
    assert len(names) >= 10, names
    short = set(function_table(trace).short)
    assert all(n in short or n.endswith("…") for n in names), sorted(set(names) - short)
    assert not [n for n in names if n.isdigit() or ".s." in n or n.endswith(".s")], names
