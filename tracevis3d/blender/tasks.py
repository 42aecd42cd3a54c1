"""The extension's long work as jobs (`tracevis3d.jobs`): import, build, compare, render.

Each ``*_steps`` function is a job's step generator: the file check, the cache look-up and
every Blender data write run on the main thread in short steps; loading, the layout and
the comparison run in a worker thread (``job.off_main``).  The operators drive these jobs
from a modal timer, the command line and scripts call ``Job.run()`` / ``poll()``: the same
code either way.  ``*_job`` functions make the `Job`::

    from tracevis3d.blender import tasks
    job = tasks.import_job("trace.json", scene=bpy.context.scene, params={})
    while job.poll(timeout=0.05):
        print(f"{job.fraction:.0%} {job.text}")
    job.result["build"]["objects"]

Progress texts are honest: "preparing kernels (first run only, about 30 s); …" while the
cache is cold, then the step with its counts ("loaded 185,731 calls, 5 threads").
"""
from __future__ import annotations

import os
import time

import bpy

from .. import kernel_cache
from ..jobs import Job, JobQueue
from .session import prepare_kernels, compare_steps, load_steps
from .hygiene import write_build_record
from .writer import write_scene_steps

__all__ = ["import_job", "build_job", "compare_job", "compare_build_job", "render_job", "QUEUE",
           "load_steps", "build_steps", "import_steps", "compare_steps", "compare_build_steps", "render_steps"]

#: where a comparison scene records how it was built (apart from the icicle's record)
COMPARE_KEY = "tracevis3d_compare"

#: the extension's single queue: one job at a time (a second request is refused or queued)
QUEUE = JobQueue()


def source_path(path):
    """The absolute path of a trace's source file, None for "<...>" sources and none."""
    return os.path.abspath(os.fspath(path)) if path and not str(path).startswith("<") else None


def layout_and_write_steps(job: Job, layout, args: tuple, done_text, scene, collection_name: str,
                           span=(0.0, 1.0), remove_startup: bool = False):
    """The steps every view shares: ``layout(*args)`` in a worker (it returns ``(params,
    spec, *extra)``), a progress line ``done_text(spec.meta, *extra)``, then the scene
    written in short main-thread steps (`writer.write_scene_steps`).  Returns
    ``(params, spec, extra, out)`` with ``out["meta"]`` (the layout's meta less its params)
    and ``out["timings"]["layout"]`` (the worker's wall time) filled in."""
    a, b = span
    t0 = time.perf_counter()
    params, spec, *extra = yield job.off_main(layout, *args)
    t_layout = time.perf_counter() - t0
    job.report(a + 0.3 * (b - a), done_text(spec.meta, *extra))
    from .zoom_split import STATE_KEY, unzoom

    if STATE_KEY in (scene or bpy.context.scene):  # a refined stretch of the figure being replaced goes with it
        unzoom(scene or bpy.context.scene, collection_name)
    from .anim_refine import FLY_KEY, remove_levels

    if FLY_KEY in (scene or bpy.context.scene):  # a fly-through's refinement levels too
        remove_levels(scene or bpy.context.scene)
    out = yield from write_scene_steps(spec, collection_name, scene=scene, on_cleanup=job.on_cleanup,
                                       progress=lambda f, t: job.report(a + (0.3 + 0.7 * f) * (b - a), t),
                                       remove_startup=remove_startup)
    out["meta"] = {k: v for k, v in spec.meta.items() if k != "params"}
    out["timings"]["layout"] = t_layout
    from .cutaway import apply_cutaway, remove_cutaway

    coll = bpy.data.collections.get(collection_name)
    if coll is not None:  # a cutaway of the figure (`layout.cutaway`), or none left from a previous one
        apply_cutaway(spec.meta["cutaway"], coll, scene) if spec.meta.get("cutaway") else remove_cutaway(coll)
    from .animate import remember_meta

    remember_meta(scene or bpy.context.scene, out["meta"])  # what an animation of the figure needs
    return params, spec, extra, out


