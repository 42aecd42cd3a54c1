"""The objects TraceVis3D writes, marked as its own: the tag every data block carries,
the object of a mesh layer and the float attributes the animations add.  Shared by the scene writer (`blender.writer`) and the mesh
layers' writers (`blender.tubes`, `blender.rings`), which the writer calls: kept here so
neither imports the other."""
from __future__ import annotations

import bpy
import numpy as np

TAG = "tracevis3d"  # custom property marking data we created


def tag_datablock(idb):
    """``idb`` marked as the add-on's own (custom property `TAG`), returned for chaining."""
    idb[TAG] = True
    return idb


def link_layer_mesh(me, object_name: str, layer, coll, **tags) -> bpy.types.Object:
    """The object of a mesh layer (tubes, sectors, curves): the layer's materials on the mesh,
    tagged as ours with the layer's name and ``tags``, linked in ``coll``."""
    for mname in layer.materials:
        me.materials.append(bpy.data.materials[mname])
    ob = bpy.data.objects.new(object_name, me)
    ob[TAG] = True
    ob["tv3d_layer"] = layer.name
    for key, value in tags.items():
        ob[key] = value
    coll.objects.link(ob)
    return ob


def set_float_attribute(data, name: str, domain: str, values) -> None:
    """The float attribute ``name`` on ``domain`` (POINT, FACE) of a mesh or point cloud,
    replaced by ``values`` (float32, one foreach_set): the times the animations' Geometry
    Nodes groups read."""
    A = data.attributes
    if name in A:
        A.remove(A[name])
    A.new(name, "FLOAT", domain).data.foreach_set("value", np.ascontiguousarray(values, np.float32))
