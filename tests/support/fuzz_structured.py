"""Structure-aware mutations of the real recordings shipped (the fuzzer's ``structured`` kind).

A byte fuzzer rarely gets past a JSON parser or a protobuf tag: most of its inputs are refused
at the first byte it touched.  This module parses a real recording of tests/data/formats/**
(every file a reader reads: the recorded/ files of the tools, speedscope's samples, ...) and
damages its *structure*, then writes it back, so the reader gets a well-formed file whose
contents are hostile:

- JSON (chrome, speedscope, gecko/processed Firefox, cpuprofile, heapprofile, pyinstrument,
  ghc-json, v8log-json, stackprof, safari): at random paths of the parsed tree a value becomes
  another type, an edge number (1e308, -1, "NaN", 2^63, -0.0, 10^30, ...), an empty container;
  a key is dropped; an array is repeated up to 1000 times (bounded); an index (stack, frame,
  node, parent, string table, ...) points out of range; parent links cycle; timestamps run
  backwards; strings get lone surrogates, NUL, right-to-left marks or 10^5 characters.
- protobuf (perfetto, pprof): the wire format is decoded generically (field number, wire type,
  value; length-delimited values descended into where they decode as a message); one field
  gets a varint at its maximum, the wrong wire type, a length past the end, is repeated up to
  1000 times, gets an index out of range or is dropped; the enclosing lengths are re-encoded.
- text (collapsed, perf script, callgrind, ghc-prof, instruments): lines are swapped,
  duplicated, deleted; counts become huge or negative; separators go missing; line ends become
  CRLF; spaces become tabs; names grow to 10^5 characters.
- marshal (cProfile/profile/yappi pstats dumps, read with the reader's own safe decoder:
  ``marshal.loads`` of a code object another Python wrote can crash this one): a time or count
  becomes an edge value, a key's line a huge one, an entry's function a code object nested up
  to 14 deep (its innermost sometimes unreadable), a caller edge is added back up the graph or
  retyped; written back by ``marshal.dumps``.

Numeric edges (issue 78), in every family: integers past int64 and of 5,000 digits (past
Python's int(str) limit), digits that are not ASCII (superscripts, Arabic-Indic, fullwidth),
the largest and smallest floats, every spelling of inf and nan, negative zero; and deep
chains (a parent column made one chain, a tree node nested thousands deep).

`build(rng)` returns (bytes, label); fuzz_hostile.py's worker loads the bytes and requires a
checked `Trace` or a one-line `TraceFormatError` naming the file.  ``TV3D_FUZZ_REALDATA``
(a folder) adds the small files under it (e.g. /work/shared/realdata) to the recordings.
"""
from __future__ import annotations

import gzip
import json
import marshal
import os
import pathlib
import random
import re
import struct

from hostile_perfetto import varint as enc_varint

HERE = pathlib.Path(__file__).resolve().parent
DATA = HERE.parent / "data" / "formats"

#: suffixes of files beside the recordings that are not recordings (sources, licences, notes)
_NOT_RECORDINGS = (".md", ".c", ".go", ".js", ".py", ".hs", ".html", ".rst")
#: a recording larger than this (inflated) is left out: its parse would dominate a case
MAX_SEED_BYTES = 2_000_000
#: the most bytes a mutation may add (a repeated array or field): memory stays linear in the input
MAX_GROWTH = 2_000_000

_seed_cache: dict = {}


def seed_files() -> list:
    """The recordings mutated, as sorted paths (those of ``TV3D_FUZZ_REALDATA`` after them)."""
    out = sorted(p for p in DATA.rglob("*") if p.is_file() and not p.name.startswith(("LICENSE", "README"))
                 and not p.name.endswith(_NOT_RECORDINGS) and p.name != "manifest.json")
    extra = os.environ.get("TV3D_FUZZ_REALDATA")
    if extra and os.path.isdir(extra):
        out += sorted(p for p in pathlib.Path(extra).rglob("*") if p.is_file()
                      and not p.name.startswith(("LICENSE", "README")) and p.stat().st_size < MAX_SEED_BYTES)
    return out


def _inflate(p: pathlib.Path) -> bytes:
    data = p.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data


#: the recordings that are pstats dumps (by name: marshal.loads is tried on these only, our own files)
_MARSHAL_NAMES = (".prof", ".pstat", ".prof.gz", ".pstat.gz")


def classify(data: bytes, name: str = "") -> str:
    """'json', 'marshal' (a pstats dump: a recording named ``*.prof`` or ``*.pstat`` that starts
    with a dict), 'proto' (the whole file decodes as a protobuf message: Perfetto, pprof) or
    'text'.  Needs no tracevis3d: the fuzzer's parent process names a crashed seed's input with it."""
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    if head in (b"{", b"["):
        try:
            json.loads(data)
            return "json"
        except ValueError:
            pass
    if name.endswith(_MARSHAL_NAMES) and data[:1] in (b"{", b"\xfb"):
        return "marshal"
    fields = parse_message(data) if len(data) >= 16 else None
    return "proto" if fields and len(fields) >= 2 else "text"


