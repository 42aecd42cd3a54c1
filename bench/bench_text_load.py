"""Issue 79's profile readers against a simple peer on the same bytes, in one run: ONE table.

    PYTHONPATH=. .venv/bin/python bench/bench_text_load.py [--lines 1000000] [--events 100000]
        [--samples 1000000] [--nodes 1000000] [--repeat 3] [--stages] [--only ROW ...] [--only-text]

Rows (each with its goal, load time / the peer's):

- collapsed stacks, 10^6 lines (generated like a profile grows: each stack keeps a long prefix
  of a recent one and calls 1-4 functions more; 30 000 functions, ~24 frames a line, sorted as
  stackcollapse writes them): ``tracevis3d.load(path)`` against reading the file and splitting
  its lines (``path.read_bytes().split``; goal ≤ 1.5x), with `textscan.collapsed_scan` alone
  beside it; below it the same load against ``data.split`` of bytes already read, and
  `io.load_bytes` of the bytes in memory against ``data.split``;
- perf script, 10^5 events of ~16 frames (four threads, the same kind of stacks): the scan
  (`perf_scan.perf_scan`) and the whole load against ``data.split(b"\\n")`` (goal ≤ 1.5x);
- pprof, ``--samples`` samples of ~12 locations (packed, as Go writes them): the whole load
  against google.protobuf's ``ParseFromString`` of the same bytes (the upb C decoder; no
  stacks built; goal ≤ 1.5x), when google.protobuf is installed;
- V8 .cpuprofile, ``--nodes`` nodes and as many samples (bench_profile_load's file): the whole
  load against ``orjson.loads`` (goal ≤ 1.3x), and below it against ``orjson.loads`` with the
  garbage collector paused, as the load pauses it around its reader.

``--stages`` adds a line with each stage of the collapsed load (read, scan, names, the builder's
steps, the trace check: `stages`); ``--only`` keeps the rows named, ``--only-text`` the
collapsed and perf rows.

Each time is the least CPU time of ``--repeat`` runs (the process's CPU time: the machine may
be shared, and wall time then measures the other processes); each row family is measured in a
fresh process of its own (`_rows_apart`).  The generated files are kept in
build/bench-text/ and reused.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parent.parent
OUT = REPO / "build" / "bench-text"
if __name__ == "__main__" and str(REPO) not in sys.path:  # run as a script from anywhere (make bench)
    sys.path.insert(0, str(REPO))


def _names(rng, n):
    pkgs = ["org/apache/http/", "io/netty/", "com/example/", "std::", "java/util/", "", "", "v8::internal::"]
    return [f"{pkgs[i % len(pkgs)]}{'Handler' if i % 3 else 'Pool'}{i}::{'run' if i % 5 else 'invoke'}_{i % 97}"
            for i in range(n)]


def _stacks(rng, n, n_func=30000):
    """n distinct stacks (lists of function ids), grown as a profile grows."""
    callees = [rng.integers(0, n_func, int(rng.integers(1, 8))) for _ in range(n_func)]
    seen = set()
    recent = [[int(x)] for x in rng.integers(0, n_func, 16)]
    out = []
    geo = rng.geometric(0.35, 16 * n + 64)
    add = rng.integers(1, 5, 16 * n + 64)
    pick = rng.integers(0, 1 << 30, 16 * n + 64)
    g = 0
    while len(out) < n:
        if g + 8 >= pick.size:
            geo, add, pick, g = rng.geometric(0.35, pick.size), rng.integers(1, 5, pick.size), \
                rng.integers(0, 1 << 30, pick.size), 0
        base = recent[len(recent) - 1 - pick[g] % min(len(recent), 64)]
        st = base[: max(1, len(base) - int(geo[g]))]
        f = st[-1]
        for _ in range(int(add[g])):
            c = callees[f]
            f = int(c[pick[g + 1] % c.size])
            st.append(f)
            g += 1
        g += 1
        if len(st) > 32:
            st = st[: 8 + int(pick[g]) % 16]
        key = tuple(st)
        if key in seen:
            continue
        seen.add(key)
        recent.append(st)
        out.append(st)
    return out


def collapsed_file(n_lines: int) -> pathlib.Path:
    path = OUT / f"collapsed-{n_lines}.txt"
    if not path.exists():
        rng = np.random.default_rng(1)
        names = _names(rng, 30000)
        lines = sorted(";".join(names[x] for x in st) for st in _stacks(rng, n_lines))
        cnt = rng.geometric(0.3, len(lines))
        path.write_bytes("".join(f"{s} {c}\n" for s, c in zip(lines, cnt)).encode())
    return path


def perf_file(n_events: int) -> pathlib.Path:
    path = OUT / f"perf-{n_events}.txt"
    if not path.exists():
        rng = np.random.default_rng(2)
        names = _names(rng, 30000)
        stacks = _stacks(rng, max(n_events // 20, 1000))
        dsos = ["/usr/lib/jvm/libjvm.so", "/tmp/app", "/usr/lib/x86_64-linux-gnu/libc.so.6", "[kernel.kallsyms]"]
        parts = []
        t = 1000.0
        for k in range(n_events):
            st = stacks[int(rng.integers(0, len(stacks)))]
            tid = 4100 + k % 4
            t += 0.001
            parts.append(f"app {4100}/{tid} [00{k % 4}] {t:.6f}:     250000 cycles:\n")
            for f in reversed(st):
                parts.append(f"\t    {0x400000 + f * 16:x} {names[f]}+0x{f % 97:x} ({dsos[f % 4]})\n")
            parts.append("\n")
        path.write_bytes("".join(parts).encode())
    return path


def _vint(v: int) -> bytes:
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b, v = v & 0x7F, v >> 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def _field(num, body: bytes) -> bytes:
    return _vint((num << 3) | 2) + _vint(len(body)) + body


def pprof_file(n_samples: int) -> pathlib.Path:
    path = OUT / f"pprof-{n_samples}.pb"
    if not path.exists():
        rng = np.random.default_rng(3)
        n_loc, n_fn = 20000, 5000
        stacks = _stacks(rng, 20000, n_func=n_loc)
        out = bytearray()
        strings = ["", "samples", "count", "cpu", "nanoseconds"] + [f"main.fn{i}" for i in range(n_fn)] + ["main.go"]
        out += _field(1, b"\x08\x01\x10\x02") + _field(1, b"\x08\x03\x10\x04")
        pick = rng.integers(0, len(stacks), n_samples)
        for s in pick.tolist():
            st = stacks[s]
            body = _field(1, b"".join(_vint(x + 1) for x in reversed(st)))
            body += _field(2, _vint(1) + _vint(10_000_000))
            out += _field(2, body)
        for lid in range(1, n_loc + 1):
            line = b"\x08" + _vint(1 + lid % n_fn) + b"\x10" + _vint(lid % 300)
            out += _field(4, b"\x08" + _vint(lid) + b"\x18" + _vint(0x400000 + lid * 8) + _field(4, line))
        for fid in range(1, n_fn + 1):
            out += _field(5, b"\x08" + _vint(fid) + b"\x10" + _vint(4 + fid) + b"\x20" + _vint(len(strings) - 1))
        for s in strings:
            out += _field(6, s.encode())
        path.write_bytes(bytes(out))
    return path


def _profile_class():
    try:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    except ImportError:
        return None
    F = descriptor_pb2.FieldDescriptorProto
    spec = {"ValueType": [("type", 1, F.TYPE_INT64, 0, ""), ("unit", 2, F.TYPE_INT64, 0, "")],
            "Sample": [("location_id", 1, F.TYPE_UINT64, 1, ""), ("value", 2, F.TYPE_INT64, 1, "")],
            "Line": [("function_id", 1, F.TYPE_UINT64, 0, ""), ("line", 2, F.TYPE_INT64, 0, "")],
            "Location": [("id", 1, F.TYPE_UINT64, 0, ""), ("address", 3, F.TYPE_UINT64, 0, ""),
                         ("line", 4, F.TYPE_MESSAGE, 1, "Line")],
            "Function": [("id", 1, F.TYPE_UINT64, 0, ""), ("name", 2, F.TYPE_INT64, 0, ""),
                         ("filename", 4, F.TYPE_INT64, 0, "")],
            "Profile": [("sample_type", 1, F.TYPE_MESSAGE, 1, "ValueType"), ("sample", 2, F.TYPE_MESSAGE, 1, "Sample"),
                        ("location", 4, F.TYPE_MESSAGE, 1, "Location"), ("function", 5, F.TYPE_MESSAGE, 1, "Function"),
                        ("string_table", 6, F.TYPE_STRING, 1, "")]}
    fd = descriptor_pb2.FileDescriptorProto(name="bench_profile.proto", package="benchpprof", syntax="proto3")
    for msg, fields in spec.items():
        m = fd.message_type.add(name=msg)
        for name, num, typ, rep, sub in fields:
            f = m.field.add(name=name, number=num, type=typ, label=F.LABEL_REPEATED if rep else F.LABEL_OPTIONAL)
            if sub:
                f.type_name = f".benchpprof.{sub}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("benchpprof.Profile"))


def best(fn, repeat: int) -> float:
    """The least CPU time of ``repeat`` calls of ``fn`` (this process's; every measured thing
    runs on one thread): on a shared machine wall time is mostly the other processes' load."""
    ts = []
    for _ in range(repeat):
        t = time.process_time()
        fn()
        ts.append(time.process_time() - t)
    return min(ts)


