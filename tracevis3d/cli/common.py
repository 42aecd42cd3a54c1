"""What every command of the command line shares (`tracevis3d.cli`), each under a public name:
the parser and its help layout (`Parser`, `HelpFormatter`, `add_view_command`), the exit codes
(`CLIError`), progress lines on stderr (`progress`), a view's parameters (`view_params`), a trace
checked and loaded (`check_trace`, `load_trace`, `params_and_trace`), a fresh scene
(`fresh_scene`), a build job run to its end (`run_job`, `build_scene`), the figure's outputs
checked once (`checked_outputs` -> `FigureOutput`) and rendered (`render_and_save`).

`tracevis3d.cli.render.render_view` puts them together for a view of the registry
(`tracevis3d.views`); a view's command module uses them for what is its own.  The options
themselves come from the parameter schemas (`tracevis3d.params.cli`)."""
from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass

PROG = "tracevis3d"
#: the help of a command's TRACE argument
TRACE_HELP = "a trace file in any format `tracevis3d formats` lists (recognised by its content; gzip too)"

__all__ = ["PROG", "TRACE_HELP", "FOOTER", "CLIError", "Parser", "HelpShown", "HelpFormatter", "add_view_command",
           "view_params", "progress", "run_job", "check_trace", "load_trace", "params_and_trace", "fresh_scene",
           "fill_scene_settings", "checked_render_memory", "checked_save", "FigureOutput", "checked_outputs",
           "build_scene", "choose_device_or_exit", "render_and_save"]


class CLIError(Exception):
    """A command's failure: its one line (``tracevis3d: error: ...``) and exit code."""

    def __init__(self, msg: str, code: int = 2):
        super().__init__(msg)
        self.code = code


class Parser(argparse.ArgumentParser):
    """argparse's parser whose errors are a `CLIError` (one line, exit 2) and whose ``--help``
    ends the command with `HelpShown` (exit 0), never a ``SystemExit``."""

    def error(self, message):  # one line instead of usage + message + exit
        raise CLIError(message, 2)

    def exit(self, status=0, message=None):
        if message:
            sys.stderr.write(message)
        raise CLIError("", status) if status else HelpShown()


class HelpShown(Exception):
    """``--help`` or ``--version`` was printed: the command ends with exit 0."""


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Aligned, wide enough for the option names; every help text states its default."""

    def __init__(self, prog):
        super().__init__(prog, max_help_position=32, width=min(100, max(60, _terminal_width())))


def _terminal_width() -> int:
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return 100


FOOTER = """
times take a unit (ns, us, µs, ms, s; no unit: µs), relative to the trace start.
exit status: 0 ok, 1 unreadable trace or failed step, 2 bad arguments, 3 internal error.
"""


def add_view_command(sub, command: str, description: str, epilog: str = FOOTER, positionals=None) -> None:
    """The parser of a view's command (`tracevis3d.views`): its help line and its option
    schemas are the registry's, its description, examples and positionals the CLI module's
    (default positionals: one TRACE)."""
    from ..params.cli import add_command
    from ..views import commands

    view, cmd = commands()[command]
    add_command(sub, cmd.name, help=cmd.help, description=description, epilog=epilog, formatter=HelpFormatter,
                positionals=positionals if positionals is not None else [("trace", "TRACE", TRACE_HELP)],
                schemas=view.option_schemas())


def view_params(name: str, args, skip=()):
    """The validated parameter object of view ``name`` from parsed arguments (`views.View.make_params`:
    ``from_dict``, as every job builds them); ``skip``: options left at the view's defaults."""
    from ..params.cli import values
    from ..views import view

    v = view(name)
    return v.make_params(values(args, v.params_class.SCHEMA, skip=list(skip)))


def progress(frac: float, text: str) -> None:
    """One progress line on stderr: ``[ 60%] text``."""
    sys.stderr.write(f"[{int(round(frac * 100)):3d}%] {text}\n")
    sys.stderr.flush()


