"""Swept tubes for matches (TraceDiff Sec. IV-C), as arrays a mesh writer can take as is.

A match (f, g) is drawn as a tube around its bundled centre curve γ (`kernels.bundle`).
Its half-width blends from w_f/2 at f's end to w_g/2 at g's end and is thinned towards the
middle by the profile (TraceDiff Eq. 5)

    φ(t) = λ + (1 − λ)/2 · (1 + cos 2πt),     t ∈ [0, 1] the arclength parameter,

    half_width(t) = φ(t) · ((1 − t)·w_f/2 + t·w_g/2).

The paper prints the border as γ_x ∓ φ(t)((1 − t) w_f/2 − t w_g/2): with the minus sign the
offset changes sign where (1 − t) w_f = t w_g, so the left border crosses to the right and
the tube twists at mid-length.  The intent, stated in the text, is a width that blends from
one end to the other, which the plus sign gives; that is what we do.

As in the paper the width is measured along x (time), so the tube's ends cover exactly the
time extents of the two calls.  Unlike the paper's flat quads the cross-section is a real
ellipse in the horizontal plane: half-width along x, a depth semi-axis along y, so
Blender's lighting shades the tube (the material adds the parabolic cushion for Workbench).
"""
import numpy as np
from numba import njit, prange


@njit(cache=True, nogil=True)
def arclength_parameter(curves):
    """t in [0, 1] at every sample of every curve, proportional to the length travelled."""
    m, s, _ = curves.shape
    t = np.zeros((m, s))
    for k in range(m):
        acc = 0.0
        for i in range(1, s):
            dx = curves[k, i, 0] - curves[k, i - 1, 0]
            dy = curves[k, i, 1] - curves[k, i - 1, 1]
            dz = curves[k, i, 2] - curves[k, i - 1, 2]
            acc += np.sqrt(dx * dx + dy * dy + dz * dz)
            t[k, i] = acc
        if acc > 0:
            for i in range(s):
                t[k, i] /= acc
        else:
            for i in range(s):
                t[k, i] = i / (s - 1)
    return t


@njit(cache=True, nogil=True)
def tube_half_widths(t, wf, wg, lam):
    """φ(t)·((1 − t)·w_f/2 + t·w_g/2) per sample (see module doc), (m, s)."""
    m, s = t.shape
    out = np.empty((m, s))
    for k in range(m):
        for i in range(s):
            u = t[k, i]
            phi = lam + (1.0 - lam) * 0.5 * (1.0 + np.cos(2.0 * np.pi * u))
            out[k, i] = phi * ((1.0 - u) * 0.5 * wf[k] + u * 0.5 * wg[k])
    return out


@njit(cache=True, nogil=True, parallel=True)
def ring_keep(curves, half_x, half_y, tol):
    """Which samples of each tube get a ring: a level of detail at the target resolution.

    The curve keeps all its samples (its shape is the bundled curve's); a ring is left out
    when the tube it would draw differs from the straight, linearly tapered tube between the
    rings kept on either side by at most ``tol`` (world units, a fraction of a pixel): for
    every left-out sample i between kept rings a and b, with u = (i − a)/(b − a),
    |c_i − lerp(c_a, c_b, u)| + max(|hx_i − lerp(hx_a, hx_b, u)|, |hy_i − lerp(hy_a, hy_b, u)|)
    ≤ tol (an upper bound of the silhouette's displacement).  Greedy from each kept ring as
    far as the bound holds; the first and last samples are always kept.  ``tol`` ≤ 0 keeps
    every ring.  Returns bool (m, s)."""
    m, s, _ = curves.shape
    keep = np.zeros((m, s), np.bool_)
    for k in prange(m):
        keep[k, 0] = True
        keep[k, s - 1] = True
        if tol <= 0:
            for i in range(s):
                keep[k, i] = True
            continue
        a = 0
        while a < s - 1:
            best = a + 1
            b = a + 2
            while b <= s - 1:
                ok = True
                for i in range(a + 1, b):
                    u = (i - a) / (b - a)
                    dev = 0.0
                    for d in range(3):
                        e = curves[k, i, d] - (curves[k, a, d] + u * (curves[k, b, d] - curves[k, a, d]))
                        dev += e * e
                    dev = np.sqrt(dev)
                    wx = abs(half_x[k, i] - (half_x[k, a] + u * (half_x[k, b] - half_x[k, a])))
                    wy = abs(half_y[k, i] - (half_y[k, a] + u * (half_y[k, b] - half_y[k, a])))
                    if dev + max(wx, wy) > tol:
                        ok = False
                        break
                if not ok:
                    break
                best = b
                b += 1
            keep[k, best] = True
            a = best
    return keep


