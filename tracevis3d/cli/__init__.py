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

from .common import PROG, CLIError, HelpFormatter, HelpShown, Parser, run_job  # noqa: F401 (run_job: the API)
from .compare import compare_params, render_compare  # noqa: F401
from .icicle import icicle_params, render_icicle  # noqa: F401
from .render import render_view  # noqa: F401


def make_parser() -> argparse.ArgumentParser:
    p = Parser(prog=PROG, description="TraceVis3D: execution traces as 3D scenes in Blender.",
               formatter_class=HelpFormatter)
    from .._version import __version__

    from ..params.cli import add_version

    add_version(p, f"{PROG} {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    from ..views import VIEWS, resolve

    for view in VIEWS:  # each view's commands, added by its CLI module (`tracevis3d.views`)
        if view.commands:
            resolve(view.cli).add_parsers(sub)

    from .animation import add_animation_parser

    add_animation_parser(sub)
    from .batch import add_batch_parser

    add_batch_parser(sub)
    sub.add_parser("formats", help="list the trace formats TraceVis3D recognises and reads",
                   description="List every trace format TraceVis3D recognises: whether it is read, what its x\n"
                               "axis is (time, or a measure for merged stacks), the tools that write it.\n"
                               "Files are recognised by their content, not their names; gzip is inflated first.",
                   formatter_class=HelpFormatter)
    return p


def list_formats(_args) -> str:
    """``tracevis3d formats``: the table of formats (`tracevis3d.io.formats.describe_formats`)."""
    from ..io.formats import describe_formats

    return describe_formats()


def render_animation(args) -> str:
    from .animation import render_animation as run

    return run(args)


def render_batch(args) -> str:
    from .batch import render_batch as run

    return run(args)


#: the commands that are no view's (a view's commands are its CLI module's, `command_runner`)
COMMANDS = {"render-animation": render_animation, "render-batch": render_batch, "formats": list_formats}


def command_runner(command: str):
    """The function that runs ``command``: one of `COMMANDS`, else from the ``COMMANDS`` of the
    view CLI modules (`tracevis3d.views`: their views' commands, and a module's tools such as
    ``replay``); None for an unknown command."""
    if command in COMMANDS:
        return COMMANDS[command]
    from ..views import VIEWS, resolve

    for view in VIEWS:
        if view.commands:
            run = getattr(resolve(view.cli), "COMMANDS", {}).get(command)
            if run is not None:
                return run
    return None


def console(argv: list[str] | None = None) -> int:
    """The ``tracevis3d`` command and ``python -m tracevis3d``: `main`, a one-shot ``render-*``
    command (not ``render-live``) first setting the C allocator for its passes over large arrays
    (`tracevis3d.allocator`; the process ends after it) and leaving its objects out of the exit's
    garbage collection (`skip_exit_collection`) and its imports' out of the collections after the
    scene is made (`common.ONE_SHOT`).  Scripts and tests call `main`."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not (argv and argv[0].startswith("render-") and argv[0] != "render-live"):
        return main(argv)
    from ..allocator import judge_heap_pages, tune_for_batch
    from .common import ONE_SHOT

    if tune_for_batch():
        judge_heap_pages()  # (the heap's huge pages judged once it keeps what is given back)
    skip_exit_collection()
    ONE_SHOT["freeze_imports"] = True  # `fresh_scene`: the imports left out of the collector's passes
    try:
        return main(argv)
    finally:
        ONE_SHOT["freeze_imports"] = False


def skip_exit_collection() -> None:
    """At exit, move every object to the collector's permanent generation (`gc.freeze`, an
    `atexit` handler: registered first, it runs after the others): the interpreter's last full
    collections then walk none of the command's objects (numba's, bpy's, the figure's).  It
    took 0.15-0.2 s of a 10^7 icicle's exit, freeing nothing the ending process needs back."""
    import atexit
    import gc

    atexit.register(gc.freeze)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from ..io.mapguard import prefer_guard

    prefer_guard()  # a one-shot process: a mapped input cut short under it ends it in one line (exit 1)
    try:
        args = make_parser().parse_args(argv)
        if args.command is None:
            raise CLIError("missing command; try: render-icicle TRACE -o fig.png "
                           "or render-compare A B -o fig.png", 2)
        run = command_runner(args.command)
        if run is None:  # pragma: no cover
            raise CLIError(f"unknown command {args.command!r}", 2)
        print(run(args))
        return 0
    except HelpShown:
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
