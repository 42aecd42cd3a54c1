"""tools/failure_digest.py: the failures of pytest logs, a few lines each (the last lines of a
`make test` run, where CI's kept tail shows them)."""
import subprocess
import sys

import pytest

from tools.failure_digest import digest

LOG = """\
....F.E
=================================== FAILURES ===================================
________________ test_threads_trace_has_named_threads_and_waits ________________

path = 'x.json'
>       t = _load(path)
E       tracevis3d.model.TraceWarning: x.json: 2 calls stuck out
E       of their parent
tests/realtraces/test_realtraces.py:33: TraceWarning
__________________________________ test_other __________________________________
    def test_other():
        boom()
tests/x.py:3: in boom
==================================== ERRORS ====================================
_____________________ ERROR at setup of test_needs_a_thing _____________________
E   RuntimeError: could not record
=============================== warnings summary ===============================
E   not a failure: a warning's text
=========================== short test summary info ============================
FAILED tests/realtraces/test_realtraces.py::test_threads - tracevis3d...
2 failed, 4 passed, 1 error in 3.0s
"""


def test_each_failure_is_named_with_its_E_lines_or_its_report_tail():
    got = digest(LOG)
    assert [n for n, _ in got] == ["test_threads_trace_has_named_threads_and_waits", "test_other",
                                   "ERROR at setup of test_needs_a_thing"]
    assert got[0][1] == ["E       tracevis3d.model.TraceWarning: x.json: 2 calls stuck out",
                         "E       of their parent"]
    assert got[1][1][-1] == "tests/x.py:3: in boom"  # no E line: the end of its report
    assert got[2][1] == ["E   RuntimeError: could not record"]


def test_a_clean_log_has_none_and_lines_are_capped():
    assert digest("....\n5 passed in 1.0s\n") == []
    many = LOG.replace("E       of their parent", "\n".join(["E       more"] * 40))
    assert len(digest(many, max_lines=5)[0][1]) == 5


@pytest.mark.timeout(60)
def test_the_command_prints_them_last(tmp_path):
    log = tmp_path / "others.log"
    log.write_text(LOG)
    out = subprocess.run([sys.executable, "tools/failure_digest.py", str(log), str(tmp_path / "gone.log")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0
    lines = out.stdout.splitlines()
    assert lines[-1] == "== 3 failure(s) above, each whole in its log"
    assert any("gone.log: not read" in s for s in lines)
    assert "E       of their parent" in lines
