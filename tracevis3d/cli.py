"""Command line: ``python -m tracevis3d render-icicle TRACE -o fig.png [...]`` and
``python -m tracevis3d render-compare A B -o fig.png [...]``.

The same `main(argv)` serves ``blender --background --command tracevis3d ...`` (the
extension registers it with ``bpy.utils.register_cli_command``).  Progress goes to
stderr; bad input ends with exit code != 0 and ONE line on stderr.
Exit codes: 0 ok, 1 unreadable trace / failed step, 2 bad arguments, 3 internal error.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time

PROG = "tracevis3d"


class CLIError(Exception):
    def __init__(self, msg: str, code: int = 2):
        super().__init__(msg)
        self.code = code


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line instead of usage + message + exit
        raise CLIError(message, 2)

    def exit(self, status=0, message=None):
        if message:
            sys.stderr.write(message)
        raise CLIError("", status) if status else _HelpShown()


class _HelpShown(Exception):
    pass


def _resolution(s: str):
    m = re.fullmatch(r"\s*(\d+)\s*[xX×]\s*(\d+)\s*", s)
    if not m:
        raise argparse.ArgumentTypeError(f"resolution must look like 1920x1080, got {s!r}")
    w, h = int(m.group(1)), int(m.group(2))
    if not (16 <= w <= 16384 and 16 <= h <= 16384):
        raise argparse.ArgumentTypeError(f"resolution must be within 16..16384 px, got {s!r}")
    return (w, h)


_UNITS = {"": 1.0, "us": 1.0, "µs": 1.0, "ms": 1e3, "s": 1e6, "ns": 1e-3}


def _time(s: str) -> float:
    m = re.fullmatch(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(us|µs|ms|ns|s)?\s*", s)
    if not m:
        raise argparse.ArgumentTypeError(f"bad time {s!r} (µs, or with a unit: 12ms, 1.5s)")
    return float(m.group(1)) * _UNITS[m.group(2) or ""]


def _window(s: str):
    if ":" not in s:
        raise argparse.ArgumentTypeError(f"window must be T0:T1 (µs from the trace start), got {s!r}")
    a, b = s.split(":", 1)
    t0, t1 = _time(a), _time(b)
    if not t0 < t1:
        raise argparse.ArgumentTypeError(f"window needs T0 < T1, got {s!r}")
    return (t0, t1)


def _thread(s: str):
    return int(s) if re.fullmatch(r"\d+", s) else s


def _output(s: str) -> str:
    """-o: the extension names the format; any other extension is refused before anything loads."""
    from .blender.render import file_format_of  # bpy-free at import

    try:
        file_format_of(s)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return s


def _thread_order(s: str):
    from .layout.params import THREAD_ORDERS

    s = s.strip()
    if s in THREAD_ORDERS:
        return s
    items = [t.strip() for t in s.split(",") if t.strip()]
    if not items:
        raise argparse.ArgumentTypeError(f"thread order must be one of {', '.join(THREAD_ORDERS)} "
                                         f"or a list T1,T2,..., got {s!r}")
    return [_thread(t) for t in items]


def _fold(s: str) -> str:
    from .layout.params import parse_fold

    try:
        parse_fold(s)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return s.strip().lower()


def _regex(s: str) -> str:
    from .analysis.userregex import check_user_regex

    try:
        return check_user_regex(s, "regular expression")
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("regular expression: ")) from None


def _module(s: str) -> str:
    if not re.fullmatch(r"[\w<>.-]+", s.strip()):
        raise argparse.ArgumentTypeError(f"module must be a dotted name like json.encoder, got {s!r}")
    return s.strip()


def _number(lo: float, hi: float, what: str):
    def parse(s: str) -> float:
        try:
            v = float(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be a number, got {s!r}") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{what} must be within {lo:g}..{hi:g}, got {s!r}")
        return v
    return parse


def _int_at_least(lo: int, what: str):
    def parse(s: str) -> int:
        try:
            v = int(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be an integer, got {s!r}") from None
        if v < lo:
            raise argparse.ArgumentTypeError(f"{what} must be >= {lo}, got {s!r}")
        return v
    return parse


def _open_fraction(what: str):
    def parse(s: str) -> float:
        v = _number(0.0, 1.0, what)(s)
        if not 0.0 < v < 1.0:
            raise argparse.ArgumentTypeError(f"{what} must lie strictly between 0 and 1, got {s!r}")
        return v
    return parse


class _Help(argparse.RawDescriptionHelpFormatter):
    """Aligned, wide enough for the option names; every help text states its default."""

    def __init__(self, prog):
        super().__init__(prog, max_help_position=32, width=min(100, max(60, _terminal_width())))


def _terminal_width() -> int:
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return 100


IMAGE_FORMATS = ".png, .jpg/.jpeg, .exr, .tif/.tiff"
FOOTER = """
times take a unit (ns, us, µs, ms, s; no unit: µs), relative to the trace start.
exit status: 0 ok, 1 unreadable trace or failed step, 2 bad arguments, 3 internal error.
"""
EXAMPLES = """examples:
  python -m tracevis3d render-icicle trace.json -o fig.png
  python -m tracevis3d render-icicle trace.json.gz -o fig.jpg --thread MainThread --window 0:50ms
  blender --background --command tracevis3d render-icicle trace.json -o fig.exr --save scene.blend
