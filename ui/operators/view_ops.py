"""Build any view of the registry (`tracevis3d.views`) from the panel: the operator behind the
section the panel makes for a view that has no hand-made one (`ui.panels.view_sections`).

It loads the scene's trace as every view does (`blender.session.load_steps`: cached between
builds), or reads the input with the view's own reader (`View.load`), then runs the view's job
steps (`View.steps`) with the parameters of its panel group (``scene.tracevis3d_<view>_params``).
A new view therefore needs no operator of its own to be built from the panel."""
from __future__ import annotations

import os
import time

from bpy.types import Operator

from .. import properties
from ..props import with_props
from ...tracevis3d.blender import session
from ...tracevis3d.jobs import Job
from .common import JobOperator, reported, trace_path_of


def view_scene_steps(job, name: str, path: str, params, scene):
    """Read the input of view ``name`` (its reader, or the trace loaded and cached), then build
    its scene with its job steps; {"input", "build"}."""
    from ...tracevis3d.views import resolve, view

    v = view(name)
    if v.load:
        job.report(0.0, f"reading {os.path.basename(path)}")
        data = yield job.off_main(resolve(v.load), path)
    else:
        data = yield from session.load_steps(job, path, (0.0, 0.2))
    out = yield from resolve(v.steps)(job, data, params, scene)
    return {"input": data, "build": out}


@with_props([("view", "String", dict(name="View", default="", options={"SKIP_SAVE"},
                                     description="The view to build (a name of the view registry)"))])
class TRACEVIS3D_OT_build_view(JobOperator, Operator):
    """Build this view of the scene's trace with the parameters of its panel section"""

    bl_idname = "tracevis3d.build_view"
    bl_label = "Build View"

    @reported
    def execute(self, context):
        from ...tracevis3d.views import view

        v = view(self.view)
        path = trace_path_of(context)
        params = properties.params_of(context.scene, v.name)
        t0 = time.perf_counter()

        def done(context, result):
            from ...tracevis3d.blender.scene import frame_view

            frame_view(context)  # no-op headless
            return f"Built the {v.title} of {os.path.basename(path)} in {time.perf_counter() - t0:.2f} s"

        job = Job(v.name, view_scene_steps, v.name, path, params, context.scene)
        return self.start_job(context, job, done)


CLASSES = (TRACEVIS3D_OT_build_view,)
