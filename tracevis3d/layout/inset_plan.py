"""Where the icicle's detail inset goes and what it magnifies (`layout.inset` builds it;
bpy-free): the free rectangles of the frame (`free_rectangles`), the calls the figure
leaves unnamed (`_candidates`), and per rectangle the stretch of one lane whose
magnification names most of them (`best_window`, `kernels.stretch.best_stretch`):
`plan_inset`.  See `layout.inset` for the whole stage."""
from __future__ import annotations

import dataclasses

import numpy as np

from .geometry import drawn_chunks
from .spec import LabelSet

INSET_PAD_EM = 1.0  # the inset keeps this far from anything drawn, in label sizes
MIN_W_EM = 16.0  # the smallest inset, in label sizes
MIN_H_EM = 7.0
MAX_W_FRAC = 0.45  # the largest, as shares of the image
MAX_H_FRAC = 0.45
ZOOMS = (3.0, 4.0, 6.0, 8.0, 12.0)  # magnifications tried
MAX_RECTS = 3  # free rectangles tried (the largest that overlap no larger one by half)
MIN_NEW_NAMES = 3  # an inset names at least this many functions the figure leaves unnamed
MAX_SPAN_FRAC = 0.34  # a stretch is at most this share of the figure's time


@dataclasses.dataclass
class InsetPlan:
    lane: int
    t0: float  # the stretch, in the selection's trace time (µs)
    t1: float
    rect: tuple  # pixels (x0, y0, x1, y1) of the main image
    zoom: float
    expected: int  # functions the window search expects named


