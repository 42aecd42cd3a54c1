#!/usr/bin/env python3
"""Record a suite of REAL execution traces (VizTracer, py-spy) of real programs.

    .venv/bin/python tools/record_traces.py                    # all traces -> build/traces/
    .venv/bin/python tools/record_traces.py --only json_tool,threads --force
    .venv/bin/python tools/record_traces.py --out /tmp/traces --list

The suite (the names are fixed: benchmarks and figures refer to them):

==============  ===========================================================================
json_tool       ``python -m json.tool`` on a generated JSON document nested 105 levels deep:
                the pure-Python encoder (``indent`` set) recurses one generator per level,
                so the trace is 100+ levels deep.
pydoc           ``python -m pydoc -w email.message``: the import machinery of a package with
                many submodules, then pydoc's HTML renderer.
unittest        ``python -m unittest`` on real stdlib test modules (CPython's ``test``
                package: test_csv, test_textwrap, test_shlex).
docutils        docutils' command line (``python -m docutils``) on a generated
                reStructuredText document: sections, lists, tables, literal blocks, footnotes.
networkx        a graph workload: small-world graph, shortest paths, PageRank (networkx's
                pure-Python one: the trace venv has no scipy), eigenvector centrality,
                Louvain communities, betweenness, minimum spanning tree.
sympy           symbolic computation (import, expand, factor, a rational integral, a
                determinant, solving a cubic) sized to about a million calls; VizTracer's buffer is made big enough that
                nothing is dropped, and the table says whether anything was.
docutils_b      the same docutils command on a shorter document (3 chapters, another seed):
                the B run of a comparison with ``docutils``.
docutils_pool   docutils in a ``ThreadPoolExecutor`` of 4 workers, each turning its own
                generated document into HTML (5 threads, 100+ levels in every worker).
networkx_b      the networkx workload on a larger graph (450 nodes): the B run of a
                comparison with ``networkx``.
sympy_pool      sympy in a ``ThreadPoolExecutor`` of 3 workers (expand/factor, an integral,
                a determinant and a cubic in parallel): deep and multi-threaded.
mixed_pool      a pool of 6 workers running unlike tasks at once (networkx graphs, sympy
                algebra, docutils documents, difflib and json), and a consumer thread
                behind a lock: 8 threads that import, wait on each other's import locks and
                work in different libraries; 2M calls, 116 levels.
mixed_pool_b    the same program run again: the pool hands its tasks to other workers (the
                B run of a comparison with ``mixed_pool``).
black_pool      black formatting four stdlib modules in a thread pool of 4 workers (black built
                from source: its wheel is compiled with mypyc); **black_pool_b** five modules.
jinja_procs     jinja2 templates with pygments-highlighted code in a ProcessPoolExecutor of 3
                forked workers (VizTracer follows them: 4 processes, 6 threads).
deep_recursion  three threads that recurse 300, 600 and 900 deep through two functions
                (walk > <genexpr> > walk) and through json: 2,700 levels, 24k calls.
numba_jit       three threads each jit-compiling a numba function: numba's compiler behind its
                global compiler lock, so two threads wait while the third compiles (4 threads,
                ~10^6 calls, lock waits on a real library's lock).
pygments_cython Pygments highlighting four stdlib modules (Python, C and HTML lexers, the HTML
                formatter) in a pool of 4 workers while a fifth thread runs Cython's compiler on a
                small ``.pyx``: 2.4M calls, 6 threads, Cython's pipeline ~100 levels deep;
                **pygments_cython_b** nine sources (the B run of a comparison).
jedi_lark_sql   jedi completing and inferring names in three stdlib modules' sources, lark's
                Earley and LALR parsers on nested expressions and SQLAlchemy's ORM on SQLite, in a
                pool of 5 workers (7 threads: jedi's subprocess reader too; ~4 M calls, ~3,000
                levels); **jedi_lark_sql_b** two jedi tasks (the B run of a comparison).
crowd_pool      48 worker threads at once (SyncTrace's Firefox case has 43): rounds of stdlib work
                (difflib, json, csv and re, email, decimal, fractions) between barriers every worker
                waits at, results through a queue to two writer threads behind a lock (51 threads);
                **crowd_pool_b** 32 workers (the B run of a comparison).
markdown_pool   Markdown to HTML (python-markdown with tables, fenced code and a table of contents),
                PyYAML dumping and loading nested documents (its pure-Python Dumper and Loader) and rich
                rendering tables and highlighted code, in a pool of 4 workers, with a collector thread
                taking the results from a bounded queue behind a lock (6 threads, ~1.5M calls, ~150
                levels: yaml's recursive composer); **markdown_pool_b** another seed (the tasks in
                another order: the B run of a comparison).
pytest_flask    pytest running a Flask shop's tests: parametrized requests through Flask's test
                client (routing, Jinja templates, JSON), fixtures, one test sending requests from
                a pool of four shopper threads; pluggy's hooks and assertion rewriting around them
                (1.5 M calls, 5 threads, ~130 levels).
ast_pool        the standard library's ``ast`` in a thread pool of 3 workers: each parses a stdlib
                module's source (``inspect.getsource``), walks it with a ``NodeVisitor``
                (``visit › generic_visit``: a recursion through three functions, 50-70 levels)
                and unparses it (``_Unparser``'s own recursion); 4 threads, 70 levels.
xml_io_pool     nested XML (minidom, 90 levels) built, pretty-printed, gzipped, archived in a shared
                zip behind a lock and parsed back with ElementTree by a thread pool of 4 workers,
                each waiting on a child process; the main thread logs through a QueueHandler to
                a listener thread that writes the log file (6 threads, I/O and waits);
                **xml_io_pool_b** 10 documents.
spawn_pool      difflib, json and textwrap work in a ``multiprocessing`` pool started with "spawn"
                (3 worker processes, each named "python -c", each with a heartbeat thread per
                task): 16 threads in 4 processes, 35 levels.
async_tasks     an asyncio program recorded with ``--log_async``: five worker tasks (a lane
                each) that await a queue and do short bursts of json and difflib work,
                each task hundreds of resumptions.
hypothesis_pool hypothesis's property tests (nested lists of dicts, recursive strategies) run
                from a pool of 4 threads, recorded with a buffer (``--tracer_entries``) far too small
                on purpose: VizTracer keeps only the calls that end last and writes
                ``viztracer_metadata.overflow``, so each worker's early part is hollow (its long outer
                calls only); 5 threads, ~1M calls kept.
threads         ``examples/threads_pipeline.py`` under VizTracer (all five threads).
pyspy_threads   the same program sampled by py-spy (``record --format chrometrace --threads
                --idle``), per-thread stacks with thread names in the root frames.
==============  ===========================================================================

VizTracer runs with its defaults (no ``--ignore_frozen``, no ``--ignore_c_function``: real users
don't pass them, and the import machinery and C calls are part of what the figures must cope
with), except ``--tracer_entries`` (buffer size) and ``--quiet``.

Interpreters.  The stdlib traces and ``threads`` run under the interpreter this script runs
with (the project's .venv).  The third-party programs (docutils, networkx, sympy, black, jinja2,
pygments, py-spy) run
in a venv of their own, ``build/trace-venv``, created on first need from
``tools/trace-requirements.txt`` (pinned; re-installed when that file changes).  None of
them is a dependency of the project.

Output: ``<out>/<name>.json`` (Chrome Trace Event JSON) and ``<out>/<name>.record.json``
(command, seconds to record, calls, depth, threads, thread names, whether VizTracer's
buffer overflowed); generated inputs (documents, workload scripts) go to
``<out>/inputs/<name>-input/``, which is also the working directory of the recording.  A trace
already there is not recorded again unless ``--force``.
Prints one table at the end.  Exit status 1 if a trace failed to record.
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(REPO, "build", "traces")
TRACE_VENV = os.path.join(REPO, "build", "trace-venv")
TRACE_REQUIREMENTS = os.path.join(REPO, "tools", "trace-requirements.txt")
#: JAX's profiler (`jax.profiler.trace`): a venv of its own, ~600 MB, made only when a JAX trace is asked for
JAX_VENV = os.path.join(REPO, "build", "jax-venv")
JAX_REQUIREMENTS = os.path.join(REPO, "tools", "jax-requirements.txt")
TORCH_VENV = os.path.join(REPO, "build", "torch-venv")
TORCH_REQUIREMENTS = os.path.join(REPO, "tools", "torch-requirements.txt")
THREADS_EXAMPLE = os.path.join(REPO, "examples", "threads_pipeline.py")
TIMEOUT = 900  # seconds per recording

# --------------------------------------------------------------------------- programs
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


NETWORKX_PROGRAM = '''\
"""A networkx workload: build a weighted small-world graph and analyse it."""
import sys

import networkx as nx
from networkx.algorithms import community
from networkx.algorithms.link_analysis import pagerank_alg

N = int(sys.argv[1]) if len(sys.argv) > 1 else 300
G = nx.connected_watts_strogatz_graph(N, 6, 0.1, seed=7)
for u, v in G.edges:
    G[u][v]["weight"] = 1 + (u * v) % 5
dist = dict(nx.single_source_dijkstra_path_length(G, 0))
paths = [nx.shortest_path(G, 0, t, weight="weight") for t in range(1, N, 30)]
# PageRank in networkx's own pure-Python implementation (nx.pagerank needs scipy)
pr = pagerank_alg._pagerank_python(G, alpha=0.85)
ev = nx.eigenvector_centrality(G, max_iter=500, tol=1e-4)
comms = community.louvain_communities(G, seed=1)
bc = nx.betweenness_centrality(G, k=20, seed=1)
mst = nx.minimum_spanning_tree(G)
cl = nx.average_clustering(G)
print(f"networkx: {G.number_of_nodes()} nodes, {G.number_of_edges()} edges, "
      f"{len(comms)} communities, top pagerank {max(pr.values()):.4f}, "
      f"MST weight {mst.size(weight='weight')}, clustering {cl:.3f}")
'''

SYMPY_PROGRAM = '''\
"""A sympy workload: expand, factor, a rational integral, a determinant, a cubic's roots."""
from sympy import Matrix, expand, factor, integrate, solve, symbols

