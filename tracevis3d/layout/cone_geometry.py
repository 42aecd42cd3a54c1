"""Geometry and labels of the cone tree (bpy-free): spheres, edges, base circles and
partially-expanded stubs as round tubes (`spec.TubeLayer` with a normal cross-section), and
names on the larger nodes facing the camera."""
from __future__ import annotations

import math

import numpy as np

from .camera import camera_basis, euler_xyz, project, world_per_pixel
from .colour import oklch_rgb
from .labels import LEADER_PX, LEADER_RGB
from ..naming import function_table
from .spec import LabelSet, TubeLayer
from .text import ASCENT, DESCENT, cut_end, text_width

EDGE_RGB = tuple(float(c) for c in oklch_rgb(0.62, 0.01, 250.0))
RING_RGB = tuple(float(c) for c in oklch_rgb(0.80, 0.02, 250.0))
PARTIAL_RGB = tuple(float(c) for c in oklch_rgb(0.38, 0.01, 250.0))
SPHERE_SAMPLES = 11
RING_SAMPLES = 49
LABEL_MAX_EM = 18.0


def _tubes(name, centres, half, rgb_rows, material_index, materials, attributes, sides) -> TubeLayer:
    m = centres.shape[0]
    cols = np.ones((m, 4), np.float32)
    cols[:, :3] = rgb_rows
    return TubeLayer(name, centres.astype(np.float32), half.astype(np.float32), half.astype(np.float32), cols,
                     material_index.astype(np.int32), list(materials), attributes, sides=sides,
                     cross_section="normal").validate()


def node_appear_us(first_call, call_start, parent, depth, t0: float) -> np.ndarray:
    """When each drawn node's calling context is first entered (µs from ``t0``, float32):
    the start of its first call (``first_call``: the context's earliest call, -1 for a
    pseudo node such as a thread's root), a pseudo node at its earliest child's time
    (levels from the deepest up; ``parent``/``depth`` of the drawn tree); a node with no call
    below it at 0.  What a cone tree's growth animation reveals nodes by (`blender.animate`)."""
    first_call = np.asarray(first_call, np.int64)
    t = np.where(first_call >= 0, np.asarray(call_start, np.float64)[np.maximum(first_call, 0)] - float(t0), np.inf)
    depth, parent = np.asarray(depth), np.asarray(parent)
    pseudo = first_call < 0
    for d in range(int(depth.max()) if depth.size else 0, 0, -1):
        k = np.flatnonzero(depth == d)
        k = k[pseudo[parent[k]]]
        np.minimum.at(t, parent[k], t[k])
    return np.where(np.isfinite(t), t, 0.0).astype(np.float32)


def sphere_tubes(pos, radius, slot, slot_rgb, slot_names, call_index, cct_node, axis, appear=None) -> TubeLayer:
    """One UV sphere per node: a tube along ``axis`` whose radius is r·sin θ; ``appear``:
    per node `node_appear_us` (the attribute ``t_appear``)."""
    th = np.linspace(0.0, math.pi, SPHERE_SAMPLES)
    centres = pos[:, None, :] - np.cos(th)[None, :, None] * radius[:, None, None] * axis[None, None, :]
    half = np.sin(th)[None, :] * radius[:, None]
    attrs = {"call_index": np.asarray(call_index, np.int32), "cct_node": np.asarray(cct_node, np.int32),
             "match_index": np.arange(pos.shape[0], dtype=np.int32)}  # one run of faces per node (picking)
    attrs.update(_appear(appear, np.arange(pos.shape[0])))
    return _tubes("cone_nodes", centres, half, np.asarray(slot_rgb)[slot], slot, slot_names, attrs, 16)


def _appear(appear, nodes) -> dict:
    """``t_appear`` of the elements drawn for ``nodes`` (none without ``appear``)."""
    if appear is None:
        return {}
    return {"t_appear": np.asarray(appear, np.float32)[np.asarray(nodes, np.int64)].astype(np.float32)}


def _straight(a, b, w0, w1, name, material, rgb, sides=8, attrs=None) -> TubeLayer:
    m = a.shape[0]
    centres = np.stack([a, b], axis=1) if m else np.zeros((0, 2, 3))
    half = np.stack([w0, w1], axis=1) if m else np.zeros((0, 2))
    return _tubes(name, centres, half, np.tile(np.asarray(rgb), (m, 1)), np.zeros(m, np.int32), [material],
                  {"match_index": np.full(m, -1, np.int32), **(attrs or {})}, sides)


