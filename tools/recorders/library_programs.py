"""Python programs of the VizTracer suite that run third-party libraries (networkx, sympy,
docutils, black, jinja2, psutil): the trace venv's programs (`tools/trace-requirements.txt`).

Each ``*_PROGRAM`` is a program's source text, written into the recording's work folder and
run there (`tools/recorders/suite.py`).
"""
from __future__ import annotations


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
