"""Write a `TubeLayer` as one mesh (the only module besides its siblings importing bpy).

The tubes' vertices and quads come from `kernels.tubes.tube_mesh` and go into the mesh
through ``foreach_set`` with exact float32/int32 arrays (no Python loop over tubes).  Every
face carries its tube's attributes (``match_index``, ``similarity``, ``ratio``, the colour
mode bins, ``tv_color``) in the FACE domain, so a material reads the colour and picking
maps a face back to its match; `set_tube_colour_mode` switches colour modes by rewriting
the faces' material indices from the stored bins, without rebuilding anything.
"""
from __future__ import annotations

import bpy
import numpy as np

from ..kernels.tubes import tube_mesh, tube_mesh_normal
from ..layout.spec import TubeLayer

_TYPES = {np.dtype(np.int32): ("INT", "value"), np.dtype(np.float32): ("FLOAT", "value")}


def tube_mesh_arrays(layer: TubeLayer):
    """(vertices float32 (nv, 3), quads int32 (nf, 4), tube of each face int32)."""
    mesh = tube_mesh_normal if getattr(layer, "cross_section", "horizontal") == "normal" else tube_mesh
    return mesh(np.ascontiguousarray(layer.centres, np.float64), np.ascontiguousarray(layer.half_x, np.float64),
                np.ascontiguousarray(layer.half_y, np.float64), int(layer.sides))


def write_tube_steps(layer: TubeLayer, coll, object_name: str):
    """The tubes as one mesh object, in steps (geometry, then one attribute per step).

    Yields (data block, its final name) for every data block as soon as it exists; returns
    the object (the protocol of `writer.write_layer_steps`)."""
    verts, quads, tube = tube_mesh_arrays(layer)
    me = bpy.data.meshes.new(object_name)
    me["tracevis3d"] = True
    yield me, object_name
    nv, nf = verts.shape[0], quads.shape[0]
    me.vertices.add(nv)
    me.vertices.foreach_set("co", np.ascontiguousarray(verts, np.float32).ravel())
    me.loops.add(4 * nf)
    me.loops.foreach_set("vertex_index", np.ascontiguousarray(quads, np.int32).ravel())
    me.polygons.add(nf)
    me.polygons.foreach_set("loop_start", np.arange(0, 4 * nf, 4, dtype=np.int32))
    yield me, object_name
    me.polygons.foreach_set("material_index", np.ascontiguousarray(layer.material_index[tube], np.int32))
    me.polygons.foreach_set("use_smooth", np.ones(nf, bool))
    me.update(calc_edges=True)
    yield me, object_name
    A = me.attributes
    A.new("tv_color", "FLOAT_COLOR", "FACE").data.foreach_set(
        "color", np.ascontiguousarray(layer.colors[tube], np.float32).ravel())
    yield me, object_name
    for key, arr in layer.attributes.items():
        typ, prop = _TYPES[arr.dtype]
        A.new(key, typ, "FACE").data.foreach_set(prop, np.ascontiguousarray(arr[tube]))
        yield me, object_name
    for mname in layer.materials:
        me.materials.append(bpy.data.materials[mname])
    ob = bpy.data.objects.new(object_name, me)
    ob["tracevis3d"] = True
    ob["tv3d_layer"] = layer.name
    ob["tv3d_tubes"] = True
    coll.objects.link(ob)
    yield ob, object_name
    return ob


def set_tube_colour_mode(ob, mode: str) -> None:
    """Show the tubes of ``ob`` in colour mode ``mode`` (e.g. "ratio"): each face's material
    index becomes the bin stored for that mode; ``tv_color`` follows for EEVEE and Cycles."""
    me = ob.data
    key = f"bin_{mode.replace('-', '_')}"
    if key not in me.attributes:
        modes = sorted(a.name[4:].replace("_", "-") for a in me.attributes if a.name.startswith("bin_"))
        raise ValueError(f"unknown tube colour mode {mode!r}; this scene has {modes}")
    n = len(me.polygons)
    bins = np.empty(n, np.int32)
    me.attributes[key].data.foreach_get("value", bins)
    me.polygons.foreach_set("material_index", bins)
    rgba = np.empty((len(me.materials), 4), np.float32)
    for k, mat in enumerate(me.materials):  # one entry per material (a few dozen)
        rgba[k] = tuple(mat.diffuse_color)
    me.attributes["tv_color"].data.foreach_set("color", rgba[bins].ravel())
    ob["tv3d_colour_mode"] = mode
    me.update()
