"""Which device renders (``--device auto|cpu|gpu``, the panel's Render section).

Cycles looks for a GPU through its add-on preferences
(``bpy.context.preferences.addons['cycles'].preferences``), trying the compute back-ends
OPTIX, CUDA, HIP, METAL and ONEAPI in that order (the ones this Blender build knows);
the first with a device that is not the CPU is used, all its GPUs enabled.  Workbench
and EEVEE always draw with Blender's GPU back-end (OpenGL/Vulkan/Metal, or a software
rasteriser where the machine has no GPU); for them the same search only says whether
there is a GPU to draw on.

- ``cpu``: Cycles on the CPU;
- ``gpu``: a GPU, or `NoGPUError` (one line; the command line exits with code 2);
- ``auto``: a GPU when there is one, else the CPU, and `choose_device` says so.
"""
from __future__ import annotations

BACKENDS = ("OPTIX", "CUDA", "HIP", "METAL", "ONEAPI")
_FOUND: dict = {}  # the search's result, once per process


class NoGPUError(ValueError):
    """``--device gpu`` on a machine where Blender finds no GPU."""


def find_gpu() -> tuple:
    """(back-end, [device names]) of the first compute back-end with a GPU, or (None, [])."""
    if "gpu" in _FOUND:
        return _FOUND["gpu"]
    import bpy

    found: tuple = (None, [])
    try:
        prefs = bpy.context.preferences.addons["cycles"].preferences
    except (KeyError, AttributeError):
        prefs = None
    if prefs is not None:
        known = {i.identifier for i in prefs.bl_rna.properties["compute_device_type"].enum_items}
        # Blender prints "CUEW initialization failed" where there is no CUDA: callers run this
        # inside `render.quiet_blender_output`
        for backend in BACKENDS:
            if backend not in known:
                continue
            try:
                prefs.compute_device_type = backend
                prefs.refresh_devices()
                gpus = [d for d in prefs.devices if d.type == backend]
            except (TypeError, RuntimeError, AttributeError):
                continue
            if gpus:
                found = (backend, [d.name for d in gpus])
                break
        else:
            prefs.compute_device_type = "NONE"
    _FOUND["gpu"] = found
    return found


def choose_device(scene, device: str = "auto", engine: str | None = None) -> str:
    """Set ``scene`` to render on ``device`` ("auto", "cpu", "gpu"); the sentence saying
    which device renders.  `NoGPUError` when ``gpu`` is asked for and there is none."""
    import bpy

    device = (device or "auto").lower()
    if device not in ("auto", "cpu", "gpu"):
        raise ValueError(f"device must be auto, cpu or gpu, got {device!r}")
    engine = engine or scene.render.engine
    cycles = engine == "CYCLES"
    backend, names = (None, []) if device == "cpu" else find_gpu()
    if device == "gpu" and backend is None:
        raise NoGPUError("--device gpu: Blender finds no GPU here (tried "
                         f"{', '.join(BACKENDS)}); use --device cpu or auto")
    if backend is not None:
        prefs = bpy.context.preferences.addons["cycles"].preferences
        prefs.compute_device_type = backend
        for d in prefs.devices:
            d.use = d.type == backend
        if cycles:
            scene.cycles.device = "GPU"
        what = f"GPU ({backend}: {', '.join(names)})"
    else:
        if cycles:
            scene.cycles.device = "CPU"
        what = "CPU"
    if device == "auto" and backend is None:
        return "device: CPU (auto: Blender finds no GPU here)"
    if not cycles and backend is not None:
        return f"device: {what} through Blender's GPU back-end"
    return f"device: {what}"
