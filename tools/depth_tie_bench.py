"""Pixels that change between two renders of the same frames in one process (issue 72's depth tie).

    PYTHONPATH=. .venv/bin/python tools/depth_tie_bench.py TRACE OUT [--resolution 1920x1080]
        [--growth-frames 11-12] [--fly-frames 1-2] [--variants before,after,oldgaps] [--repeats 2]

Renders the trace's growth and fly-through (12 frames over a second, Workbench, 1 sample)
``--repeats`` times each with ``render-animation --frames``, in this one process, and counts per frame the pixels
whose channels differ by more than 2/255 between the first render and each other one.  ``before``: the near clip of
the old framing (1e-3 of the camera's distance for the still and the fly-through) and touching
calls left touching, ``after``: `layout.camera.near_clip`, the fly-through's
`blender.anim_camera.path_near_clip` and `layout.box_overlap.call_ends_apart`;
``oldgaps``: the new near clip with the clusters' and the inset's plates' gaps of the old depth
step (what the near clip alone changes in a frame).  One JSON
line per (variant, kind) on stdout: the differing pixels per frame, the near clip, seconds.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import time

import numpy as np


def _png(path) -> np.ndarray:
    from tracevis3d.blender.figure_report import load_image

    return load_image(str(path), channels=4)


def _variant(name: str):
    """Set the module constants of ``name`` (before / after); returns what to undo."""
    from tracevis3d.blender import anim_camera
    from tracevis3d.layout import camera

    from tracevis3d.layout import box_overlap

    undo = (camera.NEAR_CLIP_SHARE, anim_camera.path_near_clip, box_overlap.depth_step, box_overlap.call_ends_apart)
    if name == "oldgaps":  # the new near clip, the clusters' and plates' gaps of the old one's depth step
        step = box_overlap.depth_step
        box_overlap.depth_step = lambda cam: step(cam) * cam.clip_start / max(
            1e-3 * float(np.linalg.norm(np.subtract(cam.location, cam.target))), 1e-3)
    if name == "before":
        camera.NEAR_CLIP_SHARE = 0.0  # near_clip: max(1e-3 × distance, 1e-3), the old rule
        anim_camera.path_near_clip = lambda cam, eyes, lo, hi, still: still  # the still's clip
        box_overlap.call_ends_apart = lambda lane, bottom, height, xs, xe, cam: np.asarray(xe, np.float64)
    return undo


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("out")
    ap.add_argument("--resolution", default="1920x1080")
    ap.add_argument("--growth-frames", default="11-12")
    ap.add_argument("--fly-frames", default="1-2")
    ap.add_argument("--variants", default="before,after")
    ap.add_argument("--repeats", type=int, default=2, help="renders of each range (each compared with the first)")
    a = ap.parse_args(argv)
    import bpy

    from tracevis3d.blender import anim_camera
    from tracevis3d.cli import main as cli
    from tracevis3d.layout import box_overlap, camera

    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    common = ["--seconds", "1", "--fps", "12", "--resolution", a.resolution, "--samples", "1"]
    for variant in a.variants.split(","):
        undo = _variant(variant)
        try:
            for kind, frames in (("growth", a.growth_frames), ("flythrough", a.fly_frames)):
                dirs = [out / f"{variant}_{kind}_{k}" for k in range(1, a.repeats + 1)]
                t = time.perf_counter()
                for d in dirs:
                    rc = cli(["render-animation", a.trace, "-o", str(d), *common, "--kind", kind, "--frames", frames])
                    assert rc == 0, rc
                clip = float(bpy.context.scene.camera.data.clip_start)
                dist = float((bpy.context.scene.camera.matrix_world.translation).length)
                off = {}
                for p in sorted(dirs[0].glob("frame_*.png")):
                    x = _png(p)
                    off[p.name] = [int((np.abs(x - _png(d / p.name)).max(-1) > 2 / 255).sum()) for d in dirs[1:]]
                print(json.dumps({"variant": variant, "kind": kind, "resolution": a.resolution, "differing": off,
                                  "clip_start": clip, "camera_from_origin": round(dist, 3),
                                  "seconds": round(time.perf_counter() - t, 1)}), flush=True)
        finally:
            (camera.NEAR_CLIP_SHARE, anim_camera.path_near_clip, box_overlap.depth_step,
             box_overlap.call_ends_apart) = undo
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
