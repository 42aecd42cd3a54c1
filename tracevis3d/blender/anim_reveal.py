"""A comparison's reveal: the tubes between A's and B's calls appear one after
another, each growing from its A end to its B end, in the order of a measure:

- ``time``: by the A end's position on the time axis (left to right);
- ``change``: the largest change of duration first (|log(B/A)|, the tubes' ``ratio``);
- ``similarity``: the most similar matches first (the tubes' ``similarity``).

Data, as the growth (`animate`): the tube mesh gets the point attributes ``t_reveal`` (the
scene second its tube starts) and ``t_along`` (0 at the A end, 1 at the B end, from the
vertex's height between the tube's top and bottom: A is drawn above B), and a
``TV3D_reveal`` Geometry Nodes modifier (`anim_nodes.reveal_group`) keeps the vertices
whose time has come.  Tubes start over the first 85 % of the animation and each grows
for the rest (at least two frames)."""
from __future__ import annotations

import numpy as np

from .anim_nodes import reveal_group, set_inputs
from .meshobj import set_float_attribute
from .tubes import tube_values

REVEAL_MODIFIER = "TraceVis3D reveal"
ORDERS = ("time", "change", "similarity")


def _tube_object(coll):
    for ob in coll.objects:
        if "tv3d_tubes" in ob and ob.type == "MESH" and len(ob.data.vertices):
            return ob
    raise ValueError("the figure has no tubes to reveal: reveal needs a comparison of two traces")


def reveal(scene, coll, n: int, fps: int, order: str = "time", timing=None) -> dict:
    """Set up the reveal on the comparison's tube mesh (module docstring); its record.
    ``timing(x_a, x_b)``: instead of an order, the scene second each tube starts from the x
    of its A end and of its B end (a comparison's growth: when both its calls have started);
    such tubes grow in two frames."""
    if order not in ORDERS:
        raise ValueError(f"unknown reveal order {order!r}; use {', '.join(ORDERS)}")
    ob = _tube_object(coll)
    me = ob.data
    nv, nf = len(me.vertices), len(me.polygons)
    pos = np.empty(nv * 3, np.float32)
    me.attributes["position"].data.foreach_get("vector", pos)
    pos = pos.reshape(nv, 3)
    corner = np.empty(len(me.loops), np.int32)
    me.attributes[".corner_vert"].data.foreach_get("value", corner)
    face_tube = np.empty(nf, np.int32)
    me.attributes["tube_index"].data.foreach_get("value", face_tube)
    sizes = np.empty(nf, np.int32)
    me.polygons.foreach_get("loop_total", sizes)
    vt = np.zeros(nv, np.int64)
    vt[corner] = np.repeat(face_tube, sizes)
    m = int(face_tube.max()) + 1
    z = pos[:, 2].astype(np.float64)
    top = np.full(m, -np.inf)
    bottom = np.full(m, np.inf)
    np.maximum.at(top, vt, z)
    np.minimum.at(bottom, vt, z)
    # 0 at A .. 0.999 at B: a tube whose progress reaches 1 is whole despite float32 rounding
    along = 0.999 * (top[vt] - z) / np.maximum(top[vt] - bottom[vt], 1e-9)
    at_top, at_bottom = z >= top[vt] - 1e-6, z <= bottom[vt] + 1e-6
    xa = np.full(m, np.inf)
    np.minimum.at(xa, vt[at_top], pos[at_top, 0])
    duration = (n - 1) / fps
    if timing is not None:
        xb = np.full(m, np.inf)
        np.minimum.at(xb, vt[at_bottom], pos[at_bottom, 0])
        grow = 2.0 / fps
        start = np.minimum(np.asarray(timing(xa, xb), np.float64), n / fps - grow)  # whole by the last frame
        order = "growth"
    else:
        if order == "time":
            key = xa
        elif order == "change":
            key = -np.abs(np.log(np.maximum(np.nan_to_num(tube_values(me, "ratio")[:m], nan=1.0), 1e-9)))
        else:
            key = -np.nan_to_num(tube_values(me, "similarity")[:m].astype(np.float64))
        rank = np.empty(m, np.int64)
        rank[np.argsort(key, kind="stable")] = np.arange(m)
        grow = max(0.15 * duration, 2.0 / fps)
        start = 1.0 / fps + rank / max(m - 1, 1) * (duration - grow)
    for name, values in (("t_reveal", start[vt]), ("t_along", along)):
        set_float_attribute(me, name, "POINT", values)
    mod = ob.modifiers.new(REVEAL_MODIFIER, "NODES")
    mod.node_group = reveal_group()
    set_inputs(mod, {"Grow (s)": grow})
    return {"tubes": m, "order": order, "grow_s": grow, "tube_object": ob.name}
