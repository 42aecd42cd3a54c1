"""The Python programs of the VizTracer suite that need only the standard library (and numba,
which the project's .venv has), and the generated inputs (documents) of the suite.

Each ``*_PROGRAM`` is a program's source text, written into the recording's work folder and
run there (`tools/recorders/suite.py`); tests/support/realtraces.py records some of them for the tests.
"""
from __future__ import annotations

import json
import os
import textwrap

from .common import write_text as _write


JSON_TOOL_LEVELS = 105


def deep_json_document(levels: int = JSON_TOOL_LEVELS) -> str:
    """A JSON document of ``levels`` nested objects (a "level" key every tenth one).

    ``json.tool`` indents its output, which makes ``json`` use its pure-Python encoder: one
    ``_iterencode_dict`` generator per nesting level, and every chunk is passed up through
    all of them (``yield from``), so the trace is ``levels`` + ~13 deep and has about
    ``4 · levels²`` calls (≈ 46k at 105 levels).
    """
    d: object = {"leaf": [1, 2.5, "x", None, True]}
    for level in range(levels, 0, -1):
        d = {"child": d} if level % 10 else {"level": level, "child": d}
    return json.dumps(d)


def rst_document(sections: int = 8, seed: int = 3) -> str:
    """A sizeable reStructuredText document with the constructs docutils spends its time on:
    nested sections, inline markup, bullet/enumerated/definition/field lists, simple and grid
    tables, literal and ``code`` blocks, auto-numbered footnotes, citations, links, notes."""
    import random

    rng = random.Random(seed)
    words = ("trace call stack thread lock queue render icicle bundle kernel layout scene camera "
             "depth wait release parse encode module package import function frame sample").split()

    def sentence(k=12):
        ws = [rng.choice(words) for _ in range(k)]
        i = rng.randrange(k)
        ws[i] = rng.choice([f"*{ws[i]}*", f"**{ws[i]}**", f"``{ws[i]}``", f"`{ws[i]}`_"])
        return " ".join(ws).capitalize() + "."

    def para(n=4):
        return textwrap.fill(" ".join(sentence() for _ in range(n)), 78)

    out = ["=" * 40, "A generated manual", "=" * 40, "", ".. contents::", "   :depth: 2", "",
           ".. sectnum::", ""]
    fn = 0
    for s in range(sections):
        title = f"Chapter {s}: {rng.choice(words)} and {rng.choice(words)}"
        out += [title, "=" * len(title), "", para(), ""]
        for sub in range(3):
            t2 = f"Part {s}.{sub} {rng.choice(words)}"
            out += [t2, "-" * len(t2), "", para(3) + f" See the note [#]_ and [CIT{s}]_.", ""]
            fn += 1
            out += [f".. [#] Footnote {fn}: {sentence(8)}", ""]
            kind = (s + sub) % 4
            if kind == 0:
                out += [f"- {sentence(6)}" for _ in range(5)] + [""]
                out += [f"#. {sentence(5)}" for _ in range(4)] + [""]
            elif kind == 1:
                out += ["=========  =========  =======", "Name       Calls      Depth",
                        "=========  =========  ======="]
                out += [f"{rng.choice(words):<9}  {rng.randint(1, 99999):<9}  {rng.randint(1, 120)}"
                        for _ in range(6)]
                out += ["=========  =========  =======", ""]
            elif kind == 2:
                out += ["+------------+------------+", "| Key        | Value      |",
                        "+============+============+"]
                for _ in range(4):
                    out += [f"| {rng.choice(words):<10} | {rng.randint(0, 10**6):<10} |",
                            "+------------+------------+"]
                out += [""]
                out += [f"{rng.choice(words)}\n    {sentence(7)}" for _ in range(4)] + [""]
            else:
                out += ["Example::", ""]
                out += [f"    def f{s}_{sub}(x):", f"        return [y * {s} for y in range(x)]", ""]
                out += [".. code::", "", f"   trace = load('run{s}.json')", "   trace.check()", ""]
                out += [f":{w}: {sentence(4)}" for w in rng.sample(words, 3)] + [""]
                out += [".. note::", "", "   " + sentence(9), ""]
    for s in range(sections):
        out += [f".. [CIT{s}] Citation {s}: {sentence(6)}"]
    out += [""] + [f".. _{w}: https://example.org/{w}" for w in sorted(set(words))] + [""]
    return "\n".join(out)


ASYNC_PROGRAM = '''\
"""asyncio: five worker tasks on a queue, short bursts of json and difflib work."""
import asyncio
import difflib
import json
import random


async def fetch(i):
    await asyncio.sleep(0.001 * (i % 5))
    return json.loads(json.dumps({"id": i, "items": [random.random() for _ in range(200)]}))


async def worker(q):
    while True:
        i = await q.get()
        if i is None:
            q.task_done()
            return
        d = await fetch(i)
        a = [str(x) for x in d["items"]]
        list(difflib.ndiff(a[:60], sorted(a[:60])))
        q.task_done()


async def main():
    q = asyncio.Queue()
    tasks = [asyncio.create_task(worker(q)) for _ in range(5)]
    for i in range(120):
        await q.put(i)
    for _ in tasks:
        await q.put(None)
    await asyncio.gather(*tasks)


asyncio.run(main())
'''


