"""The comparison's operators (TraceDiff): compare two runs and build their scene, switch
the tubes' colour mode, align B's focus on a call of A, brush the picked call.

Compare, Align and Brush run one job of the existing machinery (`common.JobOperator`):
`compare_scene_steps` = `session.compare_steps` (load both runs, compare; the last
comparison is reused while the files and τ are unchanged) then
`tasks.compare_build_steps` (layout in a worker, the scene in short main-thread steps), so
changing λ, the band, β, the focus windows or the brush and pressing Compare again only
rebuilds.  The colour mode needs no job: the tubes carry every mode's material index
(`tracevis3d.blender.tubes.set_tube_colour_mode`).
"""
from __future__ import annotations

import os
import time

from bpy.types import Operator

from .. import properties
from ..props import with_props
from ...tracevis3d.blender import session, tasks
from ...tracevis3d.jobs import Job
from ...tracevis3d.params.compare import TUBE_COLOR_ITEMS
from .common import JobOperator, abspath, reported, settings_of, trace_path_of

COLOUR_MODES = TUBE_COLOR_ITEMS


def resolve_calls(cmp, params: dict, calls: dict, align=None) -> dict:
    """``params`` with the brushed calls (index or function name, see
    `Comparison.find_call`) as call indices and, for ``align`` (a call of A), B's focus
    window on its matches: `layout.compare.call_options`, the command line's resolution too;
    ValueError naming the panel field."""
    from ...tracevis3d.layout.compare import call_options
    from ...tracevis3d.views import view

    asked = {**params, **calls, "align_a": align}
    if align is not None:
        asked["window_b"] = None  # the alignment sets it
    try:
        found = call_options(cmp, view("compare").make_params(asked))
    except ValueError as e:
        name, _, msg = str(e).partition(": ")
        schema = properties.VIEWS["compare"].SCHEMA
        raise ValueError(f"{schema[name].label if name in schema.by_name else name}: {msg}") from None
    out = {**params, "brush_a": found.get("brush_a"), "brush_b": found.get("brush_b")}
    if "window_b" in found:
        out["window_b"] = list(found["window_b"])
    return out


def compare_scene_steps(job, path_a, path_b, tau, params, calls, scene, align=None):
    """Compare (or reuse the last comparison), then build the comparison scene; the
    {"comparison", "params", "build"} of the job."""
    cmp = yield from session.compare_steps(job, path_a, path_b, tau, span=(0.0, 0.4), merge=bool(params.get("merge")))
    params = resolve_calls(cmp, params, calls, align)
    out = yield from tasks.compare_build_steps(job, cmp, params, scene, "TraceVis3D", (path_a, path_b),
                                               (0.4, 1.0), True)
    return {"comparison": cmp, "params": params, "build": out}


def compare_paths(context) -> tuple:
    """(trace A, trace B) of the panel, both checked to be traces (one line if not)."""
    from ...tracevis3d.io.sniff import check_trace_file

    settings = settings_of(context)
    a = trace_path_of(context)
    b = abspath(settings.compare_path)
    if not b:
        raise ValueError("no second trace: set the trace to compare with")
    check_trace_file(a)
    check_trace_file(b)
    return a, b


def compare_params(scene) -> tuple:
    """(the panel's CompareParams as a dict, the brushed calls {"brush_a", "brush_b"}).
    "Align to" is the Align button's, not Compare's (it sets B's focus window)."""
    names = [p.name for p in properties.VIEWS["compare"].SCHEMA if p.name != "align_a"]
    d = properties.params_of(scene, "compare", only=names).to_dict()
    calls = {"brush_a": d.pop("brush_a"), "brush_b": d.pop("brush_b")}
    return d, calls


