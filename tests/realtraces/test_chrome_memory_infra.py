"""Chrome's memory-infra dumps in a real recording (tests/data/formats/chromium/
chromium-memory-infra.json.gz, Chromium 156 headless): the allocators' sizes are counter
series equal to the dumps' numbers exactly, and the capture's bands and figures equal a
brute-force reading of the same events with Python's json."""
import gzip
import json
import pathlib

import numpy as np
import pytest

import tracevis3d

pytestmark = pytest.mark.timeout(600)
REC = pathlib.Path(__file__).resolve().parents[1] / "data" / "formats" / "chromium" / "chromium-memory-infra.json.gz"


@pytest.fixture(scope="module")
def events():
    return json.loads(gzip.decompress(REC.read_bytes()))["traceEvents"]


def _top_allocators(ev, key="size"):
    """{allocator: bytes} of one dump event, read plainly (the twin of `allocator_sizes`)."""
    out = {}
    for name, a in ev["args"]["dumps"].get("allocators", {}).items():
        attrs = a.get("attrs", {})
        v = attrs.get(key, attrs.get("size"))
        if "/" not in name and v is not None:
            out[name] = int(v["value"], 16)
    return out


def test_allocator_counters_equal_the_dumps_numbers(events):
    t = tracevis3d.load(str(REC))
    c = t.counter_names.index("memory-infra allocators")
    want = {}
    for ev in sorted((e for e in events if e.get("ph") == "v"), key=lambda e: e["ts"]):
        for name, b in _top_allocators(ev).items():
            want.setdefault((ev["pid"], name), []).append(float(b))
    assert len({p for p, _ in want}) >= 5 and len(want) >= 30  # several processes, many allocators
    got = {}
    for s in np.flatnonzero(t.series_counter == c).tolist():
        got[(int(t.series_pid[s]), t.series_names[s])] = t.counter_value[t.counter_series == s].tolist()
        assert t.series_units[s] == "B"
    assert got == want  # exactly, in time order
    assert "memory-infra totals" in t.counter_names


def test_capture_of_the_recording_equals_a_plain_reading(events):
    cap = tracevis3d.load_memory(str(REC))
    dumps = sorted((e for e in events if e.get("ph") == "v" and _top_allocators(e)), key=lambda e: e["ts"])
    # the heap over time: the processes' latest dumps of effective sizes summed
    cur, peak = {}, 0
    for ev in dumps:
        cur[ev["pid"]] = sum(_top_allocators(ev, "effective_size").values())
        peak = max(peak, sum(cur.values()))
    assert cap.peak_bytes == peak
    assert cap.leaked_bytes == sum(cur.values())
    assert cap.n_sites == len({(e["pid"], a) for e in dumps for a, b in _top_allocators(e, "effective_size").items()
                               if b > 0})
    assert cap.n_ranges == sum(1 for e in dumps for b in _top_allocators(e, "effective_size").values() if b > 0)
    assert np.all(cap.range_end >= cap.range_start) and cap.range_start.min() == 0.0
    assert cap.meta["reader"] == "chrome memory-infra" and "held until the next" in cap.meta["thickness_note"]
