"""Render the current scene to an image file (Workbench, EEVEE or Cycles; CPU or GPU, `device`).

The image format is the one the file name's extension names (`FILE_FORMATS`).  Blender's
own chatter during a render or a save (the "EGL Error (0x3009)" lines of the first headless
GPU context, the render's "Saved: '…'" line on stdout, the "Info: Saved as" report) is
filtered at the file-descriptor level by `quiet_blender_output`; anything else Blender
prints in that step is passed on to stderr.  ``bpy`` is imported inside the functions, so
the command line can check an output name before Blender starts.
"""
from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import tempfile

from ..params.render import IMAGE_FORMATS as FILE_FORMATS  # noqa: F401  (extension -> image format)

_ENGINE_ALIASES = {
    "workbench": "BLENDER_WORKBENCH", "blender_workbench": "BLENDER_WORKBENCH",
    "eevee": "BLENDER_EEVEE", "blender_eevee": "BLENDER_EEVEE", "blender_eevee_next": "BLENDER_EEVEE",
    "cycles": "CYCLES",
}

_ALPHA = {"PNG", "OPEN_EXR", "TIFF"}  # formats that keep a transparent background


def file_format_of(path) -> str:
    """Blender's file format for ``path``'s extension; ValueError naming the file otherwise."""
    from ..params.render import image_format_of

    return image_format_of(path)


def check_output(path, transparent: bool = False) -> str:
    """The file format for ``path``; ValueError when it cannot hold what is asked."""
    fmt = file_format_of(path)
    if transparent and fmt not in _ALPHA:
        raise ValueError(f"{os.fspath(path)}: JPEG has no alpha channel for a transparent background; "
                         "use .png, .exr or .tif")
    return fmt


# ------------------------------------------------------------------ Blender's chatter
# Lines Blender prints that carry nothing for our user (checked with bpy 5.0.1):
# - "EGL Error (0x3009): EGL_BAD_MATCH ..." x3 on stderr: GHOST probing OpenGL context
#   versions when the first GPU context of a headless process is made, i.e. at the first
#   Workbench/EEVEE render (not at `import bpy`); the probe then succeeds;
# - "00:01.057  render | Saved: '/path/fig.png'" on stdout (the render's log line; older
#   versions print "Saved: '…'" and " Time: 00:01.23 (Saving: 00:00.01)");
# - "Info: Saved (copy) as \"scene.blend\"" on stdout (the save operator's report in background mode;
#   bpy 4.2: "Info: Saved \"scene.blend\"" after "Info: Total files 0 | Changed 0 | Failed 0", its
#   relative-path remap's count);
# - "… blend | Read blend: \"…\"" on stdout (opening a file);
# - "Fra:1 Mem:… | …" render progress lines.
BLENDER_NOISE = (
    re.compile(r"^EGL Error \(0x[0-9A-Fa-f]+\)"),
    re.compile(r"^(\d+:)*\d+(\.\d+)?\s+\w+\s+\|\s+(Saved|Read blend|Video append frame)"),
    re.compile(r"^Saved: ['\"]"),
    re.compile(r"^\s*Time: \d"),
    re.compile(r"^Info: Saved (copy )?as "),
    re.compile(r"^Info: Saved \""),
    re.compile(r"^Info: Total files \d+ \| Changed \d+ \| Failed \d+$"),
    re.compile(r"^Fra:\d+ "),
    re.compile(r"^\s*$"),
)
_quiet_depth = [0]


def _fflush_c() -> None:
    """Flush C stdio buffers (Blender's printf output) before the file descriptors move."""
    try:
        import ctypes

        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError, TypeError):  # Windows: no CDLL(None); nothing buffered we can reach
        pass


def filter_noise(text: str, noise=BLENDER_NOISE) -> str:
    """``text`` without the lines that match one of ``noise``."""
    keep = [ln for ln in text.splitlines(keepends=True) if not any(rx.search(ln) for rx in noise)]
    return "".join(keep)


