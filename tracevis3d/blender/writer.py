"""Write a SceneSpec into Blender data (the only layer besides its siblings importing bpy).

- one point cloud object per `InstanceLayer`, attributes written with
  ``attributes[name].data.foreach_set`` from exact float32/int32 arrays;
- a Geometry Nodes group per layer, built from Python: a unit cube carrying its local
  coordinate (``tv_local``) is instanced on the points, scaled by ``tv_scale``; one
  Instance-on-Points per material (selected by ``tv_mat``) so that every instance carries
  a real material (Workbench "Material" colour mode shows each material's viewport
  colour — Workbench does not read instance attributes, checked in Blender 5.0);
  point attributes (``tv_color``, ``call_index``, ...) propagate to the instances;
- node materials read ``tv_color`` (Attribute node, type INSTANCER) and apply the cushion
  profile from ``tv_local`` (type GEOMETRY) — EEVEE and Cycles;
- text labels as FONT objects, camera, lights, world.
No bpy.ops except one object conversion per layer in Blender 5.0 (mesh → point cloud;
5.0's Python API cannot size a point cloud, 5.1+ has ``PointCloud.resize``).
"""
from __future__ import annotations

import math
import time

import bpy
import numpy as np
from mathutils import Vector

from ..layout.spec import InstanceLayer, MaterialSpec, SceneSpec

TAG = "tracevis3d"  # custom property marking data we created
CUSHION_AMBIENT = 0.5


def _tag(idb):
    idb[TAG] = True
    return idb


def ensure_collection(name: str, scene=None) -> bpy.types.Collection:
    scene = scene or bpy.context.scene
    coll = bpy.data.collections.get(name)
    if coll is None:
        coll = _tag(bpy.data.collections.new(name))
    if coll.name not in scene.collection.children:
        scene.collection.children.link(coll)
    return coll


def clear_collection(coll: bpy.types.Collection) -> None:
    """Remove the collection's objects and the data blocks we created for them."""
    datas = {ob.data for ob in coll.objects if ob.data is not None and ob.data.get(TAG)}
    for ob in list(coll.objects):
        bpy.data.objects.remove(ob, do_unlink=True)
    orphans = [d for d in datas if d.users == 0]
    if orphans:
        bpy.data.batch_remove(orphans)


# --------------------------------------------------------------------------- materials
def _math(nodes, links, op, a, b=None, c=None, loc=(0, 0)):
    n = nodes.new("ShaderNodeMath")
    n.operation = op
    n.location = loc
    for k, v in enumerate((a, b, c)):
        if v is None:
            continue
        if isinstance(v, (int, float)):
            n.inputs[k].default_value = v
        else:
            links.new(v, n.inputs[k])
    return n.outputs[0]


