"""Each test layer's time against its budget (a pytest plugin: conftest's ``pytest_plugins``).

``make test`` must stay within 30 minutes on 2 cores from a clean clone (issue 80): the kernels
~6 min, tests/unit 2 min, tests/blender and tests/realtraces 12 min each (they run side by side,
scripts/test.sh).  The terminal summary gives each layer's wall time in this session (its tests'
setup, call and teardown) and the CPU time of this process and of the processes it waited for,
beside the layer's budget, so a layer that grows past its budget says so in every run's output;
``--durations`` (pytest.ini) then names the tests that take it.  It never fails a run: the
times depend on the machine.
"""
from __future__ import annotations

import resource
import time

import pytest

#: seconds of tests per layer (the folder under tests/)
BUDGETS = {"unit": 120, "blender": 720, "realtraces": 720}

_SPENT: dict = {}  # layer -> [wall s, CPU s of this process, CPU s of waited children, tests]


def _layer(nodeid: str) -> str:
    parts = nodeid.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "tests" else parts[0]


def _clock():
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter(), time.process_time(), kids.ru_utime + kids.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    before = _clock()
    yield
    after = _clock()
    row = _SPENT.setdefault(_layer(item.nodeid), [0.0, 0.0, 0.0, 0])
    for k in range(3):
        row[k] += after[k] - before[k]
    row[3] += 1


def _mmss(s: float) -> str:
    return f"{int(s // 60)} min {int(s % 60):02d} s"


def pytest_terminal_summary(terminalreporter):
    if not _SPENT:
        return
    tr = terminalreporter
    tr.write_sep("=", "time per test layer (budgets: issue 80)")
    for layer, (wall, cpu, kids, n) in sorted(_SPENT.items()):
        budget = BUDGETS.get(layer)
        note = "" if budget is None else (f" of {_mmss(budget)}" + ("  OVER BUDGET" if wall > budget else ""))
        tr.write_line(f"tests/{layer}: {n} test{'' if n == 1 else 's'}, {_mmss(wall)}{note} (CPU: {_mmss(cpu)} here, "
                      f"{_mmss(kids)} in child processes)")
