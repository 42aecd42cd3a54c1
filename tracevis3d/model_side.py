"""The counters and async slices of a `Trace` (issue 25): their dtypes, the fields files
written before them may lack, and their invariants (`check_side`, called by `Trace.check()`
and the file loaders).  Contracts in `model.Trace`'s docstring."""
from __future__ import annotations

import numpy as np

SIDE_DTYPES = {
    # counters (issue 25): one sample per row, sorted by (counter_series, counter_ts)
    "counter_ts": np.float64,
    "counter_value": np.float64,
    "counter_series": np.int32,
    # the series table: one row per (counter, args key)
    "series_counter": np.int32,
    "series_pid": np.int64,
    # async slices: nested per track, sorted by (async_track, async_start)
    "async_start": np.float64,
    "async_end": np.float64,
    "async_name": np.int32,
    "async_track": np.int32,
    "async_depth": np.int32,
    # the async track table: one row per (category, scope, id[, process for id2.local ids])
    "async_track_pid": np.int64,
    "async_track_id_kind": np.uint8,  # jsonside.ID_*: none, id, id2.global, id2.local
}
# added after the first file versions: files without them load with empty arrays / tables
OPTIONAL_ARRAYS = tuple(SIDE_DTYPES)
OPTIONAL_TABLES = ("counter_names", "series_names", "series_units", "async_names", "async_track_cats",
                   "async_track_ids", "async_track_scopes")
SIDE_FIELDS = OPTIONAL_ARRAYS + OPTIONAL_TABLES
# per-track fields added after the track table: files with tracks but without them get these
TRACK_DEFAULTS = {"async_track_id_kind": 1, "async_track_scopes": ""}


def fill_track_defaults(t) -> None:
    """Give Trace ``t`` the per-track fields its file predates (`TRACK_DEFAULTS`: ids were
    plain ``id``s without a scope then), when it has tracks and those fields are empty."""
    ntr = t.async_track_pid.shape[0]
    if not ntr:
        return
    if t.async_track_id_kind.shape[0] == 0:
        t.async_track_id_kind = np.full(ntr, TRACK_DEFAULTS["async_track_id_kind"], np.uint8)
    if len(t.async_track_scopes) == 0:
        t.async_track_scopes = [TRACK_DEFAULTS["async_track_scopes"]] * ntr


def check_side(t, nt: int, _fail) -> None:
    """Counters and async slices of Trace ``t`` (``nt`` threads): lengths, indices into their
    tables, order, finite values; ``_fail(msg)`` raises on the first violation."""
    nc = t.counter_ts.shape[0]
    for name in ("counter_value", "counter_series"):
        if getattr(t, name).shape[0] != nc:
            _fail(f"{name} length differs from counter_ts")
    ns = t.series_counter.shape[0]
    if t.series_pid.shape[0] != ns or len(t.series_names) != ns or len(t.series_units) != ns:
        _fail("series_pid, series_names and series_units must have one entry per series_counter")
    if ns and (t.series_counter.min() < 0 or t.series_counter.max() >= len(t.counter_names)):
        _fail("series_counter outside counter_names")
    if nc:
        s = t.counter_series
        if s.min() < 0 or s.max() >= ns:
            _fail("counter_series outside the series table")
        if not (np.all(np.isfinite(t.counter_ts)) and np.all(np.isfinite(t.counter_value))):
            _fail("counter_ts and counter_value must be finite")
        ds = np.diff(s)
        if np.any(ds < 0) or np.any((ds == 0) & (np.diff(t.counter_ts) < 0)):
            _fail("counters must be sorted by (counter_series, counter_ts)")
    na = t.async_start.shape[0]
    for name in ("async_end", "async_name", "async_track", "async_depth"):
        if getattr(t, name).shape[0] != na:
            _fail(f"{name} length differs from async_start")
    ntr = t.async_track_pid.shape[0]
    if (len(t.async_track_cats) != ntr or len(t.async_track_ids) != ntr or len(t.async_track_scopes) != ntr
            or t.async_track_id_kind.shape[0] != ntr):
        _fail("async_track_cats, async_track_ids, async_track_scopes and async_track_id_kind must have "
              "one entry per async_track_pid")
    if ntr and t.async_track_id_kind.max() > 3:
        _fail("async_track_id_kind outside 0..3")
    if na:
        if not (np.all(np.isfinite(t.async_start)) and np.all(t.async_end >= t.async_start)):
            _fail("async slices must have finite starts and end >= start")
        if t.async_name.min() < 0 or t.async_name.max() >= len(t.async_names):
            _fail("async_name outside async_names")
        tr = t.async_track
        if tr.min() < 0 or tr.max() >= ntr:
            _fail("async_track outside the track table")
        if t.async_depth.min() < 0:
            _fail("async_depth must be >= 0")
        dt = np.diff(tr)
        if np.any(dt < 0) or np.any((dt == 0) & (np.diff(t.async_start) < 0)):
            _fail("async slices must be sorted by (async_track, async_start)")
