"""Seeded fuzzing of the importers with the hostile classes of issues 9 and 20.

Each seed builds one input: a class of tests/support/hostile_cases.py at a random size,
a gzip oddity, a tampered native file, or a valid trace with random damage
(cuts, byte flips, long or surrogate names, numeric edges, deep nesting, missing
commas, trailing data, bad args); a real recording of tests/data/formats damaged in its
structure (``structured``: tests/support/fuzz_structured.py); a memray capture, a Chrome
memory-infra dump or a live memray stream from a loopback peer, damaged in their structure
(``memray``, ``memdump``, ``memlive``: tests/support/fuzz_memory.py); issue 20's classes: a hostile compact file (counts that
wrap int64, a declared raw size 0 over a zlib bomb, DAG and depth bombs, header and
metadata bombs, byte flips), a user regex (catastrophic for a backtracking engine, or
needing backtracking) searched over a trace, and a trace whose names collide under the
cone tree's unkeyed hash.  Every input must give a checked `Trace` or a
`TraceFormatError` naming the file (a regex: an answer or a one-line ValueError) -- no
other exception, no crash, no hang (per-case alarm), within the address-space limit of
the worker process.

    .venv/bin/python tests/support/fuzz_hostile.py --seeds 2000 [--first 0] [--max-gb 2.5] [--case-seconds 20]
        [--kinds format ...] [--save DIR]

``make fuzz`` runs a long seeded run; tests/test_hostile.py runs a short one.
Prints one line per failure and a summary; exit status 1 if anything failed.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import pathlib
import random
import resource
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent


class Done(Exception):
    """A worker case that ends with its own outcome (the message)."""
REPO = HERE.parents[1]


def _events(rng: random.Random, n: int) -> list:
    """A small valid trace: nested X and B/E calls on a few threads, flows, instants."""
    evs = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}}]
    t = 0
    for k in range(n):
        tid = rng.randint(1, 3)
        d = rng.randint(0, 50)
        if rng.random() < 0.5:
            evs.append({"ph": "X", "name": rng.choice("abcdef"), "ts": t, "dur": d, "pid": 1, "tid": tid,
                        "args": {"k": k}})
        else:
            nm = rng.choice("abcdef")
            evs.append({"ph": "B", "name": nm, "ts": t, "pid": 1, "tid": tid})
            evs.append({"ph": "E", "name": nm, "ts": t + d, "pid": 1, "tid": tid})
        if rng.random() < 0.1:
            evs.append({"ph": rng.choice("stf"), "id": k % 7, "cat": "c", "ts": t, "pid": 1, "tid": tid,
                        "name": "f"})
        if rng.random() < 0.05:
            evs.append({"ph": "i", "s": "t", "ts": t, "pid": 1, "tid": tid, "name": "mark"})
        t += rng.randint(0, 30)
    return evs


_EDGES = [b"1.7e308", b"-1.7e308", b"NaN", b"Infinity", b"-Infinity", b"1e999", b"-0", b'"12"', b'"x"',
          b"123456789012345678901234567890", b"null", b"true", b"[]", b"{}", b"5e-324"]


# ------------------------------------------------------------------ issue 20's classes
_REGEXES = [r"(a+)+$", r"(a|a)*b", r"(a|aa)+$", r"(\w+\s?)*$", r"(.*a){20}$", r"^(a?){25}a{25}$",
            r"(x+x+)+y", r"([a-z]+)*[0-9]$", r"(a)\1", r"(?=a)b", r"(?<!a)b", r"a++", r"(?>a+)b",
            r"a{1000}{1000}", r"(", r"[", r"(?i)MAIN|leaf", r"\bio\b", r".*", r""]


def compact_variant(rng: random.Random):
    """(bytes, label): a valid compact file of a small random trace, damaged by one of
    issue 20's classes (built section by section with the real writer)."""
    import struct
    import zlib

    import numpy as np

    import tracevis3d
    from tracevis3d.io import compact

    import hostile_cases as hc

    t = tracevis3d.synthetic(rng.randint(20, 400), threads=rng.randint(1, 3), seed=rng.randrange(1000))
    header, blobs = hc._compact_parts(trace=t)

    def put(name, values, zigzag=False, delta=False):
        w = compact._Writer()
        w.ints(name, np.asarray(values, np.int64), delta=delta, zigzag=zigzag)
        w.finish()
        header["sections"] = [w.sections[0] if s["name"] == name else s for s in header["sections"]]
        blobs[name] = w.blobs[0]

    op = rng.choice(["wrap", "raw0", "bomb", "deep", "meta", "flip", "counts", "none"])
    hraw = None
    if op == "wrap":
        k = max(header["n_nodes"], 1)
        v = np.zeros(k, np.int64)
        v[: min(4, k)] = 1 << 62
        v[0] += header["n_edges"]
        put("node_nchild", v)
    elif op == "raw0":
        name = rng.choice([s["name"] for s in header["sections"]])
        bomb = zlib.compress(bytes(rng.choice([1, 8, 64]) << 20), 9)
        for s in header["sections"]:
            if s["name"] == name:
                s.pop("planes", None)
                s.update(raw=0, stored=len(bomb), crc=zlib.crc32(bomb))
        blobs[name] = bomb
        if rng.random() < 0.3:
            hraw = 0
    elif op in ("bomb", "deep"):
        k = rng.randint(10, 30) if op == "bomb" else rng.randint(100_000, 300_000)
        fan = 2 if op == "bomb" else 1
        header.update(n_calls=(2 ** k - 1) if op == "bomb" else k, n_nodes=k, n_edges=fan * (k - 1))
        put("node_func", [0] * k)
        put("node_nchild", [0] + [fan] * (k - 1))
        put("node_children", [1] * (fan * (k - 1)))
        put("roots", [k - 1], zigzag=True)
        put("roots_per_thread", [1] + [0] * (header["n_threads"] - 1))
    elif op == "meta":
        header["meta"]["pile"] = rng.choice([[[]] * 2_000_000, {"k%d" % i: i for i in range(300_000)},
                                             [{"__ndarray__": "meta__x"}] * 1000])
    elif op == "counts":
        header[rng.choice(["n_calls", "n_threads", "n_nodes", "n_edges"])] = rng.choice(
            [0, 1, 2 ** 31, 2 ** 63 - 1, -1, 10 ** 30, "x"])
    raw = json.dumps(header).encode()
    hz = zlib.compress(raw, 9)
    out = bytearray(compact.MAGIC + struct.pack("<IQQ", compact.VERSION, len(hz), len(raw) if hraw is None else hraw)
                    + hz + b"".join(blobs[s["name"]] for s in header["sections"]))
    if op == "flip":
        for _ in range(rng.randint(1, 8)):
            out[rng.randrange(len(compact.MAGIC), len(out))] = rng.randrange(256)
    return bytes(out), f"compact {op}"