def run_job(job, lo: float = 0.0, hi: float = 1.0):
    """Poll ``job`` to its end (the code the extension's UI drives), one progress line per
    step (scaled into [lo, hi]); its result, or its error raised."""
    last = [None]

    def show(j):
        if j.text != last[0] and j.state == "running":
            last[0] = j.text
            progress(lo + (hi - lo) * j.fraction, j.text)

    job.listeners.append(show)
    return job.run(interval=0.05)


def _trace_error(path: str, e: BaseException) -> CLIError:
    """One line naming the trace file and what is wrong with it (exit 1)."""
    msg = " ".join(str(e).split()) or type(e).__name__
    for prefix in (f"{os.path.abspath(path)}: ", f"{path}: "):
        if msg.startswith(prefix):
            msg = msg[len(prefix):]
    return CLIError(f"cannot read trace {path}: {msg}", 1)


def check_trace(path: str) -> None:
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


def load_trace(path: str, lo: float = 0.0, hi: float = 0.1):
    """The trace at ``path`` (`check_trace` first), read by the load job with its progress lines
    scaled into [lo, hi] (the session's cache keeps it for a later job of the same file); the
    readers' repairs one warning line each; CLIError 1 for a file that cannot be read or holds
    no call."""
    check_trace(path)
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
        from ..model_side import no_calls_message

        raise CLIError(f"trace {no_calls_message(trace, str(path))}", 1)
    return trace


def params_and_trace(args, params_of) -> tuple:
    """(parameters, trace): ``params_of(args)`` (a ValueError exits 2, before anything
    loads), then ``args.trace`` loaded with its progress line."""
    try:
        params = params_of(args)
    except ValueError as e:
        raise CLIError(str(e), 2) from None
    t = time.perf_counter()
    trace = load_trace(args.trace)
    progress(0.1, f"loaded {len(trace)} calls, {trace.n_threads} threads in {time.perf_counter() - t:.2f} s")
    return params, trace


def fresh_scene():
    """Blender's scene, its untouched startup objects removed (a fresh file's Cube, Light and
    Camera; a loaded .blend's objects stay); CLIError 1 without bpy."""
    from ..blender.render import current_scene

    try:
        scene = current_scene()
    except ImportError:
        raise CLIError("bpy is not available: run inside Blender or install the bpy module", 1) from None
    from ..blender.hygiene import remove_startup_defaults

    removed = remove_startup_defaults(scene)
    if removed:
        progress(0.1, f"removed the startup {', '.join(removed)}")
    if ONE_SHOT["freeze_imports"]:
        import gc

        gc.freeze()
    return scene


#: ``freeze_imports``: this process is a one-shot ``render-*`` (`cli.console`; it ends after its
#: figure), so `fresh_scene` moves every object made so far (the imports: numba's, bpy's, the
#: package's, and the loaded trace's few) to the collector's permanent generation (`gc.freeze`).
#: The full collection that then ran as the layout began walked them all and freed none (0.075 s
#: of a 10^7 icicle, quiet); what the layout and the scene make is collected as before
ONE_SHOT = {"freeze_imports": False}


def fill_scene_settings(scene, what: str) -> None:
    """When the extension is registered (``blender --command``), its scene properties get the
    trace paths and parameters of the scene just built (``what``: the view's name), as if built
    from the panel."""
    settings = getattr(scene, "tracevis3d", None)
    restore = getattr(settings, "restore_from_build", None)
    if callable(restore):
        restore(force=True, what=what)


def checked_render_memory(args) -> None:
    """A ``--resolution`` whose render needs more memory than is free exits 1 in one line before
    anything loads or is laid out (`blender.render.check_render_memory`)."""
    from ..blender.render import check_render_memory

    res = getattr(args, "resolution", None)
    if res:
        try:
            check_render_memory(*res, engine=getattr(args, "engine", "workbench"))
        except ValueError as e:
            raise CLIError(str(e), 1) from None


