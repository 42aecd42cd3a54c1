"""The Structure section's operators (SEAT's exploration): search with history and flying
to hits, bookmarks with notes, the cone tree and expanding a node on demand.  Thin: each
calls `tracevis3d.blender.landmarks` or runs the cone-tree job
(`tracevis3d.blender.cone_tasks`) through `common.JobOperator`."""
from __future__ import annotations

from bpy.types import Operator

from .. import properties
from ..props import with_props
from ...tracevis3d.blender import landmarks, session
from ...tracevis3d.jobs import Job
from .common import JobOperator, reported, settings_of, trace_path_of


def _trace(context):
    return session.get_trace(trace_path_of(context))


@with_props([("pattern", "String", dict(name="Pattern", default="", options={"SKIP_SAVE"},
                                        description="Regular expression (default: the panel's search field)"))])
class TRACEVIS3D_OT_search(JobOperator, Operator):
    """Search the trace's function names and modules (regular expression), remember the search in the history and fly the camera to the first hit"""

    bl_idname = "tracevis3d.search"
    bl_label = "Search"

    @reported
    def execute(self, context):
        st = settings_of(context)
        pattern = self.pattern.strip() or st.search_pattern.strip()
        if not pattern:
            raise ValueError("nothing to search: type a regular expression first")
        st.search_pattern = pattern
        trace = _trace(context)
        job = Job("search", landmarks.search_steps, trace, pattern, context.scene)

        def done(context, hits):  # the search ran off the main thread; the flight is set here
            if not hits:
                return f"no call matches {pattern!r}"
            call = landmarks.fly_to_next_hit(trace, context.scene)
            return f"{len(hits):,} calls match {pattern!r}; at hit 1 (call {call})"
        return self.start_job(context, job, done)


@with_props([("step", "Int", dict(name="Step", default=1, options={"SKIP_SAVE"}))])
class TRACEVIS3D_OT_next_hit(Operator):
    """Fly the camera to the next (or previous) hit of the last search"""

    bl_idname = "tracevis3d.next_hit"
    bl_label = "Next Hit"

    @reported
    def execute(self, context):
        call = landmarks.fly_to_next_hit(_trace(context), context.scene, self.step, frames=12)
        if call is None:
            raise ValueError("no hits: search first")
        lm = landmarks.landmarks(context.scene)
        self.report({"INFO"}, f"hit {lm.current + 1} of {len(lm.hits)} (call {call})")
        return {"FINISHED"}


class TRACEVIS3D_OT_bookmark_add(Operator):
    """Bookmark the picked call (or the current hit) with the note typed in the panel; the camera view is kept with it"""

    bl_idname = "tracevis3d.bookmark_add"
    bl_label = "Add Bookmark"

    @reported
    def execute(self, context):
        s = settings_of(context)
        lm = landmarks.landmarks(context.scene)
        call = s.picked_call if s.picked_call >= 0 else (lm.hits[lm.current] if lm.current >= 0 else -1)
        if call < 0:
            raise ValueError("nothing to bookmark: pick a call (Shift+Alt+D) or search first")
        landmarks.add_bookmark(call, s.bookmark_note, _trace(context), context.scene)
        s.bookmark_note = ""
        return {"FINISHED"}


_BOOKMARK = [("index", "Int", dict(name="Bookmark", default=0, min=0))]


@with_props(_BOOKMARK)
class TRACEVIS3D_OT_bookmark_go(Operator):
    """Go back to a bookmark's view"""

    bl_idname = "tracevis3d.bookmark_go"
    bl_label = "Go to Bookmark"

    @reported
    def execute(self, context):
        landmarks.fly_to_bookmark(self.index, context.scene)
        return {"FINISHED"}


@with_props(_BOOKMARK)
class TRACEVIS3D_OT_bookmark_remove(Operator):
    """Remove a bookmark"""

    bl_idname = "tracevis3d.bookmark_remove"
    bl_label = "Remove Bookmark"

    @reported
    def execute(self, context):
        landmarks.remove_bookmark(self.index, context.scene)
        return {"FINISHED"}


def cone_steps(job, path, params, scene):
    from ...tracevis3d.blender.cone_tasks import cone_build_steps

    trace = yield from session.load_steps(job, path, span=(0.0, 0.3))
    out = yield from cone_build_steps(job, trace, params, scene, "TraceVis3D", path, (0.3, 1.0))
    return out


class TRACEVIS3D_OT_cone_tree(JobOperator, Operator):
    """Build the cone tree of the trace's calling contexts (largest by inclusive time) with the Structure section's parameters"""

    bl_idname = "tracevis3d.cone_tree"
    bl_label = "Cone Tree"

    @reported
    def execute(self, context):
        path = trace_path_of(context)
        params = properties.params_of(context.scene, "cone")
        job = Job("cone tree", cone_steps, path, params, context.scene)

        def done(_context, result):
            m = result["meta"]
            return f"Cone tree: {m['n_nodes']:,} of {m['n_contexts']:,} calling contexts, {m['n_partial']:,} partial"
        return self.start_job(context, job, done)


@with_props([("clear", "String", dict(name="Clear", default="", options={"SKIP_SAVE", "HIDDEN"}))])
class TRACEVIS3D_OT_cone_expand(JobOperator, Operator):
    """Expand the picked node of the cone tree fully (all its children, beyond the node budget, and in the icicle's next Build) and rebuild; with Clear: back to the budget"""

    bl_idname = "tracevis3d.cone_expand"
    bl_label = "Expand Picked"

    @reported
    def execute(self, context):
        s = settings_of(context)
        cone = properties.group_of(context.scene, "cone")
        p = properties.VIEWS["cone"].SCHEMA["expand"]
        calls = p.kind.from_props(p, lambda name: getattr(cone, name))
        if self.clear:
            calls = []
        else:
            if s.picked_call < 0:
                raise ValueError("no node picked: Shift+Alt+D over a node of the cone tree first")
            calls = p.kind.check(calls + [int(s.picked_call)], p.name)
        for view in ("cone", "icicle"):  # the icicle shows the same calls expanded (its next Build)
            group = properties.group_of(context.scene, view)
            p.kind.to_props(p, calls, lambda name, v, group=group: setattr(group, name, v))
        return TRACEVIS3D_OT_cone_tree.execute(self, context)


CLASSES = (TRACEVIS3D_OT_search, TRACEVIS3D_OT_next_hit, TRACEVIS3D_OT_bookmark_add, TRACEVIS3D_OT_bookmark_go,
           TRACEVIS3D_OT_bookmark_remove, TRACEVIS3D_OT_cone_tree, TRACEVIS3D_OT_cone_expand)
