"""One view of one or two traces, timed and measured, by the TraceVis3D in the current folder.

    cd VERSION_ROOT && python -c "import runpy, sys; sys.argv = [...]; runpy.run_path(DRIVER, run_name='__main__')" \
        VIEW OUT_PNG REPORT_PY TRACE [TRACE_B]

Run by bench/bench_views.py in a fresh process per figure, with the working directory at the
root of the version under test (this tree, or an older commit extracted by the bench), so
``import tracevis3d`` takes that version.  VIEW is ``icicle``, ``compare``, ``threads`` or
``cone``; each is built with its defaults at 1920x1080 through the job its panel and CLI
drive (layout in a worker, the scene in steps), rendered with Workbench and measured with
REPORT_PY (this tree's `tracevis3d/blender/figure_report.py`, loaded by path, which reads
only what every version writes).  Prints one JSON object on stdout.
"""
import importlib.util
import json
import sys
import time


def _report_module(path):
    """This tree's figure_report, loaded by path into the package under test (its relative
    imports, e.g. `.render`, take that version's modules)."""
    import tracevis3d.blender  # noqa: F401  (the parent package of the relative imports)

    spec = importlib.util.spec_from_file_location("tracevis3d.blender._figure_report_of_this_tree", path)
    mod = importlib.util.module_from_spec(spec)
    mod.__package__ = "tracevis3d.blender"
    spec.loader.exec_module(mod)
    return mod


def _warm(view):
    """Compile or load the view's kernels and first-use tables by building the view once on a
    small synthetic trace (then the scene is emptied), so the timings are the figure's, not
    numba's cache loading (per process, not per figure)."""
    import tracevis3d

    small = tracevis3d.synthetic(3000, threads=3, seed=1)
    if view == "live":
        return small
    import bpy

    job = _job(view, [small, tracevis3d.synthetic(3000, threads=3, seed=2)], bpy.context.scene, {})
    job.run(interval=0.01)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    return small


def _job(view, traces, scene, extra):
    """The job the panel and the CLI drive for ``view`` (None for the live view)."""
    import time

    import tracevis3d

    if view == "icicle":
        from tracevis3d.blender.tasks import build_job

        return build_job(traces[0], None, scene=scene)
    if view == "compare":
        from tracevis3d.blender.tasks import compare_build_job

        t = time.perf_counter()
        cmp = tracevis3d.compare(traces[0], traces[1])
        extra["compare_s"] = time.perf_counter() - t
        return compare_build_job(cmp, None, scene=scene)
    if view == "threads":
        from tracevis3d.analysis.synchronisation import synchronisation
        from tracevis3d.blender.threads_tasks import threads_build_job

        t = time.perf_counter()
        sync = synchronisation(traces[0])
        extra["sync_s"] = time.perf_counter() - t
        return threads_build_job(traces[0], None, scene=scene, sync=sync)
    if view == "cone":
        from tracevis3d.blender.cone_tasks import cone_build_job

        return cone_build_job(traces[0], None, scene=scene)
    if view == "live":
        return None
    raise SystemExit(f"unknown view {view!r}")


def _live(trace) -> str:
    """Replay ``trace`` into a live session (a real socket) and grow the live view with it
    (the whole run in view); the name of the view's collection."""
    import threading

    from tracevis3d.blender.live_view import LiveView
    from tracevis3d.layout.live import LiveParams
    from tracevis3d.live import LiveSession, replay

    sess = LiveSession("tcp://127.0.0.1:*")
    view = LiveView(LiveParams(window_us=trace.span, resolution=(1920, 1080)))
    th = threading.Thread(target=replay, args=(trace, sess.endpoint))
    th.start()
    while not any(s.ended for s in sess.sessions.values()):
        sess.poll_once(max_messages=200, wait=0.05)
        view.update(sess)
    th.join()
    sess.poll_once(max_messages=10 ** 6)
    view.update(sess, force_labels=True)
    return view.coll.name


def main() -> int:
    view, out_png, report_py, *paths = sys.argv[1:]
    import bpy

    import tracevis3d
    from tracevis3d.blender.render import render_figure

    rep_mod = _report_module(report_py)
    t = time.perf_counter()
    traces = [tracevis3d.load(p) for p in paths]
    load_s = time.perf_counter() - t
    _warm(view)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    extra = {}
    job = _job(view, traces, scene, extra)
    t = time.perf_counter()
    if job is None:  # the live view: the trace replayed through the protocol, the view updated as it grows
        coll = _live(traces[0])
        info = {"timings": {"layout": float("nan")}, "meta": {}}
    else:
        coll = "TraceVis3D"
        info = job.run(interval=0.01)
    total_s = time.perf_counter() - t
    layout_s = float(info["timings"].get("layout", float("nan")))
    t = time.perf_counter()
    render_figure(out_png, engine="workbench", resolution=(1920, 1080))
    render_s = time.perf_counter() - t
    rep = rep_mod.view_measures(out_png, collection=coll)
    meta = info.get("meta", {})
    rep.update(view=view, calls=[len(tr) for tr in traces], depth=[int(tr.depth.max()) + 1 for tr in traces],
               threads=[int(tr.n_threads) for tr in traces], load_s=load_s, layout_s=layout_s,
               build_s=total_s - layout_s, layout_build_s=total_s, render_s=render_s,
               content_rect=meta.get("content_rect"), **extra)
    if view == "compare" and hasattr(rep_mod, "moved_tubes_visible"):
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            rep["moved_visible"] = rep_mod.moved_tubes_visible(out_png, tmp)
    if view == "icicle" and meta.get("content_rect"):
        rep["grey_share"] = rep_mod.figure_report(out_png, content_rect=meta["content_rect"],
                                                  backdrops=rep_mod.backdrop_rects(meta))["grey_share"]
    sys.stdout.write("\nVIEW_JSON " + json.dumps(rep) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
