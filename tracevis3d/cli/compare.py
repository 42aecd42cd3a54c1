"""``render-compare A B -o fig.png``: the comparison of two runs from the command line."""
from __future__ import annotations

import os

from .common import (FOOTER, CLIError, _add_box_label_args, _add_fold_arg, _add_hide_args, _add_highlight_arg,
                     _add_output_args, _add_title_camera_args, _build, _check_trace, _checked_outputs,
                     _fill_scene_settings, _Help, _load, _number, _open_fraction, _progress, _render_and_save,
                     _scene, _thread, _window, run_job)

COMPARE_EXAMPLES = """examples:
  python -m tracevis3d render-compare run_a.json run_b.json -o diff.png
  python -m tracevis3d render-compare a.json.gz b.json.gz -o diff.png --color-by ratio --tau 0.3
  python -m tracevis3d render-compare a.json b.json -o diff.png --align-a main --brush-a main
  blender --background --command tracevis3d render-compare a.json b.json -o diff.png --save cmp.blend
""" + FOOTER

#: render-compare's defaults: `tracevis3d.layout.compare.CompareParams`' (a test keeps them
#: equal; written out so that the parser and --help never import numba)
COMPARE_DEFAULTS = {"tau": 0.2, "color_by": "permutation", "lam": 0.2, "band": 8.0, "beta": 0.85}
COMPARE_COLOR_MODES = ("permutation", "trace-a", "trace-b", "similarity", "ratio")


def _add_compare_parser(sub) -> None:
    D = COMPARE_DEFAULTS
    r = sub.add_parser("render-compare", help="render two runs side by side (TraceDiff) to an image",
                       description="Render the comparison of two runs (TraceDiff) to an image: A's icicle\n"
                                   "above, B's mirrored below, a shaded tube between every call of A and\n"
                                   "its best match in B (the subtrees call similar sets of functions).\n"
                                   "Calls with no match in the other run are orange: where the runs differ.",
                       epilog=COMPARE_EXAMPLES, formatter_class=_Help)
    r.add_argument("trace_a", metavar="A", help="the first run: Chrome Trace Event JSON (.json, .json.gz) "
                                                "or native .tv3d.npz, drawn above")
    r.add_argument("trace_b", metavar="B", help="the second run, drawn below (same formats)")
    _add_output_args(r, "also save the scene as a .blend that reopens with both traces and the "
                        "comparison's parameters (default: not saved)")
    g = r.add_argument_group("matching")
    g.add_argument("--tau", type=_open_fraction("tau"), default=D["tau"], metavar="T",
                   help="two calls match when the sets of functions in their subtrees have a Jaccard "
                        f"similarity above T, 0 < T < 1 (default: {D['tau']:g})")
    g = r.add_argument_group("what to show")
    g.add_argument("--thread-a", type=_thread, metavar="T",
                   help="thread of A to show, by index or name (default: the thread that does the work)")
    g.add_argument("--thread-b", type=_thread, metavar="T",
                   help="thread of B to show, by index or name (default: the thread that does the work)")
    g.add_argument("--window-a", type=_window, metavar="T0:T1",
                   help="focus window of A, µs (or with a unit) from A's start (default: the whole trace)")
    w = g.add_mutually_exclusive_group()
    w.add_argument("--window-b", type=_window, metavar="T0:T1",
                   help="focus window of B, µs (or with a unit) from B's start (default: the whole trace)")
    w.add_argument("--align-a", metavar="CALL",
                   help="set B's focus window on the matches of CALL of A (a call index, or a function "
                        "name: its longest call) (default: no alignment)")
    _add_fold_arg(g)
    _add_hide_args(g)
    _add_highlight_arg(g)
    g = r.add_argument_group("tubes")
    g.add_argument("--color-by", default=D["color_by"], choices=list(COMPARE_COLOR_MODES),
                   help="tube colour: permutation (red when a match moved within its group, grey when "
                        "aligned), trace-a / trace-b (rainbow of the position in the group from A's / "
                        "B's side), similarity (opaque = strong), ratio (red slower in B, blue faster) "
                        f"(default: {D['color_by']})")
    g.add_argument("--lambda", dest="lam", type=_number(0.0, 1.0, "lambda"), default=D["lam"], metavar="L",
                   help=f"the tubes' waist: 0 thin in the middle, 1 no thinning, 0..1 (default: {D['lam']:g})")
    g.add_argument("--band", type=_number(0.5, 100.0, "band"), default=D["band"], metavar="LEVELS",
                   help="height of the bundling band between the two icicles, in stack levels, "
                        f"0.5..100 (default: {D['band']:g} levels)")
    g.add_argument("--beta", type=_number(0.0, 1.0, "beta"), default=D["beta"], metavar="B",
                   help=f"bundling strength: 0 straight tubes, 1 fully bundled, 0..1 (default: {D['beta']:g})")
    g.add_argument("--all-tubes", action="store_true",
                   help="also draw wide tubes whose correspondence finer tubes already show, the "
                        "paper's view (default: off: a tube wider than 96 px at both ends is left out when "
                        "finer tubes start inside both of its calls)")
    g.add_argument("--brush-a", metavar="CALL",
                   help="keep colour only on the groups rooted in the stack of CALL of A (a call index, or "
                        "a function name: its longest call); the other tubes turn grey (default: no brushing)")
    g.add_argument("--brush-b", metavar="CALL",
                   help="the same for a call of B (default: no brushing)")
    g = r.add_argument_group("appearance")
    _add_box_label_args(g)
    g.add_argument("--no-overview", action="store_true",
                   help="no overview bars (matches per time bin) outside the icicles (default: shown)")
    _add_title_camera_args(g, "both trace names, τ, matching call pairs, groups in view")



