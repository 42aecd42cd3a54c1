"""The TraceVis3D sidebar panel (3D viewport, N panel, tab "TraceVis3D").

Trace (import, path, Build, Frame; the running job's progress bar and Cancel), Parameters
(the icicle), Compare, Threads, Who Calls Whom (EXTRAVIS), Structure (search, bookmarks, cone tree),
Live, Render, Animate and Details sub-panels (a view's section labelled as its registry entry says,
`tracevis3d.views`); every button is one of the operators, every view's
fields drawn from its schema by `draw_schema` (``scene.tracevis3d_<view>_params``), the
session's from ``scene.tracevis3d``.
"""
import os

import bpy
from bpy.types import Panel


class _Base:
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "TraceVis3D"

    @classmethod
    def poll(cls, context):
        return context.scene is not None and hasattr(context.scene, "tracevis3d")


class VIEW3D_PT_tracevis3d(_Base, Panel):
    bl_label = "TraceVis3D"

    def draw(self, context):
        s = context.scene.tracevis3d
        layout = self.layout
        draw_job(layout)
        layout.operator("tracevis3d.import_trace", icon="FILEBROWSER")
        layout.prop(s, "trace_path", text="")
        if s.trace_path and not os.path.isfile(bpy.path.abspath(s.trace_path)):
            layout.label(text="Trace file not found", icon="ERROR")
        row = layout.row(align=True)
        row.scale_y = 1.3
        row.operator("tracevis3d.build", icon="MOD_BUILD")
        row.operator("tracevis3d.frame", icon="VIEW_CAMERA")
        row = layout.row(align=True)  # detail as the view approaches (`ui.zoom_follow`, `operators.zoom_ops`)
        row.prop(s, "zoom_follow")
        row.operator("tracevis3d.zoom_to", icon="ZOOM_IN")
        row.operator("tracevis3d.zoom_to", text="", icon="ZOOM_OUT").target = "WHOLE"


def draw_job(layout) -> None:
    """The running job: a progress bar with its step text, and Cancel."""
    from ..tracevis3d.blender.tasks import QUEUE
    from .background_warmup import running as background_warmup_running

    job = QUEUE.current
    if job is None or job.finished:
        if background_warmup_running():
            layout.label(text="Preparing kernels in the background (first run only)", icon="TIME")
        return
    box = layout.box()
    row = box.row(align=True)
    if hasattr(row, "progress"):  # Blender 4.0+
        row.progress(factor=job.fraction, type="BAR", text=f"{job.name}: {job.fraction * 100:.0f} %")
    else:
        row.label(text=f"{job.name}: {job.fraction * 100:.0f} %")
    row.operator("tracevis3d.cancel_job", text="", icon="CANCEL")
    box.label(text=job.text)


def draw_schema(layout, group, schema, only=None, skip=(), boxes=True) -> None:
    """The fields of a schema's parameters (``ui=True``; ``only``/``skip``: these / not
    these), one box per `Param.group`: the one generic draw of every view's panel.

    A parameter held in several properties (`Kind.props`) draws them together: after a
    switch ``use_…`` the other fields are enabled only while it is on; after a choice the
    other fields belong to its last choice (fold "Levels", thread order "These first")."""
    for title, params in schema.groups().items():
        params = [p for p in params if p.ui and (only is None or p.name in only) and p.name not in skip]
        if not params:
            continue
        col = layout.box() if boxes else layout.column()
        if boxes:
            col.label(text=title.capitalize())
        for p in params:
            rows = p.kind.props(p)
            first, rest = rows[0], rows[1:]
            col.prop(group, first[0])
            if not rest:
                continue
            sub = col.column(align=True)
            if first[1] == "Bool" and first[0].startswith("use_"):
                sub.enabled = bool(getattr(group, first[0]))
            elif first[1] == "Enum":
                sub.enabled = getattr(group, first[0]) == first[2]["items"][-1][0]
            for name, _type, _options in rest:
                sub.prop(group, name)


def _schema(view: str):
    from .properties import VIEWS

    return VIEWS[view].SCHEMA


def section_label(view: str) -> str:
    """The label of a view's section: its registry entry's (`tracevis3d.views.View.panel`)."""
    from ..tracevis3d.views import view as view_of

    return view_of(view).panel