def start_compare(op, context, align=None, what: str = "Compared"):
    """Start the compare-and-build job of the panel's settings for operator ``op``."""
    settings = settings_of(context)
    group = context.scene.tracevis3d_compare_params
    a, b = compare_paths(context)
    params, calls = compare_params(context.scene)
    tau = params["tau"]
    t0 = time.perf_counter()

    def done(context, result):
        cmp, p = result["comparison"], result["params"]
        if align is not None:  # the new focus of B goes into the panel
            group.use_window_b = True
            group.window_b_start, group.window_b_end = p["window_b"]
        m = result["build"]["meta"]
        text = (f"{cmp.n_pairs_total:,} call pairs above τ={tau:g}; {m.get('n_tubes', 0):,} tubes; no match: "
                f"{m.get('n_unmatched_a', 0):,} calls of A, {m.get('n_unmatched_b', 0):,} of B in view")
        settings.compare_summary = text
        from ...tracevis3d.blender.scene import frame_view

        frame_view(context)  # no-op headless
        return (f"{what} {os.path.basename(a)} with {os.path.basename(b)} in {time.perf_counter() - t0:.2f} s: "
                f"{text}")

    job = Job("compare", compare_scene_steps, a, b, tau, params, calls, context.scene, align)
    return op.start_job(context, job, done)


class TRACEVIS3D_OT_compare(JobOperator, Operator):
    """Compare the scene's trace (A) with a second run (B) and build the comparison scene: A's icicle above, B's below, a tube for every match (TraceDiff).  Again after changing parameters: rebuilds (the comparison is kept)"""

    bl_idname = "tracevis3d.compare"
    bl_label = "Compare"

    @reported
    def execute(self, context):
        return start_compare(self, context)


@with_props([("call", "String", dict(name="Call of A", default="", options={"SKIP_SAVE"},
                                     description="Index or function name of a call of A (default: the panel's "
                                                 "'Align to', else the picked call of A)"))])
class TRACEVIS3D_OT_compare_align(JobOperator, Operator):
    """Move B's focus window onto the matches of a call of A (TraceDiff's align) and rebuild"""

    bl_idname = "tracevis3d.compare_align"
    bl_label = "Align B"

    @reported
    def execute(self, context):
        settings = settings_of(context)
        group = context.scene.tracevis3d_compare_params
        call = self.call.strip() or group.align_a.strip()
        if not call and settings.picked_side == "a" and settings.picked_call >= 0:
            call = str(settings.picked_call)
        if not call:
            raise ValueError("no call to align: set 'Align to' (a call of A) or pick a call of A")
        group.align_a = call
        return start_compare(self, context, align=call, what="Aligned B of")


@with_props([("clear", "Bool", dict(name="Clear", default=False, options={"SKIP_SAVE"},
                                    description="Remove the brushing of both runs instead"))])
class TRACEVIS3D_OT_compare_brush(JobOperator, Operator):
    """Brush the picked call: only the groups rooted in its stack keep their colour (TraceDiff IV-E); rebuilds"""

    bl_idname = "tracevis3d.compare_brush"
    bl_label = "Brush Picked"

    @reported
    def execute(self, context):
        settings = settings_of(context)
        group = context.scene.tracevis3d_compare_params
        if self.clear:
            group.brush_a = group.brush_b = ""
        else:
            side = settings.picked_side
            if side not in ("a", "b") or settings.picked_call < 0:
                raise ValueError("no call of the comparison picked: Shift+Alt+D over a box or a tube first")
            setattr(group, f"brush_{side}", str(settings.picked_call))
        return start_compare(self, context, what="Brushed" if not self.clear else "Cleared the brush of")


@with_props([("mode", "Enum", dict(name="Mode", items=COLOUR_MODES, default="permutation"))])
class TRACEVIS3D_OT_compare_color_mode(Operator):
    """Colour the tubes by another measure (order changed, position seen from A or B, similarity, duration ratio) without a rebuild"""

    bl_idname = "tracevis3d.compare_color_mode"
    bl_label = "Tube Colour"
    bl_options = {"REGISTER", "UNDO"}

    @reported
    def execute(self, context):
        if properties.tube_object(context.scene) is None:
            raise ValueError("no comparison scene: press Compare first")
        properties.recolour_tubes(context.scene, self.mode)  # errors reported here, not in the update
        context.scene.tracevis3d_compare_params.color_by = self.mode  # its update finds the tubes recoloured
        return {"FINISHED"}


CLASSES = (
    TRACEVIS3D_OT_compare,
    TRACEVIS3D_OT_compare_align,
    TRACEVIS3D_OT_compare_brush,
    TRACEVIS3D_OT_compare_color_mode,
)