def stages(path, repeat: int) -> dict:
    """CPU s of each stage of ``tracevis3d.load(path)`` (the least of ``repeat`` loads): the file
    read, the scan, the names, the builder's steps, the trace check; "other" is the rest."""
    import functools

    import tracevis3d
    from tracevis3d import io as tio
    from tracevis3d import model
    from tracevis3d.io import collapsed, stacks
    from tracevis3d.kernels import textscan

    spots = [(tio, "_read_input", "read"), (textscan, "collapsed_scan", "scan"), (collapsed, "decode_spans", "names"),
             (collapsed, "_lanes", "lanes"), (collapsed, "frame_table", "frame table"),
             (stacks, "_stack_forest", "forest"), (stacks, "_left_heavy_all", "left heavy calls"),
             (stacks, "_function_tables", "function tables"), (model.Trace, "check", "check")]
    acc: dict = {}
    saved = [(mod, name, getattr(mod, name)) for mod, name, _ in spots]
    for mod, name, label in spots:
        def timed(*a, _f=getattr(mod, name), _label=label, **k):
            t = time.process_time()
            try:
                return _f(*a, **k)
            finally:
                acc[_label] = acc.get(_label, 0.0) + time.process_time() - t
        setattr(mod, name, functools.wraps(getattr(mod, name))(timed))
    best_run = None
    try:
        for _ in range(repeat):
            acc.clear()
            t = time.process_time()
            tracevis3d.load(path, warn=False)
            run = dict(acc, total=time.process_time() - t)
            if best_run is None or run["total"] < best_run["total"]:
                best_run = run
    finally:
        for mod, name, f in saved:
            setattr(mod, name, f)
    best_run["other"] = best_run["total"] - sum(v for k, v in best_run.items() if k != "total")
    return best_run


