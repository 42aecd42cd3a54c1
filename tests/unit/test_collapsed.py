"""Collapsed stacks (`tracevis3d.io.collapsed`, `tracevis3d.kernels.textscan.collapsed_scan`)
against a naive reading written from speedscope's ``bg-flamegraph.ts`` (widened as the module
says): each line split in plain Python, the Left Heavy tree built by dictionaries.  Also the
hostile text inputs of all the text readers (tests/support/hostile_text_formats.py)."""
from __future__ import annotations

import gzip
import pathlib
import random
import re

import numpy as np
import pytest

from tracevis3d.io import load, load_bytes
from tracevis3d.model import TraceFormatError

from collapsed_twins import calls_of, left_heavy
from time_limits import time_limit

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "formats"
SAMPLES = DATA / "speedscope-samples" / "stackcollapse"
_LINE = re.compile(r"(.*?)[ \t]+(\d+(?:\.\d*)?)")
_LANE = re.compile(r"^(?:process \d+:|thread \()")


def naive_collapsed(data: bytes, name: str) -> set:
    if data.startswith(b"\xff\xfe") or data.startswith(b"\xfe\xff"):
        text = data.decode("utf-16")
    else:
        text = data.decode("utf-8", "replace").lstrip("\ufeff")
    lanes: dict = {}
    labels: dict = {}
    order: dict = {}
    for line in text.split("\n"):
        m = _LINE.fullmatch(line.rstrip("\r \t"))
        if not m:
            continue
        frames = m.group(1).split(";") if m.group(1) else []
        if len(frames) > 1 and frames[-1] == "":
            frames.pop()
        frames = [f or "(anonymous)" for f in frames]
        for f in frames:
            order.setdefault(f, len(order))
        lead = 0
        while lead < len(frames) and _LANE.match(frames[lead]):
            lead += 1
        # a lane per thread id (py-spy writes "thread (7)", later "thread (7): MainThread")
        ident = tuple(re.sub(r"\): .*", ")", f) for f in frames[:lead]) if lead else name
        if frames[lead:]:
            lanes.setdefault(ident, []).append((tuple(frames[lead:]), float(m.group(2))))
            named = [f.split(": ", 1)[1] for f in frames[:lead] if f.startswith("thread (") and ": " in f]
            if named or ident not in labels:
                labels[ident] = named[-1] if named else (frames[lead - 1] if lead else name)
    out = set()
    for ident, stacks in lanes.items():
        out |= {(labels[ident], p, s, e) for p, s, e in left_heavy(stacks, order)}
    return out


@pytest.mark.parametrize("name", ["simple.txt", "simple-crlf.txt", "simple-utf16-le.txt", "simple-utf16-be.txt",
                                  "simple-with-invalids.txt", "alternating.txt", "recursion.txt", "tall.txt",
                                  "perf-vertx-stacks-01-collapsed-all.txt.gz"])
def test_speedscope_samples(name):
    path = SAMPLES / name
    t = load(path, warn=False)
    assert t.meta["format"] == "collapsed" and t.meta["x_unit"] == "samples" and t.meta["merged"]
    raw = path.read_bytes()
    assert calls_of(t) == naive_collapsed(gzip.decompress(raw) if name.endswith(".gz") else raw, name)


def test_simple_layout_and_encodings():
    """speedscope's snapshot of simple.txt: a;b (14) over c (5) then d (4); every encoding alike."""
    want = {("simple", ("a",), 0.0, 14.0), ("simple", ("a", "b"), 0.0, 14.0), ("simple", ("a", "b", "c"), 0.0, 5.0),
            ("simple", ("a", "b", "d"), 5.0, 9.0)}
    for name in ("simple.txt", "simple-crlf.txt", "simple-utf16-le.txt", "simple-utf16-be.txt"):
        t = load_bytes((SAMPLES / name).read_bytes(), source="simple", warn=False)
        assert {c for c in calls_of(t)} == want, name


