"""Fly into any moment (issue 70): a stretch of an icicle figure laid out again at full detail in
place of the overview's merged geometry, from a script, headless, or as the viewport moves.

    from tracevis3d.blender import view
    info = view.zoom_to(bpy.context.scene, window=(t0_us, t1_us))   # frame and refine
    info["names"], info["calls_drawn"], info["seconds"]
    view.zoom_to(bpy.context.scene, window=None)                   # the whole figure again

How (`layout.refine`): the stretch's dedicated ``--window`` figure (the same layout code, the
overview's colours) is written into its own collection ``TraceVis3D zoom`` (`writer`), moved so
its frame starts where the stretch starts in the overview; every world-space object of the
overview gets the Geometry Nodes modifier ``TraceVis3D zoom split`` (first in its stack) that
keeps what lies left of the stretch, drops what lies in it, moves what lies right of it to make
room (boxes crossing a cut are clipped to their parts outside); overview names in the stretch
are hidden, those after it moved with it, the overview's heads-up title and legend hidden.  The
scene camera becomes the refined figure's (its heads-up items ride on it).  A second zoom
replaces the first (the collection is rewritten, the split's values set again): objects and
memory stay bounded; ``window=None`` removes all of it, the scene is the overview again.

The state lives in ``scene["tracevis3d_zoom"]`` (JSON), so a saved .blend that was zoomed goes
back to its overview in another Blender; the trace is found from the build record
(``scene["tracevis3d_build"]``, `hygiene.recorded_trace_path`) and loaded through `session`.

`refine_steps` is the job (`tracevis3d.jobs`): the layout runs in a worker, the writing in short
main-thread steps; given a view (``persp``: a world → clip matrix, ``region``: its pixel size),
it works out the window the view sees (`refine.view_window`) and refines, keeps, or goes back
to the overview (`refine.refine_decision`).  The viewport's "Refine as you fly" drives it.

The thread view and the comparison refine a window given to `zoom_to` (`_refine_beside_steps`):
their dedicated figure of the window (the comparison: A's window and B's aligned to it) beside
the overview, which stays whole (the ring's time runs along a fixed arc; the comparison's two
sides have two clocks and tubes between them: neither has one straight axis to split).  A cone
tree zooms to a subtree, ``zoom_to(scene, call=CALL)`` (`cone_zoom`: ``render-cone --root``'s
figure beside the overview); a window or a view is refused there with a ValueError that says why
(`NOT_REFINED`), and an animation's camera path (``--kind flythrough``) flies over the overview as built.

The first zoom costs about what the later ones cost (headless, it also builds the zoom's one
instancer group, `zoom_write._instancer`: ~1 s): a refined stretch keeps the overview's colours,
which the overview's colour stage ranks over the whole trace (~0.5 s at 10^6 calls, ~10 s at
10^7).  The build has them at hand (`keep_overview_steps`, run by `tasks.build_steps`): it keeps
them and the loaded trace in memory for this session's zooms.  When the scene is saved (a
``save_pre`` handler, `persist_zoom_inputs`: the panel's save, ``--save``, a script's
``save_as_mainfile``), they go into a file beside the trace's content (`refine.OverviewColours`,
named by `refine.content_fingerprint` and the figure's parameters) in the user cache
(`colours_cache_dir`: the extension's user folder, never the add-on folder), with a native copy
of a trace read from text (JSON), so a fresh Blender that opens the saved .blend maps the copy
and reads the colours instead of parsing the text and computing them.  A figure rendered and
never saved (``render-icicle -o fig.png`` in a pipeline) writes nothing to the cache.  A figure built before (or from a merged trace) computes the colours at its
first zoom and keeps that file; the cache is bounded (`COLOURS_KEPT`, `COLOURS_BYTES`).
"""
from __future__ import annotations

import json
import time

import bpy
import numpy as np

from ..jobs import Job
from ..layout import refine
from .compat import is_points_object, point_count, positions_and_scales
from .zoom_inputs import (COLOURS_KEY, build_record, context_key, contexts, context_layout, trace_context,  # noqa: F401 (re-exported)
                          colours_cache_dir, keep_overview_steps, persist_zoom_inputs)
from .zoom_split import (SPLIT_MODIFIER, STATE_KEY, ZOOM_COLLECTION, apply_split,  # noqa: F401 (re-exported)
                         overview_objects, undo_split, unzoom, zoom_state)

