"""The split of a zoomed icicle (`tracevis3d.blender.view`): the Geometry Nodes group that keeps
what lies left of a refined stretch, drops what lies in it and moves what lies right of it, its
state in ``scene["tracevis3d_zoom"]``, and `unzoom`, which takes a refinement away (what a
rebuild of the figure runs first, `tasks.layout_and_write_steps`).  Apart from the zoom's job so
that the build's tasks can unzoom without importing the views' zoom code."""
from __future__ import annotations

import json
import time

import bpy

from ..layout import refine
from .compat import remove_modifier, set_modifier_input

__all__ = ["STATE_KEY", "ZOOM_COLLECTION", "SPLIT_GROUP", "SPLIT_MODIFIER", "zoom_state", "split_group", "unzoom"]

STATE_KEY = "tracevis3d_zoom"
ZOOM_COLLECTION = "TraceVis3D zoom"
SPLIT_GROUP = "TV3D_zoom_split"
SPLIT_MODIFIER = "TraceVis3D zoom split"


def overview_objects(coll):
    """The top-level objects of the overview collection ``coll``."""
    return [ob for ob in coll.all_objects if ob.parent is None]


def zoom_state(scene) -> dict | None:
    """The refinement in ``scene`` now ({"window", "thread", "placement", "camera", "hidden",
    "moved"}), or None."""
    try:
        st = json.loads(scene.get(STATE_KEY) or "null")
    except (TypeError, ValueError):
        return None
    return st if isinstance(st, dict) else None


# ------------------------------------------------------------------------------ the split
def split_group() -> bpy.types.NodeTree:
    """Geometry + Left, Right, Shift → what lies left of Left, and what lies right of Right
    moved by Shift; a box (point with ``tv_scale``) crossing a cut clipped to its part outside
    (a box crossing both kept as two); vertices of meshes (arcs, rings) kept or moved alike."""
    ng = bpy.data.node_groups.get(SPLIT_GROUP)
    if ng is not None:
        return ng
    ng = bpy.data.node_groups.new(SPLIT_GROUP, "GeometryNodeTree")
    io = ng.interface
    io.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    for name in ("Left", "Right", "Shift"):
        io.new_socket(name, in_out="INPUT", socket_type="NodeSocketFloat")
    io.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    N, L = ng.nodes, ng.links
    gi, go = N.new("NodeGroupInput"), N.new("NodeGroupOutput")

    def math(op, a, b):
        n = N.new("ShaderNodeMath")
        n.operation = op
        for k, v in enumerate((a, b)):
            if isinstance(v, (int, float)):
                n.inputs[k].default_value = v
            else:
                L.new(v, n.inputs[k])
        return n.outputs[0]

    pos = N.new("GeometryNodeInputPosition").outputs[0]
    scale_attr = N.new("GeometryNodeInputNamedAttribute")
    scale_attr.data_type = "FLOAT_VECTOR"
    scale_attr.inputs["Name"].default_value = "tv_scale"
    sp, ss = N.new("ShaderNodeSeparateXYZ"), N.new("ShaderNodeSeparateXYZ")
    L.new(pos, sp.inputs[0])
    L.new(scale_attr.outputs["Attribute"], ss.inputs[0])
    half = math("MULTIPLY", ss.outputs["X"], 0.5)
    x0, x1 = math("SUBTRACT", sp.outputs["X"], half), math("ADD", sp.outputs["X"], half)
    left, right, shift = gi.outputs["Left"], gi.outputs["Right"], gi.outputs["Shift"]
    joined = N.new("GeometryNodeJoinGeometry")
    # (drop when, new x0, new x1, moved by)
    for drop, a, b, moved in ((math("GREATER_THAN", x0, left), x0, math("MINIMUM", x1, left), None),
                              (math("LESS_THAN", x1, right), math("MAXIMUM", x0, right), x1, shift)):
        # ">=" / "<=" via the strict compare of the other side: a zero-width point on a cut stays once
        delete = N.new("GeometryNodeDeleteGeometry")
        delete.domain = "POINT"
        L.new(gi.outputs["Geometry"], delete.inputs["Geometry"])
        L.new(drop, delete.inputs["Selection"])
        cx = math("MULTIPLY", math("ADD", a, b), 0.5)
        if moved is not None:
            cx = math("ADD", cx, moved)
        # fields are evaluated on the geometry of the node that reads them: the new centre and
        # width are stored while position and scale are still the old ones, the point moved last
        geo = delete.outputs[0]
        for name, dtype, value in (("tv_zoom_x", "FLOAT", cx), ("tv_scale", "FLOAT_VECTOR", None)):
            store = N.new("GeometryNodeStoreNamedAttribute")
            store.data_type = dtype
            store.domain = "POINT"
            store.inputs["Name"].default_value = name
            if value is None:
                newscale = N.new("ShaderNodeCombineXYZ")
                L.new(math("SUBTRACT", b, a), newscale.inputs["X"])
                L.new(ss.outputs["Y"], newscale.inputs["Y"])
                L.new(ss.outputs["Z"], newscale.inputs["Z"])
                value = newscale.outputs[0]
            L.new(geo, store.inputs["Geometry"])
            L.new(value, store.inputs["Value"])
            geo = store.outputs[0]
        stored_x = N.new("GeometryNodeInputNamedAttribute")
        stored_x.data_type = "FLOAT"
        stored_x.inputs["Name"].default_value = "tv_zoom_x"
        newpos = N.new("ShaderNodeCombineXYZ")
        L.new(stored_x.outputs["Attribute"], newpos.inputs["X"])
        L.new(sp.outputs["Y"], newpos.inputs["Y"])
        L.new(sp.outputs["Z"], newpos.inputs["Z"])
        setp = N.new("GeometryNodeSetPosition")
        L.new(geo, setp.inputs["Geometry"])
        L.new(newpos.outputs[0], setp.inputs["Position"])
        L.new(setp.outputs[0], joined.inputs[0])
    L.new(joined.outputs[0], go.inputs["Geometry"])
    return ng