x, y, z = symbols("x y z")
e = expand((x + y + z + 1) ** 5)
f = factor(e)
i = integrate(1 / (x ** 3 + 1), x)
M = Matrix(3, 3, lambda r, c: (x + r) ** c + y * c)
d = factor(M.det())
roots = solve(x ** 3 - 6 * x ** 2 + 11 * x - 6, x)
print("sympy:", len(e.args), "terms;", f == (x + y + z + 1) ** 5, ";", i, ";", d, ";", roots)
'''


DOCUTILS_POOL_PROGRAM = '''\
"""docutils in a thread pool: each worker turns its own reStructuredText document into HTML."""
import sys
from concurrent.futures import ThreadPoolExecutor

from docutils.core import publish_string

docs = [open(p, encoding="utf-8").read() for p in sys.argv[1:]]


def render(src):
    return len(publish_string(src, writer_name="html"))


with ThreadPoolExecutor(max_workers=4, thread_name_prefix="render") as pool:
    sizes = list(pool.map(render, docs))
print("docutils pool:", sizes)
'''

COUNTERS_PROGRAM = '''\
"""docutils in a thread pool while the main thread samples the process: memory (Python's
tracemalloc and psutil's RSS), live objects and threads as VizTracer counters; run with
--log_gc so every garbage collection is recorded too."""
import gc
import sys
import threading
import time
import tracemalloc
from concurrent.futures import ThreadPoolExecutor

import psutil
from docutils.core import publish_string
from viztracer import get_tracer
from viztracer.vizcounter import VizCounter

docs = [open(p, encoding="utf-8").read() for p in sys.argv[1:]]
tracemalloc.start()
proc = psutil.Process()
memory = VizCounter(get_tracer(), "memory")
objects = VizCounter(get_tracer(), "objects")


def render(src):
    return len(publish_string(src, writer_name="html"))


def sample():
    cur, peak = tracemalloc.get_traced_memory()
    memory.traced_mb = cur / 2 ** 20
    memory.rss_mb = proc.memory_info().rss / 2 ** 20
    objects.gc_tracked = len(gc.get_objects())
    objects.threads = threading.active_count()


with ThreadPoolExecutor(max_workers=3, thread_name_prefix="render") as pool:
    futures = [pool.submit(render, d) for d in docs]
    while not all(f.done() for f in futures):
        sample()
        time.sleep(0.004)
    sample()
print("docutils with counters:", [f.result() for f in futures])
'''

SYMPY_POOL_PROGRAM = '''\
"""sympy in a thread pool: independent symbolic tasks on three workers."""
from concurrent.futures import ThreadPoolExecutor

from sympy import Matrix, expand, factor, integrate, solve, symbols

x, y, z = symbols("x y z")


def polynomial():
    return len(factor(expand((x + y + z + 1) ** 4)).args)


def integral():
    return str(integrate(1 / (x ** 3 + 1), x))


def algebra():
    M = Matrix(3, 3, lambda r, c: (x + r) ** c + y * c)
    return str(factor(M.det())), solve(x ** 3 - 6 * x ** 2 + 11 * x - 6, x)


with ThreadPoolExecutor(max_workers=3, thread_name_prefix="sympy") as pool:
    futures = [pool.submit(f) for f in (polynomial, integral, algebra)]
    print("sympy pool:", [f.result() for f in futures])
'''


MIXED_POOL_PROGRAM = '''\
"""Unlike tasks at once: networkx, sympy, docutils and difflib in a pool of 6 workers."""
import concurrent.futures
import difflib
import json
import queue
import random
import threading

import networkx as nx
import sympy as sp
from docutils.core import publish_string


def graph_work(seed):
    g = nx.gnm_random_graph(300, 1200, seed=seed)
    return sum(len(c) for c in nx.connected_components(g)), nx.average_clustering(g)


def algebra(seed):
    x, y = sp.symbols("x y")
    return sp.factor(sp.expand((x + seed * y + 1) ** 6)), sp.integrate(sp.sin(x) * x ** 2, x)


def doc(seed):
    text = "Title %d\\n==========\\n\\n" % seed + "\\n\\n".join(
        "Para *%d* with ``code`` and a `link <http://x/%d>`_." % (i, i) for i in range(40))
    return len(publish_string(text, writer_name="html"))


def text_diff(seed):
    rnd = random.Random(seed)
    a = ["line %d %s" % (i, rnd.random()) for i in range(800)]
    b = list(a)
    rnd.shuffle(b[:100])
    return len(list(difflib.unified_diff(a, b))), len(json.dumps({"a": a, "b": b}))


lock = threading.Lock()
results = queue.Queue()


def consumer():
    while True:
        item = results.get()
        if item is None:
            return
        with lock:
            json.dumps(repr(item))


