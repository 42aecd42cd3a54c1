"""Write `SectorLayer` and `CurveLayer` as one mesh object each.

Sectors (bent boxes) come from `kernels.ring.sector_mesh`, curves (ribbons) from
`kernels.ring.ribbon_mesh`; vertices and quads go in through ``foreach_set`` with exact
float32/int32 arrays.  Every face carries its element's attributes (``call_index``,
``corr_index``, ...) and colour ``tv_color`` in the FACE domain, so a material reads the
colour (and alpha), Workbench shows the material colour chosen by the face's material index,
and picking maps a face back to its call or correspondence.

One generated mesh rather than instanced bent boxes: a sector's bend depends on its own
angle range, so instancing would need one straight box per arc segment (k instances per
sector, each with its own rotation) and still show facets; the mesh carries the same
number of faces without the per-instance transform (see bench/bench_threads.py for the
write times).
"""
from __future__ import annotations

import bpy
import numpy as np

from ..kernels.ring import ribbon_mesh, sector_mesh
from ..layout.spec import CurveLayer, SectorLayer
from .meshobj import link_layer_mesh

_TYPES = {np.dtype(np.int32): ("INT", "value"), np.dtype(np.float32): ("FLOAT", "value")}


def sector_mesh_arrays(layer: SectorLayer):
    """(vertices float32 (nv, 3), quads int32 (nf, 4), sector of each face int32)."""
    f = np.ascontiguousarray
    verts, quads, owner = sector_mesh(float(layer.centre[0]), float(layer.centre[1]), f(layer.angles[:, 0], np.float64),
                                      f(layer.angles[:, 1], np.float64), f(layer.radii[:, 0], np.float64),
                                      f(layer.radii[:, 1], np.float64), f(layer.heights[:, 0], np.float64),
                                      f(layer.heights[:, 1], np.float64), float(np.radians(layer.segment_deg)))
    return layer.placed(verts).astype(np.float32), quads, owner


def curve_mesh_arrays(layer: CurveLayer, toward=None):
    """(vertices, quads, ribbon of each face) of the ribbons; given ``toward`` (a world point:
    the camera), every quad wound so its normal faces it.  A ribbon's winding follows which of
    its sides is "left", so half of the thread view's correspondence curves were seen from
    behind, and Workbench's studio light drew their back faces grey: the curves that the
    legend says are in the waiting thread's colour were all grey."""
    verts, quads, face = ribbon_mesh(np.ascontiguousarray(layer.left, np.float64),
                                     np.ascontiguousarray(layer.right, np.float64))
    if toward is not None and quads.size:
        v = verts.astype(np.float64)
        a, b, c, d = (v[quads[:, k]] for k in range(4))
        normal = np.cross(c - a, d - b)  # the quad's area vector (its diagonals): Blender's normal
        away = np.einsum("ij,ij->i", normal, np.asarray(toward, np.float64)[None] - a) < 0
        quads[away] = quads[away][:, ::-1]
    return verts, quads, face


def write_mesh_layer_steps(layer, coll, object_name: str, toward=None):
    """A SectorLayer or CurveLayer as one mesh object, in steps (the protocol of
    `writer.write_layer_steps`: yields (data block, final name), returns the object);
    ``toward``: the camera's place, which a ribbon's faces face (`curve_mesh_arrays`)."""
    verts, quads, owner = sector_mesh_arrays(layer) if isinstance(layer, SectorLayer) else \
        curve_mesh_arrays(layer, toward)
    me = bpy.data.meshes.new(object_name)
    me["tracevis3d"] = True
    yield me, object_name
    nv, nf = verts.shape[0], quads.shape[0]
    # through the generic attributes (position, .corner_vert): ~10x faster than the
    # per-element MeshVertex/MeshLoop properties at 10^5 elements
    me.vertices.add(nv)
    me.attributes["position"].data.foreach_set("vector", np.ascontiguousarray(verts, np.float32).ravel())
    me.loops.add(4 * nf)
    me.attributes[".corner_vert"].data.foreach_set("value", np.ascontiguousarray(quads, np.int32).ravel())
    me.polygons.add(nf)
    me.polygons.foreach_set("loop_start", np.arange(0, 4 * nf, 4, dtype=np.int32))
    yield me, object_name
    me.polygons.foreach_set("material_index", np.ascontiguousarray(layer.material_index[owner], np.int32))
    me.update(calc_edges=True)
    yield me, object_name
    A = me.attributes
    A.new("tv_color", "FLOAT_COLOR", "FACE").data.foreach_set(
        "color", np.ascontiguousarray(layer.colors[owner], np.float32).ravel())
    for key, arr in layer.attributes.items():
        typ, prop = _TYPES[arr.dtype]
        A.new(key, typ, "FACE").data.foreach_set(prop, np.ascontiguousarray(arr[owner]))
        yield me, object_name
    if isinstance(layer, SectorLayer):  # which sector a face belongs to (the growth of a ring, `anim_threads`)
        A.new("sector_index", "INT", "FACE").data.foreach_set("value", np.ascontiguousarray(owner, np.int32))
    ob = link_layer_mesh(me, object_name, layer, coll,
                         tv3d_kind="sectors" if isinstance(layer, SectorLayer) else "curves")
    yield ob, object_name
    return ob