def ensure_material(ms: MaterialSpec) -> bpy.types.Material:
    """Create or refresh the node material described by ``ms``."""
    mat = bpy.data.materials.get(ms.name) or _tag(bpy.data.materials.new(ms.name))
    mat.diffuse_color = tuple(ms.color[:4]) if len(ms.color) == 4 else tuple(ms.color) + (1.0,)
    mat.roughness = 0.7
    mat.metallic = 0.0
    if bpy.app.version < (5, 0, 0) and not mat.use_nodes:  # always on from 5.0
        mat.use_nodes = True
    nt = mat.node_tree
    nt.nodes.clear()
    N, L = nt.nodes, nt.links
    out = N.new("ShaderNodeOutputMaterial")
    out.location = (900, 0)
    if ms.kind == "text":
        em = N.new("ShaderNodeEmission")
        em.inputs["Color"].default_value = tuple(ms.color[:3]) + (1.0,)
        em.inputs["Strength"].default_value = 1.0
        L.new(em.outputs[0], out.inputs["Surface"])
        return mat
    bsdf = N.new("ShaderNodeBsdfPrincipled")
    bsdf.location = (600, 0)
    bsdf.inputs["Roughness"].default_value = 0.65
    L.new(bsdf.outputs[0], out.inputs["Surface"])
    if ms.from_attribute:
        attr = N.new("ShaderNodeAttribute")
        attr.attribute_type = "INSTANCER"
        attr.attribute_name = "tv_color"
        attr.location = (-200, 200)
        color = attr.outputs["Color"]
    else:
        rgb = N.new("ShaderNodeRGB")
        rgb.outputs[0].default_value = tuple(ms.color[:3]) + (1.0,)
        color = rgb.outputs[0]
    if ms.cushion:
        # cushion profile (TraceDiff IV-B after van Wijk & van de Wetering): on the box's local
        # coordinate u ∈ [-1/2, 1/2]^3, p(u) = 1 - 4u² per axis (0 at the edges, 1 in the middle);
        # on a face one axis is at ±1/2 (p = 0), so c = (p(ux)+p(uy)+p(uz))/2 is the 2D cushion
        # of that face; shade = a + (1 - a)·c with ambient a.
        # TraceDiff calls its profile "convex"; as a function of u a profile that is bright in
        # the middle and dark at the borders is concave (a cap, -4u² + 1) — we use that, which
        # is what the paper's figures and van Wijk's cushions show.  Thin boxes (a few pixels)
        # get a dark-edged look that separates neighbours, the purpose of the cushion.
        loc = N.new("ShaderNodeAttribute")
        loc.attribute_type = "GEOMETRY"
        loc.attribute_name = "tv_local"
        loc.location = (-800, -200)
        sep = N.new("ShaderNodeSeparateXYZ")
        sep.location = (-600, -200)
        L.new(loc.outputs["Vector"], sep.inputs[0])
        ps = []
        for k in range(3):
            sq = _math(N, L, "MULTIPLY", sep.outputs[k], sep.outputs[k], loc=(-400, -150 * k))
            ps.append(_math(N, L, "MULTIPLY_ADD", sq, -4.0, 1.0, loc=(-250, -150 * k)))
        s01 = _math(N, L, "ADD", ps[0], ps[1], loc=(-100, -100))
        s = _math(N, L, "ADD", s01, ps[2], loc=(0, -100))
        shade = _math(N, L, "MULTIPLY_ADD", s, 0.5 * (1 - CUSHION_AMBIENT), CUSHION_AMBIENT, loc=(150, -100))
        mix = N.new("ShaderNodeMix")
        mix.data_type = "RGBA"
        mix.blend_type = "MULTIPLY"
        mix.location = (350, 100)
        mix.inputs["Factor"].default_value = 1.0
        L.new(color, mix.inputs["A"])
        comb = N.new("ShaderNodeCombineXYZ")
        comb.location = (250, -100)
        for k in range(3):
            L.new(shade, comb.inputs[k])
        L.new(comb.outputs[0], mix.inputs["B"])
        color = mix.outputs["Result"]
    L.new(color, bsdf.inputs["Base Color"])
    return mat


# --------------------------------------------------------------------- geometry nodes
def build_instancer_group(name: str, materials: list) -> bpy.types.NodeTree:
    """GN group: unit cube (with ``tv_local``) instanced on points, one branch per material."""
    ng = bpy.data.node_groups.get(name)
    if ng is None:
        ng = _tag(bpy.data.node_groups.new(name, "GeometryNodeTree"))
        ng.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
        ng.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    N, L = ng.nodes, ng.links
    N.clear()
    gi = N.new("NodeGroupInput")
    go = N.new("NodeGroupOutput")
    go.location = (1200, 0)
    cube = N.new("GeometryNodeMeshCube")  # size 1, centred: local coords in [-1/2, 1/2]
    cube.location = (-600, 300)
    store = N.new("GeometryNodeStoreNamedAttribute")
    store.data_type = "FLOAT_VECTOR"
    store.domain = "POINT"
    store.inputs["Name"].default_value = "tv_local"
    store.location = (-400, 300)
    L.new(cube.outputs["Mesh"], store.inputs["Geometry"])
    L.new(N.new("GeometryNodeInputPosition").outputs[0], store.inputs["Value"])
    scale = N.new("GeometryNodeInputNamedAttribute")
    scale.data_type = "FLOAT_VECTOR"
    scale.inputs["Name"].default_value = "tv_scale"
    scale.location = (-400, -200)
    mat_idx = N.new("GeometryNodeInputNamedAttribute")
    mat_idx.data_type = "INT"
    mat_idx.inputs["Name"].default_value = "tv_mat"
    mat_idx.location = (-400, -400)
    join = N.new("GeometryNodeJoinGeometry")
    join.location = (1000, 0)
    for k, mname in enumerate(materials):
        setm = N.new("GeometryNodeSetMaterial")
        setm.inputs["Material"].default_value = bpy.data.materials[mname]
        setm.location = (-100, 300 - 200 * k)
        L.new(store.outputs[0], setm.inputs["Geometry"])
        cmp = N.new("FunctionNodeCompare")
        cmp.data_type = "INT"
        cmp.operation = "EQUAL"
        cmp.inputs["B"].default_value = k
        cmp.location = (100, -200 * k)
        L.new(mat_idx.outputs["Attribute"], cmp.inputs["A"])
        iop = N.new("GeometryNodeInstanceOnPoints")
        iop.location = (400, -200 * k)
        L.new(gi.outputs[0], iop.inputs["Points"])
        L.new(cmp.outputs[0], iop.inputs["Selection"])
        L.new(setm.outputs[0], iop.inputs["Instance"])
        L.new(scale.outputs["Attribute"], iop.inputs["Scale"])
        L.new(iop.outputs[0], join.inputs[0])
    L.new(join.outputs[0], go.inputs[0])
    return ng


