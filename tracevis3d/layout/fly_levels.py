"""A fly-through that refines along its path (issue 70, item 5): which windows are laid out
again, which frames show which, and how the camera closes in (bpy-free; `blender.anim_refine`
writes and keys them).

An icicle zooms along its time axis only: a window laid out again (`refine`) is as wide as the
whole figure and as high as before, so a camera that flies 100x closer to the overview shows
slabs, and one that flies to the refined figure has no path from the overview.  The path is
therefore a chain of *levels*: the overview (level 0), then K windows nested around the target
window W, each the dedicated ``--window`` figure placed in the overview's place
(`refine.place_refinement`), W the last.  In its share of the frames the camera of level j
starts as that level's own camera (its figure framed as a still frames it) and closes in, by
scaling its position about a point of the figure's front plane by s = (1/r)^τ, τ going 0 -> 1,
until its frame spans the time the next level's camera frames (r: that level's magnification
over this one); on the next frame level j+1 is shown with its own camera: the same time in the
same place of the picture, laid out again with every call at least a pixel wide and named.  The
last level is held for `ARRIVAL_SHARE` of the frames.

The windows' widths are geometric, w_j = w_0 (w/w_0)^(j/K) (a constant magnification step
M^(1/K) between levels, like a continuous zoom), K = ceil(log M / log `LEVEL_STEP`) capped by
the declared ``zoom_levels``, each centred on W and moved inside the figure's window
(`nested_windows`): a window moved to the figure's start or end still holds the next one.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["LEVEL_STEP", "ARRIVAL_SHARE", "MIN_MAGNIFICATION", "nested_windows", "level_count", "phase_frames",
           "zoom_about", "scaled_pose", "busiest_window", "auto_window"]

#: a level for at most this much magnification between two levels (the plain fly-through comes 3x closer)
LEVEL_STEP = 4.0
#: the share of the frames the camera holds on the last level (names readable on arrival)
ARRIVAL_SHARE = 0.25
#: a window refines when it is at least this many times narrower than the figure (`refine.MIN_ZOOM`)
MIN_MAGNIFICATION = 2.0


def level_count(magnification: float, max_levels: int, n_frames: int) -> int:
    """Levels for a window ``magnification`` times narrower than the figure: ceil(log M /
    log `LEVEL_STEP`), at least 1, at most ``max_levels`` and at most what ``n_frames`` give two
    frames each besides the arrival."""
    need = max(1, math.ceil(math.log(max(magnification, 1.0)) / math.log(LEVEL_STEP) - 1e-9))
    room = max(1, (n_frames - max(1, round(ARRIVAL_SHARE * n_frames))) // 2)
    return int(max(1, min(need, int(max_levels), room)))


def nested_windows(span, window, levels: int) -> list:
    """K = ``levels`` windows (µs) from the figure's ``span`` (t0, t1) to ``window``: widths
    w_j = w_0 (w/w_0)^(j/K), j = 1..K, each centred on ``window``'s centre and moved inside
    ``span`` (so each holds the next, module doc); the last is ``window`` itself."""
    t0, t1 = (float(v) for v in span)
    a, b = (float(v) for v in window)
    a, b = max(a, t0), min(b, t1)
    if not b > a:
        raise ValueError(f"the window {window[0]:g}..{window[1]:g} µs lies outside the figure ({t0:g}..{t1:g} µs)")
    w0, w, c = t1 - t0, b - a, 0.5 * (a + b)
    if w0 < MIN_MAGNIFICATION * w * (1 - 1e-9):
        raise ValueError(f"the window {a:g}..{b:g} µs is not {MIN_MAGNIFICATION:g}x narrower than the figure "
                         f"({t0:g}..{t1:g} µs): nothing to refine")
    out = []
    for j in range(1, int(levels) + 1):
        if j == levels:
            out.append((a, b))
            break
        wj = w0 * (w / w0) ** (j / levels)
        lo = min(max(c - 0.5 * wj, t0), t1 - wj)
        out.append((lo, lo + wj))
    return out


def phase_frames(n_frames: int, levels: int) -> list:
    """The frames (first, last) of each phase: the overview's approach (phase 0), then each level
    but the last closing in on the next (phases 1..K-1), then the last level held from its first
    frame to ``n_frames`` (phase K, `ARRIVAL_SHARE` of the frames).  Frame 1 starts phase 0;
    phases 0..K-1 share the frames before the arrival evenly (at least one each)."""
    n, k = int(n_frames), int(levels)
    hold = max(1, round(ARRIVAL_SHARE * n))
    approach = max(k, n - hold)
    edges = np.round(np.linspace(1, approach + 1, k + 1)).astype(int)
    out = [(int(edges[j]), int(edges[j + 1]) - 1) for j in range(k)]
    out.append((int(edges[k]), n))
    return out


def zoom_about(frame_lr, target_lr) -> tuple:
    """(s, x_p): scaling a view about the point of x ``x_p`` by ``s`` makes its frame ``frame_lr``
    = (l, r) (x at the front plane) span ``target_lr`` = (a, b): s = (b - a) / (r - l),
    x_p = (a - s l) / (1 - s).  ``s`` is kept in (0, 1] (a view only closes in); s near 1
    scales about the target's centre."""
    l, r = (float(v) for v in frame_lr)
    a, b = (float(v) for v in target_lr)
    s = min(max((b - a) / (r - l), 1e-6), 1.0)
    if s > 1.0 - 1e-6:
        return 1.0, 0.5 * (a + b)
    return s, (a - s * l) / (1.0 - s)


def scaled_pose(location, forward, point, s: float, orthographic: bool) -> np.ndarray:
    """The camera's location when its view is scaled by ``s`` about ``point``: perspective,
    point + (location - point) s (the picture magnified 1/s about the point's image);
    orthographic (its ``ortho_scale`` times s), moved across the view only, by (1 - s) of the
    point's offset from the view's axis (no nearer: nothing in front gets clipped)."""
    loc, p = np.asarray(location, np.float64), np.asarray(point, np.float64)
    if not orthographic:
        return p + (loc - p) * float(s)
    f = np.asarray(forward, np.float64)
    f = f / np.linalg.norm(f)
    d = p - loc
    return loc + (1.0 - float(s)) * (d - np.dot(d, f) * f)


def busiest_window(start, span, width_us: float) -> tuple:
    """(a, a + ``width_us``) µs: of the n = max(floor((t1 - t0) / width_us), 1) consecutive windows
    of ``width_us`` from t0 of ``span`` = (t0, t1), the one in which most of the calls' ``start``
    times lie (a histogram of the starts; the first such on a tie).  The zoom tests' choice of a
    window to zoom into (tests/support/zoom_helpers.py), and ``--zoom-window auto``'s."""
    t0, t1 = (float(v) for v in span)
    w = float(width_us)
    if not (w > 0 and t1 > t0):
        raise ValueError(f"no window of {w:g} µs in the figure ({t0:g}..{t1:g} µs)")
    n = max(int((t1 - t0) // w), 1)
    counts, edges = np.histogram(np.asarray(start, np.float64), bins=n, range=(t0, t0 + n * w))
    k = int(counts.argmax())
    return (float(edges[k]), float(edges[k] + w))


def auto_window(start, span, magnification: float) -> tuple:
    """The busiest window (`busiest_window`) ``magnification`` times narrower than ``span``."""
    t0, t1 = (float(v) for v in span)
    return busiest_window(start, (t0, t1), (t1 - t0) / float(magnification))
