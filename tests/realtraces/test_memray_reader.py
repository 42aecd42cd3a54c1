"""memray captures read through memray's own FileReader (`tracevis3d.io.memray`): the three
figures equal memray's exactly on real programs recorded here with ``python -m memray run``, the
ranges and the clock hold together, and bad input is one line naming the file and the position."""
import os
import time

import numpy as np
import pytest

from memray_captures import memray_available, recorded

pytestmark = pytest.mark.skipif(not memray_available(), reason="memray is not installed (pip install memray)")

#: the captures of `memray_captures.CAPTURES` these tests read
CAPTURES = ("pydoc", "json", "pool", "pool-native", "json-raw")


@pytest.fixture(scope="module")
def captures(tmp_path_factory):
    return recorded(tmp_path_factory, CAPTURES)


def _memray_figures(path):
    import memray

    r = memray.FileReader(path)
    try:
        md = r.metadata
        leaked = sum(int(x.size) for x in r.get_leaked_allocation_records(merge_threads=False))
        return int(md.peak_memory), int(md.total_allocations), leaked
    finally:
        r.close()


@pytest.mark.timeout(900)
@pytest.mark.parametrize("key", list(CAPTURES))
def test_figures_equal_memrays_own(captures, key):
    from tracevis3d import load_memory

    path = captures[key]
    cap = load_memory(path)
    peak, total, leaked = _memray_figures(path)
    assert (cap.peak_bytes, cap.n_allocations, cap.leaked_bytes) == (peak, total, leaked)
    # the ranges agree with memray's figures: the pairing's own high-water mark and leaks
    assert cap.meta["peak_bytes_paired"] == peak
    assert int(cap.range_size[cap.range_leaked].sum()) == leaked
    assert cap.n_records == total


@pytest.mark.timeout(900)
@pytest.mark.parametrize("key", ["pydoc", "pool", "json"])
def test_ranges_sites_and_clock_hold_together(captures, key):
    from tracevis3d import load_memory

    cap = load_memory(captures[key])
    n = cap.n_ranges
    assert n > 100
    for name in ("range_address", "range_size", "range_start", "range_end", "range_leaked", "range_stack",
                 "range_thread", "range_allocator", "range_record", "range_freed_by"):
        a = getattr(cap, name)
        assert isinstance(a, np.ndarray) and a.shape == (n,), name
    assert np.all(cap.range_end >= cap.range_start)
    assert np.all(np.diff(cap.range_start) >= -1e-9), "allocations are in record order, the clock never runs back"
    assert cap.range_start.min() >= 0 and cap.range_end.max() <= cap.duration_ms + 1e-6
    assert np.all(cap.range_end[cap.range_leaked] == cap.duration_ms)
    freed = ~cap.range_leaked
    assert np.all(cap.range_freed_by[freed] > cap.range_record[freed])
    # every memory snapshot found its place in the record stream (the reader's heap counts)
    assert cap.clock == "snapshots" and cap.meta["snapshots_placed"] == cap.snap_ms.size > 0
    assert 0 <= cap.hwm_ms <= cap.duration_ms
    # sites: the innermost frame of each stack, named with file:line; per-site lifetimes
    assert cap.n_sites > 10 and len(cap.site_file) == cap.n_sites == cap.site_line.size
    site = cap.range_site
    assert site.max() < cap.n_sites
    assert int(cap.site_bytes.sum()) == int(cap.range_size.sum())
    for s in np.flatnonzero(cap.site_count)[:50].tolist():
        sel = site == s
        assert cap.site_start[s] == pytest.approx(cap.range_start[sel].min())
        assert cap.site_end[s] == pytest.approx(cap.range_end[sel].max())
    top = int(np.argmax(cap.site_bytes))
    assert ":" in cap.site_label(top) and cap.stack_text(int(cap.range_stack[site == top][0]))
    assert len(cap.thread_names) == cap.thread_ids.size >= 1
    if key == "pool":
        assert len(cap.thread_names) >= 4, "the pool's worker threads are told apart"
        assert any("ThreadPoolExecutor" in t for t in cap.thread_names)


def test_site_stacks_are_memrays_stacks(captures):
    """A range's stack is the one memray gives for its record (innermost frame first)."""
    import memray

    from tracevis3d import load_memory

    path = captures["pydoc"]
    cap = load_memory(path)
    want = {}
    for k, rec in enumerate(memray.FileReader(path).get_allocation_records()):
        if k > 20000:
            break
        if rec.allocator in (1, 5, 15):  # frees carry no stack
            continue
        want[k] = [f"{f} ({os.path.basename(p) if not p.startswith('<frozen') else p[8:-1].rsplit('.', 1)[-1]}:{ln})"
                   for f, p, ln in rec.stack_trace()[:8]]
    checked = 0
    pos = {int(r): i for i, r in enumerate(cap.range_record[:20000].tolist())}
    for k, frames in list(want.items())[::97]:
        i = pos[k]
        assert cap.stack_text(int(cap.range_stack[i]), 8) == frames
        checked += 1
    assert checked > 10


# ----------------------------------------------------------------------------- bad input
def _bad_cases(raw: bytes, compressed: bytes) -> dict:
    rng = np.random.default_rng(5)
    n = len(raw)
    return {
        "empty": b"",
        "random": rng.integers(0, 256, 5000, dtype=np.uint8).tobytes(),
        "magic then random": b"memray" + rng.integers(0, 256, 5000, dtype=np.uint8).tobytes(),
        "header only": raw[:30],
        "cut at half": raw[:n // 2],
        "cut at 90%": raw[:int(n * 0.9)],
        "damaged middle": raw[:n // 2] + rng.integers(0, 256, 3000, dtype=np.uint8).tobytes() + raw[n // 2 + 3000:],
        "another version": raw[:7] + bytes([raw[7] + 1]) + raw[8:],
        "compressed cut short": compressed[:len(compressed) // 2],
        "compressed, another version": compressed[:20] + bytes([compressed[20] ^ 0xFF]) + compressed[21:],
        "lz4 frame of something else": b"\x04\x22\x4d\x18" + rng.integers(0, 256, 3000, dtype=np.uint8).tobytes(),
    }


@pytest.mark.timeout(300)
def test_bad_input_is_one_line_naming_the_file_and_where(captures, tmp_path):
    from tracevis3d.errors import TraceFormatError
    from tracevis3d.io import load_memory

    raw = open(captures["json-raw"], "rb").read()
    compressed = open(captures["json"], "rb").read()
    for name, data in _bad_cases(raw, compressed).items():
        p = tmp_path / (name.replace(" ", "_").replace(",", "").replace("%", "") + ".bin")
        p.write_bytes(data)
        t = time.perf_counter()
        with pytest.raises(TraceFormatError) as e:
            load_memory(p)
        msg = str(e.value)
        assert time.perf_counter() - t < 5.0, name
        assert "\n" not in msg and msg.startswith(f"{p}: "), (name, msg)
        assert "byte " in msg or "record " in msg, (name, msg)


def test_a_trace_loader_points_to_the_memory_view(captures):
    import tracevis3d
    from tracevis3d.errors import TraceFormatError

    for key in ("json", "json-raw"):  # LZ4-compressed (memray's default) and --no-compress
        with pytest.raises(TraceFormatError, match="memray capture.*load_memory or render-memory"):
            tracevis3d.load(captures[key])
