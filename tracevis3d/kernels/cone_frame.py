"""Cone-tree framing kernels: the samples of an edge, and a framing's stretch rounds with
their perspective camera fit in one call (`layout.cone_framing.framed_tree`; the cone tree itself:
`kernels.cone`)."""

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def segment_samples(a, b, n):
    """Points along pixel segments a[s] → b[s] (each (m, 2)): n[s] ≥ 2 of them evenly from
    a[s] to b[s] inclusive, p = a + (b - a) · j / (n[s] - 1), j = 0 .. n[s] - 1, in
    segment order (the sampling `layout.cone._tree_occupancy` traces every cell with)."""
    m = a.shape[0]
    total = 0
    for s in range(m):
        total += n[s]
    out = np.empty((total, 2))
    k = 0
    for s in range(m):
        d = n[s] - 1
        ax = a[s, 0]
        ay = a[s, 1]
        dx = b[s, 0] - ax
        dy = b[s, 1] - ay
        for j in range(n[s]):
            t = j / d
            out[k, 0] = ax + dx * t
            out[k, 1] = ay + dy * t
            k += 1
    return out


@njit(cache=True, nogil=True)
def _extent_fit(pos, around, has, ring, r, u, f, tx, ty):
    """`layout.camera.fit_camera` (perspective, margin 1, camera basis r, u, f, half-tangents
    tx, ty) of the extent points of a cone tree (node centres ``pos`` plus ``around`` (6, n, 3),
    the centres of nodes ``has`` plus ``ring`` (16, len(has), 3)), followed step by step in
    plain float64 (dot products summed left to right), and the ratio of the width to the
    height of their projection through the camera fitted.  Returns ``(centre, distance,
    aspect, extent)``: the camera is at centre − f · distance, looking at centre; extent:
    the length of the points' bounding box's diagonal plus 1 (`fit_camera`'s clip range)."""
    n = pos.shape[0]
    n_ring = has.shape[0]
    m = 6 * n + ring.shape[0] * n_ring
    p = np.empty((m, 3))
    q = 0
    for a in range(6):
        for i in range(n):
            for c in range(3):
                p[q, c] = pos[i, c] + around[a, i, c]
            q += 1
    for s in range(ring.shape[0]):
        for j in range(n_ring):
            for c in range(3):
                p[q, c] = pos[has[j], c] + ring[s, j, c]
            q += 1
    lo = np.full(3, np.inf)
    hi = np.full(3, -np.inf)
    x_lo = np.full(3, np.inf)
    x_hi = np.full(3, -np.inf)
    for i in range(m):
        for c in range(3):
            x_lo[c] = min(x_lo[c], p[i, c])
            x_hi[c] = max(x_hi[c], p[i, c])
        v0 = p[i, 0] * r[0] + p[i, 1] * r[1] + p[i, 2] * r[2]
        v1 = p[i, 0] * u[0] + p[i, 1] * u[1] + p[i, 2] * u[2]
        v2 = p[i, 0] * f[0] + p[i, 1] * f[1] + p[i, 2] * f[2]
        lo[0] = min(lo[0], v0)
        hi[0] = max(hi[0], v0)
        lo[1] = min(lo[1], v1)
        hi[1] = max(hi[1], v1)
        lo[2] = min(lo[2], v2)
        hi[2] = max(hi[2], v2)
    ca = 0.5 * (lo[0] + hi[0])
    cb = 0.5 * (lo[1] + hi[1])
    cz = 0.5 * (lo[2] + hi[2])
    centre = ca * r + cb * u + cz * f
    sa = -np.inf
    sb = -np.inf
    for i in range(m):
        v0 = p[i, 0] * r[0] + p[i, 1] * r[1] + p[i, 2] * r[2]
        v1 = p[i, 0] * u[0] + p[i, 1] * u[1] + p[i, 2] * u[2]
        v2 = p[i, 0] * f[0] + p[i, 1] * f[1] + p[i, 2] * f[2]
        sa = max(sa, abs(v0 - ca) / tx - (v2 - cz))
        sb = max(sb, abs(v1 - cb) / ty - (v2 - cz))
    dist = max(sa, sb, 1e-3)
    for rnd in range(7):  # six rounds, then the projection through the camera fitted
        loc = centre - f * dist
        a_lo = np.inf
        a_hi = -np.inf
        b_lo = np.inf
        b_hi = -np.inf
        for i in range(m):
            q0 = p[i, 0] - loc[0]
            q1 = p[i, 1] - loc[1]
            q2 = p[i, 2] - loc[2]
            z = max(q0 * f[0] + q1 * f[1] + q2 * f[2], 1e-9)
            a = (q0 * r[0] + q1 * r[1] + q2 * r[2]) / z
            b = (q0 * u[0] + q1 * u[1] + q2 * u[2]) / z
            a_lo = min(a_lo, a)
            a_hi = max(a_hi, a)
            b_lo = min(b_lo, b)
            b_hi = max(b_hi, b)
        if rnd == 6:
            ext = np.sqrt((x_hi[0] - x_lo[0]) ** 2 + (x_hi[1] - x_lo[1]) ** 2 + (x_hi[2] - x_lo[2]) ** 2) + 1.0
            return centre, dist, (a_hi - a_lo) / max(b_hi - b_lo, 1e-300), ext
        na_lo, na_hi, nb_lo, nb_hi = a_lo / tx, a_hi / tx, b_lo / ty, b_hi / ty
        fill = max(na_hi - na_lo, nb_hi - nb_lo) / 2.0
        centre = centre + r * (0.5 * (na_lo + na_hi) * tx * dist) + u * (0.5 * (nb_lo + nb_hi) * ty * dist)
        dist = dist * fill
    return centre, dist, 1.0, 1.0