""" + FOOTER
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


def _add_output_args(r, save_help: str) -> None:
    """The output group every render command shares: file, engine, size, samples, save."""
    g = r.add_argument_group("output")
    g.add_argument("-o", "--output", required=True, type=_output, metavar="FILE",
                   help=f"image to write; its extension names the format: {IMAGE_FORMATS} (required)")
    g.add_argument("--engine", default="workbench", choices=["workbench", "eevee", "cycles"],
                   help="render engine (default: workbench)")
    g.add_argument("--resolution", type=_resolution, default=(1920, 1080), metavar="WxH",
                   help="image size in pixels, 16..16384 each (default: 1920x1080)")
    g.add_argument("--samples", type=_int_at_least(1, "samples"), metavar="N",
                   help="samples per pixel: Workbench anti-aliasing (1, 5, 8, 11, 16 or 32), "
                        "EEVEE, Cycles (default: 8, 16, 32 for the three engines)")
    g.add_argument("--transparent", action="store_true",
                   help="transparent background (.png, .exr, .tif only) (default: off, opaque)")
    g.add_argument("--save", metavar="SCENE.blend", help=save_help)


def _add_fold_arg(g) -> None:
    g.add_argument("--fold", type=_fold, default="auto", metavar="RULE",
                   help="fold stack levels into thin bands: auto (the automatic rule), none, or "
                        "level ranges A:B[,C:D] (inclusive; A: and :B are open) (default: auto)")


def _add_hide_args(g) -> None:
    """--hide and --hide-module: the same in every view."""
    g.add_argument("--hide", action="append", type=_regex, default=[], metavar="REGEX",
                   help="hide calls whose function name matches REGEX, their children move up; "
                        "repeatable (default: none)")
    g.add_argument("--hide-module", action="append", type=_module, default=[], metavar="MODULE",
                   help="hide calls of MODULE and its submodules, their children move up; "
                        "repeatable (default: none)")


def _add_highlight_arg(g) -> None:
    """--highlight: the same in every view."""
    g.add_argument("--highlight", action="append", type=_regex, default=[], metavar="REGEX",
                   help="keep the colour of calls whose function name (or module) matches REGEX, draw "
                        "every other call pale; repeatable (default: none)")


def _add_label_px_arg(g) -> None:
    g.add_argument("--label-px", type=_number(14.0, 200.0, "label height"), default=16.0, metavar="N",
                   help="label text height in pixels at 1080 image lines, scaled with the resolution, "
                        "14..200 (default: 16 px)")


def _add_box_label_args(g) -> None:
    """Sub-pixel clusters, label size and the labels/legend switches (both commands)."""
    g.add_argument("--cluster-px", type=_number(0.0, 1000.0, "cluster size"), default=1.0, metavar="PX",
                   help="calls narrower than this many pixels merge into cluster boxes (default: 1 px)")
    _add_label_px_arg(g)
    g.add_argument("--label-min-px", type=_number(0.0, 100000.0, "label minimum width"), default=0.0,
                   metavar="PX", help="boxes narrower than this many pixels get no label; 0: any box "
                                      "with room for 3 characters (default: 0 px)")
    g.add_argument("--no-labels", action="store_true", help="no text labels on the boxes (default: labels on)")
    g.add_argument("--no-legend", action="store_true", help="no colour legend (default: legend on)")


def _add_title_camera_args(g, automatic: str) -> None:
    """--title / --no-title and --orthographic (both commands)."""
    t = g.add_mutually_exclusive_group()
    t.add_argument("--title", metavar="TEXT", help=f"figure title (default: automatic: {automatic})")
    t.add_argument("--no-title", action="store_true", help="no figure title (default: title on)")
    g.add_argument("--orthographic", action="store_true",
                   help="orthographic camera (default: perspective)")


def _add_filter_args(g) -> None:
    """--hide-utilities and --collapse-patterns (SEAT's filters, `analysis.filters`)."""
    g.add_argument("--hide-utilities", nargs="?", const=10, default=0, type=_int_at_least(0, "utilities"),
                   metavar="N", help="hide the N likeliest utility routines (high fan-in, low fan-out, called "
                                     "from everywhere); their children move up and their callers are marked "
                                     "partially expanded (default: off; N without a value: 10)")
    g.add_argument("--collapse-patterns", action="store_true",
                   help="draw every repetition of a repeated subtree (4+ calls) after the first as its "
                        "root call only, marked partially expanded (default: off)")


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


def make_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="TraceVis3D: execution traces as 3D scenes in Blender.",
                formatter_class=_Help)
    from ._version import __version__

    p.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    _add_icicle_parser(sub)
    _add_compare_parser(sub)
    from .cli_threads import add_threads_parser

    add_threads_parser(sub)
    from . import cli_cone, cli as this

    cli_cone.add_cone_parser(sub, this)
    from .cli_live import add_parsers as _add_live_parsers

    _add_live_parsers(sub)
    return p


