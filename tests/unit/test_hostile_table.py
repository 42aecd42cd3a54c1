"""tools/hostile_table.py (issue 78's cases against its goal): each case runs in a fresh process
and its row says what that process did; its peak RSS is its own, not the memory of the process
that built the reproducers (a child forked from it started from that process's high-water mark)."""
from __future__ import annotations

import importlib.util
import pathlib

import pytest

pytestmark = pytest.mark.timeout(300)

TOOL = pathlib.Path(__file__).resolve().parents[2] / "tools" / "hostile_table.py"


def _tool():
    spec = importlib.util.spec_from_file_location("hostile_table", TOOL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_rows_say_what_each_fresh_process_did(tmp_path, capsys):
    tool = _tool()
    assert len({c[0] for c in tool.cases()}) == 31  # the 29 and two grown to 20 MB
    ballast = bytearray(300 << 20)  # this process's memory: no child's peak may start from it
    ballast[::4096] = b"x" * len(ballast[::4096])
    tool.main(["--only", "1", "6b", "8b", "--keep", str(tmp_path), "--timeout", "120"])
    rows = {r.split("|")[1].strip(): [c.strip() for c in r.split("|")[1:-1]]
            for r in capsys.readouterr().out.splitlines() if r.startswith("| ") and not r.startswith("| case")}
    assert sorted(rows) == ["1", "6b", "8b"], rows
    one = rows["1"][3]
    assert one.startswith(str(tmp_path / "case-1" / "input.prof") + ": no function takes time"), one
    assert rows["6b"][3] == "valid: 2 calls, 1 threads", rows["6b"]
    assert "ASCII digits, closed ranges" in rows["8b"][3] and rows["8b"][3].startswith("(exit 2)"), rows["8b"]
    for case, r in rows.items():
        assert 0 < float(r[6]) < 280, (case, r)  # MiB: the child's own (submit.py --dry-run: ~20)
    assert float(rows["8b"][6]) < 100, rows["8b"]
    del ballast