c = threading.Thread(target=consumer, name="consumer")
c.start()
jobs = [graph_work, algebra, doc, text_diff] * 3
with concurrent.futures.ThreadPoolExecutor(max_workers=6, thread_name_prefix="mixed") as pool:
    for r in pool.map(lambda job: job[0](job[1]), [(f, i) for i, f in enumerate(jobs)]):
        results.put(r)
results.put(None)
c.join()
'''

TORCH_PROGRAM = '''\
import sys
from concurrent.futures import ThreadPoolExecutor

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile, record_function

torch.manual_seed(0)
torch.set_num_threads(2)
model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Flatten(), nn.Linear(32 * 8 * 8, 64), nn.ReLU(), nn.Linear(64, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loss_fn = nn.CrossEntropyLoss()
x, y = torch.randn(64, 3, 32, 32), torch.randint(0, 10, (64,))


def train_step(i):
    with record_function("train_step"):
        opt.zero_grad()
        loss = loss_fn(model(x + 0.01 * i), y)
        loss.backward()
        opt.step()
        return float(loss.detach())


def infer(i):
    with torch.no_grad(), record_function("inference"):
        return int(model(torch.randn(16, 3, 32, 32)).argmax(1).sum())


with profile(activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True, with_stack=True) as prof:
    for i in range(int(sys.argv[2]) if len(sys.argv) > 2 else 8):
        train_step(i)
    with ThreadPoolExecutor(3) as pool:
        list(pool.map(infer, range(12)))
prof.export_chrome_trace(sys.argv[1])
'''

JAX_PROGRAM = '''\
import sys
from concurrent.futures import ThreadPoolExecutor

import jax
import jax.numpy as jnp


def mlp(params, x):
    for w, b in params:
        x = jnp.tanh(x @ w + b)
    return x.sum()


def init(key, sizes):
    params = []
    for m, n in zip(sizes[:-1], sizes[1:]):
        key, k = jax.random.split(key)
        params.append((jax.random.normal(k, (m, n)) / m ** 0.5, jnp.zeros(n)))
    return params


grad = jax.jit(jax.grad(mlp))
key = jax.random.PRNGKey(0)
params = init(key, [256, 512, 512, 256, 10])
x = jax.random.normal(key, (128, 256))


def step(i):
    with jax.profiler.TraceAnnotation("train_step"):
        return jax.tree_util.tree_map(lambda a: a.block_until_ready(), grad(params, x + i))


with jax.profiler.trace(sys.argv[1], create_perfetto_trace=True):
    for i in range(5):
        step(i)
    with ThreadPoolExecutor(3) as pool:
        list(pool.map(step, range(int(sys.argv[2]) if len(sys.argv) > 2 else 12)))
    jnp.linalg.svd(jax.random.normal(key, (300, 300)))[1].block_until_ready()
'''


#: the page Chromium loads while it traces its own start-up (chromium_page): script, layout, canvas
#: frames, timers, a dedicated worker and promises
#: what Chromium traces: every default category, DevTools' timeline and V8's CPU profiler (the page's
#: JavaScript as sampled stacks: Profile/ProfileChunk events, `tracevis3d.io.chrome_profile`)
CHROMIUM_CATEGORIES = "*,disabled-by-default-devtools.timeline,disabled-by-default-v8.cpu_profiler"
CHROMIUM_PAGE = '''\
<!doctype html><html><head><title>work</title>
<style>div.b{display:inline-block;width:20px;height:20px;margin:1px;background:#48c}</style></head>
<body><canvas id=c width=800 height=400></canvas><div id=grid></div>
<script>
function fib(n){return n<2?n:fib(n-1)+fib(n-2)}
function sortWork(){const a=[];for(let i=0;i<200000;i++)a.push(Math.random());a.sort();return a[0]}
function layoutWork(){const g=document.getElementById('grid');for(let i=0;i<3000;i++){const d=document.createElement('div');
  d.className='b';d.textContent=i%10;g.appendChild(d)}return g.offsetHeight}
function draw(t){const c=document.getElementById('c').getContext('2d');for(let i=0;i<2000;i++){
  c.fillStyle=`hsl(${(i+t)%360},70%,50%)`;c.fillRect((i*37)%800,(i*53)%400,10,10)}}
let frames=0;
function tick(t){draw(t|0);frames++;if(frames<60)requestAnimationFrame(tick)}
requestAnimationFrame(tick);
setTimeout(()=>{fib(27);sortWork()},50);
setTimeout(()=>{layoutWork()},120);
const w=new Worker(URL.createObjectURL(new Blob([`onmessage=e=>{function f(n){return n<2?n:f(n-1)+f(n-2)};postMessage(f(e.data))}`])));
w.onmessage=e=>{document.title='done '+e.data};w.postMessage(30);
Promise.all([1,2,3].map(k=>new Promise(r=>setTimeout(()=>r(fib(20+k)),30*k)))).then(v=>console.log(v));
</script></body></html>
'''


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


BLACK_POOL_PROGRAM = '''\
"""black formatting four of CPython's modules in a thread pool of 4 workers (5 threads):
blib2to3's recursive-descent parser and black's visitors, 80+ levels."""
import concurrent.futures as cf
import pathlib
import sys
import sysconfig

import black

stdlib = pathlib.Path(sysconfig.get_paths()["stdlib"])
files = sys.argv[1:] or ["fnmatch.py", "colorsys.py", "bisect.py", "shlex.py"]
sources = [(stdlib / f).read_text() for f in files]
mode = black.Mode(line_length=79)


def fmt(src):
    return len(black.format_str(src, mode=mode))


with cf.ThreadPoolExecutor(4, thread_name_prefix="black") as ex:
    print(sum(ex.map(fmt, sources)))
'''

JINJA_PROCS_PROGRAM = '''\
"""jinja2 templates with pygments-highlighted code, rendered by a pool of 3 worker processes
(VizTracer follows the forked workers: 4 processes, 6 threads)."""
import concurrent.futures as cf
import multiprocessing as mp
import pathlib
import sysconfig

import jinja2
import pygments
import pygments.formatters
import pygments.lexers

stdlib = pathlib.Path(sysconfig.get_paths()["stdlib"])
TEMPLATE = """<html><body>{% for s in sections %}<h2>{{ s.title|title }}</h2>
{% for row in s.rows %}<tr>{% for c in row %}<td>{{ "%.3f"|format(c) }}</td>{% endfor %}</tr>{% endfor %}
<pre>{{ s.code|safe }}</pre>{% endfor %}</body></html>"""


def page(seed):
    template = jinja2.Environment(autoescape=True).from_string(TEMPLATE)
    code = (stdlib / ["json/decoder.py", "string.py", "calendar.py"][seed % 3]).read_text()[:20000]
    html = pygments.highlight(code, pygments.lexers.PythonLexer(), pygments.formatters.HtmlFormatter())
    sections = [dict(title=f"section {i}", rows=[[seed * i * j / 7 for j in range(8)] for _ in range(30)],
                     code=html) for i in range(6)]
    return len(template.render(sections=sections))


if __name__ == "__main__":
    with cf.ProcessPoolExecutor(3, mp_context=mp.get_context("fork")) as ex:
        print(sum(ex.map(page, range(9))))
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


PYGMENTS_CYTHON_PROGRAM = '''\
"""Pygments highlighting four stdlib modules' sources (Python, C and HTML lexers, the HTML
formatter) in a thread pool of 4 workers while a fifth thread runs Cython's compiler on a
small .pyx: lexers built from regular expressions (re's compiler in every worker), a compiler
pipeline ~100 levels deep, 6 threads."""
import concurrent.futures
import inspect
import os
import sys
import tempfile
import threading

from pygments import formatters, highlight, lexers

PYX = "".join("""
cdef class Acc{k}:
    cdef double total
    def add(self, double x):
        self.total += x
        return self.total
def fib{k}(int n):
    cdef int a = 0, b = 1, i
    for i in range(n):
        a, b = b, a + b
    return a
def walk{k}(list xs):
    return [x * 2 for x in xs if x % 3]
""".format(k=k) for k in range(3))


def colour(i):
    import email.message
    import http.client
    import json
    import xml.dom.minidom
    mod = [json, email.message, http.client, xml.dom.minidom][i % 4]
    lexer = [lexers.PythonLexer(), lexers.PythonLexer(), lexers.CLexer(), lexers.HtmlLexer()][i % 4]
    return len(highlight(inspect.getsource(mod)[:60000], lexer, formatters.HtmlFormatter()))


def compile_pyx():
    from Cython.Compiler import Main
    d = tempfile.mkdtemp()
    path = os.path.join(d, "m.pyx")
    with open(path, "w") as f:
        f.write(PYX)
    return Main.compile(path, Main.CompilationOptions(Main.default_options))


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    t = threading.Thread(target=compile_pyx, name="cython-compile")
    t.start()
    with concurrent.futures.ThreadPoolExecutor(4, thread_name_prefix="highlight") as pool:
        print(sum(pool.map(colour, range(n))))
    t.join()
'''


JEDI_LARK_SQL_PROGRAM = '''\
"""jedi completing and inferring names in stdlib sources in a pool of 3 workers, lark parsing
arithmetic and JSON in a fourth, and SQLAlchemy's ORM on SQLite in a fifth: three libraries of
deep recursive descent (jedi's inference, lark's Earley parser) and a connection pool."""
import concurrent.futures
import inspect
import sys
import threading

N = int(sys.argv[1]) if len(sys.argv) > 1 else 6


def infer(i):
    import jedi
    import json.decoder, email.utils, textwrap, argparse, csv, shlex
    mod = [json.decoder, email.utils, textwrap, argparse, csv, shlex][i % 6]
    src = inspect.getsource(mod)
    lines = src.splitlines()
    script = jedi.Script(src, path=mod.__file__)
    n = 0
    for row in range(len(lines) // 3, len(lines), max(1, len(lines) // 12)):
        col = len(lines[row - 1])
        try:  # jedi's compiled-object access is not thread-safe: a failed lookup is skipped
            n += len(script.complete(row, col))
            n += len(script.infer(row, max(0, col - 1)))
        except Exception:
            n -= 1
    return n


GRAMMAR = r"""
?start: sum
?sum: product | sum "+" product -> add | sum "-" product -> sub
?product: atom | product "*" atom -> mul | product "/" atom -> div
?atom: NUMBER -> number | "-" atom -> neg | "(" sum ")" | NAME "(" [sum ("," sum)*] ")" -> call
%import common.CNAME -> NAME
%import common.NUMBER
%import common.WS_INLINE
%ignore WS_INLINE
"""


def parse_many():
    from lark import Lark
    earley = Lark(GRAMMAR, parser="earley")
    lalr = Lark(GRAMMAR, parser="lalr")
    expr = "f(1, (2 + 3) * (4 - g(5 * (6 + 7))), 8) / (9 - 10)"
    for k in range(1, 9):
        deep = "(" * (k * 4) + expr + ")" * (k * 4)
        earley.parse(deep)
        lalr.parse(deep + " + " + deep)
    return True


def orm():
    from sqlalchemy import ForeignKey, create_engine, select
    from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship

    class Base(DeclarativeBase):
        pass

    class Author(Base):
        __tablename__ = "author"
        id: Mapped[int] = mapped_column(primary_key=True)
        name: Mapped[str]
        books: Mapped[list["Book"]] = relationship(back_populates="author")

    class Book(Base):
        __tablename__ = "book"
        id: Mapped[int] = mapped_column(primary_key=True)
        title: Mapped[str]
        author_id: Mapped[int] = mapped_column(ForeignKey("author.id"))
        author: Mapped[Author] = relationship(back_populates="books")

    engine = create_engine("sqlite://")
    Base.metadata.create_all(engine)
    with Session(engine) as s:
        for a in range(20):
            s.add(Author(name=f"a{a}", books=[Book(title=f"b{a}-{b}") for b in range(5)]))
        s.commit()
        n = 0
        for a in s.scalars(select(Author).order_by(Author.name)):
            n += len(a.books)
    return n


def main():
    with concurrent.futures.ThreadPoolExecutor(5, thread_name_prefix="worker") as pool:
        jobs = [pool.submit(infer, i) for i in range(N)]
        jobs.append(pool.submit(parse_many))
        jobs.append(pool.submit(orm))
        print(sum(int(j.result()) for j in jobs))


if __name__ == "__main__":
    main()
'''


PYTEST_FLASK_PROGRAM = '''\
"""pytest running a Flask shop's tests: parametrized requests through Flask's test client
(routing, Jinja templates, JSON), fixtures, and one test that sends requests from a pool of
four threads; pytest's own hooks (pluggy), assertion rewriting and reporting around them."""
import concurrent.futures

import pytest
from flask import Flask, abort, jsonify, render_template_string, request

PAGE = """<h1>{{ title }}</h1><ul>{% for item in items %}<li>{{ item.name|title }}: {{ "%.2f"|format(item.price) }}
{% if item.tags %}({{ item.tags|join(", ") }}){% endif %}</li>{% endfor %}</ul>"""


def make_app():
    app = Flask("shop")
    items = [{"id": k, "name": f"item {k}", "price": 1.5 * k, "tags": ["a", "b"][: k % 3]} for k in range(60)]

    @app.route("/items")
    def listing():
        lo = int(request.args.get("from", 0))
        return render_template_string(PAGE, title="Items", items=items[lo:lo + 20])

    @app.route("/items/<int:k>")
    def item(k):
        if k >= len(items):
            abort(404)
        return jsonify(items[k])

    @app.post("/basket")
    def basket():
        got = request.get_json()
        total = sum(items[int(k)]["price"] * n for k, n in got.items() if int(k) < len(items))
        return jsonify(total=total)

    return app


@pytest.fixture(scope="module")
def client():
    return make_app().test_client()


@pytest.mark.parametrize("lo", range(0, 60, 5))
def test_listing(client, lo):
    r = client.get(f"/items?from={lo}")
    assert r.status_code == 200 and b"<li>" in r.data


@pytest.mark.parametrize("k", range(0, 70, 3))
def test_item(client, k):
    r = client.get(f"/items/{k}")
    assert r.status_code == (200 if k < 60 else 404)


def test_basket(client):
    r = client.post("/basket", json={"1": 2, "5": 1, "99": 4})
    assert r.get_json()["total"] == pytest.approx(1.5 * 2 + 7.5)


def test_concurrent(client):
    app = make_app()

    def shop(i):
        c = app.test_client()
        return sum(c.get(f"/items?from={(i * 7) % 40}").status_code for _ in range(6))

    with concurrent.futures.ThreadPoolExecutor(4, thread_name_prefix="shopper") as pool:
        assert sum(pool.map(shop, range(16))) == 200 * 6 * 16


def test_fails_on_purpose_report():
    with pytest.raises(ZeroDivisionError):
        1 / 0
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

HYPOTHESIS_POOL_PROGRAM = '''\
"""hypothesis's property tests run from a pool of 4 threads: sorted keys of generated lists of
dicts, and the repr of recursive structures.  argv: examples per test."""
import sys
from concurrent.futures import ThreadPoolExecutor

from hypothesis import HealthCheck, given, settings, strategies as st

EXAMPLES = int(sys.argv[1]) if len(sys.argv) > 1 else 60
QUIET = settings(max_examples=EXAMPLES, database=None, deadline=None, suppress_health_check=list(HealthCheck))
VALUES = st.integers() | st.floats(allow_nan=False)


@QUIET
@given(st.lists(st.dictionaries(st.text(max_size=8), VALUES), max_size=6))
def prop_sort(xs):
    keys = sorted({k for d in xs for k in d})
    assert keys == sorted(keys)


@QUIET
@given(st.recursive(st.integers() | st.text(max_size=4),
                    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=3),
                    max_leaves=12))
def prop_tree(x):
    repr(x)


def job(k):
    (prop_sort if k % 2 else prop_tree)()
    return k


if __name__ == "__main__":
    with ThreadPoolExecutor(4, thread_name_prefix="prop") as ex:
        print(list(ex.map(job, range(8))))
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


MARKDOWN_POOL_PROGRAM = '''\
"""Markdown to HTML, YAML round trips and rich rendering in a pool of 4 workers, and a collector
thread that takes the results from a bounded queue behind a lock.  argv: seed, rounds."""
import io
import queue
import random
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import markdown
import yaml
from rich.console import Console
from rich.syntax import Syntax
from rich.table import Table

SEED = int(sys.argv[1]) if len(sys.argv) > 1 else 1
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 2
rng = random.Random(SEED)
results = queue.Queue(maxsize=4)
lock = threading.Lock()
done = []


def md_doc(n):
    parts = []
    for i in range(n):
        parts.append(f"## Section {i}\\n\\nSome *emphasis* and **strong** text with `code` and a [link](http://x/{i}).\\n")
        parts.append("\\n".join(f"- item {j} with _nested_ **bold**" for j in range(rng.randint(3, 9))))
        parts.append("\\n\\n| a | b | c |\\n|---|---|---|\\n" + "\\n".join(f"| {j} | {j*j} | {j*3} |" for j in range(5)))
        parts.append("\\n\\n```python\\nfor x in range(10):\\n    print(x)\\n```\\n")
        parts.append("> a quote\\n> > nested quote\\n\\n1. one\\n2. two\\n   - deep\\n     - deeper\\n")
    return "\\n\\n".join(parts)


def nested(d):
    if d == 0:
        return {"leaf": [1, 2.5, "x", None, True]}
    return {"level": d, "child": nested(d - 1), "list": [nested(0) for _ in range(2)]}


def task_md(n):
    html = markdown.markdown(md_doc(n), extensions=["tables", "fenced_code", "toc"])
    results.put(("md", len(html)))


def task_yaml(depth):
    text = yaml.dump(nested(depth), Dumper=yaml.Dumper)
    back = yaml.load(text, Loader=yaml.Loader)
    results.put(("yaml", len(text) + back["level"]))


def task_rich(k):
    con = Console(file=io.StringIO(), width=100, force_terminal=True)
    t = Table(title=f"table {k}")
    for c in "abcd":
        t.add_column(c)
    for i in range(40):
        t.add_row(*(str(i * j) for j in range(4)))
    con.print(t)
    con.print(Syntax("def f(x):\\n    return [y * 2 for y in range(x)]\\n" * 20, "python"))
    results.put(("rich", len(con.file.getvalue())))


def collector(n):
    for _ in range(n):
        kind, size = results.get()
        with lock:
            done.append((kind, size))


tasks = []
for i in range(ROUNDS):
    tasks += [(task_md, 12 + i), (task_yaml, 40 + 5 * i), (task_rich, i)]
rng.shuffle(tasks)
c = threading.Thread(target=collector, args=(len(tasks),), name="collector")
c.start()
with ThreadPoolExecutor(4, thread_name_prefix="worker") as ex:
    for f, a in tasks:
        ex.submit(f, a)
c.join()
print(len(done))
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

HTTP_THREADS_PROGRAM = '''\
"""A threading HTTP server (a thread per request) that renders reStructuredText with docutils,
and six client threads that fetch pages from it over loopback sockets."""
import sys
import threading
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from docutils.core import publish_string

PAGE = """Page {n}
=========

Section
-------

* item **{n}** with ``code`` and a `link <https://example.org/{n}>`_
* another item, *emphasis*

.. note:: page {n} of the site

====  =====
a     b
====  =====
{n}   {m}
====  =====
"""


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        n = int(self.path.strip("/") or 0)
        body = publish_string(PAGE.format(n=n, m=n * n), writer_name="html")
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def fetch(port, n):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/{n}", timeout=30) as r:
        return len(r.read())


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    # a short poll: shutdown() waits for serve_forever's next poll (0.5 s by default, longer
    # than the clients' whole run), which would leave most of the recording an idle tail
    serving = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, name="server",
                               daemon=True)
    serving.start()
    port = server.server_address[1]
    with ThreadPoolExecutor(max_workers=6, thread_name_prefix="client") as pool:
        sizes = list(pool.map(lambda n: fetch(port, n), range(int(sys.argv[1]) if len(sys.argv) > 1 else 36)))
    server.shutdown()
    print(sum(sizes))


