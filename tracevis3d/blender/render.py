"""Render the current scene to an image file (Workbench, EEVEE or Cycles; CPU)."""
from __future__ import annotations

import os

import bpy

_ENGINE_ALIASES = {
    "workbench": "BLENDER_WORKBENCH", "blender_workbench": "BLENDER_WORKBENCH",
    "eevee": "BLENDER_EEVEE", "blender_eevee": "BLENDER_EEVEE", "blender_eevee_next": "BLENDER_EEVEE",
    "cycles": "CYCLES",
}


def engine_id(engine: str) -> str:
    """Blender's engine identifier for a user-facing name; ValueError if unknown."""
    key = str(engine).strip().lower()
    if key not in _ENGINE_ALIASES:
        raise ValueError(f"unknown render engine {engine!r}; use workbench, eevee or cycles")
    ident = _ENGINE_ALIASES[key]
    items = {e.identifier for e in bpy.types.RenderSettings.bl_rna.properties["engine"].enum_items}
    if ident == "BLENDER_EEVEE" and ident not in items and "BLENDER_EEVEE_NEXT" in items:
        ident = "BLENDER_EEVEE_NEXT"  # Blender 4.2-4.4
    return ident


def render_figure(path, engine: str = "BLENDER_WORKBENCH", resolution=(1920, 1080),
                  transparent: bool = False, samples: int | None = None, scene=None) -> str:
    """Render the scene's camera view to ``path`` (PNG) and return the absolute path."""
    scene = scene or bpy.context.scene
    if scene.camera is None:
        raise ValueError("the scene has no camera: build the icicle first")
    try:
        w, h = (int(x) for x in resolution)
    except (TypeError, ValueError):
        raise ValueError(f"resolution must be (width, height), got {resolution!r}") from None
    if not (16 <= w <= 16384 and 16 <= h <= 16384):
        raise ValueError(f"resolution must be within 16..16384 px, got {w}x{h}")
    if samples is not None and int(samples) < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    path = os.path.abspath(os.fspath(path))
    d = os.path.dirname(path)
    if d and not os.path.isdir(d):
        raise ValueError(f"output folder does not exist: {d}")
    r = scene.render
    r.engine = engine_id(engine)
    r.resolution_x, r.resolution_y = w, h
    r.resolution_percentage = 100
    r.film_transparent = bool(transparent)
    r.image_settings.file_format = "PNG"
    r.image_settings.color_mode = "RGBA" if transparent else "RGB"
    r.use_file_extension = False
    if r.engine == "CYCLES":
        scene.cycles.device = "CPU"
        scene.cycles.samples = int(samples or 32)
        scene.cycles.use_denoising = True
    elif r.engine.startswith("BLENDER_EEVEE"):
        scene.eevee.taa_render_samples = int(samples or 16)
    elif samples is not None:
        aa = {1: "OFF", 5: "5", 8: "8", 11: "11", 16: "16", 32: "32"}
        scene.display.render_aa = aa[min(aa, key=lambda k: abs(k - int(samples)))]
    r.filepath = path
    res = bpy.ops.render.render(write_still=True, scene=scene.name)
    if "FINISHED" not in res or not os.path.isfile(path):
        raise RuntimeError(f"render did not write {path} ({res})")
    return path
