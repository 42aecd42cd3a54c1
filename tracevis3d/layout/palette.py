"""Perceptually sound colours for the layouts (bpy-free).

Colours are built in OKLab/OKLCh (Ottosson 2020), a perceptually uniform space, and
returned as *linear* sRGB floats (what Blender materials and colour attributes expect;
the renderer then applies the sRGB transfer with the "Standard" view transform).

- `categorical(n)`: well-separated hues for nominal data (functions, modules): evenly
  spaced hues at two lightness tiers, ordered farthest-first.
- `sequential(v)`: a viridis-like ramp for measures (dark blue-violet → teal → green →
  yellow), monotone in lightness so the order survives grey-scale printing.
- `lighten(rgb, f)`: mix towards white in OKLab (cluster bars, SyncTrace IV-B2).
"""
from __future__ import annotations

import numpy as np

_M1 = np.array([[0.4122214708, 0.5363325363, 0.0514459929],
                [0.2119034982, 0.6806995451, 0.1073969566],
                [0.0883024619, 0.2817188376, 0.6299787005]])
_M2 = np.array([[0.2104542553, 0.7936177850, -0.0040720468],
                [1.9779984951, -2.4285922050, 0.4505937099],
                [0.0259040371, 0.7827717662, -0.8086757660]])
_M1_INV = np.linalg.inv(_M1)
_M2_INV = np.linalg.inv(_M2)


def oklab_to_linear_srgb(lab: np.ndarray) -> np.ndarray:
    """(n,3) OKLab → (n,3) linear sRGB, clipped to [0, 1]."""
    lms_ = np.asarray(lab, np.float64) @ _M2_INV.T
    lms = lms_ ** 3
    return np.clip(lms @ _M1_INV.T, 0.0, 1.0)


def linear_srgb_to_oklab(rgb: np.ndarray) -> np.ndarray:
    lms = np.asarray(rgb, np.float64) @ _M1.T
    return np.cbrt(lms) @ _M2.T


def srgb_to_linear(c):
    c = np.asarray(c, np.float64)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def linear_to_srgb(c):
    c = np.clip(np.asarray(c, np.float64), 0.0, 1.0)
    return np.where(c <= 0.0031308, c * 12.92, 1.055 * c ** (1 / 2.4) - 0.055)


def oklch(L, C, h_deg):
    """OKLCH (lightness, chroma, hue in degrees) as OKLab coordinates, shape (..., 3)."""
    h = np.deg2rad(np.asarray(h_deg, np.float64))
    L = np.broadcast_to(np.asarray(L, np.float64), h.shape)
    C = np.broadcast_to(np.asarray(C, np.float64), h.shape)
    return np.stack([L, C * np.cos(h), C * np.sin(h)], axis=-1)


def categorical(n: int) -> np.ndarray:
    """``n`` distinct colours (n,3) linear sRGB for nominal data.

    Slots: ceil(n/2) hues evenly spaced in OKLCh at two lightness tiers (0.74 / 0.60), the
    darker tier shifted by half a hue step; the slots are then ordered farthest-first
    (each next colour maximises its smallest OKLab distance to those before), so the
    first colours — given to the heaviest functions — are the most distinct.
    """
    if n <= 0:
        return np.zeros((0, 3))
    m = (n + 1) // 2
    step = 360.0 / m
    k = np.arange(2 * m)
    tier = k % 2
    hue = (25.0 + (k // 2) * step + tier * step / 2) % 360.0
    L = np.where(tier == 0, 0.74, 0.60)
    C = np.where(tier == 0, 0.14, 0.13)
    lab = oklch(L, C, hue)[:n]
    rgb = oklab_to_linear_srgb(lab)
    lab = linear_srgb_to_oklab(rgb)  # after gamut clipping
    order = [0]
    dmin = np.sqrt(((lab - lab[0]) ** 2).sum(1))
    for _ in range(n - 1):
        j = int(np.argmax(dmin))
        order.append(j)
        dmin = np.minimum(dmin, np.sqrt(((lab - lab[j]) ** 2).sum(1)))
    return rgb[order]


# control points of the sequential ramp in OKLCh (L, C, h): lightness strictly increasing
_SEQ = np.array([
    [0.30, 0.11, 300.0],
    [0.45, 0.10, 255.0],
    [0.58, 0.09, 200.0],
    [0.70, 0.13, 150.0],
    [0.82, 0.15, 120.0],
    [0.92, 0.17, 105.0],
])


def sequential(v) -> np.ndarray:
    """Map values in [0, 1] (clipped) to (n,3) linear sRGB on the viridis-like ramp."""
    v = np.clip(np.nan_to_num(np.asarray(v, np.float64)), 0.0, 1.0)
    x = v * (len(_SEQ) - 1)
    i = np.minimum(x.astype(np.int64), len(_SEQ) - 2)
    f = (x - i)[..., None]
    lab = []
    for p in _SEQ:  # six control points, not per element
        lab.append(oklch(p[0], p[1], p[2]))
    lab = np.array(lab)
    out = lab[i] * (1 - f) + lab[i + 1] * f
    return oklab_to_linear_srgb(out)


def lighten(rgb, f) -> np.ndarray:
    """Mix linear-sRGB colours towards white by fraction ``f`` in OKLab."""
    lab = linear_srgb_to_oklab(np.atleast_2d(rgb))
    f = np.asarray(f, np.float64)[..., None] if np.ndim(f) else f
    white = np.array([1.0, 0.0, 0.0])
    return oklab_to_linear_srgb(lab * (1 - f) + white * f)


def darker(rgb, f: float = 0.8) -> np.ndarray:
    """Linear-sRGB colours with their OKLab lightness scaled by ``f`` (hue and chroma kept):
    for text and thin lines in a colour, readable on white."""
    return oklab_to_linear_srgb(linear_srgb_to_oklab(np.atleast_2d(np.asarray(rgb, np.float64))) * np.array([f, 1.0, 1.0]))


def relative_luminance(rgb) -> np.ndarray:
    """WCAG relative luminance of linear-sRGB colours."""
    rgb = np.atleast_2d(np.asarray(rgb, np.float64))
    return rgb[:, 0] * 0.2126 + rgb[:, 1] * 0.7152 + rgb[:, 2] * 0.0722
