"""What every TraceVis3D operator shares: error reports, jobs and their progress, settings.

Operators are thin: they read the scene properties, start a job of the Blender layer
(`tracevis3d.blender.tasks`) through `JobOperator` and turn every failure into a Blender
report (``{'CANCELLED'}``, one line, no traceback).  With ``blender --debug-python`` the
traceback of an unexpected error is printed as well.
"""
from __future__ import annotations

import functools
import os
import traceback

import bpy

from ...tracevis3d.model import TraceError

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
        return {"CANCELLED"}

    if fn.__code__.co_argcount == 3:  # invoke(self, context, event)
        def wrapper(self, context, event):
            return call(self, context, event)
    else:  # execute(self, context)
        def wrapper(self, context):
            return call(self, context)
    return functools.wraps(fn)(wrapper)


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


class JobOperator:
    """Mixin: run a `tracevis3d.jobs.Job` from an operator, the same way in the UI and headless.

    In the UI the job goes into the extension's queue and a modal timer polls it (Blender
    stays live): its progress is in the status bar and the panel, Esc (or the panel's
    Cancel) cancels it.  Headless (``blender --background``, the bpy module: no window, and
    timers never fire) ``execute`` polls the same job to its end before returning.  A second
    request while a job runs is refused with a message naming the running job.
    Subclasses call ``self.start_job(context, job, on_done)``; ``on_done(context, result)``
    returns the INFO message.
    """

    _timer = None
    _job = None
    _on_done = None

    def start_job(self, context, job, on_done):
        from ...tracevis3d.blender.tasks import QUEUE

        QUEUE.submit(job)  # Busy (a RuntimeError) -> reported, nothing started
        self._job, self._on_done = job, on_done
        wm = context.window_manager
        if bpy.app.background or wm is None or context.window is None:
            while not job.finished:
                QUEUE.poll(timeout=0.05)
            return self._finish(context)
        self._timer = wm.event_timer_add(0.05, window=context.window)
        wm.modal_handler_add(self)
        show_progress(context, job)
        return {"RUNNING_MODAL"}

    def modal(self, context, event):
        from ...tracevis3d.blender.tasks import QUEUE

        if event.type == "ESC" and event.value == "PRESS":
            self._job.cancel()
        elif event.type == "TIMER":
            QUEUE.poll()
        else:
            return {"PASS_THROUGH"}
        show_progress(context, self._job)
        if self._job.finished:
            return self._finish(context)
        return {"RUNNING_MODAL"}

    def cancel(self, context):
        """Blender ends the modal operator (a file is opened, the window closes): stop the job."""
        if self._job is not None:
            self._job.cancel()
        if self._timer is not None:
            context.window_manager.event_timer_remove(self._timer)
            self._timer = None
        show_progress(context, None)

    def _finish(self, context):
        """The job ended: clear the progress display and report; FINISHED or CANCELLED."""
        job = self._job
        if self._timer is not None:
            context.window_manager.event_timer_remove(self._timer)
            self._timer = None
        show_progress(context, None)
        if job.state == "cancelled":
            self.report({"WARNING"}, f"TraceVis3D: {job.name} cancelled; nothing was changed")
            return {"CANCELLED"}
        if job.state == "failed":
            report_error(self, job.error)
            return {"CANCELLED"}
        try:
            msg = self._on_done(context, job.result)
        except Exception as e:  # noqa: BLE001  one line, no traceback
            report_error(self, e)
            return {"CANCELLED"}
        if msg:
            self.report({"INFO"}, msg)
        return {"FINISHED"}


def report_error(op, e: BaseException) -> None:
    """One ERROR line: the message of a user error, or an internal error with its type."""
    if isinstance(e, USER_ERRORS):
        op.report({"ERROR"}, f"TraceVis3D: {one_line(e)}")
        return
    op.report({"ERROR"}, f"TraceVis3D internal error ({type(e).__name__}): {one_line(e)}"
                         " (run Blender with --debug-python for details)")
    if bpy.app.debug_python:
        traceback.print_exception(e)


_CURSOR = {"on": False}  # the window manager's (cursor) progress is begun


def show_progress(context, job) -> None:
    """The job's progress in the status bar, the mouse cursor and the panel (None: clear)."""
    wm = context.window_manager
    workspace = getattr(context, "workspace", None)
    if job is None or job.finished:
        if wm is not None and _CURSOR["on"]:
            wm.progress_end()
        _CURSOR["on"] = False
        if workspace is not None:
            workspace.status_text_set(None)
    else:
        if wm is not None:
            if not _CURSOR["on"]:
                wm.progress_begin(0, 1000)
                _CURSOR["on"] = True
            wm.progress_update(int(job.fraction * 1000))
        if workspace is not None:
            workspace.status_text_set(f"TraceVis3D {job.name}: {job.fraction * 100:.0f} % {job.text}"
                                      "   (Esc: cancel)")
    screen = getattr(context, "screen", None)
    for area in screen.areas if screen is not None else ():
        if area.type == "VIEW_3D":
            area.tag_redraw()