def _pprof_row(a) -> tuple:
    """The pprof row: the whole load against protobuf's ParseFromString of the same bytes."""
    import tracevis3d

    Profile = _profile_class()
    bpath = pprof_file(a.samples)
    data = bpath.read_bytes()
    tracevis3d.load(bpath, warn=False)
    full = best(lambda: tracevis3d.load(bpath, warn=False), a.repeat)
    n_calls = len(tracevis3d.load(bpath, warn=False))
    if Profile is not None:
        def decode():
            p = Profile()
            p.ParseFromString(data)
            return len(p.sample)
        peer = best(decode, a.repeat)
        peer_name = "protobuf ParseFromString"
    else:
        peer, peer_name = float("nan"), "(google.protobuf missing)"
    return (f"pprof {a.samples:,} samples", len(data), peer_name, peer, float("nan"), full, n_calls)


#: issue 79's goals: load time / the peer's, each row
GOALS = {"collapsed": 1.5, "perf": 1.5, "pprof": 1.5, "cpuprofile": 1.3}


def _collapsed_rows(a, seed) -> list:
    import tracevis3d
    from tracevis3d.io import load_bytes
    from tracevis3d.kernels.textscan import collapsed_scan

    cpath = collapsed_file(a.lines)
    data = cpath.read_bytes()
    buf = np.frombuffer(data, np.uint8)
    collapsed_scan(buf[:4096], 0, 4096, seed, 100_000)
    tracevis3d.load(cpath, warn=False)  # compile / load every kernel once
    n_calls = len(tracevis3d.load(cpath, warn=False))
    scan = best(lambda: collapsed_scan(buf, 0, buf.size, seed, 100_000), a.repeat)
    full = best(lambda: tracevis3d.load(cpath, warn=False), a.repeat)
    from_file = best(lambda: cpath.read_bytes().split(b"\n"), a.repeat)
    peer = best(lambda: data.split(b"\n"), a.repeat)
    in_memory = best(lambda: load_bytes(data, source=str(cpath), warn=False), a.repeat)
    return [("collapsed", f"collapsed {a.lines:,} lines, load(path)", len(data), "read_bytes().split(b'\\n')",
             from_file, scan, full, n_calls),
            (None, "  the same, against split alone", len(data), "split(b'\\n')", peer, scan, full, n_calls),
            (None, "  the same, bytes in memory", len(data), "split(b'\\n')", peer, scan, in_memory, n_calls)]