@contextlib.contextmanager
def quiet_blender_output(noise=BLENDER_NOISE):
    """Run a step with file descriptors 1 and 2 captured (what C code prints included) and
    Python's ``sys.stdout``/``sys.stderr`` too (Blender writes an operator's reports there);
    then write every captured line that is not known noise to stderr.

    Nothing of that step reaches stdout, so a command's stdout stays its own.  Re-entrant (an
    inner use inside an outer one does nothing); without usable descriptors (a GUI Blender on
    Windows) it does nothing either.
    """
    if _quiet_depth[0]:
        yield
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        saved = os.dup(1), os.dup(2)
    except (OSError, ValueError, AttributeError):
        yield
        return
    _quiet_depth[0] += 1
    py_out, py_err = io.StringIO(), io.StringIO()
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        _fflush_c()
        os.dup2(tmp.fileno(), 1)
        os.dup2(tmp.fileno(), 2)
        try:
            with contextlib.redirect_stdout(py_out), contextlib.redirect_stderr(py_err):
                yield
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            except (OSError, ValueError):
                pass
            _fflush_c()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            _quiet_depth[0] -= 1
            tmp.seek(0)
            text = tmp.read().decode("utf-8", "replace")
            parts = [t if t.endswith("\n") else t + "\n" for t in (text, py_out.getvalue(), py_err.getvalue()) if t]
            rest = filter_noise("".join(parts), noise)
            if rest:
                sys.stderr.write(rest if rest.endswith("\n") else rest + "\n")
                sys.stderr.flush()


# ------------------------------------------------------------------ rendering
def blender_write_failed(e: BaseException, path: str, what: str):
    """Blender's error while it wrote ``path`` (a RuntimeError "Error: ..." whose words are often
    a stale errno, "Inappropriate ioctl for device") as one line naming the path and the likely
    cause (`io.atomic.failed_write_cause`): an `OutputError`."""
    import errno

    from ..io.atomic import OutputError, failed_write_cause

    said = " ".join(str(e).replace("Error:", " ").split())
    return OutputError(errno.EIO, f"{what}: {failed_write_cause(os.path.dirname(os.path.abspath(path)), said)}",
                       path)


def engine_id(engine: str) -> str:
    """Blender's engine identifier for a user-facing name; ValueError if unknown."""
    key = str(engine).strip().lower()
    if key not in _ENGINE_ALIASES:
        raise ValueError(f"unknown render engine {engine!r}; use workbench, eevee or cycles")
    from .compat import engine_identifier

    return engine_identifier(_ENGINE_ALIASES[key])


def _set_image_format(r, fmt: str, transparent: bool) -> None:
    from .compat import set_media_type

    im = r.image_settings
    set_media_type(im, "IMAGE")  # Blender 5.0+: image / multilayer / video
    im.file_format = fmt
    im.color_mode = "RGBA" if transparent else "RGB"
    if fmt in ("PNG", "TIFF"):
        im.color_depth = "8"
    elif fmt == "OPEN_EXR":
        im.color_depth = "16"  # half float
    elif fmt == "JPEG":
        im.quality = 95


def render_figure(path, engine: str = "BLENDER_WORKBENCH", resolution=(1920, 1080),
                  transparent: bool = False, samples: int | None = None, scene=None,
                  quiet: bool = True, device: str = "auto") -> str:
    """Render the scene's camera view to ``path`` and return the absolute path.

    The format follows the extension (.png, .jpg/.jpeg, .exr, .tif/.tiff); any other is a
    ValueError.  ``quiet``: Blender's own output of the render goes through
    `quiet_blender_output` (nothing on stdout, known noise dropped).
    """
    import bpy

    from ..io.atomic import replaced_whole
    from ..io.outputs import verify_output

    scene = scene or bpy.context.scene
    path = setup_render(path, engine, resolution, transparent, samples, scene, device)
    # Blender writes the image in place and does not report a failed write (a full disk left a
    # cut PNG and "FINISHED"): it renders into a temporary beside the target, checked whole
    # before it replaces the target (`io.atomic.replaced_whole`)
    with replaced_whole(path, verify=lambda tmp: verify_output(tmp, like=path),
                        suffix=os.path.splitext(path)[1], what="cannot write the figure") as tmp:
        scene.render.filepath = tmp
        try:
            with quiet_blender_output() if quiet else contextlib.nullcontext():
                res = bpy.ops.render.render(write_still=True, scene=scene.name)
        except RuntimeError as e:
            raise blender_write_failed(e, path, "cannot write the figure") from None
        finally:
            scene.render.filepath = path
        if "FINISHED" not in res or not os.path.isfile(tmp):
            raise RuntimeError(f"render did not write {path} ({res})")
    return path


