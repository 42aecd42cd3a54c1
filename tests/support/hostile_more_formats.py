"""Hostile files for the format rows the other case modules leave out: the preprocessed V8 tick
log (io/v8log.py), pyinstrument JSON (io/pyinstrument.py), GHC's text report (io/ghc_text.py)
a pstats dump, and every format that is recognised but not read (memray, JFR, the raw V8 log, pmcstat,
Papyrus, other zip archives, V8 heap snapshots).

``CASES`` is a list of ``(name, factory, expected, options)`` as in hostile_text_formats.py:
``factory()`` gives the file's bytes, ``options`` go to ``tracevis3d.load``; ``expected`` is
None (the file loads), a regular expression that the one-line `TraceFormatError` (which must
start with the file's name) matches, or ``("repair", code)``: the file loads and its
``meta["repairs"]`` counts ``code``.  The classes are issue 67's (item 8): cut files, ids out of
range, 10^6 interned strings, times going backwards, huge counts, deep nesting, long names.
Every case takes a few seconds at most, in memory linear in its size: tests/unit/
test_hostile_more_formats.py loads each; tests/support/fuzz_hostile.py draws from them, cut or
flipped at random.
"""
from __future__ import annotations

import json
import marshal

MB = 1 << 20


def _j(doc) -> bytes:
    return json.dumps(doc, separators=(",", ":")).encode()


# ----------------------------------------------------------------------------- V8 tick log (preprocessed)
def _v8_code(n: int = 4) -> list:
    return [{"name": f"f{k} /app.js:{k + 1}:1", "type": "JS", "kind": "Opt"} for k in range(n)]


def _v8(ticks, code=None) -> bytes:
    return _j({"code": _v8_code() if code is None else code, "functions": [], "ticks": ticks})


def _tick(tm, *ids) -> dict:
    s = []
    for x in reversed(ids):  # leaf first, each entry followed by its pair
        s += [x, 0]
    return {"tm": tm, "vm": 0, "s": s}


def v8_valid() -> bytes:
    return _v8([_tick(10, 0, 1), _tick(20, 0, 1, 2), _tick(30, 0, 3)])