# ------------------------------------------------------------------------ point clouds
_ATTR_TYPES = {np.dtype(np.int32): ("INT", "value"), np.dtype(np.float32): ("FLOAT", "value")}


def _can_convert_to_pointcloud() -> bool:
    try:
        items = bpy.ops.object.convert.get_rna_type().properties["target"].enum_items
        return "POINTCLOUD" in items.keys()
    except Exception:  # pragma: no cover - defensive
        return False


def is_layer_object(ob) -> bool:
    """A TraceVis3D instance layer: a point cloud, or (Blender < 4.5) a mesh of points."""
    return ob.type in ("POINTCLOUD", "MESH") and "tv3d_layer" in ob


def _new_pointcloud_object(name: str, n: int, coll) -> bpy.types.Object:
    if hasattr(bpy.types.PointCloud, "resize"):  # Blender 5.1+
        pc = bpy.data.pointclouds.new(name)
        pc.resize(n)
        ob = bpy.data.objects.new(name, pc)
        coll.objects.link(ob)
        return ob
    me = bpy.data.meshes.new(name)
    me.vertices.add(n)
    ob = bpy.data.objects.new(name, me)
    coll.objects.link(ob)
    if not _can_convert_to_pointcloud():
        # Blender 4.2-4.4: no POINTCLOUD conversion target.  The mesh's vertices are the
        # points: same POINT-domain attributes, and Instance on Points accepts meshes.
        return ob
    view_layer = bpy.context.view_layer
    if coll.name not in [c.name for c in _layer_collections(view_layer)]:
        raise RuntimeError(f"collection {coll.name!r} is not in the active view layer")
    with bpy.context.temp_override(active_object=ob, object=ob, selected_objects=[ob],
                                   selected_editable_objects=[ob]):
        r = bpy.ops.object.convert(target="POINTCLOUD")
    if "FINISHED" not in r or ob.type != "POINTCLOUD":
        raise RuntimeError(f"could not create the point cloud {name!r} ({r})")
    if me.users == 0:
        bpy.data.meshes.remove(me)
    sel = ob.data.attributes.get(".select_vert") or ob.data.attributes.get(".selection")
    if sel is not None:
        ob.data.attributes.remove(sel)
    ob.data.name = name
    return ob


def _include_in_view_layer(coll, view_layer) -> None:
    """Un-exclude ``coll`` in the view layer (excluded collections cannot be converted/rendered)."""
    stack = [view_layer.layer_collection]
    while stack:
        lc = stack.pop()
        if lc.collection == coll:
            lc.exclude = False
            return
        stack.extend(lc.children)


def _layer_collections(view_layer):
    out = []
    stack = [view_layer.layer_collection]
    while stack:
        lc = stack.pop()
        out.append(lc.collection)
        stack.extend(lc.children)
    return out


