"""What the zoom tests measure (tests/blender/test_zoom*.py, test_flythrough_refine.py): the
names of calls a zoomed view shows readably through the scene camera, the busiest window of a
trace to zoom into, and where the boxes of the overview lie after a split.

Readable means `figure_report.READABLE_PX` (the one declaration, also used by
`figure_report.view_measures`) scaled from 1080 lines to the scene's resolution.  bpy is
imported only when a scene is measured, so this module loads without Blender.
"""
from tracevis3d.blender.figure_report import READABLE_PX

#: a label may stick out of the frame by this many pixels and still count as inside it
#: (the glyphs' anti-aliased edge; `figure_report.view_measures` allows the same)
EDGE_SLACK_PX = 1.0


def names_in_frame(scene, collection=None, name_kinds=None, readable_px: float = READABLE_PX) -> list:
    """Texts of the labels in ``collection`` (default: the zoom's, `view.ZOOM_COLLECTION`)
    whose kind names calls (default `view.NAME_KINDS`), whose projected em is at least
    ``readable_px`` at 1080 lines (scaled to the scene's height) and whose pixel box lies
    inside the frame (within `EDGE_SLACK_PX`)."""
    from tracevis3d.blender import view
    from tracevis3d.blender.figure_report import label_pixel_boxes

    collection = view.ZOOM_COLLECTION if collection is None else collection
    name_kinds = view.NAME_KINDS if name_kinds is None else name_kinds
    w = scene.render.resolution_x * scene.render.resolution_percentage / 100
    h = scene.render.resolution_y * scene.render.resolution_percentage / 100
    need = readable_px * h / 1080.0 - 1e-3
    s = EDGE_SLACK_PX
    return [b[1] for b in label_pixel_boxes(collection, scene) if b[0] in name_kinds and b[6] >= need
            and b[2] >= -s and b[3] >= -s and b[4] <= w + s and b[5] <= h + s]


def busiest_window(trace, width_us: float) -> tuple:
    """``(t0, t0 + width_us)``: of the trace's consecutive windows of ``width_us`` from its
    first start, the one in which most calls start (the first such on a tie): the package's
    rule (`layout.fly_levels.busiest_window`, also ``--zoom-window auto``'s)."""
    from tracevis3d.layout.fly_levels import busiest_window as busiest

    return busiest(trace.start, (float(trace.start.min()), float(trace.end.max())), width_us)


def box_x_extents(ob) -> tuple:
    """``(x0, x1)`` float32 arrays: the left and right ends along x of the boxes an instanced
    point-cloud object shows, read from its evaluated points (``position`` and ``tv_scale``, the
    writer's attributes; the caller hides the instancer first to read the points, not the boxes)."""
    import bpy
    import numpy as np

    ev = ob.evaluated_get(bpy.context.evaluated_depsgraph_get())
    n = len(ev.data.points)
    pos, sc = np.empty(3 * n, np.float32), np.empty(3 * n, np.float32)
    ev.data.attributes["position"].data.foreach_get("vector", pos)
    ev.data.attributes["tv_scale"].data.foreach_get("vector", sc)
    return pos[0::3] - sc[0::3] / 2, pos[0::3] + sc[0::3] / 2


#: the issue's goal: a zoomed view names at least this many calls (≥ 14 px) ...
GOAL_NAMES = 20
#: ... and at least this share of what a dedicated ``render-icicle --window`` figure names
GOAL_SHARE_OF_DEDICATED = 0.7


def names_enough(n_names: int, n_dedicated: int) -> bool:
    """A zoomed view's ``n_names`` meet the goal: ≥ `GOAL_SHARE_OF_DEDICATED` × what the window's
    dedicated figure names, and ≥ `GOAL_NAMES` unless the window holds fewer nameable calls than
    that (its dedicated figure then names fewer too: recordings differ run to run, and one
    docutils pool's busiest 1 ms window named 16 in a CI-like run, as its dedicated figure did)."""
    return n_names >= GOAL_SHARE_OF_DEDICATED * n_dedicated and n_names >= min(GOAL_NAMES, n_dedicated)
