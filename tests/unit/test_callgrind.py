"""callgrind (`tracevis3d.io.callgrind`) and Instruments deep copies (`tracevis3d.io.instruments`)
against naive readings in plain Python: speedscope's ``callgrind.ts`` parser and call-tree walk
(a recursive function over dictionaries, with this reader's extra roots for thread start
routines) and ``instruments.ts``'s enter/leave reading, then the Left Heavy tree."""
from __future__ import annotations

import gzip
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from collapsed_twins import calls_of, left_heavy

from tracevis3d.io import load, load_bytes
from tracevis3d.model import TraceFormatError

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "formats"
SAMPLES = DATA / "speedscope-samples"


def naive_callgrind(text: str, event=0) -> tuple:
    """(set of (path, start, end), unit name) as speedscope builds it, plus thread roots."""
    files, fns = {}, {}

    def name(value, saved):
        m = re.match(r"^\((\d+)\)\s*(.+)$", value)
        if m:
            saved[m.group(1)] = m.group(2)
            return m.group(2)
        m = re.match(r"^\((\d+)\)$", value)
        if m:
            return saved.get(m.group(1), value)
        return value

    lines = text.split("\n")
    frames: dict = {}  # (file, fn) -> order of first cost
    total: dict = {}
    children: dict = {}
    fl = fn = cfl = cfn = None
    events, n_pos, prev = None, 1, []

    def frame(f, n):  # speedscope's frame set: in order of first cost
        key = (f or "(unknown)", n or "(unknown)")
        frames.setdefault(key, len(frames))
        return key

    def cost(line):
        nonlocal prev
        nums = []
        for i, part in enumerate(line.split()):
            if part == "*" or part[0] in "+-":
                base = prev[i] if i < len(prev) else 0
                nums.append(base if part == "*" else base + int(part, 0))
            else:
                nums.append(int(part, 0))
        prev = nums
        col = n_pos + event
        return nums[col] if col < len(nums) else 0

    k = 0
    while k < len(lines):
        line = lines[k].rstrip("\r")
        k += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = re.match(r"^\s*(\w+):\s*(.*)$", line)
        if m:
            if m.group(1) == "events":
                events = m.group(2).split()
            elif m.group(1) == "positions":
                n_pos = len(m.group(2).split())
            continue
        m = re.match(r"^(\w+)=\s*(.*)$", line)
        if m:
            key, value = m.group(1), m.group(2).strip()
            if key == "fl":
                fl = name(value, files)
            elif key in ("fi", "fe", "jfi"):
                name(value, files)
            elif key == "fn":
                fn = name(value, fns)
            elif key == "jfn":
                name(value, fns)
            elif key in ("cfi", "cfl"):
                cfl = name(value, files)
            elif key == "cfn":
                cfn = name(value, fns)
            elif key == "calls":
                w = cost(lines[k].rstrip("\r"))
                k += 1
                parent, child = frame(fl, fn), frame(cfl or fl, cfn)
                children.setdefault(parent, {})
                children[parent][child] = children[parent].get(child, 0) + w
                total[parent] = total.get(parent, 0) + w
                cfl = cfn = None
            continue
        w = cost(line)
        f = frame(fl, fn)
        total[f] = total.get(f, 0) + w
    unit = events[event]
    mult = 0.01 if unit == "Time_(10ns)" else 1.0
    max_w = max(total.values())
    called: dict = {}
    for kids in children.values():
        for c, w in kids.items():
            called[c] = called.get(c, 0) + w
    stacks = []
    on_stack = set()

    def visit(f, w, path):
        if f in on_stack or w < 1e-4 * max_w or not total.get(f, 0):
            return 0.0
        on_stack.add(f)
        self_w = w
        for c, cw in children.get(f, {}).items():
            self_w -= visit(c, w * cw / total[f], path + (f[1],))
        on_stack.discard(f)
        stacks.append((path + (f[1],), max(self_w, 0.0) * mult))
        return w  # what the node took of its parent: its self weight and its children's

    for f in sorted(frames, key=frames.get):
        if f not in called:
            visit(f, total.get(f, 0), ())
        elif total.get(f, 0) - called[f] >= max(1e-4 * max_w, 1e-300):
            visit(f, total[f] - called[f], ())
    order = {}
    for f in sorted(frames, key=frames.get):
        order.setdefault(f[1], len(order))
    return set(left_heavy(stacks, order)), unit


