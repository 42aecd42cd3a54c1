"""TraceVis3D, the Blender extension: program execution traces as 3D icicle scenes.

The repository root is the add-on package; the bpy-free core is its subpackage
``tracevis3d``, the user interface (scene properties made from the parameter schemas,
operators, the panel) its subpackage ``ui``.  ``register()`` points numba's on-disk cache
at the extension's user folder (never the add-on folder) BEFORE the core is imported, then
registers the scene properties, operators, panel, ``load_post``/``save_pre`` handlers and the command line command::

    blender --background --command tracevis3d render-icicle TRACE -o fig.png [...]

On opening a .blend, ``load_post`` drops the traces loaded for the previous file, maps the
fields of a .blend saved by the previous version onto today's groups (`ui.legacy`) and
fills empty scene properties from the scene's build record (a .blend saved by
``python -m tracevis3d ... --save``, where the extension is not registered), or finds a trace
whose folder moved with the .blend; ``save_pre`` records the trace path relative to the .blend.

Kernels: the zip carries numba caches compiled for the generic x86-64 CPU
(``tracevis3d/_kernel_cache``, see `tracevis3d.kernel_cache`); the first job installs them
into the user cache (off the main thread).  In the UI, enabling the extension on a cold cache
starts one low-priority background Python process that installs them and compiles whatever
they do not cover (another Python or platform), while the user reads the panel.  Nothing is
ever written into the add-on folder.

``unregister()`` cancels a running job, stops that process, removes every one of them again
and gives NUMBA_CACHE_DIR back (safe to call twice).
"""
from __future__ import annotations

import os
import sys

import bpy

_UNSET = object()
_state = {"cli": None, "registered": False, "numba_cache_before": _UNSET}


def _numba_cache_dir() -> str | None:
    """The extension's user folder for numba's cache (None when not run as an extension)."""
    try:
        return bpy.utils.extension_path_user(__package__, path="numba_cache", create=True)
    except (ValueError, AttributeError):  # a legacy add-on / Blender < 4.2: keep the core's default
        return None


def _configure_numba() -> None:
    cache = _numba_cache_dir()
    if cache:
        _state["numba_cache_before"] = os.environ.get("NUMBA_CACHE_DIR")
        os.environ["NUMBA_CACHE_DIR"] = cache
    from .tracevis3d import _numba_env  # first import of the core: after the env is set

    _numba_env.configure(cache)  # also tells an already imported numba
    from .ui import background_warmup

    background_warmup.start(cache)  # the panel asks `background_warmup.running`


def _restore_numba() -> None:
    """Give NUMBA_CACHE_DIR back (other add-ons' numba must not write into our folder)."""
    before = _state["numba_cache_before"]
    if before is _UNSET:
        return
    _state["numba_cache_before"] = _UNSET
    if before is None:
        os.environ.pop("NUMBA_CACHE_DIR", None)
    else:
        os.environ["NUMBA_CACHE_DIR"] = before
    if "numba" in sys.modules:
        try:
            from numba.core import config

            config.reload_config()
        except Exception:  # noqa: BLE001  best effort, never block unregistering
            pass


def _cli_command(argv) -> int:
    """``blender --command tracevis3d ...``: the core CLI, never a traceback."""
    try:
        from .tracevis3d import cli

        return int(cli.main(list(argv)) or 0)
    except SystemExit as e:  # argparse exits on --help / bad arguments
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except KeyboardInterrupt:
        print("tracevis3d: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001  one-line error, exit non-zero
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        print(f"tracevis3d: error: {msg}", file=sys.stderr)
        return 1


def _warn(what: str, e: BaseException) -> None:
    msg = " ".join(str(e).split()) or type(e).__name__
    print(f"tracevis3d: warning: {what}: {msg}", file=sys.stderr)


@bpy.app.handlers.persistent
def _on_load_post(*_args):
    """A new .blend: drop traces loaded for the previous file; point the scenes at their traces."""
    from .tracevis3d.blender import session, tasks

    tasks.QUEUE.cancel_all()  # a job of the previous file must not touch the new one
    session.clear_cache()
    from .ui import properties

    for scene in bpy.data.scenes:
        try:
            properties.on_load(scene)
        except Exception as e:  # noqa: BLE001  a handler must never break opening a file
            _warn(f"scene {scene.name!r} of {bpy.data.filepath}: cannot restore its trace path", e)


@bpy.app.handlers.persistent
def _on_save_pre(filepath="", *_args):
    """Before saving: record each scene's trace path relative to the .blend as well."""
    from .ui import properties

    for scene in bpy.data.scenes:
        try:
            properties.note_blend_location(scene, filepath or bpy.data.filepath)
        except Exception as e:  # noqa: BLE001  never block saving
            _warn(f"scene {scene.name!r}: cannot record the trace path relative to {filepath}", e)


_HANDLERS = (("load_post", _on_load_post), ("save_pre", _on_save_pre))


def register():
    if _state["registered"]:
        return
    _configure_numba()
    from . import ui

    _state["registered"] = True
    try:
        ui.register()
        for name, fn in _HANDLERS:
            handlers = getattr(bpy.app.handlers, name)
            if fn not in handlers:
                handlers.append(fn)
        if hasattr(bpy.utils, "register_cli_command"):  # Blender >= 4.2
            _state["cli"] = bpy.utils.register_cli_command("tracevis3d", _cli_command)
    except Exception:
        unregister()  # leave nothing half-registered behind
        raise


def unregister():
    if not _state["registered"]:
        return
    from . import ui
    from .tracevis3d.blender import session, tasks, zoom_inputs

    tasks.QUEUE.cancel_all()
    from .ui import background_warmup

    background_warmup.stop()
    if _state["cli"] is not None:
        try:
            bpy.utils.unregister_cli_command(_state["cli"])
        finally:
            _state["cli"] = None
    for name, fn in _HANDLERS:
        handlers = getattr(bpy.app.handlers, name)
        while fn in handlers:
            handlers.remove(fn)
    ui.unregister()
    session.clear_cache()
    zoom_inputs.forget()
    _restore_numba()
    _state["registered"] = False
