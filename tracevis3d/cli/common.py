"""What every command of the command line shares: the parser's types and option groups,
loading a trace, building and rendering a scene, the exit codes (`tracevis3d.cli`)."""
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
    from ..blender.render import file_format_of  # bpy-free at import

    try:
        file_format_of(s)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return s


def _thread_order(s: str):
    from ..layout.params import THREAD_ORDERS

    s = s.strip()
    if s in THREAD_ORDERS:
        return s
    items = [t.strip() for t in s.split(",") if t.strip()]
    if not items:
        raise argparse.ArgumentTypeError(f"thread order must be one of {', '.join(THREAD_ORDERS)} "
                                         f"or a list T1,T2,..., got {s!r}")
    return [_thread(t) for t in items]


def _fold(s: str) -> str:
    from ..layout.params import parse_fold

    try:
        parse_fold(s)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return s.strip().lower()


def _regex(s: str) -> str:
    from ..analysis.userregex import check_user_regex

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
    from ..io.sniff import check_trace_file

    try:
        check_trace_file(path)
    except Exception as e:  # any rejection is a bad input, reported on one line
        raise _trace_error(path, e) from None


def _load(path: str, lo: float = 0.0, hi: float = 0.1):
    """The load job (the session's cache keeps the trace for a later job of the same file)."""
    _check_trace(path)
    import warnings

    from ..blender.session import load_steps
    from ..jobs import Job

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
    from ..blender.hygiene import remove_startup_defaults

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
    from ..blender.render import save_blend

    if not save_blend(path, scene):
        raise CLIError(f"could not save {path}", 1)


def _checked_outputs(args) -> tuple:
    """The absolute image path and --save path (or None), checked before anything loads."""
    from ..blender.render import check_output

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
    from ..blender.render import current_scene

    try:
        scene = current_scene()
    except ImportError:
        raise CLIError("bpy is not available: run inside Blender or install the bpy module", 1) from None
    _remove_startup_objects(scene)
    return scene


def _start_render(args, params_of) -> tuple:
    """What every single-trace render command does first: outputs checked, its parameters
    (``params_of(args)``, a ValueError exits 2), the trace loaded, the scene ready.
    Returns (image path, .blend path or None, parameters, trace, scene)."""
    out, save = _checked_outputs(args)
    try:
        params = params_of(args)
    except ValueError as e:
        raise CLIError(str(e), 2) from None
    t = time.perf_counter()
    trace = _load(args.trace)
    _progress(0.1, f"loaded {len(trace)} calls, {trace.n_threads} threads in {time.perf_counter() - t:.2f} s")
    return out, save, params, trace, _scene()


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
    from ..blender.render import render_figure

    t = time.perf_counter()
    _progress(0.65, f"rendering {args.resolution[0]}x{args.resolution[1]} with {args.engine}")
    path = render_figure(out, engine=args.engine, resolution=args.resolution,
                         transparent=args.transparent, samples=args.samples, scene=scene)
    _progress(0.95, f"rendered in {time.perf_counter() - t:.1f} s")
    if save:
        _save_blend(save, scene)
        _progress(1.0, f"saved {save}")
    return path


