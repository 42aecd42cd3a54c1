"""The writer's instancer group (`blender.writer.instancer_group_steps`), evaluated by Blender:
every point of width > 0 becomes one cube instance carrying the material its ``tv_mat`` names
(branch k: the layer's material k), scaled by ``tv_scale``; points of no width are left out (that
the point attributes reach the instances, EEVEE's colours: tests/blender/test_render.py).  Its build stays light: two nodes a material (a group's build time grows
with the square of its nodes)."""
import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
pytestmark = pytest.mark.blender

from tracevis3d.blender.writer import MATERIAL_NODE, build_instancer_group, instancer_branches  # noqa: E402

N_MATERIALS = 70  # a figure with many function colours


def _points_object(tv_mat, widths):
    """A mesh of points in a row (x = 10·i) with ``tv_mat``, ``tv_scale`` (x: ``widths``) and
    ``tv_color`` (red: i)."""
    n = len(tv_mat)
    me = bpy.data.meshes.new("points")
    me.vertices.add(n)
    me.vertices.foreach_set("co", np.column_stack([10.0 * np.arange(n), np.zeros(n), np.zeros(n)]).astype(
        np.float32).ravel())
    A = me.attributes
    A.new("tv_mat", "INT", "POINT").data.foreach_set("value", np.asarray(tv_mat, np.int32))
    scale = np.column_stack([widths, np.full(n, 2.0), np.full(n, 3.0)]).astype(np.float32)
    A.new("tv_scale", "FLOAT_VECTOR", "POINT").data.foreach_set("vector", scale.ravel())
    colour = np.column_stack([np.arange(n), np.zeros(n), np.zeros(n), np.ones(n)]).astype(np.float32)
    A.new("tv_color", "FLOAT_COLOR", "POINT").data.foreach_set("color", colour.ravel())
    ob = bpy.data.objects.new("points", me)
    bpy.context.scene.collection.objects.link(ob)
    return ob


@pytest.mark.timeout(300)
def test_every_point_is_a_cube_with_its_material_scale_and_attributes():
    bpy.ops.wm.read_factory_settings(use_empty=True)
    mats = [bpy.data.materials.new(f"colour {k}") for k in range(N_MATERIALS)]
    ng = build_instancer_group("TV3D_instancer_test", [m.name for m in mats])
    branches = instancer_branches(ng)
    assert [n.name for n in branches] == [f"{MATERIAL_NODE}{k}" for k in range(N_MATERIALS)]
    assert [n.inputs["Material"].default_value for n in branches] == mats
    assert len(ng.nodes) <= 2 * N_MATERIALS + 15  # two nodes a branch, not five

    rng = np.random.default_rng(1)
    tv_mat = np.concatenate([np.arange(N_MATERIALS), rng.integers(0, N_MATERIALS, 60)])
    widths = rng.uniform(0.5, 4.0, len(tv_mat))
    widths[[3, 17, 90]] = 0.0  # no width: not instanced
    ob = _points_object(tv_mat, widths)
    ob.modifiers.new("TraceVis3D instancer", "NODES").node_group = ng

    dg = bpy.context.evaluated_depsgraph_get()
    seen = {}
    for inst in dg.object_instances:
        if not inst.is_instance or inst.parent is None or inst.parent.original != ob:
            continue
        i = int(round(inst.matrix_world.translation.x / 10.0))
        mesh_mats = [m for m in inst.object.data.materials if m is not None]
        assert len(mesh_mats) == 1 and len(inst.object.data.polygons) == 6
        seen[i] = (mesh_mats[0].original, tuple(round(v, 4) for v in inst.matrix_world.to_scale()))
    kept = [i for i in range(len(tv_mat)) if widths[i] > 0]
    assert sorted(seen) == kept
    for i in kept:
        assert seen[i][0] == mats[tv_mat[i]], i
        assert seen[i][1] == (round(float(np.float32(widths[i])), 4), 2.0, 3.0), i