def write_layer(layer: InstanceLayer, coll, object_name: str) -> bpy.types.Object:
    """One point cloud object with the layer's attributes and its instancer modifier."""
    n = len(layer)
    ob = _new_pointcloud_object(object_name, n, coll)
    _tag(ob)
    pc = _tag(ob.data)
    A = pc.attributes
    A["position"].data.foreach_set("vector", np.ascontiguousarray(layer.positions, np.float32).ravel())
    a = A.new("tv_scale", "FLOAT_VECTOR", "POINT")
    a.data.foreach_set("vector", np.ascontiguousarray(layer.scales, np.float32).ravel())
    a = A.new("tv_color", "FLOAT_COLOR", "POINT")
    a.data.foreach_set("color", np.ascontiguousarray(layer.colors, np.float32).ravel())
    a = A.new("tv_mat", "INT", "POINT")
    a.data.foreach_set("value", np.ascontiguousarray(layer.material_index, np.int32))
    for key, arr in layer.attributes.items():
        typ, prop = _ATTR_TYPES[arr.dtype]
        a = A.new(key, typ, "POINT")
        a.data.foreach_set(prop, np.ascontiguousarray(arr))
    for mname in layer.materials:
        pc.materials.append(bpy.data.materials[mname])
    ng = build_instancer_group(f"TV3D_instancer_{layer.name}", layer.materials)
    mod = ob.modifiers.new("TraceVis3D instancer", "NODES")
    mod.node_group = ng
    ob["tv3d_layer"] = layer.name
    return ob


# ------------------------------------------------------------------------------ labels
def _attach_to_camera(ob, cam_ob) -> None:
    """Make ``ob`` a heads-up display item: its coordinates are camera-local."""
    ob.parent = cam_ob
    ob.matrix_parent_inverse.identity()


def _no_shadow(ob) -> None:
    """Labels and heads-up items never cast shadows on the boxes (EEVEE, Cycles)."""
    if hasattr(ob, "visible_shadow"):
        ob.visible_shadow = False


def write_labels(spec: SceneSpec, coll, prefix="TV3D_label", camera_object=None) -> list:
    lab = spec.labels
    objs = []
    align = {0: "LEFT", 1: "CENTER", 2: "RIGHT"}
    for i, text in enumerate(lab.texts):  # one Blender object per label (at most a few hundred)
        cu = _tag(bpy.data.curves.new(f"{prefix}_{i}", "FONT"))
        cu.body = text
        cu.size = float(lab.sizes[i])
        cu.align_x = align[int(lab.align[i])]
        cu.align_y = "BOTTOM_BASELINE"
        cu.materials.append(bpy.data.materials[lab.material[i]])
        ob = _tag(bpy.data.objects.new(f"{prefix}_{i}", cu))
        ob.location = tuple(float(x) for x in lab.anchors[i])
        ob.rotation_euler = tuple(float(x) for x in lab.rotation[i])
        ob["tv3d_kind"] = lab.kind[i]
        ob["call_index"] = int(lab.call_index[i])
        _no_shadow(ob)
        coll.objects.link(ob)
        if lab.space[i] == "camera" and camera_object is not None:
            _attach_to_camera(ob, camera_object)
        objs.append(ob)
    return objs


# ------------------------------------------------------------------ camera and lights
def _look_rotation(direction):
    return Vector(direction).to_track_quat("-Z", "Y").to_euler()


def write_camera(spec: SceneSpec, coll, name="TV3D_camera", scene=None) -> bpy.types.Object:
    scene = scene or bpy.context.scene
    c = spec.camera
    cam = _tag(bpy.data.cameras.new(name))
    cam.type = "ORTHO" if c.orthographic else "PERSP"
    cam.lens = c.lens_mm
    cam.sensor_width = c.sensor_width_mm
    cam.sensor_fit = "AUTO"
    cam.ortho_scale = c.ortho_scale
    cam.clip_start = c.clip_start
    cam.clip_end = c.clip_end
    cam.shift_x = float(getattr(c, "shift_x", 0.0))
    cam.shift_y = float(getattr(c, "shift_y", 0.0))
    ob = _tag(bpy.data.objects.new(name, cam))
    ob.location = c.location
    ob.rotation_euler = _look_rotation(Vector(c.target) - Vector(c.location))
    coll.objects.link(ob)
    scene.camera = ob
    return ob


def write_lights(spec: SceneSpec, coll) -> list:
    objs = []
    for ls in spec.lights:
        li = _tag(bpy.data.lights.new(ls.name, ls.type))
        li.energy = ls.energy
        if ls.type == "SUN":
            li.angle = math.radians(8.0)
        ob = _tag(bpy.data.objects.new(ls.name, li))
        ob.rotation_euler = _look_rotation(ls.direction)
        ob.location = ls.location
        coll.objects.link(ob)
        objs.append(ob)
    return objs


