"""What a Dask worker runs for `render-batch`: one figure, its view's ``render-*`` command run in
the worker's Blender thread (`tracevis3d.blender.cluster_worker.in_bpy_thread`).  It lives with
the command line because it runs the command line; the worker's Blender state (the open file,
the one thread bpy is driven from) is `blender.cluster_worker`'s."""
from __future__ import annotations

import os
import shutil
import tempfile
import time

from ..blender import cluster_worker as worker_state


def _run_command(argv: list) -> tuple:
    """(exit code, last error line) of a ``tracevis3d`` command run here, in this thread (`cli.main`'s
    handling of errors without its process-wide setup: no signal handler outside the main
    thread)."""
    import contextlib
    import io

    from . import command_runner, make_parser
    from .common import CLIError, HelpShown

    err = io.StringIO()
    code, line = 0, ""
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            args = make_parser().parse_args(argv)
            command_runner(args.command)(args)
        except HelpShown:
            pass
        except CLIError as e:
            code, line = e.code, str(e)
        except (ValueError, OSError, RuntimeError, MemoryError) as e:
            code, line = 1, " ".join(str(e).split()) or type(e).__name__
        except Exception as e:  # the batch records it; the worker goes on
            code, line = 3, f"internal error: {type(e).__name__}: {' '.join(str(e).split())}"
    return code, line or ("" if code == 0 else (err.getvalue().strip().splitlines() or ["failed"])[-1])


def _render_figure(command: str, inputs: list, options: list, ext: str) -> dict:
    t = time.perf_counter()
    worker_state.close_open_scene()  # a figure starts from an empty file
    work = tempfile.mkdtemp(prefix="tv3d-figure-")
    try:
        paths = []
        for k, (name, data) in enumerate(inputs):
            if isinstance(data, str):  # a path the workers share
                paths.append(data)
                continue
            folder = os.path.join(work, str(k))
            os.makedirs(folder)
            paths.append(os.path.join(folder, os.path.basename(name)))
            with open(paths[-1], "wb") as f:
                f.write(data)
        out = os.path.join(work, f"figure{ext}")
        code, line = _run_command([command, *paths, "-o", out, *options])
        image = None
        if code == 0 and os.path.isfile(out):
            with open(out, "rb") as f:
                image = f.read()
        elif code == 0:
            code, line = 1, "the command wrote no image"
        return {"code": code, "error": line, "image": image, "seconds": time.perf_counter() - t}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def render_figure(command: str, inputs: list, options: list, ext: str = ".png") -> dict:
    """One figure: ``command`` (``render-icicle``, …) on ``inputs`` [(name, path or bytes)] with
    ``options``, written to a temporary image: {"code", "error" (one line), "image" (bytes or
    None), "seconds", "worker"}.  A failing trace is a result (its code and line), not an
    exception: the batch records it and goes on."""
    worker = worker_state.worker_name()
    res = worker_state.in_bpy_thread(_render_figure, command, inputs, options, ext)
    res["worker"] = worker
    return res