def seeds() -> list:
    """(path, kind, inflated bytes) of every recording that fits `MAX_SEED_BYTES` (cached)."""
    if "all" not in _seed_cache:
        out = []
        for p in seed_files():
            data = _inflate(p)
            if 0 < len(data) <= MAX_SEED_BYTES:
                out.append((p, classify(data, p.name), data))
        _seed_cache["all"] = out
    return _seed_cache["all"]


# ============================================================================ JSON
_INDEX_KEYS = {"parent", "id", "node", "nodeId", "callFrame", "stack", "stackIndex", "frame", "func", "prefix",
               "category", "subcategory", "nameIndex", "name", "sf", "stackFrame", "tid", "pid", "children",
               "positionTicks", "samples", "frames", "location", "resource", "lib", "origin", "implementation",
               "weights", "callee", "caller", "script", "scriptId", "line", "lineNumber", "columnNumber",
               "string", "stringTable", "stringArray", "threadCPUDelta", "inner", "innerWindowID", "cost"}
_TIME_KEYS = {"ts", "dur", "tdur", "tts", "time", "timestamp", "startTime", "endTime", "timeDeltas", "at",
              "startValue", "endValue", "registerTime", "unregisterTime", "processStartupTime", "duration",
              "start", "end", "timeStamp", "weight", "weights", "samples", "total", "self"}
_EDGE_VALUES = [1e308, -1e308, -1, 0, -0.0, 2 ** 63, 2 ** 64, -(2 ** 63), 10 ** 30, -(10 ** 30), 2 ** 31, 2 ** 53 + 1,
                "NaN", "Infinity", "-1", "1e999", 5e-324, 0.5, True, False, None, "", [], {}]
#: numbers written as JSON text that Python's json cannot write (`_RAW`): past int64, 5,000 digits
#: (past int(str)'s limit), past the largest double, nan and inf, negative zero, a 5,000-digit fraction
_RAW_NUMBERS = ["9" * 5000, "-" + "9" * 5000, "1" + "0" * 400, "18446744073709551616", "9223372036854775808",
                "-9223372036854775809", "1.7976931348623157e308", "-1.7976931348623157e308", "1e309", "-1e999",
                "2.2250738585072014e-308", "4.9e-324", "-0", "-0.0", "0." + "0" * 5000 + "1", "1e-99999", "NaN",
                "Infinity", "-Infinity", "1E+308", "123456789012345678901234567890.5"]
#: numbers written as strings in digits other than ASCII, or in spellings int() and float() read
#: but a file format does not (where a reader reads a number out of a string: pids, "Thread N")
_NUMBER_STRINGS = ["\u00b9\u00b2", "\u0661\u0662", "\uff11\uff12", "\u0966", " 12", "12\u00a0", "1_000", "0x7fffffffffffffff",
                   "9" * 5000, "-0", "nan", "inf", "-Infinity", "1e5000", "\u00b2" * 20]
#: a JSON string that `_json_bytes` replaces by the raw text between the markers
_RAW = "\ue000RAW:{}\ue000"
_RAW_BACK = re.compile(rb'"(?:\\ue000|\xee\x80\x80)RAW:(.*?)(?:\\ue000|\xee\x80\x80)"')
_STRINGS = ["\ud800", "a\udfffb", "\x00", "nul\x00name", "\u202eevil\u202c", "\u200f\u05d0\u05d1", "e\u0301" * 50,
            "\ufeff", "\uffff", "\U0001f600", "x" * 100_000, "", " ", "\n\r\t", "(root)", "..", "/", "%s%n",
            "{}[]:,\"", "\\", "<a>", "a;b;c", "a b c"]


def _walk(tree, rng: random.Random, limit: int = 4000):
    """Up to ``limit`` (path, value) pairs of the tree, reservoir-sampled (a path is a key list)."""
    out: list = []
    seen = 0
    stack = [((), tree)]
    while stack:
        path, v = stack.pop()
        seen += 1
        if len(out) < limit:
            out.append((path, v))
        else:
            j = rng.randrange(seen)
            if j < limit:
                out[j] = (path, v)
        if isinstance(v, dict):
            stack.extend((path + (k,), x) for k, x in v.items())
        elif isinstance(v, list):
            if len(v) > 200:  # a long array: a random few of its items (and its ends)
                idx = {0, len(v) - 1, *(rng.randrange(len(v)) for _ in range(20))}
            else:
                idx = range(len(v))
            stack.extend((path + (i,), v[i]) for i in idx)
    return out


def _get(tree, path):
    for k in path:
        tree = tree[k]
    return tree


def _set(tree, path, value):
    if not path:
        return value
    _get(tree, path[:-1])[path[-1]] = value
    return tree


def _other_type(v, rng):
    choices = [rng.choice(_STRINGS[:12]), rng.randint(-5, 10 ** 6), None, [], {}, True, 1.5, [v], {"v": v}, "12"]
    return rng.choice([c for c in choices if type(c) is not type(v)] or choices)