def _progress(frac: float, text: str) -> None:
    sys.stderr.write(f"[{int(round(frac * 100)):3d}%] {text}\n")
    sys.stderr.flush()


def run_job(job, lo: float = 0.0, hi: float = 1.0):
    """Poll ``job`` to its end (the code the extension's UI drives), one progress line per
    step (scaled into [lo, hi]); its result, or its error raised."""
    last = [None]

    def show(j):
        if j.text != last[0] and j.state == "running":
            last[0] = j.text
            _progress(lo + (hi - lo) * j.fraction, j.text)

    job.listeners.append(show)
    return job.run(interval=0.05)


def _trace_error(path: str, e: BaseException) -> CLIError:
    """One line naming the trace file and what is wrong with it (exit 1)."""
    msg = " ".join(str(e).split()) or type(e).__name__
    for prefix in (f"{os.path.abspath(path)}: ", f"{path}: "):
        if msg.startswith(prefix):
            msg = msg[len(prefix):]
    return CLIError(f"cannot read trace {path}: {msg}", 1)


def _check_trace(path: str) -> None:
    """Is ``path`` a file that can be a trace?  Milliseconds, before numba loads (CLIError 1)."""
    if not os.path.exists(path):
        raise CLIError(f"trace file not found: {path}", 1)
    if os.path.isdir(path):
        raise CLIError(f"trace path is a folder, not a file: {path}", 1)
    from .io.sniff import check_trace_file

    try:
        check_trace_file(path)
    except Exception as e:  # any rejection is a bad input, reported on one line
        raise _trace_error(path, e) from None


def _load(path: str, lo: float = 0.0, hi: float = 0.1):
    """The load job (the session's cache keeps the trace for a later job of the same file)."""
    _check_trace(path)
    import warnings

    from .blender.session import load_steps
    from .jobs import Job

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            trace = run_job(Job("load", load_steps, path, (0.0, 1.0)), lo, hi)
    except Exception as e:  # any parser failure is a bad input, reported on one line
        raise _trace_error(path, e) from None
    for w in caught:  # importer repairs: one line each
        sys.stderr.write(f"{PROG}: warning: {' '.join(str(w.message).split())}\n")
    if len(trace) == 0:
        raise CLIError(f"trace {path} holds no calls", 1)
    return trace


def _remove_startup_objects(scene) -> None:
    """A fresh file's untouched Cube, Light and Camera go; a loaded .blend's objects stay."""
    from .blender.hygiene import remove_startup_defaults

    removed = remove_startup_defaults(scene)
    if removed:
        _progress(0.1, f"removed the startup {', '.join(removed)}")


def _fill_scene_settings(scene, what: str) -> None:
    """When the extension is registered (``blender --command``), its scene properties get the
    trace paths and parameters of the scene just built (``what``: "icicle" or "compare"), as
    if built from the panel."""
    settings = getattr(scene, "tracevis3d", None)
    restore = getattr(settings, "restore_from_build", None)
    if callable(restore):
        restore(force=True, what=what)


def _save_blend(path: str, scene) -> None:
    import bpy

    from .blender.hygiene import remember_blend_location
    from .blender.render import quiet_blender_output
    from .blender.session import remember_compare_location

    remember_blend_location(scene, path)
    remember_compare_location(scene, path)
    with quiet_blender_output():  # Blender's "Info: Saved as ..." must not reach stdout
        r = bpy.ops.wm.save_as_mainfile(filepath=path, check_existing=False)
    if "FINISHED" not in r or not os.path.isfile(path):
        raise CLIError(f"could not save {path}", 1)


def _checked_outputs(args) -> tuple:
    """The absolute image path and --save path (or None), checked before anything loads."""
    from .blender.render import check_output

    out = os.path.abspath(args.output)
    try:
        check_output(out, args.transparent)
    except ValueError as e:
        raise CLIError(str(e), 2) from None
    if os.path.isdir(out):
        raise CLIError(f"output path is a folder, not a file: {out}", 2)
    if not os.path.isdir(os.path.dirname(out)):
        raise CLIError(f"output folder does not exist: {os.path.dirname(out)}", 2)
    save = None
    if args.save:
        save = os.path.abspath(args.save)
        if not save.endswith(".blend"):
            raise CLIError(f"--save needs a .blend path, got {args.save}", 2)
        if not os.path.isdir(os.path.dirname(save)):
            raise CLIError(f"folder for --save does not exist: {os.path.dirname(save)}", 2)
    return out, save


