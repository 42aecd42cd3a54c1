"""Render an animated scene (`blender.animate`): a PNG per frame or a video.

- a folder gets ``frame_0001.png``, … numbered by scene frame (Blender's own numbering:
  the path ``FOLDER/frame_`` with four digits appended);
- ``.mp4`` (H.264), ``.mkv``, ``.mov``, ``.webm`` go through Blender's own FFmpeg output
  (bpy 5.0: ``image_settings.media_type = "VIDEO"``, ``file_format = "FFMPEG"``,
  ``ffmpeg.format``/``codec``).
``frames=(A, B)`` renders scene frames A..B only: one ``render(animation=True)`` over that
range (the scene's range is put back afterwards), so a range's frames are the frames of
the whole render (every frame is a function of its number alone: attributes, modifiers
and keyframes, no state carried from the frame before).
"""
from __future__ import annotations

import os

import bpy

from .render import VIDEO_FORMATS, blender_write_failed, quiet_blender_output, set_video_output, setup_render


def render_animation(out: str, scene=None, frames=None, engine: str = "workbench", resolution=(1920, 1080),
                     samples=None, device: str = "auto") -> dict:
    """Render ``scene``'s frames (all, or ``frames`` = (A, B)) to ``out`` (a video file by
    its extension, else a folder, created); {"path", "frames", "files"}."""
    scene = scene or bpy.context.scene
    setup_animation_output(out, scene, engine, resolution, samples, device)
    return render_frames(scene, frames)


def setup_animation_output(out: str, scene=None, engine: str = "workbench", resolution=(1920, 1080),
                           samples=None, device: str = "auto") -> str:
    """Set ``scene``'s render settings to write its animation to ``out`` (a video by its
    extension, else a folder, created): what a saved .blend then renders with
    ``blender -b scene.blend -a`` too.  The absolute output path."""
    scene = scene or bpy.context.scene
    out = os.path.abspath(os.fspath(out))
    ext = os.path.splitext(out)[1].lower()
    video = ext in VIDEO_FORMATS
    if video:
        if not os.path.isdir(os.path.dirname(out)):
            raise ValueError(f"output folder does not exist: {os.path.dirname(out)}")
        probe = os.path.join(os.path.dirname(out), "frame.png")
    else:
        if ext and ext != ".png" and not os.path.isdir(out):
            raise ValueError(f"{out}: an animation goes to a folder (PNG frames) or a video "
                             f"({', '.join(VIDEO_FORMATS)})")
        os.makedirs(out, exist_ok=True)
        probe = os.path.join(out, "frame.png")
    setup_render(probe, engine, resolution, False, samples, scene, device)
    r = scene.render
    if video:
        set_video_output(r, *VIDEO_FORMATS[ext])
        r.filepath = out
        r.use_file_extension = False
    else:
        r.filepath = os.path.join(out, "frame_")
        r.use_file_extension = True
    return out


def render_frames(scene=None, frames=None) -> dict:
    """Render the scene frames A..B (``frames``; None: all) with the output settings of
    `setup_animation_output`; {"path", "frames", "files"}."""
    scene = scene or bpy.context.scene
    r = scene.render
    a, b = frames or (scene.frame_start, scene.frame_end)
    if not scene.frame_start <= a <= b <= scene.frame_end:
        raise ValueError(f"frames {a}-{b} are outside the animation's frames "
                         f"{scene.frame_start}-{scene.frame_end}")
    video = r.image_settings.file_format == "FFMPEG"
    out = r.filepath if video else os.path.dirname(r.filepath)
    if video:
        return _render_video(scene, out, a, b)
    return _render_png_frames(scene, out, a, b)


def _render_range(scene, a: int, b: int) -> None:
    """``render(animation=True)`` over scene frames a..b (the scene's range put back after)."""
    old = scene.frame_start, scene.frame_end, scene.frame_current
    scene.frame_start, scene.frame_end = a, b
    try:
        with quiet_blender_output():
            res = bpy.ops.render.render(animation=True, scene=scene.name)
    finally:
        scene.frame_start, scene.frame_end = old[0], old[1]
        scene.frame_set(old[2])
    if "FINISHED" not in res:
        raise RuntimeError(f"the animation was not rendered ({res})")


def _render_video(scene, out: str, a: int, b: int) -> dict:
    """The video of frames a..b into a temporary beside ``out``, checked whole (its index box
    written) before it replaces ``out`` (`io.atomic.replaced_whole`)."""
    from ..io.atomic import replaced_whole
    from ..io.outputs import verify_video

    r = scene.render
    ext = os.path.splitext(out)[1].lower()
    with replaced_whole(out, verify=verify_video, suffix=ext, what="cannot write the video") as tmp:
        r.filepath = tmp
        try:
            _render_range(scene, a, b)
        except RuntimeError as e:
            raise blender_write_failed(e, out, "cannot write the video") from None
        finally:
            r.filepath = out
        if not os.path.isfile(tmp) or os.path.getsize(tmp) == 0:
            raise RuntimeError(f"the video {out} was not written")
    return {"path": out, "frames": (a, b), "files": [out]}


def _render_png_frames(scene, out: str, a: int, b: int) -> dict:
    """Frames a..b as ``out/frame_NNNN.png``: rendered into a hidden folder inside ``out``, each
    checked whole (`io.outputs.verify_png`) and only then moved over its name, so a frame on disk
    is never half written and a failed render (a full disk) leaves the frames that were there;
    the hidden folder is removed whatever happens."""
    import shutil
    import tempfile

    from ..io.atomic import output_error
    from ..io.outputs import verify_png

    r = scene.render
    files = [os.path.join(out, f"frame_{k:04d}.png") for k in range(a, b + 1)]
    try:
        stage = tempfile.mkdtemp(prefix=".tv3d-frames-", dir=out)
    except OSError as e:
        raise output_error(e, out, "cannot write the frames") from None
    try:
        r.filepath = os.path.join(stage, "frame_")
        try:
            _render_range(scene, a, b)
        except RuntimeError as e:
            raise blender_write_failed(e, out, "cannot write the frames") from None
        finally:
            r.filepath = os.path.join(out, "frame_")
        staged = [os.path.join(stage, os.path.basename(f)) for f in files]
        missing = [f for f, s in zip(files, staged) if not os.path.isfile(s)]
        if missing:
            raise RuntimeError(f"the render did not write {missing[0]}")
        try:
            for s in staged:
                verify_png(s)
                fd = os.open(s, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
            for f, s in zip(files, staged):
                os.replace(s, f)
        except OSError as e:
            raise output_error(e, out, "cannot write the frames") from None
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return {"path": out, "frames": (a, b), "files": files}


def pack_fonts() -> int:
    """Pack every font the file uses that is not Blender's built-in one (a saved .blend
    renders its text anywhere); how many were packed."""
    n = 0
    for f in bpy.data.fonts:
        if f.filepath not in ("<builtin>", "") and f.packed_file is None:
            f.pack()
            n += 1
    return n
