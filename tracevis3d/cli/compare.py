"""``render-compare A B -o fig.png``: the comparison of two runs from the command line: its own
steps (two traces checked and loaded, their comparison, the calls named by options resolved in it)
on the public pieces of `cli.common`; the build is the registry's (`cli.render.build_view`), the
scene's account its `describe`."""
from __future__ import annotations

import os

from .common import (FOOTER, CLIError, add_view_command, check_trace, checked_outputs, fill_scene_settings, fresh_scene,
                     load_trace, progress, render_and_save, run_job)

COMPARE_EXAMPLES = """examples:
  python -m tracevis3d render-compare run_a.json run_b.json -o diff.png
  python -m tracevis3d render-compare a.json.gz b.json.gz -o diff.png --color-by ratio --tau 0.3
  python -m tracevis3d render-compare a.json b.json -o diff.png --align-a main --brush-a main
  blender --background --command tracevis3d render-compare a.json b.json -o diff.png --save cmp.blend
""" + FOOTER

def add_parsers(sub) -> None:
    add_view_command(sub, "render-compare",
                     "Render the comparison of two runs (TraceDiff) to an image: A's icicle\n"
                     "above, B's mirrored below, a shaded tube between every call of A and\n"
                     "its best match in B (the subtrees call similar sets of functions).\n"
                     "Calls with no match in the other run are orange: where the runs differ.",
                     COMPARE_EXAMPLES,
                     positionals=[("trace_a", "A", "the first run, drawn above: a trace file in any format `tracevis3d "
                                                   "formats` lists"),
                                  ("trace_b", "B", "the second run, drawn below (same formats)")])


def compare_params(args) -> dict:
    """The `CompareParams` fields of the parsed arguments (calls named by function are
    resolved against the comparison by the layout)."""
    from ..params.cli import values
    from ..params.compare import COMPARE

    return values(args, COMPARE)


def check_thread(trace, thread, path: str) -> None:
    """A thread ``trace`` has (by index or name), else a bad argument naming the file."""
    if thread is None:
        return
    try:
        trace._resolve_threads(thread)
    except (KeyError, IndexError) as e:
        msg = str(e.args[0]) if e.args else type(e).__name__  # a KeyError's str() adds quotes
        raise CLIError(f"{path}: {' '.join(msg.split())}", 2) from None


def resolve_call_options(cmp, params: dict) -> None:
    """--brush-a/-b and --align-a: the calls (index or function name) resolved in the
    comparison now (`layout.compare.call_options`, as the panel does), so that a name it lacks
    is a bad argument naming the option.  B's focus window the alignment gives is said on
    stderr; the layout sets it from ``align_a``."""
    from ..layout.compare import call_options
    from ..views import view

    try:
        checked = view("compare").make_params(params)
    except ValueError as e:
        raise CLIError(str(e), 2) from None
    try:
        found = call_options(cmp, checked)
    except ValueError as e:
        name, _, msg = str(e).partition(": ")
        raise CLIError(f"--{name.replace('_', '-')}: {msg}", 2) from None
    window_b = found.pop("window_b", None)
    params.update(found)
    if window_b is not None:
        call = params["align_a"]
        progress(0.3, f"--align-a: B's focus on the matches of call {call} "
                       f"({cmp.a.function_names[cmp.a.func[call]]}): {window_b[0]:.6g}..{window_b[1]:.6g} µs")


def load_pair(path_a: str, path_b: str) -> tuple:
    """The two traces, each checked before either loads (a file that is no trace fails first)."""
    for path in (path_a, path_b):
        check_trace(path)
    return load_trace(path_a, 0.0, 0.05), load_trace(path_b, 0.05, 0.1)


def describe(info: dict, params, cmp, args) -> tuple:
    """The tubes for the matches in view, the calls without a match (`cli.render.describe_view`)."""
    m = info["meta"]
    return [f"scene: {m.get('n_tubes', 0)} tubes for {m.get('n_pairs_shown', 0)} matches in view, "
            f"{m.get('n_unmatched_a', 0)} + {m.get('n_unmatched_b', 0)} calls without a match "
            f"in {info['timings']['total']:.2f} s"], []


def render_compare(args) -> str:
    from .render import build_view, describe_view

    fig = checked_outputs(args)
    a, b = load_pair(args.trace_a, args.trace_b)
    check_thread(a, args.thread_a, args.trace_a)
    check_thread(b, args.thread_b, args.trace_b)
    scene = fresh_scene()
    from ..blender.tasks import compare_job

    paths = (os.path.abspath(args.trace_a), os.path.abspath(args.trace_b))
    # the loads above are cached; --merge: both runs' stacks merged (left heavy), then compared
    cmp = run_job(compare_job(*paths, tau=args.tau, merge=bool(args.merge)), 0.1, 0.3)
    params = compare_params(args)
    resolve_call_options(cmp, params)
    info = build_view("compare", cmp, params, scene, f"{args.trace_a} vs {args.trace_b}", 0.3, 0.6, paths=paths)
    fill_scene_settings(scene, "compare")
    describe_view("compare", info, params, cmp, args)
    return render_and_save(fig, scene)


COMMANDS = {"render-compare": render_compare}
