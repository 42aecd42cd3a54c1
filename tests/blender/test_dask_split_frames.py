"""Any split of an animation's frames renders the frames of the whole (issue 72, item 1).

A real recording (``python -m pydoc -w email.message`` under VizTracer: ~200k calls, with
sub-pixel clusters and a detail inset at 640x360) grown over 12 frames, rendered whole and as
``--frames 1-6`` + ``--frames 7-12``: every frame pixel-identical but for a residual depth
tie (at most a few pixels in a frame; the same tie changes two renders of one frame in one
process).  The cause of the old
difference was not the clock: faces of neighbouring boxes closer along a view ray than the
depth buffer resolves (clusters drawn wider than their calls over their neighbours; trimmed
apart by a gap too small in the inset's scaled coordinates; the inset's name plates edge to
edge with their boxes, all one instancer), and which face won a pixel followed the GPU's draw
order, which changes from render to render (`layout.box_overlap`, `layout.inset.plates_off_faces`)."""
import os
import pathlib

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
pytestmark = pytest.mark.blender

from realtraces import record_viztracer, viztracer_missing  # noqa: E402
from tracevis3d.cli import main  # noqa: E402

COMMON = ["--seconds", "1", "--fps", "12", "--resolution", "640x360", "--samples", "1"]


@pytest.fixture(scope="module")
def pydoc_trace(tmp_path_factory) -> pathlib.Path:
    why = viztracer_missing()
    if why:
        pytest.skip(why)
    work = tmp_path_factory.mktemp("pydoc")
    return record_viztracer(work / "pydoc.json", ["-m", "pydoc", "-w", "email.message"], work)


def _png(path) -> np.ndarray:
    from tracevis3d.blender.figure_report import load_image

    return load_image(str(path), channels=4)


@pytest.mark.timeout(500)
def test_two_ranges_render_the_frames_of_the_whole(pydoc_trace, tmp_path):
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    assert main(["render-animation", str(pydoc_trace), "-o", str(whole), *COMMON]) == 0
    assert bpy.data.objects.get("TV3D_inset_boxes") is not None  # the inset is in the frames
    assert main(["render-animation", str(pydoc_trace), "-o", str(parts), *COMMON, "--frames", "1-6"]) == 0
    assert main(["render-animation", str(pydoc_trace), "-o", str(parts), *COMMON, "--frames", "7-12"]) == 0
    names = [f"frame_{k:04d}.png" for k in range(1, 13)]
    assert sorted(os.listdir(whole)) == names == sorted(os.listdir(parts))
    # Pixel-identical but for a depth tie that remains *within* one process: a box and its
    # neighbour closer along the view ray than the depth buffer resolves (gaps of the calls
    # themselves, below half a depth step) let the GPU's draw order pick the pixel, which varies
    # from render to render of the same frame (docs/distributed.md).  Seen: 1 pixel in 1 and in 3
    # frames of 12 at 640x360 (CI-like runs of 2026-11-28); the old bug moved 0.1-0.4 % of the
    # pixels (230-920 of a 640x360 frame).
    off = {}
    for name in names:
        a, b = _png(whole / name), _png(parts / name)
        n_off = int((np.abs(a - b).max(-1) > 2 / 255).sum())
        if n_off:
            off[name] = n_off
    assert all(n <= 4 for n in off.values()), off
    assert np.abs(_png(whole / names[2]) - _png(whole / names[-1])).max() > 0.1  # it grows
