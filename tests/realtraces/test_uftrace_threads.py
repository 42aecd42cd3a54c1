"""uftrace's Chrome JSON (``uftrace dump --chrome``) names each task by metadata of a
"process" whose pid is the task's id, while the task's events carry the real process as pid
and the task as tid: the lanes are named by that metadata, not by bare tids."""
from __future__ import annotations

import json
import pathlib

import pytest

from tracevis3d.io import load, load_bytes

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "formats"


def _names(trace) -> list:
    return list(trace.thread_names)


def test_the_recorded_uftrace_lanes_carry_the_tasks_names():
    p = DATA / "recorded" / "uftrace" / "uftrace.json.gz"
    if not p.exists():
        pytest.skip(f"{p} not shipped")
    t = load(p, warn=False)
    assert _names(t) == ["[14307] native_work_pg", "[14310] native_work_pg", "[14311] native_work_pg"]


def test_a_process_named_by_a_threads_id_names_that_thread_only_when_it_has_no_name():
    ev = [{"ph": "M", "pid": 7, "name": "process_name", "args": {"name": "main proc"}},
          {"ph": "M", "pid": 8, "name": "process_name", "args": {"name": "[8] worker"}},
          {"ph": "M", "pid": 9, "name": "process_name", "args": {"name": "[9] other"}},
          {"ph": "M", "pid": 7, "tid": 9, "name": "thread_name", "args": {"name": "named"}},
          {"ph": "X", "pid": 7, "tid": 7, "ts": 0, "dur": 5, "name": "a"},
          {"ph": "X", "pid": 7, "tid": 8, "ts": 0, "dur": 5, "name": "b"},
          {"ph": "X", "pid": 7, "tid": 9, "ts": 0, "dur": 5, "name": "c"},
          {"ph": "X", "pid": 7, "tid": 10, "ts": 0, "dur": 5, "name": "d"}]
    t = load_bytes(json.dumps({"traceEvents": ev}).encode(), source="u.json", warn=False)
    # 7: the process's own main thread keeps its tid; 8: named by the task's metadata; 9: its
    # thread_name wins; 10: nothing names it
    assert _names(t) == ["7", "[8] worker", "named", "10"]
