"""The Threads panel and its operators inside real (headless) Blender with the installed
extension zip (a fresh process in the user folders of tests/test_extension.py's first run):
build the thread view, pick a curve, who released the picked wait, focus its thread."""
import json
import subprocess
import sys

import pytest

from extension_runs import check_step, run_driver

#: builds the zip or the wheel (they need the other interpreters' kernels): runs after the layer's other tests
pytestmark = pytest.mark.builds_packages

DRIVER = __import__("pathlib").Path(__file__).resolve().parents[1] / "support" / "threads_driver.py"
STEPS = ("thr_enable", "thr_panel_draws", "thr_errors_report", "thr_build", "thr_pick_curve_and_who_released",
         "thr_focus_picked")
_MEMO: dict = {}


@pytest.fixture(scope="module")
def threads_results(sync_program_path):
    first = run_driver()
    spec = first["work"] / "threads-spec.json"
    spec.write_text(json.dumps({"trace": str(sync_program_path)}))
    r = subprocess.run([sys.executable, str(DRIVER), str(first["work"]), str(spec)], capture_output=True,
                       text=True, timeout=1200, env=first["env"], cwd=str(first["work"]))
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{") and '"steps"' in ln]
    steps = json.loads(lines[-1])["steps"] if lines else {}
    if not lines:
        steps["thr_crashed"] = {"ok": False, "detail": f"exit {r.returncode}: {r.stderr[-2000:]}"}
    return {"steps": steps, "stderr": r.stderr}


@pytest.mark.blender
@pytest.mark.slow
@pytest.mark.parametrize("step", STEPS)
def test_threads_operator(threads_results, step):
    assert "thr_crashed" not in threads_results["steps"], threads_results["steps"]["thr_crashed"]
    check_step(threads_results, step)