#: the output side (issue 68): a save under a file-size limit (a full disk) in each format, a save
#: through a symbolic link, a save onto a FIFO, a native file cut short while it is mapped
OUTPUT_OPS = ("fsize_native", "fsize_compact", "fsize_chrome", "link", "fifo", "map_truncate")


#: the modules of hostile files of the readers (each a ``CASES`` list of (name, factory, expected[, options]))
FORMAT_CASE_MODULES = ("hostile_profiles", "hostile_text_formats", "hostile_perfetto", "hostile_chrome_v8",
                       "hostile_more_formats", "hostile_numbers")

#: the kinds of input `build` draws from (a seed picks one; ``kinds=`` narrows the draw)
KINDS = ("case", "gzip", "native", "damage", "damage", "damage", "compact", "compact", "regex", "cone", "output",
         "format", "format", "name", "structured", "structured", "memray", "memdump", "memlive")

#: the memory captures' kinds (issue 78: tests/support/fuzz_memory.py), read as the memory view reads them
MEMORY_KINDS = ("memray", "memdump", "memlive")


def format_cases() -> list:
    """Every hostile file of the format readers (`FORMAT_CASE_MODULES`), in one list."""
    import importlib

    out = []
    for mod in FORMAT_CASE_MODULES:
        try:
            m = importlib.import_module(mod)
        except ImportError:
            continue
        out += list(getattr(m, "CASES", []))
    return out


#: case modules whose damaged files take code paths (and kernels) that the valid samples of
#: `tracevis3d.warmup_formats` do not: the Perfetto reader's cut packets compile for minutes
#: on an empty cache, which the per-case alarm would report as a hang
WARM_CASE_MODULES = ("hostile_perfetto",)


