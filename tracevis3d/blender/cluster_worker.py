"""What a Dask worker runs (issue 72): frames of a saved animation (a batch figure: `cli.batch_worker`).

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


def worker_name() -> str:
    """The address of the Dask worker this runs in (``pid N`` outside one): a figure's or a
    frame's record names it."""
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


def _import_bpy():
    """The ``bpy`` module, imported in a worker whose ``sys.path`` may be its client's: a local
    cluster's processes are spawned with the path of the process that started them, and one that
    had imported the bpy module lists Blender's ``scripts/modules`` first, whose ``bpy`` package
    (the Python half, without ``_bpy``) then hides the module's own.  Those folders are dropped
    before the first import (importing bpy adds them again)."""
    import sys

    if "bpy" not in sys.modules:
        tail = os.path.join("scripts", "modules")
        sys.path[:] = [p for p in sys.path
                       if not (p.rstrip(os.sep).endswith(tail) and os.path.isfile(os.path.join(p, "bpy", "__init__.py")))]
    import bpy

    return bpy


def _open(blend, digest: str):
    bpy = _import_bpy()

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
    return _import_bpy().app.version_string


def bpy_version() -> str:
    """The bpy module's version, imported in the bpy thread (the workers' probe)."""
    return in_bpy_thread(_bpy_version)


def render_chunk(blend, digest: str, a: int, b: int) -> dict:
    """Scene frames a..b of the saved animation ``blend`` (path or bytes) as PNG bytes, rendered
    with the file's own engine and settings (`anim_render.render_frames`):
    {"frames", "pngs", "worker", "seconds"}."""
    worker = worker_name()
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


def close_open_scene() -> None:
    """An empty Blender file in place of the animation a chunk left open (a batch figure starts
    from nothing); called in the worker's Blender thread."""
    if _OPEN["digest"] is None:
        return
    import bpy

    from .render import quiet_blender_output

    with quiet_blender_output():
        bpy.ops.wm.read_factory_settings(use_empty=True)
    _OPEN["digest"] = None
