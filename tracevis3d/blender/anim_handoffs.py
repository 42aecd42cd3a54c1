"""The thread view's hand-offs: every correspondence curve (a wait and the call
that released it), its release circle and the compound curves appear when the clock
reaches the moment the wait ended, on the rings that stay in place.

Data, as the growth (`animate`): the curve meshes' faces get the attribute ``t_handoff``
(µs from the window's start: the end of the curve's wait call; a release circle takes its
correspondence's), and a ``TV3D_handoffs`` Geometry Nodes modifier
(`anim_nodes.handoff_group`) deletes the faces whose time has not come, with the clock of
the growth (linear or eased, retimed in the modifier panel)."""
from __future__ import annotations

import numpy as np

from .anim_nodes import handoff_group, set_inputs
from .meshobj import set_float_attribute

HANDOFF_MODIFIER = "TraceVis3D handoffs"
CURVE_LAYERS = ("corr", "corr_compound", "release_circles")


def _face_ints(me, name: str):
    a = me.attributes.get(name)
    if a is None or a.domain != "FACE":
        return None
    out = np.empty(len(me.polygons), np.int32)
    a.data.foreach_get("value", out)
    return out


def handoffs(coll, clock: dict, call_end, t0: float) -> dict:
    """Set up the hand-offs on the thread view's curve layers in ``coll``; ``call_end``: the
    trace's call end times (µs, float64, by call index), ``t0``: the window's start."""
    obs = {ob["tv3d_layer"]: ob for ob in coll.objects
           if ob.get("tv3d_layer") in CURVE_LAYERS and ob.type == "MESH" and len(ob.data.polygons)}
    if "corr" not in obs and "corr_compound" not in obs:
        raise ValueError("the thread view shows no hand-offs (no wait was released by a shown thread)")
    end = np.asarray(call_end, np.float64)
    corr_ids, corr_t = np.zeros(0, np.int64), np.zeros(0)
    group = handoff_group()
    n_faces = 0
    for name in ("corr_compound", "corr", "release_circles"):  # circles look their time up in the curves
        ob = obs.get(name)
        if ob is None:
            continue
        me = ob.data
        wait = _face_ints(me, "wait_call")
        corr = _face_ints(me, "corr_index")
        if wait is not None:
            t = np.where(wait >= 0, end[np.clip(wait, 0, len(end) - 1)] - t0, 0.0)
            if corr is not None and name == "corr":
                corr_ids, corr_t = corr.astype(np.int64), t
        elif corr is not None and corr_ids.size:
            order = np.argsort(corr_ids, kind="stable")
            at = np.clip(np.searchsorted(corr_ids[order], corr), 0, corr_ids.size - 1)
            t = np.where(corr_ids[order][at] == corr, corr_t[order][at], 0.0)
        else:
            t = np.zeros(len(me.polygons))
        set_float_attribute(me, "t_handoff", "FACE", t)
        mod = ob.modifiers.new(HANDOFF_MODIFIER, "NODES")
        mod.node_group = group
        set_inputs(mod, clock)
        n_faces += len(me.polygons)
    return {"handoff_layers": sorted(obs), "handoff_faces": n_faces}
