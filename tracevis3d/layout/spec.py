"""SceneSpec: what a layout hands to the Blender writer — arrays only (bpy-free).

A SceneSpec is generic: the Blender layer (`tracevis3d.blender.writer`) writes any
SceneSpec without knowing which layout produced it.

- `InstanceLayer`: one point cloud of box instances.  ``positions`` are box centres,
  ``scales`` full box sizes (x, y, z), ``colors`` linear RGBA, ``material_index`` an
  index into the layer's ``materials`` (names in `SceneSpec.materials`); further named
  per-instance attributes in ``attributes`` (always ``call_index`` int32 so a picked box
  maps back to a call; -1 where there is none).
- `LabelSet`: text labels; anchor is the text's baseline reference point, ``align``
  0=left, 1=centre, 2=right; ``rotation`` the XYZ Euler angles (radians) that turn a text
  lying in its local XY plane (normal +Z) into place (texts are planar).
- ``space``: ``"world"`` (the default) or ``"camera"``: a camera-space layer or label set
  (the title and legend, a heads-up display) has its coordinates in the camera's local
  frame (x right, y up, looking down -z) and is parented to the camera, so it stays
  framed when the camera moves.
- `MaterialSpec`: name, base colour (what Workbench shows) and flags for the node
  material (``cushion``: van Wijk cushion profile across the box; ``from_attribute``:
  colour read from the instance attribute ``color``).
- `CameraSpec`, `LightSpec`: a suggestion that frames the scene.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class MaterialSpec:
    name: str
    color: tuple  # linear RGBA
    kind: str = "box"  # box | cluster | text | legend
    cushion: bool = True
    from_attribute: bool = True
    emission: float = 0.0
    gloss: float = 0.0  # tubes: 0 matte … 1 a sharp, bright specular highlight (EEVEE, Cycles)
    #: tubes: translucency blended (smooth in EEVEE; thin lines that never hide one another)
    #: instead of dithered (noisy at a few samples, but no sorting artefacts in dense bundles)
    blended: bool = False


@dataclass
class InstanceLayer:
    name: str
    positions: np.ndarray  # (n,3) float32, box centres
    scales: np.ndarray  # (n,3) float32, full box sizes
    colors: np.ndarray  # (n,4) float32, linear RGBA
    material_index: np.ndarray  # (n,) int32 into `materials`
    materials: list  # material names (into SceneSpec.materials)
    attributes: dict = field(default_factory=dict)  # name -> (n,) int32/float32 array
    space: str = "world"  # "world" | "camera"

    def __len__(self) -> int:
        return int(self.positions.shape[0])

    def pruned(self) -> "InstanceLayer":
        """The layer with only the materials its boxes use (``material_index`` remapped, order
        kept): Blender's instancer (`blender.writer.build_instancer_group`) has a branch per
        material listed, each a pass over every point when the scene is evaluated.  For a
        figure whose materials never change after it is written (not the live view's
        chunks, which take new calls of any colour)."""
        used = np.unique(self.material_index)
        if used.size == len(self.materials):
            return self
        remap = np.full(len(self.materials), -1, np.int32)
        remap[used] = np.arange(used.size, dtype=np.int32)
        return InstanceLayer(self.name, self.positions, self.scales, self.colors, remap[self.material_index],
                             [self.materials[int(k)] for k in used], self.attributes, self.space)

    def validate(self) -> "InstanceLayer":
        n = len(self)
        checks = {
            "positions": (self.positions, np.float32, (n, 3)),
            "scales": (self.scales, np.float32, (n, 3)),
            "colors": (self.colors, np.float32, (n, 4)),
            "material_index": (self.material_index, np.int32, (n,)),
        }
        for key, (a, dt, shape) in checks.items():
            if a.dtype != dt or a.shape != shape:
                raise ValueError(f"layer {self.name!r}: {key} must be {np.dtype(dt)} {shape}, "
                                 f"got {a.dtype} {a.shape}")
        for key, a in self.attributes.items():
            if a.shape[0] != n or a.dtype not in (np.int32, np.float32):
                raise ValueError(f"layer {self.name!r}: attribute {key!r} must be int32/float32 "
                                 f"of length {n}, got {a.dtype} {a.shape}")
        if self.space not in ("world", "camera"):
            raise ValueError(f"layer {self.name!r}: space must be 'world' or 'camera', got {self.space!r}")
        if n and (self.material_index.min() < 0 or self.material_index.max() >= len(self.materials)):
            raise ValueError(f"layer {self.name!r}: material_index outside its {len(self.materials)} materials")
        return self


@dataclass
class TubeLayer:
    """Swept tubes (TraceDiff IV-C): ``centres`` (m, s, 3) float32 sampled centre curves,
    ``half_x`` / ``half_y`` (m, s) float32 half-widths along x (time) and y (depth) of each
    elliptic cross-section (`kernels.tubes.tube_mesh`); per tube ``colors`` (m, 4) linear
    RGBA, ``material_index`` (m,) int32 into ``materials``, and named int32/float32
    ``attributes`` (always ``match_index``; colour-mode bins ``bin_<mode>`` let the writer
    switch modes by material index, without rebuilding).  ``sides``: sides of every
    cross-section, one number or one per tube (int32 (m,): thin tubes need fewer)."""

    name: str
    centres: np.ndarray
    half_x: np.ndarray
    half_y: np.ndarray
    colors: np.ndarray
    material_index: np.ndarray
    materials: list
    attributes: dict = field(default_factory=dict)
    sides: object = 8  # int, or int32 (m,)
    face_colors: bool = True  # write ``colors`` per face (False: the materials carry the colours)
    ring_tolerance: float = 0.0  # world units: rings the tube does not need at this size are left out
    space: str = "world"
    cross_section: str = "horizontal"  # "horizontal" (TraceDiff tubes) | "normal" (round in any direction)

    def __len__(self) -> int:
        return int(self.centres.shape[0])

    def sides_per_tube(self) -> np.ndarray:
        """int32 (m,): the sides of each tube's cross-section."""
        return np.ascontiguousarray(np.broadcast_to(np.asarray(self.sides, np.int32), (len(self),)))

    def validate(self) -> "TubeLayer":
        m = len(self)
        if self.centres.dtype != np.float32 or self.centres.ndim != 3 or self.centres.shape[2] != 3:
            raise ValueError(f"tubes {self.name!r}: centres must be float32 (m, s, 3), got "
                             f"{self.centres.dtype} {self.centres.shape}")
        s = self.centres.shape[1]
        if m and s < 2:
            raise ValueError(f"tubes {self.name!r}: need at least 2 samples per tube, got {s}")
        for key, a in (("half_x", self.half_x), ("half_y", self.half_y)):
            if a.dtype != np.float32 or a.shape != (m, s):
                raise ValueError(f"tubes {self.name!r}: {key} must be float32 {(m, s)}, got {a.dtype} {a.shape}")
        if self.colors.dtype != np.float32 or self.colors.shape != (m, 4):
            raise ValueError(f"tubes {self.name!r}: colors must be float32 {(m, 4)}")
        if self.material_index.dtype != np.int32 or self.material_index.shape != (m,):
            raise ValueError(f"tubes {self.name!r}: material_index must be int32 {(m,)}")
        if m and (self.material_index.min() < 0 or self.material_index.max() >= len(self.materials)):
            raise ValueError(f"tubes {self.name!r}: material_index outside its {len(self.materials)} materials")
        for key, a in self.attributes.items():
            if a.shape[0] != m or a.dtype not in (np.int32, np.float32):
                raise ValueError(f"tubes {self.name!r}: attribute {key!r} must be int32/float32 of length {m}")
        sides = np.asarray(self.sides)
        if sides.ndim > 1 or (sides.ndim == 1 and sides.shape != (m,)):
            raise ValueError(f"tubes {self.name!r}: sides must be one number or one per tube ({m},)")
        if sides.size and not (3 <= sides.min() and sides.max() <= 64):
            raise ValueError(f"tubes {self.name!r}: sides must be within 3..64")
        if self.cross_section not in ("horizontal", "normal"):
            raise ValueError(f"tubes {self.name!r}: cross_section must be 'horizontal' or 'normal'")
        return self


