"""The failures of a `make test` run, a few lines each, for the last lines of its output.

CI keeps only the head and the tail of a run's output; a failing test's traceback sits in the
middle (each pytest session's log is printed whole, then the smoke runs), so its exception was
cut out of what CI showed (stop 85: a failed realtraces test whose error line was lost).  This
prints, for every failed or erroring test of the given pytest logs, its name and its ``E`` lines
(the exception and the assertion's explanation), at most ``--lines`` of each.

    python tools/failure_digest.py build/test-logs/*.log
"""
from __future__ import annotations

import argparse
import pathlib
import re
import sys

#: a failure's header in pytest's FAILURES / ERRORS sections: ``____ test_name ____``
_HEADER = re.compile(r"^_{3,} (.+?) _{3,}$")
#: a section's title line: ``==== FAILURES ====``, ``==== short test summary info ====``...
_SECTION = re.compile(r"^={3,} ?(.*?) ?={3,}$")


def digest(text: str, max_lines: int = 12) -> list[tuple[str, list[str]]]:
    """(test name, its first ``max_lines`` ``E`` lines, or the last lines of its report when it
    has none) for each failure reported in a pytest log's ``text``."""
    out: list[tuple[str, list[str]]] = []
    name, lines, tail = None, [], []
    in_section = False
    for line in text.splitlines():
        m_section = _SECTION.match(line)
        m_header = None if m_section else _HEADER.match(line)
        if m_section or m_header:
            if name is not None:
                out.append((name, lines[:max_lines] or tail[-max_lines:]))
            name, lines, tail = None, [], []
            if m_section:
                in_section = m_section.group(1) in ("FAILURES", "ERRORS")
            elif in_section:
                name = m_header.group(1)
            continue
        if name is not None:
            if line.startswith("E ") or line == "E":
                lines.append(line)
            elif line.strip():
                tail.append(line)
    if name is not None:
        out.append((name, lines[:max_lines] or tail[-max_lines:]))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("logs", nargs="*", type=pathlib.Path)
    ap.add_argument("--lines", type=int, default=12, help="E lines kept of each failure")
    a = ap.parse_args(argv)
    found = 0
    for log in a.logs:
        try:
            text = log.read_text(errors="replace")
        except OSError as e:
            print(f"{log}: not read ({e.strerror})")
            continue
        for name, lines in digest(text, a.lines):
            found += 1
            print(f"-- {name} ({log})")
            for line in lines:
                print(line[:600])
    if found:
        print(f"== {found} failure(s) above, each whole in its log")
    return 0


if __name__ == "__main__":
    sys.exit(main())
