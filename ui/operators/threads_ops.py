"""The thread view's operators (SyncTrace): build it, focus the picked call's thread, and
"who released this?" for the picked call.  Thin: each reads the scene's settings and runs
the Blender layer (`tracevis3d.blender.threads_tasks`) through `common.JobOperator`."""
from __future__ import annotations

import os
import time

from bpy.types import Operator

from .. import properties
from ...tracevis3d.blender import session
from ...tracevis3d.jobs import Job
from .common import JobOperator, reported, settings_of, trace_path_of


def threads_scene_steps(job, path, params, scene):
    """Load the scene's trace (cached), analyse and build the thread view."""
    from ...tracevis3d.blender.threads_tasks import last_sync, threads_build_steps

    trace = yield from session.load_steps(job, path, (0.0, 0.2))
    out = yield from threads_build_steps(job, trace, params, scene, "TraceVis3D", last_sync(trace), True)
    return {"trace": trace, "build": out}


def start_threads(op, context, what: str = "Built the thread view of"):
    path = trace_path_of(context)
    s = settings_of(context)
    params = properties.params_of(context.scene, "threads")
    if s.highlight_picked and params.color_by == "object" and s.picked_call >= 0:
        params.highlight_wait = int(s.picked_call)
    t0 = time.perf_counter()

    def done(context, result):
        m, sync = result["build"]["meta"], result["build"]["sync"]
        s.threads_summary = (f"{len(sync):,} correspondences, {int(sync.primary.sum()):,} hand-offs; "
                             f"{m['n_curves']:,} curves, {m['n_compound']:,} compound")
        from ...tracevis3d.blender.scene import frame_view

        frame_view(context)  # no-op headless
        return f"{what} {os.path.basename(path)} in {time.perf_counter() - t0:.2f} s: {s.threads_summary}"

    return op.start_job(context, Job("threads", threads_scene_steps, path, params, context.scene), done)


class TRACEVIS3D_OT_threads(JobOperator, Operator):
    """Build the thread view of the scene's trace: every thread a bended icicle on a ring, a curve from each wait to the release that ended it, the focused thread as a straight icicle (SyncTrace)"""

    bl_idname = "tracevis3d.threads"
    bl_label = "Threads"

    @reported
    def execute(self, context):
        return start_threads(self, context)


def _picked(context) -> int:
    call = settings_of(context).picked_call
    if call < 0:
        raise ValueError("no picked call: point at a bar and use Show Call (Shift+Alt+D) first")
    return int(call)


class TRACEVIS3D_OT_threads_focus_picked(JobOperator, Operator):
    """Focus the thread of the picked call (its sector enlarged, drawn as the straight icicle) and rebuild"""

    bl_idname = "tracevis3d.threads_focus_picked"
    bl_label = "Focus Picked Thread"

    @reported
    def execute(self, context):
        from ...tracevis3d.blender.session import cached_trace, file_key

        call = _picked(context)
        trace = cached_trace(file_key(trace_path_of(context)))
        if trace is None or call >= len(trace):
            raise ValueError("the picked call is not in the loaded trace: build the thread view first")
        context.scene.tracevis3d_threads_params.focus = trace.thread_names[int(trace.thread[call])]
        return start_threads(self, context, "Focused")


class TRACEVIS3D_OT_threads_who_released(Operator):
    """For the picked call: its waits, which thread's call released each and when (and what the picked call released for others)"""

    bl_idname = "tracevis3d.threads_who_released"
    bl_label = "Who Released It?"

    @reported
    def execute(self, context):
        from ...tracevis3d.analysis.sync_summary import describe_call_sync
        from ...tracevis3d.blender.session import cached_trace, file_key
        from ...tracevis3d.blender.threads_tasks import last_sync

        call = _picked(context)
        trace = cached_trace(file_key(trace_path_of(context)))
        sync = last_sync(trace) if trace is not None else None
        if sync is None:
            raise ValueError("no thread view yet: build it first (Threads)")
        if call >= len(trace):
            raise ValueError(f"the picked call {call} is not in the loaded trace ({len(trace):,} calls)")
        text = describe_call_sync(sync, call)
        settings_of(context).threads_picked_text = text
        self.report({"INFO"}, text.replace("\n", "; ")[:400])
        return {"FINISHED"}


CLASSES = (TRACEVIS3D_OT_threads, TRACEVIS3D_OT_threads_focus_picked, TRACEVIS3D_OT_threads_who_released)