def _layout(trace, params):
    """Worker: (validated `IcicleParams`, `SceneSpec`, {"stages": its `IcicleStages`}); the
    layout modules are imported here, off the main thread (their first import loads numba)."""
    from ..layout.icicle import icicle_layout
    from ..params.icicle import IcicleParams

    params = IcicleParams.given(params)
    stages: dict = {}
    return params, icicle_layout(trace, params, stages_out=stages), stages


def build_steps(job: Job, trace, params=None, scene=None, collection_name: str = "TraceVis3D",
                trace_path=None, span=(0.0, 1.0), remove_startup: bool = False, keep_for_zooms: bool = True):
    """Layout (worker) then the scene (main thread, short steps); `build_icicle`'s result.

    ``params``: `IcicleParams`, its dict, or None (the defaults).  ``remove_startup``: also
    remove Blender's untouched startup Cube, Light and Camera when the scene is replaced.
    ``keep_for_zooms``: keep the overview's colours for this session's zooms and a saved
    scene's (`zoom_inputs.keep_overview_steps`); False where neither follows (a command that
    renders and ends, saving no scene: ~0.1 s at 10^7 calls).
    """
    scene = scene or bpy.context.scene
    yield job.off_main(prepare_kernels)
    job.report(span[0], f"{kernel_cache.cold_note('layout')}layout of {len(trace):,} calls")
    params, _, extra, out = yield from layout_and_write_steps(
        job, _layout, (trace, params),
        lambda m, *_: f"layout: {m['n_boxes']:,} boxes, {m['n_clusters']:,} clusters ({m['n_clustered_calls']:,} calls merged)",
        scene, collection_name, span, remove_startup)
    path = source_path(trace_path if trace_path is not None else trace.meta.get("source"))
    write_build_record(scene, {"trace_path": path, "trace_path_rel": None, "params": params.to_dict()})
    from .zoom_inputs import keep_overview_steps

    stages = extra[0].get("stages") if keep_for_zooms else None  # the first zoom's inputs, or none kept
    yield from keep_overview_steps(job, scene, trace, params, path, stages)
    return out


def _compare_layout(cmp, params):
    """Worker: (validated `CompareParams`, `SceneSpec`) of a comparison."""
    from ..layout.compare import CompareParams, compare_layout

    params = CompareParams.given(params)
    return params, compare_layout(cmp, params)


def compare_build_steps(job: Job, cmp, params=None, scene=None, collection_name: str = "TraceVis3D",
                        paths=(None, None), span=(0.0, 1.0), remove_startup: bool = False):
    """The comparison scene of ``cmp`` (`layout.compare`): layout in a worker, the scene in
    short main-thread steps; records {trace_a, trace_b, params} in ``scene[COMPARE_KEY]``."""
    import json

    scene = scene or bpy.context.scene
    yield job.off_main(prepare_kernels)
    job.report(span[0], f"layout of the comparison ({len(cmp.a):,} × {len(cmp.b):,} calls)")
    params, _, _, out = yield from layout_and_write_steps(
        job, _compare_layout, (cmp, params),
        lambda m: f"layout: {m.get('n_tubes', 0):,} tubes for {m.get('n_pairs_shown', 0):,} matches in view",
        scene, collection_name, span, remove_startup)
    absolute = [source_path(p) for p in paths]
    scene[COMPARE_KEY] = json.dumps({"trace_a": absolute[0], "trace_b": absolute[1], "tau": cmp.tau,
                                     "params": params.to_dict()})
    return out


def import_steps(job: Job, path, scene=None, params=None, build: bool = True,
                 collection_name: str = "TraceVis3D"):
    """Load, then (``build``) build the icicle, as the panel does (Blender's untouched startup
    objects go when the scene is replaced); {"path", "trace", "build"}."""
    trace = yield from load_steps(job, path, span=(0.0, 0.4 if build else 1.0))
    out = None
    if build:
        if len(trace) == 0:
            from ..model_side import no_calls_message

            raise ValueError(no_calls_message(trace, str(path)))
        out = yield from build_steps(job, trace, params, scene, collection_name,
                                     trace_path=os.path.abspath(os.fspath(path)), span=(0.4, 1.0),
                                     remove_startup=True)
    return {"path": os.path.abspath(os.fspath(path)), "trace": trace, "build": out}


