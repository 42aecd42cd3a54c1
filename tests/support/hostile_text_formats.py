"""Hostile inputs for the aggregated-profile readers (collapsed stacks, perf script, callgrind,
pprof, Instruments text): ``CASES`` is a list of (name, bytes factory, expected error regex or
None, load options).  None: the file loads (repaired where it needs it); a regex: the load
raises one `TraceFormatError` whose one-line message starts with the file's name and
matches it.  tests/test_collapsed.py loads each; bench/bench_text_load.py can time them.

The pprof inputs are written by the small protobuf encoder here (no protobuf package)."""
from __future__ import annotations

import gzip
import pathlib

from hostile_perfetto import varint

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "formats"
MB = 1 << 20


# ----------------------------------------------------------------------------- a protobuf writer


def field_varint(num: int, v: int) -> bytes:
    return varint(num << 3) + varint(v)


def field_bytes(num: int, b: bytes) -> bytes:
    return varint((num << 3) | 2) + varint(len(b)) + b


def packed(num: int, values) -> bytes:
    return field_bytes(num, b"".join(varint(v) for v in values))


def pprof(samples, locations=None, functions=None, strings=None, types=(("samples", "count"),)) -> bytes:
    """A Profile: ``samples`` [(location ids leaf first, values)], ``locations`` [(id,
    function id)], ``functions`` [(id, name string index)], ``strings`` (index 0 is "")."""
    strings = list(strings or ["", "main", "work", "leaf"])
    for t, u in types:
        strings += [t, u]
    out = bytearray()
    base = len(strings) - 2 * len(types)
    for k, _ in enumerate(types):
        out += field_bytes(1, field_varint(1, base + 2 * k) + field_varint(2, base + 2 * k + 1))
    for locs, vals in samples:
        out += field_bytes(2, packed(1, locs) + packed(2, vals))
    for lid, fid in (locations if locations is not None else [(1, 1), (2, 2), (3, 3)]):
        out += field_bytes(4, field_varint(1, lid) + field_bytes(4, field_varint(1, fid)))
    for fid, name in (functions if functions is not None else [(1, 1), (2, 2), (3, 3)]):
        out += field_bytes(5, field_varint(1, fid) + field_varint(2, name))
    for s in strings:
        out += field_bytes(6, s.encode())
    return bytes(out)


