"""pstats dumps (`tracevis3d.io.pstats`): the safe marshal decoder against `marshal.loads` (its
brute-force twin) on the shipped recordings and on random valid dumps of every marshal version;
the call tree against a naive recursive expansion in plain Python; totals, recursion, a diamond
graph of 60 layers, and hostile bytes (cut, swapped, huge sizes, deep nesting, ref loops): one
line each, never a crash."""
from __future__ import annotations

import gzip
import marshal
import math
import pathlib
import random
import warnings

import pytest

from tracevis3d.io import load, load_bytes
from tracevis3d.io.formats import Head, detect
from tracevis3d.io.limits import DEFAULT_LIMITS
from tracevis3d.io.pstats import MAX_MARSHAL_DEPTH, OTHER_NAME, read_marshal
from tracevis3d.layout.xunit import trace_kind_text
from tracevis3d.model import TraceFormatError

pytestmark = pytest.mark.timeout(300)

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "formats" / "pstats"
FILES = ("jsontool.prof.gz", "docutils.prof.gz", "profile_json.prof.gz", "yappi.pstat.gz", "jsontool_py3.13.prof.gz",
         "jsontool_py3.8.prof.gz", "script_busy.prof.gz")


def _bytes(name: str) -> bytes:
    return gzip.decompress((DATA / name).read_bytes())


