"""The EXTRAVIS scene as a job (layout off the main thread, the scene in short steps), as
`cone_tasks` does for the cone tree; records how it was built in ``scene[EXTRAVIS_KEY]``
(the trace path, the parameters and ``views``: both, heb or sequence).

The time window's handles read back (EXTRAVIS Sec. 3: the window is chosen on the sequence
view).  With a window, the sequence view has a bar left of the rows for the whole run and a
pair of handle boxes on it (the layer ``window_handles``, whose points carry ``window_time``);
the build adds two Empties on them, ``TV3D_window_start`` and ``TV3D_window_end``, that move
up and down only (x and y locked).  Moving one of them along the bar, or moving the handle
boxes' object, and pressing Build again (the panel's EXTRAVIS section,
``tracevis3d.extravis``) makes the new window the one where the handles now are
(`window_from_handles`): a handle's height on the bar says its time, top = the run's start.
A window typed into the panel's Time window field since the last Build wins over the handles.
"""
from __future__ import annotations

import json

import bpy
import numpy as np

from ..jobs import Job
from .session import prepare_kernels
from .tasks import layout_and_write_steps, source_path

EXTRAVIS_KEY = "tracevis3d_extravis"


def _extravis_layout(trace, params, views="both"):
    from ..layout.extravis import extravis_layout
    from ..params.extravis import ExtravisParams

    params = ExtravisParams.given(params)
    return params, extravis_layout(trace, params, views=views)


def extravis_build_steps(job: Job, trace, params=None, scene=None, collection_name: str = "TraceVis3D",
                         trace_path=None, span=(0.0, 1.0), views: str = "both"):
    scene = scene or bpy.context.scene
    yield job.off_main(prepare_kernels)
    job.report(span[0], f"EXTRAVIS view of {len(trace):,} calls")
    params, spec, _, out = yield from layout_and_write_steps(
        job, _extravis_layout, (trace, params, views),
        lambda m: f"layout: {m['n_tubes']:,} relation tubes, {m['n_calls']:,} calls in a "
                  f"{m['mural_px'][0]}x{m['mural_px'][1]} mural", scene, collection_name, span)
    path = source_path(trace_path if trace_path is not None else trace.meta.get("source"))
    coll = bpy.data.collections.get(collection_name)
    if coll is not None and spec.meta.get("window_grips"):
        add_window_grips(spec.meta["window_grips"], coll)
    scene[EXTRAVIS_KEY] = json.dumps({"trace_path": path, "params": params.to_dict(), "views": views})
    return out


GRIPS = ("TV3D_window_start", "TV3D_window_end")


def add_window_grips(grips: dict, coll) -> list:
    """The two Empties on the window's handles (module docstring): each keeps the time it
    stands for (``window_time``), the run's span (``tv3d_window_span``) and the bar's ends
    (``tv3d_window_bar``: world z of the run's start and end)."""
    made = []
    for name, t, at in zip(GRIPS, grips["times"], grips["at"]):
        ob = bpy.data.objects.new(name, None)
        ob.empty_display_type = "CUBE"
        ob.empty_display_size = 0.75 * float(grips["size"])
        ob.location = tuple(float(v) for v in at)
        ob.lock_location = (True, True, False)
        ob["window_time"] = float(t)
        ob["tv3d_window_span"] = [float(v) for v in grips["span"]]
        ob["tv3d_window_bar"] = [float(v) for v in grips["bar_z"]]
        ob.hide_render = True
        coll.objects.link(ob)
        made.append(ob)
    return made


def _time_at(z: float, span, bar) -> float:
    """The moment a height on the bar stands for (clipped to the run)."""
    (s0, s1), (top, bot) = span, bar
    f = min(max((top - z) / (top - bot), 0.0), 1.0) if top != bot else 0.0
    return float(s0 + f * (s1 - s0))


def window_from_handles(scene=None, collection_name: str = "TraceVis3D") -> tuple | None:
    """The time window where the handles now are (module docstring), or None when the scene
    has no handles or neither was moved.  A handle counts as moved when its Empty, or its
    box (the handle layer's point, with its object's transform), stands for another time than
    the one it was built for.  ValueError when the handles meet."""
    coll = bpy.data.collections.get(collection_name)
    if coll is None:
        return None
    grips = [coll.objects.get(n) for n in GRIPS]
    grips = [g for g in grips if g is not None and "window_time" in g]
    if len(grips) != 2:
        return None
    span = tuple(grips[0]["tv3d_window_span"])
    bar = tuple(grips[0]["tv3d_window_bar"])
    eps = 1e-4 * max(span[1] - span[0], 1e-9)
    built = [float(g["window_time"]) for g in grips]
    now = [_time_at(float(g.matrix_world.translation.z), span, bar) for g in grips]
    boxes = _handle_box_heights(coll)
    if boxes is not None:  # the boxes' object moved (or its points): its handles say the time
        now = [n if abs(n - b) > eps else _time_at(z, span, bar) for n, b, z in zip(now, built, boxes)]
    if all(abs(n - b) <= eps for n, b in zip(now, built)):
        return None
    t0, t1 = sorted(now)
    if not t1 - t0 > eps:
        raise ValueError("the window's handles meet: move one of them away from the other")
    return (t0, t1)


def _handle_box_heights(coll) -> list | None:
    """World z of the two handle boxes (the points of ``window_handles`` with a time), or None."""
    from .compat import is_points_object, point_count

    ob = next((o for o in coll.objects if is_points_object(o) and "window_time" in o.data.attributes), None)
    if ob is None:
        return None
    A = ob.data.attributes
    n = point_count(ob)
    wt = np.empty(n, np.float32)
    A["window_time"].data.foreach_get("value", wt)
    pos = np.empty(n * 3, np.float32)
    A["position"].data.foreach_get("vector", pos)
    k = np.flatnonzero(wt >= 0)
    if k.size != 2:
        return None
    mw = np.array(ob.matrix_world, np.float64)
    p = np.c_[pos.reshape(n, 3)[k].astype(np.float64), np.ones(2)] @ mw.T
    return [float(z) for z in p[:, 2]]


def read_extravis_record(scene) -> dict | None:
    """The scene's EXTRAVIS build record {"trace_path", "params": `ExtravisParams`, "views"},
    or None when the scene holds no EXTRAVIS view (or an unreadable record)."""
    from ..params.extravis import ExtravisParams

    raw = scene.get(EXTRAVIS_KEY) if scene is not None else None
    try:
        rec = json.loads(raw) if raw else None
        if not isinstance(rec, dict):
            return None
        return {"trace_path": rec.get("trace_path"), "params": ExtravisParams.from_known(rec.get("params") or {}),
                "views": rec.get("views", "both")}
    except (ValueError, TypeError):
        return None


def extravis_build_job(trace, params=None, scene=None, collection_name: str = "TraceVis3D", trace_path=None,
                       views: str = "both") -> Job:
    """A `Job` that builds the EXTRAVIS view of a loaded trace (`extravis_build_steps`);
    ``views``: both, heb or sequence (`layout.extravis.VIEWS`)."""
    return Job("EXTRAVIS view", extravis_build_steps, trace, params, scene, collection_name, trace_path, (0.0, 1.0),
               views)