def test_invalid_lines_are_repairs():
    with pytest.warns(Warning, match="collapsed_line"):
        t = load(SAMPLES / "simple-with-invalids.txt")
    r = t.meta["repairs"]["collapsed_line"]
    assert r["count"] == 3 and r["first"] == "line 1"


def test_pyspy_threads_are_lanes():
    path = DATA / "collapsed" / "threads.pyspy.txt"
    t = load(path, warn=False)
    assert sorted(t.thread_names) == ["MainThread", "worker-0", "worker-1"]
    assert len(set(t.thread_tid.tolist())) == 3
    assert not any(t.function_names[f].startswith("thread (") for f in set(t.func.tolist()))
    assert calls_of(t) == naive_collapsed(path.read_bytes(), path.name)
    # stacks of the thread frame alone (no Python frame: 9 samples here) show nothing
    assert t.meta["total_weight"] == sum(float(ln.rsplit(" ", 1)[1]) for ln in path.read_text().splitlines()
                                         if ";" in ln)


def _random_file(rng: random.Random, n_lines: int) -> bytes:
    names = ["main", "run", "a b", "x(int, char*)", "", "ünï", "f;g"[:1], "deep", "lib.so`fn", "0", "thread-ish"]
    lines = []
    for _ in range(n_lines):
        k = rng.random()
        if k < 0.05:
            lines.append("# a comment")
            continue
        if k < 0.08:
            lines.append("")
            continue
        d = rng.randint(1, 9)
        st = ";".join(rng.choice(names) for _ in range(d))
        if rng.random() < 0.1:
            st += ";"
        cnt = str(rng.randint(0, 40)) if rng.random() < 0.9 else f"{rng.randint(0, 9)}.{rng.randint(0, 99)}"
        sep = rng.choice([" ", "  ", "\t"])
        lines.append(st + sep + cnt + ("\r" if rng.random() < 0.1 else ""))
    if rng.random() < 0.5:
        lines.sort()
    return ("\n".join(lines) + rng.choice(["", "\n"])).encode()


@pytest.mark.parametrize("seed", range(12))
def test_random_files_against_naive(seed):
    rng = random.Random(seed)
    data = _random_file(rng, rng.choice([5, 60, 400]))
    try:
        t = load_bytes(data, source="rand", format="collapsed", warn=False)
    except TraceFormatError:
        assert not naive_collapsed(data, "rand")
        return
    got, want = calls_of(t), naive_collapsed(data, "rand")
    key = (lambda c: (c[0], c[1], round(c[2], 6), round(c[3], 6)))
    assert {key(c) for c in got} == {key(c) for c in want}


def test_scan_matches_python_fallback():
    """The numba scan and the plain-dictionary scan used when tables are flooded agree."""
    from tracevis3d.io.collapsed import _python_scan
    from tracevis3d.kernels.textscan import collapsed_scan

    rng = random.Random(5)
    data = _random_file(rng, 500)
    buf = np.frombuffer(data, np.uint8)
    a = collapsed_scan(buf, 0, buf.size, np.uint64(99), 100_000)[1:]
    b = _python_scan(buf, 100_000)
    for x, y in zip(a[:7], b[:7]):
        assert np.array_equal(x, y)
    assert np.array_equal(a[8][:6], b[8][:6])


def test_counts_with_many_digits_are_exact():
    data = b"a;b 12345678901234567890123\na;c 0.1\na 3.25\n"
    t = load_bytes(data, source="x", format="collapsed", warn=False)
    total = {c[1]: c[3] - c[2] for c in calls_of(t)}
    assert total[("a", "c")] == 0.1 and total[("a",)] == 3.35
    assert t.meta["repairs"]["sample_weight"]["count"] == 1  # 1.2e22: past max_abs_time, weighs 0
    t = load_bytes(b"a;b 12345678901234567\n", source="x", format="collapsed", warn=False, max_abs_time=1e30)
    assert max(c[3] for c in calls_of(t)) == float("12345678901234567")


