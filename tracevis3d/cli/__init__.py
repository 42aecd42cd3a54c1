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
import sys

from .common import PROG, CLIError, _Help, _HelpShown, _Parser, run_job  # noqa: F401 (run_job: the API)
from .compare import _add_compare_parser, compare_params, render_compare  # noqa: F401
from .icicle import _add_icicle_parser, icicle_params, render_icicle  # noqa: F401


def make_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="TraceVis3D: execution traces as 3D scenes in Blender.",
                formatter_class=_Help)
    from .._version import __version__

    from ..params.cli import add_version

    add_version(p, f"{PROG} {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    _add_icicle_parser(sub)
    _add_compare_parser(sub)
    from .threads import add_threads_parser

    add_threads_parser(sub)
    from .cone import add_cone_parser

    add_cone_parser(sub)
    from .extravis import add_extravis_parser

    add_extravis_parser(sub)

    from .animation import add_animation_parser

    add_animation_parser(sub)
    from .live import add_parsers as _add_live_parsers

    _add_live_parsers(sub)
    sub.add_parser("formats", help="list the trace formats TraceVis3D recognises and reads",
                   description="List every trace format TraceVis3D recognises: whether it is read, what its x\n"
                               "axis is (time, or a measure for merged stacks), the tools that write it.\n"
                               "Files are recognised by their content, not their names; gzip is inflated first.",
                   formatter_class=_Help)
    return p


def list_formats(_args) -> str:
    """``tracevis3d formats``: the table of formats (`tracevis3d.io.formats.describe_formats`)."""
    from ..io.formats import describe_formats

    return describe_formats()



def render_threads(args) -> str:
    from .threads import render_threads as _render_threads

    return _render_threads(args)


def render_cone(args) -> str:
    from .cone import render_cone as run

    return run(args)


def render_extravis(args) -> str:
    from .extravis import render_extravis as run

    return run(args)


def render_animation(args) -> str:
    from .animation import render_animation as run

    return run(args)


COMMANDS = {"render-icicle": render_icicle, "render-animation": render_animation,
            "render-compare": render_compare, "render-threads": render_threads,
            "render-cone": render_cone, "render-extravis": render_extravis, "render-heb": render_extravis,
            "render-sequence": render_extravis, "formats": list_formats}


def console(argv: list[str] | None = None) -> int:
    """The ``tracevis3d`` command and ``python -m tracevis3d``: `main`, a one-shot ``render-*``
    command (not ``render-live``) first setting the C allocator for its passes over large arrays
    (`tracevis3d.allocator`; the process ends after it).  Scripts and tests call `main`."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0].startswith("render-") and argv[0] != "render-live":
        from ..allocator import tune_for_batch

        tune_for_batch()
    return main(argv)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from ..io.mapguard import prefer_guard

    prefer_guard()  # a one-shot process: a mapped input cut short under it ends it in one line (exit 1)
    try:
        args = make_parser().parse_args(argv)
        if args.command is None:
            raise CLIError("missing command; try: render-icicle TRACE -o fig.png "
                           "or render-compare A B -o fig.png", 2)
        if args.command not in COMMANDS:
            from .live import COMMANDS as live_commands

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