class VIEW3D_PT_tracevis3d_threads(_Base, Panel):
    """Who waits on whom (SyncTrace): build the thread view; its parameters (the Threads
    schema); focus the picked call's thread; who released the picked call."""

    bl_label = section_label("threads")
    bl_parent_id = "VIEW3D_PT_tracevis3d"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        s = context.scene.tracevis3d
        ts = context.scene.tracevis3d_threads_params
        layout = self.layout
        layout.operator("tracevis3d.threads", icon="FORCE_VORTEX")
        if s.threads_summary:
            layout.label(text=s.threads_summary)
        layout.use_property_split = True
        layout.use_property_decorate = False
        draw_schema(layout, ts, _schema("threads"))
        sub = layout.row()
        sub.enabled = ts.color_by == "object"
        sub.prop(s, "highlight_picked")
        row = layout.row(align=True)
        row.operator("tracevis3d.threads_focus_picked", icon="ZOOM_SELECTED")
        row.operator("tracevis3d.threads_who_released", icon="LINKED")
        for line in s.threads_picked_text.splitlines()[:7]:
            layout.label(text=line)


class VIEW3D_PT_tracevis3d_extravis(_Base, Panel):
    """Who calls whom, and when (EXTRAVIS): Build (both views, or one alone) with the EXTRAVIS
    schema's fields; a window handle moved along the sequence view's bar sets the time window
    (at once with Follow Handles, `follow_handles`, else at the next Build); the element last picked with Show Call can be highlighted (its calls
    lit in both views)."""

    bl_label = section_label("extravis")
    bl_parent_id = "VIEW3D_PT_tracevis3d"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        row = layout.row(align=True)
        row.scale_y = 1.3
        row.operator("tracevis3d.extravis", text="Build", icon="MOD_BUILD").views = "both"
        row.operator("tracevis3d.extravis", text="Bundles").views = "heb"
        row.operator("tracevis3d.extravis", text="Sequence").views = "sequence"
        row = layout.row()
        row.prop(context.scene.tracevis3d, "extravis_follow_handles")
        if not context.scene.tracevis3d.extravis_follow_handles:
            row.label(text="move a handle, then Build", icon="INFO")
        picked = context.scene.tracevis3d.picked_element
        row = layout.row(align=True)
        row.enabled = bool(picked) or bool(context.scene.tracevis3d_extravis_params.highlight)
        row.operator("tracevis3d.extravis_highlight", text=f"Highlight {picked.rsplit('.', 1)[-1]}" if picked
                     else "Highlight Picked", icon="LIGHT").mode = "picked"
        row.operator("tracevis3d.extravis_highlight", text="Add").mode = "add"
        row.operator("tracevis3d.extravis_highlight", text="Clear").mode = "clear"
        layout.use_property_split = True
        layout.use_property_decorate = False
        draw_schema(layout, context.scene.tracevis3d_extravis_params, _schema("extravis"))


class VIEW3D_PT_tracevis3d_compare(_Base, Panel):
    """Two runs side by side (TraceDiff): the second trace, Compare; the comparison's
    parameters (the Compare schema: τ, the tubes, each run's thread and focus window,
    brushing; the tube colour switches at once, the others rebuild on Compare, Brush or
    Align)."""

    bl_label = section_label("compare")
    bl_parent_id = "VIEW3D_PT_tracevis3d"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        s = context.scene.tracevis3d
        cs = context.scene.tracevis3d_compare_params
        layout = self.layout
        layout.prop(s, "compare_path")
        if s.compare_path and not os.path.isfile(bpy.path.abspath(s.compare_path)):
            layout.label(text="Second trace not found", icon="ERROR")
        row = layout.row()
        row.scale_y = 1.3
        row.operator("tracevis3d.compare", icon="ARROW_LEFTRIGHT")
        if s.compare_summary:
            layout.label(text=s.compare_summary)
        layout.use_property_split = True
        layout.use_property_decorate = False
        draw_schema(layout, cs, _schema("compare"), skip=("align_a",))
        row = layout.row(align=True)
        row.operator("tracevis3d.compare_brush", text="Brush Picked", icon="BRUSH_DATA")
        row.operator("tracevis3d.compare_brush", text="Clear Brush", icon="X").clear = True
        layout.prop(cs, "align_a")
        layout.operator("tracevis3d.compare_align", icon="ALIGN_CENTER")