def v8_cut() -> bytes:
    d = v8_valid()
    return d[: len(d) * 2 // 3]


def v8_ids_out_of_range() -> bytes:  # past the table: a raw address; below -1: "(unknown type)"
    return _v8([_tick(10, 0, 10 ** 12), _tick(20, 0, -7), _tick(30, 2 ** 62, 1)])


def v8_ids_past_int64() -> bytes:
    return _v8([_tick(10, 0, 1), _tick(20, 0, 2 ** 70)])


def v8_ticks_backwards() -> bytes:
    return _v8([_tick(30, 0, 1), _tick(20, 0, 2), _tick(10, 0, 3)])


def v8_huge_time() -> bytes:
    return _v8([_tick(10, 0, 1), _tick(1e300, 0, 2)])


def v8_time_text() -> bytes:
    return _v8([_tick(10, 0, 1), {"tm": "soon", "vm": 0, "s": [0, 0]}])


def v8_ticks_not_a_list() -> bytes:
    return _j({"code": _v8_code(), "ticks": {"0": 1}})


def v8_million_code_entries() -> bytes:  # 10^6 interned names, a few used
    code = [{"name": f"v8::internal::Builtin{k}(int) const", "type": "CPP"} for k in range(1_000_000)]
    return _v8([_tick(k, k * 7919 % 1_000_000, k) for k in range(100)], code)


def v8_many_distinct_stacks() -> bytes:  # 10^5 ticks, each a new path of 3 of 10^5 entries
    n = 100_000
    code = [{"name": f"g{k} /b.js:{k}:1", "type": "JS"} for k in range(n)]
    return _v8([_tick(k, k % 97, k, (k * 31) % n) for k in range(n)], code)


def v8_stack_200k_deep() -> bytes:
    return _v8([_tick(10, *([0, 1] * 100_000)), _tick(20, 0)])


# ----------------------------------------------------------------------------- pyinstrument JSON
def _frame(function, time, children=(), **more) -> dict:
    return {"function": function, "file_path": "/app/m.py", "line_no": 3, "time": time, "await_time": 0,
            "is_application_code": True, "children": list(children), **more}


def _pyi(root, **more) -> bytes:
    return _j({"start_time": 1.0, "duration": 1.0, "sample_count": 10, "program": "m.py", "cpu_time": 1.0,
               "root_frame": root, **more})


def pyi_valid() -> bytes:
    return _pyi(_frame("<module>", 1.0, [_frame("work", 0.6, [_frame("leaf", 0.2)]), _frame("[self]", 0.4)]))


def pyi_cut() -> bytes:
    d = pyi_valid()
    return d[: len(d) // 2]


def pyi_negative_time() -> bytes:
    return _pyi(_frame("<module>", 1.0, [_frame("work", -0.5)]))


def pyi_huge_time() -> bytes:
    return _pyi(_frame("<module>", 1e300))


def pyi_times_past_the_limit_in_sum() -> bytes:  # each below pyinstrument's bound, their sum not
    return _pyi(_frame("<module>", 9e14, [_frame(f"f{k}", 9e14) for k in range(20)]))


def pyi_children_outweigh_parent() -> bytes:  # self time clamped at 0
    return _pyi(_frame("<module>", 0.1, [_frame("a", 0.5), _frame("b", 0.7)]))


def pyi_odd_fields() -> bytes:  # names, files and lines of the wrong types: (anonymous), no file, no line
    return _pyi(_frame("<module>", 1.0, [{"function": [1, 2], "file_path": 7, "line_no": 2 ** 80, "time": 0.5,
                                          "children": []},
                                         {"function": None, "class_name": {"x": 1}, "time": 0.2}]))


def pyi_million_functions() -> bytes:  # 10^6 distinct frames under one root
    kids = ",".join('{"function":"f%d","file_path":"/m.py","line_no":%d,"time":1e-6,"children":[]}' % (k, k)
                    for k in range(1_000_000))
    return ('{"duration":1.0,"root_frame":{"function":"<module>","time":1.0,"children":[' + kids + "]}}").encode()


def pyi_nested_500() -> bytes:
    return ('{"duration":1,"root_frame":' + '{"function":"f","time":1,"children":[' * 500 + "]}" * 500
            + "}").encode()


def pyi_nested_5000() -> bytes:
    return ('{"duration":1,"root_frame":' + '{"function":"f","time":1,"children":[' * 5000 + "]}" * 5000
            + "}").encode()


def pyi_name_10mb() -> bytes:
    return _pyi(_frame("<module>", 1.0, [_frame("x" * (10 * MB), 0.5)]))


# ----------------------------------------------------------------------------- GHC text report
_GHC_HEAD = ("\tSat Nov 28 18:00 2026 Time and Allocation Profiling Report  (Final)\n\n\t   p +RTS -p -RTS\n\n"
             "\ttotal time  =        0.17 secs   (173 ticks @ 1000 us, 1 processor)\n"
             "\ttotal alloc = 1,000 bytes  (excludes profiling overheads)\n\n")
_GHC_TREE = "COST CENTRE MODULE SRC no. entries %time %alloc %time %alloc\n\n"
_GHC_TREE_P = "COST CENTRE MODULE SRC no. entries %time %alloc %time %alloc ticks bytes\n\n"


def _ghc(rows: str, tree: str = _GHC_TREE) -> bytes:
    return (_GHC_HEAD + tree + rows).encode()


def ghc_valid() -> bytes:
    return _ghc("MAIN MAIN <built-in> 1 0 10.0 0.0 100.0 100.0\n"
                " main Main a.hs:1:1 2 1 50.0 20.0 90.0 80.0\n"
                "  go Main a.hs:2:1 3 9 40.0 60.0 40.0 60.0\n")


def ghc_cut() -> bytes:
    d = ghc_valid()
    return d[: len(d) - 9]


def ghc_no_tree() -> bytes:
    return _GHC_HEAD.encode()


def ghc_huge_count() -> bytes:
    return _ghc("MAIN MAIN <built-in> 1 0 10.0 0.0 100.0 100.0 1" + "0" * 30 + " 5\n", _GHC_TREE_P)


def ghc_depth_jump() -> bytes:  # a row a million levels deeper than the one before: its child
    return _ghc("MAIN MAIN <built-in> 1 0 10.0 0.0 100.0 100.0\n" + " " * 1_000_000
                + "deep Main a.hs:1:1 2 1 50.0 0.0 90.0 0.0\n")


def ghc_deep_3000() -> bytes:
    return _ghc("".join(" " * d + f"f{d} Main a.hs:{d}:1 {d + 1} 1 0.1 0.0 1.0 0.0\n" for d in range(3000)))


def ghc_100k_cost_centres() -> bytes:  # 10^5 distinct names, a flat tree
    return _ghc("MAIN MAIN <built-in> 1 0 0.0 0.0 100.0 100.0\n"
                + "".join(f" c{k} Mod{k % 50} a.hs:{k}:1 {k + 2} 1 0.001 0.0 0.001 0.0\n" for k in range(100_000)))


def ghc_name_10mb() -> bytes:
    return _ghc("MAIN MAIN <built-in> 1 0 10.0 0.0 100.0 100.0\n " + "n" * (10 * MB) + " Main a.hs:1:1 2 1 50.0 0.0 "
                "90.0 0.0\n")


def ghc_invalid_utf8() -> bytes:
    return ghc_valid().replace(b"a.hs:1:1", b"a\xff\xfe.hs:1:1")


def ghc_not_numbers() -> bytes:
    return _ghc("MAIN MAIN <built-in> 1 0 x 0.0 100.0 100.0\n")


# ----------------------------------------------------------------------------- pstats (read since session 6)
def pstats_dump() -> bytes:
    return marshal.dumps({("m.py", 1, "f"): (1, 1, 0.5, 0.5, {})})


# ----------------------------------------------------------------------------- Chrome memory-infra dumps (ph v)
def _memdump(pid, ts, allocators) -> dict:
    return {"args": {"dumps": {"allocators": allocators}}, "ph": "v", "name": "periodic_interval", "pid": pid,
            "tid": -1, "ts": ts}


def _md_size(v) -> dict:
    return {"attrs": {"size": {"type": "scalar", "units": "bytes", "value": v}}}


def _memdumps(*dumps) -> bytes:
    return _j({"traceEvents": [{"ph": "X", "name": "main", "pid": 1, "tid": 1, "ts": 0, "dur": 100}, *dumps]})


def memdump_valid() -> bytes:
    return _memdumps(_memdump(1, 10, {"malloc": _md_size("1f00")}), _memdump(1, 20, {"malloc": _md_size("2f00")}))


def memdump_bad_values() -> bytes:  # not hex, past 2**53, a list for a size, a pid that is text
    return _memdumps(_memdump(1, 10, {"malloc": _md_size("0xZZ")}), _memdump(1, 11, {"v8": _md_size("f" * 17)}),
                     _memdump(1, 12, {"v8": _md_size(1e300)}), _memdump(1, 13, {"v8": {"attrs": {"size": [1]}}}),
                     _memdump("one", 14, {"v8": _md_size("10")}), _memdump(1, 15, {"malloc": _md_size("10")}))


def memdump_1e5_allocators() -> bytes:  # one dump of 10^5 allocators: 10^5 series
    return _memdumps(_memdump(1, 10, {f"a{k}": _md_size(format(k + 1, "x")) for k in range(100_000)}))


def memdump_cut() -> bytes:  # cut inside the second dump
    data = memdump_valid()
    return data[:data.rindex(b"2f00")]


CASES = [
    # Chrome memory-infra dumps
    ("chrome_memdump_valid", memdump_valid, None, {}),
    ("chrome_memdump_bad_values", memdump_bad_values, ("repair", "memory_dump_bad"), {}),
    ("chrome_memdump_1e5_allocators", memdump_1e5_allocators, None, {}),
    ("chrome_memdump_cut", memdump_cut, ("repair", "truncated"), {}),
    # V8 tick log, preprocessed
    ("v8log_valid", v8_valid, None, {}),
    ("v8log_cut", v8_cut, r"not valid JSON", {}),
    ("v8log_ids_out_of_range", v8_ids_out_of_range, None, {}),
    ("v8log_ids_past_int64", v8_ids_past_int64, r"ticks\[1\]\.s\[0\]: (expected a code index|\d+ is out of range)", {}),
    ("v8log_ticks_backwards", v8_ticks_backwards, ("repair", "sample_order"), {}),
    ("v8log_huge_time", v8_huge_time, r"ticks\[1\]\.tm: 1e\+300 is not a time", {}),
    ("v8log_time_text", v8_time_text, r"ticks\[1\]\.tm: expected a time", {}),
    ("v8log_ticks_not_a_list", v8_ticks_not_a_list, r"ticks: expected a list", {"format": "v8log-json"}),
    ("v8log_1e6_code_entries", v8_million_code_entries, None, {}),
    ("v8log_1e5_distinct_stacks", v8_many_distinct_stacks, None, {}),
    ("v8log_stack_200k_deep", v8_stack_200k_deep, ("repair", "stack_deep"), {}),
    # pyinstrument JSON
    ("pyinstrument_valid", pyi_valid, None, {}),
    ("pyinstrument_cut", pyi_cut, r"not valid JSON", {"format": "pyinstrument"}),
    ("pyinstrument_negative_time", pyi_negative_time, r"root_frame\.children\[0\]\.time: expected seconds", {}),
    ("pyinstrument_huge_time", pyi_huge_time, r"root_frame\.time: expected seconds", {}),
    ("pyinstrument_times_past_the_limit_in_sum", pyi_times_past_the_limit_in_sum, r"weights sum to .* past", {}),
    ("pyinstrument_children_outweigh_parent", pyi_children_outweigh_parent, None, {}),
    ("pyinstrument_odd_fields", pyi_odd_fields, None, {}),
    ("pyinstrument_1e6_functions", pyi_million_functions, None, {}),
    ("pyinstrument_nested_500", pyi_nested_500, None, {}),
    ("pyinstrument_nested_5000", pyi_nested_5000, r"not valid JSON", {}),
    ("pyinstrument_name_10mb", pyi_name_10mb, None, {}),
    # GHC text report
    ("ghc_prof_valid", ghc_valid, None, {}),
    ("ghc_prof_cut", ghc_cut, r"line 12: expected 'cost-centre module src", {}),
    ("ghc_prof_no_tree", ghc_no_tree, r"no cost-centre tree", {}),
    ("ghc_prof_huge_count", ghc_huge_count, r"line 10: 1e\+?30|line 10: 10{30} is past the limit", {}),
    ("ghc_prof_depth_jump", ghc_depth_jump, ("repair", "ghc_depth"), {}),
    ("ghc_prof_deep_3000", ghc_deep_3000, None, {}),
    ("ghc_prof_1e5_cost_centres", ghc_100k_cost_centres, None, {}),
    ("ghc_prof_name_10mb", ghc_name_10mb, None, {}),
    ("ghc_prof_invalid_utf8", ghc_invalid_utf8, ("repair", "invalid_utf8"), {}),
    ("ghc_prof_not_numbers", ghc_not_numbers, r"line 10: expected numbers", {}),
    ("ghc_prof_alloc_without_bytes", ghc_valid, None, {"measure": "alloc"}),
    # a pstats dump is read (io/pstats.py; its hostile bytes: tests/unit/test_pstats.py)
    ("pstats_dump", pstats_dump, None, {}),
    ("pstats_cut", lambda: pstats_dump()[:-3], r"byte \d+: .*cut short", {}),
    ("pstats_ref_loop", lambda: b"\xfb)\x03r\x00\x00\x00\x00", r"a container still being read \(a loop\)", {}),
    ("pstats_huge_tuple", lambda: b"{)\x03(\xff\xff\xff\x7f", r"a tuple of size 2147483647 needs", {}),
    ("pstats_deep", lambda: b"{" + b")\x01" * 100_000 + b"N", r"nested more than \d+ deep", {}),
    # recognised but not read: one line naming the format
    ("memray_capture", lambda: b"memray\x00\x01" + bytes(range(256)) * 4, r"memray capture", {}),
    ("jfr_recording", lambda: b"FLR\x00\x00\x02\x00\x01" + b"\x00" * 200, r"Java Flight Recorder", {}),
    ("v8log_raw", lambda: b"v8-version,11,3,244,8,0,0\ncode-creation,Builtin,3,1,0x1,100,Abort\ntick,0x2,10,0,0x0,6\n",
     r"V8 log \(node --prof\)", {}),
    ("pmcstat_callgraph", lambda: b"@ CPU_CLK_UNHALTED_CORE [1000 samples]\n\n10.00%  [100]  main @ /bin/prog\n",
     r"pmcstat", {}),
    ("papyrus_log", lambda: b"Stack_0 log opened (PC)\n0:Push:1:Main\n", r"Papyrus", {}),
    ("perf_data", lambda: b"PERFILE2h\x00\x00\x00" + bytes(range(256)) * 4, r"perf script -i", {}),
    ("perf_data_big_endian", lambda: b"2ELIFREP" + b"\x00" * 300, r"linux perf\.data", {}),
    ("go_exec_trace", lambda: b"go 1.23 trace\x00\x00\x00" + bytes(range(256)), r"Go execution trace", {}),
    ("trace_cmd_dat", lambda: b"\x17\x08\x44tracing6\x00" + b"\xff" * 300, r"trace-cmd", {}),
    ("tracy_zstd", lambda: b"tZst" + bytes(range(256)), r"Tracy capture", {}),
    ("ctf_stream", lambda: b"\xc1\x1f\xfc\xc1" + bytes(range(256)), r"Common Trace Format", {}),
    ("zip_other", lambda: b"PK\x03\x04" + b"\x14\x00" + b"\x00" * 200, r"zip", {}),
    ("heapsnapshot", lambda: _j({"snapshot": {"meta": {}, "node_count": 1}, "nodes": [0], "edges": [],
                                 "strings": ["a"]}), r"heap snapshot", {}),
]
