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


def make_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="TraceVis3D: execution traces as 3D scenes in Blender.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    r = sub.add_parser("render-icicle", help="render the extruded 3D icicle of a trace to an image")
    r.add_argument("trace", metavar="TRACE", help="Chrome trace JSON (.json, .json.gz) or native .npz")
    r.add_argument("-o", "--output", required=True, help="output image (.png)")
    r.add_argument("--engine", default="workbench", choices=["workbench", "eevee", "cycles"])
    r.add_argument("--resolution", type=_resolution, default=(1920, 1080), metavar="WxH")
    r.add_argument("--thread", action="append", type=_thread, metavar="T",
                   help="thread index or name (repeatable); default all")
    r.add_argument("--window", type=_window, metavar="T0:T1", help="time window, µs from the trace start")
    r.add_argument("--max-depth", type=int, metavar="D", help="show stack levels 0..D only")
    r.add_argument("--save", metavar="SCENE.blend", help="also save the scene as a .blend file")
    r.add_argument("--samples", type=int, help="render samples (EEVEE/Cycles; Workbench anti-aliasing)")
    r.add_argument("--transparent", action="store_true", help="transparent background")
    r.add_argument("--color-by", default="function", choices=["function", "module", "depth", "inclusive", "self"])
    r.add_argument("--extrude", default="inclusive", choices=["constant", "inclusive", "self", "calls"])
    r.add_argument("--orthographic", action="store_true", help="orthographic camera")
    r.add_argument("--no-labels", action="store_true")
    r.add_argument("--no-legend", action="store_true")
    return p


def _progress(frac: float, text: str) -> None:
    sys.stderr.write(f"[{int(round(frac * 100)):3d}%] {text}\n")
    sys.stderr.flush()


def _load(path: str):
    if not os.path.exists(path):
        raise CLIError(f"trace file not found: {path}", 1)
    if os.path.isdir(path):
        raise CLIError(f"trace path is a folder, not a file: {path}", 1)
    try:
        from . import load
    except ImportError as e:  # pragma: no cover - the loader ships with the core
        raise CLIError(f"trace loader unavailable: {e}", 1) from None
    import warnings

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            trace = load(path)
    except Exception as e:  # any parser failure is a bad input, reported on one line
        msg = " ".join(str(e).split()) or type(e).__name__
        if msg.startswith(f"{path}: "):
            msg = msg[len(path) + 2:]
        raise CLIError(f"cannot read trace {path}: {msg}", 1) from None
    for w in caught:  # importer repairs: one line each
        sys.stderr.write(f"{PROG}: warning: {' '.join(str(w.message).split())}\n")
    return trace


def _empty_scene():
    """Start from a scene without the startup file's cube, light and camera."""
    import bpy

    obs = [ob for ob in bpy.data.objects if not ob.get("tracevis3d")]
    if obs:
        bpy.data.batch_remove(obs)


def render_icicle(args) -> str:
    from .layout.icicle import IcicleParams

    out = os.path.abspath(args.output)
    if not os.path.isdir(os.path.dirname(out)):
        raise CLIError(f"output folder does not exist: {os.path.dirname(out)}", 2)
    if args.save:
        save = os.path.abspath(args.save)
        if not save.endswith(".blend"):
            raise CLIError(f"--save needs a .blend path, got {args.save}", 2)
        if not os.path.isdir(os.path.dirname(save)):
            raise CLIError(f"folder for --save does not exist: {os.path.dirname(save)}", 2)
    if args.samples is not None and args.samples < 1:
        raise CLIError(f"--samples must be >= 1, got {args.samples}", 2)
    params = IcicleParams(
        extrude_measure=args.extrude, color_by=args.color_by, threads=args.thread,
        time_window=args.window, max_depth=args.max_depth, resolution=args.resolution, orthographic=args.orthographic,
        show_labels=not args.no_labels, show_legend=not args.no_legend,
    )
    try:
        params.validate()
    except ValueError as e:
        raise CLIError(str(e), 2) from None
    t = time.perf_counter()
    _progress(0.0, f"loading {args.trace}")
    trace = _load(args.trace)
    _progress(0.1, f"loaded {len(trace)} calls, {trace.n_threads} threads in {time.perf_counter() - t:.2f} s")
    if len(trace) == 0:
        raise CLIError(f"trace {args.trace} holds no calls", 1)
    try:
        import bpy  # noqa: F401
    except ImportError:
        raise CLIError("bpy is not available: run inside Blender or install the bpy module", 1) from None
    from .blender.render import render_figure
    from .blender.scene import build_icicle

    _empty_scene()
    try:
        info = build_icicle(trace, params, progress=lambda f, s: _progress(0.1 + 0.5 * f, s))
    except (ValueError, KeyError, IndexError) as e:
        raise CLIError(" ".join(str(e).strip("'\"").split()), 2) from None
    m = info["meta"]
    _progress(0.6, f"scene: {m['n_boxes']} boxes, {m['n_clusters']} clusters "
                   f"({m['n_clustered_calls']} calls merged) in {info['timings']['total']:.2f} s")
    t = time.perf_counter()
    _progress(0.65, f"rendering {args.resolution[0]}x{args.resolution[1]} with {args.engine}")
    path = render_figure(out, engine=args.engine, resolution=args.resolution,
                         transparent=args.transparent, samples=args.samples)
    _progress(0.95, f"rendered in {time.perf_counter() - t:.1f} s")
    if args.save:
        import bpy

        r = bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath(args.save), check_existing=False)
        if "FINISHED" not in r:
            raise CLIError(f"could not save {args.save}", 1)
        _progress(1.0, f"saved {os.path.abspath(args.save)}")
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
