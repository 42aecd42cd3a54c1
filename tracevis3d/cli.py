"""Command line: ``python -m tracevis3d render-icicle TRACE -o fig.png [...]``.

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
    try:
        re.compile(s)
    except re.error as e:
        raise argparse.ArgumentTypeError(f"bad regular expression {s!r}: {e}") from None
    return s


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
EXAMPLES = """examples:
  python -m tracevis3d render-icicle trace.json -o fig.png
  python -m tracevis3d render-icicle trace.json.gz -o fig.jpg --thread MainThread --window 0:50ms
  blender --background --command tracevis3d render-icicle trace.json -o fig.exr --save scene.blend

times take a unit (ns, us, µs, ms, s; no unit: µs), relative to the trace start.
exit status: 0 ok, 1 unreadable trace or failed step, 2 bad arguments, 3 internal error.
"""


def make_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="TraceVis3D: execution traces as 3D scenes in Blender.",
                formatter_class=_Help)
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    r = sub.add_parser("render-icicle", help="render the extruded 3D icicle of a trace to an image",
                       description="Render the extruded 3D icicle of a trace to an image: x is time,\n"
                                   "height is stack depth, one lane per thread.",
                       epilog=EXAMPLES, formatter_class=_Help)
    r.add_argument("trace", metavar="TRACE",
                   help="Chrome Trace Event JSON (.json, .json.gz) or native .tv3d.npz")
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
    g.add_argument("--save", metavar="SCENE.blend",
                   help="also save the scene as a .blend that reopens with its trace path "
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
    g.add_argument("--fold", type=_fold, default="auto", metavar="RULE",
                   help="fold stack levels into thin bands: auto (the automatic rule), none, or "
                        "level ranges A:B[,C:D] (inclusive; A: and :B are open) (default: auto)")
    g.add_argument("--hide", action="append", type=_regex, default=[], metavar="REGEX",
                   help="hide calls whose function name matches REGEX, their children move up; "
                        "repeatable (default: none)")
    g.add_argument("--hide-module", action="append", type=_module, default=[], metavar="MODULE",
                   help="hide calls of MODULE and its submodules, their children move up; "
                        "repeatable (default: none)")
    g = r.add_argument_group("appearance")
    g.add_argument("--color-by", default="auto",
                   choices=["auto", "function", "module", "kind", "depth", "inclusive", "self"],
                   help="box colour: auto (module for large traces, function for small), function, "
                        "module, kind (waits and I/O), stack depth, inclusive or self time (default: auto)")
    g.add_argument("--extrude", default="self", choices=["constant", "inclusive", "self", "calls"],
                   help="what a box's extent in depth encodes: nothing, inclusive time, self time, "
                        "calls of its function (default: inclusive)")
    g.add_argument("--cluster-px", type=_number(0.0, 1000.0, "cluster size"), default=1.0, metavar="PX",
                   help="calls narrower than this many pixels merge into cluster boxes (default: 1 px)")
    g.add_argument("--label-px", type=_number(14.0, 200.0, "label height"), default=16.0, metavar="N",
                   help="label text height in pixels at 1080 image lines, scaled with the resolution, "
                        "14..200 (default: 16 px)")
    g.add_argument("--label-min-px", type=_number(0.0, 100000.0, "label minimum width"), default=0.0,
                   metavar="PX", help="boxes narrower than this many pixels get no label; 0: any box "
                                      "with room for 3 characters (default: 0 px)")
    g.add_argument("--no-labels", action="store_true", help="no text labels on the boxes (default: labels on)")
    g.add_argument("--no-legend", action="store_true", help="no colour legend (default: legend on)")
    g.add_argument("--no-axes", action="store_true", help="no time axis and lane names (default: axes on)")
    t = g.add_mutually_exclusive_group()
    t.add_argument("--title", metavar="TEXT",
                   help="figure title (default: automatic: trace name, calls, threads, time span)")
    t.add_argument("--no-title", action="store_true", help="no figure title (default: title on)")
    g.add_argument("--orthographic", action="store_true",
                   help="orthographic camera (default: perspective)")
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


def _load(path: str):
    """The load job: a file that is no trace fails in milliseconds, before numba loads."""
    if not os.path.exists(path):
        raise CLIError(f"trace file not found: {path}", 1)
    if os.path.isdir(path):
        raise CLIError(f"trace path is a folder, not a file: {path}", 1)
    import warnings

    from .blender.session import load_steps
    from .jobs import Job

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            trace = run_job(Job("load", load_steps, path, (0.0, 1.0)), 0.0, 0.1)
    except Exception as e:  # any parser failure is a bad input, reported on one line
        msg = " ".join(str(e).split()) or type(e).__name__
        if msg.startswith(f"{os.path.abspath(path)}: "):
            msg = msg[len(os.path.abspath(path)) + 2:]
        if msg.startswith(f"{path}: "):
            msg = msg[len(path) + 2:]
        raise CLIError(f"cannot read trace {path}: {msg}", 1) from None
    for w in caught:  # importer repairs: one line each
        sys.stderr.write(f"{PROG}: warning: {' '.join(str(w.message).split())}\n")
    return trace


def _remove_startup_objects(scene) -> None:
    """A fresh file's untouched Cube, Light and Camera go; a loaded .blend's objects stay."""
    from .blender.hygiene import remove_startup_defaults

    removed = remove_startup_defaults(scene)
    if removed:
        _progress(0.1, f"removed the startup {', '.join(removed)}")


def _fill_scene_settings(scene) -> None:
    """When the extension is registered (``blender --command``), its scene properties get the
    trace path and parameters, as if built from the panel."""
    settings = getattr(scene, "tracevis3d", None)
    restore = getattr(settings, "restore_from_build", None)
    if callable(restore):
        restore(force=True)


def _save_blend(path: str, scene) -> None:
    import bpy

    from .blender.hygiene import remember_blend_location
    from .blender.render import quiet_blender_output

    remember_blend_location(scene, path)
    with quiet_blender_output():  # Blender's "Info: Saved as ..." must not reach stdout
        r = bpy.ops.wm.save_as_mainfile(filepath=path, check_existing=False)
    if "FINISHED" not in r or not os.path.isfile(path):
        raise CLIError(f"could not save {path}", 1)


def icicle_params(args):
    """The `IcicleParams` of the parsed arguments (ValueError on a bad combination)."""
    from .layout.params import IcicleParams

    return IcicleParams(
        extrude_measure=args.extrude, color_by=args.color_by, threads=args.thread,
        thread_order=args.thread_order, time_window=args.window, max_depth=args.max_depth,
        fold=args.fold, hide=list(args.hide), hide_modules=list(args.hide_module),
        resolution=args.resolution, cluster_px=args.cluster_px, label_px=args.label_px,
        label_min_px=args.label_min_px, orthographic=args.orthographic,
        show_labels=not args.no_labels, show_legend=not args.no_legend, show_axes=not args.no_axes,
        show_title=not args.no_title, title=args.title,
    ).validate()


def render_icicle(args) -> str:
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
    try:
        params = icicle_params(args)
    except ValueError as e:
        raise CLIError(str(e), 2) from None
    trace_path = os.path.abspath(args.trace)
    t = time.perf_counter()
    trace = _load(args.trace)
    _progress(0.1, f"loaded {len(trace)} calls, {trace.n_threads} threads in {time.perf_counter() - t:.2f} s")
    if len(trace) == 0:
        raise CLIError(f"trace {args.trace} holds no calls", 1)
    try:
        import bpy
    except ImportError:
        raise CLIError("bpy is not available: run inside Blender or install the bpy module", 1) from None
    from .blender.render import render_figure
    from .blender.tasks import build_job

    scene = bpy.context.scene
    _remove_startup_objects(scene)
    try:
        t_build = time.perf_counter()
        info = run_job(build_job(trace, params, scene=scene, trace_path=trace_path), 0.1, 0.6)
        info["timings"]["total"] = time.perf_counter() - t_build
    except (ValueError, KeyError, IndexError) as e:  # e.g. a thread the trace does not have
        msg = " ".join(str(e).strip("'\"").split())
        raise CLIError(f"{args.trace}: {msg}", 2) from None
    _fill_scene_settings(scene)
    m = info["meta"]
    _progress(0.6, f"scene: {m['n_boxes']} boxes, {m['n_clusters']} clusters "
                   f"({m['n_clustered_calls']} calls merged) in {info['timings']['total']:.2f} s")
    t = time.perf_counter()
    _progress(0.65, f"rendering {args.resolution[0]}x{args.resolution[1]} with {args.engine}")
    path = render_figure(out, engine=args.engine, resolution=args.resolution,
                         transparent=args.transparent, samples=args.samples, scene=scene)
    _progress(0.95, f"rendered in {time.perf_counter() - t:.1f} s")
    if save:
        _save_blend(save, scene)
        _progress(1.0, f"saved {save}")
    return path


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = make_parser().parse_args(argv)
        if args.command is None:
            raise CLIError("missing command; try: render-icicle TRACE -o fig.png", 2)
        if args.command == "render-icicle":
            path = render_icicle(args)
            print(path)
            return 0
        raise CLIError(f"unknown command {args.command!r}", 2)  # pragma: no cover
    except _HelpShown:
        return 0
    except CLIError as e:
        if str(e):
            sys.stderr.write(f"{PROG}: error: {e}\n")
        return e.code
    except (ValueError, OSError, RuntimeError) as e:
        sys.stderr.write(f"{PROG}: error: {' '.join(str(e).split()) or type(e).__name__}\n")
        return 1
    except Exception as e:  # never a traceback for the user; TRACEVIS3D_DEBUG=1 shows it
        if os.environ.get("TRACEVIS3D_DEBUG"):
            raise
        sys.stderr.write(f"{PROG}: internal error: {type(e).__name__}: {' '.join(str(e).split())}\n")
        return 3