def render_steps(job: Job, path, scene=None, **options):
    """Render the scene's camera view to ``path``; the path.

    Headless (no window) the render is one blocking step: there is no UI to keep alive.  In
    the UI Blender's own render job runs it (``INVOKE_DEFAULT``: its progress, its Esc) and
    this job waits for Blender's ``render_complete`` / ``render_cancel`` handlers.
    """
    from .render import render_figure, setup_render

    scene = scene or bpy.context.scene
    job.report(0.05, f"rendering {os.path.basename(os.fspath(path))} with {options.get('engine', 'workbench')}")
    yield
    if bpy.app.background or bpy.context.window is None:
        return render_figure(path, scene=scene, **options)
    out = setup_render(path, scene=scene, **options)
    state = {"done": None}

    def complete(*_a):
        state["done"] = "complete"

    def cancelled(*_a):
        state["done"] = "cancel"

    handlers = ((bpy.app.handlers.render_complete, complete), (bpy.app.handlers.render_cancel, cancelled))
    from ..io.atomic import replaced_whole
    from ..io.outputs import verify_output

    # into a temporary beside the target, checked whole, then renamed over it (`io.atomic`): a
    # render stopped by a full disk or a cancel never replaces the figure that was there
    with replaced_whole(out, verify=lambda tmp: verify_output(tmp, like=out), suffix=os.path.splitext(out)[1],
                        what="cannot write the figure") as tmp:
        scene.render.filepath = tmp
        for lst, fn in handlers:
            lst.append(fn)
        try:
            res = bpy.ops.render.render("INVOKE_DEFAULT", write_still=True, scene=scene.name)
            if "RUNNING_MODAL" not in res and "FINISHED" not in res:
                raise RuntimeError(f"the render did not start ({res})")
            while state["done"] is None:
                yield
        finally:
            for lst, fn in handlers:
                if fn in lst:
                    lst.remove(fn)
            scene.render.filepath = out
        if state["done"] == "cancel":
            raise RuntimeError("the render was cancelled")
        if not os.path.isfile(tmp) or not os.path.getsize(tmp):
            raise RuntimeError(f"the render did not write {out}")
    return out


def import_job(path, scene=None, params=None, build: bool = True, collection_name: str = "TraceVis3D") -> Job:
    """A `Job` that loads ``path`` and builds its icicle (`import_steps`)."""
    return Job("import", import_steps, path, scene, params, build, collection_name)


def build_job(trace, params=None, scene=None, collection_name: str = "TraceVis3D", trace_path=None,
              remove_startup: bool = False, keep_for_zooms: bool = True) -> Job:
    """A `Job` that builds the icicle of a loaded trace (`build_steps`)."""
    return Job("build", build_steps, trace, params, scene, collection_name, trace_path, (0.0, 1.0), remove_startup,
               keep_for_zooms)


def compare_job(path_a, path_b, tau: float = 0.2, **options) -> Job:
    """A `Job` that compares two trace files (`session.compare_steps`)."""
    return Job("compare", compare_steps, path_a, path_b, tau, **options)


def compare_build_job(cmp, params=None, scene=None, collection_name: str = "TraceVis3D", paths=(None, None),
                      remove_startup: bool = False) -> Job:
    """A `Job` that builds the comparison scene of a `Comparison` (`compare_build_steps`)."""
    return Job("compare scene", compare_build_steps, cmp, params, scene, collection_name, paths, (0.0, 1.0),
               remove_startup)


def render_job(path, scene=None, **options) -> Job:
    """A `Job` that renders the scene to ``path`` (`render_steps`)."""
    return Job("render", render_steps, path, scene, **options)
