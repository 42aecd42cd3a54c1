"""What differs between the Blender versions TraceVis3D runs on (4.2 LTS to 5.2), each difference
named once here so that the rest of `tracevis3d.blender` and the add-on never test a version:

- point clouds: 5.1+ makes one with ``PointCloud.resize``; 4.5-5.0 through the object
  conversion operator (`can_convert_to_pointcloud`); 4.2-4.4 have neither, and an instance layer
  is a mesh whose vertices are the points (`is_points_object`, `point_count`);
- node trees: materials and worlds need ``use_nodes`` switched on before 5.0 (`use_nodes`);
- Geometry Nodes modifier inputs: ID properties of the modifier up to 5.1
  (``mod["Socket_1"]``), an RNA struct each from 5.2 (``mod.properties.inputs.Socket_1.value``):
  `set_modifier_input`, `modifier_input_path` (for drivers and keyframes);
- node options: String to Curves' alignment is a property up to 5.1 (``align_x = "CENTER"``), a
  menu input from 5.2 (``inputs["Align X"] = "Center"``): `set_node_option`;
- render settings: EEVEE is ``BLENDER_EEVEE_NEXT`` in 4.2-4.4 (`engine_identifier`); an image
  format's ``media_type`` (image or video) exists from 5.0 (`set_media_type`);
- leaving the process: `release_at_exit`.  With the bpy module, Blender's own exit (``WM_exit``)
  runs when the ``bpy`` module object is freed (4.2-4.5) or from a C ``atexit`` (5.0+).  A
  function of ours still in ``bpy.app.handlers`` keeps its module's globals alive past Python's
  module clean-up (a module freed early leaves its dict unwiped), and with them ``bpy``: 4.2 then
  crashes in its static destructors (SIGSEGV at exit), 4.5 waits for ever on its GPU thread.
  Removing our handlers at Python's exit, before the module clean-up, lets ``bpy`` go.
"""
from __future__ import annotations

import atexit

import bpy

__all__ = ["can_convert_to_pointcloud", "engine_identifier", "is_points_object", "make_points_data",
           "modifier_input_path", "point_count", "release_at_exit", "set_media_type", "set_modifier_input",
           "set_node_option", "use_nodes"]

#: the package whose callables `release_at_exit` takes out of Blender's lists: the add-on's
#: package when the core runs inside it ("bl_ext.user_default.tracevis3d"), else the core's
OWN_PACKAGE = __name__.rsplit(".", 3)[0] if __name__.count(".") > 2 else __name__.split(".")[0]
_REGISTERED: list = []


def is_points_object(ob) -> bool:
    """An object whose data holds points: a point cloud, or (Blender 4.2-4.4) a mesh of points."""
    return ob.type in ("POINTCLOUD", "MESH")


def point_count(ob) -> int:
    """How many points a points object (`is_points_object`) has."""
    data = ob.data
    return len(data.vertices) if ob.type == "MESH" else len(data.points)


def positions_and_scales(ob, n: int) -> tuple:
    """(positions (n, 3), scales (n, 3)) float32 of the ``n`` points of an instance layer
    (its ``position`` and ``tv_scale`` attributes), read with foreach_get."""
    import numpy as np

    A = ob.data.attributes
    pos = np.empty(n * 3, np.float32)
    A["position"].data.foreach_get("vector", pos)
    sc = np.empty(n * 3, np.float32)
    A["tv_scale"].data.foreach_get("vector", sc)
    return pos.reshape(n, 3), sc.reshape(n, 3)


def make_points_data(name: str, n: int):
    """(data block, is_pointcloud): a point cloud of ``n`` points where Blender makes one
    directly (5.1+), else a mesh of ``n`` vertices (to convert, `can_convert_to_pointcloud`)."""
    if hasattr(bpy.types.PointCloud, "resize"):  # Blender 5.1+
        pc = bpy.data.pointclouds.new(name)
        pc.resize(n)
        return pc, True
    me = bpy.data.meshes.new(name)
    me.vertices.add(n)
    return me, False


