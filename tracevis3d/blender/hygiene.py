"""Scene hygiene: what a figure's scene must not hold, and what a saved scene must keep.

1. `remove_startup_defaults(scene)`.  Blender's startup file puts a Cube, a Light and a
   Camera into every new scene; a figure built into a fresh file must not show them (the
   Cube sits at the origin, over the first lane's name).  Only objects that are still
   exactly Blender's factory defaults are removed: same name, type and data name, the
   factory transform, data settings and geometry (within `TOL`), one user, no parent,
   children, modifiers, constraints, animation, custom properties or vertex groups, in the
   startup "Collection" of this scene only; the Cube with the startup "Material" (a cube the
   user adds has none).  Anything edited, renamed, moved, hidden or made by the user stays.
   The operators (Import, Build) and the CLI both call it.
2. Where the trace is.  `build_icicle` records ``scene["tracevis3d_build"]`` = JSON
   {trace_path, trace_path_rel, params}: the absolute path of the trace and, once the
   scene is saved (`remember_blend_location`, called by the CLI before ``--save`` and by the
   extension's ``save_pre`` handler), the same path relative to the .blend ("//…", so a
   moved folder still finds its trace).  `find_trace` picks the candidate that exists.
   This module needs only ``bpy`` (no numba, no layout): the extension's ``load_post``
   handler uses it on every file it opens.
"""
from __future__ import annotations

import json
import math
import os

import bpy

BUILD_KEY = "tracevis3d_build"
TOL = 1e-4  # absolute tolerance on factory values (they are stored as float32)