def _close(trace, want: set):
    got = {p: (s, e) for _, p, s, e in calls_of(trace)}
    exp = {p: (s, e) for p, s, e in want}
    assert got.keys() == exp.keys()
    scale = max(e for _, e in exp.values())
    for p, (s, e) in exp.items():
        assert got[p][0] == pytest.approx(s, abs=1e-9 * scale) and got[p][1] == pytest.approx(e, abs=1e-9 * scale), p


CALLGRIND = sorted((SAMPLES / "callgrind").glob("*.log")) + [DATA / "callgrind" / "prog.callgrind",
                                                             DATA / "callgrind" / "gzip.callgrind.gz"]


@pytest.mark.parametrize("path", CALLGRIND, ids=[p.name for p in CALLGRIND])
def test_callgrind_against_naive(path):
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))
    raw = path.read_bytes()
    text = (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode()
    t = load(path, warn=False)
    want, unit = naive_callgrind(text)
    assert t.meta["format"] == "callgrind"
    _close(t, want)


def test_speedscope_example_layout():
    """speedscope's snapshot of callgrind.example.log: main 820 over func1 400 (func2 300) and
    func2 400."""
    t = load(SAMPLES / "callgrind" / "callgrind.example.log")
    assert calls_of(t) == {("callgrind.example.log", ("main",), 0.0, 820.0),
                           ("callgrind.example.log", ("main", "func2"), 0.0, 400.0),
                           ("callgrind.example.log", ("main", "func1"), 400.0, 800.0),
                           ("callgrind.example.log", ("main", "func1", "func2"), 400.0, 700.0)} or \
        calls_of(t) == {("callgrind.example.log", ("main",), 0.0, 820.0),
                        ("callgrind.example.log", ("main", "func1"), 0.0, 400.0),
                        ("callgrind.example.log", ("main", "func1", "func2"), 0.0, 300.0),
                        ("callgrind.example.log", ("main", "func2"), 400.0, 800.0)}


def test_events_units_and_option():
    path = DATA / "callgrind" / "gzip.callgrind.gz"
    t = load(path, warn=False)
    assert t.meta["callgrind_events"][:3] == ["Ir", "Dr", "Dw"] and t.meta["x_unit"] == "Ir"
    t2 = load(path, warn=False, event="Dr")
    assert t2.meta["x_unit"] == "Dr"
    _close(t2, naive_callgrind(gzip.decompress(path.read_bytes()).decode(), 1)[0])
    assert load(path, warn=False, event=1).meta["total_weight"] == t2.meta["total_weight"]
    with pytest.raises(TraceFormatError, match="no event 'cycles': its events are Ir, Dr"):
        load(path, event="cycles")
    x = load(SAMPLES / "callgrind" / "callgrind.multiple-event-types.log", warn=False)
    assert x.meta["x_unit"] == "µs" and x.meta["total_weight"] == pytest.approx(8.2)
    y = load(SAMPLES / "callgrind" / "callgrind.multiple-event-types.log", warn=False, event="Memory_(bytes)")
    assert y.meta["x_unit"] == "bytes" and y.meta["total_weight"] == 38000.0


def test_the_title_says_the_tree_is_estimated_and_by_whose_call_graph():
    """Below its first calls a callgrind tree is speedscope's estimate, not measured stacks: the
    title says so and names the writer (valgrind, Xdebug, yappi: the ``creator:`` line)."""
    from tracevis3d.layout.xunit import trace_kind_text

    t = load(DATA / "callgrind" / "gzip.callgrind.gz", warn=False)
    assert trace_kind_text(t) == "merged stacks estimated from a call graph (callgrind)"
    x = load(SAMPLES / "callgrind" / "callgrind.multiple-event-types.log", warn=False)  # creator: xdebug 3.0.2
    assert trace_kind_text(x) == "merged stacks estimated from a call graph (Xdebug)"
    y = load_bytes(b"events: Ticks\ncreator: yappi\nfl=a.py\nfn=f\n1 5\n", source="y.callgrind", warn=False)
    assert trace_kind_text(y) == "merged stacks estimated from a call graph (yappi)"


def test_threads_are_roots():
    """The worker threads' start routine (called by clone in the new thread) is a root: the
    tree holds the whole cost (callgrind's totals line), speedscope's roots 8 % of it."""
    path = DATA / "callgrind" / "prog.callgrind"
    t = load(path, warn=False)
    totals = int(re.search(r"^totals: (\d+)", path.read_text(), re.M).group(1))
    assert t.meta["total_weight"] == pytest.approx(totals, rel=1e-9)
    roots = {t.function_names[t.func[i]] for i in range(len(t)) if t.parent[i] < 0}
    assert "clone" in roots and "worker" in t.function_names


def test_recording_here(tmp_path):
    """valgrind --tool=callgrind of a C program built here."""
    if not (shutil.which("valgrind") and shutil.which("gcc")):
        pytest.skip("valgrind or gcc is not installed")
    src = tmp_path / "p.c"
    src.write_text("static int f(int n){return n<2?n:f(n-1)+f(n-2);}\nint main(void){return f(18)>0?0:1;}\n")
    subprocess.run(["gcc", "-O0", "-g", "-o", str(tmp_path / "p"), str(src)], check=True)
    out = tmp_path / "p.callgrind"
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", str(tmp_path / "p")],
                   check=True, capture_output=True)
    t = load(out, warn=False)
    _close(t, naive_callgrind(out.read_text())[0])
    assert "f" in t.function_names and "main" in t.function_names