def edge_tubes(pos, radius, parent, width, appear=None) -> TubeLayer:
    """Parent → child, surface to surface (appearing with the child)."""
    c = np.flatnonzero(parent >= 0)
    p = parent[c]
    d = pos[c] - pos[p]
    ln = np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-9)
    u = d / ln
    a = pos[p] + u * radius[p][:, None] * 0.9
    b = pos[c] - u * radius[c][:, None] * 0.9
    return _straight(a, b, width[c], width[c], "cone_edges", "TV3D_cone_edge", EDGE_RGB, attrs=_appear(appear, c))


def ring_tubes(pos, base, child_ptr, child_ids, down, width, appear=None) -> TubeLayer:
    """The base circle of every cone with two or more children, at its children's level
    (appearing with its first child)."""
    k = np.flatnonzero((np.diff(child_ptr) >= 2) & (base > 0))
    if abs(down[2]) > 0.5:
        e1, e2 = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
    else:
        e1, e2 = np.array([0.0, 0.0, 1.0]), np.array([0.0, 1.0, 0.0])
    first = child_ids[child_ptr[k]] if k.size else np.zeros(0, np.int64)
    drop = ((pos[first] - pos[k]) @ down)[:, None] * down[None, :] if k.size else np.zeros((0, 3))
    return rings(pos, base, k, drop, e1, e2, width, _appear(appear, first))


def rings(pos, base, k, drop, e1, e2, width, attrs=None) -> TubeLayer:
    """Circles of radius ``base[k]`` around ``pos[k] + drop`` (one drop per circle, or one
    for all) in the plane of ``e1``, ``e2``."""
    ang = np.linspace(0.0, 2 * math.pi, RING_SAMPLES)
    circle = np.cos(ang)[:, None] * e1[None] + np.sin(ang)[:, None] * e2[None]
    circle[-1] = circle[0]
    drop = np.broadcast_to(np.asarray(drop, np.float64).reshape(-1, 3), (k.size, 3))
    centres = pos[k][:, None, :] + drop[:, None, :] + base[k][:, None, None] * circle[None]
    half = np.full(centres.shape[:2], width)
    m = k.size
    return _tubes("cone_rings", centres, half, np.tile(np.asarray(RING_RGB), (m, 1)), np.zeros(m, np.int32),
                  ["TV3D_cone_ring"], {"match_index": np.full(m, -1, np.int32), **(attrs or {})}, 6)


def partial_stubs(pos, radius, partial, down, level_h, appear=None) -> TubeLayer:
    """SEAT's partially-expanded marker: a dark tapering stub from the node on down its axis."""
    k = np.flatnonzero(partial)
    a = pos[k] + down[None] * radius[k][:, None] * 0.8
    b = stub_tips(pos, radius, k, down, level_h)
    w0 = np.maximum(0.3 * radius[k], 0.06)
    return _straight(a, b, w0, 0.25 * w0, "cone_partial", "TV3D_cone_partial", PARTIAL_RGB, 10,
                     attrs=_appear(appear, k))


def stub_tips(pos, radius, k, down, level_h) -> np.ndarray:
    """Where the partially-expanded stubs of nodes ``k`` end (`partial_stubs`)."""
    return pos[k] + down[None] * (radius[k][:, None] + 0.22 * level_h)


