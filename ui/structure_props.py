"""Scene properties of the Structure section (filters, search, bookmarks, cone tree):
``bpy.types.Scene.tracevis3d_structure``.  The search history, the hits and the bookmarks
themselves are not here but in the scene's custom property ``tracevis3d_landmarks``
(`tracevis3d.blender.landmarks`), which the command line and scripts write too."""
from __future__ import annotations

import bpy
from bpy.props import BoolProperty, EnumProperty, IntProperty, PointerProperty, StringProperty
from bpy.types import PropertyGroup

ORIENTATIONS = (("auto", "Auto", "The orientation that shows the tree larger"), ("vertical", "Vertical", "Root on top, children on the base circle below"),
                ("horizontal", "Horizontal", "Root on the left, the tree grows to the right"))


class TraceVis3DStructureSettings(PropertyGroup):
    """Filters, search and cone-tree parameters of one scene (saved with the .blend)."""

    hide_utilities: IntProperty(
        name="Hide Utilities", default=0, min=0, max=1000,
        description="Hide the N likeliest utility routines (high fan-in, low fan-out, called from "
                    "everywhere); their callers show as partially expanded")
    collapse_patterns: BoolProperty(
        name="Collapse Repeats", default=False,
        description="Draw every repetition of a repeated subtree (4+ calls) after the first as its root "
                    "call only, marked partially expanded")
    highlight: StringProperty(
        name="Highlight", default="",
        description="Regular expressions separated by ';': calls of matching functions keep their colour, "
                    "the others are pale (icicle and cone tree)")
    search_pattern: StringProperty(
        name="Search", default="",
        description="Regular expression on function names and modules; Search flies to the first hit")
    bookmark_note: StringProperty(name="Note", default="", description="Note of the next bookmark")
    cone_max_nodes: IntProperty(name="Nodes", default=300, min=1, max=20000,
                                description="Calling contexts drawn in the cone tree, the largest by inclusive time")
    cone_orientation: EnumProperty(name="Orientation", items=ORIENTATIONS, default="auto")
    cone_fold_recursion: BoolProperty(name="Fold Recursion", default=True,
                                      description="Direct recursion is one node (labelled with its depth)")
    cone_expand: StringProperty(name="Expanded", default="", options={"HIDDEN"},
                                description="Calls shown fully expanded, their filtered children back "
                                            "(cone tree and icicle; comma-separated)")


def structure_of(scene):
    return getattr(scene, "tracevis3d_structure", None)


def expanded_calls(st) -> list:
    """The calls the panel shows fully expanded (``cone_expand``)."""
    return [int(x) for x in st.cone_expand.split(",") if x.strip().lstrip("-").isdigit()]


def cone_params_dict(scene) -> dict:
    """The `ConeParams` fields of the panel (filters shared with the icicle's hide fields)."""
    from . import properties

    st = structure_of(scene)
    s = scene.tracevis3d
    expand = expanded_calls(st)
    return dict(max_nodes=int(st.cone_max_nodes), orientation=st.cone_orientation,
                fold_recursion=bool(st.cone_fold_recursion), hide=properties.split_hide(s.hide),
                hide_modules=properties.split_modules(s.hide_modules), hide_utilities=int(st.hide_utilities),
                collapse_patterns=bool(st.collapse_patterns), expand=expand,
                highlight=properties.split_hide(st.highlight),
                resolution=(int(s.resolution_x), int(s.resolution_y)), label_px=float(s.label_px),
                show_legend=bool(s.show_legend), show_title=bool(s.show_title),
                title=s.title if s.title.strip() else None)


CLASSES = (TraceVis3DStructureSettings,)


def register():
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    bpy.types.Scene.tracevis3d_structure = PointerProperty(type=TraceVis3DStructureSettings)


def unregister():
    if hasattr(bpy.types.Scene, "tracevis3d_structure"):
        del bpy.types.Scene.tracevis3d_structure
    for cls in reversed(CLASSES):
        if getattr(cls, "is_registered", False):
            bpy.utils.unregister_class(cls)
