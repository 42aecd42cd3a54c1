"""Write a SceneSpec into Blender data (the only layer besides its siblings importing bpy).

- one point cloud object per `InstanceLayer`, attributes written with
  ``attributes[name].data.foreach_set`` from exact float32/int32 arrays;
- a Geometry Nodes group per layer, built from Python: a unit cube carrying its local
  coordinate (``tv_local``) is instanced on the points, scaled by ``tv_scale``; one
  copy of the cube per material (a Set Material each, gathered by Geometry to Instance)
  and one Instance-on-Points picking copy ``tv_mat`` for each point, so that every instance
  carries a real material (Workbench "Material" colour mode shows each material's viewport
  colour — Workbench does not read instance attributes, checked in Blender 5.0);
  point attributes (``tv_color``, ``call_index``, ...) propagate to the instances;
- node materials read ``tv_color`` (Attribute node, type INSTANCER) and apply the cushion
  profile from ``tv_local`` (type GEOMETRY) — EEVEE and Cycles;
- text labels as FONT objects, camera, lights, world.
No bpy.ops except one object conversion per layer in Blender 5.0 (mesh → point cloud;
5.0's Python API cannot size a point cloud, 5.1+ has ``PointCloud.resize``).

Over 600 lines: the one generic writer of every SceneSpec layer kind (materials, instancers,
point clouds, labels, camera, lights, the staged scene swap); splitting it would split the
staging it shares.
"""
from __future__ import annotations

import math
import time

import bpy
import numpy as np
from mathutils import Vector

from ..jobs import time_sliced
from ..layout.spec import (HALO_KEY, CurveLayer, ImageLayer, InstanceLayer, MaterialSpec, SceneSpec, SectorLayer,
                           TubeLayer)
from .compat import can_convert_to_pointcloud, is_points_object, make_points_data, use_nodes
from .meshobj import TAG, tag_datablock, link_layer_mesh  # noqa: F401 (link_layer_mesh: callers of the writer)

CUSHION_AMBIENT = 0.5


def ensure_collection(name: str, scene=None) -> bpy.types.Collection:
    scene = scene or bpy.context.scene
    coll = bpy.data.collections.get(name)
    if coll is None:
        coll = tag_datablock(bpy.data.collections.new(name))
    if coll.name not in scene.collection.children:
        scene.collection.children.link(coll)
    return coll


def clear_collection(coll: bpy.types.Collection) -> None:
    """Remove the collection's objects and the data blocks we created for them."""
    datas = {ob.data for ob in coll.objects if ob.data is not None and ob.data.get(TAG)}
    objs = list(coll.objects)
    if objs:
        bpy.data.batch_remove(objs)
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


def _node_shape(ms: MaterialSpec) -> tuple:
    """What `ensure_material`'s node tree depends on apart from the colour: two materials
    of the same shape differ only in the colour values `_set_colour` writes."""
    return (ms.kind, bool(ms.cushion), bool(ms.from_attribute), float(ms.gloss), bool(ms.blended))


def _set_colour(mat, ms: MaterialSpec) -> None:
    """The colour of ``ms`` into a material `ensure_material` built for another material
    of the same `_node_shape`: the values it writes from ``ms.color``, nothing else."""
    mat.diffuse_color = tuple(ms.color[:4]) if len(ms.color) == 4 else tuple(ms.color) + (1.0,)
    node = {n.bl_idname: n for n in mat.node_tree.nodes}  # one node of each type is coloured
    rgb = tuple(ms.color[:3]) + (1.0,)
    if ms.kind == "text":
        node["ShaderNodeEmission"].inputs["Color"].default_value = rgb
    elif ms.kind == "tube":
        if not ms.from_attribute:
            bsdf = node["ShaderNodeBsdfPrincipled"]
            bsdf.inputs["Base Color"].default_value = rgb
            bsdf.inputs["Alpha"].default_value = float(ms.color[3]) if len(ms.color) == 4 else 1.0
    elif not ms.from_attribute:
        node["ShaderNodeRGB"].outputs[0].default_value = rgb