def warm_damaged_paths(folder: str) -> None:
    """Load each case of `WARM_CASE_MODULES` once (in the worker, before any alarm is set)."""
    import importlib
    import warnings

    import tracevis3d

    p = os.path.join(folder, "warm.bin")
    for mod in WARM_CASE_MODULES:
        for _name, factory, *_rest in importlib.import_module(mod).CASES:
            with open(p, "wb") as f:
                f.write(factory())
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    tracevis3d.load(p)
            except Exception:  # noqa: BLE001 (a warm-up: the cases themselves are judged later)
                pass


def output_case(op: str, n: int, seed: int, folder: str) -> str:
    """Run output case ``op`` in ``folder`` (in the worker); "ok", or what went wrong."""
    import errno

    import numpy as np

    import tracevis3d

    t = tracevis3d.synthetic(n, threads=2, seed=seed)
    for old in os.listdir(folder):
        if old.startswith("out"):
            os.unlink(os.path.join(folder, old))
    if op.startswith("fsize_"):
        fmt = op.split("_", 1)[1]
        p = os.path.join(folder, "out." + {"native": "tv3d.npz", "compact": "tv3c", "chrome": "json"}[fmt])
        with open(p, "wb") as f:
            f.write(b"precious")
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64, hard))
        try:
            tracevis3d.save(t, p, format=fmt)
            return "saved past a 64-byte file-size limit"
        except OSError as e:
            if p not in str(e) or "\n" in str(e) or getattr(e, "errno", None) not in (errno.EFBIG, errno.EIO):
                return f"bad error: {type(e).__name__}: {e}"
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        left = sorted(os.listdir(folder))
        with open(p, "rb") as f:
            if f.read() != b"precious":
                return "the old file was changed"
        return "ok" if [x for x in left if x.startswith("out") or x.startswith(".out")] == [os.path.basename(p)] \
            else f"left behind: {left}"
    if op == "link":
        real = os.path.join(folder, "out_real.tv3d.npz")
        link = os.path.join(folder, "out_link.tv3d.npz")
        with open(real, "wb") as f:
            f.write(b"x")
        os.symlink(os.path.basename(real), link)
        tracevis3d.save(t, link)
        u = tracevis3d.load(real)
        return "ok" if os.path.islink(link) and len(u) == len(t) else "the link was replaced"
    if op == "fifo":
        fifo = os.path.join(folder, "out_fifo")
        os.mkfifo(fifo)
        try:
            tracevis3d.save(t, fifo)
            return "saved onto a FIFO"
        except OSError as e:
            return "ok" if "FIFO" in str(e) and fifo in str(e) else f"bad error: {e}"
    if op == "map_truncate":
        p = os.path.join(folder, "out_map.tv3d.npz")
        tracevis3d.save(t, p)
        from tracevis3d.io.native import load_native

        u = load_native(p, mmap=True)
        os.truncate(p, 10)
        return "ok" if np.array_equal(u.end, t.end) and np.array_equal(u.parent, t.parent) else "values changed"
    return f"unknown output case {op}"


def round_trip(t, folder: str) -> str:
    """What `tracevis3d.load` accepted, `save` writes and `load` reads back the same (issue 68,
    item 3): "ok" or the first difference."""
    import numpy as np

    import tracevis3d
    from tracevis3d.model import ARRAY_DTYPES, STRING_TABLES

    formats = [("native", "roundtrip.tv3d.npz")] + ([("compact", "roundtrip.tv3c")] if len(t) < 5000 else [])
    for fmt, name in formats:  # the compact file too where it is quick (lossless: the same trace back)
        p = os.path.join(folder, name)
        tracevis3d.save(t, p, format=fmt)
        u = tracevis3d.load(p)
        for k in ARRAY_DTYPES:
            a, b = getattr(t, k), getattr(u, k)
            if a.shape != b.shape or not np.array_equal(a, b, equal_nan=a.dtype.kind == "f"):
                return f"round trip ({fmt}): {k} differs"
        for k in STRING_TABLES:
            if list(getattr(t, k)) != list(getattr(u, k)):
                return f"round trip ({fmt}): {k} differs"
    return "ok"


