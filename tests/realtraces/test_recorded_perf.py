"""``perf record -g`` of a C program built here, now, read through ``perf script`` against the
naive reading (tests/support/perf_twins.py).  Without perf or gcc, or where perf cannot record
(perf_event_paranoid), the test skips.  The shipped recordings: tests/unit/test_perf_script.py."""
import pathlib
import shutil
import subprocess

import pytest

from collapsed_twins import calls_of
from perf_twins import naive_perf

from tracevis3d.io import load

RECORDED = pathlib.Path(__file__).resolve().parents[1] / "data" / "formats" / "perf"


def test_real_recording_here(tmp_path):
    """perf record -g of a C program built here, when perf can record in this container."""
    if not (shutil.which("perf") and shutil.which("gcc")):
        pytest.skip("perf or gcc is not installed")
    exe = tmp_path / "prog"
    subprocess.run(["gcc", "-O1", "-g", "-fno-omit-frame-pointer", "-pthread", "-o", str(exe),
                    str(RECORDED / "prog.c")], check=True, capture_output=True)
    rec = subprocess.run(["perf", "record", "-g", "-F", "500", "-o", str(tmp_path / "p.data"), "--", str(exe)],
                         capture_output=True, text=True)
    if rec.returncode != 0:
        pytest.skip(f"perf record cannot record here (perf_event_paranoid?): {rec.stderr.strip()[-200:]}")
    out = subprocess.run(["perf", "script", "-i", str(tmp_path / "p.data")], capture_output=True, text=True)
    if not out.stdout.strip():
        pytest.skip("perf recorded no samples here")
    (tmp_path / "p.txt").write_text(out.stdout)
    t = load(tmp_path / "p.txt", warn=False)
    assert calls_of(t) == naive_perf(out.stdout)
    assert "leaf_work" in t.function_names
