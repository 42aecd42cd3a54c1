"""Real programs recorded with ``python -m memray run`` for the memory-view tests: a pydoc run,
a JSON-heavy program and a thread pool (`record`), and the captures the tests share
(`CAPTURES`, `recorded`: made once per test session in its temporary folder, whichever test
module asks first).  A missing memray skips the tests that need it."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

JSON_PROGRAM = textwrap.dedent('''
    import json, random
    random.seed(7)
    kept = []
    def record(i):
        return {"id": i, "name": "user%d" % i, "tags": ["t%d" % (i % 13), "x" * (i % 40)],
                "scores": [random.random() for _ in range(i % 30)], "nested": {"a": i, "b": [i] * (i % 7)}}
    def batch(n):
        rows = [record(i) for i in range(n)]
        text = json.dumps(rows, indent=1, sort_keys=True)
        back = json.loads(text)
        return text, back
    for round_ in range(6):
        text, back = batch(2000 + 800 * round_)
        if round_ % 3 == 0:
            kept.append(back)
        compact = json.dumps(back, separators=(",", ":"))
        del text, compact
    print(len(kept))
''')

POOL_PROGRAM = textwrap.dedent('''
    import hashlib, threading
    from concurrent.futures import ThreadPoolExecutor
    cache = {}
    lock = threading.Lock()
    def chunk(i):
        blob = bytes(range(256)) * (200 + 40 * (i % 9))
        parts = [blob[k:k + 1024] for k in range(0, len(blob), 1024)]
        digests = [hashlib.sha256(p).hexdigest() for p in parts]
        table = {d: len(p) for d, p in zip(digests, parts)}
        if i % 4 == 0:
            with lock:
                cache[i] = table
        return sum(table.values())
    with ThreadPoolExecutor(6) as pool:
        print(sum(pool.map(chunk, range(120))))
''')

#: JSON round trips of a document nested 110 levels deep, most of its records at the bottom:
#: json's pure-Python encoder (indent) recurses one generator per level and spends most of its
#: time 110+ levels deep; each round holds more memory than the last
DEEP_JSON_PROGRAM = textwrap.dedent('''
    import json, random
    random.seed(7)

    def leaf(i):
        return {"id": i, "name": "user%d" % i, "tags": ["t%d" % (i % 13), "x" * (i % 40)],
                "scores": [random.random() for _ in range(i % 30)]}

    def nest(depth, fan):
        if depth == 0:
            return [leaf(i) for i in range(fan)]
        return {"level": depth, "items": [leaf(depth)], "child": nest(depth - 1, fan)}

    def encode(doc):
        return json.dumps(doc, indent=1, sort_keys=True)

    def decode(text):
        return json.loads(text)

    def round_trip(depth, fan):
        doc = nest(depth, fan)
        text = encode(doc)
        return text, decode(text)

    kept = []
    for r in range(4):
        text, back = round_trip(110, 500 + 150 * r)
        if r % 3 == 0:
            kept.append(back)
        compact = json.dumps(back, separators=(",", ":"))
        del text, compact
    print(len(kept))
''')

#: the program of the fuzzer's seed captures (tests/data/memray/, `record_fuzz_seeds`): small (20 to
#: 100 kB), yet every record type the reader reads: three named threads, recursion up to 12 frames,
#: frees, JSON text, code objects of several files
SEED_PROGRAM = textwrap.dedent('''
    import json, threading
    def rec(n, acc):
        if n == 0:
            acc.append([bytearray(100 + i) for i in range(20)])
            return
        rec(n - 1, acc)
    def work(k):
        acc = []
        for i in range(30):
            rec(5 + (i % 7), acc)
            s = json.dumps({"k": k, "v": list(range(i))})
            if i % 3:
                acc.pop()
        return len(s)
    ts = [threading.Thread(target=work, args=(k,), name=f"w{k}") for k in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    keep = [work(9) for _ in range(2)]
''')

#: the fuzzer's seed captures: file name -> memray run options
FUZZ_SEEDS = {"seed.bin": [], "seed-raw.bin": ["--no-compress"], "seed-pyalloc.bin": ["--trace-python-allocators"],
              "seed-native.bin": ["--native"], "seed-aggregate.bin": ["--aggregate"]}

#: name -> (memray run arguments after ``-o CAPTURE``)
PROGRAMS = {
    "seed": ["seed_program.py"],
    "pydoc": ["-m", "pydoc", "-w", "email.message"],
    "json": ["json_heavy.py"],
    "pool": ["thread_pool.py"],
}


#: the captures the tests share: name -> (program of `PROGRAMS`, memray run options)
CAPTURES = {"pydoc": ("pydoc", ["--trace-python-allocators"]), "json": ("json", []),
            "json-raw": ("json", ["--no-compress"]), "pool": ("pool", ["--trace-python-allocators"]),
            "pool-native": ("pool", ["--native"])}


def memray_available() -> bool:
    try:
        import memray  # noqa: F401
    except ImportError:
        return False
    return True


def record(name: str, folder: str, extra=()) -> str:
    """Record program ``name`` of `PROGRAMS` into ``folder``; the capture's path."""
    if not memray_available():
        pytest.skip("memray is not installed (pip install memray): the memory view's captures need it")
    os.makedirs(folder, exist_ok=True)
    for fname, text in (("json_heavy.py", JSON_PROGRAM), ("thread_pool.py", POOL_PROGRAM),
                        ("seed_program.py", SEED_PROGRAM)):
        with open(os.path.join(folder, fname), "w") as f:
            f.write(text)
    out = os.path.join(folder, f"{name}.bin")
    if not os.path.exists(out):
        cmd = [sys.executable, "-m", "memray", "run", "-q", "-f", *extra, "-o", out, *PROGRAMS[name]]
        r = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=300)
        if r.returncode != 0 or not os.path.exists(out):
            if os.path.exists(out):
                os.remove(out)  # not left for a later caller to take as a capture
            raise RuntimeError(f"memray run failed ({r.returncode}): {r.stderr[-2000:]}")
    return out


