"""Write a refined stretch's SceneSpec into its own collection, at the cost of the stretch
(`blender.view`, issue 70).

`writer.write_scene_steps` writes a whole figure: every material's node tree rebuilt, a fresh
instancer group per layer, each instance layer converted to a point cloud by an operator (an
operator updates the view layer, which evaluates the whole scene: the overview's 10^6 boxes
included), the world and display set.  A refinement is written over and over beside an
overview that already has all of that, so this writer only adds what is missing:

- materials that do not exist yet (the refined figure keeps the overview's colours, so its
  materials are the overview's, by name);
- each instance layer as a mesh of vertices (no operator; Instance on Points takes mesh
  vertices as it takes points, with the same POINT attributes: what the writer itself does in
  Blender 4.2-4.4), instanced by one group of the writer's kind (`writer.instancer_group_steps`)
  for all of them, kept from zoom to zoom, its spare branches taking new materials (`_instancer`);
- tube, ring and curve layers through the writer's own step functions; labels and the camera
  through `writer.write_label` / `writer.write_camera`.
The previous refinement's objects and their data are removed first (`writer.clear_collection`).
"""
from __future__ import annotations

import json
import time

import bpy
import numpy as np

from ..layout.spec import CurveLayer, ImageLayer, InstanceLayer, SectorLayer, TubeLayer
from .meshobj import TAG, tag_datablock
from .writer import (MATERIAL_NODE, STEP_BUDGET, ATTR_TYPES, attach_to_camera, include_in_view_layer,
                     no_shadow, clear_collection, drain, ensure_collection, ensure_material, instancer_group_steps,
                     write_camera, write_label)

__all__ = ["write_refinement_steps", "prepare_instancer_steps", "GROUP_PREFIX", "CAMERA_NAME", "INSTANCER"]

GROUP_PREFIX = "TV3D_zoom_instancer_"
CAMERA_NAME = "TV3D_zoom_camera"
LABEL_PREFIX = "TV3D_zoom_label"


#: the zoom's instancer group (`_instancer`), shared by its instance layers
INSTANCER = GROUP_PREFIX + "shared"
#: a zoom's instancer group has at least this many branches, a power of two (`branches_for`)
MIN_BRANCHES = 64
#: ... and keeps the materials of past zooms on its branches up to this many
MAX_KEPT_BRANCHES = 256


def branches_for(n_materials: int) -> int:
    """The branches of the zoom's instancer group built for ``n_materials`` materials: the next
    power of two, at least `MIN_BRANCHES` (building a group grows faster than its size: ~0.04 s
    for 26 branches, ~0.12 s for 64 on this machine; a spare branch selects no point)."""
    return max(MIN_BRANCHES, 1 << max(int(n_materials) - 1, 0).bit_length())


def _instancer(materials: list) -> tuple:
    """(the zoom's instancer group, {material name: its branch}) with a branch for each of
    ``materials`` (the refined figure's instance layers').

    One group serves every layer of every zoom (`INSTANCER`, of the writer's kind:
    `writer.instancer_group_steps`, branch k instancing the points whose ``tv_mat`` is k with
    material k): a zoom's new materials take its spare branches (`_retarget`), and it is built
    again, with room to spare (`branches_for`), only when they run out.  Every zoom's layers have
    other materials: building their groups again each time was 0.6 s of a 50 ms window's 0.8 s
    at 10^6 calls."""
    wanted = list(dict.fromkeys(materials))
    ng = bpy.data.node_groups.get(INSTANCER)
    kept = []
    if ng is not None and ng.get("tv3d_zoom"):
        try:
            kept = [m for m in json.loads(ng.get("tv3d_branches") or "[]") if isinstance(m, str)]
        except (TypeError, ValueError):
            kept = []
        order = kept + [m for m in wanted if m not in kept]
        if _retarget(ng, order):
            ng["tv3d_branches"] = json.dumps(order)
            return ng, {m: k for k, m in enumerate(order)}
    order = kept + [m for m in wanted if m not in kept]
    if len(order) > MAX_KEPT_BRANCHES:  # another figure's materials: only this zoom's kept
        order = wanted
    order = [m for m in order if m in bpy.data.materials]
    spare = branches_for(len(order)) - len(order) if order else 0
    ng = drain(instancer_group_steps(INSTANCER, order + [order[-1]] * spare if order else [], fresh=False))
    ng["tv3d_zoom"] = True
    ng["tv3d_branches"] = json.dumps(order)
    return ng, {m: k for k, m in enumerate(order)}


def prepare_instancer_steps():
    """Build the zoom's instancer group ahead of the first zoom, its `MIN_BRANCHES` branches
    spare (the building of a figure meant to be zoomed: `zoom_inputs.keep_overview_steps` in
    Blender's interface), so that zoom only points them at its materials; in short steps."""
    ng = bpy.data.node_groups.get(INSTANCER)
    if ng is not None and ng.get("tv3d_zoom") and ng.nodes.get(f"{MATERIAL_NODE}{MIN_BRANCHES - 1}") is not None:
        return
    spare = next((m.name for m in bpy.data.materials), None)
    if spare is None:
        return
    ng = yield from instancer_group_steps(INSTANCER, [spare] * MIN_BRANCHES, fresh=False)
    ng["tv3d_zoom"] = True
    ng["tv3d_branches"] = "[]"


