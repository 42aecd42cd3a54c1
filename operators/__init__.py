"""Thin operators of the TraceVis3D extension (see trace_ops.py) and their key map.

Details on demand: Ctrl+Alt+D in the 3D viewport shows the call under the mouse.
"""
import bpy

from .trace_ops import CLASSES

_keymaps: list = []  # (keymap, keymap item) pairs we added


def register():
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    kc = bpy.context.window_manager.keyconfigs.addon if bpy.context.window_manager else None
    if kc is not None:  # None in background mode
        km = kc.keymaps.new(name="3D View", space_type="VIEW_3D")
        kmi = km.keymap_items.new("tracevis3d.show_call", "D", "PRESS", ctrl=True, alt=True)
        _keymaps.append((km, kmi))


def unregister():
    for km, kmi in _keymaps:
        try:
            km.keymap_items.remove(kmi)
        except (ReferenceError, RuntimeError):  # key config already gone
            pass
    _keymaps.clear()
    for cls in reversed(CLASSES):
        if getattr(cls, "is_registered", False):
            bpy.utils.unregister_class(cls)