NUMBA_JIT_PROGRAM = '''\
"""Three threads each jit-compile their own numba function: numba's compiler (bytecode
analysis, type inference, lowering to LLVM) runs behind its global compiler lock (an RLock
its holder takes and releases again and again), so the threads wait on one another: who
waits on whom, for how long, on a real library's lock."""
import sys
import threading

import numpy as np
from numba import njit


def make(k):
    @njit(cache=False)
    def kernel(a, b):
        s = 0.0
        for i in range(a.shape[0]):
            s += a[i] * b[i] + k
        return s

    return kernel


def work(k):
    a = np.arange(100.0 + k)
    return make(k)(a, a[::-1])


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    threads = [threading.Thread(target=work, args=(k,), name=f"jit-{k}") for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
'''


AST_POOL_PROGRAM = '''\
"""Parse, walk and unparse stdlib modules with ast in a thread pool of 3 workers: a recursion
through a NodeVisitor's visit > generic_visit, and the unparser's own."""
import argparse
import ast
import difflib
import email.message
import inspect
import json.decoder
import textwrap
from concurrent.futures import ThreadPoolExecutor


class Counter(ast.NodeVisitor):
    def __init__(self):
        self.n = {}

    def generic_visit(self, node):
        self.n[type(node).__name__] = self.n.get(type(node).__name__, 0) + 1
        super().generic_visit(node)


def work(mod):
    tree = ast.parse(inspect.getsource(mod))
    counter = Counter()
    counter.visit(tree)
    return len(ast.unparse(tree)), sum(counter.n.values())


if __name__ == "__main__":
    with ThreadPoolExecutor(3) as ex:
        print(list(ex.map(work, [json.decoder, textwrap, difflib, email.message, argparse])))
'''


XML_IO_POOL_PROGRAM = '''\
\"\"\"Nested XML documents built, written, compressed, archived and parsed back in a thread pool
of 4 workers, the main thread logging through a QueueHandler to a listener thread that writes
its file: minidom's writer recurses once per element level (a tree 90 levels deep), the
workers share one zip archive behind a lock and wait on a child process each (6 threads,
I/O and waits).\"\"\"
import gzip
import logging
import logging.handlers
import os
import queue
import subprocess
import sys
import threading
import xml.dom.minidom as minidom
import xml.etree.ElementTree as ET
import zipfile
from concurrent.futures import ThreadPoolExecutor

LOG = logging.getLogger("xmlio")
ARCHIVE_LOCK = threading.Lock()


def build(doc, parent, depth, width, seed):
    for k in range(width if depth < 3 else 1):
        el = doc.createElement(f"n{depth}")
        el.setAttribute("k", str((seed * 31 + depth * 7 + k) % 97))
        if depth % 5 == 0:
            el.appendChild(doc.createTextNode(f"text {seed} {depth} {k}"))
        parent.appendChild(el)
        if depth < DEPTH:
            build(doc, el, depth + 1, width, seed + k)


def walk(el, depth=0):
    n, deepest = 1, depth
    for child in el:
        a, b = walk(child, depth + 1)
        n, deepest = n + a, max(deepest, b)
    return n, deepest


def work(seed, folder):
    doc = minidom.Document()
    root = doc.createElement("root")
    doc.appendChild(root)
    build(doc, root, 0, 4, seed)
    text = doc.toprettyxml(indent=" ")
    path = os.path.join(folder, f"doc{seed}.xml.gz")
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write(text)
    with gzip.open(path, "rt", encoding="utf-8") as f:
        tree = ET.parse(f)
    n, deepest = walk(tree.getroot())
    with ARCHIVE_LOCK:
        with zipfile.ZipFile(os.path.join(folder, "all.zip"), "a") as z:
            z.write(path, os.path.basename(path))
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    LOG.info("document %d: %d elements, %d deep", seed, n, deepest)
    return n


if __name__ == "__main__":
    DEPTH = int(sys.argv[1]) if len(sys.argv) > 1 else 90
    docs = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    folder = os.path.abspath("xml_io_out")
    os.makedirs(folder, exist_ok=True)
    q = queue.Queue()
    listener = logging.handlers.QueueListener(q, logging.FileHandler(os.path.join(folder, "run.log")))
    LOG.addHandler(logging.handlers.QueueHandler(q))
    LOG.setLevel(logging.INFO)
    listener.start()
    with ThreadPoolExecutor(4) as ex:
        print(sum(ex.map(work, range(docs), [folder] * docs)))
    listener.stop()
'''