def build(seed: int, kinds=None):
    """(bytes, load options, label) of fuzz input ``seed``, of a kind drawn from ``kinds``
    (default `KINDS`).  Options starting with ``__`` are the worker's: ``__regex`` (search
    the loaded trace for it), ``__cone`` (build its calling-context tree)."""
    sys.path.insert(0, str(HERE))
    import hostile_cases as hc

    rng = random.Random(seed)
    kind = rng.choice(list(kinds or KINDS))
    if kind in MEMORY_KINDS:  # memory captures damaged in their structure, a live peer (fuzz_memory.py)
        import fuzz_memory

        return fuzz_memory.build(rng, kind)
    if kind == "structured":  # the real recordings, parsed and damaged in their structure (fuzz_structured.py)
        import fuzz_structured

        data, label = fuzz_structured.build(rng)
        return data, {}, label
    if kind == "format":  # issue 67: the hostile files of every new reader, cut or flipped at random
        cases = format_cases()
        name, factory, *rest = cases[rng.randrange(len(cases))]
        data = bytearray(factory())
        opts = dict(rest[1]) if len(rest) > 1 and isinstance(rest[1], dict) else {}
        what = "as is"
        if data and rng.random() < 0.5:
            if rng.random() < 0.5:
                del data[rng.randint(1, len(data)):]
                what = "cut"
            else:
                for _ in range(rng.randint(1, 8)):
                    data[rng.randrange(len(data))] = rng.randrange(256)
                what = "flipped"
        return bytes(data), opts, f"format {name} {what}"
    if kind == "name":
        import hostile_names

        label, text, _check = hostile_names.HOSTILE_NAMES[rng.randrange(len(hostile_names.HOSTILE_NAMES))]
        return b"", {"__name": text}, f"name {label}"
    if kind == "output":  # issue 68: the writers and the mapped reader under a hostile file system
        op = rng.choice(OUTPUT_OPS)
        n = rng.randint(50, 3000)
        return b"", {"__output": op, "__n": n, "__seed": rng.randrange(1000)}, f"output {op} n={n}"
    if kind == "compact":
        data, label = compact_variant(rng)
        return data, {}, label
    if kind == "regex":
        pat = rng.choice(_REGEXES)
        names = [rng.choice(["a" * 30 + "b", "x" * 40, "main", "io", "leaf"]) for _ in range(8)]
        evs = [{"ph": "X", "name": nm, "ts": k * 10, "dur": 5, "pid": 1, "tid": 1} for k, nm in enumerate(names)]
        return json.dumps(evs).encode(), {"__regex": pat}, f"regex {pat!r}"
    if kind == "cone":  # one root, children named so that the ids collide under the old unkeyed hash
        n = rng.randint(100, 3000)
        evs = [{"ph": "X", "name": "root", "ts": 0, "dur": 10 * n + 10, "pid": 1, "tid": 1}]
        evs += [{"ph": "X", "name": f"f{k}", "ts": 10 * k + 1, "dur": 5, "pid": 1, "tid": 1} for k in range(n)]
        return json.dumps(evs).encode(), {"__cone": True}, f"cone n={n}"
    if kind == "case":
        name = rng.choice(sorted(hc.CASES))
        n = int(10 ** rng.uniform(2, 5.3))
        data, opts = hc.CASES[name](n)
        return data, opts, f"case {name} n={n}"
    base = json.dumps(_events(rng, rng.randint(1, 300)), separators=(",", ":")).encode()
    if kind == "gzip":
        which = rng.choice(sorted(hc.gzip_variants(b"[]")))
        return hc.gzip_variants(base)[which], {}, f"gzip {which}"
    if kind == "native":
        tamper = rng.choice(hc.NATIVE_TAMPERS[:-2] + ("none",))  # the two bombs run in tests
        return hc.native_bytes(tamper, rng.randint(20, 400)), {}, f"native {tamper}"  # tampers index up to 10
    data = bytearray(base)
    what = []
    for _ in range(rng.randint(1, 4)):
        op = rng.choice(["cut", "flip", "longname", "surrogate", "number", "nest", "comma", "trailing",
                         "args", "dupkey", "phase"])
        what.append(op)
        if op == "cut" and data:
            del data[rng.randint(0, len(data) - 1):]
        elif op == "flip" and data:
            for _ in range(rng.randint(1, 10)):
                data[rng.randrange(len(data))] = rng.randrange(256)
        elif op == "longname":
            data = data.replace(b'"name":"a"', b'"name":"' + rng.choice([b"io", b"queue", b"a", b"<a "])
                                * rng.randint(1, 30000) + b'"', 1)
        elif op == "surrogate":
            data = data.replace(b'"name":"b"', b'"name":"\\ud800x\\udfff"', 1)
        elif op == "number":
            data = data.replace(b'"ts":', b'"ts":' + rng.choice(_EDGES) + b',"x":', 1)
        elif op == "nest":
            d = rng.randint(1, 6000)
            data = data.replace(b'"args":{', b'"args":{"deep":' + b"[" * d + b"]" * d + b",", 1)
        elif op == "comma":
            data = data.replace(b"},{", b"}{", 1)
        elif op == "trailing":
            data += rng.choice([b"[]", b"garbage", b"\x00\x00", b'{"a":1}'])
        elif op == "args":
            data = data.replace(b'"args":{"k"', b'"args":{"k" 1, "q"', 1)
        elif op == "dupkey":
            data = bytearray(b'{"traceEvents":' + bytes(data) + b',"traceEvents":[]}')
        elif op == "phase":
            data = data.replace(b'"ph":"X"', b'"ph":"XX"', 1)
    if rng.random() < 0.2:
        data = bytearray(gzip.compress(bytes(data)))
        what.append("gzip")
    return bytes(data), {}, "damage " + "+".join(what)