__all__ = ["zoom_to", "zoom_to_view", "zoom_job", "refine_steps", "unzoom", "zoom_state", "camera_persp", "STATE_KEY",
           "keep_overview_steps", "persist_zoom_inputs", "colours_cache_dir", "COLOURS_KEY",
           "ZOOM_COLLECTION", "SPLIT_MODIFIER"]
NAME_KINDS = ("call", "run", "row", "group", "cluster", "fold")  # labels that name calls (`figure_report`)


# ------------------------------------------------------------------------------ the overview
def _lanes_z(coll) -> tuple:
    """The lowest and highest z of the overview's boxes (its call and cluster layers)."""
    lo, hi = np.inf, -np.inf
    for ob in coll.all_objects:
        if not is_points_object(ob) or ob.get("tv3d_layer") not in ("calls", "clusters") or ob.parent is not None:
            continue
        n = point_count(ob)
        if not n or "tv_scale" not in ob.data.attributes:
            continue
        pos, sc = positions_and_scales(ob, n)
        z, dz = pos[:, 2] + ob.location.z, 0.5 * sc[:, 2]
        lo, hi = min(lo, float((z - dz).min())), max(hi, float((z + dz).max()))
    if not np.isfinite(lo):
        raise ValueError("the scene has no icicle to refine (no call boxes in its collection)")
    return lo, hi


def _overview(scene, coll) -> refine.Overview:
    from .animate import META_KEY

    meta = json.loads(scene.get(META_KEY) or "{}")
    if meta.get("layout", "icicle") != "icicle" or "world_per_us" not in meta:
        raise ValueError("only an icicle figure refines (this scene has no icicle's time axis)")
    z_lo, z_hi = _lanes_z(coll)
    return refine.Overview.from_meta(meta, z_lo, z_hi, scene.render.resolution_x)


# ------------------------------------------------------------------------------ the job
def camera_persp(scene, cam_ob=None) -> tuple:
    """(world → clip matrix, (width, height)) of the scene camera at the render size (from the
    camera's data, without evaluating the scene)."""
    cam_ob = cam_ob or scene.camera
    w = int(scene.render.resolution_x * scene.render.resolution_percentage / 100)
    h = int(scene.render.resolution_y * scene.render.resolution_percentage / 100)
    c = cam_ob.data
    proj = refine.projection_matrix(c.type == "ORTHO", c.lens, c.sensor_width, c.ortho_scale, c.shift_x, c.shift_y,
                                    c.clip_start, c.clip_end, (w, h))
    return proj @ np.array(_world_matrix(cam_ob).normalized().inverted()), (w, h)


def _world_matrix(ob):
    """The object's world matrix now: ``matrix_world`` is only brought up to date by an
    evaluation of the scene, the basis of an object without a parent is its location and
    rotation as just set."""
    return ob.matrix_basis if ob.parent is None else ob.matrix_world


