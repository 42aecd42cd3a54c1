"""Cutaways (survey seed 003, Sec. 4.3: the remedy for occlusion in 3D views;
bpy-free): a box aligned with the camera that holds everything between the camera
and a chosen call or lane, so the Blender side (`blender.cutaway`) removes it in the
viewport and in renders.

The target's box (a drawn call: its slot's x range, height and extrusion; a lane: the
whole lane) seen from the camera spans a pyramid with its apex at the camera (a prism for
an orthographic camera): aimed at the target's centre, as wide as the target's image
widened by `MARGIN` (and `MIN_MARGIN_PX` pixels), and reaching to just before the target's
nearest corner.  Everything whose centre lies inside stands between the camera and the
target; only that is removed (instances whole), so the target itself, whose centre lies
behind its front, stays.  The pyramid is an Empty (``location`` the camera, ``rotation``
its axes, ``scale`` the half-width, half-height and length) so a presenter moves or
reshapes it, and `blender.cutaway.animate_reveal` grows it from the camera to the target.
"""
from __future__ import annotations

import numpy as np

from ..params.trace_kinds import parse_cutaway
from .camera import camera_basis, euler_xyz

MARGIN = 0.15
MIN_MARGIN_PX = 12.0
GAP = 1e-3  # of the distance to the target: the cut stops just before it


def not_drawn(call_text: str) -> ValueError:
    """The error of a cutaway whose call has no box in the figure."""
    return ValueError(f"cutaway: {call_text} is not drawn in this figure (hidden, folded away, outside the window "
                      "or the threads shown)")


def target_box(target: tuple, sel, d, frame, params, call_text: str | None = None) -> np.ndarray:
    """(2, 3) world corners (min, max) of the target: ("call", loaded-trace index) or
    ("lane", name or index); ``call_text`` names the call in errors (default "call N")."""
    what, ref = target
    L = float(params.time_length)
    if what == "call":
        rows = np.flatnonzero(d.call_id == int(ref))
        if rows.size == 0:
            raise not_drawn(call_text or f"call {ref}")
        r = int(rows[0])
        x0 = (float(d.start[r]) - sel.t0) * frame.scale_t
        x1 = (float(d.end[r]) - sel.t0) * frame.scale_t
        return np.array([[x0, 0.0, d.bottom[r]], [max(x1, x0 + 1e-6), d.ext[r], d.bottom[r] + d.height[r]]])
    names = list(sel.lane_names)
    block = block_by_name(sel, ref)
    if block is not None:  # a block of one kind's lanes, by the one name the figure gives it
        z = [float(frame.z_base[k]) for k in block] + [float(frame.z_base[k] + frame.lane_heights[k]) for k in block]
        return np.array([[0.0, 0.0, min(z)], [L, frame.depth, max(z)]])
    lane = sel.lane_of(ref) if isinstance(ref, int) else lane_by_name(sel, ref)
    if lane < 0:
        raise ValueError(f"cutaway: no lane {ref!r}; lanes: {', '.join(names)}")
    zb = float(frame.z_base[lane])
    return np.array([[0.0, 0.0, zb], [L, frame.depth, zb + float(frame.lane_heights[lane])]])


def block_by_name(sel, ref) -> tuple | None:
    """The first and last lane of the block of one kind's lanes (`lane_blocks.lane_name_runs`) that
    ``ref`` names as the figure does ("5000× handle", "5000× handle in 21 lanes"), or None."""
    from .lane_blocks import block_name, lane_name_runs

    if not isinstance(ref, str):
        return None
    for run in lane_name_runs(sel):
        if ref in (run[2], block_name(run)):
            return run[0], run[1]
    return None


def lane_by_name(sel, ref: str) -> int:
    """The lane named ``ref`` (-1: none): by its whole name, else by one of its threads' own
    names ("CrBrowserMain" for "Browser: CrBrowserMain", a packed lane's later thread); a
    ValueError naming the lanes when ``ref`` names threads in several (three renderers'
    "CrRendererMain": never one of them silently)."""
    names = list(sel.lane_names)
    if ref in names:
        return names.index(ref)
    tr = sel.trace
    counts = tr.thread_name_counts()
    found = sorted({k for k, m in enumerate(sel.members) for t in m
                    if ref in (tr.thread_names[t], tr.thread_label(int(t), len(names), counts))})
    if len(found) > 1:
        raise ValueError(f"cutaway: {ref!r} names threads in {len(found)} lanes: "
                         f"{', '.join(names[k] for k in found)}; give the lane's whole name or lane:N")
    return found[0] if found else -1


