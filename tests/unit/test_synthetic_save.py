"""`save_synthetic`: a synthetic trace generated straight into a native file's mapped pages
(issue 26, item 5: 10^8 calls in bounded memory) holds the same trace as the in-memory
generator saved, in a zip that zipfile and numpy read (CRCs checked); ``out=`` arrays."""
from __future__ import annotations

import os
import tracemalloc
import zipfile

import numpy as np
import pytest

import tracevis3d
from tracevis3d.io.native import load_native, save_native_in_place
from tracevis3d.io.synthesis import save_synthetic, synthetic_trace

CASES = [dict(n_calls=20_000, threads=4, seed=1),
         dict(n_calls=30_000, threads=3, seed=3, sync=True, outlier_rate=0.01),
         dict(n_calls=5_000, threads=1, seed=2, deep_recursion=300)]


@pytest.mark.parametrize("case", CASES, ids=["4 threads", "sync", "deep recursion"])
def test_the_file_holds_the_in_memory_trace(tmp_path, case):
    streamed, saved = tmp_path / "streamed.tv3d.npz", tmp_path / "saved.tv3d.npz"
    save_synthetic(streamed, **case)
    tracevis3d.save(synthetic_trace(**case), saved)
    with zipfile.ZipFile(streamed) as z:
        assert z.testzip() is None  # every member's CRC
    a, b = np.load(streamed), np.load(saved)
    assert sorted(a.files) == sorted(b.files)
    for k in b.files:  # the calls, the tables, the metadata's arrays, the header
        assert a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]), k
    u, v = load_native(streamed), load_native(saved)  # validated
    assert u.function_names == v.function_names and u.meta["source"] == v.meta["source"]
    if case.get("sync"):
        assert len(u.obj_ids) > 0 and len(u.meta["sync_pairs"]) > 0
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


def test_out_arrays_are_written_in_place_whatever_they_held():
    n = 10_000
    want = synthetic_trace(n, threads=2, seed=5, sync=True)
    out = {k: np.full(n + (k == "obj_ptr"), 77, getattr(want, k).dtype)
           for k in ("func", "start", "end", "parent", "depth", "end_index", "kind", "thread", "obj_ptr")}
    got = synthetic_trace(n, threads=2, seed=5, sync=True, out=out)
    for k, a in out.items():
        assert getattr(got, k) is a and np.array_equal(a, getattr(want, k)), k
    assert np.array_equal(got.obj_ids, want.obj_ids)
    del out["kind"]
    with pytest.raises(ValueError, match="out must be a dict of the arrays"):
        synthetic_trace(n, out=out)
    out["kind"] = np.zeros(n, np.int32)
    with pytest.raises(ValueError, match=r"out\['kind'\] must be a writable contiguous uint8 array of 10000"):
        synthetic_trace(n, out=out)


def test_generating_into_the_file_uses_no_memory_for_the_calls(tmp_path):
    """numpy's allocations (tracemalloc) while writing 1M calls: a fraction of the file, where
    the in-memory generator holds all of it."""
    n = 1_000_000
    save_synthetic(tmp_path / "warm.tv3d.npz", 1000, threads=4, seed=1)  # kernels compiled outside the count
    tracemalloc.start()
    try:
        save_synthetic(tmp_path / "big.tv3d.npz", n, threads=4, seed=1)
        streamed = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        t = synthetic_trace(n, threads=4, seed=1)
        in_memory = tracemalloc.get_traced_memory()[1]
        del t
    finally:
        tracemalloc.stop()
    size = os.path.getsize(tmp_path / "big.tv3d.npz")
    assert in_memory > 0.8 * size, (in_memory, size)
    assert streamed < 0.2 * size, (streamed, size)


def test_a_failed_fill_leaves_no_file(tmp_path):
    path = tmp_path / "t.tv3d.npz"

    def fill(arrays):
        raise RuntimeError("generator failed")

    with pytest.raises(RuntimeError, match="generator failed"):
        save_native_in_place(path, 1000, fill)
    assert os.listdir(tmp_path) == []
    with pytest.raises(ValueError, match="fill must return the Trace built on the arrays it was given"):
        save_native_in_place(path, 100, lambda arrays: synthetic_trace(100))
    assert os.listdir(tmp_path) == []
    with pytest.raises(TypeError, match="no out="):
        save_synthetic(path, 100, out={})