def _check_rows(what: str, arrays: dict, n: int, attributes: dict, material_index, materials) -> None:
    for key, (a, shape) in arrays.items():
        if a.dtype != np.float32 or a.shape != shape:
            raise ValueError(f"{what}: {key} must be float32 {shape}, got {a.dtype} {a.shape}")
    if material_index.dtype != np.int32 or material_index.shape != (n,):
        raise ValueError(f"{what}: material_index must be int32 {(n,)}")
    if n and (material_index.min() < 0 or material_index.max() >= len(materials)):
        raise ValueError(f"{what}: material_index outside its {len(materials)} materials")
    for key, a in attributes.items():
        if a.shape[0] != n or a.dtype not in (np.int32, np.float32):
            raise ValueError(f"{what}: attribute {key!r} must be int32/float32 of length {n}")


@dataclass
class SectorLayer:
    """Bent boxes on rings (bended icicles, SyncTrace IV-B; hierarchy rings): per sector
    ``angles`` (n, 2) float32 [a0, a1] radians counter-clockwise from +x around ``centre``
    (x, y), ``radii`` (n, 2) float32 [r0, r1], ``heights`` (n, 2) float32 [z0, z1]; per
    sector ``colors`` (n, 4) linear RGBA, ``material_index`` into ``materials`` and named
    int32/float32 ``attributes`` (always ``call_index``, -1 where none).  The writer makes
    one mesh; an arc is cut into segments of at most ``segment_deg`` degrees.  ``plane``:
    ``ground`` (the ring in the x-y plane, heights along +z) or ``front`` (upright in the
    figure's front plane: local (x, y, h) → (x, h, −y), heights into the picture, see
    `layout.ring.FRONT`), then moved by ``origin``; ``stretch`` widens the rings along local x
    first (a half-ellipse, `layout.ring.RingPlacement`)."""

    name: str
    angles: np.ndarray
    radii: np.ndarray
    heights: np.ndarray
    colors: np.ndarray
    material_index: np.ndarray
    materials: list
    attributes: dict = field(default_factory=dict)
    centre: tuple = (0.0, 0.0)
    segment_deg: float = 2.0
    space: str = "world"
    plane: str = "ground"
    origin: tuple = (0.0, 0.0, 0.0)
    stretch: float = 1.0

    def __len__(self) -> int:
        return int(self.angles.shape[0])

    def placed(self, vertices: np.ndarray) -> np.ndarray:
        """World coordinates of vertices made in the ring's own plane (``stretch``, ``plane``,
        ``origin``)."""
        v = np.asarray(vertices, np.float64)
        if self.stretch != 1.0:
            v = v * np.array([self.stretch, 1.0, 1.0])
        if self.plane == "front":
            v = np.stack([v[:, 0], v[:, 2], -v[:, 1]], axis=1)
        return v + np.asarray(self.origin, np.float64)

    def validate(self) -> "SectorLayer":
        if self.plane not in ("ground", "front"):
            raise ValueError(f"sectors {self.name!r}: plane must be 'ground' or 'front', got {self.plane!r}")
        n = len(self)
        _check_rows(f"sectors {self.name!r}", {"angles": (self.angles, (n, 2)), "radii": (self.radii, (n, 2)),
                                               "heights": (self.heights, (n, 2)), "colors": (self.colors, (n, 4))},
                    n, self.attributes, self.material_index, self.materials)
        if n and (np.any(self.radii[:, 1] < self.radii[:, 0]) or np.any(self.radii < 0)):
            raise ValueError(f"sectors {self.name!r}: radii must be 0 <= r0 <= r1")
        if not 0.05 <= float(self.segment_deg) <= 45.0:
            raise ValueError(f"sectors {self.name!r}: segment_deg must be within 0.05..45")
        return self


