"""The TraceVis3D operators: import, build, frame, render figure, show call under the mouse.

Each one reads ``scene.tracevis3d`` and calls the Blender layer
(`tracevis3d.blender.scene`, `.render`, `.pick`) or the session cache; nothing else.
"""
from __future__ import annotations

import json
import os
import time

import bpy
from bpy.props import BoolProperty, IntProperty, StringProperty
from bpy.types import Operator

from .. import properties
from ..tracevis3d.blender import session
from .common import Progress, abspath, loading_text, reported, settings_of, trace_path_of

TRACE_FILTER = "*.json;*.json.gz;*.gz;*.npz"


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


def build_scene(context, trace, settings, progress=None, trace_path=None) -> dict:
    """Build the icicle of ``trace`` with the scene's parameters (shared by Import and Build).

    Blender's startup Cube, Light and Camera go first when they are untouched (a fresh file);
    nothing the user made or edited is removed.
    """
    from ..tracevis3d.blender.hygiene import remove_startup_defaults
    from ..tracevis3d.blender.scene import build_icicle
    from ..tracevis3d.layout.params import IcicleParams

    params = IcicleParams.from_dict(properties.icicle_params_dict(settings))
    remove_startup_defaults(context.scene)
    return build_icicle(trace, params, progress=progress, scene=context.scene,
                        trace_path=trace_path or abspath(settings.trace_path) or None)


class TRACEVIS3D_OT_import_trace(Operator):
    """Load a trace file (Chrome Trace Event JSON, .json.gz or native .npz) into the scene"""

    bl_idname = "tracevis3d.import_trace"
    bl_label = "Import Trace"
    bl_options = {"REGISTER", "UNDO"}

    filepath: StringProperty(name="File", subtype="FILE_PATH", options={"SKIP_SAVE"})
    filter_glob: StringProperty(default=TRACE_FILTER, options={"HIDDEN"})
    build: BoolProperty(name="Build scene", default=True,
                        description="Build the icicle scene right after loading")

    def invoke(self, context, _event):
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    @reported
    def execute(self, context):
        settings = settings_of(context)
        path = abspath(self.filepath)
        if not path:
            raise ValueError("no file chosen")
        t0 = time.perf_counter()
        progress = Progress(context, "Import trace")
        try:
            progress(0.0, loading_text())
            trace = session.get_trace(path)
        finally:
            progress.end()
        settings.trace_path = path
        settings.picked_call, settings.picked_text = -1, ""
        msg = f"Loaded {os.path.basename(path)}: {_trace_summary(trace)} in {time.perf_counter() - t0:.2f} s"
        if self.build:
            progress = Progress(context, "Building icicle")
            try:
                build_scene(context, trace, settings, progress, trace_path=path)
            finally:
                progress.end()
            from ..tracevis3d.blender.scene import frame_view

            frame_view(context)  # a new scene: look at it (no-op headless)
            msg += "; scene built"
        self.report({"INFO"}, msg)
        return {"FINISHED"}


class TRACEVIS3D_OT_build(Operator):
    """Build (or rebuild) the 3D icicle of the scene's trace with the current parameters"""

    bl_idname = "tracevis3d.build"
    bl_label = "Build"
    bl_options = {"REGISTER", "UNDO"}

    @reported
    def execute(self, context):
        settings = settings_of(context)
        path = trace_path_of(context)
        progress = Progress(context, "Building icicle")
        try:
            progress(0.0, loading_text())
            trace = session.get_trace(path)
            t0 = time.perf_counter()
            result = build_scene(context, trace, settings, progress, trace_path=path)
        finally:
            progress.end()
        n_objects = count_objects(result)
        self.report({"INFO"}, f"Built the icicle of {_trace_summary(trace)} "
                              f"({n_objects} objects) in {time.perf_counter() - t0:.2f} s")
        return {"FINISHED"}


class TRACEVIS3D_OT_frame(Operator):
    """Point the camera (and the 3D views) at the whole icicle"""

    bl_idname = "tracevis3d.frame"
    bl_label = "Frame"
    bl_options = {"REGISTER", "UNDO"}

    @reported
    def execute(self, context):
        from ..tracevis3d.blender.scene import frame_view

        frame_view(context)
        return {"FINISHED"}


