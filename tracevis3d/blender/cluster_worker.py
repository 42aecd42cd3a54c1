"""What a Dask worker runs (issue 72): frames of a saved animation, or one figure of a batch.

The worker process keeps one Blender state (the ``bpy`` module), used from one thread of its
own (`in_bpy_thread`): bpy imported in one thread and driven from another crashes the process
on its first file open (Dask runs ``client.run`` in the worker's event loop and tasks in its
executor threads), and it serialises the tasks of a worker with more than one thread.  A
chunk's scene stays open for the next chunk of the same file (opened again only when the
file's SHA-256 differs).  A task returns the bytes of what it rendered; it
writes nothing the client reads, so running it twice (Dask runs a dead worker's task again)
changes nothing.  The .blend comes as a path (a shared file system) or as bytes, kept in a
file of this process's temporary folder named by its SHA-256.
"""
from __future__ import annotations

import concurrent.futures
import os
import shutil
import tempfile
import threading
import time

_BPY_THREAD = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="tv3d-bpy")
_OPEN = {"digest": None}
_CACHE = os.path.join(tempfile.gettempdir(), f"tv3d-worker-{os.getpid()}")


def _worker_name() -> str:
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return f"pid {os.getpid()}"


def _blend_path(blend, digest: str) -> str:
    if isinstance(blend, str):
        return blend
    os.makedirs(_CACHE, exist_ok=True)
    path = os.path.join(_CACHE, f"{digest}.blend")
    if not os.path.isfile(path):
        tmp = path + f".{threading.get_ident()}.part"
        with open(tmp, "wb") as f:
            f.write(blend)
        os.replace(tmp, path)
    return path


def _open(blend, digest: str):
    import bpy

    from .render import quiet_blender_output

    if _OPEN["digest"] != digest:
        path = _blend_path(blend, digest)
        with quiet_blender_output():
            bpy.ops.wm.open_mainfile(filepath=path, load_ui=False)
        _OPEN["digest"] = digest
    return bpy.context.scene


def in_bpy_thread(fn, *args):
    """``fn(*args)`` in this process's one bpy thread (module docstring); its result."""
    return _BPY_THREAD.submit(fn, *args).result()


def _bpy_version() -> str:
    import bpy

    return bpy.app.version_string


def bpy_version() -> str:
    """The bpy module's version, imported in the bpy thread (the workers' probe)."""
    return in_bpy_thread(_bpy_version)


def render_chunk(blend, digest: str, a: int, b: int) -> dict:
    """Scene frames a..b of the saved animation ``blend`` (path or bytes) as PNG bytes, rendered
    with the file's own engine and settings (`anim_render.render_frames`):
    {"frames", "pngs", "worker", "seconds"}."""
    worker = _worker_name()
    res = in_bpy_thread(_render_chunk, blend, digest, a, b)
    res["worker"] = worker
    return res


def _render_chunk(blend, digest: str, a: int, b: int) -> dict:
    t = time.perf_counter()
    scene = _open(blend, digest)
    from .anim_render import render_frames

    r = scene.render
    stage = tempfile.mkdtemp(prefix="tv3d-chunk-")
    old = r.filepath
    try:
        im = r.image_settings
        if im.file_format != "PNG":
            raise ValueError("the saved animation does not render PNG frames")
        r.filepath = os.path.join(stage, "frame_")
        res = render_frames(scene, (int(a), int(b)))
        pngs = []
        for f in res["files"]:
            with open(f, "rb") as fh:
                pngs.append(fh.read())
    finally:
        r.filepath = old
        shutil.rmtree(stage, ignore_errors=True)
    return {"frames": list(range(int(a), int(b) + 1)), "pngs": pngs, "seconds": time.perf_counter() - t}


def _run_command(argv: list) -> tuple:
    """(exit code, last error line) of a ``tracevis3d`` command run here, in this thread (`cli.main`'s
    handling of errors without its process-wide setup: no signal handler outside the main
    thread)."""
    import contextlib
    import io

    from ..cli import command_runner, make_parser
    from ..cli.common import CLIError, _HelpShown

    err = io.StringIO()
    code, line = 0, ""
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            args = make_parser().parse_args(argv)
            command_runner(args.command)(args)
        except _HelpShown:
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
    if _OPEN["digest"] is not None:  # an animation's file is open: a figure starts from an empty file
        import bpy

        from .render import quiet_blender_output

        with quiet_blender_output():
            bpy.ops.wm.read_factory_settings(use_empty=True)
        _OPEN["digest"] = None
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
    worker = _worker_name()
    res = in_bpy_thread(_render_figure, command, inputs, options, ext)
    res["worker"] = worker
    return res
