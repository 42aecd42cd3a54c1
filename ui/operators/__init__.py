"""Thin operators of the TraceVis3D extension (trace_ops.py; picking in pick_ops.py; the
comparison's in compare_ops.py; the thread view's in threads_ops.py; EXTRAVIS' in extravis_ops.py;
search, bookmarks and the cone tree in structure_ops.py; the live feed's in live_ops.py; animations
in anim_ops.py; building any view of the registry in view_ops.py) and their key map.

Details on demand: Shift+Alt+D in the 3D viewport (free in the default key map; Ctrl+Alt+D
is the debug menu) shows the call under the mouse.
"""
import bpy

from . import (anim_ops, compare_ops, extravis_ops, live_ops, pick_ops, structure_ops, threads_ops, trace_ops, view_ops,
               zoom_ops)
from .trace_ops import TRACEVIS3D_OT_import_trace

CLASSES = (trace_ops.CLASSES + pick_ops.CLASSES + compare_ops.CLASSES + threads_ops.CLASSES + structure_ops.CLASSES
           + live_ops.CLASSES + extravis_ops.CLASSES + anim_ops.CLASSES + view_ops.CLASSES + zoom_ops.CLASSES)

_keymaps: list = []  # (keymap, keymap item) pairs we added


def menu_file_import(self, _context):
    """File > Import > TraceVis3D Trace."""
    self.layout.operator(TRACEVIS3D_OT_import_trace.bl_idname, text="TraceVis3D Trace (.json, .json.gz, .npz, .tv3c)")


def register():
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    kc = bpy.context.window_manager.keyconfigs.addon if bpy.context.window_manager else None
    if kc is not None:  # None in background mode
        km = kc.keymaps.new(name="3D View", space_type="VIEW_3D")
        kmi = km.keymap_items.new("tracevis3d.show_call", "D", "PRESS", shift=True, alt=True)
        _keymaps.append((km, kmi))
    bpy.types.TOPBAR_MT_file_import.append(menu_file_import)


def unregister():
    live_ops.disconnect()
    live_ops.disconnect_memory()
    bpy.types.TOPBAR_MT_file_import.remove(menu_file_import)
    for km, kmi in _keymaps:
        try:
            km.keymap_items.remove(kmi)
        except (ReferenceError, RuntimeError):  # key config already gone
            pass
    _keymaps.clear()
    for cls in reversed(CLASSES):
        if getattr(cls, "is_registered", False):
            bpy.utils.unregister_class(cls)