# ----------------------------------------------------------------------------- Instruments
def naive_instruments(text: str) -> set:
    """speedscope's importFromInstrumentsDeepCopy (enter at the running value, leave at the
    larger of it and the frame's end), whole numbers kept, units to µs/cycles/bytes."""
    units = {"ms": 1e3, "s": 1e6, "min": 6e7, "cycles": 1, "Kc": 1e3, "Mc": 1e6, "Gc": 1e9, "Bytes": 1,
             "KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3}
    rows = [ln.split("\t") for ln in text.split("\n")]
    head = rows.pop(0)
    col = {n: i for i, n in reversed(list(enumerate(head)))}
    w_col = col.get("Weight", col.get("Running Time", col.get("Bytes Used")))
    s_col = col.get("Symbol Name", col.get("Symbol Names"))
    lead = None
    stack, cum, spans, order = [], 0.0, [], {}
    for row in rows:
        if len(row) <= s_col:
            continue
        sym = row[s_col]
        if "Symbol Name" not in col:
            lead = len(sym) - len(sym.lstrip(" ")) if lead is None else lead
            sym = sym[lead:]
        name = sym.strip()
        if not name:
            continue
        depth = len(sym) - len(sym.lstrip())
        while len(stack) > depth:
            top = stack.pop()
            cum = max(cum, top[1])
            spans.append((top[2], top[3], cum))
        m = re.match(r"^\s*(\d+(?:\.\d+)?)\s?(\S+?)\s+\d+(?:\.\d+)?%", row[w_col])
        w = float(m.group(1)) * units[m.group(2)] if m else 0.0
        order.setdefault(name, len(order))
        path = (stack[-1][2] if stack else ()) + (name,)
        stack.append((name, cum + w, path, cum))
    while stack:
        top = stack.pop()
        cum = max(cum, top[1])
        spans.append((top[2], top[3], cum))
    widths: dict = {}
    for path, s, e in spans:
        widths[path] = widths.get(path, 0.0) + (e - s)
    self_w = {p: w - sum(v for q, v in widths.items() if len(q) == len(p) + 1 and q[:-1] == p)
              for p, w in widths.items()}
    return set(left_heavy([(p, max(w, 0.0)) for p, w in self_w.items()], order))


INSTRUMENTS = sorted((SAMPLES / "Instruments").glob("*/*-deep-copy.txt"))


@pytest.mark.parametrize("path", INSTRUMENTS, ids=[f"{p.parent.name}-{p.name}" for p in INSTRUMENTS])
def test_instruments_against_naive(path):
    t = load(path, warn=False)
    assert t.meta["format"] == "instruments-text"
    _close(t, naive_instruments(path.read_text()))


def test_instruments_units():
    assert load(SAMPLES / "Instruments" / "7.3.1" / "random-allocations-deep-copy.txt").meta["x_unit"] == "bytes"
    assert load(SAMPLES / "Instruments" / "13.4" / "cycles-example-deep-copy.txt").meta["x_unit"] == "cycles"
    t = load(SAMPLES / "Instruments" / "16.0" / "simple-time-profile-deep-copy.txt")
    assert t.meta["x_unit"] == "µs" and t.meta["total_weight"] == pytest.approx(4.934e6)


def test_instruments_depth_jump_is_repaired():
    data = b"Weight\tSelf Weight\t\tSymbol Name\n10.0 ms  100.0%\t0\t \tmain\n4.0 ms  40.0%\t0\t \t   deep\n"
    with pytest.warns(Warning, match="instruments_depth"):
        t = load_bytes(data, source="x.txt")
    assert calls_of(t) == {("x.txt", ("main",), 0.0, 10000.0), ("x.txt", ("main", "deep"), 0.0, 4000.0)}