def refine_steps(job: Job, scene=None, window=None, thread=None, persp=None, region=None,
                 collection_name: str = "TraceVis3D", call=None):
    """Refine ``scene``'s figure for ``window`` (µs), or for the view ``persp`` / ``region``
    (module doc); a cone tree for the subtree of ``call`` (`cone_zoom`); the result of
    `zoom_to`.  ``window=None`` without a view (and no ``call``): the overview."""
    from .zoom_write import write_refinement_steps

    t_start = time.perf_counter()
    scene = scene or bpy.context.scene
    coll = bpy.data.collections.get(collection_name)
    if coll is None:
        raise ValueError(f"the scene has no figure to refine (no collection {collection_name!r})")
    layout = scene_layout(scene)
    if layout == "cone" and persp is None and window is None:  # its window is a subtree
        from .cone_zoom import cone_zoom_steps

        out = yield from cone_zoom_steps(job, scene, call, collection_name, t_start, camera_persp, NAME_KINDS)
        return out
    if call is not None:
        raise ValueError(f"zoom_to(call=...) zooms a cone tree into a subtree; this {layout} figure zooms to a "
                         "window (zoom_to(window=...))")
    if layout in ("threads", "compare"):
        if persp is not None:
            raise ValueError(f"the {BESIDE[layout]} refines a window given to zoom_to (following the viewport is "
                             "the icicle's)")
        out = yield from _refine_beside_steps(job, scene, window, thread, coll, collection_name, t_start, layout)
        return out
    if layout != "icicle":
        raise ValueError(NOT_REFINED.get(layout, f"a {layout} figure does not refine (only the icicle and the "
                                                 "thread view do)"))
    state = zoom_state(scene)
    if persp is not None:
        ov = _overview(scene, coll)
        placement = refine.Placement.from_dict(state["placement"]) if state else None
        win, us_px = refine.view_window(np.asarray(persp, np.float64), region, ov, placement)
        action, win = refine.refine_decision(win, us_px, ov, state["window"] if state else None)
        if action == "keep" and (thread is None or thread == state.get("thread")):
            return {"window": tuple(state["window"]), "action": "keep", "calls_drawn": state.get("calls_drawn", 0),
                    "names": state.get("names", []), "seconds": {"total": time.perf_counter() - t_start}}
        if action == "overview":
            out = unzoom(scene, collection_name)
            out["action"] = "overview"
            return out
        window = win
    if window is None:
        out = unzoom(scene, collection_name)
        out["action"] = "overview"
        return out
    ctx = trace_context(scene)
    ov = _overview(scene, coll)  # its boxes' own data: the split is a modifier, the data stay as built
    lo, hi = max(float(window[0]), ov.t0), min(float(window[1]), ov.t1)
    if not hi > lo:
        raise ValueError(f"the window {window[0]:g}..{window[1]:g} µs lies outside the trace "
                         f"({ov.t0:g}..{ov.t1:g} µs)")
    job.report(0.05, f"laying out {lo:,.0f}..{hi:,.0f} µs")
    t = time.perf_counter()
    wparams, spec = yield job.off_main(context_layout, ctx, (lo, hi), thread)
    t_layout = time.perf_counter() - t
    placement = refine.place_refinement(ov, spec.meta, spec.camera, spec.resolution, (lo, hi))
    job.report(0.5, f"writing {spec.meta['n_boxes']:,} calls of the stretch")
    t = time.perf_counter()
    overview_cam = (state or {}).get("camera") or (scene.camera.name if scene.camera else None)
    job.on_cleanup(lambda: unzoom(scene, collection_name))  # stopped half-way: the overview, whole
    if state:  # the previous refinement's changes to the overview's names undone (the split is set anew)
        undo_split(coll, state)
        scene[STATE_KEY] = json.dumps(state)
    out = yield from write_refinement_steps(spec, ZOOM_COLLECTION, scene)
    zoom = bpy.data.collections[ZOOM_COLLECTION]
    dx, dy, dz = placement.offset
    for ob in zoom.objects:
        if ob.parent is None:
            ob.location.x += dx
            ob.location.y += dy
            ob.location.z += dz
        ob["tv3d_zoom"] = True
    cam = bpy.data.objects.get(out["objects"]["camera"])
    if cam is not None:
        cam.data.clip_end = max(cam.data.clip_end, 4.0 * (placement.width + abs(placement.shift) + 100.0))
    new_state = {"window": [lo, hi], "thread": thread, "placement": placement.to_dict(), "camera": overview_cam}
    apply_split(coll, placement, new_state)
    t_write = time.perf_counter() - t
    lab = spec.labels
    names = [txt for txt, k in zip(lab.texts, lab.kind) if k in NAME_KINDS]
    new_state.update(calls_drawn=int(spec.meta["n_boxes"]), names=names[:2000])
    scene[STATE_KEY] = json.dumps(new_state)
    job.report(1.0, f"refined {lo:,.0f}..{hi:,.0f} µs: {spec.meta['n_boxes']:,} calls, {len(names)} names")
    return {"window": (lo, hi), "thread": thread, "action": "refine", "calls_drawn": int(spec.meta["n_boxes"]),
            "calls": int(spec.meta["n_calls"]), "names": names, "camera": out["objects"]["camera"],
            "collection": ZOOM_COLLECTION, "placement": placement, "meta": spec.meta,
            "seconds": {"layout": t_layout, "write": t_write, "total": time.perf_counter() - t_start}}


#: a thread view packs threads of one kind into shared lanes only above this many lanes (`params.shared.PACK_THREADS`)
PACK_LANES = 8
#: why a view does not refine
NOT_REFINED = {
    "cone": "the cone tree has no time axis (a call's children sit on a cone around it, sized by their share "
            "of it): it zooms to a subtree, zoom_to(scene, call=CALL), not to a window; the viewport's "
            "'Refine as you fly' does not follow it (Zoom to… with a call does)",
}
#: the views that refine beside their overview (`_refine_beside_steps`)
BESIDE = {"threads": "thread view", "compare": "comparison"}


def scene_layout(scene) -> str:
    """The layout ``scene`` was built with (its metadata's "layout"; "icicle" when unset or unreadable)."""
    from .animate import META_KEY

    try:
        meta = json.loads(scene.get(META_KEY) or "{}")
    except (TypeError, ValueError):
        meta = {}
    return str(meta.get("layout", "icicle")) if isinstance(meta, dict) else "icicle"