@njit(cache=True, nogil=True)
def tube_offsets(rings, sides):
    """Where each tube's vertices, faces and edges start when tube k has ``rings[k]`` rings
    of ``sides[k]`` sides: exclusive prefix sums of rings·sides, (rings−1)·sides and
    (2·rings−1)·sides, each with the total as its last entry (length m + 1)."""
    m = sides.shape[0]
    v = np.zeros(m + 1, np.int64)
    f = np.zeros(m + 1, np.int64)
    e = np.zeros(m + 1, np.int64)
    for k in range(m):
        v[k + 1] = v[k] + rings[k] * sides[k]
        f[k + 1] = f[k] + (rings[k] - 1) * sides[k]
        e[k + 1] = e[k] + (2 * rings[k] - 1) * sides[k]
    return v, f, e


@njit(cache=True, nogil=True, inline="always")
def ring_quads(quads, tube, f, r0, sides, k):
    """The ``sides`` quads of tube ``k`` between the ring of vertices starting at ``r0`` and
    the next (r1 = r0 + sides): quad j is (r0 + j, r0 + j1, r1 + j1, r1 + j), j1 = (j + 1) mod
    sides, written from face ``f`` on.  Returns the next face."""
    r1 = r0 + sides
    for j in range(sides):
        j1 = (j + 1) % sides
        quads[f, 0] = r0 + j
        quads[f, 1] = r0 + j1
        quads[f, 2] = r1 + j1
        quads[f, 3] = r1 + j
        tube[f] = k
        f += 1
    return f


@njit(cache=True, nogil=True, parallel=True)
def tube_mesh(curves, half_x, half_y, sides, keep):
    """Vertices and quad faces of elliptic tubes around sampled centre curves.

    Tube k has ``sides[k]`` sides (thin tubes need fewer: the layout picks them from the
    tube's width in pixels) and a ring at every sample i with ``keep[k, i]`` (`ring_keep`).
    A ring is centred on curves[k, i] in the horizontal plane: v = c + half_x·cos θ_j · x̂ +
    half_y·sin θ_j · ŷ, θ_j = 2πj/sides[k].  Quads join consecutive rings.  Returns
    ``(vertices float32 (Σ rings·sides, 3), quads int32 (Σ (rings−1)·sides, 4), tube_of_face
    int32, rings int64 per tube)``; tube k's vertices and faces start at `tube_offsets`.
    """
    m, s, _ = curves.shape
    rings = np.zeros(m, np.int64)
    for k in range(m):
        for i in range(s):
            if keep[k, i]:
                rings[k] += 1
    voff, foff, _eoff = tube_offsets(rings, sides)
    verts = np.empty((voff[m], 3), np.float32)
    quads = np.empty((foff[m], 4), np.int32)
    tube = np.empty(foff[m], np.int32)
    for k in prange(m):
        n_sides = sides[k]
        v = voff[k]
        for i in range(s):
            if not keep[k, i]:
                continue
            for j in range(n_sides):
                theta = 2.0 * np.pi * j / n_sides
                verts[v, 0] = curves[k, i, 0] + half_x[k, i] * np.cos(theta)
                verts[v, 1] = curves[k, i, 1] + half_y[k, i] * np.sin(theta)
                verts[v, 2] = curves[k, i, 2]
                v += 1
        f = foff[k]
        for i in range(rings[k] - 1):
            f = ring_quads(quads, tube, f, voff[k] + i * n_sides, n_sides, k)
    return verts, quads, tube, rings