def compare_params(args) -> dict:
    """The `CompareParams` fields of the parsed arguments (without brushing and alignment,
    which need the comparison); validated by the layout."""
    return dict(color_by=args.color_by, lam=args.lam, band=args.band, beta=args.beta,
                window_a=args.window_a, window_b=args.window_b, thread_a=args.thread_a,
                thread_b=args.thread_b, resolution=args.resolution, fold=args.fold, hide=list(args.hide),
                hide_modules=list(args.hide_module), highlight=list(args.highlight),
                cluster_px=args.cluster_px, label_px=args.label_px, label_min_px=args.label_min_px,
                show_labels=not args.no_labels, show_legend=not args.no_legend,
                show_overview=not args.no_overview, show_title=not args.no_title, title=args.title,
                declutter_px=0.0 if args.all_tubes else 96.0,
                orthographic=args.orthographic)


def _check_thread(trace, thread, path: str) -> None:
    """A thread ``trace`` has (by index or name), else a bad argument naming the file."""
    if thread is None:
        return
    try:
        trace._resolve_threads(thread)
    except (KeyError, IndexError) as e:
        msg = str(e.args[0]) if e.args else type(e).__name__  # a KeyError's str() adds quotes
        raise CLIError(f"{path}: {' '.join(msg.split())}", 2) from None


def _calls_of_options(cmp, args, params: dict) -> None:
    """--brush-a/-b and --align-a: resolve the calls (index or function name) in the
    comparison; align sets B's focus window (`layout.compare.align_window_b`)."""
    from ..layout.compare import align_window_b

    for opt, side, key in (("--brush-a", "a", "brush_a"), ("--brush-b", "b", "brush_b")):
        what = getattr(args, key)
        if what is not None:
            try:
                params[key] = cmp.find_call(side, what)
            except ValueError as e:
                raise CLIError(f"{opt}: {e}", 2) from None
    if args.align_a is not None:
        try:
            call = cmp.find_call("a", args.align_a)
            params["window_b"] = align_window_b(cmp, call)
        except ValueError as e:
            raise CLIError(f"--align-a: {e}", 2) from None
        _progress(0.3, f"--align-a: B's focus on the matches of call {call} "
                       f"({cmp.a.function_names[cmp.a.func[call]]}): "
                       f"{params['window_b'][0]:.6g}..{params['window_b'][1]:.6g} µs")


def render_compare(args) -> str:
    out, save = _checked_outputs(args)
    for path in (args.trace_a, args.trace_b):  # a file that is no trace fails before either loads
        _check_trace(path)
    a = _load(args.trace_a, 0.0, 0.05)
    b = _load(args.trace_b, 0.05, 0.1)
    _check_thread(a, args.thread_a, args.trace_a)
    _check_thread(b, args.thread_b, args.trace_b)
    scene = _scene()
    from ..blender.tasks import compare_build_job, compare_job

    paths = (os.path.abspath(args.trace_a), os.path.abspath(args.trace_b))
    cmp = run_job(compare_job(*paths, tau=args.tau), 0.1, 0.3)  # the loads above are cached
    params = compare_params(args)
    _calls_of_options(cmp, args, params)
    info = _build(compare_build_job(cmp, params, scene=scene, paths=paths),
                  f"{args.trace_a} vs {args.trace_b}", 0.3, 0.6)
    _fill_scene_settings(scene, "compare")
    m = info["meta"]
    _progress(0.6, f"scene: {m.get('n_tubes', 0)} tubes for {m.get('n_pairs_shown', 0)} matches in view, "
                   f"{m.get('n_unmatched_a', 0)} + {m.get('n_unmatched_b', 0)} calls without a match "
                   f"in {info['timings']['total']:.2f} s")
    return _render_and_save(args, scene, out, save)


