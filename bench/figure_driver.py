"""One figure, timed and measured, by the TraceVis3D found in the current folder.

    cd VERSION_ROOT && python -c "import runpy, sys; sys.argv = [...]; runpy.run_path(DRIVER, run_name='__main__')"

Run by bench/bench_figures.py in a fresh process per figure, with the working directory
at the root of the version under test (this tree, or an older commit extracted by the
bench), so `import tracevis3d` takes that version.  It uses only the API every version
has (load, icicle_layout, build_icicle, render_figure) and measures the result with
REPORT_MODULE (this tree's tracevis3d/blender/figure_report.py, loaded by path).
Prints one JSON object on stdout.
"""
import importlib.util
import json
import sys
import time


def main() -> int:
    trace_path, out_png, report_py = sys.argv[1], sys.argv[2], sys.argv[3]
    import bpy

    import tracevis3d
    from tracevis3d.blender.render import render_figure
    from tracevis3d.blender.scene import build_icicle
    from tracevis3d.layout.icicle import IcicleParams, icicle_layout

    spec_ = importlib.util.spec_from_file_location("figure_report", report_py)
    report_mod = importlib.util.module_from_spec(spec_)
    spec_.loader.exec_module(report_mod)

    t = time.perf_counter()
    trace = tracevis3d.load(trace_path)
    load_s = time.perf_counter() - t
    # warm numba's kernels on a small trace, so the layout time is the layout, not compiling
    small = tracevis3d.synthetic(2000, threads=2, seed=1) if hasattr(tracevis3d, "synthetic") else trace
    icicle_layout(small, IcicleParams(resolution=(1920, 1080)))
    params = IcicleParams(resolution=(1920, 1080))
    t = time.perf_counter()
    spec = icicle_layout(trace, params)
    layout_s = time.perf_counter() - t
    bpy.ops.wm.read_factory_settings(use_empty=True)
    t = time.perf_counter()
    build_icicle(trace, params)
    build_s = time.perf_counter() - t
    t = time.perf_counter()
    render_figure(out_png, engine="workbench", resolution=(1920, 1080))
    render_s = time.perf_counter() - t
    rep = report_mod.figure_report(out_png, content_rect=spec.meta.get("content_rect"),
                                     backdrops=report_mod.backdrop_rects(spec.meta))
    rep.update(calls=len(trace), depth=int(trace.depth.max()) + 1, threads=int(trace.n_threads),
               load_s=load_s, layout_s=layout_s, build_s=build_s, render_s=render_s)
    sys.stdout.write("\nFIGURE_JSON " + json.dumps(rep) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