def _threads_context(scene) -> dict:
    """The thread view's trace, parameters and analysis (``scene[THREADS_KEY]``), kept per file version."""
    import os

    from . import session
    from ..layout.threads_params import ThreadsParams
    from .threads_tasks import THREADS_KEY

    rec = build_record(scene, THREADS_KEY, "the thread view")
    src = rec.get("source")
    if not src or not os.path.isfile(str(src)):
        raise FileNotFoundError(f"the thread view's trace file is not there: {src or '(not recorded)'}")
    fkey = session.file_key(src)
    params = ThreadsParams.from_dict(rec.get("params") or {}).validate()
    key = ("threads",) + context_key(fkey, params)
    ctx = contexts.get(key)
    if ctx is None:
        contexts.clear()
        ctx = contexts[key] = {"path": fkey[0], "params": params, "trace": None, "sync": None}
    if ctx["trace"] is None:  # built in this session: its trace and analysis are at hand
        from .threads_tasks import last_sync, analysed_traces

        for tr in analysed_traces():
            if os.path.abspath(str(tr.meta.get("source") or "")) == fkey[0]:
                ctx["trace"], ctx["sync"] = tr, last_sync(tr)
                break
    return ctx


def _threads_window_layout(ctx: dict, window, focus, threads):
    """Worker: the dedicated ``render-threads --window`` figure of ``window``: the overview's
    threads (``threads``: its lanes' threads, None: as it chose them) and focus (``focus``:
    the thread whose icicle stands on top; the window's own choice where it has no calls in it)."""
    import dataclasses

    from ..analysis.synchronisation import synchronisation
    from ..layout.threads import threads_layout
    from . import session
    from .threads_tasks import last_sync

    if ctx["trace"] is None:
        ctx["trace"] = session.get_trace(ctx["path"])
    trace = ctx["trace"]
    if ctx["sync"] is None:
        ctx["sync"] = last_sync(trace) or synchronisation(trace)
    changes = {"time_window": (float(window[0]), float(window[1])), "window": "all"}
    if threads is not None and ctx["params"].threads is None:
        changes["threads"] = [int(t) for t in threads]
    params = dataclasses.replace(ctx["params"], **changes)
    if focus is not None:
        try:
            spec = threads_layout(trace, dataclasses.replace(params, focus=focus).validate(), ctx["sync"])
            return params, dataclasses.replace(spec, lights=[])
        except ValueError:  # the focused thread has no calls in the window: the window's own focus
            pass
    spec = threads_layout(trace, params.validate(), ctx["sync"])
    return params, dataclasses.replace(spec, lights=[])


def _compare_context(scene) -> dict:
    """The comparison's trace files, τ and parameters (``scene[COMPARE_KEY]``), its `Comparison` kept."""
    from . import session
    from ..layout.compare import CompareParams
    from .tasks import COMPARE_KEY

    try:
        rec = json.loads(scene.get(COMPARE_KEY) or "null")
    except (TypeError, ValueError):
        rec = None
    if not isinstance(rec, dict) or not rec.get("trace_a") or not rec.get("trace_b"):
        raise ValueError("the comparison's build record (its two trace files) is missing: compare them again")
    ka, kb = session.file_key(rec["trace_a"]), session.file_key(rec["trace_b"])
    params = CompareParams.from_dict(rec.get("params") or {}).validate()
    key = ("compare", ka, kb, float(rec.get("tau", 0.2)), json.dumps(params.to_dict(), sort_keys=True, default=str))
    ctx = contexts.get(key)
    if ctx is None:
        contexts.clear()
        ctx = contexts[key] = {"paths": (ka[0], kb[0]), "tau": float(rec.get("tau", 0.2)), "params": params,
                                "cmp": None}
    return ctx


def _compare_window_layout(ctx: dict, window, thread):
    """Worker: the dedicated ``render-compare --window-a`` figure of A's ``window`` with B's
    window aligned to it (`refine.aligned_window`); ``thread``: A's thread shown (its matches'
    thread on B stays the comparison's choice)."""
    import dataclasses

    from ..layout.compare import compare_layout

    cmp = ctx["cmp"]
    a, b = cmp.a, cmp.b
    wb = refine.aligned_window(a.start, a.end, b.start, b.end, cmp.pairs["a"], cmp.pairs["b"], window,
                               (float(a.start.min()), float(b.start.min())))
    changes = {"window_a": (float(window[0]), float(window[1])), "window_b": wb, "align_a": None}
    if thread is not None:
        changes["thread_a"] = thread
    params = dataclasses.replace(ctx["params"], **changes).validate()
    spec = compare_layout(cmp, params)
    return params, dataclasses.replace(spec, lights=[])


