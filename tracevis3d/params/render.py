"""What a render writes (the output options every render command and the panel's Render
section share): image file, engine, samples, background, the .blend saved beside it."""
from __future__ import annotations

import os

from .core import Param, Schema
from .kinds import Choice, Flag, Kind, Number

#: file name extension -> Blender's image file format
IMAGE_FORMATS = {".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG", ".exr": "OPEN_EXR", ".tif": "TIFF", ".tiff": "TIFF"}
IMAGE_FORMAT_TEXT = ".png, .jpg/.jpeg, .exr, .tif/.tiff"
DEVICE_ITEMS = (("auto", "Automatic", "A GPU when Blender finds one, else the CPU (said once)"),
                ("cpu", "CPU", "Render on the CPU"),
                ("gpu", "GPU", "Render on a GPU (Cycles: OptiX, CUDA, HIP, Metal or oneAPI); an error without one"))
ENGINE_ITEMS = (("workbench", "Workbench", "Fast, flat-lit preview render"),
                ("eevee", "EEVEE", "Real-time renderer with cushion shading and soft light"),
                ("cycles", "Cycles", "Path tracer (slow without a GPU)"))


def image_format_of(path) -> str:
    """Blender's file format for ``path``'s extension; ValueError naming the file otherwise."""
    ext = os.path.splitext(os.fspath(path))[1].lower()
    if ext not in IMAGE_FORMATS:
        what = f"extension {ext!r}" if ext else "no extension"
        raise ValueError(f"{os.fspath(path)}: {what} is not an image format we write; "
                         "use .png, .jpg/.jpeg, .exr or .tif/.tiff")
    return IMAGE_FORMATS[ext]


class Path(Kind):
    """A file path; ``suffixes``: the extensions it may have (None: any), ``image``: one of
    the image formats; None: not given."""

    metavar = "FILE"
    annotation = str | None

    def __init__(self, image=False, suffix=None, metavar="FILE"):
        self.image, self.suffix, self.metavar = image, suffix, metavar

    def check(self, v, name):
        if v is None:
            return None
        if not isinstance(v, str):
            raise ValueError(f"{name} must be a file path, got {v!r}")
        if self.image:
            image_format_of(v)
        elif self.suffix and not v.endswith(self.suffix):
            raise ValueError(f"{name} needs a {self.suffix} path, got {v}")
        return v

    def parse(self, word):
        return self.check(word, "path")

    def props(self, p):
        from .kinds import prop

        return [prop(p.name, "String", p, default=p.default or "", subtype="FILE_PATH")]

    def from_props(self, p, get):
        return get(p.name).strip() or None

    def to_props(self, p, v, put):
        put(p.name, v or "")


OUTPUT = "output"
RENDER = Schema("render", [
    Param("output", Path(image=True), None, group=OUTPUT, flag="-o/--output", label="Output",
          aliases=(), default_text="required on the command line; the panel: //tracevis3d.png",
          help=f"image to write; its extension names the format: {IMAGE_FORMAT_TEXT}"),
    Param("engine", Choice(ENGINE_ITEMS), "workbench", group=OUTPUT, label="Engine", help="render engine"),
    Param("device", Choice(DEVICE_ITEMS), "auto", group=OUTPUT, label="Device",
          help="what renders: auto (a GPU when Blender finds one, else the CPU), cpu, or gpu (an error "
               "without one); Cycles tries OptiX, CUDA, HIP, Metal, oneAPI"),
    Param("samples", Number(1, 65536, integer=True, optional=True, placeholder=16), None, group=OUTPUT,
          label="Samples", default_text="8, 16, 32 for the three engines",
          help="samples per pixel: Workbench anti-aliasing (1, 5, 8, 11, 16 or 32), EEVEE, Cycles"),
    Param("transparent", Flag(), False, group=OUTPUT, label="Transparent background",
          help="transparent background (.png, .exr, .tif only)"),
    Param("save", Path(suffix=".blend", metavar="SCENE.blend"), None, group=OUTPUT, label="Save scene",
          default_text="not saved", ui=False,  # the panel's scene is saved with File > Save
          help="also save the scene as a .blend that reopens with its trace paths and parameters"),
], doc="What a render writes.")