def split_targets(coll) -> list:
    """The overview's world-space geometry: boxes (point clouds), arcs and rings (meshes)."""
    return [ob for ob in overview_objects(coll) if ob.type in ("MESH", "POINTCLOUD")]


def apply_split(coll, placement: refine.Placement, state: dict) -> None:
    """Cut the overview at the stretch (modifiers), hide its names in the stretch and move those
    after it, hide its heads-up items; what was changed is recorded in ``state``."""
    ng = split_group()
    ident = {s.name: s.identifier for s in ng.interface.items_tree if s.in_out == "INPUT"}
    xa, xb, shift = placement.xa, placement.xb, placement.shift
    for ob in split_targets(coll):
        mod = ob.modifiers.get(SPLIT_MODIFIER)
        if mod is None:
            mod = ob.modifiers.new(SPLIT_MODIFIER, "NODES")
            mod.node_group = ng
            ob.modifiers.move(len(ob.modifiers) - 1, 0)  # before the instancer: it clips the points
        for key, value in (("Left", xa), ("Right", xb), ("Shift", shift)):
            set_modifier_input(mod, ident[key], value)
        ob.update_tag()
    hidden, moved = [], []
    cam = bpy.data.objects.get(state.get("camera") or "")
    for ob in list(coll.all_objects):
        if ob.type == "FONT" and ob.parent is None:
            lo, hi = label_x_range(ob)
            if hi > xa and lo < xb:  # in the stretch (or crossing a cut): the refined figure names it
                hidden.append([ob.name, ob.hide_render, ob.hide_viewport])
                ob.hide_render = ob.hide_viewport = True
            elif lo >= xb:
                ob.location.x += shift
                moved.append(ob.name)
        elif cam is not None and ob.parent == cam:  # the overview's title and legend
            hidden.append([ob.name, ob.hide_render, ob.hide_viewport])
            ob.hide_render = ob.hide_viewport = True
    state["hidden"], state["moved"], state["shift"] = hidden, moved, shift


def label_x_range(ob) -> tuple:
    """The x a name takes, from its text's advance width (`layout.text`), without evaluating
    the scene (an evaluation would also rebuild the overview's boxes)."""
    from ..layout.text import text_width

    w = text_width(ob.data.body) * float(ob.data.size) * max(ob.scale.x, 0.0)
    x = ob.location.x
    return {"LEFT": (x, x + w), "RIGHT": (x - w, x)}.get(ob.data.align_x, (x - 0.5 * w, x + 0.5 * w))


def undo_split(coll, state: dict) -> None:
    """Show the objects a split hid and move back those it moved (``state``'s "hidden" and "moved", then emptied)."""
    for name, hr, hv in state.get("hidden", ()):
        ob = bpy.data.objects.get(name)
        if ob is not None:
            ob.hide_render, ob.hide_viewport = bool(hr), bool(hv)
    for name in state.get("moved", ()):
        ob = bpy.data.objects.get(name)
        if ob is not None:
            ob.location.x -= float(state.get("shift", 0.0))
    state["hidden"], state["moved"] = [], []


def _remove_split(coll) -> None:
    remove_modifier(split_targets(coll), SPLIT_MODIFIER)
    ng = bpy.data.node_groups.get(SPLIT_GROUP)
    if ng is not None and ng.users == 0:
        bpy.data.node_groups.remove(ng)


def unzoom(scene=None, collection_name: str = "TraceVis3D") -> dict:
    """The whole figure again: the refinement's objects removed, the overview as it was built."""
    from .meshobj import TAG
    from .writer import clear_collection

    t0 = time.perf_counter()
    scene = scene or bpy.context.scene
    state = zoom_state(scene)
    coll = bpy.data.collections.get(collection_name)
    zoom = bpy.data.collections.get(ZOOM_COLLECTION)
    if zoom is not None:
        clear_collection(zoom)
        bpy.data.collections.remove(zoom)
    # the zoom's instancer group stays for the next zoom (`zoom_write._instancer`; one group)
    orphans = [ng for ng in bpy.data.node_groups if ng.get(TAG) and ng.users == 0 and not ng.get("tv3d_zoom")]
    if orphans:
        bpy.data.batch_remove(orphans)
    if coll is not None:
        if state:
            undo_split(coll, state)
        _remove_split(coll)
    if state:
        cam = bpy.data.objects.get(state.get("camera") or "")
        if cam is not None:
            scene.camera = cam
    if STATE_KEY in scene:
        del scene[STATE_KEY]
    return {"window": None, "calls_drawn": 0, "names": [], "seconds": {"total": time.perf_counter() - t0}}
