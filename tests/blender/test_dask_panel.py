"""The panel's Render Animation on a Dask cluster (issue 72): the Animate section's scheduler
field (declared once in `params.cluster.CLUSTER_SCHEMA`) sends the frames to a real embedded
``local:2`` cluster; the operator runs a job whose progress is frames done / total, frames per
second and each worker's share, and whose frames equal those Blender renders here alone.  Real
bpy, the add-on registered, a tiny synthetic trace; headless, so the operator polls its job to
the end (the code the UI's modal timer drives)."""
import os
import re
import sys

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
pytest.importorskip("distributed")
pytestmark = pytest.mark.blender

PKG = "tv3d_addon"
FRAMES = 6


@pytest.fixture(scope="module")
def addon():
    from addon_loader import registered_addon

    yield from registered_addon()


def _png(path) -> np.ndarray:
    from tracevis3d.blender.figure_report import load_image

    return load_image(str(path), channels=4)


def test_the_scheduler_field_is_the_schemas_and_shown_by_the_animate_section(addon):
    from tracevis3d.params.cluster import CLUSTER_PANEL_FIELDS, CLUSTER_SCHEMA

    assert CLUSTER_PANEL_FIELDS == ("scheduler", "connect_timeout", "worker_timeout", "task_timeout")
    for name in CLUSTER_PANEL_FIELDS:  # the peers' deadlines too (issue 78)
        rna = bpy.context.scene.tracevis3d.bl_rna.properties[name]
        assert rna.description == CLUSTER_SCHEMA.by_name[name].help
    panels = sys.modules[f"{PKG}.ui.panels"]
    assert panels.VIEW3D_PT_tracevis3d_animate.is_registered


@pytest.mark.timeout(420)
def test_render_animation_on_a_local_cluster_reports_progress_and_makes_the_frames(addon, tmp_path):
    import tracevis3d
    from tracevis3d.blender.scene import build_icicle
    from tracevis3d.blender.tasks import QUEUE
    from tracevis3d.layout import IcicleParams

    bpy.ops.wm.read_factory_settings(use_empty=True)
    build_icicle(tracevis3d.synthetic(300, threads=2), IcicleParams(resolution=(96, 54)))
    scene = bpy.context.scene
    s = scene.tracevis3d
    s.kind, s.seconds, s.fps, s.easing = "growth", 1.0, FRAMES, "linear"
    assert bpy.ops.tracevis3d.animate() == {"FINISHED"}
    here = tmp_path / "here"
    assert bpy.ops.tracevis3d.render_animation(filepath=str(here)) == {"FINISHED"}

    s.scheduler = "local:2"
    out = tmp_path / "cluster"
    assert bpy.ops.tracevis3d.render_animation(filepath=str(out)) == {"FINISHED"}
    job = QUEUE.current
    assert job.name == "render animation" and job.state == "done", job
    names = [f"frame_{k:04d}.png" for k in range(1, FRAMES + 1)]
    assert sorted(os.listdir(out)) == names
    for name in names:
        assert np.array_equal(_png(here / name), _png(out / name)), name

    # the progress it reported, step by step (each text a step of the job): frames done / total,
    # frames per second, each worker's share; the job yielded between the workers' results
    shown = [t for t in job.timings if re.match(r"frames \d+/\d+ at [\d.]+ frames/s; workers: ", t)]
    done = sorted({int(re.match(r"frames (\d+)/", t).group(1)) for t in shown})
    assert done[-1] == FRAMES and len(done) >= 2, list(job.timings)
    assert all(f"/{FRAMES} at" in t for t in shown)
    prog = job.progress
    assert prog.done == FRAMES and sum(prog.by_worker.values()) == FRAMES
    assert all(w.startswith("tcp://127.0.0.1:") for w in prog.by_worker), prog.by_worker
    assert re.search(r"tcp://127\.0\.0\.1:\d+ \d+ \(\d+ %\)", shown[-1]), shown[-1]


def test_a_malformed_scheduler_is_one_line_and_nothing_starts(addon, tmp_path):
    import tracevis3d
    from tracevis3d.blender.scene import build_icicle
    from tracevis3d.layout import IcicleParams

    bpy.ops.wm.read_factory_settings(use_empty=True)
    build_icicle(tracevis3d.synthetic(50, threads=1), IcicleParams(resolution=(48, 27)))
    s = bpy.context.scene.tracevis3d
    s.kind, s.seconds, s.fps = "growth", 1.0, 2
    assert bpy.ops.tracevis3d.animate() == {"FINISHED"}
    s.scheduler = "nohostport"
    with pytest.raises(RuntimeError, match="an address is host:port"):
        bpy.ops.tracevis3d.render_animation(filepath=str(tmp_path / "f"))
    assert not (tmp_path / "f").exists() or not os.listdir(tmp_path / "f")
