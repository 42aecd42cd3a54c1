"""Chrome memory-infra dumps (``"ph": "v"``): allocator counters in the Trace, the heap dumps
(``heaps_v2``) as a MemoryCapture, bad dumps as one warning line.  Hand-written files in the
format Chromium writes (docs/memory-infra; the real recording is in tests/realtraces)."""
import json
import warnings

import numpy as np
import pytest

import tracevis3d
from tracevis3d.errors import TraceFormatError, TraceWarning

pytestmark = pytest.mark.timeout(300)


def _size(v):
    return {"attrs": {"size": {"type": "scalar", "units": "bytes", "value": format(v, "x")}}}


def _dump(pid, ts, allocators=None, heaps=None, totals=None):
    dumps = {"level_of_detail": "detailed"}
    if totals is not None:
        dumps["process_totals"] = {k: format(v, "x") for k, v in totals.items()}
    if allocators is not None:
        dumps["allocators"] = allocators
    if heaps is not None:
        dumps["heaps_v2"] = heaps
    # Chrome writes the keys sorted: args first, "ph" after them
    return {"args": {"dumps": dumps}, "cat": "disabled-by-default-memory-infra", "id": "0x1",
            "name": "periodic_interval", "ph": "v", "pid": pid, "tid": -1, "ts": ts}


def _write(tmp_path, events, name="t.json"):
    p = tmp_path / name
    p.write_text(json.dumps({"traceEvents": events}))
    return str(p)


CALL = {"ph": "X", "name": "main", "pid": 1, "tid": 1, "ts": 1000, "dur": 5000}
NAME = {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "Browser"}}


def _allocator_events():
    ev = [NAME, CALL]
    for k, (m, v8) in enumerate([(100, 7), (300, 9), (250, 2 ** 40)]):
        ev.append(_dump(1, 1000 + 1000 * k, {"malloc": _size(m), "malloc/allocated_objects": _size(m - 1),
                                             "v8": _size(v8), "tracing": {"guid": "1"}},
                        totals={"private_footprint_bytes": 4096 * (k + 1)}))
    ev.append(_dump(2, 1500, {"malloc": _size(55)}))
    return ev


def _series(t, counter, pid, series):
    c = t.counter_names.index(counter)
    s = [k for k in range(len(t.series_names)) if t.series_counter[k] == c and t.series_pid[k] == pid
         and t.series_names[k] == series]
    assert len(s) == 1, (counter, pid, series)
    m = t.counter_series == s[0]
    return t.counter_ts[m], t.counter_value[m], t.series_units[s[0]]


def test_allocator_sizes_become_counter_series_exactly(tmp_path):
    t = tracevis3d.load(_write(tmp_path, _allocator_events()))
    assert {"memory-infra allocators", "memory-infra totals"} <= set(t.counter_names)
    ts, v, unit = _series(t, "memory-infra allocators", 1, "malloc")
    assert unit == "B" and v.tolist() == [100.0, 300.0, 250.0]
    assert np.allclose(ts, [0.0, 1000.0, 2000.0])  # µs from the trace's origin (the call at 1000)
    _, v, _ = _series(t, "memory-infra allocators", 1, "v8")
    assert v.tolist() == [7.0, 9.0, float(2 ** 40)]
    _, v, _ = _series(t, "memory-infra allocators", 2, "malloc")
    assert v.tolist() == [55.0]
    _, v, _ = _series(t, "memory-infra totals", 1, "private_footprint_bytes")
    assert v.tolist() == [4096.0, 8192.0, 12288.0]
    # sub-allocators ("malloc/allocated_objects") and groups without attrs are no series
    assert "malloc/allocated_objects" not in t.series_names and "tracing" not in t.series_names


def test_trace_without_dumps_is_unchanged_and_load_memory_refuses_it(tmp_path):
    p = _write(tmp_path, [CALL])
    t = tracevis3d.load(p)
    assert "memory-infra allocators" not in t.counter_names
    with pytest.raises(TraceFormatError) as e:
        tracevis3d.load_memory(p)
    msg = str(e.value)
    assert "\n" not in msg and p in msg and "no memory-infra dumps" in msg