def _perf_row(a, seed) -> tuple:
    import tracevis3d
    from tracevis3d.kernels.perf_scan import perf_scan

    ppath = perf_file(a.events)
    data = ppath.read_bytes()
    buf = np.frombuffer(data, np.uint8)
    want = np.zeros(0, np.uint8)
    perf_scan(buf[:4096], 0, 4096, seed, 100_000, want)
    tracevis3d.load(ppath, warn=False)
    n_calls = len(tracevis3d.load(ppath, warn=False))
    peer = best(lambda: data.split(b"\n"), a.repeat)
    scan = best(lambda: perf_scan(buf, 0, buf.size, seed, 100_000, want), a.repeat)
    full = best(lambda: tracevis3d.load(ppath, warn=False), a.repeat)
    return ("perf", f"perf script {a.events:,} events", len(data), "split(b'\\n')", peer, scan, full, n_calls)


def _cpuprofile_rows(a) -> list:
    """The .cpuprofile row (bench_profile_load's file): the load against orjson.loads as a caller
    makes it (the garbage collector on: its passes over the 10^7 objects the parse makes are part
    of that parse), and, below it, against orjson.loads with the collector paused as
    `tracevis3d.load` pauses it around its reader."""
    import gc

    import orjson

    import tracevis3d
    from bench_profile_load import cpuprofile_file

    path = cpuprofile_file(a.nodes)
    data = path.read_bytes()
    tracevis3d.load(path, warn=False)
    n_calls = len(tracevis3d.load(path, warn=False))
    full = best(lambda: tracevis3d.load(path, warn=False), a.repeat)
    peer = best(lambda: orjson.loads(data), a.repeat)

    def paused():
        gc.disable()
        try:
            return orjson.loads(data)
        finally:
            gc.enable()

    peer_paused = best(paused, a.repeat)
    nan = float("nan")
    return [("cpuprofile", f".cpuprofile {a.nodes:,} nodes", len(data), "orjson.loads", peer, nan, full, n_calls),
            (None, "  the same, collector paused", len(data), "orjson.loads, gc paused", peer_paused, nan, full,
             n_calls)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--nodes", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--stages", action="store_true", help="also each stage of the collapsed load (CPU s)")
    ap.add_argument("--only", choices=("collapsed", "perf", "pprof", "cpuprofile"), action="append",
                    help="these rows only (repeatable; default: all)")
    ap.add_argument("--only-text", action="store_true", help="the collapsed and perf rows only")
    ap.add_argument("--rows-json", action="store_true", help=argparse.SUPPRESS)  # (a child's rows, `_rows_apart`)
    a = ap.parse_args(argv)
    os.environ.setdefault("NUMBA_CACHE_DIR", str(REPO / "build" / "numba-cache"))
    OUT.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(REPO / "bench"))

    only = set(a.only or (["collapsed", "perf"] if a.only_text else ["collapsed", "perf", "pprof", "cpuprofile"]))
    if len(only) > 1 and not a.rows_json:
        rows, st = _rows_apart(a, [k for k in ROW_ORDER if k in only])
    else:
        rows, st = _rows_here(a, only)
    if a.rows_json:
        import json

        for r in rows:
            print("ROW " + json.dumps(r))
        print("STAGES " + json.dumps(st))
        return 0
    _print_table(rows, st, a.repeat)
    return 0


