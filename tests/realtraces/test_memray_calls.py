"""The memory view with the calls of the same run (``render-memory --trace``): py-spy samples the
program that ``memray run`` runs (one process, two recorders that do not share a profile hook),
and `layout.memory.align_calls` puts the calls on the capture's clock."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from memray_captures import POOL_PROGRAM, memray_available

pytestmark = pytest.mark.skipif(not memray_available() or not shutil.which("py-spy", path=os.path.dirname(
    sys.executable) + os.pathsep + os.environ.get("PATH", "")), reason="needs memray and py-spy")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("both")
    prog = folder / "thread_pool.py"
    prog.write_text(POOL_PROGRAM)
    spy = shutil.which("py-spy", path=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    r = subprocess.run([spy, "record", "--format", "chrometrace", "-r", "500", "-o", str(folder / "calls.json"), "--",
                        sys.executable, "-m", "memray", "run", "-q", "-f", "-o", str(folder / "run.bin"), str(prog)],
                       cwd=folder, capture_output=True, text=True, timeout=300)
    if r.returncode != 0 or not (folder / "calls.json").exists():
        pytest.skip(f"py-spy could not sample here (ptrace?): {r.stderr.strip()[-300:]}")
    return folder / "run.bin", folder / "calls.json"


@pytest.mark.timeout(600)
def test_calls_are_aligned_on_the_programs_own_first_frame(run):
    import tracevis3d
    from tracevis3d.layout.memory import align_calls, memory_layout

    cap = tracevis3d.load_memory(run[0])
    calls = tracevis3d.load(run[1])
    strip = align_calls(cap, calls, cap.duration_ms)
    assert strip["how"] == "first call and first allocation in thread_pool.py"
    # the program's first call lands on its first allocation: py-spy started the process, so its
    # clock starts before memray's tracker, never after
    own = np.isin(calls.func, [i for i, f in enumerate(calls.function_files) if f.endswith("thread_pool.py")])
    first_call_ms = (float(calls.start[own].min()) - strip["offset_us"]) / 1000.0
    assert strip["offset_us"] >= 0.0 and 0.0 <= first_call_ms <= cap.duration_ms
    assert strip["depth"].size > 0 and np.all(strip["x1"] >= strip["x0"])
    spec = memory_layout(cap, calls=calls)
    lay = spec.layer("memory_calls")
    assert len(lay) == strip["depth"].size
    bands = spec.layer("memory_bands")
    assert lay.positions[:, 2].min() > bands.positions[:, 2].max(), "the calls sit above the bands"
    assert spec.meta["calls_alignment"] == strip["how"]
