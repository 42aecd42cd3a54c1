"""What every TraceVis3D operator shares: error reports, progress, settings access.

Operators are thin: they read the scene properties, call the core / Blender layer and turn
every failure into a Blender report (``{'CANCELLED'}``, one line, no traceback).  With
``blender --debug-python`` the traceback of an unexpected error is printed as well.
"""
from __future__ import annotations

import functools
import os
import sys
import traceback

import bpy

from ..tracevis3d.model import TraceError

# Errors about the user's input, not our bug: report the message only.  Anything else is
# reported as an internal error (still one line, no traceback unless --debug-python).
USER_ERRORS = (TraceError, ValueError, OSError)


def one_line(exc: BaseException, limit: int = 400) -> str:
    text = str(exc).strip()
    line = text.splitlines()[0].strip() if text else ""
    if isinstance(exc, KeyError) and line.startswith("'") and line.endswith("'"):
        line = line[1:-1]
    if not line:
        line = type(exc).__name__
    return line if len(line) <= limit else line[: limit - 1] + "…"


def reported(fn):
    """Decorate ``execute``/``invoke``: exceptions become an ERROR report and CANCELLED.

    Blender checks the argument count of these methods, so the wrapper keeps it.
    """

    def call(self, context, *args):
        try:
            return fn(self, context, *args)
        except USER_ERRORS as e:
            self.report({"ERROR"}, f"TraceVis3D: {one_line(e)}")
        except Exception as e:  # noqa: BLE001  a bug: still no traceback in the UI
            self.report({"ERROR"}, f"TraceVis3D internal error ({type(e).__name__}): {one_line(e)}"
                        " (run Blender with --debug-python for details)")
            if bpy.app.debug_python:
                traceback.print_exc()
        finally:
            Progress.end_all(context)
        return {"CANCELLED"}

    if fn.__code__.co_argcount == 3:  # invoke(self, context, event)
        def wrapper(self, context, event):
            return call(self, context, event)
    else:  # execute(self, context)
        def wrapper(self, context):
            return call(self, context)
    return functools.wraps(fn)(wrapper)


def numba_cache_is_cold() -> bool:
    """True when numba's cache holds no compiled kernel yet (the first run compiles them)."""
    d = os.environ.get("NUMBA_CACHE_DIR")
    if not d or not os.path.isdir(d):
        return True
    for _root, _dirs, files in os.walk(d):
        if any(f.endswith(".nbi") for f in files):
            return False
    return True


def loading_text() -> str:
    if numba_cache_is_cold():
        return "loading trace (first run: compiling kernels once, this can take a minute)"
    return "loading trace"


def settings_of(context):
    scene = context.scene
    if scene is None:
        raise ValueError("no active scene")
    return scene.tracevis3d


def abspath(path: str) -> str:
    """A Blender path as an absolute file-system path.

    '//' means "next to the .blend"; while the .blend is unsaved there is no such folder, so
    '//' then means the user's home folder (the operators report the full path they used).
    """
    if not path or not path.strip():
        return ""
    path = path.strip()
    if path.startswith("//") and not bpy.data.filepath:
        return os.path.abspath(os.path.join(os.path.expanduser("~"), path[2:]))
    return os.path.abspath(bpy.path.abspath(path))


def trace_path_of(context) -> str:
    path = abspath(settings_of(context).trace_path)
    if not path:
        raise ValueError("no trace file: use Import Trace first (or set the trace path)")
    return path


class Progress:
    """``progress(fraction, text)`` callback: window-manager progress and the status bar.

    In background mode (no window) progress goes to stderr instead, at most every 10 %.
    """

    _active: list["Progress"] = []

    def __init__(self, context, title: str):
        self.context = context
        self.title = title
        self.wm = context.window_manager
        self.last_tenth = -1
        self.background = bpy.app.background
        if self.wm is not None:
            self.wm.progress_begin(0, 1000)
        Progress._active.append(self)
        self(0.0, title)

    def __call__(self, fraction: float, text: str = "") -> None:
        fraction = min(max(float(fraction), 0.0), 1.0)
        message = f"{self.title}: {text}" if text and text != self.title else self.title
        if self.wm is not None:
            self.wm.progress_update(int(fraction * 1000))
        workspace = getattr(self.context, "workspace", None)
        if workspace is not None and not self.background:
            workspace.status_text_set(f"TraceVis3D {message} ({fraction * 100:.0f} %)")
        if self.background:
            tenth = int(fraction * 10)
            if tenth != self.last_tenth:
                self.last_tenth = tenth
                print(f"[tracevis3d] {message} {fraction * 100:3.0f} %", file=sys.stderr)

    def end(self) -> None:
        if self in Progress._active:
            Progress._active.remove(self)
            if self.wm is not None:
                self.wm.progress_end()
            workspace = getattr(self.context, "workspace", None)
            if workspace is not None and not self.background:
                workspace.status_text_set(None)

    @classmethod
    def end_all(cls, context) -> None:
        for p in list(cls._active):
            p.end()
