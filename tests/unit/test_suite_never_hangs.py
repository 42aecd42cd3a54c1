"""The suite's own promise: a test that hangs fails alone, it never stops the run.  A child
pytest (this repository's pytest.ini: pytest-timeout on every test) runs a test blocked in
``zmq.Context.term()`` with a socket left open, the hang that once stopped CI, and a test blocked
in a sleep; both must fail with a timeout and the run must go on to the test after them."""
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]

HANGING = '''
import time
import pytest
import zmq


@pytest.mark.timeout(3)
def test_term_with_a_socket_open():
    ctx = zmq.Context()
    s = ctx.socket(zmq.PUSH)
    s.connect("tcp://127.0.0.1:9")  # nobody there: a queued message never leaves
    s.send(b"x")
    ctx.term()  # blocks for ever: the socket is still open


@pytest.mark.timeout(3)
def test_sleeps_for_ever():
    time.sleep(10_000)


def test_after_them():
    assert True
'''


def test_a_hanging_test_fails_alone_and_the_run_goes_on(tmp_path):
    (tmp_path / "test_hangs.py").write_text(HANGING)
    (tmp_path / "pytest.ini").write_text((REPO / "pytest.ini").read_text().replace("testpaths = tests", ""))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_hangs.py"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert "2 failed, 1 passed" in out and out.count("Timeout") >= 2, out