# Blender's factory startup scene (identical from 2.80 to 5.x): object -> data type, location,
# rotation (XYZ Euler, radians)
_STARTUP_OBJECTS = {
    "Cube": ("MESH", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
    "Light": ("LIGHT", (4.076245307922363, 1.0054539442062378, 5.903861999511719),
              (0.6503279805183411, 0.055217113345861435, 1.8663908243179321)),
    "Camera": ("CAMERA", (7.358891487121582, -6.925790786743164, 4.958309173583984),
               (1.1093189716339111, 0.0, 0.8149281740188599)),
}
_STARTUP_COLLECTION = "Collection"
_FACTORY_GREY = (0.8, 0.8, 0.8, 1.0)  # the startup "Material"'s colour
_CUBE_ATTRIBUTES = {"position", "sharp_face", "UVMap"}  # besides Blender's internal ".…" ones


def _close(values, expect, tol: float = TOL) -> bool:
    values = tuple(float(v) for v in values)
    return len(values) == len(expect) and all(math.isclose(v, e, abs_tol=tol) for v, e in zip(values, expect))


def _plain_object(ob, scene) -> bool:
    """No user edits on the object itself (transform checked separately)."""
    anim = ob.animation_data
    return (ob.library is None and getattr(ob, "override_library", None) is None
            and ob.parent is None and not ob.children and not ob.modifiers and not ob.constraints
            and (anim is None or (anim.action is None and not anim.drivers and not anim.nla_tracks))
            and not ob.keys() and not ob.vertex_groups and all(sl.link == "DATA" for sl in ob.material_slots)
            and not ob.hide_render and not ob.hide_viewport and not ob.hide_get()
            and ob.rotation_mode == "XYZ"
            and _close(ob.scale, (1.0, 1.0, 1.0)) and _close(ob.delta_location, (0.0, 0.0, 0.0))
            and _close(ob.delta_rotation_euler, (0.0, 0.0, 0.0)) and _close(ob.delta_scale, (1.0, 1.0, 1.0))
            and [c.name for c in ob.users_collection] == [_STARTUP_COLLECTION]
            and list(ob.users_scene) == [scene]
            and ob.data is not None and ob.data.users == 1 and ob.data.library is None and not ob.data.keys())


def _factory_material(mat) -> bool:
    if mat.name != "Material" or mat.library is not None or mat.keys() or mat.users != 1:
        return False
    if not _close(mat.diffuse_color, _FACTORY_GREY):
        return False
    nt = mat.node_tree
    if nt is None:
        return True
    if sorted(n.type for n in nt.nodes) != ["BSDF_PRINCIPLED", "OUTPUT_MATERIAL"]:
        return False
    bsdf = next(n for n in nt.nodes if n.type == "BSDF_PRINCIPLED")
    base = bsdf.inputs["Base Color"]
    return not base.links and _close(base.default_value, _FACTORY_GREY)


def _factory_cube(me) -> bool:
    if (me.name != "Cube" or len(me.vertices) != 8 or len(me.edges) != 12 or len(me.polygons) != 6
            or me.shape_keys is not None):
        return False
    if {a.name for a in me.attributes if not a.name.startswith(".")} - _CUBE_ATTRIBUTES:
        return False
    co = [0.0] * 24
    me.vertices.foreach_get("co", co)
    verts = [co[k:k + 3] for k in range(0, 24, 3)]
    if not all(math.isclose(abs(c), 1.0, abs_tol=TOL) for v in verts for c in v):
        return False
    if len({tuple(c > 0 for c in v) for v in verts}) != 8:  # the 8 corners of [-1, 1]^3
        return False
    # the startup Cube carries the startup "Material"; Add > Mesh > Cube makes one without
    return len(me.materials) == 1 and me.materials[0] is not None and _factory_material(me.materials[0])


def _factory_light(li) -> bool:
    return (li.name == "Light" and li.type == "POINT" and math.isclose(li.energy, 1000.0, abs_tol=1e-3)
            and _close(li.color, (1.0, 1.0, 1.0)) and math.isclose(li.shadow_soft_size, 0.1, abs_tol=TOL)
            and not getattr(li, "use_nodes", False))


def _factory_camera(cam) -> bool:
    return (cam.name == "Camera" and cam.type == "PERSP" and math.isclose(cam.lens, 50.0, abs_tol=TOL)
            and math.isclose(cam.sensor_width, 36.0, abs_tol=TOL) and cam.sensor_fit == "AUTO"
            and math.isclose(cam.clip_start, 0.1, abs_tol=TOL) and math.isclose(cam.clip_end, 100.0, abs_tol=1e-3)
            and _close((cam.shift_x, cam.shift_y), (0.0, 0.0)) and not cam.dof.use_dof)


_DATA_CHECKS = {"MESH": _factory_cube, "LIGHT": _factory_light, "CAMERA": _factory_camera}


def is_startup_default(ob, scene=None) -> bool:
    """Is ``ob`` one of Blender's startup Cube, Light, Camera, untouched, in ``scene``?"""
    scene = scene or bpy.context.scene
    spec = _STARTUP_OBJECTS.get(ob.name)
    if spec is None:
        return False
    typ, loc, rot = spec
    try:
        return (ob.type == typ and ob.data is not None and ob.data.name == ob.name
                and _plain_object(ob, scene) and _close(ob.location, loc) and _close(ob.rotation_euler, rot)
                and _DATA_CHECKS[typ](ob.data))
    except (AttributeError, KeyError, TypeError, ReferenceError, RuntimeError):  # an unexpected shape: not a default
        return False


def remove_startup_defaults(scene=None) -> list[str]:
    """Remove the untouched startup Cube, Light and Camera from ``scene``; their names.

    Their data blocks (and the startup "Material") go too when nothing else uses them.
    """
    scene = scene or bpy.context.scene
    obs = [ob for name in _STARTUP_OBJECTS if (ob := scene.objects.get(name)) is not None
           and is_startup_default(ob, scene)]
    if not obs:
        return []
    names = [ob.name for ob in obs]
    datas = [ob.data for ob in obs]
    mats = [m for d in datas if isinstance(d, bpy.types.Mesh) for m in d.materials if m is not None]
    bpy.data.batch_remove(obs)
    orphans = [d for d in datas if d.users == 0]
    if orphans:
        bpy.data.batch_remove(orphans)
    mats = [m for m in mats if m.users == 0 and not m.use_fake_user]
    if mats:
        bpy.data.batch_remove(mats)
    return names


# ------------------------------------------------------------------ where the trace is
def read_build_record(scene=None) -> dict | None:
    """``scene["tracevis3d_build"]`` as a dict ({trace_path, trace_path_rel, params}), or None
    (absent or unreadable)."""
    scene = scene or bpy.context.scene
    raw = scene.get(BUILD_KEY)
    if not raw:
        return None
    try:
        rec = json.loads(raw)
    except (TypeError, ValueError):
        return None
    return rec if isinstance(rec, dict) else None


def write_build_record(scene, record: dict) -> None:
    scene[BUILD_KEY] = json.dumps(record)


def relative_to_blend(path, blend_path) -> str | None:
    """``path`` as a Blender relative path ("//…") from the folder of ``blend_path``; None when
    there is no .blend path or no relative path (another drive on Windows)."""
    if not path or not blend_path:
        return None
    try:
        rel = os.path.relpath(os.path.abspath(path), os.path.dirname(os.path.abspath(blend_path)))
    except ValueError:
        return None
    return "//" + rel.replace(os.sep, "/")


def from_blend_relative(rel, blend_path) -> str | None:
    """The absolute path of a "//…" path next to ``blend_path`` (None when not resolvable)."""
    if not rel or not blend_path or not str(rel).startswith("//"):
        return None
    return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(blend_path)),
                                         str(rel)[2:].replace("/", os.sep)))


def remember_blend_location(scene, blend_path) -> None:
    """Before saving to ``blend_path``: record the trace path relative to it as well."""
    rec = read_build_record(scene)
    if rec is None or not rec.get("trace_path"):
        return
    rec["trace_path_rel"] = relative_to_blend(rec["trace_path"], blend_path)
    write_build_record(scene, rec)


def find_trace(candidates) -> str | None:
    """The first candidate path that is an existing file (absolute), or None."""
    for p in candidates:
        if p and os.path.isfile(p):
            return os.path.abspath(p)
    return None


def recorded_trace_path(scene=None, blend_path=None) -> tuple[str | None, str | None]:
    """(existing trace file or None, recorded absolute path or None) of the build record: the
    absolute path while it exists, else the path relative to ``blend_path`` (default: the
    open .blend)."""
    scene = scene or bpy.context.scene
    rec = read_build_record(scene) or {}
    blend_path = bpy.data.filepath if blend_path is None else blend_path
    recorded = rec.get("trace_path") or None
    found = find_trace([recorded, from_blend_relative(rec.get("trace_path_rel"), blend_path)])
    return found, recorded
