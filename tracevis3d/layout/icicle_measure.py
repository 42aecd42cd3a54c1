"""The icicle's measure stage (`icicle.icicle_stages`): a measure per shown call, normalised for
the boxes' depth into the picture, read where indexed (`MeasureUnits`: a 10^8-call overview
holds no array of it), and its maximum per lane."""
from __future__ import annotations

import numpy as np

from ..model import Trace
from .annotate import x_unit_of
from .lazy_column import LazyColumn


def measure_calls(tr: Trace, idx: np.ndarray, which: str) -> np.ndarray:
    """A measure per call: ``constant``, ``inclusive`` or ``self`` time (µs), ``calls`` of its function."""
    if which == "constant":
        return np.ones(idx.size)
    if which in ("inclusive", "self"):  # `MEASURE_CHUNK` calls at a time (a chunk's temporaries)
        out = np.empty(idx.size)
        for a in range(0, idx.size, MEASURE_CHUNK):
            i = idx[a:a + MEASURE_CHUNK]
            out[a:a + MEASURE_CHUNK] = tr.end[i] - tr.start[i] if which == "inclusive" else \
                np.maximum(tr.self_time_of(i), 0.0)
        return out
    if which == "calls":
        return np.bincount(tr.func, minlength=tr.n_functions)[tr.func[idx]].astype(np.float64)
    raise ValueError(which)


#: `measure_calls` and `extrusion` read this many shown calls at a time
MEASURE_CHUNK = 1 << 20


def per_lane_max(values, lane, n_lanes) -> np.ndarray:
    """Max of ``values`` per lane; lanes are contiguous runs of ``lane`` (0 for a lane with
    none), `MEASURE_CHUNK` values at a time (the maxima of a lane's parts, maxed)."""
    out = np.full(n_lanes, -np.inf)
    seen = np.zeros(n_lanes, np.bool_)
    for a in range(0, values.size, MEASURE_CHUNK):
        v, ln = np.asarray(values[a:a + MEASURE_CHUNK]), np.asarray(lane[a:a + MEASURE_CHUNK])
        starts = np.flatnonzero(np.r_[True, ln[1:] != ln[:-1]])
        np.maximum.at(out, ln[starts], np.maximum.reduceat(v, starts))
        seen[ln[starts]] = True
    out[~seen] = 0.0
    return out


class MeasureUnits(LazyColumn):
    """The measure (`measure_calls`) normalised to (0.12 .. 1] per shown call, float64, read
    where indexed: ``units[p]`` is ``0.12 + 0.88 · m / mmax`` (0.12 where ``mmax`` is not
    positive) of the measures m of the shown calls p, made for those calls (a 10^8-call
    overview holds no array of it: 8 bytes a call); used whole (numpy functions and
    operators) it is made for that use, `MEASURE_CHUNK` calls at a time."""

    CHUNK = MEASURE_CHUNK
    WRITE_ERROR = "a figure's measures are read, not written"

    def __init__(self, tr: Trace, idx: np.ndarray, which: str, drawn=None, lane=None, n_lanes: int = 0):
        if which not in ("constant", "inclusive", "self", "calls"):
            raise ValueError(which)
        self.tr, self.idx, self.which = tr, idx, which
        self.counts = np.bincount(tr.func, minlength=tr.n_functions) if which == "calls" else None
        self.mmax = 0.0
        # with ``drawn`` and ``lane`` (bool and lane per shown call): each lane's largest measure
        # among its drawn calls, in the same pass (`lane_units`)
        self.lane_mmax = np.full(n_lanes, -np.inf) if drawn is not None else None

        def part(a):  # a chunk's largest measure, and its lanes' among their drawn calls
            mv = self.measure(slice(a, a + MEASURE_CHUNK))
            if drawn is None:
                return np.max(mv), None, None
            on = np.flatnonzero(drawn[a:a + MEASURE_CHUNK])
            ln = np.asarray(lane[a:a + MEASURE_CHUNK])[on]
            seen = np.zeros(n_lanes, np.bool_)
            seen[ln] = True
            return np.max(mv), per_lane_max(mv[on], ln, n_lanes), seen

        from .overview_pool import in_parts

        parts = in_parts(part, list(range(0, idx.size, MEASURE_CHUNK)), idx.size)  # maxima: in any order
        for _, per_lane, seen in parts if drawn is not None else ():
            self.lane_mmax = np.where(seen, np.maximum(self.lane_mmax, per_lane), self.lane_mmax)
        if parts:
            self.mmax = float(np.max([m for m, _, _ in parts]))

    def lane_units(self) -> np.ndarray:
        """`per_lane_max` of the drawn calls' units (given to the constructor): the unit of each
        lane's largest measure (the formula is monotone: the same largest unit), 0 for a lane
        without drawn calls."""
        m = self.lane_mmax
        seen = m > -np.inf
        unit = 0.12 + 0.88 * (m / self.mmax if self.mmax > 0 else np.zeros_like(m))
        return np.where(seen, unit, 0.0)

    def measure(self, p) -> np.ndarray:
        """The measures (`measure_calls`) of the shown calls ``p`` (an index array or a slice)."""
        i = self.idx[p]
        tr = self.tr
        if self.which == "constant":
            return np.ones(np.size(i))
        if self.which == "inclusive":
            return tr.end[i] - tr.start[i]
        if self.which == "self":
            return np.maximum(tr.self_time_of(i), 0.0)
        return self.counts[tr.func[i]].astype(np.float64)

    def __getitem__(self, p):
        scalar = np.ndim(p) == 0 and not isinstance(p, slice)
        mv = self.measure(np.atleast_1d(p) if scalar else p)
        out = 0.12 + 0.88 * (mv / self.mmax if self.mmax > 0 else np.zeros_like(mv))
        return out[0] if scalar else out

    def __len__(self) -> int:
        return int(self.idx.shape[0])


def extrusion(tr, idx, measure: str, drawn=None, lane=None, n_lanes: int = 0) -> tuple:
    """The measure normalised to (0.12 .. 1] per shown call (`MeasureUnits`, read where
    indexed; with ``drawn``, ``lane``, ``n_lanes``: its `MeasureUnits.lane_units` too), and the
    legend's line for it."""
    unit = MeasureUnits(tr, idx, measure, drawn, lane, n_lanes)
    mmax = unit.mmax
    if measure == "constant":
        return unit, None
    xu = x_unit_of(tr)  # a merged trace's measure: "self samples (deepest 1.2k samples)"
    what = {"inclusive": f"inclusive {xu.quantity}", "self": f"self {xu.quantity}",
            "calls": "calls of the function"}[measure]
    most = xu.fmt(mmax) if measure != "calls" else f"{int(mmax):,}"
    return unit, f"depth into the picture: {what} (deepest {most})"