def test_max_depth_cuts_with_repair():
    data = (";".join(f"f{i}" for i in range(50)) + " 3\n").encode()
    t = load_bytes(data, source="x", format="collapsed", warn=False, max_stack_depth=10)
    assert t.depth.max() == 9 and t.meta["repairs"]["stack_deep"]["count"] == 1


# ----------------------------------------------------------------------------- hostile inputs
def _hostile_ids():
    import hostile_text_formats

    return [c[0] for c in hostile_text_formats.CASES]


@pytest.mark.parametrize("name", _hostile_ids())
def test_hostile(name):
    """Each hostile input: a one-line TraceFormatError naming the file and the place, or a
    load (repaired); a guard alarm (300 s, far above the few seconds they take) catches hangs."""
    import hostile_text_formats

    _, factory, expect, options = next(c for c in hostile_text_formats.CASES if c[0] == name)
    data = factory()
    with time_limit(300):
        try:
            trace = load_bytes(data, source=f"{name}.bin", warn=False, **options)
            err = None
        except TraceFormatError as e:
            err = str(e)
    if expect is None:
        assert err is None, err
        assert len(trace) > 0
    else:
        assert err is not None, f"{name}: loaded {len(trace)} calls; expected an error matching {expect!r}"
        assert "\n" not in err and err.startswith(f"{name}.bin: "), err
        assert re.search(expect, err), err


def test_byte_kernels_against_python():
    """textscan's 8- and 32-byte helpers against plain Python on random spans: common_prefix,
    span_hash (equal bytes at any offset hash alike), the packed-copy comparison, an arena's growth, a
    table's size, peel_lanes."""
    from tracevis3d.kernels import textscan as ts
    from tracevis3d.kernels.inline_bytes import to_arena

    rng = random.Random(3)
    raw = bytes(rng.choice(b"ab;\n ") for _ in range(3000))
    buf = np.frombuffer(raw + raw, np.uint8)
    n = len(raw)
    for _ in range(400):
        a, b = rng.randrange(n), rng.randrange(n)
        lim = rng.randrange(0, n - max(a, b))
        q = 0
        while q < lim and raw[a + q] == raw[b + q]:
            q += 1
        assert ts.common_prefix(buf, a, b, lim) == q
        ln = rng.randrange(0, min(70, n - max(a, b)))
        assert ts.span_hash(buf, a, a + ln, np.uint64(7)) == ts.span_hash(buf, a + n, a + n + ln, np.uint64(7))
        arena = ts.grow_u8(np.zeros(4, np.uint8), ln + 8, 0)  # (room for the copy and 8 bytes of slack)
        assert to_arena(arena, 0, buf, b, b + ln) == ln
        assert ts.same_as_arena(arena, 0, buf, a, ln) == (raw[a:a + ln] == raw[b:b + ln])
    hashes = {int(ts.span_hash(buf, k, k + 9, np.uint64(7))) for k in range(2000)}
    grown = ts.grow_u8(np.arange(10, dtype=np.uint8), 15, 6)  # an arena's growth: its bytes used kept, the rest 0
    assert grown.tolist() == list(range(6)) + [0] * 14
    assert [ts.table_size_for(n, 64) for n in (0, 32, 33, 128, 129)] == [64, 64, 256, 256, 1024]
    assert len(hashes) == len({raw[k:k + 9] for k in range(2000)})
    # peel_lanes: frames 0, 1 are lane frames; trie 0:(-1,0) 1:(0,2) 2:(0,1) 3:(2,2) 4:(-1,2)
    lane, parent = ts.peel_lanes(np.array([-1, 0, 0, 2, -1]), np.array([0, 2, 1, 2, 2]), np.array([True, True, False]))
    assert lane.tolist() == [-2, 0, -2, 2, -1] and parent.tolist() == [-1, -1, -1, -1, -1]
