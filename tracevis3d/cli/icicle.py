"""``render-icicle TRACE -o fig.png``: the extruded icicle from the command line."""
from __future__ import annotations

import os

from .common import (FOOTER, _add_box_label_args, _add_filter_args, _add_fold_arg, _add_hide_args,
                     _add_highlight_arg, _add_output_args, _add_title_camera_args, _build, _fill_scene_settings,
                     _Help, _int_at_least, _progress, _render_and_save, _start_render, _thread, _thread_order,
                     _window)

EXAMPLES = """examples:
  python -m tracevis3d render-icicle trace.json -o fig.png
  python -m tracevis3d render-icicle trace.json.gz -o fig.jpg --thread MainThread --window 0:50ms
  blender --background --command tracevis3d render-icicle trace.json -o fig.exr --save scene.blend
""" + FOOTER


def _add_icicle_parser(sub) -> None:
    r = sub.add_parser("render-icicle", help="render the extruded 3D icicle of a trace to an image",
                       description="Render the extruded 3D icicle of a trace to an image: x is time,\n"
                                   "height is stack depth, one lane per thread.",
                       epilog=EXAMPLES, formatter_class=_Help)
    r.add_argument("trace", metavar="TRACE",
                   help="Chrome Trace Event JSON (.json, .json.gz) or native .tv3d.npz")
    _add_output_args(r, "also save the scene as a .blend that reopens with its trace path "
                        "(default: not saved)")
    g = r.add_argument_group("what to show")
    g.add_argument("--thread", action="append", type=_thread, metavar="T",
                   help="thread to show, by index or name; repeatable (default: all threads)")
    g.add_argument("--thread-order", type=_thread_order, default="default",
                   metavar="ORDER",
                   help="lane order: default (main thread first, then by first activity), start, "
                        "name, busy (busiest first), or a list T1,T2,... of threads shown first "
                        "(default: default)")
    g.add_argument("--window", type=_window, metavar="T0:T1",
                   help="time window, µs (or with a unit) from the trace start (default: the whole trace)")
    g.add_argument("--max-depth", type=_int_at_least(0, "max depth"), metavar="D",
                   help="show stack levels 0..D only (default: all levels)")
    _add_fold_arg(g)
    _add_hide_args(g)
    _add_filter_args(g)
    g.add_argument("--expand", action="append", type=_int_at_least(0, "call"), default=[], metavar="CALL",
                   help="show call CALL (an index) fully expanded: its children hidden by the filters "
                        "come back; repeatable (default: none)")
    g = r.add_argument_group("appearance")
    _add_highlight_arg(g)
    g.add_argument("--color-by", default="auto",
                   choices=["auto", "function", "module", "kind", "depth", "inclusive", "self"],
                   help="box colour: auto (module for large traces, function for small), function, "
                        "module, kind (waits and I/O), stack depth, inclusive or self time (default: auto)")
    g.add_argument("--extrude", default="self", choices=["constant", "inclusive", "self", "calls"],
                   help="what a box's extent in depth encodes: nothing, inclusive time, self time, "
                        "calls of its function (default: inclusive)")
    _add_box_label_args(g)
    g.add_argument("--no-axes", action="store_true", help="no time axis and lane names (default: axes on)")
    _add_title_camera_args(g, "trace name, calls, threads, time span")



def icicle_params(args):
    """The `IcicleParams` of the parsed arguments (ValueError on a bad combination)."""
    from ..layout.params import IcicleParams

    return IcicleParams(
        extrude_measure=args.extrude, color_by=args.color_by, threads=args.thread,
        thread_order=args.thread_order, time_window=args.window, max_depth=args.max_depth,
        fold=args.fold, hide=list(args.hide), hide_modules=list(args.hide_module),
        hide_utilities=args.hide_utilities, collapse_patterns=args.collapse_patterns,
        expand=list(args.expand), highlight=list(args.highlight), resolution=args.resolution, cluster_px=args.cluster_px, label_px=args.label_px,
        label_min_px=args.label_min_px, orthographic=args.orthographic,
        show_labels=not args.no_labels, show_legend=not args.no_legend, show_axes=not args.no_axes,
        show_title=not args.no_title, title=args.title,
    ).validate()


def render_icicle(args) -> str:
    out, save, params, trace, scene = _start_render(args, icicle_params)
    trace_path = os.path.abspath(args.trace)
    from ..blender.tasks import build_job

    info = _build(build_job(trace, params, scene=scene, trace_path=trace_path), args.trace, 0.1, 0.6)
    _fill_scene_settings(scene, "icicle")
    m = info["meta"]
    _progress(0.6, f"scene: {m['n_boxes']} boxes, {m['n_clusters']} clusters "
                   f"({m['n_clustered_calls']} calls merged) in {info['timings']['total']:.2f} s")
    return _render_and_save(args, scene, out, save)


