"""Load every trace with two source trees and compare the results (the equality check of a
change to the Chrome importer).

    .venv/bin/python tools/check_load_equal.py --base /tmp/base-side [--new .] [--bench-dir DIR]
        [--realdata ../shared/realdata] [--fuzz 600] [--side 400]

Inputs: every ``.json``/``.json.gz`` under ``--realdata`` (recursively), the ``.json`` files of
``--bench-dir`` (e.g. bench_side's files written out), ``--fuzz`` seeds of
tests/support/fuzz_hostile.build (valid traces damaged at random, hostile classes, gzip oddities; the
native and compact ones are skipped: another importer) and ``--side`` generated traces rich in
counters, flows and async events of every form the scanner tells apart (key orders, spacing,
ids, escapes, bad numbers, NaN, strings, missing fields, duplicates, thousands of series),
each cut or damaged at random in part.  The generated ones load three ways: sequentially,
and in parallel with chunks of 7 and of 1000 rows (and with a small ``max_events``).

``--release`` loads each JSON input once more by ``load(path)`` with ``chrome.RELEASE_BYTES`` at 0
(the file's copy given back as soon as the importer can: `chrome._release_file`).

Each tree loads everything in a child process of its own (its own numba cache) and writes, per
input and way, a digest of the outcome: every Trace array (dtype, shape, bytes), every table
and list, ``meta`` (repairs with their first occurrences, skipped counts), the warnings'
texts, or the error's type and message.  Prints the inputs that differ and a count; exit
status 1 when any differ.
"""
from __future__ import annotations

import argparse
import gzip
import os
import pathlib
import pickle
import random
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent

_CHILD = r"""
import hashlib, os, pickle, sys, warnings
import numpy as np
import tracevis3d.io
from tracevis3d.io import chrome, chrome_rows
from tracevis3d.model import Trace

def digest(t):
    out = {}
    for k, v in sorted(vars(t).items()):
        if isinstance(v, np.ndarray):
            out[k] = (str(v.dtype), v.shape, hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest())
        elif k == "meta":
            out[k] = repr(v)
        else:
            out[k] = hashlib.sha256(repr(v).encode("utf-8", "surrogatepass")).hexdigest()
    return out

jobs = pickle.load(open(sys.argv[1], "rb"))
res = {}
par0, chunk0 = chrome.PARALLEL_SCAN_BYTES, chrome_rows.CHUNK_ROWS
for key, path, way, opts in jobs:
    data = open(path, "rb").read()
    chrome.PARALLEL_SCAN_BYTES, chrome_rows.CHUNK_ROWS = par0, chunk0
    chrome.RELEASE_BYTES = 0 if way == "rel" else 1 << 62
    if way == "seq":
        chrome.PARALLEL_SCAN_BYTES = 1 << 62
    elif way.startswith("par"):
        chrome.PARALLEL_SCAN_BYTES, chrome_rows.CHUNK_ROWS = 0, int(way[3:])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            if way == "rel":  # read by load(path): the file's copy given back early where it can be
                t = tracevis3d.io.load(path, **opts)
            else:
                t = tracevis3d.io.load_bytes(data, source=os.path.basename(path), **opts)
            r = ("trace", digest(t))
        except Exception as e:
            r = ("error", type(e).__name__, str(e))
    res[key] = (r, [str(x.message) for x in w])
pickle.dump(res, open(sys.argv[2], "wb"))
"""


# ------------------------------------------------------------------ generated side-rich traces
def _num(rng):
    return rng.choice([str(rng.randint(-5, 10 ** 6)), f"{rng.uniform(-1e3, 1e6):.3f}", "1e400", "-1e400",
                       "12345678901234567890", "0.1234567890123456789", "NaN", "Infinity", "-Infinity",
                       '"7"', '"x"', "null", "true", "[1,2]", '{"a":1}', "1E5", "-0", "0.0", "5e-324",
                       "123456789012345678901234567890", f"{rng.randint(0, 99)}.{rng.randint(0, 999):03d}"])