@dataclass
class CurveLayer:
    """Thin filled curves (correspondences, call relations): curve k is the ribbon between
    the polylines ``left[k]`` and ``right[k]`` ((m, s, 3) float32 world points, s >= 2; a
    line is a ribbon whose sides are a pixel apart); per curve ``colors`` (m, 4) linear RGBA
    (alpha: semi-transparency), ``material_index`` into ``materials`` and named int32/float32
    ``attributes`` (e.g. ``corr_index``, ``wait_call``, ``release_call``).  The writer makes
    one mesh whose faces carry their curve's attributes."""

    name: str
    left: np.ndarray
    right: np.ndarray
    colors: np.ndarray
    material_index: np.ndarray
    materials: list
    attributes: dict = field(default_factory=dict)
    space: str = "world"

    def __len__(self) -> int:
        return int(self.left.shape[0])

    def validate(self) -> "CurveLayer":
        m = len(self)
        s = self.left.shape[1] if self.left.ndim == 3 else 0
        _check_rows(f"curves {self.name!r}", {"left": (self.left, (m, s, 3)), "right": (self.right, (m, s, 3)),
                                              "colors": (self.colors, (m, 4))},
                    m, self.attributes, self.material_index, self.materials)
        if m and s < 2:
            raise ValueError(f"curves {self.name!r}: need at least 2 samples per curve, got {s}")
        return self