class VIEW3D_PT_tracevis3d_live(_Base, Panel):
    """Watch a program run: endpoint, Connect/Disconnect, follow now, status line."""

    bl_label = section_label("live")
    bl_parent_id = "VIEW3D_PT_tracevis3d"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        from .operators.live_ops import live_state

        s = context.scene.tracevis3d
        layout = self.layout
        connected = live_state().get("session") is not None
        col = layout.column()
        col.enabled = not connected
        col.prop(s, "live_endpoint", text="")
        col.prop(s, "live_connect")
        draw_schema(layout, context.scene.tracevis3d_live_params, _schema("live"))
        row = layout.row()
        row.scale_y = 1.3
        if connected:
            row.operator("tracevis3d.live_disconnect", icon="PAUSE")
        else:
            row.operator("tracevis3d.live_connect", icon="PLAY")
        if s.live_status:
            layout.label(text=s.live_status, icon="INFO")
        layout.label(text="python -m tracevis3d.live run --endpoint E script.py")
        row = layout.row(align=True)  # memray's live mode: the memory view grows as the program runs
        watching = live_state().get("memory") is not None
        row.prop(s, "live_memray_port", text="memray port")
        if watching:
            row.operator("tracevis3d.live_memory_disconnect", icon="PAUSE")
        else:
            row.operator("tracevis3d.live_memory_connect", icon="PLAY")


class VIEW3D_PT_tracevis3d_params(_Base, Panel):
    """The icicle's parameters (the Icicle schema); Build applies them."""

    bl_label = section_label("icicle")
    bl_parent_id = "VIEW3D_PT_tracevis3d"

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        draw_schema(layout, context.scene.tracevis3d_icicle_params, _schema("icicle"))


class VIEW3D_PT_tracevis3d_structure(_Base, Panel):
    """Search with history, bookmarks, the cone tree (SEAT's exploration) and its parameters."""

    bl_label = section_label("cone")
    bl_parent_id = "VIEW3D_PT_tracevis3d"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        from ..tracevis3d.blender import landmarks

        s = context.scene.tracevis3d
        cone = context.scene.tracevis3d_cone_params
        layout = self.layout
        box = layout.box()
        row = box.row(align=True)
        row.prop(s, "search_pattern", text="")
        row.operator("tracevis3d.search", text="", icon="VIEWZOOM")
        lm = landmarks.landmarks(context.scene)
        if lm.hits:
            row = box.row(align=True)
            row.operator("tracevis3d.next_hit", text="", icon="TRIA_LEFT").step = -1
            row.label(text=f"hit {max(lm.current, 0) + 1} of {len(lm.hits):,}")
            row.operator("tracevis3d.next_hit", text="", icon="TRIA_RIGHT").step = 1
        for pattern in lm.history[:6]:
            box.operator("tracevis3d.search", text=pattern, icon="RECOVER_LAST").pattern = pattern
        box = layout.box()
        row = box.row(align=True)
        row.prop(s, "bookmark_note", text="")
        row.operator("tracevis3d.bookmark_add", text="", icon="BOOKMARKS")
        for k, b in enumerate(lm.bookmarks):
            row = box.row(align=True)
            name = os.path.basename(b.get("name", "").split(" (")[0]) or f"call {b['call']}"
            row.operator("tracevis3d.bookmark_go", text=f"{name}: {b.get('note', '')}"[:60]).index = k
            row.operator("tracevis3d.bookmark_remove", text="", icon="X").index = k
        box = layout.box()
        box.label(text="Cone tree")
        row = box.row(align=True)
        row.operator("tracevis3d.cone_tree", icon="MESH_CONE")
        row.operator("tracevis3d.cone_expand", icon="ADD")
        if cone.expand:
            box.operator("tracevis3d.cone_expand", text="Collapse All", icon="REMOVE").clear = "1"
        box.use_property_split = True
        box.use_property_decorate = False
        draw_schema(box, cone, _schema("cone"))


class VIEW3D_PT_tracevis3d_render(_Base, Panel):
    """The render options (the Render schema's output, engine, samples, background); the
    image has the resolution the scene was built with."""

    bl_label = "Render Figure"
    bl_parent_id = "VIEW3D_PT_tracevis3d"

    def draw(self, context):
        from ..tracevis3d.params.render import RENDER
        from .properties import RENDER_FIELDS

        s = context.scene.tracevis3d
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        draw_schema(layout, s, RENDER, only=RENDER_FIELDS, boxes=False)
        layout.operator("tracevis3d.render_figure", icon="RENDER_STILL")


