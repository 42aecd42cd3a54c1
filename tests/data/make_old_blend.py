"""Makes tests/data/old_session.blend and its trace with the add-on of the PREVIOUS version
(commit 83e0e5d, before the parameter schemas of issue 22): the fixture of
tests/test_ui_legacy.py.  Not a test; run it by hand (the old add-on importable as the
package ``tv3d_old``)::

    git worktree add /tmp/old 83e0e5d
    mkdir -p /tmp/oldpkg && ln -sfn /tmp/old /tmp/oldpkg/tv3d_old
    PYTHONPATH=/tmp/oldpkg NUMBA_CACHE_DIR=build/numba-cache python tests/data/make_old_blend.py tests/data

It synthesises a small two-thread trace (``tracevis3d.io.synthesis``, seed 7), writes it as
``old_session_trace.json.gz``, sets non-default values in every old property group (the
values `OLD_VALUES` lists, which the test checks after the new version migrated them),
builds the icicle with the old Build operator and saves ``old_session.blend`` (compressed,
the trace path relative to it).
"""
import os
import sys

import bpy

#: (group, property) -> value set through the OLD add-on's properties
OLD_VALUES = {
    ("tracevis3d", "extrude_measure"): "inclusive",
    ("tracevis3d", "color_by"): "depth",
    ("tracevis3d", "thread_order"): "name",
    ("tracevis3d", "fold_mode"): "levels",
    ("tracevis3d", "fold_levels"): "1:2",
    ("tracevis3d", "hide_modules"): "app.util",
    ("tracevis3d", "use_max_depth"): True,
    ("tracevis3d", "max_depth"): 12,
    ("tracevis3d", "resolution_x"): 1280,
    ("tracevis3d", "resolution_y"): 720,
    ("tracevis3d", "cluster_px"): 2.0,
    ("tracevis3d", "label_px"): 20.0,
    ("tracevis3d", "lane_gap_auto"): False,
    ("tracevis3d", "lane_gap"): 3.0,
    ("tracevis3d", "show_axes"): False,
    ("tracevis3d", "title"): "An old scene",
    ("tracevis3d", "render_engine"): "BLENDER_EEVEE",
    ("tracevis3d", "render_samples"): 4,
    ("tracevis3d", "render_transparent"): True,
    ("tracevis3d", "compare_tau"): 0.35,
    ("tracevis3d", "compare_lam"): 0.5,
    ("tracevis3d", "compare_band"): 6.0,
    ("tracevis3d", "compare_color_by"): "trace",
    ("tracevis3d", "compare_viewpoint"): "b",
    ("tracevis3d", "compare_all_tubes"): True,
    ("tracevis3d", "compare_thread_a"): "1",
    ("tracevis3d", "use_compare_window_b"): True,
    ("tracevis3d", "compare_window_b_start"): 10.0,
    ("tracevis3d", "compare_window_b_end"): 900.0,
    ("tracevis3d", "compare_show_overview"): False,
    ("tracevis3d", "live_window_ms"): 250.0,
    ("tracevis3d_structure", "hide_utilities"): 2,
    ("tracevis3d_structure", "highlight"): "^app",
    ("tracevis3d_structure", "search_pattern"): "util",
    ("tracevis3d_structure", "cone_max_nodes"): 50,
    ("tracevis3d_structure", "cone_orientation"): "horizontal",
    ("tracevis3d_structure", "cone_fold_recursion"): False,
    ("tracevis3d_threads", "focus"): "0",
    ("tracevis3d_threads", "color_by"): "thread",
    ("tracevis3d_threads", "fold"): "none",
    ("tracevis3d_threads", "max_levels"): 9,
    ("tracevis3d_threads", "focus_scale"): 3.0,
    ("tracevis3d_threads", "use_window"): True,
    ("tracevis3d_threads", "window_start"): 0.5,
    ("tracevis3d_threads", "window_end"): 2.5,
    ("tracevis3d_threads", "show_icicle"): False,
}


def main(out_dir: str) -> None:
    import tv3d_old
    from tv3d_old.tracevis3d.io.chrome_writer import save_chrome
    from tv3d_old.tracevis3d.io.synthesis import synthetic_trace

    out_dir = os.path.abspath(out_dir)
    trace_path = os.path.join(out_dir, "old_session_trace.json.gz")
    blend_path = os.path.join(out_dir, "old_session.blend")
    save_chrome(synthetic_trace(400, threads=2, seed=7), trace_path, gzip_level=9)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    tv3d_old.register()
    scene = bpy.context.scene
    for (group, prop), value in OLD_VALUES.items():
        setattr(getattr(scene, group), prop, value)
    bpy.ops.wm.save_as_mainfile(filepath=blend_path)  # '//' paths need the .blend's folder
    scene.tracevis3d.trace_path = "//" + os.path.basename(trace_path)  # moves with the .blend
    if bpy.ops.tracevis3d.build() != {"FINISHED"}:
        sys.exit("the old Build failed")
    scene.tracevis3d.trace_path = "//" + os.path.basename(trace_path)  # Build made it absolute
    bpy.ops.wm.save_as_mainfile(filepath=blend_path, compress=True, relative_remap=True)
    print(f"wrote {blend_path} ({os.path.getsize(blend_path):,} bytes) and {trace_path}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__))