def free_rectangles(occupied: np.ndarray, cell: float, content_rect, min_w: float, min_h: float,
                    max_w: float, max_h: float, step: int = 2) -> list:
    """Empty rectangles of the occupancy grid ``occupied`` (cells of ``cell`` pixels, True:
    taken) inside ``content_rect``: for each top row and height (in steps of ``step``
    cells), the widest run of columns free over all those rows, at least ``min_w`` ×
    ``min_h`` pixels, cut to ``max_w`` × ``max_h`` (centred in the run).  Pixel
    rectangles (x0, y0, x1, y1), largest area first, at most one per (height, top row)."""
    from .annotate import summed_area

    ny, nx = occupied.shape
    x0, y0, x1, y1 = content_rect
    c0, c1 = max(int(np.ceil(x0 / cell)), 0), min(int(np.floor(x1 / cell)), nx)
    r0, r1 = max(int(np.ceil(y0 / cell)), 0), min(int(np.floor(y1 / cell)), ny)
    if c1 - c0 < 1 or r1 - r0 < 1:
        return []
    sat = summed_area(occupied)
    hmin, hmax = max(int(np.ceil(min_h / cell)), 1), max(int(max_h // cell), 1)
    wmin, wmax = max(int(np.ceil(min_w / cell)), 1), max(int(max_w // cell), 1)
    out = []
    cols = np.arange(c1 - c0)
    for h in range(hmin, min(hmax, r1 - r0) + 1, step):
        rows = np.arange(r0, r1 - h + 1, step)
        if rows.size == 0:
            continue
        # cells taken in rows r..r+h of each column (the SAT's column sums), every top row at once
        taken = (sat[rows + h, c0 + 1: c1 + 1] - sat[rows, c0 + 1: c1 + 1]) - \
                (sat[rows + h, c0: c1] - sat[rows, c0: c1])
        # the free run ending at each column: its length since the last taken column
        last = np.maximum.accumulate(np.where(taken > 0, cols[None], -1), axis=1)
        run_end = cols[None] - last
        end = np.argmax(run_end, axis=1)  # the first widest run of each row
        run = run_end[np.arange(rows.size), end]
        for k in np.flatnonzero(run >= wmin).tolist():
            w = min(int(run[k]), wmax)
            a = c0 + int(end[k]) - int(run[k]) + 1 + (int(run[k]) - w) // 2
            r = int(rows[k])
            out.append((a * cell, r * cell, (a + w) * cell, (r + h) * cell))
    out.sort(key=lambda q: -(q[2] - q[0]) * (q[3] - q[1]))
    return out


def name_need_px(ft, funcs: np.ndarray, tpx: float) -> np.ndarray:
    """Per function of ``funcs``: the width in pixels its shortest name form needs on a box
    (`labels.PAD` each side)."""
    from .labels import PAD
    from .text import name_candidates, text_width

    uniq, inv = np.unique(funcs, return_inverse=True)
    need = np.array([min(text_width(c) for c in name_candidates(ft.display[int(f)])) + 2 * PAD for f in uniq.tolist()])
    return (need * tpx)[inv] if uniq.size else np.zeros(0)


def best_window(lane, start, end, width_px, func, need_px, us_per_px, span_limit_us: float, inset_w_px: float):
    """The stretch of one lane that, magnified to ``inset_w_px`` pixels, makes the most
    distinct functions wide enough for a name: per candidate call (arrays: lane, start, end
    µs, width in the figure's pixels, function, the pixels its name needs; ``us_per_px``
    per lane), for each zoom of `ZOOMS`, stretches of ``inset_w_px / zoom`` pixels
    (`kernels.stretch.best_stretch`); a call counts when it lies inside the stretch and its
    width times the zoom holds its name.  Returns (count, lane, t0, t1, zoom) of the best,
    centred on what it names, ties to the smaller zoom, or None."""
    from ..kernels.stretch import best_stretch

    if start.size == 0:
        return None
    order = np.lexsort((start, lane))
    lane, start, end, width_px, func, need_px = (a[order] for a in (lane, start, end, width_px, func, need_px))
    lane64, func64 = lane.astype(np.int64), func.astype(np.int64)
    start64, end64 = start.astype(np.float64), end.astype(np.float64)
    best = None
    for zoom in ZOOMS:
        ok = width_px * zoom >= need_px
        if not ok.any():
            continue
        span = inset_w_px / zoom * np.asarray(us_per_px, np.float64)
        span = np.where(span <= span_limit_us, span, 0.0)
        n, i = best_stretch(lane64, start64, end64, func64, ok, span)
        if i < 0 or (best is not None and n <= best[0]):
            continue
        ln = int(lane64[i])
        edge = start64[i] + span[ln]
        inside = (lane64 == ln) & (start64 >= start64[i]) & (end64 <= edge) & ok
        lo, hi = float(start64[inside].min()), float(end64[inside].max())
        pad = 0.5 * (span[ln] - (hi - lo))
        best = (int(n), ln, lo - pad, hi + pad, zoom)
    return best


NAME_KINDS = ("call", "run", "row", "group")  # labels that name a call or calls (`spec.LabelSet.kind`)


def names_calls(labels: LabelSet) -> np.ndarray:
    """bool per label: it names a call or a group of calls (`NAME_KINDS`)."""
    return np.isin(np.asarray(labels.kind, dtype=object), NAME_KINDS)


def named_functions(d, names: LabelSet) -> np.ndarray:
    """Functions of the drawn calls that a label of ``names`` names (a call, a run, a row or
    a group: their call, or the call a group is picked by)."""
    ci = names.call_index[names_calls(names) & (names.call_index >= 0)]
    n = d.local.size
    if ci.size == 0 or n == 0:
        return np.unique(d.func[np.zeros(n, np.bool_)])
    if d.source is not None:  # one pass over the drawn calls where they lie (`kernels.overview_drawn`)
        return np.flatnonzero(_named_function_table(d, ci)).astype(d.func.dtype, copy=False)
    return np.unique(np.concatenate([d.func[s][_member(d.call_id[s], ci)] for s in drawn_chunks(n)]))


def _named_function_table(d, ci: np.ndarray) -> np.ndarray:
    """bool per function: a drawn call of it has its id among ``ci`` (`named_functions`: the
    ascending distinct functions are this table's marks)."""
    from ..kernels.overview_drawn import named_functions_of

    src = d.source
    func = np.asarray(src.func)
    lo = int(ci.min())
    table = np.zeros(int(ci.max()) - lo + 1, np.bool_)
    table[ci - lo] = True
    present = np.zeros(max(int(func.max(initial=-1)) + 1, 1), np.bool_)
    named_functions_of(src.pos, src.idx, bool(src.whole), np.asarray(src.orig, np.int64), func, lo, table, present)
    return present


def _member(values: np.ndarray, of: np.ndarray) -> np.ndarray:
    """``np.isin(values, of)`` for integers, by a presence table over their range (linear:
    the drawn calls of a 10^7-call figure against a few hundred names)."""
    if of.size == 0 or values.size == 0:
        return np.zeros(values.size, np.bool_)
    return np.isin(values, of, kind="table")


def _candidates(sel, d, cl, frame, ft, names: LabelSet, tpx: float) -> tuple:
    """The drawn calls the figure leaves unnamed that an inset could name: boxes of their own
    (not merged, not folded bands), at least a pixel wide and narrower than their shortest
    name, not the runtime's, of functions named nowhere in the figure.  (indices into the
    drawn calls, width px, need px)."""
    named = named_functions(d, names)
    if d.source is not None:  # one pass over the drawn calls where they lie (`kernels.overview_drawn`)
        pick, width = _unnamed_boxes(d, cl, frame, ft, named)
        need = name_need_px(ft, d.func[pick], tpx)
        keep = width < need
        return pick[keep], width[keep], need[keep]
    picks, widths = [np.zeros(0, np.int64)], [np.zeros(0)]
    for s in drawn_chunks(d.local.size):  # a chunk of the drawn calls at a time
        func = d.func[s]
        single = cl.single[s] & ~d.folded[s] & ~ft.infra[func]
        single &= ~_member(func, named)
        width = (d.end[s] - d.start[s]) / frame.us_per_px[d.lane[s]]
        p = np.flatnonzero(single & (width >= 1.0))
        picks.append(p + s.start)
        widths.append(width[p])
    pick, width = np.concatenate(picks), np.concatenate(widths)
    need = name_need_px(ft, d.func[pick], tpx)
    keep = width < need
    return pick[keep], width[keep], need[keep]


def _unnamed_boxes(d, cl, frame, ft, named: np.ndarray) -> tuple:
    """`_candidates`' picks and widths before the names' need (`kernels.overview_drawn.unnamed_boxes`)."""
    from ..kernels.overview_drawn import unnamed_boxes

    src = d.source
    func = np.asarray(src.func)
    n_func = max(int(func.max(initial=-1)) + 1, int(ft.infra.size), 1)
    infra = np.zeros(n_func, np.bool_)
    infra[:ft.infra.size] = ft.infra
    named_func = np.zeros(n_func, np.bool_)
    named_func[named] = True
    return unnamed_boxes(src.pos, src.idx, bool(src.whole), np.asarray(src.start), np.asarray(src.end),
                         float(src.t0), float(src.t1), func, src.lane, np.asarray(src.folded), cl.cluster_of, infra,
                         named_func, np.asarray(frame.us_per_px, np.float64))


def plan_inset(st, frame, params, tpx: float, occupied: np.ndarray, cell: float, content_rect,
               names: LabelSet, cl) -> list:
    """Where the inset may go and what it would magnify (see the module docstring): a plan
    per free rectangle tried, best first by the names the window search expects."""
    from ..naming import function_table

    sel, d = st.sel, st.drawn
    res = params.resolution
    pad = int(np.ceil(INSET_PAD_EM * tpx / cell))
    grid = _dilated(occupied, pad)
    rects = free_rectangles(grid, cell, content_rect, MIN_W_EM * tpx, MIN_H_EM * tpx,
                            MAX_W_FRAC * res[0], MAX_H_FRAC * res[1])
    if not rects:
        return []
    rects = _distinct(rects)[:MAX_RECTS]
    mode = params.inset
    if mode not in ("auto", "none"):
        t0, t1 = parse_inset(mode)
        lane = _busiest_lane(sel, d, t0, t1)
        r = rects[0]
        span_px = (t1 - t0) / float(frame.us_per_px[lane])
        return [InsetPlan(lane, t0, t1, r, (r[2] - r[0]) / max(span_px, 1e-9), 0)]
    ft = function_table(sel.trace)
    pick, width, need = _candidates(sel, d, cl, frame, ft, names, tpx)
    if pick.size == 0:
        return []
    plans = []
    limit = MAX_SPAN_FRAC * (sel.t1 - sel.t0)
    for r in rects:
        w_in = r[2] - r[0]
        got = best_window(d.lane[pick], d.start[pick], d.end[pick], width, d.func[pick], need, frame.us_per_px,
                          limit, w_in)
        if got is not None and got[0] >= MIN_NEW_NAMES:
            n, lane, t0, t1, zoom = got
            plans.append(InsetPlan(lane, max(t0, sel.t0), min(t1, sel.t1), r, zoom, n))
    return plans


def _dilated(grid: np.ndarray, k: int) -> np.ndarray:
    """``grid`` with every taken cell grown by ``k`` cells each way."""
    if k <= 0:
        return grid
    from .annotate import summed_area

    ny, nx = grid.shape
    sat = summed_area(grid)
    r0 = np.clip(np.arange(ny) - k, 0, ny)
    r1 = np.clip(np.arange(ny) + k + 1, 0, ny)
    c0 = np.clip(np.arange(nx) - k, 0, nx)
    c1 = np.clip(np.arange(nx) + k + 1, 0, nx)
    s = sat[r1][:, c1] - sat[r0][:, c1] - sat[r1][:, c0] + sat[r0][:, c0]
    return s > 0


def _distinct(rects: list) -> list:
    """Rectangles (largest first) that overlap no larger one by more than half."""
    out = []
    for r in rects:
        a = (r[2] - r[0]) * (r[3] - r[1])
        if all(max(0.0, min(r[2], q[2]) - max(r[0], q[0])) * max(0.0, min(r[3], q[3]) - max(r[1], q[1])) < 0.5 * a
               for q in out):
            out.append(r)
    return out


def _busiest_lane(sel, d, t0: float, t1: float) -> int:
    """The lane with the most drawn time in [t0, t1]."""
    ov = np.clip(np.minimum(d.end, t1) - np.maximum(d.start, t0), 0.0, None)
    busy = np.bincount(d.lane, weights=ov, minlength=sel.lane_threads.size)
    return int(np.argmax(busy))


def parse_inset(text: str) -> tuple:
    """``"T0:T1"`` (µs from the trace start, or with units: ``6.2ms:7.6ms``) → (t0, t1)."""
    from ..params.trace_kinds import Window

    return Window().parse(text)