class VIEW3D_PT_tracevis3d_animate(_Base, Panel):
    """Animate the figure in this scene (the command line's render-animation): kind, length,
    frame rate, time mapping; play in the viewport; render with the Render section's options."""

    bl_label = "Animate"
    bl_parent_id = "VIEW3D_PT_tracevis3d"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        from ..tracevis3d.params.animation import ANIMATION
        from ..tracevis3d.params.cluster import CLUSTER_PANEL_FIELDS, CLUSTER_SCHEMA
        from .properties import ANIMATION_FIELDS

        s = context.scene.tracevis3d
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        draw_schema(layout, s, ANIMATION, only=ANIMATION_FIELDS, boxes=False)
        row = layout.row(align=True)
        row.operator("tracevis3d.animate", icon="ANIM")
        row.operator("tracevis3d.clear_animation", text="", icon="X")
        draw_schema(layout, s, CLUSTER_SCHEMA, only=CLUSTER_PANEL_FIELDS, boxes=False)
        row = layout.row(align=True)
        row.operator("screen.animation_play", text="Play", icon="PLAY")
        row.operator("tracevis3d.render_animation", icon="RENDER_ANIMATION")
        draw_cluster_progress(layout)


def draw_cluster_progress(layout) -> None:
    """A cluster render's progress: frames done / total, frames per second, each worker's share
    (`cluster.Progress`, kept on the running job)."""
    from ..tracevis3d.blender.tasks import QUEUE

    job = QUEUE.current
    prog = getattr(job, "progress", None)
    if job is None or job.finished or prog is None:
        return
    col = layout.column(align=True)
    col.label(text=f"{prog.done}/{prog.total} frames, {prog.rate():.2f} frames/s", icon="RENDER_ANIMATION")
    for worker, k in sorted(prog.by_worker.items()):
        col.label(text=f"{worker}: {k} ({100 * k / max(prog.done, 1):.0f} %)")


class VIEW3D_PT_tracevis3d_details(_Base, Panel):
    bl_label = "Call Details"
    bl_parent_id = "VIEW3D_PT_tracevis3d"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        s = context.scene.tracevis3d
        layout = self.layout
        layout.label(text="Shift+Alt+D over a box shows its call", icon="INFO")
        if s.picked_call < 0:
            layout.label(text="No call picked yet")
            return
        col = layout.column(align=True)
        for line in s.picked_text.splitlines():
            col.label(text=line)


#: the sections written here for their views (each labelled `section_label(view)`)
HAND_MADE = (
    VIEW3D_PT_tracevis3d_params,
    VIEW3D_PT_tracevis3d_compare,
    VIEW3D_PT_tracevis3d_threads,
    VIEW3D_PT_tracevis3d_extravis,
    VIEW3D_PT_tracevis3d_structure,
    VIEW3D_PT_tracevis3d_live,
)


def view_sections() -> tuple:
    """A section for every view of the registry that has no hand-made one (`HAND_MADE`): a
    Build button (``tracevis3d.build_view``, `operators.view_ops`) and its schema's fields, so a
    new view is edited and built from the panel without code of its own here."""
    from ..tracevis3d.views import VIEWS

    made = {cls.bl_label for cls in HAND_MADE}
    return tuple(type(f"VIEW3D_PT_tracevis3d_view_{v.name}", (_Base, Panel),
                      {"__doc__": v.summary, "bl_label": v.panel, "bl_parent_id": "VIEW3D_PT_tracevis3d",
                       "bl_options": {"DEFAULT_CLOSED"}, "draw": _view_section_draw(v.name)})
                 for v in VIEWS if v.panel not in made)


def _view_section_draw(name: str):
    """The ``draw`` of a generated section of view ``name`` (Blender wants ``draw(self, context)``)."""
    def draw(self, context):
        layout = self.layout
        row = layout.row()
        row.scale_y = 1.3
        row.operator("tracevis3d.build_view", text="Build", icon="MOD_BUILD").view = name
        layout.use_property_split = True
        layout.use_property_decorate = False
        draw_schema(layout, getattr(context.scene, f"tracevis3d_{name}_params"), _schema(name))

    return draw


CLASSES = (
    VIEW3D_PT_tracevis3d,
    *HAND_MADE,
    *view_sections(),
    VIEW3D_PT_tracevis3d_render,
    VIEW3D_PT_tracevis3d_animate,
    VIEW3D_PT_tracevis3d_details,
)


def register():
    for cls in CLASSES:
        bpy.utils.register_class(cls)


def unregister():
    for cls in reversed(CLASSES):
        if getattr(cls, "is_registered", False):
            bpy.utils.unregister_class(cls)