def _key_of(path):
    for k in reversed(path):
        if isinstance(k, str):
            return k
    return None


def mutate_json(tree, rng: random.Random, n_nodes: int):
    """(tree, op label): one structural mutation of the parsed JSON ``tree``."""
    nodes = _walk(tree, rng)
    op = rng.choice(["retype", "edge", "edge", "empty", "drop", "repeat", "index", "index", "cycle", "cycle_ids",
                     "backwards", "backwards", "unicode", "swap", "shrink", "dup_id", "same", "numtext", "numtext",
                     "numstring", "chain", "deep"])
    path, v = rng.choice(nodes)
    if op == "retype":
        return _set(tree, path, _other_type(v, rng)), op
    if op in ("numtext", "numstring"):  # a number as JSON text Python cannot write, or as a string
        cands = [(p, x) for p, x in nodes if isinstance(x, (int, float)) and not isinstance(x, bool) and p] or \
            [(p, x) for p, x in nodes if p]
        if not cands:
            return tree, f"{op}(none)"
        p, _ = rng.choice(cands)
        if op == "numtext":
            text = rng.choice(_RAW_NUMBERS)
            return _set(tree, p, _RAW.format(text)), f"numtext {_key_of(p)}={text[:12]}"
        text = rng.choice(_NUMBER_STRINGS)
        return _set(tree, p, text), f"numstring {_key_of(p)}={text[:12]!r}"
    if op == "chain":  # a link column made one chain: entry i's parent is i - 1 (one stack as deep as the table)
        cands = [(p, x) for p, x in nodes if _key_of(p) in _INDEX_KEYS and isinstance(x, list) and len(x) > 2
                 and all(isinstance(e, int) and not isinstance(e, bool) or e is None for e in x[:5])]
        if not cands:
            return tree, "chain(none)"
        p, x = rng.choice(cands)
        x[:] = [None if rng.random() < 0.5 else -1] + list(range(len(x) - 1))
        return tree, f"chain {_key_of(p)} x{len(x)}"
    if op == "deep":  # a value nested thousands deep, or a tree node under copies of itself
        cands = [(p, x) for p, x in nodes if isinstance(x, dict) and isinstance(x.get("children"), list) and p]
        d = rng.choice([100, 600, 1100, 5000, 100_000])
        if cands and rng.random() < 0.6:
            p, x = rng.choice(cands)
            node = {k: v for k, v in x.items() if k != "children"}
            text = json.dumps(node, separators=(",", ":"))[:-1]
            deep = (text + ',"children":[') * min(d, 3000) + text + ',"children":[]}' + "]}" * min(d, 3000)
            return _set(tree, p, _RAW.format(deep)), f"deep children x{min(d, 3000)}"
        p, _ = rng.choice([(p, x) for p, x in nodes if p] or [((), tree)])
        if not p:
            return tree, "deep(none)"
        return _set(tree, p, _RAW.format("[" * d + "1" + "]" * d)), f"deep [] x{d}"
    if op == "edge":
        cands = [(p, x) for p, x in nodes if isinstance(x, (int, float)) and not isinstance(x, bool)] or nodes
        p, _ = rng.choice(cands)
        return _set(tree, p, rng.choice(_EDGE_VALUES)), op
    if op == "empty":
        cands = [(p, x) for p, x in nodes if isinstance(x, (list, dict)) and p] or nodes
        p, x = rng.choice(cands)
        return _set(tree, p, rng.choice([[], {}, ""]) if not isinstance(x, (list, dict)) else type(x)()), op
    if op == "drop":
        cands = [(p, x) for p, x in nodes if isinstance(x, dict) and x]
        if not cands:
            return tree, "drop(none)"
        p, x = rng.choice(cands)
        k = rng.choice(list(x))
        del x[k]
        return tree, f"drop[{k}]"
    if op == "repeat":
        cands = [(p, x) for p, x in nodes if isinstance(x, list) and x]
        if not cands:
            return tree, "repeat(none)"
        p, x = rng.choice(cands)
        size = len(json.dumps(x))  # exact: an estimate from a few items misses a repeated heavy one
        times = min(1000, MAX_GROWTH // size)
        if rng.random() < 0.5:
            if times < 2:
                return tree, "repeat(too big)"
            x[:] = json.loads(json.dumps(x * times))  # copies, not 1000 references to one object
        else:
            i = rng.randrange(len(x))
            times = min(1000, MAX_GROWTH // max(len(json.dumps(x[i])), 1))
            if times < 2:
                return tree, "repeat(too big)"
            x[i:i + 1] = json.loads(json.dumps([x[i]] * times))
        return tree, f"repeat x{times}"
    if op in ("index", "cycle"):
        cands = [(p, x) for p, x in nodes if _key_of(p) in _INDEX_KEYS and (
            (isinstance(x, int) and not isinstance(x, bool)) or (isinstance(x, list) and x and all(
                isinstance(e, int) and not isinstance(e, bool) for e in x[:5])))]
        if not cands:
            cands = [(p, x) for p, x in nodes if isinstance(x, int) and not isinstance(x, bool)] or nodes
        p, x = rng.choice(cands)
        if op == "cycle":  # point the link at itself or a later entry (a parent after its child)
            if isinstance(x, list) and x:
                i = rng.randrange(len(x))
                x[i] = rng.choice([i, min(i + 1, len(x) - 1), len(x) - 1, x[-1]])
                return tree, f"cycle {_key_of(p)}[{i}]"
            pos = p[-2] if len(p) > 1 and isinstance(p[-2], int) else 0
            idx = rng.choice([pos, pos + 1, n_nodes // 2, 1, 0])
            return _set(tree, p, idx), f"cycle {_key_of(p)}"
        bad = rng.choice([-1, -2, n_nodes, n_nodes + 1, 2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 63 - 1, 10 ** 30, 65535])
        if isinstance(x, list) and x:
            i = rng.randrange(len(x))
            x[i] = bad
            return tree, f"index {_key_of(p)}[{i}]={bad}"
        return _set(tree, p, bad), f"index {_key_of(p)}={bad}"
    if op == "shrink":  # a column of a table shorter than its siblings, an array cut at a random length
        cands = [(p, x) for p, x in nodes if isinstance(x, list) and len(x) > 1]
        if not cands:
            return tree, "shrink(none)"
        p, x = rng.choice(cands)
        k = rng.randrange(1, len(x))
        del x[k:]
        return tree, f"shrink {_key_of(p)} to {k}"
    if op == "dup_id":  # two entries of a table with the same id
        cands = [(p, x) for p, x in nodes if isinstance(x, list) and len(x) > 1 and isinstance(x[0], dict)
                 and any(k in x[0] for k in ("id", "nodeId", "callUID", "name"))]
        if not cands:
            return tree, "dup_id(none)"
        p, x = rng.choice(cands)
        i, j = rng.sample(range(len(x)), 2)
        if isinstance(x[i], dict) and isinstance(x[j], dict):
            for k in ("id", "nodeId", "callUID", "name"):
                if k in x[i]:
                    x[j][k] = x[i][k]
                    return tree, f"dup_id {k}"
        return tree, "dup_id(none)"
    if op == "same":  # one key of every entry of an array set to one value (all at one time, all one id)
        cands = [(p, x) for p, x in nodes if isinstance(x, list) and len(x) > 1 and isinstance(x[0], dict)]
        if not cands:
            return tree, "same(none)"
        p, x = rng.choice(cands)
        keys = [k for k, v in x[0].items() if isinstance(v, (int, float, str)) and not isinstance(v, bool)]
        if not keys:
            return tree, "same(none)"
        k = rng.choice(keys)
        v = rng.choice([x[0][k], 0, -1, 1e15])
        for e in x:
            if isinstance(e, dict):
                e[k] = v
        return tree, f"same {k}={v!r}"[:60]
    if op == "cycle_ids":  # a node naming itself (or its child) as its parent, or an ancestor as its child
        ided = [(p, x) for p, x in nodes if isinstance(x, dict) and ("id" in x or (p and isinstance(p[-1], str)))
                and any(k in x for k in ("parent", "children", "prefix", "parentId", "caller"))]
        if not ided:
            return tree, "cycle_ids(none)"
        p, x = rng.choice(ided)
        own = x.get("id", p[-1] if p else 0)
        if isinstance(x.get("children"), list):
            kids = x["children"]
            if kids and rng.random() < 0.5 and isinstance(kids[0], dict):
                kids[0].setdefault("children", []).append(own if not isinstance(own, dict) else 0)
            else:
                kids.append(own if not isinstance(kids[:1] and kids[0], dict) else x)
                if isinstance(kids[-1], dict):  # the node as its own child object: serialise a copy
                    kids[-1] = json.loads(json.dumps({k: v for k, v in x.items() if k != "children"}))
            return tree, "cycle_ids children"
        for k in ("parent", "prefix", "parentId", "caller"):
            if k in x:
                x[k] = own
                return tree, f"cycle_ids {k}"
        return tree, "cycle_ids(none)"
    if op == "backwards":
        cands = [(p, x) for p, x in nodes if _key_of(p) in _TIME_KEYS and isinstance(x, (int, float, list))
                 and not isinstance(x, bool)]
        if not cands:
            return tree, "backwards(none)"
        p, x = rng.choice(cands)
        if isinstance(x, list):
            nums = [i for i, e in enumerate(x) if isinstance(e, (int, float)) and not isinstance(e, bool)]
            if not nums:
                return tree, "backwards(none)"
            how = rng.choice(["reverse", "negate", "spike"])
            if how == "reverse":
                x.reverse()
            elif how == "negate":
                for i in nums:
                    x[i] = -x[i]
            else:
                x[rng.choice(nums)] = rng.choice([-10 ** 12, -1e300, 10 ** 15])
            return tree, f"backwards {_key_of(p)} {how}"
        return _set(tree, p, rng.choice([-x, x - 10 ** 9, -1, 0, x * 10 ** 6])), f"backwards {_key_of(p)}"
    if op == "unicode":
        cands = [(p, x) for p, x in nodes if isinstance(x, str)]
        if not cands:
            return tree, "unicode(none)"
        p, x = rng.choice(cands)
        s = rng.choice(_STRINGS)
        new = rng.choice([s, x + s, s + x])
        if rng.random() < 0.2 and len(p) and isinstance(_get(tree, p[:-1]), dict):  # a key, not a value
            parent = _get(tree, p[:-1])
            parent[new] = parent.pop(p[-1])
            return tree, "unicode key"
        return _set(tree, p, new), "unicode"
    # swap two values of the same container (keeps types, moves meaning)
    cands = [(p, x) for p, x in nodes if isinstance(x, (list, dict)) and len(x) > 1]
    if not cands:
        return tree, "swap(none)"
    p, x = rng.choice(cands)
    keys = list(range(len(x))) if isinstance(x, list) else list(x)
    a, b = rng.sample(keys, 2)
    x[a], x[b] = x[b], x[a]
    return tree, "swap"


def _json_bytes(tree, rng: random.Random) -> bytes:
    if rng.random() < 0.8:
        out = json.dumps(tree, separators=(",", ":")).encode()  # ensure_ascii: lone surrogates escaped
    else:
        out = json.dumps(tree, ensure_ascii=False).encode("utf-8", "surrogatepass")  # raw (invalid UTF-8)
    return _RAW_BACK.sub(_raw_text, out) if b"RAW:" in out else out


def _raw_text(m) -> bytes:
    """The raw JSON text a `_RAW` string stands for (its JSON escapes undone)."""
    try:
        return json.loads(b'"' + m.group(1) + b'"').encode("utf-8", "surrogatepass")
    except ValueError:
        return m.group(1).replace(b'\\"', b'"')


# ============================================================================ protobuf
def _varint(buf: bytes, i: int, end: int):
    v = 0
    shift = 0
    while i < end and shift < 70:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        if b < 0x80:
            return v, i
        shift += 7
    return None, i


def parse_message(buf: bytes, start: int = 0, end: int | None = None):
    """The fields of the protobuf message ``buf[start:end]`` as (field, wire type, tag start,
    value start, end); None where the bytes are not a message."""
    end = len(buf) if end is None else end
    out = []
    i = start
    while i < end:
        tag, j = _varint(buf, i, end)
        if tag is None or tag >> 3 == 0:
            return None
        wt = tag & 7
        if wt == 0:
            v, k = _varint(buf, j, end)
            if v is None:
                return None
        elif wt == 1:
            k = j + 8
        elif wt == 5:
            k = j + 4
        elif wt == 2:
            n, j2 = _varint(buf, j, end)
            if n is None:
                return None
            k = j2 + n
        else:
            return None
        if k > end:
            return None
        out.append((tag >> 3, wt, i, j, k))
        i = k
    return out


def _len_value(buf: bytes, f):
    """(content start, content end) of a length-delimited field."""
    _fno, _wt, _ts, vs, ve = f
    _n, cs = _varint(buf, vs, ve)
    return cs, ve


def mutate_proto(data: bytes, rng: random.Random):
    """(bytes, op label): one mutation of a field at a random depth of the protobuf ``data``."""
    path = []  # (message start, message end) of the enclosing length-delimited fields
    lo, hi = 0, len(data)
    fields = parse_message(data, lo, hi)
    if not fields:
        return data, "proto(unparsed)"
    chain = []  # the length-delimited fields descended through: (tag start, value start, end)
    for _depth in range(10):
        sub = [f for f in fields if f[1] == 2]
        if not sub or rng.random() < 0.25:
            break
        f = rng.choice(sub)
        cs, ce = _len_value(data, f)
        inner = parse_message(data, cs, ce)
        if not inner:
            break
        chain.append(f)
        path.append((cs, ce))
        lo, hi, fields = cs, ce, inner
    f = rng.choice(fields)
    fno, wt, ts, vs, ve = f
    tag = data[ts:vs]
    op = rng.choice(["varint_max", "varint_max", "wire_type", "length_past_end", "repeat", "index", "drop",
                     "bytes", "packed", "double_edge"])
    label = f"{op} field {fno}/wt{wt} depth {len(chain)}"
    if op == "double_edge":  # a fixed64 field (a double: pprof's and Perfetto's values) at a float's edge
        x = rng.choice([float("inf"), float("-inf"), float("nan"), -0.0, 1.7976931348623157e308, 5e-324, -1e300])
        new = enc_varint((fno << 3) | 1) + struct.pack("<d", x)
        label += f" {x!r}"
    elif op == "varint_max":
        new = tag if wt == 0 else enc_varint(fno << 3)
        new += enc_varint(rng.choice([(1 << 64) - 1, 1 << 63, (1 << 63) - 1, 1 << 32, (1 << 31), (1 << 31) - 1]))
    elif op == "index":
        new = enc_varint(fno << 3) + enc_varint(rng.choice([hi - lo, 1000, 65535, 10 ** 6, 2 ** 31 - 1, 2 ** 32 + 1]))
    elif op == "wire_type":
        nwt = rng.choice([w for w in (0, 1, 2, 5) if w != wt])
        payload = {0: enc_varint(rng.randrange(1 << 20)), 1: os.urandom(8), 5: os.urandom(4),
                   2: enc_varint(3) + b"\x08\x01\x00"}[nwt]
        new = enc_varint((fno << 3) | nwt) + payload
    elif op == "length_past_end":
        if wt != 2:
            new = enc_varint((fno << 3) | 2) + enc_varint(rng.choice([hi - vs + 1, 1 << 30, 1 << 62]))
        else:
            cs, ce = _len_value(data, f)
            new = tag + enc_varint((ce - cs) + rng.choice([1, 7, hi - ce + 1, 1 << 31, 1 << 62])) + data[cs:ce]
    elif op == "repeat":
        k = max(2, min(1000, MAX_GROWTH // max(ve - ts, 1)))
        new = data[ts:ve] * k
        label += f" x{k}"
    elif op == "drop":
        new = b""
    elif op == "bytes":
        content = rng.choice([b"", b"\xff\xfe\x80", b"\x00" * 16, ("x" * 100_000).encode(),
                              "\ud800".encode("utf-8", "surrogatepass"), "\u202eevil".encode()])
        new = enc_varint((fno << 3) | 2) + enc_varint(len(content)) + content
    else:  # packed: the value as packed varints, one of them huge
        if wt == 2:
            cs, ce = _len_value(data, f)
            vals = []
            i = cs
            while i < ce and len(vals) < 100_000:
                v, i = _varint(data, i, ce)
                if v is None:
                    break
                vals.append(v)
        else:
            vals = [1, 2, 3]
        if not vals:
            vals = [0]
        vals[rng.randrange(len(vals))] = rng.choice([(1 << 64) - 1, 1 << 31, 10 ** 9, len(vals) + 5])
        body = b"".join(enc_varint(v) for v in vals)
        new = enc_varint((fno << 3) | 2) + enc_varint(len(body)) + body
    # splice, then re-encode each enclosing length from the inside out
    out = data[lo:ts] + new + data[ve:hi]
    for depth in range(len(chain) - 1, -1, -1):
        pf = chain[depth]
        pfno, _pwt, pts, pvs, pve = pf
        outer_lo, outer_hi = (path[depth - 1] if depth else (0, len(data)))
        out = data[outer_lo:pts] + data[pts:pvs] + enc_varint(len(out)) + out + data[pve:outer_hi]
    return bytes(out), label


# ============================================================================ text
def mutate_text(data: bytes, rng: random.Random):
    """(bytes, op label): one line-level mutation of a text recording."""
    lines = data.splitlines(keepends=True) or [b""]
    op = rng.choice(["swap", "duplicate", "delete", "delete_range", "huge", "negative", "separator", "crlf",
                     "tabs", "longname", "nul", "utf8", "blank", "cut_line", "numtext", "numtext", "digits"])
    n = len(lines)
    i = rng.randrange(n)
    if op == "swap" and n > 1:
        j = rng.randrange(n)
        lines[i], lines[j] = lines[j], lines[i]
    elif op == "duplicate":
        k = max(2, min(1000, MAX_GROWTH // max(len(lines[i]), 1)))
        lines[i:i + 1] = [lines[i]] * k
        op += f" x{k}"
    elif op == "delete":
        del lines[i]
    elif op == "delete_range":
        del lines[i:i + rng.randint(2, 50)]
    elif op in ("huge", "negative"):
        nums = [(m.start(), m.end()) for m in re.finditer(rb"\d+(\.\d+)?", lines[i])]
        if not nums:
            cand = [k for k, ln in enumerate(lines) if re.search(rb"\d", ln)]
            if cand:
                i = rng.choice(cand)
                nums = [(m.start(), m.end()) for m in re.finditer(rb"\d+(\.\d+)?", lines[i])]
        if nums:
            a, b = rng.choice(nums)
            new = (rng.choice([b"99999999999999999999999999999", b"18446744073709551615", b"9223372036854775808",
                               b"1e308", b"nan", b"inf", b"4294967296", b"0"]) if op == "huge"
                   else b"-" + lines[i][a:b])
            lines[i] = lines[i][:a] + new + lines[i][b:]
    elif op == "separator":
        ln = lines[i]
        seps = [k for k, c in enumerate(ln) if c in b" ;\t:=(),"]
        if seps:
            k = rng.choice(seps)
            lines[i] = ln[:k] + ln[k + 1:]
    elif op == "crlf":
        if rng.random() < 0.5:
            lines = [ln.rstrip(b"\r\n") + b"\r\n" for ln in lines]
        else:
            lines[i] = lines[i].rstrip(b"\r\n") + b"\r\r\n"
    elif op == "tabs":
        lines = [ln.replace(b" ", b"\t") for ln in lines] if rng.random() < 0.5 else lines
        lines[i] = lines[i].replace(b" ", b"\t")
    elif op == "longname":
        words = [(m.start(), m.end()) for m in re.finditer(rb"[A-Za-z_][\w.]*", lines[i])]
        name = rng.choice([b"f", b"\xe2\x80\xae", b"a;b", b"x y", b"("]) * 100_000
        if words:
            a, b = rng.choice(words)
            lines[i] = lines[i][:a] + name + lines[i][b:]
        else:
            lines[i] = name + lines[i]
    elif op == "nul":
        k = rng.randrange(len(lines[i]) + 1)
        lines[i] = lines[i][:k] + b"\x00" + lines[i][k:]
    elif op == "utf8":
        k = rng.randrange(len(lines[i]) + 1)
        lines[i] = lines[i][:k] + rng.choice([b"\xff", b"\xed\xa0\x80", b"\xc3", b"\xef\xbf\xbf"]) + lines[i][k:]
    elif op == "blank":
        lines.insert(i, rng.choice([b"\n", b" \n", b"\t\n", b"\r\n"]))
    elif op in ("numtext", "digits"):  # a number respelled: past int64, 5,000 digits, inf, nan, other digits
        i = _line_with_number(lines, i, rng)
        nums = [(m.start(), m.end()) for m in re.finditer(rb"[0-9]+(?:\.[0-9]+)?", lines[i])]
        if nums:
            a, b = rng.choice(nums)
            if op == "digits":
                script = rng.choice(_DIGIT_SCRIPTS)
                new = "".join(script[int(c)] if c.isdigit() else c for c in lines[i][a:b].decode()).encode()
            else:
                new = rng.choice(_TEXT_NUMBERS)
            lines[i] = lines[i][:a] + new + lines[i][b:]
            op += f" {new[:12]!r}"
    elif op == "cut_line":
        ln = lines[i]
        lines[i] = ln[: rng.randrange(len(ln) + 1)] + (b"\n" if rng.random() < 0.5 else b"")
    return b"".join(lines), op


#: digits 0-9 in other scripts: superscripts (str.isdigit yes, int no), Arabic-Indic and
#: fullwidth (int yes), Devanagari
_DIGIT_SCRIPTS = ["\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079",
                  "".join(chr(0x660 + k) for k in range(10)), "".join(chr(0xFF10 + k) for k in range(10)),
                  "".join(chr(0x966 + k) for k in range(10))]
#: a number token respelled in text: past int64, 5,000 digits, the largest float and past it, inf and nan
#: in the spellings float() reads, negative zero, hex, a 5,000-digit fraction
_TEXT_NUMBERS = [b"9" * 5000, b"18446744073709551616", b"9223372036854775808", b"1.7976931348623157e308", b"1e309",
                 b"-1e309", b"inf", b"-inf", b"Infinity", b"nan", b"NaN", b"-nan", b"-0", b"-0.0", b"0x7fffffff",
                 b"4.9e-324", b"0." + b"0" * 5000 + b"1", b"1_000", b"+5", b"1e99999"]


def _line_with_number(lines: list, i: int, rng: random.Random) -> int:
    """Line ``i`` when it holds a digit, else a random line that does (``i`` when none does)."""
    if re.search(rb"[0-9]", lines[i]):
        return i
    cand = [k for k, ln in enumerate(lines) if re.search(rb"[0-9]", ln)]
    return rng.choice(cand) if cand else i


# ============================================================================ marshal (pstats dumps)
#: times (tt, ct) and counts (cc, nc) at their edges: the largest float (the tree fit's bound
#: overflowed to infinity on it), inf, nan, negative zero, longs past any count
_MARSHAL_EDGES = [1.7976931348623157e308, -1.7976931348623157e308, float("inf"), float("-inf"), float("nan"), -0.0,
                  5e-324, 1e300, 1e15, -1.0, 0, 2 ** 31, 2 ** 62, 2 ** 63, 2 ** 64 + 1, 2 ** 119, 2 ** 200, -(2 ** 70),
                  10 ** 30, True, None, "1", 1.5]


def _nested_code(levels: int):
    """A code object holding functions nested ``levels`` deep (this Python's layout)."""
    body = "return 1"
    for d in range(levels):
        body = f"def f{d}():\n" + "\n".join("    " + ln for ln in body.splitlines()) + f"\nreturn f{d}"
    return compile("def top():\n" + "\n".join("    " + ln for ln in body.splitlines()), "deep.py", "exec")


def mutate_marshal(data: bytes, rng: random.Random):
    """(bytes, op label): one mutation of a pstats dump (``data``: one of the recordings), read
    with the reader's safe decoder (code objects come back as their text), written back by
    marshal.dumps in a random version."""
    from tracevis3d.io.safe_marshal import read_marshal
    from tracevis3d.model import TraceFormatError

    try:
        stats, _ = read_marshal(data, "seed")
    except TraceFormatError:  # a Python 2 dump: the reader refuses it as it is
        return data, "marshal(unreadable)"
    if not isinstance(stats, dict):
        return data, "marshal(not a dict)"
    keys = list(stats)
    if not keys:
        return data, "marshal(empty)"
    op = rng.choice(["time", "time", "count", "caller", "line", "code", "cycle", "retype", "many"])
    k = rng.choice(keys)
    cc, nc, tt, ct, callers = stats[k]
    label = op
    if op in ("time", "count"):
        v = rng.choice(_MARSHAL_EDGES)
        vals = [cc, nc, tt, ct]
        j = rng.choice([2, 3] if op == "time" else [0, 1])
        vals[j] = v
        if rng.random() < 0.3:  # the same value for every entry (the largest float everywhere)
            for kk in keys:
                e = list(stats[kk])
                e[j] = v
                stats[kk] = tuple(e)
        else:
            stats[k] = (*vals, callers)
        label += f" [{j}]={v!r}"[:40]
    elif op == "caller" and callers:
        ck = rng.choice(list(callers))
        cv = callers[ck]
        v = rng.choice(_MARSHAL_EDGES)
        callers[ck] = (v, cv[1], cv[2], cv[3]) if isinstance(cv, tuple) and rng.random() < 0.3 else \
            ((cv[0], cv[1], cv[2], v) if isinstance(cv, tuple) else v)
        label += f" {v!r}"[:40]
    elif op == "line":  # a key's line at an edge: its callers' references go with it
        new = (k[0], rng.choice([2 ** 31, 2 ** 63, -1, 10 ** 30, 2 ** 64]), k[2])
        stats[new] = stats.pop(k)
        for e in stats.values():
            if k in e[4]:
                e[4][new] = e[4].pop(k)
        label += f" {new[1]}"
    elif op == "code":  # an entry named by a code object nested deep (the profile module keys a script so)
        levels = rng.randint(3, 14)
        new = (k[0], k[1], _nested_code(levels))
        stats[new] = stats.pop(k)
        label += f" x{levels}"
    elif op == "cycle":  # a callee calls its caller back
        for callee, e in stats.items():
            if e[4] and callee != k:
                caller = next(iter(e[4]))
                stats[caller][4][callee] = (1, 1, rng.choice([0.0, 1e300, float("inf")]), 1.0)
                label += " added"
                break
    elif op == "retype":
        stats[k] = rng.choice([(cc, nc, tt, ct), (cc, nc, "t", ct, callers), [cc, nc, tt, ct, callers],
                               (cc, nc, tt, ct, list(callers.items()))])
    elif op == "many":  # one caller with many callees, each a new function
        n = rng.choice([1000, 20_000])
        for j in range(n):
            stats[(f"gen{j}.py", j, f"g{j}")] = (1, 1, 1e-6, 1e-6, {k: (1, 1, 1e-6, 1e-6)})
        label += f" {n}"
    out = marshal.dumps(stats, rng.choice([2, 3, 4]))
    if op == "code" and rng.random() < 0.5:  # the innermost code object unreadable in every layout
        i = out.rfind(b"c\x00\x00\x00\x00")
        if i > 0:
            j = i + 1 + 4 * _code_ints()
            out = out[:j] + b"N" + out[j + 1:]
            label += " broken"
    return out, "marshal " + label


def _code_ints() -> int:
    import sys

    return 6 if (3, 8) <= sys.version_info[:2] < (3, 11) else 5


# ============================================================================ the kind
def build(rng: random.Random):
    """(bytes, label): a real recording (`seeds`) with 1-3 structural mutations of its kind."""
    family = rng.choice(["json", "json", "proto", "text", "marshal"])  # the few protobuf files get a fifth
    pool = [s for s in seeds() if s[1] == family] or seeds()
    path, kind, data = pool[rng.randrange(len(pool))]
    try:
        name = str(path.relative_to(DATA))
    except ValueError:
        name = str(path)
    ops = []
    k = rng.choice([1, 1, 1, 2, 3])
    if kind == "json":
        tree = json.loads(data)
        n_nodes = max(len(data) // 50, 4)
        for _ in range(k):
            tree, op = mutate_json(tree, rng, n_nodes)
            ops.append(op)
        out = _json_bytes(tree, rng)
    elif kind == "proto":
        out = data
        for _ in range(k):
            out, op = mutate_proto(out, rng)
            ops.append(op)
    elif kind == "marshal":
        out, op = mutate_marshal(data, rng)  # once: a broken dump cannot be read back to mutate again
        ops.append(op)
    else:
        out = data
        for _ in range(k):
            out, op = mutate_text(out, rng)
            ops.append(op)
    if rng.random() < 0.15:
        out = gzip.compress(out, 1)
        ops.append("gzip")
    return out, f"structured {name}: " + " + ".join(ops)
