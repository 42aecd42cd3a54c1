"""Cutaways in Blender: an Empty ``TV3D_cutaway`` at the camera and a
Geometry Nodes modifier on every world-space layer of the figure that removes the boxes
(instances) and tube or ring vertices whose position lies inside the Empty's pyramid (in
its scaled local frame: 0 < -z <= 1 and |x|, |y| <= -z; a prism, |x|, |y| <= 1, when the
modifier's Perspective is 0), i.e. between the camera and the target.

It works in the viewport and in every render engine (it is geometry, not a viewport clip),
needs no Python at render time and no TraceVis3D installed (the modifier and the Empty are
ordinary data in the .blend), and is animated like anything else in Blender: keyframe the
Empty's scale or location (`animate_reveal` grows it from nothing, a reveal).  The box
comes from the layout (`layout.cutaway`, ``spec.meta["cutaway"]``).
"""
from __future__ import annotations

import bpy

from .compat import remove_modifier, set_modifier_input

GROUP = "TV3D_cutaway"
EMPTY = "TV3D_cutaway"
MODIFIER = "TraceVis3D cutaway"


def cutaway_group() -> bpy.types.NodeTree:
    """The node group: Geometry + Object (the box) → the geometry less what lies inside."""
    ng = bpy.data.node_groups.get(GROUP)
    if ng is not None:
        return ng
    ng = bpy.data.node_groups.new(GROUP, "GeometryNodeTree")
    ng["tv3d"] = True
    ng.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    ng.interface.new_socket("Cutaway", in_out="INPUT", socket_type="NodeSocketObject")
    sock = ng.interface.new_socket("Perspective", in_out="INPUT", socket_type="NodeSocketFloat")
    sock.default_value = 1.0
    ng.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    N, L = ng.nodes, ng.links
    gi, go = N.new("NodeGroupInput"), N.new("NodeGroupOutput")
    info = N.new("GeometryNodeObjectInfo")
    info.transform_space = "RELATIVE"  # the box in the modified object's space
    L.new(gi.outputs["Cutaway"], info.inputs["Object"])
    inv = N.new("FunctionNodeInvertMatrix")
    L.new(info.outputs["Transform"], inv.inputs["Matrix"])
    local = N.new("FunctionNodeTransformPoint")
    L.new(N.new("GeometryNodeInputPosition").outputs[0], local.inputs["Vector"])
    L.new(inv.outputs["Matrix"], local.inputs["Transform"])
    sep = N.new("ShaderNodeSeparateXYZ")
    L.new(local.outputs[0], sep.inputs[0])

    def math(op, x, y=None, value=None):
        n = N.new("ShaderNodeMath")
        n.operation = op
        L.new(x, n.inputs[0])
        if y is not None:
            L.new(y, n.inputs[1])
        elif value is not None:
            n.inputs[1].default_value = value
        return n.outputs[0]

    dist = math("MULTIPLY", sep.outputs["Z"], value=-1.0)  # along the view, 1 at the far end
    # the half-width at that distance: Z for a pyramid from the camera, 1 for a prism
    persp = gi.outputs["Perspective"]
    one_less = math("ADD", math("MULTIPLY", persp, value=-1.0), value=1.0)  # 1 - Perspective
    bound = math("ADD", math("MULTIPLY", dist, persp), one_less)
    wide = math("MAXIMUM", math("ABSOLUTE", sep.outputs["X"]), math("ABSOLUTE", sep.outputs["Y"]))
    ok = [math("LESS_THAN", wide, bound), math("GREATER_THAN", dist, value=0.0), math("LESS_THAN", dist, value=1.0)]
    both = math("MULTIPLY", math("MULTIPLY", ok[0], ok[1]), ok[2])
    inside = N.new("FunctionNodeCompare")
    inside.data_type = "FLOAT"
    inside.operation = "GREATER_THAN"
    inside.inputs["B"].default_value = 0.5
    L.new(both, inside.inputs["A"])
    geo = gi.outputs["Geometry"]
    for domain in ("INSTANCE", "POINT"):  # boxes (instances) whole; tubes and rings by vertex
        drop = N.new("GeometryNodeDeleteGeometry")
        drop.domain = domain
        L.new(geo, drop.inputs["Geometry"])
        L.new(inside.outputs[0], drop.inputs["Selection"])
        geo = drop.outputs[0]
    L.new(geo, go.inputs["Geometry"])
    return ng


def _cut_objects(coll) -> list:
    """World-space geometry of the figure: layers, tubes, rings (not labels, not the HUD)."""
    return [ob for ob in coll.all_objects if ob.type in ("MESH", "POINTCLOUD") and ob.parent is None]


def apply_cutaway(box: dict, coll, scene=None) -> bpy.types.Object:
    """Place (or move) the Empty at ``box`` ({"location", "rotation", "scale"}) and give
    every world-space object of ``coll`` the cutaway modifier (last in its stack)."""
    scene = scene or bpy.context.scene
    ob = bpy.data.objects.get(EMPTY)
    if ob is None:
        ob = bpy.data.objects.new(EMPTY, None)
        ob.empty_display_type = "CUBE"
        ob.empty_display_size = 1.0
        ob["tv3d_kind"] = "cutaway"
    if coll not in ob.users_collection:
        coll.objects.link(ob)
    ob.location = box["location"]
    ob.rotation_euler = box["rotation"]
    ob.scale = box["scale"]
    ob.hide_render = True
    ob["tv3d_target"] = str(box.get("target", ""))
    ng = cutaway_group()
    for target in _cut_objects(coll):
        mod = target.modifiers.get(MODIFIER) or target.modifiers.new(MODIFIER, "NODES")
        mod.node_group = ng
        set_modifier_input(mod, ng.interface.items_tree["Cutaway"].identifier, ob)
        set_modifier_input(mod, ng.interface.items_tree["Perspective"].identifier, float(box.get("perspective", 1.0)))
    return ob


def remove_cutaway(coll) -> None:
    """The figure without its cutaway (the modifiers and the Empty removed)."""
    remove_modifier(_cut_objects(coll), MODIFIER)
    ob = bpy.data.objects.get(EMPTY)
    if ob is not None:
        bpy.data.objects.remove(ob)


def animate_reveal(ob, frame_start: int, frame_end: int) -> None:
    """Keyframe the cutaway's scale from nothing (frame_start) to its pyramid (frame_end):
    what stands in front of the target is eaten away from the camera towards it."""
    full = tuple(ob.scale)
    ob.scale = tuple(1e-6 * v for v in full)  # not zero: the box's matrix must stay invertible
    ob.keyframe_insert("scale", frame=frame_start)
    ob.scale = full
    ob.keyframe_insert("scale", frame=frame_end)