def can_convert_to_pointcloud() -> bool:
    """Whether ``bpy.ops.object.convert`` turns a mesh into a point cloud (Blender 4.5+)."""
    try:
        items = bpy.ops.object.convert.get_rna_type().properties["target"].enum_items
        return "POINTCLOUD" in items.keys()
    except (KeyError, AttributeError, RuntimeError):
        return False


def use_nodes(idblock) -> None:
    """Switch on a material's or world's node tree (always on from Blender 5.0)."""
    if bpy.app.version < (5, 0, 0) and not idblock.use_nodes:
        idblock.use_nodes = True


def _inputs_are_structs() -> bool:
    return "properties" in bpy.types.NodesModifier.bl_rna.properties  # Blender 5.2+


def set_modifier_input(mod, identifier: str, value) -> None:
    """Set the input ``identifier`` (its group interface socket's identifier, "Socket_1") of the
    Geometry Nodes modifier ``mod`` to ``value`` (a number, an object)."""
    if _inputs_are_structs():
        getattr(mod.properties.inputs, identifier).value = value
    else:
        mod[identifier] = value


def remove_modifier(objects, name: str) -> None:
    """The modifier called ``name`` removed from each of ``objects`` that has one (objects
    without modifiers, such as cameras, are passed over)."""
    for ob in objects:
        mod = ob.modifiers.get(name) if hasattr(ob, "modifiers") else None
        if mod is not None:
            ob.modifiers.remove(mod)


def modifier_input_path(mod_name: str, identifier: str) -> str:
    """The data path, from its object, of input ``identifier`` of the modifier ``mod_name`` (a
    driver's or a keyframe's)."""
    base = f'modifiers["{mod_name}"]'
    return f"{base}.properties.inputs.{identifier}.value" if _inputs_are_structs() else f'{base}["{identifier}"]'


def set_node_option(node, option: str, value: str) -> None:
    """Set ``node``'s option ``option`` ("align_x") to the enum item ``value`` ("CENTER"): its
    property where it has one, else its menu input of that name ("Align X" = "Center")."""
    if hasattr(node, option):
        setattr(node, option, value)
    else:
        node.inputs[option.replace("_", " ").title()].default_value = value.replace("_", " ").title()


def engine_identifier(ident: str) -> str:
    """Blender's identifier of the render engine ``ident`` in this version (EEVEE is
    ``BLENDER_EEVEE_NEXT`` in 4.2-4.4)."""
    items = {e.identifier for e in bpy.types.RenderSettings.bl_rna.properties["engine"].enum_items}
    if ident == "BLENDER_EEVEE" and ident not in items and "BLENDER_EEVEE_NEXT" in items:
        return "BLENDER_EEVEE_NEXT"
    return ident


def set_media_type(image_settings, media: str) -> None:
    """An image format's ``media_type`` ("IMAGE", "VIDEO"), where it exists (Blender 5.0+)."""
    if hasattr(image_settings, "media_type"):
        image_settings.media_type = media


def _own(fn) -> bool:
    mod = getattr(fn, "__module__", None) or ""
    return mod == OWN_PACKAGE or mod.startswith(OWN_PACKAGE + ".")


def remove_own_handlers() -> list:
    """Take every function of ours out of ``bpy.app.handlers``; their names."""
    removed = []
    for hname in dir(bpy.app.handlers):
        lst = getattr(bpy.app.handlers, hname)
        if isinstance(lst, list):
            for fn in [f for f in lst if _own(f)]:
                lst.remove(fn)
                removed.append(f"{hname}: {getattr(fn, '__name__', fn)}")
    return removed


def release_at_exit() -> None:
    """Once a process: at Python's exit, before its modules are cleaned up, take our functions
    out of Blender's handler lists (module doc: without it bpy 4.2 crashes and 4.5 hangs at the
    exit of every process that built a figure).  Called by whatever adds a handler."""
    if not _REGISTERED:
        atexit.register(remove_own_handlers)
        _REGISTERED.append(True)