SPAWN_POOL_PROGRAM = '''\
"""difflib, json and textwrap work in a spawn-started process pool of 3 workers, each with a
heartbeat thread; the parent waits on the results and writes a report."""
import difflib
import json
import multiprocessing as mp
import textwrap
import threading
import time


def beat(stop):
    while not stop.wait(0.01):
        time.sleep(0.001)


def task(seed):
    stop = threading.Event()
    t = threading.Thread(target=beat, args=(stop,), name=f"heartbeat-{seed}")
    t.start()
    a = [f"line {i} {seed * i % 17}" for i in range(400)]
    b = [f"line {i} {seed * i % 19}" for i in range(400)]
    diff = list(difflib.unified_diff(a, b, lineterm=""))
    doc = json.dumps({"seed": seed, "diff": diff, "nested": [[[[i] for i in range(5)]] for _ in range(50)]})
    text = textwrap.fill(doc, 60)
    stop.set()
    t.join()
    return len(text)


if __name__ == "__main__":
    with mp.get_context("spawn").Pool(3) as pool:
        print(sum(pool.map(task, range(9))))
'''


CROWD_POOL_PROGRAM = '''\
"""48 worker threads at once (a crowded thread view, as SyncTrace's 43-thread Firefox case):
rounds of stdlib work (difflib, json, re, csv, email, decimal, fractions, statistics,
textwrap) separated by a threading.Barrier every worker waits at, results handed through a
queue to two writer threads that take a shared lock."""
import csv
import decimal
import difflib
import email
import fractions
import io
import json
import queue
import re
import statistics
import sys
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor

WORKERS = int(sys.argv[1]) if len(sys.argv) > 1 else 48
ROUNDS = 3
barrier = threading.Barrier(WORKERS)
results = queue.Queue()
lock = threading.Lock()
totals = {}

MAIL = "From: a@example.org\\nTo: b@example.org\\nSubject: round {r}\\n\\nbody {k} " + "word " * 40


def task(k, r):
    kind = (k + r) % 6
    if kind == 0:
        a = [f"line {i} {i * k % 7}" for i in range(60)]
        b = [f"line {i} {i * (k + 1) % 7}" for i in range(60)]
        return len(list(difflib.unified_diff(a, b)))
    if kind == 1:
        doc = {"k": k, "items": [{"i": i, "v": [i] * 5} for i in range(80)]}
        return len(json.loads(json.dumps(doc, indent=1))["items"])
    if kind == 2:
        rows = list(csv.reader(io.StringIO("\\n".join(f"{i},{i * k},x{i}" for i in range(150)))))
        return sum(len(re.findall(r"\\d+", ",".join(row))) for row in rows)
    if kind == 3:
        msg = email.message_from_string(MAIL.format(r=r, k=k))
        return len(textwrap.wrap(msg.get_payload(), 30))
    if kind == 4:
        with decimal.localcontext() as ctx:
            ctx.prec = 40
            return int(sum(decimal.Decimal(1) / decimal.Decimal(i) for i in range(1, 300)))
    return float(statistics.fmean(fractions.Fraction(i, k + 1) for i in range(1, 120)))


def worker(k):
    for r in range(ROUNDS):
        for j in range(4):
            results.put((k, r, task(k + j, r)))
        barrier.wait()
    return k


def writer():
    while True:
        item = results.get()
        if item is None:
            return
        with lock:
            totals[item[0]] = totals.get(item[0], 0) + 1


writers = [threading.Thread(target=writer, name=f"writer{i}") for i in range(2)]
for t in writers:
    t.start()
with ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="crowd") as pool:
    print(sum(pool.map(worker, range(WORKERS))))
for _ in writers:
    results.put(None)
for t in writers:
    t.join()
print(len(totals))
'''


DEEP_RECURSION_PROGRAM = '''\
"""Three threads that build lists nested 300, 600 and 900 deep, round-trip them through json
and walk them recursively through a generator expression (walk > <genexpr> > walk: 2,700
levels): a recursive descent through two functions, as parsers and visitors do."""
import json
import sys
import threading

sys.setrecursionlimit(5000)


def nest(n):
    return [nest(n - 1)] if n else []


def walk(x):
    return 1 + sum(walk(y) for y in x)


def work(n):
    doc = nest(n)
    json.loads(json.dumps(doc))
    for _ in range(3):
        walk(doc)


threads = [threading.Thread(target=work, args=(n,), name=f"deep{n}") for n in (300, 600, 900)]
for t in threads:
    t.start()
for t in threads:
    t.join()
'''


def docutils_pool_documents(workdir: str, n: int = 4, sections: int = 3) -> list:
    """``n`` generated documents (different seeds) for `DOCUTILS_POOL_PROGRAM`; their paths."""
    return [_write(os.path.join(workdir, f"doc{k}.rst"), rst_document(sections, seed=11 + k)) for k in range(n)]
