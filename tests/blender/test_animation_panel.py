"""The panel's Animate section (issue 23): its operators set up the same animation as
``render-animation`` (the same `blender.animate.animate_scene`) in the open scene, remove
it, and render it; real bpy, the add-on registered, a tiny synthetic trace."""
import os
import sys

import pytest

bpy = pytest.importorskip("bpy")
pytestmark = pytest.mark.blender

PKG = "tv3d_addon"


@pytest.fixture(scope="module")
def addon():
    from addon_loader import registered_addon

    yield from registered_addon()


def test_animate_section_sets_up_plays_and_renders(addon, tmp_path):
    import tracevis3d
    from tracevis3d.blender.animate import ANIM_KEY
    from tracevis3d.blender.scene import build_icicle
    from tracevis3d.layout import IcicleParams

    panels = sys.modules[f"{PKG}.ui.panels"]
    assert panels.VIEW3D_PT_tracevis3d_animate.is_registered
    build_icicle(tracevis3d.synthetic(300, threads=2), IcicleParams(resolution=(96, 54)))
    scene = bpy.context.scene
    s = scene.tracevis3d
    s.kind, s.seconds, s.fps, s.easing = "growth", 1.0, 5, "linear"
    assert bpy.ops.tracevis3d.animate() == {"FINISHED"}
    assert (scene.frame_start, scene.frame_end, scene.render.fps) == (1, 5, 5)
    assert ANIM_KEY in scene
    calls = bpy.data.objects["TV3D_calls"]
    assert calls.modifiers[0].name == "TraceVis3D growth"
    out = tmp_path / "frames"
    assert bpy.ops.tracevis3d.render_animation(filepath=str(out)) == {"FINISHED"}
    assert sorted(os.listdir(out)) == [f"frame_{k:04d}.png" for k in range(1, 6)]
    s.kind = "turntable"
    assert bpy.ops.tracevis3d.animate() == {"FINISHED"}
    assert "TraceVis3D growth" not in [m.name for m in calls.modifiers]  # the growth is replaced
    assert bpy.data.objects.get("TV3D_turntable") is not None
    s.kind = "growth"
    assert bpy.ops.tracevis3d.animate() == {"FINISHED"}
    scene.frame_set(1)
    assert bpy.ops.tracevis3d.clear_animation() == {"FINISHED"}
    assert not [o.name for o in scene.objects if o.type == "FONT" and (o.hide_render or o.hide_viewport)]
    assert ANIM_KEY not in scene and bpy.data.objects.get("TV3D_turntable") is None
    assert scene.camera.parent is None


def test_render_animation_without_animation_is_reported(addon):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    with pytest.raises(RuntimeError, match="Set Up Animation first"):
        bpy.ops.tracevis3d.render_animation()


def test_animate_the_thread_view_from_the_panel(addon, sync_program_path, tmp_path):
    """The thread view built by the panel (its trace kept in the session): Set Up Animation
    times the hand-offs and grows the rings, as ``render-animation --view threads`` does."""
    import json

    from tracevis3d.blender.animate import ANIM_KEY

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    s = scene.tracevis3d
    s.trace_path = str(sync_program_path)
    scene.tracevis3d_threads_params.resolution = (160, 90)
    assert bpy.ops.tracevis3d.threads() == {"FINISHED"}
    s.kind, s.seconds, s.fps, s.easing = "handoffs", 1.0, 5, "linear"
    assert bpy.ops.tracevis3d.animate() == {"FINISHED"}
    info = json.loads(scene[ANIM_KEY])
    assert info["kind"] == "handoffs" and info["handoff_faces"] > 0
    s.kind = "growth"
    assert bpy.ops.tracevis3d.animate() == {"FINISHED"}
    info = json.loads(scene[ANIM_KEY])
    assert info["kind"] == "growth" and info["arc_faces"] > 0 and info["handoff_faces"] > 0
    assert [m.name for m in bpy.data.objects["TV3D_ring"].modifiers] == ["TraceVis3D arc growth"]
