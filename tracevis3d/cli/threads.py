"""``render-threads TRACE -o fig.png``: the thread view (who waits on whom) from the command
line, rendered by `cli.render.render_view`; its own are the parser, `prepare` (a merged trace is
refused) and `describe`."""
from __future__ import annotations

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


def prepare(args, trace) -> dict:
    """A merged trace is refused (exit 1: it has no clock, `layout.threads.no_merged_trace`); the
    job takes no keywords beyond the trace (its scene records the trace's source)."""
    from ..layout.threads import no_merged_trace
    from .common import CLIError

    try:
        no_merged_trace(trace)
    except ValueError as e:
        raise CLIError(f"{args.trace}: {e}", 1) from None
    return {}


def describe(info: dict, params, trace, args) -> tuple:
    """The correspondences and curves; a trace without hand-offs is drawn with its note, which
    stderr gets too (``note:``); ``--summary``: the analysis' summary; the critical path's shares
    when drawn."""
    from .common import PROG

    m = info["meta"]
    sync = info["sync"]
    lines = [f"scene: {len(sync)} correspondences, {m['n_curves']} curves, {m['n_compound']} compound "
             f"curves, {m['n_calls']} calls in {info['timings']['total']:.2f} s"]
    notes = []
    if m.get("no_waits"):
        from ..layout.threads import NO_WAITS_MEANS

        notes.append(f"{PROG}: note: {m['no_waits']}; {NO_WAITS_MEANS}")
    if args.summary:
        notes.append(sync.summary())
    if params.critical_path:  # the path's shares as text too (computed once, by the build)
        from ..layout.critical_path import path_of

        notes.append(path_of(trace, sync).summary())
    return lines, notes


def render_threads(args) -> str:
    from .render import render_view

    return render_view("threads", args)


COMMANDS = {"render-threads": render_threads}
__all__ = ["add_parsers", "render_threads", "prepare", "describe", "COMMANDS"]
