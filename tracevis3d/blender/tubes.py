"""Write a `TubeLayer` as one mesh (the only module besides its siblings importing bpy).

The tubes' vertices, quads and edges come from `kernels.tubes` (`tube_mesh`, `tube_edges`)
and go into the mesh's own attributes through ``foreach_set`` with exact float32/int32
arrays (no Python loop over tubes, no edge search).  Each face carries only what is needed
per face: ``tube_index``, ``match_index``, its material index and, when the layer's
materials read it (``TubeLayer.face_colors``), ``tv_color``.  The tubes' own values (``call_a``, ``similarity``, ``ratio``, the colour
mode bins ``bin_<mode>``, ...) are stored once per tube, as arrays in the mesh's custom
property ``tv3d_tube_data`` (saved with the .blend): `tube_values` reads them, `face_values`
spreads them over the faces.  `set_tube_colour_mode` switches colour modes by rewriting the
faces' material indices from the stored bins, without rebuilding anything.
"""
from __future__ import annotations

import bpy
import numpy as np

from ..kernels.tubes import ring_keep, tube_edges, tube_mesh, tube_mesh_normal
from ..layout.spec import TubeLayer
from .meshobj import link_layer_mesh

#: the mesh's custom property holding one array per tube attribute
TUBE_DATA = "tv3d_tube_data"


def tube_values(me, name: str):
    """The per-tube array ``name`` of a tube mesh (int32 or float32), or None."""
    data = me.get(TUBE_DATA)
    if data is None or name not in data:
        return None
    return np.asarray(data[name])


def face_tubes(me) -> np.ndarray:
    """int32: the tube of each face."""
    out = np.empty(len(me.polygons), np.int32)
    me.attributes["tube_index"].data.foreach_get("value", out)
    return out


def face_values(me, name: str):
    """The per-tube array ``name`` spread over the faces (one value per face), or None."""
    v = tube_values(me, name)
    return None if v is None else v[face_tubes(me)]


def tube_mesh_arrays(layer: TubeLayer):
    """(vertices float32 (nv, 3), quads int32 (nf, 4), tube of each face int32, rings per
    tube int64): rings at the samples `kernels.tubes.ring_keep` keeps for the layer's
    ``ring_tolerance`` (all of them when it is 0, and for round cross-sections)."""
    centres, hx, hy = (np.ascontiguousarray(a, np.float64) for a in (layer.centres, layer.half_x, layer.half_y))
    m, s = centres.shape[:2]
    if getattr(layer, "cross_section", "horizontal") == "normal":  # rings across the curve (one side count)
        verts, quads, tube = tube_mesh_normal(centres, hx, hy, int(layer.sides))
        return verts, quads, tube, np.full(m, s, np.int64)
    keep = ring_keep(centres, hx, hy, float(layer.ring_tolerance))
    return tube_mesh(centres, hx, hy, layer.sides_per_tube(), keep)


def _material_index(me):
    """The faces' material indices as an attribute's data (``MeshPolygon.material_index``
    is a per-element path)."""
    a = me.attributes.get("material_index") or me.attributes.new("material_index", "INT", "FACE")
    return a.data


def write_tube_steps(layer: TubeLayer, coll, object_name: str):
    """The tubes as one mesh object, in steps (geometry, then one attribute per step).

    Yields (data block, its final name) for every data block as soon as it exists; returns
    the object (the protocol of `writer.write_layer_steps`)."""
    verts, quads, tube, rings = tube_mesh_arrays(layer)
    me = bpy.data.meshes.new(object_name)
    me["tracevis3d"] = True
    yield me, object_name
    nv, nf = verts.shape[0], quads.shape[0]
    edges, corner_edge = tube_edges(rings, layer.sides_per_tube())
    A = me.attributes
    # Topology straight into the mesh's own attributes: MeshLoop.vertex_index and
    # calc_edges go through per-element paths (seconds at 10^6 faces, see
    # bench/bench_compare_scene.py); the edges are known from the tubes' regular grid.
    me.vertices.add(nv)
    A["position"].data.foreach_set("vector", np.ascontiguousarray(verts, np.float32).ravel())
    me.edges.add(edges.shape[0])
    A[".edge_verts"].data.foreach_set("value", np.ascontiguousarray(edges, np.int32).ravel())
    me.loops.add(4 * nf)
    A[".corner_vert"].data.foreach_set("value", np.ascontiguousarray(quads, np.int32).ravel())
    A[".corner_edge"].data.foreach_set("value", corner_edge)
    me.polygons.add(nf)
    me.polygons.foreach_set("loop_start", np.arange(0, 4 * nf, 4, dtype=np.int32))
    yield me, object_name
    _material_index(me).foreach_set("value", np.ascontiguousarray(layer.material_index[tube], np.int32))
    me.shade_smooth()
    me.update()
    yield me, object_name
    if layer.face_colors:
        A.new("tv_color", "FLOAT_COLOR", "FACE").data.foreach_set(
            "color", np.ascontiguousarray(layer.colors[tube], np.float32).ravel())
        yield me, object_name
    A.new("tube_index", "INT", "FACE").data.foreach_set("value", tube)
    # every per-tube attribute (match_index, tv3d_kind, call_index, ...) on the tube's faces, so a
    # picked face says what it is (a flow's arc its kind); the colour modes' bins stay in TUBE_DATA
    for key, arr in layer.attributes.items():
        arr = np.asarray(arr)
        if key.startswith("bin_") or arr.ndim != 1 or arr.shape[0] != len(layer) or key in A:
            continue
        if arr.dtype.kind in "iub":
            A.new(key, "INT", "FACE").data.foreach_set("value", np.ascontiguousarray(arr[tube], np.int32))
        elif arr.dtype.kind == "f":
            A.new(key, "FLOAT", "FACE").data.foreach_set("value", np.ascontiguousarray(arr[tube], np.float32))
    me[TUBE_DATA] = {key: np.ascontiguousarray(arr) for key, arr in layer.attributes.items()}
    yield me, object_name
    ob = link_layer_mesh(me, object_name, layer, coll, tv3d_tubes=True)
    yield ob, object_name
    return ob


def set_tube_colour_mode(ob, mode: str) -> None:
    """Show the tubes of ``ob`` in colour mode ``mode`` (e.g. "ratio"): each face's material
    index becomes the bin stored for that mode; ``tv_color`` follows for EEVEE and Cycles."""
    me = ob.data
    key = f"bin_{mode.replace('-', '_')}"
    per_tube = tube_values(me, key)
    if per_tube is None:
        modes = sorted(k[4:].replace("_", "-") for k in (me.get(TUBE_DATA) or {}).keys() if k.startswith("bin_"))
        raise ValueError(f"unknown tube colour mode {mode!r}; this scene has {modes}")
    bins = np.ascontiguousarray(per_tube[face_tubes(me)], np.int32)
    _material_index(me).foreach_set("value", bins)
    rgba = np.empty((len(me.materials), 4), np.float32)
    for k, mat in enumerate(me.materials):  # one entry per material (a few dozen)
        rgba[k] = tuple(mat.diffuse_color)
    if "tv_color" in me.attributes:
        me.attributes["tv_color"].data.foreach_set("color", rgba[bins].ravel())
    ob["tv3d_colour_mode"] = mode
    me.update()