def node_label(cct, k_full: int, tail: int | None = None, names: dict | None = None) -> str:
    """A node's name (``name (N× recursive)`` for a folded recursion); a chain of nodes
    (`cone.compress_chains`, ``tail`` its last node) is ``first › last``, ``first › … › last``
    past two nodes; a module body
    (``<module>``, a module running at import) is named by its module, as the icicle names
    it ("main_parser (module)", not one more "<module>").  ``names``: function → its short
    name, filled as names are made (many nodes share a function)."""
    f = int(cct.func[k_full])
    if f < 0:
        return cct.name(k_full)
    name = None if names is None else names.get(f)
    if name is None:  # read with the function's file, as the other views name it (`function_table`)
        table = function_table(cct.trace)
        module, name = table.module[f], table.short[f]
        if name == "<module>" and module:
            name = f"{module.rsplit('.', 1)[-1]} (module)"
        if names is not None:
            names[f] = name
    depth = int(cct.recursion[k_full]) if cct.recursion is not None else 1
    name = f"{name} ({depth}× recursive)" if depth > 1 else name
    if tail is not None and tail != k_full and cct.func[tail] >= 0:
        # nodes between the two are elided: "first › … › last", as the icicle writes a folded
        # chain ("f0 › f2" read as if f0 called f2)
        gap = " › … › " if int(cct.parent[int(tail)]) != int(k_full) else " › "
        return f"{name}{gap}{node_label(cct, int(tail), None, names)}"
    return name


#: a node's name is tried at these places in turn (the first free one is taken): (right, up)
#: of its sphere's centre in units of (sphere radius + `LABEL_GAP_EM` of the text size,
#: the text's size), and how the text is aligned there (0 left, 1 centred, 2 right):
#: right of the sphere, left of it, then above and below it (clear of an edge through its
#: side), then its four corners, then further out right and left
LABEL_PLACES = (
    ((1.0, 0.0), (0.0, 0.0), 0), ((-1.0, 0.0), (0.0, 0.0), 2),
    ((0.0, 1.0), (0.0, DESCENT), 1), ((0.0, -1.0), (0.0, -ASCENT), 1),
    ((0.7, 0.7), (0.0, DESCENT), 0), ((0.7, -0.7), (0.0, -ASCENT), 0),
    ((-0.7, 0.7), (0.0, DESCENT), 2), ((-0.7, -0.7), (0.0, -ASCENT), 2),
    ((1.0, 0.0), (1.5, 0.0), 0), ((-1.0, 0.0), (-1.5, 0.0), 2),
    # a thread's name where none of those is free: further out, with a leader to its sphere
    ((1.0, 0.0), (3.0, 0.0), 0), ((-1.0, 0.0), (-3.0, 0.0), 2),
    ((0.0, 1.0), (0.0, 2.0 + DESCENT), 1), ((0.0, -1.0), (0.0, -2.0 - ASCENT), 1),
    ((0.7, 0.7), (2.0, 2.0 + DESCENT), 0), ((0.7, -0.7), (2.0, -2.0 - ASCENT), 0),
    ((-0.7, 0.7), (-2.0, 2.0 + DESCENT), 2), ((-0.7, -0.7), (-2.0, -2.0 - ASCENT), 2),
    ((1.0, 0.0), (6.0, 0.0), 0), ((-1.0, 0.0), (-6.0, 0.0), 2),
    ((0.0, 1.0), (0.0, 4.0 + DESCENT), 1), ((0.0, -1.0), (0.0, -4.0 - ASCENT), 1),
)
#: the places from this one on are far from the sphere: only the threads named first
#: (`FIRST_THREADS`) take them, and a leader joins the name to its sphere (`label_leaders`)
FAR_PLACES = 10
LABEL_GAP_EM = 0.35
#: a name keeps this much of its text size clear of every edge of the tree
EDGE_CLEAR_EM = 0.12
#: threads named before every call, their names over edges where nothing clear is free
FIRST_THREADS = 12


def label_places(pos, radius, size, r, u, f, eye=None) -> list:
    """The world anchors (a baseline point, `LABEL_PLACES`) of every node's name, one
    (n, 3) array per place: beside, above or below the sphere in the plane through its
    centre that faces the camera (vertically so that a text beside the sphere is centred on
    it, then out by the place's offsets), then brought the sphere's radius nearer the camera
    (the text stands in front of the sphere) along the view ray through it (``eye``: the
    camera's location; None: an orthographic camera, whose rays are ``f``), so it projects
    where its place in the plane does.  (Moved straight along ``f`` under a perspective
    camera, a name off the image's centre slid outwards, onto its own sphere: the cone's
    root at the image's left edge covered the "a" of "all threads".)"""
    gap = radius + LABEL_GAP_EM * size
    centred = pos - np.outer((ASCENT - DESCENT) / 2.0 * size, u)
    out = []
    for (sx, sy), (ex, ey), _ in LABEL_PLACES:
        if sy == 0.0:  # beside the sphere: centred on it vertically
            a = centred + np.outer(sx * gap + ex * size, r)
        else:  # above or below it: the baseline (ey: the descent above, the ascent below) from the sphere's edge
            a = pos + np.outer(sx * gap + ex * size, r) + np.outer(sy * gap + ey * size, u)
        if eye is None:
            a = a - np.outer(radius, f)
        else:
            ray = a - np.asarray(eye, np.float64)
            depth = ray @ np.asarray(f, np.float64)
            a = a - ray * (np.asarray(radius, np.float64) / np.maximum(depth, 1e-9))[:, None]
        out.append(a)
    return out