@njit(cache=True, nogil=True)
def stretch_rounds(vpos, depth, spacing, horizontal, k_start, k_max, around, has, ring, r, u, f, tx, ty, aspect,
                   n_rounds):
    """The rounds of `layout.cone_framing.framed_tree`: levels ``spacing`` × k apart (node i at
    −Σ_{d < depth_i} spacing_d k along the axis, ``vpos``'s other coordinates; horizontal:
    (x, y, z) → (−z, y, x)), the camera fitted to the extent points (`_extent_fit`), k scaled
    by the aspect ratio the projection misses (vertical trees grow taller with k, horizontal
    ones wider), clipped to [1, k_max], until it moves less than 1 % or after ``n_rounds``.
    Returns ``(k of the positions last fitted, k at the end, the camera fitted to them:
    centre, distance and extent as `_extent_fit` gives them)`` (the two k differ when the
    rounds run out)."""
    n = vpos.shape[0]
    nl = spacing.shape[0]
    offsets = np.zeros(nl + 1)
    pos = np.empty((n, 3))
    k = min(max(k_start, 1.0), k_max)
    k_fit = k
    centre = np.zeros(3)
    dist = 1.0
    ext = 1.0
    for _ in range(n_rounds):
        acc = 0.0
        for d in range(nl):
            acc += spacing[d] * k
            offsets[d + 1] = acc
        for i in range(n):
            zi = -offsets[depth[i]]
            if horizontal:
                pos[i, 0] = -zi
                pos[i, 1] = vpos[i, 1]
                pos[i, 2] = vpos[i, 0]
            else:
                pos[i, 0] = vpos[i, 0]
                pos[i, 1] = vpos[i, 1]
                pos[i, 2] = zi
        centre, dist, got, ext = _extent_fit(pos, around, has, ring, r, u, f, tx, ty)
        factor = aspect / got if horizontal else got / aspect
        k_new = min(max(k * factor, 1.0), k_max)
        if abs(k_new / k - 1.0) < 0.01:
            return k, k, centre, dist, ext
        k_fit = k
        k = k_new
    return k_fit, k, centre, dist, ext