def cutaway_box(target_corners: np.ndarray, cam, px_world: float) -> dict:
    """The pyramid from the camera to just before ``target_corners`` over its footprint
    (see module docstring): {"location", "rotation", "scale", "perspective"} (JSON-able).

    In the Empty's local frame (scaled), a point (X, Y, Z') is inside when its distance
    along the view, Z = -Z', satisfies 0 < Z <= 1 and |X|, |Y| <= Z (perspective: the
    pyramid's apex is the camera) or <= 1 (orthographic: a prism)."""
    loc = np.asarray(cam.location, np.float64)
    r, u, f = camera_basis(loc - np.asarray(cam.target, np.float64), cam.up)
    lo, hi = target_corners
    corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]) - loc
    if (corners @ f).min() <= 0:
        raise ValueError("cutaway: the target is behind the camera")
    if cam.orthographic:
        cr, cu = corners @ r, corners @ u
        near = float((corners @ f).min()) * (1.0 - GAP)
        pad = MIN_MARGIN_PX * px_world
        half = [np.ptp(cr) / 2 * (1 + MARGIN) + pad, np.ptp(cu) / 2 * (1 + MARGIN) + pad, near]
        centre = loc + r * (cr.min() + cr.max()) / 2 + u * (cu.min() + cu.max()) / 2
        return {"location": centre.tolist(), "rotation": [float(a) for a in euler_xyz(r, u, -f)],
                "scale": [float(h) for h in half], "perspective": 0.0}
    # aim the pyramid at the footprint's centre, then take its half-angles around that axis
    a, b = (corners @ r) / (corners @ f), (corners @ u) / (corners @ f)
    axis = f + r * (a.min() + a.max()) / 2 + u * (b.min() + b.max()) / 2
    f2 = axis / np.linalg.norm(axis)
    r2 = np.cross(f2, np.asarray(cam.up, np.float64))
    r2 /= np.linalg.norm(r2)
    u2 = np.cross(r2, f2)
    depth = corners @ f2
    near = float(depth.min()) * (1.0 - GAP)
    pad = MIN_MARGIN_PX * px_world / near  # pixels at the target's distance, as a tangent
    tx, ty = np.abs(corners @ r2 / depth).max(), np.abs(corners @ u2 / depth).max()
    half = [(tx * (1 + MARGIN) + pad) * near, (ty * (1 + MARGIN) + pad) * near, near]
    return {"location": loc.tolist(), "rotation": [float(x) for x in euler_xyz(r2, u2, -f2)],
            "scale": [float(h) for h in half], "perspective": 1.0}


def figure_cutaway(params, sel, d, frame) -> dict | None:
    """The cutaway of an icicle figure (``params.cutaway``), or None."""
    target = parse_cutaway(params.cutaway)
    if target is None:
        return None
    return _named_box(cutaway_box(target_box(target, sel, d, frame, params), frame.cam, float(np.median(frame.px))),
                      params.cutaway)


def _named_box(box: dict, text: str) -> dict:
    box["target"] = text
    return box


def compare_cutaway(params, sa, sb, cam) -> dict | None:
    """The cutaway of a comparison (``params.cutaway``: ``a:N`` or ``b:N``, call N of trace A
    or B), or None: the way from the camera to the call's box on its side, tubes included."""
    target = parse_cutaway(params.cutaway, ("a", "b"))
    if target is None:
        return None
    side = sa if target[0] == "a" else sb
    corners = target_box(("call", target[1]), side.sel, side.drawn, side.frame, params,
                         call_text=f"call {target[1]} of trace {target[0].upper()}")
    return _named_box(cutaway_box(corners, cam, float(np.median(side.frame.px))), params.cutaway)


def node_of_call(cct, pruned, tail, shown_call: int) -> int:
    """The drawn node (row of ``pruned``) whose sphere holds call ``shown_call`` (an index of
    the trace the cone tree shows): its calling context, or the pass-through chain that
    context belongs to (`layout.cone.compress_chains`); -1 when that context is not drawn."""
    heads = {int(n): k for k, n in enumerate(pruned.node.tolist())}
    c = int(cct.ctx[shown_call])
    up = c
    while up >= 0 and up not in heads:
        up = int(cct.parent[up])
    if up < 0:
        return -1
    k = heads[up]
    if up == c:
        return k
    walk = int(tail[k])  # a chain: the context must lie on it, between its head and its tail
    while walk >= 0 and walk != up:
        if walk == c:
            return k
        walk = int(cct.parent[walk])
    return -1


def cone_cutaway(params, cct, pruned, tail, orig, pos, radius, cam, resolution) -> dict | None:
    """The cutaway of a cone tree (``params.cutaway``: ``call:N``, a call of the loaded
    trace), or None: the way from the camera to the sphere of the call's node."""
    from .camera import world_per_pixel

    target = parse_cutaway(params.cutaway, ("call",))
    if target is None:
        return None
    call = int(target[1])
    if orig is None:
        shown = call if call < len(cct.trace) else -1
    else:
        k = int(np.searchsorted(orig, call))
        shown = k if k < orig.size and int(orig[k]) == call else -1
    if shown >= 0 and cct.ctx[shown] < 0:  # merged into its caller by the fold
        shown = -1
    if shown < 0:
        raise ValueError(f"cutaway: call {call} is not in the cone tree (no such call, or hidden or folded away)")
    k = node_of_call(cct, pruned, tail, shown)
    if k < 0:
        raise ValueError(f"cutaway: the calling context of call {call} is not among the {len(pruned)} drawn nodes "
                         "(raise --max-nodes)")
    c, r = np.asarray(pos[k], np.float64), float(radius[k])
    corners = np.stack([c - r, c + r])
    px = float(world_per_pixel(cam, c[None], resolution)[0])
    return _named_box(cutaway_box(corners, cam, px), params.cutaway)