def checked_save(args) -> str | None:
    """The absolute ``--save`` path (a .blend in an existing folder), or None (CLIError 2)."""
    if not args.save:
        return None
    save = os.path.abspath(args.save)
    if not save.endswith(".blend"):
        raise CLIError(f"--save needs a .blend path, got {args.save}", 2)
    if not os.path.isdir(os.path.dirname(save)):
        raise CLIError(f"folder for --save does not exist: {os.path.dirname(save)}", 2)
    return save


@dataclass(frozen=True)
class FigureOutput:
    """Where and how a command's figure is rendered, read from its arguments once and checked
    (`checked_outputs`): the image's absolute path, the .blend to save (or None) and the render
    options of `params.render.RENDER`."""

    image: str
    save: str | None
    engine: str
    resolution: tuple
    transparent: bool
    samples: int | None
    device: str


def checked_outputs(args) -> FigureOutput:
    """The figure's outputs of a ``render-*`` command's arguments, checked before anything loads:
    the image's format can hold what is asked and its folder exists (CLIError 2), the render
    fits in memory (CLIError 1), ``--save`` is a .blend in an existing folder (CLIError 2)."""
    from ..blender.render import check_output

    out = os.path.abspath(args.output)
    try:
        check_output(out, args.transparent)
    except ValueError as e:
        raise CLIError(str(e), 2) from None
    checked_render_memory(args)
    if os.path.isdir(out):
        raise CLIError(f"output path is a folder, not a file: {out}", 2)
    if not os.path.isdir(os.path.dirname(out)):
        raise CLIError(f"output folder does not exist: {os.path.dirname(out)}", 2)
    return FigureOutput(out, checked_save(args), args.engine, tuple(args.resolution), args.transparent, args.samples,
                        getattr(args, "device", "auto"))


def build_scene(job, what: str, lo: float, hi: float) -> dict:
    """Run a scene-building job to its end (`run_job`, progress scaled into [lo, hi]); its
    result, with ``timings["total"]``.  A parameter the traces cannot satisfy (a thread they do
    not have, an empty window) is a bad argument (exit 2) named after ``what``."""
    try:
        t = time.perf_counter()
        info = run_job(job, lo, hi)
        info["timings"]["total"] = time.perf_counter() - t
        return info
    except (ValueError, KeyError, IndexError) as e:
        msg = " ".join(str(e).strip("'\"").split())
        raise CLIError(f"{what}: {msg}", 2) from None


def choose_device_or_exit(scene, device: str, engine: str) -> str:
    """`blender.device.choose_device`'s sentence; no GPU for ``--device gpu``: exit 2."""
    from ..blender.device import NoGPUError, choose_device
    from ..blender.render import quiet_blender_output

    try:
        with quiet_blender_output():  # "CUEW initialization failed" where there is no CUDA
            return choose_device(scene, device, engine)
    except NoGPUError as e:
        raise CLIError(str(e), 2) from None


def render_and_save(fig: FigureOutput, scene) -> str:
    """Render the scene's camera view to ``fig.image`` (and save the .blend ``fig.save``); the
    image path."""
    from ..blender.render import engine_id, render_figure, save_blend

    t = time.perf_counter()
    progress(0.65, f"rendering {fig.resolution[0]}x{fig.resolution[1]} with {fig.engine}")
    progress(0.65, choose_device_or_exit(scene, fig.device, engine_id(fig.engine)))
    path = render_figure(fig.image, engine=fig.engine, resolution=fig.resolution, transparent=fig.transparent,
                         samples=fig.samples, scene=scene, device=fig.device)
    progress(0.95, f"rendered in {time.perf_counter() - t:.1f} s")
    if fig.save:
        if not save_blend(fig.save, scene):
            raise CLIError(f"could not save {fig.save}", 1)
        progress(1.0, f"saved {fig.save}")
    return path
