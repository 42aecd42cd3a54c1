"""Driver run in a fresh Blender process by tests/blender/test_threads_operators.py (not a test module):

    python tests/support/threads_driver.py WORKDIR SPEC.json

Same user folders as tests/blender/test_extension.py's first run (extension installed, kernels warm):
enables the extension, draws the Threads panel, builds the thread view of the recorded
producer/consumer program (SPEC: {"trace"}) with the Threads operator, picks a curve with a
camera ray, asks who released the picked wait, focuses its thread and rebuilds.  Prints
{"steps": {...}} as its last line (the protocol of tests/support/extension_driver.py).
"""
import json
import pathlib
import sys

import extension_driver as drv  # beside this script: the first folder of a script's sys.path
from extension_driver import PKG, op_error, panel_calls, step


def main(work: str, spec_file: str) -> None:
    spec = json.loads(pathlib.Path(spec_file).read_text())
    import bpy
    import numpy as np

    @step("thr_enable")
    def _():
        bpy.ops.preferences.addon_enable(module=PKG)
        return hasattr(bpy.types.Scene, "tracevis3d_threads_params"), "enabled"

    ops = bpy.ops.tracevis3d
    s = bpy.context.scene.tracevis3d
    ts = bpy.context.scene.tracevis3d_threads_params

    @step("thr_panel_draws")
    def _():
        log = panel_calls(bpy)
        shown = {n for kind, d, n in log if kind == "prop" and d.bl_rna.identifier == "TraceVis3DThreadsSettings"}
        need = {"focus", "color_by", "threads", "hide_threads", "fold_mode", "fold_levels", "max_levels",
                "zero_radius", "focus_scale", "use_time_window", "time_window_start", "time_window_end", "window",
                "show_icicle"}
        buttons = {n for kind, _d, n in log if kind == "operator"}
        want = {"tracevis3d.threads", "tracevis3d.threads_focus_picked", "tracevis3d.threads_who_released"}
        return need <= shown and want <= buttons, f"missing {need - shown} {want - buttons}"

    @step("thr_errors_report")
    def _():
        s.trace_path = ""
        none = op_error(lambda: ops.threads())
        s.trace_path = spec["trace"]
        ts.focus = "nosuch"
        bad = op_error(lambda: ops.threads())
        ts.focus = ""
        s.picked_call = -1
        nopick = op_error(lambda: ops.threads_who_released())
        ok = none and "no trace" in none and bad and "no thread 'nosuch'" in bad and nopick and "picked" in nopick
        return ok, f"{none!r} {bad!r} {nopick!r}"

    @step("thr_build")
    def _():
        s.trace_path = spec["trace"]
        r = ops.threads()
        obs = {ob.get("tv3d_layer") for ob in bpy.data.collections["TraceVis3D"].objects}
        ok = r == {"FINISHED"} and {"ring", "corr", "wait_markers", "release_circles"} <= obs \
            and "hand-offs" in s.threads_summary
        return ok, f"{r} {sorted(o for o in obs if o)} {s.threads_summary!r}"

    @step("thr_pick_curve_and_who_released")
    def _():
        pick = __import__(f"{PKG}.tracevis3d.blender.pick", fromlist=["pick"])
        ob = next(o for o in bpy.data.collections["TraceVis3D"].objects if o.get("tv3d_layer") == "corr")
        me = ob.data
        c = np.empty(len(me.polygons) * 3, np.float32)
        me.polygons.foreach_get("center", c)
        cam = bpy.context.scene.camera.matrix_world.translation
        hits = []
        for p in c.reshape(-1, 3)[::7][:40]:
            d = np.asarray(p, float) - np.asarray(cam, float)
            hit = pick.pick_ray_detail(tuple(cam), tuple(d / np.linalg.norm(d)))
            if hit and hit["kind"] == "curve" and hit.get("corr_index", -1) >= 0:
                hits.append(hit)
        if not hits:
            return False, "no curve picked along rays through curve faces"
        hit = hits[0]
        ops.show_call(call_index=int(hit["wait_call"]))
        r = ops.threads_who_released()
        text = s.threads_picked_text
        return r == {"FINISHED"} and "released by" in text, f"{len(hits)} curve hits; {text!r}"

    @step("thr_focus_picked")
    def _():
        r = ops.threads_focus_picked()
        rec = json.loads(bpy.context.scene.get("tv3d_threads", "{}"))
        return r == {"FINISHED"} and ts.focus in ("consumer", "MainThread") \
            and rec.get("params", {}).get("focus") == ts.focus, f"{r} {ts.focus!r} {rec.get('params')}"


if __name__ == "__main__":
    drv.PROGRESS_FILE = pathlib.Path(sys.argv[2]).with_suffix(".progress.json")
    try:
        main(sys.argv[1], sys.argv[2])
    finally:
        print(json.dumps({"steps": drv.STEPS}), flush=True)