def cone_labels(cct, pruned, pos, radius, time, cam, res, to_cam, max_labels: int, tpx: float,
                call_of_node, tail=None, rect=None, texts_of: dict | None = None, names: dict | None = None,
                stubs=None) -> LabelSet:
    """Names of the root, the largest threads and the largest nodes (by inclusive time),
    right of their sphere (left of it when the right side is taken), facing the camera,
    ``tpx`` pixels high; a label that would overlap one already placed, another node's
    sphere (it would be hidden or hide it) or leave the image (``rect``: the content rectangle) is skipped (`kernels.cone.place_side_labels`).
    ``tail``: per node, the last node of its chain (`cone.compress_chains`).  ``texts_of``:
    node → its label text and its width in ems, ``names``: function → its short name, filled as names are made
    (the candidate figures of one layout share them).  No name is crossed by an edge of the
    tree, nor by a partially-expanded stub (``stubs``: ``(down, level height)`` of
    `partial_stubs`, None: no stubs drawn), except the root's and the `FIRST_THREADS` largest
    threads' where they find no place clear of them (a thread's node has a fan of edges around it: four of a pool's
    six threads went unnamed)."""
    from ..kernels.cone import place_side_labels

    if max_labels <= 0 or len(pruned) == 0:
        return LabelSet.empty()
    texts_of = {} if texts_of is None else texts_of
    names = {} if names is None else names
    r, u, f = camera_basis(to_cam)
    rot = euler_xyz(r, u, -f)
    wpp = world_per_pixel(cam, pos, res)
    size = tpx * wpp
    # the root and the largest threads first (what the tree is of: `FIRST_THREADS` of them, so
    # a server's 44 request threads do not take the names of its calls), then by inclusive time
    pseudo = np.flatnonzero(np.asarray(call_of_node, np.int64) < 0)
    first = np.zeros(len(pruned), np.bool_)
    first[pseudo[np.argsort(-time[pseudo], kind="stable")[:FIRST_THREADS + 1]]] = True
    order = np.lexsort((np.arange(len(pruned)), -time, ~first))
    centre_px = project(cam, pos, res)
    rad_px = radius / wpp
    w, h = res
    lim = (0.0, 0.0, float(w), float(h)) if rect is None else tuple(float(v) for v in rect)
    # the candidate anchors of every node (`LABEL_PLACES`), projected at once
    cand = np.stack(label_places(pos, radius, size, r, u, f, None if cam.orthographic else cam.location))
    cand_px = project(cam, cand.reshape(-1, 3), res).reshape(cand.shape[0], -1, 2)  # each row on its own
    cand_px[FAR_PLACES:, ~first] = -1e9  # off the image: the far places are the threads' alone
    width = np.empty(len(pruned))
    for k in range(len(pruned)):
        made = texts_of.get(k)
        if made is None:
            text = cut_end(node_label(cct, int(pruned.node[k]), None if tail is None else int(tail[k]), names),
                           LABEL_MAX_EM)
            made = texts_of[k] = (text, text_width(text))
        width[k] = made[1] * tpx
    child = np.flatnonzero(pruned.parent >= 0)  # the edges, centre to centre, and the stubs: no name is crossed
    seg_a, seg_b = centre_px[pruned.parent[child]], centre_px[child]
    part = np.flatnonzero(pruned.partial) if stubs is not None else np.zeros(0, np.int64)
    if part.size:
        seg_a = np.concatenate([seg_a, centre_px[part]])
        seg_b = np.concatenate([seg_b, project(cam, stub_tips(pos, radius, part, *stubs), res)])
    c64 = np.ascontiguousarray
    node, side = place_side_labels(order.astype(np.int64), c64(cand_px[:, :, 0]), c64(cand_px[:, :, 1]),
                                   np.asarray([a for _, _, a in LABEL_PLACES], np.int64), width, ASCENT * tpx,
                                   DESCENT * tpx, np.asarray(lim, np.float64), c64(centre_px[:, 0]),
                                   c64(centre_px[:, 1]), np.asarray(rad_px, np.float64), 0.3 * tpx,
                                   c64(seg_a[:, 0]), c64(seg_a[:, 1]), c64(seg_b[:, 0]), c64(seg_b[:, 1]),
                                   EDGE_CLEAR_EM * tpx, int(max_labels),
                                   first)  # those threads: over an edge if need be
    n = node.size
    texts = [texts_of[int(k)][0] for k in node]
    anchors = cand[side, node] if n else np.zeros((0, 3))
    calls = np.asarray(call_of_node, np.int64)[node]
    # a thread or the root (no call of its own) is named like a lane
    kinds = ["call" if c >= 0 else "lane" for c in calls.tolist()]
    return LabelSet(texts, np.asarray(anchors, np.float32).reshape(n, 3), np.asarray(size[node], np.float32),
                    ["TV3D_text_dark"] * n, np.asarray([a for _, _, a in LABEL_PLACES], np.uint8)[side], kinds,
                    calls.astype(np.int32), np.tile(np.asarray(rot, np.float32), (n, 1)), ["world"] * n,
                    {"cone_node": node.astype(np.int32), "label_place": side.astype(np.int32)})