def _load(data: bytes, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_bytes(data, source="t.prof", **kw)


# ----------------------------------------------------------------------------- the decoder
@pytest.mark.parametrize("name", FILES)
def test_decoder_equals_marshal_on_real_dumps(name):
    data = _bytes(name)
    value, offsets = read_marshal(data, name)
    assert value == marshal.loads(data)
    assert len(offsets) == len(value)  # a byte offset per entry
    assert data[offsets[0]] & 0x7F in b"()"


def _random_dump(rng: random.Random) -> dict:
    """A pstats-shaped dict with the values marshal writes in every way it can: shared keys and
    strings (refs), ASCII, Latin-1 and non-BMP names, short and long strings, ints and longs
    (negative too), floats of every size, None, True, False."""
    words = ["f", "<module>", "décodé", "名前", "\U0001F600x", "x" * 300, "<built-in method builtins.exec>",
             "<method 'append' of 'list' objects>", ""]
    files = ["~", "/usr/lib/python3.11/json/decoder.py", "<frozen importlib._bootstrap>", "ü/a.py", "f" * 256]
    keys = [(rng.choice(files), rng.choice([0, 1, 343, 2 ** 31 - 1]), rng.choice(words) + str(k))
            for k in range(rng.randint(1, 40))]

    def num():
        return rng.choice([0, 1, -1, 7, 2 ** 31, 2 ** 40 + 3, -(2 ** 45), 2 ** 61, 0.0, 1e-9, 1.5, 3e300, -2.5,
                           rng.random()])

    out = {}
    for k in keys:
        callers = {}
        for c in rng.sample(keys, rng.randint(0, min(5, len(keys)))):
            callers[c] = rng.choice([(num(), num(), num(), num()), num(), (None, True, False, "s")])
        out[k] = (num(), num(), num(), num(), callers)
    return out


def test_decoder_equals_marshal_on_random_dumps():
    rng = random.Random(6)
    for n in range(300):
        value = _random_dump(rng)
        for version in range(5):
            data = marshal.dumps(value, version)
            got, _ = read_marshal(data, "r.prof")
            assert got == value == marshal.loads(data), (n, version)


def _expect_error(data: bytes, pattern: str = "", **kw):
    with pytest.raises(TraceFormatError) as e:
        _load(data, **kw)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("t.prof: "), msg
    assert pattern in msg, msg
    return msg


def test_every_cut_of_a_dump_is_one_line():
    data = marshal.dumps(_random_dump(random.Random(1)))
    for k in range(1, len(data)):
        with pytest.raises(TraceFormatError) as e:
            read_marshal(data[:k], "cut.prof")
        msg = str(e.value)
        assert msg.startswith("cut.prof: byte ") and "\n" not in msg
    assert "cut short" in _expect_error(data[: len(data) // 2])


def test_swapped_type_codes_fail_in_one_line_or_load():
    """Every byte of a small dump replaced by each type code in turn (and by a random byte): the
    file loads, or the error is one line; never another exception."""
    rng = random.Random(2)
    base = marshal.dumps({("a.py", 1, "f"): (1, 1, 0.25, 0.5, {("b.py", 2, "g"): (1, 1, 0.25, 0.5)}),
                          ("b.py", 2, "g"): (1, 1, 0.25, 0.5, {})})
    codes = b"{()[0NilgfyzaurRc\xa9\xfb\xe9\xf2\xda" + bytes(rng.randrange(256) for _ in range(4))
    n_err = 0
    for pos in range(len(base)):
        for c in codes:
            data = base[:pos] + bytes([c]) + base[pos + 1:]
            try:
                _load(data)
            except TraceFormatError as e:
                assert "\n" not in str(e)
                n_err += 1
    assert n_err > len(base)  # most swaps are caught, one line each


@pytest.mark.parametrize("data, pattern", [
    (b"{)\x03" + b"(\xff\xff\xff\x7f", "a tuple of size 2147483647 needs"),  # a huge tuple
    (b"{)\x03s\x00\x00\x00\x7f", "a string of size 2130706432 needs"),
    (b"{)\x03u\xff\xff\xff\xff", "negative size -1"),
    (b"{)\x03l\x00\x00\x01\x00" + b"\x01\x00" * 64, "a long of 65536 digits"),
    (b"{)\x03l\x02\x00\x00\x00\x01\x00\x00\x00", "not normalised"),
    (b"{)\x03z\x05ab", "a string of 5 bytes needs 5 bytes, 2 left"),
    (b"{)\x03c\x00\x00\x00\x00", "a code object needs 20 bytes, 4 left"),
    (b"{)\x03c" + b"\x00" * 20 + b"N", "a code object's code that is a NoneType"),
    (b"{)\x03y" + b"\x00" * 16, "type code 0x79 ('y')"),  # a complex: only inside a code object
    (b"{)\x03<\x01\x00\x00\x00N", "type code 0x3c ('<')"),  # a set: only inside a code object
    (b"{\xa9\x03r\x00\x00\x00\x00", "a container still being read (a loop)"),  # a key that holds itself
    (b"\xfb)\x03r\x00\x00\x00\x00", "a container still being read (a loop)"),  # the dict inside its own key
    (b"{)\x03r\x05\x00\x00\x00", "a ref to object 5, but only 0 are defined"),
    (b"{i\x01\x00\x00\x00N0", "not a function's (file, line, name)"),  # an int key (could be crafted to collide)
    (b"{)\x01z\x01a0", "ends ('0') after a key"),
    (b"{)\x02)\x01z\x01az\x01bN0", "not a function's (file, line, name)"),  # a tuple in a key: hashed again per ref
    (b"{)\x01(\x00\x00\x00\x000", ""),
    (b"{" + b")\x01" * 10000 + b"N", f"nested more than {MAX_MARSHAL_DEPTH} deep"),
    (b"{" + b"{" * 100000, f"nested more than {MAX_MARSHAL_DEPTH} deep"),
    (b"{)\x03z\x01aN", "cut short"),
    (b"{0", "no function entries"),
    (b"{)\x01z\x01a0" + b"\x00" * 100, "ends ('0') after a key"),
])
def test_hostile_bytes_are_one_line(data, pattern):
    if data[1] & 0x7F in b"()":  # what the format table recognises as pstats
        assert detect(Head(data, whole=True)).key == "pstats"
    _expect_error(data, pattern, format="pstats")


def test_bad_entries_are_left_out_and_counted():
    good = {("a.py", 1, "f"): (1, 1, 0.5, 1.0, {}), ("b.py", 2, "g"): (1, 1, 0.5, 0.5, {("a.py", 1, "f"): (1, 1, 0.5, 0.5),
                                                                                       ("z.py", 9, "nope"): (1, 1, 1, 1),
                                                                                       ("a.py", 1, "f", 4): 3})}
    bad = dict(good)
    bad[("c.py", 3, "h")] = (1, 1, "x", 0.5, {})  # a time that is a string
    bad[("d.py", 4, "i")] = (1, 1, 0.5)  # too short
    bad[("e.py", "5", "j")] = (1, 1, 0.5, 0.5, {})  # a line that is a string
    bad[("n.py", 6, "k")] = (1, 1, float("nan"), -3.0, {})  # numbers that are no times: 0
    t = _load(marshal.dumps(bad))
    reps = t.meta["repairs"]
    assert reps["pstats_entry"]["count"] == 3 and reps["pstats_entry"]["first"].startswith("entry 2 (byte ")
    assert reps["pstats_caller"]["count"] == 2 and reps["pstats_number"]["count"] == 2
    assert sorted(t.function_names[f] for f in t.func) == ["f", "g"]


@pytest.mark.parametrize("version", ["3.13", "3.11", "3.10", "3.7"])
def test_profile_module_code_objects_are_read_not_made(version):
    """``python -m profile -o X script.py`` keys the script's run by its code object: read in its
    Python's layout (constants of every kind, nested code objects), never made, named as text."""
    data = _bytes(f"profile_codes_py{version}.prof.gz")
    value, _ = read_marshal(data, "c.prof")
    root = ("profile", 0, "<code object <module> of codes.py, line 1>")
    assert root in value and value[("profile", 0, "profiler")][4] == {}
    assert ("profile", 0, "profiler") in value[root][4]
    if version == "3.11":  # this Python's marshal reads it: everything else is equal
        real = marshal.loads(data)
        code_key = next(k for k in real if not isinstance(k[2], str))
        assert code_key[2].co_name == "<module>"
        assert {k: v for k, v in real.items() if k != code_key and code_key not in v[4]} == \
            {k: v for k, v in value.items() if k != root and root not in v[4]}
    t = _load(data)
    assert t.meta["estimated_from"] == "a call graph (profile)"
    assert "<code object <module> of codes.py, line 1>" in t.function_names
    f = next(k for k in value if k[2] == "f")
    assert sum(w for p, w in tree_of(t).items() if p[-1] == "f") == pytest.approx(value[f][3], rel=1e-6)


def test_a_python2_dump_is_refused_in_one_line():
    data = _bytes("tiny_py2.7.prof.gz")
    _expect_error(data, "a Python 2 string ref ('R')")
    without_refs = marshal.dumps({(b"tiny.py", 2, b"fib"): (1, 1, 0.5, 0.5, {})})  # Python 2's names: bytes
    _expect_error(without_refs, "of bytes: a dump written by Python 2")


def test_a_shared_callers_dict_is_refused():
    shared = {("a.py", 1, "f"): (1, 1, 0.1, 0.1)}
    data = marshal.dumps({("a.py", 1, "f"): (1, 1, 0.1, 0.2, {}), ("b.py", 1, "g"): (1, 1, 0.1, 0.1, shared),
                          ("c.py", 1, "h"): (1, 1, 0.1, 0.1, shared)})
    assert b"r" in data  # the second use is a ref
    _expect_error(data, "a callers dict shared with another entry")


# ----------------------------------------------------------------------------- the call tree
def naive_tree(stats: dict) -> dict:
    """{frame-name path: inclusive seconds} by plain recursion over dictionaries.  Roots: no
    callers, or more calls than the callers record (those weigh ct, or what their callees take
    when ct is 0).  A function with callers, not its own callee, whose calls come from two
    contexts or more (callers, plus the outer calls) and that has outer calls or callees
    heavier than its ct, is one node per context, as wide as the context's edge (the outer
    calls: ct); the contexts, heaviest first, fill up on the callees, heaviest first, to
    their width less their share of tt (a callee that fits whole in what is left of the width
    is taken whole).  A callee gets ``w × edge / max(ct, Σ edges out)``; a
    callee on the path or of no weight is not entered."""
    from tracevis3d.io.pstats import _frame_name

    edges = {k: {} for k in stats}  # caller -> {callee: seconds}
    calls = {}  # (caller, callee) -> calls
    calls_in = {k: 0 for k in stats}
    for f, (cc, nc, tt, ct, callers) in stats.items():
        counted = {}
        for g, v in callers.items():
            calls[g, f] = v[0] if isinstance(v, tuple) else v
            calls_in[f] += calls[g, f]
            if isinstance(v, tuple):
                edges[g][f] = v[3]
            else:
                counted[g] = math.inf if stats[g][3] <= 0 else max(stats[g][3] - stats[g][2], 0.0)
        if counted and cc < nc:  # recursed: each caller up to the whole ct
            for g, cap in counted.items():
                edges[g][f] = min(cap, ct)
        elif counted:  # a rate r per call with sum(min(cap, n r)) = ct, found by bisection
            def given(r):
                return sum(min(cap, calls[g, f] * r) for g, cap in counted.items())
            lo, hi = 0.0, 1.0
            while given(hi) < ct and hi < 1e300 and given(hi) > given(hi / 2) * (1 + 1e-15):
                hi *= 2
            for _ in range(200):
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if given(mid) < ct else (lo, mid)
            for g, cap in counted.items():
                edges[g][f] = min(cap, calls[g, f] * hi)
    ct = {k: v[3] for k, v in stats.items()}
    out_sum = {k: sum(e.values()) for k, e in edges.items()}
    split = {}
    roots = [f for f, v in stats.items() if not v[4]]
    for f, v in stats.items():
        outer = bool(v[4]) and v[1] > calls_in[f] and v[3] > 0
        n_ctx = len(v[4]) + outer
        if v[4] and (outer or out_sum[f] > v[3] * (1 + 1e-6) + 1e-12) and n_ctx >= 2 and f not in edges[f]:
            split[f] = [(edges[g][f], g, calls[g, f]) for g in v[4]] + ([(v[3], None, v[1] - calls_in[f])] if outer else [])
        elif outer:
            roots.append(f)
    graph = {k: dict(e) for k, e in edges.items() if k not in split}
    name = {k: _frame_name(k)[0] for k in stats}
    for f, ctx in split.items():
        tt, nc = stats[f][2], stats[f][1]
        callees = sorted(edges[f].items(), key=lambda cw: -cw[1])
        left = [w for _, w in callees]
        j = 0
        for budget, g, n in sorted(ctx, key=lambda x: -x[0]):
            node = ("ctx", f, g)
            name[node] = name[f]
            ct[node] = budget
            graph[node] = {}
            if g is None:
                roots.append(node)
            guess = tt * (n / nc if nc > 0 else 0.0)
            room = budget - guess
            while room > 0 and j < len(left):
                take = left[j] if left[j] <= room + guess else room
                if take > 0:
                    graph[node][callees[j][0]] = take
                room -= take
                left[j] -= take
                if left[j] <= 0:
                    j += 1
    for node, e in graph.items():  # an edge into a split function: to its caller's node
        src = node[1] if node[0] == "ctx" else node
        graph[node] = {(("ctx", c, src) if c in split else c): w for c, w in e.items()}
    out_sum = {k: sum(e.values()) for k, e in graph.items()}
    denom = {k: max(ct[k], out_sum[k]) for k in graph}
    paths: dict = {}

    def walk(f, w, path, names):
        names = names + (name[f],)
        paths[names] = paths.get(names, 0.0) + w
        for c, e in graph[f].items():
            cw = w * e / denom[f]
            if c not in path and denom[c] > 0 and cw > 0:
                walk(c, cw, path | {c}, names)

    for f in roots:
        w = ct[f] if ct[f] > 0 else out_sum[f]
        if w > 0:
            walk(f, w, {f}, ())
    return paths


def tree_of(trace) -> dict:
    """{frame-name path: width in seconds} of a merged trace's calls."""
    out = {}
    for i in range(len(trace)):
        p, x = [], i
        while x >= 0:
            p.append(trace.function_names[trace.func[x]])
            x = int(trace.parent[x])
        key = tuple(reversed(p))
        out[key] = out.get(key, 0.0) + (float(trace.end[i]) - float(trace.start[i])) * 1e-6
    return out


@pytest.mark.parametrize("name, min_paths", [("jsontool.prof.gz", 1000), ("profile_json.prof.gz", 1000),
                                             ("script_busy.prof.gz", 200)])
def test_tree_equals_the_naive_expansion(name, min_paths):
    data = _bytes(name)
    t = _load(data)
    assert t.meta["pstats_threshold_s"] == 0.0 and "pstats_other" not in t.meta["repairs"]
    got, want = tree_of(t), naive_tree(marshal.loads(data))
    scale = max(want.values())
    assert len(got) > min_paths and {p for p, w in got.items() if w > 1e-9 * scale} == \
        {p for p, w in want.items() if w > 1e-9 * scale}
    for p in set(got) | set(want):
        assert got.get(p, 0.0) == pytest.approx(want.get(p, 0.0), rel=1e-6, abs=1e-10 * scale), p


@pytest.mark.parametrize("name", FILES)
def test_roots_total_is_the_profiles_total(name):
    data = _bytes(name)
    t = _load(data)
    stats = marshal.loads(data)
    total_tt = sum(v[2] for v in stats.values())
    roots = t.depth == 0
    width = float((t.end[roots] - t.start[roots]).sum()) * 1e-6
    assert t.meta["pstats_total_s"] == pytest.approx(total_tt, rel=1e-12)
    assert width == pytest.approx(t.meta["pstats_root_total_s"], rel=1e-9)
    if name.startswith("yappi"):  # yappi leaves callers out: its roots overlap, and it says so
        assert width > 2 * total_tt and "pstats_roots_overlap" in t.meta["repairs"]
    else:
        assert width == pytest.approx(total_tt, rel=1e-3)
        assert "pstats_roots_overlap" not in t.meta["repairs"]
    assert t.meta["merged"] and t.meta["x_unit"] == "µs" and t.meta["format"] == "pstats"
    assert t.meta["estimated_from"].startswith("a call graph (")
    assert trace_kind_text(t).startswith("merged stacks estimated from a call graph")


@pytest.mark.parametrize("name, file_end, func", [
    ("jsontool.prof.gz", "json/tool.py", "main"), ("jsontool.prof.gz", "json/decoder.py", "raw_decode"),
    ("docutils.prof.gz", "docutils/__main__.py", "main"), ("docutils.prof.gz", "docutils/core.py", "publish_cmdline"),
    ("yappi.pstat.gz", "docutils/core.py", "publish_file"), ("jsontool_py3.13.prof.gz", "json/tool.py", "main"),
    ("jsontool_py3.8.prof.gz", "json/tool.py", "main"), ("script_busy.prof.gz", "prog.py", "main"),
    ("script_busy.prof.gz", "prog.py", "build")])
def test_a_function_with_one_caller_is_as_wide_as_its_ct(name, file_end, func):
    """The program run by ``python -m cProfile -m json.tool`` (or ``-m docutils``), called once
    by its module, which runpy's ``exec`` runs: its width in the tree is its ct, though ``exec``
    also ran every imported module (its callees weigh twice its ct)."""
    data = _bytes(name)
    stats = marshal.loads(data)
    tree = tree_of(_load(data))
    key = next(k for k in stats if k[0].endswith(file_end) and k[2] == func)
    assert len(stats[key][4]) == 1
    width = sum(w for p, w in tree.items() if p[-1] == func)
    assert width == pytest.approx(stats[key][3], rel=1e-6)


def test_builtins_read_as_pstats_prints_them():
    t = _load(_bytes("jsontool.prof.gz"))
    names = set(t.function_names)
    assert "{built-in method builtins.exec}" in names
    assert "{method 'disable' of '_lsprof.Profiler' objects}" in names
    k = t.function_names.index("raw_decode")
    assert t.function_files[k].endswith("json/decoder.py") and t.function_paths[k] == ("json", "decoder", "raw_decode")
    k = t.function_names.index("{built-in method builtins.exec}")
    assert t.function_paths[k] == ("builtins", "exec")


def test_cycles_are_cut_and_counted():
    """main → a → b → a (a cycle) and b → b (recursion): neither is expanded again, their time
    stays in the caller, and the total is kept."""
    s = {("m.py", 1, "main"): (1, 1, 0.1, 1.0, {}),
         ("m.py", 2, "a"): (1, 2, 0.2, 0.9, {("m.py", 1, "main"): (1, 1, 0.2, 0.9), ("m.py", 3, "b"): (1, 1, 0.0, 0.3)}),
         ("m.py", 3, "b"): (1, 3, 0.4, 0.7, {("m.py", 2, "a"): (1, 1, 0.3, 0.7), ("m.py", 3, "b"): (2, 0, 0.1, 0.1)})}
    t = _load(marshal.dumps(s))
    tree = tree_of(t)
    assert set(tree) == {("main",), ("main", "a"), ("main", "a", "b")}
    assert tree[("main",)] == pytest.approx(1.0)
    assert tree[("main", "a")] == pytest.approx(0.9)
    assert tree[("main", "a", "b")] == pytest.approx(0.7)
    assert t.meta["repairs"]["pstats_recursion"]["count"] == 2  # b → a and b → b
    assert tree == pytest.approx(naive_tree(s))


def _diamond(layers: int) -> dict:
    """``layers`` layers of two functions, each calling both of the next layer for half its time."""
    s = {("d.py", 0, "top"): (1, 1, 0.0, 1.0, {})}
    for k in range(layers):
        for j in range(2):
            ct = 1.0 / 2 if k else 0.5
            callers = {("d.py", 0, "top"): (1, 1, 0.0, 0.5)} if k == 0 else \
                {("d.py", k - 1, f"L{k - 1}_{i}"): (1, 1, 0.0, 0.25) for i in range(2)}
            nc = 2 if k else 1
            s[("d.py", k, f"L{k}_{j}")] = (nc, nc, 0.5 if k == layers - 1 else 0.0, ct, callers)
    return s


def test_a_diamond_of_60_layers_stays_bounded():
    """2^60 paths: the tree keeps the heaviest nodes up to the limit, merges the rest into
    "…other", and keeps the total."""
    data = marshal.dumps(_diamond(60))
    for limit in (None, 1000):
        kw = {} if limit is None else {"max_callgraph_nodes": limit}
        t = _load(data, **kw)
        lim = limit or DEFAULT_LIMITS.max_callgraph_nodes
        assert 0 < len(t) <= lim
        roots = t.depth == 0
        assert float((t.end[roots] - t.start[roots]).sum()) == pytest.approx(1e6, rel=1e-9)
        assert OTHER_NAME in t.function_names and t.meta["repairs"]["pstats_other"]["count"] > 0
        assert t.meta["pstats_threshold_s"] > 0
        # the heaviest layers are whole: the 2^d paths to depth d are all there while they fit
        depth_full = int(math.log2(lim / 4))
        assert int((t.depth == depth_full).sum()) >= 2 ** depth_full


def test_many_callees_beyond_the_per_function_limit_join_other():
    callers = {("m.py", 1, "main"): (1, 1, 0.001, 0.001)}
    s = {("m.py", 1, "main"): (1, 1, 0.0, 2.0, {})}
    for k in range(2000):
        s[("m.py", 10 + k, f"f{k}")] = (1, 1, 0.001, 0.001, dict(callers))
    t = _load(marshal.dumps(s), max_callees_per_function=100)
    assert t.meta["pstats_callees_left_out"] == 1900
    tree = tree_of(t)
    assert tree[("main", OTHER_NAME)] == pytest.approx(1.9)
    assert tree[("main",)] == pytest.approx(2.0)


def test_the_file_loads_through_the_format_table(tmp_path):
    p = tmp_path / "run.prof"
    p.write_bytes(_bytes("profile_json.prof.gz"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = load(p)
    assert t.meta["format"] == "pstats" and t.meta["estimated_from"] == "a call graph (profile)"
    # profile's callers are call counts: its fake root "profiler" (ct 0) weighs what it calls
    assert t.function_names[t.func[0]] == "profiler"
    p.write_bytes(marshal.dumps({("m.py", 1, "f"): (1, 1, 0.0, 0.0, {})}))
    with pytest.raises(TraceFormatError, match=r"run.prof: no function takes time"):
        load(p)
    p.write_bytes(b"{)\x03z\x01a")
    with pytest.raises(TraceFormatError, match=r"run.prof: byte 6: the data ends"):
        load(p)


def test_long_names_use_four_byte_sizes():
    data = marshal.dumps({("a" * 300, 1, "b" * 70000): (1, 1, 0.5, 0.5, {})}, 4)
    assert read_marshal(data)[0] == marshal.loads(data)