# ----------------------------------------------------------------------------- the cases
def _vertx_cut() -> bytes:
    d = gzip.decompress((DATA / "speedscope-samples" / "stackcollapse" / "perf-vertx-stacks-01-collapsed-all.txt.gz")
                        .read_bytes())
    return d[: len(d) // 2 + 17]


def _perf_cut() -> bytes:
    d = (DATA / "perf" / "prog.perf.txt").read_bytes()
    return d[: len(d) // 2 + 23]


_PERF_EVENT = b"prog 10 [000] 1.000001: 1000 cycles:\n"
_PERF_FRAMES = b"\t 11ad leaf+0x34 (/bin/prog)\n\t 1348 main+0x62 (/bin/prog)\n\n"


def _dense_callgrind(n: int = 200) -> bytes:
    """Every function calls every later one: a call graph with 2^n paths."""
    lines = ["events: Ir", ""]
    for i in range(n):
        lines += [f"fn=f{i}", "1 5"]
        for j in range(i + 1, n):
            lines += [f"cfn=f{j}", "calls=1 1", f"1 {5 * (n - j)}"]
    return ("\n".join(lines) + "\n").encode()


def _instruments(rows) -> bytes:
    head = "Weight\tSelf Weight\t\tSymbol Name\n"
    return (head + "".join(f"{w}\t0\t \t{' ' * d}{s}\n" for w, d, s in rows)).encode()


CASES = [
    # collapsed stacks
    ("collapsed_cut", _vertx_cut, None, {}),
    ("collapsed_line_10mb", lambda: b"main;" + b"x" * (10 * MB) + b" 5\nmain 1\n", None, {"format": "collapsed"}),
    ("collapsed_line_10mb_no_count", lambda: b"x;" * (5 * MB), r"none of its 1 lines is a collapsed stack.*line 1",
     {"format": "collapsed"}),
    ("collapsed_count_1e30", lambda: b"a;b 1" + b"0" * 30 + b"\nc 1\n", None, {}),
    ("collapsed_count_negative", lambda: b"a;b -5\nc 1\n", None, {}),
    ("collapsed_count_nan", lambda: b"a;b NaN\na;b inf\nc 2\n", None, {"format": "collapsed"}),
    ("collapsed_only_bad_counts", lambda: b"a;b NaN\na;b -1\n", r"none of its 2 lines.*line 1", {"format": "collapsed"}),
    ("collapsed_counts_zero", lambda: b"a;b 0\nc 0\n", r"weigh nothing", {}),
    ("collapsed_1e6_distinct_frames", lambda: "".join(f"main;f{i} 1\n" for i in range(1_000_000)).encode(), None, {}),
    ("collapsed_deep_1e6", lambda: b"a;b;" * 500_000 + b"c 1\n", None, {"format": "collapsed"}),
    ("collapsed_invalid_utf8", lambda: b"a;\xff\xfe\x80b 3\na;\xc3 1\n", None, {"format": "collapsed"}),
    ("collapsed_utf16_halves", lambda: b"\xff\xfe" + "a;b 1\nc 2\n".encode("utf-16-le") + b"\x00\xd8a\x00\n\x00\x07",
     None, {"format": "collapsed"}),
    ("collapsed_empty", lambda: b"", r"it is empty", {"format": "collapsed"}),
    ("collapsed_thread_frames_only", lambda: b"thread (1);thread (2) 5\n", r"weigh nothing", {}),
    # perf script
    ("perf_cut", _perf_cut, None, {}),
    ("perf_no_time", lambda: b"prog 10 cycles:\n\t 11ad leaf (/bin/prog)\n\n", r"none of its 1 events has a time",
     {"format": "perf-script"}),
    ("perf_garbage_lines", lambda: _PERF_EVENT + b"\tnot a frame\n" * 100_000 + _PERF_FRAMES, None,
     {"format": "perf-script"}),
    ("perf_symbol_10mb", lambda: _PERF_EVENT + b"\t 11ad " + b"s" * (10 * MB) + b" (/bin/prog)\n\n", None, {}),
    ("perf_deep_200k", lambda: _PERF_EVENT + b"\t 11ad leaf (/bin/prog)\n" * 200_000 + b"\n", None, {}),
    ("perf_pid_overflow", lambda: b"prog 99999999999999999999999/1 1.0: cycles:\n" + _PERF_FRAMES, None, {}),
    ("perf_event_names_1e5", lambda: b"".join(b"prog 10 1.%06d: ev%d:\n" % (i, i) + _PERF_FRAMES for i in range(100_000)),
     None, {}),
    ("perf_frames_without_event", lambda: _PERF_FRAMES * 1000 + _PERF_EVENT + _PERF_FRAMES, None,
     {"format": "perf-script"}),
    ("perf_unknown_event", lambda: _PERF_EVENT + _PERF_FRAMES, r"no 'instructions' events; its events: cycles \(1\)",
     {"event": "instructions"}),
    # callgrind
    ("callgrind_undefined_ids", lambda: b"events: Ir\nfn=(5)\n1 10\ncfn=(7)\ncalls=1 1\n1 5\n", None,
     {"format": "callgrind"}),
    ("callgrind_cycle", lambda: b"events: Ir\nfn=a\n1 1\ncfn=b\ncalls=1 1\n1 9\nfn=b\n1 1\ncfn=c\ncalls=1 1\n1 8\n"
                                b"fn=c\n1 1\ncfn=a\ncalls=1 1\n1 7\ncfn=c\ncalls=1 1\n1 6\n", None,
     {"format": "callgrind"}),
    ("callgrind_dense_graph", _dense_callgrind, None, {"format": "callgrind"}),
    ("callgrind_no_events", lambda: b"fn=a\n1 2\n", r"no 'events:' line", {"format": "callgrind"}),
    ("callgrind_bad_costs", lambda: b"events: Ir\nfn=a\n1 x\n1 0x\n1 3\n", None, {"format": "callgrind"}),
    ("callgrind_huge_cost", lambda: b"events: Ir\nfn=a\n1 1" + b"0" * 40 + b"\n", r"past", {"format": "callgrind"}),
    ("callgrind_unknown_line", lambda: b"events: Ir\nhello world\n", r"line 2: not a callgrind line",
     {"format": "callgrind"}),
    ("callgrind_calls_at_end", lambda: b"events: Ir\nfn=a\n1 4\ncfn=b\ncalls=1 1\n", None, {"format": "callgrind"}),
    ("callgrind_two_event_lines", lambda: b"events: Ir\nfn=a\n1 4\nevents: Dr\n", r"line 4: a second 'events:'",
     {"format": "callgrind"}),
    # pprof
    ("pprof_varint_never_ends", lambda: b"\x08" + b"\xff" * 12, r"byte 1: a varint that does not end",
     {"format": "pprof"}),
    ("pprof_length_past_end", lambda: pprof([([1], [1])]) + b"\x12\xff\xff\x03", r"byte \d+: a field that runs past",
     {"format": "pprof"}),
    ("pprof_group_wire_type", lambda: pprof([([1], [1])]) + b"\x0b", r"byte \d+: a field of wire type",
     {"format": "pprof"}),
    ("pprof_location_ids_out_of_range", lambda: pprof([([999, 2, 1], [3]), ([1 << 62], [1])]), None, {}),
    ("pprof_function_ids_out_of_range", lambda: pprof([([1, 2], [3])], locations=[(1, 77), (2, 2)]), None, {}),
    ("pprof_string_index_out_of_range", lambda: pprof([([1, 2], [3])], functions=[(1, 1 << 40), (2, 9999)]), None,
     {}),
    ("pprof_huge_and_negative_values", lambda: pprof([([1], [(1 << 63) - 1]), ([2], [-5]), ([3, 1], [4])]), None,
     {}),
    ("pprof_recursion_200k", lambda: pprof([([1] * 200_000, [7])]), None, {}),
    ("pprof_missing_values", lambda: pprof([([1], []), ([2, 1], [2])]), None, {}),
    ("pprof_bad_packed", lambda: pprof([([1], [1])]) + field_bytes(2, field_bytes(1, b"\xff\xff")), r"byte \d+: a varint",
     {"format": "pprof"}),
    ("pprof_no_samples", lambda: pprof([]), r"without samples", {"format": "pprof"}),
    # Instruments text
    ("instruments_depth_jump", lambda: _instruments([("10.0 ms  100.0%", 0, "main"), ("4.0 ms  40.0%", 5, "deep")]),
     None, {}),
    ("instruments_bad_weights", lambda: _instruments([("lots  100.0%", 0, "main"), ("?? 3%", 1, "f")]),
     r"weigh nothing", {}),
]
