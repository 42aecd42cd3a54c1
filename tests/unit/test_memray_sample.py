"""tracevis3d.io.samples.memray: the warm-up's capture made in code is a valid memray capture, read
the same by our reader and by memray's own FileReader."""
import numpy as np
import pytest

from tracevis3d.io import load_memory_bytes
from tracevis3d.io.samples import memray as sample_capture


def test_our_reader_reads_every_record_of_the_sample():
    cap = load_memory_bytes(sample_capture(), source="<sample>", reader="own")
    assert cap.thread_names == ["MainThread", "worker"]
    assert cap.n_allocations == 12 and cap.n_ranges == 9  # 9 allocations, 3 of them freed
    assert int((cap.range_freed_by >= 0).sum()) == 3
    assert sorted(cap.frame_function) == ["build", "main", "worker"]
    assert cap.frame_line.tolist() and min(cap.frame_line) >= 10
    assert cap.snap_rss.tolist() == [40 << 20, 41 << 20]


def test_memrays_own_reader_reads_the_same():
    pytest.importorskip("memray", reason="memray is not installed")
    own = load_memory_bytes(sample_capture(), source="<sample>", reader="own")
    theirs = load_memory_bytes(sample_capture(), source="<sample>", reader="memray")
    differ = [k for k, v in vars(own).items()
              if k not in ("meta", "source") and isinstance(v, np.ndarray) and not np.array_equal(v, vars(theirs)[k])]
    assert differ == []
    assert own.thread_names == theirs.thread_names and own.site_function == theirs.site_function
