"""`names.parse_function_names` (the Chrome reader's parse of a trace's names, issue 79) reads
every name as `parse_function_name` does: on the function names of real recordings of several
tools, on the language tables' and the hostile names, and on names made to sit on each edge of
its fast reading of VizTracer's ``qualname (file:line)`` (script locations, ``->`` chains,
digits of other scripts, mangled starts, a line past int32)."""
import gzip
import json
import random
from pathlib import Path

from tracevis3d.names import (_VIZ, _qual_parts, _qual_parts_by_rules, _viz_located, parse_function_name,
                              parse_function_names)

from hostile_names import HOSTILE_NAMES  # noqa: E402
from test_names_languages import TABLE  # noqa: E402

RECORDED = Path(__file__).resolve().parents[1] / "data" / "recorded"

EDGES = [
    "f (x.py:1)", "C.m (<frozen importlib._bootstrap>:165)", "g.<locals>.h (/a/b/c.py:99)",
    "f (x.js:1)", "f (https://a/b.py:3)", "f (file:///tmp/x.py:3)", "f (a.js -> b.py:1)", "f (node:fs.py:3)",
    "f (blob:x.py:1)", "f (data:x.py:1)", "f (self-hosted.py:1)", "f (x.py?q.js:1)", "f (x.py#a.js:1)",
    "f (x.py:١٢)", "f (x.py:1٢)", "f\n (x.py:1)", "f (x\n.py:1)", "_Zfoo (x.py:1)", "_R1 (x.py:1)", "__Zx (x.py:1)",
    "f (x.py:1:2)", "f (x.py:1:2:3)", "f (:1)", "f (x.py:)", "f (x.py:99999999999999)", "f (x.py:2147483647)",
    "f (x.py:2147483648)", "(x.py:1)", " (x.py:1)", "f  (x.py:1)", "f (a b.py:1)", "f (a b.js:1)",
    "f (x.mjs:1)", "f (X.JS:1)", "f (x.html:4)", "f (<string>:1)", "f (<lambda x.js>:1)", "a (b) (x.py:1)",
    "a (b (x.py:1)", "f (x.py:1) ", "f (x.py:1))", "f (x.py:1", "f ((x.py:1)", "f (C:12:3)", "f (C:\\a\\b.py:7)",
    "pthread_create@@GLIBC_2.34 (x.py:1)", "f@1 (x.py:1)", "::f (x.py:1)", "a::b (x.cc:1)", "f (x.pyx:1)",
    "f (x.ts:1)", "f (webpack:///x.py:1)", "f (x.py:0)", "f (x.py:007)", "f" * 20000 + " (x.py:1)", "", ")",
    "f (x.py:1)(", "f ( x.py:1)", "f (x.py:1 )", "f\t(x.py:1)", " f (x.py:1)", "f. (x.py:1)", ".f (x.py:1)",
    "a..b (x.py:1)", "a.<locals>.b (x.py:1)", "a::b.c (x.py:1)", "<lambda> (x.py:1)", "<a.b> (x.py:1)",
    "a.b  (x.py:1)", "\u00a0a (x.py:1)", "a\u00a0 (x.py:1)", "a\n.b (x.py:1)",
]


def _recorded_names() -> list:
    """The distinct event names of the small committed recordings (VizTracer traces of several
    programs: Python, threads, a JSON tool)."""
    names = []
    for name in ("json_tool_a", "deep_json_tool", "networkx_karate", "sync_program", "threads_pipeline"):
        doc = json.loads(gzip.decompress((RECORDED / f"{name}.json.gz").read_bytes()))
        events = doc["traceEvents"] if isinstance(doc, dict) else doc
        names.extend(e["name"] for e in events if isinstance(e.get("name"), str))
    return list(dict.fromkeys(names))


def test_bulk_reading_equals_each_name_read_alone():
    recorded = _recorded_names()
    assert len(recorded) > 1000  # the recordings hold thousands of functions
    names = (recorded + [row[0] for row in TABLE] + [n for _, n, _ in HOSTILE_NAMES] + EDGES
             + [e.replace("x.py", "x.js") for e in EDGES])
    bulk = parse_function_names(names)
    alone = [parse_function_name(s) for s in names]
    assert len(bulk) == len(alone)
    differ = [(s, b, a) for s, b, a in zip(names, bulk, alone) if b != a]
    assert not differ, differ[:3]
    # the fast reading is taken: a VizTracer name's module and line come from its location
    p = parse_function_names(["C.m (/a/b/pkg/mod.py:12)"])[0]
    assert (p.line, p.qualname, p.lang) == (12, "C.m", "python")


def test_viz_location_read_as_the_pattern_reads_it():
    """The twin of `_viz_located`: ``_VIZ.match``, on strings of the pieces its edges are made of;
    and `_qual_parts` against its general rules alone (`_qual_parts_by_rules`)."""
    rng = random.Random(3)
    pieces = ["a", "b.", " ", " (", "(", ")", ":", "1", "٢", "²", "\n", ".", "x.py", "<", ">", "::", "\u00a0",
              "<locals>", "\t"]
    for _ in range(30000):
        s = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12))) + rng.choice([")", ":7)", " (f:1)"])
        m = _VIZ.match(s)
        assert _viz_located(s) == (None if m is None else (m.group("func"), m.group("file"), m.group("line"))), s
        q = s[: rng.randint(0, len(s))]
        assert _qual_parts(q) == _qual_parts_by_rules(q), q