@njit(cache=True, nogil=True, parallel=True)
def tube_edges(rings, sides):
    """The edges of `tube_mesh`'s quads and the edge of each face corner, so a mesh needs no
    edge search (Blender's ``calc_edges`` hashes every corner: seconds at 10^6 faces).

    Per tube k with r = rings[k] and n = sides[k] (vertex v(i, j) = voff[k] + i·n + j): ring
    edges R(i, j) = (v(i, j), v(i, j+1 mod n)) for i < r, then lengthwise edges L(i, j) =
    (v(i, j), v(i+1, j)) for i < r−1, (2r−1)·n edges per tube.  Quad (i, j) has corners
    v(i, j), v(i, j+1), v(i+1, j+1), v(i+1, j); its corner edges are R(i, j), L(i, j+1),
    R(i+1, j), L(i, j).  Returns ``(edge_verts (Σ (2r−1)·n, 2) int32, corner_edge
    (4·Σ (r−1)·n,) int32)``.
    """
    m = sides.shape[0]
    voff, foff, eoff = tube_offsets(rings, sides)
    edges = np.empty((eoff[m], 2), np.int32)
    corner = np.empty(4 * foff[m], np.int32)
    for k in prange(m):
        n = sides[k]
        r = rings[k]
        vbase, ebase = voff[k], eoff[k]
        lbase = ebase + r * n
        for i in range(r):
            for j in range(n):
                e = ebase + i * n + j
                edges[e, 0] = vbase + i * n + j
                edges[e, 1] = vbase + i * n + (j + 1) % n
        for i in range(r - 1):
            for j in range(n):
                e = lbase + i * n + j
                edges[e, 0] = vbase + i * n + j
                edges[e, 1] = vbase + (i + 1) * n + j
        c = 4 * foff[k]
        for i in range(r - 1):
            for j in range(n):
                j1 = (j + 1) % n
                corner[c] = ebase + i * n + j
                corner[c + 1] = lbase + i * n + j1
                corner[c + 2] = ebase + (i + 1) * n + j
                corner[c + 3] = lbase + i * n + j
                c += 4
    return edges, corner


@njit(cache=True, nogil=True)
def tube_mesh_normal(curves, half_x, half_y, sides):
    """Like `tube_mesh`, but each ring lies in the plane *perpendicular to the curve*
    (a round tube whatever its direction: cone-tree edges and base circles).  The ring's
    frame at sample i: tangent t (central difference), u = the world axis least aligned
    with t, orthogonalised, v = t × u; for a closed curve (first sample = last) the end
    tangents wrap around.  ``half_x``/``half_y`` are the radii along u and v.  Same
    outputs as `tube_mesh`."""
    m, s, _ = curves.shape
    nv = m * s * sides
    verts = np.empty((nv, 3), np.float32)
    cos_t = np.empty(sides)
    sin_t = np.empty(sides)
    for j in range(sides):
        cos_t[j] = np.cos(2.0 * np.pi * j / sides)
        sin_t[j] = np.sin(2.0 * np.pi * j / sides)
    t = np.zeros(3)
    u = np.zeros(3)
    w = np.zeros(3)
    v = 0
    for k in range(m):
        closed = True
        for d in range(3):
            if abs(curves[k, 0, d] - curves[k, s - 1, d]) > 1e-12:
                closed = False
        for i in range(s):
            i0 = i - 1 if i > 0 else (s - 2 if closed else 0)
            i1 = i + 1 if i < s - 1 else (1 if closed else s - 1)
            for d in range(3):
                t[d] = curves[k, i1, d] - curves[k, i0, d]
            ln = np.sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2])
            if ln < 1e-300:
                t[0], t[1], t[2] = 0.0, 0.0, 1.0
            else:
                for d in range(3):
                    t[d] /= ln
            a = 0
            if abs(t[1]) < abs(t[a]):
                a = 1
            if abs(t[2]) < abs(t[a]):
                a = 2
            for d in range(3):
                u[d] = -t[a] * t[d]
            u[a] += 1.0
            lu = np.sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2])
            for d in range(3):
                u[d] /= lu
            w[0] = t[1] * u[2] - t[2] * u[1]
            w[1] = t[2] * u[0] - t[0] * u[2]
            w[2] = t[0] * u[1] - t[1] * u[0]
            for j in range(sides):
                for d in range(3):
                    verts[v, d] = curves[k, i, d] + half_x[k, i] * cos_t[j] * u[d] + half_y[k, i] * sin_t[j] * w[d]
                v += 1
    nf = m * (s - 1) * sides
    quads = np.empty((nf, 4), np.int32)
    tube = np.empty(nf, np.int32)
    f = 0
    for k in range(m):
        base = k * s * sides
        for i in range(s - 1):
            f = ring_quads(quads, tube, f, base + i * sides, sides, k)
    return verts, quads, tube
