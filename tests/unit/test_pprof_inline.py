"""pprof's inlined frames (issue 82 §2): a Location with several ``line`` entries is several
frames, the first line the innermost, the last the function the others were inlined into.

The real file: Go 1.19's CPU profile of encoding/json and compress/gzip at work
(tests/data/formats/go/jsongzip, README there), whose hottest code is compress/flate's
``findMatch`` with ``matchLen`` inlined into it.  Every function's self and total time must be
what ``go tool pprof -top`` gives for the same file (its table is copied below), ``matchLen``
among them, as a leaf.  Hand-made profiles check the order of the frames and the repairs."""
from __future__ import annotations

import collections
import pathlib

import numpy as np
import pytest

from hostile_text_formats import field_bytes, field_varint, packed

from tracevis3d.io import load, load_bytes

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "formats"
JSONGZIP = DATA / "go" / "jsongzip" / "cpu.pb.gz"

#: ``go tool pprof -top -unit=ms cpu.pb.gz`` (Go 1.19.8): function → (flat ms, cum ms)
GO_TOOL_PPROF_TOP = {
    "compress/flate.(*compressor).findMatch": (4160, 5000),
    "compress/flate.matchLen": (840, 840),
    "compress/flate.(*compressor).deflate": (340, 5400),
    "runtime.memmove": (250, 250),
    "runtime.memclrNoHeapPointers": (200, 200),
    "runtime.mallocgc": (130, 470),
    "encoding/json.(*decodeState).object": (70, 1130),
    "encoding/json.checkValid": (70, 230),
    "runtime.heapBitsSetType": (70, 90),
    "runtime.mapassign_faststr": (70, 170),
    "bytes.(*Buffer).WriteByte": (60, 70),
    "encoding/json.stateEndValue": (60, 90),
    "runtime.scanobject": (60, 70),
}


def _flat_and_cum(trace) -> tuple:
    """Per function name: (self time, time of the calls with no caller of the same name above
    them: pprof's "cum", every sample whose stack holds the function counted once), and the
    names of the leaf calls."""
    names = trace.function_names
    flat: collections.Counter = collections.Counter()
    cum: collections.Counter = collections.Counter()
    self_t = trace.self_time
    n = len(trace)
    has_child = np.zeros(n, bool)
    has_child[trace.parent[trace.parent >= 0]] = True
    leaves = set()
    for i in range(n):
        nm = names[trace.func[i]]
        flat[nm] += float(self_t[i])
        p = int(trace.parent[i])
        while p >= 0 and names[trace.func[p]] != nm:
            p = int(trace.parent[p])
        if p < 0:
            cum[nm] += float(trace.end[i] - trace.start[i])
        if not has_child[i]:
            leaves.add(nm)
    return flat, cum, leaves


@pytest.mark.timeout(120)
def test_go_inlined_leaf_has_go_tool_pprof_times():
    t = load(JSONGZIP, warn=False)
    assert t.meta["pprof_sample_type"] == "cpu/nanoseconds" and t.meta["x_unit"] == "µs"
    assert t.meta["total_weight"] == pytest.approx(7810e3)  # "Total samples = 7810ms"
    flat, cum, leaves = _flat_and_cum(t)
    assert "compress/flate.matchLen" in leaves
    for name, (f_ms, c_ms) in GO_TOOL_PPROF_TOP.items():
        assert flat[name] == pytest.approx(f_ms * 1e3), name
        assert cum[name] == pytest.approx(c_ms * 1e3), name
    # matchLen stands on findMatch, the function it was inlined into
    matchlen = t.function_names.index("compress/flate.matchLen")
    calls = np.flatnonzero(t.func == matchlen)
    assert calls.size and all(t.function_names[t.func[t.parent[c]]] == "compress/flate.(*compressor).findMatch"
                              for c in calls)


def _profile(locations, samples) -> bytes:
    """A Profile of functions f0..f4 (ids 1..5), ``locations`` [(id, [function ids of its lines,
    innermost first])], ``samples`` [location ids leaf first] of 1 each."""
    strings = ["", "samples", "count"] + [f"f{k}" for k in range(5)] + ["x.go"]
    out = field_bytes(1, field_varint(1, 1) + field_varint(2, 2))
    for ids in samples:
        out += field_bytes(2, packed(1, ids) + packed(2, [1]))
    for lid, fids in locations:
        body = field_varint(1, lid) + field_varint(3, 0x1000 + lid)
        for fid in fids:
            body += field_bytes(4, field_varint(1, fid) + field_varint(2, 7))
        out += field_bytes(4, body)
    for k in range(5):
        out += field_bytes(5, field_varint(1, k + 1) + field_varint(2, 3 + k) + field_varint(4, 8))
    for s in strings:
        out += field_bytes(6, s.encode())
    return out


def _paths(trace) -> set:
    names = trace.function_names
    out = set()
    for i in range(len(trace)):
        path, p = [], i
        while p >= 0:
            path.append(names[trace.func[p]])
            p = int(trace.parent[p])
        out.add((tuple(reversed(path)), float(trace.end[i] - trace.start[i])))
    return out


def test_inlined_lines_are_frames_innermost_first():
    # location 2 holds f2 inlined into f1 (lines: f2, then f1); location 1 is f0, the caller
    t = load_bytes(_profile([(1, [1]), (2, [3, 2])], [[2, 1], [2, 1], [1]]), source="i.pb", warn=False)
    assert _paths(t) == {(("f0",), 3.0), (("f0", "f1"), 2.0), (("f0", "f1", "f2"), 2.0)}
    assert not t.meta["repairs"]


def test_unknown_functions_of_inlined_lines():
    # a line of no function among known ones is left out (a repair); a location of no known
    # line at all is its address, as before
    t = load_bytes(_profile([(1, [1]), (2, [99, 2]), (3, [98])], [[2, 1], [3, 1]]), source="u.pb", warn=False)
    assert _paths(t) == {(("f0",), 2.0), (("f0", "f1"), 1.0), (("f0", "0x1003"), 1.0)}
    reps = t.meta["repairs"]
    assert reps["pprof_line_function"]["count"] == 1 and reps["pprof_line_function"]["first"] == "location id 2"
    assert reps["pprof_function_id"]["count"] == 1 and reps["pprof_function_id"]["first"] == "location id 3"
