"""Meshes of ring geometry: bent boxes (sectors) and ribbons (SyncTrace IV-B: bended icicles,
correspondence curves).

A sector is the set {(r cos a, r sin a, z) : a ∈ [a0, a1], r ∈ [r0, r1], z ∈ [z0, z1]} around
a centre; its arc is cut into k = clamp(⌈(a1 - a0)/max_seg⌉, 1, 64) straight segments, so the
chord error stays below r1 (1 - cos(max_seg/2)).  Faces: per segment top, inner and outer
(the bottom lies on the ground plane and is never seen), plus the two end caps.
"""
import numpy as np
from numba import njit

MAX_SEGMENTS = 64


@njit(cache=True, nogil=True)
def sector_segments(a0, a1, max_seg):
    """Segments per sector: k = clamp(ceil((a1 - a0) / max_seg), 1, 64)."""
    n = a0.shape[0]
    k = np.empty(n, np.int32)
    for i in range(n):
        s = int(np.ceil((a1[i] - a0[i]) / max_seg))
        k[i] = min(max(s, 1), MAX_SEGMENTS)
    return k


@njit(cache=True, nogil=True)
def sector_mesh(cx, cy, a0, a1, r0, r1, z0, z1, max_seg):
    """(vertices float32 (nv, 3), quads int32 (nf, 4), sector of each face int32 (nf,)).

    Sector i has 4 (k_i + 1) vertices (inner-bottom, outer-bottom, outer-top, inner-top per
    cut) and 3 k_i + 2 quads, wound counter-clockwise seen from outside."""
    n = a0.shape[0]
    k = sector_segments(a0, a1, max_seg)
    nv = 0
    nf = 0
    for i in range(n):
        nv += 4 * (k[i] + 1)
        nf += 3 * k[i] + 2
    verts = np.empty((nv, 3), np.float32)
    quads = np.empty((nf, 4), np.int32)
    face_sector = np.empty(nf, np.int32)
    v = 0
    f = 0
    for i in range(n):
        base = v
        for j in range(k[i] + 1):
            a = a0[i] + (a1[i] - a0[i]) * j / k[i]
            c, s = np.cos(a), np.sin(a)
            verts[v, 0] = cx + r0[i] * c
            verts[v, 1] = cy + r0[i] * s
            verts[v, 2] = z0[i]
            verts[v + 1, 0] = cx + r1[i] * c
            verts[v + 1, 1] = cy + r1[i] * s
            verts[v + 1, 2] = z0[i]
            verts[v + 2, 0] = cx + r1[i] * c
            verts[v + 2, 1] = cy + r1[i] * s
            verts[v + 2, 2] = z1[i]
            verts[v + 3, 0] = cx + r0[i] * c
            verts[v + 3, 1] = cy + r0[i] * s
            verts[v + 3, 2] = z1[i]
            v += 4
        for j in range(k[i]):
            p = base + 4 * j
            q = p + 4
            # top (3 → 2), outer (1 → 2), inner (0 → 3)
            quads[f, 0], quads[f, 1], quads[f, 2], quads[f, 3] = p + 3, p + 2, q + 2, q + 3
            quads[f + 1, 0], quads[f + 1, 1], quads[f + 1, 2], quads[f + 1, 3] = p + 1, q + 1, q + 2, p + 2
            quads[f + 2, 0], quads[f + 2, 1], quads[f + 2, 2], quads[f + 2, 3] = p, p + 3, q + 3, q
            face_sector[f] = i
            face_sector[f + 1] = i
            face_sector[f + 2] = i
            f += 3
        last = base + 4 * k[i]
        quads[f, 0], quads[f, 1], quads[f, 2], quads[f, 3] = base, base + 1, base + 2, base + 3
        quads[f + 1, 0], quads[f + 1, 1], quads[f + 1, 2], quads[f + 1, 3] = last + 3, last + 2, last + 1, last
        face_sector[f] = i
        face_sector[f + 1] = i
        f += 2
    return verts, quads, face_sector


@njit(cache=True, nogil=True)
def ribbon_mesh(left, right):
    """Ribbons between two polylines of s samples each ((m, s, 3) float64): vertices
    (2 m s, 3) float32 (left then right samples of each ribbon), quads (m (s - 1), 4) int32
    and the ribbon of each face."""
    m = left.shape[0]
    s = left.shape[1]
    verts = np.empty((2 * m * s, 3), np.float32)
    quads = np.empty((m * (s - 1), 4), np.int32)
    face = np.empty(m * (s - 1), np.int32)
    for i in range(m):
        b = 2 * s * i
        for j in range(s):
            for d in range(3):
                verts[b + j, d] = left[i, j, d]
                verts[b + s + j, d] = right[i, j, d]
        for j in range(s - 1):
            f = i * (s - 1) + j
            quads[f, 0], quads[f, 1], quads[f, 2], quads[f, 3] = b + j, b + s + j, b + s + j + 1, b + j + 1
            face[f] = i
    return verts, quads, face


@njit(cache=True, nogil=True)
def lane_outline_radii(lane, start, end, bottom, height, n_lanes, t0, t1, zero_radius, fill, bins):
    """(n_lanes, bins) float64: the outline of a ring of bended icicles (SyncTrace IV-B).

    A lane's section is cut into ``bins`` equal angular bins; a bar over the times [s, e]
    covers the fractions f = (clamp(t, t0, t1) − t0) / (t1 − t0) of its section, i.e. the
    bins ⌊f(s)·B⌋ … ⌊f(e)·B⌋ (clamped to [0, B − 1]), and reaches the outer radius
    Z + bottom + fill · height.  Each bin holds the largest radius of the bars that cover it,
    Z where none does.  Linear in bars + bins × levels (a lane's bars of one level are
    disjoint, so they cover each bin at most once per level, plus their end bins)."""
    out = np.full((n_lanes, bins), zero_radius)
    span = max(t1 - t0, 1e-300)
    for i in range(lane.shape[0]):
        k = lane[i]
        if k < 0 or k >= n_lanes:
            continue
        j0 = int(bins * (min(max(start[i], t0), t1) - t0) / span)
        j1 = int(bins * (min(max(end[i], t0), t1) - t0) / span)
        j0 = min(max(j0, 0), bins - 1)
        j1 = min(max(j1, j0), bins - 1)
        r = zero_radius + bottom[i] + fill * height[i]
        for j in range(j0, j1 + 1):
            if r > out[k, j]:
                out[k, j] = r
    return out