def setup_world_and_display(spec: SceneSpec, scene=None) -> None:
    scene = scene or bpy.context.scene
    world = scene.world or bpy.data.worlds.get("TV3D_world") or _tag(bpy.data.worlds.new("TV3D_world"))
    scene.world = world
    bg = tuple(spec.background[:3])
    world.color = bg
    if bpy.app.version < (5, 0, 0) and not world.use_nodes:
        world.use_nodes = True
    nt = world.node_tree
    if nt is not None:
        # camera rays see the background colour at full strength (a clean figure background);
        # everything else is lit by a dimmer copy of it (soft ambient fill, no washed-out boxes)
        nt.nodes.clear()
        N, L = nt.nodes, nt.links
        lit = N.new("ShaderNodeBackground")
        lit.inputs["Color"].default_value = bg + (1.0,)
        lit.inputs["Strength"].default_value = 0.6
        seen = N.new("ShaderNodeBackground")
        seen.inputs["Color"].default_value = bg + (1.0,)
        seen.inputs["Strength"].default_value = 1.0
        path = N.new("ShaderNodeLightPath")
        mix = N.new("ShaderNodeMixShader")
        L.new(path.outputs["Is Camera Ray"], mix.inputs[0])
        L.new(lit.outputs[0], mix.inputs[1])
        L.new(seen.outputs[0], mix.inputs[2])
        out = N.new("ShaderNodeOutputWorld")
        L.new(mix.outputs[0], out.inputs["Surface"])
    scene.view_settings.view_transform = "Standard"
    scene.view_settings.look = "None"
    sh = scene.display.shading
    sh.light = "STUDIO"
    sh.studio_light = "paint.sl"  # the brightest built-in studio set: colours stay close to the palette
    sh.color_type = "MATERIAL"
    sh.show_specular_highlight = False
    sh.show_object_outline = False
    sh.show_cavity = False
    scene.display.render_aa = "8"
    w, h = spec.resolution
    scene.render.resolution_x = int(w)
    scene.render.resolution_y = int(h)
    scene.render.resolution_percentage = 100


def write_scene_spec(spec: SceneSpec, collection_name: str = "TraceVis3D", progress=None,
                     scene=None) -> dict:
    """Replace the collection's content with ``spec``; returns names and timings."""
    scene = scene or bpy.context.scene
    spec.validate()
    report = progress or (lambda f, t: None)
    tm = {}
    t = time.perf_counter()
    ob = bpy.context.view_layer.objects.active if bpy.context.view_layer else None
    if ob is not None and ob.mode != "OBJECT":  # converting needs object mode (one op, not a loop)
        with bpy.context.temp_override(active_object=ob, object=ob):
            bpy.ops.object.mode_set(mode="OBJECT")
    coll = ensure_collection(collection_name, scene)
    _include_in_view_layer(coll, bpy.context.view_layer)
    clear_collection(coll)
    tm["clear"] = time.perf_counter() - t
    t = time.perf_counter()
    used = {m for lay in spec.layers for m in lay.materials} | set(spec.labels.material)
    for name in sorted(used):
        ensure_material(spec.materials[name])
    tm["materials"] = time.perf_counter() - t
    objects = {"layers": {}, "labels": [], "camera": None, "lights": []}
    t = time.perf_counter()
    cam_ob = write_camera(spec, coll, scene=scene)
    objects["camera"] = cam_ob.name
    objects["lights"] = [o.name for o in write_lights(spec, coll)]
    tm["camera_lights"] = time.perf_counter() - t
    for k, layer in enumerate(spec.layers):
        if len(layer) == 0:  # nothing to instance (e.g. no clusters)
            continue
        report(0.1 + 0.6 * k / max(len(spec.layers), 1), f"writing {layer.name} ({len(layer)} boxes)")
        t = time.perf_counter()
        ob = write_layer(layer, coll, f"TV3D_{layer.name}")
        if layer.space == "camera":
            _attach_to_camera(ob, cam_ob)
            _no_shadow(ob)
            ob["tv3d_space"] = "camera"
        objects["layers"][layer.name] = ob.name
        tm[f"layer_{layer.name}"] = time.perf_counter() - t
    report(0.75, f"writing {len(spec.labels)} labels")
    t = time.perf_counter()
    objects["labels"] = [o.name for o in write_labels(spec, coll, camera_object=cam_ob)]
    tm["labels"] = time.perf_counter() - t
    t = time.perf_counter()
    setup_world_and_display(spec, scene)
    tm["world"] = time.perf_counter() - t
    report(1.0, "scene written")
    return {"collection": coll.name, "objects": objects, "timings": tm}