def ensure_material(ms: MaterialSpec, templates: dict | None = None) -> bpy.types.Material:
    """Create or refresh the node material described by ``ms``.

    ``templates``: `_node_shape` → a material this function made earlier in the same
    build (filled here): a new material of a shape already made is a copy of that one with
    its own colour (`_set_colour`; Blender copies the node tree in one call, where building
    it node by node takes ~2 ms for a cushion material), the same node tree as built."""
    mat = bpy.data.materials.get(ms.name)
    if mat is None and templates is not None:
        src = templates.get(_node_shape(ms))
        if src is not None and _alive(src):
            mat = src.copy()
            mat.name = ms.name
            _set_colour(mat, ms)
            return mat
    mat = _build_material_nodes(mat or tag_datablock(bpy.data.materials.new(ms.name)), ms)
    if templates is not None:
        templates.setdefault(_node_shape(ms), mat)
    return mat


def _build_material_nodes(mat, ms: MaterialSpec) -> bpy.types.Material:
    """``mat``'s node tree built anew as ``ms`` describes it (`ensure_material`)."""
    mat.diffuse_color = tuple(ms.color[:4]) if len(ms.color) == 4 else tuple(ms.color) + (1.0,)
    mat.roughness = 0.7
    mat.metallic = 0.0
    use_nodes(mat)
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
    if ms.kind == "tube":
        # tubes (a mesh): colour and similarity-alpha from the face attribute; the tube's
        # round cross-section shades it under any engine's light
        if ms.from_attribute:
            attr = N.new("ShaderNodeAttribute")
            attr.attribute_type = "GEOMETRY"
            attr.attribute_name = "tv_color"
            attr.location = (200, 200)
            L.new(attr.outputs["Color"], bsdf.inputs["Base Color"])
            L.new(attr.outputs["Alpha"], bsdf.inputs["Alpha"])
        else:  # one material per colour (a comparison's bins): no colour per face needed
            bsdf.inputs["Base Color"].default_value = tuple(ms.color[:3]) + (1.0,)
            bsdf.inputs["Alpha"].default_value = float(ms.color[3]) if len(ms.color) == 4 else 1.0
        bsdf.inputs["Roughness"].default_value = 0.35 - 0.3 * ms.gloss
        if ms.gloss > 0 and "Specular IOR Level" in bsdf.inputs:  # similarity as highlight (IV-D)
            bsdf.inputs["Specular IOR Level"].default_value = 0.5 + 0.5 * ms.gloss
            bsdf.inputs["Coat Weight"].default_value = ms.gloss
        mat.roughness = 0.7 - 0.6 * ms.gloss
        if hasattr(mat, "surface_render_method"):  # Blender 4.2+: translucency without sorting artefacts
            mat.surface_render_method = "BLENDED" if ms.blended else "DITHERED"
        return mat
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
#: the name of the instancer group's Set Material node of material index k: this prefix and k
MATERIAL_NODE = "tv_material_"


def build_instancer_group(name: str, materials: list, fresh: bool = False) -> bpy.types.NodeTree:
    """GN group: unit cube (with ``tv_local``) instanced on points, one branch per material.

    ``fresh``: always a new group (named ``name.001`` while the old one exists), so a build
    in progress never changes what the current scene shows.
    """
    return drain(instancer_group_steps(name, materials, fresh))