_WORKER = r"""
import json, os, resource, signal, sys, warnings
sys.path.insert(0, os.environ["TV3D_REPO"]); sys.path.insert(0, os.environ["TV3D_TESTS"])
warnings.simplefilter("ignore")
import tracevis3d
from tracevis3d import TraceFormatError
import fuzz_hostile as fz

class Hang(Exception):
    pass

def alarm(sig, frame):
    raise Hang()

signal.signal(signal.SIGALRM, alarm)
path = os.environ["TV3D_FUZZ_FILE"]
warm = tracevis3d.synthetic(50, threads=2, seed=1)  # compile (or load) the kernels outside the alarms
tracevis3d.compare(warm, warm, tau=0.5)
from tracevis3d.warmup_formats import load_every_format
load_every_format()  # every reader's kernels, outside the alarms too
fz.warm_damaged_paths(os.path.dirname(path))
kinds = os.environ.get("TV3D_KINDS", "").split()
if not kinds or set(kinds) & set(fz.MEMORY_KINDS):
    import fuzz_memory
    fuzz_memory.warm()  # the memray kernels and the memory layout, outside the alarms too
for seed in range(int(os.environ["TV3D_FIRST"]), int(os.environ["TV3D_LAST"])):
    try:
        data, opts, label = fz.build(seed, os.environ.get("TV3D_KINDS", "").split() or None)
    except Exception as e:  # a bug of the generator, reported as a failure of this seed
        print("DONE", seed, json.dumps([f"the generator failed: {type(e).__name__}: {e}", "build"]), flush=True)
        continue
    with open(path, "wb") as f:
        f.write(data)
    print("START", seed, flush=True)
    signal.alarm(int(os.environ["TV3D_CASE_SECONDS"]))
    regex = opts.pop("__regex", None)
    cone = opts.pop("__cone", False)
    output = opts.pop("__output", None)
    name = opts.pop("__name", None)
    memory = opts.pop("__memory", False)
    live = opts.pop("__live", None)
    try:
        if memory or live is not None:
            import fuzz_memory
            raise fz.Done(fuzz_memory.live_case(data, live) if live is not None else
                          fuzz_memory.memory_case(path, opts))
        if output is not None:
            res = fz.output_case(output, opts["__n"], opts["__seed"], os.path.dirname(path))
            raise fz.Done(res)
        if name is not None:
            from tracevis3d.names import parse_function_name
            parsed = parse_function_name(name)
            raise fz.Done("ok" if isinstance(parsed.display, str) else "no display")
        t = tracevis3d.load(path, **opts)
        t.check()
        if regex is not None:
            from tracevis3d.analysis.search import search_calls
            try:
                search_calls(t, regex)
                res = "ok"
            except ValueError as e:
                res = "error" if "\n" not in str(e) and repr(regex)[:20] in str(e) else "bad refusal: " + str(e)[:300]
        elif cone:
            from tracevis3d.analysis.context import calling_context_tree
            c = calling_context_tree(t)
            res = "ok" if c.probes <= 3 * max(len(t), 16) else f"cone flood: {c.probes} probes for {len(t)} calls"
        else:
            if len(t) and len(t) < 5000:
                tracevis3d.compare(t, t, tau=0.5)
            res = fz.round_trip(t, os.path.dirname(path))
    except fz.Done as d:
        res = str(d)
    except TraceFormatError as e:
        res = "error" if path in str(e) else "error without the file name: " + str(e)[:300]
    except Hang:
        res = "HANG"
    except MemoryError:
        res = "MemoryError"
    except BaseException as e:
        res = f"{type(e).__name__}: {str(e)[:300]}"
    finally:
        signal.alarm(0)
    if res not in ("ok", "error") and os.environ.get("TV3D_FUZZ_SAVE"):  # keep the failing input
        import shutil
        shutil.copyfile(path, os.path.join(os.environ["TV3D_FUZZ_SAVE"], f"seed{seed}.bin"))
    print("DONE", seed, json.dumps([res, label]), flush=True)
"""