#: the row families, in the table's order
ROW_ORDER = ("collapsed", "perf", "pprof", "cpuprofile")


def _rows_apart(a, families: list) -> tuple:
    """Each row family measured in a fresh process of its own (``--only FAMILY --rows-json``):
    a row measured in the process after another pays for that one's leftovers (the perf row
    after the 717 MB collapsed load took 0.361 s against 0.252 s alone, 2026-11-30: its fresh
    buffers waited for the kernel to compact memory into huge pages).  Returns (rows, the
    collapsed stages or None)."""
    import json
    import subprocess

    rows, st = [], None
    for fam in families:
        cmd = [sys.executable, __file__, "--only", fam, "--rows-json", "--lines", str(a.lines), "--events",
               str(a.events), "--samples", str(a.samples), "--nodes", str(a.nodes), "--repeat", str(a.repeat)]
        if a.stages:
            cmd.append("--stages")
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"bench_text_load: the {fam} rows failed:\n{r.stderr.strip()[-2000:]}")
        for line in r.stdout.splitlines():
            if line.startswith("ROW "):
                rows.append(tuple(json.loads(line[4:])))
            elif line.startswith("STAGES ") and json.loads(line[7:]) is not None:
                st = json.loads(line[7:])
    return rows, st


def _rows_here(a, only) -> tuple:
    """The rows of the families ``only``, measured in this process: (rows, the collapsed
    stages or None)."""
    from tracevis3d.kernels.gamma import process_hash_seed

    seed = process_hash_seed()
    rows = []
    if "collapsed" in only:
        rows += _collapsed_rows(a, seed)
    st = stages(collapsed_file(a.lines), a.repeat) if a.stages and "collapsed" in only else None
    if "perf" in only:
        rows.append(_perf_row(a, seed))
    if "pprof" in only:
        name, nb, pname, p, _, f, nc = _pprof_row(a)
        rows.append(("pprof", name, nb, pname, p, float("nan"), f, nc))
    if "cpuprofile" in only:
        rows += _cpuprofile_rows(a)
    return rows, st


def _print_table(rows: list, st, repeat: int) -> None:
    print(f"bench_text_load: issue 79's profile readers ({os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}; least CPU s of {repeat}; each family in a process of its own)")
    head = ("case", "MB", "peer", "peer s", "scan s", "load s", "load/peer", "goal", "calls")
    print(f"{head[0]:<36} {head[1]:>7} {head[2]:<27} {head[3]:>7} {head[4]:>7} {head[5]:>7} {head[6]:>9} "
          f"{head[7]:>10} {head[8]:>10}")
    for key, name, nb, pname, p, s, f, nc in rows:
        goal = GOALS.get(key)
        verdict = "" if goal is None else f"<= {goal:g} {'met' if f / p <= goal else 'NOT'}"
        scan = f"{s:>7.3f}" if s == s else f"{'-':>7}"
        print(f"{name:<36} {nb / 1e6:>7.1f} {pname:<27} {p:>7.3f} {scan} {f:>7.3f} {f / p:>9.2f} {verdict:>10} "
              f"{nc:>10,}")
    if st is not None:
        print("collapsed load by stage (CPU s, the least total of the loads): "
              + ", ".join(f"{k} {v:.3f}" for k, v in st.items()))


if __name__ == "__main__":
    sys.exit(main())