def _retarget(ng, materials: list) -> bool:
    """Point branch k of the instancer group ``ng`` at ``materials[k]``; False, changing
    nothing, when the group has fewer branches (or a material is gone).  Its branches past
    ``len(materials)`` select no point."""
    nodes = [ng.nodes.get(f"{MATERIAL_NODE}{k}") for k in range(len(materials))]
    mats = [bpy.data.materials.get(m) for m in materials]
    if any(node is None for node in nodes) or any(m is None for m in mats):
        return False
    for node, mat in zip(nodes, mats):
        socket = node.inputs["Material"]
        if socket.default_value != mat:
            socket.default_value = mat
    return True


def _write_points(layer: InstanceLayer, coll, object_name: str, group, branch: dict):
    """An instance layer as a mesh of vertices with the layer's POINT attributes, instanced by
    ``group`` (`_instancer`): ``tv_mat`` is the branch of each point's material (``branch``)."""
    n = len(layer)
    me = tag_datablock(bpy.data.meshes.new(object_name))
    me.vertices.add(n)
    me.vertices.foreach_set("co", np.ascontiguousarray(layer.positions, np.float32).ravel())
    A = me.attributes
    for key, typ, prop, arr in (("tv_scale", "FLOAT_VECTOR", "vector", layer.scales),
                                ("tv_color", "FLOAT_COLOR", "color", layer.colors)):
        A.new(key, typ, "POINT").data.foreach_set(prop, np.ascontiguousarray(arr, np.float32).ravel())
    branch_of = np.array([branch[m] for m in layer.materials], np.int32)
    A.new("tv_mat", "INT", "POINT").data.foreach_set("value", branch_of[np.asarray(layer.material_index, np.int64)]
                                                     if len(branch_of) else np.full(n, -1, np.int32))
    for key, arr in layer.attributes.items():
        typ, prop = ATTR_TYPES[arr.dtype]
        A.new(key, typ, "POINT").data.foreach_set(prop, np.ascontiguousarray(arr))
    if len(branch_of):  # as the writer's layers: a point's material is the object's material tv_mat
        by_branch = sorted(branch, key=branch.get)
        for mname in by_branch[: int(branch_of.max()) + 1]:
            me.materials.append(bpy.data.materials[mname])
    ob = tag_datablock(bpy.data.objects.new(object_name, me))
    coll.objects.link(ob)
    mod = ob.modifiers.new("TraceVis3D instancer", "NODES")
    mod.node_group = group
    ob["tv3d_layer"] = layer.name
    return ob


def write_refinement_steps(spec, collection_name: str, scene=None):
    """Replace the collection's content with ``spec`` (module doc), in short steps; returns
    {"collection", "objects": {"layers", "labels", "camera"}, "timings"}.  The scene camera
    becomes the spec's."""
    scene = scene or bpy.context.scene
    tm: dict = {}
    t = time.perf_counter()
    coll = ensure_collection(collection_name, scene)
    include_in_view_layer(coll, bpy.context.view_layer)
    clear_collection(coll)
    stale = [ng for ng in bpy.data.node_groups if ng.get(TAG) and ng.users == 0 and not ng.get("tv3d_zoom")]
    if stale:
        bpy.data.batch_remove(stale)
    templates: dict = {}
    used = sorted({m for lay in spec.layers for m in lay.materials} | set(spec.labels.material))
    for name in used:
        if name not in bpy.data.materials:
            ensure_material(spec.materials[name], templates)
    cam_ob = write_camera(spec, coll, name=CAMERA_NAME, scene=scene, set_active=True)
    tm["materials_camera"] = time.perf_counter() - t
    yield
    layers = {}
    points = [lay for lay in spec.layers if len(lay) and not isinstance(lay, (TubeLayer, ImageLayer, SectorLayer,
                                                                              CurveLayer))]
    group, branch = _instancer([m for lay in points for m in lay.materials]) if points else (None, {})
    for layer in spec.layers:
        if len(layer) == 0:
            continue
        t = time.perf_counter()
        name = f"TV3D_zoom_{layer.name}"
        if isinstance(layer, TubeLayer):
            from .tubes import write_tube_steps

            ob = drain(write_tube_steps(layer, coll, name))
        elif isinstance(layer, ImageLayer):
            from .images import write_image_steps

            ob = drain(write_image_steps(layer, coll, name))
        elif isinstance(layer, (SectorLayer, CurveLayer)):
            from .rings import write_mesh_layer_steps

            toward = spec.camera.location if layer.space == "world" and spec.camera is not None else None
            ob = drain(write_mesh_layer_steps(layer, coll, name, toward))
        else:
            ob = _write_points(layer, coll, name, group, branch)
        if layer.space == "camera":
            attach_to_camera(ob, cam_ob)
            no_shadow(ob)
            ob["tv3d_space"] = "camera"
        layers[layer.name] = ob.name
        tm[f"layer_{layer.name}"] = time.perf_counter() - t
        yield
    t = time.perf_counter()
    labels = []
    t_step = time.perf_counter()
    for i in range(len(spec.labels.texts)):
        labels.append(write_label(spec, i, coll, prefix=LABEL_PREFIX, camera_object=cam_ob).name)
        if time.perf_counter() - t_step >= STEP_BUDGET:
            yield
            t_step = time.perf_counter()
    tm["labels"] = time.perf_counter() - t
    return {"collection": coll.name, "objects": {"layers": layers, "labels": labels, "camera": cam_ob.name},
            "timings": tm}