def _ts(rng, t, bad):
    r = rng.random()
    if r >= bad:
        return f"{t:.3f}"
    return rng.choice(['"12"', "NaN", "1e300", "-1e300", "Infinity", "null", "123456789012.123456789",
                       "1.5e3", f"{t:.17f}", '"abc"', "[1]"])


def _ident(rng):
    return rng.choice([str(rng.randint(0, 20)), f'"0x{rng.randint(0, 20):x}"', "3.0", "3.5", "true", '{"a":1}',
                       "-7", "99999999999999999999", '"s\\"q"', str(rng.randint(0, 20))])


def _name(rng, pool, bad):
    r = rng.random()
    if r >= bad:
        return '"' + rng.choice(pool) + '"'
    return rng.choice(['"m\\u0041"', '"\\ud800x"', '"' + "n" * rng.randint(200, 600) + '"', "12", '"é"',
                       '"\\"q"', '""', '"a\\/b"', '"\xff\xfe"'])


def _obj(rng, pairs, ph_where):
    """A JSON object text of ``pairs`` [(key, value text)] with the ph pair first, last or anywhere,
    and random spacing."""
    ph = [p for p in pairs if p[0] == '"ph"']
    rest = [p for p in pairs if p[0] != '"ph"']
    rng.shuffle(rest) if ph_where == "any" else None
    pairs = ph + rest if ph_where == "first" else rest + ph if ph_where == "last" else rest[:1] + ph + rest[1:]
    sp = rng.choice(["", "", " ", "\n  "])
    colon = rng.choice([":", ":", ": ", " : "])
    body = ("," + sp).join(f"{k}{colon}{v}" for k, v in pairs)
    tail = "," if rng.random() < 0.01 else ""
    return "{" + sp + body + tail + sp + "}"