def test_allocator_dumps_without_heaps_give_a_band_per_allocator(tmp_path):
    cap = tracevis3d.load_memory(_write(tmp_path, _allocator_events()))
    assert sorted(cap.site_function) == ["malloc · Browser 1", "malloc · process 2", "v8 · Browser 1"]
    # sample and hold: a dump's bytes from it to the process's next dump, the last to the trace's end
    s = cap.site_function.index("malloc · Browser 1")
    m = cap.range_site == s
    assert cap.range_size[m].tolist() == [100, 300, 250]
    assert cap.range_start[m].tolist() == [0.0, 1.0, 2.0] and cap.range_end[m].tolist() == [1.0, 2.0, 5.0]
    assert cap.duration_ms == 5.0  # the call ends at 6000 µs, the first dump is at 1000
    # the heap: the processes' latest dumps summed; its peak at the last dump of process 1
    assert cap.peak_bytes == 250 + 2 ** 40 + 55 and cap.hwm_ms == 2.0
    assert cap.leaked_bytes == 250 + 2 ** 40 + 55
    assert "held until the next" in cap.meta["thickness_note"]


def _heaps(strings, nodes, allocs):
    return {"version": 1, "maps": {"strings": [{"id": i, "string": s} for i, s in strings.items()],
                                   "nodes": [dict({"id": i, "name_sid": sid}, **({"parent": p} if p is not None
                                                                                  else {}))
                                             for i, (sid, p) in nodes.items()],
                                   "types": [{"id": 0, "name_sid": 1}]},
            "allocators": allocs}


def _heap_events():
    strings = {1: "[unknown]", 2: "main", 3: "LoadPage", 4: "ParseHTML", 5: "Decode"}
    nodes = {10: (2, None), 11: (3, 10), 12: (4, 11), 13: (5, 11)}
    first = _heaps(strings, nodes, {"malloc": {"nodes": [12, 13, 12], "sizes": [100, 40, 60], "counts": [2, 1, 1],
                                               "types": [0, 0, 1]},
                                    "partition_alloc": {"nodes": [11], "sizes": [8], "counts": [1], "types": [0]}})
    # the second dump adds a node only (maps persist across a process's dumps)
    second = {"version": 1, "maps": {"strings": [{"id": 6, "string": "Layout"}], "nodes": [{"id": 14, "name_sid": 6,
                                                                                            "parent": 11}]},
              "allocators": {"malloc": {"nodes": [12, 14], "sizes": [10, 500], "counts": [1, 3], "types": [0, 0]}}}
    return [NAME, CALL, _dump(1, 2000, heaps=first), _dump(1, 4000, heaps=second)]


def test_heap_dumps_give_a_band_per_stack_held_between_dumps(tmp_path):
    cap = tracevis3d.load_memory(_write(tmp_path, _heap_events()))
    labels = {cap.site_label(s): s for s in range(cap.n_sites)}
    assert set(labels) == {"ParseHTML · Browser 1 · malloc", "Decode · Browser 1 · malloc",
                           "LoadPage · Browser 1 · partition_alloc", "Layout · Browser 1 · malloc"}
    s = labels["ParseHTML · Browser 1 · malloc"]
    assert cap.stack_text(int(cap.range_stack[np.flatnonzero(cap.range_site == s)[0]])) == [
        "ParseHTML", "LoadPage", "main"]
    m = cap.range_site == s
    assert cap.range_size[m].tolist() == [160, 10]  # two types of one stack summed
    assert cap.range_start[m].tolist() == [0.0, 2.0] and cap.range_end[m].tolist() == [2.0, 4.0]
    lay = labels["Layout · Browser 1 · malloc"]
    assert cap.stack_text(int(cap.range_stack[cap.range_site == lay][0])) == ["Layout", "LoadPage", "main"]
    assert cap.peak_bytes == 510 and cap.hwm_ms == 2.0
    assert cap.leaked_bytes == 510 and cap.n_allocations == 4
    assert cap.range_leaked.sum() == 2