def instancer_group_steps(name: str, materials: list, fresh: bool = False):
    """`build_instancer_group` in steps of about `STEP_BUDGET` s; yields the group being built
    at every pause, returns it.

    Branch k is the Set Material node named `MATERIAL_NODE` + k (material ``materials[k]``, on
    the cube) and the k-th geometry of one Geometry to Instance; one Instance on Points picks
    instance ``tv_mat`` for each point.  Every node, link or property set through Python makes
    Blender update the whole tree, so a group's build grows with the square of its nodes: two
    nodes, two links and a material a branch (80 materials ~0.07 s here; a Compare and an
    Instance on Points a branch as well, with their settings, took ~0.9 s)."""
    ng = None if fresh else bpy.data.node_groups.get(name)
    if ng is None:
        ng = tag_datablock(bpy.data.node_groups.new(name, "GeometryNodeTree"))
        ng.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
        ng.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    N, L = ng.nodes, ng.links
    N.clear()
    gi = N.new("NodeGroupInput")
    go = N.new("NodeGroupOutput")
    go.location = (1000, 0)
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
    # points of zero width are room (the live view's chunks) or hidden calls: not instanced
    sep = N.new("ShaderNodeSeparateXYZ")
    sep.location = (-400, -600)
    L.new(scale.outputs["Attribute"], sep.inputs[0])
    empty = N.new("FunctionNodeCompare")
    empty.data_type = "FLOAT"
    empty.operation = "LESS_EQUAL"
    empty.inputs["B"].default_value = 0.0
    empty.location = (-200, -600)
    L.new(sep.outputs["X"], empty.inputs["A"])
    drop = N.new("GeometryNodeDeleteGeometry")
    drop.domain = "POINT"
    drop.location = (0, -700)
    L.new(gi.outputs[0], drop.inputs["Geometry"])
    L.new(empty.outputs[0], drop.inputs["Selection"])
    gather = N.new("GeometryNodeGeometryToInstance")
    gather.location = (200, 300)
    iop = N.new("GeometryNodeInstanceOnPoints")
    iop.location = (400, 0)
    iop.inputs["Pick Instance"].default_value = True
    L.new(drop.outputs[0], iop.inputs["Points"])
    L.new(gather.outputs[0], iop.inputs["Instance"])
    L.new(mat_idx.outputs["Attribute"], iop.inputs["Instance Index"])
    L.new(scale.outputs["Attribute"], iop.inputs["Scale"])
    L.new(iop.outputs[0], go.inputs[0])
    # a multi-input socket lists (and evaluates) its links newest first: the branches are made
    # from the last to the first, so that branch k is the k-th instance Instance on Points picks
    t0 = time.perf_counter()
    for k in range(len(materials) - 1, -1, -1):
        if time.perf_counter() - t0 >= STEP_BUDGET:
            yield ng
            t0 = time.perf_counter()
        setm = N.new("GeometryNodeSetMaterial")
        setm.name = f"{MATERIAL_NODE}{k}"  # branch k's material, found by name (`zoom_write._retarget`)
        setm.inputs["Material"].default_value = bpy.data.materials[materials[k]]
        L.new(store.outputs[0], setm.inputs["Geometry"])
        L.new(setm.outputs[0], gather.inputs[0])
    _place_branches(N, len(materials))
    return ng


def _place_branches(nodes, n: int) -> None:
    """Stack the branches' Set Material nodes (the last ``n`` of ``nodes``, branch n-1 first) in
    a column, in one `foreach_set` (a node's ``location`` set one by one updates the tree each time)."""
    if not n:
        return
    loc = np.empty(2 * len(nodes), np.float32)
    nodes.foreach_get("location", loc)
    k = np.arange(n - 1, -1, -1)
    loc[2 * (len(nodes) - n):] = np.column_stack([np.full(n, -100.0), 300.0 - 200.0 * k]).ravel()
    nodes.foreach_set("location", loc)


def instancer_branches(ng) -> list:
    """The Set Material node of each branch of the instancer group ``ng``, in the order Instance on
    Points picks them (branch k: instance index k), read through the group's links."""
    iop = next(n for n in ng.nodes if n.bl_idname == "GeometryNodeInstanceOnPoints")
    gather = iop.inputs["Instance"].links[0].from_node
    return [link.from_node for link in gather.inputs[0].links]


# ------------------------------------------------------------------------ point clouds
ATTR_TYPES = {np.dtype(np.int32): ("INT", "value"), np.dtype(np.float32): ("FLOAT", "value")}


def is_layer_object(ob) -> bool:
    """A TraceVis3D instance layer: a point cloud, or (Blender < 4.5) a mesh of points."""
    return is_points_object(ob) and "tv3d_layer" in ob and "tv3d_tubes" not in ob


