#!/usr/bin/env python3
"""Deal a layer's test files to pytest sessions that run side by side (``make test``'s two
sessions of tests/unit, one a core), so that they end together: by the files' measured
durations, longest first, each to the session with the least time so far (a file not measured
yet counts as the median file).

    python tools/deal_tests.py tests/unit                 # one line per session: its files
    python tools/deal_tests.py --record A.xml B.xml       # the sessions' JUnit XML -> a durations table

The durations (``tests/support/unit_durations.txt``: seconds and path, one file a line, and
``together FILE...`` for files that must share a session: `deal`) are
those of a clean clone, kernels seeded (`tools/kernel_caches.py --seed`): a file's own time
there includes the signatures it compiles (test-only types, `tests/support/compile_log.py`).
``--record`` prints the table of a run (each file's tests' setup, call and teardown summed) to
refresh it.  Within a session the files keep their path order.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DURATIONS = REPO / "tests" / "support" / "unit_durations.txt"


def read_durations(path: Path = DURATIONS) -> tuple[dict[str, float], list[list[str]]]:
    """A durations table: ({test file (path from the repository root): seconds}, the groups of
    files dealt together: lines ``together FILE FILE...``)."""
    out, together = {}, []
    if path.is_file():
        for line in path.read_text().splitlines():
            if line.startswith("together "):
                together.append(line.split()[1:])
            elif line.strip() and not line.startswith("#"):
                secs, name = line.split(None, 1)
                out[name.strip()] = float(secs)
    return out, together


def deal(files: list[str], durations: dict[str, float], sessions: int = 2,
         together: list[list[str]] = ()) -> list[list[str]]:
    """``files`` in ``sessions`` groups of about equal total duration (longest processing time
    first); each group in path order.  The files of a ``together`` group go to one session: they
    share work done once a session (kernels the warm-up does not compile, the memray captures'
    reader, which two sessions would both compile; the syntax trees `test_import_graph.parsed`
    keeps)."""
    known = [durations[f] for f in files if f in durations]
    default = statistics.median(known) if known else 1.0
    units, placed = [], set()
    for group in together:
        unit = [f for f in group if f in files and f not in placed]
        if unit:
            units.append(unit)
            placed.update(unit)
    units += [[f] for f in files if f not in placed]
    groups: list[list[str]] = [[] for _ in range(sessions)]
    totals = [0.0] * sessions
    for unit in sorted(units, key=lambda u: (-sum(durations.get(f, default) for f in u), u)):
        k = totals.index(min(totals))
        groups[k] += unit
        totals[k] += sum(durations.get(f, default) for f in unit)
    return [sorted(g) for g in groups]


def recorded(xml_files: list[Path]) -> dict[str, float]:
    """{test file: seconds} from pytest's JUnit XML (``--junitxml``): its test cases' times
    (setup, call and teardown) summed by file."""
    out: dict[str, float] = {}
    for xml in xml_files:
        for case in ET.parse(xml).getroot().iter("testcase"):
            cls = case.get("classname", "")
            parts = cls.split(".")
            # tests.unit.test_x or tests.unit.test_x.TestClass: the module is the first test_* part
            mod = next((i for i, p in enumerate(parts) if p.startswith("test_")), None)
            if mod is None:
                continue
            name = "/".join(parts[: mod + 1]) + ".py"
            out[name] = out.get(name, 0.0) + float(case.get("time", 0) or 0)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("layer", nargs="?", help="a folder of test_*.py files to deal")
    ap.add_argument("--sessions", type=int, default=2)
    ap.add_argument("--record", nargs="+", type=Path, metavar="XML", help="instead: the durations table of a run")
    args = ap.parse_args(argv)
    if args.record:
        times = recorded([p for p in args.record if p.is_file()])
        print("# seconds per test file (tools/deal_tests.py --record), a clean clone's make test")
        for name, secs in sorted(times.items(), key=lambda kv: -kv[1]):
            print(f"{secs:8.2f} {name}")
        return 0
    if not args.layer:
        ap.error("a layer folder or --record is needed")
    files = sorted(str(p.relative_to(REPO)) if p.is_absolute() else str(p)
                   for p in Path(args.layer).glob("test_*.py"))
    durations, together = read_durations()
    for group in deal(files, durations, args.sessions, together):
        print(" ".join(group))
    return 0


if __name__ == "__main__":
    sys.exit(main())