def _scene():
    """Blender's scene, its untouched startup objects removed (CLIError 1 without bpy)."""
    try:
        import bpy
    except ImportError:
        raise CLIError("bpy is not available: run inside Blender or install the bpy module", 1) from None
    scene = bpy.context.scene
    _remove_startup_objects(scene)
    return scene


def _build(job, what: str, lo: float, hi: float) -> dict:
    """Run a scene-building job; a parameter the traces cannot satisfy (a thread they do not
    have, an empty window) is a bad argument (exit 2) named after ``what``."""
    try:
        t = time.perf_counter()
        info = run_job(job, lo, hi)
        info["timings"]["total"] = time.perf_counter() - t
        return info
    except (ValueError, KeyError, IndexError) as e:
        msg = " ".join(str(e).strip("'\"").split())
        raise CLIError(f"{what}: {msg}", 2) from None


def _render_and_save(args, scene, out: str, save) -> str:
    """Render the scene's camera view to ``out`` (and save the .blend); the image path."""
    from .blender.render import render_figure

    t = time.perf_counter()
    _progress(0.65, f"rendering {args.resolution[0]}x{args.resolution[1]} with {args.engine}")
    path = render_figure(out, engine=args.engine, resolution=args.resolution,
                         transparent=args.transparent, samples=args.samples, scene=scene)
    _progress(0.95, f"rendered in {time.perf_counter() - t:.1f} s")
    if save:
        _save_blend(save, scene)
        _progress(1.0, f"saved {save}")
    return path


def icicle_params(args):
    """The `IcicleParams` of the parsed arguments (ValueError on a bad combination)."""
    from .layout.params import IcicleParams

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
    out, save = _checked_outputs(args)
    try:
        params = icicle_params(args)
    except ValueError as e:
        raise CLIError(str(e), 2) from None
    trace_path = os.path.abspath(args.trace)
    t = time.perf_counter()
    trace = _load(args.trace)
    _progress(0.1, f"loaded {len(trace)} calls, {trace.n_threads} threads in {time.perf_counter() - t:.2f} s")
    scene = _scene()
    from .blender.tasks import build_job

    info = _build(build_job(trace, params, scene=scene, trace_path=trace_path), args.trace, 0.1, 0.6)
    _fill_scene_settings(scene, "icicle")
    m = info["meta"]
    _progress(0.6, f"scene: {m['n_boxes']} boxes, {m['n_clusters']} clusters "
                   f"({m['n_clustered_calls']} calls merged) in {info['timings']['total']:.2f} s")
    return _render_and_save(args, scene, out, save)


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
    from .layout.compare import align_window_b

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
    from .blender.tasks import compare_build_job, compare_job

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


def render_threads(args) -> str:
    from .cli_threads import render_threads as _render_threads

    return _render_threads(args)


def render_cone(args) -> str:
    from .cli_cone import render_cone as run

    return run(args)


COMMANDS = {"render-icicle": render_icicle, "render-compare": render_compare, "render-threads": render_threads,
            "render-cone": render_cone}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = make_parser().parse_args(argv)
        if args.command is None:
            raise CLIError("missing command; try: render-icicle TRACE -o fig.png "
                           "or render-compare A B -o fig.png", 2)
        if args.command not in COMMANDS:
            from .cli_live import COMMANDS as live_commands

            COMMANDS.update(live_commands)
        if args.command not in COMMANDS:  # pragma: no cover
            raise CLIError(f"unknown command {args.command!r}", 2)
        print(COMMANDS[args.command](args))
        return 0
    except _HelpShown:
        return 0
    except CLIError as e:
        if str(e):
            sys.stderr.write(f"{PROG}: error: {e}\n")
        return e.code
    except (ValueError, OSError, RuntimeError, MemoryError) as e:  # MemoryError: TraceTooLargeError
        sys.stderr.write(f"{PROG}: error: {' '.join(str(e).split()) or type(e).__name__}\n")
        return 1
    except Exception as e:  # never a traceback for the user; TRACEVIS3D_DEBUG=1 shows it
        if type(e).__module__.split(".")[0] == "zmq":  # the machine's state (a port in use): exit 2
            sys.stderr.write(f"{PROG}: error: {' '.join(str(e).split()) or type(e).__name__}\n")
            return 2
        if os.environ.get("TRACEVIS3D_DEBUG"):
            raise
        sys.stderr.write(f"{PROG}: internal error: {type(e).__name__}: {' '.join(str(e).split())}\n")
        return 3
