"""The TraceVis3D sidebar panel (3D viewport, N panel, tab "TraceVis3D").

Trace (import, path, Build, Frame; the running job's progress bar and Cancel), Parameters,
Compare, Structure (filters, search, bookmarks, cone tree), Render and Details sub-panels; every button is one of the operators, every field a
``scene.tracevis3d`` property.
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


def draw_job(layout) -> None:
    """The running job: a progress bar with its step text, and Cancel."""
    from .. import warmup_running
    from ..tracevis3d.blender.tasks import QUEUE

    job = QUEUE.current
    if job is None or job.finished:
        if warmup_running():
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


class VIEW3D_PT_tracevis3d_threads(_Base, Panel):
    """Who waits on whom (SyncTrace): build the thread view; focus, colour, threads, folding,
    zero-level radius, window; focus the picked call's thread; who released the picked call."""

    bl_label = "Threads"
    bl_parent_id = "VIEW3D_PT_tracevis3d"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        ts = context.scene.tracevis3d_threads
        layout = self.layout
        layout.operator("tracevis3d.threads", icon="FORCE_VORTEX")
        if ts.summary:
            layout.label(text=ts.summary)
        col = layout.column()
        col.prop(ts, "focus")
        col.prop(ts, "color_by")
        col.prop(ts, "threads")
        col.prop(ts, "hide_threads")
        row = col.row(align=True)
        row.prop(ts, "fold")
        row.prop(ts, "max_levels")
        row = col.row(align=True)
        row.prop(ts, "zero_radius")
        row.prop(ts, "focus_scale")
        sub = col.row()
        sub.enabled = ts.color_by == "object"
        sub.prop(ts, "highlight_picked")
        col.prop(ts, "show_icicle")
        col.prop(ts, "use_window")
        sub = col.row(align=True)
        sub.enabled = ts.use_window
        sub.prop(ts, "window_start")
        sub.prop(ts, "window_end")
        row = layout.row(align=True)
        row.operator("tracevis3d.threads_focus_picked", icon="ZOOM_SELECTED")
        row.operator("tracevis3d.threads_who_released", icon="LINKED")
        for line in ts.picked_text.splitlines()[:7]:
            layout.label(text=line)


class VIEW3D_PT_tracevis3d_compare(_Base, Panel):
    """Two runs side by side (TraceDiff): the second trace, τ, Compare; the tubes (colour and
    viewpoint switch at once, λ, band, β), each run's thread and focus window, brushing and
    align (these rebuild on Compare, Brush or Align)."""

    bl_label = "Compare Runs"
    bl_parent_id = "VIEW3D_PT_tracevis3d"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        s = context.scene.tracevis3d
        layout = self.layout
        layout.prop(s, "compare_path")
        if s.compare_path and not os.path.isfile(bpy.path.abspath(s.compare_path)):
            layout.label(text="Second trace not found", icon="ERROR")
        layout.prop(s, "compare_tau")
        row = layout.row()
        row.scale_y = 1.3
        row.operator("tracevis3d.compare", icon="ARROW_LEFTRIGHT")
        if s.compare_summary:
            layout.label(text=s.compare_summary)
        layout.use_property_split = True
        layout.use_property_decorate = False
        box = layout.box()
        box.label(text="Tubes")
        box.prop(s, "compare_color_by")
        sub = box.row()
        sub.enabled = s.compare_color_by == "trace"
        sub.prop(s, "compare_viewpoint", expand=True)
        box.prop(s, "compare_lam")
        box.prop(s, "compare_band")
        box.prop(s, "compare_beta")
        box.prop(s, "compare_show_overview")
        box.prop(s, "compare_all_tubes")
        for side in ("a", "b"):
            box = layout.box()
            box.label(text=f"Run {side.upper()}")
            box.prop(s, f"compare_thread_{side}")
            box.prop(s, f"use_compare_window_{side}")
            col = box.column(align=True)
            col.enabled = getattr(s, f"use_compare_window_{side}")
            col.prop(s, f"compare_window_{side}_start")
            col.prop(s, f"compare_window_{side}_end")
            box.prop(s, f"compare_brush_{side}")
        row = layout.row(align=True)
        row.operator("tracevis3d.compare_brush", text="Brush Picked", icon="BRUSH_DATA")
        row.operator("tracevis3d.compare_brush", text="Clear Brush", icon="X").clear = True
        layout.prop(s, "compare_align_a")
        layout.operator("tracevis3d.compare_align", icon="ALIGN_CENTER")


class VIEW3D_PT_tracevis3d_live(_Base, Panel):
    """Watch a program run: endpoint, Connect/Disconnect, follow now, status line."""

    bl_label = "Live"
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
        layout.prop(s, "live_follow")
        row = layout.row()
        row.enabled = s.live_follow
        row.prop(s, "live_window_ms")
        row = layout.row()
        row.scale_y = 1.3
        if connected:
            row.operator("tracevis3d.live_disconnect", icon="PAUSE")
        else:
            row.operator("tracevis3d.live_connect", icon="PLAY")
        if s.live_status:
            layout.label(text=s.live_status, icon="INFO")
        layout.label(text="python -m tracevis3d.live run --endpoint E script.py")


