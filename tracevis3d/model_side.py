"""The counters and async slices of a `Trace`: their dtypes, the fields files
written before them may lack, and their invariants (`check_side`, called by `Trace.check()`
and the file loaders).  Contracts in `model.Trace`'s docstring."""
from __future__ import annotations

import numpy as np

SIDE_DTYPES = {
    # counters: one sample per row, sorted by (counter_series, counter_ts)
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
# every array a file may lack: the side arrays, the instants' process (`fill_instant_pids`)
# and the flows' category (`fill_flow_cats`)
ADDED_ARRAYS = OPTIONAL_ARRAYS + ("instant_pid", "flow_cat")
OPTIONAL_TABLES = ("counter_names", "series_names", "series_units", "async_names", "async_track_cats",
                   "async_track_ids", "async_track_scopes")
SIDE_FIELDS = OPTIONAL_ARRAYS + OPTIONAL_TABLES
# string tables a file may lack besides the side ones (loaded empty)
ADDED_TABLES = ("flow_cat_names",)
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


def fill_instant_pids(t) -> None:
    """Give Trace ``t`` the process of each instant when its file predates ``instant_pid``:
    the thread's process for an instant on a thread, -1 (unknown) for the others."""
    ni = t.instant_ts.shape[0]
    if not ni or t.instant_pid.shape[0] or t.instant_thread.shape[0] != ni:
        return
    th = t.instant_thread
    pids = np.asarray(t.thread_pid, np.int64)
    t.instant_pid = np.where(th >= 0, pids[np.clip(th, 0, max(pids.shape[0] - 1, 0))] if pids.size else -1,
                             -1).astype(np.int64)


def fill_flow_cats(t) -> None:
    """Give Trace ``t`` a category per flow when it has flows without them (a file or a
    caller from before ``flow_cat``): one unnamed category ("")."""
    nf = t.flow_id.shape[0]
    if not nf or t.flow_cat.shape[0]:
        return
    t.flow_cat = np.zeros(nf, np.int32)
    if not t.flow_cat_names:
        t.flow_cat_names = [""]


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


def cut_side(t, time_window=None, pids=None) -> dict:
    """The counters and async slices of Trace ``t`` cut like its calls (`Trace.subset`), as
    keyword arguments of `Trace`.

    ``pids``: the processes kept (None: all): series and tracks of other processes go.
    ``time_window`` (t0, t1), µs, closed: each series keeps its samples inside it plus the
    last one before t0 (a counter is a step function: that sample is its value at t0); an
    async slice overlapping it is kept, clipped to it (its nesting stays valid: a parent
    clips like its children).  Series and tracks left without samples or slices go; the
    others are renumbered in order, the name tables (``counter_names``, ``async_names``)
    stay whole like the function table."""
    out = {k: getattr(t, k) for k in SIDE_FIELDS}
    # counters
    s = t.counter_series
    keep = np.ones(s.shape[0], bool)
    if pids is not None:
        keep &= np.isin(t.series_pid, pids)[s] if s.size else keep
    if time_window is not None and s.size:
        t0, t1 = time_window
        ts = t.counter_ts
        before = ts < t0
        nxt_before = np.append(before[1:] & (s[1:] == s[:-1]), False)
        keep &= ((ts >= t0) & (ts <= t1)) | (before & ~nxt_before)
    if not keep.all():
        used = np.zeros(t.series_counter.shape[0], bool)
        used[s[keep]] = True
        new_id = np.cumsum(used, dtype=np.int64) - 1
        out["counter_ts"] = t.counter_ts[keep]
        out["counter_value"] = t.counter_value[keep]
        out["counter_series"] = new_id[s[keep]].astype(np.int32)
        out["series_counter"] = t.series_counter[used]
        out["series_pid"] = t.series_pid[used]
        out["series_names"] = [x for x, u in zip(t.series_names, used.tolist()) if u]
        out["series_units"] = [x for x, u in zip(t.series_units, used.tolist()) if u]
    # async slices
    tr = t.async_track
    keep = np.ones(tr.shape[0], bool)
    if pids is not None and tr.size:
        keep &= np.isin(t.async_track_pid, pids)[tr]
    start, end = t.async_start, t.async_end
    if time_window is not None and tr.size:
        t0, t1 = time_window
        keep &= (end >= t0) & (start <= t1)
        start, end = np.maximum(start, t0), np.minimum(end, t1)
    if not keep.all() or start is not t.async_start:
        used = np.zeros(t.async_track_pid.shape[0], bool)
        used[tr[keep]] = True
        new_id = np.cumsum(used, dtype=np.int64) - 1
        out["async_start"] = np.ascontiguousarray(start[keep], np.float64)
        out["async_end"] = np.ascontiguousarray(end[keep], np.float64)
        out["async_name"] = t.async_name[keep]
        out["async_track"] = new_id[tr[keep]].astype(np.int32)
        out["async_depth"] = t.async_depth[keep]
        out["async_track_pid"] = t.async_track_pid[used]
        out["async_track_id_kind"] = t.async_track_id_kind[used]
        for k in ("async_track_cats", "async_track_ids", "async_track_scopes"):
            out[k] = [x for x, u in zip(getattr(t, k), used.tolist()) if u]
    return out


def side_summary(t) -> str:
    """What Trace ``t`` carries besides calls, for messages: "N counter samples, M async
    slices, K instants" (only the nonzero ones; '' when none)."""
    parts = [(t.counter_ts.shape[0], "counter sample"), (t.async_start.shape[0], "async slice"),
             (t.instant_ts.shape[0], "instant")]
    return ", ".join(f"{n} {what}{'' if n == 1 else 's'}" for n, what in parts if n)


def no_calls_message(t, source: str) -> str:
    """The one-line reason a view cannot draw Trace ``t`` (no calls), naming ``source`` and
    what the file holds instead."""
    has = side_summary(t)
    return (f"{source} has no calls but {has}: the views draw those only beside calls" if has
            else f"{source} holds no calls")