class TRACEVIS3D_OT_render_figure(Operator):
    """Render the scene to an image (.png, .jpg, .exr, .tif) with the chosen engine, resolution and background"""

    bl_idname = "tracevis3d.render_figure"
    bl_label = "Render Figure"

    filepath: StringProperty(name="Output", subtype="FILE_PATH", options={"SKIP_SAVE"},
                             description="Output image, .png, .jpg, .exr or .tif "
                                         "(default: the Output setting of the panel)")

    @reported
    def execute(self, context):
        from ..tracevis3d.blender.render import check_output, render_figure

        settings = settings_of(context)
        path = abspath(self.filepath or settings.render_output)
        if not path:
            raise ValueError("no output file: set the render Output path")
        if os.path.isdir(path):
            raise ValueError(f"output path is a folder, not a file: {path}")
        if not os.path.splitext(path)[1]:
            path += ".png"  # no extension: PNG
        check_output(path, settings.render_transparent)  # the extension names the format
        folder = os.path.dirname(path)
        os.makedirs(folder, exist_ok=True)
        if not os.access(folder, os.W_OK):
            raise OSError(f"cannot write into {folder}")
        progress = Progress(context, "Rendering figure")
        try:
            t0 = time.perf_counter()
            out = render_figure(
                path,
                engine=settings.render_engine,
                resolution=(settings.resolution_x, settings.resolution_y),
                transparent=settings.render_transparent,
                samples=settings.render_samples or None,
            )
            progress(1.0, "done")
        finally:
            progress.end()
        self.report({"INFO"}, f"Rendered {out} in {time.perf_counter() - t0:.1f} s")
        return {"FINISHED"}


def format_call(d: dict) -> str:
    """Multi-line text of `describe_call`'s dict (one 'key: value' per line)."""
    lines = []
    for key, value in d.items():
        if isinstance(value, float):
            value = f"{value:,.3f}"
        elif isinstance(value, (dict, list, tuple)):
            value = json.dumps(value, ensure_ascii=False, default=str)
            if len(value) > 200:
                value = value[:199] + "…"
        lines.append(f"{str(key).replace('_', ' ')}: {value}")
    return "\n".join(lines)


class TRACEVIS3D_OT_show_call(Operator):
    """Show the call under the mouse: name, thread, start, duration, self time, depth, args"""

    bl_idname = "tracevis3d.show_call"
    bl_label = "Show Call Under Mouse"

    call_index: IntProperty(name="Call", default=-1, min=-1, options={"SKIP_SAVE"},
                            description="Call to show (-1: the call under the mouse)")
    mouse_x: IntProperty(default=-1, options={"SKIP_SAVE", "HIDDEN"})
    mouse_y: IntProperty(default=-1, options={"SKIP_SAVE", "HIDDEN"})

    @reported
    def invoke(self, context, event):
        if self.call_index < 0 and self.mouse_x < 0:
            self.mouse_x, self.mouse_y = event.mouse_region_x, event.mouse_region_y
        return self.execute(context)

    @reported
    def execute(self, context):
        from ..tracevis3d.blender.pick import describe_call, pick_call

        settings = settings_of(context)
        trace = session.get_trace(trace_path_of(context))
        i = self.call_index
        if i < 0:
            if self.mouse_x < 0 or self.mouse_y < 0:
                raise ValueError("no mouse position: run this from the 3D viewport (Shift+Alt+D) "
                                 "or give a call index")
            if context.region is None or context.region_data is None:
                raise ValueError("the mouse is not over a 3D viewport")
            i = pick_call(context, (self.mouse_x, self.mouse_y))
            if i is None:
                self.report({"INFO"}, "No call under the mouse")
                return {"CANCELLED"}
        if not 0 <= i < len(trace):
            raise ValueError(f"call index {i} out of range: the trace has {len(trace):,} calls")
        d = describe_call(trace, int(i))
        text = format_call(d)
        settings.picked_call, settings.picked_text = int(i), text
        summary = "; ".join([ln for ln in text.splitlines() if not ln.startswith("index:")][:6])
        self.report({"INFO"}, f"Call {i}: {summary}")
        if not bpy.app.background and context.window_manager is not None:
            def draw(menu, _context):
                for line in text.splitlines():
                    menu.layout.label(text=line)

            context.window_manager.popup_menu(draw, title=str(d.get("name", f"call {i}")), icon="INFO")
        return {"FINISHED"}


CLASSES = (
    TRACEVIS3D_OT_import_trace,
    TRACEVIS3D_OT_build,
    TRACEVIS3D_OT_frame,
    TRACEVIS3D_OT_render_figure,
    TRACEVIS3D_OT_show_call,
)
