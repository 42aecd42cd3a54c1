"""Counters and async slices in the Trace (issue 25, item 1): invariants, subsets, and round
trips through the native and compact files; files written before them load with empty arrays."""
from pathlib import Path

import numpy as np
import pytest

import tracevis3d
from tracevis3d import Trace, TraceInvariantError
from tracevis3d.io.compact import load_compact, save_compact
from tracevis3d.io.native import load_native, save_native
from tracevis3d.model import SIDE_FIELDS

from side_traces import with_side_tracks

DATA = Path(__file__).resolve().parents[1] / "data"


def same_side(a: Trace, b: Trace) -> None:
    for k in SIDE_FIELDS:
        x, y = getattr(a, k), getattr(b, k)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y), k
        else:
            assert list(x) == list(y), k


def test_round_trips_native_and_compact(tmp_path):
    t = with_side_tracks(tracevis3d.synthetic(2000, threads=3, seed=5))
    save_native(t, tmp_path / "a.tv3d.npz")
    same_side(t, load_native(tmp_path / "a.tv3d.npz").check())
    save_compact(t, tmp_path / "a.tv3c")
    u = load_compact((tmp_path / "a.tv3c").read_bytes()).check()
    same_side(t, u)
    assert np.array_equal(t.start, u.start)


def test_files_without_them_load_empty():
    for t in (load_native(DATA / "pre_side_tracks.tv3d.npz"),
              load_compact((DATA / "pre_side_tracks.tv3c").read_bytes())):
        assert len(t) == 300
        t.check()
        for k in SIDE_FIELDS:
            assert len(getattr(t, k)) == 0, k


@pytest.mark.parametrize("field,value,match", [
    ("counter_series", np.array([0, 0, 0, 1, 1, 3], np.int32), "outside the series table"),
    ("counter_ts", np.array([0.0, 5.0, 1.0, 0.0, 5.0, 3.25]), "sorted"),
    ("counter_value", np.array([1.0, np.nan, 1, 1, 1, 1]), "finite"),
    ("series_counter", np.array([0, 0, 2], np.int32), "counter_names"),
    ("async_end", np.array([8.0, 4.0, 2.0, 0.75]), "end >= start"),
    ("async_track", np.array([0, 1, 0, 1], np.int32), "sorted"),
    ("async_name", np.array([0, 1, 3, 0], np.int32), "async_names"),
    ("async_depth", np.array([0, 1, 2], np.int32), "length"),
])
def test_check_names_the_violation(field, value, match):
    t = with_side_tracks(tracevis3d.synthetic(50, threads=1, seed=1))
    setattr(t, field, value)
    with pytest.raises(TraceInvariantError, match=match):
        t.check()


def test_corrupt_file_is_refused(tmp_path):
    t = with_side_tracks(tracevis3d.synthetic(50, threads=1, seed=1))
    t.async_track = np.array([0, 0, 0, 5], np.int32)
    save_native(t, tmp_path / "bad.tv3d.npz")
    with pytest.raises(tracevis3d.TraceFormatError, match="async_track outside"):
        load_native(tmp_path / "bad.tv3d.npz")


def test_subset_keeps_those_of_the_chosen_threads_processes():
    t = with_side_tracks(tracevis3d.synthetic(3000, threads=3, seed=2))
    t.thread_pid = np.array([10, 11, 11], np.int64)
    u = t.subset(thread=[0]).check()  # pid 10: the first two series, the first track
    assert len(u) < len(t)
    assert u.series_names == ["rss", "heap"] and u.counter_ts.tolist() == [0.0, 5.0, 9.5, 0.0, 5.0]
    assert u.async_track_ids == ["0x1"] and u.async_start.tolist() == [1.0, 2.0, 3.0]
    same_side(t, t.subset(thread=[0, 1]).check())  # both processes: all of them
    same_side(t, t.subset(max_depth=1).check())  # no thread or window: all of them


def test_native_files_with_tracks_from_before_ids_kinds_and_scopes(tmp_path):
    """A native file written before async_track_id_kind and async_track_scopes: plain ids."""
    import json
    import zipfile

    t = with_side_tracks(tracevis3d.synthetic(500, threads=2, seed=1))
    save_native(t, tmp_path / "new.tv3d.npz")
    with zipfile.ZipFile(tmp_path / "new.tv3d.npz") as src:
        members = {n: src.read(n) for n in src.namelist()}
    members.pop("async_track_id_kind.npy")
    header_arr = np.load(__import__("io").BytesIO(members["tracevis3d_header.npy"]))
    header = json.loads(header_arr.tobytes())
    del header["tables"]["async_track_scopes"]
    buf = __import__("io").BytesIO()
    np.save(buf, np.frombuffer(json.dumps(header).encode(), np.uint8))
    members["tracevis3d_header.npy"] = buf.getvalue()
    with zipfile.ZipFile(tmp_path / "old.tv3d.npz", "w") as dst:
        for n, b in members.items():
            dst.writestr(n, b)
    u = load_native(tmp_path / "old.tv3d.npz").check()
    assert u.async_track_ids == t.async_track_ids and u.async_track_scopes == ["", ""]
    assert u.async_track_id_kind.tolist() == [1, 1]


def test_unique_rows_is_numpys_unique_of_rows():
    """`flow_arcs.unique_rows` against its brute-force twin, np.unique over the rows:
    the same first occurrences, groups and counts, in the same order."""
    from tracevis3d.layout.flow_arcs import unique_rows

    rng = np.random.default_rng(7)
    for n, k, hi in ((0, 4, 3), (1, 4, 3), (50, 4, 3), (400, 6, 5), (1000, 2, 40)):
        key = rng.integers(-hi, hi, size=(n, k)).astype(np.int64)
        first, group, count = unique_rows(key)
        if n == 0:
            assert first.size == group.size == count.size == 0
            continue
        _, f0, g0, c0 = np.unique(key, axis=0, return_index=True, return_inverse=True, return_counts=True)
        assert np.array_equal(first, f0) and np.array_equal(group, g0.reshape(-1)) and np.array_equal(count, c0)
