"""Python programs of the VizTracer suite that run third-party libraries in pools of threads:
Pygments and Cython, jedi + lark + SQLAlchemy, pytest on Flask, hypothesis, python-markdown +
PyYAML + rich (the trace venv's programs, `tools/trace-requirements.txt`).

Each ``*_PROGRAM`` is a program's source text, written into the recording's work folder and
run there (`tools/recorders/suite.py`).
"""
from __future__ import annotations


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
