"""Write an `ImageLayer` as one textured quad (the EXTRAVIS sequence view's mural).

The pixels go into a float image through ``foreach_set`` (bottom row first, as Blender
stores them) and are packed into the .blend; the quad's material shows the image
unlit-independent of filtering (``Closest``), so every pixel line of the mural stays one
line.  Workbench shows it with ``color_type = TEXTURE`` (`writer.setup_world_and_display`),
EEVEE and Cycles through an emission shader.
"""
from __future__ import annotations

import bpy
import numpy as np

from ..layout.spec import ImageLayer
from .compat import use_nodes
from .meshobj import TAG


def _image(layer: ImageLayer, name: str):
    h, w = layer.pixels.shape[:2]
    old = bpy.data.images.get(name)
    if old is not None and old.get(TAG):
        bpy.data.images.remove(old)
    img = bpy.data.images.new(name, w, h, alpha=True, float_buffer=True)
    img[TAG] = True
    img.colorspace_settings.name = "Linear Rec.709" if "Linear Rec.709" in [
        c.identifier for c in img.colorspace_settings.bl_rna.properties["name"].enum_items] else "Non-Color"
    img.pixels.foreach_set(np.ascontiguousarray(layer.pixels[::-1], np.float32).ravel())
    img.pack()
    return img


def _material(name: str, img):
    mat = bpy.data.materials.get(name) or bpy.data.materials.new(name)
    mat[TAG] = True
    use_nodes(mat)  # Blender 4.x: a new material has no node tree
    nt = mat.node_tree
    nt.nodes.clear()
    N, L = nt.nodes, nt.links
    tex = N.new("ShaderNodeTexImage")
    tex.image = img
    tex.interpolation = "Closest"
    em = N.new("ShaderNodeEmission")
    L.new(tex.outputs["Color"], em.inputs["Color"])
    out = N.new("ShaderNodeOutputMaterial")
    L.new(em.outputs[0], out.inputs["Surface"])
    nt.nodes.active = tex  # what Workbench's texture colour shows
    return mat


def write_image_steps(layer: ImageLayer, coll, object_name: str):
    """The image quad, in steps (the protocol of `writer.write_layer_steps`)."""
    img = _image(layer, f"{object_name}_image")
    yield img, img.name
    mat = _material(f"{object_name}_material", img)
    yield mat, mat.name
    o, u, v = (np.asarray(x, np.float64) for x in (layer.origin, layer.u, layer.v))
    verts = np.array([o + v, o + u + v, o + u, o], np.float32)  # bottom-left, bottom-right, top-right, top-left
    me = bpy.data.meshes.new(object_name)
    me[TAG] = True
    yield me, object_name
    me.vertices.add(4)
    me.attributes["position"].data.foreach_set("vector", verts.ravel())
    me.loops.add(4)
    me.attributes[".corner_vert"].data.foreach_set("value", np.arange(4, dtype=np.int32))
    me.polygons.add(1)
    me.polygons.foreach_set("loop_start", np.zeros(1, np.int32))
    uv = me.uv_layers.new(name="UVMap")
    uv.data.foreach_set("uv", np.array([0, 0, 1, 0, 1, 1, 0, 1], np.float32))
    me.update(calc_edges=True)
    me.materials.append(mat)
    ob = bpy.data.objects.new(object_name, me)
    ob[TAG] = True
    ob["tv3d_layer"] = layer.name
    ob["tv3d_kind"] = "image"
    for key, arr in layer.attributes.items():
        ob[key] = np.ascontiguousarray(arr)
    coll.objects.link(ob)
    yield ob, object_name
    return ob


__all__ = ["write_image_steps"]
