"""``render-threads TRACE -o fig.png``: the thread view (who waits on whom) from the command
line, sharing render-icicle's output, load, build and render code (`tracevis3d.cli`)."""
from __future__ import annotations

import argparse
import sys

THREADS_EXAMPLES = """examples:
  python -m tracevis3d render-threads trace.json -o threads.png
  python -m tracevis3d render-threads trace.json -o t.png --focus writer --color-by object
  python -m tracevis3d render-threads trace.json -o t.png --threads MainThread,writer --window 0:200ms
  blender --background --command tracevis3d render-threads trace.json -o t.png --save threads.blend

Record Python programs with VizTracer's --log_func_args: the `self` of Condition.wait,
Queue.get/put, Event.wait, ... names the objects threads wait on."""


def _threads_list(s: str):
    from .common import _thread

    items = [t.strip() for t in s.split(",") if t.strip()]
    if not items:
        raise argparse.ArgumentTypeError(f"threads must be a list T1,T2,..., got {s!r}")
    return [_thread(t) for t in items]


def add_threads_parser(sub) -> None:
    from .common import (_add_fold_arg, _add_hide_args, _add_highlight_arg, _add_label_px_arg, _Help, _add_output_args,
                      _int_at_least, _number, _thread, _window)

    r = sub.add_parser("render-threads", help="render who waits on whom (SyncTrace thread view) to an image",
                       description="Render the thread view of a trace to an image: every thread a bended\n"
                                   "icicle on a ring, curves from each wait to the release that ended it,\n"
                                   "the focused thread as a straight icicle behind the ring.",
                       epilog=THREADS_EXAMPLES, formatter_class=_Help)
    r.add_argument("trace", help="trace file (Chrome JSON from VizTracer etc., .json.gz, native)")
    _add_output_args(r, "also save the scene as a .blend file")
    g = r.add_argument_group("view")
    g.add_argument("--focus", type=_thread, metavar="THREAD",
                   help="thread (name or index) shown as the straight icicle, its sector enlarged "
                        "(default: the thread that waits longest)")
    g.add_argument("--color-by", default="kind", choices=["kind", "thread", "object"],
                   help="kind: bars by wait/I-O share, curves by waiting thread; thread: thread colours; "
                        "object: curves by object, grey when one thread only waited on it (default: kind)")
    g.add_argument("--threads", type=_threads_list, metavar="T1,T2,...",
                   help="threads to show, in ring order (default: all)")
    g.add_argument("--hide-thread", action="append", type=_thread, default=[], metavar="THREAD",
                   help="leave a thread out (repeatable)")
    _add_fold_arg(g)
    _add_hide_args(g)
    g.add_argument("--max-levels", type=_int_at_least(1, "max levels"), default=14, metavar="N",
                   help="levels each thread's section of the ring may take after folding; deeper stacks are "
                        "squeezed into them (default: 14)")
    w = g.add_mutually_exclusive_group()
    w.add_argument("--window", type=_window, metavar="T0:T1",
                   help="time window, µs from the trace start or with a unit: 0:200ms (default: the span in "
                        "which two or more of the shown threads run at once)")
    w.add_argument("--whole", action="store_true",
                   help="show the whole trace (default: the span in which two or more threads run at once)")
    g.add_argument("--zero-radius", type=_number(1.0, 1000.0, "zero-level radius"), default=9.0, metavar="R",
                   help="radius of stack level 0, in level widths (default: 9)")
    g.add_argument("--focus-scale", type=_number(1.0, 50.0, "focus scale"), default=2.5, metavar="X",
                   help="the focused thread's sector is X times wider (default: 2.5)")
    g.add_argument("--cluster-px", type=_number(0.0, 100.0, "cluster size"), default=1.5, metavar="PX",
                   help="calls narrower than this many pixels merge into clusters (default: 1.5)")
    _add_highlight_arg(g)
    g.add_argument("--highlight-wait", type=_int_at_least(0, "call"), metavar="CALL",
                   help="with --color-by object: curves red when their wait acts on the same objects as "
                        "wait call CALL, brown when they share one, grey otherwise (default: none)")
    _add_label_px_arg(g)
    g.add_argument("--no-icicle", action="store_true", help="no straight icicle of the focused thread")
    g.add_argument("--no-legend", action="store_true", help="no legend")
    t = g.add_mutually_exclusive_group()
    t.add_argument("--title", metavar="TEXT", help="figure title (default: automatic)")
    t.add_argument("--no-title", action="store_true", help="no figure title")
    g.add_argument("--summary", action="store_true", help="also print who waited on whom (text) to stderr")


def threads_params(args):
    from ..layout.threads_params import ThreadsParams

    return ThreadsParams(focus=args.focus, color_by=args.color_by, threads=args.threads,
                         hide_threads=list(args.hide_thread), fold=args.fold, hide=list(args.hide),
                         hide_modules=list(args.hide_module), highlight=list(args.highlight),
                         window="all" if args.whole else "concurrent", label_px=args.label_px,
                         max_levels=args.max_levels,
                         zero_radius=args.zero_radius, focus_scale=args.focus_scale, time_window=args.window,
                         cluster_px=args.cluster_px, resolution=args.resolution, show_icicle=not args.no_icicle,
                         show_legend=not args.no_legend, show_title=not args.no_title, title=args.title,
                         highlight_wait=args.highlight_wait).validate()


def render_threads(args) -> str:
    from .common import _build, _progress, _render_and_save, _start_render

    out, save, params, trace, scene = _start_render(args, threads_params)
    from ..blender.threads_tasks import threads_build_job

    info = _build(threads_build_job(trace, params, scene=scene), args.trace, 0.1, 0.6)
    m = info["meta"]
    sync = info["sync"]
    _progress(0.6, f"scene: {len(sync)} correspondences, {m['n_curves']} curves, {m['n_compound']} compound "
                   f"curves, {m['n_calls']} calls in {info['timings']['total']:.2f} s")
    if args.summary:
        sys.stderr.write(sync.summary() + "\n")
    return _render_and_save(args, scene, out, save)


__all__ = ["add_threads_parser", "render_threads"]
