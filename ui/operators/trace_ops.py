"""The TraceVis3D operators: import, build, frame, render figure, cancel (the comparison's
are in compare_ops.py, picking in pick_ops.py).

Each one reads ``scene.tracevis3d`` and starts a job of the Blender layer
(`tracevis3d.blender.tasks`, through `common.JobOperator`: modal and cancellable in the UI,
run to its end headless) or calls `.scene`, `.pick` and the session cache; nothing else.
"""
from __future__ import annotations

import os
import time

from bpy.types import Operator

from .. import properties
from ..props import with_props
from ...tracevis3d.blender import tasks
from ...tracevis3d.io.formats import file_filter
from .common import JobOperator, abspath, reported, settings_of, trace_path_of

#: the file browser's filter: every readable format's file endings (`tracevis3d.io.formats`' table)
TRACE_FILTER = file_filter()


def _trace_summary(trace) -> str:
    return (f"{len(trace):,} calls, {trace.n_threads} thread{'s' if trace.n_threads != 1 else ''}, "
            f"{trace.n_functions:,} functions")


def count_objects(result) -> int:
    """Objects named in `build_icicle`'s result: {"objects": {layers, labels, camera, lights}}."""
    objs = result.get("objects") if isinstance(result, dict) else None
    if not isinstance(objs, dict):
        return 0
    n = 0
    for v in objs.values():
        if isinstance(v, (dict, list, tuple)):
            n += len(v)
        elif v:
            n += 1
    return n


def forget_expanded_calls(scene):
    """Empty every view's ``expand`` (call indices into the trace loaded until now: in another
    trace they would name other calls, or none)."""
    for view, cls in properties.VIEWS.items():
        if "expand" in cls.SCHEMA.by_name:
            p = cls.SCHEMA["expand"]
            group = properties.group_of(scene, view)
            p.kind.to_props(p, [], lambda name, v, group=group: setattr(group, name, v))


def start_import(op, context, path: str, build: bool, rebuild: bool = False):
    """Start the import job of ``path`` (``build``: and its icicle) for operator ``op``;
    ``rebuild``: report as the Build button does."""
    from ...tracevis3d.io.sniff import check_trace_file

    settings = settings_of(context)
    check_trace_file(path)  # a file that is no trace: one line, at once, before any job
    if os.path.realpath(path) != os.path.realpath(abspath(settings.trace_path) or os.devnull):
        forget_expanded_calls(context.scene)  # indices into the trace loaded before
    params = properties.params_of(context.scene, "icicle") if build else None
    t0 = time.perf_counter()

    def done(context, result):
        trace = result["trace"]
        settings.trace_path = path
        settings.picked_call, settings.picked_text, settings.picked_side = -1, "", ""
        dt = time.perf_counter() - t0
        if rebuild:
            return (f"Built the icicle of {_trace_summary(trace)} ({count_objects(result['build'])} objects) "
                    f"in {dt:.2f} s")
        msg = f"Loaded {os.path.basename(path)}: {_trace_summary(trace)} in {dt:.2f} s"
        if result["build"] is not None:
            from ...tracevis3d.blender.scene import frame_view

            frame_view(context)  # a new scene: look at it (no-op headless)
            msg += "; scene built"
        return msg

    return op.start_job(context, tasks.import_job(path, scene=context.scene, params=params, build=build), done)


@with_props([("filepath", "String", dict(name="File", subtype="FILE_PATH", options={"SKIP_SAVE"})),
             ("filter_glob", "String", dict(default=TRACE_FILTER, options={"HIDDEN"})),
             ("build", "Bool", dict(name="Build scene", default=True,
                                    description="Build the icicle scene right after loading"))])