def _ring_box(ring, place, angles, r0: float, r1: float, depth: float) -> np.ndarray:
    """(2, 3) world corners of a section of the thread view's semicircle: angles ``angles``
    (a0, a1), radii r0..r1, ``depth`` into the picture (ring units)."""
    from .ring import polar

    a = np.linspace(float(angles[0]), float(angles[1]), 17)
    pts = np.concatenate([place.to_world(polar(a, r, h)) for r in (r0, r1) for h in (0.0, depth)])
    return np.stack([pts.min(0), pts.max(0)])


def _cut_ancestor(sel, d, ref: int) -> np.ndarray:
    """The drawn row of the stub a shown call ``ref`` (a loaded-trace index) was cut under
    (`subpixel.cut_subpixel`: its stub's bar stands for it), or none: a call of a thread
    not shown, outside the window, hidden, or with no cut above it."""
    from .flow_arcs import drawn_ancestor

    tr = sel.trace
    if sel.envelopes is None or ref < 0:
        return np.zeros(0, np.int64)
    if sel.orig is None:
        c = ref if ref < len(tr) else -1
    else:
        hit = np.flatnonzero(sel.orig == ref)
        c = int(hit[0]) if hit.size else -1
    if c < 0 or sel.lane_of_thread()[tr.thread[c]] < 0 or tr.end[c] < sel.t0 or tr.start[c] > sel.t1:
        return np.zeros(0, np.int64)
    row = np.full(len(tr), -1, np.int64)
    row[d.idx] = np.arange(d.idx.size)
    r = drawn_ancestor(tr, row, np.array([c], np.int64))
    return r[r >= 0]


def threads_cutaway(params, sel, d, ring, place, comp, cam, resolution) -> dict | None:
    """The cutaway of the thread view (``params.cutaway``), or None: ``call:N`` is the call's
    box on the focused thread's icicle when it is drawn there, else its bar on the
    semicircle; ``lane:NAME`` (or ``lane:N``, a thread index) is the focused thread's icicle
    for the focused thread, else the thread's section of the semicircle."""
    from .camera import world_per_pixel
    from .ring import BAR_FILL, BASE_HEIGHT

    target = parse_cutaway(params.cutaway, ("call", "lane"))
    if target is None:
        return None
    what, ref = target
    st, frame = comp.st, comp.frame
    corners = None
    depth = 0.5 * BASE_HEIGHT  # the bars' extrusion (ring units): the pyramid ends before their front
    if what == "call":
        on_wall = st is not None and np.any(st.drawn.call_id == int(ref))
        if on_wall:
            corners = target_box(target, st.sel, st.drawn, frame, comp.ip)
        else:
            rows = np.flatnonzero(d.call_id == int(ref))
            if rows.size == 0:
                rows = _cut_ancestor(sel, d, int(ref))
            if rows.size == 0:
                raise not_drawn(f"call {ref}")
            r = int(rows[0])
            r0 = ring.zero_radius + float(d.level_bottom[r])
            angles = ring.angle(int(d.lane[r]), [float(d.start[r]), float(d.end[r])])
            corners = _ring_box(ring, place, angles, r0, r0 + BAR_FILL * float(d.level_height[r]), depth)
    elif (block := block_by_name(sel, ref)) is not None:  # a block of lanes: its sections together
        a, b = block
        corners = _ring_box(ring, place, (ring.a0[a], ring.a1[b]), ring.zero_radius,
                            ring.zero_radius + float(np.max(ring.lane_levels[a: b + 1])), depth)
    else:
        names = list(sel.lane_names)
        lane = sel.lane_of(ref) if isinstance(ref, int) else lane_by_name(sel, ref)
        if lane < 0:
            raise ValueError(f"cutaway: no lane {ref!r}; lanes: {', '.join(names)}")
        wall_thread = int(st.sel.lane_threads[0]) if st is not None else -1
        if wall_thread >= 0 and sel.lane_of(wall_thread) == lane and (not isinstance(ref, int) or ref == wall_thread):
            corners = target_box(("lane", wall_thread), st.sel, st.drawn, frame, comp.ip)
        else:
            corners = _ring_box(ring, place, (ring.a0[lane], ring.a1[lane]), ring.zero_radius,
                                ring.zero_radius + float(ring.lane_levels[lane]), depth)
    px = float(world_per_pixel(cam, corners.mean(0)[None], resolution)[0])
    return _named_box(cutaway_box(corners, cam, px), params.cutaway)
