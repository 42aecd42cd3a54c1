"""The zoom's instancer group is kept from zoom to zoom (`blender.zoom_write._instancer`): one
group for all of a refinement's instance layers, its spare branches taking a new zoom's
materials instead of the group being built again (building it was most of a later zoom's
writing).  Whatever the group went through, every box of the zoom's layers is instanced with
the material its layout gave it: branch k selects the points whose ``tv_mat`` is k and gives
them branch k's material, which is the object's material slot ``tv_mat`` and the layer's
material of the box."""
import json

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
pytestmark = pytest.mark.blender

import tracevis3d  # noqa: E402
from tracevis3d.blender import zoom_write  # noqa: E402
from tracevis3d.blender.writer import MATERIAL_NODE, drain, instancer_branches  # noqa: E402
from tracevis3d.layout.icicle import icicle_layout  # noqa: E402
from tracevis3d.params.icicle import IcicleParams  # noqa: E402
from tracevis3d.layout.refine import window_params  # noqa: E402
from tracevis3d.layout.spec import InstanceLayer  # noqa: E402

COLLECTION = "TraceVis3D zoom test"


@pytest.fixture(scope="module")
def specs():
    """Refined figures of windows of a 2-thread trace, 0.2 ms to 50 ms wide (their layers use
    different numbers of materials)."""
    trace = tracevis3d.synthetic(200_000, threads=2, seed=3)
    t0, t1 = float(trace.start.min()), float(trace.end.max())
    out = []
    for place, width in ((0.5, 200.0), (0.3, 5_000.0), (0.6, 50_000.0), (0.4, 1_000.0)):
        c = t0 + place * (t1 - t0)
        out.append(icicle_layout(trace, window_params(IcicleParams(), (c - width / 2, c + width / 2))))
    return out


def _branch_materials(ng) -> dict:
    """{k: material name} of the group's branches, read through its links: the Set Material
    node named k is the k-th geometry of the Geometry to Instance whose instances an Instance on
    Points picks by ``tv_mat`` (`writer.instancer_branches`)."""
    out = {}
    iop = next(n for n in ng.nodes if n.bl_idname == "GeometryNodeInstanceOnPoints")
    assert iop.inputs["Pick Instance"].default_value
    index = iop.inputs["Instance Index"].links[0].from_node
    assert index.bl_idname == "GeometryNodeInputNamedAttribute" and index.inputs["Name"].default_value == "tv_mat"
    for k, setm in enumerate(instancer_branches(ng)):
        assert setm.name == f"{MATERIAL_NODE}{k}"
        out[k] = setm.inputs["Material"].default_value.name
    return out


def _check_boxes(spec) -> None:
    """Every box of ``spec``'s instance layers is instanced with its layer's material."""
    for layer in spec.layers:
        if not isinstance(layer, InstanceLayer) or not len(layer):
            continue
        ob = bpy.data.objects[f"TV3D_zoom_{layer.name}"]
        ng = ob.modifiers["TraceVis3D instancer"].node_group
        assert ng.name == zoom_write.INSTANCER
        branch = _branch_materials(ng)
        tv_mat = np.empty(len(layer), np.int32)
        ob.data.attributes["tv_mat"].data.foreach_get("value", tv_mat)
        want = [layer.materials[int(i)] for i in layer.material_index]
        assert [branch[int(k)] for k in tv_mat] == want, layer.name
        slots = [m.name for m in ob.data.materials]
        assert [slots[int(k)] for k in tv_mat] == want, layer.name


def _write(spec) -> None:
    drain(zoom_write.write_refinement_steps(spec, COLLECTION, bpy.context.scene))


@pytest.mark.timeout(600)
def test_later_zooms_retarget_the_group_and_every_box_keeps_its_material(specs):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    _write(specs[0])
    _check_boxes(specs[0])
    ng = bpy.data.node_groups[zoom_write.INSTANCER]
    built = (ng.as_pointer(), len(ng.nodes))
    for spec in specs[1:] + specs[:1]:
        _write(spec)
        _check_boxes(spec)
        ng = bpy.data.node_groups[zoom_write.INSTANCER]
        assert (ng.as_pointer(), len(ng.nodes)) == built  # the same group, not built again
    groups = [g.name for g in bpy.data.node_groups if g.name.startswith(zoom_write.GROUP_PREFIX)]
    assert groups == [zoom_write.INSTANCER]


@pytest.mark.timeout(600)
def test_a_group_without_room_is_built_again_keeping_its_branches(specs, monkeypatch):
    monkeypatch.setattr(zoom_write, "MIN_BRANCHES", 1)  # no spare branches beyond the power of two
    bpy.ops.wm.read_factory_settings(use_empty=True)
    sizes = []
    kept = None
    for spec in specs:
        _write(spec)
        _check_boxes(spec)
        ng = bpy.data.node_groups[zoom_write.INSTANCER]
        branch = _branch_materials(ng)
        sizes.append(len(branch))
        if kept is not None:  # a rebuild keeps the earlier zooms' branches where they were
            assert all(branch[k] == m for k, m in kept.items())
        kept = dict(enumerate(json.loads(ng["tv3d_branches"])))  # the spare branches left out
    assert sizes == sorted(sizes) and sizes[-1] > sizes[0]  # it grew, a power of two each time
    assert all(s & (s - 1) == 0 for s in sizes)


@pytest.mark.timeout(600)
def test_the_group_prepared_before_the_first_zoom_serves_it(specs):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.data.materials.new("any")  # the overview's materials, in a built scene
    drain(zoom_write.prepare_instancer_steps())
    ng = bpy.data.node_groups[zoom_write.INSTANCER]
    prepared = (ng.as_pointer(), len(ng.nodes))
    assert len(_branch_materials(ng)) == zoom_write.MIN_BRANCHES
    _write(specs[2])
    _check_boxes(specs[2])
    ng = bpy.data.node_groups[zoom_write.INSTANCER]
    assert (ng.as_pointer(), len(ng.nodes)) == prepared