def setup_render(path, engine: str = "BLENDER_WORKBENCH", resolution=(1920, 1080),
                 transparent: bool = False, samples: int | None = None, scene=None,
                 device: str = "auto") -> str:
    """Check the arguments and set the scene's render settings for `render_figure`; the
    absolute output path (ValueError naming what is wrong; ``device``: `device.choose_device`)."""
    import bpy

    scene = scene or bpy.context.scene
    if scene.camera is None:
        raise ValueError("the scene has no camera: build the icicle first")
    from ..params.shared import checked_resolution

    w, h = checked_resolution(resolution)
    check_render_memory(w, h, engine=engine)
    if samples is not None and int(samples) < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    path = os.path.abspath(os.fspath(path))
    fmt = check_output(path, transparent)
    d = os.path.dirname(path)
    if d and not os.path.isdir(d):
        raise ValueError(f"output folder does not exist: {d}")
    r = scene.render
    r.engine = engine_id(engine)
    r.resolution_x, r.resolution_y = w, h
    r.resolution_percentage = 100
    r.film_transparent = bool(transparent)
    _set_image_format(r, fmt, transparent)
    r.use_file_extension = False
    from .device import choose_device

    with quiet_blender_output():  # "CUEW initialization failed" where there is no CUDA
        choose_device(scene, device, r.engine)
    if r.engine == "CYCLES":
        scene.cycles.samples = int(samples or 32)
        scene.cycles.use_denoising = True
    elif r.engine.startswith("BLENDER_EEVEE"):
        scene.eevee.taa_render_samples = int(samples or 16)
    elif samples is not None:
        aa = {1: "OFF", 5: "5", 8: "8", 11: "11", 16: "16", 32: "32"}
        scene.display.render_aa = aa[min(aa, key=lambda k: abs(k - int(samples)))]
    r.filepath = path
    return path


#: bytes a rendered pixel costs at the peak of a render (Blender's float RGBA result, its display
#: copy, the GPU's buffers and the 8-bit image written out): a Workbench render of 8192x8192 here
#: peaked at 6.5 GB, 97 bytes a pixel with the process's ~0.6 GB
RENDER_BYTES_PER_PIXEL = 96
#: the most pixels the GPU engines (Workbench, EEVEE) render in one piece here: 8192x8192 rendered,
#: 16384x16384 failed in Blender with "Failed to allocate GPU buffers" after taking 5 GB
MAX_GPU_RENDER_PIXELS = 8192 * 8192


def check_render_memory(width: int, height: int, available: int | None = None, engine: str = "workbench") -> None:
    """Refuse, before Blender allocates anything, a resolution whose render cannot succeed: more
    pixels than the GPU engines render in one piece (`MAX_GPU_RENDER_PIXELS`; Cycles tiles), or
    more memory than the system can give (`RENDER_BYTES_PER_PIXEL` a pixel against
    ``MemAvailable``): one line saying what it needs, what there is and what to do (a
    16384x16384 figure took 5 GB and then failed).  Unknown available memory: no memory check."""
    from ..io.mapguard import available_memory

    w, h = int(width), int(height)
    if str(engine).strip().lower() != "cycles" and w * h > MAX_GPU_RENDER_PIXELS:
        raise ValueError(f"resolution {w}x{h} is {w * h / 1e6:.0f} megapixels, more than the "
                         f"{MAX_GPU_RENDER_PIXELS / 1e6:.0f} Blender's {engine} renders in one piece here "
                         f"(8192x8192): choose a smaller resolution, or --engine cycles")
    need = w * h * RENDER_BYTES_PER_PIXEL
    have = available_memory() if available is None else int(available)
    if have and need > 0.8 * have:
        raise ValueError(f"resolution {w}x{h} needs about {need / 2**30:.1f} GiB to render "
                         f"({RENDER_BYTES_PER_PIXEL} bytes a pixel), but {have / 2**30:.1f} GiB of memory is free: "
                         f"choose a smaller resolution")


#: video containers `encode_video` writes, by extension: (FFmpeg container, codec)
VIDEO_FORMATS = {".mp4": ("MPEG4", "H264"), ".mkv": ("MKV", "H264"), ".mov": ("QUICKTIME", "H264"),
                 ".webm": ("WEBM", "WEBM")}