HEAP = {"load_memory"}  # the Trace's counters do not read heaps_v2, the capture does not read process_totals
BOTH = {"load", "load_memory"}
HOSTILE_DUMPS = [
    ({"pid": "x"}, "no integer pid", BOTH),
    ({"pid": 10 ** 30}, "no integer pid", BOTH),
    ({"ts": "soon"}, "no finite ts", BOTH),
    ({"args": {"dumps": [1, 2]}}, "no args.dumps object", BOTH),
    ({"args": {"dumps": {"allocators": {"malloc": {"attrs": {"size": {"value": "zz-top"}}}}}}}, "not a hexadecimal",
     BOTH),
    ({"args": {"dumps": {"allocators": {"malloc": {"attrs": {"size": {"value": "f" * 40}}}}}}}, "not a hexadecimal",
     BOTH),
    ({"args": {"dumps": {"allocators": {"malloc": {"attrs": {"size": {"value": 1e300}}}}}}}, "out of range", BOTH),
    ({"args": {"dumps": {"allocators": {"malloc": {"attrs": {"size": 5}}}}}}, "not an object", BOTH),
    ({"args": {"dumps": {"allocators": 7}}}, "allocators is not an object", BOTH),
    ({"args": {"dumps": {"process_totals": {"rss": [1]}}}}, "is a list", {"load"}),
    ({"args": {"dumps": {"heaps_v2": {"allocators": {"malloc": {"nodes": [1], "sizes": [1, 2]}}}}}},
     "not lists of one length", HEAP),
    ({"args": {"dumps": {"heaps_v2": {"maps": {"nodes": [{"id": 1, "name_sid": 1, "parent": 1}]},
                                      "allocators": {"malloc": {"nodes": [1], "sizes": [5]}}}}}}, "loops", HEAP),
    ({"args": {"dumps": {"heaps_v2": {"maps": {"nodes": [{"id": 1, "name_sid": 1}]},
                                      "allocators": {"malloc": {"nodes": [1], "sizes": [float("inf")]}}}}}},
     "not a whole number", HEAP),
    ({"args": {"dumps": {"heaps_v2": {"allocators": {"malloc": {"nodes": [9], "sizes": [5], "counts": [-1]}}}}}},
     "out of range", HEAP),
    ({"args": {"dumps": {"heaps_v2": {"maps": {"nodes": [{"id": 1, "name_sid": [1, 2]}]},
                                      "allocators": {"malloc": {"nodes": [1, 1], "sizes": [5, 6], "counts": [1, True]}}}}}},
     "is a bool", HEAP),
    ({"args": {"dumps": {"heaps_v2": {"maps": {"strings": "abc"}, "allocators": {"malloc": {"nodes": ["a"],
                                                                                          "sizes": [5]}}}}}},
     "maps.strings is not a list", HEAP),
]


@pytest.mark.parametrize("patch,problem,loaders", HOSTILE_DUMPS)
def test_bad_dumps_are_one_warning_line_naming_file_and_event(tmp_path, patch, problem, loaders):
    bad = dict(_dump(1, 1500, {"malloc": _size(1)}), **patch)
    events = _allocator_events() + [bad]
    p = _write(tmp_path, events)
    text = json.dumps({"traceEvents": events}).replace("Infinity", "1e999")
    open(p, "w").write(text)
    for load in (getattr(tracevis3d, name) for name in sorted(loaders)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = load(p)
        lines = [str(x.message) for x in w if issubclass(x.category, TraceWarning) and "memory" in str(x.message)
                 and "dump" in str(x.message)]
        assert len(lines) == 1 and "\n" not in lines[0], lines
        where = f"event #{len(events) - 1} (byte "
        if load is tracevis3d.load:  # the Chrome reader's repair, in meta and in its warning
            assert lines[0].startswith(f"{p}: 1 × memory-infra dump") and f"first: {where}" in lines[0], lines[0]
            assert out.meta["repairs"]["memory_dump_bad"]["count"] == 1
        else:
            assert lines[0].startswith(f"{p}: memory dump left out: {where}"), lines[0]
        assert problem in lines[0], lines[0]


def test_dump_events_inside_args_or_strings_are_not_dumps(tmp_path):
    nested = dict(CALL, args={"inner": _dump(1, 1500, {"malloc": _size(9)}), "text": '"ph":"v"'})
    p = _write(tmp_path, [nested])
    t = tracevis3d.load(p)
    assert "memory-infra allocators" not in t.counter_names
    with pytest.raises(TraceFormatError, match="no memory-infra dumps"):
        tracevis3d.load_memory(p)


def test_array_form_and_gzip(tmp_path):
    import gzip

    p = tmp_path / "a.json.gz"
    p.write_bytes(gzip.compress(json.dumps(_allocator_events()).encode()))
    cap = tracevis3d.load_memory(str(p))
    assert cap.n_sites == 3
    t = tracevis3d.load(str(p))
    assert "memory-infra allocators" in t.counter_names


def test_memory_view_of_heap_dumps_names_the_stacks_and_says_what_a_band_is(tmp_path):
    from tracevis3d.layout.memory import memory_layout

    cap = tracevis3d.load_memory(_write(tmp_path, _heap_events()))
    spec = memory_layout(cap)
    bands = next(layer for layer in spec.layers if layer.name == "memory_bands")
    assert len(bands.positions) > 0
    texts = " ".join(spec.labels.texts)
    assert "ParseHTML" in texts and "Layout" in texts
    assert "held until the next" in texts and "memray" not in texts
    assert "colour: heap stack, largest first" in texts and "allocation site" not in texts  # what a band is
    allocators = " ".join(memory_layout(tracevis3d.load_memory(_write(tmp_path, _allocator_events()))).labels.texts)
    assert "colour: allocator, largest first" in allocators and "allocation site" not in allocators