def _new_pointcloud_object(name: str, n: int, coll) -> bpy.types.Object:
    me, is_pointcloud = make_points_data(name, n)
    ob = bpy.data.objects.new(name, me)
    coll.objects.link(ob)
    if is_pointcloud:  # Blender 5.1+
        return ob
    if not can_convert_to_pointcloud():
        # Blender 4.2-4.4: no POINTCLOUD conversion target.  The mesh's vertices are the
        # points: same POINT-domain attributes, and Instance on Points accepts meshes.
        return ob
    view_layer = bpy.context.view_layer
    if coll.name not in [c.name for c in _layer_collections(view_layer)]:
        raise RuntimeError(f"collection {coll.name!r} is not in the active view layer")
    r = _convert_alone(ob, view_layer)
    if "FINISHED" not in r or ob.type != "POINTCLOUD":
        raise RuntimeError(f"could not create the point cloud {name!r} ({r})")
    if me.users == 0:
        bpy.data.meshes.remove(me)
    sel = ob.data.attributes.get(".select_vert") or ob.data.attributes.get(".selection")
    if sel is not None:
        ob.data.attributes.remove(sel)
    ob.data.name = name
    return ob


def _convert_alone(ob, view_layer) -> set:
    """``bpy.ops.object.convert(target="POINTCLOUD")`` on ``ob`` alone: it is made the view
    layer's only selected and active object for the call, and the user's selection and active
    object are put back after it.

    Not through ``context.temp_override``: an operator called inside ``temp_override`` while
    any other Python thread runs (a job's worker, a script's, another add-on's) crashes bpy 5.0
    with a segmentation fault within seconds (seen: twice in CI, and in a loop of such calls
    beside a thread of plain Python), and a plain call does not (tests/test_writer_threads.py)."""
    objects = view_layer.objects
    active = objects.active
    selected = [o for o in objects.selected if o is not None]  # (None: a base removed, not yet synced)
    for other in selected:
        other.select_set(False)
    ob.select_set(True)
    objects.active = ob
    try:
        return bpy.ops.object.convert(target="POINTCLOUD")
    finally:
        ob.select_set(False)
        for other in selected:
            if other.name in objects:
                other.select_set(True)
        objects.active = active if active is not None and active.name in objects else None


def include_in_view_layer(coll, view_layer) -> None:
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
    return drain(write_layer_steps(layer, coll, object_name))


def drain(gen):
    """Run a step generator to its end in one go; its return value."""
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            return stop.value


def write_layer_steps(layer: InstanceLayer, coll, object_name: str, fresh_group: bool = False):
    """`write_layer` as steps: the object, then one attribute per step (each a few ms even at
    1M points), then the instancer group.  Yields (data block, its final name) for every
    data block as soon as it exists (to be removed if the build stops); returns the object."""
    n = len(layer)
    ob = tag_datablock(_new_pointcloud_object(object_name, n, coll))
    yield ob, object_name
    pc = tag_datablock(ob.data)
    A = pc.attributes
    A["position"].data.foreach_set("vector", np.ascontiguousarray(layer.positions, np.float32).ravel())
    yield ob, object_name
    for key, typ, prop, arr in (("tv_scale", "FLOAT_VECTOR", "vector", layer.scales),
                                ("tv_color", "FLOAT_COLOR", "color", layer.colors)):
        A.new(key, typ, "POINT").data.foreach_set(prop, np.ascontiguousarray(arr, np.float32).ravel())
        yield ob, object_name
    A.new("tv_mat", "INT", "POINT").data.foreach_set("value", np.ascontiguousarray(layer.material_index, np.int32))
    for key, arr in layer.attributes.items():
        typ, prop = ATTR_TYPES[arr.dtype]
        A.new(key, typ, "POINT").data.foreach_set(prop, np.ascontiguousarray(arr))
        yield ob, object_name
    for mname in layer.materials:
        pc.materials.append(bpy.data.materials[mname])
    group_name = f"TV3D_instancer_{layer.name}"
    steps = instancer_group_steps(group_name, layer.materials, fresh=fresh_group)
    while True:
        try:
            yield next(steps), group_name
        except StopIteration as stop:
            ng = stop.value
            break
    yield ng, group_name
    mod = ob.modifiers.new("TraceVis3D instancer", "NODES")
    mod.node_group = ng
    ob["tv3d_layer"] = layer.name
    return ob