@dataclass
class ImageLayer:
    """An image on a flat rectangle (the EXTRAVIS sequence view's mural): ``pixels`` (h, w, 4)
    float32 linear RGBA, top row first; the rectangle's top-left corner ``origin`` and its
    edge vectors ``u`` (along a row, left to right) and ``v`` (down the image), world units.
    The writer makes one quad with an image-textured material, sampled without filtering;
    ``attributes`` are stored on the object (int32/float32 arrays, e.g. the call of every row)."""

    name: str
    pixels: np.ndarray
    origin: tuple
    u: tuple
    v: tuple
    materials: list = field(default_factory=list)
    attributes: dict = field(default_factory=dict)
    space: str = "world"

    def __len__(self) -> int:
        return 1

    def validate(self) -> "ImageLayer":
        p = self.pixels
        if p.dtype != np.float32 or p.ndim != 3 or p.shape[2] != 4 or p.shape[0] < 1 or p.shape[1] < 1:
            raise ValueError(f"image {self.name!r}: pixels must be float32 (h, w, 4), got {p.dtype} {p.shape}")
        for key in ("origin", "u", "v"):
            if np.shape(getattr(self, key)) != (3,):
                raise ValueError(f"image {self.name!r}: {key} must be a 3-vector")
        return self


#: a label attribute: the label is a halo, its glyphs' outlines moved out by this many millionths
#: of its size (Blender's ``TextCurve.offset``), drawn just behind a text of the same words (-1: none)
HALO_KEY = "halo_offset_ppm"