def side_trace(seed: int) -> bytes:
    rng = random.Random(seed)
    bad = rng.choice([0.0, 0.0, 0.001, 0.02, 0.1])  # how often a value takes an odd form
    names = [rng.choice(["mem", "cpu", "gc", "io", "net"]) + str(rng.randint(0, 3)) for _ in range(4)]
    if rng.random() < 0.05:
        names = [f"c{k}" for k in range(rng.randint(300, 5000))]  # many counters: tables overflow
    keys = ["rss", "heap", "load", "a", "b\\u0041", "", "x y"]
    if rng.random() < 0.05:
        keys = [f"k{k}" for k in range(rng.randint(100, 5000))]
    ph_where = rng.choice(["first", "first", "last", "any"])
    pids = [1, 2] if rng.random() < 0.9 else list(range(rng.randint(100, 5000)))
    evs = []
    t = 1000.0 * rng.random()
    n = rng.randint(1, 3000)
    flow_id = 0
    for k in range(n):
        t += rng.random() * 10
        tid = rng.randint(1, 4)
        pid = rng.choice(pids) if rng.random() < 0.95 else rng.choice(['"p1"', "1.5", "-3", "1e20"])
        r = rng.random()
        pairs = []
        if r < 0.3:
            pairs = [('"ph"', '"X"'), ('"name"', '"f' + str(rng.randint(0, 30)) + '"'), ('"ts"', f"{t:.3f}"),
                     ('"dur"', f"{rng.random() * 20:.3f}"), ('"pid"', str(pid)), ('"tid"', str(tid))]
            if rng.random() < 0.1:
                pairs.append(('"cat"', '"mem"'))
        elif r < 0.6:
            m = rng.choice([1, 1, 2, 3, 0, 70]) if rng.random() < 0.97 else rng.randint(60, 80)
            args = ", ".join(f'"{rng.choice(keys)}": {_num(rng) if rng.random() < bad else rng.randint(0, 9999)}'
                             for _ in range(m))
            pairs = [('"ph"', '"C"'), ('"name"', _name(rng, names, bad)), ('"pid"', str(pid)), ('"ts"', _ts(rng, t, bad))]
            if rng.random() < 0.9:
                pairs.append(('"args"', rng.choice(["{" + args + "}"] * 20 + ["[]", "5", "{}", '"ab"', "null"])))
            if rng.random() < 0.3:
                pairs.append(('"id"', _ident(rng)))
            if rng.random() < 0.2:
                pairs.append(('"tid"', str(tid)))
            if rng.random() < 0.05:
                pairs.append(('"cat"', rng.choice(['"c"', "5", '"\\n"'])))
        elif r < 0.9:
            ph = rng.choice("sstff")
            if ph == "s":
                flow_id += 1
            fid = flow_id - rng.randint(0, 3)
            pairs = [('"ph"', f'"{ph}"'), ('"pid"', str(pid)), ('"tid"', str(tid)), ('"ts"', _ts(rng, t + 0.5, bad)),
                     ('"name"', '"flow"')]
            if rng.random() < 0.97:
                pairs.append(('"id"', str(fid) if rng.random() >= bad else _ident(rng)))
            if rng.random() < 0.9:
                pairs.append(('"cat"', rng.choice(['"flow"', '"flow"', '"ac2g"', '""', '"c\\"d"', "7"])))
            if ph == "f" and rng.random() < 0.7:
                pairs.append(('"bp"', rng.choice(['"e"', '"e"', '"ee"', '""', "1"])))
            if rng.random() < bad / 3:
                pairs.append(rng.choice([('"id2"', '{"local": 3}'), ('"bind_id"', "4"), ('"dur"', "1"),
                                         ('"s"', '"g"'), ('"args"', '{"q": [1, {"r": "}"}]}'), ('"x"', "[]")]))
        elif r < 0.95:
            ph = rng.choice("bebenST")
            pairs = [('"ph"', f'"{ph}"'), ('"name"', '"req"'), ('"cat"', '"net"'), ('"id"', str(rng.randint(0, 5))),
                     ('"pid"', str(pid)), ('"ts"', f"{t:.3f}")]
        else:
            ph = rng.choice(["i", "I", "M", "B", "E", "P", "O", "XX", ""])
            pairs = [('"ph"', f'"{ph}"'), ('"name"', '"thread_name"' if ph == "M" else '"a"'), ('"pid"', str(pid)),
                     ('"tid"', str(tid)), ('"ts"', f"{t:.3f}")]
            if ph == "M":
                pairs.append(('"args"', '{"name": "T' + str(tid) + '"}'))
        if rng.random() < bad / 4:  # a duplicate or escaped key
            pairs.append(rng.choice([('"ts"', f"{t + 1:.3f}"), ('"p\\u0069d"', "3"), ('"name"', '"dup"'),
                                     ('"args"', '{"a": 1}'), ('"ph"', '"C"')]))
        evs.append(_obj(rng, pairs, ph_where))
    sep = rng.choice([",", ",\n", ", "])
    if rng.random() < 0.5:
        text = '{"displayTimeUnit": "ns", "traceEvents": [' + sep.join(evs) + "]}"
    else:
        text = "[" + sep.join(evs) + "]"
    data = bytearray(text.encode("utf-8", "surrogateescape"))
    r = rng.random() if bad else 1.0
    if r < 0.15:
        del data[rng.randint(1, len(data)):]
    elif r < 0.25:
        for _ in range(rng.randint(1, 5)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    elif r < 0.3:
        data += b" garbage"
    return bytes(data)


def build_inputs(a, tmp: pathlib.Path) -> list:
    """(key, path, way, options) jobs."""
    jobs = []
    if a.realdata:
        for p in sorted(pathlib.Path(a.realdata).rglob("*")):
            if p.is_file() and (p.name.endswith(".json") or p.name.endswith(".json.gz")):
                jobs.append((f"real {p.relative_to(a.realdata)}", str(p.resolve()), "default", {}))
    if a.bench_dir:
        for p in sorted(pathlib.Path(a.bench_dir).glob("*.json")):
            jobs.append((f"bench {p.name}", str(p.resolve()), "default", {}))
    for pattern in a.files or ():  # any format: the files a glob names (recursive with **)
        for p in sorted(pathlib.Path().glob(pattern)):
            if p.is_file():
                jobs.append((f"file {p}", str(p.resolve()), "default", {}))
    if a.fuzz:
        sys.path.insert(0, str(REPO / "tests" / "support"))
        sys.path.insert(0, str(REPO))
        import fuzz_hostile as fz
        for seed in range(a.fuzz):
            data, opts, label = fz.build(seed)
            if label.startswith(("native", "compact", "regex", "cone")) or opts:
                continue
            p = tmp / f"fuzz{seed}.json"
            p.write_bytes(data)
            jobs.append((f"fuzz {seed} ({label})", str(p), "default", {}))
    for seed in range(a.side):
        p = tmp / f"side{seed}.json"
        data = side_trace(seed)
        if seed % 7 == 3:
            data = gzip.compress(data)
        p.write_bytes(data)
        for way in ("seq", "par7", "par1000"):
            jobs.append((f"side {seed} {way}", str(p), way, {}))
        if seed % 5 == 0:
            jobs.append((f"side {seed} par7 max_events", str(p), "par7", {"max_events": 50 + seed % 300}))
            jobs.append((f"side {seed} seq max_events", str(p), "seq", {"max_events": 50 + seed % 300}))
    if a.release:  # each JSON input also read by load(path), its copy given back as early as it can be
        jobs += [(f"{key} rel", path, "rel", opts) for key, path, way, opts in list(jobs)
                 if way in ("default", "seq") and path.endswith((".json", ".json.gz"))]
    return jobs


def run_tree(tree: str, jobs_file: str, out_file: str) -> dict:
    env = dict(os.environ, PYTHONPATH=os.path.abspath(tree))
    # run in the tree's folder: ``python -c`` puts the working folder first on sys.path, so from
    # another checkout's root the child would import that checkout's package, not the tree's
    subprocess.run([sys.executable, "-c", _CHILD, jobs_file, out_file], env=env, check=True, cwd=os.path.abspath(tree))
    return pickle.load(open(out_file, "rb"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, help="the old source tree (its root, holding tracevis3d/)")
    ap.add_argument("--new", default=str(REPO))
    ap.add_argument("--realdata", default=str(REPO.parent / "shared" / "realdata"))
    ap.add_argument("--bench-dir")
    ap.add_argument("--files", action="append", help="a glob of more inputs, any format (repeatable; "
                                                     "e.g. 'tests/data/formats/**/*.pb.gz')")
    ap.add_argument("--fuzz", type=int, default=600)
    ap.add_argument("--side", type=int, default=400)
    ap.add_argument("--release", action="store_true",
                    help="also load each JSON input by load(path) with the file's copy given back early "
                         "(chrome.RELEASE_BYTES = 0)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        jobs = build_inputs(a, tmp)
        jf = tmp / "jobs.pkl"
        pickle.dump(jobs, open(jf, "wb"))
        old = run_tree(a.base, str(jf), str(tmp / "old.pkl"))
        new = run_tree(a.new, str(jf), str(tmp / "new.pkl"))
    differ = [k for k, _, _, _ in jobs if old.get(k) != new.get(k)]
    for k in differ[:30]:
        o, n = old.get(k), new.get(k)
        print("DIFFERS:", k)
        if o and n and o[0][0] == n[0][0] == "trace":
            print("   fields:", [f for f in o[0][1] if o[0][1][f] != n[0][1].get(f)], "warnings equal:", o[1] == n[1])
            if o[0][1].get("meta") != n[0][1].get("meta"):
                print("   old meta:", o[0][1]["meta"][:600], "\n   new meta:", n[0][1]["meta"][:600])
            if o[1] != n[1]:
                print("   old warn:", o[1][:3], "\n   new warn:", n[1][:3])
        else:
            print("   old:", str(o)[:400], "\n   new:", str(n)[:400])
    files = len({p for _, p, _, _ in jobs})
    n_err = sum(1 for k in old if old[k][0][0] == "error")
    print(f"{len(jobs)} loads of {files} files compared ({n_err} raise an error in the base tree): "
          f"{len(jobs) - len(differ)} equal, {len(differ)} differ")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