# ------------------------------------------------------------------------------ labels
def attach_to_camera(ob, cam_ob) -> None:
    """Make ``ob`` a heads-up display item: its coordinates are camera-local."""
    ob.parent = cam_ob
    ob.matrix_parent_inverse.identity()


def no_shadow(ob) -> None:
    """Labels, heads-up items and translucent lines never cast shadows on the boxes (EEVEE, Cycles)."""
    if hasattr(ob, "visible_shadow"):
        ob.visible_shadow = False


_ALIGN = {0: "LEFT", 1: "CENTER", 2: "RIGHT"}


def write_label(spec: SceneSpec, i: int, coll, prefix="TV3D_label", camera_object=None) -> bpy.types.Object:
    """The FONT object of label ``i`` of ``spec.labels``."""
    lab = spec.labels
    cu = tag_datablock(bpy.data.curves.new(f"{prefix}_{i}", "FONT"))
    cu.body = lab.texts[i]
    cu.size = float(lab.sizes[i])
    halo = lab.attributes.get(HALO_KEY)
    if halo is not None and halo[i] > 0:  # a halo: the glyphs' outlines moved out
        cu.offset = float(halo[i]) * 1e-6 * float(lab.sizes[i])
    cu.align_x = _ALIGN[int(lab.align[i])]
    cu.align_y = "BOTTOM_BASELINE"
    cu.materials.append(bpy.data.materials[lab.material[i]])
    ob = tag_datablock(bpy.data.objects.new(f"{prefix}_{i}", cu))
    ob.location = tuple(float(x) for x in lab.anchors[i])
    ob.rotation_euler = tuple(float(x) for x in lab.rotation[i])
    ob["tv3d_kind"] = lab.kind[i]
    ob["call_index"] = int(lab.call_index[i])
    for key, arr in lab.attributes.items():
        ob[key] = int(arr[i])
    no_shadow(ob)
    coll.objects.link(ob)
    if lab.space[i] == "camera" and camera_object is not None:
        attach_to_camera(ob, camera_object)
    return ob


def write_labels(spec: SceneSpec, coll, prefix="TV3D_label", camera_object=None) -> list:
    """One Blender object per label (at most a few hundred)."""
    return [write_label(spec, i, coll, prefix, camera_object) for i in range(len(spec.labels.texts))]


# ------------------------------------------------------------------ camera and lights
def _look_rotation(direction):
    return Vector(direction).to_track_quat("-Z", "Y").to_euler()


def write_camera(spec: SceneSpec, coll, name="TV3D_camera", scene=None, set_active=True) -> bpy.types.Object:
    scene = scene or bpy.context.scene
    c = spec.camera
    cam = tag_datablock(bpy.data.cameras.new(name))
    cam.type = "ORTHO" if c.orthographic else "PERSP"
    cam.lens = c.lens_mm
    cam.sensor_width = c.sensor_width_mm
    cam.sensor_fit = "AUTO"
    cam.ortho_scale = c.ortho_scale
    cam.clip_start = c.clip_start
    cam.clip_end = c.clip_end
    cam.shift_x = float(getattr(c, "shift_x", 0.0))
    cam.shift_y = float(getattr(c, "shift_y", 0.0))
    ob = tag_datablock(bpy.data.objects.new(name, cam))
    ob.location = c.location
    ob.rotation_euler = _look_rotation(Vector(c.target) - Vector(c.location))
    coll.objects.link(ob)
    if set_active:
        scene.camera = ob
    return ob


def write_lights(spec: SceneSpec, coll) -> list:
    objs = []
    for ls in spec.lights:
        li = tag_datablock(bpy.data.lights.new(ls.name, ls.type))
        li.energy = ls.energy
        if ls.type == "SUN":
            li.angle = math.radians(8.0)
        ob = tag_datablock(bpy.data.objects.new(ls.name, li))
        ob.rotation_euler = _look_rotation(ls.direction)
        ob.location = ls.location
        coll.objects.link(ob)
        objs.append(ob)
    return objs