def record_fuzz_seeds(folder: str) -> list:
    """`SEED_PROGRAM` recorded once per `FUZZ_SEEDS` entry into ``folder`` (the shipped
    tests/data/memray/ was made so: ``python -c "import memray_captures as m;
    m.record_fuzz_seeds('tests/data/memray')"`` from tests/support); the paths."""
    out = []
    folder = os.path.abspath(folder)
    for fname, extra in FUZZ_SEEDS.items():
        work = os.path.join(folder, "recording")
        path = record("seed", work, extra)
        target = os.path.join(folder, fname)
        os.replace(path, target)
        out.append(target)
        shutil.rmtree(work)
    return out


def recorded(tmp_path_factory, names) -> dict:
    """{name: capture path} of the `CAPTURES` named, each recorded once per test session into
    its own folder of the session's temporary folder (a later caller finds the file there)."""
    base = tmp_path_factory.getbasetemp()
    return {name: record(CAPTURES[name][0], str(base / f"memray-{name}"), CAPTURES[name][1]) for name in names}


def record_memory_and_calls(folder: str, spy: str, rate: int = 500) -> tuple:
    """`DEEP_JSON_PROGRAM` run by ``memray run`` and sampled by py-spy (``spy``) in the same run
    (one process; py-spy reads it from outside, so no profile hook is shared): (capture, calls)
    paths in ``folder``; a RuntimeError naming py-spy's complaint when it could not sample."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "deep_json.py"), "w") as f:
        f.write(DEEP_JSON_PROGRAM)
    capture, calls = os.path.join(folder, "run.bin"), os.path.join(folder, "calls.json")
    r = subprocess.run([spy, "record", "--format", "chrometrace", "-r", str(rate), "-o", calls, "--", sys.executable,
                        "-m", "memray", "run", "-q", "-f", "--trace-python-allocators", "-o", capture, "deep_json.py"],
                       cwd=folder, capture_output=True, text=True, timeout=400)
    if r.returncode != 0 or not os.path.exists(calls) or not os.path.exists(capture):
        raise RuntimeError(f"py-spy could not sample here (ptrace?): {r.stderr.strip()[-300:]}")
    return capture, calls


#: `record_memory_and_calls`' pair, recorded once on a quiet machine and committed (issue 80: a
#: figure test reads a committed recording; py-spy's samples of a run made during a test on a
#: busy machine left `deep_json.round_trip` unnamed in the figure): memray's capture and
#: py-spy's Chrome trace of the same run of `DEEP_JSON_PROGRAM`, both gzipped
COMMITTED_MEMORY_AND_CALLS = ("memory_calls_run.bin.gz", "memory_calls_calls.json.gz")


def committed_memory_and_calls() -> tuple:
    """(capture, calls) paths of `COMMITTED_MEMORY_AND_CALLS` in tests/data/recorded."""
    folder = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "recorded")
    return tuple(os.path.join(folder, name) for name in COMMITTED_MEMORY_AND_CALLS)
