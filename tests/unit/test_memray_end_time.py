"""A memray capture that does not say when it ended (memray's live stream leaves the header's end
time 0, as does a tracker killed before it rewrote its header) whose records come after its last
memory snapshot (issue 71: a short program ended before memray's second snapshot, 1 run in 3 of the
panel's live test): the records spread past that snapshot, so the figure has bands and a legend,
never ranges of no width.  Records written here by the unit tests' pure-Python writer of memray's
format (`test_memray_scan.Writer`), read by `io.memray_own.capture_of`, laid out by
`layout.memory.memory_layout`."""
import numpy as np
import pytest

from test_memray_scan import Writer, _scan

from tracevis3d.io.limits import resolve_limits
from tracevis3d.io.memray_capture import SNAPSHOT_INTERVAL_MS
from tracevis3d.io.memray_own import capture_of

START_MS = 1_700_000_000_000  # the header's start, ms since the epoch


def _program(snapshots_ms=(0,), pos_of_snapshots=None):
    """A main thread that allocates 40 blocks of two sites, frees every third, after the memory
    snapshots at ``snapshots_ms`` (all before the first record unless ``pos_of_snapshots`` says
    after how many allocations each comes)."""
    w = Writer()
    w.switch(7)
    w.thread_name("main")
    w.code_object(1, "build_tables", "prog.py", 10, b"")
    w.code_object(2, "grow_buffers", "prog.py", 20, b"")
    pos = list(pos_of_snapshots or [0] * len(snapshots_ms))
    done = 0
    for k in range(40):
        while pos and pos[0] <= done:
            pos.pop(0)
            w.memory_record(40_000_000 + 1000 * k, snapshots_ms[len(snapshots_ms) - len(pos) - 1])
        w.push(1 + k % 2, 4)
        w.allocate(0x10000 + 0x1000 * k, 1000 + 100 * k, 3)  # malloc
        w.pop(1)
        if k % 3 == 2:
            w.allocate(0x10000 + 0x1000 * (k - 1), 0, 1)  # free
        done += 1
    while pos:
        pos.pop(0)
        w.memory_record(40_000_000, snapshots_ms[len(snapshots_ms) - len(pos) - 1])
    w.trailer()
    return w


def _capture(w, end_ms=0, end_epoch_ms=None):
    head = dict(n_allocations=0, start_ms=START_MS, end_ms=end_ms, command_line="prog.py", pid=1, main_tid=7,
                skipped=0, python_allocator=3, trace_python_allocators=False)
    raw = {"header": head, "data": bytes(w.out), "scan": _scan(w)}
    return capture_of(raw, "memray live test", resolve_limits(None), False, end_epoch_ms=end_epoch_ms)


@pytest.mark.timeout(300)
def test_records_after_the_only_snapshot_spread_over_one_interval():
    cap = _capture(_program((0,)))  # the header's end 0: unknown
    assert cap.duration_ms == SNAPSHOT_INTERVAL_MS
    assert cap.meta["repairs"]["no_end_time"]["count"] == cap.n_records
    assert np.all(np.diff(cap.range_start) > 0)  # each allocation at its own moment, in record order
    assert 0.0 < cap.range_start.min() and cap.range_end.max() <= cap.duration_ms
    freed = ~cap.range_leaked
    assert freed.any() and np.all(cap.range_end[freed] > cap.range_start[freed])


@pytest.mark.timeout(300)
def test_the_interval_is_the_snapshots_own():
    # snapshots 0, 20, 30 ms after 0, 10, 20 allocations, then 20 more: the median step is 15 ms
    cap = _capture(_program((0, 20, 30), pos_of_snapshots=(0, 10, 20)))
    assert cap.duration_ms == 45.0 and "no_end_time" in cap.meta["repairs"]
    assert cap.range_start[25] > 30.0


@pytest.mark.timeout(300)
def test_a_known_end_is_kept():
    cap = _capture(_program((0,)), end_ms=START_MS + 40)  # a capture file's header: its end
    assert cap.duration_ms == 40.0 and "no_end_time" not in cap.meta["repairs"]
    cap = _capture(_program((0,)), end_epoch_ms=START_MS + 25.5)  # the live stream's last byte arrived
    assert cap.duration_ms == 25.5 and "no_end_time" not in cap.meta["repairs"]
    cap = _capture(_program((0,)), end_epoch_ms=START_MS - 5000)  # a peer's clock ahead of ours: not used
    assert cap.duration_ms == SNAPSHOT_INTERVAL_MS and "no_end_time" in cap.meta["repairs"]


@pytest.mark.timeout(300)
def test_the_figure_of_a_capture_that_ends_after_its_only_snapshot_has_bands_and_a_legend():
    from tracevis3d.layout.memory import memory_layout
    from tracevis3d.params.memory import MemoryParams

    spec = memory_layout(_capture(_program((0,))), MemoryParams(resolution=(960, 540), bins=120))
    bands = spec.layer("memory_bands")
    assert len(bands) > 0 and float(bands.scales[:, 2].max()) > 0
    assert set(np.unique(bands.attributes["band_index"]).tolist()) == {0, 1}  # both sites drawn
    legend = [t for t, k in zip(spec.labels.texts, spec.labels.kind) if k == "site"]
    assert any("build_tables" in t for t in legend) and any("grow_buffers" in t for t in legend), \
        list(zip(spec.labels.texts, spec.labels.kind))