def setup_world_and_display(spec: SceneSpec, scene=None) -> None:
    scene = scene or bpy.context.scene
    world = scene.world or bpy.data.worlds.get("TV3D_world") or tag_datablock(bpy.data.worlds.new("TV3D_world"))
    scene.world = world
    bg = tuple(spec.background[:3])
    world.color = bg
    use_nodes(world)
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
    # an image layer shows its texture in Workbench; the other materials keep their colour
    sh.color_type = "TEXTURE" if any(isinstance(lay, ImageLayer) for lay in spec.layers) else "MATERIAL"
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
    return drain(write_scene_steps(spec, collection_name, progress=progress, scene=scene))


STEP_BUDGET = 0.02  # seconds of main-thread work per step for many small items (labels, materials)


def write_scene_steps(spec: SceneSpec, collection_name: str = "TraceVis3D", progress=None,
                      scene=None, on_cleanup=None, remove_startup: bool = False):
    """`write_scene_spec` as a generator of short main-thread steps (see `tracevis3d.jobs`).

    The new objects are written into a staging collection; the scene the user sees is only
    replaced in the last step (`_commit`).  Closing the generator early (a cancelled job)
    or an error removes everything created so far (``on_cleanup(fn)`` registers that with
    the job); the old scene, camera, world and properties stay untouched.
    ``remove_startup``: the commit also removes Blender's untouched startup Cube, Light and
    Camera (`hygiene.remove_startup_defaults`; the operators ask for it).  Returns
    {"collection", "objects", "timings"} like `write_scene_spec`.
    """
    scene = scene or bpy.context.scene
    spec.validate()
    report = progress or (lambda f, t: None)
    tm: dict = {}
    t = time.perf_counter()
    _object_mode()
    staging = _new_staging_collection(collection_name, scene)
    made = _Made(staging)
    done = False
    if on_cleanup is not None:
        on_cleanup(made.remove)
    try:
        used = sorted({m for lay in spec.layers for m in lay.materials} | set(spec.labels.material))
        report(0.05, f"writing {len(used)} materials")

        templates: dict = {}  # node shape → a material of this build (`ensure_material`)

        def material(name):
            new = name not in bpy.data.materials
            mat = ensure_material(spec.materials[name], templates)
            if new:
                made.add(mat, mat.name)

        yield from _sliced(used, material)
        tm["materials"] = time.perf_counter() - t
        t = time.perf_counter()
        cam_ob = made.add(write_camera(spec, staging, scene=scene, set_active=False), "TV3D_camera")
        lights = [made.add(o, o.name.split(".")[0]) for o in write_lights(spec, staging)]
        tm["camera_lights"] = time.perf_counter() - t
        yield
        layers = {}
        for k, layer in enumerate(spec.layers):
            if len(layer) == 0:  # nothing to instance (e.g. no clusters)
                continue
            report(0.1 + 0.6 * k / max(len(spec.layers), 1), f"writing {layer.name} ({len(layer):,} boxes)")
            t = time.perf_counter()
            if isinstance(layer, TubeLayer):
                from .tubes import write_tube_steps

                gen = write_tube_steps(layer, staging, f"TV3D_{layer.name}")
            elif isinstance(layer, ImageLayer):
                from .images import write_image_steps

                gen = write_image_steps(layer, staging, f"TV3D_{layer.name}")
            elif isinstance(layer, (SectorLayer, CurveLayer)):
                from .rings import write_mesh_layer_steps

                toward = spec.camera.location if layer.space == "world" and spec.camera is not None else None
                gen = write_mesh_layer_steps(layer, staging, f"TV3D_{layer.name}", toward)
            else:
                gen = write_layer_steps(layer, staging, f"TV3D_{layer.name}", fresh_group=True)
            ob = yield from _tracked(gen, made)
            if isinstance(layer, TubeLayer) and layer.materials and all(
                    getattr(spec.materials.get(m), "blended", False) for m in layer.materials):
                no_shadow(ob)  # translucent lines (flow arcs): their shadows were dark blotches on boxes (EEVEE)
            if layer.space == "camera":
                attach_to_camera(ob, cam_ob)
                no_shadow(ob)
                ob["tv3d_space"] = "camera"
            layers[layer.name] = ob
            tm[f"layer_{layer.name}"] = time.perf_counter() - t
            yield
        n_labels = len(spec.labels.texts)
        report(0.75, f"writing {n_labels:,} labels")
        t = time.perf_counter()
        labels = []

        def label(i):
            labels.append(made.add(write_label(spec, i, staging, camera_object=cam_ob), f"TV3D_label_{i}"))

        yield from _sliced(range(n_labels), label)
        tm["labels"] = time.perf_counter() - t
        report(0.95, "replacing the scene")
        t = time.perf_counter()
        coll = _commit(spec, collection_name, scene, staging, made, cam_ob, remove_startup)
        tm["commit"] = time.perf_counter() - t
        done = True
    finally:
        if not done:
            made.remove()
    report(1.0, "scene written")
    objects = {"layers": {k: ob.name for k, ob in layers.items()}, "labels": [o.name for o in labels],
               "camera": cam_ob.name, "lights": [o.name for o in lights]}
    return {"collection": coll.name, "objects": objects, "timings": tm}