def _frame_x(persp) -> tuple:
    return refine.frame_x_range(np.asarray(persp, np.float64), 0.0)


def _refine_beside_steps(job: Job, scene, window, thread, coll, collection_name: str, t_start: float,
                         layout: str = "threads"):
    """The thread view's and the comparison's refinement.

    The comparison: both sides' figures of the window (A's ``window``, B's aligned to it by
    the matches of A's calls in it, `refine.aligned_window`: `compare_layout` with
    ``window_a``/``window_b``) beside the overview, the scene camera on them.  The thread view: the dedicated figure of the window (its ring and its
    focused icicle at the window's scale, `threads_layout` with ``time_window``) beside the
    overview, right of its camera's frame, the scene camera on it.  The overview is not split:
    its time runs along the ring's arc (a fixed half circle), so a window of it is the whole
    figure laid out again; the overview stays whole beside it as the context a pulled-back
    view sees.  The lanes keep their colours: the window shows the overview's threads in its
    order (``lane_threads``), its bars coloured by the same absolute scale (waiting and I/O)."""
    from .animate import META_KEY
    from .zoom_write import write_refinement_steps

    state = zoom_state(scene)
    if window is None:
        out = unzoom(scene, collection_name)
        out["action"] = "overview"
        return out
    meta = json.loads(scene.get(META_KEY) or "{}")
    lo, hi = float(window[0]), float(window[1])
    if not hi > lo:
        raise ValueError(f"an empty window: {lo:g}..{hi:g} µs")
    t = time.perf_counter()
    if layout == "compare":
        from . import session

        ctx = _compare_context(scene)
        if ctx["cmp"] is None:  # the comparison the scene was built from (kept by the session when it made it)
            ctx["cmp"] = yield from session.compare_steps(job, *ctx["paths"], tau=ctx["tau"], span=(0.0, 0.05),
                                                          merge=bool(ctx["params"].merge))
        job.report(0.05, f"laying out the comparison of {lo:,.0f}..{hi:,.0f} µs of A")
        params, spec = yield job.off_main(_compare_window_layout, ctx, (lo, hi), thread)
    else:
        ctx = _threads_context(scene)
        focus = thread if thread is not None else meta.get("focus_thread")  # an index or a name
        lanes = meta.get("lane_threads")
        if lanes is not None and ctx["params"].pack_threads and len(lanes) > PACK_LANES:
            lanes = None  # its lanes may be packed: the window packs its own
        job.report(0.05, f"laying out the thread view of {lo:,.0f}..{hi:,.0f} µs")
        params, spec = yield job.off_main(_threads_window_layout, ctx, (lo, hi), focus, lanes)
    t_layout = time.perf_counter() - t
    overview_cam = (state or {}).get("camera") or (scene.camera.name if scene.camera else None)
    cam_ob = bpy.data.objects.get(overview_cam or "")
    ov_l, ov_r = _frame_x(camera_persp(scene, cam_ob)[0]) if cam_ob is not None else (0.0, 0.0)
    new_l, new_r = _frame_x(refine.camera_matrix(spec.camera, spec.resolution))
    gap = 0.05 * max(ov_r - ov_l, new_r - new_l)
    offset = (max(ov_l, ov_r) + gap - min(new_l, new_r), 0.0, 0.0)
    job.report(0.5, f"writing the {BESIDE[layout]} of {lo:,.0f}..{hi:,.0f} µs")
    t = time.perf_counter()
    job.on_cleanup(lambda: unzoom(scene, collection_name))
    out = yield from write_refinement_steps(spec, ZOOM_COLLECTION, scene)
    zoom = bpy.data.collections[ZOOM_COLLECTION]
    for ob in zoom.objects:
        if ob.parent is None:
            ob.location.x += offset[0]
        ob["tv3d_zoom"] = True
    cam = bpy.data.objects.get(out["objects"]["camera"])
    if cam is not None:
        cam.data.clip_end = max(cam.data.clip_end, 4.0 * (abs(offset[0]) + (new_r - new_l) + 100.0))
    t_write = time.perf_counter() - t
    lab = spec.labels
    names = [txt for txt, k in zip(lab.texts, lab.kind) if k in NAME_KINDS]
    if layout == "compare":
        calls = int(spec.meta["n_calls_a"]) + int(spec.meta["n_calls_b"])
    else:
        calls = int(spec.meta["n_calls"]) - int(spec.meta.get("n_cut", 0))
    scene[STATE_KEY] = json.dumps({"window": [lo, hi], "thread": thread, "camera": overview_cam, "layout": layout,
                                   "offset": list(offset), "calls_drawn": calls, "names": names[:2000]})
    job.report(1.0, f"refined {lo:,.0f}..{hi:,.0f} µs: {calls:,} calls, {len(names)} names")
    return {"window": (lo, hi), "thread": thread, "action": "refine", "calls_drawn": calls, "calls": calls,
            "names": names, "camera": out["objects"]["camera"], "collection": ZOOM_COLLECTION, "placement": None,
            "offset": offset, "meta": spec.meta,
            "seconds": {"layout": t_layout, "write": t_write, "total": time.perf_counter() - t_start}}