LEADER_GAP_EM = 0.25  # between a leader's end and its name


def label_leaders(labels: LabelSet, pos, radius, cam, res, to_cam):
    """A straight leader from the sphere of every name at a far place (`FAR_PLACES`) to the
    name's nearest point (its left or right end beside the sphere, the middle of its lower or
    upper edge above or below it, `LEADER_GAP_EM` short of it), `LEADER_PX` wide, starting
    on the sphere's surface towards the name; a CurveLayer "cone_leaders" (material
    ``TV3D_cone_leader``, the node in ``cone_node``), or None without far names."""
    from .spec import CurveLayer

    if not len(labels) or "label_place" not in (labels.attributes or {}):
        return None
    far = np.flatnonzero(labels.attributes["label_place"] >= FAR_PLACES)
    if far.size == 0:
        return None
    r, u, f = camera_basis(to_cam)
    node = labels.attributes["cone_node"][far].astype(np.int64)
    place = labels.attributes["label_place"][far]
    size = labels.sizes[far].astype(np.float64)
    sy = np.array([LABEL_PLACES[k][0][1] for k in place.tolist()])
    up = np.where(sy > 0, -DESCENT, np.where(sy < 0, ASCENT, 0.5 * (ASCENT - DESCENT)))
    end = labels.anchors[far].astype(np.float64) + (up * size)[:, None] * u[None]
    p = np.asarray(pos, np.float64)[node]
    way = end - p
    way -= np.outer(way @ f, f)  # in the plane facing the camera
    dist = np.maximum(np.linalg.norm(way, axis=1), 1e-12)
    way /= dist[:, None]
    rad = np.asarray(radius, np.float64)[node]
    start = p + way * rad[:, None] - np.outer(rad, f)  # on the sphere, its side towards the camera
    stop = end - way * (LEADER_GAP_EM * size)[:, None]
    ok = np.einsum("ij,ij->i", stop - start, way) > 0  # a name farther than its sphere's edge
    if not ok.any():
        return None
    start, stop, way, node = start[ok], stop[ok], way[ok], node[ok]
    m = node.size
    wpp = world_per_pixel(cam, 0.5 * (start + stop), res)
    across = np.cross(way, f) * (0.5 * LEADER_PX * wpp)[:, None]
    line = np.stack([start, stop], 1)
    col = np.ones((m, 4), np.float32)
    col[:, :3] = LEADER_RGB
    return CurveLayer("cone_leaders", (line - across[:, None]).astype(np.float32),
                      (line + across[:, None]).astype(np.float32), col, np.zeros(m, np.int32),
                      ["TV3D_cone_leader"], {"cone_node": node.astype(np.int32)})
