"""The icicle of a trace built as the panel builds it and rendered headless, with what the
figure report measures of it (tests of foreign traces' figures share it)."""
from __future__ import annotations


def render_icicle(trace, out, res, **params) -> tuple:
    """The icicle of ``trace`` built as the panel builds it (`tasks.build_job`, ``params``
    besides the defaults), rendered with Workbench at ``res``: (layout meta, `view_measures`,
    label boxes).  Needs bpy."""
    import bpy

    from tracevis3d.blender.figure_report import label_pixel_boxes, view_measures
    from tracevis3d.blender.render import render_figure
    from tracevis3d.blender.tasks import build_job

    bpy.ops.wm.read_factory_settings(use_empty=True)
    info = build_job(trace, {"resolution": list(res), **params}, scene=bpy.context.scene).run(interval=0.01)
    render_figure(str(out), engine="workbench", resolution=res)
    boxes = label_pixel_boxes()
    return info["meta"], view_measures(str(out), boxes=boxes), boxes