main()
'''


def docutils_pool_documents(workdir: str, n: int = 4, sections: int = 3) -> list:
    """``n`` generated documents (different seeds) for `DOCUTILS_POOL_PROGRAM`; their paths."""
    return [_write(os.path.join(workdir, f"doc{k}.rst"), rst_document(sections, seed=11 + k)) for k in range(n)]


class Spec:
    """One trace of the suite: how to make its inputs and which command to trace."""

    def __init__(self, name, tool, interpreter, program, entries=1_000_000, doc="", flags=()):
        self.name = name
        self.tool = tool                # "viztracer", "py-spy", "chromium", "jax" or "torch" (profiles itself)
        self.interpreter = interpreter  # "project" (this interpreter), "trace" (build/trace-venv), "jax", "torch"
        self.program = program          # callable(workdir) -> argv after the interpreter
        self.entries = entries          # VizTracer's --tracer_entries
        self.doc = doc
        self.flags = tuple(flags)       # more VizTracer options (``--log_async``)


def _write(path: str, text: str) -> str:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def _program_spec(name: str, interpreter: str, program: str, doc: str, *args: str, file: str | None = None,
                  entries: int = 3_000_000) -> Spec:
    """A VizTracer recording of a program of this suite: ``program`` written to ``file``
    (default ``<name>.py``) in the work folder and run with ``args``."""
    file = file or f"{name}.py"
    return Spec(name, "viztracer", interpreter, lambda w: [_write(os.path.join(w, file), program), *args],
                entries=entries, doc=doc)


SUITE = [
    Spec("json_tool", "viztracer", "project",
         lambda w: ["-m", "json.tool", _write(os.path.join(w, "deep.json"), deep_json_document()),
                    os.path.join(w, "deep.out.json")],
         doc=f"json.tool on a JSON document {JSON_TOOL_LEVELS} levels deep"),
    Spec("pydoc", "viztracer", "project", lambda w: ["-m", "pydoc", "-w", "email.message"],
         doc="pydoc -w email.message"),
    Spec("unittest", "viztracer", "project",
         lambda w: ["-m", "unittest", "-q", "test.test_csv", "test.test_textwrap", "test.test_shlex"],
         entries=3_000_000, doc="unittest on CPython's test_csv, test_textwrap, test_shlex"),
    Spec("docutils", "viztracer", "trace",
         lambda w: ["-m", "docutils", _write(os.path.join(w, "manual.rst"), rst_document()),
                    os.path.join(w, "manual.html")],
         entries=3_000_000, doc="docutils rst → html on a generated manual"),
    Spec("networkx", "viztracer", "trace", lambda w: [_write(os.path.join(w, "nx_workload.py"), NETWORKX_PROGRAM)],
         entries=3_000_000, doc="networkx graph analysis"),
    Spec("sympy", "viztracer", "trace", lambda w: [_write(os.path.join(w, "sympy_workload.py"), SYMPY_PROGRAM)],
         entries=3_000_000, doc="sympy symbolic computation (~1M calls)"),
    Spec("docutils_b", "viztracer", "trace",
         lambda w: ["-m", "docutils", _write(os.path.join(w, "manual_b.rst"), rst_document(3, seed=5)),
                    os.path.join(w, "manual_b.html")],
         entries=3_000_000, doc="docutils rst → html on a shorter manual (B run of a comparison)"),
    Spec("docutils_pool", "viztracer", "trace",
         lambda w: [_write(os.path.join(w, "docutils_pool.py"), DOCUTILS_POOL_PROGRAM)] + docutils_pool_documents(w),
         entries=3_000_000, doc="docutils in a thread pool of 4 workers (5 threads)"),
    Spec("networkx_b", "viztracer", "trace",
         lambda w: [_write(os.path.join(w, "nx_workload.py"), NETWORKX_PROGRAM), "450"],
         entries=3_000_000, doc="networkx graph analysis on 450 nodes (B run of a comparison)"),
    Spec("sympy_pool", "viztracer", "trace",
         lambda w: [_write(os.path.join(w, "sympy_pool.py"), SYMPY_POOL_PROGRAM)],
         entries=3_000_000, doc="sympy in a thread pool of 3 workers (4 threads)"),
    Spec("mixed_pool", "viztracer", "trace", lambda w: [_write(os.path.join(w, "mixed_pool.py"), MIXED_POOL_PROGRAM)],
         entries=4_000_000, doc="networkx, sympy, docutils and difflib in a pool of 6 workers (8 threads)"),
    Spec("mixed_pool_b", "viztracer", "trace",
         lambda w: [_write(os.path.join(w, "mixed_pool.py"), MIXED_POOL_PROGRAM)], entries=4_000_000,
         doc="mixed_pool run again (the pool hands the tasks to other workers: the B run of a comparison)"),
    Spec("http_threads", "viztracer", "trace",
         lambda w: [_write(os.path.join(w, "http_threads.py"), HTTP_THREADS_PROGRAM)], entries=3_000_000,
         doc="a threading HTTP server rendering docutils pages for six client threads (a thread per request)"),
    Spec("http_threads_b", "viztracer", "trace",
         lambda w: [_write(os.path.join(w, "http_threads.py"), HTTP_THREADS_PROGRAM), "24"], entries=3_000_000,
         doc="http_threads serving 24 pages (the B run of a comparison)"),
    Spec("pip_show", "viztracer", "trace", lambda w: ["-m", "pip", "show", "docutils"], entries=3_000_000,
         doc="pip show docutils (a command that is mostly imports: pip's vendored libraries, pyparsing's recursion)"),
    Spec("black_pool", "viztracer", "trace",
         lambda w: [_write(os.path.join(w, "black_pool.py"), BLACK_POOL_PROGRAM)], entries=3_000_000,
         doc="black formatting four stdlib modules in a thread pool of 4 workers (5 threads, 86 levels)"),
    Spec("black_pool_b", "viztracer", "trace",
         lambda w: [_write(os.path.join(w, "black_pool.py"), BLACK_POOL_PROGRAM), "fnmatch.py", "colorsys.py",
                    "glob.py", "shlex.py", "sched.py"], entries=3_000_000,
         doc="black_pool on five modules (the B run of a comparison)"),
    Spec("jinja_procs", "viztracer", "trace",
         lambda w: [_write(os.path.join(w, "jinja_procs.py"), JINJA_PROCS_PROGRAM)], entries=3_000_000,
         doc="jinja2 + pygments in a ProcessPoolExecutor of 3 forked workers (4 processes, 6 threads)"),
    Spec("deep_recursion", "viztracer", "project",
         lambda w: [_write(os.path.join(w, "deep_recursion.py"), DEEP_RECURSION_PROGRAM)],
         doc="three threads recursing 300-900 deep through two functions (2,700 levels)"),
    _program_spec("crowd_pool", "project", CROWD_POOL_PROGRAM,
                  "48 worker threads doing rounds of stdlib work between barriers, two writer threads behind a "
                  "queue and a lock (51 threads)"),
    _program_spec("crowd_pool_b", "project", CROWD_POOL_PROGRAM,
                  "crowd_pool with 32 workers (the B run of a comparison)", "32", file="crowd_pool.py"),
    _program_spec("markdown_pool", "trace", MARKDOWN_POOL_PROGRAM,
                  "python-markdown, PyYAML (pure Python) and rich in a pool of 4 workers, a collector behind a "
                  "queue and a lock (6 threads, ~1.5M calls)", "1", "2", entries=20_000_000),
    _program_spec("markdown_pool_b", "trace", MARKDOWN_POOL_PROGRAM,
                  "markdown_pool with another seed (the tasks in another order: the B run of a comparison)", "2", "2",
                  file="markdown_pool.py", entries=20_000_000),
    _program_spec("numba_jit", "project", NUMBA_JIT_PROGRAM,
                  "three threads jit-compiling with numba behind its global compiler lock (4 threads, lock waits)"),
    _program_spec("pygments_cython", "trace", PYGMENTS_CYTHON_PROGRAM,
                  "Pygments highlighting in a pool of 4 workers beside Cython's compiler in a fifth thread (6 threads)"),
    _program_spec("pygments_cython_b", "trace", PYGMENTS_CYTHON_PROGRAM,
                  "pygments_cython highlighting nine sources (the B run of a comparison)", "9",
                  file="pygments_cython.py"),
    _program_spec("jedi_lark_sql", "trace", JEDI_LARK_SQL_PROGRAM,
                  "jedi inferring names in stdlib sources (3 tasks), lark's Earley and LALR parsers and SQLAlchemy's "
                  "ORM on SQLite in a pool of 5 workers (7 threads, ~3,000 levels of jedi's inference)", "3",
                  entries=8_000_000),
    _program_spec("jedi_lark_sql_b", "trace", JEDI_LARK_SQL_PROGRAM,
                  "jedi_lark_sql with two jedi tasks (the B run of a comparison)", "2", file="jedi_lark_sql.py",
                  entries=8_000_000),
    Spec("pytest_flask", "viztracer", "trace",
         lambda w: ["-m", "pytest", "-q", "-p", "no:cacheprovider", _write(os.path.join(w, "test_shop.py"),
                                                                              PYTEST_FLASK_PROGRAM)],
         entries=3_000_000, doc="pytest running a Flask shop's tests (Flask's test client, Jinja, one test "
                                "sending requests from 4 shopper threads): 5 threads, ~130 levels"),
    Spec("ast_pool", "viztracer", "project", lambda w: [_write(os.path.join(w, "ast_pool.py"), AST_POOL_PROGRAM)],
         entries=3_000_000, doc="ast parse, NodeVisitor walk and unparse in a thread pool of 3 workers (4 threads)"),
    Spec("xml_io_pool", "viztracer", "project",
         lambda w: [_write(os.path.join(w, "xml_io_pool.py"), XML_IO_POOL_PROGRAM)], entries=3_000_000,
         doc="nested XML built, written, gzipped, archived and parsed back by 4 workers; logging to a listener"),
    Spec("xml_io_pool_b", "viztracer", "project",
         lambda w: [_write(os.path.join(w, "xml_io_pool.py"), XML_IO_POOL_PROGRAM), "90", "10"], entries=4_500_000,
         doc="xml_io_pool on 10 documents (the B run of a comparison)"),
    Spec("spawn_pool", "viztracer", "project",
         lambda w: [_write(os.path.join(w, "spawn_pool.py"), SPAWN_POOL_PROGRAM)], entries=3_000_000,
         doc="difflib, json and textwrap in a spawn-started process pool of 3 workers with heartbeat threads"),
    Spec("async_tasks", "viztracer", "project", lambda w: [_write(os.path.join(w, "async_tasks.py"), ASYNC_PROGRAM)],
         entries=3_000_000, doc="asyncio, five worker tasks (--log_async: a lane per task)", flags=("--log_async",)),
    _program_spec("hypothesis_pool", "trace", HYPOTHESIS_POOL_PROGRAM,
                  "hypothesis's property tests from a pool of 4 threads, its buffer far too small on purpose "
                  "(viztracer_metadata.overflow: each worker's early part hollow; 5 threads)", "60",
                  entries=1_000_000),
    Spec("threads", "viztracer", "project", lambda w: [THREADS_EXAMPLE],
         doc="examples/threads_pipeline.py, 5 threads"),
    Spec("pyspy_threads", "py-spy", "project", lambda w: [THREADS_EXAMPLE],
         doc="examples/threads_pipeline.py sampled by py-spy"),
    Spec("chromium_page", "chromium", "project", lambda w: [_write(os.path.join(w, "page.html"), CHROMIUM_PAGE)],
         doc="Chromium (Debian's chromium package) tracing its own headless start-up and a page load: 9 processes, "
             "80+ threads, flows, async slices, instants, counters (asked for by name)"),
    Spec("jax_mlp", "jax", "jax", lambda w: [_write(os.path.join(w, "jax_mlp.py"), JAX_PROGRAM)],
         doc="JAX's own profiler (perfetto_trace.json.gz): jit-compiled MLP gradients, then 12 steps in a pool of "
             "3 threads (XLA compiler and Eigen threads; Python frames as '$file:line name'; asked for by name)"),
    Spec("torch_cnn", "torch", "torch", lambda w: [_write(os.path.join(w, "torch_cnn.py"), TORCH_PROGRAM)],
         doc="torch.profiler on a small CNN's training steps on the CPU with profile_memory and with_stack (its "
             "allocator's totals as [memory] instants, Python frames as 'file.py(line): name'; asked for by name)"),
]
NAMES = [s.name for s in SUITE]
#: recorded only when named (--only): they install a large tool of their own
OPT_IN = {"jax_mlp", "chromium_page", "torch_cnn"}


# --------------------------------------------------------------------------- recording
def viztracer_command(python: str, out: str, argv: list, entries: int = 1_000_000, flags=()) -> list:
    """The VizTracer command line that records ``python <argv>`` into ``out`` (``flags``: more
    VizTracer options)."""
    cmd = [python, "-m", "viztracer", "--quiet", "--tracer_entries", str(int(entries)), *flags, "-o", out]
    if argv[:1] == ["-m"]:
        return cmd + ["-m"] + argv[1:]
    return cmd + ["--"] + argv


def viztracer_overflowed(path: str):
    """True if VizTracer's buffer overflowed (early entries dropped), False if not, None if the
    file does not say (not a VizTracer file).  Reads only the small metadata block."""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        # viztracer_metadata follows the event array; file_info (sources) may follow it
        for span in (1 << 16, 1 << 22, size):
            f.seek(max(0, size - span))
            tail = f.read()
            k = tail.rfind(b'"viztracer_metadata"')
            if k >= 0:
                m = re.search(rb'"overflow"\s*:\s*(true|false)', tail[k: k + 4096])
                return None if m is None else m.group(1) == b"true"
    return None


def run_logged(cmd: list, cwd: str, timeout: float, env=None) -> tuple:
    """Run ``cmd``; return (returncode, combined output, seconds)."""
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, env=env)
        return p.returncode, p.stdout.decode("utf-8", "replace"), time.perf_counter() - t0
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode("utf-8", "replace")
        return -9, out + f"\n(timed out after {timeout:.0f} s)", time.perf_counter() - t0


def _child_env() -> dict:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env["PYTHONHASHSEED"] = "0"
    return env


def _venv_python(venv: str) -> str:
    return os.path.join(venv, "Scripts" if os.name == "nt" else "bin", "python")


def ensure_trace_venv(venv: str = TRACE_VENV, requirements: str = TRACE_REQUIREMENTS) -> str:
    """Create ``venv`` and install ``requirements`` (pinned) unless already done; return its python."""
    with open(requirements, "rb") as f:
        stamp = hashlib.sha256(f.read()).hexdigest()
    py = _venv_python(venv)
    stamp_file = os.path.join(venv, "requirements.sha256")
    if os.path.exists(py) and os.path.exists(stamp_file) and open(stamp_file).read().strip() == stamp:
        return py
    base = getattr(sys, "_base_executable", None) or sys.executable
    print(f"record_traces: creating {venv} from {requirements} (once)", file=sys.stderr)
    if not os.path.exists(py):
        subprocess.run([base, "-m", "venv", venv], check=True)
    subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", "-r", requirements],
                   check=True)
    with open(stamp_file, "w") as f:
        f.write(stamp + "\n")
    return py


def trace_stats(path: str) -> dict:
    """Calls, depth (levels), threads and thread names of a recorded trace (loaded with tracevis3d)."""
    if REPO not in sys.path:
        sys.path.insert(0, REPO)
    import warnings

    import tracevis3d

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = tracevis3d.load(path)
    return {
        "calls": len(t),
        "depth": int(t.depth.max()) + 1 if len(t) else 0,
        "threads": t.n_threads,
        "thread_names": list(t.thread_names),
        "functions": t.n_functions,
        "repairs": {k: v["count"] for k, v in t.meta.get("repairs", {}).items()},
    }


def record(spec: Spec, out_dir: str, timeout: float = TIMEOUT) -> dict:
    """Record one trace of the suite into ``out_dir``; return its record (also written to
    ``<name>.record.json``).  Raises RuntimeError naming the command when it fails; returns a
    record with ``skipped`` set when the tool cannot run here."""
    # "<name>-input" is not an identifier, so a workload script there is module "<script>", not a
    # package's module (tracevis3d.names.module_from_file stops at such a folder)
    work = os.path.join(out_dir, "inputs", spec.name + "-input")
    os.makedirs(work, exist_ok=True)
    out = os.path.join(out_dir, spec.name + ".json")
    python = (sys.executable if spec.interpreter == "project" else
              ensure_trace_venv(JAX_VENV, JAX_REQUIREMENTS) if spec.interpreter == "jax" else
              ensure_trace_venv(TORCH_VENV, TORCH_REQUIREMENTS) if spec.interpreter == "torch" else ensure_trace_venv())
    argv = spec.program(work)
    tmp = os.path.join(out_dir, spec.name + ".part.json")  # VizTracer wants .json/.gz/.html
    if os.path.exists(tmp):
        os.remove(tmp)
    rec = {"name": spec.name, "tool": spec.tool, "program": spec.doc, "python": python}
    if spec.tool == "viztracer":
        cmd = viztracer_command(python, tmp, argv, spec.entries, spec.flags)
        rc, log, secs = run_logged(cmd, work, timeout, _child_env())
        if rc != 0 or not os.path.exists(tmp):
            raise RuntimeError(f"{spec.name}: {' '.join(cmd)} exited {rc}:\n{log[-3000:]}")
        rec["tracer_entries"] = spec.entries
        rec["overflow"] = viztracer_overflowed(tmp)
    elif spec.tool == "chromium":  # the browser traces its own start-up (JSON: it writes protobuf otherwise)
        browser = shutil.which("chromium") or shutil.which("chromium-browser")
        if browser is None:
            rec.update(skipped="chromium is not installed (Debian: apt-get install chromium)")
            return rec
        cmd = [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run",
               "--user-data-dir=" + os.path.join(work, "profile"),
               "--trace-startup=" + CHROMIUM_CATEGORIES, "--trace-startup-format=json",
               "--trace-startup-file=" + tmp, "--trace-startup-duration=4", "--virtual-time-budget=3000",
               "--screenshot=" + os.path.join(work, "page.png"), "file://" + argv[0]]
        rc, log, secs = run_logged(cmd, work, timeout, _child_env())
        if not os.path.exists(tmp):
            raise RuntimeError(f"{spec.name}: {' '.join(cmd)} exited {rc}, no trace:\n{log[-3000:]}")
    elif spec.tool == "jax":  # the program profiles itself into a log folder: its Chrome JSON, gzipped
        logs = os.path.join(work, "profile")
        shutil.rmtree(logs, ignore_errors=True)
        cmd = [python] + argv + [logs]
        rc, log, secs = run_logged(cmd, work, timeout, _child_env())
        made = sorted(glob.glob(os.path.join(logs, "plugins", "profile", "*", "perfetto_trace.json.gz")))
        if rc != 0 or not made:
            raise RuntimeError(f"{spec.name}: {' '.join(cmd)} exited {rc}, no perfetto_trace.json.gz:\n{log[-3000:]}")
        out = os.path.join(out_dir, spec.name + ".json.gz")
        tmp = made[-1]
    elif spec.tool == "torch":  # the program profiles itself and writes its Chrome JSON
        cmd = [python] + argv + [tmp]
        rc, log, secs = run_logged(cmd, work, timeout, _child_env())
        if rc != 0 or not os.path.exists(tmp):
            raise RuntimeError(f"{spec.name}: {' '.join(cmd)} exited {rc}, no trace:\n{log[-3000:]}")
    else:
        pyspy = os.path.join(os.path.dirname(ensure_trace_venv()), "py-spy")
        base = [pyspy, "record", "--format", "chrometrace", "--threads", "--idle", "--rate", "1000",
                "-o", tmp]
        tries = [base, base[:2] + ["--nonblocking"] + base[2:]]
        log = ""
        for cmd in tries:
            full = cmd + ["--", python] + argv
            rc, log, secs = run_logged(full, work, timeout, _child_env())
            if rc == 0 and os.path.exists(tmp):
                break
        else:
            reason = " ".join(log.strip().splitlines()[-3:])[:400]
            rec.update(skipped=f"py-spy cannot record here: {reason}")
            return rec
        rec["py_spy_options"] = cmd[2:]
        cmd = full
    os.replace(tmp, out)
    rec.update(command=cmd, seconds=round(secs, 2), bytes=os.path.getsize(out),
               tool_log=log.strip()[-2000:])
    rec.update(trace_stats(out))
    with open(os.path.join(out_dir, spec.name + ".record.json"), "w") as f:
        json.dump(rec, f, indent=1)
    return rec


def _fmt_bytes(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n / 1e3:.0f} kB"


def print_table(rows: list, file=sys.stdout) -> None:
    """One line per trace: name, calls, max depth, threads, file size, seconds to record."""
    head = f"{'trace':<14} {'calls':>9} {'depth':>6} {'threads':>7} {'size':>9} {'record s':>9}  notes"
    print(head, file=file)
    print("-" * len(head), file=file)
    for r in rows:
        if r.get("skipped") and "calls" not in r:
            print(f"{r['name']:<14} {'-':>9} {'-':>6} {'-':>7} {'-':>9} {'-':>9}  SKIPPED: {r['skipped']}",
                  file=file)
            continue
        notes = []
        if r.get("overflow"):
            notes.append("VizTracer buffer OVERFLOWED: early entries dropped")
        elif r.get("overflow") is False:
            notes.append(f"nothing dropped (buffer {r['tracer_entries']:,})")
        if r.get("repairs"):
            notes.append("repairs " + ", ".join(f"{k}×{v}" for k, v in r["repairs"].items()))
        if r.get("cached"):
            notes.append("already there")
        print(f"{r['name']:<14} {r['calls']:>9,} {r['depth']:>6} {r['threads']:>7} "
              f"{_fmt_bytes(r['bytes']):>9} {r['seconds']:>9.1f}  {'; '.join(notes)}", file=file)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="traces: " + ", ".join(NAMES))
    ap.add_argument("--out", default=DEFAULT_OUT, help="output folder (default build/traces)")
    ap.add_argument("--only", default="", help=f"comma-separated trace names (default: all but {', '.join(sorted(OPT_IN))})")
    ap.add_argument("--force", action="store_true", help="record again traces already there")
    ap.add_argument("--timeout", type=float, default=TIMEOUT, help="seconds per recording (default 900)")
    ap.add_argument("--list", action="store_true", help="list the suite and exit")
    args = ap.parse_args(argv)
    if args.list:
        for s in SUITE:
            print(f"{s.name:<14} {s.tool:<9} {s.doc}")
        return 0
    names = [n.strip() for n in args.only.split(",") if n.strip()] or [n for n in NAMES if n not in OPT_IN]
    unknown = [n for n in names if n not in NAMES]
    if unknown:
        ap.error(f"unknown trace name(s) {', '.join(unknown)}; known: {', '.join(NAMES)}")
    os.makedirs(args.out, exist_ok=True)
    rows, failed = [], 0
    for spec in SUITE:
        if spec.name not in names:
            continue
        trace = os.path.join(args.out, spec.name + ".json")
        meta = os.path.join(args.out, spec.name + ".record.json")
        if not args.force and os.path.exists(trace) and os.path.exists(meta):
            with open(meta) as f:
                rows.append(dict(json.load(f), cached=True))
            continue
        print(f"record_traces: recording {spec.name} ({spec.doc})", file=sys.stderr, flush=True)
        try:
            rec = record(spec, args.out, args.timeout)
        except (RuntimeError, subprocess.CalledProcessError, OSError) as e:
            print(f"record_traces: FAILED {e}", file=sys.stderr)
            failed += 1
            last = [ln for ln in str(e).splitlines() if ln.strip()][-1:] or ["?"]
            rows.append({"name": spec.name, "skipped": f"FAILED (see above): {last[0][:200]}"})
            continue
        if rec.get("skipped"):
            print(f"record_traces: skip {spec.name}: {rec['skipped']}", file=sys.stderr)
        rows.append(rec)
    print_table(rows)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
