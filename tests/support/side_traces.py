"""Traces with side tables for the counter, async and flow tests: a trace given two counters
and two async tracks (`with_side_tracks`), and a synthetic trace whose flows cross a lane
(`crossed_by_arcs`)."""
import numpy as np

import tracevis3d
from tracevis3d.model import Trace


def with_side_tracks(t: Trace) -> Trace:
    """``t`` with two counters (three series) and two async tracks (nested, zero-length)."""
    t.counter_names = ["memory", "gc[7]"]
    t.series_names = ["rss", "heap", "collections"]
    t.series_units = ["", "", ""]
    t.series_counter = np.array([0, 0, 1], np.int32)
    t.series_pid = np.array([10, 10, 11], np.int64)
    t.counter_series = np.array([0, 0, 0, 1, 1, 2], np.int32)
    t.counter_ts = np.array([0.0, 5.0, 9.5, 0.0, 5.0, 3.25])
    t.counter_value = np.array([1e9, 1.5e9, -2.0, 0.0, 7.0, 1.0])
    t.async_names = ["request", "parse", "mark"]
    t.async_track_cats = ["net", "net"]
    t.async_track_ids = ["0x1", "7"]
    t.async_track_pid = np.array([10, 11], np.int64)
    t.async_track_id_kind = np.array([1, 3], np.uint8)  # an "id", an id2.local
    t.async_track_scopes = ["", "db"]
    t.async_start = np.array([1.0, 2.0, 3.0, 0.5])
    t.async_end = np.array([8.0, 4.0, 3.0, 0.75])
    t.async_name = np.array([0, 1, 2, 0], np.int32)
    t.async_track = np.array([0, 0, 0, 1], np.int32)
    t.async_depth = np.array([0, 1, 2, 0], np.int32)
    return t.check()


def crossed_by_arcs():
    """Flows from thread 0's wide calls to thread 2's: their arcs cross lane 1 and its names."""
    t = tracevis3d.synthetic(2000, threads=3, seed=9)
    wide = np.argsort(-(t.end - t.start) * (t.depth > 0), kind="stable")
    a, b = wide[t.thread[wide] == 0][:30], wide[t.thread[wide] == 2][:30]
    t.flow_id = np.arange(30, dtype=np.int64)
    t.flow_from, t.flow_to = a.astype(np.int32), b.astype(np.int32)
    return t.check()