def zoom_job(scene=None, window=None, thread=None, persp=None, region=None,
             collection_name: str = "TraceVis3D", call=None) -> Job:
    """A `Job` that refines (`refine_steps`)."""
    return Job("refine", refine_steps, scene, window, thread, persp, region, collection_name, call)


def zoom_to(scene=None, window=None, thread=None, collection_name: str = "TraceVis3D", call=None) -> dict:
    """Frame ``window`` = (t0, t1) µs (the trace's clock) of ``thread`` (an index or a name;
    None: the figure's threads) with the scene camera and lay that stretch out at full detail
    in place of the overview there; ``window=None``: the whole figure again.  Returns what it
    did: {"window", "calls_drawn", "names", "seconds", ...} (module doc).  On a thread view
    ``thread`` is the focused thread (default: the overview's); on a comparison, A's thread
    and ``window`` is A's (B's is aligned to it).  On a cone tree ``call`` (an index, or a
    function name: its longest call) is the subtree laid out beside the overview (`cone_zoom`);
    ``call=None``: the whole tree again."""
    job = zoom_job(scene or bpy.context.scene, window, thread, collection_name=collection_name, call=call)
    return job.run(interval=0.005)


def zoom_to_view(scene, persp, region, collection_name: str = "TraceVis3D") -> dict:
    """What the viewport's refinement does for the view ``persp`` (world → clip, e.g.
    ``RegionView3D.perspective_matrix``) of ``region`` (width, height): refine the stretch it
    sees, keep the refinement in place, or return to the overview (``result["action"]``)."""
    return zoom_job(scene, persp=np.asarray(persp, np.float64), region=region,
                    collection_name=collection_name).run(interval=0.005)


# ------------------------------------------------------------------------------ the viewport
def window_of_call(trace, call: int, margin: float = 0.15, least_us: float = 200.0) -> tuple:
    """A window that shows call ``call`` whole with ``margin`` of its duration on each side,
    at least ``least_us`` wide (a search hit, a bookmark, the call under the mouse)."""
    s, e = float(trace.start[call]), float(trace.end[call])
    pad = max(margin * (e - s), 0.5 * max(least_us - (e - s), 0.0))
    return (s - pad, e + pad)


def viewport_pose(cam_ob, scene, region_window_matrix=None) -> dict:
    """Where a 3D viewport looks to show what camera ``cam_ob`` frames: {"location" (the point
    of the front plane at the frame's centre, lens shift included), "rotation" (quaternion
    w, x, y, z), "distance"}.  With the viewport's ``window_matrix`` the distance makes the
    viewport as wide as the camera's frame at that point (the viewport has its own lens)."""
    persp, region = camera_persp(scene, cam_ob)
    o, d = refine.unproject(persp, 0.0, 0.0)
    s = -o[1] / d[1] if abs(d[1]) > 1e-12 else 1.0
    centre = o + s * d
    loc = np.array(_world_matrix(cam_ob).translation)
    distance = float(np.linalg.norm(centre - loc))
    if region_window_matrix is not None:
        xl, xr = refine.frame_x_range(persp, float(centre[2]))
        w = abs(xr - xl)
        k = float(np.asarray(region_window_matrix)[0][0])  # 1 / tan(half the viewport's width angle)
        if w > 0 and k > 0:
            distance = 0.5 * w * k
    q = _world_matrix(cam_ob).to_quaternion()
    return {"location": [float(v) for v in centre], "rotation": [q.w, q.x, q.y, q.z], "distance": distance}