def set_video_output(r, container: str, codec: str) -> None:
    """Render settings ``r`` write a video through Blender's FFmpeg (H.264 at high quality,
    a key frame every second of frames, no sound)."""
    from .compat import set_media_type

    im = r.image_settings
    set_media_type(im, "VIDEO")  # Blender 5.0+
    im.file_format = "FFMPEG"
    r.ffmpeg.format, r.ffmpeg.codec = container, codec
    if codec == "H264":
        r.ffmpeg.constant_rate_factor = "HIGH"
        r.ffmpeg.gopsize = max(1, int(r.fps))
    r.ffmpeg.audio_codec = "NONE"


def encode_video(frames: list, path: str, fps: float, resolution) -> str:
    """Encode PNG ``frames`` (in order, all of ``resolution``) into the video ``path`` with
    Blender's FFmpeg output (container and codec by the extension, `VIDEO_FORMATS`) through
    a temporary scene whose sequencer holds the frames as one image strip.  ``fps`` below 1
    is written as 1/``fps_base``.  The absolute path; ValueError for an unknown extension,
    RuntimeError when nothing was written."""
    import bpy

    path = os.path.abspath(path)
    ext = os.path.splitext(path)[1].lower()
    if ext not in VIDEO_FORMATS:
        raise ValueError(f"{path}: a video needs one of {', '.join(VIDEO_FORMATS)}")
    if not frames:
        raise ValueError("no frames to encode")
    container, codec = VIDEO_FORMATS[ext]
    sc = bpy.data.scenes.new("TV3D_video")
    try:
        sc.sequence_editor_create()
        strip = sc.sequence_editor.strips.new_image(name="frames", filepath=frames[0], channel=1, frame_start=1)
        for f in frames[1:]:
            strip.elements.append(os.path.basename(f))
        sc.frame_start, sc.frame_end = 1, len(frames)
        r = sc.render
        r.resolution_x, r.resolution_y = int(resolution[0]), int(resolution[1])
        r.resolution_percentage = 100
        if fps >= 1:
            r.fps, r.fps_base = max(1, int(round(fps))), max(1, int(round(fps))) / fps
        else:
            r.fps, r.fps_base = 1, 1.0 / fps
        set_video_output(r, container, codec)
        r.use_sequencer = True
        r.use_file_extension = False  # the name as given (no frame range appended)
        from ..io.atomic import replaced_whole
        from ..io.outputs import verify_video

        with replaced_whole(path, verify=verify_video, suffix=ext,
                            what="cannot write the video") as tmp:
            r.filepath = tmp
            try:
                with quiet_blender_output():
                    res = bpy.ops.render.render(animation=True, scene=sc.name)
            except RuntimeError as e:
                raise blender_write_failed(e, path, "cannot write the video") from None
            if "FINISHED" not in res or not os.path.isfile(tmp) or os.path.getsize(tmp) == 0:
                raise RuntimeError(f"the video {path} was not written ({res})")
        return path
    finally:
        bpy.data.scenes.remove(sc)


def current_scene():
    """Blender's current scene (ImportError without the bpy module)."""
    import bpy

    return bpy.context.scene


def save_blend(path: str, scene) -> bool:
    """Save the open file as ``path`` (.blend), the scene remembering where its trace files
    are relative to it; Blender's "Info: Saved as ..." kept off stdout.  Whether it was saved."""
    import bpy

    from .hygiene import remember_blend_location
    from .session import remember_compare_location

    from ..io.atomic import replaced_whole
    from ..io.outputs import verify_blend

    path = os.path.abspath(os.fspath(path))
    remember_blend_location(scene, path)
    remember_compare_location(scene, path)
    # saved as a copy into a temporary beside ``path`` (same folder: relative paths hold), checked
    # to end with its end block, then renamed over ``path`` (`io.atomic.replaced_whole`): a full
    # disk left a .blend without its end block that no longer opened, and "FINISHED"
    with replaced_whole(path, verify=verify_blend, suffix=".blend", what="cannot save the scene") as tmp:
        os.unlink(tmp)  # an existing file would be kept as Blender's backup, ``tmp + "1"``
        try:
            with quiet_blender_output():
                r = bpy.ops.wm.save_as_mainfile(filepath=tmp, check_existing=False, copy=True,
                                                compress=False)
        except RuntimeError as e:
            raise blender_write_failed(e, path, "cannot save the scene") from None
        finally:
            if os.path.exists(tmp + "1"):
                os.unlink(tmp + "1")
        if "FINISHED" not in r or not os.path.isfile(tmp):
            raise RuntimeError(f"Blender did not save {path} ({r})")
    return True
