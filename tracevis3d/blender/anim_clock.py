"""The clock of a growth: the `TV3D_now` objects whose Geometry Nodes modifier
(`anim_nodes.now_group`) draws the red "now" line over a time axis and the trace time as
text, or the text alone after the title where a figure has no time axis (the cone tree).
Their clock inputs are driven by the scene's clock properties (`anim_nodes.set_inputs`)."""
from __future__ import annotations

import math

import bpy

from .anim_nodes import now_group, set_inputs
from .meshobj import tag_datablock


def clock_unit(span_us: float, t0: float) -> tuple:
    """(unit, µs → unit scale, decimals) of the clock for a window of ``span_us``."""
    end = t0 + span_us
    if end >= 1e6:
        return "s", 1e-6, 3 if span_us < 1e7 else 2 if span_us < 1e8 else 1
    if end >= 2e3:
        return "ms", 1e-3, 1 if span_us >= 1e4 else 2 if span_us >= 1e3 else 3
    return "µs", 1.0, 0


def anim_material(name: str, rgb) -> bpy.types.Material:
    from ..layout.spec import MaterialSpec
    from .writer import ensure_material

    return ensure_material(MaterialSpec(name, tuple(rgb) + (1.0,), kind="text", cushion=False,
                                        from_attribute=False))


def now_mesh_object(coll, name: str, clock: dict, span: float, t0: float, inputs: dict):
    """An object whose `TV3D_now` modifier draws the now line and the clock (``inputs``:
    the group's placement inputs; the clock's unit from the window)."""
    unit, scale, decimals = clock_unit(span, t0)
    group = now_group(unit, decimals, anim_material("TV3D_now_line", (0.85, 0.05, 0.05)),
                      anim_material("TV3D_now_text", (0.6, 0.02, 0.02)))
    me = tag_datablock(bpy.data.meshes.new(name))
    ob = tag_datablock(bpy.data.objects.new(name, me))
    ob["tv3d_anim"] = True
    coll.objects.link(ob)
    mod = ob.modifiers.new("TraceVis3D now", "NODES")
    mod.node_group = group
    set_inputs(mod, dict(clock, **inputs, **{"Clock Offset (µs)": t0, "Clock Scale": scale}))
    return ob


def clock_after_title(scene, coll, clock: dict, span: float, t0: float):
    """The clock alone (the `TV3D_now` group with no line: a figure without a time axis),
    on the title's line after its end (parented to the camera like the title), or, without
    a title, at the top left of the image."""
    cam = scene.camera
    title = next((ob for ob in coll.objects if ob.type == "FONT" and ob.get("tv3d_kind") == "title"
                  and ob.parent is not None and ob.parent == cam), None)
    if title is not None:
        bpy.context.view_layer.update()  # the title's dimensions
        size = 1.25 * float(title.data.size)
        x = float(title.location.x + title.dimensions.x) + 1.5 * size
        y, depth = float(title.location.y), float(title.location.z)
    else:  # the image's top-left corner at the HUD's distance (orthographic or perspective)
        depth = -max(1.0, 4.0 * cam.data.clip_start)  # in front of the near clip, as the HUD (`annotate.hud_layers`)
        if cam.data.type == "ORTHO":
            half_w = 0.5 * cam.data.ortho_scale
        else:
            half_w = 0.5 * cam.data.sensor_width / cam.data.lens * -depth
        r = scene.render
        half_h = half_w * r.resolution_y / max(r.resolution_x, 1)
        size = 0.04 * half_h
        x, y = -0.95 * half_w, 0.95 * half_h - size
    half = 2.2 * size  # the group keeps the text's centre in [Left + half, Right − half]
    x += half  # the text is centred: its left end at x
    # the group writes the text upright in its x-z plane facing −y; turned by −90° about x
    # (parented to the camera) it lies in the camera's x-y plane facing it, at z = −Front
    ob = now_mesh_object(coll, "TV3D_now", clock, span, t0, {
        "World per µs": 0.0, "Bottom": y - 0.4 * size, "Top": y - 0.4 * size, "Front": -depth, "Thickness": 0.0,
        "Text Size": size, "Left": x - half, "Right": x + half})
    ob.parent = cam
    ob.rotation_euler = (-math.pi / 2, 0.0, 0.0)
    ob["tv3d_space"] = "camera"
    return ob
