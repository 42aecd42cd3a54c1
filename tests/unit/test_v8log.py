"""V8's preprocessed tick log (``node --prof-process --preprocess``): a real recording against a
naive reading of speedscope's ``v8proflog.ts`` (its stacks, names and time order), the sniffer
on a head the code table fills, and bad input (one line naming the file and the JSON path)."""
from __future__ import annotations

import pathlib
import re
from collections import Counter

import numpy as np
import orjson
import pytest

import tracevis3d
from refusals import refusal
from speedscope_twins import calls_of, timed_samples
from tracevis3d.io import formats
from tracevis3d.io.v8log import load_v8log_json
from tracevis3d.model import TraceFormatError

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "formats" / "v8log" / "prog.v8log.json"


def naive_frame(code) -> tuple:
    """(key, name) of a code entry, speedscope's ``codeToFrameInfo`` written out (the file of a
    JS name may carry a scheme; a C++ name keeps its text)."""
    if not isinstance(code, dict) or not code.get("type"):
        return "(unknown type)", "(unknown type)"
    name, typ = code["name"], code["type"]
    if typ == "CPP":
        return (name[2:], name[2:]) if name[:2] in ("t ", "T ") else (name, name)
    if typ == "SHARED_LIB":
        return "(LIB) " + name, "(LIB) " + name
    if typ == "JS":
        m = re.fullmatch(r"([a-zA-Z0-9._\-$]*) ([a-zA-Z0-9.\-_/$:]*):(\d+):(\d+)", name)
        if m:
            func = m.group(1) or (f"(anonymous {m.group(2).split('/')[-1]}:{m.group(3)})" if m.group(2)
                                  else "(anonymous)")
            return name, func
        return name, name
    if typ == "CODE":
        pre = {"LoadIC": "(IC) ", "StoreIC": "(IC) ", "KeyedStoreIC": "(IC) ", "KeyedLoadIC": "(IC) ",
               "LoadGlobalIC": "(IC) ", "Handler": "(IC) ", "BytecodeHandler": "(bytecode) ~", "Stub": "(stub) ",
               "Builtin": "(builtin) ", "RegExp": "(regexp) "}.get(code.get("kind"), "")
        return pre + name, pre + name
    return f"({typ}) {name}", f"({typ}) {name}"


def naive_calls(doc) -> list:
    """Every call of the log as (name path, start, end), µs on the log's clock: each tick's stack
    read as speedscope reads it, ticks in time order, each lasting until the next (the last one
    a median step)."""
    code = doc["code"]
    ticks = sorted(doc["ticks"], key=lambda t: t["tm"])
    stacks, names = [], {}
    for t in ticks:
        st = []
        s = t["s"]
        for i in range(len(s) - 2, -1, -2):
            x = s[i]
            if x == -1:
                continue
            if x > len(code):
                key = name = f"0x{x:x}"
            else:
                key, name = naive_frame(code[x] if 0 <= x < len(code) else None)
            names[key] = name
            st.append(key)
        stacks.append(tuple(st))
    tm = [float(t["tm"]) for t in ticks]
    steps = [b - a for a, b in zip(tm, tm[1:]) if b > a]
    end = tm[-1] + (float(np.median(steps)) if steps else 1.0)
    out = [(tuple(names[k] for k in p), s, e) for p, s, e in timed_samples(stacks, tm, end) if e > s]
    return sorted(out)


def _load(doc, **kw):
    return load_v8log_json(orjson.dumps(doc), source="x.v8log.json", warn=False, **kw)


def test_the_recorded_log_is_recognised_and_read_as_speedscope_reads_it():
    data = DATA.read_bytes()
    assert formats.detect(data).key == "v8log-json"
    trace = tracevis3d.load(DATA, warn=False)
    assert trace.meta["format"] == "v8log-json" and not trace.meta.get("merged")
    got, want = sorted(calls_of(trace)), naive_calls(orjson.loads(data))
    assert len(got) == len(want) > 100
    for (pa, sa, ea), (pb, sb, eb) in zip(got, want):
        assert pa == pb and sa == pytest.approx(sb) and ea == pytest.approx(eb)
    names = set(trace.function_names)
    assert {"sortMany", "jsonWork"} <= names  # the program's own functions, by name
    k = trace.function_names.index("sortMany")
    assert trace.function_files[k].endswith("prog.js") and trace.function_lines[k] == 2
    self_by_name = Counter()
    for f, s in zip(trace.func.tolist(), trace.self_time.tolist()):
        self_by_name[trace.function_names[f]] += s
    assert self_by_name.most_common(1)[0][0] == "sortMany"  # what the program spends its time in


