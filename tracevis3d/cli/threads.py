"""``render-threads TRACE -o fig.png``: the thread view (who waits on whom) from the command
line, sharing render-icicle's output, load, build and render code (`tracevis3d.cli`)."""
from __future__ import annotations

import sys

THREADS_EXAMPLES = """examples:
  python -m tracevis3d render-threads trace.json -o threads.png
  python -m tracevis3d render-threads trace.json -o t.png --focus writer --color-by object
  python -m tracevis3d render-threads trace.json -o t.png --threads MainThread,writer --window 0:200ms
  blender --background --command tracevis3d render-threads trace.json -o t.png --save threads.blend

Record Python programs with VizTracer's --log_func_args: the `self` of Condition.wait,
Queue.get/put, Event.wait, ... names the objects threads wait on."""


def add_parsers(sub) -> None:
    from .common import add_view_command

    add_view_command(sub, "render-threads",
                     "Render the thread view of a trace to an image: every thread a bended\n"
                     "icicle on a ring, curves from each wait to the release that ended it,\n"
                     "the focused thread as a straight icicle behind the ring.", THREADS_EXAMPLES)



def threads_params(args):
    from .common import view_params

    return view_params("threads", args)


def render_threads(args) -> str:
    """Render the thread view; a merged trace is refused (exit 1: it has no clock, `layout.threads.no_merged_trace`)
    and a trace without hand-offs is drawn with its note, which stderr gets too (``note:``)."""
    from .common import CLIError, PROG, _build, _fill_scene_settings, _progress, _render_and_save, _start_render

    out, save, params, trace, scene = _start_render(args, threads_params)
    from ..layout.threads import no_merged_trace

    try:
        no_merged_trace(trace)
    except ValueError as e:
        raise CLIError(f"{args.trace}: {e}", 1) from None
    from ..blender.threads_tasks import threads_build_job

    info = _build(threads_build_job(trace, params, scene=scene), args.trace, 0.1, 0.6)
    m = info["meta"]
    sync = info["sync"]
    _progress(0.6, f"scene: {len(sync)} correspondences, {m['n_curves']} curves, {m['n_compound']} compound "
                   f"curves, {m['n_calls']} calls in {info['timings']['total']:.2f} s")
    if m.get("no_waits"):
        from ..layout.threads import NO_WAITS_MEANS

        sys.stderr.write(f"{PROG}: note: {m['no_waits']}; {NO_WAITS_MEANS}\n")
    if args.summary:
        sys.stderr.write(sync.summary() + "\n")
    if params.critical_path:  # the path's shares as text too (computed once, by the build)
        from ..layout.critical_path import path_of

        sys.stderr.write(path_of(trace, sync).summary() + "\n")
    _fill_scene_settings(scene, "threads")
    return _render_and_save(args, scene, out, save)


COMMANDS = {"render-threads": render_threads}
__all__ = ["add_parsers", "render_threads", "COMMANDS"]
