"""The icicle's detail inset in a growth (`layout.inset`): its boxes carry their own
``t_start``/``t_end`` on the figure's clock (the layout writes them: the inset's x axis is
not the figure's), so they take the growth modifier as they are; its names are timed on
its own time axis, ``x = x_origin + world_per_us · (t − t_offset)`` (the build record's
``meta["inset"]``)."""
from __future__ import annotations

from ..layout.inset import INSET_ATTRIBUTE, PREFIX
from .anim_nodes import GROWTH_MODIFIER, set_inputs


def inset_boxes(boxes: dict) -> tuple:
    """(the inset's box layers, the others) of ``boxes`` (layer name → (object, …))."""
    inset = {k: v for k, v in boxes.items() if k.startswith(PREFIX)}
    return inset, {k: v for k, v in boxes.items() if k not in inset}


def grow_inset(objects, group, clock: dict) -> None:
    """The growth modifier (node group ``group``, inputs ``clock``) on every inset object
    that carries its times, first in its stack (before its instancer)."""
    for ob in objects:
        if "t_start" in ob.data.attributes:
            mod = ob.modifiers.new(GROWTH_MODIFIER, "NODES")
            mod.node_group = group
            set_inputs(mod, clock)
            ob.modifiers.move(len(ob.modifiers) - 1, 0)


def inset_labels(labels: list) -> tuple:
    """(the inset's name objects, the others) of ``labels``."""
    mine = [ob for ob in labels if ob.get(INSET_ATTRIBUTE, -1) == 1]
    return mine, [ob for ob in labels if ob.get(INSET_ATTRIBUTE, -1) != 1]


def inset_label_times(labels: list, inset: dict) -> list:
    """When each of the inset's names shows (µs on the figure's clock): once the inset's
    boxes have grown past the end of its text."""
    k, x0, dt = float(inset["world_per_us"]), float(inset["x_origin"]), float(inset["t_offset"])
    out = []
    for ob in labels:
        share = {"LEFT": 1.0, "CENTER": 0.5}.get(ob.data.align_x, 0.0)
        end_x = ob.location.x + share * 0.55 * len(ob.data.body) * ob.data.size
        out.append((end_x - x0) / k + dt)
    return out
