"""The EXTRAVIS operator (who calls whom, and when): build the view of the scene's trace with the
panel's EXTRAVIS fields (``scene.tracevis3d_extravis_params``).  Thin: it reads the fields,
takes the time window from the handles when the user moved them
(`tracevis3d.blender.extravis_tasks.window_from_handles`, written back into the panel's Time
window), and runs the same build job as ``render-extravis`` / ``render-heb`` /
``render-sequence`` through `common.JobOperator` (non-blocking in the UI)."""
from __future__ import annotations

import os
import time

import bpy
from bpy.types import Operator

from .. import properties
from ..props import with_props
from ...tracevis3d.blender import session
from ...tracevis3d.jobs import Job
from .common import JobOperator, reported, trace_path_of

VIEW_ITEMS = (("both", "Both Views", "The circular bundle view and the massive sequence view side by side"),
              ("heb", "Bundles", "The circular bundle view alone (who calls whom)"),
              ("sequence", "Sequence", "The massive sequence view alone (every call a row)"))


def extravis_steps(job, path, params, scene, views):
    """Load the scene's trace (cached) and build its EXTRAVIS view."""
    from ...tracevis3d.blender.extravis_tasks import extravis_build_steps

    trace = yield from session.load_steps(job, path, (0.0, 0.3))
    out = yield from extravis_build_steps(job, trace, params, scene, "TraceVis3D", path, (0.3, 1.0), views)
    return out


def handles_window(scene, params) -> tuple | None:
    """The window the moved handles say (`window_from_handles`), when the panel's Time window
    is still the one the scene was built with (a window typed into the panel wins), else None."""
    from ...tracevis3d.blender.extravis_tasks import read_extravis_record, window_from_handles

    rec = read_extravis_record(scene)
    built = rec["params"].time_window if rec is not None else None
    if built is None or params.time_window is None:
        return None
    if any(abs(a - b) > 1e-6 * max(abs(b), 1.0) for a, b in zip(params.time_window, built)):
        return None
    return window_from_handles(scene)


@with_props([("views", "Enum", dict(name="Views", default="both", items=VIEW_ITEMS,
                                    description="Which of EXTRAVIS' two views to build"))])
class TRACEVIS3D_OT_extravis(JobOperator, Operator):
    """Build who calls whom, and when (EXTRAVIS) of the scene's trace with the EXTRAVIS section's parameters; a moved window handle sets the time window"""

    bl_idname = "tracevis3d.extravis"
    bl_label = "Who Calls Whom"

    @reported
    def execute(self, context):
        path = trace_path_of(context)
        scene = context.scene
        moved = handles_window(scene, properties.params_of(scene, "extravis"))
        if moved is not None:  # the window follows the handles: into the panel's field, then built
            g = properties.group_of(scene, "extravis")
            g.use_time_window, g.time_window_start, g.time_window_end = True, *moved
        params = properties.params_of(scene, "extravis")
        t0 = time.perf_counter()

        def done(_context, result):
            m = result["meta"]
            what = {"both": f"{m['n_tubes']:,} relation tubes, {m['n_calls']:,} calls as rows",
                    "heb": f"{m['n_tubes']:,} relation tubes of {m['n_calls']:,} calls",
                    "sequence": f"{m['n_calls']:,} calls as rows"}[m.get("views", "both")]
            window = " (window from the handles)" if moved is not None else ""
            return f"Who calls whom in {os.path.basename(path)}: {what}{window} in {time.perf_counter() - t0:.2f} s"

        return self.start_job(context, Job("EXTRAVIS view", extravis_steps, path, params, scene, self.views), done)


def element_pattern(dotted: str) -> str:
    """The highlight regex of exactly one hierarchy element (its subtree and ancestors light
    with it, `layout.extravis.lit_elements`)."""
    import re

    return f"^{re.escape(dotted)}$"


HIGHLIGHT_ITEMS = (("picked", "Picked", "Light the calls from and to the element last picked with Show Call"),
                   ("add", "Add Picked", "Light the picked element's calls too, keeping those already lit"),
                   ("clear", "Clear", "Light every call again"))


@with_props([("mode", "Enum", dict(name="Mode", default="picked", items=HIGHLIGHT_ITEMS,
                                   description="What to highlight"))])
class TRACEVIS3D_OT_extravis_highlight(Operator):
    """Highlight the element last picked with Show Call (its calls lit in both EXTRAVIS views, the others pale), add it to those lit, or clear the highlight; then rebuild the view shown"""

    bl_idname = "tracevis3d.extravis_highlight"
    bl_label = "Highlight Element"

    @reported
    def execute(self, context):
        import dataclasses

        scene = context.scene
        params = properties.params_of(scene, "extravis")
        if self.mode == "clear":
            patterns = []
        else:
            picked = scene.tracevis3d.picked_element
            if not picked:
                raise ValueError("no element picked: Show Call (Shift+Alt+D) on a ring sector or an icicle box of "
                                 "the EXTRAVIS view first")
            mine = element_pattern(picked)
            patterns = ([p for p in params.highlight if p != mine] if self.mode == "add" else []) + [mine]
        properties.put_params(scene, "extravis", dataclasses.replace(params, highlight=patterns), only={"highlight"})
        started = rebuild_shown_views(scene)
        return {"FINISHED"} if started & {"FINISHED", "RUNNING_MODAL"} else {"CANCELLED"}


def rebuild_shown_views(scene) -> set:
    """Run the EXTRAVIS build (`TRACEVIS3D_OT_extravis`, its own job: modal in the UI) for
    the views the scene shows (its record's; both without one); the operator's result."""
    from ...tracevis3d.blender.extravis_tasks import read_extravis_record

    rec = read_extravis_record(scene)
    return bpy.ops.tracevis3d.extravis("EXEC_DEFAULT", views=rec["views"] if rec is not None else "both")


CLASSES = (TRACEVIS3D_OT_extravis, TRACEVIS3D_OT_extravis_highlight)