def _sliced(items, fn):
    """``fn(item)`` for each item, a step boundary every `STEP_BUDGET` seconds
    (`jobs.time_sliced`)."""
    yield from time_sliced(items, fn, STEP_BUDGET)


def _tracked(gen, made):
    """Drive a step generator that yields (data block, final name); track each block."""
    while True:
        try:
            idb, name = next(gen)
        except StopIteration as stop:
            return stop.value
        made.add(idb, name)
        yield


def _object_mode() -> None:
    """Converting to a point cloud needs object mode (one operator call, not a loop)."""
    ob = bpy.context.view_layer.objects.active if bpy.context.view_layer else None
    if ob is not None and ob.mode != "OBJECT":  # the active object is the operator's object
        bpy.ops.object.mode_set(mode="OBJECT")


def _new_staging_collection(collection_name: str, scene):
    """A new collection in the scene and the view layer, for a build in progress."""
    coll = tag_datablock(bpy.data.collections.new(f"{collection_name} (building)"))
    scene.collection.children.link(coll)
    include_in_view_layer(coll, bpy.context.view_layer)
    return coll


class _Made:
    """What a build created (data blocks and their final names), to commit or remove."""

    def __init__(self, staging):
        self.staging = staging
        self.ids: dict = {}  # ID -> final name

    def add(self, idb, name: str):
        """Track ``idb`` (and an object's data) under its final ``name``."""
        if idb is None:
            return idb
        self.ids[idb] = name
        data = getattr(idb, "data", None) if isinstance(idb, bpy.types.Object) else None
        if data is not None:  # the data of an object we made is ours too
            self.ids[data] = name
        return idb

    def remove(self) -> None:
        """Remove everything tracked and the staging collection (a cancelled build)."""
        alive = [idb for idb in list(self.ids) + [self.staging] if _alive(idb)]
        self.ids.clear()
        objs = [i for i in alive if isinstance(i, bpy.types.Object)]
        if objs:
            bpy.data.batch_remove(objs)
        rest = [i for i in alive if not isinstance(i, bpy.types.Object) and _alive(i)]
        if rest:
            bpy.data.batch_remove(rest)


def _alive(idb) -> bool:
    try:
        idb.name  # noqa: B018  a removed ID raises ReferenceError
        return True
    except ReferenceError:
        return False


def _commit(spec: SceneSpec, collection_name: str, scene, staging, made: _Made, cam_ob,
            remove_startup: bool = False):
    """The one step that replaces the scene: old content out, new content in, renamed."""
    if remove_startup:
        from .hygiene import remove_startup_defaults

        remove_startup_defaults(scene)
    coll = ensure_collection(collection_name, scene)
    include_in_view_layer(coll, bpy.context.view_layer)
    clear_collection(coll)
    old_groups = [ng for ng in bpy.data.node_groups if ng.get(TAG) and ng.users == 0 and ng not in made.ids]
    if old_groups:
        bpy.data.batch_remove(old_groups)
    for ob in list(staging.objects):
        coll.objects.link(ob)
        staging.objects.unlink(ob)
    for idb, name in made.ids.items():
        if idb.name != name:
            idb.name = name
    made.ids.clear()
    bpy.data.collections.remove(staging)
    scene.camera = cam_ob
    setup_world_and_display(spec, scene)
    return coll