class TRACEVIS3D_OT_import_trace(JobOperator, Operator):
    """Load a trace file into the scene: Chrome Trace Event JSON, Perfetto, speedscope, V8 .cpuprofile, Firefox, pprof, perf script, collapsed stacks, callgrind, native .npz or compact .tv3c (any of them gzip-compressed; `tracevis3d formats` lists them all)"""

    bl_idname = "tracevis3d.import_trace"
    bl_label = "Import Trace"
    bl_options = {"REGISTER"}

    def invoke(self, context, _event):
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    @reported
    def execute(self, context):
        path = abspath(self.filepath)
        if not path:
            raise ValueError("no file chosen")
        return start_import(self, context, path, self.build)


class TRACEVIS3D_OT_build(JobOperator, Operator):
    """Build (or rebuild) the 3D icicle of the scene's trace with the current parameters"""

    bl_idname = "tracevis3d.build"
    bl_label = "Build"
    bl_options = {"REGISTER"}

    @reported
    def execute(self, context):
        return start_import(self, context, trace_path_of(context), True, rebuild=True)


class TRACEVIS3D_OT_cancel_job(Operator):
    """Cancel the running TraceVis3D job (load, build, compare, render); nothing half-built stays"""

    bl_idname = "tracevis3d.cancel_job"
    bl_label = "Cancel"

    def execute(self, context):
        if not tasks.QUEUE.busy():
            self.report({"INFO"}, "No TraceVis3D job is running")
            return {"CANCELLED"}
        name = tasks.QUEUE.current.name
        tasks.QUEUE.cancel_all()
        self.report({"INFO"}, f"TraceVis3D: cancelling {name}")
        return {"FINISHED"}


class TRACEVIS3D_OT_frame(Operator):
    """Point the camera (and the 3D views) at the whole icicle"""

    bl_idname = "tracevis3d.frame"
    bl_label = "Frame"
    bl_options = {"REGISTER", "UNDO"}

    @reported
    def execute(self, context):
        from ...tracevis3d.blender.scene import frame_view

        frame_view(context)
        return {"FINISHED"}


@with_props([("filepath", "String", dict(name="Output", subtype="FILE_PATH", options={"SKIP_SAVE"},
                                         description="Output image, .png, .jpg, .exr or .tif "
                                                     "(default: the Output setting of the panel)"))])
class TRACEVIS3D_OT_render_figure(JobOperator, Operator):
    """Render the scene to an image (.png, .jpg, .exr, .tif) with the chosen engine, background and samples, at the resolution the scene was built with"""

    bl_idname = "tracevis3d.render_figure"
    bl_label = "Render Figure"

    @reported
    def execute(self, context):
        from ...tracevis3d.blender.render import check_output

        settings = settings_of(context)
        opts = properties.render_options(settings)
        path = abspath(self.filepath or opts["output"] or properties.DEFAULT_OUTPUT)
        if not path:
            raise ValueError("no output file: set the render Output path")
        if os.path.isdir(path):
            raise ValueError(f"output path is a folder, not a file: {path}")
        if not os.path.splitext(path)[1]:
            path += ".png"  # no extension: PNG
        check_output(path, opts["transparent"])  # the extension names the format
        folder = os.path.dirname(path)
        os.makedirs(folder, exist_ok=True)
        if not os.access(folder, os.W_OK):
            raise OSError(f"cannot write into {folder}")
        if context.scene.camera is None:
            raise ValueError("the scene has no camera: build the icicle first")
        t0 = time.perf_counter()
        render = context.scene.render  # the resolution the scene was built with
        job = tasks.render_job(path, scene=context.scene, engine=opts["engine"],
                               resolution=(render.resolution_x, render.resolution_y),
                               transparent=opts["transparent"], samples=opts["samples"], device=opts["device"])
        return self.start_job(context, job, lambda _c, out: f"Rendered {out} in {time.perf_counter() - t0:.1f} s")


CLASSES = (
    TRACEVIS3D_OT_import_trace,
    TRACEVIS3D_OT_build,
    TRACEVIS3D_OT_cancel_job,
    TRACEVIS3D_OT_frame,
    TRACEVIS3D_OT_render_figure,
)
