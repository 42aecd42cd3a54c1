"""The Animate section's operators: set up an animation of the figure in the open
scene (the same `blender.animate.animate_scene` the command line's ``render-animation``
calls), remove it, and render it (PNG frames into a folder, or a video by its extension)."""
from __future__ import annotations

import os
import time

import bpy
from bpy.types import Operator

from .. import properties
from ..props import with_props
from .common import JobOperator, abspath, reported, settings_of, trace_path_of


def _thread_view_ends(context):
    """The call end times of the thread view's trace (its hand-offs and ring names are timed
    by them), or None when the scene is not a thread view or its trace is not in the session."""
    import json

    from ...tracevis3d.blender import session
    from ...tracevis3d.blender.animate import META_KEY

    if json.loads(context.scene.get(META_KEY, "{}")).get("layout") != "threads":
        return None
    try:  # the one the build kept (loading it here would block the UI)
        trace = session.cached_trace(session.file_key(trace_path_of(context)))
    except (ValueError, OSError):
        return None
    return None if trace is None else trace.end


class TRACEVIS3D_OT_animate(JobOperator, Operator):
    """Animate the figure in this scene (growth, fly-through, turntable, a comparison's reveal, the thread view's hand-offs) as keyframes and Geometry Nodes: play it with the timeline (Space)"""

    bl_idname = "tracevis3d.animate"
    bl_label = "Set Up Animation"
    bl_options = {"REGISTER", "UNDO"}

    @reported
    def execute(self, context):
        from ...tracevis3d.blender.animate import animate_job

        o = properties.animation_options(settings_of(context))
        # a job (`JobOperator`): a fly-through into a window lays its refinement levels out in a worker
        job = animate_job(context.scene, o["kind"], o["seconds"], o["fps"], o["easing"],
                          reveal_order=o["reveal_order"], call_end=_thread_view_ends(context),
                          zoom_window=o["zoom_window"] if o["kind"] == "flythrough" else None,
                          zoom_levels=o["zoom_levels"])

        def done(_context, info):
            return (f"{info['kind']}: frames 1-{info['frames'][1]} at {o['fps']} fps; play with Space, render with "
                    "Render Animation")

        return self.start_job(context, job, done)


class TRACEVIS3D_OT_clear_animation(Operator):
    """Remove the figure's animation (modifiers, keyframes, the now line); the still figure stays"""

    bl_idname = "tracevis3d.clear_animation"
    bl_label = "Remove Animation"
    bl_options = {"REGISTER", "UNDO"}

    @reported
    def execute(self, context):
        from ...tracevis3d.blender.animate import clear_animation

        clear_animation(context.scene)
        context.scene.frame_set(context.scene.frame_start)
        return {"FINISHED"}


@with_props([("filepath", "String", dict(name="Output", subtype="FILE_PATH", options={"SKIP_SAVE"},
                                         description="A folder for frame_0001.png, … or a video (.mp4, .mkv, "
                                                     ".mov, .webm); default: tracevis3d_frames next to the .blend"))])
class TRACEVIS3D_OT_render_animation(JobOperator, Operator):
    """Render the animation with the Render section's engine, device and samples: PNG frames into a folder, or a video; on a Dask scheduler's workers when the Animate section names one"""

    bl_idname = "tracevis3d.render_animation"
    bl_label = "Render Animation"

    @reported
    def execute(self, context):
        from ...tracevis3d.blender.anim_render import render_frames, setup_animation_output
        from ...tracevis3d.blender.animate import ANIM_KEY

        scene = context.scene
        if ANIM_KEY not in scene:
            raise ValueError("no animation in this scene: Set Up Animation first")
        opts = properties.render_options(settings_of(context))
        out = abspath(self.filepath or properties.DEFAULT_FRAMES)
        os.makedirs(os.path.dirname(out.rstrip(os.sep)), exist_ok=True)
        r = scene.render
        out = setup_animation_output(out, scene, opts["engine"], (r.resolution_x, r.resolution_y),
                                     opts["samples"], opts["device"])
        t0 = time.perf_counter()
        cluster = properties.cluster_options(settings_of(context))
        scheduler = cluster["scheduler"]
        if scheduler:
            return self._render_on_cluster(context, scheduler, out, opts, t0, cluster)
        if bpy.app.background or context.window is None:
            res = render_frames(scene)
            self.report({"INFO"}, f"Rendered {len(res['files']) if len(res['files']) > 1 else 'the video'} "
                                  f"to {out} in {time.perf_counter() - t0:.1f} s")
            return {"FINISHED"}
        # in the UI: Blender's own render job (its progress, Esc cancels)
        return bpy.ops.render.render("INVOKE_DEFAULT", animation=True, scene=scene.name)

    def _render_on_cluster(self, context, scheduler: str, out: str, opts: dict, t0: float, cluster=None):
        """The frames rendered by the scheduler's workers as a job (`cli.cluster_render.panel_frames_steps`):
        modal in the UI, its progress (frames done / total, frames per second, each worker's share)
        in the status bar and the panel; polled to its end headless."""
        from ...tracevis3d.cli.cluster_render import panel_frames_steps
        from ...tracevis3d.cluster import parse_scheduler
        from ...tracevis3d.jobs import Job

        parse_scheduler(scheduler)  # ValueError (one line) before anything starts
        job = Job("render animation", panel_frames_steps, scheduler, context.scene, out, opts["engine"],
                  opts["samples"], opts["device"], None, cluster)

        def done(_context, path):
            prog = getattr(job, "progress", None)
            rate = f" at {prog.rate():.2f} frames/s; per worker: {prog.shares()}" if prog is not None else ""
            return f"Rendered on {scheduler} to {path} in {time.perf_counter() - t0:.1f} s{rate}"

        return self.start_job(context, job, done)


CLASSES = (TRACEVIS3D_OT_animate, TRACEVIS3D_OT_clear_animation, TRACEVIS3D_OT_render_animation)