@dataclass
class LabelSet:
    texts: list  # str per label
    anchors: np.ndarray  # (n,3) float32
    sizes: np.ndarray  # (n,) float32, text height in world units
    material: list  # material name per label
    align: np.ndarray  # (n,) uint8: 0 left, 1 centre, 2 right
    kind: list  # names: "call" | "run" | "row" | "group"; "cluster" (a count), "fold", "lane", "legend", "axis", "title",
    # "halo" (`HALO_KEY`)
    call_index: np.ndarray  # (n,) int32, -1 when not about a call
    rotation: np.ndarray = None  # (n,3) float32 XYZ Euler; None = upright, facing -y
    space: list = None  # "world" | "camera" per label; None = all world
    attributes: dict = None  # name -> (n,) int32 per label, stored on its object (e.g. element_index)

    def __post_init__(self):
        n = len(self.texts)
        if self.rotation is None:
            self.rotation = np.tile(np.array([np.pi / 2, 0.0, 0.0], np.float32), (n, 1))
        if self.space is None:
            self.space = ["world"] * n
        if self.attributes is None:
            self.attributes = {}

    def __len__(self) -> int:
        return len(self.texts)

    def validate(self) -> "LabelSet":
        n = len(self.texts)
        for key, a, shape in (("anchors", self.anchors, (n, 3)), ("sizes", self.sizes, (n,)),
                              ("rotation", self.rotation, (n, 3)), ("align", self.align, (n,)),
                              ("call_index", self.call_index, (n,))):
            if np.shape(a) != shape:
                raise ValueError(f"labels: {key} must have shape {shape}, got {np.shape(a)}")
        for key, v in (("material", self.material), ("kind", self.kind), ("space", self.space)):
            if len(v) != n:
                raise ValueError(f"labels: {key} must have {n} entries, got {len(v)}")
        for key, a in self.attributes.items():
            if np.shape(a) != (n,) or np.asarray(a).dtype != np.int32:
                raise ValueError(f"labels: attribute {key!r} must be int32 of shape {(n,)}")
        bad = set(self.space) - {"world", "camera"}
        if bad:
            raise ValueError(f"labels: space must be 'world' or 'camera', got {sorted(bad)}")
        return self

    @classmethod
    def empty(cls) -> "LabelSet":
        return cls([], np.zeros((0, 3), np.float32), np.zeros(0, np.float32), [],
                   np.zeros(0, np.uint8), [], np.zeros(0, np.int32))

    @classmethod
    def concat(cls, parts: list) -> "LabelSet":
        parts = [p for p in parts if len(p)]
        if not parts:
            return cls.empty()
        return cls(
            [t for p in parts for t in p.texts],
            np.concatenate([p.anchors for p in parts]).astype(np.float32),
            np.concatenate([p.sizes for p in parts]).astype(np.float32),
            [m for p in parts for m in p.material],
            np.concatenate([p.align for p in parts]).astype(np.uint8),
            [k for p in parts for k in p.kind],
            np.concatenate([p.call_index for p in parts]).astype(np.int32),
            np.concatenate([p.rotation for p in parts]).astype(np.float32),
            [s for p in parts for s in p.space],
            {key: np.concatenate([p.attributes.get(key, np.full(len(p), -1, np.int32)) for p in parts]).astype(np.int32)
             for key in sorted({k for p in parts for k in p.attributes})},
        )


@dataclass
class LegendEntry:
    name: str
    color: tuple  # linear RGB(A)
    kind: str = "swatch"  # "swatch" | "note" (text without a swatch)


@dataclass
class CameraSpec:
    location: tuple
    target: tuple
    up: tuple = (0.0, 0.0, 1.0)
    orthographic: bool = False
    lens_mm: float = 50.0
    sensor_width_mm: float = 36.0
    ortho_scale: float = 10.0
    clip_start: float = 0.1
    clip_end: float = 1000.0
    shift_x: float = 0.0  # Blender's lens shift, in units of the larger image side
    shift_y: float = 0.0


@dataclass
class LightSpec:
    name: str
    type: str  # SUN | AREA | POINT
    direction: tuple  # direction the light travels (world)
    energy: float
    location: tuple = (0.0, 0.0, 0.0)


@dataclass
class SceneSpec:
    layers: list  # InstanceLayer, TubeLayer, SectorLayer, CurveLayer, ImageLayer
    labels: LabelSet
    legend: list  # LegendEntry
    materials: dict  # name -> MaterialSpec
    camera: CameraSpec
    lights: list  # LightSpec
    resolution: tuple = (1920, 1080)
    background: tuple = (1.0, 1.0, 1.0)  # linear RGB
    meta: dict = field(default_factory=dict)

    def layer(self, name: str) -> InstanceLayer:
        for lay in self.layers:
            if lay.name == name:
                return lay
        raise KeyError(f"no layer {name!r}; layers: {[x.name for x in self.layers]}")

    def validate(self) -> "SceneSpec":
        for lay in self.layers:
            lay.validate()
            for m in lay.materials:
                if m not in self.materials:
                    raise ValueError(f"layer {lay.name!r} uses unknown material {m!r}")
        self.labels.validate()
        for m in set(self.labels.material):
            if m not in self.materials:
                raise ValueError(f"labels use unknown material {m!r}")
        return self

    @property
    def n_instances(self) -> int:
        return sum(len(x) for x in self.layers)
