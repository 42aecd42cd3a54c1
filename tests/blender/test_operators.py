"""The extension's operators, run inside real (headless) Blender from the installed zip.

The operator steps run in the same fresh Blender process as the install test (see
tests/support/extension_driver.py): import a small real Chrome trace, build, frame, show a call,
render a small figure, save and reopen the .blend, and the error reports for bad input
(operator CANCELLED with an ERROR report naming the problem, never a traceback).
`test_saved_blend_reopens_in_a_fresh_process`: a .blend saved by the command line (``--save``)
or by the panel, its folder moved, reopened in a fresh Blender process: trace path and
parameters are back, Build and Show call work.
"""
import pytest

from extension_runs import check_step, run_driver, run_driver_compare, run_driver_real, run_driver_reopen

#: builds the zip or the wheel (they need the other interpreters' kernels): runs after the layer's other tests
pytestmark = pytest.mark.builds_packages

OPERATOR_STEPS = [
    "params_match_icicle_defaults",
    "op_bad_file_reports",
    "op_missing_file_reports",
    "op_build_without_trace_reports",
    "op_first_import_on_a_cold_cache",
    "op_import",
    "op_build",
    "op_build_removed_startup_objects",
    "op_build_keeps_user_objects",
    "op_frame",
    "op_show_call",
    "op_show_call_errors",
    "op_render",
    "op_render_relative_path_unsaved_blend",
    "op_render_bad_output_reports",
    "op_render_formats",
    "saved_blend_reopens",
    "load_post_tolerates_bad_records",
    "cli_via_extension",
    "op_import_and_build_tiny_trace",
    "pick_synthetic_ray",
    "op_structure_search_bookmark_cone",
    "op_live",
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


REOPEN_STEPS = [
    "reopen_cli_save",
    "reopen_cli_enable",
    "reopen_cli_open",
    "reopen_cli_trace_path",
    "reopen_cli_params",
    "reopen_cli_no_startup_objects",
    "reopen_cli_build",
    "reopen_cli_show_call",
    "reopen_cli_pick",
    "reopen_cli_panel_save",
    "reopen_cli_disable",
    "reopen_panel_enable",
    "reopen_panel_open",
    "reopen_panel_trace_path",
    "reopen_panel_params",
    "reopen_panel_no_startup_objects",
    "reopen_panel_build",
    "reopen_panel_show_call",
    "reopen_panel_pick",
    "reopen_panel_disable",
]


@pytest.mark.blender
@pytest.mark.slow
@pytest.mark.parametrize("step", REOPEN_STEPS)
def test_saved_blend_reopens_in_a_fresh_process(step):
    """Save with --save, reopen in a fresh process, Build and Show call work (issue 8)."""
    res = run_driver_reopen()
    crashed = [k for k in res["steps"] if k.endswith("_crashed")]
    assert not crashed, res["steps"][crashed[0]]["detail"]
    check_step(res, step)


COMPARE_STEPS = [
    "cmp_enable", "cmp_panels_draw", "cmp_params_match_compare_defaults", "cmp_op_errors_report",
    "cmp_op_compare", "cmp_colour_switch_without_rebuild", "cmp_rebuild_keeps_the_comparison",
    "cmp_pick_tube", "cmp_pick_box_of_b", "cmp_brush_picked", "cmp_align",
    "cmp_show_call_needs_a_viewport", "cmp_save", "cmp_disable",
    "cmp_reopen_enable", "cmp_reopen_open", "cmp_reopen_settings", "cmp_reopen_compare", "cmp_reopen_disable",
]


@pytest.mark.blender
@pytest.mark.slow
@pytest.mark.parametrize("step", COMPARE_STEPS)
def test_compare_operators(json_pair_paths, step):
    """The Compare panel: Compare, tube colour without a rebuild, picking a tube and a box of
    B, Brush, Align, errors; saved, moved and reopened in a fresh process (issue 11)."""
    res = run_driver_compare(json_pair_paths[:2])
    crashed = [k for k in res["steps"] if k.endswith("_crashed")]
    assert not crashed, res["steps"][crashed[0]]["detail"]
    check_step(res, step)