class VIEW3D_PT_tracevis3d_params(_Base, Panel):
    bl_label = "Parameters"
    bl_parent_id = "VIEW3D_PT_tracevis3d"

    def draw(self, context):
        s = context.scene.tracevis3d
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        layout.prop(s, "extrude_measure")
        layout.prop(s, "color_by")
        layout.prop(s, "threads")
        layout.prop(s, "thread_order")
        sub = layout.column()
        sub.enabled = s.thread_order == "list"
        sub.prop(s, "thread_order_list")
        layout.prop(s, "use_time_window")
        col = layout.column(align=True)
        col.enabled = s.use_time_window
        col.prop(s, "time_window_start")
        col.prop(s, "time_window_end")
        layout.prop(s, "use_max_depth")
        sub = layout.column()
        sub.enabled = s.use_max_depth
        sub.prop(s, "max_depth")
        layout.prop(s, "fold_mode")
        sub = layout.column()
        sub.enabled = s.fold_mode == "levels"
        sub.prop(s, "fold_levels")
        layout.prop(s, "hide")
        layout.prop(s, "hide_modules")
        layout.prop(s, "cluster_px")
        layout.prop(s, "lane_gap_auto")
        sub = layout.column()
        sub.enabled = not s.lane_gap_auto
        sub.prop(s, "lane_gap")
        layout.prop(s, "orthographic")
        layout.prop(s, "show_labels")
        sub = layout.column(align=True)
        sub.enabled = s.show_labels
        sub.prop(s, "label_px")
        sub.prop(s, "label_min_px")
        layout.prop(s, "show_legend")
        layout.prop(s, "show_axes")
        layout.prop(s, "show_title")
        sub = layout.column()
        sub.enabled = s.show_title
        sub.prop(s, "title")


class VIEW3D_PT_tracevis3d_structure(_Base, Panel):
    """Filters, search with history, bookmarks, the cone tree (SEAT's exploration)."""

    bl_label = "Structure"
    bl_parent_id = "VIEW3D_PT_tracevis3d"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        from ..tracevis3d.blender import landmarks

        st = getattr(context.scene, "tracevis3d_structure", None)
        layout = self.layout
        if st is None:
            layout.label(text="Structure properties not registered", icon="ERROR")
            return
        box = layout.box()
        box.label(text="Filters (icicle and cone tree)")
        box.prop(st, "hide_utilities")
        box.prop(st, "collapse_patterns")
        box.prop(st, "highlight")
        box = layout.box()
        row = box.row(align=True)
        row.prop(st, "search_pattern", text="")
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
        row.prop(st, "bookmark_note", text="")
        row.operator("tracevis3d.bookmark_add", text="", icon="BOOKMARKS")
        for k, b in enumerate(lm.bookmarks):
            row = box.row(align=True)
            name = os.path.basename(b.get("name", "").split(" (")[0]) or f"call {b['call']}"
            row.operator("tracevis3d.bookmark_go", text=f"{name}: {b.get('note', '')}"[:60]).index = k
            row.operator("tracevis3d.bookmark_remove", text="", icon="X").index = k
        box = layout.box()
        box.label(text="Cone tree")
        box.prop(st, "cone_max_nodes")
        box.prop(st, "cone_orientation", text="")
        box.prop(st, "cone_fold_recursion")
        row = box.row(align=True)
        row.operator("tracevis3d.cone_tree", icon="MESH_CONE")
        row.operator("tracevis3d.cone_expand", icon="ADD")
        if st.cone_expand:
            box.operator("tracevis3d.cone_expand", text="Collapse All", icon="REMOVE").clear = "1"


class VIEW3D_PT_tracevis3d_render(_Base, Panel):
    bl_label = "Render Figure"
    bl_parent_id = "VIEW3D_PT_tracevis3d"

    def draw(self, context):
        s = context.scene.tracevis3d
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        layout.prop(s, "render_engine")
        col = layout.column(align=True)
        col.prop(s, "resolution_x", text="Resolution X")
        col.prop(s, "resolution_y", text="Y")
        layout.prop(s, "render_samples")
        layout.prop(s, "render_transparent")
        layout.prop(s, "render_output")
        layout.operator("tracevis3d.render_figure", icon="RENDER_STILL")


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


CLASSES = (
    VIEW3D_PT_tracevis3d,
    VIEW3D_PT_tracevis3d_params,
    VIEW3D_PT_tracevis3d_compare,
    VIEW3D_PT_tracevis3d_threads,
    VIEW3D_PT_tracevis3d_structure,
    VIEW3D_PT_tracevis3d_live,
    VIEW3D_PT_tracevis3d_render,
    VIEW3D_PT_tracevis3d_details,
)


def register():
    for cls in CLASSES:
        bpy.utils.register_class(cls)


def unregister():
    for cls in reversed(CLASSES):
        if getattr(cls, "is_registered", False):
            bpy.utils.unregister_class(cls)
