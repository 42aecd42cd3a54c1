"""The main view of the thread view: the focused thread as the straight extruded icicle
(SyncTrace IV-B: main view above the context view), standing as a wall behind the ring.

Built by `layout.icicle.icicle_layout` (the same stages as ``render-icicle``: fold, colour,
clusters, labels, time axis) for the focused thread and the same window, then moved into
place by one uniform scale and translation (so labels keep fitting their boxes): it stands
on the ground behind the ring (above it in the figure, as SyncTrace's main view is above
its context view), wider than the ring (its time axis up to 3.2 ring radii long, so ring
and wall together fill a 16:9 frame) and at most 0.9 ring radii tall.  Its HUD (title, legend) is left out.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .spec import InstanceLayer, LabelSet


@dataclass
class Wall:
    layers: list
    labels: LabelSet
    materials: dict
    bbox_points: np.ndarray  # (8, 3) corners, world
    scale: float


def _bbox(layers) -> tuple:
    lo = np.full(3, np.inf)
    hi = np.full(3, -np.inf)
    for lay in layers:
        if len(lay):
            lo = np.minimum(lo, (lay.positions - 0.5 * lay.scales).min(0))
            hi = np.maximum(hi, (lay.positions + 0.5 * lay.scales).max(0))
    return lo, hi


def focus_wall(trace, focus: int, t0: float, t1: float, ring_radius: float, params, text_px: float):
    """The `Wall` of thread ``focus`` over [t0, t1], or None when it has no call there."""
    from .icicle import icicle_layout
    from .params import IcicleParams

    ip = IcicleParams(threads=[focus], time_window=(t0, t1), color_by="kind", fold="auto",
                      resolution=params.resolution, show_title=False, show_legend=False, show_axes=True,
                      label_px=max(params.label_px, 14.0), elevation=params.elevation * 0.35, extrude_measure="self",
                      max_labels=150)
    try:
        spec = icicle_layout(trace, ip)
    except ValueError:
        return None
    world = [lay for lay in spec.layers if isinstance(lay, InstanceLayer) and lay.space == "world"]
    lo, hi = _bbox([lay for lay in world if lay.name in ("calls", "clusters")])
    if not np.all(np.isfinite(lo)):
        return None
    span = hi - lo
    s = min(3.2 * ring_radius / max(span[0], 1e-9), 0.9 * ring_radius / max(span[2], 1e-9))
    origin = np.array([0.5 * (lo[0] + hi[0]), lo[1], lo[2]])
    offset = np.array([0.0, ring_radius + 8.0, 0.3])

    def move(p):
        return ((np.asarray(p, np.float64) - origin) * s + offset).astype(np.float32)

    layers = [replace(lay, name=f"wall_{lay.name}", positions=move(lay.positions),
                      scales=(lay.scales * s).astype(np.float32)) for lay in world]
    lab = spec.labels
    keep = [k for k, sp in enumerate(lab.space) if sp == "world"]
    labels = LabelSet([lab.texts[k] for k in keep], move(lab.anchors[keep]) if keep else np.zeros((0, 3), np.float32),
                      (lab.sizes[keep] * s).astype(np.float32), [lab.material[k] for k in keep],
                      lab.align[keep], [lab.kind[k] for k in keep], lab.call_index[keep], lab.rotation[keep],
                      ["world"] * len(keep))
    alo, ahi = _bbox(layers)
    corners = np.array([[x, y, z] for x in (alo[0], ahi[0]) for y in (alo[1], ahi[1]) for z in (alo[2], ahi[2])])
    return Wall(layers, labels, dict(spec.materials), corners, float(s))