def run(first: int, n: int, *, max_gb: float = 2.5, case_seconds: int = 20, verbose=True,
        stats: dict | None = None, kinds=None, save_dir: str | None = None) -> list:
    """Fuzz seeds [first, first + n) (inputs of ``kinds`` only, when given: `build`); returns
    the failures as (seed, label, outcome) and counts the outcomes in ``stats`` (ok, error,
    failed).  ``save_dir``: each failing input is copied there as ``seed<N>.bin`` (a
    structured seed's input depends on the recordings present, so the seed alone may not
    rebuild it later)."""
    failures = []
    stats = {} if stats is None else stats
    seed = first
    last = first + n
    with tempfile.TemporaryDirectory(prefix="tv3d-fuzz-") as d:
        while seed < last:
            env = dict(os.environ, TV3D_REPO=str(REPO), TV3D_TESTS=str(HERE), TV3D_FIRST=str(seed),
                       TV3D_LAST=str(last), TV3D_CASE_SECONDS=str(case_seconds),
                       TV3D_FUZZ_FILE=str(pathlib.Path(d) / "input.bin"), TV3D_KINDS=" ".join(kinds or ()),
                       TV3D_FUZZ_SAVE=str(save_dir or ""))
            lim = int(max_gb * (1 << 30))
            p = subprocess.run([sys.executable, "-c", _WORKER], env=env, capture_output=True, text=True,
                               preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (lim, lim)))
            started = None
            last_done = seed - 1
            for line in p.stdout.splitlines():
                if line.startswith("START "):
                    started = int(line.split()[1])
                elif line.startswith("DONE "):
                    _, s, rest = line.split(" ", 2)
                    last_done = int(s)
                    res, label = json.loads(rest)
                    key = res if res in ("ok", "error") else "failed"
                    stats[key] = stats.get(key, 0) + 1
                    if res not in ("ok", "error"):
                        failures.append((int(s), label, res))
                        if verbose:
                            print(f"FAIL seed {s}: {label}: {res}", flush=True)
                    started = None
            if started is None and last_done >= last - 1:
                break  # the worker finished every seed
            if started is None:  # it died between two seeds
                started = last_done + 1
            # the worker died inside ``started``: a crash (or the address-space limit)
            if save_dir:  # the input it died on is still in the case file
                import shutil

                shutil.copyfile(pathlib.Path(d) / "input.bin", pathlib.Path(save_dir) / f"seed{started}.bin")
            _, _, label = build(started, kinds)
            stats["failed"] = stats.get("failed", 0) + 1
            failures.append((started, label, f"worker died (exit {p.returncode}): {p.stderr[-300:]}"))
            if verbose:
                print(f"FAIL seed {started}: {label}: worker died, exit {p.returncode}", flush=True)
            seed = started + 1
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=500)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--max-gb", type=float, default=2.5)
    ap.add_argument("--case-seconds", type=int, default=20)
    ap.add_argument("--kinds", nargs="*", choices=sorted(set(KINDS)), help="draw only these kinds of input")
    ap.add_argument("--save", metavar="DIR", help="copy each failing input into DIR (seed<N>.bin)")
    a = ap.parse_args()
    stats: dict = {}
    if a.save:
        os.makedirs(a.save, exist_ok=True)
    failures = run(a.first, a.seeds, max_gb=a.max_gb, case_seconds=a.case_seconds, stats=stats, kinds=a.kinds,
                   save_dir=a.save)
    print(f"{a.seeds} seeds from {a.first}: {len(failures)} failures; outcomes {stats}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
