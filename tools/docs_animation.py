"""Regenerate the animation figures of docs/animation.md.

    NUMBA_CACHE_DIR=build/numba-cache PYTHONPATH=. .venv/bin/python tools/docs_animation.py \
        [--trace ../main/build/traces/threads.json] [--out docs/animation]

A growth animation of the real 5-thread trace (4 s at 12 fps, 1280x720, Workbench) rendered
by ``render-animation`` into PNG frames, encoded to ``growth_threads.mp4`` with Blender's
FFmpeg (H.264), three key frames kept as JPEG (`still`: small pictures for the manual); a
frame of a fly-through; the reveal of the real docutils A/B pair (``--pair``; 4 s at 8 fps,
largest change first) as MP4 and two key frames; a frame of the thread view's hand-offs;
the middle frame of the thread view's and of the cone tree's growth.
"""
from __future__ import annotations

import argparse
import glob
import os
import sys
import tempfile

KEY_FRAMES = (14, 30, 48)
JPEG_QUALITY = 80  # the manual's stills: ~100 kB at 1280x720 where the PNG is ~700 kB


def still(png: str, jpg: str, quality: int = JPEG_QUALITY) -> None:
    """The rendered frame ``png`` written as the JPEG ``jpg``, pixels as they are (Blender's own
    image writer; no scene, so no view transform: a new scene's AgX would wash them out)."""
    import bpy

    image = bpy.data.images.load(png)
    try:
        if not image.size[0]:  # (reading the size loads the pixels: before the path changes, or the
            raise ValueError(f"{png}: no image")  # save would load them from ``jpg``)
        image.filepath_raw = jpg
        image.file_format = "JPEG"
        image.save(quality=quality)
    finally:
        bpy.data.images.remove(image)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trace", default=os.path.join("..", "main", "build", "traces", "threads.json"))
    ap.add_argument("--pair", nargs=2, default=[os.path.join("..", "main", "build", "traces", "pool",
                                                             f"docutils_pool_{k}.json") for k in "ab"])
    ap.add_argument("--out", default=os.path.join("docs", "animation"))
    a = ap.parse_args(argv)
    from tracevis3d.blender.render import encode_video
    from tracevis3d.cli import main as cli

    os.makedirs(a.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        frames = os.path.join(tmp, "growth")
        if cli(["render-animation", a.trace, "-o", frames, "--seconds", "4", "--fps", "12",
                "--resolution", "1280x720"]) != 0:
            return 1
        pngs = sorted(glob.glob(os.path.join(frames, "frame_*.png")))
        encode_video(pngs, os.path.join(os.path.abspath(a.out), "growth_threads.mp4"), 12, (1280, 720))
        for k in KEY_FRAMES:
            still(os.path.join(frames, f"frame_{k:04d}.png"), os.path.join(a.out, f"growth_threads_{k:02d}.jpg"))
        fly = os.path.join(tmp, "fly")
        if cli(["render-animation", a.trace, "-o", fly, "--kind", "flythrough", "--seconds", "4", "--fps", "12",
                "--resolution", "1280x720", "--frames", "20-20"]) != 0:
            return 1
        still(os.path.join(fly, "frame_0020.png"), os.path.join(a.out, "flythrough_threads_20.jpg"))
        hand = os.path.join(tmp, "hand")
        if cli(["render-animation", a.trace, "--view", "threads", "-o", hand, "--seconds", "4", "--fps", "12",
                "--resolution", "1280x720", "--frames", "30-30"]) != 0:
            return 1
        still(os.path.join(hand, "frame_0030.png"), os.path.join(a.out, "handoffs_threads_30.jpg"))
        for view, trace, name in (("threads", a.trace, "growth_thread_view_24.jpg"),
                                  ("cone", a.pair[0], "growth_cone_24.jpg")):
            grow = os.path.join(tmp, f"grow_{view}")
            if cli(["render-animation", trace, "--view", view, "--kind", "growth", "-o", grow, "--seconds", "4",
                    "--fps", "12", "--resolution", "1280x720", "--frames", "24-24"]) != 0:
                return 1
            still(os.path.join(grow, "frame_0024.png"), os.path.join(a.out, name))
        rev = os.path.join(tmp, "reveal")
        if cli(["render-animation", *a.pair, "-o", rev, "--seconds", "4", "--fps", "8", "--reveal-order", "change",
                "--resolution", "1280x720"]) != 0:
            return 1
        pngs = sorted(glob.glob(os.path.join(rev, "frame_*.png")))
        encode_video(pngs, os.path.join(os.path.abspath(a.out), "reveal_docutils.mp4"), 8, (1280, 720))
        for k in (8, 20):
            still(os.path.join(rev, f"frame_{k:04d}.png"), os.path.join(a.out, f"reveal_docutils_{k:02d}.jpg"))
    print(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