def test_the_sniffer_reads_the_first_code_entry_when_the_table_fills_the_head():
    code = [{"name": f"v8::internal::Builtin{k}(int) const", "type": "CPP"} for k in range(8000)]
    doc = orjson.dumps({"code": code, "functions": [], "ticks": [{"tm": 1, "vm": 0, "s": [0, 0]}]})
    assert len(doc) > formats.KEY_SCAN_BYTES
    assert formats.detect(doc).key == "v8log-json"
    assert formats.detect(b'{"code": [], "ticks": []}').key == "v8log-json"
    assert formats.detect(b'{"code": 3, "message": "x"}').key == "chrome"  # some other JSON


def test_addresses_padding_odd_stacks_and_unknown_entries():
    code = [{"name": "main /app.js:1:1", "type": "JS", "kind": "Opt"},
            {"name": " /app.js:5:3", "type": "JS"},
            {"name": "T v8::internal::Heap::Scavenge()", "type": "CPP"},
            {"name": "/lib/libc.so.6", "type": "SHARED_LIB"},
            {"name": "ArrayPush", "type": "CODE", "kind": "Builtin"},
            {"name": "Ldar", "type": "CODE", "kind": "BytecodeHandler"},
            {"name": "weird", "type": "OTHER"},
            {"name": "no type"}]
    n = len(code)
    ticks = [{"tm": 10, "vm": 0, "s": [1, 9, 0, 9]},
             {"tm": 20, "vm": 0, "s": [2, 9, -1, 9, 0, 9]},
             {"tm": 30, "vm": 0, "s": [9, 4, 9, 0, 9]},  # odd length: the odd places, as speedscope reads them
             {"tm": 40, "vm": 0, "s": [n, 0, 0x7F001234, 0, 0, 0]},
             {"tm": 5, "vm": 0, "s": [5, 0, 3, 0, 6, 0, 7, 0, -7, 0, 0, 0]},
             {"tm": 50, "vm": 0, "s": []}]
    doc = {"code": code, "ticks": ticks}
    trace = _load(doc)
    assert sorted(calls_of(trace)) == naive_calls(doc)
    names = set(trace.function_names)
    assert {"main", "(anonymous app.js:5)", "v8::internal::Heap::Scavenge()", "(LIB) /lib/libc.so.6",
            "(builtin) ArrayPush", "(bytecode) ~Ldar", "(OTHER) weird", "(unknown type)", "0x7f001234"} <= names


def test_a_stack_deeper_than_the_limit_is_cut_and_counted():
    code = [{"name": f"f{k} /a.js:{k + 1}:1", "type": "JS"} for k in range(50)]
    s = []
    for k in range(50):
        s += [k, 0]
    doc = {"code": code, "ticks": [{"tm": 1, "vm": 0, "s": s}, {"tm": 2, "vm": 0, "s": s[-4:]}]}
    trace = _load(doc, limits=tracevis3d.io.limits.Limits(max_stack_depth=10))
    assert int(trace.depth.max()) == 9
    assert trace.meta["repairs"]["stack_deep"]["count"] == 1


BAD = [
    (b'{"code": [], "ticks": 3}', "ticks: expected a list"),
    (b'{"code": [], "ticks": [{"tm": 1}]}', "ticks[0]: has no 's'"),
    (b'{"code": [], "ticks": [{"tm": 1, "s": [0, 0]}, 7]}', "ticks[1]: expected an object"),
    (b'{"code": [], "ticks": [{"tm": "x", "s": []}]}', "ticks[0].tm: expected a time"),
    (b'{"code": [], "ticks": [{"tm": 1, "s": [0, "a"]}]}', "ticks[0].s[1]: expected a code index"),
    (b'{"code": [], "ticks": [{"tm": 1, "s": [0, 1e400]}]}', "not valid JSON"),
    (b'{"code": [], "ticks": [{"tm": 1, "s": [0, 123456789012345678901234567890]}]}', "ticks[0].s[1]"),
    (b'{"code": [], "ticks": [{"tm": 1, "s": {"a": 1}}]}', "ticks[0].s: expected a list"),
    (b'{"code": [], "ticks": [{"tm": 1e30, "s": [0, 0]}]}', "ticks[0].tm: 1e+30 is not a time"),
    (b'{"code": [], "ticks": []}', "no samples"),
    (b'{"code": [{"name": "a", "type": "CPP"}], "ticks": [{"tm": 1, "s": [0, 0', "not valid JSON"),
    (b'{"ticks": []}', "no 'code'"),
    (b'[1, 2]', "expected an object"),
]


@pytest.mark.parametrize("data,what", BAD)
def test_bad_logs_are_refused_in_one_line_naming_the_place(data, what):
    msg = refusal(load_v8log_json, data, "bad.v8log.json")
    assert what in msg, msg


def test_many_ticks_over_max_events_are_refused():
    doc = {"code": [{"name": "a", "type": "CPP"}], "ticks": [{"tm": k, "vm": 0, "s": [0, 0]} for k in range(50)]}
    with pytest.raises(TraceFormatError, match="over max_events"):
        _load(doc, limits=tracevis3d.io.limits.Limits(max_events=10))
