"""The extension's operators, run inside real (headless) Blender from the installed zip.

The operator steps run in the same fresh Blender process as the install test (see
tests/test_extension_driver.py): import a small real Chrome trace, build, frame, show a call,
render a small figure, save and reopen the .blend, and the error reports for bad input
(operator CANCELLED with an ERROR report naming the problem, never a traceback).
"""
import pytest

from test_extension import check_step, run_driver, run_driver_real

OPERATOR_STEPS = [
    "params_match_icicle_defaults",
    "op_bad_file_reports",
    "op_missing_file_reports",
    "op_build_without_trace_reports",
    "op_import",
    "op_build",
    "op_frame",
    "op_show_call",
    "op_show_call_errors",
    "op_render",
    "op_render_relative_path_unsaved_blend",
    "op_render_bad_output_reports",
    "saved_blend_reopens",
    "cli_via_extension",
    "op_import_and_build_tiny_trace",
    "pick_synthetic_ray",
    "nothing_written_into_the_addon_folder",
]


@pytest.fixture(scope="module")
def driver_results():
    return run_driver()


@pytest.mark.blender
@pytest.mark.slow
@pytest.mark.parametrize("step", OPERATOR_STEPS)
def test_operator(driver_results, step):
    check_step(driver_results, step)


REAL_STEPS = [
    "real_enable",
    "real_import_build_json",
    "real_render_workbench",
    "real_render_eevee",
    "real_show_call",
    "real_native_npz",
    "real_import_build_gz",
    "real_disable",
]


@pytest.mark.blender
@pytest.mark.slow
@pytest.mark.parametrize("step", REAL_STEPS)
def test_operator_on_real_traces(realdata, step):
    """VizTracer JSON (5 threads), its native .npz, and a PyTorch profiler .json.gz."""
    check_step(run_driver_real(realdata), step)
